//! The explorer's Web Worker: runs `listwatch explore` off the page's thread, so the page never
//! freezes. It also writes the trace as JSON for the page's export (`{script, export: true}` in,
//! `{kind: "export", json}` out), which keeps serde out of the page's first load. It first says `{kind: "ready"}`; messages in: `{script, budget}`. Messages out: `{kind: "progress" | "done" |
//! "error", ...}` with the search's figures, and for "done" the counterexample script (empty when
//! none was found). The page cancels by terminating the worker.

use listwatch_core::explore::Budget;
use listwatch_core::view::{Holder, Objects};
use listwatch_core::Labels;
use listwatch_script::explore::{broken_text, counterexample, explorer};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::js_sys::{Array, Date, Object, Reflect};
use web_sys::{DedicatedWorkerGlobalScope, MessageEvent};

const MAX_BUDGET: f64 = 10_000_000.0;
/// The objects panel draws at most this many objects (the first ones written).
const MAX_OBJECTS: usize = 120;

thread_local! {
    /// The objects panel's run and its fold, kept while the script stays the same.
    static FOLDED: std::cell::RefCell<Option<(String, listwatch_core::Sim, Objects)>> = const { std::cell::RefCell::new(None) };
}

fn short(name: &str) -> &str {
    name.strip_prefix("default/").unwrap_or(name)
}

fn js_strings<I: IntoIterator<Item = String>>(it: I) -> JsValue {
    it.into_iter()
        .map(|s| JsValue::from_str(&s))
        .collect::<Array>()
        .into()
}

/// Events sent per run for the comparison's shared clock.
const MAX_COMPARE_EVENTS: usize = 20_000;

/// One run for the comparison: `{title, error, end, outcomes: [[text, pass, found]], esr: [pass,
/// found], counts: [[what, n]], events: [[time, text]], states: [[time, watcher, state]]}`.
fn compare_run(script: &str) -> JsValue {
    let o = Object::new();
    match listwatch_script::run(script) {
        Err(d) => set(
            &o,
            "error",
            format!("line {}: {}", d[0].line, d[0].message).into(),
        ),
        Ok(r) => {
            let sim = &r.sim;
            let scenario = listwatch_script::parse(script).ok();
            set(
                &o,
                "title",
                scenario.map(|s| s.title).unwrap_or_default().into(),
            );
            set(&o, "end", (sim.now_ms() as f64).into());
            let outcomes: Array = r
                .outcomes
                .iter()
                .map(|(x, out)| -> JsValue {
                    Array::of3(
                        &x.text.clone().into(),
                        &out.pass.into(),
                        &out.found.clone().into(),
                    )
                    .into()
                })
                .collect();
            set(&o, "outcomes", outcomes.into());
            let esr = listwatch_core::verdict::check(
                sim,
                &listwatch_core::verdict::Expect::Esr { controller: None },
            );
            set(
                &o,
                "esr",
                Array::of2(&esr.pass.into(), &esr.found.into()).into(),
            );
            let count = |f: &dyn Fn(&listwatch_core::EventKind) -> bool| {
                sim.trace.iter().filter(|e| f(&e.kind)).count() as f64
            };
            use listwatch_core::EventKind as K;
            let counts: Array = [
                ("events", sim.trace.len() as f64),
                ("410 Gone", count(&|k| k.gone().is_some())),
                ("relists", count(&|k| k.is_relist())),
                (
                    "reconciles",
                    count(&|k| matches!(k, K::ReconcileStart { .. })),
                ),
                ("writes", count(&|k| matches!(k, K::Write { .. }))),
                (
                    "failed writes",
                    count(&|k| matches!(k, K::WriteFailed { .. })),
                ),
            ]
            .into_iter()
            .map(|(w, n)| -> JsValue { Array::of2(&w.into(), &n.into()).into() })
            .collect();
            set(&o, "counts", counts.into());
            let events: Array = sim
                .trace
                .iter()
                .take(MAX_COMPARE_EVENTS)
                .map(|e| -> JsValue {
                    let t = format!(
                        "{}: {}",
                        listwatch_core::actor_label(e.actor, sim),
                        listwatch_core::describe(&e.kind, sim)
                    );
                    Array::of2(&(e.time_ms as f64).into(), &t.into()).into()
                })
                .collect();
            set(&o, "events", events.into());
            let states: Array = sim
                .trace
                .iter()
                .take(MAX_COMPARE_EVENTS)
                .filter_map(|e| match e.kind {
                    K::State { watcher, state, .. } => Some(JsValue::from(Array::of3(
                        &(e.time_ms as f64).into(),
                        &sim.watcher(watcher).into(),
                        &state.as_str().into(),
                    ))),
                    _ => None,
                })
                .collect();
            set(&o, "states", states.into());
        }
    }
    o.into()
}

