//! The run's side: what each reflector got and sent, and the expectations and comments read
//! off it where it reproduces the input.

use listwatch_core::ReflectorEvent;
use std::collections::{BTreeMap, BTreeSet};

use listwatch_core::verdict::{counts, Counted, Scope};
use listwatch_core::{ApiError, ControllerId, EventKind, KindId, Sim, WatcherId};

use super::render::Expect;
use super::{clip, quoted, script_time, values, EpKind, Laid, Model, Walk, MAX_EXPECTATIONS};

/// What a run did at each reflector: its failures, requests and watches, in time order.
struct Seen2 {
    /// (time, event index) of 410s, 504s and other failures.
    failures: Vec<(u64, ApiError)>,
    /// (time, `resourceVersion` param, is list) of requests.
    requests: Vec<(u64, String, bool)>,
}

fn watcher_of(sim: &Sim, c: usize, k: usize) -> Option<WatcherId> {
    sim.reflectors()
        .iter()
        .position(|r| r.controller() == ControllerId(c as u16) && r.kind() == KindId(k as u16))
        .map(|i| WatcherId(i as u16))
}

fn per_watcher(sim: &Sim) -> BTreeMap<u16, Seen2> {
    let mut out: BTreeMap<u16, Seen2> = BTreeMap::new();
    for e in sim.trace().iter() {
        let t = e.time_ms.ms();
        let (w, failure, request) = match e.kind {
            EventKind::Reflector(ReflectorEvent::WatchFailed { watcher, error })
            | EventKind::Reflector(ReflectorEvent::ListFailed { watcher, error }) => {
                (watcher, Some(error), None)
            }
            EventKind::Reflector(ReflectorEvent::ListRequest { watcher, rv, .. })
            | EventKind::Reflector(ReflectorEvent::WatchListRequest { watcher, rv, .. }) => {
                (watcher, None, Some((rv.param(), true)))
            }
            EventKind::Reflector(ReflectorEvent::WatchRequest {
                watcher, from_rv, ..
            }) => (watcher, None, Some((format!("\"{from_rv}\""), false))),
            _ => continue,
        };
        let seen = out.entry(w.0).or_insert_with(|| Seen2 {
            failures: vec![],
            requests: vec![],
        });
        if let Some(f) = failure {
            seen.failures.push((t, f));
        }
        if let Some((rv, list)) = request {
            seen.requests.push((t, rv, list));
        }
    }
    out
}

/// The client's RV a 410 or a 504 names.
fn model_rv(err: &ApiError) -> Option<u128> {
    match *err {
        ApiError::TooOld { requested, .. } | ApiError::TooLargeRv { requested, .. } => {
            Some(requested as u128)
        }
        _ => None,
    }
}

/// How far the model's numbers are below the line's (negative: above), when the distance
/// between its two RVs is the line's (None: other numbers, or none to compare).
fn shifted_by(kind: &EpKind, err: &ApiError) -> Option<i128> {
    let (n, m, a, b) = match (kind, *err) {
        (
            EpKind::Gone {
                rv: Some(n),
                m: Some(m),
                ..
            },
            ApiError::TooOld {
                requested,
                oldest_minus_one,
            },
        ) => (*n, *m, requested as u128, oldest_minus_one.get() as u128),
        (
            EpKind::TooLarge {
                rv: Some(n),
                current: Some(m),
            },
            ApiError::TooLargeRv { requested, current },
        ) => (*n, *m, requested as u128, current.get() as u128),
        _ => return None,
    };
    let (n, m, a, b) = (n as i128, m as i128, a as i128, b as i128);
    (n - m == a - b).then_some(n - a)
}

fn ceil100(t: u64) -> u64 {
    t.div_ceil(100) * 100
}

fn count(sim: &Sim, what: Counted, c: usize, k: usize) -> u64 {
    let scope = Scope {
        controller: Some(ControllerId(c as u16)),
        kind: Some(KindId(k as u16)),
        name: None,
    };
    sim.trace()
        .iter()
        .map(|e| counts(sim, e, &what, &scope))
        .sum()
}

/// Expectations read off the run where it reproduces the input, and each episode's comments.
/// What the run pins: expectations, each episode's comments, and words for the report's lines.
pub(super) struct Pinned {
    pub(super) expects: Vec<Expect>,
    pub(super) comments: BTreeMap<usize, Vec<String>>,
    pub(super) line_notes: Vec<(usize, String)>,
}

