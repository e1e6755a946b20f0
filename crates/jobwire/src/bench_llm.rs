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

pub mod posts;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context;
use chrono::{DateTime, Utc};
use jobwire_intake::stage::IntakeOutcome;
use jobwire_store::{ClassificationRecord, PipelineCounts, PostId, Store};
use jobwire_testkit::llm::{FakeLlm, FakeLlmStats};
use jobwire_testkit::telegram::FakeTelegram;
use serde_json::{Map, Value, json};

use crate::config::ClassifierKind;
use crate::testbed::{Bed, fake_llm_answering, fake_telegram, start_pipeline, temp_db};
use posts::BenchPost;

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

/// When a post arrived relative to the burst.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Arrival {
    BeforeBurst,
    Burst,
    AfterBurst,
}

/// One post as fed: when it arrived, when intake was done with it, what intake made of it.
#[derive(Debug)]
struct Fed {
    index: usize,
    at: DateTime<Utc>,
    done: DateTime<Utc>,
    outcome: IntakeOutcome,
    arrival: Arrival,
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

/// One design's stand-ins and running pipeline.
struct DesignBed {
    design: Design,
    llm: FakeLlm,
    telegram: FakeTelegram,
    _dir: tempfile::TempDir,
    running: crate::pipeline::Pipeline,
    store: Arc<dyn Store>,
}

/// Starts one design: its own fake LLM, fake Telegram, database and pipeline, and the
/// subscriber of every category.
async fn start_design(
    design: Design,
    posts: &[BenchPost],
    args: &LlmBenchArgs,
) -> anyhow::Result<DesignBed> {
    let llm = fake_llm_answering(posts.iter().map(BenchPost::oracle_entry).collect()).await?;
    llm.state()
        .set_speed(Duration::from_millis(args.ttft_ms), args.tokens_per_sec);
    let telegram = fake_telegram(None).await?;
    let (dir, db) = temp_db()?;
    let mut section = crate::cli::llm_section(&llm.url(), MODEL);
    section.price_in_per_mtok = PRICE_IN_PER_MTOK;
    section.price_cached_in_per_mtok = Some(PRICE_CACHED_IN_PER_MTOK);
    section.price_out_per_mtok = PRICE_OUT_PER_MTOK;
    section.stream = design.stream;
    if let Some(n) = design.batch_size {
        section.batch_size = n;
    }
    if let Some(ms) = design.batch_linger_ms {
        section.batch_linger_ms = ms;
    }
    let bed = Bed {
        llm: Some(section),
        classifier_kind: Some(design.kind),
        ..Bed::unlimited()
    };
    let settings = bed.settings(telegram.url(), &db)?;
    let (running, store) = start_pipeline(&settings).await?;
    crate::subscribers::store_all(
        store.as_ref(),
        &[crate::testbed::subscriber(
            CHAT,
            jobwire_core::category::standard(),
        )],
    )
    .await?;
    Ok(DesignBed {
        design,
        llm,
        telegram,
        _dir: dir,
        running,
        store,
    })
}

/// Feeds one design on the plan from `started`, waits for its pipeline to settle, and
/// measures.
async fn feed_and_measure(
    bed: DesignBed,
    posts: Arc<Vec<BenchPost>>,
    plan: Arc<Plan>,
    started: Instant,
    bar: indicatif::ProgressBar,
) -> anyhow::Result<Outcome> {
    let DesignBed {
        design,
        llm,
        telegram,
        _dir,
        mut running,
        store,
    } = bed;
    // Feed: each post in a task of its own, so a slow intake call never delays the schedule.
    let intake = running.intake.clone();
    let ingest = |index: usize, at: DateTime<Utc>, arrival: Arrival| {
        let intake = intake.clone();
        let post = &posts[index];
        let incoming = jobwire_core::IncomingPost {
            channel: post.channel.to_owned(),
            external_id: external_id(index),
            text: post.text.clone(),
            author: None,
            url: Some(post_url(post, index)),
            posted_at: at,
        };
        let bar = bar.clone();
        tokio::spawn(async move {
            let outcome = intake.ingest(incoming).await;
            bar.inc(1);
            outcome.map(|outcome| Fed {
                index,
                at,
                done: Utc::now(),
                outcome,
                arrival,
            })
        })
    };
    let burst_position = plan.burst_position(&design);
    let mut burst_second = 0.0;
    let mut feeding = Vec::with_capacity(posts.len());
    for step in 0..=plan.steady.len() {
        let due = started + Duration::from_secs_f64(step as f64 / plan.rate);
        tokio::time::sleep_until(due.into()).await;
        if step == burst_position {
            burst_second = started.elapsed().as_secs_f64();
            let at = Utc::now();
            for &index in &plan.burst {
                feeding.push(ingest(index, at, Arrival::Burst));
            }
        }
        if let Some(&index) = plan.steady.get(step) {
            let arrival = if step < burst_position {
                Arrival::BeforeBurst
            } else {
                Arrival::AfterBurst
            };
            feeding.push(ingest(index, Utc::now(), arrival));
        }
    }
    let mut fed = Vec::with_capacity(feeding.len());
    for task in feeding {
        fed.push(task.await.context("an intake task")??);
    }
    let settle_error = running
        .wait_settled(Duration::from_secs(1800))
        .await
        .err()
        .map(|e| format!("{e:#}"));
    let seconds = started.elapsed().as_secs_f64();
    let counts = store.pipeline_counts().await.ok();
    let stats = llm.stats();
    let messages = telegram.messages();
    running.shutdown().await?;

    // The first receipt of each post's message, by the post's link on the card.
    let by_url: HashMap<String, usize> = posts
        .iter()
        .enumerate()
        .map(|(i, p)| (post_url(p, i), i))
        .collect();
    let mut received: HashMap<usize, DateTime<Utc>> = HashMap::new();
    let mut chat_messages = 0;
    for m in messages.iter().filter(|m| m.chat_id == CHAT) {
        chat_messages += 1;
        for index in hrefs(&m.text).filter_map(|u| by_url.get(u)) {
            received
                .entry(*index)
                .and_modify(|t| *t = (*t).min(m.received_at))
                .or_insert(m.received_at);
        }
    }

    let mut o = Outcome {
        design,
        fed: fed.len(),
        queued: 0,
        near_duplicates: 0,
        filtered: 0,
        unclassified: 0,
        llm_posts: 0,
        local_posts: 0,
        jobs_queued: 0,
        jobs_delivered: 0,
        others_delivered: 0,
        messages: chat_messages,
        is_job_right: 0,
        categories_right: 0,
        both_jobs: 0,
        llm_steady: Vec::new(),
        llm_before_burst: Vec::new(),
        llm_burst: Vec::new(),
        local_steady: Vec::new(),
        local_burst: Vec::new(),
        stats,
        stored_usd: 0.0,
        counts,
        settle_error,
        burst_second,
        burst_intake_ms: fed
            .iter()
            .filter(|f| f.arrival == Arrival::Burst)
            .map(|f| (f.done - f.at).num_microseconds().unwrap_or(0) as f64 / 1000.0)
            .fold(0.0, f64::max),
        seconds,
    };
    for f in &fed {
        let post = &posts[f.index];
        let id: PostId = match f.outcome {
            IntakeOutcome::Queued { post_id } => post_id,
            IntakeOutcome::NearDuplicate { .. } | IntakeOutcome::Duplicate { .. } => {
                o.near_duplicates += 1;
                continue;
            }
            IntakeOutcome::Filtered { .. } => {
                o.filtered += 1;
                continue;
            }
        };
        o.queued += 1;
        o.jobs_queued += usize::from(post.is_job());
        let delivered = received.get(&f.index);
        match (post.is_job(), delivered.is_some()) {
            (true, true) => o.jobs_delivered += 1,
            (false, true) => o.others_delivered += 1,
            _ => {}
        }
        let Some(record) = store.classification(id).await? else {
            o.unclassified += 1;
            continue;
        };
        score(&mut o, post, &record);
        let local = is_local(&record);
        if local {
            o.local_posts += 1;
        } else {
            o.llm_posts += 1;
        }
        if let Some(at) = delivered {
            let ms = (*at - f.at).num_microseconds().unwrap_or(i64::MAX) as f64 / 1000.0;
            let burst = f.arrival == Arrival::Burst;
            match (local, burst) {
                (false, false) => o.llm_steady.push(ms),
                (false, true) => o.llm_burst.push(ms),
                (true, false) => o.local_steady.push(ms),
                (true, true) => o.local_burst.push(ms),
            }
            if !local && f.arrival == Arrival::BeforeBurst {
                o.llm_before_burst.push(ms);
            }
        }
    }
    llm.shutdown().await;
    Ok(o)
}

/// Whether the local model classified the post (as `jobwire_classify::cascade::is_local`
/// tells a fresh classification).
fn is_local(record: &ClassificationRecord) -> bool {
    record
        .prompt_version
        .as_deref()
        .is_some_and(|v| v.starts_with("local"))
}

/// Counts agreement of a stored classification with the post's labels.
fn score(o: &mut Outcome, post: &BenchPost, record: &ClassificationRecord) {
    o.stored_usd += record.cost_usd;
    let said_job = record.kind == jobwire_core::PostKind::Job && record.is_job;
    o.is_job_right += usize::from(said_job == post.is_job());
    if said_job && post.is_job() {
        o.both_jobs += 1;
        let mut stored: Vec<&str> = record.categories.iter().map(|c| c.as_str()).collect();
        let mut labeled = post.categories.clone();
        stored.sort_unstable();
        labeled.sort_unstable();
        o.categories_right += usize::from(stored == labeled);
    }
}

fn external_id(index: usize) -> String {
    (10_000 + index).to_string()
}

/// The post's link, shown on its card ("Open original"): how a message is tied to its post.
fn post_url(post: &BenchPost, index: usize) -> String {
    format!(
        "https://t.me/{}/{}",
        post.channel.trim_start_matches('@'),
        external_id(index)
    )
}

/// The `href` values of an HTML text.
fn hrefs(html: &str) -> impl Iterator<Item = &str> {
    html.split("href=\"")
        .skip(1)
        .filter_map(|rest| rest.split('"').next())
}

/// The `q` quantile of `values` (nearest rank), `None` without values.
fn quantile(values: &[f64], q: f64) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let rank = ((q * v.len() as f64).ceil() as usize).clamp(1, v.len());
    Some(v[rank - 1])
}

