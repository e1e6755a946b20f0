//! Trailing sliding-window counters for Telegram's sending limits.

use std::{
    collections::VecDeque,
    time::{Duration, Instant},
};

/// Timestamps of the accepted messages inside one trailing window.
#[derive(Debug, Default)]
pub struct Window {
    times: VecDeque<Instant>,
}

impl Window {
    /// When accepting one more message now would put more than `limit` messages in the
    /// trailing `span`, returns the whole seconds (at least 1) until a slot frees.
    pub fn check(&mut self, now: Instant, limit: u32, span: Duration) -> Option<u64> {
        while let Some(&front) = self.times.front() {
            if now.duration_since(front) >= span {
                self.times.pop_front();
            } else {
                break;
            }
        }
        let limit = limit as usize;
        if self.times.len() < limit {
            return None;
        }
        if limit == 0 {
            return Some(span.as_secs().max(1));
        }
        // Accepting needs len - limit + 1 timestamps to leave the window.
        let idx = self.times.len() - limit;
        let frees_at = self.times[idx] + span;
        let wait = frees_at.saturating_duration_since(now);
        let secs = wait.as_secs() + u64::from(wait.subsec_nanos() > 0);
        Some(secs.max(1))
    }

    /// Records an accepted message; keeps at most `keep` timestamps.
    pub fn record(&mut self, now: Instant, keep: u32) {
        self.times.push_back(now);
        while self.times.len() > (keep as usize).max(1) {
            self.times.pop_front();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn window_counts_and_retry_after() {
        let mut w = Window::default();
        let t0 = Instant::now();
        let span = Duration::from_secs(60);
        for i in 0..20 {
            assert_eq!(w.check(t0 + Duration::from_secs(i), 20, span), None);
            w.record(t0 + Duration::from_secs(i), 20);
        }
        // The 21st within the minute: the first slot frees at t0+60s.
        assert_eq!(
            w.check(t0 + Duration::from_millis(30_500), 20, span),
            Some(30)
        );
        assert_eq!(w.check(t0 + Duration::from_secs(60), 20, span), None);
        let mut one = Window::default();
        one.record(t0, 1);
        assert_eq!(
            one.check(t0 + Duration::from_millis(100), 1, Duration::from_secs(1)),
            Some(1)
        );
        assert_eq!(
            one.check(t0 + Duration::from_secs(1), 1, Duration::from_secs(1)),
            None
        );
    }
}
