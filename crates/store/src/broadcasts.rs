//! Broadcasts: an admin's message to many subscribers, one row per recipient, each claimed
//! before its send so that nobody gets the message twice, whatever restarts.

use async_trait::async_trait;
use chrono::{DateTime, Utc};

use crate::codec::{clamp_u64, ms};
use crate::sql::{Cols, Dialect, Sql};
use crate::*;

/// A broadcast's state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BroadcastStatus {
    Running,
    Paused,
    Canceled,
    Done,
}

impl BroadcastStatus {
    pub const ALL: [Self; 4] = [Self::Running, Self::Paused, Self::Canceled, Self::Done];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Running => "running",
            Self::Paused => "paused",
            Self::Canceled => "canceled",
            Self::Done => "done",
        }
    }

    pub fn parse(raw: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|s| s.as_str() == raw)
    }
}

/// What became of one recipient's send.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RecipientOutcome {
    Sent {
        message_id: i64,
    },
    /// The bot cannot write to the chat (blocked, never started, deleted account).
    Blocked {
        error: String,
    },
    /// Telegram refused the message for good.
    Failed {
        error: String,
    },
    /// The call may or may not have reached Telegram: not sent again.
    Unknown {
        error: String,
    },
    /// Not sent (a rate limit): back to `pending`.
    Later,
}

/// Progress of a broadcast, by recipient status.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BroadcastProgress {
    pub pending: u64,
    pub sending: u64,
    pub sent: u64,
    pub failed: u64,
    pub blocked: u64,
    pub unknown: u64,
    /// Sent in the minute before the moment asked about.
    pub sent_last_minute: u64,
}

impl BroadcastProgress {
    pub fn total(&self) -> u64 {
        self.pending + self.sending + self.sent + self.failed + self.blocked + self.unknown
    }

    /// Recipients not yet tried.
    pub fn remaining(&self) -> u64 {
        self.pending + self.sending
    }

    /// Sends per second over the last minute.
    pub fn rate(&self) -> f64 {
        self.sent_last_minute as f64 / 60.0
    }

    /// Seconds until the rest is sent at the last minute's rate (`None` while nothing moves).
    pub fn eta_secs(&self) -> Option<u64> {
        let rate = self.rate();
        (rate > 0.0).then(|| (self.remaining() as f64 / rate).ceil() as u64)
    }
}

/// A stored broadcast with its progress.
#[derive(Debug, Clone, PartialEq)]
pub struct BroadcastRow {
    pub id: BroadcastId,
    pub text: String,
    pub audience: serde_json::Value,
    pub status: BroadcastStatus,
    pub created_at: DateTime<Utc>,
    pub finished_at: Option<DateTime<Utc>>,
    pub progress: BroadcastProgress,
}

#[async_trait]
pub trait BroadcastStore: Send + Sync {
    /// Stores a broadcast (`running`) and its recipients (`(chat id, bot)`, each once) in
    /// one transaction; returns its id.
    async fn create_broadcast(
        &self,
        text: &str,
        audience: &serde_json::Value,
        recipients: &[(i64, String)],
        now: DateTime<Utc>,
    ) -> Result<BroadcastId>;

    /// A broadcast with its progress as of `now`.
    async fn broadcast(&self, id: BroadcastId, now: DateTime<Utc>) -> Result<Option<BroadcastRow>>;

    /// Broadcasts, newest first.
    async fn broadcasts(&self, limit: u32, now: DateTime<Utc>) -> Result<Vec<BroadcastRow>>;

    /// Pauses, resumes or cancels a broadcast; `false` when it is done or canceled already
    /// (or does not exist). Recipients being sent finish; no new one is claimed.
    async fn set_broadcast_status(
        &self,
        id: BroadcastId,
        status: BroadcastStatus,
        now: DateTime<Utc>,
    ) -> Result<bool>;

    /// Ids of the running broadcasts, oldest first.
    async fn running_broadcasts(&self) -> Result<Vec<BroadcastId>>;

    /// Claims up to `limit` pending recipients of a running broadcast (`sending`); returns
    /// `(chat id, bot)` in chat order. Nothing once it is paused or canceled.
    async fn claim_broadcast_recipients(
        &self,
        id: BroadcastId,
        limit: u32,
        now: DateTime<Utc>,
    ) -> Result<Vec<(i64, String)>>;

