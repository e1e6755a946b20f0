//! The top-level [`Config`]: the file's sections, each defined (with its defaults and its
//! checks) in the crate it configures — `[database]` in jobwire-store, `[queue]` in
//! jobwire-queue, `[classifier]` and `[llm]` in jobwire-classify, `[[bots]]` and `[redis]` in
//! jobwire-deliver, `[[channels]]` and `[[feeds]]` in jobwire-intake, `[dedup]` and
//! `[[categories]]` in jobwire-core, `[billing]`, `[[plans]]`, `[digest]` and `[placements]`
//! in jobwire-bot; `[telegram]`, `[mtproto]`, `[admin]` and `[scheduler]` beside the
//! binary's code they configure.

use std::path::PathBuf;

use jobwire_classify::ClassifierSection;
use jobwire_core::category_section::CategorySection;
use jobwire_core::dedup::DedupSection;
use jobwire_deliver::{BotSection, RedisSection};
use jobwire_intake::ChannelSection;
use jobwire_intake::feed::FeedSection;
use jobwire_queue::QueueSection;
use jobwire_store::DatabaseSection;
use serde::Deserialize;

use super::{LlmSection, TelegramSection};
use crate::recovery::SchedulerSection;
use crate::server::AdminSection;

#[derive(Debug, Clone, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct Config {
    #[serde(default)]
    pub database: DatabaseSection,
    #[serde(default)]
    pub queue: QueueSection,
    #[serde(default)]
    pub telegram: TelegramSection,
    #[serde(default)]
    pub classifier: ClassifierSection,
    /// An OpenAI-compatible endpoint; without it the local classifier decides.
    pub llm: Option<LlmSection>,
    #[serde(default)]
    pub bots: Vec<BotSection>,
    /// The category taxonomy; defaults to the twelve built-in categories.
    #[serde(default)]
    pub categories: Vec<CategorySection>,
    #[serde(default)]
    pub channels: Vec<ChannelSection>,
    /// Telegram user accounts that read channels (parser role): `[mtproto]`.
    pub mtproto: Option<crate::telegram::MtprotoSection>,
    /// RSS and Atom job feeds, read by the parser role.
    #[serde(default)]
    pub feeds: Vec<FeedSection>,
    #[serde(default)]
    pub dedup: DedupSection,
    /// Subscribers to load at start-up (until the main bot manages them).
    pub subscribers_file: Option<PathBuf>,
    #[serde(default)]
    pub scheduler: SchedulerSection,
    /// Shared state of several processes: rate limiters per bot token. Optional.
    pub redis: Option<RedisSection>,
    #[serde(default)]
    pub admin: AdminSection,
    /// Subscriptions and payments in the main bot (off by default).
    #[serde(default)]
    pub billing: jobwire_bot::BillingSection,
    /// What subscribers can buy (`[[plans]]`).
    #[serde(default)]
    pub plans: Vec<jobwire_bot::PlanSection>,
    /// The daily public digest (`[digest]`, off by default).
    #[serde(default)]
    pub digest: jobwire_bot::DigestSection,
    /// Employers' direct placements in the main bot (`[placements]`, off by default).
    #[serde(default)]
    pub placements: jobwire_bot::PlacementsSection,
}
