//! What a run is made of: the cluster's settings, the controllers, the timeline of inputs and the
//! caps. The script crate compiles scenarios into this; the core validates it.

use std::sync::Arc;

use crate::model::{ApiserverId, ControllerId, DurationMs, KindId, TimeMs};
use crate::program::Program;

/// How a kind's watch cache sizes itself.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum CacheMode {
    /// Kubernetes before 1.19 (`--watch-cache-sizes`): a fixed ring; a full ring evicts the oldest.
    Fixed { capacity: u32 },
    /// Kubernetes 1.19+: starts at `capacity_min`, doubles while the oldest event is fresher than
    /// 75 s, halves when a quarter back is older than 75 s.
    Dynamic {
        capacity_min: u32,
        capacity_max: u32,
    },
    /// No watch cache for this kind: lists and watches are served from etcd.
    Off,
}

pub const DYNAMIC_CAPACITY_MIN: u32 = 100;
pub const DYNAMIC_CAPACITY_MAX: u32 = 102_400;
pub const EVENT_FRESH_MS: DurationMs = DurationMs(75_000);

#[derive(Clone, Debug, PartialEq)]
pub struct KindConfig {
    pub name: String,
    pub cache: CacheMode,
    /// `kind Node cluster-scoped`: its objects have no namespace (their names no `ns/`).
    pub cluster_scoped: bool,
    /// `subresources.status` (the default; `kind NAME status-subresource off` turns it off):
    /// writes to the object ignore the status, and `/status` is served.
    pub status_subresource: bool,
}

#[derive(Clone, Debug, PartialEq, Default)]
pub struct ApiserverConfig {
    pub name: String,
    /// How far its watch caches lag behind etcd.
    pub lag_ms: DurationMs,
    /// Serve like client-go's fake clientset (`testing/fixture.go` `ObjectTracker`) instead of
    /// a kube-apiserver.
    pub fake: Option<FakeTracker>,
    /// A streaming list's initial events end with a bookmark that lacks the
    /// `k8s.io/initial-events-end` annotation, as antrea's and kcp's aggregated APIs did
    /// (antrea #8123, kcp #3871): client-go's informer never learns its list is complete.
    pub omits_initial_events_end: bool,
}

/// The fake clientset's object tracker, by client-go version (`testing/fixture.go`).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum FakeTracker {
    /// Up to client-go 1.35: no resourceVersion anywhere. A list's RV is "", a watch ignores
    /// the RV it is asked for and delivers only writes made after it was registered.
    NoResourceVersion,
    /// client-go 1.36 (PRs #135959, #136143): a list carries the tracker's counter and a watch
    /// from it replays, as ADDED, every stored object written after it; deletes are not replayed.
    ReplaysFromResourceVersion,
}

impl FakeTracker {
    /// The tracker of client-go 1.N.
    pub fn of_version(minor: u32) -> FakeTracker {
        if minor >= 36 {
            FakeTracker::ReplaysFromResourceVersion
        } else {
            FakeTracker::NoResourceVersion
        }
    }
}

/// Apiserver behaviours that changed between Kubernetes versions (`kubernetes 1.N` picks them;
/// each is also a `feature` of its own). The default is 1.34's.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct ServerFeatures {
    /// `ConsistentListFromCache` (beta, on, 1.31; GA 1.34): an RV "" list is answered by the
    /// watch cache once it has seen etcd's current revision. Off (before 1.31): by etcd.
    pub consistent_list_from_cache: bool,
    /// `ResilientWatchCacheInitialization` (beta, on, 1.31): while a cache (re)initialises,
    /// watches and lists without a limit get 429 and lists with one go to etcd. Off (before
    /// 1.31): watches and lists at an RV "N" wait until the cache is ready; other lists go to
    /// etcd.
    pub resilient_cache_init: bool,
    /// `WatchFromStorageWithoutResourceVersion`: an RV "" watch is served by etcd (a
    /// consistent start). Off (the 1.30+ default): by the watch cache, like RV "0".
    pub watch_from_storage_without_rv: bool,
    /// `WatchList` (server side): `sendInitialEvents=true` is accepted. Off (1.27-1.31, 1.33):
    /// such a watch is refused with 422, and client-go falls back to a list.
    pub watch_list: bool,
    /// `RetryGenerateName` (beta, on, 1.31; GA 1.32): a create with `generateName` whose drawn
    /// name is taken is tried again with a new one, up to 8 times
    /// (`registry/generic/registry/store.go` `createWithGenerateNameRetry`). Off: one name, and
    /// a taken one is 409 AlreadyExists.
    pub retry_generate_name: bool,
    /// `EfficientWatchResumption` (beta, on, 1.21): etcd progress notifications move every
    /// cache's RV with the revision. Off (before 1.21): a cache's RV moves only with its own
    /// kind's events, so a quiet kind's cache (and its bookmarks and list RVs) stays behind.
    pub progress_notify: bool,
}

impl Default for ServerFeatures {
    fn default() -> Self {
        ServerFeatures::of_version(34)
    }
}

