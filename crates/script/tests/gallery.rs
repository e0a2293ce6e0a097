//! Data-driven: every gallery scenario parses, keeps every invariant, meets all its
//! expectations, and produces exactly its snapshot trace (`tests/snapshots/NAME.trace`) and its
//! line of `scenarios/trace-hashes.txt`. build.rs writes one `#[test]` per scenario
//! (`scenario_02_overflow_410_relist` for `02-overflow-410-relist.lw`), so a failure names its
//! scenario and a new file in `scenarios/` gets its test without editing Rust.
//! Run with `UPDATE_SNAPSHOTS=1` to accept new traces and hashes, then read the diff.

use std::path::PathBuf;
use std::sync::Mutex;

use listwatch_core::sim::trace_hash;
use listwatch_script::gallery::GALLERY;

fn update() -> bool {
    std::env::var_os("UPDATE_SNAPSHOTS").is_some()
}

fn snapshot_path(name: &str) -> PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/snapshots")
        .join(name.replace(".lw", ".trace"))
}

fn hash_file() -> PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/trace-hashes.txt")
}

/// Tests run in threads of one process: this lock keeps their rewrites of the hash file apart.
static HASHES: Mutex<()> = Mutex::new(());

/// `trace-hashes.txt` as (file name, hash) lines.
fn read_hashes() -> Vec<(String, String)> {
    std::fs::read_to_string(hash_file())
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.split_once(' '))
        .map(|(n, h)| (n.to_string(), h.to_string()))
        .collect()
}

fn write_hashes(mut lines: Vec<(String, String)>) {
    lines.sort();
    let text: String = lines.iter().map(|(n, h)| format!("{n} {h}\n")).collect();
    std::fs::write(hash_file(), text).unwrap();
}

fn trace_text(sim: &listwatch_core::Sim) -> String {
    let mut s = String::new();
    for (i, e) in sim.trace().iter().enumerate() {
        s += &listwatch_core::line(i as u32, e, sim);
        s.push('\n');
    }
    s
}

