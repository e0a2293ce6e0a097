//! What a component returns: it changes only its own state and asks the engine for the rest
//! (record an event, send a request or an answer, set a timer, notify its controller), as
//! str0m's and quinn-proto's parts do. The engine applies the effects in order, so the trace is the same as
//! if the component had done each thing itself.

use super::*;

/// What an effect was caused by: an event that exists already, or one this component emitted
/// earlier in the same step (that effect's index in the whole stacked buffer, not in the step's
/// own `Effects::list`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Cause {
    Event(EventId),
    Emitted(u32),
}

/// An action a step asks for, kept beside the effects (`Effects::action`): actions own
/// vectors, and effects stay `Copy`, so dropping a step's effects costs nothing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct ActionRef(u32);

/// A change kept beside the effects (`Effects::keep_change`): one change fans out to many
/// watches, and a change is too large to copy into each effect.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct ChangeRef(u32);

#[derive(Clone, Copy, Debug)]
pub(super) enum Effect {
    /// Record an event by the component's actor.
    Emit { cause: Cause, kind: EventKind },
    /// Record an event by another actor (an apiserver answering a probe: the probe's event).
    EmitBy {
        actor: Actor,
        cause: Cause,
        kind: EventKind,
    },
    /// Send a request over the controller's link to its apiserver.
    ToServer { cause: Cause, action: ActionRef },
    /// Send a message (an `Action::Deliver`) over the watcher's link to it.
    ToClient {
        cause: Cause,
        watcher: WatcherId,
        action: ActionRef,
    },
    /// Hand a message (an `Action::Deliver`) to its watcher at once: the client sees its own
    /// broken connection without the link's delay.
    DeliverNow { cause: Cause, action: ActionRef },
    /// Send one change (kept beside) to a watch's client over its link (`Msg::Event`).
    WatchEvent {
        cause: Cause,
        watch: WatchId,
        change: ChangeRef,
        live: bool,
    },
    /// Run an action at a later moment.
    Timer {
        at_ms: TimeMs,
        cause: Cause,
        action: ActionRef,
    },
    /// Run an action once what is due now has run (a worker taking the next key).
    Soon { cause: Cause, action: ActionRef },
    /// Add a key to the controller's work queue (an informer's event handler).
    Enqueue {
        cause: Cause,
        key: NameId,
        low_priority: bool,
    },
    /// Send a reconcile's write to etcd; the result goes back to the worker (`written`) with
    /// `then` as the cause of what it does next.
    Write {
        cause: Cause,
        worker: u32,
        write: Write,
        then: Cause,
    },
    /// The controller's process dies (an armed crash point was reached).
    Crash { cause: Cause },
    /// One of the controller's informers starts from scratch (its process started).
    StartInformer { cause: Cause, watcher: WatcherId },
    /// One of the controller's informers stops (its process died).
    StopInformer { cause: Cause, watcher: WatcherId },
    /// A worker's reconcile started with this event: its later writes and its end name it.
    Started { worker: u32, event: Cause },
    /// An event the engine has recorded: its id, which later effects of the same step name by
    /// `Cause::Emitted`.
    Applied(EventId),
}

/// The effects of a step, in order. The engine keeps one of these for every step: a step's
/// effects go on top of the list, and a step that runs while an earlier step's effects are
/// applied (a handler's key enqueued at the controller) stacks its own above them, so a step
/// allocates nothing once the list has grown.
#[derive(Clone, Debug, Default)]
pub(super) struct Effects {
    list: Vec<Effect>,
    actions: Vec<Option<Action>>,
    changes: Vec<Change>,
    /// Where the current step's effects begin.
    base: Mark,
}

/// Where a step's effects and actions begin.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Mark {
    effects: usize,
    actions: usize,
    changes: usize,
}

impl Effects {
    /// The current step's effects.
    #[cfg(test)]
    pub fn list(&self) -> &[Effect] {
        &self.list[self.base.effects..]
    }

