//! client-go's reflector and informer messages, as klog writes them: the printf style (client-go
//! up to 1.32, `<name>: <text>`) and the structured style (1.33+, `"Msg" key="value" ...`), with
//! or without klog's header (`I1202 10:00:05.123456   1234 reflector.go:NNN] `), behind a
//! syslog/journald or CRI prefix, inside Prometheus' go-kit adapter (`level=warn ts=... msg="..."`)
//! or a JSON log entry (klog's JSON format, controller-runtime's zap).
//!
//! Every message is a row of `MESSAGES`: its text, the client-go file it comes from and its call
//! site (`file:line`) by release, from the release tags (docs/import.md has the table's source).
//! The header's call site narrows the version a line comes from.

use serde_json::{Map, Value};

use super::values::{self, go_duration_ms, go_quoted, kind_from_type, one_line};
use super::{Fact, Obs, Recogniser, Seen, Stamp};

/// Which style a message is written in.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Style {
    Printf,
    Structured,
}

/// One message client-go writes, and where.
struct Message {
    id: &'static str,
    style: Style,
    /// The structured message, or the printf format's fixed words (how it is found).
    text: &'static str,
    /// The file and text, for the report.
    source: &'static str,
    /// The releases that write it in this style, when no call site narrows it.
    versions: &'static str,
    /// The file of its call site (the klog header's `file:line`).
    file: &'static str,
    /// Its call sites: (first minor, last minor, line) at the `kubernetes-1.N.0` tags.
    sites: &'static [(u8, u8, u16)],
}

use Style::{Printf, Structured};

const RF: &str = "reflector.go";
const SI: &str = "shared_informer.go";

