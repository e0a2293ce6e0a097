//! The picture of the whole system at the current moment, as SVG: the apiservers and their watch
//! caches as rings of slots, each controller's watchers as the reflector state machine, and the
//! work queues.

use listwatch_core::{ReflectorEvent, StoreEvent};
use std::f64::consts::PI;
use std::rc::Rc;

use listwatch_core::analysis::{self, Direction};
use listwatch_core::view::View;
use listwatch_core::{DurationMs, EventKind, Labels, WatcherId, WatcherState};
use yew::prelude::*;

use super::layout::{self, Layout};
use super::{cos, num, sin};
use crate::state::{FaultTarget, Loaded};

/// The picture's state at one moment, shared and compared by identity: computed once per (run,
/// moment) by the page.
#[derive(Clone)]
pub struct ViewRef(pub Rc<View>);
impl PartialEq for ViewRef {
    fn eq(&self, o: &Self) -> bool {
        Rc::ptr_eq(&self.0, &o.0)
    }
}

#[derive(Properties)]
pub struct Props {
    pub run: Rc<Loaded>,
    pub view: ViewRef,
    pub cursor: usize,
    /// Where playback stands between events: the messages' places.
    pub motion: Motion,
    /// Opens the fault menu on a part of the picture (none in embeds).
    #[prop_or_default]
    pub on_fault: Option<Callback<FaultTarget>>,
}

/// What makes a part of the picture a control: focusable, named, clicked or Enter/Space.
struct Act {
    tabindex: Option<&'static str>,
    role: Option<&'static str>,
    label: Option<String>,
    onclick: Option<Callback<MouseEvent>>,
    onkeydown: Option<Callback<KeyboardEvent>>,
}

fn act(on: &Option<Callback<FaultTarget>>, t: FaultTarget, label: String) -> Act {
    let Some(on) = on.clone() else {
        return Act {
            tabindex: None,
            role: None,
            label: None,
            onclick: None,
            onkeydown: None,
        };
    };
    let on2 = on.clone();
    Act {
        tabindex: Some("0"),
        role: Some("button"),
        label: Some(label),
        onclick: Some(Callback::from(move |_: MouseEvent| on.emit(t))),
        onkeydown: Some(Callback::from(move |e: KeyboardEvent| {
            if e.key() == "Enter" || e.key() == " " {
                e.prevent_default();
                e.stop_propagation();
                on2.emit(t);
            }
        })),
    }
}
impl PartialEq for Props {
    fn eq(&self, o: &Self) -> bool {
        self.run == o.run
            && self.view == o.view
            && self.cursor == o.cursor
            && self.motion == o.motion
    }
}

/// The virtual clock on screen and the beat of the event on screen (`playback::Clock`), and
/// whether playback runs: while it does, every frame draws each message where it is; a step or
/// a seek moves them there by a CSS animation instead.
#[derive(Clone, Copy, PartialEq)]
pub struct Motion {
    pub at_ms: f64,
    pub beat: f64,
    pub playing: bool,
}

const STATES: [(WatcherState, &str); 4] = [
    (WatcherState::Empty, "Empty"),
    (WatcherState::InitListed, "Listed"),
    (WatcherState::Watching, "Watching"),
    (WatcherState::BackoffRelist, "Backoff"),
];

fn lit(state: WatcherState, box_state: WatcherState) -> bool {
    match box_state {
        WatcherState::Empty => matches!(state, WatcherState::Empty | WatcherState::Listing),
        WatcherState::BackoffRelist => matches!(
            state,
            WatcherState::BackoffRelist | WatcherState::BackoffRewatch
        ),
        s => s == state,
    }
}

/// What every part of the picture is drawn from.
struct Pic<'a> {
    sim: &'a listwatch_core::Sim,
    /// The run: the fields of each revision, for the tooltips.
    run: &'a crate::state::Loaded,
    analysis: &'a analysis::Analysis,
    v: &'a View,
    /// The event on screen, to flash what it touched.
    current: Option<(usize, &'a listwatch_core::Event)>,
    /// The messages in flight at the moment on screen, and the moment before it (the event
    /// before the one on screen): messages move from where they were then.
    flights: Vec<analysis::Flight>,
    before_ms: f64,
    motion: Motion,
    on_fault: &'a Option<Callback<FaultTarget>>,
    kinds: usize,
    /// Where each part goes.
    at: Layout,
}

