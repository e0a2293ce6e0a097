//! Controllers: their state (queue, workers, memory, life) and rules, and the engine's side of
//! them: workers, reconciles and their writes, crashes and restarts.

use super::*;

impl Controller {
    pub(super) fn new(
        c: &crate::config::ControllerConfig,
        reflectors: Vec<WatcherId>,
    ) -> Controller {
        Controller {
            up: false,
            epoch: Epoch(0),
            queue: WorkQueue::new(c.queue),
            workers: vec![None; c.workers as usize],
            worker_claimed: 0,
            reflectors,
            failed_first: crate::store::NameMap::default(),
            crash_after_writes: Vec::new(),
            disconnect_before_write: Vec::new(),
            restart_after_ms: None,
            memory: Memory::new(),
            events: Default::default(),
            written_rvs: Default::default(),
            exceeded: None,
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

    /// A crash: the process stops and what it held in memory dies with it (workers, queue, the
    /// program's memory, an armed crash); timers of this life go stale.
    fn die(&mut self) {
        self.up = false;
        self.epoch = self.epoch.next();
        self.workers.iter_mut().for_each(|w| *w = None);
        self.worker_claimed = 0;
        self.queue = WorkQueue::new(self.queue.kind);
        self.memory.clear();
        self.events.forget();
        self.crash_after_writes.clear();
        self.written_rvs.clear();
    }
}

impl Controller {
    /// Is a delayed add of `key` due now? If so it leaves the queue's waiting set.
    pub(super) fn delayed_add_due(&mut self, key: NameId, now: TimeMs) -> bool {
        self.queue.due(key, now)
    }
}

#[derive(Clone, Debug, Hash)]
pub(super) struct Running {
    pub(super) key: NameId,
    pub(super) writes: Vec<Write>,
    /// Per write: which of its failures are ignored (`on-error ...`); empty: none is.
    pub(super) on_error: Vec<crate::program::OnError>,
    /// Memory changes waiting for the writes before them (`program::MemoryChange`).
    pub(super) memory: Vec<crate::program::MemoryChange>,
    /// Per write: the earlier write of the same object whose response RV it sends (empty:
    /// none does).
    pub(super) rv_from: Vec<Option<u32>>,
    /// Per write made so far: the RV its response carried (`None`: it failed or deleted).
    pub(super) response_rvs: Vec<Option<Rv>>,
    /// How the reconcile ends if its writes succeed (`None`: the controller's settings).
    pub(super) outcome: Option<ReconcileResult>,
    pub(super) done: usize,
    pub(super) start_event: EventId,
    pub(super) started_ms: TimeMs,
}

#[derive(Clone, Debug, Hash)]
pub struct Controller {
    pub(super) up: bool,
    /// Invalidates timers of an earlier life.
    pub(super) epoch: Epoch,
    pub(super) queue: WorkQueue,
    pub(super) workers: Vec<Option<Running>>,
    /// Idle workers with a wake-up pending (bit per worker; at most 64 workers).
    worker_claimed: u64,
    pub(super) reflectors: Vec<WatcherId>,
    /// Reconciles failed on purpose so far, per key (`fail-first N`), across restarts.
    pub(super) failed_first: crate::store::NameMap<u32>,
    /// Armed crashes, in the order armed: after this many writes of a reconcile, the process
    /// dies (and restarts that long after, if asked). Several stay armed, each with its own
    /// restart, as armed disconnects do; the first one a reconcile reaches fires, and the rest
    /// die with the process (each was for its next reconcile, which never comes).
    pub(super) crash_after_writes: Vec<(u32, Option<DurationMs>)>,
    /// Armed disconnects, in the order armed: just before the write that follows this many
    /// writes of a reconcile, the link goes down for that long (the write is refused). Several
    /// stay armed (two refusals in one reconcile are one of the explorer's pairs).
    pub(super) disconnect_before_write: Vec<(u32, DurationMs)>,
    /// Restart this long after the armed (or next) crash.
    pub(super) restart_after_ms: Option<DurationMs>,
    pub(super) memory: Memory,
    /// client-go's `EventCorrelator` (`events_cache.go`): the Events its recorder made.
    pub(super) events: super::events_cache::EventCorrelator,
    /// KEP-5647's record of the RVs its writes got back (`consistency.rs`).
    pub(super) written_rvs: super::consistency::WrittenRvs,
    /// A reconcile ran into a limit (and did not start): the engine stops the run.
    pub(super) exceeded: Option<(NameId, crate::program::Exceeded)>,
}

/// What a controller reads of the world during one step, and where it writes.
pub(super) struct StepContext<'a> {
    pub controller: ControllerId,
    /// The apiserver its link reaches (a restart names it).
    pub apiserver: ApiserverId,
    pub now_ms: TimeMs,
    pub config: &'a Config,
    pub rng: &'a mut Rng,
    /// Its informers' stores (Anvil's controllers: etcd).
    pub cache: &'a dyn Reader,
    /// etcd through the apiserver, for live reads: `None` while the controller is cut off.
    pub live: Option<&'a dyn Reader>,
    /// The truth, for the trace's note of what etcd held when a reconcile read.
    pub etcd: &'a Etcd,
    pub names: &'a mut Names,
    pub out: Out<'a>,
}

impl StepContext<'_> {
    fn cfg(&self) -> &crate::config::ControllerConfig {
        &self.config.controllers[self.controller.index()]
    }

