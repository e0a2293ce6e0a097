//! Share links: the whole scenario in the URL fragment, so no server is needed.
//!
//! `#lw2.<base64url(raw deflate(payload) ++ CRC-32(payload))>` where the payload is header lines
//! `key=value`, a blank line, then the script. Keys today: `t` (the moment on screen, in ms) and
//! `e` (the events applied then: several events share a millisecond).
//! Unknown keys are ignored, so later versions can add options; a new payload layout gets a new
//! version prefix and a migration step in `decode`.
//!
//! Raw deflate has no checksum of its own: an altered character in an `lw1.` link often still
//! inflates, to a garbled script. `lw2.` appends the CRC-32 (IEEE, big-endian) of the payload, so
//! any change is refused instead of opening as a different script. `lw1.` links (no checksum)
//! still open: `decode` reads both, `encode` writes `lw2.`.
//!
//! `decode` reads line endings as the language and the page's editor do: `\r\n` and a lone
//! `\r` each end a line, and the script it returns has `\n` only, so the editor shows the
//! link's text exactly (it would otherwise hand back a different text, which the page took for
//! the user's own edit).

use std::borrow::Cow;
use std::fmt;

use listwatch_core::TimeMs;

use crate::MAX_SCRIPT_BYTES;

/// The prefix `encode` writes.
pub const PREFIX: &str = "lw2.";
/// The first format: the same payload without a checksum. Still read, never written.
const PREFIX_V1: &str = "lw1.";
/// The newest version this code reads.
const NEWEST: u32 = 2;
/// Decompressed payloads above this are refused (a decompression bomb, or not ours).
pub const MAX_PAYLOAD_BYTES: usize = MAX_SCRIPT_BYTES + 1024;
/// Links longer than this are refused before decoding.
pub const MAX_LINK_CHARS: usize = 200_000;

/// What a link carries.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Shared {
    pub script: String,
    /// The moment on screen.
    pub at_ms: Option<TimeMs>,
    /// The moment as the number of events applied, which tells apart the events of one
    /// millisecond (a 410 and the relist it starts). Trusted only where the script's run has
    /// that many events, the last of them at `at_ms`.
    pub events: Option<u64>,
}

/// Why a link cannot be opened; each says what is wrong in words a user can act on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LinkError {
    Empty,
    NotOurs,
    FutureVersion(String),
    TooLong(usize),
    BadCharacters,
    Truncated,
    TooLarge,
    NotText,
    /// The checksum does not match the content: a character was changed or the end cut off.
    Checksum,
}

impl fmt::Display for LinkError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LinkError::Empty => write!(f, "the link carries no scenario"),
            LinkError::NotOurs => {
                write!(f, "this is not a listwatch link (it should contain #lw2.)")
            }
            LinkError::FutureVersion(v) => write!(
                f,
                "this link was made by a newer listwatch (format {v}); this page reads lw1 and lw2"
            ),
            LinkError::TooLong(n) => write!(
                f,
                "the link is {n} characters long, more than the limit of {MAX_LINK_CHARS}"
            ),
            LinkError::BadCharacters => write!(
                f,
                "the link has been altered: it contains characters a share link never has"
            ),
            LinkError::Truncated => write!(
                f,
                "the link is incomplete or damaged (was it cut off when copied?)"
            ),
            LinkError::TooLarge => write!(
                f,
                "the link expands to more than {} KiB: refused",
                MAX_PAYLOAD_BYTES / 1024
            ),
            LinkError::NotText => write!(f, "the link's content is not text"),
            LinkError::Checksum => write!(
                f,
                "this link was altered or cut: its checksum does not match"
            ),
        }
    }
}

impl std::error::Error for LinkError {}

mod codec;

// The link alphabet is base64url without padding (RFC 4648 §5): safe in a URL fragment.
fn b64_encode(data: &[u8]) -> String {
    codec::b64_encode(data)
}

