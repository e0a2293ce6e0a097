//! Events of etcd and the watch caches (`StoreEvent`).

use listwatch_core::*;
use serde::Serialize;

use super::error::{error_out, ErrorOut};
use super::Events;

#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(super) enum Out {
    Write {
        op: &'static str,
        kind: u32,
        name: u32,
        rv: Rv,
        spec: i64,
        status: i64,
    },
    WriteFailed {
        op: &'static str,
        kind: u32,
        name: u32,
        #[serde(flatten)]
        error: ErrorOut,
    },
    NoOpWrite {
        kind: u32,
        name: u32,
    },
    /// The collector's Warning `OwnerRefInvalidNamespace` on a dependent (new in version 3).
    OwnerRefInvalid {
        kind: u32,
        name: u32,
        owner_kind: u32,
        owner_name: u32,
    },
    /// An object's labels, annotations, named fields, finalizers and owners after a write:
    /// `fields` is the index of their words in `names`.
    ObjectFields {
        kind: u32,
        name: u32,
        rv: Rv,
        fields: u32,
    },
    CacheAdd {
        apiserver: u32,
        kind: u32,
        rv: Rv,
        name: u32,
        evicted: u32,
        capacity: u32,
    },
    CacheReset {
        apiserver: u32,
        kind: u32,
        list_rv: Rv,
        ready: bool,
    },
    Compacted {
        rv: Rv,
    },
}

/// The object an event of this family names.
pub(super) fn name(k: &StoreEvent) -> Option<NameId> {
    match *k {
        StoreEvent::Write { name, .. }
        | StoreEvent::WriteFailed { name, .. }
        | StoreEvent::NoOpWrite { name, .. }
        | StoreEvent::ObjectFields { name, .. }
        | StoreEvent::OwnerRefInvalid { name, .. }
        | StoreEvent::CacheAdd { name, .. } => Some(name),
        _ => None,
    }
}

fn op(op: WriteOp) -> &'static str {
    match op {
        WriteOp::Create => "create",
        WriteOp::Update => "update",
        WriteOp::UpdateStatus => "update_status",
        WriteOp::Patch => "patch",
        WriteOp::PatchStatus => "patch_status",
        WriteOp::AddFinalizer => "add_finalizer",
        WriteOp::RemoveFinalizer => "remove_finalizer",
        WriteOp::RemoveLastFinalizer => "remove_last_finalizer",
        WriteOp::MarkDeleting => "mark_deleting",
        WriteOp::Delete => "delete",
        WriteOp::Adopt => "adopt",
        WriteOp::Release => "release",
    }
}

impl Events<'_> {
    pub(super) fn store(&self, k: &StoreEvent) -> Out {
        match *k {
            StoreEvent::Write {
                op: o,
                kind: k,
                name: n,
                rv,
                spec,
                status,
            } => Out::Write {
                op: op(o),
                kind: self.kind_of(k),
                name: self.object(n),
                rv,
                spec,
                status,
            },
            StoreEvent::WriteFailed {
                op: o,
                kind: k,
                name: n,
                error,
            } => Out::WriteFailed {
                op: op(o),
                kind: self.kind_of(k),
                name: self.object(n),
                error: error_out(error),
            },
            StoreEvent::NoOpWrite { kind: k, name: n } => Out::NoOpWrite {
                kind: self.kind_of(k),
                name: self.object(n),
            },
            StoreEvent::OwnerRefInvalid {
                kind: k,
                name: n,
                owner_kind,
                owner_name,
            } => Out::OwnerRefInvalid {
                kind: self.kind_of(k),
                name: self.object(n),
                owner_kind: self.kind_of(owner_kind),
                owner_name: self.object(owner_name),
            },
            StoreEvent::ObjectFields {
                kind: k,
                name: n,
                rv,
                body,
            } => Out::ObjectFields {
                kind: self.kind_of(k),
                name: self.object(n),
                rv,
                fields: self.names.fields[&body],
            },
            StoreEvent::CacheAdd {
                apiserver,
                kind: k,
                rv,
                name: n,
                evicted,
                capacity,
            } => Out::CacheAdd {
                apiserver: self.apiserver(apiserver),
                kind: self.kind_of(k),
                rv,
                name: self.object(n),
                evicted,
                capacity,
            },
            StoreEvent::CacheReset {
                apiserver,
                kind: k,
                list_rv,
                ready,
            } => Out::CacheReset {
                apiserver: self.apiserver(apiserver),
                kind: self.kind_of(k),
                list_rv,
                ready,
            },
            StoreEvent::Compacted { rev } => Out::Compacted { rv: rev },
        }
    }
}
