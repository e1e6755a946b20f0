//! The LLM classifier: any OpenAI-compatible chat-completions endpoint (plus an optional
//! fallback endpoint), several posts per request, strict JSON-schema output, retries with
//! backoff, and validation of every answered item.
//!
//! # Protocol (`classify.v2`)
//!
//! * System message: `prompts/classify.v2.md` with the configured categories and the curated
//!   examples that use only configured categories ([`system_prompt`]). It is built once and
//!   is byte-identical in every request, so providers' prompt caching applies to it.
//! * User message: first the [few-shot examples](FewShot) people labeled that are most
//!   similar to this request's posts (one JSON object a line), then the posts as one line of
//!   JSON `{"posts":[{"id":"p1","text":"..."}]}`. Ids are short ids (`p1`, `p2`, …, see
//!   [the pool](#the-pool)), never database ids. Texts are cut to [`LlmConfig::max_post_chars`] characters and are
//!   serialized by `serde_json`, so a post is escaped data and can never break out of its
//!   string; the prompt says that post texts are untrusted data.
//! * `response_format`: `json_schema`, strict ([`response_schema`]):
//!   `{"items":[{"id","is_job","kind","categories","confidence","reason","extraction":{...}}]}`.
//!
//! # Validation, one item at a time
//!
//! JSON in code fences or after prose, and a bare array of items, are accepted (models
//! without strict structured output answer so); an answer cut short (out of tokens) keeps
//! its complete items and the rest are asked again. Content with no usable JSON or no
//! `items` array is a failed attempt (retried with backoff). Otherwise every item is checked on its own: an unknown id is ignored, for a
//! duplicate id the first item wins, `kind` must be `job`/`resume`/`ad`/`chatter` and agree
//! with `is_job`, categories outside the configured set are dropped (never fatal), and the
//! extraction (jobs only) is cleaned field by field: the title is one line of at most
//! `MAX_TITLE_CHARS` characters; at most `MAX_SKILLS` distinct skills; a budget needs a
//! finite positive `min`, a currency of 3–4 letters (uppercased) and a basis
//! `fixed`/`hourly`/`monthly`, else it is dropped, and its `max` is kept only when finite and
//! not below `min`; a contact must look like `@handle`, a link or an email, else it is
//! dropped. A bad extraction field never invalidates the classification.
//! A **job none of whose categories is configured** is re-asked once; if it comes back the
//! same way (or there is no re-ask left), it is accepted as a job with no category — the
//! model did say it is a job, and dropping or guessing would both be worse.
//!
//! Posts whose item is missing or invalid are **re-asked**: they go back to the front of the
//! pool (same short ids) and ride along with the next request, at most [`MAX_REASKS`] times.
//! A post still unanswered after that gets [`ClassifyError::Unavailable`]: it stays waiting
//! and is classified later — never lost, never guessed.
//!
//! # The pool
//!
//! Every caller's posts (the classify stage runs several batches at once, the cascade sends
//! only its unsure posts) gather in one pool. A request is sent as soon as
//! [`LlmConfig::batch_size`] posts wait; otherwise, when no request is in flight, as soon as
//! no post came in for [`LlmConfig::idle_linger`] (20 ms), and in any case when the oldest
//! waiting post has waited [`LlmConfig::batch_linger`] (1 s). At most [`LlmConfig::max_in_flight`]
//! requests are in flight, and while they all are, posts keep gathering. So a quiet service
//! sends a lone post at once, and under load (a burst, a backlog, an imported history)
//! requests are full. Short ids (`p1`, `p2`, …) are unique over the classifier's
//! life, never database ids.
//!
//! # Failures and fallback
//!
//! 429 (honouring `Retry-After`, capped by [`LlmConfig::max_backoff`]), 5xx, 408, timeouts,
//! connection errors and malformed content are retried with exponential backoff and jitter up
//! to [`LlmConfig::max_retries`] times. Other 4xx answers are not retried. When the primary
//! endpoint still fails, the [fallback](LlmConfig::fallback) (if any) is asked; it is asked at
//! once when the primary answers 429 `insufficient_quota`, 402, 403 or 404 (model not found),
//! and then the primary is skipped for [`LlmConfig::quota_cooldown`]. Without a fallback, an
//! out-of-quota primary gives [`ClassifyError::Unavailable`] with `retry_after` = the rest of
//! the cool-down, and 402/403/404 give [`ClassifyError::Rejected`].
//!
//! # Accounting
//!
//! Tokens come from the response's `usage`; a provider that sends none is estimated at one
//! token per 4 characters (prompt: system + user message; completion: the content). Every
//! attempt is counted, including ones whose content was unusable (they are billed too). A
//! request's tokens and cost are shared out evenly among the posts it carried (re-asks
//! included); cost uses the prices of the endpoint that was called. [`LlmClassifier::stats`]
//! has running totals.

mod answer;
mod fewshot;
mod prompt;
mod transport;

