// What the page's post-build hooks (order-wasm.mjs, minify-imports.mjs, pack-wasm.mjs) share:
// the page wasm's file, its bytes' LEB128 numbers and import entries, and `integrity` digests.
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';

export const sri = (buf) => 'sha384-' + createHash('sha384').update(buf).digest('base64');

/// The page's wasm in the staging dir (not the worker's: loaded on demand, built for speed), or
/// null when there is none.
export function pageWasm(dir) {
  const [file] = readdirSync(dir).filter((f) => /^listwatch-web-[0-9a-f]+_bg\.wasm$/.test(f));
  return file ?? null;
}

/// The unsigned LEB128 number at `at`, and where it ends.
export const leb = (buf, at) => {
  let v = 0, shift = 0, b;
  do { b = buf[at++]; v += (b & 0x7f) * 2 ** shift; shift += 7; } while (b & 0x80);
  return [v, at];
};
export const lebOut = (v) => {
  const out = [];
  do { let b = v & 0x7f; v = Math.floor(v / 128); if (v) b |= 0x80; out.push(b); } while (v);
  return out;
};

/// The import entry at `p` of an import section: its module and field names, its kind (0 a
/// function), where its description starts and where the entry ends.
export function readImport(wasm, p) {
  let len;
  [len, p] = leb(wasm, p); const mod = wasm.subarray(p, p + len).toString(); p += len;
  [len, p] = leb(wasm, p); const field = wasm.subarray(p, p + len).toString(); p += len;
  const desc = p;
  const kind = wasm[p++];
  if (kind === 0) [, p] = leb(wasm, p);
  else if (kind === 1) { p++; const flags = wasm[p++]; [, p] = leb(wasm, p); if (flags & 1) [, p] = leb(wasm, p); }
  else if (kind === 2) { const flags = wasm[p++]; [, p] = leb(wasm, p); if (flags & 1) [, p] = leb(wasm, p); }
  else if (kind === 3) p += 2;
  else throw new Error(`wasm-file: import kind ${kind} not known`);
  return { mod, field, kind, desc, end: p };
}

/// Puts `after`'s digest wherever index.html has `before`'s.
export function redigest(dir, before, after) {
  const html = `${dir}/index.html`;
  const index = readFileSync(html, 'utf8');
  writeFileSync(html, index.split(sri(before)).join(sri(after)));
}
