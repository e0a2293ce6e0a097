//! client-go's work queue (`util/workqueue`): a key is never in two workers at once, waiting
//! duplicates collapse, and failures back off.

use std::collections::VecDeque;
use std::hash::{Hash, Hasher};

use crate::config::QueueKind;
use crate::model::{DurationMs, NameId, TimeMs};
use crate::store::NameMap;
use crate::trace::{QueueAdd, ReconcileResult};

pub const ITEM_BACKOFF_MS_BASE: DurationMs = DurationMs(5);
pub const ITEM_BACKOFF_MS_MAX: DurationMs = DurationMs(1_000_000);
const BUCKET_QPS: u64 = 10;
const BUCKET_BURST: u64 = 100;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WorkQueue {
    pub kind: QueueKind,
    /// Keys waiting, in order. Priority queue: in the order of their items' places
    /// (`AddedCounter`), a key being processed included (its next item, handed out once the
    /// reconcile is done).
    pub queue: VecDeque<NameId>,
    /// Low-priority keys (priority queue only): initial-list adds, served after `queue`.
    pub queue_low: VecDeque<NameId>,
    /// Keys waiting (classic: and keys being processed that were added again).
    /// Name-keyed maps (a set is a map to `()`), not `BTreeMap`s: as fast, and each `BTreeMap`
    /// type is about a kilobyte of the page's gzipped wasm.
    pub dirty: NameMap<()>,
    pub processing: NameMap<()>,
    pub failures: NameMap<u32>,
    /// Keys waiting with a `ReadyAt` in the future (a rate-limited retry, a `RequeueAfter`), at
    /// most one entry per key. Priority queue: the key's one item, an immediate add makes it
    /// ready now; classic: apart from the queue, added to it when due.
    pub delayed: NameMap<TimeMs>,
    /// Priority queue only: each item's place in the order (`AddedCounter`), waiting or delayed.
    placed: NameMap<u64>,
    next_place: u64,
    /// Token bucket of the classic queue, in thousandths of a token; negative while reserved ahead.
    bucket_millitokens: i64,
    bucket_at_ms: TimeMs,
}

/// Equal queues hash equal whatever their counters: the places hash as the order they make.
impl Hash for WorkQueue {
    fn hash<H: Hasher>(&self, h: &mut H) {
        self.kind.hash(h);
        self.queue.hash(h);
        self.queue_low.hash(h);
        self.dirty.hash(h);
        self.processing.hash(h);
        self.failures.hash(h);
        self.delayed.hash(h);
        let mut order: Vec<(u64, NameId)> = self.placed.iter().map(|(k, p)| (*p, *k)).collect();
        order.sort_unstable();
        for (_, key) in order {
            key.hash(h);
        }
        self.bucket_millitokens.hash(h);
        self.bucket_at_ms.hash(h);
    }
}

impl WorkQueue {
    pub fn new(kind: QueueKind) -> Self {
        WorkQueue {
            kind,
            queue: VecDeque::new(),
            queue_low: VecDeque::new(),
            dirty: NameMap::default(),
            processing: NameMap::default(),
            failures: NameMap::default(),
            delayed: NameMap::default(),
            placed: NameMap::default(),
            next_place: 0,
            bucket_millitokens: (BUCKET_BURST * 1000) as i64,
            bucket_at_ms: TimeMs::ZERO,
        }
    }

    pub fn add(&mut self, key: NameId, low_priority: bool) -> QueueAdd {
        match self.kind {
            QueueKind::Classic => self.add_classic(key),
            QueueKind::Priority => self.add_priority(key, low_priority),
        }
    }

    /// client-go `queue.go` `Add`: a key waiting is not added twice; a key being processed is
    /// marked dirty and queued at the back when its reconcile is done.
    fn add_classic(&mut self, key: NameId) -> QueueAdd {
        if self.dirty.insert(key, ()).is_some() {
            return QueueAdd::AlreadyQueued;
        }
        if self.processing.contains_key(&key) {
            return QueueAdd::MarkedDirty;
        }
        self.queue.push_back(key);
        QueueAdd::Added
    }

