//! What Telegram's refusals mean for a send: worth trying again, or the bot cannot reach the
//! chat (and how far that goes). The send stage and the broadcast sender read them alike.

use jobwire_store::BlockScope;
use teloxide::{ApiError, RequestError};

/// Whether a failed call is worth making again: network and HTTP trouble, and Telegram's
/// own errors (5xx). teloxide drops the HTTP status, so a reply it could not match to a
/// known error ([`ApiError::Unknown`]) counts as Telegram's trouble unless its description
/// starts like the Bot API's client errors ("Bad Request: …", "Forbidden: …"): those are
/// answers about the request, and repeating it would get the same answer.
pub(crate) fn is_transient(e: &RequestError) -> bool {
    const CLIENT_ERRORS: [&str; 7] = [
        "Bad Request",
        "Unauthorized",
        "Forbidden",
        "Not Found",
        "Conflict",
        "Method Not Allowed",
        "Too Many Requests",
    ];
    match e {
        RequestError::Api(ApiError::Unknown(description)) => {
            !CLIENT_ERRORS.iter().any(|p| description.starts_with(p))
        }
        RequestError::Api(_) | RequestError::MigrateToChatId(_) | RequestError::RetryAfter(_) => {
            false
        }
        RequestError::Network(_) | RequestError::InvalidJson { .. } | RequestError::Io(_) => true,
    }
}

/// Whether Telegram's answer means this bot cannot reach the chat, and how far that goes:
/// blocking or removing one bot concerns that bot only; a user who never pressed Start in it
/// can still start it; a deleted account is unreachable through any bot.
pub(crate) fn block_scope(e: &ApiError) -> Option<BlockScope> {
    match e {
        ApiError::BotBlocked
        | ApiError::BotKicked
        | ApiError::BotKickedFromSupergroup
        | ApiError::BotKickedFromChannel => Some(BlockScope::Bot),
        ApiError::CantInitiateConversation => Some(BlockScope::NotStarted),
        ApiError::UserDeactivated | ApiError::CantTalkWithBots => Some(BlockScope::Everywhere),
        // Telegram now words some of these differently from what teloxide matches
        // ("Forbidden: bot can't initiate conversation with a user" where teloxide expects
        // "Unauthorized: …"): read the description too.
        ApiError::Unknown(description) => {
            let d = description.to_ascii_lowercase();
            if d.contains("can't initiate conversation") {
                Some(BlockScope::NotStarted)
            } else if d.contains("bot was blocked") || d.contains("bot was kicked") {
                Some(BlockScope::Bot)
            } else if d.contains("user is deactivated") {
                Some(BlockScope::Everywhere)
            } else {
                None
            }
        }
        _ => None,
    }
}
