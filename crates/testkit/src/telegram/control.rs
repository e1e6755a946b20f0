//! The testkit's control endpoints under `/__testkit/` (inspect messages, calls and stats;
//! block chats, inject updates, change limits and latency, reset; simulate payments and
//! inspect invoices, pre-checkout answers, Stars ledgers, refunds and subscriptions).

use std::time::Duration;

use axum::{
    Json,
    extract::{Query, State},
    http::StatusCode,
    response::{IntoResponse, Response},
};
use chrono::{DateTime, Utc};
use serde::Deserialize;
use serde_json::{Value, json};

use super::{
    RateLimits, RecordedCall, RecordedMessage, TelegramState,
    payments::{PRE_CHECKOUT_TIMEOUT, PayOptions, PayUser, PaymentError, PreCheckoutAnswer},
};

/// `{"ok": true}`: the answer of a control call that has nothing else to say.
fn ok() -> Response {
    Json(json!({"ok": true})).into_response()
}

#[derive(Deserialize)]
pub(super) struct MessageFilter {
    bot_id: Option<u64>,
    chat_id: Option<i64>,
}

pub(super) async fn tk_messages(
    State(st): State<TelegramState>,
    Query(f): Query<MessageFilter>,
) -> Response {
    let msgs: Vec<RecordedMessage> = match (f.bot_id, f.chat_id) {
        (Some(b), Some(c)) => st.chat_messages(b, c),
        _ => st
            .messages()
            .into_iter()
            .filter(|m| f.bot_id.is_none_or(|b| m.bot_id == b))
            .filter(|m| f.chat_id.is_none_or(|c| m.chat_id == c))
            .collect(),
    };
    Json(msgs).into_response()
}

#[derive(Deserialize)]
pub(super) struct CallFilter {
    bot_id: Option<u64>,
    method: Option<String>,
}

pub(super) async fn tk_calls(
    State(st): State<TelegramState>,
    Query(f): Query<CallFilter>,
) -> Response {
    let calls: Vec<RecordedCall> = st
        .calls()
        .into_iter()
        .filter(|c| f.bot_id.is_none_or(|b| c.bot_id == b))
        .filter(|c| {
            f.method
                .as_deref()
                .is_none_or(|m| c.method.eq_ignore_ascii_case(m))
        })
        .collect();
    Json(calls).into_response()
}

pub(super) async fn tk_stats(State(st): State<TelegramState>) -> Response {
    Json(st.stats()).into_response()
}

#[derive(Deserialize)]
pub(super) struct BlockBody {
    bot_id: u64,
    chat_id: i64,
}

pub(super) async fn tk_block(
    State(st): State<TelegramState>,
    Json(b): Json<BlockBody>,
) -> Response {
    st.block_chat(b.bot_id, b.chat_id);
    ok()
}

pub(super) async fn tk_unblock(
    State(st): State<TelegramState>,
    Json(b): Json<BlockBody>,
) -> Response {
    st.unblock_chat(b.bot_id, b.chat_id);
    ok()
}

#[derive(Deserialize)]
pub(super) struct UpdateBody {
    bot_id: u64,
    update: Value,
}

pub(super) async fn tk_updates(
    State(st): State<TelegramState>,
    Json(b): Json<UpdateBody>,
) -> Response {
    match st.inject_update(b.bot_id, b.update) {
        Ok(id) => Json(json!({"ok": true, "update_id": id})).into_response(),
        Err(e) => (
            StatusCode::BAD_REQUEST,
            Json(json!({"ok": false, "description": e.to_string()})),
        )
            .into_response(),
    }
}

#[derive(Deserialize)]
pub(super) struct LimitsBody {
    limits: Option<RateLimits>,
}

pub(super) async fn tk_limits(
    State(st): State<TelegramState>,
    Json(b): Json<LimitsBody>,
) -> Response {
    st.set_limits(b.limits);
    Json(json!({"ok": true, "limits": b.limits})).into_response()
}

#[derive(Deserialize)]
pub(super) struct LatencyBody {
    latency_ms: u64,
}

pub(super) async fn tk_latency(
    State(st): State<TelegramState>,
    Json(b): Json<LatencyBody>,
) -> Response {
    st.set_latency(Duration::from_millis(b.latency_ms));
    ok()
}

