//! The thin layer over grammers: [`GrammersAccount`] (an [`Account`](crate::Account) over
//! MTProto), the conversion of grammers' raw messages ([`raw_from_tl`]), and the login flow
//! ([`login`], [`check_session`]).
//!
//! No local server can stand in for Telegram's MTProto, so everything above this layer is
//! tested through [`crate::ScriptedAccount`], and this layer is kept to conversions and error
//! mapping; [`raw_from_tl`] is tested on constructed TL messages.
//!
//! - `connection`: [`AccountConfig`] and opening a grammers client over a session file.
//! - `account`: [`GrammersAccount`], the [`Account`](crate::Account) calls over MTProto.
//! - `peers`: channels and groups between grammers' types and [`ResolvedPeer`](crate::ResolvedPeer).
//! - `messages`: grammers' raw messages as [`RawMessage`](crate::RawMessage)s.
//! - `errors`: Telegram's RPC errors as [`AccountError`](crate::AccountError)s.
//! - `login`: the interactive sign-in ([`login`], [`LoginPrompts`]).
//! - `login_error`: [`LoginError`] and how Telegram's errors become one.
//! - `session_check`: who a session is logged in as ([`check_session`], [`SessionStatus`]).

mod account;
mod connection;
mod errors;
mod login;
mod login_error;
mod messages;
mod peers;
mod session_check;

pub use account::GrammersAccount;
pub use connection::AccountConfig;
pub use login::{LoginPrompts, login};
pub use login_error::LoginError;
pub use messages::raw_from_tl;
pub(crate) use peers::peer_info;
pub use session_check::{SessionStatus, check_session};

#[cfg(test)]
mod tests;