    /// The action an effect carries (until the engine has applied it).
    #[cfg(test)]
    pub fn action(&self, action: ActionRef) -> &Action {
        self.actions[action.0 as usize]
            .as_ref()
            .expect("an action not applied yet")
    }

    fn keep(&mut self, action: Action) -> ActionRef {
        self.actions.push(Some(action));
        ActionRef((self.actions.len() - 1) as u32)
    }

    /// Records an event; later effects name it by the returned cause.
    pub fn emit(&mut self, cause: Cause, kind: EventKind) -> Cause {
        self.list.push(Effect::Emit { cause, kind });
        Cause::Emitted((self.list.len() - 1) as u32)
    }

    /// Records an event by `actor`; later effects name it by the returned cause.
    pub fn emit_by(&mut self, actor: Actor, cause: Cause, kind: EventKind) -> Cause {
        self.list.push(Effect::EmitBy { actor, cause, kind });
        Cause::Emitted((self.list.len() - 1) as u32)
    }

    /// Sends a message to a watcher over its link.
    pub fn send_to_client(&mut self, cause: Cause, watcher: WatcherId, session: Session, msg: Msg) {
        let deliver = Action::Deliver {
            watcher,
            session,
            msg,
        };
        let action = self.keep(deliver);
        self.list.push(Effect::ToClient {
            cause,
            watcher,
            action,
        });
    }

    /// Hands a message to a watcher at once.
    pub fn deliver_now(&mut self, cause: Cause, watcher: WatcherId, session: Session, msg: Msg) {
        let deliver = Action::Deliver {
            watcher,
            session,
            msg,
        };
        let action = self.keep(deliver);
        self.list.push(Effect::DeliverNow { cause, action });
    }

    /// Keeps a change for `watch_event`s to name.
    pub fn keep_change(&mut self, change: Change) -> ChangeRef {
        self.changes.push(change);
        ChangeRef((self.changes.len() - 1) as u32)
    }

    /// The change a `ChangeRef` names.
    pub fn change(&self, change: ChangeRef) -> &Change {
        &self.changes[change.0 as usize]
    }

    /// Sends a kept change to a watch's client.
    pub fn watch_event(&mut self, cause: Cause, watch: WatchId, change: ChangeRef, live: bool) {
        self.list.push(Effect::WatchEvent {
            cause,
            watch,
            change,
            live,
        });
    }

    pub fn send(&mut self, cause: Cause, action: Action) {
        let action = self.keep(action);
        self.list.push(Effect::ToServer { cause, action });
    }

    pub fn timer(&mut self, at_ms: TimeMs, cause: Cause, action: Action) {
        let action = self.keep(action);
        self.list.push(Effect::Timer {
            at_ms,
            cause,
            action,
        });
    }

    pub fn enqueue(&mut self, cause: Cause, key: NameId, low_priority: bool) {
        self.list.push(Effect::Enqueue {
            cause,
            key,
            low_priority,
        });
    }

    pub fn soon(&mut self, cause: Cause, action: Action) {
        let action = self.keep(action);
        self.list.push(Effect::Soon { cause, action });
    }

    pub fn write(&mut self, cause: Cause, worker: u32, write: Write, then: Cause) {
        self.list.push(Effect::Write {
            cause,
            worker,
            write,
            then,
        });
    }

    pub fn crash(&mut self, cause: Cause) {
        self.list.push(Effect::Crash { cause });
    }

    pub fn start_informer(&mut self, cause: Cause, watcher: WatcherId) {
        self.list.push(Effect::StartInformer { cause, watcher });
    }

    pub fn stop_informer(&mut self, cause: Cause, watcher: WatcherId) {
        self.list.push(Effect::StopInformer { cause, watcher });
    }

    pub fn started(&mut self, worker: u32, event: Cause) {
        self.list.push(Effect::Started { worker, event });
    }

