//! A local OpenAI-compatible chat-completions server that answers jobwire's classification
//! protocol from a labeled oracle, with latency and scripted or random faults.
//!
//! # The protocol (jobwire's `classify.v2`)
//!
//! The request's **last user message** holds the posts as one line of JSON
//! `{"posts":[{"id":"p1","text":"<post text>"}, ...]}` — either the whole message, or its last
//! line that parses as such an object (lines before it, e.g. few-shot examples, are ignored).
//! The answer's `choices[0].message.content` is a JSON string
//! `{"items":[{"id","is_job","kind","categories","confidence","reason","extraction":{...}}, ...]}`,
//! one item per post, in order. Each post is looked up in the oracle by exact text, then by
//! whitespace-collapsed text; a miss is answered `is_job:false, kind:"chatter", categories:[]`
//! and counted in [`FakeLlmStats::oracle_misses`]. A job's `extraction` comes from the
//! oracle's [extractions](FakeLlmConfig::extractions) when it has the text, else from
//! [`jobwire_core::extract::extract`]; non-jobs get an empty one (all null). A last user message without posts is answered
//! `{"items":[]}` and counted as `unparsed`.
//!
//! With `response_format: {"type":"json_schema", ...}` the content is shaped to conform to the
//! given schema exactly (properties the fake knows get the oracle's values, others a neutral
//! value of their type; array items with an `enum` keep only allowed values). A schema whose
//! top level has `results` instead of `items` (the old `classify.v1` protocol) gets its
//! answer under `results`.
//!
//! `usage` reports a token per 4 characters (prompt: all message contents; completion: the
//! content). Every request with parsed posts is recorded ([`LlmState::requests_log`]: model,
//! the ids asked, the system message's hash) so tests can check batching and re-asks.
//!
//! Requests are validated like OpenAI: `model` and a non-empty `messages` are required
//! (400 `invalid_request_error`). Models listed in [`FaultPlan::quota_models`] answer 429
//! `insufficient_quota`, those in [`FaultPlan::unknown_models`] 404 `model_not_found`. Other
//! faults come first from [`FaultPlan::script`], then at random by the plan's rates with a
//! seeded RNG; item faults ([`FaultPlan::rate_drop_item`], [`FaultPlan::rate_bad_item`],
//! [`FaultPlan::shuffle_items`]) apply to every otherwise correct answer.

mod oracle;
mod schema;

use std::{
    collections::VecDeque,
    hash::{Hash, Hasher},
    net::SocketAddr,
    ops::Deref,
    sync::{
        Arc, Mutex, MutexGuard,
        atomic::{AtomicU64, Ordering},
    },
    time::Duration,
};

use axum::{
    Json, Router,
    body::Bytes,
    extract::State,
    http::{HeaderValue, StatusCode},
    response::{IntoResponse, Response},
    routing::{get, post},
};
use jobwire_core::extract::{BudgetBasis, Extraction, extract};
use rand::{Rng, SeedableRng, rngs::StdRng, seq::SliceRandom};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::TestkitError;
use oracle::Oracle;
pub use oracle::{OracleEntry, OracleExtraction, load_extractions_jsonl, load_oracle_jsonl};

/// One scripted answer of the fake LLM.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Fault {
    /// A correct answer.
    Ok,
    /// HTTP 429 `rate_limit_exceeded` with a `retry-after` header, as OpenAI sends.
    Status429,
    /// HTTP 500 `server_error`, as OpenAI sends.
    Status500,
    /// Holds the request for [`FaultPlan::timeout_hold`] (or until the client hangs up),
    /// then answers 500.
    Timeout,
    /// HTTP 200 whose content is not JSON (a truncated answer), `finish_reason: "stop"`.
    Malformed,
    /// HTTP 200 whose content is valid JSON that does not match the schema
    /// (alternately: `results` missing, or `is_job` given as a string).
    OffSchema,
    /// HTTP 200 whose first result's categories include `"hacked"`.
    UnknownCategory,
    /// HTTP 200 with `content: null` and a `refusal`, as OpenAI's structured outputs refuse.
    Refusal,
    /// HTTP 200 with a cut-off content and `finish_reason: "length"`.
    Truncated,
    /// HTTP 200 without the items of the 1st, 3rd, 5th… post (so a one-post request gets no
    /// item at all).
    Partial,
    /// HTTP 200 whose 1st, 3rd, 5th… items are off-schema, in turn: an unknown kind
    /// (`"vacancy"`), a job whose only category is unknown (`"crypto"`), `is_job` as a string.
    BadItems,
    /// HTTP 200 where every item is a job whose only category is unknown (`"crypto"`): a
    /// model that insists on a category it was not offered.
    UnknownCategoryItems,
    /// HTTP 429 `insufficient_quota` (no `retry-after`), as OpenAI sends when billing is out.
    Quota,
}

