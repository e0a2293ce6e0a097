//! The explorer over a script: starts a search, runs it on every core, renders what it finds as
//! scenarios, and writes and merges the JSON summary that shards exchange.
//!
//! Core's explorer is single-threaded and deterministic; [`run_threads`] forks and judges on a
//! pool of `std::thread::scope` workers that lives as long as the search, and records results
//! (dedup included) in schedule order, so the result is exactly the single-threaded one.

use std::collections::{HashMap, VecDeque};
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};

use listwatch_core::explore::{
    Broken, Budget, Explorer, Failure, Job, Outcome, Runner, Stats, Verdict, FAULT_TYPES,
};
use listwatch_core::verdict::Expect;
use listwatch_core::TimeMs;
use serde_json::{json, Value};

use crate::{parse, render, Diagnostic};

/// The most schedules a search may be asked to try (the CLI's `--budget`, the page's budget
/// and its worker share it). It is above the largest search space there is (at most
/// [`MAX_SINGLES`](listwatch_core::explore::MAX_SINGLES) single faults plus the ~2 million
/// pairs among the first [`PAIR_BASE`](listwatch_core::explore::PAIR_BASE), about 3 million
/// schedules), so it never cuts a search short; it refuses only numbers that mean nothing, and
/// keeps a search's memory (a `u64` state hash per schedule run, for dedup) within what a
/// browser's worker has.
pub const MAX_BUDGET_SCHEDULES: u64 = 10_000_000;
const _: () = {
    use listwatch_core::explore::{MAX_SINGLES, PAIR_BASE};
    let pairs = PAIR_BASE as u64 * (PAIR_BASE as u64 - 1) / 2;
    assert!(MAX_SINGLES + pairs <= MAX_BUDGET_SCHEDULES);
};

/// The most shards a search may be split into (the CLI's `--shard I/N`).
pub const MAX_SHARDS: u64 = 1_000_000;

/// The most JSON values (numbers, strings, arrays, objects, ...) all the summaries a merge
/// reads may hold together: each costs a parsed value of 32 bytes or more, so a summary of
/// forged tiny arrays stays within memory. A real summary holds a few values per failure and
/// per ineffective schedule, and its counterexamples are long strings.
pub const MAX_SUMMARY_VALUES: usize = 8_000_000;

/// Starts an exploration of a script.
pub fn explorer(src: &str, budget: Budget) -> Result<(Explorer, crate::Scenario), Vec<Diagnostic>> {
    explorer_against(src, budget, None)
}

/// An explorer whose faults are only against the controller named `only` (`explore
/// --controller NAME`); the script's other controllers are the cluster's helpers.
pub fn explorer_against(
    src: &str,
    budget: Budget,
    only: Option<&str>,
) -> Result<(Explorer, crate::Scenario), Vec<Diagnostic>> {
    let scenario = parse(src)?;
    let expects = scenario
        .expectations
        .iter()
        .map(|x| x.expect.clone())
        .collect();
    let controllers = &scenario.config.controllers;
    let only = match only {
        None => None,
        Some(name) => match controllers.iter().position(|c| c.name == name) {
            // The fault types skip Anvil's controllers (their reads are consistent, there is no
            // cache to hold or make stale): a search against one would try nothing and pass.
            Some(i) if controllers[i].anvil => {
                return Err(vec![Diagnostic::at(
                    1,
                    1,
                    1,
                    format!(
                        "`--controller {name}`: the explorer puts no faults on an Anvil controller"
                    ),
                )
                .help("name one of the script's client-go controllers")]);
            }
            Some(i) => Some(listwatch_core::ControllerId(i as u16)),
            None => {
                // The name is the user's argument: echo a bounded part of it.
                let name: String = match name.char_indices().nth(64) {
                    Some((cut, _)) => format!("{}…", &name[..cut]),
                    None => name.to_string(),
                };
                let names: Vec<&str> = controllers.iter().map(|c| c.name.as_str()).collect();
                let mut d = Diagnostic::at(
                    1,
                    1,
                    1,
                    format!("`--controller {name}`: the script declares no controller `{name}`"),
                );
                d = match crate::diag::nearest(&name, names.iter().copied()) {
                    Some(n) => d.help(format!("did you mean `{n}`?")),
                    None => d.help(format!("its controllers: {}", names.join(", "))),
                };
                return Err(vec![d]);
            }
        },
    };
    let ex = Explorer::against(scenario.config.clone(), expects, budget, only)
        .map_err(|e| vec![Diagnostic::at(1, 1, 1, e.to_string())])?;
    Ok((ex, scenario))
}

