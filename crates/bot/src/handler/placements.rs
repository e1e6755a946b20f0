//! An employer places a vacancy in the main bot: `/post` (or the menu button) asks for the
//! title, the text, the budget and a contact, then the categories; shows the card as
//! subscribers will see it with its price; sends a one-time Stars invoice; checks the
//! pre-checkout query against the stored draft and price; and records the payment once per
//! charge. Publishing, the "it went out" message and refunds are [`crate::placements`]'s.
//!
//! The draft lives in the store (`placements`, one open per chat), the question being asked
//! in the dialogue store, so an employer can continue on any bot process.

use jobwire_core::CategorySlug;
use jobwire_core::format::{JobCard, render};
use jobwire_core::placement::{self, MAX_CATEGORIES, PlacementPayload, PlacementStatus};
use jobwire_store::{LedgerSource, PlacementDraft, PlacementPaid, PlacementRow};
use teloxide::prelude::*;
use teloxide::types::{
    InlineKeyboardButton, InlineKeyboardMarkup, LabeledPrice, MessageId, PreCheckoutQuery,
};

use super::billing::PaymentFacts;
use super::callbacks::{Callback, PlaceStep};
use super::{Turn, describe, message_text, show, user_chat};
use crate::BotError;
use crate::dialogue::DialogueState;
use crate::placements::{PlacementsConfig, text_of};
use crate::runtime::Inner;
use crate::texts::{self, Lang, placements as t};

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

fn button(text: String, cb: &Callback) -> InlineKeyboardButton {
    InlineKeyboardButton::callback(text, cb.encode())
}

