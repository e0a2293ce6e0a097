// Share links, embedding and hostile input, in headless Chromium. Usage: node e2e/share.mjs URL
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import http from 'node:http';
import { extname } from 'node:path';
import { launch, runTests, assert, editorText, setEditor } from './browser.mjs';

const base = process.argv[2] || 'http://127.0.0.1:8080/';
const root = new URL('../', import.meta.url).pathname;
const shots = new URL('./screenshots/', import.meta.url).pathname;
const cli = (args) => {
  const bin = root + 'target/debug/listwatch';
  return existsSync(bin)
    ? execFileSync(bin, args, { cwd: root }).toString()
    : execFileSync('cargo', ['run', '-q', '-p', 'listwatch', '--', ...args], { cwd: root }).toString();
};

// The built site served under a sub-path, as GitHub Pages serves a project site.
const dist = root + 'dist/';
const TYPES = { '.html': 'text/html', '.js': 'text/javascript', '.wasm': 'application/wasm', '.css': 'text/css' };
const subpath = await new Promise((resolve) => {
  const srv = http.createServer((req, resp) => {
    const path = new URL(req.url, 'http://x').pathname;
    const rel = path.startsWith('/docs/listwatch/') ? path.slice('/docs/listwatch/'.length) || 'index.html' : null;
    if (rel === null || rel.includes('..')) { resp.writeHead(404); return resp.end(); }
    try {
      const body = readFileSync(dist + rel);
      resp.writeHead(200, { 'content-type': TYPES[extname(rel)] || 'application/octet-stream' });
      resp.end(body);
    } catch { resp.writeHead(404); resp.end(); }
  });
  srv.listen(0, '127.0.0.1', () => resolve(srv));
});

const browser = await launch();
const context = await browser.newContext({ viewport: { width: 1400, height: 1000 } });
await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: new URL(base).origin });
const page = await context.newPage();
const errors = [];
page.on('pageerror', (e) => errors.push(String(e)));
let dialogs = 0;
page.on('dialog', async (d) => { dialogs++; await d.dismiss(); });
const $ = (id) => page.locator(`[data-testid="${id}"]`);
const overflow = readFileSync(root + 'scenarios/02-overflow-410-relist.lw', 'utf8');

async function openFresh(url) {
  await page.goto(base);
  await page.evaluate(() => localStorage.clear());
  await page.goto('about:blank');
  await page.goto(url);
  await $('editor').waitFor();
}