/// Runs one gallery scenario and checks everything the gallery promises about it.
fn check_scenario(name: &str) {
    let src = GALLERY
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, s)| *s)
        .unwrap_or_else(|| panic!("{name} is not in the gallery"));
    let report = listwatch_script::run(src)
        .unwrap_or_else(|d| panic!("{name}: {}", listwatch_script::render(&d[0], name, src)));
    let mut failures = vec![];
    if let Err(e) = listwatch_core::invariants::check(&report.sim) {
        failures.push(format!("{name}: invariant broken: {e}"));
    }
    for (x, o) in &report.outcomes {
        if !o.pass {
            failures.push(format!(
                "{name}:{}: `{}` failed, found {}",
                x.line, x.text, o.found
            ));
        }
    }
    failures.extend(
        fold_disagreements(&report.sim)
            .into_iter()
            .map(|d| format!("{name}: {d}")),
    );
    let text = trace_text(&report.sim);
    let path = snapshot_path(name);
    let hash = format!("{:016x}", trace_hash(&report.sim));
    if update() {
        std::fs::write(&path, &text).unwrap();
        let _guard = HASHES.lock().unwrap_or_else(|e| e.into_inner());
        let mut lines = read_hashes();
        lines.retain(|(n, _)| n != name);
        lines.push((name.to_string(), hash));
        write_hashes(lines);
    } else {
        match std::fs::read_to_string(&path) {
            Ok(want) if want == text => {}
            Ok(_) => failures.push(format!(
                "{name}: trace differs from {} (UPDATE_SNAPSHOTS=1 to accept)",
                path.display()
            )),
            Err(_) => failures.push(format!("{name}: no snapshot at {}", path.display())),
        }
        let listed = read_hashes().into_iter().find(|(n, _)| n == name);
        if listed.as_ref().map(|(_, h)| h) != Some(&hash) {
            failures.push(format!(
                "{name}: {} lists {:?}, the run hashes to {hash} (UPDATE_SNAPSHOTS=1)",
                hash_file().display(),
                listed.map(|(_, h)| h)
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The objects panel is a fold of the events (`view::Objects`): at the run's end its last
/// version of each object must be what etcd holds, UID and controller owner included (the
/// engine keeps them beside each create's event, and an adopt or release says the owner it
/// leaves), and every object it shows alive must be in etcd.
fn fold_disagreements(sim: &listwatch_core::Sim) -> Vec<String> {
    let objects = listwatch_core::view::Objects::new(sim);
    let mut out = vec![];
    for h in &objects.objects {
        let key = format!(
            "{}/{}",
            sim.config().kinds[h.kind.index()].name,
            sim.names().resolve(h.name)
        );
        let last = h.versions.last().filter(|v| !v.is_delete());
        let held = sim.etcd().get(h.kind, h.name);
        match (last, held) {
            (Some(v), Some(o)) => {
                let owner = o.owner.map(|w| (w.kind, w.name, w.uid));
                if (v.uid, v.owner, v.rv) != (o.uid, owner, o.rv) {
                    out.push(format!(
                        "the fold's {key} is uid {} owner {:?} rv {}, etcd's uid {} owner {owner:?} rv {}",
                        v.uid, v.owner, v.rv, o.uid, o.rv
                    ));
                }
            }
            (None, None) => {}
            (v, o) => out.push(format!("the fold's {key} is {v:?}, etcd's {o:?}")),
        }
    }
    out
}

/// The owner changes no gallery scenario makes, each through the objects fold: the collector
/// orphaning a controller's child (`garbagecollector.go` `orphanDependents` removes the owner
/// reference), an adopt (`controllerutil.SetControllerReference`), a release, and an object
/// deleted and created again (a new UID).
#[test]
fn the_objects_fold_follows_every_owner_change() {
    let head = "kind Db\nkind Cm\ncontroller op for Db\n  logic\n    get db = Db key\n    if db absent\n      done\n";
    let cases = [
        (
            false,
            "orphaned by the collector",
            "    get cm = Cm key-cfg\n    if cm absent\n      create Cm key-cfg owner db\nat 0s create Db web\nat 2s delete Db web propagation orphan\nrun 5s\n",
        ),
        (
            true,
            "adopted",
            "    get cm = Cm \"shared\"\n    if cm exists and db.spec == 1\n      adopt cm owner db\n    if cm exists and db.spec == 2\n      release cm owner db\nat 0s create Cm shared\nat 0s create Db web spec 1\nrun 2s\n",
        ),
        (
            false,
            "adopted, released, deleted and made again",
            "    get cm = Cm \"shared\"\n    if cm exists and db.spec == 1\n      adopt cm owner db\n    if cm exists and db.spec == 2\n      release cm owner db\nat 0s create Cm shared\nat 0s create Db web spec 1\nat 2s update Db web spec 2\nat 4s delete Cm shared\nat 5s create Cm shared\nrun 6s\n",
        ),
    ];
    for (owned, what, tail) in cases {
        let src = format!("{head}{tail}");
        let report = listwatch_script::run(&src)
            .unwrap_or_else(|d| panic!("{what}: {}", listwatch_script::render(&d[0], what, &src)));
        let objects = report.sim.etcd().objects();
        assert!(!objects.is_empty(), "{what}: nothing in etcd");
        let any_owner = objects.values().any(|o| o.owner.is_some());
        assert_eq!(any_owner, owned, "{what}: the scenario does what it says");
        let wrong = fold_disagreements(&report.sim);
        assert!(wrong.is_empty(), "{what}: {}", wrong.join("\n"));
    }
}

macro_rules! gallery_test {
    ($test:ident, $file:literal) => {
        #[test]
        fn $test() {
            check_scenario($file);
        }
    };
}

include!(concat!(env!("OUT_DIR"), "/gallery_tests.rs"));

#[test]
fn gallery_has_the_promised_scenarios() {
    assert!(
        GALLERY.len() >= 14,
        "the gallery has {} scenarios",
        GALLERY.len()
    );
    for (name, src) in GALLERY {
        assert!(
            !listwatch_script::gallery::title(src).is_empty(),
            "{name} has no title comment"
        );
    }
}

/// `trace-hashes.txt` lists exactly the gallery, in file order (each scenario's own test checks
/// its hash). With `UPDATE_SNAPSHOTS=1`, lines of scenarios that are gone are removed.
#[test]
fn trace_hashes_list_exactly_the_gallery() {
    let _guard = HASHES.lock().unwrap_or_else(|e| e.into_inner());
    let mut lines = read_hashes();
    if update() {
        lines.retain(|(n, _)| GALLERY.iter().any(|(g, _)| g == n));
        write_hashes(lines);
        return;
    }
    let listed: Vec<&str> = lines.iter().map(|(n, _)| n.as_str()).collect();
    let gallery: Vec<&str> = GALLERY.iter().map(|(n, _)| *n).collect();
    assert_eq!(
        listed,
        gallery,
        "{} is out of date (UPDATE_SNAPSHOTS=1)",
        hash_file().display()
    );
}