impl Turn<'_> {
    fn placements_on(&self) -> Option<&PlacementsConfig> {
        self.inner.placements.as_ref()
    }

    /// The categories offered for placement, in the configured order, with their prices.
    fn offered(&self, config: &PlacementsConfig) -> Vec<(CategorySlug, String, u32)> {
        self.inner
            .views
            .get()
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
    pub(super) async fn place_start(&self) -> Result<(), BotError> {
        if self.placements_on().is_none() {
            self.send(t::off(self.lang), None).await;
            return Ok(());
        }
        let store = &self.inner.store;
        let p = match store.open_placement(self.chat_id).await? {
            Some(p) => p,
            None => {
                let draft = PlacementDraft {
                    lang: self.lang.code().to_owned(),
                    ..PlacementDraft::default()
                };
                store
                    .save_placement_draft(self.chat_id, &draft, self.inner.now())
                    .await?
            }
        };
        tracing::info!(bot = %self.rt.name, chat_id = self.chat_id, placement = p.id, "placement started");
        self.place_next(&p).await
    }

    /// Asks the first question not answered yet, else shows the preview.
    async fn place_next(&self, p: &PlacementRow) -> Result<(), BotError> {
        match missing(p) {
            Some(Missing::Answer(state)) => self.place_ask(state).await,
            Some(Missing::Categories) => self.place_categories(p, None).await,
            None => self.place_preview(p).await,
        }
    }

    /// Asks one of the four questions.
    pub(super) async fn place_ask(&self, state: DialogueState) -> Result<(), BotError> {
        let text = match state {
            DialogueState::PlaceBody => t::ask_body(self.lang),
            DialogueState::PlaceBudget => t::ask_budget(self.lang),
            DialogueState::PlaceContact => t::ask_contact(self.lang),
            _ => t::ask_title(self.lang),
        };
        self.inner
            .dialogues
            .set(&self.rt.name, self.chat_id, state)
            .await?;
        self.send(text, None).await;
        Ok(())
    }

    /// An answer to one of the four questions.
    pub(super) async fn place_input(
        &self,
        state: DialogueState,
        m: &Message,
    ) -> Result<(), BotError> {
        let store = &self.inner.store;
        if self.placements_on().is_none() {
            self.clear_dialogue().await?;
            self.send(t::off(self.lang), None).await;
            return Ok(());
        }
        let Some(mut p) = store.open_placement(self.chat_id).await? else {
            self.clear_dialogue().await?;
            self.send(t::no_draft(self.lang), None).await;
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
            self.send(t::input_error(self.lang, &e), None).await;
            return Ok(());
        }
        let saved = store
            .save_placement_draft(self.chat_id, &p.draft, self.inner.now())
            .await?;
        self.clear_dialogue().await?;
        self.place_next(&saved).await
    }

    /// The category picker (a new message, or `edit` redrawn).
    async fn place_categories(
        &self,
        p: &PlacementRow,
        edit: Option<MessageId>,
    ) -> Result<(), BotError> {
        let Some(config) = self.placements_on() else {
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
            t::done_button(self.lang),
            &Callback::Place(PlaceStep::Done),
        )]);
        let prices: Vec<(String, u32)> = offered.into_iter().map(|(_, n, s)| (n, s)).collect();
        let text = t::ask_categories(self.lang, &prices);
        match edit {
            Some(_) => {
                show(
                    self.rt,
                    self.chat_id,
                    edit,
                    text,
                    InlineKeyboardMarkup::new(rows),
                )
                .await
            }
            None => self.send(text, Some(InlineKeyboardMarkup::new(rows))).await,
        }
        Ok(())
    }

    /// A tap in the category picker; returns the toast.
    pub(super) async fn place_toggle(
        &self,
        slug: CategorySlug,
        on: bool,
        edit: Option<MessageId>,
    ) -> Result<Option<String>, BotError> {
        let Some(config) = self.placements_on() else {
            return Ok(Some(t::off(self.lang)));
        };
        let store = &self.inner.store;
        let Some(mut p) = store.open_placement(self.chat_id).await? else {
            return Ok(Some(t::no_draft(self.lang)));
        };
        if !config.prices.contains_key(&slug) {
            return Ok(None);
        }
        let chosen = &mut p.draft.categories;
        let has = chosen.contains(&slug);
        if on && !has {
            if chosen.len() >= MAX_CATEGORIES {
                return Ok(Some(t::too_many_categories(self.lang)));
            }
            chosen.push(slug);
            self.sort_categories(chosen);
        } else if !on && has {
            chosen.retain(|c| c != &slug);
        }
        let saved = store
            .save_placement_draft(self.chat_id, &p.draft, self.inner.now())
            .await?;
        self.place_categories(&saved, edit).await?;
        Ok(None)
    }

    /// "Done" under the picker: the preview, once a category is chosen.
    pub(super) async fn place_done(&self) -> Result<Option<String>, BotError> {
        let Some(p) = self.inner.store.open_placement(self.chat_id).await? else {
            return Ok(Some(t::no_draft(self.lang)));
        };
        if p.draft.categories.is_empty() {
            return Ok(Some(t::pick_a_category(self.lang)));
        }
        self.place_next(&p).await?;
        Ok(None)
    }

    /// The card as subscribers will see it, then its price with Pay, Edit and Delete.
    async fn place_preview(&self, p: &PlacementRow) -> Result<(), BotError> {
        let Some(config) = self.placements_on() else {
            return Ok(());
        };
        let Some(stars) = config.price(&p.draft.categories) else {
            // A category lost its price since it was chosen: choose again.
            let mut draft = p.draft.clone();
            draft.categories.retain(|c| config.prices.contains_key(c));
            let saved = self
                .inner
                .store
                .save_placement_draft(self.chat_id, &draft, self.inner.now())
                .await?;
            return self.place_categories(&saved, None).await;
        };
        let text = text_of(p);
        let extraction = jobwire_core::extract::extract(&text);
        let card = JobCard {
            title: None,
            text: text.clone(),
            channel: String::new(),
            channel_url: None,
            url: None,
            categories: self.category_names(&p.draft.categories),
            posted_at: self.inner.now(),
            extraction: (!extraction.is_empty()).then_some(extraction),
            resume: false,
            direct: true,
        };
        for part in render(&card) {
            self.send(part, None).await;
        }
        let parts: Vec<(String, u32)> = self
            .category_names(&p.draft.categories)
            .into_iter()
            .zip(&p.draft.categories)
            .filter_map(|(name, c)| config.prices.get(c).map(|s| (name, *s)))
            .collect();
        let keyboard = InlineKeyboardMarkup::new(vec![
            vec![button(
                t::pay_button(self.lang, stars),
                &Callback::Place(PlaceStep::Pay),
            )],
            vec![
                button(t::edit_button(self.lang), &Callback::Place(PlaceStep::Edit)),
                button(
                    t::cancel_button(self.lang),
                    &Callback::Place(PlaceStep::Cancel),
                ),
            ],
        ]);
        self.send(t::preview(self.lang, stars, &parts), Some(keyboard))
            .await;
        Ok(())
    }

    /// "Edit": the questions again, from the title (the answers are written anew).
    pub(super) async fn place_edit(&self) -> Result<(), BotError> {
        if self.placements_on().is_none() {
            self.send(t::off(self.lang), None).await;
            return Ok(());
        }
        let draft = PlacementDraft {
            lang: self.lang.code().to_owned(),
            ..PlacementDraft::default()
        };
        self.inner
            .store
            .save_placement_draft(self.chat_id, &draft, self.inner.now())
            .await?;
        self.place_ask(DialogueState::PlaceTitle).await
    }

    /// "Delete": the open draft is dropped (an unpaid invoice for it is refused).
    pub(super) async fn place_cancel(&self) -> Result<(), BotError> {
        let had = self
            .inner
            .store
            .cancel_placement(self.chat_id, self.inner.now())
            .await?;
        self.clear_dialogue().await?;
        self.send(t::canceled(self.lang, had), None).await;
        Ok(())
    }

    /// "Pay": a one-time Stars invoice for the draft at its current price.
    pub(super) async fn place_pay(&self) -> Result<(), BotError> {
        let Some(config) = self.placements_on() else {
            self.send(t::off(self.lang), None).await;
            return Ok(());
        };
        let store = &self.inner.store;
        let Some(p) = store.open_placement(self.chat_id).await? else {
            self.send(t::no_draft(self.lang), None).await;
            return Ok(());
        };
        if missing(&p).is_some() {
            return self.place_next(&p).await;
        }
        let Some(stars) = config.price(&p.draft.categories) else {
            return self.place_preview(&p).await;
        };
        let nonce = super::billing::nonce();
        let Some(p) = store
            .invoice_placement(
                p.id,
                self.chat_id,
                i64::from(stars),
                &nonce,
                self.inner.now(),
            )
            .await?
        else {
            self.send(t::no_draft(self.lang), None).await;
            return Ok(());
        };
        let payload = PlacementPayload {
            placement: p.id,
            chat_id: self.chat_id,
            nonce,
        }
        .encode();
        let names = self.category_names(&p.draft.categories).join(", ");
        let title = p.draft.title.clone().unwrap_or_default();
        let result = self
            .rt
            .bot
            .send_invoice(
                ChatId(self.chat_id),
                t::invoice_title(self.lang),
                t::invoice_description(self.lang, &title, &names),
                payload,
                jobwire_core::billing::STARS,
                [LabeledPrice::new(t::invoice_title(self.lang), stars)],
            )
            .provider_token("")
            .await;
        match result {
            Ok(_) => {
                tracing::info!(bot = %self.rt.name, chat_id = self.chat_id, placement = p.id, stars, "placement invoice sent");
                metrics::counter!(crate::events::INVOICES_TOTAL, "plan" => "placement")
                    .increment(1);
                self.send(t::invoice_sent(self.lang), None).await;
            }
            Err(e) => {
                let error = describe(&e, &self.rt.token);
                tracing::error!(bot = %self.rt.name, chat_id = self.chat_id, placement = p.id, error = %error, "sending a placement invoice failed");
                self.send(texts::temporary_error(self.lang), None).await;
            }
        }
        Ok(())
    }

    /// A placement's successful payment: recorded once per charge, then the employer is told.
    pub(super) async fn placement_paid(
        &self,
        facts: &PaymentFacts,
        raw: String,
    ) -> Result<(), BotError> {
        if let Some(p) =
            apply_placement_payment(self.inner, self.chat_id, facts, LedgerSource::Update, raw)
                .await?
        {
            let text = if p.status == PlacementStatus::Refused {
                t::paid_for_changed(self.lang, facts.amount)
            } else {
                t::paid(
                    self.lang,
                    facts.amount,
                    p.status == PlacementStatus::AwaitingApproval,
                )
            };
            self.send(text, None).await;
        }
        Ok(())
    }
}

