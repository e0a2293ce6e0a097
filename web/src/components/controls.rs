//! Play, pause, step, scrub, speed, the clock, and jumps to the next or previous 410.

use listwatch_core::EventKind;
use wasm_bindgen::JsCast;
use yew::prelude::*;

use std::rc::Rc;

use crate::state::{Action, Loaded, State};

#[derive(Properties, PartialEq)]
pub struct Props {
    pub run: Rc<Loaded>,
    pub cursor: usize,
    pub playing: bool,
    pub speed: f64,
    pub dispatch: UseReducerDispatcher<State>,
}

fn input_value(e: InputEvent) -> Option<f64> {
    e.target()?
        .dyn_into::<web_sys::HtmlInputElement>()
        .ok()?
        .value()
        .parse()
        .ok()
}

/// Kinds of moments the jump buttons look for.
fn is_marker(kind: &EventKind, which: &str) -> bool {
    match which {
        "410" => kind.gone().is_some(),
        "relist" => kind.is_relist(),
        _ => matches!(kind, EventKind::ReconcileStart { .. }),
    }
}

#[function_component(Controls)]
pub fn controls(p: &Props) -> Html {
    let len = p.run.sim.trace.len();
    let now = p
        .cursor
        .checked_sub(1)
        .map(|c| p.run.sim.trace[c].time_ms)
        .unwrap_or(0);
    let click = |make: fn() -> Action| {
        let st = p.dispatch.clone();
        Callback::from(move |_: MouseEvent| st.dispatch(make()))
    };
    let scrub = {
        let st = p.dispatch.clone();
        Callback::from(move |e: InputEvent| {
            if let Some(v) = input_value(e) {
                st.dispatch(Action::Seek(v as usize));
            }
        })
    };
    let speed = {
        let st = p.dispatch.clone();
        Callback::from(move |e: InputEvent| {
            if let Some(v) = input_value(e) {
                st.dispatch(Action::Speed(10f64.powf(v)));
            }
        })
    };
    let jump = |which: &'static str, forward: bool| {
        let (st, run, cur) = (p.dispatch.clone(), p.run.clone(), p.cursor);
        Callback::from(move |_: MouseEvent| {
            let trace = &run.sim.trace;
            let found = if forward {
                (cur..trace.len()).find(|&i| is_marker(&trace[i].kind, which))
            } else {
                (0..cur.saturating_sub(1))
                    .rev()
                    .find(|&i| is_marker(&trace[i].kind, which))
            };
            if let Some(i) = found {
                st.dispatch(Action::JumpTo(i as u32));
            }
        })
    };
    html! {
        <div class="controls">
            <button data-testid="step-back" aria-label="Step back one event" title="Step back (←)" onclick={click(|| Action::StepBack)}>{"◀ step"}</button>
            if p.playing {
                <button data-testid="pause" aria-label="Pause" title="Pause (Space)" onclick={click(|| Action::Pause)}>{"❚❚ pause"}</button>
            } else {
                <button data-testid="play" aria-label="Play" title="Play (Space)" onclick={click(|| Action::Play)}>{"▶ play"}</button>
            }
            <button data-testid="step-forward" aria-label="Step forward one event" title="Step forward (→)" onclick={click(|| Action::StepForward)}>{"step ▶"}</button>
            <input data-testid="scrubber" type="range" aria-label="Moment" min="0" max={len.to_string()}
                value={p.cursor.to_string()} oninput={scrub} />
            <span data-testid="clock" class="clock" aria-label="Virtual time">{super::clock(now)}</span>
            <span class="count">{format!("event {}/{}", p.cursor, len)}
                if super::panels::cut_at(&p.run.sim).is_some() {
                    <span class="cut" title="The run stopped at the event cap">{" · cut off"}</span>
                }
            </span>
            <span class="jumps">
                <button aria-label="Previous 410" onclick={jump("410", false)}>{"◀ 410"}</button>
                <button data-testid="next-410" aria-label="Next 410" onclick={jump("410", true)}>{"410 ▶"}</button>
                <button aria-label="Previous relist" onclick={jump("relist", false)}>{"◀ relist"}</button>
                <button aria-label="Next relist" onclick={jump("relist", true)}>{"relist ▶"}</button>
                <button aria-label="Previous reconcile" onclick={jump("reconcile", false)}>{"◀ reconcile"}</button>
                <button aria-label="Next reconcile" onclick={jump("reconcile", true)}>{"reconcile ▶"}</button>
            </span>
            <label class="speed">{"speed"}
                <input data-testid="speed" type="range" aria-label="Speed (events per second, log scale)" min="0" max="4" step="0.1"
                    value={p.speed.log10().to_string()} oninput={speed} />
            </label>
        </div>
    }
}
