//! A reflector: client-go's, with its informer's store and handlers.

use super::*;

/// client-go's Reflector plus the informer's store and handler.
#[derive(Clone, Debug, Hash)]
pub struct Reflector {
    pub(super) controller: ControllerId,
    pub(super) kind: KindId,
    pub(super) namespace: Option<NameId>,
    /// The label selector of its lists and watches (`None`: every object).
    pub(super) selector: Option<Arc<crate::object::Selector>>,
    /// The event handlers: a key mapping and its predicate each (empty: a cache only read).
    pub(super) handlers: Vec<(KeyMap, Predicate)>,
    pub(super) state: WatcherState,
    pub(super) last_rv: Rv,
    pub(super) store: crate::store::Store,
    /// `isLastSyncResourceVersionUnavailable`: the next list uses RV="".
    pub(super) rv_unavailable: bool,
    pub(super) backoff_ms_next: DurationMs,
    /// When the backoff last reset (legacy: when it last backed off).
    pub(super) backoff_mark_ms: Option<TimeMs>,
    /// Invalidates messages and timers of earlier requests.
    pub(super) session: Session,
    pub(super) watch: Option<WatchRef>,
    pub(super) watch_opened_ms: TimeMs,
    pub(super) watch_events: u32,
    pub(super) listed: bool,
    /// A paged list in progress: its resourceVersion parameter and the items so far.
    pub(super) paging: Option<(ListRv, Vec<Object>)>,
    /// When the last streaming list was sent.
    pub(super) watch_list_sent_ms: TimeMs,
    /// A streaming list whose stream opened without the `initial-events-end` bookmark: when
    /// its last event came. The informer waits, never synced, until the stream ends.
    pub(super) unended_since_ms: Option<TimeMs>,
    /// Lists done so far: a resync timer armed after an earlier list is stale.
    pub(super) resync_round: u32,
}

/// client-go's `initialEventsEndBookmarkTicker` period (`reflector.go` `watchList`).
const BOOKMARK_TICKER_MS: DurationMs = DurationMs(10_000);

impl Reflector {
    pub(super) fn new(
        controller: ControllerId,
        kind: KindId,
        namespace: Option<NameId>,
        handlers: Vec<(KeyMap, Predicate)>,
        backoff_ms: DurationMs,
    ) -> Reflector {
        Reflector {
            controller,
            kind,
            namespace,
            handlers,
            state: WatcherState::Stopped,
            last_rv: 0,
            store: Default::default(),
            rv_unavailable: false,
            backoff_ms_next: backoff_ms,
            backoff_mark_ms: None,
            session: Session(0),
            watch: None,
            watch_opened_ms: TimeMs::ZERO,
            watch_events: 0,
            listed: false,
            paging: None,
            watch_list_sent_ms: TimeMs::ZERO,
            unended_since_ms: None,
            selector: None,
            resync_round: 0,
        }
    }
}

/// What the views, the verdicts and the tests read of a reflector.
impl Reflector {
    /// The controller it informs.
    pub fn controller(&self) -> ControllerId {
        self.controller
    }

    pub fn kind(&self) -> KindId {
        self.kind
    }

    /// The namespace it lists and watches (`None`: every namespace).
    pub fn namespace(&self) -> Option<NameId> {
        self.namespace
    }

    /// The label selector of its lists and watches (`None`: every object).
    pub fn selector(&self) -> Option<&crate::object::Selector> {
        self.selector.as_deref()
    }

    /// What its requests name (its ListWatch's path and options): its kind, namespace and
    /// selector, and whether it allows bookmarks.
    pub(super) fn scope(&self, config: &Config) -> RequestScope {
        RequestScope {
            kind: self.kind,
            namespace: self.namespace,
            selector: self.selector.clone(),
            bookmarks: config.reflector_of(self.controller).bookmarks,
        }
    }

    pub fn state(&self) -> WatcherState {
        self.state
    }

    /// The last resource version it saw.
    pub fn last_rv(&self) -> Rv {
        self.last_rv
    }

    /// The informer's store.
    pub fn store(&self) -> &crate::store::Store {
        &self.store
    }
}

impl Reflector {
    /// A new request: messages and timers of the earlier ones are stale from now on.
    pub(super) fn new_session(&mut self) -> Session {
        self.session = self.session.next();
        self.watch = None;
        self.unended_since_ms = None;
        self.session
    }

    /// `relistResourceVersion()`: "" after Expired or Too large, "0" for the first list, else
    /// the last RV seen.
    pub(super) fn relist_rv(&self) -> ListRv {
        if self.rv_unavailable {
            ListRv::Consistent
        } else if !self.listed || self.last_rv == 0 {
            ListRv::Any
        } else {
            ListRv::NotOlderThan(self.last_rv)
        }
    }

