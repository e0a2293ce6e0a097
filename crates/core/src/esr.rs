//! ESR (eventually stable reconciliation, Sieve's and Acto's oracle): per (controller, key),
//! does the controller's desired state hold in etcd, and since when. The state, its tracking
//! after every committed write, the outcome at the end of a run and its words live here; the
//! engine calls `Esr::track` from its commit, the explorer hashes `Esr::hash_holds` into its
//! dedup key, `analysis`, `verdict` and the displays read `Esr::outcome` and `verdict`.
//!
//! What "desired" means is the controller's (`reconcile::desired_holds`: a built-in behaviour's
//! rule, or the user's `desired` block).

use std::collections::BTreeMap;

use crate::config::Config;
use crate::model::{ControllerId, KindId, NameId, Names, Object, TimeMs};
use crate::sim::{Etcd, EtcdReader, Sim, Stop};

/// Per (controller, key): does the desired state hold, and since when.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct EsrState {
    pub holds: bool,
    pub since_ms: TimeMs,
}

/// Every (controller, key) a write has touched so far, in key order.
#[derive(Clone, Debug, Default)]
pub struct Esr {
    states: BTreeMap<(ControllerId, NameId), EsrState>,
    /// Per controller: the kinds its own logic and `desired` block read besides its primary
    /// (empty for a built-in behaviour, whose children name their parent), computed once.
    reads: Option<Vec<Vec<KindId>>>,
}

/// Does every controller's desired state hold at the end of the run?
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EsrOutcome {
    /// The run stopped at its cap on events at this moment: its end is unknown.
    NotJudged { at_ms: TimeMs },
    /// This key's desired state does not hold, wrong since then (the first such key).
    Violated {
        controller: ControllerId,
        key: NameId,
        since_ms: TimeMs,
    },
    /// Every key's desired state holds, all of them since then.
    Holds { since_ms: TimeMs },
}

impl Esr {
    /// Each tracked key's state, in key order.
    pub fn iter(&self) -> impl Iterator<Item = (&(ControllerId, NameId), &EsrState)> {
        self.states.iter()
    }

    pub fn get(&self, controller: ControllerId, key: NameId) -> Option<&EsrState> {
        self.states.get(&(controller, key))
    }

    /// After a committed write: which primary key of which controller did it touch, and does
    /// that key's desired state hold now? `present`: the write left `o` in etcd (not a delete).
    /// A write of a kind a controller's own logic reads re-judges every key of it: the object
    /// need not name its primary (an external bucket kept behind a finalizer has no owner).
    pub(crate) fn track(
        &mut self,
        (config, etcd, names): (&Config, &Etcd, &Names),
        now: TimeMs,
        o: &Object,
        present: bool,
    ) {
        let reads = self.reads.take().unwrap_or_else(|| kinds_read(config));
        let mut others: Vec<(ControllerId, NameId)> = vec![];
        for (i, cfg) in config.controllers.iter().enumerate() {
            if reads[i].contains(&o.kind) {
                let c = ControllerId(i as u16);
                let keys = self.states.range((c, NameId(0))..=(c, NameId(u32::MAX)));
                others.extend(keys.map(|(k, _)| *k));
            }
            let key = if o.kind == cfg.primary {
                Some(o.name)
            } else {
                match o.owner {
                    Some(owner) if owner.kind == cfg.primary => Some(owner.name),
                    _ => None,
                }
            };
            let Some(key) = key else { continue };
            // Only objects the controller watches are its business (its namespaces).
            let mut primary_watches = cfg.watches.iter().filter(|w| w.kind == cfg.primary);
            let watched = primary_watches.clone().any(|w| w.namespace.is_none()) || {
                let ns = names.resolve(o.namespace);
                primary_watches.any(|w| w.namespace.as_deref() == Some(ns))
            };
            if !watched && !cfg.anvil {
                continue;
            }
            let c = ControllerId(i as u16);
            // The written object is the parent itself when it is of the primary kind.
            let parent = if o.kind == cfg.primary {
                present.then(|| o.clone())
            } else {
                etcd.get(cfg.primary, key).cloned()
            };
            others.retain(|&k| k != (c, key));
            let holds = judge(cfg, c, parent.as_ref(), (etcd, names));
            self.set((c, key), holds, now);
        }
        for (c, key) in others {
            let cfg = &config.controllers[c.index()];
            let parent = etcd.get(cfg.primary, key);
            let holds = judge(cfg, c, parent, (etcd, names));
            self.set((c, key), holds, now);
        }
        self.reads = Some(reads);
    }

