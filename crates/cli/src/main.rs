//! `listwatch`: run and check scenario scripts.

use std::io::{IsTerminal, Read, Write};
use std::process::ExitCode;

use listwatch_core::analysis::{Analysis, MarkerKind};
use listwatch_core::verdict::explain;
use listwatch_core::*;
use listwatch_script::{render, Report};

use listwatch_script::export as json;

/// `print!` that stops writing, quietly, once standard output is closed: `listwatch run x
/// --trace | head` reads what it needs and leaves, which is not an error (`print!` panics), and
/// the command still ends with its own exit code (1 for a failed expectation).
macro_rules! out {
    ($($arg:tt)*) => { $crate::write_stdout(format_args!($($arg)*)) };
}

/// `println!`, as [`out!`] is `print!`.
macro_rules! outln {
    () => { $crate::write_stdout(format_args!("\n")) };
    ($($arg:tt)*) => { $crate::write_stdout(format_args!("{}\n", format_args!($($arg)*))) };
}

/// Set once a write finds standard output closed: later writes are skipped.
static STDOUT_CLOSED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Writes to standard output; a closed pipe stops the writing, any other error ends the
/// program with a message.
fn write_stdout(text: std::fmt::Arguments) {
    use std::sync::atomic::Ordering::Relaxed;
    if STDOUT_CLOSED.load(Relaxed) {
        return;
    }
    match std::io::stdout().lock().write_fmt(text) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => STDOUT_CLOSED.store(true, Relaxed),
        Err(e) => {
            eprintln!("error: cannot write to standard output: {e}");
            std::process::exit(1)
        }
    }
}

mod args;
mod explore;
use args::{ColorWhen, Command};

/// The bytes of a script file (or of standard input), refused when larger than the limit.
fn read(path: &str) -> Result<Vec<u8>, String> {
    read_at_most(path, listwatch_script::MAX_SCRIPT_BYTES, "64 KiB")
}

/// The bytes of a file (or of standard input), refused when larger than `max` (said as `limit`).
fn read_at_most(path: &str, max: usize, limit: &str) -> Result<Vec<u8>, String> {
    let mut bytes = vec![];
    if path == "-" {
        std::io::stdin()
            .take(max as u64 + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| format!("cannot read standard input: {e}"))?;
        if bytes.len() > max {
            return Err(format!(
                "standard input holds more than the limit of {limit}"
            ));
        }
    } else {
        let meta = std::fs::metadata(path).map_err(|e| format!("cannot read {path}: {e}"))?;
        if meta.len() > max as u64 {
            return Err(format!(
                "{path} is {} bytes, more than the limit of {limit}",
                meta.len()
            ));
        }
        std::fs::File::open(path)
            .and_then(|f| f.take(max as u64 + 1).read_to_end(&mut bytes))
            .map_err(|e| format!("cannot read {path}: {e}"))?;
    }
    Ok(bytes)
}

/// Reads a script and hands it to `f` (parse, run, explore). A file that cannot be read, or
/// diagnostics (printed located, like rustc's), end in exit code 2. A script that is not UTF-8
/// gets a diagnostic at its first bad byte.
fn with_script<T>(
    file: &str,
    f: impl FnOnce(&str) -> Result<T, Vec<listwatch_script::Diagnostic>>,
) -> Result<(String, T), ExitCode> {
    let bytes = read(file).map_err(|e| {
        eprintln!("error: {}", term(&e));
        ExitCode::from(2)
    })?;
    let src = match listwatch_script::decode(&bytes) {
        Ok(s) => s.to_string(),
        Err(d) => {
            eprint!(
                "{}",
                term(&render(&d, file, &String::from_utf8_lossy(&bytes)))
            );
            return Err(ExitCode::from(2));
        }
    };
    match f(&src) {
        Ok(t) => Ok((src, t)),
        Err(diags) => {
            for d in &diags {
                eprint!("{}", term(&render(d, file, &src)));
            }
            Err(ExitCode::from(2))
        }
    }
}

