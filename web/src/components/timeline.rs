//! Swimlanes per actor under the view: markers for 410s, relists, reconciles and writes, fault
//! windows shaded, narration at its moment, and a line at the current moment.

use listwatch_core::{actor_label, Actor, EventKind};
use yew::prelude::*;

use std::rc::Rc;

use crate::state::{Action, Loaded, State};

#[derive(Properties, PartialEq)]
pub struct Props {
    pub run: Rc<Loaded>,
    /// The moment on screen, in virtual time.
    pub now_ms: u64,
    pub dispatch: UseReducerDispatcher<State>,
}

const MAX_MARKERS: usize = 4000;

fn marker_class(kind: &EventKind) -> Option<&'static str> {
    match kind {
        k if k.gone().is_some() => Some("m-gone"),
        k if k.is_relist() => Some("m-relist"),
        EventKind::ReconcileStart { .. } => Some("m-reconcile"),
        EventKind::Write { .. } => Some("m-write"),
        EventKind::Crash { .. }
        | EventKind::Disconnect { .. }
        | EventKind::CachePaused { .. }
        | EventKind::ApiserverRestart { .. }
        | EventKind::HoldArmed { .. } => Some("m-fault"),
        EventKind::Say { .. } => Some("m-say"),
        _ => None,
    }
}

/// The lanes and markers of a run, computed once when it loads.
#[allow(clippy::type_complexity)]
pub fn markers(sim: &listwatch_core::Sim) -> (Vec<Actor>, Vec<(usize, usize, &'static str, u64)>) {
    let mut lanes: Vec<Actor> = vec![];
    let mut marks = vec![];
    for (i, e) in sim.trace.iter().enumerate() {
        let Some(class) = marker_class(&e.kind) else {
            continue;
        };
        let lane = match lanes.iter().position(|a| *a == e.actor) {
            Some(l) => l,
            None => {
                lanes.push(e.actor);
                lanes.len() - 1
            }
        };
        if marks.len() < MAX_MARKERS || class == "m-gone" {
            marks.push((i, lane, class, e.time_ms));
        }
    }
    (lanes, marks)
}

const WIDTH: f64 = 900.0;
const LABEL_W: f64 = 150.0;

fn x_of(t: u64, end: f64) -> f64 {
    LABEL_W + (WIDTH - LABEL_W - 10.0) * t as f64 / end
}

#[derive(Properties, PartialEq)]
struct MarksProps {
    run: Rc<Loaded>,
    jump: Callback<u32>,
}

/// Lanes, windows and markers: they change only with the run, so seeking never re-renders them.
#[function_component(Marks)]
fn marks(p: &MarksProps) -> Html {
    let sim = &p.run.sim;
    let end = sim.now_ms.max(1) as f64;
    let x = |t| x_of(t, end);
    let height = 16.0 * p.run.lanes.len().max(1) as f64 + 10.0;
    // Fault windows: disconnects, and caches paused until they resume (or the end).
    let mut windows: Vec<(u64, u64)> = vec![];
    let mut paused_since: Vec<Option<u64>> = vec![None; sim.config.apiservers.len()];
    for &(i, ..) in p.run.markers.iter() {
        let e = &sim.trace[i];
        match e.kind {
            EventKind::Disconnect { until_ms, .. } => {
                windows.push((e.time_ms, until_ms.max(e.time_ms + 1)))
            }
            EventKind::CachePaused {
                apiserver,
                paused: true,
            } => paused_since[apiserver.index()] = Some(e.time_ms),
            EventKind::CachePaused {
                apiserver,
                paused: false,
            } => {
                if let Some(t) = paused_since[apiserver.index()].take() {
                    windows.push((t, e.time_ms.max(t + 1)));
                }
            }
            _ => {}
        }
    }
    windows.extend(
        paused_since
            .into_iter()
            .flatten()
            .map(|t| (t, sim.now_ms.max(t + 1))),
    );
    let mut write_paths = vec![String::new(); p.run.lanes.len()];
    for &(_, lane, class, t) in p.run.markers.iter() {
        if class == "m-write" {
            write_paths[lane] += &format!("M{:.1} {:.0}v12", x(t) + 1.5, 16.0 * lane as f64 + 4.0);
        }
    }
    write_paths.retain(|d| !d.is_empty());
    html! {
        <g>
            { for windows.into_iter().map(|(a, b)| html! { <rect class="window" x={x(a).to_string()} y="0" width={(x(b) - x(a)).max(1.0).to_string()} height={height.to_string()} /> }) }
            { for p.run.lanes.iter().enumerate().map(|(l, a)| html! {
                <text x="4" y={(16.0 * l as f64 + 14.0).to_string()} class="lane">{actor_label(*a, sim)}</text>
            }) }
            // Writes are the many: one path per lane, not a node each.
            { for write_paths.into_iter().map(|d| html! { <path class="m-write-path" d={d} /> }) }
            { for p.run.markers.iter().filter(|m| m.2 != "m-write").map(|&(i, lane, class, t)| {
                let jump = p.jump.clone();
                let onclick = Callback::from(move |_: MouseEvent| jump.emit(i as u32));
                html! { <rect class={classes!("mark", class)} x={format!("{:.1}", x(t))} y={(16.0 * lane as f64 + 4.0).to_string()} width="3" height="12" {onclick}>
                    <title>{listwatch_core::describe(&sim.trace[i].kind, sim)}</title></rect> }
            }) }
        </g>
    }
}

#[function_component(TimelineView)]
pub fn timeline_view(p: &Props) -> Html {
    let jump = {
        let dispatch = p.dispatch.clone();
        use_callback((), move |i: u32, _| dispatch.dispatch(Action::JumpTo(i)))
    };
    let run = p.run.clone();
    let end = run.sim.now_ms.max(1) as f64;
    let height = 16.0 * run.lanes.len().max(1) as f64 + 10.0;
    let now = x_of(p.now_ms, end);
    html! {
        <svg data-testid="timeline" class="timeline" viewBox={format!("0 0 {WIDTH} {height}")} width="100%" role="img" aria-label="Timeline">
            <Marks run={run.clone()} {jump} />
            <line class="now" x1={now.to_string()} x2={now.to_string()} y1="0" y2={height.to_string()} />
        </svg>
    }
}
