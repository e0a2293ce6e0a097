//! Names: an object's name, and the lookup of a declared kind, controller or apiserver (an
//! unknown one gets the nearest declared as help). The rules of a declared name are
//! `name_rules.rs`'s.

use listwatch_core::{ApiserverId, ControllerId, KindId};

use super::Builder;
use crate::cursor::{declared, Cursor, R};
use crate::lexer::Word;

/// The next word as an object's name (`name` or `namespace/name`; a burst has replaced its
/// `{i}` already).
pub(super) fn object_name(p: &mut Cursor) -> R<String> {
    let w = p.next("an object name")?;
    let name = w.text.clone();
    let valid = |s: &str| {
        !s.is_empty()
            && s.len() <= 253
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '/' | '{' | '}'))
    };
    if !valid(&name) || name.matches('/').count() > 1 {
        return Err(p
            .err_at(w, format!("`{}` is not a valid object name", w.text))
            .help("use letters, digits, `-` and `.`, optionally `namespace/name`"));
    }
    // The apiserver's rule (422 otherwise); a create with `generate-name` names a prefix
    // (looked for only when the name fails as a name: a burst checks thousands).
    let generate = || (p.words.iter()).any(|w| !w.quoted && w.text == "generate-name");
    let templated = name.contains(['{', '}']);
    let refused = (!templated)
        .then(|| crate::name_rules::object_name_error(&name, false))
        .flatten()
        .and_then(|why| match generate() {
            true => crate::name_rules::object_name_error(&name, true),
            false => Some(why),
        });
    if let Some(why) = refused {
        return Err(p
            .err_at(w, format!("`{}` is not a valid object name: {why}", w.text))
            .help("an object's name is lowercase letters, digits, `-` and `.` (like `web-0`), its namespace lowercase letters, digits and `-`"));
    }
    Ok(name)
}

impl Builder {
    pub(super) fn kind(&self, p: &Cursor, w: &Word) -> R<KindId> {
        let names = self.config.kinds.iter().map(|k| k.name.as_str());
        declared(p, w, "kind", names)
            .map(|i| KindId(i as u16))
            .map_err(|d| {
                if self.config.kinds.is_empty() {
                    d.help("declare it first: `kind NAME`")
                } else {
                    d
                }
            })
    }
    pub(super) fn controller(&self, p: &Cursor, w: &Word) -> R<ControllerId> {
        let names = self.config.controllers.iter().map(|c| c.name.as_str());
        declared(p, w, "controller", names).map(|i| ControllerId(i as u16))
    }
    pub(super) fn apiserver(&self, p: &Cursor, w: &Word) -> R<ApiserverId> {
        let names = self.config.apiservers.iter().map(|a| a.name.as_str());
        declared(p, w, "apiserver", names).map(|i| ApiserverId(i as u8))
    }

    /// An object's name, as `object_name` reads it; a cluster-scoped kind's has no namespace.
    pub(super) fn object_name_of(&self, p: &mut Cursor, kind: KindId) -> R<String> {
        let name = object_name(p)?;
        if self.config.cluster_scoped(kind) && name.contains('/') {
            let kind = &self.config.kinds[kind.index()].name;
            return Err(p
                .err_at(
                    &p.words[p.pos - 1],
                    format!("`{kind}` is cluster-scoped: its objects have no namespace"),
                )
                .help(format!(
                    "name it without `NAMESPACE/`: `{kind} {}`",
                    name.rsplit('/').next().unwrap_or("")
                )));
        }
        Ok(name)
    }
    /// The next word, as a declared kind (`next_controller` and `next_apiserver` likewise).
    pub(super) fn next_kind(&self, p: &mut Cursor) -> R<KindId> {
        let w = p.next("a kind")?;
        self.kind(p, w)
    }
    pub(super) fn next_controller(&self, p: &mut Cursor) -> R<ControllerId> {
        let w = p.next("a controller")?;
        self.controller(p, w)
    }
    pub(super) fn next_apiserver(&self, p: &mut Cursor) -> R<ApiserverId> {
        let w = p.next("an apiserver")?;
        self.apiserver(p, w)
    }
}
