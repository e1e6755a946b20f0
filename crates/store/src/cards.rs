//! What the buttons under a card change: reports filed once per user, post and kind (and a
//! post withheld once enough users reported it), the authors a subscriber hid, and the
//! channels a vacancy appeared in; and what a subscriber resuming after a pause may catch
//! up on.

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use jobwire_core::card::{Author, Source, Wants};

use crate::codec::ms;
use crate::sql::{Cols, Dialect, Sql};
use crate::subscribers::BUMP_SUBSCRIBERS_VERSION;
use crate::*;

/// What filing a card report did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CardReport {
    /// The new report; `None` when this user had reported this post so already.
    pub report: Option<ReportId>,
    /// Distinct users whose complaints about the post stand (not rejected).
    pub reporters: u32,
    /// This report withheld the post: its unsent deliveries now wait for an admin.
    pub withheld: bool,
}

/// An author a subscriber hid.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HiddenAuthorRow {
    pub id: i64,
    pub chat_id: i64,
    /// `@username`, or `src:<handle>` (see [`jobwire_core::card::author_keys`]).
    pub author: String,
    pub label: String,
    pub created_at: DateTime<Utc>,
}

/// A job fanned out recently, with what makes it a good one to catch up on.
#[derive(Debug, Clone, PartialEq)]
pub struct RecentJob {
    pub post: PostRow,
    /// Subscribers it was fanned out to.
    pub matched: u32,
    /// Complaints about it (card reports and `/wrong`).
    pub complaints: u32,
}

#[async_trait]
pub trait CardStore: Send + Sync {
    /// Files a card report ([`ReportKind::NotJob`] or [`ReportKind::WrongCategory`]; the
    /// report's `post_id` must be set) unless this chat reported this post so already. When
    /// `threshold` > 0 and that many distinct users now complain about the post, the post
    /// is withheld in the same transaction: its pending and held deliveries become
    /// `withheld` and wait for an admin (see [`LearningStore::decide_report`]).
    async fn file_card_report(
        &self,
        report: &NewReport,
        threshold: u32,
        now: DateTime<Utc>,
    ) -> Result<CardReport>;

    /// The report kinds a chat filed about a post.
    async fn card_reports_of(&self, chat_id: i64, post_id: PostId) -> Result<Vec<ReportKind>>;

    /// Whether the post is withheld (enough users reported it; no admin released it).
    async fn post_withheld(&self, post_id: PostId) -> Result<bool>;

    /// Hides an author from a chat's deliveries; `false` when it was hidden already.
    /// Changes the subscribers' version (fan-out rebuilds its index).
    async fn hide_author(&self, chat_id: i64, author: &Author, now: DateTime<Utc>) -> Result<bool>;

    /// Shows a hidden author again; returns its label, `None` when there was no such entry
    /// for this chat.
    async fn show_author(&self, chat_id: i64, id: i64) -> Result<Option<String>>;

    /// The authors a chat hid, oldest first.
    async fn hidden_authors(&self, chat_id: i64) -> Result<Vec<HiddenAuthorRow>>;

    /// Every hidden author of every chat (fan-out's index).
    async fn all_hidden_authors(&self) -> Result<Vec<HiddenAuthorRow>>;

    /// The channels a job appeared in: its own post first, then its near-duplicates in
    /// the order they were posted (each post once; a channel may repeat).
    async fn job_sources(&self, post_id: PostId) -> Result<Vec<Source>>;

    /// Jobs (not résumés) fanned out since `since` (received), not withheld, newest first; with
    /// `not_for`, only those that subscriber has no delivery of.
    async fn recent_jobs(
        &self,
        since: DateTime<Utc>,
        not_for: Option<SubscriberId>,
        limit: u32,
    ) -> Result<Vec<RecentJob>>;

    /// Adds deliveries of an already fanned-out job (a subscriber catching up), `held` until
    /// their `not_before` or `now`, so the scheduler's sweep sends them; a subscriber who has
    /// a delivery of the job already gets no second one, and a withheld job gets none.
    /// Returns how many were added.
    async fn add_held_deliveries(
        &self,
        post_id: PostId,
        deliveries: &[NewDelivery],
        now: DateTime<Utc>,
    ) -> Result<u64>;

    /// What a chat asked to receive (vacancies, résumés or both); changes the subscribers'
    /// version when it changes.
    async fn set_wants(&self, chat_id: i64, wants: Wants, now: DateTime<Utc>) -> Result<()>;