/// client-go `tools/cache/reflector.go` and `shared_informer.go` at the `kubernetes-1.N.0` tags
/// (the columns 1.19, 1.22, 1.23–1.24, 1.25–1.26 and 1.27 to 1.36; research cross-checked against
/// six public pastes).
static MESSAGES: &[Message] = &[
    Message {
        id: "client-go/reflector/watch-ended",
        style: Printf,
        text: "watch of",
        source: "client-go tools/cache/reflector.go: klog.Warningf(\"%s: watch of %v ended with: %v\")",
        versions: "client-go up to 1.32 (a 410 at Warning only up to 1.17)",
        file: RF,
        sites: &[
            (13, 13, 270),
            (15, 15, 302),
            (19, 19, 424),
            (22, 22, 441),
            (23, 24, 442),
            (25, 26, 347),
            (27, 27, 456),
            (28, 28, 458),
            (29, 29, 462),
            (30, 30, 470),
            (31, 31, 484),
            (32, 32, 492),
        ],
    },
    Message {
        id: "client-go/reflector/watch-closed-410",
        style: Printf,
        text: "watch of",
        source: "client-go tools/cache/reflector.go: klog.V(4).Infof(\"%s: watch of %v closed with: %v\")",
        versions: "client-go 1.18 to 1.32 (V4)",
        file: RF,
        sites: &[
            (18, 18, 400),
            (19, 19, 121),
            (19, 19, 422),
            (22, 22, 132),
            (22, 22, 435),
            (23, 24, 132),
            (23, 24, 436),
            (25, 26, 134),
            (25, 26, 338),
            (27, 27, 142),
            (27, 27, 443),
            (28, 28, 141),
            (28, 28, 445),
            (29, 29, 141),
            (29, 29, 449),
            (30, 30, 144),
            (30, 30, 457),
            (31, 31, 152),
            (31, 31, 471),
            (32, 32, 160),
            (32, 32, 479),
        ],
    },
    Message {
        id: "client-go/reflector/watch-429",
        style: Printf,
        text: "watch of",
        source: "client-go tools/cache/reflector.go: klog.V(2).Infof(\"%s: watch of %v returned 429 - backing off\")",
        versions: "client-go 1.27 to 1.32 (V2)",
        file: RF,
        sites: &[
            (27, 27, 445),
            (28, 28, 447),
            (29, 29, 451),
            (30, 30, 459),
            (31, 31, 473),
            (32, 32, 481),
        ],
    },
    Message {
        id: "client-go/reflector/list-failed",
        style: Printf,
        text: ": failed to list ",
        source: "client-go tools/cache/reflector.go: klog.Warningf(\"%s: failed to list %v: %v\")",
        versions: "client-go 1.23 to 1.32 (Warning)",
        file: RF,
        sites: &[
            (23, 24, 324),
            (25, 26, 424),
            (27, 27, 533),
            (28, 28, 535),
            (29, 29, 539),
            (30, 30, 547),
            (31, 31, 561),
            (32, 32, 569),
        ],
    },
    Message {
        id: "client-go/reflector/list-failed-old",
        style: Printf,
        text: ": Failed to list ",
        source: "client-go tools/cache/reflector.go: utilruntime.HandleError(fmt.Errorf(\"%s: Failed to list %v: %v\"))",
        versions: "client-go up to 1.18",
        file: RF,
        sites: &[(18, 18, 178)],
    },
    Message {
        id: "client-go/reflector/failed-to-watch",
        style: Printf,
        text: ": Failed to watch ",
        source: "client-go tools/cache/reflector.go: utilruntime.HandleError(fmt.Errorf(\"%s: Failed to watch %v: %v\"))",
        versions: "client-go 1.19 to 1.32 (Error)",
        file: RF,
        sites: &[
            (19, 19, 127),
            (22, 22, 138),
            (23, 24, 138),
            (25, 26, 140),
            (27, 27, 148),
            (28, 28, 147),
            (29, 29, 147),
            (30, 30, 150),
            (31, 31, 158),
            (32, 32, 166),
        ],
    },
    Message {
        id: "client-go/reflector/watch-close",
        style: Printf,
        text: ": Watch close - ",
        source: "client-go tools/cache/reflector.go: klog.V(4).Infof(\"%s: Watch close - %v total %v items received\")",
        versions: "client-go up to 1.32 (V4)",
        file: RF,
        sites: &[
            (19, 19, 515),
            (22, 22, 535),
            (23, 24, 536),
            (25, 26, 559),
            (27, 27, 788),
            (28, 28, 790),
            (29, 29, 800),
            (30, 30, 808),
            (31, 31, 871),
            (32, 32, 879),
        ],
    },
    Message {
        id: "client-go/reflector/forcing-resync",
        style: Printf,
        text: ": forcing resync",
        source: "client-go tools/cache/reflector.go: klog.V(4).Infof(\"%s: forcing resync\")",
        versions: "client-go up to 1.32 (V4)",
        file: RF,
        sites: &[
            (19, 19, 369),
            (22, 22, 381),
            (23, 24, 382),
            (25, 26, 281),
            (27, 27, 376),
            (28, 28, 378),
            (29, 29, 377),
            (30, 30, 385),
            (31, 31, 389),
            (32, 32, 397),
        ],
    },
    Message {
        id: "client-go/reflector/listing",
        style: Printf,
        text: "Listing and watching ",
        source: "client-go tools/cache/reflector.go: klog.V(3).Infof(\"Listing and watching %v from %s\")",
        versions: "client-go up to 1.32 (V3)",
        file: RF,
        sites: &[
            (19, 19, 243),
            (22, 22, 255),
            (23, 24, 255),
            (25, 26, 257),
            (27, 27, 323),
            (28, 28, 325),
            (29, 29, 325),
            (30, 30, 332),
            (31, 31, 341),
            (32, 32, 349),
        ],
    },
    Message {
        id: "client-go/reflector/starting",
        style: Printf,
        text: "Starting reflector ",
        source: "client-go tools/cache/reflector.go: klog.V(3).Infof(\"Starting reflector %s (%s) from %s\")",
        versions: "client-go up to 1.32 (V2, V3 from 1.27)",
        file: RF,
        sites: &[
            (19, 19, 207),
            (22, 22, 219),
            (23, 24, 219),
            (25, 26, 221),
            (27, 27, 287),
            (28, 28, 289),
            (29, 29, 289),
            (30, 30, 296),
            (31, 31, 305),
            (32, 32, 313),
        ],
    },
    Message {
        id: "client-go/reflector/caches-populated",
        style: Printf,
        text: "Caches populated for ",
        source: "client-go tools/cache/reflector.go: klog.V(2).Infof(\"Caches populated for %v from %s\")",
        versions: "client-go 1.29 to 1.32 (V2)",
        file: RF,
        sites: &[(29, 29, 351), (30, 30, 359), (31, 31, 368), (32, 32, 376)],
    },
    Message {
        id: "client-go/reflector/watchlist-fallback",
        style: Printf,
        text: "The watchlist request ended with an error, falling back to the standard LIST/WATCH semantics",
        source: "client-go tools/cache/reflector.go: klog.Warningf(\"The watchlist request ended with an error, falling back to the standard LIST/WATCH semantics because making progress is better than deadlocking, err = %v\")",
        versions: "client-go 1.27 to 1.32 (Warning)",
        file: RF,
        sites: &[(31, 31, 354), (32, 32, 362)],
    },
    Message {
        id: "client-go/reflector/awaiting-bookmark",
        style: Printf,
        text: "required bookmark event",
        source: "client-go tools/cache/reflector.go: klog.Warning(\"%s: awaiting required bookmark event for initial events stream, no events received for %v\" | \"%s: hasn't received required bookmark event marking the end of initial events stream, received last event %v ago\")",
        versions: "client-go 1.27 to 1.32 (Warning)",
        file: RF,
        sites: &[(32, 32, 1044), (32, 32, 1052)],
    },
    Message {
        id: "client-go/informer/waiting-for-sync",
        style: Printf,
        text: "Waiting for caches to sync for ",
        source: "client-go tools/cache/shared_informer.go: klog.Infof(\"Waiting for caches to sync for %s\")",
        versions: "client-go up to 1.32",
        file: SI,
        sites: &[(32, 32, 313)],
    },
    Message {
        id: "client-go/informer/caches-synced",
        style: Printf,
        text: "Caches are synced for ",
        source: "client-go tools/cache/shared_informer.go: klog.Infof(\"Caches are synced for %s\")",
        versions: "client-go up to 1.32",
        file: SI,
        sites: &[(32, 32, 320)],
    },
    Message {
        id: "client-go/trace/list-and-watch",
        style: Printf,
        text: "\"Reflector ListAndWatch\"",
        source: "client-go tools/cache/reflector.go via k8s.io/utils/trace: Trace[id]: \"Reflector ListAndWatch\" name:%s (started: …) (total time: %v) (logged when a list takes over 10 s)",
        versions: "client-go 1.15 and later",
        file: "trace.go",
        sites: &[(18, 18, 116)],
    },
    Message {
        id: "client-go/rest/request",
        style: Printf,
        text: " milliseconds",
        source: "client-go transport/round_trippers.go: \"%s %s %s in %d milliseconds\" (V6: method, URL, status, latency)",
        versions: "client-go, any release (V6)",
        file: "round_trippers.go",
        sites: &[],
    },
    // The structured style (client-go 1.33+): `klog.FromContext(ctx).Info("Msg", k, v, ...)`.
    Message {
        id: "client-go/reflector/starting",
        style: Structured,
        text: "Starting reflector",
        source: "client-go tools/cache/reflector.go: logger.V(3).Info(\"Starting reflector\", \"type\", …, \"resyncPeriod\", …, \"reflector\", …)",
        versions: "client-go 1.33 and later (V3)",
        file: RF,
        sites: &[(33, 33, 357), (34, 34, 358), (35, 35, 367), (36, 36, 425)],
    },
    Message {
        id: "client-go/reflector/listing",
        style: Structured,
        text: "Listing and watching",
        source: "client-go tools/cache/reflector.go: logger.V(3).Info(\"Listing and watching\", \"type\", …, \"reflector\", …)",
        versions: "client-go 1.33 and later (V3)",
        file: RF,
        sites: &[(33, 33, 403), (34, 34, 404), (35, 35, 411), (36, 36, 472)],
    },
    Message {
        id: "client-go/reflector/caches-populated",
        style: Structured,
        text: "Caches populated",
        source: "client-go tools/cache/reflector.go: logger.V(2).Info(\"Caches populated\", \"type\", …, \"reflector\", …)",
        versions: "client-go 1.33 and later (V2)",
        file: RF,
        sites: &[(33, 33, 430), (34, 34, 436), (35, 35, 446), (36, 36, 507)],
    },
    Message {
        id: "client-go/reflector/forcing-resync",
        style: Structured,
        text: "Forcing resync",
        source: "client-go tools/cache/reflector.go: logger.V(4).Info(\"Forcing resync\", \"reflector\", …)",
        versions: "client-go 1.33 and later (V4)",
        file: RF,
        sites: &[(33, 33, 450), (34, 34, 456), (35, 35, 466), (36, 36, 527)],
    },
    Message {
        id: "client-go/reflector/watch-failed-backing-off",
        style: Structured,
        text: "Watch failed - backing off",
        source: "client-go tools/cache/reflector.go: logger.V(4).Info(\"Watch failed - backing off\", \"reflector\", …, \"type\", …, \"err\", …)",
        versions: "client-go 1.33 and later (V4)",
        file: RF,
        sites: &[(33, 33, 518), (34, 34, 530), (35, 35, 540), (36, 36, 608)],
    },
    Message {
        id: "client-go/reflector/watch-closed-410",
        style: Structured,
        text: "Watch closed",
        source: "client-go tools/cache/reflector.go: logger.V(4).Info(\"Watch closed\", \"reflector\", …, \"type\", …, \"err\", …) (a 410 on the stream, or at the watch's start in DefaultWatchErrorHandler)",
        versions: "client-go 1.33 and later (V4)",
        file: RF,
        sites: &[
            (33, 33, 543),
            (34, 34, 555),
            (35, 35, 565),
            (36, 36, 651),
            (33, 33, 194),
            (34, 34, 199),
            (35, 35, 198),
            (36, 36, 221),
        ],
    },
    Message {
        id: "client-go/reflector/watch-429",
        style: Structured,
        text: "Watch returned 429 - backing off",
        source: "client-go tools/cache/reflector.go: logger.V(2).Info(\"Watch returned 429 - backing off\", \"reflector\", …, \"type\", …)",
        versions: "client-go 1.33 and later (V2)",
        file: RF,
        sites: &[(33, 33, 545), (34, 34, 557), (35, 35, 567), (36, 36, 653)],
    },
    Message {
        id: "client-go/reflector/retrying-internal-error",
        style: Structured,
        text: "Retrying watch after internal error",
        source: "client-go tools/cache/reflector.go: logger.V(2).Info(\"Retrying watch after internal error\", \"reflector\", …, \"type\", …, \"err\", …)",
        versions: "client-go 1.33 and later (V2)",
        file: RF,
        sites: &[(33, 33, 553), (34, 34, 565), (35, 35, 575), (36, 36, 661)],
    },
    Message {
        id: "client-go/reflector/watch-ended",
        style: Structured,
        text: "Warning: watch ended with error",
        source: "client-go tools/cache/reflector.go: logger.Info(\"Warning: watch ended with error\", \"reflector\", …, \"type\", …, \"err\", …)",
        versions: "client-go 1.33 and later",
        file: RF,
        sites: &[(33, 33, 556), (34, 34, 568), (35, 35, 578), (36, 36, 664)],
    },
    Message {
        id: "client-go/reflector/watch-close",
        style: Structured,
        text: "Watch close",
        source: "client-go tools/cache/reflector.go: logger.V(4).Info(\"Watch close\", \"reflector\", …, \"type\", …, \"totalItems\", …)",
        versions: "client-go 1.33 and later (V4)",
        file: RF,
        sites: &[(33, 33, 946), (34, 34, 979), (35, 35, 991), (36, 36, 1093)],
    },
    Message {
        id: "client-go/reflector/watch-unexpected-eof",
        style: Structured,
        text: "Watch closed with unexpected EOF",
        source: "client-go tools/cache/reflector.go: logger.V(1).Info(\"Watch closed with unexpected EOF\", \"reflector\", …, \"type\", …, \"err\", …)",
        versions: "client-go 1.33 and later (V1)",
        file: RF,
        sites: &[(33, 33, 198), (34, 34, 203), (35, 35, 202), (36, 36, 225)],
    },
    Message {
        id: "client-go/reflector/failed-to-watch",
        style: Structured,
        text: "Failed to watch",
        source: "client-go tools/cache/reflector.go: utilruntime.HandleErrorWithContext(ctx, err, \"Failed to watch\", \"reflector\", …, \"type\", …) (logger UnhandledError)",
        versions: "client-go 1.33 and later (Error)",
        file: RF,
        sites: &[(33, 33, 200), (34, 34, 205), (35, 35, 204), (36, 36, 227)],
    },
    Message {
        id: "client-go/reflector/bookmark-expired",
        style: Structured,
        text: "Warning: event bookmark expired",
        source: "client-go tools/cache/reflector.go: logger.Info(\"Warning: event bookmark expired\", \"err\", …)",
        versions: "client-go 1.33 and later",
        file: RF,
        sites: &[(33, 33, 1114), (34, 34, 1147), (35, 35, 1159), (36, 36, 1261)],
    },
    Message {
        id: "client-go/reflector/watchlist-fallback",
        style: Structured,
        text: "The watchlist request ended with an error, falling back to the standard LIST/WATCH semantics because making progress is better than deadlocking",
        source: "client-go tools/cache/reflector.go: logger.Error(err, \"The watchlist request ended with an error, falling back to the standard LIST/WATCH semantics because making progress is better than deadlocking\")",
        versions: "client-go 1.33 to 1.34 (Error)",
        file: RF,
        sites: &[(33, 33, 416), (34, 34, 422)],
    },
    Message {
        id: "client-go/reflector/watchlist-fallback",
        style: Structured,
        text: "Data couldn't be fetched in watchlist mode. Falling back to regular list. This is expected if watchlist is not supported or disabled in kube-apiserver.",
        source: "client-go tools/cache/reflector.go: logger.V(4).Info(\"Data couldn't be fetched in watchlist mode. Falling back to regular list. …\", \"err\", …)",
        versions: "client-go 1.35 and later (V4)",
        file: RF,
        sites: &[(35, 35, 429), (36, 36, 490)],
    },
    Message {
        id: "client-go/informer/waiting-for-sync",
        style: Structured,
        text: "Waiting for caches to sync",
        source: "client-go tools/cache/shared_informer.go: klog.Background().Info(\"Waiting for caches to sync\", \"controller\", …)",
        versions: "client-go 1.33 and later",
        file: SI,
        sites: &[(33, 33, 350), (35, 35, 349), (36, 36, 381)],
    },
    Message {
        id: "client-go/informer/caches-synced",
        style: Structured,
        text: "Caches are synced",
        source: "client-go tools/cache/shared_informer.go: klog.Background().Info(\"Caches are synced\", \"controller\", …)",
        versions: "client-go 1.33 and later",
        file: SI,
        sites: &[(33, 33, 357), (35, 35, 356), (36, 36, 388)],
    },
    Message {
        id: "client-go/informer/unable-to-sync",
        style: Structured,
        text: "Unable to sync caches",
        source: "client-go tools/cache/shared_informer.go: klog.Background().Error(nil, \"Unable to sync caches\", \"controller\", …)",
        versions: "client-go 1.33 and later",
        file: SI,
        sites: &[],
    },
];

