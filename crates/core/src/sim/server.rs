//! etcd, the apiservers and their watch caches, and the server side of lists and watches.

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

    pub(super) fn commit(
        &mut self,
        actor: Actor,
        cause: EventId,
        op: WriteOp,
        event: EventType,
        mut obj: Object,
    ) -> EventId {
        self.etcd.rev += 1;
        obj.rv = self.etcd.rev;
        let key = (obj.kind, obj.name);
        let old = if event == EventType::Deleted {
            self.etcd.objects.remove(&key)
        } else {
            self.etcd.objects.insert(key, obj)
        };
        self.etcd
            .index(old.as_ref(), &obj, event != EventType::Deleted);
        let id = self.emit(
            actor,
            cause,
            EventKind::Write {
                op,
                kind: obj.kind,
                name: obj.name,
                rv: obj.rv,
                spec: obj.spec,
                status: obj.status,
            },
        );
        let change = Change {
            event,
            object: obj,
            time_ms: self.now_ms,
        };
        if let Some(h) = &mut self.etcd.history {
            h.push(change);
        }
        if self.etcd.keep_log {
            self.etcd.log.push_back(change);
        }
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
    /// `gc_delay_ms`. A deleted owner's dependents, and a new object whose owner (by UID) does
    /// not exist, are looked at; an object whose owners are all gone is deleted (background
    /// propagation). Foreground deletion is not modelled.
    fn gc_notice(&mut self, obj: &Object, event: EventType, cause: EventId) {
        let at = self.now_ms + self.config.gc_delay_ms;
        let mut look: Vec<(KindId, NameId, u64)> = vec![];
        if event == EventType::Deleted {
            if let Some(set) = self.etcd.dependents.get(&obj.uid) {
                look.extend(
                    set.iter()
                        .filter_map(|k| self.etcd.objects.get(k).map(|d| (d.kind, d.name, d.uid))),
                );
            }
        } else if event == EventType::Added {
            if let Some(owner) = obj.owner {
                if !self.etcd.owner_exists(owner) {
                    look.push((obj.kind, obj.name, obj.uid));
                }
            }
        }
        for (kind, name, uid) in look {
            self.schedule(at, cause, Action::Gc { kind, name, uid });
        }
    }

    pub(super) fn collect_garbage(&mut self, kind: KindId, name: NameId, uid: u64, cause: EventId) {
        let Some(d) = self.etcd.objects.get(&(kind, name)).copied() else {
            return;
        };
        let orphan = d.uid == uid && d.owner.is_some_and(|o| !self.etcd.owner_exists(o));
        if orphan && d.deletion_ms.is_none() {
            let _ = self.write(
                Actor::GarbageCollector,
                cause,
                Write::Delete {
                    kind,
                    name,
                    uid: Some(uid),
                },
            );
        }
    }

    pub(super) fn cache_apply(&mut self, api: ApiserverId, change: Change, cause: EventId) {
        let kind = change.object.kind;
        let Some((evicted, capacity)) = self.apiservers[api.index()].apply_change(change) else {
            return;
        };
        let id = self.emit(
            Actor::Apiserver(api),
            cause,
            EventKind::CacheAdd {
                apiserver: api,
                kind,
                rv: change.object.rv,
                name: change.object.name,
                evicted,
                capacity,
            },
        );
        self.wake_reads(api, id);
        let watches = self.apiservers[api.index()].watches_by_kind[kind.index()].clone();
        for watch in watches {
            self.send_event(watch, change, true, id);
        }
    }

    /// Asks etcd for a progress notification on `api`'s watch: it travels behind every change
    /// already on its way (the apiserver's lag), then moves every ready cache to that revision.
    pub(super) fn request_progress(&mut self, api: ApiserverId, cause: EventId) {
        let rev = self.etcd.rev;
        match self.apiservers[api.index()].lag_ms {
            DurationMs::ZERO => self.cache_progress(api, rev, cause),
            lag => self.schedule(self.now_ms + lag, cause, Action::CacheProgress { api, rev }),
        }
    }

    pub(super) fn cache_progress(&mut self, api: ApiserverId, rev: Rv, cause: EventId) {
        if self.apiservers[api.index()].progress(rev) {
            self.wake_reads(api, cause);
        }
    }

    /// Answers every waiting read whose cache has now reached its revision.
    pub(super) fn wake_reads(&mut self, api: ApiserverId, cause: EventId) {
        let server = &self.apiservers[api.index()];
        if server.waiting_reads.is_empty() {
            return;
        }
        let fresh = |r: &WaitingRead| {
            let cache = &server.caches[self.read_kind(r).index()];
            cache.ready && cache.rv >= r.rv
        };
        let (done, keep): (Vec<WaitingRead>, Vec<WaitingRead>) =
            server.waiting_reads.iter().partition(|r| fresh(r));
        self.apiservers[api.index()].waiting_reads = keep;
        for r in done {
            match r.read {
                ReadKind::NotOlderThan | ReadKind::Consistent { .. } => {
                    self.answer_list_from_cache(r.watcher, r.session, api, cause)
                }
                ReadKind::WatchList { timeout_ms } => {
                    self.answer_watch_list(r.watcher, r.session, api, timeout_ms, cause)
                }
                ReadKind::Probe { kind, .. } => {
                    self.probe_from_cache(r.session.0, api, kind, cause)
                }
            }
        }
    }

    /// The kind a waiting read lists.
    fn read_kind(&self, r: &WaitingRead) -> KindId {
        match r.read {
            ReadKind::Probe { kind, .. } => kind,
            _ => self.reflectors[r.watcher.index()].kind,
        }
    }

    /// A waiting read's 3 s are up (`cacher.go`, `delegator.go`): a NotOlderThan list and a
    /// streaming list get 504 "Too large resource version"; a consistent list goes to etcd.
    pub(super) fn read_deadline(
        &mut self,
        watcher: WatcherId,
        session: Session,
        api: ApiserverId,
        cause: EventId,
    ) {
        let waiting = &mut self.apiservers[api.index()].waiting_reads;
        let Some(i) = waiting
            .iter()
            .position(|w| w.watcher == watcher && w.session == session)
        else {
            return;
        };
        let r = waiting.remove(i);
        let kind = self.read_kind(&r);
        let current = self.apiservers[api.index()].caches[kind.index()].rv;
        let err = ApiError::TooLargeRv {
            requested: r.rv,
            current,
        };
        match r.read {
            ReadKind::NotOlderThan => {
                self.send_to_client(watcher, session, cause, Msg::ListErr(err))
            }
            ReadKind::WatchList { .. } => {
                self.send_to_client(watcher, session, cause, Msg::WatchListErr(err))
            }
            ReadKind::Consistent { limit } => self.list_from_etcd(watcher, session, limit, cause),
            ReadKind::Probe {
                kind,
                consistent: true,
            } => self.probe_from_etcd(session.0, kind, None, cause),
            ReadKind::Probe { .. } => self.probe_failed(session.0, err, cause),
        }
    }

    // ----- probes: raw requests a scenario sends to one apiserver -----

    pub(super) fn probe(
        &mut self,
        api: ApiserverId,
        kind: KindId,
        request: ProbeRequest,
        cause: EventId,
    ) {
        let probe = self.probes;
        self.probes += 1;
        let id = self.emit(
            Actor::Probe,
            cause,
            EventKind::ProbeRequest {
                probe,
                apiserver: api,
                kind,
                request,
            },
        );
        let cache = &self.apiservers[api.index()].caches[kind.index()];
        let from_cache = cache.mode != CacheMode::Off && cache.ready;
        let wait = |rv, consistent| WaitingRead {
            watcher: PROBE_WATCHER,
            session: Session(probe),
            rv,
            read: ReadKind::Probe { kind, consistent },
        };
        match request {
            ProbeRequest::Watch { from } => self.probe_watch(probe, api, kind, from, id),
            ProbeRequest::List { rv: ListRv::Any } if from_cache => {
                self.probe_from_cache(probe, api, kind, id)
            }
            ProbeRequest::List {
                rv: ListRv::NotOlderThan(n),
            } if from_cache => {
                if cache.rv >= n {
                    self.probe_from_cache(probe, api, kind, id)
                } else {
                    self.wait_for_cache(api, wait(n, false), id)
                }
            }
            ProbeRequest::List {
                rv: ListRv::Consistent,
            } if from_cache => {
                let want = self.etcd.rev;
                self.request_progress(api, id);
                if self.apiservers[api.index()].caches[kind.index()].rv >= want {
                    self.probe_from_cache(probe, api, kind, id)
                } else {
                    self.wait_for_cache(api, wait(want, true), id)
                }
            }
            // Exact lists (and everything without a ready cache) are etcd's.
            ProbeRequest::List { rv } => {
                let at = match rv {
                    ListRv::Exact(n) => Some(n),
                    ListRv::NotOlderThan(n) if n > self.etcd.rev => {
                        let err = ApiError::TooLargeRv {
                            requested: n,
                            current: self.etcd.rev,
                        };
                        return self.probe_failed(probe, err, id);
                    }
                    _ => None,
                };
                self.probe_from_etcd(probe, kind, at, id)
            }
        }
    }

    fn probe_failed(&mut self, probe: u32, error: ApiError, cause: EventId) {
        self.emit(Actor::Probe, cause, EventKind::ProbeFailed { probe, error });
    }

    fn probe_from_cache(&mut self, probe: u32, api: ApiserverId, kind: KindId, cause: EventId) {
        let cache = &self.apiservers[api.index()].caches[kind.index()];
        let (items, list_rv) = (cache.store.len() as u32, cache.rv);
        self.emit(
            Actor::Probe,
            cause,
            EventKind::ProbeListed {
                probe,
                items,
                list_rv,
                from_etcd: false,
            },
        );
    }

    /// etcd's answer: now, or at exactly revision `at` (410 once compacted, 504 beyond now).
    fn probe_from_etcd(&mut self, probe: u32, kind: KindId, at: Option<Rv>, cause: EventId) {
        let (items, list_rv) = match at {
            None => (
                EtcdReader(&self.etcd).kind_objects(kind).len(),
                self.etcd.rev,
            ),
            Some(n) if n < self.etcd.compact_rev => {
                return self.probe_failed(probe, ApiError::ListCompacted, cause)
            }
            Some(n) if n > self.etcd.rev => {
                let err = ApiError::TooLargeRv {
                    requested: n,
                    current: self.etcd.rev,
                };
                return self.probe_failed(probe, err, cause);
            }
            Some(n) => {
                let mut state: BTreeMap<NameId, ()> = BTreeMap::new();
                for c in self.etcd.history.iter().flatten() {
                    if c.object.rv > n {
                        break;
                    }
                    if c.object.kind == kind {
                        match c.event {
                            EventType::Deleted => state.remove(&c.object.name),
                            _ => state.insert(c.object.name, ()),
                        };
                    }
                }
                (state.len(), n)
            }
        };
        self.emit(
            Actor::Probe,
            cause,
            EventKind::ProbeListed {
                probe,
                items: items as u32,
                list_rv,
                from_etcd: true,
            },
        );
    }

    /// A watch from `from`: the same start check a reflector's watch gets, then the replay it
    /// would receive; the probe does not keep the stream.
    fn probe_watch(
        &mut self,
        probe: u32,
        api: ApiserverId,
        kind: KindId,
        from: Rv,
        cause: EventId,
    ) {
        let cache = &self.apiservers[api.index()].caches[kind.index()];
        let outcome = if from == 0 {
            // RV "0": never too old; it starts with synthetic ADDED events for the current
            // state (semantics.md §4), then live events.
            if cache.mode == CacheMode::Off {
                Ok(EtcdReader(&self.etcd).kind_objects(kind).len())
            } else if !cache.ready {
                Err(ApiError::TooManyRequests)
            } else {
                Ok(cache.store.len())
            }
        } else if cache.mode == CacheMode::Off {
            if from + 1 < self.etcd.compact_rev {
                Err(ApiError::WatchCompacted)
            } else {
                Ok(self
                    .etcd
                    .log
                    .iter()
                    .filter(|c| c.object.kind == kind && c.object.rv > from)
                    .count())
            }
        } else if !cache.ready {
            Err(ApiError::TooManyRequests)
        } else {
            match cache.check_watch_start(from) {
                WatchStart::TooOld {
                    requested,
                    oldest_minus_one,
                } => Err(ApiError::TooOld {
                    requested,
                    oldest_minus_one,
                }),
                WatchStart::Ok => Ok(cache.events_after(from).count()),
            }
        };
        match outcome {
            Ok(replayed) => {
                self.emit(
                    Actor::Probe,
                    cause,
                    EventKind::ProbeWatchOpened {
                        probe,
                        from_rv: from,
                        replayed: replayed as u32,
                    },
                );
            }
            Err(error) => self.probe_failed(probe, error, cause),
        }
    }

    /// Parks a read until the cache reaches `rv`, for at most 3 s.
    fn wait_for_cache(&mut self, api: ApiserverId, r: WaitingRead, cause: EventId) {
        self.apiservers[api.index()].waiting_reads.push(r);
        self.schedule(
            self.now_ms + LIST_WAIT_MS,
            cause,
            Action::ListDeadline {
                watcher: r.watcher,
                session: r.session,
                api,
            },
        );
    }

    pub(super) fn etcd_watch_fanout(&mut self, change: Change, cause: EventId) {
        if self.config.kinds[change.object.kind.index()].cache != CacheMode::Off {
            return;
        }
        let ids: Vec<WatchId> = (0..self.watches.len() as u32)
            .map(WatchId)
            .filter(|&i| {
                let w = &self.watches[i.index()];
                w.open && w.from_etcd && w.kind == change.object.kind
            })
            .collect();
        for watch in ids {
            self.send_event(watch, change, true, cause);
        }
    }

    /// Sends one change to a watch. Only `live` changes count towards closing a watcher too slow
    /// to drain its channel (`cache_watcher.go`: the initial replay, `processInterval`, blocks).
    pub(super) fn send_event(
        &mut self,
        watch: WatchId,
        change: Change,
        live: bool,
        cause: EventId,
    ) {
        let w = &self.watches[watch.index()];
        if !w.open || change.object.rv <= w.last_sent {
            return;
        }
        if w.namespace.is_some_and(|ns| ns != change.object.namespace) {
            return;
        }
        let (watcher, session) = (w.watcher, w.session);
        let controller = self.controller_of(watcher);
        self.watches[watch.index()].last_sent = change.object.rv;
        if live && !self.link_delay(controller).is_zero() {
            let w = &mut self.watches[watch.index()];
            w.in_flight += 1;
            if w.in_flight > self.config.watch_chan_capacity {
                self.close_watch(watch, WatchEnd::TooSlow, cause);
                return;
            }
        }
        self.send_to_client(
            watcher,
            session,
            cause,
            Msg::Event {
                watch,
                change,
                live,
            },
        );
    }

    /// `cache_watcher.go`: a due bookmark carries the cache's current RV and is sent whenever
    /// that RV is above the watch's start RV, even if it was sent before (a quiet watch still
    /// gets one about every minute). Watches served by etcd get none.
    pub(super) fn send_bookmark(&mut self, watch: WatchId, cause: EventId) {
        let w = &self.watches[watch.index()];
        if !w.open || w.from_etcd {
            return;
        }
        let cache = &self.apiservers[w.apiserver.index()].caches[w.kind.index()];
        if !cache.ready || cache.rv <= w.from_rv {
            return;
        }
        let rv = cache.rv;
        let (watcher, session) = (w.watcher, w.session);
        let w = &mut self.watches[watch.index()];
        w.last_sent = w.last_sent.max(rv);
        self.send_to_client(watcher, session, cause, Msg::Bookmark { rv });
    }

    /// A watch's bookmark is due: send it, and schedule the next.
    pub(super) fn bookmark_due(&mut self, watch: WatchId, cause: EventId) {
        if self.watches[watch.index()].open {
            self.send_bookmark(watch, cause);
            self.schedule_bookmark(watch, cause);
        }
    }

    /// The next page of a paged list: etcd reads the first page's revision again, unless it was
    /// compacted (410, the continue token expired).
    pub(super) fn serve_list_page(
        &mut self,
        watcher: WatcherId,
        session: Session,
        list_rv: Rv,
        rest: Vec<Object>,
        limit: u32,
        cause: EventId,
    ) {
        let c = self.controller_of(watcher);
        let msg = if !self.connected(c) {
            Msg::ListErr(ApiError::ConnectionRefused)
        } else if list_rv < self.etcd.compact_rev {
            Msg::ListErr(ApiError::ContinueExpired)
        } else {
            page(list_rv, rest, limit)
        };
        self.send_to_client(watcher, session, cause, msg);
    }

    /// `cache_watcher.go` `nextBookmarkTime`: the next bookmark a minute from now, or 2 s before
    /// the deadline if that comes first; none once that moment has passed.
    pub(super) fn schedule_bookmark(&mut self, watch: WatchId, cause: EventId) {
        let w = &self.watches[watch.index()];
        let c = self.reflectors[w.watcher.index()].controller;
        if !self.config.reflector_of(c).bookmarks || w.from_etcd {
            return;
        }
        let pre_deadline = w.deadline_ms.saturating_sub(BOOKMARK_BEFORE_DEADLINE_MS);
        let heartbeat = match self.config.bookmark_ms {
            DurationMs::ZERO => pre_deadline,
            period => (self.now_ms + period).min(pre_deadline),
        };
        if heartbeat > self.now_ms {
            self.schedule(heartbeat, cause, Action::BookmarkDue { watch });
        }
    }

    pub(super) fn close_watch(&mut self, watch: WatchId, reason: WatchEnd, cause: EventId) {
        let w = &mut self.watches[watch.index()];
        if !w.open {
            return;
        }
        w.open = false;
        let (api, kind, watcher, session) = (w.apiserver, w.kind, w.watcher, w.session);
        self.apiservers[api.index()].watches_by_kind[kind.index()].retain(|&i| i != watch);
        if reason == WatchEnd::Disconnected {
            // The client sees its own broken connection at once.
            self.deliver(watcher, session, Msg::WatchEnd(reason), cause);
        } else {
            self.send_to_client(watcher, session, cause, Msg::WatchEnd(reason));
        }
    }

    pub(super) fn compact_tick(&mut self) {
        // compact.go: bump the bookkeeping key, compact to the revision of the previous tick.
        self.etcd.rev += 1;
        let target = self.etcd.last_tick_rev;
        self.etcd.last_tick_rev = self.etcd.rev;
        if target > self.etcd.compact_rev {
            self.etcd.compact_rev = target;
            while self.etcd.log.front().is_some_and(|c| c.object.rv <= target) {
                self.etcd.log.pop_front();
            }
            self.emit(Actor::Etcd, NO_CAUSE, EventKind::Compacted { rev: target });
        }
        self.schedule(
            self.now_ms + self.config.compaction_ms,
            NO_CAUSE,
            Action::CompactTick,
        );
    }

    pub(super) fn reinit_caches(
        &mut self,
        api: ApiserverId,
        only: Option<KindId>,
        down_ms: DurationMs,
        cause: EventId,
    ) {
        let server = &mut self.apiservers[api.index()];
        server.generation = server.generation.next();
        let generation = server.generation;
        let kinds: Vec<KindId> = match only {
            Some(k) => vec![k],
            None => (0..server.caches.len()).map(|k| KindId(k as u16)).collect(),
        };
        for &k in &kinds {
            let cache = &mut server.caches[k.index()];
            cache.ready = false;
            cache.buffer.clear();
        }
        if only.is_none() {
            server.held.clear();
            server.held_progress = 0;
            server.paused = false;
        }
        let to_close: Vec<WatchId> = (0..self.watches.len() as u32)
            .map(WatchId)
            .filter(|&i| {
                let w = &self.watches[i.index()];
                w.open && w.apiserver == api && (only.is_none() || Some(w.kind) == only)
            })
            .collect();
        for &k in &kinds {
            let list_rv = self.apiservers[api.index()].caches[k.index()].list_rv;
            self.emit(
                Actor::Apiserver(api),
                cause,
                EventKind::CacheReset {
                    apiserver: api,
                    kind: k,
                    list_rv,
                    ready: false,
                },
            );
        }
        for w in to_close {
            self.close_watch(w, WatchEnd::ServerClosed, cause);
        }
        self.schedule(
            self.now_ms + down_ms,
            cause,
            Action::CacheReady {
                api,
                kind: only,
                generation,
            },
        );
    }

    pub(super) fn cache_ready(&mut self, api: ApiserverId, only: Option<KindId>, cause: EventId) {
        let kinds: Vec<KindId> = match only {
            Some(k) => vec![k],
            None => (0..self.config.kinds.len())
                .map(|k| KindId(k as u16))
                .collect(),
        };
        for k in kinds {
            let rev = self.etcd.rev;
            let objects: Vec<Object> = EtcdReader(&self.etcd).kind_objects(k);
            let cache = &mut self.apiservers[api.index()].caches[k.index()];
            if cache.mode == CacheMode::Off {
                continue;
            }
            cache.replace(objects.into_iter(), rev);
            self.emit(
                Actor::Apiserver(api),
                cause,
                EventKind::CacheReset {
                    apiserver: api,
                    kind: k,
                    list_rv: rev,
                    ready: true,
                },
            );
        }
    }

    // ----- lists and watches, server side -----

    /// The apiserver a watcher's request reaches, or None after refusing it (link down).
    pub(super) fn route(
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

    pub(super) fn serve_list(
        &mut self,
        watcher: WatcherId,
        session: Session,
        rv: ListRv,
        limit: u32,
        cause: EventId,
    ) {
        let Some(api) = self.route(watcher, session, cause, Msg::ListErr) else {
            return;
        };
        let kind = self.reflectors[watcher.index()].kind;
        let cache = &self.apiservers[api.index()].caches[kind.index()];
        let from_cache = cache.mode != CacheMode::Off && cache.ready;
        let read = |rv, read| WaitingRead {
            watcher,
            session,
            rv,
            read,
        };
        match rv {
            ListRv::Any if from_cache => self.answer_list_from_cache(watcher, session, api, cause),
            ListRv::NotOlderThan(n) if from_cache => {
                if cache.rv >= n {
                    self.answer_list_from_cache(watcher, session, api, cause);
                } else {
                    self.wait_for_cache(api, read(n, ReadKind::NotOlderThan), cause);
                }
            }
            // ConsistentListFromCache (1.31+): the cache answers once it has seen etcd's current
            // revision, which it learns from a progress notification.
            ListRv::Consistent if from_cache => {
                let want = self.etcd.rev;
                self.request_progress(api, cause);
                let cache = &self.apiservers[api.index()].caches[kind.index()];
                if cache.ready && cache.rv >= want {
                    self.answer_list_from_cache(watcher, session, api, cause);
                } else {
                    self.wait_for_cache(api, read(want, ReadKind::Consistent { limit }), cause);
                }
            }
            // etcd: the kind has no cache, or the cache is re-initialising (then only watches get
            // 429; lists are delegated to etcd, whose answer is consistent and so never older).
            _ => self.list_from_etcd(watcher, session, limit, cause),
        }
    }

    /// etcd honours `limit`: the first page, and a continue token for the rest.
    fn list_from_etcd(&mut self, watcher: WatcherId, session: Session, limit: u32, cause: EventId) {
        let kind = self.reflectors[watcher.index()].kind;
        let items = EtcdReader(&self.etcd).kind_objects(kind);
        let items = self.filter_namespace(watcher, items);
        let list_rv = self.etcd.rev;
        self.send_to_client(watcher, session, cause, page(list_rv, items, limit));
    }

    pub(super) fn filter_namespace(
        &self,
        watcher: WatcherId,
        mut items: Vec<Object>,
    ) -> Vec<Object> {
        if let Some(ns) = self.reflectors[watcher.index()].namespace {
            items.retain(|o| o.namespace == ns);
        }
        items
    }

    pub(super) fn answer_list_from_cache(
        &mut self,
        watcher: WatcherId,
        session: Session,
        api: ApiserverId,
        cause: EventId,
    ) {
        let kind = self.reflectors[watcher.index()].kind;
        let cache = &self.apiservers[api.index()].caches[kind.index()];
        let items: Vec<Object> = cache.store.values().copied().collect();
        let list_rv = cache.rv;
        let items = self.filter_namespace(watcher, items);
        self.send_to_client(
            watcher,
            session,
            cause,
            Msg::ListOk {
                list_rv,
                items,
                from_etcd: false,
                rest: vec![],
            },
        );
    }

    /// A streaming list: register a watch at the cache's RV and send its current objects as
    /// initial events ended by a bookmark. Without a watch cache the server cannot stream, and
    /// the client falls back to a normal list.
    pub(super) fn serve_watch_list(
        &mut self,
        watcher: WatcherId,
        session: Session,
        rv: ListRv,
        timeout_ms: DurationMs,
        cause: EventId,
    ) {
        let c = self.controller_of(watcher);
        let api = self.controllers[c.index()].apiserver;
        let r = &self.reflectors[watcher.index()];
        let (kind, namespace) = (r.kind, r.namespace);
        let cache = &self.apiservers[api.index()].caches[kind.index()];
        if cache.mode == CacheMode::Off || !self.connected(c) {
            let limit = match rv {
                ListRv::NotOlderThan(_) => 0,
                _ => self.config.reflector.page_size,
            };
            return self.serve_list(watcher, session, rv, limit, cause);
        }
        if !cache.ready {
            let err = Msg::ListErr(ApiError::TooManyRequests);
            return self.send_to_client(watcher, session, cause, err);
        }
        // `waitUntilWatchCacheFreshAndForceAllEvents`: the initial events are a consistent read,
        // never older than etcd now (or than the RV asked for).
        let want = match rv {
            ListRv::NotOlderThan(n) => n,
            _ => {
                self.request_progress(api, cause);
                self.etcd.rev
            }
        };
        let _ = namespace;
        let cache = &self.apiservers[api.index()].caches[kind.index()];
        if cache.rv >= want {
            self.answer_watch_list(watcher, session, api, timeout_ms, cause);
        } else {
            let r = WaitingRead {
                watcher,
                session,
                rv: want,
                read: ReadKind::WatchList { timeout_ms },
            };
            self.wait_for_cache(api, r, cause);
        }
    }

    /// The initial events of a streaming list, from the cache, and the watch that goes on.
    fn answer_watch_list(
        &mut self,
        watcher: WatcherId,
        session: Session,
        api: ApiserverId,
        timeout_ms: DurationMs,
        cause: EventId,
    ) {
        let r = &self.reflectors[watcher.index()];
        let (kind, namespace) = (r.kind, r.namespace);
        let cache = &self.apiservers[api.index()].caches[kind.index()];
        let items: Vec<Object> = cache.store.values().copied().collect();
        let at = cache.rv;
        let items = self.filter_namespace(watcher, items);
        let watch = self.open_watch(watcher, session, api, kind, namespace, false, at);
        let start = Msg::WatchListStart {
            watch,
            items,
            rv: at,
        };
        self.send_to_client(watcher, session, cause, start);
        self.arm_watch_timers(watch, timeout_ms, cause);
    }

    pub(super) fn serve_watch(
        &mut self,
        watcher: WatcherId,
        session: Session,
        from: Rv,
        timeout_ms: DurationMs,
        cause: EventId,
    ) {
        let Some(api) = self.route(watcher, session, cause, Msg::Refused) else {
            return;
        };
        let r = &self.reflectors[watcher.index()];
        let (kind, namespace) = (r.kind, r.namespace);
        let (from_etcd, replay) = match self.watch_replay(api, kind, from) {
            Ok(x) => x,
            Err(msg) => return self.send_to_client(watcher, session, cause, msg),
        };
        let watch = self.open_watch(watcher, session, api, kind, namespace, from_etcd, from);
        let replayed = replay
            .iter()
            .filter(|c| namespace.is_none_or(|ns| ns == c.object.namespace))
            .count() as u32;
        self.send_to_client(
            watcher,
            session,
            cause,
            Msg::WatchOpened {
                watch,
                from_rv: from,
                replayed,
            },
        );
        for change in replay {
            self.send_event(watch, change, false, cause);
        }
        self.arm_watch_timers(watch, timeout_ms, cause);
    }

    /// What a watch of `kind` from `from` replays first (and whether etcd serves it, for a kind
    /// without a watch cache), or the message that refuses it: 429 while the cache is not
    /// ready, 410 when `from` is compacted or older than the cache's history.
    fn watch_replay(
        &self,
        api: ApiserverId,
        kind: KindId,
        from: Rv,
    ) -> Result<(bool, Vec<Change>), Msg> {
        let cache = &self.apiservers[api.index()].caches[kind.index()];
        if cache.mode == CacheMode::Off {
            if from + 1 < self.etcd.compact_rev {
                return Err(Msg::WatchErr(ApiError::WatchCompacted));
            }
            let log = self.etcd.log.iter();
            let after = log.filter(|c| c.object.kind == kind && c.object.rv > from);
            return Ok((true, after.copied().collect()));
        }
        if !cache.ready {
            return Err(Msg::Refused(ApiError::TooManyRequests));
        }
        match cache.check_watch_start(from) {
            // An ERROR event inside an HTTP 200 stream, then the stream ends.
            WatchStart::TooOld {
                requested,
                oldest_minus_one,
            } => Err(Msg::WatchErr(ApiError::TooOld {
                requested,
                oldest_minus_one,
            })),
            WatchStart::Ok => Ok((false, cache.events_after(from).copied().collect())),
        }
    }

    /// Registers a server-side watch that has sent everything up to `from`.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn open_watch(
        &mut self,
        watcher: WatcherId,
        session: Session,
        api: ApiserverId,
        kind: KindId,
        namespace: Option<NameId>,
        from_etcd: bool,
        from: Rv,
    ) -> WatchId {
        let watch = WatchId(self.watches.len() as u32);
        self.watches.push(ServerWatch {
            watcher,
            session,
            apiserver: api,
            kind,
            namespace,
            from_etcd,
            last_sent: from,
            from_rv: from,
            deadline_ms: 0,
            open: true,
            in_flight: 0,
        });
        if !from_etcd {
            self.apiservers[api.index()].watches_by_kind[kind.index()].push(watch);
        }
        watch
    }

    /// The server-side timeout the client asked for, and the first bookmark.
    pub(super) fn arm_watch_timers(&mut self, watch: WatchId, timeout: DurationMs, cause: EventId) {
        let deadline = self.now_ms + timeout;
        self.watches[watch.index()].deadline_ms = deadline;
        self.schedule(deadline, cause, Action::WatchTimeout { watch });
        self.schedule_bookmark(watch, cause);
    }
}
