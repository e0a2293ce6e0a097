//! The picture of the system at any moment of a trace, folded from the events alone, with
//! checkpoints so that seeking anywhere applies at most `CHECKPOINT_EVERY` events.

use std::collections::VecDeque;

use crate::model::{KindId, NameId, Rv, TimeMs, WatcherId};
use crate::sim::Sim;
use crate::trace::*;

pub const CHECKPOINT_EVERY: usize = 2048;
/// Evicted entries a cache view names for its latest addition, at most.
pub const EVICTED_SHOWN: usize = 8;
/// Finished reconciles a queue view keeps, newest last.
pub const DONE_SHOWN: usize = 8;

#[derive(Clone, Debug, Default, PartialEq)]
pub struct CacheView {
    /// Buffered events, oldest first: (rv, object name).
    pub ring: VecDeque<(Rv, NameId)>,
    pub capacity: u32,
    pub evicted_total: u64,
    /// What the latest addition evicted to make room, oldest first (at most `EVICTED_SHOWN`):
    /// the entries are gone from `ring`, so this is the only place that still names them.
    pub evicted_last: Vec<Rv>,
    pub paused: bool,
    pub ready: bool,
}

#[derive(Clone, Debug, PartialEq)]
pub struct WatcherView {
    pub state: WatcherState,
    pub last_rv: Rv,
    /// The last 410 (or other watch error) and when.
    pub last_error: Option<EventId>,
    /// The last time a watch opened (or a streaming list ended its initial events): the watcher
    /// has recovered from any error before it.
    pub watching_since: Option<EventId>,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct QueueView {
    pub up: bool,
    /// Down after a crash (as opposed to not started yet).
    pub crashed: bool,
    pub waiting: Vec<NameId>,
    pub processing: Vec<NameId>,
    /// The latest finished reconciles (at most `DONE_SHOWN`, newest last): key and its
    /// `ReconcileEnd` event, which says how it ended.
    pub done: Vec<(NameId, EventId)>,
    pub dirty: Vec<NameId>,
    pub reconciles: u64,
    /// The controller's latest write (or failed write).
    pub last_write: Option<EventId>,
    /// What the running reconciles (of the user's own logic) read: (key, `ReconcileRead` event).
    pub reads: Vec<(NameId, EventId)>,
    /// The key whose reconcile started last: its reads follow its start.
    pub last_started: Option<NameId>,
    /// Each running reconcile's steps: (key, its start event, writes decided, writes made).
    pub steps: Vec<(NameId, EventId, u32, u32)>,
}

/// The whole system at one moment.
#[derive(Clone, Debug, PartialEq)]
pub struct View {
    /// Events applied so far.
    pub applied: usize,
    pub time_ms: TimeMs,
    pub rv: Rv,
    /// Indexed `[apiserver][kind]`.
    pub caches: Vec<Vec<CacheView>>,
    pub watchers: Vec<WatcherView>,
    pub queues: Vec<QueueView>,
    pub disconnected: Vec<bool>,
    /// The apiserver each controller talks to now.
    pub controller_apiserver: Vec<crate::model::ApiserverId>,
    pub last_say: Option<EventId>,
}

impl View {
    pub fn initial(sim: &Sim) -> View {
        View {
            applied: 0,
            time_ms: TimeMs::ZERO,
            rv: 1,
            // Every apiserver has a cache of each kind, in the kind's configured mode.
            caches: (sim.config().apiservers.iter())
                .map(|_| {
                    (sim.config().kinds.iter())
                        .map(|k| CacheView {
                            capacity: match k.cache {
                                crate::config::CacheMode::Fixed { capacity } => capacity,
                                crate::config::CacheMode::Dynamic { capacity_min, .. } => {
                                    capacity_min
                                }
                                crate::config::CacheMode::Off => 0,
                            },
                            ready: true,
                            ..Default::default()
                        })
                        .collect()
                })
                .collect(),
            watchers: sim
                .reflectors()
                .iter()
                .map(|_| WatcherView {
                    state: WatcherState::Stopped,
                    last_rv: 0,
                    last_error: None,
                    watching_since: None,
                })
                .collect(),
            queues: vec![QueueView::default(); sim.config().controllers.len()],
            disconnected: vec![false; sim.config().controllers.len()],
            controller_apiserver: sim
                .config()
                .controllers
                .iter()
                .map(|c| c.apiserver)
                .collect(),
            last_say: None,
        }
    }

