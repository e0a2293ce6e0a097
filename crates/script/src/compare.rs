//! "What changes if I upgrade": one script run under two versions of Kubernetes (or of
//! controller-runtime), on one clock (the same timeline and seed), and the facts of the two
//! runs that differ: per watcher its 410s, relists, and lists and watches by the kind of answer
//! they got; per controller its reconciles, how they ended and its writes; each probe's answer;
//! each expectation's verdict; ESR; and the first moment the two traces diverge, with each
//! side's event. The CLI prints it (`listwatch run FILE --compare kubernetes=1.34,1.35`); the
//! page can show the same value.

use std::collections::BTreeMap;

use listwatch_core::analysis::esr_outcome;
use listwatch_core::verdict::esr_verdict;
use listwatch_core::*;

use crate::{parse_with, run_scenario, Diagnostic, Overrides, Report};

/// Which version a comparison changes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Setting {
    /// `kubernetes 1.N`: the apiserver's and client-go's defaults.
    Kubernetes,
    /// `controller-runtime 0.N`: the work queue's default.
    ControllerRuntime,
}

impl Setting {
    /// The statement that names it in a script.
    pub fn statement(self) -> &'static str {
        match self {
            Setting::Kubernetes => "kubernetes",
            Setting::ControllerRuntime => "controller-runtime",
        }
    }

    /// How its versions begin, and the lowest minor version the model knows.
    fn major(self) -> (&'static str, u32) {
        match self {
            Setting::Kubernetes => ("1.", 10),
            Setting::ControllerRuntime => ("0.", 1),
        }
    }

    fn overrides(self, minor: u32) -> Overrides {
        match self {
            Setting::Kubernetes => Overrides {
                kubernetes: Some(minor),
                ..Overrides::default()
            },
            Setting::ControllerRuntime => Overrides {
                controller_runtime: Some(minor),
                ..Overrides::default()
            },
        }
    }

    /// A version as written, from its minor number.
    pub fn version(self, minor: u32) -> String {
        format!("{}{minor}", self.major().0)
    }
}

/// The two versions to compare: `kubernetes=1.34,1.35` or `controller-runtime=0.22,0.23`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Versions {
    pub setting: Setting,
    /// The minor numbers, in the order written.
    pub a: u32,
    pub b: u32,
}

impl std::str::FromStr for Versions {
    type Err = String;

    fn from_str(spec: &str) -> Result<Versions, String> {
        let bad = || {
            format!(
                "`{spec}` is not a comparison: write kubernetes=1.A,1.B or \
                 controller-runtime=0.A,0.B, e.g. kubernetes=1.34,1.35"
            )
        };
        let (name, versions) = spec.split_once('=').ok_or_else(bad)?;
        let setting = match name.trim() {
            "kubernetes" => Setting::Kubernetes,
            "controller-runtime" => Setting::ControllerRuntime,
            _ => return Err(bad()),
        };
        let (a, b) = versions.split_once(',').ok_or_else(bad)?;
        let (prefix, lowest) = setting.major();
        let minor = |v: &str| {
            v.trim()
                .strip_prefix(prefix)
                .and_then(|m| m.parse::<u32>().ok())
                .filter(|m| (lowest..=40).contains(m))
                .ok_or_else(|| {
                    format!(
                        "`{}` is not a {} version this model knows ({prefix}N, N from {lowest} to 40)",
                        v.trim(),
                        setting.statement()
                    )
                })
        };
        let (a, b) = (minor(a)?, minor(b)?);
        if a == b {
            return Err(format!("`{spec}` compares a version with itself"));
        }
        Ok(Versions { setting, a, b })
    }
}

/// One run of the comparison.
pub struct Side {
    /// `kubernetes 1.34`.
    pub label: String,
    pub report: Report,
}

/// A fact whose value differs between the runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Difference {
    pub fact: String,
    pub a: String,
    pub b: String,
}

/// Where the traces first differ: the event index, and each side's event there (`None`: that
/// run had ended), as its moment and one-line text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Divergence {
    pub index: usize,
    pub a: Option<(TimeMs, String)>,
    pub b: Option<(TimeMs, String)>,
}

pub struct Comparison {
    pub versions: Versions,
    pub a: Side,
    pub b: Side,
    pub differences: Vec<Difference>,
    /// `None`: the traces are the same event for event.
    pub divergence: Option<Divergence>,
}

impl Comparison {
    /// Every expectation holds in both runs.
    pub fn passed(&self) -> bool {
        self.a.report.passed() && self.b.report.passed()
    }
}

