//! From observations to a script: controllers and kinds, a timeline of small stories
//! ("episodes") that each make the model do what a line saw, a run of the script, and
//! expectations read off that run where they agree with the input.
//!
//! An episode is a fixed arrangement of the language's statements. A 410 `too old resource
//! version: N (M)`: the client's last write seen is at revision N, its watch breaks while its
//! re-watch is in flight (`delay` 100 ms, `disconnect for 0s`), and M−N other revisions then a
//! cache's worth of writes of its kind push the cache's oldest event to M+1, so the re-watch gets
//! exactly that 410 (watch_cache.go `GetIntervalLocked`). A 504 `Too large resource version: N,
//! current: M`: a second apiserver frozen (`pause`) at M, the client at N on the first, a 410 there
//! (client-go 1.18+ logs it at V4 only), and a `failover` during the backoff, so the relist at N
//! waits 3 s on the frozen cache and gets 504. Revisions are counted write by write, so the
//! numbers are the observed ones where the writes fit the budget; otherwise the same story is
//! told with smaller numbers and a comment says how. `render.rs` writes the script's text,
//! `pin.rs` reads the expectations off its run.

use std::collections::BTreeMap;

use super::values::{self, one_line, script_time};
use super::{Fact, ImportError, Imported, LineReport, Obs, Outcome, Seen};

mod pin;
mod render;

use pin::{pin, Pinned};
use render::render;

/// The moment line 1 takes in the script: the informers start at 0 s and list first.
const LEAD_MS: u64 = 10_000;
/// A quiet stretch longer than this between two lines is shortened to `GAP_KEPT_MS`.
const GAP_MAX_MS: i64 = 3_600_000;
const GAP_KEPT_MS: i64 = 600_000;
/// The latest moment an episode may take (a run lasts at most 24 h; its relist needs room).
const LAST_MS: u64 = 24 * 3_600_000 - 15 * 60_000;
/// The most writes a generated script makes (each is a timeline entry and a few events).
pub const WRITE_BUDGET: u64 = 50_000;
/// The most episodes a script holds (more would not fit 64 KiB).
pub const MAX_EPISODES: usize = 200;
/// A cache's capacity when nothing says it: the pre-1.19 default.
const DEFAULT_CAPACITY: u64 = 100;
const MAX_CONTROLLERS: usize = listwatch_core::MAX_CONTROLLERS;
/// Observed kinds: one of the language's 32 is the filler kind.
const MAX_KINDS: usize = listwatch_core::MAX_KINDS - 1;
/// Status values a single write sets (bursts set 0, 1, 2, …): never equal to a burst's.
const MARKER: i64 = 1_000_000;
const MAX_EXPECTATIONS: usize = 120;
/// A list this soon after an error is that error's relist.
const RELIST_WINDOW_MS: u64 = 40_000;
/// Failures of one kind this close together are one outage.
const MERGE_MS: u64 = 60_000;
/// A script may not be longer: the language's limit, less room for the report's figures.
const SCRIPT_LIMIT: usize = crate::MAX_SCRIPT_BYTES - 1024;

#[derive(Clone, Copy, Debug, PartialEq)]
enum Cache {
    /// The language's default (dynamic 100..102400).
    Default,
    Fixed(u64),
    /// A dynamic cache held at this size (`cache dynamic N..N`).
    Pinned(u64),
    Off,
}

struct KindPlan {
    name: String,
    cache: Cache,
    cache_lines: Vec<usize>,
    cache_comment: Vec<String>,
    dynamic_seen: bool,
    /// Events per second from two timed samples of a counter: (events, milliseconds).
    rate: Option<(u128, u64)>,
    rate_lines: Vec<usize>,
}

struct CtlPlan {
    name: String,
    client: String,
    kind: usize,
    start_ms: Option<u64>,
    resync_ms: Option<u64>,
    streaming: bool,
    bookmarks_off: bool,
    setting_lines: Vec<usize>,
    lines: Vec<usize>,
    /// Lists the input shows (first list and relists), and the lines.
    lists_observed: u64,
    resyncs: Vec<u64>,
    /// Anything seen of it yet.
    seen: bool,
    /// A list seen yet (the first one is its start).
    listed: bool,
}

#[derive(Clone, Debug, PartialEq)]
enum EpKind {
    /// A 410 from the watch cache; `hidden`: not in the input, assumed for a relist it shows.
    Gone {
        rv: Option<u128>,
        m: Option<u128>,
        hidden: bool,
    },
    /// A 410 from etcd (a kind without a watch cache, compacted past the client's RV).
    Compacted,
    TooLarge {
        rv: Option<u128>,
        current: Option<u128>,
    },
    Refused {
        span_ms: u64,
    },
    TooMany {
        span_ms: u64,
    },
    WatchEnd {
        items: Option<u64>,
    },
    /// The controller's first list returns this RV (the input shows its next watch from it):
    /// writes before the controller starts bring the revision there.
    FirstList {
        rv: u128,
    },
}

impl EpKind {
    /// Time the episode needs before its moment and after it.
    fn window(&self) -> (u64, u64) {
        match self {
            EpKind::Gone { .. } => (1500, 2500),
            EpKind::Compacted => (26_000, 3000),
            EpKind::TooLarge { .. } => (7000, 8000),
            EpKind::Refused { span_ms } => (100, span_ms + 32_000),
            EpKind::TooMany { span_ms } => (100, span_ms + 35_000),
            EpKind::WatchEnd { .. } => (100, 500),
            EpKind::FirstList { .. } => (600, 0),
        }
    }

    fn name(&self) -> &'static str {
        match self {
            EpKind::Gone { hidden: true, .. } => "a 410 the input does not show",
            EpKind::Gone { .. } => "a 410 on the re-watch",
            EpKind::Compacted => "a 410 from etcd (compacted)",
            EpKind::TooLarge { .. } => "a 504 on the relist",
            EpKind::Refused { .. } => "the apiserver unreachable",
            EpKind::TooMany { .. } => "an apiserver restart (429s)",
            EpKind::WatchEnd { .. } => "a watch's end",
            EpKind::FirstList { .. } => "the first list's RV",
        }
    }
}

struct Episode {
    kind: EpKind,
    ctl: usize,
    /// The observed moment, in script time.
    at: u64,
    lines: Vec<usize>,
    /// The observed error or message.
    text: String,
    /// The whole message, as the line has it.
    said: String,
    /// How long after the 410 the input shows its relist, and the line that shows it.
    relist_gap_ms: Option<u64>,
    relist_line: Option<usize>,
}

/// A request the input shows (audit, REST log), checked against the run.
struct Sent {
    ctl: usize,
    list: bool,
    rv: String,
    line: usize,
}

/// Everything read from the observations, before any timeline is laid out.
struct Model {
    kinds: Vec<KindPlan>,
    ctls: Vec<CtlPlan>,
    eps: Vec<Episode>,
    sent: Vec<Sent>,
    out: BTreeMap<usize, (Outcome, String)>,
    header: Vec<String>,
    notes: Vec<String>,
    streaming_all: bool,
    streaming_lines: Vec<usize>,
    filler: String,
    recognised: usize,
    total_lines: usize,
}

/// A counter's samples: (moment, value, line).
type Samples = Vec<(Option<i64>, u128, usize)>;

fn is_metric(o: &Obs) -> bool {
    o.rec.id.starts_with("metrics/")
}

