//! Controllers: their state (queue, workers, link, hold, memory) and rules, and the engine's
//! side of them: workers, reconciles and their writes, crashes and restarts, ESR.

use super::*;

impl Controller {
    pub(super) fn new(
        c: &crate::config::ControllerConfig,
        reflectors: Vec<WatcherId>,
    ) -> Controller {
        Controller {
            up: false,
            epoch: Epoch(0),
            apiserver: c.apiserver,
            queue: WorkQueue::new(c.queue),
            workers: vec![None; c.workers as usize],
            worker_claimed: 0,
            reflectors,
            link_delay_ms: c.link_delay_ms,
            link_down_last_ms: None,
            link_up_last_ms: None,
            disconnected_until: None,
            failed_first: BTreeMap::new(),
            hold: None,
            hold_generation: Generation(0),
            crash_after_writes: None,
            restart_after_ms: None,
            memory: Memory::new(),
            initial_sync: false,
        }
    }
}

impl Controller {
    /// Is this timer or message from the controller's current life (not from before a crash)?
    pub fn in_life(&self, epoch: Epoch) -> bool {
        self.epoch == epoch
    }

    /// The keys its workers are reconciling now, in worker order.
    pub fn running_keys(&self) -> Vec<NameId> {
        self.workers.iter().flatten().map(|r| r.key).collect()
    }

    /// A crash: the process stops and what it held in memory dies with it (workers, queue,
    /// hold, the program's memory, an armed crash); timers of this life go stale.
    fn die(&mut self) {
        self.up = false;
        self.epoch = self.epoch.next();
        self.workers.iter_mut().for_each(|w| *w = None);
        self.worker_claimed = 0;
        self.hold = None;
        self.queue = WorkQueue::new(self.queue.kind);
        self.memory.clear();
        self.crash_after_writes = None;
    }
}

#[derive(Clone, Debug, Hash)]
pub struct Running {
    pub key: NameId,
    pub writes: Vec<Write>,
    /// Per write: its failure is ignored (`on-error continue`); empty: none is.
    pub continue_on_error: Vec<bool>,
    /// How the reconcile ends if its writes succeed (`None`: the controller's settings).
    pub outcome: Option<ReconcileResult>,
    pub done: usize,
    pub start_event: EventId,
    pub started_ms: TimeMs,
}

#[derive(Clone, Debug, Hash)]
pub struct Controller {
    pub up: bool,
    /// Invalidates timers of an earlier life.
    pub epoch: Epoch,
    pub apiserver: ApiserverId,
    pub queue: WorkQueue,
    pub workers: Vec<Option<Running>>,
    /// Idle workers with a wake-up pending (bit per worker; at most 64 workers).
    worker_claimed: u64,
    pub reflectors: Vec<WatcherId>,
    pub link_delay_ms: DurationMs,
    /// When the last delayed message sent on each direction of the link arrives (FIFO order).
    pub link_down_last_ms: Option<TimeMs>,
    pub link_up_last_ms: Option<TimeMs>,
    pub disconnected_until: Option<TimeMs>,
    /// Reconciles failed on purpose so far, per key (`fail-first N`), across restarts.
    pub failed_first: BTreeMap<NameId, u32>,
    /// Notifications held back (Sieve's unobserved-state injection), in arrival order.
    pub hold: Option<Hold>,
    /// Invalidates the timeout of an earlier hold.
    pub(super) hold_generation: Generation,
    pub crash_after_writes: Option<u32>,
    /// Restart this long after the armed (or next) crash.
    pub restart_after_ms: Option<DurationMs>,
    pub memory: Memory,
    /// Keys added by the initial list (priority queue: low priority).
    initial_sync: bool,
}

impl Sim {
    // ----- controllers -----

    pub(super) fn enqueue(
        &mut self,
        c: ControllerId,
        key: NameId,
        cause: EventId,
        low_priority: bool,
    ) {
        let ctl = &mut self.controllers[c.index()];
        if !ctl.up {
            return;
        }
        let outcome = ctl.queue.add(key, low_priority || ctl.initial_sync);
        let id = self.emit(
            Actor::Controller(c),
            cause,
            EventKind::Enqueue {
                controller: c,
                key,
                outcome,
                delay_ms: 0,
            },
        );
        if outcome == QueueAdd::Added {
            self.kick(c, id);
        }
    }

