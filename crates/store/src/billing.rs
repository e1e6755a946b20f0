//! Subscriptions and payments: the invoices jobwire issued (their nonces), the payment
//! ledger (one row per event, never updated), the access periods trials and payments bought,
//! and the billing notices sent once each (reminders, the expiry message).
//!
//! Exactly-once lives here: a payment is applied once per `telegram_payment_charge_id`
//! (the ledger's unique `(charge_id, kind)`), in the same transaction as the access it buys,
//! whichever process and however many times the update arrives.

use async_trait::async_trait;
use chrono::{DateTime, Duration, Utc};
pub use jobwire_core::ids::{AccessPeriodId, LedgerId};

use crate::codec::{clamp_u64, ms};
use crate::sql::{Cols, Dialect, Sql};
use crate::subscribers::BUMP_SUBSCRIBERS_VERSION;
use crate::*;

mod access;
mod ledger;
mod reconciliation;

pub(crate) use access::access_period_row;
pub use access::{AccessPeriodRow, Grant, access_of};
use access::{insert_period, paid_stretch};
pub use ledger::{InvoiceRow, LedgerKind, LedgerRow, LedgerSource, NewInvoice, NewLedgerEntry};
pub(crate) use ledger::{insert_ledger, mark_invoice_paid, record_payment};
use ledger::{invoice_row, ledger_row};
pub use reconciliation::ReconciliationRun;

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
        if !record_payment::<DB>(&mut tx, entry, now).await? {
            tx.rollback().await?;
            return Ok(PaymentOutcome::AlreadyApplied);
        }
        // Bumped before the subscriber's periods are read: the version row's lock queues
        // concurrent billing writes, so two payments of one chat stack their periods instead
        // of both starting at the same end.
        Sql::<DB>::new(BUMP_SUBSCRIBERS_VERSION)
            .execute(&mut tx)
            .await?;
        mark_invoice_paid::<DB>(&mut tx, entry).await?;
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
