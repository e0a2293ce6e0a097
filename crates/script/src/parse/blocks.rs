//! A controller's `logic` and `desired` blocks: the head line under the controller, the lines
//! indented under it gathered by the line loop, compiled by `logic.rs` when the block closes.

use listwatch_core::Behaviour;

use super::table::{row, ControllerOption, Row};
use super::Builder;
use crate::cursor::{Cursor, R};
use crate::diag::Diagnostic;
use crate::lexer::Word;
use crate::logic::{BlockLine, Compiler, Helper, MAX_HELPERS};

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
    row(
        "helper",
        "helper NAME (its statements on the lines below, indented further; `call NAME` in the logic below runs them)",
        "helper ensure-data\n  get data = Db key-data\nlogic\n  get db = Db key\n  call ensure-data",
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
    /// A `helper NAME` block: its name.
    helper: Option<Word>,
    pub(super) lines: Vec<BlockLine>,
}

impl Builder {
    /// `logic` or `desired` (the word `w`) under controller `idx`: the indented lines below are
    /// its statements.
    fn open_block(&mut self, p: &mut Cursor, w: &Word, idx: usize, indent: usize) -> R<Block> {
        let helper = match w.text.as_str() {
            "helper" => Some(self.helper_name(p, idx)?),
            _ => None,
        };
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
        if helper.is_some() {
            return Ok(Block {
                controller: idx,
                desired: false,
                indent,
                head_line: p.line,
                head: w.clone(),
                helper,
                lines: vec![],
            });
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
            helper: None,
            lines: vec![],
        })
    }

    /// The name of a `helper NAME` of controller `idx`: new among its helpers, at most
    /// `MAX_HELPERS` of them, and written before the `logic` that calls it.
    fn helper_name(&self, p: &mut Cursor, idx: usize) -> R<Word> {
        let n = p.next("the helper's name")?;
        let ok = !n.quoted
            && n.text.len() <= 63
            && n.text.starts_with(|c: char| c.is_ascii_lowercase())
            && n.text
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
        if !ok {
            return Err(p
                .err_at(n, format!("`{}` is not a helper name", n.text))
                .help("lowercase letters, digits and `-`, at most 63: `ensure-service`"));
        }
        let mine: Vec<&Helper> = (self.helpers.iter())
            .filter(|h| h.0 == idx)
            .map(|h| &h.1)
            .collect();
        if let Some(h) = mine.iter().find(|h| h.name == n.text) {
            return Err(p.err_at(
                n,
                format!(
                    "a helper `{}` is defined already, on line {}",
                    n.text, h.line
                ),
            ));
        }
        if mine.len() >= MAX_HELPERS {
            return Err(p.err_at(
                n,
                format!("more than {MAX_HELPERS} helpers in one controller"),
            ));
        }
        if self.blocks.contains(&(idx, false)) {
            return Err(p
                .err_at(
                    n,
                    "a helper is defined above the `logic` block that calls it",
                )
                .help("move this block above `logic`"));
        }
        Ok(n.clone())
    }

    pub(super) fn close_block(&mut self, bk: Block) -> R<()> {
        if let Some(name) = bk.helper {
            if bk.lines.is_empty() {
                return Err(Diagnostic::at(
                    bk.head_line,
                    name.col,
                    name.len,
                    format!("the helper `{}` is empty", name.text),
                )
                .help("indent its statements under it"));
            }
            let helper = Helper {
                name: name.text,
                line: bk.head_line,
                lines: bk.lines,
            };
            self.helpers.push((bk.controller, helper));
            return Ok(());
        }
        let helpers: Vec<Helper> = (self.helpers.iter())
            .filter(|h| h.0 == bk.controller)
            .map(|h| h.1.clone())
            .collect();
        let (stmts, bindings, memory) = Compiler::new(&self.config.kinds, bk.desired)
            .with_helpers(&helpers)
            .compile((bk.head_line, &bk.head), &bk.lines)?;
        let cluster_scoped = self.config.cluster_scoped_kinds();
        let kind_names = self.config.kinds.iter().map(|k| k.name.clone()).collect();
        let c = &mut self.config.controllers[bk.controller];
        let prog = std::sync::Arc::make_mut(c.program.get_or_insert_with(Default::default));
        prog.cluster_scoped = cluster_scoped;
        prog.kind_names = kind_names;
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
