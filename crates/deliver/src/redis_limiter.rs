//! The distributed [`Limiter`]: one bot token's limits shared, through Redis, by every sender
//! process of that token.
//!
//! Telegram counts a bot's messages per token, not per process: two senders each pacing
//! themselves at 30 messages/s would send 60. [`RedisLimiter`] keeps the pacing state of a
//! bot in Redis and decides every send with one Lua script, atomically and on the **Redis
//! server's clock** (`TIME`), so the senders' own clocks never have to agree.
//!
//! # Keys
//!
//! For `key_prefix` `jobwire:limits` and bot `123456` (the braces are a Redis Cluster hash
//! tag, so every key of one bot lives in one slot and the script may touch them together):
//!
//! | key | holds | expires |
//! |---|---|---|
//! | `jobwire:limits:{123456}:global` | theoretical arrival time (TAT) of the bot's next message | when it has passed |
//! | `jobwire:limits:{123456}:chat:<id>` | TAT of the next message to a private chat | when it has passed (≤ 1 interval) |
//! | `jobwire:limits:{123456}:group:<id>` | TAT of the next message to a group (negative id) | when it has passed (≤ 1 interval) |
//! | `jobwire:limits:{123456}:frozen` | end of a freeze after Telegram's 429 | when the freeze ends |
//!
//! Times are microseconds since the Unix epoch of the Redis server. A TAT in the past means
//! the same as no key at all, so every key expires as soon as it stops mattering: memory is
//! bounded by the chats written to in the last interval (1 s for chats, 3 s for groups by
//! default), and [`Limiter::shrink`] has nothing to do.
//!
//! # The check
//!
//! GCRA with a burst of 1, for the chat (or group) key and for the bot's global key at once,
//! with the intervals of [`BotLimiter`](crate::BotLimiter) (limits widened by
//! `safety_margin`):
//!
//! 1. frozen until a time still ahead → answer "frozen, wait until then";
//! 2. either TAT still ahead → answer "wait" with the later of the two, saying which one;
//! 3. otherwise grant: the chat's TAT becomes server-now + its interval, the bot's
//!    `max(TAT, server-now − L) + interval`.
//!
//! `L`, the global key's lateness tolerance, is the safety margin's share of the interval
//! (35 ms − 33.3 ms ≈ 1.7 ms at the defaults): a grant that comes up to `L` after its
//! scheduled time (the client's timer fires late, the question travels) keeps its place in
//! the schedule instead of pushing every later message back. Without it, the ~1.5 ms a
//! polling client is late on average cost 4% of the throughput (27.3 instead of 28.5
//! messages/s). This is still GCRA with a burst of 1 (GCRA's tolerance τ = `L` < one
//! interval): two messages of a bot are never closer than the raw limit
//! (`1 / global_per_sec`), and any second holds at most ⌊(1 s + `L`) / interval⌋ + 1 of
//! them (29 at the defaults, Telegram allows 30). Per-chat and per-group keys get no
//! tolerance: there the limit is one message per interval, and only the margin absorbs
//! network jitter.
//!
//! The client sleeps the answered wait (at most [`MAX_PAUSE`], plus up to [`MAX_JITTER`])
//! and asks again. No slot is ever handed out during a freeze, so the thaw is paced like
//! everything else (the same semantics as `BotLimiter`, which re-queues slots it got during
//! a freeze).
//!
//! Within one process, the tasks that wait for the *bot's* rate (or a freeze) queue up on a
//! FIFO gate and only the head asks Redis: with a hundred concurrent sends per process Redis
//! still sees about one question per slot per process, not a hundred. A task whose own
//! chat is busy steps out of the queue while it waits, so one slow chat never holds up
//! the others.
//!
//! # When Redis is unreachable
//!
//! **Sending pauses.** `acquire` does not return until Redis granted the message: without
//! the shared state, no process can know what the others sent, and exceeding the limit
//! gets the whole bot frozen by Telegram — a pause is the safer failure. The
//! [`ConnectionManager`] reconnects in the background; the command in flight fails, is
//! logged (at most once per [`WARN_EVERY`], with the number of errors since), and retried
//! with exponential backoff (50 ms doubling to 2 s). `RedisLimiter` never panics on a Redis
//! error. Readiness probes can call [`RedisLimiter::ping`].

