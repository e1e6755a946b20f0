//! [`Parts`]: what every role of a process is built from (settings, store, queue, shared
//! rate limiters, the alert hook, health and the clock), made by [`crate::connect`] and
//! handed to [`crate::roles`] by [`crate::pipeline`].

use std::sync::Arc;

use jobwire_classify::cascade::AlertFn;
use jobwire_queue::Queue;
use jobwire_store::Store;

use crate::config::Settings;
use crate::server::Health;

/// Everything a running pipeline is made of.
#[derive(Clone)]
pub struct Parts {
    pub settings: Settings,
    pub store: Arc<dyn Store>,
    pub queue: Arc<dyn Queue>,
    /// Shared rate limiters (distributed mode); in-process limiters without it.
    pub redis: Option<redis::aio::ConnectionManager>,
    /// Where admin alerts go besides the log (the admin chat), when one is configured.
    pub admin_alert: Option<AlertFn>,
    /// The `/readyz` of the process: restarting tasks report themselves not ready there.
    pub health: Option<Arc<Health>>,
    /// Where "now" comes from for subscriptions (fan-out's access check, the bots' trials,
    /// reminders and expiries): the system clock, or a test's manual one.
    pub clock: Arc<dyn jobwire_core::clock::Clock>,
}

impl std::fmt::Debug for Parts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Parts")
            .field("settings", &self.settings)
            .field("store", &self.store)
            .field("queue", &self.queue)
            .field("redis", &self.redis.is_some())
            .field("admin_alert", &self.admin_alert.is_some())
            .finish()
    }
}
