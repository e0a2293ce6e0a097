//! The preprocessor as mdBook runs it: the binary, `supports RENDERER`, then `[context, book]` on
//! standard input and the book on standard output, on the book in `tests/fixtures/book/`.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::{json, Value};

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/book")
}

fn chapter_md(path: &str) -> String {
    std::fs::read_to_string(fixture().join("src").join(path)).unwrap()
}

/// The fixture's own `playground = "..."`, so the test and book.toml cannot drift apart.
fn playground() -> String {
    let toml = std::fs::read_to_string(fixture().join("book.toml")).unwrap();
    let line = toml
        .lines()
        .find(|l| l.starts_with("playground = "))
        .expect("book.toml sets the playground");
    line["playground = ".len()..].trim_matches('"').to_string()
}

/// Runs the binary with `args` and `input` on standard input: (exit code, stdout, stderr).
fn run(args: &[&str], input: &str) -> (i32, String, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_mdbook-listwatch"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let input = input.to_string();
    // Written from a thread: a large book would fill the pipe while the binary writes its output.
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(input.as_bytes());
    });
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

fn chapter(name: &str, path: &str, content: &str, sub_items: Vec<Value>) -> Value {
    json!({"Chapter": {
        "name": name,
        "content": content,
        "number": [1],
        "sub_items": sub_items,
        "path": path,
        "source_path": path,
        "parent_names": [],
    }})
}

fn context(playground: Option<&str>) -> Value {
    let mut preprocessor = json!({"listwatch": {}});
    if let Some(p) = playground {
        preprocessor["listwatch"]["playground"] = json!(p);
    }
    json!({
        "root": fixture(),
        "config": {
            "book": {"title": "listwatch in a book", "authors": ["listwatch"], "src": "src", "language": "en"},
            "preprocessor": preprocessor,
        },
        "renderer": "html",
        "mdbook_version": "0.5.4",
    })
}

/// The fixture book as mdBook 0.5 sends it (`items`); a separator, a part title and a draft
/// chapter too, which must come back unchanged.
fn fixture_book() -> Value {
    json!({"items": [
        chapter("The 410 story", "overflow.md", &chapter_md("overflow.md"), vec![
            chapter("Inside lists and quotes", "nested/containers.md", &chapter_md("nested/containers.md"), vec![]),
        ]),
        "Separator",
        {"PartTitle": "Later"},
        {"Chapter": {"name": "Draft", "content": "", "number": null, "sub_items": [], "path": null, "source_path": null, "parent_names": []}},
    ]})
}

fn preprocess(context: &Value, book: &Value) -> (i32, Value, String) {
    let (code, out, err) = run(&[], &json!([context, book]).to_string());
    let book = if code == 0 {
        serde_json::from_str(&out).unwrap()
    } else {
        assert_eq!(out, "", "a failed run writes no book");
        Value::Null
    };
    (code, book, err)
}

fn unescape(s: &str) -> String {
    s.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&#10;", "\n")
        .replace("&#13;", "\r")
        .replace("&amp;", "&")
}

/// Every `attr="..."` value that follows `after`, unescaped.
fn attributes(html: &str, after: &str, attr: &str) -> Vec<String> {
    html.match_indices(after)
        .map(|(i, _)| {
            let rest = &html[i..];
            let start = rest.find(&format!("{attr}=\"")).unwrap() + attr.len() + 2;
            let end = start + rest[start..].find('"').unwrap();
            unescape(&rest[start..end])
        })
        .collect()
}

/// The script of the fence opened by `open` in `md`: its lines up to `close`, with `prefix`
/// taken off each.
fn script_in(md: &str, open: &str, close: &str, prefix: &str) -> String {
    let start = md.find(open).unwrap();
    let body = &md[start..];
    let body = &body[body.find('\n').unwrap() + 1..];
    let end = body.find(close).unwrap();
    body[..end]
        .lines()
        .map(|l| l.strip_prefix(prefix).unwrap_or(l.trim_end()))
        .collect::<Vec<_>>()
        .join("\n")
}

fn markdown_to_html(md: &str) -> String {
    let mut out = String::new();
    pulldown_cmark::html::push_html(&mut out, pulldown_cmark::Parser::new(md));
    out
}

#[test]
fn supports_html_only() {
    assert_eq!(run(&["supports", "html"], "").0, 0);
    for other in ["epub", "markdown", "linkcheck"] {
        assert_eq!(run(&["supports", other], "").0, 1, "{other}");
    }
    assert_eq!(run(&["bogus"], "").0, 2);
}

