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
//! is skipped. A failure is replayed from scratch and minimised (faults that are not needed are
//! dropped, windows shortened, crash points moved earlier) before it is reported, with each
//! fault labelled by what it did in the replay.
//!
//! The search is split into phases ([`Explorer::take`], [`Explorer::fork`], [`Explorer::judge`],
//! [`Explorer::record`]) so a caller can run forks on many threads and still get exactly the
//! result of [`Explorer::step`]: forks and judgements are pure, dedup and recording happen in
//! schedule order. Core itself stays single-threaded. Schedules are numbered; `shard (i, n)`
//! explores only the numbers `k` with `k % n == i`, and a failure carries its number and state
//! hash so shards' results can be merged into the unsharded one.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

use crate::config::{Config, Input, TimedInput};
use crate::model::{ApiserverId, ControllerId, DurationMs, KindId, Rv, TimeMs};
use crate::sim::Sim;
use crate::trace::{Actor, EventKind, ListRv, ReconcileResult, WatchEnd};
use crate::verdict::{check, Expect};

/// One perturbation, as the timeline inputs that cause it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Fault {
    /// Crash after write `after_writes` of the reconcile starting at `at_ms + 1`, restart 5 s
    /// later.
    CrashBetweenWrites {
        controller: ControllerId,
        at_ms: TimeMs,
        after_writes: u32,
    },
    /// Hide the state between two writes: cut the controller off from `from_ms` to `until_ms`.
    Unobserved {
        controller: ControllerId,
        from_ms: TimeMs,
        until_ms: TimeMs,
    },
    /// Sieve's unobserved state: hold the controller's notifications from `at_ms` until a later
    /// state of the object arrives (at most `for_ms`), so it never acts on the one in between.
    Hold {
        controller: ControllerId,
        at_ms: TimeMs,
        kind: KindId,
        name: String,
        /// When the later state is written (the hold's expected end).
        until_ms: TimeMs,
        for_ms: DurationMs,
    },
    /// Pause `stale`'s cache at `pause_ms`, restart the controller against it at `restart_ms`,
    /// let it catch up `for_ms` later.
    Stale {
        controller: ControllerId,
        stale: ApiserverId,
        pause_ms: TimeMs,
        restart_ms: TimeMs,
        for_ms: DurationMs,
    },
    /// Disconnect the controller at `at_ms` for `duration_ms`.
    Disconnect {
        controller: ControllerId,
        at_ms: TimeMs,
        duration_ms: DurationMs,
    },
}

/// The fault types, in the order the round-robin visits them.
pub const FAULT_TYPES: [&str; 5] = ["crash", "hold", "stale", "unobserved", "disconnect"];

pub const RESTART_AFTER_MS: DurationMs = DurationMs(5_000);
/// A hold that no later state supersedes ends after this long (and the schedule is discarded).
pub const HOLD_FOR_MS: DurationMs = DurationMs(60_000);
pub const STALE_FOR_MS: DurationMs = DurationMs(30_000);
/// Every schedule runs until at least this long after its faults end, so the system can settle:
/// ESR is about what happens once faults stop, and client-go's backoff alone can take a minute
/// (30 s doubled by jitter) twice over (a refused re-watch, then the 410's relist).
pub const SETTLE_MS: DurationMs = DurationMs(180_000);
/// The longest a candidate fault lasts (a 60 s disconnect, a hold nothing supersedes).
pub const MAX_FAULT_MS: DurationMs = DurationMs(60_000);
/// Single-fault schedules considered at most.
pub const MAX_SINGLES: u64 = 1_000_000;
/// Pairs are formed among this many first singles (so at most ~2 million pairs).
pub const PAIR_BASE: usize = 2_000;

impl Fault {
    /// Its index in [`FAULT_TYPES`].
    pub fn type_index(&self) -> usize {
        match self {
            Fault::CrashBetweenWrites { .. } => 0,
            Fault::Hold { .. } => 1,
            Fault::Stale { .. } => 2,
            Fault::Unobserved { .. } => 3,
            Fault::Disconnect { .. } => 4,
        }
    }

    pub fn controller(&self) -> ControllerId {
        match *self {
            Fault::CrashBetweenWrites { controller, .. }
            | Fault::Unobserved { controller, .. }
            | Fault::Hold { controller, .. }
            | Fault::Stale { controller, .. }
            | Fault::Disconnect { controller, .. } => controller,
        }
    }

    pub fn start_ms(&self) -> TimeMs {
        match *self {
            Fault::CrashBetweenWrites { at_ms, .. }
            | Fault::Hold { at_ms, .. }
            | Fault::Disconnect { at_ms, .. } => at_ms,
            Fault::Unobserved { from_ms, .. } => from_ms,
            Fault::Stale { pause_ms, .. } => pause_ms,
        }
    }

    pub fn inputs(&self) -> Vec<TimedInput> {
        let at = |at_ms, input| TimedInput { at_ms, input };
        let cut = |controller, at_ms, duration_ms| {
            vec![at(
                at_ms,
                Input::Disconnect {
                    controller,
                    duration_ms,
                },
            )]
        };
        match *self {
            Fault::CrashBetweenWrites {
                controller,
                at_ms,
                after_writes,
            } => vec![at(
                at_ms,
                Input::Crash {
                    controller,
                    after_writes: Some(after_writes),
                    restart_after_ms: Some(RESTART_AFTER_MS),
                },
            )],
            Fault::Unobserved {
                controller,
                from_ms,
                until_ms,
            } => cut(controller, from_ms, DurationMs::between(from_ms, until_ms)),
            Fault::Disconnect {
                controller,
                at_ms,
                duration_ms,
            } => cut(controller, at_ms, duration_ms),
            Fault::Hold {
                controller,
                at_ms,
                kind,
                ref name,
                for_ms,
                ..
            } => vec![at(
                at_ms,
                Input::Hold {
                    controller,
                    kind,
                    name: name.clone(),
                    for_ms,
                },
            )],
            Fault::Stale { .. } => self.stale_inputs(),
        }
    }

