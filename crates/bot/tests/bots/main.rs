//! The bots against the fake Telegram and a SQLite store: what a subscriber sees and what
//! the store then holds.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod category_bot;
mod common;
mod failures;
mod hostile;
mod imports;
mod main_bot;
mod webhook;
