//! Events of faults and their ends (`Family::Fault`).

use listwatch_core::*;
use serde::Serialize;

use super::Events;

#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(super) enum Out {
    Crash {
        controller: u32,
    },
    Restart {
        controller: u32,
        apiserver: u32,
    },
    Disconnect {
        controller: u32,
        until_ms: u64,
    },
    Failover {
        controller: u32,
        apiserver: u32,
    },
    Reconnect {
        controller: u32,
    },
    LinkDelay {
        controller: u32,
        delay_ms: u64,
    },
    HoldArmed {
        controller: u32,
        kind: u32,
        name: u32,
    },
    HoldReleased {
        controller: u32,
        held: u32,
        superseded: bool,
    },
    CachePaused {
        apiserver: u32,
        paused: bool,
    },
    ApiserverRestart {
        apiserver: u32,
        down_ms: u64,
    },
}

/// The object an event of this family names.
pub(super) fn name(k: &EventKind) -> Option<NameId> {
    match *k {
        EventKind::HoldArmed { name, .. } => Some(name),
        _ => None,
    }
}

impl Events<'_> {
    pub(super) fn fault(&self, k: &EventKind) -> Out {
        match *k {
            EventKind::Crash { controller } => Out::Crash {
                controller: self.controller(controller),
            },
            EventKind::Restart {
                controller,
                apiserver,
            } => Out::Restart {
                controller: self.controller(controller),
                apiserver: self.apiserver(apiserver),
            },
            EventKind::Disconnect {
                controller,
                until_ms,
            } => Out::Disconnect {
                controller: self.controller(controller),
                until_ms: until_ms.ms(),
            },
            EventKind::Failover {
                controller,
                apiserver,
            } => Out::Failover {
                controller: self.controller(controller),
                apiserver: self.apiserver(apiserver),
            },
            EventKind::Reconnect { controller } => Out::Reconnect {
                controller: self.controller(controller),
            },
            EventKind::LinkDelay {
                controller,
                delay_ms,
            } => Out::LinkDelay {
                controller: self.controller(controller),
                delay_ms: delay_ms.ms(),
            },
            EventKind::HoldArmed {
                controller,
                kind: k,
                name: n,
            } => Out::HoldArmed {
                controller: self.controller(controller),
                kind: self.kind_of(k),
                name: self.object(n),
            },
            EventKind::HoldReleased {
                controller,
                held,
                superseded,
            } => Out::HoldReleased {
                controller: self.controller(controller),
                held,
                superseded,
            },
            EventKind::CachePaused { apiserver, paused } => Out::CachePaused {
                apiserver: self.apiserver(apiserver),
                paused,
            },
            EventKind::ApiserverRestart { apiserver, down_ms } => Out::ApiserverRestart {
                apiserver: self.apiserver(apiserver),
                down_ms: down_ms.ms(),
            },
            _ => unreachable!("not one of faults and their ends"),
        }
    }
}
