//! The client side: reflectors (list, watch, backoff) and informers (store, diff, handlers).

use super::*;

impl Sim {
    // ----- the reflector, client side -----

    pub(super) fn set_state(
        &mut self,
        w: WatcherId,
        state: WatcherState,
        cause: EventId,
    ) -> EventId {
        let r = &mut self.reflectors[w.index()];
        r.state = state;
        let last_rv = r.last_rv;
        self.emit(
            Actor::Watcher(w),
            cause,
            EventKind::State {
                watcher: w,
                state,
                last_rv,
            },
        )
    }

    pub(super) fn start_list(&mut self, w: WatcherId, cause: EventId) {
        let streaming = self
            .config
            .reflector_of(self.controller_of(w))
            .streaming_list;
        self.start_list_as(w, cause, streaming);
    }

    /// One list-and-watch round's list: a streaming list, or a list then a watch.
    fn start_list_as(&mut self, w: WatcherId, cause: EventId, streaming: bool) {
        let r = &mut self.reflectors[w.index()];
        let session = r.new_session();
        let (relist, rv) = (r.listed, r.relist_rv());
        let id = self.set_state(w, WatcherState::Listing, cause);
        if streaming {
            // watchList(): RV "" (consistent) first, then the last seen RV, NotOlderThan.
            let rv = match rv {
                ListRv::Any => ListRv::Consistent,
                other => other,
            };
            let timeout_ms = self.watch_timeout();
            let id = self.emit(
                Actor::Watcher(w),
                id,
                EventKind::WatchListRequest {
                    watcher: w,
                    rv,
                    relist,
                },
            );
            self.send_to_server(
                w,
                id,
                Action::ServeWatchList {
                    watcher: w,
                    session,
                    rv,
                    timeout_ms,
                },
            );
            return;
        }
        // The pager sets `limit` unless the list is at a resourceVersion (then it must come
        // from the watch cache, which does not page).
        let limit = match rv {
            ListRv::NotOlderThan(_) => 0,
            _ => self.config.reflector.page_size,
        };
        self.request_list(w, session, rv, limit, relist, id);
    }

    pub(super) fn request_list(
        &mut self,
        w: WatcherId,
        session: Session,
        rv: ListRv,
        limit: u32,
        relist: bool,
        cause: EventId,
    ) {
        self.reflectors[w.index()].paging = (limit > 0).then(|| (rv, vec![]));
        let id = self.emit(
            Actor::Watcher(w),
            cause,
            EventKind::ListRequest {
                watcher: w,
                rv,
                relist,
            },
        );
        self.send_to_server(
            w,
            id,
            Action::ServeList {
                watcher: w,
                session,
                rv,
                limit,
            },
        );
    }

    pub(super) fn start_watch(&mut self, w: WatcherId, cause: EventId) {
        let r = &mut self.reflectors[w.index()];
        let (session, from) = (r.new_session(), r.last_rv);
        let timeout_ms = self.watch_timeout();
        let id = self.emit(
            Actor::Watcher(w),
            cause,
            EventKind::WatchRequest {
                watcher: w,
                from_rv: from,
                timeout_ms,
            },
        );
        self.send_to_server(
            w,
            id,
            Action::ServeWatch {
                watcher: w,
                session,
                from,
                timeout_ms,
            },
        );
    }

    /// A backoff is over: relist or re-watch, unless a newer request replaced this one.
    pub(super) fn wake(&mut self, w: WatcherId, session: Session, cause: EventId) {
        let r = &self.reflectors[w.index()];
        if r.session != session {
            return;
        }
        match r.state {
            WatcherState::BackoffRelist => self.start_list(w, cause),
            WatcherState::BackoffRewatch => self.start_watch(w, cause),
            _ => {}
        }
    }

    /// client-go: `minWatchTimeout * (rand + 1)`, uniform in [5 m, 10 m) by default.
    pub(super) fn watch_timeout(&mut self) -> TimeMs {
        let min = self.config.reflector.watch_timeout_ms_min;
        min + self.rng.below(min)
    }

    pub(super) fn backoff(&mut self, w: WatcherId, state: WatcherState, cause: EventId) {
        let cfg = self.config.reflector;
        let now = self.now_ms;
        let r = &mut self.reflectors[w.index()];
        let base = r.next_backoff(&cfg, now);
        let session = r.new_session();
        let delay_ms = base + self.rng.below(base);
        let id = self.set_state(w, state, cause);
        let id = self.emit(
            Actor::Watcher(w),
            id,
            EventKind::Backoff {
                watcher: w,
                delay_ms,
            },
        );
        self.schedule(
            now + delay_ms,
            id,
            Action::Wake {
                watcher: w,
                session,
            },
        );
    }

