//! The bots' metric names, each written once (all with the `jobwire_` prefix of every other
//! jobwire metric).

/// `jobwire_bot_updates_total{bot, kind}`: updates received.
pub const UPDATES_TOTAL: &str = "jobwire_bot_updates_total";
/// `jobwire_bot_duplicate_updates_total{bot}`: updates handled before (redelivered webhooks).
pub const DUPLICATE_UPDATES_TOTAL: &str = "jobwire_bot_duplicate_updates_total";
/// `jobwire_bot_update_failures_total{bot}`: updates whose handling failed.
pub const UPDATE_FAILURES_TOTAL: &str = "jobwire_bot_update_failures_total";
/// `jobwire_bot_update_duration_seconds{bot}`.
pub const UPDATE_DURATION_SECONDS: &str = "jobwire_bot_update_duration_seconds";
/// `jobwire_bot_reports_total{kind}`: subscribers' reports (`missed`, `wrong`).
pub const REPORTS_TOTAL: &str = "jobwire_bot_reports_total";
/// `jobwire_bot_webhook_rejected_total{bot, reason}`: webhook calls refused.
pub const WEBHOOK_REJECTED_TOTAL: &str = "jobwire_bot_webhook_rejected_total";