/// Which faults to inject: the script first, then random faults by rate.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct FaultPlan {
    /// Probability of a 429 per request (0.0–1.0).
    pub rate_429: f64,
    /// Probability of a 500 per request.
    pub rate_500: f64,
    /// Probability of a held request (timeout) per request.
    pub rate_timeout: f64,
    /// Probability of non-JSON content per request.
    pub rate_malformed: f64,
    /// Probability of off-schema JSON per request.
    pub rate_off_schema: f64,
    /// Probability that an item is left out of an otherwise correct answer.
    pub rate_drop_item: f64,
    /// Probability that an item of an otherwise correct answer is off-schema (same variants
    /// as [`Fault::BadItems`]).
    pub rate_bad_item: f64,
    /// Answer the items in a random order.
    pub shuffle_items: bool,
    /// Models that are out of quota: every request for them is answered 429
    /// `insufficient_quota` (before the script).
    pub quota_models: Vec<String>,
    /// Models that do not exist: every request for them is answered 404 `model_not_found`.
    pub unknown_models: Vec<String>,
    /// Faults for the next requests, consumed first, one per request.
    pub script: VecDeque<Fault>,
    /// Value of the `retry-after` header on 429 answers, in seconds (default 1).
    pub retry_after_secs: u64,
    /// How long a [`Fault::Timeout`] holds the request (default 120 s).
    #[serde(rename = "timeout_hold_ms", with = "millis")]
    pub timeout_hold: Duration,
}

impl Default for FaultPlan {
    fn default() -> Self {
        FaultPlan {
            rate_429: 0.0,
            rate_500: 0.0,
            rate_timeout: 0.0,
            rate_malformed: 0.0,
            rate_off_schema: 0.0,
            rate_drop_item: 0.0,
            rate_bad_item: 0.0,
            shuffle_items: false,
            quota_models: Vec::new(),
            unknown_models: Vec::new(),
            script: VecDeque::new(),
            retry_after_secs: 1,
            timeout_hold: Duration::from_secs(120),
        }
    }
}

impl FaultPlan {
    /// A plan with only a script (no random faults).
    pub fn scripted(faults: impl IntoIterator<Item = Fault>) -> Self {
        FaultPlan {
            script: faults.into_iter().collect(),
            ..FaultPlan::default()
        }
    }
}

mod millis {
    use std::time::Duration;

    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u64(u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        u64::deserialize(d).map(Duration::from_millis)
    }
}

/// Configuration of a [`FakeLlm`].
#[derive(Debug, Clone, Default)]
pub struct FakeLlmConfig {
    /// Labeled posts: the answers, looked up by text.
    pub oracle: Vec<OracleEntry>,
    /// What the labeled jobs say about themselves, looked up by text.
    pub extractions: Vec<OracleExtraction>,
    /// Delay before each answer.
    pub latency: Duration,
    /// Faults to inject.
    pub faults: FaultPlan,
    /// Seed of the RNG that draws random faults.
    pub seed: u64,
}

impl FakeLlmConfig {
    /// Labels and extractions from one labeled JSONL document (see [`load_oracle_jsonl`] and
    /// [`load_extractions_jsonl`]); no latency, no faults.
    pub fn from_jsonl(jsonl: &str) -> Result<Self, TestkitError> {
        Ok(FakeLlmConfig {
            oracle: load_oracle_jsonl(jsonl)?,
            extractions: load_extractions_jsonl(jsonl)?,
            ..FakeLlmConfig::default()
        })
    }
}

/// Counters of a [`FakeLlm`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FakeLlmStats {
    /// Chat-completion requests received.
    pub requests: u64,
    /// Correct 200 answers (including `unparsed` ones).
    pub ok: u64,
    /// Requests rejected 400 by validation.
    pub bad_request: u64,
    /// 429 answers.
    pub status_429: u64,
    /// 500 answers (not counting timeouts).
    pub status_500: u64,
    /// Held (timeout) requests.
    pub timeouts: u64,
    /// Non-JSON contents sent.
    pub malformed: u64,
    /// Off-schema contents sent.
    pub off_schema: u64,
    /// Contents with an unknown category sent.
    pub unknown_category: u64,
    /// Refusals sent.
    pub refusals: u64,
    /// Truncated (`finish_reason: "length"`) contents sent.
    pub truncated: u64,
    /// Requests whose last user message was not the posts JSON.
    pub unparsed: u64,
    /// Posts classified (over all answered requests).
    pub posts: u64,
    /// Posts found in the oracle.
    pub oracle_hits: u64,
    /// Posts not found in the oracle (answered as chatter).
    pub oracle_misses: u64,
    /// Sum of `usage.prompt_tokens` answered.
    pub prompt_tokens: u64,
    /// Sum of `usage.completion_tokens` answered.
    pub completion_tokens: u64,
    /// Requests whose posts were parsed and that were answered with content (correct or
    /// faulty), i.e. the ones [`Self::posts`] is counted over.
    pub answered_requests: u64,
    /// The most posts one request carried.
    pub max_posts_per_request: u64,
    /// Items left out of answers ([`Fault::Partial`], [`FaultPlan::rate_drop_item`]).
    pub dropped_items: u64,
    /// Off-schema items sent ([`Fault::BadItems`], [`Fault::UnknownCategoryItems`],
    /// [`FaultPlan::rate_bad_item`]).
    pub bad_items: u64,
    /// 429 `insufficient_quota` answers.
    pub insufficient_quota: u64,
    /// 404 `model_not_found` answers.
    pub model_not_found: u64,
}

