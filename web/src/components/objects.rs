//! The objects panel: for every object, the truth in etcd beside each apiserver cache's copy and
//! each informer store's copy at the current moment, with stale, missing and ghost copies marked
//! in words (not only colour). Clicking an object shows every version and who wrote it.
//!
//! The fold (`listwatch_core::view::Objects`) runs in the explorer's worker, started when the
//! panel first opens: the page's first load carries only this drawing code. The worker re-runs
//! the same script (runs are deterministic, so it is the same trace) and answers each moment.

use std::cell::RefCell;
use std::rc::Rc;

use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::js_sys::{Array, Object, Reflect};
use yew::prelude::*;

use crate::state::{Action, State};

const WORKER_URL: &str = "./explore_worker_loader.js";

#[derive(Properties, PartialEq)]
pub struct Props {
    pub state: UseReducerHandle<State>,
}

/// One holder's copy: holder, mark, then (when it has one) rv, spec, status, deletion, owner, uid.
type Row = Vec<String>;

#[derive(Clone, Debug, Default, PartialEq)]
struct Obj {
    kind: String,
    name: String,
    rows: Vec<Row>,
    /// (event, text, after the moment on screen), for the object picked.
    history: Option<Vec<(u32, String, bool)>>,
}

#[derive(Clone, Debug, Default, PartialEq)]
struct Table {
    /// What the reply answers: the moment, the script and the picked `kind/name`.
    cursor: usize,
    script: String,
    pick: String,
    seen: usize,
    list: Vec<Obj>,
    error: Option<String>,
}

fn strings(v: &JsValue) -> Vec<String> {
    Array::from(v)
        .iter()
        .map(|x| x.as_string().unwrap_or_default())
        .collect()
}

fn table_of(d: &JsValue) -> Table {
    let get = |k: &str| Reflect::get(d, &k.into()).unwrap_or(JsValue::NULL);
    if get("kind").as_string().as_deref() == Some("error") {
        return Table {
            error: get("message").as_string(),
            ..Default::default()
        };
    }
    let list = Array::from(&get("list"))
        .iter()
        .map(|o| {
            let o = Array::from(&o);
            let history = o.get(3);
            Obj {
                kind: o.get(0).as_string().unwrap_or_default(),
                name: o.get(1).as_string().unwrap_or_default(),
                rows: Array::from(&o.get(2)).iter().map(|r| strings(&r)).collect(),
                history: (!history.is_null()).then(|| {
                    Array::from(&history)
                        .iter()
                        .map(|h| {
                            let h = Array::from(&h);
                            (
                                h.get(0).as_f64().unwrap_or(0.0) as u32,
                                h.get(1).as_string().unwrap_or_default(),
                                h.get(2).as_bool().unwrap_or(false),
                            )
                        })
                        .collect()
                }),
            }
        })
        .collect();
    Table {
        cursor: get("cursor").as_f64().unwrap_or(0.0) as usize,
        script: get("script").as_string().unwrap_or_default(),
        pick: get("pick").as_string().unwrap_or_default(),
        seen: get("seen").as_f64().unwrap_or(0.0) as usize,
        list,
        error: None,
    }
}

fn mark_text(m: &str) -> &'static str {
    match m {
        "fresh" => "✓ current",
        "stale" => "⚠ stale",
        "missing" => "∅ missing",
        "ghost" => "✗ ghost",
        _ => "—",
    }
}

/// The worker, its message handler, and whether it said it is ready.
struct Conn {
    worker: web_sys::Worker,
    _onmessage: Closure<dyn Fn(web_sys::MessageEvent)>,
    ready: Rc<RefCell<bool>>,
    pending: Rc<RefCell<Option<JsValue>>>,
}

impl Conn {
    fn send(&self, job: JsValue) {
        if *self.ready.borrow() {
            let _ = self.worker.post_message(&job);
        } else {
            *self.pending.borrow_mut() = Some(job);
        }
    }
}

impl Drop for Conn {
    fn drop(&mut self) {
        self.worker.terminate();
    }
}

