//! Narration (`EventKind::Say`).

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
pub(super) fn name(k: &SayEvent) -> NameId {
    k.text
}

impl Events<'_> {
    pub(super) fn say(&self, k: &SayEvent) -> Out {
        Out::Say {
            narration: self.object(k.text),
            wait: k.wait,
        }
    }
}
