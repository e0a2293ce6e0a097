//! A controller's own reconcile logic: the `logic` block of a scenario, checked and compiled by
//! the script crate into this small, loop-free program, and the interpreter that runs it.
//!
//! A reconcile reads first and writes after, the way `reconcile::plan` works for the built-in
//! behaviours: every read (from the informer cache, or a live read from etcd) is taken when the
//! reconcile starts; the writes it decides are then made one a step, spread over the reconcile's
//! duration, so a crash can fall between any two of them (Sieve's intermediate state).
//!
//! Bounded by construction: no loops, at most `MAX_STATEMENTS` statements, `MAX_DEPTH` nested
//! `if`s, `MAX_BINDINGS` names, `MAX_MEMORY` remembered values; `scale` makes at most
//! `MAX_CHILDREN` creates, a list delete at most one write per item read; and a reconcile makes
//! at most `MAX_WRITES` writes.

use crate::model::{DurationMs, KindId, NameId, Names, Object, Owner, Rv};
use crate::reconcile::{Memory, Reader, Write, MAX_CHILDREN};
use crate::trace::{ApiError, ReconcileResult};

pub const MAX_STATEMENTS: usize = 256;
pub const MAX_DEPTH: usize = 8;
pub const MAX_BINDINGS: usize = 32;
pub const MAX_MEMORY: usize = 16;
pub const MAX_WRITES: usize = 4096;
/// A `key-SUFFIX` suffix is at most this long (the whole name is checked by the apiserver).
pub const MAX_SUFFIX: usize = 63;

