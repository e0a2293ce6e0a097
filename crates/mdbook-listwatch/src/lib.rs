//! mdbook-listwatch: an mdBook preprocessor. Every ```` ```listwatch ```` block of a book becomes
//! a live embed of the listwatch playground (an iframe with the block's share link) and a static
//! fallback (the script and what its run did, computed when the book is built).
//!
//! It speaks mdBook's preprocessor protocol itself: `mdbook-listwatch supports RENDERER` exits 0
//! for `html` only (other renderers keep the block as code), and `mdbook-listwatch` reads
//! `[context, book]` as JSON on standard input and writes the book back. The JSON is read as
//! plain values and written back with only chapters' `content` changed, so every field mdBook
//! adds (0.4's `sections`, 0.5's `items`, whatever comes next) survives.
//!
//! Every block is parsed and run with listwatch-script: a broken block fails the build, named by
//! its chapter's file and its line and column there.

pub mod fence;
pub mod html;
pub mod options;

use listwatch_core::analysis::{Analysis, MarkerKind};
use listwatch_core::{Stop, TimeMs};
use listwatch_script::Diagnostic;
use serde_json::{Map, Value};

/// Standard input longer than this is refused (a book, not a disk image).
pub const MAX_INPUT_BYTES: usize = 256 * 1024 * 1024;
/// A book with more blocks than this is refused.
pub const MAX_BLOCKS: usize = 10_000;
/// At most this many broken blocks are reported; the rest are counted.
pub const MAX_REPORTED: usize = 20;
/// Playground addresses longer than this are refused.
const MAX_PLAYGROUND_CHARS: usize = 2048;

/// What a run did, for the fallback: computed where the run is, since a `Sim` stays on its
/// thread.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunFacts {
    /// The script's first comment line.
    pub title: String,
    pub end_ms: TimeMs,
    pub events: usize,
    pub at_cap: bool,
    pub gone: usize,
    pub relists: usize,
    pub reconciles: usize,
    pub expectations: Vec<ExpectationFact>,
    pub esr_holds: bool,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExpectationFact {
    /// Its line in the script.
    pub line: usize,
    pub text: String,
    pub pass: bool,
    pub found: String,
}

/// Parses and runs a script (as the playground does) and reads off what the fallback shows.
pub fn run_facts(script: &str) -> Result<RunFacts, Vec<Diagnostic>> {
    let scenario = listwatch_script::parse(script)?;
    let report = listwatch_script::run_scenario(&scenario)?;
    let sim = &report.sim;
    let analysis = Analysis::of(sim);
    let esr = listwatch_core::verdict::esr_verdict(sim, analysis.esr);
    Ok(RunFacts {
        title: scenario.title.clone(),
        end_ms: sim.now_ms(),
        events: sim.trace().len(),
        at_cap: matches!(sim.stopped(), Some(Stop::EventCap | Stop::ReadCap)),
        gone: analysis.events(MarkerKind::Gone).len(),
        relists: analysis.events(MarkerKind::Relist).len(),
        reconciles: analysis.events(MarkerKind::Reconcile).len(),
        expectations: report
            .outcomes
            .iter()
            .map(|(x, o)| ExpectationFact {
                line: x.line,
                text: x.text.clone(),
                pass: o.pass,
                found: o.found.clone(),
            })
            .collect(),
        esr_holds: esr.pass,
    })
}

/// Runs every distinct script once, on as many threads as the machine has (at most 8): each run
/// is bounded by its event cap, so a book of many blocks takes the time of its longest runs
/// shared among the cores.
pub fn run_all(scripts: &[&str]) -> Vec<Result<RunFacts, Vec<Diagnostic>>> {
    let mut distinct: Vec<&str> = scripts.to_vec();
    distinct.sort_unstable();
    distinct.dedup();
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .clamp(1, 8)
        .min(distinct.len().max(1));
    let next = std::sync::atomic::AtomicUsize::new(0);
    let results = std::sync::Mutex::new(vec![None; distinct.len()]);
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(script) = distinct.get(i) else { break };
                let facts = run_facts(script);
                results.lock().unwrap_or_else(|e| e.into_inner())[i] = Some(facts);
            });
        }
    });
    let results = results.into_inner().unwrap_or_else(|e| e.into_inner());
    scripts
        .iter()
        .map(|script| {
            let i = distinct.binary_search(script).expect("every script is run");
            results[i].clone().expect("every script is run")
        })
        .collect()
}

/// The book's settings, from `[preprocessor.listwatch]` in book.toml.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Settings {
    /// The playground's address: embeds load `{playground}index.html?embed`.
    pub playground: String,
    /// The book's source folder (book.toml's `book.src`), to name chapters' files.
    pub src: String,
}

const PLAYGROUND_EXAMPLE: &str =
    "[preprocessor.listwatch]\nplayground = \"https://example.org/listwatch/\"";

