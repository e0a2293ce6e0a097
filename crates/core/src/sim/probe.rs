//! Probes: raw requests a scenario sends to one apiserver, answered by the same rules a
//! reflector's requests get; the probe does not keep what it is sent, so its answer is an
//! event by the probe (`Actor::Probe`).

use super::apiserver::StepContext;
use super::serve::{ListRequest, RequestScope, Requester, WatchDecision, WatchFrom, WatchRequest};
use super::*;

impl Apiserver {
    /// A probe's request, numbered `probe` by the engine, with its selector (as text, for the
    /// trace, and resolved).
    pub(super) fn probe(
        &mut self,
        st: &mut StepContext,
        (probe, kind): (u32, KindId),
        request: ProbeRequest,
        (text, selector): (Option<NameId>, Option<Arc<crate::object::Selector>>),
        cause: EventId,
    ) {
        let asked = EventKind::Probe(ProbeEvent::ProbeRequest {
            probe,
            apiserver: st.api,
            kind,
            ask: ProbeAsk::new(request, text),
        });
        let id = st.out.emit_by(Actor::Probe, cause, asked);
        // A probe asks about every namespace and keeps no stream to get bookmarks on.
        let scope = RequestScope {
            kind,
            namespace: None,
            selector,
            bookmarks: false,
        };
        self.answer_probe(st, probe, request, scope, id);
    }

    /// The answer to a probe's request, now or (parked, or waiting for the cache) later: the
    /// list or watch decision a reflector's request gets (`serve.rs`), with the probe as the
    /// requester. A probe's list has no `limit`.
    pub(super) fn answer_probe(
        &mut self,
        st: &mut StepContext,
        probe: u32,
        request: ProbeRequest,
        scope: RequestScope,
        id: EventId,
    ) {
        if let Some(tracker) = self.fake {
            return self.fake_probe(st, probe, request, &scope, tracker, id);
        }
        let requester = Requester::Probe { probe };
        let from = match request {
            ProbeRequest::List { rv } => {
                let list = ListRequest {
                    rv,
                    limit: 0,
                    scope,
                };
                return self.list(st, requester, list, id);
            }
            ProbeRequest::Watch { from } => WatchFrom::Rv(from),
            ProbeRequest::WatchMostRecent => WatchFrom::MostRecent,
        };
        let timeout_ms = DurationMs::ZERO;
        let watch = WatchRequest {
            from,
            timeout_ms,
            scope,
        };
        self.watch(st, requester, watch, id);
    }

    pub(super) fn probe_failed(
        &mut self,
        st: &mut StepContext,
        probe: u32,
        error: ApiError,
        cause: EventId,
    ) {
        let failed = EventKind::Probe(ProbeEvent::ProbeFailed { probe, error });
        st.out.emit_by(Actor::Probe, cause, failed);
    }

    pub(super) fn probe_from_cache(
        &mut self,
        st: &mut StepContext,
        probe: u32,
        scope: &RequestScope,
        cause: EventId,
    ) {
        let cache = &self.caches[scope.kind.index()];
        let items = match &scope.selector {
            // `cacher.go` `GetList` filters with the request's predicate.
            Some(sel) => (cache.objects())
                .filter(|o| sel.matches_object(o, st.names))
                .count(),
            None => cache.object_count(),
        };
        let listed = EventKind::Probe(ProbeEvent::ProbeListed {
            probe,
            items: items as u32,
            list_rv: cache.rv(),
            from_etcd: false,
        });
        st.out.emit_by(Actor::Probe, cause, listed);
    }