    /// A stale fault's inputs: pause the cache, restart the controller against it, resume.
    fn stale_inputs(&self) -> Vec<TimedInput> {
        let Fault::Stale {
            controller,
            stale,
            pause_ms,
            restart_ms,
            for_ms,
        } = *self
        else {
            return vec![];
        };
        let at = |at_ms, input| TimedInput { at_ms, input };
        vec![
            at(pause_ms, Input::PauseCache { apiserver: stale }),
            at(
                restart_ms,
                Input::Crash {
                    controller,
                    after_writes: None,
                    restart_after_ms: None,
                },
            ),
            at(
                restart_ms,
                Input::Restart {
                    controller,
                    apiserver: Some(stale),
                },
            ),
            at(restart_ms + for_ms, Input::ResumeCache { apiserver: stale }),
        ]
    }

    /// When the fault is over (the link healed, the controller back, the cache caught up).
    pub fn end_ms(&self) -> TimeMs {
        match *self {
            Fault::CrashBetweenWrites { at_ms, .. } => at_ms + RESTART_AFTER_MS,
            Fault::Unobserved { until_ms, .. } => until_ms,
            Fault::Hold { until_ms, .. } => until_ms + DurationMs(1),
            Fault::Stale {
                restart_ms, for_ms, ..
            } => restart_ms + for_ms,
            Fault::Disconnect {
                at_ms, duration_ms, ..
            } => at_ms + duration_ms,
        }
    }

    /// In words, for reports.
    pub fn describe(&self, config: &Config) -> String {
        let c = |id: ControllerId| config.controllers[id.index()].name.clone();
        match *self {
            Fault::CrashBetweenWrites {
                controller,
                at_ms,
                after_writes,
            } => format!(
                "crash {} after write {after_writes} of its reconcile at {}, restart {} later",
                c(controller),
                at_ms,
                RESTART_AFTER_MS
            ),
            Fault::Unobserved {
                controller,
                from_ms,
                until_ms,
            } => format!(
                "hide the state between {} and {} from {} (unobserved state)",
                from_ms,
                until_ms,
                c(controller)
            ),
            Fault::Hold {
                controller,
                at_ms,
                kind,
                ref name,
                ..
            } => format!(
                "hold {}'s notifications from {} until a later state of {}/{} arrives (unobserved state)",
                c(controller),
                at_ms,
                config.kinds[kind.index()].name,
                name
            ),
            Fault::Stale {
                controller,
                stale,
                pause_ms,
                restart_ms,
                for_ms,
            } => format!(
                "freeze {}'s cache at {} and restart {} against it at {}, resume it {} later (stale state)",
                config.apiservers[stale.index()].name,
                pause_ms,
                c(controller),
                restart_ms,
                for_ms
            ),
            Fault::Disconnect {
                controller,
                at_ms,
                duration_ms,
            } => format!(
                "disconnect {} at {} for {}",
                c(controller),
                at_ms,
                duration_ms
            ),
        }
    }
}

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
    pub candidates_by_type: [u64; 5],
    /// Schedules tried that hold a fault of each type.
    pub tried_by_type: [u64; 5],
    /// Failing schedules (before minimisation and dedup) with a fault of each type.
    pub failed_by_type: [u64; 5],
    /// Failures whose replay from scratch passed (the fork and the replay disagree: a bug).
    pub replay_mismatch: u64,
}

/// A schedule that breaks the scenario, minimised and replayed from scratch.
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

/// A candidate source: a list, or the stale pairs generated on demand.
#[derive(Clone, Debug)]
enum Source {
    List(Vec<Fault>, usize),
    Stale(Vec<StaleGen>, usize),
}

/// Stale candidates of one controller and one apiserver: each pause with its valid restarts,
/// visited diagonally (every pause with its nearest restart first).
#[derive(Clone, Debug)]
struct StaleGen {
    controller: ControllerId,
    stale: ApiserverId,
    /// Pause time and the index of its first valid restart.
    pauses: Vec<(TimeMs, usize)>,
    restarts: Vec<TimeMs>,
    d: usize,
    p: usize,
    max_d: usize,
}

impl StaleGen {
    fn count(&self) -> u64 {
        self.pauses
            .iter()
            .map(|&(_, f)| self.restarts.len().saturating_sub(f) as u64)
            .sum()
    }

    fn next(&mut self) -> Option<Fault> {
        loop {
            if self.d >= self.max_d {
                return None;
            }
            if self.p >= self.pauses.len() {
                self.p = 0;
                self.d += 1;
                continue;
            }
            let (pause_ms, first) = self.pauses[self.p];
            self.p += 1;
            if let Some(&restart_ms) = self.restarts.get(first + self.d) {
                return Some(Fault::Stale {
                    controller: self.controller,
                    stale: self.stale,
                    pause_ms,
                    restart_ms,
                    for_ms: STALE_FOR_MS,
                });
            }
        }
    }
}