/// The objects panel's table at one moment, folded here so the page's first load stays small:
/// `{kind: "objects", cursor, seen, list: [[kind, name, [[holder, mark, rv, spec, status,
/// deletion, owner, uid], ...], history | null], ...]}`; history: `[[event, text, later], ...]`.
fn objects(scope: &DedicatedWorkerGlobalScope, script: &str, data: &JsValue) {
    let num = |k: &str| {
        Reflect::get(data, &k.into())
            .ok()
            .and_then(|v| v.as_f64())
            .unwrap_or(0.0)
    };
    let text = |k: &str| {
        Reflect::get(data, &k.into())
            .ok()
            .and_then(|v| v.as_string())
            .unwrap_or_default()
    };
    let cursor = num("cursor").max(0.0) as usize;
    let (pick_kind, pick_name) = (text("pick_kind"), text("pick_name"));
    FOLDED.with(|f| {
        let mut f = f.borrow_mut();
        if f.as_ref().is_none_or(|(s, ..)| s != script) {
            match listwatch_script::run(script) {
                Ok(r) => {
                    let o = Objects::new(&r.sim);
                    *f = Some((script.to_string(), r.sim, o));
                }
                Err(d) => {
                    let msg = format!("line {}: {}", d[0].line, d[0].message);
                    post(scope, &[("kind", "error".into()), ("message", msg.into())]);
                    return;
                }
            }
        }
        let Some((_, sim, objs)) = f.as_ref() else {
            return;
        };
        let copies = objs.at(sim, cursor);
        let seen = objs.seen(cursor);
        let list = Array::new();
        for o in 0..seen.min(MAX_OBJECTS) {
            let ob = &objs.objects[o];
            let (kind, name) = (
                sim.kind(ob.kind).to_string(),
                short(sim.name(ob.name)).to_string(),
            );
            let rows = Array::new();
            for h in (0..objs.holders.len()).filter(|&h| objs.holds_kind(sim, h, o)) {
                let (v, mark) = objs.copy(&copies, h, o);
                let holder = match objs.holders[h] {
                    Holder::Etcd => "etcd".to_string(),
                    Holder::Cache(a) => sim.apiserver(a).to_string(),
                    Holder::Store(w) => sim.watcher(w),
                };
                let mut row = vec![holder, mark.as_str().to_string()];
                if let Some(v) = v {
                    row.extend([
                        v.rv.to_string(),
                        v.spec.to_string(),
                        v.status.to_string(),
                        if v.deleting {
                            "deleting".into()
                        } else {
                            String::new()
                        },
                        match v.owner {
                            Some((k, n, uid)) => {
                                format!("{}/{} ({uid})", sim.kind(k), short(sim.name(n)))
                            }
                            None => "—".into(),
                        },
                        v.uid.to_string(),
                    ]);
                }
                rows.push(&js_strings(row));
            }
            let history: JsValue = if kind == pick_kind && name == pick_name {
                ob.versions
                    .iter()
                    .map(|v| {
                        let later = v.event as usize >= cursor;
                        let t = format!(
                            "{}.{:03}s rv {} · {} by {} · spec {} status {} · uid {}{}{}",
                            v.time_ms / 1000,
                            v.time_ms % 1000,
                            v.rv,
                            v.op.as_str(),
                            listwatch_core::actor_label(v.actor, sim),
                            v.spec,
                            v.status,
                            v.uid,
                            if v.deleting { " · deleting" } else { "" },
                            if later { " (later)" } else { "" }
                        );
                        JsValue::from(Array::of3(
                            &(v.event as f64).into(),
                            &t.into(),
                            &later.into(),
                        ))
                    })
                    .collect::<Array>()
                    .into()
            } else {
                JsValue::NULL
            };
            list.push(&Array::of4(&kind.into(), &name.into(), &rows, &history));
        }
        post(
            scope,
            &[
                ("kind", "objects".into()),
                ("cursor", (cursor as f64).into()),
                ("script", script.into()),
                ("pick", format!("{pick_kind}/{pick_name}").into()),
                ("seen", (seen as f64).into()),
                ("list", list.into()),
            ],
        );
    });
}
/// Failures sent back to the page at most (each carries a whole script).
const MAX_REPORTED: usize = 50;

fn set(o: &Object, k: &str, v: JsValue) {
    let _ = Reflect::set(o, &JsValue::from_str(k), &v);
}

fn post(scope: &DedicatedWorkerGlobalScope, fields: &[(&str, JsValue)]) {
    let o = Object::new();
    for (k, v) in fields {
        set(&o, k, v.clone());
    }
    let _ = scope.post_message(&o);
}