    /// Hands the queue to an idle worker that no pending wake-up has claimed yet, so keys that
    /// become ready at the same instant go to distinct workers (a busy worker never starts a
    /// second reconcile; `client-go/util/workqueue`, controller-runtime's worker loop).
    pub(super) fn kick(&mut self, c: ControllerId, cause: EventId) {
        let ctl = &mut self.controllers[c.index()];
        let idle = (0..ctl.workers.len())
            .find(|&i| ctl.workers[i].is_none() && ctl.worker_claimed & (1u64 << i) == 0);
        if let Some(worker) = idle {
            ctl.worker_claimed |= 1u64 << worker;
            let epoch = ctl.epoch;
            self.ready.push_back((
                cause,
                Action::Work {
                    controller: c,
                    epoch,
                    worker: worker as u32,
                },
            ));
        }
    }

    /// An idle worker takes the next key, if any, and starts its reconcile.
    pub(super) fn work(&mut self, c: ControllerId, worker: u32, cause: EventId) {
        let config = self.config.clone();
        let cfg = &config.controllers[c.index()];
        let (reconcile_ms, primary) = (cfg.reconcile_ms, cfg.primary);
        let ctl = &mut self.controllers[c.index()];
        ctl.worker_claimed &= !(1u64 << worker);
        if ctl.workers[worker as usize].is_some() {
            return;
        }
        let Some(key) = ctl.queue.get() else {
            return;
        };
        let spec = StoreReader {
            sim: self,
            controller: c,
        }
        .get(primary, key)
        .map(|o| o.spec);
        let start = self.emit(
            Actor::Controller(c),
            cause,
            EventKind::ReconcileStart {
                controller: c,
                key,
                worker,
                spec,
                writes: 0,
            },
        );
        let plan = self.plan(c, key);
        // The start says how many steps its reconcile has, now that they are decided (the same
        // instant: nothing was emitted in between but this reconcile's own events).
        if let Some(Event {
            kind: EventKind::ReconcileStart { writes, .. },
            ..
        }) = self.trace.get_mut(start as usize)
        {
            *writes = plan.writes.len() as u32;
        }
        self.emit_reads(c, start, &plan.reads);
        let epoch = self.controllers[c.index()].epoch;
        let steps = plan.writes.len() as u64 + 1;
        let run = Running {
            key,
            writes: plan.writes,
            continue_on_error: plan.continue_on_error,
            outcome: plan.outcome,
            done: 0,
            start_event: start,
            started_ms: self.now_ms,
        };
        self.controllers[c.index()].workers[worker as usize] = Some(run);
        let at = self.now_ms + reconcile_ms / steps;
        self.schedule(
            at,
            start,
            Action::Step {
                controller: c,
                epoch,
                worker,
            },
        );
        // More keys may be waiting for other idle workers.
        if !self.controllers[c.index()].queue.is_empty() {
            self.kick(c, cause);
        }
    }

    /// What a reconcile of `key` decides, from the controller's cache (and etcd for live reads).
    fn plan(&mut self, c: ControllerId, key: NameId) -> crate::program::Plan {
        let config = self.config.clone();
        let cfg = &config.controllers[c.index()];
        let mut names = std::mem::take(&mut self.names);
        let mut memory = std::mem::take(&mut self.controllers[c.index()].memory);
        // A live read (`get ... live`) goes to etcd through the apiserver: it fails while the
        // controller is cut off.
        let etcd = EtcdReader(&self.etcd);
        let live: Option<&dyn Reader> = self.connected(c).then_some(&etcd);
        let plan = reconcile::plan(
            cfg,
            key,
            1 << c.0,
            &StoreReader {
                sim: self,
                controller: c,
            },
            live,
            &mut names,
            &mut memory,
        );
        self.names = names;
        self.controllers[c.index()].memory = memory;
        plan
    }

    /// A reconcile's reads, each with what etcd held at that moment.
    fn emit_reads(&mut self, c: ControllerId, start: EventId, reads: &[crate::program::ReadNote]) {
        for r in reads {
            let truth_rv = self.etcd.objects.get(&(r.kind, r.name)).map_or(0, |o| o.rv);
            let read = EventKind::ReconcileRead {
                controller: c,
                kind: r.kind,
                name: r.name,
                rv: r.rv.unwrap_or(0),
                truth_rv,
                live: r.live,
            };
            self.emit(Actor::Controller(c), start, read);
        }
    }

