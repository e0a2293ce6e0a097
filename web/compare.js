// Compare two runs, loaded when the reader opens the comparison: two scenarios side by side on one
// clock, with the differences in outcome listed; or one script under two versions of Kubernetes
// or controller-runtime ("what changes if I upgrade", the CLI's `run --compare
// kubernetes=1.34,1.35`), with the facts that differ and where the traces diverge. Both run in
// the explorer's worker. DOM text and attributes only.
import { h, redraw } from './panels.js';
import { ask } from './worker.js';
const secs = (ms) => `${Math.floor(ms / 1000)}.${String(ms % 1000).padStart(3, '0')}s`;
const fetchScript = (file) => fetch(new URL(`scenarios/${file}`, document.baseURI).href).then((r) => (r.ok ? r.text() : Promise.reject(new Error(`${file}: ${r.status}`))));

/// What differs in outcome between runs a and b, in words.
function differences(a, b) {
  const out = [];
  const byText = (r) => new Map((r.outcomes || []).map(([t, pass, found]) => [t, { pass, found }]));
  const ma = byText(a), mb = byText(b);
  for (const [t, x] of ma) {
    const y = mb.get(t);
    if (!y) out.push(`only in A: ${t}: ${x.pass ? 'pass' : 'FAIL'} (found ${x.found})`);
    else if (x.pass !== y.pass || x.found !== y.found) out.push(`${t}: A ${x.pass ? 'passes' : 'FAILS'} (found ${x.found}), B ${y.pass ? 'passes' : 'FAILS'} (found ${y.found})`);
  }
  for (const [t, y] of mb) if (!ma.has(t)) out.push(`only in B: ${t}: ${y.pass ? 'pass' : 'FAIL'} (found ${y.found})`);
  if (a.esr && b.esr && (a.esr[0] !== b.esr[0])) out.push(`ESR: A ${a.esr[0] ? 'holds' : 'fails'} (${a.esr[1]}), B ${b.esr[0] ? 'holds' : 'fails'} (${b.esr[1]})`);
  const cb = new Map(b.counts || []);
  for (const [what, n] of a.counts || []) if (cb.has(what) && cb.get(what) !== n) out.push(`${what}: A ${n}, B ${cb.get(what)}`);
  return out;
}

/// The run at time t: its last event and each watcher's state.
function at(run, t) {
  let last = null;
  for (const e of run.events || []) { if (e[0] <= t) last = e; else break; }
  const states = new Map();
  for (const [time, w, s] of run.states || []) { if (time <= t) states.set(w, s); else break; }
  return { last, states };
}

const NS = 'http://www.w3.org/2000/svg';
/// An SVG element, as `h` makes an HTML one (patch-able by `redraw`).
const sv = (tag, attrs = {}, ...kids) => {
  const e = document.createElementNS(NS, tag);
  e.on = [];
  for (const [k, v] of Object.entries(attrs)) {
    if (v === null || v === undefined || v === false) continue;
    if (k.startsWith('on')) e.on.push(k), e[k] = v; else e.setAttribute(k, String(v));
  }
  for (const k of kids.flat()) if (k !== null && k !== undefined && k !== false) e.append(k instanceof Node ? k : String(k));
  return e;
};
const LANE_W = 640, LANE_H = 26, LANE_LEFT = 150;
const STATE_CLASS = (s) => `st-${s.replace(/[^a-z]/gi, '').toLowerCase()}`;

/// Run `r` as lanes, one a watcher, each its states over time on the clock both runs share
/// (`0..end`), the clock's moment `t` a line across them; a click moves the clock there.
function lanes(r, end, t, setT) {
  const byWatcher = new Map();
  for (const [time, w, st] of r.states || []) {
    if (!byWatcher.has(w)) byWatcher.set(w, []);
    byWatcher.get(w).push([time, st]);
  }
  const ws = [...byWatcher.keys()].slice(0, 24);
  const x = (ms) => LANE_LEFT + ((LANE_W - LANE_LEFT - 8) * ms) / Math.max(end, 1);
  const height = 22 + LANE_H * ws.length;
  const lane = (w, i) => {
    const y = 18 + LANE_H * i;
    const spans = byWatcher.get(w);
    return sv('g', { 'data-testid': 'compare-lane', 'data-watcher': w },
      sv('text', { x: 4, y: y + 16, class: 'lane-label' }, w.length > 20 ? `${w.slice(0, 19)}…` : w, sv('title', {}, w)),
      spans.map(([from, st], j) => {
        const to = j + 1 < spans.length ? spans[j + 1][0] : end;
        const [x0, x1] = [x(from), Math.max(x(to), x(from) + 1)];
        return sv('g', { class: `span ${STATE_CLASS(st)}` },
          sv('rect', { x: Math.round(x0), y: y + 2, width: Math.max(1, Math.round(x1 - x0)), height: LANE_H - 6, rx: 3 },
            sv('title', {}, `${w}: ${st} from ${secs(from)} to ${secs(to)}`)),
          x1 - x0 > 8 * st.length && sv('text', { x: Math.round(x0 + 4), y: y + 17 }, st));
      }));
  };
  const pick = (e) => {
    const svg = e.currentTarget, box = svg.getBoundingClientRect();
    const ux = ((e.clientX - box.left) * LANE_W) / box.width;
    setT(Math.round(Math.max(0, Math.min(end, ((ux - LANE_LEFT) * Math.max(end, 1)) / (LANE_W - LANE_LEFT - 8)))));
  };
  return sv('svg', { class: 'compare-lanes', 'data-testid': 'compare-lanes', viewBox: `0 0 ${LANE_W} ${height}`, role: 'img',
    'aria-label': `${r.title || 'run'}: ${ws.length} watchers' states over ${secs(end)}`, onclick: pick },
    sv('text', { x: LANE_LEFT, y: 12, class: 'axis' }, '0s'),
    sv('text', { x: LANE_W - 8, y: 12, class: 'axis', 'text-anchor': 'end' }, secs(end)),
    ws.map(lane),
    sv('line', { 'data-testid': 'compare-now', class: 'now', x1: x(t), x2: x(t), y1: 14, y2: height }));
}

