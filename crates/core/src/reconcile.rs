//! The reconcile library: what a controller decides from what it reads. Pure functions of the
//! state read (and, for the history-dependent variants, the controller's in-memory notes).

use crate::config::{Behaviour, ControllerConfig};
use crate::model::{KindId, NameId, Names, Object, Owner, Rv, Suffix};
use crate::program::{self, Plan};

/// Most children one parent may ask for: a limit on every run.
pub const MAX_CHILDREN: i64 = 1000;

/// One write a reconcile makes, in order.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Write {
    /// A create: `fields` are the named fields, labels and annotations the new object carries
    /// (shared, not copied, as the plan's writes are cloned); with `generate_name` the name is a
    /// prefix to which the apiserver appends five random characters (`metadata.generateName`).
    Create {
        kind: KindId,
        name: NameId,
        namespace: NameId,
        spec: i64,
        owner: Option<Owner>,
        fields: Option<std::sync::Arc<[CreateField]>>,
        generate_name: bool,
    },
    /// A write to the object or to its `/status`, guarded by the RV the controller read (0: no
    /// precondition, a merge patch).
    Update {
        kind: KindId,
        name: NameId,
        expect_rv: Rv,
        change: UpdateTo,
    },
    Delete {
        kind: KindId,
        name: NameId,
        uid: Option<u64>,
    },
    /// An Event as client-go's `EventRecorder` sends it (`tools/record/event.go`): the plan
    /// says what happened to which object; the controller's correlator (its process memory)
    /// names it and counts it when the write is made (`EventRecord::name` and `count` are 0
    /// until then).
    Event(EventRecord),
}

/// One Event, as client-go's recorder builds it (`tools/record/event.go` `makeEvent`) and its
/// correlator aggregates and counts it (`tools/record/events_cache.go`, `sim/events_cache.rs`):
/// the first occurrence is a create named `INVOLVED.HEX(now in ns)`, a repeat of the same
/// (object, type, reason, message) a patch of that Event's `count`, `lastTimestamp` and
/// `message`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct EventRecord {
    /// The `Event` kind of the configuration.
    pub kind: KindId,
    pub namespace: NameId,
    /// The object it is about (`involvedObject`): its kind's name, its name and UID.
    pub involved_kind: NameId,
    pub involved: NameId,
    pub involved_uid: u64,
    /// `Normal` or `Warning`.
    pub event_type: NameId,
    pub reason: NameId,
    pub message: NameId,
    /// The Event's name and count, set when the write is made (0 before).
    pub name: NameId,
    pub count: u32,
    pub first_ms: i64,
    pub now_ms: i64,
}

/// The named fields of an Event object, in the order `EventRecord::fields` gives them.
pub const EVENT_FIELDS: [&str; 9] = [
    "involvedObject.kind",
    "involvedObject.name",
    "involvedObject.uid",
    "type",
    "reason",
    "message",
    "count",
    "firstTimestamp",
    "lastTimestamp",
];

impl EventRecord {
    /// `EVENT_FIELDS`' values (`keys` interned in the same order).
    pub fn fields(&self) -> [crate::object::Value; 9] {
        use crate::object::Value::{Int, Str};
        [
            Str(self.involved_kind),
            Str(self.involved),
            Int(self.involved_uid as i64),
            Str(self.event_type),
            Str(self.reason),
            Str(self.message),
            Int(self.count as i64),
            Int(self.first_ms),
            Int(self.now_ms),
        ]
    }
}

impl Write {
    /// What it asks of the server, as the trace says it.
    pub fn op(&self) -> crate::trace::WriteOp {
        use crate::trace::WriteOp;
        match self {
            Write::Create { .. } => WriteOp::Create,
            Write::Update {
                change, expect_rv, ..
            } if change.to_status() => match expect_rv {
                0 => WriteOp::PatchStatus,
                _ => WriteOp::UpdateStatus,
            },
            Write::Update { expect_rv: 0, .. } => WriteOp::Patch,
            Write::Update { .. } => WriteOp::Update,
            Write::Delete { .. } => WriteOp::Delete,
            // client-go's `recordEvent`: a create, or for a repeat `sink.Patch`.
            Write::Event(e) if e.count > 1 => WriteOp::Patch,
            Write::Event(_) => WriteOp::Create,
        }
    }

