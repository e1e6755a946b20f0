//! A local Telegram Bot API server faithful enough for teloxide to work unchanged.
//!
//! Start one with [`FakeTelegram::start`] and give [`FakeTelegram::url`] to teloxide
//! (`Bot::new(token).set_api_url(url)`), or embed [`router`] in another axum server.
//!
//! # What a call goes through
//!
//! `POST|GET /bot<token>/<method>` (method names are case-insensitive, as on Telegram);
//! parameters come from the query string and a JSON, urlencoded or multipart body. Every
//! call is checked in this order, and the first failure is the answer:
//!
//! 1. **auth** — the token must look like `^\d+:[A-Za-z0-9_-]{20,}$`, else 401 `Unauthorized`;
//! 2. **method** — it must exist in the Bot API 10.1 spec, else 404 `Not Found`;
//! 3. **parameters** — required ones present, values of the documented types, else 400
//!    (unknown parameters are ignored, as Telegram does);
//! 4. **blocked chat** — a chat blocked with [`TelegramState::block_chat`] answers 403
//!    `Forbidden: bot was blocked by the user` to send and edit methods;
//! 5. **injected faults** (send methods only) — the next answers queued with
//!    [`TelegramState::fail_next_sends`] (e.g. `500 Internal Server Error`);
//! 6. **rate limit** (send methods only) — trailing sliding windows per bot (1 s), per private
//!    chat (1 s) and per group (negative chat id, 60 s); a message that would exceed one is
//!    answered 429 `Too Many Requests: retry after N` with `parameters.retry_after = N`, the
//!    whole seconds until a slot frees (at least 1);
//! 7. **content** — entity parsing (HTML), empty text, length (4096 Unicode scalar values of
//!    visible text after parsing and trimming; 1024 for captions), then the inline keyboard
//!    (`BUTTON_DATA_INVALID`, `BUTTON_URL_INVALID`), all 400.
//!
//! Messages rejected at any step are neither recorded nor counted toward a window.
//!
//! Deviations from the real service, on purpose: webhooks may be plain `http://` on any port
//! (the real one wants HTTPS on 443/80/88/8443); MarkdownV2/Markdown are not parsed (400);
//! methods without dedicated behaviour answer after the parameter checks with a neutral
//! result derived from the spec's return type (`true`, `0`, `""`, `[]`, a minimal `Message`
//! for send methods), and `true` for methods returning other objects.

mod api;
mod checks;
mod control;
pub mod html;
mod limits;
mod methods;
mod params;
mod spec;
mod state;
mod updates;
mod webhook;

use std::{net::SocketAddr, ops::Deref, time::Duration};

use axum::{
    Router,
    extract::DefaultBodyLimit,
    routing::{any, get, post},
};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::{TestkitError, server::Server};
use api::{bot_api, not_found};
use control::{
    tk_block, tk_calls, tk_latency, tk_limits, tk_messages, tk_reset, tk_stats, tk_unblock,
    tk_updates,
};
pub use state::TelegramState;

/// Telegram's sending limits for one bot.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct RateLimits {
    /// Messages per second across all chats of one bot (Telegram: about 30).
    pub global_per_sec: u32,
    /// Messages per second into one private chat (Telegram: 1).
    pub per_chat_per_sec: u32,
    /// Messages per minute into one group (negative chat id; Telegram: 20).
    pub per_group_per_min: u32,
}

impl Default for RateLimits {
    fn default() -> Self {
        RateLimits {
            global_per_sec: 30,
            per_chat_per_sec: 1,
            per_group_per_min: 20,
        }
    }
}

/// Configuration of a [`FakeTelegram`].
#[derive(Debug, Clone)]
pub struct FakeTelegramConfig {
    /// Sending limits; `None` lifts all limits. Default: Telegram's.
    pub limits: Option<RateLimits>,
    /// Delay added before answering each Bot API call. Default: none.
    pub latency: Duration,
    /// Timeout of one webhook delivery attempt. Default: 10 s.
    pub webhook_timeout: Duration,
}

impl Default for FakeTelegramConfig {
    fn default() -> Self {
        FakeTelegramConfig {
            limits: Some(RateLimits::default()),
            latency: Duration::ZERO,
            webhook_timeout: Duration::from_secs(10),
        }
    }
}

/// A message the fake accepted (from `sendMessage` or another `send*` method).
///
/// Never holds the token: only the bot id (the number before `:`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RecordedMessage {
    /// Global acceptance order across all bots and chats, from 1.
    pub seq: u64,
    /// The bot's id (the number before `:` in its token).
    pub bot_id: u64,
    /// Target chat.
    pub chat_id: i64,
    /// Message id assigned by the fake, increasing per chat from 1.
    pub message_id: i64,
    /// The Bot API method that sent it, canonical spelling (e.g. `sendMessage`).
    pub method: String,
    /// The raw text (or caption) as sent, before entity parsing.
    pub text: String,
    /// `parse_mode` as sent.
    pub parse_mode: Option<String>,
    /// The visible text after entity parsing and trimming (what the user sees).
    pub visible_text: String,
    /// Entities of the visible text, as the Bot API returns them (UTF-16 offsets).
    pub entities: Vec<Value>,
    /// `reply_markup` as sent (decoded if it was JSON-encoded in a string).
    pub reply_markup: Option<Value>,
    /// When the fake accepted it.
    pub received_at: DateTime<Utc>,
    /// When it was last edited (`editMessageText` / `editMessageReplyMarkup`).
    pub edited_at: Option<DateTime<Utc>>,
    /// Whether it was deleted with `deleteMessage(s)`.
    pub deleted: bool,
}