fn b64_decode(s: &str) -> Result<Vec<u8>, LinkError> {
    codec::b64_decode(s).map_err(|e| match e {
        codec::B64Error::Character => LinkError::BadCharacters,
        codec::B64Error::Cut => LinkError::Truncated,
    })
}

/// Raw deflate: miniz_oxide's level 9 in the CLI (the links `encoding_is_pinned` pins), the
/// small fixed-code encoder in the page (see `codec`).
fn deflate(data: &[u8]) -> Vec<u8> {
    #[cfg(feature = "miniz")]
    return miniz_oxide::deflate::compress_to_vec(data, 9);
    #[cfg(not(feature = "miniz"))]
    return codec::deflate(data);
}

/// Inflates at most `MAX_PAYLOAD_BYTES`: a bomb stops there.
fn inflate(data: &[u8]) -> Result<Vec<u8>, LinkError> {
    #[cfg(feature = "miniz")]
    return miniz_oxide::inflate::decompress_to_vec_with_limit(data, MAX_PAYLOAD_BYTES).map_err(
        |e| match e.status {
            miniz_oxide::inflate::TINFLStatus::HasMoreOutput => LinkError::TooLarge,
            _ => LinkError::Truncated,
        },
    );
    #[cfg(not(feature = "miniz"))]
    return codec::inflate(data, MAX_PAYLOAD_BYTES).map_err(|e| match e {
        codec::InflateError::TooLarge => LinkError::TooLarge,
        codec::InflateError::Bad => LinkError::Truncated,
    });
}

/// CRC-32 (IEEE 802.3, the one of zip and PNG), bit by bit: links are small.
fn crc32(data: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &b in data {
        crc ^= b as u32;
        for _ in 0..8 {
            crc = (crc >> 1) ^ (0xEDB8_8320 & (crc & 1).wrapping_neg());
        }
    }
    !crc
}

/// The text with `\r\n` and each lone `\r` as `\n` (the lexer's line ends, and CodeMirror's).
pub fn unix_lines(text: &str) -> Cow<'_, str> {
    if !text.contains('\r') {
        return Cow::Borrowed(text);
    }
    Cow::Owned(text.replace("\r\n", "\n").replace('\r', "\n"))
}

/// The fragment (without `#`) for a scenario, in the newest format.
pub fn encode(shared: &Shared) -> String {
    let mut payload = String::new();
    if let Some(t) = shared.at_ms {
        payload += &format!("t={}\n", t.ms());
    }
    if let Some(n) = shared.events {
        payload += &format!("e={n}\n");
    }
    payload.push('\n');
    payload += &shared.script;
    let mut body = deflate(payload.as_bytes());
    body.extend_from_slice(&crc32(payload.as_bytes()).to_be_bytes());
    format!("{PREFIX}{}", b64_encode(&body))
}

/// A full link: `base#fragment`.
pub fn link(base: &str, shared: &Shared) -> String {
    format!(
        "{}#{}",
        base.split('#').next().unwrap_or(base),
        encode(shared)
    )
}

