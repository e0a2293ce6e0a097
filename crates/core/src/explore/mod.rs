//! The explorer: searches fault schedules for one that breaks a scenario's expectations or ESR.
//!
//! Only faults a real cluster has (semantics.md §8c, §9), each read off the fault-free run:
//!
//! - **crash** (intermediate state): a crash between every pair of writes of every reconcile the
//!   fault-free run performs, the controller restarted 5 s later;
//! - **hold** (unobserved state, Sieve's injection): the controller's notifications held from
//!   just before a write of an object it reads until a later state of that object arrives;
//! - **unobserved**: the controller cut off from just before such a write until just after the
//!   next one of the same object;
//! - **stale** (time travel): another apiserver's cache paused right after it applied a change
//!   of a kind the controller reads (its lag included: the fault-free trace's `CacheAdd` events),
//!   and the controller restarted against it after one of its own writes, or 1 s after a user
//!   write, once that cache has missed at least one write;
//! - **disconnect**: a watch cut at a write of a kind the controller reads, for 5 s or 60 s.
//!
//! Candidates are generated lazily (memory grows with the trace, not with the number of
//! candidates, which is capped at [`MAX_SINGLES`]) and interleaved round-robin over the fault
//! types, so a budget of N covers every pattern before it goes deep into one. Single faults
//! come first, then pairs among the first [`PAIR_BASE`] singles.
//!
//! Each schedule runs on a fork: a clone of the fault-free run (the nearest of a few checkpoints,
//! advanced to just before the first fault) with the faults appended to the timeline
//! (`Sim::schedule_input`), so the fork behaves exactly like a fresh run of the extended script.
//! Right after its last fault is injected the fork's state is hashed; a state already explored
//! is skipped. A failure is minimised from its judged fork (faults that are not needed are
//! dropped, windows shortened, crash points moved earlier, each smaller schedule run on a fork)
//! before it is reported, with each fault labelled by what it did in the run reported; debug
//! builds also replay it from scratch, the check of its fork.
//!
//! The search is split into phases ([`Explorer::take`], [`Explorer::fork`], [`Explorer::judge`],
//! [`Explorer::record`]) so a caller can run forks on many threads and still get exactly the
//! result of [`Explorer::step`]: forks and judgements are pure, dedup and recording happen in
//! schedule order. Core itself stays single-threaded. Schedules are numbered; `shard (i, n)`
//! explores only the numbers `k` with `k % n == i`, and a failure carries its number and state
//! hash so shards' results can be merged into the unsharded one.

use crate::trace::{FaultEvent, StoreEvent};
use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use crate::config::{Config, TimedInput};
use crate::model::{DurationMs, TimeMs};
use crate::sim::Sim;
use crate::trace::{Actor, EventKind};
use crate::verdict::{check, Expect};

mod candidates;
mod faults;
mod minimise;
mod reading;

use candidates::pair;
pub use candidates::{candidates, Candidates};
pub use faults::crash::RESTART_AFTER_MS;
pub use faults::hold::HOLD_FOR_MS;
pub use faults::stale::STALE_FOR_MS;
pub use faults::{
    CrashBetweenWrites, Disconnect, Fault, FaultType, Hold, Stale, Unobserved, FAULT_TYPES,
};
use minimise::Replays;

/// Every schedule runs until at least this long after its faults end, so the system can settle:
/// ESR is about what happens once faults stop, and client-go's backoff alone can take a minute
/// (30 s doubled by jitter) twice over (a refused re-watch, then the 410's relist).
pub const SETTLE_MS: DurationMs = DurationMs(180_000);
/// A schedule that fails at its end runs on until it passes or nothing pending could make a
/// write (`Sim::quiescent`), at most this long: the work queue's per-item backoff doubles up
/// to 1000 s (`util/workqueue/default_rate_limiters.go`), so a retry can come long after
/// `SETTLE_MS`. One still failing and not quiescent then "did not settle" (`Verdict::Unsettled`),
/// which is not a failure.
pub const SETTLE_LIMIT_MS: DurationMs = DurationMs(3_600_000);
/// The longest a candidate fault lasts (a 60 s disconnect, a hold nothing supersedes).
pub const MAX_FAULT_MS: DurationMs = DurationMs(60_000);
/// Single-fault schedules considered at most.
pub const MAX_SINGLES: u64 = 1_000_000;
/// Pairs are formed among this many first singles (so at most ~2 million pairs).
pub const PAIR_BASE: usize = 2_000;

