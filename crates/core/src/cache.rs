//! The apiserver's watch cache for one kind (`apiserver/pkg/storage/cacher/watch_cache.go`): a
//! cyclic buffer of recent events, the store it serves lists from, and the exact "too old" rule.

use std::collections::VecDeque;
use std::sync::Arc;

use crate::config::{CacheMode, EVENT_FRESH_MS};
use crate::model::{Change, DurationMs, NameId, Object, Rv, TimeMs};
use crate::store::NameMap;

#[derive(Debug, Hash, PartialEq, Eq)]
pub struct WatchCache {
    mode: CacheMode,
    capacity: u32,
    buffer: VecDeque<Change>,
    /// RV of the cache's own last list of etcd.
    list_rv: Rv,
    /// An event was evicted since that list (`removedEventSinceRelist`).
    evicted_since_list: bool,
    /// The newest RV the cache has processed.
    rv: Rv,
    /// Shared with the changes they came in (`Change::object`).
    store: NameMap<Arc<Object>>,
    /// False while the cache (re)initialises: watches and lists without a limit get 429.
    ready: bool,
}

/// What adding one event did to the buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AddOutcome {
    pub evicted: u32,
    pub capacity_before: u32,
}

/// The answer to "may a watch start at r?".
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WatchStart {
    Ok,
    /// 410 Expired: `too old resource version: r (oldest-1)`.
    TooOld {
        requested: Rv,
        oldest_minus_one: Rv,
    },
}

impl Clone for WatchCache {
    fn clone(&self) -> WatchCache {
        // Room to fill up to the capacity (at most twice what it holds): an explorer's fork
        // adds events next, and a buffer cloned full to the brim is copied again on the first.
        let len = self.buffer.len();
        let mut buffer = VecDeque::with_capacity((self.capacity as usize).clamp(len, 2 * len));
        buffer.extend(self.buffer.iter().cloned());
        WatchCache {
            mode: self.mode,
            capacity: self.capacity,
            buffer,
            list_rv: self.list_rv,
            evicted_since_list: self.evicted_since_list,
            rv: self.rv,
            store: self.store.clone(),
            ready: self.ready,
        }
    }
}

impl WatchCache {
    pub fn new(mode: CacheMode) -> Self {
        let capacity = match mode {
            CacheMode::Fixed { capacity } => capacity,
            CacheMode::Dynamic { capacity_min, .. } => capacity_min,
            CacheMode::Off => 0,
        };
        WatchCache {
            mode,
            capacity,
            buffer: VecDeque::new(),
            list_rv: 0,
            evicted_since_list: false,
            rv: 0,
            store: NameMap::default(),
            ready: true,
        }
    }

    pub fn mode(&self) -> CacheMode {
        self.mode
    }

    /// How many changes the buffer holds at most now (a dynamic cache's grows and shrinks).
    pub fn capacity(&self) -> u32 {
        self.capacity
    }

    /// RV of the cache's own last list of etcd.
    pub fn list_rv(&self) -> Rv {
        self.list_rv
    }

    /// The newest RV the cache has processed.
    pub fn rv(&self) -> Rv {
        self.rv
    }

    /// False while the cache (re)initialises: watches and lists without a limit get 429.
    pub fn ready(&self) -> bool {
        self.ready
    }

    /// The objects lists are served from, in the store's order (by name).
    pub fn objects(&self) -> impl Iterator<Item = &Arc<Object>> {
        self.store.values()
    }

    /// The object of that name in its store.
    pub fn get(&self, name: NameId) -> Option<&Arc<Object>> {
        self.store.get(&name)
    }

    /// How many objects its store holds.
    pub fn object_count(&self) -> usize {
        self.store.len()
    }

    /// The recent changes, oldest first.
    #[cfg(test)]
    pub(crate) fn buffer(&self) -> &VecDeque<Change> {
        &self.buffer
    }

    // Only the apiserver changes a cache (`sim/apiserver.rs`); `replace` stays public for the
    // tests that build a cache's state by hand.

