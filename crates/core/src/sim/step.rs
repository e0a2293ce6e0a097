//! What a step writes, as str0m's and quinn-proto's parts do: a component changes only its own
//! state, records its events in the run's `Sink` (each gets its real id at once, so later events
//! and actions name it directly) and posts what it asks of the rest of the system to the
//! `Outbox` (send over a link, set a timer, run soon, hand a call to the engine), which the engine
//! runs in order once the step returns.
//!
//! Why the order of the trace is the order of the effects a component doing each thing itself
//! would give:
//! - An informer's handler adds to its controller's queue *during* the reflector's step (as
//!   client-go's handler calls `queue.Add` in the informer's goroutine), so the `Enqueue` event
//!   sits between the reflector's events where it always did.
//! - What a post does, other than a call, is schedule work (`schedule`, the link's arrival, the
//!   FIFO of work due now): it emits nothing, and runs in the order posted, interleaved with
//!   what the calls among the posts schedule, as before.
//! - A call (a reconcile's write, a crash, an informer's start or stop, a message handed over at
//!   once) runs another component's step, whose events follow the step that posted it. No step
//!   emits an event after posting a call (debug builds check it when the call runs), so those
//!   events come after every event of the posting step either way.
//! - `schedule` reads the trace only to tell whether the run has begun (an empty trace), and
//!   every step that can run first emits before it posts.
//!
//! A post that runs a step runs that step's posts before the next post: the outbox is a stack of
//! the running steps' posts (`Sim::run_outbox`).

use super::*;

/// The run's record: its events in order, the cap on them, and why the run stopped.
#[derive(Clone, Debug)]
pub(super) struct Sink {
    pub(super) trace: Trace,
    max_events: u64,
    pub(super) stopped: Option<Stop>,
}

impl Sink {
    pub(super) fn new(max_events: u64) -> Sink {
        Sink {
            trace: Trace::new(),
            max_events,
            stopped: None,
        }
    }

    /// Records an event and returns its id. At the cap the run stops (`Stop::EventCap`), and
    /// what is emitted still gets an id: the last event's.
    #[inline]
    pub(super) fn emit(
        &mut self,
        time_ms: TimeMs,
        actor: Actor,
        cause: EventId,
        kind: EventKind,
    ) -> EventId {
        let id = self.trace.len() as EventId;
        if self.trace.len() as u64 >= self.max_events {
            self.stopped = Some(Stop::EventCap);
            return id.saturating_sub(1);
        }
        self.trace.push(Event {
            time_ms,
            actor,
            cause,
            kind,
        });
        id
    }
}

/// Something a step asks of the rest of the system, run once the step returns.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum Post {
    /// An action over the link of `watcher`'s controller, run when it arrives.
    Send {
        watcher: WatcherId,
        toward: Toward,
        cause: EventId,
        action: Action,
    },
    /// An action at a moment.
    Timer {
        at_ms: TimeMs,
        cause: EventId,
        action: Action,
    },
    /// An action once what is due now has run (a worker taking the next key).
    Soon { cause: EventId, action: Action },
    /// A step of another component, at once: its events follow the posting step's.
    Call {
        cause: EventId,
        call: Call,
        /// The trace's length when it was posted: no event of the posting step may follow it.
        #[cfg(debug_assertions)]
        emitted: usize,
    },
}

/// A step of another component that a step hands to the engine.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum Call {
    /// A reconcile's write goes to etcd; the result goes back to the worker (`written`), with
    /// `then` as the cause of what it does next.
    Write {
        controller: ControllerId,
        worker: u32,
        write: Write,
        then: EventId,
    },
    /// The controller's process dies (an armed crash point was reached).
    Crash { controller: ControllerId },
    /// One of the controller's informers starts from scratch (its process started).
    StartInformer { watcher: WatcherId },
    /// One of the controller's informers stops (its process died).
    StopInformer { watcher: WatcherId },
    /// A message handed to its watcher at once: the client sees its own broken connection
    /// without the link's delay.
    Deliver {
        watcher: WatcherId,
        session: Session,
        msg: Msg,
    },
}

/// The posts of the running steps, innermost last.
#[derive(Clone, Debug, Default)]
pub(super) struct Outbox(Vec<Option<Post>>);

impl Outbox {
    /// Where the next step's posts begin.
    pub(super) fn len(&self) -> usize {
        self.0.len()
    }

    fn push(&mut self, post: Post) {
        self.0.push(Some(post));
    }
}

/// Where a step writes: its events (as `actor`, at `now_ms`) and its posts.
pub(super) struct Out<'a> {
    now_ms: TimeMs,
    actor: Actor,
    sink: &'a mut Sink,
    outbox: &'a mut Outbox,
}

