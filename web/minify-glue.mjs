// Trunk post-build hook: minifies what every first visit loads besides the wasm (the page's
// wasm-bindgen glue listwatch-web-HASH.js and its inline snippets, the style sheet style-HASH.css,
// start.js, lzma.js) with esbuild, and puts each minified file's digest in index.html's `integrity`
// attribute, which Trunk computed for the readable file; index.html loses its comments and
// blank lines.
// Usage: node web/minify-glue.mjs STAGING_DIR   (esbuild on PATH)
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';

const dir = process.argv[2];
const sri = (buf) => 'sha384-' + createHash('sha384').update(buf).digest('base64');
const html = `${dir}/index.html`;
let index = readFileSync(html, 'utf8').replace(/<!--[\s\S]*?-->/g, '').replace(/\n\s*(?=\n)/g, '');
const firstLoad = /^(listwatch-web-[0-9a-f]+\.js|style-[0-9a-f]+\.css|start\.js|lzma\.js|snippets\/[^/]+\/inline\d+\.js)$/;
for (const f of readdirSync(dir, { recursive: true }).filter((f) => firstLoad.test(f))) {
  const path = `${dir}/${f}`;
  const before = sri(readFileSync(path));
  const js = f.endsWith('.js') ? ['--format=esm'] : [];
  execFileSync('esbuild', [path, '--minify', ...js, '--log-level=warning', '--allow-overwrite', `--outfile=${path}`]);
  if (index.includes(before)) index = index.split(before).join(sri(readFileSync(path)));
}
writeFileSync(html, index);
