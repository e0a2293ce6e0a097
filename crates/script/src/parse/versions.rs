//! Versions and the behaviours they choose: `kubernetes 1.N`, `controller-runtime 0.N`, one
//! feature gate at a time, and `too-large-rv`; after the last line, the chosen versions'
//! defaults wherever the script did not choose (docs/fidelity.md's table of versions).

use listwatch_core::*;

use super::spans::Span;
use super::table::{statement, Head, Row, Statement};
use super::Builder;
use crate::cursor::{unknown, Cursor, R};
use crate::lexer::Word;

/// The Kubernetes version whose defaults apply when a script names none.
pub const DEFAULT_KUBERNETES: u32 = 34;

/// The feature gates `feature GATE on|off` sets (docs/fidelity.md, the table of versions).
pub const FEATURES: &[&str] = &[
    "ConsistentListFromCache",
    "ResilientWatchCacheInitialization",
    "WatchFromStorageWithoutResourceVersion",
    "WatchList",
    "WatchListClient",
    "EfficientWatchResumption",
    "RetryGenerateName",
    "StaleControllerConsistency",
];

pub(super) const STATEMENTS: &[Row<Statement>] = &[
    statement(
        "kubernetes",
        "kubernetes 1.N",
        "kubernetes 1.18",
        Builder::version_statement,
    ),
    statement(
        "controller-runtime",
        "controller-runtime 0.N",
        "controller-runtime 0.22",
        Builder::controller_runtime_statement,
    ),
    statement(
        "feature",
        "feature GATE on | off",
        "feature ConsistentListFromCache off",
        Builder::feature_statement,
    ),
    statement(
        "too-large-rv",
        "too-large-rv relist | retry",
        "too-large-rv retry",
        Builder::too_large_rv_statement,
    ),
];

impl Builder {
    /// `kubernetes 1.N`: the version whose defaults apply.
    fn version_statement(&mut self, p: &mut Cursor, _: Head) -> R<()> {
        let v = p.next("a version such as 1.34")?;
        let help = "write 1.N with N from 10 to 40, e.g. `kubernetes 1.34`";
        self.version = Some(minor_version(
            p,
            v,
            ("1.", 10),
            "a Kubernetes version",
            help,
        )?);
        let span = Span::of(p, v);
        self.spans
            .reflector_settings
            .push(("kubernetes", None, span));
        p.done()?;
        Ok(())
    }

    /// `controller-runtime 0.N`: the version whose queue default applies.
    fn controller_runtime_statement(&mut self, p: &mut Cursor, _: Head) -> R<()> {
        let v = p.next("a version such as 0.23")?;
        let help = "write 0.N with N from 1 to 40, e.g. `controller-runtime 0.22`";
        let what = "a controller-runtime version";
        self.controller_runtime = Some(minor_version(p, v, ("0.", 1), what, help)?);
        p.done()
    }

    /// `feature GATE on|off`: one behaviour a Kubernetes version's defaults would choose.
    fn feature_statement(&mut self, p: &mut Cursor, _: Head) -> R<()> {
        let g = p.next("a feature gate")?;
        let Some(&gate) = FEATURES.iter().find(|f| **f == g.text) else {
            return Err(unknown(p, g, "feature gate", FEATURES));
        };
        let on = if gate == "WatchListClient" {
            self.explicit_streaming = true;
            self.switch(p, "streaming-list", None)?
        } else {
            self.switch(p, "feature", None)?
        };
        let f = &mut self.config.server;
        match gate {
            "ConsistentListFromCache" => f.consistent_list_from_cache = on,
            "ResilientWatchCacheInitialization" => f.resilient_cache_init = on,
            "WatchFromStorageWithoutResourceVersion" => f.watch_from_storage_without_rv = on,
            "WatchList" => f.watch_list = on,
            "EfficientWatchResumption" => f.progress_notify = on,
            "RetryGenerateName" => f.retry_generate_name = on,
            "WatchListClient" => self.config.reflector.streaming_list = on,
            _ => self.stale_read_check = Some(on),
        }
        self.explicit.push(gate);
        p.done()
    }

