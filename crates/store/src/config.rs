//! `[database]`: which store jobwire runs on.

use jobwire_core::config::InvalidKey;
use jobwire_core::secret::{SecretUrl, redact_url};
use serde::Deserialize;

/// `[database]` as the file writes it.
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
            url: "sqlite://jobwire.db".to_owned().into(),
        }
    }
}

impl DatabaseSection {
    /// The database URL, once its scheme is one jobwire has a store for.
    pub fn resolve(&self) -> Result<SecretUrl, InvalidKey> {
        let db = self.url.expose();
        if db.starts_with("sqlite:")
            || db.starts_with("postgres://")
            || db.starts_with("postgresql://")
        {
            Ok(self.url.clone())
        } else {
            Err(InvalidKey::new(
                "database.url",
                format!(
                    "{:?} is not supported (use sqlite://PATH or postgres://…)",
                    redact_url(db)
                ),
            ))
        }
    }

    /// Whether the store is the embedded SQLite file.
    pub fn is_sqlite(&self) -> bool {
        self.url.expose().starts_with("sqlite:")
    }
}
