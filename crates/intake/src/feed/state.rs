//! The per-feed state a poller keeps between polls, and the pure schedule built on it.
//!
//! Nothing here does IO or reads the clock: every function takes `now` (and a random number
//! generator for jitter), so the schedule, the back-off ladder and the stop rule are tested
//! without waiting.

use std::collections::{HashSet, VecDeque};
use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, Utc};
use rand::Rng;
use serde::{Deserialize, Serialize};

use super::{FeedConfig, FeedError};

/// How many item keys a feed remembers (the oldest are forgotten first). Far more than any
/// feed shows at once (Upwork: 10–50 items, LaraJobs: 10), so an item still in the feed is
/// never forgotten and re-delivered.
pub const SEEN_CAPACITY: usize = 5_000;

/// The shortest interval between two polls of one feed, whatever the configuration says.
pub const MIN_INTERVAL: Duration = Duration::from_secs(30);

/// The longest `Retry-After` honoured; longer requests are cut to this.
pub const MAX_RETRY_AFTER: Duration = Duration::from_secs(24 * 3600);

/// A bounded set of item keys that remembers insertion order and forgets the oldest.
///
/// Serialized as a JSON array of keys, oldest first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "Vec<String>", into = "Vec<String>")]
pub struct SeenSet {
    order: VecDeque<Arc<str>>,
    set: HashSet<Arc<str>>,
    capacity: usize,
}

impl Default for SeenSet {
    fn default() -> Self {
        Self::with_capacity(SEEN_CAPACITY)
    }
}

impl SeenSet {
    /// An empty set that keeps at most `capacity` keys (at least one).
    pub fn with_capacity(capacity: usize) -> Self {
        Self {
            order: VecDeque::new(),
            set: HashSet::new(),
            capacity: capacity.max(1),
        }
    }

    /// Adds `key`; returns `true` if it was not in the set. Forgets the oldest key when full.
    pub fn insert(&mut self, key: &str) -> bool {
        if self.set.contains(key) {
            return false;
        }
        let key: Arc<str> = Arc::from(key);
        self.set.insert(Arc::clone(&key));
        self.order.push_back(key);
        while self.order.len() > self.capacity {
            if let Some(old) = self.order.pop_front() {
                self.set.remove(&old);
            }
        }
        true
    }

    /// Whether `key` is in the set.
    pub fn contains(&self, key: &str) -> bool {
        self.set.contains(key)
    }

    /// How many keys are remembered.
    pub fn len(&self) -> usize {
        self.order.len()
    }

    /// Whether no key is remembered.
    pub fn is_empty(&self) -> bool {
        self.order.is_empty()
    }
}

impl From<Vec<String>> for SeenSet {
    fn from(keys: Vec<String>) -> Self {
        let mut set = SeenSet::default();
        for key in keys {
            set.insert(&key);
        }
        set
    }
}

impl From<SeenSet> for Vec<String> {
    fn from(set: SeenSet) -> Self {
        set.order.iter().map(|k| k.to_string()).collect()
    }
}

/// Everything a feed's poller remembers between polls. Serializable, so the caller can
/// persist it and a restart neither floods old items nor forgets a stop.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FeedState {
    /// The `ETag` of the last successful answer, sent back as `If-None-Match`.
    pub etag: Option<String>,
    /// The `Last-Modified` of the last successful answer, sent back as `If-Modified-Since`.
    pub last_modified: Option<String>,
    /// Keys of the items already seen (delivered, or marked as seen on the first run).
    pub seen: SeenSet,
    /// Whether a first successful poll happened (before it, existing items are only marked
    /// as seen unless the feed asks for a backfill).
    pub first_run_done: bool,
    /// Consecutive failures that escalate (403, 429, 5xx, network, timeout).
    pub failure_streak: u32,
    /// The server's last `Retry-After`, in seconds, while failing.
    pub retry_after_secs: Option<u64>,
    /// When the feed is due next; `None` before the first poll (due at once) or when stopped.
    pub next_poll_at: Option<DateTime<Utc>>,
    /// Why the feed was stopped; while set, it is not polled until [`FeedState::resume`].
    pub stopped_reason: Option<String>,
    /// The last poll's error, cleared by a successful poll.
    pub last_error: Option<String>,
    /// When the feed was last polled (successfully or not).
    pub last_poll_at: Option<DateTime<Utc>>,
    /// When the feed last answered with a feed or `304 Not Modified`.
    pub last_success_at: Option<DateTime<Utc>>,
    /// Items delivered so far (not counting those marked as seen on the first run).
    pub delivered_total: u64,
}

