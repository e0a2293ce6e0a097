//! The explorer: searches fault schedules for one that breaks a scenario's expectations or ESR.
//!
//! Candidates follow Sieve's three patterns and the list-then-watch faults, read off a fault-free
//! run: a crash between the writes of each reconcile that makes two or more (intermediate
//! state); the controller's view cut from just before a write until just after the next write
//! of the same object (unobserved state), or that write's notification dropped; a restart
//! against another apiserver whose cache was paused after an earlier write (stale state); and a
//! disconnect at each user write long enough to force a 410. Single faults first, then pairs.
//!
//! Each schedule runs on a fork: a clone of the fault-free run taken just before its first fault,
//! with the faults appended to the timeline (`Sim::schedule_input`), so the fork behaves exactly
//! like a fresh run of the extended script. Right after its last fault is injected the fork's
//! state is hashed; a state already explored is skipped. A failure is replayed from scratch and
//! minimised (every fault that is not needed is dropped) before it is reported.

use std::collections::HashSet;
use std::sync::Arc;

use crate::config::{Config, Input, TimedInput};
use crate::model::{format_ms, ApiserverId, ControllerId, KindId, NameId, TimeMs};
use crate::sim::Sim;
use crate::trace::{Actor, EventKind};
use crate::verdict::{check, Expect};

/// One perturbation, as the timeline inputs that cause it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Fault {
    /// Crash between write `after_writes` and the next of the reconcile starting at `at_ms`,
    /// restart 5 s later.
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
    /// state of the object arrives, so it never acts on the one in between.
    Hold {
        controller: ControllerId,
        at_ms: TimeMs,
        kind: KindId,
        name: String,
        /// When the later state is written (the hold's expected end).
        until_ms: TimeMs,
    },
    /// Pause `stale`'s cache at `pause_ms`, restart the controller against it at `restart_ms`,
    /// let it catch up 30 s later.
    Stale {
        controller: ControllerId,
        stale: ApiserverId,
        pause_ms: TimeMs,
        restart_ms: TimeMs,
    },
    /// Disconnect the controller at `at_ms` for `duration_ms`.
    Disconnect {
        controller: ControllerId,
        at_ms: TimeMs,
        duration_ms: TimeMs,
    },
}

pub const RESTART_AFTER_MS: TimeMs = 5_000;
/// A hold that no later state supersedes ends after this long (and the schedule is discarded).
pub const HOLD_FOR_MS: TimeMs = 60_000;
pub const STALE_FOR_MS: TimeMs = 30_000;
/// Every schedule runs until at least this long after its faults end, so the system can settle:
/// ESR is about what happens once faults stop, and client-go's backoff alone can take a minute
/// (30 s doubled by jitter) twice over (a refused re-watch, then the 410's relist).
pub const SETTLE_MS: TimeMs = 180_000;

impl Fault {
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
            } => {
                vec![at(
                    from_ms,
                    Input::Disconnect {
                        controller,
                        duration_ms: until_ms - from_ms,
                    },
                )]
            }
            Fault::Hold {
                controller,
                at_ms,
                kind,
                ref name,
                ..
            } => vec![at(
                at_ms,
                Input::Hold {
                    controller,
                    kind,
                    name: name.clone(),
                    for_ms: HOLD_FOR_MS,
                },
            )],
            Fault::Stale {
                controller,
                stale,
                pause_ms,
                restart_ms,
            } => vec![
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
                at(
                    restart_ms + STALE_FOR_MS,
                    Input::ResumeCache { apiserver: stale },
                ),
            ],
            Fault::Disconnect {
                controller,
                at_ms,
                duration_ms,
            } => {
                vec![at(
                    at_ms,
                    Input::Disconnect {
                        controller,
                        duration_ms,
                    },
                )]
            }
        }
    }

    /// When the fault is over (the link healed, the controller back, the cache caught up).
    pub fn end_ms(&self) -> TimeMs {
        match *self {
            Fault::CrashBetweenWrites { at_ms, .. } => at_ms + RESTART_AFTER_MS,
            Fault::Unobserved { until_ms, .. } => until_ms,
            Fault::Hold { until_ms, .. } => until_ms + 1,
            Fault::Stale { restart_ms, .. } => restart_ms + STALE_FOR_MS,
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
                format_ms(at_ms),
                format_ms(RESTART_AFTER_MS)
            ),
            Fault::Unobserved {
                controller,
                from_ms,
                until_ms,
            } => format!(
                "hide the state between {} and {} from {} (unobserved state)",
                format_ms(from_ms),
                format_ms(until_ms),
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
                format_ms(at_ms),
                config.kinds[kind.index()].name,
                name
            ),
            Fault::Stale {
                controller,
                stale,
                pause_ms,
                restart_ms,
            } => format!(
                "freeze {}'s cache at {} and restart {} against it at {} (stale state)",
                config.apiservers[stale.index()].name,
                format_ms(pause_ms),
                c(controller),
                format_ms(restart_ms)
            ),
            Fault::Disconnect {
                controller,
                at_ms,
                duration_ms,
            } => format!(
                "disconnect {} at {} for {}",
                c(controller),
                format_ms(at_ms),
                format_ms(duration_ms)
            ),
        }
    }
}

