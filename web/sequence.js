// The sequence view, loaded when the reader first opens it (panels.js's `sequence`): a lane for
// etcd, each apiserver, each reflector and each controller (and the user, when the script writes),
// every request, response and watch event as an arrow between lanes, everything else as a mark
// on its lane, one row per event with its time. It follows the moment on screen (the event on
// screen is marked and scrolled to) and a click on an arrow, or Enter on it, jumps there (its items
// are buttons to the keyboard, one tab stop among them). The trace comes from the
// explorer's worker as the CLI's JSON (docs/trace-format.md). DOM text and attributes only.
import { h, redraw } from './panels.js';
import { ask } from './worker.js';

const SVG = 'http://www.w3.org/2000/svg';
/// Rows drawn at most: the window around the moment on screen.
const ROWS = 160;
const ROW_H = 20, LANE_W = 128, LEFT = 74, TOP = 40;
/// Runs longer than this are not fetched: their JSON would be hundreds of megabytes.
export const EVENTS_MAX = 200000;

const s = (tag, attrs = {}, ...kids) => {
  const e = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) if (v !== null && v !== undefined && v !== false) e.setAttribute(k, String(v));
  for (const k of kids.flat()) if (k !== null && k !== undefined && k !== false) e.append(k instanceof Node ? k : String(k));
  return e;
};
const secs = (ms) => `${Math.floor(ms / 1000)}.${String(ms % 1000).padStart(3, '0')}s`;
const cut = (t, n) => (t.length > n ? `${t.slice(0, n - 1)}…` : t);

/// The trace of `script`, run in the explorer's worker: a promise of its JSON document.
const docs = new Map();
function traceOf(script) {
  if (docs.has(script)) return docs.get(script);
  const p = ask('sequence', { kind: 'export', script }).answer
    .then((m) => (m.kind === 'export' ? JSON.parse(m.json) : Promise.reject(new Error(m.message))));
  docs.clear();
  docs.set(script, p);
  return p;
}

const TO_SERVER = new Set(['list_request', 'watch_request', 'watch_list_request', 'list_continue']);
const TO_CLIENT = new Set(['list_result', 'list_failed', 'watch_failed', 'watch_opened', 'watch_event', 'bookmark', 'initial_events_end']);
const WRITES = new Set(['write', 'write_failed', 'no_op_write']);

/// Lanes and, for every event, its arrow (from, to lanes) or its mark (one lane), read off the
/// trace: which apiserver a watcher talks to follows its controller's restarts and failovers, and
/// a message on a slow link is drawn from the row it left to the row it arrives (the link's delay
/// follows `link_delay`).
export function read(doc) {
  const names = doc.names, events = doc.events;
  const lanes = [], laneOf = new Map();
  const lane = (key, label, kind) => {
    if (!laneOf.has(key)) { laneOf.set(key, lanes.length); lanes.push({ key, label, kind }); }
    return laneOf.get(key);
  };
  const name = (i) => names[i] ?? '?';
  // Lanes in a fixed order: user, etcd, apiservers, then each controller's reflectors and the
  // controller itself, in the order they first appear.
  if (events.some((e) => WRITES.has(e.type) && name(e.actor) === 'user')) lane('user', 'user', 'user');
  lane('etcd', 'etcd', 'etcd');
  for (const e of events) if (e.apiserver !== undefined && e.type !== 'probe_request') lane(`a:${e.apiserver}`, name(e.apiserver), 'apiserver');
  const apiOf = new Map(), delay = new Map();
  const ctlOfWatcher = (w) => name(w).split('/')[0];
  for (const e of events) {
    if (e.watcher !== undefined) lane(`w:${e.watcher}`, name(e.watcher), 'reflector');
    if (e.controller !== undefined) lane(`c:${name(e.controller)}`, name(e.controller), 'controller');
  }
  const apiLane = (ctl) => (apiOf.has(ctl) ? apiOf.get(ctl) : lanes.findIndex((l) => l.kind === 'apiserver'));
  const time = events.map((e) => e.time_ms);
  const rowAt = (t, first) => {
    // The first event at or after t (`first`), else the last at or before it.
    let lo = 0, hi = time.length;
    while (lo < hi) { const m = (lo + hi) >> 1; if (first ? time[m] < t : time[m] <= t) lo = m + 1; else hi = m; }
    return first ? Math.min(lo, time.length - 1) : Math.max(lo - 1, 0);
  };
  const items = events.map((e, i) => {
    const text = e.text.replace(/\{(\d+)\}/g, (_, n) => name(Number(n))).replace(/\{\{/g, '{').replace(/\}\}/g, '}');
    const item = { id: e.id, time: e.time_ms, text, type: e.type, row: i, from: null, to: null, at: i };
    if (e.type === 'restart' || e.type === 'failover') apiOf.set(name(e.controller), lane(`a:${e.apiserver}`, name(e.apiserver), 'apiserver'));
    if (e.type === 'link_delay') delay.set(name(e.controller), e.delay_ms);
    if (WRITES.has(e.type)) {
      item.from = lane(name(e.actor) === 'user' ? 'user' : `c:${name(e.actor)}`, name(e.actor), 'controller');
      item.to = laneOf.get('etcd');
    } else if (e.type === 'cache_add') {
      item.from = laneOf.get('etcd');
      item.to = laneOf.get(`a:${e.apiserver}`);
    } else if (TO_SERVER.has(e.type) || TO_CLIENT.has(e.type)) {
      const ctl = ctlOfWatcher(e.watcher), d = delay.get(ctl) || 0;
      const [w, a] = [laneOf.get(`w:${e.watcher}`), apiLane(ctl)];
      if (TO_SERVER.has(e.type)) { item.from = w; item.to = a; item.at = d ? rowAt(e.time_ms + d, true) : i; }
      else { item.from = a; item.to = w; item.row = d ? rowAt(e.time_ms - d, false) : i; item.at = i; }
    } else if (e.type === 'enqueue' && e.cause !== null && events[e.cause]?.watcher !== undefined) {
      item.from = laneOf.get(`w:${events[e.cause].watcher}`);
      item.to = laneOf.get(`c:${name(e.controller)}`);
    } else if (e.type !== 'say') {
      const key = e.watcher !== undefined ? `w:${e.watcher}` : e.controller !== undefined ? `c:${name(e.controller)}`
        : e.apiserver !== undefined ? `a:${e.apiserver}` : name(e.actor) === 'user' ? 'user' : 'etcd';
      item.from = laneOf.has(key) ? laneOf.get(key) : null;
    }
    return item;
  });
  return { lanes, items };
}

