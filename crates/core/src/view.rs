//! The picture of the system at any moment of a trace, folded from the events alone, with
//! checkpoints so that seeking anywhere applies at most `CHECKPOINT_EVERY` events.

use std::collections::VecDeque;

use crate::model::{NameId, Rv, TimeMs};
use crate::sim::Sim;
use crate::trace::*;

pub const CHECKPOINT_EVERY: usize = 2048;

#[derive(Clone, Debug, Default, PartialEq)]
pub struct CacheView {
    /// Buffered events, oldest first: (rv, object name).
    pub ring: VecDeque<(Rv, NameId)>,
    pub capacity: u32,
    pub evicted_total: u64,
    pub paused: bool,
    pub ready: bool,
}

#[derive(Clone, Debug, PartialEq)]
pub struct WatcherView {
    pub state: WatcherState,
    pub last_rv: Rv,
    /// The last 410 (or other watch error) and when.
    pub last_error: Option<EventId>,
    /// The last time a watch opened (or a streaming list ended its initial events): the watcher
    /// has recovered from any error before it.
    pub watching_since: Option<EventId>,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct QueueView {
    pub up: bool,
    /// Down after a crash (as opposed to not started yet).
    pub crashed: bool,
    pub waiting: Vec<NameId>,
    pub processing: Vec<NameId>,
    pub dirty: Vec<NameId>,
    pub reconciles: u64,
    /// The controller's latest write (or failed write).
    pub last_write: Option<EventId>,
}

/// The whole system at one moment.
#[derive(Clone, Debug, PartialEq)]
pub struct View {
    /// Events applied so far.
    pub applied: usize,
    pub time_ms: TimeMs,
    pub rv: Rv,
    /// Indexed `[apiserver][kind]`.
    pub caches: Vec<Vec<CacheView>>,
    pub watchers: Vec<WatcherView>,
    pub queues: Vec<QueueView>,
    pub disconnected: Vec<bool>,
    /// The apiserver each controller talks to now.
    pub controller_apiserver: Vec<crate::model::ApiserverId>,
    pub last_say: Option<EventId>,
}

impl View {
    pub fn initial(sim: &Sim) -> View {
        View {
            applied: 0,
            time_ms: 0,
            rv: 1,
            caches: sim
                .apiservers
                .iter()
                .map(|a| {
                    a.caches
                        .iter()
                        .map(|c| CacheView {
                            capacity: match c.mode {
                                crate::config::CacheMode::Fixed { capacity } => capacity,
                                crate::config::CacheMode::Dynamic { capacity_min, .. } => {
                                    capacity_min
                                }
                                crate::config::CacheMode::Off => 0,
                            },
                            ready: true,
                            ..Default::default()
                        })
                        .collect()
                })
                .collect(),
            watchers: sim
                .reflectors
                .iter()
                .map(|_| WatcherView {
                    state: WatcherState::Stopped,
                    last_rv: 0,
                    last_error: None,
                    watching_since: None,
                })
                .collect(),
            queues: vec![QueueView::default(); sim.controllers.len()],
            disconnected: vec![false; sim.controllers.len()],
            controller_apiserver: sim.config.controllers.iter().map(|c| c.apiserver).collect(),
            last_say: None,
        }
    }