impl ServerFeatures {
    /// The defaults of kube-apiserver 1.N (`pkg/features/kube_features.go` at that tag).
    pub fn of_version(minor: u32) -> ServerFeatures {
        ServerFeatures {
            consistent_list_from_cache: minor >= 31,
            resilient_cache_init: minor >= 31,
            watch_from_storage_without_rv: minor < 30,
            watch_list: minor == 32 || minor >= 34,
            retry_generate_name: minor >= 31,
            progress_notify: minor >= 21,
        }
    }
}

/// How an informer event becomes a reconcile key.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum KeyMap {
    /// The object's own name (controller-runtime `For`).
    Itself,
    /// The controller owner of the object, if it is of the controller's primary kind (`Owns`).
    Owner,
    /// No handler: the informer only fills the cache the reconciles read.
    ReadOnly,
}

/// controller-runtime's event filters (`pkg/predicate/predicate.go`): which update events reach
/// the handler. Creates and deletes always pass.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub enum Predicate {
    #[default]
    All,
    /// `GenerationChangedPredicate`: updates pass only when `metadata.generation` changed, so
    /// status-only writes and resyncs do not trigger a reconcile.
    GenerationChanged,
    /// `ResourceVersionChangedPredicate`: updates pass only when the RV changed (drops resyncs).
    ResourceVersionChanged,
}

#[derive(Clone, Debug, PartialEq)]
pub struct WatchConfig {
    pub kind: KindId,
    pub map: KeyMap,
    /// Only objects of this namespace (a field selector); `None` watches all namespaces.
    pub namespace: Option<String>,
    /// Only objects whose labels match (`labelSelector`), filtered by the apiserver.
    pub selector: Option<LabelSelector>,
    /// Only objects whose name or namespace match (`fieldSelector`), filtered by the apiserver.
    pub fields: Option<FieldSelector>,
    pub predicate: Predicate,
}

/// A label selector as written (`app=web,tier!=db,env,!legacy,env in (a,b)`), resolved to
/// interned names when the run starts (`object::Selector`).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct LabelSelector(pub Vec<LabelRequirement>);

/// One requirement of a label selector: `key op values` (`labels/selector.go` `Requirement`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct LabelRequirement {
    pub op: SelectorOp,
    pub key: String,
    /// One value for `=` and `!=`, none for `k` and `!k`, a sorted set for `in` and `notin`.
    pub values: Vec<String>,
}

/// One requirement's operator (`apimachinery/pkg/labels/selector.go`; `==` reads as `=`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SelectorOp {
    Equals,
    NotEquals,
    Exists,
    NotExists,
    In,
    NotIn,
}

/// At most this many requirements in one selector (label or field).
pub const MAX_REQUIREMENTS: usize = 16;
/// At most this many values in one `in (...)` or `notin (...)`.
pub const MAX_SELECTOR_VALUES: usize = 64;

impl LabelRequirement {
    /// `selector.go` `Requirement.Matches`, given the object's value of the key: `in` and `=`
    /// need the key with one of the values; `notin` and `!=` hold without the key.
    pub fn matches(&self, label: Option<&str>) -> bool {
        let listed = || label.is_some_and(|l| self.values.iter().any(|v| v == l));
        match self.op {
            SelectorOp::Equals | SelectorOp::In => listed(),
            SelectorOp::NotEquals | SelectorOp::NotIn => !listed(),
            SelectorOp::Exists => label.is_some(),
            SelectorOp::NotExists => label.is_none(),
        }
    }

    /// As `selector.go`'s `Requirement.String` writes it.
    pub fn text(&self) -> String {
        let (k, v) = (&self.key, self.values.join(","));
        match self.op {
            SelectorOp::Equals => format!("{k}={v}"),
            SelectorOp::NotEquals => format!("{k}!={v}"),
            SelectorOp::Exists => k.clone(),
            SelectorOp::NotExists => format!("!{k}"),
            SelectorOp::In => format!("{k} in ({v})"),
            SelectorOp::NotIn => format!("{k} notin ({v})"),
        }
    }
}

impl LabelSelector {
    /// Every requirement holds for an object whose labels `label` looks up.
    pub fn matches<'a>(&self, label: impl Fn(&str) -> Option<&'a str>) -> bool {
        self.0.iter().all(|r| r.matches(label(&r.key)))
    }

    /// As `selector.go`'s `String` writes it.
    pub fn text(&self) -> String {
        let parts: Vec<String> = self.0.iter().map(LabelRequirement::text).collect();
        parts.join(",")
    }
}

/// A field selector as written (`metadata.name=web-0,metadata.namespace!=test`): the fields
/// every kind supports (`apiserver/pkg/registry/generic` `ObjectMetaFieldsSet`, and for custom
/// resources `customresource/strategy.go` `GetAttrs`).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct FieldSelector(pub Vec<FieldRequirement>);

/// `field=value` (`=` or `==`) or `field!=value` (`apimachinery/pkg/fields/selector.go`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct FieldRequirement {
    pub field: SelectorField,
    pub equal: bool,
    pub value: String,
}

/// A field a field selector may name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SelectorField {
    Name,
    Namespace,
}

impl SelectorField {
    pub fn as_str(self) -> &'static str {
        match self {
            SelectorField::Name => "metadata.name",
            SelectorField::Namespace => "metadata.namespace",
        }
    }
}

