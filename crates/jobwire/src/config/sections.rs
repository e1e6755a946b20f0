//! The file's sections (`[database]`, `[queue]`, `[classifier]`, `[[bots]]`,
//! `[[categories]]`, `[[channels]]`, `[dedup]`, `[redis]`, `[admin]`, `[scheduler]`,
//! `[digest]`) and
//! the top-level [`Config`] that holds them, with their defaults.

use std::path::PathBuf;

use jobwire_core::secret::SecretUrl;
use serde::Deserialize;

use super::{LlmSection, TelegramSection};

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
    pub feeds: Vec<crate::feeds::FeedSection>,
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

/// Near-duplicate detection across channels.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
#[serde(default)]
pub struct DedupSection {
    /// Recognise re-posts of an earlier vacancy (in any channel) and deliver them once.
    pub enabled: bool,
    /// How far back an earlier post counts, in hours.
    pub window_hours: u64,
}

impl Default for DedupSection {
    fn default() -> Self {
        Self {
            enabled: true,
            window_hours: 168,
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RedisSection {
    /// `redis://host:6379/` (may carry a password: prints redacted).
    pub url: SecretUrl,
    /// Prefix of every key jobwire writes.
    #[serde(default = "default_redis_key_prefix")]
    pub key_prefix: String,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
#[serde(default)]
pub struct AdminSection {
    /// Where `/healthz`, `/readyz` and `/metrics` are served (port 0: any free port), and,
    /// by the admin role, the web panel and the admin API.
    pub listen: std::net::SocketAddr,
    /// Mark the panel's session cookie `Secure` (default; browsers accept it on
    /// `http://localhost` and `http://127.0.0.1` too). `false` only for a panel reached over
    /// plain HTTP elsewhere; the start-up warns about it.
    pub secure_cookies: bool,
    /// Reverse proxies (IP addresses or CIDR networks) whose `X-Forwarded-For` names the
    /// client, for the login and token limits and the per-client connection limit. Empty
    /// (default): the header is never read, every client is its TCP peer.
    pub trusted_proxies: Vec<String>,
}

impl Default for AdminSection {
    fn default() -> Self {
        Self {
            listen: default_admin_listen(),
            secure_cookies: true,
            trusted_proxies: Vec::new(),
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
#[serde(default)]
pub struct DatabaseSection {
    /// `sqlite://PATH` (embedded) or `postgres://…` (may carry a password: prints redacted).
    pub url: SecretUrl,
}

impl Default for DatabaseSection {
    fn default() -> Self {
        Self {
            url: default_database_url().into(),
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
#[serde(default)]
pub struct QueueSection {
    /// `memory://` (embedded) or `amqp://user:password@host:5672/vhost` (RabbitMQ; prints
    /// redacted).
    pub url: SecretUrl,
    /// Prefix of every queue and exchange name (several deployments on one broker).
    pub prefix: String,
}

impl Default for QueueSection {
    fn default() -> Self {
        Self {
            url: default_queue_url().into(),
            prefix: String::new(),
        }
    }
}

#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "lowercase")]
pub enum ClassifierKind {
    /// The cascade when `[llm]` is configured, else the local model.
    #[default]
    Auto,
    /// The local model only.
    Local,
    /// The LLM for every post (the local model only when it keeps failing).
    Llm,
    /// The local model first; posts it is unsure of go to the LLM.
    Cascade,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
#[serde(default)]
pub struct ClassifierSection {
    pub kind: ClassifierKind,
    /// Labeled JSONL the local model is trained on; the shipped `data/dev.jsonl` when unset.
    pub training_data: Option<PathBuf>,
    pub concurrency: usize,
    /// With an LLM: after this many failed attempts the local model answers instead.
    pub fallback_after: u32,
    /// First wait before a post the classifier could not answer is tried again (doubles
    /// per attempt, up to `retry_max_secs`).
    pub retry_base_ms: u64,
    pub retry_max_secs: u64,
    /// Cascade: posts whose local confidence is below this go to the LLM (choose it with
    /// `jobwire eval --classifier cascade`).
    pub cascade_threshold: f32,
    /// Cascade: jobs whose local category confidence is below this go to the LLM too (0:
    /// route on is-job alone). Chosen with `jobwire eval --classifier cascade`.
    pub cascade_category_threshold: f32,
    /// How long a batch of posts waits to fill before it is classified while other batches
    /// are in flight (milliseconds); with none in flight a post goes at once.
    pub batch_linger_ms: u64,
    /// Keep the LLM's answers as training examples for the local model.
    pub learn_from_llm: bool,
    /// Retrain the local model this often when new examples arrived (seconds).
    pub retrain_interval_secs: u64,
    /// Weight of an LLM-labeled example in training (a dataset example weighs 1).
    pub llm_example_weight: f32,
    /// Weight of a person's label (accepted report, admin re-label).
    pub human_example_weight: f32,
}

impl ClassifierSection {
    /// The cascade's thresholds.
    pub fn cascade_config(&self) -> jobwire_classify::cascade::CascadeConfig {
        jobwire_classify::cascade::CascadeConfig {
            threshold: self.cascade_threshold,
            category_threshold: self.cascade_category_threshold,
        }
    }
}

impl Default for ClassifierSection {
    fn default() -> Self {
        Self {
            kind: ClassifierKind::Auto,
            training_data: None,
            concurrency: 64,
            fallback_after: 3,
            retry_base_ms: 5000,
            retry_max_secs: 600,
            cascade_threshold: default_classifier_cascade_threshold(),
            cascade_category_threshold: jobwire_classify::cascade::DEFAULT_CATEGORY_THRESHOLD,
            batch_linger_ms: 10,
            learn_from_llm: true,
            retrain_interval_secs: 3600,
            llm_example_weight: 0.5,
            human_example_weight: 2.0,
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BotSection {
    pub name: String,
    /// The environment variable holding the token; default `JOBWIRE_BOT_<NAME>_TOKEN`.
    pub token_env: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CategorySection {
    pub slug: String,
    pub name: String,
    #[serde(default)]
    pub description: String,
    /// The bot (a `[[bots]]` name) that delivers this category.
    pub bot: String,
    /// Whether the daily public digest includes it.
    #[serde(default = "yes")]
    pub digest: bool,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChannelSection {
    pub handle: String,
    pub title: Option<String>,
    #[serde(default = "yes")]
    pub enabled: bool,
    #[serde(default)]
    pub include: Vec<String>,
    #[serde(default)]
    pub exclude: Vec<String>,
}

fn yes() -> bool {
    true
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
#[serde(default)]
pub struct SchedulerSection {
    /// How often held deliveries and waiting posts are checked, in milliseconds.
    pub tick_ms: u64,
    /// A delivery left `sending` this long (its sender died, or its status could not be
    /// written) is sent again, in both modes. Longer than any send.
    pub lease_secs: u64,
    /// A post left `queued` or `job`, or a delivery left `pending`, this long is published
    /// again: its message was most likely lost between the commit and the publish. Consumers
    /// skip what was already done, so a false alarm costs a little work, not a duplicate.
    pub stuck_after_secs: u64,
}

impl Default for SchedulerSection {
    fn default() -> Self {
        Self {
            tick_ms: 1000,
            lease_secs: 120,
            stuck_after_secs: 600,
        }
    }
}

// Defaults of the optional keys, one function per key: serde names them per field.
fn default_redis_key_prefix() -> String {
    "jobwire".to_owned()
}

fn default_admin_listen() -> std::net::SocketAddr {
    std::net::SocketAddr::from(([127, 0, 0, 1], 9464))
}

fn default_database_url() -> String {
    "sqlite://jobwire.db".to_owned()
}

fn default_queue_url() -> String {
    "memory://".to_owned()
}

fn default_classifier_cascade_threshold() -> f32 {
    jobwire_classify::cascade::CascadeConfig::default().threshold
}
