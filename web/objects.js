// The objects panel, loaded when the reader first opens it (panels.js draws its disclosure until
// then): each holder's copy of every object at the moment on screen, folded in the explorer's
// worker, and the picked object's history. DOM text and attributes only.
import { h, redraw } from './panels.js';
import { ask, stop } from './worker.js';

const MARKS = { fresh: '✓ current', stale: '⚠ stale', missing: '∅ missing', ghost: '✗ ghost' };
const isStale = (m) => m === 'stale' || m === 'ghost';
// `wide`: the objects (`kind/name`) whose table is wider than its box; `sized`: the panel's ResizeObserver.
let obj = { host: null, open: false, script: '', cursor: 0, pick: null, page: 0, table: null, jump: null, wide: new Set(), sized: null };

// The table's columns: a copy's cells (`CopyRow::cells`) go to the first column whose test takes
// their key; a column none of an object's copies fills is left out.
const COLUMNS = [
  ['rv', (k) => k === 'rv'],
  ['spec', (k) => k === 'spec'],
  ['status', (k) => k === 'status'],
  ['fields', (k) => k.startsWith('spec.') || k.startsWith('status.')],
  ['labels', (k) => k.startsWith('labels.')],
  ['annotations', (k) => k.startsWith('annotations.')],
  ['finalizers', (k) => k === 'finalizers'],
  ['owners', (k) => k === 'ownerReferences'],
  ['creationTimestamp', (k) => k === 'creationTimestamp'],
  ['deletionTimestamp', (k) => k === 'deletionTimestamp'],
  ['uid', (k) => k === 'uid'],
];
const column = (key) => COLUMNS.findIndex(([, takes]) => takes(key));
// A cell's text: a whole-column key (rv, uid) shows its value alone, a map entry `key=value`.
const entryText = (key, value, col) => (key === COLUMNS[col][0] || key === 'ownerReferences' ? value : `${key.slice(key.indexOf('.') + 1)}=${value}`);

function objectsJob() {
  if (!obj.open || !obj.script) return;
  const job = { kind: 'objects', script: obj.script, cursor: obj.cursor, pick_kind: obj.pick ? obj.pick[0] : '', pick_name: obj.pick ? obj.pick[1] : '', page: obj.page };
  // Every answer is drawn: the table says which moment it is of (`settled` below). A job refused
  // as stale, or dropped when the panel closes, draws nothing.
  ask('objects', job, { keep: true }).answer.then((table) => { if (obj.open) { obj.table = table; drawObjects(); } }, () => {});
}

function drawObjects() {
  if (!obj.host) return;
  const head = h('h2', { class: 'panel-head' },
    h('button', { class: 'disclose', 'aria-expanded': String(obj.open), 'aria-controls': 'objects-body', 'data-testid': 'objects-toggle', onclick: () => {
      obj.open = !obj.open;
      if (!obj.open) { stop('objects'); obj.table = null; }
      drawObjects(); objectsJob();
    } }, `${obj.open ? '▾' : '▸'} Objects`),
    h('span', { class: 'hint' }, ' each holder\'s copy, now'));
  if (!obj.open) { redraw(obj.host, h('div', { class: 'objects-panel' }, head)); return; }
  const t = obj.table;
  const pick = obj.pick ? `${obj.pick[0]}/${obj.pick[1]}` : '/';
  const settled = !!t && t.kind === 'objects' && t.cursor === obj.cursor && t.script === obj.script && t.pick === pick;
  const list = t && t.kind === 'objects' ? t.list : [];
  if (t && t.kind === 'objects') obj.page = t.page;
  const body = h('div', { id: 'objects-body', 'data-testid': 'objects', class: 'objects', 'data-settled': String(settled), 'aria-busy': String(!settled) },
    t && t.kind === 'error' && h('p', { class: 'hint' }, `The objects could not be folded: ${t.message}`),
    t && t.kind === 'objects' && t.seen === 0 && h('p', { class: 'hint' }, 'No object written yet at this moment.'),
    list.map(([kind, name, rows, hist]) => drawObject(kind, name, rows, hist)),
    t && t.kind === 'objects' && t.seen > t.per_page && pager(t));
  redraw(obj.host, h('div', { class: 'objects-panel' }, head, body));
  wide();
}

/// Says, under each table wider than its box, that it scrolls sideways (as compare.js does under
/// its lanes); measured after every draw and whenever the panel's width changes.
function wide() {
  // One observer, on the host drawn now (a new host is observed in the old one's place), acting
  // only when the width moved: its own hints change the height.
  if (obj.sized?.host !== obj.host) {
    obj.sized?.observer.disconnect();
    let width = -1;
    const observer = new ResizeObserver(([e]) => {
      if (e.contentRect.width !== width) { width = e.contentRect.width; wide(); }
    });
    observer.observe(obj.host);
    obj.sized = { host: obj.host, observer };
  }
  for (const box of obj.host.querySelectorAll('.table-scroll')) {
    const hint = box.nextElementSibling, name = box.parentElement.dataset;
    const over = box.scrollWidth > box.clientWidth + 1;
    obj.wide[over ? 'add' : 'delete'](`${name.kind}/${name.name}`);
    if (hint.hidden === over) hint.hidden = !over;
  }
}