/// Records a placement's payment once per charge (from an update or from reconciliation).
/// `Some` when it was recorded now.
pub(crate) async fn apply_placement_payment(
    inner: &Inner,
    chat_id: i64,
    p: &PaymentFacts,
    source: LedgerSource,
    raw: String,
) -> Result<Option<PlacementRow>, BotError> {
    let payload = PlacementPayload::parse(&p.invoice_payload);
    let entry = p.ledger_entry(
        chat_id,
        "placement".to_owned(),
        payload.as_ref().map(|x| x.nonce.clone()),
        source,
        raw,
    );
    // Placements switched off since the invoice: the payment is kept and refunded.
    let approval = inner.placements.as_ref().map(|c| c.approval);
    let outcome = inner
        .store
        .apply_placement_payment(
            &entry,
            payload.as_ref().map(|x| x.placement),
            approval,
            inner.now(),
        )
        .await?;
    match outcome {
        PlacementPaid::AlreadyApplied => {
            tracing::info!(chat_id, charge = %entry.charge_id, "placement payment applied before; skipped");
            Ok(None)
        }
        PlacementPaid::Applied(row) => {
            tracing::info!(chat_id, charge = %entry.charge_id, placement = row.id, status = row.status.as_str(), amount = entry.amount, source = source.as_str(), "placement paid");
            metrics::counter!(crate::events::PLACEMENTS_TOTAL, "outcome" => "paid").increment(1);
            metrics::counter!(crate::events::PAYMENTS_TOTAL, "kind" => "placement", "currency" => entry.currency.clone(), "source" => source.as_str()).increment(1);
            if row.status == PlacementStatus::Refused {
                inner.billing.alert(format!(
                    "jobwire: payment {} of chat {chat_id} is for a placement that was not waiting for it; it is refunded",
                    entry.charge_id
                ));
            }
            Ok(Some(*row))
        }
    }
}

