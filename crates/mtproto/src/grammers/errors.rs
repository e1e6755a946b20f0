//! Telegram's RPC errors as the [`AccountError`]s the reader acts on.

use std::time::Duration;

use grammers_mtsender::InvocationError;

use crate::account::AccountError;

/// Maps grammers' errors to the reader's.
pub(super) fn map_error(e: &InvocationError) -> AccountError {
    let InvocationError::Rpc(rpc) = e else {
        return AccountError::Other(e.to_string());
    };
    let name = rpc.name.as_str();
    let secs = |v: Option<u32>| Duration::from_secs(u64::from(v.unwrap_or(60)));
    match name {
        "FLOOD_WAIT" | "FLOOD_PREMIUM_WAIT" | "SLOWMODE_WAIT" | "TAKEOUT_INIT_DELAY" => {
            AccountError::FloodWait(secs(rpc.value))
        }
        // Account-wide spam limit of unknown length: treat as a long flood.
        "PEER_FLOOD" => AccountError::FloodWait(Duration::from_secs(12 * 3600)),
        "INVITE_HASH_EXPIRED" | "INVITE_HASH_INVALID" | "INVITE_HASH_EMPTY" => {
            AccountError::InviteExpired
        }
        "INVITE_REQUEST_SENT" => AccountError::JoinRequestSent,
        "CHANNELS_TOO_MUCH" => AccountError::ChannelsTooMuch,
        "USER_DEACTIVATED_BAN" | "PHONE_NUMBER_BANNED" | "USER_BANNED_IN_CHANNEL" => {
            AccountError::Banned
        }
        "AUTH_KEY_UNREGISTERED"
        | "SESSION_REVOKED"
        | "SESSION_EXPIRED"
        | "USER_DEACTIVATED"
        | "AUTH_KEY_INVALID"
        | "AUTH_KEY_PERM_EMPTY" => AccountError::SessionDead,
        "USERNAME_NOT_OCCUPIED"
        | "USERNAME_INVALID"
        | "CHANNEL_INVALID"
        | "CHANNEL_PRIVATE"
        | "CHAT_INVALID"
        | "PEER_ID_INVALID" => AccountError::NotFound,
        _ if rpc.code == 401 => AccountError::SessionDead,
        _ => AccountError::Other(e.to_string()),
    }
}
