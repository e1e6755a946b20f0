//! The main bot's screens: `/start` and the menu, the categories, filters, status and help
//! screens, pause and resume (with the catch-up offer), and the toggles on them.

use jobwire_core::CategorySlug;
use jobwire_core::card::Wants;
use jobwire_store::HiddenAuthorRow;
use teloxide::types::{InlineKeyboardButton, InlineKeyboardMarkup, MessageId};

use super::Menus;
use super::keyboards::{back_keyboard, categories_keyboard, filters_keyboard};
use crate::BotError;
use crate::callbacks::{Callback, Screen, button, closing_rows};
use crate::texts;
use crate::turn::Turn;

/// Most "show again" buttons under `/status` (Telegram allows 100 buttons per keyboard).
const MAX_SHOW_AGAIN_BUTTONS: usize = texts::cards::MAX_LISTED;

impl Menus {
    pub(crate) async fn screen(
        &self,
        turn: &Turn<'_>,
        screen: Screen,
        edit: Option<MessageId>,
    ) -> Result<(), BotError> {
        let loaded = self.subscribers.load(turn).await?;
        let (text, keyboard) = match screen {
            Screen::Main => (
                texts::menu(turn.lang, &self.settings(turn, &loaded).await?),
                self.menu_keyboard(turn.lang, loaded.spec.paused),
            ),
            Screen::Categories => (
                texts::categories_screen(
                    turn.lang,
                    &self.categories.views(),
                    &loaded.spec.categories,
                ),
                categories_keyboard(turn.lang, &self.categories.views(), &loaded.spec.categories),
            ),
            Screen::Filters => (
                texts::filters_screen(turn.lang, &self.settings(turn, &loaded).await?),
                filters_keyboard(turn.lang, self.cards.wants_of(turn.chat_id).await?),
            ),
            Screen::Status => {
                let hidden = self.cards.hidden_authors(turn.chat_id).await?;
                let mut text = self.settings(turn, &loaded).await?;
                let labels: Vec<String> = hidden.iter().map(|h| h.label.clone()).collect();
                let list = texts::cards::hidden_authors(turn.lang, &labels);
                if !list.is_empty() {
                    text.push_str("\n\n");
                    text.push_str(&list);
                }
                (text, self.status_keyboard(turn, &hidden).await?)
            }
            // The router shows the plans (the billing room's screen).
            Screen::Plans => return Ok(()),
            Screen::Help => (
                texts::help_main(turn.lang, &self.categories.views()),
                back_keyboard(turn.lang),
            ),
        };
        turn.show(edit, text, keyboard).await;
        Ok(())
    }

    pub(crate) async fn main_start(&self, turn: &Turn<'_>, payload: &str) -> Result<(), BotError> {
        let mut loaded = self.subscribers.load(turn).await?;
        if let Some(v) = self
            .categories
            .views()
            .iter()
            .find(|v| v.slug.as_str() == payload)
            && !loaded.spec.categories.contains(&v.slug)
        {
            loaded.spec.categories.push(v.slug.clone());
            self.categories.sort(&mut loaded.spec.categories);
        }
        self.subscribers.save_started(turn, &mut loaded).await?;
        if !loaded.exists() {
            tracing::info!(bot = %turn.rt.name, chat_id = turn.chat_id, "new subscriber");
        }
        self.access.start_trial(turn).await?;
        turn.send(
            texts::menu(turn.lang, &self.settings(turn, &loaded).await?),
            Some(self.menu_keyboard(turn.lang, loaded.spec.paused)),
        )
        .await;
        Ok(())
    }

    pub(crate) async fn set_paused(
        &self,
        turn: &Turn<'_>,
        paused: bool,
        edit: Option<MessageId>,
    ) -> Result<String, BotError> {
        let mut loaded = self.subscribers.load(turn).await?;
        let resumed = !paused && loaded.stored.as_ref().is_some_and(|s| s.paused);
        loaded.spec.paused = paused;
        self.subscribers.save(&loaded).await?;
        let note = texts::paused(turn.lang, paused);
        if resumed && let Some(c) = &self.options.catch_up {
            let (only_new, missed) = texts::cards::resume_buttons(turn.lang, c.hours);
            turn.send(
                texts::cards::resume_offer(turn.lang, c.hours, c.max),
                Some(InlineKeyboardMarkup::new(vec![vec![
                    InlineKeyboardButton::callback(only_new, Callback::CatchUp(false).encode()),
                    InlineKeyboardButton::callback(missed, Callback::CatchUp(true).encode()),
                ]])),
            )
            .await;
        }
        match edit {
            Some(_) => {
                turn.show(
                    edit,
                    texts::menu(turn.lang, &self.settings(turn, &loaded).await?),
                    self.menu_keyboard(turn.lang, paused),
                )
                .await;
            }
            None => {
                turn.send(note.clone(), Some(self.menu_keyboard(turn.lang, paused)))
                    .await;
            }
        }
        Ok(note)
    }

