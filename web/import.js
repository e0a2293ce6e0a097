// Paste your logs: the dialog of `listwatch import`, loaded on its first opening. Pasted or dropped
// log lines go to the explorer's worker, which runs the same importer as the CLI
// (listwatch_script::import); the dialog shows what each line became and opens the scenario in
// the editor through the page, which keeps the user's script for Restore. DOM text and
// attributes only: nothing pasted ever becomes HTML.
import { h, redraw } from './panels.js';
import { ask } from './worker.js';

// A paste over this is not sent to the worker: only its size goes, and the importer's own
// message (its limit is 1 MiB) says why it is refused. Generous, so the importer alone decides.
const SEND_BYTES_MAX = 4 << 20;
// The importer is linear in the paste and its run is bounded; a worker still busy after this
// is stopped rather than left running.
const TIMEOUT_MS = 30000;
// Report rows drawn at most (a paste holds up to 10,000 lines); the counts cover all of them.
const ROWS_MAX = 1000;

const OUTCOMES = ['statement', 'setting', 'expectation', 'noted', 'left-out', 'not-recognised', 'blank'];
const words = (o) => o.replace('-', ' ');
const utf8Bytes = (s) => new Blob([s]).size;

// The dialog's looks, here rather than in style.css: the page's first load carries none of it.
const STYLE = `
.import-dialog { width: min(1100px, calc(100vw - 24px)); max-height: calc(100vh - 24px); box-sizing: border-box; padding: 12px 16px;
  background: var(--panel); color: var(--fg); border: 1px solid var(--line); border-radius: 8px; }
.import-dialog::backdrop { background: rgb(0 0 0 / 45%); }
.import-dialog.dropping { outline: 3px dashed var(--accent); outline-offset: -6px; }
.import-head { display: flex; align-items: center; gap: 8px; }
.import-head h2 { margin: 0; font-size: 17px; flex: 1; }
.import-dialog textarea { width: 100%; box-sizing: border-box; height: 9em; font: 12px ui-monospace, monospace; resize: vertical;
  background: var(--bg); color: var(--fg); border: 1px solid var(--line); border-radius: 4px; padding: 6px; }
.import-bar, .import-open-bar { display: flex; flex-wrap: wrap; gap: 6px 12px; align-items: center; margin: 6px 0; }
.import-pick input { max-width: 100%; }
.import-dialog .outcome.not-recognised { color: var(--gone); }
.import-dialog .outcome.statement, .import-dialog .outcome.expectation, .import-dialog .outcome.setting { color: var(--ok); }
.import-table-wrap { overflow: auto; max-height: 40vh; border: 1px solid var(--line); border-radius: 4px; }
.import-report { border-collapse: collapse; width: 100%; font-size: 12px; }
.import-report th { position: sticky; top: 0; background: var(--panel); text-align: left; border-bottom: 1px solid var(--line); }
.import-report th, .import-report td { padding: 3px 6px; vertical-align: top; }
.import-report td.detail { overflow-wrap: anywhere; min-width: 16em; }
.import-report td.num { text-align: right; white-space: nowrap; }
.import-report td.lines { min-width: 5em; max-width: 12em; }
.import-report tr.not-recognised td:nth-child(2) { color: var(--gone); font-weight: 600; }
.import-report tr + tr td { border-top: 1px solid var(--line); }
.import-notes { margin: 4px 0; padding-left: 20px; font-size: 13px; }
.import-script pre { max-height: 30vh; overflow: auto; font-size: 12px; background: var(--bg); padding: 6px; border-radius: 4px; }
@media (max-width: 700px) { .import-report th:nth-child(4), .import-report td:nth-child(4) { display: none; } .import-dialog { padding: 10px; } }
`;

let dialog = null;

/// Opens the dialog; `on('open:SCRIPT')` puts a scenario in the editor (the page keeps the
/// script it replaces, with Restore).
export function open(on) {
  if (!dialog) dialog = make(on);
  dialog.on = on;
  if (!dialog.el.open) dialog.el.showModal();
  dialog.el.querySelector('textarea').focus();
}

