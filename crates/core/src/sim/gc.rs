//! The garbage collector (kube-controller-manager's `pkg/controller/garbagecollector`): its
//! rules over etcd's owner graph. It learns of each commit after `gc_delay_ms` (`gc_notice`),
//! deletes dependents whose owners are gone, orphans or deletes the dependents of an owner
//! deleted with a propagation policy (`collect_garbage`), and warns of owner references that
//! cross namespaces. Its graph is etcd's owner index (`Etcd::gc_candidates`,
//! `Etcd::dependents_of`), read as the collector's informers would have it after the delay.

use super::*;

impl Sim {
    /// `pkg/controller/garbagecollector`: the collector's graph learns of a change after
    /// `gc_delay_ms` and looks at each dependent etcd names (`Etcd::gc_candidates`); one whose
    /// owners are all gone is deleted (background propagation); an owner marked for
    /// foreground or orphan deletion is looked at again (`collect_garbage`).
    pub(super) fn gc_notice(&mut self, obj: &Object, event: EventType, cause: EventId) {
        let at = self.now_ms + self.config.gc_delay_ms;
        for (kind, name, uid) in self.etcd.gc_candidates(obj, event) {
            self.schedule(at, cause, Action::Etcd(EtcdAction::Gc { kind, name, uid }));
        }
        if obj.body.is_empty() && (event != EventType::Deleted || obj.owner.is_none()) {
            return; // no policy finalizer, no reference that blocks a foreground deletion
        }
        // An owner marked for foreground or orphan deletion waits for the collector; so does
        // a foreground owner whose blocking dependent just went.
        let mut look = vec![];
        if event == EventType::Modified && self.policy_finalizer(obj).is_some() {
            look.push((obj.kind, obj.name, obj.uid));
        }
        if event == EventType::Deleted {
            for r in obj.owner_refs().filter(|r| r.block_owner_deletion) {
                let o = r.owner;
                if let Some(owner) = self.etcd.get(o.kind, o.name).filter(|x| x.uid == o.uid) {
                    if self.policy_finalizer(owner) == Some(Propagation::Foreground) {
                        look.push((o.kind, o.name, o.uid));
                    }
                }
            }
        }
        for (kind, name, uid) in look {
            self.schedule(at, cause, Action::Etcd(EtcdAction::Gc { kind, name, uid }));
        }
    }

    /// The propagation policy whose finalizer a deleting object carries, if any.
    fn policy_finalizer(&self, obj: &Object) -> Option<Propagation> {
        obj.deletion_ms?;
        let has =
            |f: &str| (self.names.get(f)).is_some_and(|f| obj.body.data().finalizers.contains(&f));
        if has(ORPHAN_FINALIZER) {
            Some(Propagation::Orphan)
        } else if has(FOREGROUND_FINALIZER) {
            Some(Propagation::Foreground)
        } else {
            None
        }
    }

