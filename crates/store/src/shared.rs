//! [`SqlStore`]: the [`Store`] of both backends. Every query whose SQL is the same in SQLite
//! and PostgreSQL lives here, once; a backend's own file holds only its connection set-up
//! and what its [`Dialect`] does differently.

use std::fmt;

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use sqlx::Pool;

use crate::codec::{self, clamp_u64, ms};
use crate::sql::{Cols, Dialect, Sql};
use crate::*;

/// The store over one SQL database: [`SqliteStore`] or [`PostgresStore`].
///
/// Writes go through `write`, reads through `read`: for SQLite two pools (one writer
/// connection, several readers), for PostgreSQL the same pool twice.
pub struct SqlStore<DB: Dialect> {
    pub(crate) read: Pool<DB>,
    pub(crate) write: Pool<DB>,
    /// The connection target without secrets, for logs and `Debug`.
    pub(crate) target: String,
}

impl<DB: Dialect> Clone for SqlStore<DB> {
    fn clone(&self) -> Self {
        Self {
            read: self.read.clone(),
            write: self.write.clone(),
            target: self.target.clone(),
        }
    }
}

impl<DB: Dialect> fmt::Debug for SqlStore<DB> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SqlStore")
            .field("target", &self.target)
            .field("connections", &self.write.size())
            .finish()
    }
}

/// The statement that marks the subscriber list changed (the fan-out index reloads).
pub(crate) const BUMP_SUBSCRIBERS_VERSION: &str =
    "UPDATE meta SET value = value + 1 WHERE key = 'subscribers_version'";

const SELECT_POST: &str = "SELECT p.*, c.handle AS channel_handle, c.title AS channel_title
     FROM posts p JOIN channels c ON c.id = p.channel_id WHERE p.id = $1";

impl<DB: Dialect> SqlStore<DB> {
    /// Stores a labeled example: one per `(post, source)`, a new label replacing the old.
    pub(crate) async fn insert_example(
        conn: &mut DB::Connection,
        example: &NewExample,
        now: DateTime<Utc>,
    ) -> Result<i64> {
        Sql::<DB>::new(
            "INSERT INTO examples (post_id, text, is_job, kind, categories, source, created_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7)
             ON CONFLICT (post_id, source) WHERE post_id IS NOT NULL DO UPDATE SET
                 text = excluded.text, is_job = excluded.is_job, kind = excluded.kind,
                 categories = excluded.categories, created_at = excluded.created_at
             RETURNING id",
        )
        .int(example.post_id)
        .text(example.text.as_str())
        .flag(example.is_job)
        .text(example.kind.as_str())
        .json(Some(&example.categories))
        .text(example.source.as_str())
        .int(ms(now))
        .fetch_one(crate::sql::Exec::Conn(conn))
        .await
        .and_then(|row| Cols::<DB>::new(&row).id())
    }

    /// The row a statement with one key (`$1`) finds, decoded; `None` when there is none.
    async fn one<T>(
        &self,
        sql: &'static str,
        key: impl crate::sql::IntArg,
        decode: impl FnOnce(&DB::Row) -> Result<T>,
    ) -> Result<Option<T>> {
        let row = Sql::<DB>::new(sql)
            .int(key)
            .fetch_optional(&self.read)
            .await?;
        row.as_ref().map(decode).transpose()
    }

    async fn post_status(&self, id: PostId) -> Result<Option<PostStatus>> {
        let row = Sql::<DB>::new("SELECT status FROM posts WHERE id = $1")
            .int(id)
            .fetch_optional(&self.write)
            .await?;
        row.map(|row| Cols::<DB>::new(&row).word("status", PostStatus::parse))
            .transpose()
    }
}

#[async_trait]
impl<DB: Dialect> Store for SqlStore<DB> {
    async fn ping(&self) -> Result<()> {
        Sql::<DB>::new("SELECT 1").execute(&self.read).await?;
        Ok(())
    }

