//! The engine: every component's state and the event loop that moves it through virtual time.
//!
//! Sans-IO like quinn-proto: `handle_input` takes an input now, `handle_timeout` runs every
//! action due up to a moment, `poll_timeout` says when the next one is due. Nothing here reads a
//! clock, does IO or draws randomness except from the seeded `Rng`.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap, VecDeque};
use std::sync::Arc;

use crate::cache::{WatchCache, WatchStart};
use crate::config::{Behaviour, CacheMode, Config, ConfigError, Input, KeyMap, QueueKind};
use crate::model::*;
use crate::queue::WorkQueue;
use crate::reconcile::{self, Memory, Reader, Write};
use crate::trace::*;

/// etcd: the one store every apiserver shares.
#[derive(Clone, Debug, Hash)]
pub struct Etcd {
    pub rev: Rv,
    pub objects: BTreeMap<(KindId, NameId), Object>,
    /// Revisions at or below this are gone.
    pub compact_rev: Rv,
    /// Changes after `compact_rev`, kept only when some kind is served without a watch cache.
    pub log: VecDeque<Change>,
    keep_log: bool,
    next_uid: u64,
    /// The revision seen at the previous compaction tick.
    last_tick_rev: Rv,
}

#[derive(Clone, Debug, Hash)]
pub struct Apiserver {
    pub caches: Vec<WatchCache>,
    pub paused: bool,
    /// Changes held back while paused, applied on resume.
    pub held: VecDeque<Change>,
    pub lag_ms: TimeMs,
    /// Open watches served by each kind's cache.
    watches_by_kind: Vec<Vec<u32>>,
    /// NotOlderThan lists waiting for the cache to catch up.
    waiting_lists: Vec<(WatcherId, u32, Rv)>,
    generation: u32,
}

/// A watch as the server holds it.
#[derive(Clone, Debug, Hash)]
pub struct ServerWatch {
    pub watcher: WatcherId,
    pub session: u32,
    pub apiserver: ApiserverId,
    pub kind: KindId,
    pub namespace: Option<NameId>,
    pub from_etcd: bool,
    pub last_sent: Rv,
    pub open: bool,
    pub in_flight: u32,
}

/// client-go's Reflector plus the informer's store and handler.
#[derive(Clone, Debug, Hash)]
pub struct Reflector {
    pub controller: ControllerId,
    pub kind: KindId,
    pub namespace: Option<NameId>,
    /// The event handlers: one key mapping each (empty: a cache only read).
    pub maps: Vec<KeyMap>,
    pub state: WatcherState,
    pub last_rv: Rv,
    pub store: BTreeMap<NameId, Object>,
    /// `isLastSyncResourceVersionUnavailable`: the next list uses RV="".
    pub rv_unavailable: bool,
    pub backoff_ms_next: TimeMs,
    pub backoff_last_ms: Option<TimeMs>,
    /// Invalidates messages and timers of earlier requests.
    pub session: u32,
    pub watch: Option<u32>,
    pub watch_opened_ms: TimeMs,
    pub watch_events: u32,
    pub listed: bool,
    /// A paged list in progress: its resourceVersion parameter and the items so far.
    pub paging: Option<(ListRv, Vec<Object>)>,
}

#[derive(Clone, Debug, Hash)]
pub struct Running {
    pub key: NameId,
    pub writes: Vec<Write>,
    pub done: usize,
    pub start_event: EventId,
    pub started_ms: TimeMs,
}

#[derive(Clone, Debug, Hash)]
pub struct Controller {
    pub up: bool,
    /// Invalidates timers of an earlier life.
    pub epoch: u32,
    pub apiserver: ApiserverId,
    pub queue: WorkQueue,
    pub workers: Vec<Option<Running>>,
    pub reflectors: Vec<WatcherId>,
    pub link_delay_ms: TimeMs,
    /// When the last delayed message sent on each direction of the link arrives (FIFO order).
    pub link_down_last_ms: Option<TimeMs>,
    pub link_up_last_ms: Option<TimeMs>,
    pub disconnected_until: Option<TimeMs>,
    pub drop_next: u32,
    pub crash_after_writes: Option<u32>,
    /// Restart this long after the armed (or next) crash.
    pub restart_after_ms: Option<TimeMs>,
    pub memory: Memory,
    /// Keys added by the initial list (priority queue: low priority).
    initial_sync: bool,
}

#[derive(Clone, Debug)]
enum Msg {
    /// A streaming list's initial events and the bookmark that ends them.
    WatchListStart {
        watch: u32,
        items: Vec<Object>,
        rv: Rv,
    },
    /// `rest`: what later pages will hold (etcd's snapshot at `list_rv`, kept by the server for
    /// the continue token).
    ListOk {
        list_rv: Rv,
        items: Vec<Object>,
        from_etcd: bool,
        rest: Vec<Object>,
    },
    ListErr(ApiError),
    WatchOpened {
        watch: u32,
        from_rv: Rv,
        replayed: u32,
    },
    Event {
        watch: u32,
        change: Change,
    },
    Bookmark {
        rv: Rv,
    },
    WatchErr(ApiError),
    WatchEnd(WatchEnd),
    Refused(ApiError),
}

#[derive(Clone, Debug)]
enum Action {
    Input(Input),
    CacheApply {
        api: ApiserverId,
        change: Change,
    },
    Deliver {
        watcher: WatcherId,
        session: u32,
        msg: Msg,
    },
    ServeList {
        watcher: WatcherId,
        session: u32,
        rv: ListRv,
        limit: u32,
    },
    /// The next page: etcd reads the first page's revision again, unless it was compacted.
    ServeListPage {
        watcher: WatcherId,
        session: u32,
        list_rv: Rv,
        rest: Vec<Object>,
        limit: u32,
    },
    ServeWatchList {
        watcher: WatcherId,
        session: u32,
        rv: ListRv,
        timeout_ms: TimeMs,
    },
    ServeWatch {
        watcher: WatcherId,
        session: u32,
        from: Rv,
        timeout_ms: TimeMs,
    },
    ListDeadline {
        watcher: WatcherId,
        session: u32,
        api: ApiserverId,
    },
    Wake {
        watcher: WatcherId,
        session: u32,
    },
    WatchTimeout {
        watch: u32,
    },
    BookmarkBeforeDeadline {
        watch: u32,
    },
    BookmarkTick,
    CompactTick,
    Resync {
        watcher: WatcherId,
        epoch: u32,
    },
    QueueAfter {
        controller: ControllerId,
        epoch: u32,
        key: NameId,
    },
    Work {
        controller: ControllerId,
        epoch: u32,
        worker: u32,
    },
    Start {
        controller: ControllerId,
        epoch: u32,
    },
    /// The end of a disconnect; stale when a longer disconnect replaced it.
    Reconnect {
        controller: ControllerId,
        until_ms: TimeMs,
    },
    CacheReady {
        api: ApiserverId,
        kind: Option<KindId>,
        generation: u32,
    },
    AnvilTick {
        controller: ControllerId,
        epoch: u32,
    },
    Gc {
        owner_uid: u64,
    },
}

#[derive(Clone, Debug)]
struct Scheduled {
    at: TimeMs,
    seq: u64,
    cause: EventId,
    action: Action,
}

impl PartialEq for Scheduled {
    fn eq(&self, o: &Self) -> bool {
        (self.at, self.seq) == (o.at, o.seq)
    }
}
impl Eq for Scheduled {}
impl PartialOrd for Scheduled {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Scheduled {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        (self.at, self.seq).cmp(&(o.at, o.seq))
    }
}

/// Why a run stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stop {
    /// It reached its end time.
    End,
    /// It hit the cap on events.
    EventCap,
}

/// Per (controller, key): does the desired state hold, and since when.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct EsrState {
    pub holds: bool,
    pub since_ms: TimeMs,
    pub spec_changed_ms: TimeMs,
}

/// The whole simulated system. `Clone` is the explorer's fork; `state_hash` its dedup key.
#[derive(Clone, Debug)]
pub struct Sim {
    pub config: Arc<Config>,
    pub now_ms: TimeMs,
    pub names: Names,
    pub etcd: Etcd,
    pub apiservers: Vec<Apiserver>,
    pub watches: Vec<ServerWatch>,
    pub reflectors: Vec<Reflector>,
    pub controllers: Vec<Controller>,
    pub esr: BTreeMap<(ControllerId, NameId), EsrState>,
    rng: Rng,
    heap: BinaryHeap<Reverse<Scheduled>>,
    ready: VecDeque<(EventId, Action)>,
    seq: u64,
    /// Sequence numbers for inputs appended after construction (see `schedule_input`).
    appended_seq: u64,
    appended_seq_end: u64,
    pub trace: Vec<Event>,
    pub stopped: Option<Stop>,
}

struct StoreReader<'a> {
    sim: &'a Sim,
    controller: ControllerId,
}

impl Reader for StoreReader<'_> {
    fn get(&self, kind: KindId, name: NameId) -> Option<Object> {
        let c = &self.sim.controllers[self.controller.index()];
        if self.sim.config.controllers[self.controller.index()].anvil {
            return self.sim.etcd.objects.get(&(kind, name)).copied();
        }
        c.reflectors
            .iter()
            .map(|w| &self.sim.reflectors[w.index()])
            .find(|r| r.kind == kind)
            .and_then(|r| r.store.get(&name).copied())
    }
    fn owned_by(&self, kind: KindId, uid: u64) -> Vec<Object> {
        let c = &self.sim.controllers[self.controller.index()];
        if self.sim.config.controllers[self.controller.index()].anvil {
            return EtcdReader(&self.sim.etcd).owned_by(kind, uid);
        }
        c.reflectors
            .iter()
            .map(|w| &self.sim.reflectors[w.index()])
            .find(|r| r.kind == kind)
            .map(|r| {
                r.store
                    .values()
                    .filter(|o| o.owner.map(|o| o.uid) == Some(uid))
                    .copied()
                    .collect()
            })
            .unwrap_or_default()
    }
}

