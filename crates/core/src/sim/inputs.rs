//! Inputs: users' writes and the faults of the timeline.

use super::*;

impl Sim {
    // ----- inputs -----

    /// One timeline input, by its family.
    pub(super) fn apply_input(&mut self, cause: EventId, input: &Input) {
        match *input {
            Input::Write(ref write) => self.apply_write(cause, write),
            Input::Fault(ref fault) => self.apply_fault(cause, fault),
            Input::Probe {
                apiserver,
                kind,
                request,
                ref selector,
            } => self.probe(apiserver, kind, request, selector.as_deref(), cause),
            Input::Say { ref text, wait } => self.say(text, wait, cause),
        }
    }

    /// The configured timeline's input at `index` (read in place from the shared config).
    pub(super) fn apply_timeline(&mut self, cause: EventId, index: u32) {
        let config = Arc::clone(&self.config);
        self.apply_input(cause, &config.timeline[index as usize].input);
    }

    /// A user's write.
    fn apply_write(&mut self, cause: EventId, write: &WriteInput) {
        match *write {
            WriteInput::Create {
                kind,
                ref name,
                spec,
            } => self.user_create(kind, name, spec, cause),
            WriteInput::Update {
                kind,
                ref name,
                spec,
            } => self.user_update(kind, name, cause, |o| UpdateTo::Object {
                spec: Some(spec),
                finalizers: Some(o.finalizers),
            }),
            WriteInput::UpdateStatus {
                kind,
                ref name,
                status,
            } => self.user_update(kind, name, cause, |_| UpdateTo::Status(status)),
            WriteInput::Delete { kind, ref name } => self.user_delete(kind, name, cause),
            WriteInput::Edits {
                verb,
                kind,
                ref name,
                ref edits,
            } => self.user_write(verb, kind, name, edits, cause),
            WriteInput::DeleteWith {
                kind,
                ref name,
                propagation,
            } => self.user_delete_with(kind, name, propagation, cause),
        }
    }

    /// A fault of the timeline (or the end of one: a resume, a restart).
    fn apply_fault(&mut self, cause: EventId, fault: &FaultInput) {
        match *fault {
            FaultInput::Disconnect {
                controller,
                duration_ms,
                after_writes: None,
            } => self.disconnect(controller, duration_ms, cause),
            FaultInput::Disconnect {
                controller,
                duration_ms,
                after_writes: Some(n),
            } => (self.controllers[controller.index()].disconnect_before_write)
                .push((n, duration_ms)),
            FaultInput::Delay {
                controller,
                delay_ms,
            } => self.set_link_delay(controller, delay_ms, cause),
            FaultInput::Hold {
                controller,
                kind,
                ref name,
                for_ms,
            } => self.hold(controller, kind, name, for_ms, cause),
            FaultInput::PauseCache { apiserver } => self.pause_cache(apiserver, true, cause),
            FaultInput::ResumeCache { apiserver } => self.pause_cache(apiserver, false, cause),
            FaultInput::RestartApiserver { apiserver, down_ms } => {
                self.restart_apiserver(apiserver, down_ms, cause)
            }
            FaultInput::ReinitCache {
                apiserver,
                kind,
                down_ms,
            } => self.reinit_cache(apiserver, kind, down_ms, cause),
            FaultInput::Crash {
                controller,
                after_writes,
                restart_after_ms,
            } => self.crash_fault(controller, after_writes, restart_after_ms, cause),
            FaultInput::Failover {
                controller,
                apiserver,
            } => self.failover(controller, apiserver, cause),
            FaultInput::Restart {
                controller,
                apiserver,
            } => self.restart_controller(controller, apiserver, cause),
        }
    }

    /// The narrator's line.
    fn say(&mut self, text: &str, wait: bool, cause: EventId) {
        let text = self.names.intern(text);
        self.emit(
            Actor::Narrator,
            cause,
            EventKind::Say(SayEvent { text, wait }),
        );
    }

    fn user_create(&mut self, kind: KindId, name: &str, spec: i64, cause: EventId) {
        let name = self.intern_object(kind, name);
        let namespace = self.namespace_of(kind, name);
        let create = Write::Create {
            kind,
            name,
            namespace,
            spec,
            owner: None,
            fields: None,
            generate_name: false,
        };
        let _ = self.write(Actor::User, cause, create);
    }

    fn user_delete(&mut self, kind: KindId, name: &str, cause: EventId) {
        let name = self.intern_object(kind, name);
        let delete = Write::Delete {
            kind,
            name,
            uid: None,
        };
        let _ = self.write(Actor::User, cause, delete);
    }

