//! The intake stage: normalizes each incoming post, applies its channel's keyword rules,
//! drops exact duplicates by `(channel, message id)`, stores it and queues it for the
//! classifier.
//!
//! The post row is committed before the classify message is published; a post whose
//! message was lost in a crash is found in status `queued` and re-published at start-up.

use std::collections::HashMap;
use std::sync::Arc;

use chrono::Utc;
use jobwire_core::IncomingPost;
use jobwire_core::normalize::normalize;
use jobwire_core::rules::{ChannelRules, CompiledRules, RuleDecision};
use jobwire_queue::wire::PostReady;
use jobwire_queue::{Queue, QueueError};
use jobwire_store::{ChannelRow, InsertOutcome, NewPost, PostStatus, Store, StoreError};
use tokio::sync::Mutex;

#[derive(Debug, thiserror::Error)]
pub enum IntakeError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Queue(#[from] QueueError),
    #[error(transparent)]
    Source(#[from] crate::SourceError),
}

/// What intake did with one post.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IntakeOutcome {
    /// Stored and queued for classification.
    Queued { post_id: i64 },
    /// Stored, but the channel's rules (or a disabled channel) stopped it.
    Filtered { post_id: i64, reason: String },
    /// `(channel, message id)` was seen before: nothing changed.
    Duplicate { post_id: i64 },
}

impl IntakeOutcome {
    /// A short name for metrics and logs.
    pub fn name(&self) -> &'static str {
        match self {
            Self::Queued { .. } => "queued",
            Self::Filtered { .. } => "filtered",
            Self::Duplicate { .. } => "duplicate",
        }
    }
}

/// Running totals of an intake run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct IntakeTally {
    pub read: u64,
    pub queued: u64,
    pub filtered: u64,
    pub duplicates: u64,
}

impl IntakeTally {
    pub fn add(&mut self, outcome: &IntakeOutcome) {
        self.read += 1;
        metrics::counter!("jobwire_posts_ingested_total", "outcome" => outcome.name()).increment(1);
        match outcome {
            IntakeOutcome::Queued { .. } => self.queued += 1,
            IntakeOutcome::Filtered { .. } => self.filtered += 1,
            IntakeOutcome::Duplicate { .. } => self.duplicates += 1,
        }
    }
}

#[derive(Debug)]
struct ChannelState {
    row: ChannelRow,
    rules: CompiledRules,
}

/// The intake stage. Cheap to share; channel rules are cached and reloaded with
/// [`IntakeStage::reload_channels`].
#[derive(Debug)]
pub struct IntakeStage {
    store: Arc<dyn Store>,
    queue: Arc<dyn Queue>,
    channels: Mutex<HashMap<String, Arc<ChannelState>>>,
}

fn compile(row: &ChannelRow) -> CompiledRules {
    match ChannelRules::parse(row.include.iter(), row.exclude.iter()) {
        Ok(rules) => CompiledRules::new(&rules),
        Err(e) => {
            // Rules are validated when an admin saves them; a stored bad term must not
            // stop the channel: it runs without rules and says so.
            tracing::error!(channel = %row.handle, error = %e, "channel rules do not parse; running without rules");
            CompiledRules::new(&ChannelRules::default())
        }
    }
}

impl IntakeStage {
    pub fn new(store: Arc<dyn Store>, queue: Arc<dyn Queue>) -> Self {
        Self {
            store,
            queue,
            channels: Mutex::new(HashMap::new()),
        }
    }

    /// Forgets cached channels, so changed rules apply to the next post.
    pub async fn reload_channels(&self) {
        self.channels.lock().await.clear();
    }

    async fn channel(&self, handle: &str) -> Result<Arc<ChannelState>, IntakeError> {
        if let Some(c) = self.channels.lock().await.get(handle) {
            return Ok(c.clone());
        }
        let row = self.store.ensure_channel(handle, Utc::now()).await?;
        let state = Arc::new(ChannelState {
            rules: compile(&row),
            row,
        });
        self.channels
            .lock()
            .await
            .insert(handle.to_owned(), state.clone());
        Ok(state)
    }

    /// Takes in one post.
    pub async fn ingest(&self, mut post: IncomingPost) -> Result<IntakeOutcome, IntakeError> {
        post.bound_text();
        let channel = self.channel(&post.channel).await?;
        let reason = if !channel.row.enabled {
            Some("channel disabled".to_owned())
        } else if post.text.trim().is_empty() {
            Some("empty text".to_owned())
        } else {
            match channel.rules.check(&normalize(&post.text)) {
                RuleDecision::Pass => None,
                RuleDecision::Excluded { term } => Some(format!("excluded by {term}")),
                RuleDecision::NoIncludeMatched => Some("no include term matched".to_owned()),
            }
        };
        let status = if reason.is_some() {
            PostStatus::Filtered
        } else {
            PostStatus::Queued
        };
        let outcome = self
            .store
            .insert_post(&NewPost {
                channel_id: channel.row.id,
                external_id: post.external_id,
                text: post.text,
                author: post.author,
                url: post.url,
                posted_at: post.posted_at,
                received_at: Utc::now(),
                status,
                filter_reason: reason.clone(),
            })
            .await?;
        Ok(match (outcome, reason) {
            (InsertOutcome::AlreadyKnown(post_id), _) => IntakeOutcome::Duplicate { post_id },
            (InsertOutcome::Inserted(post_id), Some(reason)) => {
                IntakeOutcome::Filtered { post_id, reason }
            }
            (InsertOutcome::Inserted(post_id), None) => {
                jobwire_queue::publish(self.queue.as_ref(), &PostReady::new(post_id)).await?;
                IntakeOutcome::Queued { post_id }
            }
        })
    }

    /// Reads a source to its end through [`IntakeStage::ingest`].
    pub async fn drain(&self, source: &mut dyn crate::Source) -> Result<IntakeTally, IntakeError> {
        let mut tally = IntakeTally::default();
        while let Some(batch) = source.next_batch().await? {
            for post in batch {
                let outcome = self.ingest(post).await?;
                tally.add(&outcome);
            }
        }
        Ok(tally)
    }
}