use jobwire_core::secret::Secret;
use std::collections::{HashSet, VecDeque};
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError, RwLock};
use std::time::{Duration, Instant};

use async_openai::Client;
use async_openai::config::OpenAIConfig;
use async_openai::types::chat::{
    ChatCompletionRequestMessage, ChatCompletionRequestSystemMessage,
    ChatCompletionRequestUserMessage, CreateChatCompletionRequest, CreateChatCompletionRequestArgs,
    ResponseFormat, ResponseFormatJsonSchema,
};
use async_trait::async_trait;
use backon::{BackoffBuilder, ExponentialBuilder};
use jobwire_core::{CategorySlug, PostKind};
use serde::Serialize;
use serde_json::Value;
use tokio::sync::{Notify, Semaphore, oneshot};

use crate::{Classified, Classifier, ClassifyError, ClassifyInput};
use answer::{ItemCheck, check_item, item_id, parse_items};
use fewshot::Example;
pub use fewshot::{FewShot, MAX_EXAMPLES, MIN_SIMILARITY};
pub use prompt::{PROMPT_TEMPLATE, PROMPT_VERSION, response_schema, system_prompt};
use transport::{AttemptError, PlainTransport, Switch, classify_openai_error};

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
        }
    }

    fn cost(&self, tokens_in: u64, tokens_out: u64) -> f64 {
        let price = |p: f64| if p.is_finite() { p.max(0.0) } else { 0.0 };
        (tokens_in as f64 * price(self.price_in_per_mtok)
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
            .finish()
    }
}

/// Configuration of an [`LlmClassifier`].
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
    /// Posts per request (clamped to `1..=`[`MAX_BATCH`]).
    pub batch_size: usize,
    /// How long the oldest post in the pool waits for a batch to fill while other requests
    /// are in flight, before a request is sent with what there is.
    pub batch_linger: Duration,
    /// When no request is in flight, a partial batch goes once no post came in for this long
    /// (kept short: a quiet service answers at once, a burst is still gathered).
    pub idle_linger: Duration,
    /// Requests in flight at once; while all are busy, posts keep gathering in the pool.
    pub max_in_flight: usize,
    /// The most completion tokens a request may ask for (the per-request budget is 300 plus
    /// 200 per post, capped by this; some models accept no more than 4,096).
    pub max_output_tokens: u32,
    /// How many few-shot examples (the most similar to the request's posts) go into a request.
    pub few_shot: usize,
}

impl LlmConfig {
    /// A configuration with defaults: 120 s timeout (a full batch's answer takes a while), 4 retries, backoff 0.5–20 s, confidence
    /// 0.9 when missing, posts cut at 8000 characters, 30 posts a request gathered for at
    /// most 20 ms when the LLM is idle and 1 s while requests are in flight, 8 requests in
    /// flight, at most 16,384 completion tokens, 3 few-shot examples,
    /// no fallback, 10 min quota cool-down, prices 0.
    pub fn new(
        base_url: impl Into<String>,
        model: impl Into<String>,
        categories: Vec<(CategorySlug, String)>,
    ) -> Self {
        Self {
            base_url: base_url.into(),
            model: model.into(),
            api_key: None,
            price_in_per_mtok: 0.0,
            price_out_per_mtok: 0.0,
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
            batch_linger: Duration::from_secs(1),
            idle_linger: Duration::from_millis(20),
            max_in_flight: 8,
            max_output_tokens: 16_384,
            few_shot: 3,
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
            .field("max_output_tokens", &self.max_output_tokens)
            .field("few_shot", &self.few_shot)
            .finish()
    }
}

/// Running totals of an [`LlmClassifier`] (since it was built).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct LlmStats {
    /// HTTP requests sent (every attempt, both endpoints).
    pub requests: u64,
    /// Requests that failed (HTTP error, timeout, unusable content).
    pub failed_requests: u64,
    /// Answers that lacked posts (missing or invalid items) whose posts were asked again.
    pub reasks: u64,
    /// Prompt tokens billed.
    pub tokens_in: u64,
    /// Completion tokens billed.
    pub tokens_out: u64,
    /// US dollars spent.
    pub cost_usd: f64,
    /// Requests sent to the fallback endpoint (included in `requests`).
    pub fallback_requests: u64,
}

#[derive(Debug, Default)]
struct Counters {
    requests: AtomicU64,
    failed_requests: AtomicU64,
    reasks: AtomicU64,
    tokens_in: AtomicU64,
    tokens_out: AtomicU64,
    /// `f64` bits.
    cost_usd: AtomicU64,
    fallback_requests: AtomicU64,
}

fn bump(c: &AtomicU64, n: u64) {
    c.fetch_add(n, Ordering::Relaxed);
}

impl Counters {
    fn add_cost(&self, usd: f64) {
        // The closure always returns Some, so this never fails.
        let _ = self
            .cost_usd
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |bits| {
                Some((f64::from_bits(bits) + usd).to_bits())
            });
    }
}

