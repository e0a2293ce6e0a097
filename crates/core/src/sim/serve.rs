//! The apiserver's request-serving side (`cacher.go`, `cache_watcher.go`, etcd's delegate):
//! lists, pages, streaming lists and watches, whoever sends them (a reflector or a probe), and
//! the watches it then serves (events, bookmarks, timeouts, closing). Each entry point takes a
//! request or a timer that the engine routed to this apiserver and writes its events and
//! messages. A list and a watch are each one decision (`decide_list`, `decide_watch`), pure
//! functions of the cache, the server's features and the request; the requester is data that
//! says only where the answer goes.

use super::apiserver::{Offer, StepContext};
use super::*;
use crate::config::ServerFeatures;

/// A server watch's timers (`cache_watcher.go`).
const BOOKMARK_BEFORE_DEADLINE_MS: DurationMs = DurationMs(2000);
/// The period of the cacher's bookmark timer, and the width of its buckets (`cacher.go`).
const BOOKMARK_TICK_MS: u64 = 1000;

/// Who sent a request, so its answer goes back there: a reflector's over its link (its session
/// makes a late answer stale), a probe's as an event by the probe (`probe.rs`).
#[derive(Clone, Copy, Debug, Hash, PartialEq, Eq)]
pub(super) enum Requester {
    Reflector {
        watcher: WatcherId,
        session: Session,
    },
    Probe {
        probe: u32,
    },
}

impl Requester {
    /// What its waiting read's deadline (`ServerAction::ListDeadline`) names: a probe's
    /// watcher is `PROBE_WATCHER`, its session the probe's number.
    pub(super) fn deadline_key(self) -> (WatcherId, Session) {
        match self {
            Requester::Reflector { watcher, session } => (watcher, session),
            Requester::Probe { probe } => (PROBE_WATCHER, Session(probe)),
        }
    }
}

/// What a request names besides its resourceVersion, as its path and client-go's
/// `ListOptions` do: the kind (the path's resource), the namespace (`None`: every one), the
/// label and field selector, and `allowWatchBookmarks`. The reflector fills it from its
/// ListWatch when it sends (`Reflector::scope`), a probe its own; the apiserver reads nothing
/// else of its clients.
#[derive(Clone, Debug, Hash, PartialEq, Eq)]
pub(super) struct RequestScope {
    pub kind: KindId,
    pub namespace: Option<NameId>,
    pub selector: Option<Arc<crate::object::Selector>>,
    pub bookmarks: bool,
}

impl RequestScope {
    /// Whether the request carries a label or field selector.
    pub(super) fn selected(&self) -> bool {
        self.selector.is_some()
    }

    /// Whether an object is in the request's namespace and, with a selector, matches it
    /// (`cacher.go` `GetList` filters with the request's predicate).
    fn requested(&self, names: &Names, o: &Object) -> bool {
        self.namespace.is_none_or(|ns| o.namespace == ns)
            && (self.selector.as_ref()).is_none_or(|sel| sel.matches_object(o, names))
    }
}

/// A list as the decision reads it: its resourceVersion, `limit` (0: none; a probe's list
/// has none, a reflector's pager sets one unless it lists at an RV) and what it names.
#[derive(Clone, Debug, Hash, PartialEq, Eq)]
pub(super) struct ListRequest {
    pub rv: ListRv,
    pub limit: u32,
    pub scope: RequestScope,
}

/// What the apiserver does with a list (`delegator.go` `GetList`, `cacher.go` `GetList`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum ListDecision {
    /// Wait until the cache is ready (`c.ready.wait`, before 1.31), then decide again.
    Park,
    Refuse(ApiError),
    /// The cache's state now.
    FromCache,
    /// The cache's state once it has seen `rv`, for at most 3 s (`waitUntilFreshAndBlock`);
    /// a consistent read first asks etcd for a progress notification.
    WaitForCache {
        rv: Rv,
        read: ReadKind,
    },
    /// etcd's state now (`at: None`, first page of `limit`) or at exactly revision `at`.
    FromEtcd {
        at: Option<Rv>,
    },
}