/// How much to search.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Budget {
    /// Schedules to run at most (skipped ones included).
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
    /// Candidate faults found in the fault-free run.
    pub faults: u64,
    /// Schedules considered (run or skipped).
    pub tried: u64,
    /// Schedules skipped because they reached an explored state.
    pub skipped: u64,
    /// Distinct states reached right after the last fault.
    pub states: u64,
    /// Schedules in the search space (singles, then pairs).
    pub space: u64,
    /// Failing schedules discarded because a fault had no effect.
    pub ineffective: u64,
}

/// A schedule that breaks the scenario, minimised and replayed from scratch.
#[derive(Clone, Debug, PartialEq)]
pub struct Failure {
    pub faults: Vec<Fault>,
    /// What broke: the index of the expectation (`None` for the implicit ESR check) and what
    /// was found.
    pub broken: Vec<Broken>,
}

/// One expectation that failed.
#[derive(Clone, Debug, PartialEq)]
pub struct Broken {
    pub expectation: Option<usize>,
    pub found: String,
}

pub struct Explorer {
    config: Arc<Config>,
    expects: Vec<Expect>,
    budget: Budget,
    base: Sim,
    candidates: Vec<Fault>,
    /// The next schedule: (i, None) singles, then (i, Some(j)) pairs with i < j.
    next: (usize, Option<usize>),
    seen: HashSet<u64>,
    pub stats: Stats,
    pub failures: Vec<Failure>,
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

/// Runs a configuration extended with faults from scratch.
pub fn replay(config: &Config, faults: &[Fault]) -> Result<Sim, crate::config::ConfigError> {
    let mut c = config.clone();
    c.timeline.extend(faults.iter().flat_map(|f| f.inputs()));
    c.timeline.sort_by_key(|t| t.at_ms);
    let mut sim = Sim::new(c)?;
    sim.run();
    Ok(sim)
}

impl Explorer {
    pub fn new(
        config: Config,
        expects: Vec<Expect>,
        budget: Budget,
    ) -> Result<Explorer, crate::config::ConfigError> {
        let mut original = Sim::new(config.clone())?;
        original.run();
        let candidates = candidates(&original);
        // Every schedule, and the fault-free reference, runs long enough to settle.
        let mut config = config;
        let latest = candidates.iter().map(Fault::end_ms).max().unwrap_or(0);
        config.end_ms = config
            .end_ms
            .max(latest + SETTLE_MS)
            .min(config.limits.max_time_ms);
        let config = Arc::new(config);
        let mut full = Sim::new((*config).clone())?;
        full.run();
        let base_broken = broken(&full, &expects);
        let n = candidates.len() as u64;
        let base = Sim::new((*config).clone())?;
        let done = !base_broken.is_empty() || candidates.is_empty();
        Ok(Explorer {
            stats: Stats {
                faults: n,
                space: n + n * n.saturating_sub(1) / 2,
                ..Stats::default()
            },
            config,
            expects,
            budget,
            base,
            candidates,
            next: (0, None),
            seen: HashSet::new(),
            failures: vec![],
            base_broken,
            done,
        })
    }

    /// When every schedule's run ends (the scenario's end, extended so faults can settle).
    pub fn end_ms(&self) -> TimeMs {
        self.config.end_ms
    }

