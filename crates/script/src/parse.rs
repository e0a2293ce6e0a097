//! Statements, one a line. See docs/scenario-language.md for every statement with an example.

use listwatch_core::verdict::{Cmp, Counted, Expect, Fact, Field, ProbeFact, Scope};
use listwatch_core::*;

use crate::cursor::{declared, unknown, Cursor as Parser};
use crate::diag::{nearest, Diagnostic};
use crate::lexer::{words, Word};
use crate::logic::{BlockLine, Compiler};
use crate::syntax::{ACTIONS, BEHAVIOURS, CONTROLLER_OPTIONS, COUNTED, FEATURES, STATEMENTS};

/// The Kubernetes version whose defaults apply when a script names none.
pub const DEFAULT_KUBERNETES: u32 = 34;
use crate::MAX_SCRIPT_BYTES;

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

/// The longest duration a script may write.
pub(crate) const MAX_DURATION_MS: DurationMs = DurationMs(24 * 3_600_000);
/// The latest moment: the end of the longest run.
const MAX_TIME_MS: TimeMs = TimeMs(MAX_DURATION_MS.0);
const MAX_BURST: u64 = 100_000;
const MAX_SPEC: i64 = 1_000_000_000;
/// All `say` texts of a script together (bursts repeat theirs).
pub const MAX_NARRATION_BYTES: usize = 1 << 20;
/// All object names written in the timeline together (bursts repeat theirs).
pub const MAX_NAME_BYTES: usize = 4 << 20;

type R<T> = Result<T, Diagnostic>;

/// A time as hours, minutes, seconds and milliseconds: `24h2m`, `1m30s`, `250ms`.
fn clock(t: TimeMs) -> String {
    let ms = t.ms();
    let mut out = String::new();
    for (unit, size) in [("h", 3_600_000), ("m", 60_000), ("s", 1000), ("ms", 1)] {
        let n = ms / size
            % if unit == "h" {
                u64::MAX
            } else if unit == "ms" {
                1000
            } else {
                60
            };
        if n > 0 {
            out += &format!("{n}{unit}");
        }
    }
    if out.is_empty() {
        out = "0s".into();
    }
    out
}

/// Kind, controller and apiserver names are at most this many characters (a DNS label).
pub const MAX_NAME_CHARS: usize = 63;

/// Controller and apiserver names: ASCII letters, digits, `-`, `_` and `.`.
fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || "-_.".contains(c)
}

/// A declared name starts with an ASCII letter, holds only `allowed` characters and is at most
/// `MAX_NAME_CHARS` long.
fn check_name(p: &Parser, w: &Word, what: &str, allowed: fn(char) -> bool) -> R<()> {
    let shown = if w.text.chars().count() > 40 {
        format!("{}...", w.text.chars().take(40).collect::<String>())
    } else {
        w.text.clone()
    };
    let rule = if what == "kind" {
        "a kind name is ASCII letters and digits, starting with a letter (like `Pod` or `ConfigMap`)"
            .to_string()
    } else {
        format!("a {what} name is ASCII letters, digits, `-`, `_` and `.`, starting with a letter")
    };
    let ok_chars =
        w.text.starts_with(|c: char| c.is_ascii_alphabetic()) && w.text.chars().all(allowed);
    if !ok_chars {
        return Err(p
            .err_at(w, format!("`{shown}` is not a valid {what} name"))
            .help(rule));
    }
    if w.text.len() > MAX_NAME_CHARS {
        return Err(p.err_at(
            w,
            format!(
                "the {what} name `{shown}` is {} characters long, more than the limit of {MAX_NAME_CHARS}",
                w.text.len()
            ),
        ));
    }
    Ok(())
}

/// The most significant digits a number in a script may have.
pub const MAX_DIGITS: usize = 15;

/// Why a number (or the number of a duration) was refused.
#[derive(Clone, Debug, PartialEq)]
pub enum NumberError {
    /// Not a number as `str::parse::<f64>` reads one, `inf` or `NaN`; or a duration out of range
    /// or without its unit.
    Malformed,
    /// The number as written: it has more than `MAX_DIGITS` significant digits, more than an f64
    /// keeps, and listwatch does not round a script's numbers silently.
    TooManyDigits(String),
}

impl std::fmt::Display for NumberError {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        match self {
            NumberError::Malformed => write!(f, "not a number"),
            NumberError::TooManyDigits(n) => write!(
                f,
                "{n} has more than {MAX_DIGITS} significant digits; listwatch numbers keep \
                 {MAX_DIGITS}"
            ),
        }
    }
}

/// A decimal number as `str::parse::<f64>` reads it (a sign, digits with a point, an exponent),
/// with at most `MAX_DIGITS` significant digits (more are refused), and without the standard
/// library's float parser, whose tables cost the page's first load 14 KB gzipped. Up to 15 digits
/// and powers of ten up to 22 the value is exactly std's: digits and power are exact in an f64,
/// and one multiplication or division rounds correctly. Smaller numbers (below 1e-7) are within
/// rounding of it, which no caller can tell (they round to whole milliseconds and parts per
/// million); larger ones are beyond every limit. `inf` and `NaN` are refused (no caller takes
/// them).
pub fn decimal(s: &str) -> Result<f64, NumberError> {
    let b = s.as_bytes();
    let (neg, i) = sign(b, 0);
    let (digits, frac, i) = mantissa(b, i);
    let (e, i) = exponent(b, i).ok_or(NumberError::Malformed)?;
    if digits.is_empty() || i != b.len() {
        return Err(NumberError::Malformed);
    }
    let Some(first) = digits.iter().position(|&d| d != 0) else {
        return Ok(if neg { -0.0 } else { 0.0 });
    };
    let last = digits.iter().rposition(|&d| d != 0).unwrap_or(first);
    let sig = &digits[first..=last];
    if sig.len() > MAX_DIGITS {
        return Err(NumberError::TooManyDigits(s.to_string()));
    }
    let m = sig.iter().fold(0u64, |m, &d| m * 10 + u64::from(d)) as f64;
    // The trailing zeros left out of `sig` count as powers of ten.
    let v = scale(m, e - frac + (digits.len() - 1 - last) as i64);
    Ok(if neg { -v } else { v })
}

/// A `-` or `+` at `i`: whether it is negative, and where the rest starts.
fn sign(b: &[u8], i: usize) -> (bool, usize) {
    match b.get(i) {
        Some(b'-') => (true, i + 1),
        Some(b'+') => (false, i + 1),
        _ => (false, i),
    }
}

/// Digits with at most one point from `i`: the digits, how many of them follow the point, and
/// where they end.
fn mantissa(b: &[u8], mut i: usize) -> (Vec<u8>, i64, usize) {
    let mut digits: Vec<u8> = vec![];
    let mut frac = 0i64;
    let mut point = false;
    while let Some(&c) = b.get(i) {
        match c {
            b'0'..=b'9' => {
                digits.push(c - b'0');
                frac += i64::from(point);
            }
            b'.' if !point => point = true,
            _ => break,
        }
        i += 1;
    }
    (digits, frac, i)
}

/// The exponent at `i` (`e` or `E`, a sign, digits), 0 where there is none, and where it ends;
/// `None` for an `e` without digits.
fn exponent(b: &[u8], i: usize) -> Option<(i64, usize)> {
    if !matches!(b.get(i), Some(b'e' | b'E')) {
        return Some((0, i));
    }
    let (neg, start) = sign(b, i + 1);
    let mut i = start;
    let mut e = 0i64;
    while let Some(&c) = b.get(i).filter(|c| c.is_ascii_digit()) {
        e = (e * 10 + i64::from(c - b'0')).min(1_000_000);
        i += 1;
    }
    (i > start).then_some((if neg { -e } else { e }, i))
}

/// `m` times ten to the `exp`: one correctly rounded step while the power of ten is exact in an
/// f64 (up to 10^22), past it at most 400 more (every value there is 0 or infinite).
fn scale(m: f64, exp: i64) -> f64 {
    let pow = |k: i64| (0..k).fold(1.0f64, |p, _| p * 10.0);
    match exp {
        0..=22 => m * pow(exp),
        -22..=-1 => m / pow(-exp),
        e if e > 22 => m * pow(22) * pow((e - 22).min(400)),
        e => m / pow(22) / pow((-e - 22).min(400)),
    }
}

/// A duration: a number and a unit (`ms`, `s`, `m`, `h`), at most 10^12 of the unit, to the
/// nearest millisecond.
pub fn parse_duration(s: &str) -> Result<DurationMs, NumberError> {
    let split = s
        .find(|c: char| c.is_ascii_alphabetic())
        .ok_or(NumberError::Malformed)?;
    let (num, unit) = s.split_at(split);
    let mult = match unit {
        "ms" => 1.0,
        "s" => 1000.0,
        "m" => 60_000.0,
        "h" => 3_600_000.0,
        _ => return Err(NumberError::Malformed),
    };
    let n: f64 = decimal(num)?;
    if !n.is_finite() || !(0.0..=1e12).contains(&n) {
        return Err(NumberError::Malformed);
    }
    Ok(DurationMs((n * mult).round() as u64))
}

/// A place in the script: line, column and length of a word.
#[derive(Clone, Copy, Debug, Default)]
struct Span {
    line: usize,
    col: usize,
    len: usize,
}

impl Span {
    fn of(p: &Parser, w: &Word) -> Span {
        Span {
            line: p.line,
            col: w.col,
            len: w.len,
        }
    }
    fn diag(self, msg: impl Into<String>) -> Diagnostic {
        Diagnostic::at(self.line, self.col, self.len, msg)
    }
}

