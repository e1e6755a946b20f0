//! A payment for a plan: the pre-checkout check against the stored invoice and the current
//! price, and the successful payment, applied once per charge (from an update, or from
//! reconciliation).

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use jobwire_core::billing::{InvoicePayload, Plan, STARS, SUBSCRIPTION_DAYS};
use jobwire_core::placement::PlacementPayload;
use jobwire_store::{Grant, PaymentOutcome};
use teloxide::types::PreCheckoutQuery;

use super::Billing;
use crate::BotError;
use crate::events::BotEvent;
use crate::message::user_chat;
use crate::payments::{Payment, PaymentKind};
use crate::texts::{Lang, billing as t};
use crate::turn::Turn;

/// The period a payment buys.
pub(crate) fn grant_of(plan: &Plan, ends_at: Option<DateTime<Utc>>) -> Grant {
    Grant {
        plan_id: plan.id.to_string(),
        categories: plan.categories.clone(),
        days: plan.days,
        renews: plan.renews(),
        ends_at,
    }
}

/// The grant for a payment whose plan is no longer configured: what Telegram charged for
/// (a subscription's period, or 30 days), every category. Rare; the admin is told.
fn grant_without_plan(plan_id: &str, ends_at: Option<DateTime<Utc>>, renews: bool) -> Grant {
    Grant {
        plan_id: plan_id.to_owned(),
        categories: Vec::new(),
        days: SUBSCRIPTION_DAYS,
        renews,
        ends_at,
    }
}

impl Billing {
    /// A successful payment for a plan, from an update: applied once per charge whatever
    /// the number of deliveries of the update or of processes receiving it; the user is told.
    pub(crate) async fn paid(&self, turn: &Turn<'_>, paid: Payment<'_>) -> Result<(), BotError> {
        let facts = paid.facts;
        if let Some((label, until, renewal)) = self.apply(paid).await? {
            let text = if renewal {
                t::renewed(turn.lang, until)
            } else {
                t::payment_received(turn.lang, &label, until, facts.is_recurring)
            };
            turn.send(text, None).await;
        }
        Ok(())
    }

    /// Why a pre-checkout query is refused, or `None` to accept it.
    pub(crate) async fn check_pre_checkout(
        &self,
        q: &PreCheckoutQuery,
        lang: Lang,
    ) -> Option<String> {
        let Ok(payload) = InvoicePayload::parse(&q.invoice_payload) else {
            return Some(t::refuse_unknown(lang));
        };
        if payload.chat_id != user_chat(q.from.id.0) {
            return Some(t::refuse_unknown(lang));
        }
        let invoice = match self.store.invoice(&payload.nonce).await {
            Ok(Some(invoice)) => invoice,
            Ok(None) => return Some(t::refuse_unknown(lang)),
            Err(e) => {
                tracing::error!(error = %e, "cannot read an invoice for a pre-checkout query");
                return Some(t::refuse_busy(lang));
            }
        };
        if invoice.chat_id != payload.chat_id || invoice.plan_id != payload.plan.as_str() {
            return Some(t::refuse_unknown(lang));
        }
        if invoice.paid_by.is_some() {
            return Some(t::refuse_paid(lang));
        }
        let Some(plan) = self.config.plan(payload.plan.as_str()) else {
            return Some(t::refuse_changed(lang));
        };
        // The price asked now must be the invoice's, and the plan's current one.
        let current = if q.currency == STARS {
            Some(i64::from(plan.stars))
        } else {
            self.config
                .provider
                .as_ref()
                .filter(|p| p.currency == q.currency)
                .and(plan.provider_price)
                .and_then(|p| i64::try_from(p).ok())
        };
        let asked = i64::from(q.total_amount);
        if q.currency != invoice.currency || asked != invoice.amount || current != Some(asked) {
            return Some(t::refuse_changed(lang));
        }
        None
    }
}

#[async_trait]
impl PaymentKind for Billing {
    /// The plan's title, the access end, whether it was a renewal.
    type Applied = (String, DateTime<Utc>, bool);

    fn owns(&self, invoice_payload: &str) -> bool {
        !PlacementPayload::is_placement(invoice_payload)
    }

    /// Records a successful payment and the access it buys.
    async fn apply(&self, paid: Payment<'_>) -> Result<Option<Self::Applied>, BotError> {
        let (chat_id, p, source) = (paid.chat_id, paid.facts, paid.source);
        let payload = InvoicePayload::parse(&p.invoice_payload).ok();
        let renewal = p.is_recurring && !p.is_first_recurring;
        let plan_id = payload
            .as_ref()
            .map_or_else(|| "unknown".to_owned(), |x| x.plan.to_string());
        let plan = self.config.plan(&plan_id).cloned();
        let ends_at = p.expires_at;
        let grant = match &plan {
            Some(plan) => grant_of(plan, ends_at),
            None => grant_without_plan(&plan_id, ends_at, p.is_recurring),
        };
        let entry = paid.ledger_entry(plan_id.clone(), payload.as_ref().map(|x| x.nonce.clone()));
        let now = self.now();
        match self.store.apply_payment(&entry, &grant, now).await? {
            PaymentOutcome::AlreadyApplied => {
                tracing::info!(chat_id, charge = %entry.charge_id, "payment applied before; skipped");
                Ok(None)
            }
            PaymentOutcome::Applied(period) => {
                BotEvent::PaymentApplied {
                    chat_id,
                    charge: &entry.charge_id,
                    plan: &plan_id,
                    amount: entry.amount,
                    currency: &entry.currency,
                    until: period.ends_at,
                    renewal,
                    source: source.as_str(),
                }
                .emit();
                if plan.is_none() || payload.is_none() {
                    self.config.alert(format!(
                        "jobwire: payment {} of chat {chat_id} names plan {plan_id:?}, which is not configured: granted {} days of every category",
                        entry.charge_id, grant.days
                    ));
                }
                let label = plan.map_or(plan_id, |p| p.title);
                Ok(Some((label, period.ends_at, renewal)))
            }
        }
    }
}
