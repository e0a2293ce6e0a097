//! The output of a run: every event with its time, actor, cause and the state change it made.
//! Events are small and `Copy`; strings live once in `Names`.

use crate::model::{
    ApiserverId, ControllerId, DurationMs, EventType, KindId, NameId, Rv, TimeMs, WatcherId,
};

/// Index of an event in its trace.
pub type EventId = u32;
pub const NO_CAUSE: EventId = u32::MAX;

/// Who did something.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Actor {
    /// A client writing from the timeline (kubectl, another team's tooling).
    User,
    Etcd,
    Apiserver(ApiserverId),
    Watcher(WatcherId),
    Controller(ControllerId),
    Narrator,
    GarbageCollector,
    /// A client the scenario drives with raw requests (`probe`).
    Probe,
}

/// The visible state of a reflector: the seed's three states, refined with the backoff wait.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum WatcherState {
    /// Needs a list (never listed, or after 410).
    Empty,
    /// A list request is in flight.
    Listing,
    /// Listed; the watch request is in flight.
    InitListed,
    Watching,
    /// Waiting out a backoff before relisting.
    BackoffRelist,
    /// Waiting out a backoff before re-watching (429, connection refused).
    BackoffRewatch,
    /// The controller is down.
    Stopped,
}

impl WatcherState {
    pub fn as_str(self) -> &'static str {
        match self {
            WatcherState::Empty => "empty",
            WatcherState::Listing => "listing",
            WatcherState::InitListed => "listed",
            WatcherState::Watching => "watching",
            WatcherState::BackoffRelist => "backoff-relist",
            WatcherState::BackoffRewatch => "backoff-rewatch",
            WatcherState::Stopped => "stopped",
        }
    }
}

/// The `resourceVersion` parameter of a list.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum ListRv {
    /// `""`: most recent, consistent.
    Consistent,
    /// `"0"`: any, from the cache.
    Any,
    /// `"N"`: not older than N.
    NotOlderThan(Rv),
    /// `"N"` with `resourceVersionMatch=Exact`: exactly N.
    Exact(Rv),
}

impl ListRv {
    pub fn param(self) -> String {
        match self {
            ListRv::Consistent => "\"\"".into(),
            ListRv::Any => "\"0\"".into(),
            ListRv::NotOlderThan(rv) => format!("\"{rv}\""),
            ListRv::Exact(rv) => format!("\"{rv}\" (Exact)"),
        }
    }
}

/// Why a watch stream ended.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum WatchEnd {
    /// The server-side timeout the client asked for.
    Timeout,
    /// The network connection broke.
    Disconnected,
    /// The server closed it because the client was too slow to drain it.
    TooSlow,
    /// The apiserver or its cache restarted.
    ServerClosed,
}

#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum WriteOp {
    Create,
    Update,
    UpdateStatus,
    /// A merge patch of the object (no resourceVersion).
    Patch,
    /// A merge patch of `/status`.
    PatchStatus,
    /// An update that puts a finalizer on and changes nothing else.
    AddFinalizer,
    /// An update that takes a finalizer off (others remain, or the object is not deleting).
    RemoveFinalizer,
    /// Deletion requested with finalizers left: the deletion timestamp is set.
    MarkDeleting,
    Delete,
    /// The last finalizer of an object marked for deletion came off: the object is gone.
    RemoveLastFinalizer,
    /// An update that sets the controller reference (`controllerutil.SetControllerReference`).
    Adopt,
    /// An update that removes it (`controllerutil.RemoveControllerReference`).
    Release,
}

