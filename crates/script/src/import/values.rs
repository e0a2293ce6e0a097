//! The small values every format writes: timestamps, Go durations, resource versions, Go-quoted
//! strings, and the names a kind and a client get in the script. No float parsing from std (the
//! page carries none): numbers are read digit by digit, and everything has a bound.

use super::Stamp;

/// The most digits a resource version may have: more is not a number any apiserver writes
/// (etcd's revisions are 64-bit), so it is refused rather than carried.
pub const MAX_RV_DIGITS: usize = 38;

/// A resource version as written: decimal digits only, at most [`MAX_RV_DIGITS`].
pub fn rv(s: &str) -> Option<u128> {
    if s.is_empty() || s.len() > MAX_RV_DIGITS || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

/// A small count (items received, seconds): digits only, at most 18 of them.
pub fn count(s: &str) -> Option<u64> {
    if s.is_empty() || s.len() > 18 || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

/// Days since 1970-01-01 of a civil date (Howard Hinnant's `days_from_civil`).
pub fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m as i64 + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d as i64 - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn days_in_month(y: i64, m: u32) -> u32 {
    match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        _ if (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 => 29,
        _ => 28,
    }
}

/// `n` ASCII digits at `s[i..]`.
fn digits(s: &[u8], i: usize, n: usize) -> Option<u32> {
    let d = s.get(i..i + n)?;
    if !d.iter().all(u8::is_ascii_digit) {
        return None;
    }
    Some(d.iter().fold(0, |a, &b| a * 10 + (b - b'0') as u32))
}

/// `hh:mm:ss` at `s[i..]` and an optional fraction: the milliseconds of the day and the index
/// after it.
fn clock(s: &[u8], i: usize) -> Option<(u32, usize)> {
    let (h, m, sec) = (digits(s, i, 2)?, digits(s, i + 3, 2)?, digits(s, i + 6, 2)?);
    if s.get(i + 2) != Some(&b':') || s.get(i + 5) != Some(&b':') || h > 23 || m > 59 || sec > 60 {
        return None;
    }
    let mut end = i + 8;
    let mut ms = 0;
    if s.get(end) == Some(&b'.') || s.get(end) == Some(&b',') {
        let start = end + 1;
        end = start;
        while end < s.len() && s[end].is_ascii_digit() && end - start < 12 {
            end += 1;
        }
        if end == start {
            return None;
        }
        // The first three digits are the milliseconds; finer digits are dropped.
        let frac = &s[start..end.min(start + 3)];
        ms = frac.iter().fold(0, |a, &b| a * 10 + (b - b'0') as u32) * [100, 10, 1][frac.len() - 1];
    }
    Some(((h * 3600 + m * 60 + sec.min(59)) * 1000 + ms, end))
}

/// An RFC 3339 timestamp (`2024-06-30T19:41:14.278898Z`, `2023-11-18T13:13:03+03:00`; a space
/// for the `T` and a missing zone, read as UTC, are accepted): milliseconds since 1970 and the
/// bytes it took.
pub fn rfc3339(s: &str) -> Option<(i64, usize)> {
    let b = s.as_bytes();
    let (y, mo, d) = (digits(b, 0, 4)?, digits(b, 5, 2)?, digits(b, 8, 2)?);
    if b.get(4) != Some(&b'-')
        || b.get(7) != Some(&b'-')
        || !matches!(b.get(10), Some(b'T' | b't' | b' '))
    {
        return None;
    }
    if !(1..=12).contains(&mo) || d == 0 || d > days_in_month(y as i64, mo) {
        return None;
    }
    let (ms, mut end) = clock(b, 11)?;
    let mut offset_min: i64 = 0;
    match b.get(end) {
        Some(b'Z' | b'z') => end += 1,
        Some(&sign @ (b'+' | b'-')) => {
            let (h, m) = (digits(b, end + 1, 2)?, digits(b, end + 4, 2)?);
            if b.get(end + 3) != Some(&b':') || h > 23 || m > 59 {
                return None;
            }
            offset_min = (h * 60 + m) as i64 * if sign == b'+' { 1 } else { -1 };
            end += 6;
        }
        _ => {}
    }
    let days = days_from_civil(y as i64, mo, d);
    Some((days * 86_400_000 + ms as i64 - offset_min * 60_000, end))
}

/// klog's `mmdd hh:mm:ss.uuuuuu` (no year): the stamp and the bytes it took.
pub fn klog_time(s: &str) -> Option<(Stamp, usize)> {
    let b = s.as_bytes();
    let (month, day) = (digits(b, 0, 2)?, digits(b, 2, 2)?);
    if b.get(4) != Some(&b' ') || !(1..=12).contains(&month) || day == 0 || day > 31 {
        return None;
    }
    let (ms, end) = clock(b, 5)?;
    Some((
        Stamp::NoYear {
            month: month as u8,
            day: day as u8,
            ms,
        },
        end,
    ))
}

/// syslog's and journald's `May 13 19:44:54` (no year).
pub fn syslog_time(s: &str) -> Option<(Stamp, usize)> {
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let month = MONTHS.iter().position(|m| s.starts_with(m))? as u8 + 1;
    let b = s.as_bytes();
    if b.get(3) != Some(&b' ') {
        return None;
    }
    let day = match (b.get(4), b.get(5)) {
        (Some(b' '), Some(d)) if d.is_ascii_digit() => (d - b'0') as u32,
        (Some(_), Some(_)) => digits(b, 4, 2)?,
        _ => return None,
    };
    if b.get(6) != Some(&b' ') || day == 0 || day > 31 {
        return None;
    }
    let (ms, end) = clock(b, 7)?;
    Some((
        Stamp::NoYear {
            month,
            day: day as u8,
            ms,
        },
        end,
    ))
}

/// The milliseconds since 1970 of a stamp without a year, in `year`.
pub fn in_year(year: i64, month: u8, day: u8, ms: u32) -> i64 {
    let day = (day as u32).min(days_in_month(year, month as u32));
    days_from_civil(year, month as u32, day) * 86_400_000 + ms as i64
}

/// The civil date of a moment (milliseconds since 1970): year, month, day (Howard Hinnant's
/// `civil_from_days`).
fn civil_date(epoch_ms: i64) -> (i64, u32, u32) {
    let z = epoch_ms.div_euclid(86_400_000) + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (yoe + era * 400 + (m <= 2) as i64, m, d)
}

/// The year of a moment (milliseconds since 1970).
pub fn year_of(epoch_ms: i64) -> i64 {
    civil_date(epoch_ms).0
}

/// A moment as people read it: `2020-05-28 09:30:46.056` (UTC, or the log's own clock).
pub fn civil(epoch_ms: i64) -> String {
    let (y, m, d) = civil_date(epoch_ms);
    let ms = epoch_ms.rem_euclid(86_400_000);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02}.{:03}",
        ms / 3_600_000,
        ms / 60_000 % 60,
        ms / 1000 % 60,
        ms % 1000
    )
}

