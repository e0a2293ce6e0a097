//! A cursor over one line's words, shared by the statement parser and the `logic` compiler:
//! every error it makes names the line and the column of the word at fault.

use listwatch_core::TimeMs;

use crate::diag::{nearest, Diagnostic};
use crate::lexer::Word;
use crate::parse::{parse_duration, MAX_TIME_MS};

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
    pub(crate) fn duration(&mut self, what: &str) -> R<TimeMs> {
        let w = self.next(what)?;
        parse_duration(&w.text)
            .ok_or_else(|| {
                self.err_at(w, format!("`{}` is not a duration", w.text))
                    .help("write a number and a unit: 250ms, 1.5s, 2m, 1h")
            })
            .and_then(|ms| {
                if ms > MAX_TIME_MS {
                    Err(self.err_at(w, format!("{} is longer than the limit of 24h", w.text)))
                } else {
                    Ok(ms)
                }
            })
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

/// An unknown word, with the nearest known one (or the list) as help.
pub(crate) fn unknown(p: &Cursor, w: &Word, what: &str, list: &[&str]) -> Diagnostic {
    let d = p.err_at(w, format!("unknown {what} `{}`", w.text));
    match nearest(&w.text, list.iter().copied()) {
        Some(n) => d.help(format!("did you mean `{n}`?")),
        None => d.help(format!("expected one of: {}", list.join(", "))),
    }
}
