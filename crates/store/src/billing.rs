//! Subscriptions and payments: the invoices jobwire issued (their nonces), the payment
//! ledger (one row per event, never updated), the access periods trials and payments bought,
//! and the billing notices sent once each (reminders, the expiry message).
//!
//! Exactly-once lives here: a payment is applied once per `telegram_payment_charge_id`
//! (the ledger's unique `(charge_id, kind)`), in the same transaction as the access it buys,
//! whichever process and however many times the update arrives.

use async_trait::async_trait;
use chrono::{DateTime, Duration, Utc};
use jobwire_core::CategorySlug;
use jobwire_core::billing::{Access, Period};
pub use jobwire_core::ids::{AccessPeriodId, LedgerId};

use crate::codec::{clamp_u64, ms};
use crate::sql::{Cols, Dialect, Sql};
use crate::subscribers::BUMP_SUBSCRIBERS_VERSION;
use crate::*;

mod reconciliation;

pub use reconciliation::ReconciliationRun;

/// An invoice jobwire is about to send: its nonce is stored first, so pre-checkout can tell
/// a payload jobwire issued from a forged or replayed one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewInvoice {
    pub nonce: String,
    pub chat_id: i64,
    pub plan_id: String,
    /// In the currency's smallest unit (Stars are whole).
    pub amount: i64,
    pub currency: String,
}

/// A stored invoice.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InvoiceRow {
    pub nonce: String,
    pub chat_id: i64,
    pub plan_id: String,
    pub amount: i64,
    pub currency: String,
    pub created_at: DateTime<Utc>,
    /// The charge that paid it; `Some` once a successful payment used the nonce.
    pub paid_by: Option<String>,
}

/// What a ledger row records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LedgerKind {
    /// A successful payment (first payment or renewal).
    Payment,
    /// A refund jobwire made (`refundStarPayment`, by an admin).
    Refund,
    /// A refund Telegram reported (`refunded_payment`), made elsewhere.
    Refunded,
}

impl LedgerKind {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Payment => "payment",
            Self::Refund => "refund",
            Self::Refunded => "refunded",
        }
    }

    pub fn parse(raw: &str) -> Option<Self> {
        match raw {
            "payment" => Some(Self::Payment),
            "refund" => Some(Self::Refund),
            "refunded" => Some(Self::Refunded),
            _ => None,
        }
    }
}

/// How jobwire learned of a ledger event.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LedgerSource {
    /// A bot update (`successful_payment`, `refunded_payment`).
    Update,
    /// `getStarTransactions` had it and the ledger did not.
    Reconciliation,
    /// An admin's action.
    Admin,
}

impl LedgerSource {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Update => "update",
            Self::Reconciliation => "reconciliation",
            Self::Admin => "admin",
        }
    }

    pub fn parse(raw: &str) -> Option<Self> {
        match raw {
            "update" => Some(Self::Update),
            "reconciliation" => Some(Self::Reconciliation),
            "admin" => Some(Self::Admin),
            _ => None,
        }
    }
}

/// A ledger event to record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewLedgerEntry {
    pub kind: LedgerKind,
    /// `telegram_payment_charge_id`.
    pub charge_id: String,
    pub provider_charge_id: Option<String>,
    pub chat_id: i64,
    pub plan_id: Option<String>,
    /// The invoice nonce the payment used, if any (a renewal has the first payment's).
    pub nonce: Option<String>,
    /// In the currency's smallest unit.
    pub amount: i64,
    pub currency: String,
    pub is_recurring: bool,
    pub is_first_recurring: bool,
    /// Telegram's `subscription_expiration_date`, for subscription payments.
    pub subscription_expires_at: Option<DateTime<Utc>>,
    pub source: LedgerSource,
    /// The update or transaction as received (JSON).
    pub raw: String,
}

