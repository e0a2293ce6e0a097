//! The engine: every component's state and the event loop that moves it through virtual time.
//!
//! Sans-IO like quinn-proto: `handle_input` takes an input now, `handle_timeout` runs every
//! action due up to a moment, `poll_timeout` says when the next one is due. Nothing here reads a
//! clock, does IO or draws randomness except from the seeded `Rng`.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet, BinaryHeap, VecDeque};
use std::sync::Arc;

use crate::cache::{WatchCache, WatchStart};
use crate::config::{
    Behaviour, CacheMode, Config, ConfigError, Input, KeyMap, Predicate, ProbeRequest, QueueKind,
    ReflectorConfig,
};
use crate::model::*;
use crate::queue::WorkQueue;
use crate::reconcile::{self, Memory, Reader, Write};
use crate::trace::*;

mod client;
mod controller;
mod inputs;
mod server;

/// etcd: the one store every apiserver shares.
#[derive(Clone, Debug, Hash)]
pub struct Etcd {
    pub rev: Rv,
    pub objects: BTreeMap<(KindId, NameId), Object>,
    /// Revisions at or below this are gone.
    pub compact_rev: Rv,
    /// Changes after `compact_rev`, kept only when some kind is served without a watch cache.
    pub log: VecDeque<Change>,
    keep_log: bool,
    /// Every change since the start, kept only when a probe lists at an Exact RV: the state at
    /// any revision is a replay of it.
    history: Option<Vec<Change>>,
    next_uid: u64,
    /// The revision seen at the previous compaction tick.
    last_tick_rev: Rv,
    /// Owner UID -> its dependents' keys: the garbage collector's graph, and owner lookups in
    /// O(log n) instead of a scan of every object.
    dependents: BTreeMap<u64, BTreeSet<(KindId, NameId)>>,
    /// (owner UID, kind) -> dependents not marked for deletion.
    live_owned: BTreeMap<(u64, KindId), u32>,
}

impl Etcd {
    fn new(config: &Config) -> Etcd {
        // Exact lists (asked by probes) need the state at any revision: keep every change.
        let exact = config.timeline.iter().any(|t| {
            matches!(
                t.input,
                Input::Probe {
                    request: ProbeRequest::List {
                        rv: ListRv::Exact(_)
                    },
                    ..
                }
            )
        });
        Etcd {
            rev: 1,
            objects: BTreeMap::new(),
            compact_rev: 0,
            log: VecDeque::new(),
            keep_log: config.kinds.iter().any(|k| k.cache == CacheMode::Off),
            history: exact.then(Vec::new),
            next_uid: 1,
            last_tick_rev: 0,
            dependents: BTreeMap::new(),
            live_owned: BTreeMap::new(),
        }
    }

    /// Keeps the owner indexes in step with one committed object (`old`: its previous state).
    fn index(&mut self, old: Option<&Object>, o: &Object, present: bool) {
        let Some(owner) = o.owner else { return };
        let live = |x: Option<&Object>| x.is_some_and(|x| x.deletion_ms.is_none()) as i64;
        let delta = live(present.then_some(o)) - live(old);
        if delta != 0 {
            let n = self.live_owned.entry((owner.uid, o.kind)).or_default();
            *n = (*n as i64 + delta) as u32;
            if *n == 0 {
                self.live_owned.remove(&(owner.uid, o.kind));
            }
        }
        let set = self.dependents.entry(owner.uid).or_default();
        if present {
            set.insert((o.kind, o.name));
        } else {
            set.remove(&(o.kind, o.name));
            if set.is_empty() {
                self.dependents.remove(&owner.uid);
            }
        }
    }

    /// The owner indexes agree with a scan of every object (an invariant the tests check).
    pub fn check_indexes(&self) -> Result<(), String> {
        let mut live: BTreeMap<(u64, KindId), u32> = BTreeMap::new();
        let mut deps: BTreeMap<u64, BTreeSet<(KindId, NameId)>> = BTreeMap::new();
        for o in self.objects.values() {
            if let Some(owner) = o.owner {
                deps.entry(owner.uid).or_default().insert((o.kind, o.name));
                if o.deletion_ms.is_none() {
                    *live.entry((owner.uid, o.kind)).or_default() += 1;
                }
            }
        }
        if live != self.live_owned {
            return Err("etcd's count of live dependents disagrees with its objects".into());
        }
        if deps != self.dependents {
            return Err("etcd's owner index disagrees with its objects".into());
        }
        Ok(())
    }

    /// Objects of `kind` owned by the object with this UID.
    pub fn owned_by(&self, kind: KindId, uid: u64) -> impl Iterator<Item = &Object> {
        self.dependents
            .get(&uid)
            .into_iter()
            .flat_map(move |set| set.range((kind, NameId(0))..=(kind, NameId(u32::MAX))))
            .filter_map(|k| self.objects.get(k))
            .filter(move |o| o.owner.is_some_and(|ow| ow.uid == uid))
    }

    /// Does the owner this reference names exist, with this UID?
    pub fn owner_exists(&self, owner: Owner) -> bool {
        self.objects
            .get(&(owner.kind, owner.name))
            .is_some_and(|o| o.uid == owner.uid)
    }
}

/// What etcd makes of a write it accepts.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Decision {
    /// Commit this object (its next revision is etcd's to give).
    Commit {
        op: WriteOp,
        event: EventType,
        obj: Object,
    },
    /// Nothing changes (an update to the same state, a delete of an object already deleting).
    NoOp { kind: KindId, name: NameId },
}

/// A write etcd (or the apiserver's validation in front of it) refuses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Refusal {
    pub op: WriteOp,
    pub kind: KindId,
    pub name: NameId,
    pub error: ApiError,
}

impl Etcd {
    /// The rules of a write: preconditions, validation, generations, finalizers. Allocates a
    /// UID for a create it accepts; commits nothing.
    pub(crate) fn decide(
        &mut self,
        w: Write,
        names: &Names,
        now_ms: TimeMs,
    ) -> Result<Decision, Refusal> {
        match w {
            Write::Create {
                kind,
                name,
                namespace,
                spec,
                owner,
            } => self.decide_create(kind, name, namespace, spec, owner, names),
            Write::Update {
                kind,
                name,
                expect_rv,
                spec,
                status,
                finalizers,
            } => self.decide_update(kind, name, expect_rv, (spec, status, finalizers)),
            Write::Delete { kind, name, uid } => self.decide_delete(kind, name, uid, now_ms),
        }
    }

    fn decide_create(
        &mut self,
        kind: KindId,
        name: NameId,
        namespace: NameId,
        spec: i64,
        owner: Option<Owner>,
        names: &Names,
    ) -> Result<Decision, Refusal> {
        let refuse = |error| {
            Err(Refusal {
                op: WriteOp::Create,
                kind,
                name,
                error,
            })
        };
        if self.objects.contains_key(&(kind, name)) {
            return refuse(ApiError::AlreadyExists);
        }
        // Names are DNS subdomains: a controller that grows names (`a-data-data-...`) stops at
        // the apiserver's validation, and so does the memory they take.
        let short = names.resolve(name).rsplit('/').next().unwrap_or("");
        if short.len() > MAX_NAME_LEN {
            return refuse(ApiError::NameTooLong);
        }
        let uid = self.next_uid;
        self.next_uid += 1;
        let obj = Object {
            kind,
            name,
            namespace,
            uid,
            rv: 0,
            generation: 1,
            spec,
            status: 0,
            owner,
            finalizers: 0,
            deletion_ms: None,
        };
        Ok(Decision::Commit {
            op: WriteOp::Create,
            event: EventType::Added,
            obj,
        })
    }

