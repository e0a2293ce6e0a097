//! `listwatch explore`'s flags as a user runs them: shards and their merge, the time limit, the
//! JSON summary, and the counterexamples it prints.

use std::process::Command;

fn listwatch(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_listwatch"))
        .args(args)
        .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
        .output()
        .expect("the binary runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn merged_shards_print_what_the_unsharded_run_prints() {
    let dir = std::env::temp_dir().join(format!("listwatch-shards-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = "scenarios/19-explore-stale-delete.lw";
    let mut paths = vec![];
    for i in 0..3 {
        let shard = format!("{i}/3");
        let (code, json, err) = listwatch(&[
            "explore", file, "--all", "--budget", "2000", "--shard", &shard, "--json",
        ]);
        assert!(code == 0 || code == 1, "{err}");
        let p = dir.join(format!("{i}.json"));
        std::fs::write(&p, json).unwrap();
        paths.push(p.to_string_lossy().into_owned());
    }
    let mut args = vec!["explore", "--merge"];
    args.extend(paths.iter().map(String::as_str));
    let (code, merged, err) = listwatch(&args);
    let (code1, whole, _) = listwatch(&["explore", file, "--all", "--budget", "2000"]);
    assert_eq!((code, merged.clone()), (code1, whole), "{err}");
    assert!(err.contains("merged 3 shards"), "{err}");
    // A missing shard is refused.
    let (code, _, err) = listwatch(&["explore", "--merge", &paths[0], &paths[1]]);
    assert_eq!(code, 2, "{err}");
    let (code, _, err) = listwatch(&["explore", file, "--shard", "3/3"]);
    assert_eq!(code, 2, "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_json_summary_has_coverage_and_rate() {
    let (code, json, _) = listwatch(&[
        "explore",
        "scenarios/22-explore-crash-between-writes-fixed.lw",
        "--json",
        "--threads",
        "1",
    ]);
    assert_eq!(code, 0);
    for k in [
        "\"coverage\":{",
        "\"crash\":{\"candidates\":",
        "\"schedules_per_second\":",
        "\"counterexample\":null",
        "\"complete\":true",
    ] {
        assert!(json.contains(k), "{k} in {json}");
    }
}

#[test]
fn a_time_limit_stops_the_search_and_reports() {
    let (code, _, err) = listwatch(&[
        "explore",
        "scenarios/04-bookmarks-save-a-relist.lw",
        "--budget",
        "1000000",
        "--all",
        "--time",
        "1s",
    ]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("the time limit ended the search"), "{err}");
}

#[test]
fn a_scenario_failing_without_faults_is_printed_and_esr_is_expected() {
    let dir = std::env::temp_dir().join(format!("listwatch-base-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // 21 without its expectations: only ESR can break, so the counterexample adds `expect esr`.
    let src: String = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../scenarios/21-explore-crash-between-writes.lw"
    ))
    .unwrap()
    .lines()
    .filter(|l| !l.starts_with("expect"))
    .map(|l| format!("{l}\n"))
    .collect();
    let p = dir.join("esr.lw");
    std::fs::write(&p, &src).unwrap();
    let (code, out, _) = listwatch(&["explore", p.to_str().unwrap()]);
    assert_eq!(code, 1);
    assert!(out.contains("\nexpect esr\n"), "{out}");
    let cx = dir.join("cx.lw");
    std::fs::write(&cx, &out).unwrap();
    let (code, _, _) = listwatch(&["check", cx.to_str().unwrap()]);
    assert_eq!(code, 1, "the counterexample fails check");
    // Failing with no fault: the scenario itself is the counterexample.
    let bad = src + "expect final RabbitmqCluster rabbit status == 4\n";
    std::fs::write(&p, &bad).unwrap();
    let (code, out, err) = listwatch(&["explore", p.to_str().unwrap()]);
    assert_eq!(code, 1);
    assert!(err.contains("already fails without faults"), "{err}");
    assert!(out.contains("fails without any fault"), "{out}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A shard summary whose counts are forged (`1e11` and `2^62` shards allocated 800 GB or
/// panicked with "capacity overflow") is refused with a clear error and exit code 2, and so is
/// an array of tiny values too large to parse.
#[test]
fn a_merge_of_forged_summaries_is_an_error_not_a_crash() {
    let dir = std::env::temp_dir().join(format!("listwatch-forged-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (code, json, err) = listwatch(&[
        "explore",
        "scenarios/19-explore-stale-delete.lw",
        "--budget",
        "50",
        "--shard",
        "0/2",
        "--json",
    ]);
    assert!(code == 0 || code == 1, "{err}");
    let shard = r#""shard":[0,2]"#;
    assert!(json.contains(shard), "{json}");
    let huge = format!("[{}0]", "0,".repeat(8_000_000));
    let table = [
        (
            json.replace(shard, r#""shard":[0,100000000000]"#),
            "`shard count` is 100000000000, not a whole number from 0 to 1000000",
        ),
        (
            json.replace(shard, r#""shard":[0,4611686018427387904]"#),
            "`shard count` is 4611686018427387904",
        ),
        (
            json.replace(shard, r#""shard":[0,-1]"#),
            "`shard count` is -1",
        ),
        (
            json.replace(shard, r#""shard":[0,1e11]"#),
            "`shard count` is 100000000000.0",
        ),
        (huge, "more than the limit of 8000000 JSON values"),
    ];
    for (i, (text, message)) in table.iter().enumerate() {
        let p = dir.join(format!("{i}.json"));
        std::fs::write(&p, text).unwrap();
        let p = p.to_string_lossy().into_owned();
        let (code, out, err) = listwatch(&["explore", "--merge", &p, &p]);
        assert_eq!(code, 2, "{out}{err}");
        assert!(err.starts_with("error: ") && err.contains(message), "{err}");
        assert!(!err.contains("panicked"), "{err}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `--controller NAME` (issue 24): faults against that controller only; an undeclared name is
/// a usage error (exit 2) with the nearest name. The counterexample printed ends with a newline.
#[test]
fn explore_against_one_controller_and_a_counterexample_ends_its_line() {
    let file = "scenarios/26-own-logic-intermediate-already-exists.lw";
    let (code, out, err) = listwatch(&["explore", file, "--controller", "op"]);
    assert_eq!(code, 1, "{err}");
    assert!(out.ends_with('\n'), "{out:?}");
    let (code, _, err) = listwatch(&["explore", file, "--controller", "opp"]);
    assert_eq!(code, 2);
    assert!(err.contains("did you mean `op`?"), "{err}");
}
