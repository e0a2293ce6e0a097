//! One test per version boundary of docs/fidelity.md's table of versions: the same script run
//! under version N-1 and version N (`listwatch_script::compare`, on one clock) differs in
//! exactly the facts that row names, and in nothing else. Each test cites the source of its row.

use listwatch_script::compare::{compare, Versions};

/// The facts that differ between the two runs, as (fact, value under A, value under B).
fn differences(src: &str, versions: &str) -> Vec<(String, String, String)> {
    let versions: Versions = versions.parse().expect("a comparison");
    let c = compare(src, versions).unwrap_or_else(|d| {
        panic!("{}", listwatch_script::render(&d[0], "test.lw", src));
    });
    c.differences
        .into_iter()
        .map(|d| (d.fact, d.a, d.b))
        .collect()
}

fn expect(src: &str, versions: &str, want: &[(&str, &str, &str)]) {
    let got = differences(src, versions);
    let want: Vec<(String, String, String)> = want
        .iter()
        .map(|(f, a, b)| (f.to_string(), a.to_string(), b.to_string()))
        .collect();
    assert_eq!(got, want, "{versions}");
}

/// client-go `tools/cache/reflector.go` sends `AllowWatchBookmarks: true` from kubernetes-1.16.0
/// (absent in 1.15.0); the apiserver's `WatchBookmark` gate is alpha (off) in 1.15 and beta (on)
/// in 1.16 (`pkg/features/kube_features.go`). Without progress notifications (1.21) the Pod
/// cache's RV stays at its own last event, so both watches' bookmarks say rv 2.
#[test]
fn bookmarks_start_in_1_16() {
    let src = "
kind Pod
kind Other
controller ctl for Pod mirror Other
at 0s create Pod a
every 10s 12 times from 5s create Other o{i}
run 3m
";
    expect(
        src,
        "kubernetes=1.15,1.16",
        &[
            ("ctl/Other: bookmarks", "0", "3"),
            ("ctl/Pod: bookmarks", "0", "3"),
        ],
    );
}

/// apiserver `pkg/server/options/etcd.go` `DefaultWatchCacheSize: 100` up to 1.18; 1.19's
/// `pkg/storage/cacher/watch_cache.go` sizes it dynamically (`eventFreshDuration = 75 *
/// time.Second`, `defaultUpperBoundCapacity = 100 * 1024`): 150 fresh events fit.
#[test]
fn watch_caches_grow_from_1_19() {
    let src = "
kind Pod
compaction off
every 10ms 150 times from 1s create Pod p{i}
at 5s probe watch Pod resourceVersion=\"1\"
run 10s
";
    expect(
        src,
        "kubernetes=1.18,1.19",
        &[(
            "probe 0",
            "probe 0: ERROR 410 too old resource version: 1 (51)",
            "probe 0: watch from rv 1 open, replaying 150 events",
        )],
    );
}

/// client-go `tools/cache/reflector.go` (1.19.0, PR #92537): `if isExpiredError(err) ||
/// isTooLargeResourceVersionError(err) { r.setIsLastSyncResourceVersionUnavailable(true)`, so
/// a relist that gets 504 from a stale apiserver lists again at RV "" at once (before 1.31 from
/// etcd); 1.18.0 backs off and asks the same RV until the stale cache catches up. The Other
/// watch, which the failover breaks 0.4 s after the disconnect re-opened it, is a very short
/// watch (`handleWatch`): it relists at RV "9" too, and both versions' rules show on it.
#[test]
fn a_504_relists_consistent_from_client_go_1_19() {
    let src = "
kind Pod cache fixed 3
kind Other
apiserver a
apiserver b
compaction off
controller ctl for Pod mirror Other
  start 1s
at 0s create Pod a
at 1.5s pause b
every 10ms 3 times from 2s create Pod early{i}
at 2.5s delay ctl 100ms
at 3s disconnect ctl for 0s
every 10ms 5 times from 3050ms create Pod burst{i}
at 3.5s failover ctl to b
at 40s resume b
run 1m
";
    expect(
        src,
        "kubernetes=1.18,1.19",
        &[
            ("ctl/Other: lists", "6", "3"),
            (
                "ctl/Other: lists answered 504 (Timeout: Too large resource version)",
                "4",
                "1",
            ),
            ("ctl/Other: lists answered from the watch cache", "2", "1"),
            ("ctl/Other: relists", "5", "2"),
            ("ctl/Pod: lists", "6", "3"),
            (
                "ctl/Pod: lists answered 504 (Timeout: Too large resource version)",
                "4",
                "1",
            ),
            ("ctl/Pod: lists answered from the watch cache", "2", "1"),
            ("ctl/Pod: relists", "5", "2"),
            (
                "ESR",
                "holds (stable since 56.720s)",
                "holds (stable since 7.720s)",
            ),
            ("ctl/Other: lists answered from etcd", "0", "1"),
            ("ctl/Pod: lists answered from etcd", "0", "1"),
        ],
    );
}

