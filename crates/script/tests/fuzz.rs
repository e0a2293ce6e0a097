//! A deterministic fuzz test on stable Rust, inside `cargo test`: gallery scenarios mutated and
//! spliced with the grammar's words, the reconcile language's statements among them (`logic`
//! and `desired` lines made from templates, and lines repeated up to hundreds of times), 2,000
//! of them from a fixed seed. Each is parsed; a diagnostic must point inside the script; a
//! script that parses runs (with a small event cap) without panicking, to a bounded end (its
//! end, the event cap, or a limit of the language located inside the script), and twice to the
//! same trace. No clock is read: the bounds are the run's own. The cargo-fuzz targets in
//! `fuzz/` explore further without a bound.

use listwatch_core::sim::trace_hash;
use listwatch_core::{Stop, TimeMs};
use listwatch_script::gallery::GALLERY;
use listwatch_script::syntax::{
    ACTIONS, BEHAVIOURS, CONDITION_WORDS, CONTROLLER_OPTIONS, COUNTED, DESIRED_STATEMENTS, FIELDS,
    LOGIC_STATEMENTS, LOGIC_WORDS, STATEMENTS, WORDS,
};

const INPUTS: usize = 2_000;
/// The event cap of each run.
const MAX_EVENTS: u64 = 20_000;

/// SplitMix64, as the core's `Rng`: the same inputs on every platform and every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
    fn pick<'a>(&mut self, xs: &[&'a str]) -> &'a str {
        xs[self.below(xs.len())]
    }
}

const NUMBERS: &[&str] = &[
    "0",
    "-1",
    "1000000000",
    "-1000000000",
    "1000000001",
    "-9223372036854775808",
    "9223372036854775807",
    "18446744073709551616",
];
const DURATIONS: &[&str] = &[
    "0ms",
    "1ms",
    "24h",
    "1440m",
    "86400001ms",
    "1e12h",
    "0.0001s",
];

/// Words that are not in the grammar's lists but stress its edges.
const EDGES: &[&str] = &[
    "0",
    "1",
    "-1",
    "3",
    "100000",
    "-9223372036854775808",
    "9223372036854775807",
    "99999999999999999999",
    "0ms",
    "1s",
    "250ms",
    "+500ms",
    "24h",
    "25h",
    "1e308s",
    "NaNs",
    "{i}",
    "a{i}",
    "ns/a",
    "a/b/c",
    "\"",
    "\"x\"",
    "\"\u{1b}[2J\"",
    "==",
    "!=",
    ">=",
    "50%",
    "1..3",
    "Pod",
    "Data",
    "\u{feff}",
    "\r",
    "é",
    "#",
];

fn word(rng: &mut Rng) -> String {
    let lists: [&[&str]; 12] = [
        STATEMENTS,
        BEHAVIOURS,
        CONTROLLER_OPTIONS,
        ACTIONS,
        COUNTED,
        WORDS,
        EDGES,
        LOGIC_STATEMENTS,
        LOGIC_WORDS,
        DESIRED_STATEMENTS,
        CONDITION_WORDS,
        FIELDS,
    ];
    let list = lists[rng.below(lists.len())];
    let w = rng.pick(list).to_string();
    match rng.below(20) {
        0 => w.repeat(1 + rng.below(100)),
        1 => format!("{w}{}", rng.below(1000)),
        _ => w,
    }
}

