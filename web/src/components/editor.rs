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
use web_sys::js_sys::{Array, Function, Reflect};
use yew::prelude::*;

use crate::state::{Page, Ptr};

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
    pub source: Rc<str>,
    /// Compared by pointer: the state makes a new list only when they change (`State::load`).
    pub diagnostics: Ptr<Vec<Diagnostic>>,
    pub stale: bool,
    /// CodeMirror has replaced the preview (`State::editor_loaded`).
    pub loaded: bool,
    /// The text edited (`Script::Edit`); a read-only editor sends none.
    pub on_edit: Callback<String>,
    /// Says `Page::EditorLoaded` once CodeMirror is in place.
    pub on_page: Callback<Page>,
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
        &list(&[syntax::STATEMENTS, syntax::WORDS, syntax::LOGIC_WORDS]),
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

/// A script and its diagnostics, shared with the page's state.
type Text = (Rc<str>, Ptr<Vec<Diagnostic>>);

/// What loading CodeMirror needs: where it goes, where the editor is kept, the latest text and
/// diagnostics, and where its edits go.
#[derive(Clone)]
struct Load {
    host: NodeRef,
    live: Rc<RefCell<Option<Live>>>,
    latest: Rc<RefCell<Text>>,
    on_edit: Callback<String>,
    on_page: Callback<Page>,
}

/// Loads CodeMirror (`editor.js`), creates the editor in the host with the latest text and
/// focuses it if the preview still has the focus (a reader who tabbed on while it loaded keeps
/// their place: taking the focus back made a Tab walk visit the script and what follows it
/// twice); says `Page::EditorLoaded` once it is in place.
async fn load_codemirror(l: Load) {
    let Ok(module) = wasm_bindgen_futures::JsFuture::from(crate::js::load_editor()).await else {
        return;
    };
    let Some(el) = l.host.cast::<web_sys::Element>() else {
        return;
    };
    let (text, diags) = l.latest.borrow().clone();
    let on_edit = l.on_edit.clone();
    let cb = Closure::<dyn Fn(String)>::new(move |t: String| on_edit.emit(t));
    let Ok(create) =
        Reflect::get(&module, &"create_editor".into()).and_then(|f| f.dyn_into::<Function>())
    else {
        return;
    };
    let args = Array::of5(
        &el,
        &JsValue::from_str(&text),
        &false.into(),
        cb.as_ref(),
        &vocabulary(),
    );
    let Ok(view) = create.apply(&JsValue::NULL, &args) else {
        return;
    };
    let live = Live {
        module,
        view,
        _on_change: cb,
    };
    live.call("set_diagnostics", &[diagnostics_js(&diags)]);
    let focused = web_sys::window()
        .and_then(|w| w.document())
        .and_then(|d| d.active_element())
        .is_some_and(|a| el.contains(Some(&a)));
    let focus = Reflect::get(&live.view, &"focus".into()).and_then(|f| f.dyn_into::<Function>());
    if let (true, Ok(focus)) = (focused, focus) {
        let _ = focus.call0(&live.view);
    }
    // CodeMirror's scroller is keyboard-reachable like the rest of the page's regions.
    if let Ok(Some(scroller)) = el.query_selector(".cm-scroller") {
        let _ = scroller.set_attribute("tabindex", "0");
        let _ = scroller.set_attribute("role", "region");
        let _ = scroller.set_attribute("aria-label", "Scenario script editor");
    }
    *l.live.borrow_mut() = Some(live);
    l.on_page.emit(Page::EditorLoaded);
}

/// Keeps a loaded editor in step with the props: text from elsewhere (the gallery, a link, the
/// explorer) replaces its text, and diagnostics are drawn in it; destroys it on unmount.
#[hook]
fn use_live_sync(
    live: &Rc<RefCell<Option<Live>>>,
    source: &Rc<str>,
    diagnostics: &Ptr<Vec<Diagnostic>>,
) {
    {
        let live = live.clone();
        super::use_mount(Box::new(move || {
            Box::new(move || {
                if let Some(l) = live.borrow_mut().take() {
                    l.call("destroy", &[]);
                }
            })
        }));
    }
    {
        let live = live.clone();
        use_effect_with(source.clone(), move |source| {
            if let Some(l) = live.borrow().as_ref() {
                l.call("set_text", &[JsValue::from_str(source)]);
            }
        });
    }
    let live = live.clone();
    use_effect_with(diagnostics.clone(), move |diags| {
        if let Some(l) = live.borrow().as_ref() {
            l.call("set_diagnostics", &[diagnostics_js(diags)]);
        }
    });
}

/// The script highlighted, its diagnostics underlined (the message on hover), until CodeMirror
/// replaces it.
fn preview(p: &Props, activate: &Callback<()>) -> Html {
    let on_focus = activate.reform(|_: FocusEvent| ());
    let on_down = activate.reform(|_: MouseEvent| ());
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
}

/// A script shown in the preview opens at its first statement, not at the comments above it:
/// the box scrolls so that line is at its top (the comments stay a scroll up).
#[hook]
fn use_first_statement(host: &NodeRef, source: &Rc<str>, loaded: bool) {
    let host = host.clone();
    use_effect_with((source.clone(), loaded), move |(source, loaded)| {
        let first = source
            .split('\n')
            .position(|l| !l.trim().is_empty() && !l.trim_start().starts_with('#'));
        let wrap = host.cast::<web_sys::HtmlElement>();
        if let (false, Some(n), Some(wrap)) = (*loaded, first, wrap) {
            let line = wrap
                .query_selector(&format!(".pv-line:nth-child({})", n + 1))
                .ok()
                .flatten();
            if let Some(line) = line {
                let top = line.get_bounding_client_rect().top()
                    - wrap.get_bounding_client_rect().top()
                    + wrap.scroll_top() as f64;
                wrap.set_scroll_top(top as i32);
            }
        }
    });
}

#[function_component(Editor)]
pub fn editor(p: &Props) -> Html {
    let host = use_node_ref();
    let live: Rc<RefCell<Option<Live>>> = use_mut_ref(|| None);
    let loading = use_memo((), |_| Cell::new(false));
    // What the editor is created with: the latest text and diagnostics.
    let latest = use_mut_ref(|| (p.source.clone(), p.diagnostics.clone()));
    *latest.borrow_mut() = (p.source.clone(), p.diagnostics.clone());
    let activate = {
        let load = Load {
            host: host.clone(),
            live: live.clone(),
            latest,
            on_edit: p.on_edit.clone(),
            on_page: p.on_page.clone(),
        };
        let readonly = p.readonly;
        Callback::from(move |_: ()| {
            if readonly || loading.get() {
                return;
            }
            loading.set(true);
            wasm_bindgen_futures::spawn_local(load_codemirror(load.clone()));
        })
    };
    use_live_sync(&live, &p.source, &p.diagnostics);
    let loaded = p.loaded && !p.readonly;
    use_first_statement(&host, &p.source, loaded);
    html! {
        <div class="editor-box">
            <div class="editor-wrap" data-testid="editor" data-loaded={loaded.to_string()} ref={host}>
                if !loaded { { preview(p, &activate) } }
            </div>
            if p.stale {
                // Stale without errors: this text's run is being computed, or was cancelled.
                <div class="stale">{if p.diagnostics.is_empty() { "Showing the last finished run: this script's own is not on screen yet." } else { "The script has errors: showing the last good run." }}</div>
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
