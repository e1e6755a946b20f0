//! Direct placements: an employer's vacancy, written in the main bot, paid in Stars, published
//! as a post of the source `direct`, refunded when refused or not a vacancy.
//!
//! Every move is one conditional `UPDATE … WHERE status = …`: whichever process makes it
//! owns the consequence (telling the employer, publishing, refunding), so several bot
//! processes do each once.

use async_trait::async_trait;
use chrono::{DateTime, Duration, Utc};
use jobwire_core::CategorySlug;
pub use jobwire_core::placement::PlacementStatus;

use crate::billing::{mark_invoice_paid, record_payment};
use crate::codec::{clamp_u32, known_categories, ms};
use crate::sql::{Cols, Dialect, Sql};
use crate::*;

/// Why a paid placement was refused, when jobwire (not an admin) refused it.
pub const REASON_NOT_A_VACANCY: &str = "not_a_vacancy";
/// The payment named a placement that was edited or dropped after its invoice.
pub const REASON_CHANGED: &str = "changed_after_invoice";
/// Placements were switched off when the payment came.
pub const REASON_OFF: &str = "placements_off";
/// The post was not classified within [`PlacementStore::settle_placements`]'s deadline.
pub const REASON_NOT_CHECKED: &str = "not_checked_in_time";

/// What the employer wrote (the editable part of a placement).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PlacementDraft {
    /// `ru` or `en`: the labels of the composed text and the messages to the employer.
    pub lang: String,
    pub title: Option<String>,
    pub body: Option<String>,
    /// `None` with a title and body written: no budget stated (or not asked yet).
    pub budget: Option<String>,
    pub contact: Option<String>,
    pub categories: Vec<CategorySlug>,
}

/// A stored placement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlacementRow {
    pub id: PlacementId,
    pub chat_id: i64,
    pub status: PlacementStatus,
    pub draft: PlacementDraft,
    /// The price invoiced, in Stars.
    pub stars: Option<i64>,
    pub nonce: Option<String>,
    pub charge_id: Option<String>,
    pub post_id: Option<PostId>,
    /// Why it was refused: [`REASON_NOT_A_VACANCY`], [`REASON_CHANGED`] or an admin's words.
    pub reason: Option<String>,
    pub decided_by: Option<String>,
    pub refund_tries: u32,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    pub paid_at: Option<DateTime<Utc>>,
    pub published_at: Option<DateTime<Utc>>,
    pub refunded_at: Option<DateTime<Utc>>,
}

/// What [`PlacementStore::apply_placement_payment`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PlacementPaid {
    /// Recorded now. The placement is `awaiting_approval` or `approved`, or `refused`
    /// ([`REASON_CHANGED`]) when the payment named no placement waiting for it.
    Applied(Box<PlacementRow>),
    /// This charge was recorded before: nothing changed.
    AlreadyApplied,
}

fn placement_row<DB: Dialect>(c: &Cols<'_, DB>) -> Result<PlacementRow> {
    let id = c.id()?;
    Ok(PlacementRow {
        id: PlacementId(id),
        chat_id: c.int("chat_id")?,
        status: c.word("status", PlacementStatus::parse)?,
        draft: PlacementDraft {
            lang: c.text("lang")?,
            title: c.opt_text("title")?,
            body: c.opt_text("body")?,
            budget: c.opt_text("budget")?,
            contact: c.opt_text("contact")?,
            categories: known_categories(id, c.json("categories")?),
        },
        stars: c.opt_int("stars")?,
        nonce: c.opt_text("nonce")?,
        charge_id: c.opt_text("charge_id")?,
        post_id: c.opt_int("post_id")?.map(PostId),
        reason: c.opt_text("reason")?,
        decided_by: c.opt_text("decided_by")?,
        refund_tries: clamp_u32(c.int("refund_tries")?),
        created_at: c.time("created_at")?,
        updated_at: c.time("updated_at")?,
        paid_at: c.opt_time("paid_at")?,
        published_at: c.opt_time("published_at")?,
        refunded_at: c.opt_time("refunded_at")?,
    })
}

