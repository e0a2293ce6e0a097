//! Swimlanes per actor under the view: markers for 410s, relists, reconciles and writes, fault
//! windows shaded, narration at its moment, and a line at the current moment. The wheel, a pinch
//! or the zoom buttons narrow it to a window of the run; the window follows the clock.

use gloo_events::{EventListener, EventListenerOptions};
use listwatch_core::analysis::MarkerKind;
use listwatch_core::{actor_label, DurationMs, TimeMs};
use wasm_bindgen::JsCast;
use yew::prelude::*;

use std::cell::RefCell;
use std::rc::Rc;

use super::{clock, num};
use crate::state::{Loaded, Moment};

#[derive(Properties, PartialEq)]
pub struct Props {
    pub run: Rc<Loaded>,
    /// The moment on screen, in virtual time.
    pub now_ms: TimeMs,
    /// A marker clicked is jumped to (`Moment::JumpTo`).
    pub on_moment: Callback<Moment>,
}

const WIDTH: f64 = 900.0;
const LABEL_W: f64 = 150.0;
/// A lane's height, and a marker's within it.
const LANE_H: f64 = 20.0;
const MARK_H: f64 = 14.0;

fn lane_y(lane: usize) -> f64 {
    LANE_H * lane as f64 + (LANE_H - MARK_H) / 2.0 + 2.0
}

#[derive(Properties, PartialEq)]
struct MarksProps {
    run: Rc<Loaded>,
    span: Span,
    jump: Callback<u32>,
}