/// How much to search.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Budget {
    /// Schedules to run at most (skipped ones included), counted over all shards.
    pub schedules: u64,
    /// Stop at the first failure.
    pub first_failure: bool,
}

impl Default for Budget {
    fn default() -> Self {
        Budget {
            schedules: 2000,
            first_failure: true,
        }
    }
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Candidate single faults (capped at [`MAX_SINGLES`]).
    pub faults: u64,
    /// Schedules considered (run or skipped) by this explorer (its shard).
    pub tried: u64,
    /// Schedules skipped because they reached an explored state.
    pub skipped: u64,
    /// Distinct states reached right after the last fault.
    pub states: u64,
    /// Schedules in the search space (singles, then pairs), all shards together.
    pub space: u64,
    /// Failing schedules discarded because a fault had no effect.
    pub ineffective: u64,
    /// Candidate singles per fault type ([`FAULT_TYPES`]).
    pub candidates_by_type: [u64; FAULT_TYPES.len()],
    /// Schedules tried that hold a fault of each type.
    pub tried_by_type: [u64; FAULT_TYPES.len()],
    /// Failing schedules (before minimisation and dedup) with a fault of each type.
    pub failed_by_type: [u64; FAULT_TYPES.len()],
    /// Failures whose replay from scratch passed (the fork and the replay disagree: a bug);
    /// replayed only in debug builds (the tests).
    pub replay_mismatch: u64,
    /// Schedules still failing and not quiescent at the settle limit ([`SETTLE_LIMIT_MS`]):
    /// not judged broken.
    pub unsettled: u64,
}

/// A schedule that breaks the scenario, minimised.
#[derive(Clone, Debug, PartialEq)]
pub struct Failure {
    pub faults: Vec<Fault>,
    /// What broke: the index of the expectation (`None` for the implicit ESR check) and what
    /// was found.
    pub broken: Vec<Broken>,
    /// What each fault did in the replay, read from its trace (one per fault).
    pub effects: Vec<String>,
    /// The schedule's number in the search (for merging shards).
    pub index: u64,
    /// The state hash right after its last fault (for merging shards).
    pub state: u64,
}

impl Failure {
    /// Only ESR broke (the scenario's own expectations hold).
    pub fn esr_only(&self) -> bool {
        self.broken.iter().all(|b| b.expectation.is_none())
    }
}

/// One expectation that failed.
#[derive(Clone, Debug, PartialEq)]
pub struct Broken {
    pub expectation: Option<usize>,
    pub found: String,
}

/// A numbered schedule.
#[derive(Clone, Debug, PartialEq)]
pub struct Job {
    pub index: u64,
    pub faults: Vec<Fault>,
}

/// A job's fork, run up to its last fault.
pub struct Fork {
    pub sim: Sim,
    pub state: u64,
    /// What the expectations that read the past found in the fork's events (`history`), and
    /// how many events that was: judging adds only what the run does after them.
    past: Vec<u64>,
    past_len: usize,
}

/// A failing schedule after minimisation: its needed faults, what broke, what each fault did.
pub type Minimal = (Vec<Fault>, Vec<Broken>, Vec<String>);

/// How a schedule's run ended.
#[derive(Clone, Debug, PartialEq)]
pub enum Verdict {
    Pass,
    /// It fails, but a fault had no effect (a hold never superseded, a pause that missed nothing).
    Ineffective,
    /// It fails at the settle limit with work still pending ([`SETTLE_LIMIT_MS`]): it did not
    /// settle, which says nothing about whether it would converge.
    Unsettled,
    /// It fails; minimised (`None`: its replay from scratch passed, which would be a bug).
    Fails(Option<Minimal>),
}