impl WriteOp {
    pub fn as_str(self) -> &'static str {
        match self {
            WriteOp::Create => "create",
            WriteOp::Update => "update",
            WriteOp::UpdateStatus => "update status",
            WriteOp::Patch => "patch",
            WriteOp::PatchStatus => "patch status",
            WriteOp::AddFinalizer => "add finalizer",
            WriteOp::RemoveFinalizer => "remove finalizer",
            WriteOp::MarkDeleting => "mark deleting",
            WriteOp::Delete => "delete",
            WriteOp::RemoveLastFinalizer => "remove last finalizer and delete",
            WriteOp::Adopt => "adopt",
            WriteOp::Release => "release",
        }
    }

    /// What `expect ... creates|updates|status-updates|deletes` counts it as: a patch or a
    /// finalizer step is an update (of the object), a patch of `/status` a status update (a
    /// request to the status subresource, which the apiserver's audit log also tells apart by
    /// its `objectRef.subresource`), the last finalizer's removal a delete.
    pub fn counted_as(self) -> WriteOp {
        match self {
            WriteOp::Patch
            | WriteOp::AddFinalizer
            | WriteOp::RemoveFinalizer
            | WriteOp::Adopt
            | WriteOp::Release => WriteOp::Update,
            WriteOp::PatchStatus => WriteOp::UpdateStatus,
            WriteOp::RemoveLastFinalizer => WriteOp::Delete,
            op => op,
        }
    }

    /// The object is gone from etcd after it.
    pub fn deletes(self) -> bool {
        matches!(self, WriteOp::Delete | WriteOp::RemoveLastFinalizer)
    }
}

/// An API error a client can get.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum ApiError {
    /// 409: the update's RV is stale.
    Conflict,
    /// 409: create of an existing name.
    AlreadyExists,
    NotFound,
    /// 409: a delete's UID precondition does not match.
    UidMismatch,
    /// 410 from the watch cache: `too old resource version: r (oldest-1)`.
    TooOld {
        requested: Rv,
        oldest_minus_one: IssuedRv,
    },
    /// 410 from etcd for a watch.
    WatchCompacted,
    /// 410: the continue token's RV was compacted.
    ContinueExpired,
    /// 410 from etcd for an Exact list below the compacted revision.
    ListCompacted,
    /// 504: a NotOlderThan list waited 3 s for the cache.
    TooLargeRv {
        requested: Rv,
        current: IssuedRv,
    },
    /// 429 while the cache is not ready.
    TooManyRequests,
    /// The connection was refused.
    ConnectionRefused,
    /// The reconcile itself failed (its error rate).
    ReconcileError,
    /// 422: a create whose name is longer than Kubernetes allows (253 characters).
    NameTooLong,
    /// 422: a create whose name, `generateName` or namespace breaks its DNS rule
    /// (`objectmeta.go` `ValidateObjectMeta`, `crate::validation`).
    InvalidName {
        field: crate::validation::NameField,
        rule: crate::validation::NameRule,
    },
    /// 422: a write whose labels hold a value `IsValidLabelValue` refuses (`ValidateLabels`),
    /// one a reconcile computed (the script's own were checked when it was read).
    InvalidLabelValue,
    /// 422: a streaming list to a server whose `WatchList` gate is off.
    WatchListForbidden,
    /// 422: a finalizer added to an object being deleted
    /// (`apimachinery/pkg/api/validation/objectmeta.go` `ValidateObjectMetaUpdate`).
    FinalizerWhileDeleting,
    /// 422: more labels, annotations, fields, finalizers and owners than `object::MAX_ENTRIES`.
    TooManyEntries,
    /// KEP-5647 (kube-controller-manager 1.36 `pkg/controller/util/consistency`): the informer
    /// has not yet seen the RV the controller's last write for this key got back.
    StaleRead {
        read: IssuedRv,
        written: Rv,
    },
}

/// A resource version the run's etcd issued (its revision then, or 0), in 4 bytes, so an
/// `ApiError` that names two RVs is 16 bytes and the events that carry one stay within their
/// family's 24 (`an_event_is_at_most_48_bytes`). The client's RV beside it (`requested`,
/// `written`) keeps all 64 bits: a probe can ask for any 19-digit number.
///
/// Limit: etcd's revision starts at 1 and rises by one a write or a compaction tick, so it
/// passes `u32::MAX` only after 4 294 967 294 of them (a trace of that many events would be
/// 200 GB, and `EventId` is a `u32`); past that, `new` saturates at `u32::MAX` and the message
/// names 4294967295.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug, Default)]
pub struct IssuedRv(u32);

