//! Data-driven: a script in, the first diagnostic out (line, column and what it says). Every row
//! is a script that once was accepted silently, or rejected at the wrong place or in misleading
//! words.

/// (script, line, column, a part of the message or of its help).
const CASES: &[(&str, usize, usize, &str)] = &[
    // Numbers: the magnitude of i64::MIN does not fit an i64.
    (
        "seed -9223372036854775808\nkind Pod\n",
        1,
        6,
        "out of range",
    ),
    (
        "kind Pod\nat 1s create Pod a spec -9223372036854775808\n",
        2,
        25,
        "out of range",
    ),
    (
        "kind Pod\nat 1s status Pod a -9223372036854775808\n",
        2,
        20,
        "out of range",
    ),
    (
        "kind Pod\nexpect creates == -9223372036854775808\n",
        2,
        19,
        "out of range",
    ),
    // More significant digits than an f64 keeps: said as such, wherever the number stands.
    (
        "kind Pod\nat 1.23456789012345678s create Pod a\n",
        2,
        4,
        "1.23456789012345678 has more than 15 significant digits; listwatch numbers keep 15",
    ),
    (
        "kind Pod\nat 1s create Pod a\nat +0.1234567890123456s delete Pod a\n",
        3,
        4,
        "0.1234567890123456 has more than 15 significant digits",
    ),
    (
        "kind Pod\ncontroller c for Pod children Pod\n  resync 1.00000000000000001m\n",
        3,
        10,
        "1.00000000000000001 has more than 15 significant digits",
    ),
    (
        "kind Pod\ncontroller c for Pod children Pod\n  errors 12.3456789012345678%\n",
        3,
        10,
        "12.3456789012345678 has more than 15 significant digits",
    ),
    ("kind Db\nkind Pvc\ncontroller op for Db\n  logic\n    get db = Db key\n    requeue after 3.14159265358979323s\n", 6, 19, "3.14159265358979323 has more than 15"),
    // Negative settings are errors, not 0.
    ("page-size -1\nkind Pod\n", 1, 11, "cannot be negative"),
    // What a name may contain.
    ("kind Pöd\n", 1, 6, "ASCII letters and digits"),
    ("kind Ärger\n", 1, 6, "ASCII letters and digits"),
    ("kind 9Pod\n", 1, 6, "starting with a letter"),
    ("kind Pod-x\n", 1, 6, "ASCII letters and digits"),
    (
        "kind Pod\ncontroller c\u{1b}[2J for Pod children Pod\n",
        2,
        12,
        "not a valid controller name",
    ),
    (
        "kind Pod\napiserver \u{202e}x\n",
        2,
        11,
        "not a valid apiserver name",
    ),
    // Data children of the primary kind would beget `a-data-data-...` without end.
    (
        "kind Db\ncontroller op for Db two-writes Db\n",
        2,
        33,
        "the child kind must differ from the primary kind",
    ),
    (
        "kind Db\ncontroller op for Db stale-delete Db fixed\n",
        2,
        35,
        "`a-data-data`",
    ),
    (
        "kind Db\nkind X\ncontroller op for Db wipe-on-zero Db\n",
        3,
        35,
        "must differ",
    ),
    // Expectation scopes that name nothing are errors, not expectations that pass vacuously.
    (
        "kind Pod\nkind Copy\ncontroller ctl for Pod mirror Copy\nat 1s create Pod web\nexpect reconciles ctl webb == 0\n",
        5,
        23,
        "did you mean `web`?",
    ),
    (
        "kind Pod\nkind Copy\ncontroller ctl for Pod mirror Copy\nat 1s create Pod web\nexpect creates ctl Coppy == 1\n",
        5,
        20,
        "did you mean `Copy`?",
    ),
    (
        "kind Pod\nat 1s create Pod web\nexpect relists clt == 0\n",
        3,
        16,
        "is not a controller, a kind or an object of this scenario",
    ),
    // ... and so would a cycle of kinds through controllers, one of them making data children.
    (
        "kind Db\nkind X\ncontroller m for Db mirror X\ncontroller op for X two-writes Db\n",
        4,
        32,
        "cycle of kinds (X -> Db -> X)",
    ),
    (
        "kind Db\nkind X\ncontroller op for X two-writes Db\ncontroller m for Db mirror X\n",
        4,
        28,
        "cycle of kinds (Db -> X -> Db)",
    ),
    // A controller's own logic: every statement has a located error and a suggestion.
    // A `for`'s variable is its body's: a statement, or a helper called, after the loop
    // cannot read it (Go's `for _, p := range pods` scopes `p` to the loop).
    ("kind Db\nkind Pvc\ncontroller op for Db\n  logic\n    get db = Db key\n    list ps = Pvc owned-by db\n    for p in ps\n      update p spec 1\n    update p spec 2\n", 9, 12, "`p` is bound only inside its for loop"),
    ("kind Db\nkind Pvc\ncontroller op for Db\n  helper touch\n    update p spec 2\n  logic\n    get db = Db key\n    list ps = Pvc owned-by db\n    for p in ps\n      call touch\n    call touch\n", 5, 12, "`p` is bound only inside its for loop"),
    ("kind Db\nkind Pvc\ncontroller op for Db\n  logic\n    gte db = Db key\n", 5, 5, "did you mean `get`?"),
    ("kind Db\nkind Pvc\ncontroller op for Db\n  logic\n    get db = Dbb key\n", 5, 14, "did you mean `Db`?"),
    ("kind Db\nkind Pvc\ncontroller op for Db\n  logic\n    get db = Db kye\n", 5, 17, "did you mean `key`?"),
    ("kind Db\nkind Pvc\ncontroller op for Db\n  logic\n    get db = Db key\n    if db exsts\n      done\n", 6, 11, "did you mean `exists`?"),
    ("kind Db\nkind Pvc\ncontroller op for Db\n  logic\n    get db = Db key\n    if dbb absent\n      done\n", 6, 8, "did you mean `db`?"),
    ("kind Db\nkind Pvc\ncontroller op for Db\n  logic\n    get db = Db key\n    if db.spc == 0\n      done\n", 6, 11, "did you mean `spec`?"),
    ("kind Db\nkind Pvc\ncontroller op for Db\n  logic\n    get db = Db key\n    if db absent\n    done\n", 6, 5, "needs an indented body"),
    ("kind Db\nkind Pvc\ncontroller op for Db\n  logic\n    get db = Db key\n    done\n    create Pvc key-data owner db\n", 7, 5, "never reached"),
    ("kind Db\nkind Pvc\ncontroller op for Db\n  logic\n    get db = Db key\n    create Pvc key-data owner db on-error contnue\n", 6, 43, "did you mean `continue`?"),
    ("kind Db\nkind Pvc\ncontroller op for Db\n  logic\n    get db = Db key\n    update db\n", 6, 12, "needs `spec VALUE` or `status VALUE`"),
    ("kind Db\nkind Pvc\ncontroller op for Db\n  logic\n    get db = Db key\n    remember last = db.spec\n    if memory.lst == 0\n      done\n", 7, 15, "did you mean `memory.last`?"),
    ("kind Db\nkind Pvc\ncontroller op for Db\n  logic\n    get db = Db key\n    requeue after 3x\n", 6, 19, "not a duration"),
    ("kind Db\nkind Pvc\ncontroller op for Db\n  logic\n    get db = Db key\n    get db = Pvc key-data\n", 6, 9, "already bound"),
    ("kind Db\nkind Pvc\ncontroller op for Db\n  logic\n    get key = Db key\n", 5, 9, "a word of the language"),
    ("kind Db\nkind Pvc\ncontroller op for Db\n  logic\n    get db = Db key\n    list pods = Pvc owned-by db\n    if pods.spec == 1\n      done\n", 7, 13, "`pods` is a list"),
    ("kind Db\nkind Pvc\ncontroller op for Db\n  logic\n    get db = Db key\n    require db exists\n", 6, 5, "belongs in a `desired` block"),
    ("kind Db\nkind Pvc\ncontroller op for Db\n  logic\n    get db = Db key\n  desired\n    get db = Db key\n    delete db\n", 8, 5, "does not write"),
    ("kind Db\nkind Pvc\ncontroller op for Db\n  logic\n    get db = Db key\n  desired\n    reqire db exists\n", 7, 5, "did you mean `require`?"),
    ("kind Db\nkind Pvc\ncontroller op for Db children Pvc\n  logic\n    get db = Db key\n", 4, 3, "already has a built-in behaviour"),
    ("kind Db\nkind Pvc\ncontroller op for Db\n  workers 2\n", 3, 12, "no behaviour and no `logic` block"),
    ("kind Db\ncontroller op for Db\n  logic\n    get db = Db key\n    create Db key-x owner db\n", 3, 3, "closes a cycle of kinds"),
    ("kind Db\ncontroller op for Db\n  logic\n", 3, 3, "block is empty"),
];

