//! A controller's `logic` and `desired` blocks: indented statements compiled into a core
//! `Program`. See docs/scenario-language.md, "Your operator in ten lines".

use listwatch_core::object::{MAX_KEY_LEN, MAX_VALUE_LEN};
use listwatch_core::program::*;
use listwatch_core::reconcile::{Section, MAX_CHILDREN};
use listwatch_core::{KindConfig, KindId};

use crate::cursor::{declared, unknown, Cursor};
use crate::diag::{nearest, Diagnostic};
use crate::lexer::Word;
use crate::numbers::MAX_DURATION_MS;

type R<T> = Result<T, Diagnostic>;

/// Every word of the reconcile language, listed once (the editor highlights them, the fuzzer
/// mutates with them): the statements of a `logic` block first (`LOGIC_STATEMENTS`), then the
/// blocks' names and the words its statements take. Words the rest of the language shares
/// (`for`, `in`, `owner`, `spec`, `after`, ...) are `syntax::WORDS`'.
pub const LOGIC_WORDS: &[&str] = &[
    "get",
    "list",
    "if",
    "else",
    "create",
    "update",
    "patch",
    "delete",
    "add-finalizer",
    "remove-finalizer",
    "scale",
    "remember",
    "forget",
    "done",
    "error",
    "requeue",
    "for",
    "set-condition",
    "adopt",
    "release",
    "record",
    "call",
    // Not statements of `logic`:
    "logic",
    "desired",
    "require",
    "key",
    "live",
    "owned-by",
    "where",
    "on-error",
    "continue",
    "return",
    "ignore-not-found",
    "ignore-already-exists",
    "ignore-conflict",
    "if-uid",
    "generate-name",
    "deleting",
    "has-finalizer",
    "memory",
    "min",
    "max",
    "reason",
];
/// How many of `LOGIC_WORDS` are statements of a `logic` block.
const LOGIC_STATEMENT_COUNT: usize = 22;
/// Statements of a controller's `logic` block.
pub const LOGIC_STATEMENTS: &[&str] = LOGIC_WORDS.split_at(LOGIC_STATEMENT_COUNT).0;
/// Statements of a controller's `desired` block.
pub const DESIRED_STATEMENTS: &[&str] = &["get", "list", "require"];
/// Fields of what a `logic` block read (`db.spec`; `count` and `alive` of lists).
pub const FIELDS: &[&str] = &[
    "spec",
    "status",
    "generation",
    "rv",
    "uid",
    "name",
    "namespace",
    "owner",
    "count",
    "alive",
];
/// Where a field path leads: `NAME.spec.KEY`, `NAME.status.KEY`, `NAME.metadata.labels.KEY`,
/// `NAME.metadata.annotations.KEY` (a named field of the object model); `Section::prefix` spells
/// each (checked against this list in `field_paths_spell_the_sections`).
pub const FIELD_PATHS: &[&str] = &[
    "spec.",
    "status.",
    "metadata.labels.",
    "metadata.annotations.",
];
const SECTIONS: [Section; 4] = [
    Section::Spec,
    Section::Status,
    Section::Label,
    Section::Annotation,
];

/// What a condition says of a name.
pub const CONDITION_WORDS: &[&str] = &[
    "exists",
    "absent",
    "deleting",
    "has-finalizer",
    "==",
    "!=",
    "<",
    "<=",
    ">",
    ">=",
];
/// What `on-error` may say, and what each means (controller-runtime's `client.IgnoreNotFound`,
/// `client.IgnoreAlreadyExists`, `apierrors.IsConflict`; `continue` ignores every error).
pub const ON_ERROR: &[(&str, OnError)] = &[
    ("return", OnError::Return),
    ("continue", OnError::Continue),
    ("ignore-not-found", OnError::IgnoreNotFound),
    ("ignore-already-exists", OnError::IgnoreAlreadyExists),
    ("ignore-conflict", OnError::IgnoreConflict),
];

/// The event types client-go's recorder accepts (`tools/record/util/util.go`
/// `ValidateEventType`: `v1.EventTypeNormal`, `v1.EventTypeWarning`).
pub const EVENT_TYPES: &[&str] = &["Normal", "Warning"];
/// An event reason's longest (kubernetes `pkg/apis/core/validation/events.go`
/// `ReasonLengthLimit`).
pub const MAX_EVENT_REASON: usize = 128;

/// A condition's status (apimachinery `pkg/apis/meta/v1/types.go` `ConditionStatus`).
pub const CONDITION_STATUSES: &[&str] = &["True", "False", "Unknown"];
/// A condition type's longest: its five status keys (`conditions.TYPE.lastTransitionTime`, ...)
/// stay within a field key's `MAX_KEY_LEN`.
pub const MAX_CONDITION_TYPE: usize = MAX_KEY_LEN - "conditions..lastTransitionTime".len();

/// Most arithmetic operators (`+ - * / %`) on one line, and deepest nesting of parentheses
/// and `min(..)`/`max(..)`: a line stays readable and its value cheap.
pub const MAX_OPERATORS: usize = 16;
pub const MAX_PARENS: usize = 4;

/// Is `v` a string by its kind (a literal, an object's name or namespace)? A named field may be
/// either, which only the object read says.
fn string_valued(v: &Value) -> bool {
    matches!(
        v,
        Value::Str(_) | Value::Field(_, Field::Name | Field::Namespace)
    )
}

/// `A op B`; arithmetic is on integers only (a string literal is an error at `at`).
fn arith(c: &Cursor, at: &Word, op: ArithOp, a: Value, b: Value) -> R<Value> {
    if string_valued(&a) || string_valued(&b) {
        return Err(c.err_at(at, "arithmetic is on numbers, not strings"));
    }
    if let Some(what) = opaque(&a).or(opaque(&b)) {
        return Err(c
            .err_at(at, format!("arithmetic on {what}, which is no number"))
            .help(OPAQUE_HELP));
    }
    Ok(Value::Arith(op, Box::new(a), Box::new(b)))
}

/// A resourceVersion or a UID (an object's own, or its owner's) is an opaque string in
/// Kubernetes: "clients must not assume that resource versions are numeric or collatable"
/// (community `contributors/devel/sig-architecture/api-conventions.md`, apimachinery
/// `pkg/apis/meta/v1/types.go` `ResourceVersion`), and a UID is a random UUID
/// (`pkg/util/uuid`). Only `==` and `!=` mean something of them.
fn opaque(v: &Value) -> Option<&'static str> {
    match v {
        Value::Field(_, Field::Rv) => Some("a resourceVersion"),
        Value::Field(_, Field::Uid | Field::Owner) => Some("a UID"),
        _ => None,
    }
}

const OPAQUE_HELP: &str =
    "a resourceVersion and a UID are opaque strings: compare them with `==` or `!=` only";

/// A comparison operator's meaning.
fn cmp_op(text: &str) -> Option<CmpOp> {
    Some(match text {
        "==" => CmpOp::Eq,
        "!=" => CmpOp::Ne,
        "<" => CmpOp::Lt,
        "<=" => CmpOp::Le,
        ">" => CmpOp::Gt,
        ">=" => CmpOp::Ge,
        _ => return None,
    })
}

/// The words of a logic line with `(`, `)` and `,` split off as words of their own, so
/// `min(db.spec, 3)` reads as `min ( db.spec , 3 )` (each with its column).
fn split_punctuation(words: &[Word]) -> Vec<Word> {
    let mut out = vec![];
    for w in words {
        if w.quoted || !w.text.contains(['(', ')', ',']) {
            out.push(w.clone());
            continue;
        }
        let mut start = 0;
        let chars: Vec<char> = w.text.chars().collect();
        let piece = |from: usize, to: usize, out: &mut Vec<Word>| {
            if to > from {
                out.push(Word {
                    text: chars[from..to].iter().collect(),
                    col: w.col + from,
                    len: to - from,
                    quoted: false,
                });
            }
        };
        for (i, ch) in chars.iter().enumerate() {
            if matches!(ch, '(' | ')' | ',') {
                piece(start, i, &mut out);
                piece(i, i + 1, &mut out);
                start = i + 1;
            }
        }
        piece(start, chars.len(), &mut out);
    }
    out
}

/// Largest number a program may write or compare with (the timeline's spec limit).
const MAX_NUMBER: i64 = 1_000_000_000;

/// A clause a statement takes once (`spec`, `owner`, `reason`, ...), met again at `at`: a
/// located error, where a JSON object with a key twice would be ambiguous (the apiserver's
/// strict decoding refuses it: apimachinery `pkg/runtime/serializer/json/json.go`,
/// `duplicate field`).
fn once<T>(c: &Cursor, at: Option<&Word>, given: &Option<T>) -> R<()> {
    match (given, at) {
        (Some(_), Some(at)) => Err(c
            .err_at(at, format!("`{}` is given twice", at.text))
            .help("say it once; the last would silently win")),
        _ => Ok(()),
    }
}

/// One line of a block: its number, its indentation (in characters) and its words.
#[derive(Clone, Debug)]
pub struct BlockLine {
    pub line: usize,
    pub indent: usize,
    pub words: Vec<Word>,
}

/// Words a binding or memory name may not be: they mean something where names stand.
const RESERVED: &[&str] = &[
    "key",
    "memory",
    "owner",
    "owned-by",
    "live",
    "and",
    "or",
    "not",
    "exists",
    "absent",
    "deleting",
    "has-finalizer",
    "to",
    "spec",
    "status",
    "on-error",
    "if-uid",
    "after",
];

/// A controller's `helper NAME` block, as written: compiled where the logic calls it, in the
/// caller's place (its statements run there, reading the names bound before the call; the
/// names it binds are its own, free again after it), as a Go method of the reconciler that
/// takes the objects read so far.
#[derive(Clone, Debug)]
pub struct Helper {
    pub name: String,
    pub line: usize,
    pub lines: Vec<BlockLine>,
}

