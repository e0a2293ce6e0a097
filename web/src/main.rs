//! The listwatch playground: edit a scenario, watch it run, travel in time.

// talc rather than the standard library's dlmalloc: about 3 KB less of the wasm every visit
// downloads, and as fast. The page is single-threaded wasm, which `new_global` requires.
#[cfg(target_family = "wasm")]
#[global_allocator]
static ALLOCATOR: talc::TalckWasm = unsafe { talc::TalckWasm::new_global() };

mod app;
mod components;
mod gallery;
mod js;
mod link;
mod playback;
mod reducer;
mod state;
mod storage;

fn main() {
    yew::Renderer::<app::App>::new().render();
}

#[cfg(test)]
mod tests {
    use wasm_bindgen_test::*;
    wasm_bindgen_test_configure!(run_in_browser);

    /// The page computes exactly the traces the CLI checks: same hash for every gallery scenario
    /// as the native run recorded in `scenarios/trace-hashes.txt`.
    /// Lets the browser run its other tasks before going on: the test runner's driver polls
    /// the page, and a test that holds the main thread for two minutes (the gallery in a debug
    /// build on a busy machine) fails on the driver's timeout, not on its assertions.
    async fn yield_to_browser() {
        let wait = web_sys::js_sys::Promise::new(&mut |resolve, _| {
            if let Some(w) = web_sys::window() {
                let _ = w.set_timeout_with_callback_and_timeout_and_arguments_0(&resolve, 0);
            }
        });
        let _ = wasm_bindgen_futures::JsFuture::from(wait).await;
    }

    #[wasm_bindgen_test]
    async fn page_traces_equal_native_traces() {
        let native = include_str!("../../scenarios/trace-hashes.txt");
        let mut checked = 0;
        for (name, src) in listwatch_script::gallery::GALLERY {
            yield_to_browser().await;
            let report = listwatch_script::run(src).expect("gallery scenarios parse");
            let hash = format!("{:016x}", listwatch_core::sim::trace_hash(&report.sim));
            let want = native
                .lines()
                .find_map(|l| l.strip_prefix(&format!("{name} ")))
                .expect("a native hash");
            assert_eq!(
                hash, want,
                "{name}: the page's trace differs from the native one"
            );
            checked += 1;
        }
        assert!(checked >= 1);
    }
}