    /// A step of a running reconcile: the next write, or the end.
    pub(super) fn step(&mut self, c: ControllerId, worker: u32, cause: EventId) {
        let reconcile_ms = self.config.controllers[c.index()].reconcile_ms;
        let Some(mut run) = self.controllers[c.index()].workers[worker as usize].take() else {
            return;
        };
        if run.done < run.writes.len() {
            let ctl = &self.controllers[c.index()];
            if ctl.crash_after_writes == Some(run.done as u32) && run.done > 0 {
                self.controllers[c.index()].workers[worker as usize] = Some(run);
                self.crash(c, cause);
                return;
            }
            let w = run.writes[run.done];
            run.done += 1;
            let result = if self.connected(c) {
                self.write(Actor::Controller(c), run.start_event, w)
            } else {
                Err(ApiError::ConnectionRefused)
            };
            let epoch = self.controllers[c.index()].epoch;
            let go_on = run.continue_on_error.get(run.done - 1) == Some(&true);
            if let (Err(e), false) = (result, go_on) {
                self.finish(c, worker, run, ReconcileResult::Error(e), cause);
                return;
            }
            let steps = run.writes.len() as u64 + 1;
            let at = run.started_ms + reconcile_ms * (run.done as u64 + 1) / steps;
            self.controllers[c.index()].workers[worker as usize] = Some(run);
            self.schedule(
                at,
                cause,
                Action::Step {
                    controller: c,
                    epoch,
                    worker,
                },
            );
            return;
        }
        let cfg = &self.config.controllers[c.index()];
        let failed = self.controllers[c.index()]
            .failed_first
            .get(&run.key)
            .copied()
            .unwrap_or(0);
        let result = if failed < cfg.fail_first {
            self.controllers[c.index()]
                .failed_first
                .insert(run.key, failed + 1);
            ReconcileResult::Error(ApiError::ReconcileError)
        } else if let Some(e @ ReconcileResult::Error(_)) = run.outcome {
            e
        } else if cfg.error_ppm > 0 && self.rng.chance_ppm(cfg.error_ppm) {
            ReconcileResult::Error(ApiError::ReconcileError)
        } else if let Some(r @ ReconcileResult::RequeueAfter(_)) = run.outcome {
            r
        } else if cfg.requeue_after_ms > 0 {
            ReconcileResult::RequeueAfter(cfg.requeue_after_ms)
        } else if cfg.anvil {
            ReconcileResult::RequeueAfter(cfg.anvil_period_ms)
        } else {
            ReconcileResult::Done
        };
        self.finish(c, worker, run, result, cause);
    }

    pub(super) fn finish(
        &mut self,
        c: ControllerId,
        worker: u32,
        run: Running,
        result: ReconcileResult,
        _cause: EventId,
    ) {
        let key = run.key;
        let id = self.emit(
            Actor::Controller(c),
            run.start_event,
            EventKind::ReconcileEnd {
                controller: c,
                key,
                result,
            },
        );
        let now = self.now_ms;
        let ctl = &mut self.controllers[c.index()];
        ctl.workers[worker as usize] = None;
        let epoch = ctl.epoch;
        let again = ctl.queue.done(key);
        if let Some(d) = ctl.queue.requeue_delay(key, result, now) {
            let outcome = ctl.queue.add_after(key, now + d);
            let id = self.emit(
                Actor::Controller(c),
                id,
                EventKind::Enqueue {
                    controller: c,
                    key,
                    outcome,
                    delay_ms: d,
                },
            );
            if outcome == QueueAdd::Added {
                self.schedule(
                    now + d,
                    id,
                    Action::QueueAfter {
                        controller: c,
                        epoch,
                        key,
                    },
                );
            }
        }
        let _ = again;
        // This worker is idle again: it takes the next key (claimed, so a kick in between picks
        // another idle worker).
        self.controllers[c.index()].worker_claimed |= 1u64 << worker;
        self.ready.push_back((
            id,
            Action::Work {
                controller: c,
                epoch,
                worker,
            },
        ));
    }

