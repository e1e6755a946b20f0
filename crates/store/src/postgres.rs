//! The PostgreSQL store of the distributed mode.
//!
//! Several processes (dispatchers, senders) share one database, so every method that hands
//! out work is safe against concurrent callers:
//!
//! * `release_*` pick their rows with `FOR UPDATE SKIP LOCKED`: two callers never both get
//!   the same row, and neither waits for the other;
//! * `apply_delivery_updates` locks the deliveries it names in id order before changing them,
//!   so concurrent batches queue behind each other instead of deadlocking, and a `Claim`
//!   re-checks the status after the lock (only a `pending` delivery is claimed). A
//!   transaction that still loses a deadlock or a serialization conflict is retried whole;
//! * consecutive updates of one kind in a batch (the sender's 256 claims) run as one
//!   statement over an array of ids instead of one round trip each.
//!
//! Schema: `migrations/postgres` (BIGSERIAL ids, BIGINT millisecond timestamps, BOOLEAN
//! flags, JSONB lists), the same columns and meaning as the SQLite schema.

use std::collections::HashSet;
use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use sqlx::postgres::{PgConnectOptions, PgPoolOptions, PgRow};
use sqlx::types::Json;
use sqlx::{PgPool, Postgres, Row, Transaction};

use crate::*;

static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("../../migrations/postgres");

/// How often a transaction that lost a deadlock or a serialization conflict is run again.
const TRANSACTION_ATTEMPTS: u32 = 5;

/// Connection pool settings of a [`PostgresStore`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PostgresOptions {
    /// Most connections the pool opens (default 10).
    pub max_connections: u32,
    /// Connections kept open while idle (default 0).
    pub min_connections: u32,
    /// How long a caller waits for a free connection before failing (default 30 s).
    pub acquire_timeout: Duration,
}

impl Default for PostgresOptions {
    fn default() -> Self {
        Self {
            max_connections: 10,
            min_connections: 0,
            acquire_timeout: Duration::from_secs(30),
        }
    }
}

/// PostgreSQL implementation of [`Store`].
///
/// Its `Debug` shows user, host, port and database, never the password.
#[derive(Clone)]
pub struct PostgresStore {
    pool: PgPool,
    /// The connection target without secrets, for logs.
    target: String,
}

impl fmt::Debug for PostgresStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PostgresStore")
            .field("target", &self.target)
            .field("connections", &self.pool.size())
            .finish()
    }
}

/// `url` with the password of its user info (`scheme://user:password@host`) replaced by
/// `***`, for error messages and logs.
pub(crate) fn redact_url(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(authority_end);
    let Some((user_info, host)) = authority.rsplit_once('@') else {
        return url.to_owned();
    };
    match user_info.split_once(':') {
        Some((user, _password)) => format!("{scheme}://{user}:***@{host}{tail}"),
        None => url.to_owned(),
    }
}

fn ms(t: DateTime<Utc>) -> i64 {
    t.timestamp_millis()
}

fn from_ms(v: i64) -> DateTime<Utc> {
    DateTime::from_timestamp_millis(v).unwrap_or(DateTime::UNIX_EPOCH)
}

fn count(v: i64) -> u32 {
    u32::try_from(v).unwrap_or(0)
}

fn ids_of(rows: &[PgRow]) -> Result<Vec<i64>> {
    rows.iter()
        .map(|r| r.try_get::<i64, _>(0).map_err(StoreError::from))
        .collect()
}

/// Deadlocks and serialization failures abort a transaction that would succeed if run again.
/// Subscribers with the minimum budget as text (JSON), so rows carry it opaquely.
const SUBSCRIBER_SELECT: &str =
    "SELECT id, chat_id, name, categories, include_terms, exclude_terms, paused, blocked,
         quiet_start, quiet_end, time_zone, min_budget::text AS min_budget
     FROM subscribers ORDER BY id";

fn subscriber_row(row: &PgRow) -> Result<SubscriberRow> {
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
        categories: row.try_get::<Json<Vec<String>>, _>("categories")?.0,
        include: row.try_get::<Json<Vec<String>>, _>("include_terms")?.0,
        exclude: row.try_get::<Json<Vec<String>>, _>("exclude_terms")?.0,
        paused: row.try_get("paused")?,
        blocked: row.try_get("blocked")?,
        quiet_hours,
        min_budget: row.try_get("min_budget")?,
    })
}

fn example_row(row: &PgRow) -> Result<ExampleRow> {
    let source: String = row.try_get("source")?;
    Ok(ExampleRow {
        id: row.try_get("id")?,
        post_id: row.try_get("post_id")?,
        text: row.try_get("text")?,
        is_job: row.try_get("is_job")?,
        kind: row.try_get("kind")?,
        categories: row.try_get::<Json<Vec<String>>, _>("categories")?.0,
        source: ExampleSource::parse(&source).ok_or(StoreError::Corrupt {
            column: "examples.source",
            detail: source.clone(),
        })?,
        created_at: from_ms(row.try_get("created_at")?),
    })
}

