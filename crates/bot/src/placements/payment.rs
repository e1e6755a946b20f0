//! A placement's payment: the pre-checkout check against the stored draft and its price,
//! and the payment recorded once per charge (from an update, or from reconciliation).

use async_trait::async_trait;
use jobwire_core::placement::{PlacementPayload, PlacementStatus};
use jobwire_store::{PlacementPaid, PlacementRow};
use teloxide::types::PreCheckoutQuery;

use super::Placements;
use crate::BotError;
use crate::events::BotEvent;
use crate::message::user_chat;
use crate::payments::{Payment, PaymentKind};
use crate::texts::{self, Lang, placements as t};
use crate::turn::Turn;

impl Placements {
    /// A placement's successful payment: recorded once per charge, then the employer is told.
    pub(crate) async fn placement_paid(
        &self,
        turn: &Turn<'_>,
        paid: Payment<'_>,
    ) -> Result<(), BotError> {
        let facts = paid.facts;
        if let Some(p) = self.apply(paid).await? {
            let text = if p.status == PlacementStatus::Refused {
                t::paid_for_changed(turn.lang, facts.amount)
            } else {
                t::paid(
                    turn.lang,
                    facts.amount,
                    p.status == PlacementStatus::AwaitingApproval,
                )
            };
            turn.send(text, None).await;
        }
        Ok(())
    }

    /// Why a placement's pre-checkout query is refused, or `None` to accept it.
    pub(crate) async fn check_pre_checkout(
        &self,
        q: &PreCheckoutQuery,
        lang: Lang,
    ) -> Option<String> {
        let refuse_unknown = || Some(texts::billing::refuse_unknown(lang));
        let Some(config) = self.config.as_ref() else {
            return refuse_unknown();
        };
        let Some(payload) = PlacementPayload::parse(&q.invoice_payload) else {
            return refuse_unknown();
        };
        if payload.chat_id != user_chat(q.from.id.0) {
            return refuse_unknown();
        }
        let (invoice, placement) = match (
            self.billing.invoice(&payload.nonce).await,
            self.store
                .placement(jobwire_store::PlacementId(payload.placement))
                .await,
        ) {
            (Ok(Some(i)), Ok(Some(p))) => (i, p),
            (Ok(_), Ok(_)) => return refuse_unknown(),
            (Err(e), _) | (_, Err(e)) => {
                tracing::error!(error = %e, "cannot read a placement for a pre-checkout query");
                return Some(texts::billing::refuse_busy(lang));
            }
        };
        if invoice.chat_id != payload.chat_id || placement.chat_id != payload.chat_id {
            return refuse_unknown();
        }
        if invoice.paid_by.is_some() || placement.charge_id.is_some() {
            return Some(texts::billing::refuse_paid(lang));
        }
        if placement.status != PlacementStatus::Invoiced
            || placement.nonce.as_deref() != Some(payload.nonce.as_str())
        {
            return Some(t::refuse_stale(lang));
        }
        let asked = i64::from(q.total_amount);
        let current = config.price(&placement.draft.categories).map(i64::from);
        if q.currency != jobwire_core::billing::STARS
            || asked != invoice.amount
            || placement.stars != Some(asked)
            || current != Some(asked)
        {
            return Some(texts::billing::refuse_changed(lang));
        }
        None
    }
}

#[async_trait]
impl PaymentKind for Placements {
    /// The placement as paid.
    type Applied = PlacementRow;

    fn owns(&self, invoice_payload: &str) -> bool {
        PlacementPayload::is_placement(invoice_payload)
    }

    /// Records a placement's payment.
    async fn apply(&self, paid: Payment<'_>) -> Result<Option<Self::Applied>, BotError> {
        let (chat_id, p, source) = (paid.chat_id, paid.facts, paid.source);
        let payload = PlacementPayload::parse(&p.invoice_payload);
        let entry = paid.ledger_entry(
            "placement".to_owned(),
            payload.as_ref().map(|x| x.nonce.clone()),
        );
        // Placements switched off since the invoice: the payment is kept and refunded.
        let approval = self.config.as_ref().map(|c| c.approval);
        let outcome = self
            .store
            .apply_placement_payment(
                &entry,
                payload
                    .as_ref()
                    .map(|x| jobwire_store::PlacementId(x.placement)),
                approval,
                self.now(),
            )
            .await?;
        match outcome {
            PlacementPaid::AlreadyApplied => {
                tracing::info!(chat_id, charge = %entry.charge_id, "placement payment applied before; skipped");
                Ok(None)
            }
            PlacementPaid::Applied(row) => {
                BotEvent::PlacementPaid {
                    chat_id,
                    charge: &entry.charge_id,
                    placement: row.id.get(),
                    status: row.status.as_str(),
                    amount: entry.amount,
                    currency: &entry.currency,
                    source: source.as_str(),
                }
                .emit();
                if row.status == PlacementStatus::Refused {
                    self.alerts.send(format!(
                        "jobwire: payment {} of chat {chat_id} is for a placement that was not waiting for it; it is refunded",
                        entry.charge_id
                    ));
                }
                Ok(Some(*row))
            }
        }
    }
}
