// Launches Debian's Chromium through playwright-core with the flags this closed network needs.
import { chromium } from 'playwright-core';

export async function launch() {
  return chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
}

/// Runs named async tests in order; prints one line each and the closing count.
export async function runTests(tests) {
  let passed = 0, failed = 0;
  for (const [name, fn] of tests) {
    const t = Date.now();
    try {
      await fn();
      passed++;
      console.log(`ok   ${name} (${Date.now() - t} ms)`);
    } catch (e) {
      failed++;
      console.log(`FAIL ${name}\n     ${String(e && e.stack || e).split('\n').slice(0, 4).join('\n     ')}`);
    }
  }
  console.log(`e2e: ${passed} passed, ${failed} failed`);
  return failed === 0;
}

export function assert(cond, msg) {
  if (!cond) throw new Error(`assertion failed: ${msg}`);
}

/// The editor's text (CodeMirror keeps its view on the element).
export function editorText(page) {
  return page.$eval('[data-testid="editor"]', (el) => el.cmView.state.doc.toString());
}

/// Replaces the editor's text as one edit, the way a paste would.
export function setEditor(page, text) {
  return page.$eval('[data-testid="editor"]', (el, t) => {
    const v = el.cmView;
    v.dispatch({ changes: { from: 0, to: v.state.doc.length, insert: t } });
  }, text);
}
