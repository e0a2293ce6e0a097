// The page's lighter panels, drawn with the DOM (text nodes and attributes only: no user text ever
// becomes HTML): the legend, Start here (the tour), the local history of the script, the explore
// panel (drawn from the page's state) and the objects panel, whose fold runs in the explorer's
// worker. Kept out of the wasm to keep the first load small.

// Shared with compare.js (which imports it: the same module, already loaded). Handlers are the
// element's `on…` properties (listed in `on`), so a redraw can swap them.
export const h = (tag, attrs = {}, ...kids) => {
  const e = document.createElement(tag);
  e.on = [];
  for (const [k, v] of Object.entries(attrs)) {
    if (v === null || v === undefined || v === false) continue;
    if (k.startsWith('on')) e.on.push(k), e[k] = v;
    else e.setAttribute(k, v === true ? '' : String(v));
  }
  for (const k of kids.flat()) if (k !== null && k !== undefined && k !== false) e.append(k instanceof Node ? k : String(k));
  return e;
};
const key = (n) => n.nodeName + (n.dataset?.testid || '');
/// Makes `parent`'s children `kids` (built by `h`), keeping each old node that has the same tag
/// and test id as the new one at its place (its text, attributes, handlers and children
/// updated in place); old nodes skipped on the way are removed, new ones without a match
/// inserted. A kept element keeps its focus, a press between its pointer's down and up, a typed
/// value and caret and its scroll position.
function patch(parent, kids) {
  kids.forEach((n, i) => {
    let o = parent.childNodes[i], x = o;
    while (x && key(x) !== key(n)) x = x.nextSibling;
    if (!x) return parent.insertBefore(n, o);
    while (o !== x) o = o.nextSibling, o.previousSibling.remove();
    if (!n.on) return o.data !== n.data && (o.data = n.data);
    for (const a of [...o.attributes]) if (!n.hasAttribute(a.name)) o.removeAttribute(a.name);
    for (const a of n.attributes) if (o.getAttribute(a.name) !== a.value) o.setAttribute(a.name, a.value);
    for (const k of [...o.on || [], ...n.on]) o[k] = n[k];
    o.on = n.on;
    patch(o, [...n.childNodes]);
  });
  while (parent.childNodes.length > kids.length) parent.lastChild.remove();
}
/// Redraws `host` with `nodes` (see `patch`); when the focused control is gone, the control at
/// its place among the panel's buttons takes the focus. Every panel here and compare.js's draw
/// through it.
export function redraw(host, ...nodes) {
  const focusables = () => [...host.querySelectorAll('button, [tabindex]')];
  const i = host.contains(document.activeElement) ? focusables().indexOf(document.activeElement) : -1;
  patch(host, nodes);
  if (i >= 0 && !host.contains(document.activeElement)) focusables()[Math.min(i, focusables().length - 1)]?.focus();
}
const store = {
  get: (k) => { try { return localStorage.getItem(k); } catch { return null; } },
  set: (k, v) => { try { localStorage.setItem(k, v); } catch { /* private mode */ } },
};
const disclose = (open, label, testid, onclick) =>
  h('button', { class: 'disclose', 'aria-expanded': String(open), 'data-testid': testid, onclick }, `${open ? '▾' : '▸'} ${label}`);

// ---- Legend: a disclosure whose contents (legend.js) load when it first opens ------------------
export function legend(host) {
  const d = h('details', { class: 'legend', 'data-testid': 'legend', ontoggle: () => {
    if (d.open && !d.loading) d.loading = import(new URL('legend.js', document.baseURI).href).then((m) => d.append(m.groups()));
  } }, h('summary', {}, 'Legend'));
  host.replaceChildren(d);
}

