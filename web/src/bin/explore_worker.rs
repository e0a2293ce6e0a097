//! The explorer's Web Worker: runs `listwatch explore` off the page's thread, so the page never
//! freezes. It also writes the trace as JSON for the page's export, folds the objects panel's
//! table and runs the comparison's two scripts, which keeps serde and those folds out of the
//! page's first load. Messages are `protocol::ToWorker` in and `protocol::FromWorker` out (plain
//! JS objects with a `kind`); it first says `{kind: "ready"}`. The page cancels by terminating
//! the worker.

#[path = "../protocol.rs"]
mod protocol;

use gloo_events::EventListener;
use listwatch_core::analysis::{Analysis, MarkerKind};
use listwatch_core::explore::{Budget, Explorer};
use listwatch_core::verdict::esr_verdict;
use listwatch_core::view::{body_entries, Copies, Holder, Mark, Objects, Version};
use listwatch_core::{EventKind as K, Labels, ReflectorEvent, Sim, StoreEvent};
use listwatch_script::explore::{
    broken_text, counterexample, explorer_against, MAX_BUDGET_SCHEDULES,
};
use protocol::{CompareRun, CopyRow, Figures, FromWorker, ObjectRow, ToWorker};
use wasm_bindgen::JsCast;
use web_sys::js_sys::Date;
use web_sys::{DedicatedWorkerGlobalScope, MessageEvent};

/// The objects panel draws this many objects a page (in the order first written), so a run of a
/// thousand objects folds and draws one page at a time.
const OBJECTS_PAGE: usize = 25;
/// Events sent per run for the comparison's shared clock.
const MAX_COMPARE_EVENTS: usize = 20_000;
/// Failures sent back to the page at most (each carries a whole script).
const MAX_REPORTED: usize = 50;

thread_local! {
    /// The objects panel's run and its fold, kept while the script stays the same.
    static FOLDED: std::cell::RefCell<Option<(String, Sim, Objects)>> = const { std::cell::RefCell::new(None) };
}

fn short(name: &str) -> &str {
    name.strip_prefix("default/").unwrap_or(name)
}

fn first_error(d: &[listwatch_script::Diagnostic]) -> String {
    format!("line {}: {}", d[0].line, d[0].message)
}

fn post(scope: &DedicatedWorkerGlobalScope, msg: &FromWorker) {
    let _ = scope.post_message(&msg.to_js());
}

/// One run for the comparison.
fn compare_run(script: &str) -> CompareRun {
    match listwatch_script::run(script) {
        Err(d) => CompareRun::Error {
            error: first_error(&d),
        },
        Ok(r) => {
            let title = listwatch_script::parse(script)
                .map(|s| s.title)
                .unwrap_or_default();
            run_shown(&r, title)
        }
    }
}

/// What the comparison shows of a run: its outcomes, ESR, counts, events and watcher states.
fn run_shown(r: &listwatch_script::Report, title: String) -> CompareRun {
    let sim = &r.sim;
    let analysis = Analysis::of(sim);
    let esr = esr_verdict(sim, analysis.esr);
    let marked = |kind| analysis.events(kind).len() as f64;
    // Failed writes have no marker kind: they are counted here.
    let failed_writes = sim
        .trace()
        .iter()
        .filter(|e| matches!(e.kind, K::Store(StoreEvent::WriteFailed { .. })))
        .count() as f64;
    let counts = [
        ("events", sim.trace().len() as f64),
        ("410 Gone", marked(MarkerKind::Gone)),
        ("relists", marked(MarkerKind::Relist)),
        ("reconciles", marked(MarkerKind::Reconcile)),
        ("writes", marked(MarkerKind::Write)),
        ("failed writes", failed_writes),
    ];
    let shown = || sim.trace().iter().take(MAX_COMPARE_EVENTS);
    CompareRun::Run {
        title,
        end: sim.now_ms().ms() as f64,
        outcomes: r
            .outcomes
            .iter()
            .map(|(x, out)| (x.text.clone(), out.pass, out.found.clone()))
            .collect(),
        esr: (esr.pass, esr.found),
        counts: counts
            .into_iter()
            .map(|(w, n)| (w.to_string(), n))
            .collect(),
        events: shown()
            .map(|e| {
                let t = format!(
                    "{}: {}",
                    listwatch_core::actor_label(e.actor, sim),
                    listwatch_core::describe(&e.kind, sim)
                );
                (e.time_ms.ms() as f64, t)
            })
            .collect(),
        states: shown()
            .filter_map(|e| match e.kind {
                K::Reflector(ReflectorEvent::State { watcher, state, .. }) => Some((
                    e.time_ms.ms() as f64,
                    sim.watcher(watcher),
                    state.as_str().to_string(),
                )),
                _ => None,
            })
            .collect(),
    }
}

