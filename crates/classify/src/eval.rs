//! Measuring a classifier against a labeled dataset, and cross-validating the local model.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use futures::StreamExt;
use jobwire_core::dataset::{Label, LabeledPost};
use jobwire_core::{CategorySlug, PostKind, Verdict};
use serde_json::{Value, json};

use crate::local::{LocalModel, TrainOptions};
use crate::{Classified, Classifier, ClassifyError, ClassifyInput};

/// How many posts [`evaluate`] classifies at the same time.
pub const EVAL_CONCURRENCY: usize = 8;

/// Precision, recall and F1 of one binary decision.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Prf {
    /// Of the positives predicted, the share that were right (0 when none predicted).
    pub precision: f64,
    /// Of the true positives, the share that were found (0 when there were none).
    pub recall: f64,
    /// Harmonic mean of precision and recall (0 when both are 0).
    pub f1: f64,
}

impl Prf {
    /// From true-positive, false-positive and false-negative counts.
    pub fn from_counts(tp: usize, fp: usize, fn_: usize) -> Self {
        let ratio = |a: usize, b: usize| if b == 0 { 0.0 } else { a as f64 / b as f64 };
        let precision = ratio(tp, tp + fp);
        let recall = ratio(tp, tp + fn_);
        let f1 = if precision + recall == 0.0 {
            0.0
        } else {
            2.0 * precision * recall / (precision + recall)
        };
        Self {
            precision,
            recall,
            f1,
        }
    }
}

/// Category quality over the posts that truly are jobs.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CategoryScores {
    /// Micro-averaged F1 over all (job post, category) decisions.
    pub micro_f1: f64,
    /// F1 per category (every configured category and every category seen in the labels or
    /// the predictions).
    pub per_category: BTreeMap<String, f64>,
}

/// What a classifier got right and wrong on a labeled dataset.
#[derive(Debug, Clone, PartialEq)]
pub struct EvalReport {
    /// The job / not-job decision (a job is the positive class).
    pub is_job: Prf,
    /// Categories, over true job posts.
    pub categories: CategoryScores,
    /// Confusion of kinds: `kinds[truth][predicted]` = number of posts.
    pub kinds: BTreeMap<PostKind, BTreeMap<PostKind, usize>>,
    /// Labeled posts evaluated.
    pub n_posts: usize,
    /// Posts of the evaluated file the classifier was trained on (0 for an LLM).
    pub trained_on_eval_posts: usize,
    /// `Some(k)` when the numbers come from k-fold cross-validation.
    pub cross_validated: Option<usize>,
    /// Brier score of `confidence` as a probability that `is_job` is right (lower is better).
    pub confidence_brier: f64,
    /// Expected calibration error of `confidence` over 10 equal-width bins.
    pub confidence_ece: f64,
    /// What reaching the answers took (posts sent to the LLM, requests, tokens, cost).
    pub usage: Usage,
    /// Extraction accuracy, for datasets that carry the fields.
    pub extraction: Option<ExtractionScores>,
}

/// What classifying the evaluated posts cost.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Usage {
    /// Posts that went to the LLM.
    pub llm_posts: usize,
    /// LLM requests answered with usable content (requests that carried re-asked posts
    /// included).
    pub llm_requests: u64,
    /// LLM attempts that failed: 429, 5xx, timeouts, refused 4xx, unusable content (the last
    /// is billed by providers too).
    pub llm_failed_requests: u64,
    pub tokens_in: u64,
    pub tokens_out: u64,
    pub cost_usd: f64,
}

/// Share of extracted fields that match the dataset's, per field, over the jobs that have
/// the field labeled.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ExtractionScores {
    /// `(field, correct, labeled)`.
    pub fields: Vec<(String, usize, usize)>,
}

impl ExtractionScores {
    pub fn accuracy(&self, field: &str) -> Option<f64> {
        self.fields
            .iter()
            .find(|(f, _, _)| f == field)
            .filter(|(_, _, n)| *n > 0)
            .map(|(_, ok, n)| *ok as f64 / *n as f64)
    }
}

