//! Controllers: `controller NAME for KIND [BEHAVIOUR KIND [fixed]]`, the built-in behaviours,
//! and the options indented under the controller line (its `logic` and `desired` blocks are in
//! `blocks.rs`).

use listwatch_core::*;

use super::blocks::Block;
use super::names::{check_name, is_name_char};
use super::spans::Span;
use super::table::{
    self, row, BehaviourFn, ControllerOption, Head, Row, Statement, CONTROLLER_OPTIONS,
    CONTROLLER_OPTION_WORDS,
};
use super::Builder;
use crate::cursor::{unknown, Cursor, R};
use crate::lexer::Word;

pub(super) const STATEMENTS: &[Row<Statement>] = &[Row {
    word: "controller",
    usage: "controller NAME for KIND [BEHAVIOUR KIND [fixed]]",
    example: "controller rs for Db children Pod",
    parse: Statement {
        read: Builder::controller_statement,
        indented: Some(Builder::controller_line),
    },
}];

/// The reconcile library.
pub(super) const BEHAVIOURS: &[Row<BehaviourFn>] = &[
    row(
        "children",
        "children KIND",
        "controller rs for Db children Pod",
        Builder::children_behaviour,
    ),
    row(
        "mirror",
        "mirror KIND",
        "controller copy for Db mirror Pod",
        Builder::mirror_behaviour,
    ),
    row(
        "stale-delete",
        "stale-delete KIND [fixed]",
        "controller op2 for Db stale-delete Pod fixed",
        Builder::stale_delete_behaviour,
    ),
    row(
        "wipe-on-zero",
        "wipe-on-zero KIND",
        "controller op2 for Db wipe-on-zero Pod",
        Builder::wipe_on_zero_behaviour,
    ),
    row(
        "two-writes",
        "two-writes KIND [fixed]",
        "controller op2 for Db two-writes Pod fixed",
        Builder::two_writes_behaviour,
    ),
];

/// Options, each on a line indented under its controller.
pub(super) const OPTIONS: &[Row<ControllerOption>] = &[
    setting(
        "workers",
        "workers N",
        "workers 4",
        Builder::workers_option,
    ),
    setting(
        "watches",
        "watches KIND [self | owner | none] [in NAMESPACE] [predicate generation-changed | rv-changed]",
        "watches Pod owner",
        Builder::watches_option,
    ),
    setting(
        "requeue-after",
        "requeue-after D",
        "requeue-after 30s",
        Builder::requeue_after_option,
    ),
    setting("errors", "errors P%", "errors 50%", Builder::errors_option),
    setting("resync", "resync D", "resync 10h", Builder::resync_option),
    setting(
        "apiserver",
        "apiserver NAME",
        "apiserver b",
        Builder::apiserver_option,
    ),
    setting(
        "reconcile",
        "reconcile D",
        "reconcile 1s",
        Builder::reconcile_option,
    ),
    setting(
        "link-delay",
        "link-delay D",
        "link-delay 100ms",
        Builder::link_delay_option,
    ),
    setting(
        "queue",
        "queue priority | classic",
        "queue classic",
        Builder::queue_option,
    ),
    setting("anvil", "anvil [D]", "anvil 60s", Builder::anvil_option),
    setting("start", "start D", "start 1s", Builder::start_option),
    setting(
        "finalizer",
        "finalizer",
        "finalizer",
        Builder::finalizer_option,
    ),
    setting(
        "bookmarks",
        "bookmarks on | off",
        "bookmarks off",
        Builder::switch_option,
    ),
    setting(
        "streaming-list",
        "streaming-list on | off",
        "streaming-list on",
        Builder::switch_option,
    ),
    setting(
        "fail-first",
        "fail-first N",
        "fail-first 2",
        Builder::fail_first_option,
    ),
    setting(
        "stale-read-check",
        "stale-read-check on | off",
        "stale-read-check on",
        Builder::stale_read_check_option,
    ),
    setting(
        "on-410",
        "on-410 relist | rewatch",
        "on-410 rewatch",
        Builder::on_410_option,
    ),
];