    /// The backoff before jitter, and the next one doubled up to the cap.
    /// `wait.Backoff.DelayWithReset`: back to the initial delay once the reset interval has
    /// passed since the last reset (the reflector's start counts), failures or not. The legacy
    /// `ExponentialBackoffManager` measured from the last backoff instead, so only a quiet
    /// interval reset it.
    pub(super) fn next_backoff(&mut self, cfg: &ReflectorConfig, now: TimeMs) -> DurationMs {
        if self
            .backoff_mark_ms
            .is_none_or(|t| DurationMs::between(t, now) > cfg.backoff_reset_ms)
        {
            self.backoff_ms_next = cfg.backoff_ms_initial;
            self.backoff_mark_ms = Some(now);
        }
        if cfg.backoff_reset_after_quiet {
            self.backoff_mark_ms = Some(now);
        }
        let base = self.backoff_ms_next;
        self.backoff_ms_next = (base * 2).min(cfg.backoff_ms_max);
        base
    }
}

/// What a reflector reads of the world during one step, and where it writes.
pub(super) struct StepContext<'a> {
    pub watcher: WatcherId,
    pub now_ms: TimeMs,
    pub config: &'a Config,
    pub rng: &'a mut Rng,
    pub out: Out<'a>,
    /// Its controller: the informer's handlers add keys to its queue.
    pub queue: &'a mut Controller,
}

impl StepContext<'_> {
    fn emit(&mut self, cause: EventId, kind: EventKind) -> EventId {
        self.out.emit(cause, kind)
    }

    /// A request to the apiserver: its event, then the request itself on the link.
    fn request(&mut self, cause: EventId, event: EventKind, serve: Action) {
        let id = self.emit(cause, event);
        self.send(id, serve);
    }

    /// A request on the link to the apiserver.
    fn send(&mut self, cause: EventId, serve: Action) {
        self.out.send(self.watcher, Toward::Server, cause, serve);
    }

    /// A handler's key goes to the controller's queue now, as client-go's handler calls
    /// `queue.Add` (the `Enqueue` event follows the informer's event that caused it).
    fn enqueue(&mut self, c: ControllerId, key: NameId, cause: EventId, low_priority: bool) {
        let out = &mut self.out.as_actor(Actor::Controller(c));
        self.queue.enqueue(c, out, key, cause, low_priority);
    }

    /// client-go: `timeoutSeconds := int64(minWatchTimeout.Seconds() * (rand.Float64() + 1.0))`,
    /// whole seconds in [300, 600) by default (at least one: 0 would ask for no timeout).
    fn watch_timeout(&mut self) -> DurationMs {
        let min = self.config.reflector.watch_timeout_ms_min;
        let exact = min + DurationMs(self.rng.below(min.ms()));
        DurationMs((exact.ms() / 1000).max(1) * 1000)
    }
}

/// The reflector's state machine (client-go `reflector.go` `ListAndWatch`, the pager, the
/// informer's `DeltaFIFO.Replace` and its handlers): each entry point takes a message or a timer
/// and writes its events and requests.
impl Reflector {
    fn set_state(&mut self, st: &mut StepContext, state: WatcherState, cause: EventId) -> EventId {
        self.state = state;
        let kind = EventKind::Reflector(ReflectorEvent::State {
            watcher: st.watcher,
            state,
            last_rv: self.last_rv,
        });
        st.emit(cause, kind)
    }

    /// The controller (re)starts: a fresh store, then the first list.
    pub(super) fn start(&mut self, st: &mut StepContext, cause: EventId) {
        self.store.clear();
        self.last_rv = 0;
        self.listed = false;
        self.rv_unavailable = false;
        // The backoff is made with the reflector: its creation counts as a reset.
        self.backoff_ms_next = st.config.reflector.backoff_ms_initial;
        self.backoff_mark_ms = Some(st.now_ms);
        self.set_state(st, WatcherState::Empty, cause);
        self.start_list(st, cause);
    }

    /// The controller crashed: every request of this life is stale.
    pub(super) fn stop(&mut self, st: &mut StepContext, cause: EventId) {
        self.new_session();
        self.set_state(st, WatcherState::Stopped, cause);
    }

    fn start_list(&mut self, st: &mut StepContext, cause: EventId) {
        let streaming = st.config.reflector_of(self.controller).streaming_list;
        self.start_list_as(st, cause, streaming);
    }

    /// One list-and-watch round's list: a streaming list, or a list then a watch.
    fn start_list_as(&mut self, st: &mut StepContext, cause: EventId, streaming: bool) {
        let session = self.new_session();
        let (relist, rv) = (self.listed, self.relist_rv());
        let id = self.set_state(st, WatcherState::Listing, cause);
        let watcher = st.watcher;
        if streaming {
            // watchList(): RV "" (consistent) first, then the last seen RV, NotOlderThan.
            let rv = match rv {
                ListRv::Any => ListRv::Consistent,
                other => other,
            };
            let timeout_ms = st.watch_timeout();
            self.watch_list_sent_ms = st.now_ms;
            let request = EventKind::Reflector(ReflectorEvent::WatchListRequest {
                watcher,
                rv,
                relist,
            });
            let serve = Action::Server(ServerAction::ServeWatchList {
                watcher,
                session,
                rv,
                timeout_ms,
                scope: self.scope(st.config),
            });
            return st.request(id, request, serve);
        }
        // The pager sets `limit` unless the list is at a resourceVersion (then it must come
        // from the watch cache, which does not page).
        let limit = match rv {
            ListRv::NotOlderThan(_) => 0,
            _ => st.config.reflector.page_size,
        };
        self.request_list(st, session, rv, limit, relist, id);
    }