/// Does the script check ESR itself?
fn checks_esr(scenario: &crate::Scenario) -> bool {
    scenario
        .expectations
        .iter()
        .any(|x| matches!(x.expect, Expect::Esr { controller: None }))
}

/// `expect esr`, when ESR broke and the script does not say it, so the scenario fails `check`.
fn esr_line(scenario: &crate::Scenario, broken: &[Broken]) -> &'static str {
    if !checks_esr(scenario) && broken.iter().any(|b| b.expectation.is_none()) {
        "expect esr\n"
    } else {
        ""
    }
}

/// The counterexample as a scenario: the original script plus explicit fault lines, each
/// labelled by what it did, and `expect esr` when only ESR broke.
pub fn counterexample(
    src: &str,
    scenario: &crate::Scenario,
    failure: &Failure,
    end_ms: TimeMs,
) -> String {
    let mut out = src.trim_end().to_string();
    out += "\n\n# Found by `listwatch explore`: these faults break the expectations above.\n";
    for (i, f) in failure.faults.iter().enumerate() {
        out += &format!("# {}\n", f.describe(&scenario.config));
        if let Some(e) = failure.effects.get(i) {
            out += &format!("#   what it did: {e}\n");
        }
    }
    let mut inputs: Vec<_> = failure.faults.iter().flat_map(|f| f.inputs()).collect();
    listwatch_core::order::sort_by_u64(&mut inputs, |t| t.at_ms.0);
    for t in &inputs {
        out += &render::input_line(&scenario.config, t);
        out.push('\n');
    }
    // The explorer's run length: long enough for the system to settle after the faults.
    out += &format!("run {end_ms}\n");
    out += esr_line(scenario, &failure.broken);
    for b in &failure.broken {
        out += &format!(
            "# broken: {} (found {})\n",
            broken_text(scenario, b),
            b.found
        );
    }
    out
}

/// A scenario that fails with no fault at all, as its own counterexample.
pub fn base_counterexample(
    src: &str,
    scenario: &crate::Scenario,
    broken: &[Broken],
    end_ms: TimeMs,
) -> String {
    let mut out = src.trim_end().to_string();
    out += "\n\n# Found by `listwatch explore`: this scenario fails without any fault.\n";
    out += &format!("run {end_ms}\n");
    out += esr_line(scenario, broken);
    for b in broken {
        out += &format!(
            "# broken: {} (found {})\n",
            broken_text(scenario, b),
            b.found
        );
    }
    out
}

/// The expectation a `Broken` names, as written.
pub fn broken_text(scenario: &crate::Scenario, b: &Broken) -> String {
    match b.expectation.and_then(|i| scenario.expectations.get(i)) {
        Some(x) => format!("line {}: {}", x.line, x.text),
        None => "ESR (eventually stable reconciliation)".into(),
    }
}

/// The failures worth showing: distinct minimal schedules, in the order found.
pub fn distinct(failures: &[Failure]) -> Vec<&Failure> {
    let mut out: Vec<&Failure> = vec![];
    for f in failures {
        if !out.iter().any(|g| g.faults == f.faults) {
            out.push(f);
        }
    }
    out
}