    fn emit(&mut self, cause: EventId, kind: EventKind) -> EventId {
        self.out.emit(cause, kind)
    }
}

/// The controller's rules (controller-runtime's `Controller` over client-go's work queue):
/// each entry point takes a message or a timer, writes its events and posts the rest.
impl Controller {
    /// A reconcile request from an event handler, a requeue or Anvil's tick.
    /// It needs nothing but the queue (no `StepContext`): it runs for every handler's key.
    pub(super) fn enqueue(
        &mut self,
        controller: ControllerId,
        out: &mut Out,
        key: NameId,
        cause: EventId,
        low_priority: bool,
    ) {
        if !self.up {
            return;
        }
        let outcome = self.queue.add(key, low_priority);
        let event = EventKind::Controller(ControllerEvent::Enqueue {
            controller,
            key,
            outcome,
            delay_ms: DurationMs::ZERO,
        });
        let id = out.emit(cause, event);
        if outcome == QueueAdd::Added {
            self.kick(controller, out, id);
        }
    }

    /// Hands the queue to an idle worker that no pending wake-up has claimed yet, so keys that
    /// become ready at the same instant go to distinct workers (a busy worker never starts a
    /// second reconcile; `client-go/util/workqueue`, controller-runtime's worker loop).
    fn kick(&mut self, controller: ControllerId, out: &mut Out, cause: EventId) {
        let idle = (0..self.workers.len())
            .find(|&i| self.workers[i].is_none() && self.worker_claimed & (1u64 << i) == 0);
        if let Some(worker) = idle {
            self.wake_worker(controller, out, worker as u32, cause);
        }
    }

    /// A claimed idle worker takes the next key once what is due now has run.
    fn wake_worker(
        &mut self,
        controller: ControllerId,
        out: &mut Out,
        worker: u32,
        cause: EventId,
    ) {
        self.worker_claimed |= 1u64 << worker;
        let work = Action::Controller(ControllerAction::Work {
            controller,
            epoch: self.epoch,
            worker,
        });
        out.soon(cause, work);
    }

    /// An idle worker takes the next key, if any, and starts its reconcile: every read happens
    /// now, the writes follow one a step.
    pub(super) fn work(&mut self, st: &mut StepContext, worker: u32, cause: EventId) {
        self.worker_claimed &= !(1u64 << worker);
        if self.workers[worker as usize].is_some() {
            return;
        }
        let Some(key) = self.queue.get() else {
            return;
        };
        let (controller, primary) = (st.controller, st.cfg().primary);
        let spec = st.cache.get(primary, key).map(|o| o.spec);
        // KEP-5647: a key whose last writes the informers have not read yet fails at once.
        let stale = match st.cfg().stale_read_check {
            true => self
                .written_rvs
                .ensure_ready(key, |k| st.cache.synced_rv(k))
                .err(),
            false => None,
        };
        let plan = match stale {
            Some(e) => crate::program::Plan {
                outcome: Some(ReconcileResult::Error(e)),
                ..Default::default()
            },
            None => self.plan(st, key),
        };
        if let Some(e) = plan.exceeded {
            self.exceeded = Some((key, e));
            return;
        }
        let started = EventKind::Controller(ControllerEvent::ReconcileStart {
            controller,
            key,
            worker,
            found: spec.is_some(),
            spec: spec.unwrap_or(0),
            writes: plan.writes.len() as u32,
        });
        let start = st.emit(cause, started);
        for r in &plan.reads {
            let truth_rv = st.etcd.get(r.kind, r.name).map_or(0, |o| o.rv);
            let read = EventKind::Controller(ControllerEvent::ReconcileRead {
                controller,
                kind: r.kind,
                name: r.name,
                rv: r.rv.unwrap_or(0),
                truth_rv: IssuedRv::new(truth_rv),
                live: r.live,
            });
            st.emit(start, read);
        }
        let steps = plan.writes.len() as u64 + 1;
        self.workers[worker as usize] = Some(Running {
            key,
            writes: plan.writes,
            on_error: plan.on_error,
            memory: plan.memory,
            rv_from: plan.rv_from,
            response_rvs: vec![],
            outcome: plan.outcome,
            done: 0,
            start_event: start,
            started_ms: st.now_ms,
        });
        let took = match stale {
            Some(_) => DurationMs::ZERO,
            None => st.cfg().reconcile_ms / steps,
        };
        let at = st.now_ms + took;
        let next = Action::Controller(ControllerAction::Step {
            controller,
            epoch: self.epoch,
            worker,
        });
        st.out.timer(at, start, next);
        // More keys may be waiting for other idle workers.
        if !self.queue.is_empty() {
            self.kick(controller, &mut st.out, cause);
        }
    }

