//! Reconciliation: Telegram's Stars transactions compared with the ledger. Every payment
//! the ledger lacks is applied by the room that sold it ([`PaymentKind`], held as [`FoundPayments`]), every refund it
//! lacks ends the access, and the admins are told of each.

use std::sync::Arc;

use async_trait::async_trait;
use chrono::Duration;
use jobwire_core::billing::InvoicePayload;
use jobwire_core::clock::Clock;
use jobwire_store::{BillingStore, LedgerKind, LedgerSource, NewLedgerEntry, ReconciliationRun};
use teloxide::prelude::*;
use teloxide::types::{StarTransaction, TransactionPartner, TransactionPartnerUserKind};

use super::facts::{Payment, PaymentFacts};
use crate::BotError;
use crate::alerts::Alerts;
use crate::events::BotEvent;
use crate::telegram::BotRuntime;

/// Stars transactions read per reconciliation (pages of 100).
const RECONCILE_PAGES: u32 = 20;

/// What a room sells: its payments, known by their invoice payload, and how one is applied.
#[async_trait]
pub(crate) trait PaymentKind: Send + Sync {
    /// What a payment applied now gives back, to tell the payer.
    type Applied: Send;
    /// Whether a payment with this invoice payload is this room's.
    fn owns(&self, invoice_payload: &str) -> bool;
    /// Applies a payment once per charge, whatever the number of deliveries of the update
    /// or of processes receiving it, from an update or from reconciliation. `Some` when it
    /// was applied now, `None` when it was applied before.
    async fn apply(&self, paid: Payment<'_>) -> Result<Option<Self::Applied>, BotError>;
}

/// A [`PaymentKind`] as reconciliation holds it, whatever its payments give back.
#[async_trait]
pub(crate) trait FoundPayments: Send + Sync {
    /// Whether a payment with this invoice payload is this room's.
    fn sold(&self, invoice_payload: &str) -> bool;
    /// Applies a payment found among Telegram's transactions, once per charge; whether it
    /// was applied now.
    async fn apply_found(&self, paid: Payment<'_>) -> Result<bool, BotError>;
}

#[async_trait]
impl<K: PaymentKind> FoundPayments for K {
    fn sold(&self, invoice_payload: &str) -> bool {
        self.owns(invoice_payload)
    }

    async fn apply_found(&self, paid: Payment<'_>) -> Result<bool, BotError> {
        Ok(self.apply(paid).await?.is_some())
    }
}

/// Compares Telegram's Stars transactions with the ledger.
pub(crate) struct Reconciler {
    pub store: Arc<dyn BillingStore>,
    pub clock: Arc<dyn Clock>,
    pub alerts: Alerts,
    /// The rooms that sell, asked in order which one a payment is.
    pub kinds: Vec<Arc<dyn FoundPayments>>,
}

/// What reconciling one Stars transaction did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Found {
    /// The ledger had it, or it is not jobwire's.
    Nothing,
    /// A payment the ledger lacked, applied now.
    Payment,
    /// A refund the ledger lacked, applied now.
    Refund,
}

impl Reconciler {
    /// Reads Telegram's Stars transactions (newest first) and applies every payment and refund
    /// the ledger lacks, telling the admins of each. The finished run is stored (the panel's
    /// payments page shows the last one) and returned.
    pub(crate) async fn reconcile_once(
        &self,
        main: &BotRuntime,
    ) -> Result<ReconciliationRun, BotError> {
        let mut run = ReconciliationRun {
            finished_at: self.clock.now(),
            transactions: 0,
            payments: 0,
            refunds: 0,
        };
        for page in 0..RECONCILE_PAGES {
            let list = main
                .bot
                .get_star_transactions()
                .offset(page * 100)
                .limit(100)
                .await
                .map_err(|e| main.error(&e))?;
            let n = list.transactions.len();
            for tx in &list.transactions {
                run.transactions += 1;
                match self.reconcile_one(tx).await? {
                    Found::Nothing => {}
                    Found::Payment => run.payments += 1,
                    Found::Refund => run.refunds += 1,
                }
            }
            if n < 100 {
                break;
            }
        }
        run.finished_at = self.clock.now();
        // What the run did stands whether or not it can be noted.
        if let Err(e) = self.store.record_reconciliation(&run).await {
            tracing::warn!(error = %e, "could not store the reconciliation's outcome");
        }
        Ok(run)
    }

