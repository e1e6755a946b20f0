//! Local, faithful stand-ins for the two outside services jobwire talks to.
//!
//! * [`telegram`] — a Bot API server ([`telegram::FakeTelegram`]) that checks every call
//!   against the machine-readable Bot API specification, parses HTML like Telegram does,
//!   enforces Telegram's rate limits (429 with `retry_after`), answers 403 for chats that
//!   blocked the bot, records every accepted message and serves long polling and webhooks.
//! * [`llm`] — an OpenAI-compatible chat-completions server ([`llm::FakeLlm`]) answering
//!   jobwire's classification protocol from a labeled oracle, with scripted or random faults.
//! * [`wait`] — [`wait::eventually`], the one way tests wait for something that happens in
//!   the background.
//!
//! The two servers run on a real TCP socket so the real client crates (teloxide,
//! async-openai) are pointed at them by URL and nothing on the client side is mocked. Both
//! also expose an [`axum::Router`] so they can be embedded in another server.

pub mod llm;
mod server;
pub mod telegram;
pub mod wait;

use std::net::SocketAddr;

/// Errors returned by the testkit's constructors and loaders.
#[derive(Debug, thiserror::Error)]
pub enum TestkitError {
    /// The listening socket could not be bound.
    #[error("cannot bind {addr}: {source}")]
    Bind {
        /// The address that was asked for.
        addr: SocketAddr,
        /// The underlying IO error.
        #[source]
        source: std::io::Error,
    },
    /// Any other IO error (e.g. reading the bound address).
    #[error("io error: {0}")]
    Io(#[from] std::io::Error),
    /// A line of an oracle JSONL file is not a valid labeled post.
    #[error("oracle line {line}: {source}")]
    OracleLine {
        /// 1-based line number.
        line: usize,
        /// Why the line was rejected.
        #[source]
        source: serde_json::Error,
    },
    /// A URL could not be built.
    #[error("invalid url: {0}")]
    Url(#[from] url::ParseError),
    /// An injected update is not a JSON object.
    #[error("an update must be a JSON object")]
    InvalidUpdate,
}
