//! A controller's options: the lines indented under its `controller` line, one setting each
//! (the heads of its blocks are rows of `blocks.rs`).

use listwatch_core::*;

use super::blocks::Block;
use super::table::{self, row, ControllerOption, Row, CONTROLLER_OPTIONS, CONTROLLER_OPTION_WORDS};
use super::Builder;
use crate::cursor::{unknown, Cursor, R};
use crate::lexer::Word;
use crate::selector::{field_selector, label_selector, selector_word};

/// Options, each on a line indented under its controller.
pub(super) const OPTIONS: &[Row<ControllerOption>] = &[
    setting(
        "workers",
        "workers N",
        "workers 4",
        Builder::workers_option,
    ),
    setting(
        "watches",
        "watches KIND [self | owner | none] [in NAMESPACE] [selector K=V,...] [predicate generation-changed | rv-changed]",
        "watches Pod owner",
        Builder::watches_option,
    ),
    setting(
        "requeue-after",
        "requeue-after D",
        "requeue-after 30s",
        Builder::requeue_after_option,
    ),
    setting("errors", "errors P%", "errors 50%", Builder::errors_option),
    setting("resync", "resync D", "resync 10h", Builder::resync_option),
    setting(
        "apiserver",
        "apiserver NAME",
        "apiserver b",
        Builder::apiserver_option,
    ),
    setting(
        "reconcile",
        "reconcile D",
        "reconcile 1s",
        Builder::reconcile_option,
    ),
    setting(
        "link-delay",
        "link-delay D",
        "link-delay 100ms",
        Builder::link_delay_option,
    ),
    setting(
        "queue",
        "queue priority | classic",
        "queue classic",
        Builder::queue_option,
    ),
    setting("anvil", "anvil [D]", "anvil 60s", Builder::anvil_option),
    setting("start", "start D", "start 1s", Builder::start_option),
    setting(
        "finalizer",
        "finalizer",
        "finalizer",
        Builder::finalizer_option,
    ),
    setting(
        "bookmarks",
        "bookmarks on | off",
        "bookmarks off",
        Builder::switch_option,
    ),
    setting(
        "streaming-list",
        "streaming-list on | off",
        "streaming-list on",
        Builder::switch_option,
    ),
    setting(
        "fail-first",
        "fail-first N",
        "fail-first 2",
        Builder::fail_first_option,
    ),
    setting(
        "stale-read-check",
        "stale-read-check on | off",
        "stale-read-check on",
        Builder::stale_read_check_option,
    ),
    setting(
        "on-410",
        "on-410 relist | rewatch",
        "on-410 rewatch",
        Builder::on_410_option,
    ),
];

const fn setting(
    word: &'static str,
    usage: &'static str,
    example: &'static str,
    set: fn(&mut Builder, &mut Cursor, &Word, usize) -> R<()>,
) -> Row<ControllerOption> {
    row(word, usage, example, ControllerOption::Setting(set))
}

impl Builder {
    /// A line indented under a controller line: one of its options, or the head of a block.
    pub(super) fn controller_line(&mut self, p: &mut Cursor, indent: usize) -> R<Option<Block>> {
        let w = p.next("an option")?;
        let Some(idx) = self.config.controllers.len().checked_sub(1) else {
            return Err(p.err_at(w, "an indented option needs a `controller` line above it"));
        };
        match table::find(CONTROLLER_OPTIONS, &w.text).map(|r| &r.parse) {
            Some(ControllerOption::Setting(set)) => {
                set(self, p, w, idx)?;
                p.done().map(|()| None)
            }
            Some(ControllerOption::Block(open)) => open(self, p, w, idx, indent).map(Some),
            None => Err(unknown(p, w, "controller option", CONTROLLER_OPTION_WORDS)),
        }
    }

    fn workers_option(&mut self, p: &mut Cursor, w: &Word, idx: usize) -> R<()> {
        let n = p.number("a worker count", MAX_WORKERS as i64)?;
        if n < 1 {
            return Err(p.err_at(w, "a controller needs at least 1 worker"));
        }
        self.config.controllers[idx].workers = n as u32;
        Ok(())
    }

    fn requeue_after_option(&mut self, p: &mut Cursor, _: &Word, idx: usize) -> R<()> {
        self.config.controllers[idx].requeue_after_ms = p.duration("a duration")?;
        Ok(())
    }

    fn errors_option(&mut self, p: &mut Cursor, _: &Word, idx: usize) -> R<()> {
        let pct = p.percentage("the error rate")?;
        self.config.controllers[idx].error_ppm = (pct * 10_000.0) as u32;
        Ok(())
    }

    fn resync_option(&mut self, p: &mut Cursor, _: &Word, idx: usize) -> R<()> {
        self.config.controllers[idx].resync_ms = p.duration("a period")?;
        Ok(())
    }

    fn apiserver_option(&mut self, p: &mut Cursor, _: &Word, idx: usize) -> R<()> {
        self.config.controllers[idx].apiserver = self.next_apiserver(p)?;
        Ok(())
    }

    fn reconcile_option(&mut self, p: &mut Cursor, _: &Word, idx: usize) -> R<()> {
        self.config.controllers[idx].reconcile_ms = p.duration("a duration")?;
        Ok(())
    }

    fn link_delay_option(&mut self, p: &mut Cursor, _: &Word, idx: usize) -> R<()> {
        self.config.controllers[idx].link_delay_ms = p.duration("a delay")?;
        Ok(())
    }

