//! Plain data: identifiers, objects, the name interner and the seeded RNG.

use std::collections::HashMap;

/// A resource version: etcd's global revision. Clients treat it as opaque; the model compares.
pub type Rv = u64;
/// A moment: virtual time in milliseconds since the start of the run. A type of its own, like
/// `DurationMs`: a moment plus a duration is a moment, `DurationMs::between` two moments is a
/// duration, and neither a moment plus a moment nor a resource version plus a duration compiles:
///
/// ```compile_fail
/// use listwatch_core::TimeMs;
/// let _ = TimeMs(1) + TimeMs(2);
/// ```
///
/// ```compile_fail
/// use listwatch_core::{DurationMs, Rv};
/// let rv: Rv = 5;
/// let _ = rv + DurationMs(1);
/// ```
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug, Default)]
pub struct TimeMs(pub u64);

impl TimeMs {
    /// The start of the run.
    pub const ZERO: TimeMs = TimeMs(0);
    /// Later than every moment a run reaches: "no limit".
    pub const MAX: TimeMs = TimeMs(u64::MAX);

    pub fn ms(self) -> u64 {
        self.0
    }

    /// The moment `d` before this one, or the start if that is earlier.
    #[must_use]
    pub fn saturating_sub(self, d: DurationMs) -> TimeMs {
        TimeMs(self.0.saturating_sub(d.0))
    }
}

/// A length of virtual time in milliseconds (a delay, a timeout, a period): a type of its own,
/// so a moment is never passed where a duration is meant. A moment plus a duration is a moment;
/// `DurationMs::between` two moments is a duration.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug, Default)]
pub struct DurationMs(pub u64);

impl DurationMs {
    pub const ZERO: DurationMs = DurationMs(0);

    /// The time from `earlier` to `later` (zero if `later` is not after it).
    pub fn between(earlier: TimeMs, later: TimeMs) -> DurationMs {
        DurationMs(later.0.saturating_sub(earlier.0))
    }

    pub fn ms(self) -> u64 {
        self.0
    }

    pub fn is_zero(self) -> bool {
        self.0 == 0
    }

    /// `n` times this long, or the longest duration if that overflows.
    #[must_use]
    pub fn saturating_mul(self, n: u64) -> DurationMs {
        DurationMs(self.0.saturating_mul(n))
    }
}

impl std::ops::Add<DurationMs> for TimeMs {
    type Output = TimeMs;
    fn add(self, d: DurationMs) -> TimeMs {
        TimeMs(self.0 + d.0)
    }
}

impl std::ops::AddAssign<DurationMs> for TimeMs {
    fn add_assign(&mut self, d: DurationMs) {
        self.0 += d.0;
    }
}

impl std::ops::Sub<DurationMs> for TimeMs {
    type Output = TimeMs;
    fn sub(self, d: DurationMs) -> TimeMs {
        TimeMs(self.0 - d.0)
    }
}

impl std::ops::Add for DurationMs {
    type Output = DurationMs;
    fn add(self, d: DurationMs) -> DurationMs {
        DurationMs(self.0 + d.0)
    }
}

impl std::ops::Mul<u64> for DurationMs {
    type Output = DurationMs;
    fn mul(self, n: u64) -> DurationMs {
        DurationMs(self.0 * n)
    }
}

impl std::ops::Div<u64> for DurationMs {
    type Output = DurationMs;
    fn div(self, n: u64) -> DurationMs {
        DurationMs(self.0 / n)
    }
}

/// The way scripts write a duration: `1.5s`, `250ms`, `2m`.
impl std::fmt::Display for DurationMs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&format_ms(self.0))
    }
}

/// The way scripts write a moment, as the time since the start: `at 1.5s`.
impl std::fmt::Display for TimeMs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(&format_ms(self.0))
    }
}