    fn request_list(
        &mut self,
        st: &mut StepContext,
        session: Session,
        rv: ListRv,
        limit: u32,
        relist: bool,
        cause: EventId,
    ) {
        self.paging = (limit > 0).then(|| (rv, vec![]));
        let watcher = st.watcher;
        let request = EventKind::Reflector(ReflectorEvent::ListRequest {
            watcher,
            rv,
            relist,
        });
        let serve = Action::Server(ServerAction::ServeList {
            watcher,
            session,
            rv,
            limit,
            scope: self.scope(st.config),
        });
        st.request(cause, request, serve);
    }

    fn start_watch(&mut self, st: &mut StepContext, cause: EventId) {
        let (session, from) = (self.new_session(), self.last_rv);
        let timeout_ms = st.watch_timeout();
        let watcher = st.watcher;
        let request = EventKind::Reflector(ReflectorEvent::WatchRequest {
            watcher,
            from_rv: from,
            timeout_ms,
        });
        let serve = Action::Server(ServerAction::ServeWatch {
            watcher,
            session,
            from,
            timeout_ms,
            scope: self.scope(st.config),
        });
        st.request(cause, request, serve);
    }

    /// A backoff is over: relist or re-watch, unless a newer request replaced this one.
    pub(super) fn wake(&mut self, st: &mut StepContext, session: Session, cause: EventId) {
        if self.session != session {
            return;
        }
        match self.state {
            WatcherState::BackoffRelist => self.start_list(st, cause),
            WatcherState::BackoffRewatch => self.start_watch(st, cause),
            WatcherState::Listing if self.unended_since_ms.is_some() => {
                self.bookmark_ticker(st, cause)
            }
            _ => {}
        }
    }

    /// `initialEventsEndBookmarkTicker`: every 10 s since the streaming list was sent, a warning
    /// while its end has not come, once 10 s have passed since the last event.
    fn bookmark_ticker(&mut self, st: &mut StepContext, cause: EventId) {
        let Some(last) = self.unended_since_ms else {
            return;
        };
        let since_ms = DurationMs::between(last, st.now_ms);
        if since_ms >= BOOKMARK_TICKER_MS {
            let watcher = st.watcher;
            let expired = EventKind::Reflector(ReflectorEvent::BookmarkExpired {
                watcher,
                received: true,
                since_ms,
            });
            st.emit(cause, expired);
        }
        self.arm_bookmark_ticker(st, cause);
    }

    /// The ticker's next tick after now.
    fn arm_bookmark_ticker(&mut self, st: &mut StepContext, cause: EventId) {
        let sent = self.watch_list_sent_ms;
        let ticks = DurationMs::between(sent, st.now_ms).ms() / BOOKMARK_TICKER_MS.ms() + 1;
        let at = sent + DurationMs(ticks * BOOKMARK_TICKER_MS.ms());
        let (watcher, session) = (st.watcher, self.session);
        st.out.timer(
            at,
            cause,
            Action::Reflector(ReflectorAction::Wake { watcher, session }),
        );
    }

    fn backoff(&mut self, st: &mut StepContext, state: WatcherState, cause: EventId) {
        let base = self.next_backoff(&st.config.reflector, st.now_ms);
        let session = self.new_session();
        let delay_ms = base + DurationMs(st.rng.below(base.ms()));
        let id = self.set_state(st, state, cause);
        let watcher = st.watcher;
        let id = st.emit(
            id,
            EventKind::Reflector(ReflectorEvent::Backoff { watcher, delay_ms }),
        );
        let wake = Action::Reflector(ReflectorAction::Wake { watcher, session });
        st.out.timer(st.now_ms + delay_ms, id, wake);
    }

    /// A message the reflector takes in now: each arm is one call.
    pub(super) fn receive(
        &mut self,
        st: &mut StepContext,
        session: Session,
        msg: Msg,
        cause: EventId,
    ) {
        match msg {
            Msg::ListOk {
                list_rv,
                items,
                from_etcd,
                rest,
            } => {
                let page = ListPage {
                    list_rv,
                    items,
                    from_etcd,
                    rest,
                };
                self.on_list_page(st, session, page, cause)
            }
            Msg::WatchListStart { watch, items, rv } => {
                self.on_initial_events_end(st, watch, items, rv, cause)
            }
            Msg::WatchListUnended { watch, rv } => self.on_unended_stream(st, watch, rv, cause),
            // Events of a streaming list that never ended go to its temporary store, which is
            // never applied.
            Msg::Event { .. } | Msg::Bookmark { .. } if self.unended_since_ms.is_some() => {
                self.unended_since_ms = Some(st.now_ms);
            }
            Msg::ListErr(error) => self.on_list_failed(st, session, error, cause),
            Msg::WatchListErr(error) => self.on_watch_list_failed(st, error, cause),
            Msg::WatchOpened {
                watch,
                from_rv,
                replayed,
            } => self.on_watch_opened(st, watch, from_rv, replayed, cause),
            Msg::Event { change, .. } => self.watch_event(st, change, cause),
            Msg::Bookmark { rv, .. } => self.on_bookmark(st, rv, cause),
            Msg::WatchErr(error) => {
                let id = self.watch_failed(st, error, cause);
                let cfg = &st.config.controllers[self.controller.index()];
                if cfg.rewatch_on_gone && error.code() == 410 {
                    // A hand-written watch loop: the same RV again, after a pause, for ever.
                    return self.backoff(st, WatcherState::BackoffRewatch, id);
                }
                let id = self.set_state(st, WatcherState::Empty, id);
                self.backoff(st, WatcherState::BackoffRelist, id);
            }
            Msg::Refused(error) => {
                let id = self.watch_failed(st, error, cause);
                self.backoff(st, WatcherState::BackoffRewatch, id);
            }
            Msg::WatchEnd(reason) => self.on_watch_end(st, reason, cause),
        }
    }