#[test]
fn each_script_gets_its_located_diagnostic() {
    let mut failures = vec![];
    for &(src, line, col, needle) in CASES {
        match listwatch_script::parse(src) {
            Ok(_) => failures.push(format!("{src:?}: parsed, expected `{needle}`")),
            Err(d) => {
                let d = &d[0];
                let text = format!("{} / {}", d.message, d.help.as_deref().unwrap_or(""));
                if (d.line, d.col) != (line, col) || !text.contains(needle) {
                    failures.push(format!(
                        "{src:?}: got {}:{} {text}, expected {line}:{col} `{needle}`",
                        d.line, d.col
                    ));
                }
            }
        }
    }
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}

/// One typo on a controller line is one diagnostic: its options and its logic, which depend on
/// it, are not each reported as unknown options; an error after them still is.
#[test]
fn a_line_that_fails_is_reported_once_not_for_every_line_under_it() {
    let logic = "  workers 2\n  logic\n    get db = Db key\n    if db absent\n      done\n    update db spec 1\n";
    for (src, want) in [
        // The kind misspelt on the controller line.
        (format!("kind Db\ncontroller op for Dbb\n{logic}run 1m\n"), vec![(2, 19)]),
        // A block head that fails: its statements go with it, the options around it do not.
        (
            "kind Db\nkind Pvc\ncontroller op for Db children Pvc\n  logic\n    get db = Db key\n    done\n  workers 0\nrun 1m\n".to_string(),
            vec![(4, 3), (7, 3)],
        ),
        // After the failed controller's lines, the next statement is read as usual.
        (format!("kind Db\ncontroller op for Dbb\n{logic}at 1s crate Db a\nrun 1m\n"), vec![(2, 19), (9, 7)]),
    ] {
        let d = listwatch_script::parse(&src).unwrap_err();
        let at: Vec<(usize, usize)> = d.iter().map(|d| (d.line, d.col)).collect();
        assert_eq!(at, want, "{src:?}: {d:?}");
    }
}