pub(super) async fn tk_reset(State(st): State<TelegramState>) -> Response {
    st.reset();
    ok()
}

/// A payment control call that failed: its status and `{"ok": false, "description"}`.
fn payment_error(e: &PaymentError) -> Response {
    let status = StatusCode::from_u16(e.status()).unwrap_or(StatusCode::BAD_REQUEST);
    (
        status,
        Json(json!({"ok": false, "description": e.to_string()})),
    )
        .into_response()
}

fn default_true() -> bool {
    true
}

#[derive(Deserialize)]
pub(super) struct PayBody {
    bot_id: u64,
    user: PayUser,
    invoice: String,
    #[serde(default = "default_true")]
    deliver_update: bool,
    #[serde(default)]
    duplicate_update: bool,
    currency: Option<String>,
    total_amount: Option<i64>,
    timeout_ms: Option<u64>,
}

pub(super) async fn tk_pay(State(st): State<TelegramState>, Json(b): Json<PayBody>) -> Response {
    let opts = PayOptions {
        deliver_update: b.deliver_update,
        duplicate_update: b.duplicate_update,
        currency: b.currency,
        total_amount: b.total_amount,
        timeout: b
            .timeout_ms
            .map_or(PRE_CHECKOUT_TIMEOUT, Duration::from_millis),
    };
    match st.pay(b.bot_id, &b.user, &b.invoice, opts).await {
        Ok(outcome) => Json(outcome).into_response(),
        Err(e) => payment_error(&e),
    }
}

#[derive(Deserialize)]
pub(super) struct RenewBody {
    bot_id: u64,
    user_id: u64,
    charge_id: String,
    /// Unix time.
    expiration: i64,
}

pub(super) async fn tk_renew(
    State(st): State<TelegramState>,
    Json(b): Json<RenewBody>,
) -> Response {
    let Some(expiration) = DateTime::<Utc>::from_timestamp(b.expiration, 0) else {
        return (
            StatusCode::BAD_REQUEST,
            Json(json!({"ok": false, "description": "expiration is not a valid unix time"})),
        )
            .into_response();
    };
    match st.renew_subscription(b.bot_id, b.user_id, &b.charge_id, expiration) {
        Ok(renewal) => Json(renewal).into_response(),
        Err(e) => payment_error(&e),
    }
}

#[derive(Deserialize)]
pub(super) struct ChargeBody {
    bot_id: u64,
    user_id: u64,
    charge_id: String,
}

pub(super) async fn tk_user_refund(
    State(st): State<TelegramState>,
    Json(b): Json<ChargeBody>,
) -> Response {
    match st.user_refund(b.bot_id, b.user_id, &b.charge_id) {
        Ok(id) => Json(json!({"ok": true, "update_id": id})).into_response(),
        Err(e) => payment_error(&e),
    }
}

#[derive(Deserialize)]
pub(super) struct BotFilter {
    bot_id: u64,
}

pub(super) async fn tk_invoices(
    State(st): State<TelegramState>,
    Query(f): Query<BotFilter>,
) -> Response {
    Json(st.invoices(f.bot_id)).into_response()
}

pub(super) async fn tk_star_transactions(
    State(st): State<TelegramState>,
    Query(f): Query<BotFilter>,
) -> Response {
    Json(st.star_transactions(f.bot_id)).into_response()
}

pub(super) async fn tk_refunds(
    State(st): State<TelegramState>,
    Query(f): Query<BotFilter>,
) -> Response {
    Json(st.refunds(f.bot_id)).into_response()
}

#[derive(Deserialize)]
pub(super) struct AnswerFilter {
    bot_id: Option<u64>,
}

pub(super) async fn tk_pre_checkout_answers(
    State(st): State<TelegramState>,
    Query(f): Query<AnswerFilter>,
) -> Response {
    let answers: Vec<PreCheckoutAnswer> = st
        .pre_checkout_answers()
        .into_iter()
        .filter(|a| f.bot_id.is_none_or(|b| a.bot_id == b))
        .collect();
    Json(answers).into_response()
}

pub(super) async fn tk_subscription(
    State(st): State<TelegramState>,
    Query(b): Query<ChargeBody>,
) -> Response {
    let canceled = st.subscription_canceled(b.bot_id, b.user_id, &b.charge_id);
    Json(json!({"canceled": canceled})).into_response()
}