impl EvalReport {
    /// The machine-readable form:
    /// `{"is_job": {"precision", "recall", "f1"}, "categories": {"micro_f1", "per_category"},
    /// "kinds": {truth: {predicted: n}}, "n_posts", "trained_on_eval_posts", "cross_validated"}`.
    pub fn to_json(&self) -> Value {
        let kinds: serde_json::Map<String, Value> = self
            .kinds
            .iter()
            .map(|(truth, row)| {
                let row: serde_json::Map<String, Value> = row
                    .iter()
                    .map(|(pred, n)| (pred.as_str().to_owned(), json!(n)))
                    .collect();
                (truth.as_str().to_owned(), Value::Object(row))
            })
            .collect();
        json!({
            "is_job": {
                "precision": self.is_job.precision,
                "recall": self.is_job.recall,
                "f1": self.is_job.f1,
            },
            "categories": {
                "micro_f1": self.categories.micro_f1,
                "per_category": self.categories.per_category,
            },
            "kinds": kinds,
            "n_posts": self.n_posts,
            "trained_on_eval_posts": self.trained_on_eval_posts,
            "cross_validated": self.cross_validated,
            "llm_share": self.llm_share(),
            "llm_requests_per_1000": self.llm_requests_per_1000(),
            "llm_requests_per_100_llm_posts": self.llm_requests_per_100_llm_posts(),
            "llm_failed_requests_per_1000": if self.n_posts == 0 {
                0.0
            } else {
                self.usage.llm_failed_requests as f64 * 1000.0 / self.n_posts as f64
            },
            "tokens_per_post": self.tokens_per_post(),
            "cost_usd": self.usage.cost_usd,
            "extraction": self.extraction.as_ref().map(|e| {
                e.fields
                    .iter()
                    .map(|(f, ok, n)| {
                        (
                            f.clone(),
                            json!({ "accuracy": if *n == 0 { 0.0 } else { *ok as f64 / *n as f64 }, "labeled": n }),
                        )
                    })
                    .collect::<serde_json::Map<String, Value>>()
            }),
        })
    }

    /// Share of the posts that went to the LLM.
    pub fn llm_share(&self) -> f64 {
        if self.n_posts == 0 {
            0.0
        } else {
            self.usage.llm_posts as f64 / self.n_posts as f64
        }
    }

    /// LLM requests per 1,000 evaluated posts.
    pub fn llm_requests_per_1000(&self) -> f64 {
        if self.n_posts == 0 {
            0.0
        } else {
            self.usage.llm_requests as f64 * 1000.0 / self.n_posts as f64
        }
    }

    /// Answered LLM requests per 100 posts that reached the LLM (how full the requests were:
    /// 100 / the mean posts per request; failed attempts are counted apart).
    pub fn llm_requests_per_100_llm_posts(&self) -> f64 {
        if self.usage.llm_posts == 0 {
            0.0
        } else {
            self.usage.llm_requests as f64 * 100.0 / self.usage.llm_posts as f64
        }
    }

    /// LLM tokens (in + out) per evaluated post.
    pub fn tokens_per_post(&self) -> f64 {
        if self.n_posts == 0 {
            0.0
        } else {
            (self.usage.tokens_in + self.usage.tokens_out) as f64 / self.n_posts as f64
        }
    }
}

impl fmt::Display for EvalReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.cross_validated {
            Some(k) => writeln!(f, "{} posts, {k}-fold cross-validation", self.n_posts)?,
            None => writeln!(
                f,
                "{} posts ({} of them in the training set)",
                self.n_posts, self.trained_on_eval_posts
            )?,
        }
        writeln!(
            f,
            "is_job      precision {:.3}  recall {:.3}  F1 {:.3}",
            self.is_job.precision, self.is_job.recall, self.is_job.f1
        )?;
        writeln!(
            f,
            "confidence  Brier {:.3}  ECE {:.3}",
            self.confidence_brier, self.confidence_ece
        )?;
        writeln!(f, "categories  micro-F1 {:.3}", self.categories.micro_f1)?;
        for (slug, f1) in &self.categories.per_category {
            writeln!(f, "  {slug:<12} F1 {f1:.3}")?;
        }
        write!(f, "kinds (rows: truth, columns: predicted)\n  {:<8}", "")?;
        for k in PostKind::ALL {
            write!(f, "{:>8}", k.as_str())?;
        }
        writeln!(f)?;
        for (truth, row) in &self.kinds {
            write!(f, "  {:<8}", truth.as_str())?;
            for k in PostKind::ALL {
                write!(f, "{:>8}", row.get(&k).copied().unwrap_or(0))?;
            }
            writeln!(f)?;
        }
        writeln!(
            f,
            "LLM         {:.1}% of posts, {:.1} answered requests per 1000 posts ({:.1} per 100 posts sent to it; {} failed attempts), {:.1} tokens per post, ${:.4}",
            self.llm_share() * 100.0,
            self.llm_requests_per_1000(),
            self.llm_requests_per_100_llm_posts(),
            self.usage.llm_failed_requests,
            self.tokens_per_post(),
            self.usage.cost_usd
        )?;
        if let Some(x) = &self.extraction {
            for (field, ok, n) in &x.fields {
                if *n > 0 {
                    writeln!(
                        f,
                        "extraction  {field:<10} {:.3} ({ok}/{n})",
                        *ok as f64 / *n as f64
                    )?;
                }
            }
        }
        Ok(())
    }
}