fn message(id: &str, style: Style) -> &'static Message {
    MESSAGES
        .iter()
        .find(|m| m.id == id && m.style == style)
        .unwrap_or(&MESSAGES[0])
}

/// The printf row for `id` whose text is `text` (the watch-list fallback has two structured rows).
fn structured(text: &str) -> Option<&'static Message> {
    MESSAGES
        .iter()
        .find(|m| m.style == Structured && m.text == text)
}

/// Where a line came from besides its message: its wrapper, its time, klog's call site.
struct Envelope<'a> {
    format: &'static str,
    stamp: Option<Stamp>,
    site: Option<(&'a str, u32)>,
}

/// The versions a line's message comes from: narrowed by its call site and by a client-go path
/// in the reflector's name (`k8s.io/client-go@v0.28.4/...`).
fn version(m: &Message, site: Option<(&str, u32)>, name: Option<&str>) -> String {
    let mut parts = vec![];
    if let Some(v) = name.and_then(|n| {
        let at = n.find("client-go@v")? + "client-go@".len();
        let v: String = n[at..]
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '.' || *c == '-')
            .collect();
        Some(v)
    }) {
        parts.push(format!("client-go {v} (the reflector's path)"));
    }
    match site {
        Some((file, line)) if file == m.file => {
            let hits: Vec<String> = m
                .sites
                .iter()
                .filter(|s| s.2 as u32 == line)
                .map(|&(lo, hi, _)| {
                    if lo == hi {
                        format!("1.{lo}")
                    } else {
                        format!("1.{lo}–1.{hi}")
                    }
                })
                .collect();
            if hits.is_empty() {
                parts.push(format!(
                    "{}; {file}:{line} is not its call site in the releases docs/import.md lists",
                    m.versions
                ));
            } else {
                parts.push(format!("client-go {} ({file}:{line})", hits.join(" or ")));
            }
        }
        Some((file, line)) => parts.push(format!(
            "{} (logged from {file}:{line}, a wrapper)",
            m.versions
        )),
        None => parts.push(m.versions.to_string()),
    }
    parts.join("; ")
}