/// Reads a link, a fragment with or without `#`, or a bare `lw2.` (or old `lw1.`) token.
pub fn decode(link: &str) -> Result<Shared, LinkError> {
    let link = link.trim();
    if link.len() > MAX_LINK_CHARS {
        return Err(LinkError::TooLong(link.len()));
    }
    let fragment = match link.find('#') {
        Some(i) => &link[i + 1..],
        None => link,
    };
    if fragment.is_empty() {
        return Err(LinkError::Empty);
    }
    let (body, checked) = if let Some(body) = fragment.strip_prefix(PREFIX) {
        (body, true)
    } else if let Some(body) = fragment.strip_prefix(PREFIX_V1) {
        // Migration from lw1: the same payload, without a checksum.
        (body, false)
    } else {
        if let Some(v) = fragment
            .strip_prefix("lw")
            .and_then(|r| r.split_once('.'))
            .map(|(v, _)| v)
        {
            if v.parse::<u32>().is_ok_and(|n| n > NEWEST) {
                return Err(LinkError::FutureVersion(format!("lw{v}")));
            }
        }
        return Err(LinkError::NotOurs);
    };
    let mut compressed = b64_decode(body)?;
    let sum = if checked {
        if compressed.len() < 5 {
            return Err(LinkError::Truncated);
        }
        let tail = compressed.split_off(compressed.len() - 4);
        Some(u32::from_be_bytes([tail[0], tail[1], tail[2], tail[3]]))
    } else {
        None
    };
    let bytes = inflate(&compressed)?;
    if sum.is_some_and(|sum| sum != crc32(&bytes)) {
        return Err(LinkError::Checksum);
    }
    let text = String::from_utf8(bytes).map_err(|_| LinkError::NotText)?;
    let text = unix_lines(&text);
    // Header lines, a blank line, the script (which may hold blank lines of its own).
    let (header, script) = match text.strip_prefix('\n') {
        Some(script) => ("", script),
        None => text.split_once("\n\n").ok_or(LinkError::Truncated)?,
    };
    let (mut at_ms, mut events) = (None, None);
    for line in header.lines() {
        if let Some(t) = line.strip_prefix("t=") {
            at_ms = t.parse().ok().map(TimeMs);
        }
        if let Some(n) = line.strip_prefix("e=") {
            events = n.parse().ok();
        }
        // Other keys are options of later versions: ignored.
    }
    if script.len() > MAX_SCRIPT_BYTES {
        return Err(LinkError::TooLarge);
    }
    Ok(Shared {
        script: script.to_string(),
        at_ms,
        events,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Shared {
        Shared {
            script: "# hello\nkind Pod cache fixed 3\n".into(),
            at_ms: Some(TimeMs(2200)),
            events: None,
        }
    }

    const PINNED_LW1: &str = "lw1.AScA2P90PTIyMDAKCiMgaGVsbG8Ka2luZCBQb2QgY2FjaGUgZml4ZWQgMwo";

    /// Pins the format: a change here must be deliberate (and old links must keep opening).
    /// The CLI's encoder; the page's (the small codec) writes other bytes for the same payload.
    #[cfg(feature = "miniz")]
    #[test]
    fn encoding_is_pinned() {
        assert_eq!(
            encode(&sample()),
            "lw2.AScA2P90PTIyMDAKCiMgaGVsbG8Ka2luZCBQb2QgY2FjaGUgZml4ZWQgMwppkIZN"
        );
        assert_eq!(
            decode(&format!(
                "https://x.example/listwatch/#{}",
                encode(&sample())
            ))
            .unwrap(),
            sample()
        );
        // The first format, as links made before lw2 carry it.
        assert_eq!(
            decode(&format!("https://x.example/listwatch/#{PINNED_LW1}")).unwrap(),
            sample()
        );
    }

    /// Migration: an lw1 link opens, and the link made from what it opened is lw2.
    #[test]
    fn lw1_links_open_and_reencode_as_lw2() {
        let opened = decode(PINNED_LW1).unwrap();
        let again = encode(&opened);
        assert!(again.starts_with("lw2."), "{again}");
        assert_eq!(decode(&again).unwrap(), sample());
        for (_, src) in crate::gallery::GALLERY {
            let s = Shared {
                script: src.to_string(),
                at_ms: Some(TimeMs(1500)),
                events: None,
            };
            // An lw1 link as the old encoder wrote it: the same payload, no checksum.
            let payload = format!("t=1500\n\n{src}");
            let old = format!(
                "lw1.{}",
                b64_encode(&miniz_oxide::deflate::compress_to_vec(
                    payload.as_bytes(),
                    9
                ))
            );
            let opened = decode(&old).unwrap();
            assert_eq!(opened, s);
            assert_eq!(decode(&encode(&opened)).unwrap(), s);
        }
    }

    #[test]
    fn crc32_is_the_ieee_one() {
        assert_eq!(crc32(b""), 0);
        assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
        assert_eq!(
            crc32(b"The quick brown fox jumps over the lazy dog"),
            0x414F_A339
        );
    }

    /// Every one-character change of a link, every one-character deletion and every cut is
    /// either refused with an error or opens exactly the original (a change in the address
    /// before `#`, or in the unused low bits of the last character). Never a different script.
    #[test]
    fn no_altered_or_cut_link_opens_as_a_different_script() {
        // The README's scenario: a few hundred characters of link, each changed every way.
        let original = Shared {
            script: "# Watch-cache overflow: 410 Gone, backoff, relist\nkind Pod cache fixed 3\n\
                     controller ctl for Pod children Other\nat 2s disconnect ctl for 0s\n\
                     at 2050ms status Pod a 1\nexpect gone ctl Pod == 1\nexpect esr\n"
                .into(),
            at_ms: Some(TimeMs(2200)),
            events: None,
        };
        let good = link("https://x.example/lw/", &original);
        let chars: Vec<char> = good.chars().collect();
        let alphabet: Vec<char> = (0x20u8..0x7f).map(char::from).collect();
        let (mut tried, mut refused) = (0, 0);
        let mut check = |altered: String, what: &str| {
            tried += 1;
            match decode(&altered) {
                Ok(s) => assert_eq!(s, original, "{what} opened as a different script"),
                Err(e) => {
                    assert!(!e.to_string().is_empty());
                    refused += 1;
                }
            }
        };
        for i in 0..chars.len() {
            for &c in &alphabet {
                if c != chars[i] {
                    let mut v = chars.clone();
                    v[i] = c;
                    check(v.into_iter().collect(), &format!("{c:?} at {i}"));
                }
            }
            let mut v = chars.clone();
            v.remove(i);
            check(v.into_iter().collect(), &format!("deleting {i}"));
            check(chars[..i].iter().collect(), &format!("cutting at {i}"));
        }
        // Nearly every change in the fragment is refused, not silently "repaired".
        assert!(
            tried > 15_000 && refused * 10 > tried * 7,
            "{refused} of {tried}"
        );
        // A change deep inside the compressed text says what happened.
        let body_at = good.find("lw2.").unwrap() + 20;
        let mut v = chars.clone();
        v[body_at] = if v[body_at] == 'A' { 'B' } else { 'A' };
        assert!(matches!(
            decode(&v.into_iter().collect::<String>()),
            Err(LinkError::Checksum | LinkError::Truncated | LinkError::TooLarge)
        ));
        assert_eq!(
            LinkError::Checksum.to_string(),
            "this link was altered or cut: its checksum does not match"
        );
    }

    /// A link made from a file with CRLF or CR line endings (as `listwatch share` makes from a
    /// Windows file) opens with `\n` line ends, header included, and the same lines; a link of
    /// the LF text opens the same.
    #[test]
    fn crlf_and_cr_links_open_with_unix_line_ends() {
        let lf = "# hello\nkind Pod\n\nat 1s create Pod a\n";
        let want = Shared {
            script: lf.into(),
            at_ms: Some(TimeMs(1500)),
            events: None,
        };
        for eol in ["\r\n", "\r", "\n"] {
            let script = lf.replace('\n', eol);
            let link = encode(&Shared {
                script: script.clone(),
                at_ms: Some(TimeMs(1500)),
                events: None,
            });
            assert_eq!(decode(&link).unwrap(), want, "{eol:?}");
            // A payload whose header has the same line ends (not what `encode` writes).
            let payload = format!("t=1500{eol}{eol}{script}");
            let mut body = miniz_oxide::deflate::compress_to_vec(payload.as_bytes(), 9);
            body.extend_from_slice(&crc32(payload.as_bytes()).to_be_bytes());
            assert_eq!(
                decode(&format!("lw2.{}", b64_encode(&body))).unwrap(),
                want,
                "{eol:?}"
            );
        }
        assert_eq!(unix_lines("a\r\r\nb\rc\n"), "a\n\nb\nc\n");
        assert!(matches!(unix_lines("a\nb"), Cow::Borrowed(_)));
    }

    #[test]
    fn round_trips_every_gallery_scenario() {
        for (_, src) in crate::gallery::GALLERY {
            let s = Shared {
                script: src.to_string(),
                at_ms: None,
                events: None,
            };
            assert_eq!(decode(&link("http://127.0.0.1:8080/", &s)).unwrap(), s);
        }
    }

    /// The moment as events applied travels beside its millisecond; a link without it (every
    /// link made before) opens as it did, and a value that is not a count is ignored.
    #[test]
    fn a_link_carries_the_event_of_its_moment() {
        let at = Shared {
            events: Some(69),
            ..sample()
        };
        assert_eq!(decode(&encode(&at)).unwrap(), at);
        assert_eq!(decode(&encode(&sample())).unwrap().events, None);
        let payload = "t=2200\ne=x\n\nkind Pod\n";
        let mut body = miniz_oxide::deflate::compress_to_vec(payload.as_bytes(), 9);
        body.extend_from_slice(&crc32(payload.as_bytes()).to_be_bytes());
        let opened = decode(&format!("lw2.{}", b64_encode(&body))).unwrap();
        assert_eq!((opened.at_ms, opened.events), (Some(TimeMs(2200)), None));
    }

    #[test]
    fn broken_links_say_what_is_wrong() {
        let good = encode(&sample());
        assert_eq!(decode("https://example.com/"), Err(LinkError::NotOurs));
        assert_eq!(decode("#"), Err(LinkError::Empty));
        assert_eq!(decode("#xyz"), Err(LinkError::NotOurs));
        assert_eq!(
            decode("#lw7.AAAA"),
            Err(LinkError::FutureVersion("lw7".into()))
        );
        assert_eq!(
            decode(&format!("#{}!", good)),
            Err(LinkError::BadCharacters)
        );
        assert_eq!(decode(&good[..good.len() - 12]), Err(LinkError::Truncated));
        // Text that inflates but does not match its checksum.
        let mut wrong = miniz_oxide::deflate::compress_to_vec(b"\nkind Pod\n", 9);
        wrong.extend_from_slice(&[1, 2, 3, 4]);
        assert_eq!(
            decode(&format!("lw2.{}", b64_encode(&wrong))),
            Err(LinkError::Checksum)
        );
        assert_eq!(decode("lw2.AAA"), Err(LinkError::Truncated));
        assert_eq!(
            decode(&PINNED_LW1[..PINNED_LW1.len() - 12]),
            Err(LinkError::Truncated)
        );
        // A bomb: 10 MB of zeros compresses to a few KB.
        let mut bomb = miniz_oxide::deflate::compress_to_vec(&vec![b'a'; 10_000_000], 9);
        assert_eq!(
            decode(&format!("lw1.{}", b64_encode(&bomb))),
            Err(LinkError::TooLarge)
        );
        bomb.extend_from_slice(&[0; 4]);
        assert_eq!(
            decode(&format!("lw2.{}", b64_encode(&bomb))),
            Err(LinkError::TooLarge)
        );
        let not_text = miniz_oxide::deflate::compress_to_vec(&[0xff, 0xfe, 0x00], 9);
        assert_eq!(
            decode(&format!("lw1.{}", b64_encode(&not_text))),
            Err(LinkError::NotText)
        );
        assert!(decode(&"A".repeat(MAX_LINK_CHARS + 1)).is_err());
        for e in [
            LinkError::Truncated,
            LinkError::TooLarge,
            LinkError::NotOurs,
        ] {
            assert!(!e.to_string().is_empty());
        }
    }
}