impl<'a> Out<'a> {
    pub(super) fn new(
        now_ms: TimeMs,
        actor: Actor,
        sink: &'a mut Sink,
        outbox: &'a mut Outbox,
    ) -> Out<'a> {
        Out {
            now_ms,
            actor,
            sink,
            outbox,
        }
    }

    /// The same place, as another actor: a component whose rule runs inside this step (an
    /// informer's handler adding to its controller's queue), or an event on behalf of a client
    /// (an apiserver answering a probe: the probe's event).
    pub(super) fn as_actor(&mut self, actor: Actor) -> Out<'_> {
        Out::new(self.now_ms, actor, self.sink, self.outbox)
    }

    /// Records an event now; later events and posts name it by the returned id.
    #[inline]
    pub(super) fn emit(&mut self, cause: EventId, kind: EventKind) -> EventId {
        self.sink.emit(self.now_ms, self.actor, cause, kind)
    }

    /// Records an event by `actor`.
    pub(super) fn emit_by(&mut self, actor: Actor, cause: EventId, kind: EventKind) -> EventId {
        self.sink.emit(self.now_ms, actor, cause, kind)
    }

    /// Sends an action over the link of `watcher`'s controller.
    pub(super) fn send(
        &mut self,
        watcher: WatcherId,
        toward: Toward,
        cause: EventId,
        action: Action,
    ) {
        self.outbox.push(Post::Send {
            watcher,
            toward,
            cause,
            action,
        });
    }

    /// Sends a message to a watcher over its link.
    pub(super) fn send_to_client(
        &mut self,
        cause: EventId,
        watcher: WatcherId,
        session: Session,
        msg: Msg,
    ) {
        let deliver = Action::Reflector(ReflectorAction::Deliver {
            watcher,
            session,
            msg,
        });
        self.send(watcher, Toward::Client, cause, deliver);
    }

    pub(super) fn timer(&mut self, at_ms: TimeMs, cause: EventId, action: Action) {
        self.outbox.push(Post::Timer {
            at_ms,
            cause,
            action,
        });
    }

    pub(super) fn soon(&mut self, cause: EventId, action: Action) {
        self.outbox.push(Post::Soon { cause, action });
    }

    /// Hands a step of another component to the engine: nothing this step emits may follow it.
    pub(super) fn call(&mut self, cause: EventId, call: Call) {
        self.outbox.push(Post::Call {
            cause,
            call,
            #[cfg(debug_assertions)]
            emitted: self.sink.trace.len(),
        });
    }
}

impl Sim {
    /// Where a step of `actor` writes now.
    #[cfg(test)]
    pub(super) fn out(&mut self, actor: Actor) -> Out<'_> {
        Out::new(self.now_ms, actor, &mut self.sink, &mut self.outbox)
    }

    /// Runs, in order, what the step whose posts begin at `from` posted, then forgets them. A
    /// call runs another step, whose own posts (above these) run before the next of these.
    #[inline]
    pub(super) fn run_outbox(&mut self, from: usize) {
        let end = self.outbox.len();
        #[cfg(debug_assertions)]
        let emitted = self.sink.trace.len();
        for i in from..end {
            if let Some(post) = self.outbox.0[i].take() {
                #[cfg(debug_assertions)]
                if let Post::Call {
                    call, emitted: at, ..
                } = &post
                {
                    debug_assert_eq!(
                        *at, emitted,
                        "a step emitted after handing {call:?} to the engine: its events would \
                         move before the call's"
                    );
                }
                self.run_post(post);
            }
        }
        self.outbox.0.truncate(from);
    }

    fn run_post(&mut self, post: Post) {
        match post {
            Post::Send {
                watcher,
                toward,
                cause,
                action,
            } => self.send_on_link(watcher, toward, cause, action),
            Post::Timer {
                at_ms,
                cause,
                action,
            } => self.schedule(at_ms, cause, action),
            Post::Soon { cause, action } => self.ready.push_back((cause, action)),
            Post::Call { cause, call, .. } => self.run_call(cause, call),
        }
    }

    fn run_call(&mut self, cause: EventId, call: Call) {
        match call {
            Call::Write {
                controller,
                worker,
                write,
                then,
            } => self.reconcile_write(controller, worker, write, cause, then),
            Call::Crash { controller } => self.crash(controller, cause),
            Call::StartInformer { watcher } => self.start_reflector(watcher, cause),
            Call::StopInformer { watcher } => self.stop_informer(watcher, cause),
            Call::Deliver {
                watcher,
                session,
                msg,
            } => self.deliver(watcher, session, msg, cause),
        }
    }
}

