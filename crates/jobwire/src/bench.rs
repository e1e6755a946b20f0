//! `jobwire bench …`: the numbers in BENCHMARKS.md. Each prints a human summary and, last,
//! one JSON line. Timings are medians and percentiles of many runs, and comparisons are
//! ratios measured in the same run, because the machines are shared and noisy.

use std::time::{Duration, Instant};

use anyhow::Context;
use chrono::Utc;
use hdrhistogram::Histogram;
use jobwire_core::CategorySlug;
use jobwire_core::matching::synthetic::{synthetic_job, synthetic_subscribers};
use jobwire_core::matching::{JobFacts, SubscriberIndex, scan_matches};
use jobwire_core::normalize::normalize;
use jobwire_core::seeded::Seeded;
use jobwire_store::SubscriberSpec;
use jobwire_testkit::telegram::{FakeTelegram, FakeTelegramStats, RateLimits, RecordedMessage};
use serde_json::json;

use crate::pipeline;
use crate::testbed::{Bed, fake_llm, fake_telegram, seed_job, start_pipeline, subscriber, temp_db};

#[derive(Debug, Clone, clap::Subcommand)]
pub enum Bench {
    /// Matching one job against N subscribers: the index vs a plain scan.
    Matching {
        /// Subscribers in the index.
        #[arg(long, default_value_t = 100_000)]
        subscribers: usize,
        /// Jobs matched against them.
        #[arg(long, default_value_t = 2_000)]
        jobs: usize,
    },
    /// Intake's CPU path: normalization, channel rules and near-duplicate detection, with a
    /// window of earlier posts in the duplicate index.
    Intake {
        /// Earlier posts already in the near-duplicate index.
        #[arg(long, default_value_t = 100_000)]
        window: usize,
        /// Posts taken in and measured.
        #[arg(long, default_value_t = 20_000)]
        posts: usize,
    },
    /// Deliveries per second through the fake Telegram with its limits lifted, and the
    /// pipeline's peak memory (the fake runs in a process of its own, reported apart).
    Delivery {
        /// Deliveries in all (10 jobs, one delivery per job and subscriber).
        #[arg(long, default_value_t = 50_000)]
        deliveries: usize,
        /// Print only the JSON line (what CI's memory guard reads).
        #[arg(long)]
        json: bool,
    },
    /// Intake to the fake Telegram's receipt, one post at a time, zero-latency fake LLM.
    Latency {
        /// Posts sent through, one at a time.
        #[arg(long, default_value_t = 150)]
        posts: usize,
    },
    /// A burst under Telegram's default limits over three bots.
    Burst {
        /// Deliveries in the burst.
        #[arg(long, default_value_t = 5_000)]
        deliveries: usize,
    },
    /// Distributed mode, limits lifted: a dispatcher and sender processes over PostgreSQL
    /// and RabbitMQ, against the embedded mode in the same run.
    DistributedDelivery {
        /// Deliveries in all (10 jobs, one delivery per job and subscriber).
        #[arg(long, default_value_t = 50_000)]
        deliveries: usize,
        /// Sender processes; several (e.g. `--senders 1,2,4`) are measured one after another.
        #[arg(long, value_delimiter = ',', default_value = "2")]
        senders: Vec<usize>,
        #[command(flatten)]
        services: Services,
    },
    /// Distributed mode: intake (in this process) to the fake Telegram's receipt through
    /// RabbitMQ and classifier, dispatcher and sender processes; zero-latency fake LLM.
    DistributedLatency {
        /// Posts sent through, one at a time.
        #[arg(long, default_value_t = 150)]
        posts: usize,
        #[command(flatten)]
        services: Services,
    },
    /// The LLM path at a real model's speed: intake to the fake Telegram's receipt for posts
    /// the LLM classified and those the local model did, requests, output tokens and dollars
    /// per 1,000 posts; the cascade streamed, not streamed, and the naive design (the LLM
    /// alone, one post per request) at once.
    Llm {
        #[command(flatten)]
        args: crate::bench_llm::LlmBenchArgs,
    },
}

/// The services a distributed benchmark runs against.
#[derive(Debug, Clone, clap::Args)]
pub struct Services {
    /// A PostgreSQL server where the user may create databases.
    #[arg(
        long,
        env = "JOBWIRE_TEST_POSTGRES_URL",
        default_value = "postgres://postgres@127.0.0.1:5432/test"
    )]
    pub postgres: String,
    /// A RabbitMQ server the benchmark may declare queues on.
    #[arg(
        long,
        env = "JOBWIRE_TEST_AMQP_URL",
        default_value = "amqp://guest:guest@127.0.0.1:5672/%2f"
    )]
    pub amqp: String,
}