    /// `to`: the (spec, status, finalizers) the writer wants.
    fn decide_update(
        &self,
        kind: KindId,
        name: NameId,
        expect_rv: Rv,
        to: (i64, i64, u32),
    ) -> Result<Decision, Refusal> {
        let refuse = |error| {
            Err(Refusal {
                op: WriteOp::Update,
                kind,
                name,
                error,
            })
        };
        let Some(cur) = self.objects.get(&(kind, name)).copied() else {
            return refuse(ApiError::NotFound);
        };
        // 0: no precondition (a merge patch); otherwise the RV the writer read.
        if expect_rv != 0 && cur.rv != expect_rv {
            return refuse(ApiError::Conflict);
        }
        let (spec, status, finalizers) = to;
        if (cur.spec, cur.status, cur.finalizers) == to {
            return Ok(Decision::NoOp { kind, name });
        }
        let mut obj = cur;
        let op = if spec != cur.spec {
            obj.generation += 1;
            WriteOp::Update
        } else if status != cur.status {
            WriteOp::UpdateStatus
        } else {
            WriteOp::Update
        };
        obj.spec = spec;
        obj.status = status;
        obj.finalizers = finalizers;
        if obj.deletion_ms.is_some() && finalizers == 0 {
            // The last finalizer is gone: the object goes.
            let (op, event) = (WriteOp::Delete, EventType::Deleted);
            return Ok(Decision::Commit { op, event, obj });
        }
        let event = EventType::Modified;
        Ok(Decision::Commit { op, event, obj })
    }

    fn decide_delete(
        &self,
        kind: KindId,
        name: NameId,
        uid: Option<u64>,
        now_ms: TimeMs,
    ) -> Result<Decision, Refusal> {
        let refuse = |error| {
            Err(Refusal {
                op: WriteOp::Delete,
                kind,
                name,
                error,
            })
        };
        let Some(cur) = self.objects.get(&(kind, name)).copied() else {
            return refuse(ApiError::NotFound);
        };
        if uid.is_some_and(|u| u != cur.uid) {
            return refuse(ApiError::UidMismatch);
        }
        if cur.finalizers == 0 {
            let (op, event) = (WriteOp::Delete, EventType::Deleted);
            return Ok(Decision::Commit {
                op,
                event,
                obj: cur,
            });
        }
        if cur.deletion_ms.is_some() {
            return Ok(Decision::NoOp { kind, name });
        }
        let mut obj = cur;
        obj.deletion_ms = Some(now_ms);
        let (op, event) = (WriteOp::MarkDeleting, EventType::Modified);
        Ok(Decision::Commit { op, event, obj })
    }
}

#[derive(Clone, Debug, Hash)]
pub struct Apiserver {
    pub caches: Vec<WatchCache>,
    pub paused: bool,
    /// Changes held back while paused, applied on resume.
    pub held: VecDeque<Change>,
    pub lag_ms: DurationMs,
    /// Open watches served by each kind's cache.
    watches_by_kind: Vec<Vec<WatchId>>,
    /// Reads waiting (at most 3 s) for the cache to reach a revision.
    waiting_reads: Vec<WaitingRead>,
    /// The newest etcd progress notification that arrived while paused.
    held_progress: Rv,
    generation: Generation,
}

impl Apiserver {
    /// Its caches, each listed (empty) at revision 1.
    fn new(config: &Config, lag_ms: DurationMs) -> Apiserver {
        let cache = |mode| {
            let mut c = WatchCache::new(mode);
            c.replace(std::iter::empty(), 1);
            c
        };
        Apiserver {
            caches: config.kinds.iter().map(|k| cache(k.cache)).collect(),
            paused: false,
            held: VecDeque::new(),
            lag_ms,
            watches_by_kind: vec![vec![]; config.kinds.len()],
            waiting_reads: vec![],
            held_progress: 0,
            generation: Generation(0),
        }
    }
}

impl Apiserver {
    /// A change from etcd's watch: held while paused; dropped for a kind served without a cache
    /// or by a cache not ready; otherwise added to its kind's cache. Returns what the cache
    /// evicted and its capacity after, when it took the change.
    fn apply_change(&mut self, change: Change) -> Option<(u32, u32)> {
        let kind = change.object.kind.index();
        if self.caches[kind].mode == CacheMode::Off {
            return None;
        }
        if self.paused {
            self.held.push_back(change);
            return None;
        }
        if !self.caches[kind].ready {
            return None;
        }
        // etcd progress notifications move every other kind's cache to the same revision, so a
        // list's RV is usually above its largest item and bookmarks move quiet watchers forward.
        for (k, other) in self.caches.iter_mut().enumerate() {
            if k != kind && other.ready && other.mode != CacheMode::Off {
                other.rv = other.rv.max(change.object.rv);
            }
        }
        let cache = &mut self.caches[kind];
        let out = cache.add(change);
        Some((out.evicted, cache.capacity))
    }

    /// Pauses or resumes its caches. A resume hands back what was held: the changes in order,
    /// and the newest progress notification (0: none).
    fn set_paused(&mut self, paused: bool) -> (Vec<Change>, Rv) {
        self.paused = paused;
        if paused {
            return (vec![], 0);
        }
        let held = self.held.drain(..).collect();
        (held, std::mem::take(&mut self.held_progress))
    }

    /// An etcd progress notification: every ready cache has seen `rev` (kept for the resume
    /// while paused). Returns whether the caches moved.
    fn progress(&mut self, rev: Rv) -> bool {
        if self.paused {
            self.held_progress = self.held_progress.max(rev);
            return false;
        }
        for cache in &mut self.caches {
            if cache.ready && cache.mode != CacheMode::Off {
                cache.rv = cache.rv.max(rev);
            }
        }
        true
    }
}

/// A read the cache answers once it has seen `rv` (`cacher.go` `waitUntilFreshAndBlock`).
#[derive(Clone, Copy, Debug, Hash, PartialEq, Eq)]
pub struct WaitingRead {
    pub watcher: WatcherId,
    pub session: Session,
    pub rv: Rv,
    pub read: ReadKind,
}

#[derive(Clone, Copy, Debug, Hash, PartialEq, Eq)]
pub enum ReadKind {
    /// `resourceVersion=N`: 504 "Too large resource version" after 3 s.
    NotOlderThan,
    /// `resourceVersion=""` (ConsistentListFromCache): after 3 s delegated to etcd.
    Consistent { limit: u32 },
    /// A streaming list's initial events: 504 after 3 s.
    WatchList { timeout_ms: DurationMs },
    /// A probe's list (its `watcher` is `PROBE_WATCHER`, its `session` the probe's number):
    /// NotOlderThan gets 504 after 3 s, a consistent list goes to etcd.
    Probe { kind: KindId, consistent: bool },
}

/// An informer to build: its kind, its handlers (a key mapping and a predicate each), its
/// namespace.
type Informer = (KindId, Vec<(KeyMap, Predicate)>, Option<NameId>);

/// The `watcher` of a probe's waiting read: probes are not reflectors.
pub const PROBE_WATCHER: WatcherId = WatcherId(u16::MAX);