use std::collections::hash_map::RandomState;
use std::hash::BuildHasher;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use async_trait::async_trait;
use redis::Script;
use redis::aio::ConnectionManager;
use tokio::time::Instant;

use crate::limits::{Limiter, RateLimitConfig};

/// Longest single sleep between two questions to Redis (waits longer than this, such as a
/// long freeze or a group's interval, are slept in several steps).
pub const MAX_PAUSE: Duration = Duration::from_secs(1);
/// Largest random delay added to each sleep, so that processes do not ask in lockstep.
pub const MAX_JITTER: Duration = Duration::from_micros(500);
/// Redis errors are logged at most once per this period (with a count of the others).
pub const WARN_EVERY: Duration = Duration::from_secs(10);

/// First pause after a failed Redis call; doubles per consecutive failure.
const BACKOFF_MIN: Duration = Duration::from_millis(50);
/// Longest pause between retries of a failed Redis call.
const BACKOFF_MAX: Duration = Duration::from_secs(2);
/// Upper bound on one Redis call, on top of the connection's own response timeout.
const CALL_TIMEOUT: Duration = Duration::from_secs(5);

/// The atomic check-and-take (see the module docs).
///
/// KEYS: frozen-until, global TAT, chat-or-group TAT.
/// ARGV: global interval (µs), chat-or-group interval (µs), global lateness tolerance (µs).
/// Returns `{status, wait_us}`: 0 granted, 1 the chat/group is busy, 2 the bot's global rate
/// is busy, 3 the bot is frozen.
///
/// Times are formatted with `%.0f`: Lua 5.1 prints numbers with 14 significant digits, which
/// would round a 16-digit microsecond timestamp.
const ACQUIRE_LUA: &str = r"
if redis.replicate_commands then redis.replicate_commands() end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local frozen = tonumber(redis.call('GET', KEYS[1]) or '0') or 0
if frozen > now then
  return {3, frozen - now}
end
local g_int = tonumber(ARGV[1])
local c_int = tonumber(ARGV[2])
local g_wait = (tonumber(redis.call('GET', KEYS[2]) or '0') or 0) - now
local c_wait = (tonumber(redis.call('GET', KEYS[3]) or '0') or 0) - now
if c_wait > 0 and c_wait >= g_wait then
  return {1, c_wait}
end
if g_wait > 0 then
  return {2, g_wait}
end
local g_tat = math.max(now + g_wait, now - tonumber(ARGV[3])) + g_int
redis.call('SET', KEYS[2], string.format('%.0f', g_tat), 'PX', math.ceil((g_tat - now) / 1000) + 1)
redis.call('SET', KEYS[3], string.format('%.0f', now + c_int), 'PX', math.ceil(c_int / 1000) + 1)
return {0, 0}
";

/// Extends the freeze: frozen-until = max(existing, server now + wait).
///
/// KEYS: frozen-until. ARGV: wait (µs). Returns the remaining freeze (µs).
const FREEZE_LUA: &str = r"
if redis.replicate_commands then redis.replicate_commands() end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local wait = tonumber(ARGV[1])
local thaw = now + wait
local current = tonumber(redis.call('GET', KEYS[1]) or '0') or 0
if thaw > current then
  redis.call('SET', KEYS[1], string.format('%.0f', thaw), 'PX', math.ceil(wait / 1000) + 1)
  return wait
end
return current - now
";

