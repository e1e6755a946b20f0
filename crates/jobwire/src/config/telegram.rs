//! The `[telegram]` section (Bot API limits, how the bot role gets updates) and the
//! [`BotRoleSettings`] it resolves to.

use serde::Deserialize;

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
    /// Distinct subscribers who tap "Not a vacancy" or "Wrong category" under a card (or
    /// reply `/wrong`) before the post stops being delivered to anyone who has not got it
    /// yet and waits for an admin. 0: never withheld. Default 3.
    pub report_threshold: u32,
    /// "Resume" offers the best vacancies missed in this many hours. Default 12; 0: only
    /// new ones, no offer.
    pub catch_up_hours: u32,
    /// The most missed vacancies "Resume" sends. Default 10; 0: no offer.
    pub catch_up_max: usize,
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
    pub webhook: Option<(url::Url, jobwire_core::secret::Secret)>,
    pub webhook_listen: std::net::SocketAddr,
    /// See [`TelegramSection::report_threshold`].
    pub report_threshold: u32,
    pub catch_up_hours: u32,
    pub catch_up_max: usize,
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
            .field("report_threshold", &self.report_threshold)
            .field("catch_up_hours", &self.catch_up_hours)
            .field("catch_up_max", &self.catch_up_max)
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
            report_threshold: jobwire_bot::DEFAULT_REPORT_THRESHOLD,
            catch_up_hours: 12,
            catch_up_max: 10,
        }
    }
}

fn default_in_flight() -> usize {
    16_384
}

// Defaults of the optional keys, one function per key: serde names them per field.
fn default_telegram_api_url() -> url::Url {
    url::Url::parse("https://api.telegram.org/").unwrap_or_else(|_| unreachable!("literal URL"))
}

fn default_telegram_safety_margin() -> f64 {
    0.05
}

fn default_telegram_webhook_listen() -> std::net::SocketAddr {
    std::net::SocketAddr::from(([127, 0, 0, 1], 8088))
}