    /// What a chat asked to receive ([`Wants::Jobs`] unless it said otherwise).
    async fn wants_of(&self, chat_id: i64) -> Result<Wants>;

    /// Every chat that asked for something other than vacancies only.
    async fn all_wants(&self) -> Result<Vec<(i64, Wants)>>;

    /// Claims the daily digest of `day` (`YYYY-MM-DD`) for this process: `true` when it was
    /// not claimed yet, or claimed before `stale_before` and never sent (its poster died).
    async fn claim_digest(
        &self,
        day: &str,
        now: DateTime<Utc>,
        stale_before: DateTime<Utc>,
    ) -> Result<bool>;

    /// Notes the digest of `day` posted: its message and how many jobs it named.
    async fn digest_sent(
        &self,
        day: &str,
        message_id: i64,
        jobs: u32,
        now: DateTime<Utc>,
    ) -> Result<()>;
}

fn hidden_row<DB: Dialect>(c: &Cols<'_, DB>) -> Result<HiddenAuthorRow> {
    Ok(HiddenAuthorRow {
        id: c.id()?,
        chat_id: c.int("chat_id")?,
        author: c.text("author")?,
        label: c.text("label")?,
        created_at: c.time("created_at")?,
    })
}

#[async_trait]
impl<DB: Dialect> CardStore for SqlStore<DB> {
    async fn file_card_report(
        &self,
        report: &NewReport,
        threshold: u32,
        now: DateTime<Utc>,
    ) -> Result<CardReport> {
        let mut tx = self.write.begin().await?;
        // Takes the post's row first: two reports of one post count one after the other.
        Sql::<DB>::new("UPDATE posts SET withheld_at = withheld_at WHERE id = $1")
            .int(report.post_id)
            .execute(&mut tx)
            .await?;
        let inserted = Sql::<DB>::new(
            "INSERT INTO reports (chat_id, post_id, kind, text, link, status, created_at)
             VALUES ($1, $2, $3, $4, $5, 'pending', $6)
             ON CONFLICT (chat_id, post_id, kind)
                 WHERE post_id IS NOT NULL AND kind IN ('not_job', 'wrong_category')
             DO NOTHING RETURNING id",
        )
        .int(report.chat_id)
        .int(report.post_id)
        .text(report.kind.as_str())
        .text(report.text.as_str())
        .text(report.link.as_deref())
        .int(ms(now))
        .fetch_optional(&mut tx)
        .await?;
        let report_id = inserted
            .as_ref()
            .map(|row| Cols::<DB>::new(row).id().map(ReportId))
            .transpose()?;
        let count = Sql::<DB>::new(
            "SELECT COUNT(DISTINCT chat_id) AS n FROM reports
             WHERE post_id = $1 AND status <> 'rejected'
               AND kind IN ('wrong', 'not_job', 'wrong_category')",
        )
        .int(report.post_id)
        .fetch_one(&mut tx)
        .await?;
        let reporters = u32::try_from(Cols::<DB>::new(&count).int("n")?).unwrap_or(u32::MAX);
        let mut withheld = false;
        if report_id.is_some() && threshold > 0 && reporters >= threshold {
            withheld = Sql::<DB>::new(
                "UPDATE posts SET withheld_at = $1 WHERE id = $2 AND withheld_at IS NULL",
            )
            .int(ms(now))
            .int(report.post_id)
            .execute(&mut tx)
            .await?
                > 0;
            if withheld {
                Sql::<DB>::new(
                    "UPDATE deliveries SET status = 'withheld', updated_at = $1
                     WHERE post_id = $2 AND status IN ('pending', 'held')",
                )
                .int(ms(now))
                .int(report.post_id)
                .execute(&mut tx)
                .await?;
            }
        }
        tx.commit().await?;
        Ok(CardReport {
            report: report_id,
            reporters,
            withheld,
        })
    }

    async fn card_reports_of(&self, chat_id: i64, post_id: PostId) -> Result<Vec<ReportKind>> {
        Sql::<DB>::new("SELECT DISTINCT kind FROM reports WHERE chat_id = $1 AND post_id = $2")
            .int(chat_id)
            .int(post_id)
            .fetch_each(&self.read, |c| c.word("kind", ReportKind::parse))
            .await
    }

