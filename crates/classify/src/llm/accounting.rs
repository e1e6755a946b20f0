//! Cost accounting: the classifier's running counters, what one round of requests cost,
//! and each post's share of the requests it took part in.

use std::sync::atomic::{AtomicU64, Ordering};

#[derive(Debug, Default)]
pub(crate) struct Counters {
    pub(crate) requests: AtomicU64,
    pub(crate) failed_requests: AtomicU64,
    pub(crate) reasks: AtomicU64,
    pub(crate) tokens_in: AtomicU64,
    pub(crate) tokens_out: AtomicU64,
    pub(crate) cached_tokens: AtomicU64,
    /// `f64` bits.
    pub(crate) cost_usd: AtomicU64,
    pub(crate) fallback_requests: AtomicU64,
    /// The share of the prompt the provider last reported cached, in millionths (estimates
    /// of a streamed post's cost before the answer's usage arrives).
    pub(crate) cached_ppm: AtomicU64,
}

pub(crate) fn bump(c: &AtomicU64, n: u64) {
    c.fetch_add(n, Ordering::Relaxed);
}

impl Counters {
    pub(crate) fn add_cost(&self, usd: f64) {
        // The closure always returns Some, so this never fails.
        let _ = self
            .cost_usd
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |bits| {
                Some((f64::from_bits(bits) + usd).to_bits())
            });
    }
}

/// What LLM requests cost: the requests of one round, or one post's share of every round it
/// took part in.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Spent {
    pub(crate) tokens_in: u64,
    pub(crate) tokens_out: u64,
    pub(crate) cost_usd: f64,
    pub(crate) requests: u32,
}

impl Spent {
    /// Adds post `j`'s share of a round of `k` posts that cost `round`: the tokens split as
    /// evenly as whole tokens allow, the cost evenly, and every request of the round counted.
    pub(crate) fn add_share(&mut self, round: &Spent, j: u64, k: u64) {
        let part = |total: u64| total / k + u64::from(j < total % k);
        self.tokens_in += part(round.tokens_in);
        self.tokens_out += part(round.tokens_out);
        self.cost_usd += round.cost_usd / k as f64;
        self.requests += round.requests;
    }
}
