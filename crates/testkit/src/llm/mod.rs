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
//! `insufficient_quota`, those in [`FaultPlan::unknown_models`] 404 `model_not_found`; with
//! [`FaultPlan::refuse_key`] every request is answered 401 `invalid_api_key`. Other
//! faults come first from [`FaultPlan::script`], then at random by the plan's rates with a
//! seeded RNG; item faults ([`FaultPlan::rate_drop_item`], [`FaultPlan::rate_bad_item`],
//! [`FaultPlan::shuffle_items`]) apply to every otherwise correct answer.

mod answers;
mod completions;
mod control;
mod errors;
mod faults;
mod oracle;
mod schema;
mod state;

use std::{net::SocketAddr, ops::Deref, time::Duration};

use axum::{
    Router,
    routing::{get, post},
};
use serde::{Deserialize, Serialize};

use crate::{TestkitError, server::Server};
use completions::{chat_completions, models};
use control::{tk_faults, tk_latency, tk_requests, tk_reset, tk_stats};
pub use faults::{Fault, FaultPlan};
pub use oracle::{OracleEntry, OracleExtraction, load_extractions_jsonl, load_oracle_jsonl};
pub use state::LlmState;

/// How long a prompt prefix stays cached (OpenAI keeps them 5–10 minutes of inactivity).
pub const CACHE_TTL: Duration = Duration::from_secs(300);
/// The shortest prefix that is cached, in tokens, and the step of cached lengths beyond it.
pub const CACHE_MIN_TOKENS: u64 = 1024;
pub const CACHE_STEP_TOKENS: u64 = 128;

/// Configuration of a [`FakeLlm`].
#[derive(Debug, Clone, Default)]
pub struct FakeLlmConfig {
    /// Labeled posts: the answers, looked up by text.
    pub oracle: Vec<OracleEntry>,
    /// What the labeled jobs say about themselves, looked up by text.
    pub extractions: Vec<OracleExtraction>,
    /// Delay before each answer (network and queueing; before the first token).
    pub latency: Duration,
    /// Time to the first token, as a real model takes to read the prompt (0: none).
    pub ttft: Duration,
    /// Generation speed in output tokens per second: a long answer takes longer, and a
    /// streamed one arrives piece by piece at this pace (0: instant).
    pub tokens_per_sec: u32,
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
    /// Sum of `usage.prompt_tokens_details.cached_tokens` answered: prompt prefixes of at
    /// least 1,024 tokens seen in the last [`CACHE_TTL`], counted in steps of 128 tokens as
    /// OpenAI reports them.
    pub cached_tokens: u64,
    /// Requests answered as server-sent events (`stream: true`).
    pub streamed_requests: u64,
    /// Streamed answers broken off halfway ([`Fault::StreamCut`]).
    pub cut_streams: u64,
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
    /// The system message(s), cut to their first [`RECORDED_USER_CHARS`] characters.
    pub system: String,
    /// The last user message, cut to its first [`RECORDED_USER_CHARS`] characters.
    pub user: String,
}

/// How much of the user message a [`RequestRecord`] keeps.
pub const RECORDED_USER_CHARS: usize = 8000;

/// How many [`RequestRecord`]s are kept (the oldest go first).
pub const MAX_RECORDS: usize = 10_000;

/// A running fake OpenAI-compatible server. Dereferences to [`LlmState`]
/// (`stats()`, `set_faults()`, `set_latency()`…). Dropping it stops it.
#[derive(Debug)]
pub struct FakeLlm {
    state: LlmState,
    server: Server,
}

impl FakeLlm {
    /// Binds `addr` (port 0 picks a free port) and serves in a tokio task.
    pub async fn start(addr: SocketAddr, config: FakeLlmConfig) -> Result<FakeLlm, TestkitError> {
        let state = LlmState::new(config);
        let app = router(state.clone());
        let server = Server::start(addr, app, state.inner.cancel.clone(), "LLM").await?;
        let addr = server.addr();
        tracing::info!(%addr, "fake LLM listening");
        Ok(FakeLlm { state, server })
    }

    /// Base URL ending in `/v1`, for `OpenAIConfig::new().with_api_base(url.as_str())`.
    pub fn url(&self) -> url::Url {
        let mut u = self.server.url();
        u.set_path("/v1");
        u
    }

    /// The bound address.
    pub fn addr(&self) -> SocketAddr {
        self.server.addr()
    }

    /// A clone of the shared state.
    pub fn state(&self) -> LlmState {
        self.state.clone()
    }

    /// Stops serving: releases held requests, then waits for open requests.
    pub async fn shutdown(self) {
        self.server.shutdown().await;
    }
}

impl Deref for FakeLlm {
    type Target = LlmState;

    fn deref(&self) -> &LlmState {
        &self.state
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
