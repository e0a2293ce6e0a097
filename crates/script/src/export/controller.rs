//! Events of informers, queues and reconciles, and of what a reconcile read
//! (`ControllerEvent`).

use listwatch_core::*;
use serde::Serialize;

use super::error::{error_out, ErrorOut};
use super::Events;

#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(super) enum Out {
    Informer {
        watcher: u32,
        delta: &'static str,
        name: u32,
        rv: Rv,
        spec: i64,
        deleting: bool,
    },
    Enqueue {
        controller: u32,
        key: u32,
        outcome: &'static str,
        delay_ms: u64,
    },
    ReconcileStart {
        controller: u32,
        key: u32,
        worker: u32,
        spec: Option<i64>,
    },
    ReconcileEnd {
        controller: u32,
        key: u32,
        result: &'static str,
        #[serde(skip_serializing_if = "Option::is_none")]
        requeue_after_ms: Option<u64>,
        #[serde(flatten, skip_serializing_if = "Option::is_none")]
        error: Option<ErrorOut>,
        /// The key was added while it ran, so the queue took it back (absent: it did not).
        #[serde(skip_serializing_if = "std::ops::Not::not")]
        requeued: bool,
    },
    ReconcileRead {
        controller: u32,
        kind: u32,
        name: u32,
        /// The RV it found (absent: `null`).
        rv: Option<Rv>,
        /// etcd's RV of the object at that moment: a stale read has `rv != truth_rv`.
        truth_rv: Option<Rv>,
        live: bool,
    },
}

/// The object or queue key an event of this family names.
pub(super) fn name(k: &ControllerEvent) -> NameId {
    match *k {
        ControllerEvent::ReconcileRead { name, .. } | ControllerEvent::Informer { name, .. } => {
            name
        }
        ControllerEvent::Enqueue { key, .. }
        | ControllerEvent::ReconcileStart { key, .. }
        | ControllerEvent::ReconcileEnd { key, .. } => key,
    }
}

fn delta(delta: Delta) -> &'static str {
    match delta {
        Delta::Added => "added",
        Delta::Updated => "updated",
        Delta::Deleted => "deleted",
        Delta::DeletedFinalStateUnknown => "deleted_final_state_unknown",
        Delta::Sync => "sync",
    }
}

fn queue_add(outcome: QueueAdd) -> &'static str {
    match outcome {
        QueueAdd::Added => "added",
        QueueAdd::AlreadyQueued => "already_queued",
        QueueAdd::MarkedDirty => "marked_dirty",
    }
}

/// A reconcile's result as `result`, `requeue_after_ms` and the error's fields.
fn reconcile_result(result: ReconcileResult) -> (&'static str, Option<u64>, Option<ErrorOut>) {
    match result {
        ReconcileResult::Done => ("done", None, None),
        ReconcileResult::RequeueAfter(d) => ("requeue_after", Some(d.ms()), None),
        ReconcileResult::Error(e) => ("error", None, Some(error_out(e))),
        ReconcileResult::Crashed => ("crashed", None, None),
    }
}

impl Events<'_> {
    /// Informers, queues and reconciles.
    pub(super) fn controller_event(&self, k: &ControllerEvent) -> Out {
        match *k {
            ControllerEvent::Informer {
                watcher,
                delivery,
                name: n,
                rv,
                spec,
            } => Out::Informer {
                watcher: self.watcher(watcher),
                delta: delta(delivery.delta()),
                name: self.object(n),
                rv,
                spec,
                deleting: delivery.deleting(),
            },
            ControllerEvent::Enqueue {
                controller,
                key,
                outcome,
                delay_ms,
            } => Out::Enqueue {
                controller: self.controller(controller),
                key: self.object(key),
                outcome: queue_add(outcome),
                delay_ms: delay_ms.ms(),
            },
            // A reconcile's start, its reads and its end.
            ControllerEvent::ReconcileStart {
                controller,
                key,
                worker,
                found,
                spec,
                ..
            } => Out::ReconcileStart {
                controller: self.controller(controller),
                key: self.object(key),
                worker,
                spec: found.then_some(spec),
            },
            ControllerEvent::ReconcileRead {
                controller,
                kind: k,
                name: n,
                rv,
                truth_rv,
                live,
            } => Out::ReconcileRead {
                controller: self.controller(controller),
                kind: self.kind_of(k),
                name: self.object(n),
                rv: (rv != 0).then_some(rv),
                truth_rv: Some(truth_rv.get()).filter(|&rv| rv != 0),
                live,
            },
            ControllerEvent::ReconcileEnd {
                controller,
                key,
                result,
                requeued,
            } => {
                let (result, requeue_after_ms, error) = reconcile_result(result);
                Out::ReconcileEnd {
                    controller: self.controller(controller),
                    key: self.object(key),
                    result,
                    requeue_after_ms,
                    error,
                    requeued,
                }
            }
        }
    }
}