/// A placement read by a query that may find none.
fn optional<DB: Dialect>(row: Option<DB::Row>) -> Result<Option<PlacementRow>> {
    row.map(|r| placement_row(&Cols::<DB>::new(&r))).transpose()
}

/// The channel row of direct placements, made on first use.
const ENSURE_DIRECT: &str = "INSERT INTO channels (handle, title, kind, created_at, updated_at)
     VALUES ($1, 'Direct placements', 'external', $2, $2) ON CONFLICT (handle) DO NOTHING";

/// A failed refund is tried again after this long times the failures so far.
pub const REFUND_RETRY: Duration = Duration::seconds(30);

/// Employers' direct placements. See the [module docs](self).
#[async_trait]
pub trait PlacementStore: Send + Sync {
    /// The chat's placement being written (`draft` or `invoiced`), if any.
    async fn open_placement(&self, chat_id: i64) -> Result<Option<PlacementRow>>;

    /// Saves the chat's open placement (made when there is none). An `invoiced` one goes
    /// back to `draft`: its invoice can no longer be paid for it.
    async fn save_placement_draft(
        &self,
        chat_id: i64,
        draft: &PlacementDraft,
        now: DateTime<Utc>,
    ) -> Result<PlacementRow>;

    /// Marks the chat's open placement `id` invoiced at `stars` under `nonce`, and stores the
    /// invoice (plan `placement`) for the pre-checkout check. `None`: it is not open.
    async fn invoice_placement(
        &self,
        id: PlacementId,
        chat_id: i64,
        stars: i64,
        nonce: &str,
        now: DateTime<Utc>,
    ) -> Result<Option<PlacementRow>>;

    /// The employer drops the open placement. Returns whether there was one.
    async fn cancel_placement(&self, chat_id: i64, now: DateTime<Utc>) -> Result<bool>;

    async fn placement(&self, id: PlacementId) -> Result<Option<PlacementRow>>;

    /// The newest placements first, of one status or all.
    async fn placements(
        &self,
        status: Option<PlacementStatus>,
        limit: u32,
    ) -> Result<Vec<PlacementRow>>;

    /// Records a placement's payment once per charge, in one transaction: the ledger row, the
    /// invoice marked paid, and the placement `awaiting_approval` (with `approval`) or
    /// `approved`. A payment for a placement that is not `invoiced` under this nonce any more
    /// is kept as a `refused` placement of its own ([`REASON_CHANGED`]) to be refunded.
    /// `approval`: `None` when placements are switched off (the payment is kept as a
    /// `refused` placement, [`REASON_OFF`], to be refunded).
    async fn apply_placement_payment(
        &self,
        entry: &NewLedgerEntry,
        placement: Option<PlacementId>,
        approval: Option<bool>,
        now: DateTime<Utc>,
    ) -> Result<PlacementPaid>;

    /// An admin approves or refuses a placement `awaiting_approval`. `None`: it is not.
    async fn decide_placement(
        &self,
        id: PlacementId,
        approve: bool,
        reason: Option<&str>,
        by: &str,
        now: DateTime<Utc>,
    ) -> Result<Option<PlacementRow>>;

    /// Publishes an `approved` placement: a post of the source `direct` (external id
    /// `placement-<id>`, status `queued`), linked to it, in one transaction. `None`: it is not
    /// `approved` (another process published it). The caller then queues the post.
    async fn publish_placement(
        &self,
        id: PlacementId,
        text: &str,
        fingerprint: Option<&str>,
        now: DateTime<Utc>,
    ) -> Result<Option<PostId>>;

    /// Moves published placements whose post was decided: fanned out → `delivered`; not a
    /// vacancy (or dropped) → `refused` ([`REASON_NOT_A_VACANCY`]). One whose post is still
    /// waiting for the classifier `deadline` after publishing is refused too
    /// ([`REASON_NOT_CHECKED`]) and its post taken out of the pipeline (`filtered`), in one
    /// transaction, so it cannot go out after its refund. Returns those moved now.
    async fn settle_placements(
        &self,
        deadline: Duration,
        now: DateTime<Utc>,
        limit: u32,
    ) -> Result<Vec<PlacementRow>>;

