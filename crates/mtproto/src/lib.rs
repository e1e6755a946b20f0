//! The Telegram user-account reader of jobwire.
//!
//! - [`ChannelRef`]: channels as admins name them (`@name`, `t.me/name`, `t.me/+invite`).
//! - [`Account`]: the small trait over one account's operations (resolve, join, history
//!   since an id, update stream). [`GrammersAccount`] implements it over MTProto,
//!   [`ScriptedAccount`] in memory for tests.
//! - [`Reader`]: the logic — join pacing, peer caching, sharding over accounts, failover,
//!   flood waits, catch-up from per-channel cursors, albums, edits, and a watchdog — with
//!   its state in a [`ReaderStore`].
//! - [`login`] and [`check_session`]: what `jobwire login` and `jobwire doctor` call.

mod account;
pub mod convert;
pub mod events;
mod grammers;
mod reader;
mod scripted;
mod session;
mod store;

pub use account::{
    Account, AccountError, AccountUpdate, Entity, EntityKind, ForwardOrigin, PeerKind, RawMessage,
    ResolvedPeer,
};
pub use grammers::{
    AccountConfig, GrammersAccount, LoginError, LoginPrompts, SessionStatus, check_session, login,
    raw_from_tl,
};
/// Channel references live in `jobwire-core` (the admin panel validates them without a
/// reader); re-exported here, where the reader uses them.
pub use jobwire_core::channel_ref::{ChannelRef, ChannelRefError};
pub use reader::{
    Clock, Reader, ReaderConfig, ReaderError, ReaderEvent, ReaderHandle, SystemClock, TokioClock,
};
pub use scripted::{Call, Op, ScriptedAccount};
pub use session::{FileSession, SessionFileError};
pub use store::{MemoryReaderStore, ReaderStore, StoreError};
