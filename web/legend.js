// The legend's contents: what each colour and shape of the picture and the timeline means, loaded
// when the reader first opens the legend (panels.js draws its disclosure).
// Each swatch has its own `lg-` classes, styled from the same theme variables as the picture
// (style.css), so it follows the theme while the picture's classes (`.msg`, `.mark`, `.slot`, ...)
// stay the picture's alone for whoever counts them; each has its words beside it, so colour is
// never the only signal. Drawn here rather than in the wasm: as Yew markup it cost the first load
// 2.6 KB gzipped, and here 0.8 KB.
import { h } from './panels.js';

const svg = (tag, attrs, ...kids) => {
  const e = document.createElementNS('http://www.w3.org/2000/svg', tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  e.append(...kids);
  return e;
};
const line = (c) => svg('line', { class: c, x1: 0, y1: 8, x2: 28, y2: 8 });
/// Swatches, drawn in a 28×16 box: (class, text) -> SVG nodes.
const SWATCH = {
  slot: (c) => [svg('circle', { class: `lg-slot ${c}`, cx: 14, cy: 8, r: 6 })],
  state: (c) => [svg('rect', { class: `lg-state ${c}`, x: 1, y: 1, width: 26, height: 14, rx: 7 })],
  dot: (c) => [line('lg-link'), svg('circle', { class: `lg-msg ${c}`, cx: 14, cy: 8, r: 5 })],
  cut: () => [line('lg-link lg-cut')],
  chip: (c, t) => [svg('g', { class: `lg-chip ${c}` }, svg('rect', { x: 1, y: 1, width: 26, height: 14, rx: 3 }), svg('text', { x: 5, y: 12 }, t))],
  mark: (c) => [svg('rect', { class: `lg-mark ${c}`, x: 12, y: 2, width: 4, height: 12 })],
  window: () => [svg('rect', { class: 'lg-window', x: 0, y: 0, width: 28, height: 16 })],
};
const LEGEND = [
  ['Watch cache', [
    ['slot', 'lg-filled', 'an event the cache holds'], ['slot', 'lg-entering', 'an event arriving'],
    ['slot', 'lg-evicting', 'an event evicted, with its RV, beside the ring'], ['slot', '', 'a free slot'],
    ['slot', 'lg-paused', 'held while the cache is paused']]],
  ['Watchers and links', [
    ['state', 'lg-lit', 'the reflector\'s state now (lit, bold)'], ['state', '', 'a state it is not in'],
    ['state', 'lg-gone', '410 Gone: flashes, with the message'],
    ['dot', 'lg-request', 'a request going up to the apiserver, where it is on its way'],
    ['dot', '', 'a watch event coming down'], ['dot', 'lg-bookmark', 'a bookmark'],
    ['dot', 'lg-error', 'an error (410, 429, 504)'], ['cut', '', 'a link cut (dashed): disconnected or crashed']]],
  ['Work queue', [
    ['chip', '', 'a key waiting', 'a'], ['chip', 'lg-running', 'a reconcile running (bold)', 'a'],
    ['chip', 'lg-running lg-stale', 'it read a stale copy ("!", dashed)', 'a!'],
    ['chip', 'lg-done', 'a reconcile done: ✓ done, ↻ requeued, ✗ an error or a crash (dotted)', '✓a']]],
  ['Timeline', [
    ['mark', 'lg-gone', '410 Gone'], ['mark', 'lg-relist', 'a relist'], ['mark', 'lg-reconcile', 'a reconcile'],
    ['mark', 'lg-write', 'a write to etcd'], ['mark', 'lg-fault', 'a fault'], ['mark', 'lg-say', 'narration'],
    ['window', '', 'a fault\'s window (shaded)']]],
];
/// The legend's groups, for its disclosure.
export function groups() {
  return h('div', { class: 'legend-groups' }, LEGEND.map(([title, rows]) => h('section', { 'aria-label': title }, h('h3', {}, title),
    h('ul', {}, rows.map(([kind, c, words, t]) => h('li', {},
      svg('svg', { class: 'legend-swatch', viewBox: '0 0 28 16', width: 28, height: 16, 'aria-hidden': 'true' }, ...SWATCH[kind](c, t)),
      h('span', {}, words)))))));
}
