//! The subscriber a turn changes: loaded as stored (or fresh), changed, and written only when
//! it changed. The main bot's menus and the category bots both subscribe.

use std::sync::Arc;

use chrono::Utc;
use jobwire_store::{BlockScope, SubscriberSpec, SubscriberStore};

use crate::BotError;
use crate::turn::Turn;

/// The subscriber as stored (or a fresh one) to change, and whether it is blocked.
pub(crate) struct Loaded {
    pub spec: SubscriberSpec,
    /// As stored, `None` for a new subscriber.
    pub stored: Option<SubscriberSpec>,
    pub blocked: bool,
    /// Category bots that cannot write to the user (blocked, or never started).
    pub unreachable: Vec<(String, BlockScope)>,
}

impl Loaded {
    pub(crate) fn exists(&self) -> bool {
        self.stored.is_some()
    }
}

/// Loads and saves subscribers.
#[derive(Clone)]
pub(crate) struct Subscribers {
    store: Arc<dyn SubscriberStore>,
}

impl std::fmt::Debug for Subscribers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Subscribers").finish_non_exhaustive()
    }
}

impl Subscribers {
    pub(crate) fn new(store: Arc<dyn SubscriberStore>) -> Self {
        Self { store }
    }

    pub(crate) async fn load(&self, turn: &Turn<'_>) -> Result<Loaded, BotError> {
        let row = self.store.subscriber_by_chat(turn.chat_id).await?;
        Ok(match row {
            Some(row) => {
                let stored = row.to_spec();
                let mut spec = stored.clone();
                if spec.name.is_none() {
                    spec.name.clone_from(&turn.user_name);
                }
                let unreachable = self
                    .store
                    .bot_blocks(Some(turn.chat_id))
                    .await?
                    .into_iter()
                    .map(|b| (b.bot, b.scope))
                    .collect();
                Loaded {
                    spec,
                    stored: Some(stored),
                    blocked: row.blocked,
                    unreachable,
                }
            }
            None => Loaded {
                spec: SubscriberSpec {
                    chat_id: turn.chat_id,
                    name: turn.user_name.clone(),
                    categories: Vec::new(),
                    include: Vec::new(),
                    exclude: Vec::new(),
                    paused: false,
                    quiet_hours: None,
                    min_budget: None,
                },
                stored: None,
                blocked: false,
                unreachable: Vec::new(),
            },
        })
    }

    /// Writes the subscriber when it is new or changed. (Every write makes the dispatchers
    /// rebuild their subscriber index, so writes that change nothing are skipped.)
    pub(crate) async fn save(&self, loaded: &Loaded) -> Result<(), BotError> {
        if loaded.stored.as_ref() != Some(&loaded.spec) {
            self.store
                .upsert_subscriber(&loaded.spec, Utc::now())
                .await?;
        }
        Ok(())
    }

    /// Notes that bot `bot` cannot write to the chat (`Some(scope)`) or can again (`None`);
    /// whether that changed anything.
    pub(crate) async fn set_bot_block(
        &self,
        chat_id: i64,
        bot: &str,
        scope: Option<BlockScope>,
    ) -> Result<bool, BotError> {
        Ok(self
            .store
            .set_bot_block(chat_id, bot, scope, Utc::now())
            .await?)
    }

    /// Saves the subscriber after a `/start` and, since the user just wrote to the bot,
    /// clears a block noted earlier.
    pub(crate) async fn save_started(
        &self,
        turn: &Turn<'_>,
        loaded: &mut Loaded,
    ) -> Result<(), BotError> {
        self.save(loaded).await?;
        let bot = &turn.rt.name;
        // This bot may write to them now, whatever it could not do before.
        if loaded.unreachable.iter().any(|(b, _)| b == bot) {
            self.set_bot_block(turn.chat_id, bot, None).await?;
            loaded.unreachable.retain(|(b, _)| b != bot);
        }
        if loaded.blocked {
            self.store
                .set_subscriber_blocked(turn.chat_id, false, Utc::now())
                .await?;
            loaded.blocked = false;
        }
        Ok(())
    }
}
