//! The main bot tells a user which category bot to start. Telegram does not let a bot write
//! first: a category bot the user never opened answers every delivery with "can't initiate
//! conversation", which the send stage records as that bot not started for that user
//! (`bot_blocks`). The main bot, which the user did talk to, looks for such records and sends
//! one notice per bot, with a button that opens it (and subscribes on Start).

use std::sync::Arc;
use std::time::Duration;

use chrono::Utc;
use jobwire_store::SubscriberStore;
use teloxide::types::{InlineKeyboardButton, InlineKeyboardMarkup};
use tokio_util::sync::CancellationToken;

use crate::categories::Categories;
use crate::languages::Languages;
use crate::telegram::{BotRuntime, send};
use crate::texts;

/// Notices taken per look.
const PER_LOOK: u32 = 100;

/// What the start notices work with.
pub(crate) struct Notices {
    /// The notices to send (`bot_blocks` not yet noticed).
    pub store: Arc<dyn SubscriberStore>,
    /// Which categories each bot delivers, and its username.
    pub categories: Arc<Categories>,
    /// The language of each notice's reader.
    pub languages: Arc<Languages>,
    /// How often to look (`start_notice_every`).
    pub every: Duration,
}

/// Runs until shutdown: every `start_notice_every`, sends the notices nobody sent yet.
pub(crate) async fn start_notices(
    notices: Notices,
    main: Arc<BotRuntime>,
    shutdown: CancellationToken,
) {
    let mut interval = tokio::time::interval(notices.every);
    interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = shutdown.cancelled() => return,
            _ = interval.tick() => {}
        }
        let blocks = match notices
            .store
            .take_unnotified_bot_blocks(Utc::now(), PER_LOOK)
            .await
        {
            Ok(blocks) => blocks,
            Err(e) => {
                tracing::warn!(error = %e, "cannot read which bots users must start; trying again");
                continue;
            }
        };
        for block in blocks {
            let all = notices.categories.views();
            let views: Vec<_> = all.iter().filter(|v| v.bot == block.bot).collect();
            let Some(first) = views.first() else {
                continue; // a bot no category uses any more
            };
            let lang = notices.languages.of(block.chat_id).await;
            let names: Vec<String> = views.iter().map(|v| v.name.clone()).collect();
            let text = texts::start_the_bot(lang, &first.bot_username, &names);
            let keyboard = url::Url::parse(&first.start_link()).ok().map(|url| {
                InlineKeyboardMarkup::new([[InlineKeyboardButton::url(
                    format!("@{}", first.bot_username),
                    url,
                )]])
            });
            let sent = send(&main, block.chat_id, text, keyboard).await;
            tracing::info!(chat_id = block.chat_id, bot = %block.bot, sent = sent.is_some(), "told the user to start a category bot");
        }
    }
}