/// The number of threads to use by default: every core.
pub fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Jobs handed out ahead of the one to record next: threads never wait for a slow job (a
/// failure being minimised) until this many later ones are done.
const WINDOW_PER_THREAD: usize = 1024;

/// What a thread made of a job.
enum Done {
    Invalid,
    /// An earlier job reached the same state (or the search is over).
    Skipped,
    Ran(u64, Verdict),
}

/// What the threads share besides the explorer: what forks and judges, and a stop flag.
struct Pool {
    runner: Runner,
    stop: AtomicBool,
}

impl Pool {
    /// Forks a job and, unless an earlier job claimed its state, runs it to the end and judges
    /// it. A later job may have claimed it first: both run, and recording (in schedule order)
    /// keeps the earlier.
    fn work(&self, job: &Job, steer: &Mutex<Steer>) -> Done {
        if self.stop.load(Ordering::Relaxed) {
            return Done::Skipped;
        }
        let Some(fork) = self.runner.fork(job) else {
            return Done::Invalid;
        };
        let state = fork.state;
        let claimed = steer
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .claim(state, job.index);
        if !claimed {
            return Done::Skipped;
        }
        if self.stop.load(Ordering::Relaxed) {
            return Done::Skipped;
        }
        Done::Ran(state, self.runner.judge(job, fork))
    }
}

/// The explorer and the jobs in flight, behind one lock: jobs are handed out and their results
/// recorded in schedule order.
struct Steer<'a> {
    ex: &'a mut Explorer,
    /// Results by the order jobs were handed out, from the next one to record on.
    waiting: VecDeque<Option<(Job, Done)>>,
    handed: usize,
    recorded: usize,
    window: usize,
    /// Threads waiting for the window to move (so a result wakes them only if there are any).
    sleeping: usize,
    /// The states of jobs not yet recorded, each with the lowest job number that reached it so
    /// far. A claim goes when its job is recorded: the explorer then knows the state itself, so
    /// this holds at most the jobs in flight.
    claims: HashMap<u64, u64>,
}

/// What a thread gets from [`Steer::give`].
enum Give {
    Job(usize, Job),
    /// Wait: the oldest job in flight is too far behind.
    Full,
    Over,
}

impl Steer<'_> {
    /// May job `index` judge `state`? Not if an earlier job reached it, recorded or in flight.
    fn claim(&mut self, state: u64, index: u64) -> bool {
        if self.ex.explored(state) {
            return false;
        }
        let first = self.claims.entry(state).or_insert(index);
        if *first < index {
            return false;
        }
        *first = index;
        true
    }

    fn give(&mut self) -> Give {
        // A search stopped (a panic in a thread, the time limit) hands out nothing more.
        if self.ex.is_done() {
            return Give::Over;
        }
        if self.handed - self.recorded >= self.window {
            return Give::Full;
        }
        match self.ex.take(1).pop() {
            Some(job) => {
                self.waiting.push_back(None);
                self.handed += 1;
                Give::Job(self.handed - 1, job)
            }
            None => Give::Over,
        }
    }

    /// Stores a result and records every result now due; the explorer's dedup decides whether
    /// a run counts.
    fn submit(&mut self, slot: usize, job: Job, done: Done) {
        self.waiting[slot - self.recorded] = Some((job, done));
        while let Some(Some(_)) = self.waiting.front() {
            let (job, done) = self.waiting.pop_front().flatten().expect("a result");
            self.recorded += 1;
            if let Done::Ran(state, _) = done {
                if self.claims.get(&state) == Some(&job.index) {
                    self.claims.remove(&state);
                }
            }
            let outcome = match done {
                Done::Invalid => Outcome::Invalid,
                Done::Skipped => Outcome::Skipped,
                Done::Ran(state, verdict) if self.ex.visit(state) => Outcome::Ran(state, verdict),
                Done::Ran(..) => Outcome::Skipped,
            };
            self.ex.record(&job, outcome);
        }
    }
}

