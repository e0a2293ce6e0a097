//! The apiserver's request-serving side (`cacher.go`, `cache_watcher.go`, etcd's delegate):
//! lists, pages, streaming lists, watches and probes, and the watches it then serves (events,
//! bookmarks, timeouts, closing). Each entry point takes a request or a timer that the engine
//! routed to this apiserver and writes its events and messages.

use super::apiserver::{Offer, StepContext};
use super::*;

/// A server watch's timers (`cache_watcher.go`).
const BOOKMARK_BEFORE_DEADLINE_MS: DurationMs = DurationMs(2000);
/// The period of the cacher's bookmark timer, and the width of its buckets (`cacher.go`).
const BOOKMARK_TICK_MS: u64 = 1000;

impl Apiserver {
    /// A list (client-go's pager, or a relist at a resourceVersion).
    pub(super) fn serve_list(
        &mut self,
        st: &mut StepContext,
        watcher: WatcherId,
        session: Session,
        (rv, limit): (ListRv, u32),
        cause: EventId,
    ) {
        if let Some(tracker) = self.fake {
            return self.fake_list(st, watcher, session, tracker, cause);
        }
        let kind = st.clients.kind(watcher);
        let cache = &self.caches[kind.index()];
        let features = st.config.server;
        if cache.mode() != CacheMode::Off && !cache.ready() && !features.resilient_cache_init {
            let parked = Parked::List {
                watcher,
                session,
                rv,
                limit,
            };
            return self.park(parked);
        }
        let from_cache = cache.mode() != CacheMode::Off && cache.ready();
        let read = |rv, read| WaitingRead {
            watcher,
            session,
            rv,
            read,
        };
        match rv {
            // `delegator.go` `shouldDelegateListOnNotReadyCache`: a cache re-initialising hands
            // etcd only lists with a `limit`; one without (a relist at an RV) gets 429.
            _ if cache.reinitialising() && limit == 0 => {
                let err = Msg::ListErr(ApiError::TooManyRequests);
                st.send(cause, watcher, session, err)
            }
            ListRv::Any if from_cache => self.answer_list_from_cache(st, watcher, session, cause),
            ListRv::NotOlderThan(n) if from_cache => {
                if cache.rv() >= n {
                    self.answer_list_from_cache(st, watcher, session, cause);
                } else {
                    self.wait_for_cache(st, read(n, ReadKind::NotOlderThan), cause);
                }
            }
            // ConsistentListFromCache (1.31+): the cache answers once it has seen etcd's current
            // revision, which it learns from a progress notification. Before, etcd answers.
            ListRv::Consistent if from_cache && features.consistent_list_from_cache => {
                let want = st.etcd.rev();
                self.request_progress(st, cause);
                let cache = &self.caches[kind.index()];
                if cache.ready() && cache.rv() >= want {
                    self.answer_list_from_cache(st, watcher, session, cause);
                } else {
                    let r = read(want, ReadKind::Consistent { limit });
                    self.wait_for_cache(st, r, cause);
                }
            }
            // etcd: the kind has no cache, the cache is re-initialising and the list has a
            // limit (etcd's answer is consistent and so never older), or a consistent list
            // before ConsistentListFromCache.
            _ => self.list_from_etcd(st, watcher, session, limit, cause),
        }
    }

    /// etcd honours `limit`: the first page, and a continue token for the rest.
    pub(super) fn list_from_etcd(
        &mut self,
        st: &mut StepContext,
        watcher: WatcherId,
        session: Session,
        limit: u32,
        cause: EventId,
    ) {
        let items = EtcdReader(st.etcd).kind_objects(st.clients.kind(watcher));
        let items = filter_namespace(st, watcher, items);
        st.send(cause, watcher, session, page(st.etcd.rev(), items, limit));
    }