impl FieldSelector {
    /// As `fields/selector.go`'s `String` writes it.
    pub fn text(&self) -> String {
        let parts: Vec<String> = (self.0.iter())
            .map(|r| {
                let op = if r.equal { "=" } else { "!=" };
                format!("{}{op}{}", r.field.as_str(), r.value)
            })
            .collect();
        parts.join(",")
    }
}

/// The reconcile library. Level-triggered behaviours decide from the latest state only; the
/// `*Buggy` ones depend on history the way Sieve's real bugs did.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Behaviour {
    /// Keep `parent.spec` children (owned, named `parent-0`, `parent-1`, ...) of `child`.
    Children { child: KindId, finalizer: bool },
    /// Keep an object of `target` with the same name and the same spec as each primary object.
    Mirror { target: KindId },
    /// rabbitmq#648: a parent seen with a deletion mark makes the controller delete `parent-data`
    /// by name. `fixed` deletes with a UID precondition taken from the parent's own child.
    StaleDelete { child: KindId, fixed: bool },
    /// rabbitmq#758: a parent scaled to 0 must have its data child wiped (deleted, made anew on
    /// scale-up). It acts on the transitions it observes, so a 0 it never saw wipes nothing: no
    /// level-triggered twin exists without recording the intent in the API.
    WipeOnZero { child: KindId },
    /// rabbitmq#782: two writes, create `parent-data` then set `parent.status = spec`. The buggy
    /// one skips everything once the child exists, so a crash between the writes is never repaired.
    TwoWrites { child: KindId, fixed: bool },
    /// The controller's own logic (`ControllerConfig::program`): a scenario's `logic` block.
    Program,
}

/// Which work queue the controller uses.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum QueueKind {
    /// client-go's rate-limited queue: per-item 5 ms · 2^n (cap 1000 s) and a 10 qps / 100 bucket.
    Classic,
    /// controller-runtime's priority queue, the default since v0.23 (`UsePriorityQueue` defaults
    /// to true in `pkg/controller/controller.go`): one item per key, per-item backoff only, and
    /// adds from the initial list and from resyncs go behind every other key.
    Priority,
}

#[derive(Clone, Debug, PartialEq)]
pub struct ControllerConfig {
    pub name: String,
    pub primary: KindId,
    pub watches: Vec<WatchConfig>,
    pub behaviour: Behaviour,
    /// The logic of a `Behaviour::Program` controller.
    pub program: Option<Arc<Program>>,
    pub workers: u32,
    pub apiserver: ApiserverId,
    /// Time a reconcile takes; its writes are spread evenly over it.
    pub reconcile_ms: DurationMs,
    /// `RequeueAfter` returned by every successful reconcile; 0 for none.
    pub requeue_after_ms: DurationMs,
    /// Probability that a reconcile returns an error, in parts per million.
    pub error_ppm: u32,
    /// Informer resync period; 0 disables it (controller-runtime's default is 10 h).
    pub resync_ms: DurationMs,
    /// Message delay on the link between this controller and its apiserver.
    pub link_delay_ms: DurationMs,
    pub queue: QueueKind,
    /// Anvil's abstraction: no watches, consistent reads, a reconcile scheduled for every primary
    /// object every `anvil_period_ms`.
    pub anvil: bool,
    pub anvil_period_ms: DurationMs,
    /// Start time of the controller.
    pub start_ms: TimeMs,
    /// This controller's `allowWatchBookmarks` (None: the cluster's setting).
    pub bookmarks: Option<bool>,
    /// This controller's streaming list (None: the cluster's setting).
    pub streaming_list: Option<bool>,
    /// The first this-many reconciles of each key return an error (deterministic failures).
    pub fail_first: u32,
    /// KEP-5647 (kube-controller-manager 1.36, `StaleControllerConsistency*`): remember the RV
    /// each write of a reconcile got back, per key, and while the informer of that kind has not
    /// reached it, end the key's next reconcile at once with an error (a rate-limited retry).
    pub stale_read_check: bool,
    /// A hand-written watch loop: after a 410 it watches again from the same RV (after a
    /// backoff) and never lists (kubernetes #129266). False: client-go's reflector relists.
    pub rewatch_on_gone: bool,
}

/// Reflector options that differ between Kubernetes versions.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct ReflectorConfig {
    /// `allowWatchBookmarks=true` (client-go always sends it).
    pub bookmarks: bool,
    /// Streaming list (`sendInitialEvents=true`), client-go's default from 1.35.
    pub streaming_list: bool,
    /// The pager's page size (`limit`) for lists etcd serves (0: no paging). Lists served by the
    /// watch cache ignore it; relists at a resourceVersion do not page at all.
    pub page_size: u32,
    pub backoff_ms_initial: DurationMs,
    pub backoff_ms_max: DurationMs,
    pub backoff_reset_ms: DurationMs,
    /// Legacy client-go (`ExponentialBackoffManager`): the backoff resets only after a quiet
    /// `backoff_reset_ms`, so a long outage keeps the 30 s cap. Modern: every `backoff_reset_ms`.
    pub backoff_reset_after_quiet: bool,
    pub watch_timeout_ms_min: DurationMs,
    /// client-go 1.19+ (`isTooLargeResourceVersionError`): a list that gets 504 "Too large
    /// resource version" lists again at once with RV "". False (1.18.0-1.18.5): it backs off
    /// and lists the same RV again.
    pub too_large_relists_consistent: bool,
}

