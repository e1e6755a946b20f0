//! The menus room: the main bot's screens, settings and questions (`screens`, `questions`,
//! `keyboards`). What the subscriber's paid access looks like comes through
//! [`crate::access::Access`], so this room does not know how plans are sold.

mod keyboards;
mod questions;
mod screens;

use std::sync::Arc;

use chrono::{DateTime, Utc};
use jobwire_core::clock::Clock;
use jobwire_store::{CardStore, LearningStore, SubscriberStore};
use teloxide::types::InlineKeyboardMarkup;

use crate::BotError;
use crate::access::Access;
use crate::categories::Categories;
use crate::config::CatchUp;
use crate::dialogue::DialogueStore;
use crate::limits::Reports;
use crate::subscriber::{Loaded, Subscribers};
use crate::texts::{self, Lang};
use crate::turn::Turn;

/// The menus' own settings.
#[derive(Debug, Clone)]
pub(crate) struct MenuOptions {
    /// Most include (or exclude) keywords per subscriber.
    pub max_keywords: usize,
    /// Longest keyword, in characters.
    pub max_keyword_chars: usize,
    /// Longest report text kept, in characters.
    pub max_report_chars: usize,
    /// What "Resume" offers besides "only new".
    pub catch_up: Option<CatchUp>,
    /// Whether the menu offers placing a vacancy.
    pub placements: bool,
}

/// The stores the menus read and write.
pub(crate) struct MenuStores {
    pub subscribers: Arc<dyn SubscriberStore>,
    /// What each chat receives (vacancies, résumés) and the authors it hid.
    pub cards: Arc<dyn CardStore>,
    /// The vacancies users report jobwire missed.
    pub learning: Arc<dyn LearningStore>,
}

/// What the main bot's menus work with.
pub(crate) struct Menus {
    /// What to receive and the hidden authors.
    cards: Arc<dyn CardStore>,
    /// Missed vacancies reported.
    learning: Arc<dyn LearningStore>,
    dialogues: Arc<dyn DialogueStore>,
    categories: Arc<Categories>,
    subscribers: Subscribers,
    access: Arc<dyn Access>,
    /// Each chat's report allowance, shared with the category bots.
    reports: Arc<Reports>,
    options: MenuOptions,
    clock: Arc<dyn Clock>,
}

impl std::fmt::Debug for Menus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Menus")
            .field("options", &self.options)
            .finish_non_exhaustive()
    }
}

impl Menus {
    pub(crate) fn new(
        stores: MenuStores,
        dialogues: Arc<dyn DialogueStore>,
        categories: Arc<Categories>,
        access: Arc<dyn Access>,
        reports: Arc<Reports>,
        options: MenuOptions,
        clock: Arc<dyn Clock>,
    ) -> Self {
        Self {
            subscribers: Subscribers::new(stores.subscribers),
            cards: stores.cards,
            learning: stores.learning,
            dialogues,
            categories,
            access,
            reports,
            options,
            clock,
        }
    }

    fn now(&self) -> DateTime<Utc> {
        self.clock.now()
    }

    /// The menu's keyboard: plans with billing on, "post a vacancy" with placements on.
    fn menu_keyboard(&self, lang: Lang, paused: bool) -> InlineKeyboardMarkup {
        keyboards::main_keyboard(lang, paused, self.access.selling(), self.options.placements)
    }

    async fn settings(&self, turn: &Turn<'_>, loaded: &Loaded) -> Result<String, BotError> {
        let budget = loaded.spec.min_budget.clone();
        let mut text = texts::settings(
            turn.lang,
            &loaded.spec,
            loaded.blocked,
            &loaded.unreachable,
            budget.as_ref(),
            &self.categories.views(),
        );
        let wants = self.cards.wants_of(turn.chat_id).await?;
        text.push('\n');
        text.push_str(&texts::cards::wants_line(turn.lang, wants));
        if let Some(line) = self.access.line(turn.chat_id, turn.lang).await? {
            text.push_str("\n\n");
            text.push_str(&line);
        }
        Ok(text)
    }
}
