//! The sending side's sections: `[[bots]]` (a name and where its token is read from) and
//! `[redis]` (rate limiters shared by several sending processes), and what the send stage is
//! built from: the bots ([`BotConfig`]) and [`SendStageConfig`].

use jobwire_core::config::InvalidKey;
use jobwire_core::secret::SecretUrl;
use serde::Deserialize;

use std::time::Duration;

use jobwire_core::secret::Secret;
use teloxide::types::InlineKeyboardMarkup;

use crate::limits::RateLimitConfig;

/// One `[[bots]]` entry as the file writes it. The token itself is never in the file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BotSection {
    pub name: String,
    /// The environment variable holding the token; default `JOBWIRE_BOT_<NAME>_TOKEN`.
    pub token_env: Option<String>,
}

impl BotSection {
    /// The environment variable the token is read from.
    pub fn token_var(&self) -> String {
        self.token_env.clone().unwrap_or_else(|| {
            format!(
                "JOBWIRE_BOT_{}_TOKEN",
                self.name.to_ascii_uppercase().replace('-', "_")
            )
        })
    }

    /// The bot, its token read through `env`; `i` is the entry's place in `[[bots]]`, for
    /// the keys errors name. Unique names across entries are the caller's check.
    pub fn resolve(
        &self,
        i: usize,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<BotConfig, InvalidKey> {
        if self.name.is_empty()
            || !self
                .name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        {
            return Err(InvalidKey::new(
                format!("bots[{i}].name"),
                format!(
                    "{:?} is not a valid bot name (letters, digits, '_', '-')",
                    self.name
                ),
            ));
        }
        let var = self.token_var();
        let key = format!("bots[{i}] ({})", self.name);
        let token = env(&var).ok_or_else(|| {
            InvalidKey::new(
                &key,
                format!("environment variable {var} is not set (bot tokens are read only from the environment)"),
            )
        })?;
        let (id, secret) = token.split_once(':').unwrap_or(("", ""));
        if id.parse::<u64>().is_err() || secret.len() < 20 {
            return Err(InvalidKey::new(
                key,
                format!("{var} does not look like a bot token (expected <digits>:<secret>)"),
            ));
        }
        Ok(BotConfig {
            name: self.name.clone(),
            token: token.into(),
        })
    }
}

/// `[redis]` as the file writes it.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RedisSection {
    /// `redis://host:6379/` (may carry a password: prints redacted).
    pub url: SecretUrl,
    /// Prefix of every key jobwire writes.
    #[serde(default = "default_key_prefix")]
    pub key_prefix: String,
}

fn default_key_prefix() -> String {
    "jobwire".to_owned()
}

/// `[redis]` checked.
#[derive(Debug, Clone)]
pub struct RedisConfig {
    pub url: SecretUrl,
    pub key_prefix: String,
}

impl RedisSection {
    /// The shared state's settings, once the URL is a Redis one.
    pub fn resolve(&self) -> Result<RedisConfig, InvalidKey> {
        let u = self.url.expose();
        if !(u.starts_with("redis://") || u.starts_with("rediss://")) {
            return Err(InvalidKey::new(
                "redis.url",
                format!("{:?} is not a redis:// URL", self.url.to_string()),
            ));
        }
        Ok(RedisConfig {
            url: self.url.clone(),
            key_prefix: self.key_prefix.clone(),
        })
    }
}

/// One configured bot. The token is a [`Secret`]: `Debug` shows the bot's id, never the rest.
#[derive(Clone)]
pub struct BotConfig {
    /// The name categories refer to (`bots.<name>` in the config file).
    pub name: String,
    pub token: Secret,
}

impl BotConfig {
    /// The bot's numeric id: the part of the token before `:` (not a secret).
    pub fn bot_id(&self) -> u64 {
        self.token
            .expose()
            .split(':')
            .next()
            .and_then(|id| id.parse().ok())
            .unwrap_or(0)
    }
}

impl std::fmt::Debug for BotConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BotConfig")
            .field("name", &self.name)
            .field("token", &format_args!("{}:<redacted>", self.bot_id()))
            .finish()
    }
}

#[derive(Clone)]
pub struct SendStageConfig {
    /// Bot API base URL (`https://api.telegram.org/` or a local fake).
    pub api_url: url::Url,
    /// Draws the buttons under a card (the bots answer them, so they are the bot crate's:
    /// `jobwire_bot::card_buttons::fresh_card_keyboard`). `None`: cards go out without buttons.
    pub keyboard: Option<CardKeyboard>,
    pub limits: RateLimitConfig,
    /// Deliveries handled at once (most of them wait for a rate limiter).
    pub max_in_flight: usize,
    /// Network failures before a delivery is given up as failed.
    pub max_attempts: u32,
    pub request_timeout: Duration,
}

impl Default for SendStageConfig {
    fn default() -> Self {
        Self {
            api_url: url::Url::parse("https://api.telegram.org/").unwrap_or_else(|_| {
                // A literal that always parses; kept total for the linter.
                url::Url::parse("http://127.0.0.1/").unwrap_or_else(|_| unreachable!())
            }),
            keyboard: None,
            limits: RateLimitConfig::default(),
            max_in_flight: 16_384,
            max_attempts: 8,
            request_timeout: Duration::from_secs(30),
        }
    }
}

/// The keyboard under the card of a delivery: `(the delivery's language, its id, the
/// original's link if it is to be a button)`.
pub type CardKeyboard =
    std::sync::Arc<dyn Fn(Option<&str>, i64, Option<&str>) -> InlineKeyboardMarkup + Send + Sync>;

impl std::fmt::Debug for SendStageConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SendStageConfig")
            .field("api_url", &self.api_url.as_str())
            .field("keyboard", &self.keyboard.is_some())
            .field("limits", &self.limits)
            .field("max_in_flight", &self.max_in_flight)
            .field("max_attempts", &self.max_attempts)
            .field("request_timeout", &self.request_timeout)
            .finish()
    }
}
