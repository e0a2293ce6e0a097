//! Faults on the timeline: of a controller's connection (`LINK`), of an apiserver
//! (`APISERVER`) and of a controller's process (`PROCESS`).

use listwatch_core::*;

use super::table::{row, ActionFn, Row};
use super::Builder;
use crate::cursor::{Cursor, R};
use crate::lexer::Word;

pub(super) const LINK: &[Row<ActionFn>] = &[
    row(
        "disconnect",
        "disconnect CONTROLLER [after N writes] for D",
        "at 10s disconnect ctl for 10s",
        Builder::disconnect_input,
    ),
    row(
        "delay",
        "delay CONTROLLER D",
        "at 1s delay ctl 100ms",
        Builder::delay_input,
    ),
    row(
        "hold",
        "hold CONTROLLER KIND NAME [for D]",
        "at 3s hold ctl Db web",
        Builder::hold_input,
    ),
    row(
        "failover",
        "failover CONTROLLER to APISERVER",
        "at 5s failover ctl to b",
        Builder::failover_input,
    ),
];

pub(super) const APISERVER: &[Row<ActionFn>] = &[
    row(
        "pause",
        "pause APISERVER",
        "at 5s pause b",
        Builder::pause_input,
    ),
    row(
        "resume",
        "resume APISERVER",
        "at 6s resume b",
        Builder::pause_input,
    ),
    row(
        "restart-apiserver",
        "restart-apiserver APISERVER [for D]",
        "at 5s restart-apiserver a for 2s",
        Builder::restart_apiserver_input,
    ),
    row(
        "reinit-cache",
        "reinit-cache APISERVER KIND [for D]",
        "at 5s reinit-cache a Pod",
        Builder::reinit_cache_input,
    ),
];

pub(super) const PROCESS: &[Row<ActionFn>] = &[
    row(
        "crash",
        "crash CONTROLLER [after N write | writes] [restart-after D]",
        "at 0s crash op after 1 write restart-after 5s",
        Builder::crash_input,
    ),
    row(
        "restart",
        "restart CONTROLLER [on APISERVER]",
        "at 21s restart op on b",
        Builder::restart_input,
    ),
];

impl Builder {
    /// `disconnect CONTROLLER [after N writes] for D`: now, or just before the write that
    /// follows N writes of its next reconcile (`after 0 writes`: its first write).
    fn disconnect_input(&self, p: &mut Cursor, _: &Word) -> R<Input> {
        let controller = self.next_controller(p)?;
        let after_writes = after_writes(p, 0)?;
        p.expect_kw("for")?;
        Ok(Input::Fault(FaultInput::Disconnect {
            controller,
            duration_ms: p.duration("a duration")?,
            after_writes,
        }))
    }

    /// `delay CONTROLLER D`.
    fn delay_input(&self, p: &mut Cursor, _: &Word) -> R<Input> {
        let controller = self.next_controller(p)?;
        Ok(Input::Fault(FaultInput::Delay {
            controller,
            delay_ms: p.duration("a delay")?,
        }))
    }

    /// `hold CONTROLLER KIND NAME [for D]`: Sieve's unobserved-state injection.
    fn hold_input(&self, p: &mut Cursor, _: &Word) -> R<Input> {
        let controller = self.next_controller(p)?;
        let kind = self.next_kind(p)?;
        Ok(Input::Fault(FaultInput::Hold {
            controller,
            kind,
            name: self.object_name_of(p, kind)?,
            for_ms: for_duration(p, "how long at most", listwatch_core::explore::HOLD_FOR_MS)?,
        }))
    }

    /// `failover CONTROLLER to APISERVER`: the load balancer moves its connections.
    fn failover_input(&self, p: &mut Cursor, _: &Word) -> R<Input> {
        let controller = self.next_controller(p)?;
        p.expect_kw("to")?;
        Ok(Input::Fault(FaultInput::Failover {
            controller,
            apiserver: self.next_apiserver(p)?,
        }))
    }

    /// `pause APISERVER`, `resume APISERVER`.
    fn pause_input(&self, p: &mut Cursor, aw: &Word) -> R<Input> {
        let apiserver = self.next_apiserver(p)?;
        Ok(if aw.text == "pause" {
            Input::Fault(FaultInput::PauseCache { apiserver })
        } else {
            Input::Fault(FaultInput::ResumeCache { apiserver })
        })
    }

    /// `restart-apiserver APISERVER [for D]`.
    fn restart_apiserver_input(&self, p: &mut Cursor, _: &Word) -> R<Input> {
        let apiserver = self.next_apiserver(p)?;
        let down_ms = for_duration(p, "a duration", DurationMs(1000))?;
        Ok(Input::Fault(FaultInput::RestartApiserver {
            apiserver,
            down_ms,
        }))
    }

    /// `reinit-cache APISERVER KIND [for D]`.
    fn reinit_cache_input(&self, p: &mut Cursor, _: &Word) -> R<Input> {
        let apiserver = self.next_apiserver(p)?;
        let kind = self.next_kind(p)?;
        let down_ms = for_duration(p, "a duration", listwatch_core::CACHE_RELIST_MS)?;
        Ok(Input::Fault(FaultInput::ReinitCache {
            apiserver,
            kind,
            down_ms,
        }))
    }

    /// `crash CONTROLLER [after N writes] [restart-after D]`.
    fn crash_input(&self, p: &mut Cursor, _: &Word) -> R<Input> {
        let controller = self.next_controller(p)?;
        let after_writes = after_writes(p, 1)?;
        let restart_after_ms = if p.eat("restart-after") {
            Some(p.duration("a delay")?)
        } else {
            None
        };
        Ok(Input::Fault(FaultInput::Crash {
            controller,
            after_writes,
            restart_after_ms,
        }))
    }

    /// `restart CONTROLLER [on APISERVER]`.
    fn restart_input(&self, p: &mut Cursor, _: &Word) -> R<Input> {
        let controller = self.next_controller(p)?;
        Ok(Input::Fault(FaultInput::Restart {
            controller,
            apiserver: if p.eat("on") {
                Some(self.next_apiserver(p)?)
            } else {
                None
            },
        }))
    }
}

/// `[for D]`: how long a fault lasts, `default_ms` when the line does not say.
fn for_duration(p: &mut Cursor, what: &str, default_ms: DurationMs) -> R<DurationMs> {
    if p.eat("for") {
        p.duration(what)
    } else {
        Ok(default_ms)
    }
}

/// `after N write|writes` (at least `least`), or nothing.
fn after_writes(p: &mut Cursor, least: i64) -> R<Option<u32>> {
    if !p.eat("after") {
        return Ok(None);
    }
    let n = p.number("a write count", 1000)?;
    let unit = p.next("`write` or `writes`")?;
    if unit.text != "write" && unit.text != "writes" {
        return Err(p.err_at(unit, "expected `write` or `writes`"));
    }
    if n < least {
        return Err(p.err_at(unit, format!("after at least {least} write")));
    }
    Ok(Some(n as u32))
}
