//! Faults by hand: a click (or Enter) on a watcher, a queue, a link or a watch cache in the
//! picture opens the faults that apply to it at this moment; choosing one appends its timeline
//! line (`at NOW ACTION`, docs/scenario-language.md) and re-runs; Undo brings the script back.

use listwatch_core::{Labels, TimeMs};
use yew::prelude::*;

use std::rc::Rc;

use listwatch_core::view::View;
use listwatch_core::Sim;

use crate::state::{FaultTarget, Loaded, Page, Script};

#[derive(Properties, PartialEq)]
pub struct Props {
    pub run: Rc<Loaded>,
    /// What the menu is open on, if it is.
    pub menu: Option<FaultTarget>,
    /// The moment on screen while the menu is open (none when closed: the closed menu does not
    /// follow the clock).
    pub cursor: Option<usize>,
    /// Faults added by hand that Undo can take back.
    pub undo: usize,
    /// A fault chosen (`Script::InjectFault`) and Undo (`Script::Undo`).
    pub on_script: Callback<Script>,
    /// Closing the menu (`Page::FaultMenu(None)`).
    pub on_page: Callback<Page>,
}

/// Every apiserver's name but `a`'s.
fn others(sim: &Sim, a: usize) -> impl Iterator<Item = String> + '_ {
    sim.config()
        .apiservers
        .iter()
        .enumerate()
        .filter(move |(i, _)| *i != a)
        .map(|(_, x)| x.name.clone())
}

/// The faults that apply to `t` at `cursor`: (timeline action, what it does).
pub fn options(run: &Loaded, cursor: usize, t: FaultTarget) -> Vec<(String, &'static str)> {
    let sim = &run.sim;
    let view = run.timeline.at(sim, cursor);
    let mut out = match t {
        FaultTarget::Controller(c) => controller_options(sim, &view, cursor, c),
        FaultTarget::Link(c) => link_options(sim, &view, c),
        FaultTarget::Apiserver(a, k) => apiserver_options(sim, &view, a, k),
    };
    let at = view.time_ms;
    out.iter_mut()
        .for_each(|(a, _)| *a = format!("at {at} {a}"));
    out
}

