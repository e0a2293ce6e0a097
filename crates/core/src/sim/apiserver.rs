//! An apiserver: its watch caches, the reads waiting for them, and the watches it serves.

use super::serve::{ListRequest, RequestScope, Requester, WatchRequest};
use super::*;

#[derive(Clone, Debug, Hash)]
pub struct Apiserver {
    pub(super) caches: Vec<WatchCache>,
    pub(super) paused: bool,
    /// Changes held back while paused, applied on resume.
    pub(super) held: VecDeque<Change>,
    pub(super) lag_ms: DurationMs,
    /// The watches it has served, by `WatchId` (its own numbering: they opened in that order);
    /// closed ones stay, as a `WatchId` in a late message or timer still names one.
    pub(super) watches: Vec<ServerWatch>,
    /// Open watches served by each kind's cache.
    pub(super) watches_by_kind: Vec<Vec<WatchId>>,
    /// Reads waiting (at most 3 s) for the cache to reach a revision.
    pub(super) waiting_reads: Vec<WaitingRead>,
    /// The newest etcd progress notification that arrived while paused.
    pub(super) held_progress: Rv,
    /// The last re-initialisation's number, and per kind the one that last emptied its cache:
    /// a cache's ready timer counts only if no later re-initialisation emptied it again (a
    /// re-initialisation of another kind leaves it alone).
    pub(super) generation: Generation,
    pub(super) emptied_by: Vec<Generation>,
    /// Serving as client-go's fake clientset does (`serve.rs` `fake_*`): no caches at all.
    pub(super) fake: Option<FakeTracker>,
    /// Its streaming lists end with a bookmark that lacks `k8s.io/initial-events-end`.
    pub(super) omits_initial_events_end: bool,
    /// Requests waiting for a cache to be ready (without `ResilientWatchCacheInitialization`).
    pub(super) parked: Vec<Parked>,
}

/// A request that waits until its kind's cache is ready: before
/// `ResilientWatchCacheInitialization` (1.31) the cacher blocks watches, streaming lists and
/// lists at an RV "N" on `c.ready.wait` instead of answering 429.
#[derive(Clone, Debug, Hash)]
pub(super) enum Parked {
    List {
        requester: Requester,
        request: ListRequest,
    },
    WatchList {
        watcher: WatcherId,
        session: Session,
        rv: ListRv,
        timeout_ms: DurationMs,
        scope: RequestScope,
    },
    Watch {
        requester: Requester,
        request: WatchRequest,
    },
}

impl Apiserver {
    /// Its caches, each listed (empty) at revision 1.
    pub(super) fn new(config: &Config, a: &crate::config::ApiserverConfig) -> Apiserver {
        let cache = |mode| {
            let mut c = WatchCache::new(mode);
            c.replace(std::iter::empty(), 1);
            c
        };
        Apiserver {
            caches: config.kinds.iter().map(|k| cache(k.cache)).collect(),
            paused: false,
            held: VecDeque::new(),
            lag_ms: a.lag_ms,
            watches: vec![],
            watches_by_kind: vec![vec![]; config.kinds.len()],
            waiting_reads: vec![],
            held_progress: 0,
            generation: Generation(0),
            emptied_by: vec![Generation(0); config.kinds.len()],
            fake: a.fake,
            omits_initial_events_end: a.omits_initial_events_end,
            parked: vec![],
        }
    }
}

impl Apiserver {
    /// Its watch caches, by kind.
    pub fn caches(&self) -> &[WatchCache] {
        &self.caches
    }

    /// The watches it has served (open or closed), in the order they opened.
    pub fn watches(&self) -> &[ServerWatch] {
        &self.watches
    }
}

/// A watch as the engine and its client name it: the apiserver that serves it and its
/// `WatchId` there. The messages of a watch's stream and its timers carry it.
#[derive(Clone, Copy, Debug, Hash, PartialEq, Eq)]
pub(super) struct WatchRef {
    pub api: ApiserverId,
    pub id: WatchId,
}