    /// etcd's answer to a probe: now, or at exactly revision `at`.
    pub(super) fn probe_from_etcd(
        &mut self,
        st: &mut StepContext,
        probe: u32,
        scope: &RequestScope,
        at: Option<Rv>,
        cause: EventId,
    ) {
        let (etcd, kind) = (st.etcd, scope.kind);
        let (items, list_rv) = match at {
            // `etcd3/store.go` `GetList` filters with the request's predicate too. (An Exact
            // list with a selector is refused by the parser: the counts history has no labels.)
            None => match &scope.selector {
                Some(sel) => {
                    let objects = EtcdReader(etcd).kind_objects(kind);
                    let matching = objects.iter().filter(|o| sel.matches_object(o, st.names));
                    (matching.count(), etcd.rev())
                }
                None => (etcd.kind_len(kind), etcd.rev()),
            },
            // `decide_list` sends etcd only revisions it still has, up to now.
            Some(n) => (etcd.objects_at(kind, n).unwrap_or(0), n),
        };
        let listed = EventKind::Probe(ProbeEvent::ProbeListed {
            probe,
            items: items as u32,
            list_rv,
            from_etcd: true,
        });
        st.out.emit_by(Actor::Probe, cause, listed);
    }

    /// The watch decision for a probe: parked, failed, or opened at an RV with the number of
    /// events it would replay first; the probe does not keep the stream.
    pub(super) fn answer_probe_watch(
        &mut self,
        st: &mut StepContext,
        probe: u32,
        request: WatchRequest,
        decision: WatchDecision,
        cause: EventId,
    ) {
        let kind = request.scope.kind;
        let (cache, etcd) = (&self.caches[kind.index()], st.etcd);
        let (from_rv, replayed) = match decision {
            WatchDecision::Park => {
                let requester = Requester::Probe { probe };
                return self.park(Parked::Watch { requester, request });
            }
            WatchDecision::Refuse(error) | WatchDecision::Fail(error) => {
                return self.probe_failed(st, probe, error, cause)
            }
            WatchDecision::Replay { after, from_etcd } => {
                (after, self.replay(etcd, kind, after, from_etcd).len())
            }
            WatchDecision::CurrentState { from_etcd: true } => {
                (request.from.rv_or(etcd.rev()), etcd.kind_len(kind))
            }
            WatchDecision::CurrentState { from_etcd: false } => {
                (request.from.rv_or(cache.rv()), cache.object_count())
            }
        };
        let opened = EventKind::Probe(ProbeEvent::ProbeWatchOpened {
            probe,
            from_rv,
            replayed: replayed as u32,
        });
        st.out.emit_by(Actor::Probe, cause, opened);
    }
}

impl Apiserver {
    /// The fake clientset's tracker answers a probe: a list is every object (at list RV "" up to
    /// client-go 1.35, the counter from 1.36); a watch opens, replaying nothing up to 1.35 and
    /// from 1.36 every object written after the RV asked for.
    fn fake_probe(
        &mut self,
        st: &mut StepContext,
        probe: u32,
        request: ProbeRequest,
        scope: &RequestScope,
        tracker: FakeTracker,
        cause: EventId,
    ) {
        let objects = EtcdReader(st.etcd).kind_objects(scope.kind);
        let counter = match tracker {
            FakeTracker::NoResourceVersion => 0,
            FakeTracker::ReplaysFromResourceVersion => st.etcd.rev(),
        };
        // The generated fake's List filters by the label selector alone
        // (`client-go/gentype/fake.go` `alsoFakeLister.List`: `ExtractFromListOptions`,
        // then `label.Matches`); a field selector is ignored.
        let listed = match &scope.selector {
            Some(sel) => objects.iter().filter(|o| sel.matches(&o.body)).count(),
            None => objects.len(),
        };
        let answer = match (request, tracker) {
            (ProbeRequest::List { .. }, _) => EventKind::Probe(ProbeEvent::ProbeListed {
                probe,
                items: listed as u32,
                list_rv: counter,
                from_etcd: true,
            }),
            (ProbeRequest::Watch { from }, FakeTracker::ReplaysFromResourceVersion) => {
                EventKind::Probe(ProbeEvent::ProbeWatchOpened {
                    probe,
                    from_rv: from,
                    replayed: objects.iter().filter(|o| o.rv > from).count() as u32,
                })
            }
            (ProbeRequest::WatchMostRecent, FakeTracker::ReplaysFromResourceVersion) => {
                EventKind::Probe(ProbeEvent::ProbeWatchOpened {
                    probe,
                    from_rv: 0,
                    replayed: objects.len() as u32,
                })
            }
            (ProbeRequest::Watch { from }, FakeTracker::NoResourceVersion) => {
                EventKind::Probe(ProbeEvent::ProbeWatchOpened {
                    probe,
                    from_rv: from,
                    replayed: 0,
                })
            }
            (ProbeRequest::WatchMostRecent, FakeTracker::NoResourceVersion) => {
                EventKind::Probe(ProbeEvent::ProbeWatchOpened {
                    probe,
                    from_rv: 0,
                    replayed: 0,
                })
            }
        };
        st.out.emit_by(Actor::Probe, cause, answer);
    }
}

