//! The language's tables: for every place a word can stand (a statement, a controller's option,
//! its behaviour, a timeline action, an expectation), the rows that give it a meaning, each with
//! how it is written, an example and the function that reads it. The parser finds a line's
//! reader here and nowhere else, and `syntax` (the editor's and the preview's vocabulary, the
//! "did you mean" candidates) lists the words of these same rows, so a word cannot be parsed
//! without being in the vocabulary, nor be in it without being parsed.
//!
//! Each statement family keeps its rows in its own file; a table below lists the families'
//! rows in the order suggestions are tried and listed in ("expected one of: ..."), which is the
//! order a script is written in: seed and kinds, apiservers, settings, controllers, the
//! timeline, the run, expectations.
//!
//! The examples are written for the world of `tests/vocabulary.rs`, which parses each one:
//! kinds `Pod` and `Db`, apiservers `a` and `b`, controllers `ctl` (a built-in behaviour) and
//! `op` (its own logic).

use listwatch_core::verdict::Expect;
use listwatch_core::{Behaviour, Input, KindId};

use super::blocks::{self, Block};
use super::{apiservers, bursts, cluster, controllers, counts, expect, faults, narration};
use super::{options, probes, run, timeline, versions, writes, Builder};
use crate::cursor::{Cursor, R};
use crate::lexer::Word;

/// One meaning of a word where a table is read.
pub(super) struct Row<P> {
    pub(super) word: &'static str,
    /// How the statement is written (`kind NAME [cache fixed N | ...]`): what the editor's help
    /// says; the literal words in it are in the vocabulary.
    pub(super) usage: &'static str,
    /// A whole line that uses it.
    pub(super) example: &'static str,
    pub(super) parse: P,
}

/// A statement that starts a line: its reader gets the cursor after the word, and the `Head`.
pub(super) struct Statement {
    pub(super) read: fn(&mut Builder, &mut Cursor, Head) -> R<()>,
    /// How the lines indented under it are read (a controller's options and blocks), if they
    /// belong to it.
    pub(super) indented: Option<IndentedFn>,
}

/// A line indented under a statement: the cursor is at its first word, the `usize` is its
/// indentation; a block it opens gathers the lines indented further.
pub(super) type IndentedFn = fn(&mut Builder, &mut Cursor, usize) -> R<Option<Block>>;

/// The start of a statement's line.
#[derive(Clone, Copy)]
pub(super) struct Head<'a> {
    /// Its first word.
    pub(super) word: &'a Word,
    /// The line as written, without the indentation (an expectation keeps it for its report).
    pub(super) text: &'a str,
}

/// An indented line under a controller, for controller `usize`.
pub(super) enum ControllerOption {
    /// A setting; the line ends after it.
    Setting(fn(&mut Builder, &mut Cursor, &Word, usize) -> R<()>),
    /// The head of a block whose lines are indented further (`logic`, `desired`); the second
    /// `usize` is the head's indentation.
    Block(fn(&mut Builder, &mut Cursor, &Word, usize, usize) -> R<Block>),
}

/// A built-in behaviour of a controller whose primary kind is the `KindId`.
pub(super) type BehaviourFn = fn(&Builder, &mut Cursor, KindId, &Word) -> R<Behaviour>;
/// A timeline action; the word is the action's.
pub(super) type ActionFn = fn(&Builder, &mut Cursor, &Word) -> R<Input>;
/// What an `expect` line expects; the word is the one after `expect`.
pub(super) type ExpectationFn = fn(&Builder, &mut Cursor, &Word) -> R<Expect>;

pub(super) const STATEMENTS: &[&[Row<Statement>]] = &[
    cluster::SEED_AND_KINDS,
    apiservers::STATEMENTS,
    cluster::SETTINGS,
    versions::STATEMENTS,
    controllers::STATEMENTS,
    timeline::STATEMENTS,
    bursts::STATEMENTS,
    run::STATEMENTS,
    expect::STATEMENTS,
];
pub(super) const CONTROLLER_OPTIONS: &[&[Row<ControllerOption>]] =
    &[options::OPTIONS, blocks::OPTIONS];
