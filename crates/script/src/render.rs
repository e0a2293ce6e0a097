//! Inputs back into script lines: how the explorer's counterexamples become scenarios.

use listwatch_core::{
    ApiserverId, Config, ControllerId, Edit, FieldValue, Input, KindId, TimedInput,
};

/// `at 12.5s disconnect op for 10s`: one timeline line.
pub fn input_line(config: &Config, t: &TimedInput) -> String {
    let names = Names(config);
    let action = match &t.input {
        Input::Create { .. }
        | Input::Update { .. }
        | Input::UpdateStatus { .. }
        | Input::Delete { .. }
        | Input::Write { .. }
        | Input::DeleteWith { .. } => write_line(names, &t.input),
        Input::Probe {
            apiserver,
            kind,
            request,
        } => probe_line(names, *apiserver, *kind, request),
        Input::PauseCache { .. }
        | Input::ResumeCache { .. }
        | Input::RestartApiserver { .. }
        | Input::ReinitCache { .. } => apiserver_fault_line(names, &t.input),
        Input::Crash {
            controller,
            after_writes,
            restart_after_ms,
        } => crash_line(
            names.controller(*controller),
            *after_writes,
            *restart_after_ms,
        ),
        Input::Disconnect { .. }
        | Input::Delay { .. }
        | Input::Failover { .. }
        | Input::Hold { .. }
        | Input::Restart { .. } => controller_fault_line(names, &t.input),
        Input::Say { text, wait } => format!(
            "say \"{}\"{}",
            text.replace('\\', "\\\\").replace('"', "\\\""),
            if *wait { " and wait" } else { "" }
        ),
    };
    format!("at {} {action}", t.at_ms)
}

/// The names the script declared, by id.
#[derive(Clone, Copy)]
struct Names<'a>(&'a Config);

impl<'a> Names<'a> {
    fn controller(self, id: ControllerId) -> &'a str {
        &self.0.controllers[id.index()].name
    }
    fn apiserver(self, id: ApiserverId) -> &'a str {
        &self.0.apiservers[id.index()].name
    }
    fn kind(self, id: KindId) -> &'a str {
        &self.0.kinds[id.index()].name
    }
}

/// `create|update|status|delete KIND NAME ...`.
fn write_line(names: Names, input: &Input) -> String {
    match input {
        Input::Create { kind, name, spec } => {
            format!("create {} {name} spec {spec}", names.kind(*kind))
        }
        Input::Update { kind, name, spec } => {
            format!("update {} {name} spec {spec}", names.kind(*kind))
        }
        Input::UpdateStatus { kind, name, status } => {
            format!("status {} {name} {status}", names.kind(*kind))
        }
        Input::Delete { kind, name } => format!("delete {} {name}", names.kind(*kind)),
        Input::DeleteWith {
            kind,
            name,
            propagation,
        } => format!(
            "delete {} {name} propagation {}",
            names.kind(*kind),
            propagation.as_str()
        ),
        Input::Write {
            verb,
            kind,
            name,
            edits,
        } => {
            let mut line = format!("{} {} {name}", verb.as_str(), names.kind(*kind));
            for e in edits {
                line.push(' ');
                line.push_str(&edit_text(names, e));
            }
            line
        }
        _ => unreachable!("not a write"),
    }
}

/// One clause of a write, as the parser reads it back.
fn edit_text(names: Names, e: &Edit) -> String {
    let or_remove = |k: &str, v: &Option<String>| match v {
        Some(v) => format!("{k}={v}"),
        None => format!("{k}-"),
    };
    match e {
        Edit::GenerateName => "generate-name".to_string(),
        Edit::Spec(n) => format!("spec {n}"),
        Edit::Status(n) => format!("status {n}"),
        Edit::Field {
            status,
            path,
            value,
        } => {
            let value = match value {
                None => "null".to_string(),
                Some(FieldValue::Int(n)) => n.to_string(),
                Some(FieldValue::Str(s)) => s.clone(),
            };
            let part = if *status { "status" } else { "spec" };
            format!("{part}.{path}={value}")
        }
        Edit::Label { key, value } => format!("labels {}", or_remove(key, value)),
        Edit::Annotation { key, value } => format!("annotations {}", or_remove(key, value)),
        Edit::Finalizer { name, add } => {
            format!("finalizer {name}{}", if *add { "" } else { "-" })
        }
        Edit::Owner {
            kind,
            name,
            controller,
            block_owner_deletion,
        } => format!(
            "owner {}/{name}{}{}",
            names.kind(*kind),
            if *controller { " controller" } else { "" },
            if *block_owner_deletion {
                " block-owner-deletion"
            } else {
                ""
            }
        ),
    }
}