    pub fn apply(&mut self, id: EventId, e: &Event) {
        self.applied = id as usize + 1;
        self.time_ms = e.time_ms;
        match e.kind {
            EventKind::Store(StoreEvent::Write { .. })
            | EventKind::Store(StoreEvent::WriteFailed { .. })
            | EventKind::Store(StoreEvent::NoOpWrite { .. }) => self.apply_write(id, e),
            EventKind::Store(StoreEvent::CacheAdd { .. })
            | EventKind::Store(StoreEvent::CacheReset { .. })
            | EventKind::Fault(FaultEvent::CachePaused { .. })
            | EventKind::Fault(FaultEvent::ApiserverRestart { .. }) => self.apply_cache(&e.kind),
            EventKind::Reflector(ReflectorEvent::State { .. })
            | EventKind::Reflector(ReflectorEvent::WatchEvent { .. })
            | EventKind::Reflector(ReflectorEvent::Bookmark { .. })
            | EventKind::Reflector(ReflectorEvent::ListResult { .. })
            | EventKind::Reflector(ReflectorEvent::InitialEventsEnd { .. })
            | EventKind::Reflector(ReflectorEvent::WatchOpened { .. })
            | EventKind::Reflector(ReflectorEvent::WatchFailed { .. })
            | EventKind::Reflector(ReflectorEvent::ListFailed { .. }) => {
                self.apply_watcher(id, &e.kind)
            }
            EventKind::Controller(ControllerEvent::Enqueue { controller, .. })
            | EventKind::Controller(ControllerEvent::ReconcileStart { controller, .. })
            | EventKind::Controller(ControllerEvent::ReconcileRead { controller, .. })
            | EventKind::Controller(ControllerEvent::ReconcileEnd { controller, .. })
            | EventKind::Fault(FaultEvent::Crash { controller }) => {
                self.queues[controller.index()].apply(id, &e.kind)
            }
            EventKind::Fault(FaultEvent::Restart {
                controller,
                apiserver,
            }) => {
                self.controller_apiserver[controller.index()] = apiserver;
                let q = &mut self.queues[controller.index()];
                q.up = true;
                q.crashed = false;
            }
            EventKind::Fault(FaultEvent::Disconnect { controller, .. }) => {
                self.disconnected[controller.index()] = true
            }
            EventKind::Fault(FaultEvent::Reconnect { controller }) => {
                self.disconnected[controller.index()] = false
            }
            EventKind::Say(SayEvent { .. }) => self.last_say = Some(id),
            _ => {}
        }
    }

    /// A write, made, failed or a no-op: etcd's revision, and a step of a running reconcile.
    fn apply_write(&mut self, id: EventId, e: &Event) {
        if let EventKind::Store(StoreEvent::Write { rv, .. }) = e.kind {
            self.rv = self.rv.max(rv);
        }
        let Actor::Controller(c) = e.actor else {
            return;
        };
        let q = &mut self.queues[c.index()];
        if !matches!(e.kind, EventKind::Store(StoreEvent::NoOpWrite { .. })) {
            q.last_write = Some(id);
        }
        // One of the writes a running reconcile decided.
        if let Some(s) = q.steps.iter_mut().find(|s| s.1 == e.cause) {
            s.3 += 1;
        }
    }

    fn apply_cache(&mut self, kind: &EventKind) {
        match *kind {
            EventKind::Store(StoreEvent::CacheAdd {
                apiserver,
                kind,
                rv,
                name,
                evicted,
                capacity,
            }) => {
                let c = &mut self.caches[apiserver.index()][kind.index()];
                c.evicted_last.clear();
                for _ in 0..evicted {
                    let gone = c.ring.pop_front();
                    if c.evicted_last.len() < EVICTED_SHOWN {
                        c.evicted_last.extend(gone.map(|(rv, _)| rv));
                    }
                }
                c.evicted_total += evicted as u64;
                c.ring.push_back((rv, name));
                c.capacity = capacity;
            }
            EventKind::Store(StoreEvent::CacheReset {
                apiserver,
                kind,
                ready,
                ..
            }) => {
                let c = &mut self.caches[apiserver.index()][kind.index()];
                c.ring.clear();
                c.evicted_last.clear();
                c.ready = ready;
            }
            EventKind::Fault(FaultEvent::CachePaused { apiserver, paused }) => {
                for c in &mut self.caches[apiserver.index()] {
                    c.paused = paused;
                }
            }
            EventKind::Fault(FaultEvent::ApiserverRestart { apiserver, .. }) => {
                for c in &mut self.caches[apiserver.index()] {
                    c.paused = false;
                }
            }
            _ => {}
        }
    }

