//! The PostgreSQL store of the distributed mode: its connection set-up and its [`Dialect`].
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
//!   statement over an array of ids instead of one round trip each; fan-out inserts every
//!   delivery of a job in one statement.
//!
//! Schema: `migrations/postgres` (BIGSERIAL ids, BIGINT millisecond timestamps, BOOLEAN
//! flags, JSONB lists), the same columns and meaning as the SQLite schema.

use std::collections::HashSet;
use std::str::FromStr;
use std::time::Duration;

use async_trait::async_trait;
use sqlx::postgres::{PgConnectOptions, PgPoolOptions, PgRow};
use sqlx::{Column, Postgres, Row, TypeInfo};

use crate::row_by_row::initial_status;
use crate::sql::{Dialect, sqlx_values};
use crate::*;

use crate::migrations::POSTGRES_MIGRATOR as MIGRATOR;

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
pub type PostgresStore = SqlStore<Postgres>;

impl SqlStore<Postgres> {
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
        Ok(Self {
            read: pool.clone(),
            write: pool,
            target,
        })
    }

    /// Closes every connection of the pool; later calls fail.
    pub async fn close(&self) {
        self.write.close().await;
    }

    /// One attempt of [`Store::apply_delivery_updates`].
    async fn apply_delivery_updates_once(
        &self,
        updates: &[DeliveryUpdate],
        now: i64,
    ) -> Result<Vec<bool>> {
        // Every statement below names its rows by id (at most a batch of them): the plan
        // must look them up by primary key whatever the table's statistics say. On a table
        // the planner has not analyzed since it grew (a fresh installation's first large
        // fan-out) it otherwise picks a sequential scan filtered by the batch's ids, 5-60 ms
        // per batch at 50,000 deliveries. `SET LOCAL` ends with the transaction and travels
        // with its `BEGIN` (no extra round trip).
        let (updates, order) = in_runs(updates);
        let updates = updates.as_slice();
        let mut tx = self
            .write
            .begin_with("BEGIN; SET LOCAL enable_seqscan = off; SET LOCAL enable_bitmapscan = off")
            .await?;
        // Lock every named delivery in id order first: two batches naming the same rows
        // then queue behind each other instead of locking them in opposite orders. (Left
        // out, `bench distributed-delivery` measured no difference: kept for the rare
        // overlap, e.g. a message handed to two senders.)
        let mut named: Vec<i64> = updates.iter().map(|u| i64::from(u.id())).collect();
        named.sort_unstable();
        named.dedup();
        sqlx::query("SELECT id FROM deliveries WHERE id = ANY($1) ORDER BY id FOR UPDATE")
            .bind(&named)
            .execute(&mut *tx)
            .await?;

        // The runs below find their rows by id (`status || ''` cannot use the status
        // indexes): with the status as an index condition the planner, when the table's
        // statistics say few rows are `pending` (before autovacuum saw a large fan-out),
        // walks every pending row and filters them by the batch's ids, 5-30 ms per batch at
        // 50,000 pending deliveries.
        let mut applied = vec![false; updates.len()];
        let mut start = 0;
        while start < updates.len() {
            let (end, rows) = match &updates[start] {
                DeliveryUpdate::Claim { .. } => {
                    let end = run_end(updates, start, |u| {
                        matches!(u, DeliveryUpdate::Claim { .. })
                    });
                    let rows = sqlx::query(
                        "UPDATE deliveries SET status = 'sending', attempts = attempts + 1,
                             updated_at = $1
                         WHERE id = ANY($2) AND status || '' = 'pending' RETURNING id",
                    )
                    .bind(now)
                    .bind(ids_in(&updates[start..end]))
                    .fetch_all(&mut *tx)
                    .await?;
                    (end, rows)
                }
                first @ (DeliveryUpdate::PartSent { .. } | DeliveryUpdate::LastPartSent { .. }) => {
                    // A run of one kind: a part, or the last part (which also closes the row).
                    let last = matches!(first, DeliveryUpdate::LastPartSent { .. });
                    let end = run_end(updates, start, |u| match u {
                        DeliveryUpdate::PartSent { .. } => !last,
                        DeliveryUpdate::LastPartSent { .. } => last,
                        _ => false,
                    });
                    // Each row's message id is looked up in the array by its id's place,
                    // not joined from `unnest(ids, message_ids)`: an UPDATE joined to a
                    // function scan carries a copy of that scan's whole row per updated row
                    // (for re-checks under concurrency), which was a tenth of PostgreSQL's
                    // CPU in `bench distributed-delivery`.
                    let sql = if last {
                        "UPDATE deliveries SET parts_sent = parts_sent + 1,
                             message_ids = message_ids || jsonb_build_array(
                                 ($3::BIGINT[])[array_position($2::BIGINT[], id)]),
                             status = 'sent', sent_at = $1, updated_at = $1, error = NULL
                         WHERE id = ANY($2) AND status || '' = 'sending'
                         RETURNING id"
                    } else {
                        "UPDATE deliveries SET parts_sent = parts_sent + 1,
                             message_ids = message_ids || jsonb_build_array(
                                 ($3::BIGINT[])[array_position($2::BIGINT[], id)]),
                             updated_at = $1
                         WHERE id = ANY($2) AND status || '' = 'sending'
                         RETURNING id"
                    };
                    let rows = sqlx::query(sql)
                        .bind(now)
                        .bind(ids_in(&updates[start..end]))
                        .bind(message_ids_in(&updates[start..end]))
                        .fetch_all(&mut *tx)
                        .await?;
                    (end, rows)
                }
                DeliveryUpdate::Sent { .. } => {
                    let end = run_end(updates, start, |u| matches!(u, DeliveryUpdate::Sent { .. }));
                    let rows = sqlx::query(
                        "UPDATE deliveries SET status = 'sent', sent_at = $1, updated_at = $1,
                             error = NULL
                         WHERE id = ANY($2) AND status || '' = 'sending' RETURNING id",
                    )
                    .bind(now)
                    .bind(ids_in(&updates[start..end]))
                    .fetch_all(&mut *tx)
                    .await?;
                    (end, rows)
                }
                single => {
                    applied[start] = Self::apply_one(&mut tx, single, now).await?;
                    start += 1;
                    continue;
                }
            };
            let changed: HashSet<i64> = rows
                .iter()
                .map(|r| r.try_get::<i64, _>(0))
                .collect::<Result<_, _>>()?;
            for (slot, update) in applied[start..end].iter_mut().zip(&updates[start..end]) {
                *slot = changed.contains(&i64::from(update.id()));
            }
            start = end;
        }
        tx.commit().await?;
        Ok(in_batch_order(&applied, &order))
    }
}

