//! jobwire's Telegram bots.
//!
//! * The **main bot** sells nothing yet but manages everything: `/start` registers the chat
//!   as a subscriber and opens a menu (inline keyboard) of categories, filters (include and
//!   exclude keywords, a minimum budget, quiet hours), pause/resume, the current settings and
//!   a dialogue to report a vacancy jobwire missed. Russian first, English for users whose
//!   Telegram speaks another language. A reply quotes at most
//!   [`texts::MAX_QUOTE_CHARS`] characters of what the user typed, so it always fits
//!   Telegram's 4096-character limit.
//! * The **category bots** deliver jobs (the send stage uses their tokens). Here they take
//!   `/start` (subscribe to the bot's categories, or to the one a `?start=<slug>` deep link
//!   names), `/stop`, `/wrong` in reply to a delivered message (a report that it is not a
//!   job or not of this category), and notice when a user blocks them (`my_chat_member`
//!   kicked → the subscriber is marked blocked). One bot may be both.
//! * **Card buttons**: every bot that delivers answers the buttons under a card ("Not a
//!   vacancy", "Wrong category", "Hide this author"): a report is stored once per user and
//!   post, acknowledged with a toast in the user's language, and the button changes to
//!   show it; once [`BotOptions::report_threshold`] users complained, the post is withheld
//!   from everyone who has not got it yet. A hidden author is never delivered to that user
//!   again; `/status` lists hidden authors with a button to show each again.
//!
//! A chat files at most [`BotOptions::max_reports_per_hour`] reports (`/report`, `/wrong`,
//! missed vacancies; [`DEFAULT_REPORTS_PER_HOUR`] by default, counted per process across
//! all bots): one more is refused with an explanation and not stored.
//!
//! # Updates
//!
//! [`UpdateMode::Polling`]: one task per bot long-polls `getUpdates` (Telegram allows one
//! consumer per token, so only one process may poll). [`UpdateMode::Webhook`]: Telegram
//! POSTs to `/telegram/{bot}` of [`Bots::webhook_router`], which any number of processes
//! may serve. Every update is claimed by `(bot, update_id)` first ([`UpdateDedup`]), so a
//! redelivered update is handled once, and free-text answers are matched to the question
//! through a [`DialogueStore`] shared by all processes, so a dialogue started on one copy
//! continues on another.
//!
//! The dispatching is jobwire's own, on teloxide's typed Bot API client: teloxide's
//! dispatcher keeps dialogue state in its own storages (older sqlx and redis majors) and
//! its webhook secret check is not constant-time.
//!
//! # Metrics
//!
//! `bot_updates_total{bot,kind}`, `bot_duplicate_updates_total{bot}`,
//! `bot_update_failures_total{bot}`, `bot_update_duration_seconds{bot}`,
//! `bot_reports_total{kind}`, `bot_webhook_rejected_total{bot,reason}`.

mod access;
mod alerts;
pub mod billing;
mod callbacks;
pub mod card_buttons;
mod cards;
mod categories;
mod category_bot;
mod config;
mod dedup;
mod dialogue;
pub mod digest;
mod error;
pub mod events;
pub mod input;
mod languages;
mod limits;
mod menus;
mod message;
mod notices;
mod payments;
pub mod placements;
mod router;
mod runtime;
mod subscriber;
mod telegram;
pub mod texts;
mod turn;

pub use billing::{BillingConfig, BillingSection, PlanSection};
pub use categories::LiveCategory;
pub use config::{
    BotIdentity, BotOptions, BotsConfig, CatchUp, CatchUpFn, CategoryBot, MIN_WEBHOOK_SECRET_LEN,
    UpdateMode,
};
pub use dedup::{DEDUP_TTL, MemoryDedup, RedisDedup, UpdateDedup};
pub use dialogue::{
    DIALOGUE_NAMESPACE, DIALOGUE_TTL, DialogueState, DialogueStore, RedisDialogues, StoreDialogues,
    redis_connection,
};
pub use digest::{DigestConfig, DigestSection};
pub use error::BotError;
pub use limits::{DEFAULT_REPORT_THRESHOLD, DEFAULT_REPORTS_PER_HOUR};
pub use placements::{PlacementsConfig, PlacementsSection, PublishFn};
pub use router::Processed;
pub use runtime::{Bots, SECRET_HEADER};