impl Default for ReflectorConfig {
    fn default() -> Self {
        ReflectorConfig {
            bookmarks: true,
            streaming_list: false,
            page_size: 500,
            backoff_ms_initial: DurationMs(800),
            backoff_ms_max: DurationMs(30_000),
            backoff_reset_ms: DurationMs(120_000),
            backoff_reset_after_quiet: false,
            watch_timeout_ms_min: DurationMs(300_000),
            too_large_relists_consistent: true,
        }
    }
}

/// Something that happens at a moment of the timeline, by family: a write by another client, a
/// fault, a raw request, narration. Each family is matched whole where it is applied
/// (`sim/inputs.rs`), checked (`Config::check_input`) and written back (the script's render).
#[derive(Clone, Debug, PartialEq, Hash)]
pub enum Input {
    Write(WriteInput),
    Fault(FaultInput),
    /// A raw request to one apiserver, answered in the trace: what Kubernetes documents for
    /// lists and watches at a resourceVersion.
    Probe {
        apiserver: ApiserverId,
        kind: KindId,
        request: ProbeRequest,
        /// A list's `labelSelector` and `fieldSelector`, filtered by the apiserver as a
        /// watch's are.
        selector: Option<Box<ProbeSelector>>,
    },
    /// Narration shown at its moment; `wait`: playback pauses there until the reader continues.
    Say {
        text: String,
        wait: bool,
    },
}

/// A probe's list selectors (`probe list KIND selector SEL field-selector SEL`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ProbeSelector {
    pub labels: Option<LabelSelector>,
    pub fields: Option<FieldSelector>,
}

impl ProbeSelector {
    /// As the script writes them: `selector app=web field-selector metadata.name=a`.
    pub fn text(&self) -> String {
        let labels = (self.labels.iter()).map(|l| format!("selector {}", l.text()));
        let fields = (self.fields.iter()).map(|f| format!("field-selector {}", f.text()));
        labels.chain(fields).collect::<Vec<_>>().join(" ")
    }
}

/// A user's write (another client of the apiserver, as `kubectl`).
#[derive(Clone, Debug, PartialEq, Hash)]
pub enum WriteInput {
    Create {
        kind: KindId,
        name: String,
        spec: i64,
    },
    /// Set the spec (a no-op when equal).
    Update {
        kind: KindId,
        name: String,
        spec: i64,
    },
    /// Set the status only (no generation change).
    UpdateStatus {
        kind: KindId,
        name: String,
        status: i64,
    },
    Delete {
        kind: KindId,
        name: String,
    },
    /// A user's write that names fields, labels, annotations, finalizers or owners: `edits`
    /// applied to a new object (`Verb::Create`) or to the object as etcd holds it now.
    Edits {
        verb: Verb,
        kind: KindId,
        name: String,
        edits: Vec<Edit>,
    },
    /// A delete with a propagation policy other than background (`DeleteOptions`).
    DeleteWith {
        kind: KindId,
        name: String,
        propagation: Propagation,
    },
}

/// A fault of the timeline, or the end of one (a resume, a restart).
#[derive(Clone, Debug, PartialEq, Hash)]
pub enum FaultInput {
    /// Close the controller's watches and refuse its connections for a while: now, or (with
    /// `after_writes`) just before the next write its reconciles make once one of them has
    /// made that many, so that write is refused (the explorer's refusal at a write).
    Disconnect {
        controller: ControllerId,
        duration_ms: DurationMs,
        after_writes: Option<u32>,
    },
    /// Set the message delay on a controller's link.
    Delay {
        controller: ControllerId,
        delay_ms: DurationMs,
    },
    /// Sieve's unobserved-state injection: hold the watch notifications that reach the
    /// controller (in order, none lost) until a later state of `kind`/`name` than the next one
    /// has arrived, then release them together, so the controller never acts on the state in
    /// between. Released anyway after `for_ms`, or when a stream ends.
    Hold {
        controller: ControllerId,
        kind: KindId,
        name: String,
        for_ms: DurationMs,
    },
    PauseCache {
        apiserver: ApiserverId,
    },
    ResumeCache {
        apiserver: ApiserverId,
    },
    /// The apiserver restarts: every watch closes, caches empty and refill after `down_ms`.
    RestartApiserver {
        apiserver: ApiserverId,
        down_ms: DurationMs,
    },
    /// Re-initialise one kind's cache as after a failed etcd watch.
    ReinitCache {
        apiserver: ApiserverId,
        kind: KindId,
        down_ms: DurationMs,
    },
    /// Kill the controller; with `after_writes`, only once its next reconcile made that many writes;
    /// with `restart_after_ms`, start it again that long after the crash.
    Crash {
        controller: ControllerId,
        after_writes: Option<u32>,
        restart_after_ms: Option<DurationMs>,
    },
    /// An HA load balancer sends the controller's connections to another apiserver: its open
    /// watches break, and its reflectors go on from their last RV there (they do not relist).
    Failover {
        controller: ControllerId,
        apiserver: ApiserverId,
    },
    /// Start a crashed controller (fresh informers), optionally against another apiserver.
    Restart {
        controller: ControllerId,
        apiserver: Option<ApiserverId>,
    },
}