/// apiserver `EfficientWatchResumption` (KEP-1904, `pkg/features/kube_features.go`): alpha
/// 1.20, beta (on) 1.21. Before it a quiet kind's cache keeps the RV of its own last event, so
/// its list RV and its bookmarks stay behind etcd.
#[test]
fn progress_notifications_move_quiet_caches_from_1_21() {
    let src = "
kind Secret
kind Pod
controller ctl for Secret
  watches Pod none
  logic
    done
at 0s create Secret s
every 1s 100 times from 1s create Pod p{i}
at 30s probe list Secret resourceVersion=\"0\"
run 3m
";
    expect(
        src,
        "kubernetes=1.20,1.21",
        &[
            ("ctl/Secret: last RV at the end", "rv 2", "rv 102"),
            (
                "probe 0",
                "probe 0: 1 items at list rv 2 (from the watch cache)",
                "probe 0: 1 items at list rv 32 (from the watch cache)",
            ),
        ],
    );
}

/// apiserver `pkg/storage/cacher/cacher.go` (commit 13a815b7c, first in 1.30.0): a watch
/// without a resourceVersion is served by the cache, like RV "0" (`getWatchCacheResourceVersion`,
/// "legacy case"), unless `WatchFromStorageWithoutResourceVersion`; before, by etcd
/// (`return c.storage.Watch(ctx, key, opts)`), which a paused cache cannot make stale.
#[test]
fn an_rv_empty_watch_comes_from_the_cache_from_1_30() {
    let src = "
kind Pod
at 0s create Pod a
at 1s pause apiserver
at 2s create Pod b
at 3s probe watch Pod resourceVersion=\"\"
run 5s
";
    expect(
        src,
        "kubernetes=1.29,1.30",
        &[(
            "probe 0",
            "probe 0: watch from rv 3 open, replaying 2 events",
            "probe 0: watch from rv 2 open, replaying 1 events",
        )],
    );
}

/// apiserver 1.31.0 `pkg/features/kube_features.go`: `ConsistentListFromCache` and
/// `ResilientWatchCacheInitialization` beta, on. An RV "" list is answered by the cache
/// (`cacher/delegator.go`) instead of etcd; a list without a limit while the cache
/// re-initialises gets 429 "storage is (re)initializing". Before (1.30 `cacher.go` `GetList`),
/// RV "0" went to etcd (`listRV == 0 && !c.ready.check()`) and only RV "N" waited on
/// `c.ready.wait` until the cache was ready.
#[test]
fn consistent_lists_and_resilient_init_from_1_31() {
    let src = "
kind Pod
at 0s create Pod a
at 1s probe list Pod
at 2s restart-apiserver apiserver for 2s
at 3s probe list Pod resourceVersion=\"0\"
at 3s probe list Pod resourceVersion=\"2\"
run 6s
";
    expect(
        src,
        "kubernetes=1.30,1.31",
        &[
            (
                "probe 0",
                "probe 0: 1 items at list rv 2 (from etcd)",
                "probe 0: 1 items at list rv 2 (from the watch cache)",
            ),
            (
                "probe 1",
                "probe 1: 1 items at list rv 2 (from etcd)",
                "probe 1: ERROR 429 storage is (re)initializing",
            ),
            (
                "probe 2",
                "probe 2: 1 items at list rv 2 (from the watch cache)",
                "probe 2: ERROR 429 storage is (re)initializing",
            ),
        ],
    );
}

/// A controller that streams its lists (`streaming-list on`) against each apiserver version.
const STREAMING: &str = "
kind Pod
streaming-list on
controller ctl for Pod
  logic
    done
at 0s create Pod a
run 5s
";