const ok = await runTests([
  ['a link made by the CLI opens the same text at the same moment', async () => {
    const link = cli(['share', 'scenarios/02-overflow-410-relist.lw', '--at', '2.2s', '--base', base]).trim();
    await openFresh(link);
    assert(await editorText(page) === overflow, 'the same text');
    assert(await $('clock').textContent() === '2.200s', `the same moment: ${await $('clock').textContent()}`);
  }],
  ['the address bar follows the editor, and Copy link round-trips', async () => {
    await openFresh(base);
    const src = (await editorText(page)).replace('run 10s', 'run 12s');
    await setEditor(page, src);
    await page.waitForFunction(() => location.hash.startsWith('#lw2.'));
    await page.click('[data-testid="copy-link"]');
    const copied = await page.evaluate(() => navigator.clipboard.readText());
    assert(copied.includes('#lw2.'), `a share link: ${copied}`);
    await page.waitForTimeout(400);
    assert(copied === page.url(), 'the copied link is the address bar');
    const other = await context.newPage();
    await other.goto(copied);
    await other.locator('[data-testid="editor"]').waitFor();
    assert(await editorText(other) === src, 'the link reproduces the text');
    assert(cli(['open', copied]) === src, 'the CLI reads the page\'s link');
    await other.close();
  }],
  ['each kind of broken link says what is wrong and keeps the autosaved text', async () => {
    await openFresh(base);
    await setEditor(page, '# my own work\nkind Pod\n');
    await page.waitForTimeout(100);
    const good = cli(['share', 'scenarios/01-initial-list-and-watch.lw', '--base', base]).trim();
    const cases = [
      [good.slice(0, good.length - 30), 'incomplete or damaged'],
      [good.replace('#lw2.', '#lw2.$$'), 'altered'],
      // One character changed (in the checksum's bits): refused, not opened as another script.
      [good.slice(0, -2) + (good.at(-2) === 'A' ? 'B' : 'A') + good.at(-1), 'altered or cut'],
      [base + '#hello', 'not a listwatch link'],
      [base + '#lw9.AAAA', 'newer listwatch'],
      [base + '#lw2.' + 'A'.repeat(300000), 'characters long'],
    ];
    for (const [url, words] of cases) {
      await page.goto('about:blank');
      await page.goto(url);
      const banner = await $('link-error').textContent();
      assert(banner.includes(words), `"${words}" in "${banner}"`);
      assert((await editorText(page)).startsWith('# my own work'), 'the autosaved text is kept');
    }
    await page.screenshot({ path: shots + '05-broken-link.png' });
  }],
  ['a decompression bomb is refused', async () => {
    const bomb = readFileSync(root + 'e2e/fixtures/bomb.link', 'utf8').trim();
    await page.goto('about:blank');
    await page.goto(base + bomb);
    assert((await $('link-error').textContent()).includes('expands to more than'), 'bomb refused');
  }],
  ['the embed view shows no editor chrome, links to the playground, reports its height', async () => {
    const link = cli(['share', 'scenarios/02-overflow-410-relist.lw', '--base', base + '?embed']).trim();
    await page.goto('about:blank');
    await page.goto(link);
    await $('embed').waitFor();
    assert(await $('editor').count() === 0, 'no editor');
    assert(await page.locator('header').count() === 0, 'no header');
    assert(await $('gallery').count() === 0, 'no gallery');
    assert(await page.locator('[data-testid="watch-cache"]').count() >= 1, 'the view');
    const open = await $('open-in-playground').getAttribute('href');
    assert(open.includes('#lw2.') && !open.includes('embed'), `open in playground: ${open}`);
    const before = page.url();
    await page.click('[data-testid="step-forward"]');
    await page.waitForTimeout(400);
    assert(page.url() === before, 'the embed never rewrites its URL');
  }],
  ['embed.js turns the demo page\'s blocks into live playgrounds that fit their height', async () => {
    await page.goto(base + 'embed-demo.html');
    await page.waitForSelector('iframe.listwatch-embed');
    const frames = page.locator('iframe.listwatch-embed');
    assert(await frames.count() === 2, 'two embeds');
    await page.waitForFunction(() => [...document.querySelectorAll('iframe.listwatch-embed')].every((f) => f.style.height !== '560px'), null, { timeout: 15000 });
    const first = page.frameLocator('iframe.listwatch-embed').first();
    await first.locator('[data-testid="watch-cache"][data-capacity="2"]').waitFor();
    assert(await first.locator('[data-testid="editor"]').count() === 0, 'first block: no editor');
    const second = page.frameLocator('iframe.listwatch-embed').nth(1);
    await second.locator('[data-testid="editor"]').waitFor();
    assert(await second.locator('[data-testid="editor"] .pv[aria-readonly="true"]').count() === 1, 'a read-only editor');
    assert(await second.locator('[data-testid="editor"] .tok-keyword').count() > 0, 'highlighted');
    await page.screenshot({ path: shots + '06-embed-demo.png', fullPage: true });
  }],
  ['export: the trace as the CLI\'s JSON, the view as SVG and PNG, a Markdown snippet', async () => {
    await openFresh(base);
    const want = JSON.parse(cli(['run', 'scenarios/02-overflow-410-relist.lw', '--json']));
    const save = async (id) => {
      const [dl] = await Promise.all([page.waitForEvent('download'), page.click(`[data-testid="${id}"]`)]);
      return readFileSync(await dl.path());
    };
    const json = JSON.parse((await save('export-json')).toString());
    assert(json.format === 'listwatch-trace/1', 'the documented format');
    assert(json.trace_hash === want.trace_hash && json.events.length === want.events.length, 'the same document the CLI writes');
    await page.click('[data-testid="next-410"]');
    const svg = (await save('export-svg')).toString();
    assert(svg.startsWith('<svg') && svg.includes('data-testid="watch-cache"') && svg.includes('<style'), 'a standalone SVG');
    const png = await save('export-png');
    assert(png.subarray(1, 4).toString() === 'PNG' && png.length > 5000, `a PNG image (${png.length} bytes)`);
    await page.click('[data-testid="export-markdown"]');
    const md = await page.evaluate(() => navigator.clipboard.readText());
    assert(md.startsWith('![Watch-cache overflow') && md.includes('(listwatch.png)') && md.includes('#lw2.'), md);
  }],
  ['the built site works from a sub-path, worker and embeds included', async () => {
    const at = `http://127.0.0.1:${subpath.address().port}/docs/listwatch/`;
    const missing = [];
    const p = await context.newPage();
    p.on('response', (r) => { if (r.status() >= 400) missing.push(r.url()); });
    await p.goto(at);
    await p.locator('[data-testid="watch-cache"]').first().waitFor();
    await p.click('[data-testid="explore"]');
    await p.locator('[data-testid="explore-stats"]').waitFor();
    await p.waitForFunction(() => /^[1-9]\d* of/.test(document.querySelector('[data-testid="explore-stats"]').textContent), null, { timeout: 30000 });
    await p.goto(at + 'embed-demo.html');
    await p.frameLocator('iframe.listwatch-embed').first().locator('[data-testid="watch-cache"]').first().waitFor();
    assert(missing.length === 0, `nothing missing: ${missing.join(', ')}`);
    await p.close();
  }],
  ['user text never becomes HTML', async () => {
    await openFresh(base);
    const evil = '# <img src=x onerror=alert(1)>\nkind X<img/src=x/onerror=alert(2)>\ncontroller c<b>x</b> for X<img/src=x/onerror=alert(2)> mirror Y\nkind Y\nat 1s say "<img src=x onerror=alert(1)><script>alert(3)</script>"\nat 0s create X<img/src=x/onerror=alert(2)> a\n';
    await setEditor(page, evil);
    await page.waitForTimeout(200);
    await page.click('button[aria-label="Next relist"]').catch(() => {});
    await page.locator('[data-testid="scrubber"]').evaluate((el) => { el.value = el.max; el.dispatchEvent(new Event('input', { bubbles: true })); });
    await page.waitForTimeout(200);
    assert(await page.locator('img[src="x"]').count() === 0, 'no injected image');
    assert(await page.locator('script:has-text("alert(3)")').count() === 0, 'no injected script');
    assert(dialogs === 0, 'no alert fired');
    assert(errors.length === 0, `no page errors: ${errors.join(' | ')}`);
  }],
]);

await browser.close();
subpath.close();
process.exit(ok ? 0 : 1);
