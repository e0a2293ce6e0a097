//! Play, pause, step, scrub, speed, the clock, and jumps to the next or previous 410.

use listwatch_core::analysis::MarkerKind;
use listwatch_core::TimeMs;
use wasm_bindgen::JsCast;
use yew::prelude::*;

use std::rc::Rc;

use crate::state::{Loaded, Moment};

#[derive(Properties, PartialEq)]
pub struct Props {
    pub run: Rc<Loaded>,
    pub cursor: usize,
    /// The virtual clock (playback stands between events).
    pub at_ms: f64,
    pub playing: bool,
    pub speed: f64,
    /// Every control moves the moment or the speed.
    pub on_moment: Callback<Moment>,
}

/// The browser reads the number: the page's wasm carries no float parser.
fn input_value(e: InputEvent) -> Option<f64> {
    let v = e
        .target()?
        .dyn_into::<web_sys::HtmlInputElement>()
        .ok()?
        .value_as_number();
    (!v.is_nan()).then_some(v)
}

/// Jumps to the previous or next 410, relist and reconcile.
fn jumps(p: &Props) -> Html {
    // The cursor is past the event on screen: forward looks from the next one, backward before
    // the one on screen.
    let jump = |which: MarkerKind, forward: bool| {
        let (on, run, cur) = (p.on_moment.clone(), p.run.clone(), p.cursor);
        Callback::from(move |_: MouseEvent| {
            let found = if forward {
                run.analysis.next(which, cur)
            } else {
                run.analysis.previous(which, cur.saturating_sub(1))
            };
            if let Some(i) = found {
                on.emit(Moment::JumpTo(i));
            }
        })
    };
    // One button a row (a loop rather than six buttons written out: less of the page's wasm).
    const JUMPS: [(MarkerKind, bool, &str, &str); 6] = [
        (MarkerKind::Gone, false, "◀ 410", "Previous 410"),
        (MarkerKind::Gone, true, "410 ▶", "Next 410"),
        (MarkerKind::Relist, false, "◀ relist", "Previous relist"),
        (MarkerKind::Relist, true, "relist ▶", "Next relist"),
        (
            MarkerKind::Reconcile,
            false,
            "◀ reconcile",
            "Previous reconcile",
        ),
        (MarkerKind::Reconcile, true, "reconcile ▶", "Next reconcile"),
    ];
    html! {
        <span class="jumps">
            { for JUMPS.iter().map(|&(which, forward, text, label)| html! {
                <button data-testid={(which == MarkerKind::Gone && forward).then_some("next-410")} aria-label={label} onclick={jump(which, forward)}>{text}</button>
            }) }
        </span>
    }
}

#[function_component(Controls)]
pub fn controls(p: &Props) -> Html {
    let len = p.run.sim.trace().len();
    let now = TimeMs(p.at_ms as u64);
    let click = |m: Moment| p.on_moment.reform(move |_: MouseEvent| m);
    let scrub = {
        let on = p.on_moment.clone();
        Callback::from(move |e: InputEvent| {
            if let Some(v) = input_value(e) {
                on.emit(Moment::Seek(v as usize));
            }
        })
    };
    let speed = {
        let on = p.on_moment.clone();
        Callback::from(move |e: InputEvent| {
            if let Some(v) = input_value(e) {
                on.emit(Moment::Speed(web_sys::js_sys::Math::pow(10.0, v)));
            }
        })
    };
    html! {
        <div class="controls">
            <button data-testid="step-back" aria-label="Step back one event" title="Step back (←)" onclick={click(Moment::StepBack)}>{"◀ step"}</button>
            if p.playing {
                <button data-testid="pause" aria-label="Pause" title="Pause (Space)" onclick={click(Moment::Pause)}>{"❚❚ pause"}</button>
            } else {
                <button data-testid="play" aria-label="Play" title="Play (Space)" onclick={click(Moment::Play)}>{"▶ play"}</button>
            }
            <button data-testid="step-forward" aria-label="Step forward one event" title="Step forward (→)" onclick={click(Moment::StepForward)}>{"step ▶"}</button>
            <input data-testid="scrubber" type="range" aria-label="Moment" min="0" max={len.to_string()}
                value={p.cursor.to_string()} oninput={scrub} />
            <span data-testid="clock" class="clock" aria-label="Virtual time">{super::clock(now)}</span>
            <span class="count">{format!("event {}/{}", p.cursor, len)}
                if super::panels::cut_at(&p.run.sim).is_some() {
                    <span class="cut" title="The run stopped at a cap on its work (events or reads)">{" · cut off"}</span>
                }
            </span>
            { jumps(p) }
            <label class="speed">{"speed"}
                <input data-testid="speed" type="range" aria-label="Speed (virtual seconds per second, log scale)" min="-1" max="4" step="0.1"
                    aria-valuetext={crate::playback::speed_label(p.speed)}
                    value={super::num(web_sys::js_sys::Math::log10(p.speed))} oninput={speed} />
                <output data-testid="speed-value" class="speed-value">{crate::playback::speed_label(p.speed)}</output>
            </label>
        </div>
    }
}