/// A ledger row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LedgerRow {
    pub id: LedgerId,
    pub kind: LedgerKind,
    pub charge_id: String,
    pub provider_charge_id: Option<String>,
    pub chat_id: i64,
    pub plan_id: Option<String>,
    pub nonce: Option<String>,
    pub amount: i64,
    pub currency: String,
    pub is_recurring: bool,
    pub is_first_recurring: bool,
    pub subscription_expires_at: Option<DateTime<Utc>>,
    pub source: LedgerSource,
    pub raw: String,
    pub created_at: DateTime<Utc>,
}

/// The access a trial or a payment buys.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Grant {
    pub plan_id: String,
    /// Empty: every category.
    pub categories: Vec<CategorySlug>,
    pub days: u32,
    /// A Stars subscription that renews itself.
    pub renews: bool,
    /// The end Telegram set (`subscription_expiration_date`); `None`: start + `days`.
    pub ends_at: Option<DateTime<Utc>>,
}

/// A period of access as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AccessPeriodRow {
    pub id: AccessPeriodId,
    pub chat_id: i64,
    pub plan_id: String,
    pub categories: Vec<CategorySlug>,
    pub starts_at: DateTime<Utc>,
    pub ends_at: DateTime<Utc>,
    pub trial: bool,
    pub renews: bool,
    /// The payment that bought it (`None` for a trial).
    pub charge_id: Option<String>,
    /// The subscriber cancelled the renewal: access runs to `ends_at`, no grace day.
    pub canceled_at: Option<DateTime<Utc>>,
    /// Refunded: it gives nothing from then on.
    pub revoked_at: Option<DateTime<Utc>>,
    pub created_at: DateTime<Utc>,
}

impl AccessPeriodRow {
    /// The domain view (see [`jobwire_core::billing::Access`]).
    pub fn to_period(&self) -> Period {
        Period {
            plan: self.plan_id.clone(),
            starts_at: self.starts_at,
            ends_at: self.ends_at,
            categories: self.categories.clone(),
            trial: self.trial,
            renews: self.renews && self.canceled_at.is_none(),
            revoked: self.revoked_at.is_some(),
        }
    }
}

/// The domain view of a subscriber's periods.
pub fn access_of(rows: &[AccessPeriodRow]) -> Access {
    Access::new(rows.iter().map(AccessPeriodRow::to_period).collect())
}

/// What [`BillingStore::apply_payment`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PaymentOutcome {
    /// Recorded now; the period it bought.
    Applied(AccessPeriodRow),
    /// This charge was recorded before (a redelivered update, another process, or
    /// reconciliation): nothing changed.
    AlreadyApplied,
}

/// Billing figures since a moment (the daily report).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BillingCounts {
    /// Subscribers created since.
    pub new_users: u64,
    pub trials_started: u64,
    /// Trials started since whose subscriber has paid since.
    pub trials_converted: u64,
    /// First payments (not renewals).
    pub payments: u64,
    pub renewals: u64,
    /// Refunds made and refunds reported.
    pub refunds: u64,
    /// Paid, per currency (gross, smallest unit), sorted by currency.
    pub revenue: Vec<(String, i64)>,
    /// Refunded, per currency, sorted by currency.
    pub refunded: Vec<(String, i64)>,
}

/// Subscriptions and payments. See the [module docs](self).
#[async_trait]
pub trait BillingStore: Send + Sync {
    /// Stores an invoice's nonce before the invoice is sent.
    async fn add_invoice(&self, invoice: &NewInvoice, now: DateTime<Utc>) -> Result<()>;

    /// The invoice a nonce names.
    async fn invoice(&self, nonce: &str) -> Result<Option<InvoiceRow>>;

