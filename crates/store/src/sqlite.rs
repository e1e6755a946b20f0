//! The SQLite store of the embedded mode: its connection set-up and its [`Dialect`].
//!
//! SQLite takes one writer at a time, so writes go through a pool of one connection (no
//! `SQLITE_BUSY` storms between our own connections) while reads use a small pool of their
//! own. WAL journal with `synchronous=NORMAL`: a power cut may lose the last commits, never
//! corrupt the file, and an application crash loses nothing.

use std::path::Path;
use std::str::FromStr;
use std::time::Duration;

use async_trait::async_trait;
use sqlx::Sqlite;
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};

use crate::sql::{Dialect, sqlx_values};
use crate::*;

use crate::migrations::SQLITE_MIGRATOR as MIGRATOR;

/// SQLite implementation of [`Store`].
pub type SqliteStore = SqlStore<Sqlite>;

/// Deliveries SQLite's fan-out writes per statement: the JSON of a 50,000-strong audience
/// at once cost 30 MB of peak memory; statements of this many keep it flat, at one hop to
/// the worker thread each.
pub const SQLITE_FAN_OUT_ROWS: usize = 2048;

impl SqlStore<Sqlite> {
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
        Ok(Self {
            read,
            write,
            target: format!("sqlite://{}", path.display()),
        })
    }
}

#[async_trait]
impl Dialect for Sqlite {
    const PART_SENT: &'static str = "UPDATE deliveries SET parts_sent = parts_sent + 1,
             message_ids = json_insert(message_ids, '$[#]', $1), updated_at = $2
         WHERE id = $3 AND status = 'sending'";

    const LAST_PART_SENT: &'static str = "UPDATE deliveries SET parts_sent = parts_sent + 1,
             message_ids = json_insert(message_ids, '$[#]', $1), status = 'sent',
             sent_at = $2, updated_at = $2, error = NULL
         WHERE id = $3 AND status = 'sending'";

    const RELEASE_WAITING_POSTS: &'static str =
        "UPDATE posts SET status = 'queued', updated_at = $1
         WHERE id IN (SELECT id FROM posts WHERE status = 'waiting' AND next_attempt_at <= $1
                      ORDER BY next_attempt_at LIMIT $2)
         RETURNING id";

    const RELEASE_HELD_DELIVERIES: &'static str =
        "UPDATE deliveries SET status = 'pending', updated_at = $1
         WHERE id IN (SELECT id FROM deliveries WHERE status = 'held' AND not_before <= $1
                        AND NOT EXISTS (SELECT 1 FROM posts p WHERE p.id = deliveries.post_id
                            AND p.withheld_at IS NOT NULL)
                      ORDER BY not_before LIMIT $2)
         RETURNING id";

    // Through the subscriber: deliveries are indexed by subscriber, not by chat.
    const POST_OF_MESSAGE: &'static str = "SELECT d.post_id FROM deliveries d
         WHERE d.subscriber_id IN (SELECT id FROM subscribers WHERE chat_id = $1)
           AND d.chat_id = $1 AND d.bot = $2 AND d.status = 'sent'
           AND EXISTS (SELECT 1 FROM json_each(d.message_ids) WHERE json_each.value = $3)
         ORDER BY d.id DESC LIMIT 1";

    const DELIVERIES_BY_ID: &'static str = "SELECT d.*, l.lang FROM deliveries d
         LEFT JOIN chat_languages l ON l.chat_id = d.chat_id
         WHERE d.id IN (SELECT value FROM json_each($1))";

    sqlx_values!();

