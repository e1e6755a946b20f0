//! [`Settings`]: everything the roles need, checked, as [`Config::resolve`] produces it.
//!
//! [`Config::resolve`]: super::Config::resolve

use std::path::PathBuf;
use std::time::Duration;

use jobwire_core::secret::SecretUrl;
use jobwire_deliver::{BotConfig, RateLimitConfig};
use jobwire_fanout::CategoryRoute;

use jobwire_classify::ClassifierConfig;
use jobwire_intake::ChannelConfig;
use jobwire_intake::feed::FeedConfig;

use super::{BotRoleSettings, Category, LlmSettings, RedisConfig};

/// Everything the roles need, checked.
#[derive(Debug, Clone)]
pub struct Settings {
    /// Print redacted (`Debug` of the settings shows no password).
    pub database_url: SecretUrl,
    pub queue_url: SecretUrl,
    pub queue_prefix: String,
    pub api_url: url::Url,
    pub limits: RateLimitConfig,
    pub request_timeout: Duration,
    pub max_in_flight: usize,
    pub classifier: ClassifierConfig,
    pub llm: Option<LlmSettings>,
    pub bots: Vec<BotConfig>,
    /// The bot role: main bot and how updates arrive.
    pub bot_role: BotRoleSettings,
    pub categories: Vec<Category>,
    pub channels: Vec<ChannelConfig>,
    pub feeds: Vec<FeedConfig>,
    /// The Telegram user accounts of the parser role (`[mtproto]`), and the admin chat.
    pub mtproto: Option<crate::telegram::MtprotoSettings>,
    /// Near-duplicate detection; `None` when `[dedup] enabled = false`.
    pub dedup: Option<jobwire_core::dedup::DedupConfig>,
    pub subscribers_file: Option<PathBuf>,
    pub scheduler_tick: Duration,
    pub lease: Duration,
    /// Rows in `queued`/`job`/`pending` untouched this long are published again.
    pub stuck_after: Duration,
    pub redis: Option<RedisConfig>,
    pub admin_listen: std::net::SocketAddr,
    /// `[admin] secure_cookies` (default true).
    pub admin_secure_cookies: bool,
    /// `[admin] trusted_proxies`: peers whose `X-Forwarded-For` names the client.
    pub admin_trusted_proxies: Vec<ipnet::IpNet>,
    /// Plans, trials and payments (`[billing]`, `[[plans]]`).
    pub billing: jobwire_bot::BillingConfig,
    /// The daily public digest (`[digest]`).
    pub digest: Option<jobwire_bot::DigestConfig>,
    /// Employers' direct placements (`[placements]`); the binary adds the publishing hook.
    pub placements: Option<jobwire_bot::PlacementsConfig>,
}

impl Settings {
    /// What broadcasts are created with: the categories' bots, the plans, the main bot.
    pub fn broadcast_setup(&self) -> jobwire_admin::broadcasts::BroadcastSetup {
        jobwire_admin::broadcasts::BroadcastSetup {
            routes: self.routes(),
            plans: self
                .billing
                .plans
                .iter()
                .map(|p| p.id.as_str().to_owned())
                .collect(),
            main_bot: self.bot_role.main_bot.clone(),
        }
    }

    pub fn routes(&self) -> Vec<CategoryRoute> {
        crate::categories::routes_of(&self.categories)
    }
}