pub async fn run(which: &Bench) -> anyhow::Result<()> {
    let result = match which {
        Bench::Matching { subscribers, jobs } => matching(*subscribers, *jobs)?,
        Bench::Intake { window, posts } => intake(*window, *posts)?,
        Bench::Delivery { deliveries, json } => {
            let result = delivery(*deliveries, !*json).await?;
            println!("{result}");
            return Ok(());
        }
        Bench::Latency { posts } => latency(*posts).await?,
        Bench::Burst { deliveries } => burst(*deliveries).await?,
        Bench::DistributedDelivery {
            deliveries,
            senders,
            services,
        } => crate::bench_distributed::delivery(*deliveries, senders, services).await?,
        Bench::DistributedLatency { posts, services } => {
            crate::bench_distributed::latency(*posts, services).await?
        }
        Bench::Llm { args } => crate::bench_llm::run(args.clone()).await?,
    };
    println!("{result}");
    Ok(())
}

fn histogram() -> anyhow::Result<Histogram<u64>> {
    Histogram::new_with_bounds(1, 3_600_000_000, 3).context("histogram")
}

fn us(h: &Histogram<u64>, q: f64) -> f64 {
    h.value_at_quantile(q) as f64
}

/// Index vs scan on synthetic subscribers; both in the same run, over the same jobs.
pub fn matching(n: usize, jobs: usize) -> anyhow::Result<serde_json::Value> {
    let subscribers = synthetic_subscribers(n, 42);
    let rss_before = crate::demo::peak_rss_mb();
    let built = Instant::now();
    let index = SubscriberIndex::build(subscribers.clone());
    let build_ms = built.elapsed().as_secs_f64() * 1000.0;
    let jobs: Vec<_> = (0..jobs as u64)
        .map(|s| {
            let (cats, text) = synthetic_job(s);
            (cats, normalize(&text))
        })
        .collect();
    let mut hi = histogram()?;
    let mut hs = histogram()?;
    let mut matched = 0usize;
    let bar = crate::progress::bar(jobs.len() as u64, "matching");
    for (cats, text) in &jobs {
        let facts = JobFacts {
            categories: cats,
            normalized_text: text,
        };
        let t = Instant::now();
        let a = index.matches(&facts);
        hi.record((t.elapsed().as_nanos() / 1000).max(1) as u64)?;
        let t = Instant::now();
        let b = scan_matches(&subscribers, &facts);
        hs.record((t.elapsed().as_nanos() / 1000).max(1) as u64)?;
        anyhow::ensure!(a == b, "index and scan disagree");
        matched += a.len();
        bar.inc(1);
    }
    let ratio = us(&hs, 0.5) / us(&hi, 0.5).max(1.0);
    println!(
        "matching {n} subscribers, {} jobs (avg {} matches): index p50 {:.0} µs p99 {:.0} µs; scan p50 {:.0} µs p99 {:.0} µs; scan/index (median) {ratio:.1}x; index build {build_ms:.0} ms",
        jobs.len(),
        matched / jobs.len().max(1),
        us(&hi, 0.5),
        us(&hi, 0.99),
        us(&hs, 0.5),
        us(&hs, 0.99),
    );
    Ok(json!({
        "bench": "matching", "subscribers": n, "jobs": jobs.len(),
        "index_p50_us": us(&hi, 0.5), "index_p99_us": us(&hi, 0.99),
        "scan_p50_us": us(&hs, 0.5), "scan_p99_us": us(&hs, 0.99),
        "speedup_median": ratio, "index_build_ms": build_ms,
        "peak_rss_mb_before_index": rss_before, "peak_rss_mb": crate::demo::peak_rss_mb(),
    }))
}

