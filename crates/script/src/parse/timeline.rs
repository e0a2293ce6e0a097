//! The timeline: `at TIME ACTION` (or `at +D`, after the previous line), and what every timeline
//! line shares with a burst (`bursts.rs`): its action, read by the row of the actions' table
//! its word names, and the limits on what all the entries hold together.

use listwatch_core::*;

use super::bursts::repetition;
use super::spans::Span;
use super::table::{self, statement, Head, Row, Statement, ACTIONS, ACTION_WORDS};
use super::writes::written_name;
use super::Builder;
use crate::cursor::{unknown, Cursor, R};
use crate::lexer::Word;
use crate::numbers::MAX_DURATION_MS;

/// The latest moment: the end of the longest run.
pub(super) const MAX_TIME_MS: TimeMs = TimeMs(MAX_DURATION_MS.0);
/// All `say` texts of a script together (bursts repeat theirs).
pub const MAX_NARRATION_BYTES: usize = 1 << 20;
/// All object names written in the timeline together (bursts repeat theirs).
pub const MAX_NAME_BYTES: usize = 4 << 20;

pub(super) const STATEMENTS: &[Row<Statement>] = &[statement(
    "at",
    "at TIME ACTION | at +D ACTION",
    "at 1s create Db web spec 3",
    Builder::at_statement,
)];

impl Builder {
    fn at_statement(&mut self, p: &mut Cursor, head: Head) -> R<()> {
        let (t, span) = self.at_time(p)?;
        self.schedule(p, head.word, span, vec![t], false)
    }

    /// `at T` or `at +D` (after the previous line): the moment and the span to report it at.
    fn at_time(&mut self, p: &mut Cursor) -> R<(TimeMs, Span)> {
        let tw = p.next("a time")?;
        let t = if let Some(rel) = tw.text.strip_prefix('+') {
            let d = p.duration_in(tw, rel, || {
                p.err_at(tw, format!("`{}` is not a duration", tw.text))
            })?;
            self.last_at + d
        } else {
            TimeMs::ZERO
                + p.duration_in(tw, &tw.text, || {
                    p.err_at(tw, format!("`{}` is not a time", tw.text))
                        .help("write 1s, 250ms, 2m, or +500ms after the previous line")
                })?
        };
        if t > MAX_TIME_MS {
            return Err(p.err_at(tw, "times stop at 24h"));
        }
        self.last_at = t;
        Ok((t, Span::of(p, tw)))
    }

    /// The action after the line's `times` (the line's first word is `first`), one timeline entry
    /// at each time, located at `span`; a `burst` line repeats its text.
    pub(super) fn schedule(
        &mut self,
        p: &mut Cursor,
        first: &Word,
        span: Span,
        times: Vec<TimeMs>,
        burst: bool,
    ) -> R<()> {
        let aw = p.next("an action (create, update, delete, crash, ...)")?;
        let rest = &p.words[p.pos..];
        // `{i}` in any word of a burst is its repetition number, from 0. Only the words that hold
        // it are rewritten for each repetition; an action without it is parsed once and copied.
        let varies = burst && rest.iter().any(|w| w.text.contains("{i}"));
        let mut once: Option<Input> = None;
        for (i, t) in times.iter().enumerate() {
            let input = match &once {
                Some(input) => input.clone(),
                None if varies => {
                    let substituted = repetition(rest, i);
                    let mut q = Cursor {
                        line: p.line,
                        words: &substituted,
                        pos: 0,
                    };
                    self.action(&mut q, aw)?
                }
                None => {
                    let input = self.action(p, aw)?;
                    once = Some(input.clone());
                    input
                }
            };
            self.count_bytes(p, first, &input, burst.then_some(times.len()))?;
            self.spans.timeline.push(span);
            self.config.timeline.push(TimedInput { at_ms: *t, input });
        }
        Ok(())
    }

    /// The action `aw` and the rest of the line.
    fn action(&self, p: &mut Cursor, aw: &Word) -> R<Input> {
        let input = match table::find(ACTIONS, &aw.text) {
            Some(row) => (row.parse)(self, p, aw)?,
            None => return Err(unknown(p, aw, "action", ACTION_WORDS)),
        };
        p.done()?;
        Ok(input)
    }

    /// Every copy of a text or a name stays in the timeline: their total is bounded. `copies`:
    /// how many times a burst repeats the line.
    fn count_bytes(
        &mut self,
        p: &Cursor,
        first: &Word,
        input: &Input,
        copies: Option<usize>,
    ) -> R<()> {
        if let Input::Say { text, .. } = input {
            self.narration_bytes += text.len();
            if self.narration_bytes > MAX_NARRATION_BYTES {
                let burst = copies
                    .map(|n| format!(" (this burst repeats its text {n} times)"))
                    .unwrap_or_default();
                return Err(p
                    .err_at(
                        first,
                        format!("the script's narration would exceed the limit of 1 MiB{burst}"),
                    )
                    .help("say less, or say it fewer times"));
            }
        } else if let Some(name) = written_name(input) {
            self.name_bytes += name.len();
            if self.name_bytes > MAX_NAME_BYTES {
                return Err(p
                    .err_at(
                        first,
                        "the timeline's object names would exceed the limit of 4 MiB in all",
                    )
                    .help("use shorter names or fewer repetitions"));
            }
        }
        Ok(())
    }
}
