//! `import`: pasted observations (client-go reflector and informer log lines, apiserver audit
//! events for lists and watches, `apiserver_watch_cache_*` metric samples) become a scenario
//! script whose timeline reproduces what was observed, with a report of what each input line
//! became and which lines were not recognised. docs/import.md is the user's guide.
//!
//! The way through: each line goes to the recogniser of its format (`klog.rs`, `audit.rs`,
//! `metrics.rs`), which turns it into an observation (`Obs`) or says why not; `plan/` turns
//! the observations into a script, runs it, and pins what the run shows as expectations. No IO
//! here: the CLI and the page hand the text in.

mod audit;
mod klog;
mod metrics;
mod plan;
mod values;

use serde::Serialize;

/// The largest paste read: a bigger one is refused with a message (keep the lines around the
/// incident).
pub const MAX_INPUT_BYTES: usize = 1 << 20;
/// The most lines read.
pub const MAX_INPUT_LINES: usize = 10_000;
/// A longer line is not read (reported as not recognised): no log line is this long.
pub const MAX_LINE_BYTES: usize = 16 * 1024;

/// What an import made: the script (it parses, and `listwatch check` passes it) and what each
/// input line became.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Imported {
    pub script: String,
    pub report: Vec<LineReport>,
    /// What the importer had to do that the report's lines do not say (times compressed, numbers
    /// scaled, lines left out at a limit). The script says each in a comment too.
    pub notes: Vec<String>,
}

/// One input line and what became of it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LineReport {
    /// 1-based, as an editor counts.
    pub line: usize,
    /// The recogniser that read it; none for a line that was not recognised.
    pub recogniser: Option<Recogniser>,
    pub outcome: Outcome,
    /// What it became (in the script's words), or why it was not recognised.
    pub detail: String,
    /// The lines of the generated script it became (1-based).
    pub script_lines: Vec<usize>,
}

/// What a line became.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    /// Timeline statements reproduce it.
    Statement,
    /// It chose a setting (a kind's cache, a controller's option).
    Setting,
    /// An expectation pins it (and nothing else was needed).
    Expectation,
    /// Recognised, and nothing in the script stands for it (said why).
    Noted,
    /// Recognised but left out at a limit (said which).
    LeftOut,
    NotRecognised,
    Blank,
}

impl Outcome {
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Statement => "statement",
            Outcome::Setting => "setting",
            Outcome::Expectation => "expectation",
            Outcome::Noted => "noted",
            Outcome::LeftOut => "left out",
            Outcome::NotRecognised => "not recognised",
            Outcome::Blank => "blank",
        }
    }
}

/// Which recogniser read a line: the format, the version range (narrowed by the line's call
/// site where the format carries one) and the source of the text it matched.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Recogniser {
    /// Stable, for tools: `client-go/reflector/watch-ended`, `audit/watch`, ...
    pub id: &'static str,
    /// The line's format: `klog header, printf message`, `audit.k8s.io/v1 event`, ...
    pub format: String,
    /// The versions that write this text: `client-go 1.32 (reflector.go:492)`.
    pub version: String,
    /// Where the text comes from: the source file and the format string or message.
    pub source: &'static str,
}

/// Why nothing could be imported.
#[derive(Clone, Debug, PartialEq)]
pub enum ImportError {
    TooLarge {
        bytes: usize,
    },
    TooManyLines {
        lines: usize,
    },
    /// NUL bytes or mostly control characters: not text a log, an audit file or a scrape has.
    Binary {
        line: usize,
    },
    /// No line was recognised: the report says why for each.
    NothingRecognised {
        report: Vec<LineReport>,
    },
    /// The script made was refused by the parser: a bug in the importer, said plainly.
    Generated {
        message: String,
    },
}

impl std::fmt::Display for ImportError {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        match self {
            ImportError::TooLarge { bytes } => write!(
                f,
                "the paste is {bytes} bytes; import reads at most {} (1 MiB): keep the lines \
                 around the incident",
                MAX_INPUT_BYTES
            ),
            ImportError::TooManyLines { lines } => write!(
                f,
                "the paste has {lines} lines; import reads at most {MAX_INPUT_LINES}: keep the \
                 lines around the incident"
            ),
            ImportError::Binary { line } => write!(
                f,
                "line {line} holds binary data (NUL bytes or control characters): import reads \
                 text logs, audit JSON lines and metric samples"
            ),
            ImportError::NothingRecognised { report } => {
                write!(
                f,
                "none of the {} lines is a client-go reflector or informer message, an apiserver \
                 audit event for a list or watch, or a watch-cache metric sample",
                report.iter().filter(|r| r.outcome != Outcome::Blank).count()
            )
            }
            ImportError::Generated { message } => {
                write!(
                    f,
                    "the importer made a script the parser refuses (a bug): {message}"
                )
            }
        }
    }
}