/// What an apiserver reads of the world during one step, and where it writes: never its
/// clients (a request carries what it names, `RequestScope`), nor another apiserver's watches
/// (each `Apiserver` owns its own).
pub(super) struct StepContext<'a> {
    pub api: ApiserverId,
    pub now_ms: TimeMs,
    pub config: &'a Config,
    pub etcd: &'a Etcd,
    /// Names, for a field selector on `metadata.name` (objects are named `namespace/name`).
    pub names: &'a crate::model::Names,
    pub out: Out<'a>,
}

impl StepContext<'_> {
    pub fn emit(&mut self, cause: EventId, kind: EventKind) -> EventId {
        self.out.emit(cause, kind)
    }

    /// Sends a message over the watcher's link.
    pub fn send(&mut self, cause: EventId, watcher: WatcherId, session: Session, msg: Msg) {
        self.out.send_to_client(cause, watcher, session, msg)
    }

    /// How its apiserver's watch `id` is named outside it.
    pub fn watch_ref(&self, id: WatchId) -> WatchRef {
        WatchRef { api: self.api, id }
    }

    /// Sends one change to a watch's client over its link.
    pub fn watch_event(&mut self, cause: EventId, w: &ServerWatch, change: Change, live: bool) {
        let msg = Msg::Event {
            watch: self.watch_ref(w.id),
            change: Arc::new(change),
            live,
        };
        self.send(cause, w.watcher, w.session, msg);
    }
}

impl Apiserver {
    /// A change from etcd's watch: held while paused; dropped for a kind served without a cache
    /// or by a cache not ready; otherwise added to its kind's cache. Returns what the cache
    /// evicted and its capacity after, when it took the change.
    pub(super) fn apply_change(
        &mut self,
        change: Change,
        progress_notify: bool,
    ) -> Option<(u32, u32)> {
        let kind = change.object.kind.index();
        if self.caches[kind].mode() == CacheMode::Off || self.fake.is_some() {
            return None;
        }
        if self.paused {
            self.held.push_back(change);
            return None;
        }
        if !self.caches[kind].ready() {
            return None;
        }
        // etcd progress notifications (`EfficientWatchResumption`, 1.21) move every other
        // kind's cache to the same revision, so a list's RV is usually above its largest item
        // and bookmarks move quiet watchers forward. Without them a cache's RV moves only with
        // its own kind's events.
        for (k, other) in self.caches.iter_mut().enumerate() {
            if progress_notify && k != kind {
                other.progress(change.object.rv);
            }
        }
        let cache = &mut self.caches[kind];
        let out = cache.add(change);
        Some((out.evicted, cache.capacity()))
    }

    /// Pauses or resumes its caches. A resume hands back what was held: the changes in order,
    /// and the newest progress notification (0: none).
    pub(super) fn set_paused(&mut self, paused: bool) -> (Vec<Change>, Rv) {
        self.paused = paused;
        if paused {
            return (vec![], 0);
        }
        let held = self.held.drain(..).collect();
        (held, std::mem::take(&mut self.held_progress))
    }

    /// An etcd progress notification: every ready cache has seen `rev` (kept for the resume
    /// while paused). Returns whether the caches moved.
    pub(super) fn progress(&mut self, rev: Rv) -> bool {
        if self.paused {
            self.held_progress = self.held_progress.max(rev);
            return false;
        }
        for cache in &mut self.caches {
            cache.progress(rev);
        }
        true
    }
}

