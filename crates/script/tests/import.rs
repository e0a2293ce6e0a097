//! `listwatch_script::import`: pasted lines in, a scenario out. Each test feeds lines of one
//! format (real ones where a public paste has them, cited; otherwise built from the format
//! string at the cited call site, research26.md §3), then runs the script: it must parse, meet
//! every expectation it carries, and its trace must show the messages the lines show (exactly,
//! where the numbers fit the script's writes).

use listwatch_core::{ApiError, EventKind, ReflectorEvent};
use listwatch_script::import::{import, ImportError, Imported, LineReport, Outcome};
use listwatch_script::Report;

/// Imports, runs, and checks that the script meets all its (at least one) expectations.
fn imported(text: &str) -> (Imported, Report) {
    let i = import(text).unwrap_or_else(|e| panic!("{e}"));
    let r = listwatch_script::run(&i.script)
        .unwrap_or_else(|d| panic!("the script does not parse: {d:?}\n{}", i.script));
    assert!(
        !r.outcomes.is_empty(),
        "no expectation pins anything:\n{}",
        i.script
    );
    for (x, o) in &r.outcomes {
        assert!(
            o.pass,
            "line {}: {} found {}\n{}",
            x.line, x.text, o.found, i.script
        );
    }
    assert!(i.script.len() <= listwatch_script::MAX_SCRIPT_BYTES);
    (i, r)
}

/// The errors the run's reflectors got (watch ERROR events and failed lists), in order.
fn errors(r: &Report) -> Vec<ApiError> {
    r.sim
        .trace()
        .iter()
        .filter_map(|e| match e.kind {
            EventKind::Reflector(ReflectorEvent::WatchFailed { error, .. })
            | EventKind::Reflector(ReflectorEvent::ListFailed { error, .. }) => Some(error),
            _ => None,
        })
        .collect()
}

fn messages(r: &Report) -> Vec<String> {
    errors(r).into_iter().map(|e| e.message()).collect()
}

fn line(i: &Imported, n: usize) -> &LineReport {
    i.report
        .iter()
        .find(|r| r.line == n)
        .expect("a report for every line")
}

fn recogniser(i: &Imported, n: usize) -> (&'static str, String) {
    let r = line(i, n)
        .recogniser
        .as_ref()
        .unwrap_or_else(|| panic!("line {n} not recognised: {}", line(i, n).detail));
    (r.id, r.version.clone())
}

/// client-go `tools/cache/reflector.go:492` at kubernetes-1.32.0:
/// `klog.Warningf("%s: watch of %v ended with: %v", r.name, r.typeDescription, err)`, the err
/// being the watch cache's `too old resource version: %d (%d)` (apiserver
/// `pkg/storage/cacher/watch_cache.go`, oldest−1). Small RVs: the script writes every revision,
/// so the trace carries the lines' messages exactly.
#[test]
fn klog_printf_too_old_is_reproduced_exactly() {
    let text = "\
W1202 10:00:05.123456    1234 reflector.go:492] k8s.io/client-go/informers/factory.go:160: watch of *v1.Pod ended with: too old resource version: 10 (12)
W1202 10:01:05.123456    1234 reflector.go:492] k8s.io/client-go/informers/factory.go:160: watch of *v1.Pod ended with: too old resource version: 300 (420)
";
    let (i, r) = imported(text);
    let got = messages(&r);
    for want in [
        "too old resource version: 10 (12)",
        "too old resource version: 300 (420)",
    ] {
        assert!(
            got.iter().any(|m| m == want),
            "{want} not in {got:?}\n{}",
            i.script
        );
        assert!(
            i.script.contains(&format!("got \"{want}\"")),
            "pinned: {want}"
        );
    }
    assert_eq!(
        recogniser(&i, 1),
        (
            "client-go/reflector/watch-ended",
            "client-go 1.32 (reflector.go:492)".to_string()
        )
    );
    assert_eq!(line(&i, 1).outcome, Outcome::Statement);
    assert!(
        line(&i, 1).detail.contains("reproduced exactly"),
        "{}",
        line(&i, 1).detail
    );
    assert!(i.script.contains("kind Pod cache fixed 100"));
    assert!(i
        .script
        .contains("# assumed: a fixed watch cache of 100 events"));
    assert!(i.script.contains("expect gone factory-160-pod Pod == 2"));
}

