//! `jobwire eval`: classification quality on a labeled JSONL file.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::Context;
use jobwire_classify::cascade::{Cascade, LiveLocal};
use jobwire_classify::eval::{
    CascadeEval, EvalReport, ExtractionScores, LearningOptions, LearningPoint, OracleClassifier,
    evaluate_cascade, evaluate_outputs, mean_over, simulate_learning,
};
use jobwire_classify::llm::LlmClassifier;
use jobwire_classify::local::TrainOptions;
use jobwire_classify::retrain::RetrainConfig;
use jobwire_classify::{Classified, Classifier};
use jobwire_core::dataset::LabeledPost;
use jobwire_core::extract::{Budget, Extraction, WorkMode, budget_matches};
use serde::Deserialize;

use crate::config::Settings;
use crate::pipeline;
use crate::progress::Progressed;

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

/// What `jobwire eval --simulate-learning` does.
#[derive(Debug, Clone)]
pub struct SimulateOptions {
    /// Posts between two retrainings.
    pub every: usize,
    /// Order of the stream.
    pub seed: u64,
    pub csv: Option<PathBuf>,
    pub plot: Option<PathBuf>,
    pub json: bool,
}

/// What the simulation found: the blocks, and the summary the goal reads.
#[derive(Debug, Clone)]
pub struct Simulation {
    pub points: Vec<LearningPoint>,
    /// Posts of the dataset left out because the shipped model was trained on them.
    pub left_out: usize,
    /// LLM share of the first block, and of the blocks from the 500th post on.
    pub share_first: f64,
    pub share_after_500: Option<f64>,
    /// The cascade's and the LLM's quality from the 500th post on: (is_job F1, micro-F1).
    pub cascade_after_500: Option<(f64, f64)>,
    pub llm_after_500: Option<(f64, f64)>,
}

/// Streams `data` through the cascade of the shipped model as the service would meet it
/// (the LLM's answers kept and learned from every `every` posts); see
/// [`jobwire_classify::eval::simulate_learning`].
pub async fn run_simulation(
    settings: &Settings,
    data: &[LabeledPost],
    so: &SimulateOptions,
) -> anyhow::Result<Simulation> {
    let slugs: Vec<_> = settings.categories.iter().map(|c| c.slug.clone()).collect();
    let base = pipeline::training_data(settings)?;
    let trained: std::collections::HashSet<u64> = base
        .iter()
        .map(|p| jobwire_classify::local::LocalModel::fingerprint(&p.text))
        .collect();
    let stream: Vec<LabeledPost> = data
        .iter()
        .filter(|p| !trained.contains(&jobwire_classify::local::LocalModel::fingerprint(&p.text)))
        .cloned()
        .collect();
    let left_out = data.len() - stream.len();
    anyhow::ensure!(
        !stream.is_empty(),
        "--simulate-learning: every post of the dataset is in the model's training data"
    );
    let llm: Arc<dyn Classifier> = match &settings.llm {
        Some(section) => crate::llm::build(section)?,
        None => Arc::new(OracleClassifier::new(&stream)),
    };
    let bar = crate::progress::counter("posts the LLM answered");
    let llm: Arc<dyn Classifier> = Arc::new(Progressed::new(llm, bar.clone()));
    let c = &settings.classifier;
    let points = simulate_learning(
        &base,
        &stream,
        &slugs,
        &TrainOptions::default(),
        llm,
        &LearningOptions {
            every: so.every,
            config: c.cascade,
            retrain: RetrainConfig {
                llm_weight: c.retrain.llm_weight,
                human_weight: c.retrain.human_weight,
                ..RetrainConfig::default()
            },
            seed: so.seed,
        },
    )
    .await;
    bar.finish_and_clear();
    let points = points?;
    let after = |f: &dyn Fn(&LearningPoint) -> f64| mean_over(&points, 500, usize::MAX, f);
    Ok(Simulation {
        share_first: points.first().map_or(0.0, |p| p.llm_share),
        share_after_500: after(&|p| p.llm_share),
        cascade_after_500: after(&|p| p.is_job_f1).zip(after(&|p| p.micro_f1)),
        llm_after_500: after(&|p| p.llm_is_job_f1).zip(after(&|p| p.llm_micro_f1)),
        points,
        left_out,
    })
}

