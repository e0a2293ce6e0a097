//! etcd: the one store every apiserver shares, its owner indexes, and the rules of a write.

use super::*;
use crate::store::KindNameMap;
use std::collections::vec_deque;

/// How many objects the run's selector lists looked at: a count of work, not of state, so it
/// hashes and compares as nothing (a fork's state hash is its state's); atomic only so a `Sim`
/// can be shared between the explorer's threads (each fork counts alone).
#[derive(Debug, Default)]
pub(crate) struct ObjectsRead(std::sync::atomic::AtomicU64);

impl ObjectsRead {
    pub(crate) fn add(&self, n: usize) {
        use std::sync::atomic::Ordering::Relaxed;
        self.0.fetch_add(n as u64, Relaxed);
    }
    pub(crate) fn get(&self) -> u64 {
        self.0.load(std::sync::atomic::Ordering::Relaxed)
    }
}

impl Clone for ObjectsRead {
    fn clone(&self) -> Self {
        ObjectsRead(self.get().into())
    }
}

impl std::hash::Hash for ObjectsRead {
    fn hash<H: std::hash::Hasher>(&self, _: &mut H) {}
}

/// etcd: the one store every apiserver shares.
#[derive(Clone, Debug, Hash)]
pub struct Etcd {
    /// Objects the run's selector lists looked at (see `Limits::max_objects_read`): the run's
    /// work, not etcd's state.
    pub(super) read: ObjectsRead,
    rev: Rv,
    /// Indexed by kind and name for the lookups every write and every ESR judgment makes, walked
    /// in key order.
    objects: KindNameMap<Arc<Object>>,
    /// Revisions at or below this are gone.
    compact_rev: Rv,
    /// Per kind (by index): its changes after `compact_rev`, kept only for a kind served
    /// without a watch cache (`None` for the others). One log a kind, so a watch's replay is a
    /// range found by binary search, not a walk of every kind's changes.
    logs: Vec<Option<VecDeque<Change>>>,
    /// Per kind (by index): (revision, how many objects of the kind exist from then on), one
    /// entry per change of the kind since the start; kept only when a probe lists at an Exact RV,
    /// so "how many objects at revision N" is a binary search, not a replay of all history.
    counts: Option<Vec<Vec<(Rv, u32)>>>,
    next_uid: u64,
    /// The revision seen at the previous compaction tick.
    last_tick_rev: Rv,
    /// Owner UID -> its dependents' keys: the garbage collector's graph, and owner lookups in
    /// O(log n) instead of a scan of every object.
    dependents: BTreeMap<u64, BTreeSet<(KindId, NameId)>>,
    /// (owner UID, kind) -> dependents not marked for deletion.
    live_owned: BTreeMap<(u64, KindId), u32>,
    /// (owner UID, kind) -> dependents, marked or not.
    owned: BTreeMap<(u64, KindId), u32>,
    /// Per kind (by index): how many objects it has now.
    kind_len: Vec<u32>,
    /// Per kind (by index): is it cluster-scoped? The collector's scope rules read it.
    cluster_scoped: Vec<bool>,
    /// Per kind (by index): does it serve the status subresource (`status-subresource off`:
    /// no)?
    status_subresource: Vec<bool>,
}

impl Etcd {
    pub(super) fn new(config: &Config) -> Etcd {
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
        let kinds = config.kinds.len();
        Etcd {
            read: ObjectsRead::default(),
            rev: 1,
            objects: KindNameMap::default(),
            compact_rev: 0,
            logs: (config.kinds.iter())
                .map(|k| (k.cache == CacheMode::Off).then(VecDeque::new))
                .collect(),
            counts: exact.then(|| vec![vec![]; kinds]),
            next_uid: 1,
            last_tick_rev: 0,
            dependents: BTreeMap::new(),
            live_owned: BTreeMap::new(),
            owned: BTreeMap::new(),
            kind_len: vec![0; kinds],
            cluster_scoped: config.kinds.iter().map(|k| k.cluster_scoped).collect(),
            status_subresource: (config.kinds.iter())
                .map(|k| k.status_subresource)
                .collect(),
        }
    }

    /// The current revision.
    pub fn rev(&self) -> Rv {
        self.rev
    }

    /// Revisions at or below this are compacted.
    pub fn compact_rev(&self) -> Rv {
        self.compact_rev
    }

    /// Every object, by kind and name.
    pub fn objects(&self) -> &KindNameMap<Arc<Object>> {
        &self.objects
    }

    pub fn get(&self, kind: KindId, name: NameId) -> Option<&Object> {
        self.stored(&(kind, name))
    }

    fn stored(&self, key: &(KindId, NameId)) -> Option<&Object> {
        self.objects.get(key).map(|o| &**o)
    }

    /// How many objects of `kind` exist (a list's size), in O(1).
    pub fn kind_len(&self, kind: KindId) -> usize {
        self.kind_len[kind.index()] as usize
    }

