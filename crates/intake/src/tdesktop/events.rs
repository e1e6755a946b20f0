//! What the export's reading thread sends the importer ([`Event`]), and what an import saw
//! ([`ImportStats`]).

use std::fmt;

use jobwire_core::IncomingPost;

use crate::source::SourceError;

/// What an import saw, available from [`TdesktopExport::stats`] once it finished.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ImportStats {
    /// Chats with a `messages` array.
    pub chats: usize,
    /// Messages of any type.
    pub messages: usize,
    /// Posts produced (messages of type `message` with text).
    pub posts: usize,
    /// Service messages (joins, pins, calls...) and messages of other non-`message` types.
    pub skipped_service: usize,
    /// Messages without text (media only).
    pub skipped_without_text: usize,
    /// Malformed messages (fields of the wrong type, no id, a bad date), each reported with
    /// a warning and skipped; a strict import stops at the first instead.
    pub skipped_malformed: usize,
}

/// One message of the reading thread to the importer.
pub(super) enum Event {
    Batch(Vec<IncomingPost>),
    Done(ImportStats),
    Failed(SourceError),
}

impl fmt::Debug for Event {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Event::Batch(b) => write!(f, "Batch({} posts)", b.len()),
            Event::Done(s) => write!(f, "Done({s:?})"),
            Event::Failed(e) => write!(f, "Failed({e})"),
        }
    }
}
