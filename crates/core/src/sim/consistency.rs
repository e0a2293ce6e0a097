//! KEP-5647, "Stale Controller Detection and Mitigation" (kube-controller-manager 1.36, gates
//! `StaleControllerConsistency{DaemonSet,Job,ReplicaSet,StatefulSet}`, beta and on): a
//! controller remembers the RV each of its writes for a key got back
//! (`pkg/controller/util/consistency/consistency.go` `WroteAt`) and, before the key's next
//! sync, asks whether its informer of that kind has applied that RV yet (`EnsureReady`, which
//! reads the store's `LastStoreSyncResourceVersion`: the newest object, list or bookmark RV it
//! applied). If not, the sync returns an error at once ("read version: R is not as new as
//! written version: W") and the work queue retries it with its per-item backoff; once ready,
//! the record is cleared. No live GET is made.

use super::*;
use crate::store::NameMap;

/// The RVs a controller's writes got back, per reconcile key and kind (`ConsistencyStore`);
/// in memory, so a crash forgets them.
#[derive(Clone, Debug, Hash, Default, PartialEq, Eq)]
pub struct WrittenRvs(NameMap<Vec<(KindId, Rv)>>);

impl WrittenRvs {
    /// `WroteAt`: the newest RV written for `key` of `kind`.
    pub fn wrote_at(&mut self, key: NameId, kind: KindId, rv: Rv) {
        let written = self.0.get_or_insert_with(key, Vec::new);
        match written.iter_mut().find(|(k, _)| *k == kind) {
            Some((_, at)) => *at = (*at).max(rv),
            None => written.push((kind, rv)),
        }
    }

    /// `EnsureReady`: the first kind whose informer has not reached what was written for `key`,
    /// as the sync's error; when every one has, the record is cleared. `read` is the informer's
    /// RV of a kind (`None`: no informer of it, or consistent reads: never behind).
    pub fn ensure_ready(
        &mut self,
        key: NameId,
        read: impl Fn(KindId) -> Option<Rv>,
    ) -> Result<(), ApiError> {
        let Some(written) = self.0.get(&key) else {
            return Ok(());
        };
        for &(kind, written) in written {
            match read(kind) {
                Some(read) if read < written => {
                    return Err(ApiError::StaleRead {
                        read: IssuedRv::new(read),
                        written,
                    });
                }
                _ => {}
            }
        }
        self.0.remove(&key);
        Ok(())
    }

    pub fn clear(&mut self) {
        self.0.clear();
    }
}

impl Sim {
    /// A reconcile's write committed: a controller with the check remembers its RV for the
    /// reconcile's key.
    pub(super) fn note_written(
        &mut self,
        c: ControllerId,
        worker: u32,
        result: &Result<EventId, ApiError>,
    ) {
        if !self.config.controllers[c.index()].stale_read_check {
            return;
        }
        let Ok(id) = result else { return };
        let EventKind::Store(StoreEvent::Write { kind, rv, .. }) =
            self.sink.trace[*id as usize].kind
        else {
            return; // a no-op update writes nothing
        };
        let ctl = &mut self.controllers[c.index()];
        if let Some(run) = &ctl.workers[worker as usize] {
            ctl.written_rvs.wrote_at(run.key, kind, rv);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `consistency.go` `EnsureReady`: not ready while any written kind's store is behind (the
    /// error names the store's RV and the written one); ready, and forgotten, once all caught up.
    #[test]
    fn a_key_is_ready_once_every_written_kind_has_been_read() {
        let mut w = WrittenRvs::default();
        let (key, pods, sets) = (NameId(1), KindId(0), KindId(1));
        w.wrote_at(key, sets, 7);
        w.wrote_at(key, pods, 9);
        w.wrote_at(key, sets, 5);
        let stale = ApiError::StaleRead {
            read: IssuedRv::new(6),
            written: 7,
        };
        assert_eq!(w.ensure_ready(key, |_| Some(6)), Err(stale));
        assert_eq!(
            w.ensure_ready(NameId(2), |_| Some(0)),
            Ok(()),
            "never written"
        );
        let stale_pods = ApiError::StaleRead {
            read: IssuedRv::new(8),
            written: 9,
        };
        let read = |k: KindId| Some(if k == sets { 7 } else { 8 });
        assert_eq!(w.ensure_ready(key, read), Err(stale_pods));
        assert_eq!(w.ensure_ready(key, |_| Some(9)), Ok(()));
        assert_eq!(w, WrittenRvs::default(), "cleared once ready");
        w.wrote_at(key, pods, 9);
        assert_eq!(
            w.ensure_ready(key, |_| None),
            Ok(()),
            "no informer: not checked"
        );
    }
}