/// The real lines of prometheus/prometheus #7102 (fcddk, 2020-05-28): client-go's printf
/// warning (`reflector.go` `watch of %v ended with`) inside Prometheus' go-kit klog adapter
/// (`msg="…"`, research26.md §1.1, §3.1). RVs in the 41 millions: shifted down, and where a
/// line's RV is below what the script already wrote (reflectors that share a name), the same
/// distance between N and M is kept.
#[test]
fn prometheus_7102_keeps_each_windows_distance() {
    let text = r#"level=warn ts=2020-05-28T09:30:46.056Z caller=klog.go:86 component=k8s_client_runtime func=Warningf msg="github.com/prometheus/prometheus/discovery/kubernetes/kubernetes.go:263: watch of *v1.Pod ended with: too old resource version: 41354348 (41356716)"
level=warn ts=2020-05-28T09:31:09.546Z caller=klog.go:86 component=k8s_client_runtime func=Warningf msg="github.com/prometheus/prometheus/discovery/kubernetes/kubernetes.go:281: watch of *v1.Pod ended with: too old resource version: 41355663 (41356880)"
level=warn ts=2020-05-28T09:31:38.615Z caller=klog.go:86 component=k8s_client_runtime func=Warningf msg="github.com/prometheus/prometheus/discovery/kubernetes/kubernetes.go:263: watch of *v1.Pod ended with: too old resource version: 41356551 (41357120)"
level=warn ts=2020-05-28T09:36:20.876Z caller=klog.go:86 component=k8s_client_runtime func=Warningf msg="github.com/prometheus/prometheus/discovery/kubernetes/kubernetes.go:263: watch of *v1.Pod ended with: too old resource version: 41357965 (41359180)"
level=warn ts=2020-05-28T09:41:40.072Z caller=klog.go:86 component=k8s_client_runtime func=Warningf msg="github.com/prometheus/prometheus/discovery/kubernetes/kubernetes.go:263: watch of *v1.Pod ended with: too old resource version: 41361101 (41361611)"
"#;
    let (i, r) = imported(text);
    let distances: Vec<u64> = errors(&r)
        .into_iter()
        .filter_map(|e| match e {
            ApiError::TooOld {
                requested,
                oldest_minus_one,
            } => Some(oldest_minus_one.get() - requested),
            _ => None,
        })
        .collect();
    assert_eq!(distances, [2368, 1217, 569, 1215, 510], "{}", i.script);
    assert_eq!(recogniser(&i, 1).0, "client-go/reflector/watch-ended");
    assert!(line(&i, 1)
        .recogniser
        .as_ref()
        .unwrap()
        .format
        .starts_with("go-kit logfmt"));
    // Times from the first line: line 2 is 23.49 s after it.
    assert!(i.script.contains("at 33.49s say"), "{}", i.script);
    assert!(i.script.contains("scaled: RVs are shifted down by"));
    assert!(i.script.contains("expect gone kubernetes-263-pod Pod == 4"));
    assert!(i.script.contains("expect gone kubernetes-281-pod Pod == 1"));
}

/// Real pastes of list failures: hwameistor #7 (client-go 1.23/1.24: `reflector.go:324`
/// `%s: failed to list %v: %v` then `reflector.go:138` `%s: Failed to watch %v: %v`, the same
/// failure twice) and ARC #3238 (client-go v0.28.4: `reflector.go:535` and `:147`).
#[test]
fn list_failures_logged_twice_are_one_failure() {
    let text = r#"W0402 08:27:17.957515       1 reflector.go:324] k8s.io/client-go/informers/factory.go:134: failed to list *v1.CSINode: Get "https://127.0.0.1:6443/apis/storage.k8s.io/v1/csinodes?limit=500&resourceVersion=0": dial tcp 127.0.0.1:6443: connect: connection refused
E0402 08:27:17.957571       1 reflector.go:138] k8s.io/client-go/informers/factory.go:134: Failed to watch *v1.CSINode: failed to list *v1.CSINode: Get "https://127.0.0.1:6443/apis/storage.k8s.io/v1/csinodes?limit=500&resourceVersion=0": dial tcp 127.0.0.1:6443: connect: connection refused
W0402 08:27:21.957515       1 reflector.go:324] k8s.io/client-go/informers/factory.go:134: failed to list *v1.CSINode: Get "https://127.0.0.1:6443/apis/storage.k8s.io/v1/csinodes?limit=500&resourceVersion=0": dial tcp 127.0.0.1:6443: connect: connection refused
W0402 08:28:13.635304       1 reflector.go:535] k8s.io/client-go@v0.28.4/tools/cache/reflector.go:229: failed to list *v1alpha1.AutoscalingListener: the server could not find the requested resource (get autoscalinglisteners.actions.github.com)
E0402 08:28:13.635600       1 reflector.go:147] k8s.io/client-go@v0.28.4/tools/cache/reflector.go:229: Failed to watch *v1alpha1.AutoscalingListener: failed to list *v1alpha1.AutoscalingListener: the server could not find the requested resource (get autoscalinglisteners.actions.github.com)
"#;
    let (i, r) = imported(text);
    assert_eq!(line(&i, 1).outcome, Outcome::Statement);
    assert_eq!(line(&i, 2).outcome, Outcome::Noted);
    assert!(
        line(&i, 2).detail.contains("the same as line 1"),
        "{}",
        line(&i, 2).detail
    );
    assert!(line(&i, 3)
        .detail
        .contains("part of the outage from line 1"));
    assert!(messages(&r).iter().any(|m| m == "connection refused"));
    assert!(
        i.script.contains("disconnect factory-134-csinode for 5s"),
        "{}",
        i.script
    );
    assert_eq!(
        recogniser(&i, 1).1,
        "client-go 1.23–1.24 (reflector.go:324)"
    );
    // A 404 is not modelled: noted, with the versions the call sites name.
    assert_eq!(line(&i, 4).outcome, Outcome::Noted);
    assert!(line(&i, 4).detail.starts_with("not reproduced"));
    assert!(recogniser(&i, 4)
        .1
        .contains("client-go 1.28 (reflector.go:535)"));
    assert!(recogniser(&i, 5)
        .1
        .contains("client-go 1.28 or 1.29 (reflector.go:147)"));
    assert!(line(&i, 5).detail.contains("the same as line 4"));
}