/// A name bound by `get` or `list`: an index into `Program::bindings`.
pub type Slot = u8;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Target {
    /// The reconcile key's own name.
    Key,
    /// `key-SUFFIX`: a child named after the key.
    Suffix(String),
    /// The owner (by its ownerReference) of an object read before.
    OwnerOf(Slot),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Field {
    Spec,
    Status,
    Generation,
    Rv,
    Uid,
    /// The owner's UID (none without an owner).
    Owner,
    /// Of a list: how many items.
    Count,
    /// Of a list: how many items are not marked for deletion.
    Alive,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Value {
    Int(i64),
    Field(Slot, Field),
    Memory(u8),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CmpOp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Cond {
    /// An object read exists (a list: it has an item).
    Exists(Slot),
    /// Marked for deletion (a deletionTimestamp).
    Deleting(Slot),
    /// This controller's finalizer is on it.
    HasFinalizer(Slot),
    /// A remembered value is set.
    Remembered(u8),
    /// Compare two values; a value of an absent object or an unset memory is "none": `==` holds
    /// only between two nones, `!=` is its negation, and orderings with a none never hold.
    Cmp(Value, CmpOp, Value),
    Not(Box<Cond>),
    And(Box<Cond>, Box<Cond>),
    Or(Box<Cond>, Box<Cond>),
}

/// What a failed write does to the reconcile.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum OnError {
    /// `if err != nil { return ctrl.Result{}, err }`: the reconcile ends with the error.
    #[default]
    Return,
    /// The error is ignored and the next write goes on.
    Continue,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Outcome {
    Done,
    /// Return an error: a rate-limited retry.
    Error,
    RequeueAfter(DurationMs),
}

impl Outcome {
    /// How a reconcile that returns this ends.
    pub fn result(self) -> ReconcileResult {
        match self {
            Outcome::Done => ReconcileResult::Done,
            Outcome::Error => ReconcileResult::Error(ApiError::ReconcileError),
            Outcome::RequeueAfter(d) => ReconcileResult::RequeueAfter(d),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Stmt {
    Get {
        slot: Slot,
        kind: KindId,
        target: Target,
        live: bool,
    },
    /// Objects of `kind` whose owner is the object bound to `owner`.
    List {
        slot: Slot,
        kind: KindId,
        owner: Slot,
        live: bool,
    },
    If {
        cond: Cond,
        then: Vec<Stmt>,
        otherwise: Vec<Stmt>,
    },
    Create {
        kind: KindId,
        target: Target,
        spec: Value,
        owner: Option<Slot>,
        on_error: OnError,
    },
    /// Replace spec and/or status. `rv_check`: send the RV read (`Update`, 409 when stale);
    /// without it a merge `Patch`.
    Update {
        slot: Slot,
        spec: Option<Value>,
        status: Option<Value>,
        rv_check: bool,
        on_error: OnError,
    },
    /// Add or remove this controller's finalizer (an update with the RV read).
    Finalizer {
        slot: Slot,
        add: bool,
        on_error: OnError,
    },
    /// Delete the object bound to `slot` (a list: each item not already marked), with its UID as
    /// a precondition when `uid_check`.
    Delete {
        slot: Slot,
        uid_check: bool,
        on_error: OnError,
    },
    /// Keep `count` children `OWNER-0`, `OWNER-1`, ... of `kind` owned by `owner`: create the
    /// lowest free names, delete the highest-numbered surplus (UID precondition).
    Scale {
        kind: KindId,
        owner: Slot,
        count: Value,
        live: bool,
        on_error: OnError,
    },
    Remember {
        slot: u8,
        value: Value,
    },
    Forget {
        slot: u8,
    },
    Return(Outcome),
    /// In a `desired` block: this must hold of etcd.
    Require(Cond),
}

/// A controller's reconcile logic and, optionally, its desired state.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct Program {
    pub body: Vec<Stmt>,
    /// The `desired` block (reads from etcd and `require`s); `None`: ESR asks that a reconcile
    /// of the truth (etcd) with an empty memory would write nothing and return no error.
    pub desired: Option<Vec<Stmt>>,
    /// Names bound in `body`, by slot.
    pub bindings: Vec<String>,
    /// Names bound in `desired`, by slot (a separate run: the slots overlap `bindings`').
    pub desired_bindings: Vec<String>,
    pub memory: Vec<String>,
}

impl Program {
    /// Every statement of `blocks`, the branches of each `if` included, in order.
    fn statements<'a>(blocks: &[&'a [Stmt]]) -> Vec<&'a Stmt> {
        fn walk<'a>(s: &'a [Stmt], out: &mut Vec<&'a Stmt>) {
            for s in s {
                out.push(s);
                if let Stmt::If {
                    then, otherwise, ..
                } = s
                {
                    walk(then, out);
                    walk(otherwise, out);
                }
            }
        }
        let mut out = vec![];
        for b in blocks {
            walk(b, &mut out);
        }
        out
    }

    /// Kinds besides `primary` that the logic reads from the informer cache or writes: the ones
    /// the controller watches with `owner` by default (controller-runtime `Owns()`).
    pub fn kinds_watched(&self, primary: KindId) -> Vec<KindId> {
        let mut out: Vec<KindId> = vec![];
        for s in Self::statements(&[&self.body]) {
            if let Stmt::Get {
                kind, live: false, ..
            }
            | Stmt::List {
                kind, live: false, ..
            }
            | Stmt::Scale { kind, .. }
            | Stmt::Create { kind, .. } = s
            {
                if *kind != primary && !out.contains(kind) {
                    out.push(*kind);
                }
            }
        }
        out
    }

    /// Every kind the program names (to validate against the configuration).
    pub fn kinds(&self) -> Vec<KindId> {
        let desired = self.desired.as_deref().unwrap_or(&[]);
        Self::statements(&[&self.body, desired])
            .into_iter()
            .filter_map(|s| match s {
                Stmt::Get { kind, .. }
                | Stmt::List { kind, .. }
                | Stmt::Scale { kind, .. }
                | Stmt::Create { kind, .. } => Some(*kind),
                _ => None,
            })
            .collect()
    }

    /// (kind created, whether its name grows from the key's) for every create and scale.
    pub fn creates(&self) -> Vec<(KindId, bool)> {
        Self::statements(&[&self.body])
            .into_iter()
            .filter_map(|s| match s {
                Stmt::Create {
                    kind,
                    target: Target::Key,
                    ..
                } => Some((*kind, false)),
                Stmt::Create {
                    kind,
                    target: Target::Suffix(_),
                    ..
                } => Some((*kind, true)),
                Stmt::Scale { kind, .. } => Some((*kind, true)),
                _ => None,
            })
            .collect()
    }
}

/// Names for the interpreter: interned during a reconcile, only looked up when ESR checks.
pub trait Namer {
    fn name(&mut self, s: &str) -> Option<NameId>;
    fn resolve(&self, id: NameId) -> &str;
}

impl Namer for Names {
    fn name(&mut self, s: &str) -> Option<NameId> {
        Some(self.intern(s))
    }
    fn resolve(&self, id: NameId) -> &str {
        Names::resolve(self, id)
    }
}

/// Looks names up without adding any: a name never interned belongs to no object.
pub struct Frozen<'a>(pub &'a Names);

