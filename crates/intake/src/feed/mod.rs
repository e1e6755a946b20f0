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
//! - [`retry_until_stopped`] retries what follows a poll (taking its items in, saving the
//!   feed's state) with backoff until it succeeds or the process shuts down.
//!
//! On a feed's first successful poll its existing items are marked as seen, not delivered,
//! unless the feed is configured with `backfill`.
//!
//! A feed URL can carry a token (Upwork's `securityToken` in the query), so it is never
//! printed: logs, errors, [`FeedStatus`] and `Debug` name a feed by its name and
//! [`FeedConfig::host`], and HTTP errors are formatted without their URL.

mod facts;
mod poller;
mod raw;
mod section;
mod source;
mod state;
pub mod text;
pub mod upwork;

use std::fmt;
use std::time::Duration;

use chrono::{DateTime, FixedOffset, NaiveTime, Timelike, Utc};
use jobwire_core::IncomingPost;

pub use crate::retry::{RetryPolicy, retry_until_stopped};
pub use facts::{Budget, BudgetKind, FeedJobFacts};
pub use poller::{FeedPoller, Fetched, MAX_ITEMS_PER_POLL};
pub use section::FeedSection;
pub use source::{
    FEED_ITEMS_TOTAL, FEED_POLLS_TOTAL, FeedHandle, FeedSource, MAX_CONCURRENT_POLLS,
};
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

/// One feed to poll. Its `Debug` shows the URL's host only (see [`FeedConfig::host`]).
#[derive(Clone, PartialEq)]
pub struct FeedConfig {
    /// The feed URL (`http` or `https`). It may hold a token: never log or show it, use
    /// [`FeedConfig::host`].
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

    /// Where the feed is, fit for logs, errors and the admin panel: the URL's host, with
    /// its port when one is written (`www.upwork.com`, `127.0.0.1:8080`). Never the path,
    /// query or user info, which can carry tokens. `invalid URL` when it does not parse.
    pub fn host(&self) -> String {
        let Ok(url) = reqwest012::Url::parse(&self.url) else {
            return "invalid URL".to_owned();
        };
        match (url.host_str(), url.port()) {
            (Some(host), Some(port)) => format!("{host}:{port}"),
            (Some(host), None) => host.to_owned(),
            (None, _) => "URL without a host".to_owned(),
        }
    }

    /// `text` with the parts of the feed URL that can carry a secret — the URL itself, its
    /// query, its user info — replaced by `***`. For text the feed code does not write
    /// itself: library error messages, and states saved by versions that printed URLs.
    pub fn scrub(&self, text: &str) -> String {
        let mut secrets = vec![self.url.clone()];
        if let Ok(url) = reqwest012::Url::parse(&self.url) {
            secrets.push(url.as_str().to_owned());
            if let Some(query) = url.query().filter(|q| !q.is_empty()) {
                secrets.push(query.to_owned());
            }
            if let Some(password) = url.password() {
                secrets.push(password.to_owned());
            }
            if !url.username().is_empty() {
                secrets.push(format!("{}@", url.username()));
            }
        }
        // Longest first, so a query inside the URL does not leave the rest of it behind;
        // pieces of one or two characters would only mangle the text.
        secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
        let mut text = text.to_owned();
        for secret in secrets.iter().filter(|s| s.len() > 2) {
            if text.contains(secret.as_str()) {
                text = text.replace(secret.as_str(), "***");
            }
        }
        text
    }
}

impl fmt::Debug for FeedConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FeedConfig")
            .field("name", &self.name)
            .field("host", &self.host())
            .field("interval", &self.interval)
            .field("jitter", &self.jitter)
            .field("night", &self.night)
            .field("backfill", &self.backfill)
            .field("max_bytes", &self.max_bytes)
            .field("timeout", &self.timeout)
            .field("max_redirects", &self.max_redirects)
            .field("backoff", &self.backoff)
            .finish()
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

/// Why one poll of one feed failed. The message is what the log and the admin panel show;
/// it never holds the feed's URL.
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
    /// The feed's configuration is unusable (bad URL, client cannot be built, two feeds
    /// with one name).
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