const laneX = (i) => LEFT + LANE_W * i + LANE_W / 2;

/// The window of rows around event `now` as an SVG.
function picture(seq, now, onJump) {
  const n = seq.items.length;
  const lo = Math.max(0, Math.min(now - ROWS / 2, n - ROWS)), hi = Math.min(n, lo + ROWS);
  const y = (row) => (row - lo) * ROW_H + ROW_H / 2;
  // The tab stop: the item the keyboard last reached if it is still drawn, else the one on screen.
  const ids = seq.items.slice(lo, hi).map((it) => it.id);
  const stop = ids.includes(st.focus) ? st.focus : seq.items[now]?.id;
  const width = LEFT + LANE_W * seq.lanes.length + 8, height = (hi - lo) * ROW_H + 8;
  const rows = [];
  let last = -1;
  for (let i = lo; i < hi; i++) {
    const it = seq.items[i];
    const here = it.id === now;
    // A click moves the one tab stop too, so Tab never finds two inside the picture.
    const jump = () => { st.focus = it.id; onJump(String(it.id)); };
    const title = s('title', {}, `#${it.id} ${secs(it.time)} ${it.text}`);
    // A button to the keyboard and to screen readers, named by what it is; one tab stop for all
    // (see `keys`).
    const between = it.from !== null && it.from !== undefined && it.to !== null && it.to !== undefined && it.from !== it.to
      ? `, ${seq.lanes[it.from].label} to ${seq.lanes[it.to].label}` : '';
    const button = { role: 'button', tabindex: it.id === stop ? '0' : '-1', 'aria-label': `${secs(it.time)} ${it.text}${between}${here ? ' (on screen)' : ''}` };
    const cls = `seq-item seq-${it.type}${here ? ' now' : ''}`;
    if (here) rows.push(s('rect', { class: 'seq-now', x: 0, y: y(i) - ROW_H / 2, width, height: ROW_H }));
    if (it.time !== last) rows.push(s('text', { class: 'seq-time', x: 6, y: y(i) + 4 }, secs(it.time)));
    last = it.time;
    let g;
    if (it.from !== null && it.to !== null && it.from !== undefined && it.to !== undefined && it.from !== it.to) {
      const [x1, x2] = [laneX(it.from), laneX(it.to)];
      const [y1, y2] = [y(Math.max(lo, Math.min(hi - 1, it.row))), y(Math.max(lo, Math.min(hi - 1, it.at)))];
      const dir = x2 > x1 ? 1 : -1;
      g = s('g', { class: cls, 'data-event': it.id, 'data-testid': 'seq-arrow', ...button },
        s('line', { class: 'seq-hit', x1, y1, x2, y2 }),
        s('line', { x1, y1, x2: x2 - 6 * dir, y2 }),
        s('path', { d: `M${x2},${y2} l${-8 * dir},-4 l0,8 z` }),
        // Level: the label over the middle; slanted (a slow link): beside its sender, where it left.
        y1 === y2
          ? s('text', { x: (x1 + x2) / 2, y: y1 - 3, 'text-anchor': 'middle' }, cut(it.text, Math.floor(Math.abs(x2 - x1) / 6.5)))
          : s('text', { x: x1 + 6 * dir, y: y1 - 3, 'text-anchor': dir > 0 ? 'start' : 'end' }, cut(it.text, Math.floor((LANE_W - 12) / 6.5))),
        title);
    } else if (it.from !== null && it.from !== undefined) {
      const x = laneX(it.from);
      // Beside its lane, on the left of the last one: past it there is only the margin.
      const left = it.from === seq.lanes.length - 1;
      g = s('g', { class: cls, 'data-event': it.id, 'data-testid': 'seq-mark', ...button },
        s('circle', { cx: x, cy: y(i), r: 4 }),
        s('text', { x: left ? x - 8 : x + 8, y: y(i) + 4, 'text-anchor': left ? 'end' : 'start' }, cut(it.text, 17)), title);
    } else {
      g = s('g', { class: cls, 'data-event': it.id, 'data-testid': 'seq-mark', ...button },
        s('text', { x: LEFT + 4, y: y(i) + 4, class: 'seq-say' }, cut(it.text, 90)), title);
    }
    g.addEventListener('click', jump);
    rows.push(g);
  }
  // The lanes' names in a head of their own, which stays at the top of the box as it scrolls.
  const heads = seq.lanes.map((l, i) => [
    s('line', { class: 'seq-lane', x1: laneX(i), y1: TOP - 6, x2: laneX(i), y2: TOP }),
    s('text', { class: `seq-head seq-${l.kind}`, x: laneX(i), y: 16, 'text-anchor': 'middle' }, cut(l.label, 18), s('title', {}, `${l.kind} ${l.label}`)),
    l.kind !== l.label && s('text', { class: 'seq-kind', x: laneX(i), y: 30, 'text-anchor': 'middle' }, l.kind),
  ]);
  const lines = seq.lanes.map((_, i) => s('line', { class: 'seq-lane', x1: laneX(i), y1: 0, x2: laneX(i), y2: height }));
  const head = s('svg', { class: 'sequence-head', width, height: TOP, viewBox: `0 0 ${width} ${TOP}`, 'aria-hidden': 'true' }, heads.flat());
  const body = s('svg', { class: 'sequence', xmlns: SVG, width, height, viewBox: `0 0 ${width} ${height}`, role: 'group',
    'aria-label': `Sequence of events ${lo + 1} to ${hi} of ${n}: lanes ${seq.lanes.map((l) => l.label).join(', ')}`, 'data-testid': 'sequence' },
  lines, rows);
  return [head, body];
}

