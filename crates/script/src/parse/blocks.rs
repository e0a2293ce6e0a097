//! A controller's `logic` and `desired` blocks: the head line under the controller, the lines
//! indented under it gathered by the line loop, compiled by `logic.rs` when the block closes.

use listwatch_core::Behaviour;

use super::table::{row, ControllerOption, Row};
use super::Builder;
use crate::cursor::{Cursor, R};
use crate::diag::Diagnostic;
use crate::lexer::Word;
use crate::logic::{BlockLine, Compiler};

/// Controller options that open a block (after the settings of `controllers.rs`).
pub(super) const OPTIONS: &[Row<ControllerOption>] = &[
    row(
        "logic",
        "logic (its statements on the lines below, indented further)",
        "logic\n  get db = Db key\n  done",
        ControllerOption::Block(Builder::open_block),
    ),
    row(
        "desired",
        "desired (its statements on the lines below, indented further)",
        "desired\n  get db = Db key\n  require db exists",
        ControllerOption::Block(Builder::open_block),
    ),
];

/// A `logic` or `desired` block being read: its lines are those indented deeper than its head.
pub(super) struct Block {
    controller: usize,
    desired: bool,
    pub(super) indent: usize,
    head_line: usize,
    head: Word,
    pub(super) lines: Vec<BlockLine>,
}

impl Builder {
    /// `logic` or `desired` (the word `w`) under controller `idx`: the indented lines below are
    /// its statements.
    fn open_block(&mut self, p: &mut Cursor, w: &Word, idx: usize, indent: usize) -> R<Block> {
        if let Some(x) = p.peek() {
            return Err(p
                .err_at(x, format!("unexpected `{}` after `{}`", x.text, w.text))
                .help(format!(
                    "`{}` stands alone; its statements go on the lines below, indented further",
                    w.text
                )));
        }
        let desired = w.text == "desired";
        let c = &self.config.controllers[idx];
        if c.behaviour != Behaviour::Program {
            return Err(p
                .err_at(
                    w,
                    format!(
                        "controller `{}` already has a built-in behaviour; `{}` is for a controller's own logic",
                        c.name, w.text
                    ),
                )
                .help(format!(
                    "drop the behaviour from the controller line: `controller {} for {}`",
                    c.name,
                    self.config
                        .kinds
                        .get(c.primary.index())
                        .map_or("KIND", |k| k.name.as_str())
                )));
        }
        if self.blocks.contains(&(idx, desired)) {
            return Err(p.err_at(
                w,
                format!("controller `{}` has a `{}` block already", c.name, w.text),
            ));
        }
        self.blocks.push((idx, desired));
        Ok(Block {
            controller: idx,
            desired,
            indent,
            head_line: p.line,
            head: w.clone(),
            lines: vec![],
        })
    }

    pub(super) fn close_block(&mut self, bk: Block) -> R<()> {
        let (stmts, bindings, memory) = Compiler::new(&self.config.kinds, bk.desired)
            .compile((bk.head_line, &bk.head), &bk.lines)?;
        let c = &mut self.config.controllers[bk.controller];
        let prog = std::sync::Arc::make_mut(c.program.get_or_insert_with(Default::default));
        if bk.desired {
            prog.desired = Some(stmts);
            prog.desired_bindings = bindings;
            return Ok(());
        }
        prog.body = stmts;
        prog.bindings = bindings;
        prog.memory = memory;
        let c = &self.config.controllers[bk.controller];
        for e in Self::name_edges(c) {
            if let Some(cycle) = self.name_cycle(e) {
                return Err(Diagnostic::at(
                    bk.head_line,
                    bk.head.col,
                    bk.head.len,
                    format!(
                        "this logic closes a cycle of kinds ({cycle}) through a child named after \
                         its owner: an object `a` would lead to `a-x`, then `a-x-x`, and so on \
                         without end"
                    ),
                )
                .help("give the child a kind that no controller copies back"));
            }
        }
        Ok(())
    }

    /// Every controller without a behaviour has its `logic`.
    pub(super) fn check_logic(&self, diags: &mut Vec<Diagnostic>) {
        for (i, c) in self.config.controllers.iter().enumerate() {
            if c.behaviour == Behaviour::Program
                && c.program.as_ref().is_none_or(|p| p.body.is_empty())
            {
                let span = self.spans.controllers[i];
                diags.push(
                    span.diag(format!(
                        "controller `{}` has no behaviour and no `logic` block",
                        c.name
                    ))
                    .help("name a behaviour (children, mirror, stale-delete, wipe-on-zero, two-writes), or write its reconcile in an indented `logic` block"),
                );
            }
        }
    }
}
