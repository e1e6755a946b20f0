//! A refund Telegram reports (made elsewhere, e.g. by support), of a plan or a placement.

use std::sync::Arc;

use jobwire_core::billing::InvoicePayload;
use jobwire_core::clock::Clock;
use jobwire_store::{BillingStore, LedgerKind, LedgerSource, NewLedgerEntry};
use teloxide::prelude::*;
use teloxide::types::RefundedPayment;

use crate::BotError;
use crate::events::BotEvent;
use crate::texts::{self, billing as t};
use crate::turn::Turn;

/// Records the refunds Telegram reports.
pub(crate) struct Refunds {
    pub store: Arc<dyn BillingStore>,
    pub clock: Arc<dyn Clock>,
}

impl std::fmt::Debug for Refunds {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Refunds").finish_non_exhaustive()
    }
}

impl Refunds {
    /// A refund Telegram reports (made elsewhere, e.g. by support).
    pub(crate) async fn refunded_payment(
        &self,
        turn: &Turn<'_>,
        m: &Message,
        r: &RefundedPayment,
    ) -> Result<(), BotError> {
        // Telegram may report a refund jobwire made itself (an admin's, a refused
        // placement's): the ledger has it already and the user was told.
        let charge = &r.telegram_payment_charge_id.0;
        if self
            .store
            .ledger_entry(charge, LedgerKind::Refund)
            .await?
            .is_some()
        {
            tracing::debug!(chat_id = turn.chat_id, charge = %charge, "refund jobwire made, reported back");
            return Ok(());
        }
        let placement = jobwire_core::placement::PlacementPayload::is_placement(&r.invoice_payload);
        let payload = InvoicePayload::parse(&r.invoice_payload).ok();
        let entry = NewLedgerEntry {
            kind: LedgerKind::Refunded,
            charge_id: r.telegram_payment_charge_id.0.clone(),
            provider_charge_id: r.provider_payment_charge_id.clone(),
            chat_id: turn.chat_id,
            plan_id: if placement {
                Some("placement".to_owned())
            } else {
                payload.as_ref().map(|p| p.plan.to_string())
            },
            nonce: payload.map(|p| p.nonce),
            amount: i64::from(r.total_amount),
            currency: r.currency.clone(),
            is_recurring: false,
            is_first_recurring: false,
            subscription_expires_at: None,
            source: LedgerSource::Update,
            raw: serde_json::to_string(m).unwrap_or_default(),
        };
        let now = self.clock.now();
        if self.store.apply_refund(&entry, now).await?.is_some() {
            BotEvent::Refunded {
                source: "telegram",
                chat_id: turn.chat_id,
                charge: &entry.charge_id,
            }
            .emit();
            let text = if placement {
                texts::placements::refunded_elsewhere(turn.lang, entry.amount)
            } else {
                t::refunded(turn.lang, entry.amount, &entry.currency)
            };
            turn.send(text, None).await;
        }
        Ok(())
    }
}