/// Most named fields, labels and annotations one `create` line sets.
pub const MAX_CREATE_FIELDS: usize = 16;

/// Most helpers a controller has, and calls in progress at once (a helper calling a helper ...).
pub const MAX_HELPERS: usize = 16;
pub const MAX_CALL_DEPTH: usize = 4;

#[derive(Clone)]
struct Binding {
    name: String,
    list: bool,
    line: usize,
}

/// The name a `for` variable's binding takes once its loop ended (no word spells it).
fn loop_ended(var: &str) -> String {
    format!("(for {var})")
}

/// Compiles one block. `desired`: the `desired` block (reads from etcd and `require`s).
pub struct Compiler<'a> {
    kinds: &'a [KindConfig],
    desired: bool,
    bindings: Vec<Binding>,
    memory: Vec<String>,
    /// Per memory slot: set by a `remember`, and where it was first read (to complain there).
    memory_set: Vec<bool>,
    memory_read: Vec<Option<(usize, Word)>>,
    statements: usize,
    /// Arithmetic operators read on the current line, and the parentheses open now.
    operators: usize,
    depth: usize,
    /// Inside a `for` body (loops do not nest).
    in_loop: bool,
    /// Inside a `count(...)` or `sum(...)` (aggregates do not nest).
    in_aggregate: bool,
    /// The controller's helpers, and the ones being called now (outermost first).
    helpers: &'a [Helper],
    calling: Vec<String>,
}

impl<'a> Compiler<'a> {
    pub fn new(kinds: &'a [KindConfig], desired: bool) -> Self {
        Compiler {
            kinds,
            desired,
            bindings: vec![],
            memory: vec![],
            memory_set: vec![],
            memory_read: vec![],
            statements: 0,
            operators: 0,
            depth: 0,
            in_loop: false,
            in_aggregate: false,
            helpers: &[],
            calling: vec![],
        }
    }

    /// The helpers `call` may name.
    pub fn with_helpers(mut self, helpers: &'a [Helper]) -> Self {
        self.helpers = helpers;
        self
    }

    /// `call NAME`: the helper's statements, compiled here (at `depth` of nested `if`s). No
    /// helper calls itself, directly or through others: the reconcile language has no
    /// recursion, so every program stays finite (its statements, writes and loops bounded).
    fn call(&mut self, c: &mut Cursor, w: &Word, depth: usize) -> R<Vec<Stmt>> {
        let n = c.next("the name of a helper")?;
        c.done()?;
        let helpers = self.helpers;
        let Some(h) = helpers.iter().find(|h| h.name == n.text) else {
            let names: Vec<&str> = helpers.iter().map(|h| h.name.as_str()).collect();
            return Err(unknown(c, n, "helper", &names)
                .help("define it above the `logic` block: `helper NAME` and its statements indented under it"));
        };
        if let Some(at) = self.calling.iter().position(|x| *x == n.text) {
            let mut cycle = self.calling[at..].to_vec();
            cycle.push(n.text.clone());
            return Err(c
                .err_at(
                    n,
                    format!(
                        "`{}` calls itself ({}): helpers do not recurse",
                        n.text,
                        cycle.join(" -> ")
                    ),
                )
                .help("repeat work with `for VAR in LIST`, or let a `requeue after D` run the reconcile again"));
        }
        if self.calling.len() >= MAX_CALL_DEPTH {
            return Err(c.err_at(
                w,
                format!("more than {MAX_CALL_DEPTH} helpers calling one another"),
            ));
        }
        let lines: Vec<BlockLine> = (h.lines.iter())
            .map(|l| BlockLine {
                words: split_punctuation(&l.words),
                ..l.clone()
            })
            .collect();
        self.calling.push(n.text.clone());
        let first_binding = self.bindings.len();
        let mut i = 0;
        let body = self.block(&lines, &mut i, lines[0].indent, depth)?;
        if let Some(l) = lines.get(i) {
            return Err(Diagnostic::at(
                l.line,
                l.words[0].col,
                l.words[0].len,
                "this line is indented less than the helper's first",
            ));
        }
        // The names the helper bound are its own, as a Go function's locals: after the call no
        // word finds them (a space is in no word), and their slots stay the helper's.
        for b in &mut self.bindings[first_binding..] {
            b.name = format!("{} {}", n.text, b.name);
        }
        self.calling.pop();
        Ok(body)
    }

    /// The block's statements (its lines, after the `logic` or `desired` line at `head`).
    pub fn compile(
        mut self,
        head: (usize, &Word),
        lines: &[BlockLine],
    ) -> R<(Vec<Stmt>, Vec<String>, Vec<String>)> {
        let lines: Vec<BlockLine> = (lines.iter())
            .map(|l| BlockLine {
                words: split_punctuation(&l.words),
                ..l.clone()
            })
            .collect();
        let lines = &lines[..];
        let Some(first) = lines.first() else {
            let what = if self.desired { "desired" } else { "logic" };
            return Err(Diagnostic::at(
                head.0,
                head.1.col,
                head.1.len,
                format!("the `{what}` block is empty"),
            )
            .help(format!(
                "indent its statements under it, e.g. `    {}`",
                if self.desired {
                    "require db exists"
                } else {
                    "get db = Database key"
                }
            )));
        };
        let mut i = 0;
        let body = self.block(lines, &mut i, first.indent, 0)?;
        self.check_writes(&body, lines)?;
        for (m, read) in self.memory_read.iter().enumerate() {
            if let (false, Some((line, w))) = (self.memory_set[m], read) {
                return Err(Diagnostic::at(
                    *line,
                    w.col,
                    w.len,
                    format!("nothing is ever remembered as `{}`", self.memory[m]),
                )
                .help(
                    match nearest(
                        &self.memory[m],
                        self.memory
                            .iter()
                            .zip(&self.memory_set)
                            .filter(|x| *x.1)
                            .map(|x| x.0.as_str()),
                    ) {
                        Some(n) => format!("did you mean `memory.{n}`?"),
                        None => format!("set it somewhere: `remember {} = VALUE`", self.memory[m]),
                    },
                ));
            }
        }
        Ok((
            body,
            self.bindings.into_iter().map(|b| b.name).collect(),
            self.memory,
        ))
    }

    /// No path through the logic makes more than `MAX_WRITES` writes (a `scale` and a list's
    /// `delete` count as up to `MAX_CHILDREN`): refused at the write that passes the limit.
    fn check_writes(&self, body: &[Stmt], lines: &[BlockLine]) -> R<()> {
        let is_list = |slot: Slot| self.bindings.get(slot as usize).is_some_and(|b| b.list);
        let Err(too_many) = most_writes(body, 0, &is_list) else {
            return Ok(());
        };
        let at = lines.iter().find(|l| l.line == too_many.line as usize);
        let (col, len) = at.map_or((1, 1), |l| (l.words[0].col, l.words[0].len));
        Err(Diagnostic::at(
            too_many.line as usize,
            col,
            len,
            format!(
                "a reconcile could make {} writes by this line, more than the limit of {MAX_WRITES} writes per reconcile",
                too_many.writes
            ),
        )
        .help(format!(
            "a `scale` or a list's `delete` counts as up to {MAX_CHILDREN} writes (the limit of children per object): spread the work over reconciles, e.g. one `scale` a pass and `requeue after 1s`"
        )))
    }

    fn block(
        &mut self,
        lines: &[BlockLine],
        i: &mut usize,
        indent: usize,
        depth: usize,
    ) -> R<Vec<Stmt>> {
        let mut out = vec![];
        let mut ended: Option<(usize, String)> = None;
        while let Some(l) = lines.get(*i) {
            if l.indent < indent {
                break;
            }
            let mut c = Cursor {
                line: l.line,
                words: &l.words,
                pos: 0,
            };
            self.operators = 0;
            if l.indent > indent {
                return Err(c
                    .err_at(&l.words[0], "this line is indented more than the one above")
                    .help("only the body of an `if` or an `else` is indented further"));
            }
            if let Some((line, what)) = &ended {
                return Err(c
                    .err_at(&l.words[0], format!("this statement is never reached: `{what}` on line {line} ends the reconcile"))
                    .help("move it above, or put the return inside an `if`"));
            }
            *i += 1;
            self.statements += 1;
            if self.statements > MAX_STATEMENTS {
                return Err(c.err_at(
                    &l.words[0],
                    format!("more than {MAX_STATEMENTS} statements in one block"),
                ));
            }
            let w = c.next("a statement")?;
            let stmt = match w.text.as_str() {
                "if" => self.if_stmt(&mut c, w, lines, i, indent, depth)?,
                "for" => self.for_stmt(&mut c, w, lines, i, indent, depth)?,
                "call" => {
                    let body = self.call(&mut c, w, depth)?;
                    if let Some(Stmt::Return(_)) = body.last() {
                        ended = Some((l.line, format!("call {}", c.words[1].text)));
                    }
                    out.extend(body);
                    continue;
                }
                "else" => {
                    return Err(c
                        .err_at(w, "`else` without an `if` just above it")
                        .help("put `else` at the indentation of its `if`, after the `if`'s body"))
                }
                _ => {
                    let s = self.simple(&mut c, w)?;
                    if let Stmt::Return(_) = s {
                        ended = Some((l.line, w.text.clone()));
                    }
                    if lines.get(*i).is_some_and(|n| n.indent > indent) {
                        let n = &lines[*i];
                        return Err(Diagnostic::at(
                            n.line,
                            n.words[0].col,
                            n.words[0].len,
                            "this line is indented more than the one above",
                        )
                        .help("only the body of an `if` or an `else` is indented further"));
                    }
                    s
                }
            };
            out.push(stmt);
        }
        Ok(out)
    }