    /// The object it writes.
    pub fn object(&self) -> (KindId, NameId) {
        match *self {
            Write::Create { kind, name, .. }
            | Write::Update { kind, name, .. }
            | Write::Delete { kind, name, .. } => (kind, name),
            Write::Event(e) => (e.kind, e.name),
        }
    }
}

/// What an update sends, and where. Every kind has the status subresource (as a kubebuilder
/// CRD with `+kubebuilder:subresource:status` and the built-in kinds with a status): a write
/// to the object keeps the stored status and one to `/status` keeps everything else
/// (apiextensions-apiserver `pkg/registry/customresource/strategy.go`, `PrepareForUpdate` of
/// the object's and of the status strategy).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum UpdateTo {
    /// `r.Update` or `r.Patch` of the object: the spec and finalizers it carries (`None`: a
    /// patch that leaves the server's).
    Object {
        spec: Option<i64>,
        finalizers: Option<u32>,
    },
    /// `r.Status().Update` or `r.Status().Patch`: the status.
    Status(i64),
    /// One named field set (`spec.replicas`, `status.ready`, a label or an annotation): a merge
    /// patch (or, with the RV, an update) carrying that field alone; a status field goes to
    /// `/status`, the rest to the object.
    Field {
        section: Section,
        key: NameId,
        value: crate::object::Value,
    },
    /// `meta.SetStatusCondition` on the object read, then `r.Status().Update` (to `/status`).
    Condition(ConditionSet),
    /// `controllerutil.AddFinalizer` / `RemoveFinalizer` of a named finalizer, then `r.Update`.
    NamedFinalizer { name: NameId, add: bool },
    /// `controllerutil.SetControllerReference` (`adopt`) or `RemoveControllerReference` of the
    /// controller reference to `owner`, then `r.Update`.
    ControllerRef { owner: Owner, adopt: bool },
}

/// One status condition as apimachinery `pkg/api/meta/conditions.go` `SetStatusCondition` sets
/// it, kept in the status's named fields: `conditions.TYPE` holds its status (`"True"`,
/// `"False"`, `"Unknown"`), `conditions.TYPE.reason`, `.message`, `.observedGeneration` and
/// `.lastTransitionTime` (ms since the start) the rest. `keys` are those five keys, interned.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ConditionSet {
    pub keys: [NameId; 5],
    pub status: NameId,
    /// `None`: empty (the field is removed).
    pub reason: Option<NameId>,
    pub message: Option<NameId>,
    pub observed_generation: i64,
    /// The moment the reconcile decided it: the transition time when the status changes.
    pub now_ms: i64,
}

impl ConditionSet {
    /// The condition set on `d`'s status: reason, message and observedGeneration always; the
    /// lastTransitionTime only when the condition is new or its status changes.
    fn apply(&self, d: &mut crate::object::BodyData) {
        use crate::object::{get, set, Value};
        let [status_key, reason_key, message_key, generation_key, time_key] = self.keys;
        let status = Some(Value::Str(self.status));
        if get(&d.status, status_key).copied() != status {
            set(&mut d.status, time_key, Some(Value::Int(self.now_ms)));
        }
        set(&mut d.status, status_key, status);
        set(&mut d.status, reason_key, self.reason.map(Value::Str));
        set(&mut d.status, message_key, self.message.map(Value::Str));
        let generation = Some(Value::Int(self.observed_generation));
        set(&mut d.status, generation_key, generation);
    }
}

/// One named field a create sets: where, its key, its value.
pub type CreateField = (Section, NameId, crate::object::Value);

/// Where a named field lives in an object.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Section {
    Spec,
    Status,
    Label,
    Annotation,
}