    fn apply_watcher(&mut self, id: EventId, kind: &EventKind) {
        match *kind {
            EventKind::Reflector(ReflectorEvent::State {
                watcher,
                state,
                last_rv,
            }) => {
                let w = &mut self.watchers[watcher.index()];
                w.state = state;
                w.last_rv = last_rv;
            }
            EventKind::Reflector(ReflectorEvent::WatchEvent { watcher, rv, .. })
            | EventKind::Reflector(ReflectorEvent::Bookmark { watcher, rv }) => {
                self.watchers[watcher.index()].last_rv = rv;
            }
            EventKind::Reflector(ReflectorEvent::ListResult {
                watcher, list_rv, ..
            }) => self.watchers[watcher.index()].last_rv = list_rv,
            EventKind::Reflector(ReflectorEvent::InitialEventsEnd { watcher, rv, .. }) => {
                let w = &mut self.watchers[watcher.index()];
                w.last_rv = rv;
                w.watching_since = Some(id);
            }
            EventKind::Reflector(ReflectorEvent::WatchOpened { watcher, .. }) => {
                self.watchers[watcher.index()].watching_since = Some(id)
            }
            EventKind::Reflector(ReflectorEvent::WatchFailed { watcher, .. })
            | EventKind::Reflector(ReflectorEvent::ListFailed { watcher, .. }) => {
                self.watchers[watcher.index()].last_error = Some(id);
            }
            _ => {}
        }
    }
}

impl QueueView {
    /// One event of this controller's queue and workers.
    fn apply(&mut self, id: EventId, kind: &EventKind) {
        match *kind {
            EventKind::Controller(ControllerEvent::Enqueue {
                key,
                outcome,
                delay_ms,
                ..
            }) => match outcome {
                QueueAdd::Added if delay_ms.is_zero() => self.waiting.push(key),
                QueueAdd::MarkedDirty => self.dirty.push(key),
                _ => {}
            },
            EventKind::Controller(ControllerEvent::ReconcileStart { key, writes, .. }) => {
                self.waiting.retain(|k| *k != key);
                self.dirty.retain(|k| *k != key);
                self.processing.push(key);
                self.reconciles += 1;
                self.last_started = Some(key);
                self.steps.push((key, id, writes, 0));
            }
            EventKind::Controller(ControllerEvent::ReconcileRead { .. }) => {
                if let Some(key) = self.last_started {
                    self.reads.push((key, id));
                }
            }
            EventKind::Controller(ControllerEvent::ReconcileEnd { key, requeued, .. }) => {
                self.processing.retain(|k| *k != key);
                if self.done.len() == DONE_SHOWN {
                    self.done.remove(0);
                }
                self.done.push((key, id));
                self.reads.retain(|(k, _)| *k != key);
                self.steps.retain(|s| s.0 != key);
                // The engine says whether the queue took the key back (a dirty key).
                self.dirty.retain(|k| *k != key);
                if requeued {
                    self.waiting.push(key);
                }
            }
            EventKind::Fault(FaultEvent::Crash { .. }) => {
                self.up = false;
                self.crashed = true;
                self.waiting.clear();
                self.processing.clear();
                self.dirty.clear();
                self.reads.clear();
                self.steps.clear();
            }
            _ => {}
        }
    }
}

/// Checkpointed views of one trace: `at(n)` is the view after the first `n` events.
#[derive(Clone, Debug)]
pub struct Timeline {
    checkpoints: Vec<View>,
}

impl Timeline {
    pub fn new(sim: &Sim) -> Timeline {
        let mut view = View::initial(sim);
        let mut checkpoints = vec![view.clone()];
        for (i, e) in sim.trace().iter().enumerate() {
            view.apply(i as EventId, e);
            if (i + 1) % CHECKPOINT_EVERY == 0 {
                checkpoints.push(view.clone());
            }
        }
        Timeline { checkpoints }
    }

    pub fn at(&self, sim: &Sim, n: usize) -> View {
        let n = n.min(sim.trace().len());
        let mut view =
            self.checkpoints[(n / CHECKPOINT_EVERY).min(self.checkpoints.len() - 1)].clone();
        for i in view.applied..n {
            view.apply(i as EventId, &sim.trace()[i]);
        }
        view
    }

    /// The number of events up to and including time `t`.
    pub fn index_at_time(sim: &Sim, t: TimeMs) -> usize {
        sim.trace().partition_point(|e| e.time_ms <= t)
    }
}

/// One version of an object as etcd committed it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Version {
    /// The `Write` event that committed it.
    pub event: EventId,
    pub time_ms: TimeMs,
    pub actor: Actor,
    pub op: WriteOp,
    pub rv: Rv,
    pub spec: i64,
    pub status: i64,
    /// The UID etcd gave the object on its create.
    pub uid: u64,
    /// The deletion mark (a deletion requested while finalizers remain).
    pub deleting: bool,
    /// `(kind, name, uid)` of its controller owner, as etcd committed it.
    pub owner: Option<(KindId, NameId, u64)>,
    /// When it was created (`metadata.creationTimestamp`, set by the apiserver on the create,
    /// `registry/rest/create.go` `FillObjectMetaSystemFields`), kept by later versions.
    pub created_ms: TimeMs,
    /// When its deletion was requested (`metadata.deletionTimestamp`), kept by later versions.
    pub deletion_ms: Option<TimeMs>,
    /// What it holds beyond `spec N`/`status N`: the body the `ObjectFields` event its write
    /// emitted points to; its words (`Labels::fields`) read back into entries by `body_entries`.
    pub fields: Option<BodyRef>,
}

