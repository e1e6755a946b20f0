//! Update delivery: `getUpdates` long polling, `setWebhook`/`deleteWebhook`/`getWebhookInfo`
//! and the worker that POSTs pending updates to a bot's webhook.

use std::{sync::Arc, time::Duration};

use chrono::Utc;
use serde_json::{Value, json};

use super::{
    TelegramState,
    errors::{ApiResult, bad, err},
    params::{Params, ParamsExt},
    state::{BotState, UpdateState, Webhook, inc, lock},
    webhook,
};

const CONFLICT_WEBHOOK: &str = "Conflict: can't use getUpdates method while webhook is active; use deleteWebhook to delete the webhook first";
const CONFLICT_POLL: &str = "Conflict: terminated by other getUpdates request; make sure that only one bot instance is running";

/// Takes the updates with `update_id >= offset` after confirming older ones.
fn take_updates(u: &mut UpdateState, offset: Option<i64>, limit: usize) -> Vec<Value> {
    let id_of = |v: &Value| v.get("update_id").and_then(Value::as_i64).unwrap_or(0);
    match offset {
        Some(o) if o < 0 => {
            let keep = usize::try_from(o.unsigned_abs()).unwrap_or(usize::MAX);
            while u.pending.len() > keep {
                u.pending.pop_front();
            }
        }
        Some(o) if o > 0 => u.pending.retain(|v| id_of(v) >= o),
        _ => {}
    }
    u.pending.iter().take(limit).cloned().collect()
}

pub(super) async fn get_updates(st: &TelegramState, bot: &BotState, p: &Params) -> ApiResult {
    let offset = p.int("offset");
    let limit = usize::try_from(p.int("limit").unwrap_or(100).clamp(1, 100)).unwrap_or(100);
    let timeout =
        Duration::from_secs(u64::try_from(p.int("timeout").unwrap_or(0).clamp(0, 50)).unwrap_or(0));
    let deadline = tokio::time::Instant::now() + timeout;
    let my_gen = {
        let mut u = lock(&bot.updates);
        if u.webhook.is_some() {
            return Err(err(409, CONFLICT_WEBHOOK));
        }
        u.poll_gen += 1;
        u.poll_gen
    };
    // A newer getUpdates terminates a waiting one.
    bot.wake_all();
    loop {
        let notified = bot.notify.notified();
        tokio::pin!(notified);
        notified.as_mut().enable();
        {
            let mut u = lock(&bot.updates);
            if u.poll_gen != my_gen {
                return Err(err(409, CONFLICT_POLL));
            }
            if u.webhook.is_some() {
                return Err(err(409, CONFLICT_WEBHOOK));
            }
            let got = take_updates(&mut u, offset, limit);
            if !got.is_empty() || tokio::time::Instant::now() >= deadline {
                return Ok(Value::Array(got));
            }
        }
        tokio::select! {
            () = &mut notified => {}
            () = tokio::time::sleep_until(deadline) => {}
            () = st.inner.cancel.cancelled() => return Ok(json!([])),
        }
    }
}

