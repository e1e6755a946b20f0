//! The shared state of a fake LLM ([`LlmState`]): the oracle, the fault plan and its RNG,
//! latency, counters and the request log.

use std::{
    collections::VecDeque,
    sync::{
        Arc, Mutex, MutexGuard,
        atomic::{AtomicU64, Ordering},
    },
    time::Duration,
};

use rand::{SeedableRng, rngs::StdRng};
use tokio_util::sync::CancellationToken;

use super::{
    faults::{Fault, FaultPlan, Faults},
    oracle::Oracle,
    types::{FakeLlmConfig, FakeLlmStats, MAX_RECORDS, RequestRecord},
};

#[derive(Debug, Default)]
pub(super) struct Counters {
    pub(super) requests: AtomicU64,
    pub(super) ok: AtomicU64,
    pub(super) bad_request: AtomicU64,
    pub(super) status_429: AtomicU64,
    pub(super) status_500: AtomicU64,
    pub(super) timeouts: AtomicU64,
    pub(super) malformed: AtomicU64,
    pub(super) off_schema: AtomicU64,
    pub(super) unknown_category: AtomicU64,
    pub(super) refusals: AtomicU64,
    pub(super) truncated: AtomicU64,
    pub(super) unparsed: AtomicU64,
    pub(super) posts: AtomicU64,
    pub(super) oracle_hits: AtomicU64,
    pub(super) oracle_misses: AtomicU64,
    pub(super) prompt_tokens: AtomicU64,
    pub(super) completion_tokens: AtomicU64,
    pub(super) answered_requests: AtomicU64,
    pub(super) max_posts_per_request: AtomicU64,
    pub(super) dropped_items: AtomicU64,
    pub(super) bad_items: AtomicU64,
    pub(super) insufficient_quota: AtomicU64,
    pub(super) model_not_found: AtomicU64,
    pub(super) cached_tokens: AtomicU64,
    pub(super) streamed_requests: AtomicU64,
    pub(super) cut_streams: AtomicU64,
}

impl Counters {
    fn all(&self) -> [&AtomicU64; 26] {
        [
            &self.requests,
            &self.ok,
            &self.bad_request,
            &self.status_429,
            &self.status_500,
            &self.timeouts,
            &self.malformed,
            &self.off_schema,
            &self.unknown_category,
            &self.refusals,
            &self.truncated,
            &self.unparsed,
            &self.posts,
            &self.oracle_hits,
            &self.oracle_misses,
            &self.prompt_tokens,
            &self.completion_tokens,
            &self.answered_requests,
            &self.max_posts_per_request,
            &self.dropped_items,
            &self.bad_items,
            &self.insufficient_quota,
            &self.model_not_found,
            &self.cached_tokens,
            &self.streamed_requests,
            &self.cut_streams,
        ]
    }
}

pub(super) fn add(c: &AtomicU64, n: u64) {
    c.fetch_add(n, Ordering::Relaxed);
}

pub(super) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

#[derive(Debug)]
pub(super) struct Inner {
    pub(super) oracle: Oracle,
    pub(super) faults: Mutex<Faults>,
    pub(super) latency_us: AtomicU64,
    pub(super) ttft_us: AtomicU64,
    pub(super) tokens_per_sec: AtomicU64,
    /// Recent prompts (when seen, text): the provider's prompt cache.
    pub(super) prompts: Mutex<VecDeque<(std::time::Instant, String)>>,
    pub(super) stats: Counters,
    pub(super) seq: AtomicU64,
    pub(super) log: Mutex<VecDeque<RequestRecord>>,
    pub(super) cancel: CancellationToken,
}

/// Shared state of a fake LLM: cheap to clone, used by [`router`](super::router) and by [`FakeLlm`](super::FakeLlm)
/// (which dereferences to it).
#[derive(Debug, Clone)]
pub struct LlmState {
    pub(super) inner: Arc<Inner>,
}

impl LlmState {
    /// Creates a fresh state.
    pub fn new(config: FakeLlmConfig) -> Self {
        LlmState {
            inner: Arc::new(Inner {
                oracle: Oracle::new(config.oracle, config.extractions),
                faults: Mutex::new(Faults {
                    plan: config.faults,
                    rng: StdRng::seed_from_u64(config.seed),
                }),
                latency_us: AtomicU64::new(duration_us(config.latency)),
                ttft_us: AtomicU64::new(duration_us(config.ttft)),
                tokens_per_sec: AtomicU64::new(u64::from(config.tokens_per_sec)),
                prompts: Mutex::new(VecDeque::new()),
                stats: Counters::default(),
                seq: AtomicU64::new(0),
                log: Mutex::new(VecDeque::new()),
                cancel: CancellationToken::new(),
            }),
        }
    }