impl Version {
    /// The delete itself: the object is gone from etcd at this version.
    pub fn is_delete(&self) -> bool {
        self.op.deletes()
    }
}

/// Every version of one object (all its incarnations, in order).
#[derive(Clone, Debug, PartialEq)]
pub struct ObjectHistory {
    pub kind: KindId,
    pub name: NameId,
    pub versions: Vec<Version>,
}

/// Who holds a copy of objects.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Holder {
    Etcd,
    /// An apiserver's watch cache (kinds served with the cache off have none).
    Cache(crate::model::ApiserverId),
    /// An informer's store.
    Store(WatcherId),
}

/// How a holder's copy compares with etcd.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mark {
    /// Same version as etcd (or etcd itself).
    Fresh,
    /// A copy of an older version (of this incarnation or a previous one).
    Stale,
    /// etcd has the object; this holder has no copy.
    Missing,
    /// This holder has a copy of an object etcd no longer has.
    Ghost,
    /// Neither etcd nor this holder has it.
    Absent,
}

impl Mark {
    pub fn as_str(self) -> &'static str {
        match self {
            Mark::Fresh => "fresh",
            Mark::Stale => "stale",
            Mark::Missing => "missing",
            Mark::Ghost => "ghost",
            Mark::Absent => "absent",
        }
    }
    /// A copy that differs from the truth.
    pub fn is_stale(self) -> bool {
        matches!(self, Mark::Stale | Mark::Ghost)
    }
}

/// Each holder's copy of each object at one moment: `copies[holder]` maps an object (its index
/// in `ObjectHistories::objects`) to the version index it holds.
#[derive(Clone, Debug, PartialEq)]
pub struct Copies {
    pub applied: usize,
    pub copies: Vec<std::collections::BTreeMap<u32, u32>>,
}

/// etcd, each apiserver's cache, each informer's store: with the kind and the namespace prefix
/// each may hold.
#[allow(clippy::type_complexity)]
fn holders_of(sim: &Sim) -> (Vec<Holder>, Vec<Option<KindId>>, Vec<Option<String>>) {
    let mut holders = vec![Holder::Etcd];
    let mut holder_kind = vec![None];
    let mut holder_prefix = vec![None];
    for a in 0..sim.config().apiservers.len() {
        holders.push(Holder::Cache(crate::model::ApiserverId(a as u8)));
        holder_kind.push(None);
        holder_prefix.push(None);
    }
    for (i, r) in sim.reflectors().iter().enumerate() {
        holders.push(Holder::Store(WatcherId(i as u16)));
        holder_kind.push(Some(r.kind()));
        holder_prefix.push(
            r.namespace()
                .map(|n| format!("{}/", sim.names().resolve(n))),
        );
    }
    (holders, holder_kind, holder_prefix)
}

/// Every object's versions, read off the writes.
struct Versions {
    objects: Vec<ObjectHistory>,
    by_key: std::collections::HashMap<(KindId, NameId), u32>,
    by_rv: std::collections::HashMap<Rv, (u32, u32)>,
    first_event: Vec<EventId>,
}

impl Versions {
    fn of(sim: &Sim) -> Versions {
        use std::collections::HashMap;
        let mut objects: Vec<ObjectHistory> = vec![];
        let mut by_key: HashMap<(KindId, NameId), u32> = HashMap::new();
        let mut by_rv = HashMap::new();
        let mut first_event = vec![];
        let mut decided = sim.trace().identities().peekable();
        for (i, e) in sim.trace().iter().enumerate() {
            let EventKind::Store(StoreEvent::Write {
                op,
                kind,
                name,
                rv,
                spec,
                status,
            }) = e.kind
            else {
                continue;
            };
            let o = *by_key.entry((kind, name)).or_insert_with(|| {
                objects.push(ObjectHistory {
                    kind,
                    name,
                    versions: vec![],
                });
                first_event.push(i as EventId);
                objects.len() as u32 - 1
            });
            let prev = objects[o as usize].versions.last().copied();
            let fields = fields_after(sim, i, rv);
            // What etcd decided of its identity (UID, controller reference) is kept beside the
            // writes that decided it: a create (a new UID) or a change of the reference.
            let at = decided.next_if(|d| d.event as usize == i);
            let owner_of = |d: &crate::trace::Identity| d.owner.map(|w| (w.kind, w.name, w.uid));
            let (uid, deleting, owner, created_ms, deletion_ms) = match (at, prev) {
                (Some(d), p) if p.is_none_or(|p| p.uid != d.uid) => {
                    (d.uid, false, owner_of(d), e.time_ms, None)
                }
                (at, Some(p)) => {
                    let marked = (op == WriteOp::MarkDeleting).then_some(e.time_ms);
                    let deleting = p.deleting || marked.is_some();
                    let deletion_ms = p.deletion_ms.or(marked);
                    let owner = at.map_or(p.owner, owner_of);
                    (p.uid, deleting, owner, p.created_ms, deletion_ms)
                }
                // A version with no create before it: not a trace the engine writes.
                (_, None) => (0, false, None, e.time_ms, None),
            };
            let v = Version {
                event: i as EventId,
                time_ms: e.time_ms,
                actor: e.actor,
                op,
                rv,
                spec,
                status,
                uid,
                deleting,
                owner,
                created_ms,
                deletion_ms,
                fields,
            };
            by_rv.insert(rv, (o, objects[o as usize].versions.len() as u32));
            objects[o as usize].versions.push(v);
        }
        Versions {
            objects,
            by_key,
            by_rv,
            first_event,
        }
    }
}

