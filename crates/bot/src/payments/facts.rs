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

/// A payment to apply: what it says, the chat that paid, and how jobwire learnt of it.
#[derive(Debug, Clone)]
pub(crate) struct Payment<'a> {
    pub chat_id: i64,
    pub facts: &'a PaymentFacts,
    /// An update, or reconciliation.
    pub source: LedgerSource,
    /// The update or the transaction as received, kept in the ledger.
    pub raw: String,
}

impl Payment<'_> {
    /// The ledger row of this payment, for `plan_id` (a plan, or `placement`).
    pub(crate) fn ledger_entry(&self, plan_id: String, nonce: Option<String>) -> NewLedgerEntry {
        let facts = self.facts;
        NewLedgerEntry {
            kind: LedgerKind::Payment,
            charge_id: facts.charge_id.clone(),
            provider_charge_id: facts.provider_charge_id.clone(),
            chat_id: self.chat_id,
            plan_id: Some(plan_id),
            nonce,
            amount: facts.amount,
            currency: facts.currency.clone(),
            is_recurring: facts.is_recurring,
            is_first_recurring: facts.is_first_recurring,
            subscription_expires_at: facts.expires_at,
            source: self.source,
            raw: self.raw.clone(),
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
