//! The fault types the explorer injects, one file each, all behind [`FaultType`].
//!
//! Adding a fault type: a file here with its struct and its `impl FaultType`, and its name in
//! `fault_types!`, which makes the [`Fault`] variant, [`FAULT_TYPES`], [`sources`] and every
//! dispatch from that one list; every other match on `Fault` is exhaustive.

use crate::trace::{ControllerEvent, FaultEvent, StoreEvent};
use std::collections::HashSet;

use crate::config::{Config, TimedInput};
use crate::model::{ControllerId, DurationMs, KindId, NameId, TimeMs};
use crate::sim::Sim;
use crate::trace::{Actor, EventKind};

use super::candidates::Source;
use super::reading::reads;

pub mod crash;
mod disconnect;
pub mod hold;
pub mod stale;
mod unobserved;

pub use crash::CrashBetweenWrites;
pub use disconnect::Disconnect;
pub use hold::Hold;
pub use stale::{Stale, StaleGen};
pub use unobserved::Unobserved;

/// What every fault type provides: where its candidates come from (read off the fault-free
/// run), the timeline inputs that cause it, smaller versions for minimisation, and what it did
/// in a run, in words.
pub trait FaultType: Clone + Into<Fault> {
    /// Its name in reports (`FAULT_TYPES`).
    const NAME: &'static str;

    /// This type's candidates, read off the fault-free run.
    fn source(scan: &Scan) -> Source;

    fn controller(&self) -> ControllerId;
    fn start_ms(&self) -> TimeMs;
    /// When the fault is over (the link healed, the controller back, the cache caught up).
    fn end_ms(&self) -> TimeMs;
    /// The timeline inputs that cause it.
    fn inputs(&self) -> Vec<TimedInput>;
    /// In words, for reports.
    fn describe(&self, config: &Config) -> String;
    /// Smaller versions of it, smallest first (shorter windows, earlier crash points).
    fn shrinks(&self) -> Vec<Self> {
        vec![]
    }
    /// Did it do in this run what it is meant to do? A failure with an ineffective fault is
    /// discarded: the fault explains nothing.
    fn had_effect(&self, _sim: &Sim) -> bool {
        true
    }
    /// What it did in a run, read from the run's trace.
    fn effect(&self, sim: &Sim) -> String;
    /// About the memory it takes beyond its own size, for the explorer's memory figure.
    fn heap_bytes(&self) -> usize {
        0
    }
}

/// The fault types, once: the order here is the order the round-robin visits them, their
/// [`FAULT_TYPES`] and `Fault::type_index`. A type left out of this list does not compile
/// wherever a `Fault` is built from it.
macro_rules! fault_types {
    ($($t:ident),* $(,)?) => {
        /// One perturbation, as the timeline inputs that cause it.
        #[derive(Clone, Debug, PartialEq, Eq, Hash)]
        pub enum Fault {
            $($t($t)),*
        }

        $(impl From<$t> for Fault {
            fn from(f: $t) -> Fault {
                Fault::$t(f)
            }
        })*

        /// The types' positions in the list, for `Fault::type_index`.
        #[allow(dead_code)]
        enum TypeIndex {
            $($t),*
        }

        /// The fault types' names, in the order the round-robin visits them
        /// (and `Fault::type_index`).
        pub const FAULT_TYPES: [&str; [$($t::NAME),*].len()] = [$($t::NAME),*];

        /// The candidate sources, one per fault type in [`FAULT_TYPES`]'s order.
        pub(super) fn sources(sim: &Sim, only: Option<ControllerId>) -> Vec<Source> {
            let scan = Scan::new(sim, only);
            vec![$($t::source(&scan)),*]
        }

        impl Fault {
            /// Its index in [`FAULT_TYPES`].
            pub fn type_index(&self) -> usize {
                match self {
                    $(Fault::$t(_) => TypeIndex::$t as usize),*
                }
            }

            pub fn controller(&self) -> ControllerId {
                match self { $(Fault::$t(f) => f.controller()),* }
            }

            pub fn start_ms(&self) -> TimeMs {
                match self { $(Fault::$t(f) => f.start_ms()),* }
            }

            pub fn end_ms(&self) -> TimeMs {
                match self { $(Fault::$t(f) => f.end_ms()),* }
            }

            pub fn inputs(&self) -> Vec<TimedInput> {
                match self { $(Fault::$t(f) => f.inputs()),* }
            }

            pub fn describe(&self, config: &Config) -> String {
                match self { $(Fault::$t(f) => f.describe(config)),* }
            }

            pub(super) fn shrinks(&self) -> Vec<Fault> {
                match self {
                    $(Fault::$t(f) => f.shrinks().into_iter().map(Into::into).collect()),*
                }
            }

            pub fn had_effect(&self, sim: &Sim) -> bool {
                match self { $(Fault::$t(f) => f.had_effect(sim)),* }
            }

            pub fn effect(&self, sim: &Sim) -> String {
                match self { $(Fault::$t(f) => f.effect(sim)),* }
            }

            /// About the memory it takes beyond its own size (a hold's object name).
            pub(super) fn heap_bytes(&self) -> usize {
                match self { $(Fault::$t(f) => f.heap_bytes()),* }
            }
        }
    };
}

fault_types!(CrashBetweenWrites, Hold, Stale, Unobserved, Disconnect);

/// What the fault types read off the fault-free run to find their candidates, computed once.
pub struct Scan<'a> {
    pub sim: &'a Sim,
    /// Writes of the reconcile that event `i` starts, by `i`.
    pub writes_of: Vec<u32>,
    /// The controllers whose faults are searched (not Anvil's; with `--controller`, that one),
    /// with what they read.
    pub controllers: Vec<Reads>,
}