/// The objects of a run, their versions, and the holders' copies at any moment, folded from the
/// events (`Write`, `CacheReset`, `CacheAdd`, `WatchEvent`, `Informer`, `Crash`, `Restart`),
/// with a few checkpoints so seeking stays cheap on long traces.
#[derive(Clone, Debug)]
pub struct Objects {
    pub objects: Vec<ObjectHistory>,
    pub holders: Vec<Holder>,
    /// The kind each holder may hold (`None`: every kind, i.e. etcd and the caches).
    holder_kind: Vec<Option<KindId>>,
    /// `holder_prefix[h]`: the namespace prefix (`ns/`) a namespaced informer sees.
    holder_prefix: Vec<Option<String>>,
    by_key: std::collections::HashMap<(KindId, NameId), u32>,
    /// rv -> (object, version).
    by_rv: std::collections::HashMap<Rv, (u32, u32)>,
    /// The event index of each object's first version: objects are numbered in that order.
    first_event: Vec<EventId>,
    checkpoints: Vec<Copies>,
    every: usize,
}

impl Objects {
    pub fn new(sim: &Sim) -> Objects {
        let (holders, holder_kind, holder_prefix) = holders_of(sim);
        let Versions {
            objects,
            by_key,
            by_rv,
            first_event,
        } = Versions::of(sim);
        let every = (sim.trace().len() / 32).max(CHECKPOINT_EVERY);
        let mut me = Objects {
            objects,
            holders,
            holder_kind,
            holder_prefix,
            by_key,
            by_rv,
            first_event,
            checkpoints: vec![],
            every,
        };
        let mut c = Copies {
            applied: 0,
            copies: vec![Default::default(); me.holders.len()],
        };
        me.checkpoints.push(c.clone());
        for (i, e) in sim.trace().iter().enumerate() {
            me.apply(sim, &mut c, i, e);
            if (i + 1) % every == 0 {
                me.checkpoints.push(c.clone());
            }
        }
        me
    }

    fn holder_index(&self, h: Holder) -> usize {
        self.holders.iter().position(|x| *x == h).unwrap_or(0)
    }

    /// The latest version of `o` at or below `rv`, if it was not deleted by then.
    fn version_at(&self, o: u32, rv: Rv) -> Option<u32> {
        let vs = &self.objects[o as usize].versions;
        let i = vs.partition_point(|v| v.rv <= rv);
        (i > 0 && !vs[i - 1].is_delete()).then(|| i as u32 - 1)
    }

    /// A cache's copies once it relisted `kind` at `list_rv` (at event `i`): its other kinds
    /// stay, that kind's objects are as of that revision.
    fn relisted(
        &self,
        held: &std::collections::BTreeMap<u32, u32>,
        kind: KindId,
        list_rv: Rv,
        i: usize,
    ) -> std::collections::BTreeMap<u32, u32> {
        let mut fresh: std::collections::BTreeMap<u32, u32> = held
            .iter()
            .filter(|(&o, _)| self.objects[o as usize].kind != kind)
            .map(|(&o, &v)| (o, v))
            .collect();
        for (o, h_) in self.objects.iter().enumerate() {
            if h_.kind == kind && self.first_event[o] as usize <= i {
                if let Some(v) = self.version_at(o as u32, list_rv) {
                    fresh.insert(o as u32, v);
                }
            }
        }
        fresh
    }

