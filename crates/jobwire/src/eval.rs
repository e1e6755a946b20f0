//! `jobwire eval`: classification quality on a labeled JSONL file.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use anyhow::Context;
use jobwire_classify::cascade::{Cascade, LiveLocal};
use jobwire_classify::eval::{
    CascadeEval, EvalReport, ExtractionScores, evaluate_cascade, evaluate_outputs,
};
use jobwire_classify::llm::LlmClassifier;
use jobwire_classify::local::TrainOptions;
use jobwire_classify::{Classified, Classifier};
use jobwire_core::dataset::LabeledPost;
use jobwire_core::extract::{Budget, Extraction, WorkMode, budget_matches};
use serde::Deserialize;

use crate::config::Settings;
use crate::pipeline;
use crate::progress::Progressed;

mod learning;
pub use learning::{
    SimulateOptions, Simulation, learning_csv, learning_svg, run_simulation, simulate,
};

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum EvalClassifier {
    Local,
    Llm,
    Cascade,
}

/// Which local model `jobwire eval` measures without cross-validation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum EvalModel {
    /// The model the service starts with: trained on `classifier.training_data`, or on the
    /// shipped data/dev.jsonl + data/train.jsonl.
    Shipped,
}

#[derive(Debug, Clone)]
pub struct EvalOptions {
    pub classifier: EvalClassifier,
    /// k-fold cross-validation of the local model on the dataset itself (the cascade is
    /// always cross-validated, with 5 folds unless given).
    pub cv: Option<usize>,
    pub seed: u64,
    /// Expected extraction fields by post id (`data/extract.jsonl`).
    pub extraction: Option<ExtractionTruths>,
    /// How cross-validation folds are made (by post, or by channel).
    pub folds: jobwire_classify::eval::FoldsBy,
    /// `Some(Shipped)`: the production path, the service's model on the dataset as it is.
    pub model: Option<EvalModel>,
    /// Labeled posts every cross-validation fold also trains on (never scored).
    pub extra: Vec<LabeledPost>,
}

/// What an evaluation produced.
#[derive(Debug, Clone)]
pub struct EvalOutcome {
    pub report: EvalReport,
    /// The cascade's curve and its parts, for `--classifier cascade`.
    pub cascade: Option<CascadeEval>,
    /// The local model alone, next to the cascade of `--model shipped`.
    pub local: Option<EvalReport>,
}

/// Expected extraction fields of labeled posts, by post id.
#[derive(Debug, Clone, Default)]
pub struct ExtractionTruths {
    by_id: HashMap<String, ExtractionTruth>,
}

#[derive(Debug, Clone, Deserialize)]
struct ExtractionTruth {
    id: String,
    #[serde(default)]
    budget: Option<Budget>,
    #[serde(default)]
    work_mode: Option<WorkMode>,
    #[serde(default)]
    contact: Option<String>,
    #[serde(default)]
    deadline_stated: Option<bool>,
    #[serde(default)]
    skills: Vec<String>,
}

impl ExtractionTruths {
    /// Reads a JSONL file of `{id, budget, work_mode, contact, deadline_stated, skills}`.
    pub fn load(path: &Path) -> anyhow::Result<Self> {
        let doc = std::fs::read_to_string(path)
            .with_context(|| format!("--extraction: cannot read {}", path.display()))?;
        let mut by_id = HashMap::new();
        for (n, line) in doc.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let t: ExtractionTruth = serde_json::from_str(line)
                .with_context(|| format!("--extraction: {} line {}", path.display(), n + 1))?;
            by_id.insert(t.id.clone(), t);
        }
        Ok(Self { by_id })
    }

    pub fn len(&self) -> usize {
        self.by_id.len()
    }

    pub fn is_empty(&self) -> bool {
        self.by_id.is_empty()
    }

    /// Scores what was extracted for the posts with expected fields: budget (amount within
    /// 1%, currency, basis; "not stated" must stay empty), work mode, contact (same handle or
    /// link, case-insensitive), whether a deadline is stated, and skills (recall of the
    /// expected ones).
    pub fn score<'a>(
        &self,
        data: &[LabeledPost],
        extracted: impl IntoIterator<Item = (usize, Option<&'a Extraction>)>,
    ) -> ExtractionScores {
        let mut fields: Vec<(String, usize, usize)> =
            ["budget", "work_mode", "contact", "deadline", "skills"]
                .iter()
                .map(|f| ((*f).to_owned(), 0, 0))
                .collect();
        let mut add = |i: usize, ok: bool| {
            fields[i].2 += 1;
            fields[i].1 += usize::from(ok);
        };
        for (i, got) in extracted {
            let Some(truth) = data.get(i).and_then(|p| self.by_id.get(&p.id)) else {
                continue;
            };
            let empty = Extraction::default();
            let got = got.unwrap_or(&empty);
            add(
                0,
                match (&truth.budget, &got.budget) {
                    (None, None) => true,
                    (Some(a), Some(b)) => budget_matches(a, b),
                    _ => false,
                },
            );
            add(1, truth.work_mode == got.work_mode);
            let norm = |c: &str| {
                c.trim()
                    .trim_start_matches("https://")
                    .trim_start_matches("http://")
                    .to_lowercase()
            };
            add(
                2,
                match (&truth.contact, &got.contact) {
                    (None, None) => true,
                    (Some(a), Some(b)) => norm(a) == norm(b),
                    _ => false,
                },
            );
            if let Some(stated) = truth.deadline_stated {
                add(3, stated == got.deadline.is_some());
            }
            if !truth.skills.is_empty() {
                let found = truth
                    .skills
                    .iter()
                    .filter(|s| got.skills.iter().any(|g| g.eq_ignore_ascii_case(s)))
                    .count();
                // Skills count as right when at least half of the expected ones are found.
                add(4, found * 2 >= truth.skills.len());
            }
        }
        ExtractionScores { fields }
    }
}

