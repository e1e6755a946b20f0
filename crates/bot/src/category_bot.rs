//! The category bots' room: `/start` and `/stop` for the bot's categories (or the one a deep
//! link names), help, `/wrong` reports on delivered messages, and noticing when a user
//! blocks or unblocks the bot.

use std::sync::Arc;

use chrono::Utc;
use jobwire_core::CategorySlug;
use jobwire_store::{
    BlockScope, CardStore, DeliveryStore, LearningStore, NewReport, ReportKind, SubscriberStore,
};
use teloxide::prelude::*;
use teloxide::types::ChatMemberKind;

use crate::BotError;
use crate::categories::Categories;
use crate::events::BotEvent;
use crate::limits::Reports;
use crate::message::{link_of, message_text, truncate};
use crate::subscriber::Subscribers;
use crate::telegram::BotRuntime;
use crate::texts;
use crate::turn::Turn;

/// The stores the category bots read and write.
pub(crate) struct CategoryBotStores {
    pub subscribers: Arc<dyn SubscriberStore>,
    /// Reports about a delivered post, which may withhold it.
    pub cards: Arc<dyn CardStore>,
    /// The post a delivered message is.
    pub deliveries: Arc<dyn DeliveryStore>,
    /// Reports about no known post.
    pub learning: Arc<dyn LearningStore>,
}

/// What the category bots work with.
pub(crate) struct CategoryBots {
    cards: Arc<dyn CardStore>,
    deliveries: Arc<dyn DeliveryStore>,
    learning: Arc<dyn LearningStore>,
    categories: Arc<Categories>,
    subscribers: Subscribers,
    /// Each chat's report allowance, shared with the main bot.
    reports: Arc<Reports>,
    /// Longest report text kept, in characters.
    max_report_chars: usize,
    /// Distinct complainers that withhold a post (0: never).
    report_threshold: u32,
}

impl std::fmt::Debug for CategoryBots {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CategoryBots")
            .field("categories", &self.categories)
            .field("max_report_chars", &self.max_report_chars)
            .field("report_threshold", &self.report_threshold)
            .finish_non_exhaustive()
    }
}

impl CategoryBots {
    pub(crate) fn new(
        stores: CategoryBotStores,
        categories: Arc<Categories>,
        reports: Arc<Reports>,
        max_report_chars: usize,
        report_threshold: u32,
    ) -> Self {
        Self {
            subscribers: Subscribers::new(stores.subscribers),
            cards: stores.cards,
            deliveries: stores.deliveries,
            learning: stores.learning,
            categories,
            reports,
            max_report_chars,
            report_threshold,
        }
    }

    /// Whether bot `bot` delivers any category now.
    pub(crate) fn serves(&self, bot: &str) -> bool {
        !self.categories.of_bot(bot).is_empty()
    }

    /// The categories a `/start` or `/stop` is about: the one named by a deep link, or
    /// every category the bot delivers.
    fn target_categories(&self, turn: &Turn<'_>, payload: &str) -> Vec<CategorySlug> {
        let served = self.served_categories(turn);
        match served.iter().find(|s| s.as_str() == payload) {
            Some(one) => vec![one.clone()],
            None => served,
        }
    }

    /// Every category the bot delivers.
    fn served_categories(&self, turn: &Turn<'_>) -> Vec<CategorySlug> {
        self.categories.of_bot(&turn.rt.name)
    }

    pub(crate) async fn start(&self, turn: &Turn<'_>, payload: &str) -> Result<(), BotError> {
        let targets = self.target_categories(turn, payload);
        let mut loaded = self.subscribers.load(turn).await?;
        for slug in &targets {
            if !loaded.spec.categories.contains(slug) {
                loaded.spec.categories.push(slug.clone());
            }
        }
        self.categories.sort(&mut loaded.spec.categories);
        self.subscribers.save_started(turn, &mut loaded).await?;
        tracing::info!(bot = %turn.rt.name, chat_id = turn.chat_id, categories = ?targets, "subscribed through a category bot");
        turn.send(
            texts::category_started(
                turn.lang,
                &self.categories.names(&targets),
                self.categories.main_username(),
            ),
            None,
        )
        .await;
        Ok(())
    }

