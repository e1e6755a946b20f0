//! Dialogue (FSM) state: what the main bot waits for from a chat (a keyword list, a budget,
//! a report…), shared by every process of the bot role.
//!
//! A dialogue started on one process may continue on another (webhooks are balanced over
//! several copies), so the state lives outside the process: in Redis in the distributed
//! mode ([`RedisDialogues`]), in the database in the embedded mode ([`StoreDialogues`]).
//! A state older than [`DIALOGUE_TTL`] is forgotten: nobody expects a bot to remember on
//! Tuesday that it asked for a budget on Monday.
//!
//! The value is a small versioned JSON envelope, `{"v":1,"state":{"awaiting":"include"},
//! "at":<unix ms>}`, so a process of another version reading a state it does not know treats
//! the chat as idle instead of failing.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use jobwire_store::SourceStateStore;
use redis::AsyncCommands;
use redis::aio::ConnectionManager;
use serde::{Deserialize, Serialize};

use crate::BotError;

/// How long a pending question is remembered.
pub const DIALOGUE_TTL: Duration = Duration::from_secs(24 * 60 * 60);

/// What the main bot waits for from a chat. No state (`None`) means idle.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "awaiting", rename_all = "snake_case")]
pub enum DialogueState {
    /// Include keywords (comma-separated).
    Include,
    /// Exclude keywords.
    Exclude,
    /// A minimum budget.
    MinBudget,
    /// Quiet hours.
    QuietHours,
    /// A missed vacancy (forwarded or pasted).
    Report,
    /// A direct placement's title, text, budget, contact (the draft is in the store).
    PlaceTitle,
    PlaceBody,
    PlaceBudget,
    PlaceContact,
}

impl DialogueState {
    /// One of a direct placement's questions.
    pub fn is_placement(self) -> bool {
        matches!(
            self,
            Self::PlaceTitle | Self::PlaceBody | Self::PlaceBudget | Self::PlaceContact
        )
    }
}

#[derive(Serialize, Deserialize)]
struct Envelope {
    v: u32,
    state: DialogueState,
    /// When it was set, Unix milliseconds.
    at: i64,
}

const ENVELOPE_VERSION: u32 = 1;

fn encode(state: DialogueState, now: DateTime<Utc>) -> String {
    let env = Envelope {
        v: ENVELOPE_VERSION,
        state,
        at: now.timestamp_millis(),
    };
    serde_json::to_string(&env).unwrap_or_else(|_| "null".to_owned())
}

/// Reads a stored value; unknown, corrupt, cleared (`null`) or expired values are idle.
fn decode(raw: &str, bot: &str, chat_id: i64, now: DateTime<Utc>) -> Option<DialogueState> {
    if raw.trim() == "null" {
        return None;
    }
    match serde_json::from_str::<Envelope>(raw) {
        Ok(env) if env.v == ENVELOPE_VERSION => {
            let ttl_ms = i64::try_from(DIALOGUE_TTL.as_millis()).unwrap_or(i64::MAX);
            (now.timestamp_millis().saturating_sub(env.at) < ttl_ms).then_some(env.state)
        }
        Ok(env) => {
            tracing::warn!(
                bot,
                chat_id,
                version = env.v,
                "dialogue state of another version; treating the chat as idle"
            );
            None
        }
        Err(e) => {
            tracing::warn!(bot, chat_id, error = %e, "unreadable dialogue state; treating the chat as idle");
            None
        }
    }
}

/// Where dialogue states live. Keys are `(bot name, chat id)`.
#[async_trait]
pub trait DialogueStore: Send + Sync + std::fmt::Debug {
    /// The chat's pending question, if any (and not expired).
    async fn get(&self, bot: &str, chat_id: i64) -> Result<Option<DialogueState>, BotError>;
    /// Remembers a pending question for [`DIALOGUE_TTL`].
    async fn set(&self, bot: &str, chat_id: i64, state: DialogueState) -> Result<(), BotError>;
    /// Forgets the chat's pending question.
    async fn clear(&self, bot: &str, chat_id: i64) -> Result<(), BotError>;
}

/// Ends the chat's pending question, if any; returns it.
pub(crate) async fn end(
    dialogues: &dyn DialogueStore,
    bot: &str,
    chat_id: i64,
) -> Result<Option<DialogueState>, BotError> {
    let state = dialogues.get(bot, chat_id).await?;
    if state.is_some() {
        dialogues.clear(bot, chat_id).await?;
    }
    Ok(state)
}

/// The embedded mode's dialogue store: the database's key-value state (`state_get` /
/// `state_put`, namespace `dialogue`, key `{bot}:{chat}`); clearing writes `null`.
#[derive(Clone)]
pub struct StoreDialogues {
    store: Arc<dyn SourceStateStore>,
}

impl std::fmt::Debug for StoreDialogues {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StoreDialogues").finish_non_exhaustive()
    }
}

/// The store namespace of dialogue states.
pub const DIALOGUE_NAMESPACE: &str = "dialogue";

impl StoreDialogues {
    pub fn new(store: Arc<dyn SourceStateStore>) -> Self {
        Self { store }
    }
}

