//! The language each chat's user reads, stored when it changes (`chat_languages`), so the
//! messages the bots send unasked (reminders, expiries, start notices) are in it.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use jobwire_core::clock::Clock;
use jobwire_store::SubscriberStore;

use crate::texts::Lang;

/// Above this many chats, the language cache starts over.
const LANGS_KEPT: usize = 100_000;

/// The chats' languages: the store, and the language last stored per chat so an unchanged
/// one is not written again.
pub(crate) struct Languages {
    store: Arc<dyn SubscriberStore>,
    clock: Arc<dyn Clock>,
    noted: Mutex<HashMap<i64, Lang>>,
}

impl Languages {
    pub(crate) fn new(store: Arc<dyn SubscriberStore>, clock: Arc<dyn Clock>) -> Self {
        Self {
            store,
            clock,
            noted: Mutex::default(),
        }
    }

    /// Remembers the language the chat's user reads (their client's). Written only when it
    /// changes.
    pub(crate) async fn note(&self, chat_id: i64, lang: Lang) {
        {
            let mut noted = self.noted.lock().unwrap_or_else(PoisonError::into_inner);
            if noted.get(&chat_id) == Some(&lang) {
                return;
            }
            if noted.len() >= LANGS_KEPT {
                noted.clear();
            }
            noted.insert(chat_id, lang);
        }
        if let Err(e) = self
            .store
            .set_chat_language(chat_id, lang.code(), self.clock.now())
            .await
        {
            tracing::debug!(chat_id, error = %e, "could not store the chat's language");
            self.noted
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .remove(&chat_id);
        }
    }

    /// The language a chat's user reads: stored, else Russian (jobwire's audience).
    pub(crate) async fn of(&self, chat_id: i64) -> Lang {
        match self.store.chat_language(chat_id).await {
            Ok(Some(code)) => Lang::from_code(Some(&code)),
            _ => Lang::from_code(None),
        }
    }
}

impl std::fmt::Debug for Languages {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Languages").finish_non_exhaustive()
    }
}