#[test]
fn long_names_are_refused() {
    let src = format!("kind P{}\n", "o".repeat(63));
    let d = listwatch_script::parse(&src).unwrap_err();
    assert!(d[0].message.contains("more than the limit of 63"), "{d:?}");
    let src = format!(
        "kind Pod\ncontroller c{} for Pod mirror Pod\n",
        "x".repeat(63)
    );
    let d = listwatch_script::parse(&src).unwrap_err();
    assert!(d[0].message.contains("more than the limit of 63"), "{d:?}");
    listwatch_script::parse(&format!("kind P{}\n", "o".repeat(62))).expect("63 is allowed");
}

#[test]
fn line_breaks_and_a_bom_are_what_an_editor_shows() {
    // A lone CR ends a line: the error is on line 2, not in a 1-line script.
    let d = listwatch_script::parse("kind Pod\rat 1s crate Pod a\r").unwrap_err();
    assert_eq!((d[0].line, d[0].col), (2, 7), "{d:?}");
    let d = listwatch_script::parse("kind Pod\r\n\r\nat 1s crate Pod a\r\n").unwrap_err();
    assert_eq!((d[0].line, d[0].col), (3, 7), "{d:?}");
    // The BOM is not part of the first word.
    let s = listwatch_script::parse("\u{feff}kind Pod\nat 1s create Pod a\n").unwrap();
    assert_eq!(s.config.kinds[0].name, "Pod");
    let d = listwatch_script::parse("\u{feff}kidn Pod\n").unwrap_err();
    assert_eq!((d[0].line, d[0].col), (1, 1), "{d:?}");
    let shown = listwatch_script::render(&d[0], "x.lw", "\u{feff}kidn Pod\n");
    assert!(shown.contains("1 | kidn Pod\n"), "{shown}");
}