    fn stale_read_check_option(&mut self, p: &mut Cursor, _: &Word, idx: usize) -> R<()> {
        let on = self.switch(p, "stale-read-check", Some(idx))?;
        self.config.controllers[idx].stale_read_check = on;
        self.explicit_options.push((idx, "stale-read-check"));
        Ok(())
    }

    fn on_410_option(&mut self, p: &mut Cursor, _: &Word, idx: usize) -> R<()> {
        let v = p.next("`relist` or `rewatch`")?;
        self.config.controllers[idx].rewatch_on_gone = match v.text.as_str() {
            "relist" => false,
            "rewatch" => true,
            _ => return Err(unknown(p, v, "setting", &["relist", "rewatch"])),
        };
        Ok(())
    }

    fn queue_option(&mut self, p: &mut Cursor, _: &Word, idx: usize) -> R<()> {
        self.explicit_options.push((idx, "queue"));
        let q = p.next("`classic` or `priority`")?;
        self.config.controllers[idx].queue = match q.text.as_str() {
            "classic" => QueueKind::Classic,
            "priority" => QueueKind::Priority,
            _ => return Err(unknown(p, q, "queue", &["classic", "priority"])),
        };
        Ok(())
    }

    fn start_option(&mut self, p: &mut Cursor, _: &Word, idx: usize) -> R<()> {
        self.config.controllers[idx].start_ms = p.moment("a time")?;
        Ok(())
    }

    fn fail_first_option(&mut self, p: &mut Cursor, _: &Word, idx: usize) -> R<()> {
        let n = p.number("how many reconciles of each key fail", 1000)?;
        if n < 0 {
            return Err(p.err_at(&p.words[p.pos - 1], "a count from 0 up"));
        }
        self.config.controllers[idx].fail_first = n as u32;
        Ok(())
    }

    fn finalizer_option(&mut self, p: &mut Cursor, w: &Word, idx: usize) -> R<()> {
        let c = &mut self.config.controllers[idx];
        match &mut c.behaviour {
            Behaviour::Children { finalizer, .. } => *finalizer = true,
            _ => return Err(p.err_at(w, "only `children` controllers take a `finalizer` option")),
        }
        Ok(())
    }

    /// `bookmarks|streaming-list on|off` for controller `idx` alone.
    fn switch_option(&mut self, p: &mut Cursor, w: &Word, idx: usize) -> R<()> {
        if w.text == "bookmarks" {
            self.config.controllers[idx].bookmarks =
                Some(self.switch(p, "bookmarks", Some(idx))?);
        } else {
            let on = self.switch(p, "streaming-list", Some(idx))?;
            self.config.controllers[idx].streaming_list = Some(on);
        }
        Ok(())
    }

    /// `anvil [PERIOD]`: reconcile from etcd, every period.
    fn anvil_option(&mut self, p: &mut Cursor, _: &Word, idx: usize) -> R<()> {
        let c = &mut self.config.controllers[idx];
        c.anvil = true;
        if p.peek().is_some() {
            let d = p.duration("a period")?;
            if d.is_zero() {
                return Err(p.err_at(&p.words[p.pos - 1], "the period must be positive"));
            }
            self.config.controllers[idx].anvil_period_ms = d;
        }
        Ok(())
    }

    /// `watches KIND [owner|self|none] [in NAMESPACE] [selector SELECTOR] [predicate P]` of
    /// controller `idx`.
    fn watches_option(&mut self, p: &mut Cursor, _: &Word, idx: usize) -> R<()> {
        let kind = self.next_kind(p)?;
        let mut map = KeyMap::Itself;
        let mut namespace = None;
        let mut selector = None;
        let mut fields = None;
        let mut predicate = Predicate::All;
        while let Some(x) = p.peek() {
            p.pos += 1;
            match x.text.as_str() {
                "owner" => map = KeyMap::Owner,
                "self" => map = KeyMap::Itself,
                "none" => map = KeyMap::ReadOnly,
                "in" if self.config.cluster_scoped(kind) => {
                    let kind = &self.config.kinds[kind.index()].name;
                    return Err(p
                        .err_at(
                            x,
                            format!("`{kind}` is cluster-scoped: its objects have no namespace"),
                        )
                        .help("watch it in every namespace: drop `in NAMESPACE`"));
                }
                "in" => namespace = Some(p.next("a namespace")?.text.clone()),
                "selector" => {
                    let w = p.next("a label selector: `app=web`, `tier!=db`, `env`, `!legacy`")?;
                    let w = selector_word(p, w);
                    selector = Some(label_selector(p, &w)?);
                }
                "field-selector" => {
                    let w = p.next("a field selector: `metadata.name=web-0`")?;
                    fields = Some(field_selector(p, w)?);
                }
                "predicate" => {
                    let v = p.next("`generation-changed` or `rv-changed`")?;
                    predicate = match v.text.as_str() {
                        "generation-changed" => Predicate::GenerationChanged,
                        "rv-changed" => Predicate::ResourceVersionChanged,
                        _ => {
                            return Err(unknown(
                                p,
                                v,
                                "predicate",
                                &["generation-changed", "rv-changed"],
                            ))
                        }
                    };
                }
                _ => {
                    return Err(unknown(
                        p,
                        x,
                        "watch option",
                        &[
                            "owner",
                            "self",
                            "none",
                            "in",
                            "selector",
                            "field-selector",
                            "predicate",
                        ],
                    ))
                }
            }
        }
        let c = &mut self.config.controllers[idx];
        c.watches.retain(|wc| wc.kind != kind);
        c.watches.push(WatchConfig {
            kind,
            map,
            namespace,
            selector,
            fields,
            predicate,
        });
        Ok(())
    }
}
