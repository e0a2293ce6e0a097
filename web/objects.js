// The objects panel, loaded when the reader first opens it (panels.js draws its disclosure until
// then): each holder's copy of every object at the moment on screen, folded in the explorer's
// worker, and the picked object's history. DOM text and attributes only.
import { h, redraw } from './panels.js';

const MARKS = { fresh: '✓ current', stale: '⚠ stale', missing: '∅ missing', ghost: '✗ ghost' };
const isStale = (m) => m === 'stale' || m === 'ghost';
let obj = { host: null, open: false, worker: null, ready: false, pending: null, script: '', cursor: 0, pick: null, table: null, jump: null };

function objectsJob() {
  if (!obj.open || !obj.script) return;
  if (!obj.worker) {
    obj.worker = new Worker('./explore_worker_loader.js');
    obj.ready = false;
    obj.worker.onmessage = (e) => {
      if (e.data.kind === 'ready') {
        obj.ready = true;
        if (obj.pending) obj.worker.postMessage(obj.pending);
        obj.pending = null;
      } else { obj.table = e.data; drawObjects(); }
    };
  }
  const job = { kind: 'objects', script: obj.script, cursor: obj.cursor, pick_kind: obj.pick ? obj.pick[0] : '', pick_name: obj.pick ? obj.pick[1] : '' };
  if (obj.ready) obj.worker.postMessage(job); else obj.pending = job;
}

function drawObjects() {
  if (!obj.host) return;
  const head = h('h2', { class: 'panel-head' },
    h('button', { class: 'disclose', 'aria-expanded': String(obj.open), 'aria-controls': 'objects-body', 'data-testid': 'objects-toggle', onclick: () => {
      obj.open = !obj.open;
      if (!obj.open && obj.worker) { obj.worker.terminate(); obj.worker = null; obj.table = null; }
      drawObjects(); objectsJob();
    } }, `${obj.open ? '▾' : '▸'} Objects`),
    h('span', { class: 'hint' }, ' each holder\'s copy, now'));
  if (!obj.open) { redraw(obj.host, h('div', { class: 'objects-panel' }, head)); return; }
  const t = obj.table;
  const pick = obj.pick ? `${obj.pick[0]}/${obj.pick[1]}` : '/';
  const settled = !!t && t.kind === 'objects' && t.cursor === obj.cursor && t.script === obj.script && t.pick === pick;
  const list = t && t.kind === 'objects' ? t.list : [];
  const body = h('div', { id: 'objects-body', 'data-testid': 'objects', class: 'objects', 'data-settled': String(settled), 'aria-busy': String(!settled) },
    t && t.kind === 'error' && h('p', { class: 'hint' }, `The objects could not be folded: ${t.message}`),
    t && t.kind === 'objects' && t.seen === 0 && h('p', { class: 'hint' }, 'No object written yet at this moment.'),
    list.map(([kind, name, rows, hist]) => {
      const selected = !!obj.pick && obj.pick[0] === kind && obj.pick[1] === name;
      const stale = rows.filter((r) => isStale(r[1])).length;
      return h('div', { 'data-testid': 'object', 'data-kind': kind, 'data-name': name, class: selected ? 'object selected' : 'object' },
        h('button', { class: 'object-name', 'aria-expanded': String(selected), title: 'Show every version and who wrote it', onclick: () => {
          obj.pick = selected ? null : [kind, name]; drawObjects(); objectsJob();
        } }, h('b', {}, `${kind}/${name}`), stale > 0 && h('span', { class: 'stale-count' }, ` · ${stale} stale`)),
        h('div', { class: 'table-scroll', tabindex: '0', role: 'region', 'aria-label': `Copies of ${kind}/${name}` },
          h('table', {},
            h('thead', {}, h('tr', {}, ['holder', 'copy', 'rv', 'spec', 'status', 'deletion', 'owner', 'uid'].map((c) => h('th', { scope: 'col' }, c)))),
            h('tbody', {}, rows.map((r) => h('tr', {
              'data-testid': 'object-copy', 'data-holder': r[0], 'data-rv': r[2] || '', 'data-stale': String(isStale(r[1])), 'data-mark': r[1], class: `copy mark-${r[1]}`,
            }, h('th', { scope: 'row' }, r[0]), h('td', { class: 'mark' }, MARKS[r[1]] || '—'),
            r.length > 2 ? r.slice(2).map((c) => h('td', {}, c)) : h('td', { colspan: '6', class: 'hint' }, 'no copy')))))),
        selected && hist && h('ol', { class: 'history', 'data-testid': 'object-history', 'aria-label': `History of ${kind}/${name}` },
          hist.map(([id, text, later]) => h('li', { class: later ? 'future' : null },
            h('button', { class: 'link', title: 'Go to this write', onclick: () => obj.jump(id) }, text)))));
    }),
    t && t.kind === 'objects' && t.seen > list.length && h('p', { class: 'hint' }, `${t.seen - list.length} more objects not shown.`));
  redraw(obj.host, h('div', { class: 'objects-panel' }, head, body));
}

/// The panel, opened by the reader (panels.js drew it closed until now).
export function open(host, script, cursor, onJump) {
  obj.open = true;
  objects(host, script, cursor, onJump);
}

/// The run on screen (its script) and the moment: redraws, and asks the worker when open.
export function objects(host, script, cursor, onJump) {
  const placed = obj.host === host;
  Object.assign(obj, { host, script, cursor, jump: onJump });
  // Closed, the panel shows nothing of the run or the moment: no DOM work on every edit or tick.
  if (placed && !obj.open) return;
  drawObjects();
  objectsJob();
}

