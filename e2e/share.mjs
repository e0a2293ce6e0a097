// Share links, embedding and hostile input, in headless Chromium. Usage: node e2e/share.mjs URL
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import http from 'node:http';
import { extname } from 'node:path';
import { launch, runTests, assert, editorText, ensureEditor, setEditor, ready, gotoReady, until, shootBoth } from './browser.mjs';

const base = process.argv[2] || 'http://127.0.0.1:8080/';
const root = new URL('../', import.meta.url).pathname;
const shots = new URL('./screenshots/', import.meta.url).pathname;
const cli = (args) => {
  const bin = (process.env.CARGO_TARGET_DIR || root + 'target') + '/debug/listwatch';
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
  // Wait for the app before clearing: it autosaves as it starts, and would refill the storage.
  await gotoReady(page, base);
  await page.evaluate(() => localStorage.clear());
  await page.goto('about:blank');
  await gotoReady(page, url);
  await $('editor').waitFor();
}

const autosaved = () => page.evaluate(() => localStorage.getItem('listwatch.script'));
const initial = readFileSync(root + 'scenarios/01-initial-list-and-watch.lw', 'utf8');
/// The page's own work, autosaved, with no link in the address bar.
async function ownWork(text) {
  await openFresh(base);
  await setEditor(page, text);
  await until(page, (t) => localStorage.getItem('listwatch.script') === t, text, 'autosaved');
}

