//! The language's vocabulary and its highlighting: one source for the parser's suggestions, the
//! page's highlighted preview and the editor (which receives these lists when it loads).
//!
//! The statements, controller options, behaviours, actions and counts are the words of the
//! parser's tables (`parse/table.rs`), in their order: a word is in these lists exactly when
//! the parser reads it there. The reconcile language's words are `logic.rs`'s.

pub use crate::logic::{
    CONDITION_WORDS, DESIRED_STATEMENTS, FIELDS, FIELD_PATHS, LOGIC_STATEMENTS, LOGIC_WORDS,
};
pub use crate::parse::table::{entries, Entry, Place};

/// Statements that start a line.
pub const STATEMENTS: &[&str] = crate::parse::table::STATEMENT_WORDS;
/// The reconcile library.
pub const BEHAVIOURS: &[&str] = crate::parse::table::BEHAVIOUR_WORDS;
/// Indented options of a controller.
pub const CONTROLLER_OPTIONS: &[&str] = crate::parse::table::CONTROLLER_OPTION_WORDS;
/// The feature gates `feature GATE on|off` sets (docs/fidelity.md, the table of versions).
pub const FEATURES: &[&str] = crate::parse::table::FEATURES;
/// Timeline actions.
pub const ACTIONS: &[&str] = crate::parse::table::ACTION_WORDS;
/// What a count expectation counts.
pub const COUNTED: &[&str] = crate::parse::table::COUNTED_WORDS;
/// Other words the language gives a meaning to.
pub const WORDS: &[&str] = &[
    "times",
    "from",
    "cache",
    "cluster-scoped",
    "status-subresource",
    "fixed",
    "dynamic",
    "off",
    "on",
    "lag",
    "spec",
    "in",
    "owner",
    "self",
    "none",
    "after",
    "write",
    "writes",
    "restart-after",
    "never",
    "saw",
    "final",
    "exists",
    "absent",
    "esr",
    "by",
    "to",
    "predicate",
    "generation-changed",
    "rv-changed",
    "got",
    "sent",
    "watch",
    "between",
    "and",
    "wait",
    "exact",
    "listed",
    "opened",
    "replaying",
    "items",
    "rv",
    "or",
    "not",
    "selector",
    "field-selector",
    "notin",
    // Versions and their settings.
    "fake",
    "initial-events-end",
    "relist",
    "retry",
    "rewatch",
    "message",
];

/// What a stretch of a line is, for highlighting.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Token {
    Space,
    Comment,
    String,
    Number,
    Operator,
    /// Statements and the language's other words.
    Keyword,
    /// Actions and behaviours.
    Atom,
    /// A capitalised word: a kind.
    Kind,
    Plain,
}

impl Token {
    /// The class both the preview and the editor style.
    pub fn class(self) -> &'static str {
        match self {
            Token::Space | Token::Plain => "",
            Token::Comment => "tok-comment",
            Token::String => "tok-string",
            Token::Number => "tok-number",
            Token::Operator => "tok-operator",
            Token::Keyword => "tok-keyword",
            Token::Atom => "tok-atom",
            Token::Kind => "tok-type",
        }
    }
}

/// Classifies one whole word.
pub fn word(w: &str) -> Token {
    if w.trim_start_matches(['+', '-'])
        .starts_with(|c: char| c.is_ascii_digit())
    {
        Token::Number
    } else if ["==", "!=", "<", "<=", ">", ">=", "="].contains(&w) {
        Token::Operator
    } else if STATEMENTS.contains(&w)
        || WORDS.contains(&w)
        || (LOGIC_WORDS.contains(&w) && !ACTIONS.contains(&w))
    {
        Token::Keyword
    } else if ACTIONS.contains(&w) || BEHAVIOURS.contains(&w) {
        Token::Atom
    } else if w.starts_with(|c: char| c.is_ascii_uppercase()) {
        Token::Kind
    } else {
        Token::Plain
    }
}

/// Splits a line into (start column from 0, text, token), covering every character.
pub fn highlight(line: &str) -> Vec<(usize, String, Token)> {
    let chars: Vec<char> = line.chars().collect();
    let mut out = vec![];
    let mut i = 0;
    while i < chars.len() {
        let start = i;
        let token = if chars[i].is_whitespace() {
            while i < chars.len() && chars[i].is_whitespace() {
                i += 1;
            }
            Token::Space
        } else if chars[i] == '#' {
            i = chars.len();
            Token::Comment
        } else if chars[i] == '"' {
            i += 1;
            while i < chars.len() {
                match chars[i] {
                    '\\' => i += 2,
                    '"' => {
                        i += 1;
                        break;
                    }
                    _ => i += 1,
                }
            }
            i = i.min(chars.len());
            Token::String
        } else {
            while i < chars.len() && !chars[i].is_whitespace() && chars[i] != '#' && chars[i] != '"'
            {
                i += 1;
            }
            word(&chars[start..i].iter().collect::<String>())
        };
        out.push((start, chars[start..i].iter().collect(), token));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn highlighting_covers_the_line_and_names_what_it_sees() {
        let line = "at 2050ms status Pod a 1 # note";
        let toks = highlight(line);
        assert_eq!(toks.iter().map(|t| t.1.as_str()).collect::<String>(), line);
        let kinds: Vec<Token> = toks
            .iter()
            .filter(|t| t.2 != Token::Space)
            .map(|t| t.2)
            .collect();
        let want = [
            Token::Keyword,
            Token::Number,
            Token::Atom,
            Token::Kind,
            Token::Plain,
            Token::Number,
            Token::Comment,
        ];
        assert_eq!(kinds, want);
        assert_eq!(highlight("say \"a \\\" b\"")[2].2, Token::String);
        assert_eq!(word("stale-delete"), Token::Atom);
    }
}
