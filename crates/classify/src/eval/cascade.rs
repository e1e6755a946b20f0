//! The cascade measured on a labeled dataset: the local model cross-validated, the LLM
//! alone, the quality-versus-LLM-share curve, learning from the LLM's answers, and the real
//! cascade at the configured threshold.

use std::fmt;
use std::sync::Arc;

use jobwire_core::dataset::{Label, LabeledPost};
use jobwire_core::{CategorySlug, Verdict};
use serde_json::{Value, json};

use super::cross_validation::{
    FoldsBy, checked_folds, extra_training, held_out, train_without_fold, trained_on,
};
use super::{EvalReport, Prf, Scorer, Usage, evaluate_outputs};
use crate::cascade::{Cascade, CascadeConfig, LiveLocal};
use crate::local::{LocalModel, TrainOptions};
use crate::{Classifier, ClassifyError};

/// One point of the cascade's curve: with these thresholds, this share of posts goes to the
/// LLM and the combined answers score this.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CurvePoint {
    pub threshold: f32,
    /// The category threshold (0: routing on is-job alone).
    pub category_threshold: f32,
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
    /// The cascade at the configured thresholds, run for real (its LLM requests are counted).
    pub cascade: EvalReport,
    pub config: CascadeConfig,
    /// Combined quality against the LLM share, threshold pair by threshold pair.
    pub curve: Vec<CurvePoint>,
    /// The smallest LLM share whose is-job F1 is within `tolerance` of the LLM alone and
    /// whose category micro-F1 is within `category_tolerance` of it (else, the smallest that
    /// meets the is-job bound).
    pub recommended: Option<CurvePoint>,
    pub tolerance: f64,
    pub category_tolerance: f64,
    /// How the folds were made.
    pub folds: FoldsBy,
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
pub const CURVE_THRESHOLDS: [f32; 16] = [
    0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.78, 0.8, 0.82, 0.85, 0.88, 0.9, 0.92, 0.94, 0.96, 0.98,
];

/// Category thresholds the curve is drawn at (0: routing on is-job alone).
pub const CURVE_CATEGORY_THRESHOLDS: [f32; 16] = [
    0.0, 0.3, 0.4, 0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.78, 0.8, 0.82, 0.85, 0.88, 0.9, 0.95,
];