impl IssuedRv {
    /// `rv`, saturated at `u32::MAX` (see the limit above).
    pub fn new(rv: Rv) -> IssuedRv {
        IssuedRv(u32::try_from(rv).unwrap_or(u32::MAX))
    }
    pub fn get(self) -> Rv {
        Rv::from(self.0)
    }
}

impl std::fmt::Display for IssuedRv {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

impl ApiError {
    pub fn code(self) -> u16 {
        match self {
            ApiError::Conflict | ApiError::AlreadyExists | ApiError::UidMismatch => 409,
            ApiError::NotFound => 404,
            ApiError::TooOld { .. }
            | ApiError::WatchCompacted
            | ApiError::ContinueExpired
            | ApiError::ListCompacted => 410,
            ApiError::TooLargeRv { .. } => 504,
            ApiError::TooManyRequests => 429,
            ApiError::NameTooLong
            | ApiError::InvalidName { .. }
            | ApiError::InvalidLabelValue
            | ApiError::WatchListForbidden
            | ApiError::FinalizerWhileDeleting
            | ApiError::TooManyEntries => 422,
            ApiError::ConnectionRefused | ApiError::ReconcileError | ApiError::StaleRead { .. } => {
                0
            }
        }
    }
    /// The status and message as a client logs them; a request that got no answer (a refused
    /// connection) has no HTTP status, so none is printed (it read "0 connection refused").
    pub fn status_and_message(self) -> String {
        match self.code() {
            0 => self.message(),
            code => format!("{code} {}", self.message()),
        }
    }
    /// The message text the apiserver sends.
    pub fn message(self) -> String {
        match self {
            ApiError::Conflict => "the object has been modified; please apply your changes to the latest version and try again".into(),
            ApiError::AlreadyExists => "already exists".into(),
            ApiError::NotFound => "not found".into(),
            ApiError::UidMismatch => "Precondition failed: UID in precondition does not match the UID of the object".into(),
            ApiError::TooOld { requested, oldest_minus_one } => {
                format!("too old resource version: {requested} ({oldest_minus_one})")
            }
            ApiError::WatchCompacted => {
                "The resourceVersion for the provided watch is too old.".into()
            }
            ApiError::ListCompacted => {
                "The resourceVersion for the provided list is too old.".into()
            }
            ApiError::ContinueExpired => "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.".into(),
            // `storage.NewTooLargeResourceVersionError` builds it with `errors.NewTimeoutError`,
            // which prefixes "Timeout: ".
            ApiError::TooLargeRv { requested, current } => {
                format!("Timeout: Too large resource version: {requested}, current: {current}")
            }
            // `cacher.go`: `errors.NewTooManyRequests("storage is (re)initializing", 1)`.
            ApiError::TooManyRequests => "storage is (re)initializing".into(),
            ApiError::ConnectionRefused => "connection refused".into(),
            ApiError::ReconcileError => "reconcile returned an error".into(),
            ApiError::NameTooLong => {
                "metadata.name: Invalid value: must be no more than 253 characters".into()
            }
            ApiError::InvalidName { field, rule } => {
                format!("{}: Invalid value: {}", field.as_str(), rule.as_str())
            }
            ApiError::InvalidLabelValue => "metadata.labels: Invalid value: a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character".into(),
            ApiError::FinalizerWhileDeleting => "metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted".into(),
            ApiError::TooManyEntries => format!("metadata: Too many: more than {} labels, annotations, fields, finalizers and owner references", crate::object::MAX_ENTRIES),
            // `ValidateListOptions` (apimachinery `metainternalversion/validation`).
            ApiError::WatchListForbidden => "ListOptions.meta.k8s.io \"\" is invalid: sendInitialEvents: Forbidden: sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled".into(),
            // `consistency.go` `EnsureReady` (without its "for group resource ..." suffix).
            ApiError::StaleRead { read, written } => {
                format!("read version: {read} is not as new as written version: {written}")
            }
        }
    }
}

/// How a reconcile ended.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum ReconcileResult {
    Done,
    RequeueAfter(DurationMs),
    Error(ApiError),
    /// The controller crashed mid-reconcile.
    Crashed,
}