/// Statements of the reconcile language, with `K` a kind, `N` a name read above, `V` a value
/// and `D` a duration filled in from the script.
const LOGIC_TEMPLATES: &[&str] = &[
    "get N = K key",
    "get N = K key-data",
    "get N = K owner N",
    "get N = K key live",
    "list N = K owned-by N",
    "list N = K owned-by N live",
    "list N = K selector app=web,tier!=db in prod",
    "for N in N where N exists",
    "for N in N",
    "patch N status.ready = V",
    "update N metadata.labels.app = \"web\"",
    "if N.spec.replicas == \"a\"",
    "if N exists",
    "if N absent or N deleting",
    "if N.count > V and not N has-finalizer",
    "if memory.m exists",
    "else",
    "else if V != V",
    "create K key-x owner N",
    "create K key spec V",
    "update N status V",
    "update N spec V on-error continue",
    "patch N spec V",
    "delete N",
    "delete N if-uid on-error continue",
    "add-finalizer N",
    "remove-finalizer N",
    "scale K owned-by N to V",
    "scale K owned-by N to V live on-error return",
    "remember m = V",
    "forget m",
    "done",
    "error",
    "requeue after D",
    "require N.alive == V",
    "require N exists or N absent",
    // Arithmetic, error kinds and the status write (issue 24).
    "update N status V + V * ( V - V ) / V % V",
    "update N status min(V, max(V, V))",
    "if N.spec / 0 == V or V * V > V",
    "create K key spec ( ( ( ( V ) ) ) ) on-error ignore-already-exists",
    "update N spec V on-error ignore-conflict",
    "delete N on-error ignore-not-found",
    "patch N status V",
    // Conditions (issue 24).
    "set-condition N Ready True reason Provisioned message \"up\"",
    "set-condition N Ready Unknown on-error ignore-conflict",
    "if N.status.conditions.Ready == \"True\"",
    "if count(p in N where p exists) > sum(q.spec for q in N)",
    // Names built from values, in other namespaces.
    "get N = K \"cfg-{N.spec}\" in prod",
    "get N = K key-{memory.m} live",
    "create K \"prod/shard-{N.spec.shard}\" spec V",
    // Named finalizers and owner references.
    "add-finalizer N example.com/cleanup",
    "remove-finalizer N example.com/cleanup on-error ignore-not-found",
    "if N has-finalizer example.com/cleanup",
    "adopt N owner N",
    "release N owner N on-error continue",
    // Events (a script without `kind Event` is refused at the `record`).
    "record N Warning ScaleFailed \"no quota\"",
    "record N Normal Scaled \"scaled up\"",
    // Helpers (none is defined in a mutated gallery script: refused, located).
    "call ensure-service",
];

/// A statement of the language from a template, with words of the script (`src`) in it.
fn logic_line(rng: &mut Rng, src: &str) -> String {
    let words: Vec<&str> = src.split_whitespace().collect();
    let after = |w: &str| -> Vec<&str> {
        (0..words.len().saturating_sub(1))
            .filter(|&i| words[i] == w)
            .map(|i| words[i + 1])
            .collect()
    };
    let kinds = after("kind");
    let mut names = after("get");
    names.extend(after("list"));
    if names.is_empty() {
        names.push("x");
    }
    let template = rng.pick(LOGIC_TEMPLATES);
    let mut out = vec![];
    for w in template.split(' ') {
        let name = || names[0];
        let filled = match w {
            "K" => rng
                .pick(if kinds.is_empty() { &["Pod"] } else { &kinds })
                .to_string(),
            "N" => rng.pick(&names).to_string(),
            "N.count" | "N.alive" => {
                let field = w.split('.').nth(1).unwrap_or("count");
                format!("{}.{field}", name())
            }
            "V" => match rng.below(4) {
                0 => rng.pick(NUMBERS).to_string(),
                1 => format!("{}.{}", name(), rng.pick(FIELDS)),
                2 => "memory.m".to_string(),
                _ => rng.below(1200).to_string(),
            },
            "D" => rng.pick(DURATIONS).to_string(),
            w => w.to_string(),
        };
        out.push(filled);
    }
    out.join(" ")
}

