//! An employer places a vacancy in the main bot: `/post` (or the menu button) asks for the
//! title, the text, the budget and a contact, then the categories; shows the card as
//! subscribers will see it with its price; sends a one-time Stars invoice. The draft lives in
//! the store (`placements`, one open per chat), the question being asked in the dialogue
//! store, so an employer can continue on any bot process.

use jobwire_core::CategorySlug;
use jobwire_core::format::render;
use jobwire_core::placement::{self, MAX_CATEGORIES, PlacementPayload};
use jobwire_store::{PlacementDraft, PlacementRow};
use teloxide::prelude::*;
use teloxide::types::{InlineKeyboardButton, InlineKeyboardMarkup, LabeledPrice, MessageId};

use super::Placements;
use super::config::PlacementsConfig;
use crate::BotError;
use crate::callbacks::{Callback, PlaceStep, button};
use crate::dialogue::DialogueState;
use crate::events::BotEvent;
use crate::message::message_text;
use crate::payments::nonce;
use crate::telegram::describe;
use crate::texts::{self, placements as t};
use crate::turn::Turn;

/// What a placement lacks, in the order it is asked for: one of the four questions, or its
/// categories. `None`: it can be previewed and paid.
enum Missing {
    Answer(DialogueState),
    Categories,
}

fn missing(p: &PlacementRow) -> Option<Missing> {
    let d = &p.draft;
    let question = [
        (d.title.is_none(), DialogueState::PlaceTitle),
        (d.body.is_none(), DialogueState::PlaceBody),
        (d.budget.is_none(), DialogueState::PlaceBudget),
        (d.contact.is_none(), DialogueState::PlaceContact),
    ]
    .into_iter()
    .find_map(|(lacks, state)| lacks.then_some(state));
    match question {
        Some(state) => Some(Missing::Answer(state)),
        None if d.categories.is_empty() => Some(Missing::Categories),
        None => None,
    }
}

impl Placements {
    /// The categories offered for placement, in the configured order, with their prices.
    fn offered(&self, config: &PlacementsConfig) -> Vec<(CategorySlug, String, u32)> {
        self.categories
            .views()
            .iter()
            .filter_map(|v| {
                config
                    .prices
                    .get(&v.slug)
                    .map(|p| (v.slug.clone(), v.name.clone(), *p))
            })
            .collect()
    }

    /// `/post` and the menu button: continues the open draft, or starts one.
    pub(crate) async fn place_start(&self, turn: &Turn<'_>) -> Result<(), BotError> {
        if self.config.as_ref().is_none() {
            turn.send(t::off(turn.lang), None).await;
            return Ok(());
        }
        let store = &self.store;
        let p = match store.open_placement(turn.chat_id).await? {
            Some(p) => p,
            None => {
                let draft = PlacementDraft {
                    lang: turn.lang.code().to_owned(),
                    ..PlacementDraft::default()
                };
                store
                    .save_placement_draft(turn.chat_id, &draft, self.now())
                    .await?
            }
        };
        tracing::info!(bot = %turn.rt.name, chat_id = turn.chat_id, placement = p.id.get(), "placement started");
        self.place_next(turn, &p).await
    }

    /// Asks the first question not answered yet, else shows the preview.
    async fn place_next(&self, turn: &Turn<'_>, p: &PlacementRow) -> Result<(), BotError> {
        match missing(p) {
            Some(Missing::Answer(state)) => self.place_ask(turn, state).await,
            Some(Missing::Categories) => self.place_categories(turn, p, None).await,
            None => self.place_preview(turn, p).await,
        }
    }

    /// Asks one of the four questions.
    pub(crate) async fn place_ask(
        &self,
        turn: &Turn<'_>,
        state: DialogueState,
    ) -> Result<(), BotError> {
        let text = match state {
            DialogueState::PlaceBody => t::ask_body(turn.lang),
            DialogueState::PlaceBudget => t::ask_budget(turn.lang),
            DialogueState::PlaceContact => t::ask_contact(turn.lang),
            _ => t::ask_title(turn.lang),
        };
        self.dialogues
            .set(&turn.rt.name, turn.chat_id, state)
            .await?;
        turn.send(text, None).await;
        Ok(())
    }

