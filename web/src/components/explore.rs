//! The Explore panel: runs the explorer in a Web Worker (the page never freezes), shows its
//! progress, cancels it, and opens what it finds in the editor.

use std::cell::RefCell;
use std::rc::Rc;

use wasm_bindgen::closure::Closure;
use wasm_bindgen::{JsCast, JsValue};
use web_sys::js_sys::{Object, Reflect};
use yew::prelude::*;

use crate::state::{Action, State};

const WORKER_URL: &str = "./explore_worker_loader.js";

#[derive(Clone, Debug, Default, PartialEq)]
struct Progress {
    running: bool,
    tried: f64,
    space: f64,
    states: f64,
    skipped: f64,
    faults: f64,
    per_second: f64,
    /// The counterexample script, once found.
    found: Option<String>,
    base_broken: String,
    error: Option<String>,
    finished: bool,
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

    let stop = {
        let worker = worker.clone();
        move || {
            if let Some((w, _)) = worker.borrow_mut().take() {
                w.terminate();
            }
        }
    };
    // A worker never outlives the page's panel.
    {
        let stop = stop.clone();
        use_effect_with((), move |_| move || stop());
    }
    let start = {
        let (worker, progress, budget, state) = (
            worker.clone(),
            progress.clone(),
            budget.clone(),
            p.state.clone(),
        );
        let stop = stop.clone();
        Callback::from(move |_: MouseEvent| {
            stop();
            let w = match web_sys::Worker::new(WORKER_URL) {
                Ok(w) => w,
                Err(_) => {
                    progress.set(Progress {
                        error: Some("the explorer's worker could not start".into()),
                        ..Default::default()
                    });
                    return;
                }
            };
            let pr = progress.clone();
            let job = Object::new();
            let _ = Reflect::set(&job, &"script".into(), &JsValue::from_str(&state.source));
            let _ = Reflect::set(&job, &"budget".into(), &JsValue::from_f64(*budget as f64));
            let me = w.clone();
            let onmessage =
                Closure::<dyn Fn(web_sys::MessageEvent)>::new(move |e: web_sys::MessageEvent| {
                    let d = e.data();
                    let kind = text(&d, "kind");
                    if kind == "ready" {
                        let _ = me.post_message(&job);
                        return;
                    }
                    let mut next = Progress {
                        running: kind == "progress",
                        tried: num(&d, "tried"),
                        space: num(&d, "space"),
                        states: num(&d, "states"),
                        skipped: num(&d, "skipped"),
                        faults: num(&d, "faults"),
                        per_second: num(&d, "per_second"),
                        finished: kind == "done",
                        ..Default::default()
                    };
                    match kind.as_str() {
                        "done" => {
                            let found = text(&d, "found");
                            next.found = (!found.is_empty()).then_some(found);
                            next.base_broken = text(&d, "base_broken");
                        }
                        "error" => next.error = Some(text(&d, "message")),
                        _ => {}
                    }
                    pr.set(next);
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
            if let Some(v) = e
                .target()
                .and_then(|t| t.dyn_into::<web_sys::HtmlInputElement>().ok())
                .and_then(|i| i.value().parse::<u32>().ok())
            {
                budget.set(v.clamp(1, 1_000_000));
            }
        })
    };
    let pr = (*progress).clone();
    let open = pr.found.clone().map(|script| {
        let st = p.state.clone();
        Callback::from(move |_: MouseEvent| st.dispatch(Action::Edit(script.clone())))
    });
    html! {
        <div class="explore" data-testid="explore-panel">
            <h2>{"Explore"}</h2>
            <p class="hint">{"Search crash, stale, unobserved-state, drop and disconnect faults for a schedule that breaks this scenario's expectations or ESR."}</p>
            <div class="explore-bar">
                <label>{"budget "}
                    <input type="number" min="1" max="1000000" aria-label="Schedules to try at most" value={budget.to_string()} oninput={on_budget} />
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
                    "{} of {} schedules · {} states · {} skipped as explored · {} candidate faults · {:.0} schedules/s",
                    pr.tried, pr.space, pr.states, pr.skipped, pr.faults, pr.per_second
                )}</div>
            }
            if let Some(e) = &pr.error { <p class="fail">{e}</p> }
            if pr.finished {
                if !pr.base_broken.is_empty() {
                    <p class="fail">{format!("It already fails without faults: {}", pr.base_broken)}</p>
                } else if let Some(found) = &pr.found {
                    <div data-testid="explore-found">
                        <p class="fail">{"Found a fault schedule that breaks it:"}</p>
                        // The fault lines the explorer appended, not the original script.
                        <pre class="counterexample">{ found.split_once("# Found by").map(|(_, tail)| tail.split_once('\n').map(|x| x.1).unwrap_or(tail)).unwrap_or(found) }</pre>
                        <button data-testid="explore-open" onclick={open.unwrap_or_default()}>{"Open the counterexample in the editor"}</button>
                    </div>
                } else {
                    <p class="pass" data-testid="explore-none">{"No schedule within the budget breaks it."}</p>
                }
            }
        </div>
    }
}
