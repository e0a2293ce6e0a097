//! The picture said in words, for screen readers: what the moment on screen is and the state of
//! every watcher, cache and queue (the picture shows states by colour and place). A polite live
//! region says it when playback stops or the moment is moved by hand; while playback runs it
//! says only "Playing", once, so a reader is not talked over on every event.

use std::rc::Rc;

use listwatch_core::{Labels, WatcherId};
use yew::prelude::*;

use super::system::ViewRef;
use crate::state::Loaded;

#[derive(Properties, PartialEq)]
pub struct Props {
    pub run: Rc<Loaded>,
    pub view: ViewRef,
    pub cursor: usize,
    pub playing: bool,
}

/// Watchers, caches and queues said at most, each: a picture with more says how many it left
/// out.
const SAID_MAX: usize = 12;

#[function_component(Announce)]
pub fn announce(p: &Props) -> Html {
    let text = if p.playing {
        "Playing.".to_string()
    } else {
        moment_text(&p.run, &p.view.0, p.cursor)
    };
    html! {
        <p class="sr-only" role="status" aria-live="polite" data-testid="announce">{text}</p>
    }
}

/// The moment in words: its time and event, then each watcher's state and last RV, each cache's
/// fill and each queue's keys.
pub fn moment_text(run: &Loaded, v: &listwatch_core::view::View, cursor: usize) -> String {
    let sim = &run.sim;
    let len = sim.trace().len();
    let mut out = format!("At {}, event {cursor} of {len}", super::clock(v.time_ms));
    if let Some(e) = cursor.checked_sub(1).and_then(|i| sim.trace().get(i)) {
        out.push_str(": ");
        out.push_str(&listwatch_core::describe(&e.kind, sim));
    }
    out.push('.');
    let mut parts: Vec<String> = v
        .watchers
        .iter()
        .enumerate()
        .map(|(i, w)| {
            format!(
                "watcher {} {}, last rv {}",
                Labels::watcher(sim, WatcherId(i as u16)),
                w.state.as_str(),
                w.last_rv
            )
        })
        .collect();
    said(&mut out, &mut parts, "watchers");
    let config = sim.config();
    let mut caches: Vec<String> = v
        .caches
        .iter()
        .enumerate()
        .flat_map(|(a, row)| {
            row.iter().enumerate().map(move |(k, c)| {
                format!(
                    "{} cache of {} holds {} of {}{}",
                    config.apiservers[a].name,
                    config.kinds[k].name,
                    c.ring.len(),
                    c.capacity,
                    if c.paused { ", paused" } else { "" }
                )
            })
        })
        .collect();
    said(&mut out, &mut caches, "caches");
    let mut queues: Vec<String> = v
        .queues
        .iter()
        .enumerate()
        .map(|(i, q)| {
            let names = |keys: &[listwatch_core::NameId]| {
                keys.iter()
                    .map(|k| sim.names().resolve(*k).to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            let state = if q.crashed {
                "crashed".to_string()
            } else {
                format!(
                    "{} waiting{}, {} running{}",
                    q.waiting.len(),
                    if q.waiting.is_empty() {
                        String::new()
                    } else {
                        format!(" ({})", names(&q.waiting))
                    },
                    q.processing.len(),
                    if q.processing.is_empty() {
                        String::new()
                    } else {
                        format!(" ({})", names(&q.processing))
                    },
                )
            };
            format!("queue of {}: {state}", config.controllers[i].name)
        })
        .collect();
    said(&mut out, &mut queues, "queues");
    out
}

/// Adds `parts` to `out`, at most `SAID_MAX` of them and how many more there are.
fn said(out: &mut String, parts: &mut Vec<String>, what: &str) {
    let more = parts.len().saturating_sub(SAID_MAX);
    parts.truncate(SAID_MAX);
    if more > 0 {
        parts.push(format!("{more} more {what}"));
    }
    if !parts.is_empty() {
        out.push(' ');
        out.push_str(&parts.join("; "));
        out.push('.');
    }
}
