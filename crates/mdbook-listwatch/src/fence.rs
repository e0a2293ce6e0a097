//! Finding the ```` ```listwatch ```` blocks of a chapter, as CommonMark reads them.
//!
//! A line-based reading of the block structure that matters for fenced code: block quotes and
//! list items (whose prefixes are stripped from the lines inside them), fenced code blocks of
//! backticks or tildes (closed by a fence of the same character at least as long, or by the end
//! of their container), and indentation of four columns or more, which never opens a fence. Every
//! fence is followed to its end, so a ```` ```listwatch ```` line inside another code block is
//! text, as the reader sees it. HTML blocks are not followed: a fence inside one is taken as a
//! fence (the embed is HTML too, so the page still shows it).

use std::ops::Range;

/// One ```` ```listwatch ```` block of a chapter.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Block {
    /// The opening fence's line, 1-based.
    pub line: usize,
    /// The info string after the word `listwatch`, trimmed: the block's options.
    pub options: String,
    /// The 1-based column (in characters) of the options on the opening line.
    pub options_col: usize,
    /// The script: the block's lines without their containers' prefixes, joined by `\n`.
    pub script: String,
    /// Per line of the script: its line in the chapter (1-based) and how many characters of
    /// that line precede the script's text (containers' prefixes and indentation).
    pub origins: Vec<(usize, usize)>,
    /// The bytes the block takes in the chapter: from the first character of its opening fence
    /// to the end of its last line (its line ending excluded).
    pub range: Range<usize>,
    /// Inserted after `range` when the line after the block is not blank inside the block's
    /// containers (a line ending, then `>` per block quote): an HTML block ends only at a blank
    /// line, and would otherwise swallow that line.
    pub separator: Option<String>,
}

/// A line of the chapter, without its line ending (`\n`, `\r\n` or a lone `\r`, as CommonMark
/// and the script's own lexer read them).
struct Line<'a> {
    text: &'a str,
    start: usize,
    ending: &'a str,
}

fn split_lines(src: &str) -> Vec<Line<'_>> {
    let mut out = vec![];
    let mut start = 0;
    while start < src.len() {
        let rest = &src[start..];
        let (len, ending) = match rest.find(['\n', '\r']) {
            Some(i) if rest[i..].starts_with("\r\n") => (i, "\r\n"),
            Some(i) => (i, &rest[i..i + 1]),
            None => (rest.len(), ""),
        };
        out.push(Line {
            text: &rest[..len],
            start,
            ending,
        });
        start += len + ending.len();
    }
    out
}

/// Where a line is read from: a byte position, its visual column (tabs stop every 4 columns),
/// and the columns of a tab that was only partly consumed (they count as spaces).
#[derive(Clone, Copy)]
struct Cursor<'a> {
    text: &'a str,
    pos: usize,
    col: usize,
    virtual_spaces: usize,
}

impl<'a> Cursor<'a> {
    fn new(text: &'a str) -> Self {
        Cursor {
            text,
            pos: 0,
            col: 0,
            virtual_spaces: 0,
        }
    }

