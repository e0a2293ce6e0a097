//! ESR (eventually stable reconciliation, Sieve's and Acto's oracle): per (controller, key),
//! does the controller's desired state hold in etcd, and since when. The state, its tracking
//! after every committed write, the outcome at the end of a run and its words live here; the
//! engine calls `Esr::track` from its commit, the explorer hashes `Esr::hash_holds` into its
//! dedup key, `analysis`, `verdict` and the displays read `Esr::outcome` and `verdict`.
//!
//! What "desired" means is the controller's (`reconcile::desired_holds`: a built-in behaviour's
//! rule, or the user's `desired` block).

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};

use crate::config::{Behaviour, Config, ControllerConfig};
use crate::model::{ControllerId, KindId, NameId, Names, Object, TimeMs};
use crate::program::{Frozen, Namer};
use crate::reconcile::Reader;
use crate::sim::{Etcd, EtcdReader, Sim, Stop};
use crate::store::{KindNameMap, NameMap};

type Key = (ControllerId, NameId);

/// Per (controller, key): does the desired state hold, and since when.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct EsrState {
    pub holds: bool,
    pub since_ms: TimeMs,
}

/// Every (controller, key) a write has touched so far, in key order.
#[derive(Clone, Debug, Default)]
pub struct Esr {
    /// Per controller (by index), per key: set after every write, so an index, not a tree.
    states: Vec<NameMap<EsrState>>,
    /// Per controller: the kinds its own logic and `desired` block read besides its primary
    /// (empty for a built-in behaviour, whose children name their parent), computed once.
    reads: Option<Vec<Vec<KindId>>>,
    /// What each key's last judgment of a controller's own logic read, so that a write of an
    /// object re-judges only the keys that read it (every key of the controller was quadratic).
    deps: Deps,
}

/// What one judgment read: the objects it got (present or not), the owners whose children it
/// listed or counted, and the names it looked for that no object ever had (not interned yet,
/// so an object created under one later is found by its name).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Footprint {
    gets: Vec<(KindId, NameId)>,
    owned: Vec<(KindId, u64)>,
    unnamed: Vec<Box<str>>,
    /// Kinds it listed by label selector: every object of the kind (its labels may start or
    /// stop matching with any write).
    selected: Vec<KindId>,
}

/// The footprints of every judged key, and their inverse indexes.
#[derive(Clone, Debug, Default)]
struct Deps {
    /// Per controller, by key. Name- and kind-indexed where the key allows: each `BTreeMap` type
    /// costs the page's wasm about a kilobyte gzipped.
    of: Vec<NameMap<Footprint>>,
    by_get: KindNameMap<BTreeSet<Key>>,
    by_owner: BTreeMap<(KindId, u64), BTreeSet<Key>>,
    by_name: BTreeMap<Box<str>, BTreeSet<Key>>,
    /// By kind index.
    by_kind: Vec<BTreeSet<Key>>,
}

impl Deps {
    /// `key`'s judgment now read `fp`: its old entries go, the new ones come.
    fn replace(&mut self, key: Key, fp: Footprint) {
        fn unlink<K: Ord>(index: &mut BTreeMap<K, BTreeSet<Key>>, at: K, key: Key) {
            if let Some(keys) = index.get_mut(&at) {
                keys.remove(&key);
                if keys.is_empty() {
                    index.remove(&at);
                }
            }
        }
        let c = key.0.index();
        if c >= self.of.len() {
            self.of.resize_with(c + 1, NameMap::default);
        }
        let of = &mut self.of[c];
        if of.get(&key.1) == Some(&fp) {
            return;
        }
        if let Some(old) = of.remove(&key.1) {
            for g in old.gets {
                if let Some(keys) = self.by_get.get_mut(&g) {
                    keys.remove(&key);
                    if keys.is_empty() {
                        self.by_get.remove(&g);
                    }
                }
            }
            old.owned
                .into_iter()
                .for_each(|o| unlink(&mut self.by_owner, o, key));
            old.unnamed
                .into_iter()
                .for_each(|n| unlink(&mut self.by_name, n, key));
            for k in old.selected {
                if let Some(keys) = self.by_kind.get_mut(k.index()) {
                    keys.remove(&key);
                }
            }
        }
        for &g in &fp.gets {
            self.by_get.get_or_insert_with(g, BTreeSet::new).insert(key);
        }
        for &o in &fp.owned {
            self.by_owner.entry(o).or_default().insert(key);
        }
        for n in &fp.unnamed {
            self.by_name.entry(n.clone()).or_default().insert(key);
        }
        for &k in &fp.selected {
            if k.index() >= self.by_kind.len() {
                self.by_kind.resize_with(k.index() + 1, BTreeSet::new);
            }
            self.by_kind[k.index()].insert(key);
        }
        of.insert(key.1, fp);
    }