/// What a failed poll did to the feed's schedule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FailureAction {
    /// The feed is polled again at its normal interval (the error is not one that asks for
    /// backing off: a broken document, an HTML page, a body too large, a redirect loop…).
    Retry {
        /// The next poll.
        at: DateTime<Utc>,
    },
    /// The feed backs off along the ladder (or longer, if `Retry-After` says so).
    BackOff {
        /// The next poll.
        until: DateTime<Utc>,
    },
    /// The ladder is exhausted: the feed is stopped until an admin resumes it.
    Stopped {
        /// Why, for the admin.
        reason: String,
    },
}

/// A feed's health as the admin panel shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum FeedHealth {
    /// Not polled yet.
    Pending,
    /// The last poll succeeded.
    Healthy,
    /// The last poll failed with an error that does not back off; polled at its interval.
    Failing {
        /// The error.
        reason: String,
    },
    /// Backing off after 403/429/5xx/network errors.
    BackingOff {
        /// The last error.
        reason: String,
        /// The next attempt.
        until: Option<DateTime<Utc>>,
    },
    /// Stopped after the back-off ladder was exhausted; needs an admin.
    Stopped {
        /// Why.
        reason: String,
    },
}

/// One feed's status for logs and the admin panel.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FeedStatus {
    /// The feed's channel name (`feed:larajobs`).
    pub name: String,
    /// The feed URL's host ([`FeedConfig::host`]); never the URL, which may hold a token.
    pub host: String,
    /// Health summary.
    pub health: FeedHealth,
    /// The last error, if the last poll failed.
    pub last_error: Option<String>,
    /// Consecutive escalating failures.
    pub failure_streak: u32,
    /// Last poll.
    pub last_poll_at: Option<DateTime<Utc>>,
    /// Last successful poll.
    pub last_success_at: Option<DateTime<Utc>>,
    /// Next poll (`None`: due now, or stopped).
    pub next_poll_at: Option<DateTime<Utc>>,
    /// Items delivered so far.
    pub delivered_total: u64,
    /// Item keys remembered.
    pub seen: usize,
}

/// When to poll a feed next, given its state after the poll that just happened at `now`.
///
/// - Stopped: `None`.
/// - After escalating failures (`failure_streak` ≥ 1): `now` + the ladder step
///   (`config.backoff[streak - 1]`, e.g. 5 min then 30 min), or the server's `Retry-After`
///   when that is longer (cut to [`MAX_RETRY_AFTER`]); no jitter. A streak beyond the ladder
///   gives `None` (the caller stops the feed).
/// - Otherwise: `now` + the interval (the night interval when `now` is inside the night
///   window) + a uniformly random jitter in `0..=config.jitter`. The interval is at least
///   [`MIN_INTERVAL`], so a feed is never polled faster than configured.
pub fn next_poll_at<R: Rng + ?Sized>(
    now: DateTime<Utc>,
    config: &FeedConfig,
    state: &FeedState,
    rng: &mut R,
) -> Option<DateTime<Utc>> {
    if state.stopped_reason.is_some() {
        return None;
    }
    if state.failure_streak > 0 {
        let step = usize::try_from(state.failure_streak - 1).ok()?;
        let ladder = *config.backoff.get(step)?;
        let server = state
            .retry_after_secs
            .map(|s| Duration::from_secs(s).min(MAX_RETRY_AFTER))
            .unwrap_or_default();
        return Some(add(now, ladder.max(server)));
    }
    let interval = match &config.night {
        Some(night) if night.contains(now) => night.interval,
        _ => config.interval,
    }
    .max(MIN_INTERVAL);
    let jitter_ms = u64::try_from(config.jitter.as_millis()).unwrap_or(u64::MAX);
    let jitter = Duration::from_millis(if jitter_ms == 0 {
        0
    } else {
        rng.random_range(0..=jitter_ms)
    });
    Some(add(now, interval + jitter))
}