    /// What a reconcile of `key` decides, from the controller's cache (and etcd for live reads).
    fn plan(&mut self, st: &mut StepContext, key: NameId) -> crate::program::Plan {
        let owner_bit = 1 << st.controller.0;
        let cfg = &st.config.controllers[st.controller.index()];
        let (cache, live) = (st.cache, st.live);
        let now_ms = st.now_ms;
        reconcile::plan(
            cfg,
            key,
            owner_bit,
            cache,
            live,
            st.names,
            &mut self.memory,
            now_ms,
        )
    }

    /// A step of a running reconcile: the next write (or an armed crash before it), or the end.
    pub(super) fn step(&mut self, st: &mut StepContext, worker: u32, cause: EventId) {
        let Some(mut run) = self.workers[worker as usize].take() else {
            return;
        };
        if run.done < run.writes.len() {
            let made = run.done as u32;
            let armed = (run.done > 0)
                .then(|| self.crash_after_writes.iter().position(|a| a.0 == made))
                .flatten();
            if let Some(i) = armed {
                self.restart_after_ms = self.crash_after_writes.remove(i).1;
                self.workers[worker as usize] = Some(run);
                return st.out.call(
                    cause,
                    Call::Crash {
                        controller: st.controller,
                    },
                );
            }
            let mut write = run.writes[run.done].clone();
            // controller-runtime's client fills the object with the response, so a second
            // update of it sends the RV the first one got back; a write that failed left the
            // object as it was (`Into` is skipped on an error), so look further back, to the
            // last one that went through (none: the RV read at the start).
            let mut from = run.rv_from.get(run.done).copied().flatten();
            let response_rv = loop {
                let Some(j) = from else { break None };
                if let Some(rv) = run.response_rvs.get(j as usize).copied().flatten() {
                    break Some(rv);
                }
                // Strictly earlier, so this ends.
                from = run
                    .rv_from
                    .get(j as usize)
                    .copied()
                    .flatten()
                    .filter(|&k| k < j);
            };
            if let (Write::Update { expect_rv, .. }, Some(rv)) = (&mut write, response_rv) {
                if *expect_rv != 0 {
                    *expect_rv = rv;
                }
            }
            if let Write::Event(e) = &mut write {
                let send = self.correlate(st, e);
                // As sent, for `UpdateState` once it is answered.
                run.writes[run.done] = write.clone();
                if !send {
                    // The spam filter drops it: no request, the reconcile goes on.
                    run.done += 1;
                    self.workers[worker as usize] = Some(run);
                    return self.written(st, worker, Ok(cause), None, cause);
                }
            }
            run.done += 1;
            let start = run.start_event;
            self.workers[worker as usize] = Some(run);
            let write = Call::Write {
                controller: st.controller,
                worker,
                write,
                then: cause,
            };
            return st.out.call(start, write);
        }
        let result = self.outcome(st, &run);
        self.finish(st, worker, run, result);
    }

    /// client-go's event correlator (`tools/record/events_cache.go`, `sim/events_cache.rs`),
    /// kept in the process memory (its LRU caches die with the process): aggregation, then
    /// `eventObserve` (a repeat is the Event its first occurrence made, counted once more; a new
    /// one is named as `makeEvent` names it, `INVOLVED.HEX` of the time in nanoseconds), then
    /// the spam filter (`false`: dropped). The count moves before the request is answered, as
    /// in Go.
    fn correlate(&mut self, st: &mut StepContext, e: &mut crate::reconcile::EventRecord) -> bool {
        for k in crate::reconcile::EVENT_FIELDS {
            st.names.intern(k);
        }
        let now = st.now_ms.0 as i64;
        let process = (st.controller.index(), st.config.controllers.len());
        self.events.correlate(e, now, st.names, process)
    }

