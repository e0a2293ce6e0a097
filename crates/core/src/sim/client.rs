//! The engine's side of the reflectors: it routes messages and timers to them (through a
//! controller's hold, when one is armed) and applies the effects they return.

use super::*;

impl Sim {
    /// Runs one step of a reflector and applies what it returns.
    pub(super) fn step_reflector(
        &mut self,
        w: WatcherId,
        step: impl FnOnce(&mut Reflector, &mut reflector::StepContext),
    ) {
        let outer = self.begin_step();
        let mut st = reflector::StepContext {
            watcher: w,
            now_ms: self.now_ms,
            config: &self.config,
            rng: &mut self.rng,
            out: &mut self.effects,
        };
        step(&mut self.reflectors[w.index()], &mut st);
        self.end_step(Actor::Watcher(w), outer);
    }

    /// The controller (re)starts this reflector: a fresh store, then the first list.
    pub(super) fn start_reflector(&mut self, w: WatcherId, cause: EventId) {
        self.step_reflector(w, |r, st| r.start(st, Cause::Event(cause)));
    }

    /// The controller crashed: the reflector stops with it.
    pub(super) fn stop_reflector(&mut self, w: WatcherId, cause: EventId) {
        self.step_reflector(w, |r, st| r.stop(st, Cause::Event(cause)));
    }

    /// A backoff is over.
    pub(super) fn wake(&mut self, w: WatcherId, session: Session, cause: EventId) {
        self.step_reflector(w, |r, st| r.wake(st, session, Cause::Event(cause)));
    }

    /// A message arrives at the client end of the link. A live event leaves the server's count
    /// of events in flight; a hold keeps notifications back until a later state arrives.
    pub(super) fn deliver(&mut self, w: WatcherId, session: Session, msg: Msg, cause: EventId) {
        if let Msg::Event {
            watch, live: true, ..
        } = &msg
        {
            self.watches[watch.index()].taken();
        }
        if self.reflectors[w.index()].session != session {
            return;
        }
        let c = self.controller_of(w);
        let ctl = &mut self.controllers[c.index()];
        if ctl.holding() {
            match ctl.buffer_held(cause, w, session, msg) {
                Ok(false) => return,
                Ok(true) => return self.release_hold(c, true, cause),
                // The stream ended or a request was answered: what came before goes first.
                Err(msg) => {
                    self.release_hold(c, false, cause);
                    return self.receive(w, session, msg, cause);
                }
            }
        }
        self.receive(w, session, msg, cause);
    }

    fn receive(&mut self, w: WatcherId, session: Session, msg: Msg, cause: EventId) {
        self.step_reflector(w, |r, st| r.receive(st, session, msg, Cause::Event(cause)));
    }

    /// Delivers the notifications a hold kept back, in the order they arrived.
    pub(super) fn release_hold(&mut self, c: ControllerId, superseded: bool, cause: EventId) {
        let Some(held) = self.controllers[c.index()].release_hold() else {
            return;
        };
        let released = EventKind::HoldReleased {
            controller: c,
            held: held.len() as u32,
            superseded,
        };
        let id = self.emit(Actor::Controller(c), cause, released);
        for (_, w, session, msg) in held {
            if self.reflectors[w.index()].session == session {
                self.receive(w, session, msg, id);
            }
        }
    }

    /// A hold's time is up, unless a later hold replaced it.
    pub(super) fn hold_timeout(&mut self, c: ControllerId, generation: Generation, cause: EventId) {
        if self.controllers[c.index()].hold_timed_out(generation) {
            self.release_hold(c, false, cause);
        }
    }