    /// controller-runtime `priorityqueue.go` `AddWithOpts`: one item per key. A new item takes
    /// the next place, even for a key being processed (handed out items leave the items, so its
    /// next item is placed at this event and runs before keys added later). An item waiting on a
    /// delay becomes ready now ("now" is the earliest `ReadyAt`) and keeps its place; a normal
    /// add raises a low-priority item's priority, also in its place.
    fn add_priority(&mut self, key: NameId, low_priority: bool) -> QueueAdd {
        if self.delayed.remove(&key).is_some() {
            self.dirty.insert(key, ());
            self.insert_in_place(key);
            return QueueAdd::Added;
        }
        if self.dirty.contains_key(&key) {
            if !low_priority {
                if let Some(i) = self.queue_low.iter().position(|k| *k == key) {
                    self.queue_low.remove(i);
                    self.insert_in_place(key);
                }
            }
            return QueueAdd::AlreadyQueued;
        }
        self.dirty.insert(key, ());
        self.place(key);
        if low_priority {
            self.queue_low.push_back(key);
        } else {
            self.queue.push_back(key);
        }
        if self.processing.contains_key(&key) {
            QueueAdd::MarkedDirty
        } else {
            QueueAdd::Added
        }
    }

    /// A new item of `key` takes the next place.
    fn place(&mut self, key: NameId) {
        self.placed.insert(key, self.next_place);
        self.next_place += 1;
    }

    /// Puts `key`'s item among the waiting normal-priority ones at the place it already has.
    fn insert_in_place(&mut self, key: NameId) {
        let place = self.placed[&key];
        let placed = &self.placed;
        let i = self.queue.partition_point(|k| placed[k] < place);
        self.queue.insert(i, key);
    }

    /// `AddAfter`: classic queues hold the delayed add apart from the queue (`delaying_queue.go`
    /// `insert`: one waiting entry per key, moved only sooner) and add it when due. The priority
    /// queue keeps one item per key: a key already waiting, or delayed until no later, absorbs
    /// the add. `Added`: the caller arms a timer for `ready_at`.
    pub fn add_after(&mut self, key: NameId, ready_at: TimeMs) -> QueueAdd {
        if self.kind == QueueKind::Classic {
            if self.delayed.get(&key).is_some_and(|&at| at <= ready_at) {
                return QueueAdd::AlreadyQueued;
            }
            self.delayed.insert(key, ready_at);
            return QueueAdd::Added;
        }
        if self.dirty.contains_key(&key) {
            return QueueAdd::AlreadyQueued;
        }
        match self.delayed.get(&key) {
            Some(&at) if at <= ready_at => QueueAdd::AlreadyQueued,
            Some(_) => {
                self.delayed.insert(key, ready_at);
                QueueAdd::Added
            }
            None => {
                self.delayed.insert(key, ready_at);
                self.place(key);
                QueueAdd::Added
            }
        }
    }

    /// A delayed add is due: is it still this queue's item (not consumed by an earlier add, nor
    /// moved sooner)?
    /// The priority queue's item then leaves the delayed ones; the add that follows places it
    /// anew (an item whose `ReadyAt` has passed sorts behind every item added without a delay).
    pub fn due(&mut self, key: NameId, now: TimeMs) -> bool {
        if self.delayed.get(&key) == Some(&now) {
            self.delayed.remove(&key);
            if self.kind == QueueKind::Classic {
                return true;
            }
            self.unplace(key);
            true
        } else {
            false
        }
    }

    /// `key` has no item any more.
    fn unplace(&mut self, key: NameId) {
        self.placed.remove(&key);
        if self.placed.is_empty() {
            self.next_place = 0;
        }
    }

