//! The explorer's proof: the gallery's buggy controllers are found broken with no fault written
//! in their scripts, the counterexample is itself a scenario that fails `check`, level-triggered
//! controllers and the fixed twins are never reported broken (gallery and random setups), the
//! candidates are those a real cluster produces, and threads and shards change nothing.

use listwatch_core::explore::{
    Budget, CrashBetweenWrites, Explorer, Fault, Stale, FAULT_TYPES, MAX_SINGLES,
};
use listwatch_core::verdict::{check, Expect};
use listwatch_core::{ControllerEvent, FaultEvent, StoreEvent};
use listwatch_core::{DurationMs, EventKind, Sim, TimeMs, WriteOp};
use listwatch_script::explore::{
    base_counterexample, counterexample, distinct, explorer, merge, run_threads, summary,
};
use listwatch_script::gallery::GALLERY;
use proptest::prelude::*;

fn script(name: &str) -> &'static str {
    GALLERY
        .iter()
        .find(|(n, _)| n.starts_with(name))
        .map(|(_, s)| *s)
        .unwrap_or_else(|| panic!("no {name}"))
}

const BUDGET: Budget = Budget {
    schedules: 5000,
    first_failure: true,
};

/// The counterexample is a scenario that fails `check` (its own expectations, `expect esr`
/// included when only ESR broke).
fn fails_check(cx: &str) -> listwatch_script::Report {
    let report = listwatch_script::run(cx).expect("the counterexample parses");
    assert!(!report.passed(), "the counterexample passes check:\n{cx}");
    report
}

fn find(name: &str) -> (Vec<Fault>, String) {
    find_script(name, script(name))
}

fn find_script(name: &str, src: &str) -> (Vec<Fault>, String) {
    let (mut ex, scenario) = explorer(src, BUDGET).unwrap();
    assert!(ex.base_broken.is_empty(), "{name} passes without faults");
    ex.run();
    let f = ex
        .failures
        .first()
        .unwrap_or_else(|| panic!("{name}: nothing found in {:?}", ex.stats))
        .clone();
    let cx = counterexample(src, &scenario, &f, ex.end_ms());
    fails_check(&cx);
    assert_eq!(f.effects.len(), f.faults.len());
    (f.faults, cx)
}

/// Scripts with only `expect esr` kept: the gallery's count expectations are observations of
/// one run, not properties, and faults change them.
fn only_esr(src: &str) -> String {
    src.lines()
        .filter(|l| !l.starts_with("expect") || l.trim() == "expect esr")
        .map(|l| format!("{l}\n"))
        .collect::<String>()
        + "expect esr\n"
}

/// Explores to exhaustion (or `budget`) and asserts nothing is found.
fn survives_script(name: &str, src: &str, budget: u64) -> Explorer {
    let b = Budget {
        schedules: budget,
        first_failure: true,
    };
    let (mut ex, _) = explorer(src, b).unwrap();
    assert!(ex.base_broken.is_empty(), "{name} fails without faults");
    run_threads(&mut ex, 2, |_| true);
    assert!(
        ex.failures.is_empty(),
        "{name} broke: {:#?}\n{:?}",
        ex.failures,
        ex.stats
    );
    assert_eq!(ex.stats.replay_mismatch, 0);
    assert!(
        ex.stats.tried > 0 && ex.stats.tried == ex.stats.space.min(budget),
        "{:?}",
        ex.stats
    );
    ex
}

/// Deletes of a child made while its parent, in etcd, was neither marked for deletion nor
/// gone: the stale-deletion bug (the new cluster's volume deleted).
fn wrong_deletes(sim: &Sim, parent_kind: &str, child_kind: &str) -> usize {
    let kind = |n: &str| {
        sim.config()
            .kinds
            .iter()
            .position(|k| k.name == n)
            .map(|i| listwatch_core::KindId(i as u16))
    };
    let (pk, ck) = (kind(parent_kind).unwrap(), kind(child_kind).unwrap());
    let mut alive: std::collections::HashMap<String, bool> = Default::default();
    let mut wrong = 0;
    for e in sim.trace() {
        if let EventKind::Store(StoreEvent::Write { op, kind, name, .. }) = e.kind {
            let name = sim.names().resolve(name).to_string();
            if kind == pk {
                alive.insert(
                    name,
                    matches!(
                        op.counted_as(),
                        WriteOp::Create | WriteOp::Update | WriteOp::UpdateStatus
                    ),
                );
            } else if kind == ck && op.deletes() {
                let parent = name.trim_end_matches("-data");
                if alive.get(parent).copied().unwrap_or(false) {
                    wrong += 1;
                }
            }
        }
    }
    wrong
}

/// 19's bug, the new cluster's volume deleted, is among what the explorer finds (the first
/// schedule it finds may be the harmless extra delete explained for 20 below).
#[test]
fn stale_deletion_is_found_and_labelled() {
    let (faults, cx) = find("19-");
    assert!(matches!(faults[..], [Fault::Stale(_)]), "{faults:?}");
    assert!(
        cx.contains("pause b") && cx.contains("restart operator on b"),
        "{cx}"
    );
    assert!(
        cx.contains("listed RabbitmqCluster at RV \"0\" from b, whose cache stood at rv"),
        "{cx}"
    );
    let src = script("19-");
    let (mut ex, scenario) = explorer(
        src,
        Budget {
            schedules: 5000,
            first_failure: false,
        },
    )
    .unwrap();
    ex.run();
    let wrong = distinct(&ex.failures)
        .into_iter()
        .map(|f| counterexample(src, &scenario, f, ex.end_ms()))
        .find(|cx| wrong_deletes(&fails_check(cx).sim, "RabbitmqCluster", "Pvc") > 0);
    assert!(wrong.is_some(), "{:?}", ex.stats);
}

