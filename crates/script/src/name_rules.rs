//! The rules of a declared name (a kind, controller, apiserver or namespace): shared by the
//! scenario's parser and the reconcile language, which sits below it.

use crate::cursor::{Cursor, R};
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
