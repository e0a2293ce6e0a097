//! The legend: what each colour and shape of the picture and the timeline means. `panels.js`
//! draws its disclosure (`legend`), whose contents (`legend.js`) load when it first opens: as Yew
//! markup it cost the first load 2.6 KB gzipped; this component only gives it its place.

use yew::prelude::*;

use super::objects::{call, with_module};

#[function_component(Legend)]
pub fn legend() -> Html {
    let host = use_node_ref();
    {
        let host = host.clone();
        super::use_mount(Box::new(move || {
            with_module(move |m| {
                if let Some(el) = host.get() {
                    call(m, "legend", &[el.into()]);
                }
            });
            super::nothing()
        }));
    }
    html! { <div class="legend-host" ref={host} /> }
}
