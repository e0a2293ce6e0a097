//! One test per rule where listwatch once disagreed with Kubernetes: a scenario in, the trace's
//! facts out. Each test names the Kubernetes source file that states the rule
//! (`../shared/semantics.md` has them all); docs/fidelity.md lists them beside every other rule.

use listwatch_core::{
    ApiError, Delta, DurationMs, Event, EventKind, QueueAdd, ReconcileResult, Sim, TimeMs, WatchEnd,
};
use listwatch_core::{ControllerEvent, FaultEvent, ProbeEvent, ReflectorEvent, StoreEvent};

/// The reconcile language's rules (issue 24).
#[path = "fidelity/reconcile.rs"]
mod reconcile;

/// Deletion and its propagation policies (semantics audit 2).
#[path = "fidelity/deletion.rs"]
mod deletion;

fn run(src: &str) -> Sim {
    match listwatch_script::run(src) {
        Ok(r) => {
            for (x, o) in &r.outcomes {
                assert!(o.pass, "line {}: `{}` failed: {}", x.line, x.text, o.found);
            }
            r.sim
        }
        Err(d) => panic!("{}", listwatch_script::render(&d[0], "test.lw", src)),
    }
}

fn events<'a>(
    sim: &'a Sim,
    f: impl Fn(&EventKind) -> bool + 'a,
) -> impl Iterator<Item = &'a Event> {
    sim.trace().iter().filter(move |e| f(&e.kind))
}

/// (key, worker, start, end) of every reconcile that ran to an end.
fn reconciles(sim: &Sim) -> Vec<(String, u32, TimeMs, TimeMs, ReconcileResult)> {
    let mut open: Vec<(listwatch_core::NameId, u32, TimeMs)> = vec![];
    let mut out = vec![];
    for e in sim.trace() {
        match e.kind {
            EventKind::Controller(ControllerEvent::ReconcileStart { key, worker, .. }) => {
                open.push((key, worker, e.time_ms))
            }
            EventKind::Controller(ControllerEvent::ReconcileEnd { key, result, .. }) => {
                let i = open
                    .iter()
                    .position(|o| o.0 == key)
                    .expect("end of a started key");
                let (k, w, t) = open.remove(i);
                out.push((sim.names().resolve(k).to_string(), w, t, e.time_ms, result));
            }
            _ => {}
        }
    }
    out
}

