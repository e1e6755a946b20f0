//! Waiting in tests for something that happens in the background: [`eventually`] polls a
//! check until it holds, and fails the test with a clear message when it never does.

use std::fmt::Display;
use std::future::Future;
use std::time::Duration;

use tokio::time::Instant;

/// The first pause between two checks; it doubles up to [`LONGEST_PAUSE`].
const FIRST_PAUSE: Duration = Duration::from_millis(2);

/// The longest pause between two checks.
const LONGEST_PAUSE: Duration = Duration::from_millis(50);

/// What a check of [`eventually`] returns: whether its condition holds, what it then yields,
/// and, when it does not hold yet, optionally what was seen instead (shown if time runs out).
///
/// * `bool` — holds when `true`, yields `()`.
/// * `Option<T>` — holds when `Some(value)`, yields `value`.
/// * `Result<T, E>` — holds when `Ok(value)`, yields `value`; an `Err` describes what was
///   seen, and the last one is part of the failure message.
pub trait Holds {
    /// What [`eventually`] returns once the condition holds.
    type Value;

    /// `Ok` once the condition holds; otherwise what was seen, if the check says.
    fn holds(self) -> Result<Self::Value, Option<String>>;
}

impl Holds for bool {
    type Value = ();

    fn holds(self) -> Result<(), Option<String>> {
        if self { Ok(()) } else { Err(None) }
    }
}

impl<T> Holds for Option<T> {
    type Value = T;

    fn holds(self) -> Result<T, Option<String>> {
        self.ok_or(None)
    }
}

impl<T, E: Display> Holds for Result<T, E> {
    type Value = T;

    fn holds(self) -> Result<T, Option<String>> {
        self.map_err(|seen| Some(seen.to_string()))
    }
}

/// Runs `check` until its condition holds (see [`Holds`]) and returns what it yields.
///
/// Checks at once, then after a pause of a few milliseconds that grows to 50 ms, and a last
/// time when `timeout` is over. Panics, naming `what` and the timeout (and what the last
/// check saw, if it said), when the condition still does not hold then. A check may also
/// panic itself, to fail at once on something that must never happen while waiting.
///
/// ```no_run
/// # async fn demo(queue: std::sync::Mutex<Vec<u32>>) {
/// use std::time::Duration;
/// use jobwire_testkit::wait::eventually;
///
/// let first = eventually("a message in the queue", Duration::from_secs(10), || async {
///     queue.lock().unwrap().first().copied()
/// })
/// .await;
/// # }
/// ```
pub async fn eventually<R, F, Fut>(what: &str, timeout: Duration, mut check: F) -> R::Value
where
    R: Holds,
    F: FnMut() -> Fut,
    Fut: Future<Output = R>,
{
    let start = Instant::now();
    let mut pauses = {
        use backon::BackoffBuilder;
        backon::ExponentialBuilder::new()
            .with_min_delay(FIRST_PAUSE)
            .with_max_delay(LONGEST_PAUSE)
            .without_max_times()
            .build()
    };
    loop {
        let seen = match check().await.holds() {
            Ok(value) => return value,
            Err(seen) => seen,
        };
        let elapsed = start.elapsed();
        if elapsed >= timeout {
            let seen = seen
                .map(|s| format!("; last seen: {s}"))
                .unwrap_or_default();
            panic!("timed out after {timeout:?} waiting for {what}{seen}");
        }
        let pause = pauses.next().unwrap_or(LONGEST_PAUSE);
        tokio::time::sleep(pause.min(timeout - elapsed)).await;
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicU32, Ordering};

    use super::*;

    #[tokio::test]
    async fn returns_what_the_check_yields_once_it_holds() {
        let calls = AtomicU32::new(0);
        let got = eventually("the third call", Duration::from_secs(5), || async {
            let n = calls.fetch_add(1, Ordering::SeqCst) + 1;
            (n == 3).then_some(n * 10)
        })
        .await;
        assert_eq!(got, 30);
        assert_eq!(calls.load(Ordering::SeqCst), 3, "no check after it held");
    }

    #[tokio::test]
    async fn a_bool_check_and_a_result_check_work_too() {
        let calls = AtomicU32::new(0);
        eventually("a true", Duration::from_secs(5), || async {
            calls.fetch_add(1, Ordering::SeqCst) >= 1
        })
        .await;
        let got = eventually("an Ok", Duration::from_secs(5), || async {
            match calls.fetch_add(1, Ordering::SeqCst) {
                n if n >= 4 => Ok(n),
                n => Err(format!("call {n}")),
            }
        })
        .await;
        assert_eq!(got, 4);
    }

    #[tokio::test]
    #[should_panic(expected = "timed out after 30ms waiting for the impossible")]
    async fn a_check_that_never_holds_fails_naming_what_and_the_timeout() {
        eventually("the impossible", Duration::from_millis(30), || async {
            false
        })
        .await;
    }

    #[tokio::test]
    #[should_panic(expected = "waiting for a count of 5; last seen: count 2")]
    async fn the_failure_shows_what_was_seen_last() {
        eventually("a count of 5", Duration::from_millis(30), || async {
            Err::<(), _>("count 2")
        })
        .await;
    }

    #[tokio::test]
    async fn the_pause_grows_so_a_long_wait_checks_a_bounded_number_of_times() {
        let calls = AtomicU32::new(0);
        let started = Instant::now();
        eventually("300 ms to pass", Duration::from_secs(5), || async {
            calls.fetch_add(1, Ordering::SeqCst);
            started.elapsed() >= Duration::from_millis(300)
        })
        .await;
        let calls = calls.load(Ordering::SeqCst);
        // 2+4+8+16+32 ms, then every 50 ms: about 11 checks for 300 ms, never hundreds (a
        // loaded machine sleeps longer, so fewer).
        assert!((2..=20).contains(&calls), "{calls} checks");
    }
}