    fn rest(&self) -> &'a str {
        &self.text[self.pos..]
    }

    fn is_blank(&self) -> bool {
        self.rest().chars().all(|c| c == ' ' || c == '\t')
    }

    /// The columns of whitespace before the next character.
    fn indent(&self) -> usize {
        let mut col = self.col + self.virtual_spaces;
        for c in self.rest().chars() {
            match c {
                ' ' => col += 1,
                '\t' => col += 4 - col % 4,
                _ => break,
            }
        }
        col - self.col
    }

    /// Consumes up to `n` columns of whitespace; a tab that reaches past them leaves its other
    /// columns as spaces.
    fn strip_cols(&mut self, n: usize) {
        let mut left = n;
        while left > 0 {
            if self.virtual_spaces > 0 {
                let k = self.virtual_spaces.min(left);
                self.virtual_spaces -= k;
                self.col += k;
                left -= k;
                continue;
            }
            match self.rest().as_bytes().first() {
                Some(b' ') => {
                    self.pos += 1;
                    self.col += 1;
                    left -= 1;
                }
                Some(b'\t') => {
                    let width = 4 - self.col % 4;
                    self.pos += 1;
                    self.virtual_spaces = width;
                }
                _ => break,
            }
        }
    }

    /// Consumes the next character (not whitespace).
    fn bump(&mut self, bytes: usize) {
        self.pos += bytes;
        self.col += bytes;
        self.virtual_spaces = 0;
    }

    /// The characters of the line consumed so far.
    fn chars_before(&self) -> usize {
        self.text[..self.pos].chars().count()
    }

    /// What is left, with a partly consumed tab's columns as spaces.
    fn remainder(&self) -> String {
        " ".repeat(self.virtual_spaces) + self.rest()
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Container {
    Quote,
    /// A list item whose content starts this many columns in.
    Item(usize),
}

/// Reads the prefixes of the open containers; returns how many of them continue on this line.
fn match_containers(stack: &[Container], cur: &mut Cursor) -> usize {
    for (i, c) in stack.iter().enumerate() {
        match c {
            Container::Quote => {
                if starts_quote(cur) {
                    quote_marker(cur);
                } else {
                    return i;
                }
            }
            Container::Item(indent) => {
                if cur.is_blank() {
                    continue;
                }
                if cur.indent() >= *indent {
                    cur.strip_cols(*indent);
                } else {
                    return i;
                }
            }
        }
    }
    stack.len()
}

/// Whether a block quote's `>` comes after at most 3 columns of spaces and tabs.
fn starts_quote(cur: &Cursor) -> bool {
    cur.indent() <= 3 && cur.rest().trim_start_matches([' ', '\t']).starts_with('>')
}

/// Consumes `>` (after at most 3 columns of indentation) and one column of space after it.
fn quote_marker(cur: &mut Cursor) {
    cur.strip_cols(3);
    cur.bump(1);
    if cur.indent() > 0 {
        cur.strip_cols(1);
    }
}

/// A list item's marker at the cursor (after at most 3 columns of indentation): the columns its
/// content starts at, relative to the cursor.
fn list_marker(cur: &Cursor) -> Option<usize> {
    let indent = cur.indent();
    if indent > 3 {
        return None;
    }
    let text = cur.rest().trim_start_matches([' ', '\t']);
    let digits = text.bytes().take_while(u8::is_ascii_digit).count();
    let width = match text.as_bytes().first()? {
        b'-' | b'+' | b'*' => 1,
        _ if (1..=9).contains(&digits)
            && matches!(text.as_bytes().get(digits), Some(b'.' | b')')) =>
        {
            digits + 1
        }
        _ => return None,
    };
    let after = &text[width..];
    if after.is_empty() || after.chars().all(|c| c == ' ' || c == '\t') {
        return Some(indent + width + 1);
    }
    if !after.starts_with([' ', '\t']) {
        return None;
    }
    let mut probe = *cur;
    probe.strip_cols(indent);
    probe.bump(width);
    let spaces = probe.indent();
    // Five columns or more after the marker: the content is indented code, one column in.
    Some(indent + width + if spaces >= 5 { 1 } else { spaces })
}

/// An opening code fence at the cursor: its character, length and info string.
fn opening_fence<'a>(cur: &Cursor<'a>) -> Option<(u8, usize, &'a str)> {
    let text = cur.rest().trim_start_matches([' ', '\t']);
    let ch = *text.as_bytes().first()?;
    if ch != b'`' && ch != b'~' {
        return None;
    }
    let len = text.bytes().take_while(|&b| b == ch).count();
    let info = &text[len..];
    // A backtick fence's info string has no backtick: that line is inline code.
    (len >= 3 && !(ch == b'`' && info.contains('`'))).then_some((ch, len, info))
}

fn is_closing_fence(cur: &Cursor, ch: u8, len: usize) -> bool {
    if cur.indent() > 3 {
        return false;
    }
    let text = cur.rest().trim_start_matches([' ', '\t']);
    let run = text.bytes().take_while(|&b| b == ch).count();
    run >= len && text[run..].chars().all(|c| c == ' ' || c == '\t')
}

/// A fence being read.
struct Open {
    ch: u8,
    len: usize,
    indent: usize,
    /// The containers it is in.
    depth: usize,
    /// The listwatch block it is, if it is one.
    block: Option<Block>,
}