/// Accumulates (truth, verdict) pairs into an [`EvalReport`].
#[derive(Debug, Clone, Default)]
pub struct Scorer {
    categories: BTreeSet<String>,
    job: (usize, usize, usize),
    cat_micro: (usize, usize, usize),
    per_cat: BTreeMap<String, (usize, usize, usize)>,
    kinds: BTreeMap<PostKind, BTreeMap<PostKind, usize>>,
    n: usize,
    trained_on: usize,
    confidence: Vec<(f64, bool)>,
}

impl Scorer {
    /// A scorer that reports at least these categories (even when never seen).
    pub fn new(categories: &[CategorySlug]) -> Self {
        Self {
            categories: categories.iter().map(|c| c.as_str().to_owned()).collect(),
            ..Self::default()
        }
    }

    /// Adds one decision. `trained_on` marks a post the classifier was trained on.
    pub fn add(&mut self, truth: &Label, verdict: &Verdict, trained_on: bool) {
        self.n += 1;
        self.trained_on += usize::from(trained_on);
        match (truth.is_job, verdict.is_job) {
            (true, true) => self.job.0 += 1,
            (false, true) => self.job.1 += 1,
            (true, false) => self.job.2 += 1,
            (false, false) => {}
        }
        self.confidence.push((
            f64::from(verdict.confidence),
            truth.is_job == verdict.is_job,
        ));
        *self
            .kinds
            .entry(truth.kind)
            .or_default()
            .entry(verdict.kind)
            .or_default() += 1;
        if truth.is_job {
            let t: BTreeSet<&str> = truth.categories.iter().map(|c| c.as_str()).collect();
            let p: BTreeSet<&str> = verdict.categories.iter().map(|c| c.as_str()).collect();
            for c in t.union(&p) {
                let e = self.per_cat.entry((*c).to_owned()).or_default();
                match (t.contains(c), p.contains(c)) {
                    (true, true) => {
                        e.0 += 1;
                        self.cat_micro.0 += 1;
                    }
                    (false, true) => {
                        e.1 += 1;
                        self.cat_micro.1 += 1;
                    }
                    (true, false) => {
                        e.2 += 1;
                        self.cat_micro.2 += 1;
                    }
                    (false, false) => {}
                }
            }
        }
    }

    /// The report so far.
    pub fn report(&self, cross_validated: Option<usize>) -> EvalReport {
        let mut kinds = BTreeMap::new();
        for truth in PostKind::ALL {
            let row: BTreeMap<PostKind, usize> = PostKind::ALL
                .into_iter()
                .map(|p| {
                    let n = self
                        .kinds
                        .get(&truth)
                        .and_then(|r| r.get(&p))
                        .copied()
                        .unwrap_or(0);
                    (p, n)
                })
                .collect();
            kinds.insert(truth, row);
        }
        let mut per_category: BTreeMap<String, f64> =
            self.categories.iter().map(|c| (c.clone(), 0.0)).collect();
        for (c, &(tp, fp, fn_)) in &self.per_cat {
            per_category.insert(c.clone(), Prf::from_counts(tp, fp, fn_).f1);
        }
        let (brier, ece) = calibration(&self.confidence);
        EvalReport {
            is_job: Prf::from_counts(self.job.0, self.job.1, self.job.2),
            categories: CategoryScores {
                micro_f1: Prf::from_counts(self.cat_micro.0, self.cat_micro.1, self.cat_micro.2).f1,
                per_category,
            },
            kinds,
            n_posts: self.n,
            trained_on_eval_posts: self.trained_on,
            cross_validated,
            confidence_brier: brier,
            confidence_ece: ece,
            usage: Usage::default(),
            extraction: None,
        }
    }
}

/// (Brier score, expected calibration error over 10 bins) of confidences.
fn calibration(points: &[(f64, bool)]) -> (f64, f64) {
    if points.is_empty() {
        return (0.0, 0.0);
    }
    let n = points.len() as f64;
    let brier = points
        .iter()
        .map(|&(p, ok)| (p - f64::from(u8::from(ok))).powi(2))
        .sum::<f64>()
        / n;
    let mut bins = [(0.0f64, 0.0f64, 0usize); 10];
    for &(p, ok) in points {
        let b = ((p * 10.0) as usize).min(9);
        bins[b].0 += p;
        bins[b].1 += f64::from(u8::from(ok));
        bins[b].2 += 1;
    }
    let ece = bins
        .iter()
        .filter(|b| b.2 > 0)
        .map(|&(sp, so, _)| (sp - so).abs() / n)
        .sum::<f64>();
    (brier, ece)
}

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