    pub fn candidates(&self) -> &[Fault] {
        &self.candidates
    }

    pub fn is_done(&self) -> bool {
        self.done
    }

    fn advance(&mut self) -> Option<Vec<usize>> {
        let n = self.candidates.len();
        let (i, j) = self.next;
        let out = match j {
            None if i < n => {
                self.next = if i + 1 < n {
                    (i + 1, None)
                } else {
                    (0, Some(1))
                };
                vec![i]
            }
            Some(j) if i < n && j < n => {
                if (i, j) == (0, 1) {
                    // Pairs start again from the beginning of time.
                    self.base = Sim::new((*self.config).clone()).ok()?;
                }
                self.next = if j + 1 < n {
                    (i, Some(j + 1))
                } else {
                    (i + 1, Some(i + 2))
                };
                vec![i, j]
            }
            _ => return None,
        };
        Some(out)
    }

    /// Runs up to `n` more schedules; returns true when the search is over.
    pub fn step(&mut self, n: u64) -> bool {
        for _ in 0..n {
            if self.done || self.stats.tried >= self.budget.schedules {
                self.done = true;
                break;
            }
            let Some(schedule) = self.advance() else {
                self.done = true;
                break;
            };
            self.stats.tried += 1;
            let faults: Vec<Fault> = schedule
                .iter()
                .map(|&i| self.candidates[i].clone())
                .collect();
            if let Some(found) = self.try_schedule(&faults) {
                self.failures.push(found);
                if self.budget.first_failure {
                    self.done = true;
                }
            }
        }
        self.done
    }

    pub fn run(&mut self) {
        while !self.step(1024) {}
    }

