//! What the classifier learns from: labeled examples and subscribers' reports.

use async_trait::async_trait;
use chrono::{DateTime, Utc};

use crate::codec::{self, ms};
use crate::sql::{Cols, Dialect, Sql};
use crate::*;

/// What the classifier learns from: labeled examples and subscribers' reports.
#[async_trait]
pub trait LearningStore: Send + Sync {
    /// Stores a labeled example; one per `(post, source)`: a new label of the same post by
    /// the same source replaces the old one. Returns its id.
    async fn add_example(&self, example: &NewExample, now: DateTime<Utc>) -> Result<ExampleId>;

    /// Examples with an id above `after_id`, oldest first.
    async fn examples(&self, after_id: ExampleId, limit: u32) -> Result<Vec<ExampleRow>>;

    /// Files a subscriber's report (pending until an admin decides).
    async fn insert_report(&self, report: &NewReport, now: DateTime<Utc>) -> Result<ReportId>;

    /// Reports, newest first, optionally only those in one status.
    async fn reports(&self, status: Option<ReportStatus>, limit: u32) -> Result<Vec<ReportRow>>;

    async fn report(&self, id: ReportId) -> Result<Option<ReportRow>>;

    /// An admin's decision on a pending report: `Some(label)` accepts it and stores the
    /// label as an example (source `report`) in the same transaction; `None` rejects it,
    /// and when that leaves a withheld post with no pending complaint, releases the post
    /// (its withheld deliveries are sent). An accepted complaint keeps the post withheld.
    /// Returns `false` when the report does not exist or was decided already.
    async fn decide_report(
        &self,
        id: ReportId,
        label: Option<&NewExample>,
        now: DateTime<Utc>,
    ) -> Result<bool>;
}

#[async_trait]
impl<DB: Dialect> LearningStore for SqlStore<DB> {
    async fn add_example(&self, example: &NewExample, now: DateTime<Utc>) -> Result<ExampleId> {
        let mut tx = self.write.begin().await?;
        let id = Self::insert_example(&mut tx, example, now).await?;
        tx.commit().await?;
        Ok(id)
    }

    async fn examples(&self, after_id: ExampleId, limit: u32) -> Result<Vec<ExampleRow>> {
        let rows = Sql::<DB>::new("SELECT * FROM examples WHERE id > $1 ORDER BY id LIMIT $2")
            .int(after_id)
            .int(i64::from(limit))
            .fetch_all(&self.read)
            .await?;
        rows.iter().map(codec::example_row::<DB>).collect()
    }

    async fn insert_report(&self, report: &NewReport, now: DateTime<Utc>) -> Result<ReportId> {
        let row = Sql::<DB>::new(
            "INSERT INTO reports (chat_id, post_id, kind, text, link, status, created_at)
             VALUES ($1, $2, $3, $4, $5, 'pending', $6) RETURNING id",
        )
        .int(report.chat_id)
        .int(report.post_id)
        .text(report.kind.as_str())
        .text(report.text.as_str())
        .text(report.link.as_deref())
        .int(ms(now))
        .fetch_one(&self.write)
        .await?;
        Cols::<DB>::new(&row).id().map(ReportId)
    }

    async fn reports(&self, status: Option<ReportStatus>, limit: u32) -> Result<Vec<ReportRow>> {
        let rows = Sql::<DB>::new(
            "SELECT * FROM reports WHERE (CAST($1 AS TEXT) IS NULL OR status = $1)
             ORDER BY id DESC LIMIT $2",
        )
        .text(status.map(ReportStatus::as_str))
        .int(i64::from(limit))
        .fetch_all(&self.read)
        .await?;
        rows.iter().map(codec::report_row::<DB>).collect()
    }

    async fn report(&self, id: ReportId) -> Result<Option<ReportRow>> {
        const SQL: &str = "SELECT * FROM reports WHERE id = $1";
        self.one(SQL, id, codec::report_row::<DB>).await
    }

