//! Diagnostics that point at a line and column, rendered like rustc's.

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    /// 1-based.
    pub line: usize,
    /// 1-based, in characters.
    pub col: usize,
    /// Length of the underlined span, in characters (at least 1).
    pub len: usize,
    pub message: String,
    pub help: Option<String>,
}

impl Diagnostic {
    pub fn at(line: usize, col: usize, len: usize, message: impl Into<String>) -> Self {
        Diagnostic {
            line,
            col,
            len: len.max(1),
            message: message.into(),
            help: None,
        }
    }
    pub fn help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }
}

/// `error: message` / `--> file:line:col` / the line / a caret under the span / `help: ...`.
pub fn render(d: &Diagnostic, file: &str, src: &str) -> String {
    let text = src.lines().nth(d.line.saturating_sub(1)).unwrap_or("");
    let gutter = d.line.to_string().len();
    let pad = " ".repeat(gutter);
    let mut s = format!(
        "error: {}\n{pad}--> {file}:{}:{}\n{pad} |\n",
        d.message, d.line, d.col
    );
    s += &format!("{} | {}\n", d.line, text);
    s += &format!(
        "{pad} | {}{}\n",
        " ".repeat(d.col.saturating_sub(1)),
        "^".repeat(d.len)
    );
    if let Some(h) = &d.help {
        s += &format!("{pad} = help: {h}\n");
    }
    s
}

/// The nearest candidate within a small edit distance: "did you mean ...?".
pub fn nearest<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let w = word.to_lowercase();
    candidates
        .into_iter()
        .map(|c| (levenshtein(&w, &c.to_lowercase()), c))
        .filter(|(d, c)| *d <= (c.len() / 3).max(2))
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

fn levenshtein(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            let cost = if ca == *cb { 0 } else { 1 };
            cur.push((prev[j] + cost).min(prev[j + 1] + 1).min(cur[j] + 1));
        }
        prev = cur;
    }
    prev[b.len()]
}