/// What the fake's token counts cost at the benchmark's prices.
fn billed_usd(s: &FakeLlmStats) -> f64 {
    let cached = s.cached_tokens.min(s.prompt_tokens);
    ((s.prompt_tokens - cached) as f64 * PRICE_IN_PER_MTOK
        + cached as f64 * PRICE_CACHED_IN_PER_MTOK
        + s.completion_tokens as f64 * PRICE_OUT_PER_MTOK)
        / 1e6
}

fn ratio(a: f64, b: usize) -> Option<f64> {
    (b > 0).then(|| a / b as f64)
}

/// The design's figures under their JSON names (without the design's prefix).
fn figures(o: &Outcome) -> Vec<(&'static str, Value)> {
    let s = &o.stats;
    let all_llm: Vec<f64> = o.llm_steady.iter().chain(&o.llm_burst).copied().collect();
    vec![
        ("llm_p50_ms", json!(quantile(&o.llm_steady, 0.50))),
        ("llm_p95_ms", json!(quantile(&o.llm_steady, 0.95))),
        ("llm_p99_ms", json!(quantile(&o.llm_steady, 0.99))),
        ("llm_max_ms", json!(quantile(&o.llm_steady, 1.0))),
        (
            "before_burst_llm_p95_ms",
            json!(quantile(&o.llm_before_burst, 0.95)),
        ),
        ("burst_llm_p50_ms", json!(quantile(&o.llm_burst, 0.50))),
        ("burst_llm_p95_ms", json!(quantile(&o.llm_burst, 0.95))),
        ("burst_llm_max_ms", json!(quantile(&o.llm_burst, 1.0))),
        ("burst_intake_ms", json!(o.burst_intake_ms)),
        ("all_llm_p95_ms", json!(quantile(&all_llm, 0.95))),
        ("local_p50_ms", json!(quantile(&o.local_steady, 0.50))),
        ("local_p95_ms", json!(quantile(&o.local_steady, 0.95))),
        ("burst_local_p95_ms", json!(quantile(&o.local_burst, 0.95))),
        (
            "requests_per_100_llm_posts",
            json!(ratio(s.requests as f64 * 100.0, o.llm_posts)),
        ),
        (
            "output_tokens_per_llm_post",
            json!(ratio(s.completion_tokens as f64, o.llm_posts)),
        ),
        (
            "posts_per_request",
            json!(ratio(s.posts as f64, s.answered_requests as usize)),
        ),
        (
            "usd_per_1000_posts",
            json!(ratio(billed_usd(s) * 1000.0, o.fed)),
        ),
        (
            "stored_usd_per_1000_posts",
            json!(ratio(o.stored_usd * 1000.0, o.fed)),
        ),
        (
            "cached_prompt_share",
            json!(ratio(s.cached_tokens as f64, s.prompt_tokens as usize)),
        ),
        (
            "llm_share",
            json!(ratio(o.llm_posts as f64, o.llm_posts + o.local_posts)),
        ),
        ("llm_posts", json!(o.llm_posts)),
        ("local_posts", json!(o.local_posts)),
        ("llm_requests", json!(s.requests)),
        ("llm_failed_requests", json!(s.requests - s.ok)),
        ("oracle_misses", json!(s.oracle_misses)),
        ("posts_queued", json!(o.queued)),
        ("near_duplicates", json!(o.near_duplicates)),
        ("jobs_queued", json!(o.jobs_queued)),
        ("jobs_delivered", json!(o.jobs_delivered)),
        ("non_jobs_delivered", json!(o.others_delivered)),
        (
            "is_job_accuracy",
            json!(ratio(o.is_job_right as f64, o.llm_posts + o.local_posts)),
        ),
        (
            "categories_exact",
            json!(ratio(o.categories_right as f64, o.both_jobs)),
        ),
        ("settled", json!(o.settle_error.is_none())),
        ("seconds", json!(o.seconds)),
    ]
}

