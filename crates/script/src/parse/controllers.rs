//! Controllers: `controller NAME for KIND [BEHAVIOUR KIND [fixed]]` and the built-in behaviours;
//! the lines indented under the controller line are its options (`options.rs`) and its `logic`
//! and `desired` blocks (`blocks.rs`).

use listwatch_core::*;

use super::spans::Span;
use super::table::{self, row, BehaviourFn, Head, Row, Statement};
use super::Builder;
use crate::cursor::{unknown, Cursor, R};
use crate::lexer::Word;
use crate::name_rules::{check_name, is_name_char};

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
                selector: None,
                fields: None,
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
}
