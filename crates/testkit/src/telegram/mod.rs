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
//! 5. **rate limit** (send methods only) — trailing sliding windows per bot (1 s), per private
//!    chat (1 s) and per group (negative chat id, 60 s); a message that would exceed one is
//!    answered 429 `Too Many Requests: retry after N` with `parameters.retry_after = N`, the
//!    whole seconds until a slot frees (at least 1);
//! 6. **content** — entity parsing (HTML), empty text, length (4096 Unicode scalar values of
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

pub mod html;
mod limits;
mod params;
mod spec;
mod webhook;

use std::{
    collections::{HashMap, HashSet, VecDeque},
    net::SocketAddr,
    ops::Deref,
    sync::{
        Arc, Mutex, MutexGuard, RwLock,
        atomic::{AtomicU64, Ordering},
    },
    time::{Duration, Instant},
};

use axum::{
    Json, Router,
    body::Bytes,
    extract::{DefaultBodyLimit, Path, Query, State},
    http::{HeaderMap, StatusCode, Uri, header::CONTENT_TYPE},
    response::{IntoResponse, Response},
    routing::{any, get, post},
};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tokio::{sync::Notify, task::JoinHandle};
use tokio_util::sync::CancellationToken;

use crate::TestkitError;
use html::{Entity, EntityKind};
use limits::Window;
use params::{Params, ParamsExt};
use spec::MethodSpec;

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

/// Per-bot ceiling when a send passes `allow_paid_broadcast=true`.
const PAID_BROADCAST_PER_SEC: u32 = 1000;
/// Maximum visible length of a message text, in Unicode scalar values.
const MAX_TEXT_LEN: usize = 4096;
/// Maximum visible length of a caption.
const MAX_CAPTION_LEN: usize = 1024;
/// How many non-message calls [`TelegramState::calls`] keeps.
const MAX_CALLS_KEPT: usize = 10_000;

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
    /// Updates injected.
    pub updates_injected: u64,
    /// Updates delivered to a webhook (2xx answer).
    pub webhook_delivered: u64,
    /// Webhook delivery attempts that failed.
    pub webhook_failed: u64,
}

#[derive(Debug, Default)]
struct Counters {
    requests: AtomicU64,
    ok: AtomicU64,
    accepted: AtomicU64,
    r400: AtomicU64,
    r401: AtomicU64,
    r403: AtomicU64,
    r404: AtomicU64,
    r409: AtomicU64,
    r429: AtomicU64,
    updates_injected: AtomicU64,
    webhook_delivered: AtomicU64,
    webhook_failed: AtomicU64,
}

fn inc(c: &AtomicU64) {
    c.fetch_add(1, Ordering::Relaxed);
}

/// Locks a mutex, ignoring poisoning (the protected data stays consistent per operation).
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

#[derive(Debug, Default)]
struct ChatState {
    window: Window,
    /// `messages[i]` has message id `i + 1`.
    messages: Vec<RecordedMessage>,
}

#[derive(Debug, Default)]
struct SendState {
    global: Window,
    chats: HashMap<i64, ChatState>,
    blocked: HashSet<i64>,
}

#[derive(Debug, Clone)]
struct Webhook {
    url: String,
    secret: Option<String>,
    max_connections: Option<i64>,
    allowed_updates: Option<Value>,
}

#[derive(Debug)]
struct UpdateState {
    pending: VecDeque<Value>,
    next_id: i64,
    poll_gen: u64,
    webhook: Option<Webhook>,
    worker_running: bool,
    last_error: Option<(i64, String)>,
}

impl Default for UpdateState {
    fn default() -> Self {
        UpdateState {
            pending: VecDeque::new(),
            next_id: 1,
            poll_gen: 0,
            webhook: None,
            worker_running: false,
            last_error: None,
        }
    }
}

#[derive(Debug)]
struct BotState {
    id: u64,
    send: Mutex<SendState>,
    updates: Mutex<UpdateState>,
    notify: Notify,
    commands: Mutex<HashMap<String, Value>>,
}

impl BotState {
    fn new(id: u64) -> Self {
        BotState {
            id,
            send: Mutex::default(),
            updates: Mutex::default(),
            notify: Notify::new(),
            commands: Mutex::default(),
        }
    }

    fn wake_all(&self) {
        self.notify.notify_waiters();
    }
}

#[derive(Debug)]
struct Inner {
    limits: RwLock<Option<RateLimits>>,
    latency_us: AtomicU64,
    webhook_timeout: Duration,
    bots: RwLock<HashMap<u64, Arc<BotState>>>,
    calls: Mutex<VecDeque<RecordedCall>>,
    seq: AtomicU64,
    stats: Counters,
    cancel: CancellationToken,
}