    pub(super) fn deliver(&mut self, w: WatcherId, session: Session, msg: Msg, cause: EventId) {
        if let Msg::Event {
            watch, live: true, ..
        } = &msg
        {
            let sw = &mut self.watches[watch.index()];
            sw.in_flight = sw.in_flight.saturating_sub(1);
        }
        if self.reflectors[w.index()].session != session {
            return;
        }
        let c = self.controller_of(w);
        if let Some(hold) = &mut self.controllers[c.index()].hold {
            match &msg {
                Msg::Event { change, .. } => {
                    let o = change.object;
                    if (o.kind, o.name) == (hold.kind, hold.name) {
                        hold.seen += 1;
                    }
                    let superseded = hold.seen >= 2;
                    hold.buffer.push((cause, w, session, msg));
                    if superseded {
                        self.release_hold(c, true, cause);
                    }
                    return;
                }
                Msg::Bookmark { .. } => {
                    hold.buffer.push((cause, w, session, msg));
                    return;
                }
                // The stream ended or a request was answered: what came before goes first.
                _ => self.release_hold(c, false, cause),
            }
        }
        self.receive(w, session, msg, cause);
    }

    /// Delivers the notifications a hold kept back, in the order they arrived.
    pub(super) fn release_hold(&mut self, c: ControllerId, superseded: bool, cause: EventId) {
        let Some(hold) = self.controllers[c.index()].hold.take() else {
            return;
        };
        let id = self.emit(
            Actor::Controller(c),
            cause,
            EventKind::HoldReleased {
                controller: c,
                held: hold.buffer.len() as u32,
                superseded,
            },
        );
        for (_, w, session, msg) in hold.buffer {
            if self.reflectors[w.index()].session == session {
                self.receive(w, session, msg, id);
            }
        }
    }

    /// A message the reflector takes in now: each arm is one call.
    fn receive(&mut self, w: WatcherId, session: Session, msg: Msg, cause: EventId) {
        match msg {
            Msg::ListOk {
                list_rv,
                items,
                from_etcd,
                rest,
            } => self.on_list_page(w, session, list_rv, items, from_etcd, rest, cause),
            Msg::WatchListStart { watch, items, rv } => {
                self.on_initial_events_end(w, watch, items, rv, cause)
            }
            Msg::ListErr(error) => self.on_list_failed(w, session, error, cause),
            Msg::WatchListErr(error) => self.on_watch_list_failed(w, error, cause),
            Msg::WatchOpened {
                watch,
                from_rv,
                replayed,
            } => self.on_watch_opened(w, watch, from_rv, replayed, cause),
            Msg::Event { change, .. } => self.watch_event(w, change, cause),
            Msg::Bookmark { rv, .. } => self.on_bookmark(w, rv, cause),
            Msg::WatchErr(error) => {
                let id = self.watch_failed(w, error, cause);
                let id = self.set_state(w, WatcherState::Empty, id);
                self.backoff(w, WatcherState::BackoffRelist, id);
            }
            Msg::Refused(error) => {
                let id = self.watch_failed(w, error, cause);
                self.backoff(w, WatcherState::BackoffRewatch, id);
            }
            Msg::WatchEnd(reason) => self.on_watch_end(w, reason, cause),
        }
    }