/// The Redis-backed limiter of one bot token, shared by every process that sends with it.
/// See the [module docs](self) for the keys, the script and the behaviour without Redis.
pub struct RedisLimiter {
    conn: ConnectionManager,
    bot_id: u64,
    config: RateLimitConfig,
    keys: Keys,
    global_interval_us: u64,
    /// How late a global grant may come and keep its place in the schedule.
    global_tolerance_us: u64,
    /// Spacing of the send gate: the bot's pace with half the safety margin (see `pace_send`).
    send_interval_us: u64,
    chat_interval_us: u64,
    group_interval_us: u64,
    acquire_script: Script,
    freeze_script: Script,
    /// FIFO queue of this process's tasks waiting for the bot's global rate or a freeze.
    gate: tokio::sync::Mutex<()>,
    /// A freeze this process set: waited out locally without asking Redis.
    local_thaw: Mutex<Option<Instant>>,
    errors: ErrorLog,
}

impl std::fmt::Debug for RedisLimiter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisLimiter")
            .field("bot_id", &self.bot_id)
            .field("config", &self.config)
            .field("keys", &self.keys.bot)
            .finish_non_exhaustive()
    }
}

#[derive(Debug)]
struct Keys {
    /// `{prefix}:{bot}`, the stem of every key.
    bot: String,
    global: String,
    frozen: String,
    /// The send gate's schedule and its (unused) companion key, see `pace_send`.
    send: String,
    send_companion: String,
}

/// What the acquire script answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Verdict {
    Granted,
    ChatBusy(Duration),
    GlobalBusy(Duration),
    Frozen(Duration),
}

/// Why one call to Redis did not give an answer.
#[derive(Debug, thiserror::Error)]
enum CallError {
    #[error("redis: {0}")]
    Redis(#[from] redis::RedisError),
    #[error("redis did not answer within {0:?}")]
    Timeout(Duration),
    #[error("the limiter script answered {0:?}, expected [status, wait]")]
    Malformed(Vec<i64>),
}

impl RedisLimiter {
    /// A limiter for bot `bot_id` (the number before the `:` of its token) with `config`'s
    /// limits, keeping its state under `key_prefix` (e.g. `jobwire:limits`) in the Redis
    /// behind `conn`. Does not talk to Redis yet; with `config.unlimited` it never does.
    pub fn new(
        conn: ConnectionManager,
        bot_id: u64,
        config: RateLimitConfig,
        key_prefix: &str,
    ) -> Self {
        let bot = format!("{key_prefix}:{{{bot_id}}}");
        let m = config.safety_margin;
        let global_interval_us = interval_us(Duration::from_secs(1), config.global_per_sec, m);
        Self {
            conn,
            bot_id,
            config,
            keys: Keys {
                global: format!("{bot}:global"),
                frozen: format!("{bot}:frozen"),
                send: format!("{bot}:send"),
                send_companion: format!("{bot}:send-companion"),
                bot,
            },
            send_interval_us: interval_us(Duration::from_secs(1), config.global_per_sec, m / 2.0),
            global_interval_us,
            global_tolerance_us: lateness_tolerance_us(config),
            chat_interval_us: interval_us(Duration::from_secs(1), config.per_chat_per_sec, m),
            group_interval_us: interval_us(Duration::from_secs(60), config.per_group_per_min, m),
            acquire_script: Script::new(ACQUIRE_LUA),
            freeze_script: Script::new(FREEZE_LUA),
            gate: tokio::sync::Mutex::new(()),
            local_thaw: Mutex::new(None),
            errors: ErrorLog::default(),
        }
    }

    /// The bot whose messages this limiter paces.
    pub fn bot_id(&self) -> u64 {
        self.bot_id
    }

    /// Whether Redis answers a `PING` (within its response timeout): for readiness probes.
    /// While it does not, [`Limiter::acquire`] waits.
    pub async fn ping(&self) -> bool {
        let mut conn = self.conn.clone();
        let ping = redis::cmd("PING");
        let call = ping.query_async::<String>(&mut conn);
        matches!(tokio::time::timeout(CALL_TIMEOUT, call).await, Ok(Ok(pong)) if pong == "PONG")
    }

    /// The key holding the bot's global TAT.
    pub fn global_key(&self) -> &str {
        &self.keys.global
    }

    /// The key holding the end of the bot's current freeze.
    pub fn frozen_key(&self) -> &str {
        &self.keys.frozen
    }