fn add(now: DateTime<Utc>, delay: Duration) -> DateTime<Utc> {
    chrono::Duration::from_std(delay)
        .ok()
        .and_then(|d| now.checked_add_signed(d))
        .unwrap_or(DateTime::<Utc>::MAX_UTC)
}

impl FeedState {
    /// Whether the feed should be polled at `now`: not stopped, and its next poll is due
    /// (a feed never polled is due at once).
    pub fn is_due(&self, now: DateTime<Utc>) -> bool {
        self.stopped_reason.is_none() && self.next_poll_at.is_none_or(|at| at <= now)
    }

    /// Records a successful poll (a feed or `304 Not Modified`) at `now`: clears errors and
    /// the back-off, and schedules the next poll.
    pub fn record_success<R: Rng + ?Sized>(
        &mut self,
        now: DateTime<Utc>,
        config: &FeedConfig,
        rng: &mut R,
    ) {
        self.last_poll_at = Some(now);
        self.last_success_at = Some(now);
        self.last_error = None;
        self.failure_streak = 0;
        self.retry_after_secs = None;
        self.next_poll_at = next_poll_at(now, config, self, rng);
    }

    /// Records a failed poll at `now` and schedules the next one. Escalating errors
    /// ([`FeedError::escalates`]) climb the back-off ladder; past its end the feed is
    /// stopped and `tracing::error!` asks for an admin. Other errors keep the normal
    /// interval. Every failure is logged with the feed's name, host and the reason (never
    /// its URL).
    pub fn record_failure<R: Rng + ?Sized>(
        &mut self,
        now: DateTime<Utc>,
        config: &FeedConfig,
        error: &FeedError,
        rng: &mut R,
    ) -> FailureAction {
        self.last_poll_at = Some(now);
        self.last_error = Some(error.to_string());
        if !error.escalates() {
            self.failure_streak = 0;
            self.retry_after_secs = None;
            let at = next_poll_at(now, config, self, rng).unwrap_or(now);
            self.next_poll_at = Some(at);
            tracing::warn!(feed = %config.name, host = %config.host(), reason = %error, next_poll_at = %at, "feed poll failed");
            return FailureAction::Retry { at };
        }
        self.failure_streak = self.failure_streak.saturating_add(1);
        self.retry_after_secs = error.retry_after().map(|d| d.as_secs());
        match next_poll_at(now, config, self, rng) {
            Some(until) => {
                self.next_poll_at = Some(until);
                tracing::warn!(
                    feed = %config.name,
                    host = %config.host(),
                    reason = %error,
                    failures = self.failure_streak,
                    retry_at = %until,
                    "feed poll failed; backing off"
                );
                FailureAction::BackOff { until }
            }
            None => {
                let reason = format!("{} failures in a row, last: {error}", self.failure_streak);
                self.stopped_reason = Some(reason.clone());
                self.next_poll_at = None;
                tracing::error!(
                    feed = %config.name,
                    host = %config.host(),
                    reason = %reason,
                    "feed stopped; admin action needed"
                );
                FailureAction::Stopped { reason }
            }
        }
    }

    /// Clears a stop and the back-off: the feed is due at once. Seen items, validators and
    /// counters are kept.
    pub fn resume(&mut self) {
        self.stopped_reason = None;
        self.failure_streak = 0;
        self.retry_after_secs = None;
        self.next_poll_at = None;
    }

    /// The status the admin panel shows for this feed.
    pub fn status(&self, config: &FeedConfig) -> FeedStatus {
        let health = if let Some(reason) = &self.stopped_reason {
            FeedHealth::Stopped {
                reason: reason.clone(),
            }
        } else if self.failure_streak > 0 {
            FeedHealth::BackingOff {
                reason: self.last_error.clone().unwrap_or_default(),
                until: self.next_poll_at,
            }
        } else if let Some(reason) = &self.last_error {
            FeedHealth::Failing {
                reason: reason.clone(),
            }
        } else if self.last_poll_at.is_none() {
            FeedHealth::Pending
        } else {
            FeedHealth::Healthy
        };
        FeedStatus {
            name: config.name.clone(),
            host: config.host(),
            health,
            last_error: self.last_error.clone(),
            failure_streak: self.failure_streak,
            last_poll_at: self.last_poll_at,
            last_success_at: self.last_success_at,
            next_poll_at: self.next_poll_at,
            delivered_total: self.delivered_total,
            seen: self.seen.len(),
        }
    }
}