/// Every ```` ```listwatch ```` block of a chapter, in order.
pub fn find(src: &str) -> Vec<Block> {
    let lines = split_lines(src);
    let mut blocks = vec![];
    let mut stack: Vec<Container> = vec![];
    let mut fence: Option<Open> = None;
    let mut paragraph = false;
    for (n, line) in lines.iter().enumerate() {
        let mut cur = Cursor::new(line.text);
        let matched = match_containers(&stack, &mut cur);
        if let Some(open) = fence.as_mut() {
            if matched >= open.depth {
                let closing = is_closing_fence(&cur, open.ch, open.len);
                if let Some(b) = open.block.as_mut() {
                    b.range.end = line.start + line.text.len();
                    if !closing {
                        let mut content = cur;
                        content.strip_cols(open.indent);
                        b.origins.push((n + 1, content.chars_before()));
                        if b.origins.len() > 1 {
                            b.script.push('\n');
                        }
                        b.script += &content.remainder();
                    }
                }
                if closing {
                    let open = fence.take().expect("a fence is open");
                    if let Some(b) = open.block {
                        blocks.push(finish(b, &stack[..open.depth], line, lines.get(n + 1)));
                    }
                }
                continue;
            }
            // Its container ended: so does the fence, on the line before.
            let open = fence.take().expect("a fence is open");
            if let Some(b) = open.block {
                blocks.push(finish(b, &stack[..open.depth], &lines[n - 1], Some(line)));
            }
        }
        let lazy = paragraph
            && matched < stack.len()
            && !cur.is_blank()
            && opening_fence(&cur).is_none()
            && !starts_quote(&cur)
            && list_marker(&cur).is_none();
        if lazy {
            continue;
        }
        stack.truncate(matched);
        loop {
            if starts_quote(&cur) {
                quote_marker(&mut cur);
                stack.push(Container::Quote);
            } else if let Some(indent) = list_marker(&cur) {
                let spaces = cur.indent();
                cur.strip_cols(spaces);
                let marker = indent - spaces;
                let rest = cur
                    .rest()
                    .trim_start_matches(|c: char| !c.is_ascii_whitespace());
                let width = cur.rest().len() - rest.len();
                cur.bump(width);
                cur.strip_cols(marker - width);
                stack.push(Container::Item(indent));
            } else {
                break;
            }
        }
        if cur.indent() >= 4 {
            // Indented code, or a paragraph's continuation: never a fence.
            paragraph = paragraph && !cur.is_blank();
            continue;
        }
        let Some((ch, len, info)) = opening_fence(&cur) else {
            paragraph = !cur.is_blank();
            continue;
        };
        paragraph = false;
        let indent = cur.indent();
        let block = (info.split_whitespace().next() == Some("listwatch")).then(|| {
            let after_word = info.trim_start()["listwatch".len()..].trim_start();
            let options_col = line.text.chars().count() - after_word.chars().count() + 1;
            let start =
                line.start + line.text.len() - cur.rest().trim_start_matches([' ', '\t']).len();
            Block {
                line: n + 1,
                options: after_word.trim_end().to_string(),
                options_col,
                script: String::new(),
                origins: vec![],
                range: start..line.start + line.text.len(),
                separator: None,
            }
        });
        fence = Some(Open {
            ch,
            len,
            indent,
            depth: stack.len(),
            block,
        });
    }
    if let Some(Open {
        block: Some(b),
        depth,
        ..
    }) = fence
    {
        let last = lines.last().expect("an open fence has a line");
        blocks.push(finish(b, &stack[..depth], last, None));
    }
    blocks
}

