//! Events as text: the `--trace` line of each event, through `Labels` (names live once in
//! `Names`, so an event renders only where its labels are known).

use super::*;

/// Names needed to render events as text.
pub trait Labels {
    fn name(&self, id: NameId) -> &str;
    fn kind(&self, id: KindId) -> &str;
    fn apiserver(&self, id: ApiserverId) -> &str;
    fn controller(&self, id: ControllerId) -> &str;
    /// `controller/Kind` for a reflector.
    fn watcher(&self, id: WatcherId) -> String;
    /// What an object body an `ObjectFields` event points to holds, in words
    /// (`Body::describe`).
    fn fields(&self, body: BodyRef) -> String;
}

pub fn actor_label(actor: Actor, l: &dyn Labels) -> String {
    match actor {
        Actor::User => "user".into(),
        Actor::Etcd => "etcd".into(),
        Actor::Apiserver(a) => l.apiserver(a).to_string(),
        Actor::Watcher(w) => l.watcher(w),
        Actor::Controller(c) => l.controller(c).to_string(),
        Actor::Narrator => "say".into(),
        Actor::GarbageCollector => "garbage-collector".into(),
        Actor::Probe => "probe".into(),
    }
}

/// One line of prose for an event, without time or actor.
pub fn describe(kind: &EventKind, l: &dyn Labels) -> String {
    match kind {
        EventKind::Store(e) => describe_store(e, l),
        EventKind::Reflector(e) => describe_reflector(e, l),
        EventKind::Controller(e) => describe_controller(e, l),
        EventKind::Fault(e) => describe_fault(e, l),
        EventKind::Probe(e) => describe_probe(e, l),
        EventKind::Say(e) => l.name(e.text).to_string(),
    }
}

/// `describe` for etcd and the watch caches.
fn describe_store(kind: &StoreEvent, l: &dyn Labels) -> String {
    use StoreEvent::*;
    let obj = |k: KindId, n: NameId| format!("{}/{}", l.kind(k), l.name(n));
    match *kind {
        Write {
            op,
            kind,
            name,
            rv,
            spec,
            status,
        } => {
            format!(
                "{} {} -> rv {rv} (spec {spec}, status {status})",
                op.as_str(),
                obj(kind, name)
            )
        }
        WriteFailed {
            op,
            kind,
            name,
            error,
        } => format!(
            "{} {} failed: {}",
            op.as_str(),
            obj(kind, name),
            error.status_and_message()
        ),
        NoOpWrite { kind, name } => format!("no-op update of {}: nothing written", obj(kind, name)),
        OwnerRefInvalid {
            kind,
            name,
            owner_kind,
            owner_name,
        } => {
            let dependent = l.name(name);
            let ns = dependent.split_once('/').map_or("", |(ns, _)| ns);
            format!(
                "Warning OwnerRefInvalidNamespace {}: ownerRef {} does not exist in namespace \"{ns}\"",
                obj(kind, name),
                obj(owner_kind, owner_name)
            )
        }
        ObjectFields {
            kind,
            name,
            rv,
            body,
        } => format!("{} at rv {rv}: {}", obj(kind, name), l.fields(body)),
        CacheAdd {
            kind,
            rv,
            name,
            evicted,
            capacity,
            ..
        } => {
            let mut s = format!("{} cache += rv {rv} ({})", l.kind(kind), l.name(name));
            if evicted > 0 {
                s += &format!(", evicted {evicted}");
            }
            s + &format!(", capacity {capacity}")
        }
        CacheReset {
            kind,
            list_rv,
            ready,
            ..
        } => {
            if ready {
                format!(
                    "{} cache listed etcd at rv {list_rv}: history emptied",
                    l.kind(kind)
                )
            } else {
                format!(
                    "{} cache re-initialising: watches closed, 429 until ready",
                    l.kind(kind)
                )
            }
        }
        Compacted { rev } => format!("compacted etcd to rev {rev}"),
    }
}