/// Configuration errors point at what declared the offending thing, not at 1:1.
const CONFIG_CASES: &[(&str, usize, usize, &str)] = &[
    (
        "kind Pod\nat 24h create Pod a\n",
        2,
        4,
        "the run ends 2m after its last entry, at 24h2m",
    ),
    ("kind Pod\nat 24h create Pod a\n", 2, 4, "write `run 24h`"),
    (
        "kind Pod\nat 1439m create Pod a\nat 1s say \"x\"\n",
        2,
        4,
        "past the limit of 24h",
    ),
    (
        "kind Pod\nrun 5s\nat 1s create Pod a\nat 10s create Pod b\n",
        4,
        4,
        "this entry at 10s comes after the end of the run at 5s",
    ),
    (
        "kind Pod\nrun 5s\nevery 1s 3 times from 4s create Pod b{i}\n",
        3,
        1,
        "lengthen the run: `run 6s` or more on line 2",
    ),
    // A streaming list needs bookmarks (sendInitialEvents requires allowWatchBookmarks:
    // `apimachinery/pkg/apis/meta/internalversion/validation/validation.go`); the error points
    // at the setting that decided it.
    (
        "kind ReplicaSet\nkind Pod\nkubernetes 1.35\nbookmarks off\ncontroller rs for ReplicaSet children Pod\nrun 5s\n",
        4,
        11,
        "controller rs: a streaming list",
    ),
    (
        "kind ReplicaSet\nkind Pod\nstreaming-list on\ncontroller rs for ReplicaSet children Pod\n  bookmarks off\nrun 5s\n",
        5,
        13,
        "turn `bookmarks on` or `streaming-list off`",
    ),
    (
        "kind ReplicaSet\nkind Pod\nbookmarks off\ncontroller rs for ReplicaSet children Pod\n  streaming-list on\nrun 5s\n",
        5,
        18,
        "controller rs: a streaming list",
    ),
];

#[test]
fn configuration_errors_are_located() {
    let mut failures = vec![];
    for &(src, line, col, needle) in CONFIG_CASES {
        match listwatch_script::parse(src) {
            Ok(_) => failures.push(format!("{src:?}: parsed, expected `{needle}`")),
            Err(d) => {
                let d = &d[0];
                let text = format!("{} / {}", d.message, d.help.as_deref().unwrap_or(""));
                if (d.line, d.col) != (line, col) || !text.contains(needle) {
                    failures.push(format!(
                        "{src:?}: got {}:{} {text}, expected {line}:{col} `{needle}`",
                        d.line, d.col
                    ));
                }
            }
        }
    }
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}

#[test]
fn bursts_cannot_multiply_text_without_bound() {
    // A 64 KiB script whose share link is tiny once held 100,000 copies of a 60 KiB narration.
    let text = "x".repeat(60_000);
    let src = format!("kind Pod\nevery 1ms 100000 times say \"{text}\"\n");
    let started = std::time::Instant::now();
    let d = listwatch_script::parse(&src).unwrap_err();
    assert!(
        started.elapsed().as_secs_f64() < 8.0,
        "{:?}",
        started.elapsed()
    );
    assert_eq!((d[0].line, d[0].col), (2, 1), "{d:?}");
    assert!(
        d[0].message
            .contains("narration would exceed the limit of 1 MiB")
            && d[0].message.contains("100000 times"),
        "{d:?}"
    );
    // The same with `{i}` in the text, and across several lines.
    let src = format!("kind Pod\nevery 1ms 100000 times say \"{{i}}{text}\"\n");
    let d = listwatch_script::parse(&src).unwrap_err();
    assert_eq!((d[0].line, d[0].col), (2, 1), "{d:?}");
    let line = format!("at 1s say \"{}\"\n", "y".repeat(20_000));
    let mut src = "kind Pod\nevery 1ms 60 times say \"".to_string() + &"z".repeat(17_000) + "\"\n";
    src += &line.repeat(2);
    let d = listwatch_script::parse(&src).unwrap_err();
    assert_eq!(
        (d[0].line, d[0].col),
        (4, 1),
        "the second line past 1 MiB: {d:?}"
    );
    // Long object names, repeated.
    let name = "n".repeat(240);
    let src = format!("kind Pod\nevery 1ms 100000 times create Pod {name}{{i}}\n");
    let d = listwatch_script::parse(&src).unwrap_err();
    assert!(d[0].message.contains("4 MiB"), "{d:?}");
    // Within the limits a burst still expands, each repetition its own.
    let s = listwatch_script::parse("kind Pod\nevery 1s 3 times say \"n{i}\"\n").unwrap();
    let said: Vec<String> = s
        .config
        .timeline
        .iter()
        .map(|t| format!("{:?}", t.input))
        .collect();
    assert_eq!(
        said,
        [
            "Say { text: \"n0\", wait: false }",
            "Say { text: \"n1\", wait: false }",
            "Say { text: \"n2\", wait: false }"
        ]
    );
}

