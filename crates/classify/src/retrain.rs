//! Learning from the LLM and from people while the service runs.
//!
//! Every answer the LLM gives in the cascade is stored as a labeled example (source `llm`);
//! accepted reports and admin re-labels are stored as examples too (sources `report`,
//! `relabel`). The [`Retrainer`] trains a new local model on the shipped dataset plus all of
//! them, and swaps it in ([`LiveLocal::replace`]):
//!
//! * people outrank the LLM and the dataset: a human label replaces every other label of the
//!   same text, and counts [`RetrainConfig::human_weight`] times;
//! * the LLM's labels count [`RetrainConfig::llm_weight`] times (less than a person's) and
//!   never override the dataset;
//! * the human examples are also handed to the LLM as its few-shot pool.
//!
//! It runs on a schedule (`interval`, only when there is something new) and on request: the
//! `jobwire retrain` command sets [`RETRAIN_REQUEST_KEY`] in the store, which every classifier
//! process polls.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use chrono::Utc;
use jobwire_core::dataset::{Label, LabeledPost};
use jobwire_core::{CategorySlug, ExampleId};
use jobwire_store::{ExampleRow, Store, StoreError};
use tokio_util::sync::CancellationToken;

use crate::ClassifyError;
use crate::cascade::LiveLocal;
use crate::local::{LocalModel, TrainOptions};

/// The store namespace and key a retrain request is written under (`jobwire retrain`).
pub const RETRAIN_REQUEST_NAMESPACE: &str = "classifier";
pub const RETRAIN_REQUEST_KEY: &str = "retrain_requested";

/// The id prefix of a stored example in the training set ([`training_set`]): the local
/// model tells the labels the service got from its own traffic by it.
pub const EXAMPLE_ID_PREFIX: &str = "example-";

/// How the retrainer weighs and schedules.
#[derive(Debug, Clone, PartialEq)]
pub struct RetrainConfig {
    /// Retrain this often when new examples arrived.
    pub interval: Duration,
    /// How often a retrain request is looked for.
    pub poll: Duration,
    /// Weight of an LLM-labeled example (a dataset example weighs 1).
    pub llm_weight: f32,
    /// Weight of a person's label (accepted report, re-label).
    pub human_weight: f32,
    /// At most this many stored examples are used (the newest).
    pub max_examples: usize,
}

impl Default for RetrainConfig {
    fn default() -> Self {
        Self {
            interval: Duration::from_secs(3600),
            poll: Duration::from_secs(30),
            llm_weight: 0.5,
            human_weight: 2.0,
            max_examples: 50_000,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum RetrainError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Train(#[from] ClassifyError),
}

/// What one retraining did.
#[derive(Debug, Clone, PartialEq)]
pub struct RetrainReport {
    pub dataset: usize,
    pub llm_examples: usize,
    pub human_examples: usize,
    /// Examples in the training set after merging (the same text counts once).
    pub trained_on: usize,
    pub model_id: String,
    /// The id of the newest example used.
    pub newest_example: ExampleId,
    pub took: Duration,
}

/// Receives the human examples for the LLM's few-shot pool.
pub type FewShotFn = Arc<dyn Fn(&[ExampleRow]) + Send + Sync>;

/// Retrains the live local model from the dataset and the stored examples.
pub struct Retrainer {
    dataset: Vec<LabeledPost>,
    categories: Vec<CategorySlug>,
    options: TrainOptions,
    store: Arc<dyn Store>,
    local: Arc<LiveLocal>,
    few_shot: Option<FewShotFn>,
    config: RetrainConfig,
}

impl std::fmt::Debug for Retrainer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Retrainer")
            .field("dataset", &self.dataset.len())
            .field("config", &self.config)
            .finish()
    }
}

impl Retrainer {
    pub fn new(
        dataset: Vec<LabeledPost>,
        categories: Vec<CategorySlug>,
        options: TrainOptions,
        store: Arc<dyn Store>,
        local: Arc<LiveLocal>,
        config: RetrainConfig,
    ) -> Self {
        Self {
            dataset,
            categories,
            options,
            store,
            local,
            few_shot: None,
            config,
        }
    }

    /// Hands the human examples to the LLM after each retraining (and at start).
    pub fn with_few_shot(mut self, few_shot: FewShotFn) -> Self {
        self.few_shot = Some(few_shot);
        self
    }

    /// Every stored example, oldest first (at most `max_examples`, the newest kept).
    pub async fn stored_examples(&self) -> Result<Vec<ExampleRow>, StoreError> {
        let mut all = Vec::new();
        let mut after = ExampleId(0);
        loop {
            let page = self.store.examples(after, 1000).await?;
            let Some(last) = page.last() else { break };
            after = last.id;
            all.extend(page);
        }
        if all.len() > self.config.max_examples {
            all.drain(..all.len() - self.config.max_examples);
        }
        Ok(all)
    }

