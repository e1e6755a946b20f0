//! Refunding a Stars payment: an admin's (through the panel or the API), or a refused
//! placement's. `refundStarPayment`, then the ledger row and the end of the access it bought.

use std::sync::Arc;

use chrono::{DateTime, Utc};
use jobwire_store::{BillingStore, LedgerKind, LedgerSource, NewLedgerEntry};
use teloxide::prelude::*;
use teloxide::types::TelegramTransactionId;

use crate::BotError;
use crate::events::BotEvent;
use crate::telegram::describe;

/// An admin's refund of a Stars payment: `refundStarPayment`, then the ledger row and the end
/// of the access the payment bought. A refund Telegram refuses (unknown, already refunded)
/// is an error naming why.
pub async fn refund_star_payment<S: BillingStore + ?Sized>(
    store: &Arc<S>,
    bot: &Bot,
    token: &str,
    charge_id: &str,
    now: DateTime<Utc>,
) -> Result<i64, BotError> {
    refund_star_payment_for(store.as_ref(), bot, token, charge_id, "admin", now).await
}

/// [`refund_star_payment`], saying why (`admin`, `placement`) in the log, the metric and the
/// ledger row's raw record.
pub(crate) async fn refund_star_payment_for<S: BillingStore + ?Sized>(
    store: &S,
    bot: &Bot,
    token: &str,
    charge_id: &str,
    why: &'static str,
    now: DateTime<Utc>,
) -> Result<i64, BotError> {
    let paid = store
        .ledger_entry(charge_id, LedgerKind::Payment)
        .await?
        .ok_or_else(|| BotError::Config(format!("no payment {charge_id:?} in the ledger")))?;
    if store
        .ledger_entry(charge_id, LedgerKind::Refund)
        .await?
        .is_some()
        || store
            .ledger_entry(charge_id, LedgerKind::Refunded)
            .await?
            .is_some()
    {
        return Err(BotError::Config(format!(
            "payment {charge_id:?} was refunded before"
        )));
    }
    let user = UserId(u64::try_from(paid.chat_id).unwrap_or(0));
    bot.refund_star_payment(user, TelegramTransactionId(charge_id.to_owned()))
        .await
        .map_err(|e| BotError::Telegram {
            bot: "main".into(),
            message: describe(&e, token),
        })?;
    let entry = NewLedgerEntry {
        kind: LedgerKind::Refund,
        charge_id: charge_id.to_owned(),
        provider_charge_id: None,
        chat_id: paid.chat_id,
        plan_id: paid.plan_id.clone(),
        nonce: paid.nonce.clone(),
        amount: paid.amount,
        currency: paid.currency.clone(),
        is_recurring: false,
        is_first_recurring: false,
        subscription_expires_at: None,
        source: LedgerSource::Admin,
        raw: serde_json::json!({ "refund_star_payment": charge_id, "for": why }).to_string(),
    };
    store.apply_refund(&entry, now).await?;
    BotEvent::Refunded {
        source: why,
        chat_id: paid.chat_id,
        charge: charge_id,
    }
    .emit();
    Ok(paid.chat_id)
}