/// For unit tests of one component: a step's events and posts, and the checks on them.
#[cfg(test)]
pub(super) mod testing {
    use super::*;

    /// What a step wrote.
    #[derive(Debug)]
    pub(in crate::sim) struct Stepped {
        pub events: Vec<Event>,
        pub posts: Vec<Post>,
    }

    /// A sink and an outbox of their own, for one step of a component at `now_ms`.
    #[derive(Default)]
    pub(in crate::sim) struct Harness {
        pub sink: Option<Sink>,
        pub outbox: Outbox,
    }

    impl Harness {
        pub fn out(&mut self, now_ms: TimeMs, actor: Actor) -> Out<'_> {
            let sink = self.sink.get_or_insert_with(|| Sink::new(u64::MAX));
            Out::new(now_ms, actor, sink, &mut self.outbox)
        }

        /// What was written since the last `take`.
        pub fn take(&mut self) -> Stepped {
            let sink = self.sink.take().unwrap_or_else(|| Sink::new(u64::MAX));
            let posts = std::mem::take(&mut self.outbox).0.into_iter().flatten();
            Stepped {
                events: sink.trace.iter().copied().collect(),
                posts: posts.collect(),
            }
        }
    }

    impl Stepped {
        /// The kinds of the events, in order.
        pub fn kinds(&self) -> Vec<EventKind> {
            self.events.iter().map(|e| e.kind).collect()
        }

        /// The messages sent to clients, in order (over the link or at once).
        pub fn sent(&self) -> Vec<Msg> {
            let message = |p: &Post| match p {
                Post::Send {
                    action: Action::Reflector(ReflectorAction::Deliver { msg, .. }),
                    ..
                }
                | Post::Call {
                    call: Call::Deliver { msg, .. },
                    ..
                } => Some(msg.clone()),
                _ => None,
            };
            self.posts.iter().filter_map(message).collect()
        }

        /// The requests sent to the apiserver, in order.
        pub fn requests(&self) -> Vec<Action> {
            let request = |p: &Post| match p {
                Post::Send {
                    toward: Toward::Server,
                    action,
                    ..
                } => Some(action.clone()),
                _ => None,
            };
            self.posts.iter().filter_map(request).collect()
        }

        /// The timers set: when, and what.
        pub fn timers(&self) -> Vec<(TimeMs, Action)> {
            let timer = |p: &Post| match p {
                Post::Timer { at_ms, action, .. } => Some((*at_ms, action.clone())),
                _ => None,
            };
            self.posts.iter().filter_map(timer).collect()
        }

        /// What runs once what is due now has run.
        pub fn soon(&self) -> Vec<Action> {
            let soon = |p: &Post| match p {
                Post::Soon { action, .. } => Some(action.clone()),
                _ => None,
            };
            self.posts.iter().filter_map(soon).collect()
        }

        /// The calls handed to the engine.
        pub fn calls(&self) -> Vec<Call> {
            let call = |p: &Post| match p {
                Post::Call { call, .. } => Some(call.clone()),
                _ => None,
            };
            self.posts.iter().filter_map(call).collect()
        }
    }

    /// The step emitted exactly these events, in order.
    #[track_caller]
    pub(in crate::sim) fn check(stepped: &Stepped, expect: &[EventKind]) {
        assert_eq!(stepped.kinds(), expect, "the step's events");
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::mirrors;
    use super::*;

    fn compacted(rev: Rv) -> EventKind {
        EventKind::Store(StoreEvent::Compacted { rev })
    }

    /// The causes and kinds the trace holds from `from` on.
    fn recorded(sim: &Sim, from: usize) -> Vec<(EventId, EventKind)> {
        let events = sim.sink.trace.iter().skip(from);
        events.map(|e| (e.cause, e.kind)).collect()
    }

    /// Events get their ids as they are emitted, so a step names its own earlier events; its
    /// posts run in order once it returns, each naming the event it gave as cause.
    #[test]
    fn a_step_names_its_events_at_once_and_its_posts_run_after_it_in_order() {
        let mut sim = Sim::new(mirrors(0)).unwrap();
        sim.emit(Actor::User, NO_CAUSE, compacted(1));
        let from = sim.outbox.len();
        let mut out = sim.out(Actor::Etcd);
        let first = out.emit(0, compacted(2));
        let second = out.emit(first, compacted(3));
        out.timer(TimeMs(500), second, Action::Etcd(EtcdAction::CompactTick));
        out.soon(first, Action::Etcd(EtcdAction::CompactTick));
        out.emit(first, compacted(4));
        assert_eq!((first, second), (1, 2));
        assert!(
            sim.timers.next_at().is_none() && sim.ready.is_empty(),
            "not yet"
        );
        sim.run_outbox(from);
        let expected = [
            (NO_CAUSE, compacted(1)),
            (0, compacted(2)),
            (1, compacted(3)),
            (1, compacted(4)),
        ];
        assert_eq!(recorded(&sim, 0), expected);
        assert!(sim
            .sink
            .trace
            .iter()
            .skip(1)
            .all(|e| e.actor == Actor::Etcd));
        let timer = sim.timers.pop_due(TimeMs(500));
        assert_eq!(
            timer,
            Some((TimeMs(500), 2, Action::Etcd(EtcdAction::CompactTick)))
        );
        assert_eq!(
            sim.ready.front(),
            Some(&(1, Action::Etcd(EtcdAction::CompactTick)))
        );
        assert_eq!(sim.outbox.len(), 0);
    }

    /// The real nesting: a reflector's handler adds a key to its controller's queue inside the
    /// reflector's step, so the controller's `Enqueue` sits between the reflector's events; the
    /// controller's own post (wake a worker) runs with the reflector's, after the step.
    #[test]
    fn a_handler_s_enqueue_sits_between_the_reflector_s_events() {
        let mut sim = Sim::new(mirrors(1)).unwrap();
        sim.controllers[0].up = true;
        let key = NameId(7);
        let (w, c) = (WatcherId(0), ControllerId(0));
        let from = sim.outbox.len();
        let mut out = Out::new(
            sim.now_ms,
            Actor::Watcher(w),
            &mut sim.sink,
            &mut sim.outbox,
        );
        let seen = out.emit(NO_CAUSE, compacted(1));
        let ctl = &mut sim.controllers[0];
        ctl.enqueue(c, &mut out.as_actor(Actor::Controller(c)), key, seen, false);
        out.emit(seen, compacted(2));
        sim.run_outbox(from);
        let enqueued = EventKind::Controller(ControllerEvent::Enqueue {
            controller: c,
            key,
            outcome: QueueAdd::Added,
            delay_ms: DurationMs::ZERO,
        });
        let expected = [(NO_CAUSE, compacted(1)), (0, enqueued), (0, compacted(2))];
        assert_eq!(recorded(&sim, 0), expected);
        let actors: Vec<Actor> = sim.sink.trace.iter().map(|e| e.actor).collect();
        assert_eq!(
            actors,
            [Actor::Watcher(w), Actor::Controller(c), Actor::Watcher(w)]
        );
        assert!(
            matches!(
                sim.ready.front(),
                Some((
                    1,
                    Action::Controller(ControllerAction::Work { worker: 0, .. })
                ))
            ),
            "the controller's own post (wake a worker) ran too"
        );
        assert_eq!(sim.outbox.len(), 0);
    }

    /// A call runs another component's step, whose posts run before the posts that follow the
    /// call: here the controller starts its informers, each of which posts its first list
    /// before the controller's resync timer of the next informer is set.
    #[test]
    fn a_call_s_step_runs_its_posts_before_the_next_post() {
        let mut config = mirrors(1);
        config.controllers[0].resync_ms = DurationMs(60_000);
        let mut sim = Sim::new(config).unwrap();
        sim.handle_timeout(TimeMs::ZERO);
        // The start: Restart, then per informer its state, its list request and the resync.
        let first_list = sim.sink.trace.iter().position(
            |e| matches!(e.kind, EventKind::Reflector(ReflectorEvent::ListRequest { watcher, .. }) if watcher == WatcherId(0)),
        );
        let second_state = sim.sink.trace.iter().position(
            |e| matches!(e.kind, EventKind::Reflector(ReflectorEvent::State { watcher, .. }) if watcher == WatcherId(1)),
        );
        assert!(first_list.unwrap() < second_state.unwrap());
        assert_eq!(sim.outbox.len(), 0);
    }

    /// A step that emits after posting a call would move its events before the call's: debug
    /// builds refuse it.
    #[test]
    #[cfg(debug_assertions)]
    #[should_panic(expected = "a step emitted after handing")]
    fn emitting_after_a_call_is_refused() {
        let mut sim = Sim::new(mirrors(1)).unwrap();
        let from = sim.outbox.len();
        let mut out = sim.out(Actor::Controller(ControllerId(0)));
        let id = out.emit(NO_CAUSE, compacted(1));
        out.call(
            id,
            Call::Crash {
                controller: ControllerId(0),
            },
        );
        out.emit(id, compacted(2));
        sim.run_outbox(from);
    }
}
