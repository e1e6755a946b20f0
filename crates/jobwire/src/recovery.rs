//! The scheduler: moves held and waiting work back onto its queues, takes over abandoned
//! sends, and re-publishes work whose message was lost; and where messages that failed for
//! good are kept (the store's dead letters).
//!
//! Every stage commits a status and then publishes the next message. A publish that fails
//! after its commit (the broker went away, the process died in between) leaves a row in
//! `queued`, `job` or `pending` that no message names. The scheduler finds such rows once
//! they are older than `[scheduler] stuck_after_secs` and publishes them again; each is
//! marked when taken, so it is re-published at most once per deadline. Consumers skip rows
//! that already moved on, so a message that was merely slow costs a look-up, not a
//! duplicate. A delivery left `sending` past `[scheduler] lease_secs` (its sender died, or
//! its status write failed) is sent again, in both modes.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use chrono::Utc;
use jobwire_queue::wire::{JobReady, PostReady};
use jobwire_queue::{DeadLetterSink, Queue, Topic};
use jobwire_store::{NewDeadLetter, Store};
use tokio_util::sync::CancellationToken;

/// At most this many rows of each kind are released or re-published per tick.
const PER_TICK: u32 = 10_000;

/// How often abandoned sends and lost messages are looked for. Their deadlines are minutes
/// (`lease_secs`, `stuck_after_secs`), so a few seconds more do not matter, while a look every
/// tick would put four writes per tick on SQLite's single writer next to the send stage's.
const RECOVERY_EVERY: Duration = Duration::from_secs(10);

/// Keeps dead letters in the store's `dead_letters` table.
#[derive(Debug)]
pub struct StoreDeadLetters(pub Arc<dyn Store>);

#[async_trait]
impl DeadLetterSink for StoreDeadLetters {
    async fn keep(
        &self,
        topic: Topic,
        payload: &[u8],
        attempts: u32,
        reason: &str,
    ) -> Result<(), String> {
        let letter = NewDeadLetter {
            topic: topic.name().to_owned(),
            payload: String::from_utf8_lossy(payload).into_owned(),
            attempts,
            reason: reason.to_owned(),
        };
        metrics::counter!(crate::telemetry::DEAD_LETTERS_TOTAL, "topic" => topic.name())
            .increment(1);
        self.0
            .add_dead_letter(&letter, Utc::now())
            .await
            .map(|_| ())
            .map_err(|e| e.to_string())
    }
}

/// How the scheduler paces itself.
#[derive(Debug, Clone, Copy)]
pub struct SchedulerTiming {
    pub tick: Duration,
    /// `sending` longer than this: taken over.
    pub lease: Duration,
    /// `queued`/`job`/`pending` untouched longer than this: published again.
    pub stuck_after: Duration,
}

/// `[scheduler]` as the file writes it.
#[derive(Debug, Clone, serde::Deserialize)]
#[serde(deny_unknown_fields)]
#[serde(default)]
pub struct SchedulerSection {
    /// How often held deliveries and waiting posts are checked, in milliseconds.
    pub tick_ms: u64,
    /// A delivery left `sending` this long (its sender died, or its status could not be
    /// written) is sent again, in both modes. Longer than any send.
    pub lease_secs: u64,
    /// A post left `queued` or `job`, or a delivery left `pending`, this long is published
    /// again: its message was most likely lost between the commit and the publish. Consumers
    /// skip what was already done, so a false alarm costs a little work, not a duplicate.
    pub stuck_after_secs: u64,
}

impl Default for SchedulerSection {
    fn default() -> Self {
        Self {
            tick_ms: 1000,
            lease_secs: 120,
            stuck_after_secs: 600,
        }
    }
}

impl SchedulerSection {
    /// The pacing: a tick of at least 10 ms, a lease and a stuck age of at least 1 s.
    pub fn resolve(&self) -> SchedulerTiming {
        SchedulerTiming {
            tick: Duration::from_millis(self.tick_ms.max(10)),
            lease: Duration::from_secs(self.lease_secs.max(1)),
            stuck_after: Duration::from_secs(self.stuck_after_secs.max(1)),
        }
    }
}

/// Runs the scheduler until `shutdown`. A failed tick is logged and tried again at the next.
pub async fn scheduler(
    store: Arc<dyn Store>,
    queue: Arc<dyn Queue>,
    timing: SchedulerTiming,
    shutdown: CancellationToken,
) -> anyhow::Result<()> {
    let mut interval = tokio::time::interval(timing.tick);
    interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut last_recovery: Option<tokio::time::Instant> = None;
    loop {
        tokio::select! {
            _ = shutdown.cancelled() => return Ok(()),
            _ = interval.tick() => {}
        }
        if let Err(e) = release_due(store.as_ref(), queue.as_ref()).await {
            tracing::warn!(error = %e, "scheduler tick failed; trying again next tick");
        }
        let every = RECOVERY_EVERY.min(timing.lease).min(timing.stuck_after);
        if last_recovery.is_none_or(|t| t.elapsed() >= every) {
            last_recovery = Some(tokio::time::Instant::now());
            if let Err(e) = recover(store.as_ref(), queue.as_ref(), timing).await {
                tracing::warn!(error = %e, "looking for lost work failed; trying again later");
            }
        }
    }
}

/// Held deliveries and waiting posts whose time has come, back onto their queues.
async fn release_due(store: &dyn Store, queue: &dyn Queue) -> anyhow::Result<()> {
    let now = Utc::now();
    let released = store.release_held_deliveries(now, PER_TICK).await?;
    jobwire_queue::publish_deliveries(queue, &released).await?;
    for id in store.release_waiting_posts(now, PER_TICK).await? {
        jobwire_queue::publish(queue, &PostReady::new(id)).await?;
    }
    Ok(())
}

/// Abandoned sends and lost messages, published again.
async fn recover(
    store: &dyn Store,
    queue: &dyn Queue,
    timing: SchedulerTiming,
) -> anyhow::Result<()> {
    let now = Utc::now();
    let ago = |d: Duration| now - chrono::Duration::from_std(d).unwrap_or_default();
    let taken = store
        .recover_interrupted_deliveries(ago(timing.lease), now)
        .await?;
    if !taken.is_empty() {
        tracing::warn!(
            deliveries = taken.len(),
            "taking over deliveries left `sending` past their lease"
        );
    }
    jobwire_queue::publish_deliveries(queue, &taken).await?;
    let stuck = store
        .take_stuck(ago(timing.stuck_after), now, PER_TICK)
        .await?;
    if !stuck.is_empty() {
        tracing::warn!(
            posts = stuck.queued.len(),
            jobs = stuck.jobs.len(),
            deliveries = stuck.deliveries.len(),
            "publishing again work whose message was lost"
        );
        metrics::counter!(crate::telemetry::REPUBLISHED_TOTAL).increment(stuck.len() as u64);
    }
    for id in stuck.queued {
        jobwire_queue::publish(queue, &PostReady::new(id)).await?;
    }
    for id in stuck.jobs {
        jobwire_queue::publish(queue, &JobReady::new(id)).await?;
    }
    jobwire_queue::publish_deliveries(queue, &stuck.deliveries).await?;
    Ok(())
}