/// Where each element of the configuration came from, index for index (timeline entries in
/// line order, before the timeline is sorted).
#[derive(Default)]
struct Spans {
    kinds: Vec<Span>,
    apiservers: Vec<Span>,
    controllers: Vec<Span>,
    timeline: Vec<Span>,
    run: Option<Span>,
    /// `bookmarks`, `streaming-list` and `kubernetes` settings, in line order: the statement,
    /// the controller whose option it is (`None`: the cluster's), and the value's span.
    reflector_settings: Vec<(&'static str, Option<usize>, Span)>,
}

struct Builder {
    /// `kubernetes 1.N`: the minor version whose defaults apply where a setting was not given.
    version: Option<u32>,
    /// `controller-runtime 0.N`: the minor version whose queue default applies.
    controller_runtime: Option<u32>,
    /// Cluster settings the script gave itself (`feature` names, `too-large-rv`), which a
    /// version's defaults leave alone.
    explicit: std::collections::BTreeSet<&'static str>,
    /// (controller, option) the script gave a controller (`queue`, `stale-read-check`).
    explicit_options: std::collections::BTreeSet<(usize, &'static str)>,
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
}

/// A `logic` or `desired` block being read: its lines are those indented deeper than its head.
struct Block {
    controller: usize,
    desired: bool,
    indent: usize,
    head_line: usize,
    head: Word,
    lines: Vec<BlockLine>,
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
        }
    }

    /// Reads the script line by line (a `logic` block's lines are gathered and compiled when it
    /// closes); at most 50 diagnostics.
    fn read_lines(&mut self, src: &str) -> Vec<Diagnostic> {
        let mut diags = vec![];
        let mut in_controller = false;
        let mut block: Option<Block> = None;
        // A line that fails takes the lines indented under it along (a controller's options and
        // logic, a block's statements): they would only repeat its error in other words.
        let mut failed_at: Option<usize> = None;
        let src = crate::lexer::strip_bom(src);
        for (i, raw) in crate::lexer::lines(src).enumerate() {
            let line = i + 1;
            if self.title.is_empty() {
                if let Some(t) = raw.trim().strip_prefix('#') {
                    self.title = t.trim().to_string();
                }
            }
            let ws = match words(raw) {
                Ok(ws) => ws,
                Err((col, msg)) => {
                    diags.push(Diagnostic::at(line, col, 1, msg));
                    continue;
                }
            };
            if ws.is_empty() {
                continue;
            }
            let indent = raw.chars().take_while(|c| *c == ' ' || *c == '\t').count();
            if failed_at.is_some_and(|at| indent > at) {
                continue;
            }
            failed_at = None;
            if let Some(bk) = block.as_mut().filter(|bk| indent > bk.indent) {
                bk.lines.push(BlockLine {
                    line,
                    indent,
                    words: ws,
                });
                continue;
            }
            // A line no deeper than the block's head ends the block.
            if let Some(bk) = block.take() {
                diags.extend(self.close_block(bk).err());
            }
            let mut p = Parser {
                line,
                words: &ws,
                pos: 0,
            };
            match self.read_line(&mut p, raw, indent, &mut in_controller) {
                Ok(opened) => block = opened,
                Err(d) => {
                    diags.push(d);
                    failed_at = Some(indent);
                }
            }
            if diags.len() >= 50 {
                break;
            }
        }
        if let Some(bk) = block.take() {
            diags.extend(self.close_block(bk).err());
        }
        diags
    }

    /// One line outside a block: a statement, or under a `controller` line one of its indented
    /// options or the head of its `logic` or `desired` block (returned, to gather its lines).
    fn read_line(
        &mut self,
        p: &mut Parser,
        raw: &str,
        indent: usize,
        in_controller: &mut bool,
    ) -> R<Option<Block>> {
        let indented = raw.starts_with(' ') || raw.starts_with('\t');
        let first = p.words[0].text.as_str();
        if indented && *in_controller {
            return if first == "logic" || first == "desired" {
                self.open_block(p, indent).map(Some)
            } else {
                self.controller_option(p).map(|()| None)
            };
        }
        *in_controller = first == "controller";
        let r = self.statement(p, raw.trim());
        if *in_controller && r.is_err() {
            // Declare it anyway so its options and later references do not cascade.
            self.placeholder_controller(p.line, p.words);
        }
        r.map(|()| None)
    }
}

impl Builder {
    fn kind(&self, p: &Parser, w: &Word) -> R<KindId> {
        let names = self.config.kinds.iter().map(|k| k.name.as_str());
        declared(p, w, "kind", names)
            .map(|i| KindId(i as u16))
            .map_err(|d| {
                if self.config.kinds.is_empty() {
                    d.help("declare it first: `kind NAME`")
                } else {
                    d
                }
            })
    }
    fn controller(&self, p: &Parser, w: &Word) -> R<ControllerId> {
        let names = self.config.controllers.iter().map(|c| c.name.as_str());
        declared(p, w, "controller", names).map(|i| ControllerId(i as u16))
    }
    fn apiserver(&self, p: &Parser, w: &Word) -> R<ApiserverId> {
        let names = self.config.apiservers.iter().map(|a| a.name.as_str());
        declared(p, w, "apiserver", names).map(|i| ApiserverId(i as u8))
    }

    /// The next word, as a declared kind (`next_controller` and `next_apiserver` likewise).
    fn next_kind(&self, p: &mut Parser) -> R<KindId> {
        let w = p.next("a kind")?;
        self.kind(p, w)
    }
    fn next_controller(&self, p: &mut Parser) -> R<ControllerId> {
        let w = p.next("a controller")?;
        self.controller(p, w)
    }
    fn next_apiserver(&self, p: &mut Parser) -> R<ApiserverId> {
        let w = p.next("an apiserver")?;
        self.apiserver(p, w)
    }

    fn statement(&mut self, p: &mut Parser, text: &str) -> R<()> {
        let w = p.next("a statement")?;
        match w.text.as_str() {
            "seed" => {
                let n = p.number("a seed", i64::MAX)?;
                self.config.seed = n as u64;
            }
            "kind" => self.kind_statement(p)?,
            "apiserver" => self.apiserver_statement(p)?,
            "compaction" => {
                self.config.compaction_ms = if p.eat("off") {
                    DurationMs::ZERO
                } else {
                    p.duration("an interval or `off`")?
                };
                p.done()?;
            }
            // The garbage collector acts on its own informers: it deletes a dependent this long
            // after its owner went.
            "gc-delay" => {
                self.config.gc_delay_ms = p.duration("how long the garbage collector lags")?;
                p.done()?;
            }
            "bookmarks" => {
                self.explicit_bookmarks = true;
                self.config.reflector.bookmarks = self.switch(p, "bookmarks", None)?;
                p.done()?;
            }
            "streaming-list" => {
                self.explicit_streaming = true;
                self.config.reflector.streaming_list = self.switch(p, "streaming-list", None)?;
                p.done()?;
            }
            "kubernetes" => self.version_statement(p)?,
            "controller-runtime" => self.controller_runtime_statement(p)?,
            "feature" => self.feature_statement(p)?,
            "too-large-rv" => {
                let v = p.next("`relist` or `retry`")?;
                self.config.reflector.too_large_relists_consistent = match v.text.as_str() {
                    "relist" => true,
                    "retry" => false,
                    _ => return Err(unknown(p, v, "setting", &["relist", "retry"])),
                };
                self.explicit.insert("too-large-rv");
                p.done()?;
            }
            "page-size" => {
                let n = p.number("a page size (0: no paging)", 100_000)?;
                if n < 0 {
                    return Err(p
                        .err_at(
                            &p.words[p.pos - 1],
                            format!("a page size cannot be negative (found {n})"),
                        )
                        .help("write a number of objects per page, or 0 for no paging"));
                }
                self.config.reflector.page_size = n as u32;
                p.done()?;
            }
            "controller" => self.controller_statement(p)?,
            "at" | "every" => self.timeline(p, w)?,
            "run" => {
                self.config.end_ms = p.moment("how long the run lasts")?;
                self.spans.run = Some(Span::of(p, &p.words[p.pos - 1]));
                self.end_set = true;
                p.done()?;
            }
            "expect" => {
                self.pending_expects
                    .push((p.line, text.to_string(), p.words.to_vec()));
            }
            _ => return Err(unknown(p, w, "statement", STATEMENTS)),
        }
        Ok(())
    }

    /// `kubernetes 1.N`: the version whose defaults apply.
    fn version_statement(&mut self, p: &mut Parser) -> R<()> {
        let v = p.next("a version such as 1.34")?;
        let help = "write 1.N with N from 10 to 40, e.g. `kubernetes 1.34`";
        self.version = Some(minor_version(
            p,
            v,
            ("1.", 10),
            "a Kubernetes version",
            help,
        )?);
        let span = Span::of(p, v);
        self.spans
            .reflector_settings
            .push(("kubernetes", None, span));
        p.done()?;
        Ok(())
    }

    /// `controller-runtime 0.N`: the version whose queue default applies.
    fn controller_runtime_statement(&mut self, p: &mut Parser) -> R<()> {
        let v = p.next("a version such as 0.23")?;
        let help = "write 0.N with N from 1 to 40, e.g. `controller-runtime 0.22`";
        let what = "a controller-runtime version";
        self.controller_runtime = Some(minor_version(p, v, ("0.", 1), what, help)?);
        p.done()
    }

    /// `feature GATE on|off`: one behaviour a Kubernetes version's defaults would choose.
    fn feature_statement(&mut self, p: &mut Parser) -> R<()> {
        let g = p.next("a feature gate")?;
        let Some(&gate) = FEATURES.iter().find(|f| **f == g.text) else {
            return Err(unknown(p, g, "feature gate", FEATURES));
        };
        let on = if gate == "WatchListClient" {
            self.explicit_streaming = true;
            self.switch(p, "streaming-list", None)?
        } else {
            self.switch(p, "feature", None)?
        };
        let f = &mut self.config.server;
        match gate {
            "ConsistentListFromCache" => f.consistent_list_from_cache = on,
            "ResilientWatchCacheInitialization" => f.resilient_cache_init = on,
            "WatchFromStorageWithoutResourceVersion" => f.watch_from_storage_without_rv = on,
            "WatchList" => f.watch_list = on,
            "EfficientWatchResumption" => f.progress_notify = on,
            "WatchListClient" => self.config.reflector.streaming_list = on,
            _ => self.stale_read_check = Some(on),
        }
        self.explicit.insert(gate);
        p.done()
    }