    /// The events emitted so far, in order (for tests and for reading a step's outcome).
    #[cfg(test)]
    pub fn events(&self) -> Vec<&EventKind> {
        self.list()
            .iter()
            .filter_map(|e| match e {
                Effect::Emit { kind, .. } | Effect::EmitBy { kind, .. } => Some(kind),
                _ => None,
            })
            .collect()
    }
}

impl Effects {
    /// A new step begins: its effects go above what is there. Returns the outer step's mark.
    fn begin(&mut self) -> Mark {
        let here = Mark {
            effects: self.list.len(),
            actions: self.actions.len(),
            changes: self.changes.len(),
        };
        std::mem::replace(&mut self.base, here)
    }

    /// Moves an action out, to be applied.
    fn take(&mut self, action: ActionRef) -> Action {
        self.actions[action.0 as usize]
            .take()
            .expect("each action is applied once")
    }
}

impl Sim {
    /// Starts a step: the returned value goes to `end_step`.
    pub(super) fn begin_step(&mut self) -> Mark {
        self.effects.begin()
    }

    /// Applies the current step's effects in order, as `actor`, then drops them: a watcher's
    /// requests go over its controller's link, its handlers' keys to its controller's queue; a
    /// controller's writes go to etcd and their results back to the worker; an apiserver's
    /// answers and watch events go over the link to their watcher.
    pub(super) fn end_step(&mut self, actor: Actor, outer: Mark) {
        self.apply_step(actor);
        self.drop_step(outer);
    }

    /// `end_step`, and the id of the event `cause` names (one the step emitted).
    pub(super) fn end_step_naming(&mut self, actor: Actor, outer: Mark, cause: Cause) -> EventId {
        self.apply_step(actor);
        let id = self.resolve(cause);
        self.drop_step(outer);
        id
    }

    #[inline]
    fn apply_step(&mut self, actor: Actor) {
        let (start, end) = (self.effects.base, self.effects.list.len());
        for i in start.effects..end {
            // Matched in place, copying out only the fields an arm uses; effects that carry an
            // action move it out of `actions`.
            match self.effects.list[i] {
                Effect::Emit { cause, kind } => {
                    let cause = self.resolve(cause);
                    let id = self.emit(actor, cause, kind);
                    self.effects.list[i] = Effect::Applied(id);
                }
                Effect::EmitBy { actor, cause, kind } => {
                    let cause = self.resolve(cause);
                    let id = self.emit(actor, cause, kind);
                    self.effects.list[i] = Effect::Applied(id);
                }
                Effect::Enqueue {
                    cause,
                    key,
                    low_priority,
                } => {
                    let c = self.actor_controller(actor);
                    self.enqueue(c, key, self.resolve(cause), low_priority);
                }
                _ => self.apply_effect(actor, i),
            }
        }
    }

    #[inline]
    fn drop_step(&mut self, outer: Mark) {
        let start = self.effects.base;
        self.effects.list.truncate(start.effects);
        self.effects.actions.truncate(start.actions);
        self.effects.changes.truncate(start.changes);
        self.effects.base = outer;
    }

    fn deliver_now(&mut self, cause: Cause, action: ActionRef) {
        let Action::Deliver {
            watcher,
            session,
            msg,
        } = self.effects.take(action)
        else {
            unreachable!("a message for a watcher")
        };
        self.deliver(watcher, session, msg, self.resolve(cause))
    }

    fn send_watch_event(&mut self, cause: EventId, watch: WatchId, change: ChangeRef, live: bool) {
        let w = &self.watches[watch.index()];
        let (watcher, session) = (w.watcher, w.session);
        let change = *self.effects.change(change);
        let msg = Msg::Event {
            watch,
            change,
            live,
        };
        self.send_to_client(watcher, session, cause, msg);
    }

