//! The trace as JSON, `listwatch-trace/2` (docs/trace-format.md, docs/trace-format.schema.json).
//! The CLI's `--json` and the page's export both call `json`.
//!
//! Core stays serde-free: the structs here are the boundary, built from core's public `Event`
//! and `EventKind`. Every event is an object with its `type` and that type's fields, plus the
//! one-line `text`. Names (objects, kinds, controllers, apiservers, watchers, actors, narration)
//! are written once, in `names`, and events refer to them by index, the text too (`{12}` stands
//! for `names[12]`), so an event's size does not grow with the length of the names it mentions.

use std::collections::HashMap;
use std::io;

use listwatch_core::verdict::Outcome;
use listwatch_core::*;
use serde::ser::SerializeSeq;
use serde::Serialize;

use crate::{Expectation, Report};

/// The version of the document: a change to its shape changes it.
pub const FORMAT: &str = "listwatch-trace/2";

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
    }
    let placeholders = Placeholders::new(&names, &actors);
    let doc = Document {
        format: FORMAT,
        end_ms: sim.now_ms().ms(),
        final_rv: sim.etcd().rev(),
        trace_hash: format!("{:016x}", listwatch_core::sim::trace_hash(sim)),
        passed: outcomes.iter().all(|(_, o)| o.pass),
        stopped_at_event_cap: matches!(sim.stopped(), Some(Stop::EventCap)),
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

/// A value as JSON that is safe to embed anywhere: besides what JSON requires, `<`, `>`, `&`,
/// DEL, the C1 controls, the line and paragraph separators and the bidirectional controls are
/// written as `\uXXXX`.
pub fn to_string<T: Serialize + ?Sized>(value: &T) -> String {
    let mut out = Vec::with_capacity(256);
    let mut ser = serde_json::Serializer::with_formatter(&mut out, SafeFormatter);
    value
        .serialize(&mut ser)
        .expect("serialising to memory cannot fail");
    String::from_utf8(out).expect("serde_json writes UTF-8")
}

/// A string as a JSON string literal, escaped like `to_string`.
pub fn esc(s: &str) -> String {
    to_string(s)
}

fn must_escape(c: char) -> bool {
    c.is_control()
        || c == '<'
        || c == '>'
        || c == '&'
        || ('\u{2028}'..='\u{202e}').contains(&c)
        || ('\u{2066}'..='\u{2069}').contains(&c)
        || c == '\u{200e}'
        || c == '\u{200f}'
}

struct SafeFormatter;

impl serde_json::ser::Formatter for SafeFormatter {
    fn write_string_fragment<W: ?Sized + io::Write>(
        &mut self,
        w: &mut W,
        fragment: &str,
    ) -> io::Result<()> {
        let mut start = 0;
        for (i, c) in fragment.char_indices() {
            if must_escape(c) {
                w.write_all(&fragment.as_bytes()[start..i])?;
                write!(w, "\\u{:04x}", c as u32)?;
                start = i + c.len_utf8();
            }
        }
        w.write_all(&fragment.as_bytes()[start..])
    }

    fn write_char_escape<W: ?Sized + io::Write>(
        &mut self,
        w: &mut W,
        escape: serde_json::ser::CharEscape,
    ) -> io::Result<()> {
        use serde_json::ser::CharEscape::*;
        let c: u8 = match escape {
            Quote => return w.write_all(b"\\\""),
            ReverseSolidus => return w.write_all(b"\\\\"),
            LineFeed => return w.write_all(b"\\n"),
            Solidus => b'/',
            Backspace => 0x08,
            FormFeed => 0x0c,
            CarriageReturn => b'\r',
            Tab => b'\t',
            AsciiControl(c) => c,
            #[allow(unreachable_patterns)]
            _ => b'?',
        };
        write!(w, "\\u{:04x}", c)
    }
}

/// The names table: each string once, in order of first use.
#[derive(Default)]
struct Interner {
    strings: Vec<String>,
    index: HashMap<String, u32>,
    /// The table index of each of the run's `NameId`s that events use.
    objects: HashMap<NameId, u32>,
}

impl Interner {
    fn intern(&mut self, s: &str) -> u32 {
        if let Some(&i) = self.index.get(s) {
            return i;
        }
        let i = self.strings.len() as u32;
        self.strings.push(s.to_string());
        self.index.insert(s.to_string(), i);
        i
    }

    fn object(&mut self, sim: &Sim, id: NameId) -> u32 {
        if let Some(&i) = self.objects.get(&id) {
            return i;
        }
        let i = self.intern(sim.names().resolve(id));
        self.objects.insert(id, i);
        i
    }
}

/// Table indices of the configuration's entities.
struct Actors {
    user: u32,
    etcd: u32,
    narrator: u32,
    gc: u32,
    probe: u32,
    kinds: Vec<u32>,
    apiservers: Vec<u32>,
    controllers: Vec<u32>,
    watchers: Vec<u32>,
}

impl Actors {
    fn new(sim: &Sim, n: &mut Interner) -> Actors {
        let all = |count: usize, label: &dyn Fn(usize) -> String, n: &mut Interner| {
            (0..count).map(|i| n.intern(&label(i))).collect::<Vec<_>>()
        };
        Actors {
            user: n.intern("user"),
            etcd: n.intern("etcd"),
            narrator: n.intern("say"),
            gc: n.intern("garbage-collector"),
            probe: n.intern("probe"),
            kinds: all(
                sim.config().kinds.len(),
                &|i| Labels::kind(sim, KindId(i as u16)).to_string(),
                n,
            ),
            apiservers: all(
                sim.config().apiservers.len(),
                &|i| Labels::apiserver(sim, ApiserverId(i as u8)).to_string(),
                n,
            ),
            controllers: all(
                sim.config().controllers.len(),
                &|i| Labels::controller(sim, ControllerId(i as u16)).to_string(),
                n,
            ),
            watchers: all(
                sim.reflectors().len(),
                &|i| Labels::watcher(sim, WatcherId(i as u16)),
                n,
            ),
        }
    }
    fn actor(&self, a: Actor) -> u32 {
        match a {
            Actor::User => self.user,
            Actor::Etcd => self.etcd,
            Actor::Apiserver(a) => self.apiservers[a.index()],
            Actor::Watcher(w) => self.watchers[w.index()],
            Actor::Controller(c) => self.controllers[c.index()],
            Actor::Narrator => self.narrator,
            Actor::GarbageCollector => self.gc,
            Actor::Probe => self.probe,
        }
    }
}

/// Opening and closing a placeholder while the text is built: characters core's prose never
/// holds (names never reach the text, only their indices do).
const OPEN: char = '\u{e000}';
const CLOSE: char = '\u{e001}';

/// `Labels` that give each name as its placeholder: core's own `describe` then writes the
/// text's template, so it says exactly what the one-line trace says.
struct Placeholders {
    kinds: Vec<String>,
    apiservers: Vec<String>,
    controllers: Vec<String>,
    watchers: Vec<String>,
    objects: HashMap<NameId, String>,
}

impl Placeholders {
    fn new(names: &Interner, a: &Actors) -> Placeholders {
        let p = |i: &u32| format!("{OPEN}{i}{CLOSE}");
        Placeholders {
            kinds: a.kinds.iter().map(p).collect(),
            apiservers: a.apiservers.iter().map(p).collect(),
            controllers: a.controllers.iter().map(p).collect(),
            watchers: a.watchers.iter().map(p).collect(),
            objects: names.objects.iter().map(|(id, i)| (*id, p(i))).collect(),
        }
    }

    /// The event's one-line text with `{N}` for `names[N]`, and `{{` `}}` for literal braces.
    fn text(&self, k: &EventKind) -> String {
        let raw = describe(k, self);
        let mut out = String::with_capacity(raw.len());
        for c in raw.chars() {
            match c {
                '{' => out += "{{",
                '}' => out += "}}",
                OPEN => out.push('{'),
                CLOSE => out.push('}'),
                c => out.push(c),
            }
        }
        out
    }
}

impl Labels for Placeholders {
    fn name(&self, id: NameId) -> &str {
        self.objects.get(&id).map_or("?", String::as_str)
    }
    fn kind(&self, id: KindId) -> &str {
        self.kinds.get(id.index()).map_or("?", String::as_str)
    }
    fn apiserver(&self, id: ApiserverId) -> &str {
        self.apiservers.get(id.index()).map_or("?", String::as_str)
    }
    fn controller(&self, id: ControllerId) -> &str {
        self.controllers.get(id.index()).map_or("?", String::as_str)
    }
    fn watcher(&self, id: WatcherId) -> String {
        self.watchers.get(id.index()).cloned().unwrap_or_default()
    }
}

/// A template's text with its names filled in: what `listwatch run --trace` shows.
pub fn render_text(template: &str, names: &[String]) -> Option<String> {
    let mut out = String::with_capacity(template.len());
    let mut chars = template.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '{' if chars.peek() == Some(&'{') => {
                chars.next();
                out.push('{');
            }
            '}' if chars.peek() == Some(&'}') => {
                chars.next();
                out.push('}');
            }
            '{' => {
                let mut n = String::new();
                for d in chars.by_ref() {
                    if d == '}' {
                        break;
                    }
                    n.push(d);
                }
                out += names.get(n.parse::<usize>().ok()?)?;
            }
            '}' => return None,
            c => out.push(c),
        }
    }
    Some(out)
}

