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
    pub digest: DigestSection,
    /// Employers' direct placements in the main bot (`[placements]`, off by default).
    #[serde(default)]
    pub placements: PlacementsSection,
}

/// Employers post vacancies in the main bot and pay for them in Stars.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
#[serde(default)]
pub struct PlacementsSection {
    pub enabled: bool,
    /// Paid placements wait for an admin (`POST /api/placements/{id}/approve`).
    pub approval: bool,
    /// The price per category, in Stars, of every category without its own.
    pub stars: Option<u32>,
    /// Prices of single categories: `[placements.category_stars] web = 150`.
    pub category_stars: std::collections::BTreeMap<String, u32>,
    /// How often paid placements are looked for, in seconds.
    pub check_every_secs: u64,
}

impl Default for PlacementsSection {
    fn default() -> Self {
        Self {
            enabled: false,
            approval: false,
            stars: None,
            category_stars: std::collections::BTreeMap::new(),
            check_every_secs: 2,
        }
    }
}

/// Telegram's bound of a Stars invoice.
const MAX_STARS: u32 = jobwire_core::placement::MAX_INVOICE_STARS;

impl PlacementsSection {
    /// The checked settings (the publishing hook is the binary's); `None` when off.
    pub(super) fn resolve(
        &self,
        main_bot: Option<&str>,
        known: &[jobwire_core::CategorySlug],
    ) -> Result<Option<jobwire_bot::PlacementsConfig>, super::ConfigError> {
        use super::invalid;
        if !self.enabled {
            return Ok(None);
        }
        if main_bot.is_none() {
            return Err(invalid(
                "placements.enabled",
                "employers place vacancies in the main bot: set telegram.main_bot",
            ));
        }
        let in_range = |p: u32| (1..=MAX_STARS).contains(&p);
        if let Some(p) = self.stars.filter(|p| !in_range(*p)) {
            return Err(invalid(
                "placements.stars",
                format!("{p}: a Stars price is 1 to {MAX_STARS}"),
            ));
        }
        let mut prices = std::collections::BTreeMap::new();
        for (slug, price) in &self.category_stars {
            let key = format!("placements.category_stars.{slug}");
            let slug = known
                .iter()
                .find(|k| k.as_str() == slug)
                .ok_or_else(|| invalid(&key, "not a configured category"))?;
            if !in_range(*price) {
                return Err(invalid(
                    &key,
                    format!("{price}: a Stars price is 1 to {MAX_STARS}"),
                ));
            }
            prices.insert(slug.clone(), *price);
        }
        if let Some(default) = self.stars {
            for slug in known {
                prices.entry(slug.clone()).or_insert(default);
            }
        }
        if prices.is_empty() {
            return Err(invalid(
                "placements.stars",
                "no category has a price: set placements.stars or placements.category_stars",
            ));
        }
        // The dearest placement (the most categories, the dearest ones) must fit one invoice.
        let mut dear: Vec<u32> = prices.values().copied().collect();
        dear.sort_unstable_by(|a, b| b.cmp(a));
        let most: u32 = dear
            .iter()
            .take(jobwire_core::placement::MAX_CATEGORIES)
            .sum();
        if most > MAX_STARS {
            return Err(invalid(
                "placements.category_stars",
                format!(
                    "a placement in the {} dearest categories would cost {most} Stars; one invoice asks at most {MAX_STARS}",
                    jobwire_core::placement::MAX_CATEGORIES
                ),
            ));
        }
        if self.check_every_secs == 0 {
            return Err(invalid("placements.check_every_secs", "must be at least 1"));
        }
        Ok(Some(jobwire_bot::PlacementsConfig {
            approval: self.approval,
            prices,
            every: std::time::Duration::from_secs(self.check_every_secs),
            publish: None,
        }))
    }
}

/// The daily public digest: the best vacancy of each category, posted by the main bot.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
#[serde(default)]
pub struct DigestSection {
    pub enabled: bool,
    /// The public channel: `@username` or its numeric id; the main bot posts there.
    pub channel: Option<String>,
    /// Local time of day, `HH:MM`.
    pub time: String,
    /// IANA time zone of `time`.
    pub time_zone: String,
    /// `ru` or `en`.
    pub language: String,
    /// How often the time is looked at, in seconds.
    pub check_every_secs: u64,
}

impl Default for DigestSection {
    fn default() -> Self {
        Self {
            enabled: false,
            channel: None,
            time: "09:00".into(),
            time_zone: "Europe/Moscow".into(),
            language: "ru".into(),
            check_every_secs: 30,
        }
    }
}

impl DigestSection {
    /// The checked digest settings; `None` when it is off.
    pub(super) fn resolve(
        &self,
        main_bot: Option<&str>,
    ) -> Result<Option<jobwire_bot::DigestConfig>, super::ConfigError> {
        use super::invalid;
        if !self.enabled {
            return Ok(None);
        }
        if main_bot.is_none() {
            return Err(invalid(
                "digest.enabled",
                "the digest is posted by the main bot: set telegram.main_bot",
            ));
        }
        let channel = self.channel.as_deref().map(str::trim).unwrap_or("");
        let valid_channel = (channel.len() > 5
            && channel.starts_with('@')
            && channel[1..]
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_'))
            || channel.parse::<i64>().is_ok_and(|id| id < 0);
        if !valid_channel {
            return Err(invalid(
                "digest.channel",
                format!("{channel:?} is not a channel: use @username or its numeric id (-100…)"),
            ));
        }
        let at = chrono::NaiveTime::parse_from_str(self.time.trim(), "%H:%M").map_err(|_| {
            invalid(
                "digest.time",
                format!("{:?} is not a time of day: use HH:MM", self.time),
            )
        })?;
        let time_zone: chrono_tz::Tz = self.time_zone.parse().map_err(|_| {
            invalid(
                "digest.time_zone",
                format!(
                    "{:?} is not an IANA time zone (e.g. Europe/Moscow)",
                    self.time_zone
                ),
            )
        })?;
        let lang = match self.language.as_str() {
            "ru" => jobwire_bot::texts::Lang::Ru,
            "en" => jobwire_bot::texts::Lang::En,
            other => {
                return Err(invalid(
                    "digest.language",
                    format!("{other:?}: use ru or en"),
                ));
            }
        };
        if self.check_every_secs == 0 {
            return Err(invalid("digest.check_every_secs", "must be at least 1"));
        }
        Ok(Some(jobwire_bot::DigestConfig {
            channel: channel.to_owned(),
            at,
            time_zone,
            lang,
            every: std::time::Duration::from_secs(self.check_every_secs),
        }))
    }
}