/// One point of the cascade's curve: with this threshold, this share of posts goes to the
/// LLM and the combined answers score this.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CurvePoint {
    pub threshold: f32,
    pub llm_share: f64,
    pub is_job: Prf,
    pub micro_f1: f64,
}

/// The cascade measured on a labeled dataset, the local model cross-validated.
#[derive(Debug, Clone, PartialEq)]
pub struct CascadeEval {
    /// The local model alone (k-fold cross-validated).
    pub local: EvalReport,
    /// The LLM alone on every post.
    pub llm: EvalReport,
    /// The cascade at the chosen threshold, run for real (its LLM requests are counted).
    pub cascade: EvalReport,
    pub threshold: f32,
    /// Combined quality against the LLM share, threshold by threshold.
    pub curve: Vec<CurvePoint>,
    /// The smallest LLM share whose is-job F1 is within `tolerance` of the LLM alone.
    pub recommended: Option<CurvePoint>,
    pub tolerance: f64,
    /// What the cascade extracted, by index into the evaluated data.
    pub extractions: Vec<(usize, Option<jobwire_core::extract::Extraction>)>,
    /// Learning from the LLM: the local model trained on half of each training fold's
    /// labels, then on that half plus the LLM's answers for the other half (as if it were
    /// unlabeled traffic), cross-validated on the same folds.
    pub self_training: Option<SelfTraining>,
}

/// How the local model grows when the LLM's answers are added to its training.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SelfTraining {
    /// Local model on half of the labels: is_job F1, micro F1.
    pub half_labels: (f64, f64),
    /// The same half plus the LLM's answers on the other half (weight 0.5).
    pub half_plus_llm: (f64, f64),
    /// All labels (the usual cross-validation).
    pub all_labels: (f64, f64),
    /// Share of held-out posts below the cascade's threshold (those that would go to the
    /// LLM) with the half-labels model, and with the model that also learned from the LLM's
    /// answers.
    pub unsure_share: (f64, f64),
}

/// Thresholds the curve is drawn at.
pub const CURVE_THRESHOLDS: [f32; 12] = [
    0.5, 0.6, 0.7, 0.75, 0.8, 0.85, 0.88, 0.9, 0.92, 0.94, 0.96, 0.98,
];

