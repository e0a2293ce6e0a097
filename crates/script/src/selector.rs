//! Label and field selectors, read as the apiserver reads a request's `labelSelector`
//! (`apimachinery/pkg/labels/selector.go` `Parse`: its lexer, its parser and `NewRequirement`'s
//! checks, with its error words) and `fieldSelector` (`apimachinery/pkg/fields/selector.go`
//! `ParseSelector`, on the fields every kind supports: `metadata.name`, `metadata.namespace`).

use listwatch_core::config::{
    FieldRequirement, FieldSelector, LabelRequirement, LabelSelector, SelectorField, SelectorOp,
    MAX_REQUIREMENTS, MAX_SELECTOR_VALUES,
};
use listwatch_core::object::MAX_LABEL_VALUE_LEN;

use crate::cursor::{Cursor, R};
use crate::diag::Diagnostic;
use crate::lexer::Word;

/// `first` and the words after it that continue the selector, as one word keeping their
/// spaces: `env in (a, b),app=web` is four words of the line. A selector goes on while a
/// parenthesis is open, after a `,`, `=` or `!`, before a word starting with `,`, `(`, `)`, `=`
/// or `!=`, over `notin`, and over `in` when a `(` follows it (so `selector app in ns` still
/// ends before the namespace option `in ns`). A quoted selector is its one word.
pub(crate) fn selector_word(c: &mut Cursor, first: &Word) -> Word {
    let mut w = first.clone();
    if first.quoted {
        return w;
    }
    let mut after_set_op = false;
    while let Some(next) = c.peek().filter(|n| !n.quoted) {
        let open = w.text.matches('(').count() > w.text.matches(')').count();
        let set_op = next.text == "notin"
            || next.text == "in"
                && (c.words.get(c.pos + 1)).is_some_and(|a| !a.quoted && a.text.starts_with('('));
        let joins = open
            || after_set_op
            || set_op
            || w.text.ends_with([',', '=', '!', '('])
            || next.text.starts_with([',', '(', ')', '='])
            || next.text.starts_with("!=");
        if !joins {
            break;
        }
        after_set_op = set_op;
        let gap = next.col.saturating_sub(w.col + w.len);
        w.text.push_str(&" ".repeat(gap));
        w.text.push_str(&next.text);
        w.len = next.col + next.len - w.col;
        c.pos += 1;
    }
    w
}

#[derive(Clone, Copy, PartialEq, Debug)]
enum Tok {
    End,
    ClosedPar,
    Comma,
    DoesNotExist,
    DoubleEquals,
    Equals,
    Identifier,
    In,
    NotEquals,
    NotIn,
    OpenPar,
    /// `>` and `<` (`Gt`, `Lt`): selector.go reads them; listwatch does not model them.
    Compare,
}

/// A token, its text and where it starts (in characters from the word's start) and its length.
struct Token {
    tok: Tok,
    text: String,
    at: usize,
    len: usize,
}

/// `selector.go`'s `Lexer`: whitespace skipped, `!`, `!=`, `=`, `==`, `(`, `)`, `,`, `<`, `>`
/// special; any other run is an identifier (`in` and `notin` keywords where an operator goes).
fn lex(text: &str) -> Vec<Token> {
    let chars: Vec<char> = text.chars().collect();
    let special = |c: char| "=!(),><".contains(c);
    let mut out = vec![];
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() {
            i += 1;
            continue;
        }
        let start = i;
        let tok = if special(c) {
            let two = chars.get(i + 1) == Some(&'=');
            let (tok, n) = match c {
                '!' if two => (Tok::NotEquals, 2),
                '!' => (Tok::DoesNotExist, 1),
                '=' if two => (Tok::DoubleEquals, 2),
                '=' => (Tok::Equals, 1),
                '(' => (Tok::OpenPar, 1),
                ')' => (Tok::ClosedPar, 1),
                ',' => (Tok::Comma, 1),
                _ => (Tok::Compare, 1),
            };
            i += n;
            tok
        } else {
            while i < chars.len() && !chars[i].is_whitespace() && !special(chars[i]) {
                i += 1;
            }
            Tok::Identifier
        };
        let text: String = chars[start..i].iter().collect();
        let tok = match (tok, text.as_str()) {
            (Tok::Identifier, "in") => Tok::In,
            (Tok::Identifier, "notin") => Tok::NotIn,
            _ => tok,
        };
        out.push(Token {
            tok,
            text,
            at: start,
            len: i - start,
        });
    }
    out.push(Token {
        tok: Tok::End,
        text: "end of string".into(),
        at: chars.len(),
        len: 1,
    });
    out
}

/// `selector.go`'s `Parser` over the tokens of one word.
struct Parser<'a> {
    cursor: &'a Cursor<'a>,
    word: &'a Word,
    tokens: Vec<Token>,
    pos: usize,
}