    /// Records a claimed recipient's outcome.
    async fn finish_broadcast_recipient(
        &self,
        id: BroadcastId,
        chat_id: i64,
        outcome: &RecipientOutcome,
        now: DateTime<Utc>,
    ) -> Result<()>;

    /// Recipients left `sending` since before `stale_before` (their sender died mid-call)
    /// become `unknown`: never sent again. Returns how many.
    async fn abandon_broadcast_sends(
        &self,
        stale_before: DateTime<Utc>,
        now: DateTime<Utc>,
    ) -> Result<u64>;

    /// Marks a running broadcast `done` once no recipient is pending or being sent;
    /// returns whether it did.
    async fn complete_broadcast(&self, id: BroadcastId, now: DateTime<Utc>) -> Result<bool>;
}

impl<DB: Dialect> SqlStore<DB> {
    async fn progress(&self, id: BroadcastId, now: DateTime<Utc>) -> Result<BroadcastProgress> {
        let mut p = BroadcastProgress::default();
        let rows = Sql::<DB>::new(
            "SELECT status, COUNT(*) AS n,
                    COUNT(*) FILTER (WHERE status = 'sent' AND updated_at >= $2) AS recent
             FROM broadcast_recipients WHERE broadcast_id = $1 GROUP BY status",
        )
        .int(id)
        .int(ms(now - chrono::Duration::seconds(60)))
        .fetch_all(&self.read)
        .await?;
        for row in &rows {
            let c = Cols::<DB>::new(row);
            let n = clamp_u64(c.int("n")?);
            match c.text("status")?.as_str() {
                "pending" => p.pending += n,
                "sending" => p.sending += n,
                "sent" => {
                    p.sent += n;
                    p.sent_last_minute += clamp_u64(c.int("recent")?);
                }
                "failed" => p.failed += n,
                "blocked" => p.blocked += n,
                _ => p.unknown += n,
            }
        }
        Ok(p)
    }

    async fn broadcast_row(&self, row: &DB::Row, now: DateTime<Utc>) -> Result<BroadcastRow> {
        let c = Cols::<DB>::new(row);
        let id = BroadcastId(c.id()?);
        Ok(BroadcastRow {
            id,
            text: c.text("text")?,
            audience: c.json("audience")?,
            status: c.word("status", BroadcastStatus::parse)?,
            created_at: c.time("created_at")?,
            finished_at: c.opt_time("finished_at")?,
            progress: self.progress(id, now).await?,
        })
    }
}

#[async_trait]
impl<DB: Dialect> BroadcastStore for SqlStore<DB> {
    async fn create_broadcast(
        &self,
        text: &str,
        audience: &serde_json::Value,
        recipients: &[(i64, String)],
        now: DateTime<Utc>,
    ) -> Result<BroadcastId> {
        let mut tx = self.write.begin().await?;
        let row = Sql::<DB>::new(
            "INSERT INTO broadcasts (text, audience, status, created_at, updated_at)
             VALUES ($1, $2, 'running', $3, $3) RETURNING id",
        )
        .text(text)
        .json(Some(audience))
        .int(ms(now))
        .fetch_one(&mut tx)
        .await?;
        let id = BroadcastId(Cols::<DB>::new(&row).id()?);
        for (chat_id, bot) in recipients {
            Sql::<DB>::new(
                "INSERT INTO broadcast_recipients (broadcast_id, chat_id, bot, status, updated_at)
                 VALUES ($1, $2, $3, 'pending', $4) ON CONFLICT DO NOTHING",
            )
            .int(id)
            .int(*chat_id)
            .text(bot.as_str())
            .int(ms(now))
            .execute(&mut tx)
            .await?;
        }
        tx.commit().await?;
        Ok(id)
    }

    async fn broadcast(&self, id: BroadcastId, now: DateTime<Utc>) -> Result<Option<BroadcastRow>> {
        let row = Sql::<DB>::new("SELECT * FROM broadcasts WHERE id = $1")
            .int(id)
            .fetch_optional(&self.read)
            .await?;
        match row {
            Some(row) => Ok(Some(self.broadcast_row(&row, now).await?)),
            None => Ok(None),
        }
    }

    async fn broadcasts(&self, limit: u32, now: DateTime<Utc>) -> Result<Vec<BroadcastRow>> {
        let rows = Sql::<DB>::new("SELECT * FROM broadcasts ORDER BY id DESC LIMIT $1")
            .int(i64::from(limit))
            .fetch_all(&self.read)
            .await?;
        let mut out = Vec::with_capacity(rows.len());
        for row in &rows {
            out.push(self.broadcast_row(row, now).await?);
        }
        Ok(out)
    }