    /// The event id a cause names.
    fn resolve(&self, cause: Cause) -> EventId {
        match cause {
            Cause::Event(id) => id,
            Cause::Emitted(i) => match self.effects.list[i as usize] {
                Effect::Applied(id) => id,
                _ => unreachable!("a cause names an event applied before it"),
            },
        }
    }

    /// The effect at `index`, one that carries an action, a write or a change of life.
    fn apply_effect(&mut self, actor: Actor, index: usize) {
        match self.effects.list[index] {
            Effect::ToClient {
                cause,
                watcher,
                action,
            } => {
                let action = self.effects.take(action);
                self.send_on_link(watcher, Toward::Client, self.resolve(cause), action)
            }
            Effect::WatchEvent {
                cause,
                watch,
                change,
                live,
            } => self.send_watch_event(self.resolve(cause), watch, change, live),
            Effect::DeliverNow { cause, action } => self.deliver_now(cause, action),
            Effect::ToServer { cause, action } => {
                let Actor::Watcher(w) = actor else {
                    unreachable!("only a watcher sends requests")
                };
                let action = self.effects.take(action);
                self.send_to_server(w, self.resolve(cause), action)
            }
            Effect::Timer {
                at_ms,
                cause,
                action,
            } => {
                let action = self.effects.take(action);
                self.schedule(at_ms, self.resolve(cause), action)
            }
            Effect::Soon { cause, action } => {
                let action = self.effects.take(action);
                self.ready.push_back((self.resolve(cause), action))
            }
            Effect::Write {
                cause,
                worker,
                write,
                then,
            } => {
                let c = self.actor_controller(actor);
                let (cause, then) = (self.resolve(cause), self.resolve(then));
                self.reconcile_write(c, worker, write, cause, then)
            }
            Effect::Crash { cause } => {
                let c = self.actor_controller(actor);
                self.crash(c, self.resolve(cause))
            }
            Effect::StartInformer { cause, watcher } => {
                self.start_reflector(watcher, self.resolve(cause))
            }
            Effect::StopInformer { cause, watcher } => {
                self.stop_informer(watcher, self.resolve(cause))
            }
            Effect::Started { worker, event } => {
                let (c, id) = (self.actor_controller(actor), self.resolve(event));
                self.controllers[c.index()].record_start(worker, id)
            }
            Effect::Emit { .. }
            | Effect::EmitBy { .. }
            | Effect::Enqueue { .. }
            | Effect::Applied(_) => {
                unreachable!("applied in place by `end_step`")
            }
        }
    }

