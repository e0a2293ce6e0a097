//! Invariants every trace must keep, checked in tests after every run.

use std::collections::{BTreeMap, BTreeSet};

use crate::model::{ControllerId, NameId, Rv, WatcherId};
use crate::sim::Sim;
use crate::trace::*;
use crate::view::View;

/// Returns the first broken invariant, naming the event.
pub fn check(sim: &Sim) -> Result<(), String> {
    sim.etcd().check_indexes()?;
    let mut streams = Streams::default();
    let mut processing: BTreeSet<(ControllerId, NameId)> = BTreeSet::new();
    let mut view = View::initial(sim);
    for (i, e) in sim.trace().iter().enumerate() {
        let at = |what: String| format!("event #{i} at {} ms: {what}", e.time_ms.ms());
        streams.apply(&e.kind).map_err(at)?;
        one_worker_per_key(sim, &mut processing, &e.kind).map_err(at)?;
        view.apply(i as EventId, e);
        cache_within_capacity(sim, &view, &e.kind).map_err(at)?;
    }
    Ok(())
}

/// Per watcher: the RV the current watch started at and the last it delivered. Along one watch
/// RVs only grow, and every event is past the watch's start.
#[derive(Default)]
struct Streams(BTreeMap<WatcherId, (Rv, Rv)>);

impl Streams {
    fn apply(&mut self, kind: &EventKind) -> Result<(), String> {
        let watch = &mut self.0;
        match *kind {
            EventKind::Reflector(ReflectorEvent::WatchOpened {
                watcher, from_rv, ..
            })
            | EventKind::Reflector(ReflectorEvent::InitialEventsEnd {
                watcher,
                rv: from_rv,
                ..
            }) => {
                watch.insert(watcher, (from_rv, from_rv));
            }
            EventKind::Reflector(ReflectorEvent::WatchEvent { watcher, rv, .. }) => {
                let Some((start, last)) = watch.get_mut(&watcher) else {
                    let w = watcher.0;
                    return Err(format!("watcher {w} got an event with no open watch"));
                };
                if rv <= *start {
                    return Err(format!(
                        "event rv {rv} at or below the watch's start rv {start}"
                    ));
                }
                if rv <= *last {
                    return Err(format!("rv went from {last} to {rv} along one watch"));
                }
                *last = rv;
            }
            EventKind::Reflector(ReflectorEvent::Bookmark { watcher, rv }) => {
                if let Some((_, last)) = watch.get_mut(&watcher) {
                    if rv < *last {
                        return Err(format!("bookmark rv {rv} below delivered rv {last}"));
                    }
                    *last = rv;
                }
            }
            EventKind::Reflector(ReflectorEvent::WatchEnded { watcher, .. })
            | EventKind::Reflector(ReflectorEvent::WatchFailed { watcher, .. })
            | EventKind::Reflector(ReflectorEvent::ListRequest { watcher, .. })
            | EventKind::Reflector(ReflectorEvent::WatchListRequest { watcher, .. })
            | EventKind::Reflector(ReflectorEvent::State {
                watcher,
                state: WatcherState::Stopped,
                ..
            }) => {
                watch.remove(&watcher);
            }
            _ => {}
        }
        Ok(())
    }
}

/// No key is reconciled by two workers at once.
fn one_worker_per_key(
    sim: &Sim,
    processing: &mut BTreeSet<(ControllerId, NameId)>,
    kind: &EventKind,
) -> Result<(), String> {
    match *kind {
        EventKind::Controller(ControllerEvent::ReconcileStart {
            controller, key, ..
        }) if !processing.insert((controller, key)) => Err(format!(
            "key {} reconciled by two workers at once",
            sim.names().resolve(key)
        )),
        EventKind::Controller(ControllerEvent::ReconcileEnd {
            controller, key, ..
        }) => {
            processing.remove(&(controller, key));
            Ok(())
        }
        _ => Ok(()),
    }
}

/// A cache never holds more events than its capacity, and its capacity stays positive.
fn cache_within_capacity(sim: &Sim, view: &View, kind: &EventKind) -> Result<(), String> {
    let EventKind::Store(StoreEvent::CacheAdd {
        apiserver, kind, ..
    }) = *kind
    else {
        return Ok(());
    };
    let c = &view.caches[apiserver.index()][kind.index()];
    if c.ring.len() as u32 > c.capacity {
        return Err(format!(
            "cache holds {} events, capacity {}",
            c.ring.len(),
            c.capacity
        ));
    }
    let live = &sim.apiservers()[apiserver.index()].caches()[kind.index()];
    if live.capacity() < 1 {
        return Err("cache capacity dropped to 0".into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_watch_stream_never_goes_back_and_needs_an_open_watch() {
        let w = WatcherId(0);
        let event = |rv| {
            EventKind::Reflector(ReflectorEvent::WatchEvent {
                watcher: w,
                event: crate::model::EventType::Added,
                name: NameId(0),
                rv,
                spec: 0,
            })
        };
        let mut s = Streams::default();
        assert!(s.apply(&event(5)).unwrap_err().contains("no open watch"));
        let opened = EventKind::Reflector(ReflectorEvent::WatchOpened {
            watcher: w,
            from_rv: 5,
            replayed: 0,
        });
        s.apply(&opened).unwrap();
        assert!(s.apply(&event(5)).unwrap_err().contains("start rv 5"));
        s.apply(&event(7)).unwrap();
        assert!(s.apply(&event(6)).unwrap_err().contains("from 7 to 6"));
        let bookmark = |rv| EventKind::Reflector(ReflectorEvent::Bookmark { watcher: w, rv });
        assert!(s.apply(&bookmark(6)).is_err());
        s.apply(&bookmark(9)).unwrap();
        let stopped = EventKind::Reflector(ReflectorEvent::State {
            watcher: w,
            state: WatcherState::Stopped,
            last_rv: 9,
        });
        s.apply(&stopped).unwrap();
        assert!(
            s.apply(&event(10)).is_err(),
            "the watch ended with the stop"
        );
    }
}