/// What a streaming list gets from a server whose `WatchList` gate is off (apimachinery
/// `ValidateListOptions`: "sendInitialEvents is forbidden for watch unless the WatchList feature
/// gate is enabled", 422; client-go falls back to a LIST and a WATCH), against one where it is on.
fn watch_list_off_then_on() -> Vec<(&'static str, &'static str, &'static str)> {
    vec![
        ("ctl/Pod: lists", "1", "0"),
        (
            "ctl/Pod: lists answered 422 (ListOptions.meta.k8s.io \"\" is invalid: sendInitialEvents: Forbidden)",
            "1",
            "0",
        ),
        ("ctl/Pod: lists answered from the watch cache", "1", "0"),
        ("ctl/Pod: watches", "1", "0"),
        ("ctl/Pod: watches opened", "1", "0"),
        ("ctl/Pod: streaming lists ended (initial-events-end)", "0", "1"),
    ]
}

/// apiserver `pkg/features/kube_features.go` `WatchList`: {1.27 false Alpha} {1.32 true Beta}.
#[test]
fn the_server_watch_list_gate_is_on_in_1_32() {
    expect(STREAMING, "kubernetes=1.31,1.32", &watch_list_off_then_on());
}

/// `WatchList`: {1.33 false Beta} ("switch this back to false because the json and proto
/// streaming encoders appear to work better").
#[test]
fn the_server_watch_list_gate_is_off_again_in_1_33() {
    let mut want: Vec<_> = watch_list_off_then_on()
        .into_iter()
        .map(|(f, a, b)| (f, b, a))
        .collect();
    // The first run's facts come first: the streaming list's end is 1.32's.
    want.rotate_right(1);
    expect(STREAMING, "kubernetes=1.32,1.33", &want);
}

/// `WatchList`: {1.34 true Beta}.
#[test]
fn the_server_watch_list_gate_is_on_again_in_1_34() {
    expect(STREAMING, "kubernetes=1.33,1.34", &watch_list_off_then_on());
}

/// client-go 1.35.0 `features/known_features.go` `WatchListClient`: {1.30 false Beta}
/// {1.35 true Beta}: the reflector streams its list (one watch with `sendInitialEvents=true`).
#[test]
fn streaming_lists_are_the_client_default_from_1_35() {
    let src = "
kind Pod
controller ctl for Pod
  logic
    done
at 0s create Pod a
run 5s
";
    expect(
        src,
        "kubernetes=1.34,1.35",
        &[
            ("ctl/Pod: lists", "1", "0"),
            ("ctl/Pod: lists answered from the watch cache", "1", "0"),
            ("ctl/Pod: watches", "1", "0"),
            ("ctl/Pod: watches opened", "1", "0"),
            ("ctl/Pod: streaming lists", "0", "1"),
            (
                "ctl/Pod: streaming lists ended (initial-events-end)",
                "0",
                "1",
            ),
        ],
    );
}

/// kube-controller-manager 1.36 (KEP-5647, PRs #134937, #137210, #137212): the
/// `StaleControllerConsistency{DaemonSet,Job,ReplicaSet,StatefulSet}` gates are beta and on;
/// `pkg/controller/util/consistency/consistency.go` `EnsureReady` fails a sync while the pod
/// informer is behind the RV of a pod the controller created. A ReplicaSet-like controller whose
/// first pod's event arrives before its second's no longer creates the second one twice.
#[test]
fn stale_read_checks_for_built_in_controllers_from_1_36() {
    let src = "
kind ReplicaSet
kind Pod
controller rs for ReplicaSet children Pod
  link-delay 200ms
  start 500ms
at 1s create ReplicaSet web spec 2
run 5s
";
    expect(
        src,
        "kubernetes=1.35,1.36",
        &[
            ("rs: failed writes", "1", "0"),
            ("rs: reconciles ended with 409 (already exists)", "1", "0"),
            (
                "rs: reconciles ended with a stale read (KEP-5647)",
                "0",
                "1",
            ),
        ],
    );
}

