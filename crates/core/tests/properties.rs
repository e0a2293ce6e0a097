//! Property tests: random workloads and fault schedules keep every invariant, runs are
//! deterministic, and once faults stop and the system settles, every informer's store equals the
//! apiserver's state.

use listwatch_core::*;
use proptest::prelude::*;

#[derive(Clone, Debug)]
enum Op {
    Create(u8, i64),
    Update(u8, i64),
    Status(u8, i64),
    Delete(u8),
    Disconnect(u64),
    Delay(u64),
    Hold(u8),
    Pause,
    Resume,
    RestartApiserver(u64),
    Crash,
    CrashAfterWrite,
    Restart(bool),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0u8..6, 0i64..4).prop_map(|(n, s)| Op::Create(n, s)),
        4 => (0u8..6, 0i64..4).prop_map(|(n, s)| Op::Update(n, s)),
        2 => (0u8..6, 0i64..4).prop_map(|(n, s)| Op::Status(n, s)),
        3 => (0u8..6).prop_map(Op::Delete),
        1 => (0u64..20_000).prop_map(Op::Disconnect),
        1 => (0u64..500).prop_map(Op::Delay),
        1 => (0u8..6).prop_map(Op::Hold),
        1 => Just(Op::Pause),
        1 => Just(Op::Resume),
        1 => (0u64..5000).prop_map(Op::RestartApiserver),
        1 => Just(Op::Crash),
        1 => Just(Op::CrashAfterWrite),
        1 => any::<bool>().prop_map(Op::Restart),
    ]
}

#[derive(Clone, Debug)]
struct Case {
    seed: u64,
    capacity: Option<u32>,
    children: bool,
    ops: Vec<(u64, Op)>,
}

fn case() -> impl Strategy<Value = Case> {
    (
        any::<u64>(),
        prop_oneof![Just(None), (1u32..8).prop_map(Some)],
        any::<bool>(),
        prop::collection::vec((0u64..60_000, op()), 1..40),
    )
        .prop_map(|(seed, capacity, children, mut ops)| {
            ops.sort_by_key(|o| o.0);
            Case {
                seed,
                capacity,
                children,
                ops,
            }
        })
}

const SETTLED_MS: TimeMs = TimeMs(70_000);