/// The watch cache side (`cacher.go`, `watch_cache.go`): each entry point takes a change, a
/// notification, a fault or a timer and writes its events and messages.
impl Apiserver {
    /// A change from etcd's watch (`cacher.go` `processEvent`): into its kind's cache, then to
    /// the reads it made fresh. Returns its `CacheAdd` when the cache took it: the engine then
    /// offers the change to every watch of that kind (`watches_of`).
    pub(super) fn change(
        &mut self,
        st: &mut StepContext,
        change: Change,
        cause: EventId,
    ) -> Option<EventId> {
        let (kind, rv, name) = (change.object.kind, change.object.rv, change.object.name);
        let progress_notify = st.config.server.progress_notify;
        let (evicted, capacity) = self.apply_change(change, progress_notify)?;
        let add = EventKind::Store(StoreEvent::CacheAdd {
            apiserver: st.api,
            kind,
            rv,
            name,
            evicted,
            capacity,
        });
        let id = st.emit(cause, add);
        self.wake_reads(st, id);
        Some(id)
    }

    /// The watches its cache of `kind` feeds, in the order they opened.
    pub(super) fn watches_of(&mut self, kind: KindId) -> &mut Vec<WatchId> {
        &mut self.watches_by_kind[kind.index()]
    }

    /// Asks etcd for a progress notification on its watch: it travels behind every change
    /// already on its way (the apiserver's lag), then moves every ready cache to that revision.
    pub(super) fn request_progress(&mut self, st: &mut StepContext, cause: EventId) {
        let rev = st.etcd.rev();
        match self.lag_ms {
            DurationMs::ZERO => self.progress_notified(st, rev, cause),
            lag => {
                let api = st.api;
                let progress = Action::Server(ServerAction::CacheProgress { api, rev });
                st.out.timer(st.now_ms + lag, cause, progress)
            }
        }
    }

    /// etcd's progress notification arrives: the reads it made fresh are answered.
    pub(super) fn progress_notified(&mut self, st: &mut StepContext, rev: Rv, cause: EventId) {
        if self.progress(rev) {
            self.wake_reads(st, cause);
        }
    }

    /// Freezes or thaws the caches. Returns its `CachePaused` and, on a thaw, what was held: the
    /// changes, for the engine to apply in order, and the newest progress notification (0:
    /// none).
    pub(super) fn pause(
        &mut self,
        st: &mut StepContext,
        paused: bool,
        cause: EventId,
    ) -> (EventId, Vec<Change>, Rv) {
        let apiserver = st.api;
        let id = st.emit(
            cause,
            EventKind::Fault(FaultEvent::CachePaused { apiserver, paused }),
        );
        let (mut held, progress) = self.set_paused(paused);
        // The cache's etcd watch resumes from the cache's revision + 1; if etcd compacted past
        // it the watch fails with ErrCompacted and the cacher relists etcd (`cacher.go`: its
        // reflector's watch ends, `watchCache.Replace` follows), closing its client watches.
        // Its held changes are then history the relist replaces, not events to replay.
        let compact_rev = st.etcd.compact_rev();
        let behind: Vec<KindId> = (0..self.caches.len())
            .map(|k| KindId(k as u16))
            .filter(|&k| {
                let cache = &self.caches[k.index()];
                cache.ready()
                    && cache.mode() != CacheMode::Off
                    && cache.rv() + 1 < compact_rev
                    && held.iter().any(|c| c.object.kind == k)
            })
            .collect();
        if !behind.is_empty() {
            held.retain(|c| !behind.contains(&c.object.kind));
            for kind in behind {
                self.reinit(st, Some(kind), CACHE_RELIST_MS, id);
            }
        }
        (id, held, progress)
    }

    /// The apiserver restarts: every cache re-initialises.
    pub(super) fn restart(&mut self, st: &mut StepContext, down_ms: DurationMs, cause: EventId) {
        let apiserver = st.api;
        let restart = EventKind::Fault(FaultEvent::ApiserverRestart { apiserver, down_ms });
        let id = st.emit(cause, restart);
        self.reinit(st, None, down_ms, id);
    }