/// Asks `go_on` (the calling thread has it) whether the search goes on; stops it if not.
fn ask(st: &mut Steer, go_on: &mut Option<&mut dyn FnMut(&Explorer) -> bool>) {
    if let Some(go_on) = go_on.as_mut() {
        if !st.ex.is_done() && !go_on(st.ex) {
            st.ex.stop();
        }
    }
}

/// The next job, waiting under the lock while the window of jobs in flight is full; `None`
/// once the search is over.
fn take(
    pool: &Pool,
    mut st: MutexGuard<'_, Steer>,
    moved: &Condvar,
    go_on: &mut Option<&mut dyn FnMut(&Explorer) -> bool>,
) -> Option<(usize, Job)> {
    loop {
        match st.give() {
            Give::Job(slot, job) => return Some((slot, job)),
            Give::Full => {
                st.sleeping += 1;
                // The calling thread wakes now and then to ask `go_on` (the time limit, Ctrl-C)
                // while a slow job, a failure being minimised, holds the window.
                st = if go_on.is_some() {
                    let wait = std::time::Duration::from_millis(100);
                    let (mut st, _) = moved
                        .wait_timeout(st, wait)
                        .unwrap_or_else(PoisonError::into_inner);
                    ask(&mut st, go_on);
                    st
                } else {
                    moved.wait(st).unwrap_or_else(PoisonError::into_inner)
                };
                st.sleeping -= 1;
            }
            Give::Over => {
                // Over because the search is (not just because no job is left): the jobs in
                // flight need not run.
                if st.ex.is_done() {
                    pool.stop.store(true, Ordering::Relaxed);
                }
                return None;
            }
        }
    }
}

/// One thread's loop: under the lock, submit the last result, ask `go_on` (the calling thread
/// only) and take the next job; then fork and judge it outside the lock.
fn serve(
    pool: &Pool,
    steer: &Mutex<Steer>,
    moved: &Condvar,
    mut go_on: Option<&mut dyn FnMut(&Explorer) -> bool>,
) {
    let mut result = None;
    loop {
        let next = {
            let mut st = steer.lock().unwrap_or_else(PoisonError::into_inner);
            if let Some((slot, job, done)) = result.take() {
                st.submit(slot, job, done);
                if st.sleeping > 0 {
                    moved.notify_all();
                }
            }
            ask(&mut st, &mut go_on);
            take(pool, st, moved, &mut go_on)
        };
        let Some((slot, job)) = next else {
            return;
        };
        // A panic in a thread (a bug the search ran into) stops the search and wakes the others,
        // which would otherwise wait for its result forever; then it goes on unwinding.
        let done = match std::panic::catch_unwind(AssertUnwindSafe(|| pool.work(&job, steer))) {
            Ok(done) => done,
            Err(panic) => {
                pool.stop.store(true, Ordering::Relaxed);
                let mut st = steer.lock().unwrap_or_else(PoisonError::into_inner);
                st.ex.stop();
                moved.notify_all();
                drop(st);
                std::panic::resume_unwind(panic);
            }
        };
        result = Some((slot, job, done));
    }
}

/// Runs the search on `threads` threads until it is over or `go_on` says stop (it is asked
/// between schedules, on this thread: a time limit, Ctrl-C, progress). The result is the
/// single-threaded one.
///
/// The threads live as long as the search, this one among them. Each takes the next job under
/// a lock, forks it, claims its state and judges it (a fork is made, run and dropped on one
/// thread), and hands the result back under the same lock, where results are recorded in
/// schedule order.
pub fn run_threads(ex: &mut Explorer, threads: usize, mut go_on: impl FnMut(&Explorer) -> bool) {
    if threads <= 1 {
        while !ex.is_done() {
            if !go_on(ex) {
                ex.stop();
                break;
            }
            ex.step(16);
        }
        return;
    }
    let pool = Pool {
        runner: ex.runner(),
        stop: AtomicBool::new(false),
    };
    let steer = Mutex::new(Steer {
        ex,
        waiting: VecDeque::new(),
        handed: 0,
        recorded: 0,
        window: threads * WINDOW_PER_THREAD,
        sleeping: 0,
        claims: HashMap::new(),
    });
    let moved = Condvar::new();
    std::thread::scope(|s| {
        for _ in 1..threads {
            s.spawn(|| serve(&pool, &steer, &moved, None));
        }
        serve(&pool, &steer, &moved, Some(&mut go_on));
    });
    steer
        .into_inner()
        .unwrap_or_else(PoisonError::into_inner)
        .ex
        .stop();
}

