//! The run's end: `run D`, or two minutes after the last timeline entry; checked against the
//! timeline and the 24 h limit once the whole script is read.

use listwatch_core::*;

use super::spans::Span;
use super::table::{statement, Head, Row, Statement};
use super::timeline::MAX_TIME_MS;
use super::Builder;
use crate::cursor::{Cursor, R};
use crate::diag::Diagnostic;

pub(super) const STATEMENTS: &[Row<Statement>] =
    &[statement("run", "run D", "run 10m", Builder::run_statement)];

impl Builder {
    fn run_statement(&mut self, p: &mut Cursor, _: Head) -> R<()> {
        self.config.end_ms = p.moment("how long the run lasts")?;
        self.spans.run = Some(Span::of(p, &p.words[p.pos - 1]));
        self.end_set = true;
        p.done()
    }

    /// Without `run`: two minutes of quiet after the last input, so everything can settle.
    pub(super) fn default_end(&mut self) {
        if !self.end_set {
            let last_input = self.config.timeline.iter().map(|t| t.at_ms).max();
            self.config.end_ms = last_input.unwrap_or(TimeMs::ZERO) + DurationMs(120_000);
        }
    }

    /// The run's end against the timeline and the 24 h limit, located at the entry (or the `run`
    /// statement) at fault.
    pub(super) fn check_end(&self) -> Option<Diagnostic> {
        let end = self.config.end_ms;
        let (last, span) = self.config.timeline.iter().zip(&self.spans.timeline).fold(
            None,
            |best: Option<(TimeMs, Span)>, (t, s)| match best {
                Some((at, _)) if at >= t.at_ms => best,
                _ => Some((t.at_ms, *s)),
            },
        )?;
        if !self.end_set && end > MAX_TIME_MS {
            return Some(
                span.diag(format!(
                    "the run ends 2m after its last entry, at {}, past the limit of 24h",
                    clock(end)
                ))
                .help(format!(
                    "without a `run` statement a run lasts until 2m after its last entry; \
                     write `run 24h` (the longest run) to end it at the limit, or move this \
                     entry at {} earlier",
                    clock(last)
                )),
            );
        }
        if last > end {
            let first_late = self
                .config
                .timeline
                .iter()
                .zip(&self.spans.timeline)
                .find(|(t, _)| t.at_ms > end)
                .map(|(t, s)| (t.at_ms, *s))
                .unwrap_or((last, span));
            let mut d = first_late.1.diag(format!(
                "this entry at {} comes after the end of the run at {end}",
                first_late.0
            ));
            d = d.help(match self.spans.run {
                Some(r) => format!(
                    "lengthen the run: `run {last}` or more on line {}, or move this entry earlier",
                    r.line
                ),
                None => format!("lengthen the run: `run {last}` or more"),
            });
            return Some(d);
        }
        None
    }
}

/// A time as hours, minutes, seconds and milliseconds: `24h2m`, `1m30s`, `250ms`.
fn clock(t: TimeMs) -> String {
    let ms = t.ms();
    let mut out = String::new();
    for (unit, size) in [("h", 3_600_000), ("m", 60_000), ("s", 1000), ("ms", 1)] {
        let n = ms / size
            % if unit == "h" {
                u64::MAX
            } else if unit == "ms" {
                1000
            } else {
                60
            };
        if n > 0 {
            out += &format!("{n}{unit}");
        }
    }
    if out.is_empty() {
        out = "0s".into();
    }
    out
}