/// A text line: klog's header anywhere (after a syslog or CRI prefix), Prometheus' go-kit
/// wrapper, a leading RFC 3339 or syslog time, or a bare message. None: not a reflector or
/// informer message.
pub(super) fn read_text(n: usize, line: &str) -> Option<Result<Obs, String>> {
    if let Some((stamp, site, msg)) = klog_header(line) {
        let env = Envelope {
            format: "klog header",
            stamp: Some(stamp),
            site: Some(site),
        };
        return Some(read_message(n, &env, msg).unwrap_or_else(|| {
            Err(format!(
                "a klog line from {}:{}, but not a message of client-go's reflector or informer",
                site.0, site.1
            ))
        }));
    }
    if line.contains("msg=") && (line.contains("ts=") || line.contains("level=")) {
        let kv = logfmt(line);
        let get = |k: &str| kv.iter().find(|(key, _)| key == k).map(|(_, v)| v.as_str());
        if let Some(msg) = get("msg") {
            let stamp = get("ts")
                .and_then(values::rfc3339)
                .map(|t| Stamp::Epoch(t.0));
            let env = Envelope {
                format: "go-kit logfmt (Prometheus' klog adapter)",
                stamp,
                site: None,
            };
            return read_message(n, &env, msg);
        }
    }
    let (stamp, rest, format) = if let Some((t, used)) = values::rfc3339(line) {
        let rest = line[used..].trim_start();
        // The CRI log format: `<time> stdout|stderr F|P <line>`.
        let rest = ["stdout F ", "stderr F ", "stdout P ", "stderr P "]
            .iter()
            .find_map(|p| rest.strip_prefix(p))
            .unwrap_or(rest);
        (Some(Stamp::Epoch(t)), rest, "timestamped line")
    } else if let Some((t, used)) = values::syslog_time(line) {
        // `May 13 19:44:54 host proc[pid]: message`
        let rest = line[used..].trim_start();
        let rest = rest.split_once(": ").map(|(_, m)| m).unwrap_or(rest);
        (Some(t), rest, "syslog line")
    } else {
        (None, line, "bare message")
    };
    let env = Envelope {
        format,
        stamp,
        site: None,
    };
    read_message(n, &env, rest)
}