#[function_component(SystemView)]
pub fn system_view(p: &Props) -> Html {
    let sim = &p.run.sim;
    let v = &*p.view.0;
    let kinds = sim.config().kinds.len();
    let apis = sim.config().apiservers.len();
    // As wide as what is drawn (rings, the watchers' rows and their links' lanes, up to three
    // queues a row), so a narrow screen scales the picture down no more than it must.
    let at = Layout::new(
        kinds * apis,
        sim.reflectors().len(),
        sim.config().controllers.len(),
    );
    let (width, height) = (at.width, at.height);
    let pic = Pic {
        sim,
        run: &p.run,
        analysis: &p.run.analysis,
        v,
        current: p
            .cursor
            .checked_sub(1)
            .and_then(|i| sim.trace().get(i).map(|e| (i, e))),
        flights: p.run.analysis.in_flight(
            sim,
            p.cursor,
            listwatch_core::TimeMs(p.motion.at_ms as u64).max(v.time_ms),
        ),
        before_ms: p
            .cursor
            .checked_sub(2)
            .map_or(0.0, |i| sim.trace()[i].time_ms.ms() as f64),
        motion: p.motion,
        on_fault: &p.on_fault,
        kinds,
        at,
    };
    let caches = (0..apis).flat_map(|a| (0..kinds).map(move |k| (a, k)));
    let picture = use_node_ref();
    let scrolls = use_scrolls(&picture, width);
    html! {
        <>
        // The picture keeps at least one pixel a unit (its smallest text stays 12 px): where
        // the screen is narrower, its box scrolls sideways and says so (style.css reads the
        // width from `--vbw`).
        if scrolls {
            <p class="scroll-hint" data-testid="picture-scrolls">{format!(
                "The picture is wider than the screen ({} caches, {} watchers): scroll it sideways ↔",
                kinds * apis, sim.reflectors().len())}</p>
        }
        <div class="picture" ref={picture} tabindex={scrolls.then_some("0")}
            role={scrolls.then_some("region")} aria-label={scrolls.then_some("The picture (scrolls sideways)")}>
        <svg class="system" style={format!("--vbw:{}px", num(width))} role="group"
            aria-label={if p.on_fault.is_some() { "The system at the current moment: choose a part to inject a fault" } else { "The system at the current moment" }} viewBox={format!("0 0 {} {}", num(width), num(height))} width="100%">
            <text x="20" y="18" class="rv">{format!("etcd revision {}", v.rv)}</text>
            { for (0..sim.reflectors().len()).map(|i| link_line(&pic, i)) }
            { for caches.map(|(a, k)| cache_ring(&pic, a, k)) }
            { for (0..sim.reflectors().len()).map(|i| watcher_row(&pic, i)) }
            { for (0..sim.config().controllers.len()).map(|i| queue_box(&pic, i)) }
            { for (0..sim.reflectors().len()).map(|i| link_messages(&pic, i)) }
        </svg>
        </div>
        </>
    }
}

/// Whether the picture's box scrolls sideways: checked when the picture's width changes and
/// whenever the window is resized.
#[hook]
fn use_scrolls(picture: &NodeRef, width: f64) -> bool {
    let scrolls = use_state_eq(|| false);
    {
        let (picture, scrolls) = (picture.clone(), scrolls.clone());
        use_effect_with(width as u64, move |_| {
            let check = move || {
                if let Some(el) = picture.cast::<web_sys::Element>() {
                    scrolls.set(el.scroll_width() > el.client_width() + 1);
                }
            };
            check();
            let listener = web_sys::window()
                .map(|w| gloo_events::EventListener::new(&w, "resize", move |_| check()));
            move || drop(listener)
        });
    }
    *scrolls
}

