//! A controller's own reconcile logic: the `logic` block of a scenario, checked and compiled by
//! the script crate into this small program, and the interpreter that runs it.
//!
//! A reconcile reads first and writes after, the way `reconcile::plan` works for the built-in
//! behaviours: every read (from the informer cache, or a live read from etcd) is taken when the
//! reconcile starts; the writes it decides are then made one a step, spread over the reconcile's
//! duration, so a crash can fall between any two of them (Sieve's intermediate state).
//!
//! Bounded by construction: loops only over a list read (at most `MAX_LIST_ITEMS` items, not
//! nested, no `remember` inside), at most `MAX_STATEMENTS` statements, `MAX_DEPTH` nested
//! `if`s, `MAX_BINDINGS` names, `MAX_MEMORY` remembered values; `scale` makes at most
//! `MAX_CHILDREN` writes, and so does a list's delete, since a reconcile that would delete or
//! scale down more than `MAX_CHILDREN` live children of one object stops the run instead
//! (`Exceeded::ChildrenPerObject`); so the compiler can check that no path through a program
//! makes more than `MAX_WRITES` writes (`most_writes`).
//!
//! The cost of a read stays bounded too: a list is counted through the reader's owner index
//! (`count`, `alive`, `exists` copy nothing), and ESR's question after every write ("would a
//! reconcile write anything?") stops at the first write it finds.

use crate::model::{DurationMs, KindId, NameId, Names, Object, Owner, Rv, TimeMs};
use crate::object::Value as Scalar;
use crate::reconcile::{ConditionSet, Memory, Reader, Section, UpdateTo, Write, MAX_CHILDREN};
use crate::trace::{ApiError, ReconcileResult};

pub const MAX_STATEMENTS: usize = 256;
pub const MAX_DEPTH: usize = 8;
pub const MAX_BINDINGS: usize = 32;
pub const MAX_MEMORY: usize = 16;
pub const MAX_WRITES: usize = 4096;
/// A `key-SUFFIX` suffix is at most this long (the whole name is checked by the apiserver).
pub const MAX_SUFFIX: usize = 63;
/// A label selector's list holds at most this many objects (more stops the run there).
pub const MAX_LIST_ITEMS: usize = MAX_CHILDREN as usize;

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
    /// A name built from text, the key's name and values (`"cfg-{db.spec.shard}"`,
    /// `key-{memory.n}`), in `namespace` or the key's. A value that is none names nothing (the
    /// statement reads an absent object, a create or delete is skipped); a name that is not a
    /// DNS subdomain reads an absent object and deletes nothing, and a create sends it, for the
    /// apiserver's 422.
    Built {
        parts: Vec<NamePart>,
        namespace: Option<String>,
    },
}

/// A piece of a built name.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum NamePart {
    Text(String),
    /// The reconcile key's name (without its namespace).
    Key,
    /// A value, an integer written as its digits or a string as its text.
    Value(Value),
}

/// At most this many `{VALUE}`s in one built name.
pub const MAX_NAME_VALUES: usize = 4;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Field {
    Spec,
    Status,
    Generation,
    Rv,
    Uid,
    /// The owner's UID (none without an owner).
    Owner,
    /// `metadata.name` (without its namespace) and `metadata.namespace` (none for a
    /// cluster-scoped object): strings, as Go's `db.Name` and `db.Namespace`.
    Name,
    Namespace,
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
    /// `A + B`, `min(A, B)`, ...: none when either side is none, on a division by zero and
    /// on an overflow of 64 bits.
    Arith(ArithOp, Box<Value>, Box<Value>),
    /// A string: `"web"`.
    Str(String),
    /// A named field of an object read: `db.spec.replicas`, `pod.metadata.labels.app` (none when
    /// the object or the field is absent).
    Path(Slot, Section, String),
    /// `count(VAR in LIST [where COND])` or `sum(VALUE for VAR in LIST [where COND])`: over the
    /// items of a list (at most `MAX_LIST_ITEMS`; a longer one, or an overflow, is none), `VAR`
    /// bound to each. Aggregates do not nest.
    Aggregate(Box<Aggregate>),
}

/// What `Value::Aggregate` computes.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Aggregate {
    pub var: Slot,
    pub list: Slot,
    pub filter: Option<Cond>,
    /// `None`: a count; else the value summed (an item where it is none adds nothing, as a
    /// Go loop would skip it).
    pub sum: Option<Value>,
}

/// An operator of the language's integer arithmetic (Go's `int64`, with `/` and `%` truncating
/// towards zero as Go's do).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ArithOp {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    Min,
    Max,
}

impl ArithOp {
    /// `a OP b`; `None` on a division by zero or an overflow.
    pub fn apply(self, a: i64, b: i64) -> Option<i64> {
        match self {
            ArithOp::Add => a.checked_add(b),
            ArithOp::Sub => a.checked_sub(b),
            ArithOp::Mul => a.checked_mul(b),
            ArithOp::Div => a.checked_div(b),
            ArithOp::Rem => a.checked_rem(b),
            ArithOp::Min => Some(a.min(b)),
            ArithOp::Max => Some(a.max(b)),
        }
    }
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
    /// This named finalizer (`example.com/cleanup`) is on it.
    HasNamedFinalizer(Slot, String),
    /// A remembered value is set.
    Remembered(u8),
    /// Compare two values; a value of an absent object or an unset memory is "none": `==` holds
    /// only between two nones, `!=` is its negation, and orderings with a none never hold.
    Cmp(Value, CmpOp, Value),
    Not(Box<Cond>),
    And(Box<Cond>, Box<Cond>),
    Or(Box<Cond>, Box<Cond>),
}

/// What a failed write does to the reconcile: Go's `if err != nil`, with controller-runtime's
/// `client.IgnoreNotFound` / `client.IgnoreAlreadyExists` and `apierrors.IsConflict` (which
/// holds for a failed precondition too: apiserver `pkg/storage/errors/storage.go` turns
/// `storage.IsInvalidObj` into `errors.NewConflict`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum OnError {
    /// `if err != nil { return ctrl.Result{}, err }`: the reconcile ends with the error.
    #[default]
    Return,
    /// Every error is ignored (network errors included) and the next write goes on.
    Continue,
    /// `client.IgnoreNotFound(err)`: a 404 is ignored, any other error returns.
    IgnoreNotFound,
    /// `client.IgnoreAlreadyExists(err)`: a create's 409 AlreadyExists is ignored.
    IgnoreAlreadyExists,
    /// `apierrors.IsConflict(err)`: a stale RV or a failed UID precondition is ignored.
    IgnoreConflict,
}