impl Namer for Frozen<'_> {
    fn name(&mut self, s: &str) -> Option<NameId> {
        self.0.get(s)
    }
    fn resolve(&self, id: NameId) -> &str {
        self.0.resolve(id)
    }
}

/// The writes a reconcile decided, what each failure does, and how it ends.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Plan {
    pub writes: Vec<Write>,
    /// One per write: true when its failure is ignored (`on-error continue`). Empty: none is.
    pub continue_on_error: Vec<bool>,
    /// How the reconcile ends when its writes succeed (`None`: the controller's default).
    pub outcome: Option<ReconcileResult>,
    /// What each `get` read, in order: the decision's evidence (the trace and "Why?" show it).
    pub reads: Vec<ReadNote>,
}

/// One object a reconcile read: where from, and what it found.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ReadNote {
    pub kind: KindId,
    pub name: NameId,
    /// The RV it found (`None`: absent).
    pub rv: Option<Rv>,
    pub live: bool,
}

#[derive(Clone, Debug)]
enum Bound {
    Unset,
    One(Option<Object>),
    Many(Vec<Object>),
}

struct Run<'a> {
    key: NameId,
    finalizer_bit: u32,
    cache: &'a dyn Reader,
    /// `None`: the controller cannot reach its apiserver, so live reads fail.
    live: Option<&'a dyn Reader>,
    names: &'a mut dyn Namer,
    memory: &'a mut Memory,
    bound: Vec<Bound>,
    plan: Plan,
    /// Writes with a name never interned (ESR's look-up mode): they count, they are not made.
    phantom_writes: usize,
}

/// Stops the program: `done`, `error`, `requeue after`, or a failed live read.
enum Stop {
    Return(ReconcileResult),
}

const NO_NAME: NameId = NameId(u32::MAX);