impl Source {
    fn count(&self) -> u64 {
        match self {
            Source::List(v, _) => v.len() as u64,
            Source::Stale(g, _) => g.iter().map(StaleGen::count).sum(),
        }
    }

    fn next(&mut self) -> Option<Fault> {
        match self {
            Source::List(v, i) => {
                let f = v.get(*i).cloned();
                *i += 1;
                f
            }
            Source::Stale(gens, turn) => {
                for _ in 0..gens.len() {
                    let k = *turn % gens.len();
                    *turn += 1;
                    if let Some(f) = gens[k].next() {
                        return Some(f);
                    }
                }
                None
            }
        }
    }
}

/// The candidate singles, round-robin over the fault types.
#[derive(Clone, Debug)]
pub struct Candidates {
    sources: Vec<Source>,
    turn: usize,
    produced: u64,
    total: u64,
    by_type: [u64; 5],
}

impl Candidates {
    /// Candidates read off a fault-free run.
    pub fn new(sim: &Sim) -> Candidates {
        let sources = sources(sim);
        let mut by_type = [0; 5];
        for (i, s) in sources.iter().enumerate() {
            by_type[i] = s.count();
        }
        let total = by_type.iter().sum::<u64>().min(MAX_SINGLES);
        Candidates {
            sources,
            turn: 0,
            produced: 0,
            total,
            by_type,
        }
    }

    /// How many singles there are (capped).
    pub fn len(&self) -> u64 {
        self.total
    }

    pub fn is_empty(&self) -> bool {
        self.total == 0
    }
}

impl Iterator for Candidates {
    type Item = Fault;
    fn next(&mut self) -> Option<Fault> {
        if self.produced >= self.total {
            return None;
        }
        let n = self.sources.len();
        for _ in 0..n {
            let k = self.turn % n;
            self.turn += 1;
            if let Some(f) = self.sources[k].next() {
                self.produced += 1;
                return Some(f);
            }
        }
        None
    }
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

#[derive(Default)]
struct Replays {
    fails: HashMap<Vec<Fault>, bool>,
    /// An estimate of the memory `fails` takes (see [`replay_bytes`]).
    bytes: usize,
}

/// The memory the remembered replays may take, about (what is left of it unused once full).
const REPLAYS_BYTES: usize = 32 << 20;

/// About the memory one remembered replay takes: its faults (a hold's object name included),
/// the entry, and as much again for the hash table's empty slots.
fn replay_bytes(faults: &[Fault]) -> usize {
    let names: usize = faults
        .iter()
        .map(|f| match f {
            Fault::Hold { name, .. } => name.len(),
            _ => 0,
        })
        .sum();
    2 * (std::mem::size_of::<(Vec<Fault>, bool)>() + 1) + std::mem::size_of_val(faults) + names
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
    let mut out = vec![];
    for (i, e) in expects.iter().enumerate() {
        let o = check(sim, e);
        if !o.pass {
            out.push(Broken {
                expectation: Some(i),
                found: o.found,
            });
        }
    }
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
    out
}

/// Does a finished run pass, as `broken(..).is_empty()` says? A count is judged on `past` (the
/// run's `history`), not by counting every event of the run again.
fn passes(sim: &Sim, expects: &[Expect], past: &[u64]) -> bool {
    let judged = |x: &Expect, &n: &u64| match x {
        Expect::Count { cmp, value, .. } => cmp.holds(n as i64, *value),
        x => check(sim, x).pass,
    };
    expects.iter().zip(past).all(|(x, n)| judged(x, n))
        && (expects
            .iter()
            .any(|e| matches!(e, Expect::Esr { controller: None }))
            || check(sim, &Expect::Esr { controller: None }).pass)
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
            Expect::Saw {
                controller, spec, ..
            } => {
                for e in events.clone() {
                    if let EventKind::ReconcileStart {
                        controller: c,
                        spec: Some(s),
                        ..
                    } = e.kind
                    {
                        *a += u64::from(c == *controller && s == *spec);
                    }
                }
            }
            _ => {}
        }
    }
}

/// The explorer's dedup key: the state hash and what the past holds for the expectations that
/// read it.
fn key(sim: &Sim, past: &[u64]) -> u64 {
    let mix = |h: u64, x: u64| (h ^ x).wrapping_mul(0x0100_0000_01b3);
    past.iter().fold(sim.state_hash(), |h, &x| mix(h, x))
}

/// Runs a configuration extended with faults from scratch.
pub fn replay(config: &Config, faults: &[Fault]) -> Result<Sim, crate::config::ConfigError> {
    let mut c = config.clone();
    c.timeline.extend(faults.iter().flat_map(|f| f.inputs()));
    c.timeline.sort_by_key(|t| t.at_ms);
    let mut sim = Sim::new(c)?;
    sim.run();
    Ok(sim)
}