/// A stable hash of a script (FNV-1a), so merged shards are known to come from one scenario.
pub fn script_hash(src: &str) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in src.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{h:016x}")
}

/// The search's JSON summary (`listwatch-explore/2`): figures, coverage per fault type, the
/// counterexamples, and what shards need to be merged.
pub fn summary(
    src: &str,
    scenario: &crate::Scenario,
    ex: &Explorer,
    seconds: f64,
    interrupted: bool,
) -> Value {
    let st = ex.stats;
    let shown = distinct(&ex.failures);
    let failures: Vec<Value> = ex
        .failures
        .iter()
        .map(|f| {
            json!({
                "index": f.index,
                "state": format!("{:016x}", f.state),
                "faults": f.faults.iter().map(|x| x.describe(&scenario.config)).collect::<Vec<_>>(),
                "effects": f.effects,
                "broken": f.broken.iter().map(|b| broken_text(scenario, b)).collect::<Vec<_>>(),
                "esr_only": f.esr_only(),
                "counterexample": counterexample(src, scenario, f, ex.end_ms()),
            })
        })
        .collect();
    let base = (!ex.base_broken.is_empty())
        .then(|| base_counterexample(src, scenario, &ex.base_broken, ex.end_ms()));
    let counterexamples: Vec<String> = base
        .iter()
        .cloned()
        .chain(
            shown
                .iter()
                .map(|f| counterexample(src, scenario, f, ex.end_ms())),
        )
        .collect();
    let budget = ex.budget();
    json!({
        "format": "listwatch-explore/2",
        "script": script_hash(src),
        "shard": [ex.shard().0, ex.shard().1],
        "budget": budget.schedules,
        "first_failure": budget.first_failure,
        "faults": st.faults,
        "space": st.space,
        "planned": ex.planned(),
        "tried": st.tried,
        "skipped": st.skipped,
        "states": st.states,
        "ineffective": st.ineffective,
        "replay_mismatch": st.replay_mismatch,
        "unsettled": st.unsettled,
        "complete": st.tried >= ex.planned() || (budget.first_failure && !ex.failures.is_empty()),
        "interrupted": interrupted,
        "seconds": seconds,
        "schedules_per_second": st.tried as f64 / seconds.max(1e-9),
        "coverage": coverage(&st),
        "base_broken": ex.base_broken.iter().map(|b| broken_text(scenario, b)).collect::<Vec<_>>(),
        "counterexample": counterexamples.first(),
        "counterexamples": counterexamples,
        "failures": failures,
        "ineffective_at": ex.ineffective.iter().map(|&(i, s)| json!([i, format!("{s:016x}")])).collect::<Vec<_>>(),
    })
}

fn coverage(st: &Stats) -> Value {
    let mut m = serde_json::Map::new();
    for (t, name) in FAULT_TYPES.iter().enumerate() {
        m.insert(
            name.to_string(),
            json!({
                "candidates": st.candidates_by_type[t],
                "tried": st.tried_by_type[t],
                "failed": st.failed_by_type[t],
            }),
        );
    }
    Value::Object(m)
}

