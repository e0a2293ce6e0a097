//! Numbers and durations as a script writes them, read without the standard library's float
//! parser. Below the cursor: the statement parser, the `logic` compiler and the CLI's `--at` all
//! read numbers through here, so a number is refused in the same words wherever it stands.

use listwatch_core::DurationMs;

/// The longest duration a script may write.
pub(crate) const MAX_DURATION_MS: DurationMs = DurationMs(24 * 3_600_000);

/// The most significant digits a number in a script may have.
pub const MAX_DIGITS: usize = 15;

/// Why a number (or the number of a duration) was refused.
#[derive(Clone, Debug, PartialEq)]
pub enum NumberError {
    /// Not a number as `str::parse::<f64>` reads one, `inf` or `NaN`; or a duration out of range
    /// or without its unit.
    Malformed,
    /// The number as written: it has more than `MAX_DIGITS` significant digits, more than an f64
    /// keeps, and listwatch does not round a script's numbers silently.
    TooManyDigits(String),
}

impl std::fmt::Display for NumberError {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        match self {
            NumberError::Malformed => write!(f, "not a number"),
            NumberError::TooManyDigits(n) => write!(
                f,
                "{n} has more than {MAX_DIGITS} significant digits; listwatch numbers keep \
                 {MAX_DIGITS}"
            ),
        }
    }
}

/// A decimal number as `str::parse::<f64>` reads it (a sign, digits with a point, an exponent),
/// with at most `MAX_DIGITS` significant digits (more are refused), and without the standard
/// library's float parser, whose tables cost the page's first load 14 KB gzipped. Up to 15 digits
/// and powers of ten up to 22 the value is exactly std's: digits and power are exact in an f64,
/// and one multiplication or division rounds correctly. Smaller numbers (below 1e-7) are within
/// rounding of it, which no caller can tell (they round to whole milliseconds and parts per
/// million); larger ones are beyond every limit. `inf` and `NaN` are refused (no caller takes
/// them).
pub fn decimal(s: &str) -> Result<f64, NumberError> {
    let b = s.as_bytes();
    let (neg, i) = sign(b, 0);
    let (digits, frac, i) = mantissa(b, i);
    let (e, i) = exponent(b, i).ok_or(NumberError::Malformed)?;
    if digits.is_empty() || i != b.len() {
        return Err(NumberError::Malformed);
    }
    let Some(first) = digits.iter().position(|&d| d != 0) else {
        return Ok(if neg { -0.0 } else { 0.0 });
    };
    let last = digits.iter().rposition(|&d| d != 0).unwrap_or(first);
    let sig = &digits[first..=last];
    if sig.len() > MAX_DIGITS {
        return Err(NumberError::TooManyDigits(s.to_string()));
    }
    let m = sig.iter().fold(0u64, |m, &d| m * 10 + u64::from(d)) as f64;
    // The trailing zeros left out of `sig` count as powers of ten.
    let v = scale(m, e - frac + (digits.len() - 1 - last) as i64);
    Ok(if neg { -v } else { v })
}

/// A `-` or `+` at `i`: whether it is negative, and where the rest starts.
fn sign(b: &[u8], i: usize) -> (bool, usize) {
    match b.get(i) {
        Some(b'-') => (true, i + 1),
        Some(b'+') => (false, i + 1),
        _ => (false, i),
    }
}

/// Digits with at most one point from `i`: the digits, how many of them follow the point, and
/// where they end.
fn mantissa(b: &[u8], mut i: usize) -> (Vec<u8>, i64, usize) {
    let mut digits: Vec<u8> = vec![];
    let mut frac = 0i64;
    let mut point = false;
    while let Some(&c) = b.get(i) {
        match c {
            b'0'..=b'9' => {
                digits.push(c - b'0');
                frac += i64::from(point);
            }
            b'.' if !point => point = true,
            _ => break,
        }
        i += 1;
    }
    (digits, frac, i)
}

/// The exponent at `i` (`e` or `E`, a sign, digits), 0 where there is none, and where it ends;
/// `None` for an `e` without digits.
fn exponent(b: &[u8], i: usize) -> Option<(i64, usize)> {
    if !matches!(b.get(i), Some(b'e' | b'E')) {
        return Some((0, i));
    }
    let (neg, start) = sign(b, i + 1);
    let mut i = start;
    let mut e = 0i64;
    while let Some(&c) = b.get(i).filter(|c| c.is_ascii_digit()) {
        e = (e * 10 + i64::from(c - b'0')).min(1_000_000);
        i += 1;
    }
    (i > start).then_some((if neg { -e } else { e }, i))
}

/// `m` times ten to the `exp`: one correctly rounded step while the power of ten is exact in an
/// f64 (up to 10^22), past it at most 400 more (every value there is 0 or infinite).
fn scale(m: f64, exp: i64) -> f64 {
    let pow = |k: i64| (0..k).fold(1.0f64, |p, _| p * 10.0);
    match exp {
        0..=22 => m * pow(exp),
        -22..=-1 => m / pow(-exp),
        e if e > 22 => m * pow(22) * pow((e - 22).min(400)),
        e => m / pow(22) / pow((-e - 22).min(400)),
    }
}

