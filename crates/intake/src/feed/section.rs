//! `[[feeds]]`: the RSS and Atom feeds the configuration seeds as sources.

use std::collections::HashSet;
use std::time::Duration;

use jobwire_core::config::InvalidKey;
use serde::Deserialize;

use super::FeedConfig;

/// One `[[feeds]]` entry: seeds a source of kind feed on the first start (afterwards the
/// database holds it as the admin left it). Its `Debug` shows the URL's host only: the URL
/// may hold a token.
#[derive(Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FeedSection {
    /// The channel name its posts carry (`feed:larajobs`); unique.
    pub name: String,
    /// The feed URL; may hold a token (Upwork's `securityToken`), so it is never printed.
    pub url: String,
    /// Seconds between polls (jitter is added on top).
    #[serde(default = "FeedSection::default_interval_secs")]
    pub interval_secs: u64,
    #[serde(default = "FeedSection::default_jitter_secs")]
    pub jitter_secs: u64,
    /// Deliver what the feed already holds on its first poll (default: mark it seen).
    #[serde(default)]
    pub backfill: bool,
}

impl std::fmt::Debug for FeedSection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FeedSection")
            .field("name", &self.name)
            .field("host", &self.to_config().host())
            .field("interval_secs", &self.interval_secs)
            .field("jitter_secs", &self.jitter_secs)
            .field("backfill", &self.backfill)
            .finish()
    }
}

impl FeedSection {
    /// Ten minutes between polls unless the entry says otherwise.
    pub const fn default_interval_secs() -> u64 {
        600
    }

    /// Up to a minute of jitter unless the entry says otherwise.
    pub const fn default_jitter_secs() -> u64 {
        60
    }

    /// The feed to poll (an interval under [`super::MIN_INTERVAL`] is raised to it).
    pub fn to_config(&self) -> FeedConfig {
        let mut config = FeedConfig::new(self.name.clone(), self.url.clone());
        config.interval = Duration::from_secs(self.interval_secs).max(super::MIN_INTERVAL);
        config.jitter = Duration::from_secs(self.jitter_secs);
        config.backfill = self.backfill;
        config
    }

    /// Every entry checked (a unique, non-empty name; an http(s) URL) and made a feed.
    pub fn resolve_all(sections: &[FeedSection]) -> Result<Vec<FeedConfig>, InvalidKey> {
        let mut names = HashSet::new();
        sections
            .iter()
            .enumerate()
            .map(|(i, f)| {
                let key = format!("feeds[{i}] ({})", f.name);
                if f.name.trim().is_empty() || !names.insert(f.name.as_str()) {
                    return Err(InvalidKey::new(key, "needs a unique, non-empty name"));
                }
                match reqwest012::Url::parse(&f.url) {
                    Ok(u) if u.scheme() == "http" || u.scheme() == "https" => Ok(f.to_config()),
                    _ => Err(InvalidKey::new(key, "is not an http(s) URL")),
                }
            })
            .collect()
    }
}
