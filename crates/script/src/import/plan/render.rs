//! The script as text: the header's assumptions, declarations, the timeline with each
//! episode's comments, the run, the expectations; and which script lines each input line became.

use std::collections::BTreeMap;

use super::{one_line, script_time, Cache, Model, Walk, WRITE_BUDGET};

/// An expectation of the generated script, with the input lines it pins and comments.
pub(super) struct Expect {
    pub(super) text: String,
    pub(super) comments: Vec<String>,
    pub(super) lines: Vec<usize>,
}

/// The script as text, and for each input line the script lines it became.
pub(super) fn render(
    m: &Model,
    w: &Walk,
    episode_comments: &BTreeMap<usize, Vec<String>>,
    expects: &[Expect],
) -> (String, BTreeMap<usize, Vec<usize>>) {
    let mut s = String::new();
    let mut map: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    let mut n = 0usize;
    let mut emit = |s: &mut String, text: &str, lines: &[usize]| {
        s.push_str(text);
        s.push('\n');
        n += 1;
        for &l in lines {
            map.entry(l).or_default().push(n);
        }
    };
    let not = m.total_lines.saturating_sub(m.recognised);
    emit(
        &mut s,
        &format!(
            "# Imported: {} of {} input lines recognised, {} episodes reproduced (listwatch import)",
            m.recognised,
            m.total_lines,
            w.laid.len()
        ),
        &[],
    );
    emit(&mut s, "#", &[]);
    let mut header = m.header.clone();
    if not > 0 {
        header.push(format!(
            "{not} lines were blank or not recognised: the import's report says why for each"
        ));
    }
    header.push(
        "assumed: one controller per reflector and kind; it reads nothing and writes nothing \
         (`watches KIND none`, logic `done`): only its reflector's lists and watches matter"
            .into(),
    );
    if !w.laid.is_empty() {
        header.push(format!(
            "assumed: the writes that move RVs are the script's own: `{}` objects (no watch \
             cache, nobody watches them) take revisions as other kinds do in a cluster, and \
             `x` of each kind stands for its objects",
            m.filler
        ));
    }
    if w.writes > 0 {
        header.push(format!(
            "the timeline makes {} writes (at most {WRITE_BUDGET})",
            w.writes
        ));
    }
    if w.offset > 0 {
        header.push(format!(
            "scaled: RVs are shifted down by {} (the model's etcd starts at revision 1 and the \
             script writes every revision)",
            w.offset
        ));
    }
    header.extend(w.notes.iter().map(|n| format!("scaled: {n}")));
    for h in &header {
        emit(&mut s, &format!("# {}", clip_comment(h)), &[]);
    }
    emit(&mut s, "", &[]);
    if w.two_apiservers {
        emit(
            &mut s,
            "# assumed: two apiservers behind a load balancer, b's watch cache frozen (`pause`): \
             how a relist gets 504 `Too large resource version`",
            &[],
        );
        emit(&mut s, "apiserver a", &[]);
        emit(&mut s, "apiserver b", &[]);
    }
    if w.compaction {
        emit(
            &mut s,
            "# assumed: etcd compacts every 10s (the default is 5m), so a quiet watch of a \
             kind without a cache falls behind it within the script's episode",
            &[],
        );
        emit(&mut s, "compaction 10s", &[]);
    } else {
        emit(
            &mut s,
            "# assumed: no compaction (each compaction takes a revision; only kinds without a \
             watch cache need it)",
            &[],
        );
        emit(&mut s, "compaction off", &[]);
    }
    if m.streaming_all {
        emit(&mut s, "streaming-list on", &m.streaming_lines);
    }
    emit(&mut s, "", &[]);
    for kp in &m.kinds {
        for c in &kp.cache_comment {
            emit(&mut s, &format!("# {}", clip_comment(c)), &[]);
        }
        let cache = match kp.cache {
            Cache::Default => String::new(),
            Cache::Fixed(c) => format!(" cache fixed {c}"),
            Cache::Pinned(c) => format!(" cache dynamic {c}..{c}"),
            Cache::Off => " cache off".into(),
        };
        let mut lines = kp.cache_lines.clone();
        lines.extend(&kp.rate_lines);
        emit(&mut s, &format!("kind {}{cache}", kp.name), &lines);
    }
    emit(&mut s, &format!("kind {} cache off", m.filler), &[]);
    emit(&mut s, "", &[]);
    for c in &m.ctls {
        emit(
            &mut s,
            &format!(
                "# {}: {} {}",
                c.name,
                clip_comment(&c.client),
                m.kinds[c.kind].name
            ),
            &[],
        );
        emit(
            &mut s,
            &format!("controller {} for {}", c.name, m.kinds[c.kind].name),
            &[],
        );
        emit(
            &mut s,
            &format!("  watches {} none", m.kinds[c.kind].name),
            &[],
        );
        if let Some(t) = c.start_ms.filter(|&t| t > 0) {
            emit(
                &mut s,
                &format!("  start {}", script_time(t)),
                &c.setting_lines,
            );
        }
        let resync = c.resync_ms.or_else(|| {
            let gaps: Vec<u64> = c.resyncs.windows(2).map(|p| p[1] - p[0]).collect();
            let mut g = gaps.clone();
            listwatch_core::order::sort_by_u64(&mut g, |&x| x);
            g.get(g.len() / 2).copied()
        });
        if let Some(r) = resync.filter(|&r| r > 0) {
            emit(
                &mut s,
                &format!("  resync {}", script_time(r.clamp(1000, 24 * 3_600_000))),
                &c.setting_lines,
            );
        }
        if c.streaming {
            emit(&mut s, "  streaming-list on", &c.setting_lines);
        } else if c.bookmarks_off {
            emit(&mut s, "  bookmarks off", &c.setting_lines);
        }
        emit(&mut s, "  logic", &[]);
        emit(&mut s, "    done", &[]);
    }
    emit(&mut s, "", &[]);
    let order = listwatch_core::order::stable_order(w.entries.len(), &|a, b| {
        w.entries[a].at.cmp(&w.entries[b].at)
    });
    let first_entry_of: BTreeMap<usize, usize> = w
        .laid
        .iter()
        .filter_map(|l| {
            let first_line = m.eps[l.ep].lines[0];
            let i = order
                .iter()
                .position(|&i| w.entries[i].lines.first() == Some(&first_line))?;
            Some((order[i], l.ep))
        })
        .collect();
    for &i in &order {
        let e = &w.entries[i];
        if let Some(ep) = first_entry_of.get(&i) {
            emit(&mut s, "", &[]);
            for c in episode_comments.get(ep).into_iter().flatten() {
                emit(&mut s, &format!("# {}", clip_comment(c)), &[]);
            }
        }
        for c in &e.comments {
            emit(&mut s, &format!("# {}", clip_comment(c)), &[]);
        }
        emit(&mut s, &e.text, &e.lines);
    }
    emit(&mut s, "", &[]);
    emit(&mut s, &format!("run {}", script_time(w.end_ms)), &[]);
    if !expects.is_empty() {
        emit(&mut s, "", &[]);
    }
    for x in expects {
        for c in &x.comments {
            emit(&mut s, &format!("# {}", clip_comment(c)), &[]);
        }
        emit(&mut s, &x.text, &x.lines);
    }
    (s, map)
}

pub(super) fn clip_comment(s: &str) -> String {
    one_line(s, 300)
}