/// Evaluates the cascade: per fold, trains the local model on the other folds; the LLM
/// answers every post once (for the curve and the LLM-alone score); then the real cascade
/// runs at `threshold`, all folds at once (as posts arrive in a service, so the LLM client
/// gathers their unsure posts into its requests), and its LLM share and requests are what
/// the service would see. `count_requests` reads the LLM's counters (answered requests,
/// failed attempts), before and after.
#[allow(clippy::too_many_arguments)]
pub async fn evaluate_cascade(
    data: &[LabeledPost],
    categories: &[CategorySlug],
    k: usize,
    seed: u64,
    opts: &TrainOptions,
    llm: std::sync::Arc<dyn Classifier>,
    threshold: f32,
    count_requests: &(dyn Fn() -> (u64, u64) + Send + Sync),
) -> Result<CascadeEval, ClassifyError> {
    use crate::cascade::{Cascade, CascadeConfig, LiveLocal};
    if k < 2 {
        return Err(ClassifyError::Invalid(format!(
            "cross-validation needs k >= 2, got {k}"
        )));
    }
    let folds = assign_folds(data, k, seed);
    // Held-out local verdicts of every labeled post, and the fold models.
    let mut local_verdicts: Vec<Option<Verdict>> = vec![None; data.len()];
    let mut models = Vec::with_capacity(k);
    for fold in 0..k {
        let train: Vec<LabeledPost> = data
            .iter()
            .zip(&folds)
            .filter(|(_, f)| f.is_some_and(|f| f != fold))
            .map(|(p, _)| p.clone())
            .collect();
        let model = std::sync::Arc::new(LocalModel::train(&train, categories, opts)?);
        for (i, f) in folds.iter().enumerate() {
            if *f == Some(fold) {
                local_verdicts[i] = Some(model.predict(&data[i].text));
            }
        }
        models.push(model);
    }
    let mut local_scorer = Scorer::new(categories);
    for (post, v) in data.iter().zip(&local_verdicts) {
        if let (Some(label), Some(v)) = (&post.label, v) {
            local_scorer.add(label, v, false);
        }
    }
    let local = local_scorer.report(Some(k));

    // The LLM on every post.
    let before = count_requests();
    let (mut llm_report, llm_outputs) = evaluate_outputs(llm.as_ref(), data).await?;
    let after = count_requests();
    llm_report.usage.llm_requests = after.0.saturating_sub(before.0);
    llm_report.usage.llm_failed_requests = after.1.saturating_sub(before.1);
    let mut llm_verdicts: Vec<Option<Verdict>> = vec![None; data.len()];
    for (i, c) in &llm_outputs {
        llm_verdicts[*i] = Some(c.verdict.clone());
    }

    // The curve.
    let mut curve = Vec::new();
    for t in CURVE_THRESHOLDS {
        let mut scorer = Scorer::new(categories);
        let mut sent = 0usize;
        for ((post, lv), mv) in data.iter().zip(&local_verdicts).zip(&llm_verdicts) {
            let (Some(label), Some(lv), Some(mv)) = (&post.label, lv, mv) else {
                continue;
            };
            let v = if lv.confidence < t {
                sent += 1;
                mv
            } else {
                lv
            };
            scorer.add(label, v, false);
        }
        let r = scorer.report(Some(k));
        curve.push(CurvePoint {
            threshold: t,
            llm_share: if r.n_posts == 0 {
                0.0
            } else {
                sent as f64 / r.n_posts as f64
            },
            is_job: r.is_job,
            micro_f1: r.categories.micro_f1,
        });
    }
    // Learning from the LLM's answers on "unlabeled" posts.
    let mut half_scorer = Scorer::new(categories);
    let mut plus_scorer = Scorer::new(categories);
    // (unsure with the half model, unsure with half + LLM, held-out posts)
    let mut unsure = (0usize, 0usize, 0usize);
    for fold in 0..k {
        let mut half: Vec<(LabeledPost, f32)> = Vec::new();
        let mut plus: Vec<(LabeledPost, f32)> = Vec::new();
        for (n, i) in (0..data.len())
            .filter(|&i| folds[i].is_some_and(|f| f != fold))
            .enumerate()
        {
            if n % 2 == 0 {
                half.push((data[i].clone(), 1.0));
                plus.push((data[i].clone(), 1.0));
            } else if let Some(v) = &llm_verdicts[i] {
                let mut post = data[i].clone();
                post.label = Some(Label {
                    is_job: v.is_job,
                    kind: v.kind,
                    categories: v.categories.clone(),
                });
                plus.push((post, 0.5));
            }
        }
        let half_model = LocalModel::train_weighted(&half, categories, opts)?;
        let plus_model = LocalModel::train_weighted(&plus, categories, opts)?;
        for (i, f) in folds.iter().enumerate() {
            if *f != Some(fold) {
                continue;
            }
            if let Some(label) = &data[i].label {
                let (h, p) = (
                    half_model.predict(&data[i].text),
                    plus_model.predict(&data[i].text),
                );
                unsure.0 += usize::from(h.confidence < threshold);
                unsure.1 += usize::from(p.confidence < threshold);
                unsure.2 += 1;
                half_scorer.add(label, &h, false);
                plus_scorer.add(label, &p, false);
            }
        }
    }
    let (h, p) = (half_scorer.report(Some(k)), plus_scorer.report(Some(k)));
    let self_training = Some(SelfTraining {
        half_labels: (h.is_job.f1, h.categories.micro_f1),
        half_plus_llm: (p.is_job.f1, p.categories.micro_f1),
        all_labels: (local.is_job.f1, local.categories.micro_f1),
        unsure_share: (
            unsure.0 as f64 / unsure.2.max(1) as f64,
            unsure.1 as f64 / unsure.2.max(1) as f64,
        ),
    });

    let tolerance = 0.01;
    let recommended = curve
        .iter()
        .filter(|p| p.is_job.f1 >= llm_report.is_job.f1 - tolerance)
        .min_by(|a, b| a.llm_share.total_cmp(&b.llm_share))
        .copied();

    // The real cascade at the chosen threshold: every fold's model on its held-out posts, all
    // folds at once, as posts arrive in a running service (the LLM's pool gathers the
    // unsure posts of every fold into its requests).
    let mut scorer = Scorer::new(categories);
    let mut usage = Usage::default();
    let mut extractions = Vec::new();
    let before = count_requests();
    let runs = models.into_iter().enumerate().map(|(fold, model)| {
        let held_at: Vec<usize> = (0..data.len())
            .filter(|&i| folds[i] == Some(fold))
            .collect();
        let held: Vec<LabeledPost> = held_at.iter().map(|&i| data[i].clone()).collect();
        let cascade = Cascade::new(
            std::sync::Arc::new(LiveLocal::new(model)),
            llm.clone(),
            CascadeConfig { threshold },
            None,
        );
        async move {
            let result = evaluate_outputs(&cascade, &held).await;
            (held_at, held, result)
        }
    });
    for (held_at, held, result) in futures::future::join_all(runs).await {
        let (r, outputs) = result?;
        usage.llm_posts += r.usage.llm_posts;
        usage.tokens_in += r.usage.tokens_in;
        usage.tokens_out += r.usage.tokens_out;
        usage.cost_usd += r.usage.cost_usd;
        for (i, c) in outputs {
            if let Some(label) = &held[i].label {
                scorer.add(label, &c.verdict, false);
            }
            extractions.push((held_at[i], c.extraction));
        }
    }
    let after = count_requests();
    usage.llm_requests = after.0.saturating_sub(before.0);
    usage.llm_failed_requests = after.1.saturating_sub(before.1);
    let mut cascade = scorer.report(Some(k));
    cascade.usage = usage;
    Ok(CascadeEval {
        local,
        llm: llm_report,
        cascade,
        threshold,
        curve,
        recommended,
        tolerance,
        extractions,
        self_training,
    })
}

