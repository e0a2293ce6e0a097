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