impl FakeLlmStats {
    /// Requests per 1000 posts classified (0 when no post was).
    pub fn requests_per_1000_posts(&self) -> f64 {
        if self.posts == 0 {
            0.0
        } else {
            self.requests as f64 * 1000.0 / self.posts as f64
        }
    }

    /// Mean posts per answered request (0 when none was).
    pub fn mean_posts_per_request(&self) -> f64 {
        if self.answered_requests == 0 {
            0.0
        } else {
            self.posts as f64 / self.answered_requests as f64
        }
    }
}

/// One request with parsed posts, as the fake saw it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RequestRecord {
    /// The model asked.
    pub model: String,
    /// The post ids asked, in order.
    pub ids: Vec<String>,
    /// The length of every post text, in characters.
    pub post_chars: Vec<usize>,
    /// A hash of the system message(s) (equal hashes: byte-identical prefixes).
    pub system_hash: u64,
    /// The last user message, cut to its first [`RECORDED_USER_CHARS`] characters.
    pub user: String,
}

/// How much of the user message a [`RequestRecord`] keeps.
pub const RECORDED_USER_CHARS: usize = 8000;

/// How many [`RequestRecord`]s are kept (the oldest go first).
pub const MAX_RECORDS: usize = 10_000;

#[derive(Debug, Default)]
struct Counters {
    requests: AtomicU64,
    ok: AtomicU64,
    bad_request: AtomicU64,
    status_429: AtomicU64,
    status_500: AtomicU64,
    timeouts: AtomicU64,
    malformed: AtomicU64,
    off_schema: AtomicU64,
    unknown_category: AtomicU64,
    refusals: AtomicU64,
    truncated: AtomicU64,
    unparsed: AtomicU64,
    posts: AtomicU64,
    oracle_hits: AtomicU64,
    oracle_misses: AtomicU64,
    prompt_tokens: AtomicU64,
    completion_tokens: AtomicU64,
    answered_requests: AtomicU64,
    max_posts_per_request: AtomicU64,
    dropped_items: AtomicU64,
    bad_items: AtomicU64,
    insufficient_quota: AtomicU64,
    model_not_found: AtomicU64,
}

impl Counters {
    fn all(&self) -> [&AtomicU64; 23] {
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
        ]
    }
}