impl Section {
    /// As a field path starts: `spec.`, `status.`, `metadata.labels.`, `metadata.annotations.`.
    pub fn prefix(self) -> &'static str {
        match self {
            Section::Spec => "spec.",
            Section::Status => "status.",
            Section::Label => "metadata.labels.",
            Section::Annotation => "metadata.annotations.",
        }
    }

    /// Sets `key` in this section of `d` to `value`.
    pub fn set(self, d: &mut crate::object::BodyData, key: NameId, value: crate::object::Value) {
        use crate::object::{set, Value};
        match (self, value) {
            (Section::Spec, v) => set(&mut d.spec, key, Some(v)),
            (Section::Status, v) => set(&mut d.status, key, Some(v)),
            (Section::Label, Value::Str(v)) => set(&mut d.labels, key, Some(v)),
            (Section::Annotation, Value::Str(v)) => set(&mut d.annotations, key, Some(v)),
            // The planner writes labels and annotations as strings.
            (Section::Label | Section::Annotation, Value::Int(_)) => false,
        };
    }

    /// The value of `key` in this section of `o` (a label or annotation is a string).
    pub fn get(self, o: &Object, key: NameId) -> Option<crate::object::Value> {
        use crate::object::{get, Value};
        let d = o.body.data();
        match self {
            Section::Spec => get(&d.spec, key).copied(),
            Section::Status => get(&d.status, key).copied(),
            Section::Label => get(&d.labels, key).map(|&v| Value::Str(v)),
            Section::Annotation => get(&d.annotations, key).map(|&v| Value::Str(v)),
        }
    }
}

/// The UID of the owner whose reference controls `o` (its own, or one in its body marked
/// `controller`, as a user's write may add it).
pub fn controller_uid(o: &Object) -> Option<u64> {
    o.owner_refs().find(|r| r.controller).map(|r| r.owner.uid)
}

impl UpdateTo {
    /// Does it go to `/status`?
    pub fn to_status(self) -> bool {
        matches!(
            self,
            UpdateTo::Status(_)
                | UpdateTo::Condition(_)
                | UpdateTo::Field {
                    section: Section::Status,
                    ..
                }
        )
    }

    /// `o` as the server stores it after this change (its RV and generation aside).
    pub fn apply(self, o: &Object) -> Object {
        let mut now = o.clone();
        match self {
            UpdateTo::Object { spec, finalizers } => {
                now.spec = spec.unwrap_or(o.spec);
                now.finalizers = finalizers.unwrap_or(o.finalizers);
            }
            UpdateTo::Status(status) => now.status = status,
            UpdateTo::Condition(c) => now.body.edit(|d| c.apply(d)),
            UpdateTo::NamedFinalizer { name, add } => now.body.edit(|d| {
                let has = d.finalizers.contains(&name);
                match (add, has) {
                    (true, false) => d.finalizers.push(name),
                    (false, true) => d.finalizers.retain(|f| *f != name),
                    _ => {}
                }
            }),
            UpdateTo::ControllerRef { owner, adopt: true } => now.owner = Some(owner),
            UpdateTo::ControllerRef {
                owner,
                adopt: false,
            } => {
                now.owner = now.owner.filter(|w| w.uid != owner.uid);
                now.body
                    .edit(|d| (d.owners).retain(|r| !r.controller || r.owner.uid != owner.uid));
            }
            UpdateTo::Field {
                section,
                key,
                value,
            } => now.body.edit(|d| section.set(d, key, value)),
        }
        now
    }
}

/// Where a reconcile reads: the informer cache (client-go) or etcd (Anvil's consistent reads).
pub trait Reader {
    fn get(&self, kind: KindId, name: NameId) -> Option<Object>;
    /// Objects of `kind` whose owner has this UID.
    fn owned_by(&self, kind: KindId, uid: u64) -> Vec<Object>;
    /// How many of those are not marked for deletion.
    fn live_owned(&self, kind: KindId, uid: u64) -> usize {
        self.owned_by(kind, uid)
            .iter()
            .filter(|c| c.deletion_ms.is_none())
            .count()
    }
    /// The newest RV the informer of `kind` has applied (client-go 1.36
    /// `LastStoreSyncResourceVersion`); `None` for consistent reads (or no informer).
    fn synced_rv(&self, _kind: KindId) -> Option<Rv> {
        None
    }
    /// Objects of `kind` that `keep` keeps, in name order (a label selector's list).
    fn select(&self, kind: KindId, keep: &dyn Fn(&Object) -> bool) -> Vec<Object>;
    /// How many of those there are (readers with an owner index count without copying).
    fn count_owned(&self, kind: KindId, uid: u64) -> usize {
        self.owned_by(kind, uid).len()
    }
}

