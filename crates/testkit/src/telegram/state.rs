//! The in-memory state of the fake Bot API: bots, their chats and recorded messages, blocks,
//! pending updates and webhooks, recorded calls and counters, behind [`TelegramState`].

use std::{
    collections::{HashMap, HashSet, VecDeque},
    sync::{
        Arc, Mutex, MutexGuard, RwLock,
        atomic::{AtomicI64, AtomicU64, Ordering},
    },
    time::Duration,
};

use chrono::Utc;
use serde_json::{Value, json};
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use super::{
    FakeTelegramConfig, FakeTelegramStats, RateLimits, RecordedCall, RecordedMessage,
    limits::Window, params::Params, payments::PaymentState,
};
use crate::TestkitError;

/// How many non-message calls [`TelegramState::calls`] keeps.
const MAX_CALLS_KEPT: usize = 10_000;

#[derive(Debug, Default)]
pub(super) struct Counters {
    pub(super) requests: AtomicU64,
    pub(super) ok: AtomicU64,
    pub(super) accepted: AtomicU64,
    pub(super) r400: AtomicU64,
    pub(super) r401: AtomicU64,
    pub(super) r403: AtomicU64,
    pub(super) r404: AtomicU64,
    pub(super) r409: AtomicU64,
    pub(super) r429: AtomicU64,
    pub(super) r5xx: AtomicU64,
    pub(super) updates_injected: AtomicU64,
    pub(super) webhook_delivered: AtomicU64,
    pub(super) webhook_failed: AtomicU64,
    /// When the first and the latest message were accepted, in µs since the epoch (0: none).
    pub(super) first_accepted_us: AtomicI64,
    pub(super) last_accepted_us: AtomicI64,
}

impl Counters {
    /// Counts an accepted message at `at`.
    pub(super) fn accepted_at(&self, at: chrono::DateTime<Utc>) {
        inc(&self.accepted);
        let us = at.timestamp_micros();
        let _ =
            self.first_accepted_us
                .compare_exchange(0, us, Ordering::Relaxed, Ordering::Relaxed);
        self.last_accepted_us.fetch_max(us, Ordering::Relaxed);
    }
}

pub(super) fn inc(c: &AtomicU64) {
    c.fetch_add(1, Ordering::Relaxed);
}

/// Locks a mutex, ignoring poisoning (the protected data stays consistent per operation).
pub(super) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

#[derive(Debug, Default)]
pub(super) struct ChatState {
    pub(super) window: Window,
    /// `messages[i]` has message id `i + 1`.
    pub(super) messages: Vec<RecordedMessage>,
}

#[derive(Debug, Default)]
pub(super) struct SendState {
    pub(super) global: Window,
    pub(super) chats: HashMap<i64, ChatState>,
    pub(super) blocked: HashSet<i64>,
    /// Answers the next send calls get instead of being accepted: `(HTTP code, description)`.
    pub(super) faults: VecDeque<(u16, String)>,
}

#[derive(Debug, Clone)]
pub(super) struct Webhook {
    pub(super) url: String,
    pub(super) secret: Option<String>,
    pub(super) max_connections: Option<i64>,
    pub(super) allowed_updates: Option<Value>,
}

#[derive(Debug)]
pub(super) struct UpdateState {
    pub(super) pending: VecDeque<Value>,
    pub(super) next_id: i64,
    pub(super) poll_gen: u64,
    pub(super) webhook: Option<Webhook>,
    pub(super) worker_running: bool,
    pub(super) last_error: Option<(i64, String)>,
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
pub(super) struct BotState {
    pub(super) id: u64,
    pub(super) send: Mutex<SendState>,
    pub(super) updates: Mutex<UpdateState>,
    pub(super) notify: Notify,
    pub(super) commands: Mutex<HashMap<String, Value>>,
    pub(super) payments: Mutex<PaymentState>,
}

impl BotState {
    pub(super) fn new(id: u64) -> Self {
        BotState {
            id,
            send: Mutex::default(),
            updates: Mutex::default(),
            notify: Notify::new(),
            commands: Mutex::default(),
            payments: Mutex::default(),
        }
    }

    pub(super) fn wake_all(&self) {
        self.notify.notify_waiters();
    }
}

#[derive(Debug)]
pub(super) struct Inner {
    pub(super) limits: RwLock<Option<RateLimits>>,
    pub(super) latency_us: AtomicU64,
    pub(super) webhook_timeout: Duration,
    pub(super) bots: RwLock<HashMap<u64, Arc<BotState>>>,
    pub(super) calls: Mutex<VecDeque<RecordedCall>>,
    pub(super) seq: AtomicU64,
    pub(super) stats: Counters,
    pub(super) cancel: CancellationToken,
}

/// The shared state of a fake Bot API: cheap to clone, used by [`router`](super::router) and by
/// [`FakeTelegram`](super::FakeTelegram) (which dereferences to it).
#[derive(Debug, Clone)]
pub struct TelegramState {
    pub(super) inner: Arc<Inner>,
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

    pub(super) fn bot(&self, id: u64) -> Arc<BotState> {
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

    pub(super) fn existing_bots(&self) -> Vec<Arc<BotState>> {
        self.inner
            .bots
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .values()
            .cloned()
            .collect()
    }

    pub(super) fn next_seq(&self) -> u64 {
        self.inner.seq.fetch_add(1, Ordering::Relaxed) + 1
    }

    pub(super) fn limits(&self) -> Option<RateLimits> {
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

    /// The next `count` send calls of `bot_id` (any chat) fail with HTTP `code` and
    /// `description`, as Telegram answers during an outage (`500 Internal Server Error`,
    /// `502 Bad Gateway`), and are not recorded. Applied after the blocked-chat check.
    pub fn fail_next_sends(&self, bot_id: u64, count: usize, code: u16, description: &str) {
        let bot = self.bot(bot_id);
        let mut send = lock(&bot.send);
        for _ in 0..count {
            send.faults.push_back((code, description.to_owned()));
        }
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
        let time = |c: &AtomicI64| match c.load(Ordering::Relaxed) {
            0 => None,
            us => chrono::DateTime::from_timestamp_micros(us),
        };
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
            rejected_5xx: g(&s.r5xx),
            updates_injected: g(&s.updates_injected),
            webhook_delivered: g(&s.webhook_delivered),
            webhook_failed: g(&s.webhook_failed),
            first_accepted_at: time(&s.first_accepted_us),
            last_accepted_at: time(&s.last_accepted_us),
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

    /// Forgets all bots, messages, calls, blocks, updates, webhooks, payments (invoices,
    /// open pre-checkout queries, charges, Stars ledgers) and counters (limits and latency
    /// stay).
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
            &s.r5xx,
            &s.updates_injected,
            &s.webhook_delivered,
            &s.webhook_failed,
        ] {
            c.store(0, Ordering::Relaxed);
        }
        s.first_accepted_us.store(0, Ordering::Relaxed);
        s.last_accepted_us.store(0, Ordering::Relaxed);
    }

    /// Stops long polls and webhook deliveries of this state (used by [`FakeTelegram::shutdown`](super::FakeTelegram::shutdown);
    /// call it yourself when embedding [`router`](super::router) and shutting your server down).
    pub fn close(&self) {
        self.inner.cancel.cancel();
    }

    pub(super) fn record_call(&self, bot_id: u64, method: &str, params: Params) {
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