/// What one controller reads in the fault-free run.
pub struct Reads {
    pub controller: ControllerId,
    /// The kinds of its informers.
    pub kinds: Vec<KindId>,
    /// Writes by others of kinds it reads, in time order.
    pub others: Vec<(TimeMs, KindId, NameId)>,
}

impl<'a> Scan<'a> {
    /// `only`: faults against that controller alone.
    fn new(sim: &'a Sim, only: Option<ControllerId>) -> Scan<'a> {
        let controllers = (0..sim.config().controllers.len())
            .filter(|&ci| !sim.config().controllers[ci].anvil)
            .filter(|&ci| only.is_none_or(|c| c.index() == ci))
            .map(|ci| {
                let controller = ControllerId(ci as u16);
                let kinds = reads(sim, controller);
                let others = writes_by_others(sim, controller, &kinds);
                Reads {
                    controller,
                    kinds,
                    others,
                }
            })
            .collect();
        Scan {
            sim,
            writes_of: writes_per_reconcile(sim),
            controllers,
        }
    }

    /// The controller's reconciles in the fault-free run, each as the moment a fault armed for
    /// it is put in (just before it starts, or as the controller starts if it started in that
    /// very millisecond: a fault for a controller that is down does nothing) and its writes.
    pub fn reconciles(&self, controller: ControllerId) -> Vec<(TimeMs, u32)> {
        let mut up_since = TimeMs::ZERO;
        let mut out = vec![];
        for (i, e) in self.sim.trace().iter().enumerate() {
            match e.kind {
                EventKind::Fault(FaultEvent::Restart { controller: rc, .. })
                    if rc == controller =>
                {
                    up_since = e.time_ms;
                }
                EventKind::Controller(ControllerEvent::ReconcileStart {
                    controller: rc, ..
                }) if rc == controller => {
                    let at_ms = e.time_ms.saturating_sub(DurationMs(1)).max(up_since);
                    out.push((at_ms, self.writes_of[i]));
                }
                _ => {}
            }
        }
        out
    }

    /// A source of candidates listed ahead: those that start by the scenario's end, in time
    /// order, each once.
    pub fn list(&self, mut v: Vec<Fault>) -> Source {
        let end = self.sim.config().end_ms;
        v.retain(|f| f.start_ms() <= end);
        crate::order::sort_by_u64(&mut v, |f| f.start_ms().0);
        let mut seen = HashSet::new();
        v.retain(|f| seen.insert(f.clone()));
        Source::List(v, 0)
    }
}

/// Writes (of any reconcile), counted by the event of the reconcile that made them.
fn writes_per_reconcile(sim: &Sim) -> Vec<u32> {
    let mut writes_of = vec![0u32; sim.trace().len()];
    for e in sim.trace() {
        if let (
            Actor::Controller(_),
            EventKind::Store(StoreEvent::Write { .. })
            | EventKind::Store(StoreEvent::WriteFailed { .. })
            | EventKind::Store(StoreEvent::NoOpWrite { .. }),
        ) = (e.actor, e.kind)
        {
            if let Some(n) = writes_of.get_mut(e.cause as usize) {
                *n += 1;
            }
        }
    }
    writes_of
}

/// Writes by others of kinds the controller reads, in time order.
fn writes_by_others(
    sim: &Sim,
    controller: ControllerId,
    read: &[KindId],
) -> Vec<(TimeMs, KindId, NameId)> {
    sim.trace()
        .iter()
        .filter(|e| e.actor != Actor::Controller(controller))
        .filter_map(|e| match e.kind {
            EventKind::Store(StoreEvent::Write { kind, name, .. }) if read.contains(&kind) => {
                Some((e.time_ms, kind, name))
            }
            _ => None,
        })
        .collect()
}

/// Consecutive writes of one object by others, `(first, next, kind, name)` in time order: the
/// windows in which a state can go unobserved (the `hold` and `unobserved` candidates).
pub(super) fn state_windows(
    others: &[(TimeMs, KindId, NameId)],
) -> Vec<(TimeMs, TimeMs, KindId, NameId)> {
    let mut next_of: std::collections::HashMap<(KindId, NameId), TimeMs> = Default::default();
    let mut pairs = vec![];
    for &(t, kind, name) in others.iter().rev() {
        if let Some(&t2) = next_of.get(&(kind, name)) {
            if t2 > t {
                pairs.push((t, t2, kind, name));
            }
        }
        next_of.insert((kind, name), t);
    }
    pairs.reverse();
    pairs
}

/// The windows minimisation tries, shortest first.
pub(super) const WINDOWS: [DurationMs; 6] = [
    DurationMs(1_000),
    DurationMs(2_000),
    DurationMs(5_000),
    DurationMs(10_000),
    DurationMs(20_000),
    DurationMs(30_000),
];

/// The windows minimisation tries that are shorter than `was`, shortest first.
fn shorter(was: DurationMs) -> impl Iterator<Item = DurationMs> {
    WINDOWS.into_iter().filter(move |&w| w < was)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The CLI's and the summary's per-type counts name a type by `FAULT_TYPES`: two types
    /// of one name would read as one.
    #[test]
    fn fault_type_names_are_distinct_words() {
        let mut names: Vec<&str> = FAULT_TYPES.to_vec();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), FAULT_TYPES.len(), "{FAULT_TYPES:?}");
        for n in FAULT_TYPES {
            assert!(
                !n.is_empty() && n.bytes().all(|b| b.is_ascii_lowercase() || b == b'-'),
                "{n}"
            );
        }
    }
}