    async fn reconcile_one(&self, tx: &StarTransaction) -> Result<Found, BotError> {
        let raw = serde_json::to_string(tx).unwrap_or_default();
        let charge = tx.id.0.clone();
        // An incoming invoice payment from a user.
        if let Some(TransactionPartner::User(u)) = &tx.source
            && let TransactionPartnerUserKind::InvoicePayment(pay) = &u.kind
        {
            if self
                .store
                .ledger_entry(&charge, LedgerKind::Payment)
                .await?
                .is_some()
            {
                return Ok(Found::Nothing);
            }
            let chat_id = i64::try_from(u.user.id.0).unwrap_or(i64::MAX);
            let payload = pay.invoice_payload.clone().unwrap_or_default();
            let period = pay.subscription_period.map(|s| i64::from(s.seconds()));
            // A subscription's first payment or a renewal: a renewal follows an earlier payment of
            // the same plan.
            let plan = InvoicePayload::parse(&payload)
                .ok()
                .map(|p| p.plan.to_string());
            let earlier = self
                .store
                .ledger(Some(chat_id), 1000)
                .await?
                .iter()
                .any(|l| l.kind == LedgerKind::Payment && l.is_recurring && l.plan_id == plan);
            let facts = PaymentFacts {
                charge_id: charge.clone(),
                provider_charge_id: None,
                invoice_payload: payload,
                amount: i64::from(tx.amount),
                currency: jobwire_core::billing::STARS.to_owned(),
                is_recurring: period.is_some(),
                is_first_recurring: period.is_some() && !earlier,
                expires_at: period.map(|s| tx.date + Duration::seconds(s)),
            };
            let applied = match self.kinds.iter().find(|k| k.sold(&facts.invoice_payload)) {
                Some(kind) => {
                    let paid = Payment {
                        chat_id,
                        facts: &facts,
                        source: LedgerSource::Reconciliation,
                        raw,
                    };
                    kind.apply_found(paid).await?
                }
                None => false,
            };
            if applied {
                BotEvent::Reconciled {
                    kind: "payment",
                    charge: &charge,
                }
                .emit();
                self.alerts.send(format!(
                    "jobwire: Telegram has payment {charge} ({} ⭐, user {chat_id}) that the ledger lacked; applied it",
                    tx.amount
                ));
                return Ok(Found::Payment);
            }
            return Ok(Found::Nothing);
        }
        // A refund to a user (its id is the original charge's).
        if let Some(TransactionPartner::User(u)) = &tx.receiver {
            let have = |kind| self.store.ledger_entry(&charge, kind);
            if have(LedgerKind::Refund).await?.is_some()
                || have(LedgerKind::Refunded).await?.is_some()
            {
                return Ok(Found::Nothing);
            }
            let Some(paid) = have(LedgerKind::Payment).await? else {
                return Ok(Found::Nothing); // a refund of something jobwire never sold
            };
            let chat_id = i64::try_from(u.user.id.0).unwrap_or(i64::MAX);
            let entry = NewLedgerEntry {
                kind: LedgerKind::Refunded,
                charge_id: charge.clone(),
                provider_charge_id: None,
                chat_id,
                plan_id: paid.plan_id.clone(),
                nonce: paid.nonce.clone(),
                amount: i64::from(tx.amount),
                currency: jobwire_core::billing::STARS.to_owned(),
                is_recurring: false,
                is_first_recurring: false,
                subscription_expires_at: None,
                source: LedgerSource::Reconciliation,
                raw,
            };
            if self
                .store
                .apply_refund(&entry, self.clock.now())
                .await?
                .is_some()
            {
                BotEvent::Reconciled {
                    kind: "refund",
                    charge: &charge,
                }
                .emit();
                BotEvent::Refunded {
                    source: "reconciliation",
                    chat_id,
                    charge: &charge,
                }
                .emit();
                self.alerts.send(format!(
                    "jobwire: Telegram refunded payment {charge} (user {chat_id}) without the ledger knowing; access ended"
                ));
                return Ok(Found::Refund);
            }
        }
        Ok(Found::Nothing)
    }
}
