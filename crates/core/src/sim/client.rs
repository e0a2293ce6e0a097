//! The engine's side of the reflectors: it routes messages and timers to them (a message that
//! arrives while its link holds notifications goes to the link first, `link.rs`) and runs what
//! they post.

use super::*;

impl Sim {
    /// Runs one step of a reflector, then what it posted.
    pub(super) fn step_reflector(
        &mut self,
        w: WatcherId,
        step: impl FnOnce(&mut Reflector, &mut reflector::StepContext),
    ) {
        let from = self.outbox.len();
        let r = &mut self.reflectors[w.index()];
        let mut st = reflector::StepContext {
            watcher: w,
            now_ms: self.now_ms,
            config: &self.config,
            rng: &mut self.rng,
            out: Out::new(
                self.now_ms,
                Actor::Watcher(w),
                &mut self.sink,
                &mut self.outbox,
            ),
            queue: &mut self.controllers[r.controller.index()],
        };
        step(r, &mut st);
        self.run_outbox(from);
    }

    /// The controller (re)starts this reflector: a fresh store, then the first list.
    pub(super) fn start_reflector(&mut self, w: WatcherId, cause: EventId) {
        self.step_reflector(w, |r, st| r.start(st, cause));
    }

    /// The controller crashed: the reflector stops with it.
    pub(super) fn stop_reflector(&mut self, w: WatcherId, cause: EventId) {
        self.step_reflector(w, |r, st| r.stop(st, cause));
    }

    /// A backoff is over.
    pub(super) fn wake(&mut self, w: WatcherId, session: Session, cause: EventId) {
        self.step_reflector(w, |r, st| r.wake(st, session, cause));
    }

    /// A message arrives at the client end of the link. A live event leaves the server's count
    /// of events in flight; a hold on the link keeps notifications back until a later state
    /// arrives.
    pub(super) fn deliver(&mut self, w: WatcherId, session: Session, msg: Msg, cause: EventId) {
        if let Msg::Event {
            watch, live: true, ..
        } = &msg
        {
            self.watch_at_mut(*watch).taken();
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
        self.step_reflector(w, |r, st| r.receive(st, session, msg, cause));
    }

    /// The informer's resync timer, in the controller's current life and its reflector's current
    /// list-and-watch round: resync, then again after the period.
    pub(super) fn resync(&mut self, w: WatcherId, epoch: Epoch, round: u32) {
        let c = self.controller_of(w);
        if !self.in_life(c, epoch) || !self.reflectors[w.index()].resync_due(round) {
            return;
        }
        self.step_reflector(w, |r, st| r.resync(st));
        let period = controller::resync_period(self.config.controllers[c.index()].resync_ms);
        self.schedule(
            self.now_ms + period,
            NO_CAUSE,
            Action::Reflector(ReflectorAction::Resync {
                watcher: w,
                epoch,
                round,
            }),
        );
    }
}
