//! The rules of a declared name (a kind, controller, apiserver or namespace) and of a key (a
//! label's, an annotation's, a field's, a finalizer's name): shared by the scenario's parser,
//! the selectors and the reconcile language, which sits below it.

use listwatch_core::object::MAX_KEY_LEN;

use crate::cursor::{Cursor, R};
use crate::diag::Diagnostic;
use crate::lexer::Word;

/// Kind, controller and apiserver names are at most this many characters (a DNS label).
pub const MAX_NAME_CHARS: usize = 63;

/// Controller and apiserver names: ASCII letters, digits, `-`, `_` and `.`.
pub(crate) fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || "-_.".contains(c)
}

/// A declared name starts with an ASCII letter, holds only `allowed` characters and is at most
/// `MAX_NAME_CHARS` long.
pub(crate) fn check_name(p: &Cursor, w: &Word, what: &str, allowed: fn(char) -> bool) -> R<()> {
    let shown = if w.text.chars().count() > 40 {
        format!("{}...", w.text.chars().take(40).collect::<String>())
    } else {
        w.text.clone()
    };
    let rule = if what == "kind" {
        "a kind name is ASCII letters and digits, starting with a letter (like `Pod` or `ConfigMap`)"
            .to_string()
    } else {
        format!("a {what} name is ASCII letters, digits, `-`, `_` and `.`, starting with a letter")
    };
    let ok_chars =
        w.text.starts_with(|c: char| c.is_ascii_alphabetic()) && w.text.chars().all(allowed);
    if !ok_chars {
        return Err(p
            .err_at(w, format!("`{shown}` is not a valid {what} name"))
            .help(rule));
    }
    if w.text.len() > MAX_NAME_CHARS {
        return Err(p.err_at(
            w,
            format!(
                "the {what} name `{shown}` is {} characters long, more than the limit of {MAX_NAME_CHARS}",
                w.text.len()
            ),
        ));
    }
    Ok(())
}

/// A named field's path (`spec.image`, `replicas`): its characters, at most `MAX_KEY_LEN`.
pub(crate) fn check_field_path(
    key: &str,
    what: &str,
    err: impl FnOnce(String) -> Diagnostic,
) -> R<()> {
    let ok = |c: char| c.is_ascii_alphanumeric() || "-_./".contains(c);
    if key.is_empty() || !key.chars().all(ok) {
        return Err(err(format!("`{key}` is not a valid {what} name"))
            .help("a name is ASCII letters, digits, `-`, `_`, `.` and `/`"));
    }
    if key.len() > MAX_KEY_LEN {
        let len = key.len();
        return Err(err(format!(
            "the {what} name is {len} characters long, more than the limit of {MAX_KEY_LEN}"
        )));
    }
    Ok(())
}

/// A label's, an annotation's or a finalizer's key, as apimachinery's
/// `util/validation/validation.go` `IsQualifiedName` reads it (the apiserver answers 422
/// otherwise; `objectmeta.go` `ValidateAnnotations` lowercases an annotation's key first). `what` names it ("label", "finalizer"...); `err` places the error where the key
/// was read.
pub(crate) fn check_key(key: &str, what: &str, err: impl FnOnce(String) -> Diagnostic) -> R<()> {
    // `ValidateAnnotations` reads an annotation's key lowercased (`strings.ToLower(k)`), so
    // `Example.com/Owner` is one; labels and finalizers are read as written.
    let why = match what {
        "annotation" => qualified_name_error(&key.to_ascii_lowercase()),
        _ => qualified_name_error(key),
    };
    let Some(why) = why else {
        return Ok(());
    };
    let shown: String = key.chars().take(80).collect();
    let more = if shown.len() < key.len() { "..." } else { "" };
    Err(err(format!("`{shown}{more}` is not a valid {what} name: {why}")).help(
        "a key is `name` or `prefix/name`: the name at most 63 letters, digits, `-`, `_` and `.`, starting and ending with a letter or digit; the prefix a lowercase DNS subdomain like `example.com`",
    ))
}