/// The one list decision, for every requester. `etcd_rev` and `compact_rev` are etcd's.
pub(super) fn decide_list(
    cache: &WatchCache,
    features: &ServerFeatures,
    request: &ListRequest,
    (etcd_rev, compact_rev): (Rv, Rv),
) -> ListDecision {
    use ListDecision::*;
    let too_large = |requested| {
        let current = IssuedRv::new(etcd_rev);
        Refuse(ApiError::TooLargeRv { requested, current })
    };
    let resilient = features.resilient_cache_init;
    // Before 1.31 (`cacher.go` `GetList`) only a list at an RV "N" without a limit waits for a
    // cache that is not ready (`c.ready.wait`): `shouldDelegateList` first sends etcd an Exact
    // list, a consistent one without ConsistentListFromCache and one with a limit, and
    // `listRV == 0 && !c.ready.check()` sends it RV "0" and "" too.
    if cache.reinitialising() && !resilient {
        if let (ListRv::NotOlderThan(_), 0) = (request.rv, request.limit) {
            return Park;
        }
    }
    let ready = cache.mode() != CacheMode::Off && cache.ready();
    match request.rv {
        // `delegator.go` `shouldDelegateList`: an Exact list is etcd's (`etcd3/store.go`: 410
        // once compacted, 504 beyond etcd's revision).
        ListRv::Exact(n) if n < compact_rev => Refuse(ApiError::ListCompacted),
        ListRv::Exact(n) if n > etcd_rev => too_large(n),
        ListRv::Exact(n) => FromEtcd { at: Some(n) },
        // `delegator.go` `shouldDelegateList` ("Consistent Read"), before the readiness check:
        // without ConsistentListFromCache an RV "" list is etcd's, ready or not.
        ListRv::Consistent if !features.consistent_list_from_cache => FromEtcd { at: None },
        // `delegator.go` `shouldDelegateListOnNotReadyCache`: a cache re-initialising hands
        // etcd only lists with a `limit` and no selector; the others (a relist at an RV, a
        // probe, a selector's list) get 429 (`c.ready.wait`).
        _ if cache.reinitialising()
            && resilient
            && (request.limit == 0 || request.scope.selected()) =>
        {
            Refuse(ApiError::TooManyRequests)
        }
        ListRv::Any if ready => FromCache,
        ListRv::NotOlderThan(n) if ready && cache.rv() >= n => FromCache,
        ListRv::NotOlderThan(n) if ready => WaitForCache {
            rv: n,
            read: ReadKind::NotOlderThan,
        },
        // ConsistentListFromCache (1.31+): the cache answers once it has seen etcd's current
        // revision, which it learns from a progress notification. Before, etcd answers.
        ListRv::Consistent if ready && features.consistent_list_from_cache => WaitForCache {
            rv: etcd_rev,
            read: ReadKind::Consistent {
                limit: request.limit,
            },
        },
        // `etcd3/store.go` `validateMinimumResourceVersion`: etcd is never older than now.
        ListRv::NotOlderThan(n) if n > etcd_rev => too_large(n),
        // etcd: the kind has no cache, the cache is re-initialising and the list has a limit
        // (etcd's answer is consistent and so never older), or a consistent list before
        // ConsistentListFromCache.
        _ => FromEtcd { at: None },
    }
}

/// Where a watch starts: after an RV (`resourceVersion=N`, "0" included), or at the most
/// recent state (`resourceVersion` unset; only probes send it).
#[derive(Clone, Copy, Debug, Hash, PartialEq, Eq)]
pub(super) enum WatchFrom {
    Rv(Rv),
    MostRecent,
}

impl WatchFrom {
    /// The RV a watch reports it started from: the one asked for, or the state's it starts at.
    pub(super) fn rv_or(self, current: Rv) -> Rv {
        match self {
            WatchFrom::Rv(rv) => rv,
            WatchFrom::MostRecent => current,
        }
    }
}

/// A watch as the decision reads it, the server-side timeout the client asked for (a probe
/// keeps no stream and asks none), and what it names.
#[derive(Clone, Debug, Hash, PartialEq, Eq)]
pub(super) struct WatchRequest {
    pub from: WatchFrom,
    pub timeout_ms: DurationMs,
    pub scope: RequestScope,
}

/// What the apiserver does with a watch (`delegator.go` `Watch`, `cacher.go` `Watch`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum WatchDecision {
    /// Wait until the cache is ready (`c.ready.wait`, before 1.31), then decide again.
    Park,
    /// Refused when it opens (429: the cache is not ready).
    Refuse(ApiError),
    /// An ERROR event inside an HTTP 200 stream (410), then the stream ends.
    Fail(ApiError),
    /// What came after `after` (the cache's buffer, or etcd's log for a kind without a
    /// cache), then live events.
    Replay { after: Rv, from_etcd: bool },
    /// The current state as synthetic ADDED events, then live events.
    CurrentState { from_etcd: bool },
}

/// The one watch decision, for every requester. `compact_rev` is etcd's.
pub(super) fn decide_watch(
    cache: &WatchCache,
    features: &ServerFeatures,
    from: WatchFrom,
    compact_rev: Rv,
) -> WatchDecision {
    use WatchDecision::*;
    let off = cache.mode() == CacheMode::Off;
    // `cacher.go` `Watch`: with WatchFromStorageWithoutResourceVersion an RV "" watch is
    // etcd's, a consistent start at etcd's revision, sent there before the cache's readiness is
    // looked at (`c.ready.wait`); so is every watch of a kind without a cache.
    if from == WatchFrom::MostRecent && (off || features.watch_from_storage_without_rv) {
        return CurrentState { from_etcd: true };
    }
    if cache.reinitialising() && !features.resilient_cache_init {
        return Park;
    }
    match from {
        // `etcd3/watcher.go`: from revision 0 etcd first sends its current state (`sync`).
        WatchFrom::Rv(0) if off => CurrentState { from_etcd: true },
        // `etcd3/watcher.go`: `WithRev(from + 1)` fails once that revision is compacted.
        WatchFrom::Rv(after) if off && after + 1 < compact_rev => Fail(ApiError::WatchCompacted),
        WatchFrom::Rv(after) if off => Replay {
            after,
            from_etcd: true,
        },
        // `cacher.go` `Watch` (ResilientWatchCacheInitialization): 429 while not ready.
        _ if !cache.ready() => Refuse(ApiError::TooManyRequests),
        // RV "0", and RV "" (`cacher.go` `getWatchCacheResourceVersion`: "legacy case"),
        // never too old: they start with the cache's state (semantics.md §4).
        WatchFrom::Rv(0) | WatchFrom::MostRecent => CurrentState { from_etcd: false },
        // `watch_cache.go` `getAllEventsSinceLocked`: "too old resource version".
        WatchFrom::Rv(after) => match cache.check_watch_start(after) {
            WatchStart::TooOld {
                requested,
                oldest_minus_one,
            } => Fail(ApiError::TooOld {
                requested,
                oldest_minus_one: IssuedRv::new(oldest_minus_one),
            }),
            WatchStart::Ok => Replay {
                after,
                from_etcd: false,
            },
        },
    }
}

