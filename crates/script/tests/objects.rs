//! Objects as Kubernetes objects (issue 23), data-driven: each row is a Kubernetes rule, the
//! source file that states it, and a scenario whose expectations say what the rule gives; the
//! scenario must run and every expectation hold. Every row fails on the code before issue 23
//! (the statements or expectations did not exist, or the rule was not kept). Misuses are rows of
//! `MISUSES`: a script in, its located diagnostic out.

/// (rule, Kubernetes source, scenario).
const RULES: &[(&str, &str, &str)] = &[
    (
        "labels, annotations and named fields are kept as written; `spec N` stays the shorthand",
        "apimachinery/pkg/apis/meta/v1/types.go (ObjectMeta)",
        "kind Pod
at 0s create Pod ns/web-0 spec 2 labels app=web,tier=front annotations note=hi spec.image=v1 spec.replicas=3
run 1s
expect final Pod ns/web-0 spec == 2
expect final Pod ns/web-0 spec.image == \"v1\"
expect final Pod ns/web-0 spec.replicas == 3
expect final Pod ns/web-0 has-label app=web
expect final Pod ns/web-0 has-label tier
expect final Pod ns/web-0 lacks-label app=db
expect final Pod ns/web-0 generation == 1
",
    ),
    (
        "a JSON merge patch changes only the fields it names; `null` removes one",
        "RFC 7386; apimachinery/pkg/util/jsonmergepatch",
        "kind Db
at 0s create Db web spec.image=v1 spec.size=10
at 1s patch Db web spec.image=v2
at 2s patch Db web spec.size=null
run 3s
expect final Db web spec.image == \"v2\"
expect final Db web spec.size == null
expect creates == 1
",
    ),
    (
        "metadata.generation moves on spec changes only, not on labels, annotations or status",
        "apiextensions-apiserver/pkg/registry/customresource/strategy.go (PrepareForUpdate)",
        "kind Db
at 0s create Db web spec.image=v1
at 1s label Db web app=web
at 2s annotate Db web note=x
at 3s patch Db web status.ready=2
at 4s update Db web spec.image=v2
at 5s patch Db web spec.image=v2
run 6s
expect final Db web generation == 2
expect final Db web status.ready == 2
expect final Db web has-label app=web
",
    ),
    (
        "without the status subresource a write of the object takes its status and any change to it moves the generation; `/status` is not served (404)",
        "apiextensions-apiserver/pkg/registry/customresource/strategy.go (PrepareForCreate, PrepareForUpdate with a.status == nil); apiextensions-apiserver/pkg/apiserver/customresource_handler.go (no status storage without subresources.status)",
        "kind Db status-subresource off
at 0s create Db web spec.image=v1 status.phase=new
at 1s patch Db web spec.image=v2 status.phase=rolling
at 2s patch Db web status.ready=1
at 3s status Db web 5
run 4s
expect final Db web status.phase == \"rolling\"
expect final Db web status.ready == 1
expect final Db web generation == 3
expect final Db web status == 0
expect message \"update status Db/default/web failed: 404 not found\" == 1
",
    ),
    (
        "kubectl label: `key-` removes a label",
        "kubectl/pkg/cmd/label/label.go",
        "kind Pod
at 0s create Pod a labels app=web,tier=db
at 1s label Pod a tier- app=api
run 2s
expect final Pod a has-label app=api
expect final Pod a lacks-label tier
",
    ),
    (
        "a delete of an object with finalizers only sets deletionTimestamp; it goes when the last finalizer is removed",
        "apiserver/pkg/registry/generic/registry/store.go (Delete, deletionFinalizersForGarbageCollection)",
        "kind Db
at 0s create Db web finalizer example.com/a finalizer example.com/b
at 1s delete Db web
at 2s patch Db web finalizer example.com/a-
run 3s
expect exists Db web
expect final Db web finalizers == 1
",
    ),
    (
        "the object goes with its last finalizer",
        "apiserver/pkg/registry/generic/registry/store.go (Update: ShouldDeleteDuringUpdate)",
        "kind Db
at 0s create Db web finalizer example.com/a
at 1s delete Db web
at 2s patch Db web finalizer example.com/a-
run 3s
expect absent Db web
",
    ),
    (
        "no finalizer can be added once the object is being deleted (422)",
        "apimachinery/pkg/api/validation/objectmeta.go (ValidateObjectMetaUpdate)",
        "kind Db
at 0s create Db web finalizer example.com/a
at 1s delete Db web
at 2s patch Db web finalizer example.com/b
run 3s
expect final Db web finalizers == 1
expect message \"no new finalizers can be added if the object is being deleted\" == 1
",
    ),
    (
        "background propagation: the owner goes at once, the collector deletes its dependents after",
        "pkg/controller/garbagecollector/garbagecollector.go (attemptToDeleteItem)",
        "kind ReplicaSet
kind Pod
at 0s create ReplicaSet web
at 1s create Pod web-0 owner ReplicaSet/web controller block-owner-deletion
at 2s delete ReplicaSet web propagation background
run 5s
expect absent ReplicaSet web
expect absent Pod web-0
",
    ),
    (
        "orphan propagation: the collector removes the owner references, the dependents stay",
        "pkg/controller/garbagecollector/garbagecollector.go (orphanDependents)",
        "kind ReplicaSet
kind Pod
at 0s create ReplicaSet web
at 1s create Pod web-0 owner ReplicaSet/web controller
at 2s delete ReplicaSet web propagation orphan
run 5s
expect absent ReplicaSet web
expect exists Pod web-0
expect final Pod web-0 owners == 0
",
    ),
    (
        "foreground propagation: the owner waits with foregroundDeletion while a blocking dependent remains",
        "pkg/controller/garbagecollector/garbagecollector.go (processDeletingDependentsItem)",
        "kind ReplicaSet
kind Pod
at 0s create ReplicaSet web
at 1s create Pod web-0 owner ReplicaSet/web controller block-owner-deletion finalizer example.com/keep
at 2s delete ReplicaSet web propagation foreground
run 5s
expect exists ReplicaSet web
expect final ReplicaSet web finalizers == 1
expect final Pod web-0 finalizers == 1
",
    ),
    (
        "foreground propagation: once its blocking dependents are gone, the owner goes",
        "pkg/controller/garbagecollector/garbagecollector.go (processDeletingDependentsItem)",
        "kind ReplicaSet
kind Pod
at 0s create ReplicaSet web
at 1s create Pod web-0 owner ReplicaSet/web controller block-owner-deletion finalizer example.com/keep
at 2s delete ReplicaSet web propagation foreground
at 4s patch Pod web-0 finalizer example.com/keep-
run 8s
expect absent ReplicaSet web
expect absent Pod web-0
",
    ),
    (
        "foreground propagation is recursive: a dependent that owns others is deleted in the foreground too, so the owner waits for the whole chain",
        "pkg/controller/garbagecollector/garbagecollector.go (attemptToDeleteItem: waitingForDependentsDeletion and item.dependentsLength() != 0 -> DeletePropagationForeground)",
        "kind Deployment
kind ReplicaSet
kind Pod
at 0s create Deployment web
at 1s create ReplicaSet web-1 owner Deployment/web controller block-owner-deletion
at 1s create Pod web-1-a owner ReplicaSet/web-1 controller block-owner-deletion finalizer example.com/keep
at 2s delete Deployment web propagation foreground
run 6s
expect exists Deployment web
expect exists ReplicaSet web-1
expect final ReplicaSet web-1 finalizers == 1
expect final Pod web-1-a finalizers == 1
",
    ),
    (
        "foreground propagation is bottom-up: the chain goes once its last blocking dependent is gone",
        "pkg/controller/garbagecollector/garbagecollector.go (processDeletingDependentsItem: no blockingDependents -> removeFinalizer)",
        "kind Deployment
kind ReplicaSet
kind Pod
at 0s create Deployment web
at 1s create ReplicaSet web-1 owner Deployment/web controller block-owner-deletion
at 1s create Pod web-1-a owner ReplicaSet/web-1 controller block-owner-deletion finalizer example.com/keep
at 2s delete Deployment web propagation foreground
at 6s patch Pod web-1-a finalizer example.com/keep-
run 12s
expect absent Deployment web
expect absent ReplicaSet web-1
expect absent Pod web-1-a
",
    ),
    (
        "foreground propagation: a dependent with another owner that stays loses only its reference to the deleted owner",
        "pkg/controller/garbagecollector/garbagecollector.go (attemptToDeleteItem: len(solid) != 0 -> remove the waitingForDependentsDeletion references)",
        "kind ReplicaSet
kind Pod
at 0s create ReplicaSet a
at 0s create ReplicaSet b
at 1s create Pod web-0 owner ReplicaSet/a controller block-owner-deletion owner ReplicaSet/b
at 2s delete ReplicaSet a propagation foreground
run 6s
expect absent ReplicaSet a
expect exists Pod web-0
expect final Pod web-0 owners == 1
",
    ),
    (
        "an owner reference to an owner that does not exist: the collector deletes the dependent",
        "pkg/controller/garbagecollector/garbagecollector.go (attemptToDeleteItem: absent owner)",
        "kind ReplicaSet
kind Pod
at 0s create Pod web-0 owner ReplicaSet/gone
run 5s
expect absent Pod web-0
",
    ),
    (
        "a watch with a label selector: an object that stops matching arrives as DELETED, one that starts as ADDED, both as MODIFIED",
        "apiserver/pkg/storage/cacher/cache_watcher.go (convertToWatchEvent)",
        "kind ReplicaSet
kind Pod
controller rs for ReplicaSet
  watches Pod selector app=web none
  logic
    done
at 1s create Pod web-0 labels app=web
at 1s create Pod db-0 labels app=db
at 2s label Pod web-0 app=debug
at 3s label Pod db-0 app=web
at 4s annotate Pod db-0 note=x
at 5s label Pod web-0 tier=x
run 10s
expect watch-deleted rs Pod web-0 == 1
expect watch-added rs Pod db-0 == 1
expect watch-modified rs Pod db-0 == 1
expect watch-modified rs Pod web-0 == 0
expect watch-added rs Pod web-0 == 1
",
    ),
    (
        "a list with a label selector returns only the matching objects; `!=` and `!k` as selector.go reads them",
        "apiserver/pkg/storage/cacher/cacher.go (GetList with the request's predicate); apimachinery/pkg/labels/selector.go",
        "kind ReplicaSet
kind Pod
at 0s create Pod a labels app=web
at 0s create Pod b labels app=db
at 0s create Pod c labels tier=x
controller rs for ReplicaSet
  watches Pod selector app!=db,!tier none
  start 1s
  logic
    done
at 2s label Pod b app=web
run 5s
expect watch-added rs Pod == 1
expect watch-added rs Pod b == 1
",
    ),
    (
        "an owner in another namespace is treated as absent: the dependent is collected",
        "pkg/controller/garbagecollector/garbagecollector.go (attemptToDeleteItem, OwnerRefInvalidNamespace)",
        "kind ReplicaSet
kind Pod
at 0s create ReplicaSet a/web
at 0s create ReplicaSet b/web
at 1s create Pod a/web-0 owner ReplicaSet/b/web
at 1s create Pod b/web-0 owner ReplicaSet/b/web
run 5s
expect absent Pod a/web-0
expect exists Pod b/web-0
",
    ),
    (
        "a cluster-scoped kind's objects have no namespace; a namespaced dependent may have a cluster-scoped owner, collected when it goes",
        "pkg/controller/garbagecollector/graph_builder.go (addDependentToOwners: cluster-scoped owners can be referenced from any namespace); garbagecollector.go (isDangling: resourceDefaultNamespace)",
        "kind Node cluster-scoped
kind Pod
controller nodes for Node
  watches Node
  logic
    done
at 0s create Node n1 labels zone=a
at 1s create Pod web/web-0 owner Node/n1
at 1s create Pod web-1 owner Node/n1
at 2s delete Node n2
at 2s label Node n1 zone=b
run 3s
expect watch-added nodes Node n1 == 1
expect watch-modified nodes Node n1 == 1
expect exists Node n1
expect exists Pod web/web-0
expect exists Pod web-1
expect message \"create Node/n1 -> rv 2 (spec 0, status 0)\" == 1
expect final Node n1 has-label zone=b
",
    ),
    (
        "an object a controller's logic creates of a cluster-scoped kind has no namespace, as the timeline's does; its `get` names it without one, and a namespaced child of a cluster-scoped key is in `default`",
        "apimachinery/pkg/api/validation/objectmeta.go (ValidateObjectMetaAccessor: a namespace on an object of a cluster-scoped kind is \"not allowed on this type\"); client-go/tools/clientcmd/client_config.go (Namespace: `default` when none is given, listwatch's unqualified name)",
        "kind Node cluster-scoped
kind Pod
kind Agent
controller pods for Pod
  watches Pod
  logic
    get p = Pod key
    if p absent
      done
    get t = Node \"n1\"
    get n = Node key-node
    if t exists and n absent
      create Node key-node
    get s = Node \"shared\"
    if s absent
      create Node \"shared\"
    done
controller nodes for Node
  watches Node
  logic
    get n = Node key
    if n absent
      done
    get a = Agent key-agent
    if a absent
      create Agent key-agent
    done
at 0s create Node n1
at 1s create Pod web-0
at 2s update Pod web-0 spec 1
run 5s
expect exists Node web-0-node
expect exists Node shared
expect exists Agent n1-agent
expect exists Agent web-0-node-agent
expect exists Agent default/shared-agent
",
    ),
    (
        "a controller may make a cluster-scoped object the owner of a namespaced one, never a namespaced object the owner of a cluster-scoped one: SetControllerReference refuses it before any request",
        "controller-runtime pkg/controller/controllerutil/controllerutil.go (validateOwner: \"cluster-scoped resource must not have a namespace-scoped owner\"; a cluster-scoped owner has no namespace to compare)",
        "kind Node cluster-scoped
kind Pod
kind Agent
controller nodes for Node
  watches Node
  logic
    get n = Node key
    if n absent
      done
    get a = Agent key-agent
    if a absent
      create Agent key-agent owner n
    done
controller pods for Pod
  watches Pod
  logic
    get p = Pod key
    if p absent
      done
    get t = Node key-node
    if t absent
      create Node key-node owner p
    get s = Node \"spare\"
    if s exists
      adopt s owner p
    done
at 0s create Node n1
at 0s create Node spare
at 1s create Pod web-0
run 5s
expect exists Agent n1-agent
expect absent Node web-0-node
expect updates Node == 0
",
    ),
    (
        "a dependent of a cluster-scoped owner goes with it",
        "pkg/controller/garbagecollector/garbagecollector.go (attemptToDeleteItem: all owners dangling)",
        "kind Node cluster-scoped
kind Pod
at 0s create Node n1
at 1s create Pod web/web-0 owner Node/n1
at 2s delete Node n1
run 5s
expect absent Node n1
expect absent Pod web/web-0
",
    ),
    (
        "a cluster-scoped dependent of a namespaced owner is invalid: the collector warns and forgets it, and never collects it",
        "pkg/controller/garbagecollector/garbagecollector.go (isDangling: namespacedOwnerOfClusterScopedObjectErr, attemptToDeleteWorker: forgetItem); graph_builder.go (reportInvalidNamespaceOwnerRef)",
        "kind Node cluster-scoped
kind ReplicaSet
at 0s create ReplicaSet web
at 1s create Node n1 owner ReplicaSet/web
at 1s create Node n2 owner ReplicaSet/gone
at 2s delete ReplicaSet web
run 5s
expect absent ReplicaSet web
expect exists Node n1
expect exists Node n2
expect message \"Warning OwnerRefInvalidNamespace Node/n1: ownerRef ReplicaSet/default/web does not exist in namespace \\\"\\\"\" == 1
",
    ),
    (
        "an owner seen in another namespace gets the collector's Warning OwnerRefInvalidNamespace on the dependent",
        "pkg/controller/garbagecollector/graph_builder.go (addDependentToOwners, reportInvalidNamespaceOwnerRef)",
        "kind ReplicaSet
kind Pod
at 0s create ReplicaSet b/web
at 1s create Pod a/web-0 owner ReplicaSet/b/web
run 5s
expect absent Pod a/web-0
expect message \"Warning OwnerRefInvalidNamespace Pod/a/web-0: ownerRef ReplicaSet/b/web does not exist in namespace \\\"a\\\"\" == 1
",
    ),
    (
        "a selector's DELETED (the object left the selector) carries the previous object at the event's resourceVersion",
        "apiserver/pkg/storage/cacher/cache_watcher.go (convertToWatchEvent: !curObjPasses && oldObjPasses)",
        "kind ReplicaSet
kind Pod
controller rs for ReplicaSet
  watches Pod selector app=web none
  logic
    done
at 1s create Pod web-0 spec 1 labels app=web
at 2s update Pod web-0 spec 2 labels app=db
run 5s
expect watch-deleted rs Pod web-0 == 1
expect message \"DELETED default/web-0 rv 3 (spec 1)\" == 1
expect message \"DELETED default/web-0 rv 3 (spec 2)\" == 0
",
    ),
    (
        "set-based label selectors: `in`, `notin` (holds without the key), `k`, `!k` and `==`, spaces as kubectl writes them",
        "apimachinery/pkg/labels/selector.go (Parse, Requirement.Matches)",
        "kind ReplicaSet
kind Pod
controller sets for ReplicaSet
  watches Pod selector env in (prod, dev),!tier none
  logic
    done
controller others for ReplicaSet
  watches Pod selector env notin (prod),app none
  logic
    done
controller eq for ReplicaSet
  watches Pod selector app == web none
  logic
    done
at 1s create Pod a labels env=prod,app=web
at 1s create Pod b labels env=dev
at 1s create Pod c labels env=test,app=db
at 1s create Pod d labels app=web
at 1s create Pod e labels env=prod,tier=x
run 5s
expect watch-added sets Pod == 2
expect watch-added sets Pod a == 1
expect watch-added sets Pod b == 1
expect watch-added others Pod == 2
expect watch-added others Pod c == 1
expect watch-added others Pod d == 1
expect watch-added eq Pod == 2
expect watch-added eq Pod d == 1
",
    ),
    (
        "a `notin` selector's watch: a label moved into the set is DELETED, out of it ADDED",
        "apiserver/pkg/storage/cacher/cache_watcher.go (convertToWatchEvent); apimachinery/pkg/labels/selector.go",
        "kind ReplicaSet
kind Pod
controller rs for ReplicaSet
  watches Pod selector env notin (prod,staging) none
  logic
    done
at 1s create Pod a labels env=dev
at 1s create Pod b labels env=prod
at 2s label Pod a env=staging
at 3s label Pod b env-
run 5s
expect watch-deleted rs Pod a == 1
expect watch-added rs Pod b == 1
",
    ),
    (
        "field selectors on metadata.name and metadata.namespace filter lists and watches",
        "apimachinery/pkg/fields/selector.go (ParseSelector); apiserver/pkg/registry/generic (ObjectMetaFieldsSet)",
        "kind ReplicaSet
kind Pod
controller one for ReplicaSet
  watches Pod field-selector metadata.name=web-0 none
  logic
    done
controller rest for ReplicaSet
  watches Pod field-selector metadata.namespace!=kube-system selector app none
  logic
    done
at 0s create Pod web-0 labels app=web
at 0s create Pod kube-system/web-0 labels app=web
at 1s create Pod web-1 labels app=web
at 1s create Pod kube-system/dns labels app=dns
at 2s label Pod web-0 tier=x
run 5s
expect watch-added one Pod == 2
expect watch-modified one Pod == 1
expect watch-added rest Pod == 2
expect watch-added rest Pod web-1 == 1
",
    ),
    (
        "a probe's list with a label or field selector counts only what matches, from the watch cache and from etcd",
        "apiserver/pkg/storage/cacher/cacher.go (GetList filters with the request's predicate); apiserver/pkg/storage/etcd3/store.go (GetList, the same predicate)",
        "kind Pod
kind Job cache off
at 0s create Pod a labels app=web
at 0s create Pod b labels app=db
at 0s create Pod kube-system/c labels app=web
at 0s create Pod d labels app=web,tier=x
at 0s create Job j1 labels app=web
at 0s create Job j2 labels app=web
at 0s create Job j3 labels app=web
at 0s create Job j4 labels app=web
at 0s create Job j5
at 1s probe list Pod resourceVersion=\"0\" selector app=web
at 1s probe list Pod resourceVersion=\"0\" selector app=web field-selector metadata.namespace!=kube-system
at 1s probe list Pod resourceVersion=\"0\" selector tier
at 1s probe list Job selector app=web
run 2s
expect probe listed 3 items
expect probe listed 2 items
expect probe listed 1 items
expect probe listed 4 items
expect message \"probe 1: list Pod resourceVersion=\\\"0\\\" selector app=web field-selector metadata.namespace!=kube-system on apiserver\" == 1
",
    ),
    (
        "client-go's fake clientset filters a list by its label selector and ignores its field selector",
        "client-go/gentype/fake.go (alsoFakeLister.List: testing.ExtractFromListOptions, label.Matches)",
        "kind Pod
apiserver test fake
at 0s create Pod a labels app=web
at 0s create Pod b labels app=web
at 0s create Pod c labels app=db
at 1s probe list Pod selector app=web field-selector metadata.name=a
at 1s probe list Pod selector app=db
run 2s
expect probe listed 2 items
expect probe listed 1 items
",
    ),
    (
        "generateName: the apiserver appends five random characters, from the run's seed",
        "apiserver/pkg/storage/names/generate.go (SimpleNameGenerator)",
        "kind Pod
at 0s create Pod web- generate-name labels app=web
at 1s create Pod web- generate-name
run 2s
expect creates Pod == 2
expect message \"create Pod/default/web-jrbjn\" == 1
expect message \"create Pod/default/web-zpjrv\" == 1
",
    ),
];