    /// The changes of `kind` after revision `from` still in its log (kept only for a kind
    /// without a watch cache): a watch's replay from etcd, found in O(log n).
    pub(super) fn log_after(&self, kind: KindId, from: Rv) -> vec_deque::Iter<'_, Change> {
        static NONE: VecDeque<Change> = VecDeque::new();
        let log = self.logs[kind.index()].as_ref().unwrap_or(&NONE);
        log.range(log.partition_point(|c| c.object.rv <= from)..)
    }

    /// How many objects of `kind` etcd held at revision `rv` (its state then, for an Exact
    /// list), in O(log n); `None` unless the configuration asks for Exact lists.
    pub(super) fn objects_at(&self, kind: KindId, rv: Rv) -> Option<usize> {
        let counts = &self.counts.as_ref()?[kind.index()];
        let after = counts.partition_point(|&(at, _)| at <= rv);
        Some(after.checked_sub(1).map_or(0, |i| counts[i].1 as usize))
    }

    /// Keeps the owner indexes in step with one committed object (`old`: its previous state).
    /// The counts follow the controller's own reference (`Object::owner`: a reconcile's
    /// children); the collector's graph follows every reference, so a reference dropped by an
    /// update (an orphaning) leaves it.
    fn index(&mut self, old: Option<&Object>, o: &Object, present: bool) {
        let live = |x: &Object| x.deletion_ms.is_none() as i64;
        if let Some(x) = old {
            if let Some(owner) = x.owner {
                let key = (owner.uid, x.kind);
                count(&mut self.live_owned, key, -live(x));
                count(&mut self.owned, key, -1);
            }
        }
        if let Some(owner) = o.owner.filter(|_| present) {
            let key = (owner.uid, o.kind);
            count(&mut self.live_owned, key, live(o));
            count(&mut self.owned, key, 1);
        }
        if o.body.is_empty() && old.is_none_or(|x| x.body.is_empty() && x.owner == o.owner) {
            // The common case: one reference at most, the same before and after.
            if let Some(owner) = o.owner {
                self.link_dependent(owner.uid, (o.kind, o.name), present);
            }
            return;
        }
        for r in old.into_iter().flat_map(|x| x.owner_refs()) {
            self.link_dependent(r.owner.uid, (o.kind, o.name), false);
        }
        if present {
            for r in o.owner_refs() {
                self.link_dependent(r.owner.uid, (o.kind, o.name), true);
            }
        }
    }

    fn link_dependent(&mut self, owner_uid: u64, key: (KindId, NameId), present: bool) {
        let set = self.dependents.entry(owner_uid).or_default();
        if present {
            set.insert(key);
        } else {
            set.remove(&key);
            if set.is_empty() {
                self.dependents.remove(&owner_uid);
            }
        }
    }

    /// The dependents' keys of the object with this UID (by any of their references).
    pub fn dependents_of(&self, uid: u64) -> impl Iterator<Item = &Object> {
        (self.dependents.get(&uid).into_iter().flatten()).filter_map(|k| self.stored(k))
    }

    /// Commits an object etcd accepted (`decide`): the next revision is its RV, the store and
    /// the owner indexes take it (a delete removes it), and the change goes to the count history
    /// and the kind's log when they are kept (`apiserver/pkg/storage/etcd3/store.go`: every write raises the
    /// one revision by one, and the object's RV is the new revision).
    pub(super) fn commit(&mut self, mut obj: Object, event: EventType, now_ms: TimeMs) -> Change {
        self.rev += 1;
        obj.rv = self.rev;
        let key = (obj.kind, obj.name);
        let present = event != EventType::Deleted;
        let obj = Arc::new(obj);
        let old = if present {
            self.objects.insert(key, Arc::clone(&obj))
        } else {
            self.objects.remove(&key)
        };
        self.index(old.as_deref(), &obj, present);
        let added = present as i64 - old.is_some() as i64;
        let (k, rv) = (obj.kind.index(), obj.rv);
        let len = &mut self.kind_len[k];
        *len = (*len as i64 + added) as u32;
        let len = *len;
        let change = Change {
            event,
            object: obj,
            time_ms: now_ms,
            prev: old,
        };
        if let Some(counts) = &mut self.counts {
            counts[k].push((rv, len));
        }
        if let Some(log) = &mut self.logs[k] {
            log.push_back(change.clone());
        }
        change
    }

    /// A compaction tick (`apiserver/pkg/storage/etcd3/compact.go`): the bookkeeping write
    /// raises the revision by one, and etcd compacts to the revision of the previous tick.
    /// Returns the revision compacted to, when it moved.
    pub(super) fn compact_tick(&mut self) -> Option<Rv> {
        self.rev += 1;
        let target = self.last_tick_rev;
        self.last_tick_rev = self.rev;
        if target <= self.compact_rev {
            return None;
        }
        self.compact_rev = target;
        for log in self.logs.iter_mut().flatten() {
            while log.front().is_some_and(|c| c.object.rv <= target) {
                log.pop_front();
            }
        }
        Some(target)
    }

    /// The dependents the garbage collector looks at after a commit of `obj`
    /// (`pkg/controller/garbagecollector`): a deleted owner's, and a new object whose owner (by
    /// UID) does not exist. Empty, and so not allocated, for most writes.
    pub(super) fn gc_candidates(
        &self,
        obj: &Object,
        event: EventType,
    ) -> Vec<(KindId, NameId, u64)> {
        let mut look = vec![];
        if event == EventType::Deleted {
            if let Some(set) = self.dependents.get(&obj.uid) {
                look.extend(
                    set.iter()
                        .filter_map(|k| self.stored(k).map(|d| (d.kind, d.name, d.uid))),
                );
            }
        } else if event == EventType::Added
            && obj.owner_refs().next().is_some()
            && (obj.owner_refs().all(|r| !self.owner_resolves(obj, r.owner))
                || obj
                    .owner_refs()
                    .any(|r| self.invalid_namespace(obj, r.owner)))
        {
            look.push((obj.kind, obj.name, obj.uid));
        }
        look
    }

    /// Is this dependent (still with this UID) an orphan the collector deletes: every owner
    /// gone, and not being deleted already?
    pub(super) fn is_orphan(&self, kind: KindId, name: NameId, uid: u64) -> bool {
        self.stored(&(kind, name)).is_some_and(|d| {
            d.uid == uid
                && d.owner_refs().next().is_some()
                && d.owner_refs().all(|r| !self.owner_resolves(d, r.owner))
                && !d
                    .owner_refs()
                    .any(|r| self.namespaced_owner_of_cluster_scoped(d, r.owner))
                && d.deletion_ms.is_none()
        })
    }

    /// The owner indexes agree with a scan of every object (an invariant the tests check).
    pub fn check_indexes(&self) -> Result<(), String> {
        let mut live: BTreeMap<(u64, KindId), u32> = BTreeMap::new();
        let mut owned: BTreeMap<(u64, KindId), u32> = BTreeMap::new();
        let mut deps: BTreeMap<u64, BTreeSet<(KindId, NameId)>> = BTreeMap::new();
        for o in self.objects.values() {
            for r in o.owner_refs() {
                deps.entry(r.owner.uid)
                    .or_default()
                    .insert((o.kind, o.name));
            }
            if let Some(owner) = o.owner {
                *owned.entry((owner.uid, o.kind)).or_default() += 1;
                if o.deletion_ms.is_none() {
                    *live.entry((owner.uid, o.kind)).or_default() += 1;
                }
            }
        }
        if live != self.live_owned {
            return Err("etcd's count of live dependents disagrees with its objects".into());
        }
        if owned != self.owned {
            return Err("etcd's count of dependents disagrees with its objects".into());
        }
        for (k, &len) in self.kind_len.iter().enumerate() {
            if EtcdReader(self).of_kind(KindId(k as u16)).count() != len as usize {
                return Err("etcd's count of objects of a kind disagrees with its objects".into());
            }
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
            .filter_map(|k| self.stored(k))
            .filter(move |o| o.owner.is_some_and(|ow| ow.uid == uid))
    }

    /// Does `dependent`'s reference resolve: its owner exists with this UID, in the
    /// dependent's namespace? A namespaced owner elsewhere is treated as absent
    /// (`garbagecollector.go`: cross-namespace owner references are disallowed by design).
    fn owner_resolves(&self, dependent: &Object, owner: Owner) -> bool {
        self.resolved_owner(dependent, owner).is_some()
    }

    /// The owner `dependent`'s reference resolves to (`owner_resolves`): a cluster-scoped
    /// owner from anywhere, a namespaced one from its own namespace only.
    pub(super) fn resolved_owner(&self, dependent: &Object, owner: Owner) -> Option<&Object> {
        let cluster_scoped = self.cluster_scoped[owner.kind.index()];
        (self.stored(&(owner.kind, owner.name))).filter(|o| {
            o.uid == owner.uid && (cluster_scoped || o.namespace == dependent.namespace)
        })
    }

    /// `garbagecollector.go` `isDangling`: a cluster-scoped dependent refers to an owner of a
    /// namespaced kind, which is not valid (`namespacedOwnerOfClusterScopedObjectErr`): the
    /// collector forgets the dependent, which is never collected.
    pub(super) fn namespaced_owner_of_cluster_scoped(
        &self,
        dependent: &Object,
        owner: Owner,
    ) -> bool {
        self.cluster_scoped[dependent.kind.index()] && !self.cluster_scoped[owner.kind.index()]
    }

    /// `graph_builder.go` `addDependentToOwners`: the reference names an owner of a namespaced
    /// kind that exists (observed, by UID) in another namespace than the dependent's, which
    /// the collector reports with a Warning `OwnerRefInvalidNamespace` on the dependent.
    pub(super) fn invalid_namespace(&self, dependent: &Object, owner: Owner) -> bool {
        !self.cluster_scoped[owner.kind.index()]
            && (self.stored(&(owner.kind, owner.name)))
                .is_some_and(|o| o.uid == owner.uid && o.namespace != dependent.namespace)
    }

    /// Does the owner this reference names exist, with this UID?
    pub fn owner_exists(&self, owner: Owner) -> bool {
        self.objects
            .get(&(owner.kind, owner.name))
            .is_some_and(|o| o.uid == owner.uid)
    }
}

