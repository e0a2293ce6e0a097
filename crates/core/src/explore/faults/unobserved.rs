//! Unobserved state by a cut: the controller cut off from just before a write of an object it
//! reads until just after the next write of the same object, so it never sees the state between.

use crate::config::{Config, FaultInput, Input, TimedInput};
use crate::model::{ControllerId, DurationMs, TimeMs};
use crate::sim::Sim;
use crate::trace::ReflectorEvent;
use crate::trace::{EventKind, WatchEnd};

use super::super::candidates::Source;
use super::super::reading::{cname, mine, writes_between};
use super::{state_windows, Fault, FaultType, Scan};

/// Hide the state between two writes: cut the controller off from `from_ms` to `until_ms`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Unobserved {
    pub controller: ControllerId,
    pub from_ms: TimeMs,
    pub until_ms: TimeMs,
}

impl FaultType for Unobserved {
    const NAME: &'static str = "unobserved";

    fn source(scan: &Scan) -> Source {
        let mut out = vec![];
        for r in &scan.controllers {
            for (t1, t2, _, _) in state_windows(&r.others) {
                out.push(Fault::Unobserved(Unobserved {
                    controller: r.controller,
                    from_ms: t1.saturating_sub(DurationMs(1)),
                    until_ms: t2 + DurationMs(1),
                }));
            }
        }
        scan.list(out)
    }

    fn controller(&self) -> ControllerId {
        self.controller
    }

    fn start_ms(&self) -> TimeMs {
        self.from_ms
    }

    fn end_ms(&self) -> TimeMs {
        self.until_ms
    }

    fn inputs(&self) -> Vec<TimedInput> {
        vec![TimedInput {
            at_ms: self.from_ms,
            input: Input::Fault(FaultInput::Disconnect {
                controller: self.controller,
                duration_ms: DurationMs::between(self.from_ms, self.until_ms),
                after_writes: None,
            }),
        }]
    }

    fn describe(&self, config: &Config) -> String {
        format!(
            "hide the state between {} and {} from {} (unobserved state)",
            self.from_ms,
            self.until_ms,
            config.controllers[self.controller.index()].name
        )
    }

    fn effect(&self, sim: &Sim) -> String {
        cut_effect(sim, self.controller, self.from_ms, self.until_ms)
    }
}

/// A disconnect or an unobserved window: the watches it closed, the writes meanwhile, what the
/// re-watch got and the relists (within a minute after).
pub(super) fn cut_effect(
    sim: &Sim,
    controller: ControllerId,
    at_ms: TimeMs,
    until: TimeMs,
) -> String {
    let after =
        |e: &&crate::trace::Event| e.time_ms >= at_ms && e.time_ms < until + DurationMs(60_000);
    let cut = sim
        .trace()
        .iter()
        .filter(after)
        .filter(|e| matches!(e.kind, EventKind::Reflector(ReflectorEvent::WatchEnded { watcher, reason: WatchEnd::Disconnected }) if mine(sim, watcher, controller)))
        .count();
    let gone = sim.trace().iter().filter(after).find_map(|e| match e.kind {
        EventKind::Reflector(ReflectorEvent::WatchFailed { watcher, error })
            if mine(sim, watcher, controller) =>
        {
            error.code().eq(&410).then(|| error.message())
        }
        _ => None,
    });
    let relists = sim
        .trace()
        .iter()
        .filter(after)
        .filter(|e| match e.kind {
            EventKind::Reflector(ReflectorEvent::ListRequest {
                watcher, relist, ..
            })
            | EventKind::Reflector(ReflectorEvent::WatchListRequest {
                watcher, relist, ..
            }) => relist && mine(sim, watcher, controller),
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