impl CascadeEval {
    pub fn to_json(&self) -> Value {
        let mut v = self.cascade.to_json();
        if let Some(map) = v.as_object_mut() {
            map.insert("threshold".into(), json!(self.threshold));
            map.insert("local".into(), self.local.to_json());
            map.insert("llm".into(), self.llm.to_json());
            map.insert(
                "curve".into(),
                Value::Array(
                    self.curve
                        .iter()
                        .map(|p| {
                            json!({
                                "threshold": p.threshold,
                                "llm_share": p.llm_share,
                                "is_job_f1": p.is_job.f1,
                                "micro_f1": p.micro_f1,
                            })
                        })
                        .collect(),
                ),
            );
            map.insert(
                "recommended_threshold".into(),
                json!(self.recommended.map(|p| p.threshold)),
            );
            if let Some(st) = &self.self_training {
                map.insert(
                    "self_training".into(),
                    json!({
                        "half_labels": {"is_job_f1": st.half_labels.0, "micro_f1": st.half_labels.1},
                        "half_plus_llm": {"is_job_f1": st.half_plus_llm.0, "micro_f1": st.half_plus_llm.1},
                        "all_labels": {"is_job_f1": st.all_labels.0, "micro_f1": st.all_labels.1},
                        "llm_share_half_labels": st.unsure_share.0,
                        "llm_share_half_plus_llm": st.unsure_share.1,
                    }),
                );
            }
        }
        v
    }
}

impl fmt::Display for CascadeEval {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "local alone (cross-validated): is_job F1 {:.3}, micro-F1 {:.3}",
            self.local.is_job.f1, self.local.categories.micro_f1
        )?;
        writeln!(
            f,
            "LLM alone: is_job F1 {:.3}, micro-F1 {:.3}, {:.1} requests per 1000 posts",
            self.llm.is_job.f1,
            self.llm.categories.micro_f1,
            self.llm.llm_requests_per_1000()
        )?;
        writeln!(f, "threshold  LLM share  is_job F1  micro-F1")?;
        for p in &self.curve {
            let mark = if self.recommended.is_some_and(|r| r.threshold == p.threshold) {
                "  <- recommended"
            } else if p.threshold == self.threshold {
                "  <- configured"
            } else {
                ""
            };
            writeln!(
                f,
                "  {:<8.2} {:>8.1}%  {:>9.3}  {:>8.3}{mark}",
                p.threshold,
                p.llm_share * 100.0,
                p.is_job.f1,
                p.micro_f1
            )?;
        }
        writeln!(
            f,
            "(recommended: the smallest LLM share within {:.0} point of the LLM's is_job F1)",
            self.tolerance * 100.0
        )?;
        if let Some(st) = &self.self_training {
            writeln!(
                f,
                "learning from the LLM (local, cross-validated): half the labels is_job F1 {:.3} \
                 micro-F1 {:.3}; + the LLM's answers on the other half {:.3} / {:.3}; all labels \
                 {:.3} / {:.3}",
                st.half_labels.0,
                st.half_labels.1,
                st.half_plus_llm.0,
                st.half_plus_llm.1,
                st.all_labels.0,
                st.all_labels.1
            )?;
            writeln!(
                f,
                "  posts the cascade would send to the LLM at {:.2}: {:.1}% with half the labels, \
                 {:.1}% after learning from the LLM's answers",
                self.threshold,
                st.unsure_share.0 * 100.0,
                st.unsure_share.1 * 100.0
            )?;
        }
        writeln!(f, "cascade at threshold {:.2}:", self.threshold)?;
        write!(f, "{}", self.cascade)
    }
}