/// Runs `src` under both versions and compares the runs. A script that does not parse, or does
/// not parse under one of the versions, gets that run's diagnostics.
pub fn compare(src: &str, versions: Versions) -> Result<Comparison, Vec<Diagnostic>> {
    let side = |minor: u32| -> Result<Side, Vec<Diagnostic>> {
        let scenario = parse_with(src, versions.setting.overrides(minor))?;
        let label = format!(
            "{} {}",
            versions.setting.statement(),
            versions.setting.version(minor)
        );
        Ok(Side {
            label,
            report: run_scenario(&scenario)?,
        })
    };
    let (a, b) = (side(versions.a)?, side(versions.b)?);
    let (fa, fb) = (facts(&a.report), facts(&b.report));
    let mut differences = vec![];
    // Facts in the first run's order, then those only the second has.
    let keys = fa.iter().map(|f| &f.0).chain(
        fb.iter()
            .map(|f| &f.0)
            .filter(|k| !fa.iter().any(|f| &f.0 == *k)),
    );
    let value =
        |facts: &[(String, String)], k: &str| facts.iter().find(|f| f.0 == k).map(|f| f.1.clone());
    // A count one run never made is 0; any other fact it lacks is "none".
    let missing = |other: &Option<String>| match other {
        Some(v) if v.parse::<u64>().is_ok() => "0".to_string(),
        _ => "none".to_string(),
    };
    for k in keys {
        let (va, vb) = (value(&fa, k), value(&fb, k));
        let va_or = va.clone().unwrap_or_else(|| missing(&vb));
        let (va, vb) = (va_or, vb.unwrap_or_else(|| missing(&va)));
        if va != vb {
            differences.push(Difference {
                fact: k.clone(),
                a: va,
                b: vb,
            });
        }
    }
    let divergence = divergence(&a.report.sim, &b.report.sim);
    Ok(Comparison {
        versions,
        a,
        b,
        differences,
        divergence,
    })
}

/// The first event at which the traces differ (its moment, actor or text).
pub fn divergence(a: &Sim, b: &Sim) -> Option<Divergence> {
    let at = |sim: &Sim, i: usize| {
        sim.trace().get(i).map(|e| {
            let text = format!("{}  {}", actor_label(e.actor, sim), describe(&e.kind, sim));
            (e.time_ms, text)
        })
    };
    let n = a.trace().len().max(b.trace().len());
    (0..n).find_map(|i| {
        let (ea, eb) = (at(a, i), at(b, i));
        (ea != eb).then_some(Divergence {
            index: i,
            a: ea,
            b: eb,
        })
    })
}

/// The facts a comparison compares, in a stable order: (fact, value).
pub fn facts(report: &Report) -> Vec<(String, String)> {
    let sim = &report.sim;
    let mut counts: BTreeMap<(u8, String), u64> = BTreeMap::new();
    let mut add = |order: u8, fact: String| *counts.entry((order, fact)).or_default() += 1;
    let mut probes: Vec<(String, String)> = vec![];
    for e in sim.trace() {
        let watcher = |w: WatcherId| Labels::watcher(sim, w);
        match e.kind {
            EventKind::Reflector(ReflectorEvent::ListRequest { watcher: w, .. }) => {
                add(0, format!("{}: lists", watcher(w)))
            }
            EventKind::Reflector(ReflectorEvent::WatchListRequest { watcher: w, .. }) => {
                add(0, format!("{}: streaming lists", watcher(w)))
            }
            EventKind::Reflector(ReflectorEvent::ListResult {
                watcher: w,
                from_etcd,
                more: false,
                ..
            }) => {
                let from = if from_etcd { "etcd" } else { "the watch cache" };
                add(0, format!("{}: lists answered from {from}", watcher(w)))
            }
            EventKind::Reflector(ReflectorEvent::InitialEventsEnd { watcher: w, .. }) => add(
                0,
                format!("{}: streaming lists ended (initial-events-end)", watcher(w)),
            ),
            EventKind::Reflector(ReflectorEvent::ListFailed { watcher: w, error }) => add(
                0,
                format!("{}: lists answered {}", watcher(w), answer(error)),
            ),
            EventKind::Reflector(ReflectorEvent::WatchRequest { watcher: w, .. }) => {
                add(0, format!("{}: watches", watcher(w)))
            }
            EventKind::Reflector(ReflectorEvent::WatchOpened { watcher: w, .. }) => {
                add(0, format!("{}: watches opened", watcher(w)))
            }
            EventKind::Reflector(ReflectorEvent::WatchFailed { watcher: w, error }) => add(
                0,
                format!("{}: watches answered {}", watcher(w), answer(error)),
            ),
            EventKind::Reflector(ReflectorEvent::Bookmark { watcher: w, .. }) => {
                add(0, format!("{}: bookmarks", watcher(w)))
            }
            EventKind::Reflector(ReflectorEvent::BookmarkExpired { watcher: w, .. }) => add(
                0,
                format!("{}: \"event bookmark expired\" warnings", watcher(w)),
            ),
            EventKind::Controller(ControllerEvent::ReconcileStart { controller, .. }) => add(
                1,
                format!("{}: reconciles", Labels::controller(sim, controller)),
            ),
            EventKind::Controller(ControllerEvent::ReconcileEnd {
                controller,
                result: ReconcileResult::Error(error),
                ..
            }) => add(
                1,
                format!(
                    "{}: reconciles ended with {}",
                    Labels::controller(sim, controller),
                    answer(error)
                ),
            ),
            EventKind::Store(StoreEvent::Write { .. })
            | EventKind::Store(StoreEvent::WriteFailed { .. }) => {
                let failed = matches!(e.kind, EventKind::Store(StoreEvent::WriteFailed { .. }));
                let what = if failed { "failed writes" } else { "writes" };
                match e.actor {
                    Actor::Controller(c) => {
                        add(1, format!("{}: {what}", Labels::controller(sim, c)))
                    }
                    Actor::User => add(1, format!("the timeline: {what}")),
                    _ => {}
                }
            }
            EventKind::Probe(ProbeEvent::ProbeListed { probe, .. })
            | EventKind::Probe(ProbeEvent::ProbeWatchOpened { probe, .. })
            | EventKind::Probe(ProbeEvent::ProbeFailed { probe, .. }) => {
                probes.push((format!("probe {probe}"), describe(&e.kind, sim)));
            }
            _ => {}
        }
        if let Some((w, _)) = e.kind.gone() {
            add(0, format!("{}: 410 Gone", watcher(w)));
        }
        if e.kind.is_relist() {
            if let Some(w) = e.kind.watcher() {
                add(0, format!("{}: relists", watcher(w)));
            }
        }
    }
    let mut out: Vec<(String, String)> = counts
        .into_iter()
        .map(|((_, fact), n)| (fact, n.to_string()))
        .collect();
    for (i, r) in sim.reflectors().iter().enumerate() {
        let w = Labels::watcher(sim, WatcherId(i as u16));
        out.push((format!("{w}: state at the end"), r.state().as_str().into()));
        out.push((
            format!("{w}: last RV at the end"),
            format!("rv {}", r.last_rv()),
        ));
        let objects = r.store().len().to_string();
        out.push((format!("{w}: objects in its store at the end"), objects));
    }
    out.extend(probes);
    for (x, o) in &report.outcomes {
        let verdict = if o.pass { "PASS" } else { "FAIL" };
        let value = format!("{verdict} (found {})", o.found);
        out.push((format!("line {}: {}", x.line, x.text), value));
    }
    let esr = esr_verdict(sim, esr_outcome(sim, None));
    let verdict = if esr.pass { "holds" } else { "fails" };
    out.push(("ESR".into(), format!("{verdict} ({})", esr.found)));
    out
}