/// The keyboard in the sequence: its items are one tab stop (a roving tabindex); Up and Down move
/// to the previous and next item, Home and End to the first and last drawn, Enter and Space jump
/// there as a click does. A handler of the box around the SVG: Chromium makes an SVG element with a
/// key or focus listener a tab stop of its own.
const keys = (onJump) => ({
  onkeydown: (e) => {
    const g = e.target.closest?.('.seq-item');
    if (!g) return;
    if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); st.focus = Number(g.dataset.event); onJump(g.dataset.event); return; }
    const all = [...g.ownerSVGElement.querySelectorAll('.seq-item')], i = all.indexOf(g);
    if (!(e.key in { ArrowDown: 1, ArrowUp: 1, Home: 1, End: 1 })) return;
    e.preventDefault();
    const to = { ArrowDown: all[i + 1], ArrowUp: all[i - 1], Home: all[0], End: all[all.length - 1] }[e.key];
    if (!to) return;
    for (const x of all) x.setAttribute('tabindex', x === to ? '0' : '-1');
    st.focus = Number(to.dataset.event);
    to.focus();
  },
});

/// The sequence drawn as a standalone SVG file (its head above its rows): the page's rules for it
/// inlined, colours resolved.
function markup([head, svg]) {
  const clone = svg.cloneNode(true);
  const [w, top, h] = [Number(svg.getAttribute('width')), Number(head.getAttribute('height')), Number(svg.getAttribute('height'))];
  clone.setAttribute('height', String(top + h));
  clone.setAttribute('viewBox', `0 ${-top} ${w} ${top + h}`);
  const heads = head.cloneNode(true);
  heads.removeAttribute('aria-hidden');
  heads.setAttribute('y', String(-top));
  clone.insertBefore(heads, clone.firstChild);
  const root = getComputedStyle(document.documentElement);
  let css = '';
  for (const sheet of document.styleSheets) {
    try { for (const rule of sheet.cssRules) if (rule.cssText.includes('seq')) css += rule.cssText + '\n'; } catch { /* not ours */ }
  }
  css = css.replace(/var\((--[\w-]+)\)/g, (_, v) => root.getPropertyValue(v).trim() || '#000');
  const style = document.createElementNS(SVG, 'style');
  style.textContent = `${css} svg { background: ${getComputedStyle(document.body).backgroundColor}; font-family: system-ui, sans-serif; font-size: 12px; }`;
  clone.insertBefore(style, clone.firstChild);
  return new XMLSerializer().serializeToString(clone);
}

