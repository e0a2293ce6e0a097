//! Events of faults and their ends (`FaultEvent`).

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
pub(super) fn name(k: &FaultEvent) -> Option<NameId> {
    match *k {
        FaultEvent::HoldArmed { name, .. } => Some(name),
        _ => None,
    }
}

impl Events<'_> {
    pub(super) fn fault(&self, k: &FaultEvent) -> Out {
        match *k {
            FaultEvent::Crash { controller } => Out::Crash {
                controller: self.controller(controller),
            },
            FaultEvent::Restart {
                controller,
                apiserver,
            } => Out::Restart {
                controller: self.controller(controller),
                apiserver: self.apiserver(apiserver),
            },
            FaultEvent::Disconnect {
                controller,
                until_ms,
            } => Out::Disconnect {
                controller: self.controller(controller),
                until_ms: until_ms.ms(),
            },
            FaultEvent::Failover {
                controller,
                apiserver,
            } => Out::Failover {
                controller: self.controller(controller),
                apiserver: self.apiserver(apiserver),
            },
            FaultEvent::Reconnect { controller } => Out::Reconnect {
                controller: self.controller(controller),
            },
            FaultEvent::LinkDelay {
                controller,
                delay_ms,
            } => Out::LinkDelay {
                controller: self.controller(controller),
                delay_ms: delay_ms.ms(),
            },
            FaultEvent::HoldArmed {
                controller,
                kind: k,
                name: n,
            } => Out::HoldArmed {
                controller: self.controller(controller),
                kind: self.kind_of(k),
                name: self.object(n),
            },
            FaultEvent::HoldReleased {
                controller,
                held,
                superseded,
            } => Out::HoldReleased {
                controller: self.controller(controller),
                held,
                superseded,
            },
            FaultEvent::CachePaused { apiserver, paused } => Out::CachePaused {
                apiserver: self.apiserver(apiserver),
                paused,
            },
            FaultEvent::ApiserverRestart { apiserver, down_ms } => Out::ApiserverRestart {
                apiserver: self.apiserver(apiserver),
                down_ms: down_ms.ms(),
            },
        }
    }
}
