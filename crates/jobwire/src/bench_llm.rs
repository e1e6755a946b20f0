//! `jobwire bench llm`: the LLM path's latency and cost through the whole pipeline, against
//! a fake LLM that writes at a real model's speed (time to the first token, then tokens per
//! second) and with gpt-4o-mini-like prices.
//!
//! Three designs run in one invocation, at the same time, each on its own fake LLM, fake
//! Telegram (no limits), temporary database and pipeline, fed the same generated posts
//! ([`posts`]) on the same schedule: a steady rate with a burst of posts at once in the middle.
//!
//! 1. `design`: the cascade (local model first, the LLM for what it is unsure of), streamed
//!    answers — what jobwire ships;
//! 2. `no_stream`: the same with `llm.stream = false`;
//! 3. `naive`: the LLM alone for every post, one post per request, not streamed.
//!
//! With `--linger-sweep 0,250,…` the design runs instead once per value of
//! `llm.batch_linger_ms` (all at once, bursts apart), and a table gives the curve of the
//! linger against the LLM posts' p95 (steady and in the burst) and the cost.
//!
//! Each post's latency is the time from its intake call (for a burst: the burst's instant) to
//! the fake Telegram's receipt of its message. Posts are told apart by what classified them
//! (the stored classification's `prompt_version`: the local model's starts with `local`).
//! Cost is the fake's token counts (which is what a provider bills) times the prices, cross-
//! checked against the costs the classifier stored.

mod measure;
pub mod posts;
mod report;

use std::sync::Arc;
use std::time::Instant;

use anyhow::Context;
use jobwire_store::PipelineCounts;
use jobwire_testkit::llm::FakeLlmStats;
use serde_json::{Map, Value, json};

use crate::config::ClassifierKind;
use measure::{feed_and_measure, start_design};
use report::{figures, print_summary, print_sweep};

/// gpt-4o-mini's prices, US dollars per million tokens.
pub const PRICE_IN_PER_MTOK: f64 = 0.15;
pub const PRICE_CACHED_IN_PER_MTOK: f64 = 0.075;
pub const PRICE_OUT_PER_MTOK: f64 = 0.60;

/// The model name the designs ask for.
const MODEL: &str = "gpt-4o-mini-fake";

/// The subscriber of every category, whose chat receives every job.
const CHAT: i64 = 42;

/// The generator's seed: every run feeds the same posts.
const SEED: u64 = 15;

/// The benchmark's parameters (`jobwire bench llm --help`).
#[derive(Debug, Clone, clap::Args)]
pub struct LlmBenchArgs {
    /// Posts in all, the burst included.
    #[arg(long, default_value_t = 2_000)]
    pub posts: usize,
    /// Posts per second outside the burst.
    #[arg(long, default_value_t = 2.0)]
    pub rate: f64,
    /// Posts arriving at one instant in the middle of the run.
    #[arg(long, default_value_t = 200)]
    pub burst: usize,
    /// The fake model's time to the first token, milliseconds.
    #[arg(long, default_value_t = 500)]
    pub ttft_ms: u64,
    /// The fake model's generation speed, output tokens per second.
    #[arg(long, default_value_t = 60)]
    pub tokens_per_sec: u32,
    /// Instead of the three designs: the design once per `llm.batch_linger_ms` given
    /// (comma-separated milliseconds, e.g. `0,250,500,1000`), all at once, and the curve of
    /// the linger against the LLM posts' p95 and the cost per 1,000 posts.
    #[arg(long, value_delimiter = ',', num_args = 1..)]
    pub linger_sweep: Vec<u64>,
    /// Write the generated posts with their labels to FILE (the JSONL of `data/dev.jsonl`)
    /// and stop: a set made by another generator than the training data's, for `jobwire
    /// eval --dataset FILE --model shipped`.
    #[arg(long, value_name = "FILE")]
    pub write_posts: Option<std::path::PathBuf>,
}

/// One design under test.
#[derive(Debug, Clone)]
struct Design {
    /// The JSON prefix of its figures (`""` for the design itself).
    prefix: String,
    name: String,
    what: String,
    kind: ClassifierKind,
    stream: bool,
    /// `None`: the configured default.
    batch_size: Option<usize>,
    /// `llm.batch_linger_ms`; `None`: the configured default.
    batch_linger_ms: Option<u64>,
    /// Where in the steady stream its burst comes (a fraction of the steady posts): the
    /// designs' bursts are apart so that they do not compete for the CPU.
    burst_at: f64,
}

