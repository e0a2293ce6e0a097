//! kube-apiserver audit events (`audit.k8s.io/v1` `Event`, one JSON object a line) for list and
//! watch requests: the `requestURI` with its query (`resourceVersion`, `watch`,
//! `timeoutSeconds`, `allowWatchBookmarks`, `sendInitialEvents`, `resourceVersionMatch`,
//! `limit`), the `verb`, `responseStatus.code`, and the two timestamps. The fields are
//! `kubernetes/apiserver pkg/apis/audit/v1/types.go` `type Event struct`.
//!
//! A 410 on a watch comes inside an HTTP 200 stream (an ERROR event), so the audit log does not
//! show it: a watch from N that ended at once, followed by the same client's list at
//! `resourceVersion=N`, is read as one (`pair`).

use serde_json::{Map, Value};

use super::values::{self, kind_from_resource, one_line};
use super::{Fact, Obs, Recogniser, Seen, Stamp};

const SOURCE: &str =
    "kubernetes/apiserver pkg/apis/audit/v1/types.go: type Event (requestURI, verb, \
                      responseStatus.code, requestReceivedTimestamp, stageTimestamp)";

/// A request URI of a resource collection, as client-go sends it.
#[derive(Clone, Debug, PartialEq, Default)]
pub(super) struct Uri {
    pub kind: Option<String>,
    pub watch: bool,
    /// The `resourceVersion` parameter (`Some("")` when given empty), None when absent.
    pub rv: Option<String>,
    pub timeout_s: Option<u64>,
    pub bookmarks: bool,
    pub streaming: bool,
}

impl Uri {
    /// The observation a request with this URI (and answer) is.
    pub fn fact(
        &self,
        code: Option<u16>,
        audit_id: Option<String>,
        lifetime_ms: Option<u64>,
    ) -> Fact {
        if self.watch {
            Fact::Watch {
                rv: self.rv.as_deref().and_then(values::rv),
                timeout_s: self.timeout_s,
                bookmarks: self.bookmarks,
                lifetime_ms,
                code,
                audit_id,
                streaming: self.streaming,
            }
        } else {
            Fact::List {
                // No resourceVersion: a consistent list, as `""`.
                rv: Some(self.rv.clone().unwrap_or_default()),
                code,
                audit_id,
            }
        }
    }
}

/// `%XX` escapes (a label selector's `%3D`).
fn unescape(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = vec![];
    let mut i = 0;
    while i < b.len() {
        let hex = |c: u8| (c as char).to_digit(16);
        if b[i] == b'%' && i + 2 < b.len() {
            if let (Some(h), Some(l)) = (hex(b[i + 1]), hex(b[i + 2])) {
                out.push((h * 16 + l) as u8);
                i += 3;
                continue;
            }
        }
        out.push(if b[i] == b'+' { b' ' } else { b[i] });
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// `/api/v1/namespaces/ns/pods?…` or `/apis/GROUP/VERSION/…?…`: a collection's kind and its
/// query. None for a single object's path or anything else.
pub(super) fn parse_uri(uri: &str) -> Option<Uri> {
    let (path, query) = uri.split_once('?').unwrap_or((uri, ""));
    let segs: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    let after_version = match segs.first() {
        Some(&"api") => segs.get(2..)?,
        Some(&"apis") => segs.get(3..)?,
        _ => return None,
    };
    let mut u = Uri::default();
    let mut rest = after_version;
    if rest.first() == Some(&"watch") {
        // The old `/watch/` paths.
        u.watch = true;
        rest = &rest[1..];
    }
    let resource = match rest {
        ["namespaces", _, resource] => resource,
        [resource] => resource,
        _ => return None,
    };
    u.kind = kind_from_resource(resource);
    for pair in query.split('&').take(64) {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        let v = unescape(v);
        match k {
            "watch" => u.watch |= v == "true" || v == "1",
            "resourceVersion" => u.rv = Some(v),
            "timeoutSeconds" => u.timeout_s = values::count(&v),
            "allowWatchBookmarks" => u.bookmarks = v == "true",
            "sendInitialEvents" => u.streaming = v == "true",
            _ => {}
        }
    }
    Some(u)
}

fn str_at<'a>(obj: &'a Map<String, Value>, path: &[&str]) -> Option<&'a str> {
    let mut v = obj.get(path[0])?;
    for k in &path[1..] {
        v = v.get(k)?;
    }
    v.as_str()
}