pub(super) const BEHAVIOURS: &[&[Row<BehaviourFn>]] = &[controllers::BEHAVIOURS];
pub(super) const ACTIONS: &[&[Row<ActionFn>]] = &[
    writes::ACTIONS,
    faults::LINK,
    probes::ACTIONS,
    faults::APISERVER,
    faults::PROCESS,
    narration::ACTIONS,
];
/// Besides these, `expect CONTROLLER ...` (`expect::controller_expectation`).
pub(super) const EXPECTATIONS: &[&[Row<ExpectationFn>]] = &[
    expect::EXPECTATIONS,
    probes::EXPECTATIONS,
    counts::EXPECTATIONS,
];

/// A row of a table of statements.
pub(super) const fn statement(
    word: &'static str,
    usage: &'static str,
    example: &'static str,
    read: fn(&mut Builder, &mut Cursor, Head) -> R<()>,
) -> Row<Statement> {
    Row {
        word,
        usage,
        example,
        parse: Statement {
            read,
            indented: None,
        },
    }
}

/// A row of any other table.
pub(super) const fn row<P>(
    word: &'static str,
    usage: &'static str,
    example: &'static str,
    parse: P,
) -> Row<P> {
    Row {
        word,
        usage,
        example,
        parse,
    }
}

/// The words of each table, in its order.
pub(crate) const STATEMENT_WORDS: &[&str] = &words::<_, { count(STATEMENTS) }>(STATEMENTS);
pub(crate) const CONTROLLER_OPTION_WORDS: &[&str] =
    &words::<_, { count(CONTROLLER_OPTIONS) }>(CONTROLLER_OPTIONS);
pub(crate) const BEHAVIOUR_WORDS: &[&str] = &words::<_, { count(BEHAVIOURS) }>(BEHAVIOURS);
pub(crate) const ACTION_WORDS: &[&str] = &words::<_, { count(ACTIONS) }>(ACTIONS);
pub(crate) const EXPECTATION_WORDS: &[&str] = &words::<_, { count(EXPECTATIONS) }>(EXPECTATIONS);
/// What a count expectation counts.
pub(crate) const COUNTED_WORDS: &[&str] =
    &words::<_, { count(&[counts::EXPECTATIONS]) }>(&[counts::EXPECTATIONS]);

pub(crate) use super::versions::FEATURES;

/// The row of `tables` for `word`.
pub(super) fn find<P>(tables: &'static [&'static [Row<P>]], word: &str) -> Option<&'static Row<P>> {
    tables
        .iter()
        .flat_map(|t| t.iter())
        .find(|r| r.word == word)
}

const fn count<P>(tables: &[&[Row<P>]]) -> usize {
    let (mut n, mut i) = (0, 0);
    while i < tables.len() {
        n += tables[i].len();
        i += 1;
    }
    n
}

const fn words<P, const N: usize>(tables: &[&[Row<P>]]) -> [&'static str; N] {
    let mut out = [""; N];
    let (mut k, mut i) = (0, 0);
    while i < tables.len() {
        let mut j = 0;
        while j < tables[i].len() {
            out[k] = tables[i][j].word;
            k += 1;
            j += 1;
        }
        i += 1;
    }
    out
}

/// Where a word of the vocabulary stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Place {
    /// At the start of a line.
    Statement,
    /// At the start of a line indented under a `controller` line.
    ControllerOption,
    /// After `controller NAME for KIND`.
    Behaviour,
    /// After `at TIME` or `every D N times [from TIME]`.
    Action,
    /// After `expect`.
    Expectation,
}

/// One row of the language's tables, as the editor and the tests see it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Entry {
    pub place: Place,
    pub word: &'static str,
    pub usage: &'static str,
    pub example: &'static str,
}

/// Every row of every table, table by table in their order.
pub fn entries() -> Vec<Entry> {
    fn of<P>(place: Place, tables: &'static [&'static [Row<P>]]) -> impl Iterator<Item = Entry> {
        tables.iter().flat_map(|t| t.iter()).map(move |r| Entry {
            place,
            word: r.word,
            usage: r.usage,
            example: r.example,
        })
    }
    of(Place::Statement, STATEMENTS)
        .chain(of(Place::ControllerOption, CONTROLLER_OPTIONS))
        .chain(of(Place::Behaviour, BEHAVIOURS))
        .chain(of(Place::Action, ACTIONS))
        .chain(of(Place::Expectation, EXPECTATIONS))
        .collect()
}
