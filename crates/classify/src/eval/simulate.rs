//! Learning from its own traffic, simulated: the shipped local model meets the posts of
//! channels it never saw, the cascade sends what it is unsure of to the LLM, the LLM's
//! answers are kept as training examples (as the classify stage keeps them) and the model is
//! retrained on the dataset plus those examples (as the [`crate::retrain::Retrainer`] does)
//! every `every` posts. Each block of posts is scored before the model learns from it.

use std::collections::HashSet;
use std::sync::Arc;

use chrono::Utc;
use jobwire_core::dataset::LabeledPost;
use jobwire_core::{CategorySlug, ExampleId};
use jobwire_store::{ExampleRow, ExampleSource};

use super::evaluate_outputs;
use crate::cascade::{Cascade, CascadeConfig, LiveLocal, is_local};
use crate::local::{LocalModel, TrainOptions};
use crate::retrain::{RetrainConfig, training_set};
use crate::{Classifier, ClassifyError};

/// How the simulation streams and retrains.
#[derive(Debug, Clone)]
pub struct LearningOptions {
    /// Retrain after this many posts (the size of a scored block).
    pub every: usize,
    /// The cascade's thresholds.
    pub config: CascadeConfig,
    /// Weights of the stored examples, as in the service.
    pub retrain: RetrainConfig,
    /// Order of the stream (posts of all channels interleaved, as they arrive).
    pub seed: u64,
}

/// One block of the stream: scored with the model of the posts before it.
#[derive(Debug, Clone, PartialEq)]
pub struct LearningPoint {
    /// Posts streamed before this block.
    pub posts_before: usize,
    /// Posts in this block.
    pub posts: usize,
    /// Share of the block's posts that went to the LLM.
    pub llm_share: f64,
    /// Share of the block's posts the shipped model (no learning) would have sent to the
    /// LLM: the same posts without what the stream taught.
    pub shipped_llm_share: f64,
    /// The shipped model's cascade quality on the block (is_job F1, micro-F1).
    pub shipped_is_job_f1: f64,
    pub shipped_micro_f1: f64,
    /// The cascade's quality on the block.
    pub is_job_f1: f64,
    pub micro_f1: f64,
    /// The LLM alone on the block (the oracle: 1.0).
    pub llm_is_job_f1: f64,
    pub llm_micro_f1: f64,
    /// The local model alone on the block.
    pub local_is_job_f1: f64,
    pub local_micro_f1: f64,
    /// LLM answers kept as examples so far (after this block).
    pub examples: usize,
    /// The model that classified this block.
    pub model: String,
}

/// The stream's order: every labeled post once, shuffled by `seed`; of a dup group only the
/// first post stays (the service drops the copies as near-duplicates before classifying).
pub fn stream_order(data: &[LabeledPost], seed: u64) -> Vec<usize> {
    let mut idx: Vec<usize> = (0..data.len())
        .filter(|&i| data[i].label.is_some())
        .collect();
    let mut rng = seed ^ 0x2545_f491_4f6c_dd1d;
    for i in (1..idx.len()).rev() {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        idx.swap(i, (rng % (i as u64 + 1)) as usize);
    }
    let mut groups = HashSet::new();
    idx.retain(|&i| match &data[i].dup_group {
        Some(g) => groups.insert(g.clone()),
        None => true,
    });
    idx
}

