//! The `listwatch` binary as a user runs it: exit codes, located diagnostics, stdin, links.

use std::io::Write;
use std::process::{Command, Stdio};

/// The binary, started in the repository's root with all three streams piped.
fn spawn(args: &[&str]) -> std::process::Child {
    Command::new(env!("CARGO_BIN_EXE_listwatch"))
        .args(args)
        .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary runs")
}

/// Writes `stdin`, closes it, and returns the exit code, standard output and standard error.
fn finish(mut child: std::process::Child, stdin: &[u8]) -> (i32, String, String) {
    let mut input = child.stdin.take().unwrap();
    let _ = input.write_all(stdin);
    drop(input);
    let out = child.wait_with_output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn listwatch(args: &[&str], stdin: Option<&str>) -> (i32, String, String) {
    finish(spawn(args), stdin.unwrap_or_default().as_bytes())
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
        out.contains("ok scenarios/02-overflow-410-relist.lw (11 expectations)"),
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
        json.starts_with("{\"format\":\"listwatch-trace/3\"") && json.trim_end().ends_with("]}"),
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

fn listwatch_bytes(args: &[&str], stdin: &[u8]) -> (i32, String, String) {
    finish(spawn(args), stdin)
}

#[test]
fn invalid_utf8_is_located_at_its_first_bad_byte() {
    let (code, _, err) = listwatch_bytes(
        &["check", "-"],
        b"kind Pod\r\nat 1s say \"caf\xe9\"\nexpect esr\n",
    );
    assert_eq!(code, 2);
    assert!(
        err.contains("not valid UTF-8") && err.contains("--> -:2:15"),
        "{err}"
    );
    let dir = std::env::temp_dir().join(format!("listwatch-utf8-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("bad.lw");
    std::fs::write(&file, b"kind Pod\n\n# \xff\n").unwrap();
    let (code, _, err) = listwatch_bytes(&["check", file.to_str().unwrap()], b"");
    assert_eq!(code, 2);
    assert!(err.contains("bad.lw:3:3"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_bom_and_cr_line_endings_are_read_as_an_editor_shows_them() {
    let src = "\u{feff}kind Pod\rcontroller ctl for Pod mirror Pdo\r\n";
    let (code, _, err) = listwatch_bytes(&["check", "-"], src.as_bytes());
    assert_eq!(code, 2);
    assert!(
        err.contains("unknown kind `Pdo`") && err.contains("--> -:2:31"),
        "{err}"
    );
    let ok = "\u{feff}kind Pod\r\nat 1s create Pod a\rexpect exists Pod a\r";
    let (code, out, err) = listwatch_bytes(&["check", "-"], ok.as_bytes());
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("(1 expectations)"), "{out}");
}

#[test]
fn control_characters_from_the_script_are_shown_escaped() {
    let script = "kind Pod\nat 1s say \"\u{1b}]0;pwned\u{7}\u{1b}[2J\u{202e}x\"\nexpect exists Pod a # \u{1b}[31m\n";
    let raw = |s: &str| s.contains('\u{1b}') || s.contains('\u{7}') || s.contains('\u{202e}');
    let (code, out, err) = listwatch(&["run", "-", "--trace"], Some(script));
    assert_eq!(code, 1, "{err}");
    assert!(!raw(&out) && !raw(&err), "{out}{err}");
    assert!(
        out.contains("\\x1b]0;pwned\\x07\\x1b[2J\\u{202e}x"),
        "{out}"
    );
    assert!(
        out.contains("FAIL line 3: expect exists Pod a # \\x1b[31m"),
        "{out}"
    );
    let (code, out, _) = listwatch(&["check", "-"], Some(script));
    assert_eq!(code, 1);
    assert!(!raw(&out) && out.contains("# \\x1b[31m"), "{out}");
    let (code, json, _) = listwatch(&["run", "-", "--json"], Some(script));
    assert_eq!(code, 1);
    assert!(
        !raw(&json) && json.contains("\\u001b]0;pwned\\u0007\\u001b[2J\\u202ex"),
        "{json}"
    );
    // Diagnostics quote the line and the word.
    let (code, _, err) = listwatch(
        &["check", "-"],
        Some("kind Pod\nat 1s crate\u{1b}[2J Pod a\n"),
    );
    assert_eq!(code, 2);
    assert!(!raw(&err) && err.contains("crate\\x1b[2J"), "{err}");
    let (code, _, err) = listwatch(&["check", "no/such/\u{1b}[2J.lw"], None);
    assert_eq!(code, 2);
    assert!(!raw(&err), "{err}");
    // A script piped out of `open` stays verbatim: it is the script, not a display of it.
    let (_, link, _) = listwatch(&["share", "-"], Some(script));
    let (code, opened, _) = listwatch(&["open", link.trim()], None);
    assert_eq!(code, 0);
    assert_eq!(opened, script);
}

#[test]
fn every_subcommand_has_its_help_and_usage_errors_exit_2() {
    for (cmd, words) in [
        ("run", &["--trace", "--json", "FILE"][..]),
        ("check", &["FILE"][..]),
        ("share", &["--base", "--at", "FILE"][..]),
        ("open", &["LINK"][..]),
        ("explore", &["--budget", "--all", "--json", "FILE"][..]),
        ("completions", &["SHELL"][..]),
    ] {
        let (code, out, err) = listwatch(&[cmd, "--help"], None);
        assert_eq!(code, 0, "{cmd} --help: {err}");
        for w in words {
            assert!(out.contains(w), "`{cmd} --help` mentions {w}:\n{out}");
        }
        let (code, out, _) = listwatch(&["help", cmd], None);
        assert_eq!(code, 0);
        assert!(out.contains(&format!("listwatch {cmd}")), "{out}");
    }
    // No arguments: the help, as before.
    let (code, out, _) = listwatch(&[], None);
    assert_eq!(code, 0);
    assert!(out.contains("Exit codes:"), "{out}");
    // Usage errors are exit code 2, like invalid scripts.
    for args in [
        &["run"][..],
        &["check"][..],
        &["open"][..],
        &["open", "a", "b"][..],
        &["run", "x.lw", "--frobnicate"][..],
        &["share", "x.lw", "--at", "soon"][..],
        &["explore", "x.lw", "--budget", "0"][..],
        &["completions", "tcsh"][..],
        &["--color", "sometimes", "check", "x.lw"][..],
    ] {
        let (code, _, err) = listwatch(args, None);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(err.starts_with("error: "), "{args:?}: {err}");
    }
    let (_, _, err) = listwatch(&["chek", "x.lw"], None);
    assert!(err.contains("did you mean `check`?"), "{err}");
    let (_, _, err) = listwatch(&["share", "x.lw", "--at", "soon"], None);
    assert!(err.contains("`soon` is not a time"), "{err}");
    let (_, _, err) = listwatch(&["share", "x.lw", "--at", "1.23456789012345678s"], None);
    assert!(err.contains("more than 15 significant digits"), "{err}");
}

#[test]
fn completions_are_printed_for_each_shell() {
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let (code, out, err) = listwatch(&["completions", shell], None);
        assert_eq!(code, 0, "{err}");
        assert!(
            out.contains("listwatch") && out.contains("explore") && out.contains("budget"),
            "{shell}: {out}"
        );
    }
}

#[test]
fn color_is_auto_always_or_never() {
    let file = "scenarios/02-overflow-410-relist.lw";
    // auto: standard output is a pipe here, so plain.
    let (code, out, _) = listwatch(&["check", file], None);
    assert_eq!(code, 0);
    assert!(!out.contains('\u{1b}'), "{out}");
    let (code, out, _) = listwatch(&["check", file, "--color", "always"], None);
    assert_eq!(code, 0);
    assert!(out.contains("\u{1b}[32mok\u{1b}[0m"), "{out}");
    let (_, out, _) = listwatch(&["--color=always", "run", file], None);
    assert!(out.contains("\u{1b}[32mPASS\u{1b}[0m"), "{out}");
    let (_, out, _) = listwatch(&["--color", "never", "run", file], None);
    assert!(!out.contains('\u{1b}'), "{out}");
    let failing = "kind Pod\nat 0s create Pod a\nexpect exists Pod b\n";
    let (code, out, _) = listwatch(&["check", "-", "--color", "always"], Some(failing));
    assert_eq!(code, 1);
    assert!(out.contains("\u{1b}[31mFAILED\u{1b}[0m"), "{out}");
}

/// Output piped into a reader that stops early (`| head`) is not an error: the program stops
/// writing quietly (`print!` would panic) and still ends with its own exit code.
#[test]
fn a_reader_that_stops_early_is_not_an_error_and_keeps_the_exit_code() {
    // A scenario whose expectation fails: exit code 1 whether or not anyone reads the output.
    let failing = "kind Pod\nat 1s create Pod a\nexpect creates == 5\n";
    for (args, stdin, code) in [
        (&["completions", "bash"][..], None, 0),
        (
            &["run", "scenarios/09-work-queue-dedup.lw", "--trace"][..],
            None,
            0,
        ),
        (&["run", "-", "--trace"][..], Some(failing), 1),
    ] {
        let mut child = spawn(args);
        // Close the reading end first: every write, whenever it comes, meets a closed pipe.
        drop(child.stdout.take());
        let (exit, _, err) = finish(child, stdin.unwrap_or_default().as_bytes());
        assert_eq!(exit, code, "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
}

/// Hostile inputs (issue 21) end with a located message that names the limit they hit: a
/// logic block that could write past the limit per reconcile is refused at the line where a
/// path passes it (255 `scale`s ran for over 60 s), and a delete of more live children of one
/// object than the limit stops the run at its statement, exit code 2, after the summary.
#[test]
fn limits_of_the_reconcile_language_are_located_errors() {
    let mut scales = String::from(
        "kind Parent\nkind Child\ncontroller op for Parent\n  logic\n    get p = Parent key\n",
    );
    for _ in 0..255 {
        scales += "    scale Child owned-by p to 1000\n";
    }
    scales += "at 0s create Parent a\nrun 24h\n";
    let (code, out, err) = listwatch(&["run", "-"], Some(&scales));
    assert_eq!(code, 2, "{out}");
    assert!(
        err.contains(
            "error: a reconcile could make 5000 writes by this line, more than the limit of 4096 writes per reconcile"
        ) && err.contains("--> -:10:5"),
        "{err}"
    );
    let children = "kind Parent\nkind Child\nkind Other\ncontroller kids for Parent\n  logic\n    get p = Parent key\n    scale Child owned-by p to 1000\n    list others = Other owned-by p\n    if others.alive >= 1500\n      delete others\ncontroller grand for Child\n  logic\n    get c = Child key\n    get p = Parent owner c\n    create Other key-x owner p\n    create Other key-y owner p\nat 0s create Parent a\nrun 1m\n";
    let (code, out, err) = listwatch(&["run", "-"], Some(children));
    assert_eq!(code, 2, "{out}");
    assert!(
        out.contains("(stopped at the limit of children per object)")
            && out.contains("ESR: fails (not judged: the run stopped at a limit"),
        "{out}"
    );
    assert!(
        err.contains("error: the run stopped here: default/a owns 1500 live Other objects, more than the limit of 1000 children per object")
            && err.contains("--> -:10:7"),
        "{err}"
    );
    let (code, _, err) = listwatch(&["check", "-"], Some(children));
    assert_eq!(code, 2);
    assert!(err.contains("limit of 1000 children per object"), "{err}");
}

/// 50,000 Exact lists, each of which walked etcd's whole history (over 60 s), are answered
/// from its count history; a run at the event cap says which cap.
#[test]
fn fifty_thousand_exact_lists_finish_and_the_event_cap_names_its_value() {
    let exact = "kind Pod\ncompaction off\nevery 1ms 50000 times create Pod p{i}\nevery 1ms 50000 times from 50s probe list Pod resourceVersion=\"{i}\" exact\nrun 2m\nexpect probe listed 25000 items at rv 25001\n";
    let (code, out, _) = listwatch(&["check", "-"], Some(exact));
    assert_eq!(code, 0, "{out}");
    let flap = "kind Parent\nkind Child\ncontroller op for Parent\n  logic\n    get p = Parent key\n    scale Child owned-by p to 1000\n    scale Child owned-by p to 0\nat 0s create Parent a\nrun 24h\n";
    let (code, out, _) = listwatch(&["run", "-"], Some(flap));
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("5000000 events")
            && out.contains("(stopped at the event cap of 5000000 events)"),
        "{out}"
    );
}