    /// The first waiting key not being processed (the priority queue keeps the next item of a
    /// key being processed in its place; classic queues never hold one).
    pub fn get(&mut self) -> Option<NameId> {
        let free = |q: &VecDeque<NameId>| q.iter().position(|k| !self.processing.contains_key(k));
        let key = match (free(&self.queue), free(&self.queue_low)) {
            (Some(i), _) => self.queue.remove(i),
            (None, Some(i)) => self.queue_low.remove(i),
            (None, None) => None,
        }?;
        self.processing.insert(key, ());
        self.dirty.remove(&key);
        if self.kind == QueueKind::Priority {
            self.unplace(key);
        }
        Some(key)
    }

    /// Returns true when the key was dirty and is queued again.
    pub fn done(&mut self, key: NameId) -> bool {
        self.processing.remove(&key);
        let again = self.dirty.contains_key(&key);
        if again && self.kind == QueueKind::Classic {
            self.queue.push_back(key);
        }
        again
    }

    pub fn forget(&mut self, key: NameId) {
        self.failures.remove(&key);
    }

    /// `AddRateLimited`'s delay: the max of the per-item exponential backoff and (classic queue)
    /// the shared token bucket.
    pub fn rate_limit_delay(&mut self, key: NameId, now: TimeMs) -> DurationMs {
        let n = self.failures.get_or_insert_with(key, || 0);
        let exp = ITEM_BACKOFF_MS_BASE
            .saturating_mul(1u64 << (*n).min(40))
            .min(ITEM_BACKOFF_MS_MAX);
        *n += 1;
        if self.kind == QueueKind::Priority {
            return exp;
        }
        let refill = (DurationMs::between(self.bucket_at_ms, now).ms() * BUCKET_QPS) as i64;
        self.bucket_millitokens =
            (self.bucket_millitokens + refill).min((BUCKET_BURST * 1000) as i64) - 1000;
        self.bucket_at_ms = self.bucket_at_ms.max(now);
        let bucket = if self.bucket_millitokens >= 0 {
            DurationMs::ZERO
        } else {
            DurationMs((self.bucket_millitokens.unsigned_abs()).div_ceil(BUCKET_QPS))
        };
        exp.max(bucket)
    }

    /// After a reconcile of `key` ends with `result`: how long until it is added again, if it
    /// is (a success or a requeue-after forgets its failures; an error backs off).
    pub fn requeue_delay(
        &mut self,
        key: NameId,
        result: ReconcileResult,
        now: TimeMs,
    ) -> Option<DurationMs> {
        match result {
            ReconcileResult::Done => {
                self.forget(key);
                None
            }
            ReconcileResult::RequeueAfter(d) => {
                self.forget(key);
                Some(d)
            }
            ReconcileResult::Error(_) => Some(self.rate_limit_delay(key, now)),
            ReconcileResult::Crashed => None,
        }
    }

    pub fn waiting(&self) -> impl Iterator<Item = &NameId> {
        self.queue.iter().chain(self.queue_low.iter())
    }

    pub fn len(&self) -> usize {
        self.queue.len() + self.queue_low.len()
    }

