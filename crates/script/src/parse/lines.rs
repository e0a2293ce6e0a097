//! The line loop: a script's lines, their indentation and blocks, each statement handed to its
//! row of the tables, at most 50 diagnostics.

use super::blocks::Block;
use super::table::{self, Head, IndentedFn, STATEMENTS, STATEMENT_WORDS};
use super::Builder;
use crate::cursor::{unknown, Cursor, R};
use crate::diag::Diagnostic;
use crate::lexer::words;
use crate::logic::BlockLine;

impl Builder {
    /// Reads the script line by line (a `logic` block's lines are gathered and compiled when it
    /// closes); at most 50 diagnostics.
    pub(super) fn read_lines(&mut self, src: &str) -> Vec<Diagnostic> {
        let mut diags = vec![];
        // How the lines indented under the last statement are read, if they belong to it.
        let mut under: Option<IndentedFn> = None;
        let mut block: Option<Block> = None;
        // A line that fails takes the lines indented under it along (a controller's options and
        // logic, a block's statements): they would only repeat its error in other words.
        let mut failed_at: Option<usize> = None;
        let src = crate::lexer::strip_bom(src);
        for (i, raw) in crate::lexer::lines(src).enumerate() {
            let line = i + 1;
            if self.title.is_empty() {
                if let Some(t) = raw.trim().strip_prefix('#') {
                    self.title = t.trim().to_string();
                }
            }
            let ws = match words(raw) {
                Ok(ws) => ws,
                Err((col, msg)) => {
                    diags.push(Diagnostic::at(line, col, 1, msg));
                    continue;
                }
            };
            if ws.is_empty() {
                continue;
            }
            let indent = raw.chars().take_while(|c| *c == ' ' || *c == '\t').count();
            if failed_at.is_some_and(|at| indent > at) {
                continue;
            }
            failed_at = None;
            if let Some(bk) = block.as_mut().filter(|bk| indent > bk.indent) {
                bk.lines.push(BlockLine {
                    line,
                    indent,
                    words: ws,
                });
                continue;
            }
            // A line no deeper than the block's head ends the block.
            if let Some(bk) = block.take() {
                diags.extend(self.close_block(bk).err());
            }
            let mut p = Cursor {
                line,
                words: &ws,
                pos: 0,
            };
            match self.read_line(&mut p, raw, indent, &mut under) {
                Ok(opened) => block = opened,
                Err(d) => {
                    diags.push(d);
                    failed_at = Some(indent);
                }
            }
            if diags.len() >= 50 {
                break;
            }
        }
        if let Some(bk) = block.take() {
            diags.extend(self.close_block(bk).err());
        }
        diags
    }

    /// One line outside a block: a statement, or an indented line that belongs to the statement
    /// above it (under a `controller` line, one of its options or the head of its `logic` or
    /// `desired` block, returned to gather its lines).
    fn read_line(
        &mut self,
        p: &mut Cursor,
        raw: &str,
        indent: usize,
        under: &mut Option<IndentedFn>,
    ) -> R<Option<Block>> {
        let indented = raw.starts_with(' ') || raw.starts_with('\t');
        if let Some(read) = under.filter(|_| indented) {
            return read(self, p, indent);
        }
        *under = table::find(STATEMENTS, &p.words[0].text).and_then(|r| r.parse.indented);
        self.statement(p, raw.trim()).map(|()| None)
    }

    fn statement(&mut self, p: &mut Cursor, text: &str) -> R<()> {
        let w = p.next("a statement")?;
        match table::find(STATEMENTS, &w.text) {
            Some(row) => (row.parse.read)(self, p, Head { word: w, text }),
            None => Err(unknown(p, w, "statement", STATEMENT_WORDS)),
        }
    }
}
