// The scenario editor: CodeMirror 6 with the scenario language's highlighting and the checker's
// diagnostics inline. Bundled by esbuild into bundle.js (see `cargo xtask build`), which the Yew
// app imports through wasm-bindgen. Only the extensions the editor uses are imported.
import { EditorState } from '@codemirror/state';
import { EditorView, keymap, lineNumbers, drawSelection, highlightActiveLine } from '@codemirror/view';
import { StreamLanguage, syntaxHighlighting, HighlightStyle } from '@codemirror/language';
import { lintGutter, setDiagnostics } from '@codemirror/lint';
import { history, undo, redo } from '@codemirror/commands';
import { autocompletion } from '@codemirror/autocomplete';
import { tags as t } from '@lezer/highlight';

// The words come from the Rust side (listwatch_script::syntax), so the editor, the preview and
// the parser share one vocabulary.
function scenarioLanguage(words) {
  const keywords = new Set(words.keywords);
  const atoms = new Set(words.atoms);
  return StreamLanguage.define({
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
      stream.match(/^[^\s#"]+/);
      const w = stream.current();
      if (/^[+-]?\d/.test(w)) return 'number';
      if (['==', '!=', '<', '<=', '>', '>=', '='].includes(w)) return 'operator';
      if (keywords.has(w)) return 'keyword';
      if (atoms.has(w)) return 'atom';
      if (/^[A-Z]/.test(w)) return 'typeName';
      return null;
    },
    languageData: { commentTokens: { line: '#' } },
  });
}

// Completion: the language's words (statements, options, actions, the logic block's words) and
// the names the script itself declares or writes (kinds, controllers, apiservers, objects).
function completions(words) {
  const vocab = [...new Set([...words.keywords, ...words.atoms])].map((w) => ({ label: w, type: 'keyword' }));
  return (context) => {
    const word = context.matchBefore(/[\w./{}-]+/);
    if (!word || (word.from === word.to && !context.explicit)) return null;
    const seen = new Set(vocab.map((o) => o.label));
    const own = [];
    for (const m of context.state.doc.toString().matchAll(/[A-Za-z][\w./-]{2,62}/g)) {
      const w = m[0];
      if (!seen.has(w) && w !== word.text) { seen.add(w); own.push({ label: w, type: /^[A-Z]/.test(w) ? 'type' : 'variable' }); }
      if (own.length > 500) break;
    }
    return { from: word.from, options: [...vocab, ...own], validFor: /^[\w./{}-]*$/ };
  };
}

// The same classes as the page's preview: web/style.css colours both.
const highlight = HighlightStyle.define([
  { tag: t.comment, class: 'tok-comment' },
  { tag: t.keyword, class: 'tok-keyword' },
  { tag: t.atom, class: 'tok-atom' },
  { tag: t.number, class: 'tok-number' },
  { tag: t.string, class: 'tok-string' },
  { tag: t.typeName, class: 'tok-type' },
  { tag: t.operator, class: 'tok-operator' },
]);

const theme = EditorView.theme({
  '&': { backgroundColor: 'var(--panel)', color: 'var(--fg)', height: '100%' },
  '.cm-content': { fontFamily: 'ui-monospace, monospace', fontSize: '12px', caretColor: 'var(--fg)' },
  '.cm-gutters': { backgroundColor: 'var(--bg)', color: 'var(--muted)', border: 'none' },
  '.cm-activeLine': { backgroundColor: 'color-mix(in srgb, var(--accent) 7%, transparent)' },
  '&.cm-focused': { outline: '2px solid var(--accent)' },
});

/** A change that replaces the whole text (a paste over everything, a script set from the gallery, a
 * link or the explorer) narrowed to the part that differs: CodeMirror then redraws the lines that
 * changed instead of every line (about 2 ms of script and as much of style, layout and paint on
 * every such edit), and the caret and scroll position stay where they were. The text is the same. */
function narrowed(tr) {
  if (!tr.docChanged) return tr;
  const before = tr.startState.doc;
  let whole = null, count = 0;
  tr.changes.iterChanges((fromA, toA, fromB, toB, inserted) => {
    count++;
    if (fromA === 0 && toA === before.length) whole = inserted;
  });
  if (count !== 1 || whole === null) return tr;
  const a = before.toString(), b = whole.toString();
  const max = Math.min(a.length, b.length);
  let p = 0;
  while (p < max && a.charCodeAt(p) === b.charCodeAt(p)) p++;
  let s = 0;
  while (s < max - p && a.charCodeAt(a.length - 1 - s) === b.charCodeAt(b.length - 1 - s)) s++;
  // Never split a surrogate pair.
  const high = (c) => c >= 0xd800 && c <= 0xdbff, low = (c) => c >= 0xdc00 && c <= 0xdfff;
  if (p > 0 && high(a.charCodeAt(p - 1))) p--;
  if (s > 0 && low(a.charCodeAt(a.length - s))) s--;
  if (p === 0 && s === 0) return tr;
  return {
    changes: { from: p, to: a.length - s, insert: b.slice(p, b.length - s) },
    selection: tr.selection, effects: tr.effects, annotations: tr.annotations, scrollIntoView: tr.scrollIntoView,
  };
}

/** Creates an editor in `parent`; `onChange(text)` is called on every edit; `words` is
 * `{keywords, atoms}`. */
export function create_editor(parent, text, readonly, onChange, words) {
  const view = new EditorView({
    parent,
    state: EditorState.create({
      doc: text,
      extensions: [
        lineNumbers(), history(), drawSelection(), highlightActiveLine(), scenarioLanguage(words),
        syntaxHighlighting(highlight), lintGutter(), theme,
        autocompletion({ override: [completions(words)], activateOnTyping: true }),
        // The browser edits and moves the caret by itself; only undo and redo need keys.
        keymap.of([{ key: 'Mod-z', run: undo, preventDefault: true }, { key: 'Mod-y', run: redo, preventDefault: true },
          { key: 'Mod-Shift-z', run: redo, preventDefault: true }]),
        EditorState.readOnly.of(readonly), EditorView.editable.of(!readonly),
        EditorView.contentAttributes.of({ 'aria-label': 'Scenario script', spellcheck: 'false' }),
        EditorState.transactionFilter.of(narrowed),
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