/// Reads the truth, for Anvil mode and for ESR.
pub struct EtcdReader<'a>(pub &'a Etcd);

impl Reader for EtcdReader<'_> {
    fn get(&self, kind: KindId, name: NameId) -> Option<Object> {
        self.0.objects.get(&(kind, name)).copied()
    }
    fn owned_by(&self, kind: KindId, uid: u64) -> Vec<Object> {
        self.0
            .objects
            .range((kind, NameId(0))..=(kind, NameId(u32::MAX)))
            .map(|(_, o)| *o)
            .filter(|o| o.owner.map(|o| o.uid) == Some(uid))
            .collect()
    }
}

const SHORT_WATCH_MS: TimeMs = 1000;
const APPENDED_SEQ_GAP: u64 = 1 << 32;
const LIST_WAIT_MS: TimeMs = 3000;
const BOOKMARK_BEFORE_DEADLINE_MS: TimeMs = 2000;

impl Sim {
    pub fn new(config: Config) -> Result<Sim, ConfigError> {
        config.validate()?;
        let config = Arc::new(config);
        let mut names = Names::default();
        names.intern("default");
        let keep_log = config.kinds.iter().any(|k| k.cache == CacheMode::Off);
        let apiservers = config
            .apiservers
            .iter()
            .map(|a| Apiserver {
                caches: config
                    .kinds
                    .iter()
                    .map(|k| WatchCache::new(k.cache))
                    .collect(),
                paused: false,
                held: VecDeque::new(),
                lag_ms: a.lag_ms,
                watches_by_kind: vec![vec![]; config.kinds.len()],
                waiting_lists: vec![],
                generation: 0,
            })
            .collect();
        let mut sim = Sim {
            now_ms: 0,
            names,
            etcd: Etcd {
                rev: 1,
                objects: BTreeMap::new(),
                compact_rev: 0,
                log: VecDeque::new(),
                keep_log,
                next_uid: 1,
                last_tick_rev: 0,
            },
            apiservers,
            watches: vec![],
            reflectors: vec![],
            controllers: vec![],
            esr: BTreeMap::new(),
            rng: Rng::new(config.seed),
            heap: BinaryHeap::new(),
            ready: VecDeque::new(),
            seq: 0,
            appended_seq: 0,
            appended_seq_end: 0,
            trace: Vec::new(),
            stopped: None,
            config: config.clone(),
        };
        for api in &mut sim.apiservers {
            for c in &mut api.caches {
                c.replace(std::iter::empty(), 1);
            }
        }
        for (i, c) in config.controllers.iter().enumerate() {
            let id = ControllerId(i as u16);
            let mut reflectors = vec![];
            if !c.anvil {
                // One informer per (kind, namespace), shared by every handler on it, as
                // controller-runtime's cache does.
                let mut watches: Vec<(KindId, Vec<KeyMap>, Option<NameId>)> = vec![];
                for w in &c.watches {
                    let ns = w.namespace.as_deref().map(|n| sim.names.intern(n));
                    let handler = (w.map != KeyMap::ReadOnly).then_some(w.map);
                    match watches.iter_mut().find(|x| x.0 == w.kind && x.2 == ns) {
                        Some(x) => x.1.extend(handler.filter(|h| !x.1.contains(h))),
                        None => watches.push((w.kind, handler.into_iter().collect(), ns)),
                    }
                }
                // Reads of a kind nobody watches still go through an informer (controller-runtime
                // starts one on first read), with no handler.
                for k in behaviour_reads(c.behaviour) {
                    if !watches.iter().any(|w| w.0 == k) {
                        watches.push((k, vec![], None));
                    }
                }
                for (kind, maps, namespace) in watches {
                    let w = WatcherId(sim.reflectors.len() as u16);
                    sim.reflectors.push(Reflector {
                        controller: id,
                        kind,
                        namespace,
                        maps,
                        state: WatcherState::Stopped,
                        last_rv: 0,
                        store: BTreeMap::new(),
                        rv_unavailable: false,
                        backoff_ms_next: config.reflector.backoff_ms_initial,
                        backoff_last_ms: None,
                        session: 0,
                        watch: None,
                        watch_opened_ms: 0,
                        watch_events: 0,
                        listed: false,
                        paging: None,
                    });
                    reflectors.push(w);
                }
            }
            sim.controllers.push(Controller {
                up: false,
                epoch: 0,
                apiserver: c.apiserver,
                queue: WorkQueue::new(c.queue),
                workers: vec![None; c.workers as usize],
                reflectors,
                link_delay_ms: c.link_delay_ms,
                link_down_last_ms: None,
                link_up_last_ms: None,
                disconnected_until: None,
                drop_next: 0,
                crash_after_writes: None,
                restart_after_ms: None,
                memory: Memory::new(),
                initial_sync: false,
            });
            sim.schedule(
                c.start_ms,
                NO_CAUSE,
                Action::Start {
                    controller: id,
                    epoch: 0,
                },
            );
        }
        if config.bookmark_ms > 0 && config.reflector.bookmarks {
            sim.schedule(config.bookmark_ms, NO_CAUSE, Action::BookmarkTick);
        }
        if config.compaction_ms > 0 {
            sim.schedule(config.compaction_ms, NO_CAUSE, Action::CompactTick);
        }
        // The timeline goes last, followed by a gap of sequence numbers: an input appended later
        // with `schedule_input` orders exactly as if it had been the timeline's last entry.
        for t in &config.timeline {
            if let Input::Create { name, .. } | Input::Update { name, .. } = &t.input {
                sim.names.intern(&qualify(name));
            }
            sim.schedule(t.at_ms, NO_CAUSE, Action::Input(t.input.clone()));
        }
        sim.appended_seq = sim.seq;
        sim.seq += APPENDED_SEQ_GAP;
        sim.appended_seq_end = sim.seq;
        Ok(sim)
    }

    // ----- the sans-IO surface -----

    /// When the next scheduled action is due.
    pub fn poll_timeout(&self) -> Option<TimeMs> {
        if !self.ready.is_empty() {
            return Some(self.now_ms);
        }
        self.heap.peek().map(|s| s.0.at)
    }

    /// Schedules an input at a future moment as if it had been appended to the configured
    /// timeline: a fork that does this runs exactly like a fresh run of the extended timeline.
    /// Inputs in the past run now. Returns false once the gap of sequence numbers is used up.
    pub fn schedule_input(&mut self, at_ms: TimeMs, input: Input) -> bool {
        if self.appended_seq + 1 >= self.appended_seq_end {
            return false;
        }
        self.appended_seq += 1;
        let at = at_ms.max(self.now_ms);
        self.heap.push(Reverse(Scheduled {
            at,
            seq: self.appended_seq,
            cause: NO_CAUSE,
            action: Action::Input(input),
        }));
        true
    }

    /// Applies an input at the current moment (writes by users, faults).
    pub fn handle_input(&mut self, input: Input) {
        self.ready.push_back((NO_CAUSE, Action::Input(input)));
        self.drain_ready();
    }

    /// Runs every action due at or before `now_ms`, then moves the clock to `now_ms`.
    pub fn handle_timeout(&mut self, now_ms: TimeMs) {
        self.drain_ready();
        while self.stopped.is_none() {
            match self.heap.peek() {
                Some(Reverse(s)) if s.at <= now_ms => {}
                _ => break,
            }
            let Reverse(s) = self.heap.pop().expect("peeked");
            self.now_ms = s.at;
            self.dispatch(s.cause, s.action);
            self.drain_ready();
        }
        if self.stopped.is_none() {
            self.now_ms = self.now_ms.max(now_ms);
        }
    }

    /// Runs the configured timeline to its end (or a cap).
    pub fn run(&mut self) -> Stop {
        let end = self.config.end_ms;
        self.handle_timeout(end);
        *self.stopped.get_or_insert(Stop::End)
    }

    /// A hash of everything that decides the future (not the trace): the explorer's dedup key.
    pub fn state_hash(&self) -> u64 {
        use std::hash::{Hash, Hasher};
        let mut h = Fnv(0xcbf2_9ce4_8422_2325);
        self.now_ms.hash(&mut h);
        self.etcd.hash(&mut h);
        self.apiservers.hash(&mut h);
        self.watches.hash(&mut h);
        self.reflectors.hash(&mut h);
        self.controllers.hash(&mut h);
        self.rng.hash(&mut h);
        let mut pending: Vec<_> = self
            .heap
            .iter()
            .map(|Reverse(s)| (s.at, format!("{:?}", s.action)))
            .collect();
        pending.sort();
        pending.hash(&mut h);
        h.finish()
    }

    // ----- plumbing -----

    fn schedule(&mut self, at: TimeMs, cause: EventId, action: Action) {
        if at <= self.now_ms && !self.trace.is_empty() {
            self.ready.push_back((cause, action));
            return;
        }
        self.seq += 1;
        self.heap.push(Reverse(Scheduled {
            at,
            seq: self.seq,
            cause,
            action,
        }));
    }

    fn drain_ready(&mut self) {
        while self.stopped.is_none() {
            let Some((cause, a)) = self.ready.pop_front() else {
                break;
            };
            self.dispatch(cause, a);
        }
    }

    fn emit(&mut self, actor: Actor, cause: EventId, kind: EventKind) -> EventId {
        let id = self.trace.len() as EventId;
        if self.trace.len() as u64 >= self.config.limits.max_events {
            self.stopped = Some(Stop::EventCap);
            return id.saturating_sub(1);
        }
        self.trace.push(Event {
            time_ms: self.now_ms,
            actor,
            cause,
            kind,
        });
        id
    }

