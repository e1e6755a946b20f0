//! The main bot: `/start` and its menu screens, pause and resume, the filter questions and
//! their answers, and reports of missed vacancies; plus the minimum budget as stored.

use chrono::Utc;
use jobwire_store::{NewReport, ReportKind};
use teloxide::prelude::*;
use teloxide::types::{InlineKeyboardButton, InlineKeyboardMarkup, MessageId};

use super::callbacks::{Callback, Screen, ask_name};
use super::keyboards::{back_keyboard, categories_keyboard, filters_keyboard, main_keyboard};
use super::{Loaded, Turn, link_of, message_text, show, truncate};
use crate::BotError;
use crate::dialogue::DialogueState;
use crate::input::{self, InputError};
use crate::texts::{self, Lang};

impl Turn<'_> {
    /// The menu's keyboard: plans with billing on, "post a vacancy" with placements on.
    fn menu_keyboard(&self, paused: bool) -> InlineKeyboardMarkup {
        main_keyboard(
            self.lang,
            paused,
            self.inner.billing.enabled,
            self.inner.placements.is_some(),
        )
    }

    async fn settings(&self, loaded: &Loaded) -> Result<String, BotError> {
        let budget = loaded.spec.min_budget.clone();
        let mut text = texts::settings(
            self.lang,
            &loaded.spec,
            loaded.blocked,
            &loaded.unreachable,
            budget.as_ref(),
            &self.inner.views.get(),
        );
        let wants = self.inner.store.wants_of(self.chat_id).await?;
        text.push('\n');
        text.push_str(&texts::cards::wants_line(self.lang, wants));
        if let Some(line) = self.access_line().await? {
            text.push_str("\n\n");
            text.push_str(&line);
        }
        Ok(text)
    }

    pub(super) async fn screen(
        &self,
        screen: Screen,
        edit: Option<MessageId>,
    ) -> Result<(), BotError> {
        let loaded = self.load().await?;
        let (text, keyboard) = match screen {
            Screen::Main => (
                texts::menu(self.lang, &self.settings(&loaded).await?),
                self.menu_keyboard(loaded.spec.paused),
            ),
            Screen::Categories => (
                texts::categories_screen(
                    self.lang,
                    &self.inner.views.get(),
                    &loaded.spec.categories,
                ),
                categories_keyboard(self.lang, &self.inner.views.get(), &loaded.spec.categories),
            ),
            Screen::Filters => (
                texts::filters_screen(self.lang, &self.settings(&loaded).await?),
                filters_keyboard(self.lang, self.inner.store.wants_of(self.chat_id).await?),
            ),
            Screen::Status => {
                let hidden = self.inner.store.hidden_authors(self.chat_id).await?;
                let mut text = self.settings(&loaded).await?;
                let labels: Vec<String> = hidden.iter().map(|h| h.label.clone()).collect();
                let list = texts::cards::hidden_authors(self.lang, &labels);
                if !list.is_empty() {
                    text.push_str("\n\n");
                    text.push_str(&list);
                }
                (text, self.status_keyboard(&hidden).await?)
            }
            Screen::Plans => return self.plans(edit).await,
            Screen::Help => (
                texts::help_main(self.lang, &self.inner.views.get()),
                back_keyboard(self.lang),
            ),
        };
        show(self.rt, self.chat_id, edit, text, keyboard).await;
        Ok(())
    }

    pub(super) async fn main_start(&self, payload: &str) -> Result<(), BotError> {
        let mut loaded = self.load().await?;
        if let Some(v) = self
            .inner
            .views
            .get()
            .iter()
            .find(|v| v.slug.as_str() == payload)
            && !loaded.spec.categories.contains(&v.slug)
        {
            loaded.spec.categories.push(v.slug.clone());
            self.sort_categories(&mut loaded.spec.categories);
        }
        self.save_started(&mut loaded).await?;
        if !loaded.exists() {
            tracing::info!(bot = %self.rt.name, chat_id = self.chat_id, "new subscriber");
        }
        // A trial once per Telegram user (the store remembers every trial ever started).
        if let Some(until) = self.start_trial().await? {
            self.send(
                texts::billing::trial_started(self.lang, self.inner.billing.trial_days, until),
                None,
            )
            .await;
        }
        self.send(
            texts::menu(self.lang, &self.settings(&loaded).await?),
            Some(self.menu_keyboard(loaded.spec.paused)),
        )
        .await;
        Ok(())
    }

    pub(super) async fn set_paused(
        &self,
        paused: bool,
        edit: Option<MessageId>,
    ) -> Result<String, BotError> {
        let mut loaded = self.load().await?;
        let resumed = !paused && loaded.stored.as_ref().is_some_and(|s| s.paused);
        loaded.spec.paused = paused;
        self.save(&loaded).await?;
        let note = texts::paused(self.lang, paused);
        if resumed && let Some(c) = &self.inner.options.catch_up {
            let (only_new, missed) = texts::cards::resume_buttons(self.lang, c.hours);
            self.send(
                texts::cards::resume_offer(self.lang, c.hours, c.max),
                Some(InlineKeyboardMarkup::new(vec![vec![
                    InlineKeyboardButton::callback(only_new, Callback::CatchUp(false).encode()),
                    InlineKeyboardButton::callback(missed, Callback::CatchUp(true).encode()),
                ]])),
            )
            .await;
        }
        match edit {
            Some(_) => {
                show(
                    self.rt,
                    self.chat_id,
                    edit,
                    texts::menu(self.lang, &self.settings(&loaded).await?),
                    self.menu_keyboard(paused),
                )
                .await;
            }
            None => {
                self.send(note.clone(), Some(self.menu_keyboard(paused)))
                    .await;
            }
        }
        Ok(note)
    }

    /// The answer to the offer after "Resume"; returns the toast.
    pub(super) async fn catch_up(
        &self,
        missed: bool,
        edit: Option<MessageId>,
    ) -> Result<String, BotError> {
        let Some(c) = &self.inner.options.catch_up else {
            return Ok(texts::cards::only_new(self.lang));
        };
        let answer = if missed {
            let since = self.inner.now() - chrono::Duration::hours(i64::from(c.hours));
            let n = (c.missed)(self.chat_id, since, c.max)
                .await
                .map_err(BotError::CatchUp)?;
            tracing::info!(bot = %self.rt.name, chat_id = self.chat_id, queued = n, "catching up after a pause");
            texts::cards::caught_up(self.lang, n, c.hours)
        } else {
            texts::cards::only_new(self.lang)
        };
        if let Some(id) = edit {
            show(
                self.rt,
                self.chat_id,
                Some(id),
                answer.clone(),
                InlineKeyboardMarkup::new(Vec::<Vec<InlineKeyboardButton>>::new()),
            )
            .await;
        }
        Ok(answer)
    }

    pub(super) async fn ask(&self, state: DialogueState) -> Result<(), BotError> {
        let loaded = self.load().await?;
        let o = &self.inner.options;
        let prompt = match state {
            DialogueState::Include => {
                texts::ask_include(self.lang, &loaded.spec.include, o.max_keywords)
            }
            DialogueState::Exclude => {
                texts::ask_exclude(self.lang, &loaded.spec.exclude, o.max_keywords)
            }
            DialogueState::MinBudget => {
                texts::ask_budget(self.lang, loaded.spec.min_budget.as_ref())
            }
            DialogueState::QuietHours => {
                texts::ask_quiet(self.lang, loaded.spec.quiet_hours.as_ref())
            }
            DialogueState::Report => texts::ask_report(self.lang),
            state @ (DialogueState::PlaceTitle
            | DialogueState::PlaceBody
            | DialogueState::PlaceBudget
            | DialogueState::PlaceContact) => return self.place_ask(state).await,
        };
        self.inner
            .dialogues
            .set(&self.rt.name, self.chat_id, state)
            .await?;
        self.send(prompt, None).await;
        Ok(())
    }

    /// The answer to a pending question.
    pub(super) async fn input(&self, state: DialogueState, m: &Message) -> Result<(), BotError> {
        if state.is_placement() {
            return self.place_input(state, m).await;
        }
        let text = m.text().or_else(|| m.caption()).unwrap_or("");
        let o = &self.inner.options;
        let mut loaded = self.load().await?;
        let reply = match state {
            DialogueState::Include | DialogueState::Exclude => {
                match input::parse_keywords(text, o.max_keywords, o.max_keyword_chars) {
                    Err(e) => return self.refuse(&e).await,
                    Ok(list) => {
                        let list = list.unwrap_or_default();
                        if state == DialogueState::Include {
                            loaded.spec.include.clone_from(&list);
                            texts::include_saved(self.lang, &list)
                        } else {
                            loaded.spec.exclude.clone_from(&list);
                            texts::exclude_saved(self.lang, &list)
                        }
                    }
                }
            }
            DialogueState::MinBudget => {
                let default_currency = match self.lang {
                    Lang::Ru => "RUB",
                    Lang::En => "USD",
                };
                match input::parse_min_budget(text, default_currency) {
                    Err(e) => return self.refuse(&e).await,
                    Ok(mut budget) => {
                        // A stricter setting made elsewhere (e.g. by an admin) is kept.
                        let strict = loaded
                            .spec
                            .min_budget
                            .as_ref()
                            .is_some_and(|b| b.require_stated);
                        if let Some(b) = budget.as_mut() {
                            b.require_stated = strict;
                        }
                        loaded.spec.min_budget = budget.clone();
                        texts::budget_saved(self.lang, budget.as_ref())
                    }
                }
            }
            DialogueState::QuietHours => {
                let previous = loaded
                    .spec
                    .quiet_hours
                    .as_ref()
                    .map(|q| q.time_zone.clone());
                match input::parse_quiet_hours(text, previous.as_deref()) {
                    Err(e) => return self.refuse(&e).await,
                    Ok(q) => {
                        loaded.spec.quiet_hours.clone_from(&q);
                        texts::quiet_saved(self.lang, q.as_ref())
                    }
                }
            }
            DialogueState::Report => return self.report_missed(m).await,
            DialogueState::PlaceTitle
            | DialogueState::PlaceBody
            | DialogueState::PlaceBudget
            | DialogueState::PlaceContact => return self.place_input(state, m).await,
        };
        self.save(&loaded).await?;
        self.inner
            .dialogues
            .clear(&self.rt.name, self.chat_id)
            .await?;
        tracing::info!(bot = %self.rt.name, chat_id = self.chat_id, setting = ask_name(state), "setting changed");
        let wants = self.inner.store.wants_of(self.chat_id).await?;
        self.send(reply, Some(filters_keyboard(self.lang, wants)))
            .await;
        Ok(())
    }

    /// A refused input: explain, keep the question open.
    async fn refuse(&self, e: &InputError) -> Result<(), BotError> {
        self.send(texts::input_error(self.lang, e), None).await;
        Ok(())
    }

    async fn report_missed(&self, m: &Message) -> Result<(), BotError> {
        let Some(text) = message_text(m) else {
            self.send(texts::report_needs_text(self.lang), None).await;
            return Ok(());
        };
        if !self.report_allowed().await {
            // The question is over: more text is not taken as reports. (The refusal was
            // sent: a failure here must not run the update, and the refusal, again.)
            if let Err(e) = self
                .inner
                .dialogues
                .clear(&self.rt.name, self.chat_id)
                .await
            {
                tracing::warn!(bot = %self.rt.name, chat_id = self.chat_id, error = %e, "could not end the report dialogue");
            }
            return Ok(());
        }
        let report = NewReport {
            chat_id: self.chat_id,
            post_id: None,
            kind: ReportKind::Missed,
            text: truncate(text, self.inner.options.max_report_chars),
            link: link_of(m),
        };
        let id = self.inner.store.insert_report(&report, Utc::now()).await?;
        // The report exists now: nothing below may fail the update (a retry would file it
        // again).
        tracing::info!(bot = %self.rt.name, chat_id = self.chat_id, report_id = id.get(), "missed vacancy reported");
        metrics::counter!(crate::events::REPORTS_TOTAL, "kind" => "missed").increment(1);
        if let Err(e) = self
            .inner
            .dialogues
            .clear(&self.rt.name, self.chat_id)
            .await
        {
            tracing::warn!(bot = %self.rt.name, chat_id = self.chat_id, error = %e, "could not end the report dialogue");
        }
        self.send(
            texts::report_thanks(self.lang, id.get()),
            Some(back_keyboard(self.lang)),
        )
        .await;
        Ok(())
    }
}