    /// One cache (or all) re-initialises: not ready for `down_ms`, its watches closed.
    pub(super) fn reinit(
        &mut self,
        st: &mut StepContext,
        only: Option<KindId>,
        down_ms: DurationMs,
        cause: EventId,
    ) {
        self.generation = self.generation.next();
        let generation = self.generation;
        let kinds = self.kinds(only);
        for &k in &kinds {
            self.emptied_by[k.index()] = generation;
            self.caches[k.index()].reinitialise();
        }
        if only.is_none() {
            self.held.clear();
            self.held_progress = 0;
            self.paused = false;
        }
        let api = st.api;
        let to_close: Vec<WatchId> = (self.watches.iter())
            .filter(|w| w.open && only.is_none_or(|k| w.kind == k))
            .map(|w| w.id)
            .collect();
        for &kind in &kinds {
            let list_rv = self.caches[kind.index()].list_rv();
            let reset = EventKind::Store(StoreEvent::CacheReset {
                apiserver: api,
                kind,
                list_rv,
                ready: false,
            });
            st.emit(cause, reset);
        }
        for w in to_close {
            self.close_watch(st, w, WatchEnd::ServerClosed, cause);
        }
        let kind = only;
        let ready = Action::Server(ServerAction::CacheReady {
            api,
            kind,
            generation,
        });
        st.out.timer(st.now_ms + down_ms, cause, ready);
    }

    /// One kind, or every kind.
    fn kinds(&self, only: Option<KindId>) -> Vec<KindId> {
        match only {
            Some(k) => vec![k],
            None => (0..self.caches.len()).map(|k| KindId(k as u16)).collect(),
        }
    }

    /// The caches a re-initialisation of `generation` emptied list etcd and are ready again
    /// (`watchCache.Replace`); a later re-initialisation of the same cache makes this one stale
    /// for it.
    pub(super) fn ready(
        &mut self,
        st: &mut StepContext,
        only: Option<KindId>,
        generation: Generation,
        cause: EventId,
    ) {
        let kinds: Vec<KindId> = (self.kinds(only).into_iter())
            .filter(|k| self.emptied_by[k.index()] == generation)
            .collect();
        if kinds.is_empty() {
            return;
        }
        for kind in kinds {
            let cache = &mut self.caches[kind.index()];
            if cache.mode() == CacheMode::Off {
                continue;
            }
            let rev = st.etcd.rev();
            cache.replace(EtcdReader(st.etcd).kind_objects(kind).into_iter(), rev);
            let reset = EventKind::Store(StoreEvent::CacheReset {
                apiserver: st.api,
                kind,
                list_rv: rev,
                ready: true,
            });
            st.emit(cause, reset);
        }
        self.unpark(st, cause);
    }

    /// Parks a request until its kind's cache is ready (`c.ready.wait` before 1.31).
    pub(super) fn park(&mut self, request: Parked) {
        self.parked.push(request);
    }

    /// Serves, in arrival order, the parked requests whose caches are ready now.
    fn unpark(&mut self, st: &mut StepContext, cause: EventId) {
        let kind_of = |p: &Parked| match p {
            Parked::List { request, .. } => request.scope.kind,
            Parked::Watch { request, .. } => request.scope.kind,
            Parked::WatchList { scope, .. } => scope.kind,
        };
        let (ready, waiting): (Vec<Parked>, Vec<Parked>) = std::mem::take(&mut self.parked)
            .into_iter()
            .partition(|p| self.caches[kind_of(p).index()].ready());
        self.parked = waiting;
        for p in ready {
            match p {
                Parked::List { requester, request } => self.list(st, requester, request, cause),
                Parked::WatchList {
                    watcher,
                    session,
                    rv,
                    timeout_ms,
                    scope,
                } => self.serve_watch_list(st, (watcher, session), (rv, timeout_ms), scope, cause),
                Parked::Watch { requester, request } => self.watch(st, requester, request, cause),
            }
        }
    }

    /// A read the cache answers once it has seen `r.rv` (`cacher.go` `waitUntilFreshAndBlock`):
    /// now if it has, else when it does, within 3 s.
    pub(super) fn read_when_fresh(&mut self, st: &mut StepContext, r: WaitingRead, cause: EventId) {
        if self.fresh_for(&r) {
            self.answer_read(st, r, cause);
        } else {
            self.wait_for_cache(st, r, cause);
        }
    }