#[derive(Serialize)]
struct Document<'a> {
    format: &'static str,
    end_ms: u64,
    final_rv: Rv,
    trace_hash: String,
    passed: bool,
    stopped_at_event_cap: bool,
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

/// An API error: its status code (0 when there is none: a refused connection, a reconcile's own
/// error), the apiserver's message, and the RVs a 410 or 504 names.
#[derive(Serialize)]
struct ErrorOut {
    error: &'static str,
    status_code: u16,
    message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    requested_rv: Option<Rv>,
    /// A 410's `(oldest-1)`, a 504's current RV.
    #[serde(skip_serializing_if = "Option::is_none")]
    boundary_rv: Option<Rv>,
}

fn error_out(e: ApiError) -> ErrorOut {
    let (error, requested_rv, boundary_rv) = match e {
        ApiError::Conflict => ("conflict", None, None),
        ApiError::AlreadyExists => ("already_exists", None, None),
        ApiError::NotFound => ("not_found", None, None),
        ApiError::UidMismatch => ("uid_mismatch", None, None),
        ApiError::TooOld {
            requested,
            oldest_minus_one,
        } => ("too_old", Some(requested), Some(oldest_minus_one)),
        ApiError::WatchCompacted => ("watch_compacted", None, None),
        ApiError::ContinueExpired => ("continue_expired", None, None),
        ApiError::TooLargeRv { requested, current } => {
            ("too_large_rv", Some(requested), Some(current))
        }
        ApiError::TooManyRequests => ("too_many_requests", None, None),
        ApiError::ConnectionRefused => ("connection_refused", None, None),
        ApiError::ReconcileError => ("reconcile_error", None, None),
        ApiError::NameTooLong => ("name_too_long", None, None),
        ApiError::ListCompacted => ("list_compacted", None, None),
        ApiError::WatchListForbidden => ("watch_list_forbidden", None, None),
        ApiError::StaleRead { read, written } => ("stale_read", Some(written), Some(read)),
    };
    ErrorOut {
        error,
        status_code: e.code(),
        message: e.message(),
        requested_rv,
        boundary_rv,
    }
}

