//! Builds the LLM classifier from the settings.

use std::sync::Arc;

use jobwire_classify::Classifier;

use crate::config::{LlmSettings, Settings};

pub fn build(settings: &Settings, llm: &LlmSettings) -> anyhow::Result<Arc<dyn Classifier>> {
    let _ = (settings, llm);
    anyhow::bail!("llm.base_url: the LLM classifier is not wired yet")
}
