//! Messages to the admins (payment failures, reconciliation differences, refunds that fail),
//! wired by the binary to the admin chat.

use std::fmt;
use std::sync::Arc;

/// A message to the admins (payment failures, reconciliation differences).
pub type AlertFn = Arc<dyn Fn(String) + Send + Sync>;

/// Where alerts go; without a listener they are logged.
#[derive(Clone, Default)]
pub(crate) struct Alerts(Option<AlertFn>);

impl Alerts {
    pub(crate) fn new(alert: Option<AlertFn>) -> Self {
        Self(alert)
    }

    /// Tells the admins, if anyone listens.
    pub(crate) fn send(&self, message: String) {
        match &self.0 {
            Some(alert) => alert(message),
            None => tracing::warn!(%message, "billing alert (no admin chat configured)"),
        }
    }
}

impl fmt::Debug for Alerts {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Alerts").field(&self.0.is_some()).finish()
    }
}
