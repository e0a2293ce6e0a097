//! What a component returns: it changes only its own state and asks the engine for the rest
//! (record an event, send a request, set a timer, notify its controller), as str0m's and
//! quinn-proto's parts do. The engine applies the effects in order, so the trace is the same as
//! if the component had done each thing itself.

use super::*;

/// What an effect was caused by: an event that exists already, or one this component emitted
/// earlier in the same step (its index in the step's effects).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Cause {
    Event(EventId),
    Emitted(usize),
}

#[derive(Clone, Debug)]
pub(super) enum Effect {
    /// Record an event by the component's actor.
    Emit { cause: Cause, kind: EventKind },
    /// Send a request over the controller's link to its apiserver.
    ToServer { cause: Cause, action: Action },
    /// Run an action at a later moment.
    Timer {
        at_ms: TimeMs,
        cause: Cause,
        action: Action,
    },
    /// Run an action once what is due now has run (a worker taking the next key).
    Soon { cause: Cause, action: Action },
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
}

/// The effects of one step, in order.
#[derive(Clone, Debug, Default)]
pub(super) struct Effects(pub(super) Vec<Effect>);

impl Effects {
    /// Records an event; later effects name it by the returned cause.
    pub fn emit(&mut self, cause: Cause, kind: EventKind) -> Cause {
        self.0.push(Effect::Emit { cause, kind });
        Cause::Emitted(self.0.len() - 1)
    }

    pub fn send(&mut self, cause: Cause, action: Action) {
        self.0.push(Effect::ToServer { cause, action });
    }

    pub fn timer(&mut self, at_ms: TimeMs, cause: Cause, action: Action) {
        self.0.push(Effect::Timer {
            at_ms,
            cause,
            action,
        });
    }

    pub fn enqueue(&mut self, cause: Cause, key: NameId, low_priority: bool) {
        self.0.push(Effect::Enqueue {
            cause,
            key,
            low_priority,
        });
    }

    pub fn soon(&mut self, cause: Cause, action: Action) {
        self.0.push(Effect::Soon { cause, action });
    }

    pub fn write(&mut self, cause: Cause, worker: u32, write: Write, then: Cause) {
        self.0.push(Effect::Write {
            cause,
            worker,
            write,
            then,
        });
    }

    pub fn crash(&mut self, cause: Cause) {
        self.0.push(Effect::Crash { cause });
    }

    pub fn start_informer(&mut self, cause: Cause, watcher: WatcherId) {
        self.0.push(Effect::StartInformer { cause, watcher });
    }

    pub fn stop_informer(&mut self, cause: Cause, watcher: WatcherId) {
        self.0.push(Effect::StopInformer { cause, watcher });
    }

    /// The events emitted so far, in order (for tests and for reading a step's outcome).
    #[cfg(test)]
    pub fn events(&self) -> Vec<&EventKind> {
        self.0
            .iter()
            .filter_map(|e| match e {
                Effect::Emit { kind, .. } => Some(kind),
                _ => None,
            })
            .collect()
    }
}

impl Sim {
    /// An empty effects list for a step, with the capacity earlier steps left.
    pub(super) fn scratch_effects(&mut self) -> Effects {
        self.effects_pool.pop().unwrap_or_default()
    }

    /// Applies a component's effects in order, as `actor`: a watcher's requests go over its
    /// controller's link, its handlers' keys to its controller's queue; a controller's writes
    /// go to etcd and their results back to the worker.
    pub(super) fn apply_effects(&mut self, actor: Actor, effects: &mut Effects) {
        let mut ids = self.emitted_ids_pool.pop().unwrap_or_default();
        for effect in effects.0.drain(..) {
            let id = match effect {
                Effect::Emit { cause, kind } => {
                    let cause = resolve(&ids, cause);
                    self.emit(actor, cause, kind)
                }
                other => {
                    self.apply_effect(actor, other, &ids);
                    NO_CAUSE
                }
            };
            ids.push(id);
        }
        ids.clear();
        self.emitted_ids_pool.push(ids);
    }

    /// One effect that is not an event.
    fn apply_effect(&mut self, actor: Actor, effect: Effect, ids: &[EventId]) {
        match effect {
            Effect::Emit { .. } => unreachable!("events are applied by `apply_effects`"),
            Effect::ToServer { cause, action } => {
                let Actor::Watcher(w) = actor else {
                    unreachable!("only a watcher sends requests")
                };
                self.send_to_server(w, resolve(ids, cause), action)
            }
            Effect::Timer {
                at_ms,
                cause,
                action,
            } => self.schedule(at_ms, resolve(ids, cause), action),
            Effect::Soon { cause, action } => self.ready.push_back((resolve(ids, cause), action)),
            Effect::Enqueue {
                cause,
                key,
                low_priority,
            } => {
                let c = self.actor_controller(actor);
                self.enqueue(c, key, resolve(ids, cause), low_priority)
            }
            Effect::Write {
                cause,
                worker,
                write,
                then,
            } => {
                let c = self.actor_controller(actor);
                self.reconcile_write(c, worker, write, resolve(ids, cause), resolve(ids, then))
            }
            Effect::Crash { cause } => {
                let c = self.actor_controller(actor);
                self.crash(c, resolve(ids, cause))
            }
            Effect::StartInformer { cause, watcher } => {
                self.start_reflector(watcher, resolve(ids, cause))
            }
            Effect::StopInformer { cause, watcher } => {
                self.stop_informer(watcher, resolve(ids, cause))
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

/// The event id a cause names, given the ids of the events this step emitted so far.
fn resolve(ids: &[EventId], cause: Cause) -> EventId {
    match cause {
        Cause::Event(id) => id,
        Cause::Emitted(i) => ids[i],
    }
}
