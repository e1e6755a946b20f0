//! Many feeds as one live [`Source`].

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use futures::StreamExt;
use jobwire_core::IncomingPost;
use rand::SeedableRng;
use rand::rngs::StdRng;
use tokio::sync::Notify;

use super::poller::apply_fetched;
use super::state::{FeedState, FeedStatus};
use super::{FeedConfig, FeedError, FeedItem, FeedPoller};
use crate::source::{MAX_BATCH, Source, SourceError};

/// `jobwire_feed_polls_total{outcome}`: feed polls, `ok` or `error`.
pub const FEED_POLLS_TOTAL: &str = "jobwire_feed_polls_total";
/// `jobwire_feed_items_total{feed}`: new items a feed gave.
pub const FEED_ITEMS_TOTAL: &str = "jobwire_feed_items_total";

/// How many feeds are fetched at the same time by default.
pub const MAX_CONCURRENT_POLLS: usize = 4;

/// The longest [`FeedSource::next_batch`](Source::next_batch) sleeps before looking again
/// (so a changed clock or an admin's resume is noticed).
const MAX_IDLE: Duration = Duration::from_secs(60);

/// The shortest sleep between two rounds of [`FeedSource::next_batch`](Source::next_batch)
/// (a guard against a busy loop if the clock misbehaves).
const MIN_IDLE: Duration = Duration::from_secs(1);

#[derive(Debug)]
struct Feed {
    poller: FeedPoller,
    state: FeedState,
}

#[derive(Debug, Default)]
struct Shared {
    statuses: Mutex<Vec<FeedStatus>>,
    resume: Mutex<HashSet<String>>,
    wake: Notify,
}

/// A cloneable view of a running [`FeedSource`] for the admin panel: every feed's status,
/// and resuming a stopped feed.
#[derive(Debug, Clone)]
pub struct FeedHandle {
    shared: Arc<Shared>,
}