/// The shared state of a fake Bot API: cheap to clone, used by [`router`] and by
/// [`FakeTelegram`] (which dereferences to it).
#[derive(Debug, Clone)]
pub struct TelegramState {
    inner: Arc<Inner>,
}

impl TelegramState {
    /// Creates a fresh state.
    pub fn new(config: FakeTelegramConfig) -> Self {
        TelegramState {
            inner: Arc::new(Inner {
                limits: RwLock::new(config.limits),
                latency_us: AtomicU64::new(duration_us(config.latency)),
                webhook_timeout: config.webhook_timeout,
                bots: RwLock::default(),
                calls: Mutex::default(),
                seq: AtomicU64::new(0),
                stats: Counters::default(),
                cancel: CancellationToken::new(),
            }),
        }
    }

    fn bot(&self, id: u64) -> Arc<BotState> {
        if let Some(b) = self
            .inner
            .bots
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .get(&id)
        {
            return Arc::clone(b);
        }
        let mut bots = self
            .inner
            .bots
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        Arc::clone(
            bots.entry(id)
                .or_insert_with(|| Arc::new(BotState::new(id))),
        )
    }

    fn existing_bots(&self) -> Vec<Arc<BotState>> {
        self.inner
            .bots
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .values()
            .cloned()
            .collect()
    }

    fn next_seq(&self) -> u64 {
        self.inner.seq.fetch_add(1, Ordering::Relaxed) + 1
    }

