//! client-go's event correlator (`tools/record/events_cache.go`), one per controller process:
//! what `EventCorrelate` does to each Event before `recordToSink` sends it. In Go's order:
//! `EventAggregate` (ten Events of one object and reason with different messages within 600 s
//! become one "(combined from similar events)" Event), `eventObserve` (a repeat is a patch of
//! the Event its first occurrence made, counted once more), then the spam filter (a token bucket
//! per object: a burst of 25, one more each 300 s; an Event without a token is dropped, though
//! `eventObserve` has counted it already). Each of the three is an LRU cache of
//! `maxLruCacheEntries` keys, and all die with the process.

use std::collections::{BTreeMap, BTreeSet};
use std::hash::{Hash, Hasher};

use crate::model::{NameId, Names};
use crate::reconcile::EventRecord;

/// `maxLruCacheEntries`: the keys each of the correlator's caches holds; adding one more forgets
/// the least recently used (`github.com/golang/groupcache/lru`).
pub const MAX_LRU_CACHE_ENTRIES: usize = 4096;
/// `defaultAggregateMaxEvents`: this many different messages of one object and reason make an
/// aggregate Event.
const AGGREGATE_MAX_EVENTS: usize = 10;
/// `defaultAggregateIntervalInSeconds`: longer than this since the last similar Event, and the
/// messages seen are forgotten.
const AGGREGATE_INTERVAL_MS: i64 = 600_000;
/// `defaultSpamBurst`.
const SPAM_BURST: i64 = 25;
/// `defaultSpamQPS` = 1/300: a token each 300 s. The bucket counts in units of one
/// millisecond's refill, so a token is this many units and the arithmetic is exact.
const SPAM_UNITS_PER_TOKEN: i64 = 300_000;
/// `EventAggregatorByReasonMessageFunc`.
const COMBINED_PREFIX: &str = "(combined from similar events): ";

/// A map that keeps at most `MAX_LRU_CACHE_ENTRIES` keys, forgetting the least recently used
/// (a `get` or an `add` uses a key), as groupcache's `lru.Cache`.
#[derive(Clone, Debug)]
struct Lru<K: Ord, V> {
    entries: BTreeMap<K, (u64, V)>,
    /// Keys by their last use.
    by_use: BTreeMap<u64, K>,
    uses: u64,
}

/// What it holds, in the order of use: the count of uses is no part of the state (two runs that
/// used the same keys in the same order are in the same state).
impl<K: Ord + Hash, V: Hash> Hash for Lru<K, V> {
    fn hash<H: Hasher>(&self, h: &mut H) {
        for k in self.by_use.values() {
            k.hash(h);
            self.entries.get(k).map(|e| &e.1).hash(h);
        }
    }
}

impl<K: Ord + Clone, V> Lru<K, V> {
    fn new() -> Self {
        Lru {
            entries: BTreeMap::new(),
            by_use: BTreeMap::new(),
            uses: 0,
        }
    }

    fn touch(&mut self, k: &K) -> Option<&mut V> {
        let (used, v) = self.entries.get_mut(k)?;
        self.by_use.remove(used);
        self.uses += 1;
        *used = self.uses;
        self.by_use.insert(self.uses, k.clone());
        Some(v)
    }

    /// `Get`: the value, now the most recently used.
    fn get(&mut self, k: &K) -> Option<&V> {
        self.touch(k).map(|v| &*v)
    }

    /// `Add`: `k` holds `v`, the most recently used; past the bound the least recently used
    /// key is forgotten (`RemoveOldest`).
    fn add(&mut self, k: K, v: V) {
        if let Some(old) = self.touch(&k) {
            *old = v;
            return;
        }
        self.uses += 1;
        self.by_use.insert(self.uses, k.clone());
        self.entries.insert(k, (self.uses, v));
        if self.entries.len() > MAX_LRU_CACHE_ENTRIES {
            if let Some((_, oldest)) = self.by_use.pop_first() {
                self.entries.remove(&oldest);
            }
        }
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.entries.len()
    }
}

/// The involved object (kind, qualified name, UID): `getSpamKey` (the source is the process's
/// own, the same for every key of one correlator).
type Involved = (NameId, NameId, u64);

