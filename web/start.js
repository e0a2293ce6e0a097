// Starts the app. Trunk would inline this loader in index.html; the page's CSP allows no inline
// script, so Trunk.toml's `pattern_script` loads this file instead and passes the hashed names
// of the wasm-bindgen module and the wasm binary as attributes of its own tag.
const tag = document.querySelector('script[data-listwatch-wasm]');
const here = (path) => new URL(path, document.baseURI).href;
const { default: init } = await import(here(tag.dataset.listwatchJs));
await init({ module_or_path: here(tag.dataset.listwatchWasm) });
