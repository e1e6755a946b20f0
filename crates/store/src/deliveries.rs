//! Fan-out and delivery: one row per (job, subscriber), its status and Telegram message ids.

use async_trait::async_trait;
use chrono::{DateTime, Utc};

use crate::codec::{self, clamp_u64, ms};
use crate::sql::{Cols, Dialect, Sql};
use crate::*;

/// A chat a bot wrote to lately ([`DeliveryStore::recent_sends`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecentSend {
    pub bot: String,
    pub chat_id: i64,
    /// The latest status change of a sent or sending delivery to the chat.
    pub at: DateTime<Utc>,
    /// A delivery to the chat is `sending`: a part may have gone out after `at`.
    pub in_flight: bool,
}

/// Fan-out and delivery: one row per (job, subscriber), its status and Telegram message ids.
#[async_trait]
pub trait DeliveryStore: Send + Sync {
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

    /// Several deliveries in one read (those that exist, in any order): the send stage reads
    /// the rows of a batch of ready messages at once.
    async fn deliveries(&self, ids: &[DeliveryId]) -> Result<Vec<DeliveryRow>>;

    /// Every delivery of a job, by id (a post's trace: who got it, who did not and why).
    async fn deliveries_of_post(&self, post_id: PostId) -> Result<Vec<DeliveryRow>>;

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
    ) -> Result<Vec<DeliveryId>> {
        self.deliveries_in_status_after(status, None, limit).await
    }

    /// The first `limit` deliveries in `status` with an id above `after`, by id (one page).
    async fn deliveries_in_status_after(
        &self,
        status: DeliveryStatus,
        after: Option<DeliveryId>,
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

    /// The chats each bot sent a card part to since `since`, with the latest moment one was
    /// recorded, and whether a send to the chat may be in flight (a delivery `sending`: its
    /// part may have gone out since). A sender starting up waits that chat's interval from
    /// then, so a restart does not forget the last second's sends.
    async fn recent_sends(&self, since: DateTime<Utc>) -> Result<Vec<RecentSend>>;

    /// How many deliveries a chat received since each of `since` (one count per moment).
    async fn sent_to_chat_since(&self, chat_id: i64, since: &[DateTime<Utc>]) -> Result<Vec<u64>>;

    /// The post a bot's message in a chat delivered (a subscriber replied `/wrong` to it).
    async fn post_of_message(
        &self,
        bot: &str,
        chat_id: i64,
        message_id: i64,
    ) -> Result<Option<PostId>>;
}

#[async_trait]
impl<DB: Dialect> DeliveryStore for SqlStore<DB> {
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
        const SQL: &str = "SELECT d.*, l.lang FROM deliveries d
                           LEFT JOIN chat_languages l ON l.chat_id = d.chat_id WHERE d.id = $1";
        self.one(SQL, id, codec::delivery_row::<DB>).await
    }

    async fn deliveries(&self, ids: &[DeliveryId]) -> Result<Vec<DeliveryRow>> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let ids: Vec<i64> = ids.iter().map(|id| id.get()).collect();
        let rows = Sql::<DB>::new(DB::DELIVERIES_BY_ID)
            .json(Some(&ids))
            .fetch_all(&self.read)
            .await?;
        rows.iter().map(codec::delivery_row::<DB>).collect()
    }

    async fn deliveries_of_post(&self, post_id: PostId) -> Result<Vec<DeliveryRow>> {
        let rows = Sql::<DB>::new(
            "SELECT d.*, l.lang FROM deliveries d
             LEFT JOIN chat_languages l ON l.chat_id = d.chat_id
             WHERE d.post_id = $1 ORDER BY d.id",
        )
        .int(post_id)
        .fetch_all(&self.read)
        .await?;
        rows.iter().map(codec::delivery_row::<DB>).collect()
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
        Sql::<DB>::new(DB::RELEASE_HELD_DELIVERIES)
            .int(ms(now))
            .int(i64::from(limit))
            .ids(&self.write)
            .await
    }

    async fn deliveries_in_status_after(
        &self,
        status: DeliveryStatus,
        after: Option<DeliveryId>,
        limit: u32,
    ) -> Result<Vec<DeliveryId>> {
        const SQL: &str =
            "SELECT id FROM deliveries WHERE status = $1 AND id > $2 ORDER BY id LIMIT $3";
        Sql::<DB>::new(SQL)
            .text(status.as_str())
            .int(after.map_or(0, DeliveryId::get))
            .int(i64::from(limit))
            .ids(&self.read)
            .await
    }

    async fn recover_interrupted_deliveries(
        &self,
        stale_before: DateTime<Utc>,
        now: DateTime<Utc>,
    ) -> Result<Vec<DeliveryId>> {
        // A concurrent caller waits for the rows this one changes, re-checks them, finds them
        // `pending` and leaves them: each row is returned once.
        let mut ids: Vec<DeliveryId> = Sql::<DB>::new(
            "UPDATE deliveries SET status = 'pending', resent_after_crash = resent_after_crash + 1,
                 updated_at = $1
             WHERE status = 'sending' AND updated_at < $2 RETURNING id",
        )
        .int(ms(now))
        .int(ms(stale_before))
        .ids(&self.write)
        .await?;
        ids.sort_unstable();
        Ok(ids)
    }

    async fn recent_sends(&self, since: DateTime<Utc>) -> Result<Vec<RecentSend>> {
        // Through `deliveries_status_updated` (status, updated_at): a few rows per chat.
        Sql::<DB>::new(
            "SELECT bot, chat_id, MAX(updated_at) AS at,
                 MAX(CASE WHEN status = 'sending' THEN 1 ELSE 0 END) AS in_flight
             FROM deliveries
             WHERE status IN ('sent', 'sending') AND updated_at >= $1
             GROUP BY bot, chat_id",
        )
        .int(ms(since))
        .fetch_each(&self.read, |c| {
            Ok(RecentSend {
                bot: c.text("bot")?,
                chat_id: c.int("chat_id")?,
                at: c.time("at")?,
                in_flight: c.int("in_flight")? != 0,
            })
        })
        .await
    }

    async fn sent_to_chat_since(&self, chat_id: i64, since: &[DateTime<Utc>]) -> Result<Vec<u64>> {
        let mut counts = Vec::with_capacity(since.len());
        for at in since {
            let row = Sql::<DB>::new(
                "SELECT COUNT(*) AS n FROM deliveries d JOIN subscribers s ON s.id = d.subscriber_id
                 WHERE s.chat_id = $1 AND d.status = 'sent' AND d.sent_at >= $2",
            )
            .int(chat_id)
            .int(ms(*at))
            .fetch_one(&self.read)
            .await?;
            counts.push(clamp_u64(Cols::<DB>::new(&row).int("n")?));
        }
        Ok(counts)
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