impl OnError {
    /// Does a write that failed with `e` go on to the next statement?
    pub fn ignores(self, e: ApiError) -> bool {
        match self {
            OnError::Return => false,
            OnError::Continue => true,
            OnError::IgnoreNotFound => e == ApiError::NotFound,
            OnError::IgnoreAlreadyExists => e == ApiError::AlreadyExists,
            OnError::IgnoreConflict => matches!(e, ApiError::Conflict | ApiError::UidMismatch),
        }
    }
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
    /// Objects of `kind` whose labels match `selector`, in `namespace` if given (controller-
    /// runtime `client.MatchingLabels`, `client.InNamespace`).
    Select {
        slot: Slot,
        kind: KindId,
        selector: crate::config::LabelSelector,
        namespace: Option<String>,
        live: bool,
        line: u32,
    },
    If {
        cond: Cond,
        then: Vec<Stmt>,
        otherwise: Vec<Stmt>,
    },
    /// `for VAR in LIST [where COND]`: the body once per item of the list (in name order for a
    /// selector's, the reader's order for an owner's), with `VAR` bound to it; at most
    /// `MAX_LIST_ITEMS` items, and no loop inside a loop.
    For {
        var: Slot,
        list: Slot,
        filter: Option<Cond>,
        body: Vec<Stmt>,
        line: u32,
    },
    /// `create KIND TARGET [generate-name] [spec V] [PATH = V]... [owner O]`: `fields` are the
    /// named fields, labels and annotations the object is created with (Go's object literal);
    /// with `generate_name` the name is a prefix (`metadata.generateName`).
    Create {
        kind: KindId,
        target: Target,
        spec: Value,
        fields: Vec<(Section, String, Value)>,
        generate_name: bool,
        owner: Option<Slot>,
        on_error: OnError,
        line: u32,
    },
    /// Write the spec (to the object) or the status (to `/status`): one of the two is set.
    /// `rv_check`: send the RV read (`Update`, 409 when stale); without it a merge `Patch`,
    /// which carries only the field it names.
    Update {
        slot: Slot,
        spec: Option<Value>,
        status: Option<Value>,
        rv_check: bool,
        on_error: OnError,
        line: u32,
    },
    /// Set one named field of the object in `slot`: `update NAME spec.replicas = V` (with the RV
    /// read) or `patch NAME status.ready = V` (a merge patch of that field alone); a status
    /// field goes to `/status`.
    SetField {
        slot: Slot,
        section: Section,
        key: String,
        value: Value,
        rv_check: bool,
        on_error: OnError,
        line: u32,
    },
    /// `set-condition NAME TYPE STATUS [reason R] [message M]`: apimachinery's
    /// `meta.SetStatusCondition` on the object read, then `r.Status().Update` at its RV, made
    /// only when it changed something (Go's `if meta.SetStatusCondition(...) { ... }`).
    SetCondition {
        slot: Slot,
        condition: Box<ConditionStmt>,
        on_error: OnError,
        line: u32,
    },
    /// Add or remove this controller's finalizer (an update with the RV read).
    Finalizer {
        slot: Slot,
        add: bool,
        on_error: OnError,
        line: u32,
    },
    /// Add or remove a named finalizer (`controllerutil.AddFinalizer` then `r.Update` at the RV
    /// read), made only when it changes the list (AddFinalizer's `bool`).
    NamedFinalizer {
        slot: Slot,
        finalizer: String,
        add: bool,
        on_error: OnError,
        line: u32,
    },
    /// `adopt`: `controllerutil.SetControllerReference(owner, obj)` then `r.Update`; `release`:
    /// `RemoveControllerReference`. Made only when it changes the reference; adopting an object
    /// another owner controls, or across namespaces, is the client's error (`AlreadyOwnedError`).
    OwnerRef {
        slot: Slot,
        owner: Slot,
        adopt: bool,
        on_error: OnError,
        line: u32,
    },
    /// Delete the object bound to `slot` (a list: each item not already marked), with its UID as
    /// a precondition when `uid_check`.
    Delete {
        slot: Slot,
        uid_check: bool,
        on_error: OnError,
        line: u32,
    },
    /// Keep `count` children `OWNER-0`, `OWNER-1`, ... of `kind` owned by `owner`: create the
    /// lowest free names, delete the highest-numbered surplus (UID precondition).
    Scale {
        kind: KindId,
        owner: Slot,
        count: Value,
        live: bool,
        on_error: OnError,
        line: u32,
    },
    /// `record NAME TYPE REASON "MESSAGE"`: client-go's `EventRecorder.Event(obj, type,
    /// reason, message)`, an Event about the object in `slot` (none when it is absent). The
    /// recorder is best-effort: its request never fails the reconcile.
    Record(Box<RecordStmt>),
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

/// What a `record` says: the `Event` kind, the object's slot, the event's type (`Normal` or
/// `Warning`), reason and message.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct RecordStmt {
    pub event_kind: KindId,
    pub slot: Slot,
    pub event_type: String,
    pub reason: String,
    pub message: String,
    pub line: u32,
}

/// What a `set-condition` sets: the condition's type, its status (`True`, `False` or
/// `Unknown`), its reason and message (empty when not given).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ConditionStmt {
    pub type_name: String,
    pub status: String,
    pub reason: Option<String>,
    pub message: Option<String>,
}

impl ConditionStmt {
    /// The status fields a condition of this type keeps (see `ConditionSet`).
    pub fn keys(&self) -> [String; 5] {
        let t = &self.type_name;
        [
            format!("conditions.{t}"),
            format!("conditions.{t}.reason"),
            format!("conditions.{t}.message"),
            format!("conditions.{t}.observedGeneration"),
            format!("conditions.{t}.lastTransitionTime"),
        ]
    }
}

/// `names.MaxGeneratedNameLength` (`apiserver/pkg/storage/names/generate.go`): a
/// `generateName` prefix is cut to 58 bytes (63 less the 5 random characters).
pub const MAX_GENERATED_PREFIX_LEN: usize = 58;

/// How much of a `generateName` prefix the apiserver keeps (see [`MAX_GENERATED_PREFIX_LEN`]).
pub fn generated_prefix_len(prefix: &str) -> usize {
    let mut n = prefix.len().min(MAX_GENERATED_PREFIX_LEN);
    while !prefix.is_char_boundary(n) {
        n -= 1;
    }
    n
}

/// The script line of a statement that writes (the line a limit it reaches is reported at).
pub fn write_line(s: &Stmt) -> Option<u32> {
    match s {
        Stmt::Create { line, .. }
        | Stmt::Update { line, .. }
        | Stmt::SetField { line, .. }
        | Stmt::Finalizer { line, .. }
        | Stmt::SetCondition { line, .. }
        | Stmt::NamedFinalizer { line, .. }
        | Stmt::OwnerRef { line, .. }
        | Stmt::Delete { line, .. }
        | Stmt::Scale { line, .. } => Some(*line),
        Stmt::Record(r) => Some(r.line),
        _ => None,
    }
}

/// The most writes one statement makes: one, or up to `MAX_CHILDREN` for a `scale` and for
/// the delete of a list (`is_list` says which slots hold lists).
fn writes_of(s: &Stmt, is_list: &dyn Fn(Slot) -> bool) -> usize {
    match s {
        Stmt::Scale { .. } => MAX_CHILDREN as usize,
        Stmt::Delete { slot, .. } if is_list(*slot) => MAX_CHILDREN as usize,
        s if write_line(s).is_some() => 1,
        _ => 0,
    }
}

