//! The category bots: `/start` and `/stop` for the bot's categories (or the one a deep
//! link names), help, `/wrong` reports on delivered messages, and noticing when a user
//! blocks or unblocks the bot.

use chrono::Utc;
use jobwire_core::CategorySlug;
use jobwire_store::{NewReport, ReportKind};
use teloxide::prelude::*;
use teloxide::types::ChatMemberKind;

use super::{Turn, link_of, message_text, truncate};
use crate::BotError;
use crate::runtime::{BotRuntime, Inner};
use crate::texts;

impl Turn<'_> {
    /// The categories a `/start` or `/stop` is about: the one named by a deep link, or
    /// every category the bot delivers.
    fn target_categories(&self, payload: &str) -> Vec<CategorySlug> {
        let served = self.served_categories();
        match served.iter().find(|s| s.as_str() == payload) {
            Some(one) => vec![one.clone()],
            None => served,
        }
    }

    /// Every category the bot delivers.
    fn served_categories(&self) -> Vec<CategorySlug> {
        self.inner.categories_of(&self.rt.name)
    }

    pub(super) fn category_names(&self, slugs: &[CategorySlug]) -> Vec<String> {
        slugs
            .iter()
            .map(|s| {
                self.inner
                    .views
                    .get()
                    .iter()
                    .find(|v| &v.slug == s)
                    .map_or_else(|| s.to_string(), |v| v.name.clone())
            })
            .collect()
    }

    pub(super) async fn category_start(&self, payload: &str) -> Result<(), BotError> {
        let targets = self.target_categories(payload);
        let mut loaded = self.load().await?;
        for slug in &targets {
            if !loaded.spec.categories.contains(slug) {
                loaded.spec.categories.push(slug.clone());
            }
        }
        self.sort_categories(&mut loaded.spec.categories);
        self.save_started(&mut loaded).await?;
        tracing::info!(bot = %self.rt.name, chat_id = self.chat_id, categories = ?targets, "subscribed through a category bot");
        self.send(
            texts::category_started(
                self.lang,
                &self.category_names(&targets),
                self.inner.main_username.as_deref(),
            ),
            None,
        )
        .await;
        Ok(())
    }

    pub(super) async fn category_stop(&self, payload: &str) -> Result<(), BotError> {
        let targets = self.target_categories(payload);
        let mut loaded = self.load().await?;
        if loaded.exists() && loaded.spec.categories.iter().any(|c| targets.contains(c)) {
            loaded.spec.categories.retain(|c| !targets.contains(c));
            self.save(&loaded).await?;
            tracing::info!(bot = %self.rt.name, chat_id = self.chat_id, categories = ?targets, "unsubscribed through a category bot");
        }
        self.send(
            texts::category_stopped(self.lang, &self.category_names(&targets)),
            None,
        )
        .await;
        Ok(())
    }

    pub(super) fn category_help(&self) -> String {
        texts::category_help(
            self.lang,
            &self.category_names(&self.served_categories()),
            self.inner.main_username.as_deref(),
        )
    }

    /// `/wrong` (or `/report`) in reply to a delivered message.
    pub(super) async fn report_wrong(&self, m: &Message, comment: &str) -> Result<(), BotError> {
        let Some(replied) = m.reply_to_message() else {
            self.send(texts::wrong_needs_reply(self.lang), None).await;
            return Ok(());
        };
        let Some(text) = message_text(replied) else {
            self.send(texts::wrong_needs_reply(self.lang), None).await;
            return Ok(());
        };
        if !self.report_allowed().await {
            return Ok(());
        }
        let mut text = truncate(text, self.inner.options.max_report_chars);
        let comment = comment.trim();
        if !comment.is_empty() {
            text.push_str("\n\n// ");
            text.push_str(&truncate(comment, 500));
        }
        // The delivered post, so an accepted report teaches the post's own text.
        let post_id = match self
            .inner
            .store
            .post_of_message(&self.rt.name, self.chat_id, i64::from(replied.id.0))
            .await
        {
            Ok(found) => found,
            Err(e) => {
                tracing::warn!(bot = %self.rt.name, error = %e, "could not look up the reported message's post; filed without it");
                None
            }
        };
        let report = NewReport {
            chat_id: self.chat_id,
            post_id,
            kind: ReportKind::Wrong,
            text,
            link: link_of(replied),
        };
        // About a known post, it counts toward withholding the post like the card buttons.
        let id = if report.post_id.is_some() {
            let filed = self
                .inner
                .store
                .file_card_report(&report, self.inner.options.report_threshold, Utc::now())
                .await?;
            if filed.withheld {
                tracing::warn!(post = ?report.post_id, reporters = filed.reporters, "post withheld: enough subscribers reported it; it waits for an admin");
                metrics::counter!(crate::events::POSTS_WITHHELD_TOTAL).increment(1);
            }
            match filed.report {
                Some(id) => id,
                None => self.inner.store.insert_report(&report, Utc::now()).await?,
            }
        } else {
            self.inner.store.insert_report(&report, Utc::now()).await?
        };
        tracing::info!(bot = %self.rt.name, chat_id = self.chat_id, report_id = id.get(), replied_message_id = replied.id.0, "wrong delivery reported");
        metrics::counter!(crate::events::REPORTS_TOTAL, "kind" => "wrong").increment(1);
        self.send(texts::wrong_thanks(self.lang, id.get()), None)
            .await;
        Ok(())
    }
}

pub(super) async fn on_my_chat_member(
    inner: &Inner,
    rt: &BotRuntime,
    u: &teloxide::types::ChatMemberUpdated,
) -> Result<(), BotError> {
    // Only the bots that deliver decide whether a subscriber can be reached.
    if !u.chat.is_private() || inner.categories_of(&rt.name).is_empty() {
        return Ok(());
    }
    let chat_id = u.chat.id.0;
    let blocked = match &u.new_chat_member.kind {
        ChatMemberKind::Banned(_) => true,
        ChatMemberKind::Member(_) => false,
        _ => return Ok(()),
    };
    // Blocking one category bot stops that bot only: the others go on delivering.
    let scope = blocked.then_some(jobwire_store::BlockScope::Bot);
    let changed = inner
        .store
        .set_bot_block(chat_id, &rt.name, scope, Utc::now())
        .await?;
    tracing::info!(bot = %rt.name, chat_id, blocked, changed, "the user {} the bot", if blocked { "blocked" } else { "unblocked" });
    Ok(())
}
