//! A reflector (client-go's, with its informer's store and handlers) and a controller's hold.

use super::*;

/// client-go's Reflector plus the informer's store and handler.
#[derive(Clone, Debug, Hash)]
pub struct Reflector {
    pub controller: ControllerId,
    pub kind: KindId,
    pub namespace: Option<NameId>,
    /// The event handlers: a key mapping and its predicate each (empty: a cache only read).
    pub handlers: Vec<(KeyMap, Predicate)>,
    pub state: WatcherState,
    pub last_rv: Rv,
    pub store: crate::store::Store,
    /// `isLastSyncResourceVersionUnavailable`: the next list uses RV="".
    pub rv_unavailable: bool,
    pub backoff_ms_next: DurationMs,
    /// When the backoff last reset (legacy: when it last backed off).
    pub backoff_mark_ms: Option<TimeMs>,
    /// Invalidates messages and timers of earlier requests.
    pub session: Session,
    pub watch: Option<WatchId>,
    pub watch_opened_ms: TimeMs,
    pub watch_events: u32,
    pub listed: bool,
    /// A paged list in progress: its resourceVersion parameter and the items so far.
    pub paging: Option<(ListRv, Vec<Object>)>,
}

/// Notifications held at a controller until a later state of one object arrives.
#[derive(Clone, Debug, Hash)]
pub struct Hold {
    pub kind: KindId,
    pub name: NameId,
    /// Held events of that object so far: the second is the later state.
    pub seen: u32,
    pub(super) buffer: Vec<(EventId, WatcherId, Session, Msg)>,
}

impl Reflector {
    pub(super) fn new(
        controller: ControllerId,
        kind: KindId,
        namespace: Option<NameId>,
        handlers: Vec<(KeyMap, Predicate)>,
        backoff_ms: DurationMs,
    ) -> Reflector {
        Reflector {
            controller,
            kind,
            namespace,
            handlers,
            state: WatcherState::Stopped,
            last_rv: 0,
            store: Default::default(),
            rv_unavailable: false,
            backoff_ms_next: backoff_ms,
            backoff_mark_ms: None,
            session: Session(0),
            watch: None,
            watch_opened_ms: 0,
            watch_events: 0,
            listed: false,
            paging: None,
        }
    }
}

impl Reflector {
    /// A new request: messages and timers of the earlier ones are stale from now on.
    pub(super) fn new_session(&mut self) -> Session {
        self.session = self.session.next();
        self.watch = None;
        self.session
    }

    /// `relistResourceVersion()`: "" after Expired or Too large, "0" for the first list, else
    /// the last RV seen.
    pub(super) fn relist_rv(&self) -> ListRv {
        if self.rv_unavailable {
            ListRv::Consistent
        } else if !self.listed || self.last_rv == 0 {
            ListRv::Any
        } else {
            ListRv::NotOlderThan(self.last_rv)
        }
    }

    /// The backoff before jitter, and the next one doubled up to the cap.
    /// `wait.Backoff.DelayWithReset`: back to the initial delay once the reset interval has
    /// passed since the last reset (the reflector's start counts), failures or not. The legacy
    /// `ExponentialBackoffManager` measured from the last backoff instead, so only a quiet
    /// interval reset it.
    pub(super) fn next_backoff(&mut self, cfg: &ReflectorConfig, now: TimeMs) -> DurationMs {
        if self
            .backoff_mark_ms
            .is_none_or(|t| now.saturating_sub(t) > cfg.backoff_reset_ms)
        {
            self.backoff_ms_next = cfg.backoff_ms_initial;
            self.backoff_mark_ms = Some(now);
        }
        if cfg.backoff_reset_after_quiet {
            self.backoff_mark_ms = Some(now);
        }
        let base = self.backoff_ms_next;
        self.backoff_ms_next = (base * 2).min(cfg.backoff_ms_max);
        base
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reflector() -> Reflector {
        Reflector::new(ControllerId(0), KindId(0), None, vec![], 800)
    }

    #[test]
    fn a_relist_asks_any_first_then_the_last_rv_then_consistent_after_expiry() {
        let mut r = reflector();
        assert_eq!(r.relist_rv(), ListRv::Any);
        (r.listed, r.last_rv) = (true, 42);
        assert_eq!(r.relist_rv(), ListRv::NotOlderThan(42));
        r.rv_unavailable = true;
        assert_eq!(r.relist_rv(), ListRv::Consistent);
    }

    #[test]
    fn a_new_session_drops_the_watch() {
        let mut r = reflector();
        r.watch = Some(WatchId(3));
        assert_eq!(r.new_session(), Session(1));
        assert_eq!((r.session, r.watch), (Session(1), None));
    }

    #[test]
    fn backoff_doubles_to_the_cap_and_resets_every_interval() {
        let cfg = ReflectorConfig::default();
        let mut r = reflector();
        let bases: Vec<_> = (0..7).map(|i| r.next_backoff(&cfg, i * 1000)).collect();
        assert_eq!(bases, [800, 1600, 3200, 6400, 12_800, 25_600, 30_000]);
        // The reset interval counts from the first backoff (the last reset), not the last one.
        assert_eq!(r.next_backoff(&cfg, 120_001), 800);
        let quiet = ReflectorConfig {
            backoff_reset_after_quiet: true,
            ..cfg
        };
        let mut legacy = reflector();
        let bases: Vec<_> = (0..3)
            .map(|i| legacy.next_backoff(&quiet, i * 100_000))
            .collect();
        assert_eq!(bases, [800, 1600, 3200], "no quiet interval: no reset");
        assert_eq!(legacy.next_backoff(&quiet, 320_001), 800);
    }
}
