//! The SQLite store of the embedded mode.
//!
//! SQLite takes one writer at a time, so writes go through a pool of one connection (no
//! `SQLITE_BUSY` storms between our own connections) while reads use a small pool of their
//! own. WAL journal with `synchronous=NORMAL`: a power cut may lose the last commits, never
//! corrupt the file, and an application crash loses nothing.

use std::path::Path;
use std::str::FromStr;
use std::time::Duration;

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};
use sqlx::{Row, SqlitePool};

use crate::*;

static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("../../migrations/sqlite");

/// SQLite implementation of [`Store`].
#[derive(Debug, Clone)]
pub struct SqliteStore {
    write: SqlitePool,
    read: SqlitePool,
}

fn ms(t: DateTime<Utc>) -> i64 {
    t.timestamp_millis()
}

fn from_ms(v: i64) -> DateTime<Utc> {
    DateTime::from_timestamp_millis(v).unwrap_or(DateTime::UNIX_EPOCH)
}

fn json_list(v: &[String]) -> String {
    serde_json::to_string(v).unwrap_or_else(|_| "[]".to_owned())
}

fn parse_list(column: &'static str, raw: &str) -> Result<Vec<String>> {
    serde_json::from_str(raw).map_err(|e| StoreError::Corrupt {
        column,
        detail: e.to_string(),
    })
}

fn extraction_json(e: Option<&jobwire_core::extract::Extraction>) -> Option<String> {
    e.and_then(|e| serde_json::to_string(e).ok())
}

fn parse_extraction(raw: Option<String>) -> Result<Option<jobwire_core::extract::Extraction>> {
    raw.map(|raw| {
        serde_json::from_str(&raw).map_err(|e| StoreError::Corrupt {
            column: "classifications.extraction",
            detail: e.to_string(),
        })
    })
    .transpose()
}

fn subscriber_row(row: &sqlx::sqlite::SqliteRow) -> Result<SubscriberRow> {
    let start: Option<String> = row.try_get("quiet_start")?;
    let end: Option<String> = row.try_get("quiet_end")?;
    let tz: Option<String> = row.try_get("time_zone")?;
    let quiet_hours = match (start, end) {
        (Some(start), Some(end)) => Some(QuietHoursSpec {
            start,
            end,
            time_zone: tz.unwrap_or_else(|| "UTC".to_owned()),
        }),
        _ => None,
    };
    Ok(SubscriberRow {
        id: row.try_get("id")?,
        chat_id: row.try_get("chat_id")?,
        name: row.try_get("name")?,
        categories: parse_list("subscribers.categories", row.try_get("categories")?)?,
        include: parse_list("subscribers.include_terms", row.try_get("include_terms")?)?,
        exclude: parse_list("subscribers.exclude_terms", row.try_get("exclude_terms")?)?,
        paused: row.try_get::<i64, _>("paused")? != 0,
        blocked: row.try_get::<i64, _>("blocked")? != 0,
        quiet_hours,
        min_budget: row.try_get("min_budget")?,
    })
}

fn example_row(row: &sqlx::sqlite::SqliteRow) -> Result<ExampleRow> {
    let source: String = row.try_get("source")?;
    Ok(ExampleRow {
        id: row.try_get("id")?,
        post_id: row.try_get("post_id")?,
        text: row.try_get("text")?,
        is_job: row.try_get::<i64, _>("is_job")? != 0,
        kind: row.try_get("kind")?,
        categories: parse_list("examples.categories", row.try_get("categories")?)?,
        source: ExampleSource::parse(&source).ok_or(StoreError::Corrupt {
            column: "examples.source",
            detail: source.clone(),
        })?,
        created_at: from_ms(row.try_get("created_at")?),
    })
}

fn report_row(row: &sqlx::sqlite::SqliteRow) -> Result<ReportRow> {
    let kind: String = row.try_get("kind")?;
    let status: String = row.try_get("status")?;
    Ok(ReportRow {
        id: row.try_get("id")?,
        chat_id: row.try_get("chat_id")?,
        post_id: row.try_get("post_id")?,
        kind: ReportKind::parse(&kind).ok_or(StoreError::Corrupt {
            column: "reports.kind",
            detail: kind.clone(),
        })?,
        text: row.try_get("text")?,
        link: row.try_get("link")?,
        status: ReportStatus::parse(&status).ok_or(StoreError::Corrupt {
            column: "reports.status",
            detail: status.clone(),
        })?,
        created_at: from_ms(row.try_get("created_at")?),
        decided_at: row.try_get::<Option<i64>, _>("decided_at")?.map(from_ms),
        example_id: row.try_get("example_id")?,
    })
}