/// A path through a program can make more than `MAX_WRITES` writes: the line of the write
/// statement where it passes the limit, and the most writes the path makes up to there.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TooManyWrites {
    pub line: u32,
    pub writes: usize,
}

/// The most writes any path through `body` makes (`None`: every path ends in a return before
/// its end), counted from `before`; or where a path passes `MAX_WRITES`.
pub fn most_writes(
    body: &[Stmt],
    before: usize,
    is_list: &dyn Fn(Slot) -> bool,
) -> Result<Option<usize>, TooManyWrites> {
    let mut n = before;
    for s in body {
        match s {
            Stmt::If {
                then, otherwise, ..
            } => {
                let a = most_writes(then, n, is_list)?;
                let b = most_writes(otherwise, n, is_list)?;
                match a.max(b) {
                    Some(m) => n = m,
                    None => return Ok(None),
                }
            }
            Stmt::Return(_) => return Ok(None),
            Stmt::For { body, line, .. } => {
                // Every item may run every write of the body.
                n += writes_upper(body, is_list).saturating_mul(MAX_LIST_ITEMS);
                if n > MAX_WRITES {
                    return Err(TooManyWrites {
                        line: *line,
                        writes: n,
                    });
                }
            }
            s => {
                n += writes_of(s, is_list);
                if n > MAX_WRITES {
                    let line = write_line(s).unwrap_or(0);
                    return Err(TooManyWrites { line, writes: n });
                }
            }
        }
    }
    Ok(Some(n))
}

/// The writes of every statement of `body`, both branches of each `if` included: a bound on
/// what one pass of a loop's body makes.
fn writes_upper(body: &[Stmt], is_list: &dyn Fn(Slot) -> bool) -> usize {
    (body.iter())
        .map(|s| match s {
            Stmt::If {
                then, otherwise, ..
            } => writes_upper(then, is_list) + writes_upper(otherwise, is_list),
            s => writes_of(s, is_list),
        })
        .sum()
}

/// A limit a reconcile ran into: the run stops there, and says which limit and where.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Exceeded {
    /// The statement at `line` would delete or scale down the live children of kind `kind` of
    /// one object, and it has more than `MAX_CHILDREN` of them.
    ChildrenPerObject {
        kind: KindId,
        owner: NameId,
        children: usize,
        line: u32,
    },
    /// The `list ... selector` at `line` found `items` objects of `kind`, more than
    /// `MAX_LIST_ITEMS`.
    ListItems {
        kind: KindId,
        items: usize,
        line: u32,
    },
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
    /// The configuration's cluster-scoped kinds: an object of one has no namespace, so a name
    /// the logic builds for it is not qualified with the key's (apimachinery: a cluster-scoped
    /// object's `metadata.namespace` is empty).
    pub cluster_scoped: Vec<KindId>,
    /// The configuration's kind names, by `KindId`: a `record`'s `involvedObject.kind`.
    pub kind_names: Vec<String>,
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
                if let Stmt::For { body, .. } = s {
                    walk(body, out);
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
            | Stmt::Select {
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
                | Stmt::Select { kind, .. }
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
                Stmt::Create {
                    kind,
                    target: Target::Built { parts, .. },
                    ..
                } => Some((*kind, parts.contains(&NamePart::Key))),
                Stmt::Scale { kind, .. } => Some((*kind, true)),
                _ => None,
            })
            .collect()
    }
}

/// Names for the interpreter: interned during a reconcile, only looked up when ESR checks.
pub trait Namer {
    fn name(&mut self, s: &str) -> Option<NameId>;
    /// The id of `s` if it was ever interned (a look-up that adds nothing).
    fn find(&self, s: &str) -> Option<NameId>;
    fn resolve(&self, id: NameId) -> &str;
}

impl Namer for Names {
    fn name(&mut self, s: &str) -> Option<NameId> {
        Some(self.intern(s))
    }
    fn find(&self, s: &str) -> Option<NameId> {
        self.get(s)
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
    fn find(&self, s: &str) -> Option<NameId> {
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
    /// One per write: which of its failures are ignored (`on-error ...`). Empty: none is.
    pub on_error: Vec<OnError>,
    /// How the reconcile ends when its writes succeed (`None`: the controller's default).
    pub outcome: Option<ReconcileResult>,
    /// What each `get` read, in order: the decision's evidence (the trace and "Why?" show it).
    pub reads: Vec<ReadNote>,
    /// A limit the reconcile ran into (it then makes no write: the run stops).
    pub exceeded: Option<Exceeded>,
    /// The `remember`s and `forget`s that follow a write, in order: each takes effect once the
    /// writes before it went through (those before any write take effect at once).
    pub memory: Vec<MemoryChange>,
    /// Per write: the earlier write of the same bound object whose response RV it sends, as Go's
    /// client fills the object with the response (empty: none does).
    pub rv_from: Vec<Option<u32>>,
}

/// A `remember` (`value`) or `forget` (`None`) of the reconcile's key, made once the first
/// `after_writes` writes of its reconcile succeeded or had their error ignored: Go's
/// `r.applied[name] = v` runs after `r.Update` returned nil, never when it failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct MemoryChange {
    pub after_writes: u32,
    pub slot: u8,
    pub value: Option<i64>,
}

/// Makes the changes of `key`'s memory that wait for exactly `done` writes.
pub fn apply_memory(memory: &mut Memory, key: NameId, changes: &[MemoryChange], done: u32) {
    for c in changes.iter().filter(|c| c.after_writes == done) {
        match c.value {
            Some(v) => memory.insert((key, c.slot), v),
            None => memory.remove(&(key, c.slot)),
        };
    }
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
    /// A list: the objects of `kind` owned by the object with UID `uid` (`None`: its owner is
    /// absent, so none), read through the reader's owner index when the program asks, since a
    /// count or `exists` needs no copy of them.
    Owned {
        kind: KindId,
        uid: Option<u64>,
        live: bool,
    },
    /// A label selector's list: the objects it found (at most `MAX_LIST_ITEMS`).
    Items(Vec<Object>),
}

struct Run<'a> {
    key: NameId,
    /// The program's `cluster_scoped`.
    cluster_scoped: &'a [KindId],
    /// The program's `kind_names`.
    kind_names: &'a [String],
    finalizer_bit: u32,
    cache: &'a dyn Reader,
    /// `None`: the controller cannot reach its apiserver, so live reads fail.
    live: Option<&'a dyn Reader>,
    names: &'a mut dyn Namer,
    /// The memory as the reconcile started; what it changes waits in `plan.memory`.
    memory: &'a Memory,
    bound: Vec<Bound>,
    /// Per slot: the last write planned of the object bound there (its response refreshes it).
    last_write: Vec<Option<u32>>,
    plan: Plan,
    /// ESR's question: the program stops at its first write (`Stop::Wrote`), made or not.
    dry: bool,
    /// The item an aggregate is looking at, bound to its variable's slot.
    item: std::cell::RefCell<Option<(Slot, Object)>>,
    /// When the reconcile runs (a condition's lastTransitionTime).
    now_ms: TimeMs,
    /// Where names are built before they are looked up (see [`Run::target_name`]).
    name_buf: String,
}

