//! The `listwatch` binary as a user runs it: exit codes, located diagnostics, stdin, links.

use std::io::Write;
use std::process::{Command, Stdio};

fn listwatch(args: &[&str], stdin: Option<&str>) -> (i32, String, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_listwatch"))
        .args(args)
        .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary runs");
    if let Some(text) = stdin {
        child
            .stdin
            .take()
            .unwrap()
            .write_all(text.as_bytes())
            .unwrap();
    }
    drop(child.stdin.take());
    let out = child.wait_with_output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn check_exits_0_1_2_for_ok_failing_and_invalid() {
    let (code, out, _) = listwatch(
        &[
            "check",
            "scenarios/02-overflow-410-relist.lw",
            "scenarios/17-level-triggered-missed-delete.lw",
        ],
        None,
    );
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("ok scenarios/02-overflow-410-relist.lw (8 expectations)"),
        "{out}"
    );

    let failing = "kind Pod\nat 0s create Pod a\nexpect exists Pod b\n";
    let (code, out, _) = listwatch(&["check", "-"], Some(failing));
    assert_eq!(code, 1);
    assert!(
        out.contains("-:3: expect exists Pod b") && out.contains("found absent"),
        "{out}"
    );

    let invalid = "kind Pod\ncontroller c for Pdo mirror Pod\n";
    let (code, _, err) = listwatch(&["check", "-"], Some(invalid));
    assert_eq!(code, 2);
    assert!(
        err.contains("error: unknown kind `Pdo`")
            && err.contains("--> -:2:18")
            && err.contains("did you mean `Pod`?"),
        "{err}"
    );
    assert!(!err.contains("\x1b["), "plain output when not a terminal");

    let (code, _, err) = listwatch(&["check", "no/such/file.lw"], None);
    assert_eq!(code, 2);
    assert!(err.contains("cannot read no/such/file.lw"), "{err}");
}

#[test]
fn run_prints_the_summary_the_trace_and_json() {
    let (code, out, _) = listwatch(
        &["run", "scenarios/02-overflow-410-relist.lw", "--trace"],
        None,
    );
    assert_eq!(code, 0);
    assert!(
        out.contains("410: too old resource version: 10 (12)"),
        "{out}"
    );
    assert!(out.contains("why the relists happened:"), "{out}");
    assert!(out.contains("ESR: holds"), "{out}");
    assert!(
        out.contains("ERROR 410 too old resource version: 10 (12)  <- #"),
        "the one-line trace"
    );
    let (code, json, _) = listwatch(
        &["run", "scenarios/02-overflow-410-relist.lw", "--json"],
        None,
    );
    assert_eq!(code, 0);
    assert!(
        json.starts_with("{\"format\":\"listwatch-trace/1\"") && json.trim_end().ends_with("]}"),
        "{}",
        &json[..80]
    );
}

#[test]
fn share_and_open_round_trip_and_broken_links_exit_2() {
    let (code, link, _) = listwatch(
        &[
            "share",
            "scenarios/13-missed-state-758.lw",
            "--at",
            "12s",
            "--base",
            "https://example.org/lw/",
        ],
        None,
    );
    assert_eq!(code, 0);
    assert!(link.starts_with("https://example.org/lw/#lw2."), "{link}");
    let (code, script, err) = listwatch(&["open", link.trim()], None);
    assert_eq!(code, 0);
    assert_eq!(
        script,
        std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../scenarios/13-missed-state-758.lw"
        ))
        .unwrap()
    );
    assert!(err.contains("12s"), "{err}");
    let (code, _, err) = listwatch(&["open", &link.trim()[..60]], None);
    assert_eq!(code, 2);
    assert!(err.contains("incomplete or damaged"), "{err}");
}

#[test]
fn explore_exits_1_with_a_counterexample_and_0_when_nothing_breaks() {
    let (code, out, err) = listwatch(
        &["explore", "scenarios/21-explore-crash-between-writes.lw"],
        None,
    );
    assert_eq!(code, 1, "{err}");
    assert!(
        out.contains("at 999ms crash operator after 1 write restart-after 5s"),
        "{out}"
    );
    assert!(
        err.contains("found 1 fault schedule that breaks it"),
        "{err}"
    );
    let (code, out, err) = listwatch(
        &["explore", "scenarios/23-explore-missed-state.lw", "--all"],
        None,
    );
    assert_eq!(code, 1);
    assert!(
        out.matches("# Found by `listwatch explore`").count() >= 2,
        "{err}\n{out}"
    );
    let (code, _, err) = listwatch(
        &[
            "explore",
            "scenarios/22-explore-crash-between-writes-fixed.lw",
            "--budget",
            "100",
        ],
        None,
    );
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("no schedule within the budget breaks it"),
        "{err}"
    );
    let (code, json, _) = listwatch(
        &[
            "explore",
            "scenarios/22-explore-crash-between-writes-fixed.lw",
            "--json",
        ],
        None,
    );
    assert_eq!(code, 0);
    assert!(json.contains("\"counterexample\":null"), "{json}");
}

#[test]
fn help_is_complete_and_bad_arguments_are_errors() {
    let (code, out, _) = listwatch(&["--help"], None);
    assert_eq!(code, 0);
    for cmd in [
        "run", "check", "share", "open", "explore", "--trace", "--json", "--budget", "--base",
        "--at",
    ] {
        assert!(out.contains(cmd), "help mentions {cmd}");
    }
    let (code, _, err) = listwatch(&["frobnicate"], None);
    assert_eq!(code, 2);
    assert!(err.contains("unknown command `frobnicate`"), "{err}");
    let (code, _, err) = listwatch(&["explore", "x.lw", "--budget", "lots"], None);
    assert_eq!(code, 2);
    assert!(err.contains("--budget takes a number"), "{err}");
}