fn add(c: &AtomicU64, n: u64) {
    c.fetch_add(n, Ordering::Relaxed);
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

#[derive(Debug)]
struct Faults {
    plan: FaultPlan,
    rng: StdRng,
}

#[derive(Debug)]
struct Inner {
    oracle: Oracle,
    faults: Mutex<Faults>,
    latency_us: AtomicU64,
    stats: Counters,
    seq: AtomicU64,
    log: Mutex<VecDeque<RequestRecord>>,
    cancel: CancellationToken,
}

/// Shared state of a fake LLM: cheap to clone, used by [`router`] and by [`FakeLlm`]
/// (which dereferences to it).
#[derive(Debug, Clone)]
pub struct LlmState {
    inner: Arc<Inner>,
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

    fn record(&self, r: RequestRecord) {
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

    /// Releases held (timeout) requests; used by [`FakeLlm::shutdown`].
    pub fn close(&self) {
        self.inner.cancel.cancel();
    }

    /// Draws the fault for the next request.
    fn next_fault(&self) -> (Fault, u64, Duration) {
        let mut f = lock(&self.inner.faults);
        let retry = f.plan.retry_after_secs;
        let hold = f.plan.timeout_hold;
        if let Some(fault) = f.plan.script.pop_front() {
            return (fault, retry, hold);
        }
        let p = &f.plan;
        let rates = [
            (p.rate_429, Fault::Status429),
            (p.rate_500, Fault::Status500),
            (p.rate_timeout, Fault::Timeout),
            (p.rate_malformed, Fault::Malformed),
            (p.rate_off_schema, Fault::OffSchema),
        ];
        if rates.iter().all(|(r, _)| *r <= 0.0) {
            return (Fault::Ok, retry, hold);
        }
        let u: f64 = f.rng.random();
        let mut acc = 0.0;
        for (rate, fault) in rates {
            acc += rate.max(0.0);
            if u < acc {
                return (fault, retry, hold);
            }
        }
        (Fault::Ok, retry, hold)
    }
}

/// What happens to one item of an answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ItemFate {
    Keep,
    Drop,
    Bad,
    UnknownCategory,
}

/// The fates of an answer's items, and a new order for them (a permutation), if shuffled.
#[derive(Debug)]
struct Fates {
    fates: Vec<ItemFate>,
    order: Option<Vec<usize>>,
}

impl LlmState {
    /// Draws what happens to the `n` items of an answer with this fault.
    fn item_fates(&self, fault: Fault, n: usize) -> Fates {
        let mut f = lock(&self.inner.faults);
        let (drop, bad, shuffle) = (
            f.plan.rate_drop_item,
            f.plan.rate_bad_item,
            f.plan.shuffle_items,
        );
        let fates = (0..n)
            .map(|i| match fault {
                Fault::Partial if i % 2 == 0 => ItemFate::Drop,
                Fault::BadItems if i % 2 == 0 => ItemFate::Bad,
                Fault::UnknownCategoryItems => ItemFate::UnknownCategory,
                Fault::Partial | Fault::BadItems => ItemFate::Keep,
                _ => {
                    if drop > 0.0 && f.rng.random::<f64>() < drop {
                        ItemFate::Drop
                    } else if bad > 0.0 && f.rng.random::<f64>() < bad {
                        ItemFate::Bad
                    } else {
                        ItemFate::Keep
                    }
                }
            })
            .collect();
        let order = shuffle.then(|| {
            let mut order: Vec<usize> = (0..n).collect();
            order.shuffle(&mut f.rng);
            order
        });
        Fates { fates, order }
    }
}

/// An off-schema version of an item: an unknown kind, a job whose only category is unknown,
/// or `is_job` as a string, by `nth`.
fn spoil(mut item: Value, nth: u64) -> Value {
    if let Some(obj) = item.as_object_mut() {
        match nth % 3 {
            0 => {
                obj.insert("kind".into(), json!("vacancy"));
            }
            1 => {
                obj.insert("is_job".into(), json!(true));
                obj.insert("kind".into(), json!("job"));
                obj.insert("categories".into(), json!(["crypto"]));
            }
            _ => {
                let b = obj.get("is_job").and_then(Value::as_bool).unwrap_or(false);
                obj.insert("is_job".into(), json!(if b { "yes" } else { "no" }));
            }
        }
    }
    item
}

/// The posts of a user message: the whole message as `{"posts":[...]}`, or else its last line
/// that is such an object.
fn parse_posts(message: &str) -> Option<Vec<Value>> {
    let from = |s: &str| {
        serde_json::from_str::<Value>(s)
            .ok()
            .and_then(|v| v.get("posts").and_then(Value::as_array).cloned())
    };
    from(message).or_else(|| {
        message
            .lines()
            .rev()
            .map(str::trim)
            .filter(|l| l.starts_with('{'))
            .find_map(from)
    })
}

/// The extraction JSON of the `classify.v2` schema (every key present, `null` when unknown).
fn extraction_json(e: Option<&Extraction>) -> Value {
    let empty = Extraction::default();
    let e = e.unwrap_or(&empty);
    let budget = e.budget.as_ref().map(|b| {
        let basis = match b.basis {
            BudgetBasis::Fixed => "fixed",
            BudgetBasis::Hourly => "hourly",
            BudgetBasis::Monthly => "monthly",
        };
        json!({"min": b.min, "max": b.max, "currency": b.currency, "basis": basis})
    });
    json!({
        "title": e.title,
        "budget": budget,
        "deadline": e.deadline,
        "work_mode": e.work_mode.and_then(|m| serde_json::to_value(m).ok()),
        "skills": e.skills,
        "contact": e.contact,
    })
}

/// The oracle's answer for one post.
fn oracle_item(st: &LlmState, id: &str, text: &str) -> Value {
    let stats = &st.inner.stats;
    let oracle = &st.inner.oracle;
    match oracle.lookup(text) {
        Some(e) => {
            add(&stats.oracle_hits, 1);
            let extraction = if e.is_job {
                match oracle.extraction(text) {
                    Some(x) => extraction_json(Some(x)),
                    None => extraction_json(Some(&extract(text))),
                }
            } else {
                extraction_json(None)
            };
            json!({
                "id": id,
                "is_job": e.is_job,
                "kind": e.kind,
                "categories": e.categories,
                "confidence": 0.9,
                "reason": "labeled in the oracle",
                "extraction": extraction,
            })
        }
        None => {
            add(&stats.oracle_misses, 1);
            json!({
                "id": id,
                "is_job": false,
                "kind": "chatter",
                "categories": [],
                "confidence": 0.5,
                "reason": "not in the oracle",
                "extraction": extraction_json(None),
            })
        }
    }
}

fn duration_us(d: Duration) -> u64 {
    u64::try_from(d.as_micros()).unwrap_or(u64::MAX)
}

/// A running fake OpenAI-compatible server. Dereferences to [`LlmState`]
/// (`stats()`, `set_faults()`, `set_latency()`…). Dropping it stops it.
#[derive(Debug)]
pub struct FakeLlm {
    state: LlmState,
    addr: SocketAddr,
    task: Option<JoinHandle<()>>,
}

impl FakeLlm {
    /// Binds `addr` (port 0 picks a free port) and serves in a tokio task.
    pub async fn start(addr: SocketAddr, config: FakeLlmConfig) -> Result<FakeLlm, TestkitError> {
        let listener = crate::bind(addr).await?;
        let addr = listener.local_addr()?;
        let state = LlmState::new(config);
        let app = router(state.clone());
        let cancel = state.inner.cancel.clone();
        let task = tokio::spawn(async move {
            let served = axum::serve(listener, app)
                .with_graceful_shutdown(cancel.cancelled_owned())
                .await;
            if let Err(e) = served {
                tracing::warn!(error = %e, "fake LLM server stopped");
            }
        });
        tracing::info!(%addr, "fake LLM listening");
        Ok(FakeLlm {
            state,
            addr,
            task: Some(task),
        })
    }

    /// Base URL ending in `/v1`, for `OpenAIConfig::new().with_api_base(url.as_str())`.
    pub fn url(&self) -> url::Url {
        let mut u = crate::telegram::socket_url(self.addr);
        u.set_path("/v1");
        u
    }

    /// The bound address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// A clone of the shared state.
    pub fn state(&self) -> LlmState {
        self.state.clone()
    }

    /// Stops serving: releases held requests, then waits for open requests.
    pub async fn shutdown(mut self) {
        self.state.close();
        if let Some(task) = self.task.take()
            && tokio::time::timeout(Duration::from_secs(5), task)
                .await
                .is_err()
        {
            tracing::warn!("fake LLM did not stop within 5 s");
        }
    }
}

impl Deref for FakeLlm {
    type Target = LlmState;

    fn deref(&self) -> &LlmState {
        &self.state
    }
}

impl Drop for FakeLlm {
    fn drop(&mut self) {
        self.state.close();
    }
}

/// The fake's HTTP API: `POST /v1/chat/completions` (also `/chat/completions`),
/// `GET /v1/models`, and the testkit endpoints `GET /__testkit/stats`,
/// `POST /__testkit/faults` (a [`FaultPlan`] as JSON), `POST /__testkit/latency {latency_ms}`,
/// `POST /__testkit/reset` (zeroes the counters, clears the request log),
/// `GET /__testkit/requests` (the [`RequestRecord`]s).
pub fn router(state: LlmState) -> Router {
    Router::new()
        .route("/v1/chat/completions", post(chat_completions))
        .route("/chat/completions", post(chat_completions))
        .route("/v1/models", get(models))
        .route("/models", get(models))
        .route("/__testkit/stats", get(tk_stats))
        .route("/__testkit/faults", post(tk_faults))
        .route("/__testkit/latency", post(tk_latency))
        .route("/__testkit/reset", post(tk_reset))
        .route("/__testkit/requests", get(tk_requests))
        .with_state(state)
}

async fn tk_stats(State(st): State<LlmState>) -> Response {
    Json(st.stats()).into_response()
}

async fn tk_requests(State(st): State<LlmState>) -> Response {
    Json(st.requests_log()).into_response()
}

async fn tk_faults(State(st): State<LlmState>, Json(plan): Json<FaultPlan>) -> Response {
    st.set_faults(plan);
    Json(json!({"ok": true})).into_response()
}

#[derive(Deserialize)]
struct LatencyBody {
    latency_ms: u64,
}

async fn tk_latency(State(st): State<LlmState>, Json(b): Json<LatencyBody>) -> Response {
    st.set_latency(Duration::from_millis(b.latency_ms));
    Json(json!({"ok": true})).into_response()
}

async fn tk_reset(State(st): State<LlmState>) -> Response {
    st.reset_stats();
    Json(json!({"ok": true})).into_response()
}

async fn models() -> Response {
    Json(json!({
        "object": "list",
        "data": [{"id": "fake-llm", "object": "model", "created": 1_700_000_000, "owned_by": "jobwire-testkit"}],
    }))
    .into_response()
}

fn openai_error(
    status: StatusCode,
    message: &str,
    ty: &str,
    param: Option<&str>,
    code: Option<&str>,
) -> Response {
    (
        status,
        Json(json!({"error": {"message": message, "type": ty, "param": param, "code": code}})),
    )
        .into_response()
}

fn bad_request(st: &LlmState, message: &str, param: Option<&str>, code: Option<&str>) -> Response {
    add(&st.inner.stats.bad_request, 1);
    openai_error(
        StatusCode::BAD_REQUEST,
        message,
        "invalid_request_error",
        param,
        code,
    )
}

fn too_many_requests(retry_after: u64) -> Response {
    let mut resp = openai_error(
        StatusCode::TOO_MANY_REQUESTS,
        "Rate limit reached for gpt-4o-mini in organization org-XXXXXXXXXXXXXXXXXXXXXXXX on tokens per min (TPM): Limit 50000, Used 47949, Requested 3006. Please try again in 1.146s. Visit https://platform.openai.com/account/rate-limits to learn more.",
        "tokens",
        None,
        Some("rate_limit_exceeded"),
    );
    let h = resp.headers_mut();
    h.insert("retry-after", HeaderValue::from(retry_after));
    h.insert(
        "retry-after-ms",
        HeaderValue::from(retry_after.saturating_mul(1000)),
    );
    h.insert(
        "x-ratelimit-limit-requests",
        HeaderValue::from_static("500"),
    );
    h.insert(
        "x-ratelimit-remaining-requests",
        HeaderValue::from_static("0"),
    );
    h.insert(
        "x-ratelimit-limit-tokens",
        HeaderValue::from_static("50000"),
    );
    h.insert(
        "x-ratelimit-remaining-tokens",
        HeaderValue::from_static("2051"),
    );
    h.insert(
        "x-ratelimit-reset-tokens",
        HeaderValue::from_static("1.146s"),
    );
    resp
}

fn insufficient_quota() -> Response {
    openai_error(
        StatusCode::TOO_MANY_REQUESTS,
        "You exceeded your current quota, please check your plan and billing details. For more information on this error, read the docs: https://platform.openai.com/docs/guides/error-codes/api-errors.",
        "insufficient_quota",
        None,
        Some("insufficient_quota"),
    )
}

fn model_not_found(model: &str) -> Response {
    openai_error(
        StatusCode::NOT_FOUND,
        &format!("The model `{model}` does not exist or you do not have access to it."),
        "invalid_request_error",
        None,
        Some("model_not_found"),
    )
}

fn server_error() -> Response {
    openai_error(
        StatusCode::INTERNAL_SERVER_ERROR,
        "The server had an error while processing your request. Sorry about that!",
        "server_error",
        None,
        None,
    )
}

/// The text of a message's `content` (a string or an array of text parts).
fn content_text(content: Option<&Value>) -> String {
    match content {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join(""),
        _ => String::new(),
    }
}

fn tokens(chars: usize) -> u64 {
    u64::try_from(chars.div_ceil(4)).unwrap_or(u64::MAX)
}

/// Cuts a JSON text so that it no longer parses.
fn truncate_json(s: &str) -> String {
    let n = s.chars().count();
    let cut: String = s.chars().take((n / 2).max(1)).collect();
    if serde_json::from_str::<Value>(&cut).is_ok() {
        // e.g. a one-character "{" would not parse anyway; be safe with a dangling key.
        format!("{cut}{{\"")
    } else {
        cut
    }
}

async fn chat_completions(State(st): State<LlmState>, body: Bytes) -> Response {
    let stats = &st.inner.stats;
    add(&stats.requests, 1);
    let Ok(req) = serde_json::from_slice::<Value>(&body) else {
        return bad_request(
            &st,
            "We could not parse the JSON body of your request. (HINT: This likely means you aren't using your HTTP library correctly. The OpenAI API expects a JSON payload, but what was sent was not valid JSON. If you have trouble figuring out how to fix this, please contact us through our help center at help.openai.com.)",
            None,
            None,
        );
    };
    let model = match req.get("model") {
        Some(Value::String(m)) if !m.is_empty() => m.clone(),
        _ => return bad_request(&st, "you must provide a model parameter", None, None),
    };
    let messages = match req.get("messages") {
        None | Some(Value::Null) => {
            return bad_request(
                &st,
                "Missing required parameter: 'messages'.",
                Some("messages"),
                Some("missing_required_parameter"),
            );
        }
        Some(Value::Array(m)) if m.is_empty() => {
            return bad_request(
                &st,
                "Invalid 'messages': empty array. Expected an array with minimum length 1, but got an empty array instead.",
                Some("messages"),
                Some("empty_array"),
            );
        }
        Some(Value::Array(m)) => m.clone(),
        Some(_) => {
            return bad_request(
                &st,
                "Invalid type for 'messages': expected an array of objects, but got a value instead.",
                Some("messages"),
                Some("invalid_type"),
            );
        }
    };
    for (i, m) in messages.iter().enumerate() {
        let role_ok = m.get("role").and_then(Value::as_str).is_some_and(|r| {
            matches!(
                r,
                "system" | "developer" | "user" | "assistant" | "tool" | "function"
            )
        });
        if !role_ok {
            let param = format!("messages[{i}].role");
            return bad_request(
                &st,
                &format!(
                    "Invalid value for '{param}': expected one of 'system', 'developer', 'user', 'assistant', 'tool' or 'function'."
                ),
                Some(&param),
                Some("invalid_value"),
            );
        }
    }
    if req.get("stream").and_then(Value::as_bool) == Some(true) {
        return bad_request(
            &st,
            "The jobwire fake LLM does not support 'stream': true.",
            Some("stream"),
            Some("unsupported_value"),
        );
    }

    let latency = st.inner.latency_us.load(Ordering::Relaxed);
    if latency > 0 {
        tokio::time::sleep(Duration::from_micros(latency)).await;
    }

    let prompt_chars: usize = messages
        .iter()
        .map(|m| content_text(m.get("content")).chars().count())
        .sum();
    let system: String = messages
        .iter()
        .filter(|m| {
            matches!(
                m.get("role").and_then(Value::as_str),
                Some("system" | "developer")
            )
        })
        .map(|m| content_text(m.get("content")))
        .collect::<Vec<_>>()
        .join("\n");
    let last_user = messages
        .iter()
        .rev()
        .find(|m| m.get("role").and_then(Value::as_str) == Some("user"))
        .map(|m| content_text(m.get("content")))
        .unwrap_or_default();
    let posts: Option<Vec<(String, String)>> = parse_posts(&last_user).map(|posts| {
        posts
            .iter()
            .map(|post| {
                let id = match post.get("id").cloned().unwrap_or(Value::Null) {
                    Value::String(s) => s,
                    Value::Null => String::new(),
                    other => other.to_string(),
                };
                let text = post.get("text").and_then(Value::as_str).unwrap_or("");
                (id, text.to_owned())
            })
            .collect()
    });
    if let Some(posts) = &posts {
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        system.hash(&mut hasher);
        st.record(RequestRecord {
            model: model.clone(),
            ids: posts.iter().map(|(id, _)| id.clone()).collect(),
            post_chars: posts.iter().map(|(_, t)| t.chars().count()).collect(),
            system_hash: hasher.finish(),
            user: last_user.chars().take(RECORDED_USER_CHARS).collect(),
        });
    }

    let (quota, unknown) = {
        let f = lock(&st.inner.faults);
        (
            f.plan.quota_models.contains(&model),
            f.plan.unknown_models.contains(&model),
        )
    };
    if unknown {
        add(&stats.model_not_found, 1);
        return model_not_found(&model);
    }
    if quota {
        add(&stats.insufficient_quota, 1);
        return insufficient_quota();
    }

    let (fault, retry_after, hold) = st.next_fault();
    match fault {
        Fault::Status429 => {
            add(&stats.status_429, 1);
            return too_many_requests(retry_after);
        }
        Fault::Quota => {
            add(&stats.insufficient_quota, 1);
            return insufficient_quota();
        }
        Fault::Status500 => {
            add(&stats.status_500, 1);
            return server_error();
        }
        Fault::Timeout => {
            add(&stats.timeouts, 1);
            tokio::select! {
                () = tokio::time::sleep(hold) => {}
                () = st.inner.cancel.cancelled() => {}
            }
            return server_error();
        }
        _ => {}
    }

    let schema = req
        .get("response_format")
        .filter(|rf| rf.get("type").and_then(Value::as_str) == Some("json_schema"))
        .and_then(|rf| rf.get("json_schema"))
        .and_then(|js| js.get("schema"));
    // The old protocol (`classify.v1`) called the list `results`.
    let key = if schema
        .and_then(|s| s.get("properties"))
        .and_then(|p| p.get("results"))
        .is_some()
    {
        "results"
    } else {
        "items"
    };

    let mut items = Vec::new();
    match posts {
        Some(posts) => {
            add(&stats.answered_requests, 1);
            stats
                .max_posts_per_request
                .fetch_max(posts.len() as u64, Ordering::Relaxed);
            for (id, text) in &posts {
                add(&stats.posts, 1);
                items.push(oracle_item(&st, id, text));
            }
        }
        None => add(&stats.unparsed, 1),
    }
    let mut answer = json!({ key: items });
    if let Some(schema) = schema {
        answer = schema::conform(Some(&answer), schema, schema, 0);
    }

    let seq = st.inner.seq.fetch_add(1, Ordering::Relaxed);
    if matches!(
        fault,
        Fault::Ok | Fault::Partial | Fault::BadItems | Fault::UnknownCategoryItems
    ) && let Some(list) = answer.get_mut(key).and_then(Value::as_array_mut)
    {
        let fates = st.item_fates(fault, list.len());
        let old = std::mem::take(list);
        for (item, fate) in old.into_iter().zip(&fates.fates) {
            match fate {
                ItemFate::Keep => list.push(item),
                ItemFate::Drop => add(&stats.dropped_items, 1),
                ItemFate::Bad => {
                    let nth = stats.bad_items.fetch_add(1, Ordering::Relaxed);
                    list.push(spoil(item, nth));
                }
                ItemFate::UnknownCategory => {
                    add(&stats.bad_items, 1);
                    list.push(spoil(item, 1));
                }
            }
        }
        if let Some(order) = fates.order {
            let mut slots: Vec<Option<Value>> =
                std::mem::take(list).into_iter().map(Some).collect();
            for i in order {
                if let Some(v) = slots.get_mut(i).and_then(Option::take) {
                    list.push(v);
                }
            }
        }
    }
    match fault {
        Fault::OffSchema => {
            // Alternate the two kinds of off-schema answers, starting with a missing list.
            let nth = stats.off_schema.fetch_add(1, Ordering::Relaxed);
            answer = if nth % 2 == 0 {
                json!({"answers": answer.get(key).cloned().unwrap_or_else(|| json!([]))})
            } else {
                let mut a = answer.clone();
                if let Some(rs) = a.get_mut(key).and_then(Value::as_array_mut) {
                    if rs.is_empty() {
                        rs.push(json!({"id": "0", "is_job": "false", "kind": "chatter", "categories": []}));
                    }
                    for r in rs {
                        if let Some(obj) = r.as_object_mut() {
                            let b = obj.get("is_job").and_then(Value::as_bool).unwrap_or(false);
                            obj.insert("is_job".into(), json!(if b { "yes" } else { "no" }));
                        }
                    }
                }
                a
            };
        }
        Fault::UnknownCategory => {
            add(&stats.unknown_category, 1);
            if let Some(first) = answer
                .get_mut(key)
                .and_then(Value::as_array_mut)
                .and_then(|rs| rs.first_mut())
            {
                if let Some(obj) = first.as_object_mut() {
                    obj.insert("is_job".into(), json!(true));
                    obj.insert("kind".into(), json!("job"));
                }
                match first.get_mut("categories").and_then(Value::as_array_mut) {
                    Some(cats) => cats.push(json!("hacked")),
                    None => {
                        if let Some(obj) = first.as_object_mut() {
                            obj.insert("categories".into(), json!(["hacked"]));
                        }
                    }
                }
            }
        }
        _ => {}
    }

    let full = answer.to_string();
    let (content, refusal, finish_reason) = match fault {
        Fault::Malformed => {
            add(&stats.malformed, 1);
            (Some(truncate_json(&full)), None, "stop")
        }
        Fault::Truncated => {
            add(&stats.truncated, 1);
            (Some(truncate_json(&full)), None, "length")
        }
        Fault::Refusal => {
            add(&stats.refusals, 1);
            (
                None,
                Some("I'm very sorry, but I can't assist with that.".to_owned()),
                "stop",
            )
        }
        _ => {
            if matches!(fault, Fault::Ok) {
                add(&stats.ok, 1);
            }
            (Some(full), None, "stop")
        }
    };
    let prompt_tokens = tokens(prompt_chars);
    let completion_tokens = tokens(
        content
            .as_deref()
            .or(refusal.as_deref())
            .map_or(0, |c| c.chars().count()),
    );
    add(&stats.prompt_tokens, prompt_tokens);
    add(&stats.completion_tokens, completion_tokens);
    let created = chrono::Utc::now().timestamp();
    Json(json!({
        "id": format!("chatcmpl-jobwirefake{seq:012}"),
        "object": "chat.completion",
        "created": created,
        "model": model,
        "choices": [{
            "index": 0,
            "message": {
                "role": "assistant",
                "content": content,
                "refusal": refusal,
                "annotations": [],
            },
            "logprobs": null,
            "finish_reason": finish_reason,
        }],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
            "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
            "completion_tokens_details": {
                "reasoning_tokens": 0,
                "audio_tokens": 0,
                "accepted_prediction_tokens": 0,
                "rejected_prediction_tokens": 0,
            },
        },
        "service_tier": "default",
        "system_fingerprint": "fp_jobwirefake",
    }))
    .into_response()
}
