//! `jobwire eval --simulate-learning`: the shipped model meets unseen channels through the
//! cascade with an oracle LLM, retrains on the LLM's answers every N posts, and the LLM share
//! and the quality are followed over time (printed, and written as CSV and SVG).

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::Context;
use jobwire_classify::Classifier;
use jobwire_classify::eval::{
    LearningOptions, LearningPoint, OracleClassifier, mean_over, simulate_learning,
};
use jobwire_classify::local::TrainOptions;
use jobwire_classify::retrain::RetrainConfig;
use jobwire_core::dataset::LabeledPost;

use crate::config::Settings;
use crate::pipeline;
use crate::progress::Progressed;

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
    /// The shipped model's LLM share (no learning): over the whole stream, and on the posts
    /// from the 500th on (the same posts as `share_after_500`: the fair comparison).
    pub shipped_share: f64,
    pub shipped_share_after_500: Option<f64>,
    /// The shipped model's cascade quality from the 500th post on: (is_job F1, micro-F1).
    pub shipped_after_500: Option<(f64, f64)>,
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
        shipped_share: mean_over(&points, 0, usize::MAX, |p| p.shipped_llm_share).unwrap_or(0.0),
        shipped_share_after_500: after(&|p| p.shipped_llm_share),
        shipped_after_500: after(&|p| p.shipped_is_job_f1).zip(after(&|p| p.shipped_micro_f1)),
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
        "  posts     LLM share  is_job F1  micro-F1  | no learning: LLM share  micro-F1  | LLM alone: is_job F1  micro-F1  | local alone: is_job F1  micro-F1  examples"
    );
    for p in &sim.points {
        println!(
            "  {:>4}-{:<4} {:>7.1}%  {:>9.3}  {:>8.3}  | {:>21.1}%  {:>8.3}  | {:>20.3}  {:>8.3}  | {:>22.3}  {:>8.3}  {:>8}",
            p.posts_before + 1,
            p.posts_before + p.posts,
            p.llm_share * 100.0,
            p.is_job_f1,
            p.micro_f1,
            p.shipped_llm_share * 100.0,
            p.shipped_micro_f1,
            p.llm_is_job_f1,
            p.llm_micro_f1,
            p.local_is_job_f1,
            p.local_micro_f1,
            p.examples
        );
    }
    if let (Some(share), Some(shipped), Some(c), Some(o), Some(s)) = (
        sim.share_after_500,
        sim.shipped_share_after_500,
        sim.cascade_after_500,
        sim.llm_after_500,
        sim.shipped_after_500,
    ) {
        println!(
            "LLM share from the 500th post on: {:.1}% learning, {:.1}% with the shipped model on \
             the same posts ({}; shipped model on the whole stream {:.1}%, first block {:.1}%); \
             quality from the 500th post on: is_job F1 {:.3} (LLM alone {:.3}, no learning \
             {:.3}), micro-F1 {:.3} (LLM alone {:.3}, no learning {:.3})",
            share * 100.0,
            shipped * 100.0,
            if share <= shipped / 2.0 {
                "halved"
            } else {
                "not halved"
            },
            sim.shipped_share * 100.0,
            sim.share_first * 100.0,
            c.0,
            o.0,
            s.0,
            c.1,
            o.1,
            s.1
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
                    "shipped_llm_share": p.shipped_llm_share,
                    "shipped_is_job_f1": p.shipped_is_job_f1,
                    "shipped_micro_f1": p.shipped_micro_f1,
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
                "shipped_llm_share": sim.shipped_share,
                "shipped_llm_share_after_500": sim.shipped_share_after_500,
                "shipped_is_job_f1_after_500": sim.shipped_after_500.map(|c| c.0),
                "shipped_micro_f1_after_500": sim.shipped_after_500.map(|c| c.1),
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
        "posts_before,posts,llm_share,is_job_f1,micro_f1,shipped_llm_share,shipped_is_job_f1,shipped_micro_f1,llm_is_job_f1,llm_micro_f1,local_is_job_f1,local_micro_f1,examples,model\n",
    );
    for p in points {
        out.push_str(&format!(
            "{},{},{:.4},{:.4},{:.4},{:.4},{:.4},{:.4},{:.4},{:.4},{:.4},{:.4},{},{}\n",
            p.posts_before,
            p.posts,
            p.llm_share,
            p.is_job_f1,
            p.micro_f1,
            p.shipped_llm_share,
            p.shipped_is_job_f1,
            p.shipped_micro_f1,
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
    let series: [Series; 6] = [
        ("LLM share", "#d62728", "", |p| p.llm_share),
        ("LLM share, no learning", "#ff9896", "6 3", |p| {
            p.shipped_llm_share
        }),
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
