//! The apiserver's rules for object names (apimachinery `pkg/util/validation/validation.go`,
//! `pkg/api/validation/objectmeta.go` `ValidateObjectMeta`), in one place: the engine applies
//! them to every create (a name a reconcile builds at run time included) and the scenario
//! language to the names a script writes, when it is read.

/// `DNS1123SubdomainMaxLength`.
pub const DNS1123_SUBDOMAIN_LEN_MAX: usize = 253;
/// `DNS1123LabelMaxLength`.
pub const DNS1123_LABEL_LEN_MAX: usize = 63;

/// Which part of an object's metadata a name rule refused.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum NameField {
    Name,
    /// A create's `generateName` prefix (checked with its trailing `-` masked).
    GenerateName,
    Namespace,
}

impl NameField {
    pub fn as_str(self) -> &'static str {
        match self {
            NameField::Name => "metadata.name",
            NameField::GenerateName => "metadata.generateName",
            NameField::Namespace => "metadata.namespace",
        }
    }
}

/// The rule a name broke, as `validation.go` words it.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum NameRule {
    SubdomainTooLong,
    Subdomain,
    LabelTooLong,
    Label,
}

impl NameRule {
    pub fn as_str(self) -> &'static str {
        match self {
            NameRule::SubdomainTooLong => "must be no more than 253 characters",
            NameRule::Subdomain => "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character",
            NameRule::LabelTooLong => "must be no more than 63 characters",
            NameRule::Label => "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character",
        }
    }
}

/// `IsDNS1123Subdomain`'s pattern (`[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*`)
/// in one pass over the bytes, as every create checks its name: each part non-empty, starting
/// and ending with a letter or digit. `dots`: whether a `.` may separate parts (not in a label).
fn dns_pattern_ok(s: &str, dots: bool) -> bool {
    // The byte before: `.` stands for the start of a part.
    let mut prev = b'.';
    for &c in s.as_bytes() {
        match c {
            b'a'..=b'z' | b'0'..=b'9' => {}
            b'-' if prev != b'.' => {}
            b'.' if dots && prev != b'.' && prev != b'-' => {}
            _ => return false,
        }
        prev = c;
    }
    prev != b'.' && prev != b'-'
}

/// `IsDNS1123Subdomain`: at most 253 characters, its pattern (no limit on each part).
pub fn dns_subdomain_error(s: &str) -> Option<NameRule> {
    if s.len() > DNS1123_SUBDOMAIN_LEN_MAX {
        return Some(NameRule::SubdomainTooLong);
    }
    (!dns_pattern_ok(s, true)).then_some(NameRule::Subdomain)
}

/// `IsDNS1123Label` (a namespace's name, `ValidateNamespaceName`).
pub fn dns_label_error(s: &str) -> Option<NameRule> {
    if s.len() > DNS1123_LABEL_LEN_MAX {
        return Some(NameRule::LabelTooLong);
    }
    (!dns_pattern_ok(s, false)).then_some(NameRule::Label)
}

/// `IsValidLabelValue`: empty, or at most 63 characters of ASCII letters, digits, `-`, `_` and
/// `.` that start and end with a letter or digit.
pub fn label_value_ok(s: &str) -> bool {
    let b = s.as_bytes();
    let inner = |c: &u8| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.');
    b.is_empty()
        || (b.len() <= crate::object::MAX_LABEL_VALUE_LEN
            && b[0].is_ascii_alphanumeric()
            && b[b.len() - 1].is_ascii_alphanumeric()
            && b.iter().all(inner))
}

/// `generic.go` `maskTrailingDash`, byte for byte: a prefix of more than one byte that ends in
/// `-` loses its last *two* bytes and gains an `a` (so a 254-byte prefix ending in `-` passes
/// the 253 limit). Validation reads the masked prefix; the name drawn from it is the prefix.
fn mask_trailing_dash(name: &str) -> std::borrow::Cow<'_, str> {
    let b = name.as_bytes();
    if b.len() > 1 && b.ends_with(b"-") {
        let mut masked = b[..b.len() - 2].to_vec();
        masked.push(b'a');
        // Bytes cut inside a character are no DNS name either way: lossy keeps them refused.
        return std::borrow::Cow::Owned(String::from_utf8_lossy(&masked).into_owned());
    }
    std::borrow::Cow::Borrowed(name)
}