/// One script under two versions, as `listwatch run --compare`: both runs on one clock, the
/// facts that differ and the first divergence.
fn compare_versions(script: &str, versions: &str) -> FromWorker {
    let versions: listwatch_script::compare::Versions = match versions.parse() {
        Ok(v) => v,
        Err(message) => return FromWorker::Error { message },
    };
    let c = match listwatch_script::compare::compare(script, versions) {
        Ok(c) => c,
        Err(d) => {
            return FromWorker::Error {
                message: first_error(&d),
            }
        }
    };
    let side = |s: &listwatch_script::compare::Side| {
        let title = listwatch_script::parse(script)
            .map(|p| p.title)
            .unwrap_or_default();
        run_shown(&s.report, format!("{}: {title}", s.label))
    };
    let event = |e: &Option<(listwatch_core::TimeMs, String)>| {
        e.as_ref()
            .map_or(String::new(), |(t, text)| format!("{t} {text}"))
    };
    FromWorker::Compare {
        runs: vec![side(&c.a), side(&c.b)],
        differences: c
            .differences
            .iter()
            .map(|d| (d.fact.clone(), d.a.clone(), d.b.clone()))
            .collect(),
        divergence: c
            .divergence
            .as_ref()
            .map(|d| (d.index as f64, event(&d.a), event(&d.b))),
    }
}

/// Pasted log lines through `listwatch import`, as the CLI's `--json` has them. `bytes` is the
/// paste's size as the page measured it: one too large to send whole comes as its size alone.
fn import_logs(text: &str, bytes: f64) -> FromWorker {
    use listwatch_script::import::{import, ImportError, Imported, MAX_INPUT_BYTES};
    let whole = (bytes.max(0.0) as usize).max(text.len());
    let result = if whole > MAX_INPUT_BYTES {
        Err(ImportError::TooLarge { bytes: whole })
    } else {
        import(text)
    };
    match result {
        Ok(imported) => FromWorker::Import {
            json: imported.to_json(),
            error: String::new(),
        },
        // No line recognised: the report still says why for each.
        Err(ImportError::NothingRecognised { report }) => {
            let message = ImportError::NothingRecognised {
                report: report.clone(),
            }
            .to_string();
            let shown = Imported {
                script: String::new(),
                report,
                notes: vec![],
            };
            FromWorker::Import {
                json: shown.to_json(),
                error: message,
            }
        }
        Err(e) => FromWorker::Import {
            json: String::new(),
            error: e.to_string(),
        },
    }
}

/// One version in an object's history, as the panel lists it.
fn version_text(sim: &Sim, v: &Version, later: bool) -> String {
    let ms = v.time_ms.ms();
    format!(
        "{}.{:03}s rv {} · {} by {} · spec {} status {} · uid {}{}{}",
        ms / 1000,
        ms % 1000,
        v.rv,
        v.op.as_str(),
        listwatch_core::actor_label(v.actor, sim),
        v.spec,
        v.status,
        v.uid,
        if v.deleting { " · deleting" } else { "" },
        if later { " (later)" } else { "" }
    )
}