/// Normalization + rules + fingerprint + duplicate lookup and insert per post, with `window`
/// earlier posts indexed; and the index's memory.
pub fn intake(window: usize, posts: usize) -> anyhow::Result<serde_json::Value> {
    use jobwire_core::dedup::{DedupConfig, DuplicateIndex, fingerprint};
    use jobwire_core::rules::{ChannelRules, CompiledRules};
    let rules = CompiledRules::new(&ChannelRules::parse(
        [
            "нужен",
            "ищем",
            "looking for",
            "need",
            "#вакансия",
            "#hiring",
            "$",
            "₽",
        ],
        ["#резюме", "#ищуработу", "бесплатно", "unpaid", "курс"],
    )?);
    // Distinct vacancies: a realistic synthetic job, plus a dozen words of its own (the task,
    // the product, names) from a large made-up vocabulary, its own budget and contact, as
    // real posts differ from each other.
    let syllables = [
        "ка", "ро", "ми", "ta", "ven", "lo", "шу", "дин", "rex", "по", "ла", "quo", "ни", "za",
        "бер",
    ];
    let text = |i: usize| {
        let (_, body) = synthetic_job(i as u64);
        let mut rng = Seeded::new(i as u64 ^ 0x00C0_FFEE);
        let words: Vec<String> = (0..12)
            .map(|_| (0..3).map(|_| *rng.pick(&syllables)).collect())
            .collect();
        format!(
            "{body}\nПроект: {}. Бюджет {} ₽, контакт @client{i}",
            words.join(" "),
            1000 + rng.below(977) * 50
        )
    };
    let now = Utc::now();
    let mut index = DuplicateIndex::new(DedupConfig::default());
    let rss_before = crate::demo::peak_rss_mb();
    let loaded = Instant::now();
    let bar = crate::progress::bar(window as u64, "filling the window");
    for i in 0..window {
        let at = now - chrono::Duration::seconds((window - i) as i64 * 6);
        index.insert(i as i64, at, fingerprint(&text(i)));
        bar.inc(1);
    }
    bar.finish_and_clear();
    let load_s = loaded.elapsed().as_secs_f64();
    let bar = crate::progress::bar(posts as u64, "intake");
    let inputs: Vec<String> = (window..window + posts).map(text).collect();
    let mut duplicates = 0usize;
    let mut h = histogram()?;
    let started = Instant::now();
    for (k, raw) in inputs.iter().enumerate() {
        let t = Instant::now();
        let normalized = normalize(raw);
        let _ = rules.check(&normalized);
        let fp = fingerprint(raw);
        match index.find(&fp, now) {
            Some(_) => duplicates += 1,
            None => index.insert((window + k) as i64, now, fp),
        }
        h.record((t.elapsed().as_nanos() / 1000).max(1) as u64)?;
        bar.inc(1);
    }
    bar.finish_and_clear();
    let rate = posts as f64 / started.elapsed().as_secs_f64();
    let mb = index.approx_memory_bytes() as f64 / 1_048_576.0;
    println!(
        "intake CPU path with {window} earlier posts in the duplicate window: {rate:.0} posts/s (p50 {:.0} µs, p99 {:.0} µs per post); {duplicates} of {posts} taken as duplicates; index ~{mb:.1} MB for {} posts (filled in {load_s:.1} s)",
        us(&h, 0.5),
        us(&h, 0.99),
        index.len()
    );
    Ok(json!({
        "bench": "intake", "window": window, "posts": posts, "posts_per_second": rate,
        "p50_us": us(&h, 0.5), "p99_us": us(&h, 0.99), "duplicates": duplicates,
        "index_mb": mb, "index_posts": index.len(), "peak_rss_mb_before": rss_before,
        "peak_rss_mb": crate::demo::peak_rss_mb(),
    }))
}