    /// Takes a refused placement's refund: `refused` (or a `refunding` one abandoned for
    /// `stale`) → `refunding`. `None`: not to be refunded now.
    async fn claim_placement_refund(
        &self,
        id: PlacementId,
        stale: Duration,
        now: DateTime<Utc>,
    ) -> Result<Option<PlacementRow>>;

    /// Placements to refund now: `refused` ones (a failed one after its wait) and
    /// abandoned `refunding` ones.
    async fn placements_to_refund(
        &self,
        stale: Duration,
        now: DateTime<Utc>,
        limit: u32,
    ) -> Result<Vec<PlacementId>>;

    /// Ends a claimed refund: `refunded`, or back to `refused` with one more failure.
    async fn finish_placement_refund(
        &self,
        id: PlacementId,
        refunded: bool,
        now: DateTime<Utc>,
    ) -> Result<()>;
}

#[async_trait]
impl<DB: Dialect> PlacementStore for SqlStore<DB> {
    async fn open_placement(&self, chat_id: i64) -> Result<Option<PlacementRow>> {
        let row = Sql::<DB>::new(
            "SELECT * FROM placements WHERE chat_id = $1 AND status IN ('draft', 'invoiced')",
        )
        .int(chat_id)
        .fetch_optional(&self.write)
        .await?;
        optional::<DB>(row)
    }

