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
    let text = crate::lexer::lines(crate::lexer::strip_bom(src))
        .nth(d.line.saturating_sub(1))
        .unwrap_or("");
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

/// Words longer than this (in characters) get no suggestion, and candidates longer than this are
/// not compared: a suggestion costs at most this many rows of a banded edit distance.
pub const MAX_SUGGEST_CHARS: usize = 64;
/// At most this many candidates are compared (a burst may create 100,000 object names).
pub const MAX_SUGGEST_CANDIDATES: usize = 10_000;
/// At most this many cells of edit distance per suggestion: past it, the best so far is kept.
pub const MAX_SUGGEST_CELLS: usize = 250_000;

/// The nearest candidate within a small edit distance: "did you mean ...?".
///
/// The work is bounded whatever the input: long words get no suggestion, candidates whose length
/// differs by more than the allowed distance are skipped before any comparison, and the edit
/// distance is computed in a band of that width, stopping as soon as every cell of a row exceeds
/// it; past `MAX_SUGGEST_CELLS` cells in all the best so far is the answer. The result is the
/// first candidate at the smallest distance within
/// `max(len(candidate) / 3, 2)`.
pub fn nearest<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    if word.len() > 4 * MAX_SUGGEST_CHARS || word.chars().count() > MAX_SUGGEST_CHARS {
        return None;
    }
    // ASCII case only: the language's words and names are ASCII, and Unicode's case tables would
    // add 11 KB (gzipped) to the page's first load.
    let w: Vec<char> = word.to_ascii_lowercase().chars().collect();
    let mut best: Option<(usize, &'a str)> = None;
    let mut cells = 0;
    for c in candidates.into_iter().take(MAX_SUGGEST_CANDIDATES) {
        if cells > MAX_SUGGEST_CELLS {
            break;
        }
        if c.len() > 4 * MAX_SUGGEST_CHARS {
            continue;
        }
        let mut limit = (c.len() / 3).max(2);
        if let Some((d, _)) = best {
            // Only a strictly nearer candidate can replace the first one found.
            match d.checked_sub(1) {
                Some(l) => limit = limit.min(l),
                None => break,
            }
        }
        let n = c.chars().count();
        if n > MAX_SUGGEST_CHARS || n.abs_diff(w.len()) > limit {
            continue;
        }
        let cl: Vec<char> = c.to_ascii_lowercase().chars().collect();
        cells += w.len() * (2 * limit + 1);
        if let Some(d) = levenshtein_within(&w, &cl, limit) {
            best = Some((d, c));
        }
    }
    best.map(|(_, c)| c)
}

/// The edit distance between `a` and `b` if it is at most `k`: only the cells within `k` of the
/// diagonal are computed, and a row whose every cell exceeds `k` ends the search.
fn levenshtein_within(a: &[char], b: &[char], k: usize) -> Option<usize> {
    if a.len().abs_diff(b.len()) > k {
        return None;
    }
    let inf = k + 1;
    let mut prev: Vec<usize> = (0..=b.len()).map(|j| j.min(inf)).collect();
    let mut cur = vec![inf; b.len() + 1];
    for i in 1..=a.len() {
        let lo = i.saturating_sub(k).max(1);
        let hi = (i + k).min(b.len());
        cur[0] = i.min(inf);
        cur[lo - 1] = if lo == 1 { cur[0] } else { inf };
        let mut row_min = cur[lo - 1];
        for j in lo..=hi {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let v = (prev[j - 1] + cost)
                .min(prev[j] + 1)
                .min(cur[j - 1] + 1)
                .min(inf);
            cur[j] = v;
            row_min = row_min.min(v);
        }
        if hi < b.len() {
            cur[hi + 1] = inf;
        }
        if row_min > k {
            return None;
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    let d = prev[b.len()];
    (d <= k).then_some(d)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn full(a: &str, b: &str) -> usize {
        let b: Vec<char> = b.chars().collect();
        let mut prev: Vec<usize> = (0..=b.len()).collect();
        for (i, ca) in a.chars().enumerate() {
            let mut cur = vec![i + 1];
            for (j, cb) in b.iter().enumerate() {
                let cost = usize::from(ca != *cb);
                cur.push((prev[j] + cost).min(prev[j + 1] + 1).min(cur[j] + 1));
            }
            prev = cur;
        }
        prev[b.len()]
    }

    #[test]
    fn the_banded_distance_agrees_with_the_full_one_within_its_band() {
        let words = [
            "",
            "a",
            "ab",
            "kind",
            "kidn",
            "create",
            "crate",
            "Deployment",
            "Deploymnet",
            "reconciles",
            "relists",
            "xyzzy",
            "aaaaaaa",
            "aaaabaaa",
            "éclair",
            "eclair",
        ];
        for a in words {
            for b in words {
                let (ca, cb): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
                let d = full(a, b);
                for k in 0..8 {
                    let want = (d <= k).then_some(d);
                    assert_eq!(levenshtein_within(&ca, &cb, k), want, "{a} {b} {k}");
                }
            }
        }
    }

    #[test]
    fn suggestions_for_crafted_long_words_take_bounded_time() {
        // 1000 candidates of 1000 characters against a 60,000-character word: a full edit distance
        // against each would fill 60 billion cells.
        let cands: Vec<String> = (0..1000)
            .map(|i| format!("{i}{}", "a".repeat(1000)))
            .collect();
        let long = "a".repeat(60_000);
        let near = "b".repeat(64);
        let started = std::time::Instant::now();
        for _ in 0..50 {
            assert_eq!(nearest(&long, cands.iter().map(String::as_str)), None);
            assert_eq!(nearest(&near, cands.iter().map(String::as_str)), None);
        }
        assert!(
            started.elapsed().as_secs_f64() < 8.0,
            "{:?}",
            started.elapsed()
        );
        // Same-length candidates far apart are left after a few rows.
        let same: Vec<String> = (0..20_000).map(|i| format!("{:064}", i)).collect();
        let started = std::time::Instant::now();
        assert_eq!(
            nearest(&"z".repeat(64), same.iter().map(String::as_str)),
            None
        );
        assert!(
            started.elapsed().as_secs_f64() < 4.0,
            "{:?}",
            started.elapsed()
        );
        // Near misses of the same length cannot leave early: the cell budget bounds them.
        let close: Vec<String> = (0..10_000).map(|i| format!("{:0>63}", i)).collect();
        let word = format!("x{:0>62}", 1);
        let started = std::time::Instant::now();
        for _ in 0..50 {
            nearest(&word, close.iter().map(String::as_str));
        }
        assert!(
            started.elapsed().as_secs_f64() < 12.0,
            "{:?}",
            started.elapsed()
        );
        assert_eq!(nearest("kidn", ["kind", "kidney"]), Some("kind"));
        assert_eq!(
            nearest("Deploymnet", ["Pod", "Deployment"]),
            Some("Deployment")
        );
    }
}
