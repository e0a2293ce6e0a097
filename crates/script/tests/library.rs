//! The built-in behaviours are shorthand for the library's programs (`library.rs`): every gallery
//! scenario, run with each built-in replaced by its program, gives the same trace, the same
//! verdicts and the same ESR.

use listwatch_core::verdict::{check, Expect};
use listwatch_core::{Behaviour, Sim};
use listwatch_script::gallery::GALLERY;
use listwatch_script::library;

/// The trace without the reads a program records (built-ins do not): ids renumbered.
fn trace_text(sim: &Sim) -> String {
    let read = |e: &listwatch_core::Event| {
        matches!(
            e.kind,
            listwatch_core::EventKind::Controller(
                listwatch_core::ControllerEvent::ReconcileRead { .. }
            )
        )
    };
    let mut ids = vec![u32::MAX; sim.trace().len()];
    let mut next = 0;
    for (i, e) in sim.trace().iter().enumerate() {
        if !read(e) {
            ids[i] = next;
            next += 1;
        }
    }
    let mut s = String::new();
    for (i, e) in sim.trace().iter().enumerate() {
        if read(e) {
            continue;
        }
        let mut e = *e;
        if let Some(c) = e.cause() {
            e.cause = ids[c as usize];
        }
        s += &listwatch_core::line(ids[i], &e, sim);
        s.push('\n');
    }
    s
}

#[test]
fn every_built_in_gives_the_same_trace_as_its_program_on_the_gallery() {
    let mut compared = std::collections::BTreeSet::new();
    let mut scenarios = 0;
    for (name, src) in GALLERY {
        let scenario = listwatch_script::parse(src).unwrap();
        if scenario
            .config
            .controllers
            .iter()
            .all(|c| c.behaviour == Behaviour::Program)
        {
            continue;
        }
        for c in &scenario.config.controllers {
            compared.insert(
                format!("{:?}", c.behaviour)
                    .split([' ', '{'])
                    .next()
                    .unwrap()
                    .to_string(),
            );
        }
        scenarios += 1;
        let programs = library::as_programs(&scenario.config)
            .unwrap_or_else(|d| panic!("{name}: the library does not compile: {d:?}"));
        let a = listwatch_core::verdict::run(scenario.config.clone()).unwrap();
        let b = listwatch_core::verdict::run(programs).unwrap();
        let (ta, tb) = (trace_text(&a), trace_text(&b));
        if ta != tb {
            let at = ta
                .lines()
                .zip(tb.lines())
                .position(|(x, y)| x != y)
                .unwrap_or(ta.lines().count().min(tb.lines().count()));
            panic!(
                "{name}: the traces differ at line {at}:\n built-in: {:?}\n program:  {:?}",
                ta.lines().nth(at),
                tb.lines().nth(at)
            );
        }
        for x in &scenario.expectations {
            assert_eq!(
                check(&a, &x.expect).pass,
                check(&b, &x.expect).pass,
                "{name}:{}: {}",
                x.line,
                x.text
            );
        }
        let esr = Expect::Esr { controller: None };
        assert_eq!(
            check(&a, &esr).pass,
            check(&b, &esr).pass,
            "{name}: ESR differs"
        );
    }
    assert!(scenarios >= 25, "only {scenarios} scenarios compared");
    for b in [
        "Children",
        "Mirror",
        "StaleDelete",
        "WipeOnZero",
        "TwoWrites",
    ] {
        assert!(
            compared.contains(b),
            "no gallery scenario uses {b}: {compared:?}"
        );
    }
}

/// Scenarios the gallery lacks: `children` with its finalizer through a deletion, and each
/// built-in under crashes, disconnects and errors.
#[test]
fn the_library_matches_the_built_ins_off_the_gallery_too() {
    let scripts = [
        "kind ReplicaSet\nkind Pod\ncontroller rs for ReplicaSet children Pod\n  finalizer\n  workers 2\nat 1s create ReplicaSet web spec 3\nat 3s update ReplicaSet web spec 1\nat 5s update ReplicaSet web spec 4\nat 8s delete ReplicaSet web\nat 9s create ReplicaSet web spec 2\nat 9s crash rs after 1 write restart-after 2s\nrun 40s\n",
        "kind Db\nkind Data\ncontroller op for Db wipe-on-zero Data\n  errors 30%\nat 1s create Db a spec 1\nat 2s update Db a spec 0\nat 2050ms update Db a spec 1\nat 4s update Db a spec 0\nat 6s disconnect op for 3s\nat 7s update Db a spec 2\nat 7s delete Db a\nrun 30s\n",
        "kind Db\nkind Data\ncontroller op for Db two-writes Data fixed\n  reconcile 1s\nat 0s crash op after 1 write restart-after 1s\nat 1s create Db a spec 2\nat 8s update Db a spec 5\nrun 30s\n",
        "kind Db\nkind Copy\ncontroller m for Db mirror Copy\n  fail-first 2\n  requeue-after 5s\nat 1s create Db a spec 2\nat 2s update Db a spec 3\nat 3s status Copy a 9\nat 4s delete Copy a\nrun 30s\n",
    ];
    for src in scripts {
        let scenario = listwatch_script::parse(src).unwrap();
        let programs = library::as_programs(&scenario.config).unwrap();
        let a = listwatch_core::verdict::run(scenario.config.clone()).unwrap();
        let b = listwatch_core::verdict::run(programs).unwrap();
        assert_eq!(trace_text(&a), trace_text(&b), "{src}");
        let esr = Expect::Esr { controller: None };
        assert_eq!(check(&a, &esr).pass, check(&b, &esr).pass, "{src}");
        assert!(a.trace().len() > 20, "{src}");
    }
}