/// klog's header `Lmmdd hh:mm:ss.uuuuuu threadid file:line] ` anywhere in the line: its time,
/// call site and the message after it.
fn klog_header(line: &str) -> Option<(Stamp, (&str, u32), &str)> {
    let b = line.as_bytes();
    for i in 0..b.len().min(256) {
        if !matches!(b[i], b'I' | b'W' | b'E' | b'F') || (i > 0 && b[i - 1] != b' ') {
            continue;
        }
        let Some((stamp, used)) = values::klog_time(&line[i + 1..]) else {
            continue;
        };
        let rest = line[i + 1 + used..].trim_start();
        let thread_end = rest.find(' ')?;
        if !rest[..thread_end].bytes().all(|c| c.is_ascii_digit()) {
            continue;
        }
        let rest = rest[thread_end..].trim_start();
        let close = rest
            .find("] ")
            .or_else(|| rest.strip_suffix(']').map(|r| r.len()))?;
        let (file, num) = rest[..close].rsplit_once(':')?;
        let num = values::count(num)? as u32;
        let msg = rest.get(close + 2..).unwrap_or("");
        return Some((stamp, (file, num), msg));
    }
    None
}

/// `key=value key="quoted value"` pairs, as go-kit and klog write them.
fn logfmt(s: &str) -> Vec<(String, String)> {
    let mut out = vec![];
    let mut rest = s.trim_start();
    while !rest.is_empty() && out.len() < 64 {
        let Some(eq) = rest.find('=') else { break };
        let key = &rest[..eq];
        if key.is_empty() || key.contains(' ') {
            // A word without `=`: skip it.
            rest = rest.find(' ').map(|i| rest[i..].trim_start()).unwrap_or("");
            continue;
        }
        let after = &rest[eq + 1..];
        let (value, used) = if after.starts_with('"') {
            match go_quoted(after) {
                Some(v) => v,
                None => (after.to_string(), after.len()),
            }
        } else {
            let end = after.find(' ').unwrap_or(after.len());
            (after[..end].to_string(), end)
        };
        out.push((key.to_string(), value));
        rest = after[used..].trim_start();
    }
    out
}

