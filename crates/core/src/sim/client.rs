//! The engine's side of the reflectors: it routes messages and timers to them (a message that
//! arrives while its link holds notifications goes to the link first, `link.rs`) and applies the
//! effects they return.

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
    /// of events in flight; a hold on the link keeps notifications back until a later state
    /// arrives.
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
        if self.links[c.index()].holding() {
            return self.arrive_held(c, (w, session), msg, cause);
        }
        self.receive(w, session, msg, cause);
    }

    pub(super) fn receive(&mut self, w: WatcherId, session: Session, msg: Msg, cause: EventId) {
        self.step_reflector(w, |r, st| r.receive(st, session, msg, Cause::Event(cause)));
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