/// A watch as the server holds it.
#[derive(Clone, Debug, Hash)]
pub struct ServerWatch {
    pub watcher: WatcherId,
    pub session: Session,
    pub apiserver: ApiserverId,
    pub kind: KindId,
    pub namespace: Option<NameId>,
    pub from_etcd: bool,
    pub last_sent: Rv,
    /// The RV the watch started from: a bookmark goes out whenever the cache is past it.
    pub from_rv: Rv,
    pub deadline_ms: TimeMs,
    pub open: bool,
    pub in_flight: u32,
}

/// client-go's Reflector plus the informer's store and handler.
#[derive(Clone, Debug, Hash)]
pub struct Reflector {
    pub controller: ControllerId,
    pub kind: KindId,
    pub namespace: Option<NameId>,
    /// The event handlers: a key mapping and its predicate each (empty: a cache only read).
    pub handlers: Vec<(KeyMap, Predicate)>,
    pub state: WatcherState,
    pub last_rv: Rv,
    pub store: crate::store::Store,
    /// `isLastSyncResourceVersionUnavailable`: the next list uses RV="".
    pub rv_unavailable: bool,
    pub backoff_ms_next: DurationMs,
    /// When the backoff last reset (legacy: when it last backed off).
    pub backoff_mark_ms: Option<TimeMs>,
    /// Invalidates messages and timers of earlier requests.
    pub session: Session,
    pub watch: Option<WatchId>,
    pub watch_opened_ms: TimeMs,
    pub watch_events: u32,
    pub listed: bool,
    /// A paged list in progress: its resourceVersion parameter and the items so far.
    pub paging: Option<(ListRv, Vec<Object>)>,
}

/// Notifications held at a controller until a later state of one object arrives.
#[derive(Clone, Debug, Hash)]
pub struct Hold {
    pub kind: KindId,
    pub name: NameId,
    /// Held events of that object so far: the second is the later state.
    pub seen: u32,
    buffer: Vec<(EventId, WatcherId, Session, Msg)>,
}

impl Reflector {
    fn new(
        controller: ControllerId,
        kind: KindId,
        namespace: Option<NameId>,
        handlers: Vec<(KeyMap, Predicate)>,
        backoff_ms: DurationMs,
    ) -> Reflector {
        Reflector {
            controller,
            kind,
            namespace,
            handlers,
            state: WatcherState::Stopped,
            last_rv: 0,
            store: Default::default(),
            rv_unavailable: false,
            backoff_ms_next: backoff_ms,
            backoff_mark_ms: None,
            session: Session(0),
            watch: None,
            watch_opened_ms: 0,
            watch_events: 0,
            listed: false,
            paging: None,
        }
    }
}

impl Reflector {
    /// A new request: messages and timers of the earlier ones are stale from now on.
    fn new_session(&mut self) -> Session {
        self.session = self.session.next();
        self.watch = None;
        self.session
    }

    /// `relistResourceVersion()`: "" after Expired or Too large, "0" for the first list, else
    /// the last RV seen.
    fn relist_rv(&self) -> ListRv {
        if self.rv_unavailable {
            ListRv::Consistent
        } else if !self.listed || self.last_rv == 0 {
            ListRv::Any
        } else {
            ListRv::NotOlderThan(self.last_rv)
        }
    }

    /// The backoff before jitter, and the next one doubled up to the cap.
    /// `wait.Backoff.DelayWithReset`: back to the initial delay once the reset interval has
    /// passed since the last reset (the reflector's start counts), failures or not. The legacy
    /// `ExponentialBackoffManager` measured from the last backoff instead, so only a quiet
    /// interval reset it.
    fn next_backoff(&mut self, cfg: &ReflectorConfig, now: TimeMs) -> DurationMs {
        if self
            .backoff_mark_ms
            .is_none_or(|t| now.saturating_sub(t) > cfg.backoff_reset_ms)
        {
            self.backoff_ms_next = cfg.backoff_ms_initial;
            self.backoff_mark_ms = Some(now);
        }
        if cfg.backoff_reset_after_quiet {
            self.backoff_mark_ms = Some(now);
        }
        let base = self.backoff_ms_next;
        self.backoff_ms_next = (base * 2).min(cfg.backoff_ms_max);
        base
    }
}

impl Controller {
    fn new(c: &crate::config::ControllerConfig, reflectors: Vec<WatcherId>) -> Controller {
        Controller {
            up: false,
            epoch: Epoch(0),
            apiserver: c.apiserver,
            queue: WorkQueue::new(c.queue),
            workers: vec![None; c.workers as usize],
            worker_claimed: 0,
            reflectors,
            link_delay_ms: c.link_delay_ms,
            link_down_last_ms: None,
            link_up_last_ms: None,
            disconnected_until: None,
            failed_first: BTreeMap::new(),
            hold: None,
            hold_generation: Generation(0),
            crash_after_writes: None,
            restart_after_ms: None,
            memory: Memory::new(),
            initial_sync: false,
        }
    }
}

impl Controller {
    /// Is this timer or message from the controller's current life (not from before a crash)?
    pub fn in_life(&self, epoch: Epoch) -> bool {
        self.epoch == epoch
    }

    /// The keys its workers are reconciling now, in worker order.
    pub fn running_keys(&self) -> Vec<NameId> {
        self.workers.iter().flatten().map(|r| r.key).collect()
    }

    /// A crash: the process stops and what it held in memory dies with it (workers, queue,
    /// hold, the program's memory, an armed crash); timers of this life go stale.
    fn die(&mut self) {
        self.up = false;
        self.epoch = self.epoch.next();
        self.workers.iter_mut().for_each(|w| *w = None);
        self.worker_claimed = 0;
        self.hold = None;
        self.queue = WorkQueue::new(self.queue.kind);
        self.memory.clear();
        self.crash_after_writes = None;
    }
}

#[derive(Clone, Debug, Hash)]
pub struct Running {
    pub key: NameId,
    pub writes: Vec<Write>,
    /// Per write: its failure is ignored (`on-error continue`); empty: none is.
    pub continue_on_error: Vec<bool>,
    /// How the reconcile ends if its writes succeed (`None`: the controller's settings).
    pub outcome: Option<ReconcileResult>,
    pub done: usize,
    pub start_event: EventId,
    pub started_ms: TimeMs,
}

#[derive(Clone, Debug, Hash)]
pub struct Controller {
    pub up: bool,
    /// Invalidates timers of an earlier life.
    pub epoch: Epoch,
    pub apiserver: ApiserverId,
    pub queue: WorkQueue,
    pub workers: Vec<Option<Running>>,
    /// Idle workers with a wake-up pending (bit per worker; at most 64 workers).
    worker_claimed: u64,
    pub reflectors: Vec<WatcherId>,
    pub link_delay_ms: DurationMs,
    /// When the last delayed message sent on each direction of the link arrives (FIFO order).
    pub link_down_last_ms: Option<TimeMs>,
    pub link_up_last_ms: Option<TimeMs>,
    pub disconnected_until: Option<TimeMs>,
    /// Reconciles failed on purpose so far, per key (`fail-first N`), across restarts.
    pub failed_first: BTreeMap<NameId, u32>,
    /// Notifications held back (Sieve's unobserved-state injection), in arrival order.
    pub hold: Option<Hold>,
    /// Invalidates the timeout of an earlier hold.
    hold_generation: Generation,
    pub crash_after_writes: Option<u32>,
    /// Restart this long after the armed (or next) crash.
    pub restart_after_ms: Option<DurationMs>,
    pub memory: Memory,
    /// Keys added by the initial list (priority queue: low priority).
    initial_sync: bool,
}

