//! End-to-end tests of the embedded pipeline: real stages, real SQLite, the real teloxide
//! and async-openai clients over HTTP against the project's fake Telegram and fake LLM.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod bad_input;
mod billing;
mod bots;
mod broadcast;
mod cards;
mod chaos_data;
mod cli;
mod crash;
mod delivery;
mod e2e;
mod edits;
mod expect;
mod feeds;
mod learning;
mod placements;
mod recovery;
mod support;