impl Apiserver {
    /// A reflector's list (client-go's pager, or a relist at a resourceVersion).
    pub(super) fn serve_list(
        &mut self,
        st: &mut StepContext,
        watcher: WatcherId,
        session: Session,
        request: ListRequest,
        cause: EventId,
    ) {
        if let Some(tracker) = self.fake {
            return self.fake_list(st, (watcher, session), &request.scope, tracker, cause);
        }
        let requester = Requester::Reflector { watcher, session };
        self.list(st, requester, request, cause);
    }

    /// A list, a reflector's or a probe's: the list decision, answered to whoever asked.
    pub(super) fn list(
        &mut self,
        st: &mut StepContext,
        requester: Requester,
        request: ListRequest,
        cause: EventId,
    ) {
        let cache = &self.caches[request.scope.kind.index()];
        let etcd = (st.etcd.rev(), st.etcd.compact_rev());
        match decide_list(cache, &st.config.server, &request, etcd) {
            ListDecision::Park => self.park(Parked::List { requester, request }),
            ListDecision::Refuse(error) => self.list_refused(st, requester, error, cause),
            ListDecision::FromCache => {
                self.answer_list_from_cache(st, requester, &request.scope, cause)
            }
            ListDecision::WaitForCache { rv, read } => {
                if let ReadKind::Consistent { .. } = read {
                    self.request_progress(st, cause);
                }
                let r = WaitingRead {
                    rv,
                    scope: request.scope,
                    read: Waiting::List { requester, read },
                };
                self.read_when_fresh(st, r, cause);
            }
            ListDecision::FromEtcd { at } => {
                let (at_limit, scope) = ((at, request.limit), &request.scope);
                self.answer_list_from_etcd(st, requester, scope, at_limit, cause)
            }
        }
    }

    /// A list's error, to whoever asked.
    pub(super) fn list_refused(
        &mut self,
        st: &mut StepContext,
        requester: Requester,
        error: ApiError,
        cause: EventId,
    ) {
        match requester {
            Requester::Reflector { watcher, session } => {
                st.send(cause, watcher, session, Msg::ListErr(error))
            }
            Requester::Probe { probe } => self.probe_failed(st, probe, error, cause),
        }
    }

    /// etcd's answer: now, where etcd honours `limit` (the first page, and a continue token for
    /// the rest), or at exactly revision `at` (only probes list Exact: client-go's reflector
    /// never does, and the counts history has no objects to page).
    pub(super) fn answer_list_from_etcd(
        &mut self,
        st: &mut StepContext,
        requester: Requester,
        scope: &RequestScope,
        (at, limit): (Option<Rv>, u32),
        cause: EventId,
    ) {
        match requester {
            Requester::Reflector { watcher, session } => {
                debug_assert!(at.is_none(), "a reflector never lists Exact");
                let items = EtcdReader(st.etcd).kind_objects(scope.kind);
                let items = filter_requested(st.names, scope, items);
                st.send(cause, watcher, session, page(st.etcd.rev(), items, limit));
            }
            Requester::Probe { probe } => self.probe_from_etcd(st, probe, scope, at, cause),
        }
    }