/// Each event type's own fields. `kind`, `name`, `key`, `watcher`, `controller` and `apiserver`
/// are indices into `names`.
#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Kind {
    Write {
        op: &'static str,
        kind: u32,
        name: u32,
        rv: Rv,
        spec: i64,
        status: i64,
    },
    WriteFailed {
        op: &'static str,
        kind: u32,
        name: u32,
        #[serde(flatten)]
        error: ErrorOut,
    },
    NoOpWrite {
        kind: u32,
        name: u32,
    },
    CacheAdd {
        apiserver: u32,
        kind: u32,
        rv: Rv,
        name: u32,
        evicted: u32,
        capacity: u32,
    },
    CacheReset {
        apiserver: u32,
        kind: u32,
        list_rv: Rv,
        ready: bool,
    },
    Compacted {
        rv: Rv,
    },
    ListRequest {
        watcher: u32,
        request_rv: String,
        relist: bool,
    },
    ListResult {
        watcher: u32,
        list_rv: Rv,
        items: u32,
        from_etcd: bool,
        more: bool,
    },
    ListContinue {
        watcher: u32,
        list_rv: Rv,
    },
    ListFailed {
        watcher: u32,
        #[serde(flatten)]
        error: ErrorOut,
    },
    WatchRequest {
        watcher: u32,
        rv: Rv,
        timeout_ms: u64,
    },
    WatchListRequest {
        watcher: u32,
        request_rv: String,
        relist: bool,
    },
    InitialEventsEnd {
        watcher: u32,
        rv: Rv,
        items: u32,
    },
    BookmarkExpired {
        watcher: u32,
        received: bool,
        since_ms: u64,
    },
    WatchOpened {
        watcher: u32,
        rv: Rv,
        replayed: u32,
    },
    WatchFailed {
        watcher: u32,
        #[serde(flatten)]
        error: ErrorOut,
    },
    WatchEvent {
        watcher: u32,
        event: &'static str,
        name: u32,
        rv: Rv,
        spec: i64,
    },
    Bookmark {
        watcher: u32,
        rv: Rv,
    },
    WatchEnded {
        watcher: u32,
        reason: &'static str,
    },
    State {
        watcher: u32,
        state: &'static str,
        rv: Rv,
    },
    Backoff {
        watcher: u32,
        delay_ms: u64,
    },
    Informer {
        watcher: u32,
        delta: &'static str,
        name: u32,
        rv: Rv,
        spec: i64,
        deleting: bool,
    },
    Enqueue {
        controller: u32,
        key: u32,
        outcome: &'static str,
        delay_ms: u64,
    },
    ReconcileStart {
        controller: u32,
        key: u32,
        worker: u32,
        spec: Option<i64>,
    },
    ReconcileEnd {
        controller: u32,
        key: u32,
        result: &'static str,
        #[serde(skip_serializing_if = "Option::is_none")]
        requeue_after_ms: Option<u64>,
        #[serde(flatten, skip_serializing_if = "Option::is_none")]
        error: Option<ErrorOut>,
    },
    ReconcileRead {
        controller: u32,
        kind: u32,
        name: u32,
        /// The RV it found (absent: `null`).
        rv: Option<Rv>,
        /// etcd's RV of the object at that moment: a stale read has `rv != truth_rv`.
        truth_rv: Option<Rv>,
        live: bool,
    },
    Crash {
        controller: u32,
    },
    Restart {
        controller: u32,
        apiserver: u32,
    },
    Disconnect {
        controller: u32,
        until_ms: u64,
    },
    Failover {
        controller: u32,
        apiserver: u32,
    },
    Reconnect {
        controller: u32,
    },
    LinkDelay {
        controller: u32,
        delay_ms: u64,
    },
    HoldArmed {
        controller: u32,
        kind: u32,
        name: u32,
    },
    HoldReleased {
        controller: u32,
        held: u32,
        superseded: bool,
    },
    CachePaused {
        apiserver: u32,
        paused: bool,
    },
    ApiserverRestart {
        apiserver: u32,
        down_ms: u64,
    },
    /// Narration: `narration` is the index of its words in `names`.
    Say {
        narration: u32,
        /// Present (true) when playback pauses here for the reader: `say "..." and wait`.
        #[serde(skip_serializing_if = "std::ops::Not::not")]
        wait: bool,
    },
    ProbeRequest {
        probe: u32,
        apiserver: u32,
        kind: u32,
        /// `list` or `watch`.
        request: &'static str,
        request_rv: String,
        /// `resourceVersionMatch=Exact`.
        exact: bool,
    },
    ProbeListed {
        probe: u32,
        items: u32,
        list_rv: Rv,
        from_etcd: bool,
    },
    ProbeWatchOpened {
        probe: u32,
        from_rv: Rv,
        replayed: u32,
    },
    ProbeFailed {
        probe: u32,
        #[serde(flatten)]
        error: ErrorOut,
    },
}