/// The curve of `--linger-sweep`: each linger's steady and burst p95 and cost.
fn print_sweep(outcomes: &[Outcome]) {
    println!(
        "\n== linger sweep (cascade, streamed; llm.idle_linger_ms at its default) ==\n| llm.batch_linger_ms | steady LLM p50 / p95 | burst LLM p95 | $ / 1,000 incoming posts | requests per 100 LLM posts | posts per request |\n| --- | --- | --- | --- | --- | --- |"
    );
    for o in outcomes {
        let s = &o.stats;
        println!(
            "| {} | {} / {} | {} | ${:.4} | {:.1} | {:.2} |",
            o.design.batch_linger_ms.unwrap_or_default(),
            ms(quantile(&o.llm_steady, 0.5)),
            ms(quantile(&o.llm_steady, 0.95)),
            ms(quantile(&o.llm_burst, 0.95)),
            ratio(billed_usd(s) * 1000.0, o.fed).unwrap_or(0.0),
            ratio(s.requests as f64 * 100.0, o.llm_posts).unwrap_or(0.0),
            ratio(s.posts as f64, s.answered_requests as usize).unwrap_or(0.0),
        );
    }
}

fn ms(v: Option<f64>) -> String {
    v.map_or_else(|| "-".to_owned(), |v| format!("{v:.0} ms"))
}

