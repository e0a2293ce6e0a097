//! (A part of `fidelity.rs`.) The reconcile language does what the same controller written in Go does: one test per rule
//! where it once did not (issue 24), a scenario in, its verdict and the trace's facts out. Each
//! test names the Go source (controller-runtime's client, client-go, the apiserver) it pins.

use listwatch_core::{
    ApiError, ControllerEvent, EventKind, ReconcileResult, Sim, StoreEvent, WriteOp,
};

use super::run;

/// The first error a script is refused with, rendered.
fn refused(src: &str) -> String {
    match listwatch_script::parse(src) {
        Ok(_) => panic!("accepted:\n{src}"),
        Err(d) => listwatch_script::render(&d[0], "test.lw", src),
    }
}

/// Each `(line, at, says)` of `table`, appended to `head`, is refused with a diagnostic that
/// names `at` (`line:column`) and says `says`.
fn each_refused_where_it_says(head: &str, table: &[(&str, &str, &str)]) {
    for (line, at, says) in table {
        let err = refused(&format!("{head}{line}"));
        assert!(err.contains(at) && err.contains(says), "{line}: {err}");
    }
}

/// How many writes of `op` the controllers made.
fn writes(sim: &Sim, op: WriteOp) -> usize {
    (sim.trace().iter())
        .filter(|e| matches!(e.kind, EventKind::Store(StoreEvent::Write { op: o, .. }) if o == op))
        .count()
}