    /// An answer to one of the four questions.
    pub(crate) async fn place_input(
        &self,
        turn: &Turn<'_>,
        state: DialogueState,
        m: &Message,
    ) -> Result<(), BotError> {
        let store = &self.store;
        if self.config.as_ref().is_none() {
            self.end_dialogue(turn).await?;
            turn.send(t::off(turn.lang), None).await;
            return Ok(());
        }
        let Some(mut p) = store.open_placement(turn.chat_id).await? else {
            self.end_dialogue(turn).await?;
            turn.send(t::no_draft(turn.lang), None).await;
            return Ok(());
        };
        let text = message_text(m).unwrap_or("");
        let d = &mut p.draft;
        let parsed = match state {
            DialogueState::PlaceTitle => placement::parse_title(text).map(|v| d.title = Some(v)),
            DialogueState::PlaceBody => placement::parse_body(text).map(|v| d.body = Some(v)),
            // "No budget" is stored as an empty answer (asked and answered).
            DialogueState::PlaceBudget => {
                placement::parse_budget(text).map(|v| d.budget = Some(v.unwrap_or_default()))
            }
            _ => placement::parse_contact(text).map(|v| d.contact = Some(v)),
        };
        if let Err(e) = parsed {
            turn.send(t::input_error(turn.lang, &e), None).await;
            return Ok(());
        }
        let saved = store
            .save_placement_draft(turn.chat_id, &p.draft, self.now())
            .await?;
        self.end_dialogue(turn).await?;
        self.place_next(turn, &saved).await
    }

    /// The category picker (a new message, or `edit` redrawn).
    async fn place_categories(
        &self,
        turn: &Turn<'_>,
        p: &PlacementRow,
        edit: Option<MessageId>,
    ) -> Result<(), BotError> {
        let Some(config) = self.config.as_ref() else {
            return Ok(());
        };
        let offered = self.offered(config);
        let chosen = &p.draft.categories;
        let mut rows: Vec<Vec<InlineKeyboardButton>> = offered
            .iter()
            .map(|(slug, name, stars)| {
                let on = chosen.contains(slug);
                let mark = if on { "✅" } else { "▫️" };
                vec![button(
                    format!("{mark} {name} — {stars} ⭐"),
                    &Callback::Place(PlaceStep::Category {
                        slug: slug.clone(),
                        on: !on,
                    }),
                )]
            })
            .collect();
        rows.push(vec![button(
            t::done_button(turn.lang),
            &Callback::Place(PlaceStep::Done),
        )]);
        let prices: Vec<(String, u32)> = offered.into_iter().map(|(_, n, s)| (n, s)).collect();
        let text = t::ask_categories(turn.lang, &prices);
        match edit {
            Some(_) => turn.show(edit, text, InlineKeyboardMarkup::new(rows)).await,
            None => turn.send(text, Some(InlineKeyboardMarkup::new(rows))).await,
        }
        Ok(())
    }

    /// A tap in the category picker; returns the toast.
    pub(crate) async fn place_toggle(
        &self,
        turn: &Turn<'_>,
        slug: CategorySlug,
        on: bool,
        edit: Option<MessageId>,
    ) -> Result<Option<String>, BotError> {
        let Some(config) = self.config.as_ref() else {
            return Ok(Some(t::off(turn.lang)));
        };
        let store = &self.store;
        let Some(mut p) = store.open_placement(turn.chat_id).await? else {
            return Ok(Some(t::no_draft(turn.lang)));
        };
        if !config.prices.contains_key(&slug) {
            return Ok(None);
        }
        let chosen = &mut p.draft.categories;
        let has = chosen.contains(&slug);
        if on && !has {
            if chosen.len() >= MAX_CATEGORIES {
                return Ok(Some(t::too_many_categories(turn.lang)));
            }
            chosen.push(slug);
            self.categories.sort(chosen);
        } else if !on && has {
            chosen.retain(|c| c != &slug);
        }
        let saved = store
            .save_placement_draft(turn.chat_id, &p.draft, self.now())
            .await?;
        self.place_categories(turn, &saved, edit).await?;
        Ok(None)
    }

    /// "Done" under the picker: the preview, once a category is chosen.
    pub(crate) async fn place_done(&self, turn: &Turn<'_>) -> Result<Option<String>, BotError> {
        let Some(p) = self.store.open_placement(turn.chat_id).await? else {
            return Ok(Some(t::no_draft(turn.lang)));
        };
        if p.draft.categories.is_empty() {
            return Ok(Some(t::pick_a_category(turn.lang)));
        }
        self.place_next(turn, &p).await?;
        Ok(None)
    }

