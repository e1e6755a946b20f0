//! Work that stopped flowing: rows stuck in a status whose queue message was lost (a publish
//! that failed after its commit), and messages that failed for good (dead letters).

use async_trait::async_trait;
use chrono::{DateTime, Utc};

use crate::codec::ms;
use crate::sql::{Cols, Dialect, Sql};
use crate::*;

/// A message a consumer gave up on, to keep.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewDeadLetter {
    /// The queue it came from (`posts.ready`, `deliveries.ready`, …).
    pub topic: String,
    /// The message as it was published (JSON).
    pub payload: String,
    /// How many times it was handed out.
    pub attempts: u32,
    /// Why it failed for good.
    pub reason: String,
}

/// A kept dead letter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeadLetterRow {
    pub id: DeadLetterId,
    pub topic: String,
    pub payload: String,
    pub attempts: u32,
    pub reason: String,
    pub created_at: DateTime<Utc>,
}

/// Rows taken back by [`RecoveryStore::take_stuck`]: their messages are to be published
/// again.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StuckWork {
    /// Posts `queued` for classification.
    pub queued: Vec<PostId>,
    /// Posts classified as jobs, waiting for fan-out.
    pub jobs: Vec<PostId>,
    /// Deliveries `pending` (and due) for the send stage.
    pub deliveries: Vec<DeliveryId>,
}

impl StuckWork {
    pub fn len(&self) -> usize {
        self.queued.len() + self.jobs.len() + self.deliveries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Work that stopped flowing. See the [module docs](self).
#[async_trait]
pub trait RecoveryStore: Send + Sync {
    /// Rows that have sat in `queued`, `job` or (due) `pending` since before `stale_before`:
    /// their message was most likely lost between the commit and the publish. Each returned
    /// row is marked as touched at `now`, so it is returned again only after another
    /// deadline, and by one caller only when several schedulers ask at once. At most
    /// `limit` of each kind.
    async fn take_stuck(
        &self,
        stale_before: DateTime<Utc>,
        now: DateTime<Utc>,
        limit: u32,
    ) -> Result<StuckWork>;

    /// Keeps a message that failed for good.
    async fn add_dead_letter(
        &self,
        letter: &NewDeadLetter,
        now: DateTime<Utc>,
    ) -> Result<DeadLetterId>;

    /// The latest dead letters, newest first.
    async fn dead_letters(&self, limit: u32) -> Result<Vec<DeadLetterRow>>;

    /// How many dead letters were kept since `since`.
    async fn dead_letter_count(&self, since: DateTime<Utc>) -> Result<u64>;
}

#[async_trait]
impl<DB: Dialect> RecoveryStore for SqlStore<DB> {
    async fn take_stuck(
        &self,
        stale_before: DateTime<Utc>,
        now: DateTime<Utc>,
        limit: u32,
    ) -> Result<StuckWork> {
        // The inner SELECT picks at most `limit` rows; the outer UPDATE re-checks the age, so
        // a concurrent caller that waited for these rows finds them touched and skips them.
        const POSTS: &str = "UPDATE posts SET updated_at = $1
             WHERE status = $2 AND updated_at < $3 AND id IN (
                 SELECT id FROM posts WHERE status = $2 AND updated_at < $3
                 ORDER BY id LIMIT $4)
             RETURNING id";
        const DELIVERIES: &str = "UPDATE deliveries SET updated_at = $1
             WHERE status = 'pending' AND updated_at < $2
               AND (not_before IS NULL OR not_before <= $1) AND id IN (
                 SELECT id FROM deliveries WHERE status = 'pending' AND updated_at < $2
                   AND (not_before IS NULL OR not_before <= $1)
                 ORDER BY id LIMIT $3)
             RETURNING id";
        let (now, stale) = (ms(now), ms(stale_before));
        let posts = |status: &'static str| {
            Sql::<DB>::new(POSTS)
                .int(now)
                .text(status)
                .int(stale)
                .int(i64::from(limit))
        };
        let mut work = StuckWork {
            queued: posts("queued").ids(&self.write).await?,
            jobs: posts("job").ids(&self.write).await?,
            deliveries: Sql::<DB>::new(DELIVERIES)
                .int(now)
                .int(stale)
                .int(i64::from(limit))
                .ids(&self.write)
                .await?,
        };
        work.queued.sort_unstable();
        work.jobs.sort_unstable();
        work.deliveries.sort_unstable();
        Ok(work)
    }

    async fn add_dead_letter(
        &self,
        letter: &NewDeadLetter,
        now: DateTime<Utc>,
    ) -> Result<DeadLetterId> {
        let row = Sql::<DB>::new(
            "INSERT INTO dead_letters (topic, payload, attempts, reason, created_at)
             VALUES ($1, $2, $3, $4, $5) RETURNING id",
        )
        .text(letter.topic.as_str())
        .text(letter.payload.as_str())
        .int(i64::from(letter.attempts))
        .text(letter.reason.as_str())
        .int(ms(now))
        .fetch_one(&self.write)
        .await?;
        Ok(DeadLetterId(Cols::<DB>::new(&row).id()?))
    }

    async fn dead_letters(&self, limit: u32) -> Result<Vec<DeadLetterRow>> {
        Sql::<DB>::new("SELECT * FROM dead_letters ORDER BY id DESC LIMIT $1")
            .int(i64::from(limit))
            .fetch_each(&self.read, |c| {
                Ok(DeadLetterRow {
                    id: DeadLetterId(c.id()?),
                    topic: c.text("topic")?,
                    payload: c.text("payload")?,
                    attempts: c.count("attempts")?,
                    reason: c.text("reason")?,
                    created_at: c.time("created_at")?,
                })
            })
            .await
    }

    async fn dead_letter_count(&self, since: DateTime<Utc>) -> Result<u64> {
        let row = Sql::<DB>::new("SELECT COUNT(*) AS n FROM dead_letters WHERE created_at >= $1")
            .int(ms(since))
            .fetch_one(&self.read)
            .await?;
        Ok(u64::try_from(Cols::<DB>::new(&row).int("n")?).unwrap_or(0))
    }
}
