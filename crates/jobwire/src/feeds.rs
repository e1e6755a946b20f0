//! RSS and Atom job feeds in the parser role: `[[feeds]]` in the configuration, polled by
//! `jobwire_intake::FeedSource`, each item taken in by intake, and each feed's state (ETag,
//! seen items, back-off) kept in the store so a restart neither floods nor forgets.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use chrono::Utc;
use jobwire_intake::feed::{FeedConfig, FeedSource, FeedState, RetryPolicy, retry_until_stopped};
use jobwire_intake::stage::IntakeStage;
use jobwire_store::Store;
use serde::Deserialize;
use tokio_util::sync::CancellationToken;

const STATE_NAMESPACE: &str = "feed";

/// One `[[feeds]]` entry. Its `Debug` shows the URL's host only: the URL may hold a token.
#[derive(Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FeedSection {
    /// The channel name its posts carry (`feed:larajobs`); unique.
    pub name: String,
    /// The feed URL; may hold a token (Upwork's `securityToken`), so it is never printed.
    pub url: String,
    /// Seconds between polls (jitter is added on top).
    #[serde(default = "d600")]
    pub interval_secs: u64,
    #[serde(default = "d60")]
    pub jitter_secs: u64,
    /// Deliver what the feed already holds on its first poll (default: mark it seen).
    #[serde(default)]
    pub backfill: bool,
}

impl std::fmt::Debug for FeedSection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FeedSection")
            .field("name", &self.name)
            .field("host", &self.to_config().host())
            .field("interval_secs", &self.interval_secs)
            .field("jitter_secs", &self.jitter_secs)
            .field("backfill", &self.backfill)
            .finish()
    }
}

fn d600() -> u64 {
    600
}
fn d60() -> u64 {
    60
}

impl FeedSection {
    pub fn to_config(&self) -> FeedConfig {
        let mut config = FeedConfig::new(self.name.clone(), self.url.clone());
        config.interval = Duration::from_secs(self.interval_secs.max(30));
        config.jitter = Duration::from_secs(self.jitter_secs);
        config.backfill = self.backfill;
        config
    }
}

/// Builds the feed source with the states saved by the last run.
pub async fn source(feeds: &[FeedSection], store: &dyn Store) -> anyhow::Result<FeedSource> {
    let configs = feeds.iter().map(FeedSection::to_config).collect();
    let mut states = HashMap::new();
    for (name, value) in store.state_list(STATE_NAMESPACE).await? {
        match serde_json::from_str::<FeedState>(&value) {
            Ok(state) => {
                states.insert(name, state);
            }
            Err(e) => {
                tracing::warn!(feed = %name, error = %e, "saved feed state unreadable; starting fresh");
            }
        }
    }
    Ok(FeedSource::new(configs)
        .context("feeds")?
        .with_states(states))
}

/// How taking in a poll's items and saving the feed states are retried while the database
/// fails: 250 ms doubling to 30 s.
const RETRY: RetryPolicy = RetryPolicy {
    first: Duration::from_millis(250),
    max: Duration::from_secs(30),
};

/// Polls the feeds until `shutdown`, handing every new item to intake and saving each
/// feed's state after every round.
///
/// A database error does not end the task: taking an item in and saving a state are retried
/// with backoff (logged with the feed's name) until the database answers, so a poll's items
/// are taken in once it is back. On shutdown the retries stop and the round's states are not
/// saved, so the items not taken in yet are polled again at the next start (those already
/// taken in are then known, and skipped as duplicates).
pub async fn run(
    feeds: Vec<FeedSection>,
    intake: Arc<IntakeStage>,
    store: Arc<dyn Store>,
    shutdown: CancellationToken,
) -> anyhow::Result<()> {
    let mut source = source(&feeds, store.as_ref()).await?;
    loop {
        let items = tokio::select! {
            () = shutdown.cancelled() => return Ok(()),
            items = source.poll_due(Utc::now()) => items,
        };
        for item in items {
            let post = item.post;
            let feed = post.channel.clone();
            let taken = retry_until_stopped(
                &feed,
                "taking in a feed item",
                RETRY,
                shutdown.cancelled(),
                || intake.ingest(post.clone()),
            )
            .await;
            let Some(outcome) = taken else {
                return Ok(());
            };
            tracing::debug!(feed = %feed, outcome = outcome.name(), "feed item taken in");
        }
        for (name, state) in source.states() {
            let value = serde_json::to_string(&state)?;
            let saved = retry_until_stopped(
                &name,
                "saving the feed state",
                RETRY,
                shutdown.cancelled(),
                || store.state_put(STATE_NAMESPACE, &name, &value, Utc::now()),
            )
            .await;
            if saved.is_none() {
                return Ok(());
            }
        }
        let wait = source
            .next_due_at()
            .map(|t| (t - Utc::now()).to_std().unwrap_or_default())
            .unwrap_or(Duration::from_secs(60))
            .clamp(Duration::from_secs(1), Duration::from_secs(60));
        tokio::select! {
            _ = shutdown.cancelled() => return Ok(()),
            _ = tokio::time::sleep(wait) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_shows_the_feed_host_not_its_url() {
        let section = FeedSection {
            name: "feed:upwork".into(),
            url: "https://www.upwork.com/ab/feed/jobs/rss?securityToken=SECRET123".into(),
            interval_secs: 600,
            jitter_secs: 60,
            backfill: false,
        };
        let shown = format!("{section:?}");
        assert!(shown.contains("feed:upwork"), "{shown}");
        assert!(shown.contains("www.upwork.com"), "{shown}");
        assert!(!shown.contains("SECRET123"), "{shown}");
    }
}
