//! The gallery as the page knows it: the index (file and title) is compiled in; a scenario's
//! script is fetched from `scenarios/FILE` beside the page when it is picked.

/// (file, title) of every scenario, as listwatch-script's build lists them, so `scenarios/` is
/// read in one place.
pub use listwatch_script::gallery::INDEX;

/// The scenario a first visit opens.
pub const DEFAULT: &str = "02-overflow-410-relist.lw";

/// Fetches a gallery scenario's script; `None` for a file not in the index or a failed fetch.
pub async fn fetch(file: &str) -> Option<String> {
    if !INDEX.iter().any(|(f, _)| *f == file) {
        return None;
    }
    wasm_bindgen_futures::JsFuture::from(crate::js::fetch_text(&format!("scenarios/{file}")))
        .await
        .ok()?
        .as_string()
}

/// Fetches `file` and hands its script to `then`.
pub fn load(file: &'static str, then: impl FnOnce(String) + 'static) {
    wasm_bindgen_futures::spawn_local(async move {
        if let Some(s) = fetch(file).await {
            then(s);
        }
    });
}
