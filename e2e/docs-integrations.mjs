// The documentation integrations of docs/embedding.md, tested without a browser and without any
// npm package: the Docusaurus component (docs/integrations/docusaurus/Listwatch.jsx) rendered
// with a small stand-in for React, and the Hugo shortcode built by Hugo when `hugo` is on PATH.
// Usage: node e2e/docs-integrations.mjs (crates/mdbook-listwatch/tests/integrations.rs runs it).
import test from 'node:test';
import assert from 'node:assert/strict';
import { register } from 'node:module';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, readFileSync, writeFileSync, copyFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const root = new URL('../', import.meta.url).pathname;

// `react` resolves to a stand-in whose hooks the renderer below supplies; `.jsx` loads as a module.
const hooks = `
export async function resolve(specifier, context, next) {
  if (specifier === 'react') return { url: 'data:text/javascript,' + encodeURIComponent(
    'const R = globalThis.__react; export default R;' +
    'export const useState = (...a) => R.useState(...a);' +
    'export const useEffect = (...a) => R.useEffect(...a);' +
    'export const useRef = (...a) => R.useRef(...a);'), shortCircuit: true };
  return next(specifier, context);
}
export async function load(url, context, next) {
  if (url.endsWith('.jsx')) {
    const { readFile } = await import('node:fs/promises');
    return { format: 'module', source: await readFile(new URL(url)), shortCircuit: true };
  }
  return next(url, context);
}`;
register('data:text/javascript,' + encodeURIComponent(hooks), import.meta.url);
// The stand-in module reads this object once: mount() gives it the hooks of each render.
globalThis.__react = {
  createElement: (type, props, ...children) => ({ type, props: props || {}, children: children.flat() }),
};

/** A renderer of function components with useState, useRef and useEffect: enough for one. */
function mount(Component, props) {
  const states = [];
  const refs = [];
  const deps = [];
  const cleanups = [];
  let pending = [];
  let dirty = false;
  const self = { tree: null, nodes: new Map() };
  function render() {
    let s = 0, r = 0, e = 0;
    Object.assign(globalThis.__react, {
      useState(initial) {
        const k = s++;
        if (!(k in states)) states[k] = initial;
        return [states[k], (v) => { states[k] = typeof v === 'function' ? v(states[k]) : v; dirty = true; }];
      },
      useRef(initial) {
        const k = r++;
        if (!(k in refs)) refs[k] = { current: initial };
        return refs[k];
      },
      useEffect(fn, d) {
        const k = e++;
        if (!deps[k] || d.some((x, i) => x !== deps[k][i])) { pending.push([k, fn]); deps[k] = d; }
      },
    });
    self.tree = Component(props);
    // Refs get a stand-in element (an iframe's window records what is posted to it).
    (function attach(el) {
      if (!el || typeof el !== 'object') return;
      if (el.props.ref) {
        if (!self.nodes.has(el.type)) self.nodes.set(el.type, { contentWindow: { posted: [], postMessage(m, o) { this.posted.push([m, o]); } } });
        el.props.ref.current = self.nodes.get(el.type);
      }
      el.children.forEach(attach);
    })(self.tree);
  }
  /** What the browser does after the first paint: run the effects, re-render on state changes. */
  self.effects = () => {
    for (let round = 0; (pending.length || dirty) && round < 10; round++) {
      if (dirty) { dirty = false; render(); }
      const run = pending; pending = [];
      for (const [k, fn] of run) { if (cleanups[k]) cleanups[k](); cleanups[k] = fn(); }
    }
  };
  render();
  return self;
}

/** Elements of the tree of a given type. */
function find(el, type, out = []) {
  if (el && typeof el === 'object') {
    if (el.type === type) out.push(el);
    el.children.forEach((c) => find(c, type, out));
  }
  return out;
}
const text = (el) => (typeof el === 'string' ? el : el.children.map(text).join(''));

const fakeWindow = () => {
  const listeners = [];
  globalThis.window = {
    location: { href: 'https://docs.example.org/guide/page' },
    addEventListener: (type, fn) => listeners.push([type, fn]),
    removeEventListener: (type, fn) => listeners.splice(listeners.findIndex((l) => l[1] === fn), 1),
  };
  return listeners;
};

const { default: Listwatch, embedSrc, scriptOf, titleOf, initialHeight, onMessage } = await import(
  root + 'docs/integrations/docusaurus/Listwatch.jsx'
);

const SCRIPT = '# Three writes overflow a cache of two\nkind Pod cache fixed 2\nat 2s say "</iframe><script>alert(1)</script>"\nrun 10s\n';

test('the server-rendered page shows the script, and no iframe', () => {
  fakeWindow();
  const c = mount(Listwatch, { panels: 'timeline,explanation', script: '\n    ' + SCRIPT.replace(/\n(?=.)/g, '\n    ') });
  assert.equal(find(c.tree, 'iframe').length, 0);
  const pre = find(c.tree, 'pre');
  assert.equal(pre.length, 1);
  assert.equal(text(pre[0]), SCRIPT, 'the template literal loses its shared indentation');
  // The script is a text child, which React escapes: never markup.
  assert.equal(typeof find(pre[0], 'code')[0].children[0], 'string');
});