/// The request's `resourceVersion` parameter as the API has it: `""`, `"0"` or `"N"`.
fn request_rv(rv: ListRv) -> String {
    match rv {
        ListRv::Consistent => String::new(),
        ListRv::Any => "0".into(),
        ListRv::NotOlderThan(rv) | ListRv::Exact(rv) => rv.to_string(),
    }
}

fn op(op: WriteOp) -> &'static str {
    match op {
        WriteOp::Create => "create",
        WriteOp::Update => "update",
        WriteOp::UpdateStatus => "update_status",
        WriteOp::MarkDeleting => "mark_deleting",
        WriteOp::Delete => "delete",
    }
}

fn watch_end(reason: WatchEnd) -> &'static str {
    match reason {
        WatchEnd::Timeout => "timeout",
        WatchEnd::Disconnected => "disconnected",
        WatchEnd::TooSlow => "too_slow",
        WatchEnd::ServerClosed => "server_closed",
    }
}

fn delta(delta: Delta) -> &'static str {
    match delta {
        Delta::Added => "added",
        Delta::Updated => "updated",
        Delta::Deleted => "deleted",
        Delta::DeletedFinalStateUnknown => "deleted_final_state_unknown",
        Delta::Sync => "sync",
    }
}

fn queue_add(outcome: QueueAdd) -> &'static str {
    match outcome {
        QueueAdd::Added => "added",
        QueueAdd::AlreadyQueued => "already_queued",
        QueueAdd::MarkedDirty => "marked_dirty",
    }
}

