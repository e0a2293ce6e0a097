//! (A part of `fidelity.rs`.) Deletion and its propagation policies as the apiserver's
//! registry keeps them (semantics audit 2): each row is a rule, the Kubernetes source that
//! states it, and a scenario whose expectations say what the rule gives; every expectation
//! must hold.

use super::run;

/// (rule, Kubernetes source, scenario).
const RULES: &[(&str, &str, &str)] = &[
    (
        "a second delete of an object a finalizer holds applies its policy again: `orphan` is added, and the collector orphans the dependents before the owner goes",
        "apiserver/pkg/registry/generic/registry/store.go (updateForGracefulDeletionAndFinalizers: pendingGraceful is false for a kind without graceful deletion, so deletionFinalizersForGarbageCollection runs again)",
        "kind ReplicaSet
kind Pod
at 0s create ReplicaSet web finalizer example.com/a
at 0s create Pod web-0 owner ReplicaSet/web controller
at 1s delete ReplicaSet web
at 2s delete ReplicaSet web propagation orphan
at 3s patch ReplicaSet web finalizer example.com/a-
run 6s
expect absent ReplicaSet web
expect exists Pod web-0
expect final Pod web-0 owners == 0
",
    ),
    (
        "a delete with a policy replaces the other policy's finalizer: `foreground` on an object marked `orphan` removes `orphan`, so the dependents are deleted",
        "apiserver/pkg/registry/generic/registry/store.go (deletionFinalizersForGarbageCollection: \"first remove both finalizers, add them back if needed\")",
        "kind ReplicaSet
kind Pod
at 0s create ReplicaSet web finalizer orphan
at 0s create Pod web-0 owner ReplicaSet/web controller block-owner-deletion
at 1s delete ReplicaSet web propagation foreground
run 5s
expect absent ReplicaSet web
expect absent Pod web-0
",
    ),
    (
        "an explicit `background` delete of an owner waiting in the foreground removes `foregroundDeletion`; with no finalizer left it is deleted at once",
        "apiserver/pkg/registry/generic/registry/store.go (updateForGracefulDeletionAndFinalizers: no pending finalizers and not graceful -> errDeleteNow)",
        "kind ReplicaSet
kind Pod
at 0s create ReplicaSet web
at 0s create Pod web-0 owner ReplicaSet/web controller block-owner-deletion finalizer example.com/x
at 1s delete ReplicaSet web propagation foreground
at 2s delete ReplicaSet web propagation background
run 5s
expect absent ReplicaSet web
expect deletes ReplicaSet web == 1 by 2s
expect exists Pod web-0
expect final Pod web-0 finalizers == 1
",
    ),
    (
        "a delete with `propagation background` of an object a controller's finalizer holds only marks it: the object goes when its last finalizer does, whoever's it is",
        "apiserver/pkg/registry/generic/registry/store.go (updateForGracefulDeletionAndFinalizers: pendingFinalizers is len(finalizers) != 0, every finalizer counted)",
        "kind Db
controller c for Db
  logic
    get db = Db key
    if db absent
      done
    if not db has-finalizer
      add-finalizer db
at 0s create Db web
at 5s delete Db web propagation background
run 10s
expect exists Db web
expect final Db web finalizers == 1
",
    ),
    (
        "a second delete without a policy, or with the policy the object already carries, writes nothing",
        "apiserver/pkg/registry/generic/registry/store.go (deletionFinalizersForGarbageCollection: equal finalizer sets -> no update)",
        "kind ReplicaSet
gc-delay 10s
at 0s create ReplicaSet web finalizer example.com/a
at 1s delete ReplicaSet web propagation foreground
at 2s delete ReplicaSet web propagation foreground
at 3s delete ReplicaSet web
run 4s
expect message \"no-op update of ReplicaSet/default/web\" == 2
expect final ReplicaSet web finalizers == 2
",
    ),
];

#[test]
fn each_deletion_rule_holds_in_its_scenario() {
    let failed: Vec<&str> = (RULES.iter())
        .filter(|(_, source, src)| {
            assert!(!source.is_empty());
            std::panic::catch_unwind(|| run(src)).is_err()
        })
        .map(|(rule, _, _)| *rule)
        .collect();
    assert!(failed.is_empty(), "rules that do not hold: {failed:#?}");
}