/// One endpoint and its HTTP client.
struct Endpoint {
    cfg: LlmEndpoint,
    client: Client<OpenAIConfig>,
    is_fallback: bool,
}

impl Endpoint {
    fn new(cfg: LlmEndpoint, timeout: Duration, is_fallback: bool) -> Result<Self, ClassifyError> {
        let http = reqwest013::Client::builder()
            .timeout(timeout)
            .connect_timeout(timeout.min(Duration::from_secs(10)))
            .build()
            .map_err(|e| ClassifyError::Invalid(format!("cannot build HTTP client: {e}")))?;
        let openai = OpenAIConfig::new()
            .with_api_base(cfg.base_url.trim_end_matches('/'))
            .with_api_key(cfg.api_key.as_ref().map_or("", Secret::expose));
        let client =
            Client::build(http.clone(), openai).with_http_service(PlainTransport { client: http });
        Ok(Self {
            cfg,
            client,
            is_fallback,
        })
    }
}

/// What the requests of one round cost.
#[derive(Debug, Default, Clone, Copy)]
struct Spent {
    tokens_in: u64,
    tokens_out: u64,
    cost_usd: f64,
    requests: u32,
}

/// A usable answer: its items and the model that gave it.
struct Reply {
    items: Vec<Value>,
    model: String,
}

/// One post's share of everything it took part in.
#[derive(Debug, Default, Clone, Copy)]
struct Share {
    tokens_in: u64,
    tokens_out: u64,
    cost_usd: f64,
    requests: u32,
}

/// Classifies posts with an LLM.
///
/// Posts from every caller gather in one pool; a request is sent when [`LlmConfig::batch_size`]
/// posts wait, or (no request in flight) when no post came in for [`LlmConfig::idle_linger`],
/// or when the oldest waited [`LlmConfig::batch_linger`], with at most
/// [`LlmConfig::max_in_flight`] requests at once. Posts an answer lacked go back to the front
/// of the pool and ride along with the next request (at most [`MAX_REASKS`] times), so a
/// re-ask rarely costs a request of its own.
pub struct LlmClassifier {
    inner: Arc<Inner>,
}

struct Inner {
    config: LlmConfig,
    primary: Endpoint,
    fallback: Option<Endpoint>,
    system_prompt: String,
    schema: Value,
    slugs: Vec<CategorySlug>,
    name: String,
    examples: RwLock<Arc<Vec<Example>>>,
    /// Until when the primary is skipped, and why.
    cooldown: Mutex<Option<(Instant, Switch)>>,
    counters: Counters,
    pool: Mutex<Pool>,
    /// Tells the flusher that the pool changed.
    wake: Notify,
    /// One permit per request in flight.
    slots: Arc<Semaphore>,
    /// Short ids (`p1`, `p2`, …) are unique over the classifier's life, so a re-asked post
    /// keeps its id next to new posts.
    next_id: AtomicU64,
}

/// Posts waiting for a request, oldest first (re-asked posts at the front).
#[derive(Default)]
struct Pool {
    queue: VecDeque<Waiting>,
    /// Whether a flusher task is running.
    flushing: bool,
    /// When posts last came in.
    last_arrival: Option<tokio::time::Instant>,
}

/// A post in the pool.
struct Waiting {
    /// The short id the model sees.
    id: String,
    /// The caller's id (for logs only).
    post: String,
    text: String,
    /// Trigrams for picking few-shot examples (empty when none are used).
    grams: Vec<u64>,
    started: Instant,
    queued_at: tokio::time::Instant,
    /// How many times it was asked again.
    reasks: u32,
    /// A job without any configured category was answered once already.
    struck: bool,
    /// Why the last answer did not settle it.
    problem: String,
    share: Share,
    tx: oneshot::Sender<Result<Classified, ClassifyError>>,
}

/// The longest a post may wait in the pool, whatever is configured.
const MAX_LINGER: Duration = Duration::from_secs(3600);

/// Resets the pool when a flusher ends abnormally.
struct FlushGuard {
    inner: Arc<Inner>,
    armed: bool,
}

impl FlushGuard {
    /// The flusher ended normally (it cleared `flushing` itself, under the lock).
    fn disarm(mut self) {
        self.armed = false;
    }
}

impl Drop for FlushGuard {
    fn drop(&mut self) {
        if self.armed {
            let mut pool = self.inner.lock_pool();
            pool.flushing = false;
            // Dropping the senders tells every waiting caller (as `Unavailable`).
            pool.queue.clear();
        }
    }
}

impl fmt::Debug for LlmClassifier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LlmClassifier")
            .field("config", &self.inner.config)
            .finish_non_exhaustive()
    }
}