/// The `q`-th pair `(i, j)`, `i < j`, in the order (0,1), (0,2), (1,2), (0,3), ...: pairs among
/// the first singles come first.
fn pair(q: u64) -> (u64, u64) {
    let j = ((((8 * q + 1) as f64).sqrt() + 1.0) / 2.0).floor() as u64;
    let j = (j.saturating_sub(1)..=j + 1)
        .rev()
        .find(|&j| j * j.saturating_sub(1) / 2 <= q)
        .unwrap_or(1)
        .max(1);
    (q - j * (j - 1) / 2, j)
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
        let mut original = Sim::new(config.clone())?;
        original.run();
        let singles = Candidates::new(&original);
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
        let base_broken = broken(&full, &expects);
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
        let mut types = [false; 5];
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
        inputs.sort_by_key(|t| t.at_ms);
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
        let pass = passes(&sim, &self.0.expects, &past);
        debug_assert_eq!(pass, broken(&sim, &self.0.expects).is_empty());
        if pass {
            Verdict::Pass
        } else if all_up(&sim)
            && user_failures(&sim) <= self.0.user_failures
            && job.faults.iter().all(|f| had_effect(f, &sim))
        {
            // Minimised here, so callers that judge on many threads minimise there too.
            Verdict::Fails(self.minimise(&job.faults))
        } else {
            Verdict::Ineffective
        }
    }

    /// Does this schedule fail (expectations or ESR, with every fault effective) when replayed
    /// from scratch?
    fn fails(&self, faults: &[Fault]) -> Option<(Vec<Broken>, Sim)> {
        let sim = replay(&self.0.config, faults).ok()?;
        let b = broken(&sim, &self.0.expects);
        (!b.is_empty() && all_up(&sim) && faults.iter().all(|f| had_effect(f, &sim)))
            .then_some((b, sim))
    }

    /// Does this schedule fail, as [`Runner::fails`] says? `None`: no; `Some(run)`: yes, with
    /// the run when it was made now (not when the answer was remembered).
    fn fails_remembered(&self, faults: &[Fault]) -> Option<Option<(Vec<Broken>, Sim)>> {
        let known = self.replays().fails.get(faults).copied();
        if let Some(fails) = known {
            return fails.then_some(None);
        }
        let run = self.fails(faults);
        self.remember(faults, run.is_some());
        run.map(Some)
    }

    fn replays(&self) -> std::sync::MutexGuard<'_, Replays> {
        self.0.replays.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn remember(&self, faults: &[Fault], fails: bool) {
        let mut replays = self.replays();
        let bytes = replay_bytes(faults);
        if replays.bytes + bytes <= REPLAYS_BYTES && !replays.fails.contains_key(faults) {
            replays.fails.insert(faults.to_vec(), fails);
            replays.bytes += bytes;
        }
    }

    /// Replays a failing schedule from scratch, drops every fault that is not needed, shortens
    /// windows and moves crash points earlier while it still fails. The last failing run is
    /// the one reported (replayed again only if its answer was remembered).
    pub fn minimise(&self, faults: &[Fault]) -> Option<Minimal> {
        let mut needed = faults.to_vec();
        let mut last = self.fails(&needed);
        self.remember(&needed, last.is_some());
        last.as_ref()?;
        let mut i = 0;
        while needed.len() > 1 && i < needed.len() {
            let mut without = needed.clone();
            without.remove(i);
            match self.fails_remembered(&without) {
                None => i += 1,
                Some(run) => (needed, last) = (without, run),
            }
        }
        for i in 0..needed.len() {
            for smaller in shrinks(&needed[i]) {
                let mut t = needed.clone();
                t[i] = smaller;
                if let Some(run) = self.fails_remembered(&t) {
                    (needed, last) = (t, run);
                    break;
                }
            }
        }
        let (broken, sim) = match last {
            Some(run) => run,
            None => self.fails(&needed)?,
        };
        let effects = needed.iter().map(|f| effect(f, &sim)).collect();
        Some((needed, broken, effects))
    }
}

/// Smaller versions of a fault, smallest first: shorter windows, earlier crash points.
fn shrinks(f: &Fault) -> Vec<Fault> {
    const WINDOWS: [DurationMs; 6] = [
        DurationMs(1_000),
        DurationMs(2_000),
        DurationMs(5_000),
        DurationMs(10_000),
        DurationMs(20_000),
        DurationMs(30_000),
    ];
    let resized = |w| resized(f, w);
    match *f {
        Fault::CrashBetweenWrites {
            controller,
            at_ms,
            after_writes,
        } => (1..after_writes)
            .map(|after_writes| Fault::CrashBetweenWrites {
                controller,
                at_ms,
                after_writes,
            })
            .collect(),
        Fault::Disconnect {
            duration_ms: was, ..
        }
        | Fault::Stale { for_ms: was, .. } => WINDOWS
            .into_iter()
            .filter(|&w| w < was)
            .map(resized)
            .collect(),
        Fault::Hold {
            at_ms,
            until_ms,
            for_ms,
            ..
        } => {
            // Long enough for the later state to arrive, then the usual windows.
            let need = DurationMs::between(at_ms, until_ms) + DurationMs(1_000);
            std::iter::once(need)
                .chain(WINDOWS.into_iter().filter(|&w| w > need))
                .filter(|&w| w < for_ms)
                .map(resized)
                .collect()
        }
        Fault::Unobserved { .. } => vec![],
    }
}

/// The fault with its window set to `w`.
fn resized(f: &Fault, w: DurationMs) -> Fault {
    let mut g = f.clone();
    match &mut g {
        Fault::Disconnect { duration_ms, .. } => *duration_ms = w,
        Fault::Hold { for_ms, .. } | Fault::Stale { for_ms, .. } => *for_ms = w,
        Fault::CrashBetweenWrites { .. } | Fault::Unobserved { .. } => {}
    }
    g
}

/// The kinds a controller reads (its informers).
fn reads(sim: &Sim, controller: ControllerId) -> Vec<KindId> {
    sim.reflectors()
        .iter()
        .filter(|r| r.controller() == controller)
        .map(|r| r.kind())
        .collect()
}

