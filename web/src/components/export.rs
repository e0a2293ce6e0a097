//! Export: the trace as JSON (the CLI's `--json` document), the view as SVG and PNG, and a
//! Markdown snippet (image plus link) for docs and bug reports.

use std::cell::RefCell;
use std::rc::Rc;

use gloo_events::EventListener;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::js_sys::{Object, Reflect};
use yew::prelude::*;

const WORKER_URL: &str = "./explore_worker_loader.js";
type Running = Option<(web_sys::Worker, EventListener)>;

use crate::link;
use crate::state::{Action, Latest, State};

#[wasm_bindgen(inline_js = r#"
function save(name, blob) {
  const a = document.createElement('a');
  a.href = URL.createObjectURL(blob);
  a.download = name;
  document.body.appendChild(a);
  a.click();
  setTimeout(() => { URL.revokeObjectURL(a.href); a.remove(); }, 1000);
}
export function download_text(name, mime, text) { save(name, new Blob([text], { type: mime })); }
// The view as a standalone SVG: the page's rules inlined with the theme's colours resolved,
// animations removed.
export function svg_markup(selector) {
  const svg = document.querySelector(selector);
  if (!svg) return '';
  const clone = svg.cloneNode(true);
  const vb = svg.viewBox.baseVal;
  clone.setAttribute('xmlns', 'http://www.w3.org/2000/svg');
  clone.setAttribute('width', String(vb.width));
  clone.setAttribute('height', String(vb.height));
  const root = getComputedStyle(document.documentElement);
  let css = '';
  for (const sheet of document.styleSheets) {
    try { for (const rule of sheet.cssRules) css += rule.cssText + '\n'; } catch (e) { /* not ours */ }
  }
  css = css.replace(/var\((--[\w-]+)\)/g, (_, v) => root.getPropertyValue(v).trim() || '#000');
  const style = document.createElementNS('http://www.w3.org/2000/svg', 'style');
  style.textContent = css + `svg { background: ${getComputedStyle(document.body).backgroundColor}; font-family: system-ui, sans-serif; }`;
  clone.insertBefore(style, clone.firstChild);
  clone.querySelectorAll('animateMotion').forEach((a) => a.remove());
  return new XMLSerializer().serializeToString(clone);
}
export function download_png(name, svgText) {
  const url = URL.createObjectURL(new Blob([svgText], { type: 'image/svg+xml' }));
  const img = new Image();
  img.onload = () => {
    const c = document.createElement('canvas');
    c.width = img.width * 2; c.height = img.height * 2;
    const ctx = c.getContext('2d');
    ctx.scale(2, 2);
    ctx.drawImage(img, 0, 0);
    URL.revokeObjectURL(url);
    c.toBlob((b) => save(name, b), 'image/png');
  };
  img.src = url;
}
"#)]
extern "C" {
    fn download_text(name: &str, mime: &str, text: &str);
    fn svg_markup(selector: &str) -> String;
    fn download_png(name: &str, svg: &str);
}

const VIEW: &str = "svg.system";

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
    let _ = Reflect::set(&job, &"script".into(), &st.source.as_str().into());
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
            "export" => download_text("listwatch-trace.json", "application/json", &get("json")),
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
    let svg = Callback::from(|_: MouseEvent| {
        download_text("listwatch.svg", "image/svg+xml", &svg_markup(VIEW))
    });
    let png = Callback::from(|_: MouseEvent| download_png("listwatch.png", &svg_markup(VIEW)));
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
