//! Any link: decoding answers a scenario or says what is wrong, never panics or balloons.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(link) = std::str::from_utf8(data) else { return };
    if let Ok(shared) = listwatch_script::share::decode(link) {
        assert!(shared.script.len() <= listwatch_script::MAX_SCRIPT_BYTES);
        // Line ends come out as the editor keeps them, so the page never takes its echo for an edit.
        assert!(!shared.script.contains('\r'));
        assert_eq!(listwatch_script::share::decode(&listwatch_script::share::encode(&shared)), Ok(shared));
    }
});