/// One object: its name (a button that shows its history) and a row per holder; a stale copy's
/// cells that differ from etcd's are marked (≠, and named in its mark).
function drawObject(kind, name, rows, hist) {
  const selected = !!obj.pick && obj.pick[0] === kind && obj.pick[1] === name;
  const stale = rows.filter((r) => isStale(r.mark)).length;
  const used = COLUMNS.map((_, i) => rows.some((r) => r.cells.some(([k]) => column(k) === i)));
  const cols = COLUMNS.map((c, i) => [c[0], i]).filter(([, i]) => used[i]);
  const truth = rows.find((r) => r.holder === 'etcd');
  const etcdHas = (k) => (truth ? truth.cells.find((c) => c[0] === k) : null);
  const cell = (r, i) => {
    const entries = r.cells.filter(([k]) => column(k) === i);
    const gone = r.differs.filter((k) => column(k) === i && !r.cells.some((c) => c[0] === k));
    return h('td', { 'data-col': COLUMNS[i][0] },
      entries.map(([k, v], n) => {
        const differs = r.differs.includes(k);
        const was = etcdHas(k);
        return h('span', { class: differs ? 'entry differs' : 'entry', 'data-key': k, 'data-differs': differs ? 'true' : null, title: differs ? `etcd: ${was ? was[1] : 'none'}` : null },
          n > 0 ? ' ' : '', differs ? '≠ ' : '', entryText(k, v, i));
      }),
      gone.map((k) => h('span', { class: 'entry differs', 'data-key': k, 'data-differs': 'true', title: `etcd: ${etcdHas(k)[1]}` }, ' ≠ ', `no ${k}`)));
  };
  const markText = (r) => (r.mark === 'stale' && r.differs.length ? `${MARKS.stale}: ${r.differs.join(', ')}` : MARKS[r.mark] || '—');
  return h('div', { 'data-testid': 'object', 'data-kind': kind, 'data-name': name, class: selected ? 'object selected' : 'object' },
    h('button', { class: 'object-name', 'aria-expanded': String(selected), title: 'Show every version and who wrote it', onclick: () => {
      obj.pick = selected ? null : [kind, name]; drawObjects(); objectsJob();
    } }, h('b', {}, `${kind}/${name}`), stale > 0 && h('span', { class: 'stale-count' }, ` · ${stale} stale`)),
    h('div', { class: 'table-scroll', tabindex: '0', role: 'region', 'aria-label': `Copies of ${kind}/${name}` },
      h('table', {},
        h('thead', {}, h('tr', {}, ['holder', 'copy', ...cols.map(([c]) => c)].map((c) => h('th', { scope: 'col' }, c)))),
        h('tbody', {}, rows.map((r) => h('tr', {
          'data-testid': 'object-copy', 'data-holder': r.holder, 'data-rv': (r.cells.find((c) => c[0] === 'rv') || [0, ''])[1], 'data-stale': String(isStale(r.mark)), 'data-mark': r.mark,
          'data-differs': r.differs.join(','), class: `copy mark-${r.mark}`,
        }, h('th', { scope: 'row' }, r.holder), h('td', { class: 'mark' }, markText(r)),
        r.cells.length ? cols.map(([, i]) => cell(r, i)) : h('td', { colspan: String(cols.length), class: 'hint' }, 'no copy')))))),
    // Shown by `wide` only while the table is wider than its box.
    h('p', { class: 'hint table-wide', 'data-testid': 'objects-scroll-hint', hidden: !obj.wide.has(`${kind}/${name}`) },
      'The table is wider than its box: scroll it sideways ↔'),
    selected && hist && h('ol', { class: 'history', 'data-testid': 'object-history', 'aria-label': `History of ${kind}/${name}` },
      hist.map(([id, text, later]) => h('li', { class: later ? 'future' : null },
        h('button', { class: 'link', title: 'Go to this write', onclick: () => obj.jump(id) }, text)))));
}

/// Previous and next page of objects, and which are shown.
function pager(t) {
  const pages = Math.ceil(t.seen / t.per_page);
  const go = (p) => { obj.page = p; objectsJob(); };
  const first = t.page * t.per_page + 1;
  return h('nav', { class: 'pager', 'aria-label': 'Pages of objects', 'data-testid': 'objects-pager' },
    h('button', { 'data-testid': 'objects-prev', disabled: t.page === 0 ? '' : null, onclick: () => go(t.page - 1) }, '‹ Previous'),
    h('span', { 'data-testid': 'objects-shown' }, ` objects ${first}–${Math.min(t.seen, first + t.per_page - 1)} of ${t.seen} (page ${t.page + 1} of ${pages}) `),
    h('button', { 'data-testid': 'objects-next', disabled: t.page + 1 >= pages ? '' : null, onclick: () => go(t.page + 1) }, 'Next ›'));
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

