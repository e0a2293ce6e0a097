//! The page: gallery and editor on the left, the animated view, controls, timeline and panels on
//! the right; or, with `?embed`, only the view and its controls for an iframe in documentation.
//! Keyboard: Space play/pause (a focused button takes Space itself), arrows step, `?` help and
//! Escape closes it (never while typing in the editor); Ctrl/Cmd+S copies the share link,
//! Ctrl/Cmd+Enter re-runs.
//!
//! `App` holds the state (Yew's `use_reducer`) and hands each component only what it shows: the
//! run (`Rc<Loaded>`, compared by identity), the moment, and the typed callbacks of what the
//! component can do (`Intents`, made once). A clock tick therefore re-renders only what depends on
//! the moment.

use std::rc::Rc;

use gloo_events::{EventListener, EventListenerOptions};
use gloo_timers::callback::{Interval, Timeout};
use wasm_bindgen::{JsCast, JsValue};
use yew::prelude::*;

use crate::components::{
    announce::Announce,
    controls::Controls,
    editor::Editor,
    explore::ExplorePanel,
    export::Export,
    faults::FaultMenu,
    legend::Legend,
    nothing,
    objects::{History, ObjectsPanel, Tour},
    panels::*,
    sequence::SequencePanel,
    system::{Motion, SystemView, ViewRef},
    timeline::TimelineView,
    use_mount,
};
use crate::link;
use crate::reducer::Latest;
use crate::state::{
    Action, Compare, FaultTarget, Loaded, Moment, Page, Script, Search, State, Theme,
};
use crate::storage;

const AUTOSAVE_KEY: &str = "listwatch.script";
const THEME_KEY: &str = "listwatch.theme";

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
        storage::get(AUTOSAVE_KEY)
    };
    let saved = saved.filter(|s| !s.trim().is_empty());
    let fragment = if saved.is_some() && link::fragment_is_ours() {
        None
    } else {
        link::from_fragment()
    };
    let mut st = match fragment {
        Some(Ok(shared)) => {
            let mut st = State::new(shared.script.clone());
            st.kept = saved.filter(|s| *s != shared.script).map(Rc::from);
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
    };
    // The embed's own theme, else the one chosen here before; a stored word that names no
    // theme is the system's.
    let named = embed.theme.clone().or_else(|| storage::get(THEME_KEY));
    st.theme = named
        .and_then(|t| Theme::from_stored(&t))
        .unwrap_or_default();
    st
}

fn set_theme(theme: Theme) {
    if let Some(el) = web_sys::window()
        .and_then(|w| w.document())
        .and_then(|d| d.document_element())
    {
        if theme == Theme::System {
            let _ = el.remove_attribute("data-theme");
        } else {
            let _ = el.set_attribute("data-theme", theme.as_str());
        }
    }
}

/// The link that reproduces the script on screen at this moment.
pub fn share_href(state: &State) -> String {
    format!(
        "{}#{}",
        link::playground_base(),
        link::fragment_for(&state.source, state.now_ms(), state.cursor)
    )
}

fn copy_link(state: &UseReducerHandle<State>) {
    link::copy_to_clipboard(&share_href(state));
    state.dispatch(Action::Page(Page::Notice(Some(
        "Link copied to the clipboard".into(),
    ))));
}

/// The embed of the run at this moment: `panels.js` copies its iframe, as high as what it shows,
/// and embed.js, which fits the iframe to the height the embed reports.
fn copy_embed(state: &State) {
    let src = format!(
        "{}?embed#{}",
        link::playground_base(),
        link::fragment_for(&state.source, state.now_ms(), state.cursor)
    );
    crate::components::objects::with_module(move |m| {
        crate::components::objects::call(m, "copy_embed", &[src.into()])
    });
}

/// The latest state, for callbacks that read it when they run.
#[hook]
fn use_latest(state: &UseReducerHandle<State>) -> Latest {
    let latest = (*use_memo((), |_| Latest::default())).clone();
    latest.set(state);
    latest
}

