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
//! # Methods with dedicated behaviour
//!
//! * `getMe`; `getUpdates`, `setWebhook`, `deleteWebhook`, `getWebhookInfo` (updates queued
//!   with [`TelegramState::inject_update`]);
//! * `sendMessage` and the other `send*` methods (recorded, see [`TelegramState::messages`]);
//!   `editMessageText`, `editMessageReplyMarkup`, `deleteMessage(s)`; `answerCallbackQuery`;
//!   `setMyCommands`, `getMyCommands`, `deleteMyCommands`;
//! * payments and Telegram Stars (one ledger per bot), all errors 400 `Bad Request: …`:
//!   * `sendInvoice` — goes through steps 4–7 like any send (the invoice checks are step 7),
//!     is recorded as a message **and** as a [`RecordedInvoice`] (with `chat_id`/`message_id`
//!     and every parameter, see [`TelegramState::invoices`]) and returns a `Message` with an
//!     `invoice`. Checks: title 1–32 characters, description 1–255, payload 1–128 bytes
//!     (`INVOICE_PAYLOAD_INVALID`), a 3-letter currency (`CURRENCY_INVALID`), `prices` a JSON
//!     array of `{label, amount}`; for `XTR` exactly one item (`STARS_INVOICE_INVALID`), a
//!     positive amount (`CURRENCY_TOTAL_AMOUNT_INVALID`) and no `provider_token`
//!     (`PAYMENT_PROVIDER_INVALID`); other currencies need a `provider_token`
//!     (`PAYMENT_PROVIDER_INVALID`) and a positive total; an inline keyboard must start with
//!     a Pay button (`REPLY_MARKUP_BUY_EMPTY`); `subscription_period` is refused (a deliberate
//!     deviation: Telegram would ignore it);
//!   * `createInvoiceLink` — the same checks (no keyboard) plus `subscription_period`: only
//!     with `XTR`, only 2592000 (`SUBSCRIPTION_PERIOD_INVALID`), at most 10000 Stars; returns
//!     `https://t.me/$<slug>` and records the invoice with its link;
//!   * `answerPreCheckoutQuery` — `error_message` required when `ok` is false; a query id
//!     that is unknown, already answered or expired is `QUERY_ID_INVALID`; valid answers are
//!     in [`TelegramState::pre_checkout_answers`];
//!   * `refundStarPayment` — `CHARGE_NOT_FOUND` for an unknown charge, another user's or a
//!     non-Stars one, `CHARGE_ALREADY_REFUNDED` the second time; adds a refund to the ledger
//!     (no update is sent to the bot) and to [`TelegramState::refunds`];
//!   * `editUserStarSubscription` — only for a subscription charge (first or renewal) of that
//!     user, else `CHARGE_NOT_FOUND`; see [`TelegramState::subscription_canceled`];
//!   * `getStarTransactions` — newest first, `offset` skipped, `limit` clamped to 1–100
//!     (default 100). Payments and renewals have `source`, refunds `receiver` (with the id of
//!     the refunded payment), a `TransactionPartnerUser` of `transaction_type`
//!     `invoice_payment` with `user`, `invoice_payload` and, for subscriptions,
//!     `subscription_period`;
//!   * `getMyStarBalance` — incoming minus refunded Stars.
//!
//! # Simulating the paying user
//!
//! * [`TelegramState::pay`] (`POST /__testkit/pay {bot_id, user: {id, first_name,
//!   language_code?}, invoice, deliver_update?, duplicate_update?, currency?, total_amount?,
//!   timeout_ms?}` → [`PayOutcome`]): queues a `pre_checkout_query`, waits (10 s by default)
//!   for the bot's answer and, on `ok: true`, records the charge (and the Stars ledger entry)
//!   and queues a `message` from the user in their private chat with `successful_payment`
//!   (subscriptions: `subscription_expiration_date`, `is_recurring`, `is_first_recurring`).
//!   [`PayOptions`] can lose that update (`deliver_update: false`), queue it twice with the
//!   same `update_id` (`duplicate_update`), or show another price/currency in the query.
//!   Service messages get ids from [`SERVICE_MESSAGE_ID_BASE`] up;
//! * [`TelegramState::renew_subscription`] (`POST /__testkit/renew_subscription {bot_id,
//!   user_id, charge_id, expiration}`, unix time): a renewal charge and `successful_payment`
//!   with `is_recurring`, not `is_first_recurring`;
//! * [`TelegramState::user_refund`] (`POST /__testkit/user_refund {bot_id, user_id,
//!   charge_id}`): Telegram refunds; a `message` with `refunded_payment` is queued;
//! * inspection: [`TelegramState::invoices`], [`TelegramState::star_transactions`],
//!   [`TelegramState::refunds`], [`TelegramState::pre_checkout_answers`],
//!   [`TelegramState::subscription_canceled`] (`GET /__testkit/invoices?bot_id=`,
//!   `star_transactions?bot_id=`, `refunds?bot_id=`, `pre_checkout_answers?bot_id=`,
//!   `subscription?bot_id=&user_id=&charge_id=` → `{"canceled": bool|null}`).
//!
//! Deviations from the real service, on purpose: webhooks may be plain `http://` on any port
//! (the real one wants HTTPS on 443/80/88/8443); MarkdownV2/Markdown are not parsed (400);
//! methods without dedicated behaviour answer after the parameter checks with a neutral
//! result derived from the spec's return type (`true`, `0`, `""`, `[]`, a minimal `Message`
//! for send methods), and `true` for methods returning other objects.

