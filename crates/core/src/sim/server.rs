//! The engine's side of etcd and the apiservers: etcd's commit (with its fan-out to the
//! caches and etcd's own watches), the garbage collector over etcd's owner index, compaction;
//! routing requests to an apiserver and running its steps (`apiserver.rs`, `serve.rs`).

use super::*;

impl Sim {
    // ----- etcd and the apiservers -----

    /// Commits one write to etcd, emits it, and fans it out to the caches.
    pub(super) fn write(
        &mut self,
        actor: Actor,
        cause: EventId,
        w: Write,
    ) -> Result<EventId, ApiError> {
        match self.etcd.decide(w, &self.names, self.now_ms) {
            Ok(Decision::Commit { op, event, obj }) => {
                Ok(self.commit(actor, cause, op, event, obj))
            }
            Ok(Decision::NoOp { kind, name }) => {
                Ok(self.emit(actor, cause, EventKind::NoOpWrite { kind, name }))
            }
            Err(Refusal {
                op,
                kind,
                name,
                error,
            }) => {
                let failed = EventKind::WriteFailed {
                    op,
                    kind,
                    name,
                    error,
                };
                self.emit(actor, cause, failed);
                Err(error)
            }
        }
    }

    /// Commits a write etcd accepted, emits it, and fans the change out: to the garbage
    /// collector, every apiserver's cache (after its lag), etcd's own watches, ESR.
    pub(super) fn commit(
        &mut self,
        actor: Actor,
        cause: EventId,
        op: WriteOp,
        event: EventType,
        obj: Object,
    ) -> EventId {
        let change = self.etcd.commit(obj, event, self.now_ms);
        let obj = change.object;
        let write = EventKind::Write {
            op,
            kind: obj.kind,
            name: obj.name,
            rv: obj.rv,
            spec: obj.spec,
            status: obj.status,
        };
        let id = self.emit(actor, cause, write);
        self.gc_notice(&obj, event, id);
        for a in 0..self.apiservers.len() {
            let api = ApiserverId(a as u8);
            let lag = self.apiservers[a].lag_ms;
            if lag.is_zero() {
                self.cache_apply(api, change, id);
            } else {
                self.schedule(self.now_ms + lag, id, Action::CacheApply { api, change });
            }
        }
        self.etcd_watch_fanout(change, id);
        self.track_esr(obj, event != EventType::Deleted);
        id
    }

    /// `pkg/controller/garbagecollector`: the collector's graph learns of a change after
    /// `gc_delay_ms` and looks at each dependent etcd names (`Etcd::gc_candidates`); one whose
    /// owners are all gone is deleted (background propagation). Foreground deletion is not
    /// modelled.
    fn gc_notice(&mut self, obj: &Object, event: EventType, cause: EventId) {
        let at = self.now_ms + self.config.gc_delay_ms;
        for (kind, name, uid) in self.etcd.gc_candidates(obj, event) {
            self.schedule(at, cause, Action::Gc { kind, name, uid });
        }
    }

    pub(super) fn collect_garbage(&mut self, kind: KindId, name: NameId, uid: u64, cause: EventId) {
        if self.etcd.is_orphan(kind, name, uid) {
            let uid = Some(uid);
            let delete = Write::Delete { kind, name, uid };
            let _ = self.write(Actor::GarbageCollector, cause, delete);
        }
    }

    /// etcd's compaction tick: the compaction's event when it moved, and the next tick.
    pub(super) fn compact_tick(&mut self) {
        if let Some(rev) = self.etcd.compact_tick() {
            self.emit(Actor::Etcd, NO_CAUSE, EventKind::Compacted { rev });
        }
        let next = self.now_ms + self.config.compaction_ms;
        self.schedule(next, NO_CAUSE, Action::CompactTick);
    }

    // ----- the apiservers: routing and steps -----

