// The page's panels, layouts and accessibility: the objects panel, every screen size, axe-core,
// faults by hand, history and the tour. Usage: node e2e/page.mjs URL [only-substring]
import { mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { launch, runTests, assert, editorText, setEditor, gotoReady, reloadReady, pickGalleryAt, seekTo } from './browser.mjs';

const base = process.argv[2] || 'http://127.0.0.1:8080/';
const only = process.argv[3] || '';
const shots = new URL('./screenshots/', import.meta.url).pathname;
mkdirSync(shots, { recursive: true });
const require = createRequire(import.meta.url);
const axeSource = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

const browser = await launch();
const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: new URL(base).origin });
const page = await context.newPage();
const errors = [];
page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
page.on('pageerror', (e) => errors.push(String(e)));
const $ = (id) => page.locator(`[data-testid="${id}"]`);

const pickGallery = (fragment) => pickGalleryAt(page, base, fragment);
const seek = (n) => seekTo(page, n);

/// Gallery 19 with 30 more clusters, searched for all failures: a search of some seconds that finds
/// tens of them (the same stale-state fault at other times) from its first second on.
async function searchManyFailures() {
  await gotoReady(page, base);
  await pickGallery('19-explore-stale-delete');
  await setEditor(page, (await editorText(page)).replace('run 2m', 'every 1s 30 times from 20s create RabbitmqCluster x{i}\nrun 2m'));
  await page.locator('input[aria-label="Schedules to try at most"]').fill('100000');
  await $('explore-all').check();
  await $('explore').click();
}

async function openObjects() {
  if (await $('objects').count() === 0) await $('objects-toggle').click();
  await settled();
}

/// The objects are folded in a worker: wait for its answer for the moment on screen.
async function settled() {
  await page.waitForSelector('[data-testid="objects"][data-settled="true"]', { timeout: 20000 });
}

const copy = (kind, name, holder) =>
  page.locator(`[data-testid="object"][data-kind="${kind}"][data-name="${name}"] [data-testid="object-copy"][data-holder="${holder}"]`);

/// A new page that counts the workers it starts (`window.workersStarted`).
async function pageCountingWorkers() {
  const p = await context.newPage();
  await p.addInitScript(() => {
    const W = window.Worker;
    window.workersStarted = 0;
    window.Worker = class extends W { constructor(...a) { super(...a); window.workersStarted += 1; } };
  });
  return p;
}

/// Runs axe-core in the page; fails on serious or critical violations.
async function axe(label) {
  if (!(await page.evaluate(() => !!window.axe))) await page.evaluate(axeSource);
  const res = await page.evaluate(async () => {
    const r = await window.axe.run(document, { resultTypes: ['violations'] });
    return r.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical')
      .map((v) => `${v.id} (${v.impact}): ${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(', ')}`);
  });
  assert(res.length === 0, `axe at ${label}: ${res.join(' | ')}`);
}

/// axe-core's every violation, whatever its impact (the landmark and heading rules are
/// "moderate"), as text.
async function axeEvery() {
  if (!(await page.evaluate(() => !!window.axe))) await page.evaluate(axeSource);
  return page.evaluate(async () => (await window.axe.run(document, { resultTypes: ['violations'] })).violations
    .map((v) => `${v.id} (${v.impact}): ${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(', ')}`));
}

const SIZES = [[390, 844], [768, 1024], [1400, 900]];

/// Pairs of SVG text labels of the picture whose boxes overlap, and what sticks out of the page.
function layoutProblems() {
  const texts = [...document.querySelectorAll('svg.system text')]
    .filter((t) => t.textContent.trim() !== '')
    .map((t) => ({ t: t.textContent.trim(), r: t.getBoundingClientRect() }))
    .filter(({ r }) => r.width > 0 && r.height > 0);
  const out = [];
  const slack = 0.5;
  for (let i = 0; i < texts.length; i++) {
    for (let j = i + 1; j < texts.length; j++) {
      const a = texts[i].r, b = texts[j].r;
      const w = Math.min(a.right, b.right) - Math.max(a.left, b.left);
      const h = Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top);
      if (w > slack && h > slack) out.push(`"${texts[i].t}" overlaps "${texts[j].t}"`);
    }
  }
  const doc = document.documentElement;
  if (doc.scrollWidth > doc.clientWidth) out.push(`the page scrolls sideways: ${doc.scrollWidth} > ${doc.clientWidth}`);
  return out;
}

/// The smallest rendered size, in CSS pixels, of the picture's visible text.
function minPictureFont() {
  const svg = document.querySelector('svg.system');
  const scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
  let min = Infinity;
  for (const t of svg.querySelectorAll('text')) {
    const r = t.getBoundingClientRect();
    if (t.textContent.trim() === '' || r.width === 0 || r.height === 0) continue;
    min = Math.min(min, parseFloat(getComputedStyle(t).fontSize) * scale);
  }
  return min;
}

/// WCAG contrast ratio of two computed colours (`rgb(r, g, b)`).
function contrast(a, b) {
  const lum = (c) => {
    const [r, g, bl] = c.match(/[\d.]+/g).slice(0, 3).map((v) => {
      const s = Number(v) / 255;
      return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
    });
    return 0.2126 * r + 0.7152 * g + 0.0722 * bl;
  };
  const [x, y] = [lum(a), lum(b)].sort((p, q) => q - p);
  return (x + 0.05) / (y + 0.05);
}

/// The messages drawn on each watcher's link (the picture draws link `i`'s messages in its `i`-th
/// messages group, over everything else): where each is along its link (0 at the watcher, 1 at
/// its cache) and how far off it, its classes, and its running motion, in the picture's units.
/// With `[link, ms]`: where link's message is drawn on screen (its motion included) when its
/// motion is at `ms`, as a fraction of its link from the watcher (0) to the cache (1).
function linkMessages(at) {
  // Where (x, y) is along a path (its points from the cache to the watcher), and how far off.
  const locate = (pts, x, y) => {
    let total = 0, best = { off: Infinity, s: 0 };
    for (let i = 1; i < pts.length; i++) {
      const [a, b] = [pts[i - 1], pts[i]];
      const len = Math.hypot(b.x - a.x, b.y - a.y);
      const t = len ? Math.max(0, Math.min(1, ((x - a.x) * (b.x - a.x) + (y - a.y) * (b.y - a.y)) / (len * len))) : 0;
      const off = Math.hypot(a.x + (b.x - a.x) * t - x, a.y + (b.y - a.y) * t - y);
      if (off < best.off) best = { off, s: total + t * len };
      total += len;
    }
    return { along: 1 - best.s / total, off: best.off };
  };
  const path = (i) => {
    const l = document.querySelectorAll('[data-testid="link"]')[i].querySelector(':is(line, polyline):not(.hit)');
    return l.tagName === 'line'
      ? [{ x: l.x1.baseVal.value, y: l.y1.baseVal.value }, { x: l.x2.baseVal.value, y: l.y2.baseVal.value }]
      : [...l.points].map((p) => ({ x: p.x, y: p.y }));
  };
  const groups = document.querySelectorAll('svg.system [data-testid="messages"]');
  if (at) {
    const [link, ms] = at;
    const c = groups[link].querySelector('[data-testid="message"]');
    const [a] = c.getAnimations();
    a.pause();
    a.currentTime = ms;
    const m = document.querySelector('svg.system').getScreenCTM();
    const r = c.getBoundingClientRect();
    return locate(path(link).map(({ x, y }) => new DOMPoint(x, y).matrixTransform(m)), r.left + r.width / 2, r.top + r.height / 2).along;
  }
  return [...document.querySelectorAll('[data-testid="link"]')].flatMap((g, i) => {
    const pts = path(i);
    return [...groups[i].querySelectorAll('[data-testid="message"]')].map((c) => {
      const [cx, cy] = [Number(c.getAttribute('cx')), Number(c.getAttribute('cy'))];
      const { along, off } = locate(pts, cx, cy);
      const r = c.getBoundingClientRect();
      const seen = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2) === c;
      return { link: i, cls: c.getAttribute('class'), cx, cy, along, off, seen, moving: c.getAnimations().length };
    });
  });
}

/// The scrubber's moment (events applied).
const cursor = async () => Number(await $('scrubber').inputValue());

/// Seeks to the first moment whose clock reads `t` (events applied, one by one).
async function seekClock(t) {
  const max = Number(await $('scrubber').getAttribute('max'));
  for (let n = 1; n <= max; n++) {
    await seek(n);
    if (await $('clock').textContent() === t) return n;
  }
  throw new Error(`no moment at ${t}`);
}