/// Evaluates the cascade: per fold, trains the local model on the other folds; the LLM
/// answers every post once (for the curve and the LLM-alone score); then the real cascade
/// runs at `threshold`, all folds at once (as posts arrive in a service, so the LLM client
/// gathers their unsure posts into its requests), and its LLM share and requests are what
/// the service would see. `count_requests` reads the LLM's counters (answered requests,
/// failed attempts), before and after. Every fold's model also trains on `extra` (posts of
/// other channels, never scored; see [`super::extra_training`]).
#[allow(clippy::too_many_arguments)]
pub async fn evaluate_cascade(
    data: &[LabeledPost],
    extra: &[LabeledPost],
    categories: &[CategorySlug],
    k: usize,
    seed: u64,
    opts: &TrainOptions,
    llm: Arc<dyn Classifier>,
    config: CascadeConfig,
    folds_by: FoldsBy,
    count_requests: &(dyn Fn() -> (u64, u64) + Send + Sync),
) -> Result<CascadeEval, ClassifyError> {
    let folds = checked_folds(data, k, seed, folds_by)?;
    let extra = extra_training(data, extra);
    // Held-out local verdicts of every labeled post, and the fold models.
    let mut local_verdicts: Vec<Option<Verdict>> = vec![None; data.len()];
    let mut models = Vec::with_capacity(k);
    for fold in 0..k {
        let model = Arc::new(train_without_fold(
            data, &extra, &folds, fold, categories, opts,
        )?);
        for i in held_out(&folds, fold) {
            local_verdicts[i] = Some(model.predict(&data[i].text));
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
    llm_report
        .usage
        .count_requests_since(before, count_requests());
    let mut llm_verdicts: Vec<Option<Verdict>> = vec![None; data.len()];
    for (i, c) in &llm_outputs {
        llm_verdicts[*i] = Some(c.verdict.clone());
    }

    let curve = curve(data, &local_verdicts, &llm_verdicts, categories, k);
    let self_training = Some(self_training(
        data,
        &extra,
        &folds,
        k,
        &llm_verdicts,
        categories,
        opts,
        config,
        &local,
    )?);

    let tolerance = 0.01;
    let category_tolerance = 0.05;
    let cheapest = |with_categories: bool| {
        curve
            .iter()
            .filter(|p| p.is_job.f1 >= llm_report.is_job.f1 - tolerance)
            .filter(|p| {
                !with_categories
                    || p.micro_f1 >= llm_report.categories.micro_f1 - category_tolerance
            })
            .min_by(|a, b| {
                a.llm_share
                    .total_cmp(&b.llm_share)
                    .then(b.micro_f1.total_cmp(&a.micro_f1))
            })
            .copied()
    };
    let recommended = cheapest(true).or_else(|| cheapest(false));

    // The real cascade at the chosen threshold: every fold's model on its held-out posts, all
    // folds at once, as posts arrive in a running service (the LLM's pool gathers the
    // unsure posts of every fold into its requests).
    let mut scorer = Scorer::new(categories);
    let mut usage = Usage::default();
    let mut extractions = Vec::new();
    let before = count_requests();
    let runs = models.into_iter().enumerate().map(|(fold, model)| {
        let held_at: Vec<usize> = held_out(&folds, fold).collect();
        let held: Vec<LabeledPost> = held_at.iter().map(|&i| data[i].clone()).collect();
        let cascade = Cascade::new(Arc::new(LiveLocal::new(model)), llm.clone(), config, None);
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
    usage.count_requests_since(before, count_requests());
    let mut cascade = scorer.report(Some(k));
    cascade.usage = usage;
    Ok(CascadeEval {
        local,
        llm: llm_report,
        cascade,
        config,
        curve,
        recommended,
        tolerance,
        category_tolerance,
        folds: folds_by,
        extractions,
        self_training,
    })
}

/// The combined quality at each of [`CURVE_THRESHOLDS`]: a post whose local verdict is less
/// sure than the threshold takes the LLM's.
fn curve(
    data: &[LabeledPost],
    local_verdicts: &[Option<Verdict>],
    llm_verdicts: &[Option<Verdict>],
    categories: &[CategorySlug],
    k: usize,
) -> Vec<CurvePoint> {
    let mut curve = Vec::new();
    for t in CURVE_THRESHOLDS {
        for tc in CURVE_CATEGORY_THRESHOLDS {
            let config = CascadeConfig {
                threshold: t,
                category_threshold: tc,
            };
            let mut scorer = Scorer::new(categories);
            let mut sent = 0usize;
            for ((post, lv), mv) in data.iter().zip(local_verdicts).zip(llm_verdicts) {
                let (Some(label), Some(lv), Some(mv)) = (&post.label, lv, mv) else {
                    continue;
                };
                let v = if config.unsure(lv) {
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
                category_threshold: tc,
                llm_share: if r.n_posts == 0 {
                    0.0
                } else {
                    sent as f64 / r.n_posts as f64
                },
                is_job: r.is_job,
                micro_f1: r.categories.micro_f1,
            });
        }
    }
    curve
}

/// Learning from the LLM's answers on "unlabeled" posts: per fold, a model on half of the
/// training labels and one that also learns the LLM's answers on the other half, scored on
/// the held-out posts; `local` is the usual cross-validation, with all labels.
#[allow(clippy::too_many_arguments)]
fn self_training(
    data: &[LabeledPost],
    extra: &[LabeledPost],
    folds: &[Option<usize>],
    k: usize,
    llm_verdicts: &[Option<Verdict>],
    categories: &[CategorySlug],
    opts: &TrainOptions,
    config: CascadeConfig,
    local: &EvalReport,
) -> Result<SelfTraining, ClassifyError> {
    let mut half_scorer = Scorer::new(categories);
    let mut plus_scorer = Scorer::new(categories);
    // (unsure with the half model, unsure with half + LLM, held-out posts)
    let mut unsure = (0usize, 0usize, 0usize);
    for fold in 0..k {
        let mut half: Vec<(LabeledPost, f32)> = extra.iter().map(|p| (p.clone(), 1.0)).collect();
        let mut plus: Vec<(LabeledPost, f32)> = half.clone();
        for (n, i) in trained_on(folds, fold).enumerate() {
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
        for i in held_out(folds, fold) {
            if let Some(label) = &data[i].label {
                let (h, p) = (
                    half_model.predict(&data[i].text),
                    plus_model.predict(&data[i].text),
                );
                unsure.0 += usize::from(config.unsure(&h));
                unsure.1 += usize::from(config.unsure(&p));
                unsure.2 += 1;
                half_scorer.add(label, &h, false);
                plus_scorer.add(label, &p, false);
            }
        }
    }
    let (h, p) = (half_scorer.report(Some(k)), plus_scorer.report(Some(k)));
    Ok(SelfTraining {
        half_labels: (h.is_job.f1, h.categories.micro_f1),
        half_plus_llm: (p.is_job.f1, p.categories.micro_f1),
        all_labels: (local.is_job.f1, local.categories.micro_f1),
        unsure_share: (
            unsure.0 as f64 / unsure.2.max(1) as f64,
            unsure.1 as f64 / unsure.2.max(1) as f64,
        ),
    })
}

impl CascadeEval {
    pub fn to_json(&self) -> Value {
        let mut v = self.cascade.to_json();
        if let Some(map) = v.as_object_mut() {
            map.insert("threshold".into(), json!(self.config.threshold));
            map.insert(
                "category_threshold".into(),
                json!(self.config.category_threshold),
            );
            map.insert("folds".into(), json!(self.folds.as_str()));
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
                                "category_threshold": p.category_threshold,
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
            map.insert(
                "recommended_category_threshold".into(),
                json!(self.recommended.map(|p| p.category_threshold)),
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
        writeln!(f, "folds: {}", self.folds.as_str())?;
        writeln!(
            f,
            "threshold  category  LLM share  is_job F1  micro-F1  (the best micro-F1 per share band)"
        )?;
        let same = |a: &CurvePoint, b: &CascadeConfig| {
            a.threshold == b.threshold && a.category_threshold == b.category_threshold
        };
        let configured = self.config;
        let recommended = self.recommended.map(|r| CascadeConfig {
            threshold: r.threshold,
            category_threshold: r.category_threshold,
        });
        for p in frontier(&self.curve) {
            let mark = if recommended.is_some_and(|r| same(p, &r)) {
                "  <- recommended"
            } else if same(p, &configured) {
                "  <- configured"
            } else {
                ""
            };
            writeln!(
                f,
                "  {:<8.2} {:>8.2} {:>8.1}%  {:>9.3}  {:>8.3}{mark}",
                p.threshold,
                p.category_threshold,
                p.llm_share * 100.0,
                p.is_job.f1,
                p.micro_f1
            )?;
        }
        for (label, point) in [
            ("recommended", self.recommended),
            (
                "configured",
                self.curve.iter().find(|p| same(p, &configured)).copied(),
            ),
        ] {
            if let Some(p) = point {
                writeln!(
                    f,
                    "{label}: threshold {:.2}, category threshold {:.2}: LLM share {:.1}%, is_job F1 {:.3}, micro-F1 {:.3}",
                    p.threshold,
                    p.category_threshold,
                    p.llm_share * 100.0,
                    p.is_job.f1,
                    p.micro_f1
                )?;
            }
        }
        writeln!(
            f,
            "(recommended: the smallest LLM share within {:.0} point of the LLM's is_job F1 and {:.0} points of its micro-F1)",
            self.tolerance * 100.0,
            self.category_tolerance * 100.0
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
                "  posts the cascade would send to the LLM at {:.2}/{:.2}: {:.1}% with half the \
                 labels, {:.1}% after learning from the LLM's answers",
                self.config.threshold,
                self.config.category_threshold,
                st.unsure_share.0 * 100.0,
                st.unsure_share.1 * 100.0
            )?;
        }
        writeln!(
            f,
            "cascade at threshold {:.2}, category threshold {:.2}:",
            self.config.threshold, self.config.category_threshold
        )?;
        write!(f, "{}", self.cascade)
    }
}

/// The curve's points worth reading: for each LLM share band of 2.5 points, the best
/// micro-F1 (ties: the best is_job F1), in order of share.
fn frontier(curve: &[CurvePoint]) -> Vec<&CurvePoint> {
    let mut best: std::collections::BTreeMap<i64, &CurvePoint> = std::collections::BTreeMap::new();
    for p in curve {
        #[allow(clippy::cast_possible_truncation)]
        let band = (p.llm_share * 40.0).floor() as i64;
        let better = best.get(&band).is_none_or(|b| {
            (p.micro_f1, p.is_job.f1, -p.llm_share) > (b.micro_f1, b.is_job.f1, -b.llm_share)
        });
        if better {
            best.insert(band, p);
        }
    }
    best.into_values().collect()
}
