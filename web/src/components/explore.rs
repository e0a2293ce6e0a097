//! The Explore panel: runs the explorer in a Web Worker (the page never freezes), shows its
//! progress, cancels it, and lists what it finds; each failure opens in the editor. Its state is
//! the page's (`state::Explore`: the settings, the controller under test, the search, the
//! failures found so far and whether it was cancelled, changed by actions like every other);
//! `web/panels.js` draws it (DOM text and attributes only) and asks `web/worker.js`, which starts
//! every worker of the page, for the search the state says runs.
//!
//! The worker is driven from JS rather than from here because the first load has no room for
//! it: the same panel with the worker started and heard in Rust (`web_sys::Worker`, a message
//! listener, the job and the reports as JS objects through `Reflect`) came to 300.6 KB gzipped,
//! over the 300 KB budget; `panels.js` and `worker.js` (loaded on the first search) cost nothing
//! more there.

use listwatch_script::explore::MAX_BUDGET_SCHEDULES;
use wasm_bindgen::prelude::*;
use web_sys::js_sys::Array;
use yew::prelude::*;

use super::objects::{call, with_module};
use crate::state::{controllers, Action, Explore, Ptr, Script, Search};

#[derive(Properties, PartialEq)]
pub struct Props {
    pub source: std::rc::Rc<str>,
    pub explore: Explore,
    /// The panel's controls and the worker's reports.
    pub on_search: Callback<Search>,
    /// A counterexample opened in the editor (`Script::Edit`).
    pub on_edit: Callback<String>,
}

/// What the panel says (`panels.js`: `start`, `cancel`, `all:true`, `all:false`, `budget:N`,
/// `against:NAME`, `open:SCRIPT`, or search JOB's worker's `progress:JOB:JSON` and
/// `done:JOB:JSON`, with the failures of the report, when it has them, in `found`), as the page's
/// action; anything else is none.
///
/// A string rather than a JS object read with serde: serde-wasm-bindgen in the page (a typed
/// `{kind: ...}` message per case, as `protocol.rs` has for the worker) came to 21 KB more on the
/// first load (329.0 KB gzipped against 307.9 KB), which has no room for it.
fn action(said: &str, found: Option<Vec<(String, String)>>) -> Option<Action> {
    let report = |said: &str, done| {
        let (job, report) = said.split_once(':')?;
        Some(Action::Search(Search::Report {
            job: job.parse().ok()?,
            report: report.to_string(),
            found,
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
            } else if let Some(name) = said.strip_prefix("against:") {
                Action::Search(Search::Against(name.to_string()))
            } else {
                Action::Search(Search::Budget(said.strip_prefix("budget:")?.parse().ok()?))
            }
        }
    })
}

/// A report's failures as `panels.js` hands them on (an array of `[words, script]`, the
/// worker's `found`); anything else is none.
fn found_of(v: &JsValue) -> Option<Vec<(String, String)>> {
    let list = v.dyn_ref::<Array>()?;
    (list.iter())
        .map(|pair| {
            let pair = pair.dyn_into::<Array>().ok()?;
            Some((pair.get(0).as_string()?, pair.get(1).as_string()?))
        })
        .collect()
}

/// The failures found, as the array `panels.js` draws.
fn found_to_js(found: &[(std::rc::Rc<str>, std::rc::Rc<str>)]) -> JsValue {
    (found.iter())
        .map(|(w, s)| -> JsValue { Array::of2(&(**w).into(), &(**s).into()).into() })
        .collect::<Array>()
        .into()
}

type Found = Ptr<Vec<(std::rc::Rc<str>, std::rc::Rc<str>)>>;