/// How a timeline write reaches the apiserver.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Verb {
    Create,
    /// Read the object and write it whole back with the resourceVersion read (a PUT).
    Update,
    /// A JSON merge patch (RFC 7386): only the named fields change, `null` removes one, no
    /// resourceVersion precondition. `label` and `annotate` are patches too, as kubectl's are.
    Patch,
}

impl Verb {
    pub fn as_str(self) -> &'static str {
        match self {
            Verb::Create => "create",
            Verb::Update => "update",
            Verb::Patch => "patch",
        }
    }
}

/// A named field's value as the script wrote it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum FieldValue {
    Int(i64),
    Str(String),
}

/// One change a timeline write makes to an object; `None` removes (a merge patch's `null`,
/// kubectl's `key-`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Edit {
    /// The shorthand `spec N`: the default spec field.
    Spec(i64),
    /// The shorthand `status N`.
    Status(i64),
    /// `spec.PATH=V` (`status`: `status.PATH=V`).
    Field {
        status: bool,
        path: String,
        value: Option<FieldValue>,
    },
    Label {
        key: String,
        value: Option<String>,
    },
    Annotation {
        key: String,
        value: Option<String>,
    },
    Finalizer {
        name: String,
        add: bool,
    },
    /// `metadata.generateName`: the write's name is a prefix, to which the apiserver appends
    /// five random characters (drawn from the run's seed). A create's only.
    GenerateName,
    /// An owner reference to the object of this kind and name (its UID is read when the write
    /// is made: a missing owner gets a reference no object matches, which the collector reads as
    /// gone).
    Owner {
        kind: KindId,
        name: String,
        controller: bool,
        block_owner_deletion: bool,
    },
}

/// `DeleteOptions.propagationPolicy` (`pkg/controller/garbagecollector`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Propagation {
    /// The owner goes at once; the collector deletes its dependents afterwards.
    #[default]
    Background,
    /// The owner stays, marked deleting with the `foregroundDeletion` finalizer, until the
    /// collector has deleted every dependent that blocks it (`blockOwnerDeletion`).
    Foreground,
    /// The owner gets the `orphan` finalizer; the collector removes the owner references from
    /// its dependents, then the finalizer, and the owner goes; the dependents stay.
    Orphan,
}

impl Propagation {
    pub fn as_str(self) -> &'static str {
        match self {
            Propagation::Background => "background",
            Propagation::Foreground => "foreground",
            Propagation::Orphan => "orphan",
        }
    }
}

/// What a probe asks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ProbeRequest {
    List {
        rv: crate::trace::ListRv,
    },
    /// A watch from this RV: its answer is whether it opens (and how many events it replays)
    /// or the error it gets; the probe does not keep the stream.
    Watch {
        from: crate::model::Rv,
    },
    /// A watch at resourceVersion "" ("start at most recent"): synthetic ADDED events for the
    /// current state, from etcd before 1.30 (`WatchFromStorageWithoutResourceVersion`), from
    /// the watch cache since.
    WatchMostRecent,
}

#[derive(Clone, Debug, PartialEq)]
pub struct TimedInput {
    pub at_ms: TimeMs,
    pub input: Input,
}

/// Objects a run's selector lists may look at per event, on average, once past
/// `Limits::max_objects_read`.
pub const READS_PER_EVENT_MAX: u64 = 1000;

/// Caps that bound every run.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Limits {
    pub max_events: u64,
    pub max_time_ms: DurationMs,
    /// Objects the run's selector lists may look at (each `list ... selector` of a reconcile or
    /// of ESR's check walks every object of its kind) before the run is judged by their rate:
    /// past it, a run whose lists looked at more than `READS_PER_EVENT_MAX` objects an event
    /// (lists that grow with every reconcile cost the square of the objects) stops
    /// (`Stop::ReadCap`), and any run past ten times it. A steady 1,000-object list every
    /// 200 ms for a day (about 200 an event) runs to its end.
    pub max_objects_read: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_events: 5_000_000,
            max_time_ms: DurationMs(24 * 3_600_000),
            max_objects_read: 200_000_000,
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Config {
    pub seed: u64,
    pub kinds: Vec<KindConfig>,
    pub apiservers: Vec<ApiserverConfig>,
    pub controllers: Vec<ControllerConfig>,
    pub reflector: ReflectorConfig,
    pub server: ServerFeatures,
    /// etcd compaction interval (`--etcd-compaction-interval`); 0 disables.
    pub compaction_ms: DurationMs,
    /// Bookmark period of the watch cache.
    pub bookmark_ms: DurationMs,
    /// Events a server-side watch may have in flight before the server closes it as too slow.
    pub watch_chan_capacity: u32,
    /// Dependents of a deleted owner are deleted by the garbage collector after this delay.
    pub gc_delay_ms: DurationMs,
    pub timeline: Vec<TimedInput>,
    /// When the run stops.
    pub end_ms: TimeMs,
    pub limits: Limits,
}