    /// A reconcile's write was answered: on to the next step, or the end on an error it does
    /// not ignore.
    pub(super) fn written(
        &mut self,
        st: &mut StepContext,
        worker: u32,
        result: Result<EventId, ApiError>,
        response_rv: Option<Rv>,
        cause: EventId,
    ) {
        let Some(mut run) = self.workers[worker as usize].take() else {
            return;
        };
        run.response_rvs.push(response_rv);
        // `UpdateState`: the server took the Event (one the spam filter dropped has no RV).
        if let (Some(_), Some(Write::Event(e))) = (response_rv, run.writes.get(run.done - 1)) {
            self.events.update_state(e);
        }
        if let Err(e) = result {
            let on_error = run.on_error.get(run.done - 1).copied().unwrap_or_default();
            if !on_error.ignores(e) {
                return self.finish(st, worker, run, ReconcileResult::Error(e));
            }
        }
        // The write returned no error (or one ignored): what the logic remembered after it holds.
        crate::program::apply_memory(&mut self.memory, run.key, &run.memory, run.done as u32);
        let steps = run.writes.len() as u64 + 1;
        let at = run.started_ms + st.cfg().reconcile_ms * (run.done as u64 + 1) / steps;
        self.workers[worker as usize] = Some(run);
        let next = Action::Controller(ControllerAction::Step {
            controller: st.controller,
            epoch: self.epoch,
            worker,
        });
        st.out.timer(at, cause, next);
    }

    /// How a reconcile whose writes all went through ends: a failure on purpose (`fail-first`),
    /// the program's outcome, a random error, a requeue, or done.
    fn outcome(&mut self, st: &mut StepContext, run: &Running) -> ReconcileResult {
        let cfg = &st.config.controllers[st.controller.index()];
        let failed = self.failed_first.get(&run.key).copied().unwrap_or(0);
        if let Some(r @ ReconcileResult::Error(ApiError::StaleRead { .. })) = run.outcome {
            r
        } else if failed < cfg.fail_first {
            self.failed_first.insert(run.key, failed + 1);
            ReconcileResult::Error(ApiError::ReconcileError)
        } else if let Some(e @ ReconcileResult::Error(_)) = run.outcome {
            e
        } else if cfg.error_ppm > 0 && st.rng.chance_ppm(cfg.error_ppm) {
            ReconcileResult::Error(ApiError::ReconcileError)
        } else if let Some(r @ ReconcileResult::RequeueAfter(_)) = run.outcome {
            r
        } else if !cfg.requeue_after_ms.is_zero() {
            ReconcileResult::RequeueAfter(cfg.requeue_after_ms)
        } else if cfg.anvil {
            ReconcileResult::RequeueAfter(cfg.anvil_period_ms)
        } else {
            ReconcileResult::Done
        }
    }

    /// The reconcile ends: the queue learns the result (rate-limited requeue on an error), and
    /// the worker takes the next key.
    fn finish(&mut self, st: &mut StepContext, worker: u32, run: Running, result: ReconcileResult) {
        let (controller, key, now) = (st.controller, run.key, st.now_ms);
        let requeued = self.queue.done(key);
        let end = EventKind::Controller(ControllerEvent::ReconcileEnd {
            controller,
            key,
            result,
            requeued,
        });
        let id = st.emit(run.start_event, end);
        self.workers[worker as usize] = None;
        let delay_ms = match result {
            // Anvil's controllers requeue 10 s after an error, not rate-limited (semantics.md §8).
            ReconcileResult::Error(_) if st.cfg().anvil => Some(ANVIL_ERROR_REQUEUE_MS),
            _ => self.queue.requeue_delay(key, result, now),
        };
        if let Some(delay_ms) = delay_ms {
            let outcome = self.queue.add_after(key, now + delay_ms);
            let event = EventKind::Controller(ControllerEvent::Enqueue {
                controller,
                key,
                outcome,
                delay_ms,
            });
            let id = st.emit(id, event);
            if outcome == QueueAdd::Added {
                let due = Action::Controller(ControllerAction::QueueAfter {
                    controller,
                    epoch: self.epoch,
                    key,
                });
                st.out.timer(now + delay_ms, id, due);
            }
        }
        // This worker is idle again: it takes the next key (claimed, so a kick in between picks
        // another idle worker).
        self.wake_worker(controller, &mut st.out, worker, id);
    }