/// What happened to a job, for [`Explorer::record`].
pub enum Outcome {
    /// Its state was reached before.
    Skipped,
    /// It could not be forked (the configuration refused it).
    Invalid,
    Ran(u64, Verdict),
}

/// What forks and judgements read, fixed once the search starts: cheap to clone and shared by
/// every thread ([`Explorer::runner`]), so a caller can fork and judge while the explorer
/// records.
#[derive(Clone)]
pub struct Runner(Arc<RunnerData>);

struct RunnerData {
    config: Arc<Config>,
    expects: Vec<Expect>,
    /// Clones of the fault-free run at increasing times; the first is the unstarted run.
    checkpoints: Vec<Sim>,
    /// The history each checkpoint's trace holds (see [`history`]).
    histories: Vec<Vec<u64>>,
    /// The timeline's writes that fail in the fault-free run (see `user_failures`).
    user_failures: usize,
    /// Whether schedules replayed while minimising fail (see [`Runner::fails`]): a pure
    /// function, so every thread may remember and reuse it, in any order. A pair minimises
    /// through the singles it holds, which were minimised before.
    replays: Mutex<Replays>,
}

pub struct Explorer {
    runner: Runner,
    budget: Budget,
    singles: Candidates,
    /// The first [`PAIR_BASE`] singles, kept for pairs.
    base: Vec<Fault>,
    /// The next schedule's number.
    next: u64,
    shard: (u64, u64),
    seen: HashSet<u64>,
    pub stats: Stats,
    pub failures: Vec<Failure>,
    /// Failing schedules whose fault had no effect: (number, state), for merging shards.
    pub ineffective: Vec<(u64, u64)>,
    /// The fault-free run itself fails: nothing to search for.
    pub base_broken: Vec<Broken>,
    done: bool,
}

/// What broke in a finished run, if anything: every failed expectation, and ESR when the
/// scenario does not check it itself.
fn broken(sim: &Sim, expects: &[Expect]) -> Vec<Broken> {
    broken_of(sim, expects, |_| true)
}

/// [`broken`] of only the expectations `judged` picks (and the implicit ESR check).
fn broken_of(sim: &Sim, expects: &[Expect], judged: impl Fn(&Expect) -> bool) -> Vec<Broken> {
    let mut out = vec![];
    for (i, e) in expects.iter().enumerate().filter(|(_, e)| judged(e)) {
        let o = check(sim, e);
        if !o.pass {
            out.push(Broken {
                expectation: Some(i),
                found: o.found,
            });
        }
    }
    implicit_esr(sim, expects, &mut out);
    out
}

/// ESR, into `out` when it broke, unless the scenario checks it itself (then it is one of
/// `expects`).
fn implicit_esr(sim: &Sim, expects: &[Expect], out: &mut Vec<Broken>) {
    if !expects
        .iter()
        .any(|e| matches!(e, Expect::Esr { controller: None }))
    {
        let o = check(sim, &Expect::Esr { controller: None });
        if !o.pass {
            out.push(Broken {
                expectation: None,
                found: o.found,
            });
        }
    }
}

/// Is `b` about the state the system ends in (final fields, existence, ESR), which a run that
/// goes on may still reach? Counts, messages, reads, probes and traces are about the run up to
/// its end, as the user wrote them, so they are judged there and never on a longer run.
fn about_the_end_state(b: &Broken, expects: &[Expect]) -> bool {
    b.expectation.is_none_or(|i| end_state_expect(&expects[i]))
}

/// Is `x` about the state the system ends in (see [`about_the_end_state`])?
fn end_state_expect(x: &Expect) -> bool {
    matches!(
        x,
        Expect::Final { .. } | Expect::Exists { .. } | Expect::Object { .. } | Expect::Esr { .. }
    )
}