    fn apply(&self, sim: &Sim, c: &mut Copies, i: usize, e: &Event) {
        c.applied = i + 1;
        let put = |c: &mut Copies, h: usize, rv: Rv, delete: bool| {
            if let Some(&(o, v)) = self.by_rv.get(&rv) {
                if delete || self.objects[o as usize].versions[v as usize].is_delete() {
                    c.copies[h].remove(&o);
                } else {
                    c.copies[h].insert(o, v);
                }
            }
        };
        match e.kind {
            EventKind::Store(StoreEvent::Write { rv, .. }) => put(c, 0, rv, false),
            EventKind::Store(StoreEvent::CacheReset {
                apiserver,
                kind,
                list_rv,
                ..
            }) => {
                let h = self.holder_index(Holder::Cache(apiserver));
                c.copies[h] = self.relisted(&c.copies[h], kind, list_rv, i);
            }
            EventKind::Store(StoreEvent::CacheAdd { apiserver, rv, .. }) => {
                let h = self.holder_index(Holder::Cache(apiserver));
                put(c, h, rv, false);
            }
            EventKind::Reflector(ReflectorEvent::WatchEvent {
                watcher, event, rv, ..
            }) => {
                let h = self.holder_index(Holder::Store(watcher));
                put(c, h, rv, event == crate::model::EventType::Deleted);
            }
            EventKind::Controller(ControllerEvent::Informer {
                watcher,
                delivery,
                name,
                rv,
                ..
            }) => {
                let h = self.holder_index(Holder::Store(watcher));
                match delivery.delta() {
                    Delta::Added | Delta::Updated => put(c, h, rv, false),
                    Delta::Deleted | Delta::DeletedFinalStateUnknown => {
                        let kind = sim.reflectors()[watcher.index()].kind();
                        if let Some(o) = self.by_key.get(&(kind, name)) {
                            c.copies[h].remove(o);
                        }
                    }
                    Delta::Sync => {}
                }
            }
            // A crashed process loses its informers' memory; a restart lists afresh.
            EventKind::Fault(FaultEvent::Crash { controller })
            | EventKind::Fault(FaultEvent::Restart { controller, .. }) => {
                for (w, r) in sim.reflectors().iter().enumerate() {
                    if r.controller() == controller {
                        let h = self.holder_index(Holder::Store(WatcherId(w as u16)));
                        c.copies[h].clear();
                    }
                }
            }
            _ => {}
        }
    }

    /// The copies after the first `n` events.
    pub fn at(&self, sim: &Sim, n: usize) -> Copies {
        let n = n.min(sim.trace().len());
        let mut c = self.checkpoints[(n / self.every).min(self.checkpoints.len() - 1)].clone();
        for i in c.applied..n {
            self.apply(sim, &mut c, i, &sim.trace()[i]);
        }
        c
    }

    /// The objects written to by the moment `n` (a prefix of `objects`).
    pub fn seen(&self, n: usize) -> usize {
        self.first_event.partition_point(|&e| (e as usize) < n)
    }

    /// Whether holder `h` can hold object `o` at all (its kind and namespace).
    pub fn holds_kind(&self, sim: &Sim, h: usize, o: usize) -> bool {
        let ob = &self.objects[o];
        let kind_ok = match self.holders[h] {
            Holder::Etcd => true,
            Holder::Cache(_) => {
                sim.config().kinds[ob.kind.index()].cache != crate::config::CacheMode::Off
            }
            Holder::Store(_) => self.holder_kind[h] == Some(ob.kind),
        };
        kind_ok
            && self.holder_prefix[h]
                .as_ref()
                .is_none_or(|p| sim.names().resolve(ob.name).starts_with(p.as_str()))
    }

    /// Holder `h`'s copy of object `o` at `c`, and how it compares with etcd.
    pub fn copy(&self, c: &Copies, h: usize, o: usize) -> (Option<&Version>, Mark) {
        let get = |h: usize| {
            c.copies[h]
                .get(&(o as u32))
                .map(|&v| &self.objects[o].versions[v as usize])
        };
        let truth = get(0);
        let mine = get(h);
        let mark = match (mine, truth) {
            (Some(m), Some(t)) if m.rv == t.rv => Mark::Fresh,
            (Some(_), Some(_)) => Mark::Stale,
            (Some(_), None) => Mark::Ghost,
            (None, Some(_)) => Mark::Missing,
            (None, None) => Mark::Absent,
        };
        (mine, mark)
    }

    /// The index of the object with this key.
    pub fn find(&self, kind: KindId, name: NameId) -> Option<usize> {
        self.by_key.get(&(kind, name)).map(|&o| o as usize)
    }
}

/// The body of the `ObjectFields` event said right after the write at event `i` (of revision
/// `rv`), if any.
fn fields_after(sim: &Sim, i: usize, rv: Rv) -> Option<BodyRef> {
    let next = sim.trace().get(i + 1)?;
    match next.kind {
        EventKind::Store(StoreEvent::ObjectFields { rv: at, body, .. })
            if at == rv && next.cause() == Some(i as EventId) =>
        {
            Some(body)
        }
        _ => None,
    }
}

