//! `[[channels]]`: the channels (and feeds, and imported chats) the configuration seeds as
//! sources, with their keyword rules.

use jobwire_core::config::InvalidKey;
use jobwire_core::rules::ChannelRules;
use serde::Deserialize;

/// One `[[channels]]` entry as the file writes it.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChannelSection {
    pub handle: String,
    pub title: Option<String>,
    #[serde(default = "ChannelSection::enabled_by_default")]
    pub enabled: bool,
    #[serde(default)]
    pub include: Vec<String>,
    #[serde(default)]
    pub exclude: Vec<String>,
}

/// A `[[channels]]` entry whose rules parse: what seeds a source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChannelConfig {
    pub handle: String,
    pub title: Option<String>,
    pub enabled: bool,
    /// The rules as written (the store keeps them as text); they parse.
    pub include: Vec<String>,
    pub exclude: Vec<String>,
}

impl ChannelSection {
    /// A channel is read unless the entry says `enabled = false`.
    pub const fn enabled_by_default() -> bool {
        true
    }

    /// The entry, once its rules parse; `i` is its place in `[[channels]]`.
    pub fn resolve(&self, i: usize) -> Result<ChannelConfig, InvalidKey> {
        ChannelRules::parse(self.include.iter(), self.exclude.iter()).map_err(|e| {
            InvalidKey::new(format!("channels[{i}] ({})", self.handle), e.to_string())
        })?;
        Ok(ChannelConfig {
            handle: self.handle.clone(),
            title: self.title.clone(),
            enabled: self.enabled,
            include: self.include.clone(),
            exclude: self.exclude.clone(),
        })
    }
}
