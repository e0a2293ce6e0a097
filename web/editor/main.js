// The scenario editor: CodeMirror 6 with the scenario language's highlighting and the checker's
// diagnostics inline. Bundled by esbuild into bundle.js (see `cargo xtask build`), which the Yew
// app imports through wasm-bindgen. Only the extensions the editor uses are imported.
import { EditorState } from '@codemirror/state';
import { EditorView, keymap, lineNumbers, drawSelection, highlightActiveLine } from '@codemirror/view';
import { StreamLanguage, syntaxHighlighting, HighlightStyle } from '@codemirror/language';
import { lintGutter, setDiagnostics } from '@codemirror/lint';
import { history, undo, redo } from '@codemirror/commands';
import { tags as t } from '@lezer/highlight';

const STATEMENTS = new Set(['seed', 'kind', 'apiserver', 'compaction', 'bookmarks', 'streaming-list', 'controller', 'at', 'every', 'run', 'expect']);
const WORDS = new Set(['for', 'times', 'from', 'cache', 'fixed', 'dynamic', 'off', 'on', 'lag', 'spec', 'in', 'owner', 'self', 'none',
  'after', 'write', 'writes', 'restart-after', 'never', 'saw', 'final', 'exists', 'absent', 'esr', 'by', 'status']);
const ACTIONS = new Set(['create', 'update', 'status', 'delete', 'disconnect', 'delay', 'drop', 'pause', 'resume',
  'restart-apiserver', 'reinit-cache', 'crash', 'restart', 'say']);
const BEHAVIOURS = new Set(['children', 'mirror', 'stale-delete', 'wipe-on-zero', 'two-writes']);

const language = StreamLanguage.define({
  name: 'listwatch',
  token(stream) {
    if (stream.eatSpace()) return null;
    const c = stream.peek();
    if (c === '#') { stream.skipToEnd(); return 'comment'; }
    if (c === '"') {
      stream.next();
      while (!stream.eol()) {
        const ch = stream.next();
        if (ch === '\\') { stream.next(); continue; }
        if (ch === '"') break;
      }
      return 'string';
    }
    if (stream.match(/^\+?\d+(\.\d+)?(ms|s|m|h)(?![\w-])/)) return 'number';
    if (stream.match(/^-?\d+(\.\.\d+)?%?(?![\w-])/)) return 'number';
    if (stream.match(/^(==|!=|<=|>=|<|>|=)/)) return 'operator';
    stream.match(/^[^\s#"]+/);
    const w = stream.current();
    if (STATEMENTS.has(w)) return 'keyword';
    if (ACTIONS.has(w)) return 'atom';
    if (BEHAVIOURS.has(w)) return 'atom';
    if (WORDS.has(w)) return 'keyword';
    if (/^[A-Z]/.test(w)) return 'typeName';
    return null;
  },
  languageData: { commentTokens: { line: '#' } },
});

const highlight = HighlightStyle.define([
  { tag: t.comment, color: 'var(--muted)', fontStyle: 'italic' },
  { tag: t.keyword, color: 'var(--accent)', fontWeight: '600' },
  { tag: t.atom, color: '#b35a00' },
  { tag: t.number, color: '#1f9d55' },
  { tag: t.string, color: '#a0308f' },
  { tag: t.typeName, color: '#7a4fd6' },
  { tag: t.operator, color: 'var(--fg)' },
]);

const theme = EditorView.theme({
  '&': { backgroundColor: 'var(--panel)', color: 'var(--fg)', height: '100%' },
  '.cm-content': { fontFamily: 'ui-monospace, monospace', fontSize: '12px', caretColor: 'var(--fg)' },
  '.cm-gutters': { backgroundColor: 'var(--bg)', color: 'var(--muted)', border: 'none' },
  '.cm-activeLine': { backgroundColor: 'color-mix(in srgb, var(--accent) 7%, transparent)' },
  '&.cm-focused': { outline: '2px solid var(--accent)' },
});

/** Creates an editor in `parent`; `onChange(text)` is called on every edit. */
export function create_editor(parent, text, readonly, onChange) {
  const view = new EditorView({
    parent,
    state: EditorState.create({
      doc: text,
      extensions: [
        lineNumbers(), history(), drawSelection(), highlightActiveLine(), language,
        syntaxHighlighting(highlight), lintGutter(), theme,
        // The browser edits and moves the caret by itself; only undo and redo need keys.
        keymap.of([{ key: 'Mod-z', run: undo, preventDefault: true }, { key: 'Mod-y', run: redo, preventDefault: true },
          { key: 'Mod-Shift-z', run: redo, preventDefault: true }]),
        EditorState.readOnly.of(readonly), EditorView.editable.of(!readonly),
        EditorView.contentAttributes.of({ 'aria-label': 'Scenario script', spellcheck: 'false' }),
        EditorView.updateListener.of((u) => { if (u.docChanged) onChange(u.state.doc.toString()); }),
      ],
    }),
  });
  // Tests and tools read the text from the element.
  parent.cmView = view;
  return view;
}

/** Replaces the whole text (a gallery pick, a link), unless it is already the same. */
export function set_text(view, text) {
  if (view.state.doc.toString() !== text) {
    view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: text } });
  }
}

/** `list` holds [line, col, len, message] from the checker, all 1-based. */
export function set_diagnostics(view, list) {
  const doc = view.state.doc;
  const diagnostics = list.map(([line, col, len, message]) => {
    const l = doc.line(Math.min(Math.max(line, 1), doc.lines));
    const from = Math.min(l.from + Math.max(col, 1) - 1, l.to);
    const to = Math.min(from + Math.max(len, 1), l.to);
    return { from, to: Math.max(to, from), severity: 'error', message };
  });
  view.dispatch(setDiagnostics(view.state, diagnostics));
}

export function destroy(view) {
  view.destroy();
}