/// What the informer delivered to the handlers.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Delta {
    Added,
    Updated,
    Deleted,
    /// A delete found by a relist's diff: the last known state, `DeletedFinalStateUnknown`.
    DeletedFinalStateUnknown,
    /// Resync: the same object again.
    Sync,
}

/// An informer's delivery: its `Delta` and whether the object was marked for deletion, in one
/// byte (two would make an informer's event 32 bytes, past its family's 24:
/// `an_event_is_at_most_48_bytes`).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Delivery(u8);

impl Delivery {
    pub fn new(delta: Delta, deleting: bool) -> Delivery {
        Delivery((delta as u8) << 1 | u8::from(deleting))
    }
    pub fn delta(self) -> Delta {
        // Only `new` makes one, from a `Delta`: the index is one of `ALL`'s.
        Delta::ALL[usize::from(self.0 >> 1)]
    }
    /// The object delivered has its deletion timestamp set.
    pub fn deleting(self) -> bool {
        self.0 & 1 == 1
    }
}

impl std::fmt::Debug for Delivery {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Delivery")
            .field("delta", &self.delta())
            .field("deleting", &self.deleting())
            .finish()
    }
}

impl Delta {
    /// Every delta, in declaration order: `ALL[d as usize] == d`.
    pub const ALL: [Delta; 5] = [
        Delta::Added,
        Delta::Updated,
        Delta::Deleted,
        Delta::DeletedFinalStateUnknown,
        Delta::Sync,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Delta::Added => "add",
            Delta::Updated => "update",
            Delta::Deleted => "delete",
            Delta::DeletedFinalStateUnknown => "delete (DeletedFinalStateUnknown)",
            Delta::Sync => "sync",
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum QueueAdd {
    Added,
    /// The key was already waiting: collapsed.
    AlreadyQueued,
    /// The key is being reconciled: marked dirty, it runs once more afterwards.
    MarkedDirty,
}

/// Every state change of a run, by the part of the system it is about: the one routing that
/// the prose (`describe`) and the JSON export both follow, each family matched whole, so a new
/// event kind is placed once and a renderer that misses it does not compile.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum EventKind {
    Store(StoreEvent),
    Reflector(ReflectorEvent),
    Controller(ControllerEvent),
    Fault(FaultEvent),
    Probe(ProbeEvent),
    Say(SayEvent),
}

/// Events of etcd and the watch caches.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum StoreEvent {
    Write {
        op: WriteOp,
        kind: KindId,
        name: NameId,
        rv: Rv,
        spec: i64,
        status: i64,
    },
    WriteFailed {
        op: WriteOp,
        kind: KindId,
        name: NameId,
        error: ApiError,
    },
    /// What a committed object holds beyond `spec N`/`status N` (labels, annotations, named
    /// fields, finalizers, owner references), said right after its write; only objects that
    /// hold any, so the first scripts' traces are as they were. `body` is the object's body,
    /// kept beside the events (`Trace::body`): its words are made when shown
    /// (`Labels::fields`), not on every write.
    ObjectFields {
        kind: KindId,
        name: NameId,
        rv: Rv,
        body: BodyRef,
    },
    /// The garbage collector's Warning `OwnerRefInvalidNamespace` on a dependent whose owner
    /// reference names an owner of a namespaced kind seen in another namespace
    /// (`garbagecollector/graph_builder.go` `reportInvalidNamespaceOwnerRef`).
    OwnerRefInvalid {
        kind: KindId,
        name: NameId,
        owner_kind: KindId,
        owner_name: NameId,
    },
    /// An update that changed nothing: no RV, no event.
    NoOpWrite {
        kind: KindId,
        name: NameId,
    },
    CacheAdd {
        apiserver: ApiserverId,
        kind: KindId,
        rv: Rv,
        name: NameId,
        evicted: u32,
        capacity: u32,
    },
    CacheReset {
        apiserver: ApiserverId,
        kind: KindId,
        list_rv: Rv,
        ready: bool,
    },
    Compacted {
        rev: Rv,
    },
}