/// A reconcile's result as `result`, `requeue_after_ms` and the error's fields.
fn reconcile_result(result: ReconcileResult) -> (&'static str, Option<u64>, Option<ErrorOut>) {
    match result {
        ReconcileResult::Done => ("done", None, None),
        ReconcileResult::RequeueAfter(d) => ("requeue_after", Some(d.ms()), None),
        ReconcileResult::Error(e) => ("error", None, Some(error_out(e))),
        ReconcileResult::Crashed => ("crashed", None, None),
    }
}

/// The `NameId` an event refers to: an object's name, a queue key or narration.
fn name_id(k: &EventKind) -> Option<NameId> {
    use EventKind::*;
    match *k {
        Write { name, .. }
        | WriteFailed { name, .. }
        | NoOpWrite { name, .. }
        | CacheAdd { name, .. }
        | WatchEvent { name, .. }
        | HoldArmed { name, .. }
        | ReconcileRead { name, .. }
        | Informer { name, .. } => Some(name),
        Enqueue { key, .. } | ReconcileStart { key, .. } | ReconcileEnd { key, .. } => Some(key),
        Say { text, .. } => Some(text),
        _ => None,
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
        match k.family() {
            Family::Store => self.store_kind(k),
            Family::Reflector => self.reflector_kind(k),
            Family::Controller | Family::Read => self.controller_kind(k),
            Family::Fault | Family::Say => self.fault_kind(k),
            Family::Probe => self.probe_kind(k),
        }
    }

    /// Etcd and the watch caches.
    fn store_kind(&self, k: &EventKind) -> Kind {
        match *k {
            EventKind::Write {
                op: o,
                kind: k,
                name: n,
                rv,
                spec,
                status,
            } => Kind::Write {
                op: op(o),
                kind: self.kind_of(k),
                name: self.object(n),
                rv,
                spec,
                status,
            },
            EventKind::WriteFailed {
                op: o,
                kind: k,
                name: n,
                error,
            } => Kind::WriteFailed {
                op: op(o),
                kind: self.kind_of(k),
                name: self.object(n),
                error: error_out(error),
            },
            EventKind::NoOpWrite { kind: k, name: n } => Kind::NoOpWrite {
                kind: self.kind_of(k),
                name: self.object(n),
            },
            EventKind::CacheAdd {
                apiserver,
                kind: k,
                rv,
                name: n,
                evicted,
                capacity,
            } => Kind::CacheAdd {
                apiserver: self.apiserver(apiserver),
                kind: self.kind_of(k),
                rv,
                name: self.object(n),
                evicted,
                capacity,
            },
            EventKind::CacheReset {
                apiserver,
                kind: k,
                list_rv,
                ready,
            } => Kind::CacheReset {
                apiserver: self.apiserver(apiserver),
                kind: self.kind_of(k),
                list_rv,
                ready,
            },
            EventKind::Compacted { rev } => Kind::Compacted { rv: rev },
            _ => unreachable!("not one of etcd and the watch caches"),
        }
    }

    /// Lists, watches and reflectors: lists (a watch-list too, up to its initial events) here,
    /// watches and the reflector's state in `watch_kind`.
    fn reflector_kind(&self, k: &EventKind) -> Kind {
        match *k {
            EventKind::ListRequest {
                watcher,
                rv,
                relist,
            } => Kind::ListRequest {
                watcher: self.watcher(watcher),
                request_rv: request_rv(rv),
                relist,
            },
            EventKind::ListResult {
                watcher,
                list_rv,
                items,
                from_etcd,
                more,
            } => Kind::ListResult {
                watcher: self.watcher(watcher),
                list_rv,
                items,
                from_etcd,
                more,
            },
            EventKind::ListContinue { watcher, list_rv } => Kind::ListContinue {
                watcher: self.watcher(watcher),
                list_rv,
            },
            EventKind::ListFailed { watcher, error } => Kind::ListFailed {
                watcher: self.watcher(watcher),
                error: error_out(error),
            },
            EventKind::WatchListRequest {
                watcher,
                rv,
                relist,
            } => Kind::WatchListRequest {
                watcher: self.watcher(watcher),
                request_rv: request_rv(rv),
                relist,
            },
            EventKind::InitialEventsEnd { watcher, rv, items } => Kind::InitialEventsEnd {
                watcher: self.watcher(watcher),
                rv,
                items,
            },
            EventKind::BookmarkExpired {
                watcher,
                received,
                since_ms,
            } => Kind::BookmarkExpired {
                watcher: self.watcher(watcher),
                received,
                since_ms: since_ms.ms(),
            },
            _ => self.watch_kind(k),
        }
    }

    /// Watches and the reflector's state.
    fn watch_kind(&self, k: &EventKind) -> Kind {
        match *k {
            EventKind::WatchRequest {
                watcher,
                from_rv,
                timeout_ms,
            } => Kind::WatchRequest {
                watcher: self.watcher(watcher),
                rv: from_rv,
                timeout_ms: timeout_ms.ms(),
            },
            EventKind::WatchOpened {
                watcher,
                from_rv,
                replayed,
            } => Kind::WatchOpened {
                watcher: self.watcher(watcher),
                rv: from_rv,
                replayed,
            },
            EventKind::WatchFailed { watcher, error } => Kind::WatchFailed {
                watcher: self.watcher(watcher),
                error: error_out(error),
            },
            EventKind::WatchEvent {
                watcher,
                event,
                name: n,
                rv,
                spec,
            } => Kind::WatchEvent {
                watcher: self.watcher(watcher),
                event: event.as_str(),
                name: self.object(n),
                rv,
                spec,
            },
            EventKind::Bookmark { watcher, rv } => Kind::Bookmark {
                watcher: self.watcher(watcher),
                rv,
            },
            EventKind::WatchEnded { watcher, reason } => Kind::WatchEnded {
                watcher: self.watcher(watcher),
                reason: watch_end(reason),
            },
            EventKind::State {
                watcher,
                state,
                last_rv,
            } => Kind::State {
                watcher: self.watcher(watcher),
                state: state.as_str(),
                rv: last_rv,
            },
            EventKind::Backoff { watcher, delay_ms } => Kind::Backoff {
                watcher: self.watcher(watcher),
                delay_ms: delay_ms.ms(),
            },
            _ => unreachable!("not one of lists, watches and reflectors"),
        }
    }

    /// Informers and queues; reconciles in `reconcile_kind`.
    fn controller_kind(&self, k: &EventKind) -> Kind {
        match *k {
            EventKind::Informer {
                watcher,
                delta: d,
                name: n,
                rv,
                spec,
                deleting,
            } => Kind::Informer {
                watcher: self.watcher(watcher),
                delta: delta(d),
                name: self.object(n),
                rv,
                spec,
                deleting,
            },
            EventKind::Enqueue {
                controller,
                key,
                outcome,
                delay_ms,
            } => Kind::Enqueue {
                controller: self.controller(controller),
                key: self.object(key),
                outcome: queue_add(outcome),
                delay_ms: delay_ms.ms(),
            },
            _ => self.reconcile_kind(k),
        }
    }

    /// A reconcile's start, its reads and its end.
    fn reconcile_kind(&self, k: &EventKind) -> Kind {
        match *k {
            EventKind::ReconcileStart {
                controller,
                key,
                worker,
                spec,
                ..
            } => Kind::ReconcileStart {
                controller: self.controller(controller),
                key: self.object(key),
                worker,
                spec,
            },
            EventKind::ReconcileRead {
                controller,
                kind: k,
                name: n,
                rv,
                truth_rv,
                live,
            } => Kind::ReconcileRead {
                controller: self.controller(controller),
                kind: self.kind_of(k),
                name: self.object(n),
                rv: (rv != 0).then_some(rv),
                truth_rv: (truth_rv != 0).then_some(truth_rv),
                live,
            },
            EventKind::ReconcileEnd {
                controller,
                key,
                result,
            } => {
                let (result, requeue_after_ms, error) = reconcile_result(result);
                Kind::ReconcileEnd {
                    controller: self.controller(controller),
                    key: self.object(key),
                    result,
                    requeue_after_ms,
                    error,
                }
            }
            _ => unreachable!("not one of informers, queues and reconciles"),
        }
    }

    /// Faults, their ends and narration.
    fn fault_kind(&self, k: &EventKind) -> Kind {
        match *k {
            EventKind::Crash { controller } => Kind::Crash {
                controller: self.controller(controller),
            },
            EventKind::Restart {
                controller,
                apiserver,
            } => Kind::Restart {
                controller: self.controller(controller),
                apiserver: self.apiserver(apiserver),
            },
            EventKind::Disconnect {
                controller,
                until_ms,
            } => Kind::Disconnect {
                controller: self.controller(controller),
                until_ms: until_ms.ms(),
            },
            EventKind::Failover {
                controller,
                apiserver,
            } => Kind::Failover {
                controller: self.controller(controller),
                apiserver: self.apiserver(apiserver),
            },
            EventKind::Reconnect { controller } => Kind::Reconnect {
                controller: self.controller(controller),
            },
            EventKind::LinkDelay {
                controller,
                delay_ms,
            } => Kind::LinkDelay {
                controller: self.controller(controller),
                delay_ms: delay_ms.ms(),
            },
            EventKind::HoldArmed {
                controller,
                kind: k,
                name: n,
            } => Kind::HoldArmed {
                controller: self.controller(controller),
                kind: self.kind_of(k),
                name: self.object(n),
            },
            EventKind::HoldReleased {
                controller,
                held,
                superseded,
            } => Kind::HoldReleased {
                controller: self.controller(controller),
                held,
                superseded,
            },
            EventKind::CachePaused { apiserver, paused } => Kind::CachePaused {
                apiserver: self.apiserver(apiserver),
                paused,
            },
            EventKind::ApiserverRestart { apiserver, down_ms } => Kind::ApiserverRestart {
                apiserver: self.apiserver(apiserver),
                down_ms: down_ms.ms(),
            },
            EventKind::Say { text, wait } => Kind::Say {
                narration: self.object(text),
                wait,
            },
            _ => unreachable!("not one of faults, their ends and narration"),
        }
    }

    /// Probes.
    fn probe_kind(&self, k: &EventKind) -> Kind {
        match *k {
            EventKind::ProbeRequest {
                probe,
                apiserver,
                kind: k,
                request,
            } => {
                let (request, request_rv, exact) = match request {
                    ProbeRequest::List { rv } => {
                        ("list", self::request_rv(rv), matches!(rv, ListRv::Exact(_)))
                    }
                    ProbeRequest::Watch { from } => ("watch", from.to_string(), false),
                    ProbeRequest::WatchMostRecent => ("watch", String::new(), false),
                };
                Kind::ProbeRequest {
                    probe,
                    apiserver: self.apiserver(apiserver),
                    kind: self.kind_of(k),
                    request,
                    request_rv,
                    exact,
                }
            }
            EventKind::ProbeListed {
                probe,
                items,
                list_rv,
                from_etcd,
            } => Kind::ProbeListed {
                probe,
                items,
                list_rv,
                from_etcd,
            },
            EventKind::ProbeWatchOpened {
                probe,
                from_rv,
                replayed,
            } => Kind::ProbeWatchOpened {
                probe,
                from_rv,
                replayed,
            },
            EventKind::ProbeFailed { probe, error } => Kind::ProbeFailed {
                probe,
                error: error_out(error),
            },
            _ => unreachable!("not one of probes"),
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_control_character_is_escaped() {
        assert_eq!(
            super::esc("a\u{1b}[2J\u{7f}\u{85}\u{202e}\t\"\\\n<"),
            "\"a\\u001b[2J\\u007f\\u0085\\u202e\\u0009\\\"\\\\\\n\\u003c\""
        );
    }
}