    /// An etcd progress notification (or another kind's change with progress notify): a ready
    /// cache has seen `rev`.
    pub(crate) fn progress(&mut self, rev: Rv) {
        if self.ready && self.mode != CacheMode::Off {
            self.rv = self.rv.max(rev);
        }
    }

    /// The cache starts re-initialising (`Replace` ends it): history gone, not ready.
    pub(crate) fn reinitialise(&mut self) {
        self.ready = false;
        self.buffer.clear();
    }

    /// Relist from etcd: empty history, `list_rv` = the list's RV (`watchCache.Replace`).
    pub fn replace(&mut self, objects: impl Iterator<Item = Object>, list_rv: Rv) {
        self.buffer.clear();
        self.store = objects.map(|o| (o.name, Arc::new(o))).collect();
        self.list_rv = list_rv;
        self.rv = list_rv;
        self.evicted_since_list = false;
        self.ready = true;
        // `ResetLocked` empties the ring but keeps the capacity a dynamic cache has grown to.
    }

    /// A cache that exists and is not ready: watches and lists without a limit get 429.
    pub fn reinitialising(&self) -> bool {
        self.mode != CacheMode::Off && !self.ready
    }

    /// The oldest RV a watch can be served from, plus one (`GetIntervalLocked`).
    pub fn oldest(&self) -> Rv {
        match self.buffer.front() {
            Some(first) if self.evicted_since_list => first.object.rv,
            _ => self.list_rv + 1,
        }
    }

    pub fn check_watch_start(&self, from: Rv) -> WatchStart {
        let oldest = self.oldest();
        if from + 1 < oldest {
            WatchStart::TooOld {
                requested: from,
                oldest_minus_one: oldest - 1,
            }
        } else {
            WatchStart::Ok
        }
    }