#[cfg(test)]
mod tests {
    use chrono::{FixedOffset, NaiveTime, TimeZone};
    use rand::SeedableRng;
    use rand::rngs::StdRng;

    use super::super::NightSchedule;
    use super::*;

    fn at(h: u32, m: u32) -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 3, 10, h, m, 0)
            .single()
            .expect("valid time")
    }

    fn config() -> FeedConfig {
        let mut c = FeedConfig::new("feed:t", "http://127.0.0.1/feed");
        c.interval = Duration::from_secs(600);
        c.jitter = Duration::from_secs(120);
        c
    }

    fn hm(h: u32, m: u32) -> NaiveTime {
        NaiveTime::from_hms_opt(h, m, 0).expect("valid time")
    }

    #[test]
    fn jitter_stays_within_bounds_and_varies() {
        let config = config();
        let state = FeedState::default();
        let mut rng = StdRng::seed_from_u64(7);
        let now = at(12, 0);
        let mut delays = HashSet::new();
        for _ in 0..500 {
            let next = next_poll_at(now, &config, &state, &mut rng).expect("scheduled");
            let delay = (next - now).num_milliseconds();
            assert!((600_000..=720_000).contains(&delay), "delay {delay} ms");
            delays.insert(delay / 10_000);
        }
        // Spread over the whole jitter window, not a constant.
        assert!(delays.len() >= 10, "only {} distinct buckets", delays.len());
    }

    #[test]
    fn zero_jitter_is_exact_and_interval_has_a_floor() {
        let mut config = config();
        config.jitter = Duration::ZERO;
        let mut rng = StdRng::seed_from_u64(1);
        let now = at(12, 0);
        let state = FeedState::default();
        assert_eq!(
            next_poll_at(now, &config, &state, &mut rng),
            Some(now + chrono::Duration::minutes(10))
        );
        config.interval = Duration::from_secs(1);
        assert_eq!(
            next_poll_at(now, &config, &state, &mut rng),
            Some(now + chrono::Duration::seconds(30))
        );
    }

    #[test]
    fn night_interval_applies_inside_a_window_that_wraps_midnight() {
        let mut config = config();
        config.jitter = Duration::ZERO;
        config.night = Some(NightSchedule {
            start: hm(23, 0),
            end: hm(7, 0),
            interval: Duration::from_secs(3600),
            utc_offset: FixedOffset::east_opt(0).expect("offset"),
        });
        let state = FeedState::default();
        let mut rng = StdRng::seed_from_u64(1);
        let delay = |now: DateTime<Utc>, rng: &mut StdRng| {
            (next_poll_at(now, &config, &state, rng).expect("scheduled") - now).num_minutes()
        };
        assert_eq!(delay(at(22, 59), &mut rng), 10);
        assert_eq!(delay(at(23, 0), &mut rng), 60);
        assert_eq!(delay(at(3, 30), &mut rng), 60);
        assert_eq!(delay(at(6, 59), &mut rng), 60);
        assert_eq!(delay(at(7, 0), &mut rng), 10);
        assert_eq!(delay(at(12, 0), &mut rng), 10);
    }

    #[test]
    fn night_window_follows_the_configured_offset() {
        let mut config = config();
        config.jitter = Duration::ZERO;
        // 01:00–06:00 in UTC+3 is 22:00–03:00 UTC.
        config.night = Some(NightSchedule {
            start: hm(1, 0),
            end: hm(6, 0),
            interval: Duration::from_secs(1800),
            utc_offset: FixedOffset::east_opt(3 * 3600).expect("offset"),
        });
        let state = FeedState::default();
        let mut rng = StdRng::seed_from_u64(1);
        let mut next = |now: DateTime<Utc>| {
            (next_poll_at(now, &config, &state, &mut rng).expect("scheduled") - now).num_minutes()
        };
        assert_eq!(next(at(21, 59)), 10);
        assert_eq!(next(at(22, 30)), 30);
        assert_eq!(next(at(2, 59)), 30);
        assert_eq!(next(at(3, 30)), 10);
    }

    #[test]
    fn escalating_failures_climb_the_ladder_then_stop() {
        let config = config();
        let mut state = FeedState::default();
        let mut rng = StdRng::seed_from_u64(3);
        let forbidden = FeedError::Status {
            status: 403,
            retry_after: None,
        };
        let now = at(12, 0);
        assert_eq!(
            state.record_failure(now, &config, &forbidden, &mut rng),
            FailureAction::BackOff {
                until: now + chrono::Duration::minutes(5)
            }
        );
        assert!(!state.is_due(now + chrono::Duration::minutes(4)));
        assert!(state.is_due(now + chrono::Duration::minutes(5)));
        let now = now + chrono::Duration::minutes(5);
        assert_eq!(
            state.record_failure(now, &config, &forbidden, &mut rng),
            FailureAction::BackOff {
                until: now + chrono::Duration::minutes(30)
            }
        );
        let now = now + chrono::Duration::minutes(30);
        let action = state.record_failure(now, &config, &forbidden, &mut rng);
        let FailureAction::Stopped { reason } = action else {
            panic!("expected a stop, got {action:?}");
        };
        assert!(reason.contains("HTTP 403"), "{reason}");
        assert!(!state.is_due(now + chrono::Duration::days(30)));
        assert!(matches!(
            state.status(&config).health,
            FeedHealth::Stopped { .. }
        ));
        state.resume();
        assert!(state.is_due(now));
        assert_eq!(state.failure_streak, 0);
    }

    #[test]
    fn retry_after_is_honoured_only_when_longer_than_the_ladder() {
        let config = config();
        let mut rng = StdRng::seed_from_u64(3);
        let now = at(12, 0);
        // A short retry-after, a long one, and an absurd one (capped at a day).
        for (retry_after, backoff) in [
            (60, chrono::Duration::minutes(5)),
            (2 * 3600, chrono::Duration::hours(2)),
            (400 * 24 * 3600, chrono::Duration::hours(24)),
        ] {
            let mut state = FeedState::default();
            let error = FeedError::Status {
                status: 429,
                retry_after: Some(Duration::from_secs(retry_after)),
            };
            assert_eq!(
                state.record_failure(now, &config, &error, &mut rng),
                FailureAction::BackOff {
                    until: now + backoff
                },
                "retry-after {retry_after} s"
            );
        }
    }

    #[test]
    fn content_errors_keep_the_interval_and_success_clears_the_streak() {
        let mut config = config();
        config.jitter = Duration::ZERO;
        let mut rng = StdRng::seed_from_u64(3);
        let now = at(12, 0);
        let mut state = FeedState::default();
        state.record_failure(
            now,
            &config,
            &FeedError::NotAFeed("HTML page".into()),
            &mut rng,
        );
        assert_eq!(
            state.next_poll_at,
            Some(now + chrono::Duration::minutes(10))
        );
        assert!(matches!(
            state.status(&config).health,
            FeedHealth::Failing { ref reason } if reason == "not a feed: HTML page"
        ));
        state.record_failure(now, &config, &FeedError::Network("reset".into()), &mut rng);
        assert_eq!(state.failure_streak, 1);
        state.record_success(now, &config, &mut rng);
        assert_eq!(state.failure_streak, 0);
        assert_eq!(state.last_error, None);
        assert_eq!(state.status(&config).health, FeedHealth::Healthy);
    }

    #[test]
    fn seen_set_forgets_the_oldest_and_round_trips_through_json() {
        let mut seen = SeenSet::with_capacity(3);
        assert!(seen.insert("a"));
        assert!(!seen.insert("a"));
        seen.insert("b");
        seen.insert("c");
        seen.insert("d");
        assert!(!seen.contains("a"));
        assert!(seen.contains("b") && seen.contains("d"));
        assert_eq!(seen.len(), 3);

        let mut state = FeedState::default();
        for i in 0..(SEEN_CAPACITY + 10) {
            state.seen.insert(&format!("k{i}"));
        }
        state.etag = Some("\"v1\"".into());
        state.first_run_done = true;
        let json = serde_json::to_string(&state).expect("serialize");
        let back: FeedState = serde_json::from_str(&json).expect("deserialize");
        assert_eq!(back, state);
        assert_eq!(back.seen.len(), SEEN_CAPACITY);
        assert!(!back.seen.contains("k9") && back.seen.contains("k10"));
    }
}
