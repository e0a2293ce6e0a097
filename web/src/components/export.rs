//! Export: the trace as JSON (the CLI's `--json` document), the view as SVG and PNG, and a
//! Markdown snippet (image plus link) for docs and bug reports.

use std::cell::RefCell;
use std::rc::Rc;

use gloo_events::EventListener;
use wasm_bindgen::JsCast;
use web_sys::js_sys::{Object, Reflect};
use yew::prelude::*;

const WORKER_URL: &str = "./explore_worker_loader.js";
type Running = Option<(web_sys::Worker, EventListener)>;

use super::objects::{call, with_module};
use crate::link;
use crate::state::{Action, Latest, State};

/// Saves `text` as a file (`panels.js`, which loads `export.js` on the first export).
fn download_text(name: &'static str, mime: &'static str, text: String) {
    with_module(move |m| call(m, "download_text", &[name.into(), mime.into(), text.into()]));
}

/// Saves the view at this moment as `svg` or `png` (`panels.js`).
fn download_view(kind: &'static str) {
    with_module(move |m| call(m, "download_view", &[kind.into()]));
}

#[derive(Properties, PartialEq)]
pub struct Props {
    /// Read when a button is clicked: the export never re-renders with the clock.
    pub latest: Latest,
}

/// Writes the trace's JSON in the worker (which holds serde_json: the page's first load stays
/// small) and downloads it; a newer click cancels an older export.
fn export_json(st: &UseReducerHandle<State>, busy: &Rc<RefCell<Running>>) {
    if st.run.is_none() {
        return;
    }
    if let Some((w, _)) = busy.borrow_mut().take() {
        w.terminate();
    }
    let Ok(w) = web_sys::Worker::new(WORKER_URL) else {
        st.dispatch(Action::Notice(Some("The export could not start".into())));
        return;
    };
    // `ToWorker::Export` and the `FromWorker` answers (`protocol.rs`), written and read field by
    // field here: serde-wasm-bindgen would add about 23 KB gzipped to the page's first load.
    let job = Object::new();
    let _ = Reflect::set(&job, &"kind".into(), &"export".into());
    let _ = Reflect::set(
        &job,
        &"script".into(),
        &wasm_bindgen::JsValue::from_str(&st.source),
    );
    let (me, d) = (w.clone(), st.dispatcher());
    let listener = EventListener::new(&w, "message", move |e| {
        let Some(e) = e.dyn_ref::<web_sys::MessageEvent>() else {
            return;
        };
        let data = e.data();
        let get = |k: &str| {
            Reflect::get(&data, &k.into())
                .ok()
                .and_then(|v| v.as_string())
                .unwrap_or_default()
        };
        match get("kind").as_str() {
            "ready" => {
                let _ = me.post_message(&job);
                return;
            }
            "export" => download_text("listwatch-trace.json", "application/json", get("json")),
            _ => d.dispatch(Action::Notice(Some(format!(
                "The export failed: {}",
                get("message")
            )))),
        }
        me.terminate();
    });
    *busy.borrow_mut() = Some((w, listener));
}

#[function_component(Export)]
pub fn export(p: &Props) -> Html {
    let busy: Rc<RefCell<Running>> = use_mut_ref(|| None);
    let latest = p.latest.clone();
    let json = Callback::from(move |_: MouseEvent| {
        if let Some(st) = latest.get() {
            export_json(&st, &busy);
        }
    });
    let svg = Callback::from(|_: MouseEvent| download_view("svg"));
    let png = Callback::from(|_: MouseEvent| download_view("png"));
    let latest = p.latest.clone();
    let markdown = Callback::from(move |_: MouseEvent| {
        let Some(st) = latest.get() else { return };
        let title = st.run.as_ref().map(|r| r.title.clone()).unwrap_or_default();
        let href = crate::app::share_href(&st);
        let alt = title.replace(['[', ']'], "");
        let md = format!("![{alt}](listwatch.png)\n\n[Open this scenario in listwatch]({href})\n");
        link::copy_to_clipboard(&md);
        st.dispatch(Action::Notice(Some(
            "Markdown copied (save the PNG beside it as listwatch.png)".into(),
        )));
    });
    html! {
        <div class="export" role="group" aria-label="Export">
            <span class="hint">{"Export: "}</span>
            <button data-testid="export-json" onclick={json} title="The trace as JSON (the CLI's --json)">{"trace JSON"}</button>
            <button data-testid="export-svg" onclick={svg} title="The view at this moment as SVG">{"SVG"}</button>
            <button data-testid="export-png" onclick={png} title="The view at this moment as PNG">{"PNG"}</button>
            <button data-testid="export-markdown" onclick={markdown} title="A Markdown snippet: the image and a link">{"Markdown"}</button>
        </div>
    }
}