fn report_row(row: &PgRow) -> Result<ReportRow> {
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
    conn: &mut sqlx::PgConnection,
    example: &NewExample,
    now: DateTime<Utc>,
) -> Result<i64> {
    if example.post_id.is_some() {
        // One example per (post, source): the partial unique index takes the conflict.
        return Ok(sqlx::query_scalar(
            "INSERT INTO examples (post_id, text, is_job, kind, categories, source, created_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7)
             ON CONFLICT (post_id, source) WHERE post_id IS NOT NULL DO UPDATE SET
                 text = EXCLUDED.text, is_job = EXCLUDED.is_job, kind = EXCLUDED.kind,
                 categories = EXCLUDED.categories, created_at = EXCLUDED.created_at
             RETURNING id",
        )
        .bind(example.post_id)
        .bind(&example.text)
        .bind(example.is_job)
        .bind(&example.kind)
        .bind(Json(&example.categories))
        .bind(example.source.as_str())
        .bind(ms(now))
        .fetch_one(&mut *conn)
        .await?);
    }
    Ok(sqlx::query_scalar(
        "INSERT INTO examples (post_id, text, is_job, kind, categories, source, created_at)
         VALUES (NULL, $1, $2, $3, $4, $5, $6) RETURNING id",
    )
    .bind(&example.text)
    .bind(example.is_job)
    .bind(&example.kind)
    .bind(Json(&example.categories))
    .bind(example.source.as_str())
    .bind(ms(now))
    .fetch_one(&mut *conn)
    .await?)
}

fn is_transient(error: &StoreError) -> bool {
    match error {
        StoreError::Database(sqlx::Error::Database(db)) => {
            matches!(db.code().as_deref(), Some("40P01" | "40001"))
        }
        _ => false,
    }
}

fn delivery_status(raw: String) -> Result<DeliveryStatus> {
    DeliveryStatus::parse(&raw).ok_or(StoreError::Corrupt {
        column: "deliveries.status",
        detail: raw,
    })
}

/// The end (exclusive) of the run of updates starting at `start` that `same_kind` accepts and
/// that name each delivery at most once, so one set-based statement can apply them all.
fn run_end(
    updates: &[DeliveryUpdate],
    start: usize,
    same_kind: impl Fn(&DeliveryUpdate) -> bool,
) -> usize {
    let mut seen = HashSet::new();
    let mut end = start;
    while end < updates.len() && same_kind(&updates[end]) && seen.insert(updates[end].id()) {
        end += 1;
    }
    end
}

impl PostgresStore {
    /// Connects to `url` (`postgres://user:password@host:port/database`) with the default
    /// [`PostgresOptions`] and applies pending migrations.
    pub async fn open(url: &str) -> Result<Self> {
        Self::open_with(url, &PostgresOptions::default()).await
    }

    /// Connects to `url` with the given pool settings and applies pending migrations.
    /// Several processes may do this at once: migrations take an advisory lock.
    pub async fn open_with(url: &str, options: &PostgresOptions) -> Result<Self> {
        if !(url.starts_with("postgres://") || url.starts_with("postgresql://")) {
            return Err(StoreError::UnsupportedUrl(redact_url(url)));
        }
        let connect = PgConnectOptions::from_str(url)?.application_name("jobwire");
        let target = format!(
            "postgres://{}@{}:{}/{}",
            connect.get_username(),
            connect.get_host(),
            connect.get_port(),
            connect.get_database().unwrap_or("")
        );
        let pool = PgPoolOptions::new()
            .max_connections(options.max_connections.max(1))
            .min_connections(options.min_connections)
            .acquire_timeout(options.acquire_timeout)
            .connect_with(connect)
            .await?;
        MIGRATOR.run(&pool).await?;
        tracing::debug!(%target, max_connections = options.max_connections, "postgres store open");
        Ok(Self { pool, target })
    }

    /// Closes every connection of the pool; later calls fail.
    pub async fn close(&self) {
        self.pool.close().await;
    }

    fn channel_from_row(row: &PgRow) -> Result<ChannelRow> {
        Ok(ChannelRow {
            id: row.try_get("id")?,
            handle: row.try_get("handle")?,
            title: row.try_get("title")?,
            enabled: row.try_get("enabled")?,
            include: row.try_get::<Json<Vec<String>>, _>("include_terms")?.0,
            exclude: row.try_get::<Json<Vec<String>>, _>("exclude_terms")?.0,
        })
    }

    fn delivery_from_row(row: &PgRow) -> Result<DeliveryRow> {
        Ok(DeliveryRow {
            id: row.try_get("id")?,
            post_id: row.try_get("post_id")?,
            subscriber_id: row.try_get("subscriber_id")?,
            chat_id: row.try_get("chat_id")?,
            bot: row.try_get("bot")?,
            status: delivery_status(row.try_get("status")?)?,
            not_before: row.try_get::<Option<i64>, _>("not_before")?.map(from_ms),
            parts_sent: count(row.try_get::<i32, _>("parts_sent")?.into()),
            message_ids: row.try_get::<Json<Vec<i64>>, _>("message_ids")?.0,
            attempts: count(row.try_get::<i32, _>("attempts")?.into()),
            error: row.try_get("error")?,
        })
    }

    async fn ids(&self, sql: &'static str, status: &str, limit: u32) -> Result<Vec<i64>> {
        let rows = sqlx::query(sql)
            .bind(status)
            .bind(i64::from(limit))
            .fetch_all(&self.pool)
            .await?;
        ids_of(&rows)
    }

