//! Swimlanes per actor under the view: markers for 410s, relists, reconciles and writes, fault
//! windows shaded, narration at its moment, and a line at the current moment.

use listwatch_core::{actor_label, Actor, EventKind};
use yew::prelude::*;

use crate::state::{Action, State};

#[derive(Properties, PartialEq)]
pub struct Props {
    pub state: UseReducerHandle<State>,
}

const MAX_MARKERS: usize = 4000;

fn marker_class(kind: &EventKind) -> Option<&'static str> {
    match kind {
        EventKind::WatchFailed { error, .. } if error.code() == 410 => Some("m-gone"),
        EventKind::ListRequest { relist: true, .. }
        | EventKind::WatchListRequest { relist: true, .. } => Some("m-relist"),
        EventKind::ReconcileStart { .. } => Some("m-reconcile"),
        EventKind::Write { .. } => Some("m-write"),
        EventKind::Crash { .. }
        | EventKind::Disconnect { .. }
        | EventKind::CachePaused { .. }
        | EventKind::ApiserverRestart { .. }
        | EventKind::EventDropped { .. } => Some("m-fault"),
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

#[function_component(TimelineView)]
pub fn timeline_view(p: &Props) -> Html {
    let Some(run) = p.state.run.clone() else {
        return html! {};
    };
    let sim = &run.sim;
    let end = sim.now_ms.max(1) as f64;
    let (lanes, marks) = (&run.lanes, &run.markers);
    let width = 900.0;
    let label_w = 150.0;
    let x = |t: u64| label_w + (width - label_w - 10.0) * t as f64 / end;
    let height = 16.0 * lanes.len().max(1) as f64 + 10.0;
    let now = p.state.view().map(|v| v.time_ms).unwrap_or(0);
    // Disconnect windows, shaded (from the markers: disconnects are fault markers).
    let windows = marks.iter().filter_map(|&(i, ..)| match sim.trace[i].kind {
        EventKind::Disconnect { until_ms, .. } => {
            Some((sim.trace[i].time_ms, until_ms.max(sim.trace[i].time_ms + 1)))
        }
        _ => None,
    });
    html! {
        <svg data-testid="timeline" class="timeline" viewBox={format!("0 0 {width} {height}")} width="100%" role="img" aria-label="Timeline">
            { for windows.map(|(a, b)| html! { <rect class="window" x={x(a).to_string()} y="0" width={(x(b) - x(a)).max(1.0).to_string()} height={height.to_string()} /> }) }
            { for lanes.iter().enumerate().map(|(l, a)| html! {
                <text x="4" y={(16.0 * l as f64 + 14.0).to_string()} class="lane">{actor_label(*a, sim)}</text>
            }) }
            { for marks.iter().map(|&(i, lane, class, t)| {
                let st = p.state.clone();
                let onclick = Callback::from(move |_: MouseEvent| st.dispatch(Action::JumpTo(i as u32)));
                html! { <rect class={classes!("mark", class)} x={format!("{:.1}", x(t))} y={(16.0 * lane as f64 + 4.0).to_string()} width="3" height="12" {onclick}>
                    <title>{listwatch_core::describe(&sim.trace[i].kind, sim)}</title></rect> }
            }) }
            <line class="now" x1={x(now).to_string()} x2={x(now).to_string()} y1="0" y2={height.to_string()} />
        </svg>
    }
}
