//! The cluster: the seed, the kinds and their watch caches, etcd's compaction, the garbage
//! collector, and the reflectors' defaults.

use listwatch_core::*;

use super::spans::Span;
use super::table::{statement, Head, Row, Statement};
use super::Builder;
use crate::cursor::{unknown, Cursor, R};
use crate::name_rules::check_name;

/// First in a script, before the apiservers.
pub(super) const SEED_AND_KINDS: &[Row<Statement>] = &[
    statement("seed", "seed N", "seed 7", Builder::seed_statement),
    statement(
        "kind",
        "kind NAME [cluster-scoped] [status-subresource off] [cache fixed N | cache dynamic [MIN..MAX] | cache off]",
        "kind ConfigMap cache fixed 3",
        Builder::kind_statement,
    ),
];

/// After the apiservers.
pub(super) const SETTINGS: &[Row<Statement>] = &[
    statement(
        "compaction",
        "compaction D | compaction off",
        "compaction 1m",
        Builder::compaction_statement,
    ),
    statement(
        "gc-delay",
        "gc-delay D",
        "gc-delay 2s",
        Builder::gc_delay_statement,
    ),
    statement(
        "bookmarks",
        "bookmarks on | off",
        "bookmarks off",
        Builder::bookmarks_statement,
    ),
    statement(
        "streaming-list",
        "streaming-list on | off",
        "streaming-list on",
        Builder::streaming_list_statement,
    ),
    statement(
        "page-size",
        "page-size N",
        "page-size 2",
        Builder::page_size_statement,
    ),
];

impl Builder {
    fn seed_statement(&mut self, p: &mut Cursor, _: Head) -> R<()> {
        let n = p.number("a seed", i64::MAX)?;
        self.config.seed = n as u64;
        Ok(())
    }

    fn compaction_statement(&mut self, p: &mut Cursor, _: Head) -> R<()> {
        self.config.compaction_ms = if p.eat("off") {
            DurationMs::ZERO
        } else {
            p.duration("an interval or `off`")?
        };
        p.done()
    }

    /// The garbage collector acts on its own informers: it deletes a dependent this long after
    /// its owner went.
    fn gc_delay_statement(&mut self, p: &mut Cursor, _: Head) -> R<()> {
        self.config.gc_delay_ms = p.duration("how long the garbage collector lags")?;
        p.done()
    }

    fn bookmarks_statement(&mut self, p: &mut Cursor, _: Head) -> R<()> {
        self.explicit_bookmarks = true;
        self.config.reflector.bookmarks = self.switch(p, "bookmarks", None)?;
        p.done()
    }

    fn streaming_list_statement(&mut self, p: &mut Cursor, _: Head) -> R<()> {
        self.explicit_streaming = true;
        self.config.reflector.streaming_list = self.switch(p, "streaming-list", None)?;
        p.done()
    }

    fn page_size_statement(&mut self, p: &mut Cursor, _: Head) -> R<()> {
        let n = p.number("a page size (0: no paging)", 100_000)?;
        if n < 0 {
            return Err(p
                .err_at(
                    &p.words[p.pos - 1],
                    format!("a page size cannot be negative (found {n})"),
                )
                .help("write a number of objects per page, or 0 for no paging"));
        }
        self.config.reflector.page_size = n as u32;
        p.done()
    }

    /// Reads a reflector setting's `on` or `off`, and where it was written (for the error of
    /// a streaming list without bookmarks): the cluster's (`of` none) or controller `of`'s.
    pub(super) fn switch(
        &mut self,
        p: &mut Cursor,
        setting: &'static str,
        of: Option<usize>,
    ) -> R<bool> {
        let v = p.next("`on` or `off`")?;
        let on = match v.text.as_str() {
            "on" => true,
            "off" => false,
            _ => return Err(unknown(p, v, "setting", &["on", "off"])),
        };
        let span = Span::of(p, v);
        self.spans.reflector_settings.push((setting, of, span));
        Ok(on)
    }

    /// `kind NAME [cluster-scoped] [status-subresource off] [cache fixed N | dynamic [MIN..MAX] | off]`.
    fn kind_statement(&mut self, p: &mut Cursor, _: Head) -> R<()> {
        let name = p.next("a kind name")?;
        check_name(p, name, "kind", |c| c.is_ascii_alphanumeric())?;
        if self.config.kind_id(&name.text).is_some() {
            return Err(p.err_at(name, format!("kind `{}` is declared twice", name.text)));
        }
        // `cluster-scoped`: a kind whose objects have no namespace, as Nodes and
        // PersistentVolumes (`apiextensions` `scope: Cluster`).
        let cluster_scoped = p.eat("cluster-scoped");
        // `status-subresource off`: a CRD without `subresources.status`
        // (`customresource/strategy.go` with `a.status == nil`).
        let status_subresource = !p.eat("status-subresource");
        if !status_subresource {
            p.expect_kw("off")?;
        }
        let mut cache = CacheMode::Dynamic {
            capacity_min: DYNAMIC_CAPACITY_MIN,
            capacity_max: DYNAMIC_CAPACITY_MAX,
        };
        let cache_given = p.peek().is_some_and(|w| w.text == "cache");
        if p.eat("cache") {
            let m = p.next("a cache mode (fixed N, dynamic, off)")?;
            cache = match m.text.as_str() {
                "fixed" => {
                    let n = p.number("a capacity", DYNAMIC_CAPACITY_MAX as i64)?;
                    if n < 1 {
                        return Err(p.err_at(m, "a fixed cache holds at least 1 event"));
                    }
                    CacheMode::Fixed { capacity: n as u32 }
                }
                "dynamic" => {
                    let mut c = cache;
                    if let Some(r) = p.peek() {
                        let (lo, hi) = r
                            .text
                            .split_once("..")
                            .ok_or_else(|| p.err_at(r, "write the range as MIN..MAX"))?;
                        let (lo, hi): (u32, u32) = match (lo.parse(), hi.parse()) {
                            (Ok(a), Ok(b)) if a >= 1 && a <= b && b <= DYNAMIC_CAPACITY_MAX => (a, b),
                            _ => return Err(p.err_at(r, format!("capacities must satisfy 1 <= MIN <= MAX <= {DYNAMIC_CAPACITY_MAX}"))),
                        };
                        p.pos += 1;
                        c = CacheMode::Dynamic {
                            capacity_min: lo,
                            capacity_max: hi,
                        };
                    }
                    c
                }
                "off" => CacheMode::Off,
                _ => return Err(unknown(p, m, "cache mode", &["fixed", "dynamic", "off"])),
            };
        }
        p.done()?;
        if self.config.kinds.len() >= MAX_KINDS {
            return Err(p.err_at(name, format!("more than {MAX_KINDS} kinds")));
        }
        self.kinds_declared = true;
        self.explicit_cache.push(cache_given);
        self.spans.kinds.push(Span::of(p, name));
        self.config.kinds.push(KindConfig {
            name: name.text.clone(),
            cache,
            cluster_scoped,
            status_subresource,
        });
        Ok(())
    }
}