    pub(super) fn start_controller(&mut self, c: ControllerId, cause: EventId) {
        let api = self.controllers[c.index()].apiserver;
        let id = self.emit(
            Actor::Controller(c),
            cause,
            EventKind::Restart {
                controller: c,
                apiserver: api,
            },
        );
        let cfg = &self.config.controllers[c.index()];
        let (anvil, period, resync, queue_kind) = (
            cfg.anvil,
            cfg.anvil_period_ms,
            resync_period(cfg.resync_ms),
            cfg.queue,
        );
        let ctl = &mut self.controllers[c.index()];
        ctl.up = true;
        ctl.epoch = ctl.epoch.next();
        ctl.worker_claimed = 0;
        ctl.queue = WorkQueue::new(queue_kind);
        ctl.memory.clear();
        ctl.crash_after_writes = None;
        ctl.initial_sync = queue_kind == QueueKind::Priority;
        let epoch = ctl.epoch;
        if anvil {
            self.schedule(
                self.now_ms,
                id,
                Action::AnvilTick {
                    controller: c,
                    epoch,
                },
            );
            return;
        }
        for w in self.controllers[c.index()].reflectors.clone() {
            self.start_reflector(w, id);
            if resync > 0 {
                self.schedule(
                    self.now_ms + resync,
                    id,
                    Action::Resync { watcher: w, epoch },
                );
            }
        }
        self.controllers[c.index()].initial_sync = false;
        let _ = period;
    }

    pub(super) fn crash(&mut self, c: ControllerId, cause: EventId) {
        if !self.controllers[c.index()].up {
            return;
        }
        let id = self.emit(
            Actor::Controller(c),
            cause,
            EventKind::Crash { controller: c },
        );
        for key in self.controllers[c.index()].running_keys() {
            self.emit(
                Actor::Controller(c),
                id,
                EventKind::ReconcileEnd {
                    controller: c,
                    key,
                    result: ReconcileResult::Crashed,
                },
            );
        }
        let ctl = &mut self.controllers[c.index()];
        if let Some(d) = ctl.restart_after_ms.take() {
            let restart = Input::Restart {
                controller: c,
                apiserver: None,
            };
            self.schedule(self.now_ms + d.max(1), id, Action::Input(restart));
        }
        self.controllers[c.index()].die();
        for w in self.controllers[c.index()].reflectors.clone() {
            if let Some(watch) = self.reflectors[w.index()].watch {
                let sw = &mut self.watches[watch.index()];
                if sw.open {
                    sw.open = false;
                    let (api, kind) = (sw.apiserver, sw.kind);
                    self.apiservers[api.index()].watches_by_kind[kind.index()]
                        .retain(|&i| i != watch);
                }
            }
            self.stop_reflector(w, id);
        }
    }

    /// ESR bookkeeping after a committed write: which primary key did it touch, and does that
    /// key's desired state hold now?
    pub(super) fn track_esr(&mut self, o: Object) {
        for (i, cfg) in self.config.controllers.iter().enumerate() {
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
                let ns = self.names.resolve(o.namespace);
                primary_watches.any(|w| w.namespace.as_deref() == Some(ns))
            };
            if !watched && !cfg.anvil {
                continue;
            }
            let c = ControllerId(i as u16);
            let parent = self.etcd.objects.get(&(cfg.primary, key)).copied();
            let now = self.now_ms;
            let holds = match &parent {
                Some(p) => {
                    reconcile::desired_holds(cfg, 1 << c.0, p, &self.names, &EtcdReader(&self.etcd))
                }
                None => true,
            };
            let entry = self.esr.entry((c, key)).or_insert(EsrState {
                holds: !holds,
                since_ms: now,
            });
            if entry.holds != holds {
                entry.holds = holds;
                entry.since_ms = now;
            }
        }
    }
}

/// The informer's resync period: 0 (off), else at least `minimumResyncPeriod`
/// (`client-go/tools/cache/shared_informer.go`), which client-go raises shorter periods to.
pub(super) fn resync_period(resync_ms: TimeMs) -> TimeMs {
    match resync_ms {
        0 => 0,
        ms => ms.max(RESYNC_MS_MIN),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_crash_forgets_the_process_memory_and_starts_a_new_life() {
        let cfg = Config::controller("c", KindId(0), Behaviour::Mirror { target: KindId(1) });
        let mut c = Controller::new(&cfg, vec![]);
        let (a, b) = (NameId(1), NameId(2));
        c.up = true;
        c.queue.add(a, false);
        c.queue.add(b, false);
        let key = c.queue.get().unwrap();
        c.workers[0] = Some(Running {
            key,
            writes: vec![],
            continue_on_error: vec![],
            outcome: None,
            done: 0,
            start_event: 0,
            started_ms: 0,
        });
        c.crash_after_writes = Some(1);
        assert_eq!(c.running_keys(), [a]);
        assert!(c.in_life(Epoch(0)));
        c.die();
        assert!(!c.up && c.running_keys().is_empty() && c.queue.is_empty());
        assert_eq!(c.crash_after_writes, None);
        assert!(!c.in_life(Epoch(0)) && c.in_life(Epoch(1)));
    }
}