/// The versions the comparison offers: (setting, its versions, the pair it starts with).
const VERSIONS = {
  kubernetes: [Array.from({ length: 27 }, (_, i) => `1.${10 + i}`), ['1.34', '1.35']],
  'controller-runtime': [Array.from({ length: 23 }, (_, i) => `0.${1 + i}`), ['0.22', '0.23']],
};

/// The facts that differ between the versions, and the first event where the traces do.
function factTable(runs, differences, divergence) {
  const [la, lb] = runs.map((r) => (r.title || '').split(':')[0]);
  return [
    h('h3', {}, `Facts that differ: ${differences.length}`),
    differences.length ? h('div', { class: 'compare-facts-wrap', tabindex: '0', role: 'region', 'aria-label': 'Facts that differ (scrolls)' }, h('table', { class: 'compare-facts', 'data-testid': 'compare-facts' },
      h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'fact'), h('th', { scope: 'col' }, la), h('th', { scope: 'col' }, lb))),
      h('tbody', {}, differences.map(([fact, va, vb]) => h('tr', { 'data-testid': 'compare-fact' }, h('td', {}, fact), h('td', {}, va), h('td', {}, vb))))))
      : h('p', { class: 'hint', 'data-testid': 'compare-facts' }, 'None: every fact is the same under both versions.'),
    h('p', { 'data-testid': 'compare-divergence' }, divergence
      ? [`The traces diverge at event #${divergence[0]}:`, h('br'), `${la}: ${divergence[1] || '(the run has ended)'}`, h('br'), `${lb}: ${divergence[2] || '(the run has ended)'}`]
      : 'The traces are the same, event for event.'),
  ];
}

// The facts table's looks, here rather than in style.css: the first load carries none of it.
const STYLE = `
.compare-facts-wrap { overflow: auto; max-height: 50vh; border: 1px solid var(--line); border-radius: 4px; }
.compare-facts { border-collapse: collapse; width: 100%; font-size: 12px; }
.compare-facts th { position: sticky; top: 0; background: var(--panel); text-align: left; border-bottom: 1px solid var(--line); }
.compare-facts th, .compare-facts td { padding: 3px 6px; vertical-align: top; overflow-wrap: anywhere; }
.compare-facts th { overflow-wrap: normal; white-space: nowrap; }
.compare-facts td + td { min-width: 6em; }
.compare-facts tr + tr td { border-top: 1px solid var(--line); }
[data-testid=compare-divergence] { font-size: 13px; overflow-wrap: anywhere; }
.compare-dialog { box-sizing: border-box; width: min(1400px, 96vw); max-width: 96vw; max-height: 92vh; padding: 12px 16px; border: 1px solid var(--line); border-radius: 8px; background: var(--bg); color: var(--fg); }
.compare-dialog::backdrop { background: rgb(0 0 0 / 45%); }
.compare-dialog-head { display: flex; justify-content: space-between; align-items: center; gap: 8px; }
.compare-dialog-head h2 { margin: 0; }
.compare-dialog .compare-runs { grid-template-columns: repeat(2, minmax(0, 1fr)); }
/* Two lanes side by side need about 1,350 px at their 12 px text; narrower, the runs stack (one
   clock still), and on a phone a lane scrolls sideways rather than shrink its text. */
@media (max-width: 1100px) { .compare-dialog .compare-runs { grid-template-columns: minmax(0, 1fr); } .compare-lanes { min-width: 640px; } }
.compare-lanes-box { overflow-x: auto; }
/* Below 720 px the lanes (at least 640 px, so their text stays 12 px) are wider than their box. */
.compare-lanes-hint { display: none; margin: 2px 0 0; }
@media (max-width: 720px) { .compare-lanes-hint { display: block; } }
.compare-lanes { width: 100%; height: auto; display: block; cursor: crosshair; }
.compare-lanes text { font-size: 12px; fill: var(--fg); }
.compare-lanes .axis { fill: var(--muted); }
.compare-lanes .span rect { fill: var(--slot); stroke: var(--line); }
.compare-lanes .span text { fill: var(--fg); }
.compare-lanes .st-watching rect { fill: color-mix(in srgb, var(--chip-run) 35%, var(--panel)); }
.compare-lanes .st-listing rect, .compare-lanes .st-listed rect { fill: color-mix(in srgb, var(--lit) 35%, var(--panel)); }
.compare-lanes .st-backoffrelist rect, .compare-lanes .st-backoffrewatch rect, .compare-lanes .st-stopped rect { fill: color-mix(in srgb, var(--gone) 30%, var(--panel)); }
.compare-lanes .now { stroke: var(--accent); stroke-width: 2; }
`;

