// The page's exports: the trace's JSON (written by the worker), the view as SVG or PNG. Loaded on
// the first click (panels.js's `export_json` and `download_view`), so the first load does not
// carry it.
import { ask } from './worker.js';

function save(name, blob) {
  const a = document.createElement('a');
  a.href = URL.createObjectURL(blob);
  a.download = name;
  document.body.appendChild(a);
  a.click();
  setTimeout(() => { URL.revokeObjectURL(a.href); a.remove(); }, 1000);
}

export function download_text(name, mime, text) { save(name, new Blob([text], { type: mime })); }

let exporting = null;
/// The trace of `script` as the CLI's JSON, written in the explorer's worker (which holds
/// serde_json) and saved as `listwatch-trace.json`; a newer call cancels an older one. `notice`
/// says a failure in words.
export function export_json(script, notice) {
  exporting?.cancel();
  const job = ask('export', { kind: 'export', script });
  exporting = job;
  job.answer.then((m) => {
    if (m.kind === 'export') download_text('listwatch-trace.json', 'application/json', m.json);
    else notice(`The export failed: ${m.message}`);
  }, (e) => {
    if (e.why === 'start') notice('The export could not start');
    else if (e.why === 'stopped') notice(`The export failed: ${e.message}`);
  });
}

/// The view as a standalone SVG: the page's rules inlined with the theme's colours resolved,
/// motion stopped.
function viewMarkup() {
  const svg = document.querySelector('svg.system');
  if (!svg) return '';
  const clone = svg.cloneNode(true), vb = svg.viewBox.baseVal;
  clone.setAttribute('xmlns', 'http://www.w3.org/2000/svg');
  clone.setAttribute('width', String(vb.width));
  clone.setAttribute('height', String(vb.height));
  const root = getComputedStyle(document.documentElement);
  let css = '';
  for (const sheet of document.styleSheets) {
    try { for (const rule of sheet.cssRules) css += rule.cssText + '\n'; } catch { /* not ours */ }
  }
  css = css.replace(/var\((--[\w-]+)\)/g, (_, v) => root.getPropertyValue(v).trim() || '#000');
  const style = document.createElementNS('http://www.w3.org/2000/svg', 'style');
  // Messages are drawn where they are: the motion that brings them there is the page's only.
  style.textContent = css + `svg { background: ${getComputedStyle(document.body).backgroundColor}; font-family: system-ui, sans-serif; } .fly { animation: none; }`;
  clone.insertBefore(style, clone.firstChild);
  return new XMLSerializer().serializeToString(clone);
}

/// Saves the view at this moment as `listwatch.svg`, or (`png`) as `listwatch.png` at twice its size.
export function download_view(kind) {
  const markup = viewMarkup();
  if (kind !== 'png') return download_text('listwatch.svg', 'image/svg+xml', markup);
  const url = URL.createObjectURL(new Blob([markup], { type: 'image/svg+xml' }));
  const img = new Image();
  img.onload = () => {
    const c = document.createElement('canvas');
    c.width = img.width * 2;
    c.height = img.height * 2;
    const ctx = c.getContext('2d');
    ctx.scale(2, 2);
    ctx.drawImage(img, 0, 0);
    URL.revokeObjectURL(url);
    c.toBlob((b) => save('listwatch.png', b), 'image/png');
  };
  img.src = url;
}
