//! The Explore panel: runs the explorer in a Web Worker (the page never freezes), shows its
//! progress, cancels it, and lists what it finds; each failure opens in the editor. Drawn by
//! `web/panels.js` (DOM text and attributes only), which keeps the page's wasm small.

use wasm_bindgen::prelude::*;
use yew::prelude::*;

use super::objects::{call, with_module};
use crate::state::{Action, State};

#[derive(Properties, PartialEq)]
pub struct Props {
    pub source: String,
    pub dispatch: UseReducerDispatcher<State>,
}

#[function_component(ExplorePanel)]
pub fn explore_panel(p: &Props) -> Html {
    let host = use_node_ref();
    {
        let (host, d) = (host.clone(), p.dispatch.clone());
        use_effect_with((), move |_| {
            with_module(move |m| {
                let open =
                    Closure::<dyn Fn(String)>::new(move |s: String| d.dispatch(Action::Edit(s)))
                        .into_js_value();
                if let Some(el) = host.get() {
                    call(m, "explore", &[el.into(), open]);
                }
            });
        });
    }
    use_effect_with(p.source.clone(), |src| {
        let src = src.clone();
        with_module(move |m| call(m, "explore_source", &[src.into()]));
    });
    html! { <div class="explore-host" ref={host} /> }
}