    /// `apiserver NAME [lag D] [fake [1.N]] [initial-events-end off]`.
    fn apiserver_statement(&mut self, p: &mut Parser) -> R<()> {
        let name = p.next("an apiserver name")?;
        check_name(p, name, "apiserver", is_name_char)?;
        let mut lag_ms = DurationMs::ZERO;
        let mut fake = None;
        let mut omits_initial_events_end = false;
        while let Some(w) = p.peek() {
            match w.text.as_str() {
                "lag" => {
                    p.pos += 1;
                    lag_ms = p.duration("a lag")?;
                }
                "fake" => {
                    p.pos += 1;
                    fake = Some(match p.peek() {
                        Some(v) if v.text.starts_with("1.") => {
                            p.pos += 1;
                            let help =
                                "write 1.N, e.g. `fake 1.35` (no resourceVersion) or `fake 1.36`";
                            let v = &p.words[p.pos - 1];
                            Some(minor_version(
                                p,
                                v,
                                ("1.", 10),
                                "a client-go version",
                                help,
                            )?)
                        }
                        _ => None,
                    });
                }
                "initial-events-end" => {
                    p.pos += 1;
                    omits_initial_events_end = !self.switch(p, "initial-events-end", None)?;
                }
                _ => {
                    let opts = &["lag", "fake", "initial-events-end"];
                    return Err(unknown(p, w, "apiserver option", opts));
                }
            }
        }
        if !self.apiservers_declared {
            self.config.apiservers.clear();
            self.fakes.clear();
            self.apiservers_declared = true;
        }
        if self.config.apiservers.iter().any(|a| a.name == name.text) {
            return Err(p.err_at(name, format!("apiserver `{}` is declared twice", name.text)));
        }
        if self.config.apiservers.len() >= MAX_APISERVERS {
            return Err(p.err_at(name, format!("more than {MAX_APISERVERS} apiservers")));
        }
        self.spans.apiservers.push(Span::of(p, name));
        self.fakes.push(fake);
        self.config.apiservers.push(ApiserverConfig {
            name: name.text.clone(),
            lag_ms,
            fake: None,
            omits_initial_events_end,
        });
        Ok(())
    }

    /// `kind NAME [cache fixed N | dynamic [MIN..MAX] | off]`.
    fn kind_statement(&mut self, p: &mut Parser) -> R<()> {
        let name = p.next("a kind name")?;
        check_name(p, name, "kind", |c| c.is_ascii_alphanumeric())?;
        if self.config.kind_id(&name.text).is_some() {
            return Err(p.err_at(name, format!("kind `{}` is declared twice", name.text)));
        }
        let mut cache = CacheMode::Dynamic {
            capacity_min: DYNAMIC_CAPACITY_MIN,
            capacity_max: DYNAMIC_CAPACITY_MAX,
        };
        let cache_given = p.peek().is_some_and(|w| w.text == "cache");
        if p.eat("cache") {
            let m = p.next("a cache mode (fixed N, dynamic, off)")?;
            cache = match m.text.as_str() {
                "fixed" => {
                    let n = p.number("a capacity", DYNAMIC_CAPACITY_MAX as i64)?;
                    if n < 1 {
                        return Err(p.err_at(m, "a fixed cache holds at least 1 event"));
                    }
                    CacheMode::Fixed { capacity: n as u32 }
                }
                "dynamic" => {
                    let mut c = cache;
                    if let Some(r) = p.peek() {
                        let (lo, hi) = r
                            .text
                            .split_once("..")
                            .ok_or_else(|| p.err_at(r, "write the range as MIN..MAX"))?;
                        let (lo, hi): (u32, u32) = match (lo.parse(), hi.parse()) {
                            (Ok(a), Ok(b)) if a >= 1 && a <= b && b <= DYNAMIC_CAPACITY_MAX => (a, b),
                            _ => return Err(p.err_at(r, format!("capacities must satisfy 1 <= MIN <= MAX <= {DYNAMIC_CAPACITY_MAX}"))),
                        };
                        p.pos += 1;
                        c = CacheMode::Dynamic {
                            capacity_min: lo,
                            capacity_max: hi,
                        };
                    }
                    c
                }
                "off" => CacheMode::Off,
                _ => return Err(unknown(p, m, "cache mode", &["fixed", "dynamic", "off"])),
            };
        }
        p.done()?;
        if self.config.kinds.len() >= MAX_KINDS {
            return Err(p.err_at(name, format!("more than {MAX_KINDS} kinds")));
        }
        self.kinds_declared = true;
        self.explicit_cache.push(cache_given);
        self.spans.kinds.push(Span::of(p, name));
        self.config.kinds.push(KindConfig {
            name: name.text.clone(),
            cache,
        });
        Ok(())
    }

    fn controller_statement(&mut self, p: &mut Parser) -> R<()> {
        let name = p.next("a controller name")?;
        check_name(p, name, "controller", is_name_char)?;
        if self.config.controllers.iter().any(|c| c.name == name.text) {
            return Err(p.err_at(
                name,
                format!("controller `{}` is declared twice", name.text),
            ));
        }
        if self.config.controllers.len() >= MAX_CONTROLLERS {
            return Err(p.err_at(name, format!("more than {MAX_CONTROLLERS} controllers")));
        }
        p.expect_kw("for")?;
        let kw = p.next("a kind")?;
        let primary = self.kind(p, kw)?;
        if p.peek().is_none() {
            // Its own logic follows in an indented `logic` block.
            let c = Config::controller(&name.text, primary, Behaviour::Program);
            self.spans.controllers.push(Span::of(p, name));
            self.config.controllers.push(c);
            return Ok(());
        }
        let bw =
            p.next("a behaviour (children, mirror, stale-delete, wipe-on-zero, two-writes)")?;
        let behaviour = self.behaviour(p, primary, bw)?;
        self.check_behaviour(p, primary, kw, bw, behaviour)?;
        let behaviour = Self::fixed_twin(p, behaviour)?;
        p.done()?;
        let mut c = Config::controller(&name.text, primary, behaviour);
        if let Behaviour::Children { child, .. } = behaviour {
            c.watches.push(WatchConfig {
                kind: child,
                map: KeyMap::Owner,
                namespace: None,
                predicate: Predicate::All,
            });
        }
        self.spans.controllers.push(Span::of(p, name));
        self.config.controllers.push(c);
        Ok(())
    }

    /// A built-in behaviour: `children|mirror|stale-delete|wipe-on-zero|two-writes KIND`.
    fn behaviour(&self, p: &mut Parser, primary: KindId, bw: &Word) -> R<Behaviour> {
        let behaviour = match bw.text.as_str() {
            "children" => Behaviour::Children {
                child: self.next_kind(p)?,
                finalizer: false,
            },
            "mirror" => {
                let target = self.next_kind(p)?;
                if target == primary {
                    return Err(p.err_at(
                        &p.words[p.pos - 1],
                        "a mirror's kind must differ from the controller's kind",
                    ));
                }
                Behaviour::Mirror { target }
            }
            "stale-delete" => Behaviour::StaleDelete {
                child: self.next_kind(p)?,
                fixed: false,
            },
            "wipe-on-zero" => Behaviour::WipeOnZero {
                child: self.next_kind(p)?,
            },
            "two-writes" => Behaviour::TwoWrites {
                child: self.next_kind(p)?,
                fixed: false,
            },
            _ => return Err(unknown(p, bw, "behaviour", BEHAVIOURS)),
        };
        Ok(behaviour)
    }

    /// A behaviour whose data child has the primary's kind, or closes a cycle of kinds, would
    /// create objects without end.
    fn check_behaviour(
        &self,
        p: &Parser,
        primary: KindId,
        kw: &Word,
        bw: &Word,
        behaviour: Behaviour,
    ) -> R<()> {
        if let Behaviour::StaleDelete { child, .. }
        | Behaviour::WipeOnZero { child }
        | Behaviour::TwoWrites { child, .. } = behaviour
        {
            if child == primary {
                return Err(p
                    .err_at(
                        &p.words[p.pos - 1],
                        format!(
                            "the child kind must differ from the primary kind: every reconcile \
                             of a `{k}` named `a` would create a `{k}` named `a-data`, the next \
                             `a-data-data`, and so on without end",
                            k = kw.text
                        ),
                    )
                    .help(format!(
                        "declare a kind for the data, e.g. `kind {k}Data`, and write `{} {k}Data`",
                        bw.text,
                        k = kw.text
                    )));
            }
        }
        let edge = Self::name_edges(&Config::controller("", primary, behaviour));
        if let Some(cycle) = edge.first().and_then(|&e| self.name_cycle(e)) {
            return Err(p
                .err_at(
                    &p.words[p.pos - 1],
                    format!(
                        "this controller closes a cycle of kinds ({cycle}) through a data child: \
                         an object `a` would lead to `a-data`, then `a-data-data`, and so on \
                         without end"
                    ),
                )
                .help("give the data child a kind that no controller copies back"));
        }
        Ok(())
    }

    /// `... fixed`: the twin of a buggy behaviour with the bug fixed.
    fn fixed_twin(p: &mut Parser, behaviour: Behaviour) -> R<Behaviour> {
        Ok(if p.eat("fixed") {
            match behaviour {
                Behaviour::StaleDelete { child, .. } => {
                    Behaviour::StaleDelete { child, fixed: true }
                }
                Behaviour::TwoWrites { child, .. } => Behaviour::TwoWrites { child, fixed: true },
                _ => {
                    return Err(p.err_at(
                        &p.words[p.pos - 1],
                        "only stale-delete and two-writes have a `fixed` twin",
                    ))
                }
            }
        } else {
            behaviour
        })
    }

    /// The edge a controller adds from its primary kind to the kind it creates objects of, and
    /// whether the names it creates grow (`NAME-data`) or stay (a mirror's `NAME`). Children are
    /// left out: they are created with spec 0 and so have no children of their own.
    /// A program's edges: every kind it creates, growing for `key-SUFFIX` and `scale` (whose
    /// children may have any logic of their own), staying for `key`.
    fn name_edges(c: &ControllerConfig) -> Vec<(KindId, KindId, bool)> {
        let primary = c.primary;
        match c.behaviour {
            Behaviour::StaleDelete { child, .. }
            | Behaviour::WipeOnZero { child }
            | Behaviour::TwoWrites { child, .. } => vec![(primary, child, true)],
            Behaviour::Mirror { target } => vec![(primary, target, false)],
            Behaviour::Children { .. } => vec![],
            Behaviour::Program => c
                .program
                .iter()
                .flat_map(|p| p.creates())
                .map(|(k, grows)| (primary, k, grows))
                .collect(),
        }
    }