impl std::error::Error for ImportError {}

impl Imported {
    /// The script and the report as one JSON document (`listwatch import --json`).
    pub fn to_json(&self) -> String {
        #[derive(Serialize)]
        struct Doc<'a> {
            format: &'static str,
            #[serde(flatten)]
            imported: &'a Imported,
        }
        serde_json::to_string_pretty(&Doc {
            format: "listwatch-import/1",
            imported: self,
        })
        .unwrap_or_default()
    }
}

/// Turns pasted lines into a scenario script and a report per line. Every choice not in the
/// input is a `# assumed:` comment in the script; nothing here reads a file or a clock.
pub fn import(text: &str) -> Result<Imported, ImportError> {
    if text.len() > MAX_INPUT_BYTES {
        return Err(ImportError::TooLarge { bytes: text.len() });
    }
    let text = crate::lexer::strip_bom(text);
    let lines: Vec<&str> = crate::lexer::lines(text).collect();
    if lines.len() > MAX_INPUT_LINES {
        return Err(ImportError::TooManyLines { lines: lines.len() });
    }
    let mut seen = Vec::with_capacity(lines.len());
    for (i, l) in lines.iter().enumerate() {
        if is_binary(l) {
            return Err(ImportError::Binary { line: i + 1 });
        }
        seen.push(read_line(i + 1, l));
    }
    resolve_years(&mut seen);
    audit::pair(&mut seen);
    klog::pair(&mut seen);
    plan::build(seen)
}

/// NUL anywhere, or more than a quarter of the first 4 KiB control characters (tabs aside).
fn is_binary(line: &str) -> bool {
    if line.contains('\0') {
        return true;
    }
    let head: Vec<char> = line.chars().take(4096).collect();
    let control = head
        .iter()
        .filter(|c| c.is_control() && **c != '\t')
        .count();
    control * 4 > head.len().max(8)
}

/// A moment as a line writes it: with its year, or (klog, syslog) without.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stamp {
    /// Milliseconds since 1970.
    Epoch(i64),
    NoYear {
        month: u8,
        day: u8,
        ms: u32,
    },
}

/// One recognised line: when, who (a reflector's name or an audit client), which kind, and what
/// happened.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Obs {
    pub line: usize,
    pub stamp: Option<Stamp>,
    /// Resolved from `stamp` once every line is read (the year of a klog line).
    pub at_ms: Option<i64>,
    pub client: Option<String>,
    pub kind: Option<String>,
    pub fact: Fact,
    pub rec: Recogniser,
    /// The observed error or message (what a `got` expectation compares with the model's).
    pub text: String,
    /// The whole message, as the line has it (for comments and narration).
    pub said: String,
}

/// What a line says happened, in the model's terms.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Fact {
    /// A watch got 410 `too old resource version: N (M)` (from the watch cache).
    Gone {
        rv: Option<u128>,
        oldest_minus_one: Option<u128>,
    },
    /// A watch got 410 `The resourceVersion for the provided watch is too old.` (from etcd).
    Compacted,
    /// A list got 504 `Too large resource version: N, current: M`.
    TooLarge {
        rv: Option<u128>,
        current: Option<u128>,
    },
    /// The apiserver could not be reached (connection refused, reset, timeouts).
    Refused,
    /// 429: the apiserver's storage is (re)initialising.
    TooMany,
    /// A watch ended without an error (its timeout, or a closed connection).
    WatchEnd {
        items: Option<u64>,
    },
    /// A list was sent (`Listing and watching`, an audit list). `rv`: its resourceVersion
    /// parameter where known (`Some("")` for a consistent list).
    List {
        rv: Option<String>,
        code: Option<u16>,
        audit_id: Option<String>,
    },
    /// A watch request (audit): from `rv`, its `timeoutSeconds`, whether it asked for
    /// bookmarks, how long it lasted, its answer's code.
    Watch {
        rv: Option<u128>,
        timeout_s: Option<u64>,
        bookmarks: bool,
        lifetime_ms: Option<u64>,
        code: Option<u16>,
        audit_id: Option<String>,
        streaming: bool,
    },
    /// The informer's list finished (`Caches populated`).
    Synced,
    /// A reflector started, with its resync period.
    Start {
        resync_ms: Option<u64>,
    },
    Resync,
    /// Streaming lists (WatchList) were in use.
    Streaming,
    /// Recognised; the model has no counterpart (said what).
    Unmodelled(String),
    /// Recognised; nothing to reproduce (said what it tells).
    Info(String),
    /// `watch_cache_capacity`: the kind's cache held this many events; `dynamic`: the sample's
    /// labels or resize counters say the cache is the 1.19+ dynamic one.
    Capacity {
        events: u64,
        dynamic: bool,
    },
    /// `watch_cache_capacity_increase_total` / `_decrease_total`: the cache resizes (dynamic).
    Resized,
    /// `apiserver_watch_cache_events_received_total` / `_dispatched_total` at a moment.
    EventsTotal {
        value: u128,
    },
    /// A line that repeats another (an audit event's later stage, a failure client-go logs
    /// twice): the line it repeats.
    Same {
        line: usize,
        why: &'static str,
    },
}

