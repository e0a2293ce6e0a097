//! Arbitrary input never panics or hangs: random strings, and gallery scripts mutated at random.
//! Every error carries a line and column inside the script.

use listwatch_core::TimeMs;
use listwatch_script::gallery::GALLERY;
use proptest::prelude::*;

fn check_diagnostics(
    src: &str,
    diags: &[listwatch_script::Diagnostic],
) -> Result<(), TestCaseError> {
    prop_assert!(!diags.is_empty());
    let lines = src.lines().count().max(1);
    for d in diags {
        prop_assert!(
            d.line >= 1 && d.line <= lines + 1,
            "line {} of {lines}",
            d.line
        );
        prop_assert!(d.col >= 1);
        prop_assert!(!d.message.is_empty());
        // Rendering never panics either.
        let _ = listwatch_script::render(d, "x.lw", src);
    }
    Ok(())
}

/// Parse, and when it parses run it with small caps: neither may panic.
fn exercise(src: &str) -> Result<(), TestCaseError> {
    match listwatch_script::parse(src) {
        Err(d) => check_diagnostics(src, &d),
        Ok(mut s) => {
            s.config.limits.max_events = 20_000;
            s.config.end_ms = s.config.end_ms.min(TimeMs(3_600_000));
            s.config.timeline.retain(|t| t.at_ms <= s.config.end_ms);
            let _ = listwatch_script::run_scenario(&s);
            Ok(())
        }
    }
}

#[derive(Debug, Clone)]
enum Mutation {
    DeleteLine(usize),
    DuplicateLine(usize),
    SwapWords(usize, usize, usize),
    ReplaceWord(usize, usize, String),
    InsertChar(usize, char),
    Truncate(usize),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    let word = prop_oneof![
        Just("0".to_string()),
        Just("-1".to_string()),
        Just("99999999999999999999".to_string()),
        Just("1e308s".to_string()),
        Just("\"".to_string()),
        Just("{i}".to_string()),
        Just("Pod".to_string()),
        Just("every".to_string()),
        Just("expect".to_string()),
        "[a-z0-9./{}-]{0,12}",
        any::<String>(),
    ];
    prop_oneof![
        any::<usize>().prop_map(Mutation::DeleteLine),
        any::<usize>().prop_map(Mutation::DuplicateLine),
        (any::<usize>(), any::<usize>(), any::<usize>())
            .prop_map(|(l, a, b)| Mutation::SwapWords(l, a, b)),
        (any::<usize>(), any::<usize>(), word).prop_map(|(l, w, s)| Mutation::ReplaceWord(l, w, s)),
        (any::<usize>(), any::<char>()).prop_map(|(p, c)| Mutation::InsertChar(p, c)),
        any::<usize>().prop_map(Mutation::Truncate),
    ]
}

fn mutate(src: &str, ms: &[Mutation]) -> String {
    let mut lines: Vec<String> = src.lines().map(String::from).collect();
    for m in ms {
        if lines.is_empty() {
            break;
        }
        let n = lines.len();
        match m {
            Mutation::DeleteLine(i) => {
                lines.remove(i % n);
            }
            Mutation::DuplicateLine(i) => {
                let l = lines[i % n].clone();
                lines.insert(i % n, l);
            }
            Mutation::SwapWords(l, ..) | Mutation::ReplaceWord(l, ..)
                if lines[l % n].split_whitespace().count() == 0 => {}
            Mutation::SwapWords(l, a, b) => {
                let mut w: Vec<&str> = lines[l % n].split_whitespace().collect();
                let k = w.len();
                w.swap(a % k, b % k);
                lines[l % n] = w.join(" ");
            }
            Mutation::ReplaceWord(l, a, s) => {
                let mut w: Vec<String> =
                    lines[l % n].split_whitespace().map(String::from).collect();
                let k = w.len();
                w[a % k] = s.clone();
                lines[l % n] = w.join(" ");
            }
            Mutation::InsertChar(p, c) => {
                let l = &mut lines[p % n];
                let at = l
                    .char_indices()
                    .map(|(i, _)| i)
                    .nth(p % (l.chars().count() + 1))
                    .unwrap_or(l.len());
                l.insert(at, *c);
            }
            Mutation::Truncate(p) => {
                let l = &mut lines[p % n];
                let at = l
                    .char_indices()
                    .map(|(i, _)| i)
                    .nth(p % (l.chars().count() + 1))
                    .unwrap_or(l.len());
                l.truncate(at);
            }
        }
    }
    lines.join("\n")
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_strings_never_panic(src in any::<String>()) {
        exercise(&src)?;
    }

    #[test]
    fn arbitrary_statement_soup_never_panics(lines in prop::collection::vec(
        "(kind|controller|at|every|expect|run|seed|apiserver|compaction|bookmarks|  workers|  watches) [ -~]{0,40}", 0..12)) {
        exercise(&lines.join("\n"))?;
    }

    #[test]
    fn mutated_gallery_scripts_never_panic(
        which in 0..GALLERY.len(),
        ms in prop::collection::vec(mutation(), 1..6),
    ) {
        exercise(&mutate(GALLERY[which].1, &ms))?;
    }
}

