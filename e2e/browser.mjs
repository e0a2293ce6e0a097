// Launches Debian's Chromium through playwright-core with the flags this closed network needs.
import { chromium } from 'playwright-core';

export async function launch() {
  return chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
}

/// Runs named async tests in order; prints one line each and the closing count.
export async function runTests(tests) {
  let passed = 0, failed = 0;
  for (const [name, fn] of tests) {
    const t = Date.now();
    try {
      await fn();
      passed++;
      console.log(`ok   ${name} (${Date.now() - t} ms)`);
    } catch (e) {
      failed++;
      console.log(`FAIL ${name}\n     ${String(e && e.stack || e).split('\n').slice(0, 4).join('\n     ')}`);
    }
  }
  console.log(`e2e: ${passed} passed, ${failed} failed`);
  return failed === 0;
}

export function assert(cond, msg) {
  if (!cond) throw new Error(`assertion failed: ${msg}`);
}

/// Loads the editor (CodeMirror loads on the first click or focus) and waits for it.
export async function ensureEditor(page) {
  if (await page.$eval('[data-testid="editor"]', (el) => !!el.cmView)) return;
  await page.click('[data-testid="editor"] .pv');
  await page.waitForFunction(() => !!document.querySelector('[data-testid="editor"]').cmView);
}

/// The editor's text: CodeMirror's document once loaded, else the highlighted preview's lines.
export function editorText(page) {
  return page.$eval('[data-testid="editor"]', (el) => el.cmView
    ? el.cmView.state.doc.toString()
    : [...el.querySelectorAll('.pv-text')].map((l) => l.textContent).join('\n'));
}

/// Replaces the editor's text as one edit, the way a paste would.
export async function setEditor(page, text) {
  await ensureEditor(page);
  await page.$eval('[data-testid="editor"]', (el, t) => {
    const v = el.cmView;
    v.dispatch({ changes: { from: 0, to: v.state.doc.length, insert: t } });
  }, text);
}

/// Waits for the app's ready signal (`<html data-ready>`: first render on screen, theme applied,
/// listeners in place). Every check after a navigation waits for it first.
export async function ready(page) {
  await page.waitForSelector('html[data-ready]', { state: 'attached', timeout: 30000 });
}

export async function gotoReady(page, url) {
  await page.goto(url);
  await ready(page);
}

export async function reloadReady(page) {
  await page.reload();
  await ready(page);
}

/// Polls `fn` in the page until it returns true; fails with `msg` after `timeout` ms.
export async function until(page, fn, arg, msg, timeout = 10000) {
  try {
    await page.waitForFunction(fn, arg, { timeout });
  } catch {
    throw new Error(`assertion failed (after ${timeout} ms): ${msg}`);
  }
}

/// Screenshots at a phone's width and a desktop's, restoring the viewport.
export async function shootBoth(page, path) {
  const before = page.viewportSize();
  for (const width of [390, 1400]) {
    await page.setViewportSize({ width, height: width === 390 ? 844 : 1000 });
    await page.waitForTimeout(100);
    await page.screenshot({ path: path.replace(/\.png$/, `-${width}.png`) });
  }
  await page.setViewportSize(before);
}

/// Picks the gallery scenario whose file name contains `fragment` and waits until its script,
/// fetched from beside the page, is in.
export async function pickGallery(page, fragment) {
  const value = await page.$eval('[data-testid="gallery"]', (sel, frag) => {
    const o = [...sel.options].find((o) => (o.dataset.file || '').includes(frag));
    return o ? o.value : null;
  }, fragment);
  assert(value !== null, `a gallery scenario named like ${fragment}`);
  const file = await page.$eval(`[data-testid="gallery"] option[value="${value}"]`, (o) => o.dataset.file);
  await page.locator('[data-testid="gallery"]').selectOption(value);
  await page.waitForSelector(`[data-testid="gallery"][data-loaded="${file}"]`);
}

/// Opens the page at `base` if it is elsewhere, then picks a gallery scenario (see `pickGallery`).
export async function pickGalleryAt(page, base, fragment) {
  if (!page.url().startsWith(base)) await gotoReady(page, base);
  await pickGallery(page, fragment);
  await page.waitForTimeout(50);
}

/// Moves the scrubber to `n` events applied, as dragging it there would.
export async function seekTo(page, n) {
  await page.locator('[data-testid="scrubber"]').evaluate((el, n) => {
    el.value = String(n); el.dispatchEvent(new Event('input', { bubbles: true }));
  }, n);
}

/// A suite's set-up: its URL and filter from the command line, the screenshots folder, one
/// browser, context and page (1400x900), the page's console errors as they come, and `$` for
/// a test id.
export async function openSuite() {
  const { mkdirSync } = await import('node:fs');
  const base = process.argv[2] || 'http://127.0.0.1:8080/';
  const only = process.argv[3] || '';
  const shots = new URL('./screenshots/', import.meta.url).pathname;
  mkdirSync(shots, { recursive: true });
  const browser = await launch();
  const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
  const page = await context.newPage();
  const errors = [];
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  page.on('pageerror', (e) => errors.push(String(e)));
  const $ = (id) => page.locator(`[data-testid="${id}"]`);
  return { base, only, shots, browser, context, page, errors, $ };
}