/// Merges shards' summaries into the summary an unsharded run gives: figures add up, and of
/// the failures, the first schedule to reach each state wins (as the unsharded run's dedup
/// would have it), then distinct minimal schedules in schedule order.
pub fn merge(docs: &[Value]) -> Result<Value, String> {
    for (i, d) in docs.iter().enumerate() {
        check_counts(d).map_err(|e| format!("shard summary {}: {e}", i + 1))?;
    }
    check_shards(docs)?;
    let first = &docs[0];
    // Each count is at most MAX_BUDGET_SCHEDULES and there are at most MAX_SHARDS: no overflow.
    let sum = |k: &str| docs.iter().map(|d| d[k].as_u64().unwrap_or(0)).sum::<u64>();
    let any = |k: &str| docs.iter().any(|d| d[k].as_bool().unwrap_or(false));
    let all = |k: &str| docs.iter().all(|d| d[k].as_bool().unwrap_or(false));
    let first_failure = first["first_failure"].as_bool().unwrap_or(true);
    let failures = merged_failures(docs, first_failure);
    let counterexamples = merged_counterexamples(first, &failures);
    let seconds = docs
        .iter()
        .map(|d| d["seconds"].as_f64().unwrap_or(0.0))
        .fold(0.0, f64::max);
    let mut ineffective_at: Vec<Value> = docs
        .iter()
        .flat_map(|d| d["ineffective_at"].as_array().cloned().unwrap_or_default())
        .collect();
    ineffective_at.sort_by_key(|x| x[0].as_u64());
    Ok(json!({
        "format": first["format"],
        "script": first["script"],
        "shard": [0, 1],
        "budget": first["budget"],
        "first_failure": first_failure,
        "faults": first["faults"],
        "space": first["space"],
        "planned": sum("planned"),
        "tried": sum("tried"),
        "skipped": sum("skipped"),
        "states": sum("states"),
        "ineffective": sum("ineffective"),
        "replay_mismatch": sum("replay_mismatch"),
        "unsettled": sum("unsettled"),
        "complete": all("complete") || (first_failure && !failures.is_empty()),
        "interrupted": any("interrupted"),
        "seconds": seconds,
        "schedules_per_second": docs.iter().map(|d| d["schedules_per_second"].as_f64().unwrap_or(0.0)).sum::<f64>(),
        "coverage": merged_coverage(docs),
        "base_broken": first["base_broken"],
        "counterexample": counterexamples.first(),
        "counterexamples": counterexamples,
        "failures": failures,
        "ineffective_at": ineffective_at,
    }))
}

/// A count a summary holds: absent, or a whole number from 0 to `max` (what the search can
/// have counted); a forged one is refused before anything is sized by it.
fn count_at(v: &Value, what: &str, max: u64) -> Result<u64, String> {
    match v {
        Value::Null => Ok(0),
        Value::Number(n) => match n.as_u64() {
            Some(n) if n <= max => Ok(n),
            _ => Err(format!(
                "`{what}` is {n}, not a whole number from 0 to {max}"
            )),
        },
        v => Err(format!("`{what}` is {v}, not a number")),
    }
}

/// An array a summary holds: absent, or at most `max` items.
fn array_at<'a>(v: &'a Value, what: &str, max: u64) -> Result<&'a [Value], String> {
    match v {
        Value::Null => Ok(&[]),
        Value::Array(a) if a.len() as u64 <= max => Ok(a),
        Value::Array(a) => Err(format!(
            "`{what}` holds {} items, more than the {max} a search can have",
            a.len()
        )),
        v => Err(format!("`{what}` is {v}, not an array")),
    }
}