#[test]
fn oversized_and_absurd_inputs_get_clear_errors() {
    let big = "# x\n".repeat(20_000);
    let e = listwatch_script::parse(&big).unwrap_err();
    assert!(e[0].message.contains("64 KiB"), "{}", e[0].message);
    for (src, needle) in [
        ("kind Pod cache fixed 0", "at least 1"),
        ("kind Pod cache fixed 999999999", "out of range"),
        ("kind Pod\nat 25h create Pod a", "24h"),
        (
            "kind Pod\nevery 1ms 200000 times create Pod a{i}",
            "out of range",
        ),
        (
            "kind Pod\nat 1s create Pod a spec 99999999999",
            "out of range",
        ),
        (
            "kind Pod\ncontroller c for Pod children Pod\n  workers 1000",
            "out of range",
        ),
        ("kind Pod\nrun 100h", "24h"),
        ("kind Pod\nat 1s say \"unterminated", "closing"),
        (
            "kind Pod\nat 1s create Pod a/b/c",
            "not a valid object name",
        ),
    ] {
        let e = listwatch_script::parse(src).unwrap_err();
        assert!(
            e.iter().any(|d| d.message.contains(needle)),
            "{src}: {:?}",
            e
        );
    }
}

#[test]
fn typos_get_the_nearest_word() {
    let e =
        listwatch_script::parse("kind Deployment\ncontroller c for Deploymnet mirror Deployment")
            .unwrap_err();
    assert_eq!(e[0].message, "unknown kind `Deploymnet`");
    assert_eq!(e[0].help.as_deref(), Some("did you mean `Deployment`?"));
    assert_eq!((e[0].line, e[0].col, e[0].len), (2, 18, 10));
    let e = listwatch_script::parse("kind Pod\nat 1s crate Pod a").unwrap_err();
    assert_eq!(e[0].help.as_deref(), Some("did you mean `create`?"));
    let e = listwatch_script::parse("kidn Pod").unwrap_err();
    assert_eq!(e[0].help.as_deref(), Some("did you mean `kind`?"));
    let rendered = listwatch_script::render(&e[0], "t.lw", "kidn Pod");
    assert!(
        rendered.contains("--> t.lw:1:1") && rendered.contains("^^^^"),
        "{rendered}"
    );
}

#[test]
fn runs_over_the_event_cap_stop_and_say_so() {
    let src = "kind Pod\nkind Copy\ncontroller c for Pod mirror Copy\nevery 1ms 100000 times create Pod p{i}\n";
    let mut s = listwatch_script::parse(src).unwrap();
    s.config.limits.max_events = 1000;
    let r = listwatch_script::run_scenario(&s).unwrap();
    assert_eq!(r.sim.stopped(), Some(listwatch_core::Stop::EventCap));
    assert!(r.sim.trace().len() <= 1000);
}
