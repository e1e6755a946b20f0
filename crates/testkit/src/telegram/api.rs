//! The Bot API entry point: token and method checks, parameter validation, dispatch to the
//! method implementations and the `{"ok": ...}` answer envelope.

use std::{
    sync::{Arc, atomic::Ordering},
    time::Duration,
};

use axum::{
    Json,
    body::Bytes,
    extract::{Path, State},
    http::{HeaderMap, StatusCode, Uri, header::CONTENT_TYPE},
    response::{IntoResponse, Response},
};
use serde_json::{Value, json};

use super::{
    TelegramState,
    methods::{
        answer_callback, commands_key, delete_messages, edit_markup, edit_text, get_commands,
        me_json, send_message, send_other, set_commands,
    },
    params::{self, Params},
    payments,
    spec::{self, MethodSpec},
    state::{BotState, inc, lock},
    updates::{delete_webhook, get_updates, set_webhook, webhook_info},
};

use super::errors::{ApiResult, bad, err};

fn respond(st: &TelegramState, result: ApiResult) -> Response {
    let s = &st.inner.stats;
    match result {
        Ok(v) => {
            inc(&s.ok);
            Json(json!({"ok": true, "result": v})).into_response()
        }
        Err(e) => {
            match e.code {
                400 => inc(&s.r400),
                401 => inc(&s.r401),
                403 => inc(&s.r403),
                404 => inc(&s.r404),
                409 => inc(&s.r409),
                429 => inc(&s.r429),
                500..=599 => inc(&s.r5xx),
                _ => {}
            }
            let mut body = json!({"ok": false, "error_code": e.code, "description": e.description});
            if let (Some(n), Some(obj)) = (e.retry_after, body.as_object_mut()) {
                obj.insert("parameters".into(), json!({"retry_after": n}));
            }
            let status = StatusCode::from_u16(e.code).unwrap_or(StatusCode::BAD_REQUEST);
            (status, Json(body)).into_response()
        }
    }
}

pub(super) async fn not_found(State(st): State<TelegramState>) -> Response {
    respond(&st, Err(err(404, "Not Found")))
}

/// Parses a token `^\d+:[A-Za-z0-9_-]{20,}$` and returns the bot id.
fn bot_id_of(token: &str) -> Option<u64> {
    let (id, secret) = token.split_once(':')?;
    if id.is_empty() || !id.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    if secret.len() < 20
        || !secret
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
    {
        return None;
    }
    id.parse().ok()
}

pub(super) async fn bot_api(
    State(st): State<TelegramState>,
    Path((bot_segment, method)): Path<(String, String)>,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    inc(&st.inner.stats.requests);
    let latency = st.inner.latency_us.load(Ordering::Relaxed);
    if latency > 0 {
        tokio::time::sleep(Duration::from_micros(latency)).await;
    }
    let Some(token) = bot_segment.strip_prefix("bot") else {
        return respond(&st, Err(err(404, "Not Found")));
    };
    let Some(bot_id) = bot_id_of(token) else {
        return respond(&st, Err(err(401, "Unauthorized")));
    };
    let Some(spec) = spec::method(&method) else {
        return respond(&st, Err(err(404, "Not Found")));
    };
    let content_type = headers.get(CONTENT_TYPE).and_then(|v| v.to_str().ok());
    let params = match params::collect(uri.query(), content_type, &body) {
        Ok(p) => p,
        Err(e) => {
            tracing::warn!(bot = bot_id, method = %method, error = %e, "fake Telegram: unreadable parameters (400)");
            return respond(&st, Err(bad(e)));
        }
    };
    if let Err(e) = spec::validate(spec, &params) {
        tracing::warn!(bot = bot_id, method = %method, error = %e, "fake Telegram: parameters off the Bot API spec (400)");
        return respond(&st, Err(bad(e)));
    }
    let bot = st.bot(bot_id);
    let result = dispatch(&st, &bot, spec, params).await;
    if let Err(e) = &result
        && e.code == 400
    {
        // What was refused and why: a test that counts 400s can say which call it was.
        tracing::warn!(bot = bot_id, method = %method, description = %e.description, "fake Telegram answered 400");
    }
    respond(&st, result)
}

async fn dispatch(
    st: &TelegramState,
    bot: &Arc<BotState>,
    spec: &'static MethodSpec,
    p: Params,
) -> ApiResult {
    let name = spec.name.as_str();
    let result = match name {
        "getMe" => Ok(me_json(bot.id)),
        "sendMessage" => return send_message(st, bot, &p),
        "getUpdates" => return get_updates(st, bot, &p).await,
        "editMessageText" => edit_text(bot, &p),
        "editMessageReplyMarkup" => edit_markup(bot, &p),
        "deleteMessage" => delete_messages(bot, &p, false),
        "deleteMessages" => delete_messages(bot, &p, true),
        "answerCallbackQuery" => answer_callback(&p),
        "setMyCommands" => set_commands(bot, &p),
        "getMyCommands" => Ok(get_commands(bot, &p)),
        "deleteMyCommands" => {
            lock(&bot.commands).remove(&commands_key(&p));
            Ok(json!(true))
        }
        "setWebhook" => set_webhook(st, bot, &p),
        "deleteWebhook" => delete_webhook(bot, &p),
        "getWebhookInfo" => Ok(webhook_info(bot)),
        "sendInvoice" => payments::send_invoice(st, bot, &p),
        "createInvoiceLink" => payments::create_invoice_link(st, bot, &p),
        "answerPreCheckoutQuery" => payments::answer_pre_checkout(st, bot, &p),
        "refundStarPayment" => payments::refund_star_payment(st, bot, &p),
        "editUserStarSubscription" => payments::edit_star_subscription(bot, &p),
        "getStarTransactions" => Ok(payments::get_star_transactions(bot, &p)),
        "getMyStarBalance" => Ok(payments::star_balance(bot)),
        _ if name.starts_with("send") && spec.returns.iter().any(|r| r == "Message") => {
            return send_other(st, bot, spec, &p);
        }
        _ => Ok(generic_result(spec)),
    };
    if result.is_ok() {
        st.record_call(bot.id, name, p);
    }
    result
}

fn generic_result(spec: &MethodSpec) -> Value {
    match spec.returns.first().map(String::as_str) {
        Some("Integer") => json!(0),
        Some("String") => json!(""),
        Some(r) if r.starts_with("Array of") => json!([]),
        _ => json!(true),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_format() {
        assert_eq!(bot_id_of("123:AAAAAAAAAAAAAAAAAAAA"), Some(123));
        assert_eq!(bot_id_of("123:AAAA"), None);
        assert_eq!(bot_id_of("x123:AAAAAAAAAAAAAAAAAAAA"), None);
        assert_eq!(bot_id_of("123:AAAAAAAAAAAAAAAAAA!A"), None);
        assert_eq!(bot_id_of("123AAAAAAAAAAAAAAAAAAAAAAA"), None);
    }
}
