//! Where each element of the configuration was written, so that an error found once the whole
//! script is read (by the core's `Config::validate`, or by the checks of the run's end) is
//! reported at the line and column at fault.

use listwatch_core::ConfigError;

use super::Builder;
use crate::cursor::Cursor;
use crate::diag::Diagnostic;
use crate::lexer::Word;

/// A place in the script: line, column and length of a word.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Span {
    pub(super) line: usize,
    pub(super) col: usize,
    pub(super) len: usize,
}

impl Span {
    pub(super) fn of(p: &Cursor, w: &Word) -> Span {
        Span {
            line: p.line,
            col: w.col,
            len: w.len,
        }
    }
    pub(super) fn diag(self, msg: impl Into<String>) -> Diagnostic {
        Diagnostic::at(self.line, self.col, self.len, msg)
    }
}

/// Where each element of the configuration came from, index for index (timeline entries in
/// line order, before the timeline is sorted).
#[derive(Default)]
pub(super) struct Spans {
    pub(super) kinds: Vec<Span>,
    pub(super) apiservers: Vec<Span>,
    pub(super) controllers: Vec<Span>,
    pub(super) timeline: Vec<Span>,
    pub(super) run: Option<Span>,
    /// `bookmarks`, `streaming-list` and `kubernetes` settings, in line order: the statement,
    /// the controller whose option it is (`None`: the cluster's), and the value's span.
    pub(super) reflector_settings: Vec<(&'static str, Option<usize>, Span)>,
}

impl Builder {
    /// A configuration error at the line that declared the offending thing.
    pub(super) fn locate(&self, e: &ConfigError) -> Diagnostic {
        let at_start = |msg: String| Diagnostic::at(1, 1, 1, msg);
        fn named<'n>(
            spans: &[Span],
            mut names: impl Iterator<Item = &'n str>,
            want: &str,
        ) -> Option<Span> {
            names
                .position(|n| n == want)
                .and_then(|i| spans.get(i).copied())
        }
        let span = match e {
            ConfigError::NoApiservers => return at_start(e.to_string()),
            ConfigError::TooMany { what, max, .. } => match *what {
                "kinds" => self.spans.kinds.get(*max),
                "apiservers" => self.spans.apiservers.get(*max),
                "controllers" => self.spans.controllers.get(*max),
                _ => self.spans.timeline.get(*max),
            }
            .copied(),
            ConfigError::BadCapacity { kind, .. } => named(
                &self.spans.kinds,
                self.config.kinds.iter().map(|k| k.name.as_str()),
                kind,
            ),
            ConfigError::BadController { controller, .. } => named(
                &self.spans.controllers,
                self.config.controllers.iter().map(|c| c.name.as_str()),
                controller,
            ),
            ConfigError::InputAfterEnd { at_ms, .. } => self
                .config
                .timeline
                .iter()
                .zip(&self.spans.timeline)
                .find(|(t, _)| t.at_ms == *at_ms)
                .map(|(_, s)| *s),
            ConfigError::EndBeyondLimit { .. } => self.spans.run,
            ConfigError::StreamingListWithoutBookmarks { controller } => {
                self.streaming_conflict_span(controller)
            }
            _ => None,
        };
        match span {
            Some(s) => s.diag(e.to_string()),
            None => at_start(e.to_string()),
        }
    }

    /// Where a controller's streaming list without bookmarks was decided: its own `bookmarks`
    /// or `streaming-list` option, else the cluster's (`bookmarks` first: the list needs them),
    /// else the `kubernetes` version whose defaults chose them, else the controller itself.
    fn streaming_conflict_span(&self, controller: &str) -> Option<Span> {
        let idx = self
            .config
            .controllers
            .iter()
            .position(|c| c.name == controller)?;
        let last = |setting: &str, of: Option<usize>| {
            let settings = self.spans.reflector_settings.iter().rev();
            settings
                .filter(|(s, c, _)| *s == setting && *c == of)
                .map(|(_, _, span)| *span)
                .next()
        };
        last("bookmarks", Some(idx))
            .or_else(|| last("streaming-list", Some(idx)))
            .or_else(|| last("bookmarks", None))
            .or_else(|| last("streaming-list", None))
            .or_else(|| last("kubernetes", None))
            .or_else(|| self.spans.controllers.get(idx).copied())
    }
}
