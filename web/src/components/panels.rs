//! The gallery menu, narration, the expectations panel and the "Why?" explanation.

use std::rc::Rc;

use listwatch_core::analysis::EsrOutcome;
use listwatch_core::verdict::{explain, Outcome};
use listwatch_core::EventId;
use listwatch_script::Expectation;
use wasm_bindgen::JsCast;
use yew::prelude::*;

use crate::state::{Loaded, Moment, Ptr};

#[derive(Properties, PartialEq)]
pub struct GalleryProps {
    /// A scenario picked opens (`Script::Open`).
    pub on_open: Callback<String>,
    /// The title of the run on screen: the menu names the gallery scenario it is.
    #[prop_or_default]
    pub title: Option<AttrValue>,
}

#[function_component(Gallery)]
pub fn gallery(p: &GalleryProps) -> Html {
    // The file whose script was last fetched and handed over (tests and readers can wait for it).
    let loaded = use_state(String::new);
    let onchange = {
        let (on_open, loaded) = (p.on_open.clone(), loaded.clone());
        Callback::from(move |e: Event| {
            let Some(sel) = e
                .target()
                .and_then(|t| t.dyn_into::<web_sys::HtmlSelectElement>().ok())
            else {
                return;
            };
            if let Some((file, _)) = sel
                .value()
                .parse::<usize>()
                .ok()
                .and_then(|i| crate::gallery::INDEX.get(i))
            {
                let (on_open, loaded) = (on_open.clone(), loaded.clone());
                crate::gallery::load(file, move |src| {
                    on_open.emit(src);
                    loaded.set(file.to_string());
                });
            }
        })
    };
    // The incidents (titles "Incident: …") under their own heading, each fix twin just after its
    // incident (the files are in that order; its title says it is the fix).
    let (incidents, rest): (Vec<_>, Vec<_>) = (crate::gallery::INDEX.iter().enumerate())
        .partition(|(_, (_, title))| title.starts_with("Incident:"));
    // The scenario on screen is the one the menu names (by its title).
    let named = |t: &str| p.title.as_deref() == Some(t);
    let option = |(i, (name, title)): (usize, &(&str, &str))| {
        html! { <option value={i.to_string()} data-file={name.to_string()} selected={named(title)}>{*title}</option> }
    };
    html! {
        <label class="gallery">{"Gallery "}
            <select data-testid="gallery" aria-label="Gallery" data-loaded={(*loaded).clone()} {onchange}>
                <option value="" selected={!crate::gallery::INDEX.iter().any(|(_, t)| named(t))} disabled=true>{"choose a scenario…"}</option>
                <optgroup label="Scenarios">{ for rest.into_iter().map(option) }</optgroup>
                <optgroup label="Incidents: public reports reproduced">{ for incidents.into_iter().map(option) }</optgroup>
            </select>
        </label>
    }
}

#[derive(Properties, PartialEq)]
pub struct NarrationProps {
    pub run: Rc<Loaded>,
    /// The last `say` at the moment on screen.
    pub say: Option<EventId>,
    /// Playback stopped at this `say "..." and wait`: offer to continue.
    pub waiting: bool,
    /// Continue (`Moment::Play`).
    pub on_moment: Callback<Moment>,
}

#[function_component(Narration)]
pub fn narration(p: &NarrationProps) -> Html {
    let resume = p.on_moment.reform(|_: MouseEvent| Moment::Play);
    match p.say {
        Some(id) => html! {
            <div class="say" aria-live="polite">
                {listwatch_core::describe(&p.run.sim.trace()[id as usize].kind, &p.run.sim)}
                if p.waiting {
                    <button class="say-continue" data-testid="narration-continue" onclick={resume}
                        aria-label="Continue playing">{"Continue ▶"}</button>
                }
            </div>
        },
        None => html! { <div class="say empty-say" aria-live="polite" /> },
    }
}

#[derive(Properties, PartialEq)]
pub struct ExpectationsProps {
    pub run: Rc<Loaded>,
    /// The text's expectations, checked against `run`: compared by pointer (the state makes a
    /// new list when it checks them again; comparing their contents cost 1.5 KB of wasm).
    pub outcomes: Ptr<Vec<(Expectation, Outcome)>>,
    /// A click jumps to the moment that decided an expectation (`Moment::JumpTo`).
    pub on_moment: Callback<Moment>,
}

