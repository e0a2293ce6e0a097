// Browser end-to-end tests: act as a user on the built page. Usage: node e2e/run.mjs URL [ONLY]
// (ONLY: run only the tests whose name contains it, here and in page.mjs; share.mjs runs whole.)
import { mkdirSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { launch, runTests, assert, editorText, setEditor, ensureEditor, ready, gotoReady, reloadReady, until, shootBoth, pickGallery as pickGalleryIn } from './browser.mjs';

const base = process.argv[2] || 'http://127.0.0.1:8080/';
const only = process.argv[3] || '';
const shots = new URL('./screenshots/', import.meta.url).pathname;
mkdirSync(shots, { recursive: true });

const browser = await launch();
const context = await browser.newContext({ viewport: { width: 1400, height: 1000 } });
const page = await context.newPage();
const errors = [];
page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
page.on('pageerror', (e) => errors.push(String(e)));

const $ = (id) => page.locator(`[data-testid="${id}"]`);
const attr = (sel, name) => page.locator(sel).first().getAttribute(name);
const clock = async () => parseFloat((await $('clock').textContent()).replace('s', ''));

const runaway = `# Runaway: every reconcile asks for another one a millisecond later
kind Pod cache fixed 3
kind Other cache fixed 3
controller c for Pod mirror Other
  requeue-after 1ms
  reconcile 1ms
  workers 64
every 1ms 200 times create Pod p{i}
run 24h
`;

const pickGallery = (fragment) => pickGalleryIn(page, fragment);

const ok = await runTests(([

  ['the page loads with no console errors and shows the app', async () => {
    await gotoReady(page, base);
    await page.evaluate(() => localStorage.clear());
    await reloadReady(page);
    await $('editor').waitFor();
    await page.waitForSelector('[data-testid="watch-cache"]');
    assert(await page.locator('h1').textContent() === 'listwatch', 'the title');
    for (const id of ['gallery', 'play', 'step-back', 'step-forward', 'scrubber', 'speed', 'clock', 'expectations', 'explanation', 'timeline', 'diagnostics']) {
      assert(await $(id).count() >= 1, `data-testid=${id} present`);
    }
    await page.screenshot({ path: shots + '01-loaded.png' });
    assert(errors.length === 0, `no console errors, got: ${errors.join(' | ')}`);
  }],
  ['the script shows highlighted before the editor loads, and the editor loads on first focus', async () => {
    assert(await page.$eval('[data-testid="editor"]', (el) => !el.cmView), 'CodeMirror is not loaded with the page');
    assert(await page.locator('[data-testid="editor"] .pv .tok-keyword').count() > 0, 'the preview is highlighted');
    await page.focus('[data-testid="editor"] .pv');
    await page.waitForFunction(() => !!document.querySelector('[data-testid="editor"]').cmView);
    assert(await page.locator('[data-testid="editor"] .cm-content').count() === 1, 'CodeMirror took over');
    assert(await page.locator('[data-testid="editor"] .pv').count() === 0, 'the preview is gone');
  }],
  ["the editor completes the language's words and the script's own names", async () => {
    await ensureEditor(page);
    const before = await editorText(page);
    await setEditor(page, 'kind Database\ncontroller op for Database\n');
    await page.focus('[data-testid="editor"] .cm-content');
    await page.keyboard.press('Control+End');
    await page.keyboard.type('at 1s ho');
    const box = page.locator('.cm-tooltip-autocomplete');
    await box.waitFor({ timeout: 5000 });
    assert((await box.textContent()).includes('hold'), await box.textContent());
    await page.keyboard.press('Escape');
    await page.keyboard.type('ld op Da');
    await box.waitFor({ timeout: 5000 });
    assert((await box.textContent()).includes('Database'), 'a kind the script declares');
    await page.keyboard.press('Escape');
    await setEditor(page, before);
  }],
  ['picking the overflow scenario shows its caches and watchers', async () => {
    await pickGallery('overflow');
    await page.waitForSelector('[data-testid="watch-cache"][data-kind="Pod"][data-capacity="3"]');
    const n = await $('watcher').count();
    assert(n === 2, `two watchers, got ${n}`);
    assert((await $('expectations').textContent()).includes('pass'), 'expectations shown');
  }],
  ['playing to the 410 flashes it and explains it', async () => {
    await page.click('[data-testid="next-410"]');
    const w = '[data-testid="watcher"][data-controller="ctl"][data-kind="Pod"]';
    await page.waitForSelector(`${w}.gone`);
    const text = await $('explanation').textContent();
    assert(text.includes('too old resource version: 10 (12)'), `explanation names the 410: ${text}`);
    assert(text.includes('oldest RV is 13: 4 events evicted since rv 10'), 'explanation says why');
    assert(await attr(w, 'data-last-rv') === '10', 'the watcher last saw rv 10');
    const cache = '[data-testid="watch-cache"][data-kind="Pod"]';
    assert(await attr(cache, 'data-oldest-rv') === '13', 'the cache now starts at rv 13');
    assert(await attr(cache, 'data-size') === '3', 'the cache is full');
    await page.screenshot({ path: shots + '02-gone.png' });
  }],
  ['stepping back goes before the 410', async () => {
    const t0 = await clock();
    for (let i = 0; i < 12; i++) await page.click('[data-testid="step-back"]');
    const w = '[data-testid="watcher"][data-controller="ctl"][data-kind="Pod"]';
    assert(await page.locator(`${w}.gone`).count() === 0, 'no 410 flash before the 410');
    assert(await clock() <= t0, 'the clock went back');
    await page.screenshot({ path: shots + '03-before.png' });
  }],
  ['the relist after the 410 leads to one reconcile per changed key', async () => {
    await page.click('[data-testid="next-410"]');
    await page.click('button[aria-label="Next relist"]');
    const text = await $('explanation').textContent();
    assert(text.includes('list resourceVersion="10"'), `relist at 10: ${text}`);
    await page.locator('[data-testid="scrubber"]').evaluate((el) => {
      el.value = el.max; el.dispatchEvent(new Event('input', { bubbles: true }));
    });
    const q = await page.locator('[data-testid="queue"]').first().textContent();
    assert(q.includes('5 reconciles'), `five reconciles in all: ${q}`);
  }],
  ['a typo typed in the editor is underlined at its line and fixing it re-runs', async () => {
    await ensureEditor(page);
    const src = await editorText(page);
    const line = src.split('\n').findIndex((l) => l.includes('controller ctl for Pod')) + 1;
    // Type it: put the caret after "for P", delete "od", type "do".
    await page.$eval('[data-testid="editor"]', (el, at) => { el.cmView.focus(); el.cmView.dispatch({ selection: { anchor: at } }); },
      src.indexOf('controller ctl for Pod') + 'controller ctl for P'.length);
    await page.keyboard.press('Delete');
    await page.keyboard.press('Delete');
    await page.keyboard.type('do');
    assert((await editorText(page)).includes('controller ctl for Pdo children'), 'typed through the editor');
    const d = page.locator(`[data-testid="diagnostics"] li[data-line="${line}"]`);
    await d.waitFor();
    const msg = await d.textContent();
    assert(msg.includes('unknown kind `Pdo`') && msg.includes('did you mean `Pod`'), msg);
    assert(await page.locator('[data-testid="diagnostics"] li').count() === 1, 'one mistake, one diagnostic');
    const under = page.locator('[data-testid="editor"] .cm-line').nth(line - 1).locator('.cm-lintRange-error');
    await under.waitFor();
    assert(await under.textContent() === 'Pdo', 'the word itself is underlined');
    await under.hover();
    const tip = page.locator('.cm-tooltip-lint');
    await tip.waitFor();
    assert((await tip.textContent()).includes('unknown kind `Pdo`'), 'the message shows on hover');
    assert(await page.locator('.stale').count() === 1, 'the last good run stays, marked stale');
    await page.screenshot({ path: shots + '04-error.png' });
    await setEditor(page, src.replace('at 2050ms create Pod c', 'at 2050ms create Pod c\nat 2050ms create Pod d'));
    await page.waitForSelector('[data-testid="diagnostics"] li', { state: 'detached' });
    assert(await page.locator('[data-testid="editor"] .cm-lintRange-error').count() === 0, 'the underline is gone');
    assert(await page.locator('.stale').count() === 0, 'fresh run');
    assert((await $('expectations').textContent()).includes('FAIL'), 'an extra write evicts one more event: `evictions Pod == 4` fails');
  }],
  ['play, then Space pauses; keys do nothing while typing', async () => {
    await pickGallery('overflow');
    await page.locator('[data-testid="scrubber"]').evaluate((el) => { el.value = 0; el.dispatchEvent(new Event('input', { bubbles: true })); });
    await page.click('[data-testid="play"]');
    const count = async () => parseInt((await page.locator('.count').textContent()).split(' ')[1]);
    await page.waitForTimeout(600);
    assert(await count() > 3, 'the moment moves');
    await page.locator('.title').click();
    await page.keyboard.press('Space');
    await $('play').waitFor();
    const t = await count();
    await page.waitForTimeout(300);
    assert(await count() === t, 'paused');
    await ensureEditor(page);
    await page.$eval('[data-testid="editor"]', (el) => el.cmView.focus());
    await page.keyboard.press('ArrowRight');
    await page.keyboard.press('Space');
    assert(await count() === t, 'arrow keys and Space in the editor do not step or play');
    await setEditor(page, (await editorText(page)).replace(/\n $/, '\n'));
    await page.locator('.title').click();
    await page.keyboard.press('ArrowRight');
    assert(await count() === t + 1, 'outside the editor, the right arrow steps');
  }],
  ['the explorer finds the stale-deletion bug in a worker and opens the counterexample', async () => {
    await pickGallery('19-explore-stale-delete');
    await page.click('[data-testid="explore"]');
    // The page stays responsive while the worker searches.
    await page.click('[data-testid="step-forward"]');
    await page.locator('[data-testid="explore-found"]').waitFor({ timeout: 60000 });
    const stats = await $('explore-stats').textContent();
    assert(/\d+ of \d+ schedules/.test(stats), stats);
    assert((await $('explore-found').textContent()).includes('stale state'), 'names the stale-state fault');
    await page.screenshot({ path: shots + '07-explore.png' });
    await page.click('[data-testid="explore-open"]');
    const src = await editorText(page);
    assert(/at [\d.]+m?s pause b/.test(src) && /restart operator on b/.test(src), 'the counterexample is in the editor');
    assert((await $('expectations').textContent()).includes('FAIL'), 'and it fails when it plays');
  }],
  ['the fixed twin survives the same search', async () => {
    await pickGallery('20-explore-stale-delete-fixed');
    await page.click('[data-testid="explore"]');
    await page.locator('[data-testid="explore-none"]').waitFor({ timeout: 60000 });
    const stats = await $('explore-stats').textContent();
    // Exhausted: every schedule of the space explored, none failing.
    const m = stats.match(/^(\d+) of (\d+) schedules/);
    assert(m && m[1] === m[2] && stats.includes(' 0 failing'), stats);
  }],
  ['a cancel stops the busy worker; a finished worker serves the next search', async () => {
    // Count the workers the page makes (`new Worker`) and stops (`terminate`) from now on; the
    // searches above left one idle worker.
    await page.evaluate(() => {
      const W = window.Worker, stop = W.prototype.terminate;
      window.__workers = { made: 0, stopped: 0 };
      window.Worker = class extends W { constructor(...a) { super(...a); window.__workers.made += 1; } };
      W.prototype.terminate = function () { window.__workers.stopped += 1; return stop.call(this); };
    });
    const workers = () => page.evaluate(() => JSON.stringify(window.__workers));
    await pickGallery('04-bookmarks');
    const budget = page.locator('input[aria-label="Schedules to try at most"]');
    const before = await budget.inputValue();
    await budget.fill('100000');
    // Every failure, not the first: a search of some seconds.
    await page.check('[data-testid="explore-all"]');
    await page.click('[data-testid="explore"]');
    const cancel = await page.waitForSelector('[data-testid="explore-cancel"]');
    const first = (await $('explore-stats').textContent()).match(/^(\d+)/)[1];
    await page.waitForFunction((n) => !document.querySelector('[data-testid="explore-stats"]').textContent.startsWith(n + ' '), first);
    assert(await cancel.evaluate((b) => b.isConnected), 'progress updates the panel without replacing its Cancel button');
    await cancel.click();
    await page.locator('[data-testid="explore"]').waitFor({ timeout: 5000 });
    assert(await workers() === '{"made":0,"stopped":1}', `the idle worker ran it, and the cancel stopped it: ${await workers()}`);
    await page.uncheck('[data-testid="explore-all"]');
    await budget.fill(before);
    await pickGallery('20-explore-stale-delete-fixed');
    await page.click('[data-testid="explore"]');
    await page.locator('[data-testid="explore-none"]').waitFor({ timeout: 60000 });
    await pickGallery('19-explore-stale-delete');
    await page.click('[data-testid="explore"]');
    await page.locator('[data-testid="explore-found"]').waitFor({ timeout: 60000 });
    assert(await workers() === '{"made":1,"stopped":1}', `one new worker served both searches: ${await workers()}`);
  }],
  ['with "all failures" the explorer lists every breaking schedule', async () => {
    await pickGallery('23-explore-missed-state');
    await page.check('[data-testid="explore-all"]');
    await page.click('[data-testid="explore"]');
    // Failures are listed as they are found: wait for the end of the search.
    await page.waitForFunction(() => !document.querySelector('[data-testid="explore-cancel"]')
      && document.querySelector('[data-testid="explore-found"]'), null, { timeout: 60000 });
    const items = await page.locator('[data-testid="explore-found"] li').allTextContents();
    assert(items.length >= 2, `several failures: ${items.join(' | ')}`);
    assert(items.some((t) => t.includes('unobserved state')) && items.some((t) => t.includes('notifications from')), items.join(' | '));
    await page.uncheck('[data-testid="explore-all"]');
  }],
  ['the text survives a reload', async () => {
    const src = (await editorText(page)) + '\n# autosaved';
    await setEditor(page, src);
    await page.waitForTimeout(100);
    await reloadReady(page);
    await $('editor').waitFor();
    { const v = await editorText(page); assert(v.endsWith('# autosaved'), 'autosave: ' + JSON.stringify(v.slice(-40)) + ' ' + page.url().slice(0, 60)); }
    assert(errors.length === 0, `no console errors, got: ${errors.join(' | ')}`);
  }],
  ['themes switch and stick; reduced motion keeps messages still', async () => {
    await page.selectOption('select[aria-label="Theme"]', 'dark');
    await until(page, () => document.documentElement.dataset.theme === 'dark', null, 'dark theme applied');
    const bg = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
    assert(bg === 'rgb(20, 23, 28)', `dark background, got ${bg}`);
    // Read the theme only once the app says it is ready: before that, the page is not ours yet.
    await reloadReady(page);
    assert(await page.evaluate(() => document.documentElement.dataset.theme) === 'dark', 'the choice survives a reload');
    assert(await page.locator('select[aria-label="Theme"]').inputValue() === 'dark', 'the menu shows it');
    await page.selectOption('select[aria-label="Theme"]', 'system');
    await until(page, () => document.documentElement.dataset.theme === undefined, null, 'system follows the OS');
    await page.emulateMedia({ reducedMotion: 'reduce' });
    await pickGallery('overflow');
    await page.waitForSelector('[data-testid="watch-cache"][data-kind="Pod"][data-capacity="3"]');
    await page.click('[data-testid="next-410"]');
    const gone = page.locator('.msg.msg-error');
    await gone.waitFor();
    assert(await gone.count() === 1, 'the 410 is drawn on its link');
    const moving = () => gone.evaluate((m) => m.getAnimations().length);
    assert(await moving() === 0, 'without motion');
    await page.emulateMedia({ reducedMotion: 'no-preference' });
    await page.click('[data-testid="step-back"]');
    await page.click('[data-testid="step-forward"]');
    assert(await moving() === 1, 'with motion otherwise');
  }],
  ['before the editor loads, a mistake is already underlined with its message', async () => {
    await page.evaluate(() => localStorage.setItem('listwatch.script', 'kind Pod\ncontroller c for Pdo mirror Pod\n'));
    await page.goto('about:blank');
    await gotoReady(page, base);
    const bad = page.locator('[data-testid="editor"] .pv .lint-error');
    await bad.waitFor();
    assert(await bad.textContent() === 'Pdo', 'the word is underlined');
    assert((await bad.getAttribute('title')).includes('unknown kind `Pdo`'), 'the message on hover');
    assert(await page.locator('[data-testid="editor"] .pv-bad .pv-num').textContent() === '2', 'the line is marked');
  }],
  ['a run stopped at the event cap says so, and ESR is not judged', async () => {
    await pickGallery('overflow');
    await page.waitForSelector('[data-testid="watch-cache"][data-kind="Pod"][data-capacity="3"]');
    assert(await $('event-cap').count() === 0, 'no notice on a run that reached its end');
    assert((await $('esr').textContent()).startsWith('ESR: holds'), 'ESR judged on a whole run');
    // A runaway: every reconcile asks for another a millisecond later, for a day of virtual time.
    await setEditor(page, runaway);
    // Computed a slice at a time: the progress shows and the page answers meanwhile (a frozen
    // tab would hold the main thread for the whole 5,000,000 events).
    await $('computing').waitFor({ timeout: 20000 });
    for (let i = 0; i < 3; i++) {
      const t0 = Date.now();
      await page.evaluate(() => document.title);
      assert(Date.now() - t0 < 2000, `the page answered in ${Date.now() - t0} ms while computing`);
    }
    await $('event-cap').waitFor({ timeout: 120000 });
    assert(await $('computing').count() === 0, 'the progress is gone once the run is on screen');
    const notice = await $('event-cap').textContent();
    assert(notice.includes('Cut off at the event cap') && notice.includes('5,000,000 events'), notice);
    assert(/at \d+\.\d{3}s of virtual time, before its end at 86400\.000s/.test(notice), notice);
    assert(await $('esr').textContent() === 'ESR: not judged (run cut off)', await $('esr').textContent());
    assert((await page.locator('.count').textContent()).includes('cut off'), 'the event counter says so too');
    await shootBoth(page, shots + '08-event-cap.png');
    await pickGallery('overflow');
    await page.waitForSelector('[data-testid="event-cap"]', { state: 'detached' });
    assert(errors.length === 0, `no console errors, got: ${errors.join(' | ')}`);
  }],
]).filter(([name]) => name.includes(only)));

await browser.close();
// The share-link, embed and CSP suite runs after this one (`cargo xtask test` runs this file).
console.log('e2e: share links, embeds, CSP (e2e/share.mjs)');
const share = spawnSync(process.execPath, [new URL('./share.mjs', import.meta.url).pathname, base, only], { stdio: 'inherit' });
console.log('e2e: objects, layouts, accessibility, faults by hand, history, tour (e2e/page.mjs)');
const pages = spawnSync(process.execPath, [new URL('./page.mjs', import.meta.url).pathname, base, only], { stdio: 'inherit' });
console.log('e2e: the picture in motion, layouts, first ten seconds, sequence view (e2e/motion.mjs)');
const motion = spawnSync(process.execPath, [new URL('./motion.mjs', import.meta.url).pathname, base, only], { stdio: 'inherit' });
console.log('e2e: paste your logs, the Incidents, compare versions, cancelling a long run, embed at= (e2e/incidents.mjs)');
const incidents = spawnSync(process.execPath, [new URL('./incidents.mjs', import.meta.url).pathname, base, only], { stdio: 'inherit' });
process.exit(ok && share.status === 0 && pages.status === 0 && motion.status === 0 && incidents.status === 0 ? 0 : 1);
