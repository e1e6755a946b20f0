//! The [`Source`] trait: where posts come from, one batch at a time.

use std::path::PathBuf;

use async_trait::async_trait;
use jobwire_core::IncomingPost;

/// The most posts a file source puts in one batch.
pub const MAX_BATCH: usize = 500;

/// A stream of incoming posts, read in batches.
///
/// Every post a source returns has had [`IncomingPost::bound_text`] applied.
#[async_trait]
pub trait Source: Send {
    /// A short human description for logs: `"JSONL file data/dev.jsonl"`.
    fn describe(&self) -> String;

    /// The next batch of up to [`MAX_BATCH`] posts; `Ok(None)` once the source is exhausted.
    ///
    /// After an error the source is finished: further calls return `Ok(None)`. Batches
    /// returned before an error were read correctly, but the input as a whole was not: the
    /// caller decides whether to keep them (posts are idempotent by channel and id, so
    /// re-running a fixed import is safe).
    async fn next_batch(&mut self) -> Result<Option<Vec<IncomingPost>>, SourceError>;
}

#[async_trait]
impl<S: Source + ?Sized> Source for Box<S> {
    fn describe(&self) -> String {
        (**self).describe()
    }

    async fn next_batch(&mut self) -> Result<Option<Vec<IncomingPost>>, SourceError> {
        (**self).next_batch().await
    }
}

/// Why a source could not deliver its posts.
#[derive(Debug, thiserror::Error)]
pub enum SourceError {
    /// The file could not be opened or read.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The IO error.
        #[source]
        source: std::io::Error,
    },
    /// One line of a line-based file (JSONL) is not a valid record.
    #[error("{}:{line}: {reason}", path.display())]
    BadLine {
        /// The file.
        path: PathBuf,
        /// 1-based line number.
        line: usize,
        /// What is wrong with the line.
        reason: String,
    },
    /// A JSON document (a Telegram Desktop export) is invalid or truncated at a position.
    #[error(
        "{}: line {line}, column {column} (near byte {offset}): {reason}",
        path.display()
    )]
    BadDocument {
        /// The file.
        path: PathBuf,
        /// 1-based line of the error.
        line: usize,
        /// 1-based column of the error.
        column: usize,
        /// Byte offset of the error in the file (0-based; the byte just after the offending
        /// one).
        offset: u64,
        /// What is wrong.
        reason: String,
    },
    /// The file is valid JSON but not in a format the source understands.
    #[error("{}: {reason}", path.display())]
    Unrecognized {
        /// The file.
        path: PathBuf,
        /// What was expected.
        reason: String,
    },
    /// The background reader stopped without finishing or reporting an error (it panicked).
    #[error("{}: the reader stopped unexpectedly: {reason}", path.display())]
    Interrupted {
        /// The file.
        path: PathBuf,
        /// What is known about it.
        reason: String,
    },
}
