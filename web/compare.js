// Compare two runs, loaded when the reader opens the comparison: two scenarios side by side on one
// clock, with the differences in outcome listed. Both run in the explorer's worker. DOM text and
// attributes only.
import { h, redraw } from './panels.js';
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

export function open(host, index, currentScript) {
  let runs = null, t = 0, error = null, busy = false;
  let a = '', b = index.find(([f]) => f.includes('fixed'))?.[0] || index[0][0];
  const pick = (label, value, set, testid) => h('label', {}, `${label} `,
    h('select', { 'data-testid': testid, 'aria-label': label, onchange: (e) => set(e.target.value) },
      testid === 'compare-a' && h('option', { value: '', selected: value === '' }, 'the script in the editor'),
      index.map(([f, title]) => h('option', { value: f, selected: value === f }, title))));
  const draw = () => {
    const end = runs ? Math.max(...runs.map((r) => r.end || 0)) : 0;
    const diffs = runs && !runs.some((r) => r.error) ? differences(runs[0], runs[1]) : [];
    redraw(host, h('div', { class: 'compare-panel' },
      h('div', { class: 'compare-bar' },
        pick('Run A', a, (v) => { a = v; }, 'compare-a'),
        pick('Run B', b, (v) => { b = v; }, 'compare-b'),
        h('button', { 'data-testid': 'compare-run', onclick: go, disabled: busy }, busy ? 'Running…' : 'Compare')),
      error && h('p', { class: 'fail' }, error),
      runs && h('div', { 'data-testid': 'compare', class: 'compare' },
        h('label', { class: 'compare-clock' }, 'one clock for both ',
          h('input', { type: 'range', 'data-testid': 'compare-clock', 'aria-label': 'Time in both runs', min: '0', max: String(end), value: String(t),
            oninput: (e) => { t = Number(e.target.value); draw(); } }),
          h('b', {}, ` ${secs(t)}`)),
        h('div', { class: 'compare-runs' }, runs.map((r, i) => {
          const now = at(r, t);
          return h('div', { 'data-testid': 'run', class: 'run', 'data-title': r.title || '' },
            h('h3', {}, `${i ? 'B' : 'A'}: ${r.title || '(untitled)'}`),
            r.error ? h('p', { class: 'fail' }, r.error) : [
              h('p', { class: 'hint' }, now.last ? `${secs(now.last[0])} ${now.last[1]}` : 'nothing yet'),
              h('ul', { class: 'run-states' }, [...now.states].map(([w, s]) => h('li', {}, `${w}: ${s}`))),
              h('ul', { class: 'run-outcomes' }, (r.outcomes || []).map(([text, pass, found]) =>
                h('li', { class: pass ? 'pass' : 'fail' }, h('b', {}, pass ? '✔ pass ' : '✘ FAIL '), `${text} — found ${found}`))),
              h('p', { class: r.esr && r.esr[0] ? 'pass' : 'fail' }, `ESR: ${r.esr && r.esr[0] ? 'holds' : 'fails'} (${r.esr ? r.esr[1] : ''})`),
              h('p', { class: 'hint' }, (r.counts || []).map(([w, n]) => `${n} ${w}`).join(' · ')),
            ]);
        })),
        h('h3', {}, 'Differences in outcome'),
        h('ul', { 'data-testid': 'compare-diffs', 'aria-live': 'polite' },
          diffs.length ? diffs.map((d) => h('li', {}, d)) : h('li', { class: 'hint' }, 'None: both runs end the same way.')))));
  };
  async function go() {
    busy = true; error = null; draw();
    try {
      const [sa, sb] = await Promise.all([a ? fetchScript(a) : Promise.resolve(currentScript()), fetchScript(b)]);
      const w = new Worker('./explore_worker_loader.js');
      runs = await new Promise((resolve) => {
        w.onmessage = (e) => {
          if (e.data.kind === 'ready') w.postMessage({ kind: 'compare', script: sa, other: sb });
          else if (e.data.kind === 'compare') { w.terminate(); resolve(e.data.runs); }
        };
      });
      t = 0;
    } catch (e) { error = `The comparison failed: ${e.message}`; }
    busy = false; draw();
  }
  draw();
}