impl Config {
    /// A one-kind, one-apiserver cluster with modern defaults and nothing happening.
    pub fn new(kinds: &[&str]) -> Config {
        Config {
            seed: 1,
            kinds: kinds
                .iter()
                .map(|k| KindConfig {
                    name: k.to_string(),
                    cache: CacheMode::Dynamic {
                        capacity_min: DYNAMIC_CAPACITY_MIN,
                        capacity_max: DYNAMIC_CAPACITY_MAX,
                    },
                    cluster_scoped: false,
                    status_subresource: true,
                })
                .collect(),
            apiservers: vec![ApiserverConfig {
                name: "apiserver".into(),
                ..ApiserverConfig::default()
            }],
            controllers: vec![],
            reflector: ReflectorConfig::default(),
            server: ServerFeatures::default(),
            compaction_ms: DurationMs(300_000),
            bookmark_ms: DurationMs(60_000),
            watch_chan_capacity: 100,
            gc_delay_ms: DurationMs::ZERO,
            timeline: vec![],
            end_ms: TimeMs(60_000),
            limits: Limits::default(),
        }
    }

    /// Is this kind cluster-scoped (`kind NAME cluster-scoped`)?
    pub fn cluster_scoped(&self, kind: KindId) -> bool {
        self.kinds
            .get(kind.index())
            .is_some_and(|k| k.cluster_scoped)
    }

    /// The cluster-scoped kinds, for a program's `cluster_scoped`.
    pub fn cluster_scoped_kinds(&self) -> Vec<KindId> {
        (0..self.kinds.len() as u16)
            .map(KindId)
            .filter(|k| self.cluster_scoped(*k))
            .collect()
    }

    /// Does this kind serve the status subresource (`status-subresource off`: no)?
    pub fn status_subresource(&self, kind: KindId) -> bool {
        self.kinds
            .get(kind.index())
            .is_none_or(|k| k.status_subresource)
    }

    pub fn kind_id(&self, name: &str) -> Option<KindId> {
        self.kinds
            .iter()
            .position(|k| k.name == name)
            .map(|i| KindId(i as u16))
    }

    /// A controller with client-go defaults watching its primary kind.
    pub fn controller(name: &str, primary: KindId, behaviour: Behaviour) -> ControllerConfig {
        ControllerConfig {
            name: name.to_string(),
            primary,
            watches: vec![WatchConfig {
                kind: primary,
                map: KeyMap::Itself,
                namespace: None,
                selector: None,
                fields: None,
                predicate: Predicate::All,
            }],
            behaviour,
            program: None,
            workers: 1,
            apiserver: ApiserverId(0),
            reconcile_ms: DurationMs(10),
            requeue_after_ms: DurationMs::ZERO,
            error_ppm: 0,
            resync_ms: DurationMs::ZERO,
            link_delay_ms: DurationMs::ZERO,
            queue: QueueKind::Priority,
            anvil: false,
            anvil_period_ms: DurationMs(60_000),
            start_ms: TimeMs::ZERO,
            bookmarks: None,
            streaming_list: None,
            fail_first: 0,
            stale_read_check: false,
            rewatch_on_gone: false,
        }
    }

    /// The reflector settings of one controller: the cluster's, with its own overrides.
    pub fn reflector_of(&self, c: ControllerId) -> ReflectorConfig {
        let mut r = self.reflector;
        if let Some(cc) = self.controllers.get(c.index()) {
            r.bookmarks = cc.bookmarks.unwrap_or(r.bookmarks);
            r.streaming_list = cc.streaming_list.unwrap_or(r.streaming_list);
            // The fake clientset declares `IsWatchListSemanticsUnSupported` (client-go 1.35
            // `testing/fixture.go`), so informers built on it list and watch.
            let fake = self
                .apiservers
                .get(cc.apiserver.index())
                .and_then(|a| a.fake);
            if fake.is_some() {
                r.streaming_list = false;
            }
        }
        r
    }
}

/// Why a configuration cannot run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ConfigError {
    NoKinds,
    NoApiservers,
    TooMany {
        what: &'static str,
        count: usize,
        max: usize,
    },
    UnknownKind {
        index: usize,
    },
    UnknownApiserver {
        index: usize,
    },
    UnknownController {
        index: usize,
    },
    BadCapacity {
        kind: String,
        reason: String,
    },
    BadController {
        controller: String,
        reason: String,
    },
    InputAfterEnd {
        at_ms: TimeMs,
        end_ms: TimeMs,
    },
    EndBeyondLimit {
        end_ms: TimeMs,
        max_time_ms: DurationMs,
    },
    /// `sendInitialEvents=true` is only valid with `allowWatchBookmarks=true`.
    StreamingListWithoutBookmarks {
        controller: String,
    },
}

impl std::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ConfigError::NoKinds => write!(f, "the cluster has no kinds"),
            ConfigError::NoApiservers => write!(f, "a cluster needs at least one apiserver"),
            ConfigError::TooMany { what, count, max } => {
                write!(f, "{count} {what} is more than the limit of {max}")
            }
            ConfigError::UnknownKind { index } => write!(f, "kind #{index} does not exist"),
            ConfigError::UnknownApiserver { index } => {
                write!(f, "apiserver #{index} does not exist")
            }
            ConfigError::UnknownController { index } => {
                write!(f, "controller #{index} does not exist")
            }
            ConfigError::BadCapacity { kind, reason } => {
                write!(f, "watch cache of {kind}: {reason}")
            }
            ConfigError::BadController { controller, reason } => {
                write!(f, "controller {controller}: {reason}")
            }
            ConfigError::InputAfterEnd { at_ms, end_ms } => write!(
                f,
                "an input at {at_ms} comes after the end of the run at {end_ms}"
            ),
            ConfigError::StreamingListWithoutBookmarks { controller } => write!(
                f,
                "controller {controller}: a streaming list (sendInitialEvents=true) needs bookmarks (allowWatchBookmarks=true): turn `bookmarks on` or `streaming-list off`"
            ),
            ConfigError::EndBeyondLimit {
                end_ms,
                max_time_ms,
            } => write!(
                f,
                "the run would last {end_ms}, more than the cap of {max_time_ms}"
            ),
        }
    }
}

