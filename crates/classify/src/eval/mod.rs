//! Measuring a classifier against a labeled dataset, and cross-validating the local model.
//!
//! An [`EvalReport`] holds what an evaluation found and a [`Scorer`] accumulates it;
//! [`evaluate`] runs any classifier over a dataset, [`cross_validate`] the local model over
//! k folds, and [`evaluate_cascade`] the cascade against its parts.

mod cascade;
pub(crate) mod cross_validation;
mod report;
mod scorer;
mod simulate;

use futures::StreamExt;
use jobwire_core::dataset::LabeledPost;

use crate::{Classified, Classifier, ClassifyError, ClassifyInput};

pub use cascade::{CURVE_THRESHOLDS, CascadeEval, CurvePoint, SelfTraining, evaluate_cascade};
pub use cross_validation::{
    FoldsBy, assign_channel_folds, assign_folds, cross_validate, cross_validate_with,
    extra_training,
};
pub use report::{CategoryScores, EvalReport, ExtractionScores, Prf, Usage};
pub use scorer::Scorer;
pub use simulate::{
    LearningOptions, LearningPoint, OracleClassifier, mean_over, simulate_learning, stream_order,
};

/// How many posts [`evaluate`] classifies at the same time.
pub const EVAL_CONCURRENCY: usize = 8;

/// Classifies every labeled post of `data` (at most [`EVAL_CONCURRENCY`] at a time) and
/// scores the verdicts. Unlabeled posts are skipped. The first failure aborts the evaluation.
pub async fn evaluate(
    classifier: &dyn Classifier,
    data: &[LabeledPost],
) -> Result<EvalReport, ClassifyError> {
    let (report, _) = evaluate_outputs(classifier, data).await?;
    Ok(report)
}

/// Classifies every labeled post (in the classifier's batches, several batches at once) and
/// scores the verdicts; also returns each labeled post's index in `data` and its result, for
/// scoring what the verdict does not hold (extraction, usage). A post the classifier cannot
/// answer fails the evaluation.
pub async fn evaluate_outputs(
    classifier: &dyn Classifier,
    data: &[LabeledPost],
) -> Result<(EvalReport, Vec<(usize, Classified)>), ClassifyError> {
    let labeled: Vec<usize> = (0..data.len())
        .filter(|&i| data[i].label.is_some())
        .collect();
    let batch = classifier.max_batch().max(1);
    let chunks: Vec<&[usize]> = labeled.chunks(batch).collect();
    let answers: Vec<Vec<Result<Classified, ClassifyError>>> = futures::stream::iter(chunks)
        .map(|chunk| async move {
            let inputs: Vec<ClassifyInput> = chunk
                .iter()
                .map(|&i| ClassifyInput {
                    id: data[i].id.clone(),
                    text: data[i].text.clone(),
                    channel: data[i].channel.clone(),
                })
                .collect();
            classifier.classify_many(&inputs).await
        })
        .buffered(EVAL_CONCURRENCY)
        .collect()
        .await;
    let mut scorer = Scorer::default();
    let mut outputs = Vec::with_capacity(labeled.len());
    let mut usage = Usage::default();
    for (&i, result) in labeled.iter().zip(answers.into_iter().flatten()) {
        let classified = result?;
        if let Some(label) = &data[i].label {
            scorer.add(
                label,
                &classified.verdict,
                classifier.was_trained_on(&data[i].text),
            );
        }
        if !crate::cascade::is_local(&classified) {
            usage.llm_posts += 1;
        }
        usage.tokens_in += u64::from(classified.tokens_in);
        usage.tokens_out += u64::from(classified.tokens_out);
        usage.cost_usd += classified.cost_usd;
        outputs.push((i, classified));
    }
    let mut report = scorer.report(None);
    report.usage = usage;
    Ok((report, outputs))
}