// ---- Start here: a path through the gallery ----------------------------------------------------
const STEPS = [
  ['39-', 'A guided tour: playback stops at each remark until you press Continue.'],
  ['01-', 'A reflector lists, then watches from the list\'s resourceVersion.'],
  ['02-', 'A small watch cache overflows: the re-watch gets 410 Gone and relists.'],
  ['03-', 'Exactly where "too old" starts: the oldest RV the cache still holds.'],
  ['04-', 'Bookmarks move the watcher\'s RV forward, so a reconnect needs no relist.'],
  ['06-', 'A watch times out and is simply opened again from the last RV.'],
  ['07-', 'A dynamic cache grows while events are fresh.'],
  ['09-', 'The work queue collapses many events for a key into one reconcile.'],
  ['10-', 'Errors back off and requeue.'],
  ['24-', 'A streaming list: one watch with the initial events in place of a list.'],
  ['25-', 'A paged list whose continue token expires: 410 in the middle of a list.'],
  ['11-', 'A stale apiserver sends a controller back in time: open the Objects panel at 21 s.'],
  ['12-', 'The fix: a delete with a UID precondition.'],
  ['13-', 'A controller never sees a state it should have acted on.'],
  ['15-', 'A crash between two writes leaves half the work done.'],
  ['17-', 'Level-triggered reconciles recover a missed delete.'],
  ['19-', 'Let the explorer find the fault that breaks it.'],
];
const TOUR_KEY = 'listwatch.tour';

let galleryIndex = [];
export function tour(host, gallery, onPick) {
  galleryIndex = gallery;
  const steps = STEPS.map(([pre, what]) => [gallery.find((g) => g[0].startsWith(pre)), what]).filter(([g]) => g);
  let open = false;
  let step = parseInt(store.get(TOUR_KEY), 10);
  if (!(step >= 0 && step < steps.length)) step = null;
  const go = (i) => {
    step = i; open = true;
    store.set(TOUR_KEY, String(i));
    draw();
    // The scripts are fetched from beside the page when picked (they are not in its first load).
    fetch(new URL(`scenarios/${steps[i][0][0]}`, document.baseURI).href)
      .then((r) => (r.ok ? r.text() : Promise.reject(new Error(String(r.status)))))
      .then((text) => { onPick(text); host.querySelector('[data-testid="tour"]')?.setAttribute('data-loaded', steps[i][0][0]); })
      .catch(() => {});
  };
  const draw = () => {
    const n = steps.length;
    const next = step === null ? 0 : step + 1 < n ? step + 1 : 0;
    const label = step === null ? 'Start the tour' : step + 1 < n ? `Continue: step ${step + 2} of ${n}` : 'Start again';
    const box = h('div', { class: 'tour', 'data-testid': 'tour', 'data-step': step === null ? '' : step + 1 },
      h('div', { class: 'tour-bar' },
        h('b', {}, 'Start here'),
        step !== null && h('span', { class: 'hint', 'data-testid': 'tour-where' }, `you stopped at step ${step + 1} of ${n}`),
        h('button', { 'data-testid': 'tour-next', onclick: () => go(next) }, label),
        step > 0 && h('button', { 'data-testid': 'tour-prev', onclick: () => go(step - 1) }, 'Previous step'),
        disclose(open, 'all steps', 'tour-toggle', () => { open = !open; draw(); })),
      step !== null && h('p', { class: 'tour-now', 'aria-live': 'polite' }, `Step ${step + 1}: ${steps[step][1]}`),
      open && h('ol', { class: 'tour-steps' }, steps.map(([g, what], j) => h('li', {
        'data-testid': 'tour-step', 'data-file': g[0], class: j === step ? 'here' : step !== null && j < step ? 'done' : null,
      }, h('button', { class: 'link', 'aria-current': j === step ? 'step' : null, onclick: () => go(j) },
        j === step ? '▶ ' : step !== null && j < step ? '✓ ' : '', h('b', {}, g[1])),
      h('span', { class: 'hint' }, ` ${what}`)))));
    redraw(host, box);
  };
  draw();
}

// ---- History: the last 30 versions of the script -----------------------------------------------
const HISTORY_KEY = 'listwatch.history';
const KEEP = 30;
const RS = '\u001e', US = '\u001f';
const loadHistory = () => (store.get(HISTORY_KEY) || '').split(RS)
  .map((e) => { const i = e.indexOf(US); return i < 0 ? null : [Number(e.slice(0, i)), e.slice(i + 1)]; })
  .filter((x) => x && !Number.isNaN(x[0])).slice(0, KEEP);