/// A JSON log entry: klog's JSON format (`{"ts":…,"caller":"cache/reflector.go:569","msg":…}`)
/// or zap's (controller-runtime: `"logger"`, `"level"`, `"error"`).
pub(super) fn read_json(n: usize, obj: &Map<String, Value>) -> Result<Obs, String> {
    let msg = obj.get("msg").and_then(Value::as_str).unwrap_or("");
    let stamp = match obj.get("ts") {
        Some(Value::String(s)) => values::rfc3339(s).map(|t| Stamp::Epoch(t.0)),
        // klog's JSON writes milliseconds, zap's production encoder seconds.
        Some(Value::Number(x)) => x.as_f64().filter(|v| v.is_finite() && *v >= 0.0).map(|v| {
            Stamp::Epoch(if v > 1e11 {
                v as i64
            } else {
                (v * 1000.0) as i64
            })
        }),
        _ => None,
    };
    let caller = obj.get("caller").and_then(Value::as_str);
    let site = caller.and_then(|c| {
        let (file, line) = c.rsplit_once(':')?;
        Some((file.rsplit('/').next()?, values::count(line)? as u32))
    });
    let format = if obj.contains_key("logger") || obj.get("level").is_some_and(Value::is_string) {
        "zap JSON (controller-runtime)"
    } else {
        "klog JSON"
    };
    let env = Envelope {
        format,
        stamp,
        site,
    };
    let kv: Vec<(String, String)> = obj
        .iter()
        .filter(|(k, _)| !matches!(k.as_str(), "msg" | "ts" | "caller" | "v" | "level"))
        .map(|(k, v)| {
            let key = if k == "error" { "err" } else { k.as_str() };
            let value = match v {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            (key.to_string(), value)
        })
        .collect();
    let said: String = std::iter::once(msg.to_string())
        .chain(kv.iter().map(|(k, v)| format!("{k}={v:?}")))
        .collect::<Vec<_>>()
        .join(" ");
    match structured(msg) {
        Some(m) => Ok(structured_obs(n, &env, m, (msg, &said), &kv)),
        None => read_message(n, &env, msg).unwrap_or_else(|| {
            Err(
                "a JSON log entry, but its msg is not a message of client-go's reflector or \
                 informer"
                    .into(),
            )
        }),
    }
}

/// A message, printf or structured: an observation, or None when no row matches.
fn read_message(n: usize, env: &Envelope, msg: &str) -> Option<Result<Obs, String>> {
    let msg = msg.trim();
    if msg.starts_with('"') {
        let (text, used) = go_quoted(msg)?;
        let m = structured(&text)?;
        let kv = logfmt(&msg[used..]);
        return Some(Ok(structured_obs(n, env, m, (&text, msg), &kv)));
    }
    printf(n, env, msg)
}

fn obs(
    n: usize,
    env: &Envelope,
    m: &Message,
    (client, type_): (Option<&str>, Option<&str>),
    fact: Fact,
    text: &str,
    said: &str,
) -> Obs {
    let format = match m.style {
        Printf => format!("{}, printf message", env.format),
        Structured => format!("{}, structured message", env.format),
    };
    Obs {
        line: n,
        stamp: env.stamp,
        at_ms: None,
        client: client.map(|c| one_line(c.trim(), 200)),
        kind: type_.and_then(kind_from_type),
        fact,
        rec: Recogniser {
            id: m.id,
            format,
            version: version(m, env.site, client),
            source: m.source,
        },
        text: one_line(text.trim(), 400),
        said: one_line(said.trim(), 400),
    }
}

fn structured_obs(
    n: usize,
    env: &Envelope,
    m: &'static Message,
    (text, said): (&str, &str),
    kv: &[(String, String)],
) -> Obs {
    let get = |k: &str| kv.iter().find(|(key, _)| key == k).map(|(_, v)| v.as_str());
    let err = get("err").unwrap_or("");
    let client = get("reflector").or(get("controller"));
    let fact = match m.id {
        "client-go/reflector/starting" => Fact::Start {
            resync_ms: get("resyncPeriod").and_then(go_duration_ms),
        },
        "client-go/reflector/listing" => Fact::List {
            rv: None,
            code: None,
            audit_id: None,
        },
        "client-go/reflector/caches-populated" => Fact::Synced,
        "client-go/reflector/forcing-resync" => Fact::Resync,
        "client-go/reflector/watch-429" => Fact::TooMany,
        "client-go/reflector/watch-close" => Fact::WatchEnd {
            items: get("totalItems").and_then(values::count),
        },
        "client-go/reflector/watch-unexpected-eof" => Fact::WatchEnd { items: None },
        "client-go/reflector/watchlist-fallback" | "client-go/reflector/bookmark-expired" => {
            Fact::Streaming
        }
        "client-go/informer/waiting-for-sync" => {
            Fact::Info("the controller waits for its informers' first lists".into())
        }
        "client-go/informer/caches-synced" => {
            Fact::Info("the controller's informers have listed".into())
        }
        "client-go/informer/unable-to-sync" => Fact::Unmodelled(
            "an informer that never synced (the model's informers sync once their list returns)"
                .into(),
        ),
        _ => classify(strip_list_prefix(err)),
    };
    let text = if err.is_empty() {
        text
    } else {
        strip_list_prefix(err)
    };
    obs(n, env, m, (client, get("type")), fact, text, said)
}

/// `failed to list *v1.Pod: <error>` (how `Failed to watch` wraps a list's error): the error.
fn strip_list_prefix(err: &str) -> &str {
    err.strip_prefix("failed to list ")
        .and_then(|r| r.split_once(": "))
        .map(|(_, e)| e)
        .unwrap_or(err)
}

/// The printf messages, found by their fixed words.
fn printf(n: usize, env: &Envelope, msg: &str) -> Option<Result<Obs, String>> {
    let mk = |id: &str, client: Option<&str>, t: Option<&str>, fact: Fact, text: &str| {
        Some(Ok(obs(
            n,
            env,
            message(id, Printf),
            (client, t),
            fact,
            text,
            msg,
        )))
    };
    if let Some(i) = msg.find(": watch of ") {
        let (name, after) = (&msg[..i], &msg[i + ": watch of ".len()..]);
        for (sep, id) in [
            (" ended with: ", "client-go/reflector/watch-ended"),
            (" closed with: ", "client-go/reflector/watch-closed-410"),
        ] {
            if let Some(j) = after.find(sep) {
                let (t, err) = (&after[..j], &after[j + sep.len()..]);
                return mk(id, Some(name), Some(t), classify(err), err);
            }
        }
        if let Some(t) = after.strip_suffix(" returned 429 - backing off") {
            return mk(
                "client-go/reflector/watch-429",
                Some(name),
                Some(t),
                Fact::TooMany,
                msg,
            );
        }
    }
    // The first of these in the message is its own (`Failed to watch` wraps `failed to list`).
    let failure = [
        (": failed to list ", "client-go/reflector/list-failed"),
        (": Failed to list ", "client-go/reflector/list-failed-old"),
        (": Failed to watch ", "client-go/reflector/failed-to-watch"),
    ]
    .into_iter()
    .filter_map(|(words, id)| Some((msg.find(words)?, words, id)))
    .min();
    if let Some((i, words, id)) = failure {
        let name = &msg[..i];
        let (t, err) = msg[i + words.len()..].split_once(": ")?;
        let err = strip_list_prefix(err);
        return mk(id, Some(name), Some(t), classify(err), err);
    }
    if let Some(i) = msg.find(": Watch close - ") {
        let rest = &msg[i + ": Watch close - ".len()..];
        let (t, items) = rest.split_once(" total ")?;
        let items = items
            .strip_suffix(" items received")
            .and_then(values::count);
        let fact = Fact::WatchEnd { items };
        return mk(
            "client-go/reflector/watch-close",
            Some(&msg[..i]),
            Some(t),
            fact,
            msg,
        );
    }
    if let Some(name) = msg.strip_suffix(": forcing resync") {
        return mk(
            "client-go/reflector/forcing-resync",
            Some(name),
            None,
            Fact::Resync,
            msg,
        );
    }
    if let Some(rest) = msg.strip_prefix("Listing and watching ") {
        let (t, name) = rest.split_once(" from ")?;
        let fact = Fact::List {
            rv: None,
            code: None,
            audit_id: None,
        };
        return mk(
            "client-go/reflector/listing",
            Some(name),
            Some(t),
            fact,
            msg,
        );
    }
    if let Some(rest) = msg.strip_prefix("Starting reflector ") {
        // `Starting reflector *v1.Pod (10h0m0s) from NAME`
        let (t, rest) = rest.split_once(" (")?;
        let (resync, name) = rest.split_once(") from ")?;
        let fact = Fact::Start {
            resync_ms: go_duration_ms(resync),
        };
        return mk(
            "client-go/reflector/starting",
            Some(name),
            Some(t),
            fact,
            msg,
        );
    }
    if let Some(rest) = msg.strip_prefix("Caches populated for ") {
        let (t, name) = rest.split_once(" from ")?;
        return mk(
            "client-go/reflector/caches-populated",
            Some(name),
            Some(t),
            Fact::Synced,
            msg,
        );
    }
    if msg.starts_with(message("client-go/reflector/watchlist-fallback", Printf).text) {
        return mk(
            "client-go/reflector/watchlist-fallback",
            None,
            None,
            Fact::Streaming,
            msg,
        );
    }
    if msg.contains("required bookmark event") && msg.contains("initial events stream") {
        let name = msg.split(": ").next().filter(|n| *n != msg);
        return mk(
            "client-go/reflector/awaiting-bookmark",
            name,
            None,
            Fact::Streaming,
            msg,
        );
    }
    if let Some(c) = msg.strip_prefix("Waiting for caches to sync for ") {
        let fact = Fact::Info(format!(
            "controller {c} waits for its informers' first lists"
        ));
        return mk("client-go/informer/waiting-for-sync", None, None, fact, msg);
    }
    if let Some(c) = msg.strip_prefix("Caches are synced for ") {
        let fact = Fact::Info(format!("controller {c}'s informers have listed"));
        return mk("client-go/informer/caches-synced", None, None, fact, msg);
    }
    if msg.starts_with("Trace[") {
        return trace(n, env, msg);
    }
    request(n, env, msg)
}

/// `Trace[id]: "Reflector ListAndWatch" name:NAME (started: …) (total time: 39.1s):` and its
/// `Trace[id]: [39.1s] [39.1s] END`.
fn trace(n: usize, env: &Envelope, msg: &str) -> Option<Result<Obs, String>> {
    let m = message("client-go/trace/list-and-watch", Printf);
    if let Some(i) = msg.find("\"Reflector ListAndWatch\" name:") {
        let rest = &msg[i + "\"Reflector ListAndWatch\" name:".len()..];
        let name = rest.split(" (started:").next().unwrap_or(rest);
        let total = rest
            .split("(total time: ")
            .nth(1)
            .and_then(|t| t.split(')').next())
            .and_then(go_duration_ms);
        let what = match total {
            Some(ms) => format!(
                "a list and watch took {} (client-go traces one over 10 s: with `Too large \
                 resource version` it is the REST client retrying a 504 ten times)",
                values::script_time(ms)
            ),
            None => "a slow list and watch".into(),
        };
        return Some(Ok(obs(
            n,
            env,
            m,
            (Some(name), None),
            Fact::Info(what),
            msg,
            msg,
        )));
    }
    if msg.ends_with(" END") {
        let fact = Fact::Info("the end of a trace of a slow list and watch".into());
        return Some(Ok(obs(n, env, m, (None, None), fact, msg, msg)));
    }
    None
}

/// The REST client's request log (`GET https://…/api/v1/namespaces/x/endpoints?…&watch=true
/// 200 OK in 2 milliseconds`): a list or a watch request, as the audit log would show it.
fn request(n: usize, env: &Envelope, msg: &str) -> Option<Result<Obs, String>> {
    let mut words = msg.split(' ');
    let method = words.next()?;
    if method != "GET" {
        return None;
    }
    let url = words.next()?;
    let path = url
        .strip_prefix("https://")
        .or_else(|| url.strip_prefix("http://"))?;
    let uri = &path[path.find('/')?..];
    let code = words.next().and_then(values::count).map(|c| c as u16);
    if !msg.ends_with(" milliseconds") {
        return None;
    }
    let req = super::audit::parse_uri(uri)?;
    let m = message("client-go/rest/request", Printf);
    let fact = req.fact(code, None, None);
    Some(
        Ok(obs(n, env, m, (Some("rest-client"), None), fact, msg, msg)).map(|mut o| {
            o.kind = req.kind.clone();
            o
        }),
    )
}

/// What an error's text says happened, in the model's terms.
pub(super) fn classify(err: &str) -> Fact {
    let err = err.trim();
    if let Some((rv, m)) = too_old(err) {
        return Fact::Gone {
            rv: Some(rv),
            oldest_minus_one: Some(m),
        };
    }
    if err.contains("The resourceVersion for the provided watch is too old") {
        return Fact::Compacted;
    }
    if let Some(i) = err.find("Too large resource version") {
        let rest = &err[i + "Too large resource version".len()..];
        let nums = rest
            .strip_prefix(": ")
            .and_then(|r| r.split_once(", current: "))
            .map(|(a, b)| {
                let b: String = b.chars().take_while(char::is_ascii_digit).collect();
                (values::rv(a), values::rv(&b))
            });
        let (rv, current) = nums.unwrap_or((None, None));
        return Fact::TooLarge { rv, current };
    }
    if err.contains("too old resource version") {
        return Fact::Gone {
            rv: None,
            oldest_minus_one: None,
        };
    }
    const BUSY: [&str; 3] = [
        "storage is (re)initializing",
        "Too many requests",
        "TooManyRequests",
    ];
    if BUSY.iter().any(|b| err.contains(b)) {
        return Fact::TooMany;
    }
    const NETWORK: [&str; 11] = [
        "connection refused",
        "connection reset",
        "i/o timeout",
        "no route to host",
        "context deadline exceeded",
        "TLS handshake timeout",
        "unexpected EOF",
        "http2: client connection lost",
        "use of closed network connection",
        "net/http: request canceled",
        "network is unreachable",
    ];
    if NETWORK.iter().any(|b| err.contains(b)) || err == "EOF" {
        return Fact::Refused;
    }
    if err.contains("very short watch") {
        return Fact::Unmodelled(
            "a very short watch (closed within a second with no events: client-go lists again \
             after a backoff); the model's watches are not cut short by the server"
                .into(),
        );
    }
    Fact::Unmodelled(format!(
        "the error `{}`, which the model has no counterpart for",
        one_line(err, 160)
    ))
}

/// `too old resource version: N (M)`.
fn too_old(err: &str) -> Option<(u128, u128)> {
    let i = err.find("too old resource version: ")?;
    let rest = &err[i + "too old resource version: ".len()..];
    let (n, rest) = rest.split_once(" (")?;
    let m = rest.split(')').next()?;
    Some((values::rv(n.trim())?, values::rv(m.trim())?))
}

/// client-go (1.23+) logs a failed list twice: a warning (`failed to list`), then through
/// HandleError (`Failed to watch ...: failed to list ...`). The second becomes a repeat of the
/// first.
pub(super) fn pair(seen: &mut [Seen]) {
    /// The last `failed to list` warning: its line, reflector, kind, error and moment.
    struct Failure {
        line: usize,
        client: Option<String>,
        kind: Option<String>,
        text: String,
        at: Option<i64>,
    }
    let mut last: Option<Failure> = None;
    for (n, r) in seen.iter_mut() {
        let Ok(o) = r else { continue };
        if o.rec.id == "client-go/reflector/list-failed" {
            last = Some(Failure {
                line: *n,
                client: o.client.clone(),
                kind: o.kind.clone(),
                text: o.text.clone(),
                at: o.at_ms,
            });
            continue;
        }
        if o.rec.id != "client-go/reflector/failed-to-watch" {
            continue;
        }
        if let Some(f) = &last {
            let near = match (f.at, o.at_ms) {
                (Some(a), Some(b)) => (b - a).abs() <= 1000,
                _ => *n <= f.line + 3,
            };
            if near && f.client == o.client && f.kind == o.kind && f.text == o.text {
                o.fact = Fact::Same {
                    line: f.line,
                    why: "client-go 1.23+ logs a failed list twice: a warning, then through HandleError",
                };
                last = None;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(line: &str) -> Obs {
        read_text(1, line)
            .unwrap_or_else(|| panic!("not read: {line}"))
            .unwrap_or_else(|e| panic!("{e}: {line}"))
    }

    #[test]
    fn every_message_row_names_its_file_and_sites_in_order() {
        for m in MESSAGES {
            assert!(m.source.contains(m.file.trim_end_matches(".go")) || m.file == "trace.go");
            for &(lo, hi, _) in m.sites {
                assert!(lo <= hi && (13..=37).contains(&lo), "{}", m.id);
            }
        }
    }

    /// The header's call site narrows the version: `reflector.go:492` is the printf watch-ended
    /// line of the kubernetes-1.32.0 tag (research26.md §3.2).
    #[test]
    fn a_call_site_names_the_release() {
        let o = read("W1202 10:00:05.123456    1234 reflector.go:492] k8s.io/client-go/informers/factory.go:160: watch of *v1.Pod ended with: too old resource version: 10 (12)");
        assert_eq!(o.rec.version, "client-go 1.32 (reflector.go:492)");
        assert_eq!(o.kind.as_deref(), Some("Pod"));
        assert_eq!(
            o.client.as_deref(),
            Some("k8s.io/client-go/informers/factory.go:160")
        );
        assert_eq!(
            o.fact,
            Fact::Gone {
                rv: Some(10),
                oldest_minus_one: Some(12)
            }
        );
        assert_eq!(o.text, "too old resource version: 10 (12)");
    }

    #[test]
    fn errors_are_classified_by_their_text() {
        assert_eq!(
            classify("Timeout: Too large resource version: 750, current: 1"),
            Fact::TooLarge {
                rv: Some(750),
                current: Some(1)
            }
        );
        assert_eq!(
            classify("Too large resource version: 750, current: 1"),
            Fact::TooLarge {
                rv: Some(750),
                current: Some(1)
            }
        );
        assert_eq!(
            classify("Get \"https://127.0.0.1:6443/apis\": dial tcp 127.0.0.1:6443: connect: connection refused"),
            Fact::Refused
        );
        assert!(matches!(classify("unknown"), Fact::Unmodelled(_)));
        assert_eq!(
            classify("too old resource version: 1 (x)"),
            Fact::Gone {
                rv: None,
                oldest_minus_one: None
            }
        );
    }
}
