//! The Explore panel: runs the explorer in a Web Worker (the page never freezes), shows its
//! progress, cancels it, and lists what it finds; each failure opens in the editor. Its state is
//! the page's (`state::Explore`, changed by actions like every other); `web/panels.js` draws it
//! (DOM text and attributes only) and runs the worker the state asks for.
//!
//! The worker is driven from `panels.js` rather than from here because the first load has no
//! room for it: the same panel with the worker started and heard in Rust (`web_sys::Worker`, a
//! message listener, the job and the reports as JS objects through `Reflect`) came to 300.6 KB
//! gzipped, over the 300 KB budget; `panels.js` costs nothing more there.

use listwatch_script::explore::MAX_BUDGET_SCHEDULES;
use wasm_bindgen::prelude::*;
use yew::prelude::*;

use super::objects::{call, string_callback, with_module};
use crate::state::{Action, Explore, Script, Search, State};

#[derive(Properties, PartialEq)]
pub struct Props {
    pub source: std::rc::Rc<str>,
    pub explore: Explore,
    pub dispatch: UseReducerDispatcher<State>,
}

/// What the panel says (`panels.js`: `start`, `cancel`, `all:true`, `all:false`, `budget:N`,
/// `open:SCRIPT`, or search JOB's worker's `progress:JOB:JSON` and `done:JOB:JSON`), as the page's
/// action; anything else is none.
///
/// A string rather than a JS object read with serde: serde-wasm-bindgen in the page (a typed
/// `{kind: ...}` message per case, as `protocol.rs` has for the worker) came to 21 KB more on the
/// first load (329.0 KB gzipped against 307.9 KB), which has no room for it.
fn action(said: &str) -> Option<Action> {
    let report = |said: &str, done| {
        let (job, report) = said.split_once(':')?;
        Some(Action::Search(Search::Report {
            job: job.parse().ok()?,
            report: report.to_string(),
            done,
        }))
    };
    Some(match said {
        "start" => Action::Search(Search::Start),
        "cancel" => Action::Search(Search::Cancel),
        "all:true" => Action::Search(Search::All(true)),
        "all:false" => Action::Search(Search::All(false)),
        _ => {
            if let Some(said) = said.strip_prefix("progress:") {
                report(said, false)?
            } else if let Some(said) = said.strip_prefix("done:") {
                report(said, true)?
            } else if let Some(script) = said.strip_prefix("open:") {
                Action::Script(Script::Edit(script.to_string()))
            } else {
                Action::Search(Search::Budget(said.strip_prefix("budget:")?.parse().ok()?))
            }
        }
    })
}

#[function_component(ExplorePanel)]
pub fn explore_panel(p: &Props) -> Html {
    let host = use_node_ref();
    // The panel's one JS callback, made once.
    let on: std::rc::Rc<std::cell::RefCell<Option<JsValue>>> = use_mut_ref(|| None);
    let (d, place) = (p.dispatch.clone(), host.clone());
    // The script on screen is what a search starts on; an edit sends only it, not the panel's
    // state and its last report (which can hold many counterexamples).
    use_effect_with(p.source.clone(), |source| {
        let source = source.clone();
        with_module(move |m| call(m, "explore_source", &[JsValue::from_str(&source)]));
    });
    use_effect_with(p.explore.clone(), move |x| {
        let on = on
            .borrow_mut()
            .get_or_insert_with(|| {
                string_callback(Callback::from(move |said: String| {
                    if let Some(a) = action(&said) {
                        d.dispatch(a)
                    }
                }))
            })
            .clone();
        let x = x.clone();
        with_module(move |m| {
            if let Some(el) = place.get() {
                let report = x.report.as_deref().map_or(JsValue::NULL, JsValue::from);
                let args = [
                    el.into(),
                    x.budget.into(),
                    // The budget input's `max`: the page, its worker and the CLI share one limit.
                    (MAX_BUDGET_SCHEDULES as u32).into(),
                    x.all.into(),
                    x.job.into(),
                    x.running.into(),
                    report,
                    on,
                ];
                call(m, "explore", &args);
            }
        });
    });
    html! { <div class="explore-host" ref={host} /> }
}

#[cfg(test)]
mod tests {
    use super::action;
    use crate::state::{Action, Script, Search};
    use wasm_bindgen_test::*;

    /// An action in words, to compare.
    fn said(text: &str) -> String {
        match action(text) {
            None => "none".into(),
            Some(Action::Search(Search::Start)) => "start".into(),
            Some(Action::Search(Search::Cancel)) => "cancel".into(),
            Some(Action::Search(Search::All(all))) => format!("all {all}"),
            Some(Action::Search(Search::Budget(n))) => format!("budget {n}"),
            Some(Action::Script(Script::Edit(script))) => format!("edit {script:?}"),
            Some(Action::Search(Search::Report { job, report, done })) => {
                format!("report {job} {report} done={done}")
            }
            Some(_) => "another action".into(),
        }
    }

    /// Every message `panels.js` sends becomes its action.
    #[wasm_bindgen_test]
    fn every_message_of_the_panel_is_its_action() {
        for (text, want) in [
            ("start", "start"),
            ("cancel", "cancel"),
            ("all:true", "all true"),
            ("all:false", "all false"),
            ("budget:1", "budget 1"),
            ("budget:10000000", "budget 10000000"),
            // Clamped by the reducer, not here.
            ("budget:0", "budget 0"),
            ("open:kind Pod\nrun 1s\n", "edit \"kind Pod\\nrun 1s\\n\""),
            ("open:a:b", "edit \"a:b\""),
            ("open:", "edit \"\""),
            (
                r#"progress:3:{"kind":"progress","tried":1}"#,
                r#"report 3 {"kind":"progress","tried":1} done=false"#,
            ),
            (
                r#"done:12:{"kind":"done","found":[["a:b","c"]]}"#,
                r#"report 12 {"kind":"done","found":[["a:b","c"]]} done=true"#,
            ),
            (
                r#"done:1:{"kind":"error","message":"x"}"#,
                r#"report 1 {"kind":"error","message":"x"} done=true"#,
            ),
        ] {
            assert_eq!(said(text), want, "{text:?}");
        }
    }

    /// Anything else is no action, and never a panic.
    #[wasm_bindgen_test]
    fn a_malformed_message_is_no_action() {
        for text in [
            "",
            ":",
            "Start",
            "start ",
            " cancel",
            "stop",
            "all:",
            "all:yes",
            "all:TRUE",
            "all",
            "budget",
            "budget:",
            "budget:-1",
            "budget:1.5",
            "budget:12x",
            "budget:4294967296",
            "budget: 5",
            "progress",
            "progress:",
            "progress:3",
            "progress::{}",
            "progress:x:{}",
            "progress:-1:{}",
            "progress:4294967296:{}",
            "done:",
            "done:7",
            "done:é:{}",
            "open",
            "é",
            "\u{0}",
        ] {
            assert_eq!(said(text), "none", "{text:?}");
        }
    }
}
