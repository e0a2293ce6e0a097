//! Intermediate state (Sieve): the controller crashes between two writes of one reconcile and
//! restarts 5 s later; it must finish the job from what it then sees.

use crate::config::{Config, FaultInput, Input, TimedInput};
use crate::model::{ControllerId, DurationMs, TimeMs};
use crate::sim::Sim;
use crate::trace::{ControllerEvent, FaultEvent, StoreEvent};
use crate::trace::{EventKind, ReconcileResult};

use super::super::candidates::Source;
use super::super::reading::{cname, kname};
use super::{Fault, FaultType, Scan};

/// How long after the crash the controller restarts.
pub const RESTART_AFTER_MS: DurationMs = DurationMs(5_000);

/// Crash after write `after_writes` of the reconcile starting at `at_ms + 1`, restart 5 s later.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct CrashBetweenWrites {
    pub controller: ControllerId,
    pub at_ms: TimeMs,
    pub after_writes: u32,
}

impl FaultType for CrashBetweenWrites {
    const NAME: &'static str = "crash";

    /// A crash between every pair of writes of every reconcile, armed as the reconcile starts
    /// (`Scan::reconciles`).
    fn source(scan: &Scan) -> Source {
        let mut out = vec![];
        for r in &scan.controllers {
            let controller = r.controller;
            for (at_ms, writes) in scan.reconciles(controller) {
                for after_writes in 1..writes {
                    out.push(Fault::CrashBetweenWrites(CrashBetweenWrites {
                        controller,
                        at_ms,
                        after_writes,
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
        self.at_ms + RESTART_AFTER_MS
    }

    fn inputs(&self) -> Vec<TimedInput> {
        vec![TimedInput {
            at_ms: self.at_ms,
            input: Input::Fault(FaultInput::Crash {
                controller: self.controller,
                after_writes: Some(self.after_writes),
                restart_after_ms: Some(RESTART_AFTER_MS),
            }),
        }]
    }

    fn describe(&self, config: &Config) -> String {
        format!(
            "crash {} after write {} of its reconcile at {}, restart {} later",
            config.controllers[self.controller.index()].name,
            self.after_writes,
            self.at_ms,
            RESTART_AFTER_MS
        )
    }

    /// Earlier crash points.
    fn shrinks(&self) -> Vec<Self> {
        (1..self.after_writes)
            .map(|after_writes| CrashBetweenWrites {
                after_writes,
                ..self.clone()
            })
            .collect()
    }

    /// The reconcile it cut short, the writes that reconcile made, the restart.
    fn effect(&self, sim: &Sim) -> String {
        let controller = self.controller;
        let crash = sim.trace().iter().enumerate().find(|(_, e)| {
            e.time_ms >= self.at_ms
                && matches!(e.kind, EventKind::Fault(FaultEvent::Crash { controller: c }) if c == controller)
        });
        let Some((ci, ce)) = crash else {
            return format!("{} never reached the crash point", cname(sim, controller));
        };
        let cut = sim.trace().range(ci..).find_map(|e| match e.kind {
            EventKind::Controller(ControllerEvent::ReconcileEnd {
                controller: c,
                key,
                result: ReconcileResult::Crashed,
                ..
            }) if c == controller => Some(key),
            _ => None,
        });
        let start = cut.and_then(|key| {
            sim.trace().range(..ci).rposition(|e| {
                matches!(e.kind, EventKind::Controller(ControllerEvent::ReconcileStart { controller: c, key: k, .. }) if c == controller && k == key)
            })
        });
        let writes = start.map_or(vec![], |s| writes_of_reconcile(sim, s, ci));
        let restart = sim.trace().range(ci..).find_map(|e| match e.kind {
            EventKind::Fault(FaultEvent::Restart { controller: c, .. }) if c == controller => {
                Some(e.time_ms)
            }
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
}

/// The writes the reconcile starting at event `start` made before event `end`, in words.
fn writes_of_reconcile(sim: &Sim, start: usize, end: usize) -> Vec<String> {
    sim.trace()
        .range(start..end)
        .filter(|e| e.cause == start as u32)
        .filter_map(|e| match e.kind {
            EventKind::Store(StoreEvent::Write { op, kind, name, .. }) => Some(format!(
                "{} {}/{}",
                op.as_str(),
                kname(sim, kind),
                sim.names().resolve(name)
            )),
            _ => None,
        })
        .collect()
}