fn store_key(bot: &str, chat_id: i64) -> String {
    format!("{bot}:{chat_id}")
}

#[async_trait]
impl DialogueStore for StoreDialogues {
    async fn get(&self, bot: &str, chat_id: i64) -> Result<Option<DialogueState>, BotError> {
        let raw = self
            .store
            .state_get(DIALOGUE_NAMESPACE, &store_key(bot, chat_id))
            .await?;
        Ok(raw.and_then(|r| decode(&r, bot, chat_id, Utc::now())))
    }

    async fn set(&self, bot: &str, chat_id: i64, state: DialogueState) -> Result<(), BotError> {
        let now = Utc::now();
        self.store
            .state_put(
                DIALOGUE_NAMESPACE,
                &store_key(bot, chat_id),
                &encode(state, now),
                now,
            )
            .await?;
        Ok(())
    }

    async fn clear(&self, bot: &str, chat_id: i64) -> Result<(), BotError> {
        let key = store_key(bot, chat_id);
        // Most messages come from idle chats: skip the write when there is nothing to clear.
        if self
            .store
            .state_get(DIALOGUE_NAMESPACE, &key)
            .await?
            .is_none_or(|v| v.trim() == "null")
        {
            return Ok(());
        }
        self.store
            .state_put(DIALOGUE_NAMESPACE, &key, "null", Utc::now())
            .await?;
        Ok(())
    }
}

/// The distributed mode's dialogue store: `{prefix}:dialogue:{bot}:{chat}` in Redis, the
/// JSON envelope as the value, expiring after [`DIALOGUE_TTL`]. The connection manager
/// reconnects by itself; a command that fails while Redis is away is an error for that
/// update (the user is asked to try again).
#[derive(Clone)]
pub struct RedisDialogues {
    conn: ConnectionManager,
    prefix: String,
}

impl std::fmt::Debug for RedisDialogues {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisDialogues")
            .field("prefix", &self.prefix)
            .finish_non_exhaustive()
    }
}

impl RedisDialogues {
    /// `prefix` is the key prefix shared with the other Redis users (e.g. `jobwire`).
    pub fn new(conn: ConnectionManager, prefix: impl Into<String>) -> Self {
        Self {
            conn,
            prefix: prefix.into(),
        }
    }

    /// The Redis key of a chat's dialogue.
    pub fn key(&self, bot: &str, chat_id: i64) -> String {
        format!("{}:dialogue:{bot}:{chat_id}", self.prefix)
    }
}

#[async_trait]
impl DialogueStore for RedisDialogues {
    async fn get(&self, bot: &str, chat_id: i64) -> Result<Option<DialogueState>, BotError> {
        let mut conn = self.conn.clone();
        let raw: Option<String> = conn.get(self.key(bot, chat_id)).await?;
        Ok(raw.and_then(|r| decode(&r, bot, chat_id, Utc::now())))
    }

    async fn set(&self, bot: &str, chat_id: i64, state: DialogueState) -> Result<(), BotError> {
        let mut conn = self.conn.clone();
        let () = conn
            .set_ex(
                self.key(bot, chat_id),
                encode(state, Utc::now()),
                DIALOGUE_TTL.as_secs(),
            )
            .await?;
        Ok(())
    }

    async fn clear(&self, bot: &str, chat_id: i64) -> Result<(), BotError> {
        let mut conn = self.conn.clone();
        let _: usize = conn.del(self.key(bot, chat_id)).await?;
        Ok(())
    }
}

/// A Redis connection manager that connects lazily and reconnects in the background
/// (backoff up to 2 s, 2 s connect and 2 s response timeouts), so the bot role starts
/// while Redis is still down and recovers when it returns. Share one per process.
pub fn redis_connection(url: &str) -> Result<ConnectionManager, BotError> {
    let client = redis::Client::open(url)?;
    let config = redis::aio::ConnectionManagerConfig::new()
        .set_max_delay(Duration::from_secs(2))
        .set_connection_timeout(Some(Duration::from_secs(2)))
        .set_response_timeout(Some(Duration::from_secs(2)));
    Ok(ConnectionManager::new_lazy_with_config(client, config)?)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn envelope_round_trip_expiry_and_unknown_states() {
        let now = Utc::now();
        let raw = encode(DialogueState::MinBudget, now);
        assert!(raw.contains("\"awaiting\":\"min_budget\""), "{raw}");
        assert_eq!(decode(&raw, "b", 1, now), Some(DialogueState::MinBudget));
        let later = now + chrono::Duration::hours(25);
        assert_eq!(decode(&raw, "b", 1, later), None);
        assert_eq!(decode("null", "b", 1, now), None);
        assert_eq!(
            decode(
                "{\"v\":1,\"state\":{\"awaiting\":\"payment\"},\"at\":0}",
                "b",
                1,
                now
            ),
            None
        );
        assert_eq!(
            decode(
                "{\"v\":2,\"state\":{\"awaiting\":\"include\"},\"at\":0}",
                "b",
                1,
                now
            ),
            None
        );
        assert_eq!(decode("garbage", "b", 1, now), None);
    }
}
