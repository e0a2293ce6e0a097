//! Inputs: users' writes and the faults of the timeline.

use super::*;

impl Sim {
    // ----- inputs -----

    /// One timeline input: a user's request or narration, or a fault.
    pub(super) fn apply_input(&mut self, cause: EventId, input: &Input) {
        match input {
            Input::Create { .. }
            | Input::Update { .. }
            | Input::UpdateStatus { .. }
            | Input::Delete { .. }
            | Input::Probe { .. }
            | Input::Say { .. } => self.apply_request(cause, input),
            _ => self.apply_fault(cause, input),
        }
    }

    /// The configured timeline's input at `index` (read in place from the shared config).
    pub(super) fn apply_timeline(&mut self, cause: EventId, index: u32) {
        let config = Arc::clone(&self.config);
        self.apply_input(cause, &config.timeline[index as usize].input);
    }

    /// A user's write, a probe's request, or the narrator's line.
    fn apply_request(&mut self, cause: EventId, input: &Input) {
        match *input {
            Input::Create {
                kind,
                ref name,
                spec,
            } => self.user_create(kind, name, spec, cause),
            Input::Update {
                kind,
                ref name,
                spec,
            } => self.user_update(kind, name, cause, |o| o.spec = spec),
            Input::UpdateStatus {
                kind,
                ref name,
                status,
            } => self.user_update(kind, name, cause, |o| o.status = status),
            Input::Delete { kind, ref name } => self.user_delete(kind, name, cause),
            Input::Probe {
                apiserver,
                kind,
                request,
            } => self.probe(apiserver, kind, request, cause),
            Input::Say { ref text, wait } => self.say(text, wait, cause),
            _ => unreachable!("a fault is not a request"),
        }
    }

    /// A fault of the timeline (or the end of one: a resume, a restart).
    fn apply_fault(&mut self, cause: EventId, input: &Input) {
        match *input {
            Input::Disconnect {
                controller,
                duration_ms,
            } => self.disconnect(controller, duration_ms, cause),
            Input::Delay {
                controller,
                delay_ms,
            } => self.set_link_delay(controller, delay_ms, cause),
            Input::Hold {
                controller,
                kind,
                ref name,
                for_ms,
            } => self.hold(controller, kind, name, for_ms, cause),
            Input::PauseCache { apiserver } => self.pause_cache(apiserver, true, cause),
            Input::ResumeCache { apiserver } => self.pause_cache(apiserver, false, cause),
            Input::RestartApiserver { apiserver, down_ms } => {
                self.restart_apiserver(apiserver, down_ms, cause)
            }
            Input::ReinitCache {
                apiserver,
                kind,
                down_ms,
            } => self.reinit_cache(apiserver, kind, down_ms, cause),
            Input::Crash {
                controller,
                after_writes,
                restart_after_ms,
            } => self.crash_fault(controller, after_writes, restart_after_ms, cause),
            Input::Failover {
                controller,
                apiserver,
            } => self.failover(controller, apiserver, cause),
            Input::Restart {
                controller,
                apiserver,
            } => self.restart_controller(controller, apiserver, cause),
            _ => unreachable!("a request is not a fault"),
        }
    }

    /// The narrator's line.
    fn say(&mut self, text: &str, wait: bool, cause: EventId) {
        let text = self.names.intern(text);
        self.emit(Actor::Narrator, cause, EventKind::Say { text, wait });
    }

    fn user_create(&mut self, kind: KindId, name: &str, spec: i64, cause: EventId) {
        let name = self.names.intern_qualified(name);
        let namespace = self.namespace_of(name);
        let create = Write::Create {
            kind,
            name,
            namespace,
            spec,
            owner: None,
        };
        let _ = self.write(Actor::User, cause, create);
    }

    fn user_delete(&mut self, kind: KindId, name: &str, cause: EventId) {
        let name = self.names.intern_qualified(name);
        let delete = Write::Delete {
            kind,
            name,
            uid: None,
        };
        let _ = self.write(Actor::User, cause, delete);
    }

    /// Breaks the controller's watches and refuses its connections for `duration_ms`.
    fn disconnect(&mut self, controller: ControllerId, duration_ms: DurationMs, cause: EventId) {
        let until_ms = self.now_ms + duration_ms;
        let event = EventKind::Disconnect {
            controller,
            until_ms,
        };
        let id = self.emit(Actor::Controller(controller), cause, event);
        let until_ms = self.controllers[controller.index()].disconnect(until_ms);
        let reconnect = Action::Reconnect {
            controller,
            until_ms,
        };
        self.schedule(until_ms, id, reconnect);
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
    fn failover(&mut self, controller: ControllerId, apiserver: ApiserverId, cause: EventId) {
        let event = EventKind::Failover {
            controller,
            apiserver,
        };
        let id = self.emit(Actor::Controller(controller), cause, event);
        self.controllers[controller.index()].fail_over(apiserver);
        self.break_watches(controller, id);
    }

    fn set_link_delay(&mut self, controller: ControllerId, delay_ms: DurationMs, cause: EventId) {
        self.controllers[controller.index()].set_link_delay(delay_ms);
        let event = EventKind::LinkDelay {
            controller,
            delay_ms,
        };
        self.emit(Actor::Controller(controller), cause, event);
    }

    /// Sieve's unobserved-state injection: hold the controller's notifications until a later
    /// state of the object arrives (or `for_ms` passes).
    fn hold(
        &mut self,
        controller: ControllerId,
        kind: KindId,
        name: &str,
        for_ms: DurationMs,
        cause: EventId,
    ) {
        let name = self.names.intern_qualified(name);
        let event = EventKind::HoldArmed {
            controller,
            kind,
            name,
        };
        let id = self.emit(Actor::Controller(controller), cause, event);
        self.release_hold(controller, false, id);
        let generation = self.controllers[controller.index()].arm_hold(kind, name);
        let timeout = Action::HoldTimeout {
            controller,
            generation,
        };
        self.schedule(self.now_ms + for_ms.max(DurationMs(1)), id, timeout);
    }

    pub(super) fn namespace_of(&mut self, name: NameId) -> NameId {
        let s = self.names.resolve(name);
        let ns = s
            .split_once('/')
            .map(|(ns, _)| ns.to_string())
            .unwrap_or_else(|| "default".into());
        self.names.intern(&ns)
    }

    /// A user's update of what `f` changes, at the RV it reads now (404 when there is none).
    fn user_update(&mut self, kind: KindId, name: &str, cause: EventId, f: impl Fn(&mut Object)) {
        let name = self.names.intern_qualified(name);
        match self.etcd.get(kind, name).copied() {
            Some(mut o) => {
                f(&mut o);
                let _ = self.write(
                    Actor::User,
                    cause,
                    Write::Update {
                        kind,
                        name,
                        expect_rv: o.rv,
                        spec: o.spec,
                        status: o.status,
                        finalizers: o.finalizers,
                    },
                );
            }
            None => {
                self.emit(
                    Actor::User,
                    cause,
                    EventKind::WriteFailed {
                        op: WriteOp::Update,
                        kind,
                        name,
                        error: ApiError::NotFound,
                    },
                );
            }
        }
    }
}
