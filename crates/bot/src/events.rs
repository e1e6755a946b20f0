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
/// `jobwire_bot_invoices_total{plan}`: invoices and subscription links sent.
pub const INVOICES_TOTAL: &str = "jobwire_bot_invoices_total";
/// `jobwire_bot_pre_checkouts_total{ok}`: pre-checkout queries answered.
pub const PRE_CHECKOUTS_TOTAL: &str = "jobwire_bot_pre_checkouts_total";
/// `jobwire_payments_total{kind, currency, source}`: payments applied (`payment`, `renewal`;
/// from an `update` or from `reconciliation`).
pub const PAYMENTS_TOTAL: &str = "jobwire_payments_total";
/// `jobwire_refunds_total{source}`: refunds recorded (`admin`, `telegram`, `reconciliation`).
pub const REFUNDS_TOTAL: &str = "jobwire_refunds_total";
/// `jobwire_trials_total`: trials started.
pub const TRIALS_TOTAL: &str = "jobwire_trials_total";
/// `jobwire_renewals_canceled_total`: Stars subscriptions whose renewal a user cancelled.
pub const RENEWALS_CANCELED_TOTAL: &str = "jobwire_renewals_canceled_total";
/// `jobwire_expiries_total{trial}`: trials and subscriptions that ended (expiry messages).
pub const EXPIRIES_TOTAL: &str = "jobwire_expiries_total";
/// `jobwire_active_subscribers{plan}`: subscribers with access now, by plan (`trial` too).
pub const ACTIVE_SUBSCRIBERS: &str = "jobwire_active_subscribers";
/// `jobwire_reconciliation_differences_total{kind}`: payments or refunds Telegram had and
/// the ledger lacked.
pub const RECONCILIATION_DIFFERENCES_TOTAL: &str = "jobwire_reconciliation_differences_total";
/// `jobwire_posts_withheld_total`: posts withheld after enough subscribers reported them.
pub const POSTS_WITHHELD_TOTAL: &str = "jobwire_posts_withheld_total";
/// `jobwire_authors_hidden_total`: "Hide this author" taps that hid an author.
pub const AUTHORS_HIDDEN_TOTAL: &str = "jobwire_authors_hidden_total";
/// `jobwire_digests_total`: daily digests posted to the public channel.
pub const DIGESTS_TOTAL: &str = "jobwire_digests_total";
/// `jobwire_placements_total{outcome}`: employers' direct placements by what became of them
/// (`paid`, `published`, `delivered`, `refunded`).
pub const PLACEMENTS_TOTAL: &str = "jobwire_placements_total";
