//! The buttons under a delivered card: "Not a vacancy" and "Wrong category" (a report, once
//! per user and post, that withholds the post once enough users filed one), "Hide this
//! author" (never delivered to this user again), and showing a hidden author again from
//! `/status`.

use jobwire_core::DeliveryId;
use jobwire_core::card::{self, CardAction, CardButton};
use jobwire_store::{NewReport, PostRow, ReportKind};
use teloxide::prelude::*;
use teloxide::types::{InlineKeyboardButton, InlineKeyboardMarkup, MessageId};

use super::{Turn, describe, truncate};
use crate::BotError;
use crate::texts;

/// Telegram's form of a card keyboard (a URL that does not parse is left out).
fn markup(rows: Vec<Vec<CardButton>>) -> InlineKeyboardMarkup {
    InlineKeyboardMarkup::new(rows.into_iter().map(|row| {
        row.into_iter()
            .filter_map(|b| match b {
                CardButton::Callback { text, data } => {
                    Some(InlineKeyboardButton::callback(text, data))
                }
                CardButton::Url { text, url } => url::Url::parse(&url)
                    .ok()
                    .map(|url| InlineKeyboardButton::url(text, url)),
            })
            .collect::<Vec<_>>()
    }))
}

impl Turn<'_> {
    /// A tap on a card button; returns the toast.
    pub(super) async fn card_tap(
        &self,
        action: CardAction,
        delivery_id: i64,
        message_id: Option<MessageId>,
    ) -> Result<String, BotError> {
        let store = &self.inner.store;
        let delivery = store.delivery(DeliveryId::from(delivery_id)).await?;
        // Only the chat the card was delivered to may act on it.
        let Some(delivery) = delivery.filter(|d| d.chat_id == self.chat_id) else {
            tracing::info!(bot = %self.rt.name, chat_id = self.chat_id, delivery_id, "card button of an unknown or foreign delivery");
            return Ok(texts::cards::card_gone(self.lang));
        };
        let Some(post) = store.post(delivery.post_id).await? else {
            return Ok(texts::cards::card_gone(self.lang));
        };
        let contact = store
            .classification(post.id)
            .await?
            .and_then(|v| v.extraction)
            .and_then(|e| e.contact);
        let toast = match action {
            CardAction::NotJob | CardAction::WrongCategory => {
                self.file_card_report(action, &post).await?
            }
            CardAction::HideAuthor => {
                let author = card::author_to_hide(
                    &post.channel_handle,
                    post.channel_title.as_deref(),
                    post.author.as_deref(),
                    contact.as_deref(),
                );
                let new = store
                    .hide_author(self.chat_id, &author, self.inner.now())
                    .await?;
                tracing::info!(bot = %self.rt.name, chat_id = self.chat_id, post = post.id.get(), author = %author.key, new, "author hidden");
                metrics::counter!(crate::events::AUTHORS_HIDDEN_TOTAL).increment(u64::from(new));
                texts::cards::author_hidden(self.lang, &author.label, new)
            }
        };
        // The buttons show what this user did with the post.
        if let Some(message_id) = message_id {
            let done = self.card_done(&post, contact.as_deref()).await?;
            // The language the card was sent in.
            let english = card::reads_english(delivery.lang.as_deref());
            let keyboard = markup(card::keyboard(
                english,
                delivery_id,
                post.url.as_deref(),
                &done,
            ));
            if let Err(e) = self
                .rt
                .bot
                .edit_message_reply_markup(ChatId(self.chat_id), message_id)
                .reply_markup(keyboard)
                .await
            {
                tracing::debug!(bot = %self.rt.name, chat_id = self.chat_id, error = %describe(&e, &self.rt.token), "updating a card's buttons failed");
            }
        }
        Ok(toast)
    }

    async fn file_card_report(
        &self,
        action: CardAction,
        post: &PostRow,
    ) -> Result<String, BotError> {
        let kind = match action {
            CardAction::WrongCategory => ReportKind::WrongCategory,
            _ => ReportKind::NotJob,
        };
        let report = NewReport {
            chat_id: self.chat_id,
            post_id: Some(post.id),
            kind,
            text: truncate(&post.text, self.inner.options.max_report_chars),
            link: post.url.clone(),
        };
        let filed = self
            .inner
            .store
            .file_card_report(
                &report,
                self.inner.options.report_threshold,
                self.inner.now(),
            )
            .await?;
        if let Some(id) = filed.report {
            tracing::info!(bot = %self.rt.name, chat_id = self.chat_id, post = post.id.get(), report_id = id.get(), kind = kind.as_str(), reporters = filed.reporters, "card reported");
            metrics::counter!(crate::events::REPORTS_TOTAL, "kind" => kind.as_str()).increment(1);
        }
        if filed.withheld {
            tracing::warn!(
                post = post.id.get(),
                reporters = filed.reporters,
                "post withheld: enough subscribers reported it; it waits for an admin"
            );
            metrics::counter!(crate::events::POSTS_WITHHELD_TOTAL).increment(1);
        }
        Ok(texts::cards::reported(
            self.lang,
            action,
            filed.report.is_some(),
        ))
    }

    /// The card buttons this user already pressed for a post.
    async fn card_done(
        &self,
        post: &PostRow,
        contact: Option<&str>,
    ) -> Result<Vec<CardAction>, BotError> {
        let store = &self.inner.store;
        let mut done: Vec<CardAction> = store
            .card_reports_of(self.chat_id, post.id)
            .await?
            .into_iter()
            .filter_map(|k| match k {
                ReportKind::NotJob | ReportKind::Wrong => Some(CardAction::NotJob),
                ReportKind::WrongCategory => Some(CardAction::WrongCategory),
                ReportKind::Missed => None,
            })
            .collect();
        let keys = card::author_keys(&post.channel_handle, post.author.as_deref(), contact);
        if store
            .hidden_authors(self.chat_id)
            .await?
            .iter()
            .any(|h| keys.contains(&h.author))
        {
            done.push(CardAction::HideAuthor);
        }
        Ok(done)
    }

    /// "Show again" under `/status`; returns the toast.
    pub(super) async fn show_author(&self, id: i64) -> Result<String, BotError> {
        let label = self.inner.store.show_author(self.chat_id, id).await?;
        tracing::info!(bot = %self.rt.name, chat_id = self.chat_id, id, shown = label.is_some(), "hidden author shown again");
        Ok(texts::cards::author_shown(self.lang, label.as_deref()))
    }
}