    /// The process starts (again): a new life with an empty queue and memory, its informers
    /// listing from scratch (Anvil's: its periodic tick instead).
    pub(super) fn start(&mut self, st: &mut StepContext, cause: EventId) {
        let controller = st.controller;
        let restarted = EventKind::Fault(FaultEvent::Restart {
            controller,
            apiserver: st.apiserver,
        });
        let id = st.emit(cause, restarted);
        let cfg = st.cfg();
        let (anvil, queue_kind) = (cfg.anvil, cfg.queue);
        self.up = true;
        self.epoch = self.epoch.next();
        self.worker_claimed = 0;
        self.queue = WorkQueue::new(queue_kind);
        self.memory.clear();
        self.events.forget();
        self.crash_after_writes.clear();
        self.disconnect_before_write.clear();
        let epoch = self.epoch;
        if anvil {
            let tick = Action::Controller(ControllerAction::AnvilTick { controller, epoch });
            return st.out.timer(st.now_ms, id, tick);
        }
        // Each informer's resync timer starts after its list (`Reflector::arm_resync`).
        for &watcher in &self.reflectors {
            st.out.call(id, Call::StartInformer { watcher });
        }
    }

    /// A crash fault: the process dies now or, with `after_writes`, once its next reconcile has
    /// made that many writes (`step`); with `restart_after_ms`, it starts again that long after.
    pub(super) fn crash_fault(
        &mut self,
        st: &mut StepContext,
        after_writes: Option<u32>,
        restart_after_ms: Option<DurationMs>,
        cause: EventId,
    ) {
        match after_writes {
            Some(n) => self.crash_after_writes.push((n, restart_after_ms)),
            None => {
                self.restart_after_ms = restart_after_ms;
                self.crash(st, cause)
            }
        }
    }

    /// A restart (the timeline's, or one a crash asked for): a process that is up is not
    /// started again.
    pub(super) fn restart(&mut self, st: &mut StepContext, cause: EventId) {
        if !self.up {
            self.start(st, cause);
        }
    }

    /// The process dies: running reconciles end unfinished, its informers stop, and a restart
    /// follows if one was asked for.
    pub(super) fn crash(&mut self, st: &mut StepContext, cause: EventId) {
        if !self.up {
            return;
        }
        let controller = st.controller;
        let id = st.emit(cause, EventKind::Fault(FaultEvent::Crash { controller }));
        for key in self.running_keys() {
            let result = ReconcileResult::Crashed;
            let end = EventKind::Controller(ControllerEvent::ReconcileEnd {
                controller,
                key,
                result,
                requeued: false,
            });
            st.emit(id, end);
        }
        if let Some(d) = self.restart_after_ms.take() {
            let restart = Input::Fault(FaultInput::Restart {
                controller,
                apiserver: None,
            });
            st.out
                .timer(st.now_ms + d.max(DurationMs(1)), id, Action::Input(restart));
        }
        self.die();
        for &watcher in &self.reflectors {
            st.out.call(id, Call::StopInformer { watcher });
        }
    }
}

impl Sim {
    // ----- the engine's side of controllers -----

    /// Runs one step of a controller, then what it posted.
    pub(super) fn step_controller(
        &mut self,
        c: ControllerId,
        step: impl FnOnce(&mut Controller, &mut StepContext),
    ) {
        let from = self.outbox.len();
        let anvil = self.config.controllers[c.index()].anvil;
        let etcd = EtcdReader(&self.etcd);
        let (reflectors, ctl) = (&self.reflectors, &self.controllers[c.index()]);
        let stores = StoreReader::of(reflectors, ctl, &self.etcd.read);
        let cache: &dyn Reader = if anvil { &etcd } else { &stores };
        let link = &self.links[c.index()];
        let connected = link.connected();
        let mut st = StepContext {
            controller: c,
            apiserver: link.apiserver(),
            now_ms: self.now_ms,
            config: &self.config,
            rng: &mut self.rng,
            cache,
            live: connected.then_some(&etcd as &dyn Reader),
            etcd: &self.etcd,
            names: &mut self.names,
            out: Out::new(
                self.now_ms,
                Actor::Controller(c),
                &mut self.sink,
                &mut self.outbox,
            ),
        };
        let ctl = &mut self.controllers[c.index()];
        let up = ctl.up;
        step(ctl, &mut st);
        if up && !ctl.up {
            // The process died in this step: what its link held for it dies with it.
            self.drop_hold(c);
        }
        self.run_outbox(from);
    }

    pub(super) fn enqueue(&mut self, c: ControllerId, key: NameId, cause: EventId, low: bool) {
        let from = self.outbox.len();
        let mut out = Out::new(
            self.now_ms,
            Actor::Controller(c),
            &mut self.sink,
            &mut self.outbox,
        );
        self.controllers[c.index()].enqueue(c, &mut out, key, cause, low);
        self.run_outbox(from);
    }