#[cfg(test)]
mod tests {
    use super::super::apiserver::tests::{pod, World};
    use super::super::step::testing::Stepped;
    use super::*;
    use crate::config::TimedInput;

    /// What the probe was answered in a step (its events other than its request).
    fn answers(out: &Stepped) -> Vec<EventKind> {
        let answer = |e: &Event| match e.kind {
            EventKind::Probe(ProbeEvent::ProbeRequest { .. }) => None,
            kind => (e.actor == Actor::Probe).then_some(kind),
        };
        out.events.iter().filter_map(answer).collect()
    }

    fn list(rv: ListRv) -> ProbeRequest {
        ProbeRequest::List { rv }
    }

    fn ask(world: &mut World, api: &mut Apiserver, probe: u32, request: ProbeRequest) -> Stepped {
        world.step(api, TimeMs(1000), |a, st| {
            a.probe(st, (probe, KindId(0)), request, (None, None), 0)
        })
    }

    fn listed(probe: u32, items: u32, list_rv: Rv, from_etcd: bool) -> EventKind {
        EventKind::Probe(ProbeEvent::ProbeListed {
            probe,
            items,
            list_rv,
            from_etcd,
        })
    }

    /// semantics.md §2 (`cacher.go`): RV "0" is the cache's answer now; RV "N" waits for the
    /// cache to reach N (`waitUntilFreshAndBlock`), answered by the change that brings it
    /// there, and gets 504 "Too large resource version" after 3 s.
    #[test]
    fn a_probe_list_from_the_cache_answers_now_or_once_it_reaches_the_rv() {
        let mut world = World::new(10);
        let mut api = world.apiserver();
        world.step(&mut api, TimeMs(0), |a, st| {
            for rv in 2..=3 {
                a.change(st, pod(rv), 0);
            }
        });
        let out = ask(&mut world, &mut api, 0, list(ListRv::Any));
        assert_eq!(answers(&out), [listed(0, 2, 3, false)]);
        let out = ask(&mut world, &mut api, 1, list(ListRv::NotOlderThan(4)));
        assert!(answers(&out).is_empty(), "the cache is at 3");
        let deadline = out.timers();
        assert!(matches!(
            deadline[..],
            [(
                TimeMs(4000),
                Action::Server(ServerAction::ListDeadline { .. })
            )]
        ));
        let out = world.step(&mut api, TimeMs(1500), |a, st| {
            a.change(st, pod(4), 1);
        });
        assert_eq!(answers(&out), [listed(1, 3, 4, false)]);
        ask(&mut world, &mut api, 2, list(ListRv::NotOlderThan(9)));
        let out = world.step(&mut api, TimeMs(4000), |a, st| {
            a.read_deadline(st, PROBE_WATCHER, Session(2), 2)
        });
        let too_large = ApiError::TooLargeRv {
            requested: 9,
            current: IssuedRv::new(4),
        };
        let failed = EventKind::Probe(ProbeEvent::ProbeFailed {
            probe: 2,
            error: too_large,
        });
        assert_eq!(answers(&out), [failed]);
    }