/// Every count and array of one summary within the limits of a search: the shard (`I/N` with
/// N at most `MAX_SHARDS`), the budget and every figure at most `MAX_BUDGET_SCHEDULES`, each
/// failure's number and each list no longer than the schedules there are.
fn check_counts(d: &Value) -> Result<(), String> {
    let max = MAX_BUDGET_SCHEDULES;
    let shard = array_at(&d["shard"], "shard", 2)?;
    let n = count_at(
        shard.get(1).unwrap_or(&Value::Null),
        "shard count",
        MAX_SHARDS,
    )?;
    let i = count_at(
        shard.first().unwrap_or(&Value::Null),
        "shard number",
        MAX_SHARDS,
    )?;
    if shard.len() != 2 || n == 0 || i >= n {
        return Err(format!(
            "`shard` is {}, not [I, N] with 0 <= I < N <= {MAX_SHARDS}",
            d["shard"]
        ));
    }
    for k in [
        "budget",
        "faults",
        "space",
        "planned",
        "tried",
        "skipped",
        "states",
        "ineffective",
        "replay_mismatch",
        "unsettled",
    ] {
        count_at(&d[k], k, max)?;
    }
    for name in FAULT_TYPES {
        for k in ["candidates", "tried", "failed"] {
            count_at(
                &d["coverage"][name][k],
                &format!("coverage.{name}.{k}"),
                max,
            )?;
        }
    }
    for f in array_at(&d["failures"], "failures", max)? {
        count_at(&f["index"], "failures[].index", max)?;
    }
    for x in array_at(&d["ineffective_at"], "ineffective_at", max)? {
        count_at(&x[0], "ineffective_at[][0]", max)?;
    }
    array_at(&d["counterexamples"], "counterexamples", max)?;
    Ok(())
}

/// The shards are of one search, each once: the same script, budget and space, shards 0..n.
/// Their counts are checked (`check_counts`) first.
fn check_shards(docs: &[Value]) -> Result<(), String> {
    let first = docs.first().ok_or("nothing to merge")?;
    let same = |k: &str| docs.iter().all(|d| d[k] == first[k]);
    for k in [
        "format",
        "script",
        "budget",
        "first_failure",
        "faults",
        "space",
    ] {
        if !same(k) {
            return Err(format!(
                "the shards differ in `{k}`: they are not one search"
            ));
        }
    }
    let n = first["shard"][1].as_u64().unwrap_or(1);
    let mut have: Vec<u64> = docs
        .iter()
        .map(|d| d["shard"][0].as_u64().unwrap_or(0))
        .collect();
    listwatch_core::order::sort_by_u64(&mut have, |&h| h);
    // One summary per shard: `n` is compared with what was given before it sizes anything.
    if docs.iter().any(|d| d["shard"][1].as_u64() != Some(n))
        || docs.len() as u64 != n
        || have.iter().enumerate().any(|(i, &s)| s != i as u64)
    {
        return Err(format!(
            "expected shards 0..{n} of {n} once each, got {have:?}"
        ));
    }
    Ok(())
}

/// The failures an unsharded search records: failures and ineffective failing schedules claim
/// their state, and the earliest claim wins.
fn merged_failures(docs: &[Value], first_failure: bool) -> Vec<Value> {
    let mut claims: Vec<(u64, String, Option<&Value>)> = vec![];
    for d in docs {
        for f in d["failures"].as_array().into_iter().flatten() {
            claims.push((
                f["index"].as_u64().unwrap_or(0),
                f["state"].as_str().unwrap_or("").to_string(),
                Some(f),
            ));
        }
        for x in d["ineffective_at"].as_array().into_iter().flatten() {
            claims.push((
                x[0].as_u64().unwrap_or(0),
                x[1].as_str().unwrap_or("").to_string(),
                None,
            ));
        }
    }
    listwatch_core::order::sort_by_u64(&mut claims, |c| c.0);
    let mut states = std::collections::HashSet::new();
    let mut failures: Vec<Value> = vec![];
    for (_, state, f) in claims {
        if states.insert(state) {
            if let Some(f) = f {
                failures.push(f.clone());
            }
        }
    }
    if first_failure {
        failures.truncate(1);
    }
    failures
}