function make(on) {
  const st = { on, busy: false, error: '', doc: null, job: null, timer: 0, source: '' };
  const el = h('dialog', { class: 'import-dialog', 'data-testid': 'import-dialog', 'aria-labelledby': 'import-title' });
  const text = h('textarea', {
    'data-testid': 'import-text', 'aria-label': 'Log lines', spellcheck: 'false', autocomplete: 'off',
    placeholder: 'Paste client-go log lines, audit events or watch-cache metrics here, or drop a file',
  });
  // A paste too large to read is not put in the box (a box of tens of megabytes can hold the
  // tab for seconds): it is refused by its size at once, with the importer's message.
  text.onpaste = (e) => {
    const pasted = e.clipboardData?.getData('text/plain') || '';
    if (pasted.length <= SEND_BYTES_MAX) return;
    e.preventDefault();
    run('', utf8Bytes(pasted));
  };
  text.onkeydown = (e) => { if ((e.ctrlKey || e.metaKey) && e.key === 'Enter') { e.preventDefault(); run(text.value, null); } };
  const stop = () => {
    clearTimeout(st.timer);
    st.job?.cancel();
    st.job = null;
    st.busy = false;
  };
  const run = (value, size, what = 'the paste') => {
    stop();
    const bytes = size ?? utf8Bytes(value);
    Object.assign(st, { busy: true, error: '', doc: null, source: what });
    draw();
    const job = ask('import', { kind: 'import', text: bytes > SEND_BYTES_MAX ? '' : value, bytes });
    st.job = job;
    st.timer = setTimeout(() => done({ error: `the import took longer than ${TIMEOUT_MS / 1000} s and was stopped` }), TIMEOUT_MS);
    job.answer.then((m) => {
      if (job !== st.job) return;
      if (m.kind === 'import') done(m);
      else done({ error: m.message });
    }, (e) => {
      if (job !== st.job || e.why === 'cancelled') return;
      done({ error: e.why === 'start' ? 'the importer\'s worker could not start' : `the importer's worker stopped: ${e.message}` });
    });
  };
  const done = (r) => {
    stop();
    st.error = r.error || '';
    try { st.doc = r.json ? JSON.parse(r.json) : null; } catch { st.doc = null; st.error ||= 'the importer\'s answer could not be read'; }
    draw();
  };
  // A file, dropped or chosen: one too large is not read at all (its size is enough to refuse it).
  const readFile = (file) => {
    if (!file) return;
    if (file.size > SEND_BYTES_MAX) { text.value = ''; return run('', file.size, file.name); }
    file.text().then((t) => { text.value = t; run(t, file.size, file.name); }, () => done({ error: `${file.name} could not be read` }));
  };
  const pickFile = h('input', { type: 'file', 'data-testid': 'import-file', class: 'import-file', 'aria-label': 'Choose a log file',
    onchange: (e) => readFile(e.target.files[0]) });
  el.ondragover = (e) => { e.preventDefault(); el.classList.add('dropping'); };
  el.ondragleave = () => el.classList.remove('dropping');
  el.ondrop = (e) => { e.preventDefault(); el.classList.remove('dropping'); readFile(e.dataTransfer?.files?.[0]); };
  el.onclose = () => { stop(); draw(); };

  const draw = () => {
    const doc = st.doc, report = doc?.report || [];
    const count = Object.fromEntries(OUTCOMES.map((o) => [o, 0]));
    for (const r of report) count[r.outcome] = (count[r.outcome] || 0) + 1;
    const rows = report.filter((r) => r.outcome !== 'blank');
    const script = doc?.script || '';
    // One wrapper: `redraw` takes nodes only, and `h` drops the parts not shown.
    redraw(el, h('div', { class: 'import-body' },
      h('div', { class: 'import-head' },
        h('h2', { id: 'import-title' }, 'Paste your logs'),
        h('button', { class: 'import-close', 'data-testid': 'import-close', 'aria-label': 'Close', onclick: () => el.close() }, '✕')),
      h('p', { class: 'hint' }, 'client-go reflector and informer log lines (klog, printf style up to v0.32 and structured from v0.33), apiserver audit-log JSON lines for lists and watches, and apiserver_watch_cache_* metric samples become a scenario that reproduces them. At most 1 MiB and 10,000 lines; nothing leaves this browser.'),
      text,
      h('div', { class: 'import-bar' },
        st.busy ? h('button', { 'data-testid': 'import-cancel', onclick: () => { stop(); draw(); } }, 'Cancel')
          : h('button', { 'data-testid': 'import-run', title: 'Ctrl/Cmd+Enter', onclick: () => run(text.value, null) }, 'Import'),
        h('label', { class: 'import-pick' }, 'or a file: ', pickFile),
        h('span', { class: 'hint', role: 'status', 'data-testid': 'import-status' }, st.busy ? `Reading ${st.source}…` : '')),
      st.error && h('p', { class: 'fail', role: 'alert', 'data-testid': 'import-error' }, `Not imported: ${st.error}.`),
      doc && h('div', { class: 'import-result', 'data-testid': 'import-result' },
        h('p', { 'data-testid': 'import-counts' }, `${report.length.toLocaleString('en')} ${report.length === 1 ? 'line' : 'lines'}: `,
          OUTCOMES.filter((o) => count[o]).map((o, i) => h('span', { class: `outcome ${o}` }, `${i ? ', ' : ''}${count[o].toLocaleString('en')} ${words(o)}`))),
        script && h('div', { class: 'import-open-bar' },
          h('button', { 'data-testid': 'import-open', onclick: () => { st.on(`open:${script}`); el.close(); } }, 'Open the scenario in the editor'),
          h('span', { class: 'hint' }, ' your script is kept: Restore brings it back')),
        doc.notes?.length > 0 && h('ul', { class: 'import-notes', 'data-testid': 'import-notes' }, doc.notes.map((n) => h('li', {}, n))),
        h('div', { class: 'import-table-wrap' },
          h('table', { class: 'import-report', 'data-testid': 'import-report' },
            h('thead', {}, h('tr', {}, ['line', 'became', 'what', 'read as', 'script lines'].map((c) => h('th', { scope: 'col' }, c)))),
            h('tbody', {}, rows.slice(0, ROWS_MAX).map((r) => h('tr', { 'data-testid': 'import-line', 'data-outcome': r.outcome, class: r.outcome },
              h('td', { class: 'num' }, String(r.line)),
              h('td', {}, words(r.outcome)),
              h('td', { class: 'detail' }, r.detail),
              h('td', { class: 'hint' }, r.recogniser ? `${r.recogniser.format} · ${r.recogniser.version}` : '—'),
              h('td', { class: 'lines' }, (r.script_lines || []).join(', ') || '—')))))),
        rows.length > ROWS_MAX && h('p', { class: 'hint' }, `… and ${(rows.length - ROWS_MAX).toLocaleString('en')} more lines, counted above.`),
        script && h('details', { class: 'import-script' }, h('summary', {}, 'The scenario it wrote'),
          h('pre', { 'data-testid': 'import-script' }, script)))));
  };
  draw();
  document.head.append(h('style', {}, STYLE));
  document.body.append(el);
  return { el, get on() { return st.on; }, set on(f) { st.on = f; } };
}
