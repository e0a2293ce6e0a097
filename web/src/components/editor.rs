//! The script editor and its diagnostics. Until someone edits, the script is shown highlighted,
//! with its diagnostics underlined (the message on hover) and listed below; the first focus or
//! click loads CodeMirror 6 (bundled from `web/editor/main.js` into `editor.js`), which keeps the
//! same highlighting and shows diagnostics inline and in its gutter. Loading it on demand keeps
//! the page's first load small; read-only embeds never need it. Every edit re-runs the scenario.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use listwatch_script::{syntax, Diagnostic};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::js_sys::{Array, Function, Promise, Reflect};
use yew::prelude::*;

#[wasm_bindgen(
    inline_js = "export function load_editor() { return import(new URL('editor.js', document.baseURI).href); }"
)]
extern "C" {
    fn load_editor() -> Promise;
}

/// The loaded module and the editor it made.
struct Live {
    module: JsValue,
    view: JsValue,
    _on_change: Closure<dyn Fn(String)>,
}

impl Live {
    fn call(&self, name: &str, args: &[JsValue]) {
        let Ok(f) = Reflect::get(&self.module, &name.into()).and_then(|f| f.dyn_into::<Function>())
        else {
            return;
        };
        let list = Array::new();
        list.push(&self.view);
        for a in args {
            list.push(a);
        }
        let _ = f.apply(&JsValue::NULL, &list);
    }
}

#[derive(Properties, PartialEq)]
pub struct Props {
    pub source: String,
    pub diagnostics: Vec<Diagnostic>,
    pub stale: bool,
    pub on_edit: Callback<String>,
    pub readonly: bool,
}

/// The language's words, so the editor highlights exactly as the preview and the parser know it.
fn vocabulary() -> JsValue {
    let list = |words: &[&[&str]]| {
        words
            .iter()
            .flat_map(|w| w.iter())
            .map(|w| JsValue::from_str(w))
            .collect::<Array>()
    };
    let o = web_sys::js_sys::Object::new();
    let _ = Reflect::set(
        &o,
        &"keywords".into(),
        &list(&[syntax::STATEMENTS, syntax::WORDS]),
    );
    let _ = Reflect::set(
        &o,
        &"atoms".into(),
        &list(&[syntax::ACTIONS, syntax::BEHAVIOURS]),
    );
    o.into()
}

fn diagnostics_js(diags: &[Diagnostic]) -> JsValue {
    let list = Array::new();
    for d in diags {
        let msg = match &d.help {
            Some(h) => format!("{} ({h})", d.message),
            None => d.message.clone(),
        };
        list.push(&Array::of4(
            &(d.line as f64).into(),
            &(d.col as f64).into(),
            &(d.len as f64).into(),
            &msg.into(),
        ));
    }
    list.into()
}