/// Events of lists, watches and reflectors.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum ReflectorEvent {
    /// `relist`: not the informer's first list since it started.
    ListRequest {
        watcher: WatcherId,
        rv: ListRv,
        relist: bool,
    },
    /// One list answer; `more`: a page with a continue token, the rest still to fetch.
    ListResult {
        watcher: WatcherId,
        list_rv: Rv,
        items: u32,
        from_etcd: bool,
        more: bool,
    },
    /// The next page of a paged list, at the first page's RV.
    ListContinue {
        watcher: WatcherId,
        list_rv: Rv,
    },
    ListFailed {
        watcher: WatcherId,
        error: ApiError,
    },
    WatchRequest {
        watcher: WatcherId,
        from_rv: Rv,
        timeout_ms: DurationMs,
    },
    /// A streaming list: one watch with `sendInitialEvents=true` in place of a list.
    WatchListRequest {
        watcher: WatcherId,
        rv: ListRv,
        relist: bool,
    },
    /// The bookmark annotated `k8s.io/initial-events-end`: the initial events are applied now.
    InitialEventsEnd {
        watcher: WatcherId,
        rv: Rv,
        items: u32,
    },
    /// client-go's `initialEventsEndBookmarkTicker` (every 10 s while a streaming list waits for
    /// its end): "Warning: event bookmark expired". `received`: some event came, `since_ms`
    /// ago; else nothing came in the `since_ms` since the request.
    BookmarkExpired {
        watcher: WatcherId,
        received: bool,
        since_ms: DurationMs,
    },
    WatchOpened {
        watcher: WatcherId,
        from_rv: Rv,
        replayed: u32,
    },
    WatchFailed {
        watcher: WatcherId,
        error: ApiError,
    },
    WatchEvent {
        watcher: WatcherId,
        event: EventType,
        name: NameId,
        rv: Rv,
        spec: i64,
    },
    Bookmark {
        watcher: WatcherId,
        rv: Rv,
    },
    WatchEnded {
        watcher: WatcherId,
        reason: WatchEnd,
    },
    State {
        watcher: WatcherId,
        state: WatcherState,
        last_rv: Rv,
    },
    Backoff {
        watcher: WatcherId,
        delay_ms: DurationMs,
    },
}

/// Events of informers, queues, reconciles and what a reconcile read.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum ControllerEvent {
    Informer {
        watcher: WatcherId,
        delivery: Delivery,
        name: NameId,
        rv: Rv,
        spec: i64,
    },
    Enqueue {
        controller: ControllerId,
        key: NameId,
        outcome: QueueAdd,
        delay_ms: DurationMs,
    },
    /// `spec` is the primary object's spec as the reconcile read it when `found` (else 0: a
    /// flag, not an `Option<i64>`, which would make the event 32 bytes); `writes`: how many
    /// writes it decided to make (its steps, shown while it runs).
    ReconcileStart {
        controller: ControllerId,
        key: NameId,
        worker: u32,
        found: bool,
        spec: i64,
        writes: u32,
    },
    /// `requeued`: the key was added while it ran (client-go's dirty set), so the queue took
    /// it back when the reconcile ended.
    ReconcileEnd {
        controller: ControllerId,
        key: NameId,
        result: ReconcileResult,
        requeued: bool,
    },
    /// What a reconcile (of the user's own logic) read when it started: `rv` as it found it,
    /// `truth_rv` as etcd had it then, so a stale read shows.
    ReconcileRead {
        controller: ControllerId,
        kind: KindId,
        name: NameId,
        /// 0: absent (RVs start at 1, so no object has 0): keeps events small.
        rv: Rv,
        /// 0: absent. etcd issued it, so 4 bytes hold it (see `IssuedRv`'s limit): with a
        /// second `u64` the event would be 32 bytes.
        truth_rv: IssuedRv,
        live: bool,
    },
}