/// A 410 flashes until the watcher watches again (or for 1.5 s of virtual time).
fn recent_gone(pic: &Pic, w: WatcherId) -> bool {
    let (sim, v) = (pic.sim, pic.v);
    let wv = &v.watchers[w.index()];
    wv.last_error.is_some_and(|id| {
        let e = &sim.trace()[id as usize];
        DurationMs::between(e.time_ms, v.time_ms) < DurationMs(1500)
            && e.kind.gone().is_some()
            && wv.watching_since.is_none_or(|since| since < id)
    })
}

/// One apiserver's watch cache of one kind: a ring of slots.
fn cache_ring(pic: &Pic, a: usize, k: usize) -> Html {
    let (sim, v, current, kinds, ring_w) = (pic.sim, pic.v, pic.current, pic.kinds, pic.at.ring_w);
    let (api, kind) = (&sim.config().apiservers[a], &sim.config().kinds[k]);
    let i = a * kinds + k;
    let cx = pic.at.ring_cx(i);
    let cy = 105.0;
    let c = &v.caches[a][k];
    let cap = c.capacity.max(1) as usize;
    let slots = cap.min(64);
    let r = 52.0;
    let oldest = c.ring.front().map(|x| x.0);
    let newest = c.ring.back().map(|x| x.0);
    let fill = c.ring.len();
    let just_added = matches!(current, Some((_, e)) if matches!(e.kind, EventKind::Store(StoreEvent::CacheAdd { apiserver, kind, .. }) if apiserver.index() == a && kind.index() == k));
    let evicting = matches!(current, Some((_, e)) if matches!(e.kind, EventKind::Store(StoreEvent::CacheAdd { apiserver, kind, evicted, .. }) if apiserver.index() == a && kind.index() == k && evicted > 0));
    let mode = match kind.cache {
        listwatch_core::CacheMode::Fixed { .. } => "fixed",
        listwatch_core::CacheMode::Dynamic { .. } => "dynamic",
        listwatch_core::CacheMode::Off => "off",
    };
    let slot_nodes = (0..slots).map(|s| {
        let ang = 2.0 * PI * s as f64 / slots as f64 - PI / 2.0;
        let (x, y) = (cx + r * cos(ang), cy + r * sin(ang));
        // Slots fill in ring order: slot s holds the s-th buffered event (scaled when the
        // capacity exceeds the slots drawn).
        let filled = s * cap / slots < fill;
        let newest_slot = filled && (s + 1) * cap / slots >= fill;
        let class = classes!("slot", filled.then_some("filled"), (newest_slot && just_added).then_some("entering"));
        // Small rings show each buffered RV beside its slot.
        let label = (cap <= 8 && filled).then(|| c.ring.get(s).map(|e| e.0)).flatten();
        let (lx, ly) = (cx + (r - 17.0) * cos(ang), cy + (r - 17.0) * sin(ang) + 4.0);
        // The buffered event's object, with its fields, on hover (a slot drawn for several
        // buffered events names the first of them).
        let tip = filled.then(|| c.ring.get(s * cap / slots)).flatten().map(|&(rv, name)| {
            let fields = pic.run.fields_at(rv).map(|f| format!(" · {f}")).unwrap_or_default();
            format!("rv {rv}: {} {}{fields}", kind.name, sim.names().resolve(name))
        });
        html! { <g>
            <circle class={class} cx={num(x)} cy={num(y)} r={num((160.0 / slots as f64).clamp(2.5, 9.0))}>
                if let Some(t) = tip { <title>{t}</title> }
            </circle>
            if let Some(rv) = label { <text class="slot-rv" x={num(lx)} y={num(ly)} text-anchor="middle">{rv}</text> }
        </g> }
    });
    // What this addition evicted has left the ring: a red slot just outside it, before its
    // oldest slot, and its RV in the line under the ring.
    let evicted = (evicting && !c.evicted_last.is_empty()).then(|| {
        let ang = -PI / 2.0 - PI / 9.0;
        let (x, y) = (cx + (r + 10.0) * cos(ang), cy + (r + 10.0) * sin(ang));
        let rvs: Vec<String> = c.evicted_last.iter().map(|rv| rv.to_string()).collect();
        let more = c.evicted_last.len().saturating_sub(1);
        html! { <g data-testid="evicted" data-rv={rvs.join(",")}>
            <circle class="slot evicting" cx={num(x)} cy={num(y)} r="6" />
            <text x={num(cx)} y={num(cy + 88.0)} text-anchor="middle" class="ring-sub gone-text">
                {format!("{} evicted: rv {}{}", c.evicted_total, rvs[0], if more > 0 { format!(" +{more}") } else { String::new() })}
            </text>
        </g> }
    });
    let named_evicted = evicted.is_some();
    let ac = act(
        pic.on_fault,
        FaultTarget::Apiserver(a, k),
        format!("Faults for apiserver {} ({} cache)", api.name, kind.name),
    );
    html! {
        <g data-testid="watch-cache" data-kind={kind.name.clone()} data-apiserver={api.name.clone()}
            onclick={ac.onclick}
            data-capacity={c.capacity.to_string()} data-size={c.ring.len().to_string()}
            data-oldest-rv={oldest.map(|x| x.to_string()).unwrap_or_default()}
            class={classes!("cache", c.paused.then_some("paused"), (!c.ready).then_some("not-ready"))}>
            <rect class="hit" tabindex={ac.tabindex} role={ac.role} aria-label={ac.label.clone()} onkeydown={ac.onkeydown.clone()} x={num(cx - ring_w / 2.0 + 4.0)} y="24" width={num(ring_w - 8.0)} height="190" rx="6" />
            <text class="cache-title" x={num(cx)} y="36" text-anchor="middle">{fit(&format!("{} · {}", api.name, kind.name), ((ring_w - 12.0) / 7.4) as usize)}<title>{format!("apiserver {} · watch cache of {}", api.name, kind.name)}</title></text>
            { for slot_nodes }
            { for evicted }
            // Only a short fill count in the ring, so the slots' RVs around it never touch it.
            <text x={num(cx)} y={num(cy + 4.0)} text-anchor="middle" class="ring-label">{format!("{}/{}", c.ring.len(), c.capacity)}</text>
            <text x={num(cx)} y={num(cy + 72.0)} text-anchor="middle" class="ring-sub">
                { match (oldest, newest) { (Some(o), Some(n)) => format!("{mode} · rv {o}…{n}"), _ => format!("{mode} · empty") } }
            </text>
            if c.evicted_total > 0 && !named_evicted {
                <text x={num(cx)} y={num(cy + 88.0)} text-anchor="middle" class="ring-sub">{format!("{} evicted", c.evicted_total)}</text>
            }
            if c.paused { <text x={num(cx)} y={num(cy + 104.0)} text-anchor="middle" class="fault">{"paused (stale)"}</text> }
            if !c.ready { <text x={num(cx)} y={num(cy + 104.0)} text-anchor="middle" class="fault">{"re-initialising: 429"}</text> }
        </g>
    }
}

