//! What a payment says, whoever sold it: the facts of a `successful_payment` or a Stars
//! transaction, its ledger row, and a fresh invoice nonce.

use chrono::{DateTime, Utc};
use jobwire_store::{LedgerKind, LedgerSource, NewLedgerEntry};
use rand::Rng;
use teloxide::types::SuccessfulPayment;

/// A fresh invoice nonce: 16 hex digits (64 random bits).
pub(crate) fn nonce() -> String {
    let n: u64 = rand::rng().random();
    format!("{n:016x}")
}

/// What a payment says, from a `successful_payment` or a Stars transaction.
#[derive(Debug, Clone)]
pub(crate) struct PaymentFacts {
    pub charge_id: String,
    pub provider_charge_id: Option<String>,
    pub invoice_payload: String,
    pub amount: i64,
    pub currency: String,
    pub is_recurring: bool,
    pub is_first_recurring: bool,
    pub expires_at: Option<DateTime<Utc>>,
}

impl PaymentFacts {
    /// The ledger row of this payment, for `plan_id` (a plan, or `placement`).
    pub(crate) fn ledger_entry(
        &self,
        chat_id: i64,
        plan_id: String,
        nonce: Option<String>,
        source: LedgerSource,
        raw: String,
    ) -> NewLedgerEntry {
        NewLedgerEntry {
            kind: LedgerKind::Payment,
            charge_id: self.charge_id.clone(),
            provider_charge_id: self.provider_charge_id.clone(),
            chat_id,
            plan_id: Some(plan_id),
            nonce,
            amount: self.amount,
            currency: self.currency.clone(),
            is_recurring: self.is_recurring,
            is_first_recurring: self.is_first_recurring,
            subscription_expires_at: self.expires_at,
            source,
            raw,
        }
    }
}

impl From<&SuccessfulPayment> for PaymentFacts {
    fn from(p: &SuccessfulPayment) -> Self {
        Self {
            charge_id: p.telegram_payment_charge_id.0.clone(),
            provider_charge_id: Some(p.provider_payment_charge_id.clone())
                .filter(|c| !c.is_empty()),
            invoice_payload: p.invoice_payload.clone(),
            amount: i64::from(p.total_amount),
            currency: p.currency.clone(),
            is_recurring: p.is_recurring,
            is_first_recurring: p.is_first_recurring,
            expires_at: p.subscription_expiration_date,
        }
    }
}