    /// With this new edge, a path of controllers from a kind back to itself through at least
    /// one data child: every object would make a longer name forever. The kinds on it.
    fn name_cycle(&self, edge: (KindId, KindId, bool)) -> Option<String> {
        let (from, to, grows) = edge;
        let edges: Vec<(KindId, KindId, bool)> = self
            .config
            .controllers
            .iter()
            .flat_map(Self::name_edges)
            .collect();
        // Search from `to` back to `from`: states are (kind, grew yet), each visited once.
        let n = self.config.kinds.len();
        let mut prev: Vec<Option<(usize, bool)>> = vec![None; n * 2];
        let start = (to.index(), grows);
        let mut queue = std::collections::VecDeque::from([start]);
        let mut seen = vec![false; n * 2];
        seen[start.0 * 2 + start.1 as usize] = true;
        while let Some((k, g)) = queue.pop_front() {
            if k == from.index() && g {
                let mut path = vec![self.config.kinds[k].name.clone()];
                let mut at = (k, g);
                while let Some(pv) = prev[at.0 * 2 + at.1 as usize] {
                    path.push(self.config.kinds[pv.0].name.clone());
                    at = pv;
                }
                path.push(self.config.kinds[from.index()].name.clone());
                path.reverse();
                return Some(path.join(" -> "));
            }
            for &(a, z, gz) in &edges {
                if a.index() == k {
                    let next = (z.index(), g || gz);
                    let i = next.0 * 2 + next.1 as usize;
                    if !seen[i] {
                        seen[i] = true;
                        prev[i] = Some((k, g));
                        queue.push_back(next);
                    }
                }
            }
        }
        None
    }

    fn placeholder_controller(&mut self, line: usize, ws: &[Word]) {
        if let Some(name) = ws.get(1) {
            if !self.config.controllers.iter().any(|c| c.name == name.text) {
                let b = Behaviour::Mirror { target: KindId(0) };
                self.spans.controllers.push(Span {
                    line,
                    col: name.col,
                    len: name.len,
                });
                self.config
                    .controllers
                    .push(Config::controller(&name.text, KindId(0), b));
            }
        }
    }

    /// `logic` or `desired` under a controller: the indented lines below are its statements.
    fn open_block(&mut self, p: &mut Parser, indent: usize) -> R<Block> {
        let w = p.next("`logic` or `desired`")?;
        let Some(idx) = self.config.controllers.len().checked_sub(1) else {
            return Err(p.err_at(w, "an indented option needs a `controller` line above it"));
        };
        if let Some(x) = p.peek() {
            return Err(p
                .err_at(x, format!("unexpected `{}` after `{}`", x.text, w.text))
                .help(format!(
                    "`{}` stands alone; its statements go on the lines below, indented further",
                    w.text
                )));
        }
        let desired = w.text == "desired";
        let c = &self.config.controllers[idx];
        if c.behaviour != Behaviour::Program {
            return Err(p
                .err_at(
                    w,
                    format!(
                        "controller `{}` already has a built-in behaviour; `{}` is for a controller's own logic",
                        c.name, w.text
                    ),
                )
                .help(format!(
                    "drop the behaviour from the controller line: `controller {} for {}`",
                    c.name,
                    self.config
                        .kinds
                        .get(c.primary.index())
                        .map_or("KIND", |k| k.name.as_str())
                )));
        }
        if self.blocks.contains(&(idx, desired)) {
            return Err(p.err_at(
                w,
                format!("controller `{}` has a `{}` block already", c.name, w.text),
            ));
        }
        self.blocks.push((idx, desired));
        Ok(Block {
            controller: idx,
            desired,
            indent,
            head_line: p.line,
            head: w.clone(),
            lines: vec![],
        })
    }

    fn close_block(&mut self, bk: Block) -> R<()> {
        let (stmts, bindings, memory) = Compiler::new(&self.config.kinds, bk.desired)
            .compile((bk.head_line, &bk.head), &bk.lines)?;
        let c = &mut self.config.controllers[bk.controller];
        let prog = std::sync::Arc::make_mut(c.program.get_or_insert_with(Default::default));
        if bk.desired {
            prog.desired = Some(stmts);
            prog.desired_bindings = bindings;
            return Ok(());
        }
        prog.body = stmts;
        prog.bindings = bindings;
        prog.memory = memory;
        let c = &self.config.controllers[bk.controller];
        for e in Self::name_edges(c) {
            if let Some(cycle) = self.name_cycle(e) {
                return Err(Diagnostic::at(
                    bk.head_line,
                    bk.head.col,
                    bk.head.len,
                    format!(
                        "this logic closes a cycle of kinds ({cycle}) through a child named after \
                         its owner: an object `a` would lead to `a-x`, then `a-x-x`, and so on \
                         without end"
                    ),
                )
                .help("give the child a kind that no controller copies back"));
            }
        }
        Ok(())
    }

    /// Every controller without a behaviour has its `logic`.
    fn check_logic(&self, diags: &mut Vec<Diagnostic>) {
        for (i, c) in self.config.controllers.iter().enumerate() {
            if c.behaviour == Behaviour::Program
                && c.program.as_ref().is_none_or(|p| p.body.is_empty())
            {
                let span = self.spans.controllers[i];
                diags.push(
                    span.diag(format!(
                        "controller `{}` has no behaviour and no `logic` block",
                        c.name
                    ))
                    .help("name a behaviour (children, mirror, stale-delete, wipe-on-zero, two-writes), or write its reconcile in an indented `logic` block"),
                );
            }
        }
    }

    fn controller_option(&mut self, p: &mut Parser) -> R<()> {
        let w = p.next("an option")?;
        let Some(idx) = self.config.controllers.len().checked_sub(1) else {
            return Err(p.err_at(w, "an indented option needs a `controller` line above it"));
        };
        match w.text.as_str() {
            "workers" => {
                let n = p.number("a worker count", MAX_WORKERS as i64)?;
                if n < 1 {
                    return Err(p.err_at(w, "a controller needs at least 1 worker"));
                }
                self.config.controllers[idx].workers = n as u32;
            }
            "watches" => self.watches_option(p, idx)?,
            "requeue-after" => {
                self.config.controllers[idx].requeue_after_ms = p.duration("a duration")?
            }
            "errors" => {
                let pct = p.percentage("the error rate")?;
                self.config.controllers[idx].error_ppm = (pct * 10_000.0) as u32;
            }
            "resync" => self.config.controllers[idx].resync_ms = p.duration("a period")?,
            "apiserver" => {
                self.config.controllers[idx].apiserver = self.next_apiserver(p)?;
            }
            "reconcile" => self.config.controllers[idx].reconcile_ms = p.duration("a duration")?,
            "link-delay" => self.config.controllers[idx].link_delay_ms = p.duration("a delay")?,
            "stale-read-check" => {
                let on = self.switch(p, "stale-read-check", Some(idx))?;
                self.config.controllers[idx].stale_read_check = on;
                self.explicit_options.insert((idx, "stale-read-check"));
            }
            "on-410" => {
                let v = p.next("`relist` or `rewatch`")?;
                self.config.controllers[idx].rewatch_on_gone = match v.text.as_str() {
                    "relist" => false,
                    "rewatch" => true,
                    _ => return Err(unknown(p, v, "setting", &["relist", "rewatch"])),
                };
            }
            "queue" => {
                self.explicit_options.insert((idx, "queue"));
                let q = p.next("`classic` or `priority`")?;
                self.config.controllers[idx].queue = match q.text.as_str() {
                    "classic" => QueueKind::Classic,
                    "priority" => QueueKind::Priority,
                    _ => return Err(unknown(p, q, "queue", &["classic", "priority"])),
                };
            }
            "anvil" => self.anvil_option(p, idx)?,
            "start" => self.config.controllers[idx].start_ms = p.moment("a time")?,
            "bookmarks" | "streaming-list" => self.switch_option(p, idx, w)?,
            "fail-first" => {
                let n = p.number("how many reconciles of each key fail", 1000)?;
                if n < 0 {
                    return Err(p.err_at(&p.words[p.pos - 1], "a count from 0 up"));
                }
                self.config.controllers[idx].fail_first = n as u32;
            }
            "finalizer" => {
                let c = &mut self.config.controllers[idx];
                match &mut c.behaviour {
                    Behaviour::Children { finalizer, .. } => *finalizer = true,
                    _ => {
                        return Err(
                            p.err_at(w, "only `children` controllers take a `finalizer` option")
                        )
                    }
                }
            }
            _ => return Err(unknown(p, w, "controller option", CONTROLLER_OPTIONS)),
        }
        p.done()
    }

    /// `bookmarks|streaming-list on|off` for controller `idx` alone.
    fn switch_option(&mut self, p: &mut Parser, idx: usize, w: &Word) -> R<()> {
        if w.text == "bookmarks" {
            self.config.controllers[idx].bookmarks =
                Some(self.switch(p, "bookmarks", Some(idx))?);
        } else {
            let on = self.switch(p, "streaming-list", Some(idx))?;
            self.config.controllers[idx].streaming_list = Some(on);
        }
        Ok(())
    }

    /// Reads a reflector setting's `on` or `off`, and where it was written (for the error of
    /// a streaming list without bookmarks): the cluster's (`of` none) or controller `of`'s.
    fn switch(&mut self, p: &mut Parser, setting: &'static str, of: Option<usize>) -> R<bool> {
        let v = p.next("`on` or `off`")?;
        let on = match v.text.as_str() {
            "on" => true,
            "off" => false,
            _ => return Err(unknown(p, v, "setting", &["on", "off"])),
        };
        let span = Span::of(p, v);
        self.spans.reflector_settings.push((setting, of, span));
        Ok(on)
    }

    /// `anvil [PERIOD]`: reconcile from etcd, every period.
    fn anvil_option(&mut self, p: &mut Parser, idx: usize) -> R<()> {
        let c = &mut self.config.controllers[idx];
        c.anvil = true;
        if p.peek().is_some() {
            let d = p.duration("a period")?;
            if d.is_zero() {
                return Err(p.err_at(&p.words[p.pos - 1], "the period must be positive"));
            }
            self.config.controllers[idx].anvil_period_ms = d;
        }
        Ok(())
    }