/// Watcher `i`'s link, from its cache's ring to its row.
fn link_path(pic: &Pic, i: usize) -> [(f64, f64); 5] {
    let r = &pic.sim.reflectors()[i];
    let api = pic.v.controller_apiserver[r.controller().index()].index();
    pic.at.link_path(api * pic.kinds + r.kind().index(), i)
}

/// Links: a watcher to the cache it is served by.
fn link_line(pic: &Pic, i: usize) -> Html {
    let (sim, v) = (pic.sim, pic.v);
    let r = &sim.reflectors()[i];
    let points = layout::points(&link_path(pic, i));
    let cut = v.disconnected[r.controller().index()] || v.queues[r.controller().index()].crashed;
    let w = WatcherId(i as u16);
    let c = r.controller().index();
    let ac = act(
        pic.on_fault,
        FaultTarget::Link(c),
        format!("Faults for the link of {}", Labels::watcher(sim, w)),
    );
    html! {
        <g class={classes!("link", cut.then_some("cut"))} data-testid="link" data-controller={sim.config().controllers[c].name.clone()}
            onclick={ac.onclick}>
            <polyline class="hit" tabindex={ac.tabindex} role={ac.role} aria-label={ac.label.clone()} onkeydown={ac.onkeydown.clone()} points={points.clone()} />
            <polyline {points} />
        </g>
    }
}

