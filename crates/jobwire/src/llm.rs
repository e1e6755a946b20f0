//! Builds the LLM classifier from the settings, keeps its prompt on the current prompt
//! version, and tries prompt versions for the admin panel.

use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use jobwire_classify::llm::{FewShot, LlmClassifier};
use jobwire_store::Store;
use tokio_util::sync::CancellationToken;

use crate::config::LlmSettings;

/// How often a running classifier asks the database for the current prompt version.
pub const PROMPT_POLL: Duration = Duration::from_secs(5);

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

/// Keeps `llm` on the current prompt version (made current in the admin panel): asks the
/// store every `every` and swaps the prompt when another version became current; with none
/// current, the built-in prompt. A version whose template does not pass
/// [`jobwire_classify::llm::check_template`] is not used (logged; the prompt in use stays).
/// A database error is logged and the next poll tries again. Returns when `shutdown` fires.
pub async fn follow_current_prompt(
    store: Arc<dyn Store>,
    llm: Arc<LlmClassifier>,
    every: Duration,
    shutdown: CancellationToken,
) -> anyhow::Result<()> {
    // The (id, activation) applied last: `None` = the built-in prompt.
    let mut applied: Option<(
        jobwire_store::PromptVersionId,
        Option<chrono::DateTime<chrono::Utc>>,
    )> = None;
    let mut refused: Option<jobwire_store::PromptVersionId> = None;
    loop {
        match store.current_prompt_version().await {
            Ok(Some(v)) if applied != Some((v.id, v.activated_at)) && refused != Some(v.id) => {
                match llm.set_prompt(&v.name, &v.text) {
                    Ok(()) => {
                        tracing::info!(version = %v.name, by = ?v.activated_by, "classifying with the current prompt version");
                        applied = Some((v.id, v.activated_at));
                        refused = None;
                    }
                    Err(e) => {
                        tracing::error!(version = %v.name, error = %e, "the current prompt version cannot be used; the prompt in use stays");
                        refused = Some(v.id);
                    }
                }
            }
            Ok(None) if applied.is_some() => {
                llm.use_built_in_prompt();
                tracing::info!("no current prompt version: classifying with the built-in prompt");
                applied = None;
            }
            Ok(_) => {}
            Err(e) => tracing::warn!(error = %e, "could not read the current prompt version"),
        }
        tokio::select! {
            _ = shutdown.cancelled() => return Ok(()),
            _ = tokio::time::sleep(every) => {}
        }
    }
}

/// Tries prompt versions for the admin panel with a client of the configured `[llm]`
/// section (its own, so trying never waits behind the classifier's batches).
#[derive(Debug)]
pub struct PromptLab {
    llm: LlmClassifier,
}

impl PromptLab {
    pub fn new(llm: &LlmSettings) -> anyhow::Result<Self> {
        let llm = LlmClassifier::new(llm.client.clone())
            .context("llm: building the client for trying prompts")?;
        Ok(Self { llm })
    }
}

#[async_trait::async_trait]
impl jobwire_admin::PromptLab for PromptLab {
    async fn try_prompt(&self, template: &str, text: &str) -> Result<String, String> {
        self.llm
            .try_prompt(template, text)
            .await
            .map_err(|e| e.to_string())
    }
}