pub fn load_dataset(path: &Path) -> anyhow::Result<Vec<LabeledPost>> {
    let doc = std::fs::read_to_string(path)
        .with_context(|| format!("--dataset: cannot read {}", path.display()))?;
    let data =
        LabeledPost::parse_all(&doc).with_context(|| format!("--dataset: {}", path.display()))?;
    if data.iter().all(|p| p.label.is_none()) {
        anyhow::bail!("--dataset: {} has no labeled posts", path.display());
    }
    Ok(data)
}

/// What each classified post's classifier extracted, by post index.
fn extractions(outputs: &[(usize, Classified)]) -> Vec<(usize, Option<&Extraction>)> {
    outputs
        .iter()
        .map(|(i, c)| (*i, c.extraction.as_ref()))
        .collect()
}

/// Evaluates `classifier` on `data` behind a progress bar (`what`), and counts the requests
/// `llm` answered and failed meanwhile into the report's usage.
async fn evaluate_counting(
    classifier: Arc<dyn Classifier>,
    llm: &LlmClassifier,
    data: &[LabeledPost],
    what: &'static str,
) -> anyhow::Result<(EvalReport, Vec<(usize, Classified)>)> {
    let before = llm.stats();
    let bar = crate::progress::bar(data.len() as u64, what);
    let classifier = Progressed::new(classifier, bar.clone());
    let evaluated = evaluate_outputs(&classifier, data).await;
    bar.finish_and_clear();
    let (mut report, outputs) = evaluated?;
    let after = llm.stats();
    let answered =
        |s: &jobwire_classify::llm::LlmStats| s.requests.saturating_sub(s.failed_requests);
    report.usage.llm_requests = answered(&after).saturating_sub(answered(&before));
    report.usage.llm_failed_requests = after.failed_requests.saturating_sub(before.failed_requests);
    Ok((report, outputs))
}

fn need_llm(settings: &Settings, what: &str) -> anyhow::Result<Arc<LlmClassifier>> {
    let llm = settings.llm.as_ref().with_context(|| {
        format!("--classifier {what} needs --llm-url or an [llm] section in the config")
    })?;
    crate::llm::build(llm)
}