#[function_component(Editor)]
pub fn editor(p: &Props) -> Html {
    let host = use_node_ref();
    let live: Rc<RefCell<Option<Live>>> = use_mut_ref(|| None);
    let loading = use_memo((), |_| Cell::new(false));
    let loaded = use_state(|| false);
    // What the editor is created with: the latest text, and the latest callback for its edits.
    let latest = use_mut_ref(|| (p.source.clone(), p.diagnostics.clone(), p.on_edit.clone()));
    *latest.borrow_mut() = (p.source.clone(), p.diagnostics.clone(), p.on_edit.clone());

    let activate = {
        let (host, live, loading, loaded, latest) = (
            host.clone(),
            live.clone(),
            loading.clone(),
            loaded.clone(),
            latest.clone(),
        );
        let readonly = p.readonly;
        Callback::from(move |_: ()| {
            if readonly || loading.get() {
                return;
            }
            loading.set(true);
            let (host, live, loaded, latest) =
                (host.clone(), live.clone(), loaded.clone(), latest.clone());
            wasm_bindgen_futures::spawn_local(async move {
                let Ok(module) = wasm_bindgen_futures::JsFuture::from(load_editor()).await else {
                    return;
                };
                let Some(el) = host.cast::<web_sys::Element>() else {
                    return;
                };
                let (text, diags, _) = latest.borrow().clone();
                let on_edit = latest.clone();
                let cb =
                    Closure::<dyn Fn(String)>::new(move |t: String| on_edit.borrow().2.emit(t));
                let Ok(create) = Reflect::get(&module, &"create_editor".into())
                    .and_then(|f| f.dyn_into::<Function>())
                else {
                    return;
                };
                let args = Array::of5(&el, &text.into(), &false.into(), cb.as_ref(), &vocabulary());
                let Ok(view) = create.apply(&JsValue::NULL, &args) else {
                    return;
                };
                let l = Live {
                    module,
                    view,
                    _on_change: cb,
                };
                l.call("set_diagnostics", &[diagnostics_js(&diags)]);
                if let Ok(focus) =
                    Reflect::get(&l.view, &"focus".into()).and_then(|f| f.dyn_into::<Function>())
                {
                    let _ = focus.call0(&l.view);
                }
                // CodeMirror's scroller is keyboard-reachable like the rest of the page's regions.
                if let Ok(Some(scroller)) = el.query_selector(".cm-scroller") {
                    let _ = scroller.set_attribute("tabindex", "0");
                    let _ = scroller.set_attribute("role", "region");
                    let _ = scroller.set_attribute("aria-label", "Scenario script editor");
                }
                *live.borrow_mut() = Some(l);
                loaded.set(true);
            });
        })
    };
    {
        let live = live.clone();
        use_effect_with((), move |_| {
            move || {
                if let Some(l) = live.borrow_mut().take() {
                    l.call("destroy", &[]);
                }
            }
        });
    }
    // Text from elsewhere (the gallery, a link, the explorer) replaces the editor's.
    {
        let live = live.clone();
        use_effect_with(p.source.clone(), move |source| {
            if let Some(l) = live.borrow().as_ref() {
                l.call("set_text", &[source.into()]);
            }
        });
    }
    {
        let live = live.clone();
        use_effect_with(p.diagnostics.clone(), move |diags| {
            if let Some(l) = live.borrow().as_ref() {
                l.call("set_diagnostics", &[diagnostics_js(diags)]);
            }
        });
    }
    let on_focus = {
        let a = activate.clone();
        Callback::from(move |_: FocusEvent| a.emit(()))
    };
    let on_down = {
        let a = activate.clone();
        Callback::from(move |_: MouseEvent| a.emit(()))
    };
    let preview = (!*loaded).then(|| {
        let lines = p.source.split('\n').enumerate().map(|(i, line)| {
            let n = i + 1;
            let marks: Vec<&Diagnostic> = p.diagnostics.iter().filter(|d| d.line == n).collect();
            html! {
                <div class={classes!("pv-line", (!marks.is_empty()).then_some("pv-bad"))}>
                    <span class="pv-num" aria-hidden="true">{n}</span>
                    <span class="pv-text">{ for syntax::highlight(line).into_iter().map(|(start, text, token)| {
                        let class = token.class();
                        let end = start + text.chars().count();
                        let hit = marks.iter().find(|d| d.col <= start + 1 && start < d.col - 1 + d.len.max(1) && end > d.col - 1);
                        match hit {
                            Some(d) => html! { <span class={classes!(class, "lint-error")} title={d.message.clone()}>{text}</span> },
                            None => html! { <span class={class}>{text}</span> },
                        }
                    }) }</span>
                </div>
            }
        });
        html! {
            <div class="pv" tabindex="0" role="textbox" aria-readonly={p.readonly.to_string()}
                aria-label={if p.readonly { "Scenario script" } else { "Scenario script (focus to edit)" }}
                onfocus={on_focus} onmousedown={on_down}>
                { for lines }
            </div>
        }
    });
    html! {
        <div class="editor-box">
            <div class="editor-wrap" data-testid="editor" data-loaded={loaded.to_string()} ref={host}>
                { for preview }
            </div>
            if p.stale {
                <div class="stale">{"The script has errors: showing the last good run."}</div>
            }
            <ul data-testid="diagnostics" class="diagnostics">
                { for p.diagnostics.iter().map(|d| html! {
                    <li data-line={d.line.to_string()} data-col={d.col.to_string()}>
                        <b>{format!("line {}:{}", d.line, d.col)}</b>{" "}{&d.message}
                        if let Some(h) = &d.help { <span class="hint">{" — "}{h}</span> }
                    </li>
                }) }
            </ul>
        </div>
    }
}