fn controller_options(
    sim: &Sim,
    view: &View,
    cursor: usize,
    c: usize,
) -> Vec<(String, &'static str)> {
    let cfg = &sim.config();
    let mut out: Vec<(String, &'static str)> = vec![];
    let name = &cfg.controllers[c].name;
    let q = &view.queues[c];
    if q.crashed {
        out.push((
            format!("restart {name}"),
            "start it again with fresh informers",
        ));
        for a in others(sim, view.controller_apiserver[c].index()) {
            out.push((
                format!("restart {name} on {a}"),
                "start it again against another apiserver",
            ));
        }
    } else {
        out.push((format!("crash {name}"), "kill it now"));
        out.push((
            format!("crash {name} restart-after 5s"),
            "kill it now, start it again 5 s later",
        ));
        out.push((
            format!("crash {name} after 1 write"),
            "kill it right after the next write of its next reconcile",
        ));
        out.push((
            format!("disconnect {name} for 5s"),
            "break its watches and refuse its connections for 5 s",
        ));
        // Hold notifications about an object of its primary kind that exists now.
        let primary = cfg.controllers[c].primary;
        let mut seen = vec![];
        for e in sim.trace().range(..cursor.min(sim.trace().len())).rev() {
            if let listwatch_core::EventKind::Store(listwatch_core::StoreEvent::Write {
                kind,
                name: n,
                ..
            }) = e.kind
            {
                if kind == primary && !seen.contains(&n) {
                    seen.push(n);
                }
            }
            if seen.len() >= 2 {
                break;
            }
        }
        for n in seen {
            out.push((
                format!("hold {name} {} {}", sim.kind(primary), sim.name(n)),
                "hold the notifications that reach it until a later state of this object arrives",
            ));
        }
    }
    out
}

fn link_options(sim: &Sim, view: &View, c: usize) -> Vec<(String, &'static str)> {
    let mut out: Vec<(String, &'static str)> = vec![];
    let name = &sim.config().controllers[c].name;
    out.push((
        format!("disconnect {name} for 5s"),
        "cut the link for 5 s: watches break, connections are refused",
    ));
    out.push((
        format!("disconnect {name} for 0s"),
        "break its watches once; they reconnect at once",
    ));
    out.push((
        format!("delay {name} 200ms"),
        "every message on the link takes 200 ms",
    ));
    for a in others(sim, view.controller_apiserver[c].index()) {
        out.push((
            format!("failover {name} to {a}"),
            "the load balancer moves its connections to another apiserver",
        ));
    }
    out
}

fn apiserver_options(sim: &Sim, view: &View, a: usize, k: usize) -> Vec<(String, &'static str)> {
    let cfg = &sim.config();
    let mut out: Vec<(String, &'static str)> = vec![];
    let name = &cfg.apiservers[a].name;
    if view.caches[a].iter().any(|c| c.paused) {
        out.push((format!("resume {name}"), "thaw its watch caches"));
    } else {
        out.push((
            format!("pause {name}"),
            "freeze its watch caches: a stale apiserver",
        ));
    }
    out.push((
        format!("restart-apiserver {name} for 2s"),
        "every watch closes, caches empty, 429 until ready",
    ));
    out.push((
        format!("reinit-cache {name} {}", cfg.kinds[k].name),
        "this watch cache re-initialises, as after a failed etcd watch",
    ));
    out
}

fn target_label(run: &Loaded, t: FaultTarget) -> String {
    let cfg = &run.sim.config();
    match t {
        FaultTarget::Controller(c) => format!("controller {}", cfg.controllers[c].name),
        FaultTarget::Link(c) => format!("the link of {}", cfg.controllers[c].name),
        FaultTarget::Apiserver(a, k) => {
            format!(
                "apiserver {} ({} cache)",
                cfg.apiservers[a].name, cfg.kinds[k].name
            )
        }
    }
}

/// "N faults added by hand" and its Undo.
fn undo_bar(n: usize, on: &Callback<Script>) -> Option<Html> {
    let undo = on.reform(|_: MouseEvent| Script::Undo);
    (n > 0).then(|| html! {
        <div class="undo-bar" role="status">
            <span>{format!("{} fault{} added by hand.", n, if n == 1 { "" } else { "s" })}</span>
            <button data-testid="undo" onclick={undo} title="Put back the script as it was before the last fault">{"Undo"}</button>
        </div>
    })
}

#[function_component(FaultMenu)]
pub fn fault_menu(p: &Props) -> Html {
    let first = use_node_ref();
    {
        let first = first.clone();
        use_effect_with(p.menu, move |t| {
            if t.is_some() {
                if let Some(b) = first.cast::<web_sys::HtmlElement>() {
                    let _ = b.focus();
                }
            }
        });
    }
    let undo = undo_bar(p.undo, &p.on_script);
    let (Some(t), Some(cursor)) = (p.menu, p.cursor) else {
        return html! { <>{ for undo }</> };
    };
    let close = p.on_page.reform(|_: MouseEvent| Page::FaultMenu(None));
    let on = p.on_page.clone();
    let onkeydown = Callback::from(move |e: KeyboardEvent| {
        if e.key() == "Escape" {
            on.emit(Page::FaultMenu(None));
        }
    });
    let opts = options(&p.run, cursor, t);
    let now = cursor
        .checked_sub(1)
        .map(|c| p.run.sim.trace()[c].time_ms)
        .unwrap_or(TimeMs::ZERO);
    let label = target_label(&p.run, t);
    html! {
        <>
        <div class="fault-menu" data-testid="fault-menu" role="group" aria-label={format!("Faults for {label}")} {onkeydown}>
            <div class="fault-head">
                <b>{format!("Inject a fault into {label} at {}", super::clock(now))}</b>
                <button onclick={close} aria-label="Close the fault menu">{"✕"}</button>
            </div>
            <ul>
                { for opts.into_iter().enumerate().map(|(i, (line, why))| {
                    let l = line.clone();
                    let onclick = p.on_script.reform(move |_: MouseEvent| Script::InjectFault(l.clone()));
                    let r = if i == 0 { first.clone() } else { NodeRef::default() };
                    html! {
                        <li>
                            <button data-testid="fault-option" data-line={line.clone()} ref={r}
                                {onclick}>
                                <code>{line}</code>
                            </button>
                            <span class="hint">{format!(" {why}")}</span>
                        </li>
                    }
                }) }
            </ul>
            <p class="hint">{"The line is added to the end of the script and the scenario runs again; Undo takes it back."}</p>
        </div>
        { for undo }
        </>
    }
}
