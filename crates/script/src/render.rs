//! Inputs back into script lines: how the explorer's counterexamples become scenarios.

use listwatch_core::{format_ms, Config, Input, TimedInput};

/// `at 12.5s disconnect op for 10s`: one timeline line.
pub fn input_line(config: &Config, t: &TimedInput) -> String {
    let c = |id: listwatch_core::ControllerId| config.controllers[id.index()].name.as_str();
    let a = |id: listwatch_core::ApiserverId| config.apiservers[id.index()].name.as_str();
    let k = |id: listwatch_core::KindId| config.kinds[id.index()].name.as_str();
    let action = match &t.input {
        Input::Create { kind, name, spec } => format!("create {} {name} spec {spec}", k(*kind)),
        Input::Update { kind, name, spec } => format!("update {} {name} spec {spec}", k(*kind)),
        Input::UpdateStatus { kind, name, status } => {
            format!("status {} {name} {status}", k(*kind))
        }
        Input::Delete { kind, name } => format!("delete {} {name}", k(*kind)),
        Input::Disconnect {
            controller,
            duration_ms,
        } => {
            format!(
                "disconnect {} for {}",
                c(*controller),
                format_ms(*duration_ms)
            )
        }
        Input::Delay {
            controller,
            delay_ms,
        } => format!("delay {} {}", c(*controller), format_ms(*delay_ms)),
        Input::Probe {
            apiserver,
            kind,
            request,
        } => probe_line(config, *apiserver, *kind, request),
        Input::Failover {
            controller,
            apiserver,
        } => format!("failover {} to {}", c(*controller), a(*apiserver)),
        Input::Hold {
            controller,
            kind,
            name,
            for_ms,
        } => format!(
            "hold {} {} {} for {}",
            c(*controller),
            config.kinds[kind.index()].name,
            name,
            format_ms(*for_ms)
        ),
        Input::PauseCache { apiserver } => format!("pause {}", a(*apiserver)),
        Input::ResumeCache { apiserver } => format!("resume {}", a(*apiserver)),
        Input::RestartApiserver { apiserver, down_ms } => {
            format!(
                "restart-apiserver {} for {}",
                a(*apiserver),
                format_ms(*down_ms)
            )
        }
        Input::ReinitCache {
            apiserver,
            kind,
            down_ms,
        } => {
            format!(
                "reinit-cache {} {} for {}",
                a(*apiserver),
                k(*kind),
                format_ms(*down_ms)
            )
        }
        Input::Crash {
            controller,
            after_writes,
            restart_after_ms,
        } => crash_line(c(*controller), *after_writes, *restart_after_ms),
        Input::Restart {
            controller,
            apiserver,
        } => match apiserver {
            Some(a2) => format!("restart {} on {}", c(*controller), a(*a2)),
            None => format!("restart {}", c(*controller)),
        },
        Input::Say { text, wait } => format!(
            "say \"{}\"{}",
            text.replace('\\', "\\\\").replace('"', "\\\""),
            if *wait { " and wait" } else { "" }
        ),
    };
    format!("at {} {action}", format_ms(t.at_ms))
}

/// `probe list|watch KIND [resourceVersion="N" [exact]] on APISERVER`.
fn probe_line(
    config: &Config,
    apiserver: listwatch_core::ApiserverId,
    kind: listwatch_core::KindId,
    request: &listwatch_core::ProbeRequest,
) -> String {
    let kind = &config.kinds[kind.index()].name;
    let on = &config.apiservers[apiserver.index()].name;
    match request {
        listwatch_core::ProbeRequest::List { rv } => {
            let param = match rv {
                listwatch_core::ListRv::Consistent => String::new(),
                listwatch_core::ListRv::Any => " resourceVersion=\"0\"".into(),
                listwatch_core::ListRv::NotOlderThan(n) => format!(" resourceVersion=\"{n}\""),
                listwatch_core::ListRv::Exact(n) => format!(" resourceVersion=\"{n}\" exact"),
            };
            format!("probe list {kind}{param} on {on}")
        }
        listwatch_core::ProbeRequest::Watch { from } => {
            format!("probe watch {kind} resourceVersion=\"{from}\" on {on}")
        }
    }
}

/// `crash CONTROLLER [after N writes] [restart-after D]`.
fn crash_line(
    controller: &str,
    after_writes: Option<u32>,
    restart_after_ms: Option<listwatch_core::TimeMs>,
) -> String {
    let mut s = format!("crash {controller}");
    if let Some(n) = after_writes {
        s += &format!(" after {n} {}", if n == 1 { "write" } else { "writes" });
    }
    if let Some(d) = restart_after_ms {
        s += &format!(" restart-after {}", format_ms(d));
    }
    s
}