    /// One page of a list; the last one replaces the store and starts the watch.
    fn on_list_page(
        &mut self,
        st: &mut StepContext,
        session: Session,
        page: ListPage,
        cause: EventId,
    ) {
        let ListPage {
            list_rv,
            items,
            from_etcd,
            rest,
        } = page;
        let (watcher, more) = (st.watcher, !rest.is_empty());
        let result = EventKind::Reflector(ReflectorEvent::ListResult {
            watcher,
            list_rv,
            items: items.len() as u32,
            from_etcd,
            more,
        });
        let id = st.emit(cause, result);
        let mut collected = self.paging.take();
        let items = match collected.as_mut() {
            Some((_, got)) => {
                got.extend(items);
                std::mem::take(got)
            }
            None => items,
        };
        if more {
            // Fetch the next page with the continue token.
            let rv = collected.map(|c| c.0).unwrap_or(ListRv::Consistent);
            self.paging = Some((rv, items));
            let limit = st.config.reflector.page_size.max(1);
            let id = st.emit(
                id,
                EventKind::Reflector(ReflectorEvent::ListContinue { watcher, list_rv }),
            );
            let page = Action::Server(ServerAction::ServeListPage {
                watcher,
                session,
                list_rv,
                rest,
                limit,
            });
            return st.send(id, page);
        }
        self.replace_store(st, items, id);
        self.listed_at(list_rv);
        self.arm_resync(st, id);
        let id = self.set_state(st, WatcherState::InitListed, id);
        self.start_watch(st, id);
    }

    /// A streaming list's initial events, applied at the bookmark that ends them; the same
    /// stream goes on as the watch.
    fn on_initial_events_end(
        &mut self,
        st: &mut StepContext,
        watch: WatchRef,
        items: Vec<Object>,
        rv: Rv,
        cause: EventId,
    ) {
        let end = EventKind::Reflector(ReflectorEvent::InitialEventsEnd {
            watcher: st.watcher,
            rv,
            items: items.len() as u32,
        });
        let id = st.emit(cause, end);
        self.replace_store(st, items, id);
        self.listed_at(rv);
        self.arm_resync(st, id);
        self.watching(st.now_ms, watch);
        self.set_state(st, WatcherState::Watching, id);
    }

    /// A streaming list's stream opened, its initial events ended by a plain BOOKMARK at `rv`
    /// without `k8s.io/initial-events-end` (antrea #8123): the informer keeps waiting for the
    /// end, and the ticker warns every 10 s.
    fn on_unended_stream(&mut self, st: &mut StepContext, watch: WatchRef, rv: Rv, cause: EventId) {
        self.watch = Some(watch);
        self.watch_opened_ms = st.now_ms;
        self.unended_since_ms = Some(st.now_ms);
        let watcher = st.watcher;
        let id = st.emit(
            cause,
            EventKind::Reflector(ReflectorEvent::Bookmark { watcher, rv }),
        );
        self.arm_bookmark_ticker(st, id);
    }

    /// `ListAndWatch` starts `startResync` after each list (`reflector.go`): the resync period
    /// counts from now, and a timer armed after an earlier list is stale.
    fn arm_resync(&mut self, st: &mut StepContext, cause: EventId) {
        self.resync_round = self.resync_round.wrapping_add(1);
        let period =
            controller::resync_period(st.config.controllers[self.controller.index()].resync_ms);
        if !period.is_zero() {
            let (watcher, epoch, round) = (st.watcher, st.queue.epoch, self.resync_round);
            let due = Action::Reflector(ReflectorAction::Resync {
                watcher,
                epoch,
                round,
            });
            st.out.timer(st.now_ms + period, cause, due);
        }
    }

    /// Is a resync timer of `round` due? Not after a later list, nor once `ListAndWatch` has
    /// returned (its `cancelCh` stops the resync): backing off before a relist, or relisting.
    pub(super) fn resync_due(&self, round: u32) -> bool {
        use WatcherState::*;
        round == self.resync_round
            && !matches!(self.state, Empty | Listing | BackoffRelist | Stopped)
    }

