//! The Explore panel: runs the explorer in a Web Worker (the page never freezes), shows its
//! progress, cancels it, and lists what it finds; each failure opens in the editor.

use std::cell::RefCell;
use std::rc::Rc;

use wasm_bindgen::closure::Closure;
use wasm_bindgen::{JsCast, JsValue};
use web_sys::js_sys::{Array, Object, Reflect};
use yew::prelude::*;

use crate::state::{Action, State};

const WORKER_URL: &str = "./explore_worker_loader.js";

#[derive(Clone, Debug, Default, PartialEq)]
struct Progress {
    running: bool,
    finished: bool,
    tried: f64,
    space: f64,
    states: f64,
    skipped: f64,
    faults: f64,
    failures: f64,
    per_second: f64,
    /// Each failure found: its faults in words, and the counterexample script.
    found: Vec<(String, String)>,
    /// Failures beyond those sent back.
    more: f64,
    base_broken: String,
    error: Option<String>,
}

fn num(o: &JsValue, k: &str) -> f64 {
    Reflect::get(o, &k.into())
        .ok()
        .and_then(|v| v.as_f64())
        .unwrap_or(0.0)
}

fn text(o: &JsValue, k: &str) -> String {
    Reflect::get(o, &k.into())
        .ok()
        .and_then(|v| v.as_string())
        .unwrap_or_default()
}

/// One message from the worker, as the panel's new state.
fn progress_of(d: &JsValue) -> Progress {
    let kind = text(d, "kind");
    let mut next = Progress {
        running: kind == "progress",
        finished: kind == "done",
        tried: num(d, "tried"),
        space: num(d, "space"),
        states: num(d, "states"),
        skipped: num(d, "skipped"),
        faults: num(d, "faults"),
        failures: num(d, "failures"),
        per_second: num(d, "per_second"),
        more: num(d, "more"),
        base_broken: text(d, "base_broken"),
        ..Default::default()
    };
    if kind == "error" {
        next.error = Some(text(d, "message"));
    }
    if let Ok(list) = Reflect::get(d, &"found".into())
        .unwrap_or(JsValue::UNDEFINED)
        .dyn_into::<Array>()
    {
        for pair in list.iter() {
            let pair: Array = pair.unchecked_into();
            next.found.push((
                pair.get(0).as_string().unwrap_or_default(),
                pair.get(1).as_string().unwrap_or_default(),
            ));
        }
    }
    next
}

/// The running worker and the closure that receives its messages.
type Running = Option<(web_sys::Worker, Closure<dyn Fn(web_sys::MessageEvent)>)>;

#[derive(Properties, PartialEq)]
pub struct Props {
    pub state: UseReducerHandle<State>,
}