/// apiextensions-apiserver `pkg/registry/customresource/strategy.go`: with the status
/// subresource, `PrepareForUpdate` of the object keeps the stored status and the status
/// strategy keeps everything but the status, and only a changed spec moves the generation;
/// controller-runtime `pkg/client/client.go` `Status().Patch` sends the status alone. The
/// advice "update the spec, then patch the status in the same pass" (here an observed
/// generation) converges: the status patch no longer writes back the spec read at the start,
/// which looped for ever with the user's spec reverted (spec 1, status 589 after a minute).
#[test]
fn a_status_patch_carries_only_the_status_and_the_spec_update_stays() {
    let sim = run("
kind Database
controller op for Database
  reconcile 200ms
  logic
    get db = Database key
    if db absent
      done
    if db.spec < 3
      update db spec 3
    if db.status != db.generation
      patch db status db.generation
at 1s create Database a spec 1
run 1m
expect final Database a spec == 3
expect final Database a status == 2
expect esr
");
    let db = sim.etcd().objects().values().next().expect("the database");
    assert_eq!(
        db.generation, 2,
        "the spec moved once, the status never moves it"
    );
    assert_eq!(writes(&sim, WriteOp::Update), 1, "one spec write, no loop");
    assert_eq!(writes(&sim, WriteOp::PatchStatus), 2, "observed 1, then 2");
}

/// controller-runtime's client has no call that writes spec and status at once: `Update` and
/// `Status().Update` are two requests, so the language asks for two lines.
#[test]
fn an_update_of_spec_and_status_together_is_refused_where_it_says_both() {
    let err = refused(
        "
kind Database
controller op for Database
  logic
    get db = Database key
    update db spec 3 status 3
",
    );
    assert!(err.contains("not both"), "{err}");
    assert!(err.contains("test.lw:6:22"), "{err}");
}

/// How the reconciles of a run ended, as their result's words.
fn ends(sim: &Sim) -> Vec<ReconcileResult> {
    (sim.trace().iter())
        .filter_map(|e| match e.kind {
            EventKind::Controller(ControllerEvent::ReconcileEnd { result, .. }) => Some(result),
            _ => None,
        })
        .collect()
}

/// An operator that creates its Pvc ignoring one kind of error, then sets its status; `b`'s
/// first reconcile is cut off before its writes.
fn ignoring(how: &str) -> listwatch_script::Report {
    let src = format!(
        "
kind Database
kind Pvc
controller op for Database
  reconcile 2s
  logic
    get db = Database key
    if db absent
      done
    create Pvc key-data owner db on-error {how}
    if db.status != 1
      update db status 1 on-error continue
at 0s create Pvc a-data
at 1s create Database a
at 3s create Database b
at 3100ms disconnect op for 5s
run 20s
expect final Database a status == 1
expect final Database b status == 1
"
    );
    listwatch_script::run(&src).expect("parses")
}

/// controller-runtime `pkg/client/interfaces.go`: `IgnoreAlreadyExists` and `IgnoreNotFound`
/// return nil for their one reason and the error itself otherwise (apimachinery
/// `pkg/api/errors/errors.go` `IsAlreadyExists`, `IsNotFound`, `IsConflict`). An existing Pvc is
/// ignored by `ignore-already-exists`; a refused connection is not: the reconcile returns the
/// error (and is retried), where `continue` swallows it, ends the reconcile done and the
/// status is never written.
#[test]
fn on_error_ignores_only_the_errors_it_names() {
    let refused = ReconcileResult::Error(ApiError::ConnectionRefused);
    let named = ignoring("ignore-already-exists");
    assert!(named.passed(), "the refused create is retried");
    assert!(
        ends(&named.sim).contains(&refused),
        "{:?}",
        ends(&named.sim)
    );
    // `continue` swallows the refusal: the reconcile is done, b never gets its status.
    let all = ignoring("continue");
    assert!(!all.passed());
    assert!(!ends(&all.sim).contains(&refused), "{:?}", ends(&all.sim));
    let err = refused_with("ignore-conflicts");
    assert!(err.contains("did you mean `ignore-conflict`?"), "{err}");
}

/// A script whose create says `on-error HOW`, refused.
fn refused_with(how: &str) -> String {
    refused(&format!(
        "kind Db\nkind Pvc\ncontroller op for Db\n  logic\n    get db = Db key\n    create Pvc key-data owner db on-error {how}\n"
    ))
}

/// Go runs `r.applied[req.Name] = db.Spec` after `r.Status().Update` returned nil: a memory
/// change waits for the writes before it, so a refused write leaves the memory as it was and the
/// retry writes again (controller-runtime `pkg/internal/controller/controller.go` retries the
/// key after the error; nothing else remembers for the reconciler).
#[test]
fn a_remember_after_a_write_holds_only_once_the_write_went_through() {
    run("
kind Database
controller op for Database
  reconcile 2s
  logic
    get db = Database key
    if db absent
      done
    if memory.applied != db.spec
      update db status db.spec
      remember applied = db.spec
at 1s create Database a spec 4
at 1100ms disconnect op for 3s
run 30s
expect final Database a status == 4
");
}

/// controller-runtime `pkg/client/typed_client.go`: `Update` decodes the response `Into(obj)`,
/// so the object holds the new resourceVersion and what the server stored; a second update of
/// it in the same reconcile succeeds and carries what the first one wrote (here the finalizer
/// the PUT of the spec must not take off again).
#[test]
fn a_second_update_of_the_same_object_sends_the_rv_the_first_got_back() {
    let sim = run("
kind Database
controller op for Database
  logic
    get db = Database key
    if db absent or db deleting
      done
    if not db has-finalizer
      add-finalizer db
    if db.spec < 5
      update db spec 5
    if db.status != 5
      update db status 5
at 1s create Database a spec 1
run 30s
expect final Database a spec == 5
expect final Database a status == 5
");
    let failed = (sim.trace().iter())
        .filter(|e| matches!(e.kind, EventKind::Store(StoreEvent::WriteFailed { .. })))
        .count();
    assert_eq!(failed, 0, "no 409 between the writes of one reconcile");
    let db = sim.etcd().objects().values().next().expect("the database");
    assert_eq!(
        db.finalizers, 1,
        "the spec's PUT keeps the finalizer added before it"
    );
    assert_eq!(db.generation, 2);
    let starts = (sim.trace().iter())
        .filter(|e| {
            matches!(
                e.kind,
                EventKind::Controller(ControllerEvent::ReconcileStart { writes: 3, .. })
            )
        })
        .count();
    assert_eq!(starts, 1, "one reconcile makes all three writes");
}

/// ESR (Sieve's and Acto's oracle) asks whether the desired state holds in etcd after the
/// writes settle; a bucket kept behind a finalizer has no ownerReference (it is external, as
/// kubebuilder's book's CronJob cleanup), so its create names no primary. The judgement follows
/// every write of a kind the logic or `desired` reads, not only the primary and what it owns.
#[test]
fn esr_is_judged_again_after_a_write_of_an_object_without_an_owner() {
    run("
kind Database
kind Bucket
controller op for Database
  logic
    get db = Database key
    if db absent
      done
    get bucket = Bucket key-bucket
    if db deleting
      if bucket exists
        delete bucket
      remove-finalizer db
      done
    if not db has-finalizer
      add-finalizer db
    if bucket absent
      create Bucket key-bucket
  desired
    get db = Database key
    get bucket = Bucket key-bucket
    require bucket exists
at 1s create Database a
run 30s
expect final Bucket a-bucket spec == 0
expect esr
");
}

/// ESR asks again only for the keys whose last judgment read the written object, so every
/// key's state at the end is what a judgment of etcd now gives: over the whole gallery, and
/// where the only write that makes a key's desired state hold is a second controller's create,
/// with no owner, of a name no object had when the key was first judged.
#[test]
fn esr_re_judges_exactly_the_keys_that_read_a_write() {
    let two = "
kind Parent
kind Child
kind Other
controller kids for Parent
  logic
    get p = Parent key
    if p absent
      done
    scale Child owned-by p to p.spec
  desired
    get p = Parent key
    get first = Other key-0-x
    require first exists
controller grand for Child
  logic
    get c = Child key
    get x = Other key-x
    if c absent or x exists
      done
    create Other key-x
at 0s create Parent a spec 3
at 0s create Parent b spec 1
at 5s update Parent b spec 4
run 1m
expect esr
";
    let sim = run(two);
    assert!(
        listwatch_core::esr::stale_keys(&sim).is_empty(),
        "{:?}",
        listwatch_core::esr::stale_keys(&sim)
    );
    for (name, src) in listwatch_script::gallery::GALLERY {
        let Ok(report) = listwatch_script::run(src) else {
            continue;
        };
        let stale = listwatch_core::esr::stale_keys(&report.sim);
        assert!(stale.is_empty(), "{name}: {stale:?}");
    }
}

/// A write refused on a cut link got no answer, so its line names no HTTP status (client-go
/// logs `dial tcp ...: connect: connection refused`, no code); it printed "failed: 0 connection
/// refused".
#[test]
fn a_refused_write_prints_no_status_code() {
    let sim = run("
kind Db
controller op for Db
  logic
    get db = Db key
    if db absent
      done
    update db status 1 on-error continue
at 1s disconnect op after 0 writes for 100ms
at 1s create Db a
run 10s
");
    let lines: Vec<String> = (sim.trace().iter())
        .filter(|e| matches!(e.kind, EventKind::Store(StoreEvent::WriteFailed { .. })))
        .map(|e| listwatch_core::describe(&e.kind, &sim))
        .collect();
    assert!(!lines.is_empty(), "the write was refused");
    for l in &lines {
        assert!(l.ends_with("failed: connection refused"), "{l}");
    }
}

/// Two refusals armed for one controller both stay armed: each refuses the write it names
/// (the second used to replace the first, so the explorer's pair of refusals in one reconcile
/// was one).
#[test]
fn two_armed_refusals_each_refuse_their_write() {
    let sim = run("
kind Db
controller op for Db
  logic
    get db = Db key
    if db absent
      done
    add-finalizer db on-error continue
    update db status 1 on-error continue
at 1s disconnect op after 0 writes for 0s
at 1s disconnect op after 1 writes for 0s
at 1s create Db a
run 2s
");
    let first: Vec<WriteOp> = (sim.trace().iter())
        .filter_map(|e| match e.kind {
            EventKind::Store(StoreEvent::WriteFailed {
                op,
                error: ApiError::ConnectionRefused,
                ..
            }) => Some(op),
            _ => None,
        })
        .collect();
    assert_eq!(
        first.len(),
        2,
        "both writes of the first reconcile refused: {first:?}"
    );
}

/// controller-runtime `pkg/client/typed_client.go` `Update`: the response is decoded `Into` the
/// object only on success, so after a failed (ignored) update the next one sends the RV of the
/// last update that went through, not the one read at the start (which got a 409).
#[test]
fn after_a_failed_update_the_next_sends_the_last_good_response_rv() {
    let sim = run("
kind Db
controller op for Db
  logic
    get db = Db key
    if db absent or db.spec == 5
      done
    update db spec 4
    update db spec 5 on-error continue
    update db status 9
at 1s disconnect op after 1 writes for 0s
at 1s create Db a
run 2s
expect final Db a status == 9
");
    let conflicts = (sim.trace().iter())
        .filter(|e| {
            matches!(
                e.kind,
                EventKind::Store(StoreEvent::WriteFailed {
                    error: ApiError::Conflict,
                    ..
                })
            )
        })
        .count();
    assert_eq!(
        conflicts, 0,
        "the third write carries write 1's response RV"
    );
}

/// A condition is its whole line: words after it are an error at the first of them, not
/// silently dropped (`if 3 > 2 > 1` ran as `if 3 > 2`).
#[test]
fn a_condition_is_its_whole_line() {
    let head = "kind Db\ncontroller op for Db\n  logic\n    get db = Db key\n";
    let table = [
        ("    if 3 > 2 > 1\n      done\n", "5:14"),
        ("    if db.spec > 5 < 3\n      done\n", "5:20"),
        ("    if 1 < 2 garbage\n      done\n", "5:14"),
        (
            "    if db absent\n      done\n    else if db exists extra\n      done\n",
            "7:23",
        ),
    ];
    for (lines, at) in table {
        let err = refused(&format!("{head}{lines}"));
        assert!(
            err.contains(at) && err.contains("at the end of the statement"),
            "{lines}: {err}"
        );
    }
}

/// Arithmetic in the language as Go's `int64` has it (`/` and `%` truncate towards zero), with
/// `min`, `max` and parentheses; a division by zero or an overflow is none (compares false with
/// any number), where Go would panic or wrap.
#[test]
fn arithmetic_computes_values_with_go_s_integer_rules() {
    run("
kind Database
kind Pod
controller op for Database
  logic
    get db = Database key
    if db absent
      done
    scale Pod owned-by db to min(db.spec * 2, 5)
    if db.status != (db.spec + 1) * 10 - -7 / 2 % 4
      update db status (db.spec + 1) * 10 - -7 / 2 % 4
    if db.spec / 0 == 0 or db.spec / 0 < 1 or max(db.spec, 0) - 1000000000 * 1000000000 * 1000000000 < 0
      error
at 1s create Database a spec 2
at 1s create Database b spec 1
run 30s
expect final Database a status == 33
expect final Database b status == 23
expect creates Pod == 6
");
}

/// Arithmetic's limits and mistakes, each located at the word at fault.
#[test]
fn arithmetic_errors_name_their_place() {
    let head = "kind Db\ncontroller op for Db\n  logic\n    get db = Db key\n";
    let table = [
        ("    update db status (db.spec + 1\n", "5:", "expected `)`"),
        ("    update db status min(db.spec 1)\n", "5:34", "expected `,`"),
        ("    update db status db.spec +\n", "5:", "a value after the operator"),
        ("    update db status ((((((1)))))) \n", "5:", "nested deeper than 4"),
        (
            "    update db status 1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1\n",
            "5:",
            "is not a whole number",
        ),
        (
            "    update db status 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1\n",
            "5:",
            "more than 16 operators",
        ),
        ("    if db.spec + 1 exists\n      done\n", "5:", "unknown comparison"),
    ];
    each_refused_where_it_says(head, &table);
}

/// Field paths (issue 24): a reconcile reads named fields, strings and integers, of the object
/// model (`db.spec.replicas`, `db.metadata.labels.app`) and writes one named field as a merge
/// patch (`patch NAME status.ready = V`, to `/status`) or an update at the RV read: only that
/// field changes (the user's `spec.image` and label survive the controller's writes), a status
/// field leaves `metadata.generation` alone, a spec field moves it
/// (apiextensions-apiserver `pkg/registry/customresource/strategy.go`, `PrepareForUpdate`).
#[test]
fn field_paths_read_and_write_named_fields() {
    run("
kind Database
controller op for Database
  logic
    get db = Database key
    if db absent
      done
    if db.metadata.labels.tier == \"gold\" and db.spec.replicas < 3
      update db spec.replicas = db.spec.replicas + 2
      done
    if db.status.readyReplicas != db.spec.replicas
      patch db status.readyReplicas = db.spec.replicas
    if db.status.phase != \"Ready\"
      patch db status.phase = \"Ready\"
    if db.metadata.labels.app != \"db\"
      update db metadata.labels.app = \"db\"
at 1s create Database a spec.replicas=1 spec.image=v1 labels tier=gold
at 1s create Database b spec.replicas=4
run 30s
expect final Database a spec.replicas == 3
expect final Database a spec.image == \"v1\"
expect final Database a status.readyReplicas == 3
expect final Database a status.phase == \"Ready\"
expect final Database a generation == 2
expect final Database a has-label tier=gold
expect final Database a has-label app=db
expect final Database b spec.replicas == 4
expect final Database b status.readyReplicas == 4
expect final Database b generation == 1
expect final Database b has-label app=db
");
}

/// Field paths' mistakes, each located at the word at fault.
#[test]
fn field_path_errors_name_their_place() {
    let head = "kind Db\ncontroller op for Db\n  logic\n    get db = Db key\n";
    let table = [
        (
            "    if db.spec.image < \"v2\"\n      done\n",
            "5:",
            "compares only with",
        ),
        (
            "    update db status.x = \"a\" + 1\n",
            "5:",
            "arithmetic is on numbers",
        ),
        ("    patch db spec. = 1\n", "5:", "a field's key is"),
        ("    patch db status.ready 1\n", "5:", "expected `=`"),
        ("    patch db status.ready = \n", "5:", "a value"),
    ];
    each_refused_where_it_says(head, &table);
}

/// `list NAME = KIND selector SEL [in NS] [live]` (issue 24): controller-runtime's
/// `r.List(ctx, &pods, client.MatchingLabels{...}, client.InNamespace(ns))`, from the informer
/// cache (or etcd with `live`), matched as `apimachinery/pkg/labels/selector.go` `Matches` does:
/// `app!=web` holds for a pod without `app`, `tier` needs the key.
#[test]
fn a_selector_list_reads_by_labels_and_namespace() {
    run("
kind Database
kind Pod
controller op for Database
  logic
    get db = Database key
    if db absent
      done
    list web = Pod selector app=web
    list other = Pod selector app!=web,tier in prod
    list fresh = Pod selector app=web,!tier live
    if db.status.web != web.count
      patch db status.web = web.count
    if db.status.other != other.count
      patch db status.other = other.count
    if db.status.fresh != fresh.alive
      patch db status.fresh = fresh.alive
    requeue after 1s
at 0s create Database db
at 1s create Pod prod/a labels app=web
at 1s create Pod prod/b labels app=web,tier=x
at 1s create Pod prod/c labels app=db,tier=y
at 1s create Pod prod/d
at 1s create Pod prod/g labels tier=w
at 1s create Pod dev/e labels app=web
at 1s create Pod dev/f labels tier=z
run 10s
expect final Database db status.web == 3
expect final Database db status.other == 2
expect final Database db status.fresh == 2
");
}

/// A selector list's mistakes, each located at the word at fault.
#[test]
fn selector_list_errors_name_their_place() {
    let head = "kind Db\nkind Pod\ncontroller op for Db\n  logic\n    get db = Db key\n";
    let table = [
        (
            "    list p = Pod\n",
            "6:",
            "expected `owned-by OWNER` or `selector SELECTOR`",
        ),
        ("    list p = Pod selector\n", "6:", "a label selector"),
        (
            "    list p = Pod selector app=web in\n",
            "6:",
            "a namespace",
        ),
        (
            "    list p = Pod selector app=web in 9x\n",
            "6:38",
            "not a valid namespace name",
        ),
        ("    list p = Pod selector app=we/b\n", "6:", "label"),
        (
            "    list p = Pod selector app=web\n    if p.spec == 1\n      done\n",
            "7:",
            "is a list",
        ),
    ];
    each_refused_where_it_says(head, &table);
}

/// ESR is judged again after a write of any object of a kind a judgment listed by selector:
/// the pod that goes (and no name the judgment read) makes the desired state hold.
#[test]
fn esr_is_judged_again_after_a_write_of_a_kind_listed_by_selector() {
    run("
kind Database
kind Pod
controller op for Database
  logic
    get db = Database key
  desired
    list web = Pod selector app=web
    require web.count == 0
at 0s create Pod stray labels app=web
at 0s create Database a
at 5s delete Pod stray
run 30s
expect esr
");
}

/// `for p in LIST [where COND]` (issue 24): Go's `for _, p := range pods.Items { if ... }`,
/// one write a step per item the filter keeps; the loop variable reads each item's fields.
#[test]
fn a_for_loop_writes_each_item_its_filter_keeps() {
    run("
kind Database
kind Pod
controller op for Database
  logic
    get db = Database key
    if db absent
      done
    list web = Pod selector app=web
    for p in web where p.metadata.labels.tier != \"gold\"
      patch p metadata.labels.tier = \"gold\"
    get x = Pod key-x
    if x absent
      create Pod key-x owner db
    list owned = Pod owned-by db
    for c in owned
      if c.status.seen != db.spec
        patch c status.seen = db.spec
    requeue after 1s
at 0s create Database db spec 7
at 1s create Pod a labels app=web
at 1s create Pod b labels app=web,tier=gold
at 1s create Pod c labels app=db
run 10s
expect final Pod a has-label tier=gold
expect final Pod b has-label tier=gold
expect final Pod c lacks-label tier
expect final Pod db-x status.seen == 7
");
}

/// A loop's limits and mistakes, each located.
#[test]
fn for_loop_errors_name_their_place() {
    let head = "kind Db\nkind Pod\ncontroller op for Db\n  logic\n    get db = Db key\n    list ps = Pod owned-by db\n";
    let table = [
        ("    for p in db\n      done\n", "7:14", "one object"),
        ("    for p ps\n      done\n", "7:", "expected `in`"),
        ("    for p in ps\n      for q in ps\n        done\n", "8:7", "loops do not nest"),
        ("    for p in ps\n    done\n", "7:5", "needs an indented body"),
        ("    for p in ps\n      remember n = p.spec\n", "8:7", "inside a `for`"),
        (
            "    for p in ps\n      delete p\n      delete p\n      delete p\n      delete p\n      delete p\n",
            "7:",
            "more than the limit of 4096 writes",
        ),
    ];
    each_refused_where_it_says(head, &table);
}

/// `set-condition` (issue 24) is apimachinery `pkg/api/meta/conditions.go` `SetStatusCondition`
/// then `r.Status().Update`: the reason, message and observedGeneration follow every call,
/// `lastTransitionTime` moves only when the status changes (`Progressing` at 1s stays while
/// its reason changes at 3s; `Ready` moves False to True at 3s), the write goes to `/status`
/// at the RV read, and a call that changes nothing writes nothing. A condition reads back as
/// `NAME.status.conditions.TYPE` (its status) and `.TYPE.reason`, ... And the observedGeneration
/// idiom: `update db status.observedGeneration = db.metadata.generation`.
#[test]
fn set_condition_moves_the_transition_time_only_when_the_status_changes() {
    let sim = run("
kind Database
controller op for Database
  reconcile 100ms
  logic
    get db = Database key
    if db absent
      done
    if db.status.observedGeneration != db.metadata.generation
      update db status.observedGeneration = db.metadata.generation
    if db.spec.replicas < 3
      set-condition db Ready False reason Scaling message \"waiting for replicas\"
      set-condition db Progressing True reason Scaling
      done
    set-condition db Ready True reason Provisioned
    set-condition db Progressing True reason Done
    if db.status.conditions.Ready == \"True\" and db.status.conditions.Ready.reason == \"Provisioned\"
      if db.status.seenReady != 1
        patch db status.seenReady = 1
at 1s create Database a spec.replicas=1
at 3s update Database a spec.replicas=3
run 10s
expect final Database a status.conditions.Ready == \"True\"
expect final Database a status.conditions.Ready.reason == \"Provisioned\"
expect final Database a status.conditions.Ready.message == null
expect final Database a status.conditions.Ready.observedGeneration == 2
expect final Database a status.conditions.Progressing.reason == \"Done\"
expect final Database a status.observedGeneration == 2
expect final Database a status.seenReady == 1
expect final Database a generation == 2
expect esr
");
    let db = sim.etcd().objects().values().next().expect("the database");
    let names = sim.names();
    let field = |k: &str| {
        let key = names.get(k).expect(k);
        listwatch_core::object::get(&db.body.data().status, key).copied()
    };
    let time = |t: &str| match field(&format!("conditions.{t}.lastTransitionTime")) {
        Some(listwatch_core::object::Value::Int(ms)) => ms,
        other => panic!("{t}: {other:?}"),
    };
    let progressing = time("Progressing");
    let ready = time("Ready");
    assert!(
        (1000..2000).contains(&progressing),
        "set at the first reconcile, kept when only its reason changed: {progressing}"
    );
    assert!(
        (3000..4000).contains(&ready),
        "moved when Ready went False to True: {ready}"
    );
    // Reconciles after the last change set the same conditions: no more writes.
    assert_eq!(
        writes(&sim, WriteOp::UpdateStatus),
        6,
        "three writes at 1s (observedGeneration, Ready, Progressing), three at 3s"
    );
}

/// A `set-condition`'s mistakes, each located at the word at fault.
#[test]
fn set_condition_errors_name_their_place() {
    let head = "kind Db\ncontroller op for Db\n  logic\n    get db = Db key\n";
    let table = [
        (
            "    set-condition db Ready Yes\n",
            "5:28",
            "condition status",
        ),
        (
            "    set-condition db Re/ady True\n",
            "5:22",
            "not a condition type",
        ),
        (
            "    set-condition db Ready True reason 9lives\n",
            "5:40",
            "not a condition reason",
        ),
        (
            "    set-condition db Ready True message hi\n",
            "5:41",
            "in quotes",
        ),
        ("    set-condition dd Ready True\n", "5:19", "not bound"),
    ];
    each_refused_where_it_says(head, &table);
}

/// `count(VAR in LIST [where COND])` and `sum(VALUE for VAR in LIST [where COND])` (issue 24):
/// Go's loop over `pods.Items` that counts or adds up what its `if` keeps (an absent field adds
/// its zero value, as a Go struct's field does). Both read the list as the reconcile read it.
#[test]
fn count_and_sum_fold_a_list_with_a_filter() {
    run("
kind Database
kind Pod
controller op for Database
  logic
    get db = Database key
    if db absent
      done
    list pods = Pod selector app=web
    if db.status.ready != count(p in pods where p.status.ready == 1)
      patch db status.ready = count(p in pods where p.status.ready == 1)
    if db.status.cpu != sum(q.spec.cpu for q in pods where q.metadata.labels.tier != \"db\")
      patch db status.cpu = sum(q.spec.cpu for q in pods where q.metadata.labels.tier != \"db\")
    if count(r in pods) >= 4 and db.status.all != sum(s.spec.cpu * 2 for s in pods)
      patch db status.all = sum(s.spec.cpu * 2 for s in pods)
    requeue after 1s
at 0s create Database db
at 1s create Pod a labels app=web spec.cpu=2
at 1s create Pod b labels app=web,tier=db spec.cpu=5
at 1s create Pod c labels app=web spec.cpu=7
at 1s create Pod d labels app=web
at 1s create Pod e labels app=db spec.cpu=100
at 2s patch Pod a status.ready=1
at 2s patch Pod b status.ready=1
at 2s patch Pod e status.ready=1
run 10s
expect final Database db status.ready == 2
expect final Database db status.cpu == 9
expect final Database db status.all == 28
");
}

/// Aggregates' mistakes, each located.
#[test]
fn aggregate_errors_name_their_place() {
    let head = "kind Db\nkind Pod\ncontroller op for Db\n  logic\n    get db = Db key\n    list ps = Pod owned-by db\n";
    let table = [
        (
            "    if count(p in db) > 1\n      done\n",
            "7:19",
            "one object",
        ),
        (
            "    if sum(p.spec in ps) > 1\n      done\n",
            "7:8",
            "needs `VALUE for VAR in LIST`",
        ),
        (
            "    if count(p ps) > 1\n      done\n",
            "7:",
            "expected `in`",
        ),
        (
            "    if count(p in ps where count(q in ps) > 0) > 1\n      done\n",
            "7:28",
            "do not nest",
        ),
        (
            "    if count(db in ps) > 1\n      done\n",
            "7:14",
            "already bound",
        ),
        (
            "    if count(p in ps where p.spec > 1 > 0\n      done\n",
            "7:",
            "expected `)`",
        ),
    ];
    each_refused_where_it_says(head, &table);
}

/// `get` by any name (issue 24): controller-runtime's `r.Get(ctx, types.NamespacedName{Namespace:
/// ns, Name: fmt.Sprintf("shard-%d", db.Spec.Shard)}, &cm)`: a quoted name, in another namespace
/// (`"ns/name"` or `in NS`), with values in braces; `key-{VALUE}` the same after the key's name.
/// A value that is none names nothing (the object reads as absent, a create is skipped); a
/// create makes the object in the namespace its name says.
#[test]
fn get_and_create_by_names_built_from_values_and_in_other_namespaces() {
    run("
kind Database
kind ConfigMap
controller op for Database
  logic
    get db = Database key
    if db absent
      done
    get settings = ConfigMap \"settings\" in kube-system
    get shared = ConfigMap \"kube-system/shard-{db.spec.shard}\"
    get mine = ConfigMap key-{db.spec.shard}
    if mine absent
      create ConfigMap key-{db.spec.shard} spec settings.spec owner db
    if shared absent
      create ConfigMap \"shard-{db.spec.shard}\" in kube-system spec 5
    if shared exists and db.status.shared != shared.spec
      patch db status.shared = shared.spec
    get missing = ConfigMap \"x-{db.spec.nothing}-z\"
    if missing absent
      create ConfigMap \"y-{db.spec.nothing}-z\"
    requeue after 1s
at 0s create ConfigMap kube-system/settings spec 42
at 0s create ConfigMap default/x--z
at 1s create Database a spec.shard=3
run 10s
expect final ConfigMap a-3 spec == 42
expect final ConfigMap kube-system/shard-3 spec == 5
expect final Database a status.shared == 5
expect creates ConfigMap == 4
");
}

/// Built names' mistakes, each located.
#[test]
fn built_name_errors_name_their_place() {
    let head = "kind Db\nkind Cm\ncontroller op for Db\n  logic\n    get db = Db key\n";
    let table = [
        ("    get c = Cm \"a-{db.spec\"\n", "6:16", "never closes"),
        ("    get c = Cm \"a-{nope.spec}\"\n", "6:20", "not bound"),
        ("    get c = Cm \"A_b\"\n", "6:", "not a valid object name"),
        (
            "    get c = Cm \"ns/a\" in other\n",
            "6:",
            "already says its namespace",
        ),
        ("    get c = Cm key-{}\n", "6:", "one word"),
        (
            "    get c = Cm \"{db.spec}{db.spec}{db.spec}{db.spec}{db.spec}\"\n",
            "6:",
            "more than 4 values",
        ),
        (
            "    get c = Cm settings\n",
            "6:16",
            "does not name an object",
        ),
        (
            "    create Cm \"a\" in 9x\n",
            "6:",
            "not a valid namespace name",
        ),
    ];
    each_refused_where_it_says(head, &table);
}

/// Named finalizers and owner references (issue 24), one request each: controller-runtime
/// `pkg/controller/controllerutil/controllerutil.go` `AddFinalizer`/`RemoveFinalizer` (then
/// `r.Update`, only when the list changed), `SetControllerReference` (`adopt`: the adopted pod
/// then goes with its owner, as the garbage collector deletes a dependent whose owners are all
/// gone, `pkg/controller/garbagecollector`) and `RemoveControllerReference` (`release`: the pod
/// stays). The external bucket is cleaned up before the finalizers go, and the object goes with
/// the last one (apimachinery `pkg/api/validation/objectmeta.go`).
#[test]
fn named_finalizers_and_owner_references_are_one_request_each() {
    let sim = run("
kind Database
kind Bucket
kind Pod
controller op for Database
  reconcile 100ms
  logic
    get db = Database key
    if db absent
      done
    get bucket = Bucket key-bucket
    get stray = Pod key-stray
    get old = Pod key-old
    if db deleting
      if bucket exists
        delete bucket
        requeue after 1s
      remove-finalizer db example.com/bucket
      if db has-finalizer example.com/cleanup
        remove-finalizer db example.com/cleanup
      done
    add-finalizer db example.com/cleanup
    add-finalizer db example.com/bucket
    if bucket absent
      create Bucket key-bucket
    adopt stray owner db
    release old owner db
    requeue after 2s
at 0s create Pod a-stray
at 0s create Database a
at 1s create Pod a-old owner Database/a controller
at 5s delete Database a
run 20s
expect absent Database a
expect absent Bucket a-bucket
expect absent Pod a-stray
expect exists Pod a-old
expect final Pod a-old owners == 0
");
    assert_eq!(
        writes(&sim, WriteOp::AddFinalizer),
        2,
        "each finalizer once"
    );
    assert_eq!(writes(&sim, WriteOp::RemoveFinalizer), 1);
    assert_eq!(writes(&sim, WriteOp::RemoveLastFinalizer), 1);
    // They print as what they are (issue 24), not as a plain `update`.
    assert_eq!(writes(&sim, WriteOp::Adopt), 1, "one adopt");
    assert_eq!(writes(&sim, WriteOp::Release), 1, "one release");
    assert_eq!(writes(&sim, WriteOp::Update), 0);
}

/// Named finalizers' and owner references' mistakes, each located.
#[test]
fn finalizer_and_owner_errors_name_their_place() {
    let head = "kind Db\nkind Pod\ncontroller op for Db\n  logic\n    get db = Db key\n    get p = Pod key-p\n";
    let table = [
        (
            "    add-finalizer db Example.com/x\n",
            "7:22",
            "not a finalizer name",
        ),
        (
            "    add-finalizer db example.com/\n",
            "7:22",
            "not a finalizer name",
        ),
        (
            "    if db has-finalizer a/-b\n      done\n",
            "7:25",
            "not a finalizer name",
        ),
        ("    adopt p db\n", "7:13", "expected `owner`"),
        ("    release p owner q\n", "7:21", "not bound"),
    ];
    each_refused_where_it_says(head, &table);
}

/// An operator whose one write (`write`, with `on-error HOW`) is made about 0.7 s into the
/// reconcile of `a` that starts at 3 s; `fault` makes it fail.
fn one_failing_write(write: &str, how: &str, fault: &str) -> Sim {
    let src = format!(
        "
kind Database
kind Pvc
controller op for Database
  reconcile 2s
  logic
    get db = Database key
    if db absent
      done
    get data = Pvc key-data
    {write} on-error {how}
    if db.status != 1
      update db status 1 on-error continue
at 0s create Pvc a-data
at 3s create Database a
{fault}
run 20s
"
    );
    match listwatch_script::run(&src) {
        Ok(r) => r.sim,
        Err(d) => panic!("{}", listwatch_script::render(&d[0], "test.lw", &src)),
    }
}

/// controller-runtime `pkg/client/interfaces.go` `IgnoreNotFound` (and apimachinery
/// `pkg/api/errors/errors.go` `IsNotFound`, `IsConflict`): each kind of `on-error` swallows
/// only its own error and returns every other; a refused connection (no `StatusError` at all)
/// is swallowed by `continue` alone. A 404: the Pvc is deleted between the read and the
/// delete; a 409: the Database is updated between the read and the update at its RV; a
/// refusal: the controller is cut off for 5 s. Each row: whether a reconcile ended with the
/// fault's error.
#[test]
fn each_on_error_kind_swallows_only_its_error() {
    let not_found = (
        "delete data",
        "at 3300ms delete Pvc a-data",
        ApiError::NotFound,
    );
    let conflict = (
        "update db spec.seen = 1",
        "at 3300ms update Database a spec.user=1",
        ApiError::Conflict,
    );
    let refused = (
        "update db spec.seen = 1",
        "at 3300ms disconnect op for 5s",
        ApiError::ConnectionRefused,
    );
    let table = [
        ("return", not_found, true),
        ("return", conflict, true),
        ("return", refused, true),
        ("ignore-not-found", not_found, false),
        ("ignore-not-found", conflict, true),
        ("ignore-not-found", refused, true),
        ("ignore-conflict", not_found, true),
        ("ignore-conflict", conflict, false),
        ("ignore-conflict", refused, true),
        ("ignore-already-exists", not_found, true),
        ("ignore-already-exists", conflict, true),
        ("ignore-already-exists", refused, true),
        ("continue", not_found, false),
        ("continue", conflict, false),
        ("continue", refused, false),
    ];
    for (how, (write, fault, error), returned) in table {
        let sim = one_failing_write(write, how, fault);
        let ends = ends(&sim);
        assert_eq!(
            ends.contains(&ReconcileResult::Error(error)),
            returned,
            "{write} on-error {how}, {fault}: {ends:?}"
        );
        // The fault happened: the write failed with that error.
        assert!(
            (sim.trace().iter())
                .any(|e| matches!(e.kind, EventKind::Store(StoreEvent::WriteFailed { error: x, .. }) if x == error)),
            "{write} on-error {how}, {fault}: it never failed with {error:?}"
        );
    }
}

/// A resourceVersion and a UID are opaque strings ("clients must not assume that resource
/// versions are numeric or collatable": community `api-conventions.md`, apimachinery
/// `pkg/apis/meta/v1/types.go` `ResourceVersion`; a UID is a random UUID): arithmetic, a sum or
/// an ordering of them is a located error, `==` and `!=` stay. A clause given twice in one write
/// is a located error too: the JSON would carry the key twice, which the apiserver's strict
/// decoding refuses (apimachinery `pkg/runtime/serializer/json/json.go`, `duplicate field`) and
/// where otherwise the last silently wins.
#[test]
fn opaque_values_and_clauses_given_twice_are_located_errors() {
    let head = "kind Db\nkind Pod\ncontroller op for Db\n  logic\n    get db = Db key\n";
    let table = [
        (
            "    update db status db.rv + 1\n",
            "6:30",
            "arithmetic on a resourceVersion",
        ),
        (
            "    if db.uid > 3\n      done\n",
            "6:15",
            "an ordering of a UID",
        ),
        (
            "    update db status min(db.owner, 1)\n",
            "6:22",
            "arithmetic on a UID",
        ),
        (
            "    list ps = Pod owned-by db\n    update db status sum(p.rv for p in ps)\n",
            "7:26",
            "a sum of a resourceVersion",
        ),
        (
            "    update db spec 1 spec 2\n",
            "6:22",
            "`spec` is given twice",
        ),
        (
            "    set-condition db Ready True reason A reason B\n",
            "6:42",
            "`reason` is given twice",
        ),
        (
            "    create Pod key-x owner db owner db\n",
            "6:31",
            "`owner` is given twice",
        ),
        (
            "    update db status 1\nat 1s create Db a spec.x=1 spec.x=2\n",
            "7:28",
            "sets `spec.x` twice",
        ),
        (
            "    update db status 1\nat 1s update Db a labels a=1,a=2\n",
            "7:26",
            "sets the label `a` twice",
        ),
    ];
    each_refused_where_it_says(head, &table);
    // Equality of an RV or a UID is what Go's code does (`if pvc.UID != db.UID`).
    let ok = format!("{head}    if db.rv != db.uid or db.owner == db.uid\n      done\n");
    listwatch_script::parse(&ok).expect("== and != of opaque values parse");
}

/// An operator that records a Warning every reconcile of a Database whose spec is over 3, and
/// requeues after `every`; `extra` goes at the end of the script.
fn recording(every: &str, extra: &str) -> listwatch_script::Report {
    let src = format!(
        "
kind Database
kind Event
controller op for Database
  reconcile 200ms
  logic
    get db = Database key
    if db absent
      done
    if db.spec > 3
      record db Warning ScaleFailed \"at most 3 replicas\"
      requeue after {every}
    record db Normal Scaled \"scaled\"
at 1s create Database a spec 5
at 1s create Database b spec 1
{extra}
"
    );
    match listwatch_script::run(&src) {
        Ok(r) => r,
        Err(d) => panic!("{}", listwatch_script::render(&d[0], "test.lw", &src)),
    }
}

/// Every expectation of the run passed.
fn all_pass(r: &listwatch_script::Report) {
    for (x, o) in &r.outcomes {
        assert!(o.pass, "line {}: `{}` failed: {}", x.line, x.text, o.found);
    }
}

/// The Events in etcd at the end: (name, count).
fn event_counts(sim: &Sim) -> Vec<(String, i64)> {
    let names = sim.names();
    let count = names.get("count").expect("an Event was written");
    (sim.etcd().objects().values())
        .filter(|o| sim.config().kinds[o.kind.index()].name == "Event")
        .map(|o| {
            let c = match listwatch_core::reconcile::Section::Spec.get(o, count) {
                Some(listwatch_core::object::Value::Int(c)) => c,
                _ => 0,
            };
            (names.resolve(o.name).to_string(), c)
        })
        .collect()
}

/// client-go `tools/record/events_cache.go` `eventObserve`: a repeat of the same event (same
/// object, type, reason and message) is one Event whose `count` goes up, by a patch
/// (`tools/record/event.go` `recordEvent`: `sink.Patch` when `Count > 1`), named as `makeEvent`
/// names the first, `INVOLVED.HEX(nanoseconds)`; ESR is not concerned (an Event is no part of
/// the desired state, so a controller that records one every pass still converges).
#[test]
fn a_repeated_event_is_one_event_whose_count_goes_up() {
    let r = recording(
        "10s",
        "at 5s update Database b spec 2\nrun 1m\nexpect events a Warning ScaleFailed == 6\nexpect events Normal Scaled == 2\nexpect events b Warning ScaleFailed == 0\nexpect esr",
    );
    all_pass(&r);
    let mut events = event_counts(&r.sim);
    events.sort();
    // 1.1 s = 1,100,000,000 ns = 0x4190ab00.
    assert_eq!(
        events,
        [
            ("default/a.4190ab00".to_string(), 6),
            ("default/b.4d7c6d00".to_string(), 2)
        ]
    );
    assert_eq!(
        writes(&r.sim, WriteOp::Create),
        4,
        "two Databases, two Events"
    );
    assert_eq!(writes(&r.sim, WriteOp::Patch), 6, "the six repeats");
}

/// The correlator's caches are the process's memory (`events_cache.go`: LRU caches in the
/// `EventCorrelator`): a restarted controller does not know the Event it made, so its next
/// occurrence is a new Event with count 1, as after a real restart.
#[test]
fn a_restarted_controller_starts_a_new_event() {
    let r = recording("10s", "at 15s crash op restart-after 1s\nrun 1m");
    let mut counts: Vec<i64> = event_counts(&r.sim).iter().map(|e| e.1).collect();
    counts.sort();
    // a: 1.1 s, 11.3 s (count 2), then after the restart at 16 s a new Event counting 16 s,
    // 26 s, 36 s, 46 s, 56 s; b: its Normal, and another when the restarted controller's
    // initial list reconciles it again.
    assert_eq!(counts, [1, 1, 2, 5], "{:?}", event_counts(&r.sim));
}

/// `EventSourceObjectSpamFilter` (`events_cache.go`: a burst of 25 events per source and
/// object, then one every 300 s): a controller recording every 300 ms (200 ms reconciles, a
/// requeue after 100 ms) sends 25 occurrences, from 1.1 s to 8.3 s, then nothing until a token
/// has refilled, at 301.1 s. `EventCorrelate` filters last, after `eventObserve` has counted the
/// occurrence, so the dropped ones are counted too: the patch at 301.1 s carries the 1,001st
/// (the 25 sent alone would say 26). No request is made for a dropped one.
#[test]
fn the_spam_filter_lets_25_events_of_an_object_through_then_one_per_5_minutes() {
    let r = recording(
        "100ms",
        "run 6m\nexpect events a Warning ScaleFailed == 1001",
    );
    all_pass(&r);
    assert_eq!(
        writes(&r.sim, WriteOp::Patch),
        25,
        "24 repeats, then 301.1 s"
    );
}

/// The Events in etcd at the end: (message, count), sorted.
fn event_messages(sim: &Sim) -> Vec<(String, i64)> {
    let names = sim.names();
    let field = |o: &listwatch_core::Object, k: &str| {
        let k = names.get(k)?;
        listwatch_core::reconcile::Section::Spec.get(o, k)
    };
    let mut out: Vec<(String, i64)> = (sim.etcd().objects().values())
        .filter(|o| sim.config().kinds[o.kind.index()].name == "Event")
        .map(|o| {
            let message = match field(o, "message") {
                Some(listwatch_core::object::Value::Str(m)) => names.resolve(m).to_string(),
                _ => String::new(),
            };
            match field(o, "count") {
                Some(listwatch_core::object::Value::Int(c)) => (message, c),
                _ => (message, 0),
            }
        })
        .collect();
    out.sort();
    out
}

/// client-go `tools/record/events_cache.go` `EventAggregate` (`defaultAggregateMaxEvents` 10,
/// `defaultAggregateIntervalInSeconds` 600), before `eventObserve` in `EventCorrelate`: Events
/// of one object, type and reason that differ only by message are aggregated once ten
/// different messages came within 600 s of each other: the tenth is a new Event whose message
/// is `(combined from similar events): ` and its own, and every new message after it patches
/// that Event (its count, and the message, now the latest). 11 minutes later the messages seen
/// are forgotten: the first nine are repeats of their own Events again, the tenth and eleventh
/// repeats of the combined one.
#[test]
fn ten_different_messages_of_one_reason_are_combined_into_one_event() {
    let records: String = (1..=11)
        .map(|i| format!("    record db Warning ScaleFailed \"m{i:02}\"\n"))
        .collect();
    let src = format!(
        "kind Database\nkind Event\ncontroller op for Database\n  logic\n    get db = Database key\n    if db absent\n      done\n{records}    requeue after 11m\nat 1s create Database a spec 5\nrun 12m\nexpect events a Warning ScaleFailed == 22\n"
    );
    let sim = run(&src);
    let combined = "(combined from similar events): m11".to_string();
    let mut want: Vec<(String, i64)> = (1..=9).map(|i| (format!("m{i:02}"), 2)).collect();
    want.insert(0, (combined, 4));
    assert_eq!(event_messages(&sim), want);
}

/// `makeEvent` (`tools/record/event.go`) names an Event `INVOLVED.HEX(UnixNano)`: a real clock
/// has moved on between two Events, so their names differ. Virtual time may not move between
/// two writes (four in a 1 ms reconcile): the nanoseconds within the millisecond count them,
/// so none is refused `AlreadyExists` and lost.
#[test]
fn events_in_one_millisecond_have_names_of_their_own() {
    let sim = run("kind Database\nkind Event\ncontroller op for Database\n  reconcile 1ms\n  logic\n    get db = Database key\n    if db absent\n      done\n    record db Warning A \"a\"\n    record db Warning B \"b\"\n    record db Warning C \"c\"\n    record db Warning D \"d\"\nat 1s create Database a\nrun 2s\nexpect events a Warning C == 1\n");
    let mut names: Vec<String> = event_counts(&sim).into_iter().map(|e| e.0).collect();
    names.sort();
    // 1 s = 1,000,000,000 ns = 0x3b9aca00.
    let want = ["00", "01", "02", "03"].map(|n| format!("default/a.3b9aca{n}"));
    assert_eq!(names, want);
}

/// `makeEvent` (`tools/record/event.go`): `if namespace == "" { namespace =
/// metav1.NamespaceDefault }`: an Event about a cluster-scoped object (a Node) is written in
/// `default`, and `expect events n1` names the Node as a Node is named.
#[test]
fn an_event_about_a_cluster_scoped_object_is_written_in_default() {
    let sim = run("kind Node cluster-scoped\nkind Event\ncontroller op for Node\n  logic\n    get n = Node key\n    if n absent\n      done\n    record n Warning NotReady \"kubelet stopped posting\"\nat 1s create Node n1\nrun 2s\nexpect events n1 Warning NotReady == 1\nexpect events Warning NotReady == 1\n");
    let events = event_counts(&sim);
    assert_eq!(events.len(), 1, "{events:?}");
    assert!(events[0].0.starts_with("default/n1."), "{events:?}");
    let ns = (sim.etcd().objects().values())
        .find(|o| sim.config().kinds[o.kind.index()].name == "Event")
        .map(|o| sim.names().resolve(o.namespace).to_string());
    assert_eq!(ns.as_deref(), Some("default"));
}

/// `events_cache.go`: each of the correlator's caches is an LRU of `maxLruCacheEntries` (4096)
/// keys. A controller that recorded about 4,097 objects has forgotten the first by the time it
/// records about it again, so that occurrence is a new Event, not a repeat; about 4,096 it
/// remembers them all.
#[test]
fn the_correlator_forgets_the_least_recently_used_past_4096_objects() {
    let about = |objects: u32| {
        let sim = run(&format!("kind Database\nkind Event\ncontroller op for Database\n  workers 64\n  logic\n    get db = Database key\n    if db absent\n      done\n    record db Warning ScaleFailed \"x\"\n    requeue after 10s\nevery 1ms {objects} times create Database d{{i}} spec 5\nrun 12s\nexpect events d0 Warning ScaleFailed == 2\n"));
        let mut d0: Vec<i64> = (event_counts(&sim).into_iter())
            .filter(|e| e.0.starts_with("default/d0."))
            .map(|e| e.1)
            .collect();
        d0.sort();
        d0
    };
    assert_eq!(about(4096), [2], "one Event, counted twice");
    assert_eq!(about(4097), [1, 1], "forgotten: a new Event");
}

/// The recorder is best-effort and asynchronous (`tools/record/event.go`: `Eventf` puts the
/// event on a queue, `ActionOrDrop`; `recordToSink` sends it from another goroutine): its
/// failure never fails the reconcile. A refused Event write goes on to the next statement, and
/// the reconcile ends as it would have.
#[test]
fn a_refused_event_write_never_fails_the_reconcile() {
    let r = recording(
        "10s",
        "at 11200ms disconnect op for 500ms\nrun 20s\nexpect esr",
    );
    all_pass(&r);
    let refused = (r.sim.trace().iter()).any(|e| {
        matches!(
            e.kind,
            EventKind::Store(StoreEvent::WriteFailed {
                error: ApiError::ConnectionRefused,
                ..
            })
        )
    });
    assert!(refused, "the repeat at 11.3 s was refused");
    let errors = ends(&r.sim)
        .iter()
        .filter(|e| matches!(e, ReconcileResult::Error(_)))
        .count();
    assert_eq!(errors, 0, "{:?}", ends(&r.sim));
}

/// `record`'s mistakes, each located: the Event kind must be declared, the type is one of the
/// two the recorder accepts (`tools/record/util/util.go` `ValidateEventType`), the reason one
/// UpperCamelCase word (`tools/record/event.go`'s advice), the message quoted; `expect events`
/// likewise.
#[test]
fn record_errors_name_their_place() {
    let head = "kind Db\nkind Event\ncontroller op for Db\n  logic\n    get db = Db key\n";
    let table = [
        (
            "    record db Warn ScaleFailed \"x\"\n",
            "6:15",
            "unknown event type `Warn`",
        ),
        (
            "    record db Warning scale-failed \"x\"\n",
            "6:23",
            "is not an event reason",
        ),
        (
            "    record db Warning ScaleFailed x\n",
            "6:35",
            "a string in quotes",
        ),
        (
            "    record db Warning ScaleFailed \"to {db.spec}\"\n",
            "6:35",
            "fixed text",
        ),
        (
            "    record nobody Warning ScaleFailed \"x\"\n",
            "6:12",
            "nobody",
        ),
        (
            "    record db Warning ScaleFailed \"x\" now\n",
            "6:",
            "unexpected `now`",
        ),
        (
            "    record db Normal Ok \"x\"\nexpect events db Normal\n",
            "7:",
            "reason",
        ),
        (
            "    record db Normal Ok \"x\"\nexpect events db Info Ok == 1\n",
            "7:18",
            "event type",
        ),
    ];
    each_refused_where_it_says(head, &table);
    let err = refused("kind Db\ncontroller op for Db\n  logic\n    get db = Db key\n    record db Normal Ok \"x\"\n");
    assert!(err.contains("5:5") && err.contains("kind Event"), "{err}");
}

/// Helper blocks (issue 24): `call NAME` runs the helper's statements in its place, as a Go
/// reconciler calls `r.ensureService(ctx, &db)`: they read the names bound before the call,
/// the names they bind are their own (two calls of one helper read twice, as two calls of a
/// Go method do), and a `done` in a helper ends the reconcile (Go's `if res, err :=
/// r.ensure(...); err != nil || !res.IsZero() { return res, err }`). Each request is its own
/// step, so the crash points and refusals fall inside helpers as anywhere else.
#[test]
fn a_helper_runs_in_the_place_of_its_call() {
    let r = listwatch_script::run(
        "
kind Database
kind Service
kind Pvc
controller op for Database
  reconcile 200ms
  helper ensure-service
    get svc = Service key
    if svc absent
      create Service key owner db
  helper ensure-storage
    get data = Pvc key-data
    if data absent
      create Pvc key-data owner db
    call ensure-service
    if db.spec == 0
      done
  logic
    get db = Database key
    if db absent
      done
    call ensure-storage
    call ensure-service
    if db.status != 1
      update db status 1
at 1s create Database a spec 1
at 1s create Database b spec 0
run 10s
expect exists Service a
expect exists Pvc a-data
expect exists Service b
expect creates Service == 2
expect final Database a status == 1
expect final Database b status == 0
expect esr
",
    )
    .expect("parses");
    all_pass(&r);
}

/// A helper's limits and mistakes, each located: no recursion, direct or through another
/// helper (the language stays without unbounded programs); an unknown helper; one defined
/// below the logic that would call it, or twice; the statement and nesting limits count the
/// statements a call brings in.
#[test]
fn helper_errors_name_their_place() {
    let head = "kind Db\ncontroller op for Db\n";
    let logic = "  logic\n    get db = Db key\n";
    let table = [
        (
            format!("  helper a\n    call a\n{logic}    call a\n"),
            "4:10",
            "`a` calls itself (a -> a)",
        ),
        (
            format!("  helper a\n    call b\n  helper b\n    if db exists\n      call a\n{logic}    call a\n"),
            "7:12",
            "`a` calls itself (a -> b -> a)",
        ),
        (format!("{logic}    call nothing\n"), "5:10", "unknown helper `nothing`"),
        (
            format!("{logic}    done\n  helper late\n    done\n"),
            "6:10",
            "above the `logic` block",
        ),
        (
            "  helper a\n    done\n  helper a\n    done\n".to_string(),
            "5:10",
            "defined already, on line 3",
        ),
        ("  helper Bad_Name\n    done\n".to_string(), "3:10", "is not a helper name"),
        ("  helper a\n".to_string() + logic + "    call a\n", "3:10", "the helper `a` is empty"),
        (
            format!("  helper a\n    if db exists\n      if db exists\n        if db exists\n          if db exists\n            if db exists\n              done\n{logic}    if db exists\n      if db exists\n        if db exists\n          if db exists\n            call a\n"),
            ":",
            "nested `if`s",
        ),
    ];
    for (src, at, says) in &table {
        let err = refused(&format!("{head}{src}"));
        assert!(err.contains(at) && err.contains(says), "{src}: {err}");
    }
    // 200 statements a helper, called twice: past 256 statements.
    let many: String = (0..200).map(|_| "    remember m = 1\n").collect();
    let err = refused(&format!(
        "{head}  helper big\n{many}{logic}    call big\n    call big\n"
    ));
    assert!(err.contains("more than 256 statements"), "{err}");
}

/// The counters say what they count: `updates` counts writes to the object (an update, a merge
/// patch, a finalizer step), `status-updates` writes to its status subresource (`/status`: a
/// different request, `pkg/registry/.../strategy.go`'s status strategy, and the audit log's
/// `objectRef.subresource: status`). The old mystery of the for-loop test that expected two
/// Pod updates and counted one: one of its two patches went to `/status`.
#[test]
fn updates_and_status_updates_count_their_own_requests() {
    run("
kind Database
kind Pod
controller op for Database
  logic
    get db = Database key
    if db absent
      done
    list pods = Pod selector app=web
    for p in pods where p.metadata.labels.tier != \"gold\"
      patch p metadata.labels.tier = \"gold\"
      patch p status.seen = 1
    if db.status != 1
      update db status 1
at 1s create Pod a labels app=web
at 2s create Database db
run 10s
expect updates Pod == 1
expect status-updates Pod == 1
expect updates op == 1
expect status-updates op == 2
expect status-updates Database == 1
expect updates Database == 0
");
}

/// controller-runtime `pkg/controller/controllerutil/controllerutil.go`: `AddFinalizer` and
/// `RemoveFinalizer` return false when the list does not change, and the reconciler makes no
/// request; the controller's own `add-finalizer db` now skips its write as a named one does
/// (it sent a no-op update before). A finalizer's name is a qualified name, the prefix
/// optional (apimachinery `pkg/api/validation/objectmeta.go` `ValidateFinalizerName`,
/// `pkg/util/validation/validation.go` `IsQualifiedName`; the apiserver only warns on one
/// without a prefix), so `cleanup` is a named finalizer as `example.com/cleanup` is. An adopt
/// and a release print as what they are, with the owner they leave, in `--trace`.
#[test]
fn finalizers_write_only_changes_and_adopt_prints_its_owner() {
    let sim = run("
kind Database
kind Pod
controller op for Database
  logic
    get db = Database key
    if db absent
      done
    add-finalizer db
    add-finalizer db
    add-finalizer db cleanup
    add-finalizer db cleanup
    get p = Pod key-p
    if p exists
      adopt p owner db
at 1s create Pod a-p
at 2s create Database a
run 5s
expect final Database a finalizers == 2
expect final Pod a-p owners == 1
");
    assert_eq!(writes(&sim, WriteOp::AddFinalizer), 2, "one per finalizer");
    let no_ops = (sim.trace().iter())
        .filter(|e| matches!(e.kind, EventKind::Store(StoreEvent::NoOpWrite { .. })))
        .count();
    assert_eq!(no_ops, 0, "no request that changes nothing");
    assert_eq!(writes(&sim, WriteOp::Adopt), 1);
    let trace: Vec<String> = (0..sim.trace().len() as u32)
        .map(|i| listwatch_core::verdict::describe_event(&sim, i))
        .collect();
    let adopt = trace
        .iter()
        .position(|l| l.starts_with("adopt Pod/default/a-p"));
    let adopt = adopt.unwrap_or_else(|| panic!("{trace:#?}"));
    assert!(
        trace[adopt + 1].contains("controller owner Database/default/a"),
        "{}",
        trace[adopt + 1]
    );
    let head = "kind Db\ncontroller op for Db\n  logic\n    get db = Db key\n";
    let table = [
        (
            "    add-finalizer db -cleanup\n",
            "5:22",
            "must start and end with an alphanumeric",
        ),
        ("    add-finalizer db a/b/c\n", "5:22", "at most one `/`"),
        (
            "    if db has-finalizer Bad_Prefix/x and db exists\n      done\n",
            "5:25",
            "prefix part must be a lowercase RFC 1123 subdomain",
        ),
    ];
    each_refused_where_it_says(head, &table);
    let ok = format!(
        "{head}    if db has-finalizer cleanup and db has-finalizer or db exists\n      done\n"
    );
    listwatch_script::parse(&ok).expect("a finalizer without a prefix, then `and`, parses");
}

/// A create carries the object as Go's literal builds it (issue 24): controller-runtime's
/// `r.Create(ctx, &corev1.Pod{ObjectMeta: {GenerateName: "web-", Labels: ...}, Spec: ...})`
/// is one request whose object already holds its labels and fields, and with `generateName`
/// the apiserver names it: the prefix and five of `utilrand.String`'s characters
/// (`apiserver/pkg/storage/names/generate.go`, `apimachinery/pkg/util/rand/rand.go`). The
/// selector's list then counts them, so the controller stops at the Db's spec.
#[test]
fn a_create_carries_its_fields_and_labels_and_generate_name_names_it() {
    let sim = run("
kind Db
kind Pod
controller op for Db
  logic
    get db = Db key
    if db absent
      done
    list pods = Pod selector app=web
    if pods.count < db.spec
      create Pod key- generate-name metadata.labels.app = \"web\" metadata.annotations.note = db.spec spec.replicas = db.spec + 1 spec.image = \"v1\" owner db
at 0s create Db web spec 2
run 10s
expect creates op Pod == 2
expect updates op Pod == 0
");
    let names = sim.names();
    let pod = sim.config().kind_id("Pod").expect("Pod");
    let pods: Vec<_> = (sim.etcd().objects().values())
        .filter(|o| o.kind == pod)
        .collect();
    assert_eq!(
        pods.len(),
        2,
        "two pods, then the selector's list counts them"
    );
    for p in pods {
        let name = names.resolve(p.name);
        let suffix = name.strip_prefix("default/web-").expect(name);
        assert!(
            suffix.len() == 5
                && suffix
                    .chars()
                    .all(|c| "bcdfghjklmnpqrstvwxz2456789".contains(c)),
            "{name}: five of utilrand's characters"
        );
        let d = p.body.data();
        let text = |id| names.resolve(id).to_string();
        let labels: Vec<_> = d.labels.iter().map(|&(k, v)| (text(k), text(v))).collect();
        assert_eq!(labels, [("app".to_string(), "web".to_string())], "{name}");
        let notes: Vec<_> = d
            .annotations
            .iter()
            .map(|&(k, v)| (text(k), text(v)))
            .collect();
        assert_eq!(
            notes,
            [("note".to_string(), "2".to_string())],
            "a number as its digits"
        );
        let spec: Vec<_> = d.spec.iter().map(|(k, v)| (text(*k), *v)).collect();
        assert!(spec.contains(&(
            "replicas".to_string(),
            listwatch_core::object::Value::Int(3)
        )));
        assert_eq!(p.generation, 1);
    }
}

/// `generateName` prefixes are cut to `MaxGeneratedNameLength` (58) before the five characters
/// (`apiserver/pkg/storage/names/generate.go`), so a long prefix still makes a valid name.
#[test]
fn a_long_generate_name_prefix_is_cut_to_58() {
    let long = "p".repeat(70);
    let sim = run(&format!(
        "
kind Db
kind Pod
controller op for Db
  logic
    get db = Db key
    if db absent
      done
    list pods = Pod owned-by db
    if pods.count == 0
      create Pod \"{long}\" generate-name owner db
at 0s create Db web
run 5s
expect creates op Pod == 1
"
    ));
    let names = sim.names();
    let made: Vec<_> = (sim.etcd().objects().values())
        .map(|o| names.resolve(o.name))
        .filter(|n| n.starts_with("default/p"))
        .collect();
    assert_eq!(made.len(), 1, "{made:?}");
    assert_eq!(made[0].len(), "default/".len() + 58 + 5, "{}", made[0]);
}

/// A name built at run time meets the apiserver's rules too (`pkg/api/validation/objectmeta.go`
/// `ValidateObjectMeta`, `NameIsDNSSubdomain`; `generateName` with `maskTrailingDash`): a
/// value with capitals makes a 422 the reconcile returns as its error, as `r.Create` does, and
/// so does a prefix ending in `.`; only `cfg-ok` is created.
#[test]
fn a_name_built_at_run_time_is_validated_as_the_apiserver_does() {
    use crate::{events, reconciles};
    use listwatch_core::validation::{NameField, NameRule};
    let sim = run("
kind Db
kind ConfigMap
controller op for Db
  logic
    get db = Db key
    if db absent
      done
    get cm = ConfigMap \"cfg-{db.spec.tier}\"
    if cm absent
      create ConfigMap \"cfg-{db.spec.tier}\"
    get gen = ConfigMap \"{db.spec.tier}.\"
    if gen absent
      create ConfigMap \"{db.spec.tier}.\" generate-name
at 0s create Db web spec.tier=Gold
at 0s create Db api spec.tier=ok
run 3s
expect creates op ConfigMap == 1
");
    let refused: Vec<ApiError> = events(&sim, |k| {
        matches!(k, EventKind::Store(StoreEvent::WriteFailed { .. }))
    })
    .filter_map(|e| match e.kind {
        EventKind::Store(StoreEvent::WriteFailed { error, .. }) => Some(error),
        _ => None,
    })
    .collect();
    let name = ApiError::InvalidName {
        field: NameField::Name,
        rule: NameRule::Subdomain,
    };
    assert!(refused.contains(&name), "{refused:?}");
    let prefix = ApiError::InvalidName {
        field: NameField::GenerateName,
        rule: NameRule::Subdomain,
    };
    assert!(
        refused.contains(&prefix),
        "`ok.` is no prefix (web returns at its first 422): {refused:?}"
    );
    assert!(
        name.message()
            .starts_with("metadata.name: Invalid value: a lowercase RFC 1123 subdomain"),
        "{}",
        name.message()
    );
    assert_eq!(name.code(), 422);
    let errors = reconciles(&sim)
        .into_iter()
        .filter(|r| r.4 == ReconcileResult::Error(name))
        .count();
    assert!(errors >= 1, "the reconcile returns the create's error");
}

/// A label value a reconcile computes meets `IsValidLabelValue` too (`objectmeta.go`
/// `ValidateLabels`, on every create and update): an image reference copied into a label (its
/// `/` and `:`) is a 422 the reconcile returns, and the object keeps its labels.
#[test]
fn a_label_value_computed_at_run_time_is_validated_as_the_apiserver_does() {
    use crate::{events, reconciles};
    let sim = run("
kind Db
controller op for Db
  logic
    get db = Db key
    if db absent
      done
    if db.metadata.labels.image != db.spec.image
      patch db metadata.labels.image = db.spec.image
at 0s create Db web spec.image=registry.example/web:v1
at 0s create Db api spec.image=v1
run 3s
");
    let patched = events(&sim, |k| {
        matches!(
            k,
            EventKind::Store(StoreEvent::Write {
                op: WriteOp::Patch,
                ..
            })
        )
    })
    .count();
    assert_eq!(patched, 1, "api's valid label is written");
    let refused = events(&sim, |k| {
        matches!(
            k,
            EventKind::Store(StoreEvent::WriteFailed {
                error: ApiError::InvalidLabelValue,
                ..
            })
        )
    })
    .count();
    assert!(refused >= 1, "the write of web's label is refused");
    let errors = reconciles(&sim)
        .into_iter()
        .filter(|r| r.4 == ReconcileResult::Error(ApiError::InvalidLabelValue))
        .count();
    assert!(errors >= 1, "the reconcile returns the 422");
    assert_eq!(ApiError::InvalidLabelValue.code(), 422);
}

/// A create's mistakes, each located at the word at fault; with the status subresource a
/// create cannot set the status (apiextensions-apiserver `customresource/strategy.go`
/// `PrepareForCreate`: "create cannot set status"), so the line that tries is refused.
#[test]
fn create_field_errors_name_their_place() {
    let head = "kind Db\nkind Pod\nkind Bare status-subresource off\ncontroller op for Db\n  logic\n    get db = Db key\n";
    let table = [
        // `objectmeta.go` `ValidateObjectMeta`: a generateName that is no DNS subdomain once
        // its trailing `-` is masked is refused (422), so the line is.
        (
            "    create Pod \"-bad-\" generate-name\n",
            "7:",
            "metadata.generateName",
        ),
        ("    create Pod \"Web\"\n", "7:", "metadata.name"),
        (
            "    create Pod key status.ready = 1\n",
            "7:20",
            "a create ignores the status",
        ),
        (
            "    create Pod key spec.a = 1 spec.a = 2\n",
            "7:31",
            "`spec.a` is given twice",
        ),
        (
            "    create Pod key generate-name generate-name\n",
            "7:34",
            "`generate-name` is given twice",
        ),
        (
            "    create Pod key metadata.labels.a:b = 1\n",
            "7:20",
            "not a valid label name",
        ),
        ("    create Pod key spec.a 1\n", "7:", "expected `=`"),
        // `validation.IsValidLabelValue`: the apiserver answers 422 to these.
        (
            "    create Pod key metadata.labels.a = \"Hello World!\"\n",
            "7:40",
            "is not a valid label value",
        ),
        (
            "    patch db metadata.labels.a = \"x/y\"\n",
            "7:34",
            "is not a valid label value",
        ),
    ];
    each_refused_where_it_says(head, &table);
    let long = format!(
        "    create Pod key metadata.labels.a = \"{}\"\n",
        "v".repeat(64)
    );
    assert!(refused(&format!("{head}{long}")).contains("at most 63"));
    let many: String = (0..17).map(|i| format!(" spec.f{i} = {i}")).collect();
    let err = refused(&format!("{head}    create Pod key{many}\n"));
    assert!(err.contains("at most 16 named fields"), "{err}");
    // Without the subresource a create keeps the status it sends.
    run(&format!(
        "{head}    if db absent\n      done\n    create Bare key status.ready = 1 on-error ignore-already-exists\nat 0s create Db a\nrun 2s\nexpect final Bare a status.ready == 1\n"
    ));
}

/// `NAME.metadata.name` and `NAME.metadata.namespace` are Go's `db.Name` and `db.Namespace`
/// (strings; the name without its namespace, none for a cluster-scoped object's namespace):
/// the usual `Labels: map[string]string{"app": db.Name}` and a name built from another
/// object's, and a list filtered on them.
#[test]
fn an_object_s_name_and_namespace_are_values() {
    let sim = run("
kind Db
kind Pod
kind Node cluster-scoped
controller op for Db
  logic
    get db = Db key
    if db absent
      done
    get node = Node \"n1\"
    list pods = Pod selector tier=db in prod
    if count(p in pods where p.metadata.labels.app == db.metadata.name) == 0
      create Pod \"{db.metadata.name}-pod\" metadata.labels.app = db.metadata.name metadata.labels.tier = \"db\" metadata.annotations.ns = db.metadata.namespace metadata.annotations.node = node.metadata.name metadata.annotations.nodens = node.metadata.namespace owner db
    if db.status.pods != pods.count
      patch db status.pods = pods.count
at 0s create Node n1
at 0s create Db prod/web
run 5s
expect final Pod prod/web-pod has-label app=web
expect final Db prod/web status.pods == 1
expect creates op Pod == 1
");
    let pod = (sim.etcd().objects().values())
        .find(|o| sim.names().resolve(o.name) == "prod/web-pod")
        .expect("the pod");
    let text = |id| sim.names().resolve(id).to_string();
    let notes: Vec<_> = (pod.body.data().annotations.iter())
        .map(|&(k, v)| (text(k), text(v)))
        .collect();
    assert!(notes.contains(&("ns".into(), "prod".into())), "{notes:?}");
    assert!(notes.contains(&("node".into(), "n1".into())), "{notes:?}");
    // A cluster-scoped object has no namespace: none, so no annotation.
    assert!(!notes.iter().any(|(k, _)| k == "nodens"), "{notes:?}");
}

/// A name or a namespace is a string: no ordering, no arithmetic, no sum.
#[test]
fn name_value_errors_name_their_place() {
    let head = "kind Db\ncontroller op for Db\n  logic\n    get db = Db key\n    list all = Db owned-by db\n";
    let table = [
        (
            "    if db.metadata.name < \"b\"\n      done\n",
            "6:",
            "a string compares only with",
        ),
        (
            "    update db status.x = db.metadata.namespace + 1\n",
            "6:",
            "arithmetic is on numbers, not strings",
        ),
        (
            "    update db status.x = sum(p.metadata.name for p in all)\n",
            "6:",
            "a sum is of numbers, not strings",
        ),
    ];
    each_refused_where_it_says(head, &table);
}