    /// `watches KIND [owner|self|none] [in NAMESPACE] [predicate P]` of controller `idx`.
    fn watches_option(&mut self, p: &mut Parser, idx: usize) -> R<()> {
        let kind = self.next_kind(p)?;
        let mut map = KeyMap::Itself;
        let mut namespace = None;
        let mut predicate = Predicate::All;
        while let Some(x) = p.peek() {
            p.pos += 1;
            match x.text.as_str() {
                "owner" => map = KeyMap::Owner,
                "self" => map = KeyMap::Itself,
                "none" => map = KeyMap::ReadOnly,
                "in" => namespace = Some(p.next("a namespace")?.text.clone()),
                "predicate" => {
                    let v = p.next("`generation-changed` or `rv-changed`")?;
                    predicate = match v.text.as_str() {
                        "generation-changed" => Predicate::GenerationChanged,
                        "rv-changed" => Predicate::ResourceVersionChanged,
                        _ => {
                            return Err(unknown(
                                p,
                                v,
                                "predicate",
                                &["generation-changed", "rv-changed"],
                            ))
                        }
                    };
                }
                _ => {
                    return Err(unknown(
                        p,
                        x,
                        "watch option",
                        &["owner", "self", "none", "in", "predicate"],
                    ))
                }
            }
        }
        let c = &mut self.config.controllers[idx];
        c.watches.retain(|wc| wc.kind != kind);
        c.watches.push(WatchConfig {
            kind,
            map,
            namespace,
            predicate,
        });
        Ok(())
    }

    fn timeline(&mut self, p: &mut Parser, first: &Word) -> R<()> {
        let mut span = Span::of(p, first);
        let (times, template) = if first.text == "at" {
            let (t, at) = self.at_time(p)?;
            span = at;
            (vec![t], false)
        } else {
            (self.burst_times(p, first)?, true)
        };
        let aw = p.next("an action (create, update, delete, crash, ...)")?;
        let rest = &p.words[p.pos..];
        // `{i}` in any word of a burst is its repetition number, from 0. Only the words that hold
        // it are rewritten for each repetition; an action without it is parsed once and copied.
        let varies = template && rest.iter().any(|w| w.text.contains("{i}"));
        let mut once: Option<Input> = None;
        for (i, t) in times.iter().enumerate() {
            let input = match &once {
                Some(input) => input.clone(),
                None if varies => {
                    let n = i.to_string();
                    let substituted: Vec<Word> = rest
                        .iter()
                        .map(|w| Word {
                            text: w.text.replace("{i}", &n),
                            col: w.col,
                            len: w.len,
                            quoted: w.quoted,
                        })
                        .collect();
                    let mut q = Parser {
                        line: p.line,
                        words: &substituted,
                        pos: 0,
                    };
                    self.action(&mut q, aw, None)?
                }
                None => {
                    let input = self.action(p, aw, None)?;
                    once = Some(input.clone());
                    input
                }
            };
            self.count_bytes(p, first, &input, template.then_some(times.len()))?;
            self.spans.timeline.push(span);
            self.config.timeline.push(TimedInput { at_ms: *t, input });
        }
        Ok(())
    }

    /// `at T` or `at +D` (after the previous line): the moment and the span to report it at.
    fn at_time(&mut self, p: &mut Parser) -> R<(TimeMs, Span)> {
        let tw = p.next("a time")?;
        let t = if let Some(rel) = tw.text.strip_prefix('+') {
            let d = p.duration_in(tw, rel, || {
                p.err_at(tw, format!("`{}` is not a duration", tw.text))
            })?;
            self.last_at + d
        } else {
            TimeMs::ZERO
                + p.duration_in(tw, &tw.text, || {
                    p.err_at(tw, format!("`{}` is not a time", tw.text))
                        .help("write 1s, 250ms, 2m, or +500ms after the previous line")
                })?
        };
        if t > MAX_TIME_MS {
            return Err(p.err_at(tw, "times stop at 24h"));
        }
        self.last_at = t;
        Ok((t, Span::of(p, tw)))
    }

    /// `every D N times [from T]`: the moments of a burst.
    fn burst_times(&self, p: &mut Parser, first: &Word) -> R<Vec<TimeMs>> {
        // every D N times [from T] ACTION
        let d = p.duration("an interval")?;
        let n = p.number("a count", MAX_BURST as i64)?;
        p.expect_kw("times")?;
        let from = if p.eat("from") {
            p.moment("a start time")?
        } else {
            self.last_at
        };
        if n < 1 {
            return Err(p.err_at(&p.words[p.pos - 2], "a burst repeats at least once"));
        }
        let times: Vec<TimeMs> = (0..n as u64).map(|i| from + d * i).collect();
        if times.last().is_some_and(|&t| t > MAX_TIME_MS) {
            return Err(p.err_at(first, "the burst runs past 24h"));
        }
        if self.config.timeline.len() + times.len() > MAX_TIMELINE {
            return Err(p.err_at(
                first,
                format!("the timeline would hold more than {MAX_TIMELINE} entries"),
            ));
        }
        Ok(times)
    }

    /// Every copy of a text or a name stays in the timeline: their total is bounded. `copies`:
    /// how many times a burst repeats the line.
    fn count_bytes(
        &mut self,
        p: &Parser,
        first: &Word,
        input: &Input,
        copies: Option<usize>,
    ) -> R<()> {
        if let Input::Say { text, .. } = input {
            self.narration_bytes += text.len();
            if self.narration_bytes > MAX_NARRATION_BYTES {
                let burst = copies
                    .map(|n| format!(" (this burst repeats its text {n} times)"))
                    .unwrap_or_default();
                return Err(p
                    .err_at(
                        first,
                        format!("the script's narration would exceed the limit of 1 MiB{burst}"),
                    )
                    .help("say less, or say it fewer times"));
            }
        } else if let Some(name) = written_name(input) {
            self.name_bytes += name.len();
            if self.name_bytes > MAX_NAME_BYTES {
                return Err(p
                    .err_at(
                        first,
                        "the timeline's object names would exceed the limit of 4 MiB in all",
                    )
                    .help("use shorter names or fewer repetitions"));
            }
        }
        Ok(())
    }

    fn object_name(p: &mut Parser, index: Option<usize>) -> R<String> {
        let w = p.next("an object name")?;
        let name = match index {
            Some(i) => w.text.replace("{i}", &i.to_string()),
            None => w.text.clone(),
        };
        let valid = |s: &str| {
            !s.is_empty()
                && s.len() <= 253
                && s.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-./{}".contains(c))
        };
        if !valid(&name) || name.matches('/').count() > 1 {
            return Err(p
                .err_at(w, format!("`{}` is not a valid object name", w.text))
                .help("use letters, digits, `-` and `.`, optionally `namespace/name`"));
        }
        Ok(name)
    }

    fn action(&self, p: &mut Parser, aw: &Word, index: Option<usize>) -> R<Input> {
        let input = match aw.text.as_str() {
            "create" | "update" | "status" | "delete" => self.write_input(p, aw, index)?,
            "disconnect" | "delay" | "failover" | "hold" | "restart" => {
                self.controller_fault_input(p, aw, index)?
            }
            // `probe list KIND [resourceVersion="N" [exact]] [on APISERVER]`
            // `probe watch KIND resourceVersion="N" [on APISERVER]`
            "probe" => self.probe_input(p, aw)?,
            "pause" | "resume" | "restart-apiserver" | "reinit-cache" => {
                self.apiserver_fault_input(p, aw)?
            }
            "crash" => self.crash_input(p)?,
            "say" => Self::say_input(p)?,
            _ => return Err(unknown(p, aw, "action", ACTIONS)),
        };
        p.done()?;
        Ok(input)
    }

    /// `disconnect|delay|failover|hold|restart CONTROLLER ...`: a fault of a controller's
    /// connection or process (crashes in `crash_input`).
    fn controller_fault_input(&self, p: &mut Parser, aw: &Word, index: Option<usize>) -> R<Input> {
        let controller = self.next_controller(p)?;
        let input = match aw.text.as_str() {
            "disconnect" => {
                p.expect_kw("for")?;
                Input::Disconnect {
                    controller,
                    duration_ms: p.duration("a duration")?,
                }
            }
            "delay" => Input::Delay {
                controller,
                delay_ms: p.duration("a delay")?,
            },
            // `failover CONTROLLER to APISERVER`: the load balancer moves its connections.
            "failover" => {
                p.expect_kw("to")?;
                Input::Failover {
                    controller,
                    apiserver: self.next_apiserver(p)?,
                }
            }
            // `hold CONTROLLER KIND NAME [for D]`: Sieve's unobserved-state injection.
            "hold" => Input::Hold {
                controller,
                kind: self.next_kind(p)?,
                name: Self::object_name(p, index)?,
                for_ms: Self::for_duration(
                    p,
                    "how long at most",
                    listwatch_core::explore::HOLD_FOR_MS,
                )?,
            },
            _ => Input::Restart {
                controller,
                apiserver: if p.eat("on") {
                    Some(self.next_apiserver(p)?)
                } else {
                    None
                },
            },
        };
        Ok(input)
    }

    /// `[for D]`: how long a fault lasts, `default_ms` when the line does not say.
    fn for_duration(p: &mut Parser, what: &str, default_ms: DurationMs) -> R<DurationMs> {
        if p.eat("for") {
            p.duration(what)
        } else {
            Ok(default_ms)
        }
    }

    /// `say "TEXT" [and wait]`: narration; with `and wait` playback pauses there until the
    /// reader continues.
    fn say_input(p: &mut Parser) -> R<Input> {
        let t = p.next("a quoted text")?;
        if !t.quoted {
            return Err(p.err_at(t, "put the narration in quotes: say \"...\""));
        }
        let wait = p.eat("and");
        if wait {
            p.expect_kw("wait")?;
        }
        Ok(Input::Say {
            text: t.text.clone(),
            wait,
        })
    }