/// The client an audit event names: its user agent's program and component
/// (`kube-controller-manager/v1.29.6 (linux/amd64) kubernetes/062798d/shared-informers` →
/// `kube-controller-manager shared-informers`), else its user.
fn client(obj: &Map<String, Value>) -> Option<String> {
    if let Some(agent) = str_at(obj, &["userAgent"]) {
        let program = agent.split('/').next().unwrap_or(agent);
        // `kubernetes/<commit>/<component>`: the component after the commit.
        let component = agent
            .rsplit_once(") ")
            .and_then(|(_, tail)| tail.splitn(3, '/').nth(2));
        return Some(match component {
            Some(c) if !c.is_empty() => format!("{program} {c}"),
            _ => program.to_string(),
        });
    }
    str_at(obj, &["user", "username"]).map(str::to_string)
}

/// One audit event of a list or a watch.
pub(super) fn read(n: usize, obj: &Map<String, Value>) -> Result<Obs, String> {
    let verb = str_at(obj, &["verb"]).unwrap_or("");
    if verb != "list" && verb != "watch" {
        return Err(format!(
            "an audit event of a `{}` request: import reads lists and watches",
            one_line(verb, 40)
        ));
    }
    let uri = str_at(obj, &["requestURI"]).ok_or("an audit event without a requestURI")?;
    let mut u = parse_uri(uri).ok_or_else(|| {
        format!(
            "an audit event whose requestURI `{}` is not a resource collection",
            one_line(uri, 120)
        )
    })?;
    u.watch |= verb == "watch";
    if u.kind.is_none() {
        u.kind = str_at(obj, &["objectRef", "resource"]).and_then(kind_from_resource);
    }
    let received = str_at(obj, &["requestReceivedTimestamp"]).and_then(values::rfc3339);
    let stage_at = str_at(obj, &["stageTimestamp"]).and_then(values::rfc3339);
    let stage = str_at(obj, &["stage"]).unwrap_or("");
    let lifetime_ms = match (stage, received, stage_at) {
        ("ResponseComplete", Some(a), Some(b)) if b.0 >= a.0 => Some((b.0 - a.0) as u64),
        _ => None,
    };
    let code = obj
        .get("responseStatus")
        .and_then(|s| s.get("code"))
        .and_then(Value::as_u64)
        .filter(|c| *c < 1000)
        .map(|c| c as u16);
    let audit_id = str_at(obj, &["auditID"]).map(|s| one_line(s, 80));
    let id = if u.watch { "audit/watch" } else { "audit/list" };
    let agent = str_at(obj, &["userAgent"]).map(|a| one_line(a, 120));
    let version = match agent {
        Some(a) => format!("audit.k8s.io/v1, stage {stage}; client {a}"),
        None => format!("audit.k8s.io/v1, stage {stage}"),
    };
    let text = match code {
        Some(c) => format!("{verb} {} → {c}", one_line(uri, 300)),
        None => format!("{verb} {}", one_line(uri, 300)),
    };
    Ok(Obs {
        line: n,
        stamp: received.or(stage_at).map(|t| Stamp::Epoch(t.0)),
        at_ms: None,
        client: client(obj).map(|c| one_line(&c, 120)),
        kind: u.kind.clone(),
        fact: u.fact(code, audit_id, lifetime_ms),
        rec: Recogniser {
            id,
            format: "audit.k8s.io/v1 event (one JSON object a line)".into(),
            version,
            source: SOURCE,
        },
        said: text.clone(),
        text,
    })
}

fn audit_id(f: &Fact) -> Option<&str> {
    match f {
        Fact::Watch { audit_id, .. } | Fact::List { audit_id, .. } => audit_id.as_deref(),
        _ => None,
    }
}