    /// Records a payment and the access it buys, once per `entry.charge_id`, in one
    /// transaction: the ledger row ([`LedgerKind::Payment`]), the invoice marked paid (when
    /// `entry.nonce` names one) and the period. The period starts when the subscriber's last
    /// unrevoked period of the same plan ends, or at `now` if that is later, and ends at
    /// `grant.ends_at` or `days` after its start. Bumps the subscribers' version, so
    /// fan-out sees the access at once.
    async fn apply_payment(
        &self,
        entry: &NewLedgerEntry,
        grant: &Grant,
        now: DateTime<Utc>,
    ) -> Result<PaymentOutcome>;

    /// Starts the subscriber's trial at `now`, unless they ever had one: `None` then.
    async fn start_trial(
        &self,
        chat_id: i64,
        grant: &Grant,
        now: DateTime<Utc>,
    ) -> Result<Option<AccessPeriodRow>>;

    /// Records a refund ([`LedgerKind::Refund`] or [`LedgerKind::Refunded`]) once per
    /// charge, whichever kind arrives first (the schema guarantees it: an admin's refund and
    /// Telegram's `refunded_payment` for it are one refund), and revokes the period the
    /// charge bought (`revoked_at = now`). `None` when a refund of this charge was recorded
    /// before. Bumps the subscribers' version.
    async fn apply_refund(
        &self,
        entry: &NewLedgerEntry,
        now: DateTime<Utc>,
    ) -> Result<Option<LedgerId>>;

    /// Cancels (or restores) the renewal of the renewing periods a subscriber has that end
    /// after `now`. Returns how many periods changed. Bumps the subscribers' version.
    async fn set_renewal_canceled(
        &self,
        chat_id: i64,
        canceled: bool,
        now: DateTime<Utc>,
    ) -> Result<u64>;

    /// A subscriber's periods, oldest first.
    async fn access_periods(&self, chat_id: i64) -> Result<Vec<AccessPeriodRow>>;

    /// Every period (of any subscriber) whose end is after `since`, by id: what fan-out and
    /// the reminders need.
    async fn access_periods_ending_after(
        &self,
        since: DateTime<Utc>,
    ) -> Result<Vec<AccessPeriodRow>>;

    /// The ledger, newest first; one subscriber's or everyone's.
    async fn ledger(&self, chat_id: Option<i64>, limit: u32) -> Result<Vec<LedgerRow>>;

    /// The ledger row of one charge and kind.
    async fn ledger_entry(&self, charge_id: &str, kind: LedgerKind) -> Result<Option<LedgerRow>>;

    /// Claims a billing notice (`"remind_3d"`, `"remind_1d"`, `"ended"`, …) of a period:
    /// `true` for the one caller that should send it, `false` for every later one.
    async fn claim_billing_notice(
        &self,
        period: AccessPeriodId,
        notice: &str,
        now: DateTime<Utc>,
    ) -> Result<bool>;

    /// Billing figures since `since`.
    async fn billing_counts(&self, since: DateTime<Utc>) -> Result<BillingCounts>;

    /// Stores a finished reconciliation with Telegram, replacing the one before.
    async fn record_reconciliation(&self, run: &ReconciliationRun) -> Result<()>;

    /// The last finished reconciliation with Telegram; `None` before the first.
    async fn last_reconciliation(&self) -> Result<Option<ReconciliationRun>>;
}

/// The ledger insert of one event: one row per `(charge_id, kind)`, and one refund per
/// charge whatever its kind (`refund` or `refunded`, the partial unique index
/// `payments_one_refund`); none (no `id` returned) when it was recorded before.
pub(crate) fn insert_ledger<DB: Dialect>(
    kind: LedgerKind,
    entry: &NewLedgerEntry,
    now: DateTime<Utc>,
) -> Sql<DB> {
    Sql::<DB>::new(
        "INSERT INTO payments (kind, charge_id, provider_charge_id, chat_id, plan_id, nonce,
             amount, currency, is_recurring, is_first_recurring, subscription_expires_at,
             source, raw, created_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)
         ON CONFLICT DO NOTHING
         RETURNING id",
    )
    .text(kind.as_str())
    .text(entry.charge_id.as_str())
    .text(entry.provider_charge_id.as_deref())
    .int(entry.chat_id)
    .text(entry.plan_id.as_deref())
    .text(entry.nonce.as_deref())
    .int(entry.amount)
    .text(entry.currency.as_str())
    .flag(entry.is_recurring)
    .flag(entry.is_first_recurring)
    .int(entry.subscription_expires_at.map(ms))
    .text(entry.source.as_str())
    .text(entry.raw.as_str())
    .int(ms(now))
}