    /// `create|update|status|delete KIND NAME ...`: a write of the timeline.
    fn write_input(&self, p: &mut Parser, aw: &Word, index: Option<usize>) -> R<Input> {
        let input = match aw.text.as_str() {
            "create" | "update" => {
                let kind = self.next_kind(p)?;
                let name = Self::object_name(p, index)?;
                let given = p.eat("spec");
                let spec = if given {
                    p.number("a spec value", MAX_SPEC)?
                } else {
                    0
                };
                if aw.text == "create" {
                    Input::Create { kind, name, spec }
                } else {
                    if !given {
                        return Err(p.err_at(aw, "an update needs `spec N`"));
                    }
                    Input::Update { kind, name, spec }
                }
            }
            "status" => {
                let kind = self.next_kind(p)?;
                let name = Self::object_name(p, index)?;
                let status = p.number("a status value", MAX_SPEC)?;
                Input::UpdateStatus { kind, name, status }
            }
            _ => {
                let kind = self.next_kind(p)?;
                Input::Delete {
                    kind,
                    name: Self::object_name(p, index)?,
                }
            }
        };
        Ok(input)
    }

    /// `pause|resume|restart-apiserver|reinit-cache APISERVER ...`: a fault of an apiserver.
    fn apiserver_fault_input(&self, p: &mut Parser, aw: &Word) -> R<Input> {
        let input = match aw.text.as_str() {
            "pause" | "resume" => {
                let apiserver = self.next_apiserver(p)?;
                if aw.text == "pause" {
                    Input::PauseCache { apiserver }
                } else {
                    Input::ResumeCache { apiserver }
                }
            }
            "restart-apiserver" => {
                let apiserver = self.next_apiserver(p)?;
                let down_ms = Self::for_duration(p, "a duration", DurationMs(1000))?;
                Input::RestartApiserver { apiserver, down_ms }
            }
            _ => {
                let apiserver = self.next_apiserver(p)?;
                let kind = self.next_kind(p)?;
                let down_ms = Self::for_duration(p, "a duration", DurationMs(1000))?;
                Input::ReinitCache {
                    apiserver,
                    kind,
                    down_ms,
                }
            }
        };
        Ok(input)
    }

    /// `probe list|watch KIND ...`: a request made directly to an apiserver.
    fn probe_input(&self, p: &mut Parser, aw: &Word) -> R<Input> {
        let r = p.next("`list` or `watch`")?;
        let list = match r.text.as_str() {
            "list" => true,
            "watch" => false,
            _ => return Err(unknown(p, r, "probe request", &["list", "watch"])),
        };
        let kind = self.next_kind(p)?;
        let rv = match p.peek() {
            Some(w) if w.text.starts_with("resourceVersion=") => {
                p.pos += 1;
                Some(Self::rv_param(p)?)
            }
            _ => None,
        };
        let exact = list && p.eat("exact");
        let request = if list {
            ProbeRequest::List {
                rv: match rv.as_deref() {
                    None | Some("") => {
                        if exact {
                            return Err(p.err_at(
                                &p.words[p.pos - 1],
                                "an Exact list needs a resourceVersion=\"N\" above 0",
                            ));
                        }
                        ListRv::Consistent
                    }
                    Some("0") if !exact => ListRv::Any,
                    Some(n) => {
                        let n: Rv = n.parse().map_err(|_| {
                            p.err_at(&p.words[p.pos - 1], "a resourceVersion is a number")
                        })?;
                        if exact {
                            ListRv::Exact(n)
                        } else {
                            ListRv::NotOlderThan(n)
                        }
                    }
                },
            }
        } else {
            match rv.as_deref() {
                Some("") => ProbeRequest::WatchMostRecent,
                rv => {
                    let from = rv.and_then(|r| r.parse::<Rv>().ok()).ok_or_else(|| {
                        p.err_at(
                            aw,
                            "a probe's watch needs resourceVersion=\"N\" (or \"\": most recent)",
                        )
                    })?;
                    ProbeRequest::Watch { from }
                }
            }
        };
        let apiserver = if p.eat("on") {
            self.next_apiserver(p)?
        } else {
            ApiserverId(0)
        };
        Ok(Input::Probe {
            apiserver,
            kind,
            request,
        })
    }

    /// `crash CONTROLLER [after N writes] [restart-after D]`.
    fn crash_input(&self, p: &mut Parser) -> R<Input> {
        let controller = self.next_controller(p)?;
        let after_writes = if p.eat("after") {
            let n = p.number("a write count", 1000)?;
            let unit = p.next("`write` or `writes`")?;
            if unit.text != "write" && unit.text != "writes" {
                return Err(p.err_at(unit, "expected `write` or `writes`"));
            }
            if n < 1 {
                return Err(p.err_at(unit, "crash after at least 1 write"));
            }
            Some(n as u32)
        } else {
            None
        };
        let restart_after_ms = if p.eat("restart-after") {
            Some(p.duration("a delay")?)
        } else {
            None
        };
        Ok(Input::Crash {
            controller,
            after_writes,
            restart_after_ms,
        })
    }

    /// An object the timeline writes, or one a controller makes from it (`NAME-0`, `NAME-data`,
    /// and so on), by its full or its short name.
    fn is_known_name(&self, w: &str) -> bool {
        let mut w = w;
        loop {
            if self.known_names_set.contains(w) {
                return true;
            }
            let Some((base, suffix)) = w.rsplit_once('-') else {
                return false;
            };
            if suffix != "data"
                && (suffix.is_empty() || !suffix.bytes().all(|b| b.is_ascii_digit()))
            {
                return false;
            }
            w = base;
        }
    }

    fn unknown_scope(&self, p: &Parser, x: &Word) -> Diagnostic {
        let d = p.err_at(
            x,
            format!(
                "`{}` is not a controller, a kind or an object of this scenario",
                x.text
            ),
        );
        // `web` where only `ns/web` exists: name the namespaces rather than guess by spelling.
        let qualified: Vec<&str> = self
            .known_names
            .iter()
            .filter(|n| n.split_once('/').is_some_and(|(_, short)| short == x.text))
            .map(String::as_str)
            .take(4)
            .collect();
        if !qualified.is_empty() {
            return d.help(format!(
                "`{}` means `default/{}`; write the namespace: {}",
                x.text,
                x.text,
                qualified
                    .iter()
                    .map(|n| format!("`{n}`"))
                    .collect::<Vec<_>>()
                    .join(" or ")
            ));
        }
        let candidates = self
            .config
            .controllers
            .iter()
            .map(|c| c.name.as_str())
            .chain(self.config.kinds.iter().map(|k| k.name.as_str()))
            .chain(self.known_names.iter().map(String::as_str));
        match nearest(&x.text, candidates) {
            Some(n) => d.help(format!("did you mean `{n}`?")),
            None => d.help(
                "a scope word names a controller, a kind, or an object the timeline writes \
                 (or one a controller makes from it, like `web-0` or `web-data`)",
            ),
        }
    }

    fn cmp(p: &mut Parser) -> R<Cmp> {
        let w = p.next("a comparison (==, !=, <, <=, >, >=)")?;
        Ok(match w.text.as_str() {
            "==" | "=" => Cmp::Eq,
            "!=" => Cmp::Ne,
            "<" => Cmp::Lt,
            "<=" => Cmp::Le,
            ">" => Cmp::Gt,
            ">=" => Cmp::Ge,
            _ => {
                return Err(unknown(
                    p,
                    w,
                    "comparison",
                    &["==", "!=", "<", "<=", ">", ">="],
                ))
            }
        })
    }

    fn expectation(&self, p: &mut Parser) -> R<Expect> {
        p.expect_kw("expect")?;
        let w = p.next("what to expect")?;
        let e = match w.text.as_str() {
            "esr" => {
                let controller = match p.peek() {
                    Some(c) => {
                        p.pos += 1;
                        Some(self.controller(p, c)?)
                    }
                    None => None,
                };
                Expect::Esr { controller }
            }
            "final" => {
                let kind = self.next_kind(p)?;
                let name = Self::object_name(p, None)?;
                let f = p.next("`spec` or `status`")?;
                let field = match f.text.as_str() {
                    "spec" => Field::Spec,
                    "status" => Field::Status,
                    _ => return Err(unknown(p, f, "field", &["spec", "status"])),
                };
                let cmp = Self::cmp(p)?;
                Expect::Final {
                    kind,
                    name,
                    field,
                    cmp,
                    value: p.number("a value", MAX_SPEC)?,
                }
            }
            "exists" | "absent" => {
                let kind = self.next_kind(p)?;
                Expect::Exists {
                    kind,
                    name: Self::object_name(p, None)?,
                    negated: w.text == "absent",
                }
            }
            c if COUNTED.contains(&c) => self.count_expectation(p, c)?,
            // `expect probe got "TEXT" | listed N [at rv R] | opened [replaying N]`
            "probe" if !self.config.controllers.iter().any(|c| c.name == "probe") => {
                Self::probe_expectation(p)?
            }
            // `expect message "TEXT" [CMP N] [by TIME]`
            "message" if !self.config.controllers.iter().any(|c| c.name == "message") => {
                Self::message_expectation(p)?
            }
            _ => return self.controller_expectation(p, w),
        };
        p.done()?;
        Ok(e)
    }

    /// `expect CONTROLLER ...`: what a controller saw, got or sent.
    fn controller_expectation(&self, p: &mut Parser, w: &Word) -> R<Expect> {
        // `expect CONTROLLER [never] saw KIND NAME spec N`
        let cw = w;
        let controller = self.controller(p, cw).map_err(|_| {
            let mut all: Vec<&str> = vec!["esr", "final", "exists", "absent", "message", "probe"];
            all.extend(COUNTED);
            all.extend(self.config.controllers.iter().map(|c| c.name.as_str()));
            unknown(p, cw, "expectation", &all)
        })?;
        // `expect CONTROLLER [KIND] got "TEXT" | sent list|watch resourceVersion="RV"
        //  [by T] [between D1 and D2 after got ... | sent ...]`
        let kind = match p.peek() {
            Some(k) if self.config.kind_id(&k.text).is_some() => {
                p.pos += 1;
                self.config.kind_id(&k.text)
            }
            _ => None,
        };
        if matches!(p.peek().map(|x| x.text.as_str()), Some("got" | "sent")) {
            let fact = Self::fact(p)?;
            let by_ms = if p.eat("by") {
                Some(p.moment("a time")?)
            } else {
                None
            };
            let after = if p.eat("between") {
                let lo = p.duration("the earliest delay")?;
                p.expect_kw("and")?;
                let hi = p.duration("the latest delay")?;
                p.expect_kw("after")?;
                if hi < lo {
                    return Err(p.err_at(&p.words[p.pos - 2], "the window ends before it starts"));
                }
                Some((lo, hi, Self::fact(p)?))
            } else {
                None
            };
            p.done()?;
            return Ok(Expect::Trace {
                controller,
                kind,
                fact,
                by_ms,
                after,
            });
        }
        if kind.is_some() {
            return Err(p.err_at(
                &p.words[p.pos - 1],
                "after a kind comes `got \"TEXT\"` or `sent list|watch resourceVersion=\"RV\"`",
            ));
        }
        let negated = p.eat("never");
        p.expect_kw("saw")?;
        let kind = self.next_kind(p)?;
        let name = Self::object_name(p, None)?;
        p.expect_kw("spec")?;
        let spec = p.number("a spec value", MAX_SPEC)?;
        p.done()?;
        Ok(Expect::Saw {
            controller,
            kind,
            name,
            spec,
            negated,
        })
    }