    /// The store now holds the list at `rv`.
    fn listed_at(&mut self, rv: Rv) {
        self.last_rv = rv;
        self.rv_unavailable = false;
        self.listed = true;
    }

    /// The watch's stream is open from now on.
    fn watching(&mut self, now_ms: TimeMs, watch: WatchRef) {
        self.watch = Some(watch);
        self.watch_opened_ms = now_ms;
        self.watch_events = 0;
    }

    fn on_list_failed(
        &mut self,
        st: &mut StepContext,
        session: Session,
        error: ApiError,
        cause: EventId,
    ) {
        let failed = EventKind::Reflector(ReflectorEvent::ListFailed {
            watcher: st.watcher,
            error,
        });
        let id = st.emit(cause, failed);
        if let (ApiError::ContinueExpired, Some((rv, _))) = (error, self.paging.take()) {
            // pager.FullListIfExpired: the same list again, without paging.
            let relist = self.listed;
            self.request_list(st, session, rv, 0, relist, id);
        } else if unavailable_rv(error)
            && (st.config.reflector.too_large_relists_consistent
                || !matches!(error, ApiError::TooLargeRv { .. }))
        {
            // Retried at once with RV="" (for a 504, client-go 1.19+).
            self.rv_unavailable = true;
            self.start_list(st, id);
        } else {
            self.backoff(st, WatcherState::BackoffRelist, id);
        }
    }

    /// `reflector.go` `watchList` (`isErrorRetriableWithSideEffectsFn`): Expired or Too large
    /// marks the last RV unavailable and streams again at once, at RV ""; any other error ends
    /// `watchList` and `ListAndWatch` falls back to a standard LIST ("The watchlist request ended
    /// with an error, falling back to the standard LIST/WATCH semantics").
    fn on_watch_list_failed(&mut self, st: &mut StepContext, error: ApiError, cause: EventId) {
        let failed = EventKind::Reflector(ReflectorEvent::ListFailed {
            watcher: st.watcher,
            error,
        });
        let id = st.emit(cause, failed);
        let retry = unavailable_rv(error);
        self.rv_unavailable |= retry;
        self.start_list_as(st, id, retry);
    }

    fn on_watch_opened(
        &mut self,
        st: &mut StepContext,
        watch: WatchRef,
        from_rv: Rv,
        replayed: u32,
        cause: EventId,
    ) {
        self.watching(st.now_ms, watch);
        let opened = EventKind::Reflector(ReflectorEvent::WatchOpened {
            watcher: st.watcher,
            from_rv,
            replayed,
        });
        let id = st.emit(cause, opened);
        self.set_state(st, WatcherState::Watching, id);
    }

    fn on_bookmark(&mut self, st: &mut StepContext, rv: Rv, cause: EventId) {
        self.last_rv = self.last_rv.max(rv);
        self.watch_events += 1;
        let watcher = st.watcher;
        st.emit(
            cause,
            EventKind::Reflector(ReflectorEvent::Bookmark { watcher, rv }),
        );
    }

    fn watch_failed(&mut self, st: &mut StepContext, error: ApiError, cause: EventId) -> EventId {
        let watcher = st.watcher;
        st.emit(
            cause,
            EventKind::Reflector(ReflectorEvent::WatchFailed { watcher, error }),
        )
    }

    /// A stream that ended without an error: re-watch at once, unless it was a very short watch
    /// with no events (treated as an error: back off, relist), whatever ended it: a broken
    /// connection is a close too (`StreamWatcher.receive`).
    fn on_watch_end(&mut self, st: &mut StepContext, reason: WatchEnd, cause: EventId) {
        let watcher = st.watcher;
        let id = st.emit(
            cause,
            EventKind::Reflector(ReflectorEvent::WatchEnded { watcher, reason }),
        );
        if self.unended_since_ms.is_some() {
            // `watchList`: a stream that ends without the bookmark is simply asked for again,
            // with a fresh temporary store.
            return self.start_list_as(st, id, true);
        }
        let short = DurationMs::between(self.watch_opened_ms, st.now_ms) < SHORT_WATCH_MS
            && self.watch_events == 0;
        if short {
            self.backoff(st, WatcherState::BackoffRelist, id);
        } else {
            self.start_watch(st, id);
        }
    }

    fn watch_event(&mut self, st: &mut StepContext, change: Arc<Change>, cause: EventId) {
        let o = &change.object;
        self.last_rv = o.rv;
        self.watch_events += 1;
        let old = match change.event {
            EventType::Deleted => self.store.remove(&o.name),
            _ => self.store.insert(o.name, Arc::clone(o)),
        };
        let event = EventKind::Reflector(ReflectorEvent::WatchEvent {
            watcher: st.watcher,
            event: change.event,
            name: o.name,
            rv: o.rv,
            spec: o.spec,
        });
        let id = st.emit(cause, event);
        let update = (change.event == EventType::Modified)
            .then_some(old)
            .flatten();
        self.handle(st, o, update.as_deref(), id, false);
    }

