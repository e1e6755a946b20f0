//! The payment ledger (one row per event, never updated) and the invoices jobwire issued.

use chrono::{DateTime, Utc};

use crate::codec::ms;
use crate::sql::{Cols, Dialect, Sql};
use crate::{LedgerId, Result};

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

/// Records a payment in the ledger once per charge: `false` when it was recorded before
/// (then nothing is written).
pub(crate) async fn record_payment<DB: Dialect>(
    tx: &mut sqlx::Transaction<'_, DB>,
    entry: &NewLedgerEntry,
    now: DateTime<Utc>,
) -> Result<bool> {
    let inserted = insert_ledger::<DB>(LedgerKind::Payment, entry, now)
        .fetch_optional(&mut *tx)
        .await?;
    Ok(inserted.is_some())
}

/// Marks the invoice the payment used (its nonce, if any) paid by its charge, unless paid
/// before.
pub(crate) async fn mark_invoice_paid<DB: Dialect>(
    tx: &mut sqlx::Transaction<'_, DB>,
    entry: &NewLedgerEntry,
) -> Result<()> {
    if let Some(nonce) = entry.nonce.as_deref() {
        Sql::<DB>::new("UPDATE invoices SET paid_by = $1 WHERE nonce = $2 AND paid_by IS NULL")
            .text(entry.charge_id.as_str())
            .text(nonce)
            .execute(&mut *tx)
            .await?;
    }
    Ok(())
}

pub(super) fn ledger_row<DB: Dialect>(c: &Cols<'_, DB>) -> Result<LedgerRow> {
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

pub(super) fn invoice_row<DB: Dialect>(c: &Cols<'_, DB>) -> Result<InvoiceRow> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::StoreError;

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
}