/// What one version holds, as the panel's cells (`protocol::CopyRow::cells`).
fn cells(sim: &Sim, v: &Version) -> Vec<(String, String)> {
    let mut out = vec![
        ("rv".to_string(), v.rv.to_string()),
        ("spec".to_string(), v.spec.to_string()),
        ("status".to_string(), v.status.to_string()),
    ];
    let mut owners: Vec<String> = (v.owner.iter())
        .map(|&(k, n, uid)| format!("{}/{} (uid {uid})", sim.kind(k), short(sim.name(n))))
        .collect();
    for (key, value) in v
        .fields
        .map(|t| body_entries(&listwatch_core::Labels::fields(sim, t)))
        .unwrap_or_default()
    {
        match key.as_str() {
            "ownerReferences" => owners.push(value),
            _ => out.push((key, value)),
        }
    }
    if !owners.is_empty() {
        out.push(("ownerReferences".into(), owners.join(", ")));
    }
    let moment = |at: listwatch_core::TimeMs| format!("{}.{:03}s", at.ms() / 1000, at.ms() % 1000);
    out.push(("creationTimestamp".into(), moment(v.created_ms)));
    if let Some(at) = v.deletion_ms {
        out.push(("deletionTimestamp".into(), moment(at)));
    }
    out.push(("uid".into(), v.uid.to_string()));
    out
}

/// The keys of `mine` whose values are not `truth`'s, and those only one of them has.
fn differing(mine: &[(String, String)], truth: &[(String, String)]) -> Vec<String> {
    let value =
        |cells: &[(String, String)], k: &str| cells.iter().find(|c| c.0 == k).map(|c| c.1.clone());
    let mut keys: Vec<&String> = mine.iter().chain(truth).map(|c| &c.0).collect();
    keys.dedup();
    let mut out: Vec<String> = vec![];
    for k in keys {
        if value(mine, k) != value(truth, k) && !out.contains(k) {
            out.push(k.clone());
        }
    }
    out
}

/// Object `o` at `cursor` (whose copies are `copies`): every holder's copy, with the fields that
/// differ from etcd's, and its history when it is the one picked.
fn object_row(
    (sim, objs, copies): (&Sim, &Objects, &Copies),
    o: usize,
    cursor: usize,
    pick: (&str, &str),
) -> ObjectRow {
    let ob = &objs.objects[o];
    let kind = sim.kind(ob.kind).to_string();
    let name = short(sim.name(ob.name)).to_string();
    let truth = objs
        .copy(copies, 0, o)
        .0
        .map(|v| cells(sim, v))
        .unwrap_or_default();
    let rows = (0..objs.holders.len())
        .filter(|&h| objs.holds_kind(sim, h, o))
        .map(|h| {
            let (v, mark) = objs.copy(copies, h, o);
            let holder = match objs.holders[h] {
                Holder::Etcd => "etcd".to_string(),
                Holder::Cache(a) => sim.apiserver(a).to_string(),
                Holder::Store(w) => sim.watcher(w),
            };
            let cells = v.map(|v| cells(sim, v)).unwrap_or_default();
            let differs = if mark == Mark::Stale {
                differing(&cells, &truth)
            } else {
                vec![]
            };
            CopyRow {
                holder,
                mark: mark.as_str().to_string(),
                cells,
                differs,
            }
        })
        .collect();
    let history = (kind == pick.0 && name == pick.1).then(|| {
        ob.versions
            .iter()
            .map(|v| {
                let later = v.event as usize >= cursor;
                (v.event as f64, version_text(sim, v, later), later)
            })
            .collect()
    });
    (kind, name, rows, history)
}

