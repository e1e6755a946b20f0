//! What the bots report. Each notable occurrence is one [`BotEvent`] that counts itself in
//! `/metrics` and writes its log line in one place ([`BotEvent::emit`]), so the two never
//! disagree; every metric name is a constant below, listed in [`METRICS`] (all with the
//! `jobwire_` prefix of every other jobwire metric).

use std::collections::BTreeMap;
use std::time::Duration;

use chrono::{DateTime, Utc};
use jobwire_core::metric::MetricDef;

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
pub const METRICS: &[MetricDef] = &[
    MetricDef::counter(
        UPDATES_TOTAL,
        &["bot", "kind"],
        "Telegram updates received by each bot, by kind.",
    ),
    MetricDef::counter(
        DUPLICATE_UPDATES_TOTAL,
        &["bot"],
        "Updates skipped because they were handled before (a webhook delivered twice).",
    ),
    MetricDef::counter(
        UPDATE_FAILURES_TOTAL,
        &["bot"],
        "Updates whose handling failed.",
    ),
    MetricDef::histogram(
        UPDATE_DURATION_SECONDS,
        &["bot"],
        "Time to handle one update, in seconds.",
        jobwire_core::metric::HANDLER_BUCKETS,
    ),
    MetricDef::counter(
        REPORTS_TOTAL,
        &["kind"],
        "Subscribers' reports: missed (a vacancy jobwire missed), wrong (a card that is not a vacancy), and the report buttons.",
    ),
    MetricDef::counter(
        WEBHOOK_REJECTED_TOTAL,
        &["bot", "reason"],
        "Webhook calls refused: reason secret (wrong secret token) or body (not an update).",
    ),
    MetricDef::counter(
        INVOICES_TOTAL,
        &["plan"],
        "Invoices and subscription links sent, by plan.",
    ),
    MetricDef::counter(
        PRE_CHECKOUTS_TOTAL,
        &["ok"],
        "Pre-checkout queries answered (ok true or false).",
    ),
    MetricDef::counter(
        PAYMENTS_TOTAL,
        &["kind", "currency", "source"],
        "Payments applied, by kind (payment, renewal, placement), currency and source (update, reconciliation).",
    ),
    MetricDef::counter(
        REFUNDS_TOTAL,
        &["source"],
        "Refunds recorded, by source (admin, telegram, reconciliation).",
    ),
    MetricDef::counter(TRIALS_TOTAL, &[], "Free trials started."),
    MetricDef::counter(
        RENEWALS_CANCELED_TOTAL,
        &[],
        "Stars subscriptions whose renewal a user cancelled.",
    ),
    MetricDef::counter(
        EXPIRIES_TOTAL,
        &["trial"],
        "Trials (trial=true) and paid periods (trial=false) that ended.",
    ),
    MetricDef::gauge(
        ACTIVE_SUBSCRIBERS,
        &["plan"],
        "Subscribers with access now, by plan (trial included).",
    ),
    MetricDef::counter(
        RECONCILIATION_DIFFERENCES_TOTAL,
        &["kind"],
        "Payments or refunds Telegram had that the ledger lacked, found by reconciliation.",
    ),
    MetricDef::counter(
        POSTS_WITHHELD_TOTAL,
        &[],
        "Posts withheld after enough subscribers reported them.",
    ),
    MetricDef::counter(
        AUTHORS_HIDDEN_TOTAL,
        &[],
        "Authors hidden by subscribers' Hide this author taps.",
    ),
    MetricDef::counter(
        DIGESTS_TOTAL,
        &[],
        "Daily digests posted to the public channel.",
    ),
    MetricDef::counter(
        PLACEMENTS_TOTAL,
        &["outcome"],
        "Employers' paid placements by what became of them: paid, published, delivered, refunded.",
    ),
];

fn flag(b: bool) -> &'static str {
    if b { "true" } else { "false" }
}

/// Why a webhook call was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Rejected {
    /// A wrong secret token.
    Secret,
    /// A body that is not an update.
    Body,
}