/// Folds the stages of one request (same `auditID`) into its first line, then reads a watch
/// that ended at once and the client's list at its resourceVersion as a 410.
pub(super) fn pair(seen: &mut [Seen]) {
    let mut first_of: std::collections::HashMap<String, usize> = Default::default();
    for i in 0..seen.len() {
        let Ok(o) = &seen[i].1 else { continue };
        let Some(id) = audit_id(&o.fact).map(str::to_string) else {
            continue;
        };
        let Some(&f) = first_of.get(&id) else {
            first_of.insert(id, i);
            continue;
        };
        let Ok(later) = std::mem::replace(&mut seen[i].1, Err(String::new())) else {
            continue;
        };
        if let Ok(first) = &mut seen[f].1 {
            merge(&mut first.fact, &later.fact);
            if later.text.len() > first.text.len() {
                first.text = later.text.clone();
            }
        }
        let line = seen[f].0;
        seen[i].1 = Ok(Obs {
            fact: Fact::Same {
                line,
                why: "a later stage of the same request (its auditID)",
            },
            ..later
        });
    }
    infer_gone(seen);
}

/// A later stage's answer and lifetime into the first stage's observation.
fn merge(first: &mut Fact, later: &Fact) {
    match (first, later) {
        (
            Fact::Watch {
                code, lifetime_ms, ..
            },
            Fact::Watch {
                code: c,
                lifetime_ms: l,
                ..
            },
        ) => {
            *code = c.or(*code);
            *lifetime_ms = l.or(*lifetime_ms);
        }
        (Fact::List { code, .. }, Fact::List { code: c, .. }) => *code = c.or(*code),
        _ => {}
    }
}

/// A watch from N (200) that lasted under a second, then the same client's list of the kind at
/// `resourceVersion=N` within 40 s: the watch got 410 (inside its 200 stream).
fn infer_gone(seen: &mut [Seen]) {
    for i in 0..seen.len() {
        let Ok(w) = &seen[i].1 else { continue };
        let Fact::Watch {
            rv: Some(from),
            lifetime_ms: Some(life),
            code: Some(200),
            ..
        } = w.fact
        else {
            continue;
        };
        if life >= 1000 {
            continue;
        }
        let (client, kind, at) = (w.client.clone(), w.kind.clone(), w.at_ms);
        let relist = seen[i + 1..].iter().any(|(_, r)| {
            r.as_ref().is_ok_and(|l| {
                l.client == client
                    && l.kind == kind
                    && matches!(&l.fact, Fact::List { rv: Some(r), .. } if values::rv(r) == Some(from))
                    && match (at, l.at_ms) {
                        (Some(a), Some(b)) => (0..=40_000).contains(&(b - a)),
                        _ => true,
                    }
            })
        });
        if relist {
            if let Ok(w) = &mut seen[i].1 {
                w.fact = Fact::Gone {
                    rv: Some(from),
                    oldest_minus_one: None,
                };
                w.text = format!(
                    "{} (ended within a second, then a list at resourceVersion={from}: a 410 \
                     inside the 200 stream)",
                    w.text
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_uris_as_client_go_sends_them() {
        let u = parse_uri("/apis/node.k8s.io/v1/runtimeclasses?allowWatchBookmarks=true&resourceVersion=3274044&timeout=9m46s&timeoutSeconds=586&watch=true").unwrap();
        assert_eq!(u.kind.as_deref(), Some("RuntimeClass"));
        assert!(u.watch && u.bookmarks && !u.streaming);
        assert_eq!((u.rv.as_deref(), u.timeout_s), (Some("3274044"), Some(586)));
        let l = parse_uri("/api/v1/namespaces/default/pods?limit=500&resourceVersion=0").unwrap();
        assert!(!l.watch);
        assert_eq!(l.rv.as_deref(), Some("0"));
        let s = parse_uri("/apis/metrics.k8s.io/v1beta1/namespaces/default/pods?allowWatchBookmarks=true&labelSelector=run%3Dphp-apache&resourceVersionMatch=NotOlderThan&sendInitialEvents=true&watch=true").unwrap();
        assert!(s.streaming && s.watch);
        assert_eq!(parse_uri("/api/v1/namespaces/default/pods/web-0"), None);
        assert_eq!(parse_uri("/healthz"), None);
        assert_eq!(unescape("a%3Db%2"), "a=b%2");
    }
}