    pub(super) fn answer_list_from_cache(
        &mut self,
        st: &mut StepContext,
        watcher: WatcherId,
        session: Session,
        cause: EventId,
    ) {
        let cache = &self.caches[st.clients.kind(watcher).index()];
        let items: Vec<Object> = cache.store().values().map(|o| Object::clone(o)).collect();
        let list_rv = cache.rv();
        let items = filter_namespace(st, watcher, items);
        let answer = Msg::ListOk {
            list_rv,
            items,
            from_etcd: false,
            rest: vec![],
        };
        st.send(cause, watcher, session, answer);
    }

    /// The next page of a paged list: etcd reads the first page's revision again, unless it was
    /// compacted (410, the continue token expired).
    pub(super) fn serve_list_page(
        &mut self,
        st: &mut StepContext,
        watcher: WatcherId,
        session: Session,
        (list_rv, rest, limit): (Rv, Vec<Object>, u32),
        cause: EventId,
    ) {
        let msg = if list_rv < st.etcd.compact_rev() {
            Msg::ListErr(ApiError::ContinueExpired)
        } else {
            page(list_rv, rest, limit)
        };
        st.send(cause, watcher, session, msg);
    }

    /// A streaming list: register a watch at the cache's RV and send its current objects as
    /// initial events ended by a bookmark. Without a watch cache the server cannot stream, and
    /// the client falls back to a normal list.
    pub(super) fn serve_watch_list(
        &mut self,
        st: &mut StepContext,
        watcher: WatcherId,
        session: Session,
        (rv, timeout_ms): (ListRv, DurationMs),
        cause: EventId,
    ) {
        let cache = &self.caches[st.clients.kind(watcher).index()];
        if cache.mode() == CacheMode::Off || self.fake.is_some() {
            let limit = match rv {
                ListRv::NotOlderThan(_) => 0,
                _ => st.config.reflector.page_size,
            };
            return self.serve_list(st, watcher, session, (rv, limit), cause);
        }
        // `ValidateListOptions`: without the server's WatchList gate the request is invalid,
        // and client-go falls back to a standard list.
        if !st.config.server.watch_list {
            let err = Msg::WatchListErr(ApiError::WatchListForbidden);
            return st.send(cause, watcher, session, err);
        }
        if !cache.ready() {
            if !st.config.server.resilient_cache_init {
                let parked = Parked::WatchList {
                    watcher,
                    session,
                    rv,
                    timeout_ms,
                };
                return self.park(parked);
            }
            let err = Msg::ListErr(ApiError::TooManyRequests);
            return st.send(cause, watcher, session, err);
        }
        // `waitUntilWatchCacheFreshAndForceAllEvents`: the initial events are a consistent read,
        // never older than etcd now (or than the RV asked for).
        let want = match rv {
            ListRv::NotOlderThan(n) => n,
            _ => {
                self.request_progress(st, cause);
                st.etcd.rev()
            }
        };
        if self.caches[st.clients.kind(watcher).index()].rv() >= want {
            self.answer_watch_list(st, watcher, session, timeout_ms, cause);
        } else {
            let r = WaitingRead {
                watcher,
                session,
                rv: want,
                read: ReadKind::WatchList { timeout_ms },
            };
            self.wait_for_cache(st, r, cause);
        }
    }

    /// The initial events of a streaming list, from the cache, and the watch that goes on.
    pub(super) fn answer_watch_list(
        &mut self,
        st: &mut StepContext,
        watcher: WatcherId,
        session: Session,
        timeout_ms: DurationMs,
        cause: EventId,
    ) {
        let kind = st.clients.kind(watcher);
        let cache = &self.caches[kind.index()];
        let items: Vec<Object> = cache.store().values().map(|o| Object::clone(o)).collect();
        let at = cache.rv();
        let items = filter_namespace(st, watcher, items);
        let watch = self.open_watch(st, watcher, session, false, (at, at));
        if self.omits_initial_events_end {
            // antrea #8123: the initial events end with a plain BOOKMARK; no periodic
            // bookmarks follow on such a server's streams.
            let unended = Msg::WatchListUnended { watch, rv: at };
            st.send(cause, watcher, session, unended);
            return self.arm_watch_timeout(st, watch, timeout_ms, cause);
        }
        let start = Msg::WatchListStart {
            watch,
            items,
            rv: at,
        };
        st.send(cause, watcher, session, start);
        self.arm_watch_timers(st, watch, timeout_ms, cause);
    }

