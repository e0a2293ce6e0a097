//! The legend: what each colour and shape of the picture and the timeline means. Each swatch has
//! its own `lg-` classes, styled from the same theme variables as the picture (style.css), so it
//! follows the theme while the picture's classes (`.msg`, `.mark`, `.slot`, ...) stay the
//! picture's alone for whoever counts them; each has its words beside it, so colour is never the
//! only signal.

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
    html! { <rect class={classes!("lg-mark", class)} x="12" y="2" width="4" height="12" /> }
}

fn slot(class: &'static str) -> Html {
    html! { <circle class={classes!("lg-slot", class)} cx="14" cy="8" r="6" /> }
}

fn state(class: &'static str) -> Html {
    html! { <rect class={classes!("lg-state", class)} x="1" y="1" width="26" height="14" rx="7" /> }
}

fn chip(class: &'static str, text: &'static str) -> Html {
    html! {
        <g class={classes!("lg-chip", class)}><rect x="1" y="1" width="26" height="14" rx="3" /><text x="5" y="12">{text}</text></g>
    }
}

fn dot(class: &'static str) -> Html {
    html! { <><line class="lg-link" x1="0" y1="8" x2="28" y2="8" /><circle class={classes!("lg-msg", class)} cx="14" cy="8" r="5" /></> }
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
                        { entry(slot("lg-filled"), "an event the cache holds") }
                        { entry(slot("lg-entering"), "an event arriving") }
                        { entry(slot("lg-evicting"), "the oldest event, evicted") }
                        { entry(slot(""), "a free slot") }
                        { entry(slot("lg-paused"), "held while the cache is paused") }
                    </ul>
                </section>
                <section aria-label="Watchers and links">
                    <h3>{"Watchers and links"}</h3>
                    <ul>
                        { entry(state("lg-lit"), "the reflector's state now (lit, bold)") }
                        { entry(state(""), "a state it is not in") }
                        { entry(state("lg-gone"), "410 Gone: flashes, with the message") }
                        { entry(dot("lg-request"), "a request going up to the apiserver") }
                        { entry(dot(""), "a watch event coming down") }
                        { entry(dot("lg-bookmark"), "a bookmark") }
                        { entry(dot("lg-error"), "an error (410, 429, 504)") }
                        { entry(html! { <line class="lg-link lg-cut" x1="0" y1="8" x2="28" y2="8" /> }, "a link cut (dashed): disconnected or crashed") }
                    </ul>
                </section>
                <section aria-label="Work queue">
                    <h3>{"Work queue"}</h3>
                    <ul>
                        { entry(chip("", "a"), "a key waiting") }
                        { entry(chip("lg-running", "a"), "a reconcile running (bold)") }
                        { entry(chip("lg-running lg-stale", "a!"), "it read a stale copy (\"!\", dashed)") }
                    </ul>
                </section>
                <section aria-label="Timeline">
                    <h3>{"Timeline"}</h3>
                    <ul>
                        { entry(mark("lg-gone"), "410 Gone") }
                        { entry(mark("lg-relist"), "a relist") }
                        { entry(mark("lg-reconcile"), "a reconcile") }
                        { entry(mark("lg-write"), "a write to etcd") }
                        { entry(mark("lg-fault"), "a fault") }
                        { entry(mark("lg-say"), "narration") }
                        { entry(html! { <rect class="lg-window" x="0" y="0" width="28" height="16" /> }, "a fault's window (shaded)") }
                    </ul>
                </section>
            </div>
        </details>
    }
}