    /// The key holding the TAT of `chat_id` (`…:group:<id>` for negative ids, else
    /// `…:chat:<id>`).
    pub fn chat_key(&self, chat_id: i64) -> String {
        if chat_id < 0 {
            format!("{}:group:{chat_id}", self.keys.bot)
        } else {
            format!("{}:chat:{chat_id}", self.keys.bot)
        }
    }

    /// A `SCAN MATCH` pattern covering every key of this bot under this prefix.
    pub fn key_pattern(&self) -> String {
        format!("{}:*", self.keys.bot)
    }

    async fn acquire_shared(&self, chat_id: i64) {
        let chat_key = self.chat_key(chat_id);
        let chat_interval_us = if chat_id < 0 {
            self.group_interval_us
        } else {
            self.chat_interval_us
        };
        let mut failures = 0u32;
        loop {
            self.wait_local_thaw().await;
            let gate = self.gate.lock().await;
            loop {
                match self.try_acquire(&chat_key, chat_interval_us).await {
                    Ok(verdict) => {
                        self.errors.recovered(self.bot_id);
                        failures = 0;
                        match verdict {
                            Verdict::Granted => return,
                            // Wait for our own chat out of the queue: others may go meanwhile.
                            Verdict::ChatBusy(wait) => {
                                drop(gate);
                                tokio::time::sleep(pause(wait)).await;
                                break;
                            }
                            // Everyone of this bot waits for these: stay at the queue's head.
                            Verdict::GlobalBusy(wait) | Verdict::Frozen(wait) => {
                                tokio::time::sleep(pause(wait)).await;
                            }
                        }
                    }
                    Err(e) => {
                        self.errors.failed(self.bot_id, &e);
                        tokio::time::sleep(backoff(failures)).await;
                        failures = failures.saturating_add(1);
                    }
                }
            }
        }
    }

    async fn try_acquire(
        &self,
        chat_key: &str,
        chat_interval_us: u64,
    ) -> Result<Verdict, CallError> {
        self.invoke_acquire(
            &self.keys.global,
            chat_key,
            self.global_interval_us,
            chat_interval_us,
            self.global_tolerance_us,
        )
        .await
    }

    /// The send gate: every process of this bot passes here right before its HTTP call. A
    /// grant of the limiter and the call are separated by the delivery's status commit, whose
    /// latency differs between processes, so sends granted apart could leave together; this
    /// strict schedule (slightly faster than the limiter's, so it never becomes the
    /// bottleneck) spaces them again, across processes, as they leave.
    async fn pace_send_shared(&self) {
        let mut failures = 0u32;
        loop {
            match self
                .invoke_acquire(
                    &self.keys.send,
                    &self.keys.send_companion,
                    self.send_interval_us,
                    1,
                    0,
                )
                .await
            {
                Ok(Verdict::Granted) => return,
                Ok(Verdict::ChatBusy(wait) | Verdict::GlobalBusy(wait) | Verdict::Frozen(wait)) => {
                    tokio::time::sleep(pause(wait)).await;
                }
                Err(e) => {
                    self.errors.failed(self.bot_id, &e);
                    tokio::time::sleep(backoff(failures)).await;
                    failures = failures.saturating_add(1);
                }
            }
        }
    }

    async fn invoke_acquire(
        &self,
        global_key: &str,
        chat_key: &str,
        global_interval_us: u64,
        chat_interval_us: u64,
        tolerance_us: u64,
    ) -> Result<Verdict, CallError> {
        let mut conn = self.conn.clone();
        let mut invocation = self.acquire_script.prepare_invoke();
        invocation
            .key(&self.keys.frozen)
            .key(global_key)
            .key(chat_key)
            .arg(global_interval_us)
            .arg(chat_interval_us)
            .arg(tolerance_us);
        let answer: Vec<i64> =
            tokio::time::timeout(CALL_TIMEOUT, invocation.invoke_async(&mut conn))
                .await
                .map_err(|_| CallError::Timeout(CALL_TIMEOUT))??;
        let wait = |us: i64| Duration::from_micros(u64::try_from(us).unwrap_or(0));
        match answer[..] {
            [0, _] => Ok(Verdict::Granted),
            [1, us] => Ok(Verdict::ChatBusy(wait(us))),
            [2, us] => Ok(Verdict::GlobalBusy(wait(us))),
            [3, us] => Ok(Verdict::Frozen(wait(us))),
            _ => Err(CallError::Malformed(answer)),
        }
    }