/// The structured style (client-go 1.33+). `reflector.go:543` at kubernetes-1.33.0:
/// `logger.V(4).Info("Watch closed", "reflector", r.name, "type", r.typeDescription, "err", err)`
/// (built from the source, research26.md §3.2); `reflector.go:227` at 1.36 `"Failed to watch"`
/// (a verbatim kube-controller-manager line); `reflector.go:1261` "Warning: event bookmark
/// expired" (a verbatim kubectl v1.36 paste).
#[test]
fn klog_structured_lines() {
    let text = r#"I1202 10:00:05.123456    1234 reflector.go:543] "Watch closed" reflector="k8s.io/client-go/informers/factory.go:160" type="*v1.Pod" err="too old resource version: 20 (25)"
E0919 15:54:02.455011       1 reflector.go:227] "Failed to watch" err="failed to list *v1.PartialObjectMetadata: the server could not find the requested resource" logger="UnhandledError" reflector="k8s.io/client-go/metadata/metadatainformer/informer.go:146" type="*v1.PartialObjectMetadata"
I0604 19:54:47.320704   82977 reflector.go:1261] "Warning: event bookmark expired" err="k8s.io/client-go/tools/watch/informerwatcher.go:162: hasn't received required bookmark event marking the end of initial events stream, received last event 15.291682276s ago"
"#;
    let (i, r) = imported(text);
    assert!(messages(&r)
        .iter()
        .any(|m| m == "too old resource version: 20 (25)"));
    assert_eq!(
        recogniser(&i, 1),
        (
            "client-go/reflector/watch-closed-410",
            "client-go 1.33 (reflector.go:543)".to_string()
        )
    );
    assert_eq!(recogniser(&i, 2).1, "client-go 1.36 (reflector.go:227)");
    assert_eq!(line(&i, 2).outcome, Outcome::Noted);
    assert_eq!(recogniser(&i, 3).1, "client-go 1.36 (reflector.go:1261)");
    assert_eq!(line(&i, 3).outcome, Outcome::Setting);
    assert!(i.script.contains("\nstreaming-list on\n"), "{}", i.script);
}

/// JSON log entries: controller-runtime's zap (verbatim, controller-runtime #2987) and klog's
/// JSON format (`--logging-format=json`: `ts` in milliseconds, `caller`, the structured keys),
/// built from `reflector.go:651` at kubernetes-1.36.0 ("Watch closed").
#[test]
fn json_log_entries() {
    let text = r#"{"ts":1741434916680.3196,"logger":"controller-runtime.cache.UnhandledError","caller":"runtime/runtime.go:226","msg":"Failed to watch","reflector":"pkg/mod/k8s.io/client-go@v0.33.0-alpha.3/tools/cache/reflector.go:285","type":"*v1alpha1.ExtensionConfig","err":"failed to list *v1alpha1.ExtensionConfig: abc"}
{"ts":1741434926680.5,"caller":"cache/reflector.go:651","msg":"Watch closed","v":4,"reflector":"k8s.io/client-go/informers/factory.go:160","type":"*v1.Pod","err":"too old resource version: 7 (9)"}
"#;
    let (i, r) = imported(text);
    let first = line(&i, 1).recogniser.clone().unwrap();
    assert!(first.format.starts_with("zap JSON"), "{first:?}");
    assert!(
        first.version.contains("client-go v0.33.0-alpha.3"),
        "{first:?}"
    );
    assert_eq!(line(&i, 1).outcome, Outcome::Noted);
    assert_eq!(recogniser(&i, 2).1, "client-go 1.36 (reflector.go:651)");
    assert!(messages(&r)
        .iter()
        .any(|m| m == "too old resource version: 7 (9)"));
    // Line 2 is 10 s after line 1.
    assert!(i.script.contains("at 20s say"), "{}", i.script);
}