impl<'a> Run<'a> {
    fn one(&self, s: Slot) -> Option<Object> {
        match self.bound.get(s as usize) {
            Some(Bound::One(o)) => *o,
            _ => None,
        }
    }
    fn many(&self, s: Slot) -> &[Object] {
        match self.bound.get(s as usize) {
            Some(Bound::Many(v)) => v,
            _ => &[],
        }
    }
    fn reader(&self, live: bool) -> Result<&'a dyn Reader, Stop> {
        if live {
            self.live.ok_or(Stop::Return(ReconcileResult::Error(
                ApiError::ConnectionRefused,
            )))
        } else {
            Ok(self.cache)
        }
    }
    fn namespace(&mut self) -> NameId {
        let key = self.names.resolve(self.key).to_string();
        let ns = key.split_once('/').map(|x| x.0).unwrap_or("default");
        self.names.name(ns).unwrap_or(NO_NAME)
    }
    fn target_name(&mut self, t: &Target) -> Option<Option<NameId>> {
        match t {
            Target::Key => Some(Some(self.key)),
            Target::Suffix(s) => {
                let n = format!("{}-{s}", self.names.resolve(self.key));
                Some(self.names.name(&n))
            }
            Target::OwnerOf(slot) => self.one(*slot).and_then(|o| o.owner).map(|o| Some(o.name)),
        }
    }
    fn value(&self, v: &Value, memory_key: NameId) -> Option<i64> {
        match v {
            Value::Int(n) => Some(*n),
            Value::Memory(m) => self.memory.get(&(memory_key, *m)).copied(),
            Value::Field(s, f) => match f {
                Field::Count => Some(self.many(*s).len() as i64),
                Field::Alive => Some(
                    self.many(*s)
                        .iter()
                        .filter(|o| o.deletion_ms.is_none())
                        .count() as i64,
                ),
                _ => {
                    let o = self.one(*s)?;
                    match f {
                        Field::Spec => Some(o.spec),
                        Field::Status => Some(o.status),
                        Field::Generation => Some(o.generation as i64),
                        Field::Rv => Some(o.rv as i64),
                        Field::Uid => Some(o.uid as i64),
                        Field::Owner => o.owner.map(|w| w.uid as i64),
                        Field::Count | Field::Alive => None,
                    }
                }
            },
        }
    }
    fn cond(&self, c: &Cond) -> bool {
        match c {
            Cond::Exists(s) => match self.bound.get(*s as usize) {
                Some(Bound::One(o)) => o.is_some(),
                Some(Bound::Many(v)) => !v.is_empty(),
                _ => false,
            },
            Cond::Deleting(s) => self.one(*s).is_some_and(|o| o.deletion_ms.is_some()),
            Cond::HasFinalizer(s) => self
                .one(*s)
                .is_some_and(|o| o.finalizers & self.finalizer_bit != 0),
            Cond::Remembered(m) => self.memory.contains_key(&(self.key, *m)),
            Cond::Cmp(a, op, b) => {
                let (a, b) = (self.value(a, self.key), self.value(b, self.key));
                match (a, b, op) {
                    (a, b, CmpOp::Eq) => a == b,
                    (a, b, CmpOp::Ne) => a != b,
                    (Some(a), Some(b), op) => match op {
                        CmpOp::Lt => a < b,
                        CmpOp::Le => a <= b,
                        CmpOp::Gt => a > b,
                        CmpOp::Ge => a >= b,
                        CmpOp::Eq | CmpOp::Ne => unreachable!(),
                    },
                    _ => false,
                }
            }
            Cond::Not(c) => !self.cond(c),
            Cond::And(a, b) => self.cond(a) && self.cond(b),
            Cond::Or(a, b) => self.cond(a) || self.cond(b),
        }
    }
    fn push(&mut self, w: Write, on_error: OnError) {
        if self.plan.writes.len() + self.phantom_writes >= MAX_WRITES {
            return;
        }
        self.plan.writes.push(w);
        self.plan
            .continue_on_error
            .push(on_error == OnError::Continue);
    }
    fn exec(&mut self, body: &[Stmt]) -> Result<(), Stop> {
        for s in body {
            self.stmt(s)?;
        }
        Ok(())
    }
    fn stmt(&mut self, s: &Stmt) -> Result<(), Stop> {
        match s {
            Stmt::Get {
                slot,
                kind,
                target,
                live,
            } => self.stmt_get(slot, kind, target, live)?,
            Stmt::List {
                slot,
                kind,
                owner,
                live,
            } => {
                let items = match self.one(*owner) {
                    Some(o) => self.reader(*live)?.owned_by(*kind, o.uid),
                    None => vec![],
                };
                self.bound[*slot as usize] = Bound::Many(items);
            }
            Stmt::If {
                cond,
                then,
                otherwise,
            } => {
                if self.cond(cond) {
                    self.exec(then)?;
                } else {
                    self.exec(otherwise)?;
                }
            }
            Stmt::Create { .. }
            | Stmt::Update { .. }
            | Stmt::Finalizer { .. }
            | Stmt::Delete { .. }
            | Stmt::Scale { .. } => self.write_stmt(s)?,
            Stmt::Remember { slot, value } => {
                let key = (self.key, *slot);
                match self.value(value, self.key) {
                    Some(v) => self.memory.insert(key, v),
                    None => self.memory.remove(&key),
                };
            }
            Stmt::Forget { slot } => {
                self.memory.remove(&(self.key, *slot));
            }
            Stmt::Return(o) => return Err(Stop::Return(o.result())),
            Stmt::Require(_) => {}
        }
        Ok(())
    }

    /// A statement that writes: the write goes into the plan.
    fn write_stmt(&mut self, s: &Stmt) -> Result<(), Stop> {
        match s {
            Stmt::Create {
                kind,
                target,
                spec,
                owner,
                on_error,
            } => self.stmt_create(kind, target, spec, owner, on_error)?,
            Stmt::Update {
                slot,
                spec,
                status,
                rv_check,
                on_error,
            } => self.stmt_update(slot, spec, status, rv_check, on_error)?,
            Stmt::Finalizer {
                slot,
                add,
                on_error,
            } => self.stmt_finalizer(slot, add, on_error)?,
            Stmt::Delete {
                slot,
                uid_check,
                on_error,
            } => self.stmt_delete(slot, uid_check, on_error)?,
            Stmt::Scale {
                kind,
                owner,
                count,
                live,
                on_error,
            } => self.stmt_scale(kind, owner, count, live, on_error)?,
            _ => {}
        }
        Ok(())
    }

    /// `Get`: the object a statement names, from the cache (or etcd when live).
    fn stmt_get(
        &mut self,
        slot: &Slot,
        kind: &KindId,
        target: &Target,
        live: &bool,
    ) -> Result<(), Stop> {
        let r = self.reader(*live)?;
        let name = match target {
            // An owner of another kind is not this object.
            Target::OwnerOf(of) => self
                .one(*of)
                .and_then(|o| o.owner)
                .filter(|w| w.kind == *kind)
                .map(|w| w.name),
            t => self.target_name(t).flatten(),
        };
        let o = name.and_then(|n| r.get(*kind, n));
        if let Some(name) = name {
            self.plan.reads.push(ReadNote {
                kind: *kind,
                name,
                rv: o.map(|o| o.rv),
                live: *live,
            });
        }
        self.bound[*slot as usize] = Bound::One(o);
        Ok(())
    }

    /// `Create`: a create, owned by the object in `owner` if any.
    fn stmt_create(
        &mut self,
        kind: &KindId,
        target: &Target,
        spec: &Value,
        owner: &Option<Slot>,
        on_error: &OnError,
    ) -> Result<(), Stop> {
        let owner = match owner {
            Some(s) => match self.one(*s) {
                Some(o) => Some(Owner {
                    kind: o.kind,
                    name: o.name,
                    uid: o.uid,
                }),
                // SetControllerReference needs the owner: nothing to create from.
                None => return Ok(()),
            },
            None => None,
        };
        let Some(name) = self.target_name(target) else {
            return Ok(());
        };
        let spec = self.value(spec, self.key).unwrap_or(0);
        let namespace = self.namespace();
        match name {
            Some(name) => self.push(
                Write::Create {
                    kind: *kind,
                    name,
                    namespace,
                    spec,
                    owner,
                },
                *on_error,
            ),
            None => self.phantom_writes += 1,
        }
        Ok(())
    }

    /// `Update`: an update of the object in `slot`.
    fn stmt_update(
        &mut self,
        slot: &Slot,
        spec: &Option<Value>,
        status: &Option<Value>,
        rv_check: &bool,
        on_error: &OnError,
    ) -> Result<(), Stop> {
        let Some(o) = self.one(*slot) else {
            return Ok(());
        };
        let spec = match spec {
            Some(v) => self.value(v, self.key).unwrap_or(0),
            None => o.spec,
        };
        let status = match status {
            Some(v) => self.value(v, self.key).unwrap_or(0),
            None => o.status,
        };
        self.push(
            Write::Update {
                kind: o.kind,
                name: o.name,
                expect_rv: if *rv_check { o.rv } else { 0 },
                spec,
                status,
                finalizers: o.finalizers,
            },
            *on_error,
        );
        Ok(())
    }

    /// `Finalizer`: adds or removes this controller's finalizer.
    fn stmt_finalizer(&mut self, slot: &Slot, add: &bool, on_error: &OnError) -> Result<(), Stop> {
        let Some(o) = self.one(*slot) else {
            return Ok(());
        };
        let finalizers = if *add {
            o.finalizers | self.finalizer_bit
        } else {
            o.finalizers & !self.finalizer_bit
        };
        self.push(
            Write::Update {
                kind: o.kind,
                name: o.name,
                expect_rv: o.rv,
                spec: o.spec,
                status: o.status,
                finalizers,
            },
            *on_error,
        );
        Ok(())
    }

    /// `Delete`: deletes the object (or every live object) in `slot`.
    fn stmt_delete(
        &mut self,
        slot: &Slot,
        uid_check: &bool,
        on_error: &OnError,
    ) -> Result<(), Stop> {
        let targets: Vec<Object> = match &self.bound[*slot as usize] {
            Bound::One(Some(o)) => vec![*o],
            Bound::Many(v) => v
                .iter()
                .filter(|o| o.deletion_ms.is_none())
                .copied()
                .collect(),
            _ => vec![],
        };
        for o in targets {
            self.push(
                Write::Delete {
                    kind: o.kind,
                    name: o.name,
                    uid: uid_check.then_some(o.uid),
                },
                *on_error,
            );
        }
        Ok(())
    }

    /// `Scale`: creates or deletes children of `owner` until `count` remain.
    fn stmt_scale(
        &mut self,
        kind: &KindId,
        owner: &Slot,
        count: &Value,
        live: &bool,
        on_error: &OnError,
    ) -> Result<(), Stop> {
        let Some(parent) = self.one(*owner) else {
            return Ok(());
        };
        let r = self.reader(*live)?;
        let desired = self.value(count, self.key).unwrap_or(0);
        for w in scale(r, &mut *self.names, &parent, *kind, desired) {
            match w {
                Some(w) => self.push(w, *on_error),
                None => self.phantom_writes += 1,
            }
        }
        Ok(())
    }
}

