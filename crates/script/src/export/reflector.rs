//! Events of lists, watches and reflectors (`ReflectorEvent`).

use listwatch_core::*;
use serde::Serialize;

use super::error::{error_out, ErrorOut};
use super::Events;

#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(super) enum Out {
    ListRequest {
        watcher: u32,
        request_rv: String,
        relist: bool,
    },
    ListResult {
        watcher: u32,
        list_rv: Rv,
        items: u32,
        from_etcd: bool,
        more: bool,
    },
    ListContinue {
        watcher: u32,
        list_rv: Rv,
    },
    ListFailed {
        watcher: u32,
        #[serde(flatten)]
        error: ErrorOut,
    },
    WatchRequest {
        watcher: u32,
        rv: Rv,
        timeout_ms: u64,
    },
    WatchListRequest {
        watcher: u32,
        request_rv: String,
        relist: bool,
    },
    InitialEventsEnd {
        watcher: u32,
        rv: Rv,
        items: u32,
    },
    BookmarkExpired {
        watcher: u32,
        received: bool,
        since_ms: u64,
    },
    WatchOpened {
        watcher: u32,
        rv: Rv,
        replayed: u32,
    },
    WatchFailed {
        watcher: u32,
        #[serde(flatten)]
        error: ErrorOut,
    },
    WatchEvent {
        watcher: u32,
        event: &'static str,
        name: u32,
        rv: Rv,
        spec: i64,
    },
    Bookmark {
        watcher: u32,
        rv: Rv,
    },
    WatchEnded {
        watcher: u32,
        reason: &'static str,
    },
    State {
        watcher: u32,
        state: &'static str,
        rv: Rv,
    },
    Backoff {
        watcher: u32,
        delay_ms: u64,
    },
}

/// The object an event of this family names.
pub(super) fn name(k: &ReflectorEvent) -> Option<NameId> {
    match *k {
        ReflectorEvent::WatchEvent { name, .. } => Some(name),
        _ => None,
    }
}

/// The request's `resourceVersion` parameter as the API has it: `""`, `"0"` or `"N"`.
pub(super) fn request_rv(rv: ListRv) -> String {
    match rv {
        ListRv::Consistent => String::new(),
        ListRv::Any => "0".into(),
        ListRv::NotOlderThan(rv) | ListRv::Exact(rv) => rv.to_string(),
    }
}

fn watch_end(reason: WatchEnd) -> &'static str {
    match reason {
        WatchEnd::Timeout => "timeout",
        WatchEnd::Disconnected => "disconnected",
        WatchEnd::TooSlow => "too_slow",
        WatchEnd::ServerClosed => "server_closed",
    }
}

impl Events<'_> {
    /// Lists (a watch-list too, up to its initial events), watches and the reflector's state.
    pub(super) fn reflector(&self, k: &ReflectorEvent) -> Out {
        match *k {
            ReflectorEvent::ListRequest {
                watcher,
                rv,
                relist,
            } => Out::ListRequest {
                watcher: self.watcher(watcher),
                request_rv: request_rv(rv),
                relist,
            },
            ReflectorEvent::ListResult {
                watcher,
                list_rv,
                items,
                from_etcd,
                more,
            } => Out::ListResult {
                watcher: self.watcher(watcher),
                list_rv,
                items,
                from_etcd,
                more,
            },
            ReflectorEvent::ListContinue { watcher, list_rv } => Out::ListContinue {
                watcher: self.watcher(watcher),
                list_rv,
            },
            ReflectorEvent::ListFailed { watcher, error } => Out::ListFailed {
                watcher: self.watcher(watcher),
                error: error_out(error),
            },
            ReflectorEvent::WatchListRequest {
                watcher,
                rv,
                relist,
            } => Out::WatchListRequest {
                watcher: self.watcher(watcher),
                request_rv: request_rv(rv),
                relist,
            },
            ReflectorEvent::InitialEventsEnd { watcher, rv, items } => Out::InitialEventsEnd {
                watcher: self.watcher(watcher),
                rv,
                items,
            },
            ReflectorEvent::BookmarkExpired {
                watcher,
                received,
                since_ms,
            } => Out::BookmarkExpired {
                watcher: self.watcher(watcher),
                received,
                since_ms: since_ms.ms(),
            },
            // Watches and the reflector's state.
            ReflectorEvent::WatchRequest {
                watcher,
                from_rv,
                timeout_ms,
            } => Out::WatchRequest {
                watcher: self.watcher(watcher),
                rv: from_rv,
                timeout_ms: timeout_ms.ms(),
            },
            ReflectorEvent::WatchOpened {
                watcher,
                from_rv,
                replayed,
            } => Out::WatchOpened {
                watcher: self.watcher(watcher),
                rv: from_rv,
                replayed,
            },
            ReflectorEvent::WatchFailed { watcher, error } => Out::WatchFailed {
                watcher: self.watcher(watcher),
                error: error_out(error),
            },
            ReflectorEvent::WatchEvent {
                watcher,
                event,
                name: n,
                rv,
                spec,
            } => Out::WatchEvent {
                watcher: self.watcher(watcher),
                event: event.as_str(),
                name: self.object(n),
                rv,
                spec,
            },
            ReflectorEvent::Bookmark { watcher, rv } => Out::Bookmark {
                watcher: self.watcher(watcher),
                rv,
            },
            ReflectorEvent::WatchEnded { watcher, reason } => Out::WatchEnded {
                watcher: self.watcher(watcher),
                reason: watch_end(reason),
            },
            ReflectorEvent::State {
                watcher,
                state,
                last_rv,
            } => Out::State {
                watcher: self.watcher(watcher),
                state: state.as_str(),
                rv: last_rv,
            },
            ReflectorEvent::Backoff { watcher, delay_ms } => Out::Backoff {
                watcher: self.watcher(watcher),
                delay_ms: delay_ms.ms(),
            },
        }
    }
}