    fn controller_of(&self, w: WatcherId) -> ControllerId {
        self.reflectors[w.index()].controller
    }

    fn link_delay(&self, c: ControllerId) -> TimeMs {
        self.controllers[c.index()].link_delay_ms
    }

    fn connected(&self, c: ControllerId) -> bool {
        self.controllers[c.index()].disconnected_until.is_none()
    }

    fn send_to_client(&mut self, watcher: WatcherId, session: u32, cause: EventId, msg: Msg) {
        let action = Action::Deliver {
            watcher,
            session,
            msg,
        };
        self.send_on_link(watcher, true, cause, action);
    }

    fn send_to_server(&mut self, watcher: WatcherId, cause: EventId, action: Action) {
        self.send_on_link(watcher, false, cause, action);
    }

    /// A link is a TCP connection: each direction delivers in order, even when its delay changes
    /// while messages are in flight. A message goes behind anything still in flight on its
    /// direction; with no delay and nothing in flight it is delivered at once.
    fn send_on_link(
        &mut self,
        watcher: WatcherId,
        to_client: bool,
        cause: EventId,
        action: Action,
    ) {
        let c = self.controller_of(watcher);
        let now = self.now_ms;
        let ctl = &mut self.controllers[c.index()];
        let delay = ctl.link_delay_ms;
        let last = if to_client {
            &mut ctl.link_down_last_ms
        } else {
            &mut ctl.link_up_last_ms
        };
        if delay == 0 && last.is_none_or(|l| l < now) {
            return self.schedule(now, cause, action);
        }
        let at = (now + delay).max(last.unwrap_or(0));
        *last = Some(at);
        self.seq += 1;
        let scheduled = Scheduled {
            at,
            seq: self.seq,
            cause,
            action,
        };
        self.heap.push(Reverse(scheduled));
    }

    fn dispatch(&mut self, cause: EventId, action: Action) {
        match action {
            Action::Input(input) => self.apply_input(cause, input),
            Action::CacheApply { api, change } => self.cache_apply(api, change, cause),
            Action::Deliver {
                watcher,
                session,
                msg,
            } => self.deliver(watcher, session, msg, cause),
            Action::ServeList {
                watcher,
                session,
                rv,
                limit,
            } => self.serve_list(watcher, session, rv, limit, cause),
            Action::ServeListPage {
                watcher,
                session,
                list_rv,
                rest,
                limit,
            } => {
                let c = self.controller_of(watcher);
                let msg = if !self.connected(c) {
                    Msg::ListErr(ApiError::ConnectionRefused)
                } else if list_rv < self.etcd.compact_rev {
                    Msg::ListErr(ApiError::ContinueExpired)
                } else {
                    page(list_rv, rest, limit)
                };
                self.send_to_client(watcher, session, cause, msg);
            }
            Action::ServeWatchList {
                watcher,
                session,
                rv,
                timeout_ms,
            } => self.serve_watch_list(watcher, session, rv, timeout_ms, cause),
            Action::ServeWatch {
                watcher,
                session,
                from,
                timeout_ms,
            } => self.serve_watch(watcher, session, from, timeout_ms, cause),
            Action::ListDeadline {
                watcher,
                session,
                api,
            } => {
                let waiting = &mut self.apiservers[api.index()].waiting_lists;
                if let Some(i) = waiting
                    .iter()
                    .position(|w| w.0 == watcher && w.1 == session)
                {
                    let (_, _, rv) = waiting.remove(i);
                    let kind = self.reflectors[watcher.index()].kind;
                    let current = self.apiservers[api.index()].caches[kind.index()].rv;
                    let err = ApiError::TooLargeRv {
                        requested: rv,
                        current,
                    };
                    self.send_to_client(watcher, session, cause, Msg::ListErr(err));
                }
            }
            Action::Wake { watcher, session } => {
                let r = &self.reflectors[watcher.index()];
                if r.session == session {
                    match r.state {
                        WatcherState::BackoffRelist => self.start_list(watcher, cause),
                        WatcherState::BackoffRewatch => self.start_watch(watcher, cause),
                        _ => {}
                    }
                }
            }
            Action::WatchTimeout { watch } => {
                if self.watches[watch as usize].open {
                    self.close_watch(watch, WatchEnd::Timeout, cause);
                }
            }
            Action::BookmarkBeforeDeadline { watch } => self.send_bookmark(watch, cause),
            Action::BookmarkTick => {
                for i in 0..self.watches.len() {
                    if self.watches[i].open {
                        self.send_bookmark(i as u32, cause);
                    }
                }
                self.schedule(
                    self.now_ms + self.config.bookmark_ms,
                    NO_CAUSE,
                    Action::BookmarkTick,
                );
            }
            Action::CompactTick => self.compact_tick(),
            Action::Resync { watcher, epoch } => self.resync(watcher, epoch),
            Action::QueueAfter {
                controller,
                epoch,
                key,
            } => {
                if self.controllers[controller.index()].epoch == epoch {
                    self.enqueue(controller, key, cause, false);
                }
            }
            Action::Work {
                controller,
                epoch,
                worker,
            } => {
                if self.controllers[controller.index()].epoch == epoch {
                    self.work(controller, worker, cause);
                }
            }
            Action::Start { controller, epoch } => {
                if self.controllers[controller.index()].epoch == epoch {
                    self.start_controller(controller, cause);
                }
            }
            Action::Reconnect {
                controller,
                until_ms,
            } => {
                let c = &mut self.controllers[controller.index()];
                if c.disconnected_until == Some(until_ms) {
                    c.disconnected_until = None;
                    self.emit(
                        Actor::Controller(controller),
                        cause,
                        EventKind::Reconnect { controller },
                    );
                }
            }
            Action::CacheReady {
                api,
                kind,
                generation,
            } => {
                if self.apiservers[api.index()].generation == generation {
                    self.cache_ready(api, kind, cause);
                }
            }
            Action::AnvilTick { controller, epoch } => {
                if self.controllers[controller.index()].epoch == epoch {
                    let primary = self.config.controllers[controller.index()].primary;
                    let keys: Vec<NameId> = self
                        .etcd
                        .objects
                        .range((primary, NameId(0))..=(primary, NameId(u32::MAX)))
                        .map(|(k, _)| k.1)
                        .collect();
                    for key in keys {
                        self.enqueue(controller, key, cause, false);
                    }
                    let period = self.config.controllers[controller.index()].anvil_period_ms;
                    self.schedule(
                        self.now_ms + period,
                        NO_CAUSE,
                        Action::AnvilTick { controller, epoch },
                    );
                }
            }
            Action::Gc { owner_uid } => {
                let dependents: Vec<Object> = self
                    .etcd
                    .objects
                    .values()
                    .filter(|o| o.owner.map(|o| o.uid) == Some(owner_uid))
                    .copied()
                    .collect();
                for d in dependents {
                    let _ = self.write(
                        Actor::GarbageCollector,
                        cause,
                        Write::Delete {
                            kind: d.kind,
                            name: d.name,
                            uid: Some(d.uid),
                        },
                    );
                }
            }
        }
    }

    // ----- inputs -----

    fn apply_input(&mut self, cause: EventId, input: Input) {
        match input {
            Input::Create { kind, name, spec } => {
                let name = self.names.intern(&qualify(&name));
                let namespace = self.namespace_of(name);
                let _ = self.write(
                    Actor::User,
                    cause,
                    Write::Create {
                        kind,
                        name,
                        namespace,
                        spec,
                        owner: None,
                    },
                );
            }
            Input::Update { kind, name, spec } => {
                let name = self.names.intern(&qualify(&name));
                self.user_update(kind, name, cause, |o| o.spec = spec);
            }
            Input::UpdateStatus { kind, name, status } => {
                let name = self.names.intern(&qualify(&name));
                self.user_update(kind, name, cause, |o| o.status = status);
            }
            Input::Delete { kind, name } => {
                let name = self.names.intern(&qualify(&name));
                let _ = self.write(
                    Actor::User,
                    cause,
                    Write::Delete {
                        kind,
                        name,
                        uid: None,
                    },
                );
            }
            Input::Say { text } => {
                let text = self.names.intern(&text);
                self.emit(Actor::Narrator, cause, EventKind::Say { text });
            }
            Input::Disconnect {
                controller,
                duration_ms,
            } => {
                let until_ms = self.now_ms + duration_ms;
                let id = self.emit(
                    Actor::Controller(controller),
                    cause,
                    EventKind::Disconnect {
                        controller,
                        until_ms,
                    },
                );
                let c = &mut self.controllers[controller.index()];
                let until_ms = c.disconnected_until.map_or(until_ms, |u| u.max(until_ms));
                c.disconnected_until = Some(until_ms);
                self.schedule(
                    until_ms,
                    id,
                    Action::Reconnect {
                        controller,
                        until_ms,
                    },
                );
                for w in self.controllers[controller.index()].reflectors.clone() {
                    if let Some(watch) = self.reflectors[w.index()].watch {
                        self.close_watch(watch, WatchEnd::Disconnected, id);
                    }
                }
            }
            Input::Delay {
                controller,
                delay_ms,
            } => {
                self.controllers[controller.index()].link_delay_ms = delay_ms;
                self.emit(
                    Actor::Controller(controller),
                    cause,
                    EventKind::LinkDelay {
                        controller,
                        delay_ms,
                    },
                );
            }
            Input::Drop { controller, count } => {
                self.controllers[controller.index()].drop_next = count;
                self.emit(
                    Actor::Controller(controller),
                    cause,
                    EventKind::DropArmed { controller, count },
                );
            }
            Input::PauseCache { apiserver } | Input::ResumeCache { apiserver } => {
                let paused = matches!(input, Input::PauseCache { .. });
                let id = self.emit(
                    Actor::Apiserver(apiserver),
                    cause,
                    EventKind::CachePaused { apiserver, paused },
                );
                self.apiservers[apiserver.index()].paused = paused;
                if !paused {
                    let held: Vec<Change> =
                        self.apiservers[apiserver.index()].held.drain(..).collect();
                    for change in held {
                        self.cache_apply(apiserver, change, id);
                    }
                }
            }
            Input::RestartApiserver { apiserver, down_ms } => {
                let id = self.emit(
                    Actor::Apiserver(apiserver),
                    cause,
                    EventKind::ApiserverRestart { apiserver, down_ms },
                );
                self.reinit_caches(apiserver, None, down_ms, id);
            }
            Input::ReinitCache {
                apiserver,
                kind,
                down_ms,
            } => {
                self.reinit_caches(apiserver, Some(kind), down_ms, cause);
            }
            Input::Crash {
                controller,
                after_writes,
                restart_after_ms,
            } => {
                let ctl = &mut self.controllers[controller.index()];
                ctl.restart_after_ms = restart_after_ms;
                match after_writes {
                    Some(n) => ctl.crash_after_writes = Some(n),
                    None => self.crash(controller, cause),
                }
            }
            Input::Restart {
                controller,
                apiserver,
            } => {
                if let Some(a) = apiserver {
                    self.controllers[controller.index()].apiserver = a;
                }
                if !self.controllers[controller.index()].up {
                    self.start_controller(controller, cause);
                }
            }
        }
    }

