// Listwatch: a live listwatch example on a Docusaurus (MDX) page (docs/embedding.md).
//
//   import Listwatch from '@site/src/components/Listwatch';
//
//   <Listwatch panels="timeline,explanation" script={`
//   # Three writes overflow a cache of two
//   kind Pod cache fixed 2
//   ...
//   `} />
//
// The page's HTML (server-rendered, and what a reader without JavaScript gets) shows the script
// as a code block. In the browser the component puts the playground's embed view in an iframe
// with `source=parent` and, when the embed says it is ready, sends it the script by postMessage,
// as embed.js does: no share link is encoded here, so nothing of the Rust encoder is redone in
// JavaScript. The embed then reports its height, which the iframe takes.
//
// Written with React.createElement rather than JSX tags, so the file runs as it is (and is
// tested so: e2e/docs-integrations.mjs); Docusaurus compiles it like any other component.
import React, { useEffect, useRef, useState } from 'react';

// Where the playground is served; `playground="..."` on a block overrides it.
export const PLAYGROUND = 'https://example.org/listwatch/';

export const PANELS = ['editor', 'timeline', 'explanation'];
export const THEMES = ['light', 'dark'];

const h = React.createElement;

/** The playground's page: `…/index.html` (its embed view is `index.html?embed`). */
function page(playground) {
  if (playground.endsWith('.html')) return playground;
  return playground.endsWith('/') ? playground + 'index.html' : playground + '/index.html';
}

/** Refuses an option the embed does not have, in words, so a docs build stops at the block. */
function check(props) {
  const known = ['panels', 'theme', 'autoplay', 'playground', 'script', 'children'];
  for (const key of Object.keys(props)) {
    if (!known.includes(key)) throw new Error(`<Listwatch>: unknown option "${key}" (expected one of: panels, theme, autoplay, playground, script)`);
  }
  for (const p of props.panels ? String(props.panels).split(',') : []) {
    if (!PANELS.includes(p)) throw new Error(`<Listwatch>: unknown panel "${p}" (expected some of: ${PANELS.join(', ')})`);
  }
  if (props.theme !== undefined && !THEMES.includes(props.theme)) {
    throw new Error(`<Listwatch>: unknown theme "${props.theme}" (expected light or dark)`);
  }
}

/** The embed view's address: the options in the query, the script to come by postMessage. */
export function embedSrc(playground, { panels, theme, autoplay } = {}) {
  const query = ['embed', 'source=parent'];
  if (panels) query.push('panels=' + String(panels));
  if (theme) query.push('theme=' + theme);
  if (autoplay) query.push('autoplay');
  return page(playground) + '?' + query.join('&');
}

/**
 * The script: the `script` prop, or text children. The lines written inside a template literal
 * lose the indentation they share and the blank lines around them.
 */
export function scriptOf({ script, children }) {
  const text = script !== undefined ? script : [].concat(children === undefined ? [] : children).join('');
  if (typeof text !== 'string' || !text.trim()) throw new Error('<Listwatch>: no script (give script={`...`})');
  const lines = text.replace(/\r\n?/g, '\n').split('\n');
  while (lines.length && !lines[0].trim()) lines.shift();
  while (lines.length && !lines[lines.length - 1].trim()) lines.pop();
  const indents = lines.filter((l) => l.trim()).map((l) => l.match(/^[ \t]*/)[0].length);
  const common = Math.min(...indents);
  return lines.map((l) => l.slice(Math.min(common, l.match(/^[ \t]*/)[0].length))).join('\n') + '\n';
}

/** The iframe's title: the script's first comment line, as the playground names a scenario. */
export function titleOf(script) {
  const first = script.split('\n').find((l) => l.trim());
  const title = first && first.trim().startsWith('#') ? first.trim().replace(/^#+\s*/, '') : '';
  return title ? 'listwatch scenario: ' + title : 'listwatch scenario';
}

/** The height before the embed reports its own: its bar, picture and controls, and each panel. */
export function initialHeight(panels) {
  const shown = panels ? String(panels).split(',') : ['timeline', 'explanation'];
  const heights = { editor: 320, timeline: 160, explanation: 220 };
  return 620 + shown.reduce((sum, p) => sum + (heights[p] || 0), 0);
}

/**
 * A message from the embed: `ready` is answered with the script (sent only to the playground's
 * origin), `height` resizes the iframe. Messages from any other window or origin are ignored.
 */
export function onMessage(event, frame, script, origin, setHeight) {
  if (!frame || !frame.contentWindow || event.source !== frame.contentWindow || !event.data) return;
  if (event.origin !== origin) return;
  if (event.data.listwatch === 'ready') frame.contentWindow.postMessage({ listwatch: 'load', script }, origin);
  if (event.data.listwatch === 'height') {
    const height = parseInt(event.data.height, 10);
    if (height > 100 && height < 5000) setHeight(height);
  }
}

export default function Listwatch(props) {
  check(props);
  const script = scriptOf(props);
  const playground = props.playground || PLAYGROUND;
  const [live, setLive] = useState(false);
  const [height, setHeight] = useState(initialHeight(props.panels));
  const frame = useRef(null);
  // Effects run only in the browser: the server's HTML keeps the script as a code block.
  useEffect(() => setLive(true), []);
  useEffect(() => {
    if (!live) return undefined;
    const origin = new URL(playground, window.location.href).origin;
    const listener = (event) => onMessage(event, frame.current, script, origin, setHeight);
    window.addEventListener('message', listener);
    return () => window.removeEventListener('message', listener);
  }, [live, script, playground]);
  const code = h('pre', { className: 'listwatch-script' }, h('code', null, script));
  if (!live) return h('div', { className: 'listwatch' }, code);
  return h(
    'div',
    { className: 'listwatch' },
    h('iframe', {
      key: script,
      ref: frame,
      className: 'listwatch-embed',
      src: embedSrc(playground, props),
      title: titleOf(script),
      loading: 'lazy',
      style: { display: 'block', width: '100%', height: height + 'px', border: '1px solid #d9dde3', borderRadius: '6px' },
    }),
    h('details', { className: 'listwatch-fallback' }, h('summary', null, "The scenario's script"), code),
  );
}