/// The fixed stale-deletion operator (20) never deletes the new cluster's volume. The explorer
/// does find schedules that break 20's `deletes operator Pvc <= 1`: the operator restarted
/// against b, whose cache was paused before its own PVC create, sees the cluster without a PVC
/// and creates one; once b resumes it sees the deletion mark and deletes that PVC, a second
/// delete. That is correct behaviour (the PVC's owner is being deleted), so the count is an
/// observation of the fault-free run, not a property: every schedule found must keep ESR and
/// make no wrong delete, and must break nothing but that count.
#[test]
fn fixed_stale_deletion_makes_no_wrong_delete() {
    let src = script("20-");
    let (mut ex, scenario) = explorer(
        src,
        Budget {
            schedules: 20_000,
            first_failure: false,
        },
    )
    .unwrap();
    run_threads(&mut ex, 2, |_| true);
    assert_eq!(ex.stats.tried, ex.stats.space.min(20_000));
    for f in distinct(&ex.failures) {
        let cx = counterexample(src, &scenario, f, ex.end_ms());
        let report = listwatch_script::run(&cx).unwrap();
        assert!(
            f.broken.iter().all(|b| b.expectation == Some(0)),
            "only the count breaks:\n{cx}"
        );
        assert!(
            check(&report.sim, &Expect::Esr { controller: None }).pass,
            "{cx}"
        );
        assert_eq!(
            wrong_deletes(&report.sim, "RabbitmqCluster", "Pvc"),
            0,
            "{cx}"
        );
    }
    // And with only ESR, nothing at all.
    survives_script("20- (esr)", &only_esr(src), 20_000);
}

#[test]
fn crash_between_writes_is_found_and_its_fix_survives() {
    let (faults, cx) = find("21-");
    assert!(
        matches!(
            faults[..],
            [Fault::CrashBetweenWrites(CrashBetweenWrites {
                after_writes: 1,
                ..
            })]
        ),
        "{faults:?}"
    );
    assert!(
        cx.contains("crash operator after 1 write restart-after 5s"),
        "{cx}"
    );
    assert!(cx.contains("after 1 write (create ConfigMap/"), "{cx}");
    survives_script("22-", script("22-"), 20_000);
}

#[test]
fn missed_state_is_found() {
    let (faults, _) = find("23-");
    assert!(
        matches!(faults[..], [Fault::Unobserved(_)] | [Fault::Hold(_)]),
        "{faults:?}"
    );
}

/// No false alarms: the level-triggered gallery controllers and the fixed twins keep ESR (and
/// 16 and 22 their own expectations) under every schedule the explorer makes, to exhaustion.
/// 12 keeps only ESR: its `deletes == 1` and `exists Pvc` are observations of its timing (a
/// stale restart can delay the finalizer so the user's create at 10s gets 409 and no new
/// cluster, hence no PVC, is wanted; ESR holds there).
#[test]
fn level_triggered_gallery_is_never_reported_broken() {
    let exhaust = |name: &str, src: &str| {
        let ex = survives_script(name, src, 50_000);
        assert!(
            ex.stats.space <= 50_000,
            "{name}: not exhausted: {:?}",
            ex.stats
        );
    };
    for name in ["01-", "09-", "10-", "14-", "17-", "08-"] {
        exhaust(name, &only_esr(script(name)));
    }
    for name in ["16-", "22-"] {
        exhaust(name, script(name));
    }
    exhaust("12- (esr)", &only_esr(script("12-")));
}

