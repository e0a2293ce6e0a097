//! Narration: `say "TEXT" [and wait]` on the timeline.

use listwatch_core::Input;

use super::table::{row, ActionFn, Row};
use super::Builder;
use crate::cursor::{Cursor, R};
use crate::lexer::Word;

pub(super) const ACTIONS: &[Row<ActionFn>] = &[row(
    "say",
    "say \"TEXT\" [and wait]",
    "at 2s say \"The watch breaks\" and wait",
    Builder::say_input,
)];

impl Builder {
    /// `say "TEXT" [and wait]`: narration; with `and wait` playback pauses there until the
    /// reader continues.
    fn say_input(&self, p: &mut Cursor, _: &Word) -> R<Input> {
        let t = p.next("a quoted text")?;
        if !t.quoted {
            return Err(p.err_at(t, "put the narration in quotes: say \"...\""));
        }
        let wait = p.eat("and");
        if wait {
            p.expect_kw("wait")?;
        }
        Ok(Input::Say {
            text: t.text.clone(),
            wait,
        })
    }
}
