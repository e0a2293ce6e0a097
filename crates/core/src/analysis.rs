//! Facts about a finished run that every display needs, computed once: the markers of the
//! timeline (410s, relists, reconciles, writes, faults, narration) and their lanes, the windows
//! of faults that last, which way a message travels on a link, the next or previous marker of a
//! kind from any event, and the ESR outcome. The page and the CLI only display these.

use crate::model::{DurationMs, TimeMs, WatcherId};
use crate::sim::Sim;
use crate::trace::{Actor, EventId, EventKind};
use crate::trace::{ControllerEvent, FaultEvent, ReflectorEvent, SayEvent, StoreEvent};

/// The kinds of moments the timeline marks and the jump buttons look for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MarkerKind {
    /// A 410 Gone, to a watch or to a paged list's continue token.
    Gone,
    /// A list (or streaming list) that is not the informer's first.
    Relist,
    /// A reconcile starts.
    Reconcile,
    /// A write committed to etcd.
    Write,
    /// A fault: a crash, a disconnect, a paused cache, an apiserver restart, a hold.
    Fault,
    /// The scenario's narration.
    Say,
}

impl MarkerKind {
    pub const ALL: [MarkerKind; 6] = [
        MarkerKind::Gone,
        MarkerKind::Relist,
        MarkerKind::Reconcile,
        MarkerKind::Write,
        MarkerKind::Fault,
        MarkerKind::Say,
    ];

    /// The marker an event gets, if any (a 410 first: a failed relist is marked as a 410).
    pub fn of(kind: &EventKind) -> Option<MarkerKind> {
        match kind {
            k if k.gone().is_some() => Some(MarkerKind::Gone),
            k if k.is_relist() => Some(MarkerKind::Relist),
            EventKind::Controller(ControllerEvent::ReconcileStart { .. }) => {
                Some(MarkerKind::Reconcile)
            }
            EventKind::Store(StoreEvent::Write { .. }) => Some(MarkerKind::Write),
            EventKind::Fault(FaultEvent::Crash { .. })
            | EventKind::Fault(FaultEvent::Disconnect { .. })
            | EventKind::Fault(FaultEvent::CachePaused { .. })
            | EventKind::Fault(FaultEvent::ApiserverRestart { .. })
            | EventKind::Fault(FaultEvent::HoldArmed { .. }) => Some(MarkerKind::Fault),
            EventKind::Say(SayEvent { .. }) => Some(MarkerKind::Say),
            _ => None,
        }
    }

    /// The page's CSS class for this marker.
    pub fn css_class(self) -> &'static str {
        match self {
            MarkerKind::Gone => "m-gone",
            MarkerKind::Relist => "m-relist",
            MarkerKind::Reconcile => "m-reconcile",
            MarkerKind::Write => "m-write",
            MarkerKind::Fault => "m-fault",
            MarkerKind::Say => "m-say",
        }
    }

    fn index(self) -> usize {
        self as usize
    }
}

/// One marked event on the timeline.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Marker {
    pub event: EventId,
    /// Its lane: an index into `Analysis::lanes` (the actor that did it).
    pub lane: usize,
    pub kind: MarkerKind,
    pub time_ms: TimeMs,
}

/// Which way a message travels on a watcher's link.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Direction {
    /// A request: a list, a watch, a page's continue token.
    ToServer,
    /// An answer or a stream's event: a list's result, an event, a bookmark, an error.
    ToClient,
}

/// The watcher whose link an event travels on, and which way, if it is a message.
pub fn travel(kind: &EventKind) -> Option<(WatcherId, Direction)> {
    match *kind {
        EventKind::Reflector(ReflectorEvent::WatchEvent { watcher, .. })
        | EventKind::Reflector(ReflectorEvent::Bookmark { watcher, .. })
        | EventKind::Reflector(ReflectorEvent::ListResult { watcher, .. })
        | EventKind::Reflector(ReflectorEvent::InitialEventsEnd { watcher, .. })
        | EventKind::Reflector(ReflectorEvent::WatchOpened { watcher, .. })
        | EventKind::Reflector(ReflectorEvent::WatchFailed { watcher, .. }) => {
            Some((watcher, Direction::ToClient))
        }
        EventKind::Reflector(ReflectorEvent::ListRequest { watcher, .. })
        | EventKind::Reflector(ReflectorEvent::WatchRequest { watcher, .. })
        | EventKind::Reflector(ReflectorEvent::WatchListRequest { watcher, .. })
        | EventKind::Reflector(ReflectorEvent::ListContinue { watcher, .. }) => {
            Some((watcher, Direction::ToServer))
        }
        _ => None,
    }
}