    async fn freeze_shared(&self, wait: Duration) {
        let thaw = Instant::now() + wait;
        if let Ok(mut local) = self.local_thaw.lock()
            && local.is_none_or(|t| t < thaw)
        {
            *local = Some(thaw);
        }
        let wait_us = u64::try_from(wait.as_micros()).unwrap_or(u64::MAX);
        let mut failures = 0u32;
        loop {
            let mut conn = self.conn.clone();
            let mut invocation = self.freeze_script.prepare_invoke();
            invocation.key(&self.keys.frozen).arg(wait_us);
            let call = invocation.invoke_async::<i64>(&mut conn);
            match tokio::time::timeout(CALL_TIMEOUT, call).await {
                Ok(Ok(_)) => {
                    self.errors.recovered(self.bot_id);
                    return;
                }
                Ok(Err(e)) => self.errors.failed(self.bot_id, &CallError::Redis(e)),
                Err(_) => self
                    .errors
                    .failed(self.bot_id, &CallError::Timeout(CALL_TIMEOUT)),
            }
            // Once the freeze is over there is nothing left to tell the other senders.
            let retry = backoff(failures);
            if Instant::now() + retry >= thaw {
                return;
            }
            tokio::time::sleep(retry).await;
            failures = failures.saturating_add(1);
        }
    }

    async fn wait_local_thaw(&self) {
        loop {
            let thaw = self.local_thaw.lock().ok().and_then(|t| *t);
            match thaw {
                Some(t) if t > Instant::now() => tokio::time::sleep_until(t).await,
                _ => return,
            }
        }
    }
}

#[async_trait]
impl Limiter for RedisLimiter {
    /// Waits until Redis grants one more message to `chat_id`; while Redis is unreachable,
    /// waits (and retries) rather than risk the limit.
    async fn acquire(&self, chat_id: i64) {
        if self.config.unlimited {
            return;
        }
        self.acquire_shared(chat_id).await
    }

    /// Freezes the bot for every process sharing it: no grant before server-now + `wait`
    /// (an existing longer freeze is kept).
    async fn freeze_for(&self, wait: Duration) {
        if self.config.unlimited {
            return;
        }
        self.freeze_shared(wait).await
    }

    async fn pace_send(&self) {
        if self.config.unlimited {
            return;
        }
        self.pace_send_shared().await
    }

