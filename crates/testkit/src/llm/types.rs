//! What the fake LLM is configured with, what it counts and what it records of each request.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::faults::FaultPlan;
use super::oracle::{OracleEntry, OracleExtraction, load_extractions_jsonl, load_oracle_jsonl};
use crate::TestkitError;

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