    /// A watch from `from`: the replay of what came after it, then live events.
    pub(super) fn serve_watch(
        &mut self,
        st: &mut StepContext,
        watcher: WatcherId,
        session: Session,
        (from, timeout_ms): (Rv, DurationMs),
        cause: EventId,
    ) {
        if let Some(tracker) = self.fake {
            return self.fake_watch(st, watcher, session, (tracker, from), cause);
        }
        let (kind, namespace) = (st.clients.kind(watcher), st.clients.namespace(watcher));
        let cache = &self.caches[kind.index()];
        if cache.mode() != CacheMode::Off
            && !cache.ready()
            && !st.config.server.resilient_cache_init
        {
            let parked = Parked::Watch {
                watcher,
                session,
                from,
                timeout_ms,
            };
            return self.park(parked);
        }
        let (from_etcd, replay) = match self.watch_replay(st.etcd, kind, from) {
            Ok((from_etcd, replay)) => (from_etcd, replay.cloned().collect::<Vec<_>>()),
            Err(msg) => return st.send(cause, watcher, session, msg),
        };
        // `processInterval`: the RV of the last event replayed (of any namespace) bounds the
        // bookmarks that follow.
        let replayed_to = replay.last().map_or(from, |c| c.object.rv.max(from));
        let watch = self.open_watch(st, watcher, session, from_etcd, (from, replayed_to));
        let selector = st.clients.selector(watcher);
        let replayed = replay
            .iter()
            .filter(|c| namespace.is_none_or(|ns| ns == c.object.namespace))
            .filter(|c| {
                selector
                    .as_ref()
                    .is_none_or(|s| s.convert(c, st.names).is_some())
            })
            .count() as u32;
        let opened = Msg::WatchOpened {
            watch,
            from_rv: from,
            replayed,
        };
        st.send(cause, watcher, session, opened);
        for change in replay {
            self.send_event(st, watch, change, false, cause);
        }
        self.arm_watch_timers(st, watch, timeout_ms, cause);
    }

    /// What a watch of `kind` from `from` replays first (and whether etcd serves it, for a kind
    /// without a watch cache), or the message that refuses it: 429 while the cache is not
    /// ready, 410 when `from` is compacted or older than the cache's history
    /// (`watch_cache.go` `getAllEventsSinceLocked`: "too old resource version").
    /// The replay is a range of the cache's buffer or of etcd's log for the kind, found by
    /// binary search: a probe counts it without copying.
    // The error is a message sent as it is, moved once; a change with its previous body
    // (for selectors) passed clippy's 128 bytes.
    #[allow(clippy::result_large_err)]
    pub(super) fn watch_replay<'a>(
        &'a self,
        etcd: &'a Etcd,
        kind: KindId,
        from: Rv,
    ) -> Result<(bool, std::collections::vec_deque::Iter<'a, Change>), Msg> {
        let cache = &self.caches[kind.index()];
        if cache.mode() == CacheMode::Off {
            if from + 1 < etcd.compact_rev() {
                return Err(Msg::WatchErr(ApiError::WatchCompacted));
            }
            return Ok((true, etcd.log_after(kind, from)));
        }
        if !cache.ready() {
            return Err(Msg::Refused(ApiError::TooManyRequests));
        }
        match cache.check_watch_start(from) {
            // An ERROR event inside an HTTP 200 stream, then the stream ends.
            WatchStart::TooOld {
                requested,
                oldest_minus_one,
            } => Err(Msg::WatchErr(ApiError::TooOld {
                requested,
                oldest_minus_one: IssuedRv::new(oldest_minus_one),
            })),
            WatchStart::Ok => Ok((false, cache.events_after(from))),
        }
    }
}

