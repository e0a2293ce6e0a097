// Page benchmarks for `cargo xtask bench`: the gzipped size of everything the page loads, edit ->
// new frame for every gallery scenario, the longest main-thread task while typing into and
// playing every gallery scenario, and a seek in a trace of about 1.2 M events.
// Usage: node e2e/bench.mjs URL   (the built dist/ must be served at URL)
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { launch, editorText, setEditor, ensureEditor, gotoReady, reloadReady } from './browser.mjs';

const base = process.argv[2] || 'http://127.0.0.1:8080/';
const dist = new URL('../dist/', import.meta.url).pathname;
const median = (xs) => { const s = [...xs].sort((a, b) => a - b); return s[Math.floor(s.length / 2)]; };
const p95 = (xs) => { const s = [...xs].sort((a, b) => a - b); return s[Math.min(s.length - 1, Math.floor(s.length * 0.95))]; };
const line = (name, value, goal, ok) => console.log(`  ${name.padEnd(44)} ${value.padStart(12)}   (goal ${goal})   ${ok ? 'MET' : 'NOT MET'}`);

console.log('page:');
// What a visit loads: every response of a first visit, until the network is quiet. CodeMirror
// loads on the editor's first focus, the explorer's worker when someone clicks Explore, embed.js
// only on documentation sites: reported apart.
const files = readdirSync(dist, { recursive: true }).filter((f) => statSync(dist + f).isFile());
const gzOf = (f) => gzipSync(readFileSync(dist + f), { level: 9 }).length;
const size = (pick) => files.filter(pick).reduce((n, f) => n + gzOf(f), 0);
const loaded = [];
{
  const b = await launch();
  const pg = await b.newPage();
  pg.on('response', (r) => { const path = new URL(r.url()).pathname.replace(/^\//, ''); loaded.push(path || 'index.html'); });
  await pg.goto(base, { waitUntil: 'networkidle' });
  await pg.waitForSelector('[data-testid="watch-cache"]');
  await b.close();
}
const gz = [...new Set(loaded)].filter((f) => files.includes(f)).reduce((n, f) => n + gzOf(f), 0);
line('gzipped size of what the page loads', `${(gz / 1024).toFixed(1)} KB`, '<= 300 KB', gz <= 300 * 1024);
console.log(`    (${[...new Set(loaded)].join(', ')})`);
console.log(`    (the editor, CodeMirror 6, loaded on the first focus: ${(size((f) => f === 'editor.js') / 1024).toFixed(1)} KB)`);
console.log(`    (the explorer's worker, loaded on demand: ${(size((f) => f.startsWith('explore_worker')) / 1024).toFixed(1)} KB; embed.js: ${(size((f) => f === 'embed.js') / 1024).toFixed(1)} KB)`);

const browser = await launch();
const page = await (await browser.newContext({ viewport: { width: 1400, height: 1000 } })).newPage();
// Every main-thread task over 50 ms (the Long Tasks API), collected from the start.
await page.addInitScript(() => {
  window.__longTasks = [];
  new PerformanceObserver((l) => { for (const e of l.getEntries()) window.__longTasks.push(e.duration); })
    .observe({ type: 'longtask', buffered: true });
});
/// The longest task since the last call (0 when none went over 50 ms), after what is queued ran.
const longestTask = () => page.evaluate(async () => {
  await new Promise((r) => setTimeout(r, 100));
  const t = Math.max(0, ...window.__longTasks);
  window.__longTasks = [];
  return t;
});
page.on('pageerror', (e) => console.log('page error:', String(e)));
page.on('console', (m) => { if (m.type() === 'error') console.log('console error:', m.text()); });
await gotoReady(page, base);
await page.evaluate(() => localStorage.clear());
await reloadReady(page);
await page.waitForSelector('[data-testid="watch-cache"]');
await ensureEditor(page);

// Timed in the page: from the input event until Yew has re-rendered the DOM (its scheduler runs
// before the next task), i.e. the new frame is ready to paint; waiting for the display's next
// vsync would add up to 16.7 ms of alignment that says nothing about the page.
const timedEdit = (text) => page.evaluate(async (text) => {
  const v = document.querySelector('[data-testid="editor"]').cmView;
  const t0 = performance.now();
  v.dispatch({ changes: { from: 0, to: v.state.doc.length, insert: text } });
  await new Promise((r) => setTimeout(r, 0));
  return performance.now() - t0;
}, text);

const options = await page.$$eval('[data-testid="gallery"] option[data-file]', (os) => os.map((o) => [o.value, o.dataset.file]));
let worst = 0, worstMedian = 0, worstTask = 0;
// V8 compiles the page's wasm in tiers, in the background, for the first seconds after load; on
// two cores that compilation competes with the first scenario's edits. The figures are for the
// page once it is warm, so some edits run first, and their own p95 is printed beside them.
const warmup = [];
{
  const src = await editorText(page);
  for (let k = 0; k < 40; k++) warmup.push(await timedEdit(`${src}\nseed ${1000 + k}`));
}
const rows = [];
for (const [value, file] of options) {
  await page.selectOption('[data-testid="gallery"]', value);
  await page.waitForSelector(`[data-testid="gallery"][data-loaded="${file}"]`);
  const src = await editorText(page);
  const times = [];
  // Each edit changes the seed: a real change, so the whole scenario runs again.
  // 40 edits a scenario: with 20 the p95 was the second-slowest edit, one display refresh that
  // happened to fall inside the timed window (about one edit in five) away from any figure.
  for (let k = 0; k < 5; k++) await timedEdit(`${src}\nseed ${100 + k}`);
  for (let k = 0; k < 40; k++) times.push(await timedEdit(`${src}\nseed ${k}`));
  const q = p95(times), m = median(times);
  worst = Math.max(worst, q);
  worstMedian = Math.max(worstMedian, m);
  // Typing: a key at a time at the end of the script (every prefix of `seed 4242` is an edit,
  // broken or not), then playing at full speed for two seconds.
  await longestTask();
  await page.$eval('[data-testid="editor"]', (el) => { const v = el.cmView; v.dispatch({ selection: { anchor: v.state.doc.length } }); v.focus(); });
  await page.keyboard.type('\n# typed\nseed 4242', { delay: 15 });
  const typing = await longestTask();
  await page.$eval('[data-testid="speed"]', (el) => { el.value = '4'; el.dispatchEvent(new Event('input', { bubbles: true })); });
  await page.$eval('[data-testid="scrubber"]', (el) => { el.value = '0'; el.dispatchEvent(new Event('input', { bubbles: true })); });
  await page.click('[data-testid="play"]');
  await page.waitForTimeout(2000);
  if (await page.$('[data-testid="pause"]')) await page.click('[data-testid="pause"]');
  const playing = await longestTask();
  worstTask = Math.max(worstTask, typing, playing);
  rows.push(`    ${file.padEnd(44)} median ${m.toFixed(1).padStart(5)} ms  p95 ${q.toFixed(1).padStart(5)} ms   longest task: typing ${typing.toFixed(0).padStart(4)} ms, playing ${playing.toFixed(0).padStart(4)} ms`);
}
line('edit -> new frame ready, worst gallery p95', `${worst.toFixed(1)} ms`, '<= 16 ms', worst <= 16);
line('edit -> new frame ready, worst gallery median', `${worstMedian.toFixed(1)} ms`, '<= 8 ms', worstMedian <= 8);
line('longest main-thread task typing or playing', `${worstTask.toFixed(0)} ms`, '<= 50 ms', worstTask <= 50);
console.log(`    (the first 40 edits after load, while V8 still compiles: median ${median(warmup).toFixed(1)} ms, p95 ${p95(warmup).toFixed(1)} ms)`);
console.log(rows.join('\n'));
if (process.env.BENCH_EDITS_ONLY) { await browser.close(); process.exit(0); }

// About 1.2 M events: 100,000 creates seen by 10 watchers.
let big = '# bench: 100,000 creates, 10 watchers\nkind Pod cache fixed 100\nkind Copy\ncompaction off\n';
for (let i = 0; i < 10; i++) big += `controller w${i} for Pod mirror Copy\n  watches Pod none\n`;
big += 'every 1ms 100000 times from 1s create Pod p{i}\nrun 120s\n';
const tRun = Date.now();
await timedEdit(big);
await page.waitForFunction(() => /\/\d{7}/.test(document.querySelector('.count')?.textContent || ''), null, { timeout: 120000 });
const pageS = (Date.now() - tRun) / 1000;
const count = await page.textContent('.count');
console.log(`    (the 1 M-event run took ${pageS.toFixed(1)} s in the page: ${count})`);
// The same script natively (the release CLI, built by `cargo xtask bench`): the page's wasm
// against native code on one workload, in one run of the benchmark.
{
  const root = new URL('../', import.meta.url).pathname;
  const bin = (process.env.CARGO_TARGET_DIR || root + 'target') + '/release/listwatch';
  const file = mkdtempSync('/tmp/listwatch-bench-') + '/big.lw';
  writeFileSync(file, big);
  const t0 = Date.now();
  const out = execFileSync(bin, ['run', file]).toString();
  const nativeS = (Date.now() - t0) / 1000;
  const events = parseInt(/(\d+) events/.exec(out)[1]);
  console.log(`    (natively: ${events} events in ${nativeS.toFixed(2)} s, ${(events / nativeS / 1e6).toFixed(2)} M events/s; in the page ${(events / pageS / 1e6).toFixed(2)} M events/s, rendering included)`);
  const ratio = nativeS / pageS;
  line('the same run in the page / natively', ratio.toFixed(2), '>= 0.6', ratio >= 0.6);
}
const seeks = await page.evaluate(async () => {
  const el = document.querySelector('[data-testid="scrubber"]');
  const max = parseInt(el.max);
  const out = [];
  let seed = 7;
  for (let k = 0; k < 50; k++) {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    const t0 = performance.now();
    el.value = String(seed % max);
    el.dispatchEvent(new Event('input', { bubbles: true }));
    await new Promise((r) => setTimeout(r, 0));
    out.push(performance.now() - t0);
  }
  return out;
});
const s95 = p95(seeks);
line('seek in a 1.2 M-event trace, p95', `${s95.toFixed(1)} ms`, '<= 16 ms', s95 <= 16);
// The explorer in its Web Worker: schedules per second on gallery scenarios (stops at the first
// failure, as the page does; the figure is the worker's own count over its own time).
const workerRates = [];
const onlyEsr = (src) => src.split('\n').filter((l) => !l.startsWith('expect') || l.trim() === 'expect esr').join('\n') + '\nexpect esr\n';
for (const file of ['17-level-triggered', '09-work-queue-dedup', '20-explore-stale-delete-fixed', '10-error-backoff', '03-too-old']) {
  const [value, full] = await page.$eval('[data-testid="gallery"]', (s, f) => { const o = [...s.options].find((o) => (o.dataset.file || '').includes(f)); return [o.value, o.dataset.file]; }, file);
  await page.selectOption('[data-testid="gallery"]', value);
  await page.waitForSelector(`[data-testid="gallery"][data-loaded="${full}"]`);
  // Only ESR: count expectations are observations that any fault changes, and the search stops
  // at the first failure; ESR keeps the whole search running.
  await setEditor(page, onlyEsr(await editorText(page)));
  await page.fill('input[aria-label="Schedules to try at most"]', '3000');
  await page.click('[data-testid="explore"]');
  await page.waitForSelector('[data-testid="explore-found"], [data-testid="explore-none"], .explore .fail', { timeout: 120000 });
  const stats = await page.textContent('[data-testid="explore-stats"]');
  const m = /([\d.]+) of [\d.]+ schedules.* ([\d.]+) schedules\/s/.exec(stats);
  workerRates.push([file, parseFloat(m[1]), parseFloat(m[2])]);
}
const sortedRates = workerRates.map((r) => r[2]).sort((a, b) => a - b);
const medianRate = sortedRates[Math.floor(sortedRates.length / 2)];
line('explorer in the Web Worker, median schedules/s', `${medianRate.toFixed(0)}`, '>= 15,000', medianRate >= 15000);
// The page keeps a worker that finished for the next search; the first search runs in a new one,
// while V8 is still compiling its wasm in tiers.
console.log(`    (the first search, in a new worker: ${workerRates[0][2].toFixed(0)} /s; the page keeps the worker for the next ones)`);
for (const [f, n, r] of workerRates) console.log(`    ${f.padEnd(44)} ${String(n).padStart(5)} schedules ${r.toFixed(0).padStart(8)} /s`);
await browser.close();
