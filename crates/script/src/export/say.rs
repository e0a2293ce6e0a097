//! Narration (`Family::Say`).

use listwatch_core::*;
use serde::Serialize;

use super::Events;

#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(super) enum Out {
    /// Narration: `narration` is the index of its words in `names`.
    Say {
        narration: u32,
        /// Present (true) when playback pauses here for the reader: `say "..." and wait`.
        #[serde(skip_serializing_if = "std::ops::Not::not")]
        wait: bool,
    },
}

/// The narration's words, kept in the names table.
pub(super) fn name(k: &EventKind) -> Option<NameId> {
    match *k {
        EventKind::Say { text, .. } => Some(text),
        _ => None,
    }
}

impl Events<'_> {
    pub(super) fn say(&self, k: &EventKind) -> Out {
        match *k {
            EventKind::Say { text, wait } => Out::Say {
                narration: self.object(text),
                wait,
            },
            _ => unreachable!("not narration"),
        }
    }
}