/// A block is complete: decides whether a separator line must follow it.
fn finish(mut b: Block, containers: &[Container], last: &Line, next: Option<&Line>) -> Block {
    let Some(next) = next else { return b };
    let mut cur = Cursor::new(next.text);
    let continues = match_containers(containers, &mut cur) == containers.len() && !cur.is_blank();
    if continues {
        let quotes = containers
            .iter()
            .filter(|c| **c == Container::Quote)
            .count();
        let ending = if last.ending.is_empty() {
            "\n"
        } else {
            last.ending
        };
        b.separator = Some(format!("{ending}{}", vec![">"; quotes].join(" ")));
    }
    b
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The blocks' scripts.
    fn scripts(src: &str) -> Vec<String> {
        find(src).into_iter().map(|b| b.script).collect()
    }

    #[test]
    fn backtick_and_tilde_fences() {
        let src =
            "# T\n\n```listwatch\nkind Pod\nrun 1s\n```\n\n~~~listwatch autoplay\nkind Pod\n~~~\n";
        let blocks = find(src);
        assert_eq!(blocks.len(), 2);
        assert_eq!(blocks[0].script, "kind Pod\nrun 1s");
        assert_eq!(blocks[0].line, 3);
        assert_eq!(blocks[0].origins, vec![(4, 0), (5, 0)]);
        assert_eq!(
            &src[blocks[0].range.clone()],
            "```listwatch\nkind Pod\nrun 1s\n```"
        );
        assert_eq!(blocks[0].separator, None);
        assert_eq!(blocks[1].script, "kind Pod");
        assert_eq!(blocks[1].options, "autoplay");
        assert_eq!(blocks[1].options_col, 14);
    }

    #[test]
    fn other_languages_and_longer_words_are_not_ours() {
        let src = "```rust\nfn main() {}\n```\n```listwatchx\nkind Pod\n```\n```\nplain\n```\n";
        assert!(find(src).is_empty());
    }

    #[test]
    fn a_longer_fence_holds_shorter_ones_and_closes_only_on_its_length() {
        let src = "````listwatch\nsay \"```\"\n```\n~~~\n`````\nafter\n";
        let blocks = find(src);
        assert_eq!(scripts(src), vec!["say \"```\"\n```\n~~~"]);
        assert_eq!(
            &src[blocks[0].range.clone()],
            &src[..src.find("\nafter").unwrap()]
        );
        assert_eq!(blocks[0].separator.as_deref(), Some("\n"));
    }

    #[test]
    fn a_closing_fence_has_nothing_after_it_but_spaces() {
        let src = "```listwatch\nkind Pod\n``` not closed\n```  \nafter\n";
        assert_eq!(scripts(src), vec!["kind Pod\n``` not closed"]);
        // The same character only: a tilde line does not close a backtick fence.
        assert_eq!(scripts("```listwatch\n~~~\n```\n"), vec!["~~~".to_string()]);
    }

    #[test]
    fn a_fence_inside_another_code_block_is_its_text() {
        let src = "````markdown\n```listwatch\nkind Pod\n```\n````\n\n~~~\n```listwatch\n~~~\n";
        assert!(find(src).is_empty());
    }

    #[test]
    fn indented_code_is_not_a_fence() {
        let src = "Text.\n\n    ```listwatch\n    kind Pod\n    ```\n\n\t```listwatch\n\t```\n";
        assert!(find(src).is_empty());
        // Three spaces still open one, and up to three are taken off its lines.
        let src = "   ```listwatch\n     kind Pod\n  run 1s\n   ```\n";
        let blocks = find(src);
        assert_eq!(blocks[0].script, "  kind Pod\nrun 1s");
        assert_eq!(blocks[0].origins, vec![(2, 3), (3, 2)]);
        assert_eq!(blocks[0].range.start, 3);
    }

    #[test]
    fn backticks_in_the_info_string_make_it_inline_code() {
        let src = "```listwatch `x`\nkind Pod\n```listwatch\nrun 1s\n```\n";
        // The first line is a paragraph; the fence opens on line 3.
        let blocks = find(src);
        assert_eq!(blocks.len(), 1);
        assert_eq!(blocks[0].line, 3);
        assert_eq!(blocks[0].script, "run 1s");
    }

    #[test]
    fn inside_list_items() {
        let src = "1. Step one:\n\n   ```listwatch\n   kind Pod\n     run 1s\n   ```\n   More.\n- ```listwatch panels=timeline\n  kind Pod\n  ```\n";
        let blocks = find(src);
        assert_eq!(blocks.len(), 2);
        assert_eq!(blocks[0].script, "kind Pod\n  run 1s");
        assert_eq!(blocks[0].origins, vec![(4, 3), (5, 3)]);
        assert_eq!(blocks[0].separator.as_deref(), Some("\n"));
        assert_eq!(blocks[1].script, "kind Pod");
        assert_eq!(blocks[1].options, "panels=timeline");
        assert_eq!(blocks[1].range.start, src.find("- ```").unwrap() + 2);
        // A line less indented than the item ends it, and the fence with it.
        let src = "- ```listwatch\n  kind Pod\nrun 1s\n";
        let blocks = find(src);
        assert_eq!(blocks[0].script, "kind Pod");
        assert_eq!(&src[blocks[0].range.clone()], "```listwatch\n  kind Pod");
        assert_eq!(blocks[0].separator, None);
    }

    #[test]
    fn inside_block_quotes() {
        let src = "> Look:\n>\n> ```listwatch\n> kind Pod\n>\n>     run 1s\n> ```\n> After.\n";
        let blocks = find(src);
        assert_eq!(blocks.len(), 1);
        assert_eq!(blocks[0].script, "kind Pod\n\n    run 1s");
        assert_eq!(blocks[0].origins, vec![(4, 2), (5, 1), (6, 2)]);
        assert_eq!(blocks[0].separator.as_deref(), Some("\n>"));
        // Nested, in a list item: one `>` per quote.
        let src = "> - > ```listwatch\n>   > kind Pod\n>   > ```\n>   > more\n";
        let blocks = find(src);
        assert_eq!(blocks[0].script, "kind Pod");
        assert_eq!(blocks[0].separator.as_deref(), Some("\n> >"));
        // A line without `>` ends the quote and the fence.
        let src = "> ```listwatch\n> kind Pod\nrun 1s\n```\n";
        assert_eq!(scripts(src), vec!["kind Pod"]);
    }

    #[test]
    fn a_paragraph_continued_lazily_keeps_its_quote() {
        let src = "> text\nlazy\n> ```listwatch\n> kind Pod\n> ```\n";
        let blocks = find(src);
        assert_eq!(blocks[0].script, "kind Pod");
        assert_eq!(blocks[0].origins, vec![(4, 2)]);
    }

    #[test]
    fn crlf_and_lone_cr_line_endings() {
        let src = "Text\r\n\r\n```listwatch at=1s\r\nkind Pod\r\nrun 1s\r\n```\r\nafter\r\n";
        let blocks = find(src);
        assert_eq!(blocks[0].script, "kind Pod\nrun 1s");
        assert_eq!(blocks[0].options, "at=1s");
        assert_eq!(blocks[0].origins, vec![(4, 0), (5, 0)]);
        assert_eq!(
            &src[blocks[0].range.clone()],
            "```listwatch at=1s\r\nkind Pod\r\nrun 1s\r\n```"
        );
        assert_eq!(blocks[0].separator.as_deref(), Some("\r\n"));
        assert_eq!(scripts("```listwatch\rkind Pod\r```\r"), vec!["kind Pod"]);
    }

    #[test]
    fn an_unclosed_fence_runs_to_the_end() {
        let src = "```listwatch\nkind Pod\nrun 1s";
        let blocks = find(src);
        assert_eq!(blocks[0].script, "kind Pod\nrun 1s");
        assert_eq!(blocks[0].range, 0..src.len());
        assert_eq!(scripts("```listwatch"), vec![""]);
    }

    #[test]
    fn tabs_count_to_the_next_multiple_of_four() {
        // A tab after `-` puts the content at column 4; the fence's lines keep their own tabs.
        let src = "-\t```listwatch\n    kind Pod\n    \tx\n    ```\n";
        let blocks = find(src);
        assert_eq!(blocks[0].script, "kind Pod\n\tx");
    }

    /// Seeded sequences of the pieces of Markdown the finder reads: it never panics, and its
    /// blocks are in order, apart, on character boundaries, and each starts at a fence.
    #[test]
    fn any_markdown_gives_well_formed_blocks() {
        const PIECES: [&str; 19] = [
            ">",
            "> ",
            "- ",
            "1. ",
            "  ",
            "    ",
            "\t",
            "```",
            "~~~",
            "````",
            "listwatch",
            " at=1s",
            "kind Pod",
            "\u{3000}",
            "é",
            "\n",
            "\r\n",
            "\r",
            "`",
        ];
        let mut seed: u64 = 0x2545_f491_4f6c_dd1d;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let mut blocks_seen = 0;
        for _ in 0..20_000 {
            let n = next() % 40;
            let src: String = (0..n).map(|_| PIECES[(next() % 19) as usize]).collect();
            let blocks = find(&src);
            let mut end = 0;
            for b in &blocks {
                assert!(
                    b.range.start >= end && b.range.start <= b.range.end,
                    "{src:?}"
                );
                assert!(src.is_char_boundary(b.range.start) && src.is_char_boundary(b.range.end));
                assert!(
                    src[b.range.clone()].starts_with(['`', '~']),
                    "{src:?}: {b:?}"
                );
                assert_eq!(
                    b.origins.len(),
                    b.script.split('\n').count().min(b.origins.len())
                );
                end = b.range.end;
            }
            blocks_seen += blocks.len();
        }
        assert!(blocks_seen > 100, "the pieces make blocks: {blocks_seen}");
    }
}