/// An error as an answer: its HTTP status, or what it is when it has none.
fn answer(error: ApiError) -> String {
    match error {
        ApiError::ConnectionRefused => "connection refused".into(),
        ApiError::ReconcileError => "the reconcile's own error".into(),
        ApiError::StaleRead { .. } => "a stale read (KEP-5647)".into(),
        e => format!("{} ({})", e.code(), first_words(&e.message())),
    }
}

/// An error message without the numbers that make each one unique: a family of answers.
fn first_words(message: &str) -> String {
    let words: Vec<&str> = message
        .split_whitespace()
        .take_while(|w| !w.starts_with(|c: char| c.is_ascii_digit()))
        .take(6)
        .collect();
    words.join(" ").trim_end_matches(':').to_string()
}

/// The comparison as text: what differs, then where the traces diverge.
pub fn render(c: &Comparison) -> String {
    let (la, lb) = (&c.a.label, &c.b.label);
    let n = c.differences.len();
    let differ = if n == 1 {
        "fact differs"
    } else {
        "facts differ"
    };
    let mut s = format!("{la} vs {lb}, one script on one clock: {n} {differ}\n");
    if !c.differences.is_empty() {
        let va = c.versions.setting.version(c.versions.a);
        let vb = c.versions.setting.version(c.versions.b);
        let width = |f: fn(&Difference) -> &str, head: &str| {
            let longest = c.differences.iter().map(|d| f(d).chars().count()).max();
            longest.unwrap_or(0).max(head.len())
        };
        let (wf, wa) = (width(|d| &d.fact, "fact"), width(|d| &d.a, &va));
        s += &format!("\n  {:<wf$}  {va:<wa$}  {vb}\n", "fact");
        for d in &c.differences {
            s += &format!("  {:<wf$}  {:<wa$}  {}\n", d.fact, d.a, d.b);
        }
    }
    match &c.divergence {
        None => s += "\nthe traces are the same, event for event\n",
        Some(d) => {
            let side = |e: &Option<(TimeMs, String)>| match e {
                Some((t, text)) => format!("at {t}: {text}"),
                None => "(the run has ended)".into(),
            };
            s += &format!(
                "\nthe runs diverge at event #{}:\n  {la}: {}\n  {lb}: {}\n",
                d.index,
                side(&d.a),
                side(&d.b)
            );
        }
    }
    s
}
