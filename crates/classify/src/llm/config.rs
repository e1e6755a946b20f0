//! Configuration of the LLM classifier: the primary endpoint's settings, the optional
//! fallback [`LlmEndpoint`], and the pool, retry and prompt limits.

use std::fmt;
use std::time::Duration;

use jobwire_core::CategorySlug;
use jobwire_core::secret::Secret;

/// Posts per request by default.
pub const DEFAULT_BATCH: usize = 30;

/// The most posts one request carries, whatever is configured.
pub const MAX_BATCH: usize = 50;

/// How many times the posts missing from an answer are asked again.
pub const MAX_REASKS: u32 = 2;

/// An OpenAI-compatible endpoint and what it costs.
#[derive(Clone)]
pub struct LlmEndpoint {
    /// Base URL, e.g. `https://api.openai.com/v1` (requests go to
    /// `{base_url}/chat/completions`).
    pub base_url: String,
    /// Model name sent with each request.
    pub model: String,
    /// API key (a secret: never logged; `Debug` shows `***`). `None` sends no key.
    pub api_key: Option<Secret>,
    /// US dollars per million prompt tokens.
    pub price_in_per_mtok: f64,
    /// US dollars per million completion tokens.
    pub price_out_per_mtok: f64,
    /// US dollars per million prompt tokens the provider served from its prompt cache
    /// (`usage.prompt_tokens_details.cached_tokens`); `None`: the input price.
    pub price_cached_in_per_mtok: Option<f64>,
}

impl LlmEndpoint {
    /// An endpoint without a key, free of charge.
    pub fn new(base_url: impl Into<String>, model: impl Into<String>) -> Self {
        Self {
            base_url: base_url.into(),
            model: model.into(),
            api_key: None,
            price_in_per_mtok: 0.0,
            price_out_per_mtok: 0.0,
            price_cached_in_per_mtok: None,
        }
    }

    /// What a request cost: `tokens_in` prompt tokens of which `cached` came from the
    /// provider's cache, and `tokens_out` completion tokens.
    pub(super) fn cost(&self, tokens_in: u64, cached: u64, tokens_out: u64) -> f64 {
        let price = |p: f64| if p.is_finite() { p.max(0.0) } else { 0.0 };
        let cached = cached.min(tokens_in);
        let cached_price = self
            .price_cached_in_per_mtok
            .map_or(price(self.price_in_per_mtok), price);
        ((tokens_in - cached) as f64 * price(self.price_in_per_mtok)
            + cached as f64 * cached_price
            + tokens_out as f64 * price(self.price_out_per_mtok))
            / 1_000_000.0
    }
}

impl fmt::Debug for LlmEndpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LlmEndpoint")
            .field("base_url", &self.base_url)
            .field("model", &self.model)
            .field("api_key", &self.api_key.as_ref().map(|_| "***"))
            .field("price_in_per_mtok", &self.price_in_per_mtok)
            .field("price_out_per_mtok", &self.price_out_per_mtok)
            .field("price_cached_in_per_mtok", &self.price_cached_in_per_mtok)
            .finish()
    }
}

/// Configuration of an [`LlmClassifier`](super::LlmClassifier).
#[derive(Clone)]
pub struct LlmConfig {
    /// Base URL of the primary OpenAI-compatible API, e.g. `https://api.openai.com/v1` or
    /// `http://127.0.0.1:8080/v1` (requests go to `{base_url}/chat/completions`).
    pub base_url: String,
    /// Primary model name.
    pub model: String,
    /// Primary API key (a secret: never logged; `Debug` shows `***`). `None` sends no key.
    pub api_key: Option<Secret>,
    /// Primary price: US dollars per million prompt tokens (default 0).
    pub price_in_per_mtok: f64,
    /// Primary price: US dollars per million completion tokens (default 0).
    pub price_out_per_mtok: f64,
    /// Primary price of cached prompt tokens; `None`: the input price.
    pub price_cached_in_per_mtok: Option<f64>,
    /// Asked when the primary fails after its retries, or at once when it is out of quota
    /// (or answers 402/403/404).
    pub fallback: Option<LlmEndpoint>,
    /// How long the primary is skipped after it answered out of quota (or 402/403/404).
    pub quota_cooldown: Duration,
    /// Timeout of one HTTP request (connect, send and read the whole answer).
    pub timeout: Duration,
    /// Retries after the first attempt for transient failures (per endpoint).
    pub max_retries: u32,
    /// Categories the model may answer, with descriptions shown to it.
    pub categories: Vec<(CategorySlug, String)>,
    /// First backoff delay (doubled per retry, with jitter).
    pub min_backoff: Duration,
    /// Largest backoff delay; also caps a server's `Retry-After`.
    pub max_backoff: Duration,
    /// Confidence reported when the model's answer has none (or a non-number).
    pub assumed_confidence: f32,
    /// Post texts are cut to this many characters before they are sent.
    pub max_post_chars: usize,
    /// Posts per request (clamped to `1..=`[`MAX_BATCH`](MAX_BATCH)).
    pub batch_size: usize,
    /// While requests are in flight, how long the oldest post in the pool waits for others
    /// before a request is sent with what there is (the posts go sooner when no request is
    /// in flight any more, or `quick_batch` of them wait).
    pub batch_linger: Duration,
    /// When no request is in flight, a partial batch goes once no post came in for this long
    /// (default 0: a post goes at once when the LLM is idle).
    pub idle_linger: Duration,
    /// Requests in flight at once; while all are busy, posts keep gathering in the pool.
    pub max_in_flight: usize,
    /// A request goes as soon as this many posts wait and a request may start, without
    /// waiting out the lingers (default 2): two posts share one copy of the system prompt,
    /// and the second does not wait for a third.
    pub quick_batch: usize,
    /// The most completion tokens a request may ask for (the per-request budget is 300 plus
    /// 200 per post, capped by this; some models accept no more than 4,096).
    pub max_output_tokens: u32,
    /// How many few-shot examples (the most similar to the request's posts) go into a request.
    pub few_shot: usize,
    /// Answers below this confidence are not kept as training examples
    /// ([`Classifier::learn_min_confidence`](crate::Classifier::learn_min_confidence)).
    /// Default [`DEFAULT_LEARN_MIN_CONFIDENCE`](crate::DEFAULT_LEARN_MIN_CONFIDENCE) (0.8).
    pub learn_min_confidence: f32,
    /// Ask with `stream: true` and hand each post's verdict on as soon as its item is
    /// complete in the stream (default true).
    pub stream: bool,
    /// Ask the model for a one-sentence `reason` per post (default false: output tokens
    /// are what a subscriber waits for, and nobody reads the reasons in production).
    pub reasons: bool,
}