/// Every reconcile of the fault-free run that writes twice or more gets a crash between each
/// pair of its writes, and replaying that candidate crashes that very reconcile after exactly
/// that many writes.
#[test]
fn crash_points_fall_between_every_pair_of_writes() {
    for (name, src) in GALLERY {
        let Ok(scenario) = listwatch_script::parse(src) else {
            continue;
        };
        let mut sim = Sim::new(scenario.config.clone()).unwrap();
        sim.run();
        let cands = listwatch_core::explore::candidates(&sim);
        for (i, e) in sim.trace().iter().enumerate() {
            let EventKind::Controller(ControllerEvent::ReconcileStart {
                controller, key, ..
            }) = e.kind
            else {
                continue;
            };
            if sim.config().controllers[controller.index()].anvil {
                continue;
            }
            let writes = sim
                .trace()
                .range(i..)
                .filter(|x| x.cause == i as u32)
                .filter(|x| {
                    matches!(
                        x.kind,
                        EventKind::Store(StoreEvent::Write { .. })
                            | EventKind::Store(StoreEvent::WriteFailed { .. })
                            | EventKind::Store(StoreEvent::NoOpWrite { .. })
                    )
                })
                .count() as u32;
            for k in 1..writes {
                // Armed just before the reconcile starts (or as the controller starts).
                let f = cands
                    .iter()
                    .find(|c| matches!(c, Fault::CrashBetweenWrites(CrashBetweenWrites { controller: c2, at_ms, after_writes })
                        if *c2 == controller && *after_writes == k && (*at_ms + DurationMs(1) == e.time_ms || *at_ms == e.time_ms)))
                    .cloned();
                assert!(
                    f.is_some() || cands.len() as u64 == MAX_SINGLES,
                    "{name}: crash after {k} writes of the reconcile at {} missing",
                    e.time_ms
                );
                let Some(f) = f else { continue };
                let run = listwatch_core::explore::replay(sim.config(), std::slice::from_ref(&f))
                    .unwrap();
                let crash = run
                    .trace()
                    .iter()
                    .position(|x| x.time_ms >= e.time_ms && matches!(x.kind, EventKind::Fault(FaultEvent::Crash { controller: c }) if c == controller))
                    .unwrap_or_else(|| panic!("{name}: {f:?} never crashed"));
                let start = run.trace().range(..crash)
                    .rposition(|x| matches!(x.kind, EventKind::Controller(ControllerEvent::ReconcileStart { controller: c, .. }) if c == controller))
                    .unwrap();
                let EventKind::Controller(ControllerEvent::ReconcileStart { key: k2, .. }) =
                    run.trace()[start].kind
                else {
                    unreachable!()
                };
                let done = run
                    .trace()
                    .range(start..crash)
                    .filter(|x| {
                        x.cause == start as u32
                            && matches!(
                                x.kind,
                                EventKind::Store(StoreEvent::Write { .. })
                                    | EventKind::Store(StoreEvent::WriteFailed { .. })
                                    | EventKind::Store(StoreEvent::NoOpWrite { .. })
                            )
                    })
                    .count() as u32;
                assert_eq!(
                    (run.trace()[start].time_ms, k2, done),
                    (e.time_ms, key, k),
                    "{name}: {f:?} crashed another reconcile"
                );
            }
        }
    }
}

/// 4,000 updates and two apiservers make millions of stale candidates: they are generated
/// lazily (the explorer starts at once), capped, and interleaved over the fault types.
#[test]
fn candidates_are_lazy_capped_and_interleaved() {
    let src = "kind A\nkind B\napiserver a\napiserver b\ncontroller c for A mirror B\n  apiserver a\n\
               at 0s create A x spec 0\nevery 10ms 4000 times from 1s update A x spec {i}\nrun 2m\n";
    let t = std::time::Instant::now();
    let (mut ex, _) = explorer(
        src,
        Budget {
            schedules: 10,
            first_failure: false,
        },
    )
    .unwrap();
    assert!(t.elapsed().as_secs() < 20, "{:?}", t.elapsed());
    assert_eq!(ex.stats.faults, MAX_SINGLES);
    assert!(ex.stats.candidates_by_type[2] > 1_000_000, "{:?}", ex.stats);
    let jobs = ex.take(8);
    let types: Vec<usize> = jobs.iter().map(|j| j.faults[0].type_index()).collect();
    // The mirror writes once per reconcile: no crash candidates; the others take turns.
    assert_eq!(types, vec![1, 2, 3, 4, 1, 2, 3, 4], "{:?}", FAULT_TYPES);
}

#[test]
fn stale_pauses_follow_the_apiservers_lag() {
    // b applies every change 2 s late: pauses sit right after b applied one, not at user writes.
    let src = "kind RabbitmqCluster\nkind Pvc\napiserver a\napiserver b lag 2s\n\
               controller operator for RabbitmqCluster stale-delete Pvc\n  apiserver a\n\
               at 0s create RabbitmqCluster rabbit\nat 5s delete RabbitmqCluster rabbit\n\
               at 10s create RabbitmqCluster rabbit\nrun 2m\nexpect deletes operator Pvc <= 1\n";
    let Ok(scenario) = listwatch_script::parse(src) else {
        return; // no `lag` in the language: nothing to check
    };
    let mut sim = Sim::new(scenario.config.clone()).unwrap();
    sim.run();
    let adds: Vec<TimeMs> = sim
        .trace()
        .iter()
        .filter(
            |e| matches!(e.kind, EventKind::Store(StoreEvent::CacheAdd { apiserver, .. }) if apiserver.index() == 1),
        )
        .map(|e| e.time_ms + DurationMs(1))
        .collect();
    let cands = listwatch_core::explore::candidates(&sim);
    let pauses: Vec<TimeMs> = cands
        .iter()
        .filter_map(|f| match f {
            Fault::Stale(s) => Some(s.pause_ms),
            _ => None,
        })
        .collect();
    assert!(!pauses.is_empty());
    assert!(
        pauses.iter().all(|p| adds.contains(p)),
        "{pauses:?} vs {adds:?}"
    );
    let (_, cx) = {
        let (mut ex, scenario) = explorer(src, BUDGET).unwrap();
        ex.run();
        let f = ex.failures.first().expect("found with lag").clone();
        (f.clone(), counterexample(src, &scenario, &f, ex.end_ms()))
    };
    fails_check(&cx);
}

