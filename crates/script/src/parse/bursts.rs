//! Bursts: `every D N times [from TIME] ACTION`, one timeline entry per repetition, `{i}` in any
//! word of the action being the repetition's number.

use listwatch_core::*;

use super::spans::Span;
use super::table::{statement, Head, Row, Statement};
use super::timeline::MAX_TIME_MS;
use super::Builder;
use crate::cursor::{Cursor, R};
use crate::lexer::Word;

/// The most repetitions of one burst.
const MAX_BURST: u64 = 100_000;

pub(super) const STATEMENTS: &[Row<Statement>] = &[statement(
    "every",
    "every D N times [from TIME] ACTION",
    "every 100ms 50 times status Db web {i}",
    Builder::every_statement,
)];

impl Builder {
    fn every_statement(&mut self, p: &mut Cursor, head: Head) -> R<()> {
        let span = Span::of(p, head.word);
        let times = self.burst_times(p, head.word)?;
        self.schedule(p, head.word, span, times, true)
    }

    /// `every D N times [from T]`: the moments of a burst.
    fn burst_times(&self, p: &mut Cursor, first: &Word) -> R<Vec<TimeMs>> {
        // every D N times [from T] ACTION
        let d = p.duration("an interval")?;
        let n = p.number("a count", MAX_BURST as i64)?;
        p.expect_kw("times")?;
        let from = if p.eat("from") {
            p.moment("a start time")?
        } else {
            self.last_at
        };
        if n < 1 {
            return Err(p.err_at(&p.words[p.pos - 2], "a burst repeats at least once"));
        }
        let times: Vec<TimeMs> = (0..n as u64).map(|i| from + d * i).collect();
        if times.last().is_some_and(|&t| t > MAX_TIME_MS) {
            return Err(p.err_at(first, "the burst runs past 24h"));
        }
        if self.config.timeline.len() + times.len() > MAX_TIMELINE {
            return Err(p.err_at(
                first,
                format!("the timeline would hold more than {MAX_TIMELINE} entries"),
            ));
        }
        Ok(times)
    }
}

/// The words of repetition `i`: `{i}` replaced by its number, each word where it was written.
pub(super) fn repetition(words: &[Word], i: usize) -> Vec<Word> {
    let n = i.to_string();
    words
        .iter()
        .map(|w| Word {
            text: w.text.replace("{i}", &n),
            col: w.col,
            len: w.len,
            quoted: w.quoted,
        })
        .collect()
}