/// Serving as client-go's fake clientset does (`testing/fixture.go` `ObjectTracker`): the
/// tracker is etcd's store read directly; no cache, no paging, no timeouts, bookmarks or errors.
impl Apiserver {
    /// `tracker.List`: every object; the list's RV is "" up to client-go 1.35, the tracker's
    /// counter from 1.36 (the model's global revision stands in for the per-kind counter).
    fn fake_list(
        &mut self,
        st: &mut StepContext,
        watcher: WatcherId,
        session: Session,
        tracker: FakeTracker,
        cause: EventId,
    ) {
        let items = EtcdReader(st.etcd).kind_objects(st.clients.kind(watcher));
        let items = filter_namespace(st, watcher, items);
        let list_rv = match tracker {
            FakeTracker::NoResourceVersion => 0,
            FakeTracker::ReplaysFromResourceVersion => st.etcd.rev(),
        };
        let answer = Msg::ListOk {
            list_rv,
            items,
            from_etcd: true,
            rest: vec![],
        };
        st.send(cause, watcher, session, answer);
    }

    /// `tracker.Watch`: a subscriber to every later write of the kind (relayed as etcd relays
    /// a kind without a cache); it never ends. Up to 1.35 the RV asked for is ignored and
    /// nothing is replayed, so a write between the list and the watch is lost. From 1.36 every
    /// stored object written after `from` is replayed as ADDED; deletes are not (#141528).
    fn fake_watch(
        &mut self,
        st: &mut StepContext,
        watcher: WatcherId,
        session: Session,
        (tracker, from): (FakeTracker, Rv),
        cause: EventId,
    ) {
        let kind = st.clients.kind(watcher);
        let mut replay: Vec<Object> = match tracker {
            FakeTracker::NoResourceVersion => vec![],
            FakeTracker::ReplaysFromResourceVersion => {
                let objects = EtcdReader(st.etcd).kind_objects(kind);
                let newer = objects.into_iter().filter(|o| o.rv > from).collect();
                filter_namespace(st, watcher, newer)
            }
        };
        crate::order::sort_by_u64(&mut replay, |o| o.rv);
        let now = st.etcd.rev();
        let watch = self.open_watch(st, watcher, session, true, (from, now));
        let opened = Msg::WatchOpened {
            watch,
            from_rv: from,
            replayed: replay.len() as u32,
        };
        st.send(cause, watcher, session, opened);
        for object in replay {
            let change = Change {
                event: EventType::Added,
                object: Arc::new(object),
                time_ms: st.now_ms,
                prev: Default::default(),
            };
            st.watch_event(cause, watch, change, false);
        }
        st.watches[watch.index()].last_sent = now;
    }
}

/// The watches it serves (`cache_watcher.go`).
impl Apiserver {
    /// Registers a server-side watch of the watcher's kind that has sent everything up to
    /// `from`, and whose initial replay (or initial events) ends at `replayed_to`.
    fn open_watch(
        &mut self,
        st: &mut StepContext,
        watcher: WatcherId,
        session: Session,
        from_etcd: bool,
        (from, replayed_to): (Rv, Rv),
    ) -> WatchId {
        let (kind, namespace) = (st.clients.kind(watcher), st.clients.namespace(watcher));
        let watch = WatchId(st.watches.len() as u32);
        st.watches.push(ServerWatch {
            watcher,
            session,
            apiserver: st.api,
            kind,
            namespace,
            selector: st.clients.selector(watcher),
            from_etcd,
            last_sent: from,
            replayed_to,
            deadline_ms: TimeMs::ZERO,
            open: true,
            in_flight: 0,
        });
        if !from_etcd {
            self.watches_by_kind[kind.index()].push(watch);
        }
        watch
    }