/// kube-apiserver audit events (`pkg/apis/audit/v1/types.go` `Event`): a first list
/// (`limit=500&resourceVersion=0`), the watch from the list's RV that ends after its
/// `timeoutSeconds` (the ResponseComplete stage of the same auditID), a watch that ends at once
/// followed by a list at its RV (a 410 inside a 200 stream), a 504 relist; and the verbatim
/// RequestReceived sample of research26.md §3.3 (`\u0026` for `&`).
#[test]
fn audit_events_of_lists_and_watches() {
    let ua = r#""user":{"username":"system:kube-controller-manager"},"userAgent":"kube-controller-manager/v1.29.6 (linux/amd64) kubernetes/062798d/shared-informers","objectRef":{"resource":"pods","apiVersion":"v1"}"#;
    let ev = |id: &str,
              stage: &str,
              verb: &str,
              uri: &str,
              code: Option<u16>,
              t0: &str,
              t1: &str| {
        let status = code
            .map(|c| format!(r#""responseStatus":{{"metadata":{{}},"code":{c}}},"#))
            .unwrap_or_default();
        format!(
            r#"{{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","auditID":"{id}","stage":"{stage}","requestURI":"{uri}","verb":"{verb}",{ua},{status}"requestReceivedTimestamp":"{t0}","stageTimestamp":"{t1}"}}"#
        )
    };
    let text = [
        ev("a1", "ResponseComplete", "list", "/api/v1/namespaces/default/pods?limit=500\\u0026resourceVersion=0", Some(200), "2024-06-30T19:41:00.000000Z", "2024-06-30T19:41:00.020000Z"),
        ev("a2", "RequestReceived", "watch", "/api/v1/namespaces/default/pods?allowWatchBookmarks=true\\u0026resourceVersion=120\\u0026timeout=7m18s\\u0026timeoutSeconds=438\\u0026watch=true", None, "2024-06-30T19:41:00.030000Z", "2024-06-30T19:41:00.030000Z"),
        ev("a2", "ResponseComplete", "watch", "/api/v1/namespaces/default/pods?allowWatchBookmarks=true\\u0026resourceVersion=120\\u0026timeout=7m18s\\u0026timeoutSeconds=438\\u0026watch=true", Some(200), "2024-06-30T19:41:00.030000Z", "2024-06-30T19:48:18.031000Z"),
        ev("a3", "ResponseComplete", "watch", "/api/v1/namespaces/default/pods?allowWatchBookmarks=true\\u0026resourceVersion=130\\u0026timeoutSeconds=540\\u0026watch=true", Some(200), "2024-06-30T19:50:00.000000Z", "2024-06-30T19:50:00.004000Z"),
        ev("a4", "ResponseComplete", "list", "/api/v1/namespaces/default/pods?resourceVersion=130", Some(200), "2024-06-30T19:50:01.100000Z", "2024-06-30T19:50:01.110000Z"),
        ev("a5", "ResponseComplete", "list", "/api/v1/namespaces/default/pods?resourceVersion=900", Some(504), "2024-06-30T19:55:00.000000Z", "2024-06-30T19:55:03.000000Z"),
        r#"{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","auditID":"405318cf-ba4b-46d0-a9b3-53a6e17d9669","stage":"RequestReceived","requestURI":"/apis/crd.projectcalico.org/v1/ipamblocks?allowWatchBookmarks=true\u0026resourceVersion=1661164\u0026timeout=7m18s\u0026timeoutSeconds=438\u0026watch=true","verb":"watch","user":{"username":"system:kube-controller-manager","groups":["system:authenticated"]},"sourceIPs":["10.154.161.198"],"userAgent":"kube-controller-manager/v1.29.6 (linux/amd64) kubernetes/062798d/metadata-informers","objectRef":{"resource":"ipamblocks","apiGroup":"crd.projectcalico.org","apiVersion":"v1"},"requestReceivedTimestamp":"2024-06-30T19:41:14.278898Z","stageTimestamp":"2024-06-30T19:41:14.278898Z"}"#.to_string(),
        r#"{"kind":"Event","apiVersion":"audit.k8s.io/v1","stage":"ResponseComplete","verb":"get","requestURI":"/api/v1/namespaces/default/pods/web-0","requestReceivedTimestamp":"2024-06-30T19:55:00.000000Z"}"#.to_string(),
    ]
    .join("\n");
    let (i, r) = imported(&text);
    assert_eq!(recogniser(&i, 1).0, "audit/list");
    assert_eq!(line(&i, 3).outcome, Outcome::Noted);
    assert!(line(&i, 3).detail.contains("the same as line 2"));
    // The watches' RVs and the relist's are the log's.
    for want in [
        "sent list resourceVersion=\"0\"",
        "sent watch resourceVersion=\"120\"",
        "sent list resourceVersion=\"130\"",
    ] {
        assert!(i.script.contains(want), "{want}\n{}", i.script);
    }
    let got = messages(&r);
    assert!(
        got.iter()
            .any(|m| m == "too old resource version: 130 (131)"),
        "{got:?}"
    );
    assert!(
        got.iter()
            .any(|m| m.ends_with("Too large resource version: 900, current: 899")),
        "{got:?}"
    );
    assert!(line(&i, 4)
        .detail
        .contains("the line does not say the cache's oldest"));
    assert_eq!(line(&i, 8).outcome, Outcome::NotRecognised);
    assert!(line(&i, 8).detail.contains("`get` request"));
}

/// `apiserver_watch_cache_*` and `watch_cache_capacity` samples (`kubernetes/apiserver
/// pkg/storage/cacher/metrics/metrics.go`; the 1.34+ `group`, `resource` labels): the capacity
/// sizes the cache (dynamic: it resized), two timed samples of events received give a write
/// rate, and a 410 in that cache is still exact.
#[test]
fn watch_cache_metrics() {
    let text = r#"# HELP watch_cache_capacity [ALPHA] Total capacity of watch cache broken by resource type.
watch_cache_capacity{group="",resource="pods"} 400
watch_cache_capacity_increase_total{group="",resource="pods"} 4
apiserver_watch_cache_events_received_total{group="",resource="pods"} 182711 1700000000000
apiserver_watch_cache_events_received_total{group="",resource="pods"} 182911 1700000060000
apiserver_watch_cache_resource_version{group="",resource="pods"} 4.1361611e+07
apiserver_request_total{verb="GET"} 5
W1202 10:03:05.123456    1234 reflector.go:492] k8s.io/client-go/informers/factory.go:160: watch of *v1.Pod ended with: too old resource version: 3000 (3100)
"#;
    let (i, r) = imported(text);
    assert!(
        i.script.contains("kind Pod cache dynamic 400..400"),
        "{}",
        i.script
    );
    assert_eq!(line(&i, 2).outcome, Outcome::Setting);
    assert_eq!(line(&i, 4).outcome, Outcome::Setting);
    assert!(
        line(&i, 4).detail.contains("3.33 events/s"),
        "{}",
        line(&i, 4).detail
    );
    assert!(i.script.contains("status Pod x {i}"));
    assert_eq!(line(&i, 6).outcome, Outcome::Noted);
    assert_eq!(line(&i, 7).outcome, Outcome::NotRecognised);
    assert_eq!(recogniser(&i, 2).0, "metrics/watch-cache-capacity");
    assert!(messages(&r)
        .iter()
        .any(|m| m == "too old resource version: 3000 (3100)"));
}

/// "Timeout: Too large resource version: N, current: M": client-go 1.18 logs a failed list
/// from `reflector.go:178` (kubernetes #94315, verbatim, with its trace lines; #91073 through
/// journald). The model's 504 comes from a frozen second apiserver; its text is read off the
/// run, so the expectations hold whether the model prefixes `Timeout: ` or not, and the trace
/// ends with the line's numbers where they fit.
#[test]
fn too_large_resource_version_504() {
    let text = r#"E0828 13:04:17.404984       6 reflector.go:178] github.com/rancher/norman/controller/generic_controller.go:237: Failed to list *v1.ReplicationController: Timeout: Too large resource version: 750, current: 1
I0828 13:04:25.561465       6 trace.go:116] Trace[1614394438]: "Reflector ListAndWatch" name:github.com/rancher/norman/controller/generic_controller.go:237 (started: 2020-08-28 13:03:46.405986919 +0000 UTC m=+1932.339601604) (total time: 39.15545352s):
Trace[1614394438]: [39.15545352s] [39.15545352s] END
May 13 19:44:54 k8s-node04 kubelet[598]: E0828 13:05:34.043090     598 reflector.go:178] object-"kube-system"/"default-token-h8dz9": Failed to list *v1.Secret: Timeout: Too large resource version: 1030, current: 1020
"#;
    let (i, r) = imported(text);
    assert_eq!(recogniser(&i, 1).1, "client-go 1.18 (reflector.go:178)");
    assert_eq!(line(&i, 2).outcome, Outcome::Noted);
    assert!(line(&i, 2).detail.contains("39.155s"));
    let too_large: Vec<(u64, u64, String)> = errors(&r)
        .into_iter()
        .filter_map(|e| match e {
            ApiError::TooLargeRv { requested, current } => {
                Some((requested, current.get(), e.message()))
            }
            _ => None,
        })
        .collect();
    assert_eq!(too_large.len(), 2, "{too_large:?}\n{}", i.script);
    // The first keeps its distance (749); the second is exact.
    assert_eq!(too_large[0].0 - too_large[0].1, 749);
    assert!(too_large[1]
        .2
        .ends_with("Too large resource version: 1030, current: 1020"));
    assert!(i.script.contains("apiserver b") && i.script.contains("pause b"));
    assert!(i.script.contains(&format!("got \"{}\"", too_large[1].2)));
}