/// A first visit (no link, nothing saved): the default scenario is fetched beside the page and
/// shown unless something (a link, the parent page of an embed) gave a script meanwhile.
#[hook]
fn use_first_visit(state: &UseReducerHandle<State>) {
    let dispatch = state.dispatcher();
    let empty = state.source.is_empty();
    use_mount(Box::new(move || {
        if empty {
            crate::gallery::load(crate::gallery::DEFAULT, move |src| {
                dispatch.dispatch(Action::Script(Script::FirstVisit(src)))
            });
        }
        nothing()
    }));
}

/// Autosaves the text (not in embeds: they must not touch the reader's own work), except while a
/// link's script is on screen and the autosaved one is kept aside; keeps the address bar in step
/// with the editor and the moment, debounced (embeds never rewrite it).
#[hook]
fn use_persistence(state: &UseReducerHandle<State>, embed_on: bool) {
    let on = !embed_on;
    use_effect_with(
        (state.source.clone(), state.kept.is_some()),
        move |(source, kept)| {
            if on && !*kept {
                storage::set(AUTOSAVE_KEY, source);
            }
        },
    );
    let deps = (
        state.source.clone(),
        state.now_ms(),
        state.cursor,
        state.stale,
        state.kept.is_some(),
    );
    use_effect_with(deps, move |(source, now, cursor, stale, kept)| {
        // A reload inside the debounce window finds an older fragment that this page wrote
        // itself; the autosaved text wins over it then (see `initial_state`). While a link's
        // script is shown and not yet the user's, the address stays the link, so a reload
        // shows the link again (with the autosaved text still kept).
        let write = (on && !*stale && !*kept).then(|| {
            let (source, now, cursor) = (source.clone(), *now, *cursor);
            move || link::replace_fragment(&link::fragment_for(&source, now, cursor))
        });
        let pending = write.map(|w| Timeout::new(300, w));
        move || drop(pending)
    });
    use_effect_with(state.theme, |t| set_theme(*t));
}

/// The page's timers: notices fade after two seconds, a long run is computed a slice per task
/// (input and painting run between slices), and the animation clock runs while playing.
#[hook]
fn use_timers(state: &UseReducerHandle<State>, autoplay: bool) {
    let d = state.dispatcher();
    use_effect_with(state.notice.clone(), move |n| {
        let t = n
            .is_some()
            .then(|| Timeout::new(2000, move || d.dispatch(Action::Page(Page::Notice(None)))));
        move || drop(t)
    });
    let d = state.dispatcher();
    use_effect_with(state.progress, move |p| {
        let next = p.map(|_| Timeout::new(0, move || d.dispatch(Action::Script(Script::Continue))));
        move || drop(next)
    });
    let d = state.dispatcher();
    use_effect_with(state.playing, move |playing| {
        // Each tick says how much real time passed since the last (a background tab's timers
        // slow down; a long gap counts as a quarter second, not as a jump).
        let interval = playing.then(|| {
            let last = std::cell::Cell::new(web_sys::js_sys::Date::now());
            Interval::new(crate::state::TICK_MS, move || {
                let now = web_sys::js_sys::Date::now();
                let elapsed = (now - last.replace(now)).clamp(0.0, 250.0);
                d.dispatch(Action::Moment(Moment::Tick(elapsed)));
            })
        });
        move || drop(interval)
    });
    let d = state.dispatcher();
    use_mount(Box::new(move || {
        if autoplay {
            d.dispatch(Action::Moment(Moment::Play));
        }
        nothing()
    }));
}

