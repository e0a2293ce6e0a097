//! The engine: the event loop that moves the components (`etcd`, `apiserver`, `reflector`,
//! `controller`) through virtual time, routes messages and timers between them and emits events.
//!
//! Sans-IO like quinn-proto: `handle_input` takes an input now, `handle_timeout` runs every
//! action due up to a moment, `poll_timeout` says when the next one is due. Nothing here reads a
//! clock, does IO or draws randomness except from the seeded `Rng`.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::sync::Arc;

use crate::cache::{WatchCache, WatchStart};
use crate::config::{
    Behaviour, CacheMode, Config, ConfigError, Edit, FakeTracker, FaultInput, FieldValue, Input,
    KeyMap, Predicate, ProbeRequest, Propagation, ReflectorConfig, Verb, WriteInput,
};
use crate::model::*;

/// The finalizers of `DeleteOptions.propagationPolicy` (`metav1.FinalizerOrphanDependents`,
/// `metav1.FinalizerDeleteDependents`).
pub const ORPHAN_FINALIZER: &str = "orphan";
pub const FOREGROUND_FINALIZER: &str = "foregroundDeletion";
use crate::queue::WorkQueue;
use crate::reconcile::{self, Memory, Reader, UpdateTo, Write};
use crate::store::NameMap;
use crate::trace::*;

mod apiserver;
mod client;
mod consistency;
mod controller;
mod etcd;
mod events_cache;
mod gc;
mod inputs;
mod link;
mod probe;
mod reflector;
mod serve;
mod server;
mod step;
mod timers;

pub use apiserver::{Apiserver, ServerWatch};
use apiserver::{Offer, Parked, ReadKind, Waiting, WaitingRead, WatchRef, PROBE_WATCHER};
pub use controller::Controller;
pub(crate) use etcd::{Decision, ObjectsRead, Refusal};
pub use etcd::{Etcd, EtcdReader};
pub use link::Link;
use link::{LinkTimer, Toward};
pub use reflector::Reflector;
use serve::RequestScope;
use step::{Call, Out, Outbox, Sink};

/// Per controller, by key: what a retry that is futile could read (`run_until_settled`).
type Futile = Vec<NameMap<u64>>;

/// An informer to build: its kind, its handlers (a key mapping and a predicate each), its
/// namespace.
type Informer = (
    KindId,
    Vec<(KeyMap, Predicate)>,
    Option<NameId>,
    Option<Arc<crate::object::Selector>>,
);

#[derive(Clone, Debug, Hash, PartialEq)]
enum Msg {
    /// A streaming list's initial events and the bookmark that ends them.
    WatchListStart {
        watch: WatchRef,
        items: Vec<Object>,
        rv: Rv,
    },
    /// A streaming list's initial events and a bookmark at `rv` without the
    /// `k8s.io/initial-events-end` annotation: the stream goes on, the list never ends.
    WatchListUnended {
        watch: WatchRef,
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
        watch: WatchRef,
        from_rv: Rv,
        replayed: u32,
    },
    /// `live`: dispatched from the cache's input channel (counts towards "too slow"); the
    /// initial replay of a watch is sent with blocking sends and never does. The change is
    /// shared by every watch it fans out to (a message moves through the link, the work queue
    /// and the dispatch several times: a pointer, not a 128-byte `Change`).
    Event {
        watch: WatchRef,
        change: Arc<Change>,
        live: bool,
    },
    Bookmark {
        rv: Rv,
    },
    WatchErr(ApiError),
    /// A streaming list failed before its stream began: client-go streams again (504, 410) or
    /// falls back to a list (other errors).
    WatchListErr(ApiError),
    WatchEnd(WatchEnd),
    Refused(ApiError),
}

/// Work the engine runs when it is due, by the part of the system it is for: each family is
/// matched whole by its own `dispatch_*`, so a new action is routed or does not compile.
#[derive(Clone, Debug, Hash, PartialEq)]
enum Action {
    Input(Input),
    /// The configured timeline's input at this index: read from the shared config, not copied
    /// into every fork's pending work (an input owns its names).
    Timeline(u32),
    Etcd(EtcdAction),
    Server(ServerAction),
    Reflector(ReflectorAction),
    Controller(ControllerAction),
    /// A timer of a controller's link (`link.rs`).
    Link {
        controller: ControllerId,
        timer: LinkTimer,
    },
}

/// etcd's timers (`server.rs`).
#[derive(Clone, Debug, Hash, PartialEq)]
enum EtcdAction {
    CompactTick,
    /// The garbage collector looks at one dependent: are all its owners gone?
    Gc {
        kind: KindId,
        name: NameId,
        uid: u64,
    },
}