const titleOf = (s) => { const l = s.split('\n').find((l) => l.trim().startsWith('#')); return l ? l.trim().slice(1).trim() : ''; };
const clock = (t) => new Date(t).toTimeString().slice(0, 8);
let historyHost = null, historyOpen = false, historySource = '', historyTimer = 0, historyRestore = null;

function drawHistory() {
  if (!historyHost) return;
  const list = historyOpen ? loadHistory() : [];
  redraw(historyHost, h('div', { class: 'history-panel' },
    h('h2', { class: 'panel-head' },
      disclose(historyOpen, 'History', 'history-toggle', () => { historyOpen = !historyOpen; drawHistory(); }),
      h('span', { class: 'hint' }, ' your last 30 scripts, in this browser')),
    historyOpen && h('ol', { 'data-testid': 'history', class: 'history-list' },
      list.length === 0 && h('li', { class: 'hint' }, 'Nothing yet: versions are kept as you edit.'),
      list.map(([t, s]) => {
        const current = s === historySource;
        return h('li', { 'data-testid': 'history-entry', class: current ? 'current' : null },
          h('span', { class: 'when' }, clock(t)), ' ',
          h('span', { class: 'what' }, titleOf(s) || '(untitled)'),
          h('span', { class: 'hint' }, ` · ${s.split('\n').length - (s.endsWith('\n') ? 1 : 0)} lines`), ' ',
          current ? h('span', { class: 'hint' }, '(in the editor)')
            : h('button', { 'data-testid': 'history-restore', 'aria-label': `Restore the version of ${clock(t)}`, onclick: () => historyRestore(s) }, 'Restore'));
      }))));
}

/// The history's place; Compare two runs sits just below it.
export function history(host, onRestore) {
  const [mine, cmp] = [h('div', {}), h('div', { class: 'compare-host' })];
  host.replaceChildren(mine, cmp);
  historyHost = mine; historyRestore = onRestore;
  drawHistory();
  compare(cmp, galleryIndex);
}

/// The editor's text changed: keep it once it has rested for 800 ms.
export function history_source(script) {
  historySource = script;
  clearTimeout(historyTimer);
  historyTimer = setTimeout(() => {
    if (!script.trim() || script.includes(RS) || script.includes(US)) return;
    const list = loadHistory();
    if (list.length && list[0][1] === script) return;
    const next = [[Date.now(), script], ...list.filter(([, s]) => s !== script)].slice(0, KEEP);
    store.set(HISTORY_KEY, next.map(([t, s]) => `${t}${US}${s}`).join(RS));
    drawHistory();
  }, 800);
  // Closed, the panel shows nothing of the text: no DOM work on every key.
  if (historyOpen) drawHistory();
}

// ---- Objects: each holder's copy of every object; drawn by objects.js, loaded on first open -----
const objects_head = (onclick) => h('h2', { class: 'panel-head' },
  h('button', { class: 'disclose', 'aria-expanded': 'false', 'aria-controls': 'objects-body', 'data-testid': 'objects-toggle', onclick }, '▸ Objects'),
  h('span', { class: 'hint' }, ' each holder\'s copy, now'));
let objectsPanel = null, objectsArgs = null;
/// The run on screen (its script) and the moment: closed, the panel shows its disclosure only (no
/// DOM work on every edit or tick); opened, objects.js draws it from then on.
export function objects(...args) {
  if (objectsPanel) return objectsPanel.objects(...args);
  const placed = objectsArgs?.[0] === args[0];
  objectsArgs = args;
  if (placed) return;
  redraw(args[0], h('div', { class: 'objects-panel' }, objects_head(() => import(new URL('objects.js', document.baseURI).href)
    .then((m) => { objectsPanel = m; m.open(...objectsArgs); }))));
}

// ---- Explore: the fault-schedule search, drawn from the page's state ----------------------------
// Everything the panel shows is the page's (the Rust reducer's, see components/explore.rs): its
// settings, the controller under test, the search, the failures found so far and whether it was
// cancelled. This draws them, asks worker.js (loaded on the first search) for the search the state
// says runs, and turns every control and every report of the worker into the page's action
// through `on`.
// `open`: the keys (see `alike`) of the groups of failures the reader opened.
const ex = { script: '', controllers: [], asked: -1, search: null, on: null, drawn: null, args: null, open: new Set() };
const NOTHING_YET = { kind: 'progress', tried: 0, space: 0, states: 0, skipped: 0, faults: 0, failures: 0, per_second: 0 };
let workers = null;

