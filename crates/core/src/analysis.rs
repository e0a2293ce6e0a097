//! Facts about a finished run that every display needs, computed once: the markers of the
//! timeline (410s, relists, reconciles, writes, faults, narration) and their lanes, the windows
//! of faults that last, which way a message travels on a link, the next or previous marker of a
//! kind from any event, and the ESR outcome. The page and the CLI only display these.

use crate::model::{DurationMs, TimeMs, WatcherId};
use crate::sim::Sim;
use crate::trace::{Actor, EventId, EventKind};

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
            EventKind::ReconcileStart { .. } => Some(MarkerKind::Reconcile),
            EventKind::Write { .. } => Some(MarkerKind::Write),
            EventKind::Crash { .. }
            | EventKind::Disconnect { .. }
            | EventKind::CachePaused { .. }
            | EventKind::ApiserverRestart { .. }
            | EventKind::HoldArmed { .. } => Some(MarkerKind::Fault),
            EventKind::Say { .. } => Some(MarkerKind::Say),
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
    use EventKind::*;
    match *kind {
        WatchEvent { watcher, .. }
        | Bookmark { watcher, .. }
        | ListResult { watcher, .. }
        | InitialEventsEnd { watcher, .. }
        | WatchOpened { watcher, .. }
        | WatchFailed { watcher, .. } => Some((watcher, Direction::ToClient)),
        ListRequest { watcher, .. }
        | WatchRequest { watcher, .. }
        | WatchListRequest { watcher, .. }
        | ListContinue { watcher, .. } => Some((watcher, Direction::ToServer)),
        _ => None,
    }
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

/// Markers kept for display besides every 410 (a run at the event cap has millions of events).
pub const MARKERS_SHOWN: usize = 4000;

/// Everything the displays need about a finished run, computed in one pass over its trace.
#[derive(Clone, Debug, PartialEq)]
pub struct Analysis {
    /// The timeline's lanes: actors of marked events, in order of their first marker.
    pub lanes: Vec<Actor>,
    /// The first `MARKERS_SHOWN` markers, and every 410 after them.
    pub markers: Vec<Marker>,
    /// Disconnects and paused caches, in the order they end (open ones last).
    pub windows: Vec<FaultWindow>,
    /// Every marked event, per kind, in trace order (not capped).
    by_kind: [Vec<EventId>; MarkerKind::ALL.len()],
    pub esr: EsrOutcome,
}

impl Analysis {
    pub fn of(sim: &Sim) -> Analysis {
        let mut a = Analysis {
            lanes: vec![],
            markers: vec![],
            windows: vec![],
            by_kind: Default::default(),
            esr: esr_outcome(sim, None),
        };
        for (i, e) in sim.trace().iter().enumerate() {
            let Some(kind) = MarkerKind::of(&e.kind) else {
                continue;
            };
            let lane = match a.lanes.iter().position(|x| *x == e.actor) {
                Some(l) => l,
                None => {
                    a.lanes.push(e.actor);
                    a.lanes.len() - 1
                }
            };
            let event = i as EventId;
            a.by_kind[kind.index()].push(event);
            if a.markers.len() < MARKERS_SHOWN || kind == MarkerKind::Gone {
                a.markers.push(Marker {
                    event,
                    lane,
                    kind,
                    time_ms: e.time_ms,
                });
            }
        }
        a.windows = windows(sim, &a.by_kind[MarkerKind::Fault.index()]);
        a
    }

