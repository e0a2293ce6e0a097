//! The objects panel: for every object, the truth in etcd beside each apiserver cache's copy and
//! each informer store's copy at the current moment, with stale, missing and ghost copies marked
//! in words (not only colour). Clicking an object shows every version and who wrote it. The fold
//! (`listwatch_core::view::Objects`) is computed only when the panel is opened.

use std::cell::RefCell;
use std::rc::Rc;

use listwatch_core::view::{Holder, Mark, Objects, Version};
use listwatch_core::{actor_label, Labels, Sim};
use yew::prelude::*;

use crate::state::{Action, Loaded, State};

#[derive(Properties, PartialEq)]
pub struct Props {
    pub state: UseReducerHandle<State>,
}

/// At most this many objects are drawn (the first ones written).
const MAX_OBJECTS: usize = 120;

fn holder_name(sim: &Sim, h: Holder) -> String {
    match h {
        Holder::Etcd => "etcd".into(),
        Holder::Cache(a) => sim.apiserver(a).to_string(),
        Holder::Store(w) => sim.watcher(w),
    }
}

fn owner_text(sim: &Sim, v: &Version) -> String {
    match v.owner {
        Some((k, n, uid)) => format!("{}/{} ({uid})", sim.kind(k), short(sim.name(n))),
        None => "—".into(),
    }
}

fn short(name: &str) -> &str {
    name.strip_prefix("default/").unwrap_or(name)
}

fn mark_text(m: Mark) -> &'static str {
    match m {
        Mark::Fresh => "✓ current",
        Mark::Stale => "⚠ stale",
        Mark::Missing => "∅ missing",
        Mark::Ghost => "✗ ghost",
        Mark::Absent => "—",
    }
}

/// The run the fold was made for, and the fold.
type Folded = Option<(Rc<Loaded>, Rc<Objects>)>;

#[function_component(ObjectsPanel)]
pub fn objects_panel(p: &Props) -> Html {
    let open = use_state(|| false);
    let picked = use_state(|| None::<usize>);
    // The fold of the current run, made on first open and kept while the run stays.
    let cache: Rc<RefCell<Folded>> = use_mut_ref(|| None);
    let Some(run) = p.state.run.clone() else {
        return html! {};
    };
    let toggle = {
        let open = open.clone();
        Callback::from(move |_: MouseEvent| open.set(!*open))
    };
    let head = html! {
        <h2 class="panel-head">
            <button class="disclose" aria-expanded={(*open).to_string()} aria-controls="objects-body" data-testid="objects-toggle" onclick={toggle}>
                { if *open { "▾ Objects" } else { "▸ Objects" } }
            </button>
            <span class="hint">{" each holder's copy, now"}</span>
        </h2>
    };
    if !*open {
        return html! { <div class="objects-panel">{head}</div> };
    }
    let objs = {
        let mut c = cache.borrow_mut();
        match c.as_ref() {
            Some((r, o)) if Rc::ptr_eq(r, &run) => o.clone(),
            _ => {
                let o = Rc::new(Objects::new(&run.sim));
                *c = Some((run.clone(), o.clone()));
                o
            }
        }
    };
    let sim = &run.sim;
    let cursor = p.state.cursor;
    let copies = objs.at(sim, cursor);
    let seen = objs.seen(cursor);
    let body = (0..seen.min(MAX_OBJECTS)).map(|o| {
        let ob = &objs.objects[o];
        let kind = sim.kind(ob.kind).to_string();
        let name = short(sim.name(ob.name)).to_string();
        let selected = *picked == Some(o);
        let onclick = {
            let picked = picked.clone();
            Callback::from(move |_: MouseEvent| picked.set(if selected { None } else { Some(o) }))
        };
        let rows = (0..objs.holders.len()).filter(|&h| objs.holds_kind(sim, h, o)).map(|h| {
            let (v, mark) = objs.copy(&copies, h, o);
            let holder = holder_name(sim, objs.holders[h]);
            let rv = v.map(|v| v.rv.to_string()).unwrap_or_default();
            html! {
                <tr data-testid="object-copy" data-holder={holder.clone()} data-rv={rv.clone()}
                    data-stale={mark.is_stale().to_string()} data-mark={mark.as_str()} class={classes!("copy", format!("mark-{}", mark.as_str()))}>
                    <th scope="row">{holder}</th>
                    <td class="mark">{mark_text(mark)}</td>
                    if let Some(v) = v {
                        <td>{rv}</td><td>{v.spec}</td><td>{v.status}</td>
                        <td>{if v.deleting { "deleting" } else { "" }}</td>
                        <td>{owner_text(sim, v)}</td><td>{v.uid}</td>
                    } else {
                        <td colspan="6" class="hint">{"no copy"}</td>
                    }
                </tr>
            }
        });
        let history = selected.then(|| html! {
            <ol class="history" data-testid="object-history" aria-label={format!("History of {kind}/{name}")}>
                { for ob.versions.iter().map(|v| {
                    let st = p.state.clone();
                    let id = v.event;
                    let now = (v.event as usize) < cursor;
                    html! {
                        <li class={classes!((!now).then_some("future"))}>
                            <button class="link" onclick={Callback::from(move |_: MouseEvent| st.dispatch(Action::JumpTo(id)))}
                                title="Go to this write">
                                {format!("{} rv {} · {} by {} · spec {} status {} · uid {}{}{}",
                                    super::clock(v.time_ms), v.rv, v.op.as_str(), actor_label(v.actor, sim), v.spec, v.status, v.uid,
                                    if v.deleting { " · deleting" } else { "" },
                                    if now { "" } else { " (later)" })}
                            </button>
                        </li>
                    }
                }) }
            </ol>
        });
        let stale = (0..objs.holders.len()).filter(|&h| objs.holds_kind(sim, h, o)).filter(|&h| objs.copy(&copies, h, o).1.is_stale()).count();
        html! {
            <div data-testid="object" data-kind={kind.clone()} data-name={name.clone()} class={classes!("object", selected.then_some("selected"))}>
                <button class="object-name" aria-expanded={selected.to_string()} {onclick} title="Show every version and who wrote it">
                    <b>{format!("{kind}/{name}")}</b>
                    if stale > 0 { <span class="stale-count">{format!(" · {stale} stale")}</span> }
                </button>
                <div class="table-scroll" tabindex="0" role="region" aria-label={format!("Copies of {kind}/{name}")}>
                    <table>
                        <thead><tr><th scope="col">{"holder"}</th><th scope="col">{"copy"}</th><th scope="col">{"rv"}</th><th scope="col">{"spec"}</th><th scope="col">{"status"}</th>
                            <th scope="col">{"deletion"}</th><th scope="col">{"owner"}</th><th scope="col">{"uid"}</th></tr></thead>
                        <tbody>{ for rows }</tbody>
                    </table>
                </div>
                { for history }
            </div>
        }
    });
    html! {
        <div class="objects-panel">
            {head}
            <div id="objects-body" data-testid="objects" class="objects">
                if seen == 0 { <p class="hint">{"No object written yet at this moment."}</p> }
                { for body }
                if seen > MAX_OBJECTS { <p class="hint">{format!("{} more objects not shown.", seen - MAX_OBJECTS)}</p> }
            </div>
        </div>
    }
}
