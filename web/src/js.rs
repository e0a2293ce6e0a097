//! The page's own few JS functions, in one module: wasm-bindgen writes each `inline_js` as a file
//! of its own, and every file is one more request and one more gzip header on the first load.
//! The rest of the page's JS is `panels.js` (loaded with the page, minified) and what loads on
//! demand (`editor.js`, `compare.js`, the worker).

use wasm_bindgen::prelude::*;
use web_sys::js_sys::Promise;

#[wasm_bindgen(inline_js = "
const here = (path) => new URL(path, document.baseURI).href;
export function load_editor() { return import(here('editor.js')); }
export function load_panels() { return import(here('panels.js')); }
export function fetch_text(path) { return fetch(here(path)).then((r) => r.ok ? r.text() : Promise.reject(new Error(`${path}: ${r.status}`))); }
")]
extern "C" {
    /// Loads CodeMirror (`editor.js`), on the editor's first focus.
    pub fn load_editor() -> Promise;
    /// Loads `panels.js`.
    pub fn load_panels() -> Promise;
    /// Fetches a file beside the page as text.
    pub fn fetch_text(path: &str) -> Promise;
}