impl LlmClassifier {
    /// Builds the HTTP clients. Installs rustls' `ring` crypto provider when the process has
    /// none yet (reqwest would panic without one).
    pub fn new(config: LlmConfig) -> Result<Self, ClassifyError> {
        if config.categories.is_empty() {
            return Err(ClassifyError::Invalid("no categories configured".into()));
        }
        if rustls::crypto::CryptoProvider::get_default().is_none() {
            // Err means another thread installed one meanwhile: fine either way.
            let _ = rustls::crypto::ring::default_provider().install_default();
        }
        let primary = Endpoint::new(config.primary(), config.timeout, false)?;
        let fallback = config
            .fallback
            .clone()
            .map(|f| Endpoint::new(f, config.timeout, true))
            .transpose()?;
        let slugs: Vec<CategorySlug> = config.categories.iter().map(|(s, _)| s.clone()).collect();
        Ok(Self {
            inner: Arc::new(Inner {
                system_prompt: system_prompt(&config.categories),
                schema: response_schema(&slugs),
                name: format!("llm:{}", config.model),
                slugs,
                primary,
                fallback,
                examples: RwLock::new(Arc::new(Vec::new())),
                cooldown: Mutex::new(None),
                counters: Counters::default(),
                pool: Mutex::new(Pool::default()),
                wake: Notify::new(),
                slots: Arc::new(Semaphore::new(config.max_in_flight.max(1))),
                next_id: AtomicU64::new(0),
                config,
            }),
        })
    }

    /// The system prompt sent with every request (identical in all of them).
    pub fn system_prompt(&self) -> &str {
        &self.inner.system_prompt
    }

    /// Replaces the examples people labeled (at most [`MAX_EXAMPLES`], the first ones).
    /// Categories that are not configured are dropped, `is_job` and `kind` made consistent
    /// (`is_job` wins), empty texts skipped. Takes effect for the next request.
    pub fn set_examples(&self, examples: Vec<FewShot>) {
        let slugs = &self.inner.slugs;
        let kept: Vec<Example> = examples
            .into_iter()
            .filter(|e| !e.text.trim().is_empty())
            .take(MAX_EXAMPLES)
            .map(|mut e| {
                if e.is_job {
                    e.kind = PostKind::Job;
                    let mut cats: Vec<CategorySlug> = Vec::new();
                    for c in e.categories.drain(..) {
                        if slugs.contains(&c) && !cats.contains(&c) {
                            cats.push(c);
                        }
                    }
                    e.categories = cats;
                } else {
                    if e.kind == PostKind::Job {
                        e.kind = PostKind::Chatter;
                    }
                    e.categories.clear();
                }
                Example::new(e)
            })
            .collect();
        *self
            .inner
            .examples
            .write()
            .unwrap_or_else(PoisonError::into_inner) = Arc::new(kept);
    }

    /// The few-shot examples a request with these post texts would carry, best first.
    pub fn pick_examples(&self, texts: &[&str]) -> Vec<FewShot> {
        let examples = self.inner.current_examples();
        let grams: Vec<Vec<u64>> = texts.iter().map(|t| fewshot::trigrams(t)).collect();
        fewshot::pick(&examples, &grams, self.inner.config.few_shot)
            .into_iter()
            .cloned()
            .collect()
    }

    /// Running totals since the classifier was built.
    pub fn stats(&self) -> LlmStats {
        let c = &self.inner.counters;
        let g = |a: &AtomicU64| a.load(Ordering::Relaxed);
        LlmStats {
            requests: g(&c.requests),
            failed_requests: g(&c.failed_requests),
            reasks: g(&c.reasks),
            tokens_in: g(&c.tokens_in),
            tokens_out: g(&c.tokens_out),
            cost_usd: f64::from_bits(g(&c.cost_usd)),
            fallback_requests: g(&c.fallback_requests),
        }
    }
}

