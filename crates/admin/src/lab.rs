//! Trying a prompt before it becomes current: the panel's Prompt page asks the configured
//! LLM through a [`PromptLab`] that the binary gives the admin state ([`crate::AdminSettings::prompt_lab`]).

use async_trait::async_trait;

/// Asks the LLM about one text with a prompt template that is not in use.
#[async_trait]
pub trait PromptLab: Send + Sync + std::fmt::Debug {
    /// The model's answer as it came (its JSON), or why there is none. `template` has the
    /// placeholders of `prompts/classify.v5.md`; the categories are the configured ones.
    async fn try_prompt(&self, template: &str, text: &str) -> Result<String, String>;
}