/// Adds `delta` to a count of an owner index, dropping it at zero.
fn count(index: &mut BTreeMap<(u64, KindId), u32>, key: (u64, KindId), delta: i64) {
    if delta == 0 {
        return;
    }
    let n = index.entry(key).or_default();
    *n = (*n as i64 + delta) as u32;
    if *n == 0 {
        index.remove(&key);
    }
}

/// What etcd makes of a write it accepts.
#[derive(Clone, Debug, PartialEq)]
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

/// What an update is, as the trace says it: a patch (no RV) or an update, of the object or its
/// `/status`; an update of the object that changes only its finalizers is a finalizer step.
fn update_op(change: UpdateTo, expect_rv: Rv, cur: Option<&Object>) -> WriteOp {
    let patch = expect_rv == 0;
    match (change, cur) {
        (c, _) if c.to_status() => match patch {
            true => WriteOp::PatchStatus,
            false => WriteOp::UpdateStatus,
        },
        (UpdateTo::Status(_) | UpdateTo::Field { .. } | UpdateTo::Condition(_), _) if patch => {
            WriteOp::Patch
        }
        (UpdateTo::Status(_) | UpdateTo::Field { .. } | UpdateTo::Condition(_), _) => {
            WriteOp::Update
        }
        (UpdateTo::Object { .. }, Some(cur)) => {
            let to = change.apply(cur);
            match (to.spec == cur.spec, to.finalizers & !cur.finalizers != 0) {
                (true, true) => WriteOp::AddFinalizer,
                (true, false) if to.finalizers != cur.finalizers => WriteOp::RemoveFinalizer,
                _ if patch => WriteOp::Patch,
                _ => WriteOp::Update,
            }
        }
        (UpdateTo::NamedFinalizer { add: true, .. }, _) => WriteOp::AddFinalizer,
        (UpdateTo::NamedFinalizer { add: false, .. }, _) => WriteOp::RemoveFinalizer,
        (UpdateTo::ControllerRef { adopt: true, .. }, _) => WriteOp::Adopt,
        (UpdateTo::ControllerRef { adopt: false, .. }, _) => WriteOp::Release,
        (UpdateTo::Object { .. }, None) if patch => WriteOp::Patch,
        (UpdateTo::Object { .. }, None) => WriteOp::Update,
    }
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
                fields,
                ..
            } => match fields {
                None => self.decide_create(kind, name, namespace, spec, owner, names),
                // A create that names fields: the object as the writer built it, through the
                // rules a user's create with fields goes through (entries, `PrepareForCreate`).
                Some(fields) => {
                    let mut obj = Object {
                        spec,
                        owner,
                        ..Object::new(kind, name, namespace)
                    };
                    obj.body.edit(|d| {
                        for &(section, key, value) in fields.iter() {
                            section.set(d, key, value);
                        }
                    });
                    self.decide_put(Verb::Create, obj, names)
                }
            },
            Write::Update {
                kind,
                name,
                expect_rv,
                change,
            } => self.decide_update(kind, name, expect_rv, change, names),
            Write::Delete { kind, name, uid } => self.decide_delete(kind, name, uid, now_ms),
            Write::Event(e) => self.decide_event(e, names),
        }
    }

    /// client-go's `recordEvent` (`tools/record/event.go`): a repeat patches the Event's
    /// `count`, `lastTimestamp` and `message` (`eventObserve`'s two-way merge patch against a
    /// copy without them; no resourceVersion), and when the
    /// Event is gone (deleted, or never made) creates it again; a first occurrence creates it.
    fn decide_event(
        &mut self,
        e: crate::reconcile::EventRecord,
        names: &Names,
    ) -> Result<Decision, Refusal> {
        let keys = self.event_keys(names);
        let fill = |o: &mut Object| {
            o.body.edit(|d| {
                for (k, v) in keys.iter().zip(e.fields()) {
                    crate::object::set(&mut d.spec, *k, Some(v));
                }
            })
        };
        if let Some(cur) = self.stored(&(e.kind, e.name)).filter(|_| e.count > 1) {
            let mut obj = cur.clone();
            fill(&mut obj);
            return self.decide_replace(obj, 0, Some(WriteOp::Patch));
        }
        let mut decision = self.decide_create(e.kind, e.name, e.namespace, 0, None, names)?;
        if let Decision::Commit { obj, .. } = &mut decision {
            fill(obj);
        }
        Ok(decision)
    }

    /// `reconcile::EVENT_FIELDS`, as names (interned once the first Event is planned).
    fn event_keys(&self, names: &Names) -> [NameId; crate::reconcile::EVENT_FIELDS.len()] {
        (crate::reconcile::EVENT_FIELDS).map(|k| names.get(k).unwrap_or(NameId(u32::MAX)))
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
        // Validation (`registry/rest/create.go` `BeforeCreate`) comes before storage's 409.
        // Names are DNS subdomains: a controller that grows names (`a-data-data-...`) stops at
        // the apiserver's validation, and so does the memory they take.
        let short = names.resolve(name).rsplit('/').next().unwrap_or("");
        if short.len() > MAX_NAME_LEN {
            return refuse(ApiError::NameTooLong);
        }
        // A name a reconcile built at run time, or a burst's: the script's literal names were
        // checked when it was read.
        let scope = crate::model::Scope::of(self.cluster_scoped[kind.index()]);
        if let Some((field, rule)) =
            crate::validation::object_name_error(names.resolve(name), scope, false)
        {
            return refuse(ApiError::InvalidName { field, rule });
        }
        if self.objects.contains_key(&(kind, name)) {
            return refuse(ApiError::AlreadyExists);
        }
        let uid = self.next_uid;
        self.next_uid += 1;
        let obj = Object {
            uid,
            spec,
            owner,
            ..Object::new(kind, name, namespace)
        };
        Ok(Decision::Commit {
            op: WriteOp::Create,
            event: EventType::Added,
            obj,
        })
    }

    /// `change`: what the writer sends, to the object or to its `/status`. Every kind has the
    /// status subresource (apiextensions-apiserver `pkg/registry/customresource/strategy.go`,
    /// as the built-in kinds with a status): `PrepareForUpdate` keeps the stored status on a
    /// write to the object, and the status strategy keeps everything but the status on a write
    /// to `/status`; only a new spec moves `metadata.generation`. The rest of the object (its
    /// labels, named fields and finalizers) stays as etcd has it.
    fn decide_update(
        &self,
        kind: KindId,
        name: NameId,
        expect_rv: Rv,
        change: UpdateTo,
        names: &Names,
    ) -> Result<Decision, Refusal> {
        let cur = self.stored(&(kind, name));
        let op = update_op(change, expect_rv, cur);
        let to_status = matches!(op, WriteOp::UpdateStatus | WriteOp::PatchStatus);
        let Some(cur) = cur.filter(|_| !to_status || self.status_subresource[kind.index()]) else {
            // A kind without the status subresource serves no `/status`: 404.
            return Err(refusal(op, kind, name, ApiError::NotFound));
        };
        let obj = change.apply(cur);
        // A field a controller writes counts against the object's bound as a user's does.
        if obj.body.data().entries() > crate::object::MAX_ENTRIES {
            return Err(refusal(op, kind, name, ApiError::TooManyEntries));
        }
        if !labels_valid(&obj, names) {
            return Err(refusal(op, kind, name, ApiError::InvalidLabelValue));
        }
        self.decide_replace(obj, expect_rv, Some(op))
    }

    /// A user's write (`WriteInput::Edits`): a new object, or the object etcd holds replaced by
    /// `obj` (an update at the RV it read, a merge patch at none).
    pub(crate) fn decide_put(
        &mut self,
        verb: Verb,
        obj: Object,
        names: &Names,
    ) -> Result<Decision, Refusal> {
        let (kind, name) = (obj.kind, obj.name);
        if obj.body.data().entries() > crate::object::MAX_ENTRIES {
            let op = if verb == Verb::Create {
                WriteOp::Create
            } else {
                WriteOp::Update
            };
            return Err(refusal(op, kind, name, ApiError::TooManyEntries));
        }
        if !labels_valid(&obj, names) {
            let op = if verb == Verb::Create {
                WriteOp::Create
            } else {
                WriteOp::Update
            };
            return Err(refusal(op, kind, name, ApiError::InvalidLabelValue));
        }
        match verb {
            Verb::Create => {
                let mut decision =
                    self.decide_create(kind, name, obj.namespace, obj.spec, obj.owner, names)?;
                if let Decision::Commit { obj: made, .. } = &mut decision {
                    // `PrepareForCreate` drops the status only with the status subresource
                    // (apiextensions-apiserver `customresource/strategy.go`: "create cannot
                    // set status"), its named fields with it.
                    let mut body = obj.body;
                    if !self.status_subresource[kind.index()] {
                        made.status = obj.status;
                    } else if !body.data().status.is_empty() {
                        body.edit(|d| d.status.clear());
                    }
                    made.body = body;
                }
                Ok(decision)
            }
            Verb::Update => {
                let rv = obj.rv;
                self.decide_replace(obj, rv, None)
            }
            Verb::Patch => self.decide_replace(obj, 0, None),
        }
    }

    /// The object etcd holds becomes `obj` (`expect_rv` 0: no precondition, a merge patch;
    /// otherwise the RV the writer read): 404, 409, a finalizer added while deleting (422), a
    /// no-op, or the commit; `metadata.generation` moves when the spec changed (a default or a
    /// named field), and an object being deleted goes with its last finalizer. `op`: the
    /// request's (an update of the object or of `/status`); `None`, a user's write, is an
    /// update of the status when only the status changed.
    fn decide_replace(
        &self,
        mut obj: Object,
        expect_rv: Rv,
        op: Option<WriteOp>,
    ) -> Result<Decision, Refusal> {
        let (kind, name) = (obj.kind, obj.name);
        let refuse = |error| Err(refusal(op.unwrap_or(WriteOp::Update), kind, name, error));
        let Some(cur) = self.stored(&(kind, name)) else {
            return refuse(ApiError::NotFound);
        };
        if expect_rv != 0 && cur.rv != expect_rv {
            return refuse(ApiError::Conflict);
        }
        // What the writer does not own stays as etcd has it.
        (obj.uid, obj.rv, obj.generation) = (cur.uid, cur.rv, cur.generation);
        (obj.deletion_ms, obj.namespace) = (cur.deletion_ms, cur.namespace);
        let (new, old) = (obj.body.data(), cur.body.data());
        if cur.deletion_ms.is_some()
            && (obj.finalizers & !cur.finalizers != 0
                || new.finalizers.iter().any(|f| !old.finalizers.contains(f)))
        {
            return refuse(ApiError::FinalizerWhileDeleting);
        }
        let spec_changed = obj.spec != cur.spec || new.spec != old.spec;
        let status_changed = obj.status != cur.status || new.status != old.status;
        if obj == *cur {
            return Ok(Decision::NoOp { kind, name });
        }
        // `PrepareForUpdate`: any change but to `metadata` moves the generation, and with the
        // status subresource the status is not the object's to change.
        let subresource = self.status_subresource[kind.index()];
        if spec_changed || (status_changed && !subresource) {
            obj.generation += 1;
        }
        let op = op.unwrap_or(
            match (
                status_changed && !spec_changed && subresource,
                expect_rv == 0,
            ) {
                (true, true) => WriteOp::PatchStatus,
                (true, false) => WriteOp::UpdateStatus,
                (false, true) => WriteOp::Patch,
                (false, false) => WriteOp::Update,
            },
        );
        if obj.deletion_ms.is_some() && obj.finalizer_count() == 0 {
            // The last finalizer is gone: the object goes.
            let (op, event) = (WriteOp::RemoveLastFinalizer, EventType::Deleted);
            return Ok(Decision::Commit { op, event, obj });
        }
        let event = EventType::Modified;
        Ok(Decision::Commit { op, event, obj })
    }

    /// A delete with a propagation policy (`registry/generic/registry/store.go`
    /// `deletionFinalizersForGarbageCollection`): the finalizers of the policies
    /// (`policy_finalizers`, those already named) are dropped and this policy's own (`finalizer`;
    /// none for background) is added, also on an object already being deleted
    /// (`updateForGracefulDeletionAndFinalizers`: only a graceful deletion in progress, which no
    /// modelled kind has, stops it). Finalizers unchanged, it is the plain delete; changed, the
    /// object is marked deleting (its timestamp kept if set, `markAsDeleting`) with them, or
    /// deleted now if none at all remain, a controller's included (`errDeleteNow`).
    pub(crate) fn decide_delete_with(
        &self,
        kind: KindId,
        name: NameId,
        finalizer: Option<NameId>,
        policy_finalizers: &[Option<NameId>],
        now_ms: TimeMs,
    ) -> Result<Decision, Refusal> {
        let Some(cur) = self.stored(&(kind, name)) else {
            return Err(refusal(WriteOp::Delete, kind, name, ApiError::NotFound));
        };
        let old = &cur.body.data().finalizers;
        let mut new: Vec<NameId> = (old.iter().copied())
            .filter(|f| !policy_finalizers.contains(&Some(*f)))
            .collect();
        new.extend(finalizer);
        let within = |a: &[NameId], b: &[NameId]| a.iter().all(|f| b.contains(f));
        if within(old, &new) && within(&new, old) {
            return self.decide_delete(kind, name, None, now_ms);
        }
        let mut obj = cur.clone();
        obj.body.edit(|d| d.finalizers = new);
        if obj.finalizer_count() == 0 {
            let (op, event) = (WriteOp::Delete, EventType::Deleted);
            let obj = cur.clone();
            return Ok(Decision::Commit { op, event, obj });
        }
        if obj.deletion_ms.is_none() {
            mark_deleting(&mut obj, now_ms);
        }
        let (op, event) = (WriteOp::MarkDeleting, EventType::Modified);
        Ok(Decision::Commit { op, event, obj })
    }

    /// The collector's write of `obj` over what etcd holds (no precondition).
    pub(crate) fn decide_collector(&self, obj: Object) -> Result<Decision, Refusal> {
        self.decide_replace(obj, 0, None)
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
        let Some(cur) = self.stored(&(kind, name)).cloned() else {
            return refuse(ApiError::NotFound);
        };
        if uid.is_some_and(|u| u != cur.uid) {
            return refuse(ApiError::UidMismatch);
        }
        if cur.finalizer_count() == 0 {
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
        mark_deleting(&mut obj, now_ms);
        let (op, event) = (WriteOp::MarkDeleting, EventType::Modified);
        Ok(Decision::Commit { op, event, obj })
    }
}

