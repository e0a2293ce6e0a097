//! "Paste your logs": the header's button opens the dialog of `listwatch import`, which
//! `web/import.js` draws (loaded on the first click, through `panels.js`) and whose importer runs
//! in the explorer's worker, so neither the dialog nor the importer is in the page's first load.
//! The scenario it makes opens as a link's does: the script it replaces is kept for Restore.

use wasm_bindgen::JsValue;
use yew::prelude::*;

use super::objects::{call, string_callback, with_module};
use crate::state::{Action, State};

#[derive(Properties, PartialEq)]
pub struct Props {
    pub dispatch: UseReducerDispatcher<State>,
}

#[function_component(ImportButton)]
pub fn import_button(p: &Props) -> Html {
    // The dialog's one JS callback (`open:SCRIPT`), made on the first click.
    let on = use_mut_ref(|| None::<JsValue>);
    let d = p.dispatch.clone();
    let onclick = Callback::from(move |_: MouseEvent| {
        let d = d.clone();
        let cb = on
            .borrow_mut()
            .get_or_insert_with(|| {
                string_callback(Callback::from(move |said: String| {
                    if let Some(script) = said.strip_prefix("open:") {
                        d.dispatch(Action::OpenImported(script.to_string()))
                    }
                }))
            })
            .clone();
        with_module(move |m| call(m, "import_logs", &[cb]));
    });
    html! {
        <button data-testid="import-logs" title="Turn client-go log lines, audit events or watch-cache metrics into a scenario" {onclick}>{"Paste your logs"}</button>
    }
}