#[test]
fn esr_only_failure_adds_expect_esr() {
    // 21 without its expectations: only the implicit ESR check can break.
    let src: String = script("21-")
        .lines()
        .filter(|l| !l.starts_with("expect"))
        .map(|l| format!("{l}\n"))
        .collect();
    let (mut ex, scenario) = explorer(&src, BUDGET).unwrap();
    ex.run();
    let f = ex.failures.first().expect("found").clone();
    assert!(f.esr_only());
    let cx = counterexample(&src, &scenario, &f, ex.end_ms());
    assert!(cx.contains("\nexpect esr\n"), "{cx}");
    fails_check(&cx);
}

#[test]
fn a_scenario_failing_without_faults_is_its_own_counterexample() {
    let src: String = script("22-").replace("status == 3", "status == 4");
    let (ex, scenario) = explorer(&src, BUDGET).unwrap();
    assert!(!ex.base_broken.is_empty());
    let cx = base_counterexample(&src, &scenario, &ex.base_broken, ex.end_ms());
    fails_check(&cx);
}

#[test]
fn minimisation_shortens_windows() {
    let (faults, _) = find("19-");
    let Fault::Stale(Stale { for_ms, .. }) = faults[0] else {
        panic!()
    };
    assert!(for_ms < listwatch_core::explore::STALE_FOR_MS, "{faults:?}");
}

#[test]
fn exploring_is_deterministic() {
    let a = find("19-");
    let b = find("19-");
    assert_eq!(a, b);
}

fn all_failures(
    src: &str,
    budget: u64,
    threads: usize,
    shard: Option<(u64, u64)>,
) -> serde_json::Value {
    let (mut ex, scenario) = explorer(
        src,
        Budget {
            schedules: budget,
            first_failure: false,
        },
    )
    .unwrap();
    if let Some((i, n)) = shard {
        ex.set_shard(i, n);
    }
    run_threads(&mut ex, threads, |_| true);
    summary(src, &scenario, &ex, 1.0, false)
}

/// Without the figures that depend on how the search was split (time, and what dedup saved:
/// a shard cannot skip a state another shard reached).
fn split_free(mut v: serde_json::Value) -> serde_json::Value {
    for k in [
        "seconds",
        "schedules_per_second",
        "states",
        "skipped",
        "planned",
        "ineffective",
        "ineffective_at",
    ] {
        v[k] = serde_json::Value::Null;
    }
    for t in FAULT_TYPES {
        v["coverage"][t]["failed"] = serde_json::Value::Null;
    }
    v
}

#[test]
fn threads_give_the_single_threaded_result() {
    for name in ["19-", "21-", "23-", "17-"] {
        let one = all_failures(script(name), 3000, 1, None);
        let two = all_failures(script(name), 3000, 2, None);
        let four = all_failures(script(name), 3000, 4, None);
        // Everything but the clock is the same, dedup's figures included.
        let timeless = |mut v: serde_json::Value| {
            v["seconds"] = serde_json::Value::Null;
            v["schedules_per_second"] = serde_json::Value::Null;
            v
        };
        let (one, two, four) = (timeless(one), timeless(two), timeless(four));
        assert_eq!(one, two, "{name}");
        assert_eq!(one, four, "{name}");
    }
}

#[test]
fn merged_shards_give_the_unsharded_result() {
    for name in ["19-", "21-", "23-", "20-"] {
        let whole = split_free(all_failures(script(name), 3000, 1, None));
        let shards: Vec<serde_json::Value> = (0..3)
            .map(|i| all_failures(script(name), 3000, 2, Some((i, 3))))
            .collect();
        let merged = split_free(merge(&shards).unwrap());
        let idx = |v: &serde_json::Value| -> Vec<(u64, String)> {
            v["failures"]
                .as_array()
                .unwrap()
                .iter()
                .map(|f| {
                    (
                        f["index"].as_u64().unwrap(),
                        f["state"].as_str().unwrap().to_string(),
                    )
                })
                .collect()
        };
        assert_eq!(idx(&merged), idx(&whole), "{name}: failure numbers");
        for (k, v) in whole.as_object().unwrap() {
            assert_eq!(&merged[k], v, "{name}: {k}");
        }
        assert_eq!(merged, whole, "{name}");
    }
    // Shards of different searches are refused.
    let a = all_failures(script("19-"), 3000, 1, Some((0, 2)));
    let b = all_failures(script("21-"), 3000, 1, Some((1, 2)));
    assert!(merge(&[a, b]).is_err());
}

