//! The `[llm]` section (an OpenAI-compatible endpoint, and `[llm.fallback]`) and the
//! [`LlmSettings`] it resolves to.

use std::time::Duration;

use serde::Deserialize;

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LlmSection {
    /// e.g. `https://api.openai.com/v1` or `http://127.0.0.1:8080/v1`.
    pub base_url: url::Url,
    pub model: String,
    /// The environment variable holding the API key (none needed for local servers).
    #[serde(default = "default_llm_api_key_env")]
    pub api_key_env: String,
    /// One request's timeout. A full batch of 30 answers is about 3,000 completion tokens:
    /// 20-40 s on common hosted models, so the default leaves room (120).
    #[serde(default = "default_llm_timeout_secs")]
    pub timeout_secs: u32,
    #[serde(default = "default_llm_max_retries")]
    pub max_retries: u32,
    /// US dollars per million prompt tokens (for the cost accounting and the spend limit).
    #[serde(default)]
    pub price_in_per_mtok: f64,
    /// US dollars per million completion tokens.
    #[serde(default)]
    pub price_out_per_mtok: f64,
    /// Past this many dollars of LLM spend in a UTC day, only the local classifier runs
    /// (and the admin is told). No limit when unset.
    pub daily_spend_limit_usd: Option<f64>,
    /// Posts per LLM request (1-50). Each answer is tied to its post by id; posts an answer
    /// lacked are asked again with the next request.
    #[serde(default = "default_llm_batch_size")]
    pub batch_size: usize,
    /// How long the oldest unsure post waits for others to fill a request while other
    /// requests are in flight (0-60000 ms).
    #[serde(default = "default_llm_batch_linger_ms")]
    pub batch_linger_ms: u64,
    /// When no request is in flight, a partial request goes once no unsure post came in for
    /// this long (0-60000 ms; short: a quiet service answers at once, a burst is gathered).
    #[serde(default = "default_llm_idle_linger_ms")]
    pub idle_linger_ms: u64,
    /// LLM requests in flight at once (1-64).
    #[serde(default = "default_llm_max_in_flight")]
    pub max_in_flight: usize,
    /// The most completion tokens one request may ask for (some models allow 4,096 only).
    #[serde(default = "default_llm_max_output_tokens")]
    pub max_output_tokens: u32,
    /// People's labeled examples most like the posts, put into each request.
    #[serde(default = "default_llm_few_shot")]
    pub few_shot: usize,
    /// A second model (on the same or another endpoint) used when the first fails or is
    /// out of quota.
    pub fallback: Option<LlmFallbackSection>,
}

impl LlmSection {
    /// An endpoint and model with every other key at its default.
    pub fn new(base_url: url::Url, model: &str) -> Self {
        Self {
            base_url,
            model: model.to_owned(),
            api_key_env: default_llm_api_key_env(),
            timeout_secs: 120,
            max_retries: 3,
            price_in_per_mtok: 0.0,
            price_out_per_mtok: 0.0,
            daily_spend_limit_usd: None,
            batch_size: 30,
            batch_linger_ms: 1000,
            idle_linger_ms: 20,
            max_in_flight: 8,
            max_output_tokens: 16_384,
            few_shot: 3,
            fallback: None,
        }
    }
}

/// The fallback model of `[llm.fallback]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LlmFallbackSection {
    /// Default: the primary's `base_url`.
    pub base_url: Option<url::Url>,
    pub model: String,
    /// Default: the primary's `api_key_env`.
    pub api_key_env: Option<String>,
    #[serde(default)]
    pub price_in_per_mtok: f64,
    #[serde(default)]
    pub price_out_per_mtok: f64,
}

/// An LLM endpoint after validation. The key is a secret: `Debug` hides it.
#[derive(Clone)]
pub struct LlmSettings {
    pub base_url: url::Url,
    pub model: String,
    pub api_key: Option<jobwire_core::secret::Secret>,
    pub timeout: Duration,
    pub max_retries: u32,
    pub price_in_per_mtok: f64,
    pub price_out_per_mtok: f64,
    pub daily_spend_limit_usd: Option<f64>,
    pub batch_size: usize,
    pub batch_linger: Duration,
    pub idle_linger: Duration,
    pub max_in_flight: usize,
    pub max_output_tokens: u32,
    pub few_shot: usize,
    pub fallback: Option<LlmFallbackSettings>,
}

/// The fallback model after validation.
#[derive(Clone)]
pub struct LlmFallbackSettings {
    pub base_url: url::Url,
    pub model: String,
    pub api_key: Option<jobwire_core::secret::Secret>,
    pub price_in_per_mtok: f64,
    pub price_out_per_mtok: f64,
}

impl std::fmt::Debug for LlmFallbackSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LlmFallbackSettings")
            .field("base_url", &self.base_url.as_str())
            .field("model", &self.model)
            .field("api_key", &self.api_key.as_ref().map(|_| "<redacted>"))
            .finish()
    }
}

impl std::fmt::Debug for LlmSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LlmSettings")
            .field("base_url", &self.base_url.as_str())
            .field("model", &self.model)
            .field("api_key", &self.api_key.as_ref().map(|_| "<redacted>"))
            .field("batch_size", &self.batch_size)
            .field("batch_linger", &self.batch_linger)
            .field("idle_linger", &self.idle_linger)
            .field("max_in_flight", &self.max_in_flight)
            .finish_non_exhaustive()
    }
}

// Defaults of the optional keys, one function per key: serde names them per field.
fn default_llm_api_key_env() -> String {
    "JOBWIRE_LLM_API_KEY".to_owned()
}

fn default_llm_timeout_secs() -> u32 {
    120
}

fn default_llm_batch_size() -> usize {
    30
}

fn default_llm_max_in_flight() -> usize {
    8
}

fn default_llm_few_shot() -> usize {
    3
}

fn default_llm_max_retries() -> u32 {
    3
}

fn default_llm_batch_linger_ms() -> u64 {
    1000
}

fn default_llm_idle_linger_ms() -> u64 {
    20
}

fn default_llm_max_output_tokens() -> u32 {
    16_384
}