/// The objects panel's table at one moment, a page of `OBJECTS_PAGE` objects, folded here so the
/// page's first load stays small.
fn objects(script: &str, cursor: f64, pick: (String, String), page: f64) -> FromWorker {
    let cursor = cursor.max(0.0) as usize;
    FOLDED.with(|f| {
        let mut f = f.borrow_mut();
        if f.as_ref().is_none_or(|(s, ..)| s != script) {
            match listwatch_script::run(script) {
                Ok(r) => {
                    let o = Objects::new(&r.sim);
                    *f = Some((script.to_string(), r.sim, o));
                }
                Err(d) => {
                    return FromWorker::Error {
                        message: first_error(&d),
                    }
                }
            }
        }
        let Some((_, sim, objs)) = f.as_ref() else {
            return FromWorker::Error {
                message: "nothing folded".into(),
            };
        };
        let seen = objs.seen(cursor);
        let copies = objs.at(sim, cursor);
        let last_page = seen.saturating_sub(1) / OBJECTS_PAGE;
        let page = (page.max(0.0) as usize).min(last_page);
        let shown = page * OBJECTS_PAGE..seen.min((page + 1) * OBJECTS_PAGE);
        FromWorker::Objects {
            cursor: cursor as f64,
            script: script.to_string(),
            pick: format!("{}/{}", pick.0, pick.1),
            seen: seen as f64,
            page: page as f64,
            per_page: OBJECTS_PAGE as f64,
            list: shown
                .map(|o| object_row((sim, objs, &copies), o, cursor, (&pick.0, &pick.1)))
                .collect(),
        }
    })
}

fn figures(ex: &Explorer, budget: u64, started: f64) -> Figures {
    let s = ex.stats;
    let secs = ((Date::now() - started) / 1000.0).max(1e-6);
    Figures {
        tried: s.tried as f64,
        space: s.space.min(budget) as f64,
        states: s.states as f64,
        skipped: s.skipped as f64,
        faults: s.faults as f64,
        per_second: s.tried as f64 / secs,
        failures: ex.failures.len() as f64,
    }
}

/// The failures `ex` found that `found` does not hold yet (up to [`MAX_REPORTED`]): their faults
/// in words and their counterexample scripts. Each is rendered once, when found.
fn report_found(
    found: &mut Vec<(String, String)>,
    ex: &Explorer,
    script: &str,
    scenario: &listwatch_script::Scenario,
) {
    for x in ex.failures.iter().take(MAX_REPORTED).skip(found.len()) {
        let faults: Vec<String> = x
            .faults
            .iter()
            .map(|f| f.describe(&scenario.config))
            .collect();
        found.push((
            faults.join("; "),
            counterexample(script, scenario, x, ex.end_ms()),
        ));
    }
}

fn explore(scope: &DedicatedWorkerGlobalScope, script: &str, budget: u64, all: bool, only: &str) {
    let limits = Budget {
        schedules: budget,
        first_failure: !all,
    };
    let only = (!only.is_empty()).then_some(only);
    let (mut ex, scenario) = match explorer_against(script, limits, only) {
        Ok(x) => x,
        Err(d) => {
            let message = format!("line {}:{}: {}", d[0].line, d[0].col, d[0].message);
            return post(scope, &FromWorker::Error { message });
        }
    };
    let started = Date::now();
    // The failures found so far go with a report when there are new ones: the page keeps the
    // last list it got, and a cancel (the worker terminated) leaves it on screen.
    let (mut found, mut sent) = (Vec::new(), 0);
    let more = |ex: &Explorer| ex.failures.len().saturating_sub(MAX_REPORTED) as f64;
    while !ex.step(200) {
        report_found(&mut found, &ex, script, &scenario);
        let grew = found.len() != sent;
        sent = found.len();
        let progress = FromWorker::Progress {
            figures: figures(&ex, budget, started),
            found: grew.then(|| found.clone()),
            more: more(&ex),
        };
        post(scope, &progress);
    }
    report_found(&mut found, &ex, script, &scenario);
    let already: Vec<String> = ex
        .base_broken
        .iter()
        .map(|b| broken_text(&scenario, b))
        .collect();
    let done = FromWorker::Done {
        figures: figures(&ex, budget, started),
        found,
        more: more(&ex),
        base_broken: already.join("; "),
    };
    post(scope, &done);
}

