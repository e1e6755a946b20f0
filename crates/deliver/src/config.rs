//! The sending side's sections: `[[bots]]` (a name and where its token is read from) and
//! `[redis]` (rate limiters shared by several sending processes).

use jobwire_core::config::InvalidKey;
use jobwire_core::secret::SecretUrl;
use serde::Deserialize;

use crate::BotConfig;

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