/// `EventAggregatorByReasonFunc`'s aggregate key: the object, type and reason.
type Similar = (Involved, NameId, NameId);

/// The `eventLogger`'s key: `getEventKey` (the object, type, reason and message) or, for an
/// aggregate Event, the aggregate key.
#[derive(Clone, Copy, Debug, Hash, PartialEq, Eq, PartialOrd, Ord)]
enum LogKey {
    Event(Similar, NameId),
    Aggregate(Similar),
}

/// `aggregateRecord`: the messages seen of similar Events, and when the last came.
#[derive(Clone, Debug, Hash, PartialEq, Eq)]
struct Aggregate {
    messages: BTreeSet<NameId>,
    last_ms: i64,
}

/// `eventLog`: the Event an occurrence made, and how many there were.
#[derive(Clone, Copy, Debug, Hash, PartialEq, Eq)]
struct Observed {
    count: u32,
    first_ms: i64,
    name: NameId,
}

/// `flowcontrol.NewTokenBucketRateLimiterWithClock` (`golang.org/x/time/rate`): starts full; a
/// try that finds no whole token takes none and changes nothing.
#[derive(Clone, Copy, Debug, Hash, PartialEq, Eq)]
struct Bucket {
    units: i64,
    last_ms: i64,
}

impl Bucket {
    fn try_accept(&mut self, now_ms: i64) -> bool {
        let units =
            (self.units + (now_ms - self.last_ms).max(0)).min(SPAM_BURST * SPAM_UNITS_PER_TOKEN);
        if units < SPAM_UNITS_PER_TOKEN {
            return false;
        }
        self.units = units - SPAM_UNITS_PER_TOKEN;
        self.last_ms = now_ms;
        true
    }
}

/// One process's `EventCorrelator`, and its clock's nanoseconds for naming Events.
#[derive(Clone, Debug, Hash)]
pub struct EventCorrelator {
    aggregator: Lru<Similar, Aggregate>,
    logger: Lru<LogKey, Observed>,
    spam: Lru<Involved, Bucket>,
    /// The moment the last Event was named, and how many were named in it: a real clock moves
    /// on between two readings, virtual time may not. Not forgotten in a crash (it is the
    /// clock, not the process's memory), so no Event name comes twice.
    named: (i64, u64),
}

impl Default for EventCorrelator {
    fn default() -> Self {
        EventCorrelator {
            aggregator: Lru::new(),
            logger: Lru::new(),
            spam: Lru::new(),
            named: (-1, 0),
        }
    }
}

impl EventCorrelator {
    /// The process died: its caches go with it (the clock stays).
    pub fn forget(&mut self) {
        *self = EventCorrelator {
            named: self.named,
            ..EventCorrelator::default()
        };
    }

    /// `EventCorrelate`: fills in `e`'s name, count, timestamps (and message, for an aggregate)
    /// at `now_ms`; false when the spam filter drops it (`Skip`: no request). `controller` and
    /// `controllers` (how many there are) keep two processes' Event names apart.
    pub fn correlate(
        &mut self,
        e: &mut EventRecord,
        now_ms: i64,
        names: &mut Names,
        (controller, controllers): (usize, usize),
    ) -> bool {
        let involved = (e.involved_kind, e.involved, e.involved_uid);
        let similar = (involved, e.event_type, e.reason);
        // `EventAggregate`: a record older than the interval (or none: the zero time) starts
        // afresh.
        let mut agg = match self.aggregator.get(&similar) {
            Some(a) if now_ms - a.last_ms <= AGGREGATE_INTERVAL_MS => a.clone(),
            _ => Aggregate {
                messages: BTreeSet::new(),
                last_ms: now_ms,
            },
        };
        agg.messages.insert(e.message);
        agg.last_ms = now_ms;
        let aggregate = agg.messages.len() >= AGGREGATE_MAX_EVENTS;
        if aggregate {
            // "do not grow our local key set any larger than max": Go's `PopAny` takes one at
            // random (map order); listwatch the first interned, so runs repeat.
            agg.messages.pop_first();
        }
        self.aggregator.add(similar, agg);
        let key = if aggregate {
            let text = format!("{COMBINED_PREFIX}{}", names.resolve(e.message));
            e.message = names.intern(&text);
            LogKey::Aggregate(similar)
        } else {
            LogKey::Event(similar, e.message)
        };
        // `eventObserve`: a repeat is the Event its first occurrence made, counted once more.
        match self.logger.get(&key).copied() {
            Some(seen) if seen.count > 0 => {
                e.count = seen.count + 1;
                e.name = seen.name;
                e.first_ms = seen.first_ms;
            }
            _ => {
                e.count = 1;
                e.name = self.new_name(e, now_ms, names, (controller, controllers));
                e.first_ms = now_ms;
            }
        }
        e.now_ms = now_ms;
        self.observe(key, e);
        // The spam filter, last: an Event it drops was counted above, so the next one sent
        // carries the count of all (Go's order).
        let mut bucket = self.spam.get(&involved).copied().unwrap_or(Bucket {
            units: SPAM_BURST * SPAM_UNITS_PER_TOKEN,
            last_ms: now_ms,
        });
        let accept = bucket.try_accept(now_ms);
        self.spam.add(involved, bucket);
        accept
    }

