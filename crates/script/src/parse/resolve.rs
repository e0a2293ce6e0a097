//! Expectations, read once every declaration is known: a scope word may name a controller
//! declared below the `expect` line, or an object the timeline writes anywhere.

use listwatch_core::verdict::Expect;

use super::table::{self, EXPECTATIONS};
use super::writes::written_name;
use super::{Builder, Expectation};
use crate::cursor::{Cursor, R};
use crate::diag::Diagnostic;

impl Builder {
    /// The names expectation scopes may use, in line order (the order of suggestions).
    pub(super) fn collect_known_names(&mut self) {
        let mut seen = std::collections::HashSet::new();
        for name in self
            .config
            .timeline
            .iter()
            .filter_map(|t| written_name(&t.input))
        {
            // A scope name means what the timeline means: `a` is `default/a`, so `a` is
            // known only when `default/a` is written, and `ns/a` must be written out.
            // Suggestions list each object once, as the timeline wrote it.
            let qualified = listwatch_core::sim::qualify(name);
            if let Some(short) = qualified.strip_prefix("default/") {
                seen.insert(short.to_string());
            }
            if seen.insert(qualified.clone()) {
                self.known_names.push(name.to_string());
            }
        }
        self.known_names_set = seen;
    }

    /// The expectations, read once every declaration is known; at most 50 diagnostics in all.
    pub(super) fn resolve_expectations(&mut self, diags: &mut Vec<Diagnostic>) {
        for (line, text, ws) in std::mem::take(&mut self.pending_expects) {
            let mut p = Cursor {
                line,
                words: &ws,
                pos: 0,
            };
            match self.expectation(&mut p) {
                Ok(expect) => self.expectations.push(Expectation { line, text, expect }),
                Err(d) => diags.push(d),
            }
            if diags.len() >= 50 {
                return;
            }
        }
    }

    /// One `expect` line: the row its second word names, else `expect CONTROLLER ...`.
    fn expectation(&self, p: &mut Cursor) -> R<Expect> {
        p.expect_kw("expect")?;
        let w = p.next("what to expect")?;
        let Some(row) = table::find(EXPECTATIONS, &w.text) else {
            return self.controller_expectation(p, w);
        };
        let e = (row.parse)(self, p, w)?;
        p.done()?;
        Ok(e)
    }
}