test('in the browser: the embed with source=parent, sent the script when it is ready', () => {
  const listeners = fakeWindow();
  const c = mount(Listwatch, { panels: 'timeline,explanation', theme: 'dark', autoplay: true, playground: 'https://example.org/listwatch/', script: SCRIPT });
  c.effects();
  const [frame] = find(c.tree, 'iframe');
  assert.equal(frame.props.src, 'https://example.org/listwatch/index.html?embed&source=parent&panels=timeline,explanation&theme=dark&autoplay');
  assert.equal(frame.props.title, 'listwatch scenario: Three writes overflow a cache of two');
  assert.equal(frame.props.loading, 'lazy');
  assert.equal(frame.props.style.height, initialHeight('timeline,explanation') + 'px');
  assert.equal(text(find(c.tree, 'details')[0]).includes(SCRIPT), true, 'the fallback keeps the script');
  assert.equal(listeners.length, 1);
  const node = c.nodes.get('iframe');
  const send = (data, source = node.contentWindow, origin = 'https://example.org') => listeners[0][1]({ data, source, origin });
  send({ listwatch: 'ready' }, {});
  send({ listwatch: 'ready' }, node.contentWindow, 'https://evil.example');
  assert.deepEqual(node.contentWindow.posted, [], 'only the embed, from the playground, is answered');
  send({ listwatch: 'ready' });
  assert.deepEqual(node.contentWindow.posted, [[{ listwatch: 'load', script: SCRIPT }, 'https://example.org']]);
  send({ listwatch: 'height', height: '1073' });
  c.effects();
  assert.equal(find(c.tree, 'iframe')[0].props.style.height, '1073px');
  send({ listwatch: 'height', height: '999999' });
  c.effects();
  assert.equal(find(c.tree, 'iframe')[0].props.style.height, '1073px', 'an absurd height is ignored');
});

test('options and scripts are checked', () => {
  fakeWindow();
  assert.throws(() => mount(Listwatch, { script: SCRIPT, colour: 'dark' }), /unknown option "colour"/);
  assert.throws(() => mount(Listwatch, { script: SCRIPT, panels: 'timeline,graph' }), /unknown panel "graph"/);
  assert.throws(() => mount(Listwatch, { script: SCRIPT, theme: 'blue' }), /unknown theme "blue"/);
  assert.throws(() => mount(Listwatch, {}), /no script/);
  assert.equal(scriptOf({ children: ['kind Pod\r\n', 'run 1s'] }), 'kind Pod\nrun 1s\n');
  assert.equal(titleOf('kind Pod\n'), 'listwatch scenario');
  assert.equal(embedSrc('/listwatch'), '/listwatch/index.html?embed&source=parent');
  assert.ok(initialHeight('editor,timeline,explanation') > initialHeight() && initialHeight() > initialHeight('timeline'));
  // A message with no frame yet (the iframe not mounted) is ignored, not an error.
  onMessage({ data: { listwatch: 'ready' }, source: null, origin: 'x' }, null, SCRIPT, 'x', () => assert.fail());
});

let hugo = true;
try { execFileSync('hugo', ['version'], { stdio: 'ignore' }); } catch { hugo = false; }

test('the Hugo shortcode: the script escaped in a <pre class="listwatch">, embed.js once', { skip: !hugo && 'hugo is not on PATH' }, () => {
  const site = mkdtempSync(join(tmpdir(), 'listwatch-hugo-'));
  try {
    mkdirSync(join(site, 'layouts/shortcodes'), { recursive: true });
    mkdirSync(join(site, 'layouts/_default'), { recursive: true });
    mkdirSync(join(site, 'content'));
    copyFileSync(root + 'docs/integrations/hugo/layouts/shortcodes/listwatch.html', join(site, 'layouts/shortcodes/listwatch.html'));
    writeFileSync(join(site, 'layouts/_default/single.html'), '<!doctype html><html><body>{{ .Content }}</body></html>\n');
    writeFileSync(join(site, 'config.toml'), 'baseURL = "https://docs.example.org/"\n[params.listwatch]\nplayground = "https://example.org/listwatch"\n');
    const page = `---\ntitle: Page\n---\nBefore.\n\n{{< listwatch panels="timeline,explanation" autoplay="true" >}}\n${SCRIPT}{{< /listwatch >}}\n\n{{< listwatch theme="dark" >}}\nkind Pod\nrun 1s\n{{< /listwatch >}}\n`;
    writeFileSync(join(site, 'content/page.md'), page);
    execFileSync('hugo', ['--quiet', '--source', site, '--destination', join(site, 'public')], { stdio: 'pipe' });
    const html = readFileSync(join(site, 'public/page/index.html'), 'utf8');
    const pres = [...html.matchAll(/<pre class="listwatch"([^>]*)>([^<]*)<\/pre>/g)];
    assert.equal(pres.length, 2, html);
    assert.equal(pres[0][1], ' data-listwatch-panels="timeline,explanation" data-listwatch-autoplay=""');
    assert.equal(pres[1][1], ' data-listwatch-theme="dark"');
    const unescape = (s) => s.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&#34;/g, '"').replace(/&#39;/g, "'").replace(/&amp;/g, '&');
    assert.equal(unescape(pres[0][2]) + '\n', SCRIPT);
    assert.equal(html.match(/<script/g).length, 1, 'the only script element is embed.js, once a page');
    assert.ok(html.includes('<script src="https://example.org/listwatch/embed.js" defer></script>'), html);
    // An unknown option fails the build, at the shortcode.
    writeFileSync(join(site, 'content/bad.md'), '---\ntitle: Bad\n---\n\n{{< listwatch colour="dark" >}}\nkind Pod\n{{< /listwatch >}}\n');
    let failure = '';
    try { execFileSync('hugo', ['--source', site, '--destination', join(site, 'public')], { stdio: 'pipe' }); } catch (e) { failure = String(e.stderr) + String(e.stdout); }
    assert.match(failure, /bad\.md:5:1.*unknown option "colour"/);
  } finally {
    rmSync(site, { recursive: true, force: true });
  }
});
