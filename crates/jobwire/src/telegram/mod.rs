//! The Telegram user-account reader inside `jobwire`: the `[mtproto]` configuration section,
//! `jobwire login`, `jobwire doctor`, and the parser role's reader task.
//!
//! The reader itself lives in `jobwire-mtproto`; this module connects it to the rest of the
//! pipeline, one file per job:
//!
//! - `section` — [`MtprotoSection`]: accounts, channels, the admin chat for alerts, reader
//!   pacing.
//! - `reader_store` — [`SqlReaderStore`]: the reader's cursors, peers and assignments in the
//!   store's source state (`tg.cursor`, `tg.peer`, `tg.assign`), so they live in the same
//!   database as the posts and survive restarts, and whether the last run stopped cleanly
//!   (`tg.run`).
//! - `login` — [`login()`] / [`login_command`]: signs an account in once from the terminal.
//! - `doctor` — [`doctor()`] / [`print`]: checks everything the configuration points at, one
//!   line each; its bot and LLM probes also serve [`crate::preflight::check`].
//! - `reader` — [`run_reader`] (run under the parser role's supervisor) / [`read_channels`]: connects the accounts
//!   and hands every post to the intake stage.
//! - `alerts` — [`admin_alert_fn`] and the reader's alerts, sent to the admin chat through a
//!   bot.

mod alerts;
pub(crate) mod doctor;
mod login;
pub(crate) use login::read_hidden;
mod reader;
mod reader_store;
mod section;

pub use alerts::admin_alert_fn;
pub use doctor::{Check, doctor, print};
pub use login::{login, login_command};
pub use reader::{read_channels, run_reader};
pub use reader_store::{NS_ASSIGN, NS_CURSOR, NS_PEER, NS_RUN, RESTART_REWIND, SqlReaderStore};
pub(crate) use section::looks_like_telegram;
pub use section::{AccountSection, MtprotoSection, MtprotoSettings};