    /// The controller an actor belongs to (a watcher's is the controller it informs).
    fn actor_controller(&self, actor: Actor) -> ControllerId {
        match actor {
            Actor::Controller(c) => c,
            Actor::Watcher(w) => self.controller_of(w),
            _ => unreachable!("only controllers and their watchers step"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::mirrors;
    use super::*;

    fn compacted(rev: Rv) -> EventKind {
        EventKind::Compacted { rev }
    }

    /// The causes and kinds the trace holds from `from` on.
    fn recorded(sim: &Sim, from: usize) -> Vec<(EventId, EventKind)> {
        sim.trace
            .iter()
            .skip(from)
            .map(|e| (e.cause, e.kind))
            .collect()
    }

    /// A step's effects apply in the order it returned them, as its actor; a later effect that
    /// names an event emitted earlier in the step (`Cause::Emitted`) gets that event's id.
    #[test]
    fn effects_apply_in_order_and_name_the_events_emitted_before_them() {
        let mut sim = Sim::new(mirrors(0)).unwrap();
        sim.emit(Actor::User, NO_CAUSE, compacted(1));
        let outer = sim.begin_step();
        let first = sim.effects.emit(Cause::Event(0), compacted(2));
        let second = sim.effects.emit(first, compacted(3));
        sim.effects.timer(TimeMs(500), second, Action::CompactTick);
        sim.effects.emit(first, compacted(4));
        sim.end_step(Actor::Etcd, outer);
        let expected = [
            (NO_CAUSE, compacted(1)),
            (0, compacted(2)),
            (1, compacted(3)),
            (1, compacted(4)),
        ];
        assert_eq!(format!("{:?}", recorded(&sim, 0)), format!("{expected:?}"));
        assert!(sim.trace.iter().skip(1).all(|e| e.actor == Actor::Etcd));
        let timer = sim.timers.pop_due(TimeMs(500));
        assert!(
            matches!(timer, Some((TimeMs(500), 2, Action::CompactTick))),
            "the timer names the event applied before it: {timer:?}"
        );
        assert!(sim.effects.list.is_empty() && sim.effects.actions.is_empty());
    }

    /// A step that runs while an earlier step's effects are applied stacks its effects above
    /// them: it applies only its own, and the earlier step's later effects still name the
    /// events emitted before it by their place in the whole buffer.
    #[test]
    fn a_step_run_while_another_applies_stacks_above_it() {
        let mut sim = Sim::new(mirrors(0)).unwrap();
        let outer = sim.begin_step();
        let x = sim.effects.emit(Cause::Event(NO_CAUSE), compacted(1));
        let inner = sim.begin_step();
        let y = sim.effects.emit(Cause::Event(NO_CAUSE), compacted(2));
        assert_eq!((x, y), (Cause::Emitted(0), Cause::Emitted(1)));
        assert_eq!(
            sim.effects.list().len(),
            1,
            "a step sees only its own effects"
        );
        sim.end_step(Actor::Etcd, inner);
        let only_inner = [(NO_CAUSE, compacted(2))];
        assert_eq!(
            format!("{:?}", recorded(&sim, 0)),
            format!("{only_inner:?}")
        );
        assert_eq!(
            sim.effects.list().len(),
            1,
            "the outer step's effect is still there"
        );
        sim.effects.emit(x, compacted(3));
        sim.end_step(Actor::Etcd, outer);
        let expected = [
            (NO_CAUSE, compacted(2)),
            (NO_CAUSE, compacted(1)),
            (1, compacted(3)),
        ];
        assert_eq!(format!("{:?}", recorded(&sim, 0)), format!("{expected:?}"));
        assert!(sim.effects.list.is_empty());
    }

    /// The real nesting: a reflector's handler enqueues a key, which runs a step of its
    /// controller in the middle of the reflector's effects; the reflector's effects after it
    /// still apply, naming the reflector's own earlier event.
    #[test]
    fn a_handler_s_enqueue_runs_the_controller_s_step_between_the_reflector_s_effects() {
        let mut sim = Sim::new(mirrors(1)).unwrap();
        sim.controllers[0].up = true;
        let key = NameId(7);
        let outer = sim.begin_step();
        let seen = sim.effects.emit(Cause::Event(NO_CAUSE), compacted(1));
        sim.effects.enqueue(seen, key, false);
        sim.effects.emit(seen, compacted(2));
        sim.end_step(Actor::Watcher(WatcherId(0)), outer);
        let enqueued = EventKind::Enqueue {
            controller: ControllerId(0),
            key,
            outcome: QueueAdd::Added,
            delay_ms: DurationMs::ZERO,
        };
        let expected = [(NO_CAUSE, compacted(1)), (0, enqueued), (0, compacted(2))];
        assert_eq!(format!("{:?}", recorded(&sim, 0)), format!("{expected:?}"));
        let actors: Vec<Actor> = sim.trace.iter().map(|e| e.actor).collect();
        let (w, c) = (
            Actor::Watcher(WatcherId(0)),
            Actor::Controller(ControllerId(0)),
        );
        assert_eq!(actors, [w, c, w]);
        assert!(
            matches!(sim.ready.front(), Some((1, Action::Work { worker: 0, .. }))),
            "the controller's own effect (wake a worker) applied too"
        );
        assert!(sim.effects.list.is_empty());
    }
}