/// Search `job` while the state says it runs: asked of worker.js's `explore` lane once, which
/// keeps its worker warm between searches (V8 compiles a new worker's wasm in tiers, and a search
/// in a fresh worker runs mostly in the baseline tier, about 3x slower). A search the state no
/// longer runs is cancelled (a busy worker stops only with its end); only the current search's
/// reports reach the page, each with its failures (when it has new ones) apart.
function search(job, running, budget, all, against, on) {
  ex.on = on;
  const want = running ? job : -1;
  if (want === ex.asked) return;
  ex.asked = want;
  ex.search?.cancel();
  ex.search = null;
  if (!running) return;
  const report = ({ found, ...rest }) => ex.asked === job && ex.on(`${rest.kind === 'progress' ? 'progress' : 'done'}:${job}:${JSON.stringify(rest)}`, found ?? null);
  const script = ex.script;
  // A failed load is not kept: the next search tries again.
  (workers ||= import(new URL('worker.js', document.baseURI).href).catch((e) => { workers = null; throw e; })).then((w) => {
    if (ex.asked !== job) return;
    ex.search = w.ask('explore', { kind: 'explore', script, budget, all, controller: against }, { keep: true, onProgress: report });
    ex.search.answer.then(report, (e) => e.why !== 'cancelled' && report({ kind: 'error',
      message: e.why === 'start' ? 'the explorer\'s worker could not start' : `the explorer's worker stopped: ${e.message}` }));
  }, () => report({ kind: 'error', message: 'the explorer\'s worker could not start' }));
}

/// The script on screen (what the next search runs on, and what Compare offers) and its
/// controllers (`\n` between names), the choice of the one under test.
export function explore_source(script, controllers) {
  ex.script = script;
  if (controllers === ex.controllers.join('\n')) return;
  ex.controllers = controllers ? controllers.split('\n') : [];
  if (ex.args) drawExplore(...ex.args);
}

/// The explore panel in `host` at the page's state: the budget and its largest value, "all
/// failures", the controller under test (empty: every one), the search's number, whether it runs,
/// whether it was cancelled, the worker's last report (JSON without its failures, null when none)
/// and the failures found so far (`[words, script]`). `on` takes `start`, `cancel`,
/// `all:true|false`, `budget:N`, `against:NAME`, `open:SCRIPT` and the worker's `progress:JOB:JSON`
/// and `done:JOB:JSON` (with the report's failures, or null, as its second argument).
export function explore(host, budget, max, all, against, job, running, cancelled, report, found, on) {
  search(job, running, budget, all, against, on);
  ex.args = [host, budget, max, all, against, job, running, cancelled, report, found, on];
  // The budget and the checkbox already show what was typed or ticked: only the rest redraws the
  // panel (in place: see `patch`).
  const drawn = [host, against, running, cancelled, report, found];
  if (ex.drawn && drawn.every((x, i) => x === ex.drawn[i])) return;
  ex.drawn = drawn;
  drawExplore(...ex.args);
}

// A time as format_ms writes it (`0s`, `250ms`, `5.001s`, `2m`), standing as a word of its own:
// not inside a name such as `Pod/web-1s` or `op-5m`.
const TIME = /(?<=^|\s)\d+(?:\.\d+)?(?:ms|s|m)(?![\w./-])/g;
/// The failures `[words, script]` grouped by their words with the times taken out (the same fault
/// type against the same targets, at other moments), in the order each group was first found:
/// `[key, first, ...rest]` each. An "all failures" search finds tens of these.
export const alike = (found) => {
  const groups = new Map();
  for (const f of found) {
    const k = f[0].replace(TIME, '…');
    groups.has(k) ? groups.get(k).push(f) : groups.set(k, [k, f]);
  }
  return [...groups.values()];
};
const failure = ([words, script], first, on) => [h('span', {}, words), ' ',
  h('button', { 'data-testid': first ? 'explore-open' : 'explore-open-more', onclick: () => on(`open:${script}`) }, 'Open in the editor')];

