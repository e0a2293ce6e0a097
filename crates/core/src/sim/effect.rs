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
    /// Add a key to the controller's work queue (an informer's event handler).
    Enqueue {
        cause: Cause,
        key: NameId,
        low_priority: bool,
    },
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
    /// Applies a watcher's effects in order: its events, its requests over its controller's
    /// link, its timers and its handlers' keys for its controller's queue.
    pub(super) fn apply_watcher_effects(&mut self, w: WatcherId, effects: &mut Effects) {
        let c = self.controller_of(w);
        let mut ids = std::mem::take(&mut self.emitted_ids);
        ids.clear();
        let resolve = |ids: &[EventId], cause| match cause {
            Cause::Event(id) => id,
            Cause::Emitted(i) => ids[i],
        };
        for effect in effects.0.drain(..) {
            let id = match effect {
                Effect::Emit { cause, kind } => {
                    let cause = resolve(&ids, cause);
                    self.emit(Actor::Watcher(w), cause, kind)
                }
                Effect::ToServer { cause, action } => {
                    self.send_to_server(w, resolve(&ids, cause), action);
                    NO_CAUSE
                }
                Effect::Timer {
                    at_ms,
                    cause,
                    action,
                } => {
                    self.schedule(at_ms, resolve(&ids, cause), action);
                    NO_CAUSE
                }
                Effect::Enqueue {
                    cause,
                    key,
                    low_priority,
                } => {
                    self.enqueue(c, key, resolve(&ids, cause), low_priority);
                    NO_CAUSE
                }
            };
            ids.push(id);
        }
        self.emitted_ids = ids;
    }
}