    /// One attempt of [`Store::apply_delivery_updates`].
    async fn apply_delivery_updates_once(
        &self,
        updates: &[DeliveryUpdate],
        now: i64,
    ) -> Result<Vec<bool>> {
        let mut tx = self.pool.begin().await?;
        // Lock every named delivery in id order first: two batches naming the same rows
        // then queue behind each other instead of locking them in opposite orders.
        let mut named: Vec<i64> = updates.iter().map(DeliveryUpdate::id).collect();
        named.sort_unstable();
        named.dedup();
        sqlx::query("SELECT id FROM deliveries WHERE id = ANY($1) ORDER BY id FOR UPDATE")
            .bind(&named)
            .execute(&mut *tx)
            .await?;

        let mut applied = vec![false; updates.len()];
        let mut start = 0;
        while start < updates.len() {
            let end = match &updates[start] {
                DeliveryUpdate::Claim { .. } => {
                    let end = run_end(updates, start, |u| {
                        matches!(u, DeliveryUpdate::Claim { .. })
                    });
                    let ids: Vec<i64> = updates[start..end].iter().map(|u| u.id()).collect();
                    let rows = sqlx::query(
                        "UPDATE deliveries SET status = 'sending', attempts = attempts + 1,
                             updated_at = $1
                         WHERE id = ANY($2) AND status = 'pending' RETURNING id",
                    )
                    .bind(now)
                    .bind(&ids)
                    .fetch_all(&mut *tx)
                    .await?;
                    mark(&mut applied, updates, start, end, &rows)?;
                    end
                }
                DeliveryUpdate::PartSent { .. } => {
                    let end = run_end(updates, start, |u| {
                        matches!(u, DeliveryUpdate::PartSent { .. })
                    });
                    let (ids, message_ids): (Vec<i64>, Vec<i64>) = updates[start..end]
                        .iter()
                        .filter_map(|u| match u {
                            DeliveryUpdate::PartSent { id, message_id } => Some((*id, *message_id)),
                            _ => None,
                        })
                        .unzip();
                    let rows = sqlx::query(
                        "UPDATE deliveries d SET parts_sent = d.parts_sent + 1,
                             message_ids = d.message_ids || jsonb_build_array(u.message_id),
                             updated_at = $1
                         FROM unnest($2::BIGINT[], $3::BIGINT[]) AS u(id, message_id)
                         WHERE d.id = u.id AND d.status = 'sending'
                         RETURNING d.id",
                    )
                    .bind(now)
                    .bind(&ids)
                    .bind(&message_ids)
                    .fetch_all(&mut *tx)
                    .await?;
                    mark(&mut applied, updates, start, end, &rows)?;
                    end
                }
                DeliveryUpdate::Sent { .. } => {
                    let end = run_end(updates, start, |u| matches!(u, DeliveryUpdate::Sent { .. }));
                    let ids: Vec<i64> = updates[start..end].iter().map(|u| u.id()).collect();
                    let rows = sqlx::query(
                        "UPDATE deliveries SET status = 'sent', sent_at = $1, updated_at = $1,
                             error = NULL
                         WHERE id = ANY($2) AND status = 'sending' RETURNING id",
                    )
                    .bind(now)
                    .bind(&ids)
                    .fetch_all(&mut *tx)
                    .await?;
                    mark(&mut applied, updates, start, end, &rows)?;
                    end
                }
                DeliveryUpdate::Retry { id, at, error } => {
                    let result = sqlx::query(
                        "UPDATE deliveries SET status = 'held', not_before = $1, error = $2,
                             updated_at = $3
                         WHERE id = $4 AND status IN ('sending', 'pending')",
                    )
                    .bind(ms(*at))
                    .bind(error)
                    .bind(now)
                    .bind(id)
                    .execute(&mut *tx)
                    .await?;
                    applied[start] = result.rows_affected() > 0;
                    start + 1
                }
                DeliveryUpdate::Blocked { id, error } => {
                    applied[start] = Self::block(&mut tx, *id, error, now).await?;
                    start + 1
                }
                DeliveryUpdate::Failed { id, error } => {
                    let result = sqlx::query(
                        "UPDATE deliveries SET status = 'failed', error = $1, updated_at = $2
                         WHERE id = $3 AND status IN ('sending', 'pending', 'held')",
                    )
                    .bind(error)
                    .bind(now)
                    .bind(id)
                    .execute(&mut *tx)
                    .await?;
                    applied[start] = result.rows_affected() > 0;
                    start + 1
                }
            };
            start = end;
        }
        tx.commit().await?;
        Ok(applied)
    }

