//! "Paste your logs": the header's button opens the dialog of `listwatch import`, which
//! `web/import.js` draws (loaded on the first click, through `panels.js`) and whose importer runs
//! in the explorer's worker, so neither the dialog nor the importer is in the page's first load.
//! The scenario it makes opens as a link's does: the script it replaces is kept for Restore.
//! A plain function rather than a component of its own: a component costs the first load more.

use std::cell::RefCell;

use wasm_bindgen::JsValue;
use yew::prelude::*;

use super::objects::{call, string_callback, with_module};
use crate::state::Script;

thread_local! {
    /// The dialog's one JS callback (`open:SCRIPT`), made on the first click.
    static ON_OPEN: RefCell<Option<JsValue>> = const { RefCell::new(None) };
}

/// The header's button; the scenario made opens with `Script::OpenImported`.
pub fn button(on_script: &Callback<Script>) -> Html {
    let on_script = on_script.clone();
    let onclick = Callback::from(move |_: MouseEvent| {
        let on_script = on_script.clone();
        let on = ON_OPEN.with(|on| {
            (on.borrow_mut().get_or_insert_with(|| {
                string_callback(Callback::from(move |said: String| {
                    if let Some(script) = said.strip_prefix("open:") {
                        on_script.emit(Script::OpenImported(script.to_string()))
                    }
                }))
            }))
            .clone()
        });
        with_module(move |m| call(m, "import_logs", &[on]));
    });
    html! {
        <button data-testid="import-logs" title="Turn client-go log lines, audit events or watch-cache metrics into a scenario" {onclick}>{"Paste your logs"}</button>
    }
}
