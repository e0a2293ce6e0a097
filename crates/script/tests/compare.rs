//! The comparison of one script under two versions (`listwatch_script::compare`): what it
//! overrides, what it counts, where it finds the runs diverge, and what it refuses.

use listwatch_script::compare::{compare, divergence, facts, render, Setting, Versions};

fn versions(spec: &str) -> Versions {
    spec.parse().expect("a comparison")
}

/// The versions compared replace the script's own `kubernetes` statement: a script written for
/// 1.18 (fixed caches of 100, `apiserver/pkg/server/options/etcd.go`) compared at 1.34 and 1.35
/// has dynamic caches in both, so its 150-event burst fits the cache under either.
#[test]
fn the_versions_compared_replace_the_script_s_own() {
    let src = "kubernetes 1.18\nkind Pod\ncompaction off\nevery 10ms 150 times from 1s create Pod p{i}\nat 5s probe watch Pod resourceVersion=\"1\"\nrun 10s\n";
    let c = compare(src, versions("kubernetes=1.34,1.35")).unwrap_or_else(|_| panic!("runs"));
    assert!(c.differences.is_empty(), "{:?}", c.differences);
    assert_eq!(c.divergence, None);
    let probe = facts(&c.a.report)
        .into_iter()
        .find(|f| f.0 == "probe 0")
        .expect("the probe's answer is a fact");
    assert_eq!(
        probe.1,
        "probe 0: watch from rv 1 open, replaying 150 events"
    );
    assert_eq!(
        (c.a.label.as_str(), c.b.label.as_str()),
        ("kubernetes 1.34", "kubernetes 1.35")
    );
    let text = render(&c);
    assert!(
        text.contains("0 facts differ") && text.contains("the same, event for event"),
        "{text}"
    );
}

/// A script that is valid under one version and not the other (client-go 1.35 streams its lists,
/// and `sendInitialEvents=true` needs `allowWatchBookmarks=true`) gets that run's diagnostic.
#[test]
fn a_script_invalid_under_one_version_gets_its_diagnostic() {
    let src = "kind Pod\nbookmarks off\ncontroller c for Pod\n  logic\n    done\nrun 1s\n";
    assert!(compare(src, versions("kubernetes=1.33,1.34")).is_ok());
    let Err(d) = compare(src, versions("kubernetes=1.34,1.35")) else {
        panic!("1.35 streams without bookmarks");
    };
    assert!(d[0].message.contains("needs bookmarks"), "{:?}", d[0]);
}

/// The divergence is the first event whose moment, actor or text differs; past the end of the
/// shorter trace the other side has none.
#[test]
fn the_divergence_is_the_first_differing_event() {
    let src = "kind Pod\ncontroller c for Pod\n  logic\n    done\nat 0s create Pod a\nrun 5s\n";
    let old = compare(src, versions("kubernetes=1.34,1.35")).unwrap_or_else(|_| panic!("runs"));
    let d = old.divergence.expect("1.35 streams its list");
    assert_eq!(d.index, 3);
    let (at_a, a) = d.a.expect("an event under 1.34");
    let (at_b, b) = d.b.expect("an event under 1.35");
    assert_eq!((at_a.ms(), at_b.ms()), (0, 0));
    assert_eq!(a, "c/Pod  list resourceVersion=\"0\"");
    assert_eq!(
        b,
        "c/Pod  watch resourceVersion=\"\" sendInitialEvents=true (streaming list)"
    );
    // A run that is a prefix of the other: the divergence is at its end.
    let short = listwatch_script::run("kind Pod\nat 0s create Pod a\nrun 1s\n").unwrap();
    let long = listwatch_script::run("kind Pod\nat 0s create Pod a\nat 1s create Pod b\nrun 2s\n")
        .unwrap();
    let d = divergence(&short.sim, &long.sim).expect("the second is longer");
    assert_eq!(d.index, short.sim.trace().len());
    assert_eq!(d.a, None);
    assert!(d
        .b
        .expect("its next event")
        .1
        .contains("create Pod/default/b"));
}

/// What the comparison counts: lists and watches by the kind of answer, 410s, relists,
/// reconciles by how they ended, writes, each watcher's end, probes, expectations and ESR.
#[test]
fn the_facts_are_counted_per_watcher_and_controller() {
    let gallery = listwatch_script::gallery::GALLERY;
    let (_, src) = gallery
        .iter()
        .find(|(n, _)| *n == "02-overflow-410-relist.lw")
        .expect("02 is in the gallery");
    let r = listwatch_script::run(src).unwrap_or_else(|_| panic!("runs"));
    let f = facts(&r);
    let get = |k: &str| {
        f.iter()
            .find(|x| x.0 == k)
            .map(|x| x.1.as_str())
            .unwrap_or_else(|| panic!("no fact `{k}` in {f:?}"))
    };
    assert_eq!(get("ctl/Pod: 410 Gone"), "1");
    assert_eq!(get("ctl/Pod: relists"), "1");
    assert_eq!(get("ctl/Pod: lists answered from the watch cache"), "2");
    assert_eq!(
        get("ctl/Pod: watches answered 410 (too old resource version)"),
        "1"
    );
    assert_eq!(get("ctl/Pod: state at the end"), "watching");
    assert_eq!(get("ctl/Pod: last RV at the end"), "rv 15");
    assert_eq!(get("ESR").split(' ').next(), Some("holds"));
    assert!(get("line 35: expect gone ctl Pod == 1").starts_with("PASS"));
    assert_eq!(Setting::ControllerRuntime.version(23), "0.23");
}

/// A comparison is written `SETTING=A,B`: two different versions of one setting it knows.
#[test]
fn a_comparison_names_one_setting_and_two_versions() {
    let v = versions(" controller-runtime = 0.22 , 0.23 ");
    assert_eq!((v.setting, v.a, v.b), (Setting::ControllerRuntime, 22, 23));
    let v = versions("kubernetes=1.36,1.18");
    assert_eq!((v.setting, v.a, v.b), (Setting::Kubernetes, 36, 18));
    for bad in [
        "",
        "kubernetes",
        "kubernetes=",
        "kubernetes=1.34",
        "k8s=1.34,1.35",
        "kubernetes=1.34,1.34",
        "kubernetes=1.41,1.34",
        "kubernetes=0.22,0.23",
        "controller-runtime=0.0,0.23",
    ] {
        assert!(bad.parse::<Versions>().is_err(), "{bad}");
    }
}
