//! The page: gallery and editor on the left, the animated view, controls, timeline and panels on
//! the right. Keyboard: Space play/pause, arrows step, `?` help; never while typing in the editor.

use gloo_timers::callback::Interval;
use wasm_bindgen::JsCast;
use yew::prelude::*;

use crate::components::{
    controls::Controls, editor::Editor, panels::*, system::SystemView, timeline::TimelineView,
};
use crate::state::{Action, State};

const AUTOSAVE_KEY: &str = "listwatch.script";

fn storage() -> Option<web_sys::Storage> {
    web_sys::window()?.local_storage().ok()?
}

fn initial_script() -> String {
    storage()
        .and_then(|s| s.get_item(AUTOSAVE_KEY).ok().flatten())
        .filter(|s| !s.trim().is_empty())
        .unwrap_or_else(|| {
            listwatch_script::gallery::GALLERY
                .iter()
                .find(|(n, _)| n.contains("overflow"))
                .or(listwatch_script::gallery::GALLERY.first())
                .map(|(_, s)| s.to_string())
                .unwrap_or_default()
        })
}

#[function_component(App)]
pub fn app() -> Html {
    let state = use_reducer(|| State::new(initial_script()));

    // Autosave the text on every change.
    {
        let source = state.source.clone();
        use_effect_with(source, |source| {
            if let Some(s) = storage() {
                let _ = s.set_item(AUTOSAVE_KEY, source);
            }
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

    // Keyboard shortcuts on the document.
    {
        let dispatch = state.dispatcher();
        let playing = state.playing;
        use_effect_with(playing, move |playing| {
            let playing = *playing;
            let doc = web_sys::window().and_then(|w| w.document());
            let cb = wasm_bindgen::closure::Closure::<dyn Fn(web_sys::KeyboardEvent)>::new(
                move |e: web_sys::KeyboardEvent| {
                    let in_editor = e
                        .target()
                        .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
                        .is_some_and(|el| {
                            matches!(el.tag_name().as_str(), "TEXTAREA" | "INPUT" | "SELECT")
                        });
                    if in_editor {
                        return;
                    }
                    match e.key().as_str() {
                        " " => {
                            e.prevent_default();
                            dispatch.dispatch(if playing { Action::Pause } else { Action::Play });
                        }
                        "ArrowLeft" => dispatch.dispatch(Action::StepBack),
                        "ArrowRight" => dispatch.dispatch(Action::StepForward),
                        "?" => dispatch.dispatch(Action::ToggleHelp),
                        _ => {}
                    }
                },
            );
            if let Some(d) = &doc {
                let _ = d.add_event_listener_with_callback("keydown", cb.as_ref().unchecked_ref());
            }
            move || {
                if let Some(d) = doc {
                    let _ = d.remove_event_listener_with_callback(
                        "keydown",
                        cb.as_ref().unchecked_ref(),
                    );
                }
            }
        });
    }

    let on_edit = {
        let dispatch = state.dispatcher();
        Callback::from(move |s: String| dispatch.dispatch(Action::Edit(s)))
    };
    let view = state.view();
    html! {
        <div class="app">
            <header>
                <h1>{"listwatch"}</h1>
                <span class="tagline">{"Kubernetes list-then-watch, visible"}</span>
                <Gallery on_pick={on_edit.clone()} />
                <button class="help-button" aria-label="Keyboard help" onclick={{
                    let d = state.dispatcher();
                    move |_| d.dispatch(Action::ToggleHelp)
                }}>{"?"}</button>
            </header>
            if state.help {
                <div class="help" role="dialog">
                    <p><kbd>{"Space"}</kbd>{" play / pause · "}<kbd>{"←"}</kbd><kbd>{"→"}</kbd>{" step one event · "}<kbd>{"?"}</kbd>{" this help"}</p>
                    <p>{"Shortcuts do nothing while the editor has focus. Click any marker or event to see why it happened."}</p>
                </div>
            }
            <main>
                <section class="left">
                    <Editor source={state.source.clone()} diagnostics={state.diagnostics.clone()} stale={state.stale} on_edit={on_edit} />
                    <Expectations state={state.clone()} />
                </section>
                <section class="right">
                    if let (Some(run), Some(view)) = (state.run.clone(), view) {
                        <div class="title">{ &run.title }</div>
                        <Controls state={state.clone()} />
                        <SystemView run={run.clone()} view={view.clone()} cursor={state.cursor} />
                        <Narration run={run.clone()} view={view} />
                        <TimelineView state={state.clone()} />
                        <Explanation state={state.clone()} />
                    } else {
                        <p class="empty">{"Fix the script's errors to see it run."}</p>
                    }
                </section>
            </main>
        </div>
    }
}