/// Why a placement's pre-checkout query is refused, or `None` to accept it.
pub(super) async fn check_placement_pre_checkout(
    inner: &Inner,
    q: &PreCheckoutQuery,
    lang: Lang,
) -> Option<String> {
    let refuse_unknown = || Some(texts::billing::refuse_unknown(lang));
    let Some(config) = inner.placements.as_ref() else {
        return refuse_unknown();
    };
    let Some(payload) = PlacementPayload::parse(&q.invoice_payload) else {
        return refuse_unknown();
    };
    if payload.chat_id != user_chat(q.from.id.0) {
        return refuse_unknown();
    }
    let (invoice, placement) = match (
        inner.store.invoice(&payload.nonce).await,
        inner.store.placement(payload.placement).await,
    ) {
        (Ok(Some(i)), Ok(Some(p))) => (i, p),
        (Ok(_), Ok(_)) => return refuse_unknown(),
        (Err(e), _) | (_, Err(e)) => {
            tracing::error!(error = %e, "cannot read a placement for a pre-checkout query");
            return Some(texts::billing::refuse_busy(lang));
        }
    };
    if invoice.chat_id != payload.chat_id || placement.chat_id != payload.chat_id {
        return refuse_unknown();
    }
    if invoice.paid_by.is_some() || placement.charge_id.is_some() {
        return Some(texts::billing::refuse_paid(lang));
    }
    if placement.status != PlacementStatus::Invoiced
        || placement.nonce.as_deref() != Some(payload.nonce.as_str())
    {
        return Some(t::refuse_stale(lang));
    }
    let asked = i64::from(q.total_amount);
    let current = config.price(&placement.draft.categories).map(i64::from);
    if q.currency != jobwire_core::billing::STARS
        || asked != invoice.amount
        || placement.stars != Some(asked)
        || current != Some(asked)
    {
        return Some(texts::billing::refuse_changed(lang));
    }
    None
}
