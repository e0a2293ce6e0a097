//! A block's options: the words after `listwatch` on its opening fence,
//! `panels=timeline,explanation theme=dark autoplay at=2.2s height=480`.

use listwatch_core::DurationMs;

/// The options a block may have.
pub const OPTIONS: [&str; 5] = ["panels", "theme", "autoplay", "at", "height"];
/// The embed's panels besides the picture.
pub const PANELS: [&str; 3] = ["editor", "timeline", "explanation"];
/// The embed's fixed themes.
pub const THEMES: [&str; 2] = ["light", "dark"];
/// The iframe heights a block may ask for, in pixels.
pub const HEIGHT_PX: std::ops::RangeInclusive<u32> = 200..=4000;
/// Options longer than this are refused (a fence line is not a document).
pub const MAX_OPTIONS_CHARS: usize = 1024;

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Options {
    /// The panels to show, as written (checked); `None`: the embed's default.
    pub panels: Option<Vec<String>>,
    pub theme: Option<String>,
    pub autoplay: bool,
    /// The moment the embed opens at.
    pub at: Option<DurationMs>,
    /// The iframe's height; `None`: one that fits the panels.
    pub height_px: Option<u32>,
    /// Where `at=` was written (0-based character offset, length), for an error about its value
    /// that only the run can find.
    pub at_span: (usize, usize),
}

/// Why an option is refused, at a character offset (0-based) into the options.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OptionError {
    pub offset: usize,
    pub len: usize,
    pub message: String,
    pub help: Option<String>,
}

fn refuse(offset: usize, len: usize, message: String, help: Option<String>) -> OptionError {
    OptionError {
        offset,
        len,
        message,
        help,
    }
}

/// The whitespace-separated words of `text` with their character offsets.
fn words(text: &str) -> Vec<(usize, &str)> {
    let mut out = vec![];
    let mut start = None;
    for (chars, (i, c)) in text.char_indices().enumerate() {
        match (c.is_whitespace(), start) {
            (true, Some((s, sc))) => {
                out.push((sc, &text[s..i]));
                start = None;
            }
            (false, None) => start = Some((i, chars)),
            _ => {}
        }
    }
    if let Some((s, sc)) = start {
        out.push((sc, &text[s..]));
    }
    out
}

