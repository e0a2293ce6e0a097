//! A controller's link to its apiserver: the network between them, as turmoil puts `hold`,
//! `release` and `partition` on the topology rather than on the hosts. One TCP connection's
//! rules (each direction delivers in order, even when its delay changes with messages in
//! flight), its far end (a failover moves it), its faults (a disconnect, a delay, Sieve's hold of
//! notifications) with their own timers and events, and the engine's side of them.
//!
//! The controller keeps its queue, workers, memory and life (`controller.rs`); the reflectors
//! their requests (`reflector.rs`). Adding a network fault touches this file only (besides the
//! input that names it).

use super::*;

/// Which way a message goes on a link.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Toward {
    /// A request, from a reflector to the apiserver.
    Server,
    /// An answer or a watch's message, from the apiserver to a reflector.
    Client,
}

/// A link's timers.
#[derive(Clone, Copy, Debug, Hash, PartialEq, Eq)]
pub(super) enum LinkTimer {
    /// The end of a disconnect; stale when a longer disconnect replaced it.
    Reconnect { until_ms: TimeMs },
    /// A hold that no later state superseded ends; stale when a later hold replaced it.
    HoldTimeout { generation: Generation },
}

/// The link between one controller (its reflectors and its writes) and the apiserver it talks to.
#[derive(Clone, Debug, Hash)]
pub struct Link {
    /// The far end: the apiserver its connections reach.
    apiserver: ApiserverId,
    delay_ms: DurationMs,
    /// When the last delayed message sent each way arrives (`[to the server, to the client]`):
    /// nothing sent later that way arrives before it.
    last_arrival_ms: [Option<TimeMs>; 2],
    /// Cut off until then: connections are refused.
    disconnected_until: Option<TimeMs>,
    /// Notifications held back (Sieve's unobserved-state injection), in arrival order.
    hold: Option<Hold>,
    /// Invalidates the timeout of an earlier hold.
    hold_generation: Generation,
}

/// Notifications held on a link until a later state of one object arrives (Sieve's
/// unobserved-state injection).
#[derive(Clone, Debug, Hash)]
struct Hold {
    kind: KindId,
    name: NameId,
    /// Held events of that object so far: the second is the later state.
    seen: u32,
    buffer: Vec<HeldMsg>,
}

/// A notification a hold keeps back: its cause, its watcher, and the watcher's session then.
pub(super) type HeldMsg = (EventId, WatcherId, Session, Msg);

/// What the views, the verdicts and the tests read of a link.
impl Link {
    /// The apiserver its connections reach now.
    pub fn apiserver(&self) -> ApiserverId {
        self.apiserver
    }

    /// The message delay each way.
    pub fn delay_ms(&self) -> DurationMs {
        self.delay_ms
    }

    /// Not cut off: its connections go through.
    pub fn connected(&self) -> bool {
        self.disconnected_until.is_none()
    }

    /// A hold is keeping notifications back.
    pub fn holding(&self) -> bool {
        self.hold.is_some()
    }
}

/// The link's rules: what the engine asks of it.
impl Link {
    pub(super) fn new(c: &crate::config::ControllerConfig) -> Link {
        Link {
            apiserver: c.apiserver,
            delay_ms: c.link_delay_ms,
            last_arrival_ms: [None; 2],
            disconnected_until: None,
            hold: None,
            hold_generation: Generation(0),
        }
    }

    /// When a message sent now `toward` one end arrives: `None` for at once (no delay and
    /// nothing in flight that way), else after the delay and behind whatever is still in flight,
    /// since a TCP connection delivers in order even when its delay changes.
    #[inline]
    pub(super) fn arrival(&mut self, toward: Toward, now: TimeMs) -> Option<TimeMs> {
        let last = &mut self.last_arrival_ms[toward as usize];
        if self.delay_ms.is_zero() && last.is_none_or(|l| l < now) {
            return None;
        }
        let at = (now + self.delay_ms).max(last.unwrap_or(TimeMs::ZERO));
        *last = Some(at);
        Some(at)
    }