    fn body(
        &mut self,
        c: &Cursor,
        at: &Word,
        lines: &[BlockLine],
        i: &mut usize,
        indent: usize,
        depth: usize,
    ) -> R<Vec<Stmt>> {
        match lines.get(*i) {
            Some(n) if n.indent > indent => {
                if depth + 1 > MAX_DEPTH {
                    return Err(c
                        .err_at(at, format!("more than {MAX_DEPTH} nested `if`s"))
                        .help("combine conditions with `and` and `or`"));
                }
                self.block(lines, i, n.indent, depth + 1)
            }
            _ => Err(c
                .err_at(
                    at,
                    format!("`{}` needs an indented body on the lines below", at.text),
                )
                .help("indent the statements it guards by two more spaces")),
        }
    }

    /// A `desired` block states what must hold: it has no control flow (`if`, `for`).
    fn not_in_desired(&self, c: &Cursor, at: &Word, word: &str, help: &str) -> R<()> {
        match self.desired {
            true => Err(c
                .err_at(at, format!("a `desired` block has no `{word}`"))
                .help(help.to_string())),
            false => Ok(()),
        }
    }

    /// `for VAR in LIST [where COND]` and its indented body.
    fn for_stmt(
        &mut self,
        c: &mut Cursor,
        at: &Word,
        lines: &[BlockLine],
        i: &mut usize,
        indent: usize,
        depth: usize,
    ) -> R<Stmt> {
        self.not_in_desired(
            c,
            at,
            "for",
            "count what must hold: `require pods.alive == db.spec`",
        )?;
        if self.in_loop {
            return Err(c
                .err_at(at, "a `for` inside a `for`: loops do not nest")
                .help("list the inner objects once, outside the loop"));
        }
        let v = c.next("a name for each item")?;
        c.expect_kw("in")?;
        let lw = c.next("a list read above")?;
        let list = self.bound(c, lw, Some(true))?;
        let filtered = c.eat("where");
        if !filtered {
            c.done()?;
        }
        // Bound before the filter, which reads the item.
        let var = self.bind(c, v, false)?;
        let filter = match filtered {
            true => Some(self.cond(c)?),
            false => None,
        };
        c.done()?;
        self.in_loop = true;
        let body = self.body(c, at, lines, i, indent, depth);
        self.in_loop = false;
        // The variable is the loop's (Go's `for _, p := range pods`): after the loop it would
        // hold the last item, even one the filter passed over. Its slot stays, under a name no
        // word spells, so `bound` can say why the name is not bound.
        self.bindings[var as usize].name = loop_ended(&v.text);
        Ok(Stmt::For {
            var,
            list,
            filter,
            body: body?,
            line: c.line as u32,
        })
    }

    fn if_stmt(
        &mut self,
        c: &mut Cursor,
        at: &Word,
        lines: &[BlockLine],
        i: &mut usize,
        indent: usize,
        depth: usize,
    ) -> R<Stmt> {
        self.not_in_desired(
            c,
            at,
            "if",
            "write the condition with `or`: `require db absent or data exists`",
        )?;
        let cond = self.cond(c)?;
        // `if 3 > 2 > 1` would otherwise run as `if 3 > 2`: the condition is the whole line.
        c.done().map_err(|d| {
            d.help("a condition ends its line: join comparisons with `and` or `or`")
        })?;
        let then = self.body(c, at, lines, i, indent, depth)?;
        let mut otherwise = vec![];
        if let Some(n) = lines.get(*i) {
            if n.indent == indent && n.words[0].text == "else" {
                *i += 1;
                self.statements += 1;
                let mut ec = Cursor {
                    line: n.line,
                    words: &n.words,
                    pos: 1,
                };
                self.operators = 0;
                let ew = &n.words[0];
                if let Some(w) = ec.peek() {
                    if w.text != "if" {
                        return Err(ec
                            .err_at(w, format!("unexpected `{}` after `else`", w.text))
                            .help("write `else` alone, or `else if CONDITION`"));
                    }
                    ec.pos += 1;
                    otherwise = vec![self.if_stmt(&mut ec, w, lines, i, indent, depth)?];
                } else {
                    otherwise = self.body(&ec, ew, lines, i, indent, depth)?;
                }
            }
        }
        Ok(Stmt::If {
            cond,
            then,
            otherwise,
        })
    }

    /// The next word, as a declared kind.
    fn next_kind(&self, c: &mut Cursor) -> R<KindId> {
        let w = c.next("a kind")?;
        let names = self.kinds.iter().map(|k| k.name.as_str());
        declared(c, w, "kind", names)
            .map(|i| listwatch_core::KindId(i as u16))
            .map_err(|d| match d.help {
                Some(_) => d,
                None => d.help("declare it first: `kind NAME`"),
            })
    }

    /// A new name for `get`, `list` or `remember`.
    fn new_name(&self, c: &Cursor, w: &Word, what: &str) -> R<()> {
        let ok = w.text.starts_with(|ch: char| ch.is_ascii_lowercase())
            && w.text
                .chars()
                .all(|ch| ch.is_ascii_lowercase() || ch.is_ascii_digit() || ch == '-' || ch == '_');
        if !ok {
            return Err(c
                .err_at(w, format!("`{}` is not a valid {what} name", w.text))
                .help("names are lower-case ASCII letters, digits, `-` and `_`, starting with a letter"));
        }
        if w.text.len() > 63 {
            return Err(c.err_at(w, format!("the {what} name is longer than 63 characters")));
        }
        if RESERVED.contains(&w.text.as_str()) {
            return Err(c
                .err_at(
                    w,
                    format!("`{}` is a word of the language, not a name", w.text),
                )
                .help(format!("call it something else, e.g. `my-{}`", w.text)));
        }
        Ok(())
    }

    fn bind(&mut self, c: &Cursor, w: &Word, list: bool) -> R<Slot> {
        self.new_name(c, w, "binding")?;
        if let Some(b) = self.bindings.iter().find(|b| b.name == w.text) {
            return Err(c
                .err_at(
                    w,
                    format!("`{}` is already bound on line {}", w.text, b.line),
                )
                .help("give each read its own name"));
        }
        if self.bindings.len() >= MAX_BINDINGS {
            return Err(c.err_at(w, format!("more than {MAX_BINDINGS} names in one block")));
        }
        self.bindings.push(Binding {
            name: w.text.clone(),
            list,
            line: c.line,
        });
        Ok((self.bindings.len() - 1) as Slot)
    }

    /// A name bound above; `list`: Some(true) needs a list, Some(false) one object.
    fn bound(&self, c: &Cursor, w: &Word, list: Option<bool>) -> R<Slot> {
        let Some(i) = self.bindings.iter().position(|b| b.name == w.text) else {
            let ended = loop_ended(&w.text);
            if let Some(b) = self.bindings.iter().rev().find(|b| b.name == ended) {
                return Err(c
                    .err_at(w, format!("`{}` is bound only inside its for loop", w.text))
                    .help(format!(
                        "the loop on line {} ended above: use the item in the loop's body",
                        b.line
                    )));
            }
            let d = c.err_at(w, format!("`{}` is not bound", w.text));
            return Err(
                match nearest(&w.text, self.bindings.iter().map(|b| b.name.as_str())) {
                    Some(n) => d.help(format!("did you mean `{n}`?")),
                    None => d.help(format!("read it first: `get {} = KIND key`", w.text)),
                },
            );
        };
        match (list, self.bindings[i].list) {
            (Some(true), false) => Err(c
                .err_at(w, format!("`{}` is one object, not a list", w.text))
                .help("`list NAME = KIND owned-by OWNER` reads a list")),
            (Some(false), true) => Err(c
                .err_at(w, format!("`{}` is a list, not one object", w.text))
                .help("use `.count` or `.alive`, `exists` or `absent`, or `delete` on a list")),
            _ => Ok(i as Slot),
        }
    }

    /// The slot of a remembered value; `set`: a `remember` (else a read or a `forget`, which
    /// must be matched by a `remember` somewhere in the block).
    fn memory_slot(&mut self, c: &Cursor, w: &Word, set: bool) -> R<u8> {
        if self.desired {
            return Err(c
                .err_at(w, "a `desired` block cannot read the controller's memory")
                .help("the desired state is a property of etcd alone"));
        }
        let i = match self.memory.iter().position(|m| *m == w.text) {
            Some(i) => i,
            None => self.new_memory(c, w)?,
        };
        if set {
            self.memory_set[i] = true;
        } else if self.memory_read[i].is_none() {
            self.memory_read[i] = Some((c.line, w.clone()));
        }
        Ok(i as u8)
    }

    fn new_memory(&mut self, c: &Cursor, w: &Word) -> R<usize> {
        self.new_name(c, w, "memory")?;
        if self.memory.len() >= MAX_MEMORY {
            return Err(c.err_at(w, format!("more than {MAX_MEMORY} remembered values")));
        }
        self.memory.push(w.text.clone());
        self.memory_set.push(false);
        self.memory_read.push(None);
        Ok(self.memory.len() - 1)
    }