/// The messages on watcher `i`'s link, drawn over everything else (a link passes under the
/// watchers' rows).
fn link_messages(pic: &Pic, i: usize) -> Html {
    let path = link_path(pic, i);
    let dots = messages(pic, WatcherId(i as u16)).into_iter().map(|m| {
        let down = m.direction == Direction::ToClient;
        let class = match pic.sim.trace()[m.event as usize].kind {
            EventKind::Reflector(ReflectorEvent::WatchFailed { .. }) => "msg msg-error",
            EventKind::Reflector(ReflectorEvent::Bookmark { .. }) => "msg msg-bookmark",
            _ if !down => "msg msg-request",
            _ => "msg",
        };
        // Along the link from its sender: the server's end first.
        let at = |p: f64| layout::along(&path, if down { p } else { 1.0 - p });
        let ((fx, fy), (tx, ty)) = (at(m.from), at(m.to));
        // Drawn where it is now; a step's or a seek's change moves it there from where it was
        // (style.css: `.fly`, none with reduced motion; a new key per moment restarts the
        // motion). Playback draws it at its place every frame.
        let moving = m.from != m.to && !pic.motion.playing;
        html! {
            <circle key={format!("{}@{}", m.event, pic.v.applied)} class={classes!(class, moving.then_some("fly"))}
                data-testid="message" cx={num(tx)} cy={num(ty)} r="5"
                style={moving.then(|| format!("--fx:{}px;--fy:{}px", num(fx - tx), num(fy - ty)))} />
        }
    });
    html! { <g data-testid="messages">{ for dots }</g> }
}

/// A message on a link, as far along it (0 at its sender, 1 at its receiver) as it is now
/// (`to`) and as it was at the moment before (`from`).
struct Message {
    event: listwatch_core::EventId,
    direction: Direction,
    from: f64,
    to: f64,
}

/// The messages on watcher `w`'s link: those in flight now, and the one of the event on screen,
/// which has just arrived (a message on a link without delay arrives as it is sent: it crosses
/// the whole link as the moment changes).
fn messages(pic: &Pic, w: WatcherId) -> Vec<Message> {
    // The clock, which playback (or a pause) may have left between two events.
    let now = pic.motion.at_ms.max(pic.v.time_ms.ms() as f64);
    let before = if pic.motion.playing {
        now
    } else {
        pic.before_ms
    };
    let mut out: Vec<Message> = pic
        .flights
        .iter()
        .filter(|f| f.watcher == w)
        .map(|f| Message {
            event: f.event,
            direction: f.direction,
            from: f.progress(before),
            to: f.progress(now),
        })
        .collect();
    if let Some((i, e)) = pic.current {
        let shown = out.iter().any(|m| m.event as usize == i);
        if let Some((_, direction)) = analysis::travel(&e.kind).filter(|t| t.0 == w && !shown) {
            let flight = pic.analysis.flight_of(i as listwatch_core::EventId);
            // Playing, a message of a link without delay crosses it during its event's beat.
            let beat = if pic.motion.playing && flight.is_none() {
                pic.motion.beat
            } else {
                1.0
            };
            out.push(Message {
                event: i as listwatch_core::EventId,
                direction,
                from: if pic.motion.playing {
                    beat
                } else {
                    flight.map_or(0.0, |f| f.progress(before))
                },
                to: beat,
            });
        }
    }
    out
}