/// In-memory notes of edge-triggered controllers, per key and slot (a program's `remember`
/// names; `wipe-on-zero` uses slot 0); lost on a crash.
/// By name, then the key's few slots in order (not a `BTreeMap`: each `BTreeMap` type is about a
/// kilobyte of the page's gzipped wasm).
#[derive(Clone, Debug, Default, Hash, PartialEq, Eq)]
pub struct Memory(crate::store::NameMap<Vec<(u8, i64)>>);

impl Memory {
    pub fn new() -> Self {
        Memory::default()
    }

    pub fn get(&self, &(key, slot): &(NameId, u8)) -> Option<&i64> {
        let slots = self.0.get(&key)?;
        let i = slots.binary_search_by_key(&slot, |e| e.0).ok()?;
        Some(&slots[i].1)
    }

    pub fn insert(&mut self, (key, slot): (NameId, u8), value: i64) -> Option<i64> {
        let slots = self.0.get_or_insert_with(key, Vec::new);
        match slots.binary_search_by_key(&slot, |e| e.0) {
            Ok(i) => Some(std::mem::replace(&mut slots[i].1, value)),
            Err(i) => {
                slots.insert(i, (slot, value));
                None
            }
        }
    }

    pub fn remove(&mut self, &(key, slot): &(NameId, u8)) -> Option<i64> {
        let slots = self.0.get_mut(&key)?;
        let i = slots.binary_search_by_key(&slot, |e| e.0).ok()?;
        let (_, old) = slots.remove(i);
        if slots.is_empty() {
            self.0.remove(&key);
        }
        Some(old)
    }

    /// Forgets every slot of `key`.
    pub fn forget(&mut self, key: NameId) {
        self.0.remove(&key);
    }