    fn limits(&self) -> Option<RateLimits> {
        *self
            .inner
            .limits
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Every accepted message of every bot, in acceptance order.
    pub fn messages(&self) -> Vec<RecordedMessage> {
        let mut all: Vec<RecordedMessage> = Vec::new();
        for bot in self.existing_bots() {
            let send = lock(&bot.send);
            for chat in send.chats.values() {
                all.extend(chat.messages.iter().cloned());
            }
        }
        all.sort_by_key(|m| m.seq);
        all
    }

    /// The accepted messages of one bot in one chat, in order (cheaper than [`Self::messages`]).
    pub fn chat_messages(&self, bot_id: u64, chat_id: i64) -> Vec<RecordedMessage> {
        let bot = self.bot(bot_id);
        let send = lock(&bot.send);
        send.chats
            .get(&chat_id)
            .map(|c| c.messages.clone())
            .unwrap_or_default()
    }

    /// Successful calls other than `sendMessage`/`getUpdates`, oldest first.
    pub fn calls(&self) -> Vec<RecordedCall> {
        lock(&self.inner.calls).iter().cloned().collect()
    }

    /// From now on, send and edit calls of `bot_id` into `chat_id` answer 403
    /// `Forbidden: bot was blocked by the user`.
    pub fn block_chat(&self, bot_id: u64, chat_id: i64) {
        lock(&self.bot(bot_id).send).blocked.insert(chat_id);
    }

    /// Undoes [`Self::block_chat`].
    pub fn unblock_chat(&self, bot_id: u64, chat_id: i64) {
        lock(&self.bot(bot_id).send).blocked.remove(&chat_id);
    }

    /// Queues an update for `bot_id` (served by `getUpdates`, or POSTed to its webhook).
    /// Assigns `update_id` when missing; returns the update's id.
    pub fn inject_update(&self, bot_id: u64, mut update: Value) -> Result<i64, TestkitError> {
        let Value::Object(obj) = &mut update else {
            return Err(TestkitError::InvalidUpdate);
        };
        let bot = self.bot(bot_id);
        let id = {
            let mut u = lock(&bot.updates);
            let id = match obj.get("update_id").and_then(Value::as_i64) {
                Some(id) => {
                    u.next_id = u.next_id.max(id + 1);
                    id
                }
                None => {
                    let id = u.next_id;
                    u.next_id += 1;
                    obj.insert("update_id".into(), json!(id));
                    id
                }
            };
            u.pending.push_back(update);
            id
        };
        inc(&self.inner.stats.updates_injected);
        bot.wake_all();
        Ok(id)
    }

    /// Counters since start or the last [`Self::reset`].
    pub fn stats(&self) -> FakeTelegramStats {
        let s = &self.inner.stats;
        let g = |c: &AtomicU64| c.load(Ordering::Relaxed);
        FakeTelegramStats {
            requests: g(&s.requests),
            ok: g(&s.ok),
            accepted: g(&s.accepted),
            rejected_400: g(&s.r400),
            rejected_401: g(&s.r401),
            rejected_403: g(&s.r403),
            rejected_404: g(&s.r404),
            rejected_409: g(&s.r409),
            rejected_429: g(&s.r429),
            updates_injected: g(&s.updates_injected),
            webhook_delivered: g(&s.webhook_delivered),
            webhook_failed: g(&s.webhook_failed),
        }
    }

    /// Replaces the sending limits (`None` lifts them).
    pub fn set_limits(&self, limits: Option<RateLimits>) {
        *self
            .inner
            .limits
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = limits;
    }

    /// Replaces the delay added before answering each Bot API call.
    pub fn set_latency(&self, latency: Duration) {
        self.inner
            .latency_us
            .store(duration_us(latency), Ordering::Relaxed);
    }

    /// Forgets all bots, messages, calls, blocks, updates, webhooks and counters
    /// (limits and latency stay).
    pub fn reset(&self) {
        let bots: Vec<Arc<BotState>> = {
            let mut map = self
                .inner
                .bots
                .write()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            map.drain().map(|(_, b)| b).collect()
        };
        for bot in bots {
            {
                let mut u = lock(&bot.updates);
                u.webhook = None;
                u.pending.clear();
                u.poll_gen += 1;
            }
            bot.wake_all();
        }
        lock(&self.inner.calls).clear();
        let s = &self.inner.stats;
        for c in [
            &s.requests,
            &s.ok,
            &s.accepted,
            &s.r400,
            &s.r401,
            &s.r403,
            &s.r404,
            &s.r409,
            &s.r429,
            &s.updates_injected,
            &s.webhook_delivered,
            &s.webhook_failed,
        ] {
            c.store(0, Ordering::Relaxed);
        }
    }

    /// Stops long polls and webhook deliveries of this state (used by [`FakeTelegram::shutdown`];
    /// call it yourself when embedding [`router`] and shutting your server down).
    pub fn close(&self) {
        self.inner.cancel.cancel();
    }

    fn record_call(&self, bot_id: u64, method: &str, params: Params) {
        let call = RecordedCall {
            seq: self.next_seq(),
            bot_id,
            method: method.to_owned(),
            params: Value::Object(params),
            at: Utc::now(),
        };
        let mut calls = lock(&self.inner.calls);
        if calls.len() >= MAX_CALLS_KEPT {
            calls.pop_front();
        }
        calls.push_back(call);
    }
}

fn duration_us(d: Duration) -> u64 {
    u64::try_from(d.as_micros()).unwrap_or(u64::MAX)
}

/// A running fake Bot API server. Dereferences to [`TelegramState`] for inspection
/// (`messages()`, `stats()`, `block_chat()`, `inject_update()`…). Dropping it stops it.
#[derive(Debug)]
pub struct FakeTelegram {
    state: TelegramState,
    addr: SocketAddr,
    task: Option<JoinHandle<()>>,
}

impl FakeTelegram {
    /// Binds `addr` (port 0 picks a free port) and serves in a tokio task.
    pub async fn start(
        addr: SocketAddr,
        config: FakeTelegramConfig,
    ) -> Result<FakeTelegram, TestkitError> {
        let listener = crate::bind(addr).await?;
        let addr = listener.local_addr()?;
        let state = TelegramState::new(config);
        let app = router(state.clone());
        let cancel = state.inner.cancel.clone();
        let task = tokio::spawn(async move {
            let served = axum::serve(listener, app)
                .with_graceful_shutdown(cancel.cancelled_owned())
                .await;
            if let Err(e) = served {
                tracing::warn!(error = %e, "fake Telegram server stopped");
            }
        });
        tracing::info!(%addr, "fake Telegram Bot API listening");
        Ok(FakeTelegram {
            state,
            addr,
            task: Some(task),
        })
    }

    /// Base URL to give teloxide: `Bot::new(token).set_api_url(url)`.
    pub fn url(&self) -> url::Url {
        socket_url(self.addr)
    }

    /// The bound address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// A clone of the shared state (to keep after moving the handle, or for [`router`]).
    pub fn state(&self) -> TelegramState {
        self.state.clone()
    }

    /// Stops serving: ends long polls and webhook deliveries, then waits for open requests.
    pub async fn shutdown(mut self) {
        self.state.close();
        if let Some(task) = self.task.take()
            && tokio::time::timeout(Duration::from_secs(5), task)
                .await
                .is_err()
        {
            tracing::warn!("fake Telegram did not stop within 5 s");
        }
    }
}

/// `http://{addr}/` — a socket address always forms a valid URL.
pub(crate) fn socket_url(addr: SocketAddr) -> url::Url {
    url::Url::parse(&format!("http://{addr}/")).expect("a socket address forms a valid URL")
}

impl Deref for FakeTelegram {
    type Target = TelegramState;

