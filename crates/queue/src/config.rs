//! `[queue]`: which queue the stages talk through.

use jobwire_core::config::InvalidKey;
use jobwire_core::secret::{SecretUrl, redact_url};
use serde::Deserialize;

/// `[queue]` as the file writes it.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
#[serde(default)]
pub struct QueueSection {
    /// `memory://` (embedded) or `amqp://user:password@host:5672/vhost` (RabbitMQ; prints
    /// redacted).
    pub url: SecretUrl,
    /// Prefix of every queue and exchange name (several deployments on one broker).
    pub prefix: String,
}

impl Default for QueueSection {
    fn default() -> Self {
        Self {
            url: "memory://".to_owned().into(),
            prefix: String::new(),
        }
    }
}

/// `[queue]` checked.
#[derive(Debug, Clone)]
pub struct QueueConfig {
    pub url: SecretUrl,
    pub prefix: String,
}

impl QueueConfig {
    /// The in-process queue (one process owns every stage).
    pub fn is_memory(&self) -> bool {
        self.url.expose() == "memory://"
    }
}

impl QueueSection {
    /// The queue's settings, once its URL names a queue jobwire has.
    pub fn resolve(&self) -> Result<QueueConfig, InvalidKey> {
        let q = self.url.expose();
        if q == "memory://" || q.starts_with("amqp://") || q.starts_with("amqps://") {
            Ok(QueueConfig {
                url: self.url.clone(),
                prefix: self.prefix.clone(),
            })
        } else {
            Err(InvalidKey::new(
                "queue.url",
                format!(
                    "{:?} is not supported (use memory:// or amqp://…)",
                    redact_url(q)
                ),
            ))
        }
    }
}