/// A message that takes time on its watcher's link (a link with a delay): when it left and when
/// it arrived. Messages of a link without delay arrive at once and have none.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Flight {
    /// The message's event: a request's when it is sent, an answer's or a stream event's when it
    /// arrives.
    pub event: EventId,
    pub watcher: WatcherId,
    pub direction: Direction,
    pub sent_ms: TimeMs,
    /// After `sent_ms`.
    pub arrive_ms: TimeMs,
}

impl Flight {
    /// How far along its link the message is at `at_ms` (which may fall between two
    /// milliseconds, for playback in virtual time): 0 at its sender, 1 at its receiver.
    pub fn progress(&self, at_ms: f64) -> f64 {
        let (sent, arrive) = (self.sent_ms.ms() as f64, self.arrive_ms.ms() as f64);
        ((at_ms - sent) / (arrive - sent)).clamp(0.0, 1.0)
    }
}

/// Messages drawn in flight at one moment, at most.
pub const FLIGHTS_SHOWN: usize = 64;

/// The flights of a run's messages, read off its trace: a request leaves at its event and
/// arrives after the link's delay, behind what is still in flight on that direction (a TCP
/// connection delivers in order, as `Controller::link_arrival` does); an answer arrives at its
/// event and left one delay before, not before what caused it. The delay is the controller's
/// configured one until a `LinkDelay` event changes it.
fn flights(sim: &Sim) -> Vec<Flight> {
    let controllers = &sim.config().controllers;
    let mut delay: Vec<DurationMs> = controllers.iter().map(|c| c.link_delay_ms).collect();
    let mut up_last: Vec<Option<TimeMs>> = vec![None; controllers.len()];
    let mut out = vec![];
    for (i, e) in sim.trace().iter().enumerate() {
        if let EventKind::Fault(FaultEvent::LinkDelay {
            controller,
            delay_ms,
        }) = e.kind
        {
            delay[controller.index()] = delay_ms;
            continue;
        }
        let Some((watcher, direction)) = travel(&e.kind) else {
            continue;
        };
        let c = sim.reflectors()[watcher.index()].controller().index();
        let d = delay[c];
        let (sent_ms, arrive_ms) = match direction {
            Direction::ToServer => {
                let last = &mut up_last[c];
                if d.is_zero() && last.is_none_or(|l| l < e.time_ms) {
                    continue;
                }
                let at = (e.time_ms + d).max(last.unwrap_or(TimeMs::ZERO));
                *last = Some(at);
                (e.time_ms, at)
            }
            Direction::ToClient => {
                let caused_ms = e
                    .cause()
                    .map_or(TimeMs::ZERO, |c| sim.trace()[c as usize].time_ms);
                (e.time_ms.saturating_sub(d).max(caused_ms), e.time_ms)
            }
        };
        if arrive_ms > sent_ms {
            out.push(Flight {
                event: i as EventId,
                watcher,
                direction,
                sent_ms,
                arrive_ms,
            });
        }
    }
    out
}

/// A fault that lasts: a disconnect, or a cache paused until it resumes (or the run ends).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FaultWindow {
    /// The event that began it.
    pub event: EventId,
    pub start_ms: TimeMs,
    /// Its end, after its start (a window is at least 1 ms wide).
    pub end_ms: TimeMs,
}

pub use crate::esr::{esr_outcome, EsrOutcome};