/// The numeric suffix of `parent-N`, for ordering children.
fn child_index(names: &dyn Namer, name: NameId) -> u64 {
    names
        .resolve(name)
        .rsplit('-')
        .next()
        .and_then(|s| s.parse().ok())
        .unwrap_or(u64::MAX)
}

/// The writes that bring `parent`'s live children of `kind` to `desired` (clamped to
/// 0..=MAX_CHILDREN); `None` for a create whose name was never interned (ESR's look-up mode).
pub fn scale(
    read: &dyn Reader,
    names: &mut dyn Namer,
    parent: &Object,
    kind: KindId,
    desired: i64,
) -> Vec<Option<Write>> {
    let children: Vec<Object> = read
        .owned_by(kind, parent.uid)
        .into_iter()
        .filter(|c| c.deletion_ms.is_none())
        .collect();
    let desired = desired.clamp(0, MAX_CHILDREN) as usize;
    let mut writes = vec![];
    if children.len() < desired {
        let base = names.resolve(parent.name).to_string();
        let mut i = 0u64;
        let mut missing = desired - children.len();
        while missing > 0 {
            match names.name(&format!("{base}-{i}")) {
                Some(name) if read.get(kind, name).is_some() => {}
                name => {
                    writes.push(name.map(|name| Write::Create {
                        kind,
                        name,
                        namespace: parent.namespace,
                        spec: 0,
                        owner: Some(Owner {
                            kind: parent.kind,
                            name: parent.name,
                            uid: parent.uid,
                        }),
                    }));
                    missing -= 1;
                }
            }
            i += 1;
        }
    } else if children.len() > desired {
        let mut sorted = children.clone();
        sorted.sort_by_key(|c| child_index(names, c.name));
        for c in sorted.iter().skip(desired).rev() {
            writes.push(Some(Write::Delete {
                kind,
                name: c.name,
                uid: Some(c.uid),
            }));
        }
    }
    writes
}