pub fn assign_folds(data: &[LabeledPost], k: usize, seed: u64) -> Vec<Option<usize>> {
    let k = k.max(1);
    // Units: a dup group, or a single post.
    let mut units: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for (i, p) in data.iter().enumerate() {
        if p.label.is_none() {
            continue;
        }
        let key = match &p.dup_group {
            Some(g) => format!("g:{g}"),
            None => format!("p:{i}"),
        };
        units.entry(key).or_default().push(i);
    }
    // Strata by the kind of the unit's first post; larger units first so they spread out.
    let mut strata: BTreeMap<PostKind, Vec<Vec<usize>>> = BTreeMap::new();
    for members in units.into_values() {
        let kind = data[members[0]]
            .label
            .as_ref()
            .map_or(PostKind::Chatter, |l| l.kind);
        strata.entry(kind).or_default().push(members);
    }
    let mut rng = seed ^ 0x5851_f42d_4c95_7f2d;
    let mut next = move || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    let mut folds = vec![None; data.len()];
    let mut sizes = vec![0usize; k];
    for (_, mut units) in strata {
        for i in (1..units.len()).rev() {
            let j = (next() % (i as u64 + 1)) as usize;
            units.swap(i, j);
        }
        units.sort_by_key(|u| std::cmp::Reverse(u.len()));
        let mut per_fold = vec![0usize; k];
        for unit in units {
            // The fold with the fewest posts of this stratum, then the fewest overall.
            let f = (0..k)
                .min_by_key(|&f| (per_fold[f], sizes[f], f))
                .unwrap_or(0);
            per_fold[f] += unit.len();
            sizes[f] += unit.len();
            for i in unit {
                folds[i] = Some(f);
            }
        }
    }
    folds
}