    /// `expect probe got "TEXT" | listed N [at rv R] | opened [replaying N]`.
    /// `message "TEXT" [CMP N] [by TIME]`: events whose one-line message contains the text;
    /// without a comparison, at least one.
    fn message_expectation(p: &mut Parser) -> R<Expect> {
        let t = p.next("the text in quotes")?;
        if !t.quoted || t.text.is_empty() {
            return Err(p.err_at(t, "put the text in quotes: message \"...\""));
        }
        let text = t.text.clone();
        let (cmp, value) = match p.peek() {
            Some(w) if w.text != "by" => {
                let cmp = Self::cmp(p)?;
                (cmp, p.number("a count", i64::MAX)?)
            }
            _ => (Cmp::Ge, 1),
        };
        let by_ms = if p.eat("by") {
            Some(p.moment("a time")?)
        } else {
            None
        };
        Ok(Expect::Message {
            text,
            cmp,
            value,
            by_ms,
        })
    }

    fn probe_expectation(p: &mut Parser) -> R<Expect> {
        let what = p.next("`got`, `listed` or `opened`")?;
        let fact = match what.text.as_str() {
            "got" => {
                let t = p.next("the error's text in quotes")?;
                if !t.quoted {
                    return Err(p.err_at(t, "put the error's text in quotes: got \"...\""));
                }
                ProbeFact::Got(t.text.clone())
            }
            "listed" => {
                let items = p.number("how many items", u32::MAX as i64)?;
                p.eat("items");
                let rv = if p.eat("at") {
                    p.expect_kw("rv")?;
                    Some(p.number("a list RV", i64::MAX)? as Rv)
                } else {
                    None
                };
                ProbeFact::Listed {
                    items: items.max(0) as u32,
                    rv,
                }
            }
            "opened" => {
                let replayed = if p.eat("replaying") {
                    Some(p.number("how many events", u32::MAX as i64)?.max(0) as u32)
                } else {
                    None
                };
                ProbeFact::Opened { replayed }
            }
            _ => {
                return Err(unknown(
                    p,
                    what,
                    "probe answer",
                    &["got", "listed", "opened"],
                ))
            }
        };
        Ok(Expect::Probe { fact })
    }

    /// `expect COUNTED [CONTROLLER|KIND|NAME]... CMP N [by T]`.
    fn count_expectation(&self, p: &mut Parser, c: &str) -> R<Expect> {
        let what = match c {
            "gone" => Counted::Gone,
            "relists" => Counted::Relists,
            "lists" => Counted::Lists,
            "watches" => Counted::Watches,
            "reconciles" => Counted::Reconciles,
            "creates" => Counted::Writes(WriteOp::Create),
            "updates" => Counted::Writes(WriteOp::Update),
            "deletes" => Counted::Writes(WriteOp::Delete),
            "evictions" => Counted::Evictions,
            "collapsed" => Counted::Collapsed,
            _ => Counted::Bookmarks,
        };
        let mut scope = Scope::default();
        while let Some(x) = p.peek() {
            if ["==", "=", "!=", "<", "<=", ">", ">="].contains(&x.text.as_str()) {
                break;
            }
            p.pos += 1;
            if let Some(i) = self
                .config
                .controllers
                .iter()
                .position(|c| c.name == x.text)
            {
                scope.controller = Some(ControllerId(i as u16));
            } else if let Some(k) = self.config.kind_id(&x.text) {
                scope.kind = Some(k);
            } else if self.is_known_name(&x.text) {
                scope.name = Some(x.text.clone());
            } else {
                return Err(self.unknown_scope(p, x));
            }
        }
        let cmp = Self::cmp(p)?;
        let value = p.number("a count", i64::MAX / 2)?;
        let by_ms = if p.eat("by") {
            Some(p.moment("a time")?)
        } else {
            None
        };
        Ok(Expect::Count {
            what,
            scope,
            cmp,
            value,
            by_ms,
        })
    }

    /// The word just read, `resourceVersion="N"` (or `"0"`, `""`): the digits between the quotes.
    fn rv_param(p: &Parser) -> R<String> {
        let v = &p.words[p.pos - 1];
        v.text
            .strip_prefix("resourceVersion=")
            .filter(|rv| rv.len() >= 2 && rv.starts_with('"') && rv.ends_with('"'))
            .map(|rv| &rv[1..rv.len() - 1])
            .filter(|rv| rv.len() <= 19 && rv.bytes().all(|b| b.is_ascii_digit()))
            .map(str::to_string)
            .ok_or_else(|| {
                p.err_at(
                    v,
                    "write the parameter as the request does: resourceVersion=\"10\", \
                     resourceVersion=\"0\" or resourceVersion=\"\"",
                )
            })
    }

    /// `got "TEXT"` or `sent list|watch resourceVersion="RV"`.
    fn fact(p: &mut Parser) -> R<Fact> {
        let w = p.next("`got` or `sent`")?;
        match w.text.as_str() {
            "got" => {
                let t = p.next("the error's text in quotes")?;
                if !t.quoted {
                    return Err(p.err_at(t, "put the error's text in quotes: got \"...\""));
                }
                Ok(Fact::Got(t.text.clone()))
            }
            "sent" => {
                let r = p.next("`list` or `watch`")?;
                let list = match r.text.as_str() {
                    "list" => true,
                    "watch" => false,
                    _ => return Err(unknown(p, r, "request", &["list", "watch"])),
                };
                p.next("resourceVersion=\"RV\"")?;
                let rv = Self::rv_param(p)?;
                Ok(Fact::Sent {
                    list,
                    rv: format!("\"{rv}\""),
                })
            }
            _ => Err(unknown(p, w, "fact", &["got", "sent"])),
        }
    }

    /// The run's end against the timeline and the 24 h limit, located at the entry (or the `run`
    /// statement) at fault.
    fn check_end(&self) -> Option<Diagnostic> {
        let end = self.config.end_ms;
        let (last, span) = self.config.timeline.iter().zip(&self.spans.timeline).fold(
            None,
            |best: Option<(TimeMs, Span)>, (t, s)| match best {
                Some((at, _)) if at >= t.at_ms => best,
                _ => Some((t.at_ms, *s)),
            },
        )?;
        if !self.end_set && end > MAX_TIME_MS {
            return Some(
                span.diag(format!(
                    "the run ends 2m after its last entry, at {}, past the limit of 24h",
                    clock(end)
                ))
                .help(format!(
                    "without a `run` statement a run lasts until 2m after its last entry; \
                     write `run 24h` (the longest run) to end it at the limit, or move this \
                     entry at {} earlier",
                    clock(last)
                )),
            );
        }
        if last > end {
            let first_late = self
                .config
                .timeline
                .iter()
                .zip(&self.spans.timeline)
                .find(|(t, _)| t.at_ms > end)
                .map(|(t, s)| (t.at_ms, *s))
                .unwrap_or((last, span));
            let mut d = first_late.1.diag(format!(
                "this entry at {} comes after the end of the run at {end}",
                first_late.0
            ));
            d = d.help(match self.spans.run {
                Some(r) => format!(
                    "lengthen the run: `run {last}` or more on line {}, or move this entry earlier",
                    r.line
                ),
                None => format!("lengthen the run: `run {last}` or more"),
            });
            return Some(d);
        }
        None
    }