// The picks and the clock the page gives (`state::Comparison`, see `state`), and where what the
// reader picks goes; the open comparison's redraw.
let picks = null, say = () => {}, redrawOpen = () => {};

/// The page's picks and clock, [versions, a, b, setting, version a, version b, clock ms], and
/// `on`, which takes `versions:BOOL`, `a:FILE`, `b:FILE`, `setting:NAME,A,B`, `version-a:V`,
/// `version-b:V` and `clock:MS`.
export function state(s, on) {
  picks = s; say = on;
  redrawOpen();
}

export function open(host, index, currentScript, s, on) {
  document.head.append(h('style', {}, STYLE));
  // What the worker answered: the runs and what differs (the page keeps the picks and the clock).
  let runs = null, error = null, busy = false, facts = [], divergence = null, shownMode = 'scripts';
  const pick = (label, value, key, testid) => h('label', {}, `${label} `,
    h('select', { 'data-testid': testid, 'aria-label': label, onchange: (e) => say(`${key}:${e.target.value}`) },
      testid === 'compare-a' && h('option', { value: '', selected: value === '' }, 'the script in the editor'),
      index.map(([f, title]) => h('option', { value: f, selected: value === f }, title))));
  const choose = (label, testid, options, value, said) => h('label', {}, `${label} `,
    h('select', { 'data-testid': testid, 'aria-label': label, onchange: (e) => say(said(e.target.value)) },
      options.map(([v, text]) => h('option', { value: v, selected: v === value }, text))));
  const draw = () => {
    const [versions, a, b, setting, va, vb, t] = picks;
    const mode = versions ? 'versions' : 'scripts';
    const end = runs ? Math.max(...runs.map((r) => r.end || 0)) : 0;
    const diffs = runs && shownMode === 'scripts' && !runs.some((r) => r.error) ? differences(runs[0], runs[1]) : [];
    redraw(host, h('div', { class: 'compare-panel' },
      h('div', { class: 'compare-bar' },
        choose('Compare', 'compare-mode', [['scripts', 'two scripts'], ['versions', 'one script under two versions']], mode, (v) => `versions:${v === 'versions'}`),
        pick(mode === 'versions' ? 'Script' : 'Run A', a, 'a', 'compare-a'),
        mode === 'scripts' && pick('Run B', b, 'b', 'compare-b'),
        mode === 'versions' && choose('of', 'compare-setting', Object.keys(VERSIONS).map((k) => [k, k]), setting, (v) => `setting:${v},${VERSIONS[v][1].join(',')}`),
        mode === 'versions' && choose('Version A', 'compare-version-a', (VERSIONS[setting]?.[0] || []).map((v) => [v, v]), va, (v) => `version-a:${v}`),
        mode === 'versions' && choose('Version B', 'compare-version-b', (VERSIONS[setting]?.[0] || []).map((v) => [v, v]), vb, (v) => `version-b:${v}`),
        h('button', { 'data-testid': 'compare-run', onclick: go, disabled: busy }, busy ? 'Running…' : 'Compare')),
      error && h('p', { class: 'fail' }, error),
      runs && h('button', { 'data-testid': 'compare-show', onclick: () => show() }, 'Show the comparison side by side')));
    if (runs) drawWide(end, diffs, t);
  };
  // The runs side by side, wide: in a dialog over the page rather than in this narrow column.
  const dialog = h('dialog', { class: 'compare-dialog', 'data-testid': 'compare-dialog', 'aria-labelledby': 'compare-dialog-title' });
  document.body.append(dialog);
  // showModal() makes the rest of the page inert, but Chromium's Tab past the dialog's last control
  // leaves the document (for the browser's own controls) before it comes back: at either end, Tab
  // and Shift+Tab wrap round inside the dialog instead. Escape still closes it.
  dialog.addEventListener('keydown', (e) => {
    if (e.key !== 'Tab') return;
    const stops = [...dialog.querySelectorAll('button, input, select, textarea, a[href], [tabindex]')]
      .filter((el) => el.tabIndex >= 0 && !el.disabled && el.getClientRects().length > 0);
    const at = document.activeElement, [first, last] = [stops[0], stops[stops.length - 1]];
    const edge = e.shiftKey ? at === first || at === dialog : at === last;
    if (edge && first) { e.preventDefault(); (e.shiftKey ? last : first).focus(); }
  });
  const show = () => { if (!dialog.open) dialog.showModal(); };
  const drawWide = (end, diffs, t) => {
    const setT = (v) => say(`clock:${v}`);
    redraw(dialog, h('div', { 'data-testid': 'compare', class: 'compare' },
      h('div', { class: 'compare-dialog-head' },
        h('h2', { id: 'compare-dialog-title' }, 'Two runs on one clock'),
        h('button', { 'data-testid': 'compare-close', onclick: () => dialog.close() }, 'Close')),
      h('label', { class: 'compare-clock' }, 'one clock for both ',
        h('input', { type: 'range', 'data-testid': 'compare-clock', 'aria-label': 'Time in both runs', min: '0', max: String(end), value: String(t),
          oninput: (e) => setT(Number(e.target.value)) }),
        h('b', {}, ` ${secs(t)}`)),
      h('div', { class: 'compare-runs' }, runs.map((r, i) => {
        const now = at(r, t);
        return h('section', { 'data-testid': 'run', class: 'run', 'data-title': r.title || '', 'aria-label': `Run ${i ? 'B' : 'A'}` },
          h('h3', {}, `${i ? 'B' : 'A'}: ${r.title || '(untitled)'}`),
          r.error ? h('p', { class: 'fail' }, r.error) : [
            h('div', { class: 'compare-lanes-box', tabindex: '0', role: 'region', 'aria-label': `Run ${i ? 'B' : 'A'}'s lanes` }, lanes(r, end, t, setT)),
            h('p', { class: 'hint compare-lanes-hint', 'data-testid': 'compare-lanes-hint' }, 'The lanes are wider than the screen: scroll them sideways ↔'),
            h('p', { class: 'hint', 'data-testid': 'compare-last' }, now.last ? `${secs(now.last[0])} ${now.last[1]}` : 'nothing yet'),
            h('ul', { class: 'run-states' }, [...now.states].map(([w, s]) => h('li', {}, `${w}: ${s}`))),
            h('ul', { class: 'run-outcomes' }, (r.outcomes || []).map(([text, pass, found]) =>
              h('li', { class: pass ? 'pass' : 'fail' }, h('b', {}, pass ? '✔ pass ' : '✘ FAIL '), `${text} — found ${found}`))),
            h('p', { class: r.esr && r.esr[0] ? 'pass' : 'fail' }, `ESR: ${r.esr && r.esr[0] ? 'holds' : 'fails'} (${r.esr ? r.esr[1] : ''})`),
            h('p', { class: 'hint' }, (r.counts || []).map(([w, n]) => `${n} ${w}`).join(' · ')),
          ]);
      })),
      shownMode === 'versions' ? factTable(runs, facts, divergence) : [
        h('h3', {}, 'Differences in outcome'),
        h('ul', { 'data-testid': 'compare-diffs', 'aria-live': 'polite' },
          diffs.length ? diffs.map((d) => h('li', {}, d)) : h('li', { class: 'hint' }, 'None: both runs end the same way.'))]));
  };
  async function go() {
    busy = true; error = null; draw();
    const [versions, a, b, setting, va, vb] = picks;
    if (versions && va === vb) { busy = false; error = `The comparison failed: ${setting} ${va} compared with itself; pick two versions`; return draw(); }
    try {
      const [sa, sb] = await Promise.all([a ? fetchScript(a) : Promise.resolve(currentScript()), versions ? '' : fetchScript(b)]);
      const job = versions ? { kind: 'compare_versions', script: sa, versions: `${setting}=${va},${vb}` } : { kind: 'compare', script: sa, other: sb };
      const answer = await ask('compare', job).answer;
      if (answer.kind !== 'compare') throw new Error(answer.message);
      ({ runs } = answer);
      facts = answer.differences || [];
      divergence = answer.divergence || null;
      shownMode = versions ? 'versions' : 'scripts';
      say('clock:0');
    } catch (e) { error = `The comparison failed: ${e.message}`; }
    busy = false; draw();
    if (runs && !error) show();
  }
  picks = s; say = on;
  redrawOpen = draw;
  draw();
}
