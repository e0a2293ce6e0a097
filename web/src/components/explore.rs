//! The Explore panel: runs the explorer in a Web Worker (the page never freezes), shows its
//! progress, cancels it, and lists what it finds; each failure opens in the editor. Its state is
//! the page's (`state::Explore`, changed by actions like every other); `web/panels.js` draws it
//! (DOM text and attributes only) and runs the worker the state asks for.
//!
//! The worker is driven from `panels.js` rather than from here because the first load has no
//! room for it: the same panel with the worker started and heard in Rust (`web_sys::Worker`, a
//! message listener, the job and the reports as JS objects through `Reflect`) came to 300.6 KB
//! gzipped, over the 300 KB budget; `panels.js` costs nothing more there.

use wasm_bindgen::prelude::*;
use yew::prelude::*;

use super::objects::{call, string_callback, with_module};
use crate::state::{Action, Explore, State};

#[derive(Properties, PartialEq)]
pub struct Props {
    pub source: String,
    pub explore: Explore,
    pub dispatch: UseReducerDispatcher<State>,
}

/// What the panel says (`panels.js`: `start`, `cancel`, `all:true`, `budget:N`, `open:SCRIPT`,
/// or the worker's `progress:JSON` and `done:JSON`), as the page's action.
fn action(said: &str) -> Option<Action> {
    let report = |report: &str, done| Action::ExploreReport {
        report: report.to_string(),
        done,
    };
    Some(match said {
        "start" => Action::ExploreStart,
        "cancel" => Action::ExploreCancel,
        _ => {
            if let Some(json) = said.strip_prefix("progress:") {
                report(json, false)
            } else if let Some(json) = said.strip_prefix("done:") {
                report(json, true)
            } else if let Some(script) = said.strip_prefix("open:") {
                Action::Edit(script.to_string())
            } else if let Some(all) = said.strip_prefix("all:") {
                Action::ExploreAll(all == "true")
            } else {
                Action::ExploreBudget(said.strip_prefix("budget:")?.parse().ok()?)
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
    use_effect_with((p.source.clone(), p.explore.clone()), move |(source, x)| {
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
        let (source, x) = (source.clone(), x.clone());
        with_module(move |m| {
            if let Some(el) = place.get() {
                let report = x.report.as_deref().map_or(JsValue::NULL, JsValue::from);
                let args = [
                    el.into(),
                    source.into(),
                    x.budget.into(),
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