    fn namespace_of(&mut self, name: NameId) -> NameId {
        let s = self.names.resolve(name);
        let ns = s
            .split_once('/')
            .map(|(ns, _)| ns.to_string())
            .unwrap_or_else(|| "default".into());
        self.names.intern(&ns)
    }

    fn user_update(&mut self, kind: KindId, name: NameId, cause: EventId, f: impl Fn(&mut Object)) {
        match self.etcd.objects.get(&(kind, name)).copied() {
            Some(mut o) => {
                f(&mut o);
                let _ = self.write(
                    Actor::User,
                    cause,
                    Write::Update {
                        kind,
                        name,
                        expect_rv: o.rv,
                        spec: o.spec,
                        status: o.status,
                        finalizers: o.finalizers,
                    },
                );
            }
            None => {
                self.emit(
                    Actor::User,
                    cause,
                    EventKind::WriteFailed {
                        op: WriteOp::Update,
                        kind,
                        name,
                        error: ApiError::NotFound,
                    },
                );
            }
        }
    }

    // ----- etcd and the apiservers -----

    /// Commits one write to etcd, emits it, and fans it out to the caches.
    fn write(&mut self, actor: Actor, cause: EventId, w: Write) -> Result<EventId, ApiError> {
        let fail = |sim: &mut Sim, op, kind, name, error| {
            sim.emit(
                actor,
                cause,
                EventKind::WriteFailed {
                    op,
                    kind,
                    name,
                    error,
                },
            );
            Err(error)
        };
        match w {
            Write::Create {
                kind,
                name,
                namespace,
                spec,
                owner,
            } => {
                if self.etcd.objects.contains_key(&(kind, name)) {
                    return fail(self, WriteOp::Create, kind, name, ApiError::AlreadyExists);
                }
                let uid = self.etcd.next_uid;
                self.etcd.next_uid += 1;
                let obj = Object {
                    kind,
                    name,
                    namespace,
                    uid,
                    rv: 0,
                    generation: 1,
                    spec,
                    status: 0,
                    owner,
                    finalizers: 0,
                    deletion_ms: None,
                };
                Ok(self.commit(actor, cause, WriteOp::Create, EventType::Added, obj))
            }
            Write::Update {
                kind,
                name,
                expect_rv,
                spec,
                status,
                finalizers,
            } => {
                let Some(cur) = self.etcd.objects.get(&(kind, name)).copied() else {
                    return fail(self, WriteOp::Update, kind, name, ApiError::NotFound);
                };
                if cur.rv != expect_rv {
                    return fail(self, WriteOp::Update, kind, name, ApiError::Conflict);
                }
                if (cur.spec, cur.status, cur.finalizers) == (spec, status, finalizers) {
                    return Ok(self.emit(actor, cause, EventKind::NoOpWrite { kind, name }));
                }
                let mut obj = cur;
                let op = if spec != cur.spec {
                    obj.generation += 1;
                    WriteOp::Update
                } else if status != cur.status {
                    WriteOp::UpdateStatus
                } else {
                    WriteOp::Update
                };
                obj.spec = spec;
                obj.status = status;
                obj.finalizers = finalizers;
                if obj.deletion_ms.is_some() && finalizers == 0 {
                    // The last finalizer is gone: the object goes.
                    return Ok(self.commit(actor, cause, WriteOp::Delete, EventType::Deleted, obj));
                }
                Ok(self.commit(actor, cause, op, EventType::Modified, obj))
            }
            Write::Delete { kind, name, uid } => {
                let Some(cur) = self.etcd.objects.get(&(kind, name)).copied() else {
                    return fail(self, WriteOp::Delete, kind, name, ApiError::NotFound);
                };
                if uid.is_some_and(|u| u != cur.uid) {
                    return fail(self, WriteOp::Delete, kind, name, ApiError::UidMismatch);
                }
                if cur.finalizers != 0 {
                    if cur.deletion_ms.is_some() {
                        return Ok(self.emit(actor, cause, EventKind::NoOpWrite { kind, name }));
                    }
                    let mut obj = cur;
                    obj.deletion_ms = Some(self.now_ms);
                    return Ok(self.commit(
                        actor,
                        cause,
                        WriteOp::MarkDeleting,
                        EventType::Modified,
                        obj,
                    ));
                }
                Ok(self.commit(actor, cause, WriteOp::Delete, EventType::Deleted, cur))
            }
        }
    }

    fn commit(
        &mut self,
        actor: Actor,
        cause: EventId,
        op: WriteOp,
        event: EventType,
        mut obj: Object,
    ) -> EventId {
        self.etcd.rev += 1;
        obj.rv = self.etcd.rev;
        let key = (obj.kind, obj.name);
        if event == EventType::Deleted {
            self.etcd.objects.remove(&key);
        } else {
            self.etcd.objects.insert(key, obj);
        }
        let id = self.emit(
            actor,
            cause,
            EventKind::Write {
                op,
                kind: obj.kind,
                name: obj.name,
                rv: obj.rv,
                spec: obj.spec,
                status: obj.status,
            },
        );
        let change = Change {
            event,
            object: obj,
            time_ms: self.now_ms,
        };
        if self.etcd.keep_log {
            self.etcd.log.push_back(change);
        }
        if event == EventType::Deleted {
            let delay = self.config.gc_delay_ms;
            if self
                .etcd
                .objects
                .values()
                .any(|o| o.owner.map(|o| o.uid) == Some(obj.uid))
            {
                self.schedule(self.now_ms + delay, id, Action::Gc { owner_uid: obj.uid });
            }
        }
        for a in 0..self.apiservers.len() {
            let api = ApiserverId(a as u8);
            let lag = self.apiservers[a].lag_ms;
            if lag == 0 {
                self.cache_apply(api, change, id);
            } else {
                self.schedule(self.now_ms + lag, id, Action::CacheApply { api, change });
            }
        }
        self.etcd_watch_fanout(change, id);
        self.track_esr(obj);
        id
    }

    fn cache_apply(&mut self, api: ApiserverId, change: Change, cause: EventId) {
        let kind = change.object.kind;
        let server = &mut self.apiservers[api.index()];
        if server.caches[kind.index()].mode == CacheMode::Off {
            return;
        }
        if server.paused || !server.caches[kind.index()].ready {
            if server.paused {
                server.held.push_back(change);
            }
            return;
        }
        // etcd progress notifications move every other kind's cache to the same revision, so a
        // list's RV is usually above its largest item and bookmarks move quiet watchers forward.
        for (k, other) in server.caches.iter_mut().enumerate() {
            if k != kind.index() && other.ready && other.mode != CacheMode::Off {
                other.rv = other.rv.max(change.object.rv);
            }
        }
        let cache = &mut server.caches[kind.index()];
        let out = cache.add(change);
        let capacity = cache.capacity;
        let id = self.emit(
            Actor::Apiserver(api),
            cause,
            EventKind::CacheAdd {
                apiserver: api,
                kind,
                rv: change.object.rv,
                name: change.object.name,
                evicted: out.evicted,
                capacity,
            },
        );
        // Lists waiting for this RV.
        let rv = change.object.rv;
        let ready: Vec<(WatcherId, u32, Rv)> = {
            let w = &mut self.apiservers[api.index()].waiting_lists;
            let (done, keep): (Vec<_>, Vec<_>) = w
                .drain(..)
                .partition(|(wt, _, want)| self.reflectors[wt.index()].kind == kind && *want <= rv);
            *w = keep;
            done
        };
        for (w, session, _) in ready {
            self.answer_list_from_cache(w, session, api, id);
        }
        let watches = self.apiservers[api.index()].watches_by_kind[kind.index()].clone();
        for watch in watches {
            self.send_event(watch, change, id);
        }
    }

    fn etcd_watch_fanout(&mut self, change: Change, cause: EventId) {
        if self.config.kinds[change.object.kind.index()].cache != CacheMode::Off {
            return;
        }
        let ids: Vec<u32> = (0..self.watches.len() as u32)
            .filter(|&i| {
                let w = &self.watches[i as usize];
                w.open && w.from_etcd && w.kind == change.object.kind
            })
            .collect();
        for watch in ids {
            self.send_event(watch, change, cause);
        }
    }

