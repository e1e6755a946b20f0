//! `[classifier]`: which classifier decides, how the classify stage paces itself, where the
//! cascade sends a post to the LLM, and how the local model learns. The section as the file
//! writes it, and [`ClassifierConfig`], what it resolves to.

use std::path::PathBuf;
use std::time::Duration;

use jobwire_core::config::InvalidKey;
use serde::Deserialize;

use crate::cascade::{CascadeConfig, DEFAULT_CATEGORY_THRESHOLD};
use crate::retrain::RetrainConfig;
use crate::stage::ClassifyStageConfig;

/// Which classifier decides.
#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "lowercase")]
pub enum ClassifierKind {
    /// The cascade when `[llm]` is configured, else the local model.
    #[default]
    Auto,
    /// The local model only.
    Local,
    /// The LLM for every post (the local model only when it keeps failing).
    Llm,
    /// The local model first; posts it is unsure of go to the LLM.
    Cascade,
}

/// `[classifier]` as the file writes it.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
#[serde(default)]
pub struct ClassifierSection {
    pub kind: ClassifierKind,
    /// Labeled JSONL the local model is trained on; the shipped `data/dev.jsonl` when unset.
    pub training_data: Option<PathBuf>,
    pub concurrency: usize,
    /// With an LLM: after this many failed attempts the local model answers instead.
    pub fallback_after: u32,
    /// First wait before a post the classifier could not answer is tried again (doubles
    /// per attempt, up to `retry_max_secs`).
    pub retry_base_ms: u64,
    pub retry_max_secs: u64,
    /// Cascade: posts whose local confidence is below this go to the LLM (choose it with
    /// `jobwire eval --classifier cascade`).
    pub cascade_threshold: f32,
    /// Cascade: jobs whose local category confidence is below this go to the LLM too (0:
    /// route on is-job alone). Chosen with `jobwire eval --classifier cascade`.
    pub cascade_category_threshold: f32,
    /// How long a batch of posts waits to fill before it is classified while other batches
    /// are in flight (milliseconds); with none in flight a post goes at once.
    pub batch_linger_ms: u64,
    /// Keep the LLM's answers as training examples for the local model.
    pub learn_from_llm: bool,
    /// Retrain the local model this often when new examples arrived (seconds).
    pub retrain_interval_secs: u64,
    /// Weight of an LLM-labeled example in training (a dataset example weighs 1).
    pub llm_example_weight: f32,
    /// Weight of a person's label (accepted report, admin re-label).
    pub human_example_weight: f32,
}

impl Default for ClassifierSection {
    fn default() -> Self {
        Self {
            kind: ClassifierKind::Auto,
            training_data: None,
            concurrency: 64,
            fallback_after: 3,
            retry_base_ms: 5000,
            retry_max_secs: 600,
            cascade_threshold: CascadeConfig::default().threshold,
            cascade_category_threshold: DEFAULT_CATEGORY_THRESHOLD,
            batch_linger_ms: 10,
            learn_from_llm: true,
            retrain_interval_secs: 3600,
            llm_example_weight: 0.5,
            human_example_weight: 2.0,
        }
    }
}

/// `[classifier]` checked: what the classify stage, the cascade and the retrainer are built
/// from.
#[derive(Debug, Clone)]
pub struct ClassifierConfig {
    pub kind: ClassifierKind,
    /// Labeled JSONL the local model is trained on; the shipped dataset when `None`.
    pub training_data: Option<PathBuf>,
    pub stage: ClassifyStageConfig,
    pub cascade: CascadeConfig,
    pub retrain: RetrainConfig,
}

impl ClassifierSection {
    /// Checks the thresholds (0 to 1) and the example weights (finite, at least 0).
    pub fn resolve(&self) -> Result<ClassifierConfig, InvalidKey> {
        for (key, t) in [
            ("classifier.cascade_threshold", self.cascade_threshold),
            (
                "classifier.cascade_category_threshold",
                self.cascade_category_threshold,
            ),
        ] {
            if !(0.0..=1.0).contains(&t) {
                return Err(InvalidKey::new(key, "must be between 0 and 1"));
            }
        }
        for (key, w) in [
            ("classifier.llm_example_weight", self.llm_example_weight),
            ("classifier.human_example_weight", self.human_example_weight),
        ] {
            if !(w.is_finite() && w >= 0.0) {
                return Err(InvalidKey::new(key, "must be a number of at least 0"));
            }
        }
        Ok(ClassifierConfig {
            kind: self.kind,
            training_data: self.training_data.clone(),
            stage: ClassifyStageConfig {
                concurrency: self.concurrency,
                fallback_after: self.fallback_after,
                retry_base: Duration::from_millis(self.retry_base_ms.max(1)),
                retry_max: Duration::from_secs(self.retry_max_secs.max(1)),
                batch_linger: Duration::from_millis(self.batch_linger_ms),
                learn_from_llm: self.learn_from_llm,
            },
            cascade: CascadeConfig {
                threshold: self.cascade_threshold,
                category_threshold: self.cascade_category_threshold,
            },
            retrain: RetrainConfig {
                interval: Duration::from_secs(self.retrain_interval_secs.max(1)),
                llm_weight: self.llm_example_weight,
                human_weight: self.human_example_weight,
                ..RetrainConfig::default()
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_resolve_to_the_stage_and_cascade_defaults() {
        let c = ClassifierSection::default()
            .resolve()
            .expect("defaults are valid");
        assert_eq!(c.cascade, CascadeConfig::default());
        assert_eq!(c.stage.batch_linger, Duration::from_millis(10));
        assert_eq!(c.retrain.interval, Duration::from_secs(3600));
    }

    #[test]
    fn a_threshold_out_of_range_names_its_key() {
        let s = ClassifierSection {
            cascade_category_threshold: 1.5,
            ..ClassifierSection::default()
        };
        let e = s.resolve().expect_err("1.5 is out of range");
        assert_eq!(e.key, "classifier.cascade_category_threshold");
    }
}
