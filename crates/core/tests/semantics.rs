//! The worked examples of semantics.md §10, exactly, message texts included.

use listwatch_core::verdict::{self, Counted, Expect, Scope};
use listwatch_core::*;

/// Kinds: Pod (fixed cache of 3) and Other (filler to move the revision).
fn overflow_config() -> Config {
    let mut c = Config::new(&["Pod", "Other"]);
    c.kinds[0].cache = CacheMode::Fixed { capacity: 3 };
    c.compaction_ms = DurationMs(0);
    let pod = KindId(0);
    let other = KindId(1);
    let mut ctl = Config::controller(
        "ctl",
        pod,
        Behaviour::Children {
            child: other,
            finalizer: false,
        },
    );
    ctl.start_ms = TimeMs(1000);
    c.controllers.push(ctl);
    let at = |at_ms: u64, input| TimedInput {
        at_ms: TimeMs(at_ms),
        input,
    };
    let filler = |n: u32| {
        Input::Write(WriteInput::Create {
            kind: other,
            name: format!("o{n}"),
            spec: 0,
        })
    };
    // Revision 10 with A@5 and B@7.
    c.timeline = vec![
        at(0, filler(2)),
        at(0, filler(3)),
        at(0, filler(4)),
        at(
            0,
            Input::Write(WriteInput::Create {
                kind: pod,
                name: "a".into(),
                spec: 0,
            }),
        ),
        at(0, filler(6)),
        at(
            0,
            Input::Write(WriteInput::Create {
                kind: pod,
                name: "b".into(),
                spec: 0,
            }),
        ),
        at(0, filler(8)),
        at(0, filler(9)),
        at(0, filler(10)),
        // The watch breaks; the re-watch takes 100 ms to arrive, and the writes land meanwhile.
        at(
            1500,
            Input::Fault(FaultInput::Delay {
                controller: ControllerId(0),
                delay_ms: DurationMs(100),
            }),
        ),
        at(
            2000,
            Input::Fault(FaultInput::Disconnect {
                controller: ControllerId(0),
                duration_ms: DurationMs(0),
                after_writes: None,
            }),
        ),
        at(
            2050,
            Input::Write(WriteInput::UpdateStatus {
                kind: pod,
                name: "a".into(),
                status: 1,
            }),
        ),
        at(
            2050,
            Input::Write(WriteInput::UpdateStatus {
                kind: pod,
                name: "b".into(),
                status: 1,
            }),
        ),
        at(
            2050,
            Input::Write(WriteInput::UpdateStatus {
                kind: pod,
                name: "a".into(),
                status: 2,
            }),
        ),
        at(
            2050,
            Input::Write(WriteInput::Create {
                kind: pod,
                name: "c".into(),
                spec: 0,
            }),
        ),
        at(
            2050,
            Input::Write(WriteInput::Delete {
                kind: pod,
                name: "b".into(),
            }),
        ),
    ];
    c.end_ms = TimeMs(10_000);
    c
}

fn lines(sim: &Sim, w: WatcherId) -> Vec<String> {
    sim.trace()
        .iter()
        .filter(|e| {
            e.actor == Actor::Watcher(w)
                || matches!(
                    e.kind,
                    EventKind::Controller(ControllerEvent::ReconcileStart { .. })
                )
        })
        .map(|e| describe(&e.kind, sim))
        .collect()
}

#[test]
fn overflow_example() {
    let sim = verdict::run(overflow_config()).unwrap();
    listwatch_core::invariants::check(&sim).unwrap();
    let pod_watcher = WatcherId(0);
    let l = lines(&sim, pod_watcher);
    let pos = |needle: &str| {
        l.iter()
            .position(|x| x.contains(needle))
            .unwrap_or_else(|| panic!("no `{needle}` in\n{}", l.join("\n")))
    };
    // The first list was at 10.
    assert!(
        l.iter()
            .any(|x| x == "list returned 2 items at rv 10 (from the watch cache)"),
        "{l:#?}"
    );
    let gone = pos("ERROR 410 too old resource version: 10 (12)");
    let relist = pos("list resourceVersion=\"10\"");
    assert!(gone < relist);
    let backoff = sim
        .trace()
        .iter()
        .find_map(|e| match e.kind {
            EventKind::Reflector(ReflectorEvent::Backoff { watcher, delay_ms })
                if watcher == pod_watcher =>
            {
                Some(delay_ms)
            }
            _ => None,
        })
        .unwrap();
    assert!((800..1600).contains(&backoff.ms()), "backoff {backoff}");
    let listed = pos("list returned 2 items at rv 15");
    assert!(listed > relist);
    let after: Vec<&String> = l[listed..].iter().take(4).collect();
    assert!(
        after
            .iter()
            .any(|x| x.starts_with("informer delete (DeletedFinalStateUnknown) default/b rv 7")),
        "{after:?}"
    );
    assert!(
        after
            .iter()
            .any(|x| x.starts_with("informer update default/a rv 13")),
        "{after:?}"
    );
    assert!(
        after
            .iter()
            .any(|x| x.starts_with("informer add default/c rv 14")),
        "{after:?}"
    );
    assert!(l[listed..]
        .iter()
        .any(|x| x.starts_with("watch from rv 15 (timeout ")));
    // Exactly three reconciles after the relist, one per changed key; A@11 and B@12 never seen.
    let relist_ms = sim.trace().iter().find(|e| matches!(e.kind, EventKind::Reflector(ReflectorEvent::ListResult { list_rv: 15, watcher, .. }) if watcher == pod_watcher)).unwrap().time_ms;
    let later = sim
        .trace()
        .iter()
        .filter(|e| {
            e.time_ms >= relist_ms
                && matches!(
                    e.kind,
                    EventKind::Controller(ControllerEvent::ReconcileStart { .. })
                )
        })
        .count();
    assert_eq!(later, 3);
    for spec_rv in [11, 12] {
        assert!(!sim.trace().iter().any(|e| matches!(e.kind, EventKind::Reflector(ReflectorEvent::WatchEvent { rv, .. }) | EventKind::Controller(ControllerEvent::Informer { rv, .. }) if rv == spec_rv)));
    }
    let gone = verdict::check(
        &sim,
        &Expect::Count {
            what: Counted::Gone,
            scope: Scope {
                kind: Some(KindId(0)),
                ..Default::default()
            },
            cmp: verdict::Cmp::Eq,
            value: 1,
            by_ms: None,
        },
    );
    assert!(gone.pass, "{gone:?}");
    let why = verdict::explain(&sim, gone.decided_by.unwrap());
    assert!(
        why[0]
            .1
            .contains("the cache's oldest RV is 13: 4 events evicted since rv 10 was written"),
        "{why:?}"
    );
}

