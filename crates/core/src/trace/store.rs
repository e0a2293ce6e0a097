//! The trace as a container: events in frozen chunks shared between clones (the explorer's
//! forks), the object bodies kept beside them, and iteration.

use super::*;

/// Events per frozen chunk of a [`Trace`] (a power of two).
pub(super) const CHUNK: usize = 256;

/// An object body kept beside a trace's events, by its place there (`Trace::body`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct BodyRef(pub u32);

/// What an `ObjectFields` event shows: the object's body and, for an adopt or a release, the
/// controller reference it leaves (`Some(None)`: none).
#[derive(Clone, Debug, Default)]
pub struct KeptBody {
    pub body: crate::object::Body,
    pub controller_owner: Option<Option<crate::model::Owner>>,
}

impl KeptBody {
    /// In words: the controller reference an adopt or release leaves, then `Body::describe`.
    pub fn describe(&self, names: &crate::model::Names, kind: impl Fn(KindId) -> String) -> String {
        let text = self.body.describe(names, &kind);
        let Some(owner) = self.controller_owner else {
            return text;
        };
        let owner = match owner {
            Some(o) => format!(
                "controller owner {}/{}",
                kind(o.kind),
                names.resolve(o.name)
            ),
            None => "no controller owner".to_string(),
        };
        match text.is_empty() {
            true => owner,
            false => format!("{owner} {text}"),
        }
    }
}

/// What a trace keeps beside its events (bodies, creations), chunked as the events are: a
/// clone shares the full chunks and copies at most one chunk's worth.
#[derive(Clone)]
struct Kept<T> {
    chunks: Vec<std::sync::Arc<Vec<T>>>,
    tail: Vec<T>,
}

impl<T> Default for Kept<T> {
    fn default() -> Self {
        Kept {
            chunks: vec![],
            tail: vec![],
        }
    }
}

impl<T> Kept<T> {
    /// Entries per frozen chunk: fewer than events, as few events carry one.
    const CHUNK: usize = 64;

    fn len(&self) -> usize {
        self.chunks.len() * Self::CHUNK + self.tail.len()
    }

    fn push(&mut self, x: T) -> u32 {
        let at = self.len() as u32;
        self.tail.push(x);
        if self.tail.len() == Self::CHUNK {
            let full = std::mem::replace(&mut self.tail, Vec::with_capacity(Self::CHUNK));
            self.chunks.push(std::sync::Arc::new(full));
        }
        at
    }

    fn get(&self, i: usize) -> Option<&T> {
        match self.chunks.get(i / Self::CHUNK) {
            Some(c) => c.get(i % Self::CHUNK),
            None => self.tail.get(i - self.chunks.len() * Self::CHUNK),
        }
    }

    fn iter(&self) -> impl Iterator<Item = &T> {
        (self.chunks.iter().flat_map(|c| c.iter())).chain(self.tail.iter())
    }
}

/// What etcd decided of an object's identity, kept for the `Write` event that decided it (an
/// event has no room for it): its UID and its controller reference, on a create and on every
/// write that changed the reference.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Identity {
    pub event: EventId,
    pub uid: u64,
    pub owner: Option<crate::model::Owner>,
}

/// A run's events in order. Full chunks of [`CHUNK`] events are frozen and shared (`Arc`), so a
/// clone of a run (the explorer's fork) copies pointers and at most one chunk's worth of recent
/// events, not the whole past. Read it like a slice: `len`, `[i]`, `get`, `last`, `iter`,
/// `range(a..b)` (an iterator, both ways), `partition_point`.
#[derive(Default)]
pub struct Trace {
    chunks: Vec<std::sync::Arc<Vec<Event>>>,
    tail: Vec<Event>,
    bodies: Kept<KeptBody>,
    identities: Kept<Identity>,
}

impl Clone for Trace {
    fn clone(&self) -> Trace {
        // Room for the chunk being filled, so the clone's next events do not copy it again.
        let mut tail = Vec::with_capacity(CHUNK);
        tail.extend_from_slice(&self.tail);
        Trace {
            chunks: self.chunks.clone(),
            tail,
            bodies: self.bodies.clone(),
            identities: self.identities.clone(),
        }
    }
}

impl Trace {
    pub fn new() -> Trace {
        Trace::default()
    }

