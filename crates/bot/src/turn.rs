//! One conversation turn: the chat, the bot and the user an update is about, and replying
//! to them. Every room's handler takes a [`Turn`] beside its own context.

use teloxide::prelude::*;
use teloxide::types::{CallbackQuery, InlineKeyboardMarkup, MessageId};

use crate::message::{display_name, user_chat};
use crate::telegram::{BotRuntime, send, show};
use crate::texts::Lang;

/// The chat, bot and user an update is about.
pub(crate) struct Turn<'a> {
    pub rt: &'a BotRuntime,
    pub chat_id: i64,
    pub lang: Lang,
    /// How the user is called (`@username` or first and last name).
    pub user_name: Option<String>,
}

impl<'a> Turn<'a> {
    /// The turn of a message.
    pub(crate) fn of_message(rt: &'a BotRuntime, m: &Message) -> Self {
        let from = m.from.as_ref();
        Self {
            rt,
            chat_id: m.chat.id.0,
            lang: Lang::from_code(from.and_then(|u| u.language_code.as_deref())),
            user_name: from.map(display_name),
        }
    }

    /// The turn of a button tap (in the chat of the tapped message, else the user's).
    pub(crate) fn of_callback(rt: &'a BotRuntime, q: &CallbackQuery) -> Self {
        Self {
            rt,
            chat_id: q
                .message
                .as_ref()
                .map_or_else(|| user_chat(q.from.id.0), |m| m.chat().id.0),
            lang: Lang::from_code(q.from.language_code.as_deref()),
            user_name: Some(display_name(&q.from)),
        }
    }

    /// Sends a reply to the chat.
    pub(crate) async fn send(&self, text: String, keyboard: Option<InlineKeyboardMarkup>) {
        send(self.rt, self.chat_id, text, keyboard).await;
    }

    /// Shows a screen in the chat: `edit` redrawn, or a new message.
    pub(crate) async fn show(
        &self,
        edit: Option<MessageId>,
        text: String,
        keyboard: InlineKeyboardMarkup,
    ) {
        show(self.rt, self.chat_id, edit, text, keyboard).await;
    }
}
