//! The script editor (CodeMirror 6, bundled from `web/editor/main.js`) and its diagnostics:
//! underlined in the text with the message on hover, marked in the gutter, and listed below.
//! Every edit re-runs the scenario.

use std::cell::RefCell;
use std::rc::Rc;

use listwatch_script::Diagnostic;
use wasm_bindgen::prelude::*;
use yew::prelude::*;

#[wasm_bindgen(module = "/editor/bundle.js")]
extern "C" {
    type EditorView;
    fn create_editor(
        parent: &web_sys::Element,
        text: &str,
        readonly: bool,
        on_change: &Closure<dyn Fn(String)>,
    ) -> EditorView;
    fn set_text(view: &EditorView, text: &str);
    fn set_diagnostics(view: &EditorView, list: JsValue);
    fn destroy(view: &EditorView);
}

#[derive(Properties, PartialEq)]
pub struct Props {
    pub source: String,
    pub diagnostics: Vec<Diagnostic>,
    pub stale: bool,
    pub on_edit: Callback<String>,
    pub readonly: bool,
}

type Handle = Rc<RefCell<Option<(EditorView, Closure<dyn Fn(String)>)>>>;

#[function_component(Editor)]
pub fn editor(p: &Props) -> Html {
    let host = use_node_ref();
    let handle: Handle = use_mut_ref(|| None);
    // Latest callback, read by the editor's change listener.
    let on_edit = use_mut_ref(|| p.on_edit.clone());
    *on_edit.borrow_mut() = p.on_edit.clone();

    {
        let (host, handle, on_edit) = (host.clone(), handle.clone(), on_edit.clone());
        let (source, readonly) = (p.source.clone(), p.readonly);
        use_effect_with((), move |_| {
            if let Some(el) = host.cast::<web_sys::Element>() {
                let cb =
                    Closure::<dyn Fn(String)>::new(move |text: String| on_edit.borrow().emit(text));
                let view = create_editor(&el, &source, readonly, &cb);
                *handle.borrow_mut() = Some((view, cb));
            }
            let handle = handle.clone();
            move || {
                if let Some((view, _cb)) = handle.borrow_mut().take() {
                    destroy(&view);
                }
            }
        });
    }
    // Text from elsewhere (the gallery, a link, the explorer) replaces the editor's.
    {
        let handle = handle.clone();
        use_effect_with(p.source.clone(), move |source| {
            if let Some((view, _)) = handle.borrow().as_ref() {
                set_text(view, source);
            }
        });
    }
    {
        let handle = handle.clone();
        use_effect_with(p.diagnostics.clone(), move |diags| {
            if let Some((view, _)) = handle.borrow().as_ref() {
                let list = web_sys::js_sys::Array::new();
                for d in diags {
                    let msg = match &d.help {
                        Some(h) => format!("{} ({h})", d.message),
                        None => d.message.clone(),
                    };
                    let item = web_sys::js_sys::Array::of4(
                        &(d.line as f64).into(),
                        &(d.col as f64).into(),
                        &(d.len as f64).into(),
                        &msg.into(),
                    );
                    list.push(&item);
                }
                set_diagnostics(view, list.into());
            }
        });
    }
    html! {
        <div class="editor-box">
            <div class="editor-wrap" data-testid="editor" ref={host} />
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