/// `Body::describe`'s words read back into entries, in its order: `("labels.app", "web")`,
/// `("spec.image", "\"v1\"")`, `("finalizers", "a,b")`, `("ownerReferences", "…")`. Its parts are
/// split on `; ` and its fields on spaces, outside quoted strings; a text cut at
/// `MAX_DESCRIBE_CHARS` keeps its `...` on the last entry.
pub fn body_entries(text: &str) -> Vec<(String, String)> {
    let mut out = vec![];
    for part in split_unquoted(text, "; ") {
        let maps = [("labels ", "labels."), ("annotations ", "annotations.")];
        if let Some((rest, prefix)) = maps
            .iter()
            .find_map(|(w, p)| part.strip_prefix(w).map(|r| (r, p)))
        {
            for pair in split_unquoted(rest, ",") {
                let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
                out.push((format!("{prefix}{k}"), v.to_string()));
            }
        } else if let Some(rest) = part.strip_prefix("finalizers ") {
            out.push(("finalizers".into(), rest.to_string()));
        } else if let Some(rest) = part.strip_prefix("owners ") {
            out.push(("ownerReferences".into(), rest.to_string()));
        } else {
            for field in split_unquoted(part, " ") {
                let (k, v) = field.split_once('=').unwrap_or((field, ""));
                out.push((k.to_string(), v.to_string()));
            }
        }
    }
    out
}