fn config(c: &Case) -> Config {
    let mut cfg = Config::new(&["Parent", "Child"]);
    cfg.seed = c.seed;
    cfg.compaction_ms = DurationMs(30_000);
    cfg.reflector.streaming_list = c.seed.is_multiple_of(3);
    cfg.reflector.page_size = (c.seed % 4) as u32;
    if let Some(cap) = c.capacity {
        cfg.kinds[0].cache = CacheMode::Fixed { capacity: cap };
        cfg.kinds[1].cache = CacheMode::Fixed { capacity: cap };
    }
    cfg.apiservers.push(ApiserverConfig {
        name: "b".into(),
        lag_ms: DurationMs(200),
        ..Default::default()
    });
    let behaviour = if c.children {
        Behaviour::Children {
            child: KindId(1),
            finalizer: c.seed.is_multiple_of(2),
        }
    } else {
        Behaviour::Mirror { target: KindId(1) }
    };
    let mut ctl = Config::controller("ctl", KindId(0), behaviour);
    ctl.watches.push(WatchConfig {
        kind: KindId(1),
        map: KeyMap::Owner,
        namespace: None,
        selector: None,
        fields: None,
        predicate: Predicate::All,
    });
    cfg.controllers.push(ctl);
    let k = KindId(0);
    let c0 = ControllerId(0);
    let name = |n: u8| format!("p{n}");
    for (at_ms, op) in &c.ops {
        let input = match op {
            Op::Create(n, s) => Input::Create {
                kind: k,
                name: name(*n),
                spec: *s,
            },
            Op::Update(n, s) => Input::Update {
                kind: k,
                name: name(*n),
                spec: *s,
            },
            Op::Status(n, s) => Input::UpdateStatus {
                kind: k,
                name: name(*n),
                status: *s,
            },
            Op::Delete(n) => Input::Delete {
                kind: k,
                name: name(*n),
            },
            Op::Disconnect(d) => Input::Disconnect {
                controller: c0,
                duration_ms: DurationMs(*d),
                after_writes: None,
            },
            Op::Delay(d) => Input::Delay {
                controller: c0,
                delay_ms: DurationMs(*d),
            },
            Op::Hold(n) => Input::Hold {
                controller: c0,
                kind: k,
                name: name(*n),
                for_ms: DurationMs(5_000),
            },
            Op::Pause => Input::PauseCache {
                apiserver: ApiserverId(1),
            },
            Op::Resume => Input::ResumeCache {
                apiserver: ApiserverId(1),
            },
            Op::RestartApiserver(d) => Input::RestartApiserver {
                apiserver: ApiserverId(0),
                down_ms: DurationMs(*d),
            },
            Op::Crash => Input::Crash {
                controller: c0,
                after_writes: None,
                restart_after_ms: None,
            },
            Op::CrashAfterWrite => Input::Crash {
                controller: c0,
                after_writes: Some(1),
                restart_after_ms: None,
            },
            Op::Restart(on_b) => Input::Restart {
                controller: c0,
                apiserver: Some(ApiserverId(*on_b as u8)),
            },
        };
        cfg.timeline.push(TimedInput {
            at_ms: TimeMs(*at_ms),
            input,
        });
    }
    // Faults stop: the link heals, b catches up, the controller restarts (which also disarms a
    // pending crash-between-writes).
    for input in [
        Input::Delay {
            controller: c0,
            delay_ms: DurationMs(0),
        },
        Input::ResumeCache {
            apiserver: ApiserverId(1),
        },
        Input::Crash {
            controller: c0,
            after_writes: None,
            restart_after_ms: None,
        },
        Input::Restart {
            controller: c0,
            apiserver: None,
        },
    ] {
        cfg.timeline.push(TimedInput {
            at_ms: SETTLED_MS,
            input,
        });
    }
    cfg.end_ms = SETTLED_MS + DurationMs(600_000);
    cfg
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn invariants_hold_and_runs_are_deterministic(c in case()) {
        let a = verdict::run(config(&c)).unwrap();
        if let Err(e) = invariants::check(&a) {
            prop_assert!(false, "{e}");
        }
        let b = verdict::run(config(&c)).unwrap();
        prop_assert_eq!(a.trace(), b.trace());
        prop_assert_eq!(a.state_hash(), b.state_hash());
    }

    #[test]
    fn informers_converge_once_faults_stop(c in case()) {
        // Holds delay notifications and never lose one (semantics.md §8c): every informer
        // converges on etcd's truth once the faults stop.
        let sim = verdict::run(config(&c)).unwrap();
        prop_assert_eq!(sim.stopped(), Some(Stop::End));
        for r in sim.reflectors() {
            prop_assert_eq!(r.state(), WatcherState::Watching, "watcher of kind {:?} settled watching", r.kind());
            let truth: Vec<(NameId, Rv)> = sim
                .etcd()
                .objects()
                .values()
                .filter(|o| o.kind == r.kind())
                .map(|o| (o.name, o.rv))
                .collect();
            let seen: Vec<(NameId, Rv)> = r.store().values().map(|o| (o.name, o.rv)).collect();
            prop_assert_eq!(seen, truth);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 40, ..ProptestConfig::default() })]

    /// The page runs long scenarios in slices: any slicing gives exactly the run.
    #[test]
    fn a_run_in_slices_is_the_run(c in case(), slice in 1usize..500) {
        let whole = verdict::run(config(&c)).unwrap();
        let mut sliced = Sim::new(config(&c)).unwrap();
        let mut slices = 0;
        while !sliced.run_slice(slice) {
            slices += 1;
            prop_assert!(slices < 1_000_000, "a slice always makes progress");
        }
        prop_assert_eq!(whole.trace(), sliced.trace());
        prop_assert_eq!(whole.now_ms(), sliced.now_ms());
        prop_assert_eq!(whole.stopped(), sliced.stopped());
    }
}