    /// `WriteInput::Edits`: the edits applied to a new object or to etcd's, then written as the verb
    /// says. A write to an object that is not there is a 404, as `user_update`'s.
    fn user_write(&mut self, verb: Verb, kind: KindId, name: &str, edits: &[Edit], cause: EventId) {
        let name = if verb == Verb::Create && edits.contains(&Edit::GenerateName) {
            match self.generated_name(kind, name) {
                Ok(drawn) => drawn,
                Err(error) => {
                    let name = self.intern_object(kind, name);
                    let failed = EventKind::Store(StoreEvent::WriteFailed {
                        op: WriteOp::Create,
                        kind,
                        name,
                        error,
                    });
                    self.emit(Actor::User, cause, failed);
                    return;
                }
            }
        } else {
            self.intern_object(kind, name)
        };
        let mut obj = match (verb, self.etcd.get(kind, name)) {
            (Verb::Create, _) => {
                let namespace = self.namespace_of(kind, name);
                Object::new(kind, name, namespace)
            }
            (_, Some(o)) => o.clone(),
            (_, None) => {
                let failed = EventKind::Store(StoreEvent::WriteFailed {
                    op: WriteOp::Update,
                    kind,
                    name,
                    error: ApiError::NotFound,
                });
                self.emit(Actor::User, cause, failed);
                return;
            }
        };
        for edit in edits {
            self.apply_edit(&mut obj, edit);
        }
        let decision = self.etcd.decide_put(verb, obj, &self.names);
        let _ = self.settle(Actor::User, cause, decision);
    }

    /// The name a create with `generateName` gets: drawn again while it is taken, up to
    /// `GENERATE_NAME_ATTEMPTS` names with RetryGenerateName (`registry/generic/registry/
    /// store.go` `createWithGenerateNameRetry`), one without (a taken name is then 409). A prefix
    /// that `ValidateObjectMeta` refuses is a 422, whatever is drawn (`maskTrailingDash`).
    pub(super) fn generated_name(
        &mut self,
        kind: KindId,
        prefix: &str,
    ) -> Result<NameId, ApiError> {
        let scope = Scope::of(self.config.cluster_scoped(kind));
        if let Some((field, rule)) = crate::validation::object_name_error(prefix, scope, true) {
            return Err(ApiError::InvalidName { field, rule });
        }
        let attempts = match self.config.server.retry_generate_name {
            true => GENERATE_NAME_ATTEMPTS,
            false => 1,
        };
        let mut tries = 1;
        loop {
            let drawn = self.generate_name(prefix);
            let name = self.intern_object(kind, &drawn);
            if tries == attempts || self.etcd.get(kind, name).is_none() {
                return Ok(name);
            }
            tries += 1;
        }
    }

    /// `generateName` (`apiserver/pkg/storage/names/generate.go`): the prefix, cut to
    /// `MaxGeneratedNameLength` (58: 63 less the 5 it adds), and five characters of
    /// `utilrand.String` (`apimachinery/pkg/util/rand`: consonants and digits that spell no
    /// words), from the run's seeded generator. A `namespace/` before the name is kept whole.
    fn generate_name(&mut self, prefix: &str) -> String {
        const ALPHANUMS: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
        let short_at = prefix.rfind('/').map_or(0, |i| i + 1);
        let end = short_at + crate::program::generated_prefix_len(&prefix[short_at..]);
        let mut name = prefix[..end].to_string();
        for _ in 0..5 {
            name.push(ALPHANUMS[self.rng.below(ALPHANUMS.len() as u64) as usize] as char);
        }
        name
    }