    /// `too-large-rv relist|retry`: what a relist that gets 504 does next.
    fn too_large_rv_statement(&mut self, p: &mut Cursor, _: Head) -> R<()> {
        let v = p.next("`relist` or `retry`")?;
        self.config.reflector.too_large_relists_consistent = match v.text.as_str() {
            "relist" => true,
            "retry" => false,
            _ => return Err(unknown(p, v, "setting", &["relist", "retry"])),
        };
        self.explicit.push("too-large-rv");
        p.done()
    }

    /// The defaults of the named Kubernetes version, where the script did not choose.
    /// docs/fidelity.md's table of versions is this function, row for row.
    pub(super) fn apply_version_defaults(&mut self) {
        self.apply_controller_runtime_defaults();
        let minor = self.version.unwrap_or(DEFAULT_KUBERNETES);
        for (a, fake) in self.config.apiservers.iter_mut().zip(&self.fakes) {
            a.fake = fake.map(|v| FakeTracker::of_version(v.unwrap_or(minor)));
        }
        // KEP-5647's gates cover kube-controller-manager's DaemonSet, Job, ReplicaSet and
        // StatefulSet controllers: here, the `children` behaviour.
        let stale_check = self.stale_read_check.unwrap_or(minor >= 36);
        for (i, c) in self.config.controllers.iter_mut().enumerate() {
            let built_in = matches!(c.behaviour, Behaviour::Children { .. });
            if built_in && !self.explicit_options.contains(&(i, "stale-read-check")) {
                c.stale_read_check = stale_check;
            }
        }
        let Some(minor) = self.version else {
            return;
        };
        for (k, given) in self.config.kinds.iter_mut().zip(&self.explicit_cache) {
            if !given && minor < 19 {
                k.cache = CacheMode::Fixed { capacity: 100 };
            }
        }
        if !self.explicit_streaming {
            self.config.reflector.streaming_list = minor >= 35;
        }
        if !self.explicit_bookmarks {
            self.config.reflector.bookmarks = minor >= 16;
        }
        if !self.explicit.contains(&"too-large-rv") {
            self.config.reflector.too_large_relists_consistent = minor >= 19;
        }
        let version = ServerFeatures::of_version(minor);
        let f = &mut self.config.server;
        let gates: [(&str, &mut bool, bool); 6] = [
            (
                "ConsistentListFromCache",
                &mut f.consistent_list_from_cache,
                version.consistent_list_from_cache,
            ),
            (
                "ResilientWatchCacheInitialization",
                &mut f.resilient_cache_init,
                version.resilient_cache_init,
            ),
            (
                "WatchFromStorageWithoutResourceVersion",
                &mut f.watch_from_storage_without_rv,
                version.watch_from_storage_without_rv,
            ),
            ("WatchList", &mut f.watch_list, version.watch_list),
            (
                "EfficientWatchResumption",
                &mut f.progress_notify,
                version.progress_notify,
            ),
            (
                "RetryGenerateName",
                &mut f.retry_generate_name,
                version.retry_generate_name,
            ),
        ];
        for (gate, value, default) in gates {
            if !self.explicit.contains(&gate) {
                *value = default;
            }
        }
    }

    /// controller-runtime 0.23 made the priority queue the default (`UsePriorityQueue`);
    /// before it a controller has client-go's rate-limited queue.
    fn apply_controller_runtime_defaults(&mut self) {
        let Some(minor) = self.controller_runtime else {
            return;
        };
        let queue = if minor >= 23 {
            QueueKind::Priority
        } else {
            QueueKind::Classic
        };
        for (i, c) in self.config.controllers.iter_mut().enumerate() {
            if !self.explicit_options.contains(&(i, "queue")) {
                c.queue = queue;
            }
        }
    }
}

/// A version `MAJOR.N` (`prefix` is `MAJOR.`) with N from `lowest` to 40, as its minor number.
pub(super) fn minor_version(
    p: &Cursor,
    v: &Word,
    (prefix, lowest): (&str, u32),
    what: &str,
    help: &str,
) -> R<u32> {
    v.text
        .strip_prefix(prefix)
        .and_then(|m| m.parse::<u32>().ok())
        .filter(|m| (lowest..=40).contains(m))
        .ok_or_else(|| {
            p.err_at(v, format!("`{}` is not {what} this model knows", v.text))
                .help(help)
        })
}