async fn insert_example(
    conn: &mut sqlx::SqliteConnection,
    example: &NewExample,
    now: DateTime<Utc>,
) -> Result<i64> {
    if let Some(post_id) = example.post_id {
        let existing: Option<i64> =
            sqlx::query_scalar("SELECT id FROM examples WHERE post_id = ? AND source = ?")
                .bind(post_id)
                .bind(example.source.as_str())
                .fetch_optional(&mut *conn)
                .await?;
        if let Some(id) = existing {
            sqlx::query(
                "UPDATE examples SET text = ?, is_job = ?, kind = ?, categories = ?, created_at = ?
                 WHERE id = ?",
            )
            .bind(&example.text)
            .bind(i64::from(example.is_job))
            .bind(&example.kind)
            .bind(json_list(&example.categories))
            .bind(ms(now))
            .bind(id)
            .execute(&mut *conn)
            .await?;
            return Ok(id);
        }
    }
    Ok(sqlx::query_scalar(
        "INSERT INTO examples (post_id, text, is_job, kind, categories, source, created_at)
         VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id",
    )
    .bind(example.post_id)
    .bind(&example.text)
    .bind(i64::from(example.is_job))
    .bind(&example.kind)
    .bind(json_list(&example.categories))
    .bind(example.source.as_str())
    .bind(ms(now))
    .fetch_one(&mut *conn)
    .await?)
}

fn parse_ids(column: &'static str, raw: &str) -> Result<Vec<i64>> {
    serde_json::from_str(raw).map_err(|e| StoreError::Corrupt {
        column,
        detail: e.to_string(),
    })
}

impl SqliteStore {
    /// Opens (creating if needed) the database at `url` (`sqlite://PATH` or `sqlite:PATH`)
    /// and applies pending migrations.
    pub async fn open(url: &str) -> Result<Self> {
        let path = url
            .strip_prefix("sqlite://")
            .or_else(|| url.strip_prefix("sqlite:"))
            .filter(|p| !p.is_empty() && !p.starts_with(":memory:"))
            .ok_or_else(|| StoreError::UnsupportedUrl(url.to_owned()))?;
        Self::open_path(Path::new(path)).await
    }

    pub async fn open_path(path: &Path) -> Result<Self> {
        let options = SqliteConnectOptions::from_str("sqlite:")?
            .filename(path)
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(SqliteSynchronous::Normal)
            .foreign_keys(true)
            .busy_timeout(Duration::from_secs(10));
        let write = SqlitePoolOptions::new()
            .max_connections(1)
            .connect_with(options.clone())
            .await?;
        MIGRATOR.run(&write).await?;
        let read = SqlitePoolOptions::new()
            .max_connections(4)
            .connect_with(options.read_only(true))
            .await?;
        Ok(Self { write, read })
    }

    fn channel_from_row(row: &sqlx::sqlite::SqliteRow) -> Result<ChannelRow> {
        Ok(ChannelRow {
            id: row.try_get("id")?,
            handle: row.try_get("handle")?,
            title: row.try_get("title")?,
            enabled: row.try_get::<i64, _>("enabled")? != 0,
            include: parse_list("channels.include_terms", row.try_get("include_terms")?)?,
            exclude: parse_list("channels.exclude_terms", row.try_get("exclude_terms")?)?,
        })
    }

    fn delivery_from_row(row: &sqlx::sqlite::SqliteRow) -> Result<DeliveryRow> {
        let status: String = row.try_get("status")?;
        Ok(DeliveryRow {
            id: row.try_get("id")?,
            post_id: row.try_get("post_id")?,
            subscriber_id: row.try_get("subscriber_id")?,
            chat_id: row.try_get("chat_id")?,
            bot: row.try_get("bot")?,
            status: DeliveryStatus::parse(&status).ok_or(StoreError::Corrupt {
                column: "deliveries.status",
                detail: status.clone(),
            })?,
            not_before: row.try_get::<Option<i64>, _>("not_before")?.map(from_ms),
            parts_sent: row.try_get::<i64, _>("parts_sent")? as u32,
            message_ids: parse_ids("deliveries.message_ids", row.try_get("message_ids")?)?,
            attempts: row.try_get::<i64, _>("attempts")? as u32,
            error: row.try_get("error")?,
        })
    }

    async fn ids(&self, sql: &'static str, status: &str, limit: u32) -> Result<Vec<i64>> {
        let rows = sqlx::query(sql)
            .bind(status)
            .bind(i64::from(limit))
            .fetch_all(&self.read)
            .await?;
        rows.iter()
            .map(|r| r.try_get::<i64, _>(0).map_err(StoreError::from))
            .collect()
    }
}

#[async_trait]
impl Store for SqliteStore {
    async fn ping(&self) -> Result<()> {
        sqlx::query("SELECT 1").execute(&self.read).await?;
        Ok(())
    }

    async fn upsert_channel(&self, spec: &ChannelSpec, now: DateTime<Utc>) -> Result<ChannelRow> {
        let row = sqlx::query(
            "INSERT INTO channels (handle, title, enabled, include_terms, exclude_terms, created_at)
             VALUES (?, ?, ?, ?, ?, ?)
             ON CONFLICT (handle) DO UPDATE SET
                title = COALESCE(excluded.title, channels.title), enabled = excluded.enabled,
                include_terms = excluded.include_terms, exclude_terms = excluded.exclude_terms
             RETURNING *",
        )
        .bind(&spec.handle)
        .bind(&spec.title)
        .bind(i64::from(spec.enabled))
        .bind(json_list(&spec.include))
        .bind(json_list(&spec.exclude))
        .bind(ms(now))
        .fetch_one(&self.write)
        .await?;
        Self::channel_from_row(&row)
    }