    /// The cache's state now, to whoever asked.
    pub(super) fn answer_list_from_cache(
        &mut self,
        st: &mut StepContext,
        requester: Requester,
        scope: &RequestScope,
        cause: EventId,
    ) {
        let (watcher, session) = match requester {
            Requester::Reflector { watcher, session } => (watcher, session),
            Requester::Probe { probe } => return self.probe_from_cache(st, probe, scope, cause),
        };
        let cache = &self.caches[scope.kind.index()];
        let (list_rv, items) = (cache.rv(), cached_items(st.names, scope, cache));
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
        (watcher, session): (WatcherId, Session),
        (rv, timeout_ms): (ListRv, DurationMs),
        scope: RequestScope,
        cause: EventId,
    ) {
        let cache = &self.caches[scope.kind.index()];
        if cache.mode() == CacheMode::Off || self.fake.is_some() {
            let limit = match rv {
                ListRv::NotOlderThan(_) => 0,
                _ => st.config.reflector.page_size,
            };
            let request = ListRequest { rv, limit, scope };
            return self.serve_list(st, watcher, session, request, cause);
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
                    scope,
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
        let r = WaitingRead {
            rv: want,
            scope,
            read: Waiting::WatchList {
                watcher,
                session,
                timeout_ms,
            },
        };
        self.read_when_fresh(st, r, cause);
    }

    /// The initial events of a streaming list, from the cache, and the watch that goes on.
    pub(super) fn answer_watch_list(
        &mut self,
        st: &mut StepContext,
        (watcher, session): (WatcherId, Session),
        scope: &RequestScope,
        timeout_ms: DurationMs,
        cause: EventId,
    ) {
        let cache = &self.caches[scope.kind.index()];
        let (at, items) = (cache.rv(), cached_items(st.names, scope, cache));
        let watch = self.open_watch((watcher, session), scope, false, (at, at));
        if self.omits_initial_events_end {
            // antrea #8123: the initial events end with a plain BOOKMARK; no periodic
            // bookmarks follow on such a server's streams.
            let unended = Msg::WatchListUnended {
                watch: st.watch_ref(watch),
                rv: at,
            };
            st.send(cause, watcher, session, unended);
            return self.arm_watch_timeout(st, watch, timeout_ms, cause);
        }
        let start = Msg::WatchListStart {
            watch: st.watch_ref(watch),
            items,
            rv: at,
        };
        st.send(cause, watcher, session, start);
        self.arm_watch_timers(st, watch, timeout_ms, cause);
    }

    /// A reflector's watch from `from`: the replay of what came after it, then live events.
    pub(super) fn serve_watch(
        &mut self,
        st: &mut StepContext,
        watcher: WatcherId,
        session: Session,
        request: WatchRequest,
        cause: EventId,
    ) {
        if let Some(tracker) = self.fake {
            let from = request.from.rv_or(0);
            return self.fake_watch(
                st,
                (watcher, session),
                &request.scope,
                (tracker, from),
                cause,
            );
        }
        let requester = Requester::Reflector { watcher, session };
        self.watch(st, requester, request, cause);
    }

    /// A watch, a reflector's or a probe's: the watch decision, answered to whoever asked.
    pub(super) fn watch(
        &mut self,
        st: &mut StepContext,
        requester: Requester,
        request: WatchRequest,
        cause: EventId,
    ) {
        let kind = request.scope.kind;
        let cache = &self.caches[kind.index()];
        let compact_rev = st.etcd.compact_rev();
        let decision = decide_watch(cache, &st.config.server, request.from, compact_rev);
        let (watcher, session) = match requester {
            Requester::Reflector { watcher, session } => (watcher, session),
            Requester::Probe { probe } => {
                return self.answer_probe_watch(st, probe, request, decision, cause)
            }
        };
        match decision {
            WatchDecision::Park => self.park(Parked::Watch { requester, request }),
            WatchDecision::Refuse(error) => st.send(cause, watcher, session, Msg::Refused(error)),
            WatchDecision::Fail(error) => st.send(cause, watcher, session, Msg::WatchErr(error)),
            WatchDecision::Replay { after, from_etcd } => {
                let replay = self
                    .replay(st.etcd, kind, after, from_etcd)
                    .cloned()
                    .collect();
                let (scope, timeout) = (&request.scope, request.timeout_ms);
                let (after_timeout, replay) = ((after, timeout), (from_etcd, replay));
                self.open_replayed(st, (watcher, session), scope, after_timeout, replay, cause)
            }
            WatchDecision::CurrentState { from_etcd } => {
                self.open_at_state(st, (watcher, session), &request, from_etcd, cause)
            }
        }
    }

    /// A reflector's watch opens after `from`: its replay (blocking sends, not live), then its
    /// timeout and first bookmark.
    fn open_replayed(
        &mut self,
        st: &mut StepContext,
        (watcher, session): (WatcherId, Session),
        scope: &RequestScope,
        (from, timeout_ms): (Rv, DurationMs),
        (from_etcd, replay): (bool, Vec<Change>),
        cause: EventId,
    ) {
        // `processInterval`: the RV of the last event replayed (of any namespace) bounds the
        // bookmarks that follow.
        let replayed_to = replay.last().map_or(from, |c| c.object.rv.max(from));
        let watch = self.open_watch((watcher, session), scope, from_etcd, (from, replayed_to));
        let replayed = replay
            .iter()
            .filter(|c| scope.namespace.is_none_or(|ns| ns == c.object.namespace))
            .filter(|c| (scope.selector.as_ref()).is_none_or(|s| s.convert(c, st.names).is_some()))
            .count() as u32;
        let opened = Msg::WatchOpened {
            watch: st.watch_ref(watch),
            from_rv: from,
            replayed,
        };
        st.send(cause, watcher, session, opened);
        for change in replay {
            // A replay blocks on the channel (`processInterval`): never too slow.
            self.send_event(st, watch, change, Delivery::Replay, cause);
        }
        self.arm_watch_timers(st, watch, timeout_ms, cause);
    }

    /// A reflector's watch opens at the current state (the cache's, or etcd's): synthetic
    /// ADDED events for it, then live events after its RV.
    fn open_at_state(
        &mut self,
        st: &mut StepContext,
        (watcher, session): (WatcherId, Session),
        request: &WatchRequest,
        from_etcd: bool,
        cause: EventId,
    ) {
        let scope = &request.scope;
        let (rv, objects) = if from_etcd {
            let objects = EtcdReader(st.etcd).kind_objects(scope.kind);
            (st.etcd.rev(), filter_requested(st.names, scope, objects))
        } else {
            let cache = &self.caches[scope.kind.index()];
            (cache.rv(), cached_items(st.names, scope, cache))
        };
        let watch = self.open_watch((watcher, session), scope, from_etcd, (rv, rv));
        let w = &self.watches[watch.index()];
        send_added(st, w, request.from.rv_or(rv), objects, cause);
        self.arm_watch_timers(st, watch, request.timeout_ms, cause);
    }
    /// What a watch of `kind` replays after `after`: a range of the cache's buffer or of etcd's
    /// log for the kind, found by binary search (a probe counts it without copying).
    pub(super) fn replay<'a>(
        &'a self,
        etcd: &'a Etcd,
        kind: KindId,
        after: Rv,
        from_etcd: bool,
    ) -> std::collections::vec_deque::Iter<'a, Change> {
        if from_etcd {
            etcd.log_after(kind, after)
        } else {
            self.caches[kind.index()].events_after(after)
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
        (watcher, session): (WatcherId, Session),
        scope: &RequestScope,
        tracker: FakeTracker,
        cause: EventId,
    ) {
        let items = EtcdReader(st.etcd).kind_objects(scope.kind);
        let items = filter_requested(st.names, scope, items);
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
        (watcher, session): (WatcherId, Session),
        scope: &RequestScope,
        (tracker, from): (FakeTracker, Rv),
        cause: EventId,
    ) {
        let mut replay: Vec<Object> = match tracker {
            FakeTracker::NoResourceVersion => vec![],
            FakeTracker::ReplaysFromResourceVersion => {
                let objects = EtcdReader(st.etcd).kind_objects(scope.kind);
                let newer = objects.into_iter().filter(|o| o.rv > from).collect();
                filter_requested(st.names, scope, newer)
            }
        };
        crate::order::sort_by_u64(&mut replay, |o| o.rv);
        let now = st.etcd.rev();
        let watch = self.open_watch((watcher, session), scope, true, (from, now));
        send_added(st, &self.watches[watch.index()], from, replay, cause);
        self.watches[watch.index()].last_sent = now;
    }
}

