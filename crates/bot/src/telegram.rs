//! The Telegram calls every room makes: one running bot ([`BotRuntime`]), replies and menu
//! screens (HTML, no link previews, a 429 waited out), callback answers, and errors rendered
//! without the token.

use std::time::Duration;

use teloxide::prelude::*;
use teloxide::types::{
    CallbackQuery, ChatId, InlineKeyboardMarkup, LinkPreviewOptions, MessageId, ParseMode,
};
use teloxide::{ApiError, RequestError};

use crate::message::truncate;

/// One running bot (one token).
#[derive(Debug)]
pub(crate) struct BotRuntime {
    pub name: String,
    /// Kept only to redact it from error messages.
    pub token: String,
    pub bot: Bot,
    /// A client whose timeout outlasts a long poll.
    pub poll_bot: Bot,
    pub username: String,
    /// Whether this bot runs the main bot's dialogue.
    pub is_main: bool,
}

impl BotRuntime {
    /// A failed call as the crate's error, token redacted.
    pub(crate) fn error(&self, e: &RequestError) -> crate::BotError {
        crate::BotError::Telegram {
            bot: self.name.clone(),
            message: describe(e, &self.token),
        }
    }
}

/// Renders a teloxide error without the token (reqwest errors carry the request URL,
/// which contains it).
pub fn describe(err: &RequestError, token: &str) -> String {
    // With the causes: "error sending request: … Connection refused" says what to fix.
    let mut text = err.to_string();
    let mut source = std::error::Error::source(err);
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    if token.is_empty() {
        text
    } else {
        text.replace(token, "<token>")
    }
}

/// Link previews off (a reply or a digest quoting a link stays compact).
pub(crate) fn no_preview() -> LinkPreviewOptions {
    LinkPreviewOptions {
        is_disabled: true,
        url: None,
        prefer_small_media: false,
        prefer_large_media: false,
        show_above_text: false,
    }
}

/// Sends an HTML message; waits out a 429 (up to twice, at most 10 s each). Failures are
/// logged (the user cannot be told anyway) and give `None`.
pub(crate) async fn send(
    rt: &BotRuntime,
    chat_id: i64,
    text: String,
    keyboard: Option<InlineKeyboardMarkup>,
) -> Option<MessageId> {
    let mut attempt = 0;
    loop {
        let mut req = rt
            .bot
            .send_message(ChatId(chat_id), text.clone())
            .parse_mode(ParseMode::Html)
            .link_preview_options(no_preview());
        if let Some(kb) = &keyboard {
            req = req.reply_markup(kb.clone());
        }
        match req.await {
            Ok(m) => return Some(m.id),
            Err(RequestError::RetryAfter(wait)) if attempt < 2 => {
                attempt += 1;
                tokio::time::sleep(wait.duration().min(Duration::from_secs(10))).await;
            }
            Err(e) => {
                tracing::warn!(bot = %rt.name, chat_id, error = %describe(&e, &rt.token), "sending a reply failed");
                return None;
            }
        }
    }
}

/// Replaces a message's text and keyboard (a menu screen); sends a new message when there
/// is none to edit or it cannot be edited. "Not modified" (a redelivered tap) is success.
pub(crate) async fn show(
    rt: &BotRuntime,
    chat_id: i64,
    edit: Option<MessageId>,
    text: String,
    keyboard: InlineKeyboardMarkup,
) {
    if let Some(message_id) = edit {
        let res = rt
            .bot
            .edit_message_text(ChatId(chat_id), message_id, text.clone())
            .parse_mode(ParseMode::Html)
            .link_preview_options(no_preview())
            .reply_markup(keyboard.clone())
            .await;
        match res {
            Ok(_) | Err(RequestError::Api(ApiError::MessageNotModified)) => return,
            Err(e) => {
                tracing::debug!(bot = %rt.name, chat_id, error = %describe(&e, &rt.token), "editing a menu failed; sending it anew");
            }
        }
    }
    send(rt, chat_id, text, Some(keyboard)).await;
}

/// Answers a callback query (stops the button's spinner), with a toast if given.
pub(crate) async fn answer(
    rt: &BotRuntime,
    q: &CallbackQuery,
    chat_id: i64,
    toast: Option<String>,
) {
    let mut answer = rt.bot.answer_callback_query(q.id.clone());
    if let Some(t) = toast {
        answer = answer.text(truncate(&t, 190));
    }
    if let Err(e) = answer.await {
        tracing::debug!(bot = %rt.name, chat_id, error = %describe(&e, &rt.token), "answering a callback failed");
    }
}