    async fn decide_report(
        &self,
        id: ReportId,
        label: Option<&NewExample>,
        now: DateTime<Utc>,
    ) -> Result<bool> {
        let status = if label.is_some() {
            ReportStatus::Accepted
        } else {
            ReportStatus::Rejected
        };
        let mut tx = self.write.begin().await?;
        // The report's post first: two admins deciding the last two complaints at once
        // decide one after the other, so the second sees the first and releases the post.
        Sql::<DB>::new(
            "UPDATE posts SET withheld_at = withheld_at
             WHERE id = (SELECT post_id FROM reports WHERE id = $1)",
        )
        .int(id)
        .execute(&mut tx)
        .await?;
        // Deciding takes the row: a concurrent decision waits, then finds it decided.
        let decided = Sql::<DB>::new(
            "UPDATE reports SET status = $1, decided_at = $2 WHERE id = $3 AND status = 'pending'",
        )
        .text(status.as_str())
        .int(ms(now))
        .int(id)
        .execute(&mut tx)
        .await?;
        if decided == 0 {
            return Ok(false);
        }
        if label.is_none() {
            Self::release_if_cleared(&mut tx, id, now).await?;
        }
        if let Some(label) = label {
            let example_id = Self::insert_example(&mut tx, label, now).await?;
            Sql::<DB>::new("UPDATE reports SET example_id = $1 WHERE id = $2")
                .int(example_id)
                .int(id)
                .execute(&mut tx)
                .await?;
        }
        tx.commit().await?;
        Ok(true)
    }
}

impl<DB: Dialect> SqlStore<DB> {
    /// After a report was rejected: when its post is withheld and no complaint about it is
    /// pending or accepted any more, the post is released and its withheld deliveries are
    /// sent: they become `held` until their own time (quiet hours, a retry's backoff) or
    /// now, and the held-delivery sweep publishes them.
    async fn release_if_cleared(
        conn: &mut DB::Connection,
        id: ReportId,
        now: DateTime<Utc>,
    ) -> Result<()> {
        let released = Sql::<DB>::new(
            "UPDATE posts SET withheld_at = NULL
             WHERE id = (SELECT post_id FROM reports WHERE id = $1) AND withheld_at IS NOT NULL
               AND NOT EXISTS (SELECT 1 FROM reports r WHERE r.post_id = posts.id
                   AND r.status IN ('pending', 'accepted')
                   AND r.kind IN ('wrong', 'not_job', 'wrong_category'))
             RETURNING id",
        )
        .int(id)
        .fetch_optional(crate::sql::Exec::Conn(&mut *conn))
        .await?;
        if let Some(row) = released {
            let post_id = Cols::<DB>::new(&row).id()?;
            let n = Sql::<DB>::new(
                "UPDATE deliveries SET status = 'held', not_before = COALESCE(not_before, $1),
                     updated_at = $1
                 WHERE post_id = $2 AND status = 'withheld'",
            )
            .int(ms(now))
            .int(post_id)
            .execute(crate::sql::Exec::Conn(conn))
            .await?;
            tracing::info!(
                post = post_id,
                deliveries = n,
                "withheld post released: its reports were rejected"
            );
        }
        Ok(())
    }

    /// Stores a labeled example: one per `(post, source)`, a new label replacing the old.
    pub(crate) async fn insert_example(
        conn: &mut DB::Connection,
        example: &NewExample,
        now: DateTime<Utc>,
    ) -> Result<ExampleId> {
        Sql::<DB>::new(
            "INSERT INTO examples (post_id, text, is_job, kind, categories, source, created_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7)
             ON CONFLICT (post_id, source) WHERE post_id IS NOT NULL DO UPDATE SET
                 text = excluded.text, is_job = excluded.is_job, kind = excluded.kind,
                 categories = excluded.categories, created_at = excluded.created_at
             RETURNING id",
        )
        .int(example.post_id)
        .text(example.text.as_str())
        .flag(example.is_job)
        .text(example.kind.as_str())
        .json(Some(&example.categories))
        .text(example.source.as_str())
        .int(ms(now))
        .fetch_one(crate::sql::Exec::Conn(conn))
        .await
        .and_then(|row| Cols::<DB>::new(&row).id().map(ExampleId))
    }
}