#[test]
fn an_update_without_a_spec_is_an_error_in_a_burst_too() {
    for src in [
        "kind Pod\nat 1s update Pod a\n",
        "kind Pod\nevery 1s 3 times update Pod a{i}\n",
    ] {
        let d = listwatch_script::parse(src).unwrap_err();
        assert!(d[0].message.contains("needs `spec N`"), "{src}: {d:?}");
    }
}

#[test]
fn scopes_may_name_objects_controllers_make() {
    let src = "kind Pod\nkind Child\nkind Data\ncontroller ctl for Pod children Child\n\
               controller op for Pod two-writes Data\nat 1s create Pod ns/web spec 2\n\
               expect creates ctl ns/web-1 == 1\nexpect creates op ns/web-data == 1\n\
               expect reconciles ctl ns/web >= 1\n";
    let r = listwatch_script::run(src).unwrap_or_else(|d| panic!("{d:?}"));
    assert!(r.passed());
}

/// A scope name means what the timeline means: `web` is `default/web`, so it never matches
/// `ns/web` or `rs/web` (and names nothing here).
#[test]
fn an_unqualified_scope_name_is_in_the_default_namespace() {
    let src = "kind Pod\nkind Child\ncontroller ctl for Pod children Child\n\
               at 1s create Pod ns/web spec 1\nat 1s create Pod rs/web spec 1\n\
               expect reconciles ctl web >= 1\n";
    let d = listwatch_script::parse(src).unwrap_err();
    assert_eq!((d[0].line, d[0].col), (6, 23), "{d:?}");
    assert!(
        d[0].help.as_deref().is_some_and(|h| h.contains("ns/web")),
        "{d:?}"
    );
}

#[test]
fn many_near_miss_scopes_against_many_long_names_stay_fast() {
    let name = "n".repeat(58);
    let mut src = format!("kind Pod\nevery 1ms 10000 times create Pod {name}{{i}}\n");
    let line = format!("expect creates {}x == 0\n", "n".repeat(60));
    while src.len() + line.len() < listwatch_script::MAX_SCRIPT_BYTES {
        src += &line;
    }
    let started = std::time::Instant::now();
    let d = listwatch_script::parse(&src).unwrap_err();
    assert!(
        started.elapsed().as_secs_f64() < 20.0,
        "{:?}",
        started.elapsed()
    );
    assert!(d.len() <= 50, "{}", d.len());
    assert!(d[0].message.contains("is not a controller"), "{d:?}");
}

/// `say "..." and wait` marks the narration as a stop for the page's playback; the trace's text
/// is the narration alone, and the line renders back as written.
#[test]
fn a_say_that_waits_is_parsed_rendered_and_checked() {
    let s = listwatch_script::parse(
        "kind Pod\ncontroller c for Pod children Pod\nat 1s say \"look\" and wait\nat 2s say \"go on\"\nrun 3s\n",
    );
    let s = match s {
        Ok(s) => s,
        Err(d) => panic!("{d:?}"),
    };
    let waits: Vec<bool> = s
        .config
        .timeline
        .iter()
        .filter_map(|t| match &t.input {
            listwatch_core::Input::Say { wait, .. } => Some(*wait),
            _ => None,
        })
        .collect();
    assert_eq!(waits, [true, false]);
    let line = listwatch_script::render::input_line(&s.config, &s.config.timeline[0]);
    assert_eq!(line, "at 1s say \"look\" and wait");
    let e = listwatch_script::parse("kind Pod\nat 1s say \"look\" and go\nrun 2s\n").unwrap_err();
    assert_eq!((e[0].line, e[0].col), (2, 22), "{e:?}");
    assert!(e[0].message.contains("`wait`"), "{e:?}");
}