fn print_summary(o: &Outcome) {
    let s = &o.stats;
    let d = &o.design;
    let classified = o.llm_posts + o.local_posts;
    let pct = |a: usize, b: usize| ratio(a as f64 * 100.0, b).unwrap_or(0.0);
    println!("\n== {} ({}) ==", d.name, d.what);
    println!(
        "  {} posts fed, {} queued, {} near-duplicates dropped, {} filtered; {} classified: {} by the LLM ({:.1}%), {} by the local model, {} unclassified; whole run {:.0} s (burst at {:.0} s)",
        o.fed,
        o.queued,
        o.near_duplicates,
        o.filtered,
        classified,
        o.llm_posts,
        pct(o.llm_posts, classified),
        o.local_posts,
        o.unclassified,
        o.seconds,
        o.burst_second,
    );
    println!(
        "  delivered {} of {} jobs ({:.1}%) and {} posts that are not jobs, in {} messages; is_job right {:.1}%, categories exactly right on {:.1}% of jobs",
        o.jobs_delivered,
        o.jobs_queued,
        pct(o.jobs_delivered, o.jobs_queued),
        o.others_delivered,
        o.messages,
        pct(o.is_job_right, classified),
        pct(o.categories_right, o.both_jobs),
    );
    println!(
        "  intake → receipt, LLM posts arriving steadily: p50 {}, p95 {}, p99 {}, max {} ({} posts; before the burst p95 {} over {}); in the burst: p50 {}, p95 {}, max {} ({} posts; intake took {:.0} ms for the whole burst)",
        ms(quantile(&o.llm_steady, 0.5)),
        ms(quantile(&o.llm_steady, 0.95)),
        ms(quantile(&o.llm_steady, 0.99)),
        ms(quantile(&o.llm_steady, 1.0)),
        o.llm_steady.len(),
        ms(quantile(&o.llm_before_burst, 0.95)),
        o.llm_before_burst.len(),
        ms(quantile(&o.llm_burst, 0.5)),
        ms(quantile(&o.llm_burst, 0.95)),
        ms(quantile(&o.llm_burst, 1.0)),
        o.llm_burst.len(),
        o.burst_intake_ms,
    );
    println!(
        "  intake → receipt, local-model posts: p50 {}, p95 {} ({} posts); in the burst: p95 {} ({} posts)",
        ms(quantile(&o.local_steady, 0.5)),
        ms(quantile(&o.local_steady, 0.95)),
        o.local_steady.len(),
        ms(quantile(&o.local_burst, 0.95)),
        o.local_burst.len(),
    );
    println!(
        "  fake LLM: {} requests ({} answered, {} streamed, {} failed; {:.1} per 100 LLM posts, {:.1} posts per answered request, at most {}), {:.1} output tokens per LLM post, {} prompt tokens ({:.0}% cached), {} oracle misses",
        s.requests,
        s.answered_requests,
        s.streamed_requests,
        s.requests - s.ok,
        ratio(s.requests as f64 * 100.0, o.llm_posts).unwrap_or(0.0),
        ratio(s.posts as f64, s.answered_requests as usize).unwrap_or(0.0),
        s.max_posts_per_request,
        ratio(s.completion_tokens as f64, o.llm_posts).unwrap_or(0.0),
        s.prompt_tokens,
        ratio(s.cached_tokens as f64 * 100.0, s.prompt_tokens as usize).unwrap_or(0.0),
        s.oracle_misses,
    );
    println!(
        "  cost: ${:.4} per 1,000 incoming posts from the fake's tokens × prices (${:.4} in all); the classifier stored ${:.4} per 1,000 (${:.4} in all)",
        ratio(billed_usd(s) * 1000.0, o.fed).unwrap_or(0.0),
        billed_usd(s),
        ratio(o.stored_usd * 1000.0, o.fed).unwrap_or(0.0),
        o.stored_usd,
    );
    if let Some(e) = &o.settle_error {
        println!("  NOT SETTLED: {e}");
    }
    if let Some(c) = &o.counts
        && (c.waiting > 0 || c.queued > 0 || c.deliveries_failed > 0 || c.deliveries_pending > 0)
    {
        println!(
            "  left over: {} queued, {} waiting posts, {} pending and {} failed deliveries",
            c.queued, c.waiting, c.deliveries_pending, c.deliveries_failed
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_are_nearest_rank() {
        let v: Vec<f64> = (1..=100).map(f64::from).collect();
        assert_eq!(quantile(&v, 0.5), Some(50.0));
        assert_eq!(quantile(&v, 0.95), Some(95.0));
        assert_eq!(quantile(&v, 1.0), Some(100.0));
        assert_eq!(quantile(&[], 0.5), None);
        assert_eq!(quantile(&[7.0], 0.99), Some(7.0));
    }

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

    #[test]
    fn a_card_is_tied_to_its_post_by_its_link() {
        let html = "<b>Web</b> · <a href=\"https://t.me/chan\">@chan</a>\n\ntext\n\n🔗 <a href=\"https://t.me/chan/10007\">Open original</a>";
        let links: Vec<&str> = hrefs(html).collect();
        assert_eq!(links, ["https://t.me/chan", "https://t.me/chan/10007"]);
    }

    #[test]
    fn billing_counts_cached_tokens_at_their_price() {
        let s = FakeLlmStats {
            prompt_tokens: 2_000_000,
            cached_tokens: 1_000_000,
            completion_tokens: 1_000_000,
            ..FakeLlmStats::default()
        };
        let usd = billed_usd(&s);
        assert!((usd - (0.15 + 0.075 + 0.60)).abs() < 1e-9, "{usd}");
    }
}
