//! Export: the trace as JSON (the CLI's `--json` document), the view as SVG and PNG, and a
//! Markdown snippet (image plus link) for docs and bug reports. The files are written by
//! `export.js` (through `panels.js`, loaded on the first export); the JSON in the explorer's
//! worker, which holds serde_json, so the page's first load stays small.

use yew::prelude::*;

use super::objects::{call, string_callback, with_module};
use crate::link;
use crate::reducer::Latest;
use crate::state::{Action, Page};

/// Saves the view at this moment as `svg` or `png` (`panels.js`).
fn download_view(kind: &'static str) {
    with_module(move |m| call(m, "download_view", &[kind.into()]));
}

#[derive(Properties, PartialEq)]
pub struct Props {
    /// Read when a button is clicked: the export never re-renders with the clock.
    pub latest: Latest,
}

#[function_component(Export)]
pub fn export(p: &Props) -> Html {
    let latest = p.latest.clone();
    // `export.js` writes it in the worker and saves it; a newer click cancels an older export.
    let json = Callback::from(move |_: MouseEvent| {
        let Some(st) = latest.get().filter(|st| st.run.is_some()) else {
            return;
        };
        let (d, script) = (st.dispatcher(), st.source.to_string());
        let notice = string_callback(Callback::from(move |n| {
            d.dispatch(Action::Page(Page::Notice(Some(n))))
        }));
        with_module(move |m| call(m, "export_json", &[script.into(), notice]));
    });
    let svg = Callback::from(|_: MouseEvent| download_view("svg"));
    let png = Callback::from(|_: MouseEvent| download_view("png"));
    let latest = p.latest.clone();
    let markdown = Callback::from(move |_: MouseEvent| {
        let Some(st) = latest.get() else { return };
        let title = st.run.as_ref().map(|r| r.title.clone()).unwrap_or_default();
        let href = crate::app::share_href(&st);
        let alt = title.replace(['[', ']'], "");
        let md = format!("![{alt}](listwatch.png)\n\n[Open this scenario in listwatch]({href})\n");
        link::copy_to_clipboard(&md);
        st.dispatch(Action::Page(Page::Notice(Some(
            "Markdown copied (save the PNG beside it as listwatch.png)".into(),
        ))));
    });
    html! {
        <div class="export" role="group" aria-label="Export">
            <span class="hint">{"Export: "}</span>
            <button data-testid="export-json" onclick={json} title="The trace as JSON (the CLI's --json)">{"trace JSON"}</button>
            <button data-testid="export-svg" onclick={svg} title="The view at this moment as SVG">{"SVG"}</button>
            <button data-testid="export-png" onclick={png} title="The view at this moment as PNG">{"PNG"}</button>
            <button data-testid="export-markdown" onclick={markdown} title="A Markdown snippet: the image and a link">{"Markdown"}</button>
        </div>
    }
}