impl std::error::Error for ConfigError {}

pub const MAX_KINDS: usize = 32;
pub const MAX_APISERVERS: usize = 8;
pub const MAX_CONTROLLERS: usize = 31;
pub const MAX_WORKERS: u32 = 64;
pub const MAX_TIMELINE: usize = 100_000;

impl Config {
    /// Checks everything `Sim::new` relies on: counts, capacities, every id in range, limits.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.kinds.is_empty() {
            return Err(ConfigError::NoKinds);
        }
        self.check_counts()?;
        if self.apiservers.is_empty() {
            return Err(ConfigError::NoApiservers);
        }
        for k in &self.kinds {
            k.check_capacity()?;
        }
        for c in &self.controllers {
            self.check_controller(c)?;
        }
        for (i, c) in self.controllers.iter().enumerate() {
            let r = self.reflector_of(ControllerId(i as u16));
            if r.streaming_list && !r.bookmarks {
                return Err(ConfigError::StreamingListWithoutBookmarks {
                    controller: c.name.clone(),
                });
            }
        }
        if self.end_ms > TimeMs::ZERO + self.limits.max_time_ms {
            return Err(ConfigError::EndBeyondLimit {
                end_ms: self.end_ms,
                max_time_ms: self.limits.max_time_ms,
            });
        }
        for t in &self.timeline {
            if t.at_ms > self.end_ms {
                return Err(ConfigError::InputAfterEnd {
                    at_ms: t.at_ms,
                    end_ms: self.end_ms,
                });
            }
            self.check_input(&t.input)?;
        }
        Ok(())
    }

    fn check_counts(&self) -> Result<(), ConfigError> {
        let too_many = |what, count, max| {
            if count > max {
                Err(ConfigError::TooMany { what, count, max })
            } else {
                Ok(())
            }
        };
        too_many("kinds", self.kinds.len(), MAX_KINDS)?;
        too_many("apiservers", self.apiservers.len(), MAX_APISERVERS)?;
        too_many("controllers", self.controllers.len(), MAX_CONTROLLERS)?;
        too_many("timeline entries", self.timeline.len(), MAX_TIMELINE)
    }

    fn kind_ok(&self, k: KindId) -> Result<(), ConfigError> {
        if k.index() < self.kinds.len() {
            Ok(())
        } else {
            Err(ConfigError::UnknownKind { index: k.index() })
        }
    }

    fn api_ok(&self, a: ApiserverId) -> Result<(), ConfigError> {
        if a.index() < self.apiservers.len() {
            Ok(())
        } else {
            Err(ConfigError::UnknownApiserver { index: a.index() })
        }
    }

    fn ctl_ok(&self, c: ControllerId) -> Result<(), ConfigError> {
        if c.index() < self.controllers.len() {
            Ok(())
        } else {
            Err(ConfigError::UnknownController { index: c.index() })
        }
    }

    fn check_controller(&self, c: &ControllerConfig) -> Result<(), ConfigError> {
        self.kind_ok(c.primary)?;
        self.api_ok(c.apiserver)?;
        let bad = |reason: &str| {
            Err(ConfigError::BadController {
                controller: c.name.clone(),
                reason: reason.into(),
            })
        };
        if c.workers == 0 || c.workers > MAX_WORKERS {
            return bad(&format!("workers must be 1..={MAX_WORKERS}"));
        }
        if c.anvil && c.anvil_period_ms.is_zero() {
            return bad("the Anvil reconcile period must be positive");
        }
        for w in &c.watches {
            self.kind_ok(w.kind)?;
        }
        match c.behaviour {
            Behaviour::Children { child, .. }
            | Behaviour::StaleDelete { child, .. }
            | Behaviour::WipeOnZero { child, .. }
            | Behaviour::TwoWrites { child, .. } => self.kind_ok(child),
            Behaviour::Mirror { target } => {
                self.kind_ok(target)?;
                if target == c.primary {
                    return bad("a mirror's target kind must differ from its primary kind");
                }
                Ok(())
            }
            Behaviour::Program => match &c.program {
                None => bad("a controller with its own logic needs a program"),
                Some(p) => {
                    for k in p.kinds() {
                        self.kind_ok(k)?;
                    }
                    if p.bindings.len() > crate::program::MAX_BINDINGS * 2
                        || p.memory.len() > crate::program::MAX_MEMORY
                    {
                        return bad("the program has too many names");
                    }
                    Ok(())
                }
            },
        }
    }

    /// Every id an input names is in range.
    fn check_input(&self, input: &Input) -> Result<(), ConfigError> {
        match input {
            Input::Write(WriteInput::Create { kind, .. })
            | Input::Write(WriteInput::Update { kind, .. })
            | Input::Write(WriteInput::UpdateStatus { kind, .. })
            | Input::Write(WriteInput::Delete { kind, .. }) => self.kind_ok(*kind),
            Input::Write(WriteInput::Edits { kind, edits, .. }) => {
                self.kind_ok(*kind)?;
                for e in edits {
                    if let Edit::Owner { kind, .. } = e {
                        self.kind_ok(*kind)?;
                    }
                }
                Ok(())
            }
            Input::Write(WriteInput::DeleteWith { kind, .. }) => self.kind_ok(*kind),
            Input::Fault(FaultInput::Hold {
                controller, kind, ..
            }) => self.ctl_ok(*controller).and(self.kind_ok(*kind)),
            Input::Fault(FaultInput::Disconnect { controller, .. })
            | Input::Fault(FaultInput::Delay { controller, .. })
            | Input::Fault(FaultInput::Crash { controller, .. }) => self.ctl_ok(*controller),
            Input::Fault(FaultInput::Restart {
                controller,
                apiserver,
            }) => {
                self.ctl_ok(*controller)?;
                apiserver.map_or(Ok(()), |a| self.api_ok(a))
            }
            Input::Fault(FaultInput::Failover {
                controller,
                apiserver,
            }) => self.ctl_ok(*controller).and(self.api_ok(*apiserver)),
            Input::Fault(FaultInput::PauseCache { apiserver })
            | Input::Fault(FaultInput::ResumeCache { apiserver })
            | Input::Fault(FaultInput::RestartApiserver { apiserver, .. }) => {
                self.api_ok(*apiserver)
            }
            Input::Fault(FaultInput::ReinitCache {
                apiserver, kind, ..
            })
            | Input::Probe {
                apiserver, kind, ..
            } => self.api_ok(*apiserver).and(self.kind_ok(*kind)),
            Input::Say { .. } => Ok(()),
        }
    }
}

