//! The trace as JSON (docs/trace-format.md), written by hand: serde stays at the boundary and
//! out of the dependency graph. The CLI's `--json` and the page's export both call `report`.

use listwatch_core::*;

use crate::Report;

pub fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len() + 2);
    o.push('"');
    for c in s.chars() {
        match c {
            '"' => o += "\\\"",
            '\\' => o += "\\\\",
            '\n' => o += "\\n",
            // Control characters (C0, DEL, C1), the line and paragraph separators and the
            // bidirectional controls are escaped too: the JSON stays plain to read anywhere.
            c if c.is_control()
                || c == '<'
                || c == '>'
                || c == '&'
                || ('\u{2028}'..='\u{202e}').contains(&c)
                || ('\u{2066}'..='\u{2069}').contains(&c)
                || c == '\u{200e}'
                || c == '\u{200f}' =>
            {
                o += &format!("\\u{:04x}", c as u32)
            }
            c => o.push(c),
        }
    }
    o.push('"');
    o
}

pub fn report(r: &Report) -> String {
    json(&r.sim, &r.outcomes)
}

/// The JSON document of a run and its expectations' outcomes.
pub fn json(
    sim: &Sim,
    outcomes: &[(crate::Expectation, listwatch_core::verdict::Outcome)],
) -> String {
    let passed = outcomes.iter().all(|(_, o)| o.pass);
    let events: Vec<String> = sim
        .trace
        .iter()
        .enumerate()
        .map(|(i, e)| {
            format!(
                "{{\"id\":{i},\"time_ms\":{},\"actor\":{},\"cause\":{},\"text\":{}}}",
                e.time_ms,
                esc(&actor_label(e.actor, sim)),
                e.cause()
                    .map(|c| c.to_string())
                    .unwrap_or_else(|| "null".into()),
                esc(&describe(&e.kind, sim))
            )
        })
        .collect();
    let expectations: Vec<String> = outcomes
        .iter()
        .map(|(x, o)| {
            format!(
                "{{\"line\":{},\"text\":{},\"pass\":{},\"found\":{},\"decided_ms\":{},\"decided_by\":{}}}",
                x.line,
                esc(&x.text),
                o.pass,
                esc(&o.found),
                o.decided_ms,
                o.decided_by.map(|c| c.to_string()).unwrap_or_else(|| "null".into())
            )
        })
        .collect();
    format!(
        "{{\"format\":\"listwatch-trace/1\",\"end_ms\":{},\"final_rv\":{},\"trace_hash\":\"{:016x}\",\"passed\":{},\"expectations\":[{}],\"events\":[{}]}}",
        sim.now_ms,
        sim.etcd.rev,
        listwatch_core::sim::trace_hash(sim),
        passed,
        expectations.join(","),
        events.join(",")
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_control_character_is_escaped() {
        assert_eq!(
            super::esc("a\u{1b}[2J\u{7f}\u{85}\u{202e}\t\"\\\n<"),
            "\"a\\u001b[2J\\u007f\\u0085\\u202e\\u0009\\\"\\\\\\n\\u003c\""
        );
    }
}