#[test]
fn the_fixture_book_gets_live_embeds_and_fallbacks() {
    let input = fixture_book();
    let (code, book, err) = preprocess(&context(Some(&playground())), &input);
    assert_eq!(code, 0, "{err}");
    assert_eq!(err, "", "every expectation passes: no warning");

    // Everything but the chapters' content comes back as it was.
    let mut expected = input.clone();
    expected["items"][0]["Chapter"]["content"] = book["items"][0]["Chapter"]["content"].clone();
    expected["items"][0]["Chapter"]["sub_items"][0]["Chapter"]["content"] =
        book["items"][0]["Chapter"]["sub_items"][0]["Chapter"]["content"].clone();
    assert_eq!(book, expected);

    let overflow_md = book["items"][0]["Chapter"]["content"].as_str().unwrap();
    let nested_md = book["items"][0]["Chapter"]["sub_items"][0]["Chapter"]["content"]
        .as_str()
        .unwrap();

    // The first chapter: the iframe's address decodes to the block's script, at its moment.
    let source = chapter_md("overflow.md");
    let script = script_in(&source, "```listwatch", "\n```", "");
    let srcs = attributes(overflow_md, "<iframe", "src");
    assert_eq!(srcs.len(), 1);
    let (page, fragment) = srcs[0].split_once('#').unwrap();
    assert_eq!(
        page,
        format!(
            "{}index.html?embed&panels=timeline,explanation",
            playground()
        )
    );
    let shared = listwatch_script::share::decode(fragment).unwrap();
    assert_eq!(shared.script, script);
    assert_eq!(shared.at_ms, Some(listwatch_core::TimeMs(2200)));
    let titles = attributes(overflow_md, "<iframe", "title");
    assert_eq!(
        titles,
        ["listwatch scenario: Three writes overflow a cache of two"]
    );
    assert!(overflow_md.contains("loading=\"lazy\""));
    // Without JavaScript the iframe is hidden: the rule must beat the iframe's inline
    // `display:block` (seen in Chromium with scripts off), so it is `!important`.
    assert!(overflow_md.contains("style=\"display:block;"));
    assert!(
        overflow_md.contains("<noscript><style>.listwatch-embed{display:none!important}</style>")
    );

    // Its fallback: what the run did (the scenario expects one 410 and one relist), the script.
    let html = markdown_to_html(overflow_md);
    assert!(
        html.contains("1 × 410 Gone, 1 relist, "),
        "the run's summary: {html}"
    );
    assert!(html.contains("Expectations: all 2 pass."));
    assert!(html.contains("<li>PASS line 15: expect gone ctl == 1 (found 1)</li>"));
    let code_blocks = attributes(&html, "<pre><code", "class");
    assert_eq!(code_blocks, ["language-text"]);
    let pre = &html[html.find("<code class=\"language-text\">").unwrap()..];
    let pre = &pre["<code class=\"language-text\">".len()..pre.find("</code>").unwrap()];
    assert_eq!(unescape(pre), script);
    // The script's say text is escaped everywhere: the one script element is the resizer's.
    assert_eq!(html.matches("<script").count(), 1);
    assert!(html.contains("&lt;/iframe&gt;&lt;script&gt;alert(&#39;the say text&#39;)"));
    assert!(!html.contains("alert('the say text')"));
    // And the Markdown after the block is still Markdown.
    assert!(html.contains("<em>this is emphasis</em>"), "{html}");

    // The nested chapter: a block in a list item, one in a quote, indented code left alone.
    let source = chapter_md("nested/containers.md");
    let in_list = script_in(&source, "~~~~listwatch", "\n   ~~~~", "   ");
    let in_quote = script_in(&source, "> ```listwatch", "\n> ```", "> ");
    let srcs = attributes(nested_md, "<iframe", "src");
    let scripts: Vec<String> = srcs
        .iter()
        .map(|s| listwatch_script::share::decode(s).unwrap().script)
        .collect();
    assert_eq!(scripts, [in_list, in_quote]);
    assert!(
        srcs[0].contains("?embed&theme=dark&autoplay#"),
        "{}",
        srcs[0]
    );
    assert!(srcs[1].contains("?embed&panels=editor#"), "{}", srcs[1]);
    let html = markdown_to_html(nested_md);
    assert!(html.contains("height:480px"));
    assert!(html.contains("data-listwatch-height=\"480\""));
    let item = &html[html.find("<li>").unwrap()..html.find("</li>").unwrap()];
    assert!(
        item.contains("<iframe"),
        "the embed stays in its list item: {html}"
    );
    assert!(html.contains("<p>Then read on.</p>"), "{html}");
    let quote = &html[html.find("<blockquote>").unwrap()..html.find("</blockquote>").unwrap()];
    assert!(
        quote.contains("<iframe"),
        "the embed stays in its quote: {html}"
    );
    assert!(quote.contains("<p>And the quote goes on.</p>"), "{html}");
    assert!(html.contains("<pre><code>```listwatch\nindented code, not a block"));
    assert_eq!(html.matches("<script").count(), 1, "one resizer a chapter");
}