/// Feeds the shipped labeled jobs one at a time through `intake` and records, for each one
/// taken in as new, the time from the intake call to the fake Telegram's receipt. Between
/// posts it waits for `running` to settle, or (another process's pipeline) 20 ms.
pub(crate) async fn one_at_a_time(
    intake: &jobwire_intake::stage::IntakeStage,
    telegram: &FakeTelegram,
    posts: usize,
    mut running: Option<&mut crate::pipeline::Pipeline>,
) -> anyhow::Result<Histogram<u64>> {
    let data = jobwire_core::dataset::LabeledPost::parse_all(pipeline::SHIPPED_TRAINING_DATA)?;
    let jobs: Vec<_> = data
        .iter()
        .filter(|p| {
            p.label
                .as_ref()
                .is_some_and(|l| l.is_job && !l.categories.is_empty())
        })
        .cycle()
        .take(posts)
        .collect();
    let mut h = histogram()?;
    let bar = crate::progress::bar(jobs.len() as u64, "one post at a time");
    for (i, post) in jobs.iter().enumerate() {
        bar.inc(1);
        let before = telegram.messages().len();
        let t0 = Utc::now();
        let outcome = intake
            .ingest(jobwire_core::IncomingPost {
                channel: post.channel.clone(),
                external_id: format!("{}-{i}", post.id),
                text: post.text.clone(),
                author: None,
                url: None,
                posted_at: t0,
            })
            .await?;
        // A re-post of an earlier vacancy is (rightly) not delivered again.
        if !matches!(outcome, jobwire_intake::stage::IntakeOutcome::Queued { .. }) {
            continue;
        }
        let deadline = Instant::now() + Duration::from_secs(10);
        let received = loop {
            let msgs = telegram.messages();
            if msgs.len() > before {
                break msgs[before].received_at;
            }
            anyhow::ensure!(
                Instant::now() < deadline,
                "post {} was not delivered within 10 s",
                post.id
            );
            tokio::time::sleep(Duration::from_millis(1)).await;
        };
        // Let the post's last status writes finish before the next one (light load).
        match running.as_deref_mut() {
            Some(p) => {
                p.wait_settled(Duration::from_secs(10)).await?;
            }
            None => tokio::time::sleep(Duration::from_millis(20)).await,
        }
        h.record(((received - t0).num_microseconds().unwrap_or(0)).max(1) as u64)?;
    }
    bar.finish_and_clear();
    Ok(h)
}

fn subscribers_in(category: &str, first_chat: i64, n: usize) -> Vec<SubscriberSpec> {
    let category = CategorySlug::parse(category).expect("a benchmark category");
    (0..n as i64)
        .map(|i| subscriber(first_chat + i, vec![category.clone()]))
        .collect()
}

/// The time from the first to the last receipt of `messages` (zero without any).
pub(crate) fn receipt_span(messages: &[RecordedMessage]) -> chrono::TimeDelta {
    let receipts = || messages.iter().map(|m| m.received_at);
    match (receipts().min(), receipts().max()) {
        (Some(first), Some(last)) => last - first,
        _ => chrono::TimeDelta::zero(),
    }
}

/// The fake Telegram in a process of its own (`jobwire fake-telegram --no-limits`): the
/// benchmark process's peak RSS is then the pipeline's alone, and the fake's own record of
/// every message it accepted is measured apart.
pub(crate) struct FakeProcess {
    child: std::process::Child,
    url: url::Url,
    http: reqwest012::Client,
}