const ok = await runTests([
  ['a link made by the CLI opens the same text at the same moment', async () => {
    const link = cli(['share', 'scenarios/02-overflow-410-relist.lw', '--at', '2.2s', '--base', base]).trim();
    await openFresh(link);
    assert(await editorText(page) === overflow, 'the same text');
    assert(await $('clock').textContent() === '2.200s', `the same moment: ${await $('clock').textContent()}`);
  }],
  ['a running reconcile that read a stale cache is marked in the picture, its reads in its tooltip', async () => {
    // Gallery 30 (own logic, delete by name) restarted against a paused apiserver.
    const src = readFileSync(root + 'scenarios/30-own-logic-stale-delete-by-name.lw', 'utf8')
      .split('\n').filter((l) => !l.startsWith('expect')).join('\n')
      + '\nat 5s pause b\nat 10001ms crash op\nat 10001ms restart op on b\nat 12s resume b\n';
    const file = mkdtempSync(tmpdir() + '/listwatch-e2e-') + '/stale30.lw';
    writeFileSync(file, src);
    const link = cli(['share', file, '--at', '10.002s', '--base', base]).trim();
    await openFresh(link);
    const chip = page.locator('[data-stale-read="true"]');
    assert(await chip.count() === 1, 'one running reconcile marked');
    assert((await chip.locator('text').textContent()).endsWith('!'), 'marked in text, not only colour');
    const tip = await chip.locator('title').textContent();
    assert(tip.includes('(stale: etcd has rv 8)') && tip.includes('read Pvc/default/zk-data'), tip);
    assert(/write \d+ of \d+ made/.test(tip), `the running step: ${tip}`);
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
    await gotoReady(other, copied);
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
      await gotoReady(page, url);
      const banner = await $('link-error').textContent();
      assert(banner.includes(words), `"${words}" in "${banner}"`);
      assert((await editorText(page)).startsWith('# my own work'), 'the autosaved text is kept');
      assert((await autosaved()).startsWith('# my own work'), 'and stays autosaved');
      assert(await $('restore-notice').count() === 0, 'nothing to restore: nothing was replaced');
      if (words === 'altered or cut') await shootBoth(page, shots + '05-broken-link.png');
    }
  }],
  ['an old lw1 link still opens, and the address bar then carries it as lw2', async () => {
    await openFresh(base + '#lw1.AScA2P90PTIyMDAKCiMgaGVsbG8Ka2luZCBQb2QgY2FjaGUgZml4ZWQgMwo');
    assert(await editorText(page) === '# hello\nkind Pod cache fixed 3\n', 'the lw1 script');
    assert(await $('link-error').count() === 0, 'no error');
    await until(page, () => location.hash.startsWith('#lw2.'), null, 'rewritten as lw2');
  }],
  ['a link shows its script but the autosaved one stays until you edit; Restore brings it back', async () => {
    const mine = '# my own work\nkind Pod\n';
    await ownWork(mine);
    const link = cli(['share', 'scenarios/01-initial-list-and-watch.lw', '--base', base]).trim();
    await page.goto('about:blank');
    await gotoReady(page, link);
    assert(await editorText(page) === initial, 'the link\'s script is shown');
    await $('restore-notice').waitFor();
    assert((await $('restore-notice').textContent()).includes('Your previous script is kept'), 'the notice says so');
    await page.waitForTimeout(500);
    assert(await autosaved() === mine, 'the autosave is not overwritten by the link');
    assert(page.url() === link, 'the address stays the link while it is not yours');
    await shootBoth(page, shots + '09-restore-notice.png');
    // A reload still shows the link, with the autosave still kept.
    await page.reload();
    await ready(page);
    assert(await editorText(page) === initial && await $('restore-notice').count() === 1, 'reload: the link again');
    await page.click('[data-testid="restore"]');
    assert(await editorText(page) === mine, 'Restore puts the autosaved script back');
    assert(await $('restore-notice').count() === 0, 'the notice goes');
    assert(await autosaved() === mine, 'still autosaved');
    // Open it again, and edit: the edit is the user's work now.
    await page.goto('about:blank');
    await gotoReady(page, link);
    await $('restore-notice').waitFor();
    await setEditor(page, initial + '# edited\n');
    await until(page, () => !document.querySelector('[data-testid="restore-notice"]'), null, 'an edit makes it yours');
    await until(page, () => (localStorage.getItem('listwatch.script') || '').endsWith('# edited\n'), null, 'the edit is autosaved');
    // "Keep the link's script" accepts it without editing.
    await ownWork(mine);
    await page.goto('about:blank');
    await gotoReady(page, link);
    await page.click('[data-testid="accept-link"]');
    await until(page, (t) => localStorage.getItem('listwatch.script') === t, initial, 'kept: autosaved');
    assert(await $('restore-notice').count() === 0, 'the notice goes');
  }],
  ['a link pasted into an open page opens; a broken one only says why', async () => {
    const mine = '# my own work\nkind Pod\n';
    await ownWork(mine);
    const frag = (l) => l.slice(l.indexOf('#'));
    const link = cli(['share', 'scenarios/01-initial-list-and-watch.lw', '--base', base]).trim();
    // Only the fragment changes: the page is not reloaded.
    await page.evaluate(() => { window.__samePage = true; });
    await page.goto(base + frag(link));
    await until(page, (t) => document.querySelector('[data-testid="editor"]').cmView.state.doc.toString() === t, initial, 'the pasted link opens');
    assert(await page.evaluate(() => window.__samePage) === true, 'without a reload');
    await $('restore-notice').waitFor();
    assert(await autosaved() === mine, 'the autosave is kept');
    // A broken link pasted: its error, and the editor as it was.
    const altered = link.slice(0, -2) + (link.at(-2) === 'A' ? 'B' : 'A') + link.at(-1);
    await page.goto(base + frag(altered));
    await $('link-error').waitFor();
    assert((await $('link-error').textContent()).includes('altered or cut'), await $('link-error').textContent());
    assert(await editorText(page) === initial, 'the editor is left alone');
    assert(await autosaved() === mine, 'and so is the autosave');
    // Another good link: its text at its moment; the error goes.
    const at = cli(['share', 'scenarios/02-overflow-410-relist.lw', '--at', '2.2s', '--base', base]).trim();
    await page.goto(base + frag(at));
    await until(page, (t) => document.querySelector('[data-testid="editor"]').cmView.state.doc.toString() === t, overflow, 'the second link opens');
    await until(page, () => document.querySelector('[data-testid="clock"]').textContent === '2.200s', null, 'at its moment');
    assert(await $('link-error').count() === 0, 'the error is gone');
    await page.click('[data-testid="restore"]');
    assert(await editorText(page) === mine, 'Restore: still the user\'s own script');
    assert(await page.evaluate(() => window.__samePage) === true, 'all in the same page');
  }],
  ['a link with CR or CRLF line ends opens as its text with LF, and never replaces the autosave', async () => {
    // The editor reads `\r\n` and `\r` as line ends and hands back `\n`: the page once took
    // that echo for the user's own edit, dropped the Restore and autosaved the link's script.
    const mine = '# my own work\nkind Pod\n';
    const frag = (l) => l.slice(l.indexOf('#'));
    const dir = mkdtempSync(tmpdir() + '/listwatch-eol-');
    for (const eol of ['\r\n', '\r']) {
      const file = dir + '/link.lw';
      writeFileSync(file, initial.replaceAll('\n', eol));
      const link = cli(['share', file, '--base', base]).trim();
      // Pasted into the address bar of the open page (only the fragment changes).
      await ownWork(mine);
      await page.goto(base + frag(link));
      await until(page, (t) => document.querySelector('[data-testid="editor"]').cmView.state.doc.toString() === t, initial, 'the pasted link opens, with LF line ends');
      await $('restore-notice').waitFor();
      await page.waitForTimeout(500);
      assert(await $('restore-notice').count() === 1, `${JSON.stringify(eol)}: the notice stays`);
      assert(await autosaved() === mine, `${JSON.stringify(eol)}: the autosave is not overwritten`);
      await page.click('[data-testid="restore"]');
      assert(await editorText(page) === mine, 'Restore brings the user\'s script back');
      await until(page, (t) => localStorage.getItem('listwatch.script') === t, mine, 'still autosaved');
      // Opened by a fresh load, then the editor loaded: the same.
      await page.goto('about:blank');
      await gotoReady(page, link);
      await ensureEditor(page);
      await $('restore-notice').waitFor();
      await page.waitForTimeout(500);
      assert(await editorText(page) === initial, 'the link\'s text, LF');
      assert(await $('restore-notice').count() === 1 && await autosaved() === mine, `${JSON.stringify(eol)} on load: kept, with Restore`);
    }
  }],
  ['an embed takes a script by message only with source=parent, and only from its parent', async () => {
    const link = cli(['share', 'scenarios/02-overflow-410-relist.lw', '--base', base + '?embed']).trim();
    const other = overflow.replace('cache fixed 3', 'cache fixed 7');
    const msg = { listwatch: 'load', script: other };
    // The parent: a page of another origin (the sub-path server), holding only the iframe.
    const parent = `http://127.0.0.1:${subpath.address().port}/docs/listwatch/embed-demo.html`;
    const frame = async (src) => {
      await page.goto(parent);
      await page.evaluate((src) => {
        const f = document.createElement('iframe');
        Object.assign(f, { id: 'f', src });
        f.style.cssText = 'width:1200px;height:900px';
        document.body.replaceChildren(f);
      }, src);
      const f = page.frameLocator('#f');
      await f.locator('[data-testid="watch-cache"]').first().waitFor();
      return f;
    };
    // Without source=parent: a message from the parent is ignored.
    let f = await frame(link);
    await page.evaluate((m) => document.getElementById('f').contentWindow.postMessage(m, '*'), msg);
    await page.waitForTimeout(500);
    assert(await f.locator('[data-testid="watch-cache"][data-capacity="7"]').count() === 0, 'script by message refused without source=parent');
    assert(await f.locator('[data-testid="watch-cache"][data-capacity="3"]').count() === 1, 'the link\'s script stays');
    // With source=parent: a message from elsewhere (here the frame itself) is ignored ...
    f = await frame(base + '?embed&source=parent');
    const inner = page.frames().find((fr) => fr.url().includes('source=parent'));
    await inner.evaluate((m) => window.postMessage(m, '*'), msg);
    await page.waitForTimeout(500);
    assert(await f.locator('[data-testid="watch-cache"][data-capacity="7"]').count() === 0, 'not from its parent: ignored');
    // ... and the parent's is taken.
    await page.evaluate((m) => document.getElementById('f').contentWindow.postMessage(m, '*'), msg);
    await f.locator('[data-testid="watch-cache"][data-capacity="7"]').waitFor();
  }],
  ['the CSP allows no inline or injected script and no base change, and the page works under it', async () => {
    const violations = [];
    const onConsole = (m) => { if (/Content Security Policy/i.test(m.text())) violations.push(m.text()); };
    page.on('console', onConsole);
    await openFresh(base);
    const csp = await page.getAttribute('meta[http-equiv="Content-Security-Policy"]', 'content');
    const script = csp.split(';').map((d) => d.trim()).find((d) => d.startsWith('script-src'));
    assert(!script.includes('unsafe-inline'), `no unsafe-inline scripts: ${script}`);
    assert(/base-uri 'none'/.test(csp) && /object-src 'none'/.test(csp), csp);
    assert(violations.length === 0, `the page loads without CSP violations: ${violations.join(' | ')}`);
    const ran = await page.evaluate(() => {
      const s = document.createElement('script');
      s.textContent = 'window.__injected = 1';
      document.body.append(s);
      return window.__injected === 1;
    });
    assert(!ran, 'an injected inline script does not run');
    const injected = violations.length;
    // The page itself still works under it: the editor module loaded on demand, the worker.
    await page.click('[data-testid="editor"] .pv');
    await page.waitForFunction(() => !!document.querySelector('[data-testid="editor"]').cmView);
    await page.click('[data-testid="explore"]');
    await page.waitForFunction(() => /^[1-9]\d* of/.test(document.querySelector('[data-testid="explore-stats"]')?.textContent || ''), null, { timeout: 30000 });
    await page.click('[data-testid="export-png"]').catch(() => {});
    await page.waitForTimeout(300);
    assert(violations.length === injected, `no CSP violations from the page: ${violations.slice(injected).join(' | ')}`);
    page.off('console', onConsole);
  }],
  ['a decompression bomb is refused', async () => {
    const bomb = readFileSync(root + 'e2e/fixtures/bomb.link', 'utf8').trim();
    await page.goto('about:blank');
    await gotoReady(page, base + bomb);
    assert((await $('link-error').textContent()).includes('expands to more than'), 'bomb refused');
  }],
  ['the embed view shows no editor chrome, links to the playground, reports its height', async () => {
    const link = cli(['share', 'scenarios/02-overflow-410-relist.lw', '--base', base + '?embed']).trim();
    await page.goto('about:blank');
    await gotoReady(page, link);
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
    assert(json.format === 'listwatch-trace/3', 'the documented format');
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
    await gotoReady(p, at);
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