    /// Nothing to do: every key expires in Redis once its time has passed.
    fn shrink(&self) {}
}

/// Like `limits::paced`: `per / count`, widened by `margin`, at least 1 µs.
fn interval_us(per: Duration, count: u32, margin: f64) -> u64 {
    let interval = per.mul_f64((1.0 + margin.max(0.0)) / f64::from(count.max(1)));
    u64::try_from(interval.as_micros())
        .unwrap_or(u64::MAX)
        .max(1)
}

/// The global key's lateness tolerance `L`: the safety margin's share of the interval.
fn lateness_tolerance_us(config: RateLimitConfig) -> u64 {
    let second = Duration::from_secs(1);
    interval_us(second, config.global_per_sec, config.safety_margin).saturating_sub(interval_us(
        second,
        config.global_per_sec,
        0.0,
    ))
}

/// The sleep before asking again after being told to wait `wait`.
fn pause(wait: Duration) -> Duration {
    wait.min(MAX_PAUSE) + jitter(MAX_JITTER)
}

/// Exponential backoff after `failures` consecutive failed calls, with jitter.
fn backoff(failures: u32) -> Duration {
    let base = BACKOFF_MIN
        .saturating_mul(1u32.checked_shl(failures.min(16)).unwrap_or(u32::MAX))
        .min(BACKOFF_MAX);
    base + jitter(base / 4)
}

/// A uniformly random duration in `[0, max]` (std's per-instance SipHash keys as the source).
fn jitter(max: Duration) -> Duration {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let max_ns = u64::try_from(max.as_nanos()).unwrap_or(u64::MAX);
    if max_ns == 0 {
        return Duration::ZERO;
    }
    let random = RandomState::new().hash_one(COUNTER.fetch_add(1, Ordering::Relaxed));
    Duration::from_nanos(random % (max_ns + 1))
}

/// Rate-limited logging of Redis errors: one warning per [`WARN_EVERY`], one note when Redis
/// answers again.
#[derive(Debug, Default)]
struct ErrorLog {
    state: Mutex<ErrorLogState>,
}

#[derive(Debug, Default)]
struct ErrorLogState {
    last_warned: Option<Instant>,
    suppressed: u64,
    failing: bool,
}

impl ErrorLog {
    fn failed(&self, bot_id: u64, error: &CallError) {
        let Ok(mut s) = self.state.lock() else {
            return;
        };
        s.failing = true;
        let now = Instant::now();
        if s.last_warned
            .is_some_and(|t| now.duration_since(t) < WARN_EVERY)
        {
            s.suppressed += 1;
            return;
        }
        tracing::warn!(
            bot_id,
            error = %error,
            errors_not_logged = s.suppressed,
            "rate limiter cannot reach Redis; sending for this bot pauses until it answers"
        );
        s.last_warned = Some(now);
        s.suppressed = 0;
    }

    fn recovered(&self, bot_id: u64) {
        let Ok(mut s) = self.state.lock() else {
            return;
        };
        if s.failing {
            tracing::info!(
                bot_id,
                errors_not_logged = s.suppressed,
                "rate limiter reaches Redis again; sending resumes"
            );
            s.failing = false;
            s.suppressed = 0;
            s.last_warned = None;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn intervals_match_the_in_process_limiter() {
        let c = RateLimitConfig::default();
        // 30/s widened by 5% → 35 ms; 1/s → 1.05 s; 20/min → 3.15 s.
        assert_eq!(
            interval_us(Duration::from_secs(1), c.global_per_sec, c.safety_margin),
            35_000
        );
        assert_eq!(
            interval_us(Duration::from_secs(1), c.per_chat_per_sec, c.safety_margin),
            1_050_000
        );
        assert_eq!(
            interval_us(
                Duration::from_secs(60),
                c.per_group_per_min,
                c.safety_margin
            ),
            3_150_000
        );
        // 35 ms − 33.333 ms; none without a margin.
        assert_eq!(lateness_tolerance_us(c), 1_667);
        let strict = RateLimitConfig {
            safety_margin: 0.0,
            ..c
        };
        assert_eq!(lateness_tolerance_us(strict), 0);
        // A zero limit is read as 1, like BotLimiter does.
        assert_eq!(interval_us(Duration::from_secs(1), 0, 0.0), 1_000_000);
    }

    #[test]
    fn pauses_are_capped_and_jittered_within_bounds() {
        for _ in 0..1000 {
            let p = pause(Duration::from_secs(30));
            assert!(p >= MAX_PAUSE && p <= MAX_PAUSE + MAX_JITTER, "{p:?}");
            let p = pause(Duration::from_millis(3));
            assert!(p >= Duration::from_millis(3) && p <= Duration::from_millis(3) + MAX_JITTER);
        }
        let distinct: std::collections::HashSet<_> = (0..100).map(|_| jitter(MAX_JITTER)).collect();
        assert!(distinct.len() > 50, "jitter is not random: {distinct:?}");
    }

    #[test]
    fn backoff_doubles_up_to_its_cap() {
        assert!(backoff(0) >= BACKOFF_MIN && backoff(0) <= BACKOFF_MIN * 5 / 4);
        assert!(backoff(1) >= BACKOFF_MIN * 2);
        assert!(backoff(40) >= BACKOFF_MAX && backoff(40) <= BACKOFF_MAX * 5 / 4);
    }
}