/// Runs a run that ended failing only on its end state on until that holds or it is quiescent,
/// at most [`SETTLE_LIMIT_MS`] past its end; false when it did not settle by then.
///
/// The end state is etcd's (the objects, and ESR, which only a commit changes), so it is judged
/// again only once etcd's revision moved: most steps of a settling run are timers that write
/// nothing. ESR for every controller holding implies it for each, so it is asked once.
fn settle(sim: &mut Sim, expects: &[Expect]) -> bool {
    let config = sim.config();
    let limit = (config.end_ms + SETTLE_LIMIT_MS).min(TimeMs::ZERO + config.limits.max_time_ms);
    let objects: Vec<&Expect> = expects
        .iter()
        .filter(|x| end_state_expect(x) && !matches!(x, Expect::Esr { .. }))
        .collect();
    let mut judged: Option<(crate::model::Rv, bool)> = None;
    sim.run_until_settled(limit, |s| {
        let rev = s.etcd().rev();
        if let Some((_, holds)) = judged.filter(|&(at, _)| at == rev) {
            return holds;
        }
        let holds = matches!(
            crate::esr::esr_outcome(s, None),
            crate::esr::EsrOutcome::Holds { .. }
        ) && objects.iter().all(|x| check(s, x).pass);
        judged = Some((rev, holds));
        holds
    })
}

/// What of the end state is broken (see [`about_the_end_state`]): [`broken`] of only the
/// expectations about it.
fn end_state_broken(sim: &Sim, expects: &[Expect]) -> Vec<Broken> {
    broken_of(sim, expects, end_state_expect)
}

/// What broke in a run, and whether it settled: a run that breaks an expectation about its past
/// is judged at its end; one that breaks only its end state is settled as [`settle`] does first
/// (a work queue's retry may come long after the faults: 5 ms doubling to 1000 s).
fn broken_settled(sim: &mut Sim, expects: &[Expect]) -> (Vec<Broken>, bool) {
    let b = broken(sim, expects);
    if b.is_empty() || !b.iter().all(|b| about_the_end_state(b, expects)) {
        return (b, true);
    }
    let settled = settle(sim, expects);
    (end_state_broken(sim, expects), settled)
}

/// Does expectation `x` hold at the end of a finished run, as [`check`] says? A count or a
/// message is judged on `n`, what [`history`] found for it, not by reading every event of the
/// run again (a message is a formatted line per event).
fn holds(sim: &Sim, x: &Expect, n: u64) -> bool {
    match x {
        Expect::Count { cmp, value, .. } | Expect::Message { cmp, value, .. } => {
            cmp.holds(n as i64, *value)
        }
        x => check(sim, x).pass,
    }
}

/// Does a finished run pass, as `broken(..).is_empty()` says (see [`holds`])?
fn passes(sim: &Sim, expects: &[Expect], past: &[u64]) -> bool {
    expects.iter().zip(past).all(|(x, &n)| holds(sim, x, n))
        && (expects
            .iter()
            .any(|e| matches!(e, Expect::Esr { controller: None }))
            || check(sim, &Expect::Esr { controller: None }).pass)
}

/// How a finished run is judged, as [`broken_settled`] would say without the words.
#[derive(Debug, PartialEq)]
enum Judged {
    Pass,
    /// It fails only on its end state, still at the settle limit with work pending.
    Unsettled,
    /// It fails: at the end the script gives (`at_end`: an expectation about the past broke),
    /// or on its end state once settled.
    Broke {
        at_end: bool,
    },
}

/// Judges a finished run whose history is `past`, settling it first if only its end state is
/// broken (see [`broken_settled`]).
fn judged(sim: &mut Sim, expects: &[Expect], past: &[u64]) -> Judged {
    if passes(sim, expects, past) {
        return Judged::Pass;
    }
    let only_end_state =
        (expects.iter().zip(past)).all(|(x, &n)| end_state_expect(x) || holds(sim, x, n));
    if !only_end_state {
        return Judged::Broke { at_end: true };
    }
    let settled = settle(sim, expects);
    if end_state_broken(sim, expects).is_empty() {
        Judged::Pass
    } else if !settled {
        Judged::Unsettled
    } else {
        Judged::Broke { at_end: false }
    }
}

