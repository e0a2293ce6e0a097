//! Probes: raw requests a scenario sends to one apiserver, answered by the same rules a
//! reflector's requests get; the probe does not keep what it is sent, so its answer is an
//! event by the probe (`Actor::Probe`).

use super::apiserver::StepContext;
use super::*;

impl Apiserver {
    /// A probe's request, numbered `probe` by the engine.
    pub(super) fn probe(
        &mut self,
        st: &mut StepContext,
        (probe, kind): (u32, KindId),
        request: ProbeRequest,
        cause: Cause,
    ) {
        let asked = EventKind::ProbeRequest {
            probe,
            apiserver: st.api,
            kind,
            request,
        };
        let id = st.out.emit_by(Actor::Probe, cause, asked);
        let cache = &self.caches[kind.index()];
        let from_cache = cache.mode != CacheMode::Off && cache.ready;
        let wait = |rv, consistent| WaitingRead {
            watcher: PROBE_WATCHER,
            session: Session(probe),
            rv,
            read: ReadKind::Probe { kind, consistent },
        };
        match request {
            ProbeRequest::Watch { from } => self.probe_watch(st, probe, kind, from, id),
            ProbeRequest::List { rv: ListRv::Any } if from_cache => {
                self.probe_from_cache(st, probe, kind, id)
            }
            ProbeRequest::List {
                rv: ListRv::NotOlderThan(n),
            } if from_cache => {
                if cache.rv >= n {
                    self.probe_from_cache(st, probe, kind, id)
                } else {
                    self.wait_for_cache(st, wait(n, false), id)
                }
            }
            ProbeRequest::List {
                rv: ListRv::Consistent,
            } if from_cache => {
                let want = st.etcd.rev();
                self.request_progress(st, id);
                if self.caches[kind.index()].rv >= want {
                    self.probe_from_cache(st, probe, kind, id)
                } else {
                    self.wait_for_cache(st, wait(want, true), id)
                }
            }
            // Exact lists (and everything without a ready cache) are etcd's.
            ProbeRequest::List { rv } => self.probe_list_from_etcd(st, probe, kind, rv, id),
        }
    }

    /// A list etcd serves: at exactly a revision, or now (504 for a NotOlderThan beyond now).
    fn probe_list_from_etcd(
        &mut self,
        st: &mut StepContext,
        probe: u32,
        kind: KindId,
        rv: ListRv,
        cause: Cause,
    ) {
        let at = match rv {
            ListRv::Exact(n) => Some(n),
            ListRv::NotOlderThan(n) if n > st.etcd.rev() => {
                let err = ApiError::TooLargeRv {
                    requested: n,
                    current: st.etcd.rev(),
                };
                return self.probe_failed(st, probe, err, cause);
            }
            _ => None,
        };
        self.probe_from_etcd(st, probe, kind, at, cause)
    }

    pub(super) fn probe_failed(
        &mut self,
        st: &mut StepContext,
        probe: u32,
        error: ApiError,
        cause: Cause,
    ) {
        let failed = EventKind::ProbeFailed { probe, error };
        st.out.emit_by(Actor::Probe, cause, failed);
    }

    pub(super) fn probe_from_cache(
        &mut self,
        st: &mut StepContext,
        probe: u32,
        kind: KindId,
        cause: Cause,
    ) {
        let cache = &self.caches[kind.index()];
        let listed = EventKind::ProbeListed {
            probe,
            items: cache.store.len() as u32,
            list_rv: cache.rv,
            from_etcd: false,
        };
        st.out.emit_by(Actor::Probe, cause, listed);
    }

    /// etcd's answer: now, or at exactly revision `at` (410 once compacted, 504 beyond now).
    pub(super) fn probe_from_etcd(
        &mut self,
        st: &mut StepContext,
        probe: u32,
        kind: KindId,
        at: Option<Rv>,
        cause: Cause,
    ) {
        let etcd = st.etcd;
        let (items, list_rv) = match at {
            None => (EtcdReader(etcd).kind_objects(kind).len(), etcd.rev()),
            Some(n) if n < etcd.compact_rev() => {
                return self.probe_failed(st, probe, ApiError::ListCompacted, cause)
            }
            Some(n) if n > etcd.rev() => {
                let err = ApiError::TooLargeRv {
                    requested: n,
                    current: etcd.rev(),
                };
                return self.probe_failed(st, probe, err, cause);
            }
            Some(n) => (objects_at(etcd, kind, n), n),
        };
        let listed = EventKind::ProbeListed {
            probe,
            items: items as u32,
            list_rv,
            from_etcd: true,
        };
        st.out.emit_by(Actor::Probe, cause, listed);
    }

    /// A watch from `from`: the same start check a reflector's watch gets, then the replay it
    /// would receive; the probe does not keep the stream.
    fn probe_watch(
        &mut self,
        st: &mut StepContext,
        probe: u32,
        kind: KindId,
        from: Rv,
        cause: Cause,
    ) {
        let cache = &self.caches[kind.index()];
        let etcd = st.etcd;
        let outcome = if from == 0 {
            // RV "0": never too old; it starts with synthetic ADDED events for the current
            // state (semantics.md §4), then live events.
            if cache.mode == CacheMode::Off {
                Ok(EtcdReader(etcd).kind_objects(kind).len())
            } else if !cache.ready {
                Err(ApiError::TooManyRequests)
            } else {
                Ok(cache.store.len())
            }
        } else {
            match self.watch_replay(etcd, kind, from) {
                Ok((_, replay)) => Ok(replay.len()),
                Err(Msg::WatchErr(error) | Msg::Refused(error)) => Err(error),
                Err(_) => unreachable!("a watch is refused with WatchErr or Refused"),
            }
        };
        match outcome {
            Ok(replayed) => {
                let opened = EventKind::ProbeWatchOpened {
                    probe,
                    from_rv: from,
                    replayed: replayed as u32,
                };
                st.out.emit_by(Actor::Probe, cause, opened);
            }
            Err(error) => self.probe_failed(st, probe, error, cause),
        }
    }
}

/// How many objects of `kind` etcd held at revision `rv` (from its full history).
fn objects_at(etcd: &Etcd, kind: KindId, rv: Rv) -> usize {
    let mut names: BTreeSet<NameId> = BTreeSet::new();
    for c in etcd.history() {
        if c.object.rv > rv {
            break;
        }
        if c.object.kind == kind {
            match c.event {
                EventType::Deleted => names.remove(&c.object.name),
                _ => names.insert(c.object.name),
            };
        }
    }
    names.len()
}
