//! `[mtproto]`: the configuration section of the Telegram user accounts and the channels
//! they read, with what it resolves to (account configs, channel references, reader pacing,
//! the alert target).

use std::collections::HashSet;
use std::path::PathBuf;
use std::time::Duration;

use jobwire_deliver::BotConfig;
use jobwire_mtproto::{AccountConfig, ChannelRef, ReaderConfig};
use serde::Deserialize;

use crate::config::{ConfigError, Environment, Settings};

/// `[mtproto]`: the Telegram user accounts that read channels, and how fast they may join.
///
/// The reader reads every channel in `channels` plus every enabled `[[channels]]` entry whose
/// handle is a Telegram reference (`@name` or a `t.me` link). Defaults of the pacing keys are
/// those of [`ReaderConfig`], which stay well under Telegram's anti-abuse limits.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MtprotoSection {
    /// The user accounts (`[[mtproto.accounts]]`), in preference order.
    #[serde(default)]
    pub accounts: Vec<AccountSection>,
    /// Channels to read: `@username`, `t.me/username` or an invite link `t.me/+HASH`.
    #[serde(default)]
    pub channels: Vec<String>,
    /// The chat that receives the reader's alerts (silent channels, dead sessions, failed
    /// joins). Without it alerts are only logged.
    pub admin_chat_id: Option<i64>,
    /// The `[[bots]]` name that sends the alerts; default: the first bot.
    pub admin_bot: Option<String>,
    /// Least seconds between two joins of one account.
    #[serde(default = "default_join_interval_secs")]
    pub join_interval_secs: u64,
    /// Random extra seconds added to each join interval.
    #[serde(default = "default_join_jitter_secs")]
    pub join_jitter_secs: u64,
    /// Most joins per account in 24 hours.
    #[serde(default = "default_max_joins_per_day")]
    pub max_joins_per_day: usize,
    /// Most channels one account reads (Telegram's limit is about 500).
    #[serde(default = "default_channels_per_account")]
    pub channels_per_account: usize,
    /// A channel without a live update for this many seconds is polled.
    #[serde(default = "default_poll_interval_secs")]
    pub poll_interval_secs: u64,
    /// Newest posts handed on when a channel is first joined (0: start from now).
    #[serde(default)]
    pub initial_backfill: usize,
}

/// `[[mtproto.accounts]]`: one Telegram user account.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AccountSection {
    /// A short name for logs, alerts and `jobwire login --account` (`"parser1"`).
    pub id: String,
    /// The API id of your application at my.telegram.org.
    pub api_id: i32,
    /// The environment variable holding the application's API hash (a secret, read only
    /// from the environment); default `JOBWIRE_TELEGRAM_API_HASH`.
    #[serde(default = "default_api_hash_env")]
    pub api_hash_env: String,
    /// The session file `jobwire login` writes (mode 0600); default `<id>.session`.
    pub session_path: Option<PathBuf>,
}

fn default_api_hash_env() -> String {
    "JOBWIRE_TELEGRAM_API_HASH".to_owned()
}
fn default_join_interval_secs() -> u64 {
    ReaderConfig::default().join_interval.as_secs()
}
fn default_join_jitter_secs() -> u64 {
    ReaderConfig::default().join_jitter.as_secs()
}
fn default_max_joins_per_day() -> usize {
    ReaderConfig::default().max_joins_per_day
}
fn default_channels_per_account() -> usize {
    ReaderConfig::default().channels_per_account
}
fn default_poll_interval_secs() -> u64 {
    ReaderConfig::default().poll_interval.as_secs()
}

impl Default for MtprotoSection {
    fn default() -> Self {
        Self {
            accounts: Vec::new(),
            channels: Vec::new(),
            admin_chat_id: None,
            admin_bot: None,
            join_interval_secs: default_join_interval_secs(),
            join_jitter_secs: default_join_jitter_secs(),
            max_joins_per_day: default_max_joins_per_day(),
            channels_per_account: default_channels_per_account(),
            poll_interval_secs: default_poll_interval_secs(),
            initial_backfill: 0,
        }
    }
}

