//! RSS and Atom job feeds in the parser role: the sources of kind feed the database holds
//! (`[[feeds]]` in the configuration seeds them), polled by `jobwire_intake::FeedSource`,
//! each item taken in by intake, and each feed's state (ETag, seen items, back-off) kept in
//! the store so a restart neither floods nor forgets.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use chrono::Utc;
use jobwire_core::source::MIN_FEED_INTERVAL_SECS;
use jobwire_intake::feed::{FeedConfig, FeedSource, FeedState, RetryPolicy, retry_until_stopped};
use jobwire_intake::sources::{SourcesSnapshot, SourcesWatch, first_read};
use jobwire_intake::stage::IntakeStage;
use jobwire_store::{ChannelRow, SourceKind, SourceNote, Store};
use tokio_util::sync::CancellationToken;

const STATE_NAMESPACE: &str = "feed";

/// `[[feeds]]` entries are defined beside the feed poller, in jobwire-intake.
pub use jobwire_intake::feed::FeedSection;

/// Builds the feed source of `feeds` with the states saved by the last run.
pub async fn source(feeds: &[FeedSection], store: &dyn Store) -> anyhow::Result<FeedSource> {
    let configs = feeds.iter().map(FeedSection::to_config).collect();
    Ok(FeedSource::new(configs)
        .context("feeds")?
        .with_states(saved_states(store).await?))
}

/// How taking in a poll's items and saving the feed states are retried while the database
/// fails: 250 ms doubling to 30 s.
const RETRY: RetryPolicy = RetryPolicy {
    first: Duration::from_millis(250),
    max: Duration::from_secs(30),
};

/// How many times an item the database refuses (not: cannot be reached) is tried before it
/// is kept as a dead letter and the feeds go on.
const TRIES: u32 = 3;

/// The feed a source of kind feed describes (`None` for other sources).
pub fn feed_config(source: &ChannelRow) -> Option<FeedConfig> {
    let feed = source.feed.as_ref()?;
    let mut config = FeedConfig::new(source.handle.clone(), feed.url.clone());
    config.interval = Duration::from_secs(feed.interval_secs.max(MIN_FEED_INTERVAL_SECS));
    config.jitter = Duration::from_secs(feed.jitter_secs);
    config.backfill = feed.backfill;
    Some(config)
}

/// The feed states the last runs saved, by feed name (unreadable ones are skipped).
async fn saved_states(store: &dyn Store) -> anyhow::Result<HashMap<String, FeedState>> {
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
    Ok(states)
}

/// Makes `source` poll the feeds `sources` reads now, each new one from its saved state.
async fn follow(source: &mut FeedSource, sources: &SourcesSnapshot, store: &dyn Store) {
    let configs = sources
        .read(SourceKind::Feed)
        .filter_map(feed_config)
        .collect();
    let mut saved = match saved_states(store).await {
        Ok(saved) => saved,
        Err(e) => {
            tracing::warn!(error = %e, "cannot read the saved feed states; new feeds start fresh");
            HashMap::new()
        }
    };
    for (name, e) in source.set_feeds(configs, &mut saved) {
        tracing::warn!(feed = %name, error = %e, "feed left out");
        note(store, &name, SourceNote::Error(e.to_string())).await;
    }
}

/// Records what a feed's poll found for the admin panel; a failure is only logged.
async fn note(store: &dyn Store, feed: &str, note: SourceNote) {
    if let Err(e) = store.note_source(feed, &note, Utc::now()).await {
        tracing::warn!(%feed, error = %e, "cannot record the feed's status");
    }
}

/// Polls the feeds the database holds until `shutdown`, handing every new item to intake
/// and saving each feed's state after every round.
///
/// The feeds are the enabled sources of kind feed, as `sources` follows them: a feed added
/// in the admin panel is polled within seconds (from the state an earlier run saved, if it
/// was read before), one disabled or removed is no longer polled, a changed URL or interval
/// applies at once. Each feed's last error (or its recovery) is noted on its source.
///
/// A database error does not end the task: taking an item in and saving a state are retried
/// with backoff (logged with the feed's name) until the database answers, so a poll's items
/// are taken in once it is back. An item the database answers but refuses (a value it cannot
/// store) is tried [`TRIES`] times and then kept as a dead letter with the reason, so one bad
/// item never holds up the others or the other feeds. On shutdown the retries stop and the round's states are not
/// saved, so the items not taken in yet are polled again at the next start (those already
/// taken in are then known, and skipped as duplicates).
pub async fn run(
    mut sources: SourcesWatch,
    intake: Arc<IntakeStage>,
    store: Arc<dyn Store>,
    shutdown: CancellationToken,
) -> anyhow::Result<()> {
    let first = tokio::select! {
        () = shutdown.cancelled() => return Ok(()),
        first = first_read(&mut sources) => first,
    };
    let Some(first) = first else {
        anyhow::bail!("the sources are not followed (the sources watcher is gone)");
    };
    let mut source = FeedSource::new(Vec::new()).context("feeds")?;
    follow(&mut source, &first, store.as_ref()).await;
    let mut noted: HashMap<String, Option<String>> = HashMap::new();
    loop {
        let items = tokio::select! {
            () = shutdown.cancelled() => return Ok(()),
            items = source.poll_due(Utc::now()) => items,
        };
        for item in items {
            let post = item.post;
            let feed = post.channel.clone();
            let taken = intake
                .take_in(&feed, post, false, RETRY, TRIES, shutdown.cancelled())
                .await;
            match taken {
                None => return Ok(()),
                Some(Ok(outcome)) => {
                    tracing::debug!(feed = %feed, ?outcome, "feed item taken in");
                }
                // Logged and kept as a dead letter by intake; the other items and feeds go on.
                Some(Err(_)) => {}
            }
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
        for status in source.statuses() {
            if status.last_poll_at.is_none() || noted.get(&status.name) == Some(&status.last_error)
            {
                continue;
            }
            let what = match &status.last_error {
                Some(e) => SourceNote::Error(e.clone()),
                None => SourceNote::Ok,
            };
            note(store.as_ref(), &status.name, what).await;
            noted.insert(status.name, status.last_error);
        }
        let wait = source
            .next_due_at()
            .map(|t| (t - Utc::now()).to_std().unwrap_or_default())
            .unwrap_or(Duration::from_secs(60))
            .clamp(Duration::from_secs(1), Duration::from_secs(60));
        tokio::select! {
            _ = shutdown.cancelled() => return Ok(()),
            _ = tokio::time::sleep(wait) => {}
            changed = sources.changed() => {
                if changed.is_err() {
                    anyhow::bail!("the sources are not followed (the sources watcher is gone)");
                }
                let now = Arc::clone(&sources.borrow_and_update());
                follow(&mut source, &now, store.as_ref()).await;
            }
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
