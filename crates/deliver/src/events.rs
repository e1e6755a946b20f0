//! What the send stage reports. Each outcome of a Telegram call is one [`SendEvent`] that
//! counts itself in the process's [`SendCounters`], in `/metrics` and in the log, so the
//! three never disagree and a metric's name is written once.

use std::sync::atomic::Ordering;
use std::time::Duration;

use jobwire_core::metric::MetricDef;

use crate::stage::SendCounters;

/// `jobwire_deliveries_total{outcome}`: deliveries by final or retried outcome.
pub const DELIVERIES_TOTAL: &str = "jobwire_deliveries_total";
/// `jobwire_telegram_429_total{bot}`: Telegram's "too many requests" answers.
pub const TELEGRAM_429_TOTAL: &str = "jobwire_telegram_429_total";
/// `jobwire_send_latency_seconds`: one `sendMessage` call, request to answer.
pub const SEND_LATENCY_SECONDS: &str = "jobwire_send_latency_seconds";
/// `jobwire_end_to_end_latency_seconds`: a post's arrival to its card's delivery.
pub const END_TO_END_LATENCY_SECONDS: &str = "jobwire_end_to_end_latency_seconds";

/// The send stage's metrics, for `/metrics`' `# HELP` lines and buckets.
pub const METRICS: &[MetricDef] = &[
    MetricDef::counter(
        DELIVERIES_TOTAL,
        &["outcome"],
        "Deliveries by outcome: sent, blocked (the subscriber blocked the bot), failed (refused or out of attempts), retried.",
    ),
    MetricDef::counter(
        TELEGRAM_429_TOTAL,
        &["bot"],
        "Telegram Bot API answers 429 (too many requests) to a bot's sends.",
    ),
    MetricDef::histogram(
        SEND_LATENCY_SECONDS,
        &[],
        "One sendMessage call, request to Telegram's answer, in seconds.",
        jobwire_core::metric::TELEGRAM_CALL_BUCKETS,
    ),
    MetricDef::histogram(
        END_TO_END_LATENCY_SECONDS,
        &[],
        "From a post's arrival at jobwire (read from its channel or feed) to Telegram accepting the last part of its card to one subscriber, in seconds; deliveries held on purpose (quiet hours, a plan's delay, a subscriber catching up) are not counted.",
        jobwire_core::metric::END_TO_END_BUCKETS,
    ),
    MetricDef::counter(
        crate::broadcast::BROADCAST_SENDS_TOTAL,
        &["outcome"],
        "Broadcast messages by outcome per recipient: sent, blocked, failed, left, later.",
    ),
];

/// One outcome of the send stage.
#[derive(Debug)]
pub(crate) enum SendEvent<'a> {
    /// Telegram accepted one part of a message.
    PartSent { latency: Duration },
    /// Every part of a delivery was accepted; `end_to_end`: since the post arrived, for a
    /// delivery sent as soon as it could be (not held on purpose).
    Sent { end_to_end: Option<Duration> },
    /// 429: the bot waits `retry_after` and tries again.
    RateLimited { bot: &'a str, retry_after: Duration },
    /// 403: the subscriber blocked the bot (or left); nothing more goes to them.
    Blocked { chat: i64 },
    /// Telegram refused the message for good (400).
    Refused { error: &'a str },
    /// Network trouble, retried later.
    Retried { error: &'a str },
    /// Network trouble and no attempt left.
    GaveUp { attempts: u32, error: &'a str },
    /// A delivery of a message that was not this stage's to send (sent already, held, or
    /// claimed by another sender). Counted only here: not a delivery's outcome.
    Skipped,
}

impl SendEvent<'_> {
    pub(crate) fn emit(self, counters: &SendCounters) {
        match self {
            Self::PartSent { latency } => {
                counters.parts_sent.fetch_add(1, Ordering::Relaxed);
                metrics::histogram!(SEND_LATENCY_SECONDS).record(latency.as_secs_f64());
            }
            Self::Sent { end_to_end } => {
                counters.sent.fetch_add(1, Ordering::Relaxed);
                if let Some(took) = end_to_end {
                    metrics::histogram!(END_TO_END_LATENCY_SECONDS).record(took.as_secs_f64());
                }
                metrics::counter!(DELIVERIES_TOTAL, "outcome" => "sent").increment(1);
            }
            Self::RateLimited { bot, retry_after } => {
                counters.rate_limited.fetch_add(1, Ordering::Relaxed);
                metrics::counter!(TELEGRAM_429_TOTAL, "bot" => bot.to_owned()).increment(1);
                tracing::warn!(
                    bot,
                    retry_after = retry_after.as_secs(),
                    "Telegram answered 429"
                );
            }
            Self::Blocked { chat } => {
                counters.blocked.fetch_add(1, Ordering::Relaxed);
                metrics::counter!(DELIVERIES_TOTAL, "outcome" => "blocked").increment(1);
                tracing::info!(chat, "subscriber blocked the bot; stop sending to them");
            }
            Self::Refused { error } => {
                counters.failed.fetch_add(1, Ordering::Relaxed);
                metrics::counter!(DELIVERIES_TOTAL, "outcome" => "failed").increment(1);
                tracing::error!(error, "Telegram refused the message");
            }
            Self::Retried { error } => {
                counters.retried.fetch_add(1, Ordering::Relaxed);
                metrics::counter!(DELIVERIES_TOTAL, "outcome" => "retried").increment(1);
                tracing::warn!(error, "sending failed; will retry");
            }
            Self::GaveUp { attempts, error } => {
                counters.failed.fetch_add(1, Ordering::Relaxed);
                metrics::counter!(DELIVERIES_TOTAL, "outcome" => "failed").increment(1);
                tracing::error!(attempts, error, "sending failed; no attempt left");
            }
            Self::Skipped => {
                counters.skipped.fetch_add(1, Ordering::Relaxed);
                tracing::debug!("not ours to send now; skipped");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_outcome_counts_once_in_its_own_counter() {
        let c = SendCounters::default();
        SendEvent::Sent {
            end_to_end: Some(Duration::from_millis(40)),
        }
        .emit(&c);
        SendEvent::PartSent {
            latency: Duration::from_millis(5),
        }
        .emit(&c);
        SendEvent::RateLimited {
            bot: "web",
            retry_after: Duration::from_secs(3),
        }
        .emit(&c);
        SendEvent::Blocked { chat: 1 }.emit(&c);
        SendEvent::Refused { error: "400" }.emit(&c);
        SendEvent::GaveUp {
            attempts: 5,
            error: "timeout",
        }
        .emit(&c);
        SendEvent::Retried { error: "timeout" }.emit(&c);
        SendEvent::Skipped.emit(&c);
        let get = |a: &std::sync::atomic::AtomicU64| a.load(Ordering::Relaxed);
        assert_eq!(get(&c.sent), 1);
        assert_eq!(get(&c.parts_sent), 1);
        assert_eq!(get(&c.rate_limited), 1);
        assert_eq!(get(&c.blocked), 1);
        assert_eq!(get(&c.failed), 2, "refused and gave up are both failures");
        assert_eq!(get(&c.retried), 1);
        assert_eq!(get(&c.skipped), 1);
    }
}
