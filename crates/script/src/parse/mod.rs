//! Statements, one a line. See docs/scenario-language.md for every statement with an example.
//!
//! The core reads lines (`lines.rs`: indentation, blocks, at most 50 diagnostics) and hands
//! each to the row of `table.rs` its first word names; the rows belong to one file per statement
//! family, which reads the rest of the line into the `Builder`. Expectations are read once every
//! declaration is known (`resolve.rs`), then the whole script is checked (`finish`).

use listwatch_core::verdict::Expect;
use listwatch_core::*;

use crate::diag::Diagnostic;
use crate::lexer::Word;
use crate::MAX_SCRIPT_BYTES;

mod apiservers;
mod blocks;
mod bursts;
mod cluster;
mod controllers;
mod counts;
mod expect;
mod faults;
mod lines;
mod names;
mod narration;
mod options;

mod probes;
mod resolve;
mod run;
mod spans;
pub(crate) mod table;
mod timeline;
mod versions;
mod writes;

pub use versions::DEFAULT_KUBERNETES;

use spans::Spans;

/// One `expect` line.
#[derive(Clone, Debug, PartialEq)]
pub struct Expectation {
    pub line: usize,
    /// The statement as written, for reports.
    pub text: String,
    pub expect: Expect,
}

/// A parsed, checked scenario.
#[derive(Clone, Debug, PartialEq)]
pub struct Scenario {
    pub config: Config,
    pub expectations: Vec<Expectation>,
    /// The first comment line: the scenario's one-line description.
    pub title: String,
}

/// Versions that replace the script's own `kubernetes` and `controller-runtime` statements (or
/// stand in for them): a comparison runs one script under two of them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Overrides {
    /// The minor version N of `kubernetes 1.N`.
    pub kubernetes: Option<u32>,
    /// The minor version N of `controller-runtime 0.N`.
    pub controller_runtime: Option<u32>,
}

/// What the statements read so far say: the configuration being built, and what the checks
/// after the last line need.
struct Builder {
    /// `kubernetes 1.N`: the minor version whose defaults apply where a setting was not given.
    version: Option<u32>,
    /// `controller-runtime 0.N`: the minor version whose queue default applies.
    controller_runtime: Option<u32>,
    /// Cluster settings the script gave itself (`feature` names, `too-large-rv`), which a
    /// version's defaults leave alone. (A few, so a list: a set type of their own was two more
    /// copies of the B-tree's code in the page.)
    explicit: Vec<&'static str>,
    /// (controller, option) the script gave a controller (`queue`, `stale-read-check`).
    explicit_options: Vec<(usize, &'static str)>,
    /// Per apiserver: `fake`, with the client-go version it names, if any.
    fakes: Vec<Option<Option<u32>>>,
    explicit_cache: Vec<bool>,
    explicit_streaming: bool,
    explicit_bookmarks: bool,
    /// `feature StaleControllerConsistency on|off`: the default of built-in-style controllers.
    stale_read_check: Option<bool>,
    config: Config,
    expectations: Vec<Expectation>,
    kinds_declared: bool,
    apiservers_declared: bool,
    /// (line, statement words) of expectations, resolved after all declarations.
    pending_expects: Vec<(usize, String, Vec<Word>)>,
    end_set: bool,
    last_at: TimeMs,
    /// Object names the timeline writes (full and short), in line order, for expectation scopes.
    known_names: Vec<String>,
    known_names_set: std::collections::HashSet<String>,
    /// Bytes of narration and of object names in the timeline so far.
    narration_bytes: usize,
    name_bytes: usize,
    /// Where each declared thing and each timeline entry was written, to locate config errors.
    spans: Spans,
    title: String,
    /// (controller, desired?) of every `logic` and `desired` block opened so far.
    blocks: Vec<(usize, bool)>,
    /// Every controller's `helper` blocks read so far, by controller.
    helpers: Vec<(usize, crate::logic::Helper)>,
}

/// Parses and checks a whole script.
pub fn parse(src: &str) -> Result<Scenario, Vec<Diagnostic>> {
    parse_with(src, Overrides::default())
}

/// `parse`, with the versions of `overrides` in place of the script's.
pub fn parse_with(src: &str, overrides: Overrides) -> Result<Scenario, Vec<Diagnostic>> {
    if src.len() > MAX_SCRIPT_BYTES {
        return Err(vec![Diagnostic::at(
            1,
            1,
            1,
            format!(
                "the script is {} bytes, more than the limit of {} (64 KiB)",
                src.len(),
                MAX_SCRIPT_BYTES
            ),
        )]);
    }
    let mut b = Builder::new();
    let mut diags = b.read_lines(src);
    b.version = overrides.kubernetes.or(b.version);
    b.controller_runtime = overrides.controller_runtime.or(b.controller_runtime);
    if diags.is_empty() {
        b.check_logic(&mut diags);
    }
    if diags.is_empty() {
        b.finish(&mut diags);
    }
    if !diags.is_empty() {
        return Err(diags);
    }
    Ok(Scenario {
        config: b.config,
        expectations: b.expectations,
        title: b.title,
    })
}

impl Builder {
    fn new() -> Builder {
        let mut config = Config::new(&[]);
        config.kinds.clear();
        config.end_ms = TimeMs::ZERO;
        Builder {
            config,
            expectations: vec![],
            kinds_declared: false,
            version: None,
            controller_runtime: None,
            explicit: Default::default(),
            explicit_options: Default::default(),
            fakes: vec![None],
            explicit_cache: vec![],
            explicit_streaming: false,
            explicit_bookmarks: false,
            stale_read_check: None,
            apiservers_declared: false,
            pending_expects: vec![],
            end_set: false,
            last_at: TimeMs::ZERO,
            known_names: vec![],
            known_names_set: Default::default(),
            narration_bytes: 0,
            name_bytes: 0,
            spans: Spans::default(),
            title: String::new(),
            blocks: vec![],
            helpers: vec![],
        }
    }

    /// What needs the whole script: version defaults, the end, expectations, validation.
    fn finish(&mut self, diags: &mut Vec<Diagnostic>) {
        if self.config.kinds.is_empty() {
            diags.push(
                Diagnostic::at(1, 1, 1, "the scenario declares no kind")
                    .help("start with `kind Pod`"),
            );
            return;
        }
        self.apply_version_defaults();
        self.default_end();
        self.collect_known_names();
        self.resolve_expectations(diags);
        // As for statements: 50 errors are enough to read, and each may cost a suggestion.
        if diags.len() >= 50 {
            return;
        }
        if let Some(d) = self.check_end() {
            diags.push(d);
        } else if let Err(e) = self.config.validate() {
            diags.push(self.locate(&e));
        }
        // Timeline order is time order; equal times keep their line order.
        listwatch_core::order::sort_by_u64(&mut self.config.timeline, |t| t.at_ms.0);
    }
}