#[derive(Clone, Debug, Hash)]
enum Msg {
    /// A streaming list's initial events and the bookmark that ends them.
    WatchListStart {
        watch: WatchId,
        items: Vec<Object>,
        rv: Rv,
    },
    /// `rest`: what later pages will hold (etcd's snapshot at `list_rv`, kept by the server for
    /// the continue token).
    ListOk {
        list_rv: Rv,
        items: Vec<Object>,
        from_etcd: bool,
        rest: Vec<Object>,
    },
    ListErr(ApiError),
    WatchOpened {
        watch: WatchId,
        from_rv: Rv,
        replayed: u32,
    },
    /// `live`: dispatched from the cache's input channel (counts towards "too slow"); the
    /// initial replay of a watch is sent with blocking sends and never does.
    Event {
        watch: WatchId,
        change: Change,
        live: bool,
    },
    Bookmark {
        rv: Rv,
    },
    WatchErr(ApiError),
    /// A streaming list failed before its stream began: client-go falls back to a list.
    WatchListErr(ApiError),
    WatchEnd(WatchEnd),
    Refused(ApiError),
}

#[derive(Clone, Debug, Hash)]
enum Action {
    Input(Input),
    CacheApply {
        api: ApiserverId,
        change: Change,
    },
    /// An etcd progress notification (`RequestWatchProgress`): the caches have seen `rev`.
    CacheProgress {
        api: ApiserverId,
        rev: Rv,
    },
    Deliver {
        watcher: WatcherId,
        session: Session,
        msg: Msg,
    },
    ServeList {
        watcher: WatcherId,
        session: Session,
        rv: ListRv,
        limit: u32,
    },
    /// The next page: etcd reads the first page's revision again, unless it was compacted.
    ServeListPage {
        watcher: WatcherId,
        session: Session,
        list_rv: Rv,
        rest: Vec<Object>,
        limit: u32,
    },
    ServeWatchList {
        watcher: WatcherId,
        session: Session,
        rv: ListRv,
        timeout_ms: DurationMs,
    },
    ServeWatch {
        watcher: WatcherId,
        session: Session,
        from: Rv,
        timeout_ms: DurationMs,
    },
    ListDeadline {
        watcher: WatcherId,
        session: Session,
        api: ApiserverId,
    },
    Wake {
        watcher: WatcherId,
        session: Session,
    },
    WatchTimeout {
        watch: WatchId,
    },
    /// A watch's bookmark is due: about every minute, and 2 s before its deadline.
    BookmarkDue {
        watch: WatchId,
    },
    CompactTick,
    Resync {
        watcher: WatcherId,
        epoch: Epoch,
    },
    QueueAfter {
        controller: ControllerId,
        epoch: Epoch,
        key: NameId,
    },
    /// An idle worker takes the next key.
    Work {
        controller: ControllerId,
        epoch: Epoch,
        worker: u32,
    },
    /// The next write (or the end) of a worker's running reconcile.
    Step {
        controller: ControllerId,
        epoch: Epoch,
        worker: u32,
    },
    Start {
        controller: ControllerId,
        epoch: Epoch,
    },
    /// The end of a disconnect; stale when a longer disconnect replaced it.
    Reconnect {
        controller: ControllerId,
        until_ms: TimeMs,
    },
    CacheReady {
        api: ApiserverId,
        kind: Option<KindId>,
        generation: Generation,
    },
    AnvilTick {
        controller: ControllerId,
        epoch: Epoch,
    },
    /// A hold that no later state superseded ends.
    HoldTimeout {
        controller: ControllerId,
        generation: Generation,
    },
    /// The garbage collector looks at one dependent: are all its owners gone?
    Gc {
        kind: KindId,
        name: NameId,
        uid: u64,
    },
}

#[derive(Clone, Debug)]
struct Scheduled {
    at: TimeMs,
    seq: u64,
    cause: EventId,
    action: Action,
}

impl PartialEq for Scheduled {
    fn eq(&self, o: &Self) -> bool {
        (self.at, self.seq) == (o.at, o.seq)
    }
}
impl Eq for Scheduled {}
impl PartialOrd for Scheduled {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Scheduled {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        (self.at, self.seq).cmp(&(o.at, o.seq))
    }
}

/// Why a run stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stop {
    /// It reached its end time.
    End,
    /// It hit the cap on events.
    EventCap,
}

/// Per (controller, key): does the desired state hold, and since when.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct EsrState {
    pub holds: bool,
    pub since_ms: TimeMs,
}

/// The whole simulated system. `Clone` is the explorer's fork; `state_hash` its dedup key.
#[derive(Clone, Debug)]
pub struct Sim {
    config: Arc<Config>,
    now_ms: TimeMs,
    names: Names,
    etcd: Etcd,
    apiservers: Vec<Apiserver>,
    watches: Vec<ServerWatch>,
    reflectors: Vec<Reflector>,
    controllers: Vec<Controller>,
    esr: BTreeMap<(ControllerId, NameId), EsrState>,
    rng: Rng,
    heap: BinaryHeap<Reverse<Scheduled>>,
    ready: VecDeque<(EventId, Action)>,
    seq: u64,
    /// Sequence numbers for inputs appended after construction (see `schedule_input`).
    appended_seq: u64,
    appended_seq_end: u64,
    pub trace: Vec<Event>,
    stopped: Option<Stop>,
    /// Actions dispatched so far (bounded by `ACTIONS_PER_EVENT_MAX` per event of the cap).
    actions: u64,
    /// Probes issued so far (each gets the next number).
    probes: u32,
}

struct StoreReader<'a> {
    sim: &'a Sim,
    controller: ControllerId,
}

impl Reader for StoreReader<'_> {
    fn get(&self, kind: KindId, name: NameId) -> Option<Object> {
        let c = &self.sim.controllers[self.controller.index()];
        if self.sim.config.controllers[self.controller.index()].anvil {
            return self.sim.etcd.objects.get(&(kind, name)).copied();
        }
        c.reflectors
            .iter()
            .map(|w| &self.sim.reflectors[w.index()])
            .find(|r| r.kind == kind)
            .and_then(|r| r.store.get(&name).copied())
    }
    fn owned_by(&self, kind: KindId, uid: u64) -> Vec<Object> {
        let c = &self.sim.controllers[self.controller.index()];
        if self.sim.config.controllers[self.controller.index()].anvil {
            return EtcdReader(&self.sim.etcd).owned_by(kind, uid);
        }
        c.reflectors
            .iter()
            .map(|w| &self.sim.reflectors[w.index()])
            .find(|r| r.kind == kind)
            .map(|r| r.store.owned_by(uid).copied().collect())
            .unwrap_or_default()
    }
}

/// Reads the truth, for Anvil mode and for ESR.
pub struct EtcdReader<'a>(pub &'a Etcd);

impl Reader for EtcdReader<'_> {
    fn get(&self, kind: KindId, name: NameId) -> Option<Object> {
        self.0.objects.get(&(kind, name)).copied()
    }
    fn owned_by(&self, kind: KindId, uid: u64) -> Vec<Object> {
        self.0.owned_by(kind, uid).copied().collect()
    }
    /// O(log n): ESR asks this after every write of a child.
    fn live_owned(&self, kind: KindId, uid: u64) -> usize {
        self.0.live_owned.get(&(uid, kind)).copied().unwrap_or(0) as usize
    }
}