/// The three designs compared by default.
fn designs() -> Vec<Design> {
    let design = |prefix: &str, name: &str, what: &str| Design {
        prefix: prefix.to_owned(),
        name: name.to_owned(),
        what: what.to_owned(),
        kind: ClassifierKind::Cascade,
        stream: true,
        batch_size: None,
        batch_linger_ms: None,
        burst_at: 0.5,
    };
    vec![
        design("", "design", "cascade, streamed answers"),
        Design {
            stream: false,
            burst_at: 0.4,
            ..design("no_stream_", "no_stream", "cascade, stream = false")
        },
        Design {
            kind: ClassifierKind::Llm,
            stream: false,
            batch_size: Some(1),
            burst_at: 0.6,
            ..design(
                "naive_",
                "naive",
                "LLM alone, batch_size = 1, stream = false",
            )
        },
    ]
}

/// The design once per `llm.batch_linger_ms` of `lingers`, their bursts spread over the
/// middle half of the steady stream.
fn sweep(lingers: &[u64]) -> Vec<Design> {
    let n = lingers.len();
    lingers
        .iter()
        .enumerate()
        .map(|(k, &ms)| Design {
            prefix: format!("linger_{ms}_"),
            name: format!("linger_{ms}"),
            what: format!("cascade, streamed answers, llm.batch_linger_ms = {ms}"),
            kind: ClassifierKind::Cascade,
            stream: true,
            batch_size: None,
            batch_linger_ms: Some(ms),
            burst_at: if n > 1 {
                0.25 + 0.5 * k as f64 / (n - 1) as f64
            } else {
                0.5
            },
        })
        .collect()
}

/// Which posts arrive when: the steady ones in order, the burst ones together.
#[derive(Debug, Clone)]
struct Plan {
    steady: Vec<usize>,
    burst: Vec<usize>,
    rate: f64,
}

impl Plan {
    /// The burst is the posts in the middle of the generated list; every design gets the
    /// same posts in its burst.
    fn new(n: usize, burst: usize, rate: f64) -> Self {
        let burst = burst.min(n);
        let first = (n - burst) / 2;
        let burst_posts: Vec<usize> = (first..first + burst).collect();
        let steady = (0..first).chain(first + burst..n).collect();
        Plan {
            steady,
            burst: burst_posts,
            rate,
        }
    }

    /// The steady position before which `design`'s burst arrives.
    fn burst_position(&self, design: &Design) -> usize {
        ((self.steady.len() as f64 * design.burst_at).round() as usize).min(self.steady.len())
    }

    fn steady_seconds(&self) -> f64 {
        self.steady.len() as f64 / self.rate
    }
}

/// What one design measured.
#[derive(Debug)]
struct Outcome {
    design: Design,
    fed: usize,
    queued: usize,
    near_duplicates: usize,
    filtered: usize,
    unclassified: usize,
    llm_posts: usize,
    local_posts: usize,
    jobs_queued: usize,
    jobs_delivered: usize,
    others_delivered: usize,
    messages: usize,
    is_job_right: usize,
    categories_right: usize,
    both_jobs: usize,
    llm_steady: Vec<f64>,
    /// The steady LLM posts that arrived before the burst (a quiet service).
    llm_before_burst: Vec<f64>,
    llm_burst: Vec<f64>,
    local_steady: Vec<f64>,
    local_burst: Vec<f64>,
    stats: FakeLlmStats,
    stored_usd: f64,
    counts: Option<PipelineCounts>,
    settle_error: Option<String>,
    burst_second: f64,
    /// From the burst's instant until intake had taken in its last post.
    burst_intake_ms: f64,
    seconds: f64,
}