/// A watcher: its reflector's state machine, last RV and last error.
fn watcher_row(pic: &Pic, i: usize) -> Html {
    let (sim, v) = (pic.sim, pic.v);
    let r = &sim.reflectors()[i];
    let w = WatcherId(i as u16);
    let wv = &v.watchers[i];
    let y = pic.at.row_y(i);
    let ctl = &sim.config().controllers[r.controller().index()];
    let q = &v.queues[r.controller().index()];
    let gone = recent_gone(pic, w);
    let message = wv
        .last_error
        .map(|id| listwatch_core::describe(&sim.trace()[id as usize].kind, sim))
        .unwrap_or_default();
    let disconnected = v.disconnected[r.controller().index()];
    let ac = act(
        pic.on_fault,
        FaultTarget::Controller(r.controller().index()),
        format!(
            "Faults for controller {} (watcher {})",
            ctl.name,
            Labels::watcher(sim, w)
        ),
    );
    html! {
        <g data-testid="watcher" data-controller={ctl.name.clone()} data-kind={sim.config().kinds[r.kind().index()].name.clone()}
           data-state={wv.state.as_str()} data-last-rv={wv.last_rv.to_string()} class={classes!("watcher", gone.then_some("gone"))}
           onclick={ac.onclick}>
            <rect class="hit" tabindex={ac.tabindex} role={ac.role} aria-label={ac.label.clone()} onkeydown={ac.onkeydown.clone()} x="12" y={num(y - 2.0)} width={num(layout::ROW_RIGHT - 12.0)} height="62" rx="6" />
            <text x="20" y={num(y + 18.0)} class="watcher-name">{fit(&Labels::watcher(sim, w), 22)}<title>{Labels::watcher(sim, w)}</title></text>
            <text x="20" y={num(y + 36.0)} class="ring-sub">{format!("last rv {}", wv.last_rv)}</text>
            if disconnected { <text x="20" y={num(y + 52.0)} class="fault">{"link cut"}</text> }
            if q.crashed { <text x="110" y={num(y + 52.0)} class="fault">{"crashed"}</text> }
            { for STATES.iter().enumerate().map(|(j, (st, label))| {
                let x = 190.0 + 120.0 * j as f64;
                html! {
                    <g class={classes!("state", lit(wv.state, *st).then_some("lit"))}>
                        <rect x={num(x)} y={num(y + 4.0)} width="104" height="30" rx="15" />
                        <text x={num(x + 52.0)} y={num(y + 24.0)} text-anchor="middle">{*label}</text>
                        if j < 3 { <line x1={num(x + 104.0)} y1={num(y + 19.0)} x2={num(x + 120.0)} y2={num(y + 19.0)} class="arrow" /> }
                    </g>
                }
            }) }
            if gone {
                <text x="190" y={num(y + 54.0)} class="gone-text">{message}</text>
            }
        </g>
    }
}

