//! A cursor over one line's words, shared by the statement parser and the `logic` compiler:
//! every error it makes names the line and the column of the word at fault.

use listwatch_core::{DurationMs, TimeMs};

use crate::diag::{nearest, Diagnostic};
use crate::lexer::Word;
use crate::numbers::{decimal, parse_duration, NumberError, MAX_DURATION_MS};

pub(crate) type R<T> = Result<T, Diagnostic>;

pub(crate) struct Cursor<'a> {
    pub(crate) line: usize,
    pub(crate) words: &'a [Word],
    pub(crate) pos: usize,
}

impl<'a> Cursor<'a> {
    pub(crate) fn err_at(&self, w: &Word, msg: impl Into<String>) -> Diagnostic {
        Diagnostic::at(self.line, w.col, w.len, msg)
    }
    pub(crate) fn end_col(&self) -> usize {
        self.words.last().map(|w| w.col + w.len).unwrap_or(1)
    }
    pub(crate) fn next(&mut self, what: &str) -> R<&'a Word> {
        match self.words.get(self.pos) {
            Some(w) => {
                self.pos += 1;
                Ok(w)
            }
            None => Err(Diagnostic::at(
                self.line,
                self.end_col(),
                1,
                format!("expected {what} here"),
            )),
        }
    }
    pub(crate) fn peek(&self) -> Option<&'a Word> {
        self.words.get(self.pos)
    }
    pub(crate) fn eat(&mut self, kw: &str) -> bool {
        if self.peek().is_some_and(|w| !w.quoted && w.text == kw) {
            self.pos += 1;
            true
        } else {
            false
        }
    }
    pub(crate) fn expect_kw(&mut self, kw: &str) -> R<()> {
        let w = self.next(&format!("`{kw}`"))?;
        if w.text == kw {
            Ok(())
        } else {
            let d = self.err_at(w, format!("expected `{kw}`, found `{}`", w.text));
            Err(if nearest(&w.text, [kw]).is_some() {
                d.help(format!("did you mean `{kw}`?"))
            } else {
                d
            })
        }
    }
    pub(crate) fn done(&self) -> R<()> {
        match self.peek() {
            None => Ok(()),
            Some(w) => Err(self.err_at(
                w,
                format!("unexpected `{}` at the end of the statement", w.text),
            )),
        }
    }
    /// A length of time (a delay, a period, a timeout), at most 24h.
    pub(crate) fn duration(&mut self, what: &str) -> R<DurationMs> {
        let w = self.next(what)?;
        let d = self.duration_in(w, &w.text, || {
            self.err_at(w, format!("`{}` is not a duration", w.text))
                .help("write a number and a unit: 250ms, 1.5s, 2m, 1h")
        })?;
        if d > MAX_DURATION_MS {
            return Err(self.err_at(w, format!("{} is longer than the limit of 24h", w.text)));
        }
        Ok(d)
    }
    /// A moment, written as the time since the start (`run 2m`, `by 30s`).
    pub(crate) fn moment(&mut self, what: &str) -> R<TimeMs> {
        Ok(TimeMs::ZERO + self.duration(what)?)
    }
    /// The duration in `text` (the word `w`, or the part of it after a `+`). A number with too
    /// many digits is said to be one whatever the word was for; `not_one` words the other errors.
    pub(crate) fn duration_in(
        &self,
        w: &Word,
        text: &str,
        not_one: impl FnOnce() -> Diagnostic,
    ) -> R<DurationMs> {
        parse_duration(text).map_err(|e| self.refuse(w, e, not_one))
    }
    /// A percentage from 0% to 100%, `what` being what it is a percentage of.
    pub(crate) fn percentage(&mut self, what: &str) -> R<f64> {
        let w = self.next("a percentage")?;
        let not_one = || self.err_at(w, format!("write {what} as a percentage from 0% to 100%"));
        let pct = w
            .text
            .strip_suffix('%')
            .ok_or(NumberError::Malformed)
            .and_then(decimal)
            .map_err(|e| self.refuse(w, e, not_one))?;
        if !(0.0..=100.0).contains(&pct) {
            return Err(not_one());
        }
        Ok(pct)
    }
    /// The error for a number refused at `w` (`refusal`'s words).
    fn refuse(&self, w: &Word, e: NumberError, not_one: impl FnOnce() -> Diagnostic) -> Diagnostic {
        refusal(e, |words| self.err_at(w, words), not_one)
    }
    pub(crate) fn number(&mut self, what: &str, max: i64) -> R<i64> {
        let w = self.next(what)?;
        let n: i64 = w
            .text
            .parse()
            .map_err(|_| self.err_at(w, format!("`{}` is not a whole number", w.text)))?;
        // `unsigned_abs`: the magnitude of i64::MIN does not fit an i64.
        if n.unsigned_abs() > max.unsigned_abs() {
            return Err(self.err_at(w, format!("{n} is out of range (at most {max})")));
        }
        Ok(n)
    }
}

/// A time given on the command line (`--at`, `--time`): read as a script's duration and refused
/// in the same words.
pub fn parse_time_arg(text: &str) -> Result<DurationMs, String> {
    parse_duration(text).map_err(|e| {
        refusal(
            e,
            |words| words,
            || format!("`{text}` is not a time (write 2s, 250ms, 1m)"),
        )
    })
}

/// How a refused number is said: too many digits as such whatever the number was for (`said`
/// places the words), any other refusal by `not_one`, which knows what was wanted.
fn refusal<T>(e: NumberError, said: impl FnOnce(String) -> T, not_one: impl FnOnce() -> T) -> T {
    match e {
        NumberError::TooManyDigits(_) => said(e.to_string()),
        NumberError::Malformed => not_one(),
    }
}

/// An unknown word, with the nearest known one (or the list) as help.
pub(crate) fn unknown(p: &Cursor, w: &Word, what: &str, list: &[&str]) -> Diagnostic {
    let d = p.err_at(w, format!("unknown {what} `{}`", w.text));
    match nearest(&w.text, list.iter().copied()) {
        Some(n) => d.help(format!("did you mean `{n}`?")),
        None => d.help(format!("expected one of: {}", list.join(", "))),
    }
}

/// The index of the declared `what` (kind, controller, apiserver) that `w` names; an unknown name
/// gets the nearest declared one as help.
pub(crate) fn declared<'n>(
    c: &Cursor,
    w: &Word,
    what: &str,
    names: impl Iterator<Item = &'n str> + Clone,
) -> R<usize> {
    names.clone().position(|n| n == w.text).ok_or_else(|| {
        let d = c.err_at(w, format!("unknown {what} `{}`", w.text));
        match nearest(&w.text, names) {
            Some(n) => d.help(format!("did you mean `{n}`?")),
            None => d,
        }
    })
}
