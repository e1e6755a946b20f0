//! The `[llm]` section belongs to the classifier ([`LlmSection`], beside the client it
//! configures); here is only what the binary keeps of it: the client's configuration and the
//! daily spend limit the cascade's guard enforces.

use jobwire_classify::llm::LlmConfig;
pub use jobwire_classify::llm::{LlmFallbackSection, LlmSection};

/// `[llm]` after validation. `Debug` shows the endpoints without their keys.
#[derive(Debug, Clone)]
pub struct LlmSettings {
    /// What the LLM client is built from (endpoint, key, prices, batching, fallback).
    pub client: LlmConfig,
    /// Past this many dollars of LLM spend in a UTC day, only the local classifier runs.
    pub daily_spend_limit_usd: Option<f64>,
}
