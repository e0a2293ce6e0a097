//! Keeps ARCHITECTURE.md true to the tree: every path and every Rust name it cites must exist.
//!
//! The rules, simple on purpose (what they cannot read, they let pass):
//!
//! 1. Fenced code blocks (between lines starting with ```` ``` ````) are not read.
//! 2. A **path** is a word starting with `crates/`, `web/`, `docs/`, `e2e/`, `scenarios/` or
//!    `fuzz/`, in backticks or not, up to the first character that cannot be in a path;
//!    trailing `.`, `,`, `;`, `:` and `)` are dropped. It must be a file or a folder of the
//!    workspace; a `*` in its last part stands for any characters (`scenarios/*.lw`).
//! 3. A **file name** is a backticked word (no spaces) ending in `.rs`, `.js`, `.mjs`, `.md`,
//!    `.toml`, `.json`, `.lw`, `.txt`, `.html` or `.css` that is not a rule-2 path and does not
//!    start with `../` (outside the workspace): some file's path must end with it
//!    (`sim/link.rs`, `lib.rs`).
//! 4. A **name** is a backticked Rust path (`Sim`, `Etcd::commit`, `verdict::run`,
//!    `each!`, `Sim::new()`: a trailing `()` or `!` is dropped) that has an upper-case letter,
//!    an underscore or a `::`; plain lower-case words (`hold`, `logic`, `redraw`) are left
//!    alone, as they may be the scenario language's or JavaScript's. Every segment must occur as
//!    an identifier in the workspace's source (`.rs`, `.js`, `.mjs`; comments do not count,
//!    string literals do; neither the generated `web/editor/editor.js` nor this file, whose
//!    fixtures name what is gone, is read), or be a module's
//!    file or folder (`verdict` for `verdict.rs`) or a crate's name. In `a::b`, `b` must
//!    occur where `a` is owned: for a type (upper-case first letter) inside the braces of its
//!    declaration (`struct`, `enum`, `trait`, `union`: a field, a variant, an item) or of an
//!    `impl` whose head names it, so `EventKind::Write` fails when `Write` is a variant of
//!    another enum of the same file; for a module, in `a.rs`, a file under a folder `a/`, or a
//!    file with `mod a`; for a crate (`listwatch_core`), in its `src/`. `a::b` written whole in
//!    some file's code passes too.
//!
//! 5. A code span does not cross a line: a line with an odd number of backticks fails.
//!
//! The test fails with every citation that breaks a rule, each with its line.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::Path;

/// The workspace as the rules read it.
pub struct Tree {
    /// Every file's path from the root, with `/`.
    files: BTreeSet<String>,
    /// Every folder's path from the root, with `/`, without a trailing one.
    dirs: BTreeSet<String>,
    /// Source files, read once.
    sources: Vec<Source>,
    /// Every identifier of the sources' code and string literals.
    idents: HashSet<String>,
    /// Module names: the stems of `.rs` files, the folders and the crates.
    modules: HashSet<String>,
}

/// Folders never read: build output, dependencies, version control.
const SKIPPED_DIRS: &[&str] = &[".git", "target", "dist", "node_modules"];
/// Sources not read for names: a generated bundle, and this file, whose fixtures name what is
/// gone.
const NOT_READ: &[&str] = &["web/editor/editor.js", "crates/xtask/src/map.rs"];
const PATH_ROOTS: &[&str] = &["crates/", "web/", "docs/", "e2e/", "scenarios/", "fuzz/"];
const FILE_EXTENSIONS: &[&str] = &[
    ".rs", ".js", ".mjs", ".md", ".toml", ".json", ".lw", ".txt", ".html", ".css",
];
/// The workspace's crates as Rust names them, and their `src/`.
const CRATES: &[(&str, &str)] = &[
    ("listwatch_core", "crates/core/src/"),
    ("listwatch_script", "crates/script/src/"),
    ("listwatch", "crates/cli/src/"),
    ("listwatch_web", "web/src/"),
    ("mdbook_listwatch", "crates/mdbook-listwatch/src/"),
    ("xtask", "crates/xtask/src/"),
];
/// At most this many files and bytes are read, so a stray folder cannot make the test hang.
const MAX_FILES: usize = 20_000;
const MAX_FILE_BYTES: u64 = 4 << 20;