/// The longest duration read: longer ones are not durations a log means (100 days).
const MAX_DURATION_MS: u64 = 100 * 86_400_000;

/// A Go `time.Duration` as `String()` writes it (`10h0m0s`, `39.15545352s`, `500ms`, `2.5µs`,
/// `0s`), in milliseconds (rounded down); None if malformed or longer than 100 days.
pub fn go_duration_ms(s: &str) -> Option<u64> {
    if s.is_empty() || s.len() > 40 {
        return None;
    }
    if s == "0" {
        return Some(0);
    }
    let mut total_us: u128 = 0;
    let mut rest = s;
    while !rest.is_empty() {
        let num_end = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .filter(|&i| i > 0)?;
        let (num, tail) = rest.split_at(num_end);
        let (int, frac) = num.split_once('.').unwrap_or((num, ""));
        if int.is_empty() && frac.is_empty() || int.len() > 15 || frac.contains('.') {
            return None;
        }
        let unit_end = tail
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(tail.len());
        let (unit, next) = tail.split_at(unit_end);
        let unit_us: u128 = match unit {
            "h" => 3_600_000_000,
            "m" => 60_000_000,
            "s" => 1_000_000,
            "ms" => 1000,
            "us" | "µs" | "μs" => 1,
            "ns" => 0,
            _ => return None,
        };
        let int: u128 = if int.is_empty() { 0 } else { int.parse().ok()? };
        let frac_digits = &frac[..frac.len().min(9)];
        let frac_val: u128 = if frac_digits.is_empty() {
            0
        } else {
            frac_digits.parse().ok()?
        };
        let scale = 10u128.pow(frac_digits.len() as u32);
        total_us += int * unit_us + frac_val * unit_us / scale;
        if total_us / 1000 > MAX_DURATION_MS as u128 {
            return None;
        }
        rest = next;
    }
    Some((total_us / 1000) as u64)
}