    fn try_schedule(&mut self, faults: &[Fault]) -> Option<Failure> {
        let inputs: Vec<TimedInput> = {
            let mut v: Vec<TimedInput> = faults.iter().flat_map(|f| f.inputs()).collect();
            v.sort_by_key(|t| t.at_ms);
            v
        };
        let first = inputs.first()?.at_ms;
        let last = inputs.last()?.at_ms;
        // Fork the fault-free run just before the first fault.
        if first > 0 && self.base.now_ms < first - 1 {
            self.base.handle_timeout(first - 1);
        }
        let mut fork = if self.base.now_ms < first || first == 0 && self.base.trace.is_empty() {
            self.base.clone()
        } else {
            Sim::new((*self.config).clone()).ok()?
        };
        for t in inputs {
            fork.schedule_input(t.at_ms, t.input);
        }
        fork.handle_timeout(last);
        if !self.seen.insert(fork.state_hash()) {
            self.stats.skipped += 1;
            return None;
        }
        self.stats.states += 1;
        fork.run();
        if broken(&fork, &self.expects).is_empty() {
            return None;
        }
        // A fault that did not do what it is for (a hold no later state superseded, a paused
        // cache that missed no write) proves nothing about the controller.
        if !faults.iter().all(|f| had_effect(f, &fork)) {
            self.stats.ineffective += 1;
            return None;
        }
        // Replay from scratch, then drop every fault that is not needed.
        let mut needed = faults.to_vec();
        let fails = |fs: &[Fault]| {
            replay(&self.config, fs)
                .map(|s| broken(&s, &self.expects))
                .unwrap_or_default()
        };
        if fails(&needed).is_empty() {
            return None;
        }
        let mut i = 0;
        while needed.len() > 1 && i < needed.len() {
            let mut without = needed.clone();
            without.remove(i);
            if fails(&without).is_empty() {
                i += 1;
            } else {
                needed = without;
            }
        }
        let broken = fails(&needed);
        Some(Failure {
            faults: needed,
            broken,
        })
    }
}

/// Did the fault do in this run what it is meant to do?
pub fn had_effect(f: &Fault, sim: &Sim) -> bool {
    match *f {
        Fault::Hold {
            controller, at_ms, ..
        } => sim.trace.iter().any(|e| {
            e.time_ms >= at_ms
                && matches!(e.kind, EventKind::HoldReleased { controller: c, superseded: true, .. } if c == controller)
        }),
        Fault::Stale {
            controller,
            pause_ms,
            restart_ms,
            ..
        } => {
            let read: Vec<KindId> = sim
                .reflectors
                .iter()
                .filter(|r| r.controller == controller)
                .map(|r| r.kind)
                .collect();
            sim.trace.iter().any(|e| {
                e.time_ms >= pause_ms
                    && e.time_ms < restart_ms
                    && matches!(e.kind, EventKind::Write { kind, .. } if read.contains(&kind))
            })
        }
        _ => true,
    }
}

/// Candidate faults read off a fault-free run.
pub fn candidates(sim: &Sim) -> Vec<Fault> {
    let cfg = &sim.config;
    let mut out: Vec<Fault> = vec![];
    // User writes per object, in time order.
    let mut user_writes: Vec<(TimeMs, KindId, NameId)> = vec![];
    for e in &sim.trace {
        if let (Actor::User, EventKind::Write { kind, name, .. }) = (e.actor, e.kind) {
            user_writes.push((e.time_ms, kind, name));
        }
    }
    for (ci, c) in cfg.controllers.iter().enumerate() {
        if c.anvil {
            continue;
        }
        let controller = ControllerId(ci as u16);
        let watched: Vec<KindId> = sim
            .reflectors
            .iter()
            .filter(|r| r.controller == controller)
            .map(|r| r.kind)
            .collect();
        // Intermediate state: every reconcile that writes twice or more.
        for (i, e) in sim.trace.iter().enumerate() {
            if let EventKind::ReconcileStart { controller: rc, .. } = e.kind {
                if rc != controller {
                    continue;
                }
                let writes = sim.trace[i..]
                    .iter()
                    .filter(|x| x.cause == i as u32 && x.actor == Actor::Controller(controller))
                    .filter(|x| {
                        matches!(
                            x.kind,
                            EventKind::Write { .. }
                                | EventKind::WriteFailed { .. }
                                | EventKind::NoOpWrite { .. }
                        )
                    })
                    .count() as u32;
                for after_writes in 1..writes {
                    out.push(Fault::CrashBetweenWrites {
                        controller,
                        at_ms: e.time_ms.saturating_sub(1),
                        after_writes,
                    });
                }
            }
        }
        // Unobserved state and dropped notifications: consecutive user writes of one object.
        for (k, &(t1, kind, name)) in user_writes.iter().enumerate() {
            if !watched.contains(&kind) {
                continue;
            }
            if let Some(&(t2, ..)) = user_writes[k + 1..]
                .iter()
                .find(|w| w.1 == kind && w.2 == name && w.0 > t1)
            {
                out.push(Fault::Unobserved {
                    controller,
                    from_ms: t1.saturating_sub(1),
                    until_ms: t2 + 1,
                });
                out.push(Fault::Hold {
                    controller,
                    at_ms: t1.saturating_sub(1),
                    kind,
                    name: sim.names.resolve(name).to_string(),
                    until_ms: t2,
                });
            }
        }
        // Stale state: another apiserver frozen after one write, the restart after a later one.
        for (a, _) in cfg.apiservers.iter().enumerate() {
            let stale = ApiserverId(a as u8);
            if stale == c.apiserver {
                continue;
            }
            let times: Vec<TimeMs> = {
                let mut t: Vec<TimeMs> = user_writes.iter().map(|w| w.0).collect();
                t.dedup();
                t
            };
            for (x, &p) in times.iter().enumerate() {
                for &r in &times[x + 1..] {
                    out.push(Fault::Stale {
                        controller,
                        stale,
                        pause_ms: p,
                        restart_ms: r + 1000,
                    });
                }
            }
        }
        // A disconnect at each user write, long enough for the cache to move on.
        let mut times: Vec<TimeMs> = user_writes
            .iter()
            .filter(|w| watched.contains(&w.1))
            .map(|w| w.0)
            .collect();
        times.dedup();
        for t in times {
            for duration_ms in [5_000, 60_000] {
                out.push(Fault::Disconnect {
                    controller,
                    at_ms: t.saturating_sub(1),
                    duration_ms,
                });
            }
        }
    }
    out.retain(|f| f.end_ms() <= cfg.end_ms);
    out.sort_by_key(|f| f.start_ms());
    out.dedup();
    out
}