/// The base run's own counterexample when it is broken, then one per distinct fault list.
fn merged_counterexamples(first: &Value, failures: &[Value]) -> Vec<Value> {
    let mut counterexamples: Vec<Value> = vec![];
    if let Some(base) = first["counterexamples"]
        .as_array()
        .filter(|_| !first["base_broken"].as_array().is_none_or(|b| b.is_empty()))
        .and_then(|c| c.first())
    {
        counterexamples.push(base.clone());
    }
    let mut shown: Vec<&Value> = vec![];
    for f in failures {
        if !shown.iter().any(|g| g["faults"] == f["faults"]) {
            shown.push(f);
            counterexamples.push(f["counterexample"].clone());
        }
    }
    counterexamples
}

/// Schedules tried and failed per fault type, summed over the shards.
fn merged_coverage(docs: &[Value]) -> Value {
    let mut cov = docs[0]["coverage"].clone();
    for name in FAULT_TYPES {
        for k in ["tried", "failed"] {
            cov[name][k] = json!(docs
                .iter()
                .map(|d| d["coverage"][name][k].as_u64().unwrap_or(0))
                .sum::<u64>());
        }
    }
    cov
}

/// A merged (or single) summary, read back for the command line.
pub struct Digest {
    /// The merged summary as JSON text.
    pub json: String,
    pub counterexamples: Vec<String>,
    pub base_broken: Vec<String>,
    pub shards: usize,
    pub tried: u64,
    pub planned: u64,
    pub space: u64,
    pub complete: bool,
}

/// How many JSON values a text holds, at most `max + 1` (a count of the places a value starts,
/// outside strings, without parsing): bounds what parsing it allocates.
fn json_values(text: &str, max: usize) -> usize {
    let (mut n, mut in_string, mut escaped, mut in_scalar) = (0, false, false, false);
    for b in text.bytes() {
        if in_string {
            match b {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        let scalar = b.is_ascii_alphanumeric() || matches!(b, b'-' | b'+' | b'.');
        if b == b'"' || b == b'[' || b == b'{' || (scalar && !in_scalar) {
            n += 1;
            if n > max {
                break;
            }
        }
        in_string = b == b'"';
        in_scalar = scalar;
    }
    n
}

/// Merges shards' `--json` outputs (as text).
pub fn merge_texts(texts: &[String]) -> Result<Digest, String> {
    let mut values = 0;
    for (i, t) in texts.iter().enumerate() {
        values += json_values(t, MAX_SUMMARY_VALUES);
        if values > MAX_SUMMARY_VALUES {
            return Err(format!(
                "shard summary {} brings the summaries to more than the limit of {MAX_SUMMARY_VALUES} JSON values",
                i + 1
            ));
        }
    }
    let docs = texts
        .iter()
        .enumerate()
        .map(|(i, t)| {
            serde_json::from_str::<Value>(t)
                .map_err(|e| format!("shard summary {} is not JSON: {e}", i + 1))
        })
        .collect::<Result<Vec<_>, _>>()?;
    if let Some(d) = docs
        .iter()
        .find(|d| d["format"] != json!("listwatch-explore/2"))
    {
        return Err(format!(
            "not a `listwatch explore --json` summary (format {})",
            d["format"]
        ));
    }
    let m = merge(&docs)?;
    let strings = |v: &Value| -> Vec<String> {
        v.as_array()
            .into_iter()
            .flatten()
            .filter_map(|s| s.as_str().map(str::to_string))
            .collect()
    };
    Ok(Digest {
        counterexamples: strings(&m["counterexamples"]),
        base_broken: strings(&m["base_broken"]),
        shards: docs.len(),
        tried: m["tried"].as_u64().unwrap_or(0),
        planned: m["planned"].as_u64().unwrap_or(0),
        space: m["space"].as_u64().unwrap_or(0),
        complete: m["complete"].as_bool().unwrap_or(false),
        json: crate::export::to_string(&m),
    })
}

/// The summary as JSON text.
pub fn summary_text(
    src: &str,
    scenario: &crate::Scenario,
    ex: &Explorer,
    seconds: f64,
    interrupted: bool,
) -> String {
    crate::export::to_string(&summary(src, scenario, ex, seconds, interrupted))
}