/// A controller's work queue in three lanes: keys waiting, reconciles running (with what they
/// read) and the latest done (how each ended); then dirty keys and the last write.
fn queue_box(pic: &Pic, i: usize) -> Html {
    let (sim, v) = (pic.sim, pic.v);
    let c = &sim.config().controllers[i];
    let q = &v.queues[i];
    let (x, y) = pic.at.queue_at(i);
    let box_w = pic.at.queue_w;
    // The last queue of its row has the rest of the picture's width for its lines: what a key
    // fact says is cut only where there is no room for it.
    let room = if pic.at.last_in_row(i, sim.config().controllers.len()) {
        pic.at.width - x - 8.0
    } else {
        box_w
    };
    let (title_chars, line_chars) = ((room / 7.6) as usize, (room / 6.9) as usize);
    // As many chips a lane as the box has room for after the lane's name.
    let chips = (((box_w - 8.0 - LANE_X) / 62.0) as usize).max(3);
    let keys: Vec<String> = q
        .waiting
        .iter()
        .map(|k| short(sim.names().resolve(*k)))
        .collect();
    let ac = act(
        pic.on_fault,
        FaultTarget::Controller(i),
        format!("Faults for controller {}", c.name),
    );
    // A lane's name, and when it holds more than its chips show, the last chip's place says how
    // many more.
    let shown = |count: usize| if count > chips { chips - 1 } else { count };
    let lane = |n: usize, name: &str, count: usize| {
        let more_x = x + LANE_X + 4.0 + 62.0 * (chips - 1) as f64;
        html! { <>
            <text x={num(x)} y={num(lane_y(y, n) + 14.0)} class="lane-name">{name}</text>
            if count > chips {
                <text x={num(more_x)} y={num(lane_y(y, n) + 14.0)} class="lane-name">{format!("+{}", count - shown(count))}</text>
            }
        </> }
    };
    let done: Vec<(String, &str, String)> = q
        .done
        .iter()
        .rev()
        .map(|&(k, e)| {
            let result = match sim.trace()[e as usize].kind {
                listwatch_core::EventKind::Controller(
                    listwatch_core::ControllerEvent::ReconcileEnd { result, .. },
                ) => result,
                _ => listwatch_core::ReconcileResult::Done,
            };
            let (mark, how) = match result {
                listwatch_core::ReconcileResult::Done => ("✓", "done".to_string()),
                listwatch_core::ReconcileResult::RequeueAfter(d) => {
                    ("↻", format!("requeue after {} ms", d.ms()))
                }
                listwatch_core::ReconcileResult::Error(err) => {
                    ("✗", format!("error: {}", err.status_and_message()))
                }
                listwatch_core::ReconcileResult::Crashed => ("✗", "crashed".to_string()),
            };
            (short(sim.names().resolve(k)), mark, how)
        })
        .collect();
    html! {
        <g data-testid="queue" data-controller={c.name.clone()} data-keys={keys.join(",")}
            data-running={q.processing.iter().map(|k| short(sim.names().resolve(*k))).collect::<Vec<_>>().join(",")}
            data-done={done.iter().map(|d| d.0.clone()).collect::<Vec<_>>().join(",")} class="queue"
            onclick={ac.onclick}>
            <rect class="hit" tabindex={ac.tabindex} role={ac.role} aria-label={ac.label.clone()} onkeydown={ac.onkeydown.clone()} x={num(x - 8.0)} y={num(y)} width={num(box_w)} height={num(layout::QUEUE_BOX_H)} rx="6" />
            <text x={num(x)} y={num(y + 14.0)} class="watcher-name">{fit(&format!("{} queue ({} reconcile{})", c.name, q.reconciles, if q.reconciles == 1 { "" } else { "s" }), title_chars)}</text>
            { lane(0, "waiting", keys.len()) }
            { lane(1, "running", q.processing.len()) }
            { lane(2, "done", done.len()) }
            { for keys.iter().take(shown(keys.len())).enumerate().map(|(j, k)| html! {
                <g class="chip"><rect x={num(x + LANE_X + 62.0 * j as f64)} y={num(lane_y(y, 0))} width="58" height="20" rx="4" />
                <text x={num(x + LANE_X + 4.0 + 62.0 * j as f64)} y={num(lane_y(y, 0) + 14.0)}>{truncate(k)}</text></g>
            }) }
            { for done.iter().take(shown(done.len())).enumerate().map(|(j, (k, mark, how))| html! {
                <g class="chip done" data-testid="done-chip"><rect x={num(x + LANE_X + 62.0 * j as f64)} y={num(lane_y(y, 2))} width="58" height="20" rx="4" />
                <text x={num(x + LANE_X + 4.0 + 62.0 * j as f64)} y={num(lane_y(y, 2) + 14.0)}>{format!("{mark}{}", truncate6(k))}</text>
                <title>{format!("{k}: {how}")}</title></g>
            }) }
            if !q.dirty.is_empty() {
                <text x={num(x)} y={num(y + 96.0)} class="ring-sub">{fit(&format!("dirty (queued again when it ends): {}", q.dirty.iter().map(|k| short(sim.names().resolve(*k))).collect::<Vec<_>>().join(", ")), line_chars)}</text>
            }
            if let Some(w) = q.last_write {
                <text x={num(x)} y={num(y + 110.0)} class="ring-sub">{
                    { let t = format!("last write: {}", listwatch_core::verdict::describe_event(sim, w)); html! { <>{fit(&t, line_chars)}<title>{t}</title></> } }
                }</text>
            }
            // Running reconciles last, so the tooltip a chip shows on focus or hover is drawn
            // over the queue's other lines.
            { for q.processing.iter().take(shown(q.processing.len())).enumerate().map(|(j, k)| running_chip(pic, i, j, *k, x + LANE_X, lane_y(y, 1))) }
        </g>
    }
}

/// Where a queue's lanes start: after their names.
const LANE_X: f64 = 58.0;

