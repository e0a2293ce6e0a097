//! Any text: the parser returns diagnostics or a scenario, never panics; scenarios run under caps.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(src) = std::str::from_utf8(data) else { return };
    match listwatch_script::parse(src) {
        Err(diags) => {
            for d in &diags {
                let _ = listwatch_script::render(d, "fuzz.lw", src);
            }
        }
        Ok(mut s) => {
            s.config.limits.max_events = 50_000;
            if let Ok(r) = listwatch_script::run_scenario(&s) {
                // A run stopped at a limit of the reconcile language says where.
                if let Some(listwatch_core::Stop::Limit { .. }) = r.sim.stopped() {
                    let d = listwatch_script::logic::stopped_at_limit(&r.sim, src);
                    assert!(d.is_some(), "a limit without its diagnostic");
                }
            }
        }
    }
});