const SHORT_WATCH_MS: TimeMs = 1000;
/// Kubernetes object names (DNS subdomains) are at most 253 characters.
pub const MAX_NAME_LEN: usize = 253;
/// `client-go/tools/cache/shared_informer.go` `minimumResyncPeriod`.
pub const RESYNC_MS_MIN: TimeMs = 1000;
/// Scheduled actions a run may dispatch per event it may emit: timers that fire without
/// emitting (a resync of an empty store, an Anvil tick with no objects) are bounded too.
const ACTIONS_PER_EVENT_MAX: u64 = 4;
const APPENDED_SEQ_GAP: u64 = 1 << 32;
const LIST_WAIT_MS: TimeMs = 3000;
const BOOKMARK_BEFORE_DEADLINE_MS: TimeMs = 2000;

impl Sim {
    pub fn new(config: Config) -> Result<Sim, ConfigError> {
        config.validate()?;
        let config = Arc::new(config);
        let mut names = Names::default();
        names.intern("default");
        let mut sim = Sim {
            now_ms: 0,
            names,
            etcd: Etcd::new(&config),
            apiservers: config
                .apiservers
                .iter()
                .map(|a| Apiserver::new(&config, a.lag_ms))
                .collect(),
            watches: vec![],
            reflectors: vec![],
            controllers: vec![],
            esr: BTreeMap::new(),
            rng: Rng::new(config.seed),
            heap: BinaryHeap::new(),
            ready: VecDeque::new(),
            seq: 0,
            appended_seq: 0,
            appended_seq_end: 0,
            trace: Vec::new(),
            stopped: None,
            actions: 0,
            probes: 0,
            config: config.clone(),
        };
        for (i, c) in config.controllers.iter().enumerate() {
            let id = ControllerId(i as u16);
            let mut reflectors = vec![];
            for (kind, handlers, namespace) in sim.informers_of(c) {
                reflectors.push(WatcherId(sim.reflectors.len() as u16));
                let backoff_ms = config.reflector.backoff_ms_initial;
                sim.reflectors
                    .push(Reflector::new(id, kind, namespace, handlers, backoff_ms));
            }
            sim.controllers.push(Controller::new(c, reflectors));
            let start = Action::Start {
                controller: id,
                epoch: Epoch(0),
            };
            sim.schedule(c.start_ms, NO_CAUSE, start);
        }
        if config.compaction_ms > 0 {
            sim.schedule(config.compaction_ms, NO_CAUSE, Action::CompactTick);
        }
        // The timeline goes last, followed by a gap of sequence numbers: an input appended later
        // with `schedule_input` orders exactly as if it had been the timeline's last entry.
        for t in &config.timeline {
            if let Input::Create { name, .. } | Input::Update { name, .. } = &t.input {
                sim.names.intern(&qualify(name));
            }
            sim.schedule(t.at_ms, NO_CAUSE, Action::Input(t.input.clone()));
        }
        sim.appended_seq = sim.seq;
        sim.seq += APPENDED_SEQ_GAP;
        sim.appended_seq_end = sim.seq;
        Ok(sim)
    }

    /// A controller's informers: one per (kind, namespace), shared by every handler on it, as
    /// controller-runtime's cache does. Anvil's controllers have none (consistent reads).
    fn informers_of(&mut self, c: &crate::config::ControllerConfig) -> Vec<Informer> {
        let mut informers: Vec<Informer> = vec![];
        if c.anvil {
            return informers;
        }
        for w in &c.watches {
            let ns = w.namespace.as_deref().map(|n| self.names.intern(n));
            let handler = (w.map != KeyMap::ReadOnly).then_some((w.map, w.predicate));
            match informers.iter_mut().find(|x| x.0 == w.kind && x.2 == ns) {
                Some(x) => x.1.extend(handler.filter(|h| !x.1.contains(h))),
                None => informers.push((w.kind, handler.into_iter().collect(), ns)),
            }
        }
        // The kind a behaviour creates children of is watched the way operators do it
        // (controller-runtime `Owns()`): a child's event re-triggers its owner. A script that
        // declares its own watch of that kind (`watches KIND none`) keeps it.
        for k in behaviour_reads(c) {
            if !informers.iter().any(|w| w.0 == k) {
                informers.push((k, vec![(KeyMap::Owner, Predicate::All)], None));
            }
        }
        informers
    }

    // ----- read-only accessors (view, verdict, the CLI and the page read these) -----

    /// The configuration this run was built from.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The current moment of virtual time.
    pub fn now_ms(&self) -> TimeMs {
        self.now_ms
    }

    /// Object names interned so far.
    pub fn names(&self) -> &Names {
        &self.names
    }

    /// The one store every apiserver shares.
    pub fn etcd(&self) -> &Etcd {
        &self.etcd
    }

    /// The apiservers, by `ApiserverId`.
    pub fn apiservers(&self) -> &[Apiserver] {
        &self.apiservers
    }

    /// Every watch the servers have opened, by watch number.
    pub fn watches(&self) -> &[ServerWatch] {
        &self.watches
    }

    /// The reflectors (one per informer), by `WatcherId`.
    pub fn reflectors(&self) -> &[Reflector] {
        &self.reflectors
    }

    /// The controllers, by `ControllerId`.
    pub fn controllers(&self) -> &[Controller] {
        &self.controllers
    }

    /// Per (controller, key): does the desired state hold, and since when.
    pub fn esr(&self) -> &BTreeMap<(ControllerId, NameId), EsrState> {
        &self.esr
    }

    /// Why the run stopped, once it has.
    pub fn stopped(&self) -> Option<Stop> {
        self.stopped
    }

    // ----- the sans-IO surface -----

    /// When the next scheduled action is due.
    pub fn poll_timeout(&self) -> Option<TimeMs> {
        if !self.ready.is_empty() {
            return Some(self.now_ms);
        }
        self.heap.peek().map(|s| s.0.at)
    }

    /// Schedules an input at a future moment as if it had been appended to the configured
    /// timeline: a fork that does this runs exactly like a fresh run of the extended timeline.
    /// Inputs in the past run now. Returns false once the gap of sequence numbers is used up.
    pub fn schedule_input(&mut self, at_ms: TimeMs, input: Input) -> bool {
        if self.appended_seq + 1 >= self.appended_seq_end {
            return false;
        }
        self.appended_seq += 1;
        let at = at_ms.max(self.now_ms);
        self.heap.push(Reverse(Scheduled {
            at,
            seq: self.appended_seq,
            cause: NO_CAUSE,
            action: Action::Input(input),
        }));
        true
    }

    /// Applies an input at the current moment (writes by users, faults).
    pub fn handle_input(&mut self, input: Input) {
        self.ready.push_back((NO_CAUSE, Action::Input(input)));
        self.drain_ready();
    }

    /// Runs every action due at or before `now_ms`, then moves the clock to `now_ms`.
    pub fn handle_timeout(&mut self, now_ms: TimeMs) {
        self.drain_ready();
        while self.stopped.is_none() {
            match self.heap.peek() {
                Some(Reverse(s)) if s.at <= now_ms => {}
                _ => break,
            }
            let Reverse(s) = self.heap.pop().expect("peeked");
            self.now_ms = s.at;
            self.dispatch(s.cause, s.action);
            self.drain_ready();
        }
        if self.stopped.is_none() {
            self.now_ms = self.now_ms.max(now_ms);
        }
    }

