//! Per-bot rate limits: a global rate, one per private chat, one per group, and a freeze after
//! Telegram answered 429. In-process (governor's GCRA); the distributed mode swaps in a
//! Redis-backed limiter shared by every sender of a token.

use std::collections::HashMap;
use std::num::NonZeroU32;
use std::sync::Mutex;
use std::time::Duration;

use async_trait::async_trait;
use governor::{DefaultDirectRateLimiter, DefaultKeyedRateLimiter, Quota};
use tokio::time::Instant;

/// Telegram's limits for one bot. Defaults: 30 messages/s in bulk, 1/s per chat, 20/min per
/// group, paced 5% below them so that scheduling and network jitter (requests paced 33 ms
/// apart can arrive bunched) never push a one-second window over the line.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RateLimitConfig {
    pub global_per_sec: u32,
    pub per_chat_per_sec: u32,
    pub per_group_per_min: u32,
    /// Fraction by which sends are spaced wider than the limits (0.03 = 3%).
    pub safety_margin: f64,
    /// Lift every limit (benchmarks against a fake Telegram without limits).
    pub unlimited: bool,
}

impl Default for RateLimitConfig {
    fn default() -> Self {
        Self {
            global_per_sec: 30,
            per_chat_per_sec: 1,
            per_group_per_min: 20,
            safety_margin: 0.05,
            unlimited: false,
        }
    }
}

impl RateLimitConfig {
    /// The shortest time between two messages of one bot to `chat_id` (a group when
    /// negative), with the safety margin; zero when the limits are lifted.
    pub fn chat_interval(&self, chat_id: i64) -> Duration {
        if self.unlimited {
            return Duration::ZERO;
        }
        let (per, count) = if chat_id < 0 {
            (Duration::from_secs(60), self.per_group_per_min)
        } else {
            (Duration::from_secs(1), self.per_chat_per_sec)
        };
        per.mul_f64((1.0 + self.safety_margin.max(0.0)) / f64::from(count.max(1)))
    }
}

fn paced(per: Duration, count: u32, margin: f64) -> Quota {
    let count = count.max(1);
    let interval = per.mul_f64((1.0 + margin.max(0.0)) / f64::from(count));
    Quota::with_period(interval.max(Duration::from_micros(1)))
        .unwrap_or_else(|| Quota::per_second(NonZeroU32::MIN))
}

/// Paces the messages of one bot token. Implementations: [`BotLimiter`] in-process, and a
/// Redis-backed one shared by every sender of a token in the distributed mode.
#[async_trait]
pub trait Limiter: Send + Sync + std::fmt::Debug {
    /// Waits until one more message may go to `chat_id` (negative ids are groups).
    async fn acquire(&self, chat_id: i64);
    /// Telegram said "retry after": no message of this bot goes out before then.
    async fn freeze_for(&self, wait: Duration);
    /// Called right before each Bot API call: re-spaces sends that other processes of the
    /// same bot make at the same moment. In-process, the sender's own gate does this.
    async fn pace_send(&self) {}
    /// No message to `chat_id` before `until`: a send to it may have gone out just before
    /// this process started (see `SendStage::run`), which the limiter's state does not know.
    fn hold(&self, _chat_id: i64, _until: Instant) {}
    /// Forgets state of chats not seen lately (bounded memory); periodic.
    fn shrink(&self) {}
}

/// The in-process limiter of one bot token.
#[derive(Debug)]
pub struct BotLimiter {
    config: RateLimitConfig,
    global: DefaultDirectRateLimiter,
    chats: DefaultKeyedRateLimiter<i64>,
    groups: DefaultKeyedRateLimiter<i64>,
    frozen_until: Mutex<Option<Instant>>,
    /// Chats no message may go to before the given moment ([`Limiter::hold`]).
    holds: Mutex<HashMap<i64, Instant>>,
}

impl BotLimiter {
    pub fn new(config: RateLimitConfig) -> Self {
        let m = config.safety_margin;
        Self {
            config,
            global: governor::RateLimiter::direct(paced(
                Duration::from_secs(1),
                config.global_per_sec,
                m,
            )),
            chats: governor::RateLimiter::keyed(paced(
                Duration::from_secs(1),
                config.per_chat_per_sec,
                m,
            )),
            groups: governor::RateLimiter::keyed(paced(
                Duration::from_secs(60),
                config.per_group_per_min,
                m,
            )),
            frozen_until: Mutex::new(None),
            holds: Mutex::new(HashMap::new()),
        }
    }