/// `registry/generic/registry/store.go` `markAsDeleting` on an object not yet deleting: the
/// deletion timestamp is set and a generation that is set (> 0) moves, so that
/// `GenerationChangedPredicate` lets the mark through.
fn mark_deleting(obj: &mut Object, now_ms: TimeMs) {
    obj.deletion_ms = Some(now_ms);
    if obj.generation > 0 {
        obj.generation += 1;
    }
}

fn refusal(op: WriteOp, kind: KindId, name: NameId, error: ApiError) -> Refusal {
    Refusal {
        op,
        kind,
        name,
        error,
    }
}

/// Reads the truth, for Anvil mode and for ESR.
pub struct EtcdReader<'a>(pub &'a Etcd);

impl Reader for EtcdReader<'_> {
    fn get(&self, kind: KindId, name: NameId) -> Option<Object> {
        self.0.stored(&(kind, name)).cloned()
    }
    fn owned_by(&self, kind: KindId, uid: u64) -> Vec<Object> {
        self.0.owned_by(kind, uid).cloned().collect()
    }
    /// O(log n): ESR asks this after every write of a child.
    fn live_owned(&self, kind: KindId, uid: u64) -> usize {
        self.0.live_owned.get(&(uid, kind)).copied().unwrap_or(0) as usize
    }
    fn count_owned(&self, kind: KindId, uid: u64) -> usize {
        self.0.owned.get(&(uid, kind)).copied().unwrap_or(0) as usize
    }
    fn select(&self, kind: KindId, keep: &dyn Fn(&Object) -> bool) -> Vec<Object> {
        self.0.read.add(self.0.kind_len[kind.index()] as usize);
        // Copies only of what it keeps.
        (self.0.objects.of_kind(kind))
            .filter(|(_, o)| keep(o))
            .map(|(_, o)| Object::clone(o))
            .collect()
    }
}