    pub(crate) async fn stop(&self, turn: &Turn<'_>, payload: &str) -> Result<(), BotError> {
        let targets = self.target_categories(turn, payload);
        let mut loaded = self.subscribers.load(turn).await?;
        if loaded.exists() && loaded.spec.categories.iter().any(|c| targets.contains(c)) {
            loaded.spec.categories.retain(|c| !targets.contains(c));
            self.subscribers.save(&loaded).await?;
            tracing::info!(bot = %turn.rt.name, chat_id = turn.chat_id, categories = ?targets, "unsubscribed through a category bot");
        }
        turn.send(
            texts::category_stopped(turn.lang, &self.categories.names(&targets)),
            None,
        )
        .await;
        Ok(())
    }

    pub(crate) fn help(&self, turn: &Turn<'_>) -> String {
        texts::category_help(
            turn.lang,
            &self.categories.names(&self.served_categories(turn)),
            self.categories.main_username(),
        )
    }

    /// `/wrong` (or `/report`) in reply to a delivered message.
    pub(crate) async fn report_wrong(
        &self,
        turn: &Turn<'_>,
        m: &Message,
        comment: &str,
    ) -> Result<(), BotError> {
        let Some(replied) = m.reply_to_message() else {
            turn.send(texts::wrong_needs_reply(turn.lang), None).await;
            return Ok(());
        };
        let Some(text) = message_text(replied) else {
            turn.send(texts::wrong_needs_reply(turn.lang), None).await;
            return Ok(());
        };
        if !self.reports.allowed(turn).await {
            return Ok(());
        }
        let mut text = truncate(text, self.max_report_chars);
        let comment = comment.trim();
        if !comment.is_empty() {
            text.push_str("\n\n// ");
            text.push_str(&truncate(comment, 500));
        }
        // The delivered post, so an accepted report teaches the post's own text.
        let post_id = match self
            .deliveries
            .post_of_message(&turn.rt.name, turn.chat_id, i64::from(replied.id.0))
            .await
        {
            Ok(found) => found,
            Err(e) => {
                tracing::warn!(bot = %turn.rt.name, error = %e, "could not look up the reported message's post; filed without it");
                None
            }
        };
        let report = NewReport {
            chat_id: turn.chat_id,
            post_id,
            kind: ReportKind::Wrong,
            text,
            link: link_of(replied),
        };
        // About a known post, it counts toward withholding the post like the card buttons.
        let id = if report.post_id.is_some() {
            let filed = self
                .cards
                .file_card_report(&report, self.report_threshold, Utc::now())
                .await?;
            if filed.withheld
                && let Some(post) = report.post_id
            {
                BotEvent::PostWithheld {
                    post: post.get(),
                    reporters: filed.reporters,
                }
                .emit();
            }
            match filed.report {
                Some(id) => id,
                None => self.learning.insert_report(&report, Utc::now()).await?,
            }
        } else {
            self.learning.insert_report(&report, Utc::now()).await?
        };
        BotEvent::WrongReported {
            bot: &turn.rt.name,
            chat_id: turn.chat_id,
            report_id: id.get(),
            replied_message_id: replied.id.0,
        }
        .emit();
        turn.send(texts::wrong_thanks(turn.lang, id.get()), None)
            .await;
        Ok(())
    }

    /// A user blocked or unblocked a bot.
    pub(crate) async fn my_chat_member(
        &self,
        rt: &BotRuntime,
        u: &teloxide::types::ChatMemberUpdated,
    ) -> Result<(), BotError> {
        // Only the bots that deliver decide whether a subscriber can be reached.
        if !u.chat.is_private() || !self.serves(&rt.name) {
            return Ok(());
        }
        let chat_id = u.chat.id.0;
        let blocked = match &u.new_chat_member.kind {
            ChatMemberKind::Banned(_) => true,
            ChatMemberKind::Member(_) => false,
            _ => return Ok(()),
        };
        // Blocking one category bot stops that bot only: the others go on delivering.
        let scope = blocked.then_some(BlockScope::Bot);
        let changed = self
            .subscribers
            .set_bot_block(chat_id, &rt.name, scope)
            .await?;
        tracing::info!(bot = %rt.name, chat_id, blocked, changed, "the user {} the bot", if blocked { "blocked" } else { "unblocked" });
        Ok(())
    }
}