/// `Starting reflector %s (%s) from %s` and `Listing and watching %v from %s` (client-go
/// 1.22–1.24 `reflector.go:219` and `:255`, verbatim in kubernetes PR #110387): the controller
/// starts at the line's moment with the resync period it names.
#[test]
fn starting_and_listing_set_the_controller() {
    let text = "\
I0605 20:00:48.930016   69878 reflector.go:219] Starting reflector *v1.PodDisruptionBudget (30s) from k8s.io/client-go/informers/factory.go:134
I0605 20:00:48.930024   69878 reflector.go:255] Listing and watching *v1.PodDisruptionBudget from k8s.io/client-go/informers/factory.go:134
I0605 20:01:48.930024   69878 reflector.go:255] Listing and watching *v1.PodDisruptionBudget from k8s.io/client-go/informers/factory.go:134
";
    let (i, r) = imported(text);
    assert!(
        i.script.contains("  start 10s\n  resync 30s\n"),
        "{}",
        i.script
    );
    assert_eq!(
        recogniser(&i, 1).1,
        "client-go 1.22 or 1.23–1.24 (reflector.go:219)"
    );
    assert_eq!(line(&i, 1).outcome, Outcome::Setting);
    // The second list has no cause in the input: a 410 (V4 from client-go 1.18) is assumed.
    assert_eq!(line(&i, 3).outcome, Outcome::Statement);
    assert!(i
        .script
        .contains("expect lists factory-134-poddisruptionbudget PodDisruptionBudget"));
    let relists = r.sim.trace().iter().filter(|e| e.kind.is_relist()).count();
    assert_eq!(relists, 1);
}

/// kubernetes #72187 (verbatim): client-go 1.13 `reflector.go:270` logs the etcd watch's
/// `The resourceVersion for the provided watch is too old.` (apiserver `pkg/storage/etcd3/
/// errors.go` `interpretWatchError`): a kind without a watch cache, compacted past the client.
#[test]
fn etcd_compacted_watch() {
    let text = "Dec 19 14:20:42 kubernetes-1 kube-controller-manager: W1219 14:20:42.734797   16725 reflector.go:270] k8s.io/client-go/informers/factory.go:132: watch of *v1beta1.Event ended with: The resourceVersion for the provided watch is too old.\n";
    let (i, r) = imported(text);
    assert_eq!(recogniser(&i, 1).1, "client-go 1.13 (reflector.go:270)");
    assert!(i.script.contains("kind Event cache off") && i.script.contains("compaction 10s"));
    assert!(messages(&r)
        .iter()
        .any(|m| m == "The resourceVersion for the provided watch is too old."));
}

/// `%s: Watch close - %v total %v items received` (V4, through Prometheus' go-kit adapter,
/// prometheus #9012) and `"Watch returned 429 - backing off"` (client-go 1.36
/// `reflector.go:653`): a watch end with its items written before it, and an apiserver restart.
#[test]
fn watch_close_and_429() {
    let text = r#"ts=2021-08-01T10:00:00.000Z caller=log.go:124 component=k8s_client_runtime level=debug func=Verbose.Infof msg="pkg/mod/k8s.io/client-go@v0.21.1/tools/cache/reflector.go:167: Watch close - *v1.Endpoints total 9 items received"
ts=2021-08-01T10:05:00.000Z caller=log.go:124 component=k8s_client_runtime level=debug func=Verbose.Infof msg="pkg/mod/k8s.io/client-go@v0.21.1/tools/cache/reflector.go:167: Watch close - *v1.Endpoints total 3 items received"
I0801 10:06:00.000000    1234 reflector.go:653] "Watch returned 429 - backing off" reflector="pkg/mod/k8s.io/client-go@v0.21.1/tools/cache/reflector.go:167" type="*v1.Endpoints"
"#;
    let (i, r) = imported(text);
    assert!(
        i.script
            .contains("every 99800ms 3 times from 10.5s status Endpoints x {i}"),
        "{}",
        i.script
    );
    assert!(i
        .script
        .contains("every 988ms 9 times from 1s status Endpoints x {i}"));
    assert!(i
        .script
        .contains("expect watches reflector-167-endpoints Endpoints >= 3"));
    assert!(i.script.contains("restart-apiserver apiserver for 1s"));
    assert!(messages(&r)
        .iter()
        .any(|m| m == "storage is (re)initializing"));
    assert_eq!(recogniser(&i, 3).0, "client-go/reflector/watch-429");
}

