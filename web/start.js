// Starts the app. Trunk would inline this loader in index.html; the page's CSP allows no inline
// script, so Trunk.toml's `pattern_script` loads this file instead and passes the hashed names
// of the wasm-bindgen module and the wasm binary as attributes of its own tag. The binary comes
// LZMA-packed (web/pack-wasm.mjs) unless the build had no xz, and is unpacked as it downloads.
import { unlzmaResponse } from './lzma.js';

const tag = document.querySelector('script[data-listwatch-wasm]');
const here = (path) => new URL(path, document.baseURI).href;
const [{ default: init }, wasm] = await Promise.all([
  import(here(tag.dataset.listwatchJs)),
  fetch(here(tag.dataset.listwatchWasm)).then(unlzmaResponse),
]);
await init({ module_or_path: wasm });