    /// A key's state is now `holds` (since now, if that is news).
    fn set(&mut self, key: (ControllerId, NameId), holds: bool, now: TimeMs) {
        let entry = self.states.entry(key).or_insert(EsrState {
            holds: !holds,
            since_ms: now,
        });
        if entry.holds != holds {
            entry.holds = holds;
            entry.since_ms = now;
        }
    }

    /// The explorer's share of the state: whether each desired state holds, not since when
    /// (two runs that reach the same state at different moments are the same state).
    pub(crate) fn hash_holds<H: std::hash::Hasher>(&self, h: &mut H) {
        use std::hash::Hash;
        for (key, st) in &self.states {
            (key, st.holds).hash(h);
        }
    }

    /// The outcome of a run that stopped as `stopped` at `now`, for one controller or (`None`)
    /// for all of them.
    pub fn outcome(
        &self,
        stopped: Option<Stop>,
        now: TimeMs,
        controller: Option<ControllerId>,
    ) -> EsrOutcome {
        if stopped.is_some_and(Stop::cut_off) {
            return EsrOutcome::NotJudged { at_ms: now };
        }
        let mut since_ms = TimeMs::ZERO;
        for (&(c, key), st) in &self.states {
            if controller.is_some_and(|want| want != c) {
                continue;
            }
            if !st.holds {
                return EsrOutcome::Violated {
                    controller: c,
                    key,
                    since_ms: st.since_ms,
                };
            }
            since_ms = since_ms.max(st.since_ms);
        }
        EsrOutcome::Holds { since_ms }
    }

    #[cfg(test)]
    pub(crate) fn state_mut(&mut self, key: (ControllerId, NameId)) -> Option<&mut EsrState> {
        self.states.get_mut(&key)
    }
}

/// Does the desired state of `parent` (`None`: gone, so nothing is asked) hold in etcd?
fn judge(
    cfg: &crate::config::ControllerConfig,
    c: ControllerId,
    parent: Option<&Object>,
    (etcd, names): (&Etcd, &Names),
) -> bool {
    parent
        .is_none_or(|p| crate::reconcile::desired_holds(cfg, 1 << c.0, p, names, &EtcdReader(etcd)))
}

/// Per controller, the kinds besides its primary that its own logic or `desired` block reads.
fn kinds_read(config: &Config) -> Vec<Vec<KindId>> {
    (config.controllers.iter())
        .map(|cfg| match &cfg.program {
            Some(p) if cfg.behaviour == crate::config::Behaviour::Program => {
                let mut kinds = p.kinds();
                kinds.retain(|&k| k != cfg.primary);
                kinds.sort();
                kinds.dedup();
                kinds
            }
            _ => vec![],
        })
        .collect()
}

/// The ESR outcome of a run, for one controller or (`None`) for all of them.
pub fn esr_outcome(sim: &Sim, controller: Option<ControllerId>) -> EsrOutcome {
    sim.esr().outcome(sim.stopped(), sim.now_ms(), controller)
}