const tests = [
  ['motion (issue 27, 1): at 2.050 s of gallery 02 the re-watches are half way to the server; a message moves along its link as the moment changes', async () => {
    await gotoReady(page, base);
    await pickGallery('02-overflow');
    await seekClock('2.050s');
    const at = await page.evaluate(linkMessages);
    assert(at.length === 2, `one re-watch on each watcher's link: ${JSON.stringify(at)}`);
    for (const m of at) {
      assert(Math.abs(m.along - 0.5) < 0.02 && m.off < 0.5, `half way along its link: ${JSON.stringify(m)}`);
      assert(m.cls.includes('msg-request'), `a request: ${m.cls}`);
      assert(m.seen, `drawn over what its link passes under: ${JSON.stringify(m)}`);
    }
    // Later at the same millisecond: where they were, still.
    await seek(await cursor() + 3);
    const where = (ms) => JSON.stringify(ms.map(({ cx, cy }) => [cx, cy]));
    const later = await page.evaluate(linkMessages);
    assert(where(later) === where(at) && later.every((m) => m.moving === 0), `still half way: ${JSON.stringify(later)}`);
    // A message of a link without delay (the Pod watch opens at 1 s) crosses its whole link:
    // from the cache to the watcher as the moment changes, not frozen at its end.
    await seek(44);
    const open = await page.evaluate(linkMessages);
    assert(open.length === 1 && open[0].moving === 1, `one message, moving: ${JSON.stringify(open)}`);
    const start = await page.evaluate(linkMessages, [open[0].link, 0]);
    const end = await page.evaluate(linkMessages, [open[0].link, 349]);
    assert(start > 0.95 && end < 0.05, `from the cache (${start.toFixed(2)}) to the watcher (${end.toFixed(2)})`);
    // The 410 left the server at 2.1 s: stepping from 2.050 s to 2.200 s it crosses the link.
    await seekClock('2.200s');
    const gone = (await page.evaluate(linkMessages)).filter((m) => m.cls.includes('msg-error'));
    assert(gone.length === 1 && gone[0].moving === 1 && Math.abs(gone[0].along) < 0.02, `the 410 arrives: ${JSON.stringify(gone)}`);
    for (const [w, h] of SIZES) {
      await page.setViewportSize({ width: w, height: h });
      await seekClock('2.050s');
      await $('link').first().scrollIntoViewIfNeeded();
      await page.screenshot({ path: `${shots}27-in-flight-2050ms-${w}.png` });
    }
    await page.setViewportSize({ width: 1400, height: 900 });
    // Less motion asked for: drawn where they are, no motion.
    await page.emulateMedia({ reducedMotion: 'reduce' });
    await seek(44);
    const still = await page.evaluate(linkMessages);
    assert(still.length === 1 && still[0].moving === 0 && Math.abs(still[0].along) < 0.02, `at the watcher, still: ${JSON.stringify(still)}`);
    await page.emulateMedia({ reducedMotion: null });
  }],
  ['export (issue 27, 2): the SVG and the PNG carry a message in flight on its link', async () => {
    await pickGallery('02-overflow');
    await seekClock('2.050s');
    const drawn = await page.evaluate(linkMessages);
    const save = async (id) => {
      const [dl] = await Promise.all([page.waitForEvent('download'), $(id).click()]);
      return readFileSync(await dl.path());
    };
    const svg = (await save('export-svg')).toString();
    const dots = [...svg.matchAll(/<circle[^>]*data-testid="message"[^>]*>/g)].map((m) => m[0]);
    assert(dots.length === 2, `two messages in the SVG: ${dots.length}`);
    for (const [i, d] of dots.entries()) {
      const num = (a) => Number(d.match(new RegExp(` ${a}="([-\\d.]+)"`))[1]);
      assert(num('cx') === drawn[i].cx && num('cy') === drawn[i].cy, `on its link: ${d}`);
    }
    assert(svg.includes('.fly { animation: none; }'), 'no motion in the file');
    // The PNG, at twice the size: the message's colour where it is drawn, none at the corner.
    const png = (await save('export-png')).toString('base64');
    const colours = await page.evaluate(async ([src, points]) => {
      const img = new Image();
      img.src = `data:image/png;base64,${src}`;
      await img.decode();
      const c = document.createElement('canvas');
      [c.width, c.height] = [img.width, img.height];
      const ctx = c.getContext('2d');
      ctx.drawImage(img, 0, 0);
      const want = getComputedStyle(document.querySelector('[data-testid="message"]')).fill;
      return { want, at: points.map(([x, y]) => [...ctx.getImageData(x * 2, y * 2, 1, 1).data].slice(0, 3).join(',')) };
    }, [png, [[drawn[0].cx, drawn[0].cy], [2, 2]]]);
    const want = colours.want.match(/\d+/g).slice(0, 3).join(',');
    assert(colours.at[0] === want, `the message's colour ${want} at its place in the PNG: ${colours.at[0]}`);
    assert(colours.at[1] !== want, 'not at the corner');
  }],
  ['scenarios (issue 27, 3): the gallery and the tour open a scenario at its start', async () => {
    await gotoReady(page, base);
    await pickGallery('11-stale');
    await seek(42);
    await pickGallery('30-own-logic-stale-delete-by-name');
    assert(await cursor() === 0, `30 opens at its start: ${await cursor()}`);
    assert(await $('play').count() === 1, 'paused');
    await seek(30);
    await page.evaluate(() => localStorage.removeItem('listwatch.tour'));
    await reloadReady(page);
    await seek(30);
    await $('tour-next').click();
    await page.waitForSelector('[data-testid="tour"][data-loaded^="39-"]');
    await page.waitForFunction(() => document.querySelector('[data-testid="scrubber"]').value === '0');
    await $('play').click();
    await $('narration-continue').waitFor({ timeout: 20000 });
    assert((await page.locator('.say').textContent()).startsWith('1/5'), 'the tour stops at its first remark');
    await seek(Number(await $('scrubber').getAttribute('max')));
    await $('tour-next').click();
    await page.waitForSelector('[data-testid="tour"][data-loaded^="01-"]');
    await page.waitForFunction(() => document.querySelector('[data-testid="scrubber"]').value === '0');
  }],
  ['speed (issue 27, 4): every part of the slider changes the speed, its slow end is slow motion', async () => {
    await pickGallery('11-stale');
    const said = [];
    for (const v of ['-1', '-0.5', '0', '1', '2', '4']) {
      await $('speed').evaluate((el, v) => { el.value = v; el.dispatchEvent(new Event('input', { bubbles: true })); }, v);
      said.push(await $('speed-value').textContent());
    }
    assert(new Set(said).size === said.length, `each position its own speed: ${said.join(' ')}`);
    assert(said[0] === '0.1×' && said[2] === '1×' && said[5] === '10000×', said.join(' '));
    await $('speed').evaluate((el) => { el.value = '-1'; el.dispatchEvent(new Event('input', { bubbles: true })); });
    await seek(0);
    await $('play').click();
    await page.waitForTimeout(2000);
    await $('pause').click();
    const t = parseFloat((await $('clock').textContent()).replace('s', ''));
    assert(t <= 0.25, `0.1x: at most 0.2 s of virtual time in 2 s: ${t}`);
  }],
  ['evicted (issue 27, 5): the red mark names the evicted RV, not the oldest survivor', async () => {
    await pickGallery('02-overflow');
    await seek(62);
    const pod = page.locator('[data-testid="watch-cache"][data-kind="Pod"]');
    assert(await pod.getAttribute('data-oldest-rv') === '7', 'rv 7 survives as the oldest');
    assert(await pod.locator('[data-testid="evicted"]').getAttribute('data-rv') === '5', 'rv 5 was evicted');
    assert((await pod.locator('[data-testid="evicted"]').textContent()).includes('5'), 'said in text');
    assert(await pod.locator('.slot.evicting').count() === 1, 'one red mark');
    await seek(64);
    assert(await pod.locator('[data-testid="evicted"]').getAttribute('data-rv') === '7', 'then rv 7');
    await seek(65);
    assert(await pod.locator('[data-testid="evicted"]').count() === 0, 'only at the eviction');
    await seek(62);
    for (const [w, h] of SIZES) {
      await page.setViewportSize({ width: w, height: h });
      await pod.scrollIntoViewIfNeeded();
      await page.screenshot({ path: `${shots}27-evicted-${w}.png` });
    }
    await page.setViewportSize({ width: 1400, height: 900 });
  }],
  ['timeline (issue 27, 6): a run with thousands of markers is marked to its end', async () => {
    await setEditor(page, 'kind Pod\nkind Copy\ncontroller c for Pod mirror Copy\nevery 10ms 3000 times create Pod p{i}\nrun 40s\n');
    await page.waitForFunction(() => Number(document.querySelector('[data-testid="scrubber"]').max) > 10000, null, { timeout: 30000 });
    const xs = await page.$$eval('svg.timeline .mark', (ms) => ms.map((m) => Number(m.getAttribute('x'))));
    const last = Math.max(...xs);
    // The plot runs from 150 to 890; the creates end at 30 s of 40 s: at 705.
    assert(last > 680, `markers until the creates end: the last at x=${last}`);
    await $('timeline-zoom-in').click();
    await $('timeline-zoom-in').click();
    await seek(Number(await $('scrubber').getAttribute('max')) * 0.6 | 0);
    const zoomed = await page.$$eval('svg.timeline .mark', (ms) => ms.map((m) => Number(m.getAttribute('x'))));
    assert(zoomed.some((x) => x > 700) && zoomed.some((x) => x < 300), `across the zoomed window: ${Math.min(...zoomed)}..${Math.max(...zoomed)}`);
    await $('timeline-zoom-all').click();
  }],
  ['explore (issue 27, 7): another scenario stops the search and clears its results', async () => {
    await searchManyFailures();
    await page.waitForFunction(() => document.querySelectorAll('[data-testid="explore-found"] li').length >= 1, null, { timeout: 30000 });
    await pickGallery('20-explore-stale-delete-fixed');
    await $('explore').waitFor({ timeout: 5000 });
    for (const id of ['explore-cancel', 'explore-found', 'explore-stats', 'explore-cancelled', 'explore-progress']) {
      assert(await $(id).count() === 0, `nothing of the search left behind: ${id}`);
    }
    await page.waitForTimeout(800);
    assert(await $('explore-stats').count() === 0, 'its worker says nothing more');
    await $('explore-all').uncheck();
    await page.locator('input[aria-label="Schedules to try at most"]').fill('2000');
  }],
  ['keyboard (issue 27, 8 and 12): Space presses a focused button; Escape closes the help; + twice keeps the focus in the timeline', async () => {
    await pickGallery('02-overflow');
    await seek(10);
    await $('step-forward').focus();
    await page.keyboard.press(' ');
    assert(await cursor() === 11, `Space pressed "step": ${await cursor()}`);
    assert(await $('play').count() === 1, 'and did not start playback');
    await $('step-back').focus();
    await page.keyboard.press(' ');
    assert(await cursor() === 10, 'Space pressed "step back"');
    await page.locator('h1').click();
    await page.keyboard.press('?');
    await page.locator('.help').waitFor();
    await page.keyboard.press('Escape');
    assert(await page.locator('.help').count() === 0, 'Escape closes the help');
    const span = async () => {
      const el = $('timeline-span');
      return Number(await el.getAttribute('data-to-ms')) - Number(await el.getAttribute('data-from-ms'));
    };
    const whole = await span();
    await page.locator('svg.timeline .mark[tabindex="0"]').focus();
    for (let k = 1; k <= 3; k++) {
      await page.keyboard.press('+');
      const w = await span();
      assert(Math.abs(w - whole / 2 ** k) <= 2, `+ number ${k} zooms in: ${w} of ${whole}`);
      assert(await page.evaluate(() => !!document.activeElement?.closest('svg.timeline')), `the focus is in the timeline after + number ${k}`);
      // Once the markers are redrawn it is on one of them again (arrows and Enter work on).
      await page.waitForFunction(() => !!document.activeElement?.classList.contains('mark'), null, { timeout: 2000 });
    }
    await page.keyboard.press('0');
    assert(await span() === whole, '0 shows the whole run');
  }],
  ['diagnostics (issue 27, 9): one typo in a controller\'s kind is one diagnostic', async () => {
    await setEditor(page, 'kind Db\nkind Pvc\ncontroller op for Dbb\n  logic\n    get db = Db key\n    if db absent\n      done\n    create Pvc key-data owner db\nrun 1m\n');
    await page.waitForFunction(() => document.querySelectorAll('[data-testid="diagnostics"] li').length > 0);
    const items = await page.locator('[data-testid="diagnostics"] li').allTextContents();
    assert(items.length === 1 && items[0].includes('unknown kind `Dbb`'), items.join(' | '));
  }],
  ['embed (issue 27, 10): the embed code fits its content; a broken script in an embed shows its diagnostics', async () => {
    await gotoReady(page, base);
    await pickGallery('02-overflow');
    await seek(0);
    await $('next-410').click();
    await $('copy-embed').click();
    const code = await page.evaluate(() => navigator.clipboard.readText());
    const height = Number(code.match(/height="(\d+)"/)[1]);
    assert(code.includes('embed.js'), `the snippet fits the iframe with embed.js: ${code}`);
    const docs = await context.newPage();
    await docs.setViewportSize({ width: 1400, height: 900 });
    await docs.setContent(`<main style="max-width:980px;margin:0 auto"><h1>Docs</h1>${code}</main>`);
    const frame = docs.frameLocator('iframe.listwatch-embed');
    await frame.locator('[data-testid="embed"] [data-testid="watch-cache"]').first().waitFor({ timeout: 20000 });
    const content = await frame.locator('.app').evaluate((a) => Math.ceil(a.getBoundingClientRect().height));
    assert(Math.abs(height - content) / content < 0.2, `the snippet's height ${height} is near the content's ${content}`);
    await docs.waitForFunction((h) => Math.abs(document.querySelector('iframe').getBoundingClientRect().height - h) <= 20, content + 16, { timeout: 10000 });
    const scrolls = await frame.locator('html').evaluate((d) => d.scrollHeight - d.clientHeight);
    assert(scrolls <= 1, `the embed does not scroll inside its frame: ${scrolls}`);
    for (const [w, h] of SIZES) {
      await docs.setViewportSize({ width: w, height: h });
      await docs.waitForTimeout(300);
      await docs.screenshot({ path: `${shots}27-embed-${w}.png`, fullPage: true });
    }
    // A broken script from the documentation page: its errors, not an empty box.
    await docs.setContent(`<pre class="listwatch">kind Pod\nat 1s crate Pod a\nrun 5s\n</pre><script src="${base}embed.js"></script>`);
    const broken = docs.frameLocator('iframe.listwatch-embed');
    await broken.locator('[data-testid="diagnostics"] li').first().waitFor({ timeout: 20000 });
    const said = await broken.locator('[data-testid="diagnostics"] li').allTextContents();
    assert(said.length === 1 && said[0].includes('line 2:7'), said.join(' | '));
    await docs.screenshot({ path: `${shots}27-embed-broken.png`, fullPage: true });
    await docs.close();
  }],
  ['embed: axe-core finds no violation of any impact (landmarks and headings included), at the start and at the 410', async () => {
    await gotoReady(page, base);
    await pickGallery('02-overflow');
    await seek(0);
    await $('copy-link').click();
    const link = await page.evaluate(() => navigator.clipboard.readText());
    await page.goto('about:blank');
    await gotoReady(page, link.replace('#', '?embed#'));
    await $('embed').waitFor();
    assert((await axeEvery()).length === 0, `the embed: ${(await axeEvery()).join(' | ')}`);
    await $('next-410').click();
    assert((await axeEvery()).length === 0, `the embed at the 410: ${(await axeEvery()).join(' | ')}`);
    await page.goto('about:blank');
    await gotoReady(page, base);
  }],
  ['links (issue 27, 11): a link opens at the event it was copied at, not at the end of its millisecond', async () => {
    await pickGallery('02-overflow');
    await seek(69);
    assert(await $('clock').textContent() === '2.200s', 'the 410 at 2.200 s');
    await $('copy-link').click();
    const link = await page.evaluate(() => navigator.clipboard.readText());
    // Someone else's browser: nothing saved there.
    const elsewhere = await browser.newContext({ viewport: { width: 1400, height: 900 } });
    const other = await elsewhere.newPage();
    await gotoReady(other, link);
    await other.locator('[data-testid="scrubber"]').waitFor();
    assert(await other.locator('[data-testid="scrubber"]').inputValue() === '69', `opens at event 69: ${await other.locator('[data-testid="scrubber"]').inputValue()}`);
    assert(await other.locator('[data-testid="clock"]').textContent() === '2.200s', 'at 2.200 s');
    await elsewhere.close();
  }],
  ['lists (issue 27, 13): the numbers of wrapped items in "Why?" and the tour stand at their first line', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    await gotoReady(page, base);
    await pickGallery('02-overflow');
    await seek(0);
    await $('next-410').click();
    if (await $('tour-toggle').getAttribute('aria-expanded') !== 'true') await $('tour-toggle').click();
    const misplaced = await page.evaluate(() => {
      const out = [];
      let wrapped = 0;
      for (const li of document.querySelectorAll('[data-testid="explanation"] li, .tour-steps li')) {
        const button = li.querySelector('button');
        const line = parseFloat(getComputedStyle(button).lineHeight) || 18;
        if (button.getBoundingClientRect().height < 1.5 * line) continue;
        wrapped++;
        // A probe at the start of the item (no wider than nothing, so the button stays on its
        // line) sits on the line that carries the item's number.
        const probe = document.createElement('span');
        probe.textContent = '\u200b';
        li.prepend(probe);
        const dy = probe.getBoundingClientRect().top - button.getBoundingClientRect().top;
        probe.remove();
        if (Math.abs(dy) > line / 2) out.push(`${button.textContent.slice(0, 40)}: ${dy.toFixed(0)} px below`);
      }
      return { wrapped, out };
    });
    assert(misplaced.wrapped >= 2, `wrapped items to look at: ${misplaced.wrapped}`);
    assert(misplaced.out.length === 0, misplaced.out.join(' | '));
    await page.setViewportSize({ width: 1400, height: 900 });
    // A queue with the picture's width to its right says its last write whole.
    await pickGallery('30-own-logic-stale-delete-by-name');
    await seek(Math.round(Number(await $('scrubber').getAttribute('max')) / 2));
    const write = await page.locator('[data-testid="queue"] text.ring-sub', { hasText: 'last write' }).evaluate((t) => t.firstChild.textContent);
    assert(!write.includes('…') && /-> rv \d+ \(spec/.test(write), `the last write, not cut: ${write}`);
  }],

  ['queue lanes (issue 27): a key goes waiting -> running -> done, each lane drawing it; while it runs, new events only mark it dirty', async () => {
    await page.setViewportSize({ width: 1400, height: 900 });
    await pickGallery('09-work-queue-dedup');
    const max = Number(await $('scrubber').getAttribute('max'));
    const lanes = () => page.evaluate(() => {
      const q = document.querySelector('[data-testid="queue"]');
      const list = (a) => (q.getAttribute(a) || '').split(',').filter(Boolean);
      const chips = (sel) => [...q.querySelectorAll(sel)].map((c) => c.textContent);
      return {
        waiting: list('data-keys'), running: list('data-running'), done: list('data-done'),
        runningChips: chips('[data-testid="running-chip"]'), doneChips: chips('[data-testid="done-chip"]'),
        dirty: q.textContent.includes('dirty (queued again'),
      };
    });
    // The first moment of each phase of the key `web`, stepping one event at a time.
    const first = {};
    for (let n = 1; n <= max && !(first.done && first.dirty); n++) {
      await seek(n);
      const l = await lanes();
      if (l.waiting.includes('web')) first.waiting ??= n;
      if (l.running.includes('web')) {
        first.running ??= n;
        assert(l.runningChips.some((t) => t.includes('web')), `a running chip for web at ${n}: ${JSON.stringify(l)}`);
        assert(!l.waiting.includes('web'), `never waiting and running at once (${n}): ${JSON.stringify(l)}`);
        if (l.dirty) first.dirty ??= n;
      }
      if (l.done.includes('web')) {
        first.done ??= n;
        assert(l.doneChips.some((t) => t.includes('web')), `a done chip for web at ${n}: ${JSON.stringify(l)}`);
      }
    }
    assert(first.waiting < first.running && first.running < first.done, `waiting, then running, then done: ${JSON.stringify(first)}`);
    assert(first.dirty > first.running, `an update while it runs marks it dirty: ${JSON.stringify(first)}`);
  }],

  ['fold (issue 27): at 1400x900 the picture, the timeline and "Why?" with its first item are on screen without scrolling; screenshots of gallery 02 mid-run at 390, 768 and 1400', async () => {
    await page.setViewportSize({ width: 1400, height: 900 });
    await pickGallery('02-overflow');
    // What of the four lies (even in part) outside the viewport, with its box.
    const outside = () => page.evaluate(() => {
      const why = document.querySelector('[data-testid="explanation"]');
      const parts = [['the picture', 'svg.system'], ['the timeline', 'svg.timeline'], ['"Why?"', 'h2'], ['"Why?"\'s first item', 'ol > li, .hint']];
      return parts.flatMap(([what, sel]) => {
        const e = sel.startsWith('svg') ? document.querySelector(sel) : why && why.querySelector(sel);
        if (!e) return [`${what}: none`];
        const r = e.getBoundingClientRect();
        const inside = r.top >= 0 && r.left >= 0 && r.bottom <= innerHeight && r.right <= innerWidth && r.height > 0;
        return inside ? [] : [`${what} at x ${Math.round(r.left)}..${Math.round(r.right)}, y ${Math.round(r.top)}..${Math.round(r.bottom)}`];
      });
    });
    const max = Number(await $('scrubber').getAttribute('max'));
    for (const [moment, go] of [['the start', () => seek(0)], ['mid-run', () => seek(Math.floor(max / 2))], ['2.050 s (narration)', () => seekClock('2.050s')], ['the 410', () => seekClock('2.200s')]]) {
      await go();
      await page.evaluate(() => window.scrollTo(0, 0));
      const out = await outside();
      assert(out.length === 0, `at ${moment}, outside 1400x900: ${out.join('; ')}`);
    }
    await seek(Math.floor(max / 2));
    for (const [w, h] of SIZES) {
      await page.setViewportSize({ width: w, height: h });
      await page.evaluate(() => window.scrollTo(0, 0));
      await page.waitForTimeout(100);
      await page.screenshot({ path: `${shots}27-fold-02-mid-run-${w}.png` });
    }
    await page.setViewportSize({ width: 1400, height: 900 });
  }],
  ['every screen: no two picture labels overlap and nothing overflows, in every gallery scenario', async () => {
    await gotoReady(page, base);
    const files = await page.$$eval('[data-testid="gallery"] option[data-file]', (os) => os.map((o) => o.dataset.file));
    const problems = [];
    for (const [w, h] of SIZES) {
      await page.setViewportSize({ width: w, height: h });
      for (const f of files) {
        await pickGallery(f);
        const max = Number(await $('scrubber').getAttribute('max'));
        for (const frac of [0, 0.25, 0.5, 0.75, 1]) {
          await seek(Math.round(max * frac));
          const p = await page.evaluate(layoutProblems);
          // On a phone the picture's text stays readable: 10 px or more as rendered.
          if (w === 390) {
            const font = await page.evaluate(minPictureFont);
            if (font < 9.99) p.push(`the picture's smallest text renders at ${font.toFixed(1)} px`);
          }
          if (p.length) problems.push(`${w}px ${f} at ${Math.round(frac * 100)}%: ${p.slice(0, 3).join('; ')}`);
        }
      }
    }
    // What a reader sees at each size, at the 410 of the overflow scenario.
    await pickGallery('02-overflow');
    await seek(0);
    await $('next-410').click();
    for (const [w, h] of SIZES) {
      await page.setViewportSize({ width: w, height: h });
      await page.waitForTimeout(100);
      await page.screenshot({ path: `${shots}11-layout-${w}.png`, fullPage: true });
      const ctl = await $('play').boundingBox();
      assert(ctl && ctl.x >= 0 && ctl.x + ctl.width <= w, `play reachable at ${w}px`);
    }
    await page.setViewportSize({ width: 1400, height: 900 });
    for (const p of problems.slice(0, 60)) console.log('     ' + p);
    assert(problems.length === 0, `${problems.length} layout problems (listed above)`);
  }],
  ['objects: one object per object, one copy per holder, with rv and stale marks', async () => {
    await gotoReady(page, base);
    await page.evaluate(() => localStorage.clear());
    await reloadReady(page);
    await pickGallery('02-overflow');
    await openObjects();
    await seek(1e9);
    await settled();
    const objs = await page.$$eval('[data-testid="object"]', (els) => els.map((e) => ({
      kind: e.dataset.kind, name: e.dataset.name,
      copies: [...e.querySelectorAll('[data-testid="object-copy"]')].map((c) => ({ holder: c.dataset.holder, rv: c.dataset.rv, stale: c.dataset.stale })),
    })));
    assert(objs.length >= 3, `objects listed: ${objs.length}`);
    for (const o of objs) {
      assert(o.kind && o.name, 'data-kind and data-name');
      const holders = o.copies.map((c) => c.holder);
      assert(holders[0] === 'etcd', `etcd first: ${holders}`);
      assert(new Set(holders).size === holders.length, `one copy per holder: ${holders}`);
      for (const c of o.copies) assert(c.stale === 'true' || c.stale === 'false', `data-stale ${c.stale}`);
    }
    const pod = objs.find((o) => o.kind === 'Pod');
    const holders = pod.copies.map((c) => c.holder);
    assert(holders.some((h) => h.includes('/Pod')), `an informer store CONTROLLER/KIND: ${holders}`);
    assert(holders.length >= 3, `etcd, an apiserver, an informer: ${holders}`);
    // At the end everything has settled: every copy is the truth.
    for (const o of objs) for (const c of o.copies) {
      const etcd = o.copies[0].rv;
      if (c.rv !== '') assert(c.rv === etcd && c.stale === 'false', `${o.kind}/${o.name} ${c.holder} ${c.rv} vs ${etcd}`);
    }
    // Clicking an object shows its history and highlights it.
    const first = page.locator('[data-testid="object"]').first();
    await first.locator('.object-name').click();
    await settled();
    assert(await first.evaluate((e) => e.classList.contains('selected')), 'highlighted');
    const items = await first.locator('[data-testid="object-history"] li').allTextContents();
    assert(items.length >= 1 && items[0].includes('create by'), `history: ${items.join(' | ')}`);
    // Another moment redraws the panel in place: the focused button keeps the focus, a table
    // its scroll.
    const wide = await page.addStyleTag({ content: '.table-scroll table { min-width: 2000px }' });
    const button = await first.locator('.object-name').elementHandle();
    const table = await first.locator('.table-scroll').elementHandle();
    const left = await table.evaluate((t) => { t.scrollLeft = 60; return t.scrollLeft; });
    await button.focus();
    await page.evaluate(() => {
      window.__redrawn = false;
      new MutationObserver(() => { window.__redrawn = true; })
        .observe(document.querySelector('[data-testid="objects"]'), { attributes: true, attributeFilter: ['data-settled'] });
    });
    await seek(Number(await $('scrubber').getAttribute('max')) - 1);
    await page.waitForFunction(() => window.__redrawn, null, { timeout: 5000 });
    await settled();
    assert(await button.evaluate((b) => b.isConnected && document.activeElement === b), 'the focused button is kept, with the focus');
    assert(left > 0 && await table.evaluate((t) => t.scrollLeft) === left, `the table keeps its scroll: ${left}`);
    await wide.evaluate((s) => s.remove());
  }],
  ['objects: a copy shows its fields, labels, annotations, finalizers, creationTimestamp and deletionTimestamp; a stale one marks the fields that differ; 25 objects a page', async () => {
    await gotoReady(page, base);
    await setEditor(page, [
      'kind Pod', 'kind Copy', 'controller ctl for Pod mirror Copy', '  link-delay 600ms',
      'at 1s create Pod web-0 labels app=web annotations note=a spec.image=v1 finalizer example.com/keep',
      'at 4s update Pod web-0 spec.image=v2 labels app=db',
      'at 5s delete Pod web-0',
      'every 10ms 60 times from 6s create Pod p{i}',
      'run 8s', ''].join('\n'));
    await page.waitForFunction(() => Number(document.querySelector('[data-testid="scrubber"]').max) > 100, null, { timeout: 20000 });
    await openObjects();
    // The last event of a moment: the write and what follows it at that millisecond applied.
    const seekLast = async (t) => {
      let n = await seekClock(t);
      const max = Number(await $('scrubber').getAttribute('max'));
      while (n < max) {
        await seek(n + 1);
        if (await $('clock').textContent() !== t) { await seek(n); break; }
        n++;
      }
      await settled();
    };
    await seekLast('4.000s');
    const web = page.locator('[data-testid="object"][data-kind="Pod"][data-name="web-0"]');
    const etcd = web.locator('[data-testid="object-copy"][data-holder="etcd"]');
    const col = async (row, c) => (await row.locator(`td[data-col="${c}"]`).textContent()).trim();
    assert(await col(etcd, 'fields') === 'image="v2"', `etcd's spec.image: ${await col(etcd, 'fields')}`);
    assert(await col(etcd, 'labels') === 'app=db', `etcd's labels: ${await col(etcd, 'labels')}`);
    assert(await col(etcd, 'annotations') === 'note=a', 'annotations');
    assert(await col(etcd, 'finalizers') === 'example.com/keep', 'finalizers');
    assert(await col(etcd, 'creationTimestamp') === '1.000s', `created at 1s: ${await col(etcd, 'creationTimestamp')}`);
    const stale = web.locator('[data-testid="object-copy"][data-mark="stale"]');
    assert(await stale.count() === 1, 'the informer 600 ms behind holds a stale copy');
    const differs = (await stale.getAttribute('data-differs')).split(',');
    for (const k of ['rv', 'spec.image', 'labels.app']) assert(differs.includes(k), `${k} differs: ${differs}`);
    assert(!differs.includes('annotations.note') && !differs.includes('finalizers'), `what did not change is not marked: ${differs}`);
    const image = stale.locator('[data-key="spec.image"]');
    assert(await image.getAttribute('data-differs') === 'true' && (await image.textContent()).includes('≠ image="v1"'), await image.textContent());
    assert((await image.getAttribute('title')) === 'etcd: "v2"', await image.getAttribute('title'));
    assert((await stale.locator('td.mark').textContent()).includes('spec.image'), 'its mark names the fields');
    await shots3('28-objects-fields', 'objects');
    // The picture's tooltips say it too: the cache's slot of rv 4, the update.
    const tips = await page.$$eval('[data-testid="watch-cache"][data-kind="Pod"] circle.slot > title', (ts) => ts.map((t) => t.textContent));
    assert(tips.some((t) => t.startsWith('rv 4: Pod default/web-0') && t.includes('labels app=db') && t.includes('spec.image="v2"')), `the slot's tooltip: ${tips.join(' | ')}`);
    await seekLast('5.000s');
    assert(await col(etcd, 'deletionTimestamp') === '5.000s', `marked deleting: ${await col(etcd, 'deletionTimestamp')}`);
    assert((await stale.getAttribute('data-differs')).split(',').includes('deletionTimestamp'), 'the informer does not know yet');
    // Pages of 25.
    await seek(Number(await $('scrubber').getAttribute('max')));
    await settled();
    assert(await page.locator('[data-testid="object"]').count() === 25, 'one page of 25');
    const shown = async () => (await $('objects-shown').textContent()).trim();
    assert((await shown()).startsWith('objects 1–25 of '), await shown());
    await $('objects-next').click();
    await page.waitForFunction(() => document.querySelector('[data-testid="objects-shown"]')?.textContent.includes('objects 26–50'));
    await settled();
    assert(await page.locator('[data-testid="object"]').first().getAttribute('data-name') !== 'web-0', 'the next 25');
    await $('objects-prev').click();
    await page.waitForFunction(() => document.querySelector('[data-testid="objects-shown"]')?.textContent.includes('objects 1–25'));
    await axe('the objects panel with fields and a pager');
    // A thousand objects: one page drawn, each move of the moment answered quickly.
    await setEditor(page, 'kind Pod\nkind Copy\ncontroller ctl for Pod mirror Copy\nevery 5ms 1000 times create Pod p{i}\nrun 10s\n');
    await page.waitForFunction(() => Number(document.querySelector('[data-testid="scrubber"]').max) > 3000, null, { timeout: 30000 });
    await settled();
    const max = Number(await $('scrubber').getAttribute('max'));
    const t0 = Date.now();
    for (const f of [0.5, 0.75, 1]) { await seek(Math.round(max * f)); await settled(); }
    const each = (Date.now() - t0) / 3;
    assert(await page.locator('[data-testid="object"]').count() === 25, 'still one page of 25');
    assert(Number((await shown()).match(/ of (\d+) /)[1]) > 1000, `the thousand Pods and their Copies counted: ${await shown()}`);
    console.log(`     a move of the moment with over 1,000 objects settles in ${each.toFixed(0)} ms`);
    assert(each < 1500, `a move of the moment with over 1,000 objects settles in ${each.toFixed(0)} ms`);
  }],
  ['worker.js: a lane past its limit drops its oldest job not yet sent, and keeps the worker it has warm', async () => {
    const p = await pageCountingWorkers();
    await gotoReady(p, base);
    const r = await p.evaluate(async () => {
      const { ask, stop, IN_FLIGHT_MAX } = await import('./worker.js');
      const job = (cursor) => ({ kind: 'objects', script: 'kind Pod\nat 0s create Pod a\nrun 1s\n', cursor, pick_kind: '', pick_name: '', page: 0 });
      await ask('lane-test', job(0), { keep: true }).answer;
      const started = window.workersStarted;
      // Six at once to a warm lane, as fast playback asks the objects panel.
      const burst = [1, 2, 3, 4, 5, 6].map((n) => ask('lane-test', job(n), { keep: true }).answer);
      const outcomes = (await Promise.allSettled(burst)).map((o) => (o.status === 'fulfilled' ? `${o.value.kind}@${o.value.cursor}` : o.reason.why));
      stop('lane-test');
      return { limit: IN_FLIGHT_MAX, started, after: window.workersStarted, outcomes };
    });
    await p.close();
    assert(r.after === r.started, `the lane kept its worker: ${JSON.stringify(r)}`);
    // The first is on the worker; the two oldest waiting are dropped; the newest four answered.
    assert(JSON.stringify(r.outcomes) === JSON.stringify(['objects@1', 'refused', 'refused', 'objects@4', 'objects@5', 'objects@6']), `dropped the oldest waiting: ${JSON.stringify(r)}`);
  }],

  ['objects: a table wider than its box says it scrolls sideways, and only then (as the comparison\'s lanes do)', async () => {
    await gotoReady(page, base);
    await setEditor(page, [
      'kind Pod', 'kind Copy', 'controller ctl for Pod mirror Copy',
      'at 1s create Pod web-0 labels app=web,tier=frontend annotations note=a-long-annotation spec.image=registry.example.com/web:v1 finalizer example.com/keep',
      'at 2s create Pod p',
      'run 3s', ''].join('\n'));
    await page.waitForFunction(() => Number(document.querySelector('[data-testid="scrubber"]').max) > 5, null, { timeout: 20000 });
    await openObjects();
    await seekClock('2.000s');
    await settled();
    const said = () => page.$$eval('[data-testid="object"]', (os) => os.map((o) => {
      const box = o.querySelector('.table-scroll'), hint = o.querySelector('[data-testid="objects-scroll-hint"]');
      return { name: o.dataset.name, wider: box.scrollWidth > box.clientWidth + 1, shown: !!hint && hint.getClientRects().length > 0, text: hint?.textContent };
    }));
    const seen = {};
    for (const [w, h] of SIZES) {
      await page.setViewportSize({ width: w, height: h });
      await page.waitForTimeout(150);
      const rows = await said();
      for (const r of rows) assert(r.wider === r.shown, `at ${w} px ${r.name}: wider than its box ${r.wider}, hint shown ${r.shown}`);
      seen[w] = rows;
    }
    const web = (w) => seen[w].find((r) => r.name === 'web-0');
    assert(web(390).shown && /scroll it sideways/.test(web(390).text), `at 390 px the wide table says so: ${JSON.stringify(web(390))}`);
    // A table that fits says nothing (the hint is measured, not a media query).
    assert(seen[1400].some((r) => !r.shown), `a table that fits at 1400 px says nothing: ${JSON.stringify(seen[1400])}`);
    await axe('objects, a wide table');
    await shots3('page43-3-objects-scroll', 'objects');
  }],
  ['objects: marks move with time travel (a watcher behind etcd during the 410)', async () => {
    await pickGallery('02-overflow');
    await openObjects();
    await seek(0);
    await $('next-410').click();
    await settled();
    const stale = await page.locator('[data-testid="object-copy"][data-stale="true"], [data-testid="object-copy"][data-mark="missing"]').count();
    assert(stale >= 1, `some copy is behind at the 410: ${stale}`);
    await seek(1e9);
    await settled();
    const after = await page.locator('[data-testid="object-copy"][data-stale="true"]').count();
    assert(after === 0, `none at the end: ${after}`);
    await seek(0);
    await settled();
    assert(await $('object').count() === 0, 'no objects before the first write');
  }],
  ['objects: in the stale-apiserver scenario the operator holds the old, deleted rabbit when it deletes the new volume', async () => {
    await pickGallery('11-stale-apiserver');
    await openObjects();
    await seek(1e9);
    await settled();
    const pvc = page.locator('[data-testid="object"][data-kind="Pvc"][data-name="rabbit-data"]');
    await pvc.locator('.object-name').click();
    await settled();
    const deletes = pvc.locator('[data-testid="object-history"] li', { hasText: 'delete by operator' });
    const n = await deletes.count();
    assert(n >= 2, `two deletes by the operator: ${n}`);
    await deletes.nth(n - 1).locator('button').click();
    await settled();
    const clock = await $('clock').textContent();
    assert(parseFloat(clock) >= 21, `the wrong delete, after the restart: ${clock}`);
    const etcd = copy('RabbitmqCluster', 'rabbit', 'etcd');
    const mine = copy('RabbitmqCluster', 'rabbit', 'operator/RabbitmqCluster');
    const [erv, mrv] = [await etcd.getAttribute('data-rv'), await mine.getAttribute('data-rv')];
    assert(erv !== '' && mrv !== '' && Number(mrv) < Number(erv), `operator's copy rv ${mrv} older than etcd's ${erv}`);
    assert(await mine.getAttribute('data-stale') === 'true', 'marked stale');
    const text = await mine.textContent();
    const deletion = (row) => row.locator('td[data-col="deletionTimestamp"]').textContent();
    assert(/\d+\.\d{3}s/.test(await deletion(mine)) && text.includes('stale'), `the old one, marked for deletion: ${text}`);
    assert((await mine.getAttribute('data-differs')).split(',').includes('deletionTimestamp'), 'its deletion mark differs from etcd');
    assert((await deletion(etcd)).trim() === '', `etcd holds the new one, not deleting: ${await deletion(etcd)}`);
    const uid = (row) => row.locator('td[data-col="uid"]').textContent();
    assert(await uid(mine) !== await uid(etcd), 'different UIDs: another object with the same name');
    assert(await copy('RabbitmqCluster', 'rabbit', 'b').getAttribute('data-stale') === 'true', 'apiserver b is stale too');
    await page.locator('[data-testid="object"][data-kind="RabbitmqCluster"]').scrollIntoViewIfNeeded();
    for (const w of [390, 768, 1400]) {
      await page.setViewportSize({ width: w, height: w === 390 ? 844 : w === 768 ? 1024 : 900 });
      await page.waitForTimeout(100);
      await page.locator('[data-testid="object"][data-kind="RabbitmqCluster"]').scrollIntoViewIfNeeded();
      await page.screenshot({ path: `${shots}10-objects-stale-${w}.png` });
    }
    await page.setViewportSize({ width: 1400, height: 900 });
  }],
  ['accessibility: axe-core finds no serious or critical violation, in every state touched', async () => {
    await gotoReady(page, base);
    await pickGallery('02-overflow');
    await axe('the overflow scenario at its start');
    await seek(0);
    await $('next-410').click();
    await openObjects();
    await axe('the 410 with the objects panel open');
    await page.keyboard.press('?');
    await axe('the keyboard help');
    await page.keyboard.press('?');
    await page.selectOption('select[aria-label="Theme"]', 'dark');
    await axe('the dark theme');
    await page.selectOption('select[aria-label="Theme"]', 'light');
    await page.setViewportSize({ width: 390, height: 844 });
    await axe('a phone');
    await page.locator('[data-testid="editor"] .pv').click();
    await page.waitForFunction(() => !!document.querySelector('[data-testid="editor"]').cmView);
    await axe('the editor loaded');
    await page.setViewportSize({ width: 1400, height: 900 });
    await page.selectOption('select[aria-label="Theme"]', 'system');
  }],
  ['keyboard: Tab reaches the timeline, arrows move along its markers (one Tab stop), Enter jumps to the marker\'s moment', async () => {
    await gotoReady(page, base);
    await pickGallery('02-overflow');
    await seek(0);
    const marks = page.locator('svg.timeline .mark');
    assert(await marks.count() >= 5, `markers: ${await marks.count()}`);
    assert(await page.locator('svg.timeline .mark[tabindex="0"]').count() === 1, 'one marker in the Tab order');
    await $('scrubber').focus();
    let reached = false;
    for (let i = 0; i < 120 && !reached; i++) {
      await page.keyboard.press('Tab');
      reached = await page.evaluate(() => !!document.activeElement?.matches('svg.timeline .mark'));
    }
    assert(reached, 'Tab reaches a timeline marker');
    const ring = await page.evaluate(() => { const s = getComputedStyle(document.activeElement); return s.outlineStyle !== 'none' && parseFloat(s.outlineWidth) >= 1; });
    assert(ring, 'the focused marker shows a focus ring');
    for (let k = 0; k < 3; k++) await page.keyboard.press('ArrowRight');
    await page.keyboard.press('ArrowLeft');
    const target = await page.evaluate(() => {
      const e = document.activeElement;
      return { idx: [...document.querySelectorAll('svg.timeline .mark')].indexOf(e), time: e.dataset.time, label: e.getAttribute('aria-label'), role: e.getAttribute('role') };
    });
    assert(target.idx === 2, `arrows move along the markers: at ${target.idx}`);
    assert(target.role === 'button' && target.label.startsWith(target.time) && target.label.length > target.time.length + 3, `named: ${target.label}`);
    assert(await page.locator('svg.timeline .mark[tabindex="0"]').count() === 1, 'still one Tab stop (roving)');
    const before = await $('scrubber').inputValue();
    await page.keyboard.press('Enter');
    await page.waitForFunction((t) => document.querySelector('[data-testid="clock"]').textContent === t, target.time, { timeout: 3000 });
    assert(await $('scrubber').inputValue() !== before, 'the moment moved');
    assert(await page.evaluate(() => !!document.activeElement?.matches('svg.timeline .mark')), 'the focus stays on the marker');
    await page.keyboard.press('End');
    assert(await page.evaluate(() => document.activeElement === [...document.querySelectorAll('svg.timeline .mark')].pop()), 'End goes to the last marker');
    await page.keyboard.press(' ');
    const last = await page.evaluate(() => document.activeElement.dataset.time);
    await page.waitForFunction((t) => document.querySelector('[data-testid="clock"]').textContent === t, last, { timeout: 3000 });
    await axe('a timeline marker focused');
  }],
  ['keyboard: a running reconcile\'s chip takes the focus and shows its reads in a tooltip; its text has AA contrast in both themes, stale not by colour alone', async () => {
    await gotoReady(page, base);
    // Gallery 30 with the faults the explorer finds: the operator restarts against the paused
    // apiserver b and reads a stale copy of the cluster.
    await pickGallery('30-own-logic-stale-delete-by-name');
    const src = await editorText(page);
    await setEditor(page, src.replace('run 2m', 'at 5s pause b\nat 20s crash op\nat 21s restart op on b\nat 60s resume b\nrun 2m'));
    await page.waitForFunction(() => Number(document.querySelector('[data-testid="scrubber"]').max) > 150);
    const max = Number(await $('scrubber').getAttribute('max'));
    // The first moment with a running reconcile that read a stale copy.
    let found = false;
    for (let n = 1; n <= max && !found; n++) {
      await seek(n);
      found = await page.locator('[data-testid="running-chip"][data-stale-read="true"] + [data-testid="chip-tip"]').count() > 0;
    }
    assert(found, 'a running reconcile with a stale read');
    const chip = page.locator('[data-testid="running-chip"][data-stale-read="true"]').first();
    const tip = page.locator('[data-testid="running-chip"][data-stale-read="true"] + [data-testid="chip-tip"]').first();
    assert(!(await tip.isVisible()), 'the tooltip is hidden until focus');
    await $('scrubber').focus();
    let reached = false;
    for (let i = 0; i < 80 && !reached; i++) {
      await page.keyboard.press('Tab');
      reached = await page.evaluate(() => document.activeElement?.dataset.testid === 'running-chip');
    }
    assert(reached, 'Tab reaches the running chip');
    assert(await tip.isVisible(), 'focus shows the tooltip');
    const lines = await tip.locator('text').allTextContents();
    assert(lines.some((l) => /read/.test(l)), `the reads: ${lines.join(' | ')}`);
    const label = await chip.getAttribute('aria-label');
    assert(label.includes('stale') && label.includes(lines[lines.length - 1]), `the chip's name says it all: ${label}`);
    assert((await chip.locator(':scope > text').textContent()).endsWith('!'), 'stale is marked ! in text');
    assert(await chip.locator(':scope > rect').evaluate((r) => getComputedStyle(r).strokeDasharray !== 'none'), 'stale is dashed');
    for (const theme of ['light', 'dark']) {
      await page.selectOption('select[aria-label="Theme"]', theme);
      for (const sel of ['[data-testid="running-chip"][data-stale-read="true"]', '[data-testid="running-chip"]']) {
        const c = page.locator(sel).first();
        const [fg, bg] = await c.evaluate((g) => [getComputedStyle(g.querySelector(':scope > text')).fill, getComputedStyle(g.querySelector(':scope > rect')).fill]);
        const ratio = await page.evaluate(`(${contrast})(${JSON.stringify(fg)}, ${JSON.stringify(bg)})`);
        assert(ratio >= 4.5, `${theme} ${sel}: ${fg} on ${bg} is ${ratio.toFixed(2)}:1`);
      }
    }
    await axe('a running chip focused, dark theme');
    await page.selectOption('select[aria-label="Theme"]', 'system');
  }],
  ['accessibility: every control has a name, the keyboard reaches them with a visible focus, changes are announced', async () => {
    await gotoReady(page, base);
    await pickGallery('02-overflow');
    const unnamed = await page.$$eval('button, select, input, [role=button], summary', (els) => els
      .filter((e) => !(e.getAttribute('aria-label') || e.textContent.trim() || e.labels?.[0]?.textContent.trim() || e.title))
      .map((e) => e.outerHTML.slice(0, 80)));
    assert(unnamed.length === 0, `controls without a name: ${unnamed.join(' | ')}`);
    // Tab from the top: the focus is always visible, and the moment's controls are reachable.
    await page.locator('h1').click();
    const seen = new Set();
    for (let i = 0; i < 40; i++) {
      await page.keyboard.press('Tab');
      // CodeMirror marks itself focused a frame after the focus moves in (it loads on focus).
      await page.waitForTimeout(50);
      const f = await page.evaluate(() => {
        const e = document.activeElement;
        if (!e || e === document.body) return { id: 'body', ring: true };
        // CodeMirror draws its focus on the editor around the text.
        const s = getComputedStyle(e.closest('.cm-editor.cm-focused') || e);
        return { id: e.dataset.testid || e.getAttribute('aria-label') || e.textContent.trim().slice(0, 20), ring: s.outlineStyle !== 'none' && parseFloat(s.outlineWidth) >= 1 || s.boxShadow !== 'none' };
      });
      seen.add(f.id);
      assert(f.ring, `a visible focus on ${f.id}`);
    }
    for (const id of ['play', 'step-forward', 'scrubber']) assert(seen.has(id), `Tab reaches ${id}: ${[...seen].join(', ')}`);
    // Keyboard only: focus "step forward", press Enter: the moment moves.
    const before = await $('scrubber').inputValue();
    await $('step-forward').focus();
    await page.keyboard.press('Enter');
    assert(await $('scrubber').inputValue() !== before, 'Enter on a focused control acts');
    // The objects panel opens and an object's history shows from the keyboard.
    await $('objects-toggle').focus();
    await page.keyboard.press('Enter');
    await $('objects').waitFor();
    await settled();
    await page.locator('[data-testid="object"] .object-name').first().focus();
    await page.keyboard.press('Enter');
    await $('object-history').first().waitFor();
    // Narration and expectations are announced.
    assert(await page.locator('.say[aria-live]').count() === 1, 'narration is a live region');
    assert(await page.locator('[data-testid="expectations"][aria-live], [data-testid="expectations"] [aria-live]').count() >= 1, 'expectations are a live region');
    // Colour is never the only signal: pass and fail say so in words, stale copies too.
    const marks = await page.locator('[data-testid="expectations"] li b').allTextContents();
    assert(marks.every((t) => /pass|FAIL/.test(t)), marks.join(' | '));
  }],
  ['faults by hand: a click on a part of the picture offers its faults; one appends its line at this moment, re-runs, and Undo restores', async () => {
    await gotoReady(page, base);
    await pickGallery('02-overflow');
    const src = await editorText(page);
    await seek(20);
    const now = await $('clock').textContent();
    const cursor = await $('scrubber').inputValue();
    await page.locator('[data-testid="watcher"][data-controller="ctl"][data-kind="Pod"]').click();
    await $('fault-menu').waitFor();
    const lines = await page.locator('[data-testid="fault-option"]').evaluateAll((bs) => bs.map((b) => b.dataset.line));
    for (const want of ['crash ctl', 'crash ctl after 1 write', 'disconnect ctl for 5s', 'hold ctl Pod']) {
      assert(lines.some((l) => l.includes(want)), `offers ${want}: ${lines.join(' | ')}`);
    }
    assert(lines.every((l) => l.startsWith('at ')), 'timeline lines');
    await axe('the fault menu open');
    await $('fault-menu').scrollIntoViewIfNeeded();
    await shots3('12-fault-menu', 'fault-menu');
    // The link and the watch cache have their own.
    await page.locator('[data-testid="watch-cache"][data-kind="Pod"]').click();
    const cache = await page.locator('[data-testid="fault-option"]').evaluateAll((bs) => bs.map((b) => b.dataset.line));
    assert(cache.some((l) => l.endsWith('pause a')) || cache.some((l) => /pause \S+$/.test(l)), `pause offered: ${cache.join(' | ')}`);
    assert(cache.some((l) => l.includes('restart-apiserver')), 'restart the apiserver offered');
    // A click on the link itself: half way down its lane (a link is routed, its box's middle is
    // off it).
    await page.locator('[data-testid="link"]').first().scrollIntoViewIfNeeded();
    const [lx, ly] = await page.locator('[data-testid="link"] .hit').first().evaluate((l) => {
      const pts = l.points ? [...l.points] : [{ x: l.x1.baseVal.value, y: l.y1.baseVal.value }, { x: l.x2.baseVal.value, y: l.y2.baseVal.value }];
      const [a, b] = pts.length > 3 ? [pts[2], pts[3]] : [pts[0], pts[1]];
      const q = new DOMPoint((a.x + b.x) / 2, (a.y + b.y) / 2).matrixTransform(l.getScreenCTM());
      return [q.x, q.y];
    });
    await page.mouse.click(lx, ly);
    // Keyboard: Escape closes; Enter on a focused part opens; the first option takes the focus.
    await page.keyboard.press('Escape');
    assert(await $('fault-menu').count() === 0, 'Escape closes the menu');
    await page.locator('[data-testid="queue"] .hit').first().focus();
    await page.keyboard.press('Enter');
    await $('fault-menu').waitFor();
    assert(await page.evaluate(() => document.activeElement.dataset.testid) === 'fault-option', 'focus on the first fault');
    const crash = page.locator('[data-testid="fault-option"][data-line$=" crash ctl"]');
    const line = await crash.getAttribute('data-line');
    await crash.click();
    const after = await editorText(page);
    assert(after.trimEnd().endsWith(line), `the line is appended: ${after.slice(-60)}`);
    assert(line.startsWith('at ') && parseFloat(line.slice(3)) * (line.includes('ms ') ? 0.001 : 1) <= parseFloat(now) + 1e-9, `at this moment (${now}): ${line}`);
    assert(await $('scrubber').inputValue() === cursor, 'the same moment after the re-run');
    await $('scrubber').evaluate((el) => { el.value = el.max; el.dispatchEvent(new Event('input', { bubbles: true })); });
    assert(await page.locator('[data-testid="queue"][data-controller="ctl"]').count() === 1, 'still drawn');
    assert((await page.locator('.fault', { hasText: 'crashed' }).count()) >= 1, 'the controller is crashed at the end');
    await $('undo').click();
    assert(await editorText(page) === src, 'Undo restores the script');
    assert(await $('undo').count() === 0, 'nothing more to undo');
  }],
  ['history: the last versions of the script are kept in this browser and restorable', async () => {
    await gotoReady(page, base);
    await page.evaluate(() => localStorage.clear());
    await reloadReady(page);
    const first = await editorText(page);
    await page.waitForTimeout(1000);
    await setEditor(page, first + '\n# second version\n');
    await page.waitForTimeout(1000);
    await setEditor(page, first + '\n# third version\n');
    await page.waitForTimeout(1000);
    await $('history-toggle').click();
    const entries = $('history').locator('[data-testid="history-entry"]');
    assert(await entries.count() === 3, `three versions: ${await entries.count()}`);
    assert(await page.evaluate(() => localStorage.getItem('listwatch.history').length > 0), 'kept in localStorage');
    await axe('the history open');
    await shots3('13-history', 'history');
    // The oldest is the first script: restore it.
    await entries.nth(2).locator('[data-testid="history-restore"]').click();
    assert(await editorText(page) === first, 'restored');
    // Many versions: only the last 30 are kept.
    await page.evaluate(() => {
      const parts = [];
      for (let i = 0; i < 40; i++) parts.push(`${Date.now() - i}\u001f# v${i}\nkind Pod\n`);
      localStorage.setItem('listwatch.history', parts.join('\u001e'));
    });
    await $('history-toggle').click();
    await $('history-toggle').click();
    assert(await entries.count() === 30, `at most 30: ${await entries.count()}`);
  }],
  ['tour: a path through the gallery that remembers where the reader stopped', async () => {
    await gotoReady(page, base);
    await page.evaluate(() => localStorage.removeItem('listwatch.tour'));
    await reloadReady(page);
    assert((await $('tour-next').textContent()).includes('Start'), 'the tour starts');
    await $('tour-next').click();
    await page.waitForSelector('[data-testid="tour"][data-loaded^="39-"]');
    const s1 = await page.locator('[data-testid="tour-step"]').first().getAttribute('data-file');
    assert(s1.startsWith('39-'), s1);
    assert((await editorText(page)).startsWith('# A guided tour'), 'the first step is the narrated tour: ' + (await editorText(page)).slice(0, 40));
    await $('tour-next').click();
    await page.waitForSelector('[data-testid="tour"][data-loaded^="01-"]');
    assert(await $('tour').getAttribute('data-step') === '2', 'step 2');
    const t2 = await page.locator('[data-testid="tour-step"].here').getAttribute('data-file');
    assert(t2.startsWith('01-'), t2);
    assert((await editorText(page)).startsWith('# Initial list'), 'the list-and-watch scenario');
    await axe('the tour open');
    await shots3('14-tour', 'tour');
    await reloadReady(page);
    assert(await $('tour').getAttribute('data-step') === '2', 'remembered after a reload');
    assert((await $('tour-where').textContent()).includes('step 2'), await $('tour-where').textContent());
    assert((await $('tour-next').textContent()).includes('step 3'), await $('tour-next').textContent());
    await $('tour-prev').click();
    assert(await $('tour').getAttribute('data-step') === '1', 'back to step 1');
  }],
  ['narration that waits: playback stops at each say ... and wait until the reader continues', async () => {
    await pickGallery('39-guided-tour');
    await $('speed').evaluate((el) => { el.value = el.max; el.dispatchEvent(new Event('input', { bubbles: true })); }).catch(() => {});
    await $('play').click();
    await $('narration-continue').waitFor({ timeout: 10000 });
    const say = () => page.locator('.say').textContent();
    assert((await say()).startsWith('1/5'), 'stopped at the first remark: ' + await say());
    const clock = await $('clock').textContent();
    await page.waitForTimeout(400);
    assert(await $('clock').textContent() === clock, 'the clock waits for the reader');
    assert(await $('play').count() === 1, 'playback is paused');
    await axe('a narration waiting');
    await $('narration-continue').click();
    await page.waitForFunction(() => (document.querySelector('.say')?.textContent || '').startsWith('2/5')
      && document.querySelector('[data-testid="narration-continue"]'), null, { timeout: 10000 });
    // Space continues as well as the button.
    await page.locator('body').click({ position: { x: 2, y: 2 } }).catch(() => {});
    await $('narration-continue').click();
    await page.waitForFunction(() => (document.querySelector('.say')?.textContent || '').startsWith('3/5'), null, { timeout: 10000 });
  }],
  ['timeline: zooms with its buttons, the wheel and a pinch, and follows the clock', async () => {
    await pickGallery('02-overflow');
    const span = async () => {
      const el = $('timeline-span');
      return [Number(await el.getAttribute('data-from-ms')), Number(await el.getAttribute('data-to-ms'))];
    };
    const [a0, b0] = await span();
    assert(a0 === 0 && b0 > 0, `the whole run at first: ${a0}..${b0}`);
    assert(await $('timeline-zoom-all').isDisabled(), 'nothing to reset');
    const marks0 = await page.locator('svg.timeline .mark').count();
    await $('timeline-zoom-in').click();
    const [a1, b1] = await span();
    assert(Math.abs((b1 - a1) - b0 / 2) <= 1, `zoom in halves the window: ${a1}..${b1}`);
    // The wheel zooms around the pointer.
    await $('timeline').scrollIntoViewIfNeeded();
    const box = await $('timeline').boundingBox();
    await page.mouse.move(box.x + box.width * 0.6, box.y + box.height / 2);
    await page.mouse.wheel(0, -200);
    await page.waitForTimeout(100);
    const [a2, b2] = await span();
    assert(b2 - a2 < b1 - a1, `the wheel zooms in: ${a2}..${b2} after ${a1}..${b1}`);
    assert(await page.locator('svg.timeline .mark').count() <= marks0, 'markers outside the window are not drawn');
    // A pinch: two fingers moving apart zoom in.
    await $('timeline-zoom-all').click();
    await page.evaluate(() => {
      const el = document.querySelector('[data-testid="timeline"]');
      const r = el.getBoundingClientRect();
      const y = r.top + r.height / 2, mid = r.left + r.width * 0.6;
      const t = (id, x) => new Touch({ identifier: id, target: el, clientX: x, clientY: y });
      const send = (type, d) => el.dispatchEvent(new TouchEvent(type, {
        touches: [t(1, mid - d), t(2, mid + d)], bubbles: true, cancelable: true }));
      send('touchstart', 20);
      send('touchmove', 80);
    });
    await page.waitForTimeout(100);
    const [a3, b3] = await span();
    assert(b3 - a3 <= b0 / 3, `the pinch zooms in about 4x: ${a3}..${b3} of ${b0}`);
    // The clock outside the window brings the window to it.
    await seek(1);
    const [a4] = await span();
    assert(a4 === 0, `the window follows the clock back to the start: ${a4}`);
    await page.keyboard.press('Tab');
    await $('timeline-zoom-all').click();
    const [a5, b5] = await span();
    assert(a5 === 0 && b5 === b0, 'the whole run again');
    // From the keyboard: + and - on a focused marker, 0 for the whole run.
    await page.locator('svg.timeline .mark[tabindex="0"]').focus();
    await page.keyboard.press('+');
    const [a6, b6] = await span();
    assert(b6 - a6 < b0, `+ zooms in: ${a6}..${b6}`);
    await page.keyboard.press('0');
    const [a7, b7] = await span();
    assert(a7 === 0 && b7 === b0, `0 shows the whole run: ${a7}..${b7}`);
    await shots3('17-timeline-zoom', 'timeline');
    await axe('the zoomed timeline');
  }],
  ['legend: every colour and shape of the picture and the timeline, in words', async () => {
    await pickGallery('02-overflow');
    await page.locator('[data-testid="legend"] summary').click();
    await page.locator('[data-testid="legend"] li').first().waitFor();
    const items = await page.locator('[data-testid="legend"] li').allTextContents();
    for (const w of ['410 Gone', 'a relist', 'a reconcile running', 'stale copy', 'evicted', 'a bookmark', 'fault']) {
      assert(items.some((t) => t.includes(w)), `the legend explains "${w}": ${items.join(' | ')}`);
    }
    // Swatches have their own classes: the picture's (counted by tests and tools) stay its own.
    assert(await page.locator('[data-testid="legend"] .msg, [data-testid="legend"] .mark, [data-testid="legend"] .slot').count() === 0, 'no picture classes in the legend');
    const fill = (sel) => page.$eval(sel, (e) => getComputedStyle(e).fill);
    assert(await fill('[data-testid="legend"] .lg-mark.lg-gone') === await fill('svg.timeline .mark.m-gone'), 'the 410 swatch has the 410 marker\'s colour');
    await axe('the legend open');
  }],
  ['explore: worker.js starts the explorer\'s worker, keeps it warm between searches, and a cancel ends it', async () => {
    const p = await pageCountingWorkers();
    await gotoReady(p, base);
    await pickGalleryAt(p, base, '17-level-triggered');
    const id = (t) => p.locator(`[data-testid="${t}"]`);
    const search = async () => {
      await id('explore').click();
      await p.waitForFunction(() => !document.querySelector('[data-testid="explore-cancel"]')
        && document.querySelector('[data-testid="explore-found"], [data-testid="explore-none"]'), null, { timeout: 60000 });
    };
    await search();
    const first = await p.evaluate(() => window.workersStarted);
    await search();
    const second = await p.evaluate(() => window.workersStarted);
    // A cancel mid-search ends the busy worker: the next search needs a new one. (The long
    // search of the cancel test below.)
    await pickGalleryAt(p, base, '19-explore-stale-delete');
    await setEditor(p, (await editorText(p)).replace('run 2m', 'every 1s 30 times from 20s create RabbitmqCluster x{i}\nrun 2m'));
    await p.locator('input[aria-label="Schedules to try at most"]').fill('100000');
    await id('explore-all').check();
    await id('explore').click();
    await id('explore-cancel').click();
    await id('explore-cancelled').waitFor({ timeout: 5000 });
    await id('explore-all').uncheck();
    await search();
    const third = await p.evaluate(() => window.workersStarted);
    await p.close();
    assert(first === 1 && second === 1, `one worker for two searches: ${first}, ${second}`);
    assert(third === 2, `a new worker after a cancel: ${third}`);
  }],
  ['explore: the controller under test is a choice (faults only against it, as explore --controller)', async () => {
    await gotoReady(page, base);
    await pickGallery('54-kubebuilder');
    const options = await $('explore-controller').locator('option').allTextContents();
    assert(options.join(',') === 'every controller,op,statefulsets,kubelet', `the script's controllers: ${options}`);
    const budget = page.locator('input[aria-label="Schedules to try at most"]');
    await budget.fill('150');
    const search = async () => {
      await $('explore').click();
      await page.waitForFunction(() => !document.querySelector('[data-testid="explore-cancel"]')
        && /of \d+ schedules/.test(document.querySelector('[data-testid="explore-stats"]')?.textContent || ''), null, { timeout: 60000 });
      return Number((await $('explore-stats').textContent()).match(/ (\d+) candidate faults/)[1]);
    };
    const every = await search();
    await $('explore-controller').selectOption('op');
    const op = await search();
    assert(op > 0 && op < every, `faults against op only (${op}) are fewer than against every controller (${every})`);
    assert(await $('explore-controller').inputValue() === 'op', 'the choice stays');
    // Another script without op: back to every controller.
    await pickGallery('02-overflow');
    assert(await $('explore-controller').count() === 0, 'one controller: no choice to make');
    await budget.fill('2000');
  }],
  ['explore: a cancelled search keeps its figures and findings and says it was cancelled; the keyboard cancels', async () => {
    await gotoReady(page, base);
    await pickGallery('19-explore-stale-delete');
    // The stale-deletion bug with 30 more clusters: a search of some seconds that finds failures
    // from its first second on.
    await setEditor(page, (await editorText(page)).replace('run 2m', 'every 1s 30 times from 20s create RabbitmqCluster x{i}\nrun 2m'));
    const budget = page.locator('input[aria-label="Schedules to try at most"]');
    assert(await budget.getAttribute('max') === '10000000', `the budget's max is the worker's and the CLI's: ${await budget.getAttribute('max')}`);
    await budget.fill('100000');
    await $('explore-all').check();
    await $('explore').click();
    await page.waitForFunction(() => document.querySelector('[data-testid="explore-cancel"]')
      && document.querySelectorAll('[data-testid="explore-found"] li').length >= 2, null, { timeout: 30000 });
    await shots3('18-explore-running', 'explore-stats');
    // Keyboard only: Tab from "all failures" reaches Cancel; Enter cancels, and the focus moves to
    // the Explore button that takes its place.
    await $('explore-all').focus();
    await page.keyboard.press('Tab');
    assert(await page.evaluate(() => document.activeElement?.dataset.testid) === 'explore-cancel', 'Tab reaches Cancel');
    await page.keyboard.press('Enter');
    await $('explore-cancelled').waitFor({ timeout: 5000 });
    assert(await page.evaluate(() => document.activeElement?.dataset.testid) === 'explore', `the focus is on Explore: ${await page.evaluate(() => document.activeElement?.outerHTML.slice(0, 80))}`);
    const said = await $('explore-cancelled').textContent();
    const stats = await $('explore-stats').textContent();
    const [, tried, planned] = stats.match(/^(\d+) of (\d+) schedules/);
    const failing = Number(stats.match(/ (\d+) failing/)[1]);
    const n = (x) => Number(x).toLocaleString('en');
    assert(said.startsWith(`Cancelled after ${n(tried)} of ${n(planned)} schedules: ${n(failing)} failing so far`), `${said} | ${stats}`);
    assert(Number(tried) > 0 && Number(tried) < Number(planned) && failing >= 2, stats);
    assert(await $('explore-progress').getAttribute('value') === tried, 'the bar stays where the search stopped');
    const found = $('explore-found').locator('li');
    assert(await found.count() === Math.min(failing, 50), `the failures found so far stay listed: ${await found.count()} of ${failing}`);
    assert((await $('explore-found').textContent()).includes('so far'), await $('explore-found').locator('p').textContent());
    await page.waitForTimeout(600);
    assert(await $('explore-stats').textContent() === stats, 'the cancelled search reports nothing more');
    await axe('a cancelled search');
    await shots3('19-explore-cancelled', 'explore-stats');
    // A finding stays openable.
    await $('explore-open').click();
    const src = await editorText(page);
    assert(src.includes('# Found by `listwatch explore`') && src.includes('x{i}'), 'the counterexample is in the editor');
    // A new search replaces the cancelled one.
    await $('explore-all').uncheck();
    await budget.fill('2000');
    await pickGallery('19-explore-stale-delete');
    await $('explore').click();
    await $('explore-cancelled').waitFor({ state: 'detached', timeout: 5000 });
    await page.waitForFunction(() => !document.querySelector('[data-testid="explore-cancel"]')
      && document.querySelector('[data-testid="explore-found"]'), null, { timeout: 60000 });
    assert(await $('explore-cancelled').count() === 0, 'no word of the cancel once a new search ran');
    await shots3('20-explore-found', 'explore-stats');
  }],
  ['explore: failures alike but for their times are one line with "and N more like it", which opens by keyboard and stays open as the search reports', async () => {
    await searchManyFailures();
    await page.waitForFunction(() => document.querySelector('[data-testid="explore-cancel"]')
      && document.querySelectorAll('[data-testid="explore-found"] li').length >= 6, null, { timeout: 60000 });
    const alike = $('explore-alike').first();
    await alike.waitFor({ timeout: 5000 });
    // Keyboard: the summary takes the focus and Enter opens it, while the search still reports.
    await alike.locator('summary').focus();
    assert(!(await alike.evaluate((d) => d.open)), 'closed at first');
    await page.keyboard.press('Enter');
    assert(await alike.evaluate((d) => d.open), 'Enter opens it');
    const stats = await $('explore-stats').textContent();
    await page.waitForFunction((s) => document.querySelector('[data-testid="explore-stats"]').textContent !== s, stats, { timeout: 20000 });
    await page.waitForTimeout(300);
    assert(await alike.evaluate((d) => d.open), 'it stays open as the search reports (the redraw keeps it)');
    await $('explore-cancel').click();
    await $('explore-cancelled').waitFor({ timeout: 5000 });
    const groups = await page.$$eval('[data-testid="explore-found"] ol.failures > li', (lis) => lis.map((li) => {
      const words = (el) => el.querySelector(':scope > span').textContent;
      const d = li.querySelector(':scope > details');
      return { first: words(li), summary: d?.querySelector('summary').textContent ?? null,
        rest: d ? [...d.querySelectorAll('li')].map(words) : [], opens: li.querySelectorAll('button').length };
    }));
    const all = await $('explore-found').locator('li').count();
    const failing = Number((await $('explore-stats').textContent()).match(/ (\d+) failing/)[1]);
    assert(all === Math.min(failing, 50), `every failure is still listed: ${all} of ${failing}`);
    assert(groups.length < all, `alike failures are grouped: ${groups.length} lines for ${all}`);
    const bare = (t) => t.replace(/(?<=^|\s)\d+(?:\.\d+)?(?:ms|s|m)(?![\w./-])/g, '');
    // The grouping itself, on words a search of this scenario does not make: times inside
    // names (`Pod/web-1s`, `op-5m`) tell failures apart; moments alone do not.
    const keys = await page.evaluate(async () => {
      const { alike } = await import(new URL('panels.js', document.baseURI).href);
      const f = (w) => [w, ''];
      return alike([f('hold Pod/web-1s at 2s for 1s'), f('hold Pod/web-2s at 2s for 1s'), f('hold Pod/web-1s at 7.5s for 1s'),
        f('disconnect op-5m at 2s'), f('disconnect op-1m at 2s')]).map((g) => g.length - 1);
    });
    assert(JSON.stringify(keys) === '[2,1,1,1]', `names with times stay apart, moments group: ${JSON.stringify(keys)}`);
    for (const g of groups) {
      assert(g.opens === 1 + g.rest.length, `"Open in the editor" on each: ${g.opens} for ${1 + g.rest.length}`);
      if (!g.rest.length) { assert(g.summary === null, 'a failure alone has no "more like it"'); continue; }
      assert(g.summary === `and ${g.rest.length} more like it`, g.summary);
      for (const r of g.rest) assert(bare(r) === bare(g.first) && r !== g.first, `alike but for the times: ${r} | ${g.first}`);
    }
    const firsts = groups.map((g) => bare(g.first));
    assert(new Set(firsts).size === firsts.length, `one line a kind: ${firsts.join(' | ')}`);
    await axe('failures grouped');
    await shots3('page43-1-failures-open', 'explore-alike');
    await alike.locator('summary').click();
    assert(!(await alike.evaluate((d) => d.open)), 'a click closes it');
    await shots3('page43-1-failures-grouped', 'explore-found');
    await alike.locator('summary').click();
    // A failure inside a group opens in the editor.
    const inner = alike.locator('[data-testid="explore-open-more"]').first();
    const words = await alike.locator('li > span').first().textContent();
    await inner.click();
    const src = await editorText(page);
    assert(src.includes('# Found by `listwatch explore`'), 'the counterexample is in the editor');
    await $('explore-all').uncheck();
    await page.locator('input[aria-label="Schedules to try at most"]').fill('2000');
    assert(words.length > 0, 'the inner failure has words');
  }],
  ['keyboard: a Tab past the script while CodeMirror loads keeps the focus where it went (the script and the first expectation once each)', async () => {
    await page.setViewportSize({ width: 1400, height: 900 });
    // CodeMirror arriving as slowly as on a slow network: the reader's next Tab comes first.
    const slow = async (route) => { await new Promise((r) => setTimeout(r, 1200)); await route.continue(); };
    await page.route('**/editor.js', slow);
    await gotoReady(page, base);
    await pickGallery('02-overflow');
    assert(await $('editor').getAttribute('data-loaded') === 'false', 'the preview, CodeMirror not loaded yet');
    await page.locator('h1').click();
    const name = () => page.evaluate(() => {
      const e = document.activeElement;
      return e ? e.getAttribute('aria-label') || e.textContent.trim().slice(0, 40) : '';
    });
    let n = 0;
    while (!(await name()).startsWith('Scenario script') && n++ < 60) await page.keyboard.press('Tab');
    assert(n < 60, 'Tab reaches the script');
    // On at once, before CodeMirror (loaded by that focus) is in place.
    await page.keyboard.press('Tab');
    const next = await name();
    assert(!next.startsWith('Scenario script'), `the Tab moved on: ${next}`);
    await page.waitForFunction(() => document.querySelector('[data-testid="editor"]').dataset.loaded === 'true', null, { timeout: 10000 });
    await page.waitForTimeout(300);
    assert(await name() === next, `the focus stays on ${next}, not back in the editor: ${await name()}`);
    await page.unroute('**/editor.js', slow);
    // And a click on the preview still opens the editor focused.
    await gotoReady(page, base);
    await page.locator('[data-testid="editor"] .pv').click();
    await page.waitForFunction(() => document.querySelector('[data-testid="editor"]').dataset.loaded === 'true', null, { timeout: 10000 });
    assert(await page.evaluate(() => !!document.activeElement?.closest('.cm-editor')), 'a click opens the editor with the focus in it');
  }],
  ['compare: two runs side by side on one clock, with the differences in outcome', async () => {
    await gotoReady(page, base);
    await pickGallery('11-stale-apiserver');
    await $('compare-toggle').click();
    await $('compare-b').waitFor();
    const fixed = await page.$eval('[data-testid="compare-b"]', (s) => [...s.options].find((o) => o.value.startsWith('12-')).value);
    await $('compare-b').selectOption(fixed);
    await $('compare-run').click();
    await $('compare').waitFor({ timeout: 30000 });
    const runs = page.locator('[data-testid="compare"] [data-testid="run"]');
    assert(await runs.count() === 2, 'two runs');
    assert((await runs.nth(0).getAttribute('data-title')).includes('Stale apiserver'), 'A is the script in the editor');
    assert((await runs.nth(1).getAttribute('data-title')).includes('fixed'), 'B is the fixed twin');
    const diffs = await $('compare-diffs').locator('li').allTextContents();
    assert(diffs.some((d) => /deletes operator Pvc|exists Pvc rabbit-data|only in/.test(d)), `differences listed: ${diffs.join(' | ')}`);
    // One clock: moving it moves both.
    await $('compare-clock').evaluate((el) => { el.value = '22000'; el.dispatchEvent(new Event('input', { bubbles: true })); });
    const last = runs.nth(0).locator('[data-testid="compare-last"]');
    const texts = await last.allTextContents();
    assert((await last.textContent()).startsWith('21.') || (await last.textContent()).startsWith('22.'), `A at the clock: ${texts}`);
    // Side by side, wide: a dialog over the page, not the narrow column; each run's watchers as
    // lanes of states on the clock both share, its moment at the same place in both.
    const boxes = await runs.evaluateAll((rs) => rs.map((r) => r.getBoundingClientRect().toJSON()));
    assert(Math.abs(boxes[0].top - boxes[1].top) < 2 && boxes[1].left >= boxes[0].right - 1, `side by side: ${JSON.stringify(boxes)}`);
    assert(boxes[0].width > 500, `each run has room: ${boxes[0].width} px`);
    const nows = await page.$$eval('[data-testid="compare-now"]', (ls) => ls.map((l) => l.getAttribute('x1')));
    assert(nows.length === 2 && nows[0] === nows[1], `one clock, one place: ${nows}`);
    assert(await runs.nth(0).locator('[data-testid="compare-lane"]').count() >= 1, 'the watchers as lanes');
    await runs.nth(1).locator('[data-testid="compare-lanes"]').click({ position: { x: 400, y: 30 } });
    const moved = await page.$$eval('[data-testid="compare-now"]', (ls) => ls.map((l) => l.getAttribute('x1')));
    assert(moved[0] === moved[1] && moved[0] !== nows[0], `a click on B's lanes moves both: ${moved}`);
    await axe('the comparison');
    // The lanes' text stays at its 12 px wherever the dialog is narrower than two lanes (768 px:
    // side by side, each lane drew its text at about 6 px).
    for (const w of [390, 768, 1400]) {
      await page.setViewportSize({ width: w, height: 900 });
      const scale = await page.$eval('[data-testid="compare-lanes"]', (s) => s.getBoundingClientRect().width / s.viewBox.baseVal.width);
      assert(scale >= 0.95, `at ${w} px the lanes draw at ${scale.toFixed(2)} of their size (text under 12 px)`);
      // Lanes wider than their box say they scroll (on a phone), and only then.
      const [wider, said] = await page.$eval('[data-testid="compare-lanes"]', (s) => {
        const box = s.parentElement, hint = box.nextElementSibling;
        return [box.scrollWidth > box.clientWidth + 1, getComputedStyle(hint).display !== 'none'];
      });
      assert(wider === said && (w !== 390 || said), `at ${w} px: lanes wider than their box ${wider}, hint shown ${said}`);
    }
    await page.setViewportSize({ width: 1400, height: 900 });
    await shots3('15-compare', 'compare');
    await $('compare-close').click();
    assert(!(await $('compare-dialog').evaluate((d) => d.open)), 'Close closes it');
    await $('compare-show').click();
    assert(await $('compare-dialog').evaluate((d) => d.open), 'and it opens again');
    await $('compare-close').click();
  }],
  ['compare: the dialog keeps the focus while open (Tab and Shift+Tab wrap round inside it), Escape closes it', async () => {
    // The comparison of the test above is still there: open it again.
    if (await $('compare-show').count() === 0) {
      await gotoReady(page, base);
      await pickGallery('11-stale-apiserver');
      await $('compare-toggle').click();
      await $('compare-run').click();
    } else await $('compare-show').click();
    await $('compare').waitFor({ timeout: 30000 });
    const dialog = $('compare-dialog');
    assert(await dialog.evaluate((d) => d.open && d.matches(':modal')), 'showModal: the rest of the page is inert');
    const where = () => page.evaluate(() => {
      const a = document.activeElement;
      return { inside: !!a?.closest('dialog[open]'), what: `${a?.tagName} ${a?.dataset?.testid || a?.getAttribute('aria-label') || ''}` };
    });
    const stops = await dialog.evaluate((d) => [...d.querySelectorAll('button, input, select, [tabindex]')].filter((e) => e.tabIndex >= 0 && e.getClientRects().length).length);
    await $('compare-close').focus();
    const path = [];
    for (let i = 0; i < 2 * stops + 2; i++) {
      await page.keyboard.press('Tab');
      const w = await where();
      path.push(w.what);
      assert(w.inside, `Tab ${i + 1} stays inside the dialog: ${path.join(' → ')}`);
    }
    assert(path.filter((p) => p.includes('compare-close')).length >= 2, `Tab wraps round to Close: ${path.join(' → ')}`);
    await $('compare-close').focus();
    await page.keyboard.press('Shift+Tab');
    const back = await where();
    assert(back.inside && !back.what.includes('compare-close'), `Shift+Tab from Close goes to the dialog's last control: ${back.what}`);
    await shots3('page43-4-compare-focus');
    await page.keyboard.press('Escape');
    assert(!(await dialog.evaluate((d) => d.open)), 'Escape closes it');
  }],
];

async function shots3(name, testid) {
  for (const [w, h] of SIZES) {
    await page.setViewportSize({ width: w, height: h });
    await page.waitForTimeout(100);
    if (testid) await $(testid).scrollIntoViewIfNeeded().catch(() => {});
    await page.screenshot({ path: `${shots}${name}-${w}.png` });
  }
  await page.setViewportSize({ width: 1400, height: 900 });
}

const ok = await runTests(tests.filter(([name]) => name.includes(only)));
if (errors.length) console.log('console errors:', errors.join(' | '));
await browser.close();
process.exit(ok && errors.length === 0 ? 0 : 1);