    pub fn len(&self) -> usize {
        self.chunks.len() * CHUNK + self.tail.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn push(&mut self, e: Event) {
        if self.tail.capacity() == 0 {
            self.tail.reserve_exact(CHUNK);
        }
        self.tail.push(e);
        if self.tail.len() == CHUNK {
            // Frozen as it is (moved, not copied); the next events go to a new tail.
            let full = std::mem::replace(&mut self.tail, Vec::with_capacity(CHUNK));
            self.chunks.push(std::sync::Arc::new(full));
        }
    }

    /// Keeps an object's body for an event to point to (a reference count, not a copy).
    pub fn keep_body(&mut self, body: KeptBody) -> BodyRef {
        BodyRef(self.bodies.push(body))
    }

    /// Keeps what etcd decided of an object's identity, for its `Write` event `at.event` (the
    /// last event so far).
    pub fn keep_identity(&mut self, at: Identity) {
        debug_assert_eq!(at.event as usize + 1, self.len());
        self.identities.push(at);
    }

    /// Each create's and each owner change's [`Identity`], in event order.
    pub fn identities(&self) -> impl Iterator<Item = &Identity> {
        self.identities.iter()
    }

    /// The body an `ObjectFields` event points to (empty for one this trace does not hold).
    pub fn body(&self, at: BodyRef) -> &KeptBody {
        static EMPTY: KeptBody = KeptBody {
            body: crate::object::Body::EMPTY,
            controller_owner: None,
        };
        self.bodies.get(at.0 as usize).unwrap_or(&EMPTY)
    }

    pub fn get(&self, i: usize) -> Option<&Event> {
        match self.chunks.get(i / CHUNK) {
            Some(c) => Some(&c[i % CHUNK]),
            None => self.tail.get(i - self.chunks.len() * CHUNK),
        }
    }

    /// The event at `i`, to amend (a frozen chunk is copied first if a clone shares it).
    pub fn get_mut(&mut self, i: usize) -> Option<&mut Event> {
        let full = self.chunks.len() * CHUNK;
        if i >= full {
            return self.tail.get_mut(i - full);
        }
        std::sync::Arc::make_mut(&mut self.chunks[i / CHUNK]).get_mut(i % CHUNK)
    }

    pub fn last(&self) -> Option<&Event> {
        self.tail.last().or_else(|| self.chunks.last()?.last())
    }

    pub fn iter(&self) -> Iter<'_> {
        self.range(..)
    }

    /// The events in `range`, in order (reversible).
    pub fn range(&self, range: impl std::ops::RangeBounds<usize>) -> Iter<'_> {
        use std::ops::Bound;
        let len = self.len();
        let a = match range.start_bound() {
            Bound::Included(&a) => a,
            Bound::Excluded(&a) => a + 1,
            Bound::Unbounded => 0,
        };
        let b = match range.end_bound() {
            Bound::Included(&b) => b + 1,
            Bound::Excluded(&b) => b,
            Bound::Unbounded => len,
        };
        assert!(a <= b && b <= len, "range {a}..{b} of a trace of {len}");
        if a == b {
            return Iter::default();
        }
        let (first, last) = (a / CHUNK, (b - 1) / CHUNK);
        let piece = |k: usize| -> &[Event] { self.chunks.get(k).map_or(&self.tail, |c| &**c) };
        if first == last {
            let lo = first * CHUNK;
            return Iter {
                front: piece(first)[a - lo..b - lo].iter(),
                len: b - a,
                ..Iter::default()
            };
        }
        Iter {
            front: piece(first)[a % CHUNK..].iter(),
            mid: self.chunks[first + 1..last].iter(),
            back: piece(last)[..b - last * CHUNK].iter(),
            len: b - a,
        }
    }

    /// The number of events for which `pred` holds, when it holds for a prefix (as
    /// `slice::partition_point`).
    pub fn partition_point(&self, mut pred: impl FnMut(&Event) -> bool) -> usize {
        let (mut lo, mut hi) = (0, self.len());
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if pred(&self[mid]) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo
    }
}

impl std::ops::Index<usize> for Trace {
    type Output = Event;
    fn index(&self, i: usize) -> &Event {
        match self.get(i) {
            Some(e) => e,
            None => panic!("event {i} of a trace of {}", self.len()),
        }
    }
}

impl PartialEq for Trace {
    fn eq(&self, other: &Trace) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}

impl std::fmt::Debug for Trace {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl<'a> IntoIterator for &'a Trace {
    type Item = &'a Event;
    type IntoIter = Iter<'a>;
    fn into_iter(self) -> Iter<'a> {
        self.iter()
    }
}

/// An iterator over a [`Trace`]'s events: the first piece, whole chunks, the last piece.
#[derive(Clone, Default)]
pub struct Iter<'a> {
    front: std::slice::Iter<'a, Event>,
    mid: std::slice::Iter<'a, std::sync::Arc<Vec<Event>>>,
    back: std::slice::Iter<'a, Event>,
    len: usize,
}

impl<'a> Iterator for Iter<'a> {
    type Item = &'a Event;

    fn next(&mut self) -> Option<&'a Event> {
        loop {
            if let Some(e) = self.front.next() {
                self.len -= 1;
                return Some(e);
            }
            match self.mid.next() {
                Some(c) => self.front = c.iter(),
                None => {
                    let e = self.back.next()?;
                    self.len -= 1;
                    return Some(e);
                }
            }
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.len, Some(self.len))
    }
}

impl DoubleEndedIterator for Iter<'_> {
    fn next_back(&mut self) -> Option<Self::Item> {
        loop {
            if let Some(e) = self.back.next_back() {
                self.len -= 1;
                return Some(e);
            }
            match self.mid.next_back() {
                Some(c) => self.back = c.iter(),
                None => {
                    let e = self.front.next_back()?;
                    self.len -= 1;
                    return Some(e);
                }
            }
        }
    }
}

impl ExactSizeIterator for Iter<'_> {}
impl std::iter::FusedIterator for Iter<'_> {}
