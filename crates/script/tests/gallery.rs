//! Data-driven: every gallery scenario parses, keeps every invariant, meets all its
//! expectations, and produces exactly its snapshot trace (`tests/snapshots/NAME.trace`).
//! Run with `UPDATE_SNAPSHOTS=1` to accept new traces, then read the diff.

use listwatch_core::sim::trace_hash;
use listwatch_script::gallery::GALLERY;

fn snapshot_path(name: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/snapshots")
        .join(name.replace(".lw", ".trace"))
}

fn trace_text(sim: &listwatch_core::Sim) -> String {
    let mut s = String::new();
    for (i, e) in sim.trace.iter().enumerate() {
        s += &listwatch_core::line(i as u32, e, sim);
        s.push('\n');
    }
    s
}

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

#[test]
fn every_scenario_passes_and_matches_its_snapshot() {
    let update = std::env::var_os("UPDATE_SNAPSHOTS").is_some();
    let mut hashes = String::new();
    let mut failures = vec![];
    for (name, src) in GALLERY {
        let report = match listwatch_script::run(src) {
            Ok(r) => r,
            Err(d) => {
                failures.push(format!(
                    "{name}: {}",
                    listwatch_script::render(&d[0], name, src)
                ));
                continue;
            }
        };
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
        let text = trace_text(&report.sim);
        let path = snapshot_path(name);
        if update {
            std::fs::write(&path, &text).unwrap();
        } else {
            match std::fs::read_to_string(&path) {
                Ok(want) if want == text => {}
                Ok(_) => failures.push(format!(
                    "{name}: trace differs from {} (UPDATE_SNAPSHOTS=1 to accept)",
                    path.display()
                )),
                Err(_) => failures.push(format!("{name}: no snapshot at {}", path.display())),
            }
        }
        hashes += &format!("{name} {:016x}\n", trace_hash(&report.sim));
    }
    let hash_file =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/trace-hashes.txt");
    if update {
        std::fs::write(&hash_file, &hashes).unwrap();
    } else if std::fs::read_to_string(&hash_file).ok().as_deref() != Some(hashes.as_str()) {
        failures.push(format!(
            "{} is out of date (UPDATE_SNAPSHOTS=1)",
            hash_file.display()
        ));
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