/// `jobwire eval --simulate-learning`: runs the simulation, prints it, writes the CSV and
/// the plot.
pub async fn simulate(
    settings: &Settings,
    data: &[LabeledPost],
    so: &SimulateOptions,
) -> anyhow::Result<()> {
    let sim = run_simulation(settings, data, so).await?;
    let config = settings.classifier.cascade;
    println!(
        "learning from its own traffic: {} posts streamed ({} left out: in the training data), \
         retrained every {} posts, cascade at {:.2} / {:.2}",
        sim.points.iter().map(|p| p.posts).sum::<usize>(),
        sim.left_out,
        so.every,
        config.threshold,
        config.category_threshold
    );
    println!(
        "  posts     LLM share  is_job F1  micro-F1  | LLM alone: is_job F1  micro-F1  | local alone: is_job F1  micro-F1  examples"
    );
    for p in &sim.points {
        println!(
            "  {:>4}-{:<4} {:>7.1}%  {:>9.3}  {:>8.3}  | {:>20.3}  {:>8.3}  | {:>22.3}  {:>8.3}  {:>8}",
            p.posts_before + 1,
            p.posts_before + p.posts,
            p.llm_share * 100.0,
            p.is_job_f1,
            p.micro_f1,
            p.llm_is_job_f1,
            p.llm_micro_f1,
            p.local_is_job_f1,
            p.local_micro_f1,
            p.examples
        );
    }
    if let (Some(share), Some(c), Some(o)) = (
        sim.share_after_500,
        sim.cascade_after_500,
        sim.llm_after_500,
    ) {
        println!(
            "LLM share: {:.1}% on the first block, {:.1}% from the 500th post on ({}); \
             quality from the 500th post on: is_job F1 {:.3} (LLM alone {:.3}), micro-F1 {:.3} \
             (LLM alone {:.3})",
            sim.share_first * 100.0,
            share * 100.0,
            if share <= sim.share_first / 2.0 {
                "halved"
            } else {
                "not halved"
            },
            c.0,
            o.0,
            c.1,
            o.1
        );
    } else {
        println!("fewer than 500 posts streamed: no figure from the 500th post on");
    }
    if let Some(path) = &so.csv {
        std::fs::write(path, learning_csv(&sim.points))
            .with_context(|| format!("--csv: cannot write {}", path.display()))?;
    }
    if let Some(path) = &so.plot {
        std::fs::write(path, learning_svg(&sim.points, so.every))
            .with_context(|| format!("--plot: cannot write {}", path.display()))?;
    }
    if so.json {
        let blocks: Vec<serde_json::Value> = sim
            .points
            .iter()
            .map(|p| {
                serde_json::json!({
                    "posts_before": p.posts_before, "posts": p.posts, "llm_share": p.llm_share,
                    "is_job_f1": p.is_job_f1, "micro_f1": p.micro_f1,
                    "llm_is_job_f1": p.llm_is_job_f1, "llm_micro_f1": p.llm_micro_f1,
                    "local_is_job_f1": p.local_is_job_f1, "local_micro_f1": p.local_micro_f1,
                    "examples": p.examples, "model": p.model,
                })
            })
            .collect();
        println!(
            "{}",
            serde_json::json!({
                "blocks": blocks,
                "left_out": sim.left_out,
                "llm_share_first_block": sim.share_first,
                "llm_share_after_500": sim.share_after_500,
                "is_job_f1_after_500": sim.cascade_after_500.map(|c| c.0),
                "micro_f1_after_500": sim.cascade_after_500.map(|c| c.1),
                "llm_is_job_f1_after_500": sim.llm_after_500.map(|c| c.0),
                "llm_micro_f1_after_500": sim.llm_after_500.map(|c| c.1),
            })
        );
    }
    Ok(())
}