const fn setting(
    word: &'static str,
    usage: &'static str,
    example: &'static str,
    set: fn(&mut Builder, &mut Cursor, &Word, usize) -> R<()>,
) -> Row<ControllerOption> {
    row(word, usage, example, ControllerOption::Setting(set))
}

impl Builder {
    fn controller_statement(&mut self, p: &mut Cursor, _: Head) -> R<()> {
        let r = self.declare_controller(p);
        if r.is_err() {
            // Declare it anyway so its options and later references do not cascade.
            self.placeholder_controller(p.line, p.words);
        }
        r
    }

    fn declare_controller(&mut self, p: &mut Cursor) -> R<()> {
        let name = p.next("a controller name")?;
        check_name(p, name, "controller", is_name_char)?;
        if self.config.controllers.iter().any(|c| c.name == name.text) {
            return Err(p.err_at(
                name,
                format!("controller `{}` is declared twice", name.text),
            ));
        }
        if self.config.controllers.len() >= MAX_CONTROLLERS {
            return Err(p.err_at(name, format!("more than {MAX_CONTROLLERS} controllers")));
        }
        p.expect_kw("for")?;
        let kw = p.next("a kind")?;
        let primary = self.kind(p, kw)?;
        if p.peek().is_none() {
            // Its own logic follows in an indented `logic` block.
            let c = Config::controller(&name.text, primary, Behaviour::Program);
            self.spans.controllers.push(Span::of(p, name));
            self.config.controllers.push(c);
            return Ok(());
        }
        let bw =
            p.next("a behaviour (children, mirror, stale-delete, wipe-on-zero, two-writes)")?;
        let behaviour = match table::find(table::BEHAVIOURS, &bw.text) {
            Some(r) => (r.parse)(self, p, primary, bw)?,
            None => return Err(unknown(p, bw, "behaviour", table::BEHAVIOUR_WORDS)),
        };
        self.check_behaviour(p, primary, kw, bw, behaviour)?;
        let behaviour = Self::fixed_twin(p, behaviour)?;
        p.done()?;
        let mut c = Config::controller(&name.text, primary, behaviour);
        if let Behaviour::Children { child, .. } = behaviour {
            c.watches.push(WatchConfig {
                kind: child,
                map: KeyMap::Owner,
                namespace: None,
                predicate: Predicate::All,
            });
        }
        self.spans.controllers.push(Span::of(p, name));
        self.config.controllers.push(c);
        Ok(())
    }

    fn children_behaviour(&self, p: &mut Cursor, _: KindId, _: &Word) -> R<Behaviour> {
        Ok(Behaviour::Children {
            child: self.next_kind(p)?,
            finalizer: false,
        })
    }

    fn mirror_behaviour(&self, p: &mut Cursor, primary: KindId, _: &Word) -> R<Behaviour> {
        let target = self.next_kind(p)?;
        if target == primary {
            return Err(p.err_at(
                &p.words[p.pos - 1],
                "a mirror's kind must differ from the controller's kind",
            ));
        }
        Ok(Behaviour::Mirror { target })
    }

    fn stale_delete_behaviour(&self, p: &mut Cursor, _: KindId, _: &Word) -> R<Behaviour> {
        Ok(Behaviour::StaleDelete {
            child: self.next_kind(p)?,
            fixed: false,
        })
    }

    fn wipe_on_zero_behaviour(&self, p: &mut Cursor, _: KindId, _: &Word) -> R<Behaviour> {
        Ok(Behaviour::WipeOnZero {
            child: self.next_kind(p)?,
        })
    }

    fn two_writes_behaviour(&self, p: &mut Cursor, _: KindId, _: &Word) -> R<Behaviour> {
        Ok(Behaviour::TwoWrites {
            child: self.next_kind(p)?,
            fixed: false,
        })
    }