impl Parser<'_> {
    /// The next token; in a place for values (`Values`) `in` and `notin` are identifiers.
    fn lookahead(&self, values: bool) -> (Tok, usize) {
        let t = &self.tokens[self.pos];
        let tok = match t.tok {
            Tok::In | Tok::NotIn if values => Tok::Identifier,
            tok => tok,
        };
        (tok, self.pos)
    }

    fn consume(&mut self, values: bool) -> (Tok, usize) {
        let next = self.lookahead(values);
        self.pos = (self.pos + 1).min(self.tokens.len() - 1);
        next
    }

    fn text(&self, i: usize) -> &str {
        &self.tokens[i].text
    }

    /// An error at token `i`, its column counted from the word (a quoted word's text starts one
    /// column after its quote).
    fn err(&self, i: usize, msg: impl Into<String>) -> Diagnostic {
        let t = &self.tokens[i];
        let col = self.word.col + t.at + self.word.quoted as usize;
        Diagnostic::at(self.cursor.line, col, t.len, msg)
    }

    /// `found 'X', expected: WHAT` at token `i`, in selector.go's words.
    fn found(&self, i: usize, expected: &str) -> Diagnostic {
        self.err(i, format!("found '{}', expected: {expected}", self.text(i)))
    }

    fn parse(&mut self) -> R<Vec<LabelRequirement>> {
        let mut out = vec![];
        loop {
            let (tok, i) = self.lookahead(true);
            match tok {
                Tok::Identifier | Tok::DoesNotExist => {
                    if out.len() == MAX_REQUIREMENTS {
                        return Err(self.err(
                            i,
                            format!("a selector has at most {MAX_REQUIREMENTS} requirements"),
                        ));
                    }
                    out.push(self.requirement()?);
                    let (t, j) = self.consume(true);
                    match t {
                        Tok::End => return Ok(out),
                        Tok::Comma => {
                            let (t2, k) = self.lookahead(true);
                            if t2 != Tok::Identifier && t2 != Tok::DoesNotExist {
                                return Err(self.found(k, "identifier after ','"));
                            }
                        }
                        _ => return Err(self.found(j, "',' or 'end of string'")),
                    }
                }
                Tok::End => return Ok(out),
                _ => return Err(self.found(i, "!, identifier, or 'end of string'")),
            }
        }
    }

    fn requirement(&mut self) -> R<LabelRequirement> {
        let (mut tok, mut i) = self.consume(true);
        let not = tok == Tok::DoesNotExist;
        if not {
            (tok, i) = self.consume(true);
        }
        if tok != Tok::Identifier {
            return Err(self.found(i, "identifier"));
        }
        let key = self.text(i).to_string();
        self.check_key(i)?;
        let (next, _) = self.lookahead(true);
        if not || matches!(next, Tok::End | Tok::Comma) {
            let op = if not {
                SelectorOp::NotExists
            } else {
                SelectorOp::Exists
            };
            return Ok(LabelRequirement {
                op,
                key,
                values: vec![],
            });
        }
        let (tok, j) = self.consume(false);
        let op = match tok {
            Tok::In => SelectorOp::In,
            Tok::NotIn => SelectorOp::NotIn,
            Tok::Equals | Tok::DoubleEquals => SelectorOp::Equals,
            Tok::NotEquals => SelectorOp::NotEquals,
            Tok::Compare => {
                return Err(self
                    .err(
                        j,
                        format!("the operator `{}` is not modelled", self.text(j)),
                    )
                    .help("write `=`, `==`, `!=`, `in (...)`, `notin (...)`, `KEY` or `!KEY`"))
            }
            _ => return Err(self.found(j, "=, ==, !=, in, notin")),
        };
        let values = match op {
            SelectorOp::In | SelectorOp::NotIn => self.values(j)?,
            _ => self.exact_value()?,
        };
        Ok(LabelRequirement { op, key, values })
    }

    /// `parseValues`: `(a,b,...)`; `()` and empty places are the empty value.
    fn values(&mut self, op: usize) -> R<Vec<String>> {
        let (tok, i) = self.consume(true);
        if tok != Tok::OpenPar {
            return Err(self.err(i, format!("found '{}' expected: '('", self.text(i))));
        }
        let mut set: Vec<String> = vec![];
        let (tok, i) = self.lookahead(true);
        match tok {
            Tok::Identifier | Tok::Comma => loop {
                let (tok, i) = self.consume(true);
                match tok {
                    Tok::Identifier => {
                        self.check_value(i)?;
                        set.push(self.text(i).to_string());
                        match self.lookahead(true) {
                            (Tok::Comma, _) => {}
                            (Tok::ClosedPar, _) => break,
                            (_, k) => return Err(self.found(k, "',' or ')'")),
                        }
                    }
                    // `(,`, `,)` and `,,` hold the empty value.
                    Tok::Comma => {
                        if set.is_empty() {
                            set.push(String::new());
                        }
                        match self.lookahead(true).0 {
                            Tok::ClosedPar => {
                                set.push(String::new());
                                break;
                            }
                            Tok::Comma => {
                                self.consume(true);
                                set.push(String::new());
                            }
                            _ => {}
                        }
                    }
                    _ => return Err(self.found(i, "',', or identifier")),
                }
                if set.len() > MAX_SELECTOR_VALUES {
                    return Err(self.err(
                        i,
                        format!("a set of values holds at most {MAX_SELECTOR_VALUES} values"),
                    ));
                }
            },
            Tok::ClosedPar => set.push(String::new()),
            _ => return Err(self.found(i, "',', ')' or identifier")),
        }
        let (tok, i) = self.consume(true);
        if tok != Tok::ClosedPar {
            return Err(self.found(i, "')'"));
        }
        listwatch_core::order::sort_by_text(&mut set, |s| s.as_str());
        set.dedup();
        if set.is_empty() {
            return Err(self.err(op, "for 'in', 'notin' operators, values set can't be empty"));
        }
        Ok(set)
    }

    /// `parseExactValue`: one identifier, or nothing (the empty value) before `,` or the end.
    fn exact_value(&mut self) -> R<Vec<String>> {
        let (tok, _) = self.lookahead(true);
        if matches!(tok, Tok::End | Tok::Comma) {
            return Ok(vec![String::new()]);
        }
        let (tok, i) = self.consume(true);
        if tok != Tok::Identifier {
            return Err(self.found(i, "identifier"));
        }
        self.check_value(i)?;
        Ok(vec![self.text(i).to_string()])
    }

    /// `validateLabelKey` (a qualified name), as the timeline's labels are checked.
    fn check_key(&self, i: usize) -> R<()> {
        crate::name_rules::check_key(self.text(i), "label", |m| self.err(i, m))
    }

    /// `validateLabelValue`: at most 63 of letters, digits, `-`, `_`, `.`.
    fn check_value(&self, i: usize) -> R<()> {
        let value = self.text(i);
        let n = value.chars().count();
        if n > MAX_LABEL_VALUE_LEN {
            return Err(self.err(
                i,
                format!(
                    "the label value is {n} characters long, more than the limit of {MAX_LABEL_VALUE_LEN}"
                ),
            ));
        }
        if !listwatch_core::validation::label_value_ok(value) {
            return Err(self
                .err(i, format!("`{value}` is not a valid label value"))
                .help("a label value is empty or at most 63 ASCII letters, digits, `-`, `_` and `.`, starting and ending with a letter or digit"));
        }
        Ok(())
    }
}