impl Tree {
    /// The tree below `root`.
    pub fn load(root: &Path) -> Tree {
        let mut files = vec![];
        let mut dirs = vec![];
        let mut todo = vec![root.to_path_buf()];
        while let Some(dir) = todo.pop() {
            let Ok(entries) = std::fs::read_dir(&dir) else {
                continue;
            };
            for entry in entries.flatten() {
                let path = entry.path();
                let name = entry.file_name().to_string_lossy().into_owned();
                let Ok(rel) = path.strip_prefix(root) else {
                    continue;
                };
                let rel = rel.to_string_lossy().replace('\\', "/");
                let Ok(kind) = entry.file_type() else {
                    continue;
                };
                if kind.is_dir() {
                    if !SKIPPED_DIRS.contains(&name.as_str()) && files.len() < MAX_FILES {
                        dirs.push(rel);
                        todo.push(path);
                    }
                } else if files.len() < MAX_FILES {
                    let source = is_source(&rel) && !NOT_READ.contains(&rel.as_str());
                    let small = entry.metadata().is_ok_and(|m| m.len() <= MAX_FILE_BYTES);
                    let text = if source && small {
                        std::fs::read_to_string(&path).ok()
                    } else {
                        None
                    };
                    files.push((rel, text));
                }
            }
        }
        Tree::new(files, dirs)
    }

    /// A tree of these files (path, and the text of the sources to read for names) and folders;
    /// the folders of every file are added.
    pub fn new(files: Vec<(String, Option<String>)>, dirs: Vec<String>) -> Tree {
        let mut tree = Tree {
            files: BTreeSet::new(),
            dirs: dirs.into_iter().collect(),
            sources: vec![],
            idents: HashSet::new(),
            modules: CRATES.iter().map(|(c, _)| c.to_string()).collect(),
        };
        let folders = tree
            .dirs
            .iter()
            .map(|d| d.rsplit('/').next().unwrap_or(d).to_string());
        tree.modules.extend(folders.collect::<Vec<_>>());
        for (path, text) in files {
            let mut at = path.as_str();
            while let Some(i) = at.rfind('/') {
                at = &at[..i];
                tree.dirs.insert(at.to_string());
                let folder = at.rsplit('/').next().unwrap_or(at);
                tree.modules.insert(folder.to_string());
            }
            if let Some(stem) = path.strip_suffix(".rs") {
                let stem = stem.rsplit('/').next().unwrap_or(stem);
                tree.modules.insert(stem.to_string());
            }
            if let Some(text) = text.filter(|_| is_source(&path)) {
                let source = Source::read(&path, &text);
                tree.idents.extend(source.idents.iter().cloned());
                tree.sources.push(source);
            }
            tree.files.insert(path);
        }
        tree
    }

    fn path_exists(&self, path: &str) -> bool {
        let path = path.trim_end_matches('/');
        let (dir, last) = path.rsplit_once('/').unwrap_or(("", path));
        match last.split_once('*') {
            None => self.files.contains(path) || self.dirs.contains(path),
            Some((before, after)) => {
                let prefix = format!("{dir}/");
                self.files
                    .range(prefix.clone()..)
                    .take_while(|f| f.starts_with(&prefix))
                    .any(|f| {
                        let name = &f[prefix.len()..];
                        !name.contains('/')
                            && name.len() >= before.len() + after.len()
                            && name.starts_with(before)
                            && name.ends_with(after)
                    })
            }
        }
    }

    fn file_named(&self, tail: &str) -> bool {
        let slashed = format!("/{tail}");
        self.files
            .iter()
            .any(|f| f == tail || f.ends_with(&slashed))
    }