    /// Trains on the dataset plus the stored examples and swaps the new model in.
    pub async fn retrain_once(&self) -> Result<RetrainReport, RetrainError> {
        let started = Instant::now();
        let examples = self.stored_examples().await?;
        if let Some(few_shot) = &self.few_shot {
            let human: Vec<ExampleRow> = examples
                .iter()
                .filter(|e| e.source.is_human())
                .cloned()
                .collect();
            few_shot(&human);
        }
        let set = training_set(&self.dataset, &examples, &self.categories, &self.config);
        let trained_on = set.len();
        let categories = self.categories.clone();
        let options = self.options.clone();
        // Training is CPU work of a second or so: keep it off the async workers.
        let model = tokio::task::spawn_blocking(move || {
            LocalModel::train_weighted(&set, &categories, &options)
        })
        .await
        .map_err(|e| ClassifyError::Invalid(format!("training task failed: {e}")))??;
        let model_id = model.id();
        self.local.replace(Arc::new(model));
        let report = RetrainReport {
            dataset: self.dataset.len(),
            llm_examples: examples.iter().filter(|e| !e.source.is_human()).count(),
            human_examples: examples.iter().filter(|e| e.source.is_human()).count(),
            trained_on,
            model_id,
            newest_example: examples.last().map_or(ExampleId(0), |e| e.id),
            took: started.elapsed(),
        };
        crate::events::Retrained(&report).emit();
        Ok(report)
    }

    /// Retrains every `interval` when new examples arrived, and whenever a retrain is
    /// requested in the store, until `shutdown`.
    pub async fn run(self: Arc<Self>, shutdown: CancellationToken) {
        let mut seen_examples: Option<ExampleId> = None;
        let mut seen_request = self.request_marker().await;
        let mut last_train = Instant::now();
        // What was learned before a restart is not lost: train on the stored examples now.
        if self.has_examples_after(ExampleId(0)).await {
            match self.retrain_once().await {
                Ok(report) => seen_examples = Some(report.newest_example),
                Err(e) => {
                    tracing::error!(error = %e, "retraining at start failed; the dataset model stays")
                }
            }
        }
        loop {
            tokio::select! {
                _ = shutdown.cancelled() => return,
                _ = tokio::time::sleep(self.config.poll) => {}
            }
            let request = self.request_marker().await;
            let requested = request.is_some() && request != seen_request;
            let due = last_train.elapsed() >= self.config.interval
                && self
                    .has_examples_after(seen_examples.unwrap_or(ExampleId(0)))
                    .await;
            if !(requested || due) {
                continue;
            }
            match self.retrain_once().await {
                Ok(report) => {
                    seen_examples = Some(report.newest_example);
                    seen_request = request;
                    last_train = Instant::now();
                }
                Err(e) => tracing::error!(error = %e, "retraining failed; the current model stays"),
            }
        }
    }

    async fn has_examples_after(&self, id: ExampleId) -> bool {
        match self.store.examples(id, 1).await {
            Ok(page) => !page.is_empty(),
            Err(e) => {
                tracing::warn!(error = %e, "could not read examples");
                false
            }
        }
    }