    async fn set_broadcast_status(
        &self,
        id: BroadcastId,
        status: BroadcastStatus,
        now: DateTime<Utc>,
    ) -> Result<bool> {
        let finished = (status == BroadcastStatus::Canceled).then(|| ms(now));
        let n = Sql::<DB>::new(
            "UPDATE broadcasts SET status = $1, updated_at = $2,
                 finished_at = COALESCE($3, finished_at)
             WHERE id = $4 AND status IN ('running', 'paused')",
        )
        .text(status.as_str())
        .int(ms(now))
        .int(finished)
        .int(id)
        .execute(&self.write)
        .await?;
        Ok(n > 0)
    }

    async fn running_broadcasts(&self) -> Result<Vec<BroadcastId>> {
        Sql::<DB>::new("SELECT id FROM broadcasts WHERE status = 'running' ORDER BY id")
            .ids(&self.read)
            .await
    }

    async fn claim_broadcast_recipients(
        &self,
        id: BroadcastId,
        limit: u32,
        now: DateTime<Utc>,
    ) -> Result<Vec<(i64, String)>> {
        let mut claimed = Sql::<DB>::new(
            "UPDATE broadcast_recipients SET status = 'sending', updated_at = $1
             WHERE broadcast_id = $2 AND status = 'pending'
               AND EXISTS (SELECT 1 FROM broadcasts b WHERE b.id = $2 AND b.status = 'running')
               AND chat_id IN (SELECT chat_id FROM broadcast_recipients
                   WHERE broadcast_id = $2 AND status = 'pending' ORDER BY chat_id LIMIT $3)
             RETURNING chat_id, bot",
        )
        .int(ms(now))
        .int(id)
        .int(i64::from(limit))
        .fetch_each(&self.write, |c| Ok((c.int("chat_id")?, c.text("bot")?)))
        .await?;
        claimed.sort_unstable();
        Ok(claimed)
    }

    async fn finish_broadcast_recipient(
        &self,
        id: BroadcastId,
        chat_id: i64,
        outcome: &RecipientOutcome,
        now: DateTime<Utc>,
    ) -> Result<()> {
        let (status, message_id, error) = match outcome {
            RecipientOutcome::Sent { message_id } => ("sent", Some(*message_id), None),
            RecipientOutcome::Blocked { error } => ("blocked", None, Some(error.as_str())),
            RecipientOutcome::Failed { error } => ("failed", None, Some(error.as_str())),
            RecipientOutcome::Unknown { error } => ("unknown", None, Some(error.as_str())),
            RecipientOutcome::Later => ("pending", None, None),
        };
        Sql::<DB>::new(
            "UPDATE broadcast_recipients SET status = $1, message_id = $2, error = $3,
                 updated_at = $4
             WHERE broadcast_id = $5 AND chat_id = $6 AND status = 'sending'",
        )
        .text(status)
        .int(message_id)
        .text(error)
        .int(ms(now))
        .int(id)
        .int(chat_id)
        .execute(&self.write)
        .await?;
        Ok(())
    }

    async fn abandon_broadcast_sends(
        &self,
        stale_before: DateTime<Utc>,
        now: DateTime<Utc>,
    ) -> Result<u64> {
        Sql::<DB>::new(
            "UPDATE broadcast_recipients SET status = 'unknown', updated_at = $1,
                 error = 'the sender stopped during the call; not sent again'
             WHERE status = 'sending' AND updated_at < $2",
        )
        .int(ms(now))
        .int(ms(stale_before))
        .execute(&self.write)
        .await
    }

    async fn complete_broadcast(&self, id: BroadcastId, now: DateTime<Utc>) -> Result<bool> {
        let n = Sql::<DB>::new(
            "UPDATE broadcasts SET status = 'done', updated_at = $1, finished_at = $1
             WHERE id = $2 AND status = 'running' AND NOT EXISTS (
                 SELECT 1 FROM broadcast_recipients r WHERE r.broadcast_id = $2
                     AND r.status IN ('pending', 'sending'))",
        )
        .int(ms(now))
        .int(id)
        .execute(&self.write)
        .await?;
        Ok(n > 0)
    }
}
