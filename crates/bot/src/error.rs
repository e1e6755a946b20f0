//! The crate's error type.

use jobwire_store::StoreError;

/// Why the bots could not start, or why handling an update failed.
///
/// Never carries a bot token: Telegram errors are rendered with the token replaced by
/// `<token>` ([`crate::telegram::describe`]).
#[derive(Debug, thiserror::Error)]
pub enum BotError {
    /// The configuration handed to [`crate::Bots::start`] is unusable.
    #[error("bot configuration: {0}")]
    Config(String),
    /// The database failed.
    #[error("store: {0}")]
    Store(#[from] StoreError),
    /// Redis (dialogue state or update dedup) failed.
    #[error("redis: {0}")]
    Redis(#[from] redis::RedisError),
    /// A Bot API call failed.
    #[error("Telegram bot {bot}: {message}")]
    Telegram {
        /// The configured bot name.
        bot: String,
        /// What went wrong (token redacted).
        message: String,
    },
    /// The HTTP client for the Bot API could not be built.
    #[error("HTTP client: {0}")]
    Client(String),
    /// Queuing the vacancies a resuming subscriber missed failed (the store, in the
    /// fan-out's words).
    #[error("catching up: {0}")]
    CatchUp(String),
}

impl BotError {
    /// Whether retrying the same work a moment later may succeed (a database or Redis that
    /// is briefly away), as opposed to a bad configuration.
    pub fn is_transient(&self) -> bool {
        matches!(
            self,
            Self::Store(_) | Self::Redis(_) | Self::Telegram { .. } | Self::CatchUp(_)
        )
    }
}