pub async fn run(
    settings: &Settings,
    data: &[LabeledPost],
    opts: &EvalOptions,
) -> anyhow::Result<EvalOutcome> {
    let slugs: Vec<_> = settings.categories.iter().map(|c| c.slug.clone()).collect();
    let score = |report: &mut EvalReport, extracted: Vec<(usize, Option<&Extraction>)>| {
        if let Some(truths) = &opts.extraction {
            report.extraction = Some(truths.score(data, extracted));
        }
    };
    // A report with no cascade, the extractions scored in.
    let plain = |mut report: EvalReport, extracted: Vec<(usize, Option<&Extraction>)>| {
        score(&mut report, extracted);
        EvalOutcome {
            report,
            cascade: None,
            local: None,
        }
    };
    match (opts.classifier, opts.cv) {
        (EvalClassifier::Local, Some(k)) => {
            let working = crate::progress::counter("cross-validating the local model");
            let report = jobwire_classify::eval::cross_validate_with(
                data,
                &opts.extra,
                &slugs,
                k,
                opts.seed,
                &TrainOptions::default(),
                opts.folds,
            );
            working.finish_and_clear();
            let report = report?;
            // The local path extracts with rules that do not learn: no folds needed.
            let rules: Vec<(usize, Option<Extraction>)> = (0..data.len())
                .map(|i| (i, Some(jobwire_core::extract::extract(&data[i].text))))
                .collect();
            Ok(plain(
                report,
                rules.iter().map(|(i, e)| (*i, e.as_ref())).collect(),
            ))
        }
        (EvalClassifier::Llm, Some(_)) => {
            anyhow::bail!("--cv applies to the local classifier and the cascade only")
        }
        (EvalClassifier::Local, None) => {
            let model = pipeline::train_local(settings)?;
            let bar = crate::progress::bar(data.len() as u64, "classifying");
            let classifier = Progressed::new(Arc::new(LiveLocal::new(model)), bar.clone());
            let evaluated = evaluate_outputs(&classifier, data).await;
            bar.finish_and_clear();
            let (report, outputs) = evaluated?;
            Ok(plain(report, extractions(&outputs)))
        }
        (EvalClassifier::Llm, None) => {
            let llm = need_llm(settings, "llm")?;
            let (report, outputs) =
                evaluate_counting(llm.clone(), &llm, data, "asking the LLM").await?;
            Ok(plain(report, extractions(&outputs)))
        }
        (EvalClassifier::Cascade, None) if opts.model == Some(EvalModel::Shipped) => {
            // The production path: the service's model and its cascade, no folds.
            let llm = need_llm(settings, "cascade")?;
            let model = pipeline::train_local(settings)?;
            let (local, _) = evaluate_outputs(&LiveLocal::new(model.clone()), data).await?;
            let cascade = Cascade::new(
                Arc::new(LiveLocal::new(model)),
                llm.clone(),
                settings.classifier.cascade,
                None,
            );
            let (report, outputs) =
                evaluate_counting(Arc::new(cascade), &llm, data, "classifying (cascade)").await?;
            let mut outcome = plain(report, extractions(&outputs));
            outcome.local = Some(local);
            Ok(outcome)
        }
        (EvalClassifier::Cascade, cv) => {
            let llm = need_llm(settings, "cascade")?;
            let counter = llm.clone();
            // Every post is asked once for the curve, then the cascade's unsure posts again.
            let bar = crate::progress::counter("LLM answers (every post, then the unsure)");
            let asked: Arc<dyn Classifier> = Arc::new(Progressed::new(llm, bar.clone()));
            let eval = evaluate_cascade(
                data,
                &opts.extra,
                &slugs,
                cv.unwrap_or(5),
                opts.seed,
                &TrainOptions::default(),
                asked,
                settings.classifier.cascade,
                opts.folds,
                &move || {
                    let s = counter.stats();
                    (
                        s.requests.saturating_sub(s.failed_requests),
                        s.failed_requests,
                    )
                },
            )
            .await;
            bar.finish_and_clear();
            let mut eval = eval?;
            score(
                &mut eval.cascade,
                eval.extractions
                    .iter()
                    .map(|(i, e)| (*i, e.as_ref()))
                    .collect(),
            );
            Ok(EvalOutcome {
                report: eval.cascade.clone(),
                cascade: Some(eval),
                local: None,
            })
        }
    }
}

/// Near-duplicate detection on the dataset's `dup_group` labels: posts go through the
/// duplicate index in file order, as intake sees them; two posts are predicted duplicates
/// when they end in one cluster.
pub fn dedup_scores(data: &[LabeledPost]) -> jobwire_core::dedup::PairwiseScores {
    use jobwire_core::dedup::{
        DedupConfig, DuplicateIndex, clusters_from_links, fingerprint, pairwise_scores,
    };
    let mut index = DuplicateIndex::new(DedupConfig::default());
    let at = chrono::Utc::now();
    let mut links = Vec::new();
    for (i, post) in data.iter().enumerate() {
        let fp = fingerprint(&post.text);
        match index.find(&fp, at) {
            Some(earlier) => links.push((earlier as usize, i)),
            None => index.insert(i as i64, at, fp),
        }
    }
    let clusters = clusters_from_links(data.len(), &links);
    let truth: Vec<Option<&str>> = data.iter().map(|p| p.dup_group.as_deref()).collect();
    pairwise_scores(&truth, &clusters)
}

/// Prints the report; with `json` the last line is the report as one JSON object, with the
/// near-duplicate scores under `dedup`.
pub fn print(outcome: &EvalOutcome, data: &[LabeledPost], json: bool) {
    let report = &outcome.report;
    let dedup = dedup_scores(data);
    if let Some(local) = &outcome.local {
        println!(
            "local alone (the shipped model, {} of the {} posts in its training data): is_job F1 \
             {:.3}, micro-F1 {:.3}",
            local.trained_on_eval_posts, local.n_posts, local.is_job.f1, local.categories.micro_f1
        );
        println!("cascade (the shipped model, routed as in production):");
    }
    match &outcome.cascade {
        Some(cascade) => println!("{cascade}"),
        None => println!("{report}"),
    }
    println!(
        "near-duplicates: pairwise precision {:.3}, recall {:.3}",
        dedup.precision, dedup.recall
    );
    if report.trained_on_eval_posts > 0 && report.cross_validated.is_none() {
        println!(
            "note: {} of the {} evaluated posts were in the local model's training data, so these \
             numbers are optimistic; use --cv 5 for cross-validated ones",
            report.trained_on_eval_posts, report.n_posts
        );
    }
    if json {
        let mut value = match &outcome.cascade {
            Some(cascade) => cascade.to_json(),
            None => report.to_json(),
        };
        if let (Some(map), Some(local)) = (value.as_object_mut(), &outcome.local) {
            map.insert("local".to_owned(), local.to_json());
        }
        if let Some(map) = value.as_object_mut() {
            map.insert(
                "dedup".to_owned(),
                serde_json::json!({ "precision": dedup.precision, "recall": dedup.recall }),
            );
        }
        println!("{value}");
    }
}
