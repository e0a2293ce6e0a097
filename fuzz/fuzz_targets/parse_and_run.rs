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
            let _ = listwatch_script::run_scenario(&s);
        }
    }
});