#[test]
fn mdbook_0_4_books_come_back_in_their_own_shape() {
    let book = json!({
        "sections": [chapter("One", "one.md", "```listwatch\nkind Pod\nrun 1s\n```\n", vec![])],
        "__non_exhaustive": null,
    });
    let (code, out, err) = preprocess(&context(Some("/listwatch/")), &book);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out["__non_exhaustive"], Value::Null);
    let content = out["sections"][0]["Chapter"]["content"].as_str().unwrap();
    let srcs = attributes(content, "<iframe", "src");
    assert!(
        srcs[0].starts_with("/listwatch/index.html?embed#lw2."),
        "{srcs:?}"
    );
}

/// A book of one chapter holding `md`, preprocessed: (exit code, stderr).
fn broken(md: &str) -> (i32, String) {
    let book = json!({"items": [
        chapter("Fine", "fine.md", "```listwatch\nkind Pod\nrun 1s\n```\n", vec![
            chapter("Broken", "nested/broken.md", md, vec![]),
        ]),
    ]});
    let (code, _, err) = preprocess(&context(Some(&playground())), &book);
    (code, err)
}

#[test]
fn a_broken_script_fails_the_build_at_its_place_in_the_chapter() {
    let md = "# Broken\n\n> Look:\n>\n> ```listwatch\n> kind Pod\n>   kindd Copy\n> ```\n";
    let (code, err) = broken(md);
    assert_eq!(code, 1);
    // Line 7 of the chapter; the word starts after `> ` and two spaces.
    assert!(err.contains("error: unknown statement `kindd`"), "{err}");
    assert!(err.contains("--> src/nested/broken.md:7:5"), "{err}");
    assert!(
        err.contains(">   kindd Copy"),
        "the chapter's line is shown: {err}"
    );
    assert!(err.contains("did you mean `kind`?"), "{err}");
    assert!(
        err.ends_with("1 listwatch block is broken (above); the book was not built\n"),
        "{err}"
    );
}

#[test]
fn option_errors_point_at_the_option() {
    let (code, err) = broken("Text.\n\n```listwatch autoplay colour=dark\nkind Pod\nrun 1s\n```\n");
    assert_eq!(code, 1);
    assert!(err.contains("unknown option `colour`"), "{err}");
    assert!(err.contains("--> src/nested/broken.md:3:23"), "{err}");
    assert!(
        err.contains("expected one of: panels, theme, autoplay, at, height"),
        "{err}"
    );
    // `at` past the run's end: found by the run, pointed at the value.
    let (code, err) = broken("```listwatch at=5s\nkind Pod\nrun 1s\n```\n");
    assert_eq!(code, 1);
    assert!(
        err.contains("at=5s is after the end of the run (1s)"),
        "{err}"
    );
    assert!(err.contains("--> src/nested/broken.md:1:17"), "{err}");
}

#[test]
fn a_block_over_64_kib_gets_the_script_limit() {
    let script = "# a comment line that is long enough to fill the block quickly\n".repeat(1100);
    assert!(script.len() > listwatch_script::MAX_SCRIPT_BYTES);
    let (code, err) = broken(&format!("# Big\n\n```listwatch\n{script}```\n"));
    assert_eq!(code, 1);
    assert!(
        err.contains("more than the limit of 65536 (64 KiB)"),
        "{err}"
    );
    assert!(err.contains("--> src/nested/broken.md:4:1"), "{err}");
}

#[test]
fn a_failing_expectation_warns_with_its_line() {
    let book = json!({"items": [chapter("One", "one.md", "Intro.\n\n```listwatch\nkind Pod\nat 0s create Pod a\nrun 1s\nexpect creates Pod == 3\n```\n", vec![])]});
    let (code, out, err) = preprocess(&context(Some(&playground())), &book);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains(
            "warning: src/one.md:7: this listwatch expectation fails: expect creates Pod == 3"
        ),
        "{err}"
    );
    let content = out["items"][0]["Chapter"]["content"].as_str().unwrap();
    assert!(content.contains("Expectations: 0 of 1 pass."), "{content}");
    assert!(
        content.contains("<li>FAIL line 4: expect creates Pod == 3"),
        "{content}"
    );
}

