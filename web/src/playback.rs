//! Playback in virtual time: the clock runs at `speed` virtual seconds per real second, so a 1 s
//! reconcile takes a second at 1× and a 1.075 s backoff a little longer, and a message on a slow
//! link is seen crossing it. Events of the same moment are played one after another, each for a
//! beat of real time (shorter when the moment holds many), so what happens in one millisecond is
//! still seen in its order.

use listwatch_core::SayEvent;
use listwatch_core::{EventKind, Trace};

/// The slowest and fastest playback, in virtual seconds per real second: slow motion to
/// fast-forward through a day of virtual time in under 10 s.
pub const SPEED_MIN: f64 = 0.1;
pub const SPEED_MAX: f64 = 10_000.0;

/// Real time one event is on screen at 1× before the next of the same moment (scaled by the
/// speed): long enough to see a message cross a link without delay.
pub const BEAT_MS: f64 = 160.0;

/// Real time at 1× that all the events of one moment take together at most: a moment with many
/// events plays each for a shorter beat.
pub const MOMENT_MS: f64 = 1200.0;

/// Events one tick applies at most, so a tick at fast-forward stays a frame's work.
pub const EVENTS_PER_TICK_MAX: usize = 20_000;

/// Where playback stands: `cursor` events applied, the virtual clock at `at_ms` (from the last
/// applied event's time up to the next one's), and how far the beat of the last applied event is
/// (0 when it was just applied, 1 once its beat is over).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Clock {
    pub cursor: usize,
    pub at_ms: f64,
    pub beat: f64,
}

/// Why a tick stopped playback.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stop {
    /// The run's last event is on screen and its beat is over.
    End,
    /// A `say "..." and wait` was just applied: the reader continues.
    Wait,
}

impl Clock {
    /// Moves the clock on by `elapsed_ms` of real time at `speed`; `Some` when playback stops.
    pub fn advance(&mut self, trace: &Trace, speed: f64, elapsed_ms: f64) -> Option<Stop> {
        let speed = speed.clamp(SPEED_MIN, SPEED_MAX);
        let mut real = elapsed_ms.max(0.0);
        let mut applied = 0;
        loop {
            if self.beat < 1.0 {
                let beat_ms = self
                    .cursor
                    .checked_sub(1)
                    .map_or(BEAT_MS, |i| beat_ms(trace, i))
                    / speed;
                let need = (1.0 - self.beat) * beat_ms;
                if real < need {
                    self.beat += real / beat_ms;
                    return None;
                }
                real -= need;
                self.beat = 1.0;
            }
            let Some(next) = trace.get(self.cursor) else {
                return Some(Stop::End);
            };
            if applied >= EVENTS_PER_TICK_MAX {
                return None;
            }
            let next_ms = next.time_ms.ms() as f64;
            let need = (next_ms - self.at_ms).max(0.0) / speed;
            if real < need {
                self.at_ms += real * speed;
                return None;
            }
            real -= need;
            self.at_ms = next_ms;
            self.cursor += 1;
            self.beat = 0.0;
            applied += 1;
            if matches!(next.kind, EventKind::Say(SayEvent { wait: true, .. })) {
                self.beat = 1.0;
                return Some(Stop::Wait);
            }
        }
    }
}

/// The beat of event `i` at 1×: `BEAT_MS`, shorter when its moment holds more events than
/// `MOMENT_MS` has beats for.
fn beat_ms(trace: &Trace, i: usize) -> f64 {
    let t = trace[i].time_ms;
    let first = trace.partition_point(|e| e.time_ms < t);
    let last = trace.partition_point(|e| e.time_ms <= t);
    BEAT_MS.min(MOMENT_MS / (last - first).max(1) as f64)
}

/// The speed control's words: `0.1×`, `1×`, `250×`, `10000×`.
pub fn speed_label(speed: f64) -> String {
    let tenths = (speed * 10.0 + 0.5).floor() as u64;
    if speed < 10.0 && !tenths.is_multiple_of(10) {
        format!("{}.{}×", tenths / 10, tenths % 10)
    } else {
        format!("{}×", (speed + 0.5).floor() as u64)
    }
}