#[test]
fn each_rule_holds_in_its_scenario() {
    for (rule, source, src) in RULES {
        let r = listwatch_script::run(src).unwrap_or_else(|d| {
            panic!(
                "{rule} ({source}):\n{}",
                listwatch_script::render(&d[0], "rule.lw", src)
            )
        });
        for (x, o) in &r.outcomes {
            assert!(
                o.pass,
                "{rule} ({source}): line {}: `{}` found {}",
                x.line, x.text, o.found
            );
        }
    }
}

/// (script, line, column, a part of the message or its help).
const MISUSES: &[(&str, usize, usize, &str)] = &[
    ("kind Pod\nat 0s update Pod a\n", 2, 7, "needs `spec N`"),
    ("kind Pod\nat 0s patch Pod a\n", 2, 7, "needs `spec N`"),
    (
        "kind Pod\nat 0s create Pod a color=red\n",
        2,
        20,
        "part of a write",
    ),
    (
        "kind Pod\nat 0s create Pod a spec.image\n",
        2,
        20,
        "has no value",
    ),
    (
        "kind Pod\nat 0s create Pod a spec..x=1\n",
        2,
        20,
        "empty part",
    ),
    (
        "kind Pod\nat 0s create Pod a labels app\n",
        2,
        27,
        "not `KEY=VALUE`",
    ),
    (
        "kind Pod\nat 0s create Pod a labels app-\n",
        2,
        27,
        "not `KEY=VALUE`",
    ),
    (
        "kind Pod\nat 0s create Pod a labels a!b=c\n",
        2,
        27,
        "not a valid label name",
    ),
    (
        "kind Pod\nat 0s create Pod a status.ready=1\n",
        2,
        20,
        "a create ignores the status",
    ),
    (
        "kind Pod\nat 1s patch Pod a spec.x=1 status.ready=1\n",
        2,
        28,
        "either the status",
    ),
    (
        "kind Pod\nat 0s create Pod a owner Pod\n",
        2,
        26,
        "not `KIND/NAME`",
    ),
    (
        "kind Pod\nat 0s create Pod a owner Nod/x\n",
        2,
        26,
        "unknown kind",
    ),
    ("kind Pod\nat 0s label Pod a\n", 2, 7, "at least one"),
    (
        "kind Pod\nat 0s delete Pod a propagation sideways\n",
        2,
        32,
        "unknown propagation policy",
    ),
    (
        "kind Pod\nexpect final Pod a spec.image < \"v1\"\n",
        2,
        33,
        "only with `==` and `!=`",
    ),
    (
        "kind Pod\nexpect final Pod a colour == 1\n",
        2,
        20,
        "unknown field",
    ),
    (
        "kind Pod\ncontroller c for Pod\n  watches Pod selector a=b=c\n  logic\n    done\n",
        3,
        27,
        "found '=', expected: ',' or 'end of string'",
    ),
    (
        "kind Pod\ncontroller c for Pod\n  watches Pod selector env in (a,b none\n  logic\n    done\n",
        3,
        36,
        "found 'none', expected: ',' or ')'",
    ),
    (
        "kind Pod\ncontroller c for Pod\n  watches Pod selector env notin a\n  logic\n    done\n",
        3,
        34,
        "found 'a' expected: '('",
    ),
    (
        "kind Pod\ncontroller c for Pod\n  watches Pod selector app=web,\n  logic\n    done\n",
        3,
        32,
        "expected: identifier after ','",
    ),
    (
        "kind Pod\ncontroller c for Pod\n  watches Pod selector env in (a,b/c)\n  logic\n    done\n",
        3,
        34,
        "not a valid label value",
    ),
    (
        "kind Pod\ncontroller c for Pod\n  watches Pod selector n>1\n  logic\n    done\n",
        3,
        25,
        "not modelled",
    ),
    (
        "kind Pod\ncontroller c for Pod\n  watches Pod field-selector spec.x=1\n  logic\n    done\n",
        3,
        30,
        "field label not supported: spec.x",
    ),
    (
        "kind Pod\ncontroller c for Pod\n  watches Pod field-selector metadata.name=a,metadata.name\n  logic\n    done\n",
        3,
        46,
        "can't understand 'metadata.name'",
    ),
    (
        "kind Node cluster-scoped\nat 0s create Node ns/n1\n",
        2,
        19,
        "is cluster-scoped: its objects have no namespace",
    ),
    (
        "kind Node cluster-scoped\nkind Pod\nat 0s create Pod a owner Node/ns/n1\n",
        3,
        26,
        "is cluster-scoped",
    ),
    (
        "kind Node cluster-scoped\nexpect exists Node ns/n1\n",
        2,
        20,
        "is cluster-scoped",
    ),
    (
        "kind Pod\nat 1s probe watch Pod resourceVersion=\"0\" selector app=web\n",
        2,
        43,
        "a probe's watch takes no selector",
    ),
    (
        "kind Pod\nat 1s probe list Pod resourceVersion=\"3\" exact selector app=web\n",
        2,
        48,
        "an Exact list with a selector is not modelled",
    ),
    (
        "kind Pod\nat 1s probe list Pod selector a=b=c\n",
        2,
        34,
        "found '=', expected: ',' or 'end of string'",
    ),
    (
        "kind Db status-subresource on\n",
        1,
        28,
        "expected `off`",
    ),
    (
        "kind Node cluster-scoped\ncontroller c for Node\n  watches Node in ns\n  logic\n    done\n",
        3,
        16,
        "is cluster-scoped",
    ),
    (
        "kind Node cluster-scoped\ncontroller c for Node\n  logic\n    create Node \"x\" in ns\n",
        4,
        21,
        "`Node` is cluster-scoped: its objects have no namespace",
    ),
    (
        "kind Node cluster-scoped\ncontroller c for Node\n  logic\n    get n = Node \"ns/n1\"\n    done\n",
        4,
        18,
        "is cluster-scoped",
    ),
    (
        "kind Node cluster-scoped\ncontroller c for Node\n  logic\n    list ns = Node selector zone=a in kube-system\n    done\n",
        4,
        36,
        "is cluster-scoped",
    ),
    (
        "kind Pod\nat 0s patch Pod a generate-name\n",
        2,
        19,
        "part of a write",
    ),
    (
        "kind Pod\nat 0s create Pod a labels app=we/b\n",
        2,
        27,
        "not a valid label value",
    ),
];