/// Markers a window of the timeline shows whole, at most: a window with more shows, per kind of
/// marker, at most `SLICE_MARKERS` per slice of `SLICES` (one per lane, the first of each), so a
/// run of millions of events is marked from its start to its end and a zoomed window across its
/// width.
pub const MARKERS_SHOWN: usize = 4000;
/// Slices of a crowded window: each is narrower than a marker as the timeline draws it.
pub const SLICES: u64 = 300;
/// Markers of one kind per slice of a crowded window, at most, and how many of the slice's are
/// looked at for them.
pub const SLICE_MARKERS: usize = 4;
const SLICE_SCAN: usize = 64;

/// Everything the displays need about a finished run, computed in one pass over its trace.
#[derive(Clone, Debug, PartialEq)]
pub struct Analysis {
    /// The timeline's lanes: actors of marked events, in order of their first marker.
    pub lanes: Vec<Actor>,
    /// The whole run's markers, as `markers_in` gives them for a window of the whole run.
    pub markers: Vec<Marker>,
    /// Disconnects and paused caches, in the order they end (open ones last).
    pub windows: Vec<FaultWindow>,
    /// Every marked event, per kind, in trace order (not capped).
    by_kind: [Vec<EventId>; MarkerKind::ALL.len()],
    pub esr: EsrOutcome,
    /// The messages that take time on their links, in trace order (see `in_flight`).
    flights: Vec<Flight>,
    /// The longest of them: how far back from a moment a message still in flight can have left.
    flight_ms_max: DurationMs,
}

impl Analysis {
    pub fn of(sim: &Sim) -> Analysis {
        let mut a = Analysis {
            lanes: vec![],
            markers: vec![],
            windows: vec![],
            by_kind: Default::default(),
            esr: esr_outcome(sim, None),
            flights: flights(sim),
            flight_ms_max: DurationMs::ZERO,
        };
        a.flight_ms_max = a
            .flights
            .iter()
            .map(|f| DurationMs::between(f.sent_ms, f.arrive_ms))
            .max()
            .unwrap_or_default();
        for (i, e) in sim.trace().iter().enumerate() {
            let Some(kind) = MarkerKind::of(&e.kind) else {
                continue;
            };
            if !a.lanes.contains(&e.actor) {
                a.lanes.push(e.actor);
            }
            a.by_kind[kind.index()].push(i as EventId);
        }
        a.windows = windows(sim, &a.by_kind[MarkerKind::Fault.index()]);
        a.markers = a.markers_in(sim, TimeMs::ZERO, TimeMs::MAX);
        a
    }

    /// The markers of the events from `from_ms` to `to_ms` (a zoomed timeline, or the whole
    /// run), in trace order: all of them when there are at most `MARKERS_SHOWN`; else, per kind,
    /// all of a kind with at most `SLICES` and, of a kind with more, the first of each lane in
    /// each slice of the window (at most `SLICE_MARKERS` a slice). Found by binary search:
    /// the window's markers are never all visited.
    pub fn markers_in(&self, sim: &Sim, from_ms: TimeMs, to_ms: TimeMs) -> Vec<Marker> {
        let trace = sim.trace();
        let span = |ids: &[EventId], from: TimeMs, to: TimeMs| {
            let lo = ids.partition_point(|&i| trace[i as usize].time_ms < from);
            let hi = ids.partition_point(|&i| trace[i as usize].time_ms <= to);
            (lo, hi.max(lo))
        };
        let spans = MarkerKind::ALL.map(|kind| span(self.events(kind), from_ms, to_ms));
        let total: usize = spans.iter().map(|(lo, hi)| hi - lo).sum();
        let mut out = vec![];
        for (kind, (lo, hi)) in MarkerKind::ALL.into_iter().zip(spans) {
            let ids = &self.events(kind)[lo..hi];
            if total <= MARKERS_SHOWN || ids.len() as u64 <= SLICES {
                out.extend(ids.iter().map(|&i| self.marker(sim, i, kind)));
                continue;
            }
            // The window as it is drawn: from its first marker to its last at most.
            let first = trace[ids[0] as usize].time_ms.ms();
            let last = trace[ids[ids.len() - 1] as usize].time_ms.ms();
            let width = last - first + 1;
            let mut at = 0;
            for s in 0..SLICES {
                let end = TimeMs(first + (width * (s + 1)).div_ceil(SLICES));
                let (_, stop) = span(&ids[at..], TimeMs::ZERO, end - DurationMs(1));
                let mut lanes = vec![];
                // Bounded: a slice of one busy lane is not read to its end for the others.
                for &i in ids[at..at + stop].iter().take(SLICE_SCAN) {
                    let m = self.marker(sim, i, kind);
                    if !lanes.contains(&m.lane) {
                        lanes.push(m.lane);
                        out.push(m);
                        if lanes.len() == SLICE_MARKERS {
                            break;
                        }
                    }
                }
                at += stop;
            }
        }
        out.sort_unstable_by_key(|m| m.event);
        out
    }