/// client-go `testing/fixture.go`: 1.35's `Watch` takes no list options and delivers nothing
/// that exists, so a Service created between the informer's list and its watch is never seen;
/// 1.36 (PRs #135959, #136143) `if addFromRV < obj.resourceVersion { fakewatcher.Add(obj.Object) }`.
#[test]
fn the_fake_tracker_replays_from_an_rv_from_1_36() {
    let src = "
kind Service
apiserver test fake
controller informer for Service
  link-delay 50ms
  logic
    done
at 0s create Service a
at 100ms create Service b
at 300ms delete Service a
run 2s
";
    expect(
        src,
        "kubernetes=1.35,1.36",
        &[
            ("informer: reconciles", "2", "3"),
            (
                "informer/Service: objects in its store at the end",
                "0",
                "1",
            ),
        ],
    );
}

/// controller-runtime `pkg/controller/controller.go`: v0.22.0 `ptr.Deref(options.UsePriorityQueue,
/// false)`, v0.23.0 `true` (commit d2c0c8b5 "Enable PQ per default"). The priority queue keeps one
/// item per key: the event at 10 ms makes the key's pending retry ready and absorbs it, where
/// client-go's delaying queue runs both.
#[test]
fn the_priority_queue_is_the_default_from_controller_runtime_0_23() {
    let src = "
kind Pod
controller ctl for Pod
  fail-first 3
  logic
    done
at 0s create Pod a
at 10ms update Pod a spec 1
run 5s
";
    expect(
        src,
        "controller-runtime=0.22,0.23",
        &[("ctl: reconciles", "5", "4")],
    );
}

/// client-go 1.33 `features/known_features.go` `InOrderInformers: {Default: true, PreRelease:
/// Beta}` (`tools/cache/controller.go` builds a `RealFIFO` instead of a `DeltaFIFO`). listwatch's
/// informer applies every event to its store and handlers when it arrives, in arrival order
/// (RealFIFO's order), with no queue between them, so the two versions run the same trace.
#[test]
fn in_order_informers_change_nothing_listwatch_shows() {
    let src = "
kind ReplicaSet
kind Pod
controller rs for ReplicaSet children Pod
at 0s create ReplicaSet web spec 2
at 2s update ReplicaSet web spec 1
at 3s delete Pod web-0
run 10s
";
    let versions: Versions = "kubernetes=1.32,1.33".parse().unwrap();
    let c = compare(src, versions).unwrap_or_else(|_| panic!("parses"));
    assert!(c.differences.is_empty(), "{:?}", c.differences);
    assert_eq!(c.divergence, None);
}

/// Each version default is a setting of its own too: the older behaviour under a newer version,
/// and the other way round, never silently.
#[test]
fn every_version_default_is_also_an_option_of_its_own() {
    let under = |version: &str, settings: &str| {
        let src = format!("kubernetes {version}\n{settings}\nkind Pod\nrun 1s\n");
        listwatch_script::parse(&src)
            .unwrap_or_else(|d| panic!("{}", listwatch_script::render(&d[0], "t.lw", &src)))
            .config
    };
    let old = under(
        "1.36",
        "feature ConsistentListFromCache off\nfeature ResilientWatchCacheInitialization off\n\
         feature WatchFromStorageWithoutResourceVersion on\nfeature WatchList off\n\
         feature EfficientWatchResumption off\nfeature WatchListClient off\ntoo-large-rv retry\n\
         feature RetryGenerateName off\nbookmarks off",
    );
    assert_eq!(
        old.server,
        listwatch_core::ServerFeatures::of_version(20),
        "1.20's apiserver"
    );
    assert!(!old.reflector.streaming_list && !old.reflector.bookmarks);
    assert!(!old.reflector.too_large_relists_consistent);
    let new = under(
        "1.18",
        "feature ConsistentListFromCache on\nfeature ResilientWatchCacheInitialization on\n\
         feature WatchFromStorageWithoutResourceVersion off\nfeature WatchList on\n\
         feature EfficientWatchResumption on\nfeature RetryGenerateName on\ntoo-large-rv relist",
    );
    assert_eq!(new.server, listwatch_core::ServerFeatures::of_version(36));
    assert!(new.reflector.too_large_relists_consistent);
    let ctl = |version: &str, option: &str| {
        let src = format!(
            "kubernetes {version}\nkind A\nkind B\ncontroller c for A children B\n{option}run 1s\n"
        );
        listwatch_script::parse(&src).unwrap().config.controllers[0].stale_read_check
    };
    assert!(ctl("1.36", ""));
    assert!(!ctl("1.36", "  stale-read-check off\n"));
    assert!(ctl("1.35", "  stale-read-check on\n"));
    assert!(!ctl("1.35", ""));
    let queue = |version: &str, option: &str| {
        let src =
            format!("{version}kind A\ncontroller c for A\n{option}  logic\n    done\nrun 1s\n");
        listwatch_script::parse(&src).unwrap().config.controllers[0].queue
    };
    use listwatch_core::QueueKind::{Classic, Priority};
    assert_eq!(queue("controller-runtime 0.22\n", ""), Classic);
    assert_eq!(queue("controller-runtime 0.23\n", ""), Priority);
    assert_eq!(queue("", ""), Priority, "the model's default is 0.23's");
    assert_eq!(
        queue("controller-runtime 0.22\n", "  queue priority\n"),
        Priority
    );
}