/// A link pasted into the address bar of an open page changes only the fragment: follow it, with
/// the same protections as on load (a broken link is reported and changes nothing). The page's
/// own address updates use `replaceState`, which fires no `hashchange`.
#[hook]
fn use_hashchange(dispatch: UseReducerDispatcher<State>, embed: &link::Embed) {
    let (embed_on, from_parent) = (embed.on, embed.from_parent);
    use_mount(Box::new(move || {
        let listener = web_sys::window().filter(|_| !from_parent).map(|w| {
            EventListener::new(&w, "hashchange", move |_| match link::from_fragment() {
                Some(Ok(shared)) => dispatch.dispatch(Action::Script(Script::OpenLink {
                    shared,
                    keep_previous: !embed_on,
                })),
                Some(Err(e)) => {
                    dispatch.dispatch(Action::Page(Page::LinkError(link_error_message(&e))))
                }
                None => {}
            })
        });
        Box::new(move || drop(listener))
    }));
}

/// Embeds opened with `source=parent` take their script from the parent page (embed.js), and
/// only from the parent window; every embed reports its height to its parent.
#[hook]
fn use_embed_messages(dispatch: UseReducerDispatcher<State>, embed: &link::Embed) {
    let on = embed.on && embed.from_parent;
    let autoplay = embed.autoplay;
    use_mount(Box::new(move || {
        let listener = web_sys::window().filter(|_| on).map(|w| {
            let window = w.clone();
            let l = EventListener::new(&w, "message", move |e| {
                let Some(e) = e.dyn_ref::<web_sys::MessageEvent>() else {
                    return;
                };
                let parent = window.parent().ok().flatten().map(JsValue::from);
                let from_parent =
                    parent.is_some_and(|p| e.source().is_some_and(|s| JsValue::from(s) == p));
                let data = e.data();
                if from_parent && js_get(&data, "listwatch").as_deref() == Some("load") {
                    if let Some(script) = js_get(&data, "script") {
                        let at_ms =
                            web_sys::js_sys::Reflect::get(&data, &JsValue::from_str("at_ms"))
                                .ok()
                                .and_then(|v| v.as_f64());
                        load_from_parent(&dispatch, script, at_ms, autoplay);
                    }
                }
            });
            if let Ok(Some(parent)) = w.parent() {
                let _ = parent.post_message(&js_object(&[("listwatch", "ready")]), "*");
            }
            l
        });
        Box::new(move || drop(listener))
    }));
    // The content's own height (`panels.js`, whenever it changes: a redraw, a panel drawn
    // later, a new width): the document's would never shrink below the iframe's.
    let on = embed.on;
    use_mount(Box::new(move || {
        let app = web_sys::window()
            .filter(|_| on)
            .and_then(|w| w.document())
            .and_then(|d| d.query_selector(".app").ok().flatten());
        if let Some(app) = app {
            crate::components::objects::with_module(move |m| {
                crate::components::objects::call(m, "report_height", &[app.into()])
            });
        }
        nothing()
    }));
}

/// The script embed.js sends, opened at the block's `at=` moment when it has one (embed.js reads
/// the block's time, `2.2s`, and sends its milliseconds), as a link's moment.
fn load_from_parent(
    dispatch: &UseReducerDispatcher<State>,
    script: String,
    at_ms: Option<f64>,
    autoplay: bool,
) {
    let Some(at_ms) = at_ms
        .filter(|ms| *ms >= 0.0)
        .map(|ms| listwatch_core::TimeMs(ms as u64))
    else {
        return dispatch.dispatch(Action::Script(Script::Edit(script)));
    };
    let at_ms = Some(at_ms);
    let shared = listwatch_script::share::Shared {
        script,
        at_ms,
        events: None,
    };
    dispatch.dispatch(Action::Script(Script::OpenLink {
        shared,
        keep_previous: false,
    }));
    // Opening at a moment pauses, as a link does; an autoplaying block plays on from there.
    if autoplay {
        dispatch.dispatch(Action::Moment(Moment::Play));
    }
}

/// Keyboard shortcuts on the document, registered once: they read the latest state when a key
/// is pressed.
#[hook]
fn use_keyboard(latest: Latest) {
    use_mount(Box::new(move || {
        let doc = web_sys::window().and_then(|w| w.document());
        let options = EventListenerOptions::enable_prevent_default();
        let listener = doc.map(|d| {
            EventListener::new_with_options(&d, "keydown", options, move |e| {
                if let (Some(e), Some(st)) = (e.dyn_ref::<web_sys::KeyboardEvent>(), latest.get()) {
                    on_key(e, &st);
                }
            })
        });
        Box::new(move || drop(listener))
    }));
}