#[test]
fn the_playground_address_is_required_and_checked() {
    let book = fixture_book();
    let (code, _, err) = preprocess(&context(None), &book);
    assert_eq!(code, 1);
    assert!(err.contains("book.toml sets no `playground`"), "{err}");
    assert!(
        err.contains("[preprocessor.listwatch]\nplayground = \"https://"),
        "{err}"
    );
    assert!(!err.contains("broken"), "not a block's error: {err}");
    for bad in [
        "javascript:alert(1)",
        "https://x.org/\"><script>",
        "https://x.org/#frag",
    ] {
        let (code, _, err) = preprocess(&context(Some(bad)), &book);
        assert_eq!(code, 1, "{bad}");
        assert!(
            err.contains("is not the playground's address"),
            "{bad}: {err}"
        );
    }
}

#[test]
fn not_mdbooks_input_is_refused_in_words() {
    for (input, words) in [
        ("", "is not JSON"),
        ("{}", "not a [context, book] pair"),
        ("[{}, {}, {}]", "not a [context, book] pair"),
    ] {
        let (code, out, err) = run(&[], input);
        assert_eq!((code, out.as_str()), (1, ""), "{input}");
        assert!(err.contains(words), "{input}: {err}");
    }
    let (code, _, err) = run(
        &[],
        &json!([context(Some("/x/")), {"pages": []}]).to_string(),
    );
    assert_eq!(code, 1);
    assert!(err.contains("no `items` (or `sections`)"), "{err}");
}

#[test]
fn many_blocks_run_once_each_and_in_parallel() {
    // 300 blocks, 30 distinct scripts: each distinct script runs once.
    let mut md = String::new();
    for i in 0..300 {
        md += &format!(
            "## {i}\n\n```listwatch\n# Block {}\nkind Pod\nat 0s create Pod a\nat {}s status Pod a 1\nrun 40s\n```\n\n",
            i % 30,
            1 + i % 30
        );
    }
    let book = json!({"items": [chapter("Many", "many.md", &md, vec![])]});
    let started = std::time::Instant::now();
    let (code, out, err) = preprocess(&context(Some(&playground())), &book);
    let took = started.elapsed();
    assert_eq!(code, 0, "{err}");
    let content = out["items"][0]["Chapter"]["content"].as_str().unwrap();
    let srcs = attributes(content, "<iframe", "src");
    assert_eq!(srcs.len(), 300);
    for (i, src) in srcs.iter().enumerate() {
        let script = listwatch_script::share::decode(src).unwrap().script;
        assert!(script.starts_with(&format!("# Block {}\n", i % 30)));
    }
    eprintln!("300 blocks preprocessed in {took:?}");
    assert!(took.as_secs() < 60, "300 small blocks took {took:?}");
}

/// With mdBook on PATH, the fixture book is built for real; otherwise this says so and passes.
#[test]
fn mdbook_builds_the_fixture_book() {
    let found = Command::new("mdbook")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !found {
        eprintln!("note: mdbook is not on PATH: the real build of tests/fixtures/book is skipped");
        return;
    }
    let out_dir =
        std::env::temp_dir().join(format!("mdbook-listwatch-test-{}", std::process::id()));
    let bin_dir = Path::new(env!("CARGO_BIN_EXE_mdbook-listwatch"))
        .parent()
        .unwrap();
    let path = std::env::join_paths(std::iter::once(bin_dir.to_path_buf()).chain(
        std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()),
    ))
    .unwrap();
    let status = Command::new("mdbook")
        .arg("build")
        .arg(fixture())
        .arg("--dest-dir")
        .arg(&out_dir)
        .env("PATH", path)
        .status()
        .unwrap();
    assert!(status.success(), "mdbook build failed");
    let page = std::fs::read_to_string(out_dir.join("overflow.html")).unwrap();
    let srcs = attributes(&page, "<iframe class=\"listwatch-embed\"", "src");
    assert_eq!(srcs.len(), 1, "{page}");
    let script = script_in(&chapter_md("overflow.md"), "```listwatch", "\n```", "");
    assert_eq!(
        listwatch_script::share::decode(&srcs[0]).unwrap().script,
        script
    );
    assert!(page.contains("1 × 410 Gone"));
    // mdBook 0.5 writes the page's HTML anew (`'` for `&#39;` in text): still no markup.
    assert!(page.contains("&lt;/iframe&gt;&lt;script&gt;alert("));
    assert!(!page.contains("<script>alert"));
    assert_eq!(
        page.matches("<script>if(!window.listwatchResize)").count(),
        1
    );
    let nested = std::fs::read_to_string(out_dir.join("nested/containers.html")).unwrap();
    assert_eq!(
        nested.matches("<iframe class=\"listwatch-embed\"").count(),
        2
    );
    let _ = std::fs::remove_dir_all(&out_dir);
}