/// Random level-triggered setups are never reported broken: children, mirror and the fixed
/// two-writes controller under random creates, updates and deletes, on one or two apiservers.
fn level_triggered_script(
    behaviour: u8,
    two_apiservers: bool,
    writes: &[(u8, u8, u8, u8)],
) -> String {
    let mut s = String::from("kind Parent\nkind Child\n");
    if two_apiservers {
        s += "apiserver a\napiserver b\n";
    }
    s += match behaviour {
        0 => "controller ctl for Parent children Child\n",
        1 => "controller ctl for Parent mirror Child\n",
        _ => "controller ctl for Parent two-writes Child fixed\n",
    };
    if two_apiservers {
        s += "  apiserver a\n";
    }
    for &(t, op, obj, spec) in writes {
        let at = u64::from(t) * 500;
        let name = format!("p{}", obj % 3);
        let spec = spec % 4;
        s += &match op % 3 {
            0 => format!("at {at}ms create Parent {name} spec {spec}\n"),
            1 => format!("at {at}ms update Parent {name} spec {spec}\n"),
            _ => format!("at {at}ms delete Parent {name}\n"),
        };
    }
    s += "run 30s\nexpect esr\n";
    s
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|c| c.parse().ok()).unwrap_or(24),
        failure_persistence: None,
        ..ProptestConfig::default()
    })]
    #[test]
    fn random_level_triggered_setups_are_never_reported_broken(
        behaviour in 0u8..3,
        two in any::<bool>(),
        writes in proptest::collection::vec((0u8..40, any::<u8>(), any::<u8>(), any::<u8>()), 1..10),
    ) {
        let src = level_triggered_script(behaviour, two, &writes);
        let (mut ex, _) = explorer(&src, Budget { schedules: 1500, first_failure: true }).unwrap();
        // The fault-free run of a level-triggered controller keeps ESR too.
        prop_assert!(ex.base_broken.is_empty(), "{}\n{:?}", src, ex.base_broken);
        run_threads(&mut ex, 2, |_| true);
        prop_assert!(ex.failures.is_empty(), "{}\n{:#?}", src, ex.failures);
    }
}

/// The operators written in the language (gallery 26-37): every buggy one is broken by the
/// explorer, with a counterexample that fails `check` and breaks the expectation that tells its
/// story, and every fixed one survives the whole search with all its expectations (a fault that
/// makes one of the timeline's own writes fail, such as a create refused because the old object
/// is still being deleted, changes the workload and is discarded: `explore::user_failures`).
#[test]
fn own_logic_operators_are_found_and_their_fixes_survive() {
    // (buggy, a fault type that breaks it, the expectation it breaks).
    let buggy = [
        (
            "26-",
            "crash",
            "status.cassandraOperatorProgress == \"Ready\"",
        ),
        ("28-", "", "expect exists Pvc db-data"),
        ("30-", "stale", "expect deletes op Pvc <= 1"),
        ("32-", "crash", "expect esr"),
        ("34-", "", "spec.replsets.size == 5"),
        (
            "36-",
            "crash",
            "expect absent PerconaServerMongoDBBackup rs0-backup",
        ),
    ];
    for (name, fault, broken) in buggy {
        let (faults, cx) = find(name);
        let types: Vec<&str> = faults.iter().map(|f| FAULT_TYPES[f.type_index()]).collect();
        assert!(
            fault.is_empty() || types.contains(&fault),
            "{name}: {types:?}"
        );
        let broke = cx.lines().filter(|l| l.starts_with("# broken: "));
        assert!(broke.clone().any(|l| l.contains(broken)), "{name}:\n{cx}");
    }
    for fixed in ["27-", "29-", "31-", "33-", "35-", "37-"] {
        let ex = survives_script(fixed, script(fixed), 50_000);
        assert!(ex.stats.space <= 50_000, "{fixed}: not exhausted");
    }
}

/// The kubebuilder operator of docs/controller-runtime.md (gallery 54, 55; issue 24): the one
/// that removes its finalizer before the external cleanup is broken by a crash between the two
/// writes, and the one that cleans up first survives the whole search (conditions, a selector
/// list, named finalizers, RequeueAfter and two cluster helpers with their own logic).
#[test]
fn the_kubebuilder_operator_is_found_and_its_fix_survives() {
    let (faults, _) = find("54-");
    assert!(
        faults
            .iter()
            .any(|f| matches!(f, Fault::CrashBetweenWrites(_))),
        "{faults:?}"
    );
    let ex = survives_script("55-", script("55-"), 50_000);
    assert!(ex.stats.space <= 50_000, "55: not exhausted");
}

