// Trunk post-build hook, last: compresses the page's wasm with LZMA (xz's `--format=lzma`, at
// -9e) in place, under the same name, and puts its digest in index.html's `integrity`. The page's
// wasm is most of what a first visit downloads, and LZMA packs it into about 20% fewer bytes than
// the gzip a web server applies (66 KB less on the 837 KB wasm); `web/start.js` unpacks it with
// `web/lzma.js` before instantiating it. The header's size field, which xz leaves unknown when it
// reads a pipe, is written here: the decoder stops there. Without xz on PATH the wasm ships as it
// is, and start.js instantiates it directly.
// Usage: node web/pack-wasm.mjs STAGING_DIR
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { pageWasm, redigest } from './wasm-file.mjs';
// lzma.js is the page's ES module; read as one (node would otherwise warn, web/ having no
// package.json that says so).
const { unlzma } = await import(`data:text/javascript,${encodeURIComponent(readFileSync(new URL('./lzma.js', import.meta.url), 'utf8'))}`);

const dir = process.argv[2];
const file = pageWasm(dir);
if (!file) process.exit(0);
const path = `${dir}/${file}`;
const wasm = readFileSync(path);
if (wasm.readUInt32LE(0) !== 0x6d736100) process.exit(0); // not "\0asm": packed already
let packed;
try {
  packed = execFileSync('xz', ['--format=lzma', '-9e', '--stdout'], { input: wasm, maxBuffer: 1 << 26 });
} catch {
  console.warn('pack-wasm: no xz, the page wasm ships unpacked');
  process.exit(0);
}
packed.writeBigUInt64LE(BigInt(wasm.length), 5);
// The page's decoder must give back the very bytes: checked here rather than on a first visit.
if (Buffer.compare(Buffer.from(unlzma(packed)), wasm) !== 0) throw new Error('pack-wasm: web/lzma.js unpacks the wasm differently');
writeFileSync(path, packed);
redigest(dir, wasm, packed);
