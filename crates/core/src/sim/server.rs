//! The engine's side of etcd and the apiservers: etcd's commit (with its fan-out to the
//! garbage collector, `gc.rs`, the caches and etcd's own watches), compaction;
//! routing requests to an apiserver and running its steps (`apiserver.rs`, `serve.rs`).

use super::*;

impl Sim {
    // ----- etcd and the apiservers -----

    /// Commits one write to etcd, emits it, and fans it out to the caches.
    pub(super) fn write(
        &mut self,
        actor: Actor,
        cause: EventId,
        mut w: Write,
    ) -> Result<EventId, ApiError> {
        // `metadata.generateName` (`registry/rest/create.go` `BeforeCreate`): the apiserver
        // names the object before storing it.
        if let Write::Create {
            kind,
            name,
            generate_name: generate @ true,
            ..
        } = &mut w
        {
            let prefix = self.names.resolve(*name).to_string();
            match self.generated_name(*kind, &prefix) {
                Ok(drawn) => *name = drawn,
                Err(error) => {
                    let refused = Refusal {
                        op: WriteOp::Create,
                        kind: *kind,
                        name: *name,
                        error,
                    };
                    return self.settle(actor, cause, Err(refused));
                }
            }
            *generate = false;
        }
        let decision = self.etcd.decide(w, &self.names, self.now_ms);
        self.settle(actor, cause, decision)
    }

