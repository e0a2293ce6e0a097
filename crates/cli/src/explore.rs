//! `listwatch explore`: searches fault schedules on every core, with a budget, a time limit and
//! Ctrl-C; progress on standard error when it is a terminal; shards and their merge.

use std::io::IsTerminal;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use listwatch_core::explore::{Budget, Explorer, FAULT_TYPES};
use listwatch_script::explore as lx;

use crate::{read, script_out, term, with_script};

/// What `explore` was asked to do.
pub struct Options {
    pub file: Option<String>,
    pub budget: Option<u64>,
    pub all: bool,
    pub json: bool,
    pub time_limit: Option<Duration>,
    pub threads: Option<usize>,
    /// Faults only against this controller.
    pub controller: Option<String>,
    pub shard: Option<(u64, u64)>,
    pub merge: Vec<String>,
}

/// Set by the SIGINT handler; the search checks it between batches.
static INTERRUPTED: AtomicBool = AtomicBool::new(false);

#[cfg(unix)]
fn catch_ctrl_c() {
    extern "C" fn on_sigint(_: i32) {
        INTERRUPTED.store(true, Ordering::SeqCst);
    }
    extern "C" {
        fn signal(signum: i32, handler: extern "C" fn(i32)) -> usize;
    }
    const SIGINT: i32 = 2;
    // SAFETY: the handler only stores to an atomic, which is async-signal-safe.
    unsafe {
        signal(SIGINT, on_sigint);
    }
}

#[cfg(not(unix))]
fn catch_ctrl_c() {}

const SEPARATOR: &str = "\n# ----- next counterexample -----\n\n";