    /// A 403 on delivery `id`: the subscriber is marked blocked (bumping the subscribers
    /// version) and every delivery still open for them is blocked too.
    async fn block(
        tx: &mut Transaction<'static, Postgres>,
        id: DeliveryId,
        error: &str,
        now: i64,
    ) -> Result<bool> {
        let newly_blocked = sqlx::query(
            "UPDATE subscribers SET blocked = TRUE, updated_at = $1
             WHERE id = (SELECT subscriber_id FROM deliveries WHERE id = $2) AND NOT blocked",
        )
        .bind(now)
        .bind(id)
        .execute(&mut **tx)
        .await?;
        if newly_blocked.rows_affected() > 0 {
            sqlx::query("UPDATE meta SET value = value + 1 WHERE key = 'subscribers_version'")
                .execute(&mut **tx)
                .await?;
        }
        // This delivery, and everything still queued for this subscriber, will not be sent.
        // Deliveries of theirs in flight on other bots are left to finish.
        let result = sqlx::query(
            "UPDATE deliveries SET status = 'blocked', error = $1, updated_at = $2
             WHERE (id = $3 AND status IN ('pending', 'held', 'sending'))
                OR (subscriber_id = (SELECT subscriber_id FROM deliveries WHERE id = $3)
                    AND status IN ('pending', 'held'))",
        )
        .bind(error)
        .bind(now)
        .bind(id)
        .execute(&mut **tx)
        .await?;
        Ok(result.rows_affected() > 0)
    }
}

/// Marks the updates `start..end` whose delivery id came back from a set-based statement.
fn mark(
    applied: &mut [bool],
    updates: &[DeliveryUpdate],
    start: usize,
    end: usize,
    rows: &[PgRow],
) -> Result<()> {
    let changed: HashSet<i64> = ids_of(rows)?.into_iter().collect();
    for (slot, update) in applied[start..end].iter_mut().zip(&updates[start..end]) {
        *slot = changed.contains(&update.id());
    }
    Ok(())
}

#[async_trait]
impl Store for PostgresStore {
    async fn ping(&self) -> Result<()> {
        sqlx::query("SELECT 1").execute(&self.pool).await?;
        Ok(())
    }

    async fn upsert_channel(&self, spec: &ChannelSpec, now: DateTime<Utc>) -> Result<ChannelRow> {
        let row = sqlx::query(
            "INSERT INTO channels (handle, title, enabled, include_terms, exclude_terms, created_at)
             VALUES ($1, $2, $3, $4, $5, $6)
             ON CONFLICT (handle) DO UPDATE SET
                title = COALESCE(EXCLUDED.title, channels.title), enabled = EXCLUDED.enabled,
                include_terms = EXCLUDED.include_terms, exclude_terms = EXCLUDED.exclude_terms
             RETURNING *",
        )
        .bind(&spec.handle)
        .bind(&spec.title)
        .bind(spec.enabled)
        .bind(Json(&spec.include))
        .bind(Json(&spec.exclude))
        .bind(ms(now))
        .fetch_one(&self.pool)
        .await?;
        Self::channel_from_row(&row)
    }

    async fn ensure_channel(&self, handle: &str, now: DateTime<Utc>) -> Result<ChannelRow> {
        let existing = sqlx::query("SELECT * FROM channels WHERE handle = $1")
            .bind(handle)
            .fetch_optional(&self.pool)
            .await?;
        if let Some(row) = existing {
            return Self::channel_from_row(&row);
        }
        sqlx::query(
            "INSERT INTO channels (handle, created_at) VALUES ($1, $2)
             ON CONFLICT (handle) DO NOTHING",
        )
        .bind(handle)
        .bind(ms(now))
        .execute(&self.pool)
        .await?;
        let row = sqlx::query("SELECT * FROM channels WHERE handle = $1")
            .bind(handle)
            .fetch_one(&self.pool)
            .await?;
        Self::channel_from_row(&row)
    }

    async fn channels(&self) -> Result<Vec<ChannelRow>> {
        let rows = sqlx::query("SELECT * FROM channels ORDER BY id")
            .fetch_all(&self.pool)
            .await?;
        rows.iter().map(Self::channel_from_row).collect()
    }