    /// The server-side timeout the client asked for, and the first bookmark.
    fn arm_watch_timers(
        &mut self,
        st: &mut StepContext,
        watch: WatchId,
        timeout: DurationMs,
        cause: EventId,
    ) {
        self.arm_watch_timeout(st, watch, timeout, cause);
        self.schedule_bookmark(st, watch, cause);
    }

    fn arm_watch_timeout(
        &mut self,
        st: &mut StepContext,
        watch: WatchId,
        timeout: DurationMs,
        cause: EventId,
    ) {
        let deadline = st.now_ms + timeout;
        st.watches[watch.index()].deadline_ms = deadline;
        st.out.timer(
            deadline,
            cause,
            Action::Server(ServerAction::WatchTimeout { watch }),
        );
    }

    /// Offers one change to a watch (`ServerWatch::offer`): sent, skipped, or the watch closes
    /// as too slow.
    pub(super) fn send_event(
        &mut self,
        st: &mut StepContext,
        watch: WatchId,
        change: Change,
        live: bool,
        cause: EventId,
    ) {
        let w = &mut st.watches[watch.index()];
        let slow_link = live && st.clients.slow_link(w.watcher);
        match w.offer(
            &change,
            live,
            slow_link,
            st.config.watch_chan_capacity,
            st.names,
        ) {
            Offer::Skip => {}
            Offer::Send => {
                st.watch_event(cause, watch, change, live);
            }
            Offer::SendAs(event) => st.watch_event(cause, watch, change.converted(event), live),
            Offer::TooSlow => self.close_watch(st, watch, WatchEnd::TooSlow, cause),
        }
    }

    /// etcd's watch event for a watch this apiserver relays from etcd (a kind without a cache).
    pub(super) fn relay(
        &mut self,
        st: &mut StepContext,
        watch: WatchId,
        change: Change,
        cause: EventId,
    ) {
        self.send_event(st, watch, change, true, cause);
    }

    /// `cache_watcher.go` `process`: a due bookmark carries the cache's current RV and is sent
    /// whenever that RV is above the RV the watch's initial replay ended at, even if a live event
    /// or an earlier bookmark sent it before (a quiet watch still gets one about every minute).
    /// Watches served by etcd get none.
    fn send_bookmark(&mut self, st: &mut StepContext, watch: WatchId, cause: EventId) {
        let w = &mut st.watches[watch.index()];
        if !w.open || w.from_etcd {
            return;
        }
        let cache = &self.caches[w.kind.index()];
        if !cache.ready() || cache.rv() <= w.replayed_to {
            return;
        }
        let rv = cache.rv();
        w.last_sent = w.last_sent.max(rv);
        let (watcher, session) = (w.watcher, w.session);
        st.send(cause, watcher, session, Msg::Bookmark { rv });
    }

    /// A watch's bookmark is due: send it, and schedule the next.
    pub(super) fn bookmark_due(&mut self, st: &mut StepContext, watch: WatchId, cause: EventId) {
        if st.watches[watch.index()].open {
            self.send_bookmark(st, watch, cause);
            self.schedule_bookmark(st, watch, cause);
        }
    }