/// A merged report is input like any other (issue 21): a forged shard count (`1e11` made the
/// merge size a list of 800 GB, `2^62` panicked with "capacity overflow"), a negative or
/// fractional count, a figure past what a search can count, an array longer than the schedules
/// there are, or more JSON values than a merge reads, is refused with an error naming the
/// field and its limit, before anything is sized by it.
#[test]
fn a_forged_shard_summary_is_refused_before_it_sizes_anything() {
    use listwatch_script::explore::{merge_texts, MAX_SUMMARY_VALUES};
    use serde_json::json;
    let real = all_failures(script("19-"), 50, 1, Some((0, 2)));
    // (field, forged value, the error).
    let table = [
        (
            "/shard",
            json!([0, 100_000_000_000u64]),
            "`shard count` is 100000000000, not a whole number from 0 to 1000000",
        ),
        (
            "/shard",
            json!([0, 1u64 << 62]),
            "`shard count` is 4611686018427387904, not a whole number from 0 to 1000000",
        ),
        (
            "/shard",
            json!([0, -2]),
            "`shard count` is -2, not a whole number from 0 to 1000000",
        ),
        (
            "/shard",
            json!([0, 1e11]),
            "`shard count` is 100000000000.0, not a whole number from 0 to 1000000",
        ),
        (
            "/shard",
            json!([0, 2, 7]),
            "`shard` holds 3 items, more than the 2 a search can have",
        ),
        (
            "/tried",
            json!(u64::MAX),
            "`tried` is 18446744073709551615, not a whole number from 0 to 10000000",
        ),
        (
            "/budget",
            json!("many"),
            "`budget` is \"many\", not a number",
        ),
        (
            "/coverage/crash/failed",
            json!(-1),
            "`coverage.crash.failed` is -1, not a whole number from 0 to 10000000",
        ),
        (
            "/failures",
            json!([{"index": 1e300}]),
            "`failures[].index` is 1e+300, not a whole number from 0 to 10000000",
        ),
    ];
    for (field, value, message) in table {
        let mut a = real.clone();
        *a.pointer_mut(field).unwrap() = value;
        let mut b = a.clone();
        b["shard"][0] = json!(1);
        let e = merge(&[a, b]).expect_err(field);
        assert_eq!(e, format!("shard summary 1: {message}"));
    }
    // One summary of shard 0 of 3 (and a duplicate of it): not all the shards.
    let mut three = real.clone();
    three["shard"] = json!([0, 3]);
    assert!(merge(&[three.clone(), three])
        .unwrap_err()
        .starts_with("expected shards 0..3 of 3"));
    // A huge array of tiny values is refused before it is parsed.
    let huge = format!("[{}0]", "0,".repeat(MAX_SUMMARY_VALUES));
    let e = merge_texts(&[huge]).err().unwrap();
    assert_eq!(
        e,
        "shard summary 1 brings the summaries to more than the limit of 8000000 JSON values"
    );
    // Values inside strings are no values: the real summary merges.
    let text = |d: &serde_json::Value| serde_json::to_string(d).unwrap();
    let mut other = real.clone();
    other["shard"][0] = json!(1);
    assert!(merge_texts(&[text(&real), text(&other)]).is_ok());
}

/// An operator that creates its Pvc with the given `on-error`; nothing in the timeline but the
/// Database.
fn swallowing(how: &str) -> String {
    format!(
        "
kind Database
kind Pvc
controller op for Database
  reconcile 200ms
  logic
    get db = Database key
    if db absent
      done
    get data = Pvc key-data
    if data absent
      create Pvc key-data owner db on-error {how}
at 1s create Database a
run 1m
expect esr
"
    )
}

/// docs/explorer.md's promise (issue 24): a refusal at each of the controller's own writes of
/// the fault-free run, armed as its reconcile starts (as the crash points are). A write error
/// swallowed by `on-error continue` ends the reconcile done and nothing asks for another, so
/// the Pvc is never made: found, with the refused write in its label; `ignore-already-exists` returns the refusal, the key is retried,
/// and the whole search finds nothing.
#[test]
fn a_refusal_at_the_controllers_own_write_finds_a_swallowed_error() {
    let (faults, cx) = find_script("continue", &swallowing("continue"));
    assert!(
        matches!(
            faults[..],
            [Fault::Disconnect(listwatch_core::explore::Disconnect {
                after_writes: Some(_),
                ..
            })]
        ),
        "{faults:?}"
    );
    assert!(cx.contains("disconnect op after "), "{cx}");
    assert!(cx.contains("refused (connection refused)"), "{cx}");
    survives_script(
        "ignore-already-exists",
        &swallowing("ignore-already-exists"),
        50_000,
    );
}

/// `explore --controller` naming an Anvil controller is refused: the fault types skip Anvil's
/// controllers, so the search would try nothing and say nothing breaks it. An unknown name is
/// echoed bounded.
#[test]
fn explore_against_an_anvil_controller_is_refused() {
    use listwatch_script::explore::explorer_against;
    let src = script("18-anvil");
    let err = |name: &str| match explorer_against(src, BUDGET, Some(name)) {
        Ok(_) => panic!("accepted --controller {name}"),
        Err(d) => d[0].message.clone(),
    };
    assert!(
        err("anvil").contains("no faults on an Anvil controller"),
        "{}",
        err("anvil")
    );
    let long = "x".repeat(100_000);
    assert!(err(&long).len() < 300, "{}", err(&long).len());
}

/// `explore --controller NAME` (issue 24): faults only against the controller under test, the
/// others are the cluster's helpers and stay fault-free; a name the script does not declare is
/// refused with the nearest one.
#[test]
fn explore_against_one_controller_faults_only_that_one() {
    use listwatch_script::explore::explorer_against;
    let src = swallowing("continue").replace(
        "kind Pvc\n",
        "kind Pvc\nkind Copy\ncontroller helper for Pvc mirror Copy\n",
    );
    let (mut helper, _) = explorer_against(&src, BUDGET, Some("helper")).unwrap();
    helper.run();
    assert!(helper.failures.is_empty(), "{:?}", helper.failures);
    let (mut op, _) = explorer_against(&src, BUDGET, Some("op")).unwrap();
    op.run();
    let f = op.failures.first().expect("the swallowed refusal");
    let op_id = listwatch_core::ControllerId(1);
    assert!(f.faults.iter().all(|x| x.controller() == op_id), "{f:?}");
    let Err(d) = explorer_against(&src, BUDGET, Some("opp")) else {
        panic!("an unknown controller is refused");
    };
    let text = listwatch_script::render(&d[0], "t.lw", &src);
    assert!(text.contains("did you mean `op`?"), "{text}");
}