/// A new access period, returned whole.
fn insert_period<DB: Dialect>(
    chat_id: i64,
    grant: &Grant,
    (starts_at, ends_at): (DateTime<Utc>, DateTime<Utc>),
    trial: bool,
    charge_id: Option<&str>,
    now: DateTime<Utc>,
) -> Sql<DB> {
    // A chat's second trial violates the partial unique index `access_periods_one_trial`:
    // nothing is inserted, nothing returned.
    Sql::<DB>::new(
        "INSERT INTO access_periods (chat_id, plan_id, categories, starts_at, ends_at, trial,
             renews, charge_id, created_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
         ON CONFLICT DO NOTHING
         RETURNING *",
    )
    .int(chat_id)
    .text(grant.plan_id.as_str())
    .json(Some(&grant.categories))
    .int(ms(starts_at))
    .int(ms(ends_at))
    .flag(trial)
    .flag(grant.renews)
    .text(charge_id)
    .int(ms(now))
}

/// The stretch a payment buys: from the end of the subscriber's last unrevoked period of the
/// plan (or `now`, if later) to Telegram's end or `days` later. When Telegram's end comes
/// before that start (a renewal applied after a later one), Telegram's date wins: the end
/// stays and the start moves back to it at most.
fn paid_stretch(
    last_end: Option<DateTime<Utc>>,
    grant: &Grant,
    now: DateTime<Utc>,
) -> (DateTime<Utc>, DateTime<Utc>) {
    let start = last_end.map_or(now, |last| last.max(now));
    let end = grant
        .ends_at
        .unwrap_or_else(|| start + Duration::days(i64::from(grant.days)));
    if start <= end {
        (start, end)
    } else {
        (last_end.map_or(end, |last| last.min(end)), end)
    }
}

/// A category list as stored; a bad slug (written by hand) costs that category only.
fn categories_of(period: i64, raw: Vec<String>) -> Vec<CategorySlug> {
    raw.into_iter()
        .filter_map(|c| {
            CategorySlug::parse(&c)
                .map_err(|e| tracing::warn!(period, error = %e, "ignoring a bad category"))
                .ok()
        })
        .collect()
}

pub(crate) fn access_period_row<DB: Dialect>(c: &Cols<'_, DB>) -> Result<AccessPeriodRow> {
    let id = c.id()?;
    Ok(AccessPeriodRow {
        id: AccessPeriodId(id),
        chat_id: c.int("chat_id")?,
        plan_id: c.text("plan_id")?,
        categories: categories_of(id, c.json("categories")?),
        starts_at: c.time("starts_at")?,
        ends_at: c.time("ends_at")?,
        trial: c.flag("trial")?,
        renews: c.flag("renews")?,
        charge_id: c.opt_text("charge_id")?,
        canceled_at: c.opt_time("canceled_at")?,
        revoked_at: c.opt_time("revoked_at")?,
        created_at: c.time("created_at")?,
    })
}

fn ledger_row<DB: Dialect>(c: &Cols<'_, DB>) -> Result<LedgerRow> {
    Ok(LedgerRow {
        id: LedgerId(c.id()?),
        kind: c.word("kind", LedgerKind::parse)?,
        charge_id: c.text("charge_id")?,
        provider_charge_id: c.opt_text("provider_charge_id")?,
        chat_id: c.int("chat_id")?,
        plan_id: c.opt_text("plan_id")?,
        nonce: c.opt_text("nonce")?,
        amount: c.int("amount")?,
        currency: c.text("currency")?,
        is_recurring: c.flag("is_recurring")?,
        is_first_recurring: c.flag("is_first_recurring")?,
        subscription_expires_at: c.opt_time("subscription_expires_at")?,
        source: c.word("source", LedgerSource::parse)?,
        raw: c.text("raw")?,
        created_at: c.time("created_at")?,
    })
}