/// A Prometheus sample value (`182711`, `4.1361611e+07`, `1600`): its integer part, or None for
/// a negative number, NaN, ±Inf, or one above 10^30.
pub fn sample_value(s: &str) -> Option<u128> {
    let s = s.strip_prefix('+').unwrap_or(s);
    let (mantissa, exp) = match s.find(['e', 'E']) {
        Some(i) => (&s[..i], s[i + 1..].parse::<i32>().ok()?),
        None => (s, 0),
    };
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let all: String = format!("{int}{frac}");
    if all.is_empty() || all.len() > 40 || !all.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    // value = all × 10^(exp − frac.len())
    let shift = exp as i64 - frac.len() as i64;
    let trimmed = all.trim_start_matches('0');
    if trimmed.is_empty() {
        return Some(0);
    }
    if trimmed.len() as i64 + shift > 31 {
        return None;
    }
    let digits: u128 = trimmed.parse().ok()?;
    if shift >= 0 {
        digits.checked_mul(10u128.checked_pow(shift as u32)?)
    } else if -shift > 38 {
        Some(0)
    } else {
        Some(digits / 10u128.pow((-shift) as u32))
    }
}

/// A Go-quoted string (`"..."` with `\"`, `\\`, `\n`, `\t`, `\uXXXX`) at the start of `s`: its
/// text and the bytes it took.
pub fn go_quoted(s: &str) -> Option<(String, usize)> {
    let mut chars = s.char_indices();
    if chars.next()?.1 != '"' {
        return None;
    }
    let mut out = String::new();
    while let Some((i, c)) = chars.next() {
        match c {
            '"' => return Some((out, i + 1)),
            '\\' => match chars.next()?.1 {
                'n' => out.push('\n'),
                't' => out.push('\t'),
                'r' => out.push('\r'),
                'u' => {
                    let hex: String = (0..4).filter_map(|_| chars.next().map(|x| x.1)).collect();
                    out.push(char::from_u32(u32::from_str_radix(&hex, 16).ok()?)?);
                }
                other => out.push(other),
            },
            c => out.push(c),
        }
    }
    None
}

/// The script's kind name for a Go type as client-go prints it (`*v1.Pod`, `*v1beta1.Event`,
/// `*unstructured.Unstructured`): the type's name, letters and digits, starting with a letter.
pub fn kind_from_type(t: &str) -> Option<String> {
    let t = t.trim().trim_start_matches('*');
    let name = t.rsplit('.').next()?;
    kind_name(name)
}

/// A kind name the language accepts: ASCII letters and digits starting with a letter, at most 40
/// characters (room for a controller name built from it).
fn kind_name(name: &str) -> Option<String> {
    let n: String = name
        .chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .take(40)
        .collect();
    let first = n.chars().next()?;
    if !first.is_ascii_alphabetic() {
        return None;
    }
    let mut out = String::new();
    out.push(first.to_ascii_uppercase());
    out.push_str(&n[1..]);
    Some(out)
}