/// What reading one line gave.
pub(crate) type Seen = (usize, Result<Obs, String>);

fn read_line(n: usize, raw: &str) -> Seen {
    if raw.len() > MAX_LINE_BYTES {
        return (
            n,
            Err(format!(
                "longer than {} KiB ({} bytes): not read",
                MAX_LINE_BYTES / 1024,
                raw.len()
            )),
        );
    }
    let line = raw.trim();
    if line.is_empty() {
        return (n, Err(String::new()));
    }
    let r = if line.starts_with('{') {
        read_json(n, line)
    } else if let Some(r) = metrics::read(n, line) {
        r
    } else if let Some(r) = klog::read_text(n, line) {
        r
    } else {
        Err(
            "no recogniser matched: not a client-go reflector or informer message, an audit \
             event or a watch-cache metric"
                .into(),
        )
    };
    (n, r)
}

/// A JSON line: an audit event, or a structured log entry (klog's JSON format, zap).
fn read_json(n: usize, line: &str) -> Result<Obs, String> {
    let v: serde_json::Value = serde_json::from_str(line)
        .map_err(|e| format!("not JSON (one object a line is read): {e}"))?;
    let obj = v.as_object().ok_or("JSON, but not an object")?;
    let is_audit = obj.get("kind").and_then(|k| k.as_str()) == Some("Event")
        && obj
            .get("apiVersion")
            .and_then(|k| k.as_str())
            .is_some_and(|a| a.starts_with("audit.k8s.io/"));
    if is_audit {
        audit::read(n, obj)
    } else if obj.get("msg").is_some_and(|m| m.is_string()) {
        klog::read_json(n, obj)
    } else {
        Err(
            "a JSON object that is neither an audit event (kind \"Event\", apiVersion \
             audit.k8s.io/…) nor a log entry with a \"msg\""
                .into(),
        )
    }
}

/// Gives lines without a year (klog, syslog) the year of the first line that has one (2000,
/// a leap year, if none does), and the next year when the dates run backwards by more than half
/// a year (a paste across New Year).
fn resolve_years(seen: &mut [Seen]) {
    // A moment outside the years 1970 to 9999 (a float `ts` of 1e99, a sample's 18-digit
    // timestamp) is no moment: the line is read as untimed.
    const LAST_MS: i64 = 253_402_300_799_999;
    for (_, r) in seen.iter_mut() {
        if let Ok(o) = r {
            if matches!(o.stamp, Some(Stamp::Epoch(ms)) if !(0..=LAST_MS).contains(&ms)) {
                o.stamp = None;
            }
        }
    }
    let mut year = seen
        .iter()
        .find_map(|(_, r)| match r.as_ref().ok()?.stamp? {
            Stamp::Epoch(ms) => Some(values::year_of(ms)),
            _ => None,
        })
        .unwrap_or(2000);
    let mut last: Option<i64> = None;
    for (_, r) in seen.iter_mut() {
        let Ok(o) = r else { continue };
        o.at_ms = match o.stamp {
            Some(Stamp::Epoch(ms)) => Some(ms),
            Some(Stamp::NoYear { month, day, ms }) => {
                let mut t = values::in_year(year, month, day, ms);
                if last.is_some_and(|l| l - t > 183 * 86_400_000) && year < 9999 {
                    year += 1;
                    t = values::in_year(year, month, day, ms);
                }
                Some(t)
            }
            None => None,
        };
        if o.at_ms.is_some() {
            last = o.at_ms;
        }
    }
}