fn invoice_row<DB: Dialect>(c: &Cols<'_, DB>) -> Result<InvoiceRow> {
    Ok(InvoiceRow {
        nonce: c.text("nonce")?,
        chat_id: c.int("chat_id")?,
        plan_id: c.text("plan_id")?,
        amount: c.int("amount")?,
        currency: c.text("currency")?,
        created_at: c.time("created_at")?,
        paid_by: c.opt_text("paid_by")?,
    })
}

#[async_trait]
impl<DB: Dialect> BillingStore for SqlStore<DB> {
    async fn add_invoice(&self, invoice: &NewInvoice, now: DateTime<Utc>) -> Result<()> {
        Sql::<DB>::new(
            "INSERT INTO invoices (nonce, chat_id, plan_id, amount, currency, created_at)
             VALUES ($1, $2, $3, $4, $5, $6)",
        )
        .text(invoice.nonce.as_str())
        .int(invoice.chat_id)
        .text(invoice.plan_id.as_str())
        .int(invoice.amount)
        .text(invoice.currency.as_str())
        .int(ms(now))
        .execute(&self.write)
        .await?;
        Ok(())
    }

    async fn invoice(&self, nonce: &str) -> Result<Option<InvoiceRow>> {
        let row = Sql::<DB>::new("SELECT * FROM invoices WHERE nonce = $1")
            .text(nonce)
            .fetch_optional(&self.read)
            .await?;
        row.map(|row| invoice_row(&Cols::<DB>::new(&row)))
            .transpose()
    }

    async fn apply_payment(
        &self,
        entry: &NewLedgerEntry,
        grant: &Grant,
        now: DateTime<Utc>,
    ) -> Result<PaymentOutcome> {
        if entry.kind != LedgerKind::Payment {
            tracing::warn!(charge = %entry.charge_id, kind = entry.kind.as_str(), "apply_payment records a payment whatever the entry's kind");
        }
        let mut tx = self.write.begin().await?;
        // The unique `(charge_id, kind)` decides: a concurrent transaction with the same
        // charge waits here for this one and then inserts nothing.
        let inserted = insert_ledger::<DB>(LedgerKind::Payment, entry, now)
            .fetch_optional(&mut tx)
            .await?;
        if inserted.is_none() {
            tx.rollback().await?;
            return Ok(PaymentOutcome::AlreadyApplied);
        }
        // Bumped before the subscriber's periods are read: the version row's lock queues
        // concurrent billing writes, so two payments of one chat stack their periods instead
        // of both starting at the same end.
        Sql::<DB>::new(BUMP_SUBSCRIBERS_VERSION)
            .execute(&mut tx)
            .await?;
        if let Some(nonce) = entry.nonce.as_deref() {
            Sql::<DB>::new("UPDATE invoices SET paid_by = $1 WHERE nonce = $2 AND paid_by IS NULL")
                .text(entry.charge_id.as_str())
                .text(nonce)
                .execute(&mut tx)
                .await?;
        }
        let last = Sql::<DB>::new(
            "SELECT MAX(ends_at) AS last_end FROM access_periods
             WHERE chat_id = $1 AND plan_id = $2 AND revoked_at IS NULL",
        )
        .int(entry.chat_id)
        .text(grant.plan_id.as_str())
        .fetch_one(&mut tx)
        .await?;
        let last_end = Cols::<DB>::new(&last).opt_time("last_end")?;
        let stretch = paid_stretch(last_end, grant, now);
        let row = insert_period::<DB>(
            entry.chat_id,
            grant,
            stretch,
            false,
            Some(&entry.charge_id),
            now,
        )
        .fetch_one(&mut tx)
        .await?;
        let period = access_period_row(&Cols::<DB>::new(&row))?;
        tx.commit().await?;
        Ok(PaymentOutcome::Applied(period))
    }