#[function_component(ExplorePanel)]
pub fn explore_panel(p: &Props) -> Html {
    let progress = use_state(Progress::default);
    let worker: Rc<RefCell<Running>> = use_mut_ref(|| None);
    let budget = use_state(|| 2000u32);
    let all = use_state(|| false);

    let stop = {
        let worker = worker.clone();
        move || {
            if let Some((w, _)) = worker.borrow_mut().take() {
                w.terminate();
            }
        }
    };
    // A worker never outlives the panel.
    {
        let stop = stop.clone();
        use_effect_with((), move |_| move || stop());
    }
    let start = {
        let (worker, progress, state) = (worker.clone(), progress.clone(), p.state.clone());
        let (budget, all) = (*budget, *all);
        let stop = stop.clone();
        Callback::from(move |_: MouseEvent| {
            stop();
            let Ok(w) = web_sys::Worker::new(WORKER_URL) else {
                progress.set(Progress {
                    error: Some("the explorer's worker could not start".into()),
                    ..Default::default()
                });
                return;
            };
            let job = Object::new();
            let _ = Reflect::set(&job, &"script".into(), &JsValue::from_str(&state.source));
            let _ = Reflect::set(&job, &"budget".into(), &JsValue::from_f64(budget as f64));
            let _ = Reflect::set(&job, &"all".into(), &JsValue::from_bool(all));
            let (me, pr) = (w.clone(), progress.clone());
            let onmessage =
                Closure::<dyn Fn(web_sys::MessageEvent)>::new(move |e: web_sys::MessageEvent| {
                    let d = e.data();
                    // Messages sent before the worker's handler existed would be lost: it says when.
                    if text(&d, "kind") == "ready" {
                        let _ = me.post_message(&job);
                    } else {
                        pr.set(progress_of(&d));
                    }
                });
            w.set_onmessage(Some(onmessage.as_ref().unchecked_ref()));
            *worker.borrow_mut() = Some((w, onmessage));
            progress.set(Progress {
                running: true,
                ..Default::default()
            });
        })
    };
    let cancel = {
        let progress = progress.clone();
        Callback::from(move |_: MouseEvent| {
            stop();
            progress.set(Progress {
                running: false,
                finished: false,
                ..(*progress).clone()
            });
        })
    };
    let on_budget = {
        let budget = budget.clone();
        Callback::from(move |e: InputEvent| {
            let value = e
                .target()
                .and_then(|t| t.dyn_into::<web_sys::HtmlInputElement>().ok())
                .and_then(|i| i.value().parse::<u32>().ok());
            if let Some(v) = value {
                budget.set(v.clamp(1, 1_000_000));
            }
        })
    };
    let on_all = {
        let all = all.clone();
        Callback::from(move |_: Event| all.set(!*all))
    };
    let open = |script: &String| {
        let (st, script) = (p.state.clone(), script.clone());
        Callback::from(move |_: MouseEvent| st.dispatch(Action::Edit(script.clone())))
    };
    let pr = (*progress).clone();
    let total_found = pr.found.len() as f64 + pr.more;
    html! {
        <div class="explore" data-testid="explore-panel">
            <h2>{"Explore"}</h2>
            <p class="hint">{"Search crash, stale-apiserver, held-notification (unobserved state) and disconnect faults for a schedule that breaks this scenario's expectations or ESR."}</p>
            <div class="explore-bar">
                <label>{"budget "}
                    <input type="number" min="1" max="1000000" aria-label="Schedules to try at most" value={budget.to_string()} oninput={on_budget} />
                </label>
                <label title="Keep searching after the first failure, up to the budget">
                    <input type="checkbox" data-testid="explore-all" checked={*all} onchange={on_all} />{" all failures"}
                </label>
                if pr.running {
                    <button data-testid="explore-cancel" onclick={cancel}>{"Cancel"}</button>
                } else {
                    <button data-testid="explore" onclick={start}>{"Explore"}</button>
                }
            </div>
            if pr.running || pr.finished {
                <progress data-testid="explore-progress" max={pr.space.max(1.0).to_string()} value={pr.tried.to_string()} />
                <div class="hint" data-testid="explore-stats">{format!(
                    "{} of {} schedules · {} states · {} skipped as explored · {} candidate faults · {} failing · {:.0} schedules/s",
                    pr.tried, pr.space, pr.states, pr.skipped, pr.faults, pr.failures, pr.per_second
                )}</div>
            }
            if let Some(e) = &pr.error { <p class="fail">{e}</p> }
            if pr.finished {
                if !pr.base_broken.is_empty() {
                    <p class="fail">{format!("It already fails without faults: {}", pr.base_broken)}</p>
                } else if !pr.found.is_empty() {
                    <div data-testid="explore-found">
                        <p class="fail">{ if total_found == 1.0 { "Found a fault schedule that breaks it:".to_string() } else { format!("Found {total_found} fault schedules that break it:") } }</p>
                        <ol class="failures">
                            { for pr.found.iter().enumerate().map(|(i, (words, script))| html! {
                                <li>
                                    <span>{words}</span>{" "}
                                    <button data-testid={if i == 0 { "explore-open" } else { "explore-open-more" }} onclick={open(script)}>{"Open in the editor"}</button>
                                </li>
                            }) }
                        </ol>
                    </div>
                } else {
                    <p class="pass" data-testid="explore-none">{"No schedule within the budget breaks it."}</p>
                }
            }
        </div>
    }
}
