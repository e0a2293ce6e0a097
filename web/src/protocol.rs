//! The messages between the page (`panels.js`, `compare.js`, the export button) and the
//! explorer's Web Worker (`src/bin/explore_worker.rs`, which includes this file): one enum per
//! direction, passed as plain JS objects with serde-wasm-bindgen. Each message carries its `kind`
//! (`{kind: "explore", script, budget}`), so the JS side reads and writes the same shapes; tuples
//! travel as arrays. The page's wasm does not include this module: serde-wasm-bindgen costs about
//! 23 KB gzipped there, and its one message (`Export`) is written field by field in
//! `components/export.rs`.

use serde::{Deserialize, Serialize};

/// To the worker: one job per message.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ToWorker {
    /// Search fault schedules; `all` keeps going after the first failure.
    Explore {
        script: String,
        #[serde(default = "default_budget")]
        budget: f64,
        #[serde(default)]
        all: bool,
    },
    /// The trace as JSON (the CLI's `--json`).
    Export { script: String },
    /// Two runs for the comparison.
    Compare { script: String, other: String },
    /// The objects panel's table at `cursor`, with the history of the object picked.
    Objects {
        script: String,
        cursor: f64,
        #[serde(default)]
        pick_kind: String,
        #[serde(default)]
        pick_name: String,
    },
}

fn default_budget() -> f64 {
    2000.0
}

/// The search's figures so far.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct Figures {
    pub tried: f64,
    pub space: f64,
    pub states: f64,
    pub skipped: f64,
    pub faults: f64,
    pub per_second: f64,
    pub failures: f64,
}

/// One run of a comparison: its error, or what the comparison shows of it.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
#[serde(untagged)]
pub enum CompareRun {
    Error {
        error: String,
    },
    Run {
        title: String,
        end: f64,
        /// (expectation, pass, found)
        outcomes: Vec<(String, bool, String)>,
        /// (holds, found)
        esr: (bool, String),
        /// (what, how many)
        counts: Vec<(String, f64)>,
        /// (time, text)
        events: Vec<(f64, String)>,
        /// (time, watcher, state)
        states: Vec<(f64, String, String)>,
    },
}

/// One object in the objects panel: kind, name, each holder's row (holder, mark, and when it
/// holds a copy: rv, spec, status, deletion, owner, uid), and its history when picked (event,
/// text, later than the moment).
pub type ObjectRow = (
    String,
    String,
    Vec<Vec<String>>,
    Option<Vec<(f64, String, bool)>>,
);

/// From the worker.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum FromWorker {
    /// Listening: messages sent before this are lost.
    Ready,
    /// How far the search is, with the failures found so far (as in `Done`), so a cancelled
    /// search still shows them.
    Progress {
        #[serde(flatten)]
        figures: Figures,
        found: Vec<(String, String)>,
        more: f64,
    },
    Done {
        #[serde(flatten)]
        figures: Figures,
        /// (the faults in words, the counterexample script)
        found: Vec<(String, String)>,
        /// Failures found beyond those sent.
        more: f64,
        /// What already fails without faults (empty when nothing does).
        base_broken: String,
    },
    Error {
        message: String,
    },
    Export {
        json: String,
    },
    Compare {
        runs: Vec<CompareRun>,
    },
    Objects {
        cursor: f64,
        script: String,
        pick: String,
        seen: f64,
        list: Vec<ObjectRow>,
    },
}

impl FromWorker {
    /// As a plain JS object (`null` for a missing history, objects rather than maps).
    pub fn to_js(&self) -> wasm_bindgen::JsValue {
        self.serialize(&serde_wasm_bindgen::Serializer::json_compatible())
            .unwrap_or(wasm_bindgen::JsValue::NULL)
    }
}
