//! `jobwire eval`: classification quality on a labeled JSONL file.

use std::path::Path;
use std::sync::Arc;

use anyhow::Context;
use jobwire_classify::Classifier;
use jobwire_classify::eval::{EvalReport, cross_validate, evaluate};
use jobwire_classify::local::{LocalClassifier, TrainOptions};
use jobwire_core::dataset::LabeledPost;

use crate::config::Settings;
use crate::pipeline;

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum EvalClassifier {
    Local,
    Llm,
}

#[derive(Debug, Clone)]
pub struct EvalOptions {
    pub classifier: EvalClassifier,
    /// k-fold cross-validation of the local model on the dataset itself.
    pub cv: Option<usize>,
    pub seed: u64,
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

pub async fn run(
    settings: &Settings,
    data: &[LabeledPost],
    opts: &EvalOptions,
) -> anyhow::Result<EvalReport> {
    let slugs: Vec<_> = settings.categories.iter().map(|c| c.slug.clone()).collect();
    match (opts.classifier, opts.cv) {
        (EvalClassifier::Local, Some(k)) => Ok(cross_validate(
            data,
            &slugs,
            k,
            opts.seed,
            &TrainOptions::default(),
        )?),
        (EvalClassifier::Llm, Some(_)) => {
            anyhow::bail!("--cv applies to the local classifier only")
        }
        (EvalClassifier::Local, None) => {
            let model = pipeline::train_local(settings)?;
            let classifier: Arc<dyn Classifier> = Arc::new(LocalClassifier::new(model));
            Ok(evaluate(classifier.as_ref(), data).await?)
        }
        (EvalClassifier::Llm, None) => {
            let llm = settings
                .llm
                .as_ref()
                .context("--classifier llm needs --llm-url or an [llm] section in the config")?;
            let classifier = crate::llm::build(settings, llm)?;
            Ok(evaluate(classifier.as_ref(), data).await?)
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
pub fn print(report: &EvalReport, data: &[LabeledPost], json: bool) {
    let dedup = dedup_scores(data);
    println!("{report}");
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
        let mut value = report.to_json();
        if let Some(map) = value.as_object_mut() {
            map.insert(
                "dedup".to_owned(),
                serde_json::json!({ "precision": dedup.precision, "recall": dedup.recall }),
            );
        }
        println!("{value}");
    }
}
