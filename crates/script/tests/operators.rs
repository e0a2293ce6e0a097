//! The gallery's operators written in the reconcile language (26-37): each buggy one passes
//! without faults and fails its expectations under the fault Sieve would inject; each fixed twin
//! passes under the same fault.

use listwatch_script::gallery::GALLERY;

fn script(prefix: &str) -> &'static str {
    GALLERY
        .iter()
        .find(|(n, _)| n.starts_with(prefix))
        .map(|(_, s)| *s)
        .unwrap_or_else(|| panic!("no {prefix}"))
}

fn passes(src: &str) -> bool {
    listwatch_script::run(src).expect("parses").passed()
}

/// (buggy, fixed, the fault lines and any expectation they add).
const PAIRS: &[(&str, &str, &str)] = &[
    (
        "26-",
        "27-",
        "at 0s crash op after 1 write restart-after 2s\n",
    ),
    ("28-", "29-", "at 4s hold op Pvc db-data\n"),
    (
        "30-",
        "31-",
        "at 5s pause b\nat 20s crash op\nat 21s restart op on b\nat 60s resume b\n",
    ),
    (
        "32-",
        "33-",
        "at 4s crash op after 1 write restart-after 2s\n",
    ),
    (
        "34-",
        "35-",
        "at 999ms disconnect op after 0 writes for 2s\n",
    ),
    (
        "36-",
        "37-",
        "at 4s crash op after 1 write restart-after 2s\n",
    ),
];

#[test]
fn each_buggy_operator_fails_under_its_fault_and_its_fix_survives() {
    for (buggy, fixed, fault) in PAIRS {
        let (b, f) = (script(buggy), script(fixed));
        assert!(passes(b), "{buggy} passes without the fault");
        assert!(passes(f), "{fixed} passes without the fault");
        assert!(
            !passes(&format!("{b}\n{fault}")),
            "{buggy} fails under\n{fault}"
        );
        assert!(
            passes(&format!("{f}\n{fault}")),
            "{fixed} survives\n{fault}"
        );
    }
}