#[test]
fn hostile_pastes_get_a_clear_error() {
    let big = "x".repeat(listwatch_script::import::MAX_INPUT_BYTES + 1);
    assert!(matches!(import(&big), Err(ImportError::TooLarge { .. })));
    let many = "a\n".repeat(listwatch_script::import::MAX_INPUT_LINES + 1);
    let e = import(&many).unwrap_err();
    assert!(
        matches!(e, ImportError::TooManyLines { lines: 10_001 }),
        "{e:?}"
    );
    assert!(e.to_string().contains("at most 10000"));
    let e = import("ok line\nbin\0ary\n").unwrap_err();
    assert_eq!(e, ImportError::Binary { line: 2 });
    assert!(matches!(
        import("\u{1}\u{2}\u{3}\u{4}\u{5}\u{6}\u{7}\u{8}\u{e}\u{f}"),
        Err(ImportError::Binary { line: 1 })
    ));
    // A moment past the year 9999 (a JSON `ts` of 1e99) is no moment; a klog line after it
    // (which has no year of its own) still gets one.
    let far = r#"{"ts":4.1e+99,"caller":"cache/reflector.go:651","msg":"Watch closed","reflector":"a.go:1","type":"*v1.Pod","err":"too old resource version: 1 (3)"}
W1202 10:00:05.123456 1 reflector.go:492] a.go:1: watch of *v1.Pod ended with: too old resource version: 30 (40)"#;
    assert!(import(far).is_ok());
    let Err(ImportError::NothingRecognised { report }) = import("hello\n\nworld\n") else {
        panic!("nothing to import")
    };
    assert_eq!(report.len(), 3);
    assert_eq!(report[1].outcome, Outcome::Blank);
    assert!(report[0].detail.contains("no recogniser matched"));
}