impl KindConfig {
    /// A fixed capacity, or a dynamic range, within `1..=DYNAMIC_CAPACITY_MAX`.
    fn check_capacity(&self) -> Result<(), ConfigError> {
        let reason = match self.cache {
            CacheMode::Fixed { capacity } if capacity == 0 || capacity > DYNAMIC_CAPACITY_MAX => {
                format!("capacity {capacity} is outside 1..={DYNAMIC_CAPACITY_MAX}")
            }
            CacheMode::Dynamic {
                capacity_min,
                capacity_max,
            } if capacity_min == 0
                || capacity_min > capacity_max
                || capacity_max > DYNAMIC_CAPACITY_MAX =>
            {
                format!(
                    "dynamic capacity {capacity_min}..{capacity_max} must satisfy 1 <= min <= max <= {DYNAMIC_CAPACITY_MAX}"
                )
            }
            _ => return Ok(()),
        };
        Err(ConfigError::BadCapacity {
            kind: self.name.clone(),
            reason,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one_controller() -> Config {
        let mut c = Config::new(&["Pod", "Copy"]);
        let mirror = Behaviour::Mirror { target: KindId(1) };
        c.controllers
            .push(Config::controller("c", KindId(0), mirror));
        c
    }

    #[test]
    fn a_valid_configuration_passes() {
        assert_eq!(one_controller().validate(), Ok(()));
    }

    #[test]
    fn capacities_out_of_range_are_refused() {
        let mut c = one_controller();
        c.kinds[0].cache = CacheMode::Fixed { capacity: 0 };
        assert!(matches!(c.validate(), Err(ConfigError::BadCapacity { .. })));
        c.kinds[0].cache = CacheMode::Dynamic {
            capacity_min: 10,
            capacity_max: 5,
        };
        assert!(matches!(c.validate(), Err(ConfigError::BadCapacity { .. })));
    }

    #[test]
    fn controllers_are_checked_in_order_of_their_rules() {
        let mut c = one_controller();
        c.controllers[0].behaviour = Behaviour::Mirror { target: KindId(0) };
        assert!(
            matches!(c.validate(), Err(ConfigError::BadController { reason, .. }) if reason.contains("mirror"))
        );
        c.controllers[0].primary = KindId(7);
        assert_eq!(c.validate(), Err(ConfigError::UnknownKind { index: 7 }));
    }

    #[test]
    fn every_id_an_input_names_is_in_range() {
        let mut c = one_controller();
        let at = |input| TimedInput {
            at_ms: TimeMs(0),
            input,
        };
        c.timeline = vec![at(Input::Fault(FaultInput::PauseCache {
            apiserver: ApiserverId(3),
        }))];
        assert_eq!(
            c.validate(),
            Err(ConfigError::UnknownApiserver { index: 3 })
        );
        c.timeline = vec![at(Input::Fault(FaultInput::Failover {
            controller: ControllerId(0),
            apiserver: ApiserverId(2),
        }))];
        assert_eq!(
            c.validate(),
            Err(ConfigError::UnknownApiserver { index: 2 })
        );
        c.timeline = vec![at(Input::Fault(FaultInput::Crash {
            controller: ControllerId(5),
            after_writes: None,
            restart_after_ms: None,
        }))];
        assert_eq!(
            c.validate(),
            Err(ConfigError::UnknownController { index: 5 })
        );
    }
}
