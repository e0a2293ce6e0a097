// Trunk post-build hook, after web/order-wasm.mjs: renames the page wasm's imports from its
// wasm-bindgen glue (`__wbg_appendChild_1d2c3b4a5e6f7081`, 159 of them, each name written twice:
// in the wasm's import section and as a key in the glue) to short names (`a`, `b`, ...), in both
// files: 5 KB less gzipped on every first visit, most of it the 16-digit hashes gzip cannot
// shorten. The imports from the page's JS snippets keep their names (the glue passes those
// modules whole). Then puts both files' new digests in index.html's `integrity` attributes.
// Usage: node web/minify-imports.mjs STAGING_DIR
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { leb, lebOut, pageWasm, readImport, redigest } from './wasm-file.mjs';

const dir = process.argv[2];
const wasmFile = pageWasm(dir);
const glueFile = wasmFile?.replace(/_bg\.wasm$/, '.js');
if (!wasmFile || !readdirSync(dir).includes(glueFile)) process.exit(0);
const wasm = readFileSync(`${dir}/${wasmFile}`);
const glue = readFileSync(`${dir}/${glueFile}`, 'utf8');

const nameOut = (s) => { const b = Buffer.from(s); return Buffer.concat([Buffer.from(lebOut(b.length)), b]); };
// a..z, A..Z, then two letters and so on: JS identifiers, none a reserved word.
const letters = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ';
const short = (i) => { let s = ''; do { s += letters[i % 52]; i = Math.floor(i / 52) - 1; } while (i >= 0); return s; };
// The glue's own imports: the module its `__wbg_get_imports` fills in by name.
const glueModule = `./${glueFile.replace(/-[0-9a-f]+\.js$/, '')}_bg.js`;

const parts = [wasm.subarray(0, 8)];
const renamed = new Map();
for (let at = 8; at < wasm.length;) {
  const id = wasm[at];
  const [size, start] = leb(wasm, at + 1);
  const end = start + size;
  if (id !== 2) { parts.push(wasm.subarray(at, end)); at = end; continue; }
  let [n, p] = leb(wasm, start);
  const entries = [];
  for (let i = 0; i < n; i++) {
    const { mod, field, desc, end } = readImport(wasm, p);
    if (mod === glueModule && !renamed.has(field)) renamed.set(field, short(renamed.size));
    entries.push(Buffer.concat([nameOut(mod), nameOut(mod === glueModule ? renamed.get(field) : field), wasm.subarray(desc, end)]));
    p = end;
  }
  const body = Buffer.concat([Buffer.from(lebOut(n)), ...entries]);
  parts.push(Buffer.from([2, ...lebOut(body.length)]), body);
  at = end;
}

// Each old name is a long token of its own in the glue (a key of the imports object); a name the
// glue lacks, or has more than once, would mean the glue is not what this expects.
let newGlue = glue;
for (const [from, to] of renamed) {
  const token = new RegExp(`(?<![\\w$])${from}(?![\\w$])`, 'g');
  const hits = newGlue.match(token)?.length ?? 0;
  if (hits !== 1) throw new Error(`minify-imports: ${from} is in the glue ${hits} times, not once`);
  newGlue = newGlue.replace(token, to);
}
const newWasm = Buffer.concat(parts);
writeFileSync(`${dir}/${wasmFile}`, newWasm);
writeFileSync(`${dir}/${glueFile}`, newGlue);
redigest(dir, wasm, newWasm);
redigest(dir, Buffer.from(glue), Buffer.from(newGlue));