/// A label selector (`selector.go` `Parse`): requirements `k=v`, `k==v`, `k!=v`, `k`, `!k`,
/// `k in (v1,v2)`, `k notin (v1)`, comma-separated; every error names its column.
pub(crate) fn label_selector(c: &Cursor, w: &Word) -> R<LabelSelector> {
    let mut parser = Parser {
        cursor: c,
        word: w,
        tokens: lex(&w.text),
        pos: 0,
    };
    parser.parse().map(LabelSelector)
}

/// A field selector (`fields/selector.go` `ParseSelector`): `FIELD=V`, `FIELD==V`, `FIELD!=V`,
/// comma-separated, on `metadata.name` and `metadata.namespace` (any other field: the
/// apiserver's 400 `field label not supported`).
pub(crate) fn field_selector(c: &Cursor, w: &Word) -> R<FieldSelector> {
    let mut out = vec![];
    let mut at = 0;
    for term in w.text.split(',') {
        let col = w.col + at + w.quoted as usize;
        let len = term.chars().count().max(1);
        at += term.chars().count() + 1;
        let err = |msg: String| Diagnostic::at(c.line, col, len, msg);
        // `splitTerm` tries `!=`, then `==`, then `=`.
        let (field, equal, value) = if let Some((f, v)) = term.split_once("!=") {
            (f, false, v)
        } else if let Some((f, v)) = term.split_once("==").or_else(|| term.split_once('=')) {
            (f, true, v)
        } else {
            return Err(err(format!(
                "invalid selector: '{}'; can't understand '{term}'",
                w.text
            ))
            .help("write `metadata.name=NAME` or `metadata.namespace!=NAMESPACE`"));
        };
        let field = match field {
            "metadata.name" => SelectorField::Name,
            "metadata.namespace" => SelectorField::Namespace,
            _ => {
                return Err(err(format!("field label not supported: {field}"))
                    .help("every kind supports `metadata.name` and `metadata.namespace`"))
            }
        };
        if value.is_empty() || !value.chars().all(crate::name_rules::is_name_char) {
            return Err(err(format!("`{value}` is not a valid {}", field.as_str()))
                .help("a name is ASCII letters, digits, `-`, `_` and `.`"));
        }
        if out.len() == MAX_REQUIREMENTS {
            return Err(err(format!(
                "a selector has at most {MAX_REQUIREMENTS} requirements"
            )));
        }
        out.push(FieldRequirement {
            field,
            equal,
            value: value.to_string(),
        });
    }
    Ok(FieldSelector(out))
}