    /// `cache_watcher.go` `nextBookmarkTime`: the next bookmark a minute from now, or 2 s before
    /// the deadline if that comes first; none once that moment has passed. `cacher.go`
    /// (`watcherBookmarkTimeBuckets`, `dispatchEvents`): the watch waits in the bucket of that
    /// moment's second, and the bookmark timer, popping once a second, sends it at the start of
    /// that second; a second already popped (the current one) means the next.
    fn schedule_bookmark(&mut self, st: &mut StepContext, watch: WatchId, cause: EventId) {
        let w = &st.watches[watch.index()];
        if !st.clients.bookmarks(st.config, w.watcher) || w.from_etcd {
            return;
        }
        let pre_deadline = w.deadline_ms.saturating_sub(BOOKMARK_BEFORE_DEADLINE_MS);
        let heartbeat = match st.config.bookmark_ms {
            DurationMs::ZERO => pre_deadline,
            period => (st.now_ms + period).min(pre_deadline),
        };
        if heartbeat > st.now_ms {
            let bucket =
                (heartbeat.ms() / BOOKMARK_TICK_MS).max(st.now_ms.ms() / BOOKMARK_TICK_MS + 1);
            let pop = TimeMs(bucket * BOOKMARK_TICK_MS);
            st.out.timer(
                pop,
                cause,
                Action::Server(ServerAction::BookmarkDue { watch }),
            );
        }
    }

    /// Ends one of its watches (a timeout, a broken connection, too slow, a re-initialised
    /// cache); the client learns why.
    pub(super) fn close_watch(
        &mut self,
        st: &mut StepContext,
        watch: WatchId,
        reason: WatchEnd,
        cause: EventId,
    ) {
        let w = &mut st.watches[watch.index()];
        if !w.open {
            return;
        }
        debug_assert_eq!(w.apiserver, st.api, "an apiserver closes its own watches");
        w.open = false;
        let (kind, watcher, session) = (w.kind, w.watcher, w.session);
        self.watches_by_kind[kind.index()].retain(|&i| i != watch);
        let end = Msg::WatchEnd(reason);
        if reason == WatchEnd::Disconnected {
            // The client sees its own broken connection at once.
            let deliver = Call::Deliver {
                watcher,
                session,
                msg: end,
            };
            st.out.call(cause, deliver);
        } else {
            st.send(cause, watcher, session, end);
        }
    }

    /// Forgets one of its watches without a word to the client: the client's process died, and
    /// nobody reads the stream any more.
    pub(super) fn forget_watch(&mut self, st: &mut StepContext, watch: WatchId) {
        let w = &mut st.watches[watch.index()];
        if !w.open {
            return;
        }
        debug_assert_eq!(w.apiserver, st.api, "an apiserver forgets its own watches");
        w.open = false;
        self.watches_by_kind[w.kind.index()].retain(|&i| i != watch);
    }
}

/// A list's items in the request's namespace and, with a label selector, matching it
/// (`cacher.go` `GetList` filters with the request's predicate).
fn filter_namespace(st: &StepContext, watcher: WatcherId, mut items: Vec<Object>) -> Vec<Object> {
    if let Some(ns) = st.clients.namespace(watcher) {
        items.retain(|o| o.namespace == ns);
    }
    if let Some(sel) = st.clients.selector(watcher) {
        items.retain(|o| sel.matches_object(o, st.names));
    }
    items
}

/// The first `limit` items as a list answer, the rest for the continue token (0: everything).
fn page(list_rv: Rv, mut items: Vec<Object>, limit: u32) -> Msg {
    let rest = if limit > 0 && items.len() > limit as usize {
        items.split_off(limit as usize)
    } else {
        vec![]
    };
    Msg::ListOk {
        list_rv,
        items,
        from_etcd: true,
        rest,
    }
}

#[cfg(test)]
mod tests {
    use super::super::apiserver::tests::{pod, World};
    use super::super::step::testing::Stepped;
    use super::*;

    /// A cache of 3 events that has seen RVs 2 to 7: it holds 5, 6 and 7.
    fn cache_at_7(world: &mut World) -> Apiserver {
        let mut api = world.apiserver();
        world.step(&mut api, TimeMs(0), |a, st| {
            for rv in 2..=7 {
                a.change(st, pod(rv), 0);
            }
        });
        api
    }

    fn watch(api: &mut Apiserver, world: &mut World, from: Rv) -> Stepped {
        world.step(api, TimeMs::ZERO, |a, st| {
            a.serve_watch(st, WatcherId(0), Session(1), (from, DurationMs(60_000)), 1)
        })
    }

