//! The page: gallery and editor on the left, the animated view, controls, timeline and panels on
//! the right; or, with `?embed`, only the view and its controls for an iframe in documentation.
//! Keyboard: Space play/pause, arrows step, `?` help (never while typing in the editor);
//! Ctrl/Cmd+S copies the share link, Ctrl/Cmd+Enter re-runs.

use gloo_timers::callback::{Interval, Timeout};
use wasm_bindgen::closure::Closure;
use wasm_bindgen::{JsCast, JsValue};
use yew::prelude::*;

use crate::components::{
    controls::Controls,
    editor::Editor,
    explore::ExplorePanel,
    export::Export,
    faults::FaultMenu,
    objects::{History, ObjectsPanel, Tour},
    panels::*,
    system::SystemView,
    timeline::TimelineView,
};
use crate::link;
use crate::state::{Action, State};

const AUTOSAVE_KEY: &str = "listwatch.script";
const THEME_KEY: &str = "listwatch.theme";

fn storage() -> Option<web_sys::Storage> {
    web_sys::window()?.local_storage().ok()?
}

fn link_error_message(e: &listwatch_script::share::LinkError) -> String {
    format!("The link could not be opened: {e}. Your own text was kept.")
}

/// The script to start with: the link's, else the autosaved text, else the overflow scenario.
/// A broken link never replaces the autosaved text; it is reported instead. A good link's
/// script is shown, but the autosaved text stays saved (and restorable) until the user edits
/// the link's script or keeps it.
fn initial_state(embed: &link::Embed) -> State {
    let saved = if embed.on {
        None
    } else {
        storage().and_then(|s| s.get_item(AUTOSAVE_KEY).ok().flatten())
    };
    let saved = saved.filter(|s| !s.trim().is_empty());
    let fragment = if saved.is_some() && link::fragment_is_ours() {
        None
    } else {
        link::from_fragment()
    };
    match fragment {
        Some(Ok(shared)) => {
            let mut st = State::new(shared.script.clone());
            st.kept = saved.filter(|s| *s != shared.script);
            // Same script: this only places the moment.
            st.open_link(shared, false);
            st
        }
        Some(Err(e)) => {
            let mut st = State::new(saved.unwrap_or_default());
            st.link_error = Some(link_error_message(&e));
            st
        }
        // With nothing saved, the overflow scenario is fetched (see `App`).
        None => State::new(saved.unwrap_or_default()),
    }
}

fn set_theme(theme: &str) {
    if let Some(el) = web_sys::window()
        .and_then(|w| w.document())
        .and_then(|d| d.document_element())
    {
        if theme == "system" {
            let _ = el.remove_attribute("data-theme");
        } else {
            let _ = el.set_attribute("data-theme", theme);
        }
    }
}

fn copy_link(state: &UseReducerHandle<State>) {
    let href = format!(
        "{}#{}",
        link::playground_base(),
        link::fragment_for(&state.source, state.now_ms())
    );
    link::copy_to_clipboard(&href);
    state.dispatch(Action::Notice(Some("Link copied to the clipboard".into())));
}

fn embed_code(state: &State) -> String {
    let src = format!(
        "{}?embed#{}",
        link::playground_base(),
        link::fragment_for(&state.source, state.now_ms())
    );
    format!("<iframe src=\"{src}\" width=\"100%\" height=\"640\" style=\"border:0\" title=\"listwatch scenario\" loading=\"lazy\"></iframe>")
}