/// Each new setting refuses a bad word with a located diagnostic and, where one is near, the
/// word it meant.
#[test]
fn version_settings_refuse_bad_input_at_its_place() {
    let cases = [
        (
            "kind Pod\nfeature ConsistentListFromCach on\n",
            (2, 9),
            "unknown feature gate `ConsistentListFromCach`",
            Some("did you mean `ConsistentListFromCache`?"),
        ),
        (
            "kind Pod\ncontroller-runtime 1.22\n",
            (2, 20),
            "`1.22` is not a controller-runtime version this model knows",
            None,
        ),
        (
            "kind Pod\napiserver t fake 1.5\n",
            (2, 18),
            "`1.5` is not a client-go version this model knows",
            None,
        ),
        (
            "kind Pod\napiserver t initial-events-end maybe\n",
            (2, 32),
            "unknown setting `maybe`",
            None,
        ),
        (
            "kind Pod\ncontroller c for Pod\n  on-410 relisten\n  logic\n    done\n",
            (3, 10),
            "unknown setting `relisten`",
            Some("did you mean `relist`?"),
        ),
        (
            "kind Pod\ntoo-large-rv relists\n",
            (2, 14),
            "unknown setting `relists`",
            Some("did you mean `relist`?"),
        ),
        (
            "kind Pod\nexpect message too\n",
            (2, 16),
            "put the text in quotes: message \"...\"",
            None,
        ),
        (
            "kind Pod\ncontroller c for Pod\n  stale-read-check yes\n  logic\n    done\n",
            (3, 20),
            "unknown setting `yes`",
            None,
        ),
    ];
    for (src, (line, col), message, help) in cases {
        let Err(d) = listwatch_script::parse(src) else {
            panic!("{src:?} parses");
        };
        assert_eq!((d[0].line, d[0].col), (line, col), "{src:?}: {:?}", d[0]);
        assert_eq!(d[0].message, message, "{src:?}");
        if let Some(help) = help {
            let rendered = listwatch_script::render(&d[0], "t.lw", src);
            assert!(rendered.contains(help), "{rendered}");
        }
    }
}

/// apiserver `registry/generic/registry/store.go` `createWithGenerateNameRetry`
/// (`RetryGenerateName`, beta on in 1.31, GA in 1.32; `kube_features.go`): a create with
/// `generateName` whose five drawn characters name an object that exists is tried again with
/// new ones, up to `maxNameGenerationCreateAttempts` (8); before, it fails 409 AlreadyExists.
/// 9,000 names from 27^5 collide a few times (the birthday bound).
#[test]
fn generate_name_retries_a_taken_name_from_1_31() {
    let src = "
kind Pod cache fixed 10
compaction off
every 1ms 9000 times create Pod web- generate-name
run 10s
";
    let got = differences(src, "kubernetes=1.30,1.31");
    let failed = got
        .iter()
        .find(|(f, ..)| f == "the timeline: failed writes");
    let writes = got.iter().find(|(f, ..)| f == "the timeline: writes");
    let (Some((_, failed_a, failed_b)), Some((_, writes_a, writes_b))) = (failed, writes) else {
        panic!("the timeline's writes differ: {got:?}");
    };
    assert_eq!(failed_b, "0", "{got:?}");
    let (n, m): (u64, u64) = (failed_a.parse().unwrap(), writes_a.parse().unwrap());
    assert!(n > 0 && n + m == 9000 && writes_b == "9000", "{got:?}");
    assert_eq!(got.len(), 2, "only the timeline's writes differ: {got:?}");
}