/// `describe` for lists, watches and reflectors.
fn describe_reflector(kind: &ReflectorEvent, l: &dyn Labels) -> String {
    use ReflectorEvent::*;
    match *kind {
        ListRequest { rv, .. } => format!("list resourceVersion={}", rv.param()),
        ListResult {
            list_rv,
            items,
            from_etcd,
            more,
            ..
        } => format!(
            "list {} {items} items at rv {list_rv} (from {}){}",
            if more { "page of" } else { "returned" },
            if from_etcd { "etcd" } else { "the watch cache" },
            if more { ", continue token" } else { "" }
        ),
        ListContinue { list_rv, .. } => format!("list next page (continue at rv {list_rv})"),
        ListFailed { error, .. } => format!("list failed: {}", error.status_and_message()),
        WatchRequest {
            from_rv,
            timeout_ms,
            ..
        } => {
            format!("watch from rv {from_rv} (timeout {timeout_ms})")
        }
        WatchListRequest { rv, .. } => format!(
            "watch resourceVersion={} sendInitialEvents=true (streaming list)",
            rv.param()
        ),
        InitialEventsEnd { rv, items, .. } => {
            format!("BOOKMARK rv {rv} k8s.io/initial-events-end: {items} initial events applied")
        }
        // `reflector.go` `produceWarningIfExpired`, named by the reflector.
        BookmarkExpired {
            watcher,
            received,
            since_ms,
        } => {
            let name = l.watcher(watcher);
            if received {
                format!("Warning: event bookmark expired: {name}: hasn't received required bookmark event marking the end of initial events stream, received last event {since_ms} ago")
            } else {
                format!("Warning: event bookmark expired: {name}: awaiting required bookmark event for initial events stream, no events received for {since_ms}")
            }
        }
        WatchOpened {
            from_rv, replayed, ..
        } => {
            format!("watch from rv {from_rv} open, replaying {replayed} events")
        }
        WatchFailed { error, .. } => {
            if error.code() == 410 || error.code() == 429 {
                format!("ERROR {} {}", error.code(), error.message())
            } else {
                format!("watch failed: {}", error.message())
            }
        }
        WatchEvent {
            event,
            name,
            rv,
            spec,
            ..
        } => {
            format!("{} {} rv {rv} (spec {spec})", event.as_str(), l.name(name))
        }
        Bookmark { rv, .. } => format!("BOOKMARK rv {rv}"),
        WatchEnded { reason, .. } => match reason {
            WatchEnd::Timeout => "watch timed out (normal close)".into(),
            WatchEnd::Disconnected => "watch connection broke".into(),
            WatchEnd::TooSlow => "server closed the watch: client too slow".into(),
            WatchEnd::ServerClosed => "server closed the watch".into(),
        },
        State { state, last_rv, .. } => format!("state {} (last rv {last_rv})", state.as_str()),
        Backoff { delay_ms, .. } => format!("backing off {delay_ms}"),
    }
}

/// `describe` for informers, queues and reconciles.
fn describe_controller(kind: &ControllerEvent, l: &dyn Labels) -> String {
    use ControllerEvent::*;
    match *kind {
        Informer {
            delivery,
            name,
            rv,
            spec,
            ..
        } => format!(
            "informer {} {} rv {rv} (spec {spec}{})",
            delivery.delta().as_str(),
            l.name(name),
            if delivery.deleting() {
                ", deleting"
            } else {
                ""
            }
        ),
        Enqueue {
            key,
            outcome,
            delay_ms,
            ..
        } => {
            let what = match outcome {
                QueueAdd::Added => "queued",
                QueueAdd::AlreadyQueued => "already queued (collapsed)",
                QueueAdd::MarkedDirty => "marked dirty (runs again after the current reconcile)",
            };
            if !delay_ms.is_zero() {
                format!("{} {what} after {delay_ms}", l.name(key))
            } else {
                format!("{} {what}", l.name(key))
            }
        }
        ReconcileStart { key, worker, .. } => {
            format!("reconcile {} (worker {worker})", l.name(key))
        }
        ReconcileEnd { key, result, .. } => match result {
            ReconcileResult::Done => format!("reconcile {} done", l.name(key)),
            ReconcileResult::RequeueAfter(d) => {
                format!("reconcile {} done, requeue after {d}", l.name(key))
            }
            ReconcileResult::Error(e) => {
                format!("reconcile {} error: {}", l.name(key), e.message())
            }
            ReconcileResult::Crashed => format!("reconcile {} cut short by a crash", l.name(key)),
        },
        // What it saw, and what etcd held.
        ReconcileRead {
            kind,
            name,
            rv,
            truth_rv,
            live,
            ..
        } => {
            let seen = |rv: Rv| match rv {
                0 => "absent".to_string(),
                rv => format!("rv {rv}"),
            };
            let from = if live { "etcd (live)" } else { "its cache" };
            let obj = format!("{}/{}", l.kind(kind), l.name(name));
            let truth_rv = truth_rv.get();
            if rv == truth_rv {
                format!("read {obj} from {from}: {}", seen(rv))
            } else {
                format!(
                    "read {obj} from {from}: {} (stale: etcd has {})",
                    seen(rv),
                    seen(truth_rv)
                )
            }
        }
    }
}

