//! `apiserver_watch_cache_*` and `watch_cache_capacity*` samples in Prometheus' text format
//! (`name{labels} value [timestamp]`), as kube-apiserver's `/metrics` serves them. Definitions:
//! `kubernetes/apiserver pkg/storage/cacher/metrics/metrics.go` (1.25+; `cacher/metrics.go`
//! before). Labels are `resource` up to 1.33 and `group`, `resource` from 1.34.

use super::values::{self, go_quoted, kind_from_resource, one_line};
use super::{Fact, Obs, Recogniser, Stamp};

/// One metric import reads: its name, what a sample of it tells, and where it is defined.
struct Metric {
    name: &'static str,
    id: &'static str,
    source: &'static str,
    since: &'static str,
}

const DEFS: &str = "kubernetes/apiserver pkg/storage/cacher/metrics/metrics.go";

static METRICS: &[Metric] = &[
    Metric {
        name: "watch_cache_capacity",
        id: "metrics/watch-cache-capacity",
        source: "kubernetes/apiserver pkg/storage/cacher/metrics/metrics.go: watch_cache_capacity (gauge, \"Total capacity of watch cache broken by resource type.\")",
        since: "kube-apiserver 1.22+",
    },
    Metric {
        name: "watch_cache_capacity_increase_total",
        id: "metrics/watch-cache-resized",
        source: "kubernetes/apiserver pkg/storage/cacher/metrics/metrics.go: watch_cache_capacity_increase_total (counter)",
        since: "kube-apiserver 1.19+",
    },
    Metric {
        name: "watch_cache_capacity_decrease_total",
        id: "metrics/watch-cache-resized",
        source: "kubernetes/apiserver pkg/storage/cacher/metrics/metrics.go: watch_cache_capacity_decrease_total (counter)",
        since: "kube-apiserver 1.19+",
    },
    Metric {
        name: "apiserver_watch_cache_events_received_total",
        id: "metrics/watch-cache-events",
        source: "kubernetes/apiserver pkg/storage/cacher/metrics/metrics.go: apiserver_watch_cache_events_received_total (counter, per event from etcd)",
        since: "kube-apiserver 1.27+",
    },
    Metric {
        name: "apiserver_watch_cache_events_dispatched_total",
        id: "metrics/watch-cache-events",
        source: "kubernetes/apiserver pkg/storage/cacher/metrics/metrics.go: apiserver_watch_cache_events_dispatched_total (counter, per event taken off the incoming channel)",
        since: "kube-apiserver 1.24+",
    },
    Metric {
        name: "apiserver_watch_cache_resource_version",
        id: "metrics/watch-cache-resource-version",
        source: "kubernetes/apiserver pkg/storage/cacher/metrics/metrics.go: apiserver_watch_cache_resource_version (gauge, the 15 least significant digits)",
        since: "kube-apiserver 1.31+",
    },
    Metric {
        name: "apiserver_watch_cache_initializations_total",
        id: "metrics/watch-cache-initializations",
        source: "kubernetes/apiserver pkg/storage/cacher/metrics/metrics.go: apiserver_watch_cache_initializations_total (counter, each (re)list of etcd)",
        since: "kube-apiserver 1.25+ (1.24: apiserver_watch_cache_watch_cache_initializations_total)",
    },
    Metric {
        name: "apiserver_watch_cache_watch_cache_initializations_total",
        id: "metrics/watch-cache-initializations",
        source: "kubernetes/apiserver pkg/storage/cacher/metrics.go: watch_cache_initializations_total with namespace and subsystem (counter)",
        since: "kube-apiserver 1.24",
    },
    Metric {
        name: "apiserver_init_events_total",
        id: "metrics/watch-cache-other",
        source: "kubernetes/apiserver pkg/storage/cacher/metrics/metrics.go: apiserver_init_events_total (counter, a watch's initial replay)",
        since: "kube-apiserver 1.19+",
    },
    Metric {
        name: "apiserver_terminated_watchers_total",
        id: "metrics/watch-cache-other",
        source: "kubernetes/apiserver pkg/storage/cacher/metrics/metrics.go: apiserver_terminated_watchers_total (counter, watchers closed as unresponsive)",
        since: "kube-apiserver 1.22+",
    },
];

/// Any other `apiserver_watch_cache_*` metric: recognised, noted.
const OTHER: Metric = Metric {
    name: "apiserver_watch_cache_",
    id: "metrics/watch-cache-other",
    source: "kubernetes/apiserver pkg/storage/cacher/metrics/metrics.go",
    since: "kube-apiserver",
};

/// A metric's name: `[a-zA-Z_:][a-zA-Z0-9_:]*`.
fn metric_name(s: &str) -> usize {
    s.char_indices()
        .find(|&(i, c)| {
            !(c.is_ascii_alphabetic() || c == '_' || c == ':' || (i > 0 && c.is_ascii_digit()))
        })
        .map(|(i, _)| i)
        .unwrap_or(s.len())
}

/// `{k="v",…}`: the labels and the bytes they took.
fn labels(s: &str) -> Option<(Vec<(String, String)>, usize)> {
    let mut out = vec![];
    let mut pos = 1;
    loop {
        let rest = s.get(pos..)?;
        let trimmed = rest.trim_start_matches([' ', ',']);
        pos += rest.len() - trimmed.len();
        if trimmed.starts_with('}') {
            return Some((out, pos + 1));
        }
        let eq = trimmed.find('=')?;
        let key = trimmed[..eq].trim().to_string();
        let (value, used) = go_quoted(&trimmed[eq + 1..])?;
        out.push((key, value));
        pos += eq + 1 + used;
        if out.len() > 32 {
            return None;
        }
    }
}