/// The kind of a resource as the apiserver names it (`pods`, `deployments.apps`,
/// `runtimeclasses`): the built-in ones by table, others by dropping the plural.
pub fn kind_from_resource(resource: &str) -> Option<String> {
    const KNOWN: &[(&str, &str)] = &[
        ("apiservices", "APIService"),
        ("certificatesigningrequests", "CertificateSigningRequest"),
        ("clusterrolebindings", "ClusterRoleBinding"),
        ("clusterroles", "ClusterRole"),
        ("configmaps", "ConfigMap"),
        ("controllerrevisions", "ControllerRevision"),
        ("cronjobs", "CronJob"),
        ("csidrivers", "CSIDriver"),
        ("csinodes", "CSINode"),
        ("csistoragecapacities", "CSIStorageCapacity"),
        ("customresourcedefinitions", "CustomResourceDefinition"),
        ("daemonsets", "DaemonSet"),
        ("deployments", "Deployment"),
        ("endpoints", "Endpoints"),
        ("endpointslices", "EndpointSlice"),
        ("events", "Event"),
        ("flowschemas", "FlowSchema"),
        ("horizontalpodautoscalers", "HorizontalPodAutoscaler"),
        ("ingressclasses", "IngressClass"),
        ("ingresses", "Ingress"),
        ("jobs", "Job"),
        ("leases", "Lease"),
        ("limitranges", "LimitRange"),
        (
            "mutatingwebhookconfigurations",
            "MutatingWebhookConfiguration",
        ),
        ("namespaces", "Namespace"),
        ("networkpolicies", "NetworkPolicy"),
        ("nodes", "Node"),
        ("persistentvolumeclaims", "PersistentVolumeClaim"),
        ("persistentvolumes", "PersistentVolume"),
        ("poddisruptionbudgets", "PodDisruptionBudget"),
        ("pods", "Pod"),
        ("podtemplates", "PodTemplate"),
        ("priorityclasses", "PriorityClass"),
        ("prioritylevelconfigurations", "PriorityLevelConfiguration"),
        ("replicasets", "ReplicaSet"),
        ("replicationcontrollers", "ReplicationController"),
        ("resourcequotas", "ResourceQuota"),
        ("rolebindings", "RoleBinding"),
        ("roles", "Role"),
        ("runtimeclasses", "RuntimeClass"),
        ("secrets", "Secret"),
        ("serviceaccounts", "ServiceAccount"),
        ("services", "Service"),
        ("statefulsets", "StatefulSet"),
        ("storageclasses", "StorageClass"),
        (
            "validatingwebhookconfigurations",
            "ValidatingWebhookConfiguration",
        ),
        ("volumeattachments", "VolumeAttachment"),
    ];
    let plural = resource.split(['.', '/']).next()?.to_ascii_lowercase();
    if let Some((_, k)) = KNOWN.iter().find(|(r, _)| *r == plural) {
        return Some(k.to_string());
    }
    let singular = if let Some(s) = plural.strip_suffix("ies") {
        format!("{s}y")
    } else if let Some(s) = plural
        .strip_suffix("ses")
        .or_else(|| plural.strip_suffix("xes"))
    {
        format!("{s}{}", &plural[s.len()..s.len() + 1])
    } else {
        plural.strip_suffix('s').unwrap_or(&plural).to_string()
    };
    kind_name(&singular)
}

/// A controller name from a reflector's name or a client (`k8s.io/client-go/informers/
/// factory.go:134` → `factory-134`), letters, digits and `-`, starting with a letter, at most
/// 40 characters.
pub fn short_name(client: &str) -> String {
    let last = client
        .trim_end_matches('/')
        .rsplit('/')
        .next()
        .unwrap_or(client);
    let last = last.replace(".go:", "-");
    let mut out = String::new();
    for c in last.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('-') && !out.is_empty() {
            out.push('-');
        }
        if out.len() >= 40 {
            break;
        }
    }
    let out = out.trim_end_matches('-').to_string();
    match out.chars().next() {
        Some(c) if c.is_ascii_alphabetic() => out,
        Some(_) => format!("r-{out}").chars().take(40).collect(),
        None => "client".to_string(),
    }
}

