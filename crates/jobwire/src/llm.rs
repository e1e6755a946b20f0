//! Builds the LLM classifier from the settings.

use std::sync::Arc;

use anyhow::Context;
use jobwire_classify::llm::{LlmClassifier, LlmConfig};

use crate::config::{LlmSettings, Settings};

pub fn build(settings: &Settings, llm: &LlmSettings) -> anyhow::Result<Arc<LlmClassifier>> {
    let categories = settings
        .categories
        .iter()
        .map(|c| (c.slug.clone(), c.description.clone()))
        .collect();
    let mut config = LlmConfig::new(llm.base_url.as_str(), llm.model.clone(), categories);
    config.api_key = llm.api_key.clone();
    config.timeout = llm.timeout;
    config.max_retries = llm.max_retries;
    let classifier = LlmClassifier::new(config).context("llm: building the client")?;
    Ok(Arc::new(classifier))
}

/// Hands people's labeled examples to the LLM as its few-shot pool.
pub fn set_few_shot(llm: &LlmClassifier, examples: &[jobwire_store::ExampleRow]) {
    // Wired to the LLM client's few-shot API once it lands.
    let _ = (llm, examples);
}