    /// Whether the cache `r` reads is ready and has seen `r.rv`.
    fn fresh_for(&self, r: &WaitingRead) -> bool {
        let cache = &self.caches[r.scope.kind.index()];
        cache.ready() && cache.rv() >= r.rv
    }

    /// A fresh cache answers a read: a list, or a streaming list's initial events (only
    /// reflectors stream).
    fn answer_read(&mut self, st: &mut StepContext, r: WaitingRead, cause: EventId) {
        match r.read {
            Waiting::List { requester, .. } => {
                self.answer_list_from_cache(st, requester, &r.scope, cause)
            }
            Waiting::WatchList {
                watcher,
                session,
                timeout_ms,
            } => self.answer_watch_list(st, (watcher, session), &r.scope, timeout_ms, cause),
        }
    }

    /// Parks a read until the cache reaches `rv`, for at most 3 s (`cacher.go`
    /// `waitUntilFreshAndBlock`).
    fn wait_for_cache(&mut self, st: &mut StepContext, r: WaitingRead, cause: EventId) {
        let (watcher, session) = r.requester().deadline_key();
        self.waiting_reads.push(r);
        let deadline = Action::Server(ServerAction::ListDeadline {
            watcher,
            session,
            api: st.api,
        });
        st.out.timer(st.now_ms + LIST_WAIT_MS, cause, deadline);
    }

    /// Answers every waiting read whose cache has now reached its revision.
    fn wake_reads(&mut self, st: &mut StepContext, cause: EventId) {
        if self.waiting_reads.is_empty() {
            return;
        }
        let (done, keep): (Vec<WaitingRead>, Vec<WaitingRead>) =
            std::mem::take(&mut self.waiting_reads)
                .into_iter()
                .partition(|r| self.fresh_for(r));
        self.waiting_reads = keep;
        for r in done {
            self.answer_read(st, r, cause);
        }
    }

    /// A waiting read's 3 s are up (`cacher.go`, `delegator.go`): a NotOlderThan list and a
    /// streaming list get 504 "Too large resource version"; a consistent list goes to etcd.
    pub(super) fn read_deadline(
        &mut self,
        st: &mut StepContext,
        watcher: WatcherId,
        session: Session,
        cause: EventId,
    ) {
        let waiting = &mut self.waiting_reads;
        let Some(i) =
            (waiting.iter()).position(|w| w.requester().deadline_key() == (watcher, session))
        else {
            return;
        };
        let r = waiting.remove(i);
        let current = self.caches[r.scope.kind.index()].rv();
        let err = ApiError::TooLargeRv {
            requested: r.rv,
            current: IssuedRv::new(current),
        };
        match r.read {
            Waiting::List {
                requester,
                read: ReadKind::NotOlderThan,
            } => self.list_refused(st, requester, err, cause),
            Waiting::WatchList { .. } => st.send(cause, watcher, session, Msg::WatchListErr(err)),
            Waiting::List {
                requester,
                read: ReadKind::Consistent { limit },
            } => self.answer_list_from_etcd(st, requester, &r.scope, (None, limit), cause),
        }
    }
}

/// A read the cache answers once it has seen `rv` (`cacher.go` `waitUntilFreshAndBlock`),
/// with what its request names.
#[derive(Clone, Debug, Hash, PartialEq, Eq)]
pub(super) struct WaitingRead {
    pub(super) rv: Rv,
    pub(super) scope: RequestScope,
    pub(super) read: Waiting,
}

/// What waits: a list (a reflector's or a probe's), or a streaming list's initial events,
/// which only a reflector asks for.
#[derive(Clone, Copy, Debug, Hash, PartialEq, Eq)]
pub(super) enum Waiting {
    List {
        requester: Requester,
        read: ReadKind,
    },
    /// 504 after 3 s.
    WatchList {
        watcher: WatcherId,
        session: Session,
        timeout_ms: DurationMs,
    },
}