/// A successful call other than `sendMessage` and `getUpdates` (e.g. `answerCallbackQuery`,
/// `setMyCommands`, `answerPreCheckoutQuery`); the most recent 10,000 are kept.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RecordedCall {
    /// Global order, shared with [`RecordedMessage::seq`].
    pub seq: u64,
    /// The bot's id.
    pub bot_id: u64,
    /// Canonical method name.
    pub method: String,
    /// The call's parameters.
    pub params: Value,
    /// When it was answered.
    pub at: DateTime<Utc>,
}

/// Counters of a [`FakeTelegram`] since start (or the last reset).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FakeTelegramStats {
    /// Bot API calls received.
    pub requests: u64,
    /// Calls answered `ok: true`.
    pub ok: u64,
    /// Messages accepted and recorded.
    pub accepted: u64,
    /// Calls answered 400.
    pub rejected_400: u64,
    /// Calls answered 401 (bad token).
    pub rejected_401: u64,
    /// Calls answered 403 (blocked chat).
    pub rejected_403: u64,
    /// Calls answered 404 (unknown method or path).
    pub rejected_404: u64,
    /// Calls answered 409 (getUpdates conflicts).
    pub rejected_409: u64,
    /// Calls answered 429 (rate limits).
    pub rejected_429: u64,
    /// Calls answered with a 5xx (see [`TelegramState::fail_next_sends`]).
    pub rejected_5xx: u64,
    /// Updates injected.
    pub updates_injected: u64,
    /// Updates delivered to a webhook (2xx answer).
    pub webhook_delivered: u64,
    /// Webhook delivery attempts that failed.
    pub webhook_failed: u64,
}

/// A running fake Bot API server. Dereferences to [`TelegramState`] for inspection
/// (`messages()`, `stats()`, `block_chat()`, `inject_update()`…). Dropping it stops it.
#[derive(Debug)]
pub struct FakeTelegram {
    state: TelegramState,
    server: Server,
}

impl FakeTelegram {
    /// Binds `addr` (port 0 picks a free port) and serves in a tokio task.
    pub async fn start(
        addr: SocketAddr,
        config: FakeTelegramConfig,
    ) -> Result<FakeTelegram, TestkitError> {
        let state = TelegramState::new(config);
        let app = router(state.clone());
        let server = Server::start(addr, app, state.inner.cancel.clone(), "Telegram").await?;
        let addr = server.addr();
        tracing::info!(%addr, "fake Telegram Bot API listening");
        Ok(FakeTelegram { state, server })
    }

    /// Base URL to give teloxide: `Bot::new(token).set_api_url(url)`.
    pub fn url(&self) -> url::Url {
        self.server.url()
    }

    /// The bound address.
    pub fn addr(&self) -> SocketAddr {
        self.server.addr()
    }

    /// A clone of the shared state (to keep after moving the handle, or for [`router`]).
    pub fn state(&self) -> TelegramState {
        self.state.clone()
    }

    /// Stops serving: ends long polls and webhook deliveries, then waits for open requests.
    pub async fn shutdown(self) {
        self.server.shutdown().await;
    }
}

impl Deref for FakeTelegram {
    type Target = TelegramState;

    fn deref(&self) -> &TelegramState {
        &self.state
    }
}

/// The fake's HTTP API: the Bot API under `/bot<token>/<method>` and the testkit endpoints
/// under `/__testkit/` (`GET messages?bot_id=&chat_id=`, `GET calls?bot_id=&method=`,
/// `GET stats`, `POST block {bot_id, chat_id}`, `POST unblock`, `POST updates {bot_id, update}`,
/// `POST limits {limits|null}`, `POST latency {latency_ms}`, `POST reset`).
pub fn router(state: TelegramState) -> Router {
    Router::new()
        .route("/__testkit/messages", get(tk_messages))
        .route("/__testkit/calls", get(tk_calls))
        .route("/__testkit/stats", get(tk_stats))
        .route("/__testkit/block", post(tk_block))
        .route("/__testkit/unblock", post(tk_unblock))
        .route("/__testkit/updates", post(tk_updates))
        .route("/__testkit/limits", post(tk_limits))
        .route("/__testkit/latency", post(tk_latency))
        .route("/__testkit/reset", post(tk_reset))
        .route("/{bot}/{method}", any(bot_api))
        .fallback(not_found)
        .layer(DefaultBodyLimit::max(50 * 1024 * 1024))
        .with_state(state)
}