pub fn run(o: Options) -> ExitCode {
    if !o.merge.is_empty() {
        return merge(&o);
    }
    let Some(file) = o.file.as_deref() else {
        eprintln!("error: explore needs a FILE or --merge FILES");
        return ExitCode::from(2);
    };
    let default = Budget::default();
    let budget = Budget {
        schedules: o.budget.unwrap_or(default.schedules),
        first_failure: !o.all,
    };
    let (src, (mut ex, scenario)) = match with_script(file, |src| {
        lx::explorer_against(src, budget, o.controller.as_deref())
    }) {
        Ok(x) => x,
        Err(code) => return code,
    };
    if let Some((i, n)) = o.shard {
        ex.set_shard(i, n);
    }
    let threads = o.threads.unwrap_or_else(lx::cores);
    let started = Instant::now();
    let timed_out = search(&mut ex, threads, started, o.time_limit);
    let secs = started.elapsed().as_secs_f64();
    let interrupted = INTERRUPTED.load(Ordering::SeqCst) || timed_out;
    let shown: Vec<String> = lx::distinct(&ex.failures)
        .into_iter()
        .map(|f| lx::counterexample(&src, &scenario, f, ex.end_ms()))
        .collect();
    let base = (!ex.base_broken.is_empty())
        .then(|| lx::base_counterexample(&src, &scenario, &ex.base_broken, ex.end_ms()));
    if o.json {
        outln!(
            "{}",
            lx::summary_text(&src, &scenario, &ex, secs, interrupted)
        );
    } else {
        let stop = if INTERRUPTED.load(Ordering::SeqCst) {
            Some("interrupted: what was found so far follows")
        } else if timed_out {
            Some("the time limit ended the search: what was found so far follows")
        } else {
            None
        };
        let done = Done {
            secs,
            threads,
            shard: o.shard,
            stop,
        };
        report(&ex, &scenario, &done, base.as_deref(), &shown);
    }
    if base.is_some() || !shown.is_empty() {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

/// Runs the search on `threads` threads until it ends, Ctrl-C or the time limit (true if the
/// limit stopped it), with progress on stderr when that is a terminal.
fn search(ex: &mut Explorer, threads: usize, started: Instant, limit: Option<Duration>) -> bool {
    catch_ctrl_c();
    let progress = std::io::stderr().is_terminal();
    let mut last_shown = started;
    let mut timed_out = false;
    lx::run_threads(ex, threads, |ex| {
        if INTERRUPTED.load(Ordering::SeqCst) {
            return false;
        }
        if limit.is_some_and(|l| started.elapsed() >= l) {
            timed_out = true;
            return false;
        }
        if progress && last_shown.elapsed() >= Duration::from_millis(250) {
            last_shown = Instant::now();
            eprint!("\r\x1b[K{}", progress_line(ex, started.elapsed()));
        }
        true
    });
    if progress {
        eprint!("\r\x1b[K");
    }
    timed_out
}

/// How a search ended, for its report.
struct Done {
    secs: f64,
    threads: usize,
    shard: Option<(u64, u64)>,
    /// Why it stopped early, if it did.
    stop: Option<&'static str>,
}

/// The search's report on a terminal: figures on standard error, counterexamples on standard
/// output.
/// The schedules the search could not judge, said in words (the JSON has the same counts):
/// a user reading "no schedule breaks it" must know what it did not count.
fn unjudged(st: &listwatch_core::explore::Stats) -> Vec<String> {
    let mut lines = vec![];
    if st.unsettled > 0 {
        lines.push(format!(
            "{} schedule{} still failing and not settled {} after the run's end: counted neither broken nor correct",
            st.unsettled,
            if st.unsettled == 1 { "" } else { "s" },
            listwatch_core::explore::SETTLE_LIMIT_MS,
        ));
    }
    if st.replay_mismatch > 0 {
        lines.push(format!(
            "{} failing schedule{} passed when run again to report it: not reported (a listwatch bug: please file it)",
            st.replay_mismatch,
            if st.replay_mismatch == 1 { "" } else { "s" },
        ));
    }
    lines
}

fn report(
    ex: &Explorer,
    scenario: &listwatch_script::Scenario,
    done: &Done,
    base: Option<&str>,
    shown: &[String],
) {
    let st = ex.stats;
    let per_type: Vec<String> = FAULT_TYPES
        .iter()
        .enumerate()
        .map(|(t, name)| format!("{name} {}", st.candidates_by_type[t]))
        .collect();
    eprintln!(
        "explored {} of {} schedules ({} candidate faults: {}){}: {} states, {} skipped as already explored, in {:.2}s ({:.0} schedules/s on {} thread{})",
        st.tried,
        ex.planned(),
        st.faults,
        per_type.join(", "),
        match done.shard {
            Some((i, n)) => format!(", shard {i}/{n}"),
            None => String::new(),
        },
        st.states,
        st.skipped,
        done.secs,
        st.tried as f64 / done.secs.max(1e-9),
        done.threads,
        if done.threads == 1 { "" } else { "s" },
    );
    if let Some(why) = done.stop {
        eprintln!("{why}");
    }
    for line in unjudged(&st) {
        eprintln!("{line}");
    }
    if let Some(base) = &base {
        let what: Vec<String> = ex
            .base_broken
            .iter()
            .map(|b| lx::broken_text(scenario, b))
            .collect();
        eprintln!(
            "the scenario already fails without faults: {}",
            term(&what.join("; "))
        );
        out!("{}", script_out(base));
    } else if shown.is_empty() {
        eprintln!(
            "no schedule {} breaks it",
            if done.stop.is_some() {
                "explored so far"
            } else {
                "within the budget"
            }
        );
    } else {
        eprintln!(
            "found {} fault schedule{} that break{} it:",
            shown.len(),
            if shown.len() == 1 { "" } else { "s" },
            if shown.len() == 1 { "s" } else { "" }
        );
        // Scripts one after another, separated so each can be cut out and run.
        out!("{}", script_out(&shown.join(SEPARATOR)));
    }
}

/// `explored 1200/5000 schedules, 800 states, 9,300/s, about 4s left, 1 found`.
fn progress_line(ex: &Explorer, elapsed: Duration) -> String {
    let st = ex.stats;
    let rate = st.tried as f64 / elapsed.as_secs_f64().max(1e-9);
    let left = ex.planned().saturating_sub(st.tried) as f64 / rate.max(1e-9);
    format!(
        "explored {}/{} schedules, {} distinct states, {:.0}/s, about {} left, {} found",
        st.tried,
        ex.planned(),
        st.states,
        rate,
        listwatch_core::format_ms((left * 1000.0) as u64),
        ex.failures.len()
    )
}

/// `--merge FILES`: shards' summaries into the unsharded result.
fn merge(o: &Options) -> ExitCode {
    let mut texts = vec![];
    let mut left = MERGE_BYTES_MAX;
    for f in &o.merge {
        // A summary holds counterexamples (scripts of at most 64 KiB): allow plenty, for all
        // the summaries together.
        match read_big(f, left) {
            Ok(t) => {
                left = left.saturating_sub(t.len() as u64);
                texts.push(t)
            }
            Err(e) => {
                eprintln!("error: {}", term(&e));
                return ExitCode::from(2);
            }
        }
    }
    let d = match lx::merge_texts(&texts) {
        Ok(d) => d,
        Err(e) => {
            eprintln!("error: {}", term(&e));
            return ExitCode::from(2);
        }
    };
    if o.json {
        outln!("{}", d.json);
    } else {
        eprintln!(
            "merged {} shards: explored {} of {} schedules{}",
            d.shards,
            d.tried,
            d.planned,
            if d.complete { "" } else { " (incomplete)" }
        );
        if !d.base_broken.is_empty() {
            eprintln!(
                "the scenario already fails without faults: {}",
                term(&d.base_broken.join("; "))
            );
        }
        if d.counterexamples.is_empty() {
            eprintln!("no schedule breaks it");
        } else {
            out!("{}", script_out(&d.counterexamples.join(SEPARATOR)));
        }
    }
    if d.counterexamples.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

/// Reads a shard summary: at most 256 MiB.
/// The most bytes `--merge` reads, all its summaries together.
const MERGE_BYTES_MAX: u64 = 256 << 20;

/// A summary, of at most `max` bytes (what is left of `MERGE_BYTES_MAX`).
fn read_big(path: &str, max: u64) -> Result<String, String> {
    use std::io::Read;
    if path == "-" {
        return read(path).map(|b| String::from_utf8_lossy(&b).into_owned());
    }
    let mut bytes = vec![];
    std::fs::File::open(path)
        .and_then(|f| f.take(max + 1).read_to_end(&mut bytes))
        .map_err(|e| format!("cannot read {path}: {e}"))?;
    if bytes.len() as u64 > max {
        return Err(format!(
            "{path} brings the summaries to merge over the limit of 256 MiB in all"
        ));
    }
    String::from_utf8(bytes).map_err(|_| format!("{path} is not UTF-8"))
}

#[cfg(test)]
mod tests {
    use super::unjudged;
    use listwatch_core::explore::Stats;

    #[test]
    fn schedules_it_could_not_judge_are_said_in_words() {
        assert!(unjudged(&Stats::default()).is_empty());
        let st = Stats {
            unsettled: 2,
            replay_mismatch: 1,
            ..Stats::default()
        };
        assert_eq!(
            unjudged(&st),
            [
                "2 schedules still failing and not settled 60m after the run's end: counted neither broken nor correct",
                "1 failing schedule passed when run again to report it: not reported (a listwatch bug: please file it)",
            ]
        );
    }
}