/// `describe` for faults and their ends.
fn describe_fault(kind: &FaultEvent, l: &dyn Labels) -> String {
    use FaultEvent::*;
    match *kind {
        Crash { .. } => "crashed".into(),
        Restart { apiserver, .. } => format!("restarted against {}", l.apiserver(apiserver)),
        Disconnect { until_ms, .. } => format!("disconnected until {until_ms}"),
        Reconnect { .. } => "connection restored".into(),
        Failover { apiserver, .. } => format!(
            "connections fail over to {} (watches break; reflectors keep their last RV)",
            l.apiserver(apiserver)
        ),
        LinkDelay { delay_ms, .. } => format!("link delay set to {delay_ms}"),
        HoldArmed { kind, name, .. } => format!(
            "notifications held until a later state of {}/{} arrives",
            l.kind(kind),
            l.name(name)
        ),
        HoldReleased {
            held, superseded, ..
        } => {
            if superseded {
                format!("{held} held notifications released together (a later state arrived)")
            } else {
                format!("{held} held notifications released (no later state came)")
            }
        }
        CachePaused { paused, .. } => {
            if paused {
                "watch cache paused (stale)".into()
            } else {
                "watch cache resumed".into()
            }
        }
        ApiserverRestart { down_ms, .. } => format!("restarting, down for {down_ms}"),
    }
}

/// `describe` for probes.
fn describe_probe(kind: &ProbeEvent, l: &dyn Labels) -> String {
    use ProbeEvent::*;
    match *kind {
        ProbeRequest {
            probe,
            apiserver,
            kind,
            ask,
        } => match ask.request() {
            crate::config::ProbeRequest::List { rv } => format!(
                "probe {probe}: list {} resourceVersion={}{} on {}",
                l.kind(kind),
                rv.param(),
                ask.selector()
                    .map_or(String::new(), |s| format!(" {}", l.name(s))),
                l.apiserver(apiserver)
            ),
            crate::config::ProbeRequest::Watch { from } => format!(
                "probe {probe}: watch {} resourceVersion=\"{from}\" on {}",
                l.kind(kind),
                l.apiserver(apiserver)
            ),
            crate::config::ProbeRequest::WatchMostRecent => format!(
                "probe {probe}: watch {} resourceVersion=\"\" on {}",
                l.kind(kind),
                l.apiserver(apiserver)
            ),
        },
        ProbeListed {
            probe,
            items,
            list_rv,
            from_etcd,
        } => format!(
            "probe {probe}: {items} items at list rv {list_rv} (from {})",
            if from_etcd { "etcd" } else { "the watch cache" }
        ),
        ProbeWatchOpened {
            probe,
            from_rv,
            replayed,
        } => format!("probe {probe}: watch from rv {from_rv} open, replaying {replayed} events"),
        ProbeFailed { probe, error } => {
            format!("probe {probe}: ERROR {} {}", error.code(), error.message())
        }
    }
}

/// The compact one-line form: `12.345s  actor  message  <- #cause`.
pub fn line(id: EventId, e: &Event, l: &dyn Labels) -> String {
    let ms = e.time_ms.ms();
    let t = format!("{}.{:03}s", ms / 1000, ms % 1000);
    let mut s = format!(
        "#{id:<5} {t:>10}  {:<18} {}",
        actor_label(e.actor, l),
        describe(&e.kind, l)
    );
    if let Some(c) = e.cause() {
        s += &format!("  <- #{c}");
    }
    s
}