    fn send_event(&mut self, watch: u32, change: Change, cause: EventId) {
        let w = &self.watches[watch as usize];
        if !w.open || change.object.rv <= w.last_sent {
            return;
        }
        if w.namespace.is_some_and(|ns| ns != change.object.namespace) {
            return;
        }
        let (watcher, session) = (w.watcher, w.session);
        let controller = self.controller_of(watcher);
        self.watches[watch as usize].last_sent = change.object.rv;
        if self.controllers[controller.index()].drop_next > 0 {
            self.controllers[controller.index()].drop_next -= 1;
            self.emit(
                Actor::Watcher(watcher),
                cause,
                EventKind::EventDropped {
                    watcher,
                    rv: change.object.rv,
                },
            );
            return;
        }
        if self.link_delay(controller) > 0 {
            let w = &mut self.watches[watch as usize];
            w.in_flight += 1;
            if w.in_flight > self.config.watch_chan_capacity {
                self.close_watch(watch, WatchEnd::TooSlow, cause);
                return;
            }
        }
        self.send_to_client(watcher, session, cause, Msg::Event { watch, change });
    }

    fn send_bookmark(&mut self, watch: u32, cause: EventId) {
        let w = &self.watches[watch as usize];
        if !w.open || w.from_etcd {
            return;
        }
        let cache = &self.apiservers[w.apiserver.index()].caches[w.kind.index()];
        if !cache.ready || self.apiservers[w.apiserver.index()].paused && cache.rv <= w.last_sent {
            return;
        }
        let rv = cache.rv;
        if rv <= w.last_sent {
            return;
        }
        let (watcher, session) = (w.watcher, w.session);
        self.watches[watch as usize].last_sent = rv;
        self.send_to_client(watcher, session, cause, Msg::Bookmark { rv });
    }

    fn close_watch(&mut self, watch: u32, reason: WatchEnd, cause: EventId) {
        let w = &mut self.watches[watch as usize];
        if !w.open {
            return;
        }
        w.open = false;
        let (api, kind, watcher, session) = (w.apiserver, w.kind, w.watcher, w.session);
        self.apiservers[api.index()].watches_by_kind[kind.index()].retain(|&i| i != watch);
        if reason == WatchEnd::Disconnected {
            // The client sees its own broken connection at once.
            self.deliver(watcher, session, Msg::WatchEnd(reason), cause);
        } else {
            self.send_to_client(watcher, session, cause, Msg::WatchEnd(reason));
        }
    }

    fn compact_tick(&mut self) {
        // compact.go: bump the bookkeeping key, compact to the revision of the previous tick.
        self.etcd.rev += 1;
        let target = self.etcd.last_tick_rev;
        self.etcd.last_tick_rev = self.etcd.rev;
        if target > self.etcd.compact_rev {
            self.etcd.compact_rev = target;
            while self.etcd.log.front().is_some_and(|c| c.object.rv <= target) {
                self.etcd.log.pop_front();
            }
            self.emit(Actor::Etcd, NO_CAUSE, EventKind::Compacted { rev: target });
        }
        self.schedule(
            self.now_ms + self.config.compaction_ms,
            NO_CAUSE,
            Action::CompactTick,
        );
    }

    fn reinit_caches(
        &mut self,
        api: ApiserverId,
        only: Option<KindId>,
        down_ms: TimeMs,
        cause: EventId,
    ) {
        let server = &mut self.apiservers[api.index()];
        server.generation += 1;
        let generation = server.generation;
        let kinds: Vec<KindId> = match only {
            Some(k) => vec![k],
            None => (0..server.caches.len()).map(|k| KindId(k as u16)).collect(),
        };
        for &k in &kinds {
            let cache = &mut server.caches[k.index()];
            cache.ready = false;
            cache.buffer.clear();
        }
        if only.is_none() {
            server.held.clear();
            server.paused = false;
        }
        let to_close: Vec<u32> = (0..self.watches.len() as u32)
            .filter(|&i| {
                let w = &self.watches[i as usize];
                w.open && w.apiserver == api && (only.is_none() || Some(w.kind) == only)
            })
            .collect();
        for &k in &kinds {
            let list_rv = self.apiservers[api.index()].caches[k.index()].list_rv;
            self.emit(
                Actor::Apiserver(api),
                cause,
                EventKind::CacheReset {
                    apiserver: api,
                    kind: k,
                    list_rv,
                    ready: false,
                },
            );
        }
        for w in to_close {
            self.close_watch(w, WatchEnd::ServerClosed, cause);
        }
        self.schedule(
            self.now_ms + down_ms,
            cause,
            Action::CacheReady {
                api,
                kind: only,
                generation,
            },
        );
    }

    fn cache_ready(&mut self, api: ApiserverId, only: Option<KindId>, cause: EventId) {
        let kinds: Vec<KindId> = match only {
            Some(k) => vec![k],
            None => (0..self.config.kinds.len())
                .map(|k| KindId(k as u16))
                .collect(),
        };
        for k in kinds {
            let rev = self.etcd.rev;
            let objects: Vec<Object> = EtcdReader(&self.etcd).kind_objects(k);
            let cache = &mut self.apiservers[api.index()].caches[k.index()];
            if cache.mode == CacheMode::Off {
                continue;
            }
            cache.replace(objects.into_iter(), rev);
            self.emit(
                Actor::Apiserver(api),
                cause,
                EventKind::CacheReset {
                    apiserver: api,
                    kind: k,
                    list_rv: rev,
                    ready: true,
                },
            );
        }
    }

    // ----- lists and watches, server side -----

    /// The apiserver a watcher's request reaches, or None after refusing it (link down).
    fn route(
        &mut self,
        watcher: WatcherId,
        session: u32,
        cause: EventId,
        refuse: fn(ApiError) -> Msg,
    ) -> Option<ApiserverId> {
        let c = self.controller_of(watcher);
        if self.connected(c) {
            return Some(self.controllers[c.index()].apiserver);
        }
        self.send_to_client(watcher, session, cause, refuse(ApiError::ConnectionRefused));
        None
    }

    fn serve_list(
        &mut self,
        watcher: WatcherId,
        session: u32,
        rv: ListRv,
        limit: u32,
        cause: EventId,
    ) {
        let Some(api) = self.route(watcher, session, cause, Msg::ListErr) else {
            return;
        };
        let kind = self.reflectors[watcher.index()].kind;
        let cache = &self.apiservers[api.index()].caches[kind.index()];
        let from_cache = cache.mode != CacheMode::Off && cache.ready;
        match rv {
            ListRv::Any if from_cache => self.answer_list_from_cache(watcher, session, api, cause),
            ListRv::NotOlderThan(n) if from_cache => {
                if cache.rv >= n {
                    self.answer_list_from_cache(watcher, session, api, cause);
                } else {
                    self.apiservers[api.index()]
                        .waiting_lists
                        .push((watcher, session, n));
                    self.schedule(
                        self.now_ms + LIST_WAIT_MS,
                        cause,
                        Action::ListDeadline {
                            watcher,
                            session,
                            api,
                        },
                    );
                }
            }
            ListRv::NotOlderThan(_) if cache.mode != CacheMode::Off => {
                self.send_to_client(
                    watcher,
                    session,
                    cause,
                    Msg::ListErr(ApiError::TooManyRequests),
                );
            }
            _ => {
                // etcd honours `limit`: the first page, and a continue token for the rest.
                let items = EtcdReader(&self.etcd).kind_objects(kind);
                let items = self.filter_namespace(watcher, items);
                let list_rv = self.etcd.rev;
                self.send_to_client(watcher, session, cause, page(list_rv, items, limit));
            }
        }
    }

    fn filter_namespace(&self, watcher: WatcherId, mut items: Vec<Object>) -> Vec<Object> {
        if let Some(ns) = self.reflectors[watcher.index()].namespace {
            items.retain(|o| o.namespace == ns);
        }
        items
    }

    fn answer_list_from_cache(
        &mut self,
        watcher: WatcherId,
        session: u32,
        api: ApiserverId,
        cause: EventId,
    ) {
        let kind = self.reflectors[watcher.index()].kind;
        let cache = &self.apiservers[api.index()].caches[kind.index()];
        let items: Vec<Object> = cache.store.values().copied().collect();
        let list_rv = cache.rv;
        let items = self.filter_namespace(watcher, items);
        self.send_to_client(
            watcher,
            session,
            cause,
            Msg::ListOk {
                list_rv,
                items,
                from_etcd: false,
                rest: vec![],
            },
        );
    }

    /// A streaming list: register a watch at the cache's RV and send its current objects as
    /// initial events ended by a bookmark. Without a watch cache the server cannot stream, and
    /// the client falls back to a normal list.
    fn serve_watch_list(
        &mut self,
        watcher: WatcherId,
        session: u32,
        rv: ListRv,
        timeout_ms: TimeMs,
        cause: EventId,
    ) {
        let c = self.controller_of(watcher);
        let api = self.controllers[c.index()].apiserver;
        let r = &self.reflectors[watcher.index()];
        let (kind, namespace) = (r.kind, r.namespace);
        let cache = &self.apiservers[api.index()].caches[kind.index()];
        if cache.mode == CacheMode::Off || !self.connected(c) {
            let limit = match rv {
                ListRv::NotOlderThan(_) => 0,
                _ => self.config.reflector.page_size,
            };
            return self.serve_list(watcher, session, rv, limit, cause);
        }
        if !cache.ready {
            let err = Msg::ListErr(ApiError::TooManyRequests);
            return self.send_to_client(watcher, session, cause, err);
        }
        let items: Vec<Object> = cache.store.values().copied().collect();
        let at = cache.rv;
        let items = self.filter_namespace(watcher, items);
        let watch = self.open_watch(watcher, session, api, kind, namespace, false, at);
        let start = Msg::WatchListStart {
            watch,
            items,
            rv: at,
        };
        self.send_to_client(watcher, session, cause, start);
        self.arm_watch_timers(watch, timeout_ms, cause);
    }