fn run(scope: &DedicatedWorkerGlobalScope, script: &str, budget: u64, all: bool) {
    let (mut ex, scenario) = match explorer(
        script,
        Budget {
            schedules: budget,
            first_failure: !all,
        },
    ) {
        Ok(x) => x,
        Err(d) => {
            let msg = format!("line {}:{}: {}", d[0].line, d[0].col, d[0].message);
            post(scope, &[("kind", "error".into()), ("message", msg.into())]);
            return;
        }
    };
    let started = Date::now();
    let figures = |ex: &listwatch_core::explore::Explorer| -> Vec<(&'static str, JsValue)> {
        let s = ex.stats;
        let secs = ((Date::now() - started) / 1000.0).max(1e-6);
        vec![
            ("tried", (s.tried as f64).into()),
            ("space", (s.space.min(budget) as f64).into()),
            ("states", (s.states as f64).into()),
            ("skipped", (s.skipped as f64).into()),
            ("faults", (s.faults as f64).into()),
            ("per_second", (s.tried as f64 / secs).into()),
            ("failures", (ex.failures.len() as f64).into()),
        ]
    };
    loop {
        let done = ex.step(200);
        let mut f = figures(&ex);
        if !done {
            f.push(("kind", "progress".into()));
            post(scope, &f);
            continue;
        }
        // Every failure found: its faults in words, and the counterexample script.
        let found = web_sys::js_sys::Array::new();
        for x in ex.failures.iter().take(MAX_REPORTED) {
            let faults: Vec<String> = x
                .faults
                .iter()
                .map(|f| f.describe(&scenario.config))
                .collect();
            let pair = web_sys::js_sys::Array::of2(
                &faults.join("; ").into(),
                &counterexample(script, &scenario, x, ex.end_ms()).into(),
            );
            found.push(&pair);
        }
        let already: Vec<String> = ex
            .base_broken
            .iter()
            .map(|b| broken_text(&scenario, b))
            .collect();
        f.push(("kind", "done".into()));
        f.push(("found", found.into()));
        f.push((
            "more",
            ((ex.failures.len().saturating_sub(MAX_REPORTED)) as f64).into(),
        ));
        f.push(("base_broken", already.join("; ").into()));
        post(scope, &f);
        break;
    }
}

fn main() {
    let scope: DedicatedWorkerGlobalScope = web_sys::js_sys::global().unchecked_into();
    let me = scope.clone();
    let onmessage = Closure::<dyn Fn(MessageEvent)>::new(move |e: MessageEvent| {
        let data = e.data();
        let script = Reflect::get(&data, &"script".into())
            .ok()
            .and_then(|v| v.as_string())
            .unwrap_or_default();
        let budget = Reflect::get(&data, &"budget".into())
            .ok()
            .and_then(|v| v.as_f64())
            .unwrap_or(2000.0);
        if Reflect::get(&data, &"compare".into())
            .ok()
            .and_then(|v| v.as_bool())
            .unwrap_or(false)
        {
            let other = Reflect::get(&data, &"other".into())
                .ok()
                .and_then(|v| v.as_string())
                .unwrap_or_default();
            let runs = Array::new();
            for s in [script.as_str(), other.as_str()] {
                runs.push(&compare_run(s));
            }
            post(&me, &[("kind", "compare".into()), ("runs", runs.into())]);
            return;
        }
        if Reflect::get(&data, &"objects".into())
            .ok()
            .and_then(|v| v.as_bool())
            .unwrap_or(false)
        {
            objects(&me, &script, &data);
            return;
        }
        // The trace as JSON (the page's export): serde stays out of the page's first load.
        if Reflect::get(&data, &"export".into())
            .ok()
            .and_then(|v| v.as_bool())
            .unwrap_or(false)
        {
            match listwatch_script::run(&script) {
                Ok(report) => post(
                    &me,
                    &[
                        ("kind", "export".into()),
                        (
                            "json",
                            listwatch_script::export::json(&report.sim, &report.outcomes).into(),
                        ),
                    ],
                ),
                Err(d) => post(
                    &me,
                    &[
                        ("kind", "error".into()),
                        (
                            "message",
                            format!("line {}: {}", d[0].line, d[0].message).into(),
                        ),
                    ],
                ),
            }
            return;
        }
        let all = Reflect::get(&data, &"all".into())
            .ok()
            .and_then(|v| v.as_bool())
            .unwrap_or(false);
        run(&me, &script, budget.clamp(1.0, MAX_BUDGET) as u64, all);
    });
    scope.set_onmessage(Some(onmessage.as_ref().unchecked_ref()));
    onmessage.forget();
    // Messages sent before this handler existed are lost: say when the page may send the job.
    post(&scope, &[("kind", "ready".into())]);
}
