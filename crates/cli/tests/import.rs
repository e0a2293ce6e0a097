//! `listwatch import` as a user runs it: the script on standard output (which `check` passes),
//! the report on standard error, `--json`, and exit code 2 for input it cannot read.

use std::io::Write;
use std::process::{Command, Stdio};

/// Runs the binary with `stdin`: exit code, standard output, standard error.
fn listwatch(args: &[&str], stdin: &[u8]) -> (i32, String, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_listwatch"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary runs");
    // The binary stops reading at its limit: the rest of a large input is refused, not an error.
    let _ = child.stdin.take().map(|mut s| s.write_all(stdin));
    let out = child.wait_with_output().expect("it ends");
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (
        out.status.code().unwrap_or(-1),
        text(&out.stdout),
        text(&out.stderr),
    )
}

/// client-go 1.32 `tools/cache/reflector.go:492` (`%s: watch of %v ended with: %v`) and 1.36
/// `reflector.go:227` (`"Failed to watch"`, verbatim from a kube-controller-manager log).
const PASTE: &str = r#"W1202 10:00:05.123456    1234 reflector.go:492] k8s.io/client-go/informers/factory.go:160: watch of *v1.Pod ended with: too old resource version: 10 (12)
E0919 15:54:02.455011       1 reflector.go:227] "Failed to watch" err="failed to list *v1.PartialObjectMetadata: the server could not find the requested resource" logger="UnhandledError" reflector="k8s.io/client-go/metadata/metadatainformer/informer.go:146" type="*v1.PartialObjectMetadata"
not a log line
"#;

#[test]
fn import_writes_a_script_check_passes_and_a_report() {
    let (code, script, report) = listwatch(&["import", "-"], PASTE.as_bytes());
    assert_eq!(code, 0, "{report}");
    assert!(
        script.starts_with("# Imported: 2 of 3 input lines recognised"),
        "{script}"
    );
    assert!(script.contains("expect factory-160-pod Pod got \"too old resource version: 10 (12)\""));
    assert!(
        report.contains("line 1: statement (script line")
            && report.contains("[klog header, printf message; client-go 1.32 (reflector.go:492)]"),
        "{report}"
    );
    assert!(report.contains("line 2: noted: not reproduced"), "{report}");
    assert!(
        report.contains("line 3: not recognised: no recogniser matched"),
        "{report}"
    );
    let (code, out, err) = listwatch(&["check", "-"], script.as_bytes());
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.starts_with("ok - ("), "{out}");
}

#[test]
fn import_json_carries_both() {
    let path = std::env::temp_dir().join(format!("listwatch-import-{}.log", std::process::id()));
    std::fs::write(&path, PASTE).unwrap();
    let (code, out, err) = listwatch(&["import", path.to_str().unwrap(), "--json"], b"");
    let _ = std::fs::remove_file(&path);
    assert_eq!(code, 0, "{err}");
    assert!(err.is_empty(), "{err}");
    assert!(out.contains("\"format\": \"listwatch-import/1\""), "{out}");
    assert!(out.contains("\"outcome\": \"not-recognised\""), "{out}");
    assert!(out.contains("\"script\": \"# Imported:"), "{out}");
}

#[test]
fn input_it_cannot_read_exits_2() {
    let (code, _, err) = listwatch(&["import", "-"], b"hello\nworld\n");
    assert_eq!(code, 2);
    assert!(err.contains("error: none of the 2 lines"), "{err}");
    assert!(err.contains("line 1: no recogniser matched"), "{err}");

    let big = vec![b'a'; listwatch_script::import::MAX_INPUT_BYTES + 10];
    let (code, out, err) = listwatch(&["import", "-"], &big);
    assert_eq!((code, out.as_str()), (2, ""));
    assert!(err.contains("more than the limit of 1 MiB"), "{err}");

    let (code, _, err) = listwatch(&["import", "-"], b"W1202 \xff\xfe reflector.go:1]\n");
    assert_eq!(code, 2);
    assert!(err.contains("is not UTF-8 text"), "{err}");

    let (code, _, err) = listwatch(&["import", "-"], b"a\0b\n");
    assert_eq!(code, 2);
    assert!(err.contains("line 1 holds binary data"), "{err}");

    let (code, _, err) = listwatch(&["import", "/no/such/file.log"], b"");
    assert_eq!(code, 2);
    assert!(err.contains("cannot read /no/such/file.log"), "{err}");
}

#[test]
fn import_has_its_help() {
    let (code, out, _) = listwatch(&["import", "--help"], b"");
    assert_eq!(code, 0);
    for words in [
        "1 MiB and 10,000 lines",
        "--json",
        "`-` for standard input",
        "Exit codes:",
    ] {
        assert!(out.contains(words), "{words}: {out}");
    }
    assert!(
        out.contains("Usage: listwatch import [OPTIONS] <FILE>"),
        "{out}"
    );
}
