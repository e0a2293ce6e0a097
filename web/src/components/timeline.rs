//! Swimlanes per actor under the view: markers for 410s, relists, reconciles and writes, fault
//! windows shaded, narration at its moment, and a line at the current moment.

use listwatch_core::actor_label;
use listwatch_core::analysis::MarkerKind;
use yew::prelude::*;

use std::rc::Rc;

use super::{clock, num};
use crate::state::{Action, Loaded, State};

#[derive(Properties, PartialEq)]
pub struct Props {
    pub state: UseReducerHandle<State>,
}

const WIDTH: f64 = 900.0;
const LABEL_W: f64 = 150.0;

fn x_of(t: u64, end: f64) -> f64 {
    LABEL_W + (WIDTH - LABEL_W - 10.0) * t as f64 / end
}

#[derive(Properties)]
struct MarksProps {
    run: Rc<Loaded>,
    jump: Callback<u32>,
}
impl PartialEq for MarksProps {
    fn eq(&self, o: &Self) -> bool {
        Rc::ptr_eq(&self.run, &o.run)
    }
}

/// Lanes, windows and markers: they change only with the run, so seeking never re-renders them.
#[function_component(Marks)]
fn marks(p: &MarksProps) -> Html {
    let sim = &p.run.sim;
    let end = sim.now_ms().max(1) as f64;
    let x = |t| x_of(t, end);
    let a = &p.run.analysis;
    let height = 16.0 * a.lanes.len().max(1) as f64 + 10.0;
    // Fault windows: disconnects, and caches paused until they resume (or the end).
    let windows = a.windows.iter().map(|w| (w.start_ms, w.end_ms));
    let mut write_paths = vec![String::new(); a.lanes.len()];
    for m in a.markers.iter().filter(|m| m.kind == MarkerKind::Write) {
        let (lane, t) = (m.lane, m.time_ms);
        write_paths[lane] += &format!("M{} {}v12", num(x(t) + 1.5), 16 * lane + 4);
    }
    write_paths.retain(|d| !d.is_empty());
    html! {
        <g>
            { for windows.map(|(a, b)| html! { <rect class="window" x={num(x(a))} y="0" width={num((x(b) - x(a)).max(1.0))} height={num(height)} /> }) }
            { for a.lanes.iter().enumerate().map(|(l, a)| html! {
                <text x="4" y={num(16.0 * l as f64 + 14.0)} class="lane">{actor_label(*a, sim)}</text>
            }) }
            // Writes are the many: one path per lane, not a node each.
            { for write_paths.into_iter().map(|d| html! { <path class="m-write-path" d={d} /> }) }
            // Every other marker is a button: the first takes Tab, arrows move along them in time
            // (a roving tabindex), Enter or Space jumps to its moment.
            { for a.markers.iter().filter(|m| m.kind != MarkerKind::Write).enumerate().map(|(k, m)| {
                let (i, lane, t) = (m.event, m.lane, m.time_ms);
                let jump = p.jump.clone();
                let onclick = Callback::from(move |_: MouseEvent| jump.emit(i));
                let jump = p.jump.clone();
                let onkeydown = Callback::from(move |e: KeyboardEvent| marker_key(&e, &jump, i));
                let e = &sim.trace[i as usize];
                let what = listwatch_core::describe(&e.kind, sim);
                let label = format!("{} {}: {}", clock(t), actor_label(e.actor, sim), what);
                html! { <rect class={classes!("mark", m.kind.css_class())} x={num(x(t))} y={num(16.0 * lane as f64 + 4.0)} width="3" height="12"
                    tabindex={if k == 0 { "0" } else { "-1" }} role="button" aria-label={label} data-time={clock(t)} {onclick} {onkeydown}>
                    <title>{what}</title></rect> }
            }) }
        </g>
    }
}

fn is_mark(el: &web_sys::Element) -> bool {
    el.get_attribute("class")
        .is_some_and(|c| c.split(' ').any(|c| c == "mark"))
}

/// A marker's keys: Enter or Space jumps to its moment; arrows, Home and End move the focus along
/// the markers (only the focused one is in the Tab order).
fn marker_key(e: &KeyboardEvent, jump: &Callback<u32>, i: u32) {
    let key = e.key();
    if key == "Enter" || key == " " {
        e.prevent_default();
        e.stop_propagation();
        jump.emit(i);
        return;
    }
    let Some(here) = e
        .target()
        .and_then(|t| wasm_bindgen::JsCast::dyn_into::<web_sys::Element>(t).ok())
    else {
        return;
    };
    let step = |el: &web_sys::Element, forward: bool| {
        if forward {
            el.next_element_sibling()
        } else {
            el.previous_element_sibling()
        }
        .filter(is_mark)
    };
    let to = match key.as_str() {
        "ArrowRight" | "ArrowDown" => step(&here, true),
        "ArrowLeft" | "ArrowUp" => step(&here, false),
        "Home" | "End" => {
            let forward = key == "End";
            let mut el = here.clone();
            while let Some(next) = step(&el, forward) {
                el = next;
            }
            Some(el)
        }
        _ => return,
    };
    e.prevent_default();
    e.stop_propagation();
    if let Some(to) = to {
        let _ = here.set_attribute("tabindex", "-1");
        let _ = to.set_attribute("tabindex", "0");
        // SVG elements have focus() too; web-sys only binds it on HtmlElement.
        if let Ok(f) = web_sys::js_sys::Reflect::get(&to, &"focus".into()) {
            if let Ok(f) = wasm_bindgen::JsCast::dyn_into::<web_sys::js_sys::Function>(f) {
                let _ = f.call0(&to);
            }
        }
    }
}

#[function_component(TimelineView)]
pub fn timeline_view(p: &Props) -> Html {
    let jump = {
        let dispatch = p.state.dispatcher();
        use_callback((), move |i: u32, _| dispatch.dispatch(Action::JumpTo(i)))
    };
    let Some(run) = p.state.run.clone() else {
        return html! {};
    };
    let end = run.sim.now_ms().max(1) as f64;
    let height = 16.0 * run.analysis.lanes.len().max(1) as f64 + 10.0;
    let now = x_of(p.state.now_ms(), end);
    html! {
        <svg data-testid="timeline" class="timeline" viewBox={format!("0 0 {} {}", num(WIDTH), num(height))} width="100%" role="group" aria-label="Timeline: Tab to its markers, arrows move between them, Enter jumps to one">
            <Marks run={run.clone()} {jump} />
            <line class="now" x1={num(now)} x2={num(now)} y1="0" y2={num(height)} />
        </svg>
    }
}
