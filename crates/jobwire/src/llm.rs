//! Builds the LLM classifier from the settings.

use std::sync::Arc;

use anyhow::Context;
use jobwire_classify::llm::{FewShot, LlmClassifier};

use crate::config::LlmSettings;

pub fn build(llm: &LlmSettings) -> anyhow::Result<Arc<LlmClassifier>> {
    let classifier = LlmClassifier::new(llm.client.clone()).context("llm: building the client")?;
    Ok(Arc::new(classifier))
}

/// Hands people's labeled examples to the LLM as its few-shot pool (the LLM then picks the
/// ones most like each batch).
pub fn set_few_shot(llm: &LlmClassifier, examples: &[jobwire_store::ExampleRow]) {
    let shots: Vec<FewShot> = examples
        .iter()
        .map(|e| FewShot {
            text: e.text.clone(),
            is_job: e.is_job,
            kind: e.kind,
            categories: e.categories.clone(),
        })
        .collect();
    llm.set_examples(shots);
}