    /// Its clients see a slow link: live events wait in a watch's channel until they arrive.
    pub(super) fn slow(&self) -> bool {
        !self.delay_ms.is_zero()
    }

    pub(super) fn set_delay(&mut self, delay_ms: DurationMs) {
        self.delay_ms = delay_ms;
    }

    /// Cut off until `until_ms`, or until an earlier disconnect ends if that is later: returns
    /// when it reconnects.
    pub(super) fn disconnect(&mut self, until_ms: TimeMs) -> TimeMs {
        let until_ms = self
            .disconnected_until
            .map_or(until_ms, |u| u.max(until_ms));
        self.disconnected_until = Some(until_ms);
        until_ms
    }

    /// The disconnect that ends at `until_ms` is over; false when a longer one replaced it.
    pub(super) fn reconnect(&mut self, until_ms: TimeMs) -> bool {
        if self.disconnected_until != Some(until_ms) {
            return false;
        }
        self.disconnected_until = None;
        true
    }

    /// Its connections go to `apiserver` from now on (a failover, or a restart that names one).
    pub(super) fn fail_over(&mut self, apiserver: ApiserverId) {
        self.apiserver = apiserver;
    }

    /// Arms a hold on one object (the engine released any earlier one first): returns its
    /// generation, which the hold's timeout names.
    pub(super) fn arm_hold(&mut self, kind: KindId, name: NameId) -> Generation {
        debug_assert!(self.hold.is_none(), "an earlier hold is released first");
        self.hold_generation = self.hold_generation.next();
        let buffer = vec![];
        self.hold = Some(Hold {
            kind,
            name,
            seen: 0,
            buffer,
        });
        self.hold_generation
    }

    /// A message reaches the controller's end while a hold is armed. Watch events and bookmarks
    /// are kept in arrival order: `Ok(true)` once a later state of the held object than the next
    /// one has arrived (the engine then releases the hold as superseded). Anything else (a
    /// stream's end, an answer) is handed back (`Err`): what was held goes before it.
    // The message handed back is moved once; a change with its previous body (for
    // selectors) passed clippy's 128 bytes.
    #[allow(clippy::result_large_err)]
    pub(super) fn buffer_held(
        &mut self,
        cause: EventId,
        watcher: WatcherId,
        session: Session,
        msg: Msg,
    ) -> Result<bool, Msg> {
        let Some(hold) = &mut self.hold else {
            return Err(msg);
        };
        let superseded = match &msg {
            Msg::Event { change, .. } => {
                let o = &change.object;
                if (o.kind, o.name) == (hold.kind, hold.name) {
                    hold.seen += 1;
                }
                hold.seen >= 2
            }
            Msg::Bookmark { .. } => false,
            _ => return Err(msg),
        };
        hold.buffer.push((cause, watcher, session, msg));
        Ok(superseded)
    }

    /// Ends the hold: what it kept, in arrival order (`None`: no hold was armed).
    pub(super) fn release_hold(&mut self) -> Option<Vec<HeldMsg>> {
        self.hold.take().map(|h| h.buffer)
    }

    /// Is a hold timeout of `generation` the armed hold's (not an earlier hold's)?
    pub(super) fn hold_timed_out(&self, generation: Generation) -> bool {
        self.hold_generation == generation
    }
}

/// The engine's side of the links: sending, arriving through a hold, and the network faults.
impl Sim {
    /// Sends an action over the link of `watcher`'s controller: it runs when it arrives (now, with
    /// no delay and nothing in flight that way).
    pub(super) fn send_on_link(
        &mut self,
        watcher: WatcherId,
        toward: Toward,
        cause: EventId,
        action: Action,
    ) {
        let c = self.controller_of(watcher);
        let now = self.now_ms;
        match self.links[c.index()].arrival(toward, now) {
            None => self.schedule(now, cause, action),
            Some(at) => {
                self.seq += 1;
                self.timers.push(at, self.seq, cause, action);
            }
        }
    }