    fn serve_watch(
        &mut self,
        watcher: WatcherId,
        session: u32,
        from: Rv,
        timeout_ms: TimeMs,
        cause: EventId,
    ) {
        let Some(api) = self.route(watcher, session, cause, Msg::Refused) else {
            return;
        };
        let r = &self.reflectors[watcher.index()];
        let (kind, namespace) = (r.kind, r.namespace);
        let cache = &self.apiservers[api.index()].caches[kind.index()];
        let from_etcd = cache.mode == CacheMode::Off;
        if !from_etcd && !cache.ready {
            self.send_to_client(
                watcher,
                session,
                cause,
                Msg::Refused(ApiError::TooManyRequests),
            );
            return;
        }
        let replay: Vec<Change> = if from_etcd {
            if from + 1 < self.etcd.compact_rev {
                self.send_to_client(
                    watcher,
                    session,
                    cause,
                    Msg::WatchErr(ApiError::WatchCompacted),
                );
                return;
            }
            self.etcd
                .log
                .iter()
                .filter(|c| c.object.kind == kind && c.object.rv > from)
                .copied()
                .collect()
        } else {
            match cache.check_watch_start(from) {
                WatchStart::TooOld {
                    requested,
                    oldest_minus_one,
                } => {
                    // An ERROR event inside an HTTP 200 stream, then the stream ends.
                    let err = ApiError::TooOld {
                        requested,
                        oldest_minus_one,
                    };
                    self.send_to_client(watcher, session, cause, Msg::WatchErr(err));
                    return;
                }
                WatchStart::Ok => cache.events_after(from).copied().collect(),
            }
        };
        let watch = self.open_watch(watcher, session, api, kind, namespace, from_etcd, from);
        let replayed = replay
            .iter()
            .filter(|c| namespace.is_none_or(|ns| ns == c.object.namespace))
            .count() as u32;
        self.send_to_client(
            watcher,
            session,
            cause,
            Msg::WatchOpened {
                watch,
                from_rv: from,
                replayed,
            },
        );
        for change in replay {
            self.send_event(watch, change, cause);
        }
        self.arm_watch_timers(watch, timeout_ms, cause);
    }

    /// Registers a server-side watch that has sent everything up to `from`.
    #[allow(clippy::too_many_arguments)]
    fn open_watch(
        &mut self,
        watcher: WatcherId,
        session: u32,
        api: ApiserverId,
        kind: KindId,
        namespace: Option<NameId>,
        from_etcd: bool,
        from: Rv,
    ) -> u32 {
        let watch = self.watches.len() as u32;
        self.watches.push(ServerWatch {
            watcher,
            session,
            apiserver: api,
            kind,
            namespace,
            from_etcd,
            last_sent: from,
            open: true,
            in_flight: 0,
        });
        if !from_etcd {
            self.apiservers[api.index()].watches_by_kind[kind.index()].push(watch);
        }
        watch
    }

    /// The server-side timeout the client asked for, and the bookmark 2 s before it.
    fn arm_watch_timers(&mut self, watch: u32, timeout: TimeMs, cause: EventId) {
        let cfg = self.config.reflector;
        self.schedule(self.now_ms + timeout, cause, Action::WatchTimeout { watch });
        if cfg.bookmarks && timeout > BOOKMARK_BEFORE_DEADLINE_MS {
            self.schedule(
                self.now_ms + timeout - BOOKMARK_BEFORE_DEADLINE_MS,
                cause,
                Action::BookmarkBeforeDeadline { watch },
            );
        }
    }

    // ----- the reflector, client side -----

    fn set_state(&mut self, w: WatcherId, state: WatcherState, cause: EventId) -> EventId {
        let r = &mut self.reflectors[w.index()];
        r.state = state;
        let last_rv = r.last_rv;
        self.emit(
            Actor::Watcher(w),
            cause,
            EventKind::State {
                watcher: w,
                state,
                last_rv,
            },
        )
    }

    fn start_list(&mut self, w: WatcherId, cause: EventId) {
        let r = &mut self.reflectors[w.index()];
        r.session += 1;
        r.watch = None;
        let session = r.session;
        let relist = r.listed;
        // relistResourceVersion(): "" after Expired/Too-large, "0" first, else the last seen RV.
        let rv = if r.rv_unavailable {
            ListRv::Consistent
        } else if !r.listed || r.last_rv == 0 {
            ListRv::Any
        } else {
            ListRv::NotOlderThan(r.last_rv)
        };
        let id = self.set_state(w, WatcherState::Listing, cause);
        if self.config.reflector.streaming_list {
            // watchList(): RV "" (consistent) first, then the last seen RV, NotOlderThan.
            let rv = match rv {
                ListRv::Any => ListRv::Consistent,
                other => other,
            };
            let timeout_ms = self.watch_timeout();
            let id = self.emit(
                Actor::Watcher(w),
                id,
                EventKind::WatchListRequest {
                    watcher: w,
                    rv,
                    relist,
                },
            );
            self.send_to_server(
                w,
                id,
                Action::ServeWatchList {
                    watcher: w,
                    session,
                    rv,
                    timeout_ms,
                },
            );
            return;
        }
        // The pager sets `limit` unless the list is at a resourceVersion (then it must come
        // from the watch cache, which does not page).
        let limit = match rv {
            ListRv::NotOlderThan(_) => 0,
            _ => self.config.reflector.page_size,
        };
        self.request_list(w, session, rv, limit, relist, id);
    }

    fn request_list(
        &mut self,
        w: WatcherId,
        session: u32,
        rv: ListRv,
        limit: u32,
        relist: bool,
        cause: EventId,
    ) {
        self.reflectors[w.index()].paging = (limit > 0).then(|| (rv, vec![]));
        let id = self.emit(
            Actor::Watcher(w),
            cause,
            EventKind::ListRequest {
                watcher: w,
                rv,
                relist,
            },
        );
        self.send_to_server(
            w,
            id,
            Action::ServeList {
                watcher: w,
                session,
                rv,
                limit,
            },
        );
    }

    fn start_watch(&mut self, w: WatcherId, cause: EventId) {
        let r = &mut self.reflectors[w.index()];
        r.session += 1;
        r.watch = None;
        let (session, from) = (r.session, r.last_rv);
        let timeout_ms = self.watch_timeout();
        let id = self.emit(
            Actor::Watcher(w),
            cause,
            EventKind::WatchRequest {
                watcher: w,
                from_rv: from,
                timeout_ms,
            },
        );
        self.send_to_server(
            w,
            id,
            Action::ServeWatch {
                watcher: w,
                session,
                from,
                timeout_ms,
            },
        );
    }

    /// client-go: `minWatchTimeout * (rand + 1)`, uniform in [5 m, 10 m) by default.
    fn watch_timeout(&mut self) -> TimeMs {
        let min = self.config.reflector.watch_timeout_ms_min;
        min + self.rng.below(min)
    }

    fn backoff(&mut self, w: WatcherId, state: WatcherState, cause: EventId) {
        let cfg = self.config.reflector;
        let now = self.now_ms;
        let r = &mut self.reflectors[w.index()];
        if r.backoff_last_ms
            .is_none_or(|t| now - t > cfg.backoff_reset_ms)
        {
            r.backoff_ms_next = cfg.backoff_ms_initial;
        }
        r.backoff_last_ms = Some(now);
        let base = r.backoff_ms_next;
        r.backoff_ms_next = (base * 2).min(cfg.backoff_ms_max);
        r.session += 1;
        r.watch = None;
        let session = r.session;
        let delay_ms = base + self.rng.below(base);
        let id = self.set_state(w, state, cause);
        let id = self.emit(
            Actor::Watcher(w),
            id,
            EventKind::Backoff {
                watcher: w,
                delay_ms,
            },
        );
        self.schedule(
            now + delay_ms,
            id,
            Action::Wake {
                watcher: w,
                session,
            },
        );
    }

