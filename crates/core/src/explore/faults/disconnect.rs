//! A disconnect: the controller's watches cut at a write of a kind it reads, for 5 s or 60 s,
//! long enough for the cache to move on (a 410 and a relist, or a plain re-watch); and a
//! refusal at each of the controller's own writes (armed as the reconcile starts, as a crash
//! between writes is), so a swallowed write error or a forgotten requeue shows.

use crate::config::{Config, FaultInput, Input, TimedInput};
use crate::model::{ControllerId, DurationMs, TimeMs};
use crate::sim::Sim;
use crate::trace::StoreEvent;
use crate::trace::{EventKind, WriteOp};

use super::super::candidates::Source;
use super::super::reading::{cname, kname};
use super::{shorter, Fault, FaultType, Scan};

/// How long a refusal at a write keeps the controller cut off (minimisation tries shorter).
pub const REFUSAL_MS: DurationMs = DurationMs(5_000);

/// Disconnect the controller at `at_ms` for `duration_ms`; with `after_writes`, only just
/// before the write that follows that many writes of its next reconcile (which is refused).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Disconnect {
    pub controller: ControllerId,
    pub at_ms: TimeMs,
    pub duration_ms: DurationMs,
    pub after_writes: Option<u32>,
}

impl Disconnect {
    /// The refused write this fault is answerable for: when, what and which. A refusal armed
    /// at a write (`after_writes`) answers only for a refused write that followed exactly that
    /// many writes of its reconcile (another fault's refusal, at another write, is not its
    /// own); a disconnect for a while, for the first write refused while it lasted.
    fn refused(
        &self,
        sim: &Sim,
    ) -> Option<(TimeMs, WriteOp, crate::model::KindId, crate::model::NameId)> {
        let me = crate::trace::Actor::Controller(self.controller);
        let trace = sim.trace();
        (trace.iter().enumerate())
            .filter(|(_, e)| e.time_ms >= self.at_ms && e.actor == me)
            .take_while(|(_, e)| self.after_writes.is_some() || e.time_ms < self.end_ms())
            .find_map(|(i, e)| match e.kind {
                EventKind::Store(StoreEvent::WriteFailed {
                    op,
                    kind,
                    name,
                    error: crate::trace::ApiError::ConnectionRefused,
                }) if self
                    .after_writes
                    .is_none_or(|n| writes_before(sim, e.cause, i) == n) =>
                {
                    Some((e.time_ms, op, kind, name))
                }
                _ => None,
            })
    }
}

/// The writes (made, failed or no-op) of the reconcile that event `start` began, before event
/// `end`: a write's cause is its reconcile's start.
fn writes_before(sim: &Sim, start: u32, end: usize) -> u32 {
    let me = sim.trace().get(start as usize).map(|e| e.actor);
    (sim.trace().range(start as usize..end))
        .filter(|e| e.cause == start && Some(e.actor) == me)
        .filter(|e| {
            matches!(
                e.kind,
                EventKind::Store(StoreEvent::Write { .. })
                    | EventKind::Store(StoreEvent::WriteFailed { .. })
                    | EventKind::Store(StoreEvent::NoOpWrite { .. })
            )
        })
        .count() as u32
}

impl FaultType for Disconnect {
    const NAME: &'static str = "disconnect";

    fn source(scan: &Scan) -> Source {
        let mut out = vec![];
        for r in &scan.controllers {
            let mut times: Vec<TimeMs> = r.others.iter().map(|w| w.0).collect();
            times.dedup();
            for t in times {
                for duration_ms in [DurationMs(5_000), DurationMs(60_000)] {
                    out.push(Fault::Disconnect(Disconnect {
                        controller: r.controller,
                        at_ms: t.saturating_sub(DurationMs(1)),
                        duration_ms,
                        after_writes: None,
                    }));
                }
            }
            for (at_ms, writes) in scan.reconciles(r.controller) {
                for after_writes in 0..writes {
                    out.push(Fault::Disconnect(Disconnect {
                        controller: r.controller,
                        at_ms,
                        duration_ms: REFUSAL_MS,
                        after_writes: Some(after_writes),
                    }));
                }
            }
        }
        scan.list(out)
    }

    fn controller(&self) -> ControllerId {
        self.controller
    }

    fn start_ms(&self) -> TimeMs {
        self.at_ms
    }

    fn end_ms(&self) -> TimeMs {
        self.at_ms + self.duration_ms
    }

    fn inputs(&self) -> Vec<TimedInput> {
        vec![TimedInput {
            at_ms: self.at_ms,
            input: Input::Fault(FaultInput::Disconnect {
                controller: self.controller,
                duration_ms: self.duration_ms,
                after_writes: self.after_writes,
            }),
        }]
    }

    fn describe(&self, config: &Config) -> String {
        let name = &config.controllers[self.controller.index()].name;
        match self.after_writes {
            None => format!(
                "disconnect {name} at {} for {}",
                self.at_ms, self.duration_ms
            ),
            Some(n) => format!(
                "refuse write {} of {name}'s next reconcile after {} (a disconnect of {})",
                n + 1,
                self.at_ms,
                self.duration_ms
            ),
        }
    }

    /// Shorter disconnects.
    fn shrinks(&self) -> Vec<Self> {
        shorter(self.duration_ms)
            .map(|duration_ms| Disconnect {
                duration_ms,
                ..self.clone()
            })
            .collect()
    }

    /// A refusal at a write that met no write (the reconcile made fewer) did nothing.
    fn had_effect(&self, sim: &Sim) -> bool {
        self.after_writes.is_none() || self.refused(sim).is_some()
    }

    fn effect(&self, sim: &Sim) -> String {
        let cut = |from: TimeMs| {
            super::unobserved::cut_effect(sim, self.controller, from, from + self.duration_ms)
        };
        match (self.after_writes, self.refused(sim)) {
            (Some(_), Some((at, op, kind, name))) => format!(
                "{} at {at}: {} {}/{} refused (connection refused); {}",
                cname(sim, self.controller),
                op.as_str(),
                kname(sim, kind),
                sim.names().resolve(name),
                cut(at),
            ),
            (None, Some((at, op, kind, name))) => format!(
                "{}; at {at} its {} {}/{} was refused (connection refused)",
                cut(self.at_ms),
                op.as_str(),
                kname(sim, kind),
                sim.names().resolve(name),
            ),
            (_, None) => cut(self.at_ms),
        }
    }
}
