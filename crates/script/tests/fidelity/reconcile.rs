//! (A part of `fidelity.rs`.) The reconcile language does what the same controller written in Go does: one test per rule
//! where it once did not (issue 24), a scenario in, its verdict and the trace's facts out. Each
//! test names the Go source (controller-runtime's client, client-go, the apiserver) it pins.

use listwatch_core::{EventKind, Sim, WriteOp};

use super::run;

/// The first error a script is refused with, rendered.
fn refused(src: &str) -> String {
    match listwatch_script::parse(src) {
        Ok(_) => panic!("accepted:\n{src}"),
        Err(d) => listwatch_script::render(&d[0], "test.lw", src),
    }
}

/// How many writes of `op` the controllers made.
fn writes(sim: &Sim, op: WriteOp) -> usize {
    (sim.trace().iter())
        .filter(|e| matches!(e.kind, EventKind::Write { op: o, .. } if o == op))
        .count()
}

/// apiextensions-apiserver `pkg/registry/customresource/strategy.go`: with the status
/// subresource, `PrepareForUpdate` of the object keeps the stored status and the status
/// strategy keeps everything but the status, and only a changed spec moves the generation;
/// controller-runtime `pkg/client/client.go` `Status().Patch` sends the status alone. The
/// advice "update the spec, then patch the status in the same pass" converges: the status
/// patch no longer writes back the spec read at the start.
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
    if db.status != 3
      patch db status 3
at 1s create Database a spec 1
run 1m
expect final Database a spec == 3
expect final Database a status == 3
expect esr
");
    let db = sim.etcd().objects().values().next().expect("the database");
    assert_eq!(
        db.generation, 2,
        "the spec moved once, the status never moves it"
    );
    assert_eq!(writes(&sim, WriteOp::Update), 1, "one spec write, no loop");
    assert_eq!(writes(&sim, WriteOp::UpdateStatus), 1);
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
