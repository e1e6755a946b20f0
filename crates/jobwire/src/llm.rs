//! Builds the LLM classifier from the settings.

use std::sync::Arc;

use anyhow::Context;
use jobwire_classify::llm::{FewShot, LlmClassifier, LlmConfig, LlmEndpoint};
use jobwire_core::{CategorySlug, PostKind};

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
    config.price_in_per_mtok = llm.price_in_per_mtok;
    config.price_out_per_mtok = llm.price_out_per_mtok;
    config.batch_size = llm.batch_size;
    config.batch_linger = llm.batch_linger;
    config.idle_linger = llm.idle_linger;
    config.max_in_flight = llm.max_in_flight;
    config.max_output_tokens = llm.max_output_tokens;
    config.few_shot = llm.few_shot;
    config.fallback = llm.fallback.as_ref().map(|f| {
        let mut e = LlmEndpoint::new(f.base_url.as_str(), f.model.clone());
        e.api_key = f.api_key.clone();
        e.price_in_per_mtok = f.price_in_per_mtok;
        e.price_out_per_mtok = f.price_out_per_mtok;
        e
    });
    let classifier = LlmClassifier::new(config).context("llm: building the client")?;
    Ok(Arc::new(classifier))
}

/// Hands people's labeled examples to the LLM as its few-shot pool (the LLM then picks the
/// ones most like each batch).
pub fn set_few_shot(llm: &LlmClassifier, examples: &[jobwire_store::ExampleRow]) {
    let shots: Vec<FewShot> = examples
        .iter()
        .filter_map(|e| {
            Some(FewShot {
                text: e.text.clone(),
                is_job: e.is_job,
                kind: PostKind::parse(&e.kind)?,
                categories: e
                    .categories
                    .iter()
                    .filter_map(|c| CategorySlug::parse(c).ok())
                    .collect(),
            })
        })
        .collect();
    llm.set_examples(shots);
}
