//! jobwire's repositories: one [`Store`] trait over everything the stages persist, and its
//! one implementation, [`SqlStore`], over SQLite (embedded mode) and PostgreSQL
//! (distributed mode).
//!
//! The database is the source of truth. Every post, classification and delivery has a row
//! with a status, written before the message that names it moves on, so a restarted process
//! finds whatever was in flight by asking for rows in a status ("re-drive"). Uniqueness
//! makes the consumers idempotent: `(channel, external id)` for posts and `(post, subscriber)`
//! for deliveries.
//!
//! **Architecture invariant:** the stages never see SQL. They speak in the row types of this
//! crate; both databases run the same queries (`shared.rs`) and pass the same test suite.

mod codec;
mod deliveries;
mod postgres;
mod shared;
mod sql;
mod sqlite;
mod types;

use std::sync::Arc;

use async_trait::async_trait;
use chrono::{DateTime, Utc};

pub use postgres::{PostgresOptions, PostgresStore};
pub use shared::SqlStore;
pub use sql::{BoxFuture, Dialect, Exec};
pub use sqlite::SqliteStore;
pub use types::*;

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("database error: {0}")]
    Database(#[from] sqlx::Error),
    #[error("database migration failed: {0}")]
    Migrate(#[from] sqlx::migrate::MigrateError),
    #[error("corrupt value in column {column}: {detail}")]
    Corrupt {
        column: &'static str,
        detail: String,
    },
    #[error("unsupported database URL {0:?}: expected sqlite://PATH or postgres://…")]
    UnsupportedUrl(String),
}

pub type Result<T, E = StoreError> = std::result::Result<T, E>;

/// Opens the store a database URL names: `sqlite://PATH` (or `sqlite:PATH`) for the
/// embedded mode, `postgres://…` (or `postgresql://…`) for the distributed mode, applying
/// pending migrations. Any other scheme is [`StoreError::UnsupportedUrl`] (password redacted).
pub async fn open(url: &str) -> Result<Arc<dyn Store>> {
    if url.starts_with("sqlite:") {
        Ok(Arc::new(SqliteStore::open(url).await?))
    } else if url.starts_with("postgres://") || url.starts_with("postgresql://") {
        Ok(Arc::new(PostgresStore::open(url).await?))
    } else {
        Err(StoreError::UnsupportedUrl(postgres::redact_url(url)))
    }
}

/// Everything the pipeline stores. Implementations must be safe to share between tasks.
#[async_trait]
pub trait Store: Send + Sync + std::fmt::Debug {
    /// A round trip to the database (readiness checks).
    async fn ping(&self) -> Result<()>;

    // ---- channels ----
    /// Creates the channel or updates its title, rules and enabled flag.
    async fn upsert_channel(&self, spec: &ChannelSpec, now: DateTime<Utc>) -> Result<ChannelRow>;
    /// The channel with this handle, creating it (enabled, without rules) when unknown.
    async fn ensure_channel(&self, handle: &str, now: DateTime<Utc>) -> Result<ChannelRow>;
    async fn channels(&self) -> Result<Vec<ChannelRow>>;

    // ---- posts ----
    /// Inserts a post unless `(channel, external id)` is known already.
    async fn insert_post(&self, post: &NewPost) -> Result<InsertOutcome>;
    async fn post(&self, id: PostId) -> Result<Option<PostRow>>;
    /// Applies an edit of `(channel, external id)`: the text (and fingerprint) change only
    /// while the post has not been fanned out (`filtered`, `queued`, `waiting`, `job`), so
    /// an edit never reaches subscribers twice. Returns the post and its status, or `None`
    /// for a post never stored.
    async fn edit_post(
        &self,
        channel_id: ChannelId,
        external_id: &str,
        text: &str,
        fingerprint: Option<&str>,
        now: DateTime<Utc>,
    ) -> Result<Option<(PostId, PostStatus, bool)>>;
    /// Records a classifier's verdict and moves the post to `job` or `not_job`, atomically.
    async fn record_classification(
        &self,
        id: PostId,
        record: &ClassificationRecord,
        now: DateTime<Utc>,
    ) -> Result<PostStatus>;
    async fn classification(&self, id: PostId) -> Result<Option<ClassificationRecord>>;
    /// Puts a post back to wait for the classifier (it could not be classified now).
    async fn mark_post_waiting(
        &self,
        id: PostId,
        error: &str,
        retry_at: DateTime<Utc>,
        now: DateTime<Utc>,
    ) -> Result<()>;
    /// Moves waiting posts whose retry time has come back to `queued`; returns them.
    async fn release_waiting_posts(&self, now: DateTime<Utc>, limit: u32) -> Result<Vec<PostId>>;
    async fn posts_in_status(&self, status: PostStatus, limit: u32) -> Result<Vec<PostId>>;
    /// The earlier post a near-duplicate repeats.
    async fn duplicate_of(&self, id: PostId) -> Result<Option<PostId>>;
    /// Fingerprints of posts posted since `since` (oldest first): the duplicate window.
    async fn recent_fingerprints(&self, since: DateTime<Utc>) -> Result<Vec<RecentFingerprint>>;

    // ---- source state ----
    /// A value a source keeps between runs (`namespace` names the source kind).
    async fn state_get(&self, namespace: &str, key: &str) -> Result<Option<String>>;
    async fn state_put(
        &self,
        namespace: &str,
        key: &str,
        value: &str,
        now: DateTime<Utc>,
    ) -> Result<()>;
    /// Every `(key, value)` of a namespace, by key.
    async fn state_list(&self, namespace: &str) -> Result<Vec<(String, String)>>;

    // ---- subscribers ----
    async fn upsert_subscriber(
        &self,
        spec: &SubscriberSpec,
        now: DateTime<Utc>,
    ) -> Result<SubscriberId>;
    async fn subscribers(&self) -> Result<Vec<SubscriberRow>>;
    /// A number that changes whenever any subscriber changes.
    async fn subscribers_version(&self) -> Result<i64>;
    /// The subscriber of a chat.
    async fn subscriber_by_chat(&self, chat_id: i64) -> Result<Option<SubscriberRow>>;
    /// Marks a chat's subscriber blocked (Telegram answered 403) or unblocked (they wrote to a
    /// bot again). Returns whether a subscriber exists.
    async fn set_subscriber_blocked(
        &self,
        chat_id: i64,
        blocked: bool,
        now: DateTime<Utc>,
    ) -> Result<bool>;

    // ---- learning ----
    /// Stores a labeled example; one per `(post, source)`: a new label of the same post by
    /// the same source replaces the old one. Returns its id.
    async fn add_example(&self, example: &NewExample, now: DateTime<Utc>) -> Result<i64>;
    /// Examples with an id above `after_id`, oldest first.
    async fn examples(&self, after_id: i64, limit: u32) -> Result<Vec<ExampleRow>>;
    /// Files a subscriber's report (pending until an admin decides).
    async fn insert_report(&self, report: &NewReport, now: DateTime<Utc>) -> Result<i64>;
    /// Reports, newest first, optionally only those in one status.
    async fn reports(&self, status: Option<ReportStatus>, limit: u32) -> Result<Vec<ReportRow>>;
    async fn report(&self, id: i64) -> Result<Option<ReportRow>>;
    /// An admin's decision on a pending report: `Some(label)` accepts it and stores the
    /// label as an example (source `report`) in the same transaction; `None` rejects it.
    /// Returns `false` when the report does not exist or was decided already.
    async fn decide_report(
        &self,
        id: i64,
        label: Option<&NewExample>,
        now: DateTime<Utc>,
    ) -> Result<bool>;
    /// Classification totals per model and prompt version since `since`.
    async fn classification_totals(
        &self,
        since: DateTime<Utc>,
    ) -> Result<Vec<ClassificationTotals>>;

    // ---- fan-out and delivery ----
    /// Atomically stores the job's rendered parts, inserts one delivery per subscriber
    /// (ignoring ones that exist) and marks the post `fanned_out`. Returns the ids of the
    /// deliveries that are ready to send now.
    async fn fan_out(
        &self,
        post_id: PostId,
        parts: &[String],
        deliveries: &[NewDelivery],
        now: DateTime<Utc>,
    ) -> Result<Vec<DeliveryId>>;
    async fn job_render(&self, post_id: PostId) -> Result<Option<Vec<String>>>;
    async fn delivery(&self, id: DeliveryId) -> Result<Option<DeliveryRow>>;
    /// Applies status changes of several deliveries in one transaction. For each update,
    /// says whether it applied (a `Claim` applies only to a `pending` delivery).
    async fn apply_delivery_updates(
        &self,
        updates: &[DeliveryUpdate],
        now: DateTime<Utc>,
    ) -> Result<Vec<bool>>;
    /// Moves held deliveries whose time has come to `pending`; returns them.
    async fn release_held_deliveries(
        &self,
        now: DateTime<Utc>,
        limit: u32,
    ) -> Result<Vec<DeliveryId>>;
    async fn deliveries_in_status(
        &self,
        status: DeliveryStatus,
        limit: u32,
    ) -> Result<Vec<DeliveryId>>;
    /// Deliveries left in `sending` since before `stale_before` by a sender that died: the
    /// call may or may not have reached Telegram. They are put back to `pending` (marked
    /// `resent_after_crash`) and returned. A single process passes `now` at start-up; with
    /// several senders, `now` minus a lease longer than any send.
    async fn recover_interrupted_deliveries(
        &self,
        stale_before: DateTime<Utc>,
        now: DateTime<Utc>,
    ) -> Result<Vec<DeliveryId>>;

    // ---- reporting ----
    async fn pipeline_counts(&self) -> Result<PipelineCounts>;
    /// Every sent delivery, for reports and tests: `(post id, chat id, bot, parts)`.
    async fn sent_deliveries(&self) -> Result<Vec<SentDelivery>>;
    /// The post a bot's message in a chat delivered (a subscriber replied `/wrong` to it).
    async fn post_of_message(
        &self,
        bot: &str,
        chat_id: i64,
        message_id: i64,
    ) -> Result<Option<PostId>>;
}