fn clip(s: &str) -> String {
    one_line(s, 160)
}

/// `"…"` for the script: quotes and backslashes escaped.
fn quoted(s: &str) -> String {
    let mut out = String::from("\"");
    for c in one_line(s, 200).chars() {
        if c == '"' || c == '\\' {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('"');
    out
}

impl Model {
    fn read(obs: Vec<Obs>, total_lines: usize) -> Model {
        let mut m = Model {
            kinds: vec![],
            ctls: vec![],
            eps: vec![],
            sent: vec![],
            out: BTreeMap::new(),
            header: vec![],
            notes: vec![],
            streaming_all: false,
            streaming_lines: vec![],
            filler: String::new(),
            recognised: obs.len(),
            total_lines,
        };
        let times = m.script_times(&obs);
        let order = listwatch_core::order::stable_order(obs.len(), &|a, b| {
            (times[a], obs[a].line).cmp(&(times[b], obs[b].line))
        });
        let mut totals: BTreeMap<(String, String), Samples> = BTreeMap::new();
        for i in order {
            let o = &obs[i];
            let t = times[i];
            match &o.fact {
                Fact::EventsTotal { value } => {
                    let metric = o.text.split(['{', ' ']).next().unwrap_or("").to_string();
                    let kind = o.kind.clone().unwrap_or_default();
                    totals
                        .entry((kind, metric))
                        .or_default()
                        .push((o.at_ms, *value, o.line));
                }
                _ => m.take(o, t),
            }
        }
        m.rates(totals);
        m.versions(&obs);
        m.first_lists();
        m.settle_caches();
        m.name_filler();
        m
    }

    /// Every observation's moment in the script: relative to the first timed line (metric
    /// samples aside), quiet stretches over an hour shortened, then `LEAD_MS` later.
    fn script_times(&mut self, obs: &[Obs]) -> Vec<u64> {
        let timed = |o: &Obs| !is_metric(o);
        let mut at: Vec<Option<i64>> = vec![];
        let mut last = None;
        for o in obs {
            let t = if timed(o) { o.at_ms.or(last) } else { None };
            if o.at_ms.is_some() && timed(o) {
                last = o.at_ms;
            }
            at.push(t);
        }
        let t0 = at.iter().flatten().min().copied();
        let Some(t0) = t0 else {
            if obs.iter().any(timed) {
                self.header.push(
                    "assumed: the lines carry no times; they are placed 10s apart, in their order"
                        .into(),
                );
            }
            return (0..obs.len())
                .map(|i| LEAD_MS + 10_000 * i as u64)
                .collect();
        };
        let first_line = obs
            .iter()
            .find(|o| timed(o) && o.at_ms == Some(t0))
            .map(|o| o.line)
            .unwrap_or(1);
        let no_year = obs
            .iter()
            .find(|o| o.line == first_line)
            .is_some_and(|o| matches!(o.stamp, Some(super::Stamp::NoYear { .. })));
        let when = if no_year {
            // klog and syslog write no year: do not show the one assumed.
            format!("{}, no year given", &values::civil(t0)[5..])
        } else {
            values::civil(t0)
        };
        self.header.push(format!(
            "{} is the moment of line {first_line} ({when}); every later line keeps its distance from it",
            script_time(LEAD_MS)
        ));
        // Shorten quiet stretches, in time order.
        let mut rel: Vec<(i64, usize)> = at
            .iter()
            .enumerate()
            .map(|(i, t)| (t.map(|t| t - t0).unwrap_or(0), i))
            .collect();
        // (offset, index) pairs: the index tells equal offsets apart, as `sort` would.
        listwatch_core::order::sort_by_u64(&mut rel, |&(t, _)| (t as u64) ^ (1 << 63));
        let mut shift = 0i64;
        let mut prev: Option<i64> = None;
        let mut out = vec![0u64; obs.len()];
        let mut prev_line = 0;
        for (r, i) in rel {
            if let Some(p) = prev {
                if r - p > GAP_MAX_MS {
                    let cut = r - p - GAP_KEPT_MS;
                    shift += cut;
                    let msg = format!(
                        "the {} between line {prev_line} and line {} were shortened to {}",
                        human(r - p),
                        obs[i].line,
                        script_time(GAP_KEPT_MS as u64)
                    );
                    self.notes.push(msg.clone());
                    self.header.push(format!("scaled: {msg}"));
                }
            }
            prev = Some(r);
            prev_line = obs[i].line;
            out[i] = LEAD_MS + (r - shift).clamp(0, i64::MAX / 2) as u64;
        }
        out
    }

    fn set(&mut self, line: usize, outcome: Outcome, detail: impl Into<String>) {
        self.out.insert(line, (outcome, detail.into()));
    }

    fn kind_index(&mut self, name: &str, line: usize) -> Option<usize> {
        if let Some(i) = self.kinds.iter().position(|k| k.name == name) {
            return Some(i);
        }
        if self.kinds.len() >= MAX_KINDS {
            self.set(
                line,
                Outcome::LeftOut,
                format!("more than {MAX_KINDS} kinds (the language's limit)"),
            );
            return None;
        }
        self.kinds.push(KindPlan {
            name: name.to_string(),
            cache: Cache::Default,
            cache_lines: vec![],
            cache_comment: vec![],
            dynamic_seen: false,
            rate: None,
            rate_lines: vec![],
        });
        Some(self.kinds.len() - 1)
    }

    /// The controller an observation belongs to: one per client and kind.
    fn ctl_for(&mut self, o: &Obs) -> Option<usize> {
        let kind = match &o.kind {
            Some(k) => k.clone(),
            None => {
                // A line that names its client only: that client's one kind.
                let client = o.client.as_deref()?;
                let mine: Vec<usize> = (0..self.ctls.len())
                    .filter(|&c| self.ctls[c].client == client)
                    .collect();
                return (mine.len() == 1).then(|| mine[0]);
            }
        };
        let client = match &o.client {
            Some(c) => c.clone(),
            None => {
                let k = self.kinds.iter().position(|k| k.name == kind);
                let mine: Vec<usize> = (0..self.ctls.len())
                    .filter(|&c| Some(self.ctls[c].kind) == k)
                    .collect();
                if mine.len() == 1 {
                    return Some(mine[0]);
                }
                "unnamed".to_string()
            }
        };
        let k = self.kind_index(&kind, o.line)?;
        if let Some(c) = self
            .ctls
            .iter()
            .position(|c| c.client == client && c.kind == k)
        {
            return Some(c);
        }
        if self.ctls.len() >= MAX_CONTROLLERS {
            self.set(
                o.line,
                Outcome::LeftOut,
                format!(
                    "more than {MAX_CONTROLLERS} reflectors (one controller each, the \
                     language's limit)"
                ),
            );
            return None;
        }
        let base: String = format!(
            "{}-{}",
            values::short_name(&client),
            kind.to_ascii_lowercase()
        )
        .chars()
        .take(58)
        .collect();
        let mut name = base.clone();
        let mut n = 2;
        while self.ctls.iter().any(|c| c.name == name) {
            name = format!("{base}-{n}");
            n += 1;
        }
        self.ctls.push(CtlPlan {
            name,
            client,
            kind: k,
            start_ms: None,
            resync_ms: None,
            streaming: false,
            bookmarks_off: false,
            setting_lines: vec![],
            lines: vec![],
            lists_observed: 0,
            resyncs: vec![],
            seen: false,
            listed: false,
        });
        Some(self.ctls.len() - 1)
    }

    /// One observation, at its script moment.
    fn take(&mut self, o: &Obs, t: u64) {
        let line = o.line;
        match &o.fact {
            Fact::Same { line: first, why } => {
                return self.set(
                    line,
                    Outcome::Noted,
                    format!("the same as line {first}: {why}"),
                );
            }
            Fact::Info(what) => return self.set(line, Outcome::Noted, what.clone()),
            Fact::Unmodelled(what) => {
                return self.set(line, Outcome::Noted, format!("not reproduced: {what}"))
            }
            Fact::Capacity { events, dynamic } => return self.capacity(o, *events, *dynamic),
            Fact::Resized => {
                if let Some(k) = o.kind.clone().and_then(|k| self.kind_index(&k, line)) {
                    self.kinds[k].dynamic_seen = true;
                    self.kinds[k].cache_lines.push(line);
                    return self.set(
                        line,
                        Outcome::Setting,
                        format!("the {} cache resizes: a dynamic cache", self.kinds[k].name),
                    );
                }
                return self.set(line, Outcome::Noted, "a cache resized (no resource label)");
            }
            Fact::Streaming if o.client.is_none() && o.kind.is_none() => {
                self.streaming_all = true;
                self.streaming_lines.push(line);
                return self.set(
                    line,
                    Outcome::Setting,
                    "streaming lists are on (`streaming-list on`); the line names no reflector",
                );
            }
            Fact::EventsTotal { .. } => return,
            _ => {}
        }
        if t > LAST_MS {
            return self.set(
                line,
                Outcome::LeftOut,
                format!(
                    "{} after line 1, past what a run holds (24h)",
                    script_time(t - LEAD_MS)
                ),
            );
        }
        let Some(c) = self.ctl_for(o) else {
            if o.fact == Fact::Streaming {
                self.streaming_all = true;
                self.streaming_lines.push(line);
                return self.set(
                    line,
                    Outcome::Setting,
                    "streaming lists are on (`streaming-list on`); the line names no kind",
                );
            }
            if !self.out.contains_key(&line) {
                self.set(
                    line,
                    Outcome::Noted,
                    "names no kind the script has a reflector of: nothing to reproduce",
                );
            }
            return;
        };
        let first = !self.ctls[c].seen;
        self.ctls[c].seen = true;
        self.ctls[c].lines.push(line);
        let name = self.ctls[c].name.clone();
        match &o.fact {
            Fact::Start { resync_ms } => {
                if first {
                    self.ctls[c].start_ms = Some(t);
                }
                let mut what = if first {
                    format!("controller {name} starts at {}", script_time(t))
                } else {
                    format!("{name} started again (the script starts it once)")
                };
                if let Some(r) = resync_ms.filter(|&r| r > 0) {
                    self.ctls[c].resync_ms = Some(r);
                    what += &format!(", informer resync every {}", script_time(r.max(1000)));
                }
                self.ctls[c].setting_lines.push(line);
                self.set(line, Outcome::Setting, what);
            }
            Fact::List { rv, code, .. } => self.list(o, c, t, rv.clone(), *code),
            Fact::Watch {
                rv,
                timeout_s,
                bookmarks,
                lifetime_ms,
                code,
                streaming,
                ..
            } => {
                if *streaming {
                    self.ctls[c].streaming = true;
                    self.ctls[c].setting_lines.push(line);
                    let rv = rv.map(|r| r.to_string()).or(Some(String::new()));
                    return self.list(o, c, t, rv, *code);
                }
                self.watch(o, c, t, (*rv, *timeout_s, *bookmarks, *lifetime_ms, *code));
            }
            Fact::Synced => self.set(
                line,
                Outcome::Noted,
                format!(
                    "{name}'s list has returned (the model's list returns after its round trip)"
                ),
            ),
            Fact::Resync => {
                self.ctls[c].resyncs.push(t);
                self.ctls[c].setting_lines.push(line);
                self.set(line, Outcome::Setting, format!("{name}'s informer resyncs"));
            }
            Fact::Streaming => {
                self.ctls[c].streaming = true;
                self.ctls[c].setting_lines.push(line);
                self.set(
                    line,
                    Outcome::Setting,
                    format!("{name} lists with a streaming list (`streaming-list on`)"),
                );
            }
            Fact::Gone {
                rv,
                oldest_minus_one,
            } => self.episode(
                o,
                c,
                t,
                EpKind::Gone {
                    rv: *rv,
                    m: *oldest_minus_one,
                    hidden: false,
                },
            ),
            Fact::Compacted => {
                let k = self.ctls[c].kind;
                self.kinds[k].cache = Cache::Off;
                self.kinds[k].cache_lines.push(line);
                self.episode(o, c, t, EpKind::Compacted)
            }
            Fact::TooLarge { rv, current } => self.episode(
                o,
                c,
                t,
                EpKind::TooLarge {
                    rv: *rv,
                    current: *current,
                },
            ),
            Fact::Refused => self.outage(o, c, t, false),
            Fact::TooMany => self.outage(o, c, t, true),
            Fact::WatchEnd { items } => self.episode(o, c, t, EpKind::WatchEnd { items: *items }),
            _ => self.set(line, Outcome::Noted, "nothing to reproduce"),
        }
    }

    fn capacity(&mut self, o: &Obs, events: u64, dynamic: bool) {
        let Some(k) = o.kind.clone().and_then(|k| self.kind_index(&k, o.line)) else {
            return self.set(
                o.line,
                Outcome::Noted,
                "a capacity without a resource label",
            );
        };
        let kp = &mut self.kinds[k];
        kp.cache = Cache::Fixed(events.clamp(1, listwatch_core::DYNAMIC_CAPACITY_MAX as u64));
        kp.dynamic_seen |= dynamic;
        kp.cache_lines.push(o.line);
        let what = format!("the {} cache holds {events} events", kp.name);
        self.set(o.line, Outcome::Setting, what);
    }

    /// A list the input shows: the controller's start, an error's relist, or a relist whose
    /// cause the input does not show (then a 410 is assumed).
    fn list(&mut self, o: &Obs, c: usize, t: u64, rv: Option<String>, code: Option<u16>) {
        let line = o.line;
        let name = self.ctls[c].name.clone();
        let numeric = rv.as_deref().and_then(values::rv);
        match code {
            Some(504) => {
                let kind = EpKind::TooLarge {
                    rv: numeric,
                    current: None,
                };
                return self.episode(o, c, t, kind);
            }
            Some(429) => return self.outage(o, c, t, true),
            Some(410) => {
                return self.set(
                    line,
                    Outcome::Noted,
                    "not reproduced: a list answered 410 (an Exact list or an expired continue \
                     token; the model's reflector lists from the cache)",
                )
            }
            _ if self.unmodelled_answer(line, "list", code) => return,
            _ => {}
        }
        self.ctls[c].lists_observed += 1;
        let first = !self.ctls[c].listed && !self.eps.iter().any(|e| e.ctl == c);
        self.ctls[c].listed = true;
        if let (Some(r), true) = (
            &rv,
            o.rec.id.starts_with("audit/") || o.rec.id.ends_with("request"),
        ) {
            self.sent.push(Sent {
                ctl: c,
                list: true,
                rv: r.clone(),
                line,
            });
        }
        if first {
            self.ctls[c].start_ms.get_or_insert(t);
            self.ctls[c].setting_lines.push(line);
            return self.set(
                line,
                Outcome::Setting,
                format!(
                    "{name}'s first list: the controller starts at {}",
                    script_time(t)
                ),
            );
        }
        let recent = self.eps.iter_mut().rev().find(|e| e.ctl == c).filter(|e| {
            t >= e.at && t - e.at <= RELIST_WINDOW_MS && !matches!(e.kind, EpKind::WatchEnd { .. })
        });
        if let Some(e) = recent {
            if matches!(e.kind, EpKind::Gone { .. } | EpKind::Compacted)
                && e.relist_gap_ms.is_none()
            {
                e.relist_gap_ms = Some(t - e.at);
                e.relist_line = Some(line);
            }
            let what = format!(
                "the relist after line {} ({} later)",
                e.lines[0],
                script_time(t - e.at)
            );
            return self.set(line, Outcome::Noted, what);
        }
        // A relist without its cause: the likeliest is a 410 client-go 1.18+ logs at V4.
        let kind = EpKind::Gone {
            rv: numeric.filter(|&r| r > 0),
            m: None,
            hidden: true,
        };
        self.episode(o, c, t.saturating_sub(1000).max(LEAD_MS), kind);
    }

    /// An error answer (4xx, 5xx) the model has no counterpart for: noted, and true.
    fn unmodelled_answer(&mut self, line: usize, request: &str, code: Option<u16>) -> bool {
        match code {
            Some(c) if c >= 400 => {
                self.set(
                    line,
                    Outcome::Noted,
                    format!("not reproduced: a {request} answered {c}"),
                );
                true
            }
            _ => false,
        }
    }

    /// A watch request the input shows (audit, REST log).
    fn watch(
        &mut self,
        o: &Obs,
        c: usize,
        t: u64,
        (rv, timeout_s, bookmarks, lifetime, code): (
            Option<u128>,
            Option<u64>,
            bool,
            Option<u64>,
            Option<u16>,
        ),
    ) {
        let line = o.line;
        match code {
            Some(429) => return self.outage(o, c, t, true),
            Some(410) => {
                let kind = EpKind::Gone {
                    rv,
                    m: None,
                    hidden: false,
                };
                return self.episode(o, c, t, kind);
            }
            _ if self.unmodelled_answer(line, "watch", code) => return,
            _ => {}
        }
        if !bookmarks && !self.ctls[c].streaming {
            self.ctls[c].bookmarks_off = true;
            self.ctls[c].setting_lines.push(line);
        }
        if let Some(r) = rv {
            self.sent.push(Sent {
                ctl: c,
                list: false,
                rv: r.to_string(),
                line,
            });
        }
        let timeout = timeout_s
            .map(|s| {
                format!(
                    "; it asked for timeoutSeconds={s} (the model's watches draw their own, \
                     uniformly in [5m, 10m) as client-go's)"
                )
            })
            .unwrap_or_default();
        match lifetime {
            Some(l) if l >= 1000 => {
                let at = t + l;
                if at > LAST_MS {
                    return self.set(line, Outcome::LeftOut, "it ends past 24h");
                }
                self.episode(o, c, at, EpKind::WatchEnd { items: None });
                if let Some((_, d)) = self.out.get_mut(&line) {
                    *d += &format!(" (after {}){timeout}", script_time(l));
                }
            }
            _ => {
                let what = format!("a watch request (the model's reflector opens its own after each list){timeout}");
                self.set(line, Outcome::Noted, what);
            }
        }
    }

    fn episode(&mut self, o: &Obs, c: usize, t: u64, kind: EpKind) {
        let what = kind.name().to_string();
        self.eps.push(Episode {
            kind,
            ctl: c,
            at: t,
            lines: vec![o.line],
            text: o.text.clone(),
            said: o.said.clone(),
            relist_gap_ms: None,
            relist_line: None,
        });
        self.set(o.line, Outcome::Statement, what);
    }

    /// Refused connections (or 429s) close together are one outage.
    fn outage(&mut self, o: &Obs, c: usize, t: u64, busy: bool) {
        let last = self.eps.iter_mut().rev().find(|e| {
            (busy || e.ctl == c)
                && match e.kind {
                    EpKind::Refused { span_ms } if !busy => t <= e.at + span_ms + MERGE_MS,
                    EpKind::TooMany { span_ms } if busy => t <= e.at + span_ms + MERGE_MS,
                    _ => false,
                }
        });
        if let Some(e) = last {
            let span = t.saturating_sub(e.at);
            match &mut e.kind {
                EpKind::Refused { span_ms } | EpKind::TooMany { span_ms } => {
                    *span_ms = (*span_ms).max(span)
                }
                _ => {}
            }
            e.lines.push(o.line);
            let first = e.lines[0];
            return self.set(
                o.line,
                Outcome::Statement,
                format!("part of the outage from line {first}"),
            );
        }
        let kind = if busy {
            EpKind::TooMany { span_ms: 0 }
        } else {
            EpKind::Refused { span_ms: 0 }
        };
        self.episode(o, c, t, kind);
    }

    /// The client-go releases the lines' call sites name, for the reader (the script sets what
    /// matters itself rather than `kubernetes 1.N`: the model's version defaults are the
    /// server's).
    fn versions(&mut self, obs: &[Obs]) {
        let mut seen: Vec<(String, usize)> = vec![];
        for o in obs {
            let v = &o.rec.version;
            if v.contains("client-go 1.") && v.contains(".go:") && !seen.iter().any(|s| &s.0 == v) {
                seen.push((v.clone(), o.line));
            }
        }
        if !seen.is_empty() {
            let list: Vec<String> = seen
                .iter()
                .take(4)
                .map(|(v, l)| format!("{v} at line {l}"))
                .collect();
            self.header.push(format!(
                "the lines come from {}{}; the script sets caches, bookmarks and streaming lists \
                 itself rather than `kubernetes 1.N` (whose defaults are the server's)",
                list.join(", "),
                if seen.len() > 4 { ", …" } else { "" }
            ));
        }
    }

    /// A controller whose first list the input shows, then a watch from N (audit, REST log):
    /// its list returned N, so the script's revisions reach N before it starts.
    fn first_lists(&mut self) {
        for c in 0..self.ctls.len() {
            let Some(start) = self.ctls[c].start_ms.filter(|&t| t >= 1000) else {
                continue;
            };
            let mine: Vec<&Sent> = self.sent.iter().filter(|s| s.ctl == c).collect();
            let watch = match mine.as_slice() {
                [list, watch, ..] if list.list && !watch.list => *watch,
                _ => continue,
            };
            let Some(rv) = values::rv(&watch.rv).filter(|&r| r > 1) else {
                continue;
            };
            if self.eps.iter().any(|e| e.ctl == c && e.at <= start) {
                continue;
            }
            let line = watch.line;
            self.eps.push(Episode {
                kind: EpKind::FirstList { rv },
                ctl: c,
                at: start,
                lines: vec![line],
                text: format!("a watch from resourceVersion={rv} after the first list"),
                said: String::new(),
                relist_gap_ms: None,
                relist_line: None,
            });
        }
        listwatch_core::order::sort_by_u64(&mut self.eps, |e| e.at);
    }

    /// A write rate per kind from two timed samples of a counter.
    fn rates(&mut self, totals: BTreeMap<(String, String), Samples>) {
        for ((kind, metric), samples) in totals {
            let timed: Vec<&(Option<i64>, u128, usize)> =
                samples.iter().filter(|s| s.0.is_some()).collect();
            let rate = match (timed.first(), timed.last()) {
                (Some(a), Some(b)) if b.0 > a.0 && b.1 >= a.1 => {
                    Some((b.1 - a.1, (b.0.unwrap_or(0) - a.0.unwrap_or(0)) as u64))
                }
                _ => None,
            };
            let k = if kind.is_empty() {
                None
            } else {
                self.kind_index(&kind, samples[0].2)
            };
            match (rate, k) {
                (Some(r), Some(k)) if self.kinds[k].rate.is_none() => {
                    self.kinds[k].rate = Some(r);
                    let per_s = r.0 as f64 * 1000.0 / r.1.max(1) as f64;
                    for s in &samples {
                        self.kinds[k].rate_lines.push(s.2);
                        self.set(
                            s.2,
                            Outcome::Setting,
                            format!(
                                "{} events/s into the {} cache ({metric}): writes of that rate",
                                round2(per_s),
                                self.kinds[k].name
                            ),
                        );
                    }
                }
                _ => {
                    for s in &samples {
                        self.set(
                            s.2,
                            Outcome::Noted,
                            "a counter's total: a rate needs a second sample of it with a \
                             timestamp",
                        );
                    }
                }
            }
        }
    }

    /// Kinds with 410 or 504 episodes need a cache whose window the script controls: a fixed
    /// one (the size a metric showed, else 100), or a dynamic one held at the metric's size.
    fn settle_caches(&mut self) {
        let mut gadgets = vec![0u64; self.kinds.len()];
        for e in &self.eps {
            if matches!(e.kind, EpKind::Gone { .. } | EpKind::TooLarge { .. }) {
                gadgets[self.ctls[e.ctl].kind] += 1;
            }
        }
        for (k, kp) in self.kinds.iter_mut().enumerate() {
            let n = gadgets[k];
            let size = match kp.cache {
                Cache::Fixed(c) => Some(c),
                _ => None,
            };
            if kp.cache == Cache::Off {
                kp.cache_comment.push(
                    "a 410 from etcd (`The resourceVersion for the provided watch is too old.`): \
                     the kind has no watch cache (kube-apiserver does not cache Events)"
                        .into(),
                );
                continue;
            }
            let mut c = match size {
                Some(c) => c,
                None if n > 0 => {
                    kp.cache_comment.push(format!(
                        "assumed: a fixed watch cache of {DEFAULT_CAPACITY} events (the pre-1.19 \
                         default): the input does not say the window's size, and a fixed one \
                         makes its numbers exact"
                    ));
                    DEFAULT_CAPACITY
                }
                None => continue,
            };
            // Every 410 story writes a cache's worth of events: keep them within the budget.
            let most = (WRITE_BUDGET / 2 / n.max(1)).max(1);
            if c > most {
                kp.cache_comment.push(format!(
                    "scaled: the cache holds {c} events; here {most}, so {n} stories of a full \
                     cache fit {WRITE_BUDGET} writes"
                ));
                c = most;
            }
            kp.cache = if kp.dynamic_seen {
                kp.cache_comment.push(format!(
                    "a dynamic cache (1.19+) held at {c} events, the size the metric showed (min \
                     and max pinned, so the window is what was scraped)"
                ));
                Cache::Pinned(c)
            } else {
                Cache::Fixed(c)
            };
        }
    }

    fn name_filler(&mut self) {
        let mut name = "Other".to_string();
        let mut n = 2;
        while self.kinds.iter().any(|k| k.name == name) {
            name = format!("Other{n}");
            n += 1;
        }
        self.filler = name;
    }

    fn capacity_of(&self, k: usize) -> u64 {
        match self.kinds[k].cache {
            Cache::Fixed(c) | Cache::Pinned(c) => c,
            _ => DEFAULT_CAPACITY,
        }
    }
}

fn round2(x: f64) -> String {
    let v = (x * 100.0).round() as i64;
    format!("{}.{:02}", v / 100, v % 100)
}

fn human(ms: i64) -> String {
    let ms = ms.max(0) as u64;
    if ms >= 2 * 86_400_000 {
        format!("{} days", ms / 86_400_000)
    } else if ms >= 2 * 3_600_000 {
        format!("{} hours", ms / 3_600_000)
    } else {
        script_time(ms)
    }
}

/// One timeline line of the script, with the input lines it stands for and comments before it.
struct Entry {
    at: u64,
    text: String,
    lines: Vec<usize>,
    comments: Vec<String>,
}

/// An episode as laid out: its moment, and the numbers it aimed at.
#[derive(Clone, Debug)]
struct Laid {
    ep: usize,
    at: u64,
    exact: bool,
    why_not: Option<String>,
}

/// The timeline laid out.
struct Walk {
    entries: Vec<Entry>,
    laid: Vec<Laid>,
    end_ms: u64,
    offset: u128,
    writes: u64,
    two_apiservers: bool,
    compaction: bool,
    /// Episodes left out (at the limit).
    dropped: Vec<usize>,
    notes: Vec<String>,
    /// The revision before the first 410 or 504 (for choosing an offset).
    rev_first: Option<u128>,
}

/// Writes and their revisions, counted as etcd will count them.
struct Writer<'m> {
    m: &'m Model,
    entries: Vec<Entry>,
    rev: u128,
    writes: u64,
    last_t: u64,
    compaction: bool,
    fills: u64,
    status: Vec<i64>,
    markers: i64,
    apiserver: &'static str,
}

/// The compaction interval a script with an etcd-served 410 gets (`compaction 10s`).
const TICK_MS: u64 = 10_000;

impl Writer<'_> {
    /// Compaction ticks take a revision each (etcd.rs `compact_tick`).
    fn advance(&mut self, t: u64) {
        self.rev += self.ticks(self.last_t, t) as u128;
        self.last_t = self.last_t.max(t);
    }

    /// The compaction ticks in `(from, to]`.
    fn ticks(&self, from: u64, to: u64) -> u64 {
        if self.compaction && to > from {
            to / TICK_MS - from / TICK_MS
        } else {
            0
        }
    }

    /// A write's moment, kept off a compaction tick (their order at one moment is the engine's).
    fn write_time(&self, t: u64) -> u64 {
        if self.compaction && t.is_multiple_of(TICK_MS) {
            t + 1
        } else {
            t
        }
    }

    fn push(&mut self, at: u64, text: String, lines: &[usize]) {
        self.entries.push(Entry {
            at,
            text,
            lines: lines.to_vec(),
            comments: vec![],
        });
    }

    /// `at T ACTION`.
    fn act(&mut self, t: u64, action: String, lines: &[usize]) {
        self.push(t, format!("at {} {action}", script_time(t)), lines);
    }

    /// `ctl`'s watch breaks while its re-watch is in flight (100 ms each way); meanwhile `gap`
    /// other revisions, then `cap` writes of kind `k`, push the cache's oldest event past the
    /// client's RV. The re-watch's answer (a 410 when they evicted what it needs) is back at `t`.
    fn break_rewatch(
        &mut self,
        t: u64,
        ctl: &str,
        k: usize,
        (gap, cap): (u64, u64),
        lines: &[usize],
    ) {
        self.act(t - 300, format!("delay {ctl} 100ms"), lines);
        self.act(t - 200, format!("disconnect {ctl} for 0s"), lines);
        self.filler(t - 150, gap, lines);
        self.burst(t - 150, k, cap, 0, lines);
        self.act(t + 50, format!("delay {ctl} 0s"), lines);
    }

    /// `n` writes of the filler kind (creates: always a new revision).
    fn filler(&mut self, t: u64, n: u64, lines: &[usize]) {
        if n == 0 {
            return;
        }
        let t = self.write_time(t);
        self.advance(t);
        let (f, g) = (&self.m.filler, self.fills);
        let text = if n == 1 {
            format!("at {} create {f} f{g}", script_time(t))
        } else {
            format!(
                "every 0ms {n} times from {} create {f} f{g}-{{i}}",
                script_time(t)
            )
        };
        self.push(t, text, lines);
        self.fills += 1;
        self.rev += n as u128;
        self.writes += n;
    }

    /// One write of kind `k`'s object, to a value no other write sets: its revision.
    fn marker(&mut self, t: u64, k: usize, lines: &[usize]) -> u128 {
        let t = self.write_time(t);
        self.advance(t);
        self.markers += 1;
        let v = MARKER + self.markers;
        self.status[k] = v;
        let text = format!(
            "at {} status {} x {v}",
            script_time(t),
            self.m.kinds[k].name
        );
        self.push(t, text, lines);
        self.rev += 1;
        self.writes += 1;
        self.rev
    }

    /// `n` writes of kind `k`'s object, `every_ms` apart.
    fn burst(&mut self, t: u64, k: usize, n: u64, every_ms: u64, lines: &[usize]) {
        if n == 0 {
            return;
        }
        if n == 1 {
            self.marker(t, k, lines);
            return;
        }
        if self.status[k] == 0 {
            self.marker(t, k, lines);
        }
        let t = self.write_time(t);
        self.advance(t);
        let text = format!(
            "every {every_ms}ms {n} times from {} status {} x {{i}}",
            script_time(t),
            self.m.kinds[k].name
        );
        self.push(t, text, lines);
        self.status[k] = n as i64 - 1;
        self.rev += n as u128;
        self.writes += n;
        self.advance(t + every_ms * (n - 1));
    }
}

