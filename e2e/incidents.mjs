// Bringing an incident to the page (issue 26, and issue 21's long runs): "Paste your logs" runs
// `listwatch import` in the page, the gallery's Incidents section, the compare view's "what
// changes if I upgrade", a long run's progress bar and Cancel, and embed.js's `at=`.
// Usage: node e2e/incidents.mjs URL [only-substring]
import { readFileSync } from 'node:fs';
import { openSuite, runTests, assert, editorText, setEditor, gotoReady, reloadReady, until, pickGallery as pickGalleryIn } from './browser.mjs';

const { base, only, shots, browser, context, page, errors, $ } = await openSuite();
const SIZES = [[390, 844], [768, 1024], [1400, 900]];

/// Screenshots at the three widths, of the element `testid` scrolled into view.
async function shots3(name, testid) {
  for (const [w, h] of SIZES) {
    await page.setViewportSize({ width: w, height: h });
    await page.waitForTimeout(150);
    if (testid) await $(testid).first().scrollIntoViewIfNeeded().catch(() => {});
    await page.screenshot({ path: `${shots}${name}-${w}.png` });
  }
  await page.setViewportSize({ width: 1400, height: 900 });
}

/// The page answers: a round trip to its main thread within 2 s.
async function alive(what) {
  const t0 = Date.now();
  await page.evaluate(() => document.title);
  assert(Date.now() - t0 < 2000, `the page answered ${what} in ${Date.now() - t0} ms`);
}

async function fresh() {
  await gotoReady(page, base);
  await page.evaluate(() => localStorage.clear());
  await reloadReady(page);
  await page.locator('[data-testid="watch-cache"]').first().waitFor();
}

const MINE = '# Mine: my own script\nkind Pod\nkind Copy\ncontroller ctl for Pod mirror Copy\nat 0s create Pod a\nrun 5s\n';

// client-go tools/cache/reflector.go:492 at kubernetes-1.32.0 (klog.Warningf "%s: watch of %v
// ended with: %v", the watch cache's "too old resource version: %d (%d)"), as in
// crates/script/tests/import.rs; and a line no recogniser reads.
const LOGS = [
  'W1202 10:00:05.123456    1234 reflector.go:492] k8s.io/client-go/informers/factory.go:160: watch of *v1.Pod ended with: too old resource version: 10 (12)',
  'this line is not a log line of any kind',
  'W1202 10:01:05.123456    1234 reflector.go:492] k8s.io/client-go/informers/factory.go:160: watch of *v1.Pod ended with: too old resource version: 300 (420)',
].join('\n');

async function openImport() {
  await $('import-logs').click();
  await $('import-dialog').waitFor();
  assert(await page.$eval('[data-testid="import-dialog"]', (d) => d.open), 'the dialog is open');
}

/// Puts `text` in the dialog's box as a paste would, and imports it.
async function importText(text) {
  await $('import-text').evaluate((el, t) => { el.value = t; el.dispatchEvent(new Event('input', { bubbles: true })); }, text);
  await $('import-run').click();
}

async function importError() {
  await $('import-error').waitFor({ timeout: 20000 });
  return $('import-error').textContent();
}