/// The top of lane `n` (waiting, running, done) of the queue whose box starts at `y`.
fn lane_y(y: f64, n: usize) -> f64 {
    y + 20.0 + 23.0 * n as f64
}

/// A running reconcile's chip. What it read (own logic): a stale read is marked `!` and dashed,
/// not by colour alone, and every read is in the chip's tooltip, which focus shows as well as
/// hover.
fn running_chip(pic: &Pic, i: usize, j: usize, k: listwatch_core::NameId, x: f64, y: f64) -> Html {
    let (sim, q) = (pic.sim, &pic.v.queues[i]);
    let reads: Vec<&listwatch_core::Event> = q
        .reads
        .iter()
        .filter(|(rk, _)| *rk == k)
        .map(|(_, e)| &sim.trace()[*e as usize])
        .collect();
    let stale = reads.iter().any(|e| matches!(e.kind, listwatch_core::EventKind::Controller(listwatch_core::ControllerEvent::ReconcileRead { rv, truth_rv, .. }) if rv != truth_rv.get()));
    let full = sim.names().resolve(k);
    let name = truncate(&short(full));
    let step = q
        .steps
        .iter()
        .find(|s| s.0 == k)
        .map(|s| format!("{}: write {} of {} made", full, s.3, s.2));
    let lines: Vec<String> = step
        .into_iter()
        .chain(reads.iter().map(|e| {
            let read = listwatch_core::describe(&e.kind, sim);
            match e.kind {
                listwatch_core::EventKind::Controller(
                    listwatch_core::ControllerEvent::ReconcileRead { rv, .. },
                ) => match pic.run.fields_at(rv) {
                    Some(f) => format!("{read}, holding {f}"),
                    None => read,
                },
                _ => read,
            }
        }))
        .collect();
    let tip = lines.join("\n");
    let label = format!(
        "reconcile of {full} running{}{}{}",
        if stale { ", read a stale copy" } else { "" },
        if lines.is_empty() { "" } else { ": " },
        lines.join("; ")
    );
    let cx = x + 62.0 * j as f64;
    let tip_w = 12.0 + 6.6 * lines.iter().map(|l| l.chars().count()).max().unwrap_or(0) as f64;
    let tip_top = y - 4.0 - 16.0 * lines.len() as f64 - 6.0;
    html! { <>
        <g class={if stale { "chip running stale" } else { "chip running" }} data-stale-read={stale.to_string()}
            data-testid="running-chip" tabindex="0" role="img" aria-label={label}>
            <rect x={num(cx)} y={num(y)} width="58" height="20" rx="4" />
            <text x={num(cx + 4.0)} y={num(y + 14.0)}>{if stale { format!("{name}!") } else { name }}</text>
            if !tip.is_empty() { <title>{tip}</title> }
        </g>
        // Beside the chip, not in it: style.css shows it while the chip has the focus or the
        // pointer (`.chip:focus + .tip`).
        if !lines.is_empty() {
            <g class="tip" data-testid="chip-tip" aria-hidden="true">
                <rect x={num(cx)} y={num(tip_top)} width={num(tip_w)} height={num(16.0 * lines.len() as f64 + 6.0)} rx="4" />
                { for lines.iter().enumerate().map(|(n, l)| html! {
                    <text x={num(cx + 6.0)} y={num(tip_top + 16.0 + 16.0 * n as f64)}>{l.clone()}</text>
                }) }
            </g>
        }
    </> }
}

fn short(name: &str) -> String {
    name.strip_prefix("default/").unwrap_or(name).to_string()
}

/// At most 6 characters (a done chip's mark takes the seventh), with an ellipsis when cut.
fn truncate6(s: &str) -> String {
    fit(s, 6)
}

fn truncate(s: &str) -> String {
    if s.chars().count() > 8 {
        format!("{}…", s.chars().take(7).collect::<String>())
    } else {
        s.to_string()
    }
}

/// At most `n` characters, with an ellipsis when cut: labels keep to their column.
fn fit(s: &str, n: usize) -> String {
    if s.chars().count() > n {
        format!("{}…", s.chars().take(n - 1).collect::<String>())
    } else {
        s.to_string()
    }
}