impl Model {
    /// Lays the episodes out on a timeline (at most `max_eps`), with RVs shifted down by
    /// `offset`.
    fn walk(&self, max_eps: usize, offset: u128) -> Walk {
        let two_apiservers = self
            .eps
            .iter()
            .take(max_eps)
            .any(|e| matches!(e.kind, EpKind::TooLarge { .. }));
        let compaction = self.eps.iter().any(|e| e.kind == EpKind::Compacted);
        let mut w = Writer {
            m: self,
            entries: vec![],
            rev: 1,
            writes: 0,
            last_t: 0,
            compaction,
            fills: 0,
            status: vec![0; self.kinds.len()],
            markers: 0,
            apiserver: if two_apiservers { "a" } else { "apiserver" },
        };
        let mut notes = vec![];
        // The objects the writes change: one per kind that gets writes.
        let mut needs = vec![false; self.kinds.len()];
        for e in &self.eps {
            needs[self.ctls[e.ctl].kind] = true;
        }
        for (k, kp) in self.kinds.iter().enumerate() {
            if needs[k] || kp.rate.is_some() {
                w.push(0, format!("at 0s create {} x", kp.name), &[]);
                w.rev += 1;
                w.writes += 1;
            }
        }
        // Moments: each episode after the previous one's window and its controller's start.
        let mut laid: Vec<Laid> = vec![];
        let mut dropped = vec![];
        let mut prev_end = 0u64;
        for (i, e) in self.eps.iter().enumerate() {
            if laid.len() >= max_eps {
                dropped.push(i);
                continue;
            }
            let (pre, post) = e.kind.window();
            let start = self.ctls[e.ctl].start_ms.unwrap_or(0);
            let at = match e.kind {
                // Before the controller's start, or not at all.
                EpKind::FirstList { .. } if e.at >= prev_end + pre => e.at,
                EpKind::FirstList { .. } => {
                    dropped.push(i);
                    continue;
                }
                _ => {
                    e.at.max(prev_end + pre)
                        .max(start + 1000 + pre)
                        .max(pre + 1000)
                }
            };
            if at > LAST_MS {
                dropped.push(i);
                continue;
            }
            prev_end = at + post;
            laid.push(Laid {
                ep: i,
                at,
                exact: false,
                why_not: None,
            });
        }
        if !dropped.is_empty() {
            notes.push(format!(
                "{} episodes left out (the script holds at most {max_eps}, within 24h and 64 KiB)",
                dropped.len()
            ));
        }
        let end_ms = laid
            .last()
            .map(|l| l.at + self.eps[l.ep].kind.window().1)
            .unwrap_or(0)
            .max(
                self.ctls
                    .iter()
                    .filter_map(|c| c.start_ms)
                    .max()
                    .unwrap_or(0),
            )
            + 30_000;
        let end_ms = end_ms.min(24 * 3_600_000);
        let background = self.background_scale(end_ms, &mut notes);
        let mut on_b = vec![false; self.ctls.len()];
        let mut b_paused: Option<u128> = None;
        let mut cursor = 1u64;
        let mut rev_first = None;
        let story_budget =
            |w: &Writer, left: usize| (WRITE_BUDGET.saturating_sub(w.writes)) / left.max(1) as u64;
        let n_laid = laid.len();
        for (li, l) in laid.iter_mut().enumerate() {
            let e = &self.eps[l.ep];
            let at = l.at;
            let (pre, post) = e.kind.window();
            // Background writes stop short of the revisions an exact episode aims at.
            let target = match &e.kind {
                EpKind::Gone { rv: Some(n), .. } => n.checked_sub(offset),
                EpKind::TooLarge { rv, current } => {
                    current.or(*rv).and_then(|x| x.checked_sub(offset))
                }
                _ => None,
            };
            let room = target.map(|t| t.saturating_sub(w.rev + 2).min(WRITE_BUDGET as u128) as u64);
            self.background(&mut w, cursor, at - pre, &background, room);
            let c = e.ctl;
            let k = self.ctls[c].kind;
            let cn = self.ctls[c].name.clone();
            let lines = e.lines.clone();
            let cap = self.capacity_of(k);
            let to_a = |w: &mut Writer, on_b: &mut Vec<bool>, t: u64| {
                if on_b[c] {
                    w.act(t, format!("failover {cn} to a"), &lines);
                    on_b[c] = false;
                }
            };
            match &e.kind {
                EpKind::Gone { rv, m, .. } => {
                    to_a(&mut w, &mut on_b, at - 1500);
                    w.advance(w.write_time(at - 1000));
                    rev_first.get_or_insert(w.rev);
                    let share = story_budget(&w, n_laid - li);
                    let target = rv
                        .and_then(|n| n.checked_sub(offset))
                        .filter(|&n| n > w.rev);
                    let gap = match (rv, m) {
                        (Some(n), Some(m)) if m > n => Some(m - n),
                        _ => None,
                    };
                    let cost = |pad: u128, g: u128| pad + 1 + g + cap as u128;
                    let (pad, g, exact, why_not) = match (target, gap) {
                        (Some(n), g)
                            if cost(n - 1 - w.rev, g.unwrap_or(1))
                                <= WRITE_BUDGET.saturating_sub(w.writes) as u128 =>
                        {
                            (
                                n - 1 - w.rev,
                                g.unwrap_or(1),
                                g.is_some() || m.is_none(),
                                None,
                            )
                        }
                        _ => {
                            let room = (share.saturating_sub(cap + 1)).max(1) as u128;
                            let g0 = gap.unwrap_or(1);
                            let why = if rv.is_some_and(|n| n.saturating_sub(offset) <= w.rev) {
                                "its RV is below revisions the script has already written (RVs in the input go backwards, or several reflectors share a name)"
                            } else if rv.is_none() {
                                "the input does not say the RVs"
                            } else {
                                "its RV is beyond the writes the script can make"
                            };
                            (0, g0.min(room), false, Some(why.to_string()))
                        }
                    };
                    w.filler(at - 1000, pad as u64, &lines);
                    w.marker(at - 1000, k, &lines);
                    // Compactions between the client's RV and the writes take revisions too.
                    let ticks = w.ticks(at - 1000, at - 150) as u128;
                    let g = if g > ticks { g - ticks } else { g };
                    w.break_rewatch(at, &cn, k, (g as u64, cap), &lines);
                    l.exact = exact;
                    l.why_not = why_not;
                }
                EpKind::Compacted => {
                    // The client's last event, then two compactions pass it while it is quiet.
                    to_a(&mut w, &mut on_b, at - 26_000);
                    w.marker(at - 25_000, k, &lines);
                    w.filler(at - 24_000, 1, &lines);
                    w.break_rewatch(at, &cn, k, (0, 0), &lines);
                    l.exact = true;
                }
                EpKind::TooLarge { rv, current } => {
                    rev_first.get_or_insert(w.rev);
                    to_a(&mut w, &mut on_b, at - 7000);
                    let n_t = rv.and_then(|n| n.checked_sub(offset));
                    // Without the cache's RV (an audit 504), the frozen cache is one revision
                    // behind the client's (assumed).
                    let m_t = match current {
                        Some(m) => m.checked_sub(offset),
                        None => n_t.map(|n| n - 1),
                    };
                    let left = WRITE_BUDGET.saturating_sub(w.writes) as u128;
                    let gap = match (rv, current) {
                        (Some(n), Some(m)) if n > m => Some(n - m),
                        _ => None,
                    };
                    let share = story_budget(&w, n_laid - li) as u128;
                    let mut why_not = None;
                    // (new M: its padding, or None to keep b's; the padding before N)
                    let (pad1, pad2) = match (n_t, m_t) {
                        (Some(n), Some(m))
                            if n > m
                                && b_paused == Some(m)
                                && n > w.rev
                                && n - w.rev + cap as u128 <= left =>
                        {
                            (None, n - 1 - w.rev)
                        }
                        (Some(n), Some(m))
                            if n > m && m > w.rev && n - w.rev + cap as u128 <= left =>
                        {
                            (Some(m - 1 - w.rev), n - 1 - m)
                        }
                        _ => {
                            why_not = Some(match gap {
                                None => "the input does not say both RVs".to_string(),
                                Some(_) => "its RVs are below revisions the script has already written, or beyond the writes it can make".to_string(),
                            });
                            match gap {
                                // The same distance between the client and the frozen cache.
                                Some(g) if g + cap as u128 + 2 <= share => (Some(0), g - 1),
                                _ if b_paused.is_some() => (None, 0),
                                _ => (Some(0), 0),
                            }
                        }
                    };
                    let exact = why_not.is_none();
                    if let Some(p1) = pad1 {
                        if b_paused.is_some() {
                            w.act(at - 6500, "resume b".into(), &lines);
                        }
                        w.filler(at - 6000, p1 as u64, &lines);
                        let m = w.marker(at - 6000, k, &lines);
                        w.act(at - 5900, "pause b".into(), &lines);
                        b_paused = Some(m);
                    }
                    w.filler(at - 5200, pad2 as u64, &lines);
                    w.marker(at - 5200, k, &lines);
                    // The hidden 410 at 4.2 s before, then the failover during its backoff.
                    w.break_rewatch(at - 4200, &cn, k, (1, cap), &lines);
                    w.act(at - 4150, format!("failover {cn} to b"), &lines);
                    on_b[c] = true;
                    l.exact = exact;
                    l.why_not = why_not;
                }
                EpKind::Refused { span_ms } | EpKind::TooMany { span_ms } => {
                    // Unreachable: its connections refused; 429s: its apiserver restarting.
                    let what = match e.kind {
                        EpKind::Refused { .. } => format!("disconnect {cn}"),
                        _ if on_b[c] => "restart-apiserver b".to_string(),
                        _ => format!("restart-apiserver {}", w.apiserver),
                    };
                    let d = span_ms + 1000;
                    w.act(at - 100, format!("{what} for {}", script_time(d)), &lines);
                    l.exact = true;
                }
                EpKind::FirstList { rv } => {
                    w.advance(w.write_time(at - 500));
                    let left = WRITE_BUDGET.saturating_sub(w.writes) as u128;
                    match rv.checked_sub(offset) {
                        Some(n) if n > w.rev && n - w.rev <= left / 2 => {
                            w.filler(at - 500, (n - 1 - w.rev) as u64, &lines);
                            w.marker(at - 500, k, &lines);
                            l.exact = true;
                        }
                        _ => l.why_not = Some("its RV is below revisions the script has already written, or beyond the writes it can make".into()),
                    }
                    cursor = at + post;
                    continue;
                }
                EpKind::WatchEnd { items } => {
                    if let Some(n) = items.filter(|&n| n > 0) {
                        let from = cursor.max(self.ctls[c].start_ms.unwrap_or(0) + 1000);
                        let span = (at - 100).saturating_sub(from);
                        let room = story_budget(&w, n_laid - li).max(1);
                        let n2 = n.min(room);
                        if n2 < n {
                            notes.push(format!(
                                "line {}: {n} items received, {n2} written (the write budget)",
                                e.lines[0]
                            ));
                        }
                        w.burst(from, k, n2, span / n2.max(1), &lines);
                    }
                    w.act(at, format!("disconnect {cn} for 0s"), &lines);
                    l.exact = true;
                }
            }
            w.push(
                at,
                format!(
                    "at {} say {}",
                    script_time(at),
                    quoted(&format!("line {}: {}", e.lines[0], e.said))
                ),
                &lines,
            );
            cursor = at + post;
        }
        self.background(
            &mut w,
            cursor,
            end_ms.saturating_sub(10_000),
            &background,
            None,
        );
        let entries = std::mem::take(&mut w.entries);
        Walk {
            entries,
            laid,
            end_ms,
            offset,
            writes: w.writes,
            two_apiservers,
            compaction,
            dropped,
            notes,
            rev_first,
        }
    }