pub fn settings(context: &Value) -> Result<Settings, String> {
    let config = &context["config"];
    let playground = match &config["preprocessor"]["listwatch"]["playground"] {
        Value::String(s) => s.trim().to_string(),
        Value::Null => {
            return Err(format!(
                "book.toml sets no `playground` for the listwatch preprocessor: add the address of \
                 the listwatch playground the embeds load:\n\n{PLAYGROUND_EXAMPLE}"
            ))
        }
        other => {
            return Err(format!(
                "book.toml's `playground` for the listwatch preprocessor is {other}, not an \
                 address in quotes:\n\n{PLAYGROUND_EXAMPLE}"
            ))
        }
    };
    let is_address = ["https://", "http://", "/", "./", "../"]
        .iter()
        .any(|p| playground.starts_with(p));
    let bad_char = playground
        .chars()
        .find(|c| c.is_whitespace() || c.is_control() || matches!(c, '#' | '?' | '"' | '<' | '>'));
    if !is_address || bad_char.is_some() || playground.chars().count() > MAX_PLAYGROUND_CHARS {
        let why = match bad_char {
            Some(c) => format!("it contains {c:?}"),
            None if !is_address => "it is neither an http(s) address nor a path".to_string(),
            None => format!("it is longer than {MAX_PLAYGROUND_CHARS} characters"),
        };
        return Err(format!(
            "book.toml's `playground` for the listwatch preprocessor, {playground:?}, is not the \
             playground's address ({why}):\n\n{PLAYGROUND_EXAMPLE}"
        ));
    }
    let src = config["book"]["src"].as_str().unwrap_or("src").to_string();
    Ok(Settings { playground, src })
}

/// A chapter to process: its file, as the author knows it, and its Markdown.
#[derive(Clone, Debug)]
pub struct Chapter {
    pub file: String,
    pub content: String,
}

/// A block of a chapter with its options read.
struct Found {
    chapter: usize,
    block: fence::Block,
    options: options::Options,
}

/// Renders a diagnostic located in a chapter, rustc-style, with the chapter's line under it.
fn located(d: &Diagnostic, chapter: &Chapter) -> String {
    listwatch_script::render(d, &chapter.file, &chapter.content)
}

/// A script's diagnostic, moved from the script's lines to the chapter's.
fn in_chapter(d: &Diagnostic, block: &fence::Block) -> Diagnostic {
    let (line, col) = match block.origins.get(d.line.saturating_sub(1)) {
        Some(&(line, before)) => (line, before + d.col),
        // An empty block: its fence.
        None => (block.line, block.options_col),
    };
    Diagnostic {
        line,
        col,
        ..d.clone()
    }
}

/// The output of a whole book: the new chapters, and warnings (failing expectations).
#[derive(Debug)]
pub struct Processed {
    pub contents: Vec<String>,
    pub warnings: Vec<String>,
}

/// Replaces every block of every chapter; or every broken block's located error (at most
/// `MAX_REPORTED`, then a count).
pub fn process(settings: &Settings, chapters: &[Chapter]) -> Result<Processed, Vec<String>> {
    let mut errors = vec![];
    // Blocks with errors, which may have several each.
    let mut broken = 0;
    let mut found = vec![];
    for (c, chapter) in chapters.iter().enumerate() {
        for block in fence::find(&chapter.content) {
            match options::parse(&block.options) {
                Ok(options) => found.push(Found {
                    chapter: c,
                    block,
                    options,
                }),
                Err(e) => {
                    let mut d =
                        Diagnostic::at(block.line, block.options_col + e.offset, e.len, e.message);
                    d.help = e.help;
                    errors.push(located(&d, chapter));
                    broken += 1;
                }
            }
        }
    }
    if found.len() > MAX_BLOCKS {
        return Err(vec![format!(
            "error: the book has {} listwatch blocks, more than the limit of {MAX_BLOCKS}",
            found.len()
        )]);
    }
    let scripts: Vec<&str> = found.iter().map(|f| f.block.script.as_str()).collect();
    let runs = run_all(&scripts);
    let mut warnings = vec![];
    let mut html: Vec<Option<String>> = vec![];
    let mut last_chapter = None;
    for (f, run) in found.iter().zip(runs) {
        let chapter = &chapters[f.chapter];
        let facts = match run {
            Ok(facts) => facts,
            Err(diags) => {
                for d in &diags {
                    errors.push(located(&in_chapter(d, &f.block), chapter));
                }
                broken += 1;
                html.push(None);
                continue;
            }
        };
        if let Some(at) = f.options.at {
            if TimeMs::ZERO + at > facts.end_ms {
                let (offset, len) = f.options.at_span;
                let d = Diagnostic::at(
                    f.block.line,
                    f.block.options_col + offset,
                    len,
                    format!("at={at} is after the end of the run ({})", facts.end_ms),
                );
                errors.push(located(&d, chapter));
                broken += 1;
                html.push(None);
                continue;
            }
        }
        for x in facts.expectations.iter().filter(|x| !x.pass) {
            let line = f
                .block
                .origins
                .get(x.line.saturating_sub(1))
                .map_or(f.block.line, |o| o.0);
            warnings.push(format!(
                "warning: {}:{line}: this listwatch expectation fails: {} (found {})",
                chapter.file, x.text, x.found
            ));
        }
        let first = last_chapter != Some(f.chapter);
        last_chapter = Some(f.chapter);
        html.push(Some(html::block(
            &settings.playground,
            &f.options,
            &f.block.script,
            &facts,
            first,
        )));
    }
    if !errors.is_empty() {
        let n = errors.len();
        errors.truncate(MAX_REPORTED);
        if n > MAX_REPORTED {
            errors.push(format!("... and {} more errors", n - MAX_REPORTED));
        }
        errors.push(format!(
            "mdbook-listwatch: {} broken (above); the book was not built",
            if broken == 1 {
                "1 listwatch block is".to_string()
            } else {
                format!("{broken} listwatch blocks are")
            }
        ));
        return Err(errors);
    }
    let mut contents: Vec<String> = chapters.iter().map(|c| c.content.clone()).collect();
    // Each chapter rewritten from its last block to its first, so earlier ranges stay valid.
    for (f, html) in found.iter().zip(html).rev() {
        let html = html.expect("no errors: every block has its HTML");
        let content = &mut contents[f.chapter];
        let separator = f.block.separator.as_deref().unwrap_or("");
        content.replace_range(f.block.range.clone(), &(html + separator));
    }
    Ok(Processed { contents, warnings })
}

