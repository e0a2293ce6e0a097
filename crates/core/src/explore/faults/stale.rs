//! Stale state ("time travel", Sieve): another apiserver's cache paused right after it applied a
//! change of a kind the controller reads (its lag included: the fault-free trace's `CacheAdd`
//! events), and the controller restarted against it after one of its own writes, or 1 s after a
//! user write, once that cache has missed at least one write. Its RV="0" list then shows an
//! older world than the one it already acted on.

use crate::config::{Config, FaultInput, Input, TimedInput};
use crate::model::{ApiserverId, ControllerId, DurationMs, KindId, TimeMs};
use crate::sim::Sim;
use crate::trace::{Actor, EventKind, ListRv};
use crate::trace::{ReflectorEvent, StoreEvent};

use super::super::candidates::Source;
use super::super::reading::{cname, first_list, kname, reads, rev_at, writes_between};
use super::{shorter, Fault, FaultType, Scan};

/// How long the paused cache stays paused after the restart.
pub const STALE_FOR_MS: DurationMs = DurationMs(30_000);

/// Pause `stale`'s cache at `pause_ms`, restart the controller against it at `restart_ms`, let it
/// catch up `for_ms` later.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Stale {
    pub controller: ControllerId,
    pub stale: ApiserverId,
    pub pause_ms: TimeMs,
    pub restart_ms: TimeMs,
    pub for_ms: DurationMs,
}

impl FaultType for Stale {
    const NAME: &'static str = "stale";

    /// Generated on demand: pauses times restarts is too many to list ahead.
    fn source(scan: &Scan) -> Source {
        let gens = scan
            .controllers
            .iter()
            .flat_map(|r| stale_gens(scan.sim, r.controller, &r.kinds))
            .collect();
        Source::Stale(gens, 0)
    }

    fn controller(&self) -> ControllerId {
        self.controller
    }

    fn start_ms(&self) -> TimeMs {
        self.pause_ms
    }

    fn end_ms(&self) -> TimeMs {
        self.restart_ms + self.for_ms
    }

    /// Pause the cache, restart the controller against it, resume.
    fn inputs(&self) -> Vec<TimedInput> {
        let at = |at_ms, input| TimedInput { at_ms, input };
        let (controller, stale) = (self.controller, self.stale);
        vec![
            at(
                self.pause_ms,
                Input::Fault(FaultInput::PauseCache { apiserver: stale }),
            ),
            at(
                self.restart_ms,
                Input::Fault(FaultInput::Crash {
                    controller,
                    after_writes: None,
                    restart_after_ms: None,
                }),
            ),
            at(
                self.restart_ms,
                Input::Fault(FaultInput::Restart {
                    controller,
                    apiserver: Some(stale),
                }),
            ),
            at(
                self.restart_ms + self.for_ms,
                Input::Fault(FaultInput::ResumeCache { apiserver: stale }),
            ),
        ]
    }

    fn describe(&self, config: &Config) -> String {
        format!(
            "freeze {}'s cache at {} and restart {} against it at {}, resume it {} later (stale state)",
            config.apiservers[self.stale.index()].name,
            self.pause_ms,
            config.controllers[self.controller.index()].name,
            self.restart_ms,
            self.for_ms
        )
    }

    /// Shorter pauses after the restart.
    fn shrinks(&self) -> Vec<Self> {
        shorter(self.for_ms)
            .map(|for_ms| Stale {
                for_ms,
                ..self.clone()
            })
            .collect()
    }

    /// Only a pause that missed a write of a kind the controller reads made anything stale.
    fn had_effect(&self, sim: &Sim) -> bool {
        let read = reads(sim, self.controller);
        sim.trace().iter().any(|e| {
            e.time_ms >= self.pause_ms
                && e.time_ms < self.restart_ms
                && matches!(e.kind, EventKind::Store(StoreEvent::Write { kind, .. }) if read.contains(&kind))
        })
    }

    /// What the paused cache missed and what the restart's list got from it.
    fn effect(&self, sim: &Sim) -> String {
        let (controller, pause_ms, restart_ms) = (self.controller, self.pause_ms, self.restart_ms);
        let aname = &sim.config().apiservers[self.stale.index()].name;
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
                EventKind::Reflector(ReflectorEvent::ListResult {
                    watcher, list_rv, ..
                }) if watcher == w => Some((i + d, list_rv)),
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
}

/// Stale candidates of one controller and one apiserver: each pause with its valid restarts,
/// visited diagonally (every pause with its nearest restart first).
#[derive(Clone, Debug)]
pub struct StaleGen {
    pub(in crate::explore) controller: ControllerId,
    pub(in crate::explore) stale: ApiserverId,
    /// Pause time and the index of its first valid restart.
    pub(in crate::explore) pauses: Vec<(TimeMs, usize)>,
    pub(in crate::explore) restarts: Vec<TimeMs>,
    pub(in crate::explore) d: usize,
    pub(in crate::explore) p: usize,
    pub(in crate::explore) max_d: usize,
}

impl StaleGen {
    pub(in crate::explore) fn count(&self) -> u64 {
        self.pauses
            .iter()
            .map(|&(_, f)| self.restarts.len().saturating_sub(f) as u64)
            .sum()
    }

    pub(in crate::explore) fn next(&mut self) -> Option<Fault> {
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
                return Some(Fault::Stale(Stale {
                    controller: self.controller,
                    stale: self.stale,
                    pause_ms,
                    restart_ms,
                    for_ms: STALE_FOR_MS,
                }));
            }
        }
    }
}

/// One generator per other apiserver: paused right after each moment its cache applied a change
/// of a kind the controller reads; valid restarts come after the next thing it would have
/// applied.
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
                EventKind::Store(StoreEvent::CacheAdd {
                    apiserver, kind, ..
                }) if apiserver == a && read.contains(&kind) => Some(e.time_ms),
                _ => None,
            })
            .collect();
        adds.dedup();
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
            (Actor::Controller(a), EventKind::Store(StoreEvent::Write { .. }))
                if a == controller =>
            {
                Some(e.time_ms + DurationMs(1))
            }
            (Actor::User, EventKind::Store(StoreEvent::Write { kind, .. }))
                if read.contains(&kind) =>
            {
                Some(e.time_ms + DurationMs(1_000))
            }
            _ => None,
        })
        .filter(|&r| r <= sim.config().end_ms)
        .collect();
    crate::order::sort_by_u64(&mut restarts, |r| r.0);
    restarts.dedup();
    restarts
}