    /// Counters since start or the last [`Self::reset_stats`].
    pub fn stats(&self) -> FakeLlmStats {
        let s = &self.inner.stats;
        let g = |c: &AtomicU64| c.load(Ordering::Relaxed);
        FakeLlmStats {
            requests: g(&s.requests),
            ok: g(&s.ok),
            bad_request: g(&s.bad_request),
            status_429: g(&s.status_429),
            status_500: g(&s.status_500),
            timeouts: g(&s.timeouts),
            malformed: g(&s.malformed),
            off_schema: g(&s.off_schema),
            unknown_category: g(&s.unknown_category),
            refusals: g(&s.refusals),
            truncated: g(&s.truncated),
            unparsed: g(&s.unparsed),
            posts: g(&s.posts),
            oracle_hits: g(&s.oracle_hits),
            oracle_misses: g(&s.oracle_misses),
            prompt_tokens: g(&s.prompt_tokens),
            completion_tokens: g(&s.completion_tokens),
            answered_requests: g(&s.answered_requests),
            max_posts_per_request: g(&s.max_posts_per_request),
            dropped_items: g(&s.dropped_items),
            bad_items: g(&s.bad_items),
            insufficient_quota: g(&s.insufficient_quota),
            model_not_found: g(&s.model_not_found),
            cached_tokens: g(&s.cached_tokens),
            streamed_requests: g(&s.streamed_requests),
            cut_streams: g(&s.cut_streams),
        }
    }

    /// Zeroes the counters and clears the request log.
    pub fn reset_stats(&self) {
        for c in self.inner.stats.all() {
            c.store(0, Ordering::Relaxed);
        }
        lock(&self.inner.log).clear();
    }

    /// The requests with parsed posts since start or the last [`Self::reset_stats`] (at most
    /// [`MAX_RECORDS`], oldest first), whatever they were answered.
    pub fn requests_log(&self) -> Vec<RequestRecord> {
        lock(&self.inner.log).iter().cloned().collect()
    }

    pub(super) fn record(&self, r: RequestRecord) {
        let mut log = lock(&self.inner.log);
        if log.len() >= MAX_RECORDS {
            log.pop_front();
        }
        log.push_back(r);
    }

    /// Replaces the fault plan (the RNG keeps its sequence).
    pub fn set_faults(&self, plan: FaultPlan) {
        lock(&self.inner.faults).plan = plan;
    }

    /// Appends faults to the script of the current plan.
    pub fn push_faults(&self, faults: impl IntoIterator<Item = Fault>) {
        lock(&self.inner.faults).plan.script.extend(faults);
    }

    /// Replaces the delay before each answer.
    pub fn set_latency(&self, latency: Duration) {
        self.inner
            .latency_us
            .store(duration_us(latency), Ordering::Relaxed);
    }

    /// Replaces the model's speed: time to the first token and output tokens per second.
    pub fn set_speed(&self, ttft: Duration, tokens_per_sec: u32) {
        self.inner
            .ttft_us
            .store(duration_us(ttft), Ordering::Relaxed);
        self.inner
            .tokens_per_sec
            .store(u64::from(tokens_per_sec), Ordering::Relaxed);
    }

    pub(super) fn ttft(&self) -> Duration {
        Duration::from_micros(self.inner.ttft_us.load(Ordering::Relaxed))
    }

    /// How long generating `tokens` output tokens takes.
    pub(super) fn generation(&self, tokens: u64) -> Duration {
        match self.inner.tokens_per_sec.load(Ordering::Relaxed) {
            0 => Duration::ZERO,
            tps => Duration::from_secs_f64(tokens as f64 / tps as f64),
        }
    }

    /// The cached part of a prompt of `tokens` tokens, as OpenAI reports it: the longest
    /// prefix shared with a prompt seen in the last [`super::types::CACHE_TTL`], if at least
    /// [`super::types::CACHE_MIN_TOKENS`], rounded down to a step of [`super::types::CACHE_STEP_TOKENS`].
    /// Remembers this prompt.
    pub(super) fn cached_tokens(&self, prompt: &str, tokens: u64) -> u64 {
        let now = std::time::Instant::now();
        let mut prompts = lock(&self.inner.prompts);
        while prompts
            .front()
            .is_some_and(|(at, _)| now.duration_since(*at) > super::types::CACHE_TTL)
        {
            prompts.pop_front();
        }
        let shared = prompts
            .iter()
            .map(|(_, p)| common_prefix_chars(p, prompt))
            .max()
            .unwrap_or(0);
        if prompts.len() >= 64 {
            prompts.pop_front();
        }
        prompts.push_back((now, prompt.to_owned()));
        let shared = (u64::try_from(shared).unwrap_or(u64::MAX) / 4).min(tokens);
        if shared < super::types::CACHE_MIN_TOKENS {
            return 0;
        }
        super::types::CACHE_MIN_TOKENS
            + (shared - super::types::CACHE_MIN_TOKENS) / super::types::CACHE_STEP_TOKENS
                * super::types::CACHE_STEP_TOKENS
    }

    /// Releases held (timeout) requests; used by [`FakeLlm::shutdown`](super::FakeLlm::shutdown).
    pub fn close(&self) {
        self.inner.cancel.cancel();
    }
}

fn duration_us(d: Duration) -> u64 {
    u64::try_from(d.as_micros()).unwrap_or(u64::MAX)
}

/// Characters two texts share at their start.
fn common_prefix_chars(a: &str, b: &str) -> usize {
    a.chars().zip(b.chars()).take_while(|(x, y)| x == y).count()
}