/// A time in the script's words: `12s`, `1.25s`, `90ms`.
pub fn script_time(ms: u64) -> String {
    if ms.is_multiple_of(1000) {
        format!("{}s", ms / 1000)
    } else if ms < 1000 {
        format!("{ms}ms")
    } else {
        let s = format!("{}.{:03}", ms / 1000, ms % 1000);
        format!("{}s", s.trim_end_matches('0'))
    }
}

/// A text that goes into a one-line comment or a quoted string of the script: control
/// characters become spaces, and it is cut at `max` characters.
pub fn one_line(s: &str, max: usize) -> String {
    let mut out: String = s
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .take(max)
        .collect();
    if s.chars().count() > max {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_read_as_their_formats_write_them() {
        // audit.k8s.io/v1 `requestReceivedTimestamp` (metav1.MicroTime).
        let (t, n) = rfc3339("2024-06-30T19:41:14.278898Z").unwrap();
        assert_eq!(t, 1_719_776_474_278);
        assert_eq!(n, 27);
        // An offset moves the moment.
        assert_eq!(
            rfc3339("2023-11-18T13:13:03+03:00").unwrap().0,
            rfc3339("2023-11-18T10:13:03Z").unwrap().0
        );
        assert_eq!(rfc3339("2023-02-29T00:00:00Z"), None, "not a leap year");
        assert_eq!(year_of(t), 2024);
        assert_eq!(civil(t), "2024-06-30 19:41:14.278");
        assert_eq!(year_of(in_year(2000, 12, 31, 0)), 2000);
        let (s, n) = klog_time("0122 10:30:13.635304 ").unwrap();
        assert_eq!(
            s,
            Stamp::NoYear {
                month: 1,
                day: 22,
                ms: 37_813_635
            }
        );
        assert_eq!(n, 20);
        assert!(syslog_time("May 13 19:44:54 k8s-node04").is_some());
        assert!(syslog_time("Dec  9 01:02:03 h").is_some());
    }

    #[test]
    fn go_durations_and_sample_values() {
        assert_eq!(go_duration_ms("10h0m0s"), Some(36_000_000));
        assert_eq!(go_duration_ms("39.15545352s"), Some(39_155));
        assert_eq!(go_duration_ms("1m30s"), Some(90_000));
        assert_eq!(go_duration_ms("500ms"), Some(500));
        assert_eq!(go_duration_ms("0s"), Some(0));
        assert_eq!(go_duration_ms("2.5µs"), Some(0));
        assert_eq!(go_duration_ms("9999999h"), None);
        assert_eq!(go_duration_ms("5x"), None);
        assert_eq!(sample_value("4.1361611e+07"), Some(41_361_611));
        assert_eq!(sample_value("1600"), Some(1600));
        assert_eq!(sample_value("1e30"), Some(10u128.pow(30)));
        assert_eq!(sample_value("1e31"), None);
        assert_eq!(sample_value("NaN"), None);
        assert_eq!(sample_value("-1"), None);
        assert_eq!(rv(&"9".repeat(39)), None);
    }

    #[test]
    fn names_for_the_script() {
        assert_eq!(kind_from_type("*v1.Pod").as_deref(), Some("Pod"));
        assert_eq!(kind_from_type("*v1beta1.Event").as_deref(), Some("Event"));
        assert_eq!(
            kind_from_resource("deployments.apps").as_deref(),
            Some("Deployment")
        );
        assert_eq!(
            kind_from_resource("ipamblocks").as_deref(),
            Some("Ipamblock")
        );
        assert_eq!(kind_from_resource("ingresses").as_deref(), Some("Ingress"));
        assert_eq!(
            short_name("k8s.io/client-go/informers/factory.go:134"),
            "factory-134"
        );
        assert_eq!(
            short_name("object-\"kube-system\"/\"default-token-h8dz9\""),
            "default-token-h8dz9"
        );
        assert_eq!(short_name("123"), "r-123");
        assert_eq!(script_time(1250), "1.25s");
        assert_eq!(script_time(90), "90ms");
        assert_eq!(script_time(3_000), "3s");
    }
}