/// Streams `stream` (shuffled, see [`stream_order`]) through the cascade of a local model
/// trained on `base` and `llm`, block by block, retraining after each block on `base` plus
/// the LLM's answers kept so far (those at least [`Classifier::learn_min_confidence`] sure,
/// weighed [`RetrainConfig::llm_weight`], merged by [`training_set`] as in the service).
pub async fn simulate_learning(
    base: &[LabeledPost],
    stream: &[LabeledPost],
    categories: &[CategorySlug],
    opts: &TrainOptions,
    llm: Arc<dyn Classifier>,
    lo: &LearningOptions,
) -> Result<Vec<LearningPoint>, ClassifyError> {
    if lo.every == 0 {
        return Err(ClassifyError::Invalid("retrain every 0 posts".into()));
    }
    let order = stream_order(stream, lo.seed);
    let shipped = Arc::new(LocalModel::train(base, categories, opts)?);
    let mut model = shipped.clone();
    let mut examples: Vec<ExampleRow> = Vec::new();
    let mut points = Vec::new();
    let floor = llm.learn_min_confidence();
    let n_blocks = order.len().div_ceil(lo.every);
    for (b, block_idx) in order.chunks(lo.every).enumerate() {
        let block: Vec<LabeledPost> = block_idx.iter().map(|&i| stream[i].clone()).collect();
        let local = LiveLocal::new(model.clone());
        let (local_report, _) = evaluate_outputs(&local, &block).await?;
        let cascade = Cascade::new(
            Arc::new(LiveLocal::new(model.clone())),
            llm.clone(),
            lo.config,
            None,
        );
        let (report, outputs) = evaluate_outputs(&cascade, &block).await?;
        let (llm_report, _) = evaluate_outputs(llm.as_ref(), &block).await?;
        let (shipped_report, _) = if b == 0 {
            (report.clone(), Vec::new())
        } else {
            let cascade = Cascade::new(
                Arc::new(LiveLocal::new(shipped.clone())),
                llm.clone(),
                lo.config,
                None,
            );
            evaluate_outputs(&cascade, &block).await?
        };
        for (i, c) in &outputs {
            if is_local(c) || c.verdict.confidence < floor {
                continue;
            }
            let v = &c.verdict;
            examples.push(ExampleRow {
                id: ExampleId(examples.len() as i64 + 1),
                post_id: None,
                text: block[*i].text.clone(),
                is_job: v.is_job,
                kind: v.kind,
                categories: v.categories.clone(),
                source: ExampleSource::Llm,
                created_at: Utc::now(),
            });
        }
        points.push(LearningPoint {
            posts_before: b * lo.every,
            posts: report.n_posts,
            llm_share: report.llm_share(),
            shipped_llm_share: shipped_report.llm_share(),
            shipped_is_job_f1: shipped_report.is_job.f1,
            shipped_micro_f1: shipped_report.categories.micro_f1,
            is_job_f1: report.is_job.f1,
            micro_f1: report.categories.micro_f1,
            llm_is_job_f1: llm_report.is_job.f1,
            llm_micro_f1: llm_report.categories.micro_f1,
            local_is_job_f1: local_report.is_job.f1,
            local_micro_f1: local_report.categories.micro_f1,
            examples: examples.len(),
            model: model.id(),
        });
        if b + 1 == n_blocks {
            break;
        }
        let set = training_set(base, &examples, categories, &lo.retrain);
        let (categories, opts) = (categories.to_vec(), opts.clone());
        model = Arc::new(
            tokio::task::spawn_blocking(move || {
                LocalModel::train_weighted(&set, &categories, &opts)
            })
            .await
            .map_err(|e| ClassifyError::Invalid(format!("training task failed: {e}")))??,
        );
    }
    Ok(points)
}

/// The mean of `f` over the points whose block starts at or after `from` posts and before
/// `to`, weighted by block size (`None`: no such block).
pub fn mean_over(
    points: &[LearningPoint],
    from: usize,
    to: usize,
    f: impl Fn(&LearningPoint) -> f64,
) -> Option<f64> {
    let chosen: Vec<&LearningPoint> = points
        .iter()
        .filter(|p| p.posts_before >= from && p.posts_before < to)
        .collect();
    let n: usize = chosen.iter().map(|p| p.posts).sum();
    (n > 0).then(|| chosen.iter().map(|p| f(p) * p.posts as f64).sum::<f64>() / n as f64)
}

/// An LLM that always answers right: the labels of a dataset, by text. For evaluations
/// (`jobwire eval --simulate-learning` without `--llm-url`); a text it has no label for is
/// an [`ClassifyError::Invalid`].
#[derive(Debug, Clone, Default)]
pub struct OracleClassifier {
    labels: std::collections::HashMap<u64, jobwire_core::dataset::Label>,
}

impl OracleClassifier {
    /// The oracle of the labeled posts of `data`.
    pub fn new(data: &[LabeledPost]) -> Self {
        Self {
            labels: data
                .iter()
                .filter_map(|p| {
                    p.label
                        .clone()
                        .map(|l| (LocalModel::fingerprint(&p.text), l))
                })
                .collect(),
        }
    }
}

#[async_trait::async_trait]
impl Classifier for OracleClassifier {
    async fn classify(
        &self,
        post: &crate::ClassifyInput,
    ) -> Result<crate::Classified, ClassifyError> {
        let label = self
            .labels
            .get(&LocalModel::fingerprint(&post.text))
            .ok_or_else(|| {
                ClassifyError::Invalid(format!("the oracle has no label for {}", post.id))
            })?;
        Ok(crate::Classified {
            verdict: jobwire_core::Verdict {
                is_job: label.is_job,
                kind: label.kind,
                categories: label.categories.clone(),
                confidence: 1.0,
                category_confidence: 1.0,
            },
            model: "oracle".into(),
            prompt_version: "oracle".into(),
            tokens_in: 0,
            tokens_out: 0,
            latency_ms: 0,
            extraction: None,
            cost_usd: 0.0,
        })
    }

    fn max_batch(&self) -> usize {
        30
    }

    fn name(&self) -> &str {
        "oracle"
    }
}