    /// No key can be handed out now (a waiting item of a key being processed waits for its end).
    pub fn is_empty(&self) -> bool {
        self.waiting().all(|k| self.processing.contains_key(k))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waiting_duplicates_collapse_and_processing_keys_run_once_more() {
        let mut q = WorkQueue::new(QueueKind::Classic);
        let a = NameId(1);
        assert_eq!(q.add(a, false), QueueAdd::Added);
        assert_eq!(q.add(a, false), QueueAdd::AlreadyQueued);
        assert_eq!(q.len(), 1);
        assert_eq!(q.get(), Some(a));
        assert_eq!(q.get(), None, "a key is never handed to two workers");
        assert_eq!(q.add(a, false), QueueAdd::MarkedDirty);
        assert_eq!(q.add(a, false), QueueAdd::AlreadyQueued);
        assert!(q.done(a));
        assert_eq!(q.get(), Some(a));
        assert!(!q.done(a));
        assert!(q.is_empty());
    }

    /// controller-runtime `pkg/controller/priorityqueue/priorityqueue.go` `AddWithOpts`.
    #[test]
    fn priority_queue_keeps_one_item_per_key_and_an_add_makes_a_delayed_key_ready() {
        let mut q = WorkQueue::new(QueueKind::Priority);
        let a = NameId(1);
        assert_eq!(q.add_after(a, TimeMs(20)), QueueAdd::Added);
        assert_eq!(
            q.add_after(a, TimeMs(30)),
            QueueAdd::AlreadyQueued,
            "the earlier ReadyAt wins"
        );
        assert_eq!(q.add(a, false), QueueAdd::Added, "ready now");
        assert!(
            !q.due(a, TimeMs(20)),
            "the delayed item was consumed by the add"
        );
        assert_eq!(q.get(), Some(a));
        assert_eq!(q.get(), None);
        let mut c = WorkQueue::new(QueueKind::Classic);
        assert_eq!(c.add_after(a, TimeMs(20)), QueueAdd::Added);
        assert_eq!(c.add(a, false), QueueAdd::Added);
        assert!(
            c.due(a, TimeMs(20)),
            "the classic delaying queue adds again when due"
        );
    }

    /// controller-runtime `priorityqueue.go` `lockedAddWithOpts`: a key handed out is not among
    /// the items, so an add while it is processed makes a new item placed now; it is handed out
    /// once the key is done, before keys added after it. The classic queue (`queue.go`) marks
    /// it dirty and appends it when it is done.
    #[test]
    fn priority_queue_places_an_add_during_processing_at_the_add() {
        let (a, b) = (NameId(1), NameId(2));
        let mut q = WorkQueue::new(QueueKind::Priority);
        q.add(a, false);
        assert_eq!(q.get(), Some(a));
        assert_eq!(q.add(a, false), QueueAdd::MarkedDirty);
        assert_eq!(q.add(b, false), QueueAdd::Added);
        assert!(!q.is_empty(), "b can be handed out");
        assert_eq!(q.get(), Some(b), "a is still processing");
        assert!(
            q.is_empty() && q.len() == 1,
            "a's next item waits for a to be done"
        );
        assert!(q.done(a));
        q.add(b, false);
        assert!(q.done(b));
        assert_eq!(
            (q.get(), q.get()),
            (Some(a), Some(b)),
            "a's place is before b's"
        );
        let mut c = WorkQueue::new(QueueKind::Classic);
        c.add(a, false);
        c.get();
        assert_eq!(c.add(a, false), QueueAdd::MarkedDirty);
        c.add(b, false);
        assert!(c.done(a));
        assert_eq!((c.get(), c.get()), (Some(b), Some(a)), "classic: behind b");
    }

    /// controller-runtime `priorityqueue.go` `lockedAddWithOpts`: an add of a key waiting on a
    /// delay makes its item ready now and keeps its `AddedCounter`, so it goes before keys added
    /// after the delayed add; a normal add that raises a low-priority item keeps its place too.
    #[test]
    fn priority_queue_an_add_of_a_delayed_key_keeps_its_place() {
        let (a, b, c, d) = (NameId(1), NameId(2), NameId(3), NameId(4));
        let mut q = WorkQueue::new(QueueKind::Priority);
        q.add(b, false);
        assert_eq!(q.add_after(a, TimeMs(50)), QueueAdd::Added);
        q.add(c, false);
        assert_eq!(q.add(a, false), QueueAdd::Added, "ready now");
        assert!(
            !q.due(a, TimeMs(50)),
            "the delayed item became the ready one"
        );
        let order: Vec<_> = std::iter::from_fn(|| q.get()).collect();
        assert_eq!(order, [b, a, c]);
        let mut q = WorkQueue::new(QueueKind::Priority);
        q.add(d, true);
        q.add(b, false);
        q.add(a, true);
        q.add(c, false);
        assert_eq!(
            q.add(a, false),
            QueueAdd::AlreadyQueued,
            "raised to normal priority"
        );
        let order: Vec<_> = std::iter::from_fn(|| q.get()).collect();
        assert_eq!(order, [b, a, c, d]);
    }

    /// Two priority queues in the same order hash the same, whatever their counters.
    #[test]
    fn priority_queue_hash_ignores_how_far_the_counter_went() {
        use std::collections::hash_map::DefaultHasher;
        let hash = |q: &WorkQueue| {
            let mut h = DefaultHasher::new();
            q.hash(&mut h);
            h.finish()
        };
        let (a, b) = (NameId(1), NameId(2));
        let mut fresh = WorkQueue::new(QueueKind::Priority);
        fresh.add(a, false);
        fresh.add_after(b, TimeMs(9));
        let mut used = WorkQueue::new(QueueKind::Priority);
        for _ in 0..3 {
            used.add(b, false);
            used.get();
            used.done(b);
        }
        used.add(a, false);
        used.add(b, false);
        used.get();
        used.get();
        used.done(a);
        used.done(b);
        used.add(a, false);
        used.add_after(b, TimeMs(9));
        assert_eq!(hash(&fresh), hash(&used));
        fresh.add(b, false);
        used.add(b, false);
        assert_eq!(fresh.queue, used.queue);
    }

    #[test]
    fn item_backoff_doubles_from_5ms_and_caps_at_1000s() {
        let mut q = WorkQueue::new(QueueKind::Priority);
        let a = NameId(1);
        let delays: Vec<_> = (0..4)
            .map(|_| q.rate_limit_delay(a, TimeMs::ZERO))
            .collect();
        assert_eq!(delays, [5, 10, 20, 40].map(DurationMs));
        for _ in 0..30 {
            q.rate_limit_delay(a, TimeMs::ZERO);
        }
        assert_eq!(q.rate_limit_delay(a, TimeMs::ZERO), ITEM_BACKOFF_MS_MAX);
        q.forget(a);
        assert_eq!(q.rate_limit_delay(a, TimeMs::ZERO), DurationMs(5));
    }

    #[test]
    fn an_error_backs_off_and_a_success_forgets_the_failures() {
        let mut q = WorkQueue::new(QueueKind::Priority);
        let a = NameId(1);
        let error = ReconcileResult::Error(crate::trace::ApiError::ReconcileError);
        assert_eq!(q.requeue_delay(a, error, TimeMs::ZERO), Some(DurationMs(5)));
        assert_eq!(
            q.requeue_delay(a, error, TimeMs::ZERO),
            Some(DurationMs(10))
        );
        assert_eq!(
            q.requeue_delay(a, ReconcileResult::Crashed, TimeMs::ZERO),
            None
        );
        assert_eq!(
            q.requeue_delay(a, error, TimeMs::ZERO),
            Some(DurationMs(20)),
            "a crash forgets nothing"
        );
        let later = ReconcileResult::RequeueAfter(DurationMs(700));
        assert_eq!(
            q.requeue_delay(a, later, TimeMs::ZERO),
            Some(DurationMs(700))
        );
        assert_eq!(
            q.requeue_delay(a, error, TimeMs::ZERO),
            Some(DurationMs(5)),
            "forgotten"
        );
        assert_eq!(
            q.requeue_delay(a, ReconcileResult::Done, TimeMs::ZERO),
            None
        );
        assert_eq!(q.requeue_delay(a, error, TimeMs::ZERO), Some(DurationMs(5)));
    }

    #[test]
    fn classic_bucket_allows_a_burst_of_100_then_10_per_second() {
        let mut q = WorkQueue::new(QueueKind::Classic);
        for i in 0..100 {
            assert_eq!(q.rate_limit_delay(NameId(i), TimeMs::ZERO), DurationMs(5));
        }
        assert_eq!(
            q.rate_limit_delay(NameId(1000), TimeMs::ZERO),
            DurationMs(100)
        );
        assert_eq!(
            q.rate_limit_delay(NameId(1001), TimeMs::ZERO),
            DurationMs(200)
        );
        // 300 ms later three tokens came back, two of them already reserved.
        assert_eq!(q.rate_limit_delay(NameId(1002), TimeMs(300)), DurationMs(5));
    }
}
