//! listwatch-script: the scenario language. `parse` turns a script into a core `Config` plus
//! expectations, or into diagnostics that name a line and column. The CLI and the editor both
//! call it, so both show the same errors.

mod cursor;
mod diag;
pub mod export;
mod lexer;
pub mod library;
pub mod logic;
mod parse;
pub mod render;
pub mod share;
pub mod syntax;

pub use diag::{render, Diagnostic};
pub use lexer::{decode, lines};
pub use parse::{parse, parse_duration, Expectation, Scenario};

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

    /// The first comment line of a script: its one-line description.
    pub fn title(script: &str) -> &str {
        script
            .lines()
            .find_map(|l| l.trim().strip_prefix('#'))
            .map(str::trim)
            .unwrap_or("")
    }
}

/// The explorer over a script: searches fault schedules and renders what it finds as scripts.
pub mod explore {
    use listwatch_core::explore::{Budget, Explorer, Failure};

    use crate::{parse, render, Diagnostic};

    /// Starts an exploration of a script.
    pub fn explorer(
        src: &str,
        budget: Budget,
    ) -> Result<(Explorer, crate::Scenario), Vec<Diagnostic>> {
        let scenario = parse(src)?;
        let expects = scenario
            .expectations
            .iter()
            .map(|x| x.expect.clone())
            .collect();
        let ex = Explorer::new(scenario.config.clone(), expects, budget)
            .map_err(|e| vec![Diagnostic::at(1, 1, 1, e.to_string())])?;
        Ok((ex, scenario))
    }

    /// The counterexample as a scenario: the original script plus explicit fault lines.
    pub fn counterexample(
        src: &str,
        scenario: &crate::Scenario,
        failure: &Failure,
        end_ms: u64,
    ) -> String {
        let mut out = src.trim_end().to_string();
        out += "\n\n# Found by `listwatch explore`: these faults break the expectations above.\n";
        for f in &failure.faults {
            out += &format!("# {}\n", f.describe(&scenario.config));
        }
        let mut inputs: Vec<_> = failure.faults.iter().flat_map(|f| f.inputs()).collect();
        inputs.sort_by_key(|t| t.at_ms);
        for t in &inputs {
            out += &render::input_line(&scenario.config, t);
            out.push('\n');
        }
        // The explorer's run length: long enough for the system to settle after the faults.
        out += &format!("run {}\n", listwatch_core::format_ms(end_ms));
        for b in &failure.broken {
            out += &format!(
                "# broken: {} (found {})\n",
                broken_text(scenario, b),
                b.found
            );
        }
        out
    }

    /// The expectation a `Broken` names, as written.
    pub fn broken_text(scenario: &crate::Scenario, b: &listwatch_core::explore::Broken) -> String {
        match b.expectation.and_then(|i| scenario.expectations.get(i)) {
            Some(x) => format!("line {}: {}", x.line, x.text),
            None => "ESR (eventually stable reconciliation)".into(),
        }
    }
}
