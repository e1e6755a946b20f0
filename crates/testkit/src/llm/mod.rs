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
mod types;

use std::{net::SocketAddr, ops::Deref};

use axum::{
    Router,
    routing::{get, post},
};

use crate::{TestkitError, server::Server};
use completions::{chat_completions, models};
use control::{tk_faults, tk_latency, tk_requests, tk_reset, tk_stats};
pub use faults::{Fault, FaultPlan};
pub use oracle::{OracleEntry, OracleExtraction, load_extractions_jsonl, load_oracle_jsonl};
pub use state::LlmState;
pub use types::{
    CACHE_MIN_TOKENS, CACHE_STEP_TOKENS, CACHE_TTL, FakeLlmConfig, FakeLlmStats, MAX_RECORDS,
    RECORDED_USER_CHARS, RequestRecord,
};

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