/// An operator whose first reconcile makes three writes, with the timeline's `extra` lines.
fn three_writes(extra: &str) -> Sim {
    let src = format!(
        "
kind Database
kind Pvc
controller op for Database
  reconcile 300ms
  logic
    get db = Database key
    if db absent
      done
    get a = Pvc key-a
    if a absent
      create Pvc key-a owner db
      create Pvc key-b owner db
      create Pvc key-c owner db
at 1s create Database x
{extra}run 20s
"
    );
    listwatch_script::run(&src)
        .unwrap_or_else(|d| panic!("{d:?}"))
        .sim
}

/// The controller's writes before its first crash, and how many times it restarted.
fn writes_before_crash(sim: &Sim) -> (usize, usize) {
    let me = listwatch_core::Actor::Controller(listwatch_core::ControllerId(0));
    let crash = sim
        .trace()
        .iter()
        .position(|e| matches!(e.kind, EventKind::Fault(FaultEvent::Crash { .. })))
        .expect("a crash");
    let writes = sim
        .trace()
        .range(..crash)
        .filter(|e| e.actor == me && matches!(e.kind, EventKind::Store(StoreEvent::Write { .. })))
        .count();
    let restarts = sim
        .trace()
        .iter()
        .filter(|e| {
            e.time_ms > TimeMs(1000)
                && matches!(e.kind, EventKind::Fault(FaultEvent::Restart { .. }))
        })
        .count();
    (writes, restarts)
}

/// Review leftover (B1): `crash CTL after N writes` kept one slot, so a second one armed
/// before the first fired replaced it (the crash after write 1 became one after write 2, with
/// the second's restart). Each now stays armed with its own restart, as armed disconnects do:
/// the first the reconcile reaches fires, and the others die with the process.
#[test]
fn a_second_armed_crash_does_not_replace_the_first() {
    let one = "at 900ms crash op after 1 write restart-after 2s\n";
    let two = "at 950ms crash op after 2 writes\n";
    assert_eq!(writes_before_crash(&three_writes(one)), (1, 1));
    assert_eq!(writes_before_crash(&three_writes(two)).0, 2);
    assert_eq!(
        writes_before_crash(&three_writes(&format!("{one}{two}"))),
        (1, 1),
        "the first armed still fires, with its restart"
    );
    assert_eq!(
        writes_before_crash(&three_writes(&format!("{two}{one}"))),
        (1, 1),
        "whichever the reconcile reaches first"
    );
}

/// Review leftover (B2): a refusal's effect check looked for any refused write of its
/// controller after it was armed, so a refusal armed at a write the reconcile never makes (the
/// 8th) was credited with another fault's refusal (the 1st) and kept in a failure it did not
/// cause. Each refusal now looks only at its own write.
#[test]
fn a_refusal_is_credited_only_with_its_own_refused_write() {
    use listwatch_core::explore::Disconnect;
    let refusal = |n: u32| Disconnect {
        controller: listwatch_core::ControllerId(0),
        at_ms: TimeMs(900),
        duration_ms: DurationMs(5_000),
        after_writes: Some(n),
    };
    let line = |n: u32| format!("at 900ms disconnect op after {n} writes for 5s\n");
    let both = three_writes(&format!("{}{}", line(0), line(7)));
    assert!(Fault::Disconnect(refusal(0)).had_effect(&both));
    assert!(
        !Fault::Disconnect(refusal(7)).had_effect(&both),
        "no 8th write was refused"
    );
    let second = three_writes(&format!("{}{}", line(1), line(0)));
    assert!(Fault::Disconnect(refusal(1)).had_effect(&second));
    let text = Fault::Disconnect(refusal(1)).effect(&second);
    assert!(text.contains("x-b refused"), "its own write: {text}");
    // Issue 24: a disconnect for a while that refused a write says so in its label, not only
    // that the controller re-watched.
    let cut = Disconnect {
        at_ms: TimeMs(1050),
        after_writes: None,
        ..refusal(0)
    };
    let sim = three_writes("at 1050ms disconnect op for 5s\n");
    let text = Fault::Disconnect(cut).effect(&sim);
    assert!(
        text.contains("its create Pvc/default/x-a was refused (connection refused)"),
        "{text}"
    );
}

/// An operator that needs a Secret another team creates (`at`: when, or never), returning an
/// error until it is there, then creates its Pvc. Nothing else in the timeline but the Database.
fn waiting_for_secret(at: Option<&str>, option: &str) -> String {
    let created = at.map_or(String::new(), |t| {
        format!("at {t} create Secret settings\n")
    });
    format!(
        "
kind Database
kind Pvc
kind Secret
controller op for Database
  reconcile 200ms
  watches Secret none
  {option}
  logic
    get db = Database key
    if db absent
      done
    get settings = Secret \"settings\"
    if settings absent
      error
    get data = Pvc key-data
    if data absent
      create Pvc key-data owner db
at 1s create Database a
{created}"
    )
}