/// What broke in a run [`judged`] found broken, in words.
fn broken_words(sim: &Sim, expects: &[Expect], at_end: bool) -> Vec<Broken> {
    match at_end {
        true => broken(sim, expects),
        false => end_state_broken(sim, expects),
    }
}

/// Adds what `events` hold for each expectation that reads the past (the events a count counts,
/// the specs a reconcile read) to `acc`; expectations about the end state add nothing.
fn history(sim: &Sim, events: crate::trace::Iter, expects: &[Expect], acc: &mut [u64]) {
    for (x, a) in expects.iter().zip(acc.iter_mut()) {
        match x {
            Expect::Count {
                what, scope, by_ms, ..
            } => {
                for e in events.clone() {
                    if by_ms.is_none_or(|b| e.time_ms <= b) {
                        *a += crate::verdict::counts(sim, e, what, scope);
                    }
                }
            }
            Expect::Message { text, by_ms, .. } => {
                for e in events.clone() {
                    if by_ms.is_none_or(|b| e.time_ms <= b) {
                        *a += u64::from(crate::verdict::says(sim, e, text));
                    }
                }
            }
            // What `check` judges (the controller, and the object by kind and name, with the
            // spec): two forks whose reconciles read different objects differ here.
            Expect::Saw {
                controller,
                kind,
                name,
                spec,
                ..
            } => {
                for e in events.clone() {
                    *a += u64::from(crate::verdict::saw(sim, e, *controller, *kind, name, *spec));
                }
            }
            _ => {}
        }
    }
}

/// What the dedup key holds of a run's past for each expectation (see [`history`]): nonzero for
/// an `expect saw` exactly when `check` finds it seen.
pub fn past(sim: &Sim, expects: &[Expect]) -> Vec<u64> {
    let mut acc = vec![0; expects.len()];
    history(sim, sim.trace().iter(), expects, &mut acc);
    acc
}

/// The explorer's dedup key: the state hash and what the past holds for the expectations that
/// read it.
fn key(sim: &Sim, past: &[u64]) -> u64 {
    let mix = |h: u64, x: u64| (h ^ x).wrapping_mul(0x0100_0000_01b3);
    past.iter().fold(sim.state_hash(), |h, &x| mix(h, x))
}

/// Runs a configuration extended with faults from scratch (to its end: see [`settle`]).
pub fn replay(config: &Config, faults: &[Fault]) -> Result<Sim, crate::config::ConfigError> {
    let mut c = config.clone();
    c.timeline.extend(faults.iter().flat_map(|f| f.inputs()));
    crate::order::sort_by_u64(&mut c.timeline, |t| t.at_ms.0);
    let mut sim = Sim::new(c)?;
    sim.run();
    Ok(sim)
}

/// How many checkpoints of the fault-free run to keep: fewer when its trace is long.
fn checkpoint_count(events: usize) -> usize {
    (4_000_000 / events.max(1)).clamp(2, 32)
}

/// Clones of the unstarted run `fresh` at evenly spaced events of the fault-free run.
fn checkpoints(fresh: Sim, original: &Sim) -> Vec<Sim> {
    let mut checkpoints = vec![fresh.clone()];
    let n = checkpoint_count(original.trace().len());
    let mut times: Vec<TimeMs> = (1..n)
        .filter_map(|k| {
            original
                .trace()
                .get(original.trace().len() * k / n)
                .map(|e| e.time_ms)
        })
        .collect();
    times.dedup();
    let mut cur = fresh;
    for t in times {
        cur.handle_timeout(t);
        checkpoints.push(cur.clone());
    }
    checkpoints
}

impl Explorer {
    pub fn new(
        config: Config,
        expects: Vec<Expect>,
        budget: Budget,
    ) -> Result<Explorer, crate::config::ConfigError> {
        Explorer::against(config, expects, budget, None)
    }

