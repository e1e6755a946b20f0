//! The error type shared by both classifiers.

use std::time::Duration;

/// Why a post could not be classified.
///
/// The split that matters to a caller is [`ClassifyError::is_retryable`]: an
/// [`Unavailable`](ClassifyError::Unavailable) classifier may answer later (keep the post
/// waiting and retry), every other variant is permanent for this post or this configuration.
#[derive(Debug, thiserror::Error)]
pub enum ClassifyError {
    /// The classifier could not be reached or kept failing in a transient way (timeouts,
    /// 429, 5xx, connection errors, malformed answers) after all retries. Retry later.
    #[error("classifier unavailable after {attempts} attempt(s): {last_error}")]
    Unavailable {
        /// How many requests were made.
        attempts: u32,
        /// The last transient failure, for logs.
        last_error: String,
        /// A server-requested wait (`Retry-After`), when the last failure carried one.
        retry_after: Option<Duration>,
    },
    /// The endpoint refused the request in a way retrying will not fix (a 4xx other than
    /// 429: bad key, unknown model, request too large).
    #[error("classifier rejected the request (HTTP {status}): {message}")]
    Rejected {
        /// HTTP status code.
        status: u16,
        /// The server's explanation (already free of secrets).
        message: String,
    },
    /// The classifier was asked to do something it cannot (bad configuration, no training
    /// data, an unreadable model file).
    #[error("invalid classifier input or configuration: {0}")]
    Invalid(String),
    /// Reading or writing a model failed.
    #[error("model io: {0}")]
    Io(#[from] std::io::Error),
}

impl ClassifyError {
    /// Whether the same request may succeed later (the post should wait, not be dropped).
    pub fn is_retryable(&self) -> bool {
        matches!(self, Self::Unavailable { .. })
    }
}