    async fn upsert_channel(&self, spec: &ChannelSpec, now: DateTime<Utc>) -> Result<ChannelRow> {
        let row = Sql::<DB>::new(
            "INSERT INTO channels (handle, title, enabled, include_terms, exclude_terms, created_at)
             VALUES ($1, $2, $3, $4, $5, $6)
             ON CONFLICT (handle) DO UPDATE SET
                title = COALESCE(excluded.title, channels.title), enabled = excluded.enabled,
                include_terms = excluded.include_terms, exclude_terms = excluded.exclude_terms
             RETURNING *",
        )
        .text(spec.handle.as_str())
        .text(spec.title.as_deref())
        .flag(spec.enabled)
        .json(Some(&spec.include))
        .json(Some(&spec.exclude))
        .int(ms(now))
        .fetch_one(&self.write)
        .await?;
        codec::channel_row::<DB>(&row)
    }

    async fn ensure_channel(&self, handle: &str, now: DateTime<Utc>) -> Result<ChannelRow> {
        const BY_HANDLE: &str = "SELECT * FROM channels WHERE handle = $1";
        if let Some(row) = Sql::<DB>::new(BY_HANDLE)
            .text(handle)
            .fetch_optional(&self.read)
            .await?
        {
            return codec::channel_row::<DB>(&row);
        }
        Sql::<DB>::new(
            "INSERT INTO channels (handle, created_at) VALUES ($1, $2)
             ON CONFLICT (handle) DO NOTHING",
        )
        .text(handle)
        .int(ms(now))
        .execute(&self.write)
        .await?;
        let row = Sql::<DB>::new(BY_HANDLE)
            .text(handle)
            .fetch_one(&self.write)
            .await?;
        codec::channel_row::<DB>(&row)
    }

    async fn channels(&self) -> Result<Vec<ChannelRow>> {
        let rows = Sql::<DB>::new("SELECT * FROM channels ORDER BY id")
            .fetch_all(&self.read)
            .await?;
        rows.iter().map(codec::channel_row::<DB>).collect()
    }