/// `text` split on `sep` where it is not inside a `"`-quoted string (with `\` escapes).
fn split_unquoted<'a>(text: &'a str, sep: &str) -> Vec<&'a str> {
    let (mut out, mut start, mut quoted, mut escaped) = (vec![], 0, false, false);
    let mut chars = text.char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            _ if escaped => escaped = false,
            '\\' if quoted => escaped = true,
            '"' => quoted = !quoted,
            _ if !quoted && text[i..].starts_with(sep) => {
                out.push(&text[start..i]);
                start = i + sep.len();
                for _ in 1..sep.chars().count() {
                    chars.next();
                }
            }
            _ => {}
        }
    }
    out.push(&text[start..]);
    out.retain(|s| !s.is_empty());
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{ApiserverId, ControllerId};

    /// What `Body::describe` wrote reads back entry by entry, a quoted value with `; `, `,`, a
    /// space and an escaped quote in it staying whole (the objects panel compares copies so).
    #[test]
    fn a_body_described_reads_back_into_its_entries() {
        use crate::object::{set, Body, OwnerRef, Value};
        let mut names = crate::model::Names::default();
        let n = |names: &mut crate::model::Names, s: &str| names.intern(s);
        let (app, web, note, image, text) = (
            n(&mut names, "app"),
            n(&mut names, "web"),
            n(&mut names, "note"),
            n(&mut names, "image"),
            n(&mut names, "v1; a, \"b\" c"),
        );
        let (ready, fin, rs) = (
            n(&mut names, "ready"),
            n(&mut names, "example.com/a"),
            n(&mut names, "default/web"),
        );
        let mut body = Body::EMPTY;
        body.edit(|d| {
            set(&mut d.labels, app, Some(web));
            set(&mut d.annotations, note, Some(web));
            set(&mut d.spec, image, Some(Value::Str(text)));
            set(&mut d.status, ready, Some(Value::Int(2)));
            d.finalizers.push(fin);
            d.owners.push(OwnerRef {
                owner: crate::model::Owner {
                    kind: KindId(0),
                    name: rs,
                    uid: 1,
                },
                controller: true,
                block_owner_deletion: false,
            });
        });
        let described = body.describe(&names, |_| "ReplicaSet".into());
        let entries = body_entries(&described);
        let want = [
            ("labels.app", "web"),
            ("annotations.note", "web"),
            ("spec.image", "\"v1; a, \\\"b\\\" c\""),
            ("status.ready", "2"),
            ("finalizers", "example.com/a"),
            ("ownerReferences", "ReplicaSet/default/web (controller)"),
        ];
        let got: Vec<(&str, &str)> = entries
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        assert_eq!(got, want, "{described}");
    }

    /// `metadata.creationTimestamp` is the create's moment (`registry/rest/create.go`
    /// `FillObjectMetaSystemFields`), kept by every later version, the delete's too; an object
    /// created again under the same name is a new object, with its own.
    #[test]
    fn a_version_keeps_its_object_s_creation_time() {
        use crate::config::{Config, Input, TimedInput, WriteInput};
        let mut c = Config::new(&["Pod"]);
        let at = |ms: u64, w: WriteInput| TimedInput {
            at_ms: TimeMs(ms),
            input: Input::Write(w),
        };
        let (kind, name) = (KindId(0), || "a".to_string());
        c.timeline = vec![
            at(
                1000,
                WriteInput::Create {
                    kind,
                    name: name(),
                    spec: 1,
                },
            ),
            at(
                2000,
                WriteInput::Update {
                    kind,
                    name: name(),
                    spec: 2,
                },
            ),
            at(3000, WriteInput::Delete { kind, name: name() }),
            at(
                4000,
                WriteInput::Create {
                    kind,
                    name: name(),
                    spec: 1,
                },
            ),
        ];
        c.end_ms = TimeMs(5000);
        let mut sim = Sim::new(c).expect("a valid configuration");
        sim.run();
        let objects = Objects::new(&sim);
        let created: Vec<u64> = (objects.objects[0].versions.iter())
            .map(|v| v.created_ms.ms())
            .collect();
        assert_eq!(created, [1000, 1000, 1000, 4000]);
    }

    /// A full ring evicts its oldest entry for each new one: the view names the one evicted
    /// (which has left the ring), not the oldest survivor; a reset forgets it.
    #[test]
    fn a_cache_names_what_its_latest_addition_evicted() {
        let (apiserver, kind) = (ApiserverId(0), KindId(0));
        let mut view = View {
            applied: 0,
            time_ms: TimeMs::ZERO,
            rv: 1,
            caches: vec![vec![CacheView::default()]],
            watchers: vec![],
            queues: vec![],
            disconnected: vec![],
            controller_apiserver: vec![],
            last_say: None,
        };
        let add = |rv, evicted| Event {
            time_ms: TimeMs::ZERO,
            actor: Actor::Apiserver(apiserver),
            cause: NO_CAUSE,
            kind: EventKind::Store(StoreEvent::CacheAdd {
                apiserver,
                kind,
                rv,
                name: NameId(0),
                evicted,
                capacity: 3,
            }),
        };
        for (i, (rv, evicted)) in [(5, 0), (7, 0), (11, 0), (12, 1)].into_iter().enumerate() {
            view.apply(i as EventId, &add(rv, evicted));
        }
        let c = &view.caches[0][0];
        let ring: Vec<Rv> = c.ring.iter().map(|e| e.0).collect();
        assert_eq!(ring, [7, 11, 12]);
        assert_eq!(c.evicted_last, [5], "rv 5 was evicted, rv 7 survives");
        view.apply(4, &add(13, 2));
        assert_eq!(view.caches[0][0].evicted_last, [7, 11]);
        view.apply(5, &add(14, 0));
        assert!(
            view.caches[0][0].evicted_last.is_empty(),
            "only the latest addition's"
        );
        // More evicted at once than are named: the oldest are.
        for i in 0..20 {
            view.apply(6 + i, &add(100 + i as Rv, 0));
        }
        view.apply(26, &add(200, 20));
        assert_eq!(view.caches[0][0].evicted_last.len(), EVICTED_SHOWN);
        assert_eq!(view.caches[0][0].evicted_last[..3], [12, 13, 14]);
    }

    #[test]
    fn a_queue_requeues_a_dirty_key_when_its_reconcile_ends_and_forgets_all_on_a_crash() {
        let (controller, key) = (ControllerId(0), NameId(3));
        let mut q = QueueView::default();
        let enqueue = |outcome| {
            EventKind::Controller(ControllerEvent::Enqueue {
                controller,
                key,
                outcome,
                delay_ms: crate::model::DurationMs(0),
            })
        };
        q.apply(0, &enqueue(QueueAdd::Added));
        assert_eq!(q.waiting, [key]);
        let start = EventKind::Controller(ControllerEvent::ReconcileStart {
            controller,
            key,
            worker: 0,
            found: false,
            spec: 0,
            writes: 2,
        });
        q.apply(1, &start);
        assert_eq!((q.waiting.len(), q.processing.as_slice()), (0, &[key][..]));
        assert_eq!(q.steps, [(key, 1, 2, 0)]);
        q.apply(2, &enqueue(QueueAdd::MarkedDirty));
        assert_eq!(q.dirty, [key]);
        let end = EventKind::Controller(ControllerEvent::ReconcileEnd {
            controller,
            key,
            result: ReconcileResult::Done,
            requeued: true,
        });
        q.apply(3, &end);
        assert_eq!((q.dirty.len(), q.waiting.as_slice()), (0, &[key][..]));
        assert!(q.steps.is_empty() && q.processing.is_empty());
        assert_eq!(
            q.done,
            [(key, 3)],
            "the finished reconcile is listed as done"
        );
        for i in 0..DONE_SHOWN as EventId {
            q.apply(10 + i, &end);
        }
        assert_eq!(q.done.len(), DONE_SHOWN);
        assert_eq!(q.done[0].1, 10, "the oldest finished reconcile goes first");
        q.apply(4, &EventKind::Fault(FaultEvent::Crash { controller }));
        assert!(q.crashed && !q.up && q.waiting.is_empty());
        assert_eq!(q.reconciles, 1);
    }
}
