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

/// The bots' metrics, for `/metrics`' `# HELP` lines and buckets.
pub const METRICS: &[jobwire_core::metric::MetricDef] = &[
    jobwire_core::metric::MetricDef::counter(
        UPDATES_TOTAL,
        &["bot", "kind"],
        "Telegram updates received by each bot, by kind.",
    ),
    jobwire_core::metric::MetricDef::counter(
        DUPLICATE_UPDATES_TOTAL,
        &["bot"],
        "Updates skipped because they were handled before (a webhook delivered twice).",
    ),
    jobwire_core::metric::MetricDef::counter(
        UPDATE_FAILURES_TOTAL,
        &["bot"],
        "Updates whose handling failed.",
    ),
    jobwire_core::metric::MetricDef::histogram(
        UPDATE_DURATION_SECONDS,
        &["bot"],
        "Time to handle one update, in seconds.",
        jobwire_core::metric::HANDLER_BUCKETS,
    ),
    jobwire_core::metric::MetricDef::counter(
        REPORTS_TOTAL,
        &["kind"],
        "Subscribers' reports: missed (a vacancy jobwire missed), wrong (a card that is not a vacancy), and the report buttons.",
    ),
    jobwire_core::metric::MetricDef::counter(
        WEBHOOK_REJECTED_TOTAL,
        &["bot", "reason"],
        "Webhook calls refused: reason secret (wrong secret token) or body (not an update).",
    ),
    jobwire_core::metric::MetricDef::counter(
        INVOICES_TOTAL,
        &["plan"],
        "Invoices and subscription links sent, by plan.",
    ),
    jobwire_core::metric::MetricDef::counter(
        PRE_CHECKOUTS_TOTAL,
        &["ok"],
        "Pre-checkout queries answered (ok true or false).",
    ),
    jobwire_core::metric::MetricDef::counter(
        PAYMENTS_TOTAL,
        &["kind", "currency", "source"],
        "Payments applied, by kind (payment, renewal, placement), currency and source (update, reconciliation).",
    ),
    jobwire_core::metric::MetricDef::counter(
        REFUNDS_TOTAL,
        &["source"],
        "Refunds recorded, by source (admin, telegram, reconciliation).",
    ),
    jobwire_core::metric::MetricDef::counter(TRIALS_TOTAL, &[], "Free trials started."),
    jobwire_core::metric::MetricDef::counter(
        RENEWALS_CANCELED_TOTAL,
        &[],
        "Stars subscriptions whose renewal a user cancelled.",
    ),
    jobwire_core::metric::MetricDef::counter(
        EXPIRIES_TOTAL,
        &["trial"],
        "Trials (trial=true) and paid periods (trial=false) that ended.",
    ),
    jobwire_core::metric::MetricDef::gauge(
        ACTIVE_SUBSCRIBERS,
        &["plan"],
        "Subscribers with access now, by plan (trial included).",
    ),
    jobwire_core::metric::MetricDef::counter(
        RECONCILIATION_DIFFERENCES_TOTAL,
        &["kind"],
        "Payments or refunds Telegram had that the ledger lacked, found by reconciliation.",
    ),
    jobwire_core::metric::MetricDef::counter(
        POSTS_WITHHELD_TOTAL,
        &[],
        "Posts withheld after enough subscribers reported them.",
    ),
    jobwire_core::metric::MetricDef::counter(
        AUTHORS_HIDDEN_TOTAL,
        &[],
        "Authors hidden by subscribers' Hide this author taps.",
    ),
    jobwire_core::metric::MetricDef::counter(
        DIGESTS_TOTAL,
        &[],
        "Daily digests posted to the public channel.",
    ),
    jobwire_core::metric::MetricDef::counter(
        PLACEMENTS_TOTAL,
        &["outcome"],
        "Employers' paid placements by what became of them: paid, published, delivered, refunded.",
    ),
];