fn mutate(rng: &mut Rng, src: &str) -> String {
    let mut lines: Vec<String> = src.lines().map(String::from).collect();
    for _ in 0..1 + rng.below(3) {
        if lines.is_empty() {
            lines.push(String::new());
        }
        let n = lines.len();
        let l = rng.below(n);
        match rng.below(14) {
            11 | 12 => {
                // A statement of the language, at the indentation of a block's lines or deeper.
                let line = logic_line(rng, src);
                let indent = " ".repeat([4, 4, 6, 8, 2][rng.below(5)]);
                lines.insert(rng.below(n + 1), format!("{indent}{line}"));
            }
            13 => {
                // A line repeated, up to hundreds of times (statements and writes past their
                // limits, a timeline full of probes).
                let most = if rng.below(2) == 0 { 300 } else { 10 };
                let copies = 1 + rng.below(most);
                let dup = lines[l].clone();
                for _ in 0..copies {
                    lines.insert(l, dup.clone());
                }
            }
            0 => {
                lines.remove(l);
            }
            1 => {
                let dup = lines[l].clone();
                lines.insert(rng.below(n + 1), dup);
            }
            2 | 3 => {
                // Replace a word with one of the grammar's (or an edge).
                let mut ws: Vec<String> = lines[l].split(' ').map(String::from).collect();
                let k = rng.below(ws.len());
                ws[k] = word(rng);
                lines[l] = ws.join(" ");
            }
            4 => {
                // Insert a word.
                let mut ws: Vec<String> = lines[l].split(' ').map(String::from).collect();
                let k = rng.below(ws.len() + 1);
                ws.insert(k, word(rng));
                lines[l] = ws.join(" ");
            }
            5 => {
                // Splice a line from another scenario.
                let other = GALLERY[rng.below(GALLERY.len())].1;
                let ol: Vec<&str> = other.lines().collect();
                lines.insert(rng.below(n + 1), ol[rng.below(ol.len())].to_string());
            }
            6 => {
                // A statement made of grammar words.
                let k = 1 + rng.below(6);
                let ws: Vec<String> = (0..k).map(|_| word(rng)).collect();
                let indent = if rng.below(3) == 0 { "  " } else { "" };
                lines.insert(rng.below(n + 1), format!("{indent}{}", ws.join(" ")));
            }
            7 | 8 => {
                // A number or a duration becomes an extreme one.
                let mut ws: Vec<String> = lines[l].split(' ').map(String::from).collect();
                let numeric: Vec<usize> = (0..ws.len())
                    .filter(|&k| ws[k].starts_with(|c: char| c.is_ascii_digit() || c == '-'))
                    .collect();
                if !numeric.is_empty() {
                    let k = numeric[rng.below(numeric.len())];
                    let duration = ws[k].ends_with(|c: char| c.is_ascii_alphabetic());
                    ws[k] = rng
                        .pick(if duration { DURATIONS } else { NUMBERS })
                        .to_string();
                    lines[l] = ws.join(" ");
                }
            }
            9 => {
                let line = &mut lines[l];
                let at = line
                    .char_indices()
                    .map(|(i, _)| i)
                    .nth(rng.below(line.chars().count() + 1))
                    .unwrap_or(line.len());
                line.truncate(at);
            }
            _ => {
                let line = &mut lines[l];
                let at = line
                    .char_indices()
                    .map(|(i, _)| i)
                    .nth(rng.below(line.chars().count() + 1))
                    .unwrap_or(line.len());
                let c = ['\u{1b}', '\t', '"', '#', '{', '-', '\u{0}', 'x', ' '][rng.below(9)];
                line.insert(at, c);
            }
        }
    }
    let sep = ["\n", "\r\n", "\r"][rng.below(3)];
    lines.join(sep)
}

fn check_diagnostics(src: &str, diags: &[listwatch_script::Diagnostic]) -> Result<(), String> {
    if diags.is_empty() {
        return Err("an error without a diagnostic".into());
    }
    let lines: Vec<&str> =
        listwatch_script::lines(src.strip_prefix('\u{feff}').unwrap_or(src)).collect();
    for d in diags {
        let within = match lines.get(d.line.wrapping_sub(1)) {
            Some(l) => d.col >= 1 && d.col <= l.chars().count() + 1,
            None => d.line == 1 && d.col == 1,
        };
        if d.line < 1 || d.col < 1 || !within || d.message.is_empty() {
            return Err(format!(
                "diagnostic outside the script at {}:{}: {}",
                d.line, d.col, d.message
            ));
        }
        let _ = listwatch_script::render(d, "fuzz.lw", src);
    }
    Ok(())
}