macro_rules! id_type {
    ($(#[$m:meta])* $name:ident, $inner:ty) => {
        $(#[$m])*
        #[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug, Default)]
        pub struct $name(pub $inner);
        impl $name {
            pub fn index(self) -> usize {
                self.0 as usize
            }
        }
    };
}

id_type!(/// Index into `Config::kinds`.
    KindId, u16);
id_type!(/// An interned string: an object's `namespace/name`, a namespace, or narration.
    NameId, u32);
id_type!(/// Index into `Config::apiservers`.
    ApiserverId, u8);
id_type!(/// Index into `Config::controllers`.
    ControllerId, u16);
id_type!(/// Index into the run's reflectors (one per controller watch statement).
    WatcherId, u16);
id_type!(/// A watch as its apiserver holds it: index into that apiserver's watches
    /// (`Apiserver::watches`); another apiserver numbers its own from 0 too.
    WatchId, u32);

macro_rules! counter_type {
    ($(#[$m:meta])* $name:ident) => {
        $(#[$m])*
        #[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug, Default)]
        pub struct $name(pub u32);
        impl $name {
            /// The next one: everything tagged with this one (or earlier) is now stale.
            #[must_use]
            pub fn next(self) -> $name {
                $name(self.0 + 1)
            }
        }
    };
}

counter_type!(/// A reflector's requests: messages and timers of an earlier session are stale.
    Session);
counter_type!(/// A controller's life: timers of a life before a crash are stale.
    Epoch);
counter_type!(/// An invalidation counter: an apiserver's cache re-initialisations, a controller's
    /// holds. A timer armed under an earlier generation does nothing.
    Generation);

/// An owner reference: enough for the owner handler and garbage collection.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct Owner {
    pub kind: KindId,
    pub name: NameId,
    pub uid: u64,
}

/// One API object. `spec` and `status` are single integers: enough for generation-changed
/// versus status-only updates, replica counts and mirrors.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct Object {
    pub kind: KindId,
    pub name: NameId,
    pub namespace: NameId,
    pub uid: u64,
    pub rv: Rv,
    pub generation: u64,
    pub spec: i64,
    pub status: i64,
    pub owner: Option<Owner>,
    /// One bit per controller that put a finalizer on the object.
    pub finalizers: u32,
    /// Set when deletion was requested while finalizers remained.
    pub deletion_ms: Option<TimeMs>,
    /// Labels, annotations, named fields and finalizers, further owners: shared between copies.
    pub body: crate::object::Body,
}

impl Object {
    /// Every owner reference: the controller's own first, then the body's.
    pub fn owner_refs(&self) -> impl Iterator<Item = crate::object::OwnerRef> + '_ {
        let first = self.owner.map(|owner| crate::object::OwnerRef {
            owner,
            controller: true,
            block_owner_deletion: true,
        });
        first
            .into_iter()
            .chain(self.body.data().owners.iter().copied())
    }

    /// A new object as a create asks for it: generation 1, nothing else set (etcd gives the UID
    /// and the RV).
    pub fn new(kind: KindId, name: NameId, namespace: NameId) -> Object {
        Object {
            kind,
            name,
            namespace,
            uid: 0,
            rv: 0,
            generation: 1,
            spec: 0,
            status: 0,
            owner: None,
            finalizers: 0,
            deletion_ms: None,
            body: crate::object::Body::EMPTY,
        }
    }

    /// Finalizers of every kind: controllers' and named ones.
    pub fn finalizer_count(&self) -> usize {
        self.finalizers.count_ones() as usize + self.body.data().finalizers.len()
    }
}

#[cfg(test)]
impl Object {
    /// A test's object: in namespace `NameId(0)`, generation 1, spec and status 0, no owner,
    /// no finalizers.
    pub(crate) fn fixture(kind: KindId, name: NameId, uid: u64, rv: Rv) -> Object {
        Object {
            uid,
            rv,
            ..Object::new(kind, name, NameId(0))
        }
    }
}

/// The type of a watch event.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum EventType {
    Added,
    Modified,
    Deleted,
}

impl EventType {
    pub fn as_str(self) -> &'static str {
        match self {
            EventType::Added => "ADDED",
            EventType::Modified => "MODIFIED",
            EventType::Deleted => "DELETED",
        }
    }
}

/// A committed change, as etcd's watch reports it: the object's new state (for a delete, its last
/// state stamped with the deletion's RV).
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct Change {
    pub event: EventType,
    /// Shared by etcd, the watch caches, every watch it fans out to and the informers' stores:
    /// a change reaching ten informers is one object, not ten copies of it.
    pub object: std::sync::Arc<Object>,
    pub time_ms: TimeMs,
    /// The object before this change (`None` for a create, and for the changes an apiserver
    /// makes up itself): what a watch with a selector compares, and what its DELETED carries
    /// (`cacher/cache_watcher.go` `convertToWatchEvent`, `PrevObject`). Shared, so a clone of a
    /// change is a reference count.
    pub prev: Option<std::sync::Arc<Object>>,
}

