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

/// Prints the report; with `json` the last line is the report as one JSON object.
pub fn print(report: &EvalReport, json: bool) {
    println!("{report}");
    if report.trained_on_eval_posts > 0 && report.cross_validated.is_none() {
        println!(
            "note: {} of the {} evaluated posts were in the local model's training data, so these \
             numbers are optimistic; use --cv 5 for cross-validated ones",
            report.trained_on_eval_posts, report.n_posts
        );
    }
    if json {
        println!("{}", report.to_json());
    }
}
