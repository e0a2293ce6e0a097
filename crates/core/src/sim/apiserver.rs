//! An apiserver: its watch caches, the reads waiting for them, and the watches it serves.

use super::*;

#[derive(Clone, Debug, Hash)]
pub struct Apiserver {
    pub caches: Vec<WatchCache>,
    pub paused: bool,
    /// Changes held back while paused, applied on resume.
    pub held: VecDeque<Change>,
    pub lag_ms: DurationMs,
    /// Open watches served by each kind's cache.
    pub(super) watches_by_kind: Vec<Vec<WatchId>>,
    /// Reads waiting (at most 3 s) for the cache to reach a revision.
    pub(super) waiting_reads: Vec<WaitingRead>,
    /// The newest etcd progress notification that arrived while paused.
    pub(super) held_progress: Rv,
    pub(super) generation: Generation,
}

impl Apiserver {
    /// Its caches, each listed (empty) at revision 1.
    pub(super) fn new(config: &Config, lag_ms: DurationMs) -> Apiserver {
        let cache = |mode| {
            let mut c = WatchCache::new(mode);
            c.replace(std::iter::empty(), 1);
            c
        };
        Apiserver {
            caches: config.kinds.iter().map(|k| cache(k.cache)).collect(),
            paused: false,
            held: VecDeque::new(),
            lag_ms,
            watches_by_kind: vec![vec![]; config.kinds.len()],
            waiting_reads: vec![],
            held_progress: 0,
            generation: Generation(0),
        }
    }
}

impl Apiserver {
    /// A change from etcd's watch: held while paused; dropped for a kind served without a cache
    /// or by a cache not ready; otherwise added to its kind's cache. Returns what the cache
    /// evicted and its capacity after, when it took the change.
    pub(super) fn apply_change(&mut self, change: Change) -> Option<(u32, u32)> {
        let kind = change.object.kind.index();
        if self.caches[kind].mode == CacheMode::Off {
            return None;
        }
        if self.paused {
            self.held.push_back(change);
            return None;
        }
        if !self.caches[kind].ready {
            return None;
        }
        // etcd progress notifications move every other kind's cache to the same revision, so a
        // list's RV is usually above its largest item and bookmarks move quiet watchers forward.
        for (k, other) in self.caches.iter_mut().enumerate() {
            if k != kind && other.ready && other.mode != CacheMode::Off {
                other.rv = other.rv.max(change.object.rv);
            }
        }
        let cache = &mut self.caches[kind];
        let out = cache.add(change);
        Some((out.evicted, cache.capacity))
    }

    /// Pauses or resumes its caches. A resume hands back what was held: the changes in order,
    /// and the newest progress notification (0: none).
    pub(super) fn set_paused(&mut self, paused: bool) -> (Vec<Change>, Rv) {
        self.paused = paused;
        if paused {
            return (vec![], 0);
        }
        let held = self.held.drain(..).collect();
        (held, std::mem::take(&mut self.held_progress))
    }

    /// An etcd progress notification: every ready cache has seen `rev` (kept for the resume
    /// while paused). Returns whether the caches moved.
    pub(super) fn progress(&mut self, rev: Rv) -> bool {
        if self.paused {
            self.held_progress = self.held_progress.max(rev);
            return false;
        }
        for cache in &mut self.caches {
            if cache.ready && cache.mode != CacheMode::Off {
                cache.rv = cache.rv.max(rev);
            }
        }
        true
    }
}

/// A read the cache answers once it has seen `rv` (`cacher.go` `waitUntilFreshAndBlock`).
#[derive(Clone, Copy, Debug, Hash, PartialEq, Eq)]
pub struct WaitingRead {
    pub watcher: WatcherId,
    pub session: Session,
    pub rv: Rv,
    pub read: ReadKind,
}

#[derive(Clone, Copy, Debug, Hash, PartialEq, Eq)]
pub enum ReadKind {
    /// `resourceVersion=N`: 504 "Too large resource version" after 3 s.
    NotOlderThan,
    /// `resourceVersion=""` (ConsistentListFromCache): after 3 s delegated to etcd.
    Consistent { limit: u32 },
    /// A streaming list's initial events: 504 after 3 s.
    WatchList { timeout_ms: DurationMs },
    /// A probe's list (its `watcher` is `PROBE_WATCHER`, its `session` the probe's number):
    /// NotOlderThan gets 504 after 3 s, a consistent list goes to etcd.
    Probe { kind: KindId, consistent: bool },
}

/// The `watcher` of a probe's waiting read: probes are not reflectors.
pub const PROBE_WATCHER: WatcherId = WatcherId(u16::MAX);

/// A watch as the server holds it.
#[derive(Clone, Debug, Hash)]
pub struct ServerWatch {
    pub watcher: WatcherId,
    pub session: Session,
    pub apiserver: ApiserverId,
    pub kind: KindId,
    pub namespace: Option<NameId>,
    pub from_etcd: bool,
    pub last_sent: Rv,
    /// The RV the watch started from: a bookmark goes out whenever the cache is past it.
    pub from_rv: Rv,
    pub deadline_ms: TimeMs,
    pub open: bool,
    pub in_flight: u32,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn change(kind: u16, rv: Rv) -> Change {
        let object = Object::fixture(KindId(kind), NameId(1), 1, rv);
        Change {
            event: EventType::Added,
            object,
            time_ms: 0,
        }
    }

    #[test]
    fn a_paused_apiserver_holds_changes_and_progress_and_other_caches_follow_the_rv() {
        let mut api = Apiserver::new(&Config::new(&["Pod", "Node"]), DurationMs::ZERO);
        assert_eq!(
            api.apply_change(change(0, 5)),
            Some((0, api.caches[0].capacity))
        );
        assert_eq!(
            api.caches[1].rv, 5,
            "the other kind's cache moves to the change's rv"
        );
        assert_eq!(api.set_paused(true), (vec![], 0));
        assert_eq!(api.apply_change(change(0, 6)), None);
        assert!(!api.progress(9));
        assert_eq!(api.set_paused(false), (vec![change(0, 6)], 9));
        assert_eq!((api.held.len(), api.held_progress), (0, 0));
        assert!(api.progress(10));
        assert!(api.caches.iter().all(|c| c.rv == 10));
        api.caches[1].ready = false;
        assert_eq!(
            api.apply_change(change(1, 11)),
            None,
            "a cache not ready drops it"
        );
        assert!(api.held.is_empty());
    }
}
