//! Events of probes of an apiserver (`ProbeEvent`).

use listwatch_core::*;
use serde::Serialize;

use super::error::{error_out, ErrorOut};
use super::reflector::request_rv;
use super::Events;

// The variants' names are the document's `type`s (`probe_request`, ...).
#[allow(clippy::enum_variant_names)]
#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(super) enum Out {
    ProbeRequest {
        probe: u32,
        apiserver: u32,
        kind: u32,
        /// `list` or `watch`.
        request: &'static str,
        request_rv: String,
        /// `resourceVersionMatch=Exact`.
        exact: bool,
        /// A list's selectors as the script writes them (an index into `names`; version 3).
        #[serde(skip_serializing_if = "Option::is_none")]
        selector: Option<u32>,
    },
    ProbeListed {
        probe: u32,
        items: u32,
        list_rv: Rv,
        from_etcd: bool,
    },
    ProbeWatchOpened {
        probe: u32,
        from_rv: Rv,
        replayed: u32,
    },
    ProbeFailed {
        probe: u32,
        #[serde(flatten)]
        error: ErrorOut,
    },
}

impl Events<'_> {
    pub(super) fn probe(&self, k: &ProbeEvent) -> Out {
        match *k {
            ProbeEvent::ProbeRequest {
                probe,
                apiserver,
                kind: k,
                ask,
            } => {
                let (request, request_rv, exact) = match ask.request() {
                    ProbeRequest::List { rv } => {
                        ("list", request_rv(rv), matches!(rv, ListRv::Exact(_)))
                    }
                    ProbeRequest::Watch { from } => ("watch", from.to_string(), false),
                    ProbeRequest::WatchMostRecent => ("watch", String::new(), false),
                };
                Out::ProbeRequest {
                    probe,
                    apiserver: self.apiserver(apiserver),
                    kind: self.kind_of(k),
                    request,
                    request_rv,
                    exact,
                    selector: ask.selector().map(|s| self.object(s)),
                }
            }
            ProbeEvent::ProbeListed {
                probe,
                items,
                list_rv,
                from_etcd,
            } => Out::ProbeListed {
                probe,
                items,
                list_rv,
                from_etcd,
            },
            ProbeEvent::ProbeWatchOpened {
                probe,
                from_rv,
                replayed,
            } => Out::ProbeWatchOpened {
                probe,
                from_rv,
                replayed,
            },
            ProbeEvent::ProbeFailed { probe, error } => Out::ProbeFailed {
                probe,
                error: error_out(error),
            },
        }
    }
}
