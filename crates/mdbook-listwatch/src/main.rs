//! `mdbook-listwatch`: mdBook runs it as the `listwatch` preprocessor (book.toml's
//! `[preprocessor.listwatch]`). `supports RENDERER` answers whether it runs for that renderer;
//! without arguments it reads `[context, book]` on standard input and writes the book.

use std::io::{Read, Write};
use std::process::ExitCode;

const USAGE: &str = "\
mdbook-listwatch: turns ```listwatch blocks of an mdBook into live listwatch embeds

usage:
  mdbook-listwatch                     the preprocessor: [context, book] JSON on standard input,
                                       the book on standard output (mdBook runs this)
  mdbook-listwatch supports RENDERER   exits 0 if it runs for RENDERER (html only)

book.toml:
  [preprocessor.listwatch]
  playground = \"https://example.org/listwatch/\"
";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.iter().map(String::as_str).collect::<Vec<_>>()[..] {
        [] => preprocess(),
        // Other renderers (epub, markdown, linkcheck) keep the blocks as code: an iframe is HTML.
        ["supports", renderer] => ExitCode::from(if renderer == "html" { 0 } else { 1 }),
        ["-h" | "--help"] => {
            print!("{USAGE}");
            ExitCode::SUCCESS
        }
        ["-V" | "--version"] => {
            println!("mdbook-listwatch {}", env!("CARGO_PKG_VERSION"));
            ExitCode::SUCCESS
        }
        _ => {
            eprint!("{USAGE}");
            ExitCode::from(2)
        }
    }
}

fn preprocess() -> ExitCode {
    let limit = mdbook_listwatch::MAX_INPUT_BYTES;
    let mut input = Vec::new();
    let read = std::io::stdin()
        .lock()
        .take(limit as u64 + 1)
        .read_to_end(&mut input);
    let result = match read {
        Err(e) => Err(vec![format!("error: reading standard input: {e}")]),
        Ok(_) if input.len() > limit => Err(vec![format!(
            "error: mdBook's input is more than {} MiB",
            limit >> 20
        )]),
        Ok(_) => match String::from_utf8(input) {
            Ok(text) => mdbook_listwatch::preprocess(&text),
            Err(_) => Err(vec!["error: mdBook's input is not UTF-8".to_string()]),
        },
    };
    match result {
        Ok((book, warnings)) => {
            for w in warnings {
                eprintln!("{w}");
            }
            let mut out = std::io::stdout().lock();
            if out
                .write_all(book.as_bytes())
                .and_then(|_| out.flush())
                .is_err()
            {
                return ExitCode::FAILURE;
            }
            ExitCode::SUCCESS
        }
        Err(errors) => {
            for e in &errors {
                eprintln!("{}", e.trim_end());
            }
            ExitCode::FAILURE
        }
    }
}