    fn target(&mut self, c: &mut Cursor, kind: KindId, allow_owner: bool) -> R<Target> {
        let w = c.next(if allow_owner {
            "`key`, `key-SUFFIX`, a \"name\" or `owner NAME`"
        } else {
            "`key`, `key-SUFFIX` or a \"name\""
        })?;
        let Some(target) = self.name_target(c, w)? else {
            return self.owner_target(c, w, allow_owner);
        };
        if let Target::Built {
            namespace: Some(_), ..
        } = target
        {
            self.no_namespace(c, w, kind)?;
        }
        let namespace = self.in_namespace(c, kind)?;
        match (target, namespace) {
            (t, None) => Ok(t),
            (
                Target::Built {
                    parts,
                    namespace: None,
                },
                ns,
            ) => Ok(Target::Built {
                parts,
                namespace: ns,
            }),
            (Target::Key, ns) => Ok(Target::Built {
                parts: vec![NamePart::Key],
                namespace: ns,
            }),
            (Target::Suffix(s), ns) => Ok(Target::Built {
                parts: vec![NamePart::Key, NamePart::Text(format!("-{s}"))],
                namespace: ns,
            }),
            (_, Some(_)) => Err(c
                .err_at(w, "this name already says its namespace")
                .help("write `\"ns/name\"` or `\"name\" in ns`, not both")),
        }
    }

    /// `in NAMESPACE`, if it comes next; an error for a cluster-scoped kind.
    fn in_namespace(&self, c: &mut Cursor, kind: KindId) -> R<Option<String>> {
        let at = c.peek();
        if !c.eat("in") {
            return Ok(None);
        }
        if let Some(at) = at {
            self.no_namespace(c, at, kind)?;
        }
        let ns = c.next("a namespace")?;
        crate::name_rules::check_name(c, ns, "namespace", crate::name_rules::is_name_char)?;
        Ok(Some(ns.text.clone()))
    }

    /// The error at `w`, a namespace given for an object of `kind`, if the kind is
    /// cluster-scoped: its objects have none (apimachinery: `metadata.namespace` is empty).
    fn no_namespace(&self, c: &Cursor, w: &Word, kind: KindId) -> R<()> {
        let k = &self.kinds[kind.index()];
        if !k.cluster_scoped {
            return Ok(());
        }
        Err(c
            .err_at(
                w,
                format!(
                    "`{}` is cluster-scoped: its objects have no namespace",
                    k.name
                ),
            )
            .help("name it without one: `\"name\"`"))
    }

    /// `key`, `key-SUFFIX` or a quoted name, each with `{VALUE}`s in it; `None` for any other
    /// word.
    fn name_target(&mut self, c: &Cursor, w: &Word) -> R<Option<Target>> {
        if !w.quoted && w.text == "key" {
            return Ok(Some(Target::Key));
        }
        let (text, from_key) = match (w.quoted, w.text.strip_prefix("key-")) {
            (true, _) => (w.text.as_str(), false),
            (false, Some(s)) => (s, true),
            (false, None) => return Ok(None),
        };
        let valid = |t: &str| {
            t.chars()
                .all(|ch| ch.is_ascii_alphanumeric() || ch == '-' || ch == '.')
        };
        if from_key && !text.contains('{') {
            let ok = !text.is_empty() && text.len() <= MAX_SUFFIX && valid(text);
            if !ok {
                return Err(c
                    .err_at(w, format!("`{}` is not a valid child name", w.text))
                    .help(format!(
                        "a suffix is at most {MAX_SUFFIX} letters, digits, `-` and `.`: `key-data`"
                    )));
            }
            return Ok(Some(Target::Suffix(text.to_string())));
        }
        // A quoted name may say its namespace: `"kube-system/settings"`.
        let (namespace, text) = match (w.quoted, text.split_once('/')) {
            (true, Some((ns, rest))) => (Some(ns.to_string()), rest),
            _ => (None, text),
        };
        let mut parts = if from_key {
            vec![NamePart::Key, NamePart::Text("-".into())]
        } else {
            vec![]
        };
        // Columns: the quote (if any) and `key-` come before `text`.
        let offset = w.text.len() - text.len() + w.quoted as usize;
        let mut rest = text;
        let mut at = 0usize;
        let bad = |msg: String| {
            c.err_at(w, msg).help(format!(
                "letters, digits, `-` and `.`, with at most {MAX_NAME_VALUES} values in braces: `\"cfg-{{db.spec.shard}}\"`"
            ))
        };
        if namespace
            .as_deref()
            .is_some_and(|ns| ns.is_empty() || !valid(ns))
        {
            return Err(bad(format!("`{}` is not a valid namespace", w.text)));
        }
        let mut values = 0;
        while !rest.is_empty() {
            match rest.find('{') {
                Some(open) => {
                    let (lit, tail) = rest.split_at(open);
                    let Some(close) = tail.find('}') else {
                        return Err(bad(format!("`{}` opens a `{{` it never closes", w.text)));
                    };
                    if !valid(lit) {
                        return Err(bad(format!("`{}` is not a valid object name", w.text)));
                    }
                    if !lit.is_empty() {
                        parts.push(NamePart::Text(lit.to_string()));
                    }
                    values += 1;
                    if values > MAX_NAME_VALUES {
                        return Err(bad(format!(
                            "more than {MAX_NAME_VALUES} values in one name"
                        )));
                    }
                    let inner = &tail[1..close];
                    let vw = Word {
                        text: inner.to_string(),
                        col: w.col + offset + at + open + 1,
                        len: inner.chars().count().max(1),
                        quoted: false,
                    };
                    if inner.is_empty() || inner.contains(['{', ' ']) {
                        return Err(
                            c.err_at(&vw, "a value in braces is one word: `{db.spec.shard}`")
                        );
                    }
                    parts.push(NamePart::Value(self.value_of(c, &vw)?));
                    at += open + close + 1;
                    rest = &tail[close + 1..];
                }
                None => {
                    if !valid(rest) || rest.contains('}') {
                        return Err(bad(format!("`{}` is not a valid object name", w.text)));
                    }
                    parts.push(NamePart::Text(rest.to_string()));
                    rest = "";
                }
            }
        }
        if parts.is_empty() {
            return Err(bad("an empty name".to_string()));
        }
        // A name with no values in it is checked now as the apiserver would (422 otherwise).
        let literal: Option<String> = (parts.iter())
            .map(|p| match p {
                NamePart::Text(t) => Some(t.as_str()),
                _ => None,
            })
            .collect();
        if let Some(name) = literal {
            let full = match &namespace {
                Some(ns) => format!("{ns}/{name}"),
                None => name,
            };
            let generate = c
                .words
                .iter()
                .any(|w| !w.quoted && w.text == "generate-name");
            if let Some(why) = crate::name_rules::object_name_error(&full, generate) {
                return Err(bad(format!(
                    "`{}` is not a valid object name: {why}",
                    w.text
                )));
            }
        }
        Ok(Some(Target::Built { parts, namespace }))
    }

    /// `owner NAME` (for `get` only), or the error for a word that names no object.
    fn owner_target(&mut self, c: &mut Cursor, w: &Word, allow_owner: bool) -> R<Target> {
        if w.text == "owner" {
            if !allow_owner {
                return Err(c
                    .err_at(w, "only `get` reads an owner")
                    .help("create and delete by `key`, `key-SUFFIX`, or a name bound by `get`"));
            }
            let n = c.next("the name of an object read above")?;
            return Ok(Target::OwnerOf(self.bound(c, n, Some(false))?));
        }
        let mut cands = vec!["key", "key-data"];
        if allow_owner {
            cands.push("owner");
        }
        let d = c.err_at(w, format!("`{}` does not name an object", w.text));
        Err(match nearest(&w.text, cands.iter().copied()) {
            Some(n) => d.help(format!("did you mean `{n}`?")),
            None => d.help(
                "name it after the reconcile key: `key` (the object itself), `key-SUFFIX` (a child), a \"name\" (`\"cfg-{db.spec.shard}\"`), or `owner NAME`",
            ),
        })
    }

    /// A value: `term (+|- term)*`, a term `factor (*|/|% factor)*`, a factor a number,
    /// `NAME.FIELD`, `memory.NAME`, `( VALUE )`, `min(A, B)` or `max(A, B)`.
    fn value(&mut self, c: &mut Cursor) -> R<Value> {
        let w = c.next("a value (a number, NAME.FIELD or memory.NAME)")?;
        self.expr_from(c, w)
    }

    /// A value whose first word `first` is already read.
    fn expr_from(&mut self, c: &mut Cursor, first: &Word) -> R<Value> {
        let mut v = self.term_from(c, first)?;
        while let Some(op) = self.arith_next(c, &[("+", ArithOp::Add), ("-", ArithOp::Sub)])? {
            let w = c.next("a value after the operator")?;
            let b = self.term_from(c, w)?;
            v = arith(c, w, op, v, b)?;
        }
        Ok(v)
    }

    fn term_from(&mut self, c: &mut Cursor, first: &Word) -> R<Value> {
        let mut v = self.factor_from(c, first)?;
        let ops = [
            ("*", ArithOp::Mul),
            ("/", ArithOp::Div),
            ("%", ArithOp::Rem),
        ];
        while let Some(op) = self.arith_next(c, &ops)? {
            let w = c.next("a value after the operator")?;
            let b = self.factor_from(c, w)?;
            v = arith(c, w, op, v, b)?;
        }
        Ok(v)
    }

    /// Eats the next word when it is one of `ops`, counting it against `MAX_OPERATORS`.
    fn arith_next(&mut self, c: &mut Cursor, ops: &[(&str, ArithOp)]) -> R<Option<ArithOp>> {
        let Some(w) = c.peek().filter(|w| !w.quoted) else {
            return Ok(None);
        };
        let Some(&(_, op)) = ops.iter().find(|(t, _)| *t == w.text) else {
            return Ok(None);
        };
        c.pos += 1;
        self.operators += 1;
        if self.operators > MAX_OPERATORS {
            return Err(c
                .err_at(
                    w,
                    format!("more than {MAX_OPERATORS} operators in one line"),
                )
                .help("split the work: `remember` a part, or decide with `if`"));
        }
        Ok(Some(op))
    }

