// Compare two runs, loaded when the reader opens the comparison: two scenarios side by side on one
// clock, with the differences in outcome listed; or one script under two versions of Kubernetes
// or controller-runtime ("what changes if I upgrade", the CLI's `run --compare
// kubernetes=1.34,1.35`), with the facts that differ and where the traces diverge. Both run in
// the explorer's worker. DOM text and attributes only.
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
    differences.length ? h('div', { class: 'compare-facts-wrap' }, h('table', { class: 'compare-facts', 'data-testid': 'compare-facts' },
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
`;

export function open(host, index, currentScript) {
  document.head.append(h('style', {}, STYLE));
  let runs = null, t = 0, error = null, busy = false, facts = [], divergence = null;
  let a = '', b = index.find(([f]) => f.includes('fixed'))?.[0] || index[0][0];
  // What is compared: two scripts, or the script in A under two versions of `setting`.
  let mode = 'scripts', setting = 'kubernetes', [va, vb] = VERSIONS.kubernetes[1], shownMode = mode;
  const pick = (label, value, set, testid) => h('label', {}, `${label} `,
    h('select', { 'data-testid': testid, 'aria-label': label, onchange: (e) => set(e.target.value) },
      testid === 'compare-a' && h('option', { value: '', selected: value === '' }, 'the script in the editor'),
      index.map(([f, title]) => h('option', { value: f, selected: value === f }, title))));
  const choose = (label, testid, options, value, set) => h('label', {}, `${label} `,
    h('select', { 'data-testid': testid, 'aria-label': label, onchange: (e) => { set(e.target.value); draw(); } },
      options.map(([v, text]) => h('option', { value: v, selected: v === value }, text))));
  const draw = () => {
    const end = runs ? Math.max(...runs.map((r) => r.end || 0)) : 0;
    const diffs = runs && shownMode === 'scripts' && !runs.some((r) => r.error) ? differences(runs[0], runs[1]) : [];
    redraw(host, h('div', { class: 'compare-panel' },
      h('div', { class: 'compare-bar' },
        choose('Compare', 'compare-mode', [['scripts', 'two scripts'], ['versions', 'one script under two versions']], mode, (v) => { mode = v; }),
        pick(mode === 'versions' ? 'Script' : 'Run A', a, (v) => { a = v; }, 'compare-a'),
        mode === 'scripts' && pick('Run B', b, (v) => { b = v; }, 'compare-b'),
        mode === 'versions' && choose('of', 'compare-setting', Object.keys(VERSIONS).map((k) => [k, k]), setting, (v) => { setting = v; [va, vb] = VERSIONS[v][1]; }),
        mode === 'versions' && choose('Version A', 'compare-version-a', VERSIONS[setting][0].map((v) => [v, v]), va, (v) => { va = v; }),
        mode === 'versions' && choose('Version B', 'compare-version-b', VERSIONS[setting][0].map((v) => [v, v]), vb, (v) => { vb = v; }),
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
        shownMode === 'versions' ? factTable(runs, facts, divergence) : [
          h('h3', {}, 'Differences in outcome'),
          h('ul', { 'data-testid': 'compare-diffs', 'aria-live': 'polite' },
            diffs.length ? diffs.map((d) => h('li', {}, d)) : h('li', { class: 'hint' }, 'None: both runs end the same way.'))])));
  };
  async function go() {
    busy = true; error = null; draw();
    const versions = mode === 'versions';
    if (versions && va === vb) { busy = false; error = `The comparison failed: ${setting} ${va} compared with itself; pick two versions`; return draw(); }
    try {
      const [sa, sb] = await Promise.all([a ? fetchScript(a) : Promise.resolve(currentScript()), versions ? '' : fetchScript(b)]);
      const job = versions ? { kind: 'compare_versions', script: sa, versions: `${setting}=${va},${vb}` } : { kind: 'compare', script: sa, other: sb };
      const w = new Worker('./explore_worker_loader.js');
      const answer = await new Promise((resolve, reject) => {
        w.onmessage = (e) => {
          if (e.data.kind === 'ready') w.postMessage(job);
          else if (e.data.kind === 'compare') { w.terminate(); resolve(e.data); }
          else if (e.data.kind === 'error') { w.terminate(); reject(new Error(e.data.message)); }
        };
      });
      ({ runs } = answer);
      facts = answer.differences || [];
      divergence = answer.divergence || null;
      shownMode = mode;
      t = 0;
    } catch (e) { error = `The comparison failed: ${e.message}`; }
    busy = false; draw();
  }
  draw();
}