/// An apiserver's work: changes reaching its caches, the requests it serves (`serve.rs`), its
/// watches' timers.
#[derive(Clone, Debug, Hash, PartialEq)]
enum ServerAction {
    /// Boxed, as `Msg::Event`'s change is shared: every action is as large as its largest
    /// variant, and actions are moved through the queues on every event.
    CacheApply {
        api: ApiserverId,
        change: Box<Change>,
    },
    /// An etcd progress notification (`RequestWatchProgress`): the caches have seen `rev`.
    CacheProgress {
        api: ApiserverId,
        rev: Rv,
    },
    CacheReady {
        api: ApiserverId,
        kind: Option<KindId>,
        generation: Generation,
    },
    /// The requests carry what they name (`RequestScope`), as a request's path and options do.
    ServeList {
        watcher: WatcherId,
        session: Session,
        rv: ListRv,
        limit: u32,
        scope: RequestScope,
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
        scope: RequestScope,
    },
    ServeWatch {
        watcher: WatcherId,
        session: Session,
        from: Rv,
        timeout_ms: DurationMs,
        scope: RequestScope,
    },
    ListDeadline {
        watcher: WatcherId,
        session: Session,
        api: ApiserverId,
    },
    WatchTimeout {
        watch: WatchRef,
    },
    /// A watch's bookmark is due: about every minute, and 2 s before its deadline.
    BookmarkDue {
        watch: WatchRef,
    },
}

/// A reflector's work (`client.rs`): a message at its end of the link, its timers.
#[derive(Clone, Debug, Hash, PartialEq)]
enum ReflectorAction {
    Deliver {
        watcher: WatcherId,
        session: Session,
        msg: Msg,
    },
    Wake {
        watcher: WatcherId,
        session: Session,
    },
    /// `round`: the reflector's list it was armed after.
    Resync {
        watcher: WatcherId,
        epoch: Epoch,
        round: u32,
    },
}

/// A controller's work (`controller.rs`): its queue, its workers, its life.
#[derive(Clone, Debug, Hash, PartialEq)]
enum ControllerAction {
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
    AnvilTick {
        controller: ControllerId,
        epoch: Epoch,
    },
}

/// Why a run stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stop {
    /// It reached its end time.
    End,
    /// It hit the cap on events.
    EventCap,
    /// Its selector lists looked at more objects than `Limits::max_objects_read`.
    ReadCap,
    /// A reconcile of this controller ran into a limit of the reconcile language (it made no
    /// write of that reconcile).
    Limit {
        controller: ControllerId,
        key: NameId,
        exceeded: crate::program::Exceeded,
    },
}

impl Stop {
    /// Stopped before its end: what came after is unknown, so ESR is not judged.
    pub fn cut_off(self) -> bool {
        self != Stop::End
    }
}

/// The whole simulated system. `Clone` is the explorer's fork; `state_hash` its dedup key.
#[derive(Clone, Debug)]
pub struct Sim {
    config: Arc<Config>,
    now_ms: TimeMs,
    names: Names,
    etcd: Etcd,
    apiservers: Vec<Apiserver>,
    /// etcd's own watches, which the apiservers relay (a kind without a watch cache, and every
    /// watch of a fake apiserver), in the order they were registered: etcd sends a change to
    /// its watchers in that order, across apiservers (`Sim::etcd_watch_fanout`).
    etcd_watches: Vec<WatchRef>,
    reflectors: Vec<Reflector>,
    controllers: Vec<Controller>,
    /// Each controller's link to its apiserver, by `ControllerId`.
    links: Vec<Link>,
    esr: crate::esr::Esr,
    rng: Rng,
    timers: timers::Timers,
    ready: VecDeque<(EventId, Action)>,
    seq: u64,
    /// Sequence numbers for inputs appended after construction (see `schedule_input`).
    appended_seq: u64,
    appended_seq_end: u64,
    /// The run's events and why it stopped.
    sink: Sink,
    /// Actions dispatched so far (bounded by `ACTIONS_PER_EVENT_MAX` per event of the cap).
    actions: u64,
    /// Probes issued so far (each gets the next number).
    probes: u32,
    /// What the running steps posted (empty between steps).
    outbox: Outbox,
}

/// A controller's informer stores, read as its reconciles read them: the first informer of
/// the kind (one per kind and namespace, in declaration order).
struct StoreReader<'a> {
    /// The controller's own reflectors (`StoreReader::of`).
    reflectors: &'a [Reflector],
    /// Where a selector's list counts the objects it looked at (etcd's count of the run's).
    read: &'a ObjectsRead,
}

impl<'a> StoreReader<'a> {
    /// Controller `c`'s stores. `Sim::new` makes each controller's reflectors one after another,
    /// so they are a slice of all of them: a read scans its controller's few, not every one.
    fn of(reflectors: &'a [Reflector], c: &Controller, read: &'a ObjectsRead) -> StoreReader<'a> {
        let first = c.reflectors.first().map_or(0, |w| w.index());
        let mine = &reflectors[first..first + c.reflectors.len()];
        debug_assert!(c
            .reflectors
            .iter()
            .enumerate()
            .all(|(i, w)| w.index() == first + i));
        StoreReader {
            reflectors: mine,
            read,
        }
    }

    fn informer(&self, kind: KindId) -> Option<&Reflector> {
        self.reflectors.iter().find(|r| r.kind == kind)
    }
}