    /// The relist's diff (`DeltaFIFO.Replace` + `HandleDeltas`).
    fn replace_store(&mut self, st: &mut StepContext, items: Vec<Object>, cause: EventId) {
        let new: crate::store::Store = items.into_iter().map(|o| (o.name, o)).collect();
        let old = std::mem::take(&mut self.store);
        let initial = !self.listed;
        let mut deltas = vec![];
        for (name, o) in old.iter() {
            if !new.contains_key(name) {
                deltas.push((Delta::DeletedFinalStateUnknown, o.clone(), None));
            }
        }
        for (name, o) in new.iter() {
            match old.get(name) {
                None => deltas.push((Delta::Added, o.clone(), None)),
                Some(prev) if prev.rv != o.rv => {
                    deltas.push((Delta::Updated, o.clone(), Some(prev.clone())))
                }
                Some(_) => {}
            }
        }
        self.store = new;
        for (delta, o, prev) in deltas {
            let id = st.emit(cause, informer_event(st.watcher, delta, &o));
            self.handle(st, &o, prev.as_ref(), id, initial);
        }
    }

    /// The informer's periodic resync: every stored object goes through the handlers again.
    pub(super) fn resync(&mut self, st: &mut StepContext) {
        for o in self.store.values() {
            let id = st.emit(NO_CAUSE, informer_event(st.watcher, Delta::Sync, o));
            // An unchanged object: `handler.LowPriority` on controller-runtime's priority queue.
            self.handle(st, o, Some(o), id, true);
        }
    }

    /// The event handlers: object → reconcile keys. `old` is set for updates (and resyncs,
    /// where it equals the object), for the handlers' predicates.
    fn handle(
        &self,
        st: &mut StepContext,
        o: &Object,
        old: Option<&Object>,
        cause: EventId,
        initial: bool,
    ) {
        let primary = st.config.controllers[self.controller.index()].primary;
        let passes = |p: Predicate| match (p, old) {
            (Predicate::GenerationChanged, Some(old)) => old.generation != o.generation,
            (Predicate::ResourceVersionChanged, Some(old)) => old.rv != o.rv,
            _ => true,
        };
        for (map, predicate) in &self.handlers {
            if !passes(*predicate) {
                continue;
            }
            let key = match map {
                KeyMap::ReadOnly => None,
                KeyMap::Itself => Some(o.name),
                KeyMap::Owner => o
                    .owner
                    .filter(|owner| owner.kind == primary)
                    .map(|owner| owner.name),
            };
            if let Some(key) = key {
                st.enqueue(self.controller, key, cause, initial);
            }
        }
    }
}

/// `isExpiredError` or `isTooLargeResourceVersionError`: the RV asked for is not available, so
/// the next list or streaming list asks for RV "" (`setIsLastSyncResourceVersionUnavailable`).
fn unavailable_rv(error: ApiError) -> bool {
    matches!(error, ApiError::TooOld { .. } | ApiError::TooLargeRv { .. })
}

/// A list answer's fields, as one value.
struct ListPage {
    list_rv: Rv,
    items: Vec<Object>,
    from_etcd: bool,
    rest: Vec<Object>,
}

fn informer_event(watcher: WatcherId, delta: Delta, o: &Object) -> EventKind {
    EventKind::Controller(ControllerEvent::Informer {
        watcher,
        delivery: Delivery::new(delta, o.deletion_ms.is_some()),
        name: o.name,
        rv: o.rv,
        spec: o.spec,
    })
}

#[cfg(test)]
mod tests {
    use super::super::step::testing::{check, Harness, Stepped};
    use super::*;

    const W: WatcherId = WatcherId(0);

    fn reflector() -> Reflector {
        Reflector::new(ControllerId(0), KindId(0), None, vec![], DurationMs(800))
    }

    /// A reflector of a controller whose primary kind it watches (key: the object itself),
    /// and one step of it: what it wrote (its controller's enqueues among its events).
    fn run_step(
        r: &mut Reflector,
        now_ms: TimeMs,
        f: impl FnOnce(&mut Reflector, &mut StepContext),
    ) -> Stepped {
        let mut config = Config::new(&["Pod"]);
        let behaviour = crate::config::Behaviour::Mirror { target: KindId(0) };
        config
            .controllers
            .push(Config::controller("c", KindId(0), behaviour));
        let mut queue = Controller::new(&config.controllers[0], vec![W]);
        queue.up = true;
        let (mut rng, mut harness) = (Rng::new(1), Harness::default());
        let mut st = StepContext {
            watcher: W,
            now_ms,
            config: &config,
            rng: &mut rng,
            out: harness.out(now_ms, Actor::Watcher(W)),
            queue: &mut queue,
        };
        f(r, &mut st);
        harness.take()
    }

    fn watching() -> Reflector {
        let mut r = reflector();
        r.handlers = vec![(KeyMap::Itself, Predicate::All)];
        (r.listed, r.last_rv, r.state) = (true, 7, WatcherState::Watching);
        r.watch = Some(WatchRef {
            api: ApiserverId(0),
            id: WatchId(0),
        });
        r
    }

