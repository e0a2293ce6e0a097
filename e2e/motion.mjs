// The picture in motion (issue 27's design): playback in virtual time, the picture's layout at
// every size, the first ten seconds, the sequence view and what screen readers hear.
// Usage: node e2e/motion.mjs URL [only-substring]
import { openSuite, runTests, assert, gotoReady, until, ensureEditor, setEditor, pickGalleryAt, seekTo } from './browser.mjs';

const { base, only, shots, browser, context, page, errors, $ } = await openSuite();
const SIZES = [[390, 844], [768, 1024], [1400, 900]];

const pickGallery = (fragment) => pickGalleryAt(page, base, fragment);
const seek = (n) => seekTo(page, n);

/// The speed slider's position: log10 of virtual seconds per real second.
async function speed(log10) {
  await $('speed').evaluate((el, v) => {
    el.value = String(v); el.dispatchEvent(new Event('input', { bubbles: true }));
  }, log10);
}

const cursor = async () => Number(await $('scrubber').inputValue());
const clock = async () => parseFloat((await $('clock').textContent()).replace('s', ''));

/// The picture's message dots: where each is drawn.
const dots = () => page.$$eval('[data-testid="message"]', (ms) => ms.map((m) => `${m.getAttribute('cx')},${m.getAttribute('cy')}`));


/// Three apiservers, two kinds each, six controllers: eighteen links.
const MANY = `# Many watchers
kind Pod cache fixed 20
kind Other
apiserver a1
apiserver a2
apiserver a3
${[1, 2, 3, 4, 5, 6].map((i) => `controller c${i} for Pod children Other\n  apiserver a${1 + (i % 3)}`).join('\n')}
every 100ms 20 times create Pod p{i}
run 5s
`;
/// Eight apiservers, two kinds: sixteen caches, wider than any screen.
const WIDE = `# Eight apiservers
kind Pod cache fixed 20
kind Other
${[1, 2, 3, 4, 5, 6, 7, 8].map((i) => `apiserver a${i}`).join('\n')}
controller c1 for Pod children Other
  apiserver a8
every 100ms 10 times create Pod p{i}
run 3s
`;

async function setScript(text) {
  await ensureEditor(page);
  await setEditor(page, text);
  await until(page, (t) => document.querySelector('.title')?.textContent === t, text.split('\n')[0].slice(2), 'the script runs');
}

/// Links that do not start in a cache's box or end in a watcher's, or that cross a state pill.
function linkProblems() {
  const svg = document.querySelector('svg.system');
  const boxes = (sel) => [...svg.querySelectorAll(sel)].map((el) => el.getBBox());
  const inside = (p, b) => p.x >= b.x - 1 && p.x <= b.x + b.width + 1 && p.y >= b.y - 1 && p.y <= b.y + b.height + 1;
  const caches = boxes('[data-testid="watch-cache"] rect.hit'), rows = boxes('[data-testid="watcher"] rect.hit');
  const pills = boxes('.state rect');
  const out = [];
  const crosses = (a, b, r) => {
    // An axis-aligned or slanted segment against a box: sample it.
    for (let t = 0; t <= 1; t += 1 / 64) {
      const x = a.x + (b.x - a.x) * t, y = a.y + (b.y - a.y) * t;
      if (x > r.x + 0.5 && x < r.x + r.width - 0.5 && y > r.y + 0.5 && y < r.y + r.height - 0.5) return true;
    }
    return false;
  };
  for (const [n, link] of [...svg.querySelectorAll('[data-testid="link"] :is(line, polyline):not(.hit)')].entries()) {
    const pts = link.tagName === 'line'
      ? [{ x: link.x1.baseVal.value, y: link.y1.baseVal.value }, { x: link.x2.baseVal.value, y: link.y2.baseVal.value }]
      : [...link.points].map((p) => ({ x: p.x, y: p.y }));
    const [first, last] = [pts[0], pts[pts.length - 1]];
    if (!caches.some((b) => inside(first, b))) out.push(`link ${n} starts outside every cache at ${first.x},${first.y}`);
    if (!rows.some((b) => inside(last, b))) out.push(`link ${n} ends outside every watcher at ${last.x},${last.y}`);
    for (let i = 1; i < pts.length; i++) for (const r of pills) if (crosses(pts[i - 1], pts[i], r)) { out.push(`link ${n} crosses a state pill at ${r.x},${r.y}`); break; }
  }
  return out;
}