    /// Each kind's background rate in writes per second, scaled down so that all of them
    /// together make at most half the write budget over the run.
    fn background_scale(&self, end_ms: u64, notes: &mut Vec<String>) -> Vec<Option<(u128, u64)>> {
        let total: u128 = self
            .kinds
            .iter()
            .filter_map(|k| k.rate)
            .map(|(n, ms)| n * end_ms as u128 / ms.max(1) as u128)
            .sum();
        let cap = (WRITE_BUDGET / 2) as u128;
        self.kinds
            .iter()
            .map(|k| {
                let (n, ms) = k.rate?;
                if total > cap {
                    let scaled = (n * cap / total).max(1);
                    notes.push(format!(
                        "the {} write rate is scaled down by {}x to fit the write budget",
                        k.name,
                        total / cap
                    ));
                    Some((scaled, ms))
                } else {
                    Some((n, ms))
                }
            })
            .collect()
    }

    /// Background writes of every kind with a rate over `[from, to)`, at most `room` of them.
    fn background(
        &self,
        w: &mut Writer,
        from: u64,
        to: u64,
        rates: &[Option<(u128, u64)>],
        room: Option<u64>,
    ) {
        if to <= from + 1000 {
            return;
        }
        let kinds = rates.iter().flatten().count().max(1) as u64;
        for (k, r) in rates.iter().enumerate() {
            let Some((n, ms)) = *r else { continue };
            let count =
                (n * (to - from) as u128 / ms.max(1) as u128).min(WRITE_BUDGET as u128 / 2) as u64;
            // A burst starting at status 0 needs a marker first: one more write.
            let count = room.map_or(count, |r| count.min((r / kinds).saturating_sub(1)));
            if count == 0 || w.writes + count > WRITE_BUDGET {
                continue;
            }
            let every = ((to - from) / count).max(1);
            let lines = self.kinds[k].rate_lines.clone();
            w.burst(from, k, count, every, &lines);
        }
    }
}