function save(svgs) {
  const a = document.createElement('a');
  a.href = URL.createObjectURL(new Blob([markup(svgs)], { type: 'image/svg+xml' }));
  a.download = 'listwatch-sequence.svg';
  document.body.appendChild(a);
  a.click();
  setTimeout(() => { URL.revokeObjectURL(a.href); a.remove(); }, 1000);
}

// `focus`: the event of the item the keyboard last reached (the sequence's tab stop).
const st = { open: true, script: null, seq: null, error: null, args: null, focus: null };

/// Draws the panel into `host`: the run of `script` (`events` long) with event `cursor - 1` on
/// screen; `onToggle` closes it, `onJump(id)` moves the page to an event.
export function draw(host, script, cursor, events, onJump, onToggle) {
  st.args = [host, script, cursor, events, onJump, onToggle];
  if (st.open && script !== st.script && events <= EVENTS_MAX) {
    // A new run: the item the keyboard reached in the old one names nothing here.
    st.script = script; st.seq = null; st.error = null; st.focus = null;
    traceOf(script).then((doc) => { if (st.script === script) { st.seq = read(doc); draw(...st.args); } },
      (e) => { if (st.script === script) { st.error = String(e.message || e); draw(...st.args); } });
  }
  const head = h('h2', { class: 'panel-head' },
    h('button', { class: 'disclose', 'aria-expanded': String(st.open), 'aria-controls': 'sequence-body', 'data-testid': 'sequence-toggle', onclick: () => { st.open = !st.open; onToggle(st.open); draw(...st.args); } }, `${st.open ? '▾' : '▸'} Sequence view`),
    h('span', { class: 'hint' }, ' every request, response and event between the parts'));
  if (!st.open) return redraw(host, head);
  let body;
  if (events > EVENTS_MAX) body = h('p', { class: 'hint', 'data-testid': 'sequence-too-long' }, `This run has ${events} events: the sequence view draws runs of at most ${EVENTS_MAX}.`);
  else if (st.error) body = h('p', { class: 'fail' }, `The sequence could not be drawn: ${st.error}`);
  else if (!st.seq || st.script !== script) body = h('p', { class: 'hint', 'data-testid': 'sequence-loading' }, 'Running the scenario for the sequence view…');
  if (body) return redraw(host, head, h('div', { id: 'sequence-body' }, body));
  // An item with the focus keeps it across the redraw (a jump from the keyboard redraws it all).
  const focused = host.contains(document.activeElement) && document.activeElement.closest?.('.seq-item')?.dataset.event;
  const now = Math.max(0, cursor - 1);
  const [headSvg, svg] = picture(st.seq, now, onJump);
  const exportButton = h('button', { 'data-testid': 'sequence-export', onclick: () => save([host.querySelector('svg.sequence-head'), host.querySelector('svg.sequence')]) }, 'Export SVG');
  const box = h('div', { class: 'sequence-scroll', 'data-testid': 'sequence-scroll', tabindex: '0', role: 'region', 'aria-label': 'Sequence view (scrolls)', ...keys(onJump) });
  redraw(host, head, h('div', { id: 'sequence-body' }, h('div', { class: 'sequence-bar' }, exportButton,
    h('span', { class: 'hint' }, `event ${cursor} of ${st.seq.items.length}; click an arrow, or Tab to it and press Enter, to go there`)), box));
  // The SVG is replaced whole (the page's `redraw` keeps HTML elements only), then the moment on
  // screen is scrolled into the middle of the box.
  const scroller = host.querySelector('.sequence-scroll');
  scroller.replaceChildren(headSvg, svg);
  if (focused) (svg.querySelector(`.seq-item[data-event="${focused}"]`) || svg.querySelector('.seq-item[tabindex="0"]'))?.focus({ preventScroll: true });
  const mark = svg.querySelector('.seq-now');
  if (mark) scroller.scrollTop = Math.max(0, Number(mark.getAttribute('y')) + TOP - scroller.clientHeight / 2);
}