    async fn start_trial(
        &self,
        chat_id: i64,
        grant: &Grant,
        now: DateTime<Utc>,
    ) -> Result<Option<AccessPeriodRow>> {
        let end = grant
            .ends_at
            .unwrap_or_else(|| now + Duration::days(i64::from(grant.days)));
        let mut tx = self.write.begin().await?;
        let row = insert_period::<DB>(chat_id, grant, (now, end.max(now)), true, None, now)
            .fetch_optional(&mut tx)
            .await?;
        let Some(row) = row else {
            tx.rollback().await?;
            return Ok(None);
        };
        let period = access_period_row(&Cols::<DB>::new(&row))?;
        Sql::<DB>::new(BUMP_SUBSCRIBERS_VERSION)
            .execute(&mut tx)
            .await?;
        tx.commit().await?;
        Ok(Some(period))
    }

    async fn apply_refund(
        &self,
        entry: &NewLedgerEntry,
        now: DateTime<Utc>,
    ) -> Result<Option<LedgerId>> {
        let kind = match entry.kind {
            LedgerKind::Payment => {
                tracing::warn!(charge = %entry.charge_id, "a refund entry of kind payment is recorded as a refund");
                LedgerKind::Refund
            }
            kind => kind,
        };
        let mut tx = self.write.begin().await?;
        let inserted = insert_ledger::<DB>(kind, entry, now)
            .fetch_optional(&mut tx)
            .await?;
        let Some(row) = inserted else {
            tx.rollback().await?;
            return Ok(None);
        };
        let id = LedgerId(Cols::<DB>::new(&row).id()?);
        Sql::<DB>::new(BUMP_SUBSCRIBERS_VERSION)
            .execute(&mut tx)
            .await?;
        Sql::<DB>::new(
            "UPDATE access_periods SET revoked_at = $1
             WHERE charge_id = $2 AND revoked_at IS NULL",
        )
        .int(ms(now))
        .text(entry.charge_id.as_str())
        .execute(&mut tx)
        .await?;
        // A placement refunded by any road (an admin, the user's dispute, reconciliation) is
        // never published afterwards, nor refunded again.
        Sql::<DB>::new(
            "UPDATE placements SET status = 'refunded', refunded_at = $1, updated_at = $1
             WHERE charge_id = $2
               AND status IN ('awaiting_approval', 'approved', 'refused', 'refunding')",
        )
        .int(ms(now))
        .text(entry.charge_id.as_str())
        .execute(&mut tx)
        .await?;
        tx.commit().await?;
        Ok(Some(id))
    }

    async fn set_renewal_canceled(
        &self,
        chat_id: i64,
        canceled: bool,
        now: DateTime<Utc>,
    ) -> Result<u64> {
        const CANCEL: &str = "UPDATE access_periods SET canceled_at = $1
             WHERE chat_id = $2 AND renews AND ends_at > $1 AND canceled_at IS NULL";
        const RESTORE: &str = "UPDATE access_periods SET canceled_at = NULL
             WHERE chat_id = $2 AND renews AND ends_at > $1 AND canceled_at IS NOT NULL";
        let mut tx = self.write.begin().await?;
        let changed = Sql::<DB>::new(if canceled { CANCEL } else { RESTORE })
            .int(ms(now))
            .int(chat_id)
            .execute(&mut tx)
            .await?;
        if changed > 0 {
            Sql::<DB>::new(BUMP_SUBSCRIBERS_VERSION)
                .execute(&mut tx)
                .await?;
        }
        tx.commit().await?;
        Ok(changed)
    }