    async fn post_withheld(&self, post_id: PostId) -> Result<bool> {
        let row = Sql::<DB>::new("SELECT withheld_at FROM posts WHERE id = $1")
            .int(post_id)
            .fetch_optional(&self.read)
            .await?;
        Ok(match row {
            Some(row) => Cols::<DB>::new(&row).opt_int("withheld_at")?.is_some(),
            None => false,
        })
    }

    async fn hide_author(&self, chat_id: i64, author: &Author, now: DateTime<Utc>) -> Result<bool> {
        let mut tx = self.write.begin().await?;
        let added = Sql::<DB>::new(
            "INSERT INTO hidden_authors (chat_id, author, label, created_at)
             VALUES ($1, $2, $3, $4) ON CONFLICT (chat_id, author) DO NOTHING",
        )
        .int(chat_id)
        .text(author.key.as_str())
        .text(author.label.as_str())
        .int(ms(now))
        .execute(&mut tx)
        .await?
            > 0;
        if added {
            Sql::<DB>::new(BUMP_SUBSCRIBERS_VERSION)
                .execute(&mut tx)
                .await?;
        }
        tx.commit().await?;
        Ok(added)
    }

    async fn show_author(&self, chat_id: i64, id: i64) -> Result<Option<String>> {
        let mut tx = self.write.begin().await?;
        let row = Sql::<DB>::new(
            "DELETE FROM hidden_authors WHERE chat_id = $1 AND id = $2 RETURNING label",
        )
        .int(chat_id)
        .int(id)
        .fetch_optional(&mut tx)
        .await?;
        let label = row
            .as_ref()
            .map(|r| Cols::<DB>::new(r).text("label"))
            .transpose()?;
        if label.is_some() {
            Sql::<DB>::new(BUMP_SUBSCRIBERS_VERSION)
                .execute(&mut tx)
                .await?;
        }
        tx.commit().await?;
        Ok(label)
    }

    async fn hidden_authors(&self, chat_id: i64) -> Result<Vec<HiddenAuthorRow>> {
        Sql::<DB>::new("SELECT * FROM hidden_authors WHERE chat_id = $1 ORDER BY id")
            .int(chat_id)
            .fetch_each(&self.read, hidden_row)
            .await
    }

    async fn all_hidden_authors(&self) -> Result<Vec<HiddenAuthorRow>> {
        Sql::<DB>::new("SELECT * FROM hidden_authors ORDER BY id")
            .fetch_each(&self.read, hidden_row)
            .await
    }

