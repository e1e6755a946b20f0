//! What both dialects' fan-outs share (its start and its end), and delivery status changes
//! one row at a time, for the updates the dialects do not batch.

use crate::codec::ms;
use crate::sql::{Dialect, Sql};
use crate::subscribers::BUMP_SUBSCRIBERS_VERSION;
use crate::*;

/// Whether a new delivery waits for quiet hours (`held`) or goes now (`pending`).
pub(crate) fn initial_status(delivery: &NewDelivery, now: i64) -> DeliveryStatus {
    if delivery.not_before.is_some_and(|t| ms(t) > now) {
        DeliveryStatus::Held
    } else {
        DeliveryStatus::Pending
    }
}

/// Stores (or replaces) a job's rendered parts.
const UPSERT_RENDER: &str = "INSERT INTO job_renders (post_id, parts) VALUES ($1, $2)
     ON CONFLICT (post_id) DO UPDATE SET parts = excluded.parts";

/// A job whose deliveries are written moves on (and only a job: never back from later).
pub(crate) const MARK_FANNED_OUT: &str =
    "UPDATE posts SET status = 'fanned_out', updated_at = $1 WHERE id = $2 AND status = 'job'";

impl<DB: Dialect> SqlStore<DB> {
    /// The start of every fan-out: a transaction on the write connection with the job's
    /// rendered parts stored (each dialect then inserts the deliveries its own way and calls
    /// [`SqlStore::finish_fan_out`]).
    pub(crate) async fn begin_fan_out(
        &self,
        post_id: PostId,
        parts: &[String],
    ) -> Result<sqlx::Transaction<'static, DB>> {
        let mut tx = self.write.begin().await?;
        Sql::<DB>::new(UPSERT_RENDER)
            .int(post_id)
            .json(Some(parts))
            .execute(&mut tx)
            .await?;
        Ok(tx)
    }

    /// The end of every fan-out: the job moves to `fanned_out` (only from `job`, never back
    /// from later) and the transaction commits; `ready` are the deliveries to send now.
    pub(crate) async fn finish_fan_out(
        mut tx: sqlx::Transaction<'static, DB>,
        post_id: PostId,
        now: i64,
        ready: Vec<DeliveryId>,
    ) -> Result<Vec<DeliveryId>> {
        Sql::<DB>::new(MARK_FANNED_OUT)
            .int(now)
            .int(post_id)
            .execute(&mut tx)
            .await?;
        tx.commit().await?;
        Ok(ready)
    }

    /// [`Store::apply_delivery_updates`] with one statement per update, in one transaction.
    pub(crate) async fn apply_each(
        &self,
        updates: &[DeliveryUpdate],
        now: i64,
    ) -> Result<Vec<bool>> {
        let mut tx = self.write.begin().await?;
        let mut applied = Vec::with_capacity(updates.len());
        for update in updates {
            applied.push(Self::apply_one(&mut tx, update, now).await?);
        }
        tx.commit().await?;
        Ok(applied)
    }

    /// Applies one status change; says whether it applied (a `Claim` applies only to a
    /// `pending` delivery, the others only to deliveries still open).
    pub(crate) async fn apply_one(
        conn: &mut DB::Connection,
        update: &DeliveryUpdate,
        now: i64,
    ) -> Result<bool> {
        let changed = match update {
            DeliveryUpdate::Claim { id } => {
                Sql::<DB>::new(
                    "UPDATE deliveries SET status = 'sending', attempts = attempts + 1,
                         updated_at = $1
                     WHERE id = $2 AND status = 'pending'",
                )
                .int(now)
                .int(*id)
                .execute(crate::sql::Exec::Conn(conn))
                .await?
            }
            DeliveryUpdate::PartSent { id, message_id } => {
                Sql::<DB>::new(DB::PART_SENT)
                    .int(*message_id)
                    .int(now)
                    .int(*id)
                    .execute(crate::sql::Exec::Conn(conn))
                    .await?
            }
            DeliveryUpdate::LastPartSent { id, message_id } => {
                Sql::<DB>::new(DB::LAST_PART_SENT)
                    .int(*message_id)
                    .int(now)
                    .int(*id)
                    .execute(crate::sql::Exec::Conn(conn))
                    .await?
            }
            DeliveryUpdate::Sent { id } => {
                Sql::<DB>::new(
                    "UPDATE deliveries SET status = 'sent', sent_at = $1, updated_at = $1,
                         error = NULL
                     WHERE id = $2 AND status = 'sending'",
                )
                .int(now)
                .int(*id)
                .execute(crate::sql::Exec::Conn(conn))
                .await?
            }
            DeliveryUpdate::Retry {
                id,
                at,
                error,
                unknown_outcome,
            } => {
                Sql::<DB>::new(
                    "UPDATE deliveries SET status = 'held', not_before = $1, error = $2,
                         updated_at = $3, resent_after_crash = resent_after_crash + $5
                     WHERE id = $4 AND status IN ('sending', 'pending')",
                )
                .int(ms(*at))
                .text(error.as_str())
                .int(now)
                .int(*id)
                .int(i64::from(*unknown_outcome))
                .execute(crate::sql::Exec::Conn(conn))
                .await?
            }
            DeliveryUpdate::Blocked { id, error, scope } => {
                return match scope.state() {
                    Some(state) => Self::block_bot(conn, *id, error, state, now).await,
                    None => Self::block(conn, *id, error, now).await,
                };
            }
            DeliveryUpdate::Failed { id, error } => {
                Sql::<DB>::new(
                    "UPDATE deliveries SET status = 'failed', error = $1, updated_at = $2
                     WHERE id = $3 AND status IN ('sending', 'pending', 'held')",
                )
                .text(error.as_str())
                .int(now)
                .int(*id)
                .execute(crate::sql::Exec::Conn(conn))
                .await?
            }
        };
        Ok(changed > 0)
    }

    /// One bot cannot reach the subscriber of delivery `id` (`state`: `blocked` or
    /// `not_started`): noted in `bot_blocks` (the fan-out stops choosing that bot for them),
    /// and this delivery and their other unsent ones through that bot are blocked. Their
    /// other bots go on delivering.
    async fn block_bot(
        conn: &mut DB::Connection,
        id: DeliveryId,
        error: &str,
        state: &str,
        now: i64,
    ) -> Result<bool> {
        Sql::<DB>::new(
            "INSERT INTO bot_blocks (subscriber_id, bot, state, error, updated_at)
             SELECT subscriber_id, bot, $1, $2, $3 FROM deliveries WHERE id = $4
             ON CONFLICT (subscriber_id, bot) DO UPDATE SET
                 state = excluded.state, error = excluded.error, updated_at = excluded.updated_at",
        )
        .text(state)
        .text(error)
        .int(now)
        .int(id)
        .execute(crate::sql::Exec::Conn(&mut *conn))
        .await?;
        Sql::<DB>::new(BUMP_SUBSCRIBERS_VERSION)
            .execute(crate::sql::Exec::Conn(&mut *conn))
            .await?;
        Self::block_deliveries(conn, id, error, now, true).await
    }

    /// A 403 on delivery `id` that no bot can get past (a deleted account): the subscriber is
    /// marked blocked (bumping the subscribers version) and every delivery still open for
    /// them is blocked too.
    async fn block(
        conn: &mut DB::Connection,
        id: DeliveryId,
        error: &str,
        now: i64,
    ) -> Result<bool> {
        let newly_blocked = Sql::<DB>::new(
            "UPDATE subscribers SET blocked = TRUE, updated_at = $1
             WHERE id = (SELECT subscriber_id FROM deliveries WHERE id = $2) AND NOT blocked",
        )
        .int(now)
        .int(id)
        .execute(crate::sql::Exec::Conn(&mut *conn))
        .await?;
        if newly_blocked > 0 {
            Sql::<DB>::new(BUMP_SUBSCRIBERS_VERSION)
                .execute(crate::sql::Exec::Conn(&mut *conn))
                .await?;
        }
        Self::block_deliveries(conn, id, error, now, false).await
    }

    /// Blocks delivery `id` and what is still queued for its subscriber (through the same
    /// bot only, with `same_bot`). Deliveries of theirs in flight elsewhere are left to finish.
    async fn block_deliveries(
        conn: &mut DB::Connection,
        id: DeliveryId,
        error: &str,
        now: i64,
        same_bot: bool,
    ) -> Result<bool> {
        let blocked = Sql::<DB>::new(
            "UPDATE deliveries SET status = 'blocked', error = $1, updated_at = $2
             WHERE (id = $3 AND status IN ('pending', 'held', 'sending'))
                OR (subscriber_id = (SELECT subscriber_id FROM deliveries WHERE id = $3)
                    AND ($4 = 0 OR bot = (SELECT bot FROM deliveries WHERE id = $3))
                    AND status IN ('pending', 'held'))",
        )
        .text(error)
        .int(now)
        .int(id)
        .int(i64::from(same_bot))
        .execute(crate::sql::Exec::Conn(conn))
        .await?;
        Ok(blocked > 0)
    }
}