    /// The informer's resync timer, in the controller's current life: resync, then again after
    /// the period.
    pub(super) fn resync(&mut self, w: WatcherId, epoch: Epoch) {
        let c = self.controller_of(w);
        if !self.in_life(c, epoch) {
            return;
        }
        self.step_reflector(w, |r, st| r.resync(st));
        let period = controller::resync_period(self.config.controllers[c.index()].resync_ms);
        self.schedule(
            self.now_ms + period,
            NO_CAUSE,
            Action::Resync { watcher: w, epoch },
        );
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{events_from, mirrors};
    use super::*;

    /// A controller that starts late (its reflectors keep their first session meanwhile) and a
    /// hold on Pod `a` armed at 0 for `for_ms`.
    fn held(for_ms: u64) -> Sim {
        let mut config = mirrors(1);
        config.controllers[0].start_ms = TimeMs(50_000);
        let mut sim = Sim::new(config).unwrap();
        let hold = Input::Hold {
            controller: ControllerId(0),
            kind: KindId(0),
            name: "a".into(),
            for_ms: DurationMs(for_ms),
        };
        sim.handle_input(hold);
        sim
    }

    fn event(sim: &mut Sim, name: &str, rv: Rv) -> Msg {
        let name = sim.names.intern_qualified(name);
        let change = Change {
            event: EventType::Modified,
            object: Object::fixture(KindId(0), name, 1, rv),
            time_ms: TimeMs::ZERO,
        };
        let (watch, live) = (WatchId(0), false);
        Msg::Event {
            watch,
            change,
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
            EventKind::HoldReleased {
                held, superseded, ..
            } => Some(format!("released {held} superseded {superseded}")),
            EventKind::WatchEvent { rv, .. } => Some(format!("event {rv}")),
            EventKind::Bookmark { rv, .. } => Some(format!("bookmark {rv}")),
            EventKind::WatchEnded { .. } => Some("ended".into()),
            _ => None,
        };
        let events = events_from(sim, from).into_iter();
        events
            .filter_map(|(at, cause, k)| text(k).map(|t| (at, cause, t)))
            .collect()
    }

    /// Sieve's unobserved-state injection (semantics.md §8c): events of every object and
    /// bookmarks wait at the controller, in order, until a later state of the held object than
    /// the next one arrives; then all of them reach the reflector together, none lost.
    #[test]
    fn a_hold_buffers_notifications_until_a_later_state_arrives() {
        let mut sim = held(10_000);
        for msg in [event(&mut sim, "a", 2), Msg::Bookmark { rv: 2 }] {
            deliver(&mut sim, msg);
        }
        let b = event(&mut sim, "b", 3);
        deliver(&mut sim, b);
        assert!(
            seen(&sim, 0).is_empty(),
            "nothing reaches the reflector yet"
        );
        let later = event(&mut sim, "a", 4);
        deliver(&mut sim, later);
        let released = sim.trace.len() - 5;
        let at = |t: &str| (TimeMs::ZERO, released as EventId, t.to_string());
        let expected = vec![
            (TimeMs::ZERO, 0, "released 4 superseded true".to_string()),
            at("event 2"),
            at("bookmark 2"),
            at("event 3"),
            at("event 4"),
        ];
        assert_eq!(seen(&sim, 0), expected);
        let after = event(&mut sim, "a", 5);
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
        let msg = event(&mut sim, "a", 2);
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
        let msg = event(&mut sim, "a", 2);
        deliver(&mut sim, msg);
        deliver(&mut sim, Msg::WatchEnd(WatchEnd::Timeout));
        let order: Vec<String> = seen(&sim, 0).into_iter().map(|s| s.2).collect();
        assert_eq!(order, ["released 1 superseded false", "event 2", "ended"]);
    }

    /// A second hold releases the first, whose timeout is then stale.
    #[test]
    fn a_new_hold_makes_the_earlier_hold_s_timeout_stale() {
        let mut sim = held(1000);
        let again = Input::Hold {
            controller: ControllerId(0),
            kind: KindId(0),
            name: "a".into(),
            for_ms: DurationMs(1000),
        };
        assert!(sim.schedule_input(TimeMs(500), again));
        sim.handle_timeout(TimeMs(500));
        let msg = event(&mut sim, "a", 2);
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
}