    /// The keys whose last judgment read `o` (by its name, or by listing its owner's children).
    fn readers_of(&self, o: &Object, names: &Names, out: &mut BTreeSet<Key>) {
        let mut add = |keys: Option<&BTreeSet<Key>>| out.extend(keys.into_iter().flatten());
        add(self.by_get.get(&(o.kind, o.name)));
        if let Some(owner) = o.owner {
            add(self.by_owner.get(&(o.kind, owner.uid)));
        }
        add(self.by_name.get(names.resolve(o.name)));
        add(self.by_kind.get(o.kind.index()));
    }
}

/// Etcd as a judgment reads it, noting each read in the footprint.
struct Recording<'a> {
    etcd: EtcdReader<'a>,
    fp: &'a RefCell<Footprint>,
}

impl Reader for Recording<'_> {
    fn get(&self, kind: KindId, name: NameId) -> Option<Object> {
        self.fp.borrow_mut().gets.push((kind, name));
        self.etcd.get(kind, name)
    }
    fn owned_by(&self, kind: KindId, uid: u64) -> Vec<Object> {
        self.fp.borrow_mut().owned.push((kind, uid));
        self.etcd.owned_by(kind, uid)
    }
    fn live_owned(&self, kind: KindId, uid: u64) -> usize {
        self.fp.borrow_mut().owned.push((kind, uid));
        self.etcd.live_owned(kind, uid)
    }
    fn count_owned(&self, kind: KindId, uid: u64) -> usize {
        self.fp.borrow_mut().owned.push((kind, uid));
        self.etcd.count_owned(kind, uid)
    }
    fn select(&self, kind: KindId, keep: &dyn Fn(&Object) -> bool) -> Vec<Object> {
        self.fp.borrow_mut().selected.push(kind);
        self.etcd.select(kind, keep)
    }
}

/// The names as a judgment looks them up, noting the ones no object ever had.
struct RecordingNames<'a> {
    names: Frozen<'a>,
    fp: &'a RefCell<Footprint>,
}

impl Namer for RecordingNames<'_> {
    fn name(&mut self, s: &str) -> Option<NameId> {
        let id = self.names.name(s);
        if id.is_none() {
            self.fp.borrow_mut().unnamed.push(s.into());
        }
        id
    }
    /// A string a value compares with or a field's key: found on an object only through a read
    /// the footprint already holds (its get, or its kind for a selector).
    fn find(&self, s: &str) -> Option<NameId> {
        self.names.find(s)
    }
    fn resolve(&self, id: NameId) -> &str {
        self.names.resolve(id)
    }
}