    /// Runs on towards the end for at most `max_events` more events, so a caller that must stay
    /// responsive (the page) can run a long scenario in slices. Returns true once the run is
    /// over; slices add up to exactly what `run` does.
    pub fn run_slice(&mut self, max_events: usize) -> bool {
        let end = self.config.end_ms;
        let target = self.trace.len().saturating_add(max_events);
        self.drain_ready();
        while self.stopped.is_none() && self.trace.len() < target {
            match self.heap.peek() {
                Some(Reverse(s)) if s.at <= end => {}
                _ => {
                    self.now_ms = self.now_ms.max(end);
                    self.stopped = Some(Stop::End);
                    break;
                }
            }
            let Reverse(s) = self.heap.pop().expect("peeked");
            self.now_ms = s.at;
            self.dispatch(s.cause, s.action);
            self.drain_ready();
        }
        self.stopped.is_some()
    }

    /// Runs the configured timeline to its end (or a cap).
    pub fn run(&mut self) -> Stop {
        let end = self.config.end_ms;
        self.handle_timeout(end);
        *self.stopped.get_or_insert(Stop::End)
    }

    /// A hash of everything that decides the future (not the trace): the explorer's dedup key.
    pub fn state_hash(&self) -> u64 {
        use std::hash::{Hash, Hasher};
        let mut h = Fnv(0xcbf2_9ce4_8422_2325);
        self.now_ms.hash(&mut h);
        self.etcd.hash(&mut h);
        self.apiservers.hash(&mut h);
        self.watches.hash(&mut h);
        self.reflectors.hash(&mut h);
        self.controllers.hash(&mut h);
        self.rng.hash(&mut h);
        // Pending work in the order it will run: times and actions, not the sequence numbers
        // themselves, which differ between equal states reached by different paths.
        let mut pending: Vec<&Scheduled> = self.heap.iter().map(|Reverse(s)| s).collect();
        pending.sort();
        for s in pending {
            s.at.hash(&mut h);
            s.action.hash(&mut h);
        }
        h.finish()
    }

    // ----- plumbing -----

    /// Is this timer or message from the controller's current life (not from before a crash)?
    fn in_life(&self, c: ControllerId, epoch: Epoch) -> bool {
        self.controllers[c.index()].in_life(epoch)
    }

    fn schedule(&mut self, at: TimeMs, cause: EventId, action: Action) {
        if at <= self.now_ms && !self.trace.is_empty() {
            self.ready.push_back((cause, action));
            return;
        }
        self.seq += 1;
        self.heap.push(Reverse(Scheduled {
            at,
            seq: self.seq,
            cause,
            action,
        }));
    }

    fn drain_ready(&mut self) {
        while self.stopped.is_none() {
            let Some((cause, a)) = self.ready.pop_front() else {
                break;
            };
            self.dispatch(cause, a);
        }
    }

    /// Counts one dispatched action against the run's cap on work.
    fn count_action(&mut self) {
        self.actions += 1;
        let cap = self
            .config
            .limits
            .max_events
            .saturating_mul(ACTIONS_PER_EVENT_MAX);
        if self.actions > cap {
            self.stopped = Some(Stop::EventCap);
        }
    }

    fn emit(&mut self, actor: Actor, cause: EventId, kind: EventKind) -> EventId {
        let id = self.trace.len() as EventId;
        if self.trace.len() as u64 >= self.config.limits.max_events {
            self.stopped = Some(Stop::EventCap);
            return id.saturating_sub(1);
        }
        self.trace.push(Event {
            time_ms: self.now_ms,
            actor,
            cause,
            kind,
        });
        id
    }

    fn controller_of(&self, w: WatcherId) -> ControllerId {
        self.reflectors[w.index()].controller
    }

    fn link_delay(&self, c: ControllerId) -> TimeMs {
        self.controllers[c.index()].link_delay_ms
    }

    fn connected(&self, c: ControllerId) -> bool {
        self.controllers[c.index()].disconnected_until.is_none()
    }

    fn send_to_client(&mut self, watcher: WatcherId, session: Session, cause: EventId, msg: Msg) {
        let action = Action::Deliver {
            watcher,
            session,
            msg,
        };
        self.send_on_link(watcher, true, cause, action);
    }

    fn send_to_server(&mut self, watcher: WatcherId, cause: EventId, action: Action) {
        self.send_on_link(watcher, false, cause, action);
    }

    /// A link is a TCP connection: each direction delivers in order, even when its delay changes
    /// while messages are in flight. A message goes behind anything still in flight on its
    /// direction; with no delay and nothing in flight it is delivered at once.
    fn send_on_link(
        &mut self,
        watcher: WatcherId,
        to_client: bool,
        cause: EventId,
        action: Action,
    ) {
        let c = self.controller_of(watcher);
        let now = self.now_ms;
        let ctl = &mut self.controllers[c.index()];
        let delay = ctl.link_delay_ms;
        let last = if to_client {
            &mut ctl.link_down_last_ms
        } else {
            &mut ctl.link_up_last_ms
        };
        if delay == 0 && last.is_none_or(|l| l < now) {
            return self.schedule(now, cause, action);
        }
        let at = (now + delay).max(last.unwrap_or(0));
        *last = Some(at);
        self.seq += 1;
        let scheduled = Scheduled {
            at,
            seq: self.seq,
            cause,
            action,
        };
        self.heap.push(Reverse(scheduled));
    }

    /// Runs one scheduled action: routes it to the part of the system it is for.
    fn dispatch(&mut self, cause: EventId, action: Action) {
        self.count_action();
        if self.stopped.is_some() {
            return;
        }
        match action {
            Action::Input(input) => self.apply_input(cause, input),
            Action::Deliver {
                watcher,
                session,
                msg,
            } => self.deliver(watcher, session, msg, cause),
            Action::Wake { watcher, session } => self.wake(watcher, session, cause),
            Action::Resync { watcher, epoch } => self.resync(watcher, epoch),
            Action::CompactTick => self.compact_tick(),
            Action::Gc { kind, name, uid } => self.collect_garbage(kind, name, uid, cause),
            Action::CacheApply { .. }
            | Action::CacheProgress { .. }
            | Action::CacheReady { .. }
            | Action::ServeList { .. }
            | Action::ServeListPage { .. }
            | Action::ServeWatchList { .. }
            | Action::ServeWatch { .. }
            | Action::ListDeadline { .. }
            | Action::WatchTimeout { .. }
            | Action::BookmarkDue { .. } => self.dispatch_server(cause, action),
            Action::QueueAfter { .. }
            | Action::Work { .. }
            | Action::Step { .. }
            | Action::Start { .. }
            | Action::Reconnect { .. }
            | Action::AnvilTick { .. }
            | Action::HoldTimeout { .. } => self.dispatch_controller(cause, action),
        }
    }

    /// An action of an apiserver: its caches, the requests it serves, its watches' timers.
    fn dispatch_server(&mut self, cause: EventId, action: Action) {
        match action {
            Action::CacheApply { api, change } => self.cache_apply(api, change, cause),
            Action::CacheProgress { api, rev } => self.cache_progress(api, rev, cause),
            Action::CacheReady {
                api,
                kind,
                generation,
            } => {
                if self.apiservers[api.index()].generation == generation {
                    self.cache_ready(api, kind, cause);
                }
            }
            Action::ServeList {
                watcher,
                session,
                rv,
                limit,
            } => self.serve_list(watcher, session, rv, limit, cause),
            Action::ServeListPage {
                watcher,
                session,
                list_rv,
                rest,
                limit,
            } => self.serve_list_page(watcher, session, list_rv, rest, limit, cause),
            Action::ServeWatchList {
                watcher,
                session,
                rv,
                timeout_ms,
            } => self.serve_watch_list(watcher, session, rv, timeout_ms, cause),
            Action::ServeWatch {
                watcher,
                session,
                from,
                timeout_ms,
            } => self.serve_watch(watcher, session, from, timeout_ms, cause),
            Action::ListDeadline {
                watcher,
                session,
                api,
            } => self.read_deadline(watcher, session, api, cause),
            Action::WatchTimeout { watch } => self.close_watch(watch, WatchEnd::Timeout, cause),
            Action::BookmarkDue { watch } => self.bookmark_due(watch, cause),
            _ => unreachable!("not a server action"),
        }
    }