    /// `watch_cache.go` `getAllEventsSinceLocked`: a watch from an RV older than the oldest
    /// event the cache still holds gets 410 "too old resource version: 3 (4)" (an ERROR event in
    /// the stream), and no watch is registered.
    #[test]
    fn a_watch_from_before_the_cache_s_oldest_event_gets_410_too_old() {
        let mut world = World::new(3);
        let mut api = cache_at_7(&mut world);
        let out = watch(&mut api, &mut world, 3);
        let too_old = ApiError::TooOld {
            requested: 3,
            oldest_minus_one: IssuedRv::new(4),
        };
        assert_eq!(out.sent(), [Msg::WatchErr(too_old)]);
        assert!(world.watches.is_empty() && api.watches_by_kind[0].is_empty());
        assert!(out.timers().is_empty());
    }

    /// The oldest RV a watch may start from is the oldest held event's minus one: it replays
    /// every event after it (blocking sends, not live), then the timeout and a bookmark are set.
    #[test]
    fn a_watch_from_the_cache_s_window_replays_what_came_after_it() {
        let mut world = World::new(3);
        let mut api = cache_at_7(&mut world);
        let out = watch(&mut api, &mut world, 4);
        let sent = out.sent();
        assert!(matches!(
            sent[0],
            Msg::WatchOpened {
                watch: WatchId(0),
                from_rv: 4,
                replayed: 3
            }
        ));
        let replayed: Vec<(Rv, bool)> = sent[1..]
            .iter()
            .map(|m| match m {
                Msg::Event { change, live, .. } => (change.object.rv, *live),
                other => panic!("an event: {other:?}"),
            })
            .collect();
        assert_eq!(replayed, [(5, false), (6, false), (7, false)]);
        assert_eq!(api.watches_by_kind[0], [WatchId(0)]);
        let w = &world.watches[0];
        assert_eq!(
            (w.last_sent, w.deadline_ms, w.open),
            (7, TimeMs(60_000), true)
        );
        let at: Vec<TimeMs> = out.timers().iter().map(|t| t.0).collect();
        assert_eq!(
            at,
            [TimeMs(60_000), TimeMs(58_000)],
            "the timeout, then a bookmark 2 s before it"
        );
    }

    /// `cache_watcher.go` `process`: a bookmark at the RV the initial replay ended at is dropped;
    /// once the cache's RV is past it, the bookmark goes out.
    #[test]
    fn a_bookmark_goes_out_only_past_the_rv_the_replay_ended_at() {
        let mut world = World::new(3);
        let mut api = cache_at_7(&mut world);
        watch(&mut api, &mut world, 4);
        assert_eq!(world.watches[0].replayed_to, 7);
        let due = |api: &mut Apiserver, world: &mut World| {
            let out = world.step(api, TimeMs(30_000), |a, st| {
                a.bookmark_due(st, WatchId(0), 2)
            });
            out.sent()
        };
        assert!(due(&mut api, &mut world).is_empty(), "rv 7 was replayed");
        world.step(&mut api, TimeMs(30_000), |a, st| {
            a.change(st, pod(8), 3);
        });
        assert_eq!(due(&mut api, &mut world), [Msg::Bookmark { rv: 8 }]);
    }

