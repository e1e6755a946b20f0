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
    pub digest: jobwire_bot::DigestSection,
    /// Employers' direct placements in the main bot (`[placements]`, off by default).
    #[serde(default)]
    pub placements: jobwire_bot::PlacementsSection,
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