    /// An explorer whose faults are only against `only` (`explore --controller`): the other
    /// controllers are the cluster's helpers, kept fault-free.
    pub fn against(
        config: Config,
        expects: Vec<Expect>,
        budget: Budget,
        only: Option<crate::model::ControllerId>,
    ) -> Result<Explorer, crate::config::ConfigError> {
        let mut original = Sim::new(config.clone())?;
        original.run();
        let singles = Candidates::new(&original, only);
        // Every schedule, and the fault-free reference, runs long enough to settle. Candidates
        // start by the original end and last at most a minute (a 60 s disconnect or hold), so
        // that end plus a minute plus the settling time covers them all.
        let mut config = config;
        config.end_ms = (config.end_ms + MAX_FAULT_MS + SETTLE_MS)
            .min(TimeMs::ZERO + config.limits.max_time_ms);
        let config = Arc::new(config);
        let fresh = Sim::new((*config).clone())?;
        let mut full = fresh.clone();
        full.run();
        let (mut base_broken, settled) = broken_settled(&mut full, &expects);
        if !settled {
            for b in &mut base_broken {
                b.found = format!("did not settle by {}: {}", full.now_ms(), b.found);
            }
        }
        let user_failures = user_failures(&full);
        let checkpoints = checkpoints(fresh, &original);
        let histories = checkpoints
            .iter()
            .map(|s| {
                let mut h = vec![0; expects.len()];
                history(s, s.trace().iter(), &expects, &mut h);
                h
            })
            .collect();
        let n = singles.len();
        let p = n.min(PAIR_BASE as u64);
        let done = !base_broken.is_empty() || singles.is_empty();
        Ok(Explorer {
            stats: Stats {
                faults: n,
                space: n + p * p.saturating_sub(1) / 2,
                candidates_by_type: singles.by_type,
                ..Stats::default()
            },
            runner: Runner(Arc::new(RunnerData {
                config,
                expects,
                checkpoints,
                histories,
                user_failures,
                replays: Mutex::default(),
            })),
            budget,
            singles,
            base: vec![],
            next: 0,
            shard: (0, 1),
            seen: HashSet::new(),
            failures: vec![],
            ineffective: vec![],
            base_broken,
            done,
        })
    }

    /// Explore only schedules numbered `k` with `k % count == index`.
    pub fn set_shard(&mut self, index: u64, count: u64) {
        assert!(count > 0 && index < count, "shard {index}/{count}");
        self.shard = (index, count);
    }

    pub fn shard(&self) -> (u64, u64) {
        self.shard
    }

    pub fn budget(&self) -> Budget {
        self.budget
    }

    /// When every schedule's run ends (the scenario's end, extended so faults can settle).
    pub fn end_ms(&self) -> TimeMs {
        self.runner.0.config.end_ms
    }

    pub fn config(&self) -> &Config {
        &self.runner.0.config
    }

    /// What forks and judges schedules, to share with other threads.
    pub fn runner(&self) -> Runner {
        self.runner.clone()
    }

    pub fn is_done(&self) -> bool {
        self.done
    }

    /// Schedules this explorer will consider at most (its shard's part of the budget).
    pub fn planned(&self) -> u64 {
        let total = self.stats.space.min(self.budget.schedules);
        let (i, n) = self.shard;
        total / n + u64::from(total % n > i)
    }

    /// The schedule numbered `self.next`, advancing the candidate stream; `None` at the end.
    fn schedule(&mut self) -> Option<Vec<Fault>> {
        let k = self.next;
        if k >= self.stats.space.min(self.budget.schedules) {
            return None;
        }
        self.next += 1;
        let n = self.stats.faults;
        if k < n {
            let f = self.singles.next()?;
            if self.base.len() < PAIR_BASE {
                self.base.push(f.clone());
            }
            return Some(vec![f]);
        }
        // Pairs (i, j), i < j, in the order (0,1), (0,2), (1,2), (0,3), ...
        let (i, j) = pair(k - n);
        let (a, b) = (self.base.get(i as usize)?, self.base.get(j as usize)?);
        Some(vec![a.clone(), b.clone()])
    }

    /// The next `n` schedules of this shard (fewer at the end).
    pub fn take(&mut self, n: usize) -> Vec<Job> {
        let mut out = vec![];
        while out.len() < n && !self.done {
            let index = self.next;
            let Some(faults) = self.schedule() else {
                break;
            };
            if index % self.shard.1 == self.shard.0 {
                out.push(Job { index, faults });
            }
        }
        out
    }