impl Reader for StoreReader<'_> {
    fn get(&self, kind: KindId, name: NameId) -> Option<Object> {
        self.informer(kind)
            .and_then(|r| r.store.get(&name).cloned())
    }
    fn owned_by(&self, kind: KindId, uid: u64) -> Vec<Object> {
        self.informer(kind)
            .map(|r| r.store.owned_by(uid).cloned().collect())
            .unwrap_or_default()
    }
    fn synced_rv(&self, kind: KindId) -> Option<Rv> {
        self.informer(kind).map(|r| r.last_rv)
    }
    fn select(&self, kind: KindId, keep: &dyn Fn(&Object) -> bool) -> Vec<Object> {
        let Some(r) = self.informer(kind) else {
            return vec![];
        };
        self.read.add(r.store.len());
        let mut out: Vec<Object> = r.store.values().filter(|o| keep(o)).cloned().collect();
        crate::order::sort_by_u64(&mut out, |o| o.name.0 as u64);
        out
    }
    fn live_owned(&self, kind: KindId, uid: u64) -> usize {
        self.informer(kind)
            .map_or(0, |r| r.store.live_owned_count(uid))
    }
    fn count_owned(&self, kind: KindId, uid: u64) -> usize {
        self.informer(kind).map_or(0, |r| r.store.owned_count(uid))
    }
}

const SHORT_WATCH_MS: DurationMs = DurationMs(1000);
/// Kubernetes object names (DNS subdomains) are at most 253 characters.
pub const MAX_NAME_LEN: usize = 253;
/// How long a watch cache that lost its etcd watch takes to relist etcd and be ready again:
/// the cacher's reflector backs off (0.8 s, jittered) before it relists, about a second. The
/// default of `reinit-cache` too.
pub const CACHE_RELIST_MS: DurationMs = DurationMs(1000);
/// `client-go/tools/cache/shared_informer.go` `minimumResyncPeriod`.
pub const RESYNC_MS_MIN: DurationMs = DurationMs(1000);
/// `maxNameGenerationCreateAttempts` (`registry/generic/registry/store.go`): names a create
/// with `generateName` tries with RetryGenerateName.
pub const GENERATE_NAME_ATTEMPTS: u32 = 8;
/// Scheduled actions a run may dispatch per event it may emit: timers that fire without
/// emitting (a resync of an empty store, an Anvil tick with no objects) are bounded too.
const ACTIONS_PER_EVENT_MAX: u64 = 4;
const APPENDED_SEQ_GAP: u64 = 1 << 32;
/// How long a read waits for a watch cache to be fresh enough (`cacher.go`).
const LIST_WAIT_MS: DurationMs = DurationMs(3000);

impl Sim {
    pub fn new(config: Config) -> Result<Sim, ConfigError> {
        config.validate()?;
        let config = Arc::new(config);
        let mut names = Names::default();
        names.intern("default");
        let mut sim = Sim {
            now_ms: TimeMs::ZERO,
            names,
            etcd: Etcd::new(&config),
            apiservers: config
                .apiservers
                .iter()
                .map(|a| Apiserver::new(&config, a))
                .collect(),
            etcd_watches: vec![],
            reflectors: vec![],
            controllers: vec![],
            links: vec![],
            esr: Default::default(),
            rng: Rng::new(config.seed),
            timers: timers::Timers::default(),
            ready: VecDeque::new(),
            seq: 0,
            appended_seq: 0,
            appended_seq_end: 0,
            sink: Sink::new(config.limits.max_events),
            actions: 0,
            probes: 0,
            outbox: Outbox::default(),
            config: config.clone(),
        };
        for (i, c) in config.controllers.iter().enumerate() {
            let id = ControllerId(i as u16);
            let mut reflectors = vec![];
            for (kind, handlers, namespace, selector) in sim.informers_of(c) {
                reflectors.push(WatcherId(sim.reflectors.len() as u16));
                let backoff_ms = config.reflector.backoff_ms_initial;
                let mut r = Reflector::new(id, kind, namespace, handlers, backoff_ms);
                r.selector = selector;
                sim.reflectors.push(r);
            }
            sim.controllers.push(Controller::new(c, reflectors));
            sim.links.push(Link::new(c));
            let start = Action::Controller(ControllerAction::Start {
                controller: id,
                epoch: Epoch(0),
            });
            sim.schedule(c.start_ms, NO_CAUSE, start);
        }
        if !config.compaction_ms.is_zero() {
            sim.schedule(
                TimeMs::ZERO + config.compaction_ms,
                NO_CAUSE,
                Action::Etcd(EtcdAction::CompactTick),
            );
        }
        // The timeline goes last, followed by a gap of sequence numbers: an input appended later
        // with `schedule_input` orders exactly as if it had been the timeline's last entry.
        for (i, t) in config.timeline.iter().enumerate() {
            if let Input::Write(WriteInput::Create { kind, name, .. })
            | Input::Write(WriteInput::Update { kind, name, .. }) = &t.input
            {
                sim.intern_object(*kind, name);
            }
            sim.schedule(t.at_ms, NO_CAUSE, Action::Timeline(i as u32));
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
            let sel = crate::object::Selector::resolve(
                w.selector.as_ref(),
                w.fields.as_ref(),
                &mut self.names,
            )
            .map(Arc::new);
            let handler = (w.map != KeyMap::ReadOnly).then_some((w.map, w.predicate));
            match (informers.iter_mut()).find(|x| x.0 == w.kind && x.2 == ns && x.3 == sel) {
                Some(x) => x.1.extend(handler.filter(|h| !x.1.contains(h))),
                None => informers.push((w.kind, handler.into_iter().collect(), ns, sel)),
            }
        }
        // The kind a behaviour creates children of is watched the way operators do it
        // (controller-runtime `Owns()`): a child's event re-triggers its owner. A script that
        // declares its own watch of that kind (`watches KIND none`) keeps it.
        for k in behaviour_reads(c) {
            if !informers.iter().any(|w| w.0 == k) {
                informers.push((k, vec![(KeyMap::Owner, Predicate::All)], None, None));
            }
        }
        informers
    }

