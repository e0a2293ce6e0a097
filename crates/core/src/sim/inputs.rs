//! Inputs: users' writes and the faults of the timeline.

use super::*;

impl Sim {
    // ----- inputs -----

    pub(super) fn apply_input(&mut self, cause: EventId, input: Input) {
        match input {
            Input::Create { kind, name, spec } => {
                let name = self.names.intern(&qualify(&name));
                let namespace = self.namespace_of(name);
                let _ = self.write(
                    Actor::User,
                    cause,
                    Write::Create {
                        kind,
                        name,
                        namespace,
                        spec,
                        owner: None,
                    },
                );
            }
            Input::Update { kind, name, spec } => {
                let name = self.names.intern(&qualify(&name));
                self.user_update(kind, name, cause, |o| o.spec = spec);
            }
            Input::UpdateStatus { kind, name, status } => {
                let name = self.names.intern(&qualify(&name));
                self.user_update(kind, name, cause, |o| o.status = status);
            }
            Input::Delete { kind, name } => {
                let name = self.names.intern(&qualify(&name));
                let _ = self.write(
                    Actor::User,
                    cause,
                    Write::Delete {
                        kind,
                        name,
                        uid: None,
                    },
                );
            }
            Input::Probe {
                apiserver,
                kind,
                request,
            } => self.probe(apiserver, kind, request, cause),
            Input::Say { text } => {
                let text = self.names.intern(&text);
                self.emit(Actor::Narrator, cause, EventKind::Say { text });
            }
            Input::Disconnect {
                controller,
                duration_ms,
            } => {
                let until_ms = self.now_ms + duration_ms;
                let id = self.emit(
                    Actor::Controller(controller),
                    cause,
                    EventKind::Disconnect {
                        controller,
                        until_ms,
                    },
                );
                let c = &mut self.controllers[controller.index()];
                let until_ms = c.disconnected_until.map_or(until_ms, |u| u.max(until_ms));
                c.disconnected_until = Some(until_ms);
                self.schedule(
                    until_ms,
                    id,
                    Action::Reconnect {
                        controller,
                        until_ms,
                    },
                );
                for w in self.controllers[controller.index()].reflectors.clone() {
                    if let Some(watch) = self.reflectors[w.index()].watch {
                        self.close_watch(watch, WatchEnd::Disconnected, id);
                    }
                }
            }
            Input::Delay {
                controller,
                delay_ms,
            } => {
                self.controllers[controller.index()].link_delay_ms = delay_ms;
                self.emit(
                    Actor::Controller(controller),
                    cause,
                    EventKind::LinkDelay {
                        controller,
                        delay_ms,
                    },
                );
            }
            Input::Hold {
                controller,
                kind,
                name,
                for_ms,
            } => {
                let name = self.names.intern(&qualify(&name));
                let id = self.emit(
                    Actor::Controller(controller),
                    cause,
                    EventKind::HoldArmed {
                        controller,
                        kind,
                        name,
                    },
                );
                self.release_hold(controller, false, id);
                let ctl = &mut self.controllers[controller.index()];
                ctl.hold_generation += 1;
                let generation = ctl.hold_generation;
                ctl.hold = Some(Hold {
                    kind,
                    name,
                    seen: 0,
                    buffer: vec![],
                });
                self.schedule(
                    self.now_ms + for_ms.max(1),
                    id,
                    Action::HoldTimeout {
                        controller,
                        generation,
                    },
                );
            }
            Input::PauseCache { apiserver } | Input::ResumeCache { apiserver } => {
                let paused = matches!(input, Input::PauseCache { .. });
                let id = self.emit(
                    Actor::Apiserver(apiserver),
                    cause,
                    EventKind::CachePaused { apiserver, paused },
                );
                self.apiservers[apiserver.index()].paused = paused;
                if !paused {
                    let held: Vec<Change> =
                        self.apiservers[apiserver.index()].held.drain(..).collect();
                    for change in held {
                        self.cache_apply(apiserver, change, id);
                    }
                    let progress =
                        std::mem::take(&mut self.apiservers[apiserver.index()].held_progress);
                    if progress > 0 {
                        self.cache_progress(apiserver, progress, id);
                    }
                }
            }
            Input::RestartApiserver { apiserver, down_ms } => {
                let id = self.emit(
                    Actor::Apiserver(apiserver),
                    cause,
                    EventKind::ApiserverRestart { apiserver, down_ms },
                );
                self.reinit_caches(apiserver, None, down_ms, id);
            }
            Input::ReinitCache {
                apiserver,
                kind,
                down_ms,
            } => {
                self.reinit_caches(apiserver, Some(kind), down_ms, cause);
            }
            Input::Crash {
                controller,
                after_writes,
                restart_after_ms,
            } => {
                let ctl = &mut self.controllers[controller.index()];
                ctl.restart_after_ms = restart_after_ms;
                match after_writes {
                    Some(n) => ctl.crash_after_writes = Some(n),
                    None => self.crash(controller, cause),
                }
            }
            Input::Failover {
                controller,
                apiserver,
            } => {
                let id = self.emit(
                    Actor::Controller(controller),
                    cause,
                    EventKind::Failover {
                        controller,
                        apiserver,
                    },
                );
                self.controllers[controller.index()].apiserver = apiserver;
                for w in self.controllers[controller.index()].reflectors.clone() {
                    if let Some(watch) = self.reflectors[w.index()].watch {
                        self.close_watch(watch, WatchEnd::Disconnected, id);
                    }
                }
            }
            Input::Restart {
                controller,
                apiserver,
            } => {
                if let Some(a) = apiserver {
                    self.controllers[controller.index()].apiserver = a;
                }
                if !self.controllers[controller.index()].up {
                    self.start_controller(controller, cause);
                }
            }
        }
    }

    pub(super) fn namespace_of(&mut self, name: NameId) -> NameId {
        let s = self.names.resolve(name);
        let ns = s
            .split_once('/')
            .map(|(ns, _)| ns.to_string())
            .unwrap_or_else(|| "default".into());
        self.names.intern(&ns)
    }

    pub(super) fn user_update(
        &mut self,
        kind: KindId,
        name: NameId,
        cause: EventId,
        f: impl Fn(&mut Object),
    ) {
        match self.etcd.objects.get(&(kind, name)).copied() {
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