    /// One page of a list; the last one replaces the store and starts the watch.
    #[allow(clippy::too_many_arguments)]
    fn on_list_page(
        &mut self,
        w: WatcherId,
        session: Session,
        list_rv: Rv,
        items: Vec<Object>,
        from_etcd: bool,
        rest: Vec<Object>,
        cause: EventId,
    ) {
        let more = !rest.is_empty();
        let result = EventKind::ListResult {
            watcher: w,
            list_rv,
            items: items.len() as u32,
            from_etcd,
            more,
        };
        let id = self.emit(Actor::Watcher(w), cause, result);
        let r = &mut self.reflectors[w.index()];
        let mut collected = r.paging.take();
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
            r.paging = Some((rv, items));
            let limit = self.config.reflector.page_size.max(1);
            let next = EventKind::ListContinue {
                watcher: w,
                list_rv,
            };
            let id = self.emit(Actor::Watcher(w), id, next);
            let page = Action::ServeListPage {
                watcher: w,
                session,
                list_rv,
                rest,
                limit,
            };
            return self.send_to_server(w, id, page);
        }
        self.replace_store(w, items, id);
        self.listed_at(w, list_rv);
        let id = self.set_state(w, WatcherState::InitListed, id);
        self.start_watch(w, id);
    }

    /// A streaming list's initial events, applied at the bookmark that ends them; the same
    /// stream goes on as the watch.
    fn on_initial_events_end(
        &mut self,
        w: WatcherId,
        watch: WatchId,
        items: Vec<Object>,
        rv: Rv,
        cause: EventId,
    ) {
        let end = EventKind::InitialEventsEnd {
            watcher: w,
            rv,
            items: items.len() as u32,
        };
        let id = self.emit(Actor::Watcher(w), cause, end);
        self.replace_store(w, items, id);
        self.listed_at(w, rv);
        self.watching(w, watch);
        self.set_state(w, WatcherState::Watching, id);
    }

    /// The store now holds the list at `rv`.
    fn listed_at(&mut self, w: WatcherId, rv: Rv) {
        let r = &mut self.reflectors[w.index()];
        r.last_rv = rv;
        r.rv_unavailable = false;
        r.listed = true;
    }

    /// The watch's stream is open from now on.
    fn watching(&mut self, w: WatcherId, watch: WatchId) {
        let now = self.now_ms;
        let r = &mut self.reflectors[w.index()];
        r.watch = Some(watch);
        r.watch_opened_ms = now;
        r.watch_events = 0;
    }

    fn on_list_failed(&mut self, w: WatcherId, session: Session, error: ApiError, cause: EventId) {
        let id = self.emit(
            Actor::Watcher(w),
            cause,
            EventKind::ListFailed { watcher: w, error },
        );
        if let (ApiError::ContinueExpired, Some((rv, _))) =
            (error, self.reflectors[w.index()].paging.take())
        {
            // pager.FullListIfExpired: the same list again, without paging.
            let relist = self.reflectors[w.index()].listed;
            self.request_list(w, session, rv, 0, relist, id);
        } else if matches!(error, ApiError::TooOld { .. } | ApiError::TooLargeRv { .. }) {
            // Retried at once with RV="".
            self.reflectors[w.index()].rv_unavailable = true;
            self.start_list(w, id);
        } else {
            self.backoff(w, WatcherState::BackoffRelist, id);
        }
    }

    /// reflector.go: "The watchlist request ended with an error, falling back to the standard
    /// LIST/WATCH semantics"; a too-large RV makes that list consistent.
    fn on_watch_list_failed(&mut self, w: WatcherId, error: ApiError, cause: EventId) {
        let id = self.emit(
            Actor::Watcher(w),
            cause,
            EventKind::ListFailed { watcher: w, error },
        );
        if matches!(error, ApiError::TooOld { .. } | ApiError::TooLargeRv { .. }) {
            self.reflectors[w.index()].rv_unavailable = true;
        }
        self.start_list_as(w, id, false);
    }

    fn on_watch_opened(
        &mut self,
        w: WatcherId,
        watch: WatchId,
        from_rv: Rv,
        replayed: u32,
        cause: EventId,
    ) {
        self.watching(w, watch);
        let opened = EventKind::WatchOpened {
            watcher: w,
            from_rv,
            replayed,
        };
        let id = self.emit(Actor::Watcher(w), cause, opened);
        self.set_state(w, WatcherState::Watching, id);
    }

    fn on_bookmark(&mut self, w: WatcherId, rv: Rv, cause: EventId) {
        let r = &mut self.reflectors[w.index()];
        r.last_rv = r.last_rv.max(rv);
        r.watch_events += 1;
        self.emit(
            Actor::Watcher(w),
            cause,
            EventKind::Bookmark { watcher: w, rv },
        );
    }

    fn watch_failed(&mut self, w: WatcherId, error: ApiError, cause: EventId) -> EventId {
        self.emit(
            Actor::Watcher(w),
            cause,
            EventKind::WatchFailed { watcher: w, error },
        )
    }

    /// A stream that ended without an error: re-watch at once, unless it was a very short watch
    /// with no events (treated as an error: back off, relist).
    fn on_watch_end(&mut self, w: WatcherId, reason: WatchEnd, cause: EventId) {
        let id = self.emit(
            Actor::Watcher(w),
            cause,
            EventKind::WatchEnded { watcher: w, reason },
        );
        let r = &self.reflectors[w.index()];
        let short = self.now_ms - r.watch_opened_ms < SHORT_WATCH_MS && r.watch_events == 0;
        if short && reason != WatchEnd::Disconnected {
            self.backoff(w, WatcherState::BackoffRelist, id);
        } else {
            self.start_watch(w, id);
        }
    }

    pub(super) fn watch_event(&mut self, w: WatcherId, change: Change, cause: EventId) {
        let o = change.object;
        let r = &mut self.reflectors[w.index()];
        r.last_rv = o.rv;
        r.watch_events += 1;
        let old = match change.event {
            EventType::Deleted => r.store.remove(&o.name),
            _ => r.store.insert(o.name, o),
        };
        let id = self.emit(
            Actor::Watcher(w),
            cause,
            EventKind::WatchEvent {
                watcher: w,
                event: change.event,
                name: o.name,
                rv: o.rv,
                spec: o.spec,
            },
        );
        let update = (change.event == EventType::Modified)
            .then_some(old)
            .flatten();
        self.handle(w, &o, update.as_ref(), id, false);
    }

    /// The relist's diff (`DeltaFIFO.Replace` + `HandleDeltas`).
    pub(super) fn replace_store(&mut self, w: WatcherId, items: Vec<Object>, cause: EventId) {
        let new: crate::store::Store = items.into_iter().map(|o| (o.name, o)).collect();
        let old = std::mem::take(&mut self.reflectors[w.index()].store);
        let initial = !self.reflectors[w.index()].listed;
        let mut deltas = vec![];
        for (name, o) in old.iter() {
            if !new.contains_key(name) {
                deltas.push((Delta::DeletedFinalStateUnknown, *o, None));
            }
        }
        for (name, o) in new.iter() {
            match old.get(name) {
                None => deltas.push((Delta::Added, *o, None)),
                Some(prev) if prev.rv != o.rv => deltas.push((Delta::Updated, *o, Some(*prev))),
                Some(_) => {}
            }
        }
        self.reflectors[w.index()].store = new;
        for (delta, o, prev) in deltas {
            let id = self.emit(
                Actor::Watcher(w),
                cause,
                EventKind::Informer {
                    watcher: w,
                    delta,
                    name: o.name,
                    rv: o.rv,
                    spec: o.spec,
                    deleting: o.deletion_ms.is_some(),
                },
            );
            self.handle(w, &o, prev.as_ref(), id, initial);
        }
    }

    pub(super) fn resync(&mut self, w: WatcherId, epoch: Epoch) {
        let c = self.controller_of(w);
        if !self.in_life(c, epoch) {
            return;
        }
        let objects: Vec<Object> = self.reflectors[w.index()].store.values().copied().collect();
        for o in objects {
            let id = self.emit(
                Actor::Watcher(w),
                NO_CAUSE,
                EventKind::Informer {
                    watcher: w,
                    delta: Delta::Sync,
                    name: o.name,
                    rv: o.rv,
                    spec: o.spec,
                    deleting: o.deletion_ms.is_some(),
                },
            );
            // An unchanged object: `handler.LowPriority` on controller-runtime's priority queue.
            self.handle(w, &o, Some(&o), id, true);
        }
        let period = controller::resync_period(self.config.controllers[c.index()].resync_ms);
        self.schedule(
            self.now_ms + period,
            NO_CAUSE,
            Action::Resync { watcher: w, epoch },
        );
    }

    /// The event handlers: object → reconcile keys. `old` is set for updates (and resyncs,
    /// where it equals the object), for the handlers' predicates.
    pub(super) fn handle(
        &mut self,
        w: WatcherId,
        o: &Object,
        old: Option<&Object>,
        cause: EventId,
        initial: bool,
    ) {
        let r = &self.reflectors[w.index()];
        let c = r.controller;
        let primary = self.config.controllers[c.index()].primary;
        let passes = |p: Predicate| match (p, old) {
            (Predicate::GenerationChanged, Some(old)) => old.generation != o.generation,
            (Predicate::ResourceVersionChanged, Some(old)) => old.rv != o.rv,
            _ => true,
        };
        let keys: Vec<NameId> = r
            .handlers
            .iter()
            .filter(|(_, p)| passes(*p))
            .filter_map(|(m, _)| match m {
                KeyMap::ReadOnly => None,
                KeyMap::Itself => Some(o.name),
                KeyMap::Owner => o
                    .owner
                    .filter(|owner| owner.kind == primary)
                    .map(|owner| owner.name),
            })
            .collect();
        for key in keys {
            self.enqueue(c, key, cause, initial);
        }
    }
}