function drawExplore(host, budget, max, all, against, job, running, cancelled, report, found, on) {
  // No report yet: a search running, or one cancelled before its first report; else (none
  // started, or the page left the scenario a search was of) nothing to show.
  const pr = report ? JSON.parse(report) : running || cancelled ? NOTHING_YET : {};
  const active = pr.kind === 'progress', finished = pr.kind === 'done';
  const total = found.length + (pr.more || 0), n = (x) => x.toLocaleString('en');
  // What the reader opened or closed is read off the page too: its toggle event comes a task
  // later, after a report may have redrawn the panel.
  for (const d of host.querySelectorAll('details.alike[data-like]')) d.open ? ex.open.add(d.dataset.like) : ex.open.delete(d.dataset.like);
  if (!found.length) ex.open.clear();
  redraw(host, h('div', { class: 'explore', 'data-testid': 'explore-panel' },
    h('h2', {}, 'Explore'),
    h('p', { class: 'hint' }, 'Search crash, stale-apiserver, held-notification (unobserved state) and disconnect faults for a schedule that breaks this scenario\'s expectations or ESR.'),
    h('div', { class: 'explore-bar' },
      h('label', {}, 'budget ', h('input', { type: 'number', min: '1', max, 'aria-label': 'Schedules to try at most', value: String(budget),
        oninput: (e) => { const v = parseInt(e.target.value, 10); if (v >= 1) on(`budget:${Math.min(v, max)}`); } })),
      ex.controllers.length > 1 && h('label', { title: 'Faults only against this controller; the others are the cluster\'s helpers (explore --controller NAME)' }, 'against ',
        h('select', { 'data-testid': 'explore-controller', 'aria-label': 'Controller under test', disabled: running ? '' : null, onchange: (e) => on(`against:${e.target.value}`) },
          h('option', { value: '', selected: against === '' ? '' : null }, 'every controller'),
          ex.controllers.map((c) => h('option', { value: c, selected: against === c ? '' : null }, c)))),
      h('label', { title: 'Keep searching after the first failure, up to the budget' },
        h('input', { type: 'checkbox', 'data-testid': 'explore-all', checked: all, onchange: (e) => on(`all:${e.target.checked}`) }), ' all failures'),
      running ? h('button', { 'data-testid': 'explore-cancel', onclick: () => on('cancel') }, 'Cancel')
        : h('button', { 'data-testid': 'explore', onclick: () => on('start') }, 'Explore')),
    (active || finished) && h('progress', { 'data-testid': 'explore-progress', max: Math.max(pr.space, 1), value: pr.tried }),
    (active || finished) && h('div', { class: 'hint', 'data-testid': 'explore-stats' },
      `${pr.tried} of ${pr.space} schedules · ${pr.states} states · ${pr.skipped} skipped as explored · ${pr.faults} candidate faults · ${pr.failures} failing · ${pr.per_second.toFixed(0)} schedules/s`),
    cancelled && h('p', { 'data-testid': 'explore-cancelled', role: 'status' },
      `Cancelled after ${n(pr.tried)}${pr.space ? ` of ${n(pr.space)}` : ''} schedules: ${pr.failures ? n(pr.failures) : 'none'} failing so far.`),
    pr.kind === 'error' && h('p', { class: 'fail' }, pr.message),
    !!pr.base_broken && h('p', { class: 'fail' }, `It already fails without faults: ${pr.base_broken}`),
    found.length > 0 && h('div', { 'data-testid': 'explore-found' },
      h('p', { class: 'fail' }, `Found ${total === 1 ? 'a fault schedule' : `${total} fault schedules`} that break${total === 1 ? 's' : ''} it${finished ? '' : ' so far'}:`),
      h('ol', { class: 'failures' }, alike(found).map(([like, first, ...rest], g) => h('li', {}, failure(first, g === 0, on),
        rest.length > 0 && h('details', { class: 'alike', 'data-testid': 'explore-alike', 'data-like': like, open: ex.open.has(like),
          ontoggle: (e) => e.target.open ? ex.open.add(like) : ex.open.delete(like) },
          h('summary', {}, `and ${rest.length} more like it`),
          h('ul', {}, rest.map((f) => h('li', {}, failure(f, false, on))))))))),
    finished && !pr.base_broken && !found.length && h('p', { class: 'pass', 'data-testid': 'explore-none' }, 'No schedule within the budget breaks it.')));
}