    fn factor_from(&mut self, c: &mut Cursor, w: &Word) -> R<Value> {
        let open = |c: &Cursor| c.peek().is_some_and(|p| p.text == "(" && !p.quoted);
        if !w.quoted && ["count", "sum"].contains(&w.text.as_str()) && open(c) {
            return self.aggregate(c, w);
        }
        let call = match w.text.as_str() {
            "min" => Some(ArithOp::Min),
            "max" => Some(ArithOp::Max),
            _ => None,
        };
        if w.quoted || (w.text != "(" && !(call.is_some() && open(c))) {
            return self.value_of(c, w);
        }
        self.depth += 1;
        if self.depth > MAX_PARENS {
            return Err(c.err_at(w, format!("parentheses nested deeper than {MAX_PARENS}")));
        }
        let v = match call {
            Some(op) => {
                c.expect_kw("(")?;
                let a = self.value(c)?;
                c.expect_kw(",")?;
                let b = self.value(c)?;
                arith(c, w, op, a, b)?
            }
            None => self.value(c)?,
        };
        c.expect_kw(")")?;
        self.depth -= 1;
        Ok(v)
    }

    /// `count(VAR in LIST [where COND])` or `sum(VALUE for VAR in LIST [where COND])`, `at` the
    /// word `count` or `sum` (the `(` follows). The variable is bound before the value that reads
    /// it is compiled, so `sum` looks ahead for its `for VAR`.
    fn aggregate(&mut self, c: &mut Cursor, at: &Word) -> R<Value> {
        if self.in_aggregate {
            return Err(c
                .err_at(
                    at,
                    format!("a `{}` inside a count or a sum: they do not nest", at.text),
                )
                .help("count the inner list once, with `remember` or in an `if` around it"));
        }
        c.expect_kw("(")?;
        let sum = at.text == "sum";
        let var_word = if sum {
            // The `for` of this sum: the first at this depth of parentheses.
            let mut depth = 0usize;
            let mut found = None;
            for (i, p) in c.words.iter().enumerate().skip(c.pos) {
                match p.text.as_str() {
                    _ if p.quoted => {}
                    "(" => depth += 1,
                    ")" if depth == 0 => break,
                    ")" => depth -= 1,
                    "for" if depth == 0 => {
                        found = c.words.get(i + 1);
                        break;
                    }
                    _ => {}
                }
            }
            match found {
                Some(v) => v,
                None => {
                    return Err(c
                        .err_at(at, "`sum(...)` needs `VALUE for VAR in LIST`")
                        .help("e.g. `sum(p.status.ready for p in pods where p exists)`"))
                }
            }
        } else {
            c.next("a name for each item")?
        };
        let var = self.bind(c, var_word, false)?;
        self.in_aggregate = true;
        let result = self.aggregate_rest(c, var, sum);
        self.in_aggregate = false;
        // The variable is the aggregate's own: the name is free again after its `)` (its slot
        // stays, under a name no word spells).
        self.bindings[var as usize].name = format!("({})", var_word.text);
        result
    }

    fn aggregate_rest(&mut self, c: &mut Cursor, var: Slot, sum: bool) -> R<Value> {
        let value = match sum {
            true => {
                let at = c.peek().cloned();
                let v = self.value(c)?;
                if let (true, Some(at)) = (string_valued(&v), &at) {
                    return Err(c.err_at(at, "a sum is of numbers, not strings"));
                }
                if let (Some(what), Some(at)) = (opaque(&v), &at) {
                    return Err(c
                        .err_at(at, format!("a sum of {what}, which is no number"))
                        .help(OPAQUE_HELP));
                }
                c.expect_kw("for")?;
                c.next("a name for each item")?;
                Some(v)
            }
            false => None,
        };
        c.expect_kw("in")?;
        let lw = c.next("a list read above")?;
        let list = self.bound(c, lw, Some(true))?;
        let filter = match c.eat("where") {
            true => Some(self.cond(c)?),
            false => None,
        };
        c.expect_kw(")")?;
        Ok(Value::Aggregate(Box::new(Aggregate {
            var,
            list,
            filter,
            sum: value,
        })))
    }

    fn value_of(&mut self, c: &Cursor, w: &Word) -> R<Value> {
        if w.quoted {
            if w.text.len() > MAX_VALUE_LEN {
                return Err(c.err_at(w, format!("a string of at most {MAX_VALUE_LEN} bytes")));
            }
            return Ok(Value::Str(w.text.clone()));
        }
        if w.text
            .starts_with(|ch: char| ch.is_ascii_digit() || ch == '-')
        {
            let n: i64 = w
                .text
                .parse()
                .map_err(|_| c.err_at(w, format!("`{}` is not a whole number", w.text)))?;
            if n.unsigned_abs() > MAX_NUMBER as u64 {
                return Err(c.err_at(w, format!("{n} is out of range (at most {MAX_NUMBER})")));
            }
            return Ok(Value::Int(n));
        }
        let Some((name, field)) = w.text.split_once('.') else {
            let d = c.err_at(w, format!("`{}` is not a value", w.text));
            return Err(if self.bindings.iter().any(|b| b.name == w.text) {
                d.help(format!(
                    "say which field: `{}.spec`, `{}.status`, ...",
                    w.text, w.text
                ))
            } else {
                d.help("write a number, NAME.FIELD (like `db.spec`) or memory.NAME")
            });
        };
        let sub = |from: usize, len: usize| Word {
            text: w.text[from..from + len].to_string(),
            col: w.col + w.text[..from].chars().count(),
            len: w.text[from..from + len].chars().count(),
            quoted: false,
        };
        let fw = sub(name.len() + 1, field.len());
        if name == "memory" {
            return Ok(Value::Memory(self.memory_slot(c, &fw, false)?));
        }
        let slot = self.bound(c, &sub(0, name.len()), None)?;
        let list = self.bindings[slot as usize].list;
        if let Some((section, key)) = self.path(c, &fw)? {
            if list {
                return Err(c.err_at(
                    &fw,
                    format!("`{name}` is a list: it has `.count` and `.alive`"),
                ));
            }
            return Ok(Value::Path(slot, section, key));
        }
        let f = match field {
            "spec" => Field::Spec,
            "status" => Field::Status,
            "generation" | "metadata.generation" => Field::Generation,
            "rv" | "resourceVersion" | "metadata.resourceVersion" => Field::Rv,
            "uid" | "metadata.uid" => Field::Uid,
            "name" | "metadata.name" => Field::Name,
            "namespace" | "metadata.namespace" => Field::Namespace,
            "owner" => Field::Owner,
            "count" => Field::Count,
            "alive" => Field::Alive,
            _ => return Err(unknown(c, &fw, "field", FIELDS)),
        };
        let list_field = matches!(f, Field::Count | Field::Alive);
        if list_field != list {
            return Err(if list {
                c.err_at(
                    &fw,
                    format!("`{name}` is a list: it has `.count` and `.alive`"),
                )
            } else {
                c.err_at(
                    &fw,
                    format!("`{name}` is one object: `.{field}` belongs to lists"),
                )
                .help("read a list with `list NAME = KIND owned-by OWNER`")
            });
        }
        Ok(Value::Field(slot, f))
    }

    /// A field path after the object's name (`spec.replicas`, `metadata.labels.app`): its
    /// section and key; `None` when `fw` is a plain field (`spec`, `generation`, ...).
    fn path(&self, c: &Cursor, fw: &Word) -> R<Option<(Section, String)>> {
        let Some((section, key)) = SECTIONS
            .iter()
            .find_map(|s| fw.text.strip_prefix(s.prefix()).map(|k| (*s, k)))
        else {
            return Ok(None);
        };
        if key.is_empty() || key.len() > MAX_KEY_LEN {
            return Err(c
                .err_at(
                    fw,
                    format!("a field's key is 1 to {MAX_KEY_LEN} characters"),
                )
                .help("e.g. `spec.replicas`, `metadata.labels.app`"));
        }
        Ok(Some((section, key.to_string())))
    }

    /// `A or B`, `A and B`, `not A`, `NAME exists|absent|deleting|has-finalizer`,
    /// `VALUE CMP VALUE`; `and` binds tighter than `or`; no parentheses.
    fn cond(&mut self, c: &mut Cursor) -> R<Cond> {
        let mut left = self.conj(c)?;
        while c.eat("or") {
            let right = self.conj(c)?;
            left = Cond::Or(Box::new(left), Box::new(right));
        }
        Ok(left)
    }

    fn conj(&mut self, c: &mut Cursor) -> R<Cond> {
        let mut left = self.atom(c)?;
        while c.eat("and") {
            let right = self.atom(c)?;
            left = Cond::And(Box::new(left), Box::new(right));
        }
        Ok(left)
    }