    /// What etcd decided of a write, made so: committed, a no-op, or the refusal emitted.
    pub(super) fn settle(
        &mut self,
        actor: Actor,
        cause: EventId,
        decision: Result<Decision, Refusal>,
    ) -> Result<EventId, ApiError> {
        match decision {
            Ok(Decision::Commit { op, event, obj }) => {
                Ok(self.commit(actor, cause, op, event, obj))
            }
            Ok(Decision::NoOp { kind, name }) => Ok(self.emit(
                actor,
                cause,
                EventKind::Store(StoreEvent::NoOpWrite { kind, name }),
            )),
            Err(Refusal {
                op,
                kind,
                name,
                error,
            }) => {
                let failed = EventKind::Store(StoreEvent::WriteFailed {
                    op,
                    kind,
                    name,
                    error,
                });
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
        let obj = change.object.clone();
        let write = EventKind::Store(StoreEvent::Write {
            op,
            kind: obj.kind,
            name: obj.name,
            rv: obj.rv,
            spec: obj.spec,
            status: obj.status,
        });
        let before = self.sink.trace.len();
        let id = self.emit(actor, cause, write);
        // Its UID and controller reference as etcd has them, for the view (a `Write` event
        // has no room), when they are new: a create, or a write that moved the reference (an
        // adopt, a release, the collector orphaning it or dropping a deleted owner).
        let prev_owner = change.prev.as_ref().map(|p| p.owner);
        let decided = event == EventType::Added || prev_owner.is_some_and(|o| o != obj.owner);
        if decided && self.sink.trace.len() > before {
            self.sink.trace.keep_identity(crate::trace::Identity {
                event: id,
                uid: obj.uid,
                owner: obj.owner,
            });
        }
        let owned = matches!(op, WriteOp::Adopt | WriteOp::Release);
        // (Past the event cap the write was not recorded: no body to keep for it.)
        let recorded = self.sink.trace.len() > before;
        if recorded && (owned || !obj.body.is_empty()) && event != EventType::Deleted {
            // An adopt or a release says the controller reference it leaves.
            let kept = crate::trace::KeptBody {
                body: obj.body.clone(),
                controller_owner: owned.then_some(obj.owner),
            };
            let body = self.sink.trace.keep_body(kept);
            let (kind, name, rv) = (obj.kind, obj.name, obj.rv);
            let fields = EventKind::Store(StoreEvent::ObjectFields {
                kind,
                name,
                rv,
                body,
            });
            self.emit(actor, id, fields);
        }
        self.gc_notice(&obj, event, id);
        for a in 0..self.apiservers.len() {
            let api = ApiserverId(a as u8);
            let lag = self.apiservers[a].lag_ms;
            let change = change.clone();
            if lag.is_zero() {
                self.cache_apply(api, change, id);
            } else {
                self.schedule(
                    self.now_ms + lag,
                    id,
                    Action::Server(ServerAction::CacheApply {
                        api,
                        change: Box::new(change),
                    }),
                );
            }
        }
        self.etcd_watch_fanout(&change, id);
        let world = (&*self.config, &self.etcd, &self.names);
        self.esr
            .track(world, self.now_ms, &obj, event != EventType::Deleted);
        id
    }

    /// etcd's compaction tick: the compaction's event when it moved, and the next tick.
    pub(super) fn compact_tick(&mut self) {
        if let Some(rev) = self.etcd.compact_tick() {
            self.emit(
                Actor::Etcd,
                NO_CAUSE,
                EventKind::Store(StoreEvent::Compacted { rev }),
            );
        }
        let next = self.now_ms + self.config.compaction_ms;
        self.schedule(next, NO_CAUSE, Action::Etcd(EtcdAction::CompactTick));
    }

    // ----- the apiservers: routing and steps -----

    /// Runs one step of an apiserver, then what it posted; returns what the step returned.
    pub(super) fn step_server<R>(
        &mut self,
        api: ApiserverId,
        step: impl FnOnce(&mut Apiserver, &mut apiserver::StepContext) -> R,
    ) -> R {
        let from = self.outbox.len();
        let opened_before = self.apiservers[api.index()].watches.len();
        let mut st = apiserver::StepContext {
            api,
            now_ms: self.now_ms,
            config: &self.config,
            etcd: &self.etcd,
            names: &self.names,
            out: Out::new(
                self.now_ms,
                Actor::Apiserver(api),
                &mut self.sink,
                &mut self.outbox,
            ),
        };
        let a = &mut self.apiservers[api.index()];
        let result = step(a, &mut st);
        // The watches it relays from etcd that the step opened are etcd's watches from now on
        // (`etcd3/watcher.go`: the apiserver registers each with etcd as it opens).
        if a.watches.len() > opened_before {
            let relayed = (a.watches[opened_before..].iter()).filter(|w| w.from_etcd);
            (self.etcd_watches).extend(relayed.map(|w| WatchRef { api, id: w.id }));
        }
        self.run_outbox(from);
        result
    }

    /// A change from etcd reaches an apiserver's caches, then every watch its cache feeds.
    pub(super) fn cache_apply(&mut self, api: ApiserverId, change: Change, cause: EventId) {
        if let Some(id) = self.step_server(api, |a, st| a.change(st, change.clone(), cause)) {
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
        let change = Arc::new(change);
        let watches = std::mem::take(self.apiservers[api.index()].watches_of(kind));
        let (cap, mut closed) = (self.config.watch_chan_capacity, false);
        for &id in &watches {
            let watch = WatchRef { api, id };
            let w = &mut self.apiservers[api.index()].watches[id.index()];
            let watcher = w.watcher;
            // The engine owns the links: it says whether the watch's connection is backed up
            // (`serve.rs` `Delivery`). Fields, not `controller_of`: `w` is borrowed.
            let c = self.reflectors[watcher.index()].controller;
            let slow_link = self.links[c.index()].slow();
            let offer = w.offer(&change, true, slow_link, cap, &self.names);
            match offer {
                Offer::Skip => {}
                Offer::Send | Offer::SendAs(_) => {
                    let session = w.session;
                    let live = true;
                    let change = match offer {
                        Offer::SendAs(event) => Arc::new(change.converted(event)),
                        _ => Arc::clone(&change),
                    };
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
        let a = &mut self.apiservers[api.index()];
        a.watches_by_kind[kind.index()] = watches;
        if closed {
            let open = &a.watches;
            a.watches_by_kind[kind.index()].retain(|w| open[w.index()].open);
        }
    }

    /// Freezes or thaws an apiserver's caches; thawing applies what was held, in order.
    pub(super) fn pause_cache(&mut self, api: ApiserverId, paused: bool, cause: EventId) {
        let (id, held, progress) = self.step_server(api, |a, st| a.pause(st, paused, cause));
        for change in held {
            self.cache_apply(api, change, id);
        }
        if progress > 0 {
            self.step_server(api, |a, st| a.progress_notified(st, progress, id));
        }
    }

    /// The apiserver restarts: every cache re-initialises.
    pub(super) fn restart_apiserver(
        &mut self,
        api: ApiserverId,
        down_ms: DurationMs,
        cause: EventId,
    ) {
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
        self.step_server(api, |a, st| a.reinit(st, Some(kind), down_ms, cause));
    }

    /// etcd's watch events for kinds without a cache go to the watches the apiservers relay
    /// from etcd, in the order the watches opened; so do a fake apiserver's (every kind).
    pub(super) fn etcd_watch_fanout(&mut self, change: &Change, cause: EventId) {
        let fake = self.config.apiservers.iter().any(|a| a.fake.is_some());
        if self.config.kinds[change.object.kind.index()].cache != CacheMode::Off && !fake {
            return;
        }
        for i in 0..self.etcd_watches.len() {
            let watch = self.etcd_watches[i];
            let w = self.watch_at(watch);
            if w.open && w.kind == change.object.kind {
                let backed_up = self.links[self.controller_of(w.watcher).index()].slow();
                let relayed = (change.clone(), backed_up);
                let id = watch.id;
                self.step_server(watch.api, |a, st| a.relay(st, id, relayed, cause));
            }
        }
    }

    /// A watch's bookmark is due, at the apiserver that serves it.
    pub(super) fn bookmark_due(&mut self, watch: WatchRef, cause: EventId) {
        let id = watch.id;
        self.step_server(watch.api, |a, st| a.bookmark_due(st, id, cause));
    }

    /// Ends a watch at its apiserver.
    pub(super) fn close_watch(&mut self, watch: WatchRef, reason: WatchEnd, cause: EventId) {
        let id = watch.id;
        self.step_server(watch.api, |a, st| a.close_watch(st, id, reason, cause));
    }

    /// The apiserver a watcher's request reaches, or None after refusing it (link down).
    fn route(
        &mut self,
        watcher: WatcherId,
        session: Session,
        cause: EventId,
        refuse: fn(ApiError) -> Msg,
    ) -> Option<ApiserverId> {
        let link = &self.links[self.controller_of(watcher).index()];
        if link.connected() {
            return Some(link.apiserver());
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
        serve: impl FnOnce(&mut Apiserver, &mut apiserver::StepContext, EventId),
    ) {
        if let Some(api) = self.route(watcher, session, cause, refuse) {
            self.step_server(api, |a, st| serve(a, st, cause));
        }
    }

    /// A probe's request: the next probe number, to the apiserver it names.
    pub(super) fn probe(
        &mut self,
        api: ApiserverId,
        kind: KindId,
        request: ProbeRequest,
        selector: Option<&crate::config::ProbeSelector>,
        cause: EventId,
    ) {
        let probe = self.probes;
        self.probes += 1;
        let text = selector.map(|s| self.names.intern(&s.text()));
        let selector = selector.and_then(|s| {
            let names = &mut self.names;
            crate::object::Selector::resolve(s.labels.as_ref(), s.fields.as_ref(), names)
        });
        let selector = (text, selector.map(Arc::new));
        self.step_server(api, |a, st| {
            a.probe(st, (probe, kind), request, selector, cause)
        });
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{create_pod, events_from, mirrors};
    use super::*;
    use crate::config::{ApiserverConfig, TimedInput};

    /// `etcd3/store.go`: a write is one new revision; it reaches every apiserver's cache through
    /// etcd's watch, after that apiserver's lag, each `CacheAdd` naming the write.
    #[test]
    fn a_commit_emits_the_write_and_reaches_every_cache_after_its_lag() {
        let mut config = mirrors(0);
        let lagging = ApiserverConfig {
            name: "lagging".into(),
            lag_ms: DurationMs(500),
            ..Default::default()
        };
        config.apiservers.push(lagging);
        let mut sim = Sim::new(config).unwrap();
        sim.handle_input(create_pod("a", 1));
        sim.handle_timeout(TimeMs(499));
        let name = sim.names.intern_qualified("a");
        assert_eq!(sim.etcd.get(KindId(0), name).map(|o| o.rv), Some(2));
        let adds = |sim: &Sim| -> Vec<(TimeMs, EventId, ApiserverId, Rv)> {
            let events = events_from(sim, 0).into_iter();
            let add = |(at, cause, k)| match k {
                EventKind::Store(StoreEvent::CacheAdd { apiserver, rv, .. }) => {
                    Some((at, cause, apiserver, rv))
                }
                _ => None,
            };
            events.filter_map(add).collect()
        };
        assert!(matches!(
            sim.sink.trace[0].kind,
            EventKind::Store(StoreEvent::Write {
                op: WriteOp::Create,
                rv: 2,
                ..
            })
        ));
        assert_eq!(adds(&sim), [(TimeMs(0), 0, ApiserverId(0), 2)]);
        sim.handle_timeout(TimeMs(500));
        let lagged = (TimeMs(500), 0, ApiserverId(1), 2);
        assert_eq!(adds(&sim)[1..], [lagged]);
    }

    /// `pkg/controller/garbagecollector` (semantics.md §8b): after the collector's delay, a
    /// dependent whose owner (by UID) is gone is deleted in the background, even when an owner
    /// of the same name was created again meanwhile; a dependent created with a missing owner
    /// is collected too.
    #[test]
    fn the_collector_deletes_the_children_of_a_deleted_owner_after_its_delay() {
        let mut config = mirrors(0);
        config.gc_delay_ms = DurationMs(2000);
        let mut sim = Sim::new(config).unwrap();
        sim.handle_input(create_pod("p", 1));
        let p = sim.etcd.objects().values().next().unwrap().clone();
        let child = |sim: &mut Sim, name: &str, uid: u64| {
            let name = sim.names.intern_qualified(name);
            let owner = Some(Owner {
                kind: KindId(0),
                name: p.name,
                uid,
            });
            let create = Write::Create {
                kind: KindId(1),
                name,
                namespace: p.namespace,
                spec: 0,
                owner,
                fields: None,
                generate_name: false,
            };
            sim.write(Actor::User, NO_CAUSE, create).unwrap();
            name
        };
        let owned = child(&mut sim, "p-0", p.uid);
        let delete = Input::Write(WriteInput::Delete {
            kind: KindId(0),
            name: "p".into(),
        });
        sim.handle_input(delete);
        let deleted_at = sim.sink.trace.iter().rposition(|e| {
            let delete = WriteOp::Delete;
            matches!(e.kind, EventKind::Store(StoreEvent::Write { op, .. }) if op == delete)
        });
        let deleted_at = deleted_at.expect("the owner's delete") as EventId;
        assert!(sim.schedule_input(TimeMs(1000), create_pod("p", 1)));
        sim.handle_timeout(TimeMs(1999));
        assert!(
            sim.etcd.get(KindId(1), owned).is_some(),
            "not before the delay"
        );
        let stray = child(&mut sim, "q-0", p.uid);
        sim.handle_timeout(TimeMs(2000));
        assert!(sim.etcd.get(KindId(1), owned).is_none());
        let collected: Vec<(TimeMs, EventId, NameId)> = sim
            .sink
            .trace
            .iter()
            .filter(|e| e.actor == Actor::GarbageCollector)
            .filter_map(|e| match e.kind {
                EventKind::Store(StoreEvent::Write {
                    op: WriteOp::Delete,
                    name,
                    ..
                }) => Some((e.time_ms, e.cause, name)),
                _ => None,
            })
            .collect();
        assert_eq!(collected, [(TimeMs(2000), deleted_at, owned)]);
        // Created at 1999, looked at 2 s later.
        sim.handle_timeout(TimeMs(3998));
        assert!(sim.etcd.get(KindId(1), stray).is_some());
        sim.handle_timeout(TimeMs(3999));
        assert!(
            sim.etcd.get(KindId(1), stray).is_none(),
            "its owner never existed"
        );
    }

    /// `etcd3/compact.go`: etcd compacts to the revision of the previous tick; then a watch
    /// served by etcd (`etcd3/watcher.go`, from `r + 1`) fails with 410 iff `r + 1 <
    /// compactRev`, and an Exact list below the compacted revision gets 410 (semantics.md §5).
    #[test]
    fn compaction_makes_older_revisions_410() {
        let mut config = mirrors(0);
        config.kinds[0].cache = CacheMode::Off;
        config.compaction_ms = DurationMs(1000);
        config.end_ms = TimeMs(2500);
        let probe = |request| Input::Probe {
            apiserver: ApiserverId(0),
            kind: KindId(0),
            request,
            selector: None,
        };
        let exact = |n| {
            probe(ProbeRequest::List {
                rv: ListRv::Exact(n),
            })
        };
        let inputs = [
            (0, create_pod("a", 1)),
            (0, create_pod("b", 1)),
            (1500, create_pod("c", 1)),
            (2500, probe(ProbeRequest::Watch { from: 2 })),
            (2500, probe(ProbeRequest::Watch { from: 3 })),
            (2500, exact(3)),
            (2500, exact(4)),
        ];
        for (at, input) in inputs {
            let at_ms = TimeMs(at);
            config.timeline.push(TimedInput { at_ms, input });
        }
        let mut sim = Sim::new(config).unwrap();
        sim.run();
        let compacted: Vec<(TimeMs, Rv)> = sim
            .sink
            .trace
            .iter()
            .filter_map(|e| match e.kind {
                EventKind::Store(StoreEvent::Compacted { rev }) => Some((e.time_ms, rev)),
                _ => None,
            })
            .collect();
        assert_eq!(
            compacted,
            [(TimeMs(2000), 4)],
            "the first tick only remembers"
        );
        let answers: Vec<EventKind> = sim
            .sink
            .trace
            .iter()
            .filter(|e| e.actor == Actor::Probe)
            .map(|e| e.kind)
            .filter(|k| !matches!(k, EventKind::Probe(ProbeEvent::ProbeRequest { .. })))
            .collect();
        let expected = [
            EventKind::Probe(ProbeEvent::ProbeFailed {
                probe: 0,
                error: ApiError::WatchCompacted,
            }),
            EventKind::Probe(ProbeEvent::ProbeWatchOpened {
                probe: 1,
                from_rv: 3,
                replayed: 1,
            }),
            EventKind::Probe(ProbeEvent::ProbeFailed {
                probe: 2,
                error: ApiError::ListCompacted,
            }),
            EventKind::Probe(ProbeEvent::ProbeListed {
                probe: 3,
                items: 2,
                list_rv: 4,
                from_etcd: true,
            }),
        ];
        assert_eq!(answers, expected);
    }

    /// Two controllers, each watching Pods and Copies, settled at 1 s.
    fn watching(config: Config) -> Sim {
        let mut sim = Sim::new(config).unwrap();
        sim.handle_timeout(TimeMs(1000));
        let states = sim.reflectors.iter().map(|r| r.state);
        assert!(states.into_iter().all(|s| s == WatcherState::Watching));
        sim
    }

    /// `cacher.go` `dispatchEvent`: a change the cache took goes to every open watch of its
    /// kind, in the order the watches opened, and to no watch of another kind.
    #[test]
    fn a_change_fans_out_to_each_watch_of_its_kind_in_the_order_they_opened() {
        let mut sim = watching(mirrors(2));
        let pods = sim.apiservers[0].watches_by_kind[0].clone();
        let opened: Vec<WatcherId> = pods
            .iter()
            .map(|&id| sim.apiservers[0].watches()[id.index()].watcher)
            .collect();
        assert_eq!(opened.len(), 2);
        let from = sim.sink.trace.len();
        sim.handle_input(create_pod("x", 1));
        let got: Vec<WatcherId> = events_from(&sim, from)
            .into_iter()
            .filter_map(|(_, _, k)| match k {
                EventKind::Reflector(ReflectorEvent::WatchEvent { watcher, rv, .. })
                    if rv == sim.etcd.rev() =>
                {
                    Some(watcher)
                }
                _ => None,
            })
            .collect();
        assert_eq!(got, opened);
    }

    /// A kind without a watch cache is watched through etcd (`etcd3/watcher.go`): each
    /// apiserver registers its client's watch with etcd as it opens, and etcd sends a change to
    /// its watchers in the order they were registered, whichever apiserver relays each (the
    /// model's order; each apiserver numbers its own watches).
    #[test]
    fn etcd_relays_a_change_to_the_watches_in_the_order_they_opened_across_apiservers() {
        let mut config = mirrors(3);
        config.kinds[0].cache = CacheMode::Off;
        config.apiservers.push(ApiserverConfig {
            name: "other".into(),
            ..Default::default()
        });
        config.controllers[1].apiserver = ApiserverId(1);
        let mut sim = watching(config);
        let pods = |w: &WatcherId| sim.reflectors[w.index()].kind == KindId(0);
        let opened: Vec<WatcherId> = events_from(&sim, 0)
            .into_iter()
            .filter_map(|(_, _, k)| match k {
                EventKind::Reflector(ReflectorEvent::WatchOpened { watcher, .. }) => Some(watcher),
                _ => None,
            })
            .filter(pods)
            .collect();
        let api_of = |w: &WatcherId| sim.links[sim.controller_of(*w).index()].apiserver();
        let apis: Vec<ApiserverId> = opened.iter().map(api_of).collect();
        assert_eq!(
            apis,
            [ApiserverId(0), ApiserverId(1), ApiserverId(0)],
            "the watches open on both apiservers, interleaved"
        );
        let from = sim.sink.trace.len();
        sim.handle_input(create_pod("x", 1));
        let got: Vec<WatcherId> = events_from(&sim, from)
            .into_iter()
            .filter_map(|(_, _, k)| match k {
                EventKind::Reflector(ReflectorEvent::WatchEvent { watcher, .. }) => Some(watcher),
                _ => None,
            })
            .collect();
        assert_eq!(
            got, opened,
            "in the order the watches opened, not by apiserver"
        );
    }

    /// `cache_watcher.go`: live events wait in a watch's channel while its client's link is
    /// slow; one more than the channel holds closes the watch (no ERROR), and it leaves its
    /// kind's list. A watch whose client keeps up is unaffected.
    #[test]
    fn a_watch_too_slow_for_its_channel_is_closed() {
        let mut config = mirrors(2);
        config.watch_chan_capacity = 1;
        config.controllers[1].link_delay_ms = DurationMs(100);
        let mut sim = watching(config);
        let slow = sim.reflectors[2]
            .watch
            .expect("the slow controller's Pod watch");
        let fast = sim.reflectors[0].watch.expect("the other's");
        sim.handle_input(create_pod("x", 1));
        assert!(sim.watch_at(slow).open, "one event fits its channel");
        sim.handle_input(create_pod("y", 1));
        assert!(!sim.watch_at(slow).open);
        assert_eq!(sim.apiservers[0].watches_by_kind[0], [fast.id]);
        sim.handle_timeout(TimeMs(1100));
        let ended = sim.sink.trace.iter().any(|e| {
            let too_slow = WatchEnd::TooSlow;
            let w = WatcherId(2);
            matches!(e.kind, EventKind::Reflector(ReflectorEvent::WatchEnded { watcher, reason }) if watcher == w && reason == too_slow)
        });
        assert!(ended, "the client learns its watch ended as too slow");
    }
}
