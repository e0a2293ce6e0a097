//! Splits a script into lines and a line into words with their columns; `"..."` is one word; `#`
//! starts a comment.

/// The byte-order mark some editors put at the start of a UTF-8 file: skipped, not read.
pub const BOM: char = '\u{feff}';

/// The script without a leading byte-order mark.
pub fn strip_bom(src: &str) -> &str {
    src.strip_prefix(BOM).unwrap_or(src)
}

/// The lines of a script: `\n`, `\r\n` and a lone `\r` each end a line (like `str::lines`, a
/// final line break does not start another line).
pub fn lines(src: &str) -> impl Iterator<Item = &str> {
    let mut rest = Some(src);
    std::iter::from_fn(move || {
        let r = rest.filter(|r| !r.is_empty())?;
        match r.find(['\n', '\r']) {
            Some(i) => {
                let skip = if r[i..].starts_with("\r\n") { 2 } else { 1 };
                rest = Some(&r[i + skip..]);
                Some(&r[..i])
            }
            None => {
                rest = None;
                Some(r)
            }
        }
    })
}

/// The text of a script given as bytes: a diagnostic at the first byte that is not UTF-8.
pub fn decode(bytes: &[u8]) -> Result<&str, crate::Diagnostic> {
    match std::str::from_utf8(bytes) {
        Ok(s) => Ok(s),
        Err(e) => {
            let good = std::str::from_utf8(&bytes[..e.valid_up_to()]).unwrap_or("");
            let good = strip_bom(good);
            // `lines` drops a final empty line: count the breaks instead.
            let line_start = good.rfind(['\n', '\r']).map(|i| i + 1).unwrap_or(0);
            let breaks = good.matches('\n').count() + good.matches('\r').count()
                - good.matches("\r\n").count();
            let col = good[line_start..].chars().count() + 1;
            Err(crate::Diagnostic::at(
                breaks + 1,
                col,
                1,
                format!(
                    "the script is not valid UTF-8: byte 0x{:02x} here does not start a character",
                    bytes[e.valid_up_to()]
                ),
            )
            .help("save the file as UTF-8"))
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Word {
    pub text: String,
    /// 1-based column, in characters.
    pub col: usize,
    pub len: usize,
    pub quoted: bool,
}

pub fn words(line: &str) -> Result<Vec<Word>, (usize, String)> {
    let chars: Vec<char> = line.chars().collect();
    let mut out = vec![];
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() {
            i += 1;
        } else if c == '#' {
            break;
        } else if c == '"' {
            let start = i;
            i += 1;
            let mut text = String::new();
            loop {
                match chars.get(i) {
                    None => return Err((start + 1, "this string has no closing `\"`".into())),
                    Some('"') => break,
                    Some('\\') if chars.get(i + 1).is_some() => {
                        text.push(chars[i + 1]);
                        i += 2;
                    }
                    Some(&ch) => {
                        text.push(ch);
                        i += 1;
                    }
                }
            }
            i += 1;
            out.push(Word {
                text,
                col: start + 1,
                len: i - start,
                quoted: true,
            });
        } else {
            let start = i;
            while i < chars.len() && !chars[i].is_whitespace() && chars[i] != '#' {
                i += 1;
            }
            out.push(Word {
                text: chars[start..i].iter().collect(),
                col: start + 1,
                len: i - start,
                quoted: false,
            });
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_end_at_lf_crlf_and_lone_cr() {
        let all: Vec<&str> = lines("a\nb\r\nc\rd\r\re\n").collect();
        assert_eq!(all, ["a", "b", "c", "d", "", "e"]);
        assert_eq!(lines("").count(), 0);
        assert_eq!(lines("\n").collect::<Vec<_>>(), [""]);
        for s in ["x\n\ny", "x", "x\n", "\n\n"] {
            assert_eq!(lines(s).collect::<Vec<_>>(), s.lines().collect::<Vec<_>>());
        }
    }

    #[test]
    fn decode_locates_the_first_bad_byte() {
        let d = decode(b"kind Pod\r\nat 1s say \"caf\xe9\"\n").unwrap_err();
        assert_eq!((d.line, d.col), (2, 15));
        assert!(d.message.contains("0xe9"), "{}", d.message);
        let d = decode(b"\xef\xbb\xbfk\xff").unwrap_err();
        assert_eq!((d.line, d.col), (1, 2), "the BOM is not a column");
        let d = decode(b"a\rb\r\n\n\x80").unwrap_err();
        assert_eq!((d.line, d.col), (4, 1));
        assert_eq!(decode(b"kind Pod").unwrap(), "kind Pod");
    }
}