/// Text for a terminal: control characters (but line breaks and tabs) and the bidirectional
/// overrides are shown as escapes (`\x1b`, `\u{202e}`), so a name, a narration or a diagnostic
/// cannot move the cursor, retitle the window or reorder what is shown.
fn term(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\n' | '\t' => out.push(c),
            c if (c as u32) < 0x100 && c.is_control() => out += &format!("\\x{:02x}", c as u32),
            c if c.is_control()
                || ('\u{202a}'..='\u{202e}').contains(&c)
                || ('\u{2066}'..='\u{2069}').contains(&c)
                || c == '\u{200e}'
                || c == '\u{200f}'
                || c == '\u{061c}' =>
            {
                out += &format!("\\u{{{:x}}}", c as u32)
            }
            c => out.push(c),
        }
    }
    out
}

/// Text that is itself a script (a link's, a counterexample): verbatim when it goes to a file or
/// a pipe, so nothing is lost; escaped on a terminal.
fn script_out(s: &str) -> String {
    if std::io::stdout().is_terminal() {
        term(s)
    } else {
        s.to_string()
    }
}

fn color(on: bool, code: &str, s: &str) -> String {
    if on {
        format!("\x1b[{code}m{s}\x1b[0m")
    } else {
        s.to_string()
    }
}

fn main() -> ExitCode {
    let cli = match args::parse() {
        Ok(cli) => cli,
        Err(code) => return code,
    };
    let color = match cli.color {
        ColorWhen::Always => true,
        ColorWhen::Never => false,
        ColorWhen::Auto => {
            std::io::stdout().is_terminal()
                && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
        }
    };
    let out = match cli.command {
        Command::Run {
            file,
            compare: Some(versions),
            ..
        } => cmd_compare(&file, versions),
        Command::Run {
            file, trace, json, ..
        } => cmd_run(&file, trace, json, color),
        Command::Check { files } => cmd_check(&files, color),
        Command::Share { file, base, at } => cmd_share(&file, &base, at),
        Command::Open { link } => cmd_open(&link),
        Command::Explore {
            file,
            budget,
            all,
            json,
            time,
            threads,
            controller,
            shard,
            merge,
        } => explore::run(explore::Options {
            file,
            budget,
            all,
            json,
            time_limit: time,
            threads: threads.map(usize::from),
            controller,
            shard,
            merge,
        }),
        Command::Import { file, json } => cmd_import(&file, json),
        Command::Completions { shell } => {
            out!("{}", args::completions(shell));
            ExitCode::SUCCESS
        }
    };
    let _ = std::io::stdout().flush();
    out
}

/// A run stopped at a limit of the reconcile language is a script error: the diagnostic,
/// located at the statement, goes to standard error (true when there was one).
fn limit_error(file: &str, src: &str, report: &Report) -> bool {
    let Some(d) = listwatch_script::logic::stopped_at_limit(&report.sim, src) else {
        return false;
    };
    eprint!("{}", term(&render(&d, file, src)));
    true
}

