//! Retrying what a source must not lose — taking a feed's items or a Telegram post or edit
//! in, saving a feed's state — while it fails (a database outage), so it is taken in once the
//! database is back instead of being dropped with a failed task.

use std::fmt::Display;
use std::future::Future;
use std::time::Duration;

use backon::{BackoffBuilder, ExponentialBuilder};

/// The waits between attempts: `first`, doubling up to `max`, each with random jitter of up
/// to as much again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// The wait after the first failure.
    pub first: Duration,
    /// The longest wait.
    pub max: Duration,
}

impl Default for RetryPolicy {
    /// 250 ms doubling to 30 s.
    fn default() -> Self {
        Self {
            first: Duration::from_millis(250),
            max: Duration::from_secs(30),
        }
    }
}

/// Runs `op` until it succeeds and returns its value, waiting along `policy` after each
/// failure and logging it as a warning with the source's name (a feed, a channel), what was
/// being done (`what`) and the error (which must not hold secrets; a store error does not).
///
/// Returns `None` once `stop` has resolved (shutdown) while waiting for the next attempt:
/// an attempt already running is let finish, none is started after `stop`.
pub async fn retry_until_stopped<T, E, F, Fut>(
    source: &str,
    what: &str,
    policy: RetryPolicy,
    stop: impl Future<Output = ()>,
    mut op: F,
) -> Option<T>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, E>>,
    E: Display,
{
    let mut waits = ExponentialBuilder::new()
        .with_min_delay(policy.first)
        .with_max_delay(policy.max)
        .with_jitter()
        .without_max_times()
        .build();
    tokio::pin!(stop);
    let mut failures = 0u64;
    loop {
        let error = match op().await {
            Ok(value) => {
                if failures > 0 {
                    tracing::info!(source, what, failures, "succeeded after retrying");
                }
                return Some(value);
            }
            Err(error) => error,
        };
        failures += 1;
        let wait = waits.next().unwrap_or(policy.max);
        tracing::warn!(
            source,
            what,
            error = %error,
            failures,
            retry_in_ms = u64::try_from(wait.as_millis()).unwrap_or(u64::MAX),
            "failed; retrying"
        );
        tokio::select! {
            () = &mut stop => {
                tracing::info!(source, what, failures, "shutting down; not retried");
                return None;
            }
            () = tokio::time::sleep(wait) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicU32, Ordering};

    use super::*;

    fn fast() -> RetryPolicy {
        RetryPolicy {
            first: Duration::from_millis(1),
            max: Duration::from_millis(5),
        }
    }

    #[tokio::test]
    async fn failures_are_retried_until_the_operation_succeeds() {
        let calls = AtomicU32::new(0);
        let value = retry_until_stopped("feed:t", "test", fast(), std::future::pending(), || {
            let n = calls.fetch_add(1, Ordering::SeqCst);
            async move { if n < 5 { Err("database down") } else { Ok(n) } }
        })
        .await;
        assert_eq!(value, Some(5));
        assert_eq!(calls.load(Ordering::SeqCst), 6);
    }

    #[tokio::test]
    async fn stop_ends_the_retries_and_starts_no_new_attempt() {
        let calls = AtomicU32::new(0);
        let policy = RetryPolicy {
            first: Duration::from_secs(3600),
            max: Duration::from_secs(3600),
        };
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let stop = async move {
            let _ = rx.await;
        };
        let retrying = retry_until_stopped("feed:t", "test", policy, stop, || {
            calls.fetch_add(1, Ordering::SeqCst);
            async { Err::<(), _>("database down") }
        });
        tokio::pin!(retrying);
        // The first attempt fails and the retry waits an hour…
        assert!(
            tokio::time::timeout(Duration::from_millis(50), &mut retrying)
                .await
                .is_err()
        );
        // …until shutdown.
        let _ = tx.send(());
        let ended = tokio::time::timeout(Duration::from_secs(5), retrying).await;
        assert_eq!(ended, Ok(None));
        assert_eq!(calls.load(Ordering::SeqCst), 1);
    }
}
