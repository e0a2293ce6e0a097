//! Splits a line into words with their columns; `"..."` is one word; `#` starts a comment.

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