    /// A behaviour whose data child has the primary's kind, or closes a cycle of kinds, would
    /// create objects without end.
    fn check_behaviour(
        &self,
        p: &Cursor,
        primary: KindId,
        kw: &Word,
        bw: &Word,
        behaviour: Behaviour,
    ) -> R<()> {
        if let Behaviour::StaleDelete { child, .. }
        | Behaviour::WipeOnZero { child }
        | Behaviour::TwoWrites { child, .. } = behaviour
        {
            if child == primary {
                return Err(p
                    .err_at(
                        &p.words[p.pos - 1],
                        format!(
                            "the child kind must differ from the primary kind: every reconcile \
                             of a `{k}` named `a` would create a `{k}` named `a-data`, the next \
                             `a-data-data`, and so on without end",
                            k = kw.text
                        ),
                    )
                    .help(format!(
                        "declare a kind for the data, e.g. `kind {k}Data`, and write `{} {k}Data`",
                        bw.text,
                        k = kw.text
                    )));
            }
        }
        let edge = Self::name_edges(&Config::controller("", primary, behaviour));
        if let Some(cycle) = edge.first().and_then(|&e| self.name_cycle(e)) {
            return Err(p
                .err_at(
                    &p.words[p.pos - 1],
                    format!(
                        "this controller closes a cycle of kinds ({cycle}) through a data child: \
                         an object `a` would lead to `a-data`, then `a-data-data`, and so on \
                         without end"
                    ),
                )
                .help("give the data child a kind that no controller copies back"));
        }
        Ok(())
    }

    /// `... fixed`: the twin of a buggy behaviour with the bug fixed.
    fn fixed_twin(p: &mut Cursor, behaviour: Behaviour) -> R<Behaviour> {
        Ok(if p.eat("fixed") {
            match behaviour {
                Behaviour::StaleDelete { child, .. } => {
                    Behaviour::StaleDelete { child, fixed: true }
                }
                Behaviour::TwoWrites { child, .. } => Behaviour::TwoWrites { child, fixed: true },
                _ => {
                    return Err(p.err_at(
                        &p.words[p.pos - 1],
                        "only stale-delete and two-writes have a `fixed` twin",
                    ))
                }
            }
        } else {
            behaviour
        })
    }

    /// The edge a controller adds from its primary kind to the kind it creates objects of, and
    /// whether the names it creates grow (`NAME-data`) or stay (a mirror's `NAME`). Children are
    /// left out: they are created with spec 0 and so have no children of their own.
    /// A program's edges: every kind it creates, growing for `key-SUFFIX` and `scale` (whose
    /// children may have any logic of their own), staying for `key`.
    pub(super) fn name_edges(c: &ControllerConfig) -> Vec<(KindId, KindId, bool)> {
        let primary = c.primary;
        match c.behaviour {
            Behaviour::StaleDelete { child, .. }
            | Behaviour::WipeOnZero { child }
            | Behaviour::TwoWrites { child, .. } => vec![(primary, child, true)],
            Behaviour::Mirror { target } => vec![(primary, target, false)],
            Behaviour::Children { .. } => vec![],
            Behaviour::Program => c
                .program
                .iter()
                .flat_map(|p| p.creates())
                .map(|(k, grows)| (primary, k, grows))
                .collect(),
        }
    }

    /// With this new edge, a path of controllers from a kind back to itself through at least
    /// one data child: every object would make a longer name forever. The kinds on it.
    pub(super) fn name_cycle(&self, edge: (KindId, KindId, bool)) -> Option<String> {
        let (from, to, grows) = edge;
        let edges: Vec<(KindId, KindId, bool)> = self
            .config
            .controllers
            .iter()
            .flat_map(Self::name_edges)
            .collect();
        // Search from `to` back to `from`: states are (kind, grew yet), each visited once.
        let n = self.config.kinds.len();
        let mut prev: Vec<Option<(usize, bool)>> = vec![None; n * 2];
        let start = (to.index(), grows);
        let mut queue = std::collections::VecDeque::from([start]);
        let mut seen = vec![false; n * 2];
        seen[start.0 * 2 + start.1 as usize] = true;
        while let Some((k, g)) = queue.pop_front() {
            if k == from.index() && g {
                let mut path = vec![self.config.kinds[k].name.clone()];
                let mut at = (k, g);
                while let Some(pv) = prev[at.0 * 2 + at.1 as usize] {
                    path.push(self.config.kinds[pv.0].name.clone());
                    at = pv;
                }
                path.push(self.config.kinds[from.index()].name.clone());
                path.reverse();
                return Some(path.join(" -> "));
            }
            for &(a, z, gz) in &edges {
                if a.index() == k {
                    let next = (z.index(), g || gz);
                    let i = next.0 * 2 + next.1 as usize;
                    if !seen[i] {
                        seen[i] = true;
                        prev[i] = Some((k, g));
                        queue.push_back(next);
                    }
                }
            }
        }
        None
    }