/// The book's items: `items` (mdBook 0.5) or `sections` (0.4).
fn items_mut(book: &mut Value) -> Result<&mut Vec<Value>, String> {
    let Value::Object(book) = book else {
        return Err("the book mdBook sent is not a JSON object".into());
    };
    let key = if book.contains_key("items") {
        "items"
    } else {
        "sections"
    };
    match book.get_mut(key) {
        Some(Value::Array(items)) => Ok(items),
        _ => {
            Err("the book mdBook sent has no `items` (or `sections`) list: is this mdBook?".into())
        }
    }
}

/// Calls `f` with every chapter that has a file (drafts have none), depth first, in the book's
/// order: a chapter, then its `sub_items`.
fn for_each_chapter(items: &mut [Value], f: &mut dyn FnMut(&mut Map<String, Value>)) {
    for item in items {
        let Some(Value::Object(chapter)) = item.get_mut("Chapter") else {
            continue; // "Separator", {"PartTitle": "..."}
        };
        if !chapter.get("path").is_none_or(Value::is_null) {
            f(chapter);
        }
        if let Some(Value::Array(sub)) = chapter.get_mut("sub_items") {
            for_each_chapter(sub, f);
        }
    }
}

/// A chapter's file as the author knows it: the book's source folder and the chapter's path.
fn chapter_file(settings: &Settings, chapter: &Map<String, Value>) -> String {
    let path = [&chapter["source_path"], &chapter["path"]]
        .into_iter()
        .find_map(Value::as_str)
        .unwrap_or("?");
    format!("{}/{}", settings.src.trim_end_matches('/'), path).replace('\\', "/")
}

/// The preprocessor: `[context, book]` in, the book out; or the errors to show.
pub fn preprocess(input: &str) -> Result<(String, Vec<String>), Vec<String>> {
    let one = |e: String| vec![format!("error: {e}")];
    let value: Value =
        serde_json::from_str(input).map_err(|e| one(format!("mdBook's input is not JSON: {e}")))?;
    let Value::Array(mut pair) = value else {
        return Err(one("mdBook's input is not a [context, book] pair".into()));
    };
    if pair.len() != 2 {
        return Err(one("mdBook's input is not a [context, book] pair".into()));
    }
    let mut book = pair.pop().expect("two values");
    let context = pair.pop().expect("two values");
    let settings = settings(&context).map_err(one)?;
    let items = items_mut(&mut book).map_err(one)?;
    let mut chapters = vec![];
    for_each_chapter(items, &mut |c| {
        chapters.push(Chapter {
            file: chapter_file(&settings, c),
            content: c["content"].as_str().unwrap_or("").to_string(),
        })
    });
    let processed = process(&settings, &chapters)?;
    let mut contents = processed.contents.into_iter();
    for_each_chapter(items, &mut |c| {
        if let Some(content) = contents.next() {
            c.insert("content".into(), Value::String(content));
        }
    });
    let out = serde_json::to_string(&book).map_err(|e| one(format!("writing the book: {e}")))?;
    Ok((out, processed.warnings))
}
