//! Unobserved state, Sieve's injection: the controller's notifications held from just before a
//! write of an object it reads until a later state of that object arrives, then released
//! together, so it never acts on the state in between.

use crate::config::{Config, FaultInput, Input, TimedInput};
use crate::model::{ControllerId, DurationMs, KindId, TimeMs};
use crate::sim::Sim;
use crate::trace::EventKind;
use crate::trace::{FaultEvent, StoreEvent};

use super::super::candidates::Source;
use super::super::reading::{cname, kname};
use super::{state_windows, Fault, FaultType, Scan, WINDOWS};

/// A hold that no later state supersedes ends after this long (and the schedule is discarded).
pub const HOLD_FOR_MS: DurationMs = DurationMs(60_000);

/// Hold the controller's notifications from `at_ms` until a later state of the object arrives
/// (at most `for_ms`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Hold {
    pub controller: ControllerId,
    pub at_ms: TimeMs,
    pub kind: KindId,
    pub name: String,
    /// When the later state is written (the hold's expected end).
    pub until_ms: TimeMs,
    pub for_ms: DurationMs,
}

impl FaultType for Hold {
    const NAME: &'static str = "hold";

    fn source(scan: &Scan) -> Source {
        let mut out = vec![];
        for r in &scan.controllers {
            for (t1, t2, kind, name) in state_windows(&r.others) {
                out.push(Fault::Hold(Hold {
                    controller: r.controller,
                    at_ms: t1.saturating_sub(DurationMs(1)),
                    kind,
                    name: scan.sim.names().resolve(name).to_string(),
                    until_ms: t2,
                    for_ms: HOLD_FOR_MS,
                }));
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
        self.until_ms + DurationMs(1)
    }

    fn inputs(&self) -> Vec<TimedInput> {
        vec![TimedInput {
            at_ms: self.at_ms,
            input: Input::Fault(FaultInput::Hold {
                controller: self.controller,
                kind: self.kind,
                name: self.name.clone(),
                for_ms: self.for_ms,
            }),
        }]
    }

    fn describe(&self, config: &Config) -> String {
        format!(
            "hold {}'s notifications from {} until a later state of {}/{} arrives (unobserved state)",
            config.controllers[self.controller.index()].name,
            self.at_ms,
            config.kinds[self.kind.index()].name,
            self.name
        )
    }

    /// Long enough for the later state to arrive, then the usual windows.
    fn shrinks(&self) -> Vec<Self> {
        let need = DurationMs::between(self.at_ms, self.until_ms) + DurationMs(1_000);
        std::iter::once(need)
            .chain(WINDOWS.into_iter().filter(|&w| w > need))
            .filter(|&w| w < self.for_ms)
            .map(|for_ms| Hold {
                for_ms,
                ..self.clone()
            })
            .collect()
    }

    /// Only a hold that a later state superseded hid anything.
    fn had_effect(&self, sim: &Sim) -> bool {
        sim.trace().iter().any(|e| {
            e.time_ms >= self.at_ms
                && matches!(e.kind, EventKind::Fault(FaultEvent::HoldReleased { controller: c, superseded: true, .. }) if c == self.controller)
        })
    }

    /// The held object's name.
    fn heap_bytes(&self) -> usize {
        self.name.len()
    }

    /// How many notifications were held, from when to when, and the state never acted on.
    fn effect(&self, sim: &Sim) -> String {
        let (controller, at_ms, kind, name) = (self.controller, self.at_ms, self.kind, &self.name);
        let armed = sim.trace().iter().find(|e| {
            e.time_ms >= at_ms
                && matches!(e.kind, EventKind::Fault(FaultEvent::HoldArmed { controller: c, .. }) if c == controller)
        });
        let released = sim.trace().iter().find_map(|e| match e.kind {
            EventKind::Fault(FaultEvent::HoldReleased {
                controller: c,
                held,
                superseded,
            }) if c == controller && e.time_ms >= at_ms => Some((e.time_ms, held, superseded)),
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
                EventKind::Store(StoreEvent::Write {
                    kind: k,
                    name: n,
                    spec,
                    ..
                }) if k == kind && sim.names().resolve(n) == name => Some(spec.to_string()),
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
}