/// Lanes, windows and markers: they change only with the run and the window, so seeking within
/// the window never re-renders them.
#[function_component(Marks)]
fn marks(p: &MarksProps) -> Html {
    let sim = &p.run.sim;
    let span = p.span;
    let a = &p.run.analysis;
    let height = LANE_H * a.lanes.len().max(1) as f64 + 10.0;
    // Zoomed, the window's own markers (a long run shows only its first ones whole).
    let zoomed;
    let markers = if span.is_all(sim.now_ms()) {
        &a.markers
    } else {
        zoomed = a.markers_in(sim, span.from_ms, span.to_ms);
        &zoomed
    };
    // Fault windows: disconnects, and caches paused until they resume (or the end).
    let windows = a
        .windows
        .iter()
        .filter(|w| w.end_ms >= span.from_ms && w.start_ms <= span.to_ms)
        .map(|w| (w.start_ms.max(span.from_ms), w.end_ms.min(span.to_ms)));
    let mut write_paths = vec![String::new(); a.lanes.len()];
    for m in markers
        .iter()
        .filter(|m| m.kind == MarkerKind::Write && span.contains(m.time_ms))
    {
        write_paths[m.lane] += &format!(
            "M{} {}v{}",
            num(span.x(m.time_ms) + 1.5),
            num(lane_y(m.lane)),
            num(MARK_H)
        );
    }
    write_paths.retain(|d| !d.is_empty());
    html! {
        <g>
            { for windows.map(|(a, b)| html! { <rect class="window" x={num(span.x(a))} y="0" width={num((span.x(b) - span.x(a)).max(1.0))} height={num(height)} /> }) }
            { for a.lanes.iter().enumerate().map(|(l, a)| html! {
                <text x="4" y={num(LANE_H * l as f64 + 15.0)} class="lane">{actor_label(*a, sim)}</text>
            }) }
            // Writes are the many: one path per lane, not a node each.
            { for write_paths.into_iter().map(|d| html! { <path class="m-write-path" d={d} /> }) }
            // Every other marker is a button: the first takes Tab, arrows move along them in time
            // (a roving tabindex), Enter or Space jumps to its moment.
            { for markers.iter().filter(|m| m.kind != MarkerKind::Write && span.contains(m.time_ms)).enumerate().map(|(k, m)| {
                let (i, lane, t) = (m.event, m.lane, m.time_ms);
                let jump = p.jump.clone();
                let onclick = Callback::from(move |_: MouseEvent| jump.emit(i));
                let jump = p.jump.clone();
                let onkeydown = Callback::from(move |e: KeyboardEvent| marker_key(&e, &jump, i));
                let e = &sim.trace()[i as usize];
                let what = listwatch_core::describe(&e.kind, sim);
                let label = format!("{} {}: {}", clock(t), actor_label(e.actor, sim), what);
                html! { <rect key={i} class={classes!("mark", m.kind.css_class())} x={num(span.x(t))} y={num(lane_y(lane))} width="3" height={num(MARK_H)}
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
        focus(&to);
    }
}

/// Focus stays in the timeline: on its first marker in the Tab order, else on the timeline.
fn keep_focus(svg: &NodeRef, had: Option<web_sys::Element>) {
    let Some(el) = svg.cast::<web_sys::Element>() else {
        return;
    };
    let active = el.owner_document().and_then(|d| d.active_element());
    // Somewhere else on the page by now (a click, a Tab): leave it there.
    if !active.is_some_and(|a| el.contains(Some(&a))) {
        return;
    }
    // The marker that had the focus, if the new window still shows it; else the window's first.
    let to = had
        .filter(|m| m.is_connected() && el.contains(Some(m)))
        .or_else(|| el.query_selector(".mark[tabindex=\"0\"]").ok().flatten())
        .unwrap_or(el);
    focus(&to);
}

/// SVG elements have focus() too; web-sys only binds it on HtmlElement.
fn focus(el: &web_sys::Element) {
    if let Ok(f) = web_sys::js_sys::Reflect::get(el, &"focus".into()) {
        if let Ok(f) = f.dyn_into::<web_sys::js_sys::Function>() {
            let _ = f.call0(el);
        }
    }
}

/// What the wheel and touch listeners read: the window on screen and the run's end.
#[derive(Clone, Copy)]
struct Shown {
    span: Span,
    end_ms: TimeMs,
}

/// A pinch under way: the fingers' first distance, their middle (in SVG units), the window then.
#[derive(Clone, Copy)]
struct Pinch {
    distance: f64,
    middle_x: f64,
    span: Span,
}

/// The SVG's x of a client x.
fn svg_x(el: &web_sys::Element, client_x: f64) -> f64 {
    let r = el.get_bounding_client_rect();
    if r.width() <= 0.0 {
        return LABEL_W;
    }
    (client_x - r.left()) / r.width() * WIDTH
}

/// The wheel zooms around the pointer (a trackpad's pinch arrives as a wheel with Ctrl);
/// sideways or with Shift it pans. The page scrolls on when there is nothing more to zoom.
fn on_wheel(
    el: &web_sys::Element,
    e: &web_sys::WheelEvent,
    shown: Shown,
    set: &UseStateSetter<Option<Span>>,
) {
    let s = shown.span;
    let (dx, dy) = (e.delta_x(), e.delta_y());
    let next = if e.shift_key() || dx.abs() > dy.abs() {
        let d = if dx.abs() > dy.abs() { dx } else { dy };
        let r = el.get_bounding_client_rect().width().max(1.0);
        let width_ms = DurationMs::between(s.from_ms, s.to_ms).ms();
        s.panned((d / r * width_ms as f64) as i64, shown.end_ms)
    } else {
        let factor = 1.0 + (dy / 400.0).clamp(-0.5, 1.0);
        s.zoomed(factor, s.t_at(svg_x(el, e.client_x() as f64)), shown.end_ms)
    };
    if next != s {
        e.prevent_default();
        set.set(Some(next));
    }
}

fn two_fingers(e: &web_sys::TouchEvent) -> Option<(web_sys::Touch, web_sys::Touch)> {
    let t = e.touches();
    (t.length() == 2).then(|| t.get(0).zip(t.get(1))).flatten()
}

fn distance(a: &web_sys::Touch, b: &web_sys::Touch) -> f64 {
    let (dx, dy) = (
        (a.client_x() - b.client_x()) as f64,
        (a.client_y() - b.client_y()) as f64,
    );
    (dx * dx + dy * dy).sqrt().max(1.0)
}

/// The wheel, pinch and touch listeners: not Yew's (it registers wheel and touch listeners as
/// passive, so they could not keep the page from scrolling or zooming).
fn listen(
    el: &web_sys::Element,
    shown: Rc<RefCell<Shown>>,
    set: UseStateSetter<Option<Span>>,
) -> [EventListener; 3] {
    let opts = EventListenerOptions::enable_prevent_default();
    let pinch: Rc<RefCell<Option<Pinch>>> = Rc::default();
    let wheel = {
        let (el2, shown, set) = (el.clone(), shown.clone(), set.clone());
        EventListener::new_with_options(el, "wheel", opts, move |e| {
            if let Some(e) = e.dyn_ref::<web_sys::WheelEvent>() {
                on_wheel(&el2, e, *shown.borrow(), &set);
            }
        })
    };
    let start = {
        let (el2, shown, pinch) = (el.clone(), shown.clone(), pinch.clone());
        EventListener::new_with_options(el, "touchstart", opts, move |e| {
            let Some(e) = e.dyn_ref::<web_sys::TouchEvent>() else {
                return;
            };
            *pinch.borrow_mut() = two_fingers(e).map(|(a, b)| Pinch {
                distance: distance(&a, &b),
                middle_x: svg_x(&el2, (a.client_x() + b.client_x()) as f64 / 2.0),
                span: shown.borrow().span,
            });
        })
    };
    let moved = EventListener::new_with_options(el, "touchmove", opts, move |e| {
        let Some(e) = e.dyn_ref::<web_sys::TouchEvent>() else {
            return;
        };
        let (Some(p), Some((a, b))) = (*pinch.borrow(), two_fingers(e)) else {
            return;
        };
        e.prevent_default();
        let end_ms = shown.borrow().end_ms;
        set.set(Some(p.span.zoomed(
            p.distance / distance(&a, &b),
            p.span.t_at(p.middle_x),
            end_ms,
        )));
    });
    [wheel, start, moved]
}

/// The window on screen: `None` stored is the whole run. A new run (an edit, a fault added by
/// hand) keeps the window while it fits; following the clock moves the stored window too, so it
/// moves once per window (and the markers are redrawn then), not on every tick.
#[hook]
fn use_zoom(run: Rc<Loaded>, now_ms: TimeMs) -> (UseStateSetter<Option<Span>>, Span) {
    let end_ms = run.sim.now_ms().max(TimeMs(1));
    let zoom = use_state_eq(|| None::<Span>);
    {
        let (set, stored) = (zoom.setter(), *zoom);
        use_effect_with(run, move |_| {
            if stored.is_some_and(|z| z.to_ms > end_ms) {
                set.set(None);
            }
        });
    }
    let span = zoom
        .map(|s| s.within(end_ms).showing(now_ms, end_ms))
        .unwrap_or(Span::all(end_ms));
    {
        let (set, stored) = (zoom.setter(), *zoom);
        use_effect_with(span, move |s| {
            if stored.is_some_and(|z| z != *s) {
                set.set(Some(*s));
            }
        });
    }
    (zoom.setter(), span)
}

/// The window after a zoom key (`+`, `-`, `0`), around the clock.
fn zoom_key(key: &str, span: Span, now_ms: TimeMs, end_ms: TimeMs) -> Option<Option<Span>> {
    match key {
        "+" | "=" => Some(Some(span.zoomed(0.5, now_ms, end_ms))),
        "-" | "_" => Some(Some(span.zoomed(2.0, now_ms, end_ms))),
        "0" => Some(None),
        _ => None,
    }
}

/// What the window shows, and the buttons that zoom it around the clock.
fn zoom_bar(
    span: Span,
    now_ms: TimeMs,
    end_ms: TimeMs,
    set: &UseStateSetter<Option<Span>>,
) -> Html {
    let to = |next: Option<Span>| {
        let set = set.clone();
        Callback::from(move |_: MouseEvent| set.set(next))
    };
    let all = span.is_all(end_ms);
    let shown = if all {
        format!("the whole run, 0s to {}", clock(end_ms))
    } else {
        format!(
            "{} to {} of {}",
            clock(span.from_ms),
            clock(span.to_ms),
            clock(end_ms)
        )
    };
    html! {
        <div class="timeline-bar" role="toolbar" aria-label="Timeline zoom">
            <span class="hint" data-testid="timeline-span" data-from-ms={span.from_ms.ms().to_string()} data-to-ms={span.to_ms.ms().to_string()}>{shown}</span>
            <button data-testid="timeline-zoom-in" aria-label="Zoom the timeline in (around the clock)" title="Zoom in (+, wheel, pinch)"
                disabled={DurationMs::between(span.from_ms, span.to_ms) <= SPAN_MIN_MS} onclick={to(Some(span.zoomed(0.5, now_ms, end_ms)))}>{"+"}</button>
            <button data-testid="timeline-zoom-out" aria-label="Zoom the timeline out" title="Zoom out (-)" disabled={all}
                onclick={to(Some(span.zoomed(2.0, now_ms, end_ms)))}>{"−"}</button>
            <button data-testid="timeline-zoom-all" aria-label="Show the whole run on the timeline" title="Whole run (0)" disabled={all}
                onclick={to(None)}>{"Whole run"}</button>
        </div>
    }
}

#[function_component(TimelineView)]
pub fn timeline_view(p: &Props) -> Html {
    let jump = {
        let on = p.on_moment.clone();
        use_callback((), move |i: u32, _| on.emit(Moment::JumpTo(i)))
    };
    let run = p.run.clone();
    let end_ms = run.sim.now_ms().max(TimeMs(1));
    let (set, span) = use_zoom(run.clone(), p.now_ms);
    let shown = use_mut_ref(|| Shown { span, end_ms });
    *shown.borrow_mut() = Shown { span, end_ms };
    let svg = use_node_ref();
    {
        let (svg, shown, set) = (svg.clone(), shown.clone(), set.clone());
        super::use_mount(Box::new(move || {
            let listeners = svg
                .cast::<web_sys::Element>()
                .map(|el| listen(&el, shown, set));
            Box::new(move || drop(listeners))
        }));
    }
    // A zoom key redraws the markers: the one that had the focus may be outside the new window.
    // Once redrawn (a task later), the focus goes back to that marker if it is still shown,
    // else to the window's first marker (or the timeline), so the next key still reaches it.
    let onkeydown = {
        let (set, now, svg) = (set.clone(), p.now_ms, svg.clone());
        Callback::from(move |e: KeyboardEvent| {
            if let Some(next) = zoom_key(&e.key(), span, now, end_ms) {
                e.prevent_default();
                // The focused marker may leave the window with this redraw, and a removed
                // element drops the focus to the body: hold it on the timeline itself until
                // the markers are redrawn, so a key pressed meanwhile still reaches it.
                let had = svg
                    .cast::<web_sys::Element>()
                    .and_then(|el| el.owner_document())
                    .and_then(|d| d.active_element());
                if let Some(el) = svg.cast::<web_sys::Element>() {
                    focus(&el);
                }
                set.set(next);
                let svg = svg.clone();
                gloo_timers::callback::Timeout::new(0, move || keep_focus(&svg, had)).forget();
            }
        })
    };
    let height = LANE_H * run.analysis.lanes.len().max(1) as f64 + 10.0;
    let now = span.x(p.now_ms.clamp(span.from_ms, span.to_ms));
    html! {
        <div class="timeline-box">
            { zoom_bar(span, p.now_ms, end_ms, &set) }
            <svg ref={svg} data-testid="timeline" class="timeline" viewBox={format!("0 0 {} {}", num(WIDTH), num(height))} width="100%" role="group" tabindex="-1" {onkeydown}
                aria-label="Timeline: Tab to its markers, arrows move between them, Enter jumps to one; + and - zoom">
                <Marks run={run.clone()} {span} {jump} />
                <line class="now" x1={num(now)} x2={num(now)} y1="0" y2={num(height)} />
            </svg>
        </div>
    }
}

/// The part of the run the timeline shows, in virtual time: all of it, or a zoomed window. Its
/// pixel mapping works in whole milliseconds.
#[derive(Clone, Copy, PartialEq, Debug)]
pub struct Span {
    pub from_ms: TimeMs,
    pub to_ms: TimeMs,
}

/// The narrowest window a zoom reaches: 20 ms of virtual time.
const SPAN_MIN_MS: DurationMs = DurationMs(20);

impl Span {
    pub fn all(end_ms: TimeMs) -> Span {
        Span {
            from_ms: TimeMs::ZERO,
            to_ms: end_ms.max(TimeMs(1)),
        }
    }
    fn width_ms(self) -> DurationMs {
        DurationMs::between(self.from_ms, self.to_ms).max(DurationMs(1))
    }
    /// Zoomed by `factor` (below 1 zooms in) around the moment `at_ms`, within the run's end.
    pub fn zoomed(self, factor: f64, at_ms: TimeMs, end_ms: TimeMs) -> Span {
        let end = end_ms.ms().max(1);
        let width_ms = self.width_ms().ms();
        let width =
            ((width_ms as f64 * factor + 0.5).floor() as u64).clamp(SPAN_MIN_MS.ms().min(end), end);
        let at = at_ms.clamp(self.from_ms, self.to_ms).ms();
        // The moment under the pointer stays where it is on screen.
        let left = (at - self.from_ms.ms()) as f64 / width_ms as f64;
        let from = TimeMs((at as f64 - left * width as f64 + 0.5).floor().max(0.0) as u64);
        Span {
            from_ms: from,
            to_ms: from + DurationMs(width),
        }
        .within(end_ms)
    }
    /// Moved by `delta_ms` (negative: earlier), within the run.
    pub fn panned(self, delta_ms: i64, end_ms: TimeMs) -> Span {
        let from = TimeMs((self.from_ms.ms() as i64 + delta_ms).max(0) as u64);
        Span {
            from_ms: from,
            to_ms: from + self.width_ms(),
        }
        .within(end_ms)
    }
    /// Shifted (not resized) so that it ends by the run's end.
    fn within(self, end_ms: TimeMs) -> Span {
        let end = end_ms.max(TimeMs(1));
        let w = self.width_ms().min(DurationMs::between(TimeMs::ZERO, end));
        let from = self.from_ms.min(end - w);
        Span {
            from_ms: from,
            to_ms: from + w,
        }
    }
    /// Shifted so that `t` is on screen (time travel outside a zoomed window follows the clock).
    pub fn showing(self, t: TimeMs, end_ms: TimeMs) -> Span {
        if t >= self.from_ms && t <= self.to_ms {
            return self;
        }
        // The clock a quarter in: playing forward, the window moves once per three quarters.
        let w = self.width_ms();
        let from = t.saturating_sub(w / 4);
        Span {
            from_ms: from,
            to_ms: from + w,
        }
        .within(end_ms)
    }
    pub fn is_all(self, end_ms: TimeMs) -> bool {
        self.from_ms == TimeMs::ZERO && self.to_ms >= end_ms.max(TimeMs(1))
    }
    fn x(self, t: TimeMs) -> f64 {
        LABEL_W
            + (WIDTH - LABEL_W - 10.0) * (t.ms() as f64 - self.from_ms.ms() as f64)
                / self.width_ms().ms() as f64
    }
    /// The moment at `x` in the SVG's units.
    fn t_at(self, x: f64) -> TimeMs {
        let f = ((x - LABEL_W) / (WIDTH - LABEL_W - 10.0)).clamp(0.0, 1.0);
        self.from_ms + DurationMs((f * self.width_ms().ms() as f64 + 0.5).floor() as u64)
    }
    fn contains(self, t: TimeMs) -> bool {
        t >= self.from_ms && t <= self.to_ms
    }
}

#[cfg(test)]
mod span_tests {
    use super::Span;
    use listwatch_core::TimeMs;
    use wasm_bindgen_test::*;

    #[wasm_bindgen_test]
    fn zooming_keeps_the_moment_under_the_pointer_and_stays_in_the_run() {
        let end = TimeMs(10_000);
        let all = Span::all(end);
        let z = all.zoomed(0.5, TimeMs(2_000), end);
        assert_eq!((z.from_ms, z.to_ms), (TimeMs(1_000), TimeMs(6_000)));
        // Zooming out past the whole run gives the whole run.
        assert_eq!(z.zoomed(4.0, TimeMs(3_000), end), all);
        // Never narrower than 20 ms, never past the end.
        let mut s = all;
        for _ in 0..40 {
            s = s.zoomed(0.5, TimeMs(9_999), end);
        }
        assert_eq!(s.to_ms.ms() - s.from_ms.ms(), 20);
        assert!(s.to_ms <= end);
        assert_eq!(s.panned(1_000_000, end).to_ms, end);
        assert_eq!(s.panned(-1_000_000, end).from_ms, TimeMs::ZERO);
        // The clock outside the window brings the window to it.
        let z = Span {
            from_ms: TimeMs::ZERO,
            to_ms: TimeMs(1_000),
        };
        assert!(z.showing(TimeMs(5_000), end).contains(TimeMs(5_000)));
        assert_eq!(z.showing(TimeMs(500), end), z);
    }
}