/// A very long line is not read; RVs of 10^30 (and of more digits than any apiserver writes)
/// and moments years apart still give a valid script, said in its comments.
#[test]
fn absurd_numbers_and_times() {
    let long = format!(
        "W1202 10:00:05.123456 1 reflector.go:492] {}\n",
        "y".repeat(20_000)
    );
    let text = format!(
        "{long}\
level=warn ts=2001-05-28T09:30:46.056Z msg=\"a.go:1: watch of *v1.Pod ended with: too old resource version: 1000000000000000000000000000000 (1000000000000000000000000000005)\"
level=warn ts=2025-05-28T09:30:46.056Z msg=\"a.go:1: watch of *v1.Pod ended with: too old resource version: 1{} (2)\"
level=warn ts=2025-05-28T09:31:46.056Z msg=\"a.go:1: Watch close - *v1.Pod total 99999999999 items received\"
{{\"ts\":4.1e+99,\"caller\":\"cache/reflector.go:651\",\"msg\":\"Watch closed\",\"reflector\":\"a.go:1\",\"type\":\"*v1.Pod\",\"err\":\"too old resource version: 1 (3)\"}}
",
        "0".repeat(40)
    );
    let (i, r) = imported(&text);
    assert_eq!(line(&i, 1).outcome, Outcome::NotRecognised);
    assert!(line(&i, 1).detail.contains("longer than 16 KiB"));
    assert!(i.script.contains("were shortened to 600s"), "{}", i.script);
    assert!(r.sim.now_ms().ms() <= 24 * 3_600_000);
    // The 10^30 window keeps its distance of 5, shifted down.
    assert!(errors(&r).iter().any(|e| matches!(e,
        ApiError::TooOld { requested, oldest_minus_one } if oldest_minus_one.get() - requested == 5)));
    assert!(
        line(&i, 2).detail.contains("shifted down by"),
        "{}",
        line(&i, 2).detail
    );
    assert!(line(&i, 3)
        .detail
        .contains("the same story with other numbers"));
    assert!(
        i.notes.iter().any(|n| n.contains("items received")),
        "{:?}",
        i.notes
    );
    // A `ts` of 1e99 is no moment: the line takes the previous line's.
    assert_eq!(line(&i, 5).outcome, Outcome::Statement);
}

/// More 410s than a script holds: as many episodes as fit 64 KiB, the rest left out and said.
#[test]
fn a_huge_paste_is_cut_to_fit_the_script() {
    let text: String = (0..3000)
        .map(|i| {
            format!(
                "W1202 {:02}:{:02}:{:02}.000000 1 reflector.go:492] f.go:1: watch of *v1.Pod ended with: too old resource version: {} ({})\n",
                10 + i / 3600,
                i / 60 % 60,
                i % 60,
                1000 + i * 500,
                1300 + i * 500
            )
        })
        .collect();
    let (i, _) = imported(&text);
    let left_out = i
        .report
        .iter()
        .filter(|r| r.outcome == Outcome::LeftOut)
        .count();
    assert!(left_out > 2000, "{left_out}");
    assert!(i.notes.iter().any(|n| n.contains("episodes left out")));
    assert!(i.script.len() <= listwatch_script::MAX_SCRIPT_BYTES);
}

#[test]
fn the_json_document_carries_script_and_report() {
    let i = import("W1202 10:00:05.123456 1 reflector.go:492] f.go:1: watch of *v1.Pod ended with: too old resource version: 10 (12)\n").unwrap();
    let doc: serde_json::Value = serde_json::from_str(&i.to_json()).unwrap();
    assert_eq!(doc["format"], "listwatch-import/1");
    assert_eq!(doc["script"].as_str(), Some(i.script.as_str()));
    assert_eq!(doc["report"][0]["outcome"], "statement");
    assert_eq!(
        doc["report"][0]["recogniser"]["id"],
        "client-go/reflector/watch-ended"
    );
    assert!(doc["report"][0]["script_lines"]
        .as_array()
        .is_some_and(|a| !a.is_empty()));
}

/// Real lines of every format (the tests above cite them), for the fuzz test to mutate.
const CORPUS: &[&str] = &[
    r#"level=warn ts=2020-05-28T09:30:46.056Z caller=klog.go:86 component=k8s_client_runtime func=Warningf msg="github.com/prometheus/prometheus/discovery/kubernetes/kubernetes.go:263: watch of *v1.Pod ended with: too old resource version: 41354348 (41356716)""#,
    "W1202 10:00:05.123456    1234 reflector.go:492] k8s.io/client-go/informers/factory.go:160: watch of *v1.Pod ended with: too old resource version: 10 (12)",
    r#"W0402 08:27:17.957515       1 reflector.go:324] k8s.io/client-go/informers/factory.go:134: failed to list *v1.CSINode: Get "https://127.0.0.1:6443/apis/storage.k8s.io/v1/csinodes?limit=500&resourceVersion=0": dial tcp 127.0.0.1:6443: connect: connection refused"#,
    r#"E0402 08:27:17.957571       1 reflector.go:138] k8s.io/client-go/informers/factory.go:134: Failed to watch *v1.CSINode: failed to list *v1.CSINode: Get "https://127.0.0.1:6443/apis/storage.k8s.io/v1/csinodes?limit=500&resourceVersion=0": dial tcp 127.0.0.1:6443: connect: connection refused"#,
    r#"I1202 10:00:05.123456    1234 reflector.go:543] "Watch closed" reflector="k8s.io/client-go/informers/factory.go:160" type="*v1.Pod" err="too old resource version: 20 (25)""#,
    r#"E0919 15:54:02.455011       1 reflector.go:227] "Failed to watch" err="failed to list *v1.PartialObjectMetadata: the server could not find the requested resource" logger="UnhandledError" reflector="k8s.io/client-go/metadata/metadatainformer/informer.go:146" type="*v1.PartialObjectMetadata""#,
    r#"{"ts":1741434926680.5,"caller":"cache/reflector.go:651","msg":"Watch closed","v":4,"reflector":"k8s.io/client-go/informers/factory.go:160","type":"*v1.Pod","err":"too old resource version: 7 (9)"}"#,
    r#"{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"RequestResponse","auditID":"067debb3-be1d-4e0f-b65f-ce1871e60ed9","stage":"ResponseComplete","requestURI":"/apis/node.k8s.io/v1/runtimeclasses?allowWatchBookmarks=true&resourceVersion=3274044&timeout=9m46s&timeoutSeconds=586&watch=true","verb":"watch","user":{"username":"system:kube-controller-manager","groups":["system:authenticated"]},"sourceIPs":["192.168.38.9"],"userAgent":"kube-controller-manager/v1.28.7 (linux/amd64) kubernetes/c8dcb00/shared-informers","objectRef":{"resource":"runtimeclasses","apiGroup":"node.k8s.io","apiVersion":"v1"},"responseStatus":{"metadata":{},"code":200},"requestReceivedTimestamp":"2024-06-05T12:37:08.419005Z","stageTimestamp":"2024-06-05T12:46:54.421057Z"}"#,
    r#"{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","auditID":"473efcdb-dd39-4f41-bf17-79883bb689e0","stage":"ResponseComplete","requestURI":"/apis/apiextensions.k8s.io/v1/customresourcedefinitions?limit=500\u0026resourceVersion=0","verb":"list","user":{"username":"system:apiserver"},"userAgent":"kube-apiserver/v1.22.0 (linux/amd64) kubernetes/c2b5237","objectRef":{"resource":"customresourcedefinitions","apiGroup":"apiextensions.k8s.io","apiVersion":"v1"},"responseStatus":{"metadata":{},"code":200},"requestReceivedTimestamp":"2021-09-13T10:00:06.609632Z","stageTimestamp":"2021-09-13T10:00:06.622899Z"}"#,
    r#"watch_cache_capacity{group="",resource="pods"} 1600"#,
    r#"apiserver_watch_cache_events_received_total{group="",resource="pods"} 182711 1700000000000"#,
    r#"E0828 13:04:17.404984       6 reflector.go:178] github.com/rancher/norman/controller/generic_controller.go:237: Failed to list *v1.ReplicationController: Timeout: Too large resource version: 750, current: 1"#,
    r#"I0828 13:04:25.561465       6 trace.go:116] Trace[1614394438]: "Reflector ListAndWatch" name:github.com/rancher/norman/controller/generic_controller.go:237 (started: 2020-08-28 13:03:46.405986919 +0000 UTC m=+1932.339601604) (total time: 39.15545352s):"#,
    "I0605 20:00:48.930016   69878 reflector.go:219] Starting reflector *v1.PodDisruptionBudget (0s) from k8s.io/client-go/informers/factory.go:134",
    "I0605 20:00:48.930024   69878 reflector.go:255] Listing and watching *v1.PodDisruptionBudget from k8s.io/client-go/informers/factory.go:134",
    "Dec 19 14:20:42 kubernetes-1 kube-controller-manager: W1219 14:20:42.734797   16725 reflector.go:270] k8s.io/client-go/informers/factory.go:132: watch of *v1beta1.Event ended with: The resourceVersion for the provided watch is too old.",
    r#"ts=2021-08-01T10:00:00.000Z caller=log.go:124 component=k8s_client_runtime level=debug func=Verbose.Infof msg="pkg/mod/k8s.io/client-go@v0.21.1/tools/cache/reflector.go:167: Watch close - *v1.Endpoints total 9 items received""#,
    r#"I0801 10:06:00.000000    1234 reflector.go:653] "Watch returned 429 - backing off" reflector="r.go:1" type="*v1.Endpoints""#,
];

/// The core's seeded SplitMix64: the same inputs on every run and platform.
struct Rng(listwatch_core::Rng);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0.below(n.max(1) as u64) as usize
    }
}