mod api;
mod checks;
mod control;
mod errors;
/// Telegram's HTML parser, shared with jobwire (`jobwire_core::tghtml`).
pub use jobwire_core::tghtml as html;
mod limits;
mod methods;
mod params;
mod payments;
mod spec;
mod state;
mod types;
mod updates;
mod webhook;

use std::{net::SocketAddr, ops::Deref};

use axum::{
    Router,
    extract::DefaultBodyLimit,
    routing::{any, get, post},
};

use crate::{TestkitError, server::Server};
use api::{bot_api, not_found};
use control::{
    tk_block, tk_calls, tk_invoices, tk_latency, tk_limits, tk_messages, tk_pay,
    tk_pre_checkout_answers, tk_refunds, tk_renew, tk_reset, tk_star_transactions, tk_stats,
    tk_subscription, tk_unblock, tk_updates, tk_user_refund,
};
pub use payments::{
    InvoicePrice, MAX_SUBSCRIPTION_STARS, PRE_CHECKOUT_TIMEOUT, PayOptions, PayOutcome, PayUser,
    PaymentError, PreCheckoutAnswer, RecordedInvoice, RecordedRefund, RefundOrigin, Renewal,
    SERVICE_MESSAGE_ID_BASE, STARS, SUBSCRIPTION_PERIOD_SECS, StarTransactionKind,
    StarTransactionRecord,
};
pub use state::TelegramState;
pub use types::{FakeTelegramConfig, FakeTelegramStats, RateLimits, RecordedCall, RecordedMessage};

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
/// `POST limits {limits|null}`, `POST latency {latency_ms}`, `POST reset`) and the payment
/// endpoints listed in the [module docs](self#simulating-the-paying-user).
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
        .route("/__testkit/pay", post(tk_pay))
        .route("/__testkit/renew_subscription", post(tk_renew))
        .route("/__testkit/user_refund", post(tk_user_refund))
        .route("/__testkit/invoices", get(tk_invoices))
        .route("/__testkit/star_transactions", get(tk_star_transactions))
        .route(
            "/__testkit/pre_checkout_answers",
            get(tk_pre_checkout_answers),
        )
        .route("/__testkit/refunds", get(tk_refunds))
        .route("/__testkit/subscription", get(tk_subscription))
        .route("/{bot}/{method}", any(bot_api))
        .fallback(not_found)
        .layer(DefaultBodyLimit::max(50 * 1024 * 1024))
        .with_state(state)
}
