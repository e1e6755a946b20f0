//! Payment updates, to the room that sold the invoice (a placement's payload, or a plan's):
//! the pre-checkout query and the successful payment.

use jobwire_core::placement::PlacementPayload;
use jobwire_store::LedgerSource;
use teloxide::prelude::*;
use teloxide::types::{PreCheckoutQuery, SuccessfulPayment};

use super::Router;
use crate::BotError;
use crate::payments::{Payment, PaymentFacts, answer_pre_checkout};
use crate::telegram::BotRuntime;
use crate::texts::{Lang, billing as t};
use crate::turn::Turn;

impl Router {
    /// Answers a pre-checkout query (Telegram waits at most 10 s); only the main bot sells.
    pub(super) async fn on_pre_checkout(
        &self,
        rt: &BotRuntime,
        q: &PreCheckoutQuery,
    ) -> Result<(), BotError> {
        let lang = Lang::from_code(q.from.language_code.as_deref());
        let placement = PlacementPayload::is_placement(&q.invoice_payload);
        let refusal = if rt.is_main && placement {
            self.placements.check_pre_checkout(q, lang).await
        } else if rt.is_main && self.billing.enabled() {
            self.billing.check_pre_checkout(q, lang).await
        } else {
            Some(t::refuse_unknown(lang))
        };
        answer_pre_checkout(rt, q, refusal, &self.alerts).await
    }

    /// A successful payment: applied once per charge, whatever the number of deliveries of
    /// the update or of processes receiving it.
    pub(super) async fn successful_payment(
        &self,
        turn: &Turn<'_>,
        m: &Message,
        p: &SuccessfulPayment,
    ) -> Result<(), BotError> {
        let facts = PaymentFacts::from(p);
        let paid = Payment {
            chat_id: turn.chat_id,
            facts: &facts,
            source: LedgerSource::Update,
            raw: serde_json::to_string(m).unwrap_or_default(),
        };
        if PlacementPayload::is_placement(&facts.invoice_payload) {
            self.placements.placement_paid(turn, paid).await
        } else {
            self.billing.paid(turn, paid).await
        }
    }
}