/// Numbers and words at the formats' edges.
const SPLICES: &[&str] = &[
    "0",
    "1",
    "18446744073709551616",
    "1000000000000000000000000000000",
    "99999999999999999999999999999999999999999",
    "-5",
    "4.1e+99",
    "NaN",
    "13",
    "99:99:99.999999",
    "\u{202e}",
    "\"",
    "\\",
    "{",
    "}",
    "ended with: ",
    "closed with: ",
    "Too large resource version: ",
    "too old resource version: ",
    ": failed to list ",
    "Watch close - ",
    "\t",
    "é",
    "\u{7}",
];

/// One mutation of a line: a splice at a random place, a cut, or a change of one character.
fn mutate(rng: &mut Rng, line: &str) -> String {
    let chars: Vec<char> = line.chars().collect();
    let at = rng.below(chars.len() + 1);
    let (head, tail): (String, String) =
        (chars[..at].iter().collect(), chars[at..].iter().collect());
    match rng.below(5) {
        0 => format!("{head}{}{tail}", SPLICES[rng.below(SPLICES.len())]),
        1 => {
            let end = (at + 1 + rng.below(40)).min(chars.len());
            format!("{head}{}", chars[end..].iter().collect::<String>())
        }
        2 => head,
        3 => {
            // Every digit run after `at` replaced by one spliced number.
            let n = SPLICES[rng.below(9)];
            let mut out = head;
            let mut in_digits = false;
            for c in tail.chars() {
                if c.is_ascii_digit() {
                    if !in_digits {
                        out.push_str(n);
                    }
                    in_digits = true;
                } else {
                    in_digits = false;
                    out.push(c);
                }
            }
            out
        }
        _ => {
            let c = char::from_u32(0x20 + rng.below(0x2000) as u32).unwrap_or('?');
            format!("{head}{c}{}", tail.chars().skip(1).collect::<String>())
        }
    }
}

/// 160 pastes of 1 to 24 corpus lines, each line mutated with probability 1/2 (up to three
/// times), repeated, or reordered: the import never panics, returns within a time bound, and
/// what it returns holds (a script that parses, meets its expectations, fits 64 KiB, and a
/// report of every line), or is a clear error.
#[test]
fn mutated_pastes_never_break_the_import() {
    let mut rng = Rng(listwatch_core::Rng::new(0x1d_2026));
    let budget = std::time::Duration::from_secs(20);
    for case in 0..160 {
        let n = 1 + rng.below(24);
        let mut lines: Vec<String> = (0..n)
            .map(|_| {
                let mut l = CORPUS[rng.below(CORPUS.len())].to_string();
                if rng.below(2) == 0 {
                    for _ in 0..1 + rng.below(3) {
                        l = mutate(&mut rng, &l);
                    }
                }
                l
            })
            .collect();
        if rng.below(4) == 0 {
            let i = rng.below(lines.len());
            let repeat = lines[i].clone();
            lines.extend(std::iter::repeat_n(repeat, 1 + rng.below(30)));
        }
        if rng.below(4) == 0 {
            lines.reverse();
        }
        let text = lines.join(if rng.below(3) == 0 { "\r\n" } else { "\n" });
        let started = std::time::Instant::now();
        let result = import(&text);
        assert!(
            started.elapsed() < budget,
            "case {case} took {:?}:\n{text}",
            started.elapsed()
        );
        match result {
            Ok(i) => {
                assert_eq!(
                    i.report.len(),
                    listwatch_script::lines(&text).count(),
                    "case {case}"
                );
                assert!(i.script.len() <= listwatch_script::MAX_SCRIPT_BYTES);
                let r = listwatch_script::run(&i.script)
                    .unwrap_or_else(|d| panic!("case {case}: {d:?}\n{}\n--\n{text}", i.script));
                for (x, o) in &r.outcomes {
                    assert!(
                        o.pass,
                        "case {case}: {} found {}\n{}\n--\n{text}",
                        x.text, o.found, i.script
                    );
                }
            }
            Err(e) => assert!(!e.to_string().is_empty()),
        }
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig { cases: 96, ..Default::default() })]
    /// Arbitrary text (any characters, any line breaks) never panics the recognisers.
    #[test]
    fn arbitrary_text_never_panics(text in "(\\PC{0,120}[\\n\\r]?){0,12}") {
        match import(&text) {
            Ok(i) => proptest::prop_assert!(listwatch_script::parse(&i.script).is_ok()),
            Err(e) => proptest::prop_assert!(!e.to_string().is_empty()),
        }
    }
}