    /// The files that own `owner` (rule 4).
    fn owners<'a>(&'a self, owner: &'a str) -> impl Iterator<Item = &'a Source> + 'a {
        let crate_src = CRATES
            .iter()
            .find(|(c, _)| *c == owner)
            .map(|(_, src)| *src);
        let (file, folder) = (format!("{owner}.rs"), format!("/{owner}/"));
        self.sources.iter().filter(move |s| match crate_src {
            Some(src) => s.path.starts_with(src),
            None => {
                s.path.rsplit('/').next() == Some(file.as_str())
                    || s.path.contains(&folder)
                    || s.mods.contains(owner)
            }
        })
    }

    /// Why `name` (rule 4) is not in the tree, if it is not.
    fn name_problem(&self, name: &str) -> Option<String> {
        let segments: Vec<&str> = name.split("::").collect();
        let known = |s: &str| self.idents.contains(s) || self.modules.contains(s);
        if let Some(s) = segments.iter().find(|s| !known(s)) {
            return Some(format!("`{name}`: `{s}` occurs nowhere in the source"));
        }
        for pair in segments.windows(2) {
            let (owner, item) = (pair[0], pair[1]);
            let whole = format!("{owner}::{item}");
            let owned = match owner.starts_with(|c: char| c.is_ascii_uppercase()) {
                true => (self.sources.iter())
                    .any(|s| s.members.get(owner).is_some_and(|m| m.contains(item))),
                false => self.owners(owner).any(|s| s.idents.contains(item)),
            };
            if !owned && !self.sources.iter().any(|s| s.code.contains(&whole)) {
                return Some(format!(
                    "`{name}`: no file that declares or implements `{owner}` has `{item}`"
                ));
            }
        }
        None
    }
}

fn is_source(path: &str) -> bool {
    [".rs", ".js", ".mjs"].iter().any(|e| path.ends_with(e))
}

/// The words of `code` that can be identifiers.
fn identifiers(code: &str) -> impl Iterator<Item = &str> {
    code.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|w| w.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_'))
}

/// One source file as rule 4 reads it.
struct Source {
    path: String,
    /// Its text without comments.
    code: String,
    idents: HashSet<String>,
    /// Per type it declares (`struct`, `enum`, `trait`, `union`) or implements (every word of
    /// an `impl` head): the identifiers inside the braces of that declaration or `impl`.
    members: HashMap<String, HashSet<String>>,
    /// The modules it declares (`mod NAME`).
    mods: HashSet<String>,
}

impl Source {
    fn read(path: &str, text: &str) -> Source {
        let rust = path.ends_with(".rs");
        let code = strip_comments(text, rust);
        let mut mods = HashSet::new();
        for line in code.lines() {
            let words: Vec<&str> = identifiers(line).collect();
            for w in words.windows(2) {
                if w[0] == "mod" {
                    mods.insert(w[1].to_string());
                }
            }
        }
        Source {
            path: path.to_string(),
            idents: identifiers(&code).map(str::to_string).collect(),
            members: if rust { members(&code) } else { HashMap::new() },
            code,
            mods,
        }
    }
}

/// A token of comment-free Rust code, as `members` reads it.
#[derive(Clone, Copy, PartialEq)]
enum Token<'a> {
    Word(&'a str),
    Open,
    Close,
    Semicolon,
}

/// The words, braces and semicolons of comment-free Rust code, string and character literals
/// skipped (a `{` in `'{'` or `"{"` is no brace).
fn tokens(code: &str) -> Vec<Token<'_>> {
    let b = code.as_bytes();
    let mut out = vec![];
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_alphabetic() || c == b'_' {
            if let Some(hashes) = (c == b'r').then(|| raw_string_hashes(b, i)).flatten() {
                i = raw_string_end(b, i, hashes);
                continue;
            }
            let start = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            out.push(Token::Word(&code[start..i]));
            continue;
        }
        match c {
            b'"' => i = string_end(b, i, b'"'),
            b'\'' => {
                let end = string_end(b, i, b'\'');
                i = if end - i <= 4 { end } else { i + 1 };
            }
            b'{' | b'}' | b';' => {
                out.push(match c {
                    b'{' => Token::Open,
                    b'}' => Token::Close,
                    _ => Token::Semicolon,
                });
                i += 1;
            }
            _ => i += 1,
        }
    }
    out
}