#[test]
fn each_misuse_gets_its_located_diagnostic() {
    for (src, line, col, text) in MISUSES {
        let d = match listwatch_script::parse(src) {
            Ok(_) => panic!("accepted: {src}"),
            Err(d) => d,
        };
        let first = &d[0];
        let said = format!(
            "{} {}",
            first.message,
            first.help.clone().unwrap_or_default()
        );
        assert!(
            (first.line, first.col) == (*line, *col) && said.contains(text),
            "{src:?}: got {}:{} {said:?}, want {line}:{col} {text:?}",
            first.line,
            first.col
        );
    }
}

/// Limits: a value over a label's 63 characters, more than `MAX_ENTRIES` clauses.
#[test]
fn limits_are_located_errors() {
    let long = "x".repeat(64);
    let src = format!("kind Pod\nat 0s create Pod a labels app={long}\n");
    let d = listwatch_script::parse(&src).unwrap_err();
    assert!(
        d[0].message.contains("limit of 63") && d[0].col == 27,
        "{:?}",
        d[0]
    );
    let many: Vec<String> = (0..65).map(|i| format!("spec.f{i}=1")).collect();
    let src = format!("kind Pod\nat 0s create Pod a {}\n", many.join(" "));
    let d = listwatch_script::parse(&src).unwrap_err();
    assert!(d[0].message.contains("at most 64"), "{:?}", d[0]);
}

