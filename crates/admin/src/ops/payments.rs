//! Refunds of Stars payments through the main bot.

use chrono::Utc;
use jobwire_store::{LedgerKind, LedgerRow};

use super::{Actor, ChargeId, OpError};
use crate::state::AdminState;

/// A refund made: the payment's chat and the payment itself.
#[derive(Debug, Clone)]
pub struct Refunded {
    pub chat_id: i64,
    pub payment: LedgerRow,
}

impl AdminState {
    /// Refunds a Stars payment through the main bot (`refundStarPayment`), records it in
    /// the ledger and ends the access it bought. A payment refunded before, or made in
    /// another currency, is a conflict; without a main bot it is unavailable.
    pub async fn refund(
        &self,
        actor: &Actor,
        charge: &ChargeId,
        reason: Option<&str>,
    ) -> Result<Refunded, OpError> {
        let charge = charge.0.trim();
        let store = &self.store;
        let paid = store
            .ledger_entry(charge, LedgerKind::Payment)
            .await?
            .ok_or_else(|| OpError::NotFound(format!("no payment {charge:?} in the ledger")))?;
        for kind in [LedgerKind::Refund, LedgerKind::Refunded] {
            if store.ledger_entry(charge, kind).await?.is_some() {
                return Err(OpError::Conflict(format!(
                    "payment {charge:?} was refunded before"
                )));
            }
        }
        if paid.currency != jobwire_core::billing::STARS {
            return Err(OpError::Conflict(format!(
                "payment {charge:?} was made in {}: refund it with the payment provider",
                paid.currency
            )));
        }
        let (bot, token) = self.main_bot.as_ref().ok_or_else(|| {
            OpError::Unavailable("refunds need the main bot: set telegram.main_bot".to_owned())
        })?;
        let chat_id = jobwire_bot::billing::refund_star_payment(
            store,
            bot,
            token.expose(),
            charge,
            Utc::now(),
        )
        .await
        .map_err(|e| OpError::Telegram(e.to_string()))?;
        let mut detail = format!("{charge} {} {}", paid.amount, paid.currency);
        if let Some(r) = reason.map(str::trim).filter(|r| !r.is_empty()) {
            detail.push_str(": ");
            detail.push_str(r);
        }
        self.audit(
            actor,
            "payment.refund",
            &format!("chat {}", paid.chat_id),
            &detail,
        )
        .await;
        tracing::info!(charge = %charge, chat_id, "admin: payment refunded");
        Ok(Refunded {
            chat_id,
            payment: paid,
        })
    }
}