#[test]
fn same_seed_same_trace_and_other_seed_other_jitter() {
    let a = verdict::run(overflow_config()).unwrap();
    let b = verdict::run(overflow_config()).unwrap();
    assert_eq!(a.trace(), b.trace());
    let mut c = overflow_config();
    c.seed = 99;
    let c = verdict::run(c).unwrap();
    assert_ne!(
        a.trace(),
        c.trace(),
        "the backoff jitter and watch timeouts come from the seed"
    );
}

#[test]
fn boundaries_example_through_the_engine() {
    // With no eviction since the cache's list at 10: a watch from 10 works, from 9 is too old.
    let mut c = Config::new(&["Pod"]);
    c.kinds[0].cache = CacheMode::Fixed { capacity: 3 };
    c.compaction_ms = DurationMs(0);
    c.end_ms = TimeMs(1000);
    let sim = Sim::new(c).unwrap();
    let mut cache = sim.apiservers()[0].caches()[0].clone();
    cache.replace(std::iter::empty(), 10);
    assert_eq!(
        cache.check_watch_start(10),
        listwatch_core::cache::WatchStart::Ok
    );
    assert_eq!(
        ApiError::TooOld {
            requested: 9,
            oldest_minus_one: IssuedRv::new(10)
        }
        .message(),
        "too old resource version: 9 (10)"
    );
    assert_eq!(
        cache.check_watch_start(9),
        listwatch_core::cache::WatchStart::TooOld {
            requested: 9,
            oldest_minus_one: 10
        }
    );
}

/// §4: while a cache re-initialises, a relist at an RV (a list without a limit) gets, like a
/// watch, 429 "storage is (re)initializing" (`cacher/delegator.go` `shouldDelegateListOnNotReadyCache`);
/// the reflector backs off and relists, answered by the cache once it is ready.
#[test]
fn a_relist_during_cache_reinitialisation_gets_429_until_the_cache_is_ready() {
    let mut c = Config::new(&["Pod"]);
    c.compaction_ms = DurationMs(0);
    c.controllers.push(Config::controller(
        "ctl",
        KindId(0),
        Behaviour::Mirror { target: KindId(0) },
    ));
    c.controllers[0].behaviour = Behaviour::Children {
        child: KindId(0),
        finalizer: false,
    };
    c.timeline = vec![
        TimedInput {
            at_ms: TimeMs(10_000),
            input: Input::Write(WriteInput::Create {
                kind: KindId(0),
                name: "a".into(),
                spec: 0,
            }),
        },
        // The fresh watch closes within 1 s with no events: a "very short watch", so a relist.
        TimedInput {
            at_ms: TimeMs(500),
            input: Input::Fault(FaultInput::ReinitCache {
                apiserver: ApiserverId(0),
                kind: KindId(0),
                down_ms: DurationMs(5000),
            }),
        },
    ];
    c.end_ms = TimeMs(20_000);
    let sim = verdict::run(c).unwrap();
    listwatch_core::invariants::check(&sim).unwrap();
    let lines: Vec<String> = sim
        .trace()
        .iter()
        .map(|e| describe(&e.kind, &sim))
        .collect();
    let relist = lines
        .iter()
        .position(|l| l.starts_with("list resourceVersion=\"1\""))
        .expect("a relist at an RV");
    assert_eq!(
        lines[relist + 1],
        "list failed: 429 storage is (re)initializing"
    );
    let answered = lines[relist..]
        .iter()
        .find(|l| l.starts_with("list ") && l.contains(" items at rv "))
        .expect("the relist is answered in the end");
    assert!(answered.ends_with("(from the watch cache)"), "{answered}");
    assert!(
        lines[relist..].iter().any(|l| l.starts_with("backing off")),
        "{lines:#?}"
    );
}