#[function_component(App)]
pub fn app() -> Html {
    let embed = use_memo((), |_| link::embed_options());
    // On a narrow screen the script starts folded away: the picture comes first.
    let editor_open = use_memo((), |_| {
        web_sys::window()
            .and_then(|w| w.inner_width().ok())
            .and_then(|w| w.as_f64())
            .is_none_or(|w| w > 900.0)
    });
    let state = {
        let embed = embed.clone();
        use_reducer(move || initial_state(&embed))
    };
    // A first visit: no link, nothing saved. The default scenario is fetched beside the page
    // and shown unless something (a link, the parent page of an embed) gave a script meanwhile.
    {
        let dispatch = state.dispatcher();
        let empty = state.source.is_empty();
        use_effect_with((), move |_| {
            if empty {
                crate::gallery::load(crate::gallery::DEFAULT, move |src| {
                    dispatch.dispatch(Action::DefaultScript(src))
                });
            }
        });
    }
    let theme = use_state(|| {
        embed
            .theme
            .clone()
            .or_else(|| storage().and_then(|s| s.get_item(THEME_KEY).ok().flatten()))
            .unwrap_or_else(|| "system".into())
    });
    use_effect_with((*theme).clone(), |t| set_theme(t));

    // Autosave the text (not in embeds: they must not touch the reader's own work), except
    // while a link's script is on screen and the autosaved one is kept aside.
    {
        let on = !embed.on;
        use_effect_with(
            (state.source.clone(), state.kept.is_some()),
            move |(source, kept)| {
                if on && !*kept {
                    if let Some(s) = storage() {
                        let _ = s.set_item(AUTOSAVE_KEY, source);
                    }
                }
            },
        );
    }

    // The address bar follows the editor and the moment, debounced; embeds never rewrite it.
    {
        let on = !embed.on;
        let deps = (
            state.source.clone(),
            state.now_ms(),
            state.stale,
            state.kept.is_some(),
        );
        use_effect_with(deps, move |(source, now, stale, kept)| {
            // A reload inside the debounce window finds an older fragment that this page wrote
            // itself; the autosaved text wins over it then (see `initial_state`). While a link's
            // script is shown and not yet the user's, the address stays the link, so a reload
            // shows the link again (with the autosaved text still kept).
            let write = (on && !*stale && !*kept).then(|| {
                let (source, now) = (source.clone(), *now);
                move || link::replace_fragment(&link::fragment_for(&source, now))
            });
            let pending = write.map(|w| Timeout::new(300, w));
            move || drop(pending)
        });
    }

    // Notices fade after two seconds.
    {
        let st = state.clone();
        use_effect_with(state.notice.clone(), move |n| {
            let t = n
                .is_some()
                .then(|| Timeout::new(2000, move || st.dispatch(Action::Notice(None))));
            move || drop(t)
        });
    }

    // A long run is computed a slice at a time, each in its own task, so input and painting
    // run between slices (no main-thread task of more than a slice's work).
    {
        let dispatch = state.dispatcher();
        use_effect_with(state.progress, move |p| {
            let next = p.map(|_| Timeout::new(0, move || dispatch.dispatch(Action::Continue)));
            move || drop(next)
        });
    }
    // The animation clock: only runs while playing.
    {
        let dispatch = state.dispatcher();
        use_effect_with(state.playing, move |playing| {
            let interval =
                playing.then(|| Interval::new(50, move || dispatch.dispatch(Action::Tick(50.0))));
            move || drop(interval)
        });
    }
    {
        let dispatch = state.dispatcher();
        let autoplay = embed.autoplay;
        use_effect_with((), move |_| {
            if autoplay {
                dispatch.dispatch(Action::Play);
            }
        });
    }

    // A link pasted into the address bar of an open page changes only the fragment: follow it,
    // with the same protections as on load (a broken link is reported and changes nothing).
    // The page's own address updates use `replaceState`, which fires no `hashchange`.
    {
        let dispatch = state.dispatcher();
        let (embed_on, from_parent) = (embed.on, embed.from_parent);
        use_effect_with((), move |_| {
            let w = web_sys::window().filter(|_| !from_parent);
            let cb = Closure::<dyn Fn(Event)>::new(move |_: Event| match link::from_fragment() {
                Some(Ok(shared)) => dispatch.dispatch(Action::OpenLink {
                    shared,
                    keep_previous: !embed_on,
                }),
                Some(Err(e)) => dispatch.dispatch(Action::LinkError(link_error_message(&e))),
                None => {}
            });
            if let Some(w) = &w {
                let _ =
                    w.add_event_listener_with_callback("hashchange", cb.as_ref().unchecked_ref());
            }
            move || {
                if let Some(w) = w {
                    let _ = w.remove_event_listener_with_callback(
                        "hashchange",
                        cb.as_ref().unchecked_ref(),
                    );
                }
            }
        });
    }

    // Embeds: take the script from the parent page (embed.js), and report our height to it.
    {
        let st = state.clone();
        // Only an embed opened with `source=parent` takes a script by message, and only from
        // its parent window.
        let on = embed.on && embed.from_parent;
        use_effect_with((), move |_| {
            let window = web_sys::window().filter(|_| on);
            let cb =
                Closure::<dyn Fn(web_sys::MessageEvent)>::new(move |e: web_sys::MessageEvent| {
                    let from_parent = window
                        .as_ref()
                        .and_then(|w| w.parent().ok().flatten())
                        .is_some_and(|p| {
                            e.source()
                                .is_some_and(|s| JsValue::from(s) == JsValue::from(p))
                        });
                    if !from_parent {
                        return;
                    }
                    let data = e.data();
                    let kind = js_sys_get(&data, "listwatch");
                    if kind.as_deref() == Some("load") {
                        if let Some(script) = js_sys_get(&data, "script") {
                            st.dispatch(Action::Edit(script));
                        }
                    }
                });
            let w = web_sys::window().filter(|_| on);
            if let Some(w) = &w {
                let _ = w.add_event_listener_with_callback("message", cb.as_ref().unchecked_ref());
                if let Ok(Some(parent)) = w.parent() {
                    let msg = js_object(&[("listwatch", "ready")]);
                    let _ = parent.post_message(&msg, "*");
                }
            }
            move || {
                if let Some(w) = w {
                    let _ = w.remove_event_listener_with_callback(
                        "message",
                        cb.as_ref().unchecked_ref(),
                    );
                }
            }
        });
    }
    {
        let on = embed.on;
        use_effect(move || {
            if let Some(w) = web_sys::window().filter(|_| on) {
                // The content's own height: the document's would never shrink below the iframe's.
                let height = w
                    .document()
                    .and_then(|d| d.query_selector(".app").ok().flatten())
                    .map(|e| e.get_bounding_client_rect().height().ceil() as i32 + 16)
                    .unwrap_or(0);
                if let Ok(Some(parent)) = w.parent() {
                    let msg =
                        js_object(&[("listwatch", "height"), ("height", &height.to_string())]);
                    let _ = parent.post_message(&msg, "*");
                }
            }
        });
    }

    // Keyboard shortcuts on the document.
    {
        let st = state.clone();
        let playing = state.playing;
        use_effect_with(
            (playing, state.source.clone(), state.cursor),
            move |(playing, _, _)| {
                let playing = *playing;
                let doc = web_sys::window().and_then(|w| w.document());
                let cb = Closure::<dyn Fn(web_sys::KeyboardEvent)>::new(
                    move |e: web_sys::KeyboardEvent| {
                        let modifier = e.ctrl_key() || e.meta_key();
                        if modifier && e.key() == "s" {
                            e.prevent_default();
                            copy_link(&st);
                            return;
                        }
                        if modifier && e.key() == "Enter" {
                            e.prevent_default();
                            st.dispatch(Action::Rerun);
                            return;
                        }
                        // The editor (CodeMirror's contenteditable) and form fields keep their keys.
                        let typing = e
                            .target()
                            .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
                            .and_then(|el| el.closest(".cm-editor, textarea, input, select").ok())
                            .flatten()
                            .is_some();
                        if typing || modifier {
                            return;
                        }
                        match e.key().as_str() {
                            " " => {
                                e.prevent_default();
                                st.dispatch(if playing { Action::Pause } else { Action::Play });
                            }
                            "ArrowLeft" => st.dispatch(Action::StepBack),
                            "ArrowRight" => st.dispatch(Action::StepForward),
                            "?" => st.dispatch(Action::ToggleHelp),
                            _ => {}
                        }
                    },
                );
                if let Some(d) = &doc {
                    let _ =
                        d.add_event_listener_with_callback("keydown", cb.as_ref().unchecked_ref());
                }
                move || {
                    if let Some(d) = doc {
                        let _ = d.remove_event_listener_with_callback(
                            "keydown",
                            cb.as_ref().unchecked_ref(),
                        );
                    }
                }
            },
        );
    }

    // The ready signal, last of the effects (they run in order): the first render is on
    // screen, the theme applied and every listener in place. Tests wait for it after loading.
    // On a first visit that is once the default scenario has been fetched.
    use_effect_with(state.source.is_empty(), |empty| {
        if let Some(el) = web_sys::window()
            .and_then(|w| w.document())
            .and_then(|d| d.document_element())
            .filter(|_| !*empty)
        {
            let _ = el.set_attribute("data-ready", "");
        }
    });

    let on_edit = {
        let dispatch = state.dispatcher();
        Callback::from(move |s: String| dispatch.dispatch(Action::Edit(s)))
    };
    let view = state.view();
    let stage = match (state.run.clone(), view) {
        (Some(run), Some(view)) => html! {
            <>
                <div class="title">{ &run.title }</div>
                <Controls state={state.clone()} />
                <CutOff run={run.clone()} />
                <SystemView run={run.clone()} view={view.clone()} cursor={state.cursor} on_fault={(!embed.on).then(|| {
                    let d = state.dispatcher();
                    Callback::from(move |t| d.dispatch(Action::FaultMenu(Some(t))))
                })} />
                if !embed.on { <FaultMenu state={state.clone()} /> }
                <Narration run={run.clone()} view={view} />
                if !embed.on || embed.show_timeline { <TimelineView state={state.clone()} /> }
                if !embed.on || embed.show_explanation { <Explanation state={state.clone()} /> }
                if !embed.on { <ObjectsPanel state={state.clone()} /> }
                if !embed.on { <Export state={state.clone()} /> }
            </>
        },
        _ if state.progress.is_some() => {
            html! { <p class="empty">{"Simulating: the run appears here when it is done."}</p> }
        }
        _ => html! { <p class="empty">{"Fix the script's errors to see it run."}</p> },
    };
    if embed.on {
        let open = format!(
            "{}#{}",
            link::playground_base(),
            link::fragment_for(&state.source, state.now_ms())
        );
        return html! {
            <div class="app embed" data-testid="embed">
                <div class="embed-bar">
                    <span class="brand">{"listwatch"}</span>
                    <a data-testid="open-in-playground" href={open} target="_blank" rel="noopener">{"Open in playground ↗"}</a>
                </div>
                if embed.show_editor {
                    <Editor source={state.source.clone()} diagnostics={state.diagnostics.clone()} stale={state.stale} on_edit={Callback::noop()} readonly=true />
                }
                { stage }
            </div>
        };
    }
    let on_theme = {
        let theme = theme.clone();
        Callback::from(move |e: Event| {
            if let Some(sel) = e
                .target()
                .and_then(|t| t.dyn_into::<web_sys::HtmlSelectElement>().ok())
            {
                let v = sel.value();
                if let Some(s) = storage() {
                    let _ = s.set_item(THEME_KEY, &v);
                }
                theme.set(v);
            }
        })
    };
    let copy = {
        let st = state.clone();
        Callback::from(move |_: MouseEvent| copy_link(&st))
    };
    let copy_embed = {
        let st = state.clone();
        Callback::from(move |_: MouseEvent| {
            link::copy_to_clipboard(&embed_code(&st));
            st.dispatch(Action::Notice(Some(
                "Embed code copied to the clipboard".into(),
            )));
        })
    };
    html! {
        <div class="app">
            <header>
                <h1>{"listwatch"}</h1>
                <span class="tagline">{"Kubernetes list-then-watch, visible"}</span>
                <Gallery on_pick={on_edit.clone()} />
                <button data-testid="copy-link" title="Copy a link that reproduces this scenario at this moment (Ctrl/Cmd+S)" onclick={copy}>{"Copy link"}</button>
                <button data-testid="copy-embed" title="Copy an iframe snippet for documentation" onclick={copy_embed}>{"Copy embed code"}</button>
                <label class="theme">{"Theme "}
                    <select aria-label="Theme" onchange={on_theme}>
                        { for ["system", "light", "dark"].iter().map(|t| html! { <option value={*t} selected={*theme == *t}>{*t}</option> }) }
                    </select>
                </label>
                <button class="help-button" aria-label="Keyboard help" onclick={{
                    let d = state.dispatcher();
                    move |_| d.dispatch(Action::ToggleHelp)
                }}>{"?"}</button>
            </header>
            if let Some(msg) = &state.link_error {
                <div class="banner" role="alert" data-testid="link-error">{msg}
                    <button onclick={{ let d = state.dispatcher(); move |_| d.dispatch(Action::DismissLinkError) }}>{"Dismiss"}</button>
                </div>
            }
            if state.kept.is_some() {
                <div class="banner kept" role="status" data-testid="restore-notice">
                    <span>{"This is the script from the link. Your previous script is kept: "}</span>
                    <button data-testid="restore" title="Put your previous script back in the editor" onclick={{ let d = state.dispatcher(); move |_| d.dispatch(Action::Restore) }}>{"Restore"}</button>
                    <button data-testid="accept-link" title="Keep the link's script: it replaces your previous one" onclick={{ let d = state.dispatcher(); move |_| d.dispatch(Action::AcceptLink) }}>{"Keep the link's script"}</button>
                </div>
            }
            if let Some(n) = &state.notice { <div class="notice" role="status">{n}</div> }
            if let Some(p) = state.progress {
                <div class="banner computing" role="status" data-testid="computing">
                    {format!(
                        "Simulating… {} events so far, {} of {} virtual time. The page stays usable; the run appears when it is done.",
                        crate::components::panels::thousands(p.events),
                        listwatch_core::format_ms(p.now_ms),
                        listwatch_core::format_ms(p.end_ms)
                    )}
                </div>
            }
            if state.help {
                <div class="help" role="dialog" aria-label="Keyboard help">
                    <p><kbd>{"Space"}</kbd>{" play / pause · "}<kbd>{"←"}</kbd><kbd>{"→"}</kbd>{" step one event · "}<kbd>{"?"}</kbd>{" this help · "}<kbd>{"Ctrl/Cmd+S"}</kbd>{" copy link · "}<kbd>{"Ctrl/Cmd+Enter"}</kbd>{" re-run"}</p>
                    <p>{"Space, arrows and ? do nothing while the editor has focus. Click any marker or event to see why it happened."}</p>
                </div>
            }
            <main>
                <section class="left">
                    <Tour on_pick={on_edit.clone()} />
                    <details class="script" open={*editor_open}>
                        <summary data-testid="editor-toggle">{"Script"}</summary>
                        <Editor source={state.source.clone()} diagnostics={state.diagnostics.clone()} stale={state.stale} on_edit={on_edit.clone()} readonly=false />
                    </details>
                    <Expectations state={state.clone()} />
                    <ExplorePanel state={state.clone()} />
                    <History source={state.source.clone()} on_restore={on_edit.clone()} />
                </section>
                <section class="right">{ stage }</section>
            </main>
        </div>
    }
}

/// `obj[key]` as a string.
fn js_sys_get(obj: &JsValue, key: &str) -> Option<String> {
    if !obj.is_object() {
        return None;
    }
    web_sys::js_sys::Reflect::get(obj, &JsValue::from_str(key))
        .ok()?
        .as_string()
}

/// A plain object of string fields, for postMessage.
fn js_object(pairs: &[(&str, &str)]) -> JsValue {
    let o = web_sys::js_sys::Object::new();
    for (k, v) in pairs {
        let _ = web_sys::js_sys::Reflect::set(&o, &JsValue::from_str(k), &JsValue::from_str(v));
    }
    o.into()
}
