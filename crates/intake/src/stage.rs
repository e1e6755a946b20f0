//! The intake stage: normalizes each incoming post, applies its channel's keyword rules,
//! drops exact duplicates by `(channel, message id)`, stores it and queues it for the
//! classifier.
//!
//! The post row is committed before the classify message is published; a post whose
//! message was lost in a crash is found in status `queued` and re-published at start-up.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use chrono::Utc;
use jobwire_core::IncomingPost;
use jobwire_core::dedup::{DedupConfig, DuplicateIndex, Fingerprint, fingerprint};
use jobwire_core::normalize::normalize;
use jobwire_core::rules::{ChannelRules, CompiledRules, RuleDecision};
use jobwire_queue::wire::PostReady;
use jobwire_queue::{Queue, QueueError};
use jobwire_store::{
    ChannelId, ChannelRow, InsertOutcome, NewPost, PostId, PostStatus, Store, StoreError,
};
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

impl IntakeError {
    /// Whether the same call is worth making again later as it is: the database or the
    /// queue could not be reached. A record the database refuses (a value it cannot store,
    /// a constraint) is not: after a few tries it is set aside as a dead letter
    /// ([`IntakeStage::set_aside`]).
    pub fn is_unavailable(&self) -> bool {
        match self {
            Self::Store(e) => e.is_unavailable(),
            // The post was committed before its publish failed: taking it in again finds it
            // known, and the scheduler publishes what no message names.
            Self::Queue(_) => true,
            Self::Source(_) => false,
        }
    }
}

/// The topic of the dead letters intake keeps: records a source handed over that could not
/// be stored.
pub const DEAD_LETTER_TOPIC: &str = "intake";

/// Makes a post storable and harmless to show, whatever its source sent (a feed, Telegram, a
/// Desktop export, a replay): control characters, NUL included (PostgreSQL refuses it in
/// text), are removed from its text except newlines and tabs, and from its channel, id and
/// author entirely; a link is kept only when it is an `http`, `https` or `tg` URL (it is
/// shown as a link: a `javascript:` one must never be).
pub fn sanitize(post: &mut IncomingPost) {
    fn strip(text: &mut String, keep: &[char]) {
        if text.chars().any(|c| c.is_control() && !keep.contains(&c)) {
            text.retain(|c| !c.is_control() || keep.contains(&c));
        }
    }
    strip(&mut post.text, &['\n', '\t']);
    strip(&mut post.channel, &[]);
    strip(&mut post.external_id, &[]);
    if let Some(author) = &mut post.author {
        strip(author, &[]);
    }
    post.url = post.url.take().and_then(|url| safe_link(&url));
}

pub use jobwire_core::format::safe_link;

/// What intake did with one post.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IntakeOutcome {
    /// Stored and queued for classification.
    Queued { post_id: PostId },
    /// Stored, but the channel's rules (or a disabled channel) stopped it.
    Filtered { post_id: PostId, reason: String },
    /// `(channel, message id)` was seen before: nothing changed.
    Duplicate { post_id: PostId },
    /// The same vacancy as an earlier post (re-posted, cross-posted, lightly edited): stored
    /// as a duplicate of it, not classified or delivered again.
    NearDuplicate { post_id: PostId, of: PostId },
}

impl IntakeOutcome {
    /// A short name for metrics and logs.
    pub fn name(&self) -> &'static str {
        match self {
            Self::Queued { .. } => "queued",
            Self::Filtered { .. } => "filtered",
            Self::Duplicate { .. } => "duplicate",
            Self::NearDuplicate { .. } => "near_duplicate",
        }
    }
}

/// What [`IntakeStage::take_in`] did with a record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TakenIn {
    Post(IntakeOutcome),
    Edit(EditOutcome),
}

/// What an edit of a post changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EditOutcome {
    /// The post was not fanned out yet: its text is now the edited one, and that is what
    /// is classified and delivered.
    Updated { post_id: PostId },
    /// The post was already fanned out (or classified as no job, or a re-post): subscribers
    /// are not sent the edit.
    TooLate {
        post_id: PostId,
        status: &'static str,
    },
    /// Never stored: the edit was taken in as a new post.
    New(IntakeOutcome),
}

/// `jobwire_posts_ingested_total{outcome}`: posts taken in, by what intake did with them;
/// counted with the run's [`IntakeTally`], in one place.
pub const POSTS_INGESTED_TOTAL: &str = "jobwire_posts_ingested_total";