/// The blocks of a simulation as CSV (one header line, one line per block).
pub fn learning_csv(points: &[LearningPoint]) -> String {
    let mut out = String::from(
        "posts_before,posts,llm_share,is_job_f1,micro_f1,llm_is_job_f1,llm_micro_f1,local_is_job_f1,local_micro_f1,examples,model\n",
    );
    for p in points {
        out.push_str(&format!(
            "{},{},{:.4},{:.4},{:.4},{:.4},{:.4},{:.4},{:.4},{},{}\n",
            p.posts_before,
            p.posts,
            p.llm_share,
            p.is_job_f1,
            p.micro_f1,
            p.llm_is_job_f1,
            p.llm_micro_f1,
            p.local_is_job_f1,
            p.local_micro_f1,
            p.examples,
            p.model
        ));
    }
    out
}

/// One line of the learning plot: name, colour, dash pattern, value of a block.
type Series = (
    &'static str,
    &'static str,
    &'static str,
    fn(&LearningPoint) -> f64,
);

/// The LLM share and the quality block by block, as an SVG line chart (x: posts streamed,
/// y: 0–1).
pub fn learning_svg(points: &[LearningPoint], every: usize) -> String {
    let (w, h, left, right, top, bottom) = (720.0, 420.0, 60.0, 200.0, 30.0, 50.0);
    let total = points
        .iter()
        .map(|p| p.posts_before + p.posts)
        .max()
        .unwrap_or(1)
        .max(1) as f64;
    let x = |posts: f64| left + (w - left - right) * posts / total;
    let y = |v: f64| top + (h - top - bottom) * (1.0 - v.clamp(0.0, 1.0));
    let mut svg = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" font-family=\"sans-serif\" font-size=\"12\">\n\
         <rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n\
         <text x=\"{left}\" y=\"18\" font-size=\"14\">Learning from its own traffic: unseen channels, retrained every {every} posts</text>\n"
    );
    for i in 0..=10 {
        let v = f64::from(i) / 10.0;
        svg.push_str(&format!(
            "<line x1=\"{left}\" x2=\"{}\" y1=\"{:.1}\" y2=\"{:.1}\" stroke=\"#ddd\"/><text x=\"{}\" y=\"{:.1}\" text-anchor=\"end\">{v:.1}</text>\n",
            w - right,
            y(v),
            y(v),
            left - 6.0,
            y(v) + 4.0
        ));
    }
    let step = if total > 1000.0 { 200.0 } else { 100.0 };
    let mut t = 0.0;
    while t <= total {
        svg.push_str(&format!(
            "<text x=\"{:.1}\" y=\"{}\" text-anchor=\"middle\">{t}</text>\n",
            x(t),
            h - bottom + 18.0
        ));
        t += step;
    }
    svg.push_str(&format!(
        "<text x=\"{:.1}\" y=\"{}\" text-anchor=\"middle\">posts streamed (each block scored before the model learns from it)</text>\n",
        (left + w - right) / 2.0,
        h - 10.0
    ));
    let series: [Series; 5] = [
        ("LLM share", "#d62728", "", |p| p.llm_share),
        ("cascade is_job F1", "#2ca02c", "", |p| p.is_job_f1),
        ("cascade micro-F1", "#1f77b4", "", |p| p.micro_f1),
        ("local alone micro-F1", "#7f7f7f", "4 3", |p| {
            p.local_micro_f1
        }),
        ("LLM alone micro-F1", "#000000", "1 3", |p| p.llm_micro_f1),
    ];
    for (n, (name, color, dash, f)) in series.iter().enumerate() {
        let path: Vec<String> = points
            .iter()
            .map(|p| format!("{:.1},{:.1}", x((p.posts_before + p.posts) as f64), y(f(p))))
            .collect();
        svg.push_str(&format!(
            "<polyline fill=\"none\" stroke=\"{color}\" stroke-width=\"2\" stroke-dasharray=\"{dash}\" points=\"{}\"/>\n",
            path.join(" ")
        ));
        let ly = top + 20.0 + 20.0 * n as f64;
        svg.push_str(&format!(
            "<line x1=\"{}\" x2=\"{}\" y1=\"{ly}\" y2=\"{ly}\" stroke=\"{color}\" stroke-width=\"2\" stroke-dasharray=\"{dash}\"/><text x=\"{}\" y=\"{}\">{name}</text>\n",
            w - right + 10.0,
            w - right + 34.0,
            w - right + 40.0,
            ly + 4.0
        ));
    }
    svg.push_str("</svg>\n");
    svg
}