    /// An action of a controller: its queue, its workers, its life, its link, its hold.
    fn dispatch_controller(&mut self, cause: EventId, action: Action) {
        match action {
            Action::QueueAfter {
                controller,
                epoch,
                key,
            } => self.queue_after_due(controller, epoch, key, cause),
            Action::Work {
                controller,
                epoch,
                worker,
            } if self.in_life(controller, epoch) => self.work(controller, worker, cause),
            Action::Step {
                controller,
                epoch,
                worker,
            } if self.in_life(controller, epoch) => self.step(controller, worker, cause),
            Action::Start { controller, epoch } if self.in_life(controller, epoch) => {
                self.start_controller(controller, cause)
            }
            Action::Work { .. } | Action::Step { .. } | Action::Start { .. } => {}
            Action::Reconnect {
                controller,
                until_ms,
            } => self.reconnect(controller, until_ms, cause),
            Action::AnvilTick { controller, epoch } => self.anvil_tick(controller, epoch, cause),
            Action::HoldTimeout {
                controller,
                generation,
            } => {
                if self.controllers[controller.index()].hold_generation == generation {
                    self.release_hold(controller, false, cause);
                }
            }
            _ => unreachable!("not a controller action"),
        }
    }

    /// A delayed add is due, if it is still this life's and the queue's item.
    fn queue_after_due(&mut self, c: ControllerId, epoch: Epoch, key: NameId, cause: EventId) {
        let now = self.now_ms;
        if self.in_life(c, epoch) && self.controllers[c.index()].queue.due(key, now) {
            self.enqueue(c, key, cause, false);
        }
    }

    /// The end of a disconnect; stale when a longer disconnect replaced it.
    fn reconnect(&mut self, c: ControllerId, until_ms: TimeMs, cause: EventId) {
        let ctl = &mut self.controllers[c.index()];
        if ctl.disconnected_until == Some(until_ms) {
            ctl.disconnected_until = None;
            let event = EventKind::Reconnect { controller: c };
            self.emit(Actor::Controller(c), cause, event);
        }
    }

    /// Anvil's `schedule_controller_reconcile`: every existing object of the primary kind.
    fn anvil_tick(&mut self, c: ControllerId, epoch: Epoch, cause: EventId) {
        if !self.in_life(c, epoch) {
            return;
        }
        let cfg = &self.config.controllers[c.index()];
        let (primary, period) = (cfg.primary, cfg.anvil_period_ms);
        for o in EtcdReader(&self.etcd).kind_objects(primary) {
            self.enqueue(c, o.name, cause, false);
        }
        let tick = Action::AnvilTick {
            controller: c,
            epoch,
        };
        self.schedule(self.now_ms + period, NO_CAUSE, tick);
    }
}

impl EtcdReader<'_> {
    /// Every object of one kind, in name order (etcd's key range for the kind).
    fn of_kind(&self, kind: KindId) -> impl Iterator<Item = Object> + '_ {
        self.0
            .objects
            .range((kind, NameId(0))..=(kind, NameId(u32::MAX)))
            .map(|(_, o)| *o)
    }

    pub fn kind_objects(&self, kind: KindId) -> Vec<Object> {
        self.of_kind(kind).collect()
    }
}

/// The first `limit` items as a list answer, the rest for the continue token (0: everything).
fn page(list_rv: Rv, mut items: Vec<Object>, limit: u32) -> Msg {
    let rest = if limit > 0 && items.len() > limit as usize {
        items.split_off(limit as usize)
    } else {
        vec![]
    };
    Msg::ListOk {
        list_rv,
        items,
        from_etcd: true,
        rest,
    }
}

/// Kinds a behaviour reads (or a program reads from its cache or writes) besides its primary kind.
pub fn behaviour_reads(c: &crate::config::ControllerConfig) -> Vec<KindId> {
    match c.behaviour {
        Behaviour::Program => c
            .program
            .as_ref()
            .map(|p| p.kinds_watched(c.primary))
            .unwrap_or_default(),
        Behaviour::Children { child, .. }
        | Behaviour::StaleDelete { child, .. }
        | Behaviour::WipeOnZero { child }
        | Behaviour::TwoWrites { child, .. } => vec![child],
        Behaviour::Mirror { target } => vec![target],
    }
}

/// `name` → `default/name`; `ns/name` stays.
pub fn qualify(name: &str) -> String {
    if name.contains('/') {
        name.to_string()
    } else {
        format!("default/{name}")
    }
}

/// FNV-1a: stable across platforms and runs, unlike `DefaultHasher`'s seeds.
struct Fnv(u64);

impl std::hash::Hasher for Fnv {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 ^= *b as u64;
            self.0 = self.0.wrapping_mul(0x100_0000_01b3);
        }
    }
}

/// A stable hash of a trace, to prove the page and the CLI computed the same run. It hashes the
/// one-line text of every event, so it is the same on every platform (derived `Hash` is not: it
/// writes `usize` lengths, which are 4 bytes on wasm32).
pub fn trace_hash(sim: &Sim) -> u64 {
    use std::hash::Hasher;
    let mut h = Fnv(0xcbf2_9ce4_8422_2325);
    for (i, e) in sim.trace.iter().enumerate() {
        h.write(crate::trace::line(i as EventId, e, sim).as_bytes());
        h.write(b"\n");
    }
    h.finish()
}

#[cfg(test)]
mod etcd_tests {
    use super::*;

    fn etcd_with(names: &mut Names, finalizers: u32) -> (Etcd, Object) {
        let mut etcd = Etcd::new(&Config::new(&["Pod"]));
        let name = names.intern("default/a");
        let create = Write::Create {
            kind: KindId(0),
            name,
            namespace: names.intern("default"),
            spec: 1,
            owner: None,
        };
        let Ok(Decision::Commit { mut obj, .. }) = etcd.decide(create, names, 0) else {
            panic!("a create of a new name is accepted");
        };
        obj.rv = 5;
        obj.finalizers = finalizers;
        etcd.objects.insert((obj.kind, obj.name), obj);
        (etcd, obj)
    }

    fn update(o: &Object, expect_rv: Rv, spec: i64, status: i64) -> Write {
        Write::Update {
            kind: o.kind,
            name: o.name,
            expect_rv,
            spec,
            status,
            finalizers: o.finalizers,
        }
    }

    #[test]
    fn a_create_of_an_existing_or_overlong_name_is_refused() {
        let mut names = Names::default();
        let (mut etcd, o) = etcd_with(&mut names, 0);
        assert_eq!(o.uid, 1);
        let again = Write::Create {
            kind: o.kind,
            name: o.name,
            namespace: o.namespace,
            spec: 1,
            owner: None,
        };
        let refused = etcd.decide(again, &names, 0).unwrap_err();
        assert_eq!(refused.error, ApiError::AlreadyExists);
        let long = names.intern(&format!("default/{}", "x".repeat(MAX_NAME_LEN + 1)));
        let long = Write::Create {
            kind: o.kind,
            name: long,
            namespace: o.namespace,
            spec: 1,
            owner: None,
        };
        assert_eq!(
            etcd.decide(long, &names, 0).unwrap_err().error,
            ApiError::NameTooLong
        );
        assert_eq!(etcd.next_uid, 2, "refused creates take no UID");
    }