/// Intake's metrics (feeds' included), for `/metrics`' `# HELP` lines.
pub const METRICS: &[jobwire_core::metric::MetricDef] = &[
    jobwire_core::metric::MetricDef::counter(
        POSTS_INGESTED_TOTAL,
        &["outcome"],
        "Posts taken in from every source, by what intake did: queued, filtered (the channel's rules), duplicate, near_duplicate.",
    ),
    jobwire_core::metric::MetricDef::counter(
        crate::feed::FEED_POLLS_TOTAL,
        &["outcome"],
        "Polls of RSS/Atom feeds, by outcome (ok, error).",
    ),
    jobwire_core::metric::MetricDef::counter(
        crate::feed::FEED_ITEMS_TOTAL,
        &["feed"],
        "New items read from each feed.",
    ),
];

/// Running totals of an intake run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct IntakeTally {
    pub read: u64,
    pub queued: u64,
    pub filtered: u64,
    pub duplicates: u64,
    pub near_duplicates: u64,
}

impl IntakeTally {
    pub fn add(&mut self, outcome: &IntakeOutcome) {
        self.read += 1;
        metrics::counter!(POSTS_INGESTED_TOTAL, "outcome" => outcome.name()).increment(1);
        match outcome {
            IntakeOutcome::Queued { .. } => self.queued += 1,
            IntakeOutcome::Filtered { .. } => self.filtered += 1,
            IntakeOutcome::Duplicate { .. } => self.duplicates += 1,
            IntakeOutcome::NearDuplicate { .. } => self.near_duplicates += 1,
        }
    }
}

/// How many channels' rules intake keeps in memory (least recently used ones go first).
pub const CHANNEL_CACHE: u64 = 10_000;

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
    /// Channels' rules by handle, the most recently used [`CHANNEL_CACHE`] of them: a replay
    /// or an import naming millions of channels does not grow memory without bound.
    channels: moka::sync::Cache<String, Arc<ChannelState>>,
    /// `None`: near-duplicate detection is off.
    dedup: Option<Mutex<Dedup>>,
}

/// The near-duplicate index of recent posts, filled from the store on first use.
#[derive(Debug)]
struct Dedup {
    index: DuplicateIndex,
    window: chrono::Duration,
    loaded: bool,
    evicted_at: Option<chrono::DateTime<Utc>>,
}