    /// An idle worker's wake-up, if it is from this life. A reconcile that ran into a limit
    /// stops the run.
    pub(super) fn work(&mut self, c: ControllerId, epoch: Epoch, worker: u32, cause: EventId) {
        if self.in_life(c, epoch) {
            self.step_controller(c, |ctl, st| ctl.work(st, worker, cause));
            if let Some((key, exceeded)) = self.controllers[c.index()].exceeded.take() {
                self.sink.stopped = Some(Stop::Limit {
                    controller: c,
                    key,
                    exceeded,
                });
            }
        }
    }

    /// A running reconcile's next step, if it is from this life.
    pub(super) fn step(&mut self, c: ControllerId, epoch: Epoch, worker: u32, cause: EventId) {
        if self.in_life(c, epoch) {
            self.step_controller(c, |ctl, st| ctl.step(st, worker, cause));
        }
    }

    /// The configured start (`start_ms`), unless another life began before it (a restart).
    pub(super) fn start_controller(&mut self, c: ControllerId, epoch: Epoch, cause: EventId) {
        if self.in_life(c, epoch) {
            self.step_controller(c, |ctl, st| ctl.start(st, cause));
        }
    }

    pub(super) fn crash(&mut self, c: ControllerId, cause: EventId) {
        self.step_controller(c, |ctl, st| ctl.crash(st, cause));
    }

    /// The timeline's crash: now, or armed for a later write.
    pub(super) fn crash_fault(
        &mut self,
        c: ControllerId,
        after_writes: Option<u32>,
        restart_after_ms: Option<DurationMs>,
        cause: EventId,
    ) {
        let crash = |ctl: &mut Controller, st: &mut StepContext| {
            ctl.crash_fault(st, after_writes, restart_after_ms, cause)
        };
        self.step_controller(c, crash);
    }

    /// A restart of the timeline, or the one a crash asked for: against `apiserver` when it
    /// names one (its link moves there first).
    pub(super) fn restart_controller(
        &mut self,
        c: ControllerId,
        apiserver: Option<ApiserverId>,
        cause: EventId,
    ) {
        if let Some(a) = apiserver {
            self.links[c.index()].fail_over(a);
        }
        self.step_controller(c, |ctl, st| ctl.restart(st, cause));
    }

    /// A reconcile's write goes to etcd through the controller's apiserver (refused while the
    /// controller is cut off); its worker learns the result.
    pub(super) fn reconcile_write(
        &mut self,
        c: ControllerId,
        worker: u32,
        write: Write,
        cause: EventId,
        step_cause: EventId,
    ) {
        let ctl = &mut self.controllers[c.index()];
        let made = ctl.workers[worker as usize]
            .as_ref()
            .map(|r| r.done as u32 - 1);
        let armed = ctl
            .disconnect_before_write
            .iter()
            .position(|a| Some(a.0) == made);
        if let Some(i) = armed {
            let (_, duration_ms) = ctl.disconnect_before_write.remove(i);
            self.disconnect(c, duration_ms, cause);
        }
        let (kind, name) = write.object();
        let result = if self.connected(c) {
            self.write(Actor::Controller(c), cause, write)
        } else {
            // The request never reached a server: the client's own error, in the trace as
            // any failed write is, so the reader sees the write that did not happen.
            let error = ApiError::ConnectionRefused;
            let op = write.op();
            let failed = EventKind::Store(StoreEvent::WriteFailed {
                op,
                kind,
                name,
                error,
            });
            self.emit(Actor::Controller(c), cause, failed);
            Err(error)
        };
        self.note_written(c, worker, &result);
        let response_rv = (result.is_ok())
            .then(|| self.etcd.get(kind, name).map(|o| o.rv))
            .flatten();
        let answered = |ctl: &mut Controller, st: &mut StepContext| {
            ctl.written(st, worker, result, response_rv, step_cause)
        };
        self.step_controller(c, answered);
    }

    /// The controller's process died: the server forgets its open watch, its reflector stops.
    pub(super) fn stop_informer(&mut self, w: WatcherId, cause: EventId) {
        if let Some(watch) = self.reflectors[w.index()].watch {
            self.step_server(watch.api, |a, _| a.forget_watch(watch.id));
        }
        self.stop_reflector(w, cause);
    }
}

/// Anvil's requeue after a failed reconcile (its shim layer; semantics.md §8).
const ANVIL_ERROR_REQUEUE_MS: DurationMs = DurationMs(10_000);

/// The informer's resync period: 0 (off), else at least `minimumResyncPeriod`
/// (`client-go/tools/cache/shared_informer.go`), which client-go raises shorter periods to.
pub(super) fn resync_period(resync_ms: DurationMs) -> DurationMs {
    match resync_ms {
        DurationMs::ZERO => DurationMs::ZERO,
        ms => ms.max(RESYNC_MS_MIN),
    }
}

#[cfg(test)]
mod tests {
    use super::super::step::testing::{check, Harness, Stepped};
    use super::*;