    fn atom(&mut self, c: &mut Cursor) -> R<Cond> {
        if c.eat("not") {
            return Ok(Cond::Not(Box::new(self.atom(c)?)));
        }
        let w = c.next("a condition (NAME exists, NAME.spec == 3, ...)")?;
        let next = c.peek().filter(|p| !p.quoted).map(|p| p.text.as_str());
        let call = ["min", "max", "count", "sum"].contains(&w.text.as_str()) && next == Some("(");
        let operator = next.is_some_and(|p| ["+", "-", "*", "/", "%"].contains(&p));
        if !w.quoted && (w.text == "(" || call || operator) {
            // A computed value on the left: a comparison follows.
            let a = self.expr_from(c, w)?;
            let p = c.next("a comparison (==, !=, <, <=, >, >=)")?;
            let Some(op) = cmp_op(&p.text) else {
                return Err(unknown(c, p, "comparison", &CONDITION_WORDS[4..]));
            };
            let b = self.value(c)?;
            return self.cmp(c, p, a, op, b);
        }
        let p = c.next("`exists`, `absent`, `deleting`, `has-finalizer` or a comparison")?;
        if let Some(op) = cmp_op(&p.text) {
            let a = self.value_of(c, w)?;
            let b = self.value(c)?;
            return self.cmp(c, p, a, op, b);
        }
        let mem = w.text.strip_prefix("memory.");
        let one = |s: &mut Self, c: &Cursor, list: Option<bool>| -> R<Slot> { s.bound(c, w, list) };
        match p.text.as_str() {
            "exists" | "absent" => {
                let cond = match mem {
                    Some(m) => {
                        let mw = Word {
                            text: m.to_string(),
                            col: w.col + 7,
                            len: m.chars().count(),
                            quoted: false,
                        };
                        Cond::Remembered(self.memory_slot(c, &mw, false)?)
                    }
                    None => Cond::Exists(one(self, c, None)?),
                };
                Ok(if p.text == "absent" {
                    Cond::Not(Box::new(cond))
                } else {
                    cond
                })
            }
            "deleting" => Ok(Cond::Deleting(one(self, c, Some(false))?)),
            "has-finalizer" => {
                let slot = one(self, c, Some(false))?;
                Ok(match self.finalizer_name(c)? {
                    Some(f) => Cond::HasNamedFinalizer(slot, f),
                    None => Cond::HasFinalizer(slot),
                })
            }
            _ => {
                // Say first whether the name itself is known.
                if mem.is_none() && !w.text.contains('.') {
                    one(self, c, None)?;
                }
                Err(unknown(c, p, "condition", CONDITION_WORDS))
            }
        }
    }

    /// A comparison; a string compares only with `==` and `!=`.
    fn cmp(&self, c: &Cursor, at: &Word, a: Value, op: CmpOp, b: Value) -> R<Cond> {
        if !matches!(op, CmpOp::Eq | CmpOp::Ne) && (string_valued(&a) || string_valued(&b)) {
            return Err(c
                .err_at(at, "a string compares only with `==` and `!=`")
                .help("order numbers: `db.spec.replicas < 3`"));
        }
        if let Some(what) = opaque(&a)
            .or(opaque(&b))
            .filter(|_| !matches!(op, CmpOp::Eq | CmpOp::Ne))
        {
            return Err(c
                .err_at(at, format!("an ordering of {what}, which is no number"))
                .help(OPAQUE_HELP));
        }
        Ok(Cond::Cmp(a, op, b))
    }

    fn on_error(&self, c: &mut Cursor) -> R<OnError> {
        if !c.eat("on-error") {
            return Ok(OnError::Return);
        }
        let w = c.next("how its error is handled")?;
        match ON_ERROR.iter().find(|(word, _)| *word == w.text) {
            Some((_, how)) => Ok(*how),
            None => {
                let words: Vec<&str> = ON_ERROR.iter().map(|(word, _)| *word).collect();
                Err(unknown(c, w, "error handling", &words))
            }
        }
    }

    fn writes_allowed(&self, c: &Cursor, w: &Word) -> R<()> {
        if self.desired {
            return Err(c
                .err_at(
                    w,
                    format!(
                        "a `desired` block does not write: `{}` belongs in `logic`",
                        w.text
                    ),
                )
                .help("a `desired` block has `get`, `list` and `require`"));
        }
        Ok(())
    }

    /// A statement of one line (every one but `if`).
    fn simple(&mut self, c: &mut Cursor, w: &Word) -> R<Stmt> {
        let stmt = match w.text.as_str() {
            "get" => self.get_stmt(c)?,
            "list" => self.list_stmt(c)?,
            "require" => self.require_stmt(c, w)?,
            "create" => self.create_stmt(c, w)?,
            "update" | "patch" => self.update_stmt(c, w)?,
            "add-finalizer" | "remove-finalizer" => self.finalizer_stmt(c, w)?,
            "set-condition" => self.condition_stmt(c, w)?,
            "adopt" | "release" => self.owner_ref_stmt(c, w)?,
            "record" => self.record_stmt(c, w)?,
            "delete" => self.delete_stmt(c, w)?,
            "scale" => self.scale_stmt(c, w)?,
            "remember" | "forget" => self.memory_stmt(c, w)?,
            "done" | "error" => {
                self.writes_allowed(c, w)?;
                c.done()?;
                Stmt::Return(if w.text == "done" {
                    Outcome::Done
                } else {
                    Outcome::Error
                })
            }
            "requeue" => self.requeue_stmt(c, w)?,
            _ => {
                let (what, list) = if self.desired {
                    ("desired statement", DESIRED_STATEMENTS)
                } else {
                    ("logic statement", LOGIC_STATEMENTS)
                };
                return Err(unknown(c, w, what, list));
            }
        };
        Ok(stmt)
    }

    /// `require COND`, in a `desired` block only.
    fn require_stmt(&mut self, c: &mut Cursor, w: &Word) -> R<Stmt> {
        if !self.desired {
            return Err(c
                .err_at(w, "`require` belongs in a `desired` block")
                .help("in `logic`, decide with `if`"));
        }
        let cond = self.cond(c)?;
        c.done()?;
        Ok(Stmt::Require(cond))
    }

    /// `add-finalizer|remove-finalizer NAME [FINALIZER] [on-error ...]`: this controller's
    /// finalizer, or a named one (`example.com/cleanup`).
    fn finalizer_stmt(&mut self, c: &mut Cursor, w: &Word) -> R<Stmt> {
        self.writes_allowed(c, w)?;
        let n = c.next("the name of an object read above")?;
        let slot = self.bound(c, n, Some(false))?;
        let named = self.finalizer_name(c)?;
        let on_error = self.on_error(c)?;
        c.done()?;
        let (add, line) = (w.text == "add-finalizer", c.line as u32);
        Ok(match named {
            Some(finalizer) => Stmt::NamedFinalizer {
                slot,
                finalizer,
                add,
                on_error,
                line,
            },
            None => Stmt::Finalizer {
                slot,
                add,
                on_error,
                line,
            },
        })
    }

    /// A named finalizer after an object's name, if the next word has a `/`: a qualified name
    /// (`apimachinery/pkg/util/validation` `IsQualifiedName`: a DNS subdomain prefix, `/`, and a
    /// name of at most 63 characters), as finalizers outside Kubernetes' own must be
    /// (`apimachinery/pkg/api/validation/objectmeta.go` `ValidateFinalizerName`).
    fn finalizer_name(&self, c: &mut Cursor) -> R<Option<String>> {
        // A word after the object that is not the next clause (`on-error`) or a condition's
        // `and` / `or` names a finalizer, with or without a prefix, as the docs say.
        let Some(f) = c
            .peek()
            .filter(|p| p.quoted || !["on-error", "and", "or"].contains(&p.text.as_str()))
        else {
            return Ok(None);
        };
        c.pos += 1;
        if let Some(why) = (!f.quoted)
            .then(|| crate::name_rules::qualified_name_error(&f.text))
            .flatten()
        {
            return Err(c
                .err_at(f, format!("`{}` is not a finalizer name: {why}", f.text))
                .help("a qualified name: `example.com/cleanup` (the apiserver warns on one without a `/` prefix)"));
        }
        if f.quoted {
            return Err(c.err_at(f, "a finalizer name is a word, not a string in quotes"));
        }
        Ok(Some(f.text.clone()))
    }

    /// `adopt|release NAME owner OWNER [on-error ...]`: the controller's owner reference.
    fn owner_ref_stmt(&mut self, c: &mut Cursor, w: &Word) -> R<Stmt> {
        self.writes_allowed(c, w)?;
        let n = c.next("the name of an object read above")?;
        let slot = self.bound(c, n, Some(false))?;
        c.expect_kw("owner")?;
        let o = c.next("the owner's name (read above)")?;
        let owner = self.bound(c, o, Some(false))?;
        let on_error = self.on_error(c)?;
        c.done()?;
        Ok(Stmt::OwnerRef {
            slot,
            owner,
            adopt: w.text == "adopt",
            on_error,
            line: c.line as u32,
        })
    }

    /// `record NAME Normal|Warning REASON "MESSAGE"`: client-go's `EventRecorder.Event`. The
    /// type is one of the two the recorder accepts (`tools/record/util/util.go`
    /// `ValidateEventType`), the reason one UpperCamelCase word (`tools/record/event.go`:
    /// "should be short and unique ... in UpperCamelCase format") of at most 128 characters,
    /// the message a quoted string of at most 1024 bytes; the configuration declares `Event`.
    fn record_stmt(&mut self, c: &mut Cursor, w: &Word) -> R<Stmt> {
        self.writes_allowed(c, w)?;
        let Some(event_kind) = self.kinds.iter().position(|k| k.name == "Event") else {
            return Err(c
                .err_at(
                    w,
                    "an Event is an object of the kind `Event`, which is not declared",
                )
                .help("declare it: `kind Event`"));
        };
        let n = c.next("the name of the object the event is about (read above)")?;
        let slot = self.bound(c, n, Some(false))?;
        let t = c.next("the event's type (Normal or Warning)")?;
        if t.quoted || !EVENT_TYPES.contains(&t.text.as_str()) {
            return Err(unknown(c, t, "event type", EVENT_TYPES));
        }
        let r = c.next("the event's reason (UpperCamelCase: ScaleFailed)")?;
        let ok = !r.quoted
            && r.text.len() <= MAX_EVENT_REASON
            && r.text.starts_with(|ch: char| ch.is_ascii_uppercase())
            && r.text.chars().all(|ch| ch.is_ascii_alphanumeric());
        if !ok {
            return Err(c
                .err_at(r, format!("`{}` is not an event reason", r.text))
                .help(format!(
                    "one UpperCamelCase word of letters and digits, at most {MAX_EVENT_REASON}: `ScaleFailed`"
                )));
        }
        let m = c.next("the event's message, in quotes")?;
        if !m.quoted || m.text.len() > MAX_VALUE_LEN {
            return Err(c
                .err_at(m, "an event's message is a string in quotes")
                .help(format!(
                    "at most {MAX_VALUE_LEN} bytes: `record db Warning ScaleFailed \"no quota\"`"
                )));
        }
        if m.text.contains(['{', '}']) {
            // A built name's `{VALUE}` would read as a value here, and it is not one.
            return Err(c
                .err_at(
                    m,
                    "an event's message is fixed text: `{...}` values are not filled in",
                )
                .help("say it without braces; Eventf's formatting is not modelled"));
        }
        c.done()?;
        Ok(Stmt::Record(Box::new(RecordStmt {
            event_kind: listwatch_core::KindId(event_kind as u16),
            slot,
            event_type: t.text.clone(),
            reason: r.text.clone(),
            message: m.text.clone(),
            line: c.line as u32,
        })))
    }