/// Events of faults and their ends.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum FaultEvent {
    Crash {
        controller: ControllerId,
    },
    Restart {
        controller: ControllerId,
        apiserver: ApiserverId,
    },
    Disconnect {
        controller: ControllerId,
        until_ms: TimeMs,
    },
    /// The load balancer moved the controller's connections to another apiserver.
    Failover {
        controller: ControllerId,
        apiserver: ApiserverId,
    },
    Reconnect {
        controller: ControllerId,
    },
    LinkDelay {
        controller: ControllerId,
        delay_ms: DurationMs,
    },
    /// The controller's notifications are held until a later state of `name` arrives.
    HoldArmed {
        controller: ControllerId,
        kind: KindId,
        name: NameId,
    },
    /// The held notifications are delivered; `superseded`: a later state of the object came.
    HoldReleased {
        controller: ControllerId,
        held: u32,
        superseded: bool,
    },
    CachePaused {
        apiserver: ApiserverId,
        paused: bool,
    },
    ApiserverRestart {
        apiserver: ApiserverId,
        down_ms: DurationMs,
    },
}

/// Events of probes of an apiserver.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum ProbeEvent {
    /// A probe's raw request reached an apiserver.
    ProbeRequest {
        probe: u32,
        apiserver: ApiserverId,
        kind: KindId,
        ask: ProbeAsk,
    },
    /// A probe's list answered.
    ProbeListed {
        probe: u32,
        items: u32,
        list_rv: Rv,
        from_etcd: bool,
    },
    /// A probe's watch opened.
    ProbeWatchOpened {
        probe: u32,
        from_rv: Rv,
        replayed: u32,
    },
    ProbeFailed {
        probe: u32,
        error: ApiError,
    },
}

/// A probe's request and a list's selectors, as its event holds them: flat, in 16 bytes (a
/// `config::ProbeRequest` and an `Option<NameId>` take 24, and the event would be 32, past its
/// family's 24: `an_event_is_at_most_48_bytes`).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct ProbeAsk {
    /// A list's `N`, a watch's start; 0 where the shape has none.
    rv: Rv,
    /// The selectors' text in the names table; `NO_SELECTOR`: none.
    selector: u32,
    shape: ProbeShape,
}

/// `u32::MAX` is no name's id: the names table would need 4 294 967 295 strings first (over
/// 100 GB; a wasm32 build cannot address a quarter of that). `ProbeAsk::new` checks it in debug
/// builds.
const NO_SELECTOR: u32 = u32::MAX;

#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
enum ProbeShape {
    ListConsistent,
    ListAny,
    ListNotOlderThan,
    ListExact,
    Watch,
    WatchMostRecent,
}

impl ProbeAsk {
    pub fn new(request: crate::config::ProbeRequest, selector: Option<NameId>) -> ProbeAsk {
        use crate::config::ProbeRequest as R;
        let (shape, rv) = match request {
            R::List { rv } => match rv {
                ListRv::Consistent => (ProbeShape::ListConsistent, 0),
                ListRv::Any => (ProbeShape::ListAny, 0),
                ListRv::NotOlderThan(n) => (ProbeShape::ListNotOlderThan, n),
                ListRv::Exact(n) => (ProbeShape::ListExact, n),
            },
            R::Watch { from } => (ProbeShape::Watch, from),
            R::WatchMostRecent => (ProbeShape::WatchMostRecent, 0),
        };
        debug_assert!(selector.is_none_or(|s| s.0 != NO_SELECTOR));
        ProbeAsk {
            rv,
            selector: selector.map_or(NO_SELECTOR, |s| s.0),
            shape,
        }
    }
    pub fn request(self) -> crate::config::ProbeRequest {
        use crate::config::ProbeRequest as R;
        let list = |rv| R::List { rv };
        match self.shape {
            ProbeShape::ListConsistent => list(ListRv::Consistent),
            ProbeShape::ListAny => list(ListRv::Any),
            ProbeShape::ListNotOlderThan => list(ListRv::NotOlderThan(self.rv)),
            ProbeShape::ListExact => list(ListRv::Exact(self.rv)),
            ProbeShape::Watch => R::Watch { from: self.rv },
            ProbeShape::WatchMostRecent => R::WatchMostRecent,
        }
    }
    /// A list's selectors as the script writes them (`selector app=web`), in the names table.
    pub fn selector(self) -> Option<NameId> {
        (self.selector != NO_SELECTOR).then_some(NameId(self.selector))
    }
}

