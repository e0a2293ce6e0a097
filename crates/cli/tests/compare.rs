//! `listwatch run FILE --compare SETTING=A,B` as a user runs it: the facts that differ between
//! the two runs, where they diverge, and `run`'s exit codes.

use std::io::Write;
use std::process::{Command, Stdio};

/// Runs the binary in the repository's root with `stdin`; returns (exit code, stdout, stderr).
fn listwatch(args: &[&str], stdin: &str) -> (i32, String, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_listwatch"))
        .args(args)
        .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary runs");
    let mut input = child.stdin.take().unwrap();
    let _ = input.write_all(stdin.as_bytes());
    drop(input);
    let out = child.wait_with_output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// client-go 1.35 `features/known_features.go` `WatchListClient` on: the gallery's 02 lists and
/// watches under 1.34 and streams under 1.35, so its `sent watch` expectation fails there (exit
/// 1, as `run` exits when an expectation fails); the table names each differing fact and the
/// first event where the runs part.
#[test]
fn compare_prints_the_facts_that_differ_and_exits_as_run_does() {
    let args = [
        "run",
        "scenarios/02-overflow-410-relist.lw",
        "--compare",
        "kubernetes=1.34,1.35",
    ];
    let (code, out, err) = listwatch(&args, "");
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        out.starts_with(
            "kubernetes 1.34 vs kubernetes 1.35, one script on one clock: 13 facts differ"
        ),
        "{out}"
    );
    let row = |fact: &str, a: &str, b: &str| {
        out.lines().any(|l| {
            let cells: Vec<&str> = l.split("  ").filter(|c| !c.trim().is_empty()).collect();
            cells.iter().map(|c| c.trim()).collect::<Vec<_>>() == [fact, a, b]
        })
    };
    assert!(row("ctl/Pod: lists", "2", "0"), "{out}");
    assert!(row("ctl/Pod: streaming lists", "0", "2"), "{out}");
    assert!(
        row(
            "line 45: expect ctl Pod sent watch resourceVersion=\"15\" by 4s",
            "PASS (found at 3.475s)",
            "FAIL (found never)"
        ),
        "{out}"
    );
    assert!(out.contains("the runs diverge at event #21:"), "{out}");
    assert!(
        out.contains("kubernetes 1.34: at 1s: ctl/Pod  list resourceVersion=\"0\"")
            && out.contains(
                "kubernetes 1.35: at 1s: ctl/Pod  watch resourceVersion=\"\" sendInitialEvents=true (streaming list)"
            ),
        "{out}"
    );
}

/// A script no version changes: nothing differs, the traces are the same, exit 0; a script
/// with `streaming-list on` keeps it under both versions (an explicit setting wins).
#[test]
fn compare_of_runs_that_do_not_differ_says_so() {
    let script = "kind Pod\nstreaming-list on\ncontroller c for Pod\n  logic\n    done\nat 0s create Pod a\nexpect lists c == 1\n";
    let (code, out, _) = listwatch(&["run", "-", "--compare", "kubernetes=1.34,1.35"], script);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("0 facts differ"), "{out}");
    assert!(
        out.contains("the traces are the same, event for event"),
        "{out}"
    );
    let queue = "kind Pod\ncontroller c for Pod\n  fail-first 3\n  logic\n    done\nat 0s create Pod a\nat 10ms update Pod a spec 1\n";
    let (code, out, _) = listwatch(
        &["run", "-", "--compare", "controller-runtime=0.22,0.23"],
        queue,
    );
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("1 fact differs") && out.contains("c: reconciles"),
        "{out}"
    );
}

/// A comparison that cannot be made is a usage error (exit 2), named; so is an invalid script,
/// with its located diagnostic; `--compare` does not go with `--json` or `--trace`.
#[test]
fn a_bad_comparison_or_script_exits_2() {
    for (spec, says) in [
        ("kubernetes=1.34", "is not a comparison"),
        ("kubernetes=1.34,1.34", "compares a version with itself"),
        ("kubernetes=1.9,1.34", "`1.9` is not a kubernetes version"),
        ("helm=3.1,3.2", "is not a comparison"),
        (
            "controller-runtime=1.22,0.23",
            "`1.22` is not a controller-runtime version",
        ),
    ] {
        let (code, _, err) = listwatch(&["run", "-", "--compare", spec], "kind Pod\n");
        assert_eq!(code, 2, "{spec}: {err}");
        assert!(err.contains(says), "{spec}: {err}");
    }
    let (code, _, err) = listwatch(
        &["run", "-", "--compare", "kubernetes=1.34,1.35"],
        "kind Pdo\nkubernetes 1.99\n",
    );
    assert_eq!(code, 2);
    assert!(
        err.contains("-:2:12") && err.contains("`1.99` is not a Kubernetes version"),
        "{err}"
    );
    let (code, _, err) = listwatch(
        &["run", "-", "--compare", "kubernetes=1.34,1.35", "--json"],
        "kind Pod\n",
    );
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("cannot be used with"), "{err}");
}