impl Inner {
    fn current_examples(&self) -> Arc<Vec<Example>> {
        self.examples
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    fn batch_size(&self) -> usize {
        self.config.batch_size.clamp(1, MAX_BATCH)
    }

    fn lock_pool(&self) -> std::sync::MutexGuard<'_, Pool> {
        self.pool.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Puts posts into the pool (re-asked ones at the front) and makes sure a flusher runs.
    fn enqueue(self: &Arc<Self>, items: Vec<Waiting>, front: bool) {
        if items.is_empty() {
            return;
        }
        let start = {
            let mut pool = self.lock_pool();
            if front {
                for item in items.into_iter().rev() {
                    pool.queue.push_front(item);
                }
            } else {
                pool.queue.extend(items);
            }
            pool.last_arrival = Some(tokio::time::Instant::now());
            !std::mem::replace(&mut pool.flushing, true)
        };
        self.wake.notify_one();
        if start {
            tokio::spawn(self.clone().flush());
        }
    }

    /// Sends requests while posts wait: a full batch at once; a partial one when no other
    /// request is in flight and no post came in for `idle_linger` (a quiet service answers
    /// at once, a burst is gathered), or when its oldest post waited `batch_linger` (under
    /// load, posts gather while the LLM is busy anyway). Ends when the pool is empty.
    async fn flush(self: Arc<Self>) {
        // Should this task end any other way than through its returns below (a panic, a
        // runtime shutting down), the guard lets the next caller start a new flusher and
        // fails the waiting posts (they stay queued in the store and are retried).
        let guard = FlushGuard {
            inner: self.clone(),
            armed: true,
        };
        let size = self.batch_size();
        // Capped so that adding it to an instant cannot overflow.
        let linger = self.config.batch_linger.min(MAX_LINGER);
        let idle_linger = self.config.idle_linger.min(linger);
        let max_in_flight = self.config.max_in_flight.max(1);
        loop {
            let Ok(permit) = self.slots.clone().acquire_owned().await else {
                self.lock_pool().flushing = false;
                guard.disarm();
                return;
            };
            let batch = loop {
                let until = {
                    let mut pool = self.lock_pool();
                    // Posts whose caller gave up are not worth a request.
                    pool.queue.retain(|w| !w.tx.is_closed());
                    let Some(oldest) = pool.queue.iter().map(|w| w.queued_at).min() else {
                        pool.flushing = false;
                        drop(pool);
                        guard.disarm();
                        return;
                    };
                    // This flusher holds one permit; the others are requests in flight.
                    let busy = max_in_flight - self.slots.available_permits() > 1;
                    let quiet_at = pool.last_arrival.unwrap_or(oldest) + idle_linger;
                    let until = if busy {
                        oldest + linger
                    } else {
                        (oldest + linger).min(quiet_at)
                    };
                    if pool.queue.len() >= size || tokio::time::Instant::now() >= until {
                        let n = pool.queue.len().min(size);
                        break pool.queue.drain(..n).collect::<Vec<_>>();
                    }
                    until
                };
                tokio::select! {
                    () = self.wake.notified() => {}
                    () = tokio::time::sleep_until(until) => {}
                }
            };
            let this = self.clone();
            tokio::spawn(async move {
                this.send(batch).await;
                drop(permit);
                // One request fewer in flight: a waiting partial batch may go now.
                this.wake.notify_one();
            });
        }
    }

    /// One request for `batch`; settled posts are answered, the ones the answer lacked go
    /// back to the pool (or fail once they were re-asked [`MAX_REASKS`] times).
    async fn send(self: &Arc<Self>, mut batch: Vec<Waiting>) {
        let examples = self.current_examples();
        let shots = if self.config.few_shot > 0 && !examples.is_empty() {
            let g: Vec<Vec<u64>> = batch.iter().map(|w| w.grams.clone()).collect();
            fewshot::pick(&examples, &g, self.config.few_shot)
        } else {
            Vec::new()
        };
        let asked: Vec<(&str, &str)> = batch
            .iter()
            .map(|w| (w.id.as_str(), w.text.as_str()))
            .collect();
        let user = prompt::user_message(&shots, &asked, self.config.max_post_chars);
        let (outcome, spent) = self.ask(&user, batch.len()).await;

        let k = batch.len() as u64;
        for (j, w) in batch.iter_mut().enumerate() {
            let j = j as u64;
            let part = |total: u64| total / k + u64::from(j < total % k);
            let s = &mut w.share;
            s.tokens_in += part(spent.tokens_in);
            s.tokens_out += part(spent.tokens_out);
            s.cost_usd += spent.cost_usd / k as f64;
            s.requests += spent.requests;
        }

        let reply = match outcome {
            Ok(reply) => reply,
            Err(e) => {
                for w in batch {
                    let _ = w.tx.send(Err(copy_error(&e)));
                }
                return;
            }
        };
        let mut answers: Vec<Option<Classified>> = batch.iter().map(|_| None).collect();
        let mut seen: HashSet<usize> = HashSet::new();
        for item in &reply.items {
            let Some(id) = item_id(item) else {
                tracing::warn!("LLM answered an item without an id; ignored");
                continue;
            };
            let Some(i) = batch.iter().position(|w| w.id == id) else {
                tracing::warn!(id = %id.chars().take(20).collect::<String>(), "LLM answered an id that was not asked; ignored");
                continue;
            };
            if !seen.insert(i) {
                tracing::warn!(id, "LLM answered a post twice; the first answer is kept");
                continue;
            }
            let w = &mut batch[i];
            let checked = match check_item(item, &self.slugs, self.config.assumed_confidence) {
                ItemCheck::Valid(c) => c,
                ItemCheck::JobWithoutCategory(c) if w.struck || w.reasks >= MAX_REASKS => c,
                ItemCheck::JobWithoutCategory(_) => {
                    w.struck = true;
                    w.problem = "a job without any configured category".into();
                    continue;
                }
                ItemCheck::Invalid(why) => {
                    tracing::warn!(id, problem = %why, "LLM answered an invalid item");
                    w.problem = why;
                    continue;
                }
            };
            tracing::debug!(post = %w.post, reason = %checked.reason, "LLM verdict");
            let s = w.share;
            answers[i] = Some(Classified {
                verdict: checked.verdict,
                model: reply.model.clone(),
                prompt_version: PROMPT_VERSION.to_owned(),
                tokens_in: u32::try_from(s.tokens_in).unwrap_or(u32::MAX),
                tokens_out: u32::try_from(s.tokens_out).unwrap_or(u32::MAX),
                latency_ms: u32::try_from(w.started.elapsed().as_millis()).unwrap_or(u32::MAX),
                extraction: checked.extraction,
                cost_usd: s.cost_usd,
            });
        }

        let mut again = Vec::new();
        for (i, (mut w, answer)) in batch.into_iter().zip(answers).enumerate() {
            if let Some(c) = answer {
                let _ = w.tx.send(Ok(c));
                continue;
            }
            if !seen.contains(&i) {
                w.problem = "missing from the answer".into();
            }
            if w.reasks < MAX_REASKS {
                w.reasks += 1;
                w.queued_at = tokio::time::Instant::now();
                again.push(w);
            } else {
                let error = ClassifyError::Unavailable {
                    attempts: w.share.requests,
                    last_error: format!(
                        "no valid answer for this post after {MAX_REASKS} re-asks (last: {})",
                        w.problem
                    ),
                    retry_after: None,
                };
                let _ = w.tx.send(Err(error));
            }
        }
        if !again.is_empty() {
            bump(&self.counters.reasks, 1);
            let ids: Vec<&str> = again.iter().map(|w| w.id.as_str()).collect();
            tracing::info!(ids = ?ids, "re-asking the LLM for posts its answer lacked");
            self.enqueue(again, true);
        }
    }

    /// One round: the primary (unless cooling down), then the fallback.
    async fn ask(&self, user: &str, n: usize) -> (Result<Reply, ClassifyError>, Spent) {
        let mut spent = Spent::default();
        let cooling = {
            let mut guard = self.cooldown.lock().unwrap_or_else(PoisonError::into_inner);
            match guard.as_ref() {
                Some((until, why)) if *until > Instant::now() => {
                    Some((until.saturating_duration_since(Instant::now()), why.clone()))
                }
                Some(_) => {
                    *guard = None;
                    None
                }
                None => None,
            }
        };
        let primary_error = match cooling {
            Some((left, why)) => {
                tracing::debug!(model = %self.primary.cfg.model, ?left, "primary LLM cooling down; skipped");
                why.into_error(0, left)
            }
            None => match self.call(&self.primary, user, n, &mut spent).await {
                Ok(reply) => return (Ok(reply), spent),
                Err(AttemptError::Switch(why)) => {
                    let cooldown = self.config.quota_cooldown;
                    tracing::warn!(
                        model = %self.primary.cfg.model, status = why.status, ?cooldown,
                        "primary LLM cannot serve (quota, payment or model); skipped for the cool-down"
                    );
                    *self.cooldown.lock().unwrap_or_else(PoisonError::into_inner) =
                        Some((Instant::now() + cooldown, why.clone()));
                    why.into_error(spent.requests, cooldown)
                }
                Err(e) => attempt_into_error(e, spent.requests),
            },
        };
        let Some(fallback) = &self.fallback else {
            return (Err(primary_error), spent);
        };
        tracing::warn!(error = %primary_error, fallback = %fallback.cfg.model, "asking the fallback LLM");
        let before = spent.requests;
        match self.call(fallback, user, n, &mut spent).await {
            Ok(reply) => (Ok(reply), spent),
            Err(e) => {
                let fallback_error = match e {
                    AttemptError::Switch(why) => {
                        why.into_error(spent.requests - before, self.config.quota_cooldown)
                    }
                    other => attempt_into_error(other, spent.requests - before),
                };
                let error = if fallback_error.is_retryable() || !primary_error.is_retryable() {
                    fallback_error
                } else {
                    primary_error
                };
                (Err(error), spent)
            }
        }
    }

    /// One endpoint, with retries for transient failures.
    async fn call(
        &self,
        ep: &Endpoint,
        user: &str,
        n: usize,
        spent: &mut Spent,
    ) -> Result<Reply, AttemptError> {
        let request = self
            .request(&ep.cfg.model, user, n)
            .map_err(AttemptError::Permanent)?;
        let mut delays = ExponentialBuilder::default()
            .with_min_delay(self.config.min_backoff)
            .with_max_delay(self.config.max_backoff)
            .with_max_times(self.config.max_retries as usize)
            .with_jitter()
            .build();
        let cap = self.config.max_backoff;
        loop {
            spent.requests += 1;
            bump(&self.counters.requests, 1);
            if ep.is_fallback {
                bump(&self.counters.fallback_requests, 1);
            }
            let error = match self.attempt(ep, &request, user, spent).await {
                Ok(reply) => return Ok(reply),
                Err(e) => e,
            };
            bump(&self.counters.failed_requests, 1);
            let AttemptError::Transient { retry_after, .. } = &error else {
                return Err(error);
            };
            let Some(delay) = delays.next() else {
                return Err(error);
            };
            let delay = retry_after.map_or(delay, |wait| wait.min(cap));
            tracing::warn!(error = %error, ?delay, model = %ep.cfg.model, "LLM call failed, retrying");
            tokio::time::sleep(delay).await;
        }
    }

    fn request(
        &self,
        model: &str,
        user: &str,
        n: usize,
    ) -> Result<CreateChatCompletionRequest, ClassifyError> {
        let messages: Vec<ChatCompletionRequestMessage> = vec![
            ChatCompletionRequestSystemMessage::from(self.system_prompt.as_str()).into(),
            ChatCompletionRequestUserMessage::from(user).into(),
        ];
        let n = u32::try_from(n).unwrap_or(u32::MAX);
        CreateChatCompletionRequestArgs::default()
            .model(model)
            .messages(messages)
            .response_format(ResponseFormat::JsonSchema {
                json_schema: ResponseFormatJsonSchema {
                    description: Some("Classification of each post".to_owned()),
                    name: "post_classification".to_owned(),
                    schema: self.schema.clone(),
                    strict: Some(true),
                },
            })
            .max_completion_tokens(
                300u32
                    .saturating_add(n.saturating_mul(200))
                    .min(self.config.max_output_tokens.max(1)),
            )
            .build()
            .map_err(|e| ClassifyError::Invalid(format!("cannot build the request: {e}")))
    }

    /// One HTTP request. Its usage is counted whatever the content turns out to be.
    async fn attempt(
        &self,
        ep: &Endpoint,
        request: &CreateChatCompletionRequest,
        user: &str,
        spent: &mut Spent,
    ) -> Result<Reply, AttemptError> {
        let response = ep
            .client
            .chat()
            .create(request.clone())
            .await
            .map_err(classify_openai_error)?;
        let choice = response.choices.first();
        let content = choice.and_then(|c| c.message.content.as_deref());
        let refusal = choice.and_then(|c| c.message.refusal.as_deref());
        let (tokens_in, tokens_out) = match &response.usage {
            Some(u) => (u64::from(u.prompt_tokens), u64::from(u.completion_tokens)),
            None => {
                let chars = |s: &str| s.chars().count() as u64;
                (
                    (chars(&self.system_prompt) + chars(user)).div_ceil(4),
                    chars(content.or(refusal).unwrap_or("")).div_ceil(4),
                )
            }
        };
        let cost = ep.cfg.cost(tokens_in, tokens_out);
        spent.tokens_in += tokens_in;
        spent.tokens_out += tokens_out;
        spent.cost_usd += cost;
        bump(&self.counters.tokens_in, tokens_in);
        bump(&self.counters.tokens_out, tokens_out);
        self.counters.add_cost(cost);

        let content = match (choice, content, refusal) {
            (None, ..) => return Err(AttemptError::transient("answer has no choices")),
            (_, Some(c), _) => c,
            (_, None, Some(r)) => {
                return Err(AttemptError::transient(format!("model refused: {r}")));
            }
            (_, None, None) => return Err(AttemptError::transient("answer has no content")),
        };
        let items = parse_items(content).map_err(AttemptError::transient)?;
        Ok(Reply {
            items,
            model: if response.model.is_empty() {
                ep.cfg.model.clone()
            } else {
                response.model.clone()
            },
        })
    }
}

fn attempt_into_error(e: AttemptError, attempts: u32) -> ClassifyError {
    match e {
        AttemptError::Transient {
            message,
            retry_after,
        } => ClassifyError::Unavailable {
            attempts,
            last_error: message,
            retry_after,
        },
        AttemptError::Permanent(e) => e,
        AttemptError::Switch(why) => why.into_error(attempts, Duration::ZERO),
    }
}

/// The same error for another post of the batch.
fn copy_error(e: &ClassifyError) -> ClassifyError {
    match e {
        ClassifyError::Unavailable {
            attempts,
            last_error,
            retry_after,
        } => ClassifyError::Unavailable {
            attempts: *attempts,
            last_error: last_error.clone(),
            retry_after: *retry_after,
        },
        ClassifyError::Rejected { status, message } => ClassifyError::Rejected {
            status: *status,
            message: message.clone(),
        },
        other => ClassifyError::Invalid(other.to_string()),
    }
}

#[async_trait]
impl Classifier for LlmClassifier {
    async fn classify(&self, post: &ClassifyInput) -> Result<Classified, ClassifyError> {
        self.classify_many(std::slice::from_ref(post))
            .await
            .pop()
            .unwrap_or_else(|| Err(ClassifyError::Invalid("empty batch answer".into())))
    }