    /// Events a watch from `from` replays (strictly newer than `from`).
    pub fn events_after(&self, from: Rv) -> std::collections::vec_deque::Iter<'_, Change> {
        let start = self.buffer.partition_point(|c| c.object.rv <= from);
        self.buffer.range(start..)
    }

    /// `resizeCacheLocked` then `updateCache`: grow, shrink or evict, then append.
    pub(crate) fn add(&mut self, change: Change) -> AddOutcome {
        let capacity_before = self.capacity;
        let mut evicted = 0;
        if let CacheMode::Dynamic {
            capacity_min,
            capacity_max,
        } = self.mode
        {
            evicted += self.resize(change.time_ms, capacity_min, capacity_max);
        }
        if self.buffer.len() as u32 >= self.capacity {
            self.buffer.pop_front();
            self.evicted_since_list = true;
            evicted += 1;
        }
        self.rv = change.object.rv;
        match change.event {
            crate::model::EventType::Deleted => {
                self.store.remove(&change.object.name);
            }
            _ => {
                self.store
                    .insert(change.object.name, Arc::clone(&change.object));
            }
        }
        self.buffer.push_back(change);
        AddOutcome {
            evicted,
            capacity_before,
        }
    }

    fn resize(&mut self, now: TimeMs, capacity_min: u32, capacity_max: u32) -> u32 {
        let full = self.buffer.len() as u32 >= self.capacity;
        if !full || self.buffer.is_empty() {
            return 0;
        }
        let oldest_time = self.buffer.front().map(|c| c.time_ms).unwrap_or(now);
        if DurationMs::between(oldest_time, now) < EVENT_FRESH_MS {
            self.capacity = (self.capacity * 2).min(capacity_max);
            return 0;
        }
        // `cache[(endIndex - capacity/4) % capacity]`: with capacity below 4 that is the oldest.
        let len = self.buffer.len();
        let quarter_back = (len - (self.capacity as usize / 4).min(len)) % len;
        let quarter_time = self.buffer[quarter_back].time_ms;
        if DurationMs::between(quarter_time, now) > EVENT_FRESH_MS {
            let target = (self.capacity / 2).max(capacity_min);
            if target < self.capacity {
                self.capacity = target;
                let mut evicted = 0;
                while self.buffer.len() as u32 > self.capacity {
                    self.buffer.pop_front();
                    evicted += 1;
                }
                if evicted > 0 {
                    self.evicted_since_list = true;
                }
                return evicted;
            }
        }
        0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{EventType, KindId, NameId};

    fn obj(name: u32, rv: Rv) -> Object {
        Object::fixture(KindId(0), NameId(name), name as u64, rv)
    }

    fn change(rv: Rv, time_ms: TimeMs) -> Change {
        Change {
            event: EventType::Modified,
            object: Arc::new(obj(1, rv)),
            time_ms,
            prev: Default::default(),
        }
    }

    /// semantics.md §10 "Boundaries", both halves.
    #[test]
    fn too_old_boundaries_match_the_worked_example() {
        let mut c = WatchCache::new(CacheMode::Fixed { capacity: 3 });
        c.replace(std::iter::empty(), 10);
        c.add(change(11, TimeMs(0)));
        c.add(change(12, TimeMs(0)));
        assert_eq!(c.check_watch_start(10), WatchStart::Ok);
        assert_eq!(
            c.check_watch_start(9),
            WatchStart::TooOld {
                requested: 9,
                oldest_minus_one: 10
            }
        );
        for rv in 13..=15 {
            c.add(change(rv, TimeMs(0)));
        }
        let rvs: Vec<Rv> = c.buffer.iter().map(|c| c.object.rv).collect();
        assert_eq!(rvs, vec![13, 14, 15]);
        assert_eq!(c.check_watch_start(12), WatchStart::Ok);
        assert_eq!(c.check_watch_start(15), WatchStart::Ok);
        assert_eq!(
            c.check_watch_start(11),
            WatchStart::TooOld {
                requested: 11,
                oldest_minus_one: 12
            }
        );
        assert_eq!(
            c.check_watch_start(10),
            WatchStart::TooOld {
                requested: 10,
                oldest_minus_one: 12
            }
        );
        assert_eq!(
            c.events_after(12).map(|c| c.object.rv).collect::<Vec<_>>(),
            vec![13, 14, 15]
        );
    }

    /// `watch_cache.go` `resizeCacheLocked`: the shrink check reads the event at
    /// `endIndex - capacity/4`, which is the oldest one when the capacity is below 4.
    #[test]
    fn shrink_check_below_capacity_four_reads_the_oldest_event() {
        let mut c = WatchCache::new(CacheMode::Dynamic {
            capacity_min: 1,
            capacity_max: 2,
        });
        c.add(change(1, TimeMs(0)));
        c.add(change(2, TimeMs(20_000)));
        assert_eq!(c.capacity, 2, "the oldest was fresh: doubled");
        // Full at capacity 2 (capacity/4 = 0): the checked event is the oldest (rv 1, at 0 s),
        // older than 75 s, so the cache halves. Reading the newest (rv 2, at 20 s) would not.
        let out = c.add(change(3, TimeMs(90_000)));
        assert_eq!(c.capacity, 1);
        assert_eq!(out.evicted, 2);
    }

    /// `watch_cache.go` `Replace` -> `ResetLocked`: the ring empties, the capacity stays.
    #[test]
    fn reinitialising_keeps_the_grown_capacity() {
        let mut c = WatchCache::new(CacheMode::Dynamic {
            capacity_min: 4,
            capacity_max: 16,
        });
        for rv in 1..=10 {
            c.add(change(rv, TimeMs(rv)));
        }
        assert_eq!(c.capacity, 16);
        c.replace(std::iter::empty(), 10);
        assert!(c.buffer.is_empty());
        assert_eq!(c.capacity, 16);
    }

    #[test]
    fn dynamic_cache_doubles_while_fresh_and_evicts_when_stale() {
        let mut c = WatchCache::new(CacheMode::Dynamic {
            capacity_min: 4,
            capacity_max: 16,
        });
        for rv in 1..=20 {
            c.add(change(rv, TimeMs(rv)));
        }
        assert_eq!(c.capacity, 16);
        assert_eq!(c.buffer.len(), 16);
        // Everything now is older than 75 s: the buffer halves, evicting many at once.
        let out = c.add(change(21, TimeMs(200_000)));
        assert_eq!(c.capacity, 8);
        assert_eq!(out.evicted, 9);
        assert_eq!(c.buffer.len(), 8);
        assert!(c.evicted_since_list);
    }
}