/// Does every controller's desired state hold at the end of the run?
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EsrOutcome {
    /// The run stopped at a cap (on events, on reads) or a limit at this moment: its end is
    /// unknown.
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
    pub fn iter(&self) -> impl Iterator<Item = ((ControllerId, NameId), &EsrState)> {
        (self.states.iter().enumerate()).flat_map(|(c, keys)| {
            let c = ControllerId(c as u16);
            keys.iter().map(move |(&key, st)| ((c, key), st))
        })
    }

    pub fn get(&self, controller: ControllerId, key: NameId) -> Option<&EsrState> {
        self.states.get(controller.index())?.get(&key)
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
        let mut others = BTreeSet::new();
        self.deps.readers_of(o, names, &mut others);
        // Only controllers whose own logic reads this kind (a name looked for fits any kind).
        others.retain(|(c, _)| reads[c.index()].contains(&o.kind));
        for (i, cfg) in config.controllers.iter().enumerate() {
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
                present.then_some(o)
            } else {
                etcd.get(cfg.primary, key)
            };
            others.remove(&(c, key));
            let holds = self.judge(cfg, (c, key), parent, (etcd, names));
            self.set((c, key), holds, now);
        }
        for (c, key) in others {
            let cfg = &config.controllers[c.index()];
            let parent = etcd.get(cfg.primary, key);
            let holds = self.judge(cfg, (c, key), parent, (etcd, names));
            self.set((c, key), holds, now);
        }
        self.reads = Some(reads);
    }

    /// Does the desired state of `parent` (`None`: gone, so nothing is asked) hold in etcd? A
    /// controller's own logic notes what it read, for `track` to know when to ask again.
    fn judge(
        &mut self,
        cfg: &ControllerConfig,
        key: Key,
        parent: Option<&Object>,
        (etcd, names): (&Etcd, &Names),
    ) -> bool {
        let bit = 1 << key.0 .0;
        let Some(parent) = parent else {
            self.deps.replace(key, Footprint::default());
            return true;
        };
        match &cfg.program {
            Some(program) if cfg.behaviour == Behaviour::Program => {
                let fp = RefCell::new(Footprint::default());
                let holds = parent.deletion_ms.is_some() || {
                    let read = Recording {
                        etcd: EtcdReader(etcd),
                        fp: &fp,
                    };
                    let mut names = RecordingNames {
                        names: Frozen(names),
                        fp: &fp,
                    };
                    crate::program::desired_holds_named(
                        program,
                        parent.name,
                        bit,
                        &read,
                        &mut names,
                    )
                };
                self.deps.replace(key, fp.into_inner());
                holds
            }
            _ => crate::reconcile::desired_holds(cfg, bit, parent, names, &EtcdReader(etcd)),
        }
    }

    /// A key's state is now `holds` (since now, if that is news).
    fn set(&mut self, (c, key): (ControllerId, NameId), holds: bool, now: TimeMs) {
        if c.index() >= self.states.len() {
            self.states.resize_with(c.index() + 1, NameMap::default);
        }
        let entry = self.states[c.index()].get_or_insert_with(key, || EsrState {
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
        for (key, st) in self.iter() {
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
        for ((c, key), st) in self.iter() {
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
    pub(crate) fn state_mut(&mut self, (c, key): (ControllerId, NameId)) -> Option<&mut EsrState> {
        self.states.get_mut(c.index())?.get_mut(&key)
    }
}

/// The tracked keys whose state a judgment of etcd as it is now would not give: ESR re-judges a
/// key only after a write its last judgment read, so a read it did not note leaves the key's
/// state stale. Tests ask this at the end of runs; it judges every key, so it is not for a run.
pub fn stale_keys(sim: &Sim) -> Vec<(ControllerId, NameId)> {
    let (config, etcd, names) = (sim.config(), sim.etcd(), sim.names());
    let mut fresh = Esr::default();
    (sim.esr().iter())
        .filter(|&((c, key), st)| {
            let cfg = &config.controllers[c.index()];
            fresh.judge(cfg, (c, key), etcd.get(cfg.primary, key), (etcd, names)) != st.holds
        })
        .map(|(k, _)| k)
        .collect()
}

/// Per controller, the kinds besides its primary that its own logic or `desired` block reads.
fn kinds_read(config: &Config) -> Vec<Vec<KindId>> {
    (config.controllers.iter())
        .map(|cfg| match &cfg.program {
            Some(p) if cfg.behaviour == crate::config::Behaviour::Program => {
                let mut kinds = p.kinds();
                kinds.retain(|&k| k != cfg.primary);
                crate::order::sort_by_u64(&mut kinds, |k| k.0 as u64);
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
                    Some(Stop::ReadCap) => "its cap on reads",
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
    use crate::config::{Behaviour, Input, TimedInput, WriteInput};
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
        let input = Input::Write(WriteInput::Create {
            kind: KindId(0),
            name: "a".into(),
            spec: 2,
        });
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
        let keys: Vec<_> = sim.esr().iter().map(|(k, _)| k).collect();
        assert_eq!(
            keys,
            [(ControllerId(0), a)],
            "children count for their owner"
        );
        let st = sim.esr().get(ControllerId(0), a).unwrap();
        let last_create = sim.trace().iter().rev().find(|e| {
            matches!(e.kind, crate::trace::EventKind::Store(crate::trace::StoreEvent::Write { op: crate::trace::WriteOp::Create, kind, .. }) if kind == KindId(1))
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
        esr.set((c0, NameId(1)), true, TimeMs(10));
        esr.set((c1, NameId(2)), false, TimeMs(20));
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
