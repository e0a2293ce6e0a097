//! The script editor and its diagnostics. Every edit re-runs the scenario.

use listwatch_script::Diagnostic;
use wasm_bindgen::JsCast;
use yew::prelude::*;

#[derive(Properties, PartialEq)]
pub struct Props {
    pub source: String,
    pub diagnostics: Vec<Diagnostic>,
    pub stale: bool,
    pub on_edit: Callback<String>,
    pub readonly: bool,
}

#[function_component(Editor)]
pub fn editor(p: &Props) -> Html {
    let oninput = {
        let on_edit = p.on_edit.clone();
        Callback::from(move |e: InputEvent| {
            if let Some(t) = e
                .target()
                .and_then(|t| t.dyn_into::<web_sys::HtmlTextAreaElement>().ok())
            {
                on_edit.emit(t.value());
            }
        })
    };
    let bad_lines: Vec<usize> = p.diagnostics.iter().map(|d| d.line).collect();
    let lines = p.source.lines().count().max(1);
    html! {
        <div class="editor-box">
            <div class="editor-wrap">
                <pre class="gutter" aria-hidden="true">{
                    for (1..=lines).map(|n| html! {
                        <span class={classes!(bad_lines.contains(&n).then_some("bad"))}>{format!("{n}\n")}</span>
                    })
                }</pre>
                <textarea data-testid="editor" aria-label="Scenario script" spellcheck="false"
                    readonly={p.readonly} value={p.source.clone()} {oninput} />
            </div>
            if p.stale {
                <div class="stale">{"The script has errors: showing the last good run."}</div>
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