/// Runs the logic for one reconcile of `key`: reads from `cache` (and `live`, etcd, for live
/// reads; `None` when the controller is cut off), updates `memory`, returns the plan.
#[allow(clippy::too_many_arguments)]
pub fn plan(
    program: &Program,
    key: NameId,
    finalizer_bit: u32,
    cache: &dyn Reader,
    live: Option<&dyn Reader>,
    names: &mut dyn Namer,
    memory: &mut Memory,
) -> Plan {
    let mut run = Run {
        key,
        finalizer_bit,
        cache,
        live,
        names,
        memory,
        bound: vec![Bound::Unset; program.bindings.len()],
        plan: Plan::default(),
        phantom_writes: 0,
    };
    if let Err(Stop::Return(r)) = run.exec(&program.body) {
        run.plan.outcome = Some(r);
    }
    run.plan
}

/// ESR's question for a program controller, asked of etcd: does the `desired` block hold, or
/// (without one) would a reconcile from an empty memory write nothing and return no error?
pub fn desired_holds(
    program: &Program,
    key: NameId,
    finalizer_bit: u32,
    etcd: &dyn Reader,
    names: &Names,
) -> bool {
    let mut memory = Memory::new();
    let mut frozen = Frozen(names);
    let mut run = Run {
        key,
        finalizer_bit,
        cache: etcd,
        live: Some(etcd),
        names: &mut frozen,
        memory: &mut memory,
        bound: vec![Bound::Unset; program.bindings.len().max(program.desired_bindings.len())],
        plan: Plan::default(),
        phantom_writes: 0,
    };
    match &program.desired {
        Some(desired) => {
            for s in desired {
                match s {
                    Stmt::Require(c) => {
                        if !run.cond(c) {
                            return false;
                        }
                    }
                    s => {
                        if run.stmt(s).is_err() {
                            return false;
                        }
                    }
                }
            }
            true
        }
        None => {
            let stopped = run.exec(&program.body);
            let error = matches!(stopped, Err(Stop::Return(ReconcileResult::Error(_))));
            !error && run.plan.writes.is_empty() && run.phantom_writes == 0
        }
    }
}