    /// client-go `testing/fixture.go`: the fake tracker's list is every object, at list RV ""
    /// (0) up to 1.35 and at its counter from 1.36; its watch arms no timer (no timeout, no
    /// bookmark), replays nothing up to 1.35, and from 1.36 replays as ADDED, in RV order, what
    /// was written after the RV asked for.
    #[test]
    fn the_fake_tracker_lists_everything_and_replays_only_from_1_36() {
        for tracker in [
            FakeTracker::NoResourceVersion,
            FakeTracker::ReplaysFromResourceVersion,
        ] {
            let mut world = World::new(3);
            world.config.apiservers[0].fake = Some(tracker);
            for n in 1..=3 {
                let pod = Object::fixture(KindId(0), NameId(n), n as u64, 0);
                world.etcd.commit(pod, EventType::Added, TimeMs(0));
            }
            let mut api = world.apiserver();
            let out = world.step(&mut api, TimeMs(0), |a, st| {
                let list = (ListRv::Any, 500);
                a.serve_list(st, WatcherId(0), Session(1), list, 0)
            });
            let (list_rv, replayed) = match tracker {
                FakeTracker::NoResourceVersion => (0, vec![]),
                FakeTracker::ReplaysFromResourceVersion => {
                    (4, vec![(3, EventType::Added), (4, EventType::Added)])
                }
            };
            assert!(
                matches!(&out.sent()[..], [Msg::ListOk { list_rv: r, items, rest, .. }] if *r == list_rv && items.len() == 3 && rest.is_empty()),
                "{tracker:?}: {:?}",
                out.sent()
            );
            let out = watch(&mut api, &mut world, 2);
            let events: Vec<(Rv, EventType)> = out
                .sent()
                .iter()
                .filter_map(|m| match m {
                    Msg::Event { change, .. } => Some((change.object.rv, change.event)),
                    _ => None,
                })
                .collect();
            assert_eq!(events, replayed, "{tracker:?}");
            assert!(
                out.timers().is_empty(),
                "{tracker:?}: the fake's watch never ends"
            );
            assert!(world.watches[0].from_etcd, "relayed from etcd's store");
            assert_eq!(world.watches[0].last_sent, 4, "only later writes follow");
        }
    }

    /// antrea #8123: a server that omits `k8s.io/initial-events-end` ends a streaming list's
    /// initial events with a plain bookmark, arms the stream's timeout and no bookmark timer.
    #[test]
    fn a_server_that_omits_the_annotation_sends_a_plain_bookmark() {
        let mut world = World::new(3);
        world.config.apiservers[0].omits_initial_events_end = true;
        let mut api = world.apiserver();
        let out = world.step(&mut api, TimeMs(0), |a, st| {
            let request = (ListRv::Consistent, DurationMs(60_000));
            a.serve_watch_list(st, WatcherId(0), Session(1), request, 0)
        });
        assert!(
            matches!(out.sent()[..], [Msg::WatchListUnended { rv: 1, .. }]),
            "{:?}",
            out.sent()
        );
        let at: Vec<TimeMs> = out.timers().iter().map(|t| t.0).collect();
        assert_eq!(at, [TimeMs(60_000)], "the timeout only");
    }

    /// `cache_watcher.go`: a watch takes a change newer than what it sent, in its namespace;
    /// live events wait in its channel while the client's link is slow, and one too many
    /// closes it as too slow. A replay (not live) blocks instead and never counts.
    #[test]
    fn a_watch_takes_newer_changes_and_closes_once_its_channel_is_full() {
        let mut world = World::new(100);
        let mut api = world.apiserver();
        watch(&mut api, &mut world, 1);
        let w = &mut world.watches[0];
        let offers: Vec<Offer> = [(2, false), (3, true), (3, true), (4, true), (5, true)]
            .iter()
            .map(|&(rv, live)| w.offer(&pod(rv), live, true, 2, &Names::default()))
            .collect();
        use Offer::*;
        assert_eq!(offers, [Send, Send, Skip, Send, TooSlow]);
        assert_eq!((w.last_sent, w.in_flight), (5, 3));
        w.namespace = Some(NameId(7));
        let mut elsewhere = pod(6);
        Arc::make_mut(&mut elsewhere.object).namespace = NameId(8);
        assert_eq!(
            w.offer(&elsewhere, false, false, 2, &Names::default()),
            Skip,
            "another namespace"
        );
    }
}
