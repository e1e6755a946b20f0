//! The testkit's control endpoints under `/__testkit/` (inspect messages, calls and stats;
//! block chats, inject updates, change limits and latency, reset).

use std::time::Duration;

use axum::{
    Json,
    extract::{Query, State},
    http::StatusCode,
    response::{IntoResponse, Response},
};
use serde::Deserialize;
use serde_json::{Value, json};

use super::{RateLimits, RecordedCall, RecordedMessage, TelegramState};

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
