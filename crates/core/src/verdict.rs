//! Facts read off a finished run, the expectations scripts state about them, and ESR.

use crate::config::Config;
use crate::model::{ApiserverId, ControllerId, DurationMs, KindId, NameId, Rv, TimeMs, WatcherId};
use crate::sim::Sim;
use crate::trace::*;

/// What a count expectation counts.
#[derive(Clone, Debug, PartialEq)]
pub enum Counted {
    /// 410 Gone answers (watches, and continue tokens of paged lists).
    Gone,
    /// Lists after the first one of each informer life.
    Relists,
    Lists,
    Watches,
    Reconciles,
    /// Committed writes with this operation.
    Writes(WriteOp),
    /// Events the cache evicted.
    Evictions,
    /// Enqueues collapsed into a waiting key.
    Collapsed,
    Bookmarks,
    /// Watch events of this type an informer received (a selector's DELETED included).
    WatchEvents(crate::model::EventType),
}

/// Restricts what is counted.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Scope {
    pub controller: Option<ControllerId>,
    pub kind: Option<KindId>,
    pub name: Option<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cmp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

impl Cmp {
    pub fn holds(self, a: i64, b: i64) -> bool {
        match self {
            Cmp::Eq => a == b,
            Cmp::Ne => a != b,
            Cmp::Lt => a < b,
            Cmp::Le => a <= b,
            Cmp::Gt => a > b,
            Cmp::Ge => a >= b,
        }
    }
    pub fn as_str(self) -> &'static str {
        match self {
            Cmp::Eq => "==",
            Cmp::Ne => "!=",
            Cmp::Lt => "<",
            Cmp::Le => "<=",
            Cmp::Gt => ">",
            Cmp::Ge => ">=",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Field {
    Spec,
    Status,
}

/// What `Expect::Object` asks of an object.
#[derive(Clone, Debug, PartialEq)]
pub enum ObjectFact {
    /// `spec.PATH CMP V` (`status`: `status.PATH`); text and `null` (no such field) compare
    /// only with `==` and `!=`.
    Field {
        status: bool,
        path: String,
        cmp: Cmp,
        value: Option<crate::config::FieldValue>,
    },
    /// `has-label K[=V]` (`negated`: `lacks-label`).
    HasLabel {
        key: String,
        value: Option<String>,
        negated: bool,
    },
    /// `finalizers | owners | generation CMP N`.
    Count {
        what: ObjectCount,
        cmp: Cmp,
        value: i64,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ObjectCount {
    Finalizers,
    Owners,
    Generation,
}

/// One expectation, checked after the run.
#[derive(Clone, Debug, PartialEq)]
pub enum Expect {
    Count {
        what: Counted,
        scope: Scope,
        cmp: Cmp,
        value: i64,
        by_ms: Option<TimeMs>,
    },
    /// A reconcile of the controller did (or never did) read the object with this spec. `kind`
    /// must be the controller's primary kind.
    Saw {
        controller: ControllerId,
        kind: KindId,
        name: String,
        spec: i64,
        negated: bool,
    },
    /// The object's field at the end of the run.
    Final {
        kind: KindId,
        name: String,
        field: Field,
        cmp: Cmp,
        value: i64,
    },
    Exists {
        kind: KindId,
        name: String,
        negated: bool,
    },
    /// What the object holds at the end of the run beyond `spec N`: a named field, a label,
    /// how many finalizers or owner references, its generation.
    Object {
        kind: KindId,
        name: String,
        fact: ObjectFact,
    },
    /// `expect events [NAME] TYPE REASON CMP N`: how many times the controllers' recorders
    /// recorded this event (about the object named, or any), as the Events in etcd count them
    /// at the end of the run: the sum of their `count`, what `kubectl get events` shows.
    Events {
        kind: KindId,
        object: Option<String>,
        event_type: String,
        reason: String,
        cmp: Cmp,
        value: i64,
    },
    /// Eventually stable reconciliation for one controller (or all).
    Esr { controller: Option<ControllerId> },
    /// A probe's answer: some probe got this.
    Probe { fact: ProbeFact },
    /// How many events (by a moment) have this text in their one-line message: an error's
    /// text as a log shows it, a warning, a narration.
    Message {
        text: String,
        cmp: Cmp,
        value: i64,
        by_ms: Option<TimeMs>,
    },
    /// Something a controller's reflectors got or sent, optionally by a time and within a
    /// window after another such fact.
    Trace {
        controller: ControllerId,
        kind: Option<KindId>,
        fact: Fact,
        by_ms: Option<TimeMs>,
        /// `between D1 and D2 after FACT`: at least D1 and at most D2 after its first occurrence.
        after: Option<(DurationMs, DurationMs, Fact)>,
    },
}

/// What a probe's answer may be expected to be.
#[derive(Clone, Debug, PartialEq)]
pub enum ProbeFact {
    /// An error with exactly this message.
    Got(String),
    /// A list answered with this many items (and this list RV).
    Listed { items: u32, rv: Option<Rv> },
    /// A watch opened (replaying this many events).
    Opened { replayed: Option<u32> },
}

impl ProbeFact {
    fn matches(&self, k: &EventKind) -> bool {
        match (self, *k) {
            (ProbeFact::Got(t), EventKind::Probe(ProbeEvent::ProbeFailed { error, .. })) => {
                error.message() == *t
            }
            (
                ProbeFact::Listed { items, rv },
                EventKind::Probe(ProbeEvent::ProbeListed {
                    items: i, list_rv, ..
                }),
            ) => *items == i && rv.is_none_or(|r| r == list_rv),
            (
                ProbeFact::Opened { replayed },
                EventKind::Probe(ProbeEvent::ProbeWatchOpened { replayed: r, .. }),
            ) => replayed.is_none_or(|want| want == r),
            _ => false,
        }
    }
}

/// A fact a trace states about one reflector.
#[derive(Clone, Debug, PartialEq)]
pub enum Fact {
    /// An error with exactly this message (a watch's ERROR event, a list's failure).
    Got(String),
    /// A request: a list (or streaming list) or a watch, with its `resourceVersion` parameter
    /// as the server sees it (`"10"`, `"0"`, `""`).
    Sent { list: bool, rv: String },
}

impl Fact {
    /// Does this event state the fact (for a reflector the scope allows)?
    pub fn matches(&self, e: &Event) -> bool {
        match (self, &e.kind) {
            (
                Fact::Got(text),
                EventKind::Reflector(ReflectorEvent::WatchFailed { error, .. })
                | EventKind::Reflector(ReflectorEvent::ListFailed { error, .. }),
            ) => error.message() == *text,
            (
                Fact::Sent { list: true, rv },
                EventKind::Reflector(ReflectorEvent::ListRequest { rv: r, .. })
                | EventKind::Reflector(ReflectorEvent::WatchListRequest { rv: r, .. }),
            ) => r.param() == *rv,
            (
                Fact::Sent { list: false, rv },
                EventKind::Reflector(ReflectorEvent::WatchRequest { from_rv, .. }),
            ) => format!("\"{from_rv}\"") == *rv,
            _ => false,
        }
    }

    pub fn describe(&self) -> String {
        match self {
            Fact::Got(t) => format!("got \"{t}\""),
            Fact::Sent { list, rv } => format!(
                "sent {} resourceVersion={rv}",
                if *list { "list" } else { "watch" }
            ),
        }
    }
}

/// The outcome of one expectation.
#[derive(Clone, Debug, PartialEq)]
pub struct Outcome {
    pub pass: bool,
    /// What was found, in words.
    pub found: String,
    /// The event that decided it, if one did.
    pub decided_by: Option<EventId>,
    pub decided_ms: TimeMs,
}

fn watcher_matches(sim: &Sim, w: WatcherId, scope: &Scope) -> bool {
    let r = &sim.reflectors()[w.index()];
    scope.controller.is_none_or(|c| c == r.controller()) && scope.kind.is_none_or(|k| k == r.kind())
}

/// A scope's name means what the timeline means by it: `a` is `default/a`, `ns/a` is itself,
/// so `a` never matches both `ns/a` and `rs/a`.
fn name_matches(sim: &Sim, n: NameId, scope: &Scope) -> bool {
    scope
        .name
        .as_deref()
        .is_none_or(|want| crate::model::qualifies_as(sim.names().resolve(n), want))
}

/// Does this event count for `what` within `scope`?
pub fn counts(sim: &Sim, e: &Event, what: &Counted, scope: &Scope) -> u64 {
    let of_watcher =
        |w: Option<WatcherId>| w.is_some_and(|w| watcher_matches(sim, w, scope)) as u64;
    match (what, &e.kind) {
        (Counted::Gone, k) if k.gone().is_some() => of_watcher(k.watcher()),
        (Counted::Relists, k) if k.is_relist() => of_watcher(k.watcher()),
        (
            Counted::Lists,
            EventKind::Reflector(ReflectorEvent::ListRequest { watcher, .. })
            | EventKind::Reflector(ReflectorEvent::WatchListRequest { watcher, .. }),
        ) => watcher_matches(sim, *watcher, scope) as u64,
        (Counted::Watches, EventKind::Reflector(ReflectorEvent::WatchOpened { watcher, .. })) => {
            watcher_matches(sim, *watcher, scope) as u64
        }
        (Counted::Bookmarks, EventKind::Reflector(ReflectorEvent::Bookmark { watcher, .. })) => {
            watcher_matches(sim, *watcher, scope) as u64
        }
        (
            Counted::WatchEvents(want),
            EventKind::Reflector(ReflectorEvent::WatchEvent {
                watcher,
                event,
                name,
                ..
            }),
        ) if event == want => {
            (watcher_matches(sim, *watcher, scope) && name_matches(sim, *name, scope)) as u64
        }
        (
            Counted::Reconciles,
            EventKind::Controller(ControllerEvent::ReconcileStart {
                controller, key, ..
            }),
        ) => {
            (scope.controller.is_none_or(|c| c == *controller) && name_matches(sim, *key, scope))
                as u64
        }
        (
            Counted::Collapsed,
            EventKind::Controller(ControllerEvent::Enqueue {
                controller,
                key,
                outcome,
                ..
            }),
        ) if *outcome == QueueAdd::AlreadyQueued => {
            (scope.controller.is_none_or(|c| c == *controller) && name_matches(sim, *key, scope))
                as u64
        }
        (
            Counted::Writes(op),
            EventKind::Store(StoreEvent::Write {
                op: o, kind, name, ..
            }),
        ) if *op == o.counted_as() => {
            let by = match e.actor {
                Actor::Controller(c) => Some(c),
                _ => None,
            };
            (scope.controller.is_none_or(|c| Some(c) == by)
                && scope.kind.is_none_or(|k| k == *kind)
                && name_matches(sim, *name, scope)) as u64
        }
        (Counted::Evictions, EventKind::Store(StoreEvent::CacheAdd { kind, evicted, .. }))
            if scope.kind.is_none_or(|k| k == *kind) =>
        {
            *evicted as u64
        }
        _ => 0,
    }
}

/// Checks one expectation against a finished run.
pub fn check(sim: &Sim, expect: &Expect) -> Outcome {
    match expect {
        Expect::Count {
            what,
            scope,
            cmp,
            value,
            by_ms,
        } => check_count(sim, what, scope, cmp, value, by_ms),
        Expect::Saw {
            controller,
            kind,
            name,
            spec,
            negated,
        } => check_saw(sim, controller, kind, name, spec, negated),
        Expect::Final {
            kind,
            name,
            field,
            cmp,
            value,
        } => check_final(sim, kind, name, field, cmp, value),
        Expect::Exists {
            kind,
            name,
            negated,
        } => check_exists(sim, kind, name, negated),
        Expect::Object { kind, name, fact } => check_object(sim, *kind, name, fact),
        Expect::Trace {
            controller,
            kind,
            fact,
            by_ms,
            after,
        } => check_fact(sim, *controller, *kind, fact, *by_ms, after),
        Expect::Probe { fact } => check_probe(sim, fact),
        Expect::Message {
            text,
            cmp,
            value,
            by_ms,
        } => check_message(sim, text, *cmp, *value, *by_ms),
        Expect::Events {
            kind,
            object,
            event_type,
            reason,
            cmp,
            value,
        } => check_events(
            sim,
            *kind,
            object.as_deref(),
            (event_type, reason),
            *cmp,
            *value,
        ),
        Expect::Esr { controller } => esr(sim, *controller),
    }
}

/// `expect events`: the sum of the `count` of the Events of this type and reason (about
/// `object` if given) in etcd at the end; decided by the last write of one of them.
fn check_events(
    sim: &Sim,
    kind: KindId,
    object: Option<&str>,
    (event_type, reason): (&str, &str),
    cmp: Cmp,
    value: i64,
) -> Outcome {
    use crate::object::Value;
    let names = sim.names();
    let field = |o: &crate::model::Object, k: &str| {
        names
            .get(k)
            .and_then(|k| crate::reconcile::Section::Spec.get(o, k))
    };
    let text = |o: &crate::model::Object, k: &str| match field(o, k) {
        Some(Value::Str(s)) => Some(names.resolve(s)),
        _ => None,
    };
    // The object named is qualified as its kind's objects are (the Event says which kind).
    let scope = |kind_name: &str| {
        let kinds = &sim.config().kinds;
        let k = kinds.iter().find(|k| k.name == kind_name);
        crate::model::Scope::of(k.is_some_and(|k| k.cluster_scoped))
    };
    let (mut n, mut last) = (0i64, None::<EventId>);
    for o in sim.etcd().objects().values().filter(|o| o.kind == kind) {
        let about = match field(o, "involvedObject.name") {
            Some(Value::Str(id)) => Some(id),
            _ => None,
        };
        let involved = |want: &str| {
            let of_kind = scope(text(o, "involvedObject.kind").unwrap_or(""));
            about.is_some() && of_kind.get(names, want) == about
        };
        let matches = text(o, "type") == Some(event_type)
            && text(o, "reason") == Some(reason)
            && object.is_none_or(involved);
        if !matches {
            continue;
        }
        if let Some(Value::Int(c)) = field(o, "count") {
            n = n.saturating_add(c);
        }
        last = last.max(last_write(sim, kind, o.name));
    }
    Outcome {
        pass: cmp.holds(n, value),
        found: format!("{event_type} {reason} recorded {n} times"),
        decided_by: last,
        decided_ms: last.map_or(TimeMs::ZERO, |i| sim.trace()[i as usize].time_ms),
    }
}

/// What `count` counts over the events up to `by_ms` (all without it), and the last event
/// that counted.
fn tally(
    sim: &Sim,
    by_ms: Option<TimeMs>,
    count: impl Fn(&Event) -> u64,
) -> (i64, Option<EventId>) {
    let limit = by_ms.unwrap_or(TimeMs::MAX);
    let (mut n, mut last) = (0i64, None);
    for (i, e) in sim.trace().iter().enumerate() {
        if e.time_ms > limit {
            break;
        }
        let c = count(e) as i64;
        if c > 0 {
            n += c;
            last = Some(i as EventId);
        }
    }
    (n, last)
}

/// `expect count`: how many events of a kind (in scope) by a moment.
fn check_count(
    sim: &Sim,
    what: &Counted,
    scope: &Scope,
    cmp: &Cmp,
    value: &i64,
    by_ms: &Option<TimeMs>,
) -> Outcome {
    let (n, last) = tally(sim, *by_ms, |e| counts(sim, e, what, scope));
    let pass = cmp.holds(n, *value);
    let decided_ms = last
        .map(|i| sim.trace()[i as usize].time_ms)
        .unwrap_or(TimeMs::ZERO);
    Outcome {
        pass,
        found: format!("{n}"),
        decided_by: last,
        decided_ms,
    }
}

/// `expect saw`: a reconcile of the controller started with the primary object at this spec.
/// Is `e` what `expect saw` looks for: a reconcile of `controller` that read the object `name`
/// of `kind` (its primary kind) with this spec? What a reconcile read: the controller's
/// decisions only ever see these states.
pub fn saw(
    sim: &Sim,
    e: &Event,
    controller: ControllerId,
    kind: KindId,
    name: &str,
    spec: i64,
) -> bool {
    match e.kind {
        EventKind::Controller(ControllerEvent::ReconcileStart {
            controller: c,
            key,
            found: true,
            spec: s,
            ..
        }) => {
            c == controller
                && kind == sim.config().controllers[controller.index()].primary
                && s == spec
                && crate::model::qualifies_as(sim.names().resolve(key), name)
        }
        _ => false,
    }
}

fn check_saw(
    sim: &Sim,
    controller: &ControllerId,
    kind: &KindId,
    name: &str,
    spec: &i64,
    negated: &bool,
) -> Outcome {
    let end = sim.now_ms();
    let first = (sim.trace().iter()).position(|e| saw(sim, e, *controller, *kind, name, *spec));
    let saw = first.is_some();
    Outcome {
        pass: saw != *negated,
        found: if saw {
            "seen".into()
        } else {
            "never seen".into()
        },
        decided_by: first.map(|i| i as EventId),
        decided_ms: first.map(|i| sim.trace()[i].time_ms).unwrap_or(end),
    }
}

/// `expect final`: a field of an object at the end of the run.
fn check_final(
    sim: &Sim,
    kind: &KindId,
    name: &str,
    field: &Field,
    cmp: &Cmp,
    value: &i64,
) -> Outcome {
    let end = sim.now_ms();
    let obj = find(sim, *kind, name);
    match obj {
        None => Outcome {
            pass: false,
            found: "absent".into(),
            decided_by: None,
            decided_ms: end,
        },
        Some(o) => {
            let v = match field {
                Field::Spec => o.spec,
                Field::Status => o.status,
            };
            let by = last_write(sim, *kind, o.name);
            Outcome {
                pass: cmp.holds(v, *value),
                found: format!("{v}"),
                decided_by: by,
                decided_ms: by
                    .map(|i| sim.trace()[i as usize].time_ms)
                    .unwrap_or(TimeMs::ZERO),
            }
        }
    }
}

/// `expect final KIND NAME spec.PATH | has-label | finalizers ...`: the object at the end.
fn check_object(sim: &Sim, kind: KindId, name: &str, fact: &ObjectFact) -> Outcome {
    use crate::config::FieldValue;
    use crate::object::Value;
    let end = sim.now_ms();
    let Some(o) = find(sim, kind, name) else {
        return Outcome {
            pass: false,
            found: "absent".into(),
            decided_by: None,
            decided_ms: end,
        };
    };
    let names = sim.names();
    let body = o.body.data();
    let (pass, found) = match fact {
        ObjectFact::Field {
            status,
            path,
            cmp,
            value,
        } => {
            let map = if *status { &body.status } else { &body.spec };
            let got = names
                .get(path)
                .and_then(|k| crate::object::get(map, k).copied());
            let equal = |eq: bool| if *cmp == Cmp::Ne { !eq } else { eq };
            match (got, value) {
                (None, value) => (equal(value.is_none()), "null".to_string()),
                (Some(v), None) => (equal(false), v.text(names)),
                (Some(Value::Int(a)), Some(FieldValue::Int(b))) => {
                    (cmp.holds(a, *b), a.to_string())
                }
                (Some(Value::Str(a)), Some(FieldValue::Str(b))) => {
                    let a = names.resolve(a);
                    (equal(a == b), format!("{a:?}"))
                }
                (Some(v), _) => (false, v.text(names)),
            }
        }
        ObjectFact::HasLabel {
            key,
            value,
            negated,
        } => {
            let got = names.get(key).and_then(|k| o.body.label(k));
            let has = match (got, value) {
                (Some(g), Some(v)) => names.resolve(g) == v,
                (Some(_), None) => true,
                (None, _) => false,
            };
            let found = match got {
                Some(g) => format!("{key}={}", names.resolve(g)),
                None => format!("no label {key}"),
            };
            (has != *negated, found)
        }
        ObjectFact::Count { what, cmp, value } => {
            let n = match what {
                ObjectCount::Finalizers => o.finalizer_count() as i64,
                ObjectCount::Owners => o.owner_refs().count() as i64,
                ObjectCount::Generation => o.generation as i64,
            };
            (cmp.holds(n, *value), n.to_string())
        }
    };
    let by = last_write(sim, kind, o.name);
    Outcome {
        pass,
        found,
        decided_by: by,
        decided_ms: by
            .map(|i| sim.trace()[i as usize].time_ms)
            .unwrap_or(TimeMs::ZERO),
    }
}

/// `expect exists`: is the object there at the end of the run?
fn check_exists(sim: &Sim, kind: &KindId, name: &str, negated: &bool) -> Outcome {
    let obj = find(sim, *kind, name);
    let by = object_id(sim, *kind, name).and_then(|n| last_write(sim, *kind, n));
    Outcome {
        pass: obj.is_some() != *negated,
        found: if obj.is_some() {
            "exists".into()
        } else {
            "absent".into()
        },
        decided_by: by,
        decided_ms: by
            .map(|i| sim.trace()[i as usize].time_ms)
            .unwrap_or(TimeMs::ZERO),
    }
}

/// Does this event's one-line message contain `text` (`expect message`)?
pub fn says(sim: &Sim, e: &Event, text: &str) -> bool {
    describe(&e.kind, sim).contains(text)
}

/// `expect message "TEXT" CMP N`: the events whose message contains the text, by a moment;
/// decided by the last of them (or, when none is needed and none came, by nothing).
fn check_message(sim: &Sim, text: &str, cmp: Cmp, value: i64, by_ms: Option<TimeMs>) -> Outcome {
    let (n, last) = tally(sim, by_ms, |e| u64::from(says(sim, e, text)));
    Outcome {
        pass: cmp.holds(n, value),
        found: format!("{n} events saying it"),
        decided_by: last,
        decided_ms: last.map_or(TimeMs::ZERO, |i| sim.trace()[i as usize].time_ms),
    }
}

/// `expect probe`: a probe got this answer.
fn check_probe(sim: &Sim, fact: &ProbeFact) -> Outcome {
    let end = sim.now_ms();
    let hit = sim.trace().iter().position(|e| fact.matches(&e.kind));
    let answers: Vec<String> = sim
        .trace()
        .iter()
        .enumerate()
        .filter(|(_, e)| {
            matches!(
                e.kind,
                EventKind::Probe(ProbeEvent::ProbeListed { .. })
                    | EventKind::Probe(ProbeEvent::ProbeFailed { .. })
                    | EventKind::Probe(ProbeEvent::ProbeWatchOpened { .. })
            )
        })
        .take(3)
        .map(|(i, e)| crate::trace::describe(&e.kind, sim).to_string() + &format!(" (#{i})"))
        .collect();
    Outcome {
        pass: hit.is_some(),
        found: match hit {
            Some(i) => crate::trace::describe(&sim.trace()[i].kind, sim),
            None if answers.is_empty() => "no probe answered".into(),
            None => answers.join("; "),
        },
        decided_by: hit.map(|i| i as EventId),
        decided_ms: hit.map(|i| sim.trace()[i].time_ms).unwrap_or(end),
    }
}

/// ESR at the end of the run, as an outcome (`esr.rs` decides it and says it).
fn esr(sim: &Sim, controller: Option<ControllerId>) -> Outcome {
    esr_verdict(sim, crate::esr::esr_outcome(sim, controller))
}

pub use crate::esr::esr_verdict;

/// The events of a controller's reflectors (of one kind, if given) that state `fact`.
fn fact_times<'a>(
    sim: &'a Sim,
    controller: ControllerId,
    kind: Option<KindId>,
    fact: &'a Fact,
) -> impl Iterator<Item = (usize, TimeMs)> + 'a {
    let scope = Scope {
        controller: Some(controller),
        kind,
        name: None,
    };
    sim.trace().iter().enumerate().filter_map(move |(i, e)| {
        let w = e.kind.watcher()?;
        (watcher_matches(sim, w, &scope) && fact.matches(e)).then_some((i, e.time_ms))
    })
}

fn check_fact(
    sim: &Sim,
    controller: ControllerId,
    kind: Option<KindId>,
    fact: &Fact,
    by_ms: Option<TimeMs>,
    after: &Option<(DurationMs, DurationMs, Fact)>,
) -> Outcome {
    let window = match after {
        None => Some((TimeMs::ZERO, by_ms.unwrap_or(TimeMs::MAX))),
        Some((lo, hi, first)) => fact_times(sim, controller, kind, first)
            .next()
            .map(|(_, t)| (t + *lo, (t + *hi).min(by_ms.unwrap_or(TimeMs::MAX)))),
    };
    let hit = window.and_then(|(lo, hi)| {
        fact_times(sim, controller, kind, fact).find(|&(_, t)| t >= lo && t <= hi)
    });
    let found = match (hit, window, after) {
        (Some((_, t)), _, _) => format!("at {t}"),
        (None, None, Some((_, _, first))) => format!("never {}", first.describe()),
        (None, _, _) => match fact_times(sim, controller, kind, fact).next() {
            Some((_, t)) => format!("only at {t}"),
            None => "never".into(),
        },
    };
    Outcome {
        pass: hit.is_some(),
        found,
        decided_by: hit.map(|(i, _)| i as EventId),
        decided_ms: hit.map(|(_, t)| t).unwrap_or(sim.now_ms()),
    }
}

/// The name of the object of `kind` a script calls `name`: `a` is `default/a`, but a
/// cluster-scoped kind's `a` is itself.
fn object_id(sim: &Sim, kind: KindId, name: &str) -> Option<NameId> {
    crate::model::Scope::of(sim.config().cluster_scoped(kind)).get(sim.names(), name)
}

fn find(sim: &Sim, kind: KindId, name: &str) -> Option<crate::model::Object> {
    let id = object_id(sim, kind, name)?;
    sim.etcd().get(kind, id).cloned()
}

fn last_write(sim: &Sim, kind: KindId, name: NameId) -> Option<EventId> {
    sim.trace().iter().rposition(|e| matches!(e.kind, EventKind::Store(StoreEvent::Write { kind: k, name: n, .. }) if k == kind && n == name)).map(|i| i as EventId)
}

/// Labels for rendering a run's events.
impl Labels for Sim {
    fn name(&self, id: NameId) -> &str {
        self.names().resolve(id)
    }
    fn kind(&self, id: KindId) -> &str {
        self.config()
            .kinds
            .get(id.index())
            .map(|k| k.name.as_str())
            .unwrap_or("?")
    }
    fn apiserver(&self, id: ApiserverId) -> &str {
        self.config()
            .apiservers
            .get(id.index())
            .map(|a| a.name.as_str())
            .unwrap_or("?")
    }
    fn controller(&self, id: ControllerId) -> &str {
        self.config()
            .controllers
            .get(id.index())
            .map(|c| c.name.as_str())
            .unwrap_or("?")
    }
    fn fields(&self, body: BodyRef) -> String {
        let kinds = &self.config().kinds;
        let kind = |k: KindId| {
            kinds
                .get(k.index())
                .map_or_else(|| "?".into(), |k| k.name.clone())
        };
        self.trace().body(body).describe(self.names(), kind)
    }
    fn watcher(&self, id: WatcherId) -> String {
        let r = &self.reflectors()[id.index()];
        format!(
            "{}/{}",
            Labels::controller(self, r.controller()),
            Labels::kind(self, r.kind())
        )
    }
}

/// One event in words, as `trace::describe` says it; a write also says what its object holds
/// beyond `spec N`/`status N` (the `ObjectFields` event the server emits right after it), so a
/// write of named fields does not read as `(spec 0, status 0)` alone.
pub fn describe_event(sim: &Sim, id: EventId) -> String {
    let trace = sim.trace();
    let Some(e) = trace.get(id as usize) else {
        return String::new();
    };
    let text = describe(&e.kind, sim);
    match (
        e.kind,
        trace.get(id as usize + 1).map(|f| (f.cause, f.kind)),
    ) {
        (
            EventKind::Store(StoreEvent::Write { rv, .. }),
            Some((cause, EventKind::Store(StoreEvent::ObjectFields { rv: at, body, .. }))),
        ) if cause == id && at == rv => {
            format!("{text}, holding {}", Labels::fields(sim, body))
        }
        _ => text,
    }
}

/// "Why did this happen?": the event and its causes, newest first, in words.
pub fn explain(sim: &Sim, id: EventId) -> Vec<(EventId, String)> {
    let mut out = vec![];
    // At most 64: a `Vec` (a `BTreeSet` type costs the page's wasm about a kilobyte gzipped).
    let mut seen = Vec::new();
    let mut cur = Some(id);
    while let Some(i) = cur {
        if seen.contains(&i) || out.len() >= 64 {
            break;
        }
        seen.push(i);
        let Some(e) = sim.trace().get(i as usize) else {
            break;
        };
        let mut text = format!(
            "at {}: {} {}",
            e.time_ms,
            actor_label(e.actor, sim),
            describe_event(sim, i)
        );
        if let EventKind::Reflector(ReflectorEvent::WatchFailed {
            error:
                ApiError::TooOld {
                    requested,
                    oldest_minus_one,
                },
            watcher,
        }) = e.kind
        {
            // Evictions since the watcher's RV was written: a backward scan that stops there.
            let kind = sim.reflectors()[watcher.index()].kind();
            let mut evicted = 0u64;
            for x in sim.trace().range(..i as usize).rev() {
                if let EventKind::Store(StoreEvent::CacheAdd {
                    kind: k,
                    evicted: n,
                    rv,
                    ..
                }) = x.kind
                {
                    if k == kind {
                        if rv <= requested {
                            break;
                        }
                        evicted += n as u64;
                    }
                }
            }
            text += &format!(
                " (the cache's oldest RV is {}: {evicted} events evicted since rv {requested} was written)",
                oldest_minus_one.get() + 1
            );
        }
        out.push((i, text));
        if let EventKind::Controller(ControllerEvent::ReconcileStart { .. }) = e.kind {
            // The reads that decided what this reconcile wrote: emitted right after its start.
            for (j, r) in sim.trace().iter().enumerate().skip(i as usize + 1).take(64) {
                if r.cause == i
                    && matches!(
                        r.kind,
                        EventKind::Controller(ControllerEvent::ReconcileRead { .. })
                    )
                {
                    let line = format!("  it {}", describe(&r.kind, sim));
                    out.insert(out.len() - 1, (j as EventId, line));
                }
            }
        }
        cur = e.cause();
    }
    out
}

/// The whole verdict of a run: every expectation with its outcome.
pub fn check_all(sim: &Sim, expects: &[Expect]) -> Vec<Outcome> {
    expects.iter().map(|e| check(sim, e)).collect()
}

/// A run of a configuration to its end.
pub fn run(config: Config) -> Result<Sim, crate::config::ConfigError> {
    let mut sim = Sim::new(config)?;
    sim.run();
    Ok(sim)
}