    async fn insert_post(&self, post: &NewPost) -> Result<InsertOutcome> {
        let inserted = Sql::<DB>::new(
            "INSERT INTO posts (channel_id, external_id, text, author, url, posted_at, received_at,
                                status, filter_reason, updated_at, fingerprint, duplicate_of)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $7, $10, $11)
             ON CONFLICT (channel_id, external_id) DO NOTHING
             RETURNING id",
        )
        .int(post.channel_id)
        .text(post.external_id.as_str())
        .text(post.text.as_str())
        .text(post.author.as_deref())
        .text(post.url.as_deref())
        .int(ms(post.posted_at))
        .int(ms(post.received_at))
        .text(post.status.as_str())
        .text(post.filter_reason.as_deref())
        .text(post.fingerprint.as_deref())
        .int(post.duplicate_of)
        .fetch_optional(&self.write)
        .await?;
        if let Some(row) = inserted {
            return Ok(InsertOutcome::Inserted(PostId(Cols::<DB>::new(&row).id()?)));
        }
        let row = Sql::<DB>::new("SELECT id FROM posts WHERE channel_id = $1 AND external_id = $2")
            .int(post.channel_id)
            .text(post.external_id.as_str())
            .fetch_one(&self.write)
            .await?;
        Ok(InsertOutcome::AlreadyKnown(PostId(
            Cols::<DB>::new(&row).id()?,
        )))
    }

    async fn post(&self, id: PostId) -> Result<Option<PostRow>> {
        self.one(SELECT_POST, id, codec::post_row::<DB>).await
    }

    async fn edit_post(
        &self,
        channel_id: ChannelId,
        external_id: &str,
        text: &str,
        fingerprint: Option<&str>,
        now: DateTime<Utc>,
    ) -> Result<Option<(PostId, PostStatus, bool)>> {
        let updated = Sql::<DB>::new(
            "UPDATE posts SET text = $3, fingerprint = COALESCE($4, fingerprint), updated_at = $5
             WHERE channel_id = $1 AND external_id = $2
               AND status IN ('filtered', 'queued', 'waiting', 'job')
             RETURNING id, status",
        )
        .int(channel_id)
        .text(external_id)
        .text(text)
        .text(fingerprint)
        .int(ms(now))
        .fetch_optional(&self.write)
        .await?;
        let (row, applied) = match updated {
            Some(row) => (row, true),
            None => {
                let row = Sql::<DB>::new(
                    "SELECT id, status FROM posts WHERE channel_id = $1 AND external_id = $2",
                )
                .int(channel_id)
                .text(external_id)
                .fetch_optional(&self.write)
                .await?;
                match row {
                    Some(row) => (row, false),
                    None => return Ok(None),
                }
            }
        };
        let c = Cols::<DB>::new(&row);
        Ok(Some((
            PostId(c.id()?),
            c.word("status", PostStatus::parse)?,
            applied,
        )))
    }

    async fn record_classification(
        &self,
        id: PostId,
        record: &ClassificationRecord,
        now: DateTime<Utc>,
    ) -> Result<PostStatus> {
        let status = if record.is_job {
            PostStatus::Job
        } else {
            PostStatus::NotJob
        };
        let mut tx = self.write.begin().await?;
        // Only a post still waiting for its verdict moves on: a redelivered message for a
        // post that went further changes nothing, not even the stored verdict.
        let moved = Sql::<DB>::new(
            "UPDATE posts SET status = $1, last_error = NULL, next_attempt_at = NULL,
                 updated_at = $2
             WHERE id = $3 AND status IN ('queued', 'waiting')",
        )
        .text(status.as_str())
        .int(ms(now))
        .int(id)
        .execute(&mut tx)
        .await?;
        if moved == 0 {
            tx.rollback().await?;
            return Ok(self.post_status(id).await?.unwrap_or(status));
        }
        Sql::<DB>::new(
            "INSERT INTO classifications (post_id, is_job, kind, categories, confidence, model,
                 prompt_version, tokens_in, tokens_out, latency_ms, created_at, extraction, cost_usd)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)
             ON CONFLICT (post_id) DO UPDATE SET is_job = excluded.is_job, kind = excluded.kind,
                 categories = excluded.categories, confidence = excluded.confidence,
                 model = excluded.model, prompt_version = excluded.prompt_version,
                 tokens_in = excluded.tokens_in, tokens_out = excluded.tokens_out,
                 latency_ms = excluded.latency_ms, created_at = excluded.created_at,
                 extraction = excluded.extraction, cost_usd = excluded.cost_usd",
        )
        .int(id)
        .flag(record.is_job)
        .text(record.kind.as_str())
        .json(Some(&record.categories))
        .real(f64::from(record.confidence))
        .text(record.model.as_str())
        .text(record.prompt_version.as_deref())
        .int(i64::from(record.tokens_in))
        .int(i64::from(record.tokens_out))
        .int(i64::from(record.latency_ms))
        .int(ms(now))
        .json(record.extraction.as_ref())
        .real(record.cost_usd)
        .execute(&mut tx)
        .await?;
        tx.commit().await?;
        Ok(status)
    }

    async fn classification(&self, id: PostId) -> Result<Option<ClassificationRecord>> {
        const SQL: &str = "SELECT * FROM classifications WHERE post_id = $1";
        self.one(SQL, id, codec::classification_row::<DB>).await
    }

    async fn mark_post_waiting(
        &self,
        id: PostId,
        error: &str,
        retry_at: DateTime<Utc>,
        now: DateTime<Utc>,
    ) -> Result<()> {
        Sql::<DB>::new(
            "UPDATE posts SET status = 'waiting', attempts = attempts + 1, last_error = $1,
                 next_attempt_at = $2, updated_at = $3
             WHERE id = $4 AND status IN ('queued', 'waiting')",
        )
        .text(error)
        .int(ms(retry_at))
        .int(ms(now))
        .int(id)
        .execute(&self.write)
        .await?;
        Ok(())
    }

    async fn release_waiting_posts(&self, now: DateTime<Utc>, limit: u32) -> Result<Vec<PostId>> {
        let ids = Sql::<DB>::new(DB::RELEASE_WAITING_POSTS)
            .int(ms(now))
            .int(i64::from(limit))
            .ids(&self.write)
            .await?;
        Ok(ids.into_iter().map(Into::into).collect())
    }

    async fn posts_in_status(&self, status: PostStatus, limit: u32) -> Result<Vec<PostId>> {
        let ids = Sql::<DB>::new("SELECT id FROM posts WHERE status = $1 ORDER BY id LIMIT $2")
            .text(status.as_str())
            .int(i64::from(limit))
            .ids(&self.read)
            .await?;
        Ok(ids.into_iter().map(Into::into).collect())
    }

    async fn duplicate_of(&self, id: PostId) -> Result<Option<PostId>> {
        let row = Sql::<DB>::new("SELECT duplicate_of FROM posts WHERE id = $1")
            .int(id)
            .fetch_optional(&self.read)
            .await?;
        Ok(match row {
            Some(row) => Cols::<DB>::new(&row)
                .opt_int("duplicate_of")?
                .map(Into::into),
            None => None,
        })
    }

    async fn recent_fingerprints(&self, since: DateTime<Utc>) -> Result<Vec<RecentFingerprint>> {
        let rows = Sql::<DB>::new(
            "SELECT id, posted_at, fingerprint FROM posts
             WHERE fingerprint IS NOT NULL AND posted_at >= $1 ORDER BY posted_at, id",
        )
        .int(ms(since))
        .fetch_all(&self.read)
        .await?;
        rows.iter()
            .map(|row| {
                let c = Cols::<DB>::new(row);
                Ok(RecentFingerprint {
                    id: c.id()?.into(),
                    posted_at: c.time("posted_at")?,
                    fingerprint: c.text("fingerprint")?,
                })
            })
            .collect()
    }

    async fn state_get(&self, namespace: &str, key: &str) -> Result<Option<String>> {
        let row =
            Sql::<DB>::new("SELECT value FROM source_state WHERE namespace = $1 AND key = $2")
                .text(namespace)
                .text(key)
                .fetch_optional(&self.write)
                .await?;
        row.map(|row| Cols::<DB>::new(&row).text("value"))
            .transpose()
    }

    async fn state_put(
        &self,
        namespace: &str,
        key: &str,
        value: &str,
        now: DateTime<Utc>,
    ) -> Result<()> {
        Sql::<DB>::new(
            "INSERT INTO source_state (namespace, key, value, updated_at) VALUES ($1, $2, $3, $4)
             ON CONFLICT (namespace, key) DO UPDATE SET
                 value = excluded.value, updated_at = excluded.updated_at",
        )
        .text(namespace)
        .text(key)
        .text(value)
        .int(ms(now))
        .execute(&self.write)
        .await?;
        Ok(())
    }

    async fn state_list(&self, namespace: &str) -> Result<Vec<(String, String)>> {
        let rows =
            Sql::<DB>::new("SELECT key, value FROM source_state WHERE namespace = $1 ORDER BY key")
                .text(namespace)
                .fetch_all(&self.read)
                .await?;
        rows.iter()
            .map(|row| {
                let c = Cols::<DB>::new(row);
                Ok((c.text("key")?, c.text("value")?))
            })
            .collect()
    }

    async fn upsert_subscriber(
        &self,
        spec: &SubscriberSpec,
        now: DateTime<Utc>,
    ) -> Result<SubscriberId> {
        let quiet = spec.quiet_hours.as_ref();
        let min_budget = spec
            .min_budget
            .as_deref()
            .map(serde_json::from_str::<serde_json::Value>)
            .transpose()
            .map_err(|e| StoreError::Corrupt {
                column: "subscribers.min_budget",
                detail: e.to_string(),
            })?;
        let mut tx = self.write.begin().await?;
        let row = Sql::<DB>::new(
            "INSERT INTO subscribers (chat_id, name, categories, include_terms, exclude_terms,
                 paused, quiet_start, quiet_end, time_zone, created_at, updated_at, min_budget)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $10, $11)
             ON CONFLICT (chat_id) DO UPDATE SET name = excluded.name,
                 categories = excluded.categories, include_terms = excluded.include_terms,
                 exclude_terms = excluded.exclude_terms, paused = excluded.paused,
                 quiet_start = excluded.quiet_start, quiet_end = excluded.quiet_end,
                 time_zone = excluded.time_zone, updated_at = excluded.updated_at,
                 min_budget = excluded.min_budget
             RETURNING id",
        )
        .int(spec.chat_id)
        .text(spec.name.as_deref())
        .json(Some(&spec.categories))
        .json(Some(&spec.include))
        .json(Some(&spec.exclude))
        .flag(spec.paused)
        .text(quiet.map(|q| q.start.as_str()))
        .text(quiet.map(|q| q.end.as_str()))
        .text(quiet.map(|q| q.time_zone.as_str()))
        .int(ms(now))
        .json(min_budget.as_ref())
        .fetch_one(&mut tx)
        .await?;
        Sql::<DB>::new(BUMP_SUBSCRIBERS_VERSION)
            .execute(&mut tx)
            .await?;
        tx.commit().await?;
        Ok(Cols::<DB>::new(&row).id()?.into())
    }

    async fn subscribers(&self) -> Result<Vec<SubscriberRow>> {
        let rows = Sql::<DB>::new("SELECT * FROM subscribers ORDER BY id")
            .fetch_all(&self.read)
            .await?;
        rows.iter().map(codec::subscriber_row::<DB>).collect()
    }

    async fn subscribers_version(&self) -> Result<i64> {
        let row = Sql::<DB>::new("SELECT value FROM meta WHERE key = 'subscribers_version'")
            .fetch_one(&self.read)
            .await?;
        Cols::<DB>::new(&row).int("value")
    }

    async fn subscriber_by_chat(&self, chat_id: i64) -> Result<Option<SubscriberRow>> {
        const SQL: &str = "SELECT * FROM subscribers WHERE chat_id = $1";
        self.one(SQL, chat_id, codec::subscriber_row::<DB>).await
    }

    async fn set_subscriber_blocked(
        &self,
        chat_id: i64,
        blocked: bool,
        now: DateTime<Utc>,
    ) -> Result<bool> {
        let mut tx = self.write.begin().await?;
        // The row lock of the update makes concurrent callers bump the version once.
        let changed = Sql::<DB>::new(
            "UPDATE subscribers SET blocked = $1, updated_at = $2
             WHERE chat_id = $3 AND blocked <> $1",
        )
        .flag(blocked)
        .int(ms(now))
        .int(chat_id)
        .execute(&mut tx)
        .await?;
        if changed > 0 {
            Sql::<DB>::new(BUMP_SUBSCRIBERS_VERSION)
                .execute(&mut tx)
                .await?;
            tx.commit().await?;
            return Ok(true);
        }
        let exists = Sql::<DB>::new("SELECT id FROM subscribers WHERE chat_id = $1")
            .int(chat_id)
            .fetch_optional(&mut tx)
            .await?;
        tx.commit().await?;
        Ok(exists.is_some())
    }

    async fn add_example(&self, example: &NewExample, now: DateTime<Utc>) -> Result<i64> {
        let mut tx = self.write.begin().await?;
        let id = Self::insert_example(&mut tx, example, now).await?;
        tx.commit().await?;
        Ok(id)
    }

    async fn examples(&self, after_id: i64, limit: u32) -> Result<Vec<ExampleRow>> {
        let rows = Sql::<DB>::new("SELECT * FROM examples WHERE id > $1 ORDER BY id LIMIT $2")
            .int(after_id)
            .int(i64::from(limit))
            .fetch_all(&self.read)
            .await?;
        rows.iter().map(codec::example_row::<DB>).collect()
    }

    async fn insert_report(&self, report: &NewReport, now: DateTime<Utc>) -> Result<i64> {
        let row = Sql::<DB>::new(
            "INSERT INTO reports (chat_id, post_id, kind, text, link, status, created_at)
             VALUES ($1, $2, $3, $4, $5, 'pending', $6) RETURNING id",
        )
        .int(report.chat_id)
        .int(report.post_id)
        .text(report.kind.as_str())
        .text(report.text.as_str())
        .text(report.link.as_deref())
        .int(ms(now))
        .fetch_one(&self.write)
        .await?;
        Cols::<DB>::new(&row).id()
    }

    async fn reports(&self, status: Option<ReportStatus>, limit: u32) -> Result<Vec<ReportRow>> {
        let rows = Sql::<DB>::new(
            "SELECT * FROM reports WHERE (CAST($1 AS TEXT) IS NULL OR status = $1)
             ORDER BY id DESC LIMIT $2",
        )
        .text(status.map(ReportStatus::as_str))
        .int(i64::from(limit))
        .fetch_all(&self.read)
        .await?;
        rows.iter().map(codec::report_row::<DB>).collect()
    }

    async fn report(&self, id: i64) -> Result<Option<ReportRow>> {
        const SQL: &str = "SELECT * FROM reports WHERE id = $1";
        self.one(SQL, id, codec::report_row::<DB>).await
    }

    async fn decide_report(
        &self,
        id: i64,
        label: Option<&NewExample>,
        now: DateTime<Utc>,
    ) -> Result<bool> {
        let status = if label.is_some() {
            ReportStatus::Accepted
        } else {
            ReportStatus::Rejected
        };
        let mut tx = self.write.begin().await?;
        // Deciding takes the row: a concurrent decision waits, then finds it decided.
        let decided = Sql::<DB>::new(
            "UPDATE reports SET status = $1, decided_at = $2 WHERE id = $3 AND status = 'pending'",
        )
        .text(status.as_str())
        .int(ms(now))
        .int(id)
        .execute(&mut tx)
        .await?;
        if decided == 0 {
            return Ok(false);
        }
        if let Some(label) = label {
            let example_id = Self::insert_example(&mut tx, label, now).await?;
            Sql::<DB>::new("UPDATE reports SET example_id = $1 WHERE id = $2")
                .int(example_id)
                .int(id)
                .execute(&mut tx)
                .await?;
        }
        tx.commit().await?;
        Ok(true)
    }

    async fn classification_totals(
        &self,
        since: DateTime<Utc>,
    ) -> Result<Vec<ClassificationTotals>> {
        let rows = Sql::<DB>::new(
            "SELECT model, prompt_version, COUNT(*) AS posts,
                 COUNT(*) FILTER (WHERE is_job) AS jobs,
                 CAST(COALESCE(SUM(tokens_in), 0) AS BIGINT) AS tokens_in,
                 CAST(COALESCE(SUM(tokens_out), 0) AS BIGINT) AS tokens_out,
                 CAST(COALESCE(SUM(cost_usd), 0) AS DOUBLE PRECISION) AS cost_usd,
                 CAST(COALESCE(SUM(latency_ms), 0) AS BIGINT) AS latency_ms
             FROM classifications WHERE created_at >= $1
             GROUP BY model, prompt_version ORDER BY model, prompt_version",
        )
        .int(ms(since))
        .fetch_all(&self.read)
        .await?;
        rows.iter()
            .map(|row| {
                let c = Cols::<DB>::new(row);
                Ok(ClassificationTotals {
                    model: c.text("model")?,
                    prompt_version: c.opt_text("prompt_version")?,
                    posts: clamp_u64(c.int("posts")?),
                    jobs: clamp_u64(c.int("jobs")?),
                    tokens_in: clamp_u64(c.int("tokens_in")?),
                    tokens_out: clamp_u64(c.int("tokens_out")?),
                    cost_usd: c.real("cost_usd")?,
                    latency_ms: clamp_u64(c.int("latency_ms")?),
                })
            })
            .collect()
    }

    async fn fan_out(
        &self,
        post_id: PostId,
        parts: &[String],
        deliveries: &[NewDelivery],
        now: DateTime<Utc>,
    ) -> Result<Vec<DeliveryId>> {
        DB::fan_out(self, post_id, parts, deliveries, ms(now)).await
    }

    async fn job_render(&self, post_id: PostId) -> Result<Option<Vec<String>>> {
        const SQL: &str = "SELECT parts FROM job_renders WHERE post_id = $1";
        self.one(SQL, post_id, |row| Cols::<DB>::new(row).json("parts"))
            .await
    }

    async fn delivery(&self, id: DeliveryId) -> Result<Option<DeliveryRow>> {
        const SQL: &str = "SELECT * FROM deliveries WHERE id = $1";
        self.one(SQL, id, codec::delivery_row::<DB>).await
    }

    async fn apply_delivery_updates(
        &self,
        updates: &[DeliveryUpdate],
        now: DateTime<Utc>,
    ) -> Result<Vec<bool>> {
        if updates.is_empty() {
            return Ok(Vec::new());
        }
        DB::apply_delivery_updates(self, updates, ms(now)).await
    }

    async fn release_held_deliveries(
        &self,
        now: DateTime<Utc>,
        limit: u32,
    ) -> Result<Vec<DeliveryId>> {
        let ids = Sql::<DB>::new(DB::RELEASE_HELD_DELIVERIES)
            .int(ms(now))
            .int(i64::from(limit))
            .ids(&self.write)
            .await?;
        Ok(ids.into_iter().map(Into::into).collect())
    }

    async fn deliveries_in_status(
        &self,
        status: DeliveryStatus,
        limit: u32,
    ) -> Result<Vec<DeliveryId>> {
        let ids =
            Sql::<DB>::new("SELECT id FROM deliveries WHERE status = $1 ORDER BY id LIMIT $2")
                .text(status.as_str())
                .int(i64::from(limit))
                .ids(&self.read)
                .await?;
        Ok(ids.into_iter().map(Into::into).collect())
    }

    async fn recover_interrupted_deliveries(
        &self,
        stale_before: DateTime<Utc>,
        now: DateTime<Utc>,
    ) -> Result<Vec<DeliveryId>> {
        // A concurrent caller waits for the rows this one changes, re-checks them, finds them
        // `pending` and leaves them: each row is returned once.
        let mut ids = Sql::<DB>::new(
            "UPDATE deliveries SET status = 'pending', resent_after_crash = resent_after_crash + 1,
                 updated_at = $1
             WHERE status = 'sending' AND updated_at < $2 RETURNING id",
        )
        .int(ms(now))
        .int(ms(stale_before))
        .ids(&self.write)
        .await?;
        ids.sort_unstable();
        Ok(ids.into_iter().map(Into::into).collect())
    }

    async fn pipeline_counts(&self) -> Result<PipelineCounts> {
        let mut c = PipelineCounts::default();
        let rows = Sql::<DB>::new("SELECT status, COUNT(*) AS n FROM posts GROUP BY status")
            .fetch_all(&self.read)
            .await?;
        for row in &rows {
            let cols = Cols::<DB>::new(row);
            let n = clamp_u64(cols.int("n")?);
            c.posts += n;
            match PostStatus::parse(&cols.text("status")?) {
                Some(PostStatus::Filtered) => c.filtered += n,
                Some(PostStatus::Queued) => c.queued += n,
                Some(PostStatus::Waiting) => c.waiting += n,
                Some(PostStatus::NotJob) => c.not_job += n,
                Some(PostStatus::Job) => {
                    c.jobs += n;
                    c.awaiting_fanout += n;
                }
                Some(PostStatus::FannedOut) => c.jobs += n,
                Some(PostStatus::Duplicate) => c.duplicates += n,
                None => {}
            }
        }
        let rows = Sql::<DB>::new(
            "SELECT status, COUNT(*) AS n, COUNT(*) FILTER (WHERE resent_after_crash > 0) AS resent
             FROM deliveries GROUP BY status",
        )
        .fetch_all(&self.read)
        .await?;
        for row in &rows {
            let cols = Cols::<DB>::new(row);
            let n = clamp_u64(cols.int("n")?);
            c.deliveries_resent_after_crash += clamp_u64(cols.int("resent")?);
            match DeliveryStatus::parse(&cols.text("status")?) {
                Some(DeliveryStatus::Pending) => c.deliveries_pending += n,
                Some(DeliveryStatus::Held) => c.deliveries_held += n,
                Some(DeliveryStatus::Sending) => c.deliveries_sending += n,
                Some(DeliveryStatus::Sent) => c.deliveries_sent += n,
                Some(DeliveryStatus::Blocked) => c.deliveries_blocked += n,
                Some(DeliveryStatus::Failed) => c.deliveries_failed += n,
                None => {}
            }
        }
        Ok(c)
    }

    async fn sent_deliveries(&self) -> Result<Vec<SentDelivery>> {
        let rows = Sql::<DB>::new(
            "SELECT post_id, subscriber_id, chat_id, bot, message_ids FROM deliveries
             WHERE status = 'sent' ORDER BY id",
        )
        .fetch_all(&self.read)
        .await?;
        rows.iter()
            .map(|row| {
                let c = Cols::<DB>::new(row);
                Ok(SentDelivery {
                    post_id: c.int("post_id")?.into(),
                    subscriber_id: c.int("subscriber_id")?.into(),
                    chat_id: c.int("chat_id")?,
                    bot: c.text("bot")?,
                    message_ids: c.json("message_ids")?,
                })
            })
            .collect()
    }

    async fn post_of_message(
        &self,
        bot: &str,
        chat_id: i64,
        message_id: i64,
    ) -> Result<Option<PostId>> {
        let row = Sql::<DB>::new(DB::POST_OF_MESSAGE)
            .int(chat_id)
            .text(bot)
            .int(message_id)
            .fetch_optional(&self.read)
            .await?;
        row.map(|row| Cols::<DB>::new(&row).int("post_id").map(PostId))
            .transpose()
    }
}