    pub fn clear(&mut self) {
        self.0.clear();
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

fn data_name(names: &mut Names, parent: &Object) -> NameId {
    match names.get_suffixed(parent.name, Suffix::Text("data")) {
        Some(name) => name,
        None => names.intern(&format!("{}-data", names.resolve(parent.name))),
    }
}

fn owner_of(parent: &Object) -> Option<Owner> {
    Some(Owner {
        kind: parent.kind,
        name: parent.name,
        uid: parent.uid,
    })
}

/// Create an object owned by `parent`, in its namespace.
fn owned_child(parent: &Object, kind: KindId, name: NameId, spec: i64) -> Write {
    Write::Create {
        kind,
        name,
        namespace: parent.namespace,
        spec,
        owner: owner_of(parent),
        fields: None,
        generate_name: false,
    }
}

fn with_finalizer(parent: &Object, bit: u32, on: bool) -> Write {
    let finalizers = if on {
        parent.finalizers | bit
    } else {
        parent.finalizers & !bit
    };
    Write::Update {
        kind: parent.kind,
        name: parent.name,
        expect_rv: parent.rv,
        change: UpdateTo::Object {
            spec: Some(parent.spec),
            finalizers: Some(finalizers),
        },
    }
}

/// The numeric suffix of `parent-N`, for ordering children.
fn child_index(names: &Names, name: NameId) -> u64 {
    names
        .resolve(name)
        .rsplit('-')
        .next()
        .and_then(|s| s.parse().ok())
        .unwrap_or(u64::MAX)
}

/// Decides the writes of one reconcile of `key`: a built-in behaviour, or the controller's own
/// logic (`program::plan`, at `now_ms`). `live` reads etcd (`None`: the controller is cut off).
#[allow(clippy::too_many_arguments)]
pub fn plan(
    cfg: &ControllerConfig,
    key: NameId,
    finalizer_bit: u32,
    read: &dyn Reader,
    live: Option<&dyn Reader>,
    names: &mut Names,
    memory: &mut Memory,
    now_ms: crate::model::TimeMs,
) -> Plan {
    if let (Behaviour::Program, Some(p)) = (cfg.behaviour, &cfg.program) {
        return program::plan(p, key, finalizer_bit, read, live, names, memory, now_ms);
    }
    Plan {
        writes: builtin(
            cfg.behaviour,
            cfg.primary,
            key,
            finalizer_bit,
            read,
            names,
            memory,
        ),
        ..Plan::default()
    }
}

fn builtin(
    behaviour: Behaviour,
    primary: KindId,
    key: NameId,
    finalizer_bit: u32,
    read: &dyn Reader,
    names: &mut Names,
    memory: &mut Memory,
) -> Vec<Write> {
    let Some(parent) = read.get(primary, key) else {
        memory.forget(key);
        return vec![];
    };
    let bit = finalizer_bit;
    match behaviour {
        Behaviour::Children { child, finalizer } => {
            children(&parent, child, finalizer, bit, read, names)
        }
        Behaviour::Mirror { target } => mirror(&parent, target, read),
        Behaviour::StaleDelete { child, fixed } => {
            stale_delete(&parent, child, fixed, bit, read, names)
        }
        Behaviour::WipeOnZero { child } => wipe_on_zero(&parent, child, read, names, memory),
        Behaviour::Program => vec![],
        Behaviour::TwoWrites { child, fixed } => two_writes(&parent, child, fixed, read, names),
    }
}

/// `Behaviour::Children`: `parent.spec` children, and a finalizer if asked.
fn children(
    parent: &Object,
    child: KindId,
    finalizer: bool,
    finalizer_bit: u32,
    read: &dyn Reader,
    names: &mut Names,
) -> Vec<Write> {
    let deleting = parent.deletion_ms.is_some();
    let mut writes = vec![];
    let children: Vec<Object> = read
        .owned_by(child, parent.uid)
        .into_iter()
        .filter(|c| c.deletion_ms.is_none())
        .collect();
    if finalizer && deleting {
        for c in &children {
            writes.push(Write::Delete {
                kind: child,
                name: c.name,
                uid: Some(c.uid),
            });
        }
        if parent.finalizers & finalizer_bit != 0 {
            writes.push(with_finalizer(parent, finalizer_bit, false));
        }
        return writes;
    }
    if deleting {
        return writes;
    }
    if finalizer && parent.finalizers & finalizer_bit == 0 {
        writes.push(with_finalizer(parent, finalizer_bit, true));
    }
    let desired = parent.spec.clamp(0, MAX_CHILDREN) as usize;
    if children.len() < desired {
        let mut i = 0u64;
        let mut missing = desired - children.len();
        while missing > 0 {
            let name = match names.get_suffixed(parent.name, Suffix::Number(i)) {
                Some(name) => name,
                None => names.intern(&format!("{}-{i}", names.resolve(parent.name))),
            };
            if read.get(child, name).is_none() {
                writes.push(owned_child(parent, child, name, 0));
                missing -= 1;
            }
            i += 1;
        }
    } else if children.len() > desired {
        let mut sorted = children.clone();
        crate::order::sort_by_u64(&mut sorted, |c| child_index(names, c.name));
        for c in sorted.iter().skip(desired).rev() {
            writes.push(Write::Delete {
                kind: child,
                name: c.name,
                uid: Some(c.uid),
            });
        }
    }
    writes
}

/// `Behaviour::Mirror`: an object of `target` with the parent's name and spec.
fn mirror(parent: &Object, target: KindId, read: &dyn Reader) -> Vec<Write> {
    let key = parent.name;
    let deleting = parent.deletion_ms.is_some();
    let mut writes = vec![];
    if deleting {
        return writes;
    }
    match read.get(target, key) {
        None => writes.push(owned_child(parent, target, key, parent.spec)),
        Some(m) if m.spec != parent.spec => writes.push(Write::Update {
            kind: target,
            name: key,
            expect_rv: m.rv,
            change: UpdateTo::Object {
                spec: Some(parent.spec),
                finalizers: Some(m.finalizers),
            },
        }),
        Some(_) => {}
    }
    writes
}

/// `Behaviour::StaleDelete` (rabbitmq#648): the data child, deleted by name when the parent goes.
fn stale_delete(
    parent: &Object,
    child: KindId,
    fixed: bool,
    finalizer_bit: u32,
    read: &dyn Reader,
    names: &mut Names,
) -> Vec<Write> {
    let deleting = parent.deletion_ms.is_some();
    let mut writes = vec![];
    let data = data_name(names, parent);
    let cached = read.get(child, data);
    if deleting {
        if fixed {
            // Delete only our own child, and say so with a UID precondition.
            if let Some(c) = cached.filter(|c| c.owner.map(|o| o.uid) == Some(parent.uid)) {
                writes.push(Write::Delete {
                    kind: child,
                    name: data,
                    uid: Some(c.uid),
                });
            }
        } else if cached.is_some() {
            writes.push(Write::Delete {
                kind: child,
                name: data,
                uid: None,
            });
        }
        if parent.finalizers & finalizer_bit != 0 {
            writes.push(with_finalizer(parent, finalizer_bit, false));
        }
        return writes;
    }
    if parent.finalizers & finalizer_bit == 0 {
        writes.push(with_finalizer(parent, finalizer_bit, true));
    }
    if cached.is_none() {
        writes.push(owned_child(parent, child, data, 0));
    }
    writes
}

/// `Behaviour::WipeOnZero` (rabbitmq#758): the data child, wiped on an observed scale to 0.
fn wipe_on_zero(
    parent: &Object,
    child: KindId,
    read: &dyn Reader,
    names: &mut Names,
    memory: &mut Memory,
) -> Vec<Write> {
    let key = parent.name;
    let mut writes = vec![];
    let data = data_name(names, parent);
    let cached = read.get(child, data);
    // Acts on the transition to 0 it observes: a 1 -> 0 -> 1 it never saw wipes nothing.
    let wipe = parent.spec == 0 && memory.get(&(key, 0)) != Some(&0);
    memory.insert((key, 0), parent.spec);
    if wipe {
        if let Some(c) = cached {
            writes.push(Write::Delete {
                kind: child,
                name: data,
                uid: Some(c.uid),
            });
        }
    } else if parent.spec > 0 && cached.is_none() {
        writes.push(owned_child(parent, child, data, 0));
    }
    writes
}

/// `Behaviour::TwoWrites` (rabbitmq#782): create the data child, then set the status.
fn two_writes(
    parent: &Object,
    child: KindId,
    fixed: bool,
    read: &dyn Reader,
    names: &mut Names,
) -> Vec<Write> {
    let deleting = parent.deletion_ms.is_some();
    let mut writes = vec![];
    if deleting {
        return writes;
    }
    let data = data_name(names, parent);
    let exists = read.get(child, data).is_some();
    if exists && !fixed {
        // "The child exists, so we must have finished": history, not state.
        return writes;
    }
    if !exists {
        writes.push(owned_child(parent, child, data, 0));
    }
    if parent.status != parent.spec {
        writes.push(Write::Update {
            kind: parent.kind,
            name: parent.name,
            expect_rv: parent.rv,
            change: UpdateTo::Status(parent.spec),
        });
    }
    writes
}

/// The desired state of one primary object, read from the truth (etcd): what ESR checks.
pub fn desired_holds(
    cfg: &ControllerConfig,
    finalizer_bit: u32,
    parent: &Object,
    names: &Names,
    read: &dyn Reader,
) -> bool {
    if parent.deletion_ms.is_some() {
        return true;
    }
    let behaviour = cfg.behaviour;
    if let (Behaviour::Program, Some(p)) = (behaviour, &cfg.program) {
        return program::desired_holds(p, parent.name, finalizer_bit, read, names);
    }
    let data = |child: KindId| {
        names
            .get_suffixed(parent.name, Suffix::Text("data"))
            .and_then(|n| read.get(child, n))
            .filter(|c| c.owner.map(|o| o.uid) == Some(parent.uid))
    };
    match behaviour {
        Behaviour::Children { child, .. } => {
            let live = read.live_owned(child, parent.uid) as i64;
            live == parent.spec.clamp(0, MAX_CHILDREN)
        }
        Behaviour::Mirror { target } => read
            .get(target, parent.name)
            .is_some_and(|m| m.spec == parent.spec),
        Behaviour::StaleDelete { child, .. } => data(child).is_some(),
        Behaviour::WipeOnZero { child } => data(child).is_some() == (parent.spec > 0),
        Behaviour::TwoWrites { child, .. } => data(child).is_some() && parent.status == parent.spec,
        Behaviour::Program => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    /// A cache of objects by (kind, name).
    struct Cache(BTreeMap<(KindId, NameId), Object>);

    impl Reader for Cache {
        fn get(&self, kind: KindId, name: NameId) -> Option<Object> {
            self.0.get(&(kind, name)).cloned()
        }
        fn owned_by(&self, kind: KindId, uid: u64) -> Vec<Object> {
            let owned = |o: &&Object| o.kind == kind && o.owner.is_some_and(|w| w.uid == uid);
            self.0.values().filter(owned).cloned().collect()
        }
        fn select(&self, kind: KindId, keep: &dyn Fn(&Object) -> bool) -> Vec<Object> {
            let kept = |o: &&Object| o.kind == kind && keep(o);
            self.0.values().filter(kept).cloned().collect()
        }
    }

    fn object(kind: KindId, name: NameId, uid: u64, spec: i64) -> Object {
        let mut o = Object::fixture(kind, name, uid, uid + 10);
        o.spec = spec;
        o
    }

    const PARENT: KindId = KindId(0);
    const CHILD: KindId = KindId(1);

    fn run(behaviour: Behaviour, cache: &Cache, names: &mut Names) -> Vec<Write> {
        let key = names.intern("default/p");
        builtin(behaviour, PARENT, key, 1, cache, names, &mut Memory::new())
    }

    #[test]
    fn children_are_created_up_to_the_spec_and_deleted_above_it() {
        let mut names = Names::default();
        let p = object(PARENT, names.intern("default/p"), 1, 2);
        let mut cache = Cache(BTreeMap::from([((PARENT, p.name), p.clone())]));
        let made = run(
            Behaviour::Children {
                child: CHILD,
                finalizer: false,
            },
            &cache,
            &mut names,
        );
        let created: Vec<&str> = made
            .iter()
            .map(|w| match w {
                Write::Create { name, .. } => names.resolve(*name),
                _ => panic!("only creates: {w:?}"),
            })
            .collect();
        assert_eq!(created, ["default/p-0", "default/p-1"]);
        // Spec 0 with one child: it goes, with a UID precondition.
        let mut c = object(CHILD, names.intern("default/p-0"), 2, 0);
        c.owner = owner_of(&p);
        cache.0.insert((CHILD, c.name), c.clone());
        cache.0.get_mut(&(PARENT, p.name)).unwrap().spec = 0;
        let made = run(
            Behaviour::Children {
                child: CHILD,
                finalizer: false,
            },
            &cache,
            &mut names,
        );
        assert_eq!(
            made,
            [Write::Delete {
                kind: CHILD,
                name: c.name,
                uid: Some(2)
            }]
        );
    }

    #[test]
    fn the_buggy_two_writes_skips_the_status_once_the_child_exists() {
        let mut names = Names::default();
        let p = object(PARENT, names.intern("default/p"), 1, 3);
        let data = object(CHILD, names.intern("default/p-data"), 2, 0);
        let cache = Cache(BTreeMap::from([
            ((PARENT, p.name), p.clone()),
            ((CHILD, data.name), data),
        ]));
        let buggy = Behaviour::TwoWrites {
            child: CHILD,
            fixed: false,
        };
        assert_eq!(run(buggy, &cache, &mut names), []);
        let fixed = Behaviour::TwoWrites {
            child: CHILD,
            fixed: true,
        };
        let made = run(fixed, &cache, &mut names);
        assert!(
            matches!(
                made[..],
                [Write::Update {
                    change: UpdateTo::Status(3),
                    ..
                }]
            ),
            "{made:?}"
        );
    }

    #[test]
    fn a_mirror_follows_the_spec_and_a_missing_parent_forgets_its_memory() {
        let mut names = Names::default();
        let p = object(PARENT, names.intern("default/p"), 1, 4);
        let m = object(CHILD, p.name, 2, 1);
        let cache = Cache(BTreeMap::from([
            ((PARENT, p.name), p.clone()),
            ((CHILD, m.name), m),
        ]));
        let made = run(Behaviour::Mirror { target: CHILD }, &cache, &mut names);
        assert!(
            matches!(
                made[..],
                [Write::Update {
                    change: UpdateTo::Object { spec: Some(4), .. },
                    expect_rv: 12,
                    ..
                }]
            ),
            "{made:?}"
        );
        let mut memory = Memory::new();
        memory.insert((p.name, 0), 1);
        let empty = Cache(BTreeMap::new());
        let wipe = Behaviour::WipeOnZero { child: CHILD };
        assert_eq!(
            builtin(wipe, PARENT, p.name, 1, &empty, &mut names, &mut memory),
            []
        );
        assert!(memory.is_empty());
    }
}