/// One occurrence worth a metric and a log line.
#[derive(Debug)]
pub(crate) enum BotEvent<'a> {
    /// An update arrived (counted before it is claimed).
    UpdateReceived { bot: &'a str, kind: &'static str },
    /// An update handled before (a redelivered webhook): skipped.
    DuplicateUpdate { bot: &'a str, update_id: u32 },
    /// Handling an update failed after its retries.
    UpdateFailed {
        bot: &'a str,
        chat_id: Option<i64>,
        update_id: u32,
        error: &'a str,
    },
    /// An update's handling ended (handled or failed), after `took`.
    UpdateDone { bot: &'a str, took: Duration },
    /// A webhook call was refused.
    WebhookRejected {
        bot: &'a str,
        reason: Rejected,
        error: Option<&'a str>,
    },
    /// A missed vacancy reported through the main bot.
    MissedReported {
        bot: &'a str,
        chat_id: i64,
        report_id: i64,
    },
    /// `/wrong` in reply to a delivered message.
    WrongReported {
        bot: &'a str,
        chat_id: i64,
        report_id: i64,
        replied_message_id: i32,
    },
    /// A card's report button filed a report.
    CardReported {
        bot: &'a str,
        chat_id: i64,
        post: i64,
        report_id: i64,
        kind: &'static str,
        reporters: u32,
    },
    /// Enough subscribers reported a post: it is withheld until an admin decides.
    PostWithheld { post: i64, reporters: u32 },
    /// "Hide this author" (`new`: it was not hidden before).
    AuthorHidden {
        bot: &'a str,
        chat_id: i64,
        post: i64,
        author: &'a str,
        new: bool,
    },
    /// The daily digest went to the public channel.
    DigestPosted {
        day: &'a str,
        jobs: u32,
        channel: &'a str,
    },
    /// An invoice or a subscription link for a plan was sent.
    InvoiceSent {
        bot: &'a str,
        chat_id: i64,
        plan: &'a str,
        currency: &'a str,
    },
    /// A placement's invoice was sent.
    PlacementInvoiceSent {
        bot: &'a str,
        chat_id: i64,
        placement: i64,
        stars: u32,
    },
    /// A pre-checkout query was answered (`ok`: accepted).
    PreCheckoutAnswered {
        bot: &'a str,
        user: u64,
        ok: bool,
        currency: &'a str,
        amount: u32,
    },
    /// A payment for a plan was applied (`renewal` or a first `payment`).
    PaymentApplied {
        chat_id: i64,
        charge: &'a str,
        plan: &'a str,
        amount: i64,
        currency: &'a str,
        until: DateTime<Utc>,
        renewal: bool,
        source: &'static str,
    },
    /// A placement's payment was recorded.
    PlacementPaid {
        chat_id: i64,
        charge: &'a str,
        placement: i64,
        status: &'static str,
        amount: i64,
        currency: &'a str,
        source: &'static str,
    },
    /// A refund recorded: Telegram's (`telegram`), jobwire's own (`admin`, `placement`), or
    /// one reconciliation found (`reconciliation`).
    Refunded {
        source: &'a str,
        chat_id: i64,
        charge: &'a str,
    },
    /// A free trial started.
    TrialStarted { chat_id: i64, until: DateTime<Utc> },
    /// A user cancelled the renewal of their Stars subscription.
    RenewalCanceled { chat_id: i64 },
    /// A reminder (`remind_3d`, `remind_1d`) or the expiry message (`ended`) is sent.
    BillingNotice {
        chat_id: i64,
        notice: &'static str,
        period: i64,
        trial: bool,
    },
    /// Subscribers with access now, by plan.
    ActiveSubscribers { by_plan: &'a BTreeMap<String, u64> },
    /// Reconciliation applied a payment (`payment`) or a refund (`refund`) the ledger lacked.
    Reconciled { kind: &'static str, charge: &'a str },
    /// A paid placement was published as a post.
    PlacementPublished {
        placement: i64,
        post: i64,
        chat_id: i64,
    },
    /// A published placement reached subscribers; the employer is told how many.
    PlacementDelivered { placement: i64, reached: usize },
    /// A refused placement was refunded.
    PlacementRefunded { placement: i64, charge: &'a str },
}

impl BotEvent<'_> {
    /// Counts the event in `/metrics` and logs it.
    #[allow(clippy::too_many_lines)]
    pub(crate) fn emit(self) {
        match self {
            Self::UpdateReceived { bot, kind } => {
                metrics::counter!(UPDATES_TOTAL, "bot" => bot.to_owned(), "kind" => kind)
                    .increment(1);
            }
            Self::DuplicateUpdate { bot, update_id } => {
                metrics::counter!(DUPLICATE_UPDATES_TOTAL, "bot" => bot.to_owned()).increment(1);
                tracing::debug!(bot, update_id, "update handled before; skipped");
            }
            Self::UpdateFailed {
                bot,
                chat_id,
                update_id,
                error,
            } => {
                metrics::counter!(UPDATE_FAILURES_TOTAL, "bot" => bot.to_owned()).increment(1);
                tracing::error!(bot, chat_id = ?chat_id, update_id, error, "handling an update failed");
            }
            Self::UpdateDone { bot, took } => {
                metrics::histogram!(UPDATE_DURATION_SECONDS, "bot" => bot.to_owned())
                    .record(took.as_secs_f64());
            }
            Self::WebhookRejected { bot, reason, error } => {
                let label = match reason {
                    Rejected::Secret => "secret",
                    Rejected::Body => "body",
                };
                metrics::counter!(WEBHOOK_REJECTED_TOTAL, "bot" => bot.to_owned(), "reason" => label)
                    .increment(1);
                match reason {
                    Rejected::Secret => {
                        tracing::warn!(bot, "webhook request with a wrong secret refused");
                    }
                    Rejected::Body => {
                        tracing::warn!(
                            bot,
                            error = error.unwrap_or_default(),
                            "webhook body is not an update"
                        );
                    }
                }
            }
            Self::MissedReported {
                bot,
                chat_id,
                report_id,
            } => {
                metrics::counter!(REPORTS_TOTAL, "kind" => "missed").increment(1);
                tracing::info!(bot, chat_id, report_id, "missed vacancy reported");
            }
            Self::WrongReported {
                bot,
                chat_id,
                report_id,
                replied_message_id,
            } => {
                metrics::counter!(REPORTS_TOTAL, "kind" => "wrong").increment(1);
                tracing::info!(
                    bot,
                    chat_id,
                    report_id,
                    replied_message_id,
                    "wrong delivery reported"
                );
            }
            Self::CardReported {
                bot,
                chat_id,
                post,
                report_id,
                kind,
                reporters,
            } => {
                metrics::counter!(REPORTS_TOTAL, "kind" => kind).increment(1);
                tracing::info!(
                    bot,
                    chat_id,
                    post,
                    report_id,
                    kind,
                    reporters,
                    "card reported"
                );
            }
            Self::PostWithheld { post, reporters } => {
                metrics::counter!(POSTS_WITHHELD_TOTAL).increment(1);
                tracing::warn!(
                    post,
                    reporters,
                    "post withheld: enough subscribers reported it; it waits for an admin"
                );
            }
            Self::AuthorHidden {
                bot,
                chat_id,
                post,
                author,
                new,
            } => {
                metrics::counter!(AUTHORS_HIDDEN_TOTAL).increment(u64::from(new));
                tracing::info!(bot, chat_id, post, author, new, "author hidden");
            }
            Self::DigestPosted { day, jobs, channel } => {
                metrics::counter!(DIGESTS_TOTAL).increment(1);
                tracing::info!(day, jobs, channel, "daily digest posted");
            }
            Self::InvoiceSent {
                bot,
                chat_id,
                plan,
                currency,
            } => {
                metrics::counter!(INVOICES_TOTAL, "plan" => plan.to_owned()).increment(1);
                tracing::info!(bot, chat_id, plan, currency, "invoice sent");
            }
            Self::PlacementInvoiceSent {
                bot,
                chat_id,
                placement,
                stars,
            } => {
                metrics::counter!(INVOICES_TOTAL, "plan" => "placement").increment(1);
                tracing::info!(bot, chat_id, placement, stars, "placement invoice sent");
            }
            Self::PreCheckoutAnswered {
                bot,
                user,
                ok,
                currency,
                amount,
            } => {
                metrics::counter!(PRE_CHECKOUTS_TOTAL, "ok" => flag(ok)).increment(1);
                tracing::info!(bot, user, ok, currency, amount, "pre-checkout answered");
            }
            Self::PaymentApplied {
                chat_id,
                charge,
                plan,
                amount,
                currency,
                until,
                renewal,
                source,
            } => {
                let kind = if renewal { "renewal" } else { "payment" };
                metrics::counter!(PAYMENTS_TOTAL, "kind" => kind, "currency" => currency.to_owned(), "source" => source)
                    .increment(1);
                tracing::info!(chat_id, charge, plan, amount, currency, until = %until, kind, source, "payment applied");
            }
            Self::PlacementPaid {
                chat_id,
                charge,
                placement,
                status,
                amount,
                currency,
                source,
            } => {
                metrics::counter!(PLACEMENTS_TOTAL, "outcome" => "paid").increment(1);
                metrics::counter!(PAYMENTS_TOTAL, "kind" => "placement", "currency" => currency.to_owned(), "source" => source)
                    .increment(1);
                tracing::info!(
                    chat_id,
                    charge,
                    placement,
                    status,
                    amount,
                    source,
                    "placement paid"
                );
            }
            Self::Refunded {
                source,
                chat_id,
                charge,
            } => {
                metrics::counter!(REFUNDS_TOTAL, "source" => source.to_owned()).increment(1);
                tracing::info!(chat_id, charge, source, "refund recorded");
            }
            Self::TrialStarted { chat_id, until } => {
                metrics::counter!(TRIALS_TOTAL).increment(1);
                tracing::info!(chat_id, until = %until, "trial started");
            }
            Self::RenewalCanceled { chat_id } => {
                metrics::counter!(RENEWALS_CANCELED_TOTAL).increment(1);
                tracing::info!(chat_id, "subscription renewal cancelled");
            }
            Self::BillingNotice {
                chat_id,
                notice,
                period,
                trial,
            } => {
                if notice == "ended" {
                    metrics::counter!(EXPIRIES_TOTAL, "trial" => flag(trial)).increment(1);
                }
                tracing::info!(chat_id, notice, period, "billing notice");
            }
            Self::ActiveSubscribers { by_plan } => {
                for (plan, n) in by_plan {
                    #[allow(clippy::cast_precision_loss)]
                    metrics::gauge!(ACTIVE_SUBSCRIBERS, "plan" => plan.clone()).set(*n as f64);
                }
            }
            Self::Reconciled { kind, charge } => {
                metrics::counter!(RECONCILIATION_DIFFERENCES_TOTAL, "kind" => kind).increment(1);
                tracing::warn!(kind, charge, "reconciliation found what the ledger lacked");
            }
            Self::PlacementPublished {
                placement,
                post,
                chat_id,
            } => {
                metrics::counter!(PLACEMENTS_TOTAL, "outcome" => "published").increment(1);
                tracing::info!(placement, post, chat_id, "placement published");
            }
            Self::PlacementDelivered { placement, reached } => {
                metrics::counter!(PLACEMENTS_TOTAL, "outcome" => "delivered").increment(1);
                tracing::info!(placement, reached, "placement delivered");
            }
            Self::PlacementRefunded { placement, charge } => {
                metrics::counter!(PLACEMENTS_TOTAL, "outcome" => "refunded").increment(1);
                tracing::info!(placement, charge, "placement refunded");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use jobwire_core::metric::MetricKind;
    use metrics::{
        Counter, Gauge, Histogram, Key, KeyName, Metadata, Recorder, SharedString, Unit,
    };

    use super::*;

    /// Notes the name and kind of every metric an event registers.
    #[derive(Default)]
    struct Names(Arc<Mutex<Vec<(String, MetricKind)>>>);

    impl Names {
        fn note(&self, key: &Key, kind: MetricKind) {
            self.0
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .push((key.name().to_owned(), kind));
        }
    }

    impl Recorder for Names {
        fn describe_counter(&self, _: KeyName, _: Option<Unit>, _: SharedString) {}
        fn describe_gauge(&self, _: KeyName, _: Option<Unit>, _: SharedString) {}
        fn describe_histogram(&self, _: KeyName, _: Option<Unit>, _: SharedString) {}
        fn register_counter(&self, key: &Key, _: &Metadata<'_>) -> Counter {
            self.note(key, MetricKind::Counter);
            Counter::noop()
        }
        fn register_gauge(&self, key: &Key, _: &Metadata<'_>) -> Gauge {
            self.note(key, MetricKind::Gauge);
            Gauge::noop()
        }
        fn register_histogram(&self, key: &Key, _: &Metadata<'_>) -> Histogram {
            self.note(key, MetricKind::Histogram);
            Histogram::noop()
        }
    }

    #[test]
    fn every_event_counts_in_a_metric_of_the_catalog() {
        let now = Utc::now();
        let plans: BTreeMap<String, u64> = [("month".to_owned(), 2)].into();
        let events = vec![
            BotEvent::UpdateReceived {
                bot: "main",
                kind: "command",
            },
            BotEvent::DuplicateUpdate {
                bot: "main",
                update_id: 1,
            },
            BotEvent::UpdateFailed {
                bot: "main",
                chat_id: Some(1),
                update_id: 1,
                error: "x",
            },
            BotEvent::UpdateDone {
                bot: "main",
                took: Duration::from_millis(3),
            },
            BotEvent::WebhookRejected {
                bot: "main",
                reason: Rejected::Secret,
                error: None,
            },
            BotEvent::WebhookRejected {
                bot: "main",
                reason: Rejected::Body,
                error: Some("x"),
            },
            BotEvent::MissedReported {
                bot: "main",
                chat_id: 1,
                report_id: 1,
            },
            BotEvent::WrongReported {
                bot: "web",
                chat_id: 1,
                report_id: 1,
                replied_message_id: 3,
            },
            BotEvent::CardReported {
                bot: "web",
                chat_id: 1,
                post: 1,
                report_id: 1,
                kind: "not_job",
                reporters: 1,
            },
            BotEvent::PostWithheld {
                post: 1,
                reporters: 3,
            },
            BotEvent::AuthorHidden {
                bot: "web",
                chat_id: 1,
                post: 1,
                author: "@a",
                new: true,
            },
            BotEvent::DigestPosted {
                day: "2026-12-06",
                jobs: 2,
                channel: "@jobs",
            },
            BotEvent::InvoiceSent {
                bot: "main",
                chat_id: 1,
                plan: "month",
                currency: "XTR",
            },
            BotEvent::PlacementInvoiceSent {
                bot: "main",
                chat_id: 1,
                placement: 1,
                stars: 100,
            },
            BotEvent::PreCheckoutAnswered {
                bot: "main",
                user: 1,
                ok: true,
                currency: "XTR",
                amount: 100,
            },
            BotEvent::PaymentApplied {
                chat_id: 1,
                charge: "c",
                plan: "month",
                amount: 100,
                currency: "XTR",
                until: now,
                renewal: false,
                source: "update",
            },
            BotEvent::PlacementPaid {
                chat_id: 1,
                charge: "c",
                placement: 1,
                status: "paid",
                amount: 100,
                currency: "XTR",
                source: "update",
            },
            BotEvent::Refunded {
                source: "telegram",
                chat_id: 1,
                charge: "c",
            },
            BotEvent::TrialStarted {
                chat_id: 1,
                until: now,
            },
            BotEvent::RenewalCanceled { chat_id: 1 },
            BotEvent::BillingNotice {
                chat_id: 1,
                notice: "ended",
                period: 1,
                trial: true,
            },
            BotEvent::ActiveSubscribers { by_plan: &plans },
            BotEvent::Reconciled {
                kind: "payment",
                charge: "c",
            },
            BotEvent::PlacementPublished {
                placement: 1,
                post: 1,
                chat_id: 1,
            },
            BotEvent::PlacementDelivered {
                placement: 1,
                reached: 4,
            },
            BotEvent::PlacementRefunded {
                placement: 1,
                charge: "c",
            },
        ];
        let recorder = Names::default();
        let seen = Arc::clone(&recorder.0);
        for event in events {
            let before = seen
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .len();
            let name = format!("{event:?}");
            metrics::with_local_recorder(&recorder, || event.emit());
            let after = seen
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .len();
            assert!(after > before, "{name} counts in no metric");
        }
        let seen = seen
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        for (name, kind) in seen.iter() {
            let def = METRICS.iter().find(|d| d.name == name.as_str());
            assert!(def.is_some(), "{name} is not in the METRICS table");
            assert_eq!(
                def.map(|d| d.kind),
                Some(*kind),
                "{name} is recorded as another kind"
            );
        }
        for def in METRICS {
            assert!(
                seen.iter().any(|(n, _)| n == def.name),
                "no event records {}",
                def.name
            );
        }
    }
}