    fn pod(name: u32, rv: Rv) -> Object {
        Object::fixture(KindId(0), NameId(name), name as u64, rv)
    }

    fn states(out: &Stepped) -> Vec<WatcherState> {
        let state = |k: &EventKind| match k {
            EventKind::Reflector(ReflectorEvent::State { state, .. }) => Some(*state),
            _ => None,
        };
        out.kinds().iter().filter_map(state).collect()
    }

    fn state(state: WatcherState, last_rv: Rv) -> EventKind {
        EventKind::Reflector(ReflectorEvent::State {
            watcher: W,
            state,
            last_rv,
        })
    }

    /// `reflector.go` `watchHandler` returns the 410 (`IsExpired`/`IsGone`) and `ListAndWatch`
    /// starts over: the watch is dropped, the store is relisted after the backoff
    /// (`backoffManager`), and the wake-up names the new session so older timers are stale.
    #[test]
    fn a_410_on_the_watch_backs_off_then_relists() {
        let mut r = watching();
        let too_old = ApiError::TooOld {
            requested: 7,
            oldest_minus_one: IssuedRv::new(9),
        };
        let out = run_step(&mut r, TimeMs(1000), |r, st| {
            r.receive(st, Session(0), Msg::WatchErr(too_old), 3)
        });
        let [(at_ms, Action::Reflector(ReflectorAction::Wake { watcher, session }))] =
            out.timers()[..]
        else {
            panic!("a wake-up is scheduled: {:?}", out.posts)
        };
        let delay_ms = DurationMs::between(TimeMs(1000), at_ms);
        assert!(
            (DurationMs(800)..DurationMs(1600)).contains(&delay_ms),
            "800 ms and up to 100% jitter: {delay_ms}"
        );
        let failed = EventKind::Reflector(ReflectorEvent::WatchFailed {
            watcher: W,
            error: too_old,
        });
        let backoff = EventKind::Reflector(ReflectorEvent::Backoff {
            watcher: W,
            delay_ms,
        });
        let expect = [
            failed,
            state(WatcherState::Empty, 7),
            state(WatcherState::BackoffRelist, 7),
            backoff,
        ];
        check(&out, &expect);
        assert_eq!((watcher, session), (W, Session(1)));
        assert_eq!((r.session, r.watch), (Session(1), None));
        let out = run_step(&mut r, at_ms, |r, st| r.wake(st, session, 9));
        assert_eq!(states(&out), [WatcherState::Listing]);
        let list = Action::Server(ServerAction::ServeList {
            watcher: W,
            session: Session(2),
            rv: ListRv::NotOlderThan(7),
            limit: 0,
            scope: r.scope(&Config::new(&["Pod"])),
        });
        assert_eq!(out.requests(), [list], "relistResourceVersion: the last RV");
    }

    /// `DeltaFIFO.Replace` (`client-go/tools/cache/delta_fifo.go`): an object missing from the
    /// new list is `DeletedFinalStateUnknown`, a changed one an update, a new one an add; each
    /// goes through the handlers, then the reflector watches from the list's RV.
    #[test]
    fn a_relist_diffs_the_store_and_then_watches_from_the_list_rv() {
        let mut r = watching();
        r.store = [pod(1, 5), pod(2, 6), pod(3, 7)]
            .into_iter()
            .map(|o| (o.name, o))
            .collect();
        let page = Msg::ListOk {
            list_rv: 12,
            items: vec![pod(2, 9), pod(3, 7), pod(4, 11)],
            from_etcd: false,
            rest: vec![],
        };
        let out = run_step(&mut r, TimeMs(0), |r, st| {
            r.receive(st, Session(0), page, 1)
        });
        let [Action::Server(ServerAction::ServeWatch {
            from, timeout_ms, ..
        })] = out.requests()[..]
        else {
            panic!("a watch: {:?}", out.posts)
        };
        let informer = |delta, o: Object| informer_event(W, delta, &o);
        // Each delta's handler adds its key at once: the controller's `Enqueue` follows it.
        let enqueued = |key| {
            EventKind::Controller(ControllerEvent::Enqueue {
                controller: ControllerId(0),
                key: NameId(key),
                outcome: QueueAdd::Added,
                delay_ms: DurationMs::ZERO,
            })
        };
        let listed = EventKind::Reflector(ReflectorEvent::ListResult {
            watcher: W,
            list_rv: 12,
            items: 3,
            from_etcd: false,
            more: false,
        });
        let watch = EventKind::Reflector(ReflectorEvent::WatchRequest {
            watcher: W,
            from_rv: 12,
            timeout_ms,
        });
        let expect = [
            listed,
            informer(Delta::DeletedFinalStateUnknown, pod(1, 5)),
            enqueued(1),
            informer(Delta::Updated, pod(2, 9)),
            enqueued(2),
            informer(Delta::Added, pod(4, 11)),
            enqueued(4),
            state(WatcherState::InitListed, 12),
            watch,
        ];
        check(&out, &expect);
        let actors: Vec<Actor> = out.events.iter().map(|e| e.actor).collect();
        assert_eq!(
            actors[1..3],
            [Actor::Watcher(W), Actor::Controller(ControllerId(0))]
        );
        assert_eq!(from, 12);
        assert_eq!(r.store.len(), 3);
    }

