//! The classifiers of the classify stage: the local model trained at start (and retrained as
//! the service runs), the LLM client when configured, and how the two are combined.

use std::sync::Arc;

use anyhow::Context;
use jobwire_classify::Classifier;
use jobwire_classify::cascade::{
    AlertFn, Cascade, CascadeConfig, DailySpendLimit, LiveLocal, SpendGuard,
};
use jobwire_classify::llm::LlmClassifier;
use jobwire_classify::local::{LocalModel, TrainOptions};
use jobwire_classify::retrain::Retrainer;
use jobwire_core::dataset::LabeledPost;
use jobwire_store::Store;

use crate::config::{ClassifierKind, Settings};

/// The hand-labeled sample posts (`data/dev.jsonl`): part of the shipped local model's
/// training data, the demo's posts and the fake LLM's default oracle.
pub const SHIPPED_TRAINING_DATA: &str = include_str!("../../../data/dev.jsonl");

/// The rest of the shipped local model's training data: posts of 64 other channels
/// (`data/train.jsonl`, composed by `scripts/gen_posts.py`).
pub const SHIPPED_EXTRA_TRAINING_DATA: &str = include_str!("../../../data/train.jsonl");

/// Loads the local model's training data: the configured file, or the shipped data
/// (`data/dev.jsonl` and `data/train.jsonl`).
pub fn training_data(settings: &Settings) -> anyhow::Result<Vec<LabeledPost>> {
    match &settings.classifier.training_data {
        Some(path) => {
            let doc = std::fs::read_to_string(path).with_context(|| {
                format!("classifier.training_data: cannot read {}", path.display())
            })?;
            LabeledPost::parse_all(&doc)
                .with_context(|| format!("classifier.training_data: {}", path.display()))
        }
        None => {
            let mut data =
                LabeledPost::parse_all(SHIPPED_TRAINING_DATA).context("shipped training data")?;
            data.extend(
                LabeledPost::parse_all(SHIPPED_EXTRA_TRAINING_DATA)
                    .context("shipped training data (train.jsonl)")?,
            );
            Ok(data)
        }
    }
}

/// Trains the local model on the configured categories.
pub fn train_local(settings: &Settings) -> anyhow::Result<Arc<LocalModel>> {
    let data = training_data(settings)?;
    let slugs: Vec<_> = settings.categories.iter().map(|c| c.slug.clone()).collect();
    let model = LocalModel::train(&data, &slugs, &TrainOptions::default())
        .context("training the local classifier")?;
    Ok(Arc::new(model))
}

/// How posts are classified.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ClassifierMode {
    /// The local model only.
    Local,
    /// The LLM for every post; the local model when it keeps failing.
    Llm,
    /// The local model first, the LLM for what it is unsure of.
    Cascade(CascadeConfig),
}

/// The classifiers of the classify stage: the live local model (retrained as the service
/// runs), the LLM when configured, and how they are combined.
#[derive(Clone)]
pub struct Classifiers {
    pub local: Arc<LiveLocal>,
    pub llm: Option<Arc<LlmClassifier>>,
    pub mode: ClassifierMode,
    /// What the local model was trained on at start (retraining adds the stored examples).
    pub dataset: Arc<Vec<LabeledPost>>,
}

impl std::fmt::Debug for Classifiers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Classifiers")
            .field("mode", &self.mode)
            .field("llm", &self.llm.as_ref().map(|c| c.name().to_owned()))
            .finish()
    }
}

impl Classifiers {
    /// A short name for logs and reports (`local`, `llm:<model>`, `cascade(llm:<model>)`).
    pub fn name(&self) -> String {
        match (&self.mode, &self.llm) {
            (ClassifierMode::Llm, Some(llm)) => llm.name().to_owned(),
            (ClassifierMode::Cascade(_), Some(llm)) => format!("cascade({})", llm.name()),
            _ => "local".to_owned(),
        }
    }

    /// The primary classifier of the stage and its fallback. The cascade's spend limit
    /// counts in `store`; `alert` hears when it is reached.
    pub fn stage_classifiers(
        &self,
        settings: &Settings,
        store: Arc<dyn Store>,
        alert: Option<AlertFn>,
    ) -> (Arc<dyn Classifier>, Option<Arc<dyn Classifier>>) {
        let local: Arc<dyn Classifier> = self.local.clone();
        let Some(llm) = &self.llm else {
            return (local, None);
        };
        let llm_dyn: Arc<dyn Classifier> = llm.clone();
        match self.mode {
            ClassifierMode::Local => (local, None),
            ClassifierMode::Llm => (
                Arc::new(jobwire_classify::cascade::ResumeRouted::new(
                    llm_dyn,
                    self.local.clone(),
                )),
                Some(local),
            ),
            ClassifierMode::Cascade(config) => {
                let spend = settings
                    .llm
                    .as_ref()
                    .and_then(|l| l.daily_spend_limit_usd)
                    .map(|limit| -> Arc<dyn SpendGuard> {
                        metrics::gauge!(crate::telemetry::LLM_DAILY_SPEND_LIMIT_MICROUSD)
                            .set((limit * 1e6).round());
                        Arc::new(DailySpendLimit::new(store.clone(), limit, alert.clone()))
                    });
                let cascade = Cascade::new(self.local.clone(), llm_dyn, config, spend);
                (Arc::new(cascade), Some(local))
            }
        }
    }
}

/// Trains the local model and builds the LLM client the settings ask for.
pub fn classifiers(settings: &Settings) -> anyhow::Result<Classifiers> {
    let dataset = training_data(settings)?;
    let slugs: Vec<_> = settings.categories.iter().map(|c| c.slug.clone()).collect();
    let model = LocalModel::train(&dataset, &slugs, &TrainOptions::default())
        .context("training the local classifier")?;
    let local = Arc::new(LiveLocal::new(Arc::new(model)));
    let (llm, mode) = match (&settings.llm, settings.classifier.kind) {
        (Some(llm), ClassifierKind::Llm) => (Some(crate::llm::build(llm)?), ClassifierMode::Llm),
        (Some(llm), ClassifierKind::Auto | ClassifierKind::Cascade) => (
            Some(crate::llm::build(llm)?),
            ClassifierMode::Cascade(settings.classifier.cascade),
        ),
        _ => (None, ClassifierMode::Local),
    };
    Ok(Classifiers {
        local,
        llm,
        mode,
        dataset: Arc::new(dataset),
    })
}

/// The retrainer of the live local model (and the LLM's few-shot pool).
pub fn retrainer(
    settings: &Settings,
    classifiers: &Classifiers,
    store: Arc<dyn Store>,
) -> Retrainer {
    let slugs: Vec<_> = settings.categories.iter().map(|c| c.slug.clone()).collect();
    let c = &settings.classifier;
    let mut retrainer = Retrainer::new(
        classifiers.dataset.as_ref().clone(),
        slugs,
        TrainOptions::default(),
        store,
        classifiers.local.clone(),
        c.retrain.clone(),
    );
    if let Some(llm) = &classifiers.llm {
        let llm = llm.clone();
        retrainer = retrainer.with_few_shot(Arc::new(move |examples| {
            crate::llm::set_few_shot(&llm, examples);
        }));
    }
    retrainer
}