    async fn ensure_channel(&self, handle: &str, now: DateTime<Utc>) -> Result<ChannelRow> {
        let existing = sqlx::query("SELECT * FROM channels WHERE handle = ?")
            .bind(handle)
            .fetch_optional(&self.read)
            .await?;
        if let Some(row) = existing {
            return Self::channel_from_row(&row);
        }
        sqlx::query(
            "INSERT INTO channels (handle, created_at) VALUES (?, ?) ON CONFLICT (handle) DO NOTHING",
        )
        .bind(handle)
        .bind(ms(now))
        .execute(&self.write)
        .await?;
        let row = sqlx::query("SELECT * FROM channels WHERE handle = ?")
            .bind(handle)
            .fetch_one(&self.write)
            .await?;
        Self::channel_from_row(&row)
    }

    async fn channels(&self) -> Result<Vec<ChannelRow>> {
        let rows = sqlx::query("SELECT * FROM channels ORDER BY id")
            .fetch_all(&self.read)
            .await?;
        rows.iter().map(Self::channel_from_row).collect()
    }

    async fn insert_post(&self, post: &NewPost) -> Result<InsertOutcome> {
        let inserted = sqlx::query(
            "INSERT INTO posts (channel_id, external_id, text, author, url, posted_at, received_at,
                                status, filter_reason, updated_at, fingerprint, duplicate_of)
             VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
             ON CONFLICT (channel_id, external_id) DO NOTHING
             RETURNING id",
        )
        .bind(post.channel_id)
        .bind(&post.external_id)
        .bind(&post.text)
        .bind(&post.author)
        .bind(&post.url)
        .bind(ms(post.posted_at))
        .bind(ms(post.received_at))
        .bind(post.status.as_str())
        .bind(&post.filter_reason)
        .bind(ms(post.received_at))
        .bind(&post.fingerprint)
        .bind(post.duplicate_of)
        .fetch_optional(&self.write)
        .await?;
        if let Some(row) = inserted {
            return Ok(InsertOutcome::Inserted(row.try_get(0)?));
        }
        let id: i64 =
            sqlx::query_scalar("SELECT id FROM posts WHERE channel_id = ? AND external_id = ?")
                .bind(post.channel_id)
                .bind(&post.external_id)
                .fetch_one(&self.write)
                .await?;
        Ok(InsertOutcome::AlreadyKnown(id))
    }

    async fn post(&self, id: PostId) -> Result<Option<PostRow>> {
        let row = sqlx::query(
            "SELECT p.*, c.handle AS channel_handle, c.title AS channel_title
             FROM posts p JOIN channels c ON c.id = p.channel_id WHERE p.id = ?",
        )
        .bind(id)
        .fetch_optional(&self.read)
        .await?;
        let Some(row) = row else { return Ok(None) };
        let status: String = row.try_get("status")?;
        Ok(Some(PostRow {
            id: row.try_get("id")?,
            channel_id: row.try_get("channel_id")?,
            channel_handle: row.try_get("channel_handle")?,
            channel_title: row.try_get("channel_title")?,
            external_id: row.try_get("external_id")?,
            text: row.try_get("text")?,
            author: row.try_get("author")?,
            url: row.try_get("url")?,
            posted_at: from_ms(row.try_get("posted_at")?),
            received_at: from_ms(row.try_get("received_at")?),
            status: PostStatus::parse(&status).ok_or(StoreError::Corrupt {
                column: "posts.status",
                detail: status.clone(),
            })?,
            attempts: row.try_get::<i64, _>("attempts")? as u32,
        }))
    }

    async fn edit_post(
        &self,
        channel_id: ChannelId,
        external_id: &str,
        text: &str,
        fingerprint: Option<&str>,
        now: DateTime<Utc>,
    ) -> Result<Option<(PostId, PostStatus, bool)>> {
        let updated: Option<(i64, String)> = sqlx::query_as(
            "UPDATE posts SET text = ?3, fingerprint = COALESCE(?4, fingerprint), updated_at = ?5
             WHERE channel_id = ?1 AND external_id = ?2
               AND status IN ('filtered', 'queued', 'waiting', 'job')
             RETURNING id, status",
        )
        .bind(channel_id)
        .bind(external_id)
        .bind(text)
        .bind(fingerprint)
        .bind(ms(now))
        .fetch_optional(&self.write)
        .await?;
        let (id, status, applied) = match updated {
            Some((id, status)) => (id, status, true),
            None => {
                let row: Option<(i64, String)> = sqlx::query_as(
                    "SELECT id, status FROM posts WHERE channel_id = ?1 AND external_id = ?2",
                )
                .bind(channel_id)
                .bind(external_id)
                .fetch_optional(&self.write)
                .await?;
                match row {
                    Some((id, status)) => (id, status, false),
                    None => return Ok(None),
                }
            }
        };
        let status = PostStatus::parse(&status).ok_or(StoreError::Corrupt {
            column: "posts.status",
            detail: status.clone(),
        })?;
        Ok(Some((id, status, applied)))
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
        let current: Option<String> = sqlx::query_scalar(
            "UPDATE posts SET status = ?, last_error = NULL, next_attempt_at = NULL, updated_at = ?
             WHERE id = ? AND status IN ('queued', 'waiting') RETURNING status",
        )
        .bind(status.as_str())
        .bind(ms(now))
        .bind(id)
        .fetch_optional(&mut *tx)
        .await?;
        if current.is_none() {
            tx.rollback().await?;
            let current: Option<String> =
                sqlx::query_scalar("SELECT status FROM posts WHERE id = ?")
                    .bind(id)
                    .fetch_optional(&self.write)
                    .await?;
            return Ok(current
                .as_deref()
                .and_then(PostStatus::parse)
                .unwrap_or(status));
        }
        sqlx::query(
            "INSERT INTO classifications (post_id, is_job, kind, categories, confidence, model,
                 prompt_version, tokens_in, tokens_out, latency_ms, created_at, extraction, cost_usd)
             VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
             ON CONFLICT (post_id) DO UPDATE SET is_job = excluded.is_job, kind = excluded.kind,
                 categories = excluded.categories, confidence = excluded.confidence,
                 model = excluded.model, prompt_version = excluded.prompt_version,
                 tokens_in = excluded.tokens_in, tokens_out = excluded.tokens_out,
                 latency_ms = excluded.latency_ms, created_at = excluded.created_at,
                 extraction = excluded.extraction, cost_usd = excluded.cost_usd",
        )
        .bind(id)
        .bind(i64::from(record.is_job))
        .bind(&record.kind)
        .bind(json_list(&record.categories))
        .bind(f64::from(record.confidence))
        .bind(&record.model)
        .bind(&record.prompt_version)
        .bind(i64::from(record.tokens_in))
        .bind(i64::from(record.tokens_out))
        .bind(i64::from(record.latency_ms))
        .bind(ms(now))
        .bind(extraction_json(record.extraction.as_ref()))
        .bind(record.cost_usd)
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(status)
    }

    async fn classification(&self, id: PostId) -> Result<Option<ClassificationRecord>> {
        let row = sqlx::query("SELECT * FROM classifications WHERE post_id = ?")
            .bind(id)
            .fetch_optional(&self.read)
            .await?;
        let Some(row) = row else { return Ok(None) };
        Ok(Some(ClassificationRecord {
            is_job: row.try_get::<i64, _>("is_job")? != 0,
            kind: row.try_get("kind")?,
            categories: parse_list("classifications.categories", row.try_get("categories")?)?,
            confidence: row.try_get::<f64, _>("confidence")? as f32,
            model: row.try_get("model")?,
            prompt_version: row.try_get("prompt_version")?,
            tokens_in: row.try_get::<i64, _>("tokens_in")? as u32,
            tokens_out: row.try_get::<i64, _>("tokens_out")? as u32,
            latency_ms: row.try_get::<i64, _>("latency_ms")? as u32,
            extraction: parse_extraction(row.try_get("extraction")?)?,
            cost_usd: row.try_get("cost_usd")?,
        }))
    }

    async fn mark_post_waiting(
        &self,
        id: PostId,
        error: &str,
        retry_at: DateTime<Utc>,
        now: DateTime<Utc>,
    ) -> Result<()> {
        sqlx::query(
            "UPDATE posts SET status = 'waiting', attempts = attempts + 1, last_error = ?,
                 next_attempt_at = ?, updated_at = ?
             WHERE id = ? AND status IN ('queued', 'waiting')",
        )
        .bind(error)
        .bind(ms(retry_at))
        .bind(ms(now))
        .bind(id)
        .execute(&self.write)
        .await?;
        Ok(())
    }

    async fn release_waiting_posts(&self, now: DateTime<Utc>, limit: u32) -> Result<Vec<PostId>> {
        let rows = sqlx::query(
            "UPDATE posts SET status = 'queued', updated_at = ?1
             WHERE id IN (SELECT id FROM posts WHERE status = 'waiting' AND next_attempt_at <= ?1
                          ORDER BY next_attempt_at LIMIT ?2)
             RETURNING id",
        )
        .bind(ms(now))
        .bind(i64::from(limit))
        .fetch_all(&self.write)
        .await?;
        rows.iter()
            .map(|r| r.try_get::<i64, _>(0).map_err(StoreError::from))
            .collect()
    }

    async fn posts_in_status(&self, status: PostStatus, limit: u32) -> Result<Vec<PostId>> {
        self.ids(
            "SELECT id FROM posts WHERE status = ? ORDER BY id LIMIT ?",
            status.as_str(),
            limit,
        )
        .await
    }

    async fn duplicate_of(&self, id: PostId) -> Result<Option<PostId>> {
        let of: Option<Option<i64>> =
            sqlx::query_scalar("SELECT duplicate_of FROM posts WHERE id = ?")
                .bind(id)
                .fetch_optional(&self.read)
                .await?;
        Ok(of.flatten())
    }

    async fn recent_fingerprints(&self, since: DateTime<Utc>) -> Result<Vec<RecentFingerprint>> {
        let rows = sqlx::query(
            "SELECT id, posted_at, fingerprint FROM posts
             WHERE fingerprint IS NOT NULL AND posted_at >= ? ORDER BY posted_at, id",
        )
        .bind(ms(since))
        .fetch_all(&self.read)
        .await?;
        rows.iter()
            .map(|r| {
                Ok(RecentFingerprint {
                    id: r.try_get(0)?,
                    posted_at: from_ms(r.try_get(1)?),
                    fingerprint: r.try_get(2)?,
                })
            })
            .collect()
    }

    async fn state_get(&self, namespace: &str, key: &str) -> Result<Option<String>> {
        Ok(
            sqlx::query_scalar("SELECT value FROM source_state WHERE namespace = ? AND key = ?")
                .bind(namespace)
                .bind(key)
                .fetch_optional(&self.write)
                .await?,
        )
    }

    async fn state_put(
        &self,
        namespace: &str,
        key: &str,
        value: &str,
        now: DateTime<Utc>,
    ) -> Result<()> {
        sqlx::query(
            "INSERT INTO source_state (namespace, key, value, updated_at) VALUES (?, ?, ?, ?)
             ON CONFLICT (namespace, key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at",
        )
        .bind(namespace)
        .bind(key)
        .bind(value)
        .bind(ms(now))
        .execute(&self.write)
        .await?;
        Ok(())
    }

    async fn state_list(&self, namespace: &str) -> Result<Vec<(String, String)>> {
        let rows =
            sqlx::query("SELECT key, value FROM source_state WHERE namespace = ? ORDER BY key")
                .bind(namespace)
                .fetch_all(&self.read)
                .await?;
        rows.iter()
            .map(|r| Ok((r.try_get(0)?, r.try_get(1)?)))
            .collect()
    }

    async fn upsert_subscriber(&self, spec: &SubscriberSpec, now: DateTime<Utc>) -> Result<i64> {
        let (qs, qe, tz) = match &spec.quiet_hours {
            Some(q) => (
                Some(q.start.as_str()),
                Some(q.end.as_str()),
                Some(q.time_zone.as_str()),
            ),
            None => (None, None, None),
        };
        let mut tx = self.write.begin().await?;
        let id: i64 = sqlx::query_scalar(
            "INSERT INTO subscribers (chat_id, name, categories, include_terms, exclude_terms, paused,
                 quiet_start, quiet_end, time_zone, created_at, updated_at, min_budget)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?10, ?11)
             ON CONFLICT (chat_id) DO UPDATE SET name = excluded.name,
                 categories = excluded.categories, include_terms = excluded.include_terms,
                 exclude_terms = excluded.exclude_terms, paused = excluded.paused,
                 quiet_start = excluded.quiet_start, quiet_end = excluded.quiet_end,
                 time_zone = excluded.time_zone, updated_at = excluded.updated_at,
                 min_budget = excluded.min_budget
             RETURNING id",
        )
        .bind(spec.chat_id)
        .bind(&spec.name)
        .bind(json_list(&spec.categories))
        .bind(json_list(&spec.include))
        .bind(json_list(&spec.exclude))
        .bind(i64::from(spec.paused))
        .bind(qs)
        .bind(qe)
        .bind(tz)
        .bind(ms(now))
        .bind(&spec.min_budget)
        .fetch_one(&mut *tx)
        .await?;
        sqlx::query("UPDATE meta SET value = value + 1 WHERE key = 'subscribers_version'")
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(id)
    }

    async fn subscribers(&self) -> Result<Vec<SubscriberRow>> {
        let rows = sqlx::query("SELECT * FROM subscribers ORDER BY id")
            .fetch_all(&self.read)
            .await?;
        rows.iter().map(subscriber_row).collect()
    }

    async fn subscribers_version(&self) -> Result<i64> {
        Ok(
            sqlx::query_scalar("SELECT value FROM meta WHERE key = 'subscribers_version'")
                .fetch_one(&self.read)
                .await?,
        )
    }

    async fn subscriber_by_chat(&self, chat_id: i64) -> Result<Option<SubscriberRow>> {
        let row = sqlx::query("SELECT * FROM subscribers WHERE chat_id = ?")
            .bind(chat_id)
            .fetch_optional(&self.read)
            .await?;
        row.as_ref().map(subscriber_row).transpose()
    }

    async fn set_subscriber_blocked(
        &self,
        chat_id: i64,
        blocked: bool,
        now: DateTime<Utc>,
    ) -> Result<bool> {
        let mut tx = self.write.begin().await?;
        let exists: Option<i64> =
            sqlx::query_scalar("SELECT id FROM subscribers WHERE chat_id = ?")
                .bind(chat_id)
                .fetch_optional(&mut *tx)
                .await?;
        if exists.is_none() {
            return Ok(false);
        }
        let changed = sqlx::query(
            "UPDATE subscribers SET blocked = ?, updated_at = ? WHERE chat_id = ? AND blocked <> ?",
        )
        .bind(i64::from(blocked))
        .bind(ms(now))
        .bind(chat_id)
        .bind(i64::from(blocked))
        .execute(&mut *tx)
        .await?;
        if changed.rows_affected() > 0 {
            sqlx::query("UPDATE meta SET value = value + 1 WHERE key = 'subscribers_version'")
                .execute(&mut *tx)
                .await?;
        }
        tx.commit().await?;
        Ok(true)
    }

    async fn add_example(&self, example: &NewExample, now: DateTime<Utc>) -> Result<i64> {
        let mut tx = self.write.begin().await?;
        let id = insert_example(&mut tx, example, now).await?;
        tx.commit().await?;
        Ok(id)
    }

    async fn examples(&self, after_id: i64, limit: u32) -> Result<Vec<ExampleRow>> {
        let rows = sqlx::query("SELECT * FROM examples WHERE id > ? ORDER BY id LIMIT ?")
            .bind(after_id)
            .bind(i64::from(limit))
            .fetch_all(&self.read)
            .await?;
        rows.iter().map(example_row).collect()
    }

    async fn insert_report(&self, report: &NewReport, now: DateTime<Utc>) -> Result<i64> {
        Ok(sqlx::query_scalar(
            "INSERT INTO reports (chat_id, post_id, kind, text, link, status, created_at)
             VALUES (?, ?, ?, ?, ?, 'pending', ?) RETURNING id",
        )
        .bind(report.chat_id)
        .bind(report.post_id)
        .bind(report.kind.as_str())
        .bind(&report.text)
        .bind(&report.link)
        .bind(ms(now))
        .fetch_one(&self.write)
        .await?)
    }

    async fn reports(&self, status: Option<ReportStatus>, limit: u32) -> Result<Vec<ReportRow>> {
        let rows = sqlx::query(
            "SELECT * FROM reports WHERE (?1 IS NULL OR status = ?1) ORDER BY id DESC LIMIT ?2",
        )
        .bind(status.map(ReportStatus::as_str))
        .bind(i64::from(limit))
        .fetch_all(&self.read)
        .await?;
        rows.iter().map(report_row).collect()
    }

    async fn report(&self, id: i64) -> Result<Option<ReportRow>> {
        let row = sqlx::query("SELECT * FROM reports WHERE id = ?")
            .bind(id)
            .fetch_optional(&self.read)
            .await?;
        row.as_ref().map(report_row).transpose()
    }

    async fn decide_report(
        &self,
        id: i64,
        label: Option<&NewExample>,
        now: DateTime<Utc>,
    ) -> Result<bool> {
        let mut tx = self.write.begin().await?;
        let pending: Option<i64> =
            sqlx::query_scalar("SELECT id FROM reports WHERE id = ? AND status = 'pending'")
                .bind(id)
                .fetch_optional(&mut *tx)
                .await?;
        if pending.is_none() {
            return Ok(false);
        }
        let (status, example_id) = match label {
            Some(label) => ("accepted", Some(insert_example(&mut tx, label, now).await?)),
            None => ("rejected", None),
        };
        sqlx::query("UPDATE reports SET status = ?, example_id = ?, decided_at = ? WHERE id = ?")
            .bind(status)
            .bind(example_id)
            .bind(ms(now))
            .bind(id)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(true)
    }

    async fn classification_totals(
        &self,
        since: DateTime<Utc>,
    ) -> Result<Vec<ClassificationTotals>> {
        let rows = sqlx::query(
            "SELECT model, prompt_version, COUNT(*) AS posts, SUM(is_job) AS jobs,
                 SUM(tokens_in) AS tokens_in, SUM(tokens_out) AS tokens_out,
                 TOTAL(cost_usd) AS cost_usd, SUM(latency_ms) AS latency_ms
             FROM classifications WHERE created_at >= ?
             GROUP BY model, prompt_version ORDER BY model, prompt_version",
        )
        .bind(ms(since))
        .fetch_all(&self.read)
        .await?;
        rows.iter()
            .map(|row| {
                Ok(ClassificationTotals {
                    model: row.try_get("model")?,
                    prompt_version: row.try_get("prompt_version")?,
                    posts: row.try_get::<i64, _>("posts")?.max(0) as u64,
                    jobs: row.try_get::<i64, _>("jobs")?.max(0) as u64,
                    tokens_in: row.try_get::<i64, _>("tokens_in")?.max(0) as u64,
                    tokens_out: row.try_get::<i64, _>("tokens_out")?.max(0) as u64,
                    cost_usd: row.try_get("cost_usd")?,
                    latency_ms: row.try_get::<i64, _>("latency_ms")?.max(0) as u64,
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
        let mut tx = self.write.begin().await?;
        let parts_json = serde_json::to_string(parts).map_err(|e| StoreError::Corrupt {
            column: "job_renders.parts",
            detail: e.to_string(),
        })?;
        sqlx::query(
            "INSERT INTO job_renders (post_id, parts) VALUES (?, ?)
             ON CONFLICT (post_id) DO UPDATE SET parts = excluded.parts",
        )
        .bind(post_id)
        .bind(parts_json)
        .execute(&mut *tx)
        .await?;
        let mut ready = Vec::new();
        for d in deliveries {
            let status = if d.not_before.is_some_and(|t| t > now) {
                DeliveryStatus::Held
            } else {
                DeliveryStatus::Pending
            };
            let id: Option<i64> = sqlx::query_scalar(
                "INSERT INTO deliveries (post_id, subscriber_id, chat_id, bot, status, not_before,
                     created_at, updated_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?7)
                 ON CONFLICT (post_id, subscriber_id) DO NOTHING
                 RETURNING id",
            )
            .bind(post_id)
            .bind(d.subscriber_id)
            .bind(d.chat_id)
            .bind(&d.bot)
            .bind(status.as_str())
            .bind(d.not_before.map(ms))
            .bind(ms(now))
            .fetch_optional(&mut *tx)
            .await?;
            if let (Some(id), DeliveryStatus::Pending) = (id, status) {
                ready.push(id);
            }
        }
        sqlx::query(
            "UPDATE posts SET status = 'fanned_out', updated_at = ? WHERE id = ? AND status = 'job'",
        )
            .bind(ms(now))
            .bind(post_id)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(ready)
    }

    async fn job_render(&self, post_id: PostId) -> Result<Option<Vec<String>>> {
        let raw: Option<String> =
            sqlx::query_scalar("SELECT parts FROM job_renders WHERE post_id = ?")
                .bind(post_id)
                .fetch_optional(&self.read)
                .await?;
        raw.map(|r| parse_list("job_renders.parts", &r)).transpose()
    }

    async fn delivery(&self, id: DeliveryId) -> Result<Option<DeliveryRow>> {
        let row = sqlx::query("SELECT * FROM deliveries WHERE id = ?")
            .bind(id)
            .fetch_optional(&self.read)
            .await?;
        row.as_ref().map(Self::delivery_from_row).transpose()
    }

    async fn apply_delivery_updates(
        &self,
        updates: &[DeliveryUpdate],
        now: DateTime<Utc>,
    ) -> Result<Vec<bool>> {
        let mut tx = self.write.begin().await?;
        let mut applied = Vec::with_capacity(updates.len());
        let now = ms(now);
        for update in updates {
            let result = match update {
                DeliveryUpdate::Claim { id } => {
                    sqlx::query(
                        "UPDATE deliveries SET status = 'sending', attempts = attempts + 1, updated_at = ?
                         WHERE id = ? AND status = 'pending'",
                    )
                    .bind(now)
                    .bind(id)
                    .execute(&mut *tx)
                    .await?
                }
                DeliveryUpdate::PartSent { id, message_id } => {
                    sqlx::query(
                        "UPDATE deliveries SET parts_sent = parts_sent + 1,
                             message_ids = json_insert(message_ids, '$[#]', ?), updated_at = ?
                         WHERE id = ? AND status = 'sending'",
                    )
                    .bind(message_id)
                    .bind(now)
                    .bind(id)
                    .execute(&mut *tx)
                    .await?
                }
                DeliveryUpdate::Sent { id } => {
                    sqlx::query(
                        "UPDATE deliveries SET status = 'sent', sent_at = ?1, updated_at = ?1, error = NULL
                         WHERE id = ?2 AND status = 'sending'",
                    )
                    .bind(now)
                    .bind(id)
                    .execute(&mut *tx)
                    .await?
                }
                DeliveryUpdate::Retry { id, at, error } => {
                    sqlx::query(
                        "UPDATE deliveries SET status = 'held', not_before = ?, error = ?, updated_at = ?
                         WHERE id = ? AND status IN ('sending', 'pending')",
                    )
                    .bind(ms(*at))
                    .bind(error)
                    .bind(now)
                    .bind(id)
                    .execute(&mut *tx)
                    .await?
                }
                DeliveryUpdate::Blocked { id, error } => {
                    let newly = sqlx::query(
                        "UPDATE subscribers SET blocked = 1, updated_at = ?
                         WHERE id = (SELECT subscriber_id FROM deliveries WHERE id = ?) AND blocked = 0",
                    )
                    .bind(now)
                    .bind(id)
                    .execute(&mut *tx)
                    .await?;
                    if newly.rows_affected() > 0 {
                        sqlx::query(
                            "UPDATE meta SET value = value + 1 WHERE key = 'subscribers_version'",
                        )
                        .execute(&mut *tx)
                        .await?;
                    }
                    // This delivery, and everything still queued for this subscriber, will
                    // not be sent. Deliveries of theirs in flight on other bots finish.
                    sqlx::query(
                        "UPDATE deliveries SET status = 'blocked', error = ?1, updated_at = ?2
                         WHERE (id = ?3 AND status IN ('pending', 'held', 'sending'))
                            OR (subscriber_id = (SELECT subscriber_id FROM deliveries WHERE id = ?3)
                                AND status IN ('pending', 'held'))",
                    )
                    .bind(error)
                    .bind(now)
                    .bind(id)
                    .execute(&mut *tx)
                    .await?
                }
                DeliveryUpdate::Failed { id, error } => {
                    sqlx::query(
                        "UPDATE deliveries SET status = 'failed', error = ?, updated_at = ?
                         WHERE id = ? AND status IN ('sending', 'pending', 'held')",
                    )
                    .bind(error)
                    .bind(now)
                    .bind(id)
                    .execute(&mut *tx)
                    .await?
                }
            };
            applied.push(result.rows_affected() > 0);
        }
        tx.commit().await?;
        Ok(applied)
    }

    async fn release_held_deliveries(
        &self,
        now: DateTime<Utc>,
        limit: u32,
    ) -> Result<Vec<DeliveryId>> {
        let rows = sqlx::query(
            "UPDATE deliveries SET status = 'pending', updated_at = ?1
             WHERE id IN (SELECT id FROM deliveries WHERE status = 'held' AND not_before <= ?1
                          ORDER BY not_before LIMIT ?2)
             RETURNING id",
        )
        .bind(ms(now))
        .bind(i64::from(limit))
        .fetch_all(&self.write)
        .await?;
        rows.iter()
            .map(|r| r.try_get::<i64, _>(0).map_err(StoreError::from))
            .collect()
    }

    async fn deliveries_in_status(
        &self,
        status: DeliveryStatus,
        limit: u32,
    ) -> Result<Vec<DeliveryId>> {
        self.ids(
            "SELECT id FROM deliveries WHERE status = ? ORDER BY id LIMIT ?",
            status.as_str(),
            limit,
        )
        .await
    }

    async fn recover_interrupted_deliveries(
        &self,
        stale_before: DateTime<Utc>,
        now: DateTime<Utc>,
    ) -> Result<Vec<DeliveryId>> {
        let rows = sqlx::query(
            "UPDATE deliveries SET status = 'pending', resent_after_crash = resent_after_crash + 1,
                 updated_at = ?
             WHERE status = 'sending' AND updated_at < ? RETURNING id",
        )
        .bind(ms(now))
        .bind(ms(stale_before))
        .fetch_all(&self.write)
        .await?;
        rows.iter()
            .map(|r| r.try_get::<i64, _>(0).map_err(StoreError::from))
            .collect()
    }

    async fn pipeline_counts(&self) -> Result<PipelineCounts> {
        let mut c = PipelineCounts::default();
        let rows = sqlx::query("SELECT status, COUNT(*) FROM posts GROUP BY status")
            .fetch_all(&self.read)
            .await?;
        for row in &rows {
            let status: String = row.try_get(0)?;
            let n = row.try_get::<i64, _>(1)? as u64;
            c.posts += n;
            match PostStatus::parse(&status) {
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
        let rows = sqlx::query(
            "SELECT status, COUNT(*), SUM(resent_after_crash > 0) FROM deliveries GROUP BY status",
        )
        .fetch_all(&self.read)
        .await?;
        for row in &rows {
            let status: String = row.try_get(0)?;
            let n = row.try_get::<i64, _>(1)? as u64;
            c.deliveries_resent_after_crash += row.try_get::<i64, _>(2)? as u64;
            match DeliveryStatus::parse(&status) {
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
        let rows = sqlx::query(
            "SELECT post_id, subscriber_id, chat_id, bot, message_ids FROM deliveries
             WHERE status = 'sent' ORDER BY id",
        )
        .fetch_all(&self.read)
        .await?;
        rows.iter()
            .map(|row| {
                Ok(SentDelivery {
                    post_id: row.try_get(0)?,
                    subscriber_id: row.try_get(1)?,
                    chat_id: row.try_get(2)?,
                    bot: row.try_get(3)?,
                    message_ids: parse_ids("deliveries.message_ids", row.try_get(4)?)?,
                })
            })
            .collect()
    }

    async fn post_of_message(
        &self,
        bot: &str,
        chat_id: i64,
        message_id: i64,
    ) -> Result<Option<i64>> {
        // Through the subscriber: deliveries are indexed by subscriber, not by chat.
        let post: Option<i64> = sqlx::query_scalar(
            "SELECT d.post_id FROM deliveries d
             WHERE d.subscriber_id IN (SELECT id FROM subscribers WHERE chat_id = ?)
               AND d.chat_id = ? AND d.bot = ? AND d.status = 'sent'
               AND EXISTS (SELECT 1 FROM json_each(d.message_ids) WHERE json_each.value = ?)
             ORDER BY d.id DESC LIMIT 1",
        )
        .bind(chat_id)
        .bind(chat_id)
        .bind(bot)
        .bind(message_id)
        .fetch_optional(&self.read)
        .await?;
        Ok(post)
    }
}