    /// The markers of the events from `from_ms` to `to_ms` (a zoomed timeline): as `markers`,
    /// the 410s and the first `MARKERS_SHOWN` others (at most `MARKERS_SHOWN` 410s too), but of
    /// that window, so zooming into a long run shows what happened there.
    pub fn markers_in(&self, sim: &Sim, from_ms: TimeMs, to_ms: TimeMs) -> Vec<Marker> {
        let total: usize = self.by_kind.iter().map(Vec::len).sum();
        if total == self.markers.len() {
            let shown = |m: &&Marker| m.time_ms >= from_ms && m.time_ms <= to_ms;
            return self.markers.iter().filter(shown).copied().collect();
        }
        let mut out = vec![];
        for kind in MarkerKind::ALL {
            let ids = self.events(kind);
            let first = ids.partition_point(|&i| sim.trace()[i as usize].time_ms < from_ms);
            // Bounded per kind, 410s too: a zoomed window is drawn, not searched.
            for &event in ids[first..].iter().take(MARKERS_SHOWN) {
                let e = &sim.trace()[event as usize];
                if e.time_ms > to_ms {
                    break;
                }
                let lane = self.lanes.iter().position(|a| *a == e.actor).unwrap_or(0);
                out.push(Marker {
                    event,
                    lane,
                    kind,
                    time_ms: e.time_ms,
                });
            }
        }
        out.sort_unstable_by_key(|m| m.event);
        let mut others = 0;
        out.retain(|m| {
            others += usize::from(m.kind != MarkerKind::Gone);
            m.kind == MarkerKind::Gone || others <= MARKERS_SHOWN
        });
        out
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
            EventKind::Disconnect { until_ms, .. } => out.push(window(i, e.time_ms, until_ms)),
            EventKind::CachePaused { apiserver, paused } => {
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
            EventKind::ListRequest { .. } | EventKind::WatchListRequest { .. } => t.lists += 1,
            EventKind::WatchOpened { .. } => t.watches += 1,
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
        if let EventKind::ReconcileStart {
            controller, key, ..
        } = e.kind
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
    use crate::config::{Config, Input, TimedInput};
    use crate::model::{ApiserverId, ControllerId};

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
        Input::Create {
            kind: crate::model::KindId(0),
            name: name.into(),
            spec: 1,
        }
    }

    /// A run with more markers than are shown: a zoomed window still has the markers of its own
    /// moments, not only those of the run's start.
    #[test]
    fn a_window_late_in_a_long_run_has_its_markers() {
        let timeline = (0..3000u64)
            .map(|i| (i * 10, create(&format!("p{i}"))))
            .collect();
        let sim = run(timeline);
        let a = Analysis::of(&sim);
        assert_eq!(
            a.markers.len(),
            MARKERS_SHOWN,
            "the run has more markers than are shown"
        );
        let last = a.markers.last().unwrap().time_ms;
        let (from, to) = (last + DurationMs(5_000), last + DurationMs(10_000));
        assert!(a.markers.iter().all(|m| m.time_ms < from));
        let late = a.markers_in(&sim, from, to);
        assert!(
            !late.is_empty(),
            "writes and reconciles after the shown markers"
        );
        assert!(late.iter().all(|m| (from..=to).contains(&m.time_ms)));
        assert!(
            late.windows(2).all(|w| w[0].event < w[1].event),
            "in trace order"
        );
        for m in &late {
            let e = &sim.trace()[m.event as usize];
            assert_eq!(MarkerKind::of(&e.kind), Some(m.kind));
            assert_eq!(a.lanes[m.lane], e.actor);
        }
        // A short run: the window's markers are those shown.
        let short = run(vec![(1000, create("a")), (2000, create("b"))]);
        let b = Analysis::of(&short);
        let want: Vec<Marker> = b
            .markers
            .iter()
            .filter(|m| m.time_ms >= TimeMs(1500))
            .copied()
            .collect();
        assert_eq!(b.markers_in(&short, TimeMs(1500), TimeMs::MAX), want);
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
                EventKind::Write { .. }
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
            (1000, Input::PauseCache { apiserver: api }),
            (3000, Input::ResumeCache { apiserver: api }),
            (10_000, Input::PauseCache { apiserver: api }),
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
                EventKind::CachePaused { paused: true, .. }
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

    /// A watcher cut off while a small cache overflows gets a 410 and lists again: the tallies
    /// say so, and agree with `expect count` over the same run.
    #[test]
    fn watcher_tallies_count_lists_watches_and_410s_as_expectations_do() {
        use crate::verdict::{counts, Counted, Scope};
        let mut timeline = vec![(
            1000,
            Input::Disconnect {
                controller: ControllerId(0),
                duration_ms: DurationMs(5000),
            },
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