impl FakeProcess {
    pub(crate) async fn start() -> anyhow::Result<Self> {
        let port = std::net::TcpListener::bind("127.0.0.1:0")?
            .local_addr()?
            .port();
        // JOBWIRE_BENCH_FAKE_TELEGRAM names another jobwire binary to run the fake from:
        // two builds compared against the same fake measure only their own difference.
        let exe = match std::env::var_os("JOBWIRE_BENCH_FAKE_TELEGRAM") {
            Some(path) if !path.is_empty() => std::path::PathBuf::from(path),
            _ => std::env::current_exe()?,
        };
        let child = std::process::Command::new(&exe)
            .args(["fake-telegram", "--no-limits", "--listen"])
            .arg(format!("127.0.0.1:{port}"))
            .env("RUST_LOG", "warn")
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .spawn()
            .with_context(|| format!("starting {} fake-telegram", exe.display()))?;
        let mut fake = Self {
            child,
            url: url::Url::parse(&format!("http://127.0.0.1:{port}/"))?,
            http: reqwest012::Client::new(),
        };
        let deadline = Instant::now() + Duration::from_secs(30);
        while fake.stats().await.is_err() {
            if let Some(status) = fake.child.try_wait()? {
                anyhow::bail!(
                    "{} fake-telegram exited ({status}) before it answered",
                    exe.display()
                );
            }
            anyhow::ensure!(
                Instant::now() < deadline,
                "the fake Telegram ({} fake-telegram) never answered",
                exe.display()
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        Ok(fake)
    }

    pub(crate) fn url(&self) -> url::Url {
        self.url.clone()
    }

    pub(crate) async fn stats(&self) -> anyhow::Result<FakeTelegramStats> {
        Ok(self
            .http
            .get(self.url.join("__testkit/stats")?)
            .send()
            .await?
            .error_for_status()?
            .json()
            .await?)
    }

    /// Waits until the fake accepted `n` messages (polled every 50 ms, not the store), with
    /// a progress bar of the messages accepted.
    pub(crate) async fn wait_accepted(
        &self,
        n: u64,
        timeout: Duration,
    ) -> anyhow::Result<FakeTelegramStats> {
        let deadline = Instant::now() + timeout;
        let bar = crate::progress::bar(n, "delivered");
        loop {
            let stats = self.stats().await?;
            bar.set_position(stats.accepted.min(n));
            if stats.accepted >= n {
                bar.finish_and_clear();
                return Ok(stats);
            }
            anyhow::ensure!(
                Instant::now() < deadline,
                "only {} of {n} delivered",
                stats.accepted
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// The fake process's peak RSS (its record of messages, its HTTP server).
    pub(crate) fn peak_rss_mb(&self) -> Option<f64> {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).ok()?;
        let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
        let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
        Some(kb / 1024.0)
    }
}

impl Drop for FakeProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Seconds from the first to the last message the fake accepted (at least 1 ms).
pub(crate) fn accept_span(stats: &FakeTelegramStats) -> f64 {
    match (stats.first_accepted_at, stats.last_accepted_at) {
        (Some(first), Some(last)) => (last - first).num_milliseconds().max(1) as f64 / 1000.0,
        _ => 0.001,
    }
}

/// Fan-out and delivery of pre-classified jobs, limits lifted on both sides; the fake
/// Telegram in its own process.
pub async fn delivery(deliveries: usize, verbose: bool) -> anyhow::Result<serde_json::Value> {
    let telegram = FakeProcess::start().await?;
    let (_dir, db) = temp_db()?;
    let bed = Bed::unlimited();
    let settings = bed.settings(telegram.url(), &db)?;
    let store = pipeline::open_store(&settings).await?;
    let jobs = 10usize;
    let per_job = deliveries.div_ceil(jobs);
    crate::subscribers::store_all(store.as_ref(), &subscribers_in("web", 1, per_job)).await?;
    for j in 0..jobs {
        seed_job(
            store.as_ref(),
            "@bench",
            &j.to_string(),
            &format!("Need a WordPress site fixed, job {j}. Budget $200. Contact @client{j}"),
            &["web"],
        )
        .await?;
    }
    drop(store);
    let rss_before = crate::demo::peak_rss_mb();
    let expected = per_job * jobs;
    let started = Instant::now();
    let (mut running, store) = start_pipeline(&settings).await?;
    let stats = telegram
        .wait_accepted(expected as u64, Duration::from_secs(1800))
        .await?;
    let elapsed = started.elapsed();
    let counts = running.wait_settled(Duration::from_secs(900)).await?;
    running.shutdown().await?;
    let stats = FakeTelegramStats {
        accepted: telegram.stats().await?.accepted,
        ..stats
    };
    anyhow::ensure!(
        counts.deliveries_sent as usize == expected && stats.accepted as usize == expected,
        "expected {expected} deliveries, sent {} and the fake accepted {}",
        counts.deliveries_sent,
        stats.accepted
    );
    let window = accept_span(&stats);
    let rate = expected as f64 / window;
    let overall = expected as f64 / elapsed.as_secs_f64();
    drop(store);
    let pipeline_rss = crate::demo::peak_rss_mb();
    let fake_rss = telegram.peak_rss_mb();
    if verbose {
        println!(
            "delivery: {expected} deliveries ({jobs} jobs x {per_job} subscribers); {rate:.0}/s between the first and last receipt, {overall:.0}/s including start-up and fan-out ({:.1} s); peak RSS: pipeline {:.0} MB, fake Telegram (own process, its record of every message) {:.0} MB",
            elapsed.as_secs_f64(),
            pipeline_rss.unwrap_or(0.0),
            fake_rss.unwrap_or(0.0),
        );
    }
    Ok(json!({
        "bench": "delivery", "deliveries": expected, "per_second": rate,
        "per_second_overall": overall, "seconds": elapsed.as_secs_f64(),
        "pipeline_peak_rss_mb": pipeline_rss, "peak_rss_mb": pipeline_rss,
        "peak_rss_mb_before_start": rss_before, "fake_telegram_peak_rss_mb": fake_rss,
    }))
}

/// One post at a time from intake to the fake Telegram's receipt.
pub async fn latency(posts: usize) -> anyhow::Result<serde_json::Value> {
    let llm = fake_llm().await?;
    let telegram = fake_telegram(None).await?;
    let (_dir, db) = temp_db()?;
    let bed = Bed {
        llm: Some(crate::config::LlmSection::new(llm.url(), "fake")),
        ..Bed::unlimited()
    };
    let settings = bed.settings(telegram.url(), &db)?;
    let (mut running, store) = start_pipeline(&settings).await?;
    let all = jobwire_core::category::standard();
    crate::subscribers::store_all(store.as_ref(), &[subscriber(42, all)]).await?;
    let intake = running.intake.clone();
    let h = one_at_a_time(&intake, &telegram, posts, Some(&mut running)).await?;
    running.shutdown().await?;
    println!(
        "latency intake → fake Telegram receipt over {} jobs, one at a time, zero-latency fake LLM: p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms",
        h.len(),
        us(&h, 0.5) / 1000.0,
        us(&h, 0.99) / 1000.0,
        h.max() as f64 / 1000.0
    );
    Ok(json!({
        "bench": "latency", "posts": h.len(),
        "p50_ms": us(&h, 0.5) / 1000.0, "p99_ms": us(&h, 0.99) / 1000.0, "max_ms": h.max() as f64 / 1000.0,
    }))
}

/// A progress bar of the messages the in-process fake received, redrawn five times a second
/// until the task is aborted (nothing when stderr is not a terminal).
fn watch_receipts(telegram: &FakeTelegram, n: u64) -> tokio::task::JoinHandle<()> {
    let bar = crate::progress::bar(n, "delivered");
    let telegram = telegram.state();
    tokio::spawn(async move {
        if !crate::progress::enabled() {
            return;
        }
        loop {
            bar.set_position(telegram.stats().accepted.min(n));
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    })
}

/// A burst under Telegram's default limits (30/s per bot, 1/s per chat) over three bots.
pub async fn burst(deliveries: usize) -> anyhow::Result<serde_json::Value> {
    let telegram = fake_telegram(Some(RateLimits::default())).await?;
    let (_dir, db) = temp_db()?;
    let bed = Bed {
        bots: vec!["a".into(), "b".into(), "c".into()],
        routes: vec![
            ("web".into(), "a".into()),
            ("design".into(), "b".into()),
            ("marketing".into(), "c".into()),
        ],
        ..Bed::default()
    };
    let settings = bed.settings(telegram.url(), &db)?;
    let store = pipeline::open_store(&settings).await?;
    let per_bot = deliveries / 3;
    let counts = [per_bot + deliveries % 3, per_bot, per_bot];
    let mut chat = 1i64;
    for ((cat, _), n) in bed.routes.iter().zip(counts) {
        crate::subscribers::store_all(store.as_ref(), &subscribers_in(cat, chat, n)).await?;
        chat += n as i64;
        seed_job(
            store.as_ref(),
            "@burst",
            cat,
            &format!("A {cat} job with a budget"),
            &[cat],
        )
        .await?;
    }
    drop(store);
    let started = Instant::now();
    let (mut running, _store) = start_pipeline(&settings).await?;
    let watch = watch_receipts(&telegram, deliveries as u64);
    let settled = running.wait_settled(Duration::from_secs(900)).await;
    watch.abort();
    settled?;
    let elapsed = started.elapsed();
    running.shutdown().await?;
    let messages = telegram.messages();
    let stats = telegram.stats();
    anyhow::ensure!(
        messages.len() == deliveries,
        "expected {deliveries} messages, got {}",
        messages.len()
    );
    // The busiest bot sends `counts[0]` messages at 30/s: the first at t=0, so the last
    // cannot arrive before (n - 1) / 30 s.
    let minimum = (counts[0] - 1) as f64 / 30.0;
    let took = receipt_span(&messages).num_milliseconds() as f64 / 1000.0;
    println!(
        "burst: {deliveries} deliveries over 3 bots at Telegram's default limits: first to last receipt {took:.2} s, theoretical minimum {minimum:.2} s ({:+.1}%), 429 answers: {}, whole run {:.1} s",
        (took / minimum - 1.0) * 100.0,
        stats.rejected_429,
        elapsed.as_secs_f64()
    );
    Ok(json!({
        "bench": "burst", "deliveries": deliveries, "seconds": took, "minimum_seconds": minimum,
        "over_minimum_pct": (took / minimum - 1.0) * 100.0, "rejected_429": stats.rejected_429,
    }))
}
