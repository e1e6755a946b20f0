//! Totals for `jobwire report`, metrics and tests.

use async_trait::async_trait;
use chrono::{DateTime, Utc};

use crate::codec::{clamp_u64, ms};
use crate::sql::{Cols, Dialect, Sql};
use crate::*;

/// Totals for `jobwire report`, metrics and tests.
#[async_trait]
pub trait ReportingStore: Send + Sync {
    /// Classification totals per model and prompt version since `since`.
    async fn classification_totals(
        &self,
        since: DateTime<Utc>,
    ) -> Result<Vec<ClassificationTotals>>;

    async fn pipeline_counts(&self) -> Result<PipelineCounts>;

    /// Every sent delivery, for reports and tests: `(post id, chat id, bot, parts)`.
    async fn sent_deliveries(&self) -> Result<Vec<SentDelivery>>;
}

#[async_trait]
impl<DB: Dialect> ReportingStore for SqlStore<DB> {
    async fn classification_totals(
        &self,
        since: DateTime<Utc>,
    ) -> Result<Vec<ClassificationTotals>> {
        Sql::<DB>::new(
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
        .fetch_each(&self.read, |c| {
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
        .await
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
        // Résumés routed to subscribers share the jobs' statuses; count them apart.
        let resumes = Sql::<DB>::new(
            "SELECT COUNT(*) AS n FROM posts p JOIN classifications c ON c.post_id = p.id
             WHERE p.status IN ('job', 'fanned_out') AND c.kind = 'resume'",
        )
        .fetch_one(&self.read)
        .await?;
        c.resumes = clamp_u64(Cols::<DB>::new(&resumes).int("n")?);
        c.jobs = c.jobs.saturating_sub(c.resumes);
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
                Some(DeliveryStatus::Withheld) => c.deliveries_withheld += n,
                None => {}
            }
        }
        Ok(c)
    }

    async fn sent_deliveries(&self) -> Result<Vec<SentDelivery>> {
        Sql::<DB>::new(
            "SELECT post_id, subscriber_id, chat_id, bot, message_ids FROM deliveries
             WHERE status = 'sent' ORDER BY id",
        )
        .fetch_each(&self.read, |c| {
            Ok(SentDelivery {
                post_id: c.int("post_id")?.into(),
                subscriber_id: c.int("subscriber_id")?.into(),
                chat_id: c.int("chat_id")?,
                bot: c.text("bot")?,
                message_ids: c.json("message_ids")?,
            })
        })
        .await
    }
}