/// "Why?" and the queue's last write say what a write of named fields wrote (the `ObjectFields`
/// event after it), not `(spec 0, status 0)` alone; a write of an object with no body reads as
/// before. Runs the rewritten operator of gallery 34, whose patch writes `spec.replsets.size`.
#[test]
fn a_write_of_named_fields_is_explained_with_them() {
    let src = include_str!("../../../scenarios/34-own-logic-lost-update.lw");
    let r = listwatch_script::run(src).expect("gallery 34 runs");
    let trace = r.sim.trace();
    let patch = (trace.iter())
        .position(|e| {
            matches!(
                e.kind,
                listwatch_core::EventKind::Store(listwatch_core::StoreEvent::Write {
                    op: listwatch_core::WriteOp::Patch,
                    ..
                })
            ) && matches!(e.actor, listwatch_core::Actor::Controller(_))
        })
        .expect("the operator patches") as u32;
    let said = listwatch_core::verdict::describe_event(&r.sim, patch);
    assert!(
        said.contains("(spec 0, status 0), holding ") && said.contains("spec.replsets.size=3"),
        "{said}"
    );
    let why = listwatch_core::verdict::explain(&r.sim, patch);
    assert!(why[0].1.ends_with(&said), "{why:#?}");

    let plain = listwatch_script::run("kind Pod\nat 0s create Pod a spec 2\nrun 1s\n").unwrap();
    let said = listwatch_core::verdict::describe_event(&plain.sim, 0);
    assert!(said.ends_with("-> rv 2 (spec 2, status 0)"), "{said}");
}
