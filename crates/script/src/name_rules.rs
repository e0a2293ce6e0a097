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

/// A label value's characters (`validation.IsValidLabelValue`): ASCII letters, digits, `-`, `_`
/// and `.`; every place that reads one checks it so (the timeline, selectors, `logic`).
pub(crate) fn is_label_value_char(c: char) -> bool {
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

/// A key, as `validateLabelKey` reads a qualified name: its characters, at most `MAX_KEY_LEN`
/// (`what` names it: "label", "finalizer"...). `err` places the error where the key was read.
pub(crate) fn check_key(key: &str, what: &str, err: impl FnOnce(String) -> Diagnostic) -> R<()> {
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

/// A label value written as a literal in a `logic` block (`metadata.labels.app = "web"`), as
/// `validation.IsValidLabelValue` reads it: at most `MAX_LABEL_VALUE_LEN` characters of ASCII
/// letters, digits, `-`, `_` and `.` (the apiserver answers 422 otherwise).
pub(crate) fn check_label_value(value: &str, err: impl FnOnce(String) -> Diagnostic) -> R<()> {
    use listwatch_core::object::MAX_LABEL_VALUE_LEN;
    if value.chars().count() > MAX_LABEL_VALUE_LEN || !value.chars().all(is_label_value_char) {
        return Err(err(format!("`{value}` is not a valid label value"))
            .help(format!("a label value is at most {MAX_LABEL_VALUE_LEN} ASCII letters, digits, `-`, `_` and `.`")));
    }
    Ok(())
}
