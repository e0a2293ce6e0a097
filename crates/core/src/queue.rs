//! client-go's work queue (`util/workqueue`): a key is never in two workers at once, waiting
//! duplicates collapse, and failures back off.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use crate::config::QueueKind;
use crate::model::{DurationMs, NameId, TimeMs};
use crate::trace::{QueueAdd, ReconcileResult};

pub const ITEM_BACKOFF_MS_BASE: DurationMs = DurationMs(5);
pub const ITEM_BACKOFF_MS_MAX: DurationMs = DurationMs(1_000_000);
const BUCKET_QPS: u64 = 10;
const BUCKET_BURST: u64 = 100;

#[derive(Clone, Debug, Hash, PartialEq, Eq)]
pub struct WorkQueue {
    pub kind: QueueKind,
    /// Keys waiting, in order.
    pub queue: VecDeque<NameId>,
    /// Low-priority keys (priority queue only): initial-list adds, served after `queue`.
    pub queue_low: VecDeque<NameId>,
    pub dirty: BTreeSet<NameId>,
    pub processing: BTreeSet<NameId>,
    pub failures: BTreeMap<NameId, u32>,
    /// Priority queue only: keys waiting with a `ReadyAt` in the future (a rate-limited retry,
    /// a `RequeueAfter`). One item per key: an immediate add makes it ready now.
    pub delayed: BTreeMap<NameId, TimeMs>,
    /// Token bucket of the classic queue, in thousandths of a token; negative while reserved ahead.
    bucket_millitokens: i64,
    bucket_at_ms: TimeMs,
}

impl WorkQueue {
    pub fn new(kind: QueueKind) -> Self {
        WorkQueue {
            kind,
            queue: VecDeque::new(),
            queue_low: VecDeque::new(),
            dirty: BTreeSet::new(),
            processing: BTreeSet::new(),
            failures: BTreeMap::new(),
            delayed: BTreeMap::new(),
            bucket_millitokens: (BUCKET_BURST * 1000) as i64,
            bucket_at_ms: TimeMs::ZERO,
        }
    }

    pub fn add(&mut self, key: NameId, low_priority: bool) -> QueueAdd {
        // controller-runtime `priorityqueue.AddWithOpts`: the earlier ReadyAt wins, and "now" is
        // earliest, so a delayed item of this key becomes ready now (one reconcile, not two).
        self.delayed.remove(&key);
        if self.dirty.contains(&key) {
            // A normal add raises a low-priority waiting item's priority.
            if !low_priority {
                if let Some(i) = self.queue_low.iter().position(|k| *k == key) {
                    self.queue_low.remove(i);
                    self.queue.push_back(key);
                }
            }
            return QueueAdd::AlreadyQueued;
        }
        self.dirty.insert(key);
        if self.processing.contains(&key) {
            return QueueAdd::MarkedDirty;
        }
        if low_priority && self.kind == QueueKind::Priority {
            self.queue_low.push_back(key);
        } else {
            self.queue.push_back(key);
        }
        QueueAdd::Added
    }

    /// `AddAfter`: classic queues hold the delayed add apart (`delaying_queue.go`) and add it
    /// when due, so the caller always arms a timer (`Added`). The priority queue keeps one item
    /// per key: a key already waiting, or delayed until no later, absorbs the add.
    pub fn add_after(&mut self, key: NameId, ready_at: TimeMs) -> QueueAdd {
        if self.kind == QueueKind::Classic {
            return QueueAdd::Added;
        }
        if self.dirty.contains(&key) && !self.processing.contains(&key) {
            return QueueAdd::AlreadyQueued;
        }
        match self.delayed.get(&key) {
            Some(&at) if at <= ready_at => QueueAdd::AlreadyQueued,
            _ => {
                self.delayed.insert(key, ready_at);
                QueueAdd::Added
            }
        }
    }

    /// A delayed add is due: is it still this queue's item (not consumed by an earlier add)?
    pub fn due(&mut self, key: NameId, now: TimeMs) -> bool {
        if self.kind == QueueKind::Classic {
            return true;
        }
        if self.delayed.get(&key) == Some(&now) {
            self.delayed.remove(&key);
            true
        } else {
            false
        }
    }

    pub fn get(&mut self) -> Option<NameId> {
        let key = self
            .queue
            .pop_front()
            .or_else(|| self.queue_low.pop_front())?;
        self.processing.insert(key);
        self.dirty.remove(&key);
        Some(key)
    }

    /// Returns true when the key was dirty and is queued again.
    pub fn done(&mut self, key: NameId) -> bool {
        self.processing.remove(&key);
        if self.dirty.contains(&key) {
            self.queue.push_back(key);
            true
        } else {
            false
        }
    }

    pub fn forget(&mut self, key: NameId) {
        self.failures.remove(&key);
    }

    /// `AddRateLimited`'s delay: the max of the per-item exponential backoff and (classic queue)
    /// the shared token bucket.
    pub fn rate_limit_delay(&mut self, key: NameId, now: TimeMs) -> DurationMs {
        let n = self.failures.entry(key).or_insert(0);
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

    pub fn is_empty(&self) -> bool {
        self.len() == 0
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