pub(super) fn pin(m: &Model, w: &Walk, sim: &Sim) -> Pinned {
    let seen = per_watcher(sim);
    let mut expects = vec![];
    let mut comments: BTreeMap<usize, Vec<String>> = BTreeMap::new();
    let mut line_notes: Vec<(usize, String)> = vec![];
    let mut pinned_texts: BTreeSet<(usize, String)> = BTreeSet::new();
    for l in &w.laid {
        let e = &m.eps[l.ep];
        let (c, k) = (e.ctl, m.ctls[e.ctl].kind);
        let cn = &m.ctls[c].name;
        let kn = &m.kinds[k].name;
        if let EpKind::FirstList { rv } = e.kind {
            let how = match &l.why_not {
                None => format!(
                    "line {}: the watch after the first list is from {rv}: writes before the \
                     controller starts make its list return that RV",
                    e.lines[0]
                ),
                Some(y) => format!(
                    "line {}: its first list's RV ({rv}) not reproduced: {y}",
                    e.lines[0]
                ),
            };
            comments.insert(l.ep, vec![how]);
            continue;
        }
        let mut com = vec![format!(
            "line {}: {}: {}",
            e.lines[0],
            e.kind.name(),
            clip(&e.said)
        )];
        line_notes.push((
            e.lines[0],
            format!(" at {} in the script", script_time(l.at)),
        ));
        if l.at > e.at + 500 {
            let moved = format!(
                "assumed: {} later than the line's moment ({}): the episode before it needs the time",
                script_time(l.at - e.at),
                script_time(e.at)
            );
            line_notes.push((e.lines[0], format!(" — {moved}")));
            com.push(moved);
        }
        let Some(wid) = watcher_of(sim, c, k) else {
            continue;
        };
        let Some(s) = seen.get(&wid.0) else {
            comments.insert(l.ep, com);
            continue;
        };
        let (lo, hi) = match e.kind {
            EpKind::Gone { .. } => (l.at.saturating_sub(500), l.at + 3000),
            // The model's own watch timeout may re-watch within the episode: the same 410.
            EpKind::Compacted => (l.at.saturating_sub(24_000), l.at + 3000),
            // Up to 45 s: a REST client that retries a 504 (10 × 4 s) reports it late.
            EpKind::TooLarge { .. } => (l.at.saturating_sub(5000), l.at + 45_000),
            EpKind::Refused { span_ms } | EpKind::TooMany { span_ms } => {
                (l.at.saturating_sub(100), l.at + span_ms + 35_000)
            }
            EpKind::WatchEnd { .. } | EpKind::FirstList { .. } => (0, 0),
        };
        let want = |err: &ApiError| match e.kind {
            EpKind::Gone { .. } | EpKind::Compacted => err.code() == 410,
            EpKind::TooLarge { .. } => matches!(err, ApiError::TooLargeRv { .. }),
            EpKind::Refused { .. } => matches!(err, ApiError::ConnectionRefused),
            EpKind::TooMany { .. } => matches!(err, ApiError::TooManyRequests),
            EpKind::WatchEnd { .. } | EpKind::FirstList { .. } => false,
        };
        let hit = s
            .failures
            .iter()
            .find(|(t, err)| (lo..=hi).contains(t) && want(err));
        match (hit, &e.kind) {
            (Some(&(t, err)), _) => {
                let text = err.message();
                let exact_text = text == e.text;
                let shift = shifted_by(&e.kind, &err);
                let repeated = m.eps[..l.ep]
                    .iter()
                    .any(|p| p.ctl == c && p.text == e.text && p.kind == e.kind);
                let how = match (&e.kind, shift) {
                    (EpKind::Gone { hidden: true, .. }, _) => format!(
                        "assumed: the relist's cause, a 410 client-go 1.18+ logs at V4 only; here `{text}`"
                    ),
                    _ if exact_text => "reproduced exactly: the model's message is the line's".into(),
                    (_, Some(0)) => format!("reproduced exactly: here `{text}`"),
                    (_, Some(by)) if by > 0 => format!(
                        "the same distance between the RVs, shifted down by {by}: here `{text}`"
                    ),
                    (_, Some(by)) => format!(
                        "the same distance between the RVs, shifted up by {}{}: here `{text}`",
                        -by,
                        l.why_not.as_ref().map(|y| format!(" ({y})")).unwrap_or_default()
                    ),
                    (EpKind::Gone { rv: Some(n), m: None, .. }, None)
                        if model_rv(&err) == n.checked_sub(w.offset) =>
                    {
                        format!(
                            "the client's RV is the line's; the line does not say the cache's \
                             oldest (assumed: one revision later): here `{text}`"
                        )
                    }
                    (EpKind::TooLarge { rv: Some(n), current: None }, None)
                        if model_rv(&err) == n.checked_sub(w.offset) =>
                    {
                        format!(
                            "the client's RV is the line's; the line does not say the cache's \
                             (assumed: one revision behind): here `{text}`"
                        )
                    }
                    (EpKind::Gone { .. } | EpKind::TooLarge { .. }, None) => format!(
                        "the same story with other numbers: here `{text}`{}",
                        l.why_not.as_ref().map(|y| format!(" ({y})")).unwrap_or_default()
                    ),
                    _ => format!("here `{text}`"),
                };
                com.push(how.clone());
                if repeated {
                    com.push(
                        "the input repeats this message: client-go 1.18.0-1.18.5 retried the \
                         same RV forever (kubernetes #91073, #94315); the model's reflector relists \
                         with RV=\"\" and recovers, so the script plays each again"
                            .into(),
                    );
                }
                if let EpKind::TooLarge { .. } = e.kind {
                    com.push(
                        "assumed: before the relist, a 410 on the watch (client-go 1.18+ logs it \
                         at V4) and a failover to b; the 504's text is read off the run"
                            .into(),
                    );
                }
                if pinned_texts.insert((c, text.clone())) && expects.len() < MAX_EXPECTATIONS {
                    let by = ceil100(t.max(l.at));
                    let mut x = Expect {
                        text: format!(
                            "expect {cn} {kn} got {} by {}",
                            quoted(&text),
                            script_time(by)
                        ),
                        comments: vec![],
                        lines: e.lines.clone(),
                    };
                    if by > l.at + 1000 {
                        x.comments.push(format!(
                            "line {}: at {} in the input's time, {} in the model's",
                            e.lines[0],
                            script_time(l.at),
                            script_time(t)
                        ));
                    }
                    expects.push(x);
                    let unique = s.failures.iter().filter(|f| f.1.message() == text).count() == 1;
                    if let (true, EpKind::Gone { .. } | EpKind::Compacted) = (unique, &e.kind) {
                        if let Some((rt, rv, _)) = s
                            .requests
                            .iter()
                            .find(|r| r.0 >= t && r.2 && !r.1.contains(' '))
                        {
                            let g = rt - t;
                            let (mut a, mut b) = (g, g);
                            if let Some(o) = e.relist_gap_ms {
                                a = a.min(o);
                                b = b.max(o);
                            }
                            let (a, b) = (a / 100 * 100, ceil100(b + 1));
                            let mut x = Expect {
                                text: format!(
                                    "expect {cn} {kn} sent list resourceVersion={rv} between {} and {} after got {}",
                                    script_time(a), script_time(b), quoted(&text)
                                ),
                                comments: vec![],
                                lines: e.lines.iter().copied().chain(e.relist_line).collect(),
                            };
                            x.comments.push(match e.relist_gap_ms {
                                Some(o) => format!(
                                    "the relist: {} after the 410 in the input, {} in the model (client-go's backoff: 800ms doubling to 30s, jittered)",
                                    script_time(o), script_time(g)
                                ),
                                None => format!(
                                    "the relist, {} after the 410 (client-go's backoff: 800ms doubling to 30s, jittered)",
                                    script_time(g)
                                ),
                            });
                            if expects.len() < MAX_EXPECTATIONS {
                                expects.push(x);
                            }
                        }
                    }
                }
                let detail = format!(" — {how}");
                line_notes.push((e.lines[0], detail));
            }
            (None, EpKind::WatchEnd { .. }) => {}
            (None, _) => {
                com.push("not reproduced: the run shows no such failure here".into());
                line_notes.push((e.lines[0], " — not reproduced by the run".into()));
            }
        }
        comments.insert(l.ep, com);
    }
    // Counts per controller.
    for (c, ctl) in m.ctls.iter().enumerate() {
        let k = ctl.kind;
        let (cn, kn) = (&ctl.name, &m.kinds[k].name);
        let mine: Vec<&Laid> = w.laid.iter().filter(|l| m.eps[l.ep].ctl == c).collect();
        let shown_410 = mine
            .iter()
            .filter(|l| {
                matches!(
                    m.eps[l.ep].kind,
                    EpKind::Gone { hidden: false, .. } | EpKind::Compacted
                )
            })
            .count() as u64;
        let lines: Vec<usize> = mine
            .iter()
            .filter(|l| matches!(m.eps[l.ep].kind, EpKind::Gone { .. } | EpKind::Compacted))
            .map(|l| m.eps[l.ep].lines[0])
            .collect();
        let gone = count(sim, Counted::Gone, c, k);
        if shown_410 > 0 {
            let mut x = Expect {
                text: String::new(),
                comments: vec![format!(
                    "{cn}: the input shows {shown_410} 410s; the run has {gone}"
                )],
                lines: lines.clone(),
            };
            if gone == shown_410 {
                x.text = format!("expect gone {cn} {kn} == {gone}");
            } else if gone > shown_410 {
                x.comments.push(
                    "the extra ones are the script's: a relist's or a 504's assumed cause".into(),
                );
                x.text = format!("expect gone {cn} {kn} >= {shown_410}");
            }
            if !x.text.is_empty() {
                expects.push(x);
            }
        }
        let lists = count(sim, Counted::Lists, c, k);
        if ctl.lists_observed > 0 {
            let cmp = if lists == ctl.lists_observed {
                "=="
            } else {
                ">="
            };
            if lists >= ctl.lists_observed {
                expects.push(Expect {
                    text: format!("expect lists {cn} {kn} {cmp} {}", ctl.lists_observed),
                    comments: vec![format!(
                        "{cn}: the input shows {} lists; the run has {lists}",
                        ctl.lists_observed
                    )],
                    lines: vec![],
                });
            }
        }
        let ends = mine
            .iter()
            .filter(|l| matches!(m.eps[l.ep].kind, EpKind::WatchEnd { .. }))
            .count() as u64;
        if ends > 0 {
            let watches = count(sim, Counted::Watches, c, k);
            if watches > ends {
                expects.push(Expect {
                    text: format!("expect watches {cn} {kn} >= {}", ends + 1),
                    comments: vec![format!(
                        "{cn}: {ends} watch ends in the input, each followed by a new watch (the run opens {watches})"
                    )],
                    lines: mine
                        .iter()
                        .filter(|l| matches!(m.eps[l.ep].kind, EpKind::WatchEnd { .. }))
                        .map(|l| m.eps[l.ep].lines[0])
                        .collect(),
                });
            }
        }
    }
    // Requests the input shows, where the run sends the same.
    let mut done: BTreeSet<(usize, bool, String)> = BTreeSet::new();
    for s in &m.sent {
        let k = m.ctls[s.ctl].kind;
        let rv = match values::rv(&s.rv) {
            Some(0) => "0".to_string(),
            Some(n) => match n.checked_sub(w.offset) {
                Some(n) if n > 0 => n.to_string(),
                _ => continue,
            },
            None if s.rv.is_empty() => String::new(),
            None => continue,
        };
        let param = format!("\"{rv}\"");
        let Some(wid) = watcher_of(sim, s.ctl, k) else {
            continue;
        };
        let sent = seen
            .get(&wid.0)
            .is_some_and(|x| x.requests.iter().any(|r| r.2 == s.list && r.1 == param));
        if !sent {
            line_notes.push((
                s.line,
                format!(" — the run does not send this request (resourceVersion={param})"),
            ));
            continue;
        }
        if done.insert((s.ctl, s.list, rv.clone())) && expects.len() < MAX_EXPECTATIONS {
            expects.push(Expect {
                text: format!(
                    "expect {} {} sent {} resourceVersion={param}",
                    m.ctls[s.ctl].name,
                    m.kinds[k].name,
                    if s.list { "list" } else { "watch" }
                ),
                comments: vec![],
                lines: vec![s.line],
            });
            line_notes.push((
                s.line,
                format!(" — the run sends it: an expectation pins resourceVersion={param}"),
            ));
        }
    }
    Pinned {
        expects,
        comments,
        line_notes,
    }
}