    /// The card as subscribers will see it, then its price with Pay, Edit and Delete.
    async fn place_preview(&self, turn: &Turn<'_>, p: &PlacementRow) -> Result<(), BotError> {
        let Some(config) = self.config.as_ref() else {
            return Ok(());
        };
        let Some(stars) = config.price(&p.draft.categories) else {
            // A category lost its price since it was chosen: choose again.
            let mut draft = p.draft.clone();
            draft.categories.retain(|c| config.prices.contains_key(c));
            let saved = self
                .store
                .save_placement_draft(turn.chat_id, &draft, self.now())
                .await?;
            return self.place_categories(turn, &saved, None).await;
        };
        let card = super::config::card(p, self.categories.names(&p.draft.categories), self.now());
        for part in render(&card) {
            turn.send(part, None).await;
        }
        let parts: Vec<(String, u32)> = self
            .categories
            .names(&p.draft.categories)
            .into_iter()
            .zip(&p.draft.categories)
            .filter_map(|(name, c)| config.prices.get(c).map(|s| (name, *s)))
            .collect();
        let keyboard = InlineKeyboardMarkup::new(vec![
            vec![button(
                t::pay_button(turn.lang, stars),
                &Callback::Place(PlaceStep::Pay),
            )],
            vec![
                button(t::edit_button(turn.lang), &Callback::Place(PlaceStep::Edit)),
                button(
                    t::cancel_button(turn.lang),
                    &Callback::Place(PlaceStep::Cancel),
                ),
            ],
        ]);
        turn.send(t::preview(turn.lang, stars, &parts), Some(keyboard))
            .await;
        Ok(())
    }

    /// "Edit": the questions again, from the title (the answers are written anew).
    pub(crate) async fn place_edit(&self, turn: &Turn<'_>) -> Result<(), BotError> {
        if self.config.as_ref().is_none() {
            turn.send(t::off(turn.lang), None).await;
            return Ok(());
        }
        let draft = PlacementDraft {
            lang: turn.lang.code().to_owned(),
            ..PlacementDraft::default()
        };
        self.store
            .save_placement_draft(turn.chat_id, &draft, self.now())
            .await?;
        self.place_ask(turn, DialogueState::PlaceTitle).await
    }

    /// "Delete": the open draft is dropped (an unpaid invoice for it is refused).
    pub(crate) async fn place_cancel(&self, turn: &Turn<'_>) -> Result<(), BotError> {
        let had = self
            .store
            .cancel_placement(turn.chat_id, self.now())
            .await?;
        self.end_dialogue(turn).await?;
        turn.send(t::canceled(turn.lang, had), None).await;
        Ok(())
    }

    /// "Pay": a one-time Stars invoice for the draft at its current price.
    pub(crate) async fn place_pay(&self, turn: &Turn<'_>) -> Result<(), BotError> {
        let Some(config) = self.config.as_ref() else {
            turn.send(t::off(turn.lang), None).await;
            return Ok(());
        };
        let store = &self.store;
        let Some(p) = store.open_placement(turn.chat_id).await? else {
            turn.send(t::no_draft(turn.lang), None).await;
            return Ok(());
        };
        if missing(&p).is_some() {
            return self.place_next(turn, &p).await;
        }
        let Some(stars) = config.price(&p.draft.categories) else {
            return self.place_preview(turn, &p).await;
        };
        let nonce = nonce();
        let Some(p) = store
            .invoice_placement(p.id, turn.chat_id, i64::from(stars), &nonce, self.now())
            .await?
        else {
            turn.send(t::no_draft(turn.lang), None).await;
            return Ok(());
        };
        let payload = PlacementPayload {
            placement: p.id.get(),
            chat_id: turn.chat_id,
            nonce,
        }
        .encode();
        let names = self.categories.names(&p.draft.categories).join(", ");
        let title = p.draft.title.clone().unwrap_or_default();
        let result = turn
            .rt
            .bot
            .send_invoice(
                ChatId(turn.chat_id),
                t::invoice_title(turn.lang),
                t::invoice_description(turn.lang, &title, &names),
                payload,
                jobwire_core::billing::STARS,
                [LabeledPrice::new(t::invoice_title(turn.lang), stars)],
            )
            .provider_token("")
            .await;
        match result {
            Ok(_) => {
                BotEvent::PlacementInvoiceSent {
                    bot: &turn.rt.name,
                    chat_id: turn.chat_id,
                    placement: p.id.get(),
                    stars,
                }
                .emit();
                turn.send(t::invoice_sent(turn.lang), None).await;
            }
            Err(e) => {
                let error = describe(&e, &turn.rt.token);
                tracing::error!(bot = %turn.rt.name, chat_id = turn.chat_id, placement = p.id.get(), error = %error, "sending a placement invoice failed");
                turn.send(texts::temporary_error(turn.lang), None).await;
            }
        }
        Ok(())
    }
}