    const C: ControllerId = ControllerId(0);

    /// One step of a controller with `workers` workers (a Mirror of kind 0 into kind 1), with
    /// an empty cache and etcd: what it wrote.
    fn run_step(
        ctl: &mut Controller,
        now_ms: TimeMs,
        f: impl FnOnce(&mut Controller, &mut StepContext),
    ) -> Stepped {
        let mut config = Config::new(&["Parent", "Child"]);
        let behaviour = Behaviour::Mirror { target: KindId(1) };
        config
            .controllers
            .push(Config::controller("c", KindId(0), behaviour));
        let etcd = Etcd::new(&config);
        let (mut rng, mut names, mut harness) = (Rng::new(1), Names::default(), Harness::default());
        let reader = EtcdReader(&etcd);
        let mut st = StepContext {
            controller: ControllerId(0),
            apiserver: ApiserverId(0),
            now_ms,
            config: &config,
            rng: &mut rng,
            cache: &reader,
            live: Some(&reader),
            etcd: &etcd,
            names: &mut names,
            out: harness.out(now_ms, Actor::Controller(C)),
        };
        f(ctl, &mut st);
        harness.take()
    }

    fn controller(workers: u32) -> Controller {
        let mut cfg = Config::controller("c", KindId(0), Behaviour::Mirror { target: KindId(1) });
        cfg.workers = workers;
        let mut c = Controller::new(&cfg, vec![]);
        c.up = true;
        c
    }

    fn running(key: NameId, writes: usize, done: usize) -> Running {
        let write = Write::Delete {
            kind: KindId(1),
            name: key,
            uid: None,
        };
        Running {
            key,
            writes: vec![write; writes],
            on_error: vec![],
            memory: vec![],
            rv_from: vec![],
            response_rvs: vec![],
            outcome: None,
            done,
            start_event: 7,
            started_ms: TimeMs::ZERO,
        }
    }

    /// controller-runtime's workers (`controller.go` `Start`: `MaxConcurrentReconciles`
    /// goroutines each looping on `processNextWorkItem`): keys that become ready together go
    /// to distinct idle workers, never two to one.
    #[test]
    fn keys_ready_together_wake_distinct_idle_workers() {
        let mut c = controller(2);
        let out = run_step(&mut c, TimeMs(0), |c, st| {
            for key in [NameId(1), NameId(2), NameId(3)] {
                c.enqueue(st.controller, &mut st.out, key, 0, false);
            }
        });
        let enqueued = |key| {
            EventKind::Controller(ControllerEvent::Enqueue {
                controller: C,
                key: NameId(key),
                outcome: QueueAdd::Added,
                delay_ms: DurationMs::ZERO,
            })
        };
        check(&out, &[enqueued(1), enqueued(2), enqueued(3)]);
        let work = |worker| {
            Action::Controller(ControllerAction::Work {
                controller: C,
                epoch: Epoch(0),
                worker,
            })
        };
        assert_eq!(
            out.soon(),
            [work(0), work(1)],
            "two workers, three keys: each worker once"
        );
        assert_eq!(c.queue.len(), 3);
    }

    /// client-go `util/workqueue/queue.go` `Done`: a key added while it was processed (dirty)
    /// goes back in the queue when its reconcile ends; the end says so, and the page's queue
    /// shows what the event says rather than working the rule out again.
    #[test]
    fn a_reconcile_end_says_whether_the_queue_took_its_dirty_key_back() {
        for dirty in [false, true] {
            let mut c = controller(1);
            let key = NameId(1);
            c.queue.add(key, false);
            c.queue.get();
            if dirty {
                assert_eq!(c.queue.add(key, false), QueueAdd::MarkedDirty);
            }
            c.workers[0] = Some(running(key, 1, 1));
            let out = run_step(&mut c, TimeMs(1000), |c, st| {
                c.written(st, 0, Err(ApiError::Conflict), None, 9)
            });
            let requeued = out.kinds().into_iter().find_map(|k| match k {
                EventKind::Controller(ControllerEvent::ReconcileEnd { requeued, .. }) => {
                    Some(requeued)
                }
                _ => None,
            });
            assert_eq!(requeued, Some(dirty), "dirty {dirty}: {:?}", out.kinds());
            assert_eq!(c.queue.queue.len(), dirty as usize, "waiting now");
        }
    }

