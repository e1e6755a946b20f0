//! What the MTProto reader reports in `/metrics`, per account: posts read per channel, flood
//! waits, reconnects, how far behind the posts being read are, and whether each session is
//! alive. Each name is written once, here.

use std::time::Duration;

use chrono::{DateTime, Utc};
use jobwire_core::metric::MetricDef;

/// `jobwire_mtproto_posts_read_total{account, channel}`.
pub const POSTS_READ_TOTAL: &str = "jobwire_mtproto_posts_read_total";
/// `jobwire_mtproto_flood_waits_total{account}`.
pub const FLOOD_WAITS_TOTAL: &str = "jobwire_mtproto_flood_waits_total";
/// `jobwire_mtproto_flood_wait_seconds_total{account}`.
pub const FLOOD_WAIT_SECONDS_TOTAL: &str = "jobwire_mtproto_flood_wait_seconds_total";
/// `jobwire_mtproto_reconnects_total{account}`.
pub const RECONNECTS_TOTAL: &str = "jobwire_mtproto_reconnects_total";
/// `jobwire_mtproto_read_lag_seconds{account}`.
pub const READ_LAG_SECONDS: &str = "jobwire_mtproto_read_lag_seconds";
/// `jobwire_mtproto_last_post_timestamp_seconds{account, channel}`.
pub const LAST_POST_TIMESTAMP_SECONDS: &str = "jobwire_mtproto_last_post_timestamp_seconds";
/// `jobwire_mtproto_session_up{account}`.
pub const SESSION_UP: &str = "jobwire_mtproto_session_up";
/// `jobwire_mtproto_silence_alerts_total{account}`.
pub const SILENCE_ALERTS_TOTAL: &str = "jobwire_mtproto_silence_alerts_total";

/// The reader's metrics, for `/metrics`' `# HELP` lines.
pub const METRICS: &[MetricDef] = &[
    MetricDef::counter(
        POSTS_READ_TOTAL,
        &["account", "channel"],
        "Posts read from each Telegram channel (live or caught up), by the account reading it.",
    ),
    MetricDef::counter(
        FLOOD_WAITS_TOTAL,
        &["account"],
        "FLOOD_WAIT answers Telegram gave the account.",
    ),
    MetricDef::counter(
        FLOOD_WAIT_SECONDS_TOTAL,
        &["account"],
        "Seconds of flood wait Telegram imposed on the account.",
    ),
    MetricDef::counter(
        RECONNECTS_TOTAL,
        &["account"],
        "Update stream errors after which the account reconnected and caught up.",
    ),
    MetricDef::gauge(
        READ_LAG_SECONDS,
        &["account"],
        "Age of the last post the account read when it was read, in seconds: about 0 live, large while catching up.",
    ),
    MetricDef::gauge(
        LAST_POST_TIMESTAMP_SECONDS,
        &["account", "channel"],
        "When the last post read from the channel was posted, as a Unix time in seconds.",
    ),
    MetricDef::gauge(
        SESSION_UP,
        &["account"],
        "1 while the account's session can read (flood waits included), 0 once it is dead or banned.",
    ),
    MetricDef::counter(
        SILENCE_ALERTS_TOTAL,
        &["account"],
        "Channels the watchdog found silent for longer than usual.",
    ),
];

/// A post left the reader.
pub(crate) fn post_read(
    account: &str,
    channel: &str,
    posted_at: DateTime<Utc>,
    now: DateTime<Utc>,
) {
    let (account, channel) = (account.to_owned(), channel.to_owned());
    metrics::counter!(POSTS_READ_TOTAL, "account" => account.clone(), "channel" => channel.clone())
        .increment(1);
    let lag = (now - posted_at).to_std().unwrap_or_default();
    metrics::gauge!(READ_LAG_SECONDS, "account" => account.clone()).set(lag.as_secs_f64());
    metrics::gauge!(LAST_POST_TIMESTAMP_SECONDS, "account" => account, "channel" => channel)
        .set(posted_at.timestamp() as f64);
}

/// Telegram asked the account to wait.
pub(crate) fn flood_wait(account: &str, wait: Duration) {
    metrics::counter!(FLOOD_WAITS_TOTAL, "account" => account.to_owned()).increment(1);
    metrics::counter!(FLOOD_WAIT_SECONDS_TOTAL, "account" => account.to_owned())
        .increment(wait.as_secs());
}

/// The account's update stream failed; it reconnects and catches up.
pub(crate) fn reconnect(account: &str) {
    metrics::counter!(RECONNECTS_TOTAL, "account" => account.to_owned()).increment(1);
}

/// Whether the account's session can read.
pub(crate) fn session_up(account: &str, up: bool) {
    metrics::gauge!(SESSION_UP, "account" => account.to_owned()).set(if up { 1.0 } else { 0.0 });
}

/// The watchdog found a channel silent.
pub(crate) fn silence_alert(account: &str) {
    metrics::counter!(SILENCE_ALERTS_TOTAL, "account" => account.to_owned()).increment(1);
}