/// Is every controller that was ever started running at the end? A crash the scenario writes
/// in (`crash` without a restart after it, or a `restart` at a fixed moment that a fault moved
/// the crash past) can leave a controller down for good, which no controller survives; a real
/// cluster's kubelet restarts the pod. Such failures say nothing about the controller.
pub fn all_up(sim: &Sim) -> bool {
    let mut up = vec![None; sim.config().controllers.len()];
    for e in sim.trace() {
        match e.kind {
            EventKind::Crash { controller } => up[controller.index()] = Some(false),
            EventKind::Restart { controller, .. } => up[controller.index()] = Some(true),
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
        .filter(|e| e.actor == Actor::User && matches!(e.kind, EventKind::WriteFailed { .. }))
        .count()
}

/// Did the fault do in this run what it is meant to do?
pub fn had_effect(f: &Fault, sim: &Sim) -> bool {
    match *f {
        Fault::Hold {
            controller, at_ms, ..
        } => sim.trace().iter().any(|e| {
            e.time_ms >= at_ms
                && matches!(e.kind, EventKind::HoldReleased { controller: c, superseded: true, .. } if c == controller)
        }),
        Fault::Stale {
            controller,
            pause_ms,
            restart_ms,
            ..
        } => {
            let read = reads(sim, controller);
            sim.trace().iter().any(|e| {
                e.time_ms >= pause_ms
                    && e.time_ms < restart_ms
                    && matches!(e.kind, EventKind::Write { kind, .. } if read.contains(&kind))
            })
        }
        _ => true,
    }
}

/// What a fault did in a run, in words read from its trace.
pub fn effect(f: &Fault, sim: &Sim) -> String {
    match *f {
        Fault::Stale {
            controller,
            stale,
            pause_ms,
            restart_ms,
            ..
        } => stale_effect(sim, controller, stale, (pause_ms, restart_ms)),
        Fault::CrashBetweenWrites {
            controller, at_ms, ..
        } => crash_effect(sim, controller, at_ms),
        Fault::Hold {
            controller,
            at_ms,
            kind,
            ref name,
            ..
        } => hold_effect(sim, controller, at_ms, kind, name),
        Fault::Disconnect {
            controller,
            at_ms,
            duration_ms,
        } => cut_effect(sim, controller, at_ms, at_ms + duration_ms),
        Fault::Unobserved {
            controller,
            from_ms,
            until_ms,
        } => cut_effect(sim, controller, from_ms, until_ms),
    }
}

fn cname(sim: &Sim, c: ControllerId) -> &str {
    &sim.config().controllers[c.index()].name
}

fn kname(sim: &Sim, k: KindId) -> &str {
    &sim.config().kinds[k.index()].name
}

/// Is watcher `w` one of controller `c`'s?
fn mine(sim: &Sim, w: crate::model::WatcherId, c: ControllerId) -> bool {
    sim.reflectors()
        .get(w.index())
        .is_some_and(|r| r.controller() == c)
}

/// etcd's revision at event `i`.
fn rev_at(sim: &Sim, i: usize) -> Rv {
    sim.trace()
        .range(..i)
        .filter_map(|e| match e.kind {
            EventKind::Write { rv, .. } => Some(rv),
            EventKind::Compacted { rev } => Some(rev),
            _ => None,
        })
        .max()
        .unwrap_or(0)
}

/// Writes from `from_ms` until (not including) `until_ms`.
fn writes_between(sim: &Sim, from_ms: TimeMs, until_ms: TimeMs) -> usize {
    sim.trace()
        .iter()
        .filter(|e| e.time_ms >= from_ms && e.time_ms < until_ms)
        .filter(|e| matches!(e.kind, EventKind::Write { .. }))
        .count()
}

/// The controller's first list (or watch-list) request from `at_ms` on: its event, watcher and RV.
fn first_list(
    sim: &Sim,
    controller: ControllerId,
    at_ms: TimeMs,
) -> Option<(usize, crate::model::WatcherId, ListRv)> {
    sim.trace()
        .iter()
        .enumerate()
        .find_map(|(i, e)| match e.kind {
            EventKind::ListRequest { watcher, rv, .. }
            | EventKind::WatchListRequest { watcher, rv, .. }
                if e.time_ms >= at_ms && mine(sim, watcher, controller) =>
            {
                Some((i, watcher, rv))
            }
            _ => None,
        })
}

/// A stale fault: what the paused cache missed and what the restart's list got from it.
fn stale_effect(
    sim: &Sim,
    controller: ControllerId,
    stale: ApiserverId,
    (pause_ms, restart_ms): (TimeMs, TimeMs),
) -> String {
    let aname = &sim.config().apiservers[stale.index()].name;
    let missed = writes_between(sim, pause_ms, restart_ms);
    let Some((i, w, rv)) = first_list(sim, controller, restart_ms) else {
        return format!(
            "{aname}'s cache missed {missed} writes, but {} made no list after the restart",
            cname(sim, controller)
        );
    };
    let result = sim
        .trace()
        .range(i..)
        .enumerate()
        .find_map(|(d, e)| match e.kind {
            EventKind::ListResult {
                watcher, list_rv, ..
            } if watcher == w => Some((i + d, list_rv)),
            _ => None,
        });
    let kind = kname(sim, sim.reflectors()[w.index()].kind());
    match result {
        Some((j, list_rv)) => format!(
            "{aname}'s cache was paused at {} and missed {missed} writes; the restart at {} listed {kind} at RV {} from {aname}, whose cache stood at rv {list_rv} while etcd was at {}",
            pause_ms,
            restart_ms,
            if rv == ListRv::Any { "\"0\"".to_string() } else { rv.param() },
            rev_at(sim, j)
        ),
        None => format!(
            "{aname}'s cache was paused at {} and missed {missed} writes; the restart's list of {kind} got no answer",
            pause_ms
        ),
    }
}

/// A crash between writes: the reconcile it cut short, the writes that reconcile made, the
/// restart.
fn crash_effect(sim: &Sim, controller: ControllerId, at_ms: TimeMs) -> String {
    let crash = sim.trace().iter().enumerate().find(|(_, e)| {
        e.time_ms >= at_ms
            && matches!(e.kind, EventKind::Crash { controller: c } if c == controller)
    });
    let Some((ci, ce)) = crash else {
        return format!("{} never reached the crash point", cname(sim, controller));
    };
    let cut = sim.trace().range(ci..).find_map(|e| match e.kind {
        EventKind::ReconcileEnd {
            controller: c,
            key,
            result: ReconcileResult::Crashed,
        } if c == controller => Some(key),
        _ => None,
    });
    let start = cut.and_then(|key| {
        sim.trace().range(..ci).rposition(|e| {
            matches!(e.kind, EventKind::ReconcileStart { controller: c, key: k, .. } if c == controller && k == key)
        })
    });
    let writes = start.map_or(vec![], |s| writes_of_reconcile(sim, s, ci));
    let restart = sim.trace().range(ci..).find_map(|e| match e.kind {
        EventKind::Restart { controller: c, .. } if c == controller => Some(e.time_ms),
        _ => None,
    });
    format!(
        "{} crashed at {} in the reconcile of {} after {} write{} ({}){}",
        cname(sim, controller),
        ce.time_ms,
        cut.map(|k| sim.names().resolve(k)).unwrap_or("?"),
        writes.len(),
        if writes.len() == 1 { "" } else { "s" },
        writes.join(", "),
        restart
            .map(|t| format!(", restarted at {t}"))
            .unwrap_or_default()
    )
}

/// The writes the reconcile starting at event `start` made before event `end`, in words.
fn writes_of_reconcile(sim: &Sim, start: usize, end: usize) -> Vec<String> {
    sim.trace()
        .range(start..end)
        .filter(|e| e.cause == start as u32)
        .filter_map(|e| match e.kind {
            EventKind::Write { op, kind, name, .. } => Some(format!(
                "{} {}/{}",
                op.as_str(),
                kname(sim, kind),
                sim.names().resolve(name)
            )),
            _ => None,
        })
        .collect()
}

/// A hold: how many notifications were held, from when to when, and the state never acted on.
fn hold_effect(
    sim: &Sim,
    controller: ControllerId,
    at_ms: TimeMs,
    kind: KindId,
    name: &str,
) -> String {
    let armed = sim.trace().iter().find(|e| {
        e.time_ms >= at_ms
            && matches!(e.kind, EventKind::HoldArmed { controller: c, .. } if c == controller)
    });
    let released = sim.trace().iter().find_map(|e| match e.kind {
        EventKind::HoldReleased {
            controller: c,
            held,
            superseded,
        } if c == controller && e.time_ms >= at_ms => Some((e.time_ms, held, superseded)),
        _ => None,
    });
    let Some((t, held, superseded)) = released else {
        return format!(
            "{}'s notifications were held from {} and never released",
            cname(sim, controller),
            armed.map_or(at_ms, |e| e.time_ms)
        );
    };
    // The first state of the object written while the hold was on.
    let spec = sim
        .trace()
        .iter()
        .filter(|e| e.time_ms >= at_ms && e.time_ms <= t)
        .find_map(|e| match e.kind {
            EventKind::Write {
                kind: k,
                name: n,
                spec,
                ..
            } if k == kind && sim.names().resolve(n) == name => Some(spec.to_string()),
            _ => None,
        });
    format!(
        "{held} notifications to {} were held from {} to {} and released together{}: it never acted on {}/{name} at spec {} alone",
        cname(sim, controller),
        armed.map_or(at_ms, |e| e.time_ms),
        t,
        if superseded { " once a later state arrived" } else { "" },
        kname(sim, kind),
        spec.as_deref().unwrap_or("?")
    )
}

/// A disconnect or an unobserved window: the watches it closed, the writes meanwhile, what the
/// re-watch got and the relists (within a minute after).
fn cut_effect(sim: &Sim, controller: ControllerId, at_ms: TimeMs, until: TimeMs) -> String {
    let after =
        |e: &&crate::trace::Event| e.time_ms >= at_ms && e.time_ms < until + DurationMs(60_000);
    let cut = sim
        .trace()
        .iter()
        .filter(after)
        .filter(|e| matches!(e.kind, EventKind::WatchEnded { watcher, reason: WatchEnd::Disconnected } if mine(sim, watcher, controller)))
        .count();
    let gone = sim.trace().iter().filter(after).find_map(|e| match e.kind {
        EventKind::WatchFailed { watcher, error } if mine(sim, watcher, controller) => {
            error.code().eq(&410).then(|| error.message())
        }
        _ => None,
    });
    let relists = sim
        .trace()
        .iter()
        .filter(after)
        .filter(|e| match e.kind {
            EventKind::ListRequest {
                watcher, relist, ..
            }
            | EventKind::WatchListRequest {
                watcher, relist, ..
            } => relist && mine(sim, watcher, controller),
            _ => false,
        })
        .count();
    let missed = writes_between(sim, at_ms, until);
    format!(
        "{} was cut off from {} to {} ({cut} watch{} closed, {missed} writes meanwhile){}{}",
        cname(sim, controller),
        at_ms,
        until,
        if cut == 1 { "" } else { "es" },
        match gone {
            Some(m) => format!("; its re-watch got 410 \"{m}\""),
            None => "; it re-watched from where it was".into(),
        },
        if relists > 0 {
            format!(
                " and relisted {relists} time{}",
                if relists == 1 { "" } else { "s" }
            )
        } else {
            String::new()
        }
    )
}

/// The candidate sources, one per fault type in [`FAULT_TYPES`]'s order.
fn sources(sim: &Sim) -> Vec<Source> {
    let cfg = &sim.config();
    let end = cfg.end_ms;
    let (mut crash, mut hold, mut unobserved, mut disconnect) = (vec![], vec![], vec![], vec![]);
    let mut stale = vec![];
    let writes_of = writes_per_reconcile(sim);
    for (ci, c) in cfg.controllers.iter().enumerate() {
        if c.anvil {
            continue;
        }
        let controller = ControllerId(ci as u16);
        let read = reads(sim, controller);
        crash.extend(crash_faults(sim, controller, &writes_of));
        let others = writes_by_others(sim, controller, &read);
        window_faults(sim, controller, &others, &mut unobserved, &mut hold);
        disconnect.extend(disconnect_faults(controller, &others));
        stale.extend(stale_gens(sim, controller, &read));
    }
    let list = |mut v: Vec<Fault>| {
        v.retain(|f| f.start_ms() <= end);
        v.sort_by_key(|f| f.start_ms());
        let mut seen = HashSet::new();
        v.retain(|f| seen.insert(f.clone()));
        Source::List(v, 0)
    };
    vec![
        list(crash),
        list(hold),
        Source::Stale(stale, 0),
        list(unobserved),
        list(disconnect),
    ]
}

/// Writes (of any reconcile), counted by the event of the reconcile that made them.
fn writes_per_reconcile(sim: &Sim) -> Vec<u32> {
    let mut writes_of = vec![0u32; sim.trace().len()];
    for e in sim.trace() {
        if let (
            Actor::Controller(_),
            EventKind::Write { .. } | EventKind::WriteFailed { .. } | EventKind::NoOpWrite { .. },
        ) = (e.actor, e.kind)
        {
            if let Some(n) = writes_of.get_mut(e.cause as usize) {
                *n += 1;
            }
        }
    }
    writes_of
}

/// Intermediate state: a crash between every pair of writes of every reconcile. The crash is
/// armed just before the reconcile starts, or as the controller starts if it started in that
/// very millisecond (a crash input for a controller that is down does nothing).
fn crash_faults(sim: &Sim, controller: ControllerId, writes_of: &[u32]) -> Vec<Fault> {
    let mut out = vec![];
    let mut up_since = TimeMs::ZERO;
    for (i, e) in sim.trace().iter().enumerate() {
        match e.kind {
            EventKind::Restart { controller: rc, .. } if rc == controller => {
                up_since = e.time_ms;
            }
            EventKind::ReconcileStart { controller: rc, .. } if rc == controller => {
                for after_writes in 1..writes_of[i] {
                    out.push(Fault::CrashBetweenWrites {
                        controller,
                        at_ms: e.time_ms.saturating_sub(DurationMs(1)).max(up_since),
                        after_writes,
                    });
                }
            }
            _ => {}
        }
    }
    out
}

/// Writes by others of kinds the controller reads, in time order.
fn writes_by_others(
    sim: &Sim,
    controller: ControllerId,
    read: &[KindId],
) -> Vec<(TimeMs, KindId, crate::model::NameId)> {
    sim.trace()
        .iter()
        .filter(|e| e.actor != Actor::Controller(controller))
        .filter_map(|e| match e.kind {
            EventKind::Write { kind, name, .. } if read.contains(&kind) => {
                Some((e.time_ms, kind, name))
            }
            _ => None,
        })
        .collect()
}

/// Unobserved state: a window (and a hold) between consecutive writes of one object by others.
fn window_faults(
    sim: &Sim,
    controller: ControllerId,
    others: &[(TimeMs, KindId, crate::model::NameId)],
    unobserved: &mut Vec<Fault>,
    hold: &mut Vec<Fault>,
) {
    let mut next_of: std::collections::HashMap<(KindId, crate::model::NameId), TimeMs> =
        Default::default();
    let mut pairs = vec![];
    for &(t, kind, name) in others.iter().rev() {
        if let Some(&t2) = next_of.get(&(kind, name)) {
            if t2 > t {
                pairs.push((t, t2, kind, name));
            }
        }
        next_of.insert((kind, name), t);
    }
    pairs.reverse();
    for (t1, t2, kind, name) in pairs {
        unobserved.push(Fault::Unobserved {
            controller,
            from_ms: t1.saturating_sub(DurationMs(1)),
            until_ms: t2 + DurationMs(1),
        });
        hold.push(Fault::Hold {
            controller,
            at_ms: t1.saturating_sub(DurationMs(1)),
            kind,
            name: sim.names().resolve(name).to_string(),
            until_ms: t2,
            for_ms: HOLD_FOR_MS,
        });
    }
}

/// A disconnect at each write of a kind it reads, long enough for the cache to move on.
fn disconnect_faults(
    controller: ControllerId,
    others: &[(TimeMs, KindId, crate::model::NameId)],
) -> Vec<Fault> {
    let mut times: Vec<TimeMs> = others.iter().map(|w| w.0).collect();
    times.dedup();
    let mut out = vec![];
    for t in times {
        for duration_ms in [DurationMs(5_000), DurationMs(60_000)] {
            out.push(Fault::Disconnect {
                controller,
                at_ms: t.saturating_sub(DurationMs(1)),
                duration_ms,
            });
        }
    }
    out
}

/// Stale state: another apiserver paused right after its cache applied a change of a kind the
/// controller reads; the restart after one of the controller's own writes, or 1 s after a user
/// write, once that cache has missed a write. One generator per other apiserver.
fn stale_gens(sim: &Sim, controller: ControllerId, read: &[KindId]) -> Vec<StaleGen> {
    let restarts = stale_restarts(sim, controller, read);
    let own = sim.config().controllers[controller.index()].apiserver;
    let mut out = vec![];
    for a in 0..sim.config().apiservers.len() {
        let a = ApiserverId(a as u8);
        if a == own {
            continue;
        }
        let mut adds: Vec<TimeMs> = sim
            .trace()
            .iter()
            .filter_map(|e| match e.kind {
                EventKind::CacheAdd {
                    apiserver, kind, ..
                } if apiserver == a && read.contains(&kind) => Some(e.time_ms),
                _ => None,
            })
            .collect();
        adds.dedup();
        // Pause right after each moment the cache applied something; valid restarts come
        // after the next thing it would have applied.
        let pauses: Vec<(TimeMs, usize)> = adds
            .iter()
            .enumerate()
            .filter_map(|(k, &t)| {
                let missed = *adds.get(k + 1)?;
                let first = restarts.partition_point(|&r| r <= missed);
                (first < restarts.len()).then_some((t + DurationMs(1), first))
            })
            .collect();
        let max_d = pauses
            .iter()
            .map(|&(_, f)| restarts.len() - f)
            .max()
            .unwrap_or(0);
        out.push(StaleGen {
            controller,
            stale: a,
            pauses,
            restarts: restarts.clone(),
            d: 0,
            p: 0,
            max_d,
        });
    }
    out
}

/// When a stale restart may happen: after each of the controller's own writes, or 1 s after a
/// user write of a kind it reads (sorted, by the scenario's end).
fn stale_restarts(sim: &Sim, controller: ControllerId, read: &[KindId]) -> Vec<TimeMs> {
    let mut restarts: Vec<TimeMs> = sim
        .trace()
        .iter()
        .filter_map(|e| match (e.actor, e.kind) {
            (Actor::Controller(a), EventKind::Write { .. }) if a == controller => {
                Some(e.time_ms + DurationMs(1))
            }
            (Actor::User, EventKind::Write { kind, .. }) if read.contains(&kind) => {
                Some(e.time_ms + DurationMs(1_000))
            }
            _ => None,
        })
        .filter(|&r| r <= sim.config().end_ms)
        .collect();
    restarts.sort_unstable();
    restarts.dedup();
    restarts
}

/// Candidate faults read off a fault-free run, in the order the explorer tries them (capped).
pub fn candidates(sim: &Sim) -> Vec<Fault> {
    Candidates::new(sim).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn disconnect(at_ms: TimeMs) -> Fault {
        Fault::Disconnect {
            controller: ControllerId(0),
            at_ms,
            duration_ms: DurationMs(5_000),
        }
    }

    fn crash(at_ms: TimeMs) -> Fault {
        Fault::CrashBetweenWrites {
            controller: ControllerId(0),
            at_ms,
            after_writes: 1,
        }
    }

    #[test]
    fn stale_pairs_go_diagonally() {
        let mut g = StaleGen {
            controller: ControllerId(0),
            stale: ApiserverId(1),
            pauses: vec![(TimeMs(10), 0), (TimeMs(20), 1)],
            restarts: [15, 25, 35].map(TimeMs).to_vec(),
            d: 0,
            p: 0,
            max_d: 3,
        };
        assert_eq!(g.count(), 5);
        let got: Vec<(u64, u64)> = std::iter::from_fn(|| g.next())
            .map(|f| match f {
                Fault::Stale {
                    pause_ms,
                    restart_ms,
                    ..
                } => (pause_ms.ms(), restart_ms.ms()),
                _ => unreachable!(),
            })
            .collect();
        assert_eq!(got, [(10, 15), (20, 25), (10, 25), (20, 35), (10, 35)]);
    }

    #[test]
    fn types_take_turns_and_the_cap_holds() {
        let mut c = Candidates {
            sources: vec![
                Source::List(
                    vec![crash(TimeMs(1)), crash(TimeMs(2)), crash(TimeMs(3))],
                    0,
                ),
                Source::List(vec![], 0),
                Source::Stale(vec![], 0),
                Source::List(vec![], 0),
                Source::List(vec![disconnect(TimeMs(1))], 0),
            ],
            turn: 0,
            produced: 0,
            total: 3,
            by_type: [3, 0, 0, 0, 1],
        };
        let got: Vec<Fault> = c.by_ref().collect();
        assert_eq!(
            got,
            [crash(TimeMs(1)), disconnect(TimeMs(1)), crash(TimeMs(2))]
        );
    }

    #[test]
    fn pairs_are_numbered_in_order() {
        let mut q = 0u64;
        for j in 1..2_000u64 {
            for i in 0..j {
                assert_eq!(pair(q), (i, j));
                q += 1;
            }
        }
    }
}
