//! Export: the trace as JSON (the CLI's `--json` document), the view as SVG and PNG, and a
//! Markdown snippet (image plus link) for docs and bug reports.

use std::cell::RefCell;
use std::rc::Rc;

use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::js_sys::{Object, Reflect};
use yew::prelude::*;

const WORKER_URL: &str = "./explore_worker_loader.js";
type Running = Option<(web_sys::Worker, Closure<dyn Fn(web_sys::MessageEvent)>)>;

use crate::link;
use crate::state::{Action, State};

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
    pub state: UseReducerHandle<State>,
}

#[function_component(Export)]
pub fn export(p: &Props) -> Html {
    // The JSON is written in the explorer's worker (loaded on demand), which holds serde: the
    // page's first load stays small.
    let busy: Rc<RefCell<Running>> = use_mut_ref(|| None);
    let json = {
        let st = p.state.clone();
        let busy = busy.clone();
        Callback::from(move |_: MouseEvent| {
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
            let job = Object::new();
            let _ = Reflect::set(&job, &"script".into(), &JsValue::from_str(&st.source));
            let _ = Reflect::set(&job, &"export".into(), &JsValue::TRUE);
            let (me, done, st2) = (w.clone(), busy.clone(), st.clone());
            let onmessage =
                Closure::<dyn Fn(web_sys::MessageEvent)>::new(move |e: web_sys::MessageEvent| {
                    let d = e.data();
                    let get = |k: &str| {
                        Reflect::get(&d, &k.into())
                            .ok()
                            .and_then(|v| v.as_string())
                            .unwrap_or_default()
                    };
                    match get("kind").as_str() {
                        "ready" => {
                            let _ = me.post_message(&job);
                        }
                        "export" => {
                            download_text("listwatch-trace.json", "application/json", &get("json"));
                            me.terminate();
                        }
                        _ => {
                            st2.dispatch(Action::Notice(Some(format!(
                                "The export failed: {}",
                                get("message")
                            ))));
                            me.terminate();
                        }
                    }
                    let _ = &done;
                });
            w.set_onmessage(Some(onmessage.as_ref().unchecked_ref()));
            *busy.borrow_mut() = Some((w, onmessage));
        })
    };
    let svg = Callback::from(|_: MouseEvent| {
        download_text("listwatch.svg", "image/svg+xml", &svg_markup(VIEW))
    });
    let png = Callback::from(|_: MouseEvent| download_png("listwatch.png", &svg_markup(VIEW)));
    let markdown = {
        let st = p.state.clone();
        Callback::from(move |_: MouseEvent| {
            let title = st.run.as_ref().map(|r| r.title.clone()).unwrap_or_default();
            let href = format!(
                "{}#{}",
                link::playground_base(),
                link::fragment_for(&st.source, st.now_ms())
            );
            let alt = title.replace(['[', ']'], "");
            let md =
                format!("![{alt}](listwatch.png)\n\n[Open this scenario in listwatch]({href})\n");
            link::copy_to_clipboard(&md);
            st.dispatch(Action::Notice(Some(
                "Markdown copied (save the PNG beside it as listwatch.png)".into(),
            )));
        })
    };
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