    async fn insert_post(&self, post: &NewPost) -> Result<InsertOutcome> {
        let inserted: Option<i64> = sqlx::query_scalar(
            "INSERT INTO posts (channel_id, external_id, text, author, url, posted_at, received_at,
                                status, filter_reason, updated_at, fingerprint, duplicate_of)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $7, $10, $11)
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
        .bind(&post.fingerprint)
        .bind(post.duplicate_of)
        .fetch_optional(&self.pool)
        .await?;
        if let Some(id) = inserted {
            return Ok(InsertOutcome::Inserted(id));
        }
        let id: i64 =
            sqlx::query_scalar("SELECT id FROM posts WHERE channel_id = $1 AND external_id = $2")
                .bind(post.channel_id)
                .bind(&post.external_id)
                .fetch_one(&self.pool)
                .await?;
        Ok(InsertOutcome::AlreadyKnown(id))
    }

    async fn post(&self, id: PostId) -> Result<Option<PostRow>> {
        let row = sqlx::query(
            "SELECT p.*, c.handle AS channel_handle, c.title AS channel_title
             FROM posts p JOIN channels c ON c.id = p.channel_id WHERE p.id = $1",
        )
        .bind(id)
        .fetch_optional(&self.pool)
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
            attempts: count(row.try_get::<i32, _>("attempts")?.into()),
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
            "UPDATE posts SET text = $3, fingerprint = COALESCE($4, fingerprint), updated_at = $5
             WHERE channel_id = $1 AND external_id = $2
               AND status IN ('filtered', 'queued', 'waiting', 'job')
             RETURNING id, status",
        )
        .bind(channel_id)
        .bind(external_id)
        .bind(text)
        .bind(fingerprint)
        .bind(ms(now))
        .fetch_optional(&self.pool)
        .await?;
        let (id, status, applied) = match updated {
            Some((id, status)) => (id, status, true),
            None => {
                let row: Option<(i64, String)> = sqlx::query_as(
                    "SELECT id, status FROM posts WHERE channel_id = $1 AND external_id = $2",
                )
                .bind(channel_id)
                .bind(external_id)
                .fetch_optional(&self.pool)
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
        let mut tx = self.pool.begin().await?;
        // Only a post still waiting for its verdict moves on: a redelivered message for a
        // post that went further changes nothing, not even the stored verdict.
        let moved = sqlx::query(
            "UPDATE posts SET status = $1, last_error = NULL, next_attempt_at = NULL,
                 updated_at = $2
             WHERE id = $3 AND status IN ('queued', 'waiting')",
        )
        .bind(status.as_str())
        .bind(ms(now))
        .bind(id)
        .execute(&mut *tx)
        .await?;
        if moved.rows_affected() == 0 {
            tx.rollback().await?;
            let current: Option<String> =
                sqlx::query_scalar("SELECT status FROM posts WHERE id = $1")
                    .bind(id)
                    .fetch_optional(&self.pool)
                    .await?;
            return Ok(current
                .as_deref()
                .and_then(PostStatus::parse)
                .unwrap_or(status));
        }
        sqlx::query(
            "INSERT INTO classifications (post_id, is_job, kind, categories, confidence, model,
                 prompt_version, tokens_in, tokens_out, latency_ms, created_at, extraction, cost_usd)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)
             ON CONFLICT (post_id) DO UPDATE SET is_job = EXCLUDED.is_job, kind = EXCLUDED.kind,
                 categories = EXCLUDED.categories, confidence = EXCLUDED.confidence,
                 model = EXCLUDED.model, prompt_version = EXCLUDED.prompt_version,
                 tokens_in = EXCLUDED.tokens_in, tokens_out = EXCLUDED.tokens_out,
                 latency_ms = EXCLUDED.latency_ms, created_at = EXCLUDED.created_at,
                 extraction = EXCLUDED.extraction, cost_usd = EXCLUDED.cost_usd",
        )
        .bind(id)
        .bind(record.is_job)
        .bind(&record.kind)
        .bind(Json(&record.categories))
        .bind(f64::from(record.confidence))
        .bind(&record.model)
        .bind(&record.prompt_version)
        .bind(i64::from(record.tokens_in))
        .bind(i64::from(record.tokens_out))
        .bind(i64::from(record.latency_ms))
        .bind(ms(now))
        .bind(record.extraction.as_ref().map(Json))
        .bind(record.cost_usd)
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(status)
    }

    async fn classification(&self, id: PostId) -> Result<Option<ClassificationRecord>> {
        let row = sqlx::query("SELECT * FROM classifications WHERE post_id = $1")
            .bind(id)
            .fetch_optional(&self.pool)
            .await?;
        let Some(row) = row else { return Ok(None) };
        Ok(Some(ClassificationRecord {
            is_job: row.try_get("is_job")?,
            kind: row.try_get("kind")?,
            categories: row.try_get::<Json<Vec<String>>, _>("categories")?.0,
            confidence: row.try_get::<f64, _>("confidence")? as f32,
            model: row.try_get("model")?,
            prompt_version: row.try_get("prompt_version")?,
            tokens_in: count(row.try_get("tokens_in")?),
            tokens_out: count(row.try_get("tokens_out")?),
            latency_ms: count(row.try_get("latency_ms")?),
            extraction: row
                .try_get::<Option<Json<jobwire_core::extract::Extraction>>, _>("extraction")?
                .map(|j| j.0),
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
            "UPDATE posts SET status = 'waiting', attempts = attempts + 1, last_error = $1,
                 next_attempt_at = $2, updated_at = $3
             WHERE id = $4 AND status IN ('queued', 'waiting')",
        )
        .bind(error)
        .bind(ms(retry_at))
        .bind(ms(now))
        .bind(id)
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    async fn release_waiting_posts(&self, now: DateTime<Utc>, limit: u32) -> Result<Vec<PostId>> {
        // The CTE runs once and locks what it picks; rows another caller holds are skipped,
        // rows it released meanwhile fail the re-checked `status = 'waiting'`.
        let rows = sqlx::query(
            "WITH picked AS (
                 SELECT id FROM posts WHERE status = 'waiting' AND next_attempt_at <= $1
                 ORDER BY next_attempt_at, id LIMIT $2 FOR UPDATE SKIP LOCKED)
             UPDATE posts p SET status = 'queued', updated_at = $1
             FROM picked WHERE p.id = picked.id
             RETURNING p.id",
        )
        .bind(ms(now))
        .bind(i64::from(limit))
        .fetch_all(&self.pool)
        .await?;
        ids_of(&rows)
    }

    async fn posts_in_status(&self, status: PostStatus, limit: u32) -> Result<Vec<PostId>> {
        self.ids(
            "SELECT id FROM posts WHERE status = $1 ORDER BY id LIMIT $2",
            status.as_str(),
            limit,
        )
        .await
    }

    async fn duplicate_of(&self, id: PostId) -> Result<Option<PostId>> {
        let of: Option<Option<i64>> =
            sqlx::query_scalar("SELECT duplicate_of FROM posts WHERE id = $1")
                .bind(id)
                .fetch_optional(&self.pool)
                .await?;
        Ok(of.flatten())
    }

    async fn recent_fingerprints(&self, since: DateTime<Utc>) -> Result<Vec<RecentFingerprint>> {
        let rows = sqlx::query(
            "SELECT id, posted_at, fingerprint FROM posts
             WHERE fingerprint IS NOT NULL AND posted_at >= $1 ORDER BY posted_at, id",
        )
        .bind(ms(since))
        .fetch_all(&self.pool)
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
            sqlx::query_scalar("SELECT value FROM source_state WHERE namespace = $1 AND key = $2")
                .bind(namespace)
                .bind(key)
                .fetch_optional(&self.pool)
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
            "INSERT INTO source_state (namespace, key, value, updated_at) VALUES ($1, $2, $3, $4)
             ON CONFLICT (namespace, key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at",
        )
        .bind(namespace)
        .bind(key)
        .bind(value)
        .bind(ms(now))
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    async fn state_list(&self, namespace: &str) -> Result<Vec<(String, String)>> {
        let rows =
            sqlx::query("SELECT key, value FROM source_state WHERE namespace = $1 ORDER BY key")
                .bind(namespace)
                .fetch_all(&self.pool)
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
        let mut tx = self.pool.begin().await?;
        let id: i64 = sqlx::query_scalar(
            "INSERT INTO subscribers (chat_id, name, categories, include_terms, exclude_terms,
                 paused, quiet_start, quiet_end, time_zone, created_at, updated_at, min_budget)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $10, $11::jsonb)
             ON CONFLICT (chat_id) DO UPDATE SET name = EXCLUDED.name,
                 categories = EXCLUDED.categories, include_terms = EXCLUDED.include_terms,
                 exclude_terms = EXCLUDED.exclude_terms, paused = EXCLUDED.paused,
                 quiet_start = EXCLUDED.quiet_start, quiet_end = EXCLUDED.quiet_end,
                 time_zone = EXCLUDED.time_zone, updated_at = EXCLUDED.updated_at,
                 min_budget = EXCLUDED.min_budget
             RETURNING id",
        )
        .bind(spec.chat_id)
        .bind(&spec.name)
        .bind(Json(&spec.categories))
        .bind(Json(&spec.include))
        .bind(Json(&spec.exclude))
        .bind(spec.paused)
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
        let rows = sqlx::query(SUBSCRIBER_SELECT).fetch_all(&self.pool).await?;
        rows.iter().map(subscriber_row).collect()
    }

    async fn subscribers_version(&self) -> Result<i64> {
        Ok(
            sqlx::query_scalar("SELECT value FROM meta WHERE key = 'subscribers_version'")
                .fetch_one(&self.pool)
                .await?,
        )
    }

    async fn subscriber_by_chat(&self, chat_id: i64) -> Result<Option<SubscriberRow>> {
        let row = sqlx::query(
            "SELECT id, chat_id, name, categories, include_terms, exclude_terms, paused, blocked,
                 quiet_start, quiet_end, time_zone, min_budget::text AS min_budget
             FROM subscribers WHERE chat_id = $1",
        )
        .bind(chat_id)
        .fetch_optional(&self.pool)
        .await?;
        row.as_ref().map(subscriber_row).transpose()
    }

    async fn set_subscriber_blocked(
        &self,
        chat_id: i64,
        blocked: bool,
        now: DateTime<Utc>,
    ) -> Result<bool> {
        let mut tx = self.pool.begin().await?;
        let current: Option<bool> =
            sqlx::query_scalar("SELECT blocked FROM subscribers WHERE chat_id = $1 FOR UPDATE")
                .bind(chat_id)
                .fetch_optional(&mut *tx)
                .await?;
        let Some(current) = current else {
            return Ok(false);
        };
        if current != blocked {
            sqlx::query("UPDATE subscribers SET blocked = $1, updated_at = $2 WHERE chat_id = $3")
                .bind(blocked)
                .bind(ms(now))
                .bind(chat_id)
                .execute(&mut *tx)
                .await?;
            sqlx::query("UPDATE meta SET value = value + 1 WHERE key = 'subscribers_version'")
                .execute(&mut *tx)
                .await?;
        }
        tx.commit().await?;
        Ok(true)
    }

    async fn add_example(&self, example: &NewExample, now: DateTime<Utc>) -> Result<i64> {
        let mut conn = self.pool.acquire().await?;
        insert_example(&mut conn, example, now).await
    }

    async fn examples(&self, after_id: i64, limit: u32) -> Result<Vec<ExampleRow>> {
        let rows = sqlx::query("SELECT * FROM examples WHERE id > $1 ORDER BY id LIMIT $2")
            .bind(after_id)
            .bind(i64::from(limit))
            .fetch_all(&self.pool)
            .await?;
        rows.iter().map(example_row).collect()
    }

    async fn insert_report(&self, report: &NewReport, now: DateTime<Utc>) -> Result<i64> {
        Ok(sqlx::query_scalar(
            "INSERT INTO reports (chat_id, post_id, kind, text, link, status, created_at)
             VALUES ($1, $2, $3, $4, $5, 'pending', $6) RETURNING id",
        )
        .bind(report.chat_id)
        .bind(report.post_id)
        .bind(report.kind.as_str())
        .bind(&report.text)
        .bind(&report.link)
        .bind(ms(now))
        .fetch_one(&self.pool)
        .await?)
    }

    async fn reports(&self, status: Option<ReportStatus>, limit: u32) -> Result<Vec<ReportRow>> {
        let rows = sqlx::query(
            "SELECT * FROM reports WHERE ($1::text IS NULL OR status = $1) ORDER BY id DESC LIMIT $2",
        )
        .bind(status.map(ReportStatus::as_str))
        .bind(i64::from(limit))
        .fetch_all(&self.pool)
        .await?;
        rows.iter().map(report_row).collect()
    }

    async fn report(&self, id: i64) -> Result<Option<ReportRow>> {
        let row = sqlx::query("SELECT * FROM reports WHERE id = $1")
            .bind(id)
            .fetch_optional(&self.pool)
            .await?;
        row.as_ref().map(report_row).transpose()
    }

    async fn decide_report(
        &self,
        id: i64,
        label: Option<&NewExample>,
        now: DateTime<Utc>,
    ) -> Result<bool> {
        let mut tx = self.pool.begin().await?;
        let pending: Option<i64> = sqlx::query_scalar(
            "SELECT id FROM reports WHERE id = $1 AND status = 'pending' FOR UPDATE",
        )
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
        sqlx::query(
            "UPDATE reports SET status = $1, example_id = $2, decided_at = $3 WHERE id = $4",
        )
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
            "SELECT model, prompt_version, COUNT(*) AS posts,
                 COUNT(*) FILTER (WHERE is_job) AS jobs,
                 COALESCE(SUM(tokens_in), 0)::BIGINT AS tokens_in,
                 COALESCE(SUM(tokens_out), 0)::BIGINT AS tokens_out,
                 COALESCE(SUM(cost_usd), 0)::DOUBLE PRECISION AS cost_usd,
                 COALESCE(SUM(latency_ms), 0)::BIGINT AS latency_ms
             FROM classifications WHERE created_at >= $1
             GROUP BY model, prompt_version ORDER BY model, prompt_version",
        )
        .bind(ms(since))
        .fetch_all(&self.pool)
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
        let now_ms = ms(now);
        let mut subscriber_ids = Vec::with_capacity(deliveries.len());
        let mut chat_ids = Vec::with_capacity(deliveries.len());
        let mut bots = Vec::with_capacity(deliveries.len());
        let mut statuses = Vec::with_capacity(deliveries.len());
        let mut not_before = Vec::with_capacity(deliveries.len());
        for d in deliveries {
            let status = if d.not_before.is_some_and(|t| t > now) {
                DeliveryStatus::Held
            } else {
                DeliveryStatus::Pending
            };
            subscriber_ids.push(d.subscriber_id);
            chat_ids.push(d.chat_id);
            bots.push(d.bot.as_str());
            statuses.push(status.as_str());
            not_before.push(d.not_before.map(ms));
        }
        let mut tx = self.pool.begin().await?;
        sqlx::query(
            "INSERT INTO job_renders (post_id, parts) VALUES ($1, $2)
             ON CONFLICT (post_id) DO UPDATE SET parts = EXCLUDED.parts",
        )
        .bind(post_id)
        .bind(Json(parts))
        .execute(&mut *tx)
        .await?;
        // One statement for every subscriber; ids come from the sequence in input order.
        let rows = sqlx::query(
            "INSERT INTO deliveries (post_id, subscriber_id, chat_id, bot, status, not_before,
                 created_at, updated_at)
             SELECT $1, d.subscriber_id, d.chat_id, d.bot, d.status, d.not_before, $7, $7
             FROM unnest($2::BIGINT[], $3::BIGINT[], $4::TEXT[], $5::TEXT[], $6::BIGINT[])
                  WITH ORDINALITY AS d(subscriber_id, chat_id, bot, status, not_before, n)
             ORDER BY d.n
             ON CONFLICT (post_id, subscriber_id) DO NOTHING
             RETURNING id, status",
        )
        .bind(post_id)
        .bind(&subscriber_ids)
        .bind(&chat_ids)
        .bind(&bots)
        .bind(&statuses)
        .bind(&not_before)
        .bind(now_ms)
        .fetch_all(&mut *tx)
        .await?;
        let mut ready = Vec::new();
        for row in &rows {
            if delivery_status(row.try_get("status")?)? == DeliveryStatus::Pending {
                ready.push(row.try_get::<i64, _>("id")?);
            }
        }
        ready.sort_unstable();
        sqlx::query("UPDATE posts SET status = 'fanned_out', updated_at = $1 WHERE id = $2")
            .bind(now_ms)
            .bind(post_id)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(ready)
    }

    async fn job_render(&self, post_id: PostId) -> Result<Option<Vec<String>>> {
        let parts: Option<Json<Vec<String>>> =
            sqlx::query_scalar("SELECT parts FROM job_renders WHERE post_id = $1")
                .bind(post_id)
                .fetch_optional(&self.pool)
                .await?;
        Ok(parts.map(|p| p.0))
    }

    async fn delivery(&self, id: DeliveryId) -> Result<Option<DeliveryRow>> {
        let row = sqlx::query("SELECT * FROM deliveries WHERE id = $1")
            .bind(id)
            .fetch_optional(&self.pool)
            .await?;
        row.as_ref().map(Self::delivery_from_row).transpose()
    }

    async fn apply_delivery_updates(
        &self,
        updates: &[DeliveryUpdate],
        now: DateTime<Utc>,
    ) -> Result<Vec<bool>> {
        if updates.is_empty() {
            return Ok(Vec::new());
        }
        let mut attempt = 1;
        loop {
            match self.apply_delivery_updates_once(updates, ms(now)).await {
                Err(e) if attempt < TRANSACTION_ATTEMPTS && is_transient(&e) => {
                    tracing::debug!(error = %e, attempt, "delivery updates conflicted; retrying");
                    attempt += 1;
                }
                other => return other,
            }
        }
    }

    async fn release_held_deliveries(
        &self,
        now: DateTime<Utc>,
        limit: u32,
    ) -> Result<Vec<DeliveryId>> {
        // See `release_waiting_posts`: concurrent callers never get the same row.
        let rows = sqlx::query(
            "WITH picked AS (
                 SELECT id FROM deliveries WHERE status = 'held' AND not_before <= $1
                 ORDER BY not_before, id LIMIT $2 FOR UPDATE SKIP LOCKED)
             UPDATE deliveries d SET status = 'pending', updated_at = $1
             FROM picked WHERE d.id = picked.id
             RETURNING d.id",
        )
        .bind(ms(now))
        .bind(i64::from(limit))
        .fetch_all(&self.pool)
        .await?;
        ids_of(&rows)
    }

    async fn deliveries_in_status(
        &self,
        status: DeliveryStatus,
        limit: u32,
    ) -> Result<Vec<DeliveryId>> {
        self.ids(
            "SELECT id FROM deliveries WHERE status = $1 ORDER BY id LIMIT $2",
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
        // A concurrent caller waits for the rows this one changes, re-checks them, finds them
        // `pending` and leaves them: each row is returned once.
        let rows = sqlx::query(
            "UPDATE deliveries SET status = 'pending', resent_after_crash = resent_after_crash + 1,
                 updated_at = $1
             WHERE status = 'sending' AND updated_at < $2 RETURNING id",
        )
        .bind(ms(now))
        .bind(ms(stale_before))
        .fetch_all(&self.pool)
        .await?;
        let mut ids = ids_of(&rows)?;
        ids.sort_unstable();
        Ok(ids)
    }

    async fn pipeline_counts(&self) -> Result<PipelineCounts> {
        let mut c = PipelineCounts::default();
        let rows = sqlx::query("SELECT status, COUNT(*) FROM posts GROUP BY status")
            .fetch_all(&self.pool)
            .await?;
        for row in &rows {
            let status: String = row.try_get(0)?;
            let n = u64::try_from(row.try_get::<i64, _>(1)?).unwrap_or(0);
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
            "SELECT status, COUNT(*), COUNT(*) FILTER (WHERE resent_after_crash > 0)
             FROM deliveries GROUP BY status",
        )
        .fetch_all(&self.pool)
        .await?;
        for row in &rows {
            let status: String = row.try_get(0)?;
            let n = u64::try_from(row.try_get::<i64, _>(1)?).unwrap_or(0);
            c.deliveries_resent_after_crash +=
                u64::try_from(row.try_get::<i64, _>(2)?).unwrap_or(0);
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
        .fetch_all(&self.pool)
        .await?;
        rows.iter()
            .map(|row| {
                Ok(SentDelivery {
                    post_id: row.try_get(0)?,
                    subscriber_id: row.try_get(1)?,
                    chat_id: row.try_get(2)?,
                    bot: row.try_get(3)?,
                    message_ids: row.try_get::<Json<Vec<i64>>, _>(4)?.0,
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
             WHERE d.subscriber_id IN (SELECT id FROM subscribers WHERE chat_id = $1)
               AND d.chat_id = $1 AND d.bot = $2 AND d.status = 'sent'
               AND d.message_ids @> jsonb_build_array($3::bigint)
             ORDER BY d.id DESC LIMIT 1",
        )
        .bind(chat_id)
        .bind(bot)
        .bind(message_id)
        .fetch_optional(&self.pool)
        .await?;
        Ok(post)
    }
}

#[cfg(test)]
mod tests {
    use super::redact_url;

    #[test]
    fn redact_url_hides_only_the_password() {
        assert_eq!(
            redact_url("postgres://app:s3cret@db.example:5432/jobwire?sslmode=require"),
            "postgres://app:***@db.example:5432/jobwire?sslmode=require"
        );
        assert_eq!(
            redact_url("postgres://app@db/jobwire"),
            "postgres://app@db/jobwire"
        );
        assert_eq!(
            redact_url("postgres://app:p@ss@db/x"),
            "postgres://app:***@db/x"
        );
        assert_eq!(redact_url("sqlite://jobwire.db"), "sqlite://jobwire.db");
    }
}