    /// `set-condition NAME TYPE STATUS [reason R] [message "M"] [on-error ...]`, checked as
    /// apimachinery `pkg/apis/meta/v1/types.go` `Condition`'s validation markers check them
    /// (status `True`, `False` or `Unknown`; a reason `^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$`).
    fn condition_stmt(&mut self, c: &mut Cursor, w: &Word) -> R<Stmt> {
        self.writes_allowed(c, w)?;
        let n = c.next("the name of an object read above")?;
        let slot = self.bound(c, n, Some(false))?;
        let t = c.next("the condition's type (Ready, Available, ...)")?;
        let alnum = |ch: char| ch.is_ascii_alphanumeric();
        let type_ok = !t.quoted
            && t.text.len() <= MAX_CONDITION_TYPE
            && t.text.starts_with(alnum)
            && t.text.ends_with(alnum)
            && t.text.chars().all(|ch| alnum(ch) || "-_.".contains(ch));
        if !type_ok {
            return Err(c
                .err_at(t, format!("`{}` is not a condition type", t.text))
                .help(format!(
                    "letters, digits, `-`, `_` and `.`, at most {MAX_CONDITION_TYPE}: `Ready`"
                )));
        }
        let st = c.next("the condition's status (True, False or Unknown)")?;
        if st.quoted || !CONDITION_STATUSES.contains(&st.text.as_str()) {
            return Err(unknown(c, st, "condition status", CONDITION_STATUSES));
        }
        let (mut reason, mut message) = (None, None);
        loop {
            let at = c.peek();
            if c.eat("reason") {
                once(c, at, &reason)?;
                let r = c.next("a reason (CamelCase: Provisioned)")?;
                let mut chars = r.text.chars();
                let ok = !r.quoted
                    && r.text.len() <= MAX_VALUE_LEN
                    && chars.next().is_some_and(|ch| ch.is_ascii_alphabetic())
                    && r.text.chars().all(|ch| alnum(ch) || "_,:".contains(ch))
                    && !r.text.ends_with([',', ':']);
                if !ok {
                    return Err(c
                        .err_at(r, format!("`{}` is not a condition reason", r.text))
                        .help("a reason is one CamelCase word: `Provisioned`, `ScaleFailed`"));
                }
                reason = Some(r.text.clone());
            } else if c.eat("message") {
                once(c, at, &message)?;
                let m = c.next("a message in quotes")?;
                if !m.quoted || m.text.len() > MAX_VALUE_LEN {
                    return Err(c.err_at(m, "a message is a string in quotes").help(format!(
                        "at most {MAX_VALUE_LEN} bytes: `message \"waiting for pods\"`"
                    )));
                }
                message = Some(m.text.clone());
            } else {
                break;
            }
        }
        let on_error = self.on_error(c)?;
        c.done()?;
        Ok(Stmt::SetCondition {
            slot,
            condition: Box::new(ConditionStmt {
                type_name: t.text.clone(),
                status: st.text.clone(),
                reason,
                message,
            }),
            on_error,
            line: c.line as u32,
        })
    }

    /// `delete NAME [if-uid] [on-error ...]`: an object or every object of a list.
    fn delete_stmt(&mut self, c: &mut Cursor, w: &Word) -> R<Stmt> {
        self.writes_allowed(c, w)?;
        let n = c.next("the name of an object or list read above")?;
        let slot = self.bound(c, n, None)?;
        let uid_check = c.eat("if-uid");
        let on_error = self.on_error(c)?;
        c.done()?;
        Ok(Stmt::Delete {
            slot,
            uid_check,
            on_error,
            line: c.line as u32,
        })
    }

    /// `remember NAME = VALUE` or `forget NAME`: the controller's memory across reconciles.
    fn memory_stmt(&mut self, c: &mut Cursor, w: &Word) -> R<Stmt> {
        self.writes_allowed(c, w)?;
        // One change per statement run keeps a plan's memory changes bounded.
        if self.in_loop {
            return Err(c
                .err_at(w, format!("`{}` inside a `for`", w.text))
                .help("decide in the loop, remember after it"));
        }
        if w.text == "forget" {
            let n = c.next("a remembered name")?;
            let slot = self.memory_slot(c, n, false)?;
            c.done()?;
            return Ok(Stmt::Forget { slot });
        }
        let n = c.next("a name to remember the value as")?;
        c.expect_kw("=")?;
        let value = self.value(c)?;
        c.done()?;
        let slot = self.memory_slot(c, n, true)?;
        Ok(Stmt::Remember { slot, value })
    }

    /// `requeue after D`.
    fn requeue_stmt(&mut self, c: &mut Cursor, w: &Word) -> R<Stmt> {
        self.writes_allowed(c, w)?;
        c.expect_kw("after")?;
        let d = c.next("a duration")?;
        let not_one = || {
            c.err_at(d, format!("`{}` is not a duration up to 24h", d.text))
                .help("write a number and a unit: 250ms, 1.5s, 2m, 1h")
        };
        let after = c.duration_in(d, &d.text, not_one)?;
        if after > MAX_DURATION_MS {
            return Err(not_one());
        }
        c.done()?;
        Ok(Stmt::Return(Outcome::RequeueAfter(after)))
    }

    /// `scale KIND owned-by OWNER to V [live] [on-error ...]`.
    fn scale_stmt(&mut self, c: &mut Cursor, w: &Word) -> R<Stmt> {
        self.writes_allowed(c, w)?;
        let kind = self.next_kind(c)?;
        c.expect_kw("owned-by")?;
        let ow = c.next("the owner's name (read above)")?;
        let owner = self.bound(c, ow, Some(false))?;
        c.expect_kw("to")?;
        let count = self.value(c)?;
        let live = c.eat("live");
        let on_error = self.on_error(c)?;
        c.done()?;
        Ok(Stmt::Scale {
            kind,
            owner,
            count,
            live,
            on_error,
            line: c.line as u32,
        })
    }

    /// `update|patch NAME spec V|status V [on-error ...]` (`update` checks the RV).
    fn update_stmt(&mut self, c: &mut Cursor, w: &Word) -> R<Stmt> {
        self.writes_allowed(c, w)?;
        let n = c.next("the name of an object read above")?;
        let slot = self.bound(c, n, Some(false))?;
        if let Some(fw) = c.peek().filter(|p| !p.quoted) {
            if let Some((section, key)) = self.path(c, fw)? {
                c.pos += 1;
                return self.set_field_stmt(c, w, slot, (section, key));
            }
        }
        let (mut spec, mut status) = (None, None);
        loop {
            let at = c.peek();
            if c.eat("spec") {
                once(c, at, &spec)?;
                spec = Some(self.value(c)?);
            } else if c.eat("status") {
                once(c, at, &status)?;
                status = Some(self.value(c)?);
            } else {
                break;
            }
            // `r.Update` writes the object and `r.Status().Update` its `/status`: one call each.
            if let (Some(_), Some(_), Some(at)) = (&spec, &status, at) {
                return Err(c
                    .err_at(
                        at,
                        format!(
                            "`{}` writes the spec (to the object) or the status (to `/status`), not both",
                            w.text
                        ),
                    )
                    .help(format!(
                        "two writes, two lines: `{0} {1} spec ...` then `{0} {1} status ...`",
                        w.text, n.text
                    )));
            }
        }
        if spec.is_none() && status.is_none() {
            let at = c.peek().unwrap_or(n);
            return Err(c
                .err_at(
                    at,
                    format!("`{}` needs `spec VALUE` or `status VALUE`", w.text),
                )
                .help(format!(
                    "e.g. `{} {} status {}.spec`",
                    w.text, n.text, n.text
                )));
        }
        let on_error = self.on_error(c)?;
        c.done()?;
        Ok(Stmt::Update {
            slot,
            spec,
            status,
            rv_check: w.text == "update",
            on_error,
            line: c.line as u32,
        })
    }

    /// The rest of `update|patch NAME PATH = VALUE [on-error ...]`: one named field.
    fn set_field_stmt(
        &mut self,
        c: &mut Cursor,
        w: &Word,
        slot: Slot,
        (section, key): (Section, String),
    ) -> R<Stmt> {
        c.expect_kw("=")?;
        let value = self.label_value(c, section)?;
        let on_error = self.on_error(c)?;
        c.done()?;
        Ok(Stmt::SetField {
            slot,
            section,
            key,
            value,
            rv_check: w.text == "update",
            on_error,
            line: c.line as u32,
        })
    }

