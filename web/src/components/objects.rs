//! Start here (the tour), the script's local history and the objects panel. They are drawn by
//! `web/panels.js` with the DOM (text and attributes only, never HTML from text), which keeps the
//! page's wasm small; the objects' fold runs in the explorer's worker (`view::Objects`), started
//! when the panel opens. These components only give each panel its place and its inputs.

use std::cell::RefCell;
use std::rc::Rc;

use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::js_sys::{Array, Function, Reflect};
use yew::prelude::*;

use crate::state::{Compare, Comparison, Moment};

type Waiting = Vec<Box<dyn FnOnce(&JsValue)>>;

thread_local! {
    static MODULE: RefCell<Option<JsValue>> = const { RefCell::new(None) };
    static WAITING: RefCell<Option<Waiting>> = const { RefCell::new(None) };
}

/// Runs `f` with panels.js once it is loaded (loading it on first use).
pub fn with_module(f: impl FnOnce(&JsValue) + 'static) {
    if let Some(m) = MODULE.with(|m| m.borrow().clone()) {
        return f(&m);
    }
    let first = WAITING.with(|w| {
        let mut w = w.borrow_mut();
        let first = w.is_none();
        w.get_or_insert_with(Vec::new).push(Box::new(f));
        first
    });
    if first {
        wasm_bindgen_futures::spawn_local(async {
            let Ok(m) = wasm_bindgen_futures::JsFuture::from(crate::js::load_panels()).await else {
                return;
            };
            MODULE.with(|x| *x.borrow_mut() = Some(m.clone()));
            for f in WAITING.with(|w| w.borrow_mut().take()).unwrap_or_default() {
                f(&m);
            }
        });
    }
}

pub fn call(m: &JsValue, name: &str, args: &[JsValue]) {
    if let Ok(f) = Reflect::get(m, &name.into()).and_then(|f| f.dyn_into::<Function>()) {
        let _ = f.apply(&JsValue::NULL, &args.iter().collect::<Array>());
    }
}

/// A JS callback taking one string, kept for the page's life (the panels are mounted once).
pub fn string_callback(cb: Callback<String>) -> JsValue {
    Closure::<dyn Fn(String)>::new(move |s: String| cb.emit(s)).into_js_value()
}

#[derive(Properties, PartialEq)]
pub struct TourProps {
    /// A step picked opens its scenario (`Script::Open`).
    pub on_open: Callback<String>,
}

#[function_component(Tour)]
pub fn tour(p: &TourProps) -> Html {
    let host = use_node_ref();
    {
        let (host, pick) = (host.clone(), p.on_open.clone());
        super::use_mount(Box::new(move || {
            with_module(move |m| {
                let gallery: Array = crate::gallery::INDEX
                    .iter()
                    .map(|(file, title)| -> JsValue {
                        Array::of2(&(*file).into(), &(*title).into()).into()
                    })
                    .collect();
                if let Some(el) = host.get() {
                    call(
                        m,
                        "tour",
                        &[el.into(), gallery.into(), string_callback(pick)],
                    );
                }
            });
            super::nothing()
        }));
    }
    html! { <div class="tour-host" ref={host} /> }
}

#[derive(Properties, PartialEq)]
pub struct HistoryProps {
    pub source: Rc<str>,
    pub on_restore: Callback<String>,
    /// Compare two runs, which sits below the history: its picks and clock, and what it says.
    pub compare: Comparison,
    pub on_compare: Callback<Compare>,
}

#[function_component(History)]
pub fn history(p: &HistoryProps) -> Html {
    let host = use_node_ref();
    {
        let (host, restore) = (host.clone(), p.on_restore.clone());
        super::use_mount(Box::new(move || {
            with_module(move |m| {
                if let Some(el) = host.get() {
                    call(m, "history", &[el.into(), string_callback(restore)]);
                }
            });
            super::nothing()
        }));
    }
    use_effect_with(p.source.clone(), |src| {
        let src = src.clone();
        with_module(move |m| call(m, "history_source", &[JsValue::from_str(&src)]));
    });
    let on_compare = {
        let on = p.on_compare.clone();
        use_memo((), move |_| {
            string_callback(Callback::from(move |said: String| {
                if let Some(a) = Compare::from_said(&said) {
                    on.emit(a)
                }
            }))
        })
    };
    use_effect_with(p.compare.clone(), move |c| {
        let state: Array = [
            c.versions.into(),
            JsValue::from_str(&c.a),
            JsValue::from_str(&c.b),
            JsValue::from_str(&c.setting),
            JsValue::from_str(&c.version_a),
            JsValue::from_str(&c.version_b),
            (c.clock_ms as f64).into(),
        ]
        .into_iter()
        .collect();
        let on = (*on_compare).clone();
        with_module(move |m| call(m, "compare_state", &[state.into(), on]));
    });
    html! { <div class="history-host" ref={host} /> }
}

#[derive(Properties, PartialEq)]
pub struct Props {
    /// The script of the run on screen.
    pub source: Rc<str>,
    pub cursor: usize,
    /// An event clicked in an object's history (`Moment::JumpTo`).
    pub on_moment: Callback<Moment>,
}

#[function_component(ObjectsPanel)]
pub fn objects_panel(p: &Props) -> Html {
    let host = use_node_ref();
    let jump: Rc<JsValue> = {
        let on = p.on_moment.clone();
        (*use_memo((), move |_| {
            Rc::new(
                Closure::<dyn Fn(f64)>::new(move |id: f64| on.emit(Moment::JumpTo(id as u32)))
                    .into_js_value(),
            )
        }))
        .clone()
    };
    {
        let host = host.clone();
        use_effect_with((p.source.clone(), p.cursor), move |(source, cursor)| {
            let (source, cursor) = (JsValue::from_str(source), *cursor as f64);
            with_module(move |m| {
                if let Some(el) = host.get() {
                    call(
                        m,
                        "objects",
                        &[el.into(), source.clone(), cursor.into(), (*jump).clone()],
                    );
                }
            });
        });
    }
    html! { <div class="objects-host" ref={host} /> }
}