    /// A fork of the fault-free run with the job's faults, run up to its last fault.
    pub fn fork(&self, job: &Job) -> Option<Fork> {
        self.runner.fork(job)
    }

    /// Runs a fork to its end and judges it.
    pub fn judge(&self, job: &Job, fork: Fork) -> Verdict {
        self.runner.judge(job, fork)
    }

    /// Marks a state explored; false when it was already.
    pub fn visit(&mut self, state: u64) -> bool {
        self.seen.insert(state)
    }

    /// Was this state explored (by a schedule recorded so far)?
    pub fn explored(&self, state: u64) -> bool {
        self.seen.contains(&state)
    }

    /// Records a job's outcome, in schedule order; returns true when the search is over.
    pub fn record(&mut self, job: &Job, outcome: Outcome) -> bool {
        if self.done {
            return true;
        }
        self.stats.tried += 1;
        let mut types = [false; FAULT_TYPES.len()];
        for f in &job.faults {
            types[f.type_index()] = true;
        }
        for (t, &on) in types.iter().enumerate() {
            self.stats.tried_by_type[t] += u64::from(on);
        }
        match outcome {
            Outcome::Skipped => self.stats.skipped += 1,
            Outcome::Invalid => {}
            Outcome::Ran(state, verdict) => {
                self.stats.states += 1;
                match verdict {
                    Verdict::Pass => {}
                    Verdict::Unsettled => self.stats.unsettled += 1,
                    Verdict::Ineffective => {
                        self.stats.ineffective += 1;
                        self.ineffective.push((job.index, state));
                    }
                    Verdict::Fails(minimal) => {
                        for (t, &on) in types.iter().enumerate() {
                            self.stats.failed_by_type[t] += u64::from(on);
                        }
                        match minimal {
                            Some((faults, broken, effects)) => {
                                // Every failing state is kept (shards merge them); two may
                                // minimise to one schedule, which reports show once.
                                self.failures.push(Failure {
                                    faults,
                                    broken,
                                    effects,
                                    index: job.index,
                                    state,
                                });
                                if self.budget.first_failure {
                                    self.done = true;
                                }
                            }
                            None => self.stats.replay_mismatch += 1,
                        }
                    }
                }
            }
        }
        self.done
    }

    /// One job, start to end. Never inlined, nor are `Runner::fork` and `Runner::judge`: in wasm,
    /// V8 swaps in a function's optimised code only when it is next entered (no on-stack
    /// replacement), so a search loop inlined into a function entered once per search (the
    /// worker's message handler) would run in the baseline compiler's code throughout.
    #[inline(never)]
    fn one(&mut self, job: &Job) -> bool {
        let outcome = match self.fork(job) {
            None => Outcome::Invalid,
            Some(fork) => {
                let state = fork.state;
                if self.visit(state) {
                    Outcome::Ran(state, self.judge(job, fork))
                } else {
                    Outcome::Skipped
                }
            }
        };
        self.record(job, outcome)
    }

    /// Runs up to `n` more schedules; returns true when the search is over. Never inlined (see
    /// `one`), so a caller's loop over steps stays small.
    #[inline(never)]
    pub fn step(&mut self, n: u64) -> bool {
        for _ in 0..n {
            let Some(job) = self.take(1).pop() else {
                self.done = true;
                break;
            };
            if self.one(&job) {
                break;
            }
        }
        self.done
    }

    /// Ends the search now (a time limit, Ctrl-C).
    pub fn stop(&mut self) {
        self.done = true;
    }

    pub fn run(&mut self) {
        while !self.step(1024) {}
    }

    /// Replays a failing schedule from scratch and minimises it (see [`Runner::minimise`]).
    pub fn minimise(&self, faults: &[Fault]) -> Option<Minimal> {
        self.runner.minimise(faults)
    }
}