const tests = [
  ['paste your logs: the report of each line, and the scenario opened with the user\'s script kept', async () => {
    await fresh();
    await setEditor(page, MINE);
    await page.waitForTimeout(400);
    await openImport();
    await importText(LOGS);
    await $('import-result').waitFor({ timeout: 30000 });
    const counts = await $('import-counts').textContent();
    assert(counts.startsWith('3 lines: ') && counts.includes('1 not recognised'), counts);
    const outcomes = await page.$$eval('[data-testid="import-line"]', (rows) => rows.map((r) => r.dataset.outcome));
    assert(outcomes.length === 3 && outcomes[1] === 'not-recognised', outcomes.join(','));
    assert(outcomes[0] !== 'not-recognised' && outcomes[2] !== 'not-recognised', outcomes.join(','));
    const first = await $('import-line').first().textContent();
    assert(first.includes('client-go 1.32 (reflector.go:492)'), `the recogniser and its version: ${first}`);
    const script = await $('import-script').textContent();
    assert(script.includes('kind Pod') && script.includes('expect'), script.slice(0, 200));
    await shots3('page26-import-report', 'import-dialog');
    await $('import-open').click();
    await until(page, () => !document.querySelector('[data-testid="import-dialog"]').open, null, 'the dialog closes');
    await $('restore-notice').waitFor();
    assert((await $('restore-notice').textContent()).includes('made from your logs'), await $('restore-notice').textContent());
    await until(page, (s) => {
      const el = document.querySelector('[data-testid="editor"]');
      return (el.cmView ? el.cmView.state.doc.toString() : '') === s;
    }, script, 'the imported scenario is in the editor');
    await page.locator('[data-testid="watch-cache"]').first().waitFor();
    // It runs, and its expectations (pinned from the run) pass.
    await until(page, () => document.querySelectorAll('.expectations li.fail').length === 0 && document.querySelectorAll('.expectations li.pass').length > 0, null, 'its expectations pass');
    // A reload keeps the user's script: the imported one was not autosaved over it.
    assert(await page.evaluate(() => localStorage.getItem('listwatch.script')) === MINE, 'the autosave is still mine');
    await $('restore').click();
    await until(page, (s) => document.querySelector('[data-testid="editor"]').cmView.state.doc.toString() === s, MINE, 'Restore brings my script back');
    assert(await $('restore-notice').count() === 0, 'the banner goes');
    assert(errors.length === 0, errors.join(' | '));
  }],
  ['paste your logs: hostile and huge pastes get the importer\'s message, the tab stays alive, the script stays', async () => {
    await fresh();
    await setEditor(page, MINE);
    await page.waitForTimeout(400);
    await openImport();
    // 2 MiB of one line: refused by size, with the importer's words.
    await importText('x'.repeat(2 << 20));
    let e = await importError();
    assert(e.includes('the paste is 2097152 bytes; import reads at most 1048576 (1 MiB)'), e);
    await alive('after a 2 MiB paste');
    // A paste of 50 MiB: not put in the box nor sent to the worker, refused by its size.
    await $('import-text').evaluate((el) => {
      el.value = '';
      const data = new DataTransfer();
      data.setData('text/plain', 'y'.repeat(50 << 20));
      el.dispatchEvent(new ClipboardEvent('paste', { clipboardData: data, bubbles: true, cancelable: true }));
    });
    await until(page, () => (document.querySelector('[data-testid="import-error"]')?.textContent || '').includes('52428800 bytes'), null, 'a 50 MiB paste is refused by its size', 20000);
    await alive('after a 50 MiB paste');
    assert(await $('import-text').inputValue() === '', 'the box did not take it');
    // Over 10,000 lines.
    await importText('a\n'.repeat(20000));
    await until(page, () => (document.querySelector('[data-testid="import-error"]')?.textContent || '').includes('import reads at most 10000'), null, 'too many lines');
    // Binary.
    await importText('W1202 10:00:05.123456 1 reflector.go:492] x\n\u0000\u0001\u0002 binary');
    await until(page, () => (document.querySelector('[data-testid="import-error"]')?.textContent || '').includes('line 2 holds binary data'), null, 'binary data');
    // Markup stays text.
    await importText('<img src=x onerror=alert(1)>\n<script>alert(2)</script>');
    await until(page, () => (document.querySelector('[data-testid="import-error"]')?.textContent || '').includes('none of the 2 lines'), null, 'nothing recognised');
    assert(await page.locator('[data-testid="import-dialog"] img').count() === 0, 'no markup from the paste');
    assert(await $('import-line').count() === 2, 'the report still says why for each line');
    assert(await $('import-open').count() === 0, 'nothing to open');
    // A dropped or chosen file too large is refused by its size without being read.
    await $('import-file').setInputFiles({ name: 'huge.log', mimeType: 'text/plain', buffer: Buffer.alloc(6 << 20, 'z') });
    await until(page, () => (document.querySelector('[data-testid="import-error"]')?.textContent || '').includes('6291456 bytes'), null, 'a 6 MiB file is refused');
    await $('import-file').setInputFiles({ name: 'incident.log', mimeType: 'text/plain', buffer: Buffer.from(LOGS) });
    await $('import-result').waitFor({ timeout: 30000 });
    assert((await $('import-text').inputValue()) === LOGS, 'the file\'s lines are shown in the box');
    await page.keyboard.press('Escape');
    await until(page, () => !document.querySelector('[data-testid="import-dialog"]').open, null, 'Escape closes the dialog');
    assert(await editorText(page) === MINE, 'the script was never replaced');
    assert(await $('restore-notice').count() === 0, 'nothing to restore');
    assert(errors.length === 0, errors.join(' | '));
  }],
  ['the gallery: the Incidents under their own heading, each fix twin just after its incident', async () => {
    await fresh();
    assert(await $('explore-cancelled').count() === 0, 'a fresh page says no search was cancelled');
    const groups = await page.$$eval('[data-testid="gallery"] optgroup', (gs) => gs.map((g) => [g.label, [...g.querySelectorAll('option')].map((o) => o.dataset.file)]));
    const incidents = groups.find(([label]) => label.startsWith('Incidents'));
    assert(incidents, `an Incidents heading: ${groups.map((g) => g[0]).join(', ')}`);
    // Which scenarios are incidents: those whose title (first line) says so.
    const all = groups.flatMap(([, files]) => files);
    const titled = await page.evaluate(async (files) => {
      const out = [];
      for (const f of files) {
        const text = await (await fetch(`scenarios/${f}`)).text();
        if (text.split('\n')[0].startsWith('# Incident:')) out.push(f);
      }
      return out;
    }, all);
    assert(titled.length >= 10, `the incidents: ${titled.length}`);
    assert(JSON.stringify(incidents[1]) === JSON.stringify(titled), `the Incidents heading holds exactly them: ${incidents[1].join(', ')}`);
    for (const [label, files] of groups) if (label !== incidents[0]) assert(!files.some((f) => titled.includes(f)), `no incident under ${label}`);
    for (const [i, f] of incidents[1].entries()) {
      if (!f.endsWith('-fixed.lw')) continue;
      const stem = (file) => file.replace(/^\d+-/, '').replace('-fixed.lw', '.lw');
      assert(stem(incidents[1][i - 1] || '') === stem(f), `${f} just after its incident, not after ${incidents[1][i - 1]}`);
      const text = await page.$eval(`[data-testid="gallery"] option[data-file="${f}"]`, (o) => o.textContent);
      assert(text.startsWith('Incident: ') && text.includes('fixed'), `${f}'s title says it is the fix: ${text}`);
    }
    await pickGalleryIn(page, '40-incident');
    assert((await page.locator('.right .title').textContent()).startsWith('Incident:'), 'it opens');
    // A picture of the open menu is the browser's own; the group is shown as the select lists it.
    await page.$eval('[data-testid="gallery"]', (s) => { s.size = 14; s.style.position = 'relative'; s.style.zIndex = 5; });
    await page.$eval('[data-testid="gallery"] option[data-file^="40-"]', (o) => o.scrollIntoView({ block: 'start' }));
    await shots3('page26-gallery-incidents', 'gallery');
    await page.$eval('[data-testid="gallery"]', (s) => { s.size = 0; s.removeAttribute('style'); });
  }],
  ['compare: one script under two versions, the facts that differ side by side on one clock', async () => {
    await fresh();
    await pickGalleryIn(page, '48-incident');
    await $('compare-toggle').click();
    await $('compare-mode').waitFor();
    await $('compare-mode').selectOption('versions');
    await $('compare-version-a').selectOption('1.34');
    await $('compare-version-b').selectOption('1.35');
    assert(await $('compare-b').count() === 0, 'one script: no second scenario to pick');
    await $('compare-run').click();
    await $('compare-facts').waitFor({ timeout: 60000 });
    const titles = await page.$$eval('[data-testid="compare"] [data-testid="run"]', (rs) => rs.map((r) => r.dataset.title));
    assert(titles.length === 2 && titles[0].startsWith('kubernetes 1.34: Incident:') && titles[1].startsWith('kubernetes 1.35: Incident:'), titles.join(' | '));
    const facts = await page.$$eval('[data-testid="compare-fact"]', (rs) => rs.map((r) => [...r.cells].map((c) => c.textContent)));
    assert(facts.length >= 1, 'facts differ');
    assert(facts.every(([, a, b]) => a !== b), 'only facts that differ');
    const head = await page.$$eval('[data-testid="compare-facts"] th', (ths) => ths.map((t) => t.textContent));
    assert(head.join('|') === 'fact|kubernetes 1.34|kubernetes 1.35', head.join('|'));
    assert((await $('compare-divergence').textContent()).startsWith('The traces diverge at event #'), await $('compare-divergence').textContent());
    // One clock for both.
    const hints = async () => page.$$eval('[data-testid="compare"] [data-testid="run"] .hint', (hs) => hs.map((x) => x.textContent));
    const before = await hints();
    await $('compare-clock').evaluate((el) => { el.value = String(Math.floor(Number(el.max) / 2)); el.dispatchEvent(new Event('input', { bubbles: true })); });
    const after = await hints();
    assert(JSON.stringify(before) !== JSON.stringify(after), 'both runs move with the clock');
    await shots3('page26-compare-versions', 'compare');
    await $('compare-close').click();
    // The same version twice is refused before anything runs.
    await $('compare-version-b').selectOption('1.34');
    await $('compare-run').click();
    assert((await page.locator('.compare-panel .fail').first().textContent()).includes('compared with itself'), 'same version refused');
    // Back to two scripts: the outcome list is there again.
    await $('compare-mode').selectOption('scripts');
    assert(await $('compare-b').count() === 1, 'two scripts again');
    assert(errors.length === 0, errors.join(' | '));
  }],
  ['a long run keeps its progress bar, and Cancel stops it', async () => {
    await fresh();
    // Long on any machine: every reconcile lists 300 Pods (5 M events take about 7 s natively,
    // more in the page), so the bar is on screen and moving when the test reads it.
    const runaway = '# Runaway\nkind Pod cache fixed 3\nkind Other cache fixed 3\ncontroller c for Pod\n  reconcile 1ms\n  workers 64\n  logic\n    get p = Pod key\n    list all = Pod selector app=x\n    requeue after 1ms\nevery 1ms 300 times create Pod p{i} labels app=x\nrun 24h\n';
    await setEditor(page, runaway);
    await $('computing').waitFor({ timeout: 20000 });
    const value = () => $('computing-progress').evaluate((p) => [Number(p.value), Number(p.max)]);
    const [v1, max] = await value();
    assert(max === 1000, `the bar counts thousandths of the run: ${max}`);
    await page.waitForTimeout(1500);
    const [v2] = await value();
    assert(v2 > v1, `the bar moves: ${v1} then ${v2}`);
    await alive('while computing');
    await $('computing-cancel').click();
    await $('run-cancelled').waitFor();
    assert(await $('computing').count() === 0, 'no longer computing');
    const said = await $('run-cancelled').textContent();
    assert(/^Run cancelled after [\d,]+ events, \S+ of 1440m virtual time\./.test(said), said);
    await page.waitForTimeout(1000);
    assert(await $('computing').count() === 0, 'it stays stopped');
    assert(await page.locator('[data-testid="watch-cache"]').count() >= 1, 'the last finished run stays on screen');
    await shots3('page26-cancelled', 'run-cancelled');
    await $('run-again').click();
    await $('computing').waitFor({ timeout: 20000 });
    assert(await $('run-cancelled').count() === 0, 'running again: the notice goes');
    // The pictures of the banner, then a cancel if the run is still going (a fast machine may
    // have finished it meanwhile).
    await shots3('page26-computing', 'computing');
    await $('computing-cancel').click({ timeout: 1000 }).catch(() => {});
    await pickGalleryIn(page, 'overflow');
    await until(page, () => !document.querySelector('[data-testid="run-cancelled"]'), null, 'another script: the notice goes');
    assert(errors.length === 0, errors.join(' | '));
  }],
  ['embed.js opens a block at its at= moment', async () => {
    // The demo page, its first block with at= or without.
    const demo = readFileSync(new URL('../web/embed-demo.html', import.meta.url), 'utf8');
    const first = '<pre class="listwatch" data-listwatch-panels="timeline,explanation"';
    assert(demo.includes(first), 'the demo\'s first block');
    const doc = (at) => demo.replace(first, first + at);
    await page.route(`${base}at-demo.html`, (r) => r.fulfill({ contentType: 'text/html', body: doc(' data-listwatch-at="2.2s"') }));
    await page.route(`${base}no-at-demo.html`, (r) => r.fulfill({ contentType: 'text/html', body: doc('') }));
    const clockIn = async (url) => {
      await page.goto(base + url);
      const frame = page.frameLocator('iframe.listwatch-embed').first();
      // The block's own script (the embed shows the default scenario until it arrives).
      await frame.locator('.title', { hasText: 'Three writes overflow a cache of two' }).waitFor({ timeout: 20000 });
      await page.waitForTimeout(300);
      return frame.locator('[data-testid="clock"]').textContent();
    };
    const at = await clockIn('at-demo.html');
    const t = parseFloat(at);
    assert(t > 2.0 && t <= 2.2, `opened at 2.2 s: the clock says ${at}`);
    assert(await clockIn('no-at-demo.html') === '0.000s', 'without at=, at the start');
    assert(errors.length === 0, errors.join(' | '));
  }],
];

const ok = await runTests(tests.filter(([name]) => name.includes(only)));
if (errors.length) console.log('console errors:', errors.join(' | '));
await browser.close();
process.exit(ok ? 0 : 1);