    /// `create KIND TARGET [spec V] [owner O] [on-error ...]`.
    fn create_stmt(&mut self, c: &mut Cursor, w: &Word) -> R<Stmt> {
        self.writes_allowed(c, w)?;
        let kind = self.next_kind(c)?;
        // A `generateName` prefix may be the key's name and a dash (`key-`).
        let generating = (c.words[c.pos..])
            .iter()
            .any(|w| !w.quoted && w.text == "generate-name");
        let target = match c.peek() {
            Some(w) if generating && !w.quoted && w.text == "key-" => {
                c.pos += 1;
                let namespace = self.in_namespace(c, kind)?;
                let parts = vec![NamePart::Key, NamePart::Text("-".into())];
                Target::Built { parts, namespace }
            }
            _ => self.target(c, kind, false)?,
        };
        let mut spec = None;
        let mut owner = None;
        let mut generate_name = None;
        let mut fields: Vec<(Section, String, Value)> = vec![];
        loop {
            let at = c.peek();
            if c.eat("spec") {
                once(c, at, &spec)?;
                spec = Some(self.value(c)?);
            } else if c.eat("owner") {
                once(c, at, &owner)?;
                let o = c.next("the owner's name (read above)")?;
                owner = Some(self.bound(c, o, Some(false))?);
            } else if c.eat("generate-name") {
                once(c, at, &generate_name)?;
                generate_name = Some(());
            } else if let Some(fw) = at.filter(|p| !p.quoted).cloned() {
                let Some((section, key)) = self.path(c, &fw)? else {
                    break;
                };
                c.pos += 1;
                self.create_field(c, kind, &fw, (section, &key), &fields)?;
                c.expect_kw("=")?;
                let value = self.label_value(c, section)?;
                fields.push((section, key, value));
            } else {
                break;
            }
        }
        let on_error = self.on_error(c)?;
        c.done()?;
        Ok(Stmt::Create {
            kind,
            target,
            spec: spec.unwrap_or(Value::Int(0)),
            fields,
            generate_name: generate_name.is_some(),
            owner,
            on_error,
            line: c.line as u32,
        })
    }

    /// The value written to a field of `section`: a label's, written as a literal, is checked
    /// as the apiserver checks it (a computed one is as the object read holds it).
    fn label_value(&mut self, c: &mut Cursor, section: Section) -> R<Value> {
        let at = c.peek().cloned();
        let value = self.value(c)?;
        if let (Section::Label, Value::Str(text), Some(at)) = (section, &value, &at) {
            crate::name_rules::check_label_value(text, |m| c.err_at(at, m))?;
        }
        Ok(value)
    }

    /// A named field a create sets (`spec.replicas = 3`, `metadata.labels.app = "web"`), read
    /// in `fw`: once each, at most `MAX_CREATE_FIELDS`, a label's or an annotation's key as
    /// `validateLabelKey` reads it, and no status with the status subresource
    /// (apiextensions-apiserver `customresource/strategy.go` `PrepareForCreate`: "create cannot
    /// set status").
    fn create_field(
        &self,
        c: &Cursor,
        kind: KindId,
        fw: &Word,
        (section, key): (Section, &str),
        fields: &[(Section, String, Value)],
    ) -> R<()> {
        if fields.iter().any(|(s, k, _)| *s == section && k == key) {
            return Err(c
                .err_at(fw, format!("`{}` is given twice", fw.text))
                .help("say it once; the last would silently win"));
        }
        if fields.len() >= MAX_CREATE_FIELDS {
            return Err(c.err_at(
                fw,
                format!("a create sets at most {MAX_CREATE_FIELDS} named fields, labels and annotations"),
            ));
        }
        match section {
            Section::Label => crate::name_rules::check_key(key, "label", |m| c.err_at(fw, m))?,
            Section::Annotation => {
                crate::name_rules::check_key(key, "annotation", |m| c.err_at(fw, m))?
            }
            Section::Status if self.kinds[kind.index()].status_subresource => {
                return Err(c
                    .err_at(fw, "a create ignores the status (the status subresource)")
                    .help("set it afterwards: `patch NAME status.FIELD = V` on the object read"))
            }
            Section::Spec | Section::Status => {}
        }
        Ok(())
    }

    /// `list NAME = KIND owned-by OWNER [live]`.
    fn list_stmt(&mut self, c: &mut Cursor) -> R<Stmt> {
        let n = c.next("a name for the list")?;
        c.expect_kw("=")?;
        let kind = self.next_kind(c)?;
        if c.eat("selector") {
            let sw = c.next("a label selector (app=web,tier!=db,env,!legacy)")?;
            let sw = crate::selector::selector_word(c, sw);
            let selector = crate::selector::label_selector(c, &sw)?;
            let namespace = self.in_namespace(c, kind)?;
            let live = c.eat("live") || self.desired;
            c.done()?;
            let slot = self.bind(c, n, true)?;
            return Ok(Stmt::Select {
                slot,
                kind,
                selector,
                namespace,
                live,
                line: c.line as u32,
            });
        }
        if c.peek().is_none_or(|p| p.text != "owned-by") {
            let at = c.peek().unwrap_or(n);
            return Err(c
                .err_at(at, "expected `owned-by OWNER` or `selector SELECTOR`")
                .help("e.g. `list pods = Pod selector app=web` or `list pods = Pod owned-by db`"));
        }
        c.expect_kw("owned-by")?;
        let ow = c.next("the owner's name (read above)")?;
        let owner = self.bound(c, ow, Some(false))?;
        let live = c.eat("live") || self.desired;
        c.done()?;
        let slot = self.bind(c, n, true)?;
        Ok(Stmt::List {
            slot,
            kind,
            owner,
            live,
        })
    }

    /// `get NAME = KIND TARGET [live]`.
    fn get_stmt(&mut self, c: &mut Cursor) -> R<Stmt> {
        let n = c.next("a name for what is read")?;
        c.expect_kw("=")?;
        let kind = self.next_kind(c)?;
        let target = self.target(c, kind, true)?;
        let live = c.eat("live") || self.desired;
        c.done()?;
        let slot = self.bind(c, n, false)?;
        Ok(Stmt::Get {
            slot,
            kind,
            target,
            live,
        })
    }
}

/// Why a run stopped at a limit of the reconcile language, located at the statement that ran
/// into it (`src`: the script the run was parsed from); `None` for any other end.
pub fn stopped_at_limit(sim: &listwatch_core::Sim, src: &str) -> Option<Diagnostic> {
    let listwatch_core::Stop::Limit {
        controller,
        key,
        exceeded,
    } = sim.stopped()?
    else {
        return None;
    };
    let config = sim.config();
    let names = sim.names();
    let line = match exceeded {
        Exceeded::ChildrenPerObject { line, .. } | Exceeded::ListItems { line, .. } => line,
    };
    let text = crate::lexer::lines(src).nth((line as usize).saturating_sub(1));
    let col = text.map_or(1, |t| t.chars().take_while(|c| *c == ' ').count() + 1);
    let len = text.map_or(1, |t| {
        t.trim_start()
            .split(' ')
            .next()
            .map_or(1, |w| w.chars().count())
    });
    let (kind, owner, children) = match exceeded {
        Exceeded::ChildrenPerObject {
            kind,
            owner,
            children,
            ..
        } => (kind, owner, children),
        Exceeded::ListItems { kind, items, .. } => {
            return Some(
                Diagnostic::at(
                    line as usize,
                    col,
                    len,
                    format!(
                        "the run stopped here: this list has {items} {} objects, more than the limit of {MAX_LIST_ITEMS} a list holds",
                        config.kinds[kind.index()].name,
                    ),
                )
                .help("narrow the selector, or `in NAMESPACE`"),
            )
        }
    };
    Some(
        Diagnostic::at(
            line as usize,
            col,
            len,
            format!(
                "the run stopped here: {} owns {children} live {} objects, more than the limit of {MAX_CHILDREN} children per object",
                names.resolve(owner),
                config.kinds[kind.index()].name,
            ),
        )
        .help(format!(
            "at {} in a reconcile of `{}` for {}: a `scale` or a list's `delete` handles at most {MAX_CHILDREN} live children of one object",
            sim.now_ms(),
            config.controllers[controller.index()].name,
            names.resolve(key),
        )),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The reconcile language's words are listed once: in `LOGIC_WORDS`, not again among the
    /// rest of the language's (`syntax::WORDS`), and each once.
    #[test]
    fn the_logic_words_are_one_table() {
        for (i, w) in LOGIC_WORDS.iter().enumerate() {
            assert!(!crate::syntax::WORDS.contains(w), "{w} is listed twice");
            assert!(!LOGIC_WORDS[..i].contains(w), "{w} is in LOGIC_WORDS twice");
        }
        // The count ends the statements where the block names begin, whatever was added last.
        assert_eq!(LOGIC_WORDS[LOGIC_STATEMENT_COUNT], "logic");
        assert!(DESIRED_STATEMENTS.iter().all(|w| LOGIC_WORDS.contains(w)));
    }

    /// The editor's list of field paths is the sections the compiler reads, in order.
    #[test]
    fn field_paths_spell_the_sections() {
        let spelled: Vec<&str> = SECTIONS.iter().map(|s| s.prefix()).collect();
        assert_eq!(spelled, FIELD_PATHS);
    }

    /// The parser drives the logic compiler, never the reverse: what both read (names,
    /// selectors) lives below both, in `name_rules.rs` and `selector.rs`.
    #[test]
    fn the_logic_compiler_uses_nothing_of_the_parser() {
        let needle = ["crate::", "parse"].concat();
        let uses: Vec<&str> = (include_str!("logic.rs").lines())
            .filter(|l| l.contains(&needle))
            .collect();
        assert!(uses.is_empty(), "logic.rs uses the parser: {uses:#?}");
    }
}
