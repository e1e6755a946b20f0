//! What the fake Telegram is configured with (limits included), what it records of each
//! message and call, and what it counts.

use std::time::Duration;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;

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
    /// When the first accepted message was accepted (`None`: none yet).
    #[serde(default)]
    pub first_accepted_at: Option<DateTime<Utc>>,
    /// When the latest accepted message was accepted.
    #[serde(default)]
    pub last_accepted_at: Option<DateTime<Utc>>,
}