impl Change {
    /// The change as a watch with a selector sends it (`convertToWatchEvent`): as `event`, and
    /// for a DELETED the object's previous content (spec, status, metadata and body) stamped
    /// with the change's RV.
    pub fn converted(&self, event: EventType) -> Change {
        let mut c = self.clone();
        c.event = event;
        if event == EventType::Deleted {
            match &self.prev {
                Some(prev) => {
                    c.object = prev.clone();
                    std::sync::Arc::make_mut(&mut c.object).rv = self.object.rv;
                }
                None => std::sync::Arc::make_mut(&mut c.object).body = crate::object::Body::EMPTY,
            }
        }
        c
    }
}

/// Interns strings so objects and trace events stay `Copy` and small. The table is shared by
/// clones (the explorer's forks) until one of them adds a name.
#[derive(Clone, Debug, Default)]
pub struct Names(std::sync::Arc<NameTable>);

#[derive(Clone, Debug, Default)]
struct NameTable {
    strings: Vec<String>,
    index: HashMap<String, u32, std::hash::BuildHasherDefault<Fnv>>,
    /// The names in `default/` by what follows the prefix: the timeline names them so.
    in_default: HashMap<String, u32, std::hash::BuildHasherDefault<Fnv>>,
}

/// FNV-1a, for the short names the table looks up on every reconcile.
#[derive(Default)]
struct Fnv(u64);

impl std::hash::Hasher for Fnv {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        let mut h = if self.0 == 0 {
            0xcbf2_9ce4_8422_2325
        } else {
            self.0
        };
        for &b in bytes {
            h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
        self.0 = h;
    }
}

/// What follows a `-` in a name a controller derives from its parent's (see
/// [`Names::get_suffixed`]).
#[derive(Clone, Copy, Debug)]
pub enum Suffix<'a> {
    Text(&'a str),
    Number(u64),
}

impl Names {
    /// The id of `base`'s name, a `-` and `suffix` (`p-data`, `p-3`), if interned. Reconciles
    /// look their children's names up on every run, so the name is put together on the stack,
    /// without `format!` and an allocation.
    pub fn get_suffixed(&self, base: NameId, suffix: Suffix) -> Option<NameId> {
        let base = self.resolve(base);
        let mut digits = [0u8; 20];
        let tail = match suffix {
            Suffix::Text(t) => t,
            Suffix::Number(mut n) => {
                let mut at = digits.len();
                loop {
                    at -= 1;
                    digits[at] = b'0' + (n % 10) as u8;
                    n /= 10;
                    if n == 0 {
                        break;
                    }
                }
                std::str::from_utf8(&digits[at..]).unwrap_or_default()
            }
        };
        let mut buf = [0u8; 2 * crate::sim::MAX_NAME_LEN];
        let len = base.len() + 1 + tail.len();
        let Some(out) = buf.get_mut(..len) else {
            return self.get(&format!("{base}-{tail}"));
        };
        out[..base.len()].copy_from_slice(base.as_bytes());
        out[base.len()] = b'-';
        out[base.len() + 1..].copy_from_slice(tail.as_bytes());
        self.get(std::str::from_utf8(out).ok()?)
    }

    pub fn intern(&mut self, s: &str) -> NameId {
        if let Some(&i) = self.0.index.get(s) {
            return NameId(i);
        }
        let t = std::sync::Arc::make_mut(&mut self.0);
        let i = t.strings.len() as u32;
        t.strings.push(s.to_string());
        t.index.insert(s.to_string(), i);
        if let Some(short) = s.strip_prefix(DEFAULT_NAMESPACE_PREFIX) {
            t.in_default.insert(short.to_string(), i);
        }
        NameId(i)
    }
    pub fn get(&self, s: &str) -> Option<NameId> {
        self.0.index.get(s).map(|&i| NameId(i))
    }
    /// `intern(&qualify(name))`, without building a string for a name known already: inputs
    /// name objects this way on every write the explorer replays.
    pub fn intern_qualified(&mut self, name: &str) -> NameId {
        match self.get_qualified(name) {
            Some(id) => id,
            None if name.contains('/') => self.intern(name),
            None => self.intern(&format!("{DEFAULT_NAMESPACE_PREFIX}{name}")),
        }
    }
    /// `get(&qualify(name))`, without building a string.
    pub fn get_qualified(&self, name: &str) -> Option<NameId> {
        let table = if name.contains('/') {
            &self.0.index
        } else {
            &self.0.in_default
        };
        table.get(name).map(|&i| NameId(i))
    }
    pub fn resolve(&self, id: NameId) -> &str {
        self.0
            .strings
            .get(id.index())
            .map(String::as_str)
            .unwrap_or("?")
    }
    pub fn len(&self) -> usize {
        self.0.strings.len()
    }
    pub fn is_empty(&self) -> bool {
        self.0.strings.is_empty()
    }
}