/// k-fold cross-validation of the local model on `data` (folds from [`assign_folds`]): trains
/// on k−1 folds, scores the held-out one, and pools the decisions of all folds.
pub fn cross_validate(
    data: &[LabeledPost],
    categories: &[CategorySlug],
    k: usize,
    seed: u64,
    opts: &TrainOptions,
) -> Result<EvalReport, ClassifyError> {
    if k < 2 {
        return Err(ClassifyError::Invalid(format!(
            "cross-validation needs k >= 2, got {k}"
        )));
    }
    let folds = assign_folds(data, k, seed);
    let mut scorer = Scorer::new(categories);
    for fold in 0..k {
        let train: Vec<LabeledPost> = data
            .iter()
            .zip(&folds)
            .filter(|(_, f)| f.is_some_and(|f| f != fold))
            .map(|(p, _)| p.clone())
            .collect();
        let model = LocalModel::train(&train, categories, opts)?;
        for (post, f) in data.iter().zip(&folds) {
            if *f != Some(fold) {
                continue;
            }
            if let Some(label) = &post.label {
                let verdict = model.predict(&post.text);
                scorer.add(label, &verdict, model.was_trained_on(&post.text));
            }
        }
    }
    Ok(scorer.report(Some(k)))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn slug(s: &str) -> CategorySlug {
        CategorySlug::parse(s).unwrap()
    }

    fn label(is_job: bool, kind: PostKind, cats: &[&str]) -> Label {
        Label {
            is_job,
            kind,
            categories: cats.iter().map(|c| slug(c)).collect(),
        }
    }

    fn verdict(is_job: bool, kind: PostKind, cats: &[&str]) -> Verdict {
        Verdict {
            is_job,
            kind,
            categories: cats.iter().map(|c| slug(c)).collect(),
            confidence: 0.9,
        }
    }

    #[test]
    fn prf_matches_hand_computation() {
        // tp 3, fp 1, fn 2: P = 3/4, R = 3/5, F1 = 2*0.75*0.6/1.35 = 2/3.
        let m = Prf::from_counts(3, 1, 2);
        assert!((m.precision - 0.75).abs() < 1e-12);
        assert!((m.recall - 0.6).abs() < 1e-12);
        assert!((m.f1 - 2.0 / 3.0).abs() < 1e-12);
        assert_eq!(Prf::from_counts(0, 0, 0), Prf::default());
    }

    #[test]
    fn scorer_counts_jobs_categories_and_kinds() {
        let mut s = Scorer::new(&[slug("web"), slug("bots"), slug("audio")]);
        use PostKind::*;
        // job, right, categories {web,bots} vs {web}: tp web, fn bots.
        s.add(
            &label(true, Job, &["web", "bots"]),
            &verdict(true, Job, &["web"]),
            false,
        );
        // job missed: fn for design.
        s.add(
            &label(true, Job, &["design"]),
            &verdict(false, Resume, &[]),
            true,
        );
        // resume called a job: fp for is_job; its categories are not scored.
        s.add(
            &label(false, Resume, &[]),
            &verdict(true, Job, &["web"]),
            false,
        );
        // ad right.
        s.add(&label(false, Ad, &[]), &verdict(false, Ad, &[]), false);
        let r = s.report(None);
        // is_job: tp 1, fp 1, fn 1.
        assert!((r.is_job.precision - 0.5).abs() < 1e-12);
        assert!((r.is_job.recall - 0.5).abs() < 1e-12);
        // categories over jobs: tp 1 (web), fp 0, fn 2 (bots, design): P 1, R 1/3, F1 0.5.
        assert!((r.categories.micro_f1 - 0.5).abs() < 1e-12);
        assert_eq!(r.categories.per_category["web"], 1.0);
        assert_eq!(r.categories.per_category["bots"], 0.0);
        assert_eq!(r.categories.per_category["audio"], 0.0);
        assert_eq!(r.categories.per_category["design"], 0.0);
        assert_eq!(r.kinds[&Job][&Resume], 1);
        assert_eq!(r.kinds[&Resume][&Job], 1);
        assert_eq!(r.kinds[&Chatter][&Chatter], 0);
        assert_eq!(r.n_posts, 4);
        assert_eq!(r.trained_on_eval_posts, 1);

        let j = r.to_json();
        assert_eq!(j["is_job"]["f1"], 0.5);
        assert_eq!(j["categories"]["per_category"]["web"], 1.0);
        assert_eq!(j["kinds"]["job"]["resume"], 1);
        assert_eq!(j["kinds"]["chatter"]["ad"], 0);
        assert_eq!(j["n_posts"], 4);
        assert_eq!(j["cross_validated"], Value::Null);
        let keys: Vec<&String> = j.as_object().unwrap().keys().collect();
        assert_eq!(
            keys,
            [
                "categories",
                "cost_usd",
                "cross_validated",
                "extraction",
                "is_job",
                "kinds",
                "llm_failed_requests_per_1000",
                "llm_requests_per_1000",
                "llm_requests_per_100_llm_posts",
                "llm_share",
                "n_posts",
                "tokens_per_post",
                "trained_on_eval_posts"
            ]
        );
        let text = r.to_string();
        assert!(text.contains("micro-F1 0.500"), "{text}");
    }

    #[test]
    fn calibration_of_perfect_and_overconfident_predictions() {
        let (b, e) = calibration(&[(1.0, true), (1.0, true)]);
        assert_eq!((b, e), (0.0, 0.0));
        // Always 0.9 sure, right half the time: ECE 0.4, Brier (0.01 + 0.81) / 2.
        let (b, e) = calibration(&[(0.9, true), (0.9, false)]);
        assert!((e - 0.4).abs() < 1e-9);
        assert!((b - 0.41).abs() < 1e-9);
    }

    #[test]
    fn folds_keep_dup_groups_together_and_are_balanced() {
        let doc = (0..50)
            .map(|i| {
                let kind = if i % 3 == 0 { "resume" } else { "job" };
                let dup = if i < 6 { "\"g1\"".to_owned() } else { "null".to_owned() };
                format!(
                    r#"{{"id":"p{i}","channel":"@c","text":"t{i}","is_job":{},"kind":"{kind}","categories":[],"dup_group":{dup}}}"#,
                    kind == "job"
                )
            })
            .collect::<Vec<_>>()
            .join("\n");
        let data = LabeledPost::parse_all(&doc).unwrap();
        let folds = assign_folds(&data, 5, 1);
        let g: BTreeSet<_> = folds[..6].iter().collect();
        assert_eq!(g.len(), 1, "a dup group was split: {:?}", &folds[..6]);
        let mut sizes = [0usize; 5];
        for f in folds.iter().flatten() {
            sizes[*f] += 1;
        }
        assert!(sizes.iter().all(|&n| (8..=12).contains(&n)), "{sizes:?}");
        assert_eq!(assign_folds(&data, 5, 1), folds, "not deterministic");
    }
}