/// The parser refused the script made: the importer's bug, said with the parser's words.
fn refused(d: Vec<crate::Diagnostic>) -> ImportError {
    ImportError::Generated {
        message: d
            .iter()
            .map(|d| format!("line {}: {}", d.line, d.message))
            .collect::<Vec<_>>()
            .join("; "),
    }
}

/// Observations in, the imported script and report out.
pub(super) fn build(seen: Vec<Seen>) -> Result<Imported, ImportError> {
    let total = seen.len();
    let mut report: Vec<LineReport> = vec![];
    let mut obs = vec![];
    for (n, r) in seen {
        match r {
            Ok(o) => {
                report.push(LineReport {
                    line: n,
                    recogniser: Some(o.rec.clone()),
                    outcome: Outcome::Noted,
                    detail: String::new(),
                    script_lines: vec![],
                });
                obs.push(o);
            }
            Err(why) if why.is_empty() => report.push(LineReport {
                line: n,
                recogniser: None,
                outcome: Outcome::Blank,
                detail: "blank".into(),
                script_lines: vec![],
            }),
            Err(why) => report.push(LineReport {
                line: n,
                recogniser: None,
                outcome: Outcome::NotRecognised,
                detail: why,
                script_lines: vec![],
            }),
        }
    }
    if obs.is_empty() {
        return Err(ImportError::NothingRecognised { report });
    }
    let model = Model::read(obs, total);
    // Lay out; fewer episodes while the script would not fit.
    let mut max_eps = MAX_EPISODES;
    let mut walk = model.walk(max_eps, 0);
    let rvs: Vec<u128> = model
        .eps
        .iter()
        .flat_map(|e| match e.kind {
            EpKind::Gone { rv, m, .. } => vec![rv, m],
            EpKind::TooLarge { rv, current } => vec![rv, current],
            _ => vec![],
        })
        .flatten()
        .collect();
    if let (Some(&lo), Some(&hi), Some(first)) =
        (rvs.iter().min(), rvs.iter().max(), walk.rev_first)
    {
        if hi as u64 as u128 != hi || hi > WRITE_BUDGET as u128 / 2 {
            let offset = lo.saturating_sub(first + 1);
            if offset > 0 {
                walk = model.walk(max_eps, offset);
            }
        }
    }
    let empty = BTreeMap::new();
    loop {
        let (script, _) = render(&model, &walk, &empty, &[]);
        let estimate = script.len() + 260 * walk.laid.len() + 200 * model.ctls.len();
        if estimate <= SCRIPT_LIMIT || max_eps == 0 {
            break;
        }
        max_eps = (walk.laid.len() * 3 / 4).min(max_eps.saturating_sub(1));
        walk = model.walk(max_eps, walk.offset);
    }
    let (script, _) = render(&model, &walk, &empty, &[]);
    let scenario = crate::parse(&script).map_err(refused)?;
    let run = crate::run_scenario(&scenario).map_err(|d| ImportError::Generated {
        message: d.first().map(|d| d.message.clone()).unwrap_or_default(),
    })?;
    let Pinned {
        mut expects,
        comments,
        line_notes,
    } = pin(&model, &walk, &run.sim);
    // The final script: every expectation must parse and hold on the run; one that does not is
    // dropped and said in the notes (a bug, said rather than hidden).
    let mut dropped_notes = vec![];
    let (script, map) = loop {
        let (script, map) = render(&model, &walk, &comments, &expects);
        if script.len() > crate::MAX_SCRIPT_BYTES && !expects.is_empty() {
            expects.pop();
            continue;
        }
        let fin = crate::parse(&script).map_err(refused)?;
        if fin.config != scenario.config {
            return Err(ImportError::Generated {
                message: "the expectations changed the configuration".into(),
            });
        }
        let failing: Vec<usize> = fin
            .expectations
            .iter()
            .enumerate()
            .filter(|(_, x)| !listwatch_core::verdict::check(&run.sim, &x.expect).pass)
            .map(|(i, _)| i)
            .collect();
        if failing.is_empty() {
            break (script, map);
        }
        for &i in failing.iter().rev() {
            if i < expects.len() {
                let x = expects.remove(i);
                dropped_notes.push(format!(
                    "an expectation the run does not meet was dropped (an importer bug): {}",
                    x.text
                ));
            }
        }
    };
    // The report.
    let mut notes = model.notes.clone();
    notes.extend(walk.notes.iter().cloned());
    notes.extend(dropped_notes);
    if walk.offset > 0 {
        notes.push(format!("RVs shifted down by {}", walk.offset));
    }
    let mut notes_of: BTreeMap<usize, Vec<&String>> = BTreeMap::new();
    for (l, extra) in &line_notes {
        notes_of.entry(*l).or_default().push(extra);
    }
    let script_lines: Vec<&str> = script.lines().collect();
    for r in report.iter_mut() {
        if let Some((o, d)) = model.out.get(&r.line) {
            r.outcome = *o;
            r.detail = d.clone();
        } else if r.recogniser.is_some() && r.detail.is_empty() {
            r.detail = "recognised; nothing to reproduce".into();
        }
        for extra in notes_of.get(&r.line).into_iter().flatten() {
            r.detail += extra;
        }
        if let Some(s) = map.get(&r.line) {
            r.script_lines = s.clone();
        }
        // A line an expectation pins (and nothing else stands for) became that expectation.
        let pinned = r.script_lines.iter().any(|&l| {
            script_lines
                .get(l - 1)
                .is_some_and(|t| t.starts_with("expect "))
        });
        if pinned && r.outcome == Outcome::Noted {
            r.outcome = Outcome::Expectation;
        }
    }
    for &d in &walk.dropped {
        for &l in &model.eps[d].lines {
            // The report has a line each, in order.
            if let Some(r) = report.get_mut(l - 1) {
                r.outcome = Outcome::LeftOut;
                r.detail = format!("{} (the script's episode limit)", model.eps[d].kind.name());
            }
        }
    }
    Ok(Imported {
        script,
        report,
        notes,
    })
}