/// `pause|resume|restart-apiserver|reinit-cache APISERVER ...`.
fn apiserver_fault_line(names: Names, input: &Input) -> String {
    match input {
        Input::PauseCache { apiserver } => format!("pause {}", names.apiserver(*apiserver)),
        Input::ResumeCache { apiserver } => format!("resume {}", names.apiserver(*apiserver)),
        Input::RestartApiserver { apiserver, down_ms } => format!(
            "restart-apiserver {} for {}",
            names.apiserver(*apiserver),
            down_ms
        ),
        Input::ReinitCache {
            apiserver,
            kind,
            down_ms,
        } => format!(
            "reinit-cache {} {} for {}",
            names.apiserver(*apiserver),
            names.kind(*kind),
            down_ms
        ),
        _ => unreachable!("not a fault of an apiserver"),
    }
}

/// `disconnect|delay|failover|hold|restart CONTROLLER ...` (crashes in `crash_line`).
fn controller_fault_line(names: Names, input: &Input) -> String {
    match input {
        Input::Disconnect {
            controller,
            duration_ms,
            after_writes,
        } => format!(
            "disconnect {}{} for {}",
            names.controller(*controller),
            match after_writes {
                Some(n) => format!(" after {n} write{}", if *n == 1 { "" } else { "s" }),
                None => String::new(),
            },
            duration_ms
        ),
        Input::Delay {
            controller,
            delay_ms,
        } => format!("delay {} {}", names.controller(*controller), delay_ms),
        Input::Failover {
            controller,
            apiserver,
        } => format!(
            "failover {} to {}",
            names.controller(*controller),
            names.apiserver(*apiserver)
        ),
        Input::Hold {
            controller,
            kind,
            name,
            for_ms,
        } => format!(
            "hold {} {} {name} for {}",
            names.controller(*controller),
            names.kind(*kind),
            for_ms
        ),
        Input::Restart {
            controller,
            apiserver: Some(apiserver),
        } => format!(
            "restart {} on {}",
            names.controller(*controller),
            names.apiserver(*apiserver)
        ),
        Input::Restart {
            controller,
            apiserver: None,
        } => format!("restart {}", names.controller(*controller)),
        _ => unreachable!("not a fault of a controller"),
    }
}

/// `probe list|watch KIND [resourceVersion="N" [exact]] on APISERVER`.
fn probe_line(
    names: Names,
    apiserver: ApiserverId,
    kind: KindId,
    request: &listwatch_core::ProbeRequest,
) -> String {
    let kind = names.kind(kind);
    let on = names.apiserver(apiserver);
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
        listwatch_core::ProbeRequest::WatchMostRecent => {
            format!("probe watch {kind} resourceVersion=\"\" on {on}")
        }
    }
}

/// `crash CONTROLLER [after N writes] [restart-after D]`.
fn crash_line(
    controller: &str,
    after_writes: Option<u32>,
    restart_after_ms: Option<listwatch_core::DurationMs>,
) -> String {
    let mut s = format!("crash {controller}");
    if let Some(n) = after_writes {
        s += &format!(" after {n} {}", if n == 1 { "write" } else { "writes" });
    }
    if let Some(d) = restart_after_ms {
        s += &format!(" restart-after {d}");
    }
    s
}

#[cfg(test)]
mod tests {
    /// Every action renders back to a line that says what was parsed, in its canonical form.
    #[test]
    fn every_action_renders_back_to_its_line() {
        let lines = [
            "at 1s create Pod a spec 2",
            "at 1s update Pod a spec 3",
            "at 1s status Pod a 4",
            "at 1s delete Pod a",
            "at 1s disconnect op for 10s",
            "at 1s delay op 250ms",
            "at 1s failover op to b",
            "at 1s hold op Pod a for 5s",
            "at 1s restart op",
            "at 1s restart op on b",
            "at 1s crash op after 1 write restart-after 2s",
            "at 1s crash op after 3 writes",
            "at 1s pause a",
            "at 1s resume a",
            "at 1s restart-apiserver a for 1s",
            "at 1s reinit-cache b Pod for 2s",
            "at 1s probe list Pod on a",
            "at 1s probe list Pod resourceVersion=\"0\" on a",
            "at 1s probe list Pod resourceVersion=\"7\" on b",
            "at 1s probe list Pod resourceVersion=\"7\" exact on a",
            "at 1s probe watch Pod resourceVersion=\"3\" on a",
            "at 1s say \"a \\\"quoted\\\" \\\\ word\" and wait",
            "at 1s say \"plain\"",
        ];
        let script = format!(
            "kind Pod\napiserver a\napiserver b\ncontroller op for Pod children Pod\n{}\n",
            lines.join("\n")
        );
        let s = crate::parse(&script).unwrap_or_else(|d| panic!("{d:?}"));
        let rendered: Vec<String> = s
            .config
            .timeline
            .iter()
            .map(|t| super::input_line(&s.config, t))
            .collect();
        assert_eq!(rendered, lines);
    }
}
