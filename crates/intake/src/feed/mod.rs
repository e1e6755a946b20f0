//! RSS and Atom job feeds as a source.
//!
//! - [`FeedPoller`] does one HTTP poll of one feed: conditional request (`If-None-Match`,
//!   `If-Modified-Since`), bounded time, redirects and body size, HTML error pages rejected,
//!   the document parsed with feed-rs, items deduplicated by guid, else link, else a hash of
//!   title and content, and turned into [`FeedItem`]s (an [`IncomingPost`] plus the
//!   [`FeedJobFacts`] found in Upwork-style descriptions or job-board namespaces).
//! - [`FeedState`] is what a feed remembers between polls (validators, seen keys, failure
//!   streak, next poll, stop reason); [`next_poll_at`] is its pure schedule: interval plus
//!   jitter, a night interval, and on 403/429/5xx/network errors a back-off ladder (5 min,
//!   30 min, then stop and alert the admin), honouring a longer `Retry-After`.
//! - [`FeedSource`] polls many feeds as a [`crate::Source`]: due feeds concurrently, one
//!   feed's failure recorded in its [`FeedStatus`] and never stopping the others.
//!
//! On a feed's first successful poll its existing items are marked as seen, not delivered,
//! unless the feed is configured with `backfill`.

mod facts;
mod poller;
mod raw;
mod source;
mod state;
pub mod text;
pub mod upwork;

use std::time::Duration;

use chrono::{DateTime, FixedOffset, NaiveTime, Timelike, Utc};
use jobwire_core::IncomingPost;

pub use facts::{Budget, BudgetKind, FeedJobFacts};
pub use poller::{FeedPoller, Fetched, MAX_ITEMS_PER_POLL};
pub use source::{FeedHandle, FeedSource, MAX_CONCURRENT_POLLS};
pub use state::{
    FailureAction, FeedHealth, FeedState, FeedStatus, MAX_RETRY_AFTER, MIN_INTERVAL, SEEN_CAPACITY,
    SeenSet, next_poll_at,
};
pub use text::html_to_text;

/// The default cap on a feed body: 5 MB.
pub const DEFAULT_MAX_BYTES: u64 = 5 * 1024 * 1024;
/// The default time limit for one poll, body included: 20 s.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(20);
/// The default number of redirects followed: 5.
pub const DEFAULT_MAX_REDIRECTS: usize = 5;
/// The default back-off ladder: 5 minutes, then 30 minutes, then stop.
pub const DEFAULT_BACKOFF: [Duration; 2] =
    [Duration::from_secs(5 * 60), Duration::from_secs(30 * 60)];

/// One feed to poll.
#[derive(Debug, Clone, PartialEq)]
pub struct FeedConfig {
    /// The feed URL (`http` or `https`).
    pub url: String,
    /// The channel handle posts carry (`feed:larajobs`); unique among feeds.
    pub name: String,
    /// Time between polls by day (at least [`MIN_INTERVAL`]).
    pub interval: Duration,
    /// Up to this much is added at random to every interval, so feeds on one host do not
    /// fire together.
    pub jitter: Duration,
    /// A quieter schedule for the night.
    pub night: Option<NightSchedule>,
    /// Deliver the items already in the feed on its first poll (default: mark them seen).
    pub backfill: bool,
    /// The largest body accepted, in bytes (default [`DEFAULT_MAX_BYTES`]).
    pub max_bytes: u64,
    /// The time limit for one poll, from connect to the last body byte.
    pub timeout: Duration,
    /// Redirects followed before the poll fails (a loop fails this way too).
    pub max_redirects: usize,
    /// Waits after consecutive 403/429/5xx/network failures; one more failure than steps
    /// stops the feed (default [`DEFAULT_BACKOFF`]).
    pub backoff: Vec<Duration>,
}

impl FeedConfig {
    /// A feed with the defaults: every 10 minutes with up to 1 minute of jitter, no night
    /// schedule, no backfill, 5 MB, 20 s, 5 redirects, back-off 5 min → 30 min → stop.
    pub fn new(name: impl Into<String>, url: impl Into<String>) -> Self {
        Self {
            url: url.into(),
            name: name.into(),
            interval: Duration::from_secs(600),
            jitter: Duration::from_secs(60),
            night: None,
            backfill: false,
            max_bytes: DEFAULT_MAX_BYTES,
            timeout: DEFAULT_TIMEOUT,
            max_redirects: DEFAULT_MAX_REDIRECTS,
            backoff: DEFAULT_BACKOFF.to_vec(),
        }
    }
}

/// A window of the day polled at a different interval (usually longer).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NightSchedule {
    /// Start of the window (local time at `utc_offset`), inclusive.
    pub start: NaiveTime,
    /// End of the window, exclusive; before `start` means the window spans midnight.
    pub end: NaiveTime,
    /// Time between polls inside the window.
    pub interval: Duration,
    /// The offset the times are in (the operator's time zone; UTC for `+00:00`).
    pub utc_offset: FixedOffset,
}

impl NightSchedule {
    /// Whether `at` falls inside the window. A window with `start == end` is empty.
    pub fn contains(&self, at: DateTime<Utc>) -> bool {
        let local = at.with_timezone(&self.utc_offset).time();
        let local = local.with_nanosecond(0).unwrap_or(local);
        if self.start <= self.end {
            self.start <= local && local < self.end
        } else {
            local >= self.start || local < self.end
        }
    }
}

/// One new item of a feed.
#[derive(Debug, Clone, PartialEq)]
pub struct FeedItem {
    /// The post: `channel` = the feed's name, `external_id` = the dedup key (guid, else
    /// link, else `sha256:` of title and content), `text` = title, a blank line, the
    /// content as plain text and, if facts were found, a facts line.
    pub post: IncomingPost,
    /// Structured facts (Upwork budget/category/skills/country, job-board fields).
    pub facts: Option<FeedJobFacts>,
}

/// Why one poll of one feed failed. The message is what the log and the admin panel show.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FeedError {
    /// The server answered with an error status.
    #[error("HTTP {status}")]
    Status {
        /// The status code.
        status: u16,
        /// The server's `Retry-After`, if it sent one.
        retry_after: Option<Duration>,
    },
    /// Connecting or reading failed.
    #[error("network error: {0}")]
    Network(String),
    /// The poll took longer than the feed's timeout.
    #[error("timed out after {} ms", .0.as_millis())]
    Timeout(Duration),
    /// More redirects than allowed, or a redirect loop.
    #[error("redirect loop or more than {0} redirects")]
    TooManyRedirects(usize),
    /// The body is larger than the feed's limit.
    #[error("body larger than {0} bytes")]
    TooLarge(u64),
    /// The answer is not a feed (an HTML page, or XML with no feed root).
    #[error("not a feed: {0}")]
    NotAFeed(String),
    /// The document could not be parsed.
    #[error("broken XML: {0}")]
    BrokenXml(String),
    /// The feed's configuration is unusable (bad URL, client cannot be built).
    #[error("bad feed configuration: {0}")]
    Config(String),
}

impl FeedError {
    /// Whether this error climbs the back-off ladder: 403, 429, 5xx, network errors and
    /// timeouts (the server is refusing or struggling; polling harder would make it worse).
    pub fn escalates(&self) -> bool {
        match self {
            Self::Status { status, .. } => {
                matches!(*status, 403 | 429 | 408) || (500..=599).contains(status)
            }
            Self::Network(_) | Self::Timeout(_) => true,
            _ => false,
        }
    }

    /// The server's `Retry-After`, if any.
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            Self::Status { retry_after, .. } => *retry_after,
            _ => None,
        }
    }
}
