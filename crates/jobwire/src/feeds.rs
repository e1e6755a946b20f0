//! RSS and Atom job feeds in the parser role: `[[feeds]]` in the configuration, polled by
//! `jobwire_intake::FeedSource`, each item taken in by intake, and each feed's state (ETag,
//! seen items, back-off) kept in the store so a restart neither floods nor forgets.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use chrono::Utc;
use jobwire_intake::feed::{FeedConfig, FeedSource, FeedState};
use jobwire_intake::stage::IntakeStage;
use jobwire_store::Store;
use serde::Deserialize;
use tokio_util::sync::CancellationToken;

const STATE_NAMESPACE: &str = "feed";

/// One `[[feeds]]` entry.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FeedSection {
    /// The channel name its posts carry (`feed:larajobs`); unique.
    pub name: String,
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
                tracing::warn!(feed = %name, error = %e, "saved feed state unreadable; starting fresh")
            }
        }
    }
    Ok(FeedSource::new(configs)
        .context("feeds")?
        .with_states(states))
}

/// Polls the feeds until `shutdown`, handing every new item to intake and saving each
/// feed's state after every round.
pub async fn run(
    feeds: Vec<FeedSection>,
    intake: Arc<IntakeStage>,
    store: Arc<dyn Store>,
    shutdown: CancellationToken,
) -> anyhow::Result<()> {
    let mut source = source(&feeds, store.as_ref()).await?;
    loop {
        let items = source.poll_due(Utc::now()).await;
        for item in items {
            let outcome = intake.ingest(item.post).await?;
            tracing::debug!(?outcome, "feed item taken in");
        }
        for (name, state) in source.states() {
            let value = serde_json::to_string(&state)?;
            store
                .state_put(STATE_NAMESPACE, &name, &value, Utc::now())
                .await?;
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