/// Runs the three designs at once and returns the last line's JSON.
pub async fn run(args: LlmBenchArgs) -> anyhow::Result<Value> {
    anyhow::ensure!(args.posts > 0, "--posts must be at least 1");
    anyhow::ensure!(
        args.rate.is_finite() && args.rate > 0.0,
        "--rate must be a positive number of posts per second"
    );
    let generated = posts::generate(args.posts, SEED);
    let count = |k: posts::Kind| generated.posts.iter().filter(|p| p.kind == k).count();
    let russian = generated.posts.iter().filter(|p| p.russian).count();
    let chars: usize = generated.posts.iter().map(|p| p.text.chars().count()).sum();
    println!(
        "llm bench: {} generated posts (seed {SEED}): {} jobs, {} résumés, {} ads, {} chatter; {russian} in Russian; mean {} characters; {} redraws to keep them apart, {} still near-duplicates",
        generated.posts.len(),
        count(posts::Kind::Job),
        count(posts::Kind::Resume),
        count(posts::Kind::Ad),
        count(posts::Kind::Chatter),
        chars / generated.posts.len().max(1),
        generated.redraws,
        generated.near_duplicates,
    );
    if let Some(path) = &args.write_posts {
        let lines = posts::labeled_jsonl(&generated.posts)?;
        std::fs::write(path, lines)
            .with_context(|| format!("writing the posts to {}", path.display()))?;
        println!(
            "wrote {} labeled posts to {}",
            generated.posts.len(),
            path.display()
        );
        return Ok(json!({"bench": "llm", "posts_written": generated.posts.len()}));
    }
    let plan = Arc::new(Plan::new(args.posts, args.burst, args.rate));
    let designs = if args.linger_sweep.is_empty() {
        designs()
    } else {
        sweep(&args.linger_sweep)
    };
    println!(
        "feeding {} posts at {}/s and {} at once (bursts at {}), fake LLM at {} ms to the first token and {} tokens/s, prices ${PRICE_IN_PER_MTOK} in / ${PRICE_CACHED_IN_PER_MTOK} cached / ${PRICE_OUT_PER_MTOK} out per million tokens; {} designs at once, ~{:.0} s",
        plan.steady.len(),
        args.rate,
        plan.burst.len(),
        designs
            .iter()
            .map(|d| format!(
                "{:.0} s for {}",
                plan.burst_position(d) as f64 / plan.rate,
                d.name
            ))
            .collect::<Vec<_>>()
            .join(", "),
        args.ttft_ms,
        args.tokens_per_sec,
        designs.len(),
        plan.steady_seconds(),
    );
    let posts = Arc::new(generated.posts);
    // Every design's pipeline first (each trains its local model), then all are fed from
    // one start instant.
    let mut beds = Vec::new();
    for design in designs {
        let name = design.name.clone();
        beds.push(
            start_design(design, &posts, &args)
                .await
                .with_context(|| format!("starting design {name}"))?,
        );
    }
    let fed = (beds.len() * (plan.steady.len() + plan.burst.len())) as u64;
    let bar = crate::progress::bar(fed, "posts taken in");
    let started = Instant::now();
    let outcomes = futures::future::try_join_all(
        beds.into_iter()
            .map(|bed| feed_and_measure(bed, posts.clone(), plan.clone(), started, bar.clone())),
    )
    .await?;
    bar.finish_and_clear();
    for o in &outcomes {
        print_summary(o);
    }
    if !args.linger_sweep.is_empty() {
        print_sweep(&outcomes);
    }
    let mut out = Map::new();
    out.insert("bench".into(), json!("llm"));
    out.insert("posts".into(), json!(args.posts));
    out.insert("rate".into(), json!(args.rate));
    out.insert("burst".into(), json!(plan.burst.len()));
    out.insert("ttft_ms".into(), json!(args.ttft_ms));
    out.insert("tokens_per_sec".into(), json!(args.tokens_per_sec));
    for o in &outcomes {
        for (key, value) in figures(o) {
            out.insert(format!("{}{key}", o.design.prefix), value);
        }
    }
    let usd = |prefix: &str| {
        out.get(&format!("{prefix}usd_per_1000_posts"))
            .and_then(Value::as_f64)
    };
    if let (Some(design), Some(naive)) = (usd(""), usd("naive_"))
        && design > 0.0
    {
        out.insert("naive_cost_ratio".into(), json!(naive / design));
    }
    Ok(Value::Object(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_burst_is_the_middle_and_every_post_arrives_once() {
        let plan = Plan::new(200, 40, 10.0);
        assert_eq!(plan.burst, (80..120).collect::<Vec<_>>());
        let mut all: Vec<usize> = plan.steady.iter().chain(&plan.burst).copied().collect();
        all.sort_unstable();
        assert_eq!(all, (0..200).collect::<Vec<_>>());
        assert_eq!(plan.burst_position(&designs()[0]), 80);
        assert!(designs().iter().all(|d| plan.burst_position(d) <= 160));
        // A sweep's bursts are apart, within the steady stream.
        let at: Vec<usize> = sweep(&[0, 250, 500])
            .iter()
            .map(|d| plan.burst_position(d))
            .collect();
        assert_eq!(at, [40, 80, 120]);
    }
}