fn handle(scope: &DedicatedWorkerGlobalScope, job: ToWorker) {
    match job {
        ToWorker::Explore {
            script,
            budget,
            all,
            controller,
        } => explore(
            scope,
            &script,
            budget.clamp(1.0, MAX_BUDGET_SCHEDULES as f64) as u64,
            all,
            &controller,
        ),
        ToWorker::Compare { script, other } => {
            let runs = vec![compare_run(&script), compare_run(&other)];
            let (differences, divergence) = (vec![], None);
            post(
                scope,
                &FromWorker::Compare {
                    runs,
                    differences,
                    divergence,
                },
            );
        }
        ToWorker::CompareVersions { script, versions } => {
            post(scope, &compare_versions(&script, &versions))
        }
        ToWorker::Import { text, bytes } => post(scope, &import_logs(&text, bytes)),
        ToWorker::Objects {
            script,
            cursor,
            pick_kind,
            pick_name,
            page,
        } => post(
            scope,
            &objects(&script, cursor, (pick_kind, pick_name), page),
        ),
        // The trace as JSON (the page's export): serde_json stays out of the page's first load.
        ToWorker::Export { script } => post(
            scope,
            &match listwatch_script::run(&script) {
                Ok(report) => FromWorker::Export {
                    json: listwatch_script::export::json(&report.sim, &report.outcomes),
                },
                Err(d) => FromWorker::Error {
                    message: first_error(&d),
                },
            },
        ),
    }
}

fn main() {
    let scope: DedicatedWorkerGlobalScope = web_sys::js_sys::global().unchecked_into();
    let me = scope.clone();
    let listener = EventListener::new(&scope, "message", move |e| {
        let Some(e) = e.dyn_ref::<MessageEvent>() else {
            return;
        };
        match serde_wasm_bindgen::from_value::<ToWorker>(e.data()) {
            Ok(job) => handle(&me, job),
            Err(err) => post(
                &me,
                &FromWorker::Error {
                    message: format!("the worker cannot read this job: {err}"),
                },
            ),
        }
    });
    // The worker listens for its whole life: it ends only when the page terminates it.
    listener.forget();
    // Messages sent before this listener existed are lost: say when the page may send the job.
    post(&scope, &FromWorker::Ready);
}

#[cfg(test)]
mod tests {
    use super::*;
    use wasm_bindgen_test::*;
    wasm_bindgen_test_configure!(run_in_browser);

    /// The comparison's counts and ESR, as the worker computed them by counting the trace itself
    /// before it read them from core's `Analysis`: the numbers it shows must stay these.
    fn counted_by_hand(sim: &Sim) -> (Vec<(String, f64)>, (bool, String)) {
        let esr = listwatch_core::verdict::check(
            sim,
            &listwatch_core::verdict::Expect::Esr { controller: None },
        );
        let count =
            |f: &dyn Fn(&K) -> bool| sim.trace().iter().filter(|e| f(&e.kind)).count() as f64;
        let counts = [
            ("events", sim.trace().len() as f64),
            ("410 Gone", count(&|k| k.gone().is_some())),
            ("relists", count(&|k| k.is_relist())),
            (
                "reconciles",
                count(&|k| {
                    matches!(
                        k,
                        K::Controller(listwatch_core::ControllerEvent::ReconcileStart { .. })
                    )
                }),
            ),
            (
                "writes",
                count(&|k| matches!(k, K::Store(StoreEvent::Write { .. }))),
            ),
            (
                "failed writes",
                count(&|k| matches!(k, K::Store(StoreEvent::WriteFailed { .. }))),
            ),
        ];
        let counts = counts.map(|(w, n)| (w.to_string(), n)).to_vec();
        (counts, (esr.pass, esr.found))
    }

    fn counts_and_esr(run: CompareRun) -> (Vec<(String, f64)>, (bool, String)) {
        match run {
            CompareRun::Run { counts, esr, .. } => (counts, esr),
            CompareRun::Error { error } => panic!("a gallery scenario fails: {error}"),
        }
    }