/// Narration.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct SayEvent {
    pub text: NameId,
    /// Playback pauses here until the reader continues (`say "..." and wait`).
    pub wait: bool,
}

impl EventKind {
    /// A list, or a streaming list, that is not the informer's first since it started.
    pub fn is_relist(&self) -> bool {
        matches!(
            self,
            EventKind::Reflector(
                ReflectorEvent::ListRequest { relist: true, .. }
                    | ReflectorEvent::WatchListRequest { relist: true, .. }
            )
        )
    }

    /// A 410 Gone: to a watch, or to a paged list's continue token.
    pub fn gone(&self) -> Option<(WatcherId, ApiError)> {
        match *self {
            EventKind::Reflector(
                ReflectorEvent::WatchFailed { watcher, error }
                | ReflectorEvent::ListFailed { watcher, error },
            ) if error.code() == 410 => Some((watcher, error)),
            _ => None,
        }
    }

    /// The reflector an event happened at, if any: every reflector event, and an informer's
    /// delivery to its handlers.
    pub fn watcher(&self) -> Option<WatcherId> {
        match *self {
            EventKind::Reflector(r) => Some(r.watcher()),
            EventKind::Controller(ControllerEvent::Informer { watcher, .. }) => Some(watcher),
            _ => None,
        }
    }
}