    async fn acquire_local(&self, chat_id: i64) {
        if self.config.unlimited {
            return;
        }
        let held = self
            .holds
            .lock()
            .ok()
            .and_then(|h| h.get(&chat_id).copied());
        if let Some(until) = held
            && until > Instant::now()
        {
            tokio::time::sleep_until(until).await;
        }
        loop {
            self.wait_thaw().await;
            if chat_id < 0 {
                self.groups.until_key_ready(&chat_id).await;
            } else {
                self.chats.until_key_ready(&chat_id).await;
            }
            self.global.until_ready().await;
            // A 429 froze the bot while we waited for our turn: the slot we got may be one
            // of many handed out during the freeze, and using them all at the thaw would be
            // a burst. Queue up again instead, so the thaw is paced like everything else.
            if !self.is_frozen() {
                return;
            }
        }
    }

    fn is_frozen(&self) -> bool {
        self.frozen_until
            .lock()
            .ok()
            .and_then(|f| *f)
            .is_some_and(|t| t > Instant::now())
    }

    fn freeze_local(&self, wait: Duration) {
        let until = Instant::now() + wait;
        if let Ok(mut frozen) = self.frozen_until.lock()
            && frozen.is_none_or(|t| t < until)
        {
            *frozen = Some(until);
        }
    }

    async fn wait_thaw(&self) {
        loop {
            let until = self.frozen_until.lock().ok().and_then(|f| *f);
            match until {
                Some(t) if t > Instant::now() => tokio::time::sleep_until(t).await,
                _ => return,
            }
        }
    }
}

#[async_trait]
impl Limiter for BotLimiter {
    async fn acquire(&self, chat_id: i64) {
        self.acquire_local(chat_id).await
    }

    async fn freeze_for(&self, wait: Duration) {
        self.freeze_local(wait)
    }

    fn hold(&self, chat_id: i64, until: Instant) {
        if let Ok(mut holds) = self.holds.lock() {
            let at = holds.entry(chat_id).or_insert(until);
            *at = (*at).max(until);
        }
    }

    fn shrink(&self) {
        self.chats.retain_recent();
        self.groups.retain_recent();
        let now = Instant::now();
        if let Ok(mut holds) = self.holds.lock() {
            holds.retain(|_, until| *until > now);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn one_chat_is_paced_at_its_limit_while_others_flow() {
        let limiter = BotLimiter::new(RateLimitConfig {
            global_per_sec: 1000,
            per_chat_per_sec: 10,
            ..RateLimitConfig::default()
        });
        let start = Instant::now();
        for _ in 0..3 {
            limiter.acquire(1).await;
        }
        // Three messages to one chat at 10/s need at least two intervals of 100 ms.
        assert!(start.elapsed() >= Duration::from_millis(200));
        let other = Instant::now();
        limiter.acquire(2).await;
        assert!(other.elapsed() < Duration::from_millis(100));
    }

    #[tokio::test]
    async fn a_held_chat_waits_until_its_hold_ends() {
        let limiter = BotLimiter::new(RateLimitConfig::default());
        limiter.hold(7, Instant::now() + Duration::from_millis(300));
        let start = Instant::now();
        limiter.acquire(7).await;
        assert!(start.elapsed() >= Duration::from_millis(290));
        let other = Instant::now();
        limiter.acquire(8).await;
        assert!(other.elapsed() < Duration::from_millis(100));
    }

    #[test]
    fn a_chat_s_interval_is_its_limit_with_the_margin() {
        let config = RateLimitConfig::default();
        assert_eq!(config.chat_interval(5), Duration::from_millis(1050));
        assert_eq!(config.chat_interval(-5), Duration::from_millis(3150));
    }

    #[tokio::test]
    async fn a_freeze_holds_every_chat() {
        let limiter = BotLimiter::new(RateLimitConfig::default());
        limiter.freeze_for(Duration::from_millis(300)).await;
        let start = Instant::now();
        limiter.acquire(42).await;
        assert!(start.elapsed() >= Duration::from_millis(290));
    }
}
