//! The Bot API methods after the invoice: answering pre-checkout queries, refunds,
//! cancelling a subscription, and the Stars ledger and balance.

use chrono::Utc;
use serde_json::{Value, json};

use super::{
    Answer, PreCheckoutAnswer, RefundOrigin, STARS, StarTransactionKind, StarTransactionRecord,
    record_refund,
};
use crate::telegram::{
    TelegramState,
    errors::{ApiResult, bad},
    params::{Params, ParamsExt},
    state::{BotState, lock},
};

/// `answerPreCheckoutQuery`: each query is answered once.
pub(in crate::telegram) fn answer_pre_checkout(
    st: &TelegramState,
    bot: &BotState,
    p: &Params,
) -> ApiResult {
    let query_id = p.string("pre_checkout_query_id").unwrap_or_default();
    let ok = p.boolean("ok").unwrap_or(false);
    let error_message = p.string("error_message").filter(|m| !m.is_empty());
    if !ok && error_message.is_none() {
        return Err(bad(
            "Bad Request: error_message is required when ok is false",
        ));
    }
    let mut pay = lock(&bot.payments);
    let q = pay
        .pending
        .remove(&query_id)
        .ok_or_else(|| bad("Bad Request: QUERY_ID_INVALID"))?;
    pay.answers.push(PreCheckoutAnswer {
        seq: st.next_seq(),
        bot_id: bot.id,
        query_id,
        user_id: q.user_id,
        invoice_payload: q.invoice_payload,
        currency: q.currency,
        total_amount: q.total_amount,
        ok,
        error_message: error_message.clone(),
        at: Utc::now(),
    });
    // pay() may have stopped waiting; the answer is recorded anyway.
    let _ = q.tx.send(Answer { ok, error_message });
    Ok(json!(true))
}

fn user_and_charge(p: &Params) -> (Option<u64>, String) {
    let user_id = p.int("user_id").and_then(|u| u64::try_from(u).ok());
    let charge_id = p.string("telegram_payment_charge_id").unwrap_or_default();
    (user_id, charge_id)
}

const CHARGE_NOT_FOUND: &str = "Bad Request: CHARGE_NOT_FOUND";

/// `refundStarPayment`.
pub(in crate::telegram) fn refund_star_payment(
    st: &TelegramState,
    bot: &BotState,
    p: &Params,
) -> ApiResult {
    let (user_id, charge_id) = user_and_charge(p);
    let mut pay = lock(&bot.payments);
    let charge = user_id
        .and_then(|u| pay.charge_of(u, &charge_id))
        .filter(|c| c.currency == STARS)
        .ok_or_else(|| bad(CHARGE_NOT_FOUND))?;
    if charge.refunded {
        return Err(bad("Bad Request: CHARGE_ALREADY_REFUNDED"));
    }
    charge.refunded = true;
    let charge = charge.clone();
    record_refund(st, bot.id, &mut pay, &charge_id, &charge, RefundOrigin::Bot);
    Ok(json!(true))
}

/// `editUserStarSubscription`.
pub(in crate::telegram) fn edit_star_subscription(bot: &BotState, p: &Params) -> ApiResult {
    let (user_id, charge_id) = user_and_charge(p);
    let canceled = p.boolean("is_canceled").unwrap_or(false);
    let mut pay = lock(&bot.payments);
    let first = user_id
        .and_then(|u| pay.charge_of(u, &charge_id))
        .and_then(|c| c.subscription.clone())
        .ok_or_else(|| bad(CHARGE_NOT_FOUND))?;
    let sub = pay
        .subscriptions
        .get_mut(&first)
        .ok_or_else(|| bad(CHARGE_NOT_FOUND))?;
    sub.canceled = canceled;
    Ok(json!(true))
}

/// `getStarTransactions`: newest first, `offset` skipped, at most `limit` (1-100, default 100).
pub(in crate::telegram) fn get_star_transactions(bot: &BotState, p: &Params) -> Value {
    let offset = usize::try_from(p.int("offset").unwrap_or(0).max(0)).unwrap_or(usize::MAX);
    let limit = usize::try_from(p.int("limit").unwrap_or(100).clamp(1, 100)).unwrap_or(100);
    let pay = lock(&bot.payments);
    let transactions: Vec<Value> = pay
        .ledger
        .iter()
        .rev()
        .skip(offset)
        .take(limit)
        .map(StarTransactionRecord::to_json)
        .collect();
    json!({ "transactions": transactions })
}

/// `getMyStarBalance`: incoming minus refunded Stars.
pub(in crate::telegram) fn star_balance(bot: &BotState) -> Value {
    let pay = lock(&bot.payments);
    let balance: i64 = pay
        .ledger
        .iter()
        .map(|t| match t.kind {
            StarTransactionKind::Refund => -t.amount,
            _ => t.amount,
        })
        .sum();
    json!({ "amount": balance })
}