impl EtcdReader<'_> {
    /// Every object of one kind, in name order (etcd's key range for the kind).
    fn of_kind(&self, kind: KindId) -> impl Iterator<Item = Object> + '_ {
        self.0.objects.of_kind(kind).map(|(_, o)| Object::clone(o))
    }

    pub fn kind_objects(&self, kind: KindId) -> Vec<Object> {
        self.of_kind(kind).collect()
    }
}

/// `objectmeta.go` `ValidateLabels` on every create and update: each label's value as
/// `IsValidLabelValue` reads it (keys are the script's own, checked when it was read).
fn labels_valid(obj: &Object, names: &Names) -> bool {
    (obj.body.data().labels.iter())
        .all(|&(_, v)| crate::validation::label_value_ok(names.resolve(v)))
}

#[cfg(test)]
mod tests {
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
            fields: None,
            generate_name: false,
        };
        let Ok(Decision::Commit { mut obj, .. }) = etcd.decide(create, names, TimeMs(0)) else {
            panic!("a create of a new name is accepted");
        };
        obj.rv = 5;
        obj.finalizers = finalizers;
        etcd.objects
            .insert((obj.kind, obj.name), Arc::new(obj.clone()));
        (etcd, obj)
    }

    fn update(o: &Object, expect_rv: Rv, spec: i64, status: i64) -> Write {
        let change = match status == o.status {
            true => UpdateTo::Object {
                spec: Some(spec),
                finalizers: Some(o.finalizers),
            },
            false => UpdateTo::Status(status),
        };
        Write::Update {
            kind: o.kind,
            name: o.name,
            expect_rv,
            change,
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
            fields: None,
            generate_name: false,
        };
        let refused = etcd.decide(again, &names, TimeMs(0)).unwrap_err();
        assert_eq!(refused.error, ApiError::AlreadyExists);
        let long = names.intern(&format!("default/{}", "x".repeat(MAX_NAME_LEN + 1)));
        let long = Write::Create {
            kind: o.kind,
            name: long,
            namespace: o.namespace,
            spec: 1,
            owner: None,
            fields: None,
            generate_name: false,
        };
        assert_eq!(
            etcd.decide(long, &names, TimeMs(0)).unwrap_err().error,
            ApiError::NameTooLong
        );
        assert_eq!(etcd.next_uid, 2, "refused creates take no UID");
    }

    #[test]
    fn updates_check_the_rv_and_bump_the_generation_on_a_new_spec() {
        let mut names = Names::default();
        let (mut etcd, o) = etcd_with(&mut names, 0);
        let stale = etcd
            .decide(update(&o, 4, 2, 0), &names, TimeMs(0))
            .unwrap_err();
        assert_eq!(stale.error, ApiError::Conflict);
        let same = etcd.decide(update(&o, 5, 1, 0), &names, TimeMs(0));
        assert_eq!(
            same,
            Ok(Decision::NoOp {
                kind: o.kind,
                name: o.name
            })
        );
        let Ok(Decision::Commit { op, obj, .. }) =
            etcd.decide(update(&o, 0, 2, 0), &names, TimeMs(0))
        else {
            panic!("a merge patch of a new spec commits");
        };
        assert_eq!((op, obj.generation, obj.spec), (WriteOp::Patch, 2, 2));
        let Ok(Decision::Commit { op, obj, .. }) =
            etcd.decide(update(&o, 5, 1, 7), &names, TimeMs(0))
        else {
            panic!("a status update commits");
        };
        assert_eq!(
            (op, obj.generation, obj.status),
            (WriteOp::UpdateStatus, 1, 7)
        );
    }

    /// apiextensions-apiserver `pkg/registry/customresource/strategy.go`: with the status
    /// subresource a write to the object keeps the stored status, a write to `/status` keeps
    /// the spec and the metadata, and only a new spec moves the generation; a merge patch that
    /// names no finalizers leaves them.
    #[test]
    fn the_object_and_its_status_are_written_apart_and_only_the_spec_moves_the_generation() {
        let mut names = Names::default();
        let (mut etcd, o) = etcd_with(&mut names, 1);
        let write = |change| Write::Update {
            kind: o.kind,
            name: o.name,
            expect_rv: 0,
            change,
        };
        let Ok(Decision::Commit { op, obj, .. }) =
            etcd.decide(write(UpdateTo::Status(7)), &names, TimeMs(0))
        else {
            panic!("a status write commits");
        };
        assert_eq!(op, WriteOp::PatchStatus);
        assert_eq!((obj.spec, obj.finalizers, obj.generation), (1, 1, 1));
        assert_eq!(obj.status, 7);
        etcd.objects.insert((o.kind, o.name), Arc::new(obj));
        let spec = UpdateTo::Object {
            spec: Some(4),
            finalizers: None,
        };
        let Ok(Decision::Commit { op, obj, .. }) = etcd.decide(write(spec), &names, TimeMs(0))
        else {
            panic!("a spec patch commits");
        };
        assert_eq!(op, WriteOp::Patch);
        assert_eq!((obj.spec, obj.status, obj.finalizers), (4, 7, 1));
        assert_eq!(obj.generation, 2);
        let same = UpdateTo::Object {
            spec: Some(1),
            finalizers: Some(1),
        };
        let unchanged = etcd.decide(write(UpdateTo::Status(7)), &names, TimeMs(0));
        assert!(
            matches!(unchanged, Ok(Decision::NoOp { .. })),
            "{unchanged:?}"
        );
        let unchanged = etcd.decide(write(same), &names, TimeMs(0));
        assert!(
            matches!(unchanged, Ok(Decision::NoOp { .. })),
            "{unchanged:?}"
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
        let wrong = etcd.decide(delete(Some(9)), &names, TimeMs(0)).unwrap_err();
        assert_eq!(wrong.error, ApiError::UidMismatch);
        let Ok(Decision::Commit { op, obj, event }) = etcd.decide(delete(None), &names, TimeMs(70))
        else {
            panic!("a delete commits a mark");
        };
        assert_eq!(
            (op, event, obj.deletion_ms),
            (WriteOp::MarkDeleting, EventType::Modified, Some(TimeMs(70)))
        );
        etcd.objects.insert((o.kind, o.name), Arc::new(obj.clone()));
        let again = etcd.decide(delete(None), &names, TimeMs(80));
        assert_eq!(
            again,
            Ok(Decision::NoOp {
                kind: o.kind,
                name: o.name
            })
        );
        // Removing the last finalizer deletes it.
        let last = Write::Update {
            kind: obj.kind,
            name: obj.name,
            expect_rv: 0,
            change: UpdateTo::Object {
                spec: None,
                finalizers: Some(0),
            },
        };
        let Ok(Decision::Commit { op, event, .. }) = etcd.decide(last, &names, TimeMs(90)) else {
            panic!("the last finalizer's removal commits");
        };
        assert_eq!(
            (op, event),
            (WriteOp::RemoveLastFinalizer, EventType::Deleted)
        );
    }

    /// What the trace calls an update (issue 24): a finalizer step is one, and so is the last
    /// finalizer's removal that deletes the object; a write without an RV is a patch.
    #[test]
    fn an_update_that_changes_only_finalizers_is_a_finalizer_step() {
        let mut names = Names::default();
        let (etcd, o) = etcd_with(&mut names, 1);
        let to = |finalizers, spec| UpdateTo::Object {
            spec: Some(spec),
            finalizers: Some(finalizers),
        };
        assert_eq!(update_op(to(3, 1), 5, Some(&o)), WriteOp::AddFinalizer);
        assert_eq!(update_op(to(0, 1), 5, Some(&o)), WriteOp::RemoveFinalizer);
        assert_eq!(update_op(to(3, 2), 5, Some(&o)), WriteOp::Update);
        assert_eq!(update_op(to(1, 2), 0, Some(&o)), WriteOp::Patch);
        assert_eq!(
            update_op(UpdateTo::Status(1), 5, None),
            WriteOp::UpdateStatus
        );
        drop(etcd);
    }

    /// `etcd3/store.go`: every write raises the one revision by one and stamps the object with
    /// it; a delete removes the object, its change carrying the last state at the new RV.
    #[test]
    fn a_commit_bumps_the_revision_and_stores_or_removes_the_object() {
        let mut names = Names::default();
        let (mut etcd, o) = etcd_with(&mut names, 0);
        etcd.rev = 5;
        let mut changed = o.clone();
        changed.spec = 2;
        let c = etcd.commit(changed, EventType::Modified, TimeMs(40));
        assert_eq!((etcd.rev, c.object.rv, c.time_ms), (6, 6, TimeMs(40)));
        assert_eq!(
            etcd.stored(&(o.kind, o.name)).map(|x| (x.rv, x.spec)),
            Some((6, 2))
        );
        let c = etcd.commit(Object::clone(&c.object), EventType::Deleted, TimeMs(50));
        assert_eq!(
            (c.event, c.object.rv, c.object.spec),
            (EventType::Deleted, 7, 2)
        );
        assert!(etcd.objects.is_empty());
        assert!(
            etcd.logs.iter().all(Option::is_none) && etcd.counts.is_none(),
            "kept only when asked for"
        );
    }

    /// The log of a kind without a watch cache keeps its changes in order (a watch's replay
    /// is the range after its RV), the count history answers "how many at revision N" for
    /// Exact lists, and the owner indexes follow each commit.
    #[test]
    fn a_commit_keeps_the_log_the_counts_and_the_owner_indexes() {
        let mut config = Config::new(&["Parent", "Child"]);
        config.kinds[1].cache = CacheMode::Off;
        let mut etcd = Etcd::new(&config);
        etcd.counts = Some(vec![vec![]; 2]);
        let parent = Object::fixture(KindId(0), NameId(1), 1, 0);
        let mut child = Object::fixture(KindId(1), NameId(2), 2, 0);
        child.owner = Some(Owner {
            kind: KindId(0),
            name: NameId(1),
            uid: 1,
        });
        etcd.commit(parent, EventType::Added, TimeMs(0));
        let child = Object::clone(&etcd.commit(child, EventType::Added, TimeMs(0)).object);
        let mut marked = child;
        marked.deletion_ms = Some(TimeMs(1));
        etcd.commit(marked.clone(), EventType::Modified, TimeMs(1));
        let rvs = |v: vec_deque::Iter<'_, Change>| v.map(|c| c.object.rv).collect::<Vec<_>>();
        assert_eq!(rvs(etcd.log_after(KindId(1), 0)), [3, 4]);
        assert_eq!(rvs(etcd.log_after(KindId(1), 3)), [4]);
        assert_eq!(
            rvs(etcd.log_after(KindId(0), 0)),
            [],
            "a kind with a cache keeps none"
        );
        assert_eq!(etcd.owned_by(KindId(1), 1).count(), 1);
        assert_eq!(EtcdReader(&etcd).live_owned(KindId(1), 1), 0);
        assert_eq!(EtcdReader(&etcd).count_owned(KindId(1), 1), 1);
        etcd.check_indexes().unwrap();
        etcd.commit(marked, EventType::Deleted, TimeMs(2));
        let at = |rv| etcd.objects_at(KindId(1), rv);
        assert_eq!(
            [at(2), at(3), at(4), at(5), at(99)],
            [0, 1, 1, 0, 0].map(Some)
        );
        assert_eq!(etcd.objects_at(KindId(0), 1), Some(0), "before its create");
        assert_eq!(etcd.objects_at(KindId(0), 5), Some(1));
        etcd.check_indexes().unwrap();
    }

    /// `etcd3/compact.go`: each tick's bookkeeping write raises the revision, and etcd compacts
    /// to the revision seen at the previous tick (so one to two intervals of history survive);
    /// the log loses what was compacted.
    #[test]
    fn a_compaction_tick_compacts_to_the_previous_tick_s_revision() {
        let mut config = Config::new(&["Pod"]);
        config.kinds[0].cache = CacheMode::Off;
        let mut etcd = Etcd::new(&config);
        let pod = |n| Object::fixture(KindId(0), NameId(n), n as u64, 0);
        etcd.commit(pod(1), EventType::Added, TimeMs(0));
        assert_eq!(etcd.compact_tick(), None, "the first tick only remembers");
        assert_eq!(etcd.rev, 3);
        etcd.commit(pod(2), EventType::Added, TimeMs(0));
        assert_eq!(etcd.compact_tick(), Some(3));
        assert_eq!((etcd.rev, etcd.compact_rev), (5, 3));
        let left: Vec<Rv> = etcd.log_after(KindId(0), 0).map(|c| c.object.rv).collect();
        assert_eq!(
            left,
            [4],
            "changes at or below the compacted revision are gone"
        );
        assert_eq!(etcd.compact_tick(), Some(5));
        assert_eq!(etcd.log_after(KindId(0), 0).len(), 0);
    }

    /// `pkg/controller/garbagecollector`: a deleted owner's dependents and a new object whose
    /// owner (by UID) is missing are looked at; an orphan is one whose owner with that UID is
    /// gone, unless it is being deleted already.
    #[test]
    fn the_collector_looks_at_a_deleted_owner_s_dependents_and_finds_orphans() {
        let mut etcd = Etcd::new(&Config::new(&["Parent", "Child"]));
        let parent = Object::fixture(KindId(0), NameId(1), 1, 0);
        let owner = Owner {
            kind: KindId(0),
            name: NameId(1),
            uid: 1,
        };
        let mut child = Object::fixture(KindId(1), NameId(2), 2, 0);
        child.owner = Some(owner);
        let parent = etcd.commit(parent, EventType::Added, TimeMs(0)).object;
        let child = Object::clone(&etcd.commit(child, EventType::Added, TimeMs(0)).object);
        assert!(etcd.gc_candidates(&child, EventType::Added).is_empty());
        assert!(!etcd.is_orphan(KindId(1), NameId(2), 2));
        etcd.commit(Object::clone(&parent), EventType::Deleted, TimeMs(0));
        assert_eq!(
            etcd.gc_candidates(&parent, EventType::Deleted),
            [(KindId(1), NameId(2), 2)]
        );
        assert!(etcd.is_orphan(KindId(1), NameId(2), 2));
        assert!(
            !etcd.is_orphan(KindId(1), NameId(2), 9),
            "another UID: a new object"
        );
        // An owner recreated under its name is another owner: the child is still an orphan.
        let recreated = Object::fixture(KindId(0), NameId(1), 3, 0);
        etcd.commit(recreated, EventType::Added, TimeMs(0));
        assert!(etcd.is_orphan(KindId(1), NameId(2), 2));
        let mut deleting = child;
        deleting.deletion_ms = Some(TimeMs(1));
        etcd.commit(deleting, EventType::Modified, TimeMs(1));
        assert!(
            !etcd.is_orphan(KindId(1), NameId(2), 2),
            "being deleted already"
        );
        let mut late = Object::fixture(KindId(1), NameId(4), 4, 0);
        late.owner = Some(owner);
        assert_eq!(
            etcd.gc_candidates(&late, EventType::Added),
            [(KindId(1), NameId(4), 4)],
            "created with an owner that is gone"
        );
    }
}