pub(super) fn set_webhook(st: &TelegramState, bot: &Arc<BotState>, p: &Params) -> ApiResult {
    let url = p.string("url").unwrap_or_default();
    if url.is_empty() {
        return delete_webhook(bot, p);
    }
    let parsed = url::Url::parse(&url).map_err(|_| {
        bad("Bad Request: bad webhook: Failed to resolve host: Name or service not known")
    })?;
    if !matches!(parsed.scheme(), "http" | "https") || parsed.host_str().is_none() {
        return Err(bad(
            "Bad Request: bad webhook: An HTTPS URL must be provided for webhook",
        ));
    }
    let secret = p.string("secret_token").filter(|s| !s.is_empty());
    if let Some(s) = &secret
        && (s.len() > 256
            || !s
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-'))
    {
        return Err(bad(
            "Bad Request: secret token contains unallowed characters",
        ));
    }
    let spawn = {
        let mut u = lock(&bot.updates);
        if p.boolean("drop_pending_updates").unwrap_or(false) {
            u.pending.clear();
        }
        u.webhook = Some(Webhook {
            url,
            secret,
            max_connections: p.int("max_connections"),
            allowed_updates: p.json("allowed_updates"),
        });
        u.last_error = None;
        u.poll_gen += 1;
        let spawn = !u.worker_running;
        u.worker_running = true;
        spawn
    };
    bot.wake_all();
    if spawn {
        tokio::spawn(webhook_worker(st.clone(), Arc::clone(bot)));
    }
    Ok(json!(true))
}

pub(super) fn delete_webhook(bot: &BotState, p: &Params) -> ApiResult {
    {
        let mut u = lock(&bot.updates);
        u.webhook = None;
        if p.boolean("drop_pending_updates").unwrap_or(false) {
            u.pending.clear();
        }
    }
    bot.wake_all();
    Ok(json!(true))
}

pub(super) fn webhook_info(bot: &BotState) -> Value {
    let u = lock(&bot.updates);
    let mut info = json!({
        "url": u.webhook.as_ref().map_or("", |w| w.url.as_str()),
        "has_custom_certificate": false,
        "pending_update_count": u.pending.len(),
    });
    if let (Some(w), Some(obj)) = (&u.webhook, info.as_object_mut()) {
        obj.insert("ip_address".into(), json!("127.0.0.1"));
        obj.insert(
            "max_connections".into(),
            json!(w.max_connections.unwrap_or(40)),
        );
        if let Some(a) = &w.allowed_updates {
            obj.insert("allowed_updates".into(), a.clone());
        }
        if let Some((date, msg)) = &u.last_error {
            obj.insert("last_error_date".into(), json!(date));
            obj.insert("last_error_message".into(), json!(msg));
        }
    }
    info
}

/// Delivers a bot's pending updates, in order, to its webhook while one is set.
async fn webhook_worker(st: TelegramState, bot: Arc<BotState>) {
    let mut failures: u32 = 0;
    loop {
        let notified = bot.notify.notified();
        tokio::pin!(notified);
        notified.as_mut().enable();
        let job = {
            let mut u = lock(&bot.updates);
            match &u.webhook {
                None => {
                    u.worker_running = false;
                    return;
                }
                Some(w) => (w.clone(), u.pending.front().cloned()),
            }
        };
        let (hook, Some(update)) = job else {
            tokio::select! {
                () = &mut notified => {}
                () = st.inner.cancel.cancelled() => return,
            }
            continue;
        };
        let update_id = update.get("update_id").and_then(Value::as_i64);
        let post = webhook::post_json(&hook.url, hook.secret.as_deref(), &update);
        let outcome = tokio::select! {
            r = tokio::time::timeout(st.inner.webhook_timeout, post) => r,
            () = st.inner.cancel.cancelled() => return,
        };
        let error = match outcome {
            Ok(Ok(status)) if (200..300).contains(&status) => None,
            Ok(Ok(status)) => Some(format!("Wrong response from the webhook: {status}")),
            Ok(Err(e)) => Some(e),
            Err(_) => Some("Read timeout expired".to_owned()),
        };
        match error {
            None => {
                failures = 0;
                let mut u = lock(&bot.updates);
                if u.pending
                    .front()
                    .and_then(|v| v.get("update_id"))
                    .and_then(Value::as_i64)
                    == update_id
                {
                    u.pending.pop_front();
                }
                drop(u);
                inc(&st.inner.stats.webhook_delivered);
            }
            Some(msg) => {
                tracing::debug!(bot_id = bot.id, error = %msg, "webhook delivery failed");
                inc(&st.inner.stats.webhook_failed);
                lock(&bot.updates).last_error = Some((Utc::now().timestamp(), msg));
                failures = failures.saturating_add(1);
                let backoff = Duration::from_millis(100u64.saturating_mul(1 << failures.min(6)))
                    .min(Duration::from_secs(5));
                tokio::select! {
                    () = tokio::time::sleep(backoff) => {}
                    () = st.inner.cancel.cancelled() => return,
                }
            }
        }
    }
}