    /// Runs one step of an apiserver and applies what it returns.
    pub(super) fn step_server(
        &mut self,
        api: ApiserverId,
        step: impl FnOnce(&mut Apiserver, &mut apiserver::StepContext),
    ) {
        let outer = self.begin_step();
        self.run_server(api, step);
        self.end_step(Actor::Apiserver(api), outer);
    }

    /// `step_server` for a step that names one of its events for what the engine does next.
    fn step_server_naming<R>(
        &mut self,
        api: ApiserverId,
        step: impl FnOnce(&mut Apiserver, &mut apiserver::StepContext) -> (Option<Cause>, R),
    ) -> (Option<EventId>, R) {
        let outer = self.begin_step();
        let (named, result) = self.run_server(api, step);
        let actor = Actor::Apiserver(api);
        match named {
            Some(cause) => (Some(self.end_step_naming(actor, outer, cause)), result),
            None => {
                self.end_step(actor, outer);
                (None, result)
            }
        }
    }

    fn run_server<R>(
        &mut self,
        api: ApiserverId,
        step: impl FnOnce(&mut Apiserver, &mut apiserver::StepContext) -> R,
    ) -> R {
        let mut st = apiserver::StepContext {
            api,
            now_ms: self.now_ms,
            config: &self.config,
            etcd: &self.etcd,
            clients: Clients {
                reflectors: &self.reflectors,
                controllers: &self.controllers,
            },
            watches: &mut self.watches,
            out: &mut self.effects,
        };
        step(&mut self.apiservers[api.index()], &mut st)
    }

    /// A change from etcd reaches an apiserver's caches, then every watch its cache feeds.
    pub(super) fn cache_apply(&mut self, api: ApiserverId, change: Change, cause: EventId) {
        let by = Cause::Event(cause);
        let (added, ()) = self.step_server_naming(api, |a, st| (a.change(st, change, by), ()));
        if let Some(id) = added {
            self.fan_out(api, change, id);
        }
    }

    /// Routes a change a cache took to each watch of its kind at that apiserver, in the order
    /// they opened (`cacher.go` `dispatchEvent`); each takes it or not (`ServerWatch::offer`).
    /// This is the engine's, not a step's: it is the hottest path, one message per watcher per
    /// write, and a send is cheaper than an effect and a send. A watch too slow for the change
    /// closes at its apiserver; nothing opens one meanwhile, so the list is walked as it was,
    /// then loses the watches that closed.
    fn fan_out(&mut self, api: ApiserverId, change: Change, cause: EventId) {
        let kind = change.object.kind;
        let watches = std::mem::take(self.apiservers[api.index()].watches_of(kind));
        let (cap, mut closed) = (self.config.watch_chan_capacity, false);
        for &watch in &watches {
            let watcher = self.watches[watch.index()].watcher;
            let c = self.controller_of(watcher);
            let slow_link = !self.controllers[c.index()].link_delay_ms.is_zero();
            let w = &mut self.watches[watch.index()];
            match w.offer(&change, true, slow_link, cap) {
                Offer::Skip => {}
                Offer::Send => {
                    let session = w.session;
                    let live = true;
                    let msg = Msg::Event {
                        watch,
                        change,
                        live,
                    };
                    self.send_to_client(watcher, session, cause, msg);
                }
                Offer::TooSlow => {
                    closed = true;
                    self.close_watch(watch, WatchEnd::TooSlow, cause);
                }
            }
        }
        let list = self.apiservers[api.index()].watches_of(kind);
        *list = watches;
        if closed {
            list.retain(|w| self.watches[w.index()].open);
        }
    }

    /// Freezes or thaws an apiserver's caches; thawing applies what was held, in order.
    pub(super) fn pause_cache(&mut self, api: ApiserverId, paused: bool, cause: EventId) {
        let by = Cause::Event(cause);
        let (id, (held, progress)) = self.step_server_naming(api, |a, st| {
            let (id, held, progress) = a.pause(st, paused, by);
            (Some(id), (held, progress))
        });
        let id = id.expect("a pause is an event");
        for change in held {
            self.cache_apply(api, change, id);
        }
        if progress > 0 {
            let by = Cause::Event(id);
            self.step_server(api, |a, st| a.progress_notified(st, progress, by));
        }
    }