/// Why `s` is not a qualified name, in the words of apimachinery
/// `pkg/util/validation/validation.go` `IsQualifiedName` (a finalizer's name is one:
/// `pkg/api/validation/objectmeta.go` `ValidateFinalizerName`): an optional DNS-1123 subdomain
/// prefix and `/`, then a name of at most 63 alphanumerics, `-`, `_`, `.`, alphanumeric at both
/// ends.
pub fn qualified_name_error(s: &str) -> Option<&'static str> {
    let (prefix, name) = match s.split_once('/') {
        Some((p, n)) => (Some(p), n),
        None => (None, s),
    };
    if s.matches('/').count() > 1 {
        return Some("a qualified name has at most one `/`");
    }
    if let Some(p) = prefix {
        if p.is_empty() {
            return Some("prefix part must be non-empty");
        }
        if listwatch_core::validation::dns_subdomain_error(p).is_some() {
            return Some("prefix part must be a lowercase RFC 1123 subdomain");
        }
    }
    if name.is_empty() {
        return Some("name part must be non-empty");
    }
    if name.len() > 63 {
        return Some("name part must be no more than 63 characters");
    }
    let alnum = |c: char| c.is_ascii_alphanumeric();
    if !(name.starts_with(alnum)
        && name.ends_with(alnum)
        && name.chars().all(|c| alnum(c) || "-_.".contains(c)))
    {
        return Some("name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character");
    }
    None
}

/// Why an object's `namespace/name` would be refused by the apiserver
/// (`listwatch_core::validation`), as `field: rule`. With `generateName` the name is a prefix.
pub fn object_name_error(full: &str, generate: bool) -> Option<String> {
    // `namespace/name`: a cluster-scoped kind's name with a `/` is refused where the kind is
    // known (`object_name_of`, logic's `in`).
    let scope = listwatch_core::Scope::Namespaced;
    let (field, rule) = listwatch_core::validation::object_name_error(full, scope, generate)?;
    Some(format!("{}: {}", field.as_str(), rule.as_str()))
}

/// A label value written as a literal in a `logic` block (`metadata.labels.app = "web"`), as
/// `validation.IsValidLabelValue` reads it (`listwatch_core::validation::label_value_ok`; the
/// apiserver answers 422 otherwise).
pub(crate) fn check_label_value(value: &str, err: impl FnOnce(String) -> Diagnostic) -> R<()> {
    if !listwatch_core::validation::label_value_ok(value) {
        return Err(err(format!("`{value}` is not a valid label value")).help("a label value is empty or at most 63 ASCII letters, digits, `-`, `_` and `.`, starting and ending with a letter or digit"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// apimachinery `pkg/util/validation/validation_test.go` `TestIsQualifiedName`: its good
    /// and bad values, row by row.
    #[test]
    fn keys_are_qualified_names_as_is_qualified_name_reads_them() {
        let good = [
            "simple",
            "now-with-dashes",
            "1-starts-with-num",
            "1234",
            "simple/simple",
            "now-with-dashes/simple",
            "now-with-dashes/now-with-dashes",
            "now.with.dots/simple",
            "now-with.dashes-and.dots/simple",
            "1-num.2-num/3-num",
            "1234/5678",
            "1.2.3.4/5678",
            "Uppercase_Is_OK_123",
            "example.com/Uppercase_Is_OK_123",
            "requests.storage-foo",
        ];
        for k in good {
            assert_eq!(qualified_name_error(k), None, "{k}");
        }
        let long_name = "a".repeat(64);
        let long_prefix = format!("{}/a", "a".repeat(254));
        let bad = [
            "nospecialchars%^=@",
            "cantendwithadash-",
            "-cantstartwithadash-",
            "only/one/slash",
            "Example.com/abc",
            "example_com/abc",
            "example.com/",
            "/simple",
            long_name.as_str(),
            long_prefix.as_str(),
            "",
        ];
        for k in bad {
            assert!(qualified_name_error(k).is_some(), "{k} is refused");
        }
        let name63 = "a".repeat(63);
        assert_eq!(qualified_name_error(&format!("example.com/{name63}")), None);
        // `IsDNS1123Subdomain` limits the whole prefix, not each of its parts.
        let part64 = "a".repeat(64);
        assert_eq!(qualified_name_error(&format!("{part64}.com/x")), None);
    }

    /// `objectmeta.go` `ValidateAnnotations`: `IsQualifiedName(strings.ToLower(k))`, so an
    /// annotation may have capitals in its prefix; a label (`ValidateLabels`) may not.
    #[test]
    fn an_annotation_key_is_read_lowercased_and_a_label_key_is_not() {
        let err = |m: String| crate::diag::Diagnostic::at(1, 1, 1, m);
        assert!(check_key("Example.com/Owner", "annotation", err).is_ok());
        assert!(check_key("Example.com/Owner", "label", err).is_err());
        assert!(check_key("example.com/Owner", "label", err).is_ok());
    }
}