    // ----- read-only accessors (view, verdict, the CLI and the page read these) -----

    /// The configuration this run was built from.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The run's events so far, in order.
    pub fn trace(&self) -> &Trace {
        &self.sink.trace
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

    /// Every watch the servers have opened, apiserver by apiserver, each's in the order they
    /// opened (`Apiserver::watches`).
    pub fn watches(&self) -> impl Iterator<Item = &ServerWatch> {
        self.apiservers.iter().flat_map(|a| a.watches())
    }

    /// One watch, at the apiserver that serves it.
    fn watch_at(&self, w: WatchRef) -> &ServerWatch {
        &self.apiservers[w.api.index()].watches[w.id.index()]
    }

    fn watch_at_mut(&mut self, w: WatchRef) -> &mut ServerWatch {
        &mut self.apiservers[w.api.index()].watches[w.id.index()]
    }

    /// The reflectors (one per informer), by `WatcherId`.
    pub fn reflectors(&self) -> &[Reflector] {
        &self.reflectors
    }

    /// The controllers, by `ControllerId`.
    pub fn controllers(&self) -> &[Controller] {
        &self.controllers
    }

    /// Each controller's link to its apiserver, by `ControllerId`.
    pub fn links(&self) -> &[Link] {
        &self.links
    }

    /// Per (controller, key): does the desired state hold, and since when (`esr.rs`).
    pub fn esr(&self) -> &crate::esr::Esr {
        &self.esr
    }

    /// Why the run stopped, once it has.
    pub fn stopped(&self) -> Option<Stop> {
        self.sink.stopped
    }

    // ----- the sans-IO surface -----

    /// When the next scheduled action is due.
    pub fn poll_timeout(&self) -> Option<TimeMs> {
        if !self.ready.is_empty() {
            return Some(self.now_ms);
        }
        self.timers.next_at()
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
        let input = Action::Input(input);
        self.timers.push(at, self.appended_seq, NO_CAUSE, input);
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
        while self.sink.stopped.is_none() {
            let Some((at, cause, action)) = self.timers.pop_due(now_ms) else {
                break;
            };
            self.now_ms = at;
            self.dispatch(cause, action);
            self.drain_ready();
        }
        if self.sink.stopped.is_none() {
            self.now_ms = self.now_ms.max(now_ms);
        }
    }

    /// Runs on towards the end for at most `max_events` more events, so a caller that must stay
    /// responsive (the page) can run a long scenario in slices. Returns true once the run is
    /// over; slices add up to exactly what `run` does.
    pub fn run_slice(&mut self, max_events: usize) -> bool {
        let end = self.config.end_ms;
        let target = self.sink.trace.len().saturating_add(max_events);
        self.drain_ready();
        while self.sink.stopped.is_none() && self.sink.trace.len() < target {
            let Some((at, cause, action)) = self.timers.pop_due(end) else {
                self.now_ms = self.now_ms.max(end);
                self.sink.stopped = Some(Stop::End);
                break;
            };
            self.now_ms = at;
            self.dispatch(cause, action);
            self.drain_ready();
        }
        self.sink.stopped.is_some()
    }

    /// Runs the configured timeline to its end (or a cap).
    pub fn run(&mut self) -> Stop {
        let end = self.config.end_ms;
        self.handle_timeout(end);
        *self.sink.stopped.get_or_insert(Stop::End)
    }

    /// After `run`: runs on, one moment at a time, until `done` says so or the system is
    /// settled (`Sim::quiescent`, retries that can only fail again aside), at most until
    /// `limit`. Returns whether it settled before the limit; a run stopped at a cap (before
    /// or while settling) stays so and did not settle: what came after is unknown.
    /// The explorer judges ESR here: a retry the work queue's backoff pushed past a fixed end
    /// (5 ms doubling to 1000 s, `util/workqueue/default_rate_limiters.go`) may still converge.
    /// A retry is futile once its key's reconcile failed in this phase and nothing it could read
    /// has changed since (etcd, the controller's caches and memory): reconcile is level-
    /// triggered, so it fails again (a retry loop is broken, not unsettled).
    pub fn run_until_settled(&mut self, limit: TimeMs, mut done: impl FnMut(&Sim) -> bool) -> bool {
        if self.sink.stopped.is_some_and(Stop::cut_off) {
            return false;
        }
        let mut futile = Futile::new();
        let settled = loop {
            if done(self) || self.settled(&futile) {
                break true;
            }
            match self.poll_timeout() {
                Some(at) if at <= limit => {
                    let from = self.sink.trace.len();
                    self.sink.stopped = None;
                    self.handle_timeout(at);
                    if self.sink.stopped.is_some() {
                        return false;
                    }
                    self.note_failed_reconciles(from, &mut futile);
                }
                _ => break false,
            }
        };
        if !settled {
            self.now_ms = self.now_ms.max(limit);
        }
        self.sink.stopped.get_or_insert(Stop::End);
        settled
    }

    /// Notes, for each reconcile that failed in the events from `from` on, what its controller
    /// could read then (`Sim::readable`); a failure that may not repeat (`fail-first` not used
    /// up, random errors) is not noted.
    fn note_failed_reconciles(&self, from: usize, futile: &mut Futile) {
        for e in self.sink.trace.range(from..) {
            if let EventKind::Controller(ControllerEvent::ReconcileEnd {
                controller,
                key,
                result: ReconcileResult::Error(_),
                ..
            }) = e.kind
            {
                let cfg = &self.config.controllers[controller.index()];
                let c = &self.controllers[controller.index()];
                let failed = c.failed_first.get(&key).copied().unwrap_or(0);
                if cfg.error_ppm == 0 && failed >= cfg.fail_first {
                    if futile.len() <= controller.index() {
                        futile.resize_with(controller.index() + 1, NameMap::default);
                    }
                    futile[controller.index()].insert(key, self.readable(controller));
                }
            }
        }
    }

    /// A hash of what a controller's reconcile reads: etcd's revision, its informers' RVs and
    /// its memory.
    fn readable(&self, controller: ControllerId) -> u64 {
        use std::hash::{Hash, Hasher};
        let mut h = StateHasher(0xcbf2_9ce4_8422_2325);
        let c = &self.controllers[controller.index()];
        self.etcd.rev().hash(&mut h);
        for w in &c.reflectors {
            self.reflectors[w.index()].last_rv.hash(&mut h);
        }
        c.memory.hash(&mut h);
        h.finish()
    }

    /// Nothing pending could make a write: no work due now, no request or message in flight, no
    /// retry of a failed reconcile waiting in a queue, no restart, fault or GC to come. What
    /// remains are the periodic timers a settled system keeps (compaction, watch timeouts,
    /// bookmarks, resyncs, Anvil's ticks) and `RequeueAfter`s, which a converged controller
    /// keeps too; timers of a life a crash ended are dead.
    pub fn quiescent(&self) -> bool {
        self.settled(&Futile::new())
    }

    /// `quiescent`, where a retry noted in `futile` with what its controller reads now is
    /// settled too.
    fn settled(&self, futile: &Futile) -> bool {
        self.ready.is_empty() && self.timers.pending().all(|a| self.periodic(a, futile))
    }

    /// Is this pending action one a settled system keeps (see `settled`)?
    fn periodic(&self, action: &Action, futile: &Futile) -> bool {
        match action {
            Action::Etcd(EtcdAction::CompactTick)
            | Action::Server(
                ServerAction::WatchTimeout { .. } | ServerAction::BookmarkDue { .. },
            )
            | Action::Reflector(ReflectorAction::Resync { .. })
            | Action::Controller(ControllerAction::AnvilTick { .. }) => true,
            Action::Controller(
                ControllerAction::Work {
                    controller, epoch, ..
                }
                | ControllerAction::Step {
                    controller, epoch, ..
                },
            ) => !self.in_life(*controller, *epoch),
            Action::Controller(ControllerAction::QueueAfter {
                controller,
                epoch,
                key,
            }) => {
                let c = &self.controllers[controller.index()];
                !c.in_life(*epoch)
                    || !c.queue.failures.contains_key(key)
                    || (futile.get(controller.index()).and_then(|f| f.get(key)))
                        == Some(&self.readable(*controller))
            }
            _ => false,
        }
    }

    /// A hash of everything that decides the future (not the trace): the explorer's dedup key.
    /// ESR's bookkeeping counts by whether each desired state holds, not since when.
    pub fn state_hash(&self) -> u64 {
        use std::hash::{Hash, Hasher};
        let mut h = StateHasher(0xcbf2_9ce4_8422_2325);
        self.now_ms.hash(&mut h);
        self.esr.hash_holds(&mut h);
        self.etcd.hash(&mut h);
        self.apiservers.hash(&mut h);
        self.etcd_watches.hash(&mut h);
        self.reflectors.hash(&mut h);
        self.controllers.hash(&mut h);
        self.links.hash(&mut h);
        self.rng.hash(&mut h);
        self.timers.hash_pending(&mut h);
        h.finish()
    }

    // ----- plumbing -----

    /// Is this timer or message from the controller's current life (not from before a crash)?
    fn in_life(&self, c: ControllerId, epoch: Epoch) -> bool {
        self.controllers[c.index()].in_life(epoch)
    }

    fn schedule(&mut self, at: TimeMs, cause: EventId, action: Action) {
        if at <= self.now_ms && !self.sink.trace.is_empty() {
            self.ready.push_back((cause, action));
            return;
        }
        self.seq += 1;
        self.timers.push(at, self.seq, cause, action);
    }

    fn drain_ready(&mut self) {
        while self.sink.stopped.is_none() {
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
            self.sink.stopped = Some(Stop::EventCap);
        } else if self.read_cap_reached() {
            self.sink.stopped = Some(Stop::ReadCap);
        }
    }

    /// Past `Limits::max_objects_read`, have the selector lists looked at too many objects for
    /// the events made (or ten times the cap in all)?
    fn read_cap_reached(&self) -> bool {
        let (read, cap) = (self.etcd.read.get(), self.config.limits.max_objects_read);
        let events = self.sink.trace.len() as u64;
        read > cap
            && (read > events.saturating_mul(crate::config::READS_PER_EVENT_MAX)
                || read > cap.saturating_mul(10))
    }

    fn emit(&mut self, actor: Actor, cause: EventId, kind: EventKind) -> EventId {
        self.sink.emit(self.now_ms, actor, cause, kind)
    }

    fn controller_of(&self, w: WatcherId) -> ControllerId {
        self.reflectors[w.index()].controller
    }

    fn send_to_client(&mut self, watcher: WatcherId, session: Session, cause: EventId, msg: Msg) {
        let action = Action::Reflector(ReflectorAction::Deliver {
            watcher,
            session,
            msg,
        });
        self.send_on_link(watcher, Toward::Client, cause, action);
    }

    /// Runs one scheduled action: routes it to the part of the system it is for.
    fn dispatch(&mut self, cause: EventId, action: Action) {
        self.count_action();
        if self.sink.stopped.is_some() {
            return;
        }
        match action {
            Action::Input(input) => self.apply_input(cause, &input),
            Action::Timeline(i) => self.apply_timeline(cause, i),
            Action::Etcd(action) => self.dispatch_etcd(cause, action),
            Action::Server(action) => self.dispatch_server(cause, action),
            Action::Reflector(action) => self.dispatch_reflector(cause, action),
            Action::Controller(action) => self.dispatch_controller(cause, action),
            Action::Link { controller, timer } => self.link_timer(controller, timer, cause),
        }
    }

    /// An action of etcd: compaction, and the garbage collector's look at a dependent.
    fn dispatch_etcd(&mut self, cause: EventId, action: EtcdAction) {
        match action {
            EtcdAction::CompactTick => self.compact_tick(),
            EtcdAction::Gc { kind, name, uid } => self.collect_garbage(kind, name, uid, cause),
        }
    }

    /// An action of an apiserver: its caches, the requests it serves, its watches' timers.
    /// Requests are routed to the requester's apiserver; timers go to the apiserver that set
    /// them.
    fn dispatch_server(&mut self, cause: EventId, action: ServerAction) {
        let by = cause;
        match action {
            ServerAction::CacheApply { api, change } => self.cache_apply(api, *change, cause),
            ServerAction::CacheProgress { api, rev } => {
                self.step_server(api, |a, st| a.progress_notified(st, rev, by))
            }
            ServerAction::CacheReady {
                api,
                kind,
                generation,
            } => self.step_server(api, |a, st| a.ready(st, kind, generation, by)),
            ServerAction::ServeList {
                watcher,
                session,
                rv,
                limit,
                scope,
            } => self.serve((watcher, session), Msg::ListErr, cause, |a, st, by| {
                let request = serve::ListRequest { rv, limit, scope };
                a.serve_list(st, watcher, session, request, by)
            }),
            ServerAction::ServeListPage {
                watcher,
                session,
                list_rv,
                rest,
                limit,
            } => self.serve((watcher, session), Msg::ListErr, cause, |a, st, by| {
                a.serve_list_page(st, watcher, session, (list_rv, rest, limit), by)
            }),
            ServerAction::ServeWatchList {
                watcher,
                session,
                rv,
                timeout_ms,
                scope,
            } => self.serve((watcher, session), Msg::ListErr, cause, |a, st, by| {
                a.serve_watch_list(st, (watcher, session), (rv, timeout_ms), scope, by)
            }),
            ServerAction::ServeWatch {
                watcher,
                session,
                from,
                timeout_ms,
                scope,
            } => self.serve((watcher, session), Msg::Refused, cause, |a, st, by| {
                let from = serve::WatchFrom::Rv(from);
                let request = serve::WatchRequest {
                    from,
                    timeout_ms,
                    scope,
                };
                a.serve_watch(st, watcher, session, request, by)
            }),
            ServerAction::ListDeadline {
                watcher,
                session,
                api,
            } => self.step_server(api, |a, st| a.read_deadline(st, watcher, session, by)),
            ServerAction::WatchTimeout { watch } => {
                self.close_watch(watch, WatchEnd::Timeout, cause)
            }
            ServerAction::BookmarkDue { watch } => self.bookmark_due(watch, cause),
        }
    }

    /// An action of a reflector: a message at its end of the link, its backoff, its resync.
    fn dispatch_reflector(&mut self, cause: EventId, action: ReflectorAction) {
        match action {
            ReflectorAction::Deliver {
                watcher,
                session,
                msg,
            } => self.deliver(watcher, session, msg, cause),
            ReflectorAction::Wake { watcher, session } => self.wake(watcher, session, cause),
            ReflectorAction::Resync {
                watcher,
                epoch,
                round,
            } => self.resync(watcher, epoch, round),
        }
    }

    /// An action of a controller: its queue, its workers, its life.
    fn dispatch_controller(&mut self, cause: EventId, action: ControllerAction) {
        match action {
            ControllerAction::QueueAfter {
                controller,
                epoch,
                key,
            } => self.queue_after_due(controller, epoch, key, cause),
            ControllerAction::Work {
                controller,
                epoch,
                worker,
            } => self.work(controller, epoch, worker, cause),
            ControllerAction::Step {
                controller,
                epoch,
                worker,
            } => self.step(controller, epoch, worker, cause),
            ControllerAction::Start { controller, epoch } => {
                self.start_controller(controller, epoch, cause)
            }
            ControllerAction::AnvilTick { controller, epoch } => {
                self.anvil_tick(controller, epoch, cause)
            }
        }
    }

    /// A delayed add is due, if it is still this life's and the queue's item.
    fn queue_after_due(&mut self, c: ControllerId, epoch: Epoch, key: NameId, cause: EventId) {
        let now = self.now_ms;
        if self.in_life(c, epoch) && self.controllers[c.index()].delayed_add_due(key, now) {
            self.enqueue(c, key, cause, false);
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
        let tick = Action::Controller(ControllerAction::AnvilTick {
            controller: c,
            epoch,
        });
        self.schedule(self.now_ms + period, NO_CAUSE, tick);
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
        format!("{}{name}", crate::model::DEFAULT_NAMESPACE_PREFIX)
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

/// The state hash's hasher: a word at a time (derived `Hash` writes fields as integers), each
/// mixed by a multiply and a rotation, so every field's bits reach every bit of the result.
struct StateHasher(u64);

impl std::hash::Hasher for StateHasher {
    fn finish(&self) -> u64 {
        // SplitMix64's finaliser.
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn write(&mut self, bytes: &[u8]) {
        let mut words = bytes.chunks_exact(8);
        for w in &mut words {
            self.write_u64(u64::from_le_bytes(w.try_into().expect("8 bytes")));
        }
        let rest = words.remainder();
        if !rest.is_empty() {
            let mut w = [0u8; 8];
            w[..rest.len()].copy_from_slice(rest);
            self.write_u64(u64::from_le_bytes(w) ^ ((rest.len() as u64) << 59));
        }
    }
    fn write_u64(&mut self, x: u64) {
        self.0 = (self.0 ^ x)
            .wrapping_mul(0x9e37_79b9_7f4a_7c15)
            .rotate_left(29);
    }
    fn write_u8(&mut self, x: u8) {
        self.write_u64(u64::from(x));
    }
    fn write_u16(&mut self, x: u16) {
        self.write_u64(u64::from(x));
    }
    fn write_u32(&mut self, x: u32) {
        self.write_u64(u64::from(x));
    }
    fn write_usize(&mut self, x: usize) {
        self.write_u64(x as u64);
    }
    fn write_i64(&mut self, x: i64) {
        self.write_u64(x as u64);
    }
}

/// A stable hash of a trace, to prove the page and the CLI computed the same run. It hashes the
/// one-line text of every event, so it is the same on every platform (derived `Hash` is not: it
/// writes `usize` lengths, which are 4 bytes on wasm32).
pub fn trace_hash(sim: &Sim) -> u64 {
    use std::hash::Hasher;
    let mut h = Fnv(0xcbf2_9ce4_8422_2325);
    for (i, e) in sim.sink.trace.iter().enumerate() {
        h.write(crate::trace::line(i as EventId, e, sim).as_bytes());
        h.write(b"\n");
    }
    h.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Behaviour;

    /// Pods and their Copies on one apiserver, without compaction, and `controllers`
    /// controllers that each mirror Pods into Copies: for tests of the engine's rules.
    pub(super) fn mirrors(controllers: usize) -> Config {
        let mut config = Config::new(&["Pod", "Copy"]);
        config.compaction_ms = DurationMs::ZERO;
        for i in 0..controllers {
            let behaviour = Behaviour::Mirror { target: KindId(1) };
            let c = Config::controller(&format!("c{i}"), KindId(0), behaviour);
            config.controllers.push(c);
        }
        config
    }

    /// One controller (with a second apiserver to fail over to), watching at 1 s.
    pub(super) fn watching() -> Sim {
        let mut config = mirrors(1);
        let other = crate::config::ApiserverConfig {
            name: "other".into(),
            lag_ms: DurationMs::ZERO,
            ..Default::default()
        };
        config.apiservers.push(other);
        let mut sim = Sim::new(config).unwrap();
        sim.handle_timeout(TimeMs(1000));
        sim
    }

    /// A create of a Pod, as the timeline writes it.
    pub(super) fn create_pod(name: &str, spec: i64) -> Input {
        let name = name.into();
        let kind = KindId(0);
        Input::Write(WriteInput::Create { kind, name, spec })
    }

    /// The events of a run from `from` on, with their moments and causes.
    pub(super) fn events_from(sim: &Sim, from: usize) -> Vec<(TimeMs, EventId, EventKind)> {
        let events = sim.sink.trace.iter().skip(from);
        events.map(|e| (e.time_ms, e.cause, e.kind)).collect()
    }

    /// The explorer's dedup key: equal states hash equal, and ESR's bookkeeping (whether a
    /// desired state holds, not since when) is part of the state.
    #[test]
    fn the_state_hash_holds_esr() {
        let config = crate::esr::tests::parents();
        let mut sim = Sim::new(config).unwrap();
        sim.run();
        let twin = sim.clone();
        assert_eq!(sim.state_hash(), twin.state_hash());
        let key = sim.esr.iter().next().expect("ESR is tracked").0;
        let before = sim.state_hash();
        sim.esr.state_mut(key).unwrap().since_ms += DurationMs(1);
        assert_eq!(sim.state_hash(), before, "since when does not count");
        let holds = &mut sim.esr.state_mut(key).unwrap().holds;
        *holds = !*holds;
        assert_ne!(sim.state_hash(), before);
    }

    /// A running reconcile names its start event, whatever the cap: at every cap the run can
    /// stop at, the event exists, and it is that reconcile's start unless the cap cut the start
    /// itself off (then it is the last event recorded, as `emit` answers at the cap).
    #[test]
    fn a_running_reconcile_names_its_recorded_start_event() {
        let mut config = crate::esr::tests::parents();
        config.end_ms = TimeMs(60_000);
        config.controllers[0].reconcile_ms = DurationMs(1000);
        if let Input::Write(WriteInput::Create { spec, .. }) = &mut config.timeline[0].input {
            *spec = 3;
        }
        let mut running_seen = 0;
        for cap in 1..60 {
            config.limits.max_events = cap;
            let mut sim = Sim::new(config.clone()).unwrap();
            sim.run();
            for run in sim.controllers[0].workers.iter().flatten() {
                running_seen += 1;
                let (id, len) = (run.start_event as usize, sim.sink.trace.len());
                let start = sim.sink.trace.get(id).map(|e| e.kind);
                let named = matches!(start, Some(EventKind::Controller(ControllerEvent::ReconcileStart { key, .. })) if key == run.key);
                assert!(
                    named || id + 1 == len,
                    "cap {cap}: start event {id} of {len}"
                );
            }
        }
        assert!(running_seen > 0, "some cap stops the run mid-reconcile");
    }

    /// Every event moves an `Action` through the queues several times: a move of one under 128
    /// bytes is inlined, one above is a call of `memcpy` (a 144-byte `Action`, when `Msg::Event`
    /// and `CacheApply` carried a `Change` inline, cost 4 of them per watch event).
    #[test]
    fn actions_stay_small() {
        assert!(
            std::mem::size_of::<Action>() <= 72,
            "{}",
            std::mem::size_of::<Action>()
        );
        assert!(
            std::mem::size_of::<Msg>() <= 64,
            "{}",
            std::mem::size_of::<Msg>()
        );
    }
}
