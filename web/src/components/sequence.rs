//! The sequence view's place: `panels.js` draws its disclosure, and `web/sequence.js`, loaded
//! when it first opens, draws lanes for etcd, each apiserver, each reflector and each controller
//! with every request, response and event as an arrow at its time, following the moment on screen
//! (a click on an arrow jumps there). Its trace comes from the explorer's worker, so neither
//! the drawing nor the trace's JSON is part of the first load.

use std::rc::Rc;

use wasm_bindgen::JsValue;
use yew::prelude::*;

use super::objects::{call, string_callback, with_module};
use crate::state::Moment;

#[derive(Properties, PartialEq)]
pub struct Props {
    /// The script of the run on screen.
    pub source: Rc<str>,
    pub cursor: usize,
    /// The run's length in events.
    pub events: usize,
    /// An arrow clicked is jumped to (`Moment::JumpTo`).
    pub on_moment: Callback<Moment>,
}

#[function_component(SequencePanel)]
pub fn sequence_panel(p: &Props) -> Html {
    let host = use_node_ref();
    let on_jump = {
        let on = p.on_moment.clone();
        use_memo((), move |_| {
            string_callback(Callback::from(move |id: String| {
                if let Ok(id) = id.parse::<u32>() {
                    on.emit(Moment::JumpTo(id));
                }
            }))
        })
    };
    {
        let host = host.clone();
        use_effect_with(
            (p.source.clone(), p.cursor, p.events),
            move |(source, cursor, events)| {
                let (source, cursor, events) = (source.clone(), *cursor, *events);
                let on_jump = (*on_jump).clone();
                if let Some(el) = host.cast::<web_sys::Element>() {
                    with_module(move |m| {
                        let args = [
                            el.into(),
                            JsValue::from_str(&source),
                            (cursor as f64).into(),
                            (events as f64).into(),
                            on_jump,
                        ];
                        call(m, "sequence", &args)
                    });
                }
            },
        );
    }
    html! { <div class="sequence-panel" data-testid="sequence-panel" ref={host} /> }
}