    /// `reconcileHandler`: an error ends the reconcile and re-adds the key rate-limited
    /// (`AddRateLimited`), so a failed write is retried after the limiter's delay.
    #[test]
    fn a_failed_write_ends_the_reconcile_and_requeues_the_key_later() {
        let mut c = controller(1);
        let key = NameId(1);
        c.queue.add(key, false);
        c.queue.get();
        c.workers[0] = Some(running(key, 2, 1));
        let out = run_step(&mut c, TimeMs(1000), |c, st| {
            c.written(st, 0, Err(ApiError::Conflict), None, 9)
        });
        let events = out.kinds();
        let EventKind::Controller(ControllerEvent::Enqueue { delay_ms, .. }) = events[1] else {
            panic!("the key is requeued: {events:?}")
        };
        assert!(!delay_ms.is_zero(), "rate-limited, not at once");
        let end = EventKind::Controller(ControllerEvent::ReconcileEnd {
            controller: C,
            key,
            result: ReconcileResult::Error(ApiError::Conflict),
            requeued: false,
        });
        let requeued = EventKind::Controller(ControllerEvent::Enqueue {
            controller: C,
            key,
            outcome: QueueAdd::Added,
            delay_ms,
        });
        check(&out, &[end, requeued]);
        assert_eq!(
            out.events[0].cause, 7,
            "the end names the reconcile's start"
        );
        let due = Action::Controller(ControllerAction::QueueAfter {
            controller: C,
            epoch: Epoch(0),
            key,
        });
        assert_eq!(out.timers(), [(TimeMs(1000) + delay_ms, due)]);
        assert!(
            c.workers[0].is_none(),
            "the worker is free for the next key"
        );
    }

    /// A crash armed "after N writes" fires between write N and N + 1, never before the first.
    #[test]
    fn an_armed_crash_fires_between_writes() {
        let mut c = controller(1);
        c.crash_after_writes = vec![(1, None)];
        c.workers[0] = Some(running(NameId(1), 2, 0));
        let out = run_step(&mut c, TimeMs(0), |c, st| c.step(st, 0, 3));
        let write = Call::Write {
            controller: C,
            worker: 0,
            write: running(NameId(1), 1, 0).writes[0].clone(),
            then: 3,
        };
        assert_eq!(
            out.calls(),
            [write],
            "the first write, never a crash before it"
        );
        check(&out, &[]);
        let out = run_step(&mut c, TimeMs(0), |c, st| c.step(st, 0, 4));
        assert_eq!(out.calls(), [Call::Crash { controller: C }]);
        let out = run_step(&mut c, TimeMs(0), |c, st| c.crash(st, 4));
        let ended = EventKind::Controller(ControllerEvent::ReconcileEnd {
            controller: C,
            key: NameId(1),
            result: ReconcileResult::Crashed,
            requeued: false,
        });
        check(
            &out,
            &[EventKind::Fault(FaultEvent::Crash { controller: C }), ended],
        );
        assert!(!c.up && c.running_keys().is_empty());
    }

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
            on_error: vec![],
            memory: vec![],
            rv_from: vec![],
            response_rvs: vec![],
            outcome: None,
            done: 0,
            start_event: 0,
            started_ms: TimeMs::ZERO,
        });
        c.crash_after_writes = vec![(1, None)];
        assert_eq!(c.running_keys(), [a]);
        assert!(c.in_life(Epoch(0)));
        c.die();
        assert!(!c.up && c.running_keys().is_empty() && c.queue.is_empty());
        assert!(c.crash_after_writes.is_empty());
        assert!(!c.in_life(Epoch(0)) && c.in_life(Epoch(1)));
    }

    /// A crash armed for later only arms; one without `after_writes` kills the process now. A
    /// restart starts a process that is down only.
    #[test]
    fn a_crash_fault_arms_or_kills_and_a_restart_starts_a_process_that_is_down() {
        let mut c = controller(1);
        let restart = Some(DurationMs(100));
        let out = run_step(&mut c, TimeMs(0), |c, st| {
            c.crash_fault(st, Some(2), restart, 0)
        });
        assert!(out.posts.is_empty() && c.up);
        check(&out, &[]);
        assert_eq!(c.crash_after_writes, [(2, restart)]);
        let out = run_step(&mut c, TimeMs(0), |c, st| c.crash_fault(st, None, None, 0));
        check(
            &out,
            &[EventKind::Fault(FaultEvent::Crash { controller: C })],
        );
        assert!(!c.up);
        let out = run_step(&mut c, TimeMs(10), |c, st| c.restart(st, 1));
        let restarted = EventKind::Fault(FaultEvent::Restart {
            controller: C,
            apiserver: ApiserverId(0),
        });
        check(&out, &[restarted]);
        assert!(c.up);
        let out = run_step(&mut c, TimeMs(20), |c, st| c.restart(st, 2));
        check(&out, &[]);
        assert!(
            out.posts.is_empty(),
            "a process that is up is not started again"
        );
    }
}