    /// semantics.md §2 and §5 (`etcd3/store.go`): an Exact list is etcd's state at exactly that
    /// revision; 410 once it is compacted, 504 beyond etcd's revision.
    #[test]
    fn an_exact_probe_list_is_etcd_s_state_at_that_revision() {
        let mut world = World::new(10);
        let exact = TimedInput {
            at_ms: TimeMs(0),
            input: Input::Probe {
                apiserver: ApiserverId(0),
                kind: KindId(0),
                request: list(ListRv::Exact(1)),
                selector: None,
            },
        };
        world.config.timeline.push(exact);
        world.etcd = Etcd::new(&world.config);
        let pod = |n| Object::fixture(KindId(0), NameId(n), n as u64, 0);
        world.etcd.commit(pod(1), EventType::Added, TimeMs(0));
        world.etcd.commit(pod(2), EventType::Added, TimeMs(0));
        world.etcd.commit(pod(1), EventType::Deleted, TimeMs(0));
        let mut api = world.apiserver();
        let at = |world: &mut World, api: &mut Apiserver, n| {
            answers(&ask(world, api, 0, list(ListRv::Exact(n))))
        };
        assert_eq!(at(&mut world, &mut api, 3), [listed(0, 2, 3, true)]);
        assert_eq!(at(&mut world, &mut api, 4), [listed(0, 1, 4, true)]);
        let too_large = ApiError::TooLargeRv {
            requested: 9,
            current: IssuedRv::new(4),
        };
        let failed = |error| EventKind::Probe(ProbeEvent::ProbeFailed { probe: 0, error });
        assert_eq!(at(&mut world, &mut api, 9), [failed(too_large)]);
        world.etcd.compact_tick();
        assert_eq!(world.etcd.compact_tick(), Some(5));
        let compacted = failed(ApiError::ListCompacted);
        assert_eq!(at(&mut world, &mut api, 4), [compacted]);
        assert_eq!(at(&mut world, &mut api, 5), [listed(0, 1, 5, true)]);
    }

    /// semantics.md §3 and §4: a watch from "0" is never too old (its replay is the current
    /// state), one from before the cache's window gets 410, and while the cache is not ready a
    /// watch gets 429; the probe learns how many events it would have been replayed.
    #[test]
    fn a_probe_watch_gets_what_a_reflector_s_watch_would() {
        let mut world = World::new(3);
        let mut api = world.apiserver();
        world.step(&mut api, TimeMs(0), |a, st| {
            for rv in 2..=7 {
                a.change(st, pod(rv), 0);
            }
        });
        let watch = |from| ProbeRequest::Watch { from };
        let opened = |from_rv, replayed| {
            EventKind::Probe(ProbeEvent::ProbeWatchOpened {
                probe: 0,
                from_rv,
                replayed,
            })
        };
        let failed = |error| EventKind::Probe(ProbeEvent::ProbeFailed { probe: 0, error });
        let mut from = |from| answers(&ask(&mut world, &mut api, 0, watch(from)));
        assert_eq!(from(0), [opened(0, 6)], "the current state: six pods");
        assert_eq!(from(4), [opened(4, 3)]);
        let too_old = ApiError::TooOld {
            requested: 3,
            oldest_minus_one: IssuedRv::new(4),
        };
        assert_eq!(from(3), [failed(too_old)]);
        api.caches[0].reinitialise();
        let refused = answers(&ask(&mut world, &mut api, 0, watch(4)));
        assert_eq!(refused, [failed(ApiError::TooManyRequests)]);
    }

    /// `delegator.go` `shouldDelegateList` and `shouldDelegateListOnNotReadyCache`: while the
    /// cache re-initialises an Exact list still goes to etcd, and a list without a limit (a
    /// probe's) gets 429 "storage is (re)initializing", at any other RV.
    #[test]
    fn a_probe_list_without_a_limit_gets_429_while_the_cache_reinitialises() {
        let mut world = World::new(3);
        let mut api = world.apiserver();
        api.caches[0].reinitialise();
        let refused = EventKind::Probe(ProbeEvent::ProbeFailed {
            probe: 0,
            error: ApiError::TooManyRequests,
        });
        for rv in [ListRv::Any, ListRv::Consistent, ListRv::NotOlderThan(1)] {
            assert_eq!(answers(&ask(&mut world, &mut api, 0, list(rv))), [refused]);
        }
        let exact = answers(&ask(&mut world, &mut api, 0, list(ListRv::Exact(1))));
        assert_eq!(exact, [listed(0, 0, 1, true)]);
    }
}