impl LlmConfig {
    /// A configuration with defaults: 120 s timeout (a full batch's answer takes a while), 4 retries, backoff 0.5–20 s, confidence
    /// 0.9 when missing, posts cut at 8000 characters, up to 30 posts a request, a post sent at
    /// once when no request is in flight and gathered for at most 250 ms while requests are
    /// (a request carries a long system prompt: two posts in one cost far less than two
    /// alone), a backlog spread over 8 requests in
    /// flight, at most 16,384 completion tokens, 3 few-shot examples, answers learned from
    /// confidence 0.8,
    /// no fallback, 10 min quota cool-down, prices 0 (the primary starts as a new
    /// [`LlmEndpoint`]).
    pub fn new(
        base_url: impl Into<String>,
        model: impl Into<String>,
        categories: Vec<(CategorySlug, String)>,
    ) -> Self {
        let LlmEndpoint {
            base_url,
            model,
            api_key,
            price_in_per_mtok,
            price_out_per_mtok,
            price_cached_in_per_mtok,
        } = LlmEndpoint::new(base_url, model);
        Self {
            base_url,
            model,
            api_key,
            price_in_per_mtok,
            price_out_per_mtok,
            price_cached_in_per_mtok,
            fallback: None,
            quota_cooldown: Duration::from_secs(600),
            timeout: Duration::from_secs(120),
            max_retries: 4,
            categories,
            min_backoff: Duration::from_millis(500),
            max_backoff: Duration::from_secs(20),
            assumed_confidence: 0.9,
            max_post_chars: 8000,
            batch_size: DEFAULT_BATCH,
            batch_linger: Duration::from_millis(250),
            idle_linger: Duration::ZERO,
            max_in_flight: 8,
            quick_batch: 2,
            max_output_tokens: 16_384,
            few_shot: 3,
            learn_min_confidence: crate::DEFAULT_LEARN_MIN_CONFIDENCE,
            stream: true,
            reasons: false,
        }
    }

    /// The primary endpoint.
    pub fn primary(&self) -> LlmEndpoint {
        LlmEndpoint {
            base_url: self.base_url.clone(),
            model: self.model.clone(),
            api_key: self.api_key.clone(),
            price_in_per_mtok: self.price_in_per_mtok,
            price_out_per_mtok: self.price_out_per_mtok,
            price_cached_in_per_mtok: self.price_cached_in_per_mtok,
        }
    }
}

impl fmt::Debug for LlmConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LlmConfig")
            .field("primary", &self.primary())
            .field("fallback", &self.fallback)
            .field("quota_cooldown", &self.quota_cooldown)
            .field("timeout", &self.timeout)
            .field("max_retries", &self.max_retries)
            .field("categories", &self.categories)
            .field("min_backoff", &self.min_backoff)
            .field("max_backoff", &self.max_backoff)
            .field("assumed_confidence", &self.assumed_confidence)
            .field("max_post_chars", &self.max_post_chars)
            .field("batch_size", &self.batch_size)
            .field("batch_linger", &self.batch_linger)
            .field("idle_linger", &self.idle_linger)
            .field("max_in_flight", &self.max_in_flight)
            .field("quick_batch", &self.quick_batch)
            .field("max_output_tokens", &self.max_output_tokens)
            .field("few_shot", &self.few_shot)
            .field("learn_min_confidence", &self.learn_min_confidence)
            .field("stream", &self.stream)
            .field("reasons", &self.reasons)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cached_prompt_tokens_cost_the_cached_price() {
        // gpt-4o-mini-like prices: $0.15 input, $0.075 cached input, $0.60 output.
        let mut ep = LlmEndpoint::new("http://x/v1", "m");
        ep.price_in_per_mtok = 0.15;
        ep.price_out_per_mtok = 0.60;
        let uncached = ep.cost(2000, 0, 500);
        assert!((uncached - (2000.0 * 0.15 + 500.0 * 0.60) / 1e6).abs() < 1e-12);
        // Without a cached price, cached tokens cost the input price.
        assert!((ep.cost(2000, 1024, 500) - uncached).abs() < 1e-12);
        ep.price_cached_in_per_mtok = Some(0.075);
        let cached = ep.cost(2000, 1024, 500);
        assert!((cached - (976.0 * 0.15 + 1024.0 * 0.075 + 500.0 * 0.60) / 1e6).abs() < 1e-12);
        assert!(cached < uncached);
        // A provider reporting more cached tokens than prompt tokens is not trusted.
        assert!((ep.cost(100, 5000, 0) - 100.0 * 0.075 / 1e6).abs() < 1e-12);
    }
}
