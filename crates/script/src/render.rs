//! Inputs back into script lines: how the explorer's counterexamples become scenarios.

use listwatch_core::{
    ApiserverId, Config, ControllerId, Edit, FaultInput, FieldValue, Input, KindId, TimedInput,
    WriteInput,
};

/// `at 12.5s disconnect op for 10s`: one timeline line.
pub fn input_line(config: &Config, t: &TimedInput) -> String {
    let names = Names(config);
    let action = match &t.input {
        Input::Write(write) => write_line(names, write),
        Input::Fault(fault) => fault_line(names, fault),
        Input::Probe {
            apiserver,
            kind,
            request,
            selector,
        } => probe_line(names, *apiserver, *kind, request, selector.as_deref()),
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
fn write_line(names: Names, write: &WriteInput) -> String {
    match write {
        WriteInput::Create { kind, name, spec } => {
            format!("create {} {name} spec {spec}", names.kind(*kind))
        }
        WriteInput::Update { kind, name, spec } => {
            format!("update {} {name} spec {spec}", names.kind(*kind))
        }
        WriteInput::UpdateStatus { kind, name, status } => {
            format!("status {} {name} {status}", names.kind(*kind))
        }
        WriteInput::Delete { kind, name } => {
            format!("delete {} {name}", names.kind(*kind))
        }
        WriteInput::DeleteWith {
            kind,
            name,
            propagation,
        } => format!(
            "delete {} {name} propagation {}",
            names.kind(*kind),
            propagation.as_str()
        ),
        WriteInput::Edits {
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

/// `disconnect|delay|failover|hold|restart|crash CONTROLLER ...` and
/// `pause|resume|restart-apiserver|reinit-cache APISERVER ...`.
fn fault_line(names: Names, fault: &FaultInput) -> String {
    match fault {
        FaultInput::Disconnect {
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
        FaultInput::Delay {
            controller,
            delay_ms,
        } => format!("delay {} {}", names.controller(*controller), delay_ms),
        FaultInput::Failover {
            controller,
            apiserver,
        } => format!(
            "failover {} to {}",
            names.controller(*controller),
            names.apiserver(*apiserver)
        ),
        FaultInput::Hold {
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
        FaultInput::Restart {
            controller,
            apiserver: Some(apiserver),
        } => format!(
            "restart {} on {}",
            names.controller(*controller),
            names.apiserver(*apiserver)
        ),
        FaultInput::Restart {
            controller,
            apiserver: None,
        } => format!("restart {}", names.controller(*controller)),
        FaultInput::Crash {
            controller,
            after_writes,
            restart_after_ms,
        } => crash_line(
            names.controller(*controller),
            *after_writes,
            *restart_after_ms,
        ),
        FaultInput::PauseCache { apiserver } => {
            format!("pause {}", names.apiserver(*apiserver))
        }
        FaultInput::ResumeCache { apiserver } => {
            format!("resume {}", names.apiserver(*apiserver))
        }
        FaultInput::RestartApiserver { apiserver, down_ms } => format!(
            "restart-apiserver {} for {}",
            names.apiserver(*apiserver),
            down_ms
        ),
        FaultInput::ReinitCache {
            apiserver,
            kind,
            down_ms,
        } => format!(
            "reinit-cache {} {} for {}",
            names.apiserver(*apiserver),
            names.kind(*kind),
            down_ms
        ),
    }
}

/// `probe list|watch KIND [resourceVersion="N" [exact]] on APISERVER`.
fn probe_line(
    names: Names,
    apiserver: ApiserverId,
    kind: KindId,
    request: &listwatch_core::ProbeRequest,
    selector: Option<&listwatch_core::ProbeSelector>,
) -> String {
    let kind = names.kind(kind);
    let on = names.apiserver(apiserver);
    let sel = selector.map_or(String::new(), |s| format!(" {}", s.text()));
    match request {
        listwatch_core::ProbeRequest::List { rv } => {
            let param = match rv {
                listwatch_core::ListRv::Consistent => String::new(),
                listwatch_core::ListRv::Any => " resourceVersion=\"0\"".into(),
                listwatch_core::ListRv::NotOlderThan(n) => format!(" resourceVersion=\"{n}\""),
                listwatch_core::ListRv::Exact(n) => format!(" resourceVersion=\"{n}\" exact"),
            };
            format!("probe list {kind}{param}{sel} on {on}")
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
    use listwatch_core::{
        ApiserverId, ControllerId, DurationMs, Edit, FaultInput, Input, KindId, ListRv,
        ProbeRequest, Propagation, TimeMs, TimedInput, Verb, WriteInput,
    };

    /// The walk over every kind of input: the example after `input` (the first after `None`,
    /// `None` after the last). Its `match` names every variant with no wildcard, so a new
    /// variant does not compile until the walk gives it an example, which
    /// `every_input_renders_to_a_known_word_and_parses_back` then renders and parses.
    fn next_example(input: Option<&Input>) -> Option<Input> {
        let (pod, a, b, op) = (KindId(0), ApiserverId(0), ApiserverId(1), ControllerId(0));
        let name = || "a".to_string();
        let fault = Input::Fault;
        let next = match input {
            None => Input::Write(WriteInput::Create {
                kind: pod,
                name: name(),
                spec: 2,
            }),
            Some(Input::Write(write)) => match write {
                WriteInput::Create { .. } => Input::Write(WriteInput::Update {
                    kind: pod,
                    name: name(),
                    spec: 3,
                }),
                WriteInput::Update { .. } => Input::Write(WriteInput::UpdateStatus {
                    kind: pod,
                    name: name(),
                    status: 4,
                }),
                WriteInput::UpdateStatus { .. } => Input::Write(WriteInput::Delete {
                    kind: pod,
                    name: name(),
                }),
                WriteInput::Delete { .. } => Input::Write(WriteInput::Edits {
                    verb: Verb::Patch,
                    kind: pod,
                    name: name(),
                    edits: vec![Edit::Label {
                        key: "app".into(),
                        value: Some("web".into()),
                    }],
                }),
                WriteInput::Edits { .. } => Input::Write(WriteInput::DeleteWith {
                    kind: pod,
                    name: name(),
                    propagation: Propagation::Foreground,
                }),
                WriteInput::DeleteWith { .. } => fault(FaultInput::Disconnect {
                    controller: op,
                    duration_ms: DurationMs(10_000),
                    after_writes: Some(2),
                }),
            },
            Some(Input::Fault(f)) => match f {
                FaultInput::Disconnect { .. } => fault(FaultInput::Delay {
                    controller: op,
                    delay_ms: DurationMs(250),
                }),
                FaultInput::Delay { .. } => fault(FaultInput::Hold {
                    controller: op,
                    kind: pod,
                    name: name(),
                    for_ms: DurationMs(5000),
                }),
                FaultInput::Hold { .. } => fault(FaultInput::PauseCache { apiserver: a }),
                FaultInput::PauseCache { .. } => fault(FaultInput::ResumeCache { apiserver: a }),
                FaultInput::ResumeCache { .. } => fault(FaultInput::RestartApiserver {
                    apiserver: a,
                    down_ms: DurationMs(1000),
                }),
                FaultInput::RestartApiserver { .. } => fault(FaultInput::ReinitCache {
                    apiserver: b,
                    kind: pod,
                    down_ms: DurationMs(2000),
                }),
                FaultInput::ReinitCache { .. } => fault(FaultInput::Crash {
                    controller: op,
                    after_writes: Some(1),
                    restart_after_ms: Some(DurationMs(2000)),
                }),
                FaultInput::Crash { .. } => fault(FaultInput::Failover {
                    controller: op,
                    apiserver: b,
                }),
                FaultInput::Failover { .. } => fault(FaultInput::Restart {
                    controller: op,
                    apiserver: Some(b),
                }),
                FaultInput::Restart { .. } => Input::Probe {
                    apiserver: b,
                    kind: pod,
                    request: ProbeRequest::List {
                        rv: ListRv::Exact(7),
                    },
                    selector: None,
                },
            },
            Some(Input::Probe { selector: None, .. }) => Input::Probe {
                apiserver: a,
                kind: pod,
                request: ProbeRequest::List {
                    rv: ListRv::Consistent,
                },
                selector: Some(Box::new(listwatch_core::ProbeSelector {
                    labels: Some(listwatch_core::LabelSelector(vec![
                        listwatch_core::LabelRequirement {
                            op: listwatch_core::SelectorOp::Equals,
                            key: "app".into(),
                            values: vec!["web".into()],
                        },
                    ])),
                    fields: Some(listwatch_core::FieldSelector(vec![
                        listwatch_core::FieldRequirement {
                            field: listwatch_core::SelectorField::Namespace,
                            equal: false,
                            value: "kube-system".into(),
                        },
                    ])),
                })),
            },
            Some(Input::Probe { .. }) => Input::Say {
                text: "a \"quoted\" \\ word".into(),
                wait: true,
            },
            Some(Input::Say { .. }) => return None,
        };
        Some(next)
    }

    /// Every kind of input (`next_example`'s walk) renders to a line whose action word is the
    /// language's (`syntax::ACTIONS`, the editor's vocabulary), and the parser reads those
    /// lines back to the same inputs: a counterexample written as a script runs as found.
    #[test]
    fn every_input_renders_to_a_known_word_and_parses_back() {
        let header = "kind Pod\napiserver a\napiserver b\ncontroller op for Pod children Pod\n";
        let declared = crate::parse(header).unwrap_or_else(|d| panic!("{d:?}"));
        let mut examples: Vec<Input> = vec![];
        let mut lines: Vec<String> = vec![];
        while let Some(input) = next_example(examples.last()) {
            let timed = TimedInput {
                at_ms: TimeMs(1000),
                input: input.clone(),
            };
            let line = super::input_line(&declared.config, &timed);
            let word = line.split(' ').nth(2).unwrap_or_default();
            assert!(
                crate::syntax::ACTIONS.contains(&word),
                "{line}: `{word}` is not in syntax::ACTIONS"
            );
            assert!(!lines.contains(&line), "the walk came back to {line}");
            lines.push(line);
            examples.push(input);
        }
        let script = format!("{header}{}\n", lines.join("\n"));
        let parsed = crate::parse(&script).unwrap_or_else(|d| panic!("{d:?}\n{script}"));
        let back: Vec<&Input> = parsed.config.timeline.iter().map(|t| &t.input).collect();
        assert_eq!(back, examples.iter().collect::<Vec<_>>(), "{script}");
    }

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