    /// One statement per 2,048 subscribers over a JSON array, as PostgreSQL's `unnest`: one
    /// insert per delivery was one hop to SQLite's worker thread each, all while the
    /// transaction held the only write connection the send stage's status writes need.
    async fn fan_out(
        store: &SqlStore<Self>,
        post_id: PostId,
        parts: &[String],
        deliveries: &[NewDelivery],
        now: i64,
    ) -> Result<Vec<DeliveryId>> {
        use futures::TryStreamExt as _;
        // `WHERE true`: SQLite's parser needs it between a SELECT and its ON CONFLICT.
        const INSERT: &str = "INSERT INTO deliveries (post_id, subscriber_id, chat_id, bot,
                 status, not_before, created_at, updated_at)
             SELECT $1, json_extract(value, '$[0]'), json_extract(value, '$[1]'),
                    json_extract(value, '$[2]'), json_extract(value, '$[3]'),
                    json_extract(value, '$[4]'), $3, $3
             FROM json_each($2) WHERE true
             ON CONFLICT (post_id, subscriber_id) DO NOTHING
             RETURNING id, status";
        let mut tx = store.begin_fan_out(post_id, parts).await?;
        let mut ready = Vec::new();
        for chunk in deliveries.chunks(SQLITE_FAN_OUT_ROWS) {
            let rows: Vec<(i64, i64, &str, &str, Option<i64>)> = chunk
                .iter()
                .map(|d| {
                    (
                        d.subscriber_id.get(),
                        d.chat_id,
                        d.bot.as_str(),
                        crate::row_by_row::initial_status(d, now).as_str(),
                        d.not_before.map(|t| t.timestamp_millis()),
                    )
                })
                .collect();
            let rows =
                serde_json::to_string(&rows).map_err(|e| sqlx::Error::Encode(Box::new(e)))?;
            let mut inserted = sqlx::query_as::<_, (i64, String)>(INSERT)
                .bind(i64::from(post_id))
                .bind(rows)
                .bind(now)
                .fetch(&mut *tx);
            while let Some((id, status)) = inserted.try_next().await? {
                if status == DeliveryStatus::Pending.as_str() {
                    ready.push(id.into());
                }
            }
        }
        ready.sort_unstable();
        SqlStore::<Self>::finish_fan_out(tx, post_id, now, ready).await
    }

    /// The claims, and the last parts, of a batch (the send stage's hot path; grouped by
    /// [`crate::postgres::in_runs`]) run as one statement each over a JSON array; other updates one by one. One
    /// transaction either way. The `+` before `status` keeps SQLite from walking the status
    /// index (every pending row) instead of looking the batch's ids up.
    async fn apply_delivery_updates(
        store: &SqlStore<Self>,
        updates: &[DeliveryUpdate],
        now: i64,
    ) -> Result<Vec<bool>> {
        use crate::postgres::{ids_in, in_batch_order, in_runs, run_end};
        const CLAIM: &str = "UPDATE deliveries SET status = 'sending', attempts = attempts + 1,
                 updated_at = $1
             WHERE id IN (SELECT value FROM json_each($2)) AND +status = 'pending'
             RETURNING id";
        const LAST_PARTS: &str = "UPDATE deliveries SET parts_sent = deliveries.parts_sent + 1,
                 message_ids = json_insert(deliveries.message_ids, '$[#]', u.message_id),
                 status = 'sent', sent_at = $1, updated_at = $1, error = NULL
             FROM (SELECT json_extract(value, '$[0]') AS id,
                          json_extract(value, '$[1]') AS message_id
                   FROM json_each($2)) AS u
             WHERE deliveries.id = u.id AND +deliveries.status = 'sending'
             RETURNING deliveries.id";
        let (updates, order) = in_runs(updates);
        let updates = updates.as_slice();
        let mut tx = store.write.begin().await?;
        let mut applied = vec![false; updates.len()];
        let mut start = 0;
        while start < updates.len() {
            let (end, sql, arg) = match &updates[start] {
                DeliveryUpdate::Claim { .. } => {
                    let end = run_end(updates, start, |u| {
                        matches!(u, DeliveryUpdate::Claim { .. })
                    });
                    let ids: Vec<String> = ids_in(&updates[start..end])
                        .iter()
                        .map(i64::to_string)
                        .collect();
                    (end, CLAIM, format!("[{}]", ids.join(",")))
                }
                DeliveryUpdate::LastPartSent { .. } => {
                    let end = run_end(updates, start, |u| {
                        matches!(u, DeliveryUpdate::LastPartSent { .. })
                    });
                    let pairs: Vec<String> = updates[start..end]
                        .iter()
                        .filter_map(|u| match u {
                            DeliveryUpdate::LastPartSent { id, message_id } => {
                                Some(format!("[{},{message_id}]", id.get()))
                            }
                            _ => None,
                        })
                        .collect();
                    (end, LAST_PARTS, format!("[{}]", pairs.join(",")))
                }
                single => {
                    applied[start] = SqlStore::<Self>::apply_one(&mut tx, single, now).await?;
                    start += 1;
                    continue;
                }
            };
            let changed: std::collections::HashSet<i64> = sqlx::query_scalar(sql)
                .bind(now)
                .bind(arg)
                .fetch_all(&mut *tx)
                .await?
                .into_iter()
                .collect();
            for (slot, update) in applied[start..end].iter_mut().zip(&updates[start..end]) {
                *slot = changed.contains(&update.id().get());
            }
            start = end;
        }
        tx.commit().await?;
        Ok(in_batch_order(&applied, &order))
    }

    fn get_int(row: &Self::Row, column: &str) -> Result<Option<i64>> {
        Ok(sqlx::Row::try_get(row, column)?)
    }
}