    /// One edit of a timeline write, on the writer's copy (shared bodies are copied here, once).
    fn apply_edit(&mut self, obj: &mut Object, edit: &Edit) {
        use crate::object::{set, OwnerRef, Value};
        let names = &mut self.names;
        let mut value = |v: &FieldValue| match v {
            FieldValue::Int(n) => Value::Int(*n),
            FieldValue::Str(s) => Value::Str(names.intern(s)),
        };
        match edit {
            Edit::GenerateName => {}
            Edit::Spec(n) => obj.spec = *n,
            Edit::Status(n) => obj.status = *n,
            Edit::Field {
                status,
                path,
                value: v,
            } => {
                let v = v.as_ref().map(&mut value);
                let key = self.names.intern(path);
                obj.body
                    .edit(|d| set(if *status { &mut d.status } else { &mut d.spec }, key, v));
            }
            Edit::Label { key, value: v } | Edit::Annotation { key, value: v } => {
                let k = self.names.intern(key);
                let v = v.as_deref().map(|v| self.names.intern(v));
                let label = matches!(edit, Edit::Label { .. });
                obj.body.edit(|d| {
                    set(
                        if label {
                            &mut d.labels
                        } else {
                            &mut d.annotations
                        },
                        k,
                        v,
                    )
                });
            }
            Edit::Finalizer { name, add } => {
                let f = self.names.intern(name);
                obj.body
                    .edit(|d| match (d.finalizers.iter().position(|&x| x == f), add) {
                        (None, true) => d.finalizers.push(f),
                        (Some(i), false) => {
                            d.finalizers.remove(i);
                        }
                        _ => {}
                    });
            }
            Edit::Owner {
                kind,
                name,
                controller,
                block_owner_deletion,
            } => {
                let name = self.intern_object(*kind, name);
                // No such owner: a UID no object has (UIDs start at 1), which the collector
                // reads as an owner that is gone.
                let uid = self.etcd.get(*kind, name).map_or(0, |o| o.uid);
                let owner = Owner {
                    kind: *kind,
                    name,
                    uid,
                };
                let r = OwnerRef {
                    owner,
                    controller: *controller,
                    block_owner_deletion: *block_owner_deletion,
                };
                obj.body.edit(|d| {
                    d.owners
                        .retain(|o| (o.owner.kind, o.owner.name) != (*kind, name));
                    d.owners.push(r);
                });
            }
        }
    }

    fn user_delete_with(
        &mut self,
        kind: KindId,
        name: &str,
        propagation: Propagation,
        cause: EventId,
    ) {
        let name = self.intern_object(kind, name);
        self.delete_with(Actor::User, cause, kind, name, propagation);
    }

    /// The name of a user's object: `ns/name` (`a` is `default/a`), or for a cluster-scoped
    /// kind the name as written.
    pub(super) fn intern_object(&mut self, kind: KindId, name: &str) -> NameId {
        Scope::of(self.config.cluster_scoped(kind)).intern(&mut self.names, name)
    }

    /// The namespace of an object of `kind` named `name`: none (the empty name) for a
    /// cluster-scoped kind.
    pub(super) fn namespace_of(&mut self, kind: KindId, name: NameId) -> NameId {
        let scope = Scope::of(self.config.cluster_scoped(kind));
        let ns = scope.namespace(self.names.resolve(name)).to_string();
        self.names.intern(&ns)
    }