impl WaitingRead {
    /// Who asked.
    pub(super) fn requester(&self) -> Requester {
        match self.read {
            Waiting::List { requester, .. } => requester,
            Waiting::WatchList {
                watcher, session, ..
            } => Requester::Reflector { watcher, session },
        }
    }
}

/// How a waiting list is answered once its 3 s are up.
#[derive(Clone, Copy, Debug, Hash, PartialEq, Eq)]
pub(super) enum ReadKind {
    /// `resourceVersion=N`: 504 "Too large resource version" after 3 s.
    NotOlderThan,
    /// `resourceVersion=""` (ConsistentListFromCache): after 3 s delegated to etcd.
    Consistent { limit: u32 },
}

/// The `watcher` of a probe's waiting read: probes are not reflectors.
pub(super) const PROBE_WATCHER: WatcherId = WatcherId(u16::MAX);

/// A watch as the server holds it.
#[derive(Clone, Debug, Hash)]
pub struct ServerWatch {
    /// Its number at its apiserver (its index in `Apiserver::watches`).
    pub(super) id: WatchId,
    pub(super) watcher: WatcherId,
    pub(super) session: Session,
    pub(super) kind: KindId,
    pub(super) namespace: Option<NameId>,
    /// Its label selector: a change is converted (`Selector::convert`) or skipped.
    pub(super) selector: Option<Arc<crate::object::Selector>>,
    /// The request's `allowWatchBookmarks`.
    pub(super) bookmarks: bool,
    pub(super) from_etcd: bool,
    pub(super) last_sent: Rv,
    /// The RV its initial replay ended at (the RV it started from when it replayed nothing):
    /// a bookmark goes out only when the cache's RV is past it (`cache_watcher.go` `process`).
    pub(super) replayed_to: Rv,
    pub(super) deadline_ms: TimeMs,
    pub(super) open: bool,
    pub(super) in_flight: u32,
}

/// What a watch does with a change offered to it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Offer {
    Skip,
    Send,
    /// Its channel is full: the watch closes (`WatchEnd::TooSlow`).
    TooSlow,
    /// Send it as this event instead (a watch with a selector: the object entered or left it).
    SendAs(EventType),
}

impl ServerWatch {
    /// `cache_watcher.go`: a change goes to an open watch when it is newer than what the watch
    /// sent and in its namespace. Only `live` changes count towards closing a watcher too slow to
    /// drain its channel (`slow_link`: they wait in it until the client takes them); the initial
    /// replay (`processInterval`) blocks instead.
    pub(super) fn offer(
        &mut self,
        change: &Change,
        live: bool,
        slow_link: bool,
        cap: u32,
        names: &crate::model::Names,
    ) -> Offer {
        if !self.open || change.object.rv <= self.last_sent {
            return Offer::Skip;
        }
        if self
            .namespace
            .is_some_and(|ns| ns != change.object.namespace)
        {
            return Offer::Skip;
        }
        let converted = match &self.selector {
            None => None,
            Some(sel) => match sel.convert(change, names) {
                None => return Offer::Skip,
                Some(e) => Some(e).filter(|&e| e != change.event),
            },
        };
        self.last_sent = change.object.rv;
        if live && slow_link {
            self.in_flight += 1;
            if self.in_flight > cap {
                return Offer::TooSlow;
            }
        }
        converted.map_or(Offer::Send, Offer::SendAs)
    }

