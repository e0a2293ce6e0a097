//! The explorer's Web Worker: runs `listwatch explore` off the page's thread, so the page never
//! freezes. It first says `{kind: "ready"}`; messages in: `{script, budget}`. Messages out: `{kind: "progress" | "done" |
//! "error", ...}` with the search's figures, and for "done" the counterexample script (empty when
//! none was found). The page cancels by terminating the worker.

use listwatch_core::explore::Budget;
use listwatch_script::explore::{broken_text, counterexample, explorer};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::js_sys::{Date, Object, Reflect};
use web_sys::{DedicatedWorkerGlobalScope, MessageEvent};

const MAX_BUDGET: f64 = 10_000_000.0;
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