/// A sample or a `# HELP`/`# TYPE` line. None: not a metric line at all.
pub(super) fn read(n: usize, line: &str) -> Option<Result<Obs, String>> {
    if let Some(rest) = line
        .strip_prefix("# HELP ")
        .or_else(|| line.strip_prefix("# TYPE "))
    {
        let name = &rest[..metric_name(rest)];
        let m = find(name)?;
        let fact = Fact::Info("the metric's help or type line".into());
        return Some(Ok(obs(n, m, None, None, fact, line, None)));
    }
    let name_len = metric_name(line);
    if name_len == 0 {
        return None;
    }
    let name = &line[..name_len];
    let rest = &line[name_len..];
    // A metric's name has an underscore, or labels follow it: not a word of a sentence.
    if !name.contains('_') && !rest.starts_with('{') {
        return None;
    }
    let (labels, used) = if rest.starts_with('{') {
        labels(rest)?
    } else {
        (vec![], 0)
    };
    let mut fields = rest[used..].split_whitespace();
    let value = fields.next()?;
    let stamp = fields.next();
    if fields.next().is_some()
        || !value.starts_with(|c: char| c.is_ascii_digit() || "+-.NI".contains(c))
    {
        return None;
    }
    let Some(m) = find(name) else {
        return Some(Err(format!(
            "a sample of `{}`: import reads watch_cache_capacity* and apiserver_watch_cache_* only",
            one_line(name, 80)
        )));
    };
    let Some(value) = values::sample_value(value) else {
        return Some(Err(format!(
            "the value `{}` is not a count (negative, NaN, ±Inf, or above 10^30)",
            one_line(value, 40)
        )));
    };
    let get = |k: &str| {
        labels
            .iter()
            .find(|(key, _)| key == k)
            .map(|(_, v)| v.as_str())
    };
    let resource = match (get("group"), get("resource")) {
        (Some(g), Some(r)) if !g.is_empty() => Some(format!("{r}.{g}")),
        (_, r) => r.map(str::to_string),
    };
    let kind = resource.as_deref().and_then(kind_from_resource);
    let grouped = get("group").is_some();
    let fact = match m.id {
        "metrics/watch-cache-capacity" => Fact::Capacity {
            events: value.min(u64::MAX as u128) as u64,
            dynamic: grouped,
        },
        "metrics/watch-cache-resized" if value > 0 => Fact::Resized,
        "metrics/watch-cache-resized" => Fact::Info("the cache never resized".into()),
        "metrics/watch-cache-events" => Fact::EventsTotal { value },
        "metrics/watch-cache-resource-version" => Fact::Info(format!(
            "the cache's resource version was {value} (the model's revisions start at 1: RVs \
             in the script are counted from there)"
        )),
        "metrics/watch-cache-initializations" => Fact::Info(if value > 1 {
            format!(
                "the cache was (re)initialised {value} times: {} re-initialisations (restarts or \
                 failed etcd watches; `reinit-cache` plays one)",
                value - 1
            )
        } else {
            "the cache was initialised once".into()
        }),
        _ => Fact::Info("a watch-cache metric the script has no counterpart for".into()),
    };
    // A sample's timestamp is milliseconds since 1970.
    let at = stamp
        .and_then(values::count)
        .map(|t| Stamp::Epoch(t as i64));
    Some(Ok(obs(n, m, kind, at, fact, line, Some(grouped))))
}

fn find(name: &str) -> Option<&'static Metric> {
    METRICS
        .iter()
        .find(|m| m.name == name)
        .or_else(|| name.starts_with(OTHER.name).then_some(&OTHER))
}

fn obs(
    n: usize,
    m: &'static Metric,
    kind: Option<String>,
    stamp: Option<Stamp>,
    fact: Fact,
    line: &str,
    grouped: Option<bool>,
) -> Obs {
    let labels = match grouped {
        Some(true) => " (labels group, resource: kube-apiserver 1.34+)",
        Some(false) => " (labels resource: up to kube-apiserver 1.33)",
        None => "",
    };
    Obs {
        line: n,
        stamp,
        at_ms: None,
        client: None,
        kind,
        fact,
        rec: Recogniser {
            id: m.id,
            format: "Prometheus text exposition".into(),
            version: format!("{}{labels}", m.since),
            source: if m.name == OTHER.name { DEFS } else { m.source },
        },
        text: one_line(line, 300),
        said: one_line(line, 300),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_with_both_label_sets() {
        let o = read(1, "watch_cache_capacity{group=\"\",resource=\"pods\"} 1600")
            .unwrap()
            .unwrap();
        assert_eq!(
            o.fact,
            Fact::Capacity {
                events: 1600,
                dynamic: true
            }
        );
        assert_eq!(o.kind.as_deref(), Some("Pod"));
        let o = read(1, "watch_cache_capacity{resource=\"pods\"} 100")
            .unwrap()
            .unwrap();
        assert_eq!(
            o.fact,
            Fact::Capacity {
                events: 100,
                dynamic: false
            }
        );
        let o = read(1, "apiserver_watch_cache_events_received_total{group=\"apps\",resource=\"deployments\"} 10 1700000000000").unwrap().unwrap();
        assert_eq!(o.kind.as_deref(), Some("Deployment"));
        assert_eq!(o.stamp, Some(Stamp::Epoch(1_700_000_000_000)));
        assert!(read(1, "apiserver_request_total{verb=\"GET\"} 5")
            .unwrap()
            .is_err());
        assert!(read(1, "W0122 10:30:13.635304  1 reflector.go:535] x").is_none());
        assert!(
            read(1, "# HELP watch_cache_capacity [ALPHA] Total capacity")
                .unwrap()
                .is_ok()
        );
    }
}
