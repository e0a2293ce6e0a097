//! Count expectations: `expect COUNTED [CONTROLLER|KIND|NAME]... CMP N [by T]`, scoped by
//! words that name a controller, a kind, or an object of the scenario.

use listwatch_core::verdict::{Counted, Expect, Scope};
use listwatch_core::*;

use super::expect::{cmp, COMPARISONS};
use super::table::{row, ExpectationFn, Row};
use super::Builder;
use crate::cursor::{Cursor, R};
use crate::diag::{nearest, Diagnostic};
use crate::lexer::Word;

/// What a count expectation counts.
pub(super) const EXPECTATIONS: &[Row<ExpectationFn>] = &[
    counted(
        "gone",
        "expect gone [CONTROLLER | KIND | NAME]... CMP N [by TIME]",
        "expect gone ctl Pod == 1",
    ),
    counted(
        "relists",
        "expect relists [CONTROLLER | KIND | NAME]... CMP N [by TIME]",
        "expect relists ctl == 0",
    ),
    counted(
        "lists",
        "expect lists [CONTROLLER | KIND | NAME]... CMP N [by TIME]",
        "expect lists ctl Pod >= 1",
    ),
    counted(
        "watches",
        "expect watches [CONTROLLER | KIND | NAME]... CMP N [by TIME]",
        "expect watches ctl >= 1",
    ),
    counted(
        "reconciles",
        "expect reconciles [CONTROLLER | KIND | NAME]... CMP N [by TIME]",
        "expect reconciles ctl <= 3 by 10s",
    ),
    counted(
        "creates",
        "expect creates [CONTROLLER | KIND | NAME]... CMP N [by TIME]",
        "expect creates Pod == 3",
    ),
    counted(
        "updates",
        "expect updates [CONTROLLER | KIND | NAME]... CMP N [by TIME]",
        "expect updates ctl == 0",
    ),
    counted(
        "status-updates",
        "expect status-updates [CONTROLLER | KIND | NAME]... CMP N [by TIME]",
        "expect status-updates Pod == 1",
    ),
    counted(
        "deletes",
        "expect deletes [CONTROLLER | KIND | NAME]... CMP N [by TIME]",
        "expect deletes Pod == 0",
    ),
    counted(
        "evictions",
        "expect evictions [CONTROLLER | KIND | NAME]... CMP N [by TIME]",
        "expect evictions == 0",
    ),
    counted(
        "collapsed",
        "expect collapsed [CONTROLLER | KIND | NAME]... CMP N [by TIME]",
        "expect collapsed ctl >= 0",
    ),
    counted(
        "bookmarks",
        "expect bookmarks [CONTROLLER | KIND | NAME]... CMP N [by TIME]",
        "expect bookmarks ctl >= 1",
    ),
    counted(
        "watch-added",
        "expect watch-added [CONTROLLER | KIND | NAME]... CMP N [by TIME]",
        "expect watch-added ctl Pod >= 0",
    ),
    counted(
        "watch-modified",
        "expect watch-modified [CONTROLLER | KIND | NAME]... CMP N [by TIME]",
        "expect watch-modified ctl Pod >= 0",
    ),
    counted(
        "watch-deleted",
        "expect watch-deleted [CONTROLLER | KIND | NAME]... CMP N [by TIME]",
        "expect watch-deleted ctl Pod >= 0",
    ),
];

const fn counted(
    word: &'static str,
    usage: &'static str,
    example: &'static str,
) -> Row<ExpectationFn> {
    row(word, usage, example, Builder::count_expectation)
}

impl Builder {
    /// `expect COUNTED [CONTROLLER|KIND|NAME]... CMP N [by T]`, `c` being what it counts.
    fn count_expectation(&self, p: &mut Cursor, c: &Word) -> R<Expect> {
        let what = match c.text.as_str() {
            "gone" => Counted::Gone,
            "relists" => Counted::Relists,
            "lists" => Counted::Lists,
            "watches" => Counted::Watches,
            "reconciles" => Counted::Reconciles,
            "creates" => Counted::Writes(WriteOp::Create),
            "updates" => Counted::Writes(WriteOp::Update),
            "status-updates" => Counted::Writes(WriteOp::UpdateStatus),
            "deletes" => Counted::Writes(WriteOp::Delete),
            "evictions" => Counted::Evictions,
            "collapsed" => Counted::Collapsed,
            "watch-added" => Counted::WatchEvents(EventType::Added),
            "watch-modified" => Counted::WatchEvents(EventType::Modified),
            "watch-deleted" => Counted::WatchEvents(EventType::Deleted),
            _ => Counted::Bookmarks,
        };
        let mut scope = Scope::default();
        while let Some(x) = p.peek() {
            if COMPARISONS.contains(&x.text.as_str()) {
                break;
            }
            p.pos += 1;
            if let Some(i) = self
                .config
                .controllers
                .iter()
                .position(|c| c.name == x.text)
            {
                scope.controller = Some(ControllerId(i as u16));
            } else if let Some(k) = self.config.kind_id(&x.text) {
                scope.kind = Some(k);
            } else if self.is_known_name(&x.text) {
                scope.name = Some(x.text.clone());
            } else {
                return Err(self.unknown_scope(p, x));
            }
        }
        let cmp = cmp(p)?;
        let value = p.number("a count", i64::MAX / 2)?;
        let by_ms = if p.eat("by") {
            Some(p.moment("a time")?)
        } else {
            None
        };
        Ok(Expect::Count {
            what,
            scope,
            cmp,
            value,
            by_ms,
        })
    }

    /// An object the timeline writes, or one a controller makes from it (`NAME-0`, `NAME-data`,
    /// and so on), by its full or its short name.
    fn is_known_name(&self, w: &str) -> bool {
        let mut w = w;
        loop {
            if self.known_names_set.contains(w) {
                return true;
            }
            let Some((base, suffix)) = w.rsplit_once('-') else {
                return false;
            };
            if suffix != "data"
                && (suffix.is_empty() || !suffix.bytes().all(|b| b.is_ascii_digit()))
            {
                return false;
            }
            w = base;
        }
    }

    fn unknown_scope(&self, p: &Cursor, x: &Word) -> Diagnostic {
        let d = p.err_at(
            x,
            format!(
                "`{}` is not a controller, a kind or an object of this scenario",
                x.text
            ),
        );
        // `web` where only `ns/web` exists: name the namespaces rather than guess by spelling.
        let qualified: Vec<&str> = self
            .known_names
            .iter()
            .filter(|n| n.split_once('/').is_some_and(|(_, short)| short == x.text))
            .map(String::as_str)
            .take(4)
            .collect();
        if !qualified.is_empty() {
            return d.help(format!(
                "`{}` means `default/{}`; write the namespace: {}",
                x.text,
                x.text,
                qualified
                    .iter()
                    .map(|n| format!("`{n}`"))
                    .collect::<Vec<_>>()
                    .join(" or ")
            ));
        }
        let candidates = self
            .config
            .controllers
            .iter()
            .map(|c| c.name.as_str())
            .chain(self.config.kinds.iter().map(|k| k.name.as_str()))
            .chain(self.known_names.iter().map(String::as_str));
        match nearest(&x.text, candidates) {
            Some(n) => d.help(format!("did you mean `{n}`?")),
            None => d.help(
                "a scope word names a controller, a kind, or an object the timeline writes \
                 (or one a controller makes from it, like `web-0` or `web-data`)",
            ),
        }
    }
}
