//! The cards room: the buttons under a delivered card, in every bot that delivers. "Not a
//! vacancy" and "Wrong category" (a report, once per user and post, that withholds the post
//! once enough users filed one), "Hide this author" (never delivered to this user again),
//! and showing a hidden author again from `/status`.

use std::sync::Arc;

use chrono::{DateTime, Utc};
use jobwire_core::DeliveryId;
use jobwire_core::card;
use jobwire_core::clock::Clock;
use jobwire_store::{CardStore, DeliveryStore, NewReport, PostRow, PostStore, ReportKind};
use teloxide::prelude::*;
use teloxide::types::MessageId;

use crate::BotError;
use crate::card_buttons::CardAction;
use crate::events::BotEvent;
use crate::message::truncate;
use crate::telegram::describe;
use crate::texts;
use crate::turn::Turn;

/// The stores the card buttons read and write.
pub(crate) struct CardStores {
    /// Reports, hidden authors.
    pub cards: Arc<dyn CardStore>,
    /// The delivery a card is.
    pub deliveries: Arc<dyn DeliveryStore>,
    /// The delivered post and its classification.
    pub posts: Arc<dyn PostStore>,
}

/// What the card buttons work with.
pub(crate) struct Cards {
    /// Reports, hidden authors.
    cards: Arc<dyn CardStore>,
    /// The delivery a card is.
    deliveries: Arc<dyn DeliveryStore>,
    /// The delivered post and its classification.
    posts: Arc<dyn PostStore>,
    clock: Arc<dyn Clock>,
    /// Distinct complainers that withhold a post (0: never).
    report_threshold: u32,
    /// Longest report text kept, in characters.
    max_report_chars: usize,
}

impl std::fmt::Debug for Cards {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cards")
            .field("report_threshold", &self.report_threshold)
            .field("max_report_chars", &self.max_report_chars)
            .finish_non_exhaustive()
    }
}

impl Cards {
    pub(crate) fn new(
        stores: CardStores,
        clock: Arc<dyn Clock>,
        report_threshold: u32,
        max_report_chars: usize,
    ) -> Self {
        Self {
            cards: stores.cards,
            deliveries: stores.deliveries,
            posts: stores.posts,
            clock,
            report_threshold,
            max_report_chars,
        }
    }

    fn now(&self) -> DateTime<Utc> {
        self.clock.now()
    }

    /// A tap on a card button; returns the toast.
    pub(crate) async fn card_tap(
        &self,
        turn: &Turn<'_>,
        action: CardAction,
        delivery_id: i64,
        message_id: Option<MessageId>,
    ) -> Result<String, BotError> {
        let delivery = self
            .deliveries
            .delivery(DeliveryId::from(delivery_id))
            .await?;
        // Only the chat the card was delivered to may act on it.
        let Some(delivery) = delivery.filter(|d| d.chat_id == turn.chat_id) else {
            tracing::info!(bot = %turn.rt.name, chat_id = turn.chat_id, delivery_id, "card button of an unknown or foreign delivery");
            return Ok(texts::cards::card_gone(turn.lang));
        };
        let Some(post) = self.posts.post(delivery.post_id).await? else {
            return Ok(texts::cards::card_gone(turn.lang));
        };
        let contact = self
            .posts
            .classification(post.id)
            .await?
            .and_then(|v| v.extraction)
            .and_then(|e| e.contact);
        let toast = match action {
            CardAction::NotJob | CardAction::WrongCategory => {
                self.file_card_report(turn, action, &post).await?
            }
            CardAction::HideAuthor => {
                let author = card::author_to_hide(
                    &post.channel_handle,
                    post.channel_title.as_deref(),
                    post.author.as_deref(),
                    contact.as_deref(),
                );
                let new = self
                    .cards
                    .hide_author(turn.chat_id, &author, self.now())
                    .await?;
                BotEvent::AuthorHidden {
                    bot: &turn.rt.name,
                    chat_id: turn.chat_id,
                    post: post.id.get(),
                    author: &author.key,
                    new,
                }
                .emit();
                texts::cards::author_hidden(turn.lang, &author.label, new)
            }
        };
        // The buttons show what this user did with the post.
        if let Some(message_id) = message_id {
            let done = self.card_done(turn, &post, contact.as_deref()).await?;
            // In the language the card was sent in.
            let keyboard = crate::card_buttons::card_keyboard(
                delivery.lang.as_deref(),
                delivery_id,
                post.url.as_deref(),
                &done,
            );
            if let Err(e) = turn
                .rt
                .bot
                .edit_message_reply_markup(ChatId(turn.chat_id), message_id)
                .reply_markup(keyboard)
                .await
            {
                tracing::debug!(bot = %turn.rt.name, chat_id = turn.chat_id, error = %describe(&e, &turn.rt.token), "updating a card's buttons failed");
            }
        }
        Ok(toast)
    }

    async fn file_card_report(
        &self,
        turn: &Turn<'_>,
        action: CardAction,
        post: &PostRow,
    ) -> Result<String, BotError> {
        let kind = match action {
            CardAction::WrongCategory => ReportKind::WrongCategory,
            _ => ReportKind::NotJob,
        };
        let report = NewReport {
            chat_id: turn.chat_id,
            post_id: Some(post.id),
            kind,
            text: truncate(&post.text, self.max_report_chars),
            link: post.url.clone(),
        };
        let filed = self
            .cards
            .file_card_report(&report, self.report_threshold, self.now())
            .await?;
        if let Some(id) = filed.report {
            BotEvent::CardReported {
                bot: &turn.rt.name,
                chat_id: turn.chat_id,
                post: post.id.get(),
                report_id: id.get(),
                kind: kind.as_str(),
                reporters: filed.reporters,
            }
            .emit();
        }
        if filed.withheld {
            BotEvent::PostWithheld {
                post: post.id.get(),
                reporters: filed.reporters,
            }
            .emit();
        }
        Ok(texts::cards::reported(
            turn.lang,
            action,
            filed.report.is_some(),
        ))
    }

    /// The card buttons this user already pressed for a post.
    async fn card_done(
        &self,
        turn: &Turn<'_>,
        post: &PostRow,
        contact: Option<&str>,
    ) -> Result<Vec<CardAction>, BotError> {
        let mut done: Vec<CardAction> = self
            .cards
            .card_reports_of(turn.chat_id, post.id)
            .await?
            .into_iter()
            .filter_map(|k| match k {
                ReportKind::NotJob | ReportKind::Wrong => Some(CardAction::NotJob),
                ReportKind::WrongCategory => Some(CardAction::WrongCategory),
                ReportKind::Missed => None,
            })
            .collect();
        let keys = card::author_keys(&post.channel_handle, post.author.as_deref(), contact);
        if self
            .cards
            .hidden_authors(turn.chat_id)
            .await?
            .iter()
            .any(|h| keys.contains(&h.author))
        {
            done.push(CardAction::HideAuthor);
        }
        Ok(done)
    }

    /// "Show again" under `/status`; returns the toast.
    pub(crate) async fn show_author(&self, turn: &Turn<'_>, id: i64) -> Result<String, BotError> {
        let label = self.cards.show_author(turn.chat_id, id).await?;
        tracing::info!(bot = %turn.rt.name, chat_id = turn.chat_id, id, shown = label.is_some(), "hidden author shown again");
        Ok(texts::cards::author_shown(turn.lang, label.as_deref()))
    }
}