fn invalid(key: impl Into<String>, message: impl Into<String>) -> ConfigError {
    ConfigError::Invalid {
        key: key.into(),
        message: message.into(),
    }
}

impl AccountSection {
    /// The account (the `i`-th of `[[mtproto.accounts]]`) with its API hash read from `env`.
    pub(super) fn resolve(
        &self,
        i: usize,
        env: &dyn Environment,
    ) -> Result<AccountConfig, ConfigError> {
        let a = self;
        let key = format!("mtproto.accounts[{i}] ({})", a.id);
        if a.id.is_empty()
            || !a
                .id
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        {
            return Err(invalid(
                format!("mtproto.accounts[{i}].id"),
                format!(
                    "{:?} is not a valid account id (letters, digits, '_', '-')",
                    a.id
                ),
            ));
        }
        if a.api_id <= 0 {
            return Err(invalid(
                format!("mtproto.accounts[{i}].api_id"),
                "must be the positive API id from my.telegram.org",
            ));
        }
        let var = &a.api_hash_env;
        let hash = env.var(var).ok_or_else(|| {
            invalid(
                &key,
                format!(
                    "environment variable {var} is not set (the API hash is read only from the environment)"
                ),
            )
        })?;
        let hash = hash.trim();
        if hash.len() != 32 || !hash.chars().all(|c| c.is_ascii_hexdigit()) {
            return Err(invalid(
                &key,
                format!(
                    "{var} does not look like an API hash (32 hexadecimal digits from my.telegram.org)"
                ),
            ));
        }
        Ok(AccountConfig::new(&a.id, a.api_id, hash, a.session_path()))
    }

    /// Where the session file lives.
    pub fn session_path(&self) -> PathBuf {
        self.session_path
            .clone()
            .unwrap_or_else(|| PathBuf::from(format!("{}.session", self.id)))
    }
}

impl MtprotoSection {
    /// The section checked: its channels parsed, the reader's pacing. The accounts stay as
    /// written; each is resolved with its API hash where it is used.
    pub fn settings(&self) -> Result<MtprotoSettings, ConfigError> {
        Ok(MtprotoSettings {
            accounts: self.accounts.clone(),
            channels: self.channel_refs()?,
            reader: self.reader_config(),
            admin_chat_id: self.admin_chat_id,
            admin_bot: self.admin_bot.clone(),
        })
    }

    /// The configured channels, parsed. Errors name the entry.
    pub fn channel_refs(&self) -> Result<Vec<ChannelRef>, ConfigError> {
        self.channels
            .iter()
            .enumerate()
            .map(|(i, raw)| {
                ChannelRef::parse(raw)
                    .map_err(|e| invalid(format!("mtproto.channels[{i}]"), e.to_string()))
            })
            .collect()
    }

    /// The reader's tunables: this section's keys over [`ReaderConfig::default`].
    pub fn reader_config(&self) -> ReaderConfig {
        ReaderConfig {
            join_interval: Duration::from_secs(self.join_interval_secs),
            join_jitter: Duration::from_secs(self.join_jitter_secs),
            max_joins_per_day: self.max_joins_per_day.max(1),
            channels_per_account: self.channels_per_account.max(1),
            poll_interval: Duration::from_secs(self.poll_interval_secs.max(1)),
            initial_backfill: self.initial_backfill,
            ..ReaderConfig::default()
        }
    }
}

/// `[mtproto]` checked, as [`Settings`] holds it: the channels parsed and the reader's
/// pacing resolved. The accounts are kept as written and resolved with their API hashes
/// (secrets, from the environment) where they are used: by the parser role and `jobwire
/// login`. (`jobwire doctor` checks the file's form itself, to report every problem.)
#[derive(Debug, Clone)]
pub struct MtprotoSettings {
    pub accounts: Vec<AccountSection>,
    /// `[mtproto] channels`, parsed.
    pub channels: Vec<ChannelRef>,
    pub reader: ReaderConfig,
    pub admin_chat_id: Option<i64>,
    pub admin_bot: Option<String>,
}