    /// Is the controller's link up (its connections go through)?
    pub(super) fn connected(&self, c: ControllerId) -> bool {
        self.links[c.index()].connected()
    }

    /// A message reaches the controller's end of the link while a hold is armed: kept, or it
    /// releases the hold (a later state of the held object, or a message the hold does not keep,
    /// which then goes after what was held).
    pub(super) fn arrive_held(
        &mut self,
        c: ControllerId,
        (w, session): (WatcherId, Session),
        msg: Msg,
        cause: EventId,
    ) {
        match self.links[c.index()].buffer_held(cause, w, session, msg) {
            Ok(false) => {}
            Ok(true) => self.release_hold(c, true, cause),
            // The stream ended or a request was answered: what came before goes first.
            Err(msg) => {
                self.release_hold(c, false, cause);
                self.receive(w, session, msg, cause);
            }
        }
    }

    /// Delivers the notifications a hold kept back, in the order they arrived.
    fn release_hold(&mut self, c: ControllerId, superseded: bool, cause: EventId) {
        let Some(held) = self.links[c.index()].release_hold() else {
            return;
        };
        let released = EventKind::Fault(FaultEvent::HoldReleased {
            controller: c,
            held: held.len() as u32,
            superseded,
        });
        let id = self.emit(Actor::Controller(c), cause, released);
        for (_, w, session, msg) in held {
            if self.reflectors[w.index()].session == session {
                self.receive(w, session, msg, id);
            }
        }
    }

    /// The controller's process died: what its link held for it dies too (its connections are
    /// gone, and the hold with them).
    pub(super) fn drop_hold(&mut self, c: ControllerId) {
        self.links[c.index()].release_hold();
    }

    /// A link's timer is due.
    pub(super) fn link_timer(&mut self, c: ControllerId, timer: LinkTimer, cause: EventId) {
        match timer {
            LinkTimer::Reconnect { until_ms } => {
                if self.links[c.index()].reconnect(until_ms) {
                    let event = EventKind::Fault(FaultEvent::Reconnect { controller: c });
                    self.emit(Actor::Controller(c), cause, event);
                }
            }
            LinkTimer::HoldTimeout { generation } => {
                if self.links[c.index()].hold_timed_out(generation) {
                    self.release_hold(c, false, cause);
                }
            }
        }
    }

    /// Breaks the controller's watches and refuses its connections for `duration_ms`.
    pub(super) fn disconnect(
        &mut self,
        controller: ControllerId,
        duration_ms: DurationMs,
        cause: EventId,
    ) {
        let until_ms = self.now_ms + duration_ms;
        let event = EventKind::Fault(FaultEvent::Disconnect {
            controller,
            until_ms,
        });
        let id = self.emit(Actor::Controller(controller), cause, event);
        let until_ms = self.links[controller.index()].disconnect(until_ms);
        let timer = LinkTimer::Reconnect { until_ms };
        self.schedule(until_ms, id, Action::Link { controller, timer });
        self.break_watches(controller, id);
    }

    /// Every open watch of the controller ends as a broken connection.
    fn break_watches(&mut self, controller: ControllerId, cause: EventId) {
        for w in self.controllers[controller.index()].reflectors.clone() {
            if let Some(watch) = self.reflectors[w.index()].watch {
                self.close_watch(watch, WatchEnd::Disconnected, cause);
            }
        }
    }

    /// An HA load balancer moves the controller's connections to another apiserver.
    pub(super) fn failover(
        &mut self,
        controller: ControllerId,
        apiserver: ApiserverId,
        cause: EventId,
    ) {
        let event = EventKind::Fault(FaultEvent::Failover {
            controller,
            apiserver,
        });
        let id = self.emit(Actor::Controller(controller), cause, event);
        self.links[controller.index()].fail_over(apiserver);
        self.break_watches(controller, id);
    }

    pub(super) fn set_link_delay(
        &mut self,
        controller: ControllerId,
        delay_ms: DurationMs,
        cause: EventId,
    ) {
        self.links[controller.index()].set_delay(delay_ms);
        let event = EventKind::Fault(FaultEvent::LinkDelay {
            controller,
            delay_ms,
        });
        self.emit(Actor::Controller(controller), cause, event);
    }