/// A duration: a number and a unit (`ms`, `s`, `m`, `h`), at most 10^12 of the unit, to the
/// nearest millisecond.
pub fn parse_duration(s: &str) -> Result<DurationMs, NumberError> {
    let split = s
        .find(|c: char| c.is_ascii_alphabetic())
        .ok_or(NumberError::Malformed)?;
    let (num, unit) = s.split_at(split);
    let mult = match unit {
        "ms" => 1.0,
        "s" => 1000.0,
        "m" => 60_000.0,
        "h" => 3_600_000.0,
        _ => return Err(NumberError::Malformed),
    };
    let n: f64 = decimal(num)?;
    if !n.is_finite() || !(0.0..=1e12).contains(&n) {
        return Err(NumberError::Malformed);
    }
    Ok(DurationMs((n * mult).round() as u64))
}

#[cfg(test)]
mod decimal_tests {
    use super::{decimal, parse_duration, DurationMs, NumberError, MAX_DIGITS};

    /// Numbers in every form: signs, integer parts, fractions and exponents, and junk.
    fn number_cases() -> Vec<String> {
        let mut cases: Vec<String> = vec![];
        let ints = [
            "",
            "0",
            "1",
            "00",
            "7",
            "10",
            "250",
            "0001",
            "123456789012345",
            "999999999999999",
            "1234567890123456",
        ];
        let fracs = [
            "",
            ".",
            ".0",
            ".5",
            ".05",
            ".000",
            ".25",
            ".1",
            ".3",
            ".7",
            ".123456789",
            ".000000000000000000000001",
            ".50000000000000000000",
        ];
        let exps = [
            "", "e0", "e3", "E-3", "e+2", "e-25", "e22", "e23", "e-22", "e", "e+",
        ];
        for sign in ["", "-", "+"] {
            for i in ints {
                for f in fracs {
                    for e in exps {
                        cases.push(format!("{sign}{i}{f}{e}"));
                    }
                }
            }
        }
        for junk in [
            "", ".", "-", "+", "..5", "1.2.3", "1_000", "inf", "NaN", "1 ", " 1", "--1", "0x10",
        ] {
            cases.push(junk.to_string());
        }
        cases
    }

    /// Every number std reads with at most 15 significant digits and a power of ten within 22 is
    /// read to the same bits; durations and percentages agree with std's reading everywhere else
    /// too, except the numbers with more digits, which are refused.
    #[test]
    fn decimal_reads_what_std_reads() {
        let significant = |s: &str| {
            let m = s.split(['e', 'E']).next().unwrap();
            let d: String = m.chars().filter(char::is_ascii_digit).collect();
            d.trim_start_matches('0').trim_end_matches('0').len()
        };
        for s in &number_cases() {
            let std: Option<f64> = s.parse().ok();
            if significant(s) > MAX_DIGITS {
                // A number std reads is refused for its digits; anything else is no number.
                let why = match std {
                    Some(_) => NumberError::TooManyDigits(s.clone()),
                    None => NumberError::Malformed,
                };
                assert_eq!(decimal(s), Err(why), "{s}");
                continue;
            }
            let ours = decimal(s).ok();
            match (std, ours) {
                (Some(a), Some(b)) if a.is_finite() => {
                    let exact = a == 0.0 || (1e-7..=1e22).contains(&a.abs());
                    if exact {
                        assert_eq!(a.to_bits(), b.to_bits(), "{s}: {a} vs {b}");
                    }
                }
                (Some(a), None) => assert!(!a.is_finite(), "{s}"),
                (None, None) | (Some(_), Some(_)) => {}
                (None, Some(b)) => panic!("{s}: std refuses, decimal reads {b}"),
            }
            // What the callers make of it: whole milliseconds, parts per million.
            let old_duration = |unit: &str, mult: f64| {
                let n: f64 = s.parse().ok()?;
                (n.is_finite() && (0.0..=1e12).contains(&n))
                    .then(|| DurationMs((n * mult).round() as u64))
                    .filter(|_| !unit.is_empty())
            };
            for (unit, mult) in [
                ("ms", 1.0),
                ("s", 1000.0),
                ("m", 60_000.0),
                ("h", 3_600_000.0),
            ] {
                if s.contains(['e', 'E']) || s.contains("inf") || s.contains("NaN") {
                    continue; // a duration's number ends at its first letter
                }
                assert_eq!(
                    parse_duration(&format!("{s}{unit}")).ok(),
                    old_duration(unit, mult),
                    "{s}{unit}"
                );
            }
            let pct = |v: Option<f64>| {
                v.filter(|x| (0.0..=100.0).contains(x))
                    .map(|p| (p * 10_000.0) as u32)
            };
            assert_eq!(pct(ours), pct(std), "{s}%");
        }
    }
}