#[function_component(Expectations)]
pub fn expectations(p: &ExpectationsProps) -> Html {
    let run = &p.run;
    // ESR is the run's, judged once by the core (`Analysis::esr`). A run cut off at the event
    // cap never reached its end: whether the system would have settled is unknown, so ESR is
    // not judged, whatever the verdict says of the part that ran.
    let esr_judged = !matches!(run.analysis.esr, EsrOutcome::NotJudged { .. });
    let esr = listwatch_core::verdict::esr_verdict(&run.sim, run.analysis.esr);
    let cut = cut_at(&run.sim);
    html! {
        <div data-testid="expectations" class="expectations">
            <h2>{"Expectations"}</h2>
            <p class="sr-only" aria-live="polite" data-testid="expectations-summary">{{
                let failed = p.outcomes.iter().filter(|(_, o)| !o.pass).count();
                format!("{} of {} expectations pass{}", p.outcomes.len() - failed, p.outcomes.len(),
                    if failed > 0 { format!(", {failed} fail") } else { String::new() })
            }}</p>
            <ul>
                { for p.outcomes.iter().map(|(x, o)| {
                    let target = o.decided_by.unwrap_or_else(|| run.sim.trace().partition_point(|e| e.time_ms <= o.decided_ms).saturating_sub(1) as u32);
                    let onclick = p.on_moment.reform(move |_: MouseEvent| Moment::JumpTo(target));
                    html! {
                        <li class={if o.pass { "pass" } else { "fail" }}>
                            <button class="link" {onclick} title="Jump to the moment that decided it">
                                <b>{if o.pass { "✔ pass" } else { "✘ FAIL" }}</b>{format!(" line {}: {}", x.line, x.text.trim_start_matches("expect "))}
                                <span class="hint">{format!(" — found {}", o.found)}</span>
                            </button>
                        </li>
                    }
                }) }
            </ul>
            if let Some(t) = cut {
                <p class="hint" data-testid="cut-expectations">{format!("The run was cut off at {}: these are judged on the part that ran.", super::clock(t))}</p>
            }
            if esr_judged {
                <p data-testid="esr" class={if esr.pass { "pass" } else { "fail" }}>{format!("ESR: {} ({})", if esr.pass { "holds" } else { "fails" }, &esr.found)}</p>
            } else {
                <p class="inconclusive" data-testid="esr">{"ESR: not judged (run cut off)"}</p>
            }
        </div>
    }
}

#[derive(Properties, PartialEq)]
pub struct ExplanationProps {
    pub run: Rc<Loaded>,
    /// The event explained: the one selected, else the last one applied.
    pub chosen: Option<EventId>,
    /// While playback runs the explanation changes every event: it is not a live region then
    /// (the picture's words, `announce`, say the moment once playback stops).
    pub playing: bool,
    /// A cause clicked is jumped to (`Moment::JumpTo`).
    pub on_moment: Callback<Moment>,
}

#[function_component(Explanation)]
pub fn explanation(p: &ExplanationProps) -> Html {
    let (run, chosen) = (&p.run, p.chosen);
    html! {
        <div data-testid="explanation" class="explanation" aria-live={if p.playing { "off" } else { "polite" }}>
            <h2>{"Why?"}</h2>
            if let Some(id) = chosen.filter(|&id| (id as usize) < run.sim.trace().len()) {
                <ol>
                    { for explain(&run.sim, id).into_iter().map(|(i, text)| {
                        let onclick = p.on_moment.reform(move |_: MouseEvent| Moment::JumpTo(i));
                        html! { <li><button class="link" {onclick}>{text}</button></li> }
                    }) }
                </ol>
            } else {
                <p class="hint">{"Step or click a marker: its causes appear here."}</p>
            }
        </div>
    }
}

/// The virtual time at which the run stopped, when it stopped at the event cap or the cap on
/// reads.
pub fn cut_at(sim: &listwatch_core::Sim) -> Option<listwatch_core::TimeMs> {
    use listwatch_core::sim::Stop;
    matches!(sim.stopped(), Some(Stop::EventCap | Stop::ReadCap)).then(|| {
        sim.trace()
            .last()
            .map(|e| e.time_ms)
            .unwrap_or(sim.now_ms())
    })
}

/// `5000000` as `5,000,000`.
pub fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[derive(Properties, PartialEq)]
pub struct RunProps {
    pub run: Rc<Loaded>,
}

/// Says so when the run hit the event cap: everything after that moment is missing.
#[function_component(CutOff)]
pub fn cut_off(p: &RunProps) -> Html {
    let sim = &p.run.sim;
    let Some(t) = cut_at(sim) else {
        return html! {};
    };
    let (cap, why) = match sim.stopped() {
        Some(listwatch_core::sim::Stop::ReadCap) => (
            "Cut off at the cap on reads. ",
            format!(
                "Its selector lists looked at more than {} objects in all (lists that grow with every reconcile cost the square of the objects). ",
                thousands(sim.config().limits.max_objects_read as usize)
            ),
        ),
        _ => ("Cut off at the event cap. ", String::new()),
    };
    html! {
        <div class="banner cap" role="status" data-testid="event-cap">
            <b>{cap}</b>
            {format!(
                "{why}The run stopped after {} events, at {} of virtual time, before its end at {}. Nothing after that moment was simulated, so ESR is not judged.",
                thousands(sim.trace().len()),
                super::clock(t),
                super::clock(sim.config().end_ms),
            )}
        </div>
    }
}