/// `direct` is the source of employers' paid placements (their cards are marked "Direct
/// placement"): a read channel or chat of that name is filed under another one, so it cannot
/// pass for one.
fn keep_off_direct(post: &mut IncomingPost) {
    if post.channel == jobwire_core::placement::DIRECT_SOURCE {
        post.channel = format!("{} (chat)", jobwire_core::placement::DIRECT_SOURCE);
    }
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
    /// An intake stage with near-duplicate detection over the default window (7 days).
    pub fn new(store: Arc<dyn Store>, queue: Arc<dyn Queue>) -> Self {
        Self::with_dedup(store, queue, Some(DedupConfig::default()))
    }

    /// With `None`, only exact duplicates (same channel and message id) are dropped.
    pub fn with_dedup(
        store: Arc<dyn Store>,
        queue: Arc<dyn Queue>,
        dedup: Option<DedupConfig>,
    ) -> Self {
        Self {
            store,
            queue,
            channels: moka::sync::Cache::new(CHANNEL_CACHE),
            dedup: dedup.map(|config| {
                Mutex::new(Dedup {
                    window: config.window,
                    index: DuplicateIndex::new(config),
                    loaded: false,
                    evicted_at: None,
                })
            }),
        }
    }

    /// Loads the window's fingerprints once, and drops old ones every minute.
    async fn prepare_dedup(&self, dedup: &mut Dedup) -> Result<(), IntakeError> {
        let now = Utc::now();
        if !dedup.loaded {
            let recent = self.store.recent_fingerprints(now - dedup.window).await?;
            for r in recent {
                match Fingerprint::from_hex(&r.fingerprint) {
                    Ok(fp) => dedup.index.insert(r.id.get(), r.posted_at, fp),
                    Err(e) => {
                        tracing::warn!(post = r.id.get(), error = %e, "unreadable fingerprint skipped")
                    }
                }
            }
            dedup.loaded = true;
        }
        if dedup
            .evicted_at
            .is_none_or(|t| now - t > chrono::Duration::minutes(1))
        {
            dedup.index.evict_older_than(now - dedup.window);
            dedup.evicted_at = Some(now);
        }
        Ok(())
    }

    /// Forgets cached channels, so changed rules apply to the next post.
    pub async fn reload_channels(&self) {
        self.channels.invalidate_all();
    }

    async fn channel(&self, handle: &str) -> Result<Arc<ChannelState>, IntakeError> {
        if let Some(c) = self.channels.get(handle) {
            return Ok(c);
        }
        let row = self.store.ensure_channel(handle, Utc::now()).await?;
        let state = Arc::new(ChannelState {
            rules: compile(&row),
            row,
        });
        self.channels.insert(handle.to_owned(), state.clone());
        Ok(state)
    }

    /// Takes in one post.
    pub async fn ingest(&self, mut post: IncomingPost) -> Result<IntakeOutcome, IntakeError> {
        sanitize(&mut post);
        post.bound_text();
        keep_off_direct(&mut post);
        let channel = self.channel(&post.channel).await?;
        let reason = if channel.row.removed_at.is_some() {
            Some("source removed".to_owned())
        } else if !channel.row.enabled {
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
        if let Some(reason) = reason {
            let outcome = self
                .store
                .insert_post(&NewPost {
                    filter_reason: Some(reason.clone()),
                    ..new_post(channel.row.id, post, PostStatus::Filtered)
                })
                .await?;
            return Ok(match outcome {
                InsertOutcome::AlreadyKnown(post_id) => IntakeOutcome::Duplicate { post_id },
                InsertOutcome::Inserted(post_id) => IntakeOutcome::Filtered { post_id, reason },
            });
        }
        // The duplicate index is held while the post is stored, so two copies of one
        // vacancy arriving together cannot both be taken as new.
        let mut dedup = match &self.dedup {
            Some(d) => Some(d.lock().await),
            None => None,
        };
        let fp = fingerprint(&post.text);
        let earlier = match dedup.as_deref_mut() {
            Some(d) => {
                self.prepare_dedup(d).await?;
                d.index.find(&fp, post.posted_at).map(PostId)
            }
            None => None,
        };
        let posted_at = post.posted_at;
        let status = if earlier.is_some() {
            PostStatus::Duplicate
        } else {
            PostStatus::Queued
        };
        let outcome = self
            .store
            .insert_post(&NewPost {
                fingerprint: Some(fp.to_hex()),
                duplicate_of: earlier,
                ..new_post(channel.row.id, post, status)
            })
            .await?;
        Ok(match (outcome, earlier) {
            (InsertOutcome::AlreadyKnown(post_id), _) => IntakeOutcome::Duplicate { post_id },
            (InsertOutcome::Inserted(post_id), Some(of)) => {
                tracing::info!(
                    post = post_id.get(),
                    of = of.get(),
                    "near-duplicate of an earlier post"
                );
                IntakeOutcome::NearDuplicate { post_id, of }
            }
            (InsertOutcome::Inserted(post_id), None) => {
                if let Some(d) = dedup.as_deref_mut() {
                    d.index.insert(post_id.get(), posted_at, fp);
                }
                drop(dedup);
                jobwire_queue::publish(self.queue.as_ref(), &PostReady::new(post_id)).await?;
                IntakeOutcome::Queued { post_id }
            }
        })
    }

    /// Applies an edit of a post, as a source reports it (same channel and external id).
    pub async fn edit(&self, mut post: IncomingPost) -> Result<EditOutcome, IntakeError> {
        sanitize(&mut post);
        post.bound_text();
        keep_off_direct(&mut post);
        let channel = self.channel(&post.channel).await?;
        let fp = fingerprint(&post.text).to_hex();
        let edited = self
            .store
            .edit_post(
                channel.row.id,
                &post.external_id,
                &post.text,
                Some(&fp),
                Utc::now(),
            )
            .await?;
        Ok(match edited {
            None => EditOutcome::New(self.ingest(post).await?),
            Some((post_id, _, true)) => EditOutcome::Updated { post_id },
            Some((post_id, status, false)) => EditOutcome::TooLate {
                post_id,
                status: status.as_str(),
            },
        })
    }

    /// Keeps `post`, which could not be stored after `attempts` tries, as a dead letter with
    /// `reason` (topic [`DEAD_LETTER_TOPIC`], the post as JSON), so the source can go on.
    pub async fn set_aside(
        &self,
        post: &IncomingPost,
        attempts: u32,
        reason: &str,
    ) -> Result<(), StoreError> {
        let payload = serde_json::json!({
            "channel": post.channel,
            "external_id": post.external_id,
            "text": post.text,
            "author": post.author,
            "url": post.url,
            "posted_at": post.posted_at.to_rfc3339(),
        });
        let letter = jobwire_store::NewDeadLetter {
            topic: DEAD_LETTER_TOPIC.to_owned(),
            payload: payload.to_string(),
            attempts,
            reason: reason.to_owned(),
        };
        self.store.add_dead_letter(&letter, Utc::now()).await?;
        metrics::counter!(jobwire_queue::DEAD_LETTERS_TOTAL, "topic" => DEAD_LETTER_TOPIC)
            .increment(1);
        tracing::error!(
            channel = %post.channel,
            external_id = %post.external_id,
            attempts,
            reason,
            "a post could not be stored; kept as a dead letter"
        );
        Ok(())
    }

    /// Takes in `post` ([`IntakeStage::ingest`], or [`IntakeStage::edit`] with `edit`) for
    /// the source `source`, retrying along `policy` while it fails: for as long as the
    /// database or queue cannot be reached, but a post the database refuses `tries` times is
    /// set aside as a dead letter ([`IntakeStage::set_aside`]) so the source goes on. If the
    /// dead letter cannot be stored either (the database refuses every write), the post is
    /// tried again. `None`: `stop` came first; `Some(Err(reason))`: set aside.
    pub async fn take_in(
        &self,
        source: &str,
        post: IncomingPost,
        edit: bool,
        policy: crate::retry::RetryPolicy,
        tries: u32,
        stop: impl std::future::Future<Output = ()>,
    ) -> Option<Result<TakenIn, String>> {
        let what = if edit {
            "applying an edit"
        } else {
            "taking in a post"
        };
        let refused = AtomicU32::new(0);
        let attempts = AtomicU32::new(0);
        let (refused, attempts, post) = (&refused, &attempts, &post);
        crate::retry::retry_until_stopped(source, what, policy, stop, || async move {
            let attempt = attempts.fetch_add(1, Ordering::Relaxed) + 1;
            let result = if edit {
                self.edit(post.clone()).await.map(TakenIn::Edit)
            } else {
                self.ingest(post.clone()).await.map(TakenIn::Post)
            };
            let e = match result {
                Ok(done) => return Ok(Ok(done)),
                Err(e) => e,
            };
            if e.is_unavailable() {
                return Err(e.to_string());
            }
            if refused.fetch_add(1, Ordering::Relaxed) + 1 < tries.max(1) {
                return Err(e.to_string());
            }
            let reason = e.to_string();
            match self.set_aside(post, attempt, &reason).await {
                Ok(()) => Ok(Err(reason)),
                Err(kept) => {
                    refused.store(0, Ordering::Relaxed);
                    Err(format!(
                        "{reason}; keeping it as a dead letter failed too: {kept}"
                    ))
                }
            }
        })
        .await
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

/// The row of `post`, received now, in status `status`, with no filter reason, fingerprint
/// or earlier duplicate (the caller sets those that apply).
fn new_post(channel_id: ChannelId, post: IncomingPost, status: PostStatus) -> NewPost {
    NewPost {
        channel_id,
        external_id: post.external_id,
        text: post.text,
        author: post.author,
        url: post.url,
        posted_at: post.posted_at,
        received_at: Utc::now(),
        status,
        filter_reason: None,
        fingerprint: None,
        duplicate_of: None,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    /// A stage on a fresh SQLite store and an in-memory queue, without the near-duplicate
    /// check.
    async fn stage_without_dedup() -> (tempfile::TempDir, Arc<dyn Store>, IntakeStage) {
        let dir = tempfile::tempdir().unwrap();
        let store: Arc<dyn Store> = Arc::new(
            jobwire_store::SqliteStore::open_path(&dir.path().join("j.db"))
                .await
                .unwrap(),
        );
        let queue = Arc::new(jobwire_queue::MemoryQueue::new());
        let stage = IntakeStage::with_dedup(store.clone(), queue, None);
        (dir, store, stage)
    }

    #[tokio::test]
    async fn the_channel_cache_keeps_the_recently_used_channels_only() {
        let (_dir, _store, mut stage) = stage_without_dedup().await;
        stage.channels = moka::sync::Cache::new(8);
        for n in 0..40 {
            let post = IncomingPost {
                channel: format!("@channel_{n}"),
                external_id: "1".to_owned(),
                text: format!("Post {n}"),
                author: None,
                url: None,
                posted_at: Utc::now(),
            };
            stage.ingest(post).await.unwrap();
        }
        stage.channels.run_pending_tasks();
        assert!(
            stage.channels.entry_count() <= 8,
            "{} channels cached",
            stage.channels.entry_count()
        );
        // An evicted channel is read again from the store when it posts again.
        let again = IncomingPost {
            channel: "@channel_0".to_owned(),
            external_id: "2".to_owned(),
            text: "Post again".to_owned(),
            author: None,
            url: None,
            posted_at: Utc::now(),
        };
        assert!(matches!(
            stage.ingest(again).await.unwrap(),
            IntakeOutcome::Queued { .. }
        ));
    }

    #[tokio::test]
    async fn a_chat_named_direct_cannot_pass_for_a_paid_placement() {
        let (_dir, store, stage) = stage_without_dedup().await;
        let post = IncomingPost {
            channel: jobwire_core::placement::DIRECT_SOURCE.to_owned(),
            external_id: "1".to_owned(),
            text: "Нужен дизайнер логотипа, бюджет 5000".to_owned(),
            author: None,
            url: None,
            posted_at: Utc::now(),
        };
        let IntakeOutcome::Queued { post_id } = stage.ingest(post).await.unwrap() else {
            panic!("queued");
        };
        let stored = store.post(post_id).await.unwrap().unwrap();
        let channel = store
            .channels()
            .await
            .unwrap()
            .into_iter()
            .find(|c| c.id == stored.channel_id)
            .unwrap();
        assert_eq!(channel.handle, "direct (chat)");
    }

    #[test]
    fn control_characters_go_and_only_web_and_tg_links_stay() {
        let mut post = IncomingPost {
            channel: "@jobs\u{0}".to_owned(),
            external_id: "4\r2".to_owned(),
            text: "Need\u{0} a dev\u{1b}[31m\r\nbudget:\t$900\u{7f}\u{85}".to_owned(),
            author: Some("Bob\n[ERROR] forged".to_owned()),
            url: Some("javascript:alert(1)".to_owned()),
            posted_at: Utc::now(),
        };
        sanitize(&mut post);
        assert_eq!(post.text, "Need a dev[31m\nbudget:\t$900");
        assert_eq!(post.channel, "@jobs");
        assert_eq!(post.external_id, "42");
        assert_eq!(post.author.as_deref(), Some("Bob[ERROR] forged"));
        assert_eq!(post.url, None);
        for (link, kept) in [
            ("https://t.me/rustjobs/42", Some("https://t.me/rustjobs/42")),
            (
                "HTTP://Example.com/job?id=1",
                Some("http://example.com/job?id=1"),
            ),
            (
                "tg://resolve?domain=rustjobs",
                Some("tg://resolve?domain=rustjobs"),
            ),
            ("java\tscript:alert(1)", None),
            ("JavaScript:alert(1)", None),
            ("data:text/html,<script>alert(1)</script>", None),
            ("vbscript:msgbox", None),
            ("//evil.example/x", None),
            ("/relative/path", None),
        ] {
            assert_eq!(safe_link(link).as_deref(), kept, "{link}");
        }
    }

    #[tokio::test]
    async fn every_source_s_post_is_stored_clean() {
        let (_dir, store, stage) = stage_without_dedup().await;
        let post = IncomingPost {
            channel: "@jobs".to_owned(),
            external_id: "1".to_owned(),
            text: "Нужен дизайнер\u{0} логотипа,\u{8} бюджет 5000".to_owned(),
            author: None,
            url: Some("javascript:alert(document.cookie)".to_owned()),
            posted_at: Utc::now(),
        };
        let IntakeOutcome::Queued { post_id } = stage.ingest(post.clone()).await.unwrap() else {
            panic!("queued");
        };
        let stored = store.post(post_id).await.unwrap().unwrap();
        assert_eq!(stored.text, "Нужен дизайнер логотипа, бюджет 5000");
        assert_eq!(stored.url, None);
        // An edit is cleaned the same way.
        let edit = IncomingPost {
            text: "Нужен дизайнер\u{0} логотипа, бюджет 7000".to_owned(),
            ..post
        };
        stage.edit(edit).await.unwrap();
        let stored = store.post(post_id).await.unwrap().unwrap();
        assert_eq!(stored.text, "Нужен дизайнер логотипа, бюджет 7000");
    }
}
