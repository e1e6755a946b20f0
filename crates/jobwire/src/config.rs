//! Configuration: one TOML file, overridden by `JOBWIRE__SECTION__KEY` environment
//! variables; secrets (bot tokens, API keys) only from the environment.
//!
//! Loading happens in two steps: [`Config::load`] parses the file and overrides into typed
//! sections (unknown keys are an error naming the key), then [`Config::resolve`] checks
//! what parsing cannot (references between sections, tokens present) and produces the
//! [`Settings`] the roles are built from.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::time::Duration;

use figment::Figment;
use figment::providers::{Env, Format, Toml};
use jobwire_core::CategorySlug;
use jobwire_deliver::{BotConfig, RateLimitConfig};
use jobwire_fanout::CategoryRoute;
use serde::Deserialize;

/// A configuration problem, always naming the key it is about.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("config: {0}")]
    Parse(String),
    #[error("{key}: {message}")]
    Invalid { key: String, message: String },
}

fn invalid(key: impl Into<String>, message: impl Into<String>) -> ConfigError {
    ConfigError::Invalid {
        key: key.into(),
        message: message.into(),
    }
}

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
    /// `redis://host:6379/`.
    pub url: String,
    /// Prefix of every key jobwire writes.
    #[serde(default = "default_redis_key_prefix")]
    pub key_prefix: String,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
#[serde(default)]
pub struct AdminSection {
    /// Where `/healthz`, `/readyz` and `/metrics` are served (port 0: any free port).
    pub listen: std::net::SocketAddr,
}