    fn deliver(&mut self, w: WatcherId, session: u32, msg: Msg, cause: EventId) {
        if let Msg::Event { watch, .. } = &msg {
            let sw = &mut self.watches[*watch as usize];
            sw.in_flight = sw.in_flight.saturating_sub(1);
        }
        if self.reflectors[w.index()].session != session {
            return;
        }
        match msg {
            Msg::ListOk {
                list_rv,
                items,
                from_etcd,
                rest,
            } => {
                let more = !rest.is_empty();
                let id = self.emit(
                    Actor::Watcher(w),
                    cause,
                    EventKind::ListResult {
                        watcher: w,
                        list_rv,
                        items: items.len() as u32,
                        from_etcd,
                        more,
                    },
                );
                let r = &mut self.reflectors[w.index()];
                let mut collected = r.paging.take().map(|p| (p.0, p.1));
                let items = match collected.as_mut() {
                    Some((_, got)) => {
                        got.extend(items);
                        std::mem::take(got)
                    }
                    None => items,
                };
                if more {
                    // Fetch the next page with the continue token.
                    let rv = collected.map(|c| c.0).unwrap_or(ListRv::Consistent);
                    r.paging = Some((rv, items));
                    let limit = self.config.reflector.page_size.max(1);
                    let id = self.emit(
                        Actor::Watcher(w),
                        id,
                        EventKind::ListContinue {
                            watcher: w,
                            list_rv,
                        },
                    );
                    self.send_to_server(
                        w,
                        id,
                        Action::ServeListPage {
                            watcher: w,
                            session,
                            list_rv,
                            rest,
                            limit,
                        },
                    );
                    return;
                }
                self.replace_store(w, items, id);
                let r = &mut self.reflectors[w.index()];
                r.last_rv = list_rv;
                r.rv_unavailable = false;
                r.listed = true;
                let id = self.set_state(w, WatcherState::InitListed, id);
                self.start_watch(w, id);
            }
            Msg::WatchListStart { watch, items, rv } => {
                let id = self.emit(
                    Actor::Watcher(w),
                    cause,
                    EventKind::InitialEventsEnd {
                        watcher: w,
                        rv,
                        items: items.len() as u32,
                    },
                );
                self.replace_store(w, items, id);
                let now = self.now_ms;
                let r = &mut self.reflectors[w.index()];
                r.last_rv = rv;
                r.rv_unavailable = false;
                r.listed = true;
                r.watch = Some(watch);
                r.watch_opened_ms = now;
                r.watch_events = 0;
                self.set_state(w, WatcherState::Watching, id);
            }
            Msg::ListErr(error) => {
                let id = self.emit(
                    Actor::Watcher(w),
                    cause,
                    EventKind::ListFailed { watcher: w, error },
                );
                if let (ApiError::ContinueExpired, Some((rv, _))) =
                    (error, self.reflectors[w.index()].paging.take())
                {
                    // pager.FullListIfExpired: the same list again, without paging.
                    let relist = self.reflectors[w.index()].listed;
                    self.request_list(w, session, rv, 0, relist, id);
                } else if matches!(error, ApiError::TooOld { .. } | ApiError::TooLargeRv { .. }) {
                    // Retried at once with RV="".
                    self.reflectors[w.index()].rv_unavailable = true;
                    self.start_list(w, id);
                } else {
                    self.backoff(w, WatcherState::BackoffRelist, id);
                }
            }
            Msg::WatchOpened {
                watch,
                from_rv,
                replayed,
            } => {
                let now = self.now_ms;
                let r = &mut self.reflectors[w.index()];
                r.watch = Some(watch);
                r.watch_opened_ms = now;
                r.watch_events = 0;
                let id = self.emit(
                    Actor::Watcher(w),
                    cause,
                    EventKind::WatchOpened {
                        watcher: w,
                        from_rv,
                        replayed,
                    },
                );
                self.set_state(w, WatcherState::Watching, id);
            }
            Msg::Event { change, .. } => self.watch_event(w, change, cause),
            Msg::Bookmark { rv, .. } => {
                let r = &mut self.reflectors[w.index()];
                r.last_rv = r.last_rv.max(rv);
                r.watch_events += 1;
                self.emit(
                    Actor::Watcher(w),
                    cause,
                    EventKind::Bookmark { watcher: w, rv },
                );
            }
            Msg::WatchErr(error) => {
                let id = self.emit(
                    Actor::Watcher(w),
                    cause,
                    EventKind::WatchFailed { watcher: w, error },
                );
                let id = self.set_state(w, WatcherState::Empty, id);
                self.backoff(w, WatcherState::BackoffRelist, id);
            }
            Msg::Refused(error) => {
                let id = self.emit(
                    Actor::Watcher(w),
                    cause,
                    EventKind::WatchFailed { watcher: w, error },
                );
                self.backoff(w, WatcherState::BackoffRewatch, id);
            }
            Msg::WatchEnd(reason) => {
                let id = self.emit(
                    Actor::Watcher(w),
                    cause,
                    EventKind::WatchEnded { watcher: w, reason },
                );
                let r = &self.reflectors[w.index()];
                let short = self.now_ms - r.watch_opened_ms < SHORT_WATCH_MS && r.watch_events == 0;
                if short && reason != WatchEnd::Disconnected {
                    // "very short watch": treated as an error, so back off and relist.
                    self.backoff(w, WatcherState::BackoffRelist, id);
                } else {
                    self.start_watch(w, id);
                }
            }
        }
    }

    fn watch_event(&mut self, w: WatcherId, change: Change, cause: EventId) {
        let o = change.object;
        let r = &mut self.reflectors[w.index()];
        r.last_rv = o.rv;
        r.watch_events += 1;
        match change.event {
            EventType::Deleted => r.store.remove(&o.name),
            _ => r.store.insert(o.name, o),
        };
        let id = self.emit(
            Actor::Watcher(w),
            cause,
            EventKind::WatchEvent {
                watcher: w,
                event: change.event,
                name: o.name,
                rv: o.rv,
                spec: o.spec,
            },
        );
        self.handle(w, &o, id, false);
    }

    /// The relist's diff (`DeltaFIFO.Replace` + `HandleDeltas`).
    fn replace_store(&mut self, w: WatcherId, items: Vec<Object>, cause: EventId) {
        let new: BTreeMap<NameId, Object> = items.into_iter().map(|o| (o.name, o)).collect();
        let old = std::mem::take(&mut self.reflectors[w.index()].store);
        let initial = !self.reflectors[w.index()].listed;
        let mut deltas = vec![];
        for (name, o) in &old {
            if !new.contains_key(name) {
                deltas.push((Delta::DeletedFinalStateUnknown, *o));
            }
        }
        for (name, o) in &new {
            match old.get(name) {
                None => deltas.push((Delta::Added, *o)),
                Some(prev) if prev.rv != o.rv => deltas.push((Delta::Updated, *o)),
                Some(_) => {}
            }
        }
        self.reflectors[w.index()].store = new;
        for (delta, o) in deltas {
            let id = self.emit(
                Actor::Watcher(w),
                cause,
                EventKind::Informer {
                    watcher: w,
                    delta,
                    name: o.name,
                    rv: o.rv,
                    spec: o.spec,
                    deleting: o.deletion_ms.is_some(),
                },
            );
            self.handle(w, &o, id, initial);
        }
    }

    fn resync(&mut self, w: WatcherId, epoch: u32) {
        let c = self.controller_of(w);
        if self.controllers[c.index()].epoch != epoch {
            return;
        }
        let objects: Vec<Object> = self.reflectors[w.index()].store.values().copied().collect();
        for o in objects {
            let id = self.emit(
                Actor::Watcher(w),
                NO_CAUSE,
                EventKind::Informer {
                    watcher: w,
                    delta: Delta::Sync,
                    name: o.name,
                    rv: o.rv,
                    spec: o.spec,
                    deleting: o.deletion_ms.is_some(),
                },
            );
            self.handle(w, &o, id, false);
        }
        let period = self.config.controllers[c.index()].resync_ms;
        self.schedule(
            self.now_ms + period,
            NO_CAUSE,
            Action::Resync { watcher: w, epoch },
        );
    }

    /// The event handler: object → reconcile key.
    fn handle(&mut self, w: WatcherId, o: &Object, cause: EventId, initial: bool) {
        let r = &self.reflectors[w.index()];
        let c = r.controller;
        let primary = self.config.controllers[c.index()].primary;
        let keys: Vec<NameId> = r
            .maps
            .iter()
            .filter_map(|m| match m {
                KeyMap::ReadOnly => None,
                KeyMap::Itself => Some(o.name),
                KeyMap::Owner => o
                    .owner
                    .filter(|owner| owner.kind == primary)
                    .map(|owner| owner.name),
            })
            .collect();
        for key in keys {
            self.enqueue(c, key, cause, initial);
        }
    }

    // ----- controllers -----

    fn enqueue(&mut self, c: ControllerId, key: NameId, cause: EventId, low_priority: bool) {
        let ctl = &mut self.controllers[c.index()];
        if !ctl.up {
            return;
        }
        let outcome = ctl.queue.add(key, low_priority || ctl.initial_sync);
        let id = self.emit(
            Actor::Controller(c),
            cause,
            EventKind::Enqueue {
                controller: c,
                key,
                outcome,
                delay_ms: 0,
            },
        );
        if outcome == QueueAdd::Added {
            self.kick(c, id);
        }
    }

    /// Wakes an idle worker, if any.
    fn kick(&mut self, c: ControllerId, cause: EventId) {
        let ctl = &self.controllers[c.index()];
        if let Some(worker) = ctl.workers.iter().position(|w| w.is_none()) {
            let epoch = ctl.epoch;
            self.ready.push_back((
                cause,
                Action::Work {
                    controller: c,
                    epoch,
                    worker: worker as u32,
                },
            ));
        }
    }

    fn work(&mut self, c: ControllerId, worker: u32, cause: EventId) {
        let cfg = &self.config.controllers[c.index()];
        let (reconcile_ms, behaviour, primary) = (cfg.reconcile_ms, cfg.behaviour, cfg.primary);
        let running = self.controllers[c.index()].workers[worker as usize].take();
        let Some(mut run) = running else {
            // Idle: take the next key.
            let Some(key) = self.controllers[c.index()].queue.get() else {
                return;
            };
            let spec = StoreReader {
                sim: self,
                controller: c,
            }
            .get(primary, key)
            .map(|o| o.spec);
            let start = self.emit(
                Actor::Controller(c),
                cause,
                EventKind::ReconcileStart {
                    controller: c,
                    key,
                    worker,
                    spec,
                },
            );
            let mut names = std::mem::take(&mut self.names);
            let mut memory = std::mem::take(&mut self.controllers[c.index()].memory);
            let writes = reconcile::plan(
                behaviour,
                primary,
                key,
                1 << c.0,
                &StoreReader {
                    sim: self,
                    controller: c,
                },
                &mut names,
                &mut memory,
            );
            self.names = names;
            self.controllers[c.index()].memory = memory;
            let epoch = self.controllers[c.index()].epoch;
            let steps = writes.len() as u64 + 1;
            let run = Running {
                key,
                writes,
                done: 0,
                start_event: start,
                started_ms: self.now_ms,
            };
            self.controllers[c.index()].workers[worker as usize] = Some(run);
            let at = self.now_ms + reconcile_ms / steps;
            self.schedule(
                at,
                start,
                Action::Work {
                    controller: c,
                    epoch,
                    worker,
                },
            );
            return;
        };
        // A step of a running reconcile: the next write, or the end.
        if run.done < run.writes.len() {
            let ctl = &self.controllers[c.index()];
            if ctl.crash_after_writes == Some(run.done as u32) && run.done > 0 {
                self.controllers[c.index()].workers[worker as usize] = Some(run);
                self.crash(c, cause);
                return;
            }
            let w = run.writes[run.done];
            run.done += 1;
            let result = if self.connected(c) {
                self.write(Actor::Controller(c), run.start_event, w)
            } else {
                Err(ApiError::ConnectionRefused)
            };
            let epoch = self.controllers[c.index()].epoch;
            if let Err(e) = result {
                self.finish(c, worker, run, ReconcileResult::Error(e), cause);
                return;
            }
            let steps = run.writes.len() as u64 + 1;
            let at = run.started_ms + reconcile_ms * (run.done as u64 + 1) / steps;
            self.controllers[c.index()].workers[worker as usize] = Some(run);
            self.schedule(
                at,
                cause,
                Action::Work {
                    controller: c,
                    epoch,
                    worker,
                },
            );
            return;
        }
        let cfg = &self.config.controllers[c.index()];
        let result = if cfg.error_ppm > 0 && self.rng.chance_ppm(cfg.error_ppm) {
            ReconcileResult::Error(ApiError::ReconcileError)
        } else if cfg.requeue_after_ms > 0 {
            ReconcileResult::RequeueAfter(cfg.requeue_after_ms)
        } else if cfg.anvil {
            ReconcileResult::RequeueAfter(cfg.anvil_period_ms)
        } else {
            ReconcileResult::Done
        };
        self.finish(c, worker, run, result, cause);
    }

