//! Recognising an update delivered twice.
//!
//! Telegram retries a webhook request that failed or timed out, and a poller that crashed
//! before confirming its offset gets the same updates again. Handling must not file a
//! report twice, so every update is claimed by `(bot, update_id)` before it is handled: the
//! first claim wins, later ones are skipped. In the distributed mode the claim is a Redis
//! `SET NX` with a TTL ([`RedisDedup`]), so it holds across processes; in the embedded mode
//! an in-memory time window ([`MemoryDedup`]) does.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use redis::aio::ConnectionManager;

use crate::BotError;

/// How long an update id is remembered. Telegram keeps undelivered updates for 24 hours.
pub const DEDUP_TTL: Duration = Duration::from_secs(24 * 60 * 60);

/// Claims updates so each is handled once.
#[async_trait]
pub trait UpdateDedup: Send + Sync + std::fmt::Debug {
    /// `true` for the first claim of `(bot, update_id)` within [`DEDUP_TTL`], `false` for a
    /// repeat.
    async fn claim(&self, bot: &str, update_id: u32) -> Result<bool, BotError>;
    /// Gives a claim back (its handling failed before changing anything), so a redelivery
    /// is handled.
    async fn release(&self, bot: &str, update_id: u32) -> Result<(), BotError>;
}

/// The embedded mode's dedup: the ids seen in the last [`DEDUP_TTL`], at most `capacity`
/// of them (the oldest are forgotten first).
#[derive(Debug)]
pub struct MemoryDedup {
    capacity: usize,
    ttl: Duration,
    inner: Mutex<MemoryInner>,
}

#[derive(Debug, Default)]
struct MemoryInner {
    /// Each claimed id and when it was claimed.
    seen: HashMap<(String, u32), Instant>,
    order: VecDeque<(Instant, String, u32)>,
}

impl MemoryDedup {
    /// Remembers up to `capacity` update ids (100 000 take a few MB).
    pub fn new(capacity: usize) -> Self {
        Self::with_ttl(capacity, DEDUP_TTL)
    }

    /// Like [`Self::new`] with another window (tests).
    pub fn with_ttl(capacity: usize, ttl: Duration) -> Self {
        Self {
            capacity: capacity.max(1),
            ttl,
            inner: Mutex::default(),
        }
    }
}

impl Default for MemoryDedup {
    fn default() -> Self {
        Self::new(100_000)
    }
}

#[async_trait]
impl UpdateDedup for MemoryDedup {
    async fn claim(&self, bot: &str, update_id: u32) -> Result<bool, BotError> {
        let now = Instant::now();
        let mut inner = self
            .inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let MemoryInner { seen, order } = &mut *inner;
        while let Some((at, b, id)) = order.front() {
            if now.duration_since(*at) < self.ttl && seen.len() < self.capacity {
                break;
            }
            let key = (b.clone(), *id);
            // A released and re-claimed id has a newer entry further back: keep it.
            if seen.get(&key) == Some(at) {
                seen.remove(&key);
            }
            order.pop_front();
        }
        let key = (bot.to_owned(), update_id);
        if seen.contains_key(&key) {
            return Ok(false);
        }
        seen.insert(key, now);
        order.push_back((now, bot.to_owned(), update_id));
        Ok(true)
    }

    async fn release(&self, bot: &str, update_id: u32) -> Result<(), BotError> {
        let mut inner = self
            .inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        inner.seen.remove(&(bot.to_owned(), update_id));
        // The stale `order` entry is dropped when it reaches the front.
        Ok(())
    }
}

/// The distributed mode's dedup: `SET {prefix}:update:{bot}:{update_id} 1 NX EX 86400`.
#[derive(Clone)]
pub struct RedisDedup {
    conn: ConnectionManager,
    prefix: String,
}

impl std::fmt::Debug for RedisDedup {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisDedup")
            .field("prefix", &self.prefix)
            .finish_non_exhaustive()
    }
}

impl RedisDedup {
    pub fn new(conn: ConnectionManager, prefix: impl Into<String>) -> Self {
        Self {
            conn,
            prefix: prefix.into(),
        }
    }

    /// The Redis key of an update's claim.
    pub fn key(&self, bot: &str, update_id: u32) -> String {
        format!("{}:update:{bot}:{update_id}", self.prefix)
    }
}

#[async_trait]
impl UpdateDedup for RedisDedup {
    async fn claim(&self, bot: &str, update_id: u32) -> Result<bool, BotError> {
        let mut conn = self.conn.clone();
        let set: Option<String> = redis::cmd("SET")
            .arg(self.key(bot, update_id))
            .arg(1)
            .arg("NX")
            .arg("EX")
            .arg(DEDUP_TTL.as_secs())
            .query_async(&mut conn)
            .await?;
        Ok(set.is_some())
    }

    async fn release(&self, bot: &str, update_id: u32) -> Result<(), BotError> {
        let mut conn = self.conn.clone();
        let _: usize = redis::cmd("DEL")
            .arg(self.key(bot, update_id))
            .query_async(&mut conn)
            .await?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[tokio::test]
    async fn memory_dedup_claims_once_per_bot_and_forgets_old_ids() {
        let d = MemoryDedup::with_ttl(3, Duration::from_secs(3600));
        assert!(d.claim("a", 1).await.unwrap());
        assert!(!d.claim("a", 1).await.unwrap());
        assert!(d.claim("b", 1).await.unwrap());
        d.release("b", 1).await.unwrap();
        assert!(d.claim("b", 1).await.unwrap());
        assert!(d.claim("a", 2).await.unwrap());
        // Over capacity: the oldest id ("a", 1) is forgotten.
        assert!(d.claim("a", 3).await.unwrap());
        assert!(d.claim("a", 1).await.unwrap());

        let short = MemoryDedup::with_ttl(10, Duration::from_millis(20));
        assert!(short.claim("a", 1).await.unwrap());
        tokio::time::sleep(Duration::from_millis(40)).await;
        assert!(short.claim("a", 9).await.unwrap());
        assert!(short.claim("a", 1).await.unwrap());
    }
}
