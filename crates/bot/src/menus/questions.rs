//! The main bot's questions: the filter settings (include and exclude words, a minimum
//! budget, quiet hours) and their answers, and reports of missed vacancies.

use chrono::Utc;
use jobwire_store::{NewReport, ReportKind};
use teloxide::prelude::*;

use super::Menus;
use super::keyboards::{back_keyboard, filters_keyboard};
use crate::BotError;
use crate::callbacks::ask_name;
use crate::dialogue::DialogueState;
use crate::events::BotEvent;
use crate::input::{self, InputError};
use crate::message::{link_of, message_text, truncate};
use crate::texts::{self, Lang};
use crate::turn::Turn;

impl Menus {
    pub(crate) async fn ask(&self, turn: &Turn<'_>, state: DialogueState) -> Result<(), BotError> {
        let loaded = self.subscribers.load(turn).await?;
        let o = &self.options;
        let prompt = match state {
            DialogueState::Include => {
                texts::ask_include(turn.lang, &loaded.spec.include, o.max_keywords)
            }
            DialogueState::Exclude => {
                texts::ask_exclude(turn.lang, &loaded.spec.exclude, o.max_keywords)
            }
            DialogueState::MinBudget => {
                texts::ask_budget(turn.lang, loaded.spec.min_budget.as_ref())
            }
            DialogueState::QuietHours => {
                texts::ask_quiet(turn.lang, loaded.spec.quiet_hours.as_ref())
            }
            DialogueState::Report => texts::ask_report(turn.lang),
            // The router asks a placement's questions through the placements room.
            DialogueState::PlaceTitle
            | DialogueState::PlaceBody
            | DialogueState::PlaceBudget
            | DialogueState::PlaceContact => return Ok(()),
        };
        self.dialogues
            .set(&turn.rt.name, turn.chat_id, state)
            .await?;
        turn.send(prompt, None).await;
        Ok(())
    }

    /// The answer to a pending question.
    pub(crate) async fn input(
        &self,
        turn: &Turn<'_>,
        state: DialogueState,
        m: &Message,
    ) -> Result<(), BotError> {
        let text = m.text().or_else(|| m.caption()).unwrap_or("");
        let o = &self.options;
        let mut loaded = self.subscribers.load(turn).await?;
        let reply = match state {
            DialogueState::Include | DialogueState::Exclude => {
                match input::parse_keywords(text, o.max_keywords, o.max_keyword_chars) {
                    Err(e) => return self.refuse(turn, &e).await,
                    Ok(list) => {
                        let list = list.unwrap_or_default();
                        if state == DialogueState::Include {
                            loaded.spec.include.clone_from(&list);
                            texts::include_saved(turn.lang, &list)
                        } else {
                            loaded.spec.exclude.clone_from(&list);
                            texts::exclude_saved(turn.lang, &list)
                        }
                    }
                }
            }
            DialogueState::MinBudget => {
                let default_currency = match turn.lang {
                    Lang::Ru => "RUB",
                    Lang::En => "USD",
                };
                match input::parse_min_budget(text, default_currency) {
                    Err(e) => return self.refuse(turn, &e).await,
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
                        texts::budget_saved(turn.lang, budget.as_ref())
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
                    Err(e) => return self.refuse(turn, &e).await,
                    Ok(q) => {
                        loaded.spec.quiet_hours.clone_from(&q);
                        texts::quiet_saved(turn.lang, q.as_ref())
                    }
                }
            }
            DialogueState::Report => return self.report_missed(turn, m).await,
            // The router hands a placement's answers to the placements room.
            DialogueState::PlaceTitle
            | DialogueState::PlaceBody
            | DialogueState::PlaceBudget
            | DialogueState::PlaceContact => return Ok(()),
        };
        self.subscribers.save(&loaded).await?;
        self.dialogues.clear(&turn.rt.name, turn.chat_id).await?;
        tracing::info!(bot = %turn.rt.name, chat_id = turn.chat_id, setting = ask_name(state), "setting changed");
        let wants = self.cards.wants_of(turn.chat_id).await?;
        turn.send(reply, Some(filters_keyboard(turn.lang, wants)))
            .await;
        Ok(())
    }

    /// A refused input: explain, keep the question open.
    async fn refuse(&self, turn: &Turn<'_>, e: &InputError) -> Result<(), BotError> {
        turn.send(texts::input_error(turn.lang, e), None).await;
        Ok(())
    }

    async fn report_missed(&self, turn: &Turn<'_>, m: &Message) -> Result<(), BotError> {
        let Some(text) = message_text(m) else {
            turn.send(texts::report_needs_text(turn.lang), None).await;
            return Ok(());
        };
        if !self.reports.allowed(turn).await {
            // The question is over: more text is not taken as reports. (The refusal was
            // sent: a failure here must not run the update, and the refusal, again.)
            if let Err(e) = self.dialogues.clear(&turn.rt.name, turn.chat_id).await {
                tracing::warn!(bot = %turn.rt.name, chat_id = turn.chat_id, error = %e, "could not end the report dialogue");
            }
            return Ok(());
        }
        let report = NewReport {
            chat_id: turn.chat_id,
            post_id: None,
            kind: ReportKind::Missed,
            text: truncate(text, self.options.max_report_chars),
            link: link_of(m),
        };
        let id = self.learning.insert_report(&report, Utc::now()).await?;
        // The report exists now: nothing below may fail the update (a retry would file it
        // again).
        BotEvent::MissedReported {
            bot: &turn.rt.name,
            chat_id: turn.chat_id,
            report_id: id.get(),
        }
        .emit();
        if let Err(e) = self.dialogues.clear(&turn.rt.name, turn.chat_id).await {
            tracing::warn!(bot = %turn.rt.name, chat_id = turn.chat_id, error = %e, "could not end the report dialogue");
        }
        turn.send(
            texts::report_thanks(turn.lang, id.get()),
            Some(back_keyboard(turn.lang)),
        )
        .await;
        Ok(())
    }
}