/// Rule 4's owners in one file: per type declared or implemented, the words of its braces.
fn members(code: &str) -> HashMap<String, HashSet<String>> {
    let tokens = tokens(code);
    let mut out: HashMap<String, HashSet<String>> = HashMap::new();
    for (at, token) in tokens.iter().enumerate() {
        let owners: Vec<&str> = match (token, tokens.get(at + 1)) {
            (Token::Word("struct" | "enum" | "trait" | "union"), Some(Token::Word(name))) => {
                vec![name]
            }
            (Token::Word("impl"), _) => (tokens[at + 1..].iter())
                .take_while(|t| matches!(t, Token::Word(_)))
                .filter_map(|t| match t {
                    Token::Word(w) => Some(*w),
                    _ => None,
                })
                .collect(),
            _ => continue,
        };
        // The body: from the first brace after the head (none if a `;` comes first: `struct
        // A(u32);`, `type A = B;`) to the brace that closes it.
        let Some(open) = (at + 1..tokens.len())
            .find(|&j| matches!(tokens[j], Token::Open | Token::Semicolon))
            .filter(|&j| tokens[j] == Token::Open)
        else {
            continue;
        };
        let mut depth = 0usize;
        let mut words = HashSet::new();
        for t in &tokens[open..] {
            match t {
                Token::Open => depth += 1,
                Token::Close => depth -= 1,
                Token::Word(w) => {
                    words.insert(w.to_string());
                }
                Token::Semicolon => {}
            }
            if depth == 0 {
                break;
            }
        }
        for owner in owners {
            out.entry(owner.to_string())
                .or_default()
                .extend(words.iter().cloned());
        }
    }
    out
}

/// `text` without its comments: `//` to the end of the line and `/* */` (nested in Rust).
/// String literals are kept whole (`"http://"` is no comment): `"…"` with escapes, Rust's raw
/// strings `r#"…"#`, and in JavaScript `'…'` and `` `…` ``. A Rust `'` starts a character
/// literal only when it closes within three characters (`'a'`, `'\n'`), else it is a lifetime.
pub fn strip_comments(text: &str, rust: bool) -> String {
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    let mut kept = 0;
    while i < b.len() {
        match b[i] {
            b'/' if b.get(i + 1) == Some(&b'/') => {
                out.push_str(&text[kept..i]);
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
                kept = i;
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                out.push_str(&text[kept..i]);
                let mut depth = 0;
                while i < b.len() {
                    if b[i] == b'/' && b.get(i + 1) == Some(&b'*') {
                        depth += 1;
                        i += 2;
                    } else if b[i] == b'*' && b.get(i + 1) == Some(&b'/') {
                        depth -= 1;
                        i += 2;
                        if depth == 0 || !rust {
                            break;
                        }
                    } else {
                        i += 1;
                    }
                }
                out.push(' ');
                kept = i;
            }
            b'r' if rust && raw_string_hashes(b, i).is_some() => {
                let hashes = raw_string_hashes(b, i).unwrap_or(0);
                i = raw_string_end(b, i, hashes);
            }
            b'"' => i = string_end(b, i, b'"'),
            b'\'' if !rust => i = string_end(b, i, b'\''),
            b'`' if !rust => i = string_end(b, i, b'`'),
            b'\'' => {
                let end = string_end(b, i, b'\'');
                i = if end - i <= 4 { end } else { i + 1 };
            }
            _ => i += 1,
        }
        // Never stop inside a character: every branch above moves by ASCII bytes or to one.
        while i < b.len() && !text.is_char_boundary(i) {
            i += 1;
        }
    }
    out.push_str(&text[kept.min(text.len())..]);
    out
}

/// At `r` of `r"` or `r#…"` (not inside an identifier): the number of `#`s.
fn raw_string_hashes(b: &[u8], i: usize) -> Option<usize> {
    if i > 0 && (b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_') {
        return None;
    }
    let hashes = b[i + 1..].iter().take_while(|&&c| c == b'#').count();
    (b.get(i + 1 + hashes) == Some(&b'"')).then_some(hashes)
}

/// Just past the raw string `r#…"…"#…` (with `hashes` `#`s) that opens at `i`.
fn raw_string_end(b: &[u8], i: usize, hashes: usize) -> usize {
    let close: Vec<u8> = std::iter::once(b'"')
        .chain(std::iter::repeat_n(b'#', hashes))
        .collect();
    let mut j = i + 2 + hashes;
    while j < b.len() && !b[j..].starts_with(&close) {
        j += 1;
    }
    (j + close.len()).min(b.len())
}