    /// Puts the posts into the pool shared by every caller and waits for their answers:
    /// requests carry up to [`LlmConfig::batch_size`] posts, from this call and others.
    async fn classify_many(
        &self,
        posts: &[ClassifyInput],
    ) -> Vec<Result<Classified, ClassifyError>> {
        let inner = &self.inner;
        let want_grams = inner.config.few_shot > 0 && !inner.current_examples().is_empty();
        let now = Instant::now();
        let queued = tokio::time::Instant::now();
        let mut waits = Vec::with_capacity(posts.len());
        let items: Vec<Waiting> = posts
            .iter()
            .map(|p| {
                let (tx, rx) = oneshot::channel();
                waits.push(rx);
                let n = inner.next_id.fetch_add(1, Ordering::Relaxed) + 1;
                Waiting {
                    id: format!("p{n}"),
                    post: p.id.clone(),
                    text: p.text.clone(),
                    grams: if want_grams {
                        fewshot::trigrams(&p.text)
                    } else {
                        Vec::new()
                    },
                    started: now,
                    queued_at: queued,
                    reasks: 0,
                    struck: false,
                    problem: String::new(),
                    share: Share::default(),
                    tx,
                }
            })
            .collect();
        inner.enqueue(items, false);
        let mut out = Vec::with_capacity(waits.len());
        for rx in waits {
            out.push(rx.await.unwrap_or_else(|_| {
                Err(ClassifyError::Unavailable {
                    attempts: 0,
                    last_error: "the LLM request was abandoned (shutting down)".into(),
                    retry_after: None,
                })
            }));
        }
        out
    }