fn on_key(e: &web_sys::KeyboardEvent, st: &UseReducerHandle<State>) {
    let modifier = e.ctrl_key() || e.meta_key();
    if modifier && e.key() == "s" {
        e.prevent_default();
        copy_link(st);
        return;
    }
    if modifier && e.key() == "Enter" {
        e.prevent_default();
        st.dispatch(Action::Script(Script::Rerun));
        return;
    }
    // The editor (CodeMirror's contenteditable) and form fields keep their keys; a focused
    // button (or link, or disclosure) keeps Space, which presses it.
    let target = e
        .target()
        .and_then(|t| t.dyn_into::<web_sys::Element>().ok());
    let within = |sel: &str| {
        target
            .as_ref()
            .and_then(|el| el.closest(sel).ok().flatten())
            .is_some()
    };
    if modifier || within(".cm-editor, textarea, input, select") {
        return;
    }
    match e.key().as_str() {
        " " if within("button, a[href], summary, [role=button]") => {}
        "Escape" if st.help => st.dispatch(Action::Page(Page::ToggleHelp)),
        " " => {
            e.prevent_default();
            st.dispatch(if st.playing {
                Action::Moment(Moment::Pause)
            } else {
                Action::Moment(Moment::Play)
            });
        }
        "ArrowLeft" => st.dispatch(Action::Moment(Moment::StepBack)),
        "ArrowRight" => st.dispatch(Action::Moment(Moment::StepForward)),
        "?" => st.dispatch(Action::Page(Page::ToggleHelp)),
        _ => {}
    }
}

/// The ready signal, last of the effects (they run in order): the first render is on screen,
/// the theme applied and every listener in place. Tests wait for it after loading. On a first
/// visit that is once the default scenario has been fetched.
#[hook]
fn use_ready_signal(empty: bool) {
    use_effect_with(empty, |empty| {
        if let Some(el) = web_sys::window()
            .and_then(|w| w.document())
            .and_then(|d| d.document_element())
            .filter(|_| !*empty)
        {
            let _ = el.set_attribute("data-ready", "");
        }
    });
}

/// Everything the page does besides drawing, in order (the ready signal last).
#[hook]
fn use_effects(state: &UseReducerHandle<State>, embed: &link::Embed, latest: &Latest) {
    use_first_visit(state);
    use_persistence(state, embed.on);
    use_timers(state, embed.autoplay);
    use_hashchange(state.dispatcher(), embed);
    use_embed_messages(state.dispatcher(), embed);
    use_keyboard(latest.clone());
    use_ready_signal(state.source.is_empty());
}

/// The picture at the moment on screen, computed once per (run, moment).
#[hook]
fn use_view(state: &State) -> Option<ViewRef> {
    let run = state.run.clone();
    let cursor = state.cursor;
    (*use_memo((run.clone(), cursor), move |_| {
        run.map(|r| ViewRef(Rc::new(r.timeline.at(&r.sim, cursor))))
    }))
    .clone()
}

/// What the reader can do, as typed callbacks: one per family of actions, and the intents several
/// components share. Made once for the page's life (`use_memo`), so a component holding them
/// compares equal at every render and never re-renders for its callbacks.
struct Intents {
    moment: Callback<Moment>,
    script: Callback<Script>,
    page: Callback<Page>,
    search: Callback<Search>,
    /// The editor's text (`Script::Edit`): the editor, the history, a counterexample.
    edit: Callback<String>,
    /// Another scenario (`Script::Open`): the gallery, the tour.
    open: Callback<String>,
    /// A part of the picture clicked for its faults (`Page::FaultMenu`).
    fault: Callback<FaultTarget>,
    compare: Callback<Compare>,
}