    async fn access_periods(&self, chat_id: i64) -> Result<Vec<AccessPeriodRow>> {
        Sql::<DB>::new("SELECT * FROM access_periods WHERE chat_id = $1 ORDER BY id")
            .int(chat_id)
            .fetch_each(&self.read, access_period_row::<DB>)
            .await
    }

    async fn access_periods_ending_after(
        &self,
        since: DateTime<Utc>,
    ) -> Result<Vec<AccessPeriodRow>> {
        Sql::<DB>::new("SELECT * FROM access_periods WHERE ends_at > $1 ORDER BY id")
            .int(ms(since))
            .fetch_each(&self.read, access_period_row::<DB>)
            .await
    }

    async fn ledger(&self, chat_id: Option<i64>, limit: u32) -> Result<Vec<LedgerRow>> {
        let query = match chat_id {
            Some(chat_id) => Sql::<DB>::new(
                "SELECT * FROM payments WHERE chat_id = $1 ORDER BY id DESC LIMIT $2",
            )
            .int(chat_id),
            None => Sql::<DB>::new("SELECT * FROM payments ORDER BY id DESC LIMIT $1"),
        };
        query
            .int(i64::from(limit))
            .fetch_each(&self.read, ledger_row::<DB>)
            .await
    }

    async fn ledger_entry(&self, charge_id: &str, kind: LedgerKind) -> Result<Option<LedgerRow>> {
        let row = Sql::<DB>::new("SELECT * FROM payments WHERE charge_id = $1 AND kind = $2")
            .text(charge_id)
            .text(kind.as_str())
            .fetch_optional(&self.read)
            .await?;
        row.map(|row| ledger_row(&Cols::<DB>::new(&row)))
            .transpose()
    }

    async fn claim_billing_notice(
        &self,
        period: AccessPeriodId,
        notice: &str,
        now: DateTime<Utc>,
    ) -> Result<bool> {
        let inserted = Sql::<DB>::new(
            "INSERT INTO billing_notices (period_id, notice, sent_at) VALUES ($1, $2, $3)
             ON CONFLICT (period_id, notice) DO NOTHING",
        )
        .int(period.get())
        .text(notice)
        .int(ms(now))
        .execute(&self.write)
        .await?;
        Ok(inserted > 0)
    }

    async fn record_reconciliation(&self, run: &ReconciliationRun) -> Result<()> {
        reconciliation::record(self, run).await
    }

    async fn last_reconciliation(&self) -> Result<Option<ReconciliationRun>> {
        reconciliation::last(self).await
    }

