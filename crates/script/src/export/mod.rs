//! The trace as JSON, `listwatch-trace/3` (docs/trace-format.md, docs/trace-format.schema.json).
//! The CLI's `--json` and the page's export both call `json`.
//!
//! Core stays serde-free: the structs here are the boundary, built from core's public `Event`
//! and `EventKind`. Every event is an object with its `type` and that type's fields, plus the
//! one-line `text`. Names (objects, kinds, controllers, apiservers, watchers, actors, narration)
//! are written once, in `names` (`names.rs`), and events refer to them by index, the text too
//! (`{12}` stands for `names[12]`), so an event's size does not grow with the length of the
//! names it mentions. Each family of events (a variant of core's `EventKind`, with its own
//! sub-enum) has its file, with its types' fields: `store.rs`, `reflector.rs`, `controller.rs`,
//! `fault.rs`, `probe.rs`, `say.rs`.

use listwatch_core::verdict::Outcome;
use listwatch_core::*;
use serde::ser::SerializeSeq;
use serde::Serialize;

use crate::{Expectation, Report};

mod controller;
mod error;
mod fault;
mod json;
mod names;
mod probe;
mod reflector;
mod say;
mod store;

pub use json::{esc, to_string};
pub use names::render_text;

use names::{Actors, Interner, Placeholders};

/// The version of the document: a change to its shape changes it. 3 added `owner_ref_invalid`
/// and the write ops `adopt` and `release` (and names `object_fields`, which version 2 documents
/// already had without a version change);
/// a version 2 document reads as a version 3 one.
pub const FORMAT: &str = "listwatch-trace/3";

/// The document of a report.
pub fn report(r: &Report) -> String {
    json(&r.sim, &r.outcomes)
}

/// The JSON document of a run and its expectations' outcomes.
pub fn json(sim: &Sim, outcomes: &[(Expectation, Outcome)]) -> String {
    let mut names = Interner::default();
    // Every entity of the configuration first, in a fixed order, then the objects' names and
    // narration in order of first use.
    let actors = Actors::new(sim, &mut names);
    for e in sim.trace() {
        if let Some(id) = name_id(&e.kind) {
            names.object(sim, id);
        }
        // An object's fields are words of their own, after its name.
        if let EventKind::Store(StoreEvent::ObjectFields { body, .. }) = e.kind {
            names.fields(sim, body);
        }
        if let EventKind::Probe(ProbeEvent::ProbeRequest { ask, .. }) = e.kind {
            if let Some(s) = ask.selector() {
                names.object(sim, s);
            }
        }
    }
    let placeholders = Placeholders::new(&names, &actors);
    let doc = Document {
        format: FORMAT,
        end_ms: sim.now_ms().ms(),
        final_rv: sim.etcd().rev(),
        trace_hash: format!("{:016x}", listwatch_core::sim::trace_hash(sim)),
        passed: outcomes.iter().all(|(_, o)| o.pass),
        stopped_at_event_cap: matches!(sim.stopped(), Some(Stop::EventCap)),
        stopped_at_read_cap: matches!(sim.stopped(), Some(Stop::ReadCap)),
        names: &names.strings,
        expectations: outcomes
            .iter()
            .map(|(x, o)| ExpectationOut {
                line: x.line,
                text: &x.text,
                pass: o.pass,
                found: &o.found,
                decided_ms: o.decided_ms.ms(),
                decided_by: o.decided_by,
            })
            .collect(),
        events: Events {
            sim,
            names: &names,
            actors: &actors,
            placeholders: &placeholders,
        },
    };
    to_string(&doc)
}

#[derive(Serialize)]
struct Document<'a> {
    format: &'static str,
    end_ms: u64,
    final_rv: Rv,
    trace_hash: String,
    passed: bool,
    stopped_at_event_cap: bool,
    stopped_at_read_cap: bool,
    names: &'a [String],
    expectations: Vec<ExpectationOut<'a>>,
    events: Events<'a>,
}

#[derive(Serialize)]
struct ExpectationOut<'a> {
    line: usize,
    text: &'a str,
    pass: bool,
    found: &'a str,
    decided_ms: u64,
    decided_by: Option<EventId>,
}

/// The events, written one by one as they are serialised.
struct Events<'a> {
    sim: &'a Sim,
    names: &'a Interner,
    actors: &'a Actors,
    placeholders: &'a Placeholders,
}

impl Serialize for Events<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(Some(self.sim.trace().len()))?;
        for (i, e) in self.sim.trace().iter().enumerate() {
            seq.serialize_element(&EventOut {
                id: i as EventId,
                time_ms: e.time_ms.ms(),
                actor: self.actors.actor(e.actor),
                cause: e.cause(),
                kind: self.kind(&e.kind),
                text: self.placeholders.text(&e.kind),
            })?;
        }
        seq.end()
    }
}

#[derive(Serialize)]
struct EventOut {
    id: EventId,
    time_ms: u64,
    /// Index into `names`.
    actor: u32,
    cause: Option<EventId>,
    #[serde(flatten)]
    kind: Kind,
    text: String,
}

/// Each event type's own fields, its family's (`kind`, `name`, `key`, `watcher`, `controller`
/// and `apiserver` are indices into `names`); the family adds no field of its own.
#[derive(Serialize)]
#[serde(untagged)]
enum Kind {
    Store(store::Out),
    Reflector(reflector::Out),
    Controller(controller::Out),
    Fault(fault::Out),
    Probe(probe::Out),
    Say(say::Out),
}

/// The `NameId` an event refers to: an object's name, a queue key or narration.
fn name_id(k: &EventKind) -> Option<NameId> {
    match k {
        EventKind::Store(e) => store::name(e),
        EventKind::Reflector(e) => reflector::name(e),
        EventKind::Controller(e) => Some(controller::name(e)),
        EventKind::Fault(e) => fault::name(e),
        EventKind::Probe(_) => None,
        EventKind::Say(e) => Some(say::name(e)),
    }
}

impl Events<'_> {
    fn object(&self, id: NameId) -> u32 {
        self.names.objects[&id]
    }
    fn kind_of(&self, id: KindId) -> u32 {
        self.actors.kinds[id.index()]
    }
    fn watcher(&self, id: WatcherId) -> u32 {
        self.actors.watchers[id.index()]
    }
    fn controller(&self, id: ControllerId) -> u32 {
        self.actors.controllers[id.index()]
    }
    fn apiserver(&self, id: ApiserverId) -> u32 {
        self.actors.apiservers[id.index()]
    }

    fn kind(&self, k: &EventKind) -> Kind {
        match k {
            EventKind::Store(e) => Kind::Store(self.store(e)),
            EventKind::Reflector(e) => Kind::Reflector(self.reflector(e)),
            EventKind::Controller(e) => Kind::Controller(self.controller_event(e)),
            EventKind::Fault(e) => Kind::Fault(self.fault(e)),
            EventKind::Probe(e) => Kind::Probe(self.probe(e)),
            EventKind::Say(e) => Kind::Say(self.say(e)),
        }
    }
}