    /// Every gallery scenario's comparison figures are those of counting its trace: the 410s,
    /// relists, reconciles and writes core's analysis marks, the failed writes counted here, and
    /// ESR in the words of `expect esr`.
    #[wasm_bindgen_test]
    fn the_comparison_counts_what_the_trace_holds() {
        let mut kinds_seen = [false; 6];
        for (name, src) in listwatch_script::gallery::GALLERY {
            let r = listwatch_script::run(src).expect("gallery scenarios parse");
            let want = counted_by_hand(&r.sim);
            let got = counts_and_esr(compare_run(src));
            assert_eq!(got, want, "{name}");
            for (seen, (_, n)) in kinds_seen.iter_mut().zip(&got.0) {
                *seen |= *n > 0.0;
            }
        }
        assert_eq!(kinds_seen, [true; 6], "the gallery has some of every count");
    }

    /// One scenario's figures, pinned: a watch-cache overflow with one 410 and one relist.
    #[wasm_bindgen_test]
    fn the_overflow_scenario_compares_as_pinned() {
        let src = listwatch_script::gallery::GALLERY
            .iter()
            .find(|(name, _)| name.starts_with("02-"))
            .expect("the overflow scenario")
            .1;
        let (counts, esr) = counts_and_esr(compare_run(src));
        let counts: Vec<(&str, f64)> = counts.iter().map(|(w, n)| (w.as_str(), *n)).collect();
        assert_eq!(counts, PINNED_02);
        assert_eq!(esr, (true, PINNED_02_ESR.to_string()));
    }

    const PINNED_02: [(&str, f64); 6] = [
        ("events", 93.0),
        ("410 Gone", 1.0),
        ("relists", 1.0),
        ("reconciles", 5.0),
        ("writes", 14.0),
        ("failed writes", 0.0),
    ];
    const PINNED_02_ESR: &str = "stable since 2.050s";

    /// A paste too large to send whole (its size alone) and one no line of which is recognised
    /// get the importer's own messages; the second keeps its report of each line.
    #[wasm_bindgen_test]
    fn an_import_says_the_importers_messages() {
        match import_logs("", 5e6) {
            FromWorker::Import { json, error } => {
                assert!(json.is_empty());
                assert!(error.starts_with("the paste is 5000000 bytes"), "{error}");
            }
            other => panic!("{other:?}"),
        }
        match import_logs(
            "hello
world
",
            0.0,
        ) {
            FromWorker::Import { json, error } => {
                assert!(error.starts_with("none of the 2 lines"), "{error}");
                assert!(json.contains("\"not-recognised\""), "{json}");
            }
            other => panic!("{other:?}"),
        }
    }

    /// A comparison of versions names each side's version and lists what differs.
    #[wasm_bindgen_test]
    fn versions_compare_as_the_cli_does() {
        let src = listwatch_script::gallery::GALLERY
            .iter()
            .find(|(name, _)| name.starts_with("48-"))
            .expect("the streaming-list incident")
            .1;
        match compare_versions(src, "kubernetes=1.34,1.35") {
            FromWorker::Compare {
                runs, differences, ..
            } => {
                let titles: Vec<String> = runs
                    .iter()
                    .map(|r| match r {
                        CompareRun::Run { title, .. } => title.clone(),
                        CompareRun::Error { error } => error.clone(),
                    })
                    .collect();
                assert!(titles[0].starts_with("kubernetes 1.34: "), "{titles:?}");
                assert!(titles[1].starts_with("kubernetes 1.35: "), "{titles:?}");
                assert!(!differences.is_empty());
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            compare_versions(src, "kubernetes=1.35,1.35"),
            FromWorker::Error { .. }
        ));
    }

    /// A script that does not parse is the comparison's error, in its first diagnostic's words.
    #[wasm_bindgen_test]
    fn a_broken_script_compares_as_its_first_error() {
        match compare_run("kind Pod\nbogus\n") {
            CompareRun::Error { error } => assert!(error.starts_with("line 2: "), "{error}"),
            run => panic!("{run:?}"),
        }
    }
}