fn exercise(src: &str) -> Result<bool, String> {
    let mut s = match listwatch_script::parse(src) {
        Err(d) => return check_diagnostics(src, &d).map(|_| false),
        Ok(s) => s,
    };
    s.config.limits.max_events = MAX_EVENTS;
    s.config.end_ms = s.config.end_ms.min(TimeMs(3_600_000));
    let end = s.config.end_ms;
    s.config.timeline.retain(|t| t.at_ms <= end);
    let mut hashes = vec![];
    for _ in 0..2 {
        let r = listwatch_script::run_scenario(&s)
            .map_err(|d| format!("a parsed script does not run: {d:?}"))?;
        // A bounded end: the run's own, the event cap, or a limit located in the script.
        let sim = &r.sim;
        match sim.stopped() {
            Some(Stop::End) if sim.now_ms() <= end => {}
            Some(Stop::EventCap) if sim.trace().len() as u64 <= MAX_EVENTS => {}
            Some(Stop::Limit { .. }) => {
                let d = listwatch_script::logic::stopped_at_limit(sim, src)
                    .ok_or("a limit without its diagnostic")?;
                check_diagnostics(src, &[d])?;
            }
            stop => return Err(format!("an unbounded end: {stop:?} at {}", sim.now_ms())),
        }
        hashes.push(trace_hash(&r.sim));
    }
    if hashes[0] != hashes[1] {
        return Err("two runs gave different traces".into());
    }
    Ok(true)
}

#[test]
fn mutated_gallery_scripts_parse_or_fail_located_and_run_deterministically() {
    let mut rng = Rng(0x6c69_7374_7761_7463);
    let (mut ran, mut programs) = (0, 0);
    for i in 0..INPUTS {
        let (name, base) = GALLERY[rng.below(GALLERY.len())];
        let src = mutate(&mut rng, base);
        let outcome = std::panic::catch_unwind(|| exercise(&src));
        match outcome {
            Ok(Ok(r)) => {
                ran += r as usize;
                programs += (r && src.contains("  logic")) as usize;
            }
            Ok(Err(e)) => panic!("input {i} (from {name}): {e}\n--- script ---\n{src}"),
            Err(_) => panic!("input {i} (from {name}) panicked\n--- script ---\n{src}"),
        }
    }
    assert!(ran > INPUTS / 10, "only {ran} of {INPUTS} inputs parsed");
    // The reconcile language is exercised, not only refused.
    assert!(
        programs > INPUTS / 50,
        "only {programs} scripts with a logic block ran"
    );
    eprintln!("{INPUTS} inputs, {ran} ran, {programs} of them with a logic block");
}

/// The templates cover every statement of the language (so a new one is fuzzed once it is
/// added there), and a mutated logic block can say more than its limits allow.
#[test]
fn the_fuzz_vocabulary_covers_the_reconcile_language() {
    for s in LOGIC_STATEMENTS.iter().chain(DESIRED_STATEMENTS) {
        let head = |t: &&str| t.split(' ').next() == Some(s) || t.contains(&format!(" {s} "));
        assert!(LOGIC_TEMPLATES.iter().any(head), "no template for `{s}`");
    }
    let mut rng = Rng(7);
    let (mut limits, mut tries) = (0, 0);
    while limits == 0 && tries < 200 {
        tries += 1;
        let own = GALLERY
            .iter()
            .find(|(n, _)| n.starts_with("26-"))
            .unwrap()
            .1;
        let src = mutate(&mut rng, own);
        if let Err(d) = listwatch_script::parse(&src) {
            limits += d
                .iter()
                .any(|d| d.message.contains("limit") || d.message.contains("more than"))
                as usize;
        }
    }
    assert!(
        limits > 0,
        "no mutation of gallery 26 reached a limit in {tries} tries"
    );
}