    fn marker(&self, sim: &Sim, event: EventId, kind: MarkerKind) -> Marker {
        let e = &sim.trace()[event as usize];
        Marker {
            event,
            lane: self.lanes.iter().position(|a| *a == e.actor).unwrap_or(0),
            kind,
            time_ms: e.time_ms,
        }
    }

    /// The flight of the message at `event`, if it took time.
    pub fn flight_of(&self, event: EventId) -> Option<Flight> {
        let at = self.flights.partition_point(|f| f.event < event);
        self.flights.get(at).filter(|f| f.event == event).copied()
    }

    /// The messages on their links after the first `cursor` events, at `now_ms`: the time of the
    /// last of those events, or any later moment before the next one (playback in virtual
    /// time). A request is in flight once its event is applied and until it arrives; an answer
    /// once it left (at the same millisecond, once what caused it is applied) and until its
    /// event. At most `FLIGHTS_SHOWN`, the oldest first.
    pub fn in_flight(&self, sim: &Sim, cursor: usize, now_ms: TimeMs) -> Vec<Flight> {
        let trace = sim.trace();
        // Candidates: those that left at most the longest flight before now, and those that
        // arrive at most that long after it.
        let earliest = now_ms.saturating_sub(self.flight_ms_max);
        let from = trace.partition_point(|e| e.time_ms < earliest);
        let to = trace.partition_point(|e| e.time_ms <= now_ms + self.flight_ms_max);
        let first = self.flights.partition_point(|f| (f.event as usize) < from);
        let applied = |i: EventId| (i as usize) < cursor;
        self.flights[first..]
            .iter()
            .take_while(|f| (f.event as usize) < to)
            .filter(|f| match f.direction {
                Direction::ToServer => applied(f.event) && now_ms < f.arrive_ms,
                Direction::ToClient => {
                    let left = f.sent_ms < now_ms
                        || (f.sent_ms == now_ms
                            && trace[f.event as usize].cause().is_some_and(applied));
                    left && !applied(f.event)
                }
            })
            .take(FLIGHTS_SHOWN)
            .copied()
            .collect()
    }

    /// Every event of this kind, in trace order.
    pub fn events(&self, kind: MarkerKind) -> &[EventId] {
        &self.by_kind[kind.index()]
    }

    /// The first event of this kind at or after index `from`.
    pub fn next(&self, kind: MarkerKind, from: usize) -> Option<EventId> {
        let ids = self.events(kind);
        let at = ids.partition_point(|&i| (i as usize) < from);
        ids.get(at).copied()
    }

    /// The last event of this kind before index `before`.
    pub fn previous(&self, kind: MarkerKind, before: usize) -> Option<EventId> {
        let ids = self.events(kind);
        let at = ids.partition_point(|&i| (i as usize) < before);
        at.checked_sub(1).map(|k| ids[k])
    }
}

/// The windows of the faults that last, from the run's fault events.
fn windows(sim: &Sim, faults: &[EventId]) -> Vec<FaultWindow> {
    let mut out = vec![];
    let mut paused_since: Vec<Option<(EventId, TimeMs)>> =
        vec![None; sim.config().apiservers.len()];
    let window = |event, start_ms: TimeMs, end_ms: TimeMs| FaultWindow {
        event,
        start_ms,
        end_ms: end_ms.max(start_ms + DurationMs(1)),
    };
    for &i in faults {
        let e = &sim.trace()[i as usize];
        match e.kind {
            EventKind::Fault(FaultEvent::Disconnect { until_ms, .. }) => {
                out.push(window(i, e.time_ms, until_ms))
            }
            EventKind::Fault(FaultEvent::CachePaused { apiserver, paused }) => {
                let since = &mut paused_since[apiserver.index()];
                if paused {
                    *since = Some((i, e.time_ms));
                } else if let Some((start, t)) = since.take() {
                    out.push(window(start, t, e.time_ms));
                }
            }
            _ => {}
        }
    }
    let open = paused_since.into_iter().flatten();
    out.extend(open.map(|(start, t)| window(start, t, sim.now_ms())));
    out
}