fn cmd_run(file: &str, trace: bool, as_json: bool, tty: bool) -> ExitCode {
    let (src, report) = match with_script(file, listwatch_script::run) {
        Ok(x) => x,
        Err(code) => return code,
    };
    if as_json {
        outln!("{}", json::report(&report));
    } else {
        out!("{}", summary(&report, tty));
        if trace {
            outln!("\ntrace:");
            for (i, e) in report.sim.trace().iter().enumerate() {
                outln!("{}", term(&line(i as EventId, e, &report.sim)));
            }
        }
    }
    if limit_error(file, &src, &report) {
        ExitCode::from(2)
    } else if report.passed() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

/// `run FILE --compare SETTING=A,B`: the facts that differ between the two runs (exit codes as
/// `run`'s: 1 when an expectation fails in either).
fn cmd_compare(file: &str, versions: listwatch_script::compare::Versions) -> ExitCode {
    let compare = |src: &str| listwatch_script::compare::compare(src, versions);
    let (_, comparison) = match with_script(file, compare) {
        Ok(x) => x,
        Err(code) => return code,
    };
    out!("{}", term(&listwatch_script::compare::render(&comparison)));
    if comparison.passed() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

/// `import`: the script to standard output, the report to standard error (or both as JSON).
fn cmd_import(file: &str, as_json: bool) -> ExitCode {
    use listwatch_script::import::{ImportError, Outcome};
    let max = listwatch_script::import::MAX_INPUT_BYTES;
    let text = match read_at_most(file, max, "1 MiB")
        .and_then(|b| String::from_utf8(b).map_err(|_| format!("{file} is not UTF-8 text")))
    {
        Ok(t) => t,
        Err(e) => {
            eprintln!("error: {}", term(&e));
            return ExitCode::from(2);
        }
    };
    let imported = match listwatch_script::import::import(&text) {
        Ok(i) => i,
        Err(e) => {
            if let ImportError::NothingRecognised { report } = &e {
                for r in report
                    .iter()
                    .filter(|r| r.outcome != Outcome::Blank)
                    .take(20)
                {
                    eprintln!("{}", term(&format!("  line {}: {}", r.line, r.detail)));
                }
            }
            eprintln!("error: {}", term(&e.to_string()));
            return ExitCode::from(2);
        }
    };
    if as_json {
        outln!("{}", imported.to_json());
        return ExitCode::SUCCESS;
    }
    out!("{}", script_out(&imported.script));
    let mut report = String::new();
    for r in imported
        .report
        .iter()
        .filter(|r| r.outcome != Outcome::Blank)
    {
        let by = r
            .recogniser
            .as_ref()
            .map(|x| format!(" [{}; {}]", x.format, x.version))
            .unwrap_or_default();
        let at = match r.script_lines.first() {
            Some(l) => format!(" (script line {l})"),
            None => String::new(),
        };
        report += &format!(
            "line {}: {}{at}: {}{by}\n",
            r.line,
            r.outcome.as_str(),
            r.detail
        );
    }
    for n in &imported.notes {
        report += &format!("note: {n}\n");
    }
    eprint!("{}", term(&report));
    ExitCode::SUCCESS
}

fn cmd_share(file: &str, base: &str, at_ms: Option<TimeMs>) -> ExitCode {
    let src = match with_script(file, listwatch_script::parse) {
        Ok((src, _)) => src,
        Err(code) => return code,
    };
    let shared = listwatch_script::share::Shared {
        script: src,
        at_ms,
        events: None,
    };
    outln!("{}", listwatch_script::share::link(base, &shared));
    ExitCode::SUCCESS
}

fn cmd_open(link: &str) -> ExitCode {
    match listwatch_script::share::decode(link) {
        Ok(s) => {
            if let Some(t) = s.at_ms {
                eprintln!("(the link shows the moment {t})");
            }
            out!("{}", script_out(&s.script));
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {}", term(&e.to_string()));
            ExitCode::from(2)
        }
    }
}

fn cmd_check(files: &[String], tty: bool) -> ExitCode {
    let (mut invalid, mut failed) = (0, 0);
    for file in files {
        match with_script(file, listwatch_script::run) {
            Err(_) => invalid += 1,
            Ok((src, report)) if limit_error(file, &src, &report) => invalid += 1,
            Ok((_, report)) => {
                let bad: Vec<_> = report.outcomes.iter().filter(|(_, o)| !o.pass).collect();
                if bad.is_empty() {
                    outln!(
                        "{} {} ({} expectations)",
                        color(tty, "32", "ok"),
                        term(file),
                        report.outcomes.len()
                    );
                } else {
                    failed += 1;
                    outln!("{} {}", color(tty, "31", "FAILED"), term(file));
                    for (x, o) in bad {
                        outln!(
                            "{}",
                            term(&format!(
                                "  {file}:{}: {}\n    found {}, decided at {}",
                                x.line, x.text, o.found, o.decided_ms
                            ))
                        );
                    }
                }
            }
        }
    }
    if invalid > 0 {
        ExitCode::from(2)
    } else if failed > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

/// The readable summary of `listwatch run`.
pub fn summary(r: &Report, tty: bool) -> String {
    let sim = &r.sim;
    let stop = match sim.stopped() {
        Some(Stop::EventCap) => format!(
            " (stopped at the event cap of {} events)",
            sim.config().limits.max_events
        ),
        Some(Stop::ReadCap) => format!(
            " (stopped at the cap on reads: its selector lists looked at more than {} objects in all)",
            sim.config().limits.max_objects_read
        ),
        Some(Stop::Limit { .. }) => " (stopped at the limit of children per object)".into(),
        _ => String::new(),
    };
    let mut s = format!(
        "ran {} of virtual time: {} events, final rv {}{stop}\n",
        sim.now_ms(),
        sim.trace().len(),
        sim.etcd().rev()
    );
    let analysis = Analysis::of(sim);
    s += &watchers_summary(sim);
    s += &controllers_summary(sim);
    s += &relists_summary(sim, &analysis);
    s += &expectations_summary(r, &analysis);
    // Everything above may hold names and texts from the script: escape it, then colour the
    // marks (an escaped line cannot start with them: names hold no spaces).
    let s = term(&s);
    if tty {
        color_marks(&s)
    } else {
        s
    }
}

/// Per watcher: lists, watches, 410s (the first five messages), state and last RV.
fn watchers_summary(sim: &Sim) -> String {
    let mut s = String::from("\nwatchers:\n");
    let tallies = listwatch_core::analysis::watcher_tallies(sim);
    for (i, (w, t)) in sim.reflectors().iter().zip(tallies).enumerate() {
        let id = WatcherId(i as u16);
        s += &format!(
            "  {:<24} {} lists, {} watches, {} x 410, state {} at rv {}\n",
            Labels::watcher(sim, id),
            t.lists,
            t.watches,
            t.gone.len(),
            w.state().as_str(),
            w.last_rv()
        );
        let messages = t
            .gone
            .iter()
            .filter_map(|&g| sim.trace()[g as usize].kind.gone());
        for (_, error) in messages.take(5) {
            s += &format!("      410: {}\n", error.message());
        }
    }
    s
}

/// Per controller: its reconciles, per key (the first twelve keys).
fn controllers_summary(sim: &Sim) -> String {
    let mut s = String::from("\ncontrollers:\n");
    let per_key = listwatch_core::analysis::reconciles_per_key(sim);
    for (c, per_key) in sim.config().controllers.iter().zip(per_key) {
        let total: u32 = per_key.values().sum();
        let keys: Vec<String> = per_key
            .iter()
            .take(12)
            .map(|(k, n)| format!("{k} x{n}"))
            .collect();
        let more = if per_key.len() > 12 { ", ..." } else { "" };
        s += &format!(
            "  {:<24} {total} reconciles ({}{more})\n",
            c.name,
            keys.join(", ")
        );
    }
    s
}

/// Why the first five relists happened: each with its chain of causes.
fn relists_summary(sim: &Sim, analysis: &Analysis) -> String {
    let relists = analysis.events(MarkerKind::Relist);
    let mut s = String::new();
    if !relists.is_empty() {
        s += "\nwhy the relists happened:\n";
        for &id in relists.iter().take(5) {
            for (n, (_, text)) in explain(sim, id).iter().enumerate().take(6) {
                s += &format!("  {}{text}\n", if n == 0 { "" } else { "  <- " });
            }
        }
    }
    s
}

/// Each expectation's verdict, then ESR's.
fn expectations_summary(r: &Report, analysis: &Analysis) -> String {
    let sim = &r.sim;
    let mut s = String::new();
    s += "\nexpectations:\n";
    if r.outcomes.is_empty() {
        s += "  (none)\n";
    }
    for (x, o) in &r.outcomes {
        let mark = if o.pass { "PASS" } else { "FAIL" };
        s += &format!(
            "  {mark} line {}: {}  (found {}, decided at {})\n",
            x.line, x.text, o.found, o.decided_ms
        );
    }
    let esr = listwatch_core::verdict::esr_verdict(sim, analysis.esr);
    s += &format!(
        "\nESR: {} ({})\n",
        if esr.pass { "holds" } else { "fails" },
        esr.found
    );
    s
}

/// PASS in green and FAIL in red, at the start of an expectation's line.
fn color_marks(s: &str) -> String {
    s.lines()
        .map(|l| {
            let l = if let Some(rest) = l.strip_prefix("  PASS line ") {
                format!("  {} line {rest}", color(true, "32", "PASS"))
            } else if let Some(rest) = l.strip_prefix("  FAIL line ") {
                format!("  {} line {rest}", color(true, "31", "FAIL"))
            } else {
                l.to_string()
            };
            l + "\n"
        })
        .collect()
}