impl Default for AdminSection {
    fn default() -> Self {
        Self {
            listen: default_admin_listen(),
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
#[serde(default)]
pub struct DatabaseSection {
    /// `sqlite://PATH` (embedded).
    pub url: String,
}

impl Default for DatabaseSection {
    fn default() -> Self {
        Self {
            url: default_database_url(),
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
#[serde(default)]
pub struct QueueSection {
    /// `memory://` (embedded) or `amqp://user:password@host:5672/vhost` (RabbitMQ).
    pub url: String,
    /// Prefix of every queue and exchange name (several deployments on one broker).
    pub prefix: String,
}

impl Default for QueueSection {
    fn default() -> Self {
        Self {
            url: default_queue_url(),
            prefix: String::new(),
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
#[serde(default)]
pub struct TelegramSection {
    /// Bot API base URL.
    pub api_url: url::Url,
    pub global_per_sec: u32,
    pub per_chat_per_sec: u32,
    pub per_group_per_min: u32,
    /// Pace this fraction below the limits (absorbs network jitter).
    pub safety_margin: f64,
    /// Lift all limits (only for a local fake Telegram).
    pub unlimited: bool,
    pub request_timeout_secs: u32,
    pub max_in_flight: usize,
    /// The `[[bots]]` entry that is the main bot (settings, reports); none by default.
    pub main_bot: Option<String>,
    /// How the bot role gets updates: "polling" (one process per token), "webhook"
    /// (any number of bot-role processes behind `webhook_public_url`) or "off".
    pub updates: UpdatesMode,
    /// Webhook mode: the public HTTPS base URL Telegram posts to (`/telegram/<bot>` is
    /// appended). The secret comes from `JOBWIRE_TELEGRAM_WEBHOOK_SECRET`.
    pub webhook_public_url: Option<url::Url>,
    /// Webhook mode: where the bot role listens for Telegram's posts (put a TLS proxy in
    /// front). Kept apart from `admin.listen`, which must not be public.
    pub webhook_listen: std::net::SocketAddr,
}

/// How the bot role receives updates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum UpdatesMode {
    #[default]
    Polling,
    Webhook,
    Off,
}

/// The environment variable holding the webhook secret.
pub const WEBHOOK_SECRET_ENV: &str = "JOBWIRE_TELEGRAM_WEBHOOK_SECRET";

/// What the bot role needs, checked.
#[derive(Clone)]
pub struct BotRoleSettings {
    pub main_bot: Option<String>,
    pub updates: UpdatesMode,
    /// `(public URL, secret)` in webhook mode.
    pub webhook: Option<(url::Url, String)>,
    pub webhook_listen: std::net::SocketAddr,
}

impl std::fmt::Debug for BotRoleSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BotRoleSettings")
            .field("main_bot", &self.main_bot)
            .field("updates", &self.updates)
            .field(
                "webhook",
                &self
                    .webhook
                    .as_ref()
                    .map(|(u, _)| (u.as_str(), "<redacted>")),
            )
            .finish()
    }
}

impl Default for TelegramSection {
    fn default() -> Self {
        Self {
            api_url: default_telegram_api_url(),
            global_per_sec: 30,
            per_chat_per_sec: 1,
            per_group_per_min: 20,
            safety_margin: default_telegram_safety_margin(),
            unlimited: false,
            request_timeout_secs: 30,
            max_in_flight: default_in_flight(),
            main_bot: None,
            updates: UpdatesMode::default(),
            webhook_public_url: None,
            webhook_listen: default_telegram_webhook_listen(),
        }
    }
}

fn default_in_flight() -> usize {
    16_384
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
    /// How long a batch of posts waits to fill before it is classified (milliseconds).
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

impl Default for ClassifierSection {
    fn default() -> Self {
        Self {
            kind: ClassifierKind::Auto,
            training_data: None,
            concurrency: 8,
            fallback_after: 3,
            retry_base_ms: 5000,
            retry_max_secs: 600,
            cascade_threshold: default_classifier_cascade_threshold(),
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
pub struct LlmSection {
    /// e.g. `https://api.openai.com/v1` or `http://127.0.0.1:8080/v1`.
    pub base_url: url::Url,
    pub model: String,
    /// The environment variable holding the API key (none needed for local servers).
    #[serde(default = "default_llm_api_key_env")]
    pub api_key_env: String,
    /// One request's timeout. A full batch of 30 answers is about 3,000 completion tokens:
    /// 20-40 s on common hosted models, so the default leaves room (120).
    #[serde(default = "default_llm_timeout_secs")]
    pub timeout_secs: u32,
    #[serde(default = "default_llm_max_retries")]
    pub max_retries: u32,
    /// US dollars per million prompt tokens (for the cost accounting and the spend limit).
    #[serde(default)]
    pub price_in_per_mtok: f64,
    /// US dollars per million completion tokens.
    #[serde(default)]
    pub price_out_per_mtok: f64,
    /// Past this many dollars of LLM spend in a UTC day, only the local classifier runs
    /// (and the admin is told). No limit when unset.
    pub daily_spend_limit_usd: Option<f64>,
    /// Posts per LLM request (1-50). Each answer is tied to its post by id; posts an answer
    /// lacked are asked again with the next request.
    #[serde(default = "default_llm_batch_size")]
    pub batch_size: usize,
    /// How long the oldest unsure post waits for others to fill a request while other
    /// requests are in flight (0-60000 ms).
    #[serde(default = "default_llm_batch_linger_ms")]
    pub batch_linger_ms: u64,
    /// When no request is in flight, a partial request goes once no unsure post came in for
    /// this long (0-60000 ms; short: a quiet service answers at once, a burst is gathered).
    #[serde(default = "default_llm_idle_linger_ms")]
    pub idle_linger_ms: u64,
    /// LLM requests in flight at once (1-64).
    #[serde(default = "default_llm_max_in_flight")]
    pub max_in_flight: usize,
    /// The most completion tokens one request may ask for (some models allow 4,096 only).
    #[serde(default = "default_llm_max_output_tokens")]
    pub max_output_tokens: u32,
    /// People's labeled examples most like the posts, put into each request.
    #[serde(default = "default_llm_few_shot")]
    pub few_shot: usize,
    /// A second model (on the same or another endpoint) used when the first fails or is
    /// out of quota.
    pub fallback: Option<LlmFallbackSection>,
}

impl LlmSection {
    /// An endpoint and model with every other key at its default.
    pub fn new(base_url: url::Url, model: &str) -> Self {
        Self {
            base_url,
            model: model.to_owned(),
            api_key_env: default_llm_api_key_env(),
            timeout_secs: 120,
            max_retries: 3,
            price_in_per_mtok: 0.0,
            price_out_per_mtok: 0.0,
            daily_spend_limit_usd: None,
            batch_size: 30,
            batch_linger_ms: 1000,
            idle_linger_ms: 20,
            max_in_flight: 8,
            max_output_tokens: 16_384,
            few_shot: 3,
            fallback: None,
        }
    }
}

/// The fallback model of `[llm.fallback]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LlmFallbackSection {
    /// Default: the primary's `base_url`.
    pub base_url: Option<url::Url>,
    pub model: String,
    /// Default: the primary's `api_key_env`.
    pub api_key_env: Option<String>,
    #[serde(default)]
    pub price_in_per_mtok: f64,
    #[serde(default)]
    pub price_out_per_mtok: f64,
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
    /// A delivery left `sending` this long by a sender that died is sent again (distributed
    /// mode; a single process re-sends its own at start-up). Longer than any send.
    pub lease_secs: u64,
}

impl Default for SchedulerSection {
    fn default() -> Self {
        Self {
            tick_ms: 1000,
            lease_secs: 120,
        }
    }
}

/// The built-in taxonomy (slug, display name, description), kept in core.
pub use jobwire_core::category::STANDARD as DEFAULT_CATEGORIES;

/// A category after validation.
#[derive(Debug, Clone)]
pub struct Category {
    pub slug: CategorySlug,
    pub name: String,
    pub description: String,
    pub bot: String,
}

/// An LLM endpoint after validation. The key is a secret: `Debug` hides it.
#[derive(Clone)]
pub struct LlmSettings {
    pub base_url: url::Url,
    pub model: String,
    pub api_key: Option<jobwire_core::secret::Secret>,
    pub timeout: Duration,
    pub max_retries: u32,
    pub price_in_per_mtok: f64,
    pub price_out_per_mtok: f64,
    pub daily_spend_limit_usd: Option<f64>,
    pub batch_size: usize,
    pub batch_linger: Duration,
    pub idle_linger: Duration,
    pub max_in_flight: usize,
    pub max_output_tokens: u32,
    pub few_shot: usize,
    pub fallback: Option<LlmFallbackSettings>,
}

/// The fallback model after validation.
#[derive(Clone)]
pub struct LlmFallbackSettings {
    pub base_url: url::Url,
    pub model: String,
    pub api_key: Option<jobwire_core::secret::Secret>,
    pub price_in_per_mtok: f64,
    pub price_out_per_mtok: f64,
}

impl std::fmt::Debug for LlmFallbackSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LlmFallbackSettings")
            .field("base_url", &self.base_url.as_str())
            .field("model", &self.model)
            .field("api_key", &self.api_key.as_ref().map(|_| "<redacted>"))
            .finish()
    }
}

impl std::fmt::Debug for LlmSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LlmSettings")
            .field("base_url", &self.base_url.as_str())
            .field("model", &self.model)
            .field("api_key", &self.api_key.as_ref().map(|_| "<redacted>"))
            .field("batch_size", &self.batch_size)
            .field("batch_linger", &self.batch_linger)
            .field("idle_linger", &self.idle_linger)
            .field("max_in_flight", &self.max_in_flight)
            .finish_non_exhaustive()
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

fn default_telegram_api_url() -> url::Url {
    url::Url::parse("https://api.telegram.org/").unwrap_or_else(|_| unreachable!("literal URL"))
}

fn default_telegram_safety_margin() -> f64 {
    0.05
}

fn default_telegram_webhook_listen() -> std::net::SocketAddr {
    std::net::SocketAddr::from(([127, 0, 0, 1], 8088))
}

fn default_classifier_cascade_threshold() -> f32 {
    jobwire_classify::cascade::CascadeConfig::default().threshold
}

fn default_llm_api_key_env() -> String {
    "JOBWIRE_LLM_API_KEY".to_owned()
}

fn default_llm_timeout_secs() -> u32 {
    120
}

fn default_llm_batch_size() -> usize {
    30
}

fn default_llm_max_in_flight() -> usize {
    8
}

fn default_llm_few_shot() -> usize {
    3
}

fn default_llm_max_retries() -> u32 {
    3
}

fn default_llm_batch_linger_ms() -> u64 {
    1000
}

fn default_llm_idle_linger_ms() -> u64 {
    20
}

fn default_llm_max_output_tokens() -> u32 {
    16_384
}

/// Everything the roles need, checked.
#[derive(Debug, Clone)]
pub struct Settings {
    pub database_url: String,
    pub queue_url: String,
    pub queue_prefix: String,
    pub api_url: url::Url,
    pub limits: RateLimitConfig,
    pub request_timeout: Duration,
    pub max_in_flight: usize,
    pub classifier: ClassifierSection,
    pub llm: Option<LlmSettings>,
    pub bots: Vec<BotConfig>,
    /// The bot role: main bot and how updates arrive.
    pub bot_role: BotRoleSettings,
    pub categories: Vec<Category>,
    pub channels: Vec<ChannelSection>,
    pub feeds: Vec<crate::feeds::FeedSection>,
    /// The Telegram user accounts of the parser role (`[mtproto]`), and the admin chat.
    pub mtproto: Option<crate::telegram::MtprotoSection>,
    pub dedup: DedupSection,
    pub subscribers_file: Option<PathBuf>,
    pub scheduler_tick: Duration,
    pub lease: Duration,
    pub redis: Option<RedisSection>,
    pub admin_listen: std::net::SocketAddr,
}

/// Hides the password of a URL, for logs and errors (the one implementation, in core).
pub use jobwire_core::secret::redact_url;

impl Settings {
    pub fn routes(&self) -> Vec<CategoryRoute> {
        self.categories
            .iter()
            .map(|c| CategoryRoute {
                slug: c.slug.clone(),
                name: c.name.clone(),
                bot: c.bot.clone(),
            })
            .collect()
    }
}

/// Reads an environment variable; a seam so tests can resolve without touching the process
/// environment.
pub trait Environment {
    fn var(&self, name: &str) -> Option<String>;
}

/// The process environment.
#[derive(Debug, Clone, Copy)]
pub struct ProcessEnv;

impl Environment for ProcessEnv {
    fn var(&self, name: &str) -> Option<String> {
        std::env::var(name).ok().filter(|v| !v.trim().is_empty())
    }
}

impl Config {
    /// Reads `path` (when given; it must exist) and the `JOBWIRE__…` environment overrides.
    pub fn load(path: Option<&Path>) -> Result<Self, ConfigError> {
        let mut figment = Figment::new();
        if let Some(path) = path {
            if !path.exists() {
                return Err(invalid(
                    "--config",
                    format!("{} does not exist", path.display()),
                ));
            }
            figment = figment.merge(Toml::file_exact(path));
        }
        figment = figment.merge(Env::prefixed("JOBWIRE__").split("__"));
        figment
            .extract()
            .map_err(|e| ConfigError::Parse(one_line(&e)))
    }

    /// Parses a TOML document (tests and the demo's embedded configuration).
    pub fn from_toml(doc: &str) -> Result<Self, ConfigError> {
        Figment::new()
            .merge(Toml::string(doc))
            .extract()
            .map_err(|e| ConfigError::Parse(one_line(&e)))
    }

    /// Checks the configuration and reads its secrets from `env`.
    pub fn resolve(&self, env: &dyn Environment) -> Result<Settings, ConfigError> {
        let mut bots = Vec::new();
        let mut names = HashSet::new();
        for (i, b) in self.bots.iter().enumerate() {
            let key = format!("bots[{i}].name");
            if b.name.is_empty()
                || !b
                    .name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
            {
                return Err(invalid(
                    key,
                    format!(
                        "{:?} is not a valid bot name (letters, digits, '_', '-')",
                        b.name
                    ),
                ));
            }
            if !names.insert(b.name.clone()) {
                return Err(invalid(key, format!("bot {:?} is defined twice", b.name)));
            }
            let var = b.token_env.clone().unwrap_or_else(|| {
                format!(
                    "JOBWIRE_BOT_{}_TOKEN",
                    b.name.to_ascii_uppercase().replace('-', "_")
                )
            });
            let token = env.var(&var).ok_or_else(|| {
                invalid(
                    format!("bots[{i}] ({})", b.name),
                    format!("environment variable {var} is not set (bot tokens are read only from the environment)"),
                )
            })?;
            let (id, secret) = token.split_once(':').unwrap_or(("", ""));
            if id.parse::<u64>().is_err() || secret.len() < 20 {
                return Err(invalid(
                    format!("bots[{i}] ({})", b.name),
                    format!("{var} does not look like a bot token (expected <digits>:<secret>)"),
                ));
            }
            bots.push(BotConfig {
                name: b.name.clone(),
                token: token.into(),
            });
        }

        let sections: Vec<CategorySection> = if self.categories.is_empty() {
            let bot = self
                .bots
                .first()
                .map(|b| b.name.clone())
                .unwrap_or_default();
            DEFAULT_CATEGORIES
                .iter()
                .map(|(slug, name, description)| CategorySection {
                    slug: (*slug).to_owned(),
                    name: (*name).to_owned(),
                    description: (*description).to_owned(),
                    bot: bot.clone(),
                })
                .collect()
        } else {
            self.categories.clone()
        };
        let mut categories = Vec::new();
        let mut slugs = HashSet::new();
        for (i, c) in sections.iter().enumerate() {
            let slug = CategorySlug::parse(&c.slug)
                .map_err(|e| invalid(format!("categories[{i}].slug"), e.to_string()))?;
            if !slugs.insert(slug.clone()) {
                return Err(invalid(
                    format!("categories[{i}].slug"),
                    format!("{slug} is defined twice"),
                ));
            }
            if !bots.is_empty() && !names.contains(&c.bot) {
                return Err(invalid(
                    format!("categories[{i}].bot"),
                    format!("no bot named {:?} in [[bots]]", c.bot),
                ));
            }
            categories.push(Category {
                slug,
                name: c.name.clone(),
                description: c.description.clone(),
                bot: c.bot.clone(),
            });
        }

        if let Some(m) = &self.mtproto {
            m.channel_refs()?;
        }
        let mut feed_names = HashSet::new();
        for (i, f) in self.feeds.iter().enumerate() {
            let key = format!("feeds[{i}] ({})", f.name);
            if f.name.trim().is_empty() || !feed_names.insert(f.name.clone()) {
                return Err(invalid(key, "needs a unique, non-empty name"));
            }
            match url::Url::parse(&f.url) {
                Ok(u) if u.scheme() == "http" || u.scheme() == "https" => {}
                _ => return Err(invalid(key, format!("{:?} is not an http(s) URL", f.url))),
            }
        }
        for (i, ch) in self.channels.iter().enumerate() {
            jobwire_core::rules::ChannelRules::parse(ch.include.iter(), ch.exclude.iter())
                .map_err(|e| invalid(format!("channels[{i}] ({})", ch.handle), e.to_string()))?;
        }

        let db = &self.database.url;
        if !(db.starts_with("sqlite:")
            || db.starts_with("postgres://")
            || db.starts_with("postgresql://"))
        {
            return Err(invalid(
                "database.url",
                format!(
                    "{:?} is not supported (use sqlite://PATH or postgres://…)",
                    redact_url(db)
                ),
            ));
        }
        let q = &self.queue.url;
        if !(q == "memory://" || q.starts_with("amqp://") || q.starts_with("amqps://")) {
            return Err(invalid(
                "queue.url",
                format!(
                    "{:?} is not supported (use memory:// or amqp://…)",
                    redact_url(q)
                ),
            ));
        }
        if q == "memory://" && !db.starts_with("sqlite:") {
            tracing::info!("in-process queue with a shared database: run a single process");
        }
        if let Some(r) = &self.redis
            && !(r.url.starts_with("redis://") || r.url.starts_with("rediss://"))
        {
            return Err(invalid(
                "redis.url",
                format!("{:?} is not a redis:// URL", redact_url(&r.url)),
            ));
        }
        let t = &self.telegram;
        for (key, v) in [
            ("telegram.global_per_sec", t.global_per_sec),
            ("telegram.per_chat_per_sec", t.per_chat_per_sec),
            ("telegram.per_group_per_min", t.per_group_per_min),
        ] {
            if v == 0 {
                return Err(invalid(key, "must be at least 1"));
            }
        }

        let c = &self.classifier;
        if !(0.0..=1.0).contains(&c.cascade_threshold) {
            return Err(invalid(
                "classifier.cascade_threshold",
                "must be between 0 and 1",
            ));
        }
        for (key, w) in [
            ("classifier.llm_example_weight", c.llm_example_weight),
            ("classifier.human_example_weight", c.human_example_weight),
        ] {
            if !(w.is_finite() && w >= 0.0) {
                return Err(invalid(key, "must be a number of at least 0"));
            }
        }
        let llm = match (&self.llm, self.classifier.kind) {
            (None, ClassifierKind::Llm) => {
                return Err(invalid(
                    "classifier.kind",
                    "is \"llm\" but there is no [llm] section",
                ));
            }
            (None, ClassifierKind::Cascade) => {
                return Err(invalid(
                    "classifier.kind",
                    "is \"cascade\" but there is no [llm] section",
                ));
            }
            (Some(l), kind) if kind != ClassifierKind::Local => {
                if l.model.trim().is_empty() {
                    return Err(invalid("llm.model", "must not be empty"));
                }
                let price = |key: &str, v: f64| {
                    if v.is_finite() && v >= 0.0 {
                        Ok(v)
                    } else {
                        Err(invalid(key, "must be a price of at least 0"))
                    }
                };
                if !(1..=50).contains(&l.batch_size) {
                    return Err(invalid("llm.batch_size", "must be between 1 and 50"));
                }
                if l.batch_linger_ms > 60_000 {
                    return Err(invalid(
                        "llm.batch_linger_ms",
                        "must be at most 60000 (a minute)",
                    ));
                }
                if l.idle_linger_ms > 60_000 {
                    return Err(invalid(
                        "llm.idle_linger_ms",
                        "must be at most 60000 (a minute)",
                    ));
                }
                if !(1..=64).contains(&l.max_in_flight) {
                    return Err(invalid("llm.max_in_flight", "must be between 1 and 64"));
                }
                if l.max_output_tokens < 256 {
                    return Err(invalid("llm.max_output_tokens", "must be at least 256"));
                }
                if let Some(limit) = l.daily_spend_limit_usd
                    && !(limit.is_finite() && limit >= 0.0)
                {
                    return Err(invalid(
                        "llm.daily_spend_limit_usd",
                        "must be an amount of at least 0",
                    ));
                }
                let fallback = match &l.fallback {
                    None => None,
                    Some(f) => {
                        if f.model.trim().is_empty() {
                            return Err(invalid("llm.fallback.model", "must not be empty"));
                        }
                        Some(LlmFallbackSettings {
                            base_url: f.base_url.clone().unwrap_or_else(|| l.base_url.clone()),
                            model: f.model.clone(),
                            api_key: env
                                .var(f.api_key_env.as_deref().unwrap_or(&l.api_key_env))
                                .map(Into::into),
                            price_in_per_mtok: price(
                                "llm.fallback.price_in_per_mtok",
                                f.price_in_per_mtok,
                            )?,
                            price_out_per_mtok: price(
                                "llm.fallback.price_out_per_mtok",
                                f.price_out_per_mtok,
                            )?,
                        })
                    }
                };
                Some(LlmSettings {
                    base_url: l.base_url.clone(),
                    model: l.model.clone(),
                    api_key: env.var(&l.api_key_env).map(Into::into),
                    timeout: Duration::from_secs(u64::from(l.timeout_secs.max(1))),
                    max_retries: l.max_retries,
                    price_in_per_mtok: price("llm.price_in_per_mtok", l.price_in_per_mtok)?,
                    price_out_per_mtok: price("llm.price_out_per_mtok", l.price_out_per_mtok)?,
                    daily_spend_limit_usd: l.daily_spend_limit_usd,
                    batch_size: l.batch_size,
                    batch_linger: Duration::from_millis(l.batch_linger_ms),
                    idle_linger: Duration::from_millis(l.idle_linger_ms),
                    max_in_flight: l.max_in_flight,
                    max_output_tokens: l.max_output_tokens,
                    few_shot: l.few_shot,
                    fallback,
                })
            }
            _ => None,
        };

        let bot_role = {
            let t = &self.telegram;
            if let Some(main) = &t.main_bot
                && !bots.iter().any(|b| &b.name == main)
            {
                return Err(invalid(
                    "telegram.main_bot",
                    format!("no bot named {main:?} in [[bots]]"),
                ));
            }
            let webhook = match t.updates {
                UpdatesMode::Webhook => {
                    let url = t.webhook_public_url.clone().ok_or_else(|| {
                        invalid(
                            "telegram.webhook_public_url",
                            "is needed with updates = \"webhook\"",
                        )
                    })?;
                    let secret = env.var(WEBHOOK_SECRET_ENV).ok_or_else(|| {
                        invalid(
                            "telegram.updates",
                            format!("is \"webhook\" but {WEBHOOK_SECRET_ENV} is not set"),
                        )
                    })?;
                    if secret.is_empty()
                        || secret.len() > 256
                        || !secret
                            .chars()
                            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
                    {
                        return Err(invalid(
                            WEBHOOK_SECRET_ENV,
                            "must be 1-256 characters of A-Z a-z 0-9 _ -",
                        ));
                    }
                    Some((url, secret))
                }
                _ => None,
            };
            BotRoleSettings {
                main_bot: t.main_bot.clone(),
                updates: t.updates,
                webhook,
                webhook_listen: t.webhook_listen,
            }
        };
        Ok(Settings {
            bot_role,
            database_url: self.database.url.clone(),
            queue_url: self.queue.url.clone(),
            queue_prefix: self.queue.prefix.clone(),
            api_url: t.api_url.clone(),
            limits: RateLimitConfig {
                global_per_sec: t.global_per_sec,
                per_chat_per_sec: t.per_chat_per_sec,
                per_group_per_min: t.per_group_per_min,
                safety_margin: t.safety_margin,
                unlimited: t.unlimited,
            },
            request_timeout: Duration::from_secs(u64::from(t.request_timeout_secs.max(1))),
            max_in_flight: t.max_in_flight.max(1),
            classifier: self.classifier.clone(),
            llm,
            bots,
            categories,
            channels: self.channels.clone(),
            feeds: self.feeds.clone(),
            mtproto: self.mtproto.clone(),
            dedup: self.dedup.clone(),
            subscribers_file: self.subscribers_file.clone(),
            scheduler_tick: Duration::from_millis(self.scheduler.tick_ms.max(10)),
            lease: Duration::from_secs(self.scheduler.lease_secs.max(1)),
            redis: self.redis.clone(),
            admin_listen: self.admin.listen,
        })
    }
}

/// figment's errors can span lines; the CLI prints one line.
fn one_line(e: &figment::Error) -> String {
    e.clone()
        .into_iter()
        .map(|e| e.to_string().replace('\n', " "))
        .collect::<Vec<_>>()
        .join("; ")
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;

    struct FakeEnv(HashMap<&'static str, &'static str>);
    impl Environment for FakeEnv {
        fn var(&self, name: &str) -> Option<String> {
            self.0.get(name).map(|v| (*v).to_owned())
        }
    }

    const TOKEN: &str = "123456:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA";

    fn check_err(doc: &str, env: &[(&'static str, &'static str)], expected: &str) {
        let env = FakeEnv(env.iter().copied().collect());
        let err = Config::from_toml(doc)
            .and_then(|c| c.resolve(&env).map(|_| ()))
            .expect_err("config should be refused");
        let msg = err.to_string();
        assert!(!msg.contains('\n'), "one line: {msg}");
        assert!(
            msg.contains(expected),
            "{msg:?} should mention {expected:?}"
        );
    }

    #[test]
    fn unknown_keys_are_named() {
        check_err("[database]\nurll = \"x\"\n", &[], "urll");
        check_err("[telegram]\nper_chat = 3\n", &[], "per_chat");
        check_err("colour = 1\n", &[], "colour");
    }

    #[test]
    fn a_missing_token_names_the_bot_and_variable() {
        check_err("[[bots]]\nname = \"dev\"\n", &[], "JOBWIRE_BOT_DEV_TOKEN");
        check_err(
            "[[bots]]\nname = \"dev\"\n",
            &[("JOBWIRE_BOT_DEV_TOKEN", "nonsense")],
            "does not look like a bot token",
        );
    }

    #[test]
    fn references_and_values_are_checked() {
        let env = [("JOBWIRE_BOT_DEV_TOKEN", TOKEN)];
        check_err(
            "[[bots]]\nname = \"dev\"\n[[categories]]\nslug = \"web\"\nname = \"Web\"\nbot = \"nobody\"\n",
            &env,
            "categories[0].bot",
        );
        check_err(
            "[[bots]]\nname = \"dev\"\n[[categories]]\nslug = \"Web!\"\nname = \"Web\"\nbot = \"dev\"\n",
            &env,
            "categories[0].slug",
        );
        check_err("[classifier]\nkind = \"llm\"\n", &env, "classifier.kind");
        check_err("[telegram]\napi_url = \"not a url\"\n", &env, "api_url");
        check_err("[database]\nurl = \"mysql://x\"\n", &env, "database.url");
        check_err("[queue]\nurl = \"kafka://x\"\n", &env, "queue.url");
        check_err("[redis]\nurl = \"http://x\"\n", &env, "redis.url");
        check_err(
            "[[channels]]\nhandle = \"@x\"\ninclude = [\"\"]\nexclude = [\"#\"]\n",
            &env,
            "channels[0]",
        );
    }

    #[test]
    fn a_good_config_resolves_with_defaults_and_hides_secrets() {
        let env = FakeEnv(
            [
                ("JOBWIRE_BOT_DEV_TOKEN", TOKEN),
                ("JOBWIRE_LLM_API_KEY", "sk-secret"),
            ]
            .into_iter()
            .collect(),
        );
        let cfg = Config::from_toml(
            "[[bots]]\nname = \"dev\"\n[llm]\nbase_url = \"http://127.0.0.1:9/v1\"\nmodel = \"m\"\n",
        )
        .expect("parses");
        let s = cfg.resolve(&env).expect("resolves");
        assert_eq!(s.categories.len(), 12);
        assert!(s.categories.iter().all(|c| c.bot == "dev"));
        assert_eq!(s.limits.per_chat_per_sec, 1);
        let printed = format!("{s:?}");
        assert!(!printed.contains("sk-secret"), "{printed}");
        assert!(!printed.contains("AAAAAAAAAAAAAAAAAAAA"), "{printed}");
    }
}