/// Stops the program: `done`, `error`, `requeue after`, a failed live read, the first write of
/// a dry run, or a limit.
enum Stop {
    Return(ReconcileResult),
    Wrote,
    Exceeded(Exceeded),
}

const NO_NAME: NameId = NameId(u32::MAX);

impl<'a> Run<'a> {
    fn one(&self, s: Slot) -> Option<Object> {
        if let Some((slot, o)) = &*self.item.borrow() {
            if *slot == s {
                return Some(o.clone());
            }
        }
        match self.bound.get(s as usize) {
            Some(Bound::One(o)) => o.clone(),
            _ => None,
        }
    }
    /// A list's reader and owner: `None` for a slot that holds no list, or a list of nothing.
    fn list(&self, s: Slot) -> Option<(&'a dyn Reader, KindId, u64)> {
        match self.bound.get(s as usize) {
            // A live list was read (the statement stopped the program if it could not be).
            Some(&Bound::Owned {
                kind,
                uid: Some(uid),
                live,
            }) => Some((self.reader(live).unwrap_or(self.cache), kind, uid)),
            _ => None,
        }
    }
    /// How many objects a list holds, and how many of them are not marked for deletion.
    fn list_counts(&self, s: Slot) -> (usize, usize) {
        if let Some(Bound::Items(items)) = self.bound.get(s as usize) {
            let alive = items.iter().filter(|o| o.deletion_ms.is_none()).count();
            return (items.len(), alive);
        }
        self.list(s).map_or((0, 0), |(r, kind, uid)| {
            (r.count_owned(kind, uid), r.live_owned(kind, uid))
        })
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
    /// controllerutil.go `validateOwner`: a namespaced owner must be in the object's own
    /// namespace (so never owns a cluster-scoped object); a cluster-scoped owner may own
    /// anything. `SetControllerReference` returns the error before any request is made.
    fn owner_refused(
        &self,
        owner_kind: KindId,
        owner_namespace: NameId,
        namespace: NameId,
    ) -> bool {
        !self.cluster_scoped.contains(&owner_kind) && owner_namespace != namespace
    }

    /// The namespace of an object of `kind` named `name`: none (the empty name) for a
    /// cluster-scoped kind, else the name's (`ns/name`).
    fn namespace_of(&mut self, kind: KindId, name: NameId) -> NameId {
        let scope = crate::model::Scope::of(self.cluster_scoped.contains(&kind));
        let mut buf = std::mem::take(&mut self.name_buf);
        buf.clear();
        buf.push_str(scope.namespace(self.names.resolve(name)));
        let id = self.names.name(&buf).unwrap_or(NO_NAME);
        self.name_buf = buf;
        id
    }
    /// The name an object of `kind` that `t` names has: `ns/name`, or the bare name for a
    /// cluster-scoped kind. Built in `name_buf`, which every run reuses: this runs for most
    /// statements of every reconcile, and a string per piece was a third of a search's time.
    fn target_name(&mut self, t: &Target, kind: KindId) -> Option<Option<NameId>> {
        self.target_name_as(t, kind, false)
    }

    /// [`Run::target_name`], or with `create` the name (or `generateName` prefix) a create
    /// sends: not checked here, as the apiserver judges it (a 422 the reconcile returns).
    fn target_name_as(&mut self, t: &Target, kind: KindId, create: bool) -> Option<Option<NameId>> {
        if let Target::OwnerOf(slot) = t {
            return self.one(*slot).and_then(|o| o.owner).map(|o| Some(o.name));
        }
        let cluster_scoped = self.cluster_scoped.contains(&kind);
        let mut buf = std::mem::take(&mut self.name_buf);
        buf.clear();
        let built = self.build_name(t, cluster_scoped, create, &mut buf);
        let id = built.map(|()| self.names.name(&buf));
        self.name_buf = buf;
        id
    }
    /// [`Run::target_name`]'s text into `buf` (empty); `None` when it names nothing: a none
    /// value in it, or (to read or delete by) a name no object can have, which a GET would
    /// answer 404.
    fn build_name(
        &self,
        t: &Target,
        cluster_scoped: bool,
        create: bool,
        buf: &mut String,
    ) -> Option<()> {
        // The key's namespace (`default` for a cluster-scoped key) and name.
        let key = self.names.resolve(self.key);
        let (key_ns, key_name) = key.split_once('/').unwrap_or(("default", key));
        match t {
            Target::OwnerOf(_) => None,
            // The key's own name, qualified as the kind's objects are.
            Target::Key | Target::Suffix(_) => {
                if !cluster_scoped {
                    buf.push_str(key_ns);
                    buf.push('/');
                }
                buf.push_str(key_name);
                if let Target::Suffix(s) = t {
                    buf.push('-');
                    buf.push_str(s);
                }
                Some(())
            }
            Target::Built { parts, namespace } => {
                if !cluster_scoped {
                    buf.push_str(namespace.as_deref().unwrap_or(key_ns));
                    buf.push('/');
                }
                let start = buf.len();
                for p in parts {
                    match p {
                        NamePart::Text(t) => buf.push_str(t),
                        NamePart::Key => buf.push_str(key_name),
                        NamePart::Value(Value::Field(s, Field::Name)) => {
                            buf.push_str(self.short_name(*s)?)
                        }
                        NamePart::Value(v) => match self.scalar(v, self.key)? {
                            Scalar::Int(n) => {
                                use std::fmt::Write;
                                let _ = write!(buf, "{n}");
                            }
                            Scalar::Str(NO_NAME) => return None,
                            Scalar::Str(id) => buf.push_str(self.names.resolve(id)),
                        },
                    }
                }
                let name = &buf[start..];
                (create || crate::validation::dns_subdomain_error(name).is_none()).then_some(())
            }
        }
    }
    /// The name of the object in `slot`, without its namespace (`metadata.name`).
    fn short_name(&self, slot: Slot) -> Option<&str> {
        let o = self.one(slot)?;
        let full = self.names.resolve(o.name);
        Some(full.rsplit_once('/').map_or(full, |(_, n)| n))
    }
    /// A value as an integer (none for a string).
    fn value(&self, v: &Value, memory_key: NameId) -> Option<i64> {
        match self.scalar(v, memory_key)? {
            Scalar::Int(n) => Some(n),
            Scalar::Str(_) => None,
        }
    }
    /// A value, a string or an integer. A string no object ever held was never interned: it is
    /// `NO_NAME`, equal to no field's value.
    fn scalar(&self, v: &Value, memory_key: NameId) -> Option<Scalar> {
        match v {
            Value::Str(text) => Some(Scalar::Str(self.names.find(text).unwrap_or(NO_NAME))),
            Value::Field(s, Field::Name) => {
                let short = self.short_name(*s)?;
                Some(Scalar::Str(self.names.find(short).unwrap_or(NO_NAME)))
            }
            Value::Field(s, Field::Namespace) => {
                let o = self.one(*s)?;
                (!self.names.resolve(o.namespace).is_empty()).then_some(Scalar::Str(o.namespace))
            }
            Value::Path(s, section, key) => {
                let o = self.one(*s)?;
                section.get(&o, self.names.find(key)?)
            }
            v => self.int(v, memory_key).map(Scalar::Int),
        }
    }
    fn int(&self, v: &Value, memory_key: NameId) -> Option<i64> {
        match v {
            // Read by `scalar`.
            Value::Str(_) | Value::Path(..) => None,
            Value::Int(n) => Some(*n),
            Value::Memory(m) => self.remembered(memory_key, *m),
            Value::Arith(op, a, b) => {
                op.apply(self.value(a, memory_key)?, self.value(b, memory_key)?)
            }
            Value::Aggregate(a) => self.aggregate(a, memory_key),
            Value::Field(s, f) => match f {
                Field::Count => Some(self.list_counts(*s).0 as i64),
                Field::Alive => Some(self.list_counts(*s).1 as i64),
                _ => {
                    let o = self.one(*s)?;
                    match f {
                        Field::Spec => Some(o.spec),
                        Field::Status => Some(o.status),
                        Field::Generation => Some(o.generation as i64),
                        Field::Rv => Some(o.rv as i64),
                        Field::Uid => Some(o.uid as i64),
                        Field::Owner => o.owner.map(|w| w.uid as i64),
                        Field::Count | Field::Alive | Field::Name | Field::Namespace => None,
                    }
                }
            },
        }
    }
    /// A count or a sum over a list's items (none for a list of more than `MAX_LIST_ITEMS`).
    fn aggregate(&self, a: &Aggregate, memory_key: NameId) -> Option<i64> {
        let items = self.items(a.list, 0).ok()?;
        let mut total = 0i64;
        for o in items {
            *self.item.borrow_mut() = Some((a.var, o));
            let kept = a.filter.as_ref().is_none_or(|c| self.cond(c));
            let add = match (&a.sum, kept) {
                (_, false) => Some(0),
                (None, true) => Some(1),
                (Some(v), true) => Some(self.value(v, memory_key).unwrap_or(0)),
            };
            let next = add.and_then(|n| total.checked_add(n));
            let Some(next) = next else {
                *self.item.borrow_mut() = None;
                return None;
            };
            total = next;
        }
        *self.item.borrow_mut() = None;
        Some(total)
    }

    /// The items of the list in `slot` (copies), at most `MAX_LIST_ITEMS` (more stops the run at
    /// `line`).
    fn items(&self, slot: Slot, line: u32) -> Result<Vec<Object>, Stop> {
        let items = match self.bound.get(slot as usize) {
            Some(Bound::Items(items)) => return Ok(items.clone()),
            _ => match self.list(slot) {
                Some((r, kind, uid)) => {
                    let n = r.count_owned(kind, uid);
                    if n > MAX_LIST_ITEMS {
                        return Err(Stop::Exceeded(Exceeded::ListItems {
                            kind,
                            items: n,
                            line,
                        }));
                    }
                    r.owned_by(kind, uid)
                }
                None => vec![],
            },
        };
        Ok(items)
    }

    /// The objects of `kind` that `reader` holds whose labels match `selector`, in `namespace`
    /// if given (`apimachinery/pkg/labels/selector.go` `Matches`: `!=` and `!k` hold for an
    /// object without the key). A name never interned is on no object.
    fn select(
        &self,
        reader: &dyn Reader,
        kind: KindId,
        selector: &crate::config::LabelSelector,
        namespace: Option<&str>,
    ) -> Vec<Object> {
        let names = &*self.names;
        let ns = namespace.map(|n| names.find(n));
        // Each requirement's key looked up once, not once an object.
        let keys: Vec<Option<NameId>> = (selector.0.iter()).map(|r| names.find(&r.key)).collect();
        let keep = |o: &Object| {
            ns.is_none_or(|n| n == Some(o.namespace))
                && (selector.0.iter().zip(&keys)).all(|(r, k)| {
                    let v = k.and_then(|k| o.body.label(k));
                    r.matches(v.map(|v| names.resolve(v)))
                })
        };
        reader.select(kind, &keep)
    }
    /// A remembered value as this reconcile sees it: its own `remember`s and `forget`s first.
    fn remembered(&self, key: NameId, m: u8) -> Option<i64> {
        match self.plan.memory.iter().rev().find(|c| c.slot == m) {
            Some(c) if key == self.key => c.value,
            _ => self.memory.get(&(key, m)).copied(),
        }
    }

    fn cond(&self, c: &Cond) -> bool {
        match c {
            Cond::Exists(s) if self.item.borrow().as_ref().is_some_and(|i| i.0 == *s) => true,
            Cond::Exists(s) => match self.bound.get(*s as usize) {
                Some(Bound::One(o)) => o.is_some(),
                Some(Bound::Owned { .. } | Bound::Items(_)) => self.list_counts(*s).0 > 0,
                _ => false,
            },
            Cond::Deleting(s) => self.one(*s).is_some_and(|o| o.deletion_ms.is_some()),
            Cond::HasFinalizer(s) => self
                .one(*s)
                .is_some_and(|o| o.finalizers & self.finalizer_bit != 0),
            Cond::HasNamedFinalizer(s, f) => match (self.one(*s), self.names.find(f)) {
                (Some(o), Some(f)) => o.body.data().finalizers.contains(&f),
                _ => false,
            },
            Cond::Remembered(m) => self.remembered(self.key, *m).is_some(),
            Cond::Cmp(a, op, b) => {
                let (a, b) = (self.scalar(a, self.key), self.scalar(b, self.key));
                match (a, b, op) {
                    (a, b, CmpOp::Eq) => a == b,
                    (a, b, CmpOp::Ne) => a != b,
                    // Strings are only equal or not (the compiler says so).
                    (Some(Scalar::Int(a)), Some(Scalar::Int(b)), op) => match op {
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
    /// A write the program decided (`None`: one to a name never interned, in a dry run).
    fn push(&mut self, w: Option<Write>, on_error: OnError) -> Result<(), Stop> {
        let Some(w) = w.filter(|_| !self.dry) else {
            return Err(Stop::Wrote);
        };
        // `most_writes` bounds every path when the program is compiled.
        debug_assert!(self.plan.writes.len() < MAX_WRITES);
        self.plan.writes.push(w);
        self.plan.on_error.push(on_error);
        self.plan.rv_from.push(None);
        Ok(())
    }

    /// An update of the object bound to `slot`: it sends the RV of the last write of that object
    /// in this reconcile when there was one, and the bound object now holds what it wrote
    /// (controller-runtime `pkg/client/typed_client.go`: `Update` and `Patch` decode the
    /// response `Into(obj)`), so later statements and writes see it.
    fn push_update(
        &mut self,
        slot: Slot,
        o: Object,
        change: UpdateTo,
        expect_rv: Rv,
        on_error: OnError,
    ) -> Result<(), Stop> {
        let update = Write::Update {
            kind: o.kind,
            name: o.name,
            expect_rv,
            change,
        };
        self.push(Some(update), on_error)?;
        let i = self.plan.writes.len() as u32 - 1;
        let last = &mut self.last_write[slot as usize];
        self.plan.rv_from[i as usize] = last.replace(i);
        self.bound[slot as usize] = Bound::One(Some(change.apply(&o)));
        Ok(())
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
                let uid = self.one(*owner).map(|o| o.uid);
                if uid.is_some() {
                    self.reader(*live)?;
                }
                self.bound[*slot as usize] = Bound::Owned {
                    kind: *kind,
                    uid,
                    live: *live,
                };
            }
            Stmt::Select {
                slot,
                kind,
                selector,
                namespace,
                live,
                line,
            } => {
                let r = self.reader(*live)?;
                let items = self.select(r, *kind, selector, namespace.as_deref());
                if items.len() > MAX_LIST_ITEMS {
                    return Err(Stop::Exceeded(Exceeded::ListItems {
                        kind: *kind,
                        items: items.len(),
                        line: *line,
                    }));
                }
                self.bound[*slot as usize] = Bound::Items(items);
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
            Stmt::For {
                var,
                list,
                filter,
                body,
                line,
            } => {
                for o in self.items(*list, *line)? {
                    self.bound[*var as usize] = Bound::One(Some(o));
                    self.last_write[*var as usize] = None;
                    if filter.as_ref().is_none_or(|c| self.cond(c)) {
                        self.exec(body)?;
                    }
                }
            }
            Stmt::Create { .. }
            | Stmt::Update { .. }
            | Stmt::SetField { .. }
            | Stmt::Finalizer { .. }
            | Stmt::SetCondition { .. }
            | Stmt::NamedFinalizer { .. }
            | Stmt::OwnerRef { .. }
            | Stmt::Delete { .. }
            | Stmt::Scale { .. } => self.write_stmt(s)?,
            // An Event is no part of the desired state: ESR's dry run passes over it.
            Stmt::Record(r) if !self.dry => self.stmt_record(r)?,
            Stmt::Record(_) => {}
            Stmt::Remember { slot, value } => {
                let value = self.value(value, self.key);
                self.change_memory(*slot, value);
            }
            Stmt::Forget { slot } => self.change_memory(*slot, None),
            Stmt::Return(o) => return Err(Stop::Return(o.result())),
            Stmt::Require(_) => {}
        }
        Ok(())
    }

    /// `record`: an Event about the bound object, named and counted by the controller's
    /// correlator when the write is made (`sim::controller` `correlate`).
    fn stmt_record(&mut self, r: &RecordStmt) -> Result<(), Stop> {
        let Some(o) = self.one(r.slot) else {
            return Ok(());
        };
        let kind_name = self
            .kind_names
            .get(o.kind.index())
            .map_or("", String::as_str);
        // `makeEvent`: in the object's namespace, and a cluster-scoped object's in `default`.
        let namespace = match self.names.resolve(o.namespace) {
            "" => crate::model::DEFAULT_NAMESPACE_PREFIX.trim_end_matches('/'),
            ns => ns,
        }
        .to_string();
        let (Some(namespace), Some(involved_kind), Some(event_type), Some(reason), Some(message)) = (
            self.names.name(&namespace),
            self.names.name(kind_name),
            self.names.name(&r.event_type),
            self.names.name(&r.reason),
            self.names.name(&r.message),
        ) else {
            return Ok(());
        };
        let event = Write::Event(crate::reconcile::EventRecord {
            kind: r.event_kind,
            namespace,
            involved_kind,
            involved: o.name,
            involved_uid: o.uid,
            event_type,
            reason,
            message,
            name: NameId(0),
            count: 0,
            first_ms: 0,
            now_ms: 0,
        });
        // client-go's recorder drops what it cannot send (`recordToSink`): never an error.
        self.push(Some(event), OnError::Continue)
    }

    /// A `remember` or `forget`: it waits for the writes planned before it.
    fn change_memory(&mut self, slot: u8, value: Option<i64>) {
        // At most one change per statement run, and no `remember` runs in a loop.
        debug_assert!(self.plan.memory.len() < MAX_STATEMENTS);
        self.plan.memory.push(MemoryChange {
            after_writes: self.plan.writes.len() as u32,
            slot,
            value,
        });
    }

    /// A statement that writes: the write goes into the plan.
    fn write_stmt(&mut self, s: &Stmt) -> Result<(), Stop> {
        match s {
            Stmt::Create {
                kind,
                target,
                spec,
                fields,
                generate_name,
                owner,
                on_error,
                ..
            } => self.stmt_create(
                (kind, target, *generate_name),
                (spec, fields),
                owner,
                on_error,
            )?,
            Stmt::Update {
                slot,
                spec,
                status,
                rv_check,
                on_error,
                ..
            } => self.stmt_update(slot, spec, status, rv_check, on_error)?,
            Stmt::SetField {
                slot,
                section,
                key,
                value,
                rv_check,
                on_error,
                ..
            } => self.stmt_set_field(*slot, (*section, key, value), *rv_check, *on_error)?,
            Stmt::Finalizer {
                slot,
                add,
                on_error,
                ..
            } => self.stmt_finalizer(slot, add, on_error)?,
            Stmt::SetCondition {
                slot,
                condition,
                on_error,
                ..
            } => self.stmt_set_condition(*slot, condition, *on_error)?,
            Stmt::NamedFinalizer {
                slot,
                finalizer,
                add,
                on_error,
                ..
            } => self.stmt_named_finalizer(*slot, finalizer, *add, *on_error)?,
            Stmt::OwnerRef {
                slot,
                owner,
                adopt,
                on_error,
                ..
            } => self.stmt_owner_ref(*slot, *owner, *adopt, *on_error)?,
            Stmt::Delete {
                slot,
                uid_check,
                on_error,
                line,
            } => self.stmt_delete(slot, uid_check, on_error, *line)?,
            Stmt::Scale {
                kind,
                owner,
                count,
                live,
                on_error,
                line,
            } => self.stmt_scale((kind, owner, count, live), on_error, *line)?,
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
            t => self.target_name(t, *kind).flatten(),
        };
        let o = name.and_then(|n| r.get(*kind, n));
        if let Some(name) = name {
            self.plan.reads.push(ReadNote {
                kind: *kind,
                name,
                rv: o.as_ref().map(|o| o.rv),
                live: *live,
            });
        }
        self.bound[*slot as usize] = Bound::One(o);
        Ok(())
    }

    /// `Create`: a create, owned by the object in `owner` if any.
    fn stmt_create(
        &mut self,
        (kind, target, generate_name): (&KindId, &Target, bool),
        (spec, fields): (&Value, &[(Section, String, Value)]),
        owner: &Option<Slot>,
        on_error: &OnError,
    ) -> Result<(), Stop> {
        let owner = match owner {
            Some(s) => match self.one(*s) {
                Some(o) => Some((
                    Owner {
                        kind: o.kind,
                        name: o.name,
                        uid: o.uid,
                    },
                    o.namespace,
                )),
                // SetControllerReference needs the owner: nothing to create from.
                None => return Ok(()),
            },
            None => None,
        };
        let Some(name) = self.target_name_as(target, *kind, true) else {
            return Ok(());
        };
        let spec = self.value(spec, self.key).unwrap_or(0);
        let namespace = name.map_or(NO_NAME, |name| self.namespace_of(*kind, name));
        let owner = match owner {
            Some((by, by_namespace)) if self.owner_refused(by.kind, by_namespace, namespace) => {
                return Err(Stop::Return(Outcome::Error.result()))
            }
            owner => owner.map(|(by, _)| by),
        };
        let fields = match fields {
            [] => None,
            fields => Some(self.create_fields(fields)?),
        };
        let create = name.map(|name| Write::Create {
            kind: *kind,
            name,
            namespace,
            spec,
            owner,
            fields,
            generate_name,
        });
        self.push(create, *on_error)
    }

    /// A create's named fields, as `stmt_set_field` writes one: a number in a label or an
    /// annotation is its digits, a none value is no field at all, and a key or a string never
    /// interned (ESR's look-up mode) is a write all the same.
    fn create_fields(
        &mut self,
        fields: &[(Section, String, Value)],
    ) -> Result<std::sync::Arc<[crate::reconcile::CreateField]>, Stop> {
        let mut out = Vec::with_capacity(fields.len());
        for (section, key, value) in fields {
            let Some(v) = self.field_value(*section, value) else {
                continue;
            };
            let (Some(v), Some(key)) = (v, self.names.name(key)) else {
                return Err(Stop::Wrote);
            };
            out.push((*section, key, v));
        }
        Ok(out.into())
    }

    /// The value a named field is written as (see `create_fields`): `None` when it is none
    /// (nothing is written), `Some(None)` when a string it needs was never interned.
    fn field_value(&mut self, section: Section, value: &Value) -> Option<Option<Scalar>> {
        let v = self.scalar(value, self.key)?;
        Some(match (section, v) {
            (Section::Label | Section::Annotation, Scalar::Int(n)) => {
                self.names.name(&n.to_string()).map(Scalar::Str)
            }
            (_, Scalar::Str(NO_NAME)) => match value {
                Value::Str(text) => self.names.name(text).map(Scalar::Str),
                Value::Field(s, Field::Name) => {
                    let short = self.short_name(*s)?.to_string();
                    self.names.name(&short).map(Scalar::Str)
                }
                _ => None,
            },
            (_, v) => Some(v),
        })
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
        let change = match (spec, status) {
            (_, Some(v)) => UpdateTo::Status(self.value(v, self.key).unwrap_or(0)),
            (spec, None) => UpdateTo::Object {
                spec: Some(
                    spec.as_ref()
                        .map_or(o.spec, |v| self.value(v, self.key).unwrap_or(0)),
                ),
                // A PUT sends the whole object; a merge patch only what it names.
                finalizers: rv_check.then_some(o.finalizers),
            },
        };
        let expect_rv = if *rv_check { o.rv } else { 0 };
        self.push_update(*slot, o, change, expect_rv, *on_error)
    }

    /// `SetField`: a write of one named field of the object in `slot` (nothing when the value is
    /// none: there is nothing to set it to).
    fn stmt_set_field(
        &mut self,
        slot: Slot,
        (section, key, value): (Section, &str, &Value),
        rv_check: bool,
        on_error: OnError,
    ) -> Result<(), Stop> {
        let Some(o) = self.one(slot) else {
            return Ok(());
        };
        // Labels and annotations are strings: a number is written as its digits. A string read
        // or written here is interned (`None` only in ESR's look-up mode: a write all the same).
        let Some(v) = self.field_value(section, value) else {
            return Ok(());
        };
        let (Some(v), Some(key)) = (v, self.names.name(key)) else {
            return Err(Stop::Wrote);
        };
        let change = UpdateTo::Field {
            section,
            key,
            value: v,
        };
        let expect_rv = if rv_check { o.rv } else { 0 };
        self.push_update(slot, o, change, expect_rv, on_error)
    }

    /// `SetCondition`: the condition set on the object read and, if that changed it, one update
    /// of `/status` at the RV read. A key or value never interned (ESR's look-up mode) is on no
    /// object: the condition would change it.
    fn stmt_set_condition(
        &mut self,
        slot: Slot,
        c: &ConditionStmt,
        on_error: OnError,
    ) -> Result<(), Stop> {
        let Some(o) = self.one(slot) else {
            return Ok(());
        };
        let [k0, k1, k2, k3, k4] = c.keys().map(|k| self.names.name(&k));
        let (Some(k0), Some(k1), Some(k2), Some(k3), Some(k4)) = (k0, k1, k2, k3, k4) else {
            return Err(Stop::Wrote);
        };
        let mut text = |t: &Option<String>| match t {
            Some(t) => self.names.name(t).map(Some).ok_or(Stop::Wrote),
            None => Ok(None),
        };
        let (reason, message) = (text(&c.reason)?, text(&c.message)?);
        let status = self.names.name(&c.status).ok_or(Stop::Wrote)?;
        let change = UpdateTo::Condition(ConditionSet {
            keys: [k0, k1, k2, k3, k4],
            status,
            reason,
            message,
            observed_generation: o.generation as i64,
            now_ms: self.now_ms.ms() as i64,
        });
        if change.apply(&o).body == o.body {
            return Ok(());
        }
        let rv = o.rv;
        self.push_update(slot, o, change, rv, on_error)
    }

    /// `NamedFinalizer`: one update at the RV read when the finalizer list changes.
    fn stmt_named_finalizer(
        &mut self,
        slot: Slot,
        finalizer: &str,
        add: bool,
        on_error: OnError,
    ) -> Result<(), Stop> {
        let Some(o) = self.one(slot) else {
            return Ok(());
        };
        let name = match (self.names.name(finalizer), add) {
            (Some(n), _) => n,
            // Never interned: on no object, so an add changes it and a remove does not.
            (None, true) => return Err(Stop::Wrote),
            (None, false) => return Ok(()),
        };
        let change = UpdateTo::NamedFinalizer { name, add };
        if change.apply(&o) == o {
            return Ok(());
        }
        let rv = o.rv;
        self.push_update(slot, o, change, rv, on_error)
    }

    /// `OwnerRef`: sets or removes the controller reference to the object in `owner`.
    fn stmt_owner_ref(
        &mut self,
        slot: Slot,
        owner: Slot,
        adopt: bool,
        on_error: OnError,
    ) -> Result<(), Stop> {
        let (Some(o), Some(by)) = (self.one(slot), self.one(owner)) else {
            return Ok(());
        };
        let reference = Owner {
            kind: by.kind,
            name: by.name,
            uid: by.uid,
        };
        let controller = crate::reconcile::controller_uid(&o);
        match (adopt, controller) {
            (true, Some(uid)) if uid == by.uid => return Ok(()),
            // controllerutil.go: `AlreadyOwnedError`, and "cross-namespace owner references
            // are disallowed": the reconcile returns the error before any request.
            (true, Some(_)) => return Err(Stop::Return(Outcome::Error.result())),
            (true, None) if self.owner_refused(by.kind, by.namespace, o.namespace) => {
                return Err(Stop::Return(Outcome::Error.result()))
            }
            (true, None) => {}
            (false, Some(uid)) if uid == by.uid => {}
            (false, _) => return Ok(()),
        }
        let change = UpdateTo::ControllerRef {
            owner: reference,
            adopt,
        };
        let rv = o.rv;
        self.push_update(slot, o, change, rv, on_error)
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
        // `controllerutil.AddFinalizer` / `RemoveFinalizer` return false when the list does not
        // change, and the reconciler makes no request (`pkg/controller/controllerutil/
        // controllerutil.go`), as a named finalizer's statement already does.
        if finalizers == o.finalizers {
            return Ok(());
        }
        let change = UpdateTo::Object {
            spec: Some(o.spec),
            finalizers: Some(finalizers),
        };
        let rv = o.rv;
        self.push_update(*slot, o, change, rv, *on_error)
    }

    /// `Delete`: deletes the object (or every live object) in `slot`.
    fn stmt_delete(
        &mut self,
        slot: &Slot,
        uid_check: &bool,
        on_error: &OnError,
        line: u32,
    ) -> Result<(), Stop> {
        let targets: Vec<Object> = match self.bound[*slot as usize] {
            Bound::One(Some(ref o)) => vec![o.clone()],
            Bound::Items(ref items) => {
                let alive: Vec<Object> = (items.iter())
                    .filter(|o| o.deletion_ms.is_none())
                    .cloned()
                    .collect();
                if !alive.is_empty() && self.dry {
                    return Err(Stop::Wrote);
                }
                alive
            }
            Bound::Owned { .. } => {
                let Some((r, kind, uid)) = self.list(*slot) else {
                    return Ok(());
                };
                let alive = r.live_owned(kind, uid);
                if alive > 0 && self.dry {
                    return Err(Stop::Wrote);
                }
                self.children_limit(kind, uid, alive, line)?;
                r.owned_by(kind, uid)
                    .into_iter()
                    .filter(|o| o.deletion_ms.is_none())
                    .collect()
            }
            _ => vec![],
        };
        for o in targets {
            let delete = Write::Delete {
                kind: o.kind,
                name: o.name,
                uid: uid_check.then_some(o.uid),
            };
            self.push(Some(delete), *on_error)?;
        }
        Ok(())
    }

    /// A delete or a scale down of more than `MAX_CHILDREN` live children of one object stops
    /// the run (every path of a program is bounded on that assumption).
    fn children_limit(&self, kind: KindId, uid: u64, alive: usize, line: u32) -> Result<(), Stop> {
        if alive <= MAX_CHILDREN as usize {
            return Ok(());
        }
        let owner = (self.bound.iter())
            .find_map(|b| match b {
                Bound::One(Some(o)) if o.uid == uid => Some(o.name),
                _ => None,
            })
            .unwrap_or(self.key);
        Err(Stop::Exceeded(Exceeded::ChildrenPerObject {
            kind,
            owner,
            children: alive,
            line,
        }))
    }

    /// `Scale`: creates or deletes children of `owner` until `count` remain.
    fn stmt_scale(
        &mut self,
        (kind, owner, count, live): (&KindId, &Slot, &Value, &bool),
        on_error: &OnError,
        line: u32,
    ) -> Result<(), Stop> {
        let Some(parent) = self.one(*owner) else {
            return Ok(());
        };
        let r = self.reader(*live)?;
        let desired = self
            .value(count, self.key)
            .unwrap_or(0)
            .clamp(0, MAX_CHILDREN);
        // Counted through the owner index: a scale that has nothing to do reads no child.
        let alive = r.live_owned(*kind, parent.uid);
        if alive == desired as usize {
            return Ok(());
        }
        if self.dry {
            return Err(Stop::Wrote);
        }
        self.children_limit(*kind, parent.uid, alive, line)?;
        for w in scale(r, &mut *self.names, &parent, *kind, desired) {
            self.push(w, *on_error)?;
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
fn scale(
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
        // `parent-i`, built in one string.
        let mut child = names.resolve(parent.name).to_string();
        child.push('-');
        let base_len = child.len();
        let mut i = 0u64;
        let mut missing = desired - children.len();
        while missing > 0 {
            child.truncate(base_len);
            {
                use std::fmt::Write;
                let _ = write!(child, "{i}");
            }
            match names.name(&child) {
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
                        fields: None,
                        generate_name: false,
                    }));
                    missing -= 1;
                }
            }
            i += 1;
        }
    } else if children.len() > desired {
        let mut sorted = children.clone();
        crate::order::sort_by_u64(&mut sorted, |c| child_index(names, c.name));
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

/// Runs the logic for one reconcile of `key` at `now_ms`: reads from `cache` (and `live`, etcd, for live
/// reads; `None` when the controller is cut off), makes the memory changes that come before
/// any write, returns the plan (with the changes that wait for writes).
#[allow(clippy::too_many_arguments)]
pub fn plan(
    program: &Program,
    key: NameId,
    finalizer_bit: u32,
    cache: &dyn Reader,
    live: Option<&dyn Reader>,
    names: &mut dyn Namer,
    memory: &mut Memory,
    now_ms: TimeMs,
) -> Plan {
    let mut run = Run {
        key,
        cluster_scoped: &program.cluster_scoped,
        kind_names: &program.kind_names,
        finalizer_bit,
        cache,
        live,
        names,
        memory,
        bound: vec![Bound::Unset; program.bindings.len()],
        last_write: vec![None; program.bindings.len()],
        plan: Plan::default(),
        dry: false,
        item: Default::default(),
        now_ms,
        name_buf: String::new(),
    };
    match run.exec(&program.body) {
        Err(Stop::Return(r)) => run.plan.outcome = Some(r),
        Err(Stop::Exceeded(e)) => {
            run.plan = Plan {
                exceeded: Some(e),
                ..Plan::default()
            }
        }
        Err(Stop::Wrote) | Ok(()) => {}
    }
    let mut plan = run.plan;
    apply_memory(memory, key, &plan.memory, 0);
    plan.memory.retain(|c| c.after_writes > 0);
    plan
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
    desired_holds_named(program, key, finalizer_bit, etcd, &mut Frozen(names))
}

/// `desired_holds`, looking names up through `names` (ESR notes the ones it looked for).
pub fn desired_holds_named(
    program: &Program,
    key: NameId,
    finalizer_bit: u32,
    etcd: &dyn Reader,
    names: &mut dyn Namer,
) -> bool {
    let memory = Memory::new();
    let mut run = Run {
        key,
        cluster_scoped: &program.cluster_scoped,
        kind_names: &program.kind_names,
        finalizer_bit,
        cache: etcd,
        live: Some(etcd),
        names,
        memory: &memory,
        bound: vec![Bound::Unset; program.bindings.len().max(program.desired_bindings.len())],
        last_write: vec![None; program.bindings.len().max(program.desired_bindings.len())],
        plan: Plan::default(),
        dry: true,
        item: Default::default(),
        now_ms: TimeMs(0),
        name_buf: String::new(),
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
        // It stops at the first write it would make: then the answer is no.
        None => match run.exec(&program.body) {
            Ok(()) => true,
            Err(Stop::Return(r)) => !matches!(r, ReconcileResult::Error(_)),
            Err(Stop::Wrote | Stop::Exceeded(_)) => false,
        },
    }
}