    pub fn apply(&mut self, id: EventId, e: &Event) {
        use EventKind::*;
        self.applied = id as usize + 1;
        self.time_ms = e.time_ms;
        match e.kind {
            Write { rv, .. } => {
                self.rv = self.rv.max(rv);
                if let Actor::Controller(c) = e.actor {
                    self.queues[c.index()].last_write = Some(id);
                }
            }
            WriteFailed { .. } => {
                if let Actor::Controller(c) = e.actor {
                    self.queues[c.index()].last_write = Some(id);
                }
            }
            CacheAdd {
                apiserver,
                kind,
                rv,
                name,
                evicted,
                capacity,
            } => {
                let c = &mut self.caches[apiserver.index()][kind.index()];
                for _ in 0..evicted {
                    c.ring.pop_front();
                }
                c.evicted_total += evicted as u64;
                c.ring.push_back((rv, name));
                c.capacity = capacity;
            }
            CacheReset {
                apiserver,
                kind,
                ready,
                ..
            } => {
                let c = &mut self.caches[apiserver.index()][kind.index()];
                c.ring.clear();
                c.ready = ready;
            }
            CachePaused { apiserver, paused } => {
                for c in &mut self.caches[apiserver.index()] {
                    c.paused = paused;
                }
            }
            ApiserverRestart { apiserver, .. } => {
                for c in &mut self.caches[apiserver.index()] {
                    c.paused = false;
                }
            }
            State {
                watcher,
                state,
                last_rv,
            } => {
                let w = &mut self.watchers[watcher.index()];
                w.state = state;
                w.last_rv = last_rv;
            }
            WatchEvent { watcher, rv, .. } | Bookmark { watcher, rv } => {
                self.watchers[watcher.index()].last_rv = rv;
            }
            ListResult {
                watcher, list_rv, ..
            } => self.watchers[watcher.index()].last_rv = list_rv,
            InitialEventsEnd { watcher, rv, .. } => {
                let w = &mut self.watchers[watcher.index()];
                w.last_rv = rv;
                w.watching_since = Some(id);
            }
            WatchOpened { watcher, .. } => self.watchers[watcher.index()].watching_since = Some(id),
            WatchFailed { watcher, .. } | ListFailed { watcher, .. } => {
                self.watchers[watcher.index()].last_error = Some(id);
            }
            Enqueue {
                controller,
                key,
                outcome,
                delay_ms,
            } => {
                let q = &mut self.queues[controller.index()];
                match outcome {
                    QueueAdd::Added if delay_ms == 0 => q.waiting.push(key),
                    QueueAdd::MarkedDirty => q.dirty.push(key),
                    _ => {}
                }
            }
            ReconcileStart {
                controller, key, ..
            } => {
                let q = &mut self.queues[controller.index()];
                q.waiting.retain(|k| *k != key);
                q.dirty.retain(|k| *k != key);
                q.processing.push(key);
                q.reconciles += 1;
            }
            ReconcileEnd {
                controller, key, ..
            } => {
                let q = &mut self.queues[controller.index()];
                q.processing.retain(|k| *k != key);
            }
            Crash { controller } => {
                let q = &mut self.queues[controller.index()];
                q.up = false;
                q.crashed = true;
                q.waiting.clear();
                q.processing.clear();
                q.dirty.clear();
            }
            Restart {
                controller,
                apiserver,
            } => {
                self.controller_apiserver[controller.index()] = apiserver;
                let q = &mut self.queues[controller.index()];
                q.up = true;
                q.crashed = false;
            }
            Disconnect { controller, .. } => self.disconnected[controller.index()] = true,
            Reconnect { controller } => self.disconnected[controller.index()] = false,
            Say { .. } => self.last_say = Some(id),
            _ => {}
        }
        // A dirty key is queued again when its reconcile ends.
        if let ReconcileEnd {
            controller, key, ..
        } = e.kind
        {
            let q = &mut self.queues[controller.index()];
            if q.dirty.contains(&key) {
                q.dirty.retain(|k| *k != key);
                q.waiting.push(key);
            }
        }
    }
}

/// Checkpointed views of one trace: `at(n)` is the view after the first `n` events.
#[derive(Clone, Debug)]
pub struct Timeline {
    checkpoints: Vec<View>,
}

impl Timeline {
    pub fn new(sim: &Sim) -> Timeline {
        let mut view = View::initial(sim);
        let mut checkpoints = vec![view.clone()];
        for (i, e) in sim.trace.iter().enumerate() {
            view.apply(i as EventId, e);
            if (i + 1) % CHECKPOINT_EVERY == 0 {
                checkpoints.push(view.clone());
            }
        }
        Timeline { checkpoints }
    }

    pub fn at(&self, sim: &Sim, n: usize) -> View {
        let n = n.min(sim.trace.len());
        let mut view =
            self.checkpoints[(n / CHECKPOINT_EVERY).min(self.checkpoints.len() - 1)].clone();
        for i in view.applied..n {
            view.apply(i as EventId, &sim.trace[i]);
        }
        view
    }

    /// The number of events up to and including time `t`.
    pub fn index_at_time(sim: &Sim, t: TimeMs) -> usize {
        sim.trace.partition_point(|e| e.time_ms <= t)
    }
}
