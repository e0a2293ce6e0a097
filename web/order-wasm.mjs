// Trunk post-build hook: orders the page wasm's functions so that alike ones sit side by side,
// where gzip (a 32 KB window) finds their likeness: the copies of one generic for each type, the
// views of the components. About 7.5 KB less gzipped on every first visit than wasm-opt's
// `--reorder-functions-by-name` alone (index.html), for the same code: only the order changes.
// Greedy: each next function is the one that shares the most 4-byte runs with the last seven
// placed, over its own runs to the power 0.7 (so a long body is not preferred for its length alone;
// 3 to 10 functions and powers 0.3 to 1 measured within 4 KB of each other, this the least). The order is written as names (`f00000`, ...) that `wasm-opt --reorder-functions-by-name`
// sorts by, and the names are stripped again. It then puts the new file's digest in index.html's
// `integrity` attribute.
// Usage: node web/order-wasm.mjs STAGING_DIR   (wasm-opt on PATH)
import { execFileSync } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { leb, lebOut, pageWasm, readImport, redigest } from './wasm-file.mjs';

const dir = process.argv[2];
const file = pageWasm(dir);
if (!file) process.exit(0);
const path = `${dir}/${file}`;
const wasm = readFileSync(path);

// Sections: the imported functions come first in the index space, the code section's bodies after.
// A name section already there (a build with `-g`) is left out: the order's names replace it.
let importedFns = 0, bodies = [];
const kept = [wasm.subarray(0, 8)];
for (let at = 8; at < wasm.length;) {
  const id = wasm[at];
  const [size, start] = leb(wasm, at + 1);
  const [nameLen, nameAt] = id === 0 ? leb(wasm, start) : [0, start];
  if (!(id === 0 && wasm.subarray(nameAt, nameAt + nameLen).toString() === 'name')) kept.push(wasm.subarray(at, start + size));
  if (id === 2) {
    let [n, p] = leb(wasm, start);
    for (let i = 0; i < n; i++) {
      const imp = readImport(wasm, p);
      if (imp.kind === 0) importedFns++;
      p = imp.end;
    }
  } else if (id === 10) {
    let [n, p] = leb(wasm, start);
    for (let i = 0; i < n; i++) {
      const [len, q] = leb(wasm, p);
      bodies.push(wasm.subarray(q, q + len));
      p = q + len;
    }
  }
  at = start + size;
}

// Each body's distinct 4-byte runs, and for each run the bodies that have it. Runs found in more
// than a tenth of the bodies say little about likeness and would make the search slow.
const runsOf = bodies.map((b) => {
  const s = new Set();
  for (let i = 0; i + 4 <= b.length; i++) s.add(b.readUInt32LE(i));
  return [...s];
});
const having = new Map();
runsOf.forEach((runs, f) => runs.forEach((r) => { const l = having.get(r); if (l) l.push(f); else having.set(r, [f]); }));
const common = Math.max(8, bodies.length / 10);

const n = bodies.length;
const placed = new Uint8Array(n);
const shared = new Float64Array(n);
const order = [0];
placed[0] = 1;
const recent = [0];
for (let k = 1; k < n; k++) {
  shared.fill(0);
  const runs = new Set();
  for (const f of recent) for (const r of runsOf[f]) runs.add(r);
  for (const r of runs) {
    const l = having.get(r);
    if (l.length > common) continue;
    for (const f of l) shared[f]++;
  }
  let best = -1, score = -1;
  for (let f = 0; f < n; f++) {
    if (placed[f]) continue;
    const s = shared[f] / (1 + runsOf[f].length) ** 0.7;
    if (s > score) { score = s; best = f; }
  }
  placed[best] = 1;
  order.push(best);
  recent.push(best);
  if (recent.length > 7) recent.shift();
}

// A name section that says the order, appended, for wasm-opt to sort by and then strip.
const rank = new Array(n);
order.forEach((f, i) => { rank[f] = i; });
const names = [...lebOut(n)];
for (let f = 0; f < n; f++) {
  const name = Buffer.from(`f${String(rank[f]).padStart(6, '0')}`);
  names.push(...lebOut(importedFns + f), ...lebOut(name.length), ...name);
}
const sub = [1, ...lebOut(names.length), ...names];
const payload = [...lebOut(4), ...Buffer.from('name'), ...sub];
const named = Buffer.concat([...kept, Buffer.from([0, ...lebOut(payload.length), ...payload])]);
const tmp = `${path}.named`;
writeFileSync(tmp, named);
execFileSync('wasm-opt', ['--enable-bulk-memory', '--enable-nontrapping-float-to-int', '--enable-sign-ext',
  // The levels of index.html's -Oz, so wasm-opt writes the functions as compactly as it did there
  // (without them a plain rewrite adds 0.8 KB).
  '--optimize-level=2', '--shrink-level=2', '--generate-stack-ir', '--optimize-stack-ir',
  '--reorder-functions-by-name', '--strip-debug', '--strip-producers', '--strip-target-features', tmp, '-o', path]);
rmSync(tmp);

redigest(dir, wasm, readFileSync(path));