/// The watches it serves (`cache_watcher.go`).
impl Apiserver {
    /// Registers a server-side watch of what the request names (copied from it: the request
    /// is gone once the watch opens) that has sent everything up to `from`, and whose initial
    /// replay (or initial events) ends at `replayed_to`.
    fn open_watch(
        &mut self,
        (watcher, session): (WatcherId, Session),
        scope: &RequestScope,
        from_etcd: bool,
        (from, replayed_to): (Rv, Rv),
    ) -> WatchId {
        let kind = scope.kind;
        let watch = WatchId(self.watches.len() as u32);
        self.watches.push(ServerWatch {
            id: watch,
            watcher,
            session,
            kind,
            namespace: scope.namespace,
            selector: scope.selector.clone(),
            bookmarks: scope.bookmarks,
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
        self.watches[watch.index()].deadline_ms = deadline;
        let watch = st.watch_ref(watch);
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
        delivery: Delivery,
        cause: EventId,
    ) {
        let w = &mut self.watches[watch.index()];
        let (live, slow_link) = match delivery {
            Delivery::Replay => (false, false),
            Delivery::Live { backed_up } => (true, backed_up),
        };
        match w.offer(
            &change,
            live,
            slow_link,
            st.config.watch_chan_capacity,
            st.names,
        ) {
            Offer::Skip => {}
            Offer::Send => st.watch_event(cause, w, change, live),
            Offer::SendAs(event) => st.watch_event(cause, w, change.converted(event), live),
            Offer::TooSlow => self.close_watch(st, watch, WatchEnd::TooSlow, cause),
        }
    }

    /// etcd's watch event for a watch this apiserver relays from etcd (a kind without a cache);
    /// `backed_up`: the watch's connection is slow (`Delivery::Live`).
    pub(super) fn relay(
        &mut self,
        st: &mut StepContext,
        watch: WatchId,
        (change, backed_up): (Change, bool),
        cause: EventId,
    ) {
        self.send_event(st, watch, change, Delivery::Live { backed_up }, cause);
    }

    /// `cache_watcher.go` `process`: a due bookmark carries the cache's current RV and is sent
    /// whenever that RV is above the RV the watch's initial replay ended at, even if a live event
    /// or an earlier bookmark sent it before (a quiet watch still gets one about every minute).
    /// Watches served by etcd get none.
    fn send_bookmark(&mut self, st: &mut StepContext, watch: WatchId, cause: EventId) {
        let w = &mut self.watches[watch.index()];
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
        if self.watches[watch.index()].open {
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
        let w = &self.watches[watch.index()];
        if !w.bookmarks || w.from_etcd {
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
            let watch = st.watch_ref(watch);
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
        let w = &mut self.watches[watch.index()];
        if !w.open {
            return;
        }
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
    pub(super) fn forget_watch(&mut self, watch: WatchId) {
        let w = &mut self.watches[watch.index()];
        if !w.open {
            return;
        }
        w.open = false;
        self.watches_by_kind[w.kind.index()].retain(|&i| i != watch);
    }
}

/// A list's items (`RequestScope::requested`), of objects etcd read out.
fn filter_requested(names: &Names, scope: &RequestScope, mut items: Vec<Object>) -> Vec<Object> {
    items.retain(|o| scope.requested(names, o));
    items
}

/// A list's items (`RequestScope::requested`) from a cache's store: only those are copied.
fn cached_items(names: &Names, scope: &RequestScope, cache: &WatchCache) -> Vec<Object> {
    (cache.objects())
        .filter(|o| scope.requested(names, o))
        .map(|o| Object::clone(o))
        .collect()
}

/// How a change reaches a watch: in its initial replay (`processInterval`: blocking sends, never
/// too slow), or live from the cache's or etcd's dispatch, when it waits in the watch's channel
/// while the watch's connection is backed up (`backed_up`).
///
/// Whether a connection is backed up is TCP's back-pressure on the apiserver's writes, a fact of
/// the connection at that moment, not of the client: the engine, which owns the links, says it
/// at each live delivery (a link's delay can change while the watch is open, so it is not fixed
/// when the watch opens).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Delivery {
    Replay,
    Live { backed_up: bool },
}

/// A watch opens at `from_rv` with synthetic ADDED events for `objects` (a replay: blocking
/// sends, not live).
fn send_added(
    st: &mut StepContext,
    w: &ServerWatch,
    from_rv: Rv,
    objects: Vec<Object>,
    cause: EventId,
) {
    let opened = Msg::WatchOpened {
        watch: st.watch_ref(w.id),
        from_rv,
        replayed: objects.len() as u32,
    };
    st.send(cause, w.watcher, w.session, opened);
    for object in objects {
        let change = Change {
            event: EventType::Added,
            object: Arc::new(object),
            time_ms: st.now_ms,
            prev: Default::default(),
        };
        st.watch_event(cause, w, change, false);
    }
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

    /// The caches a decision reads: none (the kind is served by etcd), one re-initialising,
    /// and a ready one of 3 events that has seen RVs 2 to 7 (it holds 5, 6 and 7: a watch
    /// from 4 or later is served, from 3 is too old).
    #[derive(Clone, Copy, Debug)]
    enum Cache {
        Off,
        Reinitialising,
        At7,
    }

    fn cache(c: Cache) -> WatchCache {
        let mut cache = match c {
            Cache::Off => WatchCache::new(CacheMode::Off),
            _ => WatchCache::new(CacheMode::Fixed { capacity: 3 }),
        };
        cache.replace(std::iter::empty(), 1);
        if let Cache::Reinitialising = c {
            cache.reinitialise();
        }
        if let Cache::At7 = c {
            for rv in 2..=7 {
                cache.add(pod(rv));
            }
        }
        cache
    }

    /// Kubernetes 1.34's features (`ResilientWatchCacheInitialization`,
    /// `ConsistentListFromCache` on) or 1.30's (both off; `WatchFromStorageWithoutResourceVersion`
    /// off since 1.30 too).
    fn features(minor: u32) -> ServerFeatures {
        ServerFeatures::of_version(minor)
    }

    /// The list decision's table: one row per rule, each citing where Kubernetes makes it.
    /// etcd is at revision 10, its compact revision 3. Reflectors and probes go through the same
    /// rows; a probe's list is a row with `limit` 0.
    #[test]
    fn the_list_decision_follows_the_delegator_and_the_cacher() {
        use ListDecision::*;
        use ListRv::*;
        let (off, reinit, at_7) = (Cache::Off, Cache::Reinitialising, Cache::At7);
        let req = |rv, limit| ListRequest {
            rv,
            limit,
            scope: RequestScope {
                kind: KindId(0),
                namespace: None,
                selector: None,
                bookmarks: true,
            },
        };
        let etcd = |at| FromEtcd { at };
        let too_large = |requested| {
            let current = 10;
            Refuse(ApiError::TooLargeRv {
                requested,
                current: IssuedRv::new(current),
            })
        };
        let (consistent, not_older) = (ReadKind::Consistent { limit: 500 }, ReadKind::NotOlderThan);
        let rows = [
            // `cacher.go` `GetList` before 1.31: a list at an RV "N" waits for the cache
            // (`c.ready.wait`) ...
            (reinit, 30, req(NotOlderThan(5), 0), Park),
            // ... RV "0" and "" go to etcd (`listRV == 0 && !c.ready.check()`), as do a list
            // with a limit and an Exact one (`shouldDelegateList`).
            (reinit, 30, req(Any, 500), etcd(None)),
            (reinit, 30, req(Any, 0), etcd(None)),
            (reinit, 30, req(Consistent, 0), etcd(None)),
            (reinit, 30, req(Exact(5), 0), etcd(Some(5))),
            // `delegator.go` `shouldDelegateList`: Exact is etcd's, ready or not (1.31+).
            (reinit, 34, req(Exact(5), 0), etcd(Some(5))),
            (at_7, 34, req(Exact(5), 0), etcd(Some(5))),
            // `etcd3/store.go` `GetList`: an Exact list of a compacted revision is 410, one
            // beyond etcd's revision 504 (`validateMinimumResourceVersion`).
            (at_7, 34, req(Exact(2), 0), Refuse(ApiError::ListCompacted)),
            (at_7, 34, req(Exact(11), 0), too_large(11)),
            // `delegator.go` `shouldDelegateListOnNotReadyCache`: while not ready, a list with a
            // limit goes to etcd; one without (a relist at an RV, any probe) gets 429.
            (reinit, 34, req(Any, 500), etcd(None)),
            (reinit, 34, req(Consistent, 500), etcd(None)),
            (
                reinit,
                34,
                req(NotOlderThan(5), 0),
                Refuse(ApiError::TooManyRequests),
            ),
            (reinit, 34, req(Any, 0), Refuse(ApiError::TooManyRequests)),
            // `cacher.go` `GetList`: RV "0" is the cache's state now, whatever its age; RV "N"
            // waits until the cache has seen N (`waitUntilFreshAndBlock`).
            (at_7, 34, req(Any, 500), FromCache),
            (at_7, 34, req(NotOlderThan(7), 0), FromCache),
            (
                at_7,
                34,
                req(NotOlderThan(9), 0),
                WaitForCache {
                    rv: 9,
                    read: not_older,
                },
            ),
            // `delegator.go` `GetList` (ConsistentListFromCache): RV "" waits until the cache
            // has seen etcd's current revision (`GetCurrentResourceVersionFromStorage`) ...
            (
                at_7,
                34,
                req(Consistent, 500),
                WaitForCache {
                    rv: 10,
                    read: consistent,
                },
            ),
            // ... and without it (`shouldDelegateList`: "Consistent Read") etcd answers.
            (at_7, 30, req(Consistent, 500), etcd(None)),
            // A kind without a cache is etcd's; etcd is never older than an RV it has reached
            // and refuses one beyond it (`etcd3/store.go` `validateMinimumResourceVersion`).
            (off, 34, req(Any, 500), etcd(None)),
            (off, 30, req(NotOlderThan(10), 0), etcd(None)),
            (off, 34, req(NotOlderThan(11), 0), too_large(11)),
        ];
        for (c, minor, request, want) in rows {
            let got = decide_list(&cache(c), &features(minor), &request, (10, 3));
            assert_eq!(got, want, "{c:?} at 1.{minor}: {request:?}");
        }
        // `delegator.go`: `shouldDelegateList` ("Consistent Read" without
        // ConsistentListFromCache) hands etcd an RV "" list before the not-ready check, so a
        // re-initialising cache's 429 never reaches it (ResilientWatchCacheInitialization on,
        // ConsistentListFromCache off: both set as features of their own).
        let mut resilient_only = features(34);
        resilient_only.consistent_list_from_cache = false;
        let got = decide_list(
            &cache(reinit),
            &resilient_only,
            &req(Consistent, 0),
            (10, 3),
        );
        assert_eq!(
            got,
            etcd(None),
            "consistent read without the cache's consistent lists"
        );
        // `shouldDelegateListOnNotReadyCache`: only a list with a limit and no label or field
        // selector goes to etcd while the cache re-initialises; a selector's list waits for the
        // cache (`c.ready.wait`), which answers 429.
        let mut selected = req(Any, 500);
        selected.scope.selector = Some(Arc::new(crate::object::Selector::default()));
        let got = decide_list(&cache(reinit), &features(34), &selected, (10, 3));
        assert_eq!(
            got,
            Refuse(ApiError::TooManyRequests),
            "a selector's list, not ready"
        );
        let got = decide_list(&cache(at_7), &features(34), &selected, (10, 3));
        assert_eq!(got, FromCache, "a selector's list, ready");
    }

    /// The watch decision's table, as the list's: etcd's compact revision is 3.
    #[test]
    fn the_watch_decision_follows_the_delegator_and_the_cacher() {
        use WatchDecision::*;
        let (cache_state, etcd_state) = (
            CurrentState { from_etcd: false },
            CurrentState { from_etcd: true },
        );
        let replay = |after, from_etcd| Replay { after, from_etcd };
        let mut from_storage = features(34);
        from_storage.watch_from_storage_without_rv = true;
        let rows = [
            // `cacher.go` `Watch` before 1.31: the watch waits for the cache (`c.ready.wait`).
            (Cache::Reinitialising, features(30), WatchFrom::Rv(5), Park),
            (
                Cache::Reinitialising,
                features(30),
                WatchFrom::MostRecent,
                Park,
            ),
            // ... but an RV "" watch that goes to etcd (1.29) does so before that wait.
            (
                Cache::Reinitialising,
                features(29),
                WatchFrom::MostRecent,
                etcd_state,
            ),
            // ... and from 1.31 (ResilientWatchCacheInitialization) it gets 429.
            (
                Cache::Reinitialising,
                features(34),
                WatchFrom::Rv(5),
                Refuse(ApiError::TooManyRequests),
            ),
            (
                Cache::Reinitialising,
                features(34),
                WatchFrom::Rv(0),
                Refuse(ApiError::TooManyRequests),
            ),
            // `watch_cache.go` `getAllEventsSinceLocked`: from the cache's window, the events
            // after the RV; from before it, "too old resource version" (an ERROR event).
            (Cache::At7, features(34), WatchFrom::Rv(4), replay(4, false)),
            (Cache::At7, features(34), WatchFrom::Rv(9), replay(9, false)),
            (
                Cache::At7,
                features(34),
                WatchFrom::Rv(3),
                Fail(ApiError::TooOld {
                    requested: 3,
                    oldest_minus_one: IssuedRv::new(4),
                }),
            ),
            // RV "0" is never too old: it starts with the cache's state (semantics.md §4); so
            // does RV "" (`cacher.go` `getWatchCacheResourceVersion`, the "legacy case") ...
            (Cache::At7, features(34), WatchFrom::Rv(0), cache_state),
            (Cache::At7, features(34), WatchFrom::MostRecent, cache_state),
            // ... unless WatchFromStorageWithoutResourceVersion sends RV "" to etcd
            // (`delegator.go` `Watch`).
            (Cache::At7, from_storage, WatchFrom::MostRecent, etcd_state),
            // A kind without a cache is etcd's watch (`etcd3/watcher.go`): from 0 its state
            // first; `WithRev(from + 1)` is 410 once that revision is compacted.
            (Cache::Off, features(34), WatchFrom::Rv(0), etcd_state),
            (Cache::Off, features(34), WatchFrom::MostRecent, etcd_state),
            (Cache::Off, features(34), WatchFrom::Rv(2), replay(2, true)),
            (
                Cache::Off,
                features(34),
                WatchFrom::Rv(1),
                Fail(ApiError::WatchCompacted),
            ),
        ];
        for (c, features, from, want) in rows {
            let got = decide_watch(&cache(c), &features, from, 3);
            assert_eq!(got, want, "{c:?} with {features:?}: {from:?}");
        }
    }

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
        let request = world.watch((from, DurationMs(60_000)));
        world.step(api, TimeMs::ZERO, |a, st| {
            a.serve_watch(st, WatcherId(0), Session(1), request, 1)
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
        assert!(api.watches.is_empty() && api.watches_by_kind[0].is_empty());
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
                watch: WatchRef { id: WatchId(0), .. },
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
        let w = &api.watches[0];
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
        assert_eq!(api.watches[0].replayed_to, 7);
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
            let list = world.list((ListRv::Any, 500));
            let out = world.step(&mut api, TimeMs(0), |a, st| {
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
            assert!(api.watches[0].from_etcd, "relayed from etcd's store");
            assert_eq!(api.watches[0].last_sent, 4, "only later writes follow");
        }
    }

    /// `cacher.go` `GetList` filters with the request's predicate: the namespace the request
    /// names (its path), whatever the client that sent it (here an informer of every namespace).
    #[test]
    fn a_list_answers_the_namespace_its_request_names() {
        let mut world = World::new(10);
        let mut api = world.apiserver();
        world.step(&mut api, TimeMs(0), |a, st| {
            for (rv, ns) in [(2, 7), (3, 8)] {
                let mut p = pod(rv);
                Arc::make_mut(&mut p.object).namespace = NameId(ns);
                a.change(st, p, 0);
            }
        });
        assert_eq!(world.reflectors[0].namespace, None);
        let mut list = world.list((ListRv::Any, 0));
        list.scope.namespace = Some(NameId(8));
        let out = world.step(&mut api, TimeMs(0), |a, st| {
            a.serve_list(st, WatcherId(0), Session(1), list, 1)
        });
        assert!(
            matches!(&out.sent()[..], [Msg::ListOk { items, .. }] if items.len() == 1 && items[0].namespace == NameId(8)),
            "{:?}",
            out.sent()
        );
    }

    /// antrea #8123: a server that omits `k8s.io/initial-events-end` ends a streaming list's
    /// initial events with a plain bookmark, arms the stream's timeout and no bookmark timer.
    #[test]
    fn a_server_that_omits_the_annotation_sends_a_plain_bookmark() {
        let mut world = World::new(3);
        world.config.apiservers[0].omits_initial_events_end = true;
        let mut api = world.apiserver();
        let scope = world.reflectors[0].scope(&world.config);
        let out = world.step(&mut api, TimeMs(0), |a, st| {
            let request = (ListRv::Consistent, DurationMs(60_000));
            a.serve_watch_list(st, (WatcherId(0), Session(1)), request, scope, 0)
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
        let w = &mut api.watches[0];
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