/// Just past the literal that opens at `i` with `quote` (backslash escapes skipped).
fn string_end(b: &[u8], i: usize, quote: u8) -> usize {
    let mut j = i + 1;
    while j < b.len() {
        match b[j] {
            b'\\' => j += 2,
            c if c == quote => return j + 1,
            _ => j += 1,
        }
    }
    b.len()
}

/// Every citation of `doc` that breaks a rule, as `line N: why`.
pub fn check(doc: &str, tree: &Tree) -> Vec<String> {
    let mut problems = vec![];
    let mut fenced = false;
    for (n, line) in doc.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        let mut report = |why: String| problems.push(format!("line {}: {why}", n + 1));
        if line.matches('`').count() % 2 == 1 {
            report("an odd number of backticks: keep each code span on one line".into());
            continue;
        }
        for path in paths(line) {
            if !tree.path_exists(path) {
                report(format!("path `{path}` does not exist"));
            }
        }
        for span in line.split('`').skip(1).step_by(2) {
            if span.contains(char::is_whitespace) || span.starts_with("../") {
                continue;
            }
            let rooted = PATH_ROOTS.iter().any(|r| span.starts_with(r));
            if !rooted && FILE_EXTENSIONS.iter().any(|e| span.ends_with(e)) {
                if !tree.file_named(span) {
                    report(format!("no file is named `{span}`"));
                }
            } else if let Some(name) = rust_name(span) {
                if let Some(why) = tree.name_problem(name) {
                    report(why);
                }
            }
        }
    }
    problems
}

/// The rule-2 paths of a line.
fn paths(line: &str) -> Vec<&str> {
    let mut out = vec![];
    for (i, _) in line.char_indices() {
        let at_word_start = line[..i]
            .chars()
            .next_back()
            .is_none_or(|c| c.is_whitespace() || "(`'\"[".contains(c));
        if !at_word_start || !PATH_ROOTS.iter().any(|r| line[i..].starts_with(r)) {
            continue;
        }
        let rest = &line[i..];
        let len = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || "_./*-".contains(c)))
            .unwrap_or(rest.len());
        out.push(rest[..len].trim_end_matches(['.', ',', ';', ':', ')']));
    }
    out
}