    fn placeholder_controller(&mut self, line: usize, ws: &[Word]) {
        if let Some(name) = ws.get(1) {
            if !self.config.controllers.iter().any(|c| c.name == name.text) {
                let b = Behaviour::Mirror { target: KindId(0) };
                self.spans.controllers.push(Span {
                    line,
                    col: name.col,
                    len: name.len,
                });
                self.config
                    .controllers
                    .push(Config::controller(&name.text, KindId(0), b));
            }
        }
    }

    /// A line indented under a controller line: one of its options, or the head of a block.
    fn controller_line(&mut self, p: &mut Cursor, indent: usize) -> R<Option<Block>> {
        let w = p.next("an option")?;
        let Some(idx) = self.config.controllers.len().checked_sub(1) else {
            return Err(p.err_at(w, "an indented option needs a `controller` line above it"));
        };
        match table::find(CONTROLLER_OPTIONS, &w.text).map(|r| &r.parse) {
            Some(ControllerOption::Setting(set)) => {
                set(self, p, w, idx)?;
                p.done().map(|()| None)
            }
            Some(ControllerOption::Block(open)) => open(self, p, w, idx, indent).map(Some),
            None => Err(unknown(p, w, "controller option", CONTROLLER_OPTION_WORDS)),
        }
    }

    fn workers_option(&mut self, p: &mut Cursor, w: &Word, idx: usize) -> R<()> {
        let n = p.number("a worker count", MAX_WORKERS as i64)?;
        if n < 1 {
            return Err(p.err_at(w, "a controller needs at least 1 worker"));
        }
        self.config.controllers[idx].workers = n as u32;
        Ok(())
    }

    fn requeue_after_option(&mut self, p: &mut Cursor, _: &Word, idx: usize) -> R<()> {
        self.config.controllers[idx].requeue_after_ms = p.duration("a duration")?;
        Ok(())
    }

    fn errors_option(&mut self, p: &mut Cursor, _: &Word, idx: usize) -> R<()> {
        let pct = p.percentage("the error rate")?;
        self.config.controllers[idx].error_ppm = (pct * 10_000.0) as u32;
        Ok(())
    }

    fn resync_option(&mut self, p: &mut Cursor, _: &Word, idx: usize) -> R<()> {
        self.config.controllers[idx].resync_ms = p.duration("a period")?;
        Ok(())
    }

    fn apiserver_option(&mut self, p: &mut Cursor, _: &Word, idx: usize) -> R<()> {
        self.config.controllers[idx].apiserver = self.next_apiserver(p)?;
        Ok(())
    }

    fn reconcile_option(&mut self, p: &mut Cursor, _: &Word, idx: usize) -> R<()> {
        self.config.controllers[idx].reconcile_ms = p.duration("a duration")?;
        Ok(())
    }

    fn link_delay_option(&mut self, p: &mut Cursor, _: &Word, idx: usize) -> R<()> {
        self.config.controllers[idx].link_delay_ms = p.duration("a delay")?;
        Ok(())
    }

    fn stale_read_check_option(&mut self, p: &mut Cursor, _: &Word, idx: usize) -> R<()> {
        let on = self.switch(p, "stale-read-check", Some(idx))?;
        self.config.controllers[idx].stale_read_check = on;
        self.explicit_options.insert((idx, "stale-read-check"));
        Ok(())
    }

    fn on_410_option(&mut self, p: &mut Cursor, _: &Word, idx: usize) -> R<()> {
        let v = p.next("`relist` or `rewatch`")?;
        self.config.controllers[idx].rewatch_on_gone = match v.text.as_str() {
            "relist" => false,
            "rewatch" => true,
            _ => return Err(unknown(p, v, "setting", &["relist", "rewatch"])),
        };
        Ok(())
    }