// ---- Compare two runs: a disclosure here; the comparison itself loads on demand ----------------
// Its picks and clock are the page's (`state::Comparison`): given here (and to compare.js once it
// is loaded) with `on`, which takes what the comparison says.
const cmp = { state: null, on: null, panel: null };
export function compare_state(state, on) {
  Object.assign(cmp, { state, on });
  cmp.panel?.state(state, on);
}

export function compare(host, index) {
  let open = false, loaded = false;
  const body = h('div', { class: 'compare-body' });
  const draw = () => {
    const head = h('h2', { class: 'panel-head' },
      disclose(open, 'Compare two runs', 'compare-toggle', () => {
        open = !open; draw();
        if (open && !loaded) {
          loaded = true;
          import(new URL('compare.js', document.baseURI).href).then((m) => { m.open(body, index, () => ex.script, cmp.state, cmp.on); cmp.panel = m; });
        }
      }));
    body.hidden = !open;
    redraw(host, head, body);
  };
  draw();
}

// ---- Paste your logs: the import dialog (import.js) loads on the first click -------------------
export const import_logs = (on) => import(new URL('import.js', document.baseURI).href).then((m) => m.open(on));

// ---- Embeds -----------------------------------------------------------------------------------
/// An embed tells its parent page the height of its content `app` whenever it changes (embed.js
/// fits the iframe to it).
export function report_height(app) {
  new ResizeObserver(() => parent.postMessage({ listwatch: 'height', height: String(Math.ceil(app.getBoundingClientRect().height) + 16) }, '*')).observe(app);
}

// ---- Embed code -------------------------------------------------------------------------------
/// Copies an iframe of the embed at `src` (a share link with `?embed`), as high as what an embed
/// shows (the run's title to its explanation as this page lays it out, with the embed's bar), and
/// embed.js, which then fits the iframe to the height the embed reports at its width.
export function copy_embed(src) {
  const [top, end] = ['.right .title', '.right .explanation'].map((s) => document.querySelector(s)?.getBoundingClientRect());
  const height = top && end ? Math.round(end.bottom - top.top) + 61 : 720;
  const dir = src.slice(0, src.lastIndexOf('/', src.indexOf('?')) + 1);
  navigator.clipboard.writeText(`<iframe class="listwatch-embed" src="${src}" width="100%" height="${height}" style="border:0" title="listwatch scenario" loading="lazy"></iframe>
<script src="${dir}embed.js" defer></script>`);
}

// ---- Export: the files the page saves; their code loads on the first click (export.js) ---------
const onDemand = (name) => (...args) => import(new URL('export.js', document.baseURI).href).then((m) => m[name](...args));
/// `export_json(script, notice)` saves the trace as JSON; `download_view('svg'|'png')` the view.
export const export_json = onDemand('export_json'), download_view = onDemand('download_view');

// ---- Sequence view: lanes and arrows of the run, drawn by sequence.js, loaded on first open ----
let sequencePanel = null, sequenceArgs = null;
/// The run on screen (`script`, `events` long) at `cursor`, and `onJump(id)`: closed, only its
/// disclosure is drawn (nothing is done on a tick); opened, sequence.js draws it from then on.
export function sequence(...args) {
  const placed = sequenceArgs?.[0] === args[0];
  sequenceArgs = args;
  if (sequencePanel) return sequencePanel.draw(...args, () => {});
  if (placed) return;
  redraw(args[0], h('h2', { class: 'panel-head' },
    h('button', { class: 'disclose', 'aria-expanded': 'false', 'data-testid': 'sequence-toggle', onclick: () => import(new URL('sequence.js', document.baseURI).href)
      .then((m) => { sequencePanel = m; m.draw(...sequenceArgs, () => {}); }) }, '▸ Sequence view'),
    h('span', { class: 'hint' }, ' every request, response and event between the parts')));
}