impl Intents {
    fn new(d: &UseReducerDispatcher<State>) -> Intents {
        Intents {
            moment: to(d, Action::Moment),
            script: to(d, Action::Script),
            page: to(d, Action::Page),
            search: to(d, Action::Search),
            edit: to(d, |s| Action::Script(Script::Edit(s))),
            open: to(d, |s| Action::Script(Script::Open(s))),
            fault: to(d, |t| Action::Page(Page::FaultMenu(Some(t)))),
            compare: to(d, Action::Compare),
        }
    }
}

/// A callback that dispatches `f` of what it is given.
fn to<T: 'static>(d: &UseReducerDispatcher<State>, f: fn(T) -> Action) -> Callback<T> {
    let d = d.clone();
    Callback::from(move |x| d.dispatch(f(x)))
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
    let latest = use_latest(&state);
    use_effects(&state, &embed, &latest);
    let view = use_view(&state);
    // The same callbacks at every render: no component re-renders for them.
    let on = {
        let d = state.dispatcher();
        use_memo((), move |_| Intents::new(&d))
    };
    let stage = match (state.run.clone(), view) {
        (Some(run), Some(view)) => stage(&state, &on, &embed, run, view, &latest),
        _ if state.progress.is_some() => {
            html! { <p class="empty">{"Simulating: the run appears here when it is done."}</p> }
        }
        _ if state.cancelled.is_some() => {
            html! { <p class="empty">{"The run was cancelled: run it again to see it."}</p> }
        }
        _ => html! { <p class="empty">{"Fix the script's errors to see it run."}</p> },
    };
    let editor = |readonly| {
        html! {
            <Editor source={state.source.clone()} diagnostics={state.diagnostics.clone()} stale={state.stale}
                loaded={state.editor_loaded} on_edit={on.edit.clone()} on_page={on.page.clone()} {readonly} />
        }
    };
    if embed.on {
        return embed_page(&state, &embed, stage, editor(true));
    }

    html! {
        <div class="app">
            <Header theme={state.theme} on_page={on.page.clone()} on_script={on.script.clone()} on_open={on.open.clone()} latest={latest}
                title={state.run.as_ref().map(|r| AttrValue::from(r.title.clone()))} />
            { banners(&state) }
            <main>
                <section class="left">
                    <Tour on_open={on.open.clone()} />
                    <details class="script" open={*editor_open}>
                        <summary data-testid="editor-toggle">{"Script"}</summary>
                        { editor(false) }
                    </details>
                    if let Some(run) = state.run.clone() {
                        <Expectations {run} outcomes={state.outcomes.clone()} on_moment={on.moment.clone()} />
                    }
                    <ExplorePanel source={state.source.clone()} explore={state.explore.clone()} on_search={on.search.clone()} on_edit={on.edit.clone()} />
                    <History source={state.source.clone()} on_restore={on.edit.clone()}
                        compare={state.compare.clone()} on_compare={on.compare.clone()} />
                </section>
                <section class="right">{ stage }</section>
            </main>
        </div>
    }
}

/// The page inside an iframe: the run and its controls, the script if asked, a way out. All of
/// it in one `main` landmark under one heading, as axe's landmark and heading rules ask.
fn embed_page(state: &State, embed: &link::Embed, stage: Html, editor: Html) -> Html {
    html! {
        <main class="app embed" data-testid="embed">
            <div class="embed-bar">
                <h1 class="brand">{"listwatch"}</h1>
                <a data-testid="open-in-playground" href={share_href(state)} target="_blank" rel="noopener">{"Open in playground ↗"}</a>
            </div>
            // The script's errors show even where the script does not: else a broken script
            // is an empty embed.
            if embed.show_editor || !state.diagnostics.is_empty() { { editor } }
            { stage }
        </main>
    }
}