    fn queue_option(&mut self, p: &mut Cursor, _: &Word, idx: usize) -> R<()> {
        self.explicit_options.insert((idx, "queue"));
        let q = p.next("`classic` or `priority`")?;
        self.config.controllers[idx].queue = match q.text.as_str() {
            "classic" => QueueKind::Classic,
            "priority" => QueueKind::Priority,
            _ => return Err(unknown(p, q, "queue", &["classic", "priority"])),
        };
        Ok(())
    }

    fn start_option(&mut self, p: &mut Cursor, _: &Word, idx: usize) -> R<()> {
        self.config.controllers[idx].start_ms = p.moment("a time")?;
        Ok(())
    }

    fn fail_first_option(&mut self, p: &mut Cursor, _: &Word, idx: usize) -> R<()> {
        let n = p.number("how many reconciles of each key fail", 1000)?;
        if n < 0 {
            return Err(p.err_at(&p.words[p.pos - 1], "a count from 0 up"));
        }
        self.config.controllers[idx].fail_first = n as u32;
        Ok(())
    }

    fn finalizer_option(&mut self, p: &mut Cursor, w: &Word, idx: usize) -> R<()> {
        let c = &mut self.config.controllers[idx];
        match &mut c.behaviour {
            Behaviour::Children { finalizer, .. } => *finalizer = true,
            _ => return Err(p.err_at(w, "only `children` controllers take a `finalizer` option")),
        }
        Ok(())
    }

    /// `bookmarks|streaming-list on|off` for controller `idx` alone.
    fn switch_option(&mut self, p: &mut Cursor, w: &Word, idx: usize) -> R<()> {
        if w.text == "bookmarks" {
            self.config.controllers[idx].bookmarks =
                Some(self.switch(p, "bookmarks", Some(idx))?);
        } else {
            let on = self.switch(p, "streaming-list", Some(idx))?;
            self.config.controllers[idx].streaming_list = Some(on);
        }
        Ok(())
    }

    /// `anvil [PERIOD]`: reconcile from etcd, every period.
    fn anvil_option(&mut self, p: &mut Cursor, _: &Word, idx: usize) -> R<()> {
        let c = &mut self.config.controllers[idx];
        c.anvil = true;
        if p.peek().is_some() {
            let d = p.duration("a period")?;
            if d.is_zero() {
                return Err(p.err_at(&p.words[p.pos - 1], "the period must be positive"));
            }
            self.config.controllers[idx].anvil_period_ms = d;
        }
        Ok(())
    }

    /// `watches KIND [owner|self|none] [in NAMESPACE] [predicate P]` of controller `idx`.
    fn watches_option(&mut self, p: &mut Cursor, _: &Word, idx: usize) -> R<()> {
        let kind = self.next_kind(p)?;
        let mut map = KeyMap::Itself;
        let mut namespace = None;
        let mut predicate = Predicate::All;
        while let Some(x) = p.peek() {
            p.pos += 1;
            match x.text.as_str() {
                "owner" => map = KeyMap::Owner,
                "self" => map = KeyMap::Itself,
                "none" => map = KeyMap::ReadOnly,
                "in" => namespace = Some(p.next("a namespace")?.text.clone()),
                "predicate" => {
                    let v = p.next("`generation-changed` or `rv-changed`")?;
                    predicate = match v.text.as_str() {
                        "generation-changed" => Predicate::GenerationChanged,
                        "rv-changed" => Predicate::ResourceVersionChanged,
                        _ => {
                            return Err(unknown(
                                p,
                                v,
                                "predicate",
                                &["generation-changed", "rv-changed"],
                            ))
                        }
                    };
                }
                _ => {
                    return Err(unknown(
                        p,
                        x,
                        "watch option",
                        &["owner", "self", "none", "in", "predicate"],
                    ))
                }
            }
        }
        let c = &mut self.config.controllers[idx];
        c.watches.retain(|wc| wc.kind != kind);
        c.watches.push(WatchConfig {
            kind,
            map,
            namespace,
            predicate,
        });
        Ok(())
    }
}
