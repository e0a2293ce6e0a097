//! listwatch-script: the scenario language. `parse` turns a script into a core `Config` plus
//! expectations, or into diagnostics that name a line and column. The CLI and the editor both
//! call it, so both show the same errors.

pub mod compare;
mod cursor;
mod diag;
pub mod export;
pub mod import;
mod lexer;
pub mod library;
pub mod logic;
pub(crate) mod name_rules;
mod numbers;
mod parse;
pub mod render;
pub(crate) mod selector;
pub mod share;
pub mod syntax;

pub use cursor::parse_time_arg;
pub use diag::{render, Diagnostic};
pub use lexer::{decode, lines};
pub use parse::{parse, parse_with, Expectation, Overrides, Scenario, DEFAULT_KUBERNETES};

/// Scripts larger than this are refused before parsing.
pub const MAX_SCRIPT_BYTES: usize = 64 * 1024;

use listwatch_core::verdict::Outcome;
use listwatch_core::Sim;

/// A scenario run to its end, with every expectation's outcome.
pub struct Report {
    pub sim: Sim,
    pub outcomes: Vec<(Expectation, Outcome)>,
}

impl Report {
    pub fn passed(&self) -> bool {
        self.outcomes.iter().all(|(_, o)| o.pass)
    }
}

/// Parses and runs a script.
pub fn run(src: &str) -> Result<Report, Vec<Diagnostic>> {
    let scenario = parse(src)?;
    run_scenario(&scenario)
}

pub fn run_scenario(scenario: &Scenario) -> Result<Report, Vec<Diagnostic>> {
    let sim = listwatch_core::verdict::run(scenario.config.clone())
        .map_err(|e| vec![Diagnostic::at(1, 1, 1, e.to_string())])?;
    let outcomes = scenario
        .expectations
        .iter()
        .map(|x| (x.clone(), listwatch_core::verdict::check(&sim, &x.expect)))
        .collect();
    Ok(Report { sim, outcomes })
}

/// The gallery, embedded at build time.
pub mod gallery {
    include!(concat!(env!("OUT_DIR"), "/gallery.rs"));
    include!("gallery_title.rs");
}

/// The explorer over a script: searches fault schedules and renders what it finds as scripts.
pub mod explore;