    /// The client took a live event off the watch's channel.
    #[inline]
    pub(super) fn taken(&mut self) {
        self.in_flight = self.in_flight.saturating_sub(1);
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::super::step::testing::{Harness, Stepped};
    use super::*;

    /// What an apiserver reads in a step, for tests of the apiserver alone: one kind ("Pod")
    /// whose watch cache keeps `capacity` events, one controller with one informer on it.
    pub(in crate::sim) struct World {
        pub config: Config,
        pub etcd: Etcd,
        pub reflectors: Vec<Reflector>,
    }

    impl World {
        pub fn new(capacity: u32) -> World {
            let mut config = Config::new(&["Pod"]);
            config.kinds[0].cache = CacheMode::Fixed { capacity };
            let behaviour = crate::config::Behaviour::Mirror { target: KindId(0) };
            config
                .controllers
                .push(Config::controller("c", KindId(0), behaviour));
            let r = Reflector::new(ControllerId(0), KindId(0), None, vec![], DurationMs(800));
            World {
                etcd: Etcd::new(&config),
                reflectors: vec![r],
                config,
            }
        }

        pub fn apiserver(&self) -> Apiserver {
            Apiserver::new(&self.config, &self.config.apiservers[0])
        }

        /// A list by its informer.
        pub fn list(&self, (rv, limit): (ListRv, u32)) -> ListRequest {
            let scope = self.reflectors[0].scope(&self.config);
            ListRequest { rv, limit, scope }
        }

        /// A watch by its informer, after `from`.
        pub fn watch(&self, (from, timeout_ms): (Rv, DurationMs)) -> WatchRequest {
            let from = super::super::serve::WatchFrom::Rv(from);
            let scope = self.reflectors[0].scope(&self.config);
            WatchRequest {
                from,
                timeout_ms,
                scope,
            }
        }

        /// One step of `api` at `now_ms`: what it wrote.
        pub fn step(
            &mut self,
            api: &mut Apiserver,
            now_ms: TimeMs,
            f: impl FnOnce(&mut Apiserver, &mut StepContext),
        ) -> Stepped {
            let mut harness = Harness::default();
            let actor = Actor::Apiserver(ApiserverId(0));
            let mut st = StepContext {
                api: ApiserverId(0),
                now_ms,
                config: &self.config,
                etcd: &self.etcd,
                names: &crate::model::Names::default(),
                out: harness.out(now_ms, actor),
            };
            f(api, &mut st);
            harness.take()
        }
    }

    pub(in crate::sim) fn pod(rv: Rv) -> Change {
        Change {
            event: EventType::Added,
            object: Arc::new(Object::fixture(KindId(0), NameId(rv as u32), rv, rv)),
            time_ms: TimeMs(0),
            prev: Default::default(),
        }
    }

    /// `watch_cache.go` `updateCache`: the cache is a cyclic buffer of `capacity` events; once
    /// full, each new event evicts the oldest (`removedEventSinceRelist`), and the oldest RV a
    /// watch can start from moves with it.
    #[test]
    fn a_cache_fills_then_evicts_its_oldest_event_for_each_new_one() {
        let mut world = World::new(3);
        let mut api = world.apiserver();
        let out = world.step(&mut api, TimeMs(0), |a, st| {
            for rv in 2..=6 {
                a.change(st, pod(rv), 0);
            }
        });
        let evicted: Vec<(Rv, u32, u32)> = out
            .kinds()
            .iter()
            .filter_map(|k| match *k {
                EventKind::Store(StoreEvent::CacheAdd {
                    rv,
                    evicted,
                    capacity,
                    ..
                }) => Some((rv, evicted, capacity)),
                _ => None,
            })
            .collect();
        assert_eq!(
            evicted,
            [(2, 0, 3), (3, 0, 3), (4, 0, 3), (5, 1, 3), (6, 1, 3)]
        );
        let cache = &api.caches[0];
        let buffered: Vec<Rv> = cache.buffer().iter().map(|c| c.object.rv).collect();
        assert_eq!(buffered, [4, 5, 6]);
        assert_eq!(
            (cache.rv(), cache.oldest(), cache.object_count()),
            (6, 4, 5)
        );
    }

    /// `cacher.go` `waitUntilFreshAndBlock`: a list at a resourceVersion the cache has not
    /// seen waits for it, at most 3 s; the change that brings the cache there answers it.
    #[test]
    fn a_list_at_an_rv_the_cache_has_not_seen_waits_until_the_cache_reaches_it() {
        let mut world = World::new(10);
        let mut api = world.apiserver();
        let list = world.list((ListRv::NotOlderThan(3), 0));
        let out = world.step(&mut api, TimeMs(1000), |a, st| {
            a.serve_list(st, WatcherId(0), Session(4), list, 0)
        });
        assert!(out.sent().is_empty(), "no answer yet: the cache is at 1");
        let deadline = Action::Server(ServerAction::ListDeadline {
            watcher: WatcherId(0),
            session: Session(4),
            api: ApiserverId(0),
        });
        assert_eq!(out.timers(), [(TimeMs(4000), deadline)]);
        assert_eq!(api.waiting_reads.len(), 1);
        let out = world.step(&mut api, TimeMs(1500), |a, st| {
            a.change(st, pod(2), 1);
            a.change(st, pod(3), 2);
        });
        let answers = out.sent();
        assert!(
            matches!(&answers[..], [Msg::ListOk { list_rv: 3, items, from_etcd: false, .. }] if items.len() == 2),
            "answered from the cache once it reached 3: {answers:?}"
        );
        assert!(api.waiting_reads.is_empty());
        let out = world.step(&mut api, TimeMs(4000), |a, st| {
            a.read_deadline(st, WatcherId(0), Session(4), 3)
        });
        assert!(
            out.sent().is_empty(),
            "a deadline after the answer is stale"
        );
    }

    /// `cacher.go` `waitUntilFreshAndBlock`: after 3 s the list gets 504 "Too large resource
    /// version" with the cache's current RV.
    #[test]
    fn a_list_the_cache_does_not_catch_up_with_in_3_s_gets_504() {
        let mut world = World::new(10);
        let mut api = world.apiserver();
        let list = world.list((ListRv::NotOlderThan(9), 0));
        world.step(&mut api, TimeMs(0), |a, st| {
            a.serve_list(st, WatcherId(0), Session(1), list, 0)
        });
        let out = world.step(&mut api, TimeMs::ZERO + LIST_WAIT_MS, |a, st| {
            a.change(st, pod(2), 1);
            a.read_deadline(st, WatcherId(0), Session(1), 2)
        });
        let too_large = ApiError::TooLargeRv {
            requested: 9,
            current: IssuedRv::new(2),
        };
        assert_eq!(out.sent(), [Msg::ListErr(too_large)]);
        assert!(api.waiting_reads.is_empty());
    }

    fn change(kind: u16, rv: Rv) -> Change {
        let object = Object::fixture(KindId(kind), NameId(1), 1, rv);
        Change {
            event: EventType::Added,
            object: Arc::new(object),
            time_ms: TimeMs(0),
            prev: Default::default(),
        }
    }

    #[test]
    fn a_paused_apiserver_holds_changes_and_progress_and_other_caches_follow_the_rv() {
        let config = Config::new(&["Pod", "Node"]);
        let mut api = Apiserver::new(&config, &config.apiservers[0]);
        assert_eq!(
            api.apply_change(change(0, 5), true),
            Some((0, api.caches[0].capacity()))
        );
        assert_eq!(
            api.caches[1].rv(),
            5,
            "the other kind's cache moves to the change's rv"
        );
        assert_eq!(api.set_paused(true), (vec![], 0));
        assert_eq!(api.apply_change(change(0, 6), true), None);
        assert!(!api.progress(9));
        assert_eq!(api.set_paused(false), (vec![change(0, 6)], 9));
        assert_eq!((api.held.len(), api.held_progress), (0, 0));
        assert!(api.progress(10));
        assert!(api.caches.iter().all(|c| c.rv() == 10));
        api.caches[1].reinitialise();
        assert_eq!(
            api.apply_change(change(1, 11), true),
            None,
            "a cache not ready drops it"
        );
        assert!(api.held.is_empty());
    }
}