/// The span as a rule-4 name, if it is one.
fn rust_name(span: &str) -> Option<&str> {
    let name = span
        .strip_suffix("()")
        .or_else(|| span.strip_suffix('!'))
        .unwrap_or(span);
    let segment_ok = |s: &str| {
        s.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
            && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    };
    let rusty = name.contains("::") || name.contains('_') || name.contains(char::is_uppercase);
    (rusty && name.split("::").all(segment_ok)).then_some(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small tree: a struct with a method, a module with a function, a comment naming what
    /// is gone, and a doc folder.
    fn fixture() -> Tree {
        let files = vec![
            (
                "crates/core/src/sim/mod.rs".to_string(),
                Some(
                    "pub struct Sim;\n\
                     impl Sim {\n    pub fn run_outbox(&mut self) {}\n}\n\
                     // Sim::begin_step and Effects were here; effect.rs too.\n\
                     /* Cause::Emitted */\n\
                     const URL: &str = \"http://example/a_string_word\";\n"
                        .to_string(),
                ),
            ),
            (
                "crates/core/src/verdict.rs".to_string(),
                Some("pub fn run() {}\npub fn check_all() {}\n".to_string()),
            ),
            (
                "crates/core/src/trace/mod.rs".to_string(),
                Some(
                    "pub enum EventKind {\n    Store(StoreEvent),\n}\n\
                     impl EventKind {\n    fn brace() -> char { '{' }\n}\n\
                     pub enum StoreEvent {\n    Write { rv: u64 },\n    OwnerRefInvalid,\n}\n\
                     pub struct Delivery(u8);\n\
                     impl Delivery {\n    pub fn delta(self) -> u8 { self.0 }\n}\n"
                        .to_string(),
                ),
            ),
            ("docs/fidelity.md".to_string(), None),
            ("scenarios/01-a.lw".to_string(), None),
        ];
        Tree::new(files, vec![])
    }

    fn problems(doc: &str) -> Vec<String> {
        check(doc, &fixture())
    }

    #[test]
    fn names_and_paths_that_exist_pass() {
        let doc = "`Sim` and `Sim::run_outbox()` in `crates/core/src/sim/mod.rs` (`sim/mod.rs`);\n\
                   `verdict::run`, `verdict::check_all`, docs/fidelity.md, `scenarios/*.lw`, \
                   `a_string_word`, and `hold`, `logic` (not names), `../shared/semantics.md`.\n\
                   ```\nSim::begin_step crates/gone.rs\n```\n";
        assert_eq!(problems(doc), Vec::<String>::new());
    }

    #[test]
    fn a_stale_name_fails_even_when_a_comment_still_says_it() {
        let got = problems(
            "`Sim::begin_step` and `Effects`\nthen `Cause::Emitted` and `verdict::explain`.\n",
        );
        assert_eq!(
            got,
            [
                "line 1: `Sim::begin_step`: `begin_step` occurs nowhere in the source",
                "line 1: `Effects`: `Effects` occurs nowhere in the source",
                "line 2: `Cause::Emitted`: `Cause` occurs nowhere in the source",
                "line 2: `verdict::explain`: `explain` occurs nowhere in the source",
            ]
        );
    }

    #[test]
    fn a_name_must_be_found_where_its_owner_is() {
        // `run_outbox` exists, but not in the module `verdict`; `run` exists, but `Sim` has none.
        let got = problems("`verdict::run_outbox`, `Sim::run`\n");
        assert_eq!(
            got,
            [
                "line 1: `verdict::run_outbox`: no file that declares or implements `verdict` has `run_outbox`",
                "line 1: `Sim::run`: no file that declares or implements `Sim` has `run`",
            ]
        );
    }

    #[test]
    fn a_variant_or_field_must_be_inside_its_own_type() {
        // Both enums are in one file, and a `'{'` between them must not open a brace.
        let doc = "`StoreEvent::OwnerRefInvalid`, `StoreEvent::Write`, `EventKind::Store`, \
                   `Delivery::delta`\n`EventKind::OwnerRefInvalid`, `EventKind::rv`, `Delivery::rv`\n";
        assert_eq!(
            problems(doc),
            [
                "line 2: `EventKind::OwnerRefInvalid`: no file that declares or implements `EventKind` has `OwnerRefInvalid`",
                "line 2: `EventKind::rv`: no file that declares or implements `EventKind` has `rv`",
                "line 2: `Delivery::rv`: no file that declares or implements `Delivery` has `rv`",
            ]
        );
    }

    #[test]
    fn a_stale_path_or_file_name_fails() {
        let got = problems(
            "see crates/core/src/effect.rs, `effect.rs`, `web/gone/` and `scenarios/*.yaml`.\n",
        );
        assert_eq!(
            got,
            [
                "line 1: path `crates/core/src/effect.rs` does not exist",
                "line 1: path `web/gone/` does not exist",
                "line 1: path `scenarios/*.yaml` does not exist",
                "line 1: no file is named `effect.rs`",
            ]
        );
    }

    #[test]
    fn comments_go_and_strings_stay() {
        let rust = "let a = \"x // y\"; // gone\nlet b = r#\"\"q\"\"#; /* gone /* nested */ */ let c = 'x'; fn f<'a>() {}";
        assert_eq!(
            strip_comments(rust, true),
            "let a = \"x // y\"; \nlet b = r#\"\"q\"\"#;   let c = 'x'; fn f<'a>() {}"
        );
        let js = "const u = 'a//b'; // gone\nconst t = `c/*d*/`; /* gone */ x";
        assert_eq!(
            strip_comments(js, false),
            "const u = 'a//b'; \nconst t = `c/*d*/`;   x"
        );
    }

    /// The real document against the real tree.
    #[test]
    fn architecture_md_cites_only_what_exists() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let doc = std::fs::read_to_string(root.join("ARCHITECTURE.md"))
            .expect("ARCHITECTURE.md at the workspace root");
        let problems = check(&doc, &Tree::load(&root));
        assert!(
            problems.is_empty(),
            "ARCHITECTURE.md cites what is not in the tree (fix the text, or the rule in \
             crates/xtask/src/map.rs):\n{}",
            problems.join("\n")
        );
    }
}