    async fn billing_counts(&self, since: DateTime<Utc>) -> Result<BillingCounts> {
        let since = ms(since);
        let row = Sql::<DB>::new(
            "SELECT
                 (SELECT COUNT(*) FROM subscribers WHERE created_at >= $1) AS new_users,
                 (SELECT COUNT(*) FROM access_periods WHERE trial AND created_at >= $1)
                     AS trials_started,
                 (SELECT COUNT(*) FROM access_periods a WHERE a.trial AND a.created_at >= $1
                     AND EXISTS (SELECT 1 FROM payments p WHERE p.chat_id = a.chat_id
                         AND p.kind = 'payment' AND p.created_at >= $1)) AS trials_converted,
                 (SELECT COUNT(*) FROM payments WHERE kind = 'payment' AND created_at >= $1
                     AND NOT (is_recurring AND NOT is_first_recurring)) AS payments,
                 (SELECT COUNT(*) FROM payments WHERE kind = 'payment' AND created_at >= $1
                     AND is_recurring AND NOT is_first_recurring) AS renewals,
                 (SELECT COUNT(*) FROM payments WHERE kind IN ('refund', 'refunded')
                     AND created_at >= $1) AS refunds",
        )
        .int(since)
        .fetch_one(&self.read)
        .await?;
        let c = Cols::<DB>::new(&row);
        let mut counts = BillingCounts {
            new_users: clamp_u64(c.int("new_users")?),
            trials_started: clamp_u64(c.int("trials_started")?),
            trials_converted: clamp_u64(c.int("trials_converted")?),
            payments: clamp_u64(c.int("payments")?),
            renewals: clamp_u64(c.int("renewals")?),
            refunds: clamp_u64(c.int("refunds")?),
            revenue: Vec::new(),
            refunded: Vec::new(),
        };
        let sums = Sql::<DB>::new(
            "SELECT kind, currency, CAST(SUM(amount) AS BIGINT) AS total FROM payments
             WHERE created_at >= $1 GROUP BY kind, currency",
        )
        .int(since)
        .fetch_each(&self.read, |c| {
            Ok((
                c.word("kind", LedgerKind::parse)?,
                c.text("currency")?,
                c.int("total")?,
            ))
        })
        .await?;
        let mut revenue = std::collections::BTreeMap::<String, i64>::new();
        let mut refunded = std::collections::BTreeMap::<String, i64>::new();
        for (kind, currency, total) in sums {
            let into = match kind {
                LedgerKind::Payment => &mut revenue,
                LedgerKind::Refund | LedgerKind::Refunded => &mut refunded,
            };
            let sum = into.entry(currency).or_insert(0);
            *sum = sum.saturating_add(total);
        }
        counts.revenue = revenue.into_iter().collect();
        counts.refunded = refunded.into_iter().collect();
        Ok(counts)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A ledger row of `kind` and `source` as SQLite returns it.
    async fn decode(kind: &str, source: &str) -> Result<LedgerRow> {
        let pool = sqlx::SqlitePool::connect("sqlite::memory:").await?;
        let row = sqlx::query(
            "SELECT 1 AS id, $1 AS kind, 'c' AS charge_id, NULL AS provider_charge_id,
                 7 AS chat_id, NULL AS plan_id, NULL AS nonce, 5 AS amount, 'XTR' AS currency,
                 0 AS is_recurring, 0 AS is_first_recurring, NULL AS subscription_expires_at,
                 $2 AS source, '{}' AS raw, 0 AS created_at",
        )
        .bind(kind)
        .bind(source)
        .fetch_one(&pool)
        .await?;
        ledger_row(&Cols::<sqlx::Sqlite>::new(&row))
    }

    #[tokio::test]
    async fn unknown_ledger_words_are_corrupt() {
        assert!(decode("payment", "update").await.is_ok());
        assert!(matches!(
            decode("chargeback", "update").await,
            Err(StoreError::Corrupt { column: "kind", .. })
        ));
        assert!(matches!(
            decode("refund", "carrier pigeon").await,
            Err(StoreError::Corrupt {
                column: "source",
                ..
            })
        ));
    }

    #[test]
    fn telegram_end_wins_over_the_stacked_start() {
        let t = DateTime::from_timestamp_millis(1_767_225_600_000).unwrap_or_default();
        let g = |ends_at| Grant {
            plan_id: "p".to_owned(),
            categories: Vec::new(),
            days: 30,
            renews: true,
            ends_at,
        };
        let d = Duration::days;
        assert_eq!(paid_stretch(None, &g(None), t), (t, t + d(30)));
        assert_eq!(
            paid_stretch(Some(t + d(5)), &g(None), t),
            (t + d(5), t + d(35))
        );
        assert_eq!(paid_stretch(Some(t - d(5)), &g(None), t), (t, t + d(30)));
        assert_eq!(
            paid_stretch(Some(t + d(60)), &g(Some(t + d(30))), t),
            (t + d(30), t + d(30))
        );
        // A late renewal of a stretch that already ended keeps its place in the past.
        assert_eq!(
            paid_stretch(Some(t - d(40)), &g(Some(t - d(10))), t),
            (t - d(40), t - d(10))
        );
    }
}