    /// The apiserver restarts: every cache re-initialises.
    pub(super) fn restart_apiserver(
        &mut self,
        api: ApiserverId,
        down_ms: DurationMs,
        cause: EventId,
    ) {
        let cause = Cause::Event(cause);
        self.step_server(api, |a, st| a.restart(st, down_ms, cause));
    }

    /// One kind's cache re-initialises, as after a failed etcd watch.
    pub(super) fn reinit_cache(
        &mut self,
        api: ApiserverId,
        kind: KindId,
        down_ms: DurationMs,
        cause: EventId,
    ) {
        let cause = Cause::Event(cause);
        self.step_server(api, |a, st| a.reinit(st, Some(kind), down_ms, cause));
    }

    /// etcd's watch events for kinds without a cache go to the watches the apiservers relay
    /// from etcd, in the order the watches opened.
    pub(super) fn etcd_watch_fanout(&mut self, change: Change, cause: EventId) {
        if self.config.kinds[change.object.kind.index()].cache != CacheMode::Off {
            return;
        }
        for i in 0..self.watches.len() {
            let w = &self.watches[i];
            if w.open && w.from_etcd && w.kind == change.object.kind {
                let (api, watch, cause) = (w.apiserver, WatchId(i as u32), Cause::Event(cause));
                self.step_server(api, |a, st| a.relay(st, watch, change, cause));
            }
        }
    }

    /// A watch's bookmark is due, at the apiserver that serves it.
    pub(super) fn bookmark_due(&mut self, watch: WatchId, cause: EventId) {
        let api = self.watches[watch.index()].apiserver;
        let cause = Cause::Event(cause);
        self.step_server(api, |a, st| a.bookmark_due(st, watch, cause));
    }

    /// Ends a watch at its apiserver.
    pub(super) fn close_watch(&mut self, watch: WatchId, reason: WatchEnd, cause: EventId) {
        let api = self.watches[watch.index()].apiserver;
        let cause = Cause::Event(cause);
        self.step_server(api, |a, st| a.close_watch(st, watch, reason, cause));
    }

    /// The apiserver a watcher's request reaches, or None after refusing it (link down).
    fn route(
        &mut self,
        watcher: WatcherId,
        session: Session,
        cause: EventId,
        refuse: fn(ApiError) -> Msg,
    ) -> Option<ApiserverId> {
        let c = self.controller_of(watcher);
        if self.connected(c) {
            return Some(self.controllers[c.index()].apiserver);
        }
        self.send_to_client(watcher, session, cause, refuse(ApiError::ConnectionRefused));
        None
    }

    /// A request from a watcher: routed to its controller's apiserver (refused with `refuse`
    /// while the link is down), which serves it.
    pub(super) fn serve(
        &mut self,
        (watcher, session): (WatcherId, Session),
        refuse: fn(ApiError) -> Msg,
        cause: EventId,
        serve: impl FnOnce(&mut Apiserver, &mut apiserver::StepContext, Cause),
    ) {
        if let Some(api) = self.route(watcher, session, cause, refuse) {
            self.step_server(api, |a, st| serve(a, st, Cause::Event(cause)));
        }
    }

    /// A probe's request: the next probe number, to the apiserver it names.
    pub(super) fn probe(
        &mut self,
        api: ApiserverId,
        kind: KindId,
        request: ProbeRequest,
        cause: EventId,
    ) {
        let probe = self.probes;
        self.probes += 1;
        let cause = Cause::Event(cause);
        self.step_server(api, |a, st| a.probe(st, (probe, kind), request, cause));
    }
}
