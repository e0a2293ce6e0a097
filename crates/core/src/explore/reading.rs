//! What the fault types read off a run's trace to say what a fault did.

use crate::model::{ControllerId, KindId, Rv, TimeMs, WatcherId};
use crate::sim::Sim;
use crate::trace::{EventKind, ListRv};
use crate::trace::{ReflectorEvent, StoreEvent};

pub(super) fn cname(sim: &Sim, c: ControllerId) -> &str {
    &sim.config().controllers[c.index()].name
}

pub(super) fn kname(sim: &Sim, k: KindId) -> &str {
    &sim.config().kinds[k.index()].name
}

/// Is watcher `w` one of controller `c`'s?
pub(super) fn mine(sim: &Sim, w: WatcherId, c: ControllerId) -> bool {
    sim.reflectors()
        .get(w.index())
        .is_some_and(|r| r.controller() == c)
}

/// etcd's revision at event `i`.
pub(super) fn rev_at(sim: &Sim, i: usize) -> Rv {
    sim.trace()
        .range(..i)
        .filter_map(|e| match e.kind {
            EventKind::Store(StoreEvent::Write { rv, .. }) => Some(rv),
            EventKind::Store(StoreEvent::Compacted { rev }) => Some(rev),
            _ => None,
        })
        .max()
        .unwrap_or(0)
}

/// Writes from `from_ms` until (not including) `until_ms`.
pub(super) fn writes_between(sim: &Sim, from_ms: TimeMs, until_ms: TimeMs) -> usize {
    sim.trace()
        .iter()
        .filter(|e| e.time_ms >= from_ms && e.time_ms < until_ms)
        .filter(|e| matches!(e.kind, EventKind::Store(StoreEvent::Write { .. })))
        .count()
}

/// The controller's first list (or watch-list) request from `at_ms` on: its event, watcher and RV.
pub(super) fn first_list(
    sim: &Sim,
    controller: ControllerId,
    at_ms: TimeMs,
) -> Option<(usize, WatcherId, ListRv)> {
    sim.trace()
        .iter()
        .enumerate()
        .find_map(|(i, e)| match e.kind {
            EventKind::Reflector(ReflectorEvent::ListRequest { watcher, rv, .. })
            | EventKind::Reflector(ReflectorEvent::WatchListRequest { watcher, rv, .. })
                if e.time_ms >= at_ms && mine(sim, watcher, controller) =>
            {
                Some((i, watcher, rv))
            }
            _ => None,
        })
}

/// The kinds a controller reads (its informers).
pub(super) fn reads(sim: &Sim, controller: ControllerId) -> Vec<KindId> {
    sim.reflectors()
        .iter()
        .filter(|r| r.controller() == controller)
        .map(|r| r.kind())
        .collect()
}