    async fn save_placement_draft(
        &self,
        chat_id: i64,
        draft: &PlacementDraft,
        now: DateTime<Utc>,
    ) -> Result<PlacementRow> {
        let categories: Vec<&str> = draft.categories.iter().map(CategorySlug::as_str).collect();
        // One statement, so two answers of one chat arriving together cannot make two drafts.
        let row = Sql::<DB>::new(
            "INSERT INTO placements (chat_id, status, lang, title, body, budget, contact,
                 categories, created_at, updated_at)
             VALUES ($1, 'draft', $2, $3, $4, $5, $6, $7, $8, $8)
             ON CONFLICT (chat_id) WHERE status IN ('draft', 'invoiced') DO UPDATE SET
                 status = 'draft', nonce = NULL, stars = NULL, lang = excluded.lang,
                 title = excluded.title, body = excluded.body, budget = excluded.budget,
                 contact = excluded.contact, categories = excluded.categories,
                 updated_at = excluded.updated_at
             RETURNING *",
        )
        .int(chat_id)
        .text(draft.lang.as_str())
        .text(draft.title.as_deref())
        .text(draft.body.as_deref())
        .text(draft.budget.as_deref())
        .text(draft.contact.as_deref())
        .json(Some(&categories))
        .int(ms(now))
        .fetch_one(&self.write)
        .await?;
        placement_row(&Cols::<DB>::new(&row))
    }

    async fn invoice_placement(
        &self,
        id: PlacementId,
        chat_id: i64,
        stars: i64,
        nonce: &str,
        now: DateTime<Utc>,
    ) -> Result<Option<PlacementRow>> {
        let mut tx = self.write.begin().await?;
        let row = Sql::<DB>::new(
            "UPDATE placements SET status = 'invoiced', stars = $3, nonce = $4, updated_at = $5
             WHERE id = $1 AND chat_id = $2 AND status IN ('draft', 'invoiced')
             RETURNING *",
        )
        .int(id)
        .int(chat_id)
        .int(stars)
        .text(nonce)
        .int(ms(now))
        .fetch_optional(&mut tx)
        .await?;
        let Some(row) = row else {
            tx.rollback().await?;
            return Ok(None);
        };
        Sql::<DB>::new(
            "INSERT INTO invoices (nonce, chat_id, plan_id, amount, currency, created_at)
             VALUES ($1, $2, 'placement', $3, 'XTR', $4)",
        )
        .text(nonce)
        .int(chat_id)
        .int(stars)
        .int(ms(now))
        .execute(&mut tx)
        .await?;
        let row = placement_row(&Cols::<DB>::new(&row))?;
        tx.commit().await?;
        Ok(Some(row))
    }

    async fn cancel_placement(&self, chat_id: i64, now: DateTime<Utc>) -> Result<bool> {
        let n = Sql::<DB>::new(
            "UPDATE placements SET status = 'canceled', updated_at = $2
             WHERE chat_id = $1 AND status IN ('draft', 'invoiced')",
        )
        .int(chat_id)
        .int(ms(now))
        .execute(&self.write)
        .await?;
        Ok(n > 0)
    }

    async fn placement(&self, id: PlacementId) -> Result<Option<PlacementRow>> {
        let row = Sql::<DB>::new("SELECT * FROM placements WHERE id = $1")
            .int(id)
            .fetch_optional(&self.write)
            .await?;
        optional::<DB>(row)
    }

    async fn placements(
        &self,
        status: Option<PlacementStatus>,
        limit: u32,
    ) -> Result<Vec<PlacementRow>> {
        let query = match status {
            Some(s) => Sql::<DB>::new(
                "SELECT * FROM placements WHERE status = $1 ORDER BY id DESC LIMIT $2",
            )
            .text(s.as_str()),
            None => Sql::<DB>::new("SELECT * FROM placements ORDER BY id DESC LIMIT $1"),
        };
        query
            .int(i64::from(limit))
            .fetch_each(&self.read, placement_row::<DB>)
            .await
    }

    async fn apply_placement_payment(
        &self,
        entry: &NewLedgerEntry,
        placement: Option<PlacementId>,
        approval: Option<bool>,
        now: DateTime<Utc>,
    ) -> Result<PlacementPaid> {
        let mut tx = self.write.begin().await?;
        if !record_payment::<DB>(&mut tx, entry, now).await? {
            tx.rollback().await?;
            return Ok(PlacementPaid::AlreadyApplied);
        }
        mark_invoice_paid::<DB>(&mut tx, entry).await?;
        let (status, reason) = match approval {
            Some(true) => (PlacementStatus::AwaitingApproval, None),
            Some(false) => (PlacementStatus::Approved, None),
            None => (PlacementStatus::Refused, Some(REASON_OFF)),
        };
        let paid = match (placement, entry.nonce.as_deref()) {
            (Some(id), Some(nonce)) => {
                Sql::<DB>::new(
                    "UPDATE placements SET status = $1, charge_id = $2, paid_at = $3,
                         updated_at = $3, reason = $8
                     WHERE id = $4 AND chat_id = $5 AND status = 'invoiced' AND nonce = $6
                         AND stars = $7
                     RETURNING *",
                )
                .text(status.as_str())
                .text(entry.charge_id.as_str())
                .int(ms(now))
                .int(id)
                .int(entry.chat_id)
                .text(nonce)
                .int(entry.amount)
                .text(reason)
                .fetch_optional(&mut tx)
                .await?
            }
            _ => None,
        };
        let row = match paid {
            Some(row) => row,
            // Paid for something no longer waiting for it: kept, to be refunded.
            None => {
                Sql::<DB>::new(
                    "INSERT INTO placements (chat_id, status, lang, stars, nonce, charge_id,
                         reason, created_at, updated_at, paid_at)
                     VALUES ($1, 'refused', COALESCE((SELECT lang FROM placements WHERE id = $2),
                         'ru'), $3, $4, $5, $6, $7, $7, $7)
                     RETURNING *",
                )
                .int(entry.chat_id)
                .int(placement.map_or(0, PlacementId::get))
                .int(entry.amount)
                .text(entry.nonce.as_deref())
                .text(entry.charge_id.as_str())
                .text(REASON_CHANGED)
                .int(ms(now))
                .fetch_one(&mut tx)
                .await?
            }
        };
        let row = placement_row(&Cols::<DB>::new(&row))?;
        tx.commit().await?;
        Ok(PlacementPaid::Applied(Box::new(row)))
    }

    async fn decide_placement(
        &self,
        id: PlacementId,
        approve: bool,
        reason: Option<&str>,
        by: &str,
        now: DateTime<Utc>,
    ) -> Result<Option<PlacementRow>> {
        let status = if approve {
            PlacementStatus::Approved
        } else {
            PlacementStatus::Refused
        };
        let row = Sql::<DB>::new(
            "UPDATE placements SET status = $1, reason = $2, decided_by = $3, updated_at = $4
             WHERE id = $5 AND status = 'awaiting_approval'
             RETURNING *",
        )
        .text(status.as_str())
        .text(reason)
        .text(by)
        .int(ms(now))
        .int(id)
        .fetch_optional(&self.write)
        .await?;
        optional::<DB>(row)
    }

    async fn publish_placement(
        &self,
        id: PlacementId,
        text: &str,
        fingerprint: Option<&str>,
        now: DateTime<Utc>,
    ) -> Result<Option<PostId>> {
        let mut tx = self.write.begin().await?;
        let claimed = Sql::<DB>::new(
            "UPDATE placements SET status = 'published', published_at = $1, updated_at = $1
             WHERE id = $2 AND status = 'approved'
             RETURNING contact",
        )
        .int(ms(now))
        .int(id)
        .fetch_optional(&mut tx)
        .await?;
        let Some(claimed) = claimed else {
            tx.rollback().await?;
            return Ok(None);
        };
        let contact = Cols::<DB>::new(&claimed).opt_text("contact")?;
        let direct = jobwire_core::placement::DIRECT_SOURCE;
        Sql::<DB>::new(ENSURE_DIRECT)
            .text(direct)
            .int(ms(now))
            .execute(&mut tx)
            .await?;
        let channel = Sql::<DB>::new("SELECT id FROM channels WHERE handle = $1")
            .text(direct)
            .fetch_one(&mut tx)
            .await?;
        let channel_id = Cols::<DB>::new(&channel).id()?;
        let external_id = format!("placement-{id}");
        let inserted = Sql::<DB>::new(
            "INSERT INTO posts (channel_id, external_id, text, author, url, posted_at,
                 received_at, status, updated_at, fingerprint)
             VALUES ($1, $2, $3, $4, NULL, $5, $5, 'queued', $5, $6)
             ON CONFLICT (channel_id, external_id) DO NOTHING
             RETURNING id",
        )
        .int(channel_id)
        .text(external_id.as_str())
        .text(text)
        .text(contact.as_deref())
        .int(ms(now))
        .text(fingerprint)
        .fetch_optional(&mut tx)
        .await?;
        let post = match inserted {
            Some(row) => row,
            None => {
                Sql::<DB>::new("SELECT id FROM posts WHERE channel_id = $1 AND external_id = $2")
                    .int(channel_id)
                    .text(external_id.as_str())
                    .fetch_one(&mut tx)
                    .await?
            }
        };
        let post_id = PostId(Cols::<DB>::new(&post).id()?);
        Sql::<DB>::new("UPDATE placements SET post_id = $1 WHERE id = $2")
            .int(post_id)
            .int(id)
            .execute(&mut tx)
            .await?;
        tx.commit().await?;
        Ok(Some(post_id))
    }

    async fn settle_placements(
        &self,
        deadline: Duration,
        now: DateTime<Utc>,
        limit: u32,
    ) -> Result<Vec<PlacementRow>> {
        let decided = Sql::<DB>::new(
            "SELECT p.id, ps.status AS post_status FROM placements p
             JOIN posts ps ON ps.id = p.post_id
             WHERE p.status = 'published'
               AND ps.status IN ('fanned_out', 'not_job', 'filtered', 'duplicate')
             ORDER BY p.id LIMIT $1",
        )
        .int(i64::from(limit))
        .fetch_all(&self.read)
        .await?;
        let mut moved = Vec::new();
        for row in decided {
            let c = Cols::<DB>::new(&row);
            let id = c.id()?;
            let delivered = c.text("post_status")? == "fanned_out";
            let query = if delivered {
                Sql::<DB>::new(
                    "UPDATE placements SET status = 'delivered', updated_at = $1
                     WHERE id = $2 AND status = 'published' RETURNING *",
                )
            } else {
                Sql::<DB>::new(
                    "UPDATE placements SET status = 'refused', reason = $3, updated_at = $1
                     WHERE id = $2 AND status = 'published' RETURNING *",
                )
            };
            let mut query = query.int(ms(now)).int(id);
            if !delivered {
                query = query.text(REASON_NOT_A_VACANCY);
            }
            if let Some(row) = query.fetch_optional(&self.write).await? {
                moved.push(placement_row(&Cols::<DB>::new(&row))?);
            }
        }
        let late = Sql::<DB>::new(
            "SELECT p.id, p.post_id FROM placements p JOIN posts ps ON ps.id = p.post_id
             WHERE p.status = 'published' AND ps.status IN ('queued', 'waiting')
               AND p.published_at < $1
             ORDER BY p.id LIMIT $2",
        )
        .int(ms(now - deadline))
        .int(i64::from(limit))
        .fetch_all(&self.read)
        .await?;
        for row in late {
            let c = Cols::<DB>::new(&row);
            let (id, post) = (c.id()?, c.int("post_id")?);
            let mut tx = self.write.begin().await?;
            let stopped = Sql::<DB>::new(
                "UPDATE posts SET status = 'filtered', filter_reason = $1, updated_at = $2
                 WHERE id = $3 AND status IN ('queued', 'waiting')",
            )
            .text("placement not classified in time; refunded")
            .int(ms(now))
            .int(post)
            .execute(&mut tx)
            .await?;
            let refused = if stopped == 0 {
                None
            } else {
                Sql::<DB>::new(
                    "UPDATE placements SET status = 'refused', reason = $1, updated_at = $2
                     WHERE id = $3 AND status = 'published' RETURNING *",
                )
                .text(REASON_NOT_CHECKED)
                .int(ms(now))
                .int(id)
                .fetch_optional(&mut tx)
                .await?
            };
            match refused {
                Some(row) => {
                    let row = placement_row(&Cols::<DB>::new(&row))?;
                    tx.commit().await?;
                    moved.push(row);
                }
                None => tx.rollback().await?,
            }
        }
        Ok(moved)
    }

    async fn claim_placement_refund(
        &self,
        id: PlacementId,
        stale: Duration,
        now: DateTime<Utc>,
    ) -> Result<Option<PlacementRow>> {
        let row = Sql::<DB>::new(
            "UPDATE placements SET status = 'refunding', updated_at = $1
             WHERE id = $2 AND charge_id IS NOT NULL
               AND (status = 'refused' OR (status = 'refunding' AND updated_at < $3))
             RETURNING *",
        )
        .int(ms(now))
        .int(id)
        .int(ms(now - stale))
        .fetch_optional(&self.write)
        .await?;
        optional::<DB>(row)
    }

    async fn placements_to_refund(
        &self,
        stale: Duration,
        now: DateTime<Utc>,
        limit: u32,
    ) -> Result<Vec<PlacementId>> {
        // A failed refund waits `REFUND_RETRY` × its failures (at most 100 of them) before the
        // next try; the wait is in the query, so failing refunds never crowd out due ones.
        let rows = Sql::<DB>::new(
            "SELECT id FROM placements
             WHERE charge_id IS NOT NULL
               AND ((status = 'refused'
                     AND updated_at + (CASE WHEN refund_tries > 100 THEN 100 ELSE refund_tries END)
                         * $3 <= $4)
                    OR (status = 'refunding' AND updated_at < $1))
             ORDER BY updated_at, id LIMIT $2",
        )
        .int(ms(now - stale))
        .int(i64::from(limit))
        .int(REFUND_RETRY.num_milliseconds())
        .int(ms(now))
        .fetch_all(&self.read)
        .await?;
        rows.iter()
            .map(|r| Cols::<DB>::new(r).id().map(PlacementId))
            .collect()
    }

    async fn finish_placement_refund(
        &self,
        id: PlacementId,
        refunded: bool,
        now: DateTime<Utc>,
    ) -> Result<()> {
        let query = if refunded {
            Sql::<DB>::new(
                "UPDATE placements SET status = 'refunded', refunded_at = $1, updated_at = $1
                 WHERE id = $2 AND status = 'refunding'",
            )
        } else {
            Sql::<DB>::new(
                "UPDATE placements SET status = 'refused', refund_tries = refund_tries + 1,
                     updated_at = $1
                 WHERE id = $2 AND status = 'refunding'",
            )
        };
        query.int(ms(now)).int(id).execute(&self.write).await?;
        Ok(())
    }
}