#[function_component(ExplorePanel)]
pub fn explore_panel(p: &Props) -> Html {
    let host = use_node_ref();
    // The panel's one JS callback, made once.
    let on: std::rc::Rc<std::cell::RefCell<Option<JsValue>>> = use_mut_ref(|| None);
    // The failures as JS, made again only when the list is a new one (a progress report without
    // new failures keeps it): up to 50 scripts of up to 64 KiB are not copied on every report.
    let found_js: std::rc::Rc<std::cell::RefCell<Option<(Found, JsValue)>>> = use_mut_ref(|| None);
    let (on_search, on_edit, place) = (p.on_search.clone(), p.on_edit.clone(), host.clone());
    // The script on screen is what a search starts on, and its controllers the choice of the
    // one under test; an edit sends only them, not the panel's state and its failures.
    use_effect_with(p.source.clone(), |source| {
        let source = source.clone();
        let names = controllers(&source).join("\n");
        with_module(move |m| {
            call(
                m,
                "explore_source",
                &[JsValue::from_str(&source), names.into()],
            )
        });
    });
    use_effect_with(p.explore.clone(), move |x| {
        let on = on
            .borrow_mut()
            .get_or_insert_with(|| {
                Closure::<dyn Fn(String, JsValue)>::new(move |said: String, found: JsValue| {
                    match action(&said, found_of(&found)) {
                        Some(Action::Search(s)) => on_search.emit(s),
                        Some(Action::Script(Script::Edit(text))) => on_edit.emit(text),
                        _ => {}
                    }
                })
                .into_js_value()
            })
            .clone();
        let found = {
            let mut cache = found_js.borrow_mut();
            match &*cache {
                Some((list, js)) if *list == x.found => js.clone(),
                _ => {
                    let js = found_to_js(&x.found);
                    *cache = Some((x.found.clone(), js.clone()));
                    js
                }
            }
        };
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
                    JsValue::from_str(&x.against),
                    x.job.into(),
                    x.running.into(),
                    x.cancelled.into(),
                    report,
                    found,
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
    use super::{action, found_of, found_to_js};
    use crate::state::{Action, Script, Search};
    use wasm_bindgen::JsValue;
    use wasm_bindgen_test::*;
    use web_sys::js_sys::{Array, JSON};

    /// An action in words, to compare.
    fn said(text: &str) -> String {
        match action(text, None) {
            None => "none".into(),
            Some(Action::Search(Search::Start)) => "start".into(),
            Some(Action::Search(Search::Cancel)) => "cancel".into(),
            Some(Action::Search(Search::All(all))) => format!("all {all}"),
            Some(Action::Search(Search::Budget(n))) => format!("budget {n}"),
            Some(Action::Script(Script::Edit(script))) => format!("edit {script:?}"),
            Some(Action::Search(Search::Against(name))) => format!("against {name:?}"),
            Some(Action::Search(Search::Report {
                job, report, done, ..
            })) => {
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
            ("against:op", "against \"op\""),
            ("against:", "against \"\""),
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

    /// A report's failures come through as pairs of strings, and go back to the panel the same;
    /// anything else is no list.
    #[wasm_bindgen_test]
    fn the_failures_cross_as_pairs_of_strings() {
        let js = |text: &str| JSON::parse(text).unwrap();
        assert_eq!(
            found_of(&js(r#"[["crash at 1s","a\nb"],["x",""]]"#)),
            Some(vec![
                ("crash at 1s".into(), "a\nb".into()),
                ("x".into(), "".into())
            ])
        );
        assert_eq!(found_of(&js("[]")), Some(vec![]));
        for bad in [
            "null",
            "{}",
            "\"x\"",
            "[1]",
            "[[\"a\"]]",
            "[[\"a\",2]]",
            "[[\"a\",\"b\"],3]",
        ] {
            assert_eq!(found_of(&js(bad)), None, "{bad}");
        }
        assert_eq!(found_of(&JsValue::UNDEFINED), None);
        let back = found_to_js(&[("w".into(), "s".into())]);
        assert_eq!(JSON::stringify(&back).unwrap(), r#"[["w","s"]]"#);
        assert_eq!(Array::from(&back).length(), 1);
    }
}
