//! Reading an update: its kind (for metrics), its chat, its user's language and name, a
//! message's text and link, and a command's name and arguments.

use teloxide::prelude::*;
use teloxide::types::{MessageEntityKind, MessageOrigin, UpdateKind};

/// The metrics label of an update.
pub(crate) fn update_kind(update: &Update) -> &'static str {
    match &update.kind {
        UpdateKind::Message(m) if m.text().is_some_and(|t| t.starts_with('/')) => "command",
        UpdateKind::Message(_) => "message",
        UpdateKind::CallbackQuery(_) => "callback",
        UpdateKind::MyChatMember(_) => "my_chat_member",
        UpdateKind::PreCheckoutQuery(_) => "pre_checkout_query",
        UpdateKind::Error(_) => "unparsed",
        _ => "other",
    }
}

/// The chat an update belongs to, to keep one chat's updates in order.
pub(crate) fn update_chat(update: &Update) -> Option<i64> {
    match &update.kind {
        UpdateKind::Message(m) | UpdateKind::EditedMessage(m) => Some(m.chat.id.0),
        UpdateKind::CallbackQuery(q) => Some(
            q.message
                .as_ref()
                .map_or_else(|| user_chat(q.from.id.0), |m| m.chat().id.0),
        ),
        UpdateKind::MyChatMember(u) => Some(u.chat.id.0),
        UpdateKind::PreCheckoutQuery(q) => Some(user_chat(q.from.id.0)),
        _ => None,
    }
}

/// The private chat of a Telegram user.
pub(crate) fn user_chat(user_id: u64) -> i64 {
    i64::try_from(user_id).unwrap_or(i64::MAX)
}

/// The language code of the user who wrote or tapped.
pub(crate) fn update_language(update: &Update) -> Option<&str> {
    match &update.kind {
        UpdateKind::Message(m) => m.from.as_ref()?.language_code.as_deref(),
        UpdateKind::CallbackQuery(q) => q.from.language_code.as_deref(),
        _ => None,
    }
}

/// How a user is called: `@username`, or first and last name.
pub(crate) fn display_name(user: &teloxide::types::User) -> String {
    match &user.username {
        Some(u) => format!("@{u}"),
        None => match &user.last_name {
            Some(l) => format!("{} {l}", user.first_name),
            None => user.first_name.clone(),
        },
    }
}

/// The text (or caption) of a message, if it has any non-blank one.
pub(crate) fn message_text(m: &Message) -> Option<&str> {
    m.text()
        .or_else(|| m.caption())
        .filter(|t| !t.trim().is_empty())
}

/// Cuts `text` to `max` characters.
pub(crate) fn truncate(text: &str, max: usize) -> String {
    let text = text.trim();
    match text.char_indices().nth(max) {
        Some((i, _)) => text[..i].to_owned(),
        None => text.to_owned(),
    }
}

/// A link to the original of a message: the channel post it was forwarded from, a link
/// under its text, or the first URL in it.
pub(crate) fn link_of(m: &Message) -> Option<String> {
    if let Some(MessageOrigin::Channel {
        chat, message_id, ..
    }) = m.forward_origin()
        && let Some(username) = chat.username()
    {
        return Some(format!("https://t.me/{username}/{}", message_id.0));
    }
    let entities = m.entities().or_else(|| m.caption_entities()).unwrap_or(&[]);
    for e in entities {
        if let MessageEntityKind::TextLink { url } = &e.kind {
            return Some(url.to_string());
        }
    }
    let text = m.text().or_else(|| m.caption())?;
    text.split_whitespace()
        .find(|w| w.starts_with("https://") || w.starts_with("http://"))
        .map(|w| {
            w.trim_end_matches([')', ']', '.', ',', ';', '!', '?', '»', '"'])
                .to_owned()
        })
}

/// Splits `/cmd@bot args` into the lower-cased command and the rest. Commands addressed
/// to another bot are not ours.
pub(crate) fn parse_command<'t>(text: &'t str, username: &str) -> Option<(String, &'t str)> {
    let rest = text.strip_prefix('/')?;
    let (head, args) = match rest.find(char::is_whitespace) {
        Some(i) => (&rest[..i], rest[i..].trim()),
        None => (rest, ""),
    };
    let (cmd, target) = match head.split_once('@') {
        Some((c, t)) => (c, Some(t)),
        None => (head, None),
    };
    if target.is_some_and(|t| !t.eq_ignore_ascii_case(username)) {
        return None;
    }
    if cmd.is_empty()
        || cmd.len() > 32
        || !cmd.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
    {
        return None;
    }
    Some((cmd.to_ascii_lowercase(), args))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn commands_are_split_and_addressed() {
        assert_eq!(parse_command("/start", "b"), Some(("start".into(), "")));
        assert_eq!(
            parse_command("/Start web", "b"),
            Some(("start".into(), "web"))
        );
        assert_eq!(
            parse_command("/wrong@B  not a job ", "b"),
            Some(("wrong".into(), "not a job"))
        );
        assert_eq!(parse_command("/wrong@other", "b"), None);
        assert_eq!(parse_command("hello", "b"), None);
        assert_eq!(parse_command("/ hi", "b"), None);
        assert_eq!(parse_command("/путь", "b"), None);
    }

    #[test]
    fn truncation_counts_characters() {
        assert_eq!(truncate("  привет мир ", 6), "привет");
        assert_eq!(truncate("abc", 10), "abc");
    }
}