impl FeedHandle {
    /// Every feed's status, in configuration order, as of the last poll.
    pub fn statuses(&self) -> Vec<FeedStatus> {
        self.shared
            .statuses
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Asks the source to resume the feed `name` (clear its stop and back-off; it is polled
    /// on the next round). Returns whether such a feed exists.
    pub fn resume(&self, name: &str) -> bool {
        let known = self.statuses().iter().any(|s| s.name == name);
        if known {
            self.shared
                .resume
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .insert(name.to_owned());
            self.shared.wake.notify_one();
        }
        known
    }
}

/// A persisted state with its error texts scrubbed of the feed URL's secret parts
/// ([`FeedConfig::scrub`]): earlier versions could write the URL into them.
fn scrubbed(mut state: FeedState, config: &FeedConfig) -> FeedState {
    for text in [&mut state.last_error, &mut state.stopped_reason]
        .into_iter()
        .flatten()
    {
        *text = config.scrub(text);
    }
    state
}

/// RSS/Atom feeds as a live [`Source`].
///
/// Each round polls the feeds that are due, at most [`MAX_CONCURRENT_POLLS`] at a time
/// (see [`Self::with_concurrency`]). A feed's failure is logged with its reason and
/// recorded in its [`FeedStatus`]; the other feeds go on. [`Source::next_batch`] never
/// returns `Ok(None)`: it sleeps until the next feed is due and returns once there are new
/// posts.
#[derive(Debug)]
pub struct FeedSource {
    feeds: Vec<Feed>,
    rng: StdRng,
    concurrency: usize,
    shared: Arc<Shared>,
    pending: VecDeque<IncomingPost>,
}

impl FeedSource {
    /// A source over `configs`, every feed starting fresh (its first poll marks existing
    /// items as seen unless it asks for a backfill). Fails on a bad URL or a duplicate name.
    pub fn new(configs: Vec<FeedConfig>) -> Result<Self, FeedError> {
        let mut names = HashSet::new();
        let mut feeds = Vec::with_capacity(configs.len());
        for config in configs {
            if !names.insert(config.name.clone()) {
                return Err(FeedError::Config(format!(
                    "two feeds are named {:?}",
                    config.name
                )));
            }
            feeds.push(Feed {
                poller: FeedPoller::new(config)?,
                state: FeedState::default(),
            });
        }
        let source = Self {
            feeds,
            rng: StdRng::from_os_rng(),
            concurrency: MAX_CONCURRENT_POLLS,
            shared: Arc::default(),
            pending: VecDeque::new(),
        };
        source.publish_statuses();
        Ok(source)
    }

    /// Restores persisted states by feed name (feeds without one start fresh). Their error
    /// texts are scrubbed of the feed URL's secret parts ([`FeedConfig::scrub`]): earlier
    /// versions could write the URL into them.
    pub fn with_states(mut self, mut states: HashMap<String, FeedState>) -> Self {
        for feed in &mut self.feeds {
            if let Some(state) = states.remove(&feed.poller.config().name) {
                feed.state = scrubbed(state, feed.poller.config());
            }
        }
        self.publish_statuses();
        self
    }

    /// Replaces the feeds while the source runs (an admin added, changed, disabled or
    /// removed some). A feed whose name and configuration did not change keeps its state; a
    /// changed one keeps it unless its URL changed; a new one starts from its state in
    /// `saved` (kept by an earlier run) or fresh. Returns the feeds that could not be set up
    /// (a bad URL, a name given twice): they are left out, the others are polled.
    pub fn set_feeds(
        &mut self,
        configs: Vec<FeedConfig>,
        saved: &mut HashMap<String, FeedState>,
    ) -> Vec<(String, FeedError)> {
        let mut old: HashMap<String, Feed> = self
            .feeds
            .drain(..)
            .map(|f| (f.poller.config().name.clone(), f))
            .collect();
        let mut names = HashSet::new();
        let mut errors = Vec::new();
        for config in configs {
            let name = config.name.clone();
            if !names.insert(name.clone()) {
                errors.push((
                    name.clone(),
                    FeedError::Config(format!("two feeds are named {name:?}")),
                ));
                continue;
            }
            if let Some(feed) = old.remove(&name) {
                if *feed.poller.config() == config {
                    self.feeds.push(feed);
                    continue;
                }
                let state = if feed.poller.config().url == config.url {
                    feed.state
                } else {
                    FeedState::default()
                };
                match FeedPoller::new(config) {
                    Ok(poller) => self.feeds.push(Feed { poller, state }),
                    Err(e) => errors.push((name, e)),
                }
                continue;
            }
            match FeedPoller::new(config) {
                Ok(poller) => {
                    let state = saved
                        .remove(&name)
                        .map(|state| scrubbed(state, poller.config()))
                        .unwrap_or_default();
                    tracing::info!(feed = %name, host = %poller.config().host(), "feed added");
                    self.feeds.push(Feed { poller, state });
                }
                Err(e) => errors.push((name, e)),
            }
        }
        for name in old.keys() {
            tracing::info!(feed = %name, "feed no longer polled");
        }
        self.publish_statuses();
        errors
    }

    /// Seeds the jitter's random number generator (for reproducible schedules in tests).
    pub fn with_rng_seed(mut self, seed: u64) -> Self {
        self.rng = StdRng::seed_from_u64(seed);
        self
    }

    /// Sets how many feeds are fetched at once (at least one).
    pub fn with_concurrency(mut self, concurrency: usize) -> Self {
        self.concurrency = concurrency.max(1);
        self
    }

    /// A handle for the admin panel.
    pub fn handle(&self) -> FeedHandle {
        FeedHandle {
            shared: Arc::clone(&self.shared),
        }
    }

    /// Every feed's status, in configuration order.
    pub fn statuses(&self) -> Vec<FeedStatus> {
        self.feeds
            .iter()
            .map(|f| f.state.status(f.poller.config()))
            .collect()
    }

    /// The state of the feed `name`, to persist it.
    pub fn state(&self, name: &str) -> Option<&FeedState> {
        self.feeds
            .iter()
            .find(|f| f.poller.config().name == name)
            .map(|f| &f.state)
    }

    /// Every feed's state by name, to persist them.
    pub fn states(&self) -> HashMap<String, FeedState> {
        self.feeds
            .iter()
            .map(|f| (f.poller.config().name.clone(), f.state.clone()))
            .collect()
    }

    /// Resumes the stopped or backing-off feed `name` now. Returns whether it exists.
    pub fn resume(&mut self, name: &str) -> bool {
        let Some(feed) = self
            .feeds
            .iter_mut()
            .find(|f| f.poller.config().name == name)
        else {
            return false;
        };
        tracing::info!(feed = %name, "feed resumed");
        feed.state.resume();
        self.publish_statuses();
        true
    }

    /// The earliest time a feed is due (`None` if every feed is stopped). A feed never
    /// polled is due at the Unix epoch, i.e. at once.
    pub fn next_due_at(&self) -> Option<DateTime<Utc>> {
        self.feeds
            .iter()
            .filter(|f| f.state.stopped_reason.is_none())
            .map(|f| f.state.next_poll_at.unwrap_or(DateTime::UNIX_EPOCH))
            .min()
    }

    /// Polls every feed due at `now` (concurrently, bounded) and returns their new items,
    /// grouped by feed in configuration order, each feed's oldest first. Failures are
    /// recorded in the failing feed's state and status and logged; they never affect the
    /// other feeds.
    pub async fn poll_due(&mut self, now: DateTime<Utc>) -> Vec<FeedItem> {
        self.apply_resume_requests();
        let due: Vec<usize> = self
            .feeds
            .iter()
            .enumerate()
            .filter(|(_, f)| f.state.is_due(now))
            .map(|(i, _)| i)
            .collect();
        if due.is_empty() {
            return Vec::new();
        }
        let feeds = &self.feeds;
        let mut results: Vec<(usize, Result<super::Fetched, FeedError>)> =
            futures::stream::iter(due)
                .map(|i| async move {
                    let feed = &feeds[i];
                    let fetched = feed
                        .poller
                        .fetch(
                            feed.state.etag.as_deref(),
                            feed.state.last_modified.as_deref(),
                            now,
                        )
                        .await;
                    (i, fetched)
                })
                .buffer_unordered(self.concurrency)
                .collect()
                .await;
        results.sort_by_key(|(i, _)| *i);

        let mut items = Vec::new();
        for (i, result) in results {
            let Some(feed) = self.feeds.get_mut(i) else {
                continue;
            };
            let config = feed.poller.config();
            match result {
                Ok(fetched) => {
                    let new = apply_fetched(&mut feed.state, config, fetched, now, &mut self.rng);
                    metrics::counter!(FEED_POLLS_TOTAL, "outcome" => "ok").increment(1);
                    metrics::counter!(FEED_ITEMS_TOTAL, "feed" => config.name.clone())
                        .increment(new.len() as u64);
                    items.extend(new);
                }
                Err(error) => {
                    feed.state
                        .record_failure(now, config, &error, &mut self.rng);
                    metrics::counter!(FEED_POLLS_TOTAL, "outcome" => "error").increment(1);
                }
            }
        }
        self.publish_statuses();
        items
    }

    fn apply_resume_requests(&mut self) {
        let names: Vec<String> = self
            .shared
            .resume
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .drain()
            .collect();
        for name in names {
            self.resume(&name);
        }
    }

    fn publish_statuses(&self) {
        let statuses = self.statuses();
        *self
            .shared
            .statuses
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = statuses;
    }
}

#[async_trait]
impl Source for FeedSource {
    fn describe(&self) -> String {
        let names: Vec<&str> = self
            .feeds
            .iter()
            .map(|f| f.poller.config().name.as_str())
            .collect();
        format!("{} RSS/Atom feed(s): {}", names.len(), names.join(", "))
    }

    async fn next_batch(&mut self) -> Result<Option<Vec<IncomingPost>>, SourceError> {
        loop {
            if !self.pending.is_empty() {
                let n = self.pending.len().min(MAX_BATCH);
                return Ok(Some(self.pending.drain(..n).collect()));
            }
            let items = self.poll_due(Utc::now()).await;
            if !items.is_empty() {
                self.pending.extend(items.into_iter().map(|item| item.post));
                continue;
            }
            let wait = self
                .next_due_at()
                .map_or(MAX_IDLE, |at| {
                    (at - Utc::now()).to_std().unwrap_or(Duration::ZERO)
                })
                .clamp(MIN_IDLE, MAX_IDLE);
            tokio::select! {
                () = tokio::time::sleep(wait) => {}
                () = self.shared.wake.notified() => {}
            }
        }
    }
}
