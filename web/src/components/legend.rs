//! The legend: what each colour and shape of the picture and the timeline means. Each swatch is
//! drawn with the very classes the picture uses, so it follows the theme and never drifts from
//! it; each has its words beside it, so colour is never the only signal.

use yew::prelude::*;

/// (swatch, words): a swatch is a small SVG fragment drawn in a 28×16 box.
fn entry(swatch: Html, words: &'static str) -> Html {
    html! {
        <li>
            <svg class="legend-swatch" viewBox="0 0 28 16" width="28" height="16" aria-hidden="true">{swatch}</svg>
            <span>{words}</span>
        </li>
    }
}

fn mark(class: &'static str) -> Html {
    html! { <rect class={classes!("legend-mark", class)} x="12" y="2" width="4" height="12" /> }
}

fn slot(class: &'static str) -> Html {
    html! { <circle class={classes!("slot", class)} cx="14" cy="8" r="6" /> }
}

fn state(lit: bool) -> Html {
    html! { <g class={classes!("state", lit.then_some("lit"))}><rect x="1" y="1" width="26" height="14" rx="7" /></g> }
}

fn chip(class: &'static str, text: &'static str) -> Html {
    html! {
        <g class={class}><rect x="1" y="1" width="26" height="14" rx="3" /><text x="5" y="12" class="legend-chip-text">{text}</text></g>
    }
}

fn dot(class: &'static str) -> Html {
    html! { <><line class="legend-link" x1="0" y1="8" x2="28" y2="8" /><circle class={class} cx="14" cy="8" r="5" /></> }
}

#[function_component(Legend)]
pub fn legend() -> Html {
    html! {
        <details class="legend" data-testid="legend">
            <summary>{"Legend"}</summary>
            <div class="legend-groups">
                <section aria-label="Watch cache">
                    <h3>{"Watch cache"}</h3>
                    <ul>
                        { entry(slot("filled"), "an event the cache holds") }
                        { entry(slot("entering"), "an event arriving") }
                        { entry(slot("evicting"), "the oldest event, evicted") }
                        { entry(slot(""), "a free slot") }
                        { entry(html! { <g class="cache paused">{slot("filled")}</g> }, "held while the cache is paused") }
                    </ul>
                </section>
                <section aria-label="Watchers and links">
                    <h3>{"Watchers and links"}</h3>
                    <ul>
                        { entry(state(true), "the reflector's state now (lit, bold)") }
                        { entry(state(false), "a state it is not in") }
                        { entry(html! { <g class="watcher gone"><g class="state lit"><rect x="1" y="1" width="26" height="14" rx="7" /></g></g> }, "410 Gone: flashes, with the message") }
                        { entry(dot("msg msg-request"), "a request going up to the apiserver") }
                        { entry(dot("msg"), "a watch event coming down") }
                        { entry(dot("msg msg-bookmark"), "a bookmark") }
                        { entry(dot("msg msg-error"), "an error (410, 429, 504)") }
                        { entry(html! { <g class="link cut"><line x1="0" y1="8" x2="28" y2="8" /></g> }, "a link cut (dashed): disconnected or crashed") }
                    </ul>
                </section>
                <section aria-label="Work queue">
                    <h3>{"Work queue"}</h3>
                    <ul>
                        { entry(chip("chip", "a"), "a key waiting") }
                        { entry(chip("chip running", "a"), "a reconcile running (bold)") }
                        { entry(chip("chip running stale", "a!"), "it read a stale copy (\"!\", dashed)") }
                    </ul>
                </section>
                <section aria-label="Timeline">
                    <h3>{"Timeline"}</h3>
                    <ul>
                        { entry(mark("m-gone"), "410 Gone") }
                        { entry(mark("m-relist"), "a relist") }
                        { entry(mark("m-reconcile"), "a reconcile") }
                        { entry(mark("m-write"), "a write to etcd") }
                        { entry(mark("m-fault"), "a fault") }
                        { entry(mark("m-say"), "narration") }
                        { entry(html! { <rect class="window" x="0" y="0" width="28" height="16" /> }, "a fault's window (shaded)") }
                    </ul>
                </section>
            </div>
        </details>
    }
}