    #[test]
    fn updates_check_the_rv_and_bump_the_generation_on_a_new_spec() {
        let mut names = Names::default();
        let (mut etcd, o) = etcd_with(&mut names, 0);
        let stale = etcd.decide(update(&o, 4, 2, 0), &names, 0).unwrap_err();
        assert_eq!(stale.error, ApiError::Conflict);
        let same = etcd.decide(update(&o, 5, 1, 0), &names, 0);
        assert_eq!(
            same,
            Ok(Decision::NoOp {
                kind: o.kind,
                name: o.name
            })
        );
        let Ok(Decision::Commit { op, obj, .. }) = etcd.decide(update(&o, 0, 2, 0), &names, 0)
        else {
            panic!("a merge patch of a new spec commits");
        };
        assert_eq!((op, obj.generation, obj.spec), (WriteOp::Update, 2, 2));
        let Ok(Decision::Commit { op, obj, .. }) = etcd.decide(update(&o, 5, 1, 7), &names, 0)
        else {
            panic!("a status update commits");
        };
        assert_eq!(
            (op, obj.generation, obj.status),
            (WriteOp::UpdateStatus, 1, 7)
        );
    }

    #[test]
    fn a_delete_with_finalizers_marks_the_object_once() {
        let mut names = Names::default();
        let (mut etcd, o) = etcd_with(&mut names, 1);
        let delete = |uid| Write::Delete {
            kind: o.kind,
            name: o.name,
            uid,
        };
        let wrong = etcd.decide(delete(Some(9)), &names, 0).unwrap_err();
        assert_eq!(wrong.error, ApiError::UidMismatch);
        let Ok(Decision::Commit { op, obj, event }) = etcd.decide(delete(None), &names, 70) else {
            panic!("a delete commits a mark");
        };
        assert_eq!(
            (op, event, obj.deletion_ms),
            (WriteOp::MarkDeleting, EventType::Modified, Some(70))
        );
        etcd.objects.insert((o.kind, o.name), obj);
        let again = etcd.decide(delete(None), &names, 80);
        assert_eq!(
            again,
            Ok(Decision::NoOp {
                kind: o.kind,
                name: o.name
            })
        );
        // Removing the last finalizer deletes it.
        let mut last = update(&obj, 0, obj.spec, obj.status);
        if let Write::Update { finalizers, .. } = &mut last {
            *finalizers = 0;
        }
        let Ok(Decision::Commit { op, event, .. }) = etcd.decide(last, &names, 90) else {
            panic!("the last finalizer's removal commits");
        };
        assert_eq!((op, event), (WriteOp::Delete, EventType::Deleted));
    }
}

#[cfg(test)]
mod reflector_tests {
    use super::*;

    fn reflector() -> Reflector {
        Reflector::new(ControllerId(0), KindId(0), None, vec![], 800)
    }

    #[test]
    fn a_relist_asks_any_first_then_the_last_rv_then_consistent_after_expiry() {
        let mut r = reflector();
        assert_eq!(r.relist_rv(), ListRv::Any);
        (r.listed, r.last_rv) = (true, 42);
        assert_eq!(r.relist_rv(), ListRv::NotOlderThan(42));
        r.rv_unavailable = true;
        assert_eq!(r.relist_rv(), ListRv::Consistent);
    }

    #[test]
    fn a_new_session_drops_the_watch() {
        let mut r = reflector();
        r.watch = Some(WatchId(3));
        assert_eq!(r.new_session(), Session(1));
        assert_eq!((r.session, r.watch), (Session(1), None));
    }

    #[test]
    fn backoff_doubles_to_the_cap_and_resets_every_interval() {
        let cfg = ReflectorConfig::default();
        let mut r = reflector();
        let bases: Vec<_> = (0..7).map(|i| r.next_backoff(&cfg, i * 1000)).collect();
        assert_eq!(bases, [800, 1600, 3200, 6400, 12_800, 25_600, 30_000]);
        // The reset interval counts from the first backoff (the last reset), not the last one.
        assert_eq!(r.next_backoff(&cfg, 120_001), 800);
        let quiet = ReflectorConfig {
            backoff_reset_after_quiet: true,
            ..cfg
        };
        let mut legacy = reflector();
        let bases: Vec<_> = (0..3)
            .map(|i| legacy.next_backoff(&quiet, i * 100_000))
            .collect();
        assert_eq!(bases, [800, 1600, 3200], "no quiet interval: no reset");
        assert_eq!(legacy.next_backoff(&quiet, 320_001), 800);
    }
}

#[cfg(test)]
mod controller_tests {
    use super::*;

    #[test]
    fn a_crash_forgets_the_process_memory_and_starts_a_new_life() {
        let cfg = Config::controller("c", KindId(0), Behaviour::Mirror { target: KindId(1) });
        let mut c = Controller::new(&cfg, vec![]);
        let (a, b) = (NameId(1), NameId(2));
        c.up = true;
        c.queue.add(a, false);
        c.queue.add(b, false);
        let key = c.queue.get().unwrap();
        c.workers[0] = Some(Running {
            key,
            writes: vec![],
            continue_on_error: vec![],
            outcome: None,
            done: 0,
            start_event: 0,
            started_ms: 0,
        });
        c.crash_after_writes = Some(1);
        assert_eq!(c.running_keys(), [a]);
        assert!(c.in_life(Epoch(0)));
        c.die();
        assert!(!c.up && c.running_keys().is_empty() && c.queue.is_empty());
        assert_eq!(c.crash_after_writes, None);
        assert!(!c.in_life(Epoch(0)) && c.in_life(Epoch(1)));
    }
}

#[cfg(test)]
mod apiserver_tests {
    use super::*;

    fn change(kind: u16, rv: Rv) -> Change {
        let object = Object {
            kind: KindId(kind),
            name: NameId(1),
            namespace: NameId(0),
            uid: 1,
            rv,
            generation: 1,
            spec: 0,
            status: 0,
            owner: None,
            finalizers: 0,
            deletion_ms: None,
        };
        Change {
            event: EventType::Added,
            object,
            time_ms: 0,
        }
    }

    #[test]
    fn a_paused_apiserver_holds_changes_and_progress_and_other_caches_follow_the_rv() {
        let mut api = Apiserver::new(&Config::new(&["Pod", "Node"]), 0);
        assert_eq!(
            api.apply_change(change(0, 5)),
            Some((0, api.caches[0].capacity))
        );
        assert_eq!(
            api.caches[1].rv, 5,
            "the other kind's cache moves to the change's rv"
        );
        assert_eq!(api.set_paused(true), (vec![], 0));
        assert_eq!(api.apply_change(change(0, 6)), None);
        assert!(!api.progress(9));
        assert_eq!(api.set_paused(false), (vec![change(0, 6)], 9));
        assert_eq!((api.held.len(), api.held_progress), (0, 0));
        assert!(api.progress(10));
        assert!(api.caches.iter().all(|c| c.rv == 10));
        api.caches[1].ready = false;
        assert_eq!(
            api.apply_change(change(1, 11)),
            None,
            "a cache not ready drops it"
        );
        assert!(api.held.is_empty());
    }
}