impl Runner {
    /// A fork of the fault-free run with the job's faults, run up to its last fault.
    #[inline(never)]
    pub fn fork(&self, job: &Job) -> Option<Fork> {
        let mut inputs: Vec<TimedInput> = job.faults.iter().flat_map(|f| f.inputs()).collect();
        crate::order::sort_by_u64(&mut inputs, |t| t.at_ms.0);
        let first = inputs.first()?.at_ms;
        let last = inputs.last()?.at_ms;
        let ck = self
            .0
            .checkpoints
            .iter()
            .rposition(|s| s.trace().is_empty() || s.now_ms() < first)
            .unwrap_or(0);
        let mut sim = self.0.checkpoints[ck].clone();
        let just_before = first.saturating_sub(DurationMs(1));
        if sim.now_ms() < just_before {
            sim.handle_timeout(just_before);
        }
        for t in inputs {
            if !sim.schedule_input(t.at_ms, t.input) {
                return None;
            }
        }
        sim.handle_timeout(last);
        // Two forks in the same state judge the same only if the expectations that read the
        // past (counts, what a reconcile saw) found the same past: that goes into the key.
        let mut past = self.0.histories[ck].clone();
        let from = self.0.checkpoints[ck].trace().len();
        history(&sim, sim.trace().range(from..), &self.0.expects, &mut past);
        let state = key(&sim, &past);
        let past_len = sim.trace().len();
        Some(Fork {
            sim,
            state,
            past,
            past_len,
        })
    }

    /// Runs a fork to its end and judges it.
    #[inline(never)]
    pub fn judge(&self, job: &Job, fork: Fork) -> Verdict {
        let mut sim = fork.sim;
        sim.run();
        let mut past = fork.past;
        history(
            &sim,
            sim.trace().range(fork.past_len..),
            &self.0.expects,
            &mut past,
        );
        debug_assert_eq!(
            passes(&sim, &self.0.expects, &past),
            broken(&sim, &self.0.expects).is_empty()
        );
        match judged(&mut sim, &self.0.expects, &past) {
            Judged::Pass => Verdict::Pass,
            Judged::Unsettled => Verdict::Unsettled,
            Judged::Broke { at_end }
                if all_up(&sim)
                    && user_failures(&sim) <= self.0.user_failures
                    && job.faults.iter().all(|f| f.had_effect(&sim)) =>
            {
                // A fork runs as a fresh run of the extended timeline does, so its run is the
                // failure's: replaying it from scratch took most of a failing schedule's time.
                // Debug builds (the tests) still replay it, the check of the fork.
                if cfg!(debug_assertions) && self.fails(&job.faults, true).is_none() {
                    return Verdict::Fails(None);
                }
                // Minimised here, so callers that judge on many threads minimise there too.
                Verdict::Fails(self.minimise_run(&job.faults, Some((sim, at_end))))
            }
            Judged::Broke { .. } => Verdict::Ineffective,
        }
    }
}

/// Is every controller that was ever started running at the end? A crash the scenario writes
/// in (`crash` without a restart after it, or a `restart` at a fixed moment that a fault moved
/// the crash past) can leave a controller down for good, which no controller survives; a real
/// cluster's kubelet restarts the pod. Such failures say nothing about the controller.
pub fn all_up(sim: &Sim) -> bool {
    let mut up = vec![None; sim.config().controllers.len()];
    for e in sim.trace() {
        match e.kind {
            EventKind::Fault(FaultEvent::Crash { controller }) => {
                up[controller.index()] = Some(false)
            }
            EventKind::Fault(FaultEvent::Restart { controller, .. }) => {
                up[controller.index()] = Some(true)
            }
            _ => {}
        }
    }
    up.iter().all(|u| *u != Some(false))
}

/// How many of the timeline's own writes failed (a create that found the name still taken, an
/// update of an object not there). A schedule whose faults make more of them fail has changed
/// the workload, not tested the controller: a client would have retried, the script cannot.
pub fn user_failures(sim: &Sim) -> usize {
    sim.trace()
        .iter()
        .filter(|e| {
            e.actor == Actor::User
                && matches!(e.kind, EventKind::Store(StoreEvent::WriteFailed { .. }))
        })
        .count()
}
