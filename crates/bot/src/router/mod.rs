//! The router: what the bots do with one update. It claims the update, keeps one chat's
//! updates in order, and hands each to the room it concerns, by its kind, command, button or
//! pending question: the main bot's menus ([`crate::menus`]), the category bots
//! ([`crate::category_bot`]), the card buttons ([`crate::cards`]), the shop
//! ([`crate::billing`]) and placements ([`crate::placements`]). The rooms do not know each
//! other; this is where they meet (`commands`, `taps`, `payments`).
//!
//! Every handler is safe to run again for the same update: settings are written as explicit
//! target values (a toggle's callback data carries the state it sets), and the one write
//! that is not idempotent, filing a report, is the last thing that can fail — after it,
//! errors are logged and not returned, so the caller's retry never files it twice.

mod commands;
mod payments;
mod taps;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use teloxide::prelude::*;
use teloxide::types::UpdateKind;

use crate::BotError;
use crate::alerts::Alerts;
use crate::billing::Billing;
use crate::cards::Cards;
use crate::category_bot::CategoryBots;
use crate::dedup::UpdateDedup;
use crate::dialogue::DialogueStore;
use crate::events::BotEvent;
use crate::languages::Languages;
use crate::menus::Menus;
use crate::message::{update_chat, update_kind, update_language};
use crate::payments::Refunds;
use crate::placements::Placements;
use crate::telegram::{BotRuntime, send};
use crate::texts::{self, Lang};

/// What became of an update.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Processed {
    /// Handled (including updates that need no answer).
    Handled,
    /// The same update was handled before (a redelivery): skipped.
    Duplicate,
    /// Handling failed after retries; the user was told to try again.
    Failed,
}

/// The rooms, and what the router itself needs.
#[derive(Debug)]
pub(crate) struct Router {
    pub dedup: Arc<dyn UpdateDedup>,
    pub dialogues: Arc<dyn DialogueStore>,
    pub languages: Arc<Languages>,
    pub alerts: Alerts,
    /// One chat's updates are handled one at a time, whichever bot they came to.
    pub chat_locks: ChatLocks,
    pub menus: Menus,
    pub category_bots: CategoryBots,
    pub cards: Cards,
    pub billing: Arc<Billing>,
    pub placements: Arc<Placements>,
    pub refunds: Refunds,
}

impl Router {
    /// Claims, handles (retrying transient failures) and records one update.
    pub(crate) async fn process_update(&self, rt: &BotRuntime, update: Update) -> Processed {
        let kind = update_kind(&update);
        BotEvent::UpdateReceived {
            bot: &rt.name,
            kind,
        }
        .emit();
        match self.dedup.claim(&rt.name, update.id.0).await {
            Ok(true) => {}
            Ok(false) => {
                BotEvent::DuplicateUpdate {
                    bot: &rt.name,
                    update_id: update.id.0,
                }
                .emit();
                return Processed::Duplicate;
            }
            Err(e) => {
                // Losing the user's input is worse than the rare double handling.
                tracing::warn!(bot = %rt.name, update_id = update.id.0, error = %e, "update dedup unavailable; handling anyway");
            }
        }
        let started = Instant::now();
        let chat = update_chat(&update);
        if let (Some(chat_id), Some(code)) = (chat, update_language(&update))
            && chat_id > 0
        {
            self.languages
                .note(chat_id, Lang::from_code(Some(code)))
                .await;
        }
        let _turn = match chat {
            Some(c) => Some(self.chat_locks.lock(c).await),
            None => None,
        };
        let mut attempt: u32 = 0;
        let outcome = loop {
            match self.handle(rt, &update).await {
                Ok(()) => break Processed::Handled,
                Err(e) if attempt < 2 && e.is_transient() => {
                    attempt += 1;
                    tracing::warn!(bot = %rt.name, chat_id = ?chat, attempt, error = %e, "handling an update failed; retrying");
                    tokio::time::sleep(Duration::from_millis(200 * 4u64.pow(attempt - 1))).await;
                }
                Err(e) => {
                    BotEvent::UpdateFailed {
                        bot: &rt.name,
                        chat_id: chat,
                        update_id: update.id.0,
                        error: &e.to_string(),
                    }
                    .emit();
                    // Tell a user who wrote or tapped (not one who just blocked the bot).
                    let from_user = matches!(
                        update.kind,
                        UpdateKind::Message(_) | UpdateKind::CallbackQuery(_)
                    );
                    if let Some(chat_id) = chat.filter(|c| *c > 0 && from_user) {
                        let lang = Lang::from_code(update_language(&update));
                        send(rt, chat_id, texts::temporary_error(lang), None).await;
                    }
                    break Processed::Failed;
                }
            }
        };
        BotEvent::UpdateDone {
            bot: &rt.name,
            took: started.elapsed(),
        }
        .emit();
        outcome
    }

    async fn handle(&self, rt: &BotRuntime, update: &Update) -> Result<(), BotError> {
        match &update.kind {
            UpdateKind::Message(m) => self.on_message(rt, m).await,
            UpdateKind::CallbackQuery(q) => self.on_callback(rt, q).await,
            UpdateKind::MyChatMember(u) => self.category_bots.my_chat_member(rt, u).await,
            UpdateKind::PreCheckoutQuery(q) => self.on_pre_checkout(rt, q).await,
            UpdateKind::Error(raw) => {
                tracing::warn!(bot = %rt.name, update_id = update.id.0, bytes = raw.to_string().len(), "update teloxide could not parse; ignored");
                Ok(())
            }
            _ => Ok(()),
        }
    }
}

/// Per-chat locks: the handlers read, change and write a subscriber as a whole, so two
/// updates of one chat (a tap in the main bot and `/start` in a category bot) must not
/// interleave.
#[derive(Debug, Default)]
pub(crate) struct ChatLocks {
    map: std::sync::Mutex<HashMap<i64, Arc<tokio::sync::Mutex<()>>>>,
}

/// Above this many entries, unused locks are dropped.
const CHAT_LOCKS_KEPT: usize = 4096;

impl ChatLocks {
    pub async fn lock(&self, chat_id: i64) -> tokio::sync::OwnedMutexGuard<()> {
        let lock = {
            let mut map = self
                .map
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            if map.len() >= CHAT_LOCKS_KEPT {
                map.retain(|_, l| Arc::strong_count(l) > 1);
            }
            Arc::clone(map.entry(chat_id).or_default())
        };
        lock.lock_owned().await
    }
}