/// ESR is judged once the system has settled, not at a fixed time after the faults. client-go's
/// work queue retries a failing key after 5 ms · 2^failures, capped at 1000 s
/// (`util/workqueue/default_rate_limiters.go`, `ItemExponentialFailureRateLimiter`, as
/// `DefaultControllerRateLimiter` combines it), so the operator's tries come at about 328 s, 655 s
/// and 1310 s: the Secret made at 11m is read at 1310 s, past the explorer's fixed end (the
/// script's end 2 minutes after the Secret, a minute for the faults, 180 s of settling), where
/// ESR was judged and the operator, which converges in Go, was called broken without any fault.
/// Now the run goes on while a retry is pending. A Secret that never comes is a retry loop: each
/// try fails with nothing it reads changed, so it is judged (broken) once one such try has failed.
/// A key that fails at random (`errors 100%`) may succeed on any try: at the settle limit it
/// "did not settle", which is not "broken".
#[test]
fn a_retry_past_the_settle_time_is_waited_for() {
    let ex = survives_script("secret at 11m", &waiting_for_secret(Some("11m"), ""), 2_000);
    assert_eq!(ex.stats.unsettled, 0, "{:?}", ex.stats);
    let (ex, _) = explorer(&waiting_for_secret(None, ""), BUDGET).unwrap();
    let wrong =
        |ex: &Explorer| (ex.base_broken.iter().map(|b| b.found.clone())).collect::<Vec<_>>();
    assert_eq!(
        wrong(&ex),
        ["default/a has not reached its desired state (wrong since 1s)"]
    );
    let (ex, _) = explorer(&waiting_for_secret(None, "errors 100%"), BUDGET).unwrap();
    assert_eq!(
        wrong(&ex),
        ["did not settle by 3961s: default/a has not reached its desired state (wrong since 1s)"]
    );
}

/// client-go's recorder is best-effort (`tools/record/event.go`: the event goes on a queue and
/// another goroutine sends it, dropping it when it cannot): the explorer's refusals and crashes
/// at an operator's Event writes (one before and one after its create) never make a correct
/// operator broken, and the search does try them (the refusal points include the Events').
#[test]
fn a_failed_event_write_never_breaks_a_correct_operator() {
    let src = swallowing("ignore-already-exists")
        .replace("kind Pvc\n", "kind Pvc\nkind Event\n")
        .replace(
            "      create Pvc key-data owner db on-error ignore-already-exists\n",
            "      record db Normal Creating \"making the volume\"\n      create Pvc key-data owner db on-error ignore-already-exists\n      record db Normal Created \"made the volume\"\n",
        );
    assert!(src.contains("record db Normal Created"), "{src}");
    let ex = survives_script("recording", &src, 50_000);
    assert!(ex.stats.tried >= 3, "{:?}", ex.stats);
}

/// A schedule is judged on the run the user wrote: counts, messages and reads are about the run
/// up to its end, so only an end state (final fields, existence, ESR) is worth waiting for past
/// it. In 46 a late disconnect leaves the informer not yet gone and relisted by the end
/// (`expect gone informer == 1`, `expect relists informer Pod == 1`): broken there, though a
/// longer run would count them. The explorer once ran such schedules on until the counts passed
/// and called them fine (47 breaking schedules of 300 instead of 90, an hour of simulated time
/// each).
#[test]
fn counts_are_judged_at_the_end_the_script_gives() {
    let (mut ex, _) = explorer(
        script("46-"),
        Budget {
            schedules: 300,
            first_failure: false,
        },
    )
    .unwrap();
    run_threads(&mut ex, 2, |_| true);
    // 46's expectations 4 and 5: the informer is gone and relists exactly once by the end. A
    // disconnect late in the run leaves it not yet gone at the end; run on, it would be.
    let broken: Vec<Vec<Option<usize>>> = (ex.failures.iter())
        .map(|f| f.broken.iter().map(|b| b.expectation).collect())
        .collect();
    assert!(broken.contains(&vec![Some(4), Some(5)]), "{broken:?}");
}

/// The dedup key holds what `expect saw` judges (verdict.rs `check_saw`): a reconcile of the
/// controller that read that object, by kind and name, with that spec. Were it only the
/// controller and the spec, two forks whose reconciles read different objects with the same
/// spec would share a key, and the second, perhaps breaking, would be skipped as explored.
#[test]
fn the_dedup_key_holds_what_expect_saw_judges() {
    let two_objects = "kind Database\nkind Data\n\
        controller operator for Database wipe-on-zero Data\n\
        at 0s create Database orders spec 1\nat 0s create Database users spec 1\nrun 1m\n\
        expect operator saw Database orders spec 1\n\
        expect operator saw Database carts spec 1\n\
        expect operator never saw Database carts spec 1\n";
    let gallery = GALLERY.iter().filter(|(_, s)| s.contains(" saw "));
    let scripts = std::iter::once(("two objects", two_objects)).chain(gallery.copied());
    let mut saws = 0;
    for (name, src) in scripts {
        let scenario = listwatch_script::parse(src).unwrap();
        let sim = listwatch_core::verdict::run(scenario.config.clone()).unwrap();
        let expects: Vec<Expect> = scenario
            .expectations
            .iter()
            .map(|x| x.expect.clone())
            .collect();
        let past = listwatch_core::explore::past(&sim, &expects);
        for (x, n) in expects.iter().zip(&past) {
            if matches!(x, Expect::Saw { .. }) {
                saws += 1;
                let seen = check(&sim, x).found == "seen";
                assert_eq!(*n > 0, seen, "{name}: {x:?} holds {n} in the key");
            }
        }
    }
    assert!(saws >= 9, "{saws}");
}