impl ReflectorEvent {
    /// The reflector it happened at.
    pub fn watcher(&self) -> WatcherId {
        use ReflectorEvent::*;
        match *self {
            ListRequest { watcher, .. }
            | ListResult { watcher, .. }
            | ListContinue { watcher, .. }
            | ListFailed { watcher, .. }
            | WatchRequest { watcher, .. }
            | WatchListRequest { watcher, .. }
            | InitialEventsEnd { watcher, .. }
            | BookmarkExpired { watcher, .. }
            | WatchOpened { watcher, .. }
            | WatchFailed { watcher, .. }
            | WatchEvent { watcher, .. }
            | Bookmark { watcher, .. }
            | WatchEnded { watcher, .. }
            | State { watcher, .. }
            | Backoff { watcher, .. } => watcher,
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct Event {
    pub time_ms: TimeMs,
    pub actor: Actor,
    pub cause: EventId,
    pub kind: EventKind,
}

impl Event {
    pub fn cause(&self) -> Option<EventId> {
        (self.cause != NO_CAUSE).then_some(self.cause)
    }
}

mod store;
mod text;
pub use store::*;
pub use text::*;

#[cfg(test)]
mod size_tests {
    use super::*;
    use std::mem::size_of;

    /// The trace is most of a run's memory (`cargo xtask bench` reports bytes per event), so
    /// nesting the families must not make an event bigger than the flat enum's 48 bytes. It
    /// holds because a write (`StoreEvent`, 32 bytes) keeps its tag byte first with values to
    /// spare, where `EventKind` puts its family tag, and every other family fits in the 24
    /// bytes after it: hence `IssuedRv`, `Delivery`, `ProbeAsk` and `ReconcileStart`'s flag.
    #[test]
    fn an_event_is_at_most_48_bytes() {
        assert!(size_of::<Event>() <= 48, "{}", size_of::<Event>());
        assert!(size_of::<EventKind>() <= 32, "{}", size_of::<EventKind>());
        assert!(size_of::<StoreEvent>() <= 32);
        let families = [
            ("reflector", size_of::<ReflectorEvent>()),
            ("controller", size_of::<ControllerEvent>()),
            ("fault", size_of::<FaultEvent>()),
            ("probe", size_of::<ProbeEvent>()),
            ("say", size_of::<SayEvent>()),
        ];
        for (family, bytes) in families {
            assert!(bytes <= 24, "{family} events are {bytes} bytes");
        }
        // The error every failed request's event carries.
        assert!(size_of::<ApiError>() <= 16);
    }

    #[test]
    fn a_delivery_gives_back_its_delta_and_deleting() {
        for (i, delta) in Delta::ALL.into_iter().enumerate() {
            assert_eq!(delta as usize, i);
            for deleting in [false, true] {
                let d = Delivery::new(delta, deleting);
                assert_eq!((d.delta(), d.deleting()), (delta, deleting));
            }
        }
    }

    #[test]
    fn a_probe_ask_gives_back_its_request_and_selector() {
        use crate::config::ProbeRequest as R;
        let requests = [
            R::List {
                rv: ListRv::Consistent,
            },
            R::List { rv: ListRv::Any },
            R::List {
                rv: ListRv::NotOlderThan(u64::MAX),
            },
            R::List {
                rv: ListRv::Exact(7),
            },
            R::Watch {
                from: 9_999_999_999_999_999_999,
            },
            R::WatchMostRecent,
        ];
        for request in requests {
            for selector in [None, Some(NameId(0)), Some(NameId(u32::MAX - 1))] {
                let ask = ProbeAsk::new(request, selector);
                assert_eq!((ask.request(), ask.selector()), (request, selector));
            }
        }
    }

    /// Past `u32::MAX` an issued RV saturates, and says so: it never wraps to a small number.
    #[test]
    fn an_issued_rv_saturates_rather_than_wraps() {
        assert_eq!(IssuedRv::new(4_294_967_295).get(), 4_294_967_295);
        assert_eq!(IssuedRv::new(4_294_967_296).get(), 4_294_967_295);
        assert_eq!(IssuedRv::new(7).to_string(), "7");
    }
}

#[cfg(test)]
mod tests {
    use super::store::CHUNK;
    use super::*;

    fn event(i: usize) -> Event {
        Event {
            time_ms: TimeMs(i as u64),
            actor: Actor::User,
            cause: i as EventId,
            kind: EventKind::Fault(FaultEvent::Crash {
                controller: ControllerId(0),
            }),
        }
    }

    /// A trace reads like the `Vec` of its events, across chunk boundaries, after clones too.
    #[test]
    fn a_trace_reads_like_a_vec() {
        for n in [0, 1, CHUNK - 1, CHUNK, CHUNK + 1, 3 * CHUNK + 7] {
            let v: Vec<Event> = (0..n).map(event).collect();
            let mut t = Trace::new();
            v.iter().for_each(|&e| t.push(e));
            assert_eq!(t.len(), n);
            assert!(t.iter().eq(v.iter()));
            assert!(t.iter().rev().eq(v.iter().rev()));
            assert_eq!(t.last(), v.last());
            assert_eq!(t.get(n), None);
            for (a, b) in [(0, n), (1.min(n), n), (n / 3, n - n / 4), (n, n)] {
                assert!(t.range(a..b).eq(v[a..b].iter()), "{a}..{b} of {n}");
                assert!(t.range(a..b).rev().eq(v[a..b].iter().rev()));
                assert_eq!(t.range(a..b).len(), b - a);
                let mut it = t.range(a..b);
                let mut w = v[a..b].iter();
                while let Some(x) = it.next() {
                    assert_eq!(Some(x), w.next());
                    assert_eq!(it.next_back(), w.next_back());
                }
            }
            for k in [0, n / 2, n] {
                let p = t.partition_point(|e| (e.time_ms.ms() as usize) < k);
                assert_eq!(p, v.partition_point(|e| (e.time_ms.ms() as usize) < k));
            }
            // Amending a clone's event leaves the original as it was.
            let mut c = t.clone();
            if let Some(e) = c.get_mut(n / 2) {
                e.cause = NO_CAUSE;
            }
            assert!(t.iter().eq(v.iter()));
            assert_eq!(c.len(), n);
            if n > 0 {
                assert_eq!(c[n / 2].cause, NO_CAUSE);
                assert_ne!(c, t);
            }
            c.push(event(n));
            assert_eq!(c.len(), n + 1);
            assert_eq!(t.len(), n);
        }
    }
}