/// The run on screen: title, controls, the picture, faults, narration, timeline and panels.
fn stage(
    state: &UseReducerHandle<State>,
    on: &Intents,
    embed: &link::Embed,
    run: Rc<Loaded>,
    view: ViewRef,
    latest: &Latest,
) -> Html {
    let on_fault = (!embed.on).then(|| on.fault.clone());
    let chosen = state
        .selected
        .or_else(|| state.cursor.checked_sub(1).map(|c| c as u32));
    html! {
        <>
            <div class="title">{ &run.title }</div>
            <Controls run={run.clone()} cursor={state.cursor} at_ms={state.at_ms} playing={state.playing} speed={state.speed} on_moment={on.moment.clone()} />
            <CutOff run={run.clone()} />
            <Announce run={run.clone()} view={view.clone()} cursor={state.cursor} playing={state.playing} />
            <SystemView run={run.clone()} view={view.clone()} cursor={state.cursor} motion={Motion { at_ms: state.at_ms, beat: state.beat, playing: state.playing }} {on_fault} />
            if !embed.on {
                <FaultMenu run={run.clone()} menu={state.fault_menu} cursor={state.fault_menu.map(|_| state.cursor)}
                    undo={state.undo.len()} on_script={on.script.clone()} on_page={on.page.clone()} />
            }
            <Narration run={run.clone()} say={view.0.last_say} on_moment={on.moment.clone()}
                waiting={!state.playing && crate::state::waiting_at(&run, state.cursor)} />
            if !embed.on || embed.show_timeline {
                <TimelineView run={run.clone()} now_ms={listwatch_core::TimeMs(state.at_ms as u64)} on_moment={on.moment.clone()} />
            }
            if !embed.on || embed.show_explanation {
                <Explanation run={run.clone()} {chosen} playing={state.playing} on_moment={on.moment.clone()} />
            }
            // Under "Why?", not above it: at 1400x900 the picture, the timeline and "Why?" with
            // its first item fit without scrolling (issue 27); the legend is folded anyway.
            <Legend />
            if !embed.on {
                <SequencePanel source={run.source.clone()} cursor={state.cursor} events={run.sim.trace().len()} on_moment={on.moment.clone()} />
                <ObjectsPanel source={run.source.clone()} cursor={state.cursor} on_moment={on.moment.clone()} />
                <Export latest={latest.clone()} />
            }
        </>
    }
}

#[derive(Properties, PartialEq)]
struct HeaderProps {
    theme: Theme,
    /// The run's title, which the gallery names.
    title: Option<AttrValue>,
    /// The theme chosen and the keyboard help.
    on_page: Callback<Page>,
    /// A scenario made from pasted logs (`Script::OpenImported`).
    on_script: Callback<Script>,
    /// A gallery scenario picked (`Script::Open`).
    on_open: Callback<String>,
    latest: Latest,
}

/// The header: the gallery, copying links, the theme and the keyboard help.
#[function_component(Header)]
fn header(p: &HeaderProps) -> Html {
    let on_theme = {
        let on = p.on_page.clone();
        Callback::from(move |e: Event| {
            if let Some(sel) = e
                .target()
                .and_then(|t| t.dyn_into::<web_sys::HtmlSelectElement>().ok())
            {
                if let Some(t) = Theme::from_stored(&sel.value()) {
                    storage::set(THEME_KEY, t.as_str());
                    on.emit(Page::Theme(t));
                }
            }
        })
    };
    let latest = p.latest.clone();
    let copy = Callback::from(move |_: MouseEvent| {
        if let Some(st) = latest.get() {
            copy_link(&st)
        }
    });
    let latest = p.latest.clone();
    let copy_embed = Callback::from(move |_: MouseEvent| {
        if let Some(st) = latest.get() {
            copy_embed(&st);
            st.dispatch(Action::Page(Page::Notice(Some(
                "Embed code copied to the clipboard".into(),
            ))));
        }
    });
    let help = p.on_page.reform(|_: MouseEvent| Page::ToggleHelp);
    html! {
        <header>
            <h1>{"listwatch"}</h1>
            <span class="tagline">{"Kubernetes list-then-watch, visible"}</span>
            <Gallery on_open={p.on_open.clone()} title={p.title.clone()} />
            { crate::components::import::button(&p.on_script) }
            <button data-testid="copy-link" title="Copy a link that reproduces this scenario at this moment (Ctrl/Cmd+S)" onclick={copy}>{"Copy link"}</button>
            <button data-testid="copy-embed" title="Copy an iframe snippet for documentation" onclick={copy_embed}>{"Copy embed code"}</button>
            <label class="theme">{"Theme "}
                <select aria-label="Theme" onchange={on_theme}>
                    { for Theme::ALL.iter().map(|t| html! { <option value={t.as_str()} selected={p.theme == *t}>{t.as_str()}</option> }) }
                </select>
            </label>
            <button class="help-button" aria-label="Keyboard help" onclick={help}>{"?"}</button>
        </header>
    }
}