    /// `garbagecollector.go`: `attemptToDeleteItem` for a dependent whose owners are all gone
    /// (deleted, background), `orphanDependents` then the `orphan` finalizer's removal for an
    /// owner deleted with `orphan`, and for one deleted with `foreground` the deletion of its
    /// dependents and, once none that blocks it (`blockOwnerDeletion`) is left, the removal of
    /// `foregroundDeletion`.
    pub(super) fn collect_garbage(&mut self, kind: KindId, name: NameId, uid: u64, cause: EventId) {
        self.report_invalid_owner_refs(kind, name, uid, cause);
        if self.etcd.is_orphan(kind, name, uid) {
            let uid = Some(uid);
            let delete = Write::Delete { kind, name, uid };
            let _ = self.write(Actor::GarbageCollector, cause, delete);
            return;
        }
        let Some(owner) = self.etcd.get(kind, name).filter(|o| o.uid == uid) else {
            return;
        };
        let Some(policy) = self.policy_finalizer(owner) else {
            return;
        };
        let owner = owner.clone();
        let dependents: Vec<Object> = self.etcd.dependents_of(uid).cloned().collect();
        let gc = Actor::GarbageCollector;
        for mut d in dependents {
            if policy == Propagation::Orphan
                || (d.deletion_ms.is_none() && self.has_solid_owner(&d, uid))
            {
                // `orphanDependents`; and `attemptToDeleteItem`'s `len(solid) != 0` case: a
                // dependent another owner keeps loses only its reference to this one.
                d.owner = d.owner.filter(|o| o.uid != uid);
                d.body.edit(|b| b.owners.retain(|r| r.owner.uid != uid));
                let decision = self.etcd.decide_collector(d);
                let _ = self.settle(gc, cause, decision);
            } else if (d.owner_refs())
                .any(|r| (self.etcd).namespaced_owner_of_cluster_scoped(&d, r.owner))
            {
                // `isDangling`'s `namespacedOwnerOfClusterScopedObjectErr`: forgotten, not deleted.
            } else if d.deletion_ms.is_none() && self.etcd.dependents_of(d.uid).next().is_some() {
                // A dependent with dependents of its own is deleted in the foreground too
                // (`waitingForDependentsDeletion` and `item.dependentsLength() != 0`), so this
                // owner waits for the whole chain, bottom-up.
                self.delete_with(gc, cause, d.kind, d.name, Propagation::Foreground);
            } else if d.deletion_ms.is_none() {
                let (kind, name, uid) = (d.kind, d.name, Some(d.uid));
                let _ = self.write(gc, cause, Write::Delete { kind, name, uid });
            }
        }
        let blocked = self.etcd.dependents_of(uid).any(|d| {
            d.owner_refs()
                .any(|r| r.owner.uid == uid && r.block_owner_deletion)
        });
        if policy == Propagation::Foreground && blocked {
            return; // the last blocking dependent's deletion brings the collector back
        }
        let finalizer = match policy {
            Propagation::Orphan => ORPHAN_FINALIZER,
            _ => FOREGROUND_FINALIZER,
        };
        let f = self.names.intern(finalizer);
        let mut done = self.etcd.get(kind, name).cloned().unwrap_or(owner);
        done.body.edit(|b| b.finalizers.retain(|&x| x != f));
        let decision = self.etcd.decide_collector(done);
        let _ = self.settle(gc, cause, decision);
    }

    /// `graph_builder.go` `reportInvalidNamespaceOwnerRef`: a Warning on a dependent (not being
    /// deleted, so once) for each reference to a namespaced owner seen in another namespace.
    fn report_invalid_owner_refs(&mut self, kind: KindId, name: NameId, uid: u64, cause: EventId) {
        let Some(d) = self
            .etcd
            .get(kind, name)
            .filter(|d| d.uid == uid && d.deletion_ms.is_none())
        else {
            return;
        };
        let invalid: Vec<Owner> = (d.owner_refs())
            .filter(|r| self.etcd.invalid_namespace(d, r.owner))
            .map(|r| r.owner)
            .collect();
        for o in invalid {
            let warning = EventKind::Store(StoreEvent::OwnerRefInvalid {
                kind,
                name,
                owner_kind: o.kind,
                owner_name: o.name,
            });
            self.emit(Actor::GarbageCollector, cause, warning);
        }
    }

    /// `classifyReferences`: does `dependent` have an owner other than `uid` that exists
    /// and is not itself waiting for its dependents (a "solid" one)?
    fn has_solid_owner(&self, dependent: &Object, uid: u64) -> bool {
        dependent.owner_refs().any(|r| {
            r.owner.uid != uid
                && (self.etcd.resolved_owner(dependent, r.owner))
                    .is_some_and(|o| self.policy_finalizer(o) != Some(Propagation::Foreground))
        })
    }

    /// A delete with a propagation policy: the object is marked with the policy's finalizer
    /// (none for background) for the collector, in place of another policy's.
    pub(super) fn delete_with(
        &mut self,
        actor: Actor,
        cause: EventId,
        kind: KindId,
        name: NameId,
        propagation: Propagation,
    ) {
        let finalizer = match propagation {
            Propagation::Background => None,
            Propagation::Foreground => Some(self.names.intern(FOREGROUND_FINALIZER)),
            Propagation::Orphan => Some(self.names.intern(ORPHAN_FINALIZER)),
        };
        // Only a name already interned can be among an object's finalizers.
        let policy_finalizers = [ORPHAN_FINALIZER, FOREGROUND_FINALIZER].map(|f| self.names.get(f));
        let decision =
            (self.etcd).decide_delete_with(kind, name, finalizer, &policy_finalizers, self.now_ms);
        let _ = self.settle(actor, cause, decision);
    }
}