/// `url` without the password of its user info (`scheme://user:password@host`), for error
/// messages and logs.
pub(crate) fn redact_url(url: &str) -> String {
    jobwire_core::secret::redact_url(url)
}

/// Deadlocks and serialization failures abort a transaction that would succeed if run again.
fn is_transient(error: &StoreError) -> bool {
    match error {
        StoreError::Database(sqlx::Error::Database(db)) => {
            matches!(db.code().as_deref(), Some("40P01" | "40001"))
        }
        _ => false,
    }
}

/// The ids the updates name, in order.
pub(crate) fn ids_in(updates: &[DeliveryUpdate]) -> Vec<i64> {
    updates.iter().map(|u| i64::from(u.id())).collect()
}

/// The Telegram message ids of a run of part-sent updates (last parts included).
fn message_ids_in(updates: &[DeliveryUpdate]) -> Vec<i64> {
    updates
        .iter()
        .filter_map(|u| match u {
            DeliveryUpdate::PartSent { message_id, .. }
            | DeliveryUpdate::LastPartSent { message_id, .. } => Some(*message_id),
            _ => None,
        })
        .collect()
}

/// A batch's updates reordered into as few runs as it allows, with where each came from
/// (`order[i]` is the place in `updates` of the result's `i`th): the claims, then the part
/// and last-part marks, then the `sent` ones, then the rest, each kind in id order. Updates
/// of one delivery keep their order (the second update of a delivery comes in a later
/// layer of kinds). The send stage's concurrent deliveries hand in claims and last parts
/// interleaved: in `bench delivery` a batch of about 500 updates ran as 5.8 statements on
/// average as it came and as 1.8 grouped; each statement is a round trip to a database on
/// another machine. Reordering different deliveries' updates is safe: they arrived from
/// independent tasks, in no order anyone relies on, and none waits for another's answer
/// before its own commit.
pub(crate) fn in_runs(updates: &[DeliveryUpdate]) -> (Vec<DeliveryUpdate>, Vec<usize>) {
    fn kind(update: &DeliveryUpdate) -> u8 {
        match update {
            DeliveryUpdate::Claim { .. } => 0,
            DeliveryUpdate::PartSent { .. } => 1,
            DeliveryUpdate::LastPartSent { .. } => 2,
            DeliveryUpdate::Sent { .. } => 3,
            _ => 4,
        }
    }
    let mut seen: std::collections::HashMap<DeliveryId, u32> =
        std::collections::HashMap::with_capacity(updates.len());
    let mut keys: Vec<(u32, u8, i64, usize)> = updates
        .iter()
        .enumerate()
        .map(|(i, u)| {
            let layer = seen.entry(u.id()).or_insert(0);
            let key = (*layer, kind(u), i64::from(u.id()), i);
            *layer += 1;
            key
        })
        .collect();
    keys.sort_unstable();
    let order: Vec<usize> = keys.iter().map(|k| k.3).collect();
    (order.iter().map(|&i| updates[i].clone()).collect(), order)
}