    /// A user's update of what `change` says, at the RV it reads now (404 when there is none).
    fn user_update(
        &mut self,
        kind: KindId,
        name: &str,
        cause: EventId,
        change: impl Fn(&Object) -> UpdateTo,
    ) {
        let name = self.intern_object(kind, name);
        match self.etcd.get(kind, name).cloned() {
            Some(o) => {
                let _ = self.write(
                    Actor::User,
                    cause,
                    Write::Update {
                        kind,
                        name,
                        expect_rv: o.rv,
                        change: change(&o),
                    },
                );
            }
            None => {
                self.emit(
                    Actor::User,
                    cause,
                    EventKind::Store(StoreEvent::WriteFailed {
                        op: WriteOp::Update,
                        kind,
                        name,
                        error: ApiError::NotFound,
                    }),
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{create_pod, mirrors, watching};
    use super::*;

    const C: ControllerId = ControllerId(0);

    /// A crash at once kills the controller and, asked to, restarts it later; one armed for
    /// after N writes only arms; a restart that names an apiserver moves there.
    #[test]
    fn a_crash_kills_or_arms_and_a_restart_comes_back_where_it_says() {
        let mut sim = watching();
        let crash = |after_writes| {
            Input::Fault(FaultInput::Crash {
                controller: C,
                after_writes,
                restart_after_ms: Some(DurationMs(500)),
            })
        };
        sim.handle_input(crash(Some(2)));
        let c = &sim.controllers[0];
        assert!(c.up && c.crash_after_writes == [(2, Some(DurationMs(500)))]);
        let watches: Vec<WatchRef> = sim.reflectors.iter().filter_map(|r| r.watch).collect();
        assert_eq!(watches.len(), 2);
        sim.handle_input(crash(None));
        assert!(!sim.controllers[0].up);
        let open = watches.iter().map(|&w| sim.watch_at(w).open);
        assert!(open.into_iter().all(|o| !o), "the server forgets them");
        let served = &sim.apiservers[0].watches_by_kind;
        assert!(served.iter().all(|list| list.is_empty()));
        sim.handle_timeout(TimeMs(1500));
        assert!(sim.controllers[0].up, "restarted 500 ms after the crash");
        sim.handle_input(crash(None));
        let restart = Input::Fault(FaultInput::Restart {
            controller: C,
            apiserver: Some(ApiserverId(1)),
        });
        sim.handle_input(restart);
        let c = &sim.controllers[0];
        assert!(c.up && sim.links[0].apiserver() == ApiserverId(1));
    }

    /// Cache faults reach the apiserver they name: a pause, a restart (every cache), a
    /// re-initialisation (one kind's).
    #[test]
    fn cache_faults_change_the_apiserver_they_name() {
        let mut sim = watching();
        let api = ApiserverId(1);
        sim.handle_input(Input::Fault(FaultInput::PauseCache { apiserver: api }));
        assert!(sim.apiservers[1].paused && !sim.apiservers[0].paused);
        sim.handle_input(Input::Fault(FaultInput::ResumeCache { apiserver: api }));
        assert!(!sim.apiservers[1].paused);
        let reinit = Input::Fault(FaultInput::ReinitCache {
            apiserver: api,
            kind: KindId(1),
            down_ms: DurationMs(100),
        });
        sim.handle_input(reinit);
        let ready = |sim: &Sim, a: usize| {
            sim.apiservers[a]
                .caches
                .iter()
                .map(|c| c.ready())
                .collect::<Vec<_>>()
        };
        assert_eq!(ready(&sim, 1), [true, false]);
        let restart = Input::Fault(FaultInput::RestartApiserver {
            apiserver: ApiserverId(0),
            down_ms: DurationMs(100),
        });
        sim.handle_input(restart);
        assert_eq!(ready(&sim, 0), [false, false]);
        sim.handle_timeout(TimeMs(1100));
        assert_eq!(
            (ready(&sim, 0), ready(&sim, 1)),
            (vec![true; 2], vec![true; 2])
        );
    }

    /// Issue 23's speed rule: a written body is one allocation shared by etcd, every
    /// apiserver's watch cache and the informer's store (and a fork), not a copy per event;
    /// a patch copies it once, for the new version.
    #[test]
    fn a_written_body_is_shared_by_etcd_the_caches_the_store_and_a_fork() {
        let mut sim = watching();
        let label = |v: &str| Edit::Label {
            key: "app".into(),
            value: Some(v.into()),
        };
        let write = |verb, v| {
            Input::Write(WriteInput::Edits {
                verb,
                kind: KindId(0),
                name: "a".into(),
                edits: vec![label(v)],
            })
        };
        sim.handle_input(write(Verb::Create, "web"));
        sim.handle_timeout(TimeMs(2000));
        let a = sim.names.get_qualified("a").unwrap();
        let body = sim.etcd.get(KindId(0), a).unwrap().body.clone();
        assert!(!body.is_empty());
        for api in &sim.apiservers {
            assert!(
                api.caches[0].get(a).is_some_and(|o| o.body.shares(&body)),
                "a watch cache"
            );
        }
        let store = sim.reflectors.iter().find(|r| r.kind == KindId(0)).unwrap();
        assert!(
            store.store.get(&a).unwrap().body.shares(&body),
            "the informer"
        );
        let fork = sim.clone();
        assert!(
            fork.etcd.get(KindId(0), a).unwrap().body.shares(&body),
            "a fork"
        );
        sim.handle_input(write(Verb::Patch, "api"));
        let patched = &sim.etcd.get(KindId(0), a).unwrap().body;
        assert!(!patched.shares(&body), "a change is a new body");
        assert!(
            fork.etcd.get(KindId(0), a).unwrap().body.shares(&body),
            "the fork keeps it"
        );
    }

    /// A user's update sets what it names at the RV it reads; an update of nothing is a 404.
    #[test]
    fn user_updates_set_the_spec_or_the_status_and_a_missing_object_is_a_404() {
        let mut sim = Sim::new(mirrors(0)).unwrap();
        sim.handle_input(create_pod("a", 1));
        let update = Input::Write(WriteInput::Update {
            kind: KindId(0),
            name: "a".into(),
            spec: 3,
        });
        sim.handle_input(update);
        let status = Input::Write(WriteInput::UpdateStatus {
            kind: KindId(0),
            name: "default/a".into(),
            status: 9,
        });
        sim.handle_input(status);
        let a = sim.names.intern_qualified("a");
        let o = sim.etcd.get(KindId(0), a).unwrap().clone();
        assert_eq!((o.spec, o.status, o.generation, o.rv), (3, 9, 2, 4));
        let missing = Input::Write(WriteInput::Update {
            kind: KindId(0),
            name: "b".into(),
            spec: 1,
        });
        sim.handle_input(missing);
        assert!(matches!(
            sim.sink.trace.last().unwrap().kind,
            EventKind::Store(StoreEvent::WriteFailed {
                op: WriteOp::Update,
                error: ApiError::NotFound,
                ..
            })
        ));
    }
}