const ok = await runTests(([
  ['time you can feel: a message on a slow link crosses it while no event happens', async () => {
    await gotoReady(page, base);
    await pickGallery('02-overflow');
    // Event 57 (cursor 58): the connection is restored at 2.000s, the re-watch (#54) is on its
    // way for 100ms; the next event is at 2.050s. At 0.1x that is half a second of real time.
    await seek(58);
    await speed(-1);
    assert((await $('speed-value').textContent()) === '0.1×', `the speed says 0.1×: ${await $('speed-value').textContent()}`);
    const start = await dots();
    assert(start.length >= 1, `the re-watch is drawn on its link: ${start}`);
    await $('play').click();
    const seen = new Set([start.join(' ')]);
    for (let i = 0; i < 4; i++) {
      await page.waitForTimeout(90);
      if (await cursor() !== 58) break;
      seen.add((await dots()).join(' '));
    }
    const t = await clock();
    await $('pause').click();
    assert(seen.size >= 3, `the message moved between events: ${[...seen].join(' | ')}`);
    assert(t > 2.0 && t <= 2.05, `the clock ran between the events: ${t}`);
  }],
  ['time you can feel: a 1.075 s backoff takes over a second at 1×', async () => {
    await pickGallery('02-overflow');
    await speed(0);
    assert((await $('speed-value').textContent()) === '1×', 'the speed says 1×');
    const w = '[data-testid="watcher"][data-controller="ctl"][data-kind="Pod"]';
    await $('next-410').click();
    await page.waitForSelector(`${w}[data-state="backoff-relist"]`, { timeout: 5000 }).catch(() => {});
    // Stand at the backoff itself, then play to the relist.
    for (let i = 0; i < 5 && await page.locator(`${w}[data-state="backoff-relist"]`).count() === 0; i++) await $('step-forward').click();
    assert(await page.locator(`${w}[data-state="backoff-relist"]`).count() === 1, 'backing off');
    const t0 = Date.now();
    await $('play').click();
    // The clock as the watcher starts listing, read in the same frame.
    const at = await (await page.waitForFunction((sel) => document.querySelector(sel)
      && document.querySelector('[data-testid="clock"]').textContent, `${w}[data-state="listing"]`, { timeout: 5000, polling: 'raf' })).jsonValue();
    const took = Date.now() - t0;
    await $('pause').click();
    assert(took >= 950 && took < 2500, `the backoff took ${took} ms of real time at 1×`);
    assert(at === '3.275s', `the relist at 3.275s: ${at}`);
  }],
  ['time you can feel: the events of one moment play one after another, in order', async () => {
    await pickGallery('02-overflow');
    await speed(0);
    await $('play').click();
    const seen = [];
    const t0 = Date.now();
    while (Date.now() - t0 < 1000) {
      const [c, t] = [await cursor(), await clock()];
      if (t === 0 && !seen.includes(c)) seen.push(c);
      await page.waitForTimeout(15);
    }
    await $('pause').click();
    // 18 events at 0.000s; each is on screen for a beat.
    assert(seen.length >= 8, `events of 0.000s seen one by one: ${seen.join(',')}`);
    assert(seen.every((c, i) => i === 0 || c > seen[i - 1]), `in order: ${seen.join(',')}`);
    // Fast-forward plays the whole 10 s run in well under a second.
    await seek(0);
    await speed(3);
    await $('play').click();
    await $('play').waitFor({ timeout: 3000 });
    assert(await cursor() === Number(await $('scrubber').getAttribute('max')), 'fast-forward to the end');
  }],
  ['time you can feel: screenshots of a message in flight at 390, 768 and 1400 px', async () => {
    await pickGallery('02-overflow');
    await seek(58);
    await speed(-1);
    await $('play').click();
    await page.waitForTimeout(250);
    await $('pause').click();
    const t = await clock();
    assert(t > 2.0 && t < 2.05, `paused mid-flight: ${t}`);
    const [dot] = await dots();
    for (const [w, h] of SIZES) {
      await page.setViewportSize({ width: w, height: h });
      await page.waitForTimeout(100);
      assert((await dots())[0] === dot, `still mid-flight at ${w}px`);
      await page.screenshot({ path: `${shots}motion-in-flight-${w}.png` });
    }
    await page.setViewportSize({ width: 1400, height: 900 });
    assert(errors.length === 0, `no console errors: ${errors.join(' | ')}`);
  }],

  // ---- The picture's layout ----------------------------------------------------------------
  ['layout: links start and end at the parts they join and cross no state pill, at every size', async () => {
    for (const [fragment, script] of [['02-overflow', null], ['many', MANY], ['wide', WIDE]]) {
      if (script) await setScript(script); else await pickGallery(fragment);
      for (const [w, h] of SIZES) {
        await page.setViewportSize({ width: w, height: h });
        await page.waitForTimeout(80);
        const bad = await page.evaluate(linkProblems);
        assert(bad.length === 0, `${fragment} at ${w}px: ${bad.slice(0, 4).join(' | ')}`);
        await page.screenshot({ path: `${shots}layout-${fragment}-${w}.png`, fullPage: true });
      }
    }
    await page.setViewportSize({ width: 1400, height: 900 });
  }],
  ['layout: no empty third: the rings and the queues spread over the picture', async () => {
    await pickGallery('02-overflow');
    const thirds = await page.evaluate(() => {
      const svg = document.querySelector('svg.system');
      const width = svg.viewBox.baseVal.width;
      const covered = (sel) => [0, 1, 2].map((t) => [...svg.querySelectorAll(sel)].some((el) => {
        const b = el.getBBox();
        return b.x < (t + 1) * width / 3 && b.x + b.width > t * width / 3;
      }));
      return { rings: covered('[data-testid="watch-cache"] rect.hit'), queues: covered('[data-testid="queue"] rect.hit') };
    });
    assert(thirds.rings.every(Boolean), `the rings reach every third: ${thirds.rings}`);
    assert(thirds.queues.every(Boolean), `the queues reach every third: ${thirds.queues}`);
  }],
  ['layout: at 390 px the header is one line with a usable gallery, the picture\'s text is at least 12 px and it says it scrolls (54: 5 kinds, 8 watchers, the worst case)', async () => {
    for (const [fragment, script] of [['02-overflow', null], ['wide', WIDE], ['54-kubebuilder', null]]) {
      if (script) await setScript(script); else await pickGallery(fragment);
      for (const [w, h] of SIZES) {
        await page.setViewportSize({ width: w, height: h });
        await page.waitForTimeout(80);
        const r = await page.evaluate(() => {
          const svg = document.querySelector('svg.system');
          const scale = svg.getScreenCTM().a;
          const small = [...svg.querySelectorAll('text')].filter((t) => t.getBBox().width > 0)
            .map((t) => [t.textContent, parseFloat(getComputedStyle(t).fontSize) * scale]).filter(([, px]) => px < 11.95);
          const box = document.querySelector('.picture');
          const scrolls = box.scrollWidth > box.clientWidth + 1;
          const hint = document.querySelector('[data-testid="picture-scrolls"]');
          const tops = [...document.querySelectorAll('header > *')].filter((e) => e.getBoundingClientRect().width > 0)
            .map((e) => Math.round(e.getBoundingClientRect().top + e.getBoundingClientRect().height / 2));
          return { small: small.slice(0, 3), scrolls, hint: !!hint && hint.getBoundingClientRect().height > 0, tops };
        });
        assert(r.small.length === 0, `${fragment} at ${w}px: text under 12 px: ${JSON.stringify(r.small)}`);
        assert(!r.scrolls || r.hint, `${fragment} at ${w}px: the picture scrolls and says so`);
        if (w === 390) {
          // One line, and a gallery a phone can use (it once shrank to nothing beside the
          // buttons).
          const sorted = [...r.tops].sort((a, b) => a - b);
          const rows = 1 + sorted.filter((t, i) => i > 0 && t - sorted[i - 1] > 12).length;
          assert(rows === 1, `the header on one line at 390px: ${r.tops}`);
          await page.screenshot({ path: `${shots}29-phone-${fragment}-390.png` });
          const g = await page.$eval('header .gallery select', (s) => s.getBoundingClientRect().width);
          assert(g >= 200, `the gallery is usable at 390px: ${g} px wide`);
        }
      }
    }
    await page.setViewportSize({ width: 1400, height: 900 });
  }],
  // ---- The first ten seconds -----------------------------------------------------------------
  ['first ten seconds: a first visit names the scenario, opens the script at its first statement, fits 1400x900', async () => {
    await page.setViewportSize({ width: 1400, height: 900 });
    await gotoReady(page, base);
    await page.evaluate(() => localStorage.clear());
    await page.goto(base);
    await page.waitForSelector('html[data-ready]', { state: 'attached' });
    await page.waitForSelector('[data-testid="watch-cache"]');
    const named = await page.$eval('[data-testid="gallery"]', (s) => s.selectedOptions[0]?.dataset.file || s.selectedOptions[0]?.textContent);
    assert(named === '02-overflow-410-relist.lw', `the gallery names what is loaded: ${named}`);
    const top = await page.evaluate(() => {
      const wrap = document.querySelector('[data-testid="editor"]');
      const r = wrap.getBoundingClientRect();
      const line = [...wrap.querySelectorAll('.pv-line')].find((l) => l.getBoundingClientRect().bottom > r.top + 4);
      return line ? line.textContent.replace(/^\d+/, '') : null;
    });
    assert(top && !top.trim().startsWith('#') && top.trim() !== '', `the script opens at its first statement: ${top}`);
    const fit = await page.evaluate(() => ['svg.system', 'svg.timeline', '[data-testid="explanation"] h2'].map((sel) => {
      const r = document.querySelector(sel).getBoundingClientRect();
      return [sel, Math.round(r.top), Math.round(r.bottom)];
    }));
    for (const [sel, t, b] of fit) assert(t >= 0 && b <= 900, `${sel} visible without scrolling at 1400x900: ${t}..${b}`);
    await page.screenshot({ path: `${shots}first-visit-1400.png` });
  }],
  ['first ten seconds: one click plays the 410 story in under 15 s', async () => {
    const t0 = Date.now();
    await $('play').click();
    const w = '[data-testid="watcher"][data-controller="ctl"][data-kind="Pod"]';
    await page.waitForSelector(`${w}.gone`, { timeout: 15000 });
    const gone = Date.now() - t0;
    await page.screenshot({ path: `${shots}first-visit-410-1400.png` });
    // The relist and the reconciles after it: the queue counts five.
    await until(page, () => /5 reconciles/.test(document.querySelector('[data-testid="queue"]').textContent), null, 'five reconciles within 15 s', Math.max(1000, 15000 - (Date.now() - t0)));
    const story = Date.now() - t0;
    await $('pause').click().catch(() => {});
    assert(story < 15000, `the 410 at ${gone} ms, the story told in ${story} ms`);
  }],
  // ---- Screen readers ------------------------------------------------------------------------
  ['screen readers: the moment in words when playback stops, silence on every event while it plays', async () => {
    await pickGallery('02-overflow');
    await seek(70);
    const said = await $('announce').textContent();
    assert(/At 2\.\d{3}s, event 70 of \d+/.test(said), `the moment: ${said}`);
    assert(/watcher ctl\/Pod (empty|listing|listed|watching|backoff-relist|backoff-rewatch)/.test(said), `the watcher's state in words: ${said}`);
    assert(/cache of Pod holds \d+ of 3/.test(said) && /queue of ctl/.test(said), `caches and queues: ${said}`);
    assert(await $('announce').getAttribute('aria-live') === 'polite', 'a polite live region');
    assert(await $('explanation').getAttribute('aria-live') === 'polite', '"Why?" speaks when paused');
    await speed(0);
    await $('play').click();
    const heard = new Set();
    for (let i = 0; i < 15; i++) {
      heard.add(await $('announce').textContent());
      assert(await $('explanation').getAttribute('aria-live') === 'off', '"Why?" is silent while playing');
      await page.waitForTimeout(60);
    }
    const moved = await cursor();
    await $('pause').click();
    assert(moved > 70, 'playback moved on');
    assert(heard.size === 1 && [...heard][0] === 'Playing.', `one word while playing: ${[...heard].join(' | ')}`);
    assert((await $('announce').textContent()).includes(`event ${await cursor()} of`), 'the moment once paused');
  }],
  // ---- The sequence view ---------------------------------------------------------------------
  ['sequence view: loaded on demand, lanes for etcd, apiserver, reflectors and controller, synchronised, exported', async () => {
    const loaded = [];
    page.on('request', (r) => loaded.push(new URL(r.url()).pathname));
    await gotoReady(page, base);
    await pickGallery('02-overflow');
    assert(!loaded.some((p) => p.endsWith('sequence.js')), 'not part of the first load');
    await seek(69);
    await $('sequence-toggle').click();
    await $('sequence').waitFor({ timeout: 20000 });
    const heads = await page.$$eval('svg.sequence-head .seq-head', (ts) => ts.map((t) => t.firstChild.textContent));
    for (const lane of ['etcd', 'apiserver', 'ctl/Pod', 'ctl/Other', 'ctl']) assert(heads.includes(lane), `a lane for ${lane}: ${heads}`);
    const now = () => page.$eval('svg.sequence .seq-item.now', (g) => Number(g.dataset.event));
    assert(await now() === 68, `the event on screen (the 410) is marked: ${await now()}`);
    assert(await page.$eval('svg.sequence .seq-item.now', (g) => g.dataset.testid) === 'seq-arrow', 'the 410 is an arrow');
    await $('step-forward').click();
    await until(page, () => Number(document.querySelector('svg.sequence .seq-item.now')?.dataset.event) === 69, null, 'follows a step');
    // A request on the slow link is drawn from the row it left to the row it arrived.
    const slanted = await page.$$eval('svg.sequence .seq-watch_request line', (ls) => ls.some((l) => l.getAttribute('y1') !== l.getAttribute('y2')));
    assert(slanted, 'a delayed request slants down to its arrival');
    await page.locator('svg.sequence [data-testid="seq-arrow"][data-event="54"] text').first().click({ timeout: 5000 });
    assert(await cursor() === 55, `a click jumps there: ${await cursor()}`);
    // Every label inside the picture (the last lane's on its left), and the event on screen's
    // in bold, not outlined by the timeline's `.now` rule.
    const outside = await page.$eval('svg.sequence', (svg) => {
      const w = Number(svg.getAttribute('width'));
      return [...svg.querySelectorAll('.seq-item text')].filter((t) => { const b = t.getBBox(); return b.x < 0 || b.x + b.width > w + 0.5; }).map((t) => t.textContent);
    });
    assert(outside.length === 0, `labels inside the picture: ${outside.join(' | ')}`);
    const outline = await page.$eval('svg.sequence .seq-item.now text', (t) => getComputedStyle(t).stroke);
    assert(outline === 'none', `the bold label is not outlined: ${outline}`);
    const [download] = await Promise.all([page.waitForEvent('download'), $('sequence-export').click()]);
    const path = await download.path();
    const text = (await import('node:fs')).readFileSync(path, 'utf8');
    assert(text.startsWith('<svg') && text.includes('seq-arrow') && text.includes('etcd'), 'an SVG of the sequence');
    for (const [w, h] of SIZES) {
      await page.setViewportSize({ width: w, height: h });
      await $('sequence').scrollIntoViewIfNeeded();
      await page.screenshot({ path: `${shots}sequence-${w}.png` });
    }
    await page.setViewportSize({ width: 1400, height: 900 });
    assert(errors.length === 0, `no console errors: ${errors.join(' | ')}`);
  }],
  ['sequence view: the keyboard reaches its arrows (one tab stop, Up and Down between them), Enter or Space jumps there, a ring shows which', async () => {
    await gotoReady(page, base);
    await pickGallery('02-overflow');
    await seek(69);
    if (await $('sequence').count() === 0) await $('sequence-toggle').click();
    await $('sequence').waitFor({ timeout: 20000 });
    const focused = () => page.evaluate(() => {
      const a = document.activeElement;
      return { event: a.dataset?.event ?? null, role: a.getAttribute('role'), label: a.getAttribute('aria-label'), testid: a.dataset?.testid ?? null,
        ring: getComputedStyle(a).outlineStyle, inSvg: !!a.closest?.('svg.sequence') };
    });
    assert(await page.locator('svg.sequence .seq-item[tabindex="0"]').count() === 1, 'one tab stop among the items');
    // Tab: the Export button, the scrolling box, then the event on screen.
    await $('sequence-export').focus();
    await page.keyboard.press('Tab');
    await page.keyboard.press('Tab');
    let f = await focused();
    assert(f.inSvg && f.event === '68' && f.role === 'button', `Tab reaches the event on screen, a button: ${JSON.stringify(f)}`);
    assert(f.testid === 'seq-arrow' && /watch_failed|410|Gone|too old/i.test(f.label) && f.label.includes(' to '), `named by what it is: ${f.label}`);
    assert(f.ring === 'solid', `a visible focus ring: ${f.ring}`);
    // Up to an earlier arrow, Enter jumps there as a click does, and the focus stays on it.
    let target = null;
    for (let i = 0; i < 40 && !target; i++) {
      await page.keyboard.press('ArrowUp');
      f = await focused();
      if (f.testid === 'seq-arrow') target = f.event;
    }
    assert(target !== null && Number(target) < 68, `ArrowUp reaches an earlier arrow: ${JSON.stringify(f)}`);
    await page.keyboard.press('Enter');
    await until(page, (t) => Number(document.querySelector('[data-testid="scrubber"]').value) === Number(t) + 1, target, 'Enter jumps to the arrow');
    f = await focused();
    assert(f.event === target && f.inSvg, `the focus stays on the arrow after the redraw: ${JSON.stringify(f)}`);
    assert(await page.$eval('svg.sequence .seq-item.now', (g) => g.dataset.event) === target, 'it is the event on screen now');
    // Down and Space: the next item, jumped to.
    await page.keyboard.press('ArrowDown');
    const next = (await focused()).event;
    assert(Number(next) > Number(target), `ArrowDown goes to a later item: ${next}`);
    await page.keyboard.press(' ');
    await until(page, (t) => Number(document.querySelector('[data-testid="scrubber"]').value) === Number(t) + 1, next, 'Space jumps too');
    // Tab leaves the picture at once: not one stop an item.
    await page.keyboard.press('Tab');
    assert(!(await focused()).inSvg, 'one Tab leaves the sequence');
    await page.keyboard.press('Shift+Tab');
    assert((await focused()).event === next, `Shift+Tab comes back to the item last reached: ${JSON.stringify(await focused())}`);
    for (const [w, h] of SIZES) {
      await page.setViewportSize({ width: w, height: h });
      await page.waitForTimeout(100);
      await page.evaluate(() => document.activeElement.scrollIntoView({ block: 'center', inline: 'center' }));
      await page.screenshot({ path: `${shots}page43-2-sequence-focus-${w}.png` });
    }
    await page.setViewportSize({ width: 1400, height: 900 });
    assert(errors.length === 0, `no console errors: ${errors.join(' | ')}`);
  }],
]).filter(([name]) => name.includes(only)));

await browser.close();
process.exit(ok ? 0 : 1);