pub fn parse(text: &str) -> Result<Options, OptionError> {
    let chars = text.chars().count();
    if chars > MAX_OPTIONS_CHARS {
        return Err(refuse(
            0,
            chars,
            format!("the block's options are {chars} characters, more than the limit of {MAX_OPTIONS_CHARS}"),
            None,
        ));
    }
    let mut o = Options::default();
    let mut seen: Vec<&str> = vec![];
    for (offset, word) in words(text) {
        let (key, value) = match word.split_once('=') {
            Some((k, v)) => (k, Some(v)),
            None => (word, None),
        };
        let len = word.chars().count();
        let value_offset = offset + key.chars().count() + 1;
        let value_len = value.map_or(0, |v| v.chars().count()).max(1);
        let Some(&known) = OPTIONS.iter().find(|k| **k == key) else {
            return Err(refuse(
                offset,
                key.chars().count(),
                format!("unknown option `{key}` of a listwatch block"),
                Some(format!("expected one of: {}", OPTIONS.join(", "))),
            ));
        };
        if seen.contains(&known) {
            return Err(refuse(offset, len, format!("`{key}` is given twice"), None));
        }
        seen.push(known);
        let needs_value = |what: &str| match value {
            Some(v) if !v.is_empty() => Ok(v),
            _ => Err(refuse(
                offset,
                len,
                format!("`{key}` needs a value: {key}={what}"),
                None,
            )),
        };
        match known {
            "panels" => {
                let v = needs_value("timeline,explanation")?;
                let mut panels = vec![];
                let mut at = value_offset;
                for p in v.split(',') {
                    if !PANELS.contains(&p) {
                        return Err(refuse(
                            at,
                            p.chars().count(),
                            format!("unknown panel `{p}`"),
                            Some(format!("expected some of: {}", PANELS.join(", "))),
                        ));
                    }
                    panels.push(p.to_string());
                    at += p.chars().count() + 1;
                }
                o.panels = Some(panels);
            }
            "theme" => {
                let v = needs_value("dark")?;
                if !THEMES.contains(&v) {
                    return Err(refuse(
                        value_offset,
                        value_len,
                        format!("unknown theme `{v}`"),
                        Some(format!("expected one of: {}", THEMES.join(", "))),
                    ));
                }
                o.theme = Some(v.to_string());
            }
            "autoplay" => {
                if value.is_some() {
                    return Err(refuse(
                        offset,
                        len,
                        "`autoplay` takes no value: write `autoplay` alone".into(),
                        None,
                    ));
                }
                o.autoplay = true;
            }
            "at" => {
                let v = needs_value("2.2s")?;
                let at = listwatch_script::parse_time_arg(v)
                    .map_err(|e| refuse(value_offset, value_len, e, None))?;
                o.at = Some(at);
                o.at_span = (value_offset, value_len);
            }
            "height" => {
                let v = needs_value("480")?;
                let digits = v.strip_suffix("px").unwrap_or(v);
                let px = digits.parse::<u32>().ok().filter(|px| {
                    HEIGHT_PX.contains(px) && digits.bytes().all(|b| b.is_ascii_digit())
                });
                let Some(px) = px else {
                    return Err(refuse(
                        value_offset,
                        value_len,
                        format!(
                            "`{v}` is not a height: write pixels from {} to {}, such as height=480",
                            HEIGHT_PX.start(),
                            HEIGHT_PX.end()
                        ),
                        None,
                    ));
                };
                o.height_px = Some(px);
            }
            _ => unreachable!("every known option is handled"),
        }
    }
    Ok(o)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_option() {
        let o =
            parse("panels=timeline,explanation theme=dark autoplay at=2.2s height=480").unwrap();
        assert_eq!(
            o.panels,
            Some(vec!["timeline".to_string(), "explanation".to_string()])
        );
        assert_eq!(o.theme.as_deref(), Some("dark"));
        assert!(o.autoplay);
        assert_eq!(o.at, Some(DurationMs(2200)));
        assert_eq!(o.at_span, (51, 4));
        assert_eq!(o.height_px, Some(480));
        assert_eq!(parse("").unwrap(), Options::default());
        assert_eq!(parse("height=300px").unwrap().height_px, Some(300));
    }

    /// Each refused option and where its error points: (options, offset, length, message).
    #[test]
    fn refused_options_are_located() {
        let cases: &[(&str, usize, usize, &str)] = &[
            (
                "autoplay colour=dark",
                9,
                6,
                "unknown option `colour` of a listwatch block",
            ),
            ("panels=timeline,graph", 16, 5, "unknown panel `graph`"),
            (
                "panels=",
                0,
                7,
                "`panels` needs a value: panels=timeline,explanation",
            ),
            ("theme=blue", 6, 4, "unknown theme `blue`"),
            (
                "autoplay=yes",
                0,
                12,
                "`autoplay` takes no value: write `autoplay` alone",
            ),
            ("at=2x", 3, 2, "`2x` is not a time (write 2s, 250ms, 1m)"),
            (
                "height=50",
                7,
                2,
                "`50` is not a height: write pixels from 200 to 4000, such as height=480",
            ),
            (
                "height=-480",
                7,
                4,
                "`-480` is not a height: write pixels from 200 to 4000, such as height=480",
            ),
            ("theme=dark  theme=light", 12, 11, "`theme` is given twice"),
            // Offsets count characters, not bytes.
            (
                "theme=dark   é=1",
                13,
                1,
                "unknown option `é` of a listwatch block",
            ),
        ];
        for &(text, offset, len, message) in cases {
            let e = match parse(text) {
                Err(e) => e,
                Ok(o) => panic!("{text:?} was accepted: {o:?}"),
            };
            assert_eq!(
                (e.offset, e.len, e.message.as_str()),
                (offset, len, message),
                "{text}"
            );
        }
        let long = "autoplay ".repeat(200);
        assert!(parse(&long).unwrap_err().message.contains("limit of 1024"));
    }
}
