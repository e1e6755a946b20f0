//! Configuration: one TOML file, overridden by `JOBWIRE__SECTION__KEY` environment
//! variables; secrets (bot tokens, API keys) only from the environment.
//!
//! Loading happens in two steps: [`Config::load`] parses the file and overrides into typed
//! sections (unknown keys are an error naming the key), then [`Config::resolve`] checks
//! what parsing cannot (references between sections, tokens present) and produces the
//! [`Settings`] the roles are built from.
//!
//! Each section lives in the crate it configures, with its defaults and its checks (a
//! `resolve` that names the key of a bad value); `sections` only gathers them into
//! [`Config`] (`telegram` and `llm` hold what the binary keeps of those two), `resolve`
//! checks what spans sections and builds [`Settings`] (in `settings`) from the resolved
//! parts, and `env` is the seam secrets are read through.

use std::path::Path;

use figment::Figment;
use figment::providers::{Env, Format, Toml};

mod env;
mod llm;
mod resolve;
mod sections;
mod settings;
mod telegram;
#[cfg(test)]
mod tests;

pub use crate::recovery::SchedulerSection;
pub use crate::server::AdminSection;
pub use env::{Environment, ProcessEnv};
pub use jobwire_classify::{ClassifierConfig, ClassifierKind, ClassifierSection};
pub use jobwire_core::category_section::{Category, CategorySection};
pub use jobwire_core::dedup::DedupSection;
pub use jobwire_deliver::{BotSection, RedisConfig, RedisSection};
pub use jobwire_intake::feed::FeedSection;
pub use jobwire_intake::{ChannelConfig, ChannelSection};
pub use jobwire_queue::QueueSection;
pub use jobwire_store::DatabaseSection;
pub use llm::{LlmFallbackSection, LlmSection, LlmSettings};
pub use sections::Config;
pub use settings::Settings;
pub use telegram::{BotRoleSettings, TelegramSection, UpdatesMode, WEBHOOK_SECRET_ENV};

/// The built-in taxonomy (slug, display name, description), kept in core.
pub use jobwire_core::category::STANDARD as DEFAULT_CATEGORIES;

/// Hides the password of a URL, for logs and errors (the one implementation, in core).
pub use jobwire_core::secret::redact_url;

/// A configuration problem, always naming the key it is about.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("config: {0}")]
    Parse(String),
    #[error("{key}: {message}")]
    Invalid { key: String, message: String },
}

impl From<jobwire_core::config::InvalidKey> for ConfigError {
    fn from(e: jobwire_core::config::InvalidKey) -> Self {
        ConfigError::Invalid {
            key: e.key,
            message: e.message,
        }
    }
}

fn invalid(key: impl Into<String>, message: impl Into<String>) -> ConfigError {
    ConfigError::Invalid {
        key: key.into(),
        message: message.into(),
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
}

/// figment's errors can span lines; the CLI prints one line.
fn one_line(e: &figment::Error) -> String {
    e.clone()
        .into_iter()
        .map(|e| e.to_string().replace('\n', " "))
        .collect::<Vec<_>>()
        .join("; ")
}