    /// The answer to the offer after "Resume"; returns the toast.
    pub(crate) async fn catch_up(
        &self,
        turn: &Turn<'_>,
        missed: bool,
        edit: Option<MessageId>,
    ) -> Result<String, BotError> {
        let Some(c) = &self.options.catch_up else {
            return Ok(texts::cards::only_new(turn.lang));
        };
        let answer = if missed {
            let since = self.now() - chrono::Duration::hours(i64::from(c.hours));
            let n = (c.missed)(turn.chat_id, since, c.max)
                .await
                .map_err(BotError::CatchUp)?;
            tracing::info!(bot = %turn.rt.name, chat_id = turn.chat_id, queued = n, "catching up after a pause");
            texts::cards::caught_up(turn.lang, n, c.hours)
        } else {
            texts::cards::only_new(turn.lang)
        };
        if let Some(id) = edit {
            turn.show(
                Some(id),
                answer.clone(),
                InlineKeyboardMarkup::new(Vec::<Vec<InlineKeyboardButton>>::new()),
            )
            .await;
        }
        Ok(answer)
    }

    /// The keyboard under `/status`: "show again" for each hidden author (the first
    /// [`MAX_SHOW_AGAIN_BUTTONS`]); with billing, the plans (renew) and, for a renewing
    /// subscription, "cancel renewal"; then back.
    pub(crate) async fn status_keyboard(
        &self,
        turn: &Turn<'_>,
        hidden: &[HiddenAuthorRow],
    ) -> Result<InlineKeyboardMarkup, BotError> {
        let mut rows: Vec<Vec<InlineKeyboardButton>> = hidden
            .iter()
            .take(MAX_SHOW_AGAIN_BUTTONS)
            .map(|h| {
                vec![button(
                    texts::cards::show_again_button(turn.lang, &h.label),
                    &Callback::ShowAuthor(h.id),
                )]
            })
            .collect();
        let selling = self.access.selling();
        if selling {
            rows.push(vec![button(
                texts::billing::plans_button(turn.lang),
                &Callback::Screen(Screen::Plans),
            )]);
        }
        let renewing = selling && self.access.renewing(turn.chat_id).await?;
        rows.extend(closing_rows(turn.lang, renewing));
        Ok(InlineKeyboardMarkup::new(rows))
    }

    /// A tap on a category in the categories screen; returns the toast.
    pub(crate) async fn toggle_category(
        &self,
        turn: &Turn<'_>,
        slug: CategorySlug,
        on: bool,
        edit: Option<MessageId>,
    ) -> Result<Option<String>, BotError> {
        let views = self.categories.views();
        let Some(view) = views.iter().find(|v| v.slug == slug) else {
            return Ok(None);
        };
        let mut loaded = self.subscribers.load(turn).await?;
        let has = loaded.spec.categories.contains(&slug);
        if on != has {
            if on {
                loaded.spec.categories.push(slug.clone());
                self.categories.sort(&mut loaded.spec.categories);
            } else {
                loaded.spec.categories.retain(|c| c != &slug);
            }
            self.subscribers.save(&loaded).await?;
            tracing::info!(bot = %turn.rt.name, chat_id = turn.chat_id, category = %slug, on, "category toggled");
        }
        turn.show(
            edit,
            texts::categories_screen(turn.lang, &views, &loaded.spec.categories),
            categories_keyboard(turn.lang, &views, &loaded.spec.categories),
        )
        .await;
        Ok(Some(format!(
            "{} {}",
            if on { "✅" } else { "▫️" },
            view.name
        )))
    }

    /// Vacancies, résumés or both; returns the toast.
    pub(crate) async fn set_wants(
        &self,
        turn: &Turn<'_>,
        wants: Wants,
        edit: Option<MessageId>,
    ) -> Result<Option<String>, BotError> {
        self.cards
            .set_wants(turn.chat_id, wants, self.now())
            .await?;
        tracing::info!(bot = %turn.rt.name, chat_id = turn.chat_id, wants = wants.as_str(), "what to receive changed");
        self.screen(turn, Screen::Filters, edit).await?;
        Ok(Some(texts::cards::wants_button(turn.lang, wants, true)))
    }
}
