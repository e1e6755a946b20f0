//! Posts: what the sources produced, their status through the pipeline, classification and duplicates.

use async_trait::async_trait;
use chrono::{DateTime, Utc};

use crate::codec::{self, ms};
use crate::sql::{Cols, Dialect, Sql};
use crate::*;

/// A post with its channel's handle and title.
const SELECT_POST: &str = "SELECT p.*, c.handle AS channel_handle, c.title AS channel_title
     FROM posts p JOIN channels c ON c.id = p.channel_id WHERE p.id = $1";

/// Posts: what the sources produced, their status through the pipeline, classification and duplicates.
#[async_trait]
pub trait PostStore: Send + Sync {
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

    /// Records a classifier's verdict and moves the post to `job` (a job, or a résumé with
    /// categories: both are fanned out) or `not_job`, atomically.
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

    async fn posts_in_status(&self, status: PostStatus, limit: u32) -> Result<Vec<PostId>> {
        self.posts_in_status_after(status, None, limit).await
    }

    /// The first `limit` posts in `status` with an id above `after`, by id: one page of a
    /// walk over a status that may hold millions of rows.
    async fn posts_in_status_after(
        &self,
        status: PostStatus,
        after: Option<PostId>,
        limit: u32,
    ) -> Result<Vec<PostId>>;

    /// The earlier post a near-duplicate repeats.
    async fn duplicate_of(&self, id: PostId) -> Result<Option<PostId>>;

    /// Fingerprints of posts posted since `since` (oldest first): the duplicate window.
    async fn recent_fingerprints(&self, since: DateTime<Utc>) -> Result<Vec<RecentFingerprint>>;
}

#[async_trait]
impl<DB: Dialect> PostStore for SqlStore<DB> {
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
        // A résumé with categories is deliverable too (to the subscribers who asked for
        // résumés): it goes through fan-out like a job; its classification's kind tells
        // them apart.
        let mut tx = self.write.begin().await?;
        // An employer's direct placement goes to the categories paid for, and only as a
        // vacancy: the classifier decides whether it is one.
        let placement = Sql::<DB>::new("SELECT categories FROM placements WHERE post_id = $1")
            .int(id)
            .fetch_optional(&mut tx)
            .await?;
        let mut record = std::borrow::Cow::Borrowed(record);
        if let Some(row) = placement {
            let paid: Vec<String> = Cols::<DB>::new(&row).json("categories")?;
            let r = record.to_mut();
            r.categories = if r.is_job {
                codec::known_categories(id.get(), paid)
            } else {
                Vec::new()
            };
        }
        let record = record.as_ref();
        let deliverable = record.is_job
            || (record.kind == jobwire_core::PostKind::Resume && !record.categories.is_empty());
        let status = if deliverable {
            PostStatus::Job
        } else {
            PostStatus::NotJob
        };
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
        Sql::<DB>::new(DB::RELEASE_WAITING_POSTS)
            .int(ms(now))
            .int(i64::from(limit))
            .ids(&self.write)
            .await
    }

    async fn posts_in_status_after(
        &self,
        status: PostStatus,
        after: Option<PostId>,
        limit: u32,
    ) -> Result<Vec<PostId>> {
        Sql::<DB>::new("SELECT id FROM posts WHERE status = $1 AND id > $2 ORDER BY id LIMIT $3")
            .text(status.as_str())
            .int(after.map_or(0, PostId::get))
            .int(i64::from(limit))
            .ids(&self.read)
            .await
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
        Sql::<DB>::new(
            "SELECT id, posted_at, fingerprint FROM posts
             WHERE fingerprint IS NOT NULL AND posted_at >= $1 ORDER BY posted_at, id",
        )
        .int(ms(since))
        .fetch_each(&self.read, |c| {
            Ok(RecentFingerprint {
                id: c.id()?.into(),
                posted_at: c.time("posted_at")?,
                fingerprint: c.text("fingerprint")?,
            })
        })
        .await
    }
}

impl<DB: Dialect> SqlStore<DB> {
    /// A post's status as the writer sees it.
    async fn post_status(&self, id: PostId) -> Result<Option<PostStatus>> {
        let row = Sql::<DB>::new("SELECT status FROM posts WHERE id = $1")
            .int(id)
            .fetch_optional(&self.write)
            .await?;
        row.map(|row| Cols::<DB>::new(&row).word("status", PostStatus::parse))
            .transpose()
    }
}