    /// A configuration error at the line that declared the offending thing.
    fn locate(&self, e: &ConfigError) -> Diagnostic {
        let at_start = |msg: String| Diagnostic::at(1, 1, 1, msg);
        fn named<'n>(
            spans: &[Span],
            mut names: impl Iterator<Item = &'n str>,
            want: &str,
        ) -> Option<Span> {
            names
                .position(|n| n == want)
                .and_then(|i| spans.get(i).copied())
        }
        let span = match e {
            ConfigError::NoApiservers => return at_start(e.to_string()),
            ConfigError::TooMany { what, max, .. } => match *what {
                "kinds" => self.spans.kinds.get(*max),
                "apiservers" => self.spans.apiservers.get(*max),
                "controllers" => self.spans.controllers.get(*max),
                _ => self.spans.timeline.get(*max),
            }
            .copied(),
            ConfigError::BadCapacity { kind, .. } => named(
                &self.spans.kinds,
                self.config.kinds.iter().map(|k| k.name.as_str()),
                kind,
            ),
            ConfigError::BadController { controller, .. } => named(
                &self.spans.controllers,
                self.config.controllers.iter().map(|c| c.name.as_str()),
                controller,
            ),
            ConfigError::InputAfterEnd { at_ms, .. } => self
                .config
                .timeline
                .iter()
                .zip(&self.spans.timeline)
                .find(|(t, _)| t.at_ms == *at_ms)
                .map(|(_, s)| *s),
            ConfigError::EndBeyondLimit { .. } => self.spans.run,
            ConfigError::StreamingListWithoutBookmarks { controller } => {
                self.streaming_conflict_span(controller)
            }
            _ => None,
        };
        match span {
            Some(s) => s.diag(e.to_string()),
            None => at_start(e.to_string()),
        }
    }

    /// Where a controller's streaming list without bookmarks was decided: its own `bookmarks`
    /// or `streaming-list` option, else the cluster's (`bookmarks` first: the list needs them),
    /// else the `kubernetes` version whose defaults chose them, else the controller itself.
    fn streaming_conflict_span(&self, controller: &str) -> Option<Span> {
        let idx = self
            .config
            .controllers
            .iter()
            .position(|c| c.name == controller)?;
        let last = |setting: &str, of: Option<usize>| {
            let settings = self.spans.reflector_settings.iter().rev();
            settings
                .filter(|(s, c, _)| *s == setting && *c == of)
                .map(|(_, _, span)| *span)
                .next()
        };
        last("bookmarks", Some(idx))
            .or_else(|| last("streaming-list", Some(idx)))
            .or_else(|| last("bookmarks", None))
            .or_else(|| last("streaming-list", None))
            .or_else(|| last("kubernetes", None))
            .or_else(|| self.spans.controllers.get(idx).copied())
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
        if !self.end_set {
            // Default: two minutes of quiet after the last input, so everything can settle.
            let last_input = self.config.timeline.iter().map(|t| t.at_ms).max();
            self.config.end_ms = last_input.unwrap_or(TimeMs::ZERO) + DurationMs(120_000);
        }
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
        self.config.timeline.sort_by_key(|t| t.at_ms);
    }

    /// The defaults of the named Kubernetes version, where the script did not choose.
    /// docs/fidelity.md's table of versions is this function, row for row.
    fn apply_version_defaults(&mut self) {
        self.apply_controller_runtime_defaults();
        let minor = self.version.unwrap_or(DEFAULT_KUBERNETES);
        for (a, fake) in self.config.apiservers.iter_mut().zip(&self.fakes) {
            a.fake = fake.map(|v| FakeTracker::of_version(v.unwrap_or(minor)));
        }
        // KEP-5647's gates cover kube-controller-manager's DaemonSet, Job, ReplicaSet and
        // StatefulSet controllers: here, the `children` behaviour.
        let stale_check = self.stale_read_check.unwrap_or(minor >= 36);
        for (i, c) in self.config.controllers.iter_mut().enumerate() {
            let built_in = matches!(c.behaviour, Behaviour::Children { .. });
            if built_in && !self.explicit_options.contains(&(i, "stale-read-check")) {
                c.stale_read_check = stale_check;
            }
        }
        let Some(minor) = self.version else {
            return;
        };
        for (k, given) in self.config.kinds.iter_mut().zip(&self.explicit_cache) {
            if !given && minor < 19 {
                k.cache = CacheMode::Fixed { capacity: 100 };
            }
        }
        if !self.explicit_streaming {
            self.config.reflector.streaming_list = minor >= 35;
        }
        if !self.explicit_bookmarks {
            self.config.reflector.bookmarks = minor >= 16;
        }
        if !self.explicit.contains("too-large-rv") {
            self.config.reflector.too_large_relists_consistent = minor >= 19;
        }
        let version = ServerFeatures::of_version(minor);
        let f = &mut self.config.server;
        let gates: [(&str, &mut bool, bool); 5] = [
            (
                "ConsistentListFromCache",
                &mut f.consistent_list_from_cache,
                version.consistent_list_from_cache,
            ),
            (
                "ResilientWatchCacheInitialization",
                &mut f.resilient_cache_init,
                version.resilient_cache_init,
            ),
            (
                "WatchFromStorageWithoutResourceVersion",
                &mut f.watch_from_storage_without_rv,
                version.watch_from_storage_without_rv,
            ),
            ("WatchList", &mut f.watch_list, version.watch_list),
            (
                "EfficientWatchResumption",
                &mut f.progress_notify,
                version.progress_notify,
            ),
        ];
        for (gate, value, default) in gates {
            if !self.explicit.contains(gate) {
                *value = default;
            }
        }
    }

    /// controller-runtime 0.23 made the priority queue the default (`UsePriorityQueue`);
    /// before it a controller has client-go's rate-limited queue.
    fn apply_controller_runtime_defaults(&mut self) {
        let Some(minor) = self.controller_runtime else {
            return;
        };
        let queue = if minor >= 23 {
            QueueKind::Priority
        } else {
            QueueKind::Classic
        };
        for (i, c) in self.config.controllers.iter_mut().enumerate() {
            if !self.explicit_options.contains(&(i, "queue")) {
                c.queue = queue;
            }
        }
    }

    /// The names expectation scopes may use, in line order (the order of suggestions).
    fn collect_known_names(&mut self) {
        let mut seen = std::collections::HashSet::new();
        for name in self
            .config
            .timeline
            .iter()
            .filter_map(|t| written_name(&t.input))
        {
            // A scope name means what the timeline means: `a` is `default/a`, so `a` is
            // known only when `default/a` is written, and `ns/a` must be written out.
            // Suggestions list each object once, as the timeline wrote it.
            let qualified = listwatch_core::sim::qualify(name);
            if let Some(short) = qualified.strip_prefix("default/") {
                seen.insert(short.to_string());
            }
            if seen.insert(qualified.clone()) {
                self.known_names.push(name.to_string());
            }
        }
        self.known_names_set = seen;
    }

    /// The expectations, read once every declaration is known; at most 50 diagnostics in all.
    fn resolve_expectations(&mut self, diags: &mut Vec<Diagnostic>) {
        for (line, text, ws) in std::mem::take(&mut self.pending_expects) {
            let mut p = Parser {
                line,
                words: &ws,
                pos: 0,
            };
            match self.expectation(&mut p) {
                Ok(expect) => self.expectations.push(Expectation { line, text, expect }),
                Err(d) => diags.push(d),
            }
            if diags.len() >= 50 {
                return;
            }
        }
    }
}

/// A version `MAJOR.N` (`prefix` is `MAJOR.`) with N from `lowest` to 40, as its minor number.
fn minor_version(
    p: &Parser,
    v: &Word,
    (prefix, lowest): (&str, u32),
    what: &str,
    help: &str,
) -> R<u32> {
    v.text
        .strip_prefix(prefix)
        .and_then(|m| m.parse::<u32>().ok())
        .filter(|m| (lowest..=40).contains(m))
        .ok_or_else(|| {
            p.err_at(v, format!("`{}` is not {what} this model knows", v.text))
                .help(help)
        })
}

/// The object a timeline write names.
fn written_name(input: &Input) -> Option<&str> {
    match input {
        Input::Create { name, .. }
        | Input::Update { name, .. }
        | Input::UpdateStatus { name, .. }
        | Input::Delete { name, .. } => Some(name),
        _ => None,
    }
}

#[cfg(test)]
mod decimal_tests {
    use super::{decimal, parse_duration, DurationMs, NumberError, MAX_DIGITS};

    /// Numbers in every form: signs, integer parts, fractions and exponents, and junk.
    fn number_cases() -> Vec<String> {
        let mut cases: Vec<String> = vec![];
        let ints = [
            "",
            "0",
            "1",
            "00",
            "7",
            "10",
            "250",
            "0001",
            "123456789012345",
            "999999999999999",
            "1234567890123456",
        ];
        let fracs = [
            "",
            ".",
            ".0",
            ".5",
            ".05",
            ".000",
            ".25",
            ".1",
            ".3",
            ".7",
            ".123456789",
            ".000000000000000000000001",
            ".50000000000000000000",
        ];
        let exps = [
            "", "e0", "e3", "E-3", "e+2", "e-25", "e22", "e23", "e-22", "e", "e+",
        ];
        for sign in ["", "-", "+"] {
            for i in ints {
                for f in fracs {
                    for e in exps {
                        cases.push(format!("{sign}{i}{f}{e}"));
                    }
                }
            }
        }
        for junk in [
            "", ".", "-", "+", "..5", "1.2.3", "1_000", "inf", "NaN", "1 ", " 1", "--1", "0x10",
        ] {
            cases.push(junk.to_string());
        }
        cases
    }

    /// Every number std reads with at most 15 significant digits and a power of ten within 22 is
    /// read to the same bits; durations and percentages agree with std's reading everywhere else
    /// too, except the numbers with more digits, which are refused.
    #[test]
    fn decimal_reads_what_std_reads() {
        let significant = |s: &str| {
            let m = s.split(['e', 'E']).next().unwrap();
            let d: String = m.chars().filter(char::is_ascii_digit).collect();
            d.trim_start_matches('0').trim_end_matches('0').len()
        };
        for s in &number_cases() {
            let std: Option<f64> = s.parse().ok();
            if significant(s) > MAX_DIGITS {
                // A number std reads is refused for its digits; anything else is no number.
                let why = match std {
                    Some(_) => NumberError::TooManyDigits(s.clone()),
                    None => NumberError::Malformed,
                };
                assert_eq!(decimal(s), Err(why), "{s}");
                continue;
            }
            let ours = decimal(s).ok();
            match (std, ours) {
                (Some(a), Some(b)) if a.is_finite() => {
                    let exact = a == 0.0 || (1e-7..=1e22).contains(&a.abs());
                    if exact {
                        assert_eq!(a.to_bits(), b.to_bits(), "{s}: {a} vs {b}");
                    }
                }
                (Some(a), None) => assert!(!a.is_finite(), "{s}"),
                (None, None) | (Some(_), Some(_)) => {}
                (None, Some(b)) => panic!("{s}: std refuses, decimal reads {b}"),
            }
            // What the callers make of it: whole milliseconds, parts per million.
            let old_duration = |unit: &str, mult: f64| {
                let n: f64 = s.parse().ok()?;
                (n.is_finite() && (0.0..=1e12).contains(&n))
                    .then(|| DurationMs((n * mult).round() as u64))
                    .filter(|_| !unit.is_empty())
            };
            for (unit, mult) in [
                ("ms", 1.0),
                ("s", 1000.0),
                ("m", 60_000.0),
                ("h", 3_600_000.0),
            ] {
                if s.contains(['e', 'E']) || s.contains("inf") || s.contains("NaN") {
                    continue; // a duration's number ends at its first letter
                }
                assert_eq!(
                    parse_duration(&format!("{s}{unit}")).ok(),
                    old_duration(unit, mult),
                    "{s}{unit}"
                );
            }
            let pct = |v: Option<f64>| {
                v.filter(|x| (0.0..=100.0).contains(x))
                    .map(|p| (p * 10_000.0) as u32)
            };
            assert_eq!(pct(ours), pct(std), "{s}%");
        }
    }
}
