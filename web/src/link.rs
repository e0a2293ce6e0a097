//! The address bar: share links in the fragment, embed options in the query.

use listwatch_core::TimeMs;
use listwatch_script::share::{self, Shared};
use wasm_bindgen::JsValue;

/// Options of the embed view: a short allow-list; unknown options are ignored.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Embed {
    pub on: bool,
    pub show_editor: bool,
    pub show_timeline: bool,
    pub show_explanation: bool,
    pub autoplay: bool,
    /// `light` or `dark`; `None` follows the system.
    pub theme: Option<String>,
    /// Wait for the script from the parent page (embed.js) instead of the fragment.
    pub from_parent: bool,
}

pub fn embed_options() -> Embed {
    let search = web_sys::window()
        .and_then(|w| w.location().search().ok())
        .unwrap_or_default();
    let mut e = Embed {
        show_timeline: true,
        show_explanation: true,
        ..Default::default()
    };
    let mut panels_given = false;
    for pair in search.trim_start_matches('?').split('&') {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        // Values are plain words and commas; URLSearchParams writes the commas as %2C.
        let v = v.replace("%2C", ",").replace("%2c", ",");
        let v = v.as_str();
        match k {
            "embed" => e.on = true,
            "autoplay" => e.autoplay = true,
            "theme" if v == "light" || v == "dark" => e.theme = Some(v.to_string()),
            "source" if v == "parent" => e.from_parent = true,
            "panels" => {
                panels_given = true;
                e.show_editor = v.split(',').any(|p| p == "editor");
                e.show_timeline = v.split(',').any(|p| p == "timeline");
                e.show_explanation = v.split(',').any(|p| p == "explanation");
            }
            _ => {}
        }
    }
    if !panels_given {
        e.show_editor = false;
    }
    e
}

/// What the fragment carries, if anything.
pub fn from_fragment() -> Option<Result<Shared, share::LinkError>> {
    let hash = web_sys::window()?.location().hash().ok()?;
    if hash.len() <= 1 {
        return None;
    }
    Some(share::decode(&hash))
}

/// The page's address without query or fragment: where "Open in playground" points.
pub fn playground_base() -> String {
    web_sys::window()
        .and_then(|w| w.location().href().ok())
        .map(|h| h.split(['?', '#']).next().unwrap_or("").to_string())
        .unwrap_or_default()
}

/// The fragment for `script` at the moment after its first `events` events, at `at_ms`.
pub fn fragment_for(script: &str, at_ms: TimeMs, events: usize) -> String {
    share::encode(&Shared {
        script: script.to_string(),
        at_ms: (at_ms > TimeMs::ZERO).then_some(at_ms),
        events: (events > 0).then_some(events as u64),
    })
}

const LAST_WRITTEN_KEY: &str = "listwatch.fragment";

/// Keeps the address bar in step, without adding history entries. Remembers what it wrote, so a
/// reload can tell its own (possibly older) fragment from a link someone shared.
pub fn replace_fragment(fragment: &str) {
    if let Some(w) = web_sys::window() {
        if let Ok(h) = w.history() {
            let _ = h.replace_state_with_url(&JsValue::NULL, "", Some(&format!("#{fragment}")));
        }
    }
    crate::storage::set(LAST_WRITTEN_KEY, fragment);
}

/// True when the fragment is the one this page last wrote itself: then the autosaved text,
/// which is never older, wins over it.
pub fn fragment_is_ours() -> bool {
    let Some(w) = web_sys::window() else {
        return false;
    };
    let hash = w.location().hash().unwrap_or_default();
    crate::storage::get(LAST_WRITTEN_KEY).is_some_and(|f| hash.trim_start_matches('#') == f)
}

pub fn copy_to_clipboard(text: &str) {
    if let Some(w) = web_sys::window() {
        let _ = w.navigator().clipboard().write_text(text);
    }
}
