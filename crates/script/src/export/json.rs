//! JSON that is safe to embed anywhere: serde_json with a formatter that escapes what HTML,
//! terminals and bidirectional text would read as markup or controls.

use std::io;

use serde::Serialize;

/// A value as JSON that is safe to embed anywhere: besides what JSON requires, `<`, `>`, `&`,
/// DEL, the C1 controls, the line and paragraph separators and the bidirectional controls are
/// written as `\uXXXX`.
pub fn to_string<T: Serialize + ?Sized>(value: &T) -> String {
    let mut out = Vec::with_capacity(256);
    let mut ser = serde_json::Serializer::with_formatter(&mut out, SafeFormatter);
    value
        .serialize(&mut ser)
        .expect("serialising to memory cannot fail");
    String::from_utf8(out).expect("serde_json writes UTF-8")
}

/// A string as a JSON string literal, escaped like `to_string`.
pub fn esc(s: &str) -> String {
    to_string(s)
}

fn must_escape(c: char) -> bool {
    c.is_control()
        || c == '<'
        || c == '>'
        || c == '&'
        || ('\u{2028}'..='\u{202e}').contains(&c)
        || ('\u{2066}'..='\u{2069}').contains(&c)
        || c == '\u{200e}'
        || c == '\u{200f}'
}

struct SafeFormatter;

impl serde_json::ser::Formatter for SafeFormatter {
    fn write_string_fragment<W: ?Sized + io::Write>(
        &mut self,
        w: &mut W,
        fragment: &str,
    ) -> io::Result<()> {
        let mut start = 0;
        for (i, c) in fragment.char_indices() {
            if must_escape(c) {
                w.write_all(&fragment.as_bytes()[start..i])?;
                write!(w, "\\u{:04x}", c as u32)?;
                start = i + c.len_utf8();
            }
        }
        w.write_all(&fragment.as_bytes()[start..])
    }

    fn write_char_escape<W: ?Sized + io::Write>(
        &mut self,
        w: &mut W,
        escape: serde_json::ser::CharEscape,
    ) -> io::Result<()> {
        use serde_json::ser::CharEscape::*;
        let c: u8 = match escape {
            Quote => return w.write_all(b"\\\""),
            ReverseSolidus => return w.write_all(b"\\\\"),
            LineFeed => return w.write_all(b"\\n"),
            Solidus => b'/',
            Backspace => 0x08,
            FormFeed => 0x0c,
            CarriageReturn => b'\r',
            Tab => b'\t',
            AsciiControl(c) => c,
            #[allow(unreachable_patterns)]
            _ => b'?',
        };
        write!(w, "\\u{:04x}", c)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_control_character_is_escaped() {
        assert_eq!(
            super::esc("a\u{1b}[2J\u{7f}\u{85}\u{202e}\t\"\\\n<"),
            "\"a\\u001b[2J\\u007f\\u0085\\u202e\\u0009\\\"\\\\\\n\\u003c\""
        );
    }
}