#[function_component(ObjectsPanel)]
pub fn objects_panel(p: &Props) -> Html {
    let open = use_state(|| false);
    let picked = use_state(|| None::<(String, String)>);
    let table = use_state(Table::default);
    let conn: Rc<RefCell<Option<Conn>>> = use_mut_ref(|| None);
    let source = p.state.run.as_ref().map(|r| r.source.clone());
    // Ask the worker for the table whenever the run, the moment or the pick changes.
    {
        let (conn, table) = (conn.clone(), table.clone());
        use_effect_with(
            (*open, source.clone(), p.state.cursor, (*picked).clone()),
            move |(open, source, cursor, picked)| {
                if !*open {
                    *conn.borrow_mut() = None;
                } else if let Some(source) = source {
                    if conn.borrow().is_none() {
                        if let Ok(worker) = web_sys::Worker::new(WORKER_URL) {
                            let ready = Rc::new(RefCell::new(false));
                            let pending: Rc<RefCell<Option<JsValue>>> = Rc::new(RefCell::new(None));
                            let (r, pe, w, t) = (
                                ready.clone(),
                                pending.clone(),
                                worker.clone(),
                                table.clone(),
                            );
                            let onmessage = Closure::<dyn Fn(web_sys::MessageEvent)>::new(
                                move |e: web_sys::MessageEvent| {
                                    let d = e.data();
                                    let kind = Reflect::get(&d, &"kind".into())
                                        .ok()
                                        .and_then(|k| k.as_string());
                                    if kind.as_deref() == Some("ready") {
                                        *r.borrow_mut() = true;
                                        if let Some(job) = pe.borrow_mut().take() {
                                            let _ = w.post_message(&job);
                                        }
                                    } else {
                                        t.set(table_of(&d));
                                    }
                                },
                            );
                            worker.set_onmessage(Some(onmessage.as_ref().unchecked_ref()));
                            *conn.borrow_mut() = Some(Conn {
                                worker,
                                _onmessage: onmessage,
                                ready,
                                pending,
                            });
                        }
                    }
                    let job = Object::new();
                    let set = |k: &str, v: JsValue| {
                        let _ = Reflect::set(&job, &k.into(), &v);
                    };
                    set("objects", JsValue::TRUE);
                    set("script", source.as_str().into());
                    set("cursor", (*cursor as f64).into());
                    if let Some((k, n)) = picked {
                        set("pick_kind", k.as_str().into());
                        set("pick_name", n.as_str().into());
                    }
                    if let Some(c) = conn.borrow().as_ref() {
                        c.send(job.into());
                    }
                }
            },
        );
    }
    if p.state.run.is_none() {
        return html! {};
    }
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
    let t = &*table;
    let body = t.list.iter().map(|ob| {
        let (kind, name) = (ob.kind.clone(), ob.name.clone());
        let selected = picked.as_ref().is_some_and(|(k, n)| *k == kind && *n == name);
        let onclick = {
            let picked = picked.clone();
            let key = (kind.clone(), name.clone());
            Callback::from(move |_: MouseEvent| picked.set(if selected { None } else { Some(key.clone()) }))
        };
        let stale = ob.rows.iter().filter(|r| matches!(r[1].as_str(), "stale" | "ghost")).count();
        let rows = ob.rows.iter().map(|r| {
            let mark = r[1].as_str();
            let rv = r.get(2).cloned().unwrap_or_default();
            html! {
                <tr data-testid="object-copy" data-holder={r[0].clone()} data-rv={rv}
                    data-stale={matches!(mark, "stale" | "ghost").to_string()} data-mark={mark.to_string()} class={classes!("copy", format!("mark-{mark}"))}>
                    <th scope="row">{&r[0]}</th>
                    <td class="mark">{mark_text(mark)}</td>
                    if r.len() > 2 {
                        { for r[2..].iter().map(|c| html! { <td>{c}</td> }) }
                    } else {
                        <td colspan="6" class="hint">{"no copy"}</td>
                    }
                </tr>
            }
        });
        let history = ob.history.as_ref().filter(|_| selected).map(|h| html! {
            <ol class="history" data-testid="object-history" aria-label={format!("History of {kind}/{name}")}>
                { for h.iter().map(|(id, text, later)| {
                    let st = p.state.clone();
                    let id = *id;
                    html! {
                        <li class={classes!(later.then_some("future"))}>
                            <button class="link" onclick={Callback::from(move |_: MouseEvent| st.dispatch(Action::JumpTo(id)))}
                                title="Go to this write">{text}</button>
                        </li>
                    }
                }) }
            </ol>
        });
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
    // The table on screen answers this moment once the worker's reply for it has come.
    let pick = picked
        .as_ref()
        .map(|(k, n)| format!("{k}/{n}"))
        .unwrap_or_else(|| "/".into());
    let current = t.cursor == p.state.cursor
        && Some(&t.script) == source.as_ref()
        && t.pick == pick
        && t.error.is_none();
    html! {
        <div class="objects-panel">
            {head}
            <div id="objects-body" data-testid="objects" class="objects" data-settled={current.to_string()} aria-busy={(!current).to_string()}>
                if let Some(e) = &t.error { <p class="hint">{format!("The objects could not be folded: {e}")}</p> }
                if t.seen == 0 && t.error.is_none() { <p class="hint">{"No object written yet at this moment."}</p> }
                { for body }
                if t.seen > t.list.len() { <p class="hint">{format!("{} more objects not shown.", t.seen - t.list.len())}</p> }
            </div>
        </div>
    }
}