impl MtprotoSettings {
    /// The accounts with their API hashes read from `env`. Errors name the key:
    /// `mtproto.accounts[0] (parser1): environment variable … is not set`.
    pub fn account_configs(
        &self,
        env: &dyn Environment,
    ) -> Result<Vec<AccountConfig>, ConfigError> {
        if self.accounts.is_empty() {
            return Err(invalid(
                "mtproto.accounts",
                "no account is configured (add a [[mtproto.accounts]] with id and api_id)",
            ));
        }
        let mut ids = HashSet::new();
        let mut configs = Vec::new();
        for (i, a) in self.accounts.iter().enumerate() {
            if !ids.insert(a.id.as_str()) {
                return Err(invalid(
                    format!("mtproto.accounts[{i}].id"),
                    format!("account {:?} is defined twice", a.id),
                ));
            }
            configs.push(a.resolve(i, env)?);
        }
        Ok(configs)
    }

    /// The channels to read: `channels` plus every enabled `[[channels]]` entry whose handle
    /// is a Telegram reference, without repeats.
    pub fn all_channel_refs(&self, settings: &Settings) -> Vec<ChannelRef> {
        let mut refs = self.channels.clone();
        for ch in settings.channels.iter().filter(|c| c.enabled) {
            if looks_like_telegram(&ch.handle)
                && let Ok(r) = ChannelRef::parse(&ch.handle)
            {
                refs.push(r);
            }
        }
        let mut seen = HashSet::new();
        refs.retain(|r| seen.insert(r.key()));
        refs
    }

    /// The bot and chat that receive alerts: `None` without `admin_chat_id`. An `admin_bot`
    /// that names no `[[bots]]` entry, or no bot at all, is an error naming the key.
    pub fn admin_target(
        &self,
        settings: &Settings,
    ) -> Result<Option<(BotConfig, i64)>, ConfigError> {
        admin_target(self.admin_chat_id, self.admin_bot.as_ref(), settings)
    }
}

/// The bot and chat the reader's alerts go to; `None` without `admin_chat_id`.
pub(super) fn admin_target(
    admin_chat_id: Option<i64>,
    admin_bot: Option<&String>,
    settings: &Settings,
) -> Result<Option<(BotConfig, i64)>, ConfigError> {
    let Some(chat) = admin_chat_id else {
        if let Some(bot) = admin_bot {
            return Err(invalid(
                "mtproto.admin_bot",
                format!("bot {bot:?} is set but mtproto.admin_chat_id is not"),
            ));
        }
        return Ok(None);
    };
    let bot = match admin_bot {
        Some(name) => settings
            .bots
            .iter()
            .find(|b| &b.name == name)
            .ok_or_else(|| {
                invalid(
                    "mtproto.admin_bot",
                    format!("no bot named {name:?} in [[bots]]"),
                )
            })?,
        None => settings.bots.first().ok_or_else(|| {
            invalid(
                "mtproto.admin_chat_id",
                "alerts need a bot, but no [[bots]] is configured",
            )
        })?,
    };
    Ok(Some((bot.clone(), chat)))
}

/// `@name` or a `t.me` / `telegram.me` link (a plain word could be a chat title).
pub(crate) fn looks_like_telegram(handle: &str) -> bool {
    let h = handle.trim().to_ascii_lowercase();
    let h = h
        .strip_prefix("https://")
        .or_else(|| h.strip_prefix("http://"))
        .unwrap_or(&h);
    handle.trim().starts_with('@')
        || [
            "t.me/",
            "www.t.me/",
            "telegram.me/",
            "www.telegram.me/",
            "telegram.dog/",
        ]
        .iter()
        .any(|p| h.starts_with(p))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn telegram_handles_are_told_from_titles_and_feeds() {
        for h in [
            "@jobs",
            "t.me/jobs",
            "https://t.me/+AbCdE1",
            "HTTPS://Telegram.me/x",
        ] {
            assert!(looks_like_telegram(h), "{h}");
        }
        for h in ["Freelance", "https://example.com/feed.xml", "jobs chat"] {
            assert!(!looks_like_telegram(h), "{h}");
        }
    }
}