    /// The request a step sent to the apiserver: a list or a streaming list, at which RV.
    fn list_sent(out: &Stepped) -> Option<(bool, ListRv)> {
        out.requests().iter().find_map(|a| match *a {
            Action::Server(ServerAction::ServeList { rv, .. }) => Some((false, rv)),
            Action::Server(ServerAction::ServeWatchList { rv, .. }) => Some((true, rv)),
            _ => None,
        })
    }

    /// `client-go/tools/cache/reflector.go` `watchList` (`isErrorRetriableWithSideEffectsFn`): a
    /// streaming list that gets 504 (or Expired) marks the last RV unavailable and streams again
    /// at once at RV ""; any other error makes `ListAndWatch` fall back to a standard LIST.
    #[test]
    fn a_streaming_list_retries_504_as_a_stream_and_falls_back_to_a_list_on_other_errors() {
        let too_large = ApiError::TooLargeRv {
            requested: 9,
            current: IssuedRv::new(7),
        };
        for (error, streams) in [(too_large, true), (ApiError::NotFound, false)] {
            let mut r = watching();
            r.state = WatcherState::Listing;
            let out = run_step(&mut r, TimeMs(3000), |r, st| {
                r.receive(st, Session(0), Msg::WatchListErr(error), 1)
            });
            let expected_rv = if streams {
                ListRv::Consistent
            } else {
                ListRv::NotOlderThan(7)
            };
            assert_eq!(list_sent(&out), Some((streams, expected_rv)), "{error:?}");
            assert!(
                !states(&out).contains(&WatcherState::BackoffRelist),
                "no backoff"
            );
        }
    }

    /// `client-go/tools/pager/pager.go`: a page with a continue token asks for the next page of
    /// the same snapshot; the items are collected until the last page.
    #[test]
    fn a_list_page_with_more_asks_for_the_next_page() {
        let mut r = reflector();
        r.paging = Some((ListRv::Any, vec![]));
        let page = Msg::ListOk {
            list_rv: 4,
            items: vec![pod(1, 2)],
            from_etcd: true,
            rest: vec![pod(2, 3)],
        };
        let out = run_step(&mut r, TimeMs(0), |r, st| {
            r.receive(st, Session(0), page, 1)
        });
        let next = Action::Server(ServerAction::ServeListPage {
            watcher: W,
            session: Session(0),
            list_rv: 4,
            rest: vec![pod(2, 3)],
            limit: 500,
        });
        assert_eq!(out.requests(), [next], "the next page is asked for");
        let page = EventKind::Reflector(ReflectorEvent::ListResult {
            watcher: W,
            list_rv: 4,
            items: 1,
            from_etcd: true,
            more: true,
        });
        let next = EventKind::Reflector(ReflectorEvent::ListContinue {
            watcher: W,
            list_rv: 4,
        });
        check(&out, &[page, next]);
        assert_eq!(r.paging.as_ref().map(|p| p.1.len()), Some(1));
        assert!(
            r.store.is_empty(),
            "the store changes only with the last page"
        );
    }

    #[test]
    fn a_relist_asks_any_first_then_the_last_rv_then_consistent_after_expiry() {
        let mut r = reflector();
        assert_eq!(r.relist_rv(), ListRv::Any);
        (r.listed, r.last_rv) = (true, 42);
        assert_eq!(r.relist_rv(), ListRv::NotOlderThan(42));
        r.rv_unavailable = true;
        assert_eq!(r.relist_rv(), ListRv::Consistent);
    }

    #[test]
    fn a_new_session_drops_the_watch() {
        let mut r = reflector();
        r.watch = Some(WatchRef {
            api: ApiserverId(0),
            id: WatchId(3),
        });
        assert_eq!(r.new_session(), Session(1));
        assert_eq!((r.session, r.watch), (Session(1), None));
    }

    #[test]
    fn backoff_doubles_to_the_cap_and_resets_every_interval() {
        let cfg = ReflectorConfig::default();
        let mut r = reflector();
        let bases: Vec<_> = (0..7)
            .map(|i| r.next_backoff(&cfg, TimeMs(i * 1000)).ms())
            .collect();
        assert_eq!(bases, [800, 1600, 3200, 6400, 12_800, 25_600, 30_000]);
        // The reset interval counts from the first backoff (the last reset), not the last one.
        assert_eq!(r.next_backoff(&cfg, TimeMs(120_001)), DurationMs(800));
        let quiet = ReflectorConfig {
            backoff_reset_after_quiet: true,
            ..cfg
        };
        let mut legacy = reflector();
        let bases: Vec<_> = (0..3)
            .map(|i| legacy.next_backoff(&quiet, TimeMs(i * 100_000)).ms())
            .collect();
        assert_eq!(bases, [800, 1600, 3200], "no quiet interval: no reset");
        assert_eq!(
            legacy.next_backoff(&quiet, TimeMs(320_001)),
            DurationMs(800)
        );
    }
}
