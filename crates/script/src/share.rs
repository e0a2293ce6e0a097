//! Share links: the whole scenario in the URL fragment, so no server is needed.
//!
//! `#lw1.<base64url(raw deflate(payload))>` where the payload is header lines `key=value`, a blank
//! line, then the script. Keys today: `t` (the moment on screen, in ms). Unknown keys are
//! ignored, so later versions can add options; a new payload layout gets a new version prefix and
//! a migration step in `decode`.

use std::fmt;

use crate::MAX_SCRIPT_BYTES;

pub const PREFIX: &str = "lw1.";
/// Decompressed payloads above this are refused (a decompression bomb, or not ours).
pub const MAX_PAYLOAD_BYTES: usize = MAX_SCRIPT_BYTES + 1024;
/// Links longer than this are refused before decoding.
pub const MAX_LINK_CHARS: usize = 200_000;

/// What a link carries.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Shared {
    pub script: String,
    /// The moment on screen, in virtual milliseconds.
    pub at_ms: Option<u64>,
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
}

impl fmt::Display for LinkError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LinkError::Empty => write!(f, "the link carries no scenario"),
            LinkError::NotOurs => {
                write!(f, "this is not a listwatch link (it should contain #lw1.)")
            }
            LinkError::FutureVersion(v) => write!(
                f,
                "this link was made by a newer listwatch (format {v}); this page reads lw1"
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
        }
    }
}

impl std::error::Error for LinkError {}

const B64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

fn b64_encode(data: &[u8]) -> String {
    let mut out = String::with_capacity(data.len() * 4 / 3 + 4);
    for chunk in data.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |acc, (i, &b)| acc | (b as u32) << (16 - 8 * i));
        for i in 0..chunk.len() + 1 {
            out.push(B64[(n >> (18 - 6 * i) & 63) as usize] as char);
        }
    }
    out
}

fn b64_decode(s: &str) -> Result<Vec<u8>, LinkError> {
    let mut out = Vec::with_capacity(s.len() * 3 / 4);
    let (mut acc, mut bits) = (0u32, 0u32);
    for c in s.bytes() {
        let v = B64
            .iter()
            .position(|&b| b == c)
            .ok_or(LinkError::BadCharacters)? as u32;
        acc = (acc << 6) | v;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    if bits >= 6 {
        return Err(LinkError::Truncated);
    }
    Ok(out)
}

/// The fragment (without `#`) for a scenario.
pub fn encode(shared: &Shared) -> String {
    let mut payload = String::new();
    if let Some(t) = shared.at_ms {
        payload += &format!("t={t}\n");
    }
    payload.push('\n');
    payload += &shared.script;
    let compressed = miniz_oxide::deflate::compress_to_vec(payload.as_bytes(), 9);
    format!("{PREFIX}{}", b64_encode(&compressed))
}

/// A full link: `base#fragment`.
pub fn link(base: &str, shared: &Shared) -> String {
    format!(
        "{}#{}",
        base.split('#').next().unwrap_or(base),
        encode(shared)
    )
}

/// Reads a link, a fragment with or without `#`, or a bare `lw1.` token.
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
    let Some(body) = fragment.strip_prefix(PREFIX) else {
        if let Some(v) = fragment
            .strip_prefix("lw")
            .and_then(|r| r.split_once('.'))
            .map(|(v, _)| v)
        {
            if v.parse::<u32>().is_ok_and(|n| n > 1) {
                return Err(LinkError::FutureVersion(format!("lw{v}")));
            }
        }
        return Err(LinkError::NotOurs);
    };
    let compressed = b64_decode(body)?;
    let bytes = miniz_oxide::inflate::decompress_to_vec_with_limit(&compressed, MAX_PAYLOAD_BYTES)
        .map_err(|e| match e.status {
            miniz_oxide::inflate::TINFLStatus::HasMoreOutput => LinkError::TooLarge,
            _ => LinkError::Truncated,
        })?;
    let text = String::from_utf8(bytes).map_err(|_| LinkError::NotText)?;
    // Header lines, a blank line, the script (which may hold blank lines of its own).
    let (header, script) = match text.strip_prefix('\n') {
        Some(script) => ("", script),
        None => text.split_once("\n\n").ok_or(LinkError::Truncated)?,
    };
    let mut at_ms = None;
    for line in header.lines() {
        if let Some(t) = line.strip_prefix("t=") {
            at_ms = t.parse().ok();
        }
        // Other keys are options of later versions: ignored.
    }
    if script.len() > MAX_SCRIPT_BYTES {
        return Err(LinkError::TooLarge);
    }
    Ok(Shared {
        script: script.to_string(),
        at_ms,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Shared {
        Shared {
            script: "# hello\nkind Pod cache fixed 3\n".into(),
            at_ms: Some(2200),
        }
    }

    /// Pins the format: a change here must be deliberate (and old links must keep opening).
    #[test]
    fn encoding_is_pinned() {
        assert_eq!(
            encode(&sample()),
            "lw1.AScA2P90PTIyMDAKCiMgaGVsbG8Ka2luZCBQb2QgY2FjaGUgZml4ZWQgMwo"
        );
        assert_eq!(decode("https://x.example/listwatch/#lw1.AScA2P90PTIyMDAKCiMgaGVsbG8Ka2luZCBQb2QgY2FjaGUgZml4ZWQgMwo").unwrap(), sample());
    }

    #[test]
    fn round_trips_every_gallery_scenario() {
        for (_, src) in crate::gallery::GALLERY {
            let s = Shared {
                script: src.to_string(),
                at_ms: None,
            };
            assert_eq!(decode(&link("http://127.0.0.1:8080/", &s)).unwrap(), s);
        }
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
        // A bomb: 10 MB of zeros compresses to a few KB.
        let bomb = miniz_oxide::deflate::compress_to_vec(&vec![b'a'; 10_000_000], 9);
        assert_eq!(
            decode(&format!("lw1.{}", b64_encode(&bomb))),
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
