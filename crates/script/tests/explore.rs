//! The explorer's proof: the gallery's buggy controllers are found broken with no fault written
//! in their scripts, the counterexample is itself a scenario that fails, and the fixed twins
//! survive the same budget.

use listwatch_core::explore::{Budget, Fault};
use listwatch_script::explore::{counterexample, explorer};
use listwatch_script::gallery::GALLERY;

fn script(name: &str) -> &'static str {
    GALLERY
        .iter()
        .find(|(n, _)| n.starts_with(name))
        .map(|(_, s)| *s)
        .unwrap_or_else(|| panic!("no {name}"))
}

const BUDGET: Budget = Budget {
    schedules: 5000,
    first_failure: true,
};

fn find(name: &str) -> (Vec<Fault>, String) {
    let src = script(name);
    let (mut ex, scenario) = explorer(src, BUDGET).unwrap();
    assert!(ex.base_broken.is_empty(), "{name} passes without faults");
    ex.run();
    let f = ex
        .failures
        .first()
        .unwrap_or_else(|| panic!("{name}: nothing found in {:?}", ex.stats))
        .clone();
    let cx = counterexample(src, &scenario, &f, ex.end_ms());
    // The counterexample is a scenario: it parses, and it fails what the original promised.
    let report = listwatch_script::run(&cx).expect("the counterexample parses");
    let esr = listwatch_core::verdict::check(
        &report.sim,
        &listwatch_core::verdict::Expect::Esr { controller: None },
    );
    assert!(
        !report.passed() || !esr.pass,
        "{name}: the counterexample fails\n{cx}"
    );
    (f.faults, cx)
}

fn survives(name: &str) {
    survives_script(name, script(name));
}

fn survives_script(name: &str, src: &str) {
    let (mut ex, _) = explorer(src, BUDGET).unwrap();
    ex.run();
    assert!(ex.failures.is_empty(), "{name} broke: {:?}", ex.failures);
    assert!(
        ex.stats.tried > 0 && ex.stats.tried == ex.stats.space.min(BUDGET.schedules),
        "{:?}",
        ex.stats
    );
}

#[test]
fn stale_deletion_is_found_and_its_fix_survives() {
    let (faults, cx) = find("19-");
    assert!(matches!(faults[..], [Fault::Stale { .. }]), "{faults:?}");
    assert!(
        cx.contains("pause b") && cx.contains("restart operator on b"),
        "{cx}"
    );
    survives("20-");
}

#[test]
fn crash_between_writes_is_found_and_its_fix_survives() {
    let (faults, cx) = find("21-");
    assert!(
        matches!(
            faults[..],
            [Fault::CrashBetweenWrites {
                after_writes: 1,
                ..
            }]
        ),
        "{faults:?}"
    );
    assert!(
        cx.contains("crash operator after 1 write restart-after 5s"),
        "{cx}"
    );
    survives("22-");
}

#[test]
fn missed_state_is_found() {
    let (faults, _) = find("23-");
    assert!(
        matches!(
            faults[..],
            [Fault::Unobserved { .. }] | [Fault::Hold { .. }]
        ),
        "{faults:?}"
    );
}

/// Level-triggered controllers keep ESR under every single fault and pair of faults. (Their
/// scenarios' count expectations are observations of one run, not properties: faults change
/// them, so only ESR is kept here.)
#[test]
fn level_triggered_gallery_controllers_keep_esr() {
    for name in ["09-", "17-", "10-", "08-"] {
        let only_esr: String = script(name)
            .lines()
            .filter(|l| !l.starts_with("expect") || l.trim() == "expect esr")
            .map(|l| format!("{l}\n"))
            .collect();
        survives_script(name, &only_esr);
    }
}

#[test]
fn exploring_is_deterministic() {
    let a = find("19-");
    let b = find("19-");
    assert_eq!(a, b);
}