/// What a name without a namespace means: `a` is `default/a`.
pub const DEFAULT_NAMESPACE_PREFIX: &str = "default/";

/// How the objects of a kind are named: the one rule for it (apimachinery: a cluster-scoped
/// object's `metadata.namespace` is empty). A namespaced kind's `a` is `default/a` and `ns/a`
/// itself; a cluster-scoped kind's `a` is itself, in no namespace.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    Namespaced,
    Cluster,
}

impl Scope {
    pub fn of(cluster_scoped: bool) -> Scope {
        match cluster_scoped {
            true => Scope::Cluster,
            false => Scope::Namespaced,
        }
    }

    /// The object a script's `name` means, if that name was ever interned.
    pub fn get(self, names: &Names, name: &str) -> Option<NameId> {
        match self {
            Scope::Cluster => names.get(name),
            Scope::Namespaced => names.get_qualified(name),
        }
    }

    /// The object a script's `name` means.
    pub fn intern(self, names: &mut Names, name: &str) -> NameId {
        match self {
            Scope::Cluster => names.intern(name),
            Scope::Namespaced => names.intern_qualified(name),
        }
    }

    /// The namespace of the object named `full`: none (empty) for a cluster-scoped kind, else
    /// the part before the `/` (`default` without one).
    pub fn namespace(self, full: &str) -> &str {
        match (self, full.split_once('/')) {
            (Scope::Cluster, _) => "",
            (Scope::Namespaced, Some((ns, _))) => ns,
            (Scope::Namespaced, None) => DEFAULT_NAMESPACE_PREFIX.trim_end_matches('/'),
        }
    }
}

/// Is `full` (an interned `ns/name`) what a user's `name` means: `a` is `default/a`, `ns/a` is
/// itself?
pub fn qualifies_as(full: &str, name: &str) -> bool {
    // A name without a namespace is a cluster-scoped object's, and means itself.
    if name.contains('/') || !full.contains('/') {
        full == name
    } else {
        full.strip_prefix(DEFAULT_NAMESPACE_PREFIX) == Some(name)
    }
}

/// SplitMix64: tiny, seedable, and the same on every platform (native and wasm).
#[derive(Clone, Debug, Hash, PartialEq, Eq)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed ^ 0x9E37_79B9_7F4A_7C15)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in `[0, n)`; 0 when `n == 0`.
    pub fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            0
        } else {
            self.next_u64() % n
        }
    }
    /// True with probability `per_million / 1_000_000`.
    pub fn chance_ppm(&mut self, per_million: u32) -> bool {
        self.below(1_000_000) < per_million as u64
    }
}

/// Milliseconds the way scripts write them: `1.5s`, `250ms`, `2m` (`Display` of both
/// `TimeMs` and `DurationMs`).
pub fn format_ms(ms: u64) -> String {
    if ms == 0 {
        "0s".to_string()
    } else if ms.is_multiple_of(60_000) && ms >= 60_000 {
        format!("{}m", ms / 60_000)
    } else if ms.is_multiple_of(1000) {
        format!("{}s", ms / 1000)
    } else if ms < 1000 {
        format!("{ms}ms")
    } else {
        format!("{}.{:03}s", ms / 1000, ms % 1000)
            .trim_end_matches('0')
            .to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_without_a_namespace_is_in_default_and_is_looked_up_without_a_string() {
        let mut names = Names::default();
        let a = names.intern_qualified("a");
        assert_eq!(names.resolve(a), "default/a");
        assert_eq!(names.intern_qualified("default/a"), a, "the same object");
        assert_eq!(names.get_qualified("a"), Some(a));
        let other = names.intern_qualified("ns/a");
        assert_ne!(other, a, "`ns/a` is another object");
        assert_eq!(names.get_qualified("b"), None);
        let b = names.intern("default/b");
        assert_eq!(
            names.get_qualified("b"),
            Some(b),
            "interned in full, found by its short name"
        );
    }

    #[test]
    fn a_user_name_qualifies_as_the_interned_name_it_means() {
        assert!(qualifies_as("default/a", "a"));
        assert!(qualifies_as("ns/a", "ns/a"));
        assert!(!qualifies_as("ns/a", "a"), "`a` is `default/a` only");
        assert!(!qualifies_as("default/ab", "a"));
        assert!(!qualifies_as("default/a", "default"));
    }
}
