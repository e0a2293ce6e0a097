//! Swimlanes per actor under the view: markers for 410s, relists, reconciles and writes, fault
//! windows shaded, narration at its moment, and a line at the current moment.

use listwatch_core::actor_label;
use listwatch_core::analysis::MarkerKind;
use yew::prelude::*;

use std::rc::Rc;

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
        write_paths[lane] += &format!("M{:.1} {:.0}v12", x(t) + 1.5, 16.0 * lane as f64 + 4.0);
    }
    write_paths.retain(|d| !d.is_empty());
    html! {
        <g>
            { for windows.map(|(a, b)| html! { <rect class="window" x={x(a).to_string()} y="0" width={(x(b) - x(a)).max(1.0).to_string()} height={height.to_string()} /> }) }
            { for a.lanes.iter().enumerate().map(|(l, a)| html! {
                <text x="4" y={(16.0 * l as f64 + 14.0).to_string()} class="lane">{actor_label(*a, sim)}</text>
            }) }
            // Writes are the many: one path per lane, not a node each.
            { for write_paths.into_iter().map(|d| html! { <path class="m-write-path" d={d} /> }) }
            { for a.markers.iter().filter(|m| m.kind != MarkerKind::Write).map(|m| {
                let (i, lane, t) = (m.event, m.lane, m.time_ms);
                let jump = p.jump.clone();
                let onclick = Callback::from(move |_: MouseEvent| jump.emit(i));
                html! { <rect class={classes!("mark", m.kind.css_class())} x={format!("{:.1}", x(t))} y={(16.0 * lane as f64 + 4.0).to_string()} width="3" height="12" {onclick}>
                    <title>{listwatch_core::describe(&sim.trace[i as usize].kind, sim)}</title></rect> }
            }) }
        </g>
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
        <svg data-testid="timeline" class="timeline" viewBox={format!("0 0 {WIDTH} {height}")} width="100%" role="img" aria-label="Timeline">
            <Marks run={run.clone()} {jump} />
            <line class="now" x1={now.to_string()} x2={now.to_string()} y1="0" y2={height.to_string()} />
        </svg>
    }
}