    async fn recent_jobs(
        &self,
        since: DateTime<Utc>,
        not_for: Option<SubscriberId>,
        limit: u32,
    ) -> Result<Vec<RecentJob>> {
        let rows = Sql::<DB>::new(
            "SELECT p.*, c.handle AS channel_handle, c.title AS channel_title,
                 (SELECT COUNT(*) FROM deliveries d WHERE d.post_id = p.id) AS matched,
                 (SELECT COUNT(*) FROM reports r WHERE r.post_id = p.id
                     AND r.kind IN ('wrong', 'not_job', 'wrong_category')) AS complaints
             FROM posts p JOIN channels c ON c.id = p.channel_id
             WHERE p.status = 'fanned_out' AND p.withheld_at IS NULL AND p.received_at >= $1
               AND EXISTS (SELECT 1 FROM classifications k WHERE k.post_id = p.id
                   AND k.kind = 'job')
               AND NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.post_id = p.id
                   AND d.subscriber_id = $2)
             ORDER BY p.received_at DESC, p.id DESC LIMIT $3",
        )
        .int(ms(since))
        .int(not_for.map_or(0, |s| s.get()))
        .int(i64::from(limit))
        .fetch_all(&self.read)
        .await?;
        rows.iter()
            .map(|row| {
                let c = Cols::<DB>::new(row);
                Ok(RecentJob {
                    post: crate::codec::post_row::<DB>(row)?,
                    matched: c.count("matched")?,
                    complaints: c.count("complaints")?,
                })
            })
            .collect()
    }

    async fn add_held_deliveries(
        &self,
        post_id: PostId,
        deliveries: &[NewDelivery],
        now: DateTime<Utc>,
    ) -> Result<u64> {
        let mut tx = self.write.begin().await?;
        let mut added = 0;
        for d in deliveries {
            let at = d.not_before.map_or(now, |t| t.max(now));
            added += Sql::<DB>::new(
                "INSERT INTO deliveries (post_id, subscriber_id, chat_id, bot, status, not_before,
                     created_at, updated_at)
                 SELECT $1, $2, $3, $4, 'held', $5, $6, $6
                 WHERE NOT EXISTS (SELECT 1 FROM posts p WHERE p.id = $1
                     AND p.withheld_at IS NOT NULL)
                 ON CONFLICT (post_id, subscriber_id) DO NOTHING",
            )
            .int(post_id)
            .int(d.subscriber_id)
            .int(d.chat_id)
            .text(d.bot.as_str())
            .int(ms(at))
            .int(ms(now))
            .execute(&mut tx)
            .await?;
        }
        tx.commit().await?;
        Ok(added)
    }

    async fn set_wants(&self, chat_id: i64, wants: Wants, now: DateTime<Utc>) -> Result<()> {
        let mut tx = self.write.begin().await?;
        let changed = Sql::<DB>::new(
            "INSERT INTO subscriber_wants (chat_id, wants, updated_at) VALUES ($1, $2, $3)
             ON CONFLICT (chat_id) DO UPDATE SET wants = excluded.wants,
                 updated_at = excluded.updated_at
                 WHERE subscriber_wants.wants <> excluded.wants",
        )
        .int(chat_id)
        .text(wants.as_str())
        .int(ms(now))
        .execute(&mut tx)
        .await?;
        if changed > 0 {
            Sql::<DB>::new(BUMP_SUBSCRIBERS_VERSION)
                .execute(&mut tx)
                .await?;
        }
        tx.commit().await?;
        Ok(())
    }

    async fn wants_of(&self, chat_id: i64) -> Result<Wants> {
        let row = Sql::<DB>::new("SELECT wants FROM subscriber_wants WHERE chat_id = $1")
            .int(chat_id)
            .fetch_optional(&self.read)
            .await?;
        match row {
            Some(row) => Cols::<DB>::new(&row).word("wants", Wants::parse),
            None => Ok(Wants::Jobs),
        }
    }

    async fn all_wants(&self) -> Result<Vec<(i64, Wants)>> {
        Sql::<DB>::new("SELECT chat_id, wants FROM subscriber_wants WHERE wants <> 'jobs'")
            .fetch_each(&self.read, |c| {
                Ok((c.int("chat_id")?, c.word("wants", Wants::parse)?))
            })
            .await
    }

    async fn claim_digest(
        &self,
        day: &str,
        now: DateTime<Utc>,
        stale_before: DateTime<Utc>,
    ) -> Result<bool> {
        let row = Sql::<DB>::new(
            "INSERT INTO digests (day, claimed_at) VALUES ($1, $2)
             ON CONFLICT (day) DO UPDATE SET claimed_at = excluded.claimed_at
                 WHERE digests.sent_at IS NULL AND digests.claimed_at < $3
             RETURNING day",
        )
        .text(day)
        .int(ms(now))
        .int(ms(stale_before))
        .fetch_optional(&self.write)
        .await?;
        Ok(row.is_some())
    }

    async fn digest_sent(
        &self,
        day: &str,
        message_id: i64,
        jobs: u32,
        now: DateTime<Utc>,
    ) -> Result<()> {
        Sql::<DB>::new(
            "UPDATE digests SET sent_at = $1, message_id = $2, jobs = $3 WHERE day = $4",
        )
        .int(ms(now))
        .int(message_id)
        .int(i64::from(jobs))
        .text(day)
        .execute(&self.write)
        .await?;
        Ok(())
    }

    async fn job_sources(&self, post_id: PostId) -> Result<Vec<Source>> {
        Sql::<DB>::new(
            "SELECT c.handle, c.title, p.url, p.received_at FROM posts p
             JOIN channels c ON c.id = p.channel_id
             WHERE p.id = $1 OR p.duplicate_of = $1
             ORDER BY CASE WHEN p.id = $1 THEN 0 ELSE 1 END, p.posted_at, p.id LIMIT 50",
        )
        .int(post_id)
        .fetch_each(&self.read, |c| {
            Ok(Source {
                handle: c.text("handle")?,
                title: c.opt_text("title")?,
                url: c.opt_text("url")?,
                received_at: c.time("received_at")?,
            })
        })
        .await
    }
}