    fn finish(
        &mut self,
        c: ControllerId,
        worker: u32,
        run: Running,
        result: ReconcileResult,
        _cause: EventId,
    ) {
        let key = run.key;
        let id = self.emit(
            Actor::Controller(c),
            run.start_event,
            EventKind::ReconcileEnd {
                controller: c,
                key,
                result,
            },
        );
        let now = self.now_ms;
        let ctl = &mut self.controllers[c.index()];
        ctl.workers[worker as usize] = None;
        let epoch = ctl.epoch;
        let again = ctl.queue.done(key);
        let delay = match result {
            ReconcileResult::Done => {
                ctl.queue.forget(key);
                None
            }
            ReconcileResult::RequeueAfter(d) => {
                ctl.queue.forget(key);
                Some(d)
            }
            ReconcileResult::Error(_) => Some(ctl.queue.rate_limit_delay(key, now)),
            ReconcileResult::Crashed => None,
        };
        if let Some(d) = delay {
            let id = self.emit(
                Actor::Controller(c),
                id,
                EventKind::Enqueue {
                    controller: c,
                    key,
                    outcome: QueueAdd::Added,
                    delay_ms: d,
                },
            );
            self.schedule(
                now + d,
                id,
                Action::QueueAfter {
                    controller: c,
                    epoch,
                    key,
                },
            );
        }
        let _ = again;
        self.ready.push_back((
            id,
            Action::Work {
                controller: c,
                epoch,
                worker,
            },
        ));
    }

    fn start_controller(&mut self, c: ControllerId, cause: EventId) {
        let api = self.controllers[c.index()].apiserver;
        let id = self.emit(
            Actor::Controller(c),
            cause,
            EventKind::Restart {
                controller: c,
                apiserver: api,
            },
        );
        let cfg = &self.config.controllers[c.index()];
        let (anvil, period, resync, queue_kind) =
            (cfg.anvil, cfg.anvil_period_ms, cfg.resync_ms, cfg.queue);
        let ctl = &mut self.controllers[c.index()];
        ctl.up = true;
        ctl.epoch += 1;
        ctl.queue = WorkQueue::new(queue_kind);
        ctl.memory.clear();
        ctl.crash_after_writes = None;
        ctl.initial_sync = queue_kind == QueueKind::Priority;
        let epoch = ctl.epoch;
        if anvil {
            self.schedule(
                self.now_ms,
                id,
                Action::AnvilTick {
                    controller: c,
                    epoch,
                },
            );
            return;
        }
        for w in self.controllers[c.index()].reflectors.clone() {
            let r = &mut self.reflectors[w.index()];
            r.store.clear();
            r.last_rv = 0;
            r.listed = false;
            r.rv_unavailable = false;
            r.backoff_last_ms = None;
            self.set_state(w, WatcherState::Empty, id);
            self.start_list(w, id);
            if resync > 0 {
                self.schedule(
                    self.now_ms + resync,
                    id,
                    Action::Resync { watcher: w, epoch },
                );
            }
        }
        self.controllers[c.index()].initial_sync = false;
        let _ = period;
    }

    fn crash(&mut self, c: ControllerId, cause: EventId) {
        if !self.controllers[c.index()].up {
            return;
        }
        let id = self.emit(
            Actor::Controller(c),
            cause,
            EventKind::Crash { controller: c },
        );
        let running: Vec<(u32, NameId)> = self.controllers[c.index()]
            .workers
            .iter()
            .enumerate()
            .filter_map(|(i, r)| r.as_ref().map(|r| (i as u32, r.key)))
            .collect();
        for (_, key) in running {
            self.emit(
                Actor::Controller(c),
                id,
                EventKind::ReconcileEnd {
                    controller: c,
                    key,
                    result: ReconcileResult::Crashed,
                },
            );
        }
        let ctl = &mut self.controllers[c.index()];
        if let Some(d) = ctl.restart_after_ms.take() {
            let restart = Input::Restart {
                controller: c,
                apiserver: None,
            };
            self.schedule(self.now_ms + d.max(1), id, Action::Input(restart));
        }
        let ctl = &mut self.controllers[c.index()];
        ctl.up = false;
        ctl.epoch += 1;
        ctl.workers.iter_mut().for_each(|w| *w = None);
        ctl.queue = WorkQueue::new(ctl.queue.kind);
        ctl.memory.clear();
        ctl.crash_after_writes = None;
        for w in self.controllers[c.index()].reflectors.clone() {
            if let Some(watch) = self.reflectors[w.index()].watch {
                let sw = &mut self.watches[watch as usize];
                if sw.open {
                    sw.open = false;
                    let (api, kind) = (sw.apiserver, sw.kind);
                    self.apiservers[api.index()].watches_by_kind[kind.index()]
                        .retain(|&i| i != watch);
                }
            }
            let r = &mut self.reflectors[w.index()];
            r.session += 1;
            r.watch = None;
            self.set_state(w, WatcherState::Stopped, id);
        }
    }

    /// ESR bookkeeping after a committed write: which primary key did it touch, and does that
    /// key's desired state hold now?
    fn track_esr(&mut self, o: Object) {
        for (i, cfg) in self.config.controllers.iter().enumerate() {
            let key = if o.kind == cfg.primary {
                Some(o.name)
            } else {
                match o.owner {
                    Some(owner) if owner.kind == cfg.primary => Some(owner.name),
                    _ => None,
                }
            };
            let Some(key) = key else { continue };
            let c = ControllerId(i as u16);
            let parent = self.etcd.objects.get(&(cfg.primary, key)).copied();
            let now = self.now_ms;
            let holds = match &parent {
                Some(p) => {
                    reconcile::desired_holds(cfg.behaviour, p, &self.names, &EtcdReader(&self.etcd))
                }
                None => true,
            };
            let entry = self.esr.entry((c, key)).or_insert(EsrState {
                holds: !holds,
                since_ms: now,
                spec_changed_ms: now,
            });
            if o.kind == cfg.primary {
                entry.spec_changed_ms = now;
            }
            if entry.holds != holds {
                entry.holds = holds;
                entry.since_ms = now;
            }
        }
    }
}

impl EtcdReader<'_> {
    pub fn kind_objects(&self, kind: KindId) -> Vec<Object> {
        self.0
            .objects
            .range((kind, NameId(0))..=(kind, NameId(u32::MAX)))
            .map(|(_, o)| *o)
            .collect()
    }
}

/// The first `limit` items as a list answer, the rest for the continue token (0: everything).
fn page(list_rv: Rv, mut items: Vec<Object>, limit: u32) -> Msg {
    let rest = if limit > 0 && items.len() > limit as usize {
        items.split_off(limit as usize)
    } else {
        vec![]
    };
    Msg::ListOk {
        list_rv,
        items,
        from_etcd: true,
        rest,
    }
}

/// Kinds a behaviour reads besides its primary kind.
pub fn behaviour_reads(b: Behaviour) -> Vec<KindId> {
    match b {
        Behaviour::Children { child, .. }
        | Behaviour::StaleDelete { child, .. }
        | Behaviour::WipeOnZero { child }
        | Behaviour::TwoWrites { child, .. } => vec![child],
        Behaviour::Mirror { target } => vec![target],
    }
}

/// `name` → `default/name`; `ns/name` stays.
pub fn qualify(name: &str) -> String {
    if name.contains('/') {
        name.to_string()
    } else {
        format!("default/{name}")
    }
}

/// FNV-1a: stable across platforms and runs, unlike `DefaultHasher`'s seeds.
struct Fnv(u64);

impl std::hash::Hasher for Fnv {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 ^= *b as u64;
            self.0 = self.0.wrapping_mul(0x100_0000_01b3);
        }
    }
}

/// A stable hash of a trace, to prove the page and the CLI computed the same run. It hashes the
/// one-line text of every event, so it is the same on every platform (derived `Hash` is not: it
/// writes `usize` lengths, which are 4 bytes on wasm32).
pub fn trace_hash(sim: &Sim) -> u64 {
    use std::hash::Hasher;
    let mut h = Fnv(0xcbf2_9ce4_8422_2325);
    for (i, e) in sim.trace.iter().enumerate() {
        h.write(crate::trace::line(i as EventId, e, sim).as_bytes());
        h.write(b"\n");
    }
    h.finish()
}