/// The banners under the header: a link that failed, a kept script, notices, a run being
/// computed, the keyboard help.
fn banners(state: &UseReducerHandle<State>) -> Html {
    let on = |a: fn() -> Action| {
        let d = state.dispatcher();
        Callback::from(move |_: MouseEvent| d.dispatch(a()))
    };
    html! {
        <>
            if let Some(msg) = &state.link_error {
                <div class="banner" role="alert" data-testid="link-error">{msg}
                    <button onclick={on(|| Action::Page(Page::DismissLinkError))}>{"Dismiss"}</button>
                </div>
            }
            if state.kept.is_some() {
                <div class="banner kept" role="status" data-testid="restore-notice">
                    <span>{if state.imported { "This is the scenario made from your logs. Your previous script is kept: " } else { "This is the script from the link. Your previous script is kept: " }}</span>
                    <button data-testid="restore" title="Put your previous script back in the editor" onclick={on(|| Action::Script(Script::Restore))}>{"Restore"}</button>
                    <button data-testid="accept-link" title="Keep this script: it replaces your previous one" onclick={on(|| Action::Script(Script::AcceptLink))}>{if state.imported { "Keep the imported scenario" } else { "Keep the link's script" }}</button>
                </div>
            }
            if let Some(n) = &state.notice { <div class="notice" role="status">{n}</div> }
            if let Some(p) = state.progress {
                <div class="banner computing" role="status" data-testid="computing">
                    <progress data-testid="computing-progress" aria-label="Virtual time simulated"
                        max="1000" value={p.permille().to_string()} />
                    <span>{format!(
                        "Simulating… {} so far. The page stays usable; the run appears when it is done.",
                        how_far(p)
                    )}</span>
                    <button data-testid="computing-cancel" title="Stop this run; the last finished run stays on screen" onclick={on(|| Action::Script(Script::CancelRun))}>{"Cancel"}</button>
                </div>
            }
            if let Some(p) = state.cancelled {
                <div class="banner computing" role="status" data-testid="run-cancelled">
                    <span>{format!("Run cancelled after {}.", how_far(p))}</span>
                    <button data-testid="run-again" title="Run the script from the start (Ctrl/Cmd+Enter)" onclick={on(|| Action::Script(Script::Rerun))}>{"Run it again"}</button>
                </div>
            }
            if state.help {
                <div class="help" role="dialog" aria-label="Keyboard help">
                    <p>{"Space: play / pause · ← →: step one event · ?: this help (Esc closes it) · Ctrl/Cmd+S: copy link · Ctrl/Cmd+Enter: re-run"}</p>
                    <p>{"Space, arrows and ? do nothing while the editor has focus; on a focused button, Space presses it. Click any marker or event to see why it happened."}</p>
                </div>
            }
        </>
    }
}

/// How far a run being computed went: `120,000 events, 12.000s of 86400.000s virtual time`.
fn how_far(p: crate::state::Progress) -> String {
    format!(
        "{} events, {} of {} virtual time",
        crate::components::panels::thousands(p.events),
        p.now_ms,
        p.end_ms
    )
}

/// `obj[key]` as a string.
fn js_get(obj: &JsValue, key: &str) -> Option<String> {
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
