//! A disconnect: the controller's watches cut at a write of a kind it reads, for 5 s or 60 s,
//! long enough for the cache to move on (a 410 and a relist, or a plain re-watch).

use crate::config::{Config, Input, TimedInput};
use crate::model::{ControllerId, DurationMs, TimeMs};
use crate::sim::Sim;

use super::super::candidates::Source;
use super::{shorter, Fault, FaultType, Scan};

/// Disconnect the controller at `at_ms` for `duration_ms`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Disconnect {
    pub controller: ControllerId,
    pub at_ms: TimeMs,
    pub duration_ms: DurationMs,
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
            input: Input::Disconnect {
                controller: self.controller,
                duration_ms: self.duration_ms,
            },
        }]
    }

    fn describe(&self, config: &Config) -> String {
        format!(
            "disconnect {} at {} for {}",
            config.controllers[self.controller.index()].name,
            self.at_ms,
            self.duration_ms
        )
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

    fn effect(&self, sim: &Sim) -> String {
        super::unobserved::cut_effect(sim, self.controller, self.at_ms, self.end_ms())
    }
}