/// `client-go/util/workqueue/queue.go` (a key being processed is marked dirty, never handed out
/// twice) and controller-runtime `pkg/internal/controller/controller.go` (each worker runs one
/// reconcile at a time): keys ready at the same instant go to distinct idle workers, a busy
/// worker never starts a second reconcile, and every reconcile takes its configured time.
#[test]
fn workers_take_simultaneous_keys_one_each_and_never_two_at_once() {
    let sim = run("
kind ReplicaSet
kind Pod
controller rs for ReplicaSet children Pod
  workers 2
  reconcile 1s
  start 1s
at 0s create ReplicaSet a spec 0
at 0s create ReplicaSet b spec 0
at 0s create ReplicaSet c spec 0
at 1500ms status ReplicaSet a 1
run 20s
");
    let runs = reconciles(&sim);
    assert!(runs.len() >= 3, "{runs:?}");
    for (key, _, start, end, result) in &runs {
        let took = DurationMs::between(*start, *end);
        assert!(
            took >= DurationMs(1000) || *result == ReconcileResult::Crashed,
            "{key} took {took}, not 1 s"
        );
    }
    // No worker overlaps itself.
    for (i, a) in runs.iter().enumerate() {
        for b in &runs[i + 1..] {
            if a.1 == b.1 {
                assert!(
                    a.3 <= b.2 || b.3 <= a.2,
                    "worker {} ran {a:?} and {b:?} at once",
                    a.1
                );
            }
        }
    }
    // The three initial keys start at once on two workers: a and b now, c when one is free.
    let starts: Vec<_> = runs.iter().take(2).map(|r| (r.1, r.2)).collect();
    assert_eq!(starts, vec![(0, TimeMs(1000)), (1, TimeMs(1000))]);
    // The update at 1.5 s arrives while a runs: marked dirty, not queued.
    let dirty = events(&sim, |k| {
        matches!(
            k,
            EventKind::Controller(ControllerEvent::Enqueue {
                outcome: QueueAdd::MarkedDirty,
                ..
            })
        )
    })
    .any(|e| e.time_ms == TimeMs(1500));
    assert!(dirty, "the add during a's reconcile marks it dirty");
}

/// Reconcile start times of one controller's key.
fn starts_of(sim: &Sim, key: &str) -> Vec<TimeMs> {
    reconciles(sim)
        .into_iter()
        .filter(|r| r.0 == key)
        .map(|r| r.2)
        .collect()
}

/// controller-runtime `pkg/controller/priorityqueue/priorityqueue.go` (`AddWithOpts`: one item
/// per key, the earlier ReadyAt wins) and `pkg/controller/controller.go` (`UsePriorityQueue`
/// defaults to true since v0.23): an event during a `RequeueAfter` wait makes the key ready now
/// and consumes the pending requeue; the classic queue (`client-go/util/workqueue/
/// delaying_queue.go`) keeps the delayed add and runs the key again when it is due.
#[test]
fn priority_queue_is_the_default_and_an_event_consumes_a_pending_requeue() {
    let script = |queue: &str| {
        format!(
            "
kind Secret
kind ConfigMap
controller sync for Secret mirror ConfigMap
  requeue-after 30s
  watches ConfigMap none
  {queue}
at 0s create Secret token spec 1
at 10s update Secret token spec 2
run 35s
"
        )
    };
    let default = starts_of(&run(&script("")), "default/token");
    let priority = starts_of(&run(&script("queue priority")), "default/token");
    let classic = starts_of(&run(&script("queue classic")), "default/token");
    assert_eq!(default, priority, "the priority queue is the default");
    assert_eq!(
        priority,
        [0, 10_000].map(TimeMs),
        "the update consumed the requeue due at 30 s"
    );
    assert_eq!(
        classic,
        [0, 10_000, 30_010].map(TimeMs),
        "the requeue from the first reconcile (done at 10 ms)"
    );
}

/// The first `n` reconciles of a run: (key, start).
fn first_starts(sim: &Sim, n: usize) -> Vec<(String, TimeMs)> {
    reconciles(sim)
        .into_iter()
        .take(n)
        .map(|r| (r.0.trim_start_matches("default/").to_string(), r.2))
        .collect()
}

fn at(key: &str, ms: u64) -> (String, TimeMs) {
    (key.to_string(), TimeMs(ms))
}

/// The first `n` reconciles of a Secret mirror whose reconciles take 1 s, on `queue`, with more
/// controller `options` and a `timeline`.
fn mirror_starts(queue: &str, options: &str, timeline: &str, n: usize) -> Vec<(String, TimeMs)> {
    let src = format!(
        "kind Secret\nkind ConfigMap\ncontroller sync for Secret mirror ConfigMap\n  reconcile 1s\n  \
         watches ConfigMap none\n  queue {queue}\n{options}{timeline}"
    );
    first_starts(&run(&src), n)
}

/// controller-runtime `pkg/controller/priorityqueue/priorityqueue.go` (`lockedAddWithOpts`): a
/// key handed out is no longer among the items, so an event for it while it is reconciled makes
/// a new item whose place (`AddedCounter`) is the event's time, handed out (once the reconcile is
/// done) before keys added later. client-go's classic queue (`util/workqueue/queue.go`) marks it
/// dirty and queues it behind them when the reconcile ends.
#[test]
fn priority_queue_an_event_during_a_reconcile_keeps_the_event_s_place() {
    let timeline = "
at 1s create Secret a spec 1
at 1200ms update Secret a spec 2
at 1500ms create Secret b spec 1
run 10s
";
    let priority = mirror_starts("priority", "", timeline, 3);
    assert_eq!(priority, [at("a", 1000), at("a", 2000), at("b", 3000)]);
    let classic = mirror_starts("classic", "", timeline, 3);
    assert_eq!(classic, [at("a", 1000), at("b", 2000), at("a", 3000)]);
}

/// controller-runtime `pkg/controller/priorityqueue/priorityqueue.go` (`lockedAddWithOpts`): an
/// event for a key waiting on a delay (a `RequeueAfter`) makes the item ready at once and keeps
/// its place (its `AddedCounter` from the delayed add), so it runs before a key added after that
/// add; the classic queue appends it behind every waiting key.
#[test]
fn priority_queue_an_event_for_a_delayed_key_keeps_its_original_place() {
    let timeline = "
at 1s create Secret a spec 1
at 2500ms create Secret b spec 1
at 3s create Secret c spec 1
at 3200ms update Secret a spec 2
run 20s
";
    let requeue = "  requeue-after 10s\n";
    let priority = mirror_starts("priority", requeue, timeline, 4);
    // a's requeue was added at 2 s, before c (3 s): the update at 3.2 s makes it ready there.
    let expected = [at("a", 1000), at("b", 2500), at("a", 3500), at("c", 4500)];
    assert_eq!(priority, expected);
    let classic = mirror_starts("classic", requeue, timeline, 4);
    let expected = [at("a", 1000), at("b", 2500), at("c", 3500), at("a", 4500)];
    assert_eq!(classic, expected);
}

/// The first watch a run sent: when, its timeout, and the bookmarks its watcher got until then.
fn first_watch_bookmarks(sim: &Sim) -> (TimeMs, DurationMs, Vec<TimeMs>) {
    let req = events(sim, |k| {
        matches!(k, EventKind::Reflector(ReflectorEvent::WatchRequest { .. }))
    })
    .next()
    .expect("a watch");
    let EventKind::Reflector(ReflectorEvent::WatchRequest {
        watcher,
        timeout_ms,
        ..
    }) = req.kind
    else {
        unreachable!()
    };
    let deadline = req.time_ms + timeout_ms;
    let bookmarks = events(
        sim,
        move |k| matches!(k, EventKind::Reflector(ReflectorEvent::Bookmark { watcher: w, .. }) if *w == watcher),
    )
    .map(|e| e.time_ms)
    .filter(|&t| t <= deadline)
    .collect();
    (req.time_ms, timeout_ms, bookmarks)
}

/// `apiserver/pkg/storage/cacher/cache_watcher.go` (`nextBookmarkTime`, and bookmarks are sent
/// whenever the cache's RV is above the watch's start RV): a quiet watch gets a bookmark about
/// every minute and one 2 s before its deadline, even when the RV was already sent.
#[test]
fn a_quiet_watch_gets_a_bookmark_every_minute_and_two_seconds_before_its_deadline() {
    let sim = run("
kind Pod
kind Other
controller ctl for Pod children Other
at 5s create Other x
run 11m
");
    let (opened_ms, timeout_ms, bookmarks) = first_watch_bookmarks(&sim);
    let deadline = opened_ms + timeout_ms;
    let mut want: Vec<TimeMs> = (1..)
        .map(|i| opened_ms + DurationMs(60_000) * i)
        .take_while(|&t| t < deadline - DurationMs(2000))
        .collect();
    want.push(deadline - DurationMs(2000));
    assert_eq!(
        bookmarks, want,
        "watch opened at {opened_ms}, deadline {deadline}"
    );
}

/// `apiserver/pkg/storage/cacher/cache_watcher.go`: the initial replay of a watch
/// (`processInterval`) uses blocking sends and is never closed as too slow, however long; only
/// live events dispatched into a full input channel close a slow watcher.
#[test]
fn a_long_initial_replay_over_a_slow_link_is_never_closed_as_too_slow() {
    let sim = run("
kind Pod
kind Other
controller ctl for Pod children Other
  link-delay 100ms
at 10s disconnect ctl for 5s
every 10ms 150 times from 11s create Pod p{i}
run 40s
");
    let replayed = events(&sim, |k| {
        matches!(k, EventKind::Reflector(ReflectorEvent::WatchOpened { .. }))
    })
    .filter_map(|e| match e.kind {
        EventKind::Reflector(ReflectorEvent::WatchOpened { replayed, .. }) => Some(replayed),
        _ => None,
    })
    .max();
    assert!(
        replayed >= Some(150),
        "a re-watch replays the 150 creates: {replayed:?}"
    );
    let too_slow = events(&sim, |k| {
        matches!(
            k,
            EventKind::Reflector(ReflectorEvent::WatchEnded {
                reason: WatchEnd::TooSlow,
                ..
            })
        )
    })
    .count();
    assert_eq!(too_slow, 0, "the replay never closes the watch as too slow");
}

/// Backoff delays of every watcher, with their times.
fn backoffs(sim: &Sim) -> Vec<(TimeMs, DurationMs)> {
    events(sim, |k| {
        matches!(k, EventKind::Reflector(ReflectorEvent::Backoff { .. }))
    })
    .map(|e| match e.kind {
        EventKind::Reflector(ReflectorEvent::Backoff { delay_ms, .. }) => (e.time_ms, delay_ms),
        _ => unreachable!(),
    })
    .collect()
}

/// `client-go/tools/cache/reflector.go` with `apimachinery/pkg/util/wait/backoff.go`
/// (`Backoff.DelayWithReset`): the backoff resets when 2 minutes have passed since its last
/// reset (the reflector's creation counts), even while failures go on, so a 5-minute outage
/// sees 0.8 s again every 2 minutes. The legacy `ExponentialBackoffManager` (kept as an option)
/// reset only after 2 quiet minutes and stays at the 30 s cap.
#[test]
fn the_reflector_backoff_resets_every_two_minutes_even_while_failing() {
    let src = "
kind Pod
kind Other
controller ctl for Pod children Other
at 10s disconnect ctl for 5m
run 6m
";
    let modern = backoffs(&run(src));
    let during = |b: &Vec<(TimeMs, DurationMs)>, from: TimeMs| -> Vec<DurationMs> {
        b.iter()
            .filter(|(t, _)| *t > from && *t < TimeMs(310_000))
            .map(|(_, d)| *d)
            .collect()
    };
    // Long after the outage began, short delays come back.
    assert!(
        during(&modern, TimeMs(140_000))
            .iter()
            .any(|&d| d < DurationMs(1600)),
        "a reset after 2 minutes: {modern:?}"
    );
    assert!(modern.iter().all(|(_, d)| *d < DurationMs(60_000)));
    let mut scenario = listwatch_script::parse(src).expect("parses");
    scenario.config.reflector.backoff_reset_after_quiet = true;
    let legacy = backoffs(&listwatch_script::run_scenario(&scenario).expect("runs").sim);
    assert!(
        during(&legacy, TimeMs(140_000))
            .iter()
            .all(|&d| d >= DurationMs(30_000)),
        "legacy: no reset while failing: {legacy:?}"
    );
}

/// Every reconcile start of a controller after `from_ms`, with the spec it read.
fn specs_read_after(sim: &Sim, from_ms: TimeMs) -> Vec<(TimeMs, Option<i64>)> {
    events(sim, |k| {
        matches!(
            k,
            EventKind::Controller(ControllerEvent::ReconcileStart { .. })
        )
    })
    .filter(|e| e.time_ms >= from_ms)
    .map(|e| match e.kind {
        EventKind::Controller(ControllerEvent::ReconcileStart { found, spec, .. }) => {
            (e.time_ms, found.then_some(spec))
        }
        _ => unreachable!(),
    })
    .collect()
}

/// `apiserver/pkg/storage/cacher/cacher.go` (`waitUntilWatchCacheFreshAndForceAllEvents`) and
/// `client-go/tools/cache/reflector.go` (`watchList`, `isErrorRetriableWithSideEffectsFn`): a
/// streaming list's initial events are a consistent read. Against a paused cache it waits 3 s
/// and gets 504; the reflector marks its last RV unavailable and streams again at RV "" at once,
/// never falling back to a LIST, every 3 s until the cache has caught up (here: resumed), so the
/// restarted controller never syncs on the old world.
#[test]
fn a_streaming_list_that_gets_504_streams_again_until_the_cache_catches_up() {
    let sim = run("
kind Cluster
kind Data
apiserver a
apiserver b
streaming-list on
controller op for Cluster children Data
at 0s create Cluster c spec 1
at 2s pause b
at 3s update Cluster c spec 2
at 5s crash op
at 6s restart op on b
at 19500ms resume b
run 30s
");
    let cluster = |w: &listwatch_core::WatcherId| w.0 == 0;
    let after_restart = |e: &&Event| e.time_ms >= TimeMs(6000);
    let streams: Vec<(TimeMs, String)> = events(
        &sim,
        |k| matches!(k, EventKind::Reflector(ReflectorEvent::WatchListRequest { watcher, .. }) if cluster(watcher)),
    )
    .filter(after_restart)
    .map(|e| match e.kind {
        EventKind::Reflector(ReflectorEvent::WatchListRequest { rv, .. }) => (e.time_ms, rv.param()),
        _ => unreachable!(),
    })
    .collect();
    let at_empty = |ms: u64| (TimeMs(ms), "\"\"".to_string());
    assert_eq!(
        streams,
        [6000, 9000, 12_000, 15_000, 18_000].map(at_empty),
        "a 504 is retried at once with another streaming list at RV \"\""
    );
    let failed = events(&sim, |k| {
        matches!(k, EventKind::Reflector(ReflectorEvent::ListFailed { watcher, error }) if cluster(watcher) && error.code() == 504)
    })
    .filter(after_restart)
    .count();
    assert_eq!(failed, 4);
    assert!(
        !events(&sim, |k| matches!(
            k,
            EventKind::Reflector(ReflectorEvent::ListRequest { .. })
        ))
        .filter(after_restart)
        .any(|_| true),
        "no fallback to a standard LIST"
    );
    let synced = events(
        &sim,
        |k| matches!(k, EventKind::Reflector(ReflectorEvent::InitialEventsEnd { watcher, .. }) if cluster(watcher)),
    )
    .filter(after_restart)
    .map(|e| e.time_ms)
    .next();
    assert_eq!(synced, Some(TimeMs(19_500)), "synced once b caught up");
    let after = specs_read_after(&sim, TimeMs(6000));
    assert!(!after.is_empty());
    assert!(
        after
            .iter()
            .all(|(t, spec)| *t >= TimeMs(19_500) && *spec == Some(2)),
        "reads after the restart: {after:?}"
    );
}

/// `apiserver/pkg/storage/cacher/cacher.go` (`waitUntilFreshAndBlock`, with etcd's progress
/// notifications): a consistent read waits until the cache has seen etcd's current revision,
/// which reaches a lagging apiserver behind every change before it, then answers from the cache.
#[test]
fn a_consistent_read_waits_for_a_lagging_cache_then_answers_from_it() {
    let sim = run("
kind Pod
kind Other
apiserver b lag 2s
streaming-list on
controller ctl for Pod children Other
  start 500ms
at 0s create Pod a
run 20s
");
    let first = events(&sim, |k| {
        matches!(
            k,
            EventKind::Reflector(ReflectorEvent::InitialEventsEnd { .. })
        )
    })
    .next()
    .map(|e| match e.kind {
        EventKind::Reflector(ReflectorEvent::InitialEventsEnd { items, .. }) => (e.time_ms, items),
        _ => unreachable!(),
    });
    assert_eq!(
        first,
        Some((TimeMs(2000), 1)),
        "answered when the cache applied the create (rv 2)"
    );
}

/// `pkg/controller/garbagecollector/garbagecollector.go` (`attemptToDeleteItem`: owners are
/// matched by UID): a child created for an owner that was deleted and recreated under the same
/// name belongs to no living owner and is collected, so the controller converges.
#[test]
fn the_garbage_collector_deletes_a_child_whose_owner_uid_is_gone() {
    let sim = run("
kind ReplicaSet
kind Pod
controller rs for ReplicaSet children Pod
  reconcile 1s
at 0s create ReplicaSet web spec 1
at 100ms delete ReplicaSet web
at 200ms create ReplicaSet web spec 1
run 30s
expect esr
");
    let collected = sim.trace().iter().any(|e| {
        e.actor == listwatch_core::Actor::GarbageCollector
            && matches!(
                e.kind,
                EventKind::Store(StoreEvent::Write {
                    op: listwatch_core::WriteOp::Delete,
                    ..
                })
            )
    });
    assert!(collected, "the stale child was collected");
    let web = sim
        .etcd()
        .objects()
        .values()
        .find(|o| sim.names().resolve(o.name) == "default/web")
        .expect("web exists");
    let children = sim
        .etcd()
        .objects()
        .values()
        .filter(|o| o.owner.is_some_and(|ow| ow.uid == web.uid))
        .count();
    assert_eq!(children, 1, "one child, owned by the living web");
}

/// controller-runtime `pkg/builder/controller.go` (`Owns`) with `pkg/handler/enqueue_owner.go`:
/// operators watch the kinds they create, mapped to the owner, so a change to a child (here
/// another client deleting the mirror) re-triggers the owner's reconcile.
#[test]
fn a_behaviour_watches_its_child_kind_and_a_child_change_retriggers_the_owner() {
    let sim = run("
kind Secret
kind ConfigMap
controller sync for Secret mirror ConfigMap
at 0s create Secret token spec 1
at 5s delete ConfigMap token
run 20s
expect exists ConfigMap token
expect esr
");
    assert!(
        starts_of(&sim, "default/token")
            .iter()
            .any(|&t| t >= TimeMs(5000)),
        "the child's delete re-triggered the owner"
    );
}

/// ESR is judged per controller over what it reconciles: a controller that watches one
/// namespace (a field selector, as `cache.Options.DefaultNamespaces` in controller-runtime)
/// is not blamed for objects it never sees.
#[test]
fn esr_of_a_controller_judges_only_the_namespaces_it_watches() {
    run("
kind Pod
kind Other
controller ctl for Pod children Other
  watches Pod in quiet
at 0s create Pod quiet/a spec 1
at 0s create Pod loud/b spec 1
run 10s
expect esr ctl
expect exists Other quiet/a-0
expect absent Other loud/b-0
");
}

/// `client-go/tools/cache/shared_informer.go` (`minimumResyncPeriod`): a resync period under
/// 1 s is raised to 1 s, so `resync 1ms` cannot spin the run.
#[test]
fn a_resync_period_under_one_second_is_raised_to_one_second() {
    let sim = run("
kind Pod
kind Other
controller ctl for Pod children Other
  resync 1ms
at 0s create Pod a
run 10s
");
    let syncs: Vec<TimeMs> = events(&sim, |k| {
        matches!(
            k,
            EventKind::Controller(ControllerEvent::Informer { delivery, .. })
                if delivery.delta() == Delta::Sync
        )
    })
    .map(|e| e.time_ms)
    .collect();
    assert!(!syncs.is_empty());
    assert!(
        syncs
            .windows(2)
            .all(|w| w[1] == w[0] || DurationMs::between(w[0], w[1]) >= DurationMs(1000)),
        "{syncs:?}"
    );
}

/// Names are DNS subdomains of at most 253 characters
/// (`apimachinery/pkg/api/validation/objectmeta.go`): a controller that grows names stops at a
/// 422, so a configuration the parser would refuse still ends, bounded.
#[test]
fn generated_names_stop_at_the_apiserver_name_limit() {
    let mut scenario = listwatch_script::parse(
        "kind Db\nkind X\ncontroller op for Db two-writes X\nat 0s create Db a spec 1\nrun 1m\n",
    )
    .expect("parses");
    // The configuration the parser refuses: the data child of the primary kind itself.
    let db = listwatch_core::KindId(0);
    scenario.config.controllers[0].behaviour = listwatch_core::Behaviour::TwoWrites {
        child: db,
        fixed: true,
    };
    let sim = listwatch_script::run_scenario(&scenario).expect("runs").sim;
    let longest = sim
        .etcd()
        .objects()
        .values()
        .map(|o| sim.names().resolve(o.name).len())
        .max();
    assert!(longest.is_some_and(|l| l <= 8 + 253), "{longest:?}");
    let invalid = events(&sim, |k| {
        matches!(
            k,
            EventKind::Store(StoreEvent::WriteFailed {
                error: ApiError::NameTooLong,
                ..
            })
        )
    })
    .count();
    assert!(invalid > 0);
}

/// A run cut off by its cap on events has no known end: ESR is not judged as if it held.
#[test]
fn esr_is_not_judged_on_a_run_cut_off_at_the_event_cap() {
    let mut scenario = listwatch_script::parse(
        "kind Pod\nkind Other\ncontroller ctl for Pod children Other\n\
         every 1s 50 times create Pod p{i} spec 1\nexpect esr\n",
    )
    .expect("parses");
    scenario.config.limits.max_events = 100;
    let report = listwatch_script::run_scenario(&scenario).expect("runs");
    assert_eq!(report.sim.stopped(), Some(listwatch_core::Stop::EventCap));
    let (_, esr) = &report.outcomes[0];
    assert!(!esr.pass);
    assert!(esr.found.starts_with("not judged"), "{}", esr.found);
}

/// A run cut off by its cap on events (or a limit) has no known end, so it has not settled:
/// `run_until_settled` says so whether the cap came before settling began or while it ran on
/// (the explorer then reports the schedule unsettled instead of judging a cut-off state).
#[test]
fn a_run_cut_off_at_the_event_cap_has_not_settled() {
    // The controller writes the Pod it reads, for ever: never quiescent, so settling runs on.
    let src = "kind Pod\ncontroller ctl for Pod\n  logic\n    get p = Pod key\n    if p absent\n      done\n    update p status p.status + 1\n    requeue after 1s\n\
               at 1s create Pod p\nrun 10s\n";
    let settles = |max_events: u64| {
        let mut scenario = listwatch_script::parse(src).expect("parses");
        scenario.config.limits.max_events = max_events;
        let limit = scenario.config.end_ms + DurationMs(600_000);
        let mut sim = Sim::new(scenario.config).expect("a valid configuration");
        sim.run();
        let in_run = sim.trace().len() as u64;
        let settled = sim.run_until_settled(limit, |_| false);
        (in_run, sim.stopped(), settled)
    };
    let (in_run, stopped, settled) = settles(1_000_000);
    assert_eq!(stopped, Some(listwatch_core::Stop::End), "ran to the limit");
    assert!(!settled, "never quiescent");
    let (_, stopped, settled) = settles(in_run / 2);
    assert_eq!(
        stopped,
        Some(listwatch_core::Stop::EventCap),
        "cut off in the run"
    );
    assert!(!settled);
    let (_, stopped, settled) = settles(in_run + 20);
    assert_eq!(
        stopped,
        Some(listwatch_core::Stop::EventCap),
        "cut off while settling"
    );
    assert!(!settled);
}

/// `semantics.md` §8c, after Sieve (`sieve-project/sieve`, unobserved state): a watch stream never
/// loses an event; an intermediate state goes unobserved only by delay and collapse. `hold`
/// delivers the held notifications together once a later state arrives, so the reconcile never
/// reads spec 3, and the informer still ends with every event applied.
#[test]
fn a_hold_hides_the_intermediate_state_without_losing_an_event() {
    let sim = run("
kind Deployment
kind Pod
controller ctl for Deployment children Pod
at 0s create Deployment web spec 1
at 2s hold ctl Deployment web
at 2s update Deployment web spec 3
at 4s update Deployment web spec 2
run 30s
expect ctl never saw Deployment web spec 3
expect ctl saw Deployment web spec 2
expect esr
");
    let released = events(
        &sim,
        |k| matches!(k, EventKind::Fault(FaultEvent::HoldReleased { superseded: true, held, .. }) if *held >= 2),
    )
    .count();
    assert_eq!(released, 1);
    let r = &sim.reflectors()[0];
    let truth = sim
        .etcd()
        .objects()
        .values()
        .filter(|o| o.kind == r.kind())
        .count();
    assert_eq!(r.store().len(), truth, "nothing was lost");
}

/// The outcomes of a script's expectations, by line.
fn outcomes(src: &str) -> Vec<(usize, bool, String)> {
    let r = listwatch_script::run(src).unwrap_or_else(|d| panic!("{d:?}"));
    r.outcomes
        .iter()
        .map(|(x, o)| (x.line, o.pass, o.found.clone()))
        .collect()
}

/// Expectations on what the trace says: the exact error text a watcher got and the request it
/// sent, by a time and in a window after another fact (semantics.md §10, "Overflow").
#[test]
fn trace_expectations_pin_texts_requests_and_windows_and_can_fail() {
    let gallery = listwatch_script::gallery::GALLERY
        .iter()
        .find(|(n, _)| n.starts_with("02-"))
        .unwrap()
        .1;
    let base: String = gallery
        .lines()
        .filter(|l| !l.starts_with("expect"))
        .map(|l| format!("{l}\n"))
        .collect();
    let src = format!(
        "{base}expect ctl Pod got \"too old resource version: 10 (12)\"
expect ctl Pod got \"too old resource version: 10 (13)\"
expect ctl Pod sent list resourceVersion=\"10\" between 800ms and 1600ms after got \"too old resource version: 10 (12)\"
expect ctl Pod sent list resourceVersion=\"10\" between 0ms and 500ms after got \"too old resource version: 10 (12)\"
expect ctl Pod sent watch resourceVersion=\"15\" by 4s
expect ctl Pod sent watch resourceVersion=\"15\" by 3s
expect ctl Other got \"too old resource version: 10 (12)\"
"
    );
    let passes: Vec<bool> = outcomes(&src).into_iter().map(|o| o.1).collect();
    assert_eq!(passes, vec![true, false, true, false, true, false, false]);
}

/// Per-controller reflector settings: one controller without bookmarks gets none, the other
/// gets them (`allowWatchBookmarks` is a per-request option in `reflector.go`).
#[test]
fn bookmarks_can_be_turned_off_for_one_controller() {
    let sim = run("
kind Pod
kind Other
controller quiet for Pod children Other
  bookmarks off
controller chatty for Pod children Other
at 5s create Other x
run 3m
expect bookmarks quiet == 0
expect bookmarks chatty >= 4
");
    assert!(!sim.trace().is_empty());
}

/// Deterministic failures: the first N reconciles of each key return an error and back off
/// per item (5 ms, 10 ms: `client-go/util/workqueue/default_rate_limiters.go`).
#[test]
fn fail_first_fails_the_first_reconciles_of_each_key() {
    let sim = run("
kind Secret
kind ConfigMap
controller sync for Secret mirror ConfigMap
  fail-first 2
  watches ConfigMap none
at 0s create Secret a spec 1
run 10s
expect exists ConfigMap a
");
    let results: Vec<ReconcileResult> = reconciles(&sim).into_iter().map(|r| r.4).collect();
    assert!(matches!(
        results[..2],
        [ReconcileResult::Error(_), ReconcileResult::Error(_)]
    ));
    assert_eq!(results[2], ReconcileResult::Done);
    let starts = starts_of(&sim, "default/a");
    assert_eq!(
        DurationMs::between(starts[0], starts[1]),
        DurationMs(10 + 5),
        "a 10 ms reconcile, then 5 ms"
    );
    assert_eq!(
        DurationMs::between(starts[1], starts[2]),
        DurationMs(10 + 10),
        "then 10 ms"
    );
}

/// controller-runtime `pkg/predicate/predicate.go` `GenerationChangedPredicate`: status-only
/// updates (no generation change) do not reach the handler.
#[test]
fn a_generation_changed_predicate_ignores_status_updates() {
    let src = |predicate: &str| {
        format!(
            "
kind Deployment
kind Pod
controller ctl for Deployment children Pod
  watches Deployment self {predicate}
at 0s create Deployment web spec 0
at 5s status Deployment web 1
at 6s status Deployment web 2
at 7s update Deployment web spec 1
run 20s
"
        )
    };
    let all = starts_of(&run(&src("")), "default/web");
    let filtered = starts_of(&run(&src("predicate generation-changed")), "default/web");
    assert!(all.contains(&TimeMs(5000)) && all.contains(&TimeMs(6000)));
    assert!(
        !filtered
            .iter()
            .any(|&t| t == TimeMs(5000) || t == TimeMs(6000)),
        "{filtered:?}"
    );
    assert!(
        filtered.contains(&TimeMs(7000)),
        "a spec change still passes: {filtered:?}"
    );
}

/// An HA load balancer moves a connection to another apiserver: the reflector re-watches there
/// from its last RV without a relist; a watch from an RV the lagging cache has not reached is
/// accepted and waits (`cache_watcher.go`, semantics.md §3), delivering later events once the
/// cache has them.
#[test]
fn a_failover_rewatches_from_the_last_rv_on_the_other_apiserver() {
    let sim = run("
kind Pod
kind Other
apiserver a
apiserver b lag 3s
controller ctl for Pod children Other
at 0s create Pod p1
at 5s create Pod p2
at 5500ms failover ctl to b
at 6s create Pod p3 spec 1
run 20s
expect relists == 0
expect ctl Pod sent watch resourceVersion=\"3\" by 5500ms
expect exists Other p3-0
expect esr
");
    // b's cache stands at rv 2 when the watch from rv 3 arrives: accepted, it waits; rv 3 is
    // not sent again, and p3 (rv 4) arrives once b applied it (6 s + 3 s lag).
    let after: Vec<(TimeMs, u64)> = events(&sim, |k| {
        matches!(k, EventKind::Reflector(ReflectorEvent::WatchEvent { .. }))
    })
    .filter(|e| e.time_ms > TimeMs(5500))
    .filter_map(|e| match e.kind {
        EventKind::Reflector(ReflectorEvent::WatchEvent { rv, .. }) => Some((e.time_ms, rv)),
        _ => None,
    })
    .take(1)
    .collect();
    assert_eq!(after, vec![(TimeMs(9000), 4)]);
}

/// `apiserver/pkg/storage/etcd3/store.go` (`GuaranteedUpdate`): an update that changes nothing
/// writes nothing: no new RV, no watch event, no reconcile.
#[test]
fn a_no_op_update_writes_nothing() {
    let sim = run("
kind Pod
kind Other
controller ctl for Pod children Other
at 0s create Pod a spec 1
at 5s update Pod a spec 1
run 10s
");
    assert!(events(&sim, |k| matches!(
        k,
        EventKind::Store(StoreEvent::NoOpWrite { .. })
    ))
    .any(|e| e.time_ms == TimeMs(5000)));
    assert!(!events(&sim, |k| matches!(
        k,
        EventKind::Reflector(ReflectorEvent::WatchEvent { .. })
    ))
    .any(|e| e.time_ms >= TimeMs(5000)));
    assert!(starts_of(&sim, "default/a")
        .iter()
        .all(|&t| t < TimeMs(5000)));
}

/// `apiserver/pkg/storage/cacher/cacher.go`: while a cache re-initialises a watch gets 429
/// "storage is (re)initializing"; `reflector.go` backs off and re-watches without a list. (The
/// Other watcher, whose last RV is below the cache's new list RV, gets 410 and relists: §4.)
#[test]
fn a_watch_refused_with_429_backs_off_and_rewatches_without_a_list() {
    run("
kind Pod
kind Other
controller ctl for Pod children Other
at 0s create Pod a
at 5s restart-apiserver apiserver for 3s
run 30s
expect ctl Pod got \"storage is (re)initializing\"
expect relists ctl Pod == 0
expect esr
");
}

/// semantics.md §10 "Boundaries" and §2, asked of the apiserver directly with probes
/// (`apiserver/pkg/storage/cacher/watch_cache.go` `GetIntervalLocked`; `etcd3/store.go` for
/// Exact lists): the watch cache holds 13, 14, 15 after an eviction, so a watch from 12 replays
/// three events, from 11 gets 410 `too old resource version: 11 (12)`, from 15 or a future RV
/// opens and waits; an Exact list returns the state at that revision, and once compacted, 410.
#[test]
fn probes_ask_the_apiserver_what_kubernetes_documents() {
    let gallery = listwatch_script::gallery::GALLERY
        .iter()
        .find(|(n, _)| n.starts_with("02-"))
        .unwrap()
        .1;
    let base: String = gallery
        .lines()
        .filter(|l| !l.starts_with("expect") && !l.starts_with("run"))
        .map(|l| format!("{l}\n"))
        .collect();
    let src = format!(
        "{base}at 3s probe watch Pod resourceVersion=\"12\"
at 3s probe watch Pod resourceVersion=\"11\"
at 3s probe watch Pod resourceVersion=\"15\"
at 3s probe watch Pod resourceVersion=\"99\"
at 3s probe list Pod resourceVersion=\"12\" exact
at 3s probe list Pod resourceVersion=\"0\"
at 3s probe list Pod resourceVersion=\"99\"
run 10s
expect probe opened replaying 3
expect probe got \"too old resource version: 11 (12)\"
expect probe opened replaying 0
expect probe listed 2 items at rv 12
expect probe got \"Timeout: Too large resource version: 99, current: 15\"
"
    );
    let r = listwatch_script::run(&src).unwrap_or_else(|d| panic!("{d:?}"));
    for (x, o) in &r.outcomes {
        assert!(o.pass, "line {}: {} found {}", x.line, x.text, o.found);
    }
    let answers: Vec<String> = r
        .sim
        .trace()
        .iter()
        .filter(|e| e.actor == listwatch_core::Actor::Probe)
        .filter(|e| !matches!(e.kind, EventKind::Probe(ProbeEvent::ProbeRequest { .. })))
        .map(|e| listwatch_core::describe(&e.kind, &r.sim))
        .collect();
    assert_eq!(
        answers,
        vec![
            "probe 0: watch from rv 12 open, replaying 3 events",
            "probe 1: ERROR 410 too old resource version: 11 (12)",
            "probe 2: watch from rv 15 open, replaying 0 events",
            "probe 3: watch from rv 99 open, replaying 0 events",
            "probe 4: 2 items at list rv 12 (from etcd)",
            "probe 5: 2 items at list rv 15 (from the watch cache)",
            "probe 6: ERROR 504 Timeout: Too large resource version: 99, current: 15",
        ]
    );
    // Once compacted, an Exact list below the compacted revision gets 410.
    let compacted = outcomes(
        "kind Pod\ncompaction 1m\nat 0s create Pod a\nat 1s create Pod b\n\
         at 3m probe list Pod resourceVersion=\"2\" exact\nrun 4m\n\
         expect probe got \"The resourceVersion for the provided list is too old.\"\n",
    );
    assert!(compacted[0].1, "{compacted:?}");
}

/// A reconcile of the user's own logic records what it read, and a read from a cache that lags
/// etcd is marked stale; "Why?" (`verdict::explain`) explains a write by those reads.
#[test]
fn reads_are_in_the_trace_stale_ones_marked_and_explain_a_write() {
    let gallery = listwatch_script::gallery::GALLERY
        .iter()
        .find(|(n, _)| n.starts_with("30-"))
        .unwrap()
        .1;
    let src = format!(
        "{}\nat 5s pause b\nat 10001ms crash op\nat 10001ms restart op on b\nat 12s resume b\n",
        gallery
            .lines()
            .filter(|l| !l.starts_with("expect"))
            .collect::<Vec<_>>()
            .join("\n")
    );
    let sim = run(&src);
    let stale = events(&sim, |k| {
        matches!(
            k,
            EventKind::Controller(ControllerEvent::ReconcileRead { .. })
        )
    })
    .map(|e| listwatch_core::describe(&e.kind, &sim))
    .find(|t| t.contains("(stale: etcd has"));
    assert!(
        stale.is_some(),
        "a read from the paused cache is marked stale"
    );
    let delete = sim
        .trace()
        .iter()
        .rposition(|e| {
            matches!(
                e.kind,
                EventKind::Store(StoreEvent::Write {
                    op: listwatch_core::WriteOp::Delete,
                    ..
                })
            ) && matches!(e.actor, listwatch_core::Actor::Controller(_))
        })
        .expect("the operator deletes");
    let why = listwatch_core::verdict::explain(&sim, delete as u32);
    assert!(
        why.iter().any(|(_, t)| t.starts_with("  it read")),
        "{why:#?}"
    );
    // The picture's queue holds the running reconcile's reads while it runs, and drops them
    // when it ends.
    let stale_at = sim
        .trace()
        .iter()
        .position(
            |e| matches!(e.kind, EventKind::Controller(ControllerEvent::ReconcileRead { rv, truth_rv, .. }) if rv != truth_rv.get()),
        )
        .unwrap();
    let timeline = listwatch_core::view::Timeline::new(&sim);
    let view = timeline.at(&sim, stale_at + 1);
    assert!(view.queues[0]
        .reads
        .iter()
        .any(|(_, e)| *e as usize == stale_at));
    // And its steps: the writes it decided, none made yet; then one more as each is made.
    let (key, start, planned, done) = view.queues[0].steps[0];
    assert!(planned > 0 && done == 0, "{:?}", view.queues[0].steps);
    let step = |k: &listwatch_core::EventKind| {
        matches!(
            k,
            EventKind::Store(StoreEvent::Write { .. })
                | EventKind::Store(StoreEvent::WriteFailed { .. })
                | EventKind::Store(StoreEvent::NoOpWrite { .. })
        )
    };
    let first_write = (stale_at..sim.trace().len())
        .find(|&i| sim.trace()[i].cause == start && step(&sim.trace()[i].kind))
        .unwrap();
    let later = timeline.at(&sim, first_write + 1);
    let made = later.queues[0]
        .steps
        .iter()
        .find(|s| s.0 == key)
        .map(|s| s.3);
    assert_eq!(made, Some(1));
    let end = (stale_at..sim.trace().len())
        .find(|&i| {
            matches!(
                sim.trace()[i].kind,
                EventKind::Controller(ControllerEvent::ReconcileEnd { .. })
            )
        })
        .unwrap();
    assert!(timeline.at(&sim, end + 1).queues[0].reads.is_empty());
}

/// `apiserver/pkg/storage/errors.go` `NewTooLargeResourceVersionError` builds the 504 with
/// `apimachinery/pkg/api/errors/errors.go` `NewTimeoutError`, which prefixes its message with
/// "Timeout: ": a list at an RV the cache has not reached within 3 s, and a streaming list
/// against a cache that stays behind, read "Timeout: Too large resource version: N, current: M".
#[test]
fn the_too_large_resource_version_error_is_a_timeout_error() {
    let sim = run("
kind Pod
kind Other
apiserver a
apiserver b
streaming-list on
controller ctl for Pod children Other
  apiserver b
  start 3s
at 0s create Pod p
at 1s pause b
at 2s create Pod q
at 2s probe list Pod resourceVersion=\"9\" on a
run 8s
expect probe got \"Timeout: Too large resource version: 9, current: 3\"
expect ctl Pod got \"Timeout: Too large resource version: 3, current: 2\" by 6s
");
    let texts: Vec<String> = events(&sim, |k| {
        matches!(
            k,
            EventKind::Reflector(ReflectorEvent::ListFailed { .. })
                | EventKind::Probe(ProbeEvent::ProbeFailed { .. })
        )
    })
    .map(|e| listwatch_core::describe(&e.kind, &sim))
    .collect();
    assert_eq!(
        texts,
        [
            "probe 0: ERROR 504 Timeout: Too large resource version: 9, current: 3",
            // The controller's two informers (Pod, and Other for its children).
            "list failed: 504 Timeout: Too large resource version: 3, current: 2",
            "list failed: 504 Timeout: Too large resource version: 3, current: 2",
        ]
    );
}

/// `apiserver/pkg/storage/cacher/delegator.go` (`GetList`, `shouldDelegateListOnNotReadyCache`)
/// and `cacher.go` (`GetList`: `NewTooManyRequests("storage is (re)initializing", 1)`): while a
/// cache re-initialises, a list with a `limit` (RV "0" or "" through the pager) is delegated to
/// etcd, but a list without one, as a relist at resourceVersion="N" sends, gets 429;
/// `client-go/tools/cache/reflector.go` returns the error from `list` and `ListAndWatch` runs
/// again after the backoff, until the cache is ready and answers.
#[test]
fn a_relist_at_an_rv_while_the_cache_reinitialises_gets_429_and_backs_off() {
    let sim = run("
kind Pod
kind Other
controller ctl for Pod children Other
controller late for Pod children Other
  start 1s
at 500ms reinit-cache apiserver Pod for 5s
at 10s create Pod a
run 20s
expect ctl Pod got \"storage is (re)initializing\"
expect esr
");
    let ready = TimeMs(5500);
    // ctl's Pod informer is watcher 0: its fresh watch closed within 1 s with no events (a
    // "very short watch"), so it relists at its last RV.
    let pod_lists: Vec<(TimeMs, String)> = sim
        .trace()
        .iter()
        .filter(|e| e.time_ms > TimeMs(500))
        .filter_map(|e| match e.kind {
            EventKind::Reflector(ReflectorEvent::ListRequest { watcher, rv, .. })
                if watcher.0 == 0 =>
            {
                Some((e.time_ms, format!("sent {}", rv.param())))
            }
            EventKind::Reflector(ReflectorEvent::ListFailed { watcher, error })
                if watcher.0 == 0 =>
            {
                Some((e.time_ms, format!("{} {}", error.code(), error.message())))
            }
            EventKind::Reflector(ReflectorEvent::ListResult {
                watcher, from_etcd, ..
            }) if watcher.0 == 0 => Some((e.time_ms, format!("listed, from etcd: {from_etcd}"))),
            EventKind::Reflector(ReflectorEvent::Backoff { watcher, .. }) if watcher.0 == 0 => {
                Some((e.time_ms, "backoff".to_string()))
            }
            _ => None,
        })
        .collect();
    let refused = pod_lists
        .iter()
        .filter(|(_, l)| l == "429 storage is (re)initializing")
        .count();
    assert!(refused >= 2, "{pod_lists:#?}");
    for (i, (t, line)) in pod_lists.iter().enumerate() {
        if line.starts_with("sent") {
            assert_eq!(
                line, "sent \"1\"",
                "a relist at the last RV: {pod_lists:#?}"
            );
            let answer = &pod_lists[i + 1].1;
            if *t < ready {
                assert_eq!(answer, "429 storage is (re)initializing");
                assert_eq!(pod_lists[i + 2].1, "backoff");
            } else {
                assert_eq!(answer, "listed, from etcd: false", "from the ready cache");
            }
        }
    }
    assert!(pod_lists.iter().any(|(t, _)| *t >= ready));
    // `late` starts while the cache is not ready: its first list (RV "0", with the pager's
    // limit) is delegated to etcd.
    let first_late = events(
        &sim,
        |k| matches!(k, EventKind::Reflector(ReflectorEvent::ListResult { watcher, .. }) if watcher.0 == 2),
    )
    .map(|e| match e.kind {
        EventKind::Reflector(ReflectorEvent::ListResult { from_etcd, .. }) => (e.time_ms, from_etcd),
        _ => unreachable!(),
    })
    .next();
    assert_eq!(first_late, Some((TimeMs(1000), true)));
}

/// `apiserver/pkg/storage/cacher/cache_watcher.go` (`processInterval` then `process`): after a
/// watch's initial replay, a bookmark goes out only if its RV is above the last RV the replay
/// sent (or above the watch's start RV when nothing was replayed). A Pod watch that re-opens
/// after a disconnect and replays b's create (the cache's newest RV) gets no bookmark until the
/// RV moves; the Other watch, which replayed nothing, gets one at that same RV.
#[test]
fn a_bookmark_at_the_rv_the_initial_replay_ended_at_is_dropped() {
    let sim = run("
kind Pod
kind Other
controller ctl for Pod children Other
at 0s create Pod a
at 10s disconnect ctl for 5s
at 12s create Pod b
at 200s create Pod c
run 300s
");
    let (pod, other) = (0, 1);
    let reopened = |w: u16| {
        events(
            &sim,
            |k| matches!(k, EventKind::Reflector(ReflectorEvent::WatchOpened { watcher, .. }) if watcher.0 == w),
        )
        .find(|e| e.time_ms > TimeMs(10_000))
        .map(|e| match e.kind {
            EventKind::Reflector(ReflectorEvent::WatchOpened {
                from_rv, replayed, ..
            }) => (e.time_ms, from_rv, replayed),
            _ => unreachable!(),
        })
        .expect("the watch re-opens after the disconnect")
    };
    let bookmarks = |w: u16, after: TimeMs| -> Vec<u64> {
        events(
            &sim,
            |k| matches!(k, EventKind::Reflector(ReflectorEvent::Bookmark { watcher, .. }) if watcher.0 == w),
        )
        .filter(|e| e.time_ms > after)
        .map(|e| match e.kind {
            EventKind::Reflector(ReflectorEvent::Bookmark { rv, .. }) => rv,
            _ => unreachable!(),
        })
        .collect()
    };
    let (opened_ms, from_rv, replayed) = reopened(pod);
    assert_eq!((from_rv, replayed), (2, 1), "b's create (rv 3) is replayed");
    assert_eq!(
        bookmarks(pod, opened_ms),
        [4],
        "none at rv 3 (the replay's end); one once c's create moved the RV"
    );
    let (opened_ms, from_rv, replayed) = reopened(other);
    assert_eq!(
        (from_rv, replayed),
        (1, 0),
        "its list's RV, nothing to replay"
    );
    assert_eq!(bookmarks(other, opened_ms)[0], 3);
}

/// The moment the garbage collector deletes web's child, with the script's cluster settings.
fn collected_at(settings: &str) -> Vec<TimeMs> {
    let sim = run(&format!(
        "kind ReplicaSet\nkind Pod\n{settings}controller rs for ReplicaSet children Pod\n\
         at 0s create ReplicaSet web spec 1\nat 5s delete ReplicaSet web\nrun 30s\n\
         expect absent Pod web-0\n"
    ));
    sim.trace()
        .iter()
        .filter(|e| {
            e.actor == listwatch_core::Actor::GarbageCollector
                && matches!(
                    e.kind,
                    EventKind::Store(StoreEvent::Write {
                        op: listwatch_core::WriteOp::Delete,
                        ..
                    })
                )
        })
        .map(|e| e.time_ms)
        .collect()
}

/// `pkg/controller/garbagecollector/garbagecollector.go`: the collector acts on what its own
/// informers show, so it deletes a dependent some time after its owner went; `gc-delay D` is
/// that lag (`Config::gc_delay_ms`, default 0), and a bad value is a located error.
#[test]
fn the_garbage_collector_s_delay_is_a_cluster_setting() {
    assert_eq!(collected_at(""), [TimeMs(5000)]);
    assert_eq!(collected_at("gc-delay 2s\n"), [TimeMs(7000)]);
    assert_eq!(collected_at("gc-delay 0s\n"), [TimeMs(5000)]);
    for (src, col, says) in [
        ("gc-delay soon\n", 10, "`soon` is not a duration"),
        ("gc-delay 25h\n", 10, "longer than the limit of 24h"),
        ("gc-delay -1s\n", 10, "not a duration"),
        ("gc-delay\n", 9, "expected"),
        ("gc-delay 1s later\n", 13, "later"),
    ] {
        let d = listwatch_script::parse(&format!("kind Pod\n{src}"))
            .err()
            .unwrap_or_else(|| panic!("{src:?} is refused"));
        let text = listwatch_script::render(&d[0], "gc.lw", src);
        assert_eq!((d[0].line, d[0].col), (2, col), "{src:?}: {text}");
        assert!(text.contains(says), "{src:?}: {text}");
    }
}

/// `client-go/tools/cache/reflector.go` (`watch` and `watchList`): `timeoutSeconds` is an
/// integer, `int64(minWatchTimeout.Seconds() * (rand.Float64() + 1.0))`, so every watch and
/// streaming list asks for whole seconds in [300, 600), and the server ends it that many whole
/// seconds after it started (`apiserver/pkg/endpoints/handlers/get.go` uses it as the deadline).
#[test]
fn watch_timeouts_are_whole_seconds() {
    let sim = run("
kind Pod
kind Other
controller plain for Pod children Other
controller streaming for Pod children Other
  streaming-list on
at 0s create Pod a
run 3h
");
    let asked: Vec<DurationMs> = events(&sim, |k| {
        matches!(k, EventKind::Reflector(ReflectorEvent::WatchRequest { .. }))
    })
    .map(|e| match e.kind {
        EventKind::Reflector(ReflectorEvent::WatchRequest { timeout_ms, .. }) => timeout_ms,
        _ => unreachable!(),
    })
    .collect();
    assert!(asked.len() >= 20, "{asked:?}");
    for t in &asked {
        assert!(
            t.ms() % 1000 == 0 && (300_000..600_000).contains(&t.ms()),
            "{asked:?}"
        );
    }
    // Each stream that timed out lasted whole seconds from when it opened.
    let mut opened: Vec<Option<TimeMs>> = vec![None; sim.reflectors().len()];
    let mut lasted = vec![];
    for e in sim.trace() {
        match e.kind {
            EventKind::Reflector(ReflectorEvent::WatchOpened { watcher, .. })
            | EventKind::Reflector(ReflectorEvent::InitialEventsEnd { watcher, .. }) => {
                opened[watcher.index()] = Some(e.time_ms)
            }
            EventKind::Reflector(ReflectorEvent::WatchEnded {
                watcher,
                reason: WatchEnd::Timeout,
            }) => lasted.push(DurationMs::between(
                opened[watcher.index()].expect("opened"),
                e.time_ms,
            )),
            _ => {}
        }
    }
    assert!(lasted.len() >= 20, "{lasted:?}");
    assert!(
        lasted
            .iter()
            .all(|d| d.ms() % 1000 == 0 && (300_000..600_000).contains(&d.ms())),
        "{lasted:?}"
    );
    let streams = events(&sim, |k| {
        matches!(
            k,
            EventKind::Reflector(ReflectorEvent::InitialEventsEnd { .. })
        )
    })
    .count();
    assert!(streams >= 2, "the streaming lists' watches count too");
}

/// The bookmark times of a quiet watch opened at `opened` that ends at `deadline`, by the
/// cacher's rule played tick by tick: the bookmark timer pops once a second; a watch waits in
/// the bucket of the second of its next bookmark time (`nextBookmarkTime`: a minute from now or
/// 2 s before the deadline, none once passed), a bucket already popped meaning the next one.
fn bookmarks_by_the_ticks(opened: TimeMs, deadline: TimeMs) -> Vec<TimeMs> {
    let next = |now: u64| {
        let at = (now + 60_000).min(deadline.ms() - 2000);
        (at > now).then_some(at / 1000)
    };
    let first_tick = opened.ms() / 1000 + 1;
    let mut bucket = next(opened.ms()).map(|b| b.max(first_tick));
    let mut sent = vec![];
    for second in first_tick.. {
        let Some(b) = bucket else { break };
        if b == second {
            sent.push(TimeMs(second * 1000));
            bucket = next(second * 1000).map(|b| b.max(second + 1));
        }
    }
    sent
}

/// `apiserver/pkg/storage/cacher/cacher.go` (`dispatchEvents`: the bookmark timer pops about
/// once a second; `watcherBookmarkTimeBuckets`: a watcher waits in the bucket of the second of
/// its next bookmark time, one already popped meaning the next) with `cache_watcher.go`
/// (`nextBookmarkTime`): bookmarks go out on whole seconds, and when the pre-timeout bookmark
/// falls in the second a minute's bookmark just used, it goes out in the next second. A quiet
/// watch opened at 10.3 s, over many seeds (timeouts), one of them such a collision.
#[test]
fn bookmarks_go_out_on_the_cacher_s_one_second_ticks() {
    let mut collisions = 0;
    for seed in 1..=400 {
        let sim = run(&format!(
            "seed {seed}\nkind Pod\nkind Other\ncontroller ctl for Pod children Other\n  \
             start 10300ms\nat 20s create Other x\nrun 11m\n"
        ));
        let (opened, timeout_ms, sent) = first_watch_bookmarks(&sim);
        let deadline = opened + timeout_ms;
        assert_eq!(opened, TimeMs(10_300));
        assert_eq!(
            sent,
            bookmarks_by_the_ticks(opened, deadline),
            "seed {seed}: timeout {timeout_ms}"
        );
        if (timeout_ms.ms() / 1000 - 2) % 60 == 0 {
            collisions += 1;
            let pre_timeout = deadline - DurationMs(2000);
            assert_eq!(
                sent.last(),
                Some(&TimeMs(pre_timeout.ms() / 1000 * 1000 + 1000)),
                "seed {seed}: the next second"
            );
        }
    }
    assert!(collisions > 0, "no seed made the two bookmarks collide");
}

/// The names in the first reflector's informer store at the end.
fn store_names(sim: &Sim) -> Vec<&str> {
    let store = sim.reflectors()[0].store().iter();
    store.map(|(n, _)| sim.names().resolve(*n)).collect()
}

/// The one-line texts of the trace's events of one actor label (`ctl/Pod`), with their moments.
fn lines_of(sim: &Sim, actor: &str) -> Vec<(u64, String)> {
    sim.trace()
        .iter()
        .filter(|e| listwatch_core::actor_label(e.actor, sim) == actor)
        .map(|e| (e.time_ms.ms(), listwatch_core::describe(&e.kind, sim)))
        .collect()
}

/// client-go `testing/fixture.go` up to 1.35 (kubernetes #87472, client-go PR #95897's example:
/// "Any writes to the client after the informer's initial LIST and before the informer
/// establishing the watcher will be missed"): the list's RV is "", the watch ignores the RV and
/// replays nothing, and it never ends (no timeout, no bookmark), so a Service created while the
/// watch is on its way is lost for good; one created after it is registered arrives.
#[test]
fn the_fake_tracker_of_client_go_1_35_loses_a_write_between_list_and_watch() {
    let sim = run("
kind Service
apiserver test fake 1.35
controller informer for Service
  link-delay 50ms
  logic
    done
at 0s create Service a
at 100ms create Service b
at 1s create Service c
run 15m
expect absent Service x
");
    let watcher = lines_of(&sim, "informer/Service");
    let texts: Vec<&str> = watcher.iter().map(|(_, t)| t.as_str()).collect();
    assert!(
        texts.contains(&"list returned 1 items at rv 0 (from etcd)"),
        "{texts:?}"
    );
    assert!(
        texts.contains(&"watch from rv 0 open, replaying 0 events"),
        "{texts:?}"
    );
    assert!(
        texts.contains(&"ADDED default/c rv 4 (spec 0)"),
        "{texts:?}"
    );
    assert!(
        !texts.iter().any(|t| t.contains("default/b")),
        "b is never delivered: {texts:?}"
    );
    assert!(
        !texts
            .iter()
            .any(|t| t.contains("BOOKMARK") || t.contains("timed out")),
        "the fake's watch never sends a bookmark or times out: {texts:?}"
    );
    let store = store_names(&sim);
    assert_eq!(store, ["default/a", "default/c"]);
}

/// client-go 1.36 `testing/fixture.go` (PRs #135959, #136143): the list carries the tracker's RV
/// and the watch from it replays, as ADDED, every object written after it: the create between
/// list and watch arrives. A delete there is still lost (kubernetes #141528): the deleted
/// Service stays in the informer's store for ever.
#[test]
fn the_fake_tracker_of_client_go_1_36_replays_creates_but_loses_deletes() {
    let sim = run("
kind Service
apiserver test fake 1.36
controller informer for Service
  link-delay 50ms
  logic
    done
at 0s create Service a
at 100ms create Service b
at 100ms delete Service a
run 5m
");
    let texts: Vec<String> = lines_of(&sim, "informer/Service")
        .into_iter()
        .map(|(_, t)| t)
        .collect();
    assert!(
        texts.contains(&"list returned 1 items at rv 2 (from etcd)".to_string()),
        "{texts:?}"
    );
    assert!(
        texts.contains(&"watch from rv 2 open, replaying 1 events".to_string()),
        "{texts:?}"
    );
    assert!(
        texts.contains(&"ADDED default/b rv 3 (spec 0)".to_string()),
        "{texts:?}"
    );
    assert!(!texts.iter().any(|t| t.starts_with("DELETED")), "{texts:?}");
    let store = store_names(&sim);
    assert_eq!(
        store,
        ["default/a", "default/b"],
        "a is gone from etcd, not from the informer"
    );
}

/// client-go `tools/cache/reflector.go` `watchList` (antrea #8123, kubernetes #135895): a
/// streaming list whose initial events end with a BOOKMARK lacking `k8s.io/initial-events-end`
/// never syncs the informer; `initialEventsEndBookmarkTicker` warns every 10 s once 10 s have
/// passed since the last event ("Warning: event bookmark expired"); at the server's timeout the
/// stream is asked for again, never falling back to a LIST.
#[test]
fn a_streaming_list_without_its_end_bookmark_never_syncs_and_warns_every_ten_seconds() {
    let sim = run("
kind Pod
apiserver agg initial-events-end off
streaming-list on
controller ctl for Pod
  logic
    done
at 0s create Pod a
at 25s create Pod b
run 12m
expect reconciles ctl == 0
expect lists ctl Pod >= 2
");
    let lines = lines_of(&sim, "ctl/Pod");
    let warnings: Vec<(u64, &str)> = lines
        .iter()
        .filter(|(_, t)| t.starts_with("Warning: event bookmark expired"))
        .map(|(at, t)| (*at, t.as_str()))
        .collect();
    let first = "Warning: event bookmark expired: ctl/Pod: hasn't received required bookmark event marking the end of initial events stream, received last event 10s ago";
    assert_eq!(warnings[0], (10_000, first));
    // The event at 25 s restarts the count: no warning at 30 s, the next at 40 s.
    assert_eq!(warnings[1].0, 20_000);
    assert_eq!(
        warnings[2],
        (40_000, first.replace("10s ago", "15s ago").as_str())
    );
    assert!(
        lines
            .iter()
            .all(|(_, t)| !t.starts_with("list resourceVersion")),
        "never a LIST"
    );
    let streams = lines
        .iter()
        .filter(|(_, t)| t.contains("sendInitialEvents=true"))
        .count();
    assert!(
        streams >= 2,
        "asked again after the watch's timeout: {streams}"
    );
    assert!(sim.reflectors()[0].store().is_empty(), "never synced");
}

/// apiserver before `ResilientWatchCacheInitialization` (1.31; `cacher.go` `c.ready.wait(ctx)`):
/// a request to a cache that re-initialises waits until it is ready, where 1.31+ answers 429.
#[test]
fn before_1_31_a_watch_waits_for_a_reinitialising_cache_instead_of_429() {
    let script = |version: &str| {
        run(&format!(
            "kubernetes {version}\nkind Pod\nkind Other\ncontroller ctl for Pod mirror Other\n\
             at 0s create Pod a\nat 2s reinit-cache apiserver Pod for 3s\nrun 10s\n"
        ))
    };
    let waited = lines_of(&script("1.30"), "ctl/Pod");
    let refused = lines_of(&script("1.31"), "ctl/Pod");
    let has = |lines: &[(u64, String)], text: &str| lines.iter().any(|(_, t)| t.contains(text));
    assert!(has(&refused, "ERROR 429 storage is (re)initializing"));
    assert!(!has(&waited, "429"), "{waited:?}");
    // The re-watch sent at 2 s is answered at 5 s, when the cache has listed etcd again (at a
    // newer RV than the watch's, so with 410: the reflector then relists).
    let answered = waited
        .iter()
        .find(|(at, t)| *at > 2000 && (t.starts_with("ERROR") || t.contains("open")));
    assert_eq!(
        answered,
        Some(&(
            5000,
            "ERROR 410 too old resource version: 2 (3)".to_string()
        ))
    );
}

/// A hand-written watch loop (kubernetes #129266; kube-rs #219; minikube #2585's EndpointWatcher)
/// that watches again from the RV that got 410 gets 410 again, with the same numbers, every
/// time: a cache's oldest RV only moves forward. client-go's reflector lists instead.
#[test]
fn a_watcher_that_rewatches_after_410_gets_the_same_410_for_ever() {
    let script = |mode: &str| {
        run(&format!(
            "kind Pod cache fixed 3\nkind Other\ncompaction off\n\
             controller ctl for Pod mirror Other\n  on-410 {mode}\n  start 1s\n\
             at 0s create Pod a\nat 1.5s delay ctl 100ms\nat 2s disconnect ctl for 0s\n\
             every 10ms 5 times from 2050ms create Pod b{{i}}\nrun 1m\n"
        ))
    };
    let naive = lines_of(&script("rewatch"), "ctl/Pod");
    let gone: Vec<&str> = naive
        .iter()
        .filter(|(_, t)| t.starts_with("ERROR 410"))
        .map(|(_, t)| t.as_str())
        .collect();
    assert!(gone.len() >= 5, "{gone:?}");
    assert!(
        gone.iter().all(|t| *t == gone[0]),
        "the same RV each time: {gone:?}"
    );
    assert!(!naive
        .iter()
        .any(|(_, t)| t.starts_with("list resourceVersion=\"2\"")));
    let reflector = lines_of(&script("relist"), "ctl/Pod");
    let gone = reflector
        .iter()
        .filter(|(_, t)| t.starts_with("ERROR 410"))
        .count();
    assert_eq!(gone, 1);
}

/// client-go `tools/cache/reflector.go` (`handleWatch`: a watch that lasted under 1 s with no
/// event returns "very short watch", so `ListAndWatch` returns, backs off and lists again) and
/// `apimachinery/pkg/watch/streamwatcher.go` (`receive`: a broken stream, EOF or a probable EOF,
/// is a plain close with no ERROR event): a watch that a disconnect breaks 0.5 s after it opened,
/// with nothing delivered, backs off in [0.8, 1.6) s and relists at its last RV.
#[test]
fn a_very_short_watch_that_a_disconnect_ends_backs_off_and_relists() {
    let sim = run("
kind Pod
kind Other
compaction off
controller ctl for Pod mirror Other
at 0s create Pod a
at 10s disconnect ctl for 0s
at 10500ms disconnect ctl for 0s
run 30s
expect relists ctl Pod == 1
expect relists ctl Other == 1
expect ctl Pod sent list resourceVersion=\"2\" by 12100ms
");
    let delays = backoffs(&sim);
    assert_eq!(delays.len(), 2, "one backoff per watcher: {delays:?}");
    for (t, d) in delays {
        assert_eq!(t, TimeMs(10_500), "the second disconnect: {t}");
        assert!(
            (DurationMs(800)..DurationMs(1600)).contains(&d),
            "the first backoff step: {d}"
        );
    }
}

/// client-go `util/workqueue/delaying_queue.go` (`insert`: "if the entry already exists, update
/// the time only if it would cause the item to be queued sooner"): the classic queue keeps one
/// waiting entry per key, at the earliest time. `RequeueAfter`s that fold into the entry already
/// waiting add nothing, and a rate-limited retry (`AddRateLimited` is an `AddAfter`) moves the
/// entry sooner, so the `RequeueAfter` it replaced never runs.
#[test]
fn the_classic_queue_keeps_one_waiting_entry_per_key_at_the_earliest_time() {
    let requeues = run("
kind Pod
kind Other
compaction off
controller ctl for Pod mirror Other
  queue classic
  requeue-after 30s
at 0s create Pod a
at 10s update Pod a spec 2
run 100s
");
    assert_eq!(
        starts_of(&requeues, "default/a"),
        [0, 10, 10_000, 10_010, 30_010, 60_020, 90_030].map(TimeMs),
        "the adds after at 0.02, 10.01 and 10.02 s fold into the one due at 30.01 s"
    );
    let retry = run("
kind Pod
compaction off
controller ctl for Pod
  queue classic
  logic
    get p = Pod key
    if p.spec == 2 and memory.failed absent
      remember failed = 1
      error
    requeue after 30s
at 0s create Pod a
at 10s update Pod a spec 2
run 45s
");
    assert_eq!(
        starts_of(&retry, "default/a"),
        [0, 10_000, 10_015, 40_025].map(TimeMs),
        "the retry after 5 ms took the place of the requeue due at 30.01 s"
    );
}

/// apiserver `pkg/registry/generic/registry/store.go` (`markAsDeleting`: "if
/// objectMeta.GetDeletionTimestamp() == nil && objectMeta.GetGeneration() > 0", the generation
/// moves): the delete that marks an object with finalizers as deleting moves its generation,
/// once, so controller-runtime's `GenerationChangedPredicate` (`pkg/predicate/predicate.go`)
/// lets the mark through and the controller removes its finalizer.
#[test]
fn marking_an_object_deleting_moves_its_generation_so_a_generation_predicate_sees_it() {
    run("
kind Db
at 0s create Db web spec 1 finalizer example.com/x
at 1s update Db web spec 2
at 2s delete Db web
at 3s delete Db web
run 10s
expect final Db web generation == 3
");
    run("
kind Deployment
kind Pod
controller ctl for Deployment children Pod
  watches Deployment self predicate generation-changed
  finalizer
at 0s create Deployment web spec 1
at 5s delete Deployment web
run 20s
expect absent Deployment web
");
}

/// client-go `tools/cache/reflector.go` (`ListAndWatch` runs `go r.startResync(...)` after each
/// list, with a timer of `resyncPeriod`, and stops it through `cancelCh` when it returns): the
/// resync period counts from the last list, and no resync runs while the reflector backs off
/// before a relist (a 429 backoff is a re-watch inside `ListAndWatch`: the timer runs on). The
/// Pod informer's cache re-initialises at 28.5 s (429, then 410 at 29.5 s, backoff, then a
/// relist at about 31 s); the Other informer keeps its grid from its list at 0 s.
#[test]
fn the_resync_timer_restarts_after_each_list_and_stops_while_relisting() {
    let sim = run("
kind Pod
kind Other
compaction off
controller ctl for Pod mirror Other
  resync 30s
at 0s create Pod a
at 28500ms reinit-cache apiserver Pod
run 2m
expect relists ctl Pod == 1
");
    let times = |actor: &str, what: &str| -> Vec<u64> {
        let lines = lines_of(&sim, actor).into_iter();
        lines
            .filter(|(_, l)| l.contains(what))
            .map(|(t, _)| t)
            .collect()
    };
    let listed = times("ctl/Pod", "list returned");
    assert_eq!(listed.len(), 2, "the list and the relist: {listed:?}");
    let relisted = listed[1];
    assert!(relisted > 30_000, "the relist comes after 30 s: {relisted}");
    assert_eq!(
        times("ctl/Pod", "informer sync"),
        [30_000, 60_000].map(|d| relisted + d),
        "nothing at 30 s (backing off), then every 30 s from the relist"
    );
    assert_eq!(
        times("ctl/Other", "informer sync"),
        [30_000, 60_000, 90_000, 120_000]
    );
}

/// `../shared/semantics.md` §8 (anvil-verifier/anvil, `spec/cluster.rs`
/// `schedule_controller_reconcile` and the shim layer the verified controllers run on): Anvil's
/// controllers requeue 60 s after each reconcile and 10 s after an error, not after client-go's
/// rate-limited 5 ms · 2^n.
#[test]
fn anvil_mode_requeues_ten_seconds_after_an_error() {
    let sim = run("
kind Db
kind Pvc
controller op for Db mirror Pvc
  anvil 60s
  fail-first 2
at 0s create Db a
run 200s
");
    let runs = reconciles(&sim);
    let starts: Vec<TimeMs> = runs.iter().map(|r| r.2).collect();
    assert_eq!(
        starts[..4],
        [60_000, 70_010, 80_020, 120_000].map(TimeMs),
        "two errors 10 s apart, then the 60 s tick: {runs:?}"
    );
}

/// `apiserver/pkg/storage/cacher/cacher.go` and etcd's `mvcc/watchable_store.go`: a paused
/// cache's etcd watch resumes from the cache's revision + 1; once etcd has compacted past it
/// the watch fails (ErrCompacted) and the cacher relists etcd instead of replaying history it
/// can no longer have (semantics.md §4, "when the cache's own etcd watch fails ... the cache
/// relists etcd": its client watches close and a re-watch below the new list RV gets 410).
/// Resumed before any compaction, the same pause replays what it held, with no relist.
#[test]
fn a_paused_cache_resumed_past_compaction_relists_etcd_instead_of_replaying() {
    let scenario = |resume: &str| {
        format!(
            "
kind Pod
kind Copy
apiserver a
apiserver b
compaction 1m
controller ctl for Pod mirror Copy
  apiserver b
at 0s create Pod p
at 10s pause b
every 10s 18 times from 11s status Pod p {{i}}
at {resume} resume b
run 5m
"
        )
    };
    let resets_of_b = |sim: &Sim| {
        events(sim, |k| {
            matches!(k, EventKind::Store(StoreEvent::CacheReset { apiserver, ready: false, .. }) if apiserver.0 == 1)
        })
        .count()
    };
    let late = run(&scenario("200s"));
    assert_eq!(resets_of_b(&late), 1, "b re-initialises its Pod cache once");
    // Nothing held before the re-initialisation reaches b's cache afterwards: the status
    // writes between 11 s and 181 s are not added one by one.
    let is_b = |k: &EventKind, add: bool| match *k {
        EventKind::Store(StoreEvent::CacheReset {
            apiserver,
            ready: false,
            ..
        }) => !add && apiserver.0 == 1,
        EventKind::Store(StoreEvent::CacheAdd { apiserver, .. }) => add && apiserver.0 == 1,
        _ => false,
    };
    let trace = late.trace();
    let reset_at = trace
        .iter()
        .position(|e| is_b(&e.kind, false))
        .expect("a reset");
    let replayed = trace
        .iter()
        .skip(reset_at)
        .filter(|e| is_b(&e.kind, true) && e.time_ms.0 < 201_000)
        .count();
    assert_eq!(replayed, 0, "held history replayed after the relist");
    let early = run(&scenario("50s"));
    assert_eq!(
        resets_of_b(&early),
        0,
        "no compaction before 50 s: the held changes replay"
    );
}

/// Each cache re-initialises on its own (`cacher.go`: one cacher, with its own reflector and
/// ready state, per resource): re-initialising one kind's cache while another's is still
/// listing etcd leaves that one's relist alone, and both are ready again.
#[test]
fn caches_of_two_kinds_reinitialising_at_once_both_become_ready() {
    let sim = run("
kind Pod
kind Other
apiserver a
controller ctl for Pod children Other
at 0s create Pod p
at 5s reinit-cache a Pod for 2s
at 6s reinit-cache a Other for 2s
run 1m
expect relists ctl Pod == 0
expect esr
");
    let readied: Vec<(u16, TimeMs)> = events(&sim, |k| {
        matches!(
            k,
            EventKind::Store(StoreEvent::CacheReset { ready: true, .. })
        )
    })
    .map(|e| match e.kind {
        EventKind::Store(StoreEvent::CacheReset { kind, .. }) => (kind.0, e.time_ms),
        _ => unreachable!("filtered to resets"),
    })
    .collect();
    assert_eq!(readied, vec![(0, TimeMs(7_000)), (1, TimeMs(8_000))]);
}