    /// `UpdateState`: the server took the Event; it is remembered under its own key
    /// (`getEventKey`, the message it carries: an aggregate's is the combined one).
    pub fn update_state(&mut self, e: &EventRecord) {
        let similar = (
            (e.involved_kind, e.involved, e.involved_uid),
            e.event_type,
            e.reason,
        );
        self.observe(LogKey::Event(similar, e.message), e);
    }

    fn observe(&mut self, key: LogKey, e: &EventRecord) {
        let seen = Observed {
            count: e.count,
            first_ms: e.first_ms,
            name: e.name,
        };
        self.logger.add(key, seen);
    }

    /// `makeEvent`'s name, `INVOLVED.HEX(UnixNano)`, in the Event's namespace. The nanoseconds
    /// within a millisecond count the Events named in it (interleaved between controllers), so
    /// two are never named alike; past a million in one millisecond they would wrap.
    fn new_name(
        &mut self,
        e: &EventRecord,
        now_ms: i64,
        names: &mut Names,
        (controller, controllers): (usize, usize),
    ) -> NameId {
        let seq = match self.named {
            (ms, n) if ms == now_ms => n + 1,
            _ => 0,
        };
        self.named = (now_ms, seq);
        let within = (seq * controllers.max(1) as u64 + controller as u64) % 1_000_000;
        let nanos = (now_ms.max(0) as u64) * 1_000_000 + within;
        let involved = names.resolve(e.involved);
        let bare = involved.rsplit('/').next().unwrap_or(involved);
        let name = format!("{}/{bare}.{nanos:x}", names.resolve(e.namespace));
        names.intern(&name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// groupcache `lru.Cache`: a `Get` makes a key the most recently used, and the key added
    /// past the bound evicts the least recently used one.
    #[test]
    fn the_lru_forgets_the_least_recently_used_key_past_its_bound() {
        let mut lru = Lru::new();
        for k in 0..MAX_LRU_CACHE_ENTRIES {
            lru.add(k, k);
        }
        assert_eq!(lru.get(&0), Some(&0));
        lru.add(MAX_LRU_CACHE_ENTRIES, 0);
        assert_eq!(lru.len(), MAX_LRU_CACHE_ENTRIES);
        assert_eq!(lru.get(&1), None, "1 was the least recently used");
        assert_eq!(lru.get(&0), Some(&0));
    }

    /// The explorer's state hash sees what an LRU holds and its order of use, not how many
    /// uses it took to get there.
    #[test]
    fn lrus_that_hold_the_same_in_the_same_order_hash_alike() {
        let hash = |l: &Lru<u32, u32>| {
            let mut h = std::collections::hash_map::DefaultHasher::new();
            l.hash(&mut h);
            h.finish()
        };
        let (mut a, mut b) = (Lru::new(), Lru::new());
        a.add(1, 10);
        a.add(2, 20);
        a.get(&1);
        b.add(2, 20);
        b.add(1, 10);
        assert_eq!(hash(&a), hash(&b));
        b.get(&2);
        assert_ne!(hash(&a), hash(&b), "another order of use");
    }
}