/// What `ValidateObjectMeta` refuses of an object's name (`NameIsDNSSubdomain`,
/// `ValidateNamespaceName`): `full` is `namespace/name` for a namespaced kind and the bare
/// name for a cluster-scoped one (in which a `/` is refused like any other character). With
/// `generate` the name is a `generateName` prefix, read through `maskTrailingDash`.
pub fn object_name_error(
    full: &str,
    scope: crate::model::Scope,
    generate: bool,
) -> Option<(NameField, NameRule)> {
    let slash = full.bytes().position(|b| b == b'/');
    let (namespace, name) = match (scope, slash) {
        (crate::model::Scope::Namespaced, Some(i)) => (Some(&full[..i]), &full[i + 1..]),
        _ => (None, full),
    };
    if let Some(rule) = namespace.and_then(dns_label_error) {
        return Some((NameField::Namespace, rule));
    }
    if !generate {
        return dns_subdomain_error(name).map(|r| (NameField::Name, r));
    }
    dns_subdomain_error(&mask_trailing_dash(name)).map(|r| (NameField::GenerateName, r))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `objectmeta.go` `ValidateObjectMeta`: a name is a DNS subdomain (`NameIsDNSSubdomain`),
    /// a namespace a DNS label; a `generateName` prefix is checked with its trailing `-` masked
    /// (`maskTrailingDash`), so `web-` is a prefix but not a name, and `web.` neither.
    #[test]
    fn object_names_are_dns_subdomains_and_generate_name_masks_its_dash() {
        use NameField::*;
        let object_name_error = |full: &str, generate| {
            object_name_error(full, crate::model::Scope::Namespaced, generate)
        };
        assert_eq!(object_name_error("web-0", false), None);
        assert_eq!(object_name_error("prod/web.example", false), None);
        assert_eq!(object_name_error("web-", true), None);
        assert_eq!(
            object_name_error("web-", false),
            Some((Name, NameRule::Subdomain))
        );
        assert_eq!(
            object_name_error("web.", true),
            Some((GenerateName, NameRule::Subdomain))
        );
        assert_eq!(
            object_name_error("Web", false),
            Some((Name, NameRule::Subdomain))
        );
        assert_eq!(
            object_name_error("Prod/web", false),
            Some((Namespace, NameRule::Label))
        );
        assert_eq!(
            object_name_error("my.ns/web", false),
            Some((Namespace, NameRule::Label))
        );
        let long = "a".repeat(254);
        assert_eq!(
            object_name_error(&long, false),
            Some((Name, NameRule::SubdomainTooLong))
        );
        assert_eq!(
            object_name_error(&long, true),
            Some((GenerateName, NameRule::SubdomainTooLong)),
            "a prefix past 253 is refused, not cut"
        );
        assert_eq!(object_name_error(&"a".repeat(253), false), None);
        // `IsDNS1123Subdomain` limits the whole name, not each of its parts.
        assert_eq!(
            dns_subdomain_error(&format!("{}.com", "a".repeat(64))),
            None
        );
        assert_eq!(
            dns_label_error(&"a".repeat(64)),
            Some(NameRule::LabelTooLong)
        );
    }

    /// `validation_test.go` `TestIsDNS1123Subdomain`'s rows (good and bad), and
    /// `TestIsDNS1123Label`'s: the one-pass check against the pattern.
    #[test]
    fn the_dns_patterns_hold_row_by_row() {
        let good = [
            "a",
            "ab",
            "abc",
            "a1",
            "a-1",
            "a--1--2--b",
            "0",
            "01",
            "012",
            "1a",
            "1-a",
            "1--a--b--2",
            "a.a",
            "ab.a",
            "abc.a",
            "a1.a",
            "a-1.a",
            "a--1--2--b.a",
            "a.1",
            "ab.1",
            "abc.1",
            "a1.1",
            "a-1.1",
            "a--1--2--b.1",
            "0.a",
            "01.a",
            "012.a",
            "1a.a",
            "1-a.a",
            "1--a--b--2",
            "0.1",
            "01.1",
            "012.1",
            "1a.1",
            "1-a.1",
            "1--a--b--2.1",
            "a.b.c.d.e",
            "aa.bb.cc.dd.ee",
            "1.2.3.4.5",
            "11.22.33.44.55",
        ];
        for s in good {
            assert_eq!(dns_subdomain_error(s), None, "{s}");
        }
        let bad = [
            "",
            "A",
            "ABC",
            "aBc",
            "A1",
            "A-1",
            "1-A",
            "-",
            "a-",
            "-a",
            "1-",
            "-1",
            "_",
            "a_",
            "_a",
            "a_b",
            "1_",
            "_1",
            "1_2",
            ".",
            "a.",
            ".a",
            "a..b",
            "1.",
            ".1",
            "1..2",
            " ",
            "a ",
            " a",
            "a b",
            "1 ",
            " 1",
            "1 2",
            "A.a",
            "aB.a",
            "ab.A",
            "A1.a",
            "a1.A",
            "A.1",
            "aB.1",
            "A1.1",
            "1A.1",
            "0.A",
            "01.A",
            "012.A",
            "1A.a",
            "1a.A",
            "A.B.C.D.E",
            "AA.BB.CC.DD.EE",
            "a.B.c.d.e",
            "aa.bB.cc.dd.ee",
            "a@b",
            "a,b",
            "a_b",
            "a;b",
            "a:b",
            "a%b",
            "a?b",
            "a$b",
            "a-.b",
            "a.-b",
        ];
        for s in bad {
            assert!(dns_subdomain_error(s).is_some(), "{s} is refused");
        }
        assert_eq!(dns_label_error("a-1"), None);
        for s in ["a.b", "", "-a", "a-", "A"] {
            assert!(dns_label_error(s).is_some(), "{s} is no label");
        }
    }

    /// `generic.go` `maskTrailingDash` (and its `TestMaskTrailingDash`): the last two bytes
    /// become `a` when the prefix ends in `-` and has more than one byte; `-` alone stays.
    #[test]
    fn mask_trailing_dash_is_gos() {
        assert_eq!(mask_trailing_dash("abc-"), "aba");
        assert_eq!(mask_trailing_dash("a-"), "a");
        assert_eq!(mask_trailing_dash("-"), "-");
        assert_eq!(mask_trailing_dash("abc"), "abc");
        let ns = crate::model::Scope::Namespaced;
        let long = format!("{}-", "a".repeat(253));
        assert_eq!(
            object_name_error(&long, ns, true),
            None,
            "254 bytes mask to 253"
        );
        assert_eq!(
            object_name_error("-", ns, true),
            Some((NameField::GenerateName, NameRule::Subdomain))
        );
        // Non-ASCII before the dash: cut inside a character, refused, never a panic.
        assert!(object_name_error("é-", ns, true).is_some());
    }

    /// A cluster-scoped kind's name has no namespace: a `/` in it is one more character
    /// `IsDNS1123Subdomain` refuses, not a namespace separator.
    #[test]
    fn a_cluster_scoped_name_with_a_slash_is_refused() {
        use crate::model::Scope;
        assert_eq!(
            object_name_error("a/b", Scope::Cluster, false),
            Some((NameField::Name, NameRule::Subdomain))
        );
        assert_eq!(object_name_error("a/b", Scope::Namespaced, false), None);
    }

    /// `validation_test.go` `TestIsValidLabelValue`'s rows.
    #[test]
    fn label_values_as_is_valid_label_value_reads_them() {
        let long = "a".repeat(63);
        let good = [
            "simple",
            "now-with-dashes",
            "1-starts-with-num",
            "end-with-num-1",
            "1234",
            long.as_str(),
            "",
            "Uppercase_Is_OK_123",
            "dots.are.ok",
        ];
        for v in good {
            assert!(label_value_ok(v), "{v}");
        }
        let bad = [
            "nospecialchars%^=@",
            "Tama-nui-te-rā.is.Māori.sun",
            "\\backslashes\\are\\bad",
            "-starts-with-dash",
            "ends-with-dash-",
            ".starts.with.dot",
            "ends.with.dot.",
            "a/b",
        ];
        for v in bad {
            assert!(!label_value_ok(v), "{v} is refused");
        }
        assert!(!label_value_ok(&"a".repeat(64)));
    }
}
