//! Invariants every trace must keep, checked in tests after every run.

use std::collections::{BTreeMap, BTreeSet};

use crate::model::{ControllerId, NameId, Rv, WatcherId};
use crate::sim::Sim;
use crate::trace::*;
use crate::view::View;

/// Returns the first broken invariant, naming the event.
pub fn check(sim: &Sim) -> Result<(), String> {
    sim.etcd().check_indexes()?;
    // Per watcher: the RV the current watch started at and the last it delivered.
    let mut watch: BTreeMap<WatcherId, (Rv, Rv)> = BTreeMap::new();
    let mut processing: BTreeSet<(ControllerId, NameId)> = BTreeSet::new();
    let mut view = View::initial(sim);
    for (i, e) in sim.trace.iter().enumerate() {
        let fail = |what: String| Err(format!("event #{i} at {} ms: {what}", e.time_ms));
        match e.kind {
            EventKind::WatchOpened {
                watcher, from_rv, ..
            }
            | EventKind::InitialEventsEnd {
                watcher,
                rv: from_rv,
                ..
            } => {
                watch.insert(watcher, (from_rv, from_rv));
            }
            EventKind::WatchEvent { watcher, rv, .. } => match watch.get_mut(&watcher) {
                None => {
                    return fail(format!(
                        "watcher {} got an event with no open watch",
                        watcher.0
                    ))
                }
                Some((start, last)) => {
                    if rv <= *start {
                        return fail(format!(
                            "event rv {rv} at or below the watch's start rv {start}"
                        ));
                    }
                    if rv <= *last {
                        return fail(format!("rv went from {last} to {rv} along one watch"));
                    }
                    *last = rv;
                }
            },
            EventKind::Bookmark { watcher, rv } => {
                if let Some((_, last)) = watch.get_mut(&watcher) {
                    if rv < *last {
                        return fail(format!("bookmark rv {rv} below delivered rv {last}"));
                    }
                    *last = rv;
                }
            }
            EventKind::WatchEnded { watcher, .. }
            | EventKind::WatchFailed { watcher, .. }
            | EventKind::ListRequest { watcher, .. }
            | EventKind::WatchListRequest { watcher, .. } => {
                watch.remove(&watcher);
            }
            EventKind::State {
                watcher,
                state: WatcherState::Stopped,
                ..
            } => {
                watch.remove(&watcher);
            }
            EventKind::ReconcileStart {
                controller, key, ..
            } if !processing.insert((controller, key)) => {
                return fail(format!(
                    "key {} reconciled by two workers at once",
                    sim.names().resolve(key)
                ));
            }
            EventKind::ReconcileEnd {
                controller, key, ..
            } => {
                processing.remove(&(controller, key));
            }
            _ => {}
        }
        view.apply(i as EventId, e);
        if let EventKind::CacheAdd {
            apiserver, kind, ..
        } = e.kind
        {
            let c = &view.caches[apiserver.index()][kind.index()];
            if c.ring.len() as u32 > c.capacity {
                return fail(format!(
                    "cache holds {} events, capacity {}",
                    c.ring.len(),
                    c.capacity
                ));
            }
            let live = &sim.apiservers()[apiserver.index()].caches[kind.index()];
            if live.capacity < 1 {
                return fail("cache capacity dropped to 0".into());
            }
        }
    }
    Ok(())
}