    fn max_batch(&self) -> usize {
        self.inner.batch_size()
    }

    fn name(&self) -> &str {
        &self.inner.name
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    fn config() -> LlmConfig {
        let cats = ["web", "bots"]
            .iter()
            .map(|s| (CategorySlug::parse(s).unwrap(), format!("{s} work")))
            .collect();
        let mut c = LlmConfig::new("http://127.0.0.1:9/v1", "m", cats);
        c.api_key = Some("sk-secret-value".into());
        let mut fb = LlmEndpoint::new("http://127.0.0.1:9/v1", "f");
        fb.api_key = Some("sk-fallback-secret".into());
        c.fallback = Some(fb);
        c
    }

    #[test]
    fn debug_never_shows_the_keys() {
        let c = config();
        let shown = format!("{c:?}");
        assert!(!shown.contains("secret"), "{shown}");
        assert!(shown.contains("***"));
        let classifier = LlmClassifier::new(c).unwrap();
        assert!(!format!("{classifier:?}").contains("secret"));
    }

    #[test]
    fn prompt_lists_categories_and_schema_enumerates_them() {
        let c = LlmClassifier::new(config()).unwrap();
        assert!(c.system_prompt().contains("- `web`: web work"));
        assert!(!c.system_prompt().contains("{{categories}}"));
        let item = &c.inner.schema["properties"]["items"]["items"];
        assert_eq!(
            item["properties"]["categories"]["items"]["enum"],
            json!(["web", "bots"])
        );
        // Strict mode: every property is required.
        let props = item["properties"].as_object().unwrap();
        let required = item["required"].as_array().unwrap();
        assert_eq!(props.len(), required.len());
        let ex = &item["properties"]["extraction"];
        assert_eq!(
            ex["properties"].as_object().unwrap().len(),
            ex["required"].as_array().unwrap().len()
        );
    }

    #[test]
    fn the_prompts_examples_are_valid_answers() {
        let all: Vec<(CategorySlug, String)> = ["web", "design", "video", "texts", "bots"]
            .iter()
            .map(|s| (CategorySlug::parse(s).unwrap(), String::new()))
            .collect();
        let slugs: Vec<CategorySlug> = all.iter().map(|(s, _)| s.clone()).collect();
        let prompt = system_prompt(&all);
        let answers: Vec<&str> = prompt
            .lines()
            .filter_map(|l| l.strip_prefix("Answer: "))
            .collect();
        assert_eq!(answers.len(), 6);
        let mut kinds = HashSet::new();
        for a in answers {
            let v: Value = serde_json::from_str(a).unwrap();
            match check_item(&v, &slugs, 0.5) {
                ItemCheck::Valid(c) => {
                    kinds.insert(c.verdict.kind);
                }
                other => panic!("{a}: {other:?}"),
            }
        }
        assert_eq!(kinds.len(), 4, "every kind is shown");
    }

    #[test]
    fn examples_are_cleaned_when_set() {
        let c = LlmClassifier::new(config()).unwrap();
        c.set_examples(vec![
            FewShot {
                text: "Нужен бот для телеграм канала, оплата 5000".into(),
                is_job: true,
                kind: PostKind::Chatter,
                categories: vec![
                    CategorySlug::parse("bots").unwrap(),
                    CategorySlug::parse("crypto").unwrap(),
                ],
            },
            FewShot {
                text: "   ".into(),
                is_job: false,
                kind: PostKind::Ad,
                categories: Vec::new(),
            },
        ]);
        let picked = c.pick_examples(&["Нужен бот для телеграм чата"]);
        assert_eq!(picked.len(), 1);
        assert_eq!(picked[0].kind, PostKind::Job);
        assert_eq!(picked[0].categories, [CategorySlug::parse("bots").unwrap()]);
    }
}