/// An ESR outcome as an expectation's outcome: passed or not, and in words. The displays show
/// the run's `Analysis::esr` with it.
pub fn esr_verdict(sim: &Sim, outcome: EsrOutcome) -> crate::verdict::Outcome {
    use crate::verdict::Outcome;
    match outcome {
        EsrOutcome::NotJudged { at_ms } => Outcome {
            pass: false,
            found: format!(
                "not judged: the run stopped at {} at {at_ms}, so its end is unknown",
                match sim.stopped() {
                    Some(Stop::Limit { .. }) => "a limit of the reconcile language",
                    _ => "its cap on events",
                }
            ),
            decided_by: None,
            decided_ms: at_ms,
        },
        EsrOutcome::Violated { key, since_ms, .. } => Outcome {
            pass: false,
            found: format!(
                "{} has not reached its desired state (wrong since {since_ms})",
                sim.names().resolve(key),
            ),
            decided_by: None,
            decided_ms: since_ms,
        },
        EsrOutcome::Holds { since_ms } => Outcome {
            pass: true,
            found: format!("stable since {since_ms}"),
            decided_by: None,
            decided_ms: since_ms,
        },
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::config::{Behaviour, Input, TimedInput};
    use crate::model::KindId;

    /// Parents of kind 0 whose controller keeps `spec` children of kind 1; `a` created at 0
    /// with 2 children wanted.
    pub(crate) fn parents() -> Config {
        let mut config = Config::new(&["Parent", "Child"]);
        let behaviour = Behaviour::Children {
            child: KindId(1),
            finalizer: false,
        };
        config
            .controllers
            .push(Config::controller("c", KindId(0), behaviour));
        let input = Input::Create {
            kind: KindId(0),
            name: "a".into(),
            spec: 2,
        };
        config.timeline.push(TimedInput {
            at_ms: TimeMs(0),
            input,
        });
        config.end_ms = TimeMs(5_000);
        config
    }

    /// A key is tracked from the first write that touches it: the parent's create (children
    /// missing: wrong), then each child's create, the second making it right; its children are
    /// tracked under the parent's key (their owner).
    #[test]
    fn a_key_is_wrong_until_the_write_that_makes_its_desired_state_hold() {
        let sim = crate::verdict::run(parents()).unwrap();
        let a = sim.names().get("default/a").expect("interned");
        let keys: Vec<_> = sim.esr().iter().map(|(k, _)| *k).collect();
        assert_eq!(
            keys,
            [(ControllerId(0), a)],
            "children count for their owner"
        );
        let st = sim.esr().get(ControllerId(0), a).unwrap();
        let last_create = sim.trace().iter().rev().find(|e| {
            matches!(e.kind, crate::trace::EventKind::Write { op: crate::trace::WriteOp::Create, kind, .. } if kind == KindId(1))
        });
        assert!(st.holds);
        assert_eq!(Some(st.since_ms), last_create.map(|e| e.time_ms));
        assert_eq!(
            esr_outcome(&sim, None),
            EsrOutcome::Holds {
                since_ms: st.since_ms
            }
        );
    }

    /// A run cut off at its cap is not judged; a key that does not hold is the outcome, for its
    /// controller and for all, not for another controller.
    #[test]
    fn an_outcome_names_the_first_wrong_key_and_a_cut_off_run_is_not_judged() {
        let mut esr = Esr::default();
        let (c0, c1) = (ControllerId(0), ControllerId(1));
        let since = |ms| EsrState {
            holds: true,
            since_ms: TimeMs(ms),
        };
        esr.states.insert((c0, NameId(1)), since(10));
        esr.states.insert(
            (c1, NameId(2)),
            EsrState {
                holds: false,
                since_ms: TimeMs(20),
            },
        );
        let end = TimeMs(99);
        let wrong = EsrOutcome::Violated {
            controller: c1,
            key: NameId(2),
            since_ms: TimeMs(20),
        };
        assert_eq!(esr.outcome(Some(Stop::End), end, None), wrong);
        assert_eq!(esr.outcome(None, end, Some(c1)), wrong);
        let only_c0 = esr.outcome(Some(Stop::End), end, Some(c0));
        assert_eq!(
            only_c0,
            EsrOutcome::Holds {
                since_ms: TimeMs(10)
            }
        );
        let capped = esr.outcome(Some(Stop::EventCap), end, None);
        assert_eq!(capped, EsrOutcome::NotJudged { at_ms: end });
    }
}