    /// Sieve's unobserved-state injection: hold the controller's notifications until a later
    /// state of the object arrives (or `for_ms` passes).
    pub(super) fn hold(
        &mut self,
        controller: ControllerId,
        kind: KindId,
        name: &str,
        for_ms: DurationMs,
        cause: EventId,
    ) {
        let name = self.intern_object(kind, name);
        let event = EventKind::Fault(FaultEvent::HoldArmed {
            controller,
            kind,
            name,
        });
        let id = self.emit(Actor::Controller(controller), cause, event);
        self.release_hold(controller, false, id);
        let generation = self.links[controller.index()].arm_hold(kind, name);
        let timer = LinkTimer::HoldTimeout { generation };
        let at = self.now_ms + for_ms.max(DurationMs(1));
        self.schedule(at, id, Action::Link { controller, timer });
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{events_from, mirrors, watching};
    use super::*;
    use crate::config::Behaviour;

    const C: ControllerId = ControllerId(0);

    fn link() -> Link {
        let cfg = Config::controller("c", KindId(0), Behaviour::Mirror { target: KindId(1) });
        Link::new(&cfg)
    }

    /// A disconnect during a longer one does not shorten it; only the reconnect of the one in
    /// force counts.
    #[test]
    fn a_disconnect_lasts_until_the_latest_end_and_only_its_reconnect_counts() {
        let mut l = link();
        assert_eq!(l.disconnect(TimeMs(5000)), TimeMs(5000));
        assert_eq!(
            l.disconnect(TimeMs(3000)),
            TimeMs(5000),
            "the longer one stays"
        );
        assert!(!l.reconnect(TimeMs(3000)), "a stale reconnect");
        assert!(!l.connected());
        assert_eq!(l.disconnect(TimeMs(9000)), TimeMs(9000));
        assert!(!l.reconnect(TimeMs(5000)));
        assert!(l.reconnect(TimeMs(9000)) && l.connected());
    }

    /// A link is a TCP connection: with no delay and nothing in flight a message goes at once;
    /// otherwise after the delay, and never before one sent earlier on the same direction, even
    /// when the delay shrinks meanwhile. The two directions are independent.
    #[test]
    fn a_link_delivers_in_order_even_when_its_delay_shrinks() {
        let mut l = link();
        assert_eq!(l.arrival(Toward::Client, TimeMs(0)), None);
        l.set_delay(DurationMs(500));
        assert!(l.slow());
        assert_eq!(l.arrival(Toward::Client, TimeMs(100)), Some(TimeMs(600)));
        l.set_delay(DurationMs::ZERO);
        assert_eq!(
            l.arrival(Toward::Client, TimeMs(200)),
            Some(TimeMs(600)),
            "behind the message in flight"
        );
        assert_eq!(
            l.arrival(Toward::Server, TimeMs(200)),
            None,
            "the other direction"
        );
        assert_eq!(
            l.arrival(Toward::Client, TimeMs(601)),
            None,
            "nothing in flight any more"
        );
    }

    /// A delay that grows with messages in flight delays the later ones only.
    #[test]
    fn a_delay_that_grows_delays_only_what_is_sent_after() {
        let mut l = link();
        l.set_delay(DurationMs(100));
        assert_eq!(l.arrival(Toward::Server, TimeMs(0)), Some(TimeMs(100)));
        l.set_delay(DurationMs(1000));
        assert_eq!(l.arrival(Toward::Server, TimeMs(10)), Some(TimeMs(1010)));
        l.set_delay(DurationMs(100));
        assert_eq!(
            l.arrival(Toward::Server, TimeMs(20)),
            Some(TimeMs(1010)),
            "never before the one sent earlier"
        );
    }

    #[test]
    fn a_failover_moves_the_far_end() {
        let mut l = link();
        assert_eq!(l.apiserver(), ApiserverId(0));
        l.fail_over(ApiserverId(1));
        assert_eq!(l.apiserver(), ApiserverId(1));
    }

    fn event(o: Object) -> Msg {
        let change = Change {
            event: EventType::Modified,
            object: Arc::new(o),
            time_ms: TimeMs::ZERO,
            prev: Default::default(),
        };
        Msg::Event {
            watch: WatchRef {
                api: ApiserverId(0),
                id: WatchId(0),
            },
            change: Arc::new(change),
            live: true,
        }
    }

    /// Sieve's unobserved-state injection: a hold keeps events (of any object) and bookmarks in
    /// order until a later state of its object than the next one arrives; it hands back what it
    /// does not keep, and its timeout is its own generation's.
    #[test]
    fn a_hold_keeps_notifications_until_a_later_state_of_its_object() {
        let mut l = link();
        let (w, s) = (WatcherId(0), Session(1));
        let held = Object::fixture(KindId(0), NameId(1), 1, 5);
        let other = Object::fixture(KindId(0), NameId(2), 2, 6);
        assert!(
            l.buffer_held(0, w, s, event(held.clone())).is_err(),
            "no hold armed"
        );
        let generation = l.arm_hold(KindId(0), NameId(1));
        assert!(l.holding() && l.hold_timed_out(generation));
        assert!(matches!(
            l.buffer_held(1, w, s, event(held.clone())),
            Ok(false)
        ));
        assert!(matches!(l.buffer_held(2, w, s, event(other)), Ok(false)));
        let bookmark = Msg::Bookmark { rv: 6 };
        assert!(matches!(l.buffer_held(3, w, s, bookmark), Ok(false)));
        let end = Msg::WatchEnd(WatchEnd::Timeout);
        assert!(
            matches!(l.buffer_held(4, w, s, end), Err(Msg::WatchEnd(_))),
            "a stream's end is not kept"
        );
        let later = l.buffer_held(5, w, s, event(held.clone()));
        assert!(matches!(later, Ok(true)), "the later state");
        let causes: Vec<EventId> = l.release_hold().unwrap().iter().map(|h| h.0).collect();
        assert_eq!(causes, [1, 2, 3, 5]);
        assert!(!l.holding() && l.release_hold().is_none());
        let again = l.arm_hold(KindId(0), NameId(1));
        assert!(!l.hold_timed_out(generation) && l.hold_timed_out(again));
    }

    // ----- the engine's side -----

    fn ended(sim: &Sim, from: usize, why: WatchEnd) -> usize {
        let events = events_from(sim, from).into_iter();
        let ends = |k: &EventKind| matches!(k, EventKind::Reflector(ReflectorEvent::WatchEnded { reason, .. }) if *reason == why);
        events.filter(|(_, _, k)| ends(k)).count()
    }

    /// A disconnect cuts the controller off until its end (a shorter one meanwhile does not
    /// shorten it) and breaks its watches at once; its reconnect ends it.
    #[test]
    fn a_disconnect_cuts_the_controller_off_and_breaks_its_watches() {
        let mut sim = watching();
        let open = |sim: &Sim| {
            let watches = sim.reflectors.iter().filter_map(|r| r.watch);
            watches.map(|w| sim.watch_at(w).open).collect::<Vec<_>>()
        };
        assert_eq!(open(&sim), [true, true]);
        let from = sim.sink.trace.len();
        let cut = |ms| {
            Input::Fault(FaultInput::Disconnect {
                controller: C,
                duration_ms: DurationMs(ms),
                after_writes: None,
            })
        };
        sim.handle_input(cut(5000));
        assert_eq!(ended(&sim, from, WatchEnd::Disconnected), 2);
        assert!(!sim.connected(C));
        sim.handle_input(cut(1000));
        sim.handle_timeout(TimeMs(5999));
        assert!(!sim.connected(C), "the shorter disconnect's end is stale");
        sim.handle_timeout(TimeMs(6000));
        assert!(sim.connected(C));
        let reconnect = EventKind::Fault(FaultEvent::Reconnect { controller: C });
        let reconnects = events_from(&sim, from)
            .into_iter()
            .filter(|e| e.2 == reconnect)
            .map(|e| e.0)
            .collect::<Vec<_>>();
        assert_eq!(reconnects, [TimeMs(6000)]);
    }

    /// A failover moves the controller's connections and breaks its watches; a delay slows its
    /// link from now on.
    #[test]
    fn a_failover_moves_the_connections_and_a_delay_slows_the_link() {
        let mut sim = watching();
        let from = sim.sink.trace.len();
        let failover = Input::Fault(FaultInput::Failover {
            controller: C,
            apiserver: ApiserverId(1),
        });
        sim.handle_input(failover);
        assert_eq!(sim.links[0].apiserver(), ApiserverId(1));
        assert_eq!(ended(&sim, from, WatchEnd::Disconnected), 2);
        let delay = Input::Fault(FaultInput::Delay {
            controller: C,
            delay_ms: DurationMs(250),
        });
        sim.handle_input(delay);
        assert_eq!(sim.links[0].delay_ms(), DurationMs(250));
        let delayed = EventKind::Fault(FaultEvent::LinkDelay {
            controller: C,
            delay_ms: DurationMs(250),
        });
        assert_eq!(sim.sink.trace.last().unwrap().kind, delayed);
    }

    /// A controller that starts late (its reflectors keep their first session meanwhile) and a
    /// hold on Pod `a` armed at 0 for `for_ms`.
    fn held(for_ms: u64) -> Sim {
        let mut config = mirrors(1);
        config.controllers[0].start_ms = TimeMs(50_000);
        let mut sim = Sim::new(config).unwrap();
        let hold = Input::Fault(FaultInput::Hold {
            controller: C,
            kind: KindId(0),
            name: "a".into(),
            for_ms: DurationMs(for_ms),
        });
        sim.handle_input(hold);
        sim
    }

    fn held_event(sim: &mut Sim, name: &str, rv: Rv) -> Msg {
        let name = sim.names.intern_qualified(name);
        let change = Change {
            event: EventType::Modified,
            object: Arc::new(Object::fixture(KindId(0), name, 1, rv)),
            time_ms: TimeMs::ZERO,
            prev: Default::default(),
        };
        let watch = WatchRef {
            api: ApiserverId(0),
            id: WatchId(0),
        };
        let live = false;
        Msg::Event {
            watch,
            change: Arc::new(change),
            live,
        }
    }

    fn deliver(sim: &mut Sim, msg: Msg) {
        sim.deliver(WatcherId(0), Session(0), msg, 0);
    }

    /// What the controller's side recorded from `from` on: releases, and the notifications
    /// that reached the reflector (by RV), with their moments and causes.
    fn seen(sim: &Sim, from: usize) -> Vec<(TimeMs, EventId, String)> {
        let text = |k: EventKind| match k {
            EventKind::Fault(FaultEvent::HoldReleased {
                held, superseded, ..
            }) => Some(format!("released {held} superseded {superseded}")),
            EventKind::Reflector(ReflectorEvent::WatchEvent { rv, .. }) => {
                Some(format!("event {rv}"))
            }
            EventKind::Reflector(ReflectorEvent::Bookmark { rv, .. }) => {
                Some(format!("bookmark {rv}"))
            }
            EventKind::Reflector(ReflectorEvent::WatchEnded { .. }) => Some("ended".into()),
            _ => None,
        };
        let events = events_from(sim, from).into_iter();
        events
            .filter_map(|(at, cause, k)| text(k).map(|t| (at, cause, t)))
            .collect()
    }

    /// Sieve's unobserved-state injection (semantics.md §8c): events of every object and
    /// bookmarks wait on the link, in order, until a later state of the held object than the
    /// next one arrives; then all of them reach the reflector together, none lost.
    #[test]
    fn a_hold_buffers_notifications_until_a_later_state_arrives() {
        let mut sim = held(10_000);
        for msg in [held_event(&mut sim, "a", 2), Msg::Bookmark { rv: 2 }] {
            deliver(&mut sim, msg);
        }
        let b = held_event(&mut sim, "b", 3);
        deliver(&mut sim, b);
        assert!(
            seen(&sim, 0).is_empty(),
            "nothing reaches the reflector yet"
        );
        let later = held_event(&mut sim, "a", 4);
        deliver(&mut sim, later);
        let released = sim.sink.trace.len() - 5;
        let at = |t: &str| (TimeMs::ZERO, released as EventId, t.to_string());
        let expected = vec![
            (TimeMs::ZERO, 0, "released 4 superseded true".to_string()),
            at("event 2"),
            at("bookmark 2"),
            at("event 3"),
            at("event 4"),
        ];
        assert_eq!(seen(&sim, 0), expected);
        let after = held_event(&mut sim, "a", 5);
        deliver(&mut sim, after);
        assert_eq!(
            seen(&sim, 0).last().unwrap().2,
            "event 5",
            "no hold any more"
        );
    }

    /// A hold that no later state supersedes ends when its time is up; a stream's end does
    /// not wait: what was held goes before it.
    #[test]
    fn a_hold_releases_when_its_time_passes_or_the_stream_ends() {
        let mut sim = held(1000);
        let msg = held_event(&mut sim, "a", 2);
        deliver(&mut sim, msg);
        sim.handle_timeout(TimeMs(999));
        assert!(seen(&sim, 0).is_empty());
        sim.handle_timeout(TimeMs(1000));
        let released = seen(&sim, 0);
        assert_eq!(released[0].2, "released 1 superseded false");
        assert_eq!(
            (released[0].0, released[1].2.as_str()),
            (TimeMs(1000), "event 2")
        );

        let mut sim = held(1000);
        let msg = held_event(&mut sim, "a", 2);
        deliver(&mut sim, msg);
        deliver(&mut sim, Msg::WatchEnd(WatchEnd::Timeout));
        let order: Vec<String> = seen(&sim, 0).into_iter().map(|s| s.2).collect();
        assert_eq!(order, ["released 1 superseded false", "event 2", "ended"]);
    }

    /// A second hold releases the first, whose timeout is then stale.
    #[test]
    fn a_new_hold_makes_the_earlier_hold_s_timeout_stale() {
        let mut sim = held(1000);
        let again = Input::Fault(FaultInput::Hold {
            controller: C,
            kind: KindId(0),
            name: "a".into(),
            for_ms: DurationMs(1000),
        });
        assert!(sim.schedule_input(TimeMs(500), again));
        sim.handle_timeout(TimeMs(500));
        let msg = held_event(&mut sim, "a", 2);
        deliver(&mut sim, msg);
        sim.handle_timeout(TimeMs(1499));
        let releases: Vec<TimeMs> = seen(&sim, 0).iter().map(|s| s.0).collect();
        assert_eq!(
            releases,
            [TimeMs(500)],
            "only the first hold, by the second"
        );
        sim.handle_timeout(TimeMs(1500));
        let last = seen(&sim, 0);
        assert_eq!(last[1].0, TimeMs(1500));
        assert_eq!(last[1].2, "released 1 superseded false");
    }

    /// A crash drops what the link held for the process: the next life's notifications are not
    /// held.
    #[test]
    fn a_crash_drops_the_hold() {
        let mut config = mirrors(1);
        config.controllers[0].start_ms = TimeMs(0);
        let mut sim = Sim::new(config).unwrap();
        sim.handle_timeout(TimeMs(1000));
        let hold = Input::Fault(FaultInput::Hold {
            controller: C,
            kind: KindId(0),
            name: "a".into(),
            for_ms: DurationMs(10_000),
        });
        sim.handle_input(hold);
        assert!(sim.links[0].holding());
        let crash = Input::Fault(FaultInput::Crash {
            controller: C,
            after_writes: None,
            restart_after_ms: None,
        });
        sim.handle_input(crash);
        assert!(!sim.links[0].holding());
    }
}