/// `applied` of the updates as [`in_runs`] reordered them, back in the batch's order.
pub(crate) fn in_batch_order(applied: &[bool], order: &[usize]) -> Vec<bool> {
    let mut out = vec![false; applied.len()];
    for (&ok, &i) in applied.iter().zip(order) {
        out[i] = ok;
    }
    out
}

/// The end (exclusive) of the run of updates starting at `start` that `same_kind` accepts and
/// that name each delivery at most once, so one set-based statement can apply them all.
pub(crate) fn run_end(
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

#[async_trait]
impl Dialect for Postgres {
    const PART_SENT: &'static str = "UPDATE deliveries SET parts_sent = parts_sent + 1,
             message_ids = message_ids || jsonb_build_array($1::BIGINT), updated_at = $2
         WHERE id = $3 AND status = 'sending'";

    const LAST_PART_SENT: &'static str = "UPDATE deliveries SET parts_sent = parts_sent + 1,
             message_ids = message_ids || jsonb_build_array($1::BIGINT), status = 'sent',
             sent_at = $2, updated_at = $2, error = NULL
         WHERE id = $3 AND status = 'sending'";

    // The CTE runs once and locks what it picks; rows another caller holds are skipped,
    // rows it released meanwhile fail the re-checked status.
    const RELEASE_WAITING_POSTS: &'static str = "WITH picked AS (
             SELECT id FROM posts WHERE status = 'waiting' AND next_attempt_at <= $1
             ORDER BY next_attempt_at, id LIMIT $2 FOR UPDATE SKIP LOCKED)
         UPDATE posts p SET status = 'queued', updated_at = $1
         FROM picked WHERE p.id = picked.id
         RETURNING p.id";

    const RELEASE_HELD_DELIVERIES: &'static str = "WITH picked AS (
             SELECT id FROM deliveries WHERE status = 'held' AND not_before <= $1
               AND NOT EXISTS (SELECT 1 FROM posts p WHERE p.id = deliveries.post_id
                   AND p.withheld_at IS NOT NULL)
             ORDER BY not_before, id LIMIT $2 FOR UPDATE SKIP LOCKED)
         UPDATE deliveries d SET status = 'pending', updated_at = $1
         FROM picked WHERE d.id = picked.id
         RETURNING d.id";

    // Through the subscriber: deliveries are indexed by subscriber, not by chat.
    const POST_OF_MESSAGE: &'static str = "SELECT d.post_id FROM deliveries d
         WHERE d.subscriber_id IN (SELECT id FROM subscribers WHERE chat_id = $1)
           AND d.chat_id = $1 AND d.bot = $2 AND d.status = 'sent'
           AND d.message_ids @> jsonb_build_array($3::bigint)
         ORDER BY d.id DESC LIMIT 1";

    const DELIVERIES_BY_ID: &'static str = "SELECT d.*, l.lang FROM deliveries d
         LEFT JOIN chat_languages l ON l.chat_id = d.chat_id
         WHERE d.id = ANY(ARRAY(SELECT jsonb_array_elements_text($1)::BIGINT))";

    sqlx_values!();

    /// PostgreSQL's counters (`attempts`, `parts_sent`) are `INTEGER`, the rest `BIGINT`.
    fn get_int(row: &PgRow, column: &str) -> Result<Option<i64>> {
        let is_int4 = row.try_column(column)?.type_info().name() == "INT4";
        Ok(if is_int4 {
            row.try_get::<Option<i32>, _>(column)?.map(i64::from)
        } else {
            row.try_get(column)?
        })
    }

    async fn fan_out(
        store: &SqlStore<Self>,
        post_id: PostId,
        parts: &[String],
        deliveries: &[NewDelivery],
        now: i64,
    ) -> Result<Vec<DeliveryId>> {
        let mut subscriber_ids = Vec::with_capacity(deliveries.len());
        let mut chat_ids = Vec::with_capacity(deliveries.len());
        let mut bots = Vec::with_capacity(deliveries.len());
        let mut statuses = Vec::with_capacity(deliveries.len());
        let mut not_before = Vec::with_capacity(deliveries.len());
        for d in deliveries {
            subscriber_ids.push(d.subscriber_id.get());
            chat_ids.push(d.chat_id);
            bots.push(d.bot.as_str());
            statuses.push(initial_status(d, now).as_str());
            not_before.push(d.not_before.map(|t| t.timestamp_millis()));
        }
        let mut tx = store.begin_fan_out(post_id, parts).await?;
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
        .bind(i64::from(post_id))
        .bind(&subscriber_ids)
        .bind(&chat_ids)
        .bind(&bots)
        .bind(&statuses)
        .bind(&not_before)
        .bind(now)
        .fetch_all(&mut *tx)
        .await?;
        let mut ready = Vec::new();
        for row in &rows {
            let status: String = row.try_get("status")?;
            if status == DeliveryStatus::Pending.as_str() {
                ready.push(row.try_get::<i64, _>("id")?.into());
            }
        }
        ready.sort_unstable();
        SqlStore::<Self>::finish_fan_out(tx, post_id, now, ready).await
    }

    async fn apply_delivery_updates(
        store: &SqlStore<Self>,
        updates: &[DeliveryUpdate],
        now: i64,
    ) -> Result<Vec<bool>> {
        let mut attempt = 1;
        loop {
            match store.apply_delivery_updates_once(updates, now).await {
                Err(e) if attempt < TRANSACTION_ATTEMPTS && is_transient(&e) => {
                    tracing::debug!(error = %e, attempt, "delivery updates conflicted; retrying");
                    attempt += 1;
                }
                other => return other,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claim(id: i64) -> DeliveryUpdate {
        DeliveryUpdate::Claim { id: id.into() }
    }

    fn last(id: i64) -> DeliveryUpdate {
        DeliveryUpdate::LastPartSent {
            id: id.into(),
            message_id: id * 10,
        }
    }

    fn failed(id: i64) -> DeliveryUpdate {
        DeliveryUpdate::Failed {
            id: id.into(),
            error: "no".into(),
        }
    }

    /// How many statements the run-by-run appliers make of `updates`.
    fn runs(updates: &[DeliveryUpdate]) -> usize {
        let mut start = 0;
        let mut count = 0;
        while start < updates.len() {
            let kind = std::mem::discriminant(&updates[start]);
            start = run_end(updates, start, |u| std::mem::discriminant(u) == kind);
            count += 1;
        }
        count
    }

    #[test]
    fn interleaved_claims_and_last_parts_become_two_runs_and_answers_keep_their_places() {
        let batch = vec![claim(5), last(2), claim(9), failed(7), last(1), claim(3)];
        assert_eq!(runs(&batch), 6);
        let (grouped, order) = in_runs(&batch);
        assert_eq!(
            grouped,
            vec![claim(3), claim(5), claim(9), last(1), last(2), failed(7)]
        );
        assert_eq!(runs(&grouped), 3);
        // Each answer goes back to the update it answers.
        let applied: Vec<bool> = grouped.iter().map(|u| u.id().get() % 2 == 1).collect();
        let back = in_batch_order(&applied, &order);
        let expected: Vec<bool> = batch.iter().map(|u| u.id().get() % 2 == 1).collect();
        assert_eq!(back, expected);
    }

    #[test]
    fn two_updates_of_one_delivery_keep_their_order() {
        // A claim and a failure of delivery 4 (a redelivered message's second handler):
        // the claim stays first, whatever the kinds' order.
        let batch = vec![failed(4), claim(6), claim(4)];
        let (grouped, _) = in_runs(&batch);
        assert_eq!(grouped, vec![claim(6), failed(4), claim(4)]);
    }
}