    async fn request_marker(&self) -> Option<String> {
        self.store
            .state_get(RETRAIN_REQUEST_NAMESPACE, RETRAIN_REQUEST_KEY)
            .await
            .ok()
            .flatten()
    }
}

/// Asks every classifier process to retrain now (what `jobwire retrain` does).
pub async fn request_retrain(store: &dyn Store) -> Result<(), StoreError> {
    let now = Utc::now();
    store
        .state_put(
            RETRAIN_REQUEST_NAMESPACE,
            RETRAIN_REQUEST_KEY,
            &now.to_rfc3339(),
            now,
        )
        .await
}

/// Merges the dataset and stored examples into one weighted training set: one entry per
/// text (by the model's text fingerprint), people first, then the dataset, then the LLM.
pub fn training_set(
    dataset: &[LabeledPost],
    examples: &[ExampleRow],
    categories: &[CategorySlug],
    config: &RetrainConfig,
) -> Vec<(LabeledPost, f32)> {
    // rank: 3 human, 2 dataset, 1 llm. A later label of the same rank replaces an earlier.
    let mut by_text: HashMap<u64, (u8, LabeledPost, f32)> = HashMap::new();
    let mut order: Vec<u64> = Vec::new();
    let mut put = |rank: u8, post: LabeledPost, weight: f32| {
        let key = LocalModel::fingerprint(&post.text);
        match by_text.get(&key) {
            Some((r, _, _)) if *r > rank => {}
            Some(_) => {
                by_text.insert(key, (rank, post, weight));
            }
            None => {
                order.push(key);
                by_text.insert(key, (rank, post, weight));
            }
        }
    };
    for post in dataset.iter().filter(|p| p.label.is_some()) {
        put(2, post.clone(), 1.0);
    }
    for example in examples {
        let Some(label) = example_label(example, categories) else {
            continue;
        };
        let (rank, weight) = if example.source.is_human() {
            (3, config.human_weight)
        } else {
            (1, config.llm_weight)
        };
        let post = LabeledPost {
            id: format!("{EXAMPLE_ID_PREFIX}{}", example.id),
            channel: String::new(),
            text: example.text.clone(),
            label: Some(label),
            dup_group: None,
        };
        put(rank, post, weight);
    }
    order
        .into_iter()
        .filter_map(|k| by_text.remove(&k).map(|(_, p, w)| (p, w)))
        .collect()
}

fn example_label(example: &ExampleRow, categories: &[CategorySlug]) -> Option<Label> {
    let cats: Vec<CategorySlug> = example
        .categories
        .iter()
        .filter(|c| categories.contains(c))
        .cloned()
        .collect();
    Some(Label {
        is_job: example.is_job,
        kind: example.kind,
        categories: if example.is_job { cats } else { Vec::new() },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use jobwire_core::PostKind;
    use jobwire_store::ExampleSource;

    fn slug(s: &str) -> CategorySlug {
        CategorySlug::parse(s).expect("valid slug")
    }

    fn row(id: i64, text: &str, kind: &str, cats: &[&str], source: ExampleSource) -> ExampleRow {
        ExampleRow {
            id: ExampleId(id),
            post_id: Some(jobwire_core::PostId(id)),
            text: text.to_owned(),
            is_job: kind == "job",
            kind: PostKind::parse(kind).expect("a known kind"),
            categories: cats.iter().map(|c| slug(c)).collect(),
            source,
            created_at: Utc::now(),
        }
    }

    fn dataset_post(text: &str, is_job: bool) -> LabeledPost {
        LabeledPost {
            id: text.to_owned(),
            channel: "@c".to_owned(),
            text: text.to_owned(),
            label: Some(Label {
                is_job,
                kind: if is_job { PostKind::Job } else { PostKind::Ad },
                categories: if is_job {
                    vec![slug("web")]
                } else {
                    Vec::new()
                },
            }),
            dup_group: None,
        }
    }

    #[test]
    fn people_outrank_the_dataset_and_the_llm() {
        let categories = vec![slug("web"), slug("design")];
        let dataset = vec![
            dataset_post("Нужен лендинг на Tilda", true),
            dataset_post("Курс по заработку", false),
        ];
        let examples = vec![
            // The LLM disagrees with the dataset: the dataset wins.
            row(1, "Курс по заработку", "job", &["web"], ExampleSource::Llm),
            // A new text labeled by the LLM is added with a low weight.
            row(
                2,
                "Нарисовать логотип",
                "job",
                &["design", "crypto"],
                ExampleSource::Llm,
            ),
            // An admin re-labels a dataset post: the admin wins.
            row(
                3,
                "Нужен лендинг на Tilda",
                "job",
                &["web", "design"],
                ExampleSource::Relabel,
            ),
            // Then the admin's label of the LLM's text replaces the LLM's.
            row(4, "Нарисовать логотип", "ad", &[], ExampleSource::Report),
        ];
        let config = RetrainConfig::default();
        let set = training_set(&dataset, &examples, &categories, &config);
        assert_eq!(set.len(), 3, "one entry per text");
        let find = |t: &str| set.iter().find(|(p, _)| p.text == t).expect("present");
        let (landing, w) = find("Нужен лендинг на Tilda");
        assert_eq!(*w, config.human_weight);
        assert_eq!(landing.label.as_ref().map(|l| l.categories.len()), Some(2));
        let (course, w) = find("Курс по заработку");
        assert_eq!(*w, 1.0);
        assert_eq!(course.label.as_ref().map(|l| l.is_job), Some(false));
        let (logo, w) = find("Нарисовать логотип");
        assert_eq!(*w, config.human_weight);
        assert_eq!(logo.label.as_ref().map(|l| l.kind), Some(PostKind::Ad));
    }

    #[test]
    fn categories_no_longer_configured_are_dropped() {
        // (A kind the model does not know cannot reach here: `ExampleRow::kind` is a
        // `PostKind`, and the store refuses a row whose stored kind is not one.)
        let categories = vec![slug("web")];
        let examples = vec![row(1, "a", "job", &["web", "crypto"], ExampleSource::Llm)];
        let set = training_set(&[], &examples, &categories, &RetrainConfig::default());
        assert_eq!(set.len(), 1);
        assert_eq!(
            set[0].0.label.as_ref().map(|l| l.categories.clone()),
            Some(vec![slug("web")])
        );
    }
}