/// What one watcher did over a run: its lists (streaming lists too), its watches, its 410s.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WatcherTally {
    pub lists: u32,
    pub watches: u32,
    /// The events that told it its resource version was gone, in order.
    pub gone: Vec<EventId>,
}

/// Per watcher, what it did, in one pass over the trace (the CLI's summary; the page draws
/// the events themselves).
pub fn watcher_tallies(sim: &Sim) -> Vec<WatcherTally> {
    let mut tally = vec![WatcherTally::default(); sim.reflectors().len()];
    for (i, e) in sim.trace().iter().enumerate() {
        let Some(w) = e.kind.watcher() else { continue };
        let t = &mut tally[w.index()];
        match e.kind {
            EventKind::Reflector(ReflectorEvent::ListRequest { .. })
            | EventKind::Reflector(ReflectorEvent::WatchListRequest { .. }) => t.lists += 1,
            EventKind::Reflector(ReflectorEvent::WatchOpened { .. }) => t.watches += 1,
            k if k.gone().is_some() => t.gone.push(i as EventId),
            _ => {}
        }
    }
    tally
}

/// Per controller, how many reconciles each key had, by key name.
pub fn reconciles_per_key(sim: &Sim) -> Vec<std::collections::BTreeMap<&str, u32>> {
    let mut per_key = vec![std::collections::BTreeMap::new(); sim.controllers().len()];
    for e in sim.trace().iter() {
        if let EventKind::Controller(ControllerEvent::ReconcileStart {
            controller, key, ..
        }) = e.kind
        {
            *per_key[controller.index()]
                .entry(sim.names().resolve(key))
                .or_default() += 1;
        }
    }
    per_key
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{Config, FaultInput, Input, TimedInput, WriteInput};
    use crate::model::{ApiserverId, ControllerId};
    use crate::view::Timeline;

    /// One kind, one controller watching it, a few writes and faults (at milliseconds).
    fn run(timeline: Vec<(u64, Input)>) -> Sim {
        let mut c = Config::new(&["Pod", "Copy"]);
        let mirror = crate::config::Behaviour::Mirror {
            target: crate::model::KindId(1),
        };
        c.controllers
            .push(Config::controller("c", crate::model::KindId(0), mirror));
        c.end_ms = TimeMs(60_000);
        c.timeline = timeline
            .into_iter()
            .map(|(at_ms, input)| TimedInput {
                at_ms: TimeMs(at_ms),
                input,
            })
            .collect();
        crate::verdict::run(c).unwrap()
    }

    fn create(name: &str) -> Input {
        Input::Write(WriteInput::Create {
            kind: crate::model::KindId(0),
            name: name.into(),
            spec: 1,
        })
    }

    /// A run with more markers than are shown: the whole run is marked from its start to its
    /// end, and a zoomed window late in it across its width, never only at its start.
    #[test]
    fn a_crowded_run_is_marked_across_the_whole_run_and_every_window() {
        let timeline = (0..3000u64)
            .map(|i| (i * 10, create(&format!("p{i}"))))
            .collect();
        let sim = run(timeline);
        let a = Analysis::of(&sim);
        let marked: usize = MarkerKind::ALL.iter().map(|&k| a.events(k).len()).sum();
        assert!(marked > MARKERS_SHOWN, "more markers than are shown whole");
        let bounded = |ms: &[Marker]| {
            ms.len() <= MarkerKind::ALL.len() * SLICES as usize * SLICE_MARKERS
                && ms.windows(2).all(|w| w[0].event < w[1].event)
        };
        assert!(bounded(&a.markers));
        // Each tenth of the run (creates every 10 ms until 30 s) has writes and reconciles.
        let tenths = |ms: &[Marker], from: u64, to: u64, kind| {
            (0..10).all(|t| {
                let (a, b) = (
                    from + (to - from) * t / 10,
                    from + (to - from) * (t + 1) / 10,
                );
                ms.iter()
                    .any(|m| m.kind == kind && (a..b).contains(&m.time_ms.ms()))
            })
        };
        for kind in [MarkerKind::Write, MarkerKind::Reconcile] {
            assert!(
                tenths(&a.markers, 0, 30_000, kind),
                "{kind:?} over the whole run"
            );
        }
        let (from, to) = (TimeMs(20_000), TimeMs(26_000));
        let late = a.markers_in(&sim, from, to);
        assert!(bounded(&late));
        assert!(late.iter().all(|m| (from..=to).contains(&m.time_ms)));
        assert!(
            tenths(&late, 20_000, 26_000, MarkerKind::Reconcile),
            "across the window"
        );
        for m in late.iter().chain(&a.markers) {
            let e = &sim.trace()[m.event as usize];
            assert_eq!(MarkerKind::of(&e.kind), Some(m.kind));
            assert_eq!((a.lanes[m.lane], m.time_ms), (e.actor, e.time_ms));
        }
        // A window with few markers shows them all.
        let few = a.markers_in(&sim, TimeMs(1000), TimeMs(1100));
        let all: usize = MarkerKind::ALL
            .iter()
            .map(|&k| {
                a.events(k)
                    .iter()
                    .filter(|&&i| (1000..=1100).contains(&sim.trace()[i as usize].time_ms.ms()))
                    .count()
            })
            .sum();
        assert_eq!(few.len(), all);
    }

    #[test]
    fn marker_kinds_have_the_page_classes() {
        let classes: Vec<_> = MarkerKind::ALL.iter().map(|k| k.css_class()).collect();
        assert_eq!(
            classes,
            [
                "m-gone",
                "m-relist",
                "m-reconcile",
                "m-write",
                "m-fault",
                "m-say"
            ]
        );
    }

    #[test]
    fn markers_writes_and_reconciles_are_found_in_trace_order() {
        let sim = run(vec![(1000, create("a")), (2000, create("b"))]);
        let a = Analysis::of(&sim);
        let writes = a.events(MarkerKind::Write);
        assert_eq!(writes.len(), 4, "two creates and their two mirrors");
        for &w in writes {
            assert!(matches!(
                sim.trace()[w as usize].kind,
                EventKind::Store(StoreEvent::Write { .. })
            ));
        }
        let last = *writes.last().unwrap() as usize;
        assert!(!a.events(MarkerKind::Reconcile).is_empty());
        // Every marker names its event's kind, lane and time.
        for m in &a.markers {
            let e = &sim.trace()[m.event as usize];
            assert_eq!(MarkerKind::of(&e.kind), Some(m.kind));
            assert_eq!(a.lanes[m.lane], e.actor);
            assert_eq!(m.time_ms, e.time_ms);
        }
        // Next and previous.
        assert_eq!(a.next(MarkerKind::Write, 0), Some(writes[0]));
        assert_eq!(
            a.next(MarkerKind::Write, writes[0] as usize),
            Some(writes[0])
        );
        assert_eq!(
            a.next(MarkerKind::Write, writes[0] as usize + 1),
            Some(writes[1])
        );
        assert_eq!(a.next(MarkerKind::Write, last + 1), None);
        assert_eq!(
            a.previous(MarkerKind::Write, writes[1] as usize),
            Some(writes[0])
        );
        assert_eq!(a.previous(MarkerKind::Write, writes[0] as usize), None);
        assert_eq!(a.next(MarkerKind::Gone, 0), None);
    }

    #[test]
    fn fault_windows_close_when_the_fault_ends_or_at_the_end() {
        let api = ApiserverId(0);
        let sim = run(vec![
            (
                1000,
                Input::Fault(FaultInput::PauseCache { apiserver: api }),
            ),
            (
                3000,
                Input::Fault(FaultInput::ResumeCache { apiserver: api }),
            ),
            (
                10_000,
                Input::Fault(FaultInput::PauseCache { apiserver: api }),
            ),
        ]);
        let a = Analysis::of(&sim);
        let spans: Vec<_> = a.windows.iter().map(|w| (w.start_ms, w.end_ms)).collect();
        assert_eq!(
            spans,
            [
                (TimeMs(1000), TimeMs(3000)),
                (TimeMs(10_000), TimeMs(60_000))
            ]
        );
        for w in &a.windows {
            let e = &sim.trace()[w.event as usize];
            assert!(matches!(
                e.kind,
                EventKind::Fault(FaultEvent::CachePaused { paused: true, .. })
            ));
        }
        assert_eq!(a.events(MarkerKind::Fault).len(), 3);
    }

    #[test]
    fn messages_travel_both_ways() {
        let sim = run(vec![(1000, create("a"))]);
        let ways: Vec<_> = sim.trace().iter().filter_map(|e| travel(&e.kind)).collect();
        assert!(
            ways.contains(&(WatcherId(0), Direction::ToServer)),
            "the list"
        );
        assert!(
            ways.contains(&(WatcherId(0), Direction::ToClient)),
            "its result"
        );
        let first = sim.trace().iter().find_map(|e| travel(&e.kind));
        assert_eq!(first.map(|t| t.1), Some(Direction::ToServer));
    }

    /// gallery 02's moment: the watch breaks at 2 s on a link with a 100 ms delay, so the
    /// re-watch is on its way until 2.1 s and its 410 on the way back until 2.2 s. Each
    /// message's flight is read off the trace; at 2.05 s the request is half way.
    #[test]
    fn messages_on_a_slow_link_are_in_flight_for_its_delay_in_order() {
        let c0 = ControllerId(0);
        let delay = |ms| {
            Input::Fault(FaultInput::Delay {
                controller: c0,
                delay_ms: DurationMs(ms),
            })
        };
        let disconnect = Input::Fault(FaultInput::Disconnect {
            controller: c0,
            duration_ms: DurationMs(0),
            after_writes: None,
        });
        let sim = run(vec![
            (1000, create("a")),
            (1500, delay(100)),
            (2000, disconnect),
            (2050, create("b")),
        ]);
        let a = Analysis::of(&sim);
        let trace = sim.trace();
        // Before the delay, messages arrive at once: no flights.
        assert!(a
            .flights
            .iter()
            .all(|f| f.sent_ms >= TimeMs(1500) && f.arrive_ms > f.sent_ms));
        let rewatch = (0..trace.len())
            .find(|&i| {
                trace[i].time_ms == TimeMs(2000)
                    && matches!(
                        trace[i].kind,
                        EventKind::Reflector(ReflectorEvent::WatchRequest { .. })
                    )
            })
            .expect("the Pod watcher's re-watch");
        let f = a
            .flight_of(rewatch as EventId)
            .expect("the re-watch takes time");
        assert_eq!(
            (f.direction, f.sent_ms, f.arrive_ms),
            (Direction::ToServer, TimeMs(2000), TimeMs(2100))
        );
        assert_eq!(f.progress(2050.0), 0.5);
        assert_eq!((f.progress(1000.0), f.progress(3000.0)), (0.0, 1.0));
        // Answers arrive at their event and left one delay before.
        let opened = (rewatch..trace.len())
            .find(|&i| {
                matches!(
                    trace[i].kind,
                    EventKind::Reflector(ReflectorEvent::WatchOpened { .. })
                )
            })
            .expect("the watch opens");
        let back = a
            .flight_of(opened as EventId)
            .expect("the answer takes time");
        assert_eq!(back.direction, Direction::ToClient);
        assert_eq!(back.arrive_ms, trace[opened].time_ms);
        assert_eq!(back.sent_ms, back.arrive_ms - DurationMs(100));
        // In flight: the request once sent and until it arrives, not before it is sent.
        assert!(a
            .in_flight(&sim, rewatch, TimeMs(2000))
            .iter()
            .all(|f| f.event as usize != rewatch));
        for (cursor, now) in [(rewatch + 1, 2000), (rewatch + 1, 2099)] {
            let on = a.in_flight(&sim, cursor, TimeMs(now));
            assert!(on.iter().any(|f| f.event as usize == rewatch), "at {now}");
        }
        let at_2050 = Timeline::index_at_time(&sim, TimeMs(2050));
        let on = a.in_flight(&sim, at_2050, TimeMs(2050));
        let rewatches: Vec<usize> = (0..at_2050)
            .filter(|&i| {
                trace[i].time_ms == TimeMs(2000)
                    && matches!(
                        trace[i].kind,
                        EventKind::Reflector(ReflectorEvent::WatchRequest { .. })
                    )
            })
            .collect();
        assert_eq!(
            rewatches.len(),
            2,
            "one re-watch per watcher (Pod and Copy)"
        );
        assert_eq!(
            on.iter().map(|f| f.event as usize).collect::<Vec<_>>(),
            rewatches,
            "at 2.05 s only the re-watches are on the link"
        );
        assert!(on.iter().all(|f| f.progress(2050.0) == 0.5));
        // The answer is on its way from 2.1 s until its event is applied.
        let back_on = |cursor, now| {
            a.in_flight(&sim, cursor, TimeMs(now))
                .iter()
                .any(|f| f.event as usize == opened)
        };
        assert!(!back_on(at_2050, 2050));
        assert!(back_on(opened, back.arrive_ms.ms() - 1));
        assert!(back_on(opened, back.arrive_ms.ms()));
        assert!(!back_on(opened + 1, back.arrive_ms.ms()));
        // In order on each direction: nothing overtakes what was sent before it.
        for pair in a.flights.windows(2) {
            if pair[0].direction == pair[1].direction && pair[0].direction == Direction::ToServer {
                assert!(pair[0].arrive_ms <= pair[1].arrive_ms, "{pair:?}");
            }
        }
    }

    /// A watcher cut off while a small cache overflows gets a 410 and lists again: the tallies
    /// say so, and agree with `expect count` over the same run.
    #[test]
    fn watcher_tallies_count_lists_watches_and_410s_as_expectations_do() {
        use crate::verdict::{counts, Counted, Scope};
        let mut timeline = vec![(
            1000,
            Input::Fault(FaultInput::Disconnect {
                controller: ControllerId(0),
                duration_ms: DurationMs(5000),
                after_writes: None,
            }),
        )];
        timeline.extend((0..10).map(|i| (1500 + 100 * i, create(&format!("p{i}")))));
        let mut sim = run(timeline);
        let mut c = sim.config().clone();
        c.kinds[0].cache = crate::config::CacheMode::Fixed { capacity: 3 };
        sim = crate::verdict::run(c).unwrap();
        let tallies = watcher_tallies(&sim);
        let count = |what: Counted| {
            let scope = Scope {
                controller: Some(ControllerId(0)),
                kind: Some(crate::model::KindId(0)),
                name: None,
            };
            let n: u64 = sim
                .trace()
                .iter()
                .map(|e| counts(&sim, e, &what, &scope))
                .sum();
            n as usize
        };
        let t = &tallies[0];
        assert!(!t.gone.is_empty() && t.lists >= 2, "{t:?}");
        assert_eq!(t.lists as usize, count(Counted::Lists));
        assert_eq!(t.watches as usize, count(Counted::Watches));
        assert_eq!(t.gone.len(), count(Counted::Gone));
        assert!(t
            .gone
            .iter()
            .all(|&g| sim.trace()[g as usize].kind.gone().is_some()));
        let per_key = reconciles_per_key(&sim);
        assert_eq!(per_key[0].len(), 10, "{per_key:?}");
        let reconciles: u32 = per_key[0].values().sum();
        assert_eq!(reconciles as usize, count(Counted::Reconciles));
    }

    #[test]
    fn esr_holds_after_a_quiet_end_and_is_not_judged_at_the_cap() {
        let sim = run(vec![(1000, create("a"))]);
        assert!(matches!(esr_outcome(&sim, None), EsrOutcome::Holds { .. }));
        let mut c = sim.config().clone();
        c.limits.max_events = 5;
        let capped = crate::verdict::run(c).unwrap();
        assert_eq!(
            Analysis::of(&capped).esr,
            EsrOutcome::NotJudged {
                at_ms: capped.now_ms()
            }
        );
    }
}