    fn deref(&self) -> &TelegramState {
        &self.state
    }
}

impl Drop for FakeTelegram {
    fn drop(&mut self) {
        self.state.close();
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

// ---------------------------------------------------------------------------------------------
// Testkit endpoints

#[derive(Deserialize)]
struct MessageFilter {
    bot_id: Option<u64>,
    chat_id: Option<i64>,
}

async fn tk_messages(State(st): State<TelegramState>, Query(f): Query<MessageFilter>) -> Response {
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
struct CallFilter {
    bot_id: Option<u64>,
    method: Option<String>,
}

async fn tk_calls(State(st): State<TelegramState>, Query(f): Query<CallFilter>) -> Response {
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

async fn tk_stats(State(st): State<TelegramState>) -> Response {
    Json(st.stats()).into_response()
}

#[derive(Deserialize)]
struct BlockBody {
    bot_id: u64,
    chat_id: i64,
}

async fn tk_block(State(st): State<TelegramState>, Json(b): Json<BlockBody>) -> Response {
    st.block_chat(b.bot_id, b.chat_id);
    Json(json!({"ok": true})).into_response()
}

async fn tk_unblock(State(st): State<TelegramState>, Json(b): Json<BlockBody>) -> Response {
    st.unblock_chat(b.bot_id, b.chat_id);
    Json(json!({"ok": true})).into_response()
}

#[derive(Deserialize)]
struct UpdateBody {
    bot_id: u64,
    update: Value,
}

async fn tk_updates(State(st): State<TelegramState>, Json(b): Json<UpdateBody>) -> Response {
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
struct LimitsBody {
    limits: Option<RateLimits>,
}

async fn tk_limits(State(st): State<TelegramState>, Json(b): Json<LimitsBody>) -> Response {
    st.set_limits(b.limits);
    Json(json!({"ok": true, "limits": b.limits})).into_response()
}

#[derive(Deserialize)]
struct LatencyBody {
    latency_ms: u64,
}

async fn tk_latency(State(st): State<TelegramState>, Json(b): Json<LatencyBody>) -> Response {
    st.set_latency(Duration::from_millis(b.latency_ms));
    Json(json!({"ok": true})).into_response()
}

async fn tk_reset(State(st): State<TelegramState>) -> Response {
    st.reset();
    Json(json!({"ok": true})).into_response()
}

// ---------------------------------------------------------------------------------------------
// Bot API

/// A Bot API error answer.
#[derive(Debug)]
struct ApiError {
    code: u16,
    description: String,
    retry_after: Option<u64>,
}

type ApiResult = Result<Value, ApiError>;

fn bad(description: impl Into<String>) -> ApiError {
    ApiError {
        code: 400,
        description: description.into(),
        retry_after: None,
    }
}

fn err(code: u16, description: &str) -> ApiError {
    ApiError {
        code,
        description: description.to_owned(),
        retry_after: None,
    }
}

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

async fn not_found(State(st): State<TelegramState>) -> Response {
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

async fn bot_api(
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
        Err(e) => return respond(&st, Err(bad(e))),
    };
    if let Err(e) = spec::validate(spec, &params) {
        return respond(&st, Err(bad(e)));
    }
    let bot = st.bot(bot_id);
    let result = dispatch(&st, &bot, spec, params).await;
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
        "createInvoiceLink" => Ok(json!(format!("https://t.me/$fake{}", st.next_seq()))),
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

fn bot_user_json(bot_id: u64) -> Value {
    json!({
        "id": bot_id,
        "is_bot": true,
        "first_name": format!("Test Bot {bot_id}"),
        "username": format!("test{bot_id}_bot"),
    })
}

fn me_json(bot_id: u64) -> Value {
    let mut me = bot_user_json(bot_id);
    if let Some(obj) = me.as_object_mut() {
        for (k, v) in [
            ("can_join_groups", true),
            ("can_read_all_group_messages", false),
            ("supports_inline_queries", false),
            ("can_connect_to_business", false),
            ("has_main_web_app", false),
        ] {
            obj.insert(k.into(), json!(v));
        }
    }
    me
}

fn chat_json(chat_id: i64) -> Value {
    if chat_id > 0 {
        json!({"id": chat_id, "type": "private", "first_name": format!("User {chat_id}")})
    } else {
        json!({"id": chat_id, "type": "supergroup", "title": format!("Group {chat_id}")})
    }
}

/// Maps `@username` chat ids to a stable negative id (channels/supergroups).
fn resolve_chat(p: &Params) -> Result<i64, ApiError> {
    if let Some(id) = p.int("chat_id") {
        return Ok(id);
    }
    match p.string("chat_id") {
        Some(name) if name.starts_with('@') && name.len() > 1 => {
            // FNV-1a of the lower-cased username.
            let mut h: u64 = 0xcbf2_9ce4_8422_2325;
            for b in name.to_ascii_lowercase().bytes() {
                h ^= u64::from(b);
                h = h.wrapping_mul(0x0100_0000_01b3);
            }
            let h = i64::try_from(h % 1_000_000_000).unwrap_or(0);
            Ok(-1_000_000_000_000 - h)
        }
        Some(_) => Err(bad("Bad Request: chat not found")),
        None => Err(bad("Bad Request: chat_id is empty")),
    }
}

fn message_json(rec: &RecordedMessage, extra: Option<&Value>) -> Value {
    let mut m = json!({
        "message_id": rec.message_id,
        "from": bot_user_json(rec.bot_id),
        "chat": chat_json(rec.chat_id),
        "date": rec.received_at.timestamp(),
    });
    let Some(obj) = m.as_object_mut() else {
        return m;
    };
    if let Some(t) = rec.edited_at {
        obj.insert("edit_date".into(), json!(t.timestamp()));
    }
    if rec.method == "sendMessage" {
        obj.insert("text".into(), json!(rec.visible_text));
        if !rec.entities.is_empty() {
            obj.insert("entities".into(), json!(rec.entities));
        }
    } else if let Some(Value::Object(extra)) = extra {
        for (k, v) in extra {
            obj.insert(k.clone(), v.clone());
        }
    } else {
        // Other send methods: keep the message parseable by clients that expect text.
        obj.insert("text".into(), json!(rec.visible_text));
    }
    if let Some(markup) = &rec.reply_markup
        && markup.get("inline_keyboard").is_some()
    {
        obj.insert("reply_markup".into(), markup.clone());
    }
    m
}

/// The visible text and entities of a message, after parsing.
struct Content {
    visible: String,
    entities: Vec<Value>,
}

struct TextRules {
    max_len: usize,
    too_long: &'static str,
    empty: Option<&'static str>,
}

const MESSAGE_RULES: TextRules = TextRules {
    max_len: MAX_TEXT_LEN,
    too_long: "Bad Request: message is too long",
    empty: Some("Bad Request: message text is empty"),
};

const EDIT_RULES: TextRules = TextRules {
    max_len: MAX_TEXT_LEN,
    too_long: "Bad Request: MESSAGE_TOO_LONG",
    empty: Some("Bad Request: message text is empty"),
};

const CAPTION_RULES: TextRules = TextRules {
    max_len: MAX_CAPTION_LEN,
    too_long: "Bad Request: message caption is too long",
    empty: None,
};

fn explicit_entities(v: Option<Value>) -> Vec<Entity> {
    let Some(Value::Array(items)) = v else {
        return Vec::new();
    };
    items
        .into_iter()
        .filter_map(|e| {
            let offset = e.get("offset")?.as_i64()?;
            let length = e.get("length")?.as_i64()?;
            let kind = match e.get("type")?.as_str()? {
                "bold" => EntityKind::Bold,
                "italic" => EntityKind::Italic,
                "underline" => EntityKind::Underline,
                "strikethrough" => EntityKind::Strikethrough,
                "spoiler" => EntityKind::Spoiler,
                "code" => EntityKind::Code,
                "pre" => {
                    EntityKind::Pre(e.get("language").and_then(Value::as_str).map(str::to_owned))
                }
                "text_link" => EntityKind::TextLink(e.get("url")?.as_str()?.to_owned()),
                "text_mention" => EntityKind::TextMention(e.get("user")?.get("id")?.as_i64()?),
                "custom_emoji" => {
                    EntityKind::CustomEmoji(e.get("custom_emoji_id")?.as_str()?.to_owned())
                }
                "blockquote" => EntityKind::Blockquote,
                "expandable_blockquote" => EntityKind::ExpandableBlockquote,
                _ => return None,
            };
            Some(Entity {
                kind,
                offset,
                length,
            })
        })
        .collect()
}

fn parse_content(
    text: &str,
    parse_mode: Option<&str>,
    entities: Option<Value>,
    rules: &TextRules,
) -> Result<Content, String> {
    let (visible, ents) = match parse_mode.map(str::to_ascii_lowercase).as_deref() {
        None | Some("") => (text.to_owned(), explicit_entities(entities)),
        Some("html") => {
            html::parse_html(text).map_err(|e| format!("Bad Request: can't parse entities: {e}"))?
        }
        Some("markdownv2" | "markdown") => {
            return Err(
                "Bad Request: can't parse entities: Markdown parse modes are not supported by the jobwire fake Bot API; use HTML"
                    .into(),
            );
        }
        Some(_) => return Err("Bad Request: unsupported parse_mode".into()),
    };
    let (visible, mut ents) = html::trim(&visible, ents);
    if let Some(empty) = rules.empty
        && visible.chars().all(char::is_whitespace)
    {
        return Err(empty.into());
    }
    if visible.chars().count() > rules.max_len {
        return Err(rules.too_long.into());
    }
    html::add_auto_entities(&visible, &mut ents);
    Ok(Content {
        visible,
        entities: ents.iter().map(Entity::to_json).collect(),
    })
}

const BUTTON_ACTIONS: &[&str] = &[
    "url",
    "callback_data",
    "web_app",
    "login_url",
    "switch_inline_query",
    "switch_inline_query_current_chat",
    "switch_inline_query_chosen_chat",
    "copy_text",
    "callback_game",
    "pay",
];

/// Decodes `reply_markup` and checks inline keyboard buttons like Telegram.
fn check_markup(p: &Params) -> Result<Option<Value>, String> {
    let Some(markup) = p.json("reply_markup") else {
        return Ok(None);
    };
    let Some(keyboard) = markup.get("inline_keyboard") else {
        return Ok(Some(markup));
    };
    let Some(rows) = keyboard.as_array() else {
        return Err(
            "Bad Request: can't parse inline keyboard: field \"inline_keyboard\" must be an Array"
                .into(),
        );
    };
    for row in rows {
        let Some(buttons) = row.as_array() else {
            return Err("Bad Request: can't parse inline keyboard: row must be an Array".into());
        };
        for button in buttons {
            if button.get("text").and_then(Value::as_str).is_none() {
                return Err("Bad Request: can't parse inline keyboard button: Field \"text\" must be of type String".into());
            }
            if !BUTTON_ACTIONS.iter().any(|a| button.get(*a).is_some()) {
                return Err("Bad Request: can't parse inline keyboard button: Text buttons are unallowed in the inline keyboard".into());
            }
            if let Some(data) = button.get("callback_data") {
                let len = data.as_str().map_or(0, str::len);
                if !(1..=64).contains(&len) {
                    return Err("Bad Request: BUTTON_DATA_INVALID".into());
                }
            }
            if let Some(u) = button.get("url") {
                let ok = u.as_str().is_some_and(|s| {
                    let l = s.to_ascii_lowercase();
                    (l.starts_with("http://") || l.starts_with("https://"))
                        && url::Url::parse(s)
                            .is_ok_and(|u| u.host_str().is_some_and(|h| !h.is_empty()))
                        || l.starts_with("tg://") && s.len() > 5
                });
                if !ok {
                    return Err("Bad Request: BUTTON_URL_INVALID".into());
                }
            }
        }
    }
    Ok(Some(markup))
}

/// What a send method wants recorded, before the message id is known.
struct Pending {
    method: &'static str,
    chat_id: i64,
    text: String,
    parse_mode: Option<String>,
    content: Result<(Content, Option<Value>), String>,
    paid: bool,
    extra: Option<Value>,
}

/// Steps 4–6 of the check order (blocked, rate limit, content) and recording, under the
/// bot's lock; returns the sent `Message`.
fn accept(st: &TelegramState, bot: &BotState, pending: Pending) -> ApiResult {
    let limits = st.limits();
    let now = Instant::now();
    let chat_id = pending.chat_id;
    let recorded = {
        let mut send = lock(&bot.send);
        if send.blocked.contains(&chat_id) {
            return Err(err(403, "Forbidden: bot was blocked by the user"));
        }
        if let Some(l) = limits {
            let global_limit = if pending.paid {
                PAID_BROADCAST_PER_SEC
            } else {
                l.global_per_sec
            };
            let (chat_limit, chat_span) = if chat_id < 0 {
                (l.per_group_per_min, Duration::from_secs(60))
            } else {
                (l.per_chat_per_sec, Duration::from_secs(1))
            };
            let global_wait = send.global.check(now, global_limit, Duration::from_secs(1));
            let chat = send.chats.entry(chat_id).or_default();
            let chat_wait = chat.window.check(now, chat_limit, chat_span);
            if let Some(wait) = global_wait.max(chat_wait) {
                return Err(ApiError {
                    code: 429,
                    description: format!("Too Many Requests: retry after {wait}"),
                    retry_after: Some(wait),
                });
            }
            if pending.content.is_ok() {
                chat.window.record(now, chat_limit);
                send.global.record(now, global_limit);
            }
        }
        let (content, markup) = pending.content.map_err(bad)?;
        let chat = send.chats.entry(chat_id).or_default();
        let rec = RecordedMessage {
            seq: st.next_seq(),
            bot_id: bot.id,
            chat_id,
            message_id: i64::try_from(chat.messages.len()).unwrap_or(i64::MAX - 1) + 1,
            method: pending.method.to_owned(),
            text: pending.text,
            parse_mode: pending.parse_mode,
            visible_text: content.visible,
            entities: content.entities,
            reply_markup: markup,
            received_at: Utc::now(),
            edited_at: None,
            deleted: false,
        };
        chat.messages.push(rec.clone());
        rec
    };
    inc(&st.inner.stats.accepted);
    Ok(message_json(&recorded, pending.extra.as_ref()))
}

fn send_message(st: &TelegramState, bot: &BotState, p: &Params) -> ApiResult {
    let chat_id = resolve_chat(p)?;
    let text = p.string("text").unwrap_or_default();
    let parse_mode = p.string("parse_mode");
    let content = parse_content(
        &text,
        parse_mode.as_deref(),
        p.json("entities"),
        &MESSAGE_RULES,
    )
    .and_then(|c| Ok((c, check_markup(p)?)));
    accept(
        st,
        bot,
        Pending {
            method: "sendMessage",
            chat_id,
            text,
            parse_mode,
            content,
            paid: p.boolean("allow_paid_broadcast").unwrap_or(false),
            extra: None,
        },
    )
}

/// Other `send*` methods returning a `Message`: caption checks, rate limits, recording.
fn send_other(
    st: &TelegramState,
    bot: &BotState,
    spec: &'static MethodSpec,
    p: &Params,
) -> ApiResult {
    let chat_id = resolve_chat(p)?;
    let caption = p.string("caption").unwrap_or_default();
    let parse_mode = p.string("parse_mode");
    let content = parse_content(
        &caption,
        parse_mode.as_deref(),
        p.json("caption_entities"),
        &CAPTION_RULES,
    )
    .and_then(|c| Ok((c, check_markup(p)?)));
    let extra = if spec.name == "sendInvoice" {
        Some(json!({"invoice": {
            "title": p.string("title").unwrap_or_default(),
            "description": p.string("description").unwrap_or_default(),
            "start_parameter": p.string("start_parameter").unwrap_or_default(),
            "currency": p.string("currency").unwrap_or_default(),
            "total_amount": p.json("prices").and_then(|v| v.as_array().map(|a| a.iter().filter_map(|x| x.get("amount").and_then(Value::as_i64)).sum::<i64>())).unwrap_or(0),
        }}))
    } else {
        None
    };
    let text = if spec.name == "sendInvoice" {
        p.string("description").unwrap_or_default()
    } else {
        caption
    };
    let result = accept(
        st,
        bot,
        Pending {
            method: spec.name.as_str(),
            chat_id,
            text,
            parse_mode,
            content,
            paid: p.boolean("allow_paid_broadcast").unwrap_or(false),
            extra,
        },
    );
    if result.is_ok() {
        st.record_call(bot.id, &spec.name, p.clone());
    }
    result
}

fn find_message(
    send: &mut SendState,
    chat_id: i64,
    message_id: i64,
) -> Option<&mut RecordedMessage> {
    let chat = send.chats.get_mut(&chat_id)?;
    let idx = usize::try_from(message_id.checked_sub(1)?).ok()?;
    chat.messages.get_mut(idx).filter(|m| !m.deleted)
}

const NOT_MODIFIED: &str = "Bad Request: message is not modified: specified new message content and reply markup are exactly the same as a current content and reply markup of the message";

fn edit_text(bot: &BotState, p: &Params) -> ApiResult {
    let text = p.string("text").unwrap_or_default();
    let parse_mode = p.string("parse_mode");
    let content = parse_content(
        &text,
        parse_mode.as_deref(),
        p.json("entities"),
        &EDIT_RULES,
    );
    if p.string("inline_message_id").is_some() {
        content.map_err(bad)?;
        check_markup(p).map_err(bad)?;
        return Ok(json!(true));
    }
    let chat_id = resolve_chat(p)?;
    let message_id = p
        .int("message_id")
        .ok_or_else(|| bad("Bad Request: message identifier is not specified"))?;
    let mut send = lock(&bot.send);
    if send.blocked.contains(&chat_id) {
        return Err(err(403, "Forbidden: bot was blocked by the user"));
    }
    let content = content.map_err(bad)?;
    let markup = check_markup(p).map_err(bad)?;
    let rec = find_message(&mut send, chat_id, message_id)
        .ok_or_else(|| bad("Bad Request: message to edit not found"))?;
    if rec.method != "sendMessage" {
        return Err(bad("Bad Request: there is no text in the message to edit"));
    }
    if rec.visible_text == content.visible
        && rec.entities == content.entities
        && rec.reply_markup == markup
    {
        return Err(bad(NOT_MODIFIED));
    }
    rec.text = text;
    rec.parse_mode = parse_mode;
    rec.visible_text = content.visible;
    rec.entities = content.entities;
    rec.reply_markup = markup;
    rec.edited_at = Some(Utc::now());
    let json = message_json(rec, None);
    drop(send);
    Ok(json)
}

fn edit_markup(bot: &BotState, p: &Params) -> ApiResult {
    let markup = check_markup(p).map_err(bad)?;
    if p.string("inline_message_id").is_some() {
        return Ok(json!(true));
    }
    let chat_id = resolve_chat(p)?;
    let message_id = p
        .int("message_id")
        .ok_or_else(|| bad("Bad Request: message identifier is not specified"))?;
    let mut send = lock(&bot.send);
    if send.blocked.contains(&chat_id) {
        return Err(err(403, "Forbidden: bot was blocked by the user"));
    }
    let rec = find_message(&mut send, chat_id, message_id)
        .ok_or_else(|| bad("Bad Request: message to edit not found"))?;
    if rec.reply_markup == markup {
        return Err(bad(NOT_MODIFIED));
    }
    rec.reply_markup = markup;
    rec.edited_at = Some(Utc::now());
    let json = message_json(rec, None);
    drop(send);
    Ok(json)
}

fn delete_messages(bot: &BotState, p: &Params, many: bool) -> ApiResult {
    let chat_id = resolve_chat(p)?;
    let ids: Vec<i64> = if many {
        p.json("message_ids")
            .and_then(|v| {
                v.as_array()
                    .map(|a| a.iter().filter_map(Value::as_i64).collect())
            })
            .unwrap_or_default()
    } else {
        vec![
            p.int("message_id")
                .ok_or_else(|| bad("Bad Request: message identifier is not specified"))?,
        ]
    };
    let mut send = lock(&bot.send);
    let mut any = false;
    for id in ids {
        if let Some(rec) = find_message(&mut send, chat_id, id) {
            rec.deleted = true;
            any = true;
        }
    }
    if !any {
        return Err(bad("Bad Request: message to delete not found"));
    }
    Ok(json!(true))
}

fn answer_callback(p: &Params) -> ApiResult {
    if p.string("callback_query_id").is_none_or(|s| s.is_empty()) {
        return Err(bad("Bad Request: QUERY_ID_INVALID"));
    }
    if p.string("text").is_some_and(|t| t.chars().count() > 200) {
        return Err(bad("Bad Request: MESSAGE_TOO_LONG"));
    }
    Ok(json!(true))
}

fn commands_key(p: &Params) -> String {
    let scope = p
        .json("scope")
        .map_or_else(|| r#"{"type":"default"}"#.to_owned(), |s| s.to_string());
    format!("{scope}|{}", p.string("language_code").unwrap_or_default())
}

fn set_commands(bot: &BotState, p: &Params) -> ApiResult {
    let commands = p.json("commands").unwrap_or_else(|| json!([]));
    let list = commands.as_array().cloned().unwrap_or_default();
    if list.len() > 100 {
        return Err(bad("Bad Request: too many commands"));
    }
    for c in &list {
        let cmd = c.get("command").and_then(Value::as_str).unwrap_or("");
        let ok = (1..=32).contains(&cmd.len())
            && cmd
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_');
        if !ok {
            return Err(bad("Bad Request: BOT_COMMAND_INVALID"));
        }
        let desc = c.get("description").and_then(Value::as_str).unwrap_or("");
        if !(1..=256).contains(&desc.chars().count()) {
            return Err(bad("Bad Request: command description must be non-empty"));
        }
    }
    lock(&bot.commands).insert(commands_key(p), json!(list));
    Ok(json!(true))
}

fn get_commands(bot: &BotState, p: &Params) -> Value {
    lock(&bot.commands)
        .get(&commands_key(p))
        .cloned()
        .unwrap_or_else(|| json!([]))
}

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

async fn get_updates(st: &TelegramState, bot: &BotState, p: &Params) -> ApiResult {
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

fn set_webhook(st: &TelegramState, bot: &Arc<BotState>, p: &Params) -> ApiResult {
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

fn delete_webhook(bot: &BotState, p: &Params) -> ApiResult {
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

fn webhook_info(bot: &BotState) -> Value {
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
