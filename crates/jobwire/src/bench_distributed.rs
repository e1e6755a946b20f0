//! The distributed benchmarks: role processes (this same binary, `run --role …`) over a
//! fresh PostgreSQL database and RabbitMQ queues with a unique prefix.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::Context;
use chrono::Utc;
use hdrhistogram::Histogram;
use serde_json::json;
use sqlx::Connection;

use crate::bench::Services;
use crate::testbed::{bot_token, fake_llm, fake_telegram, seed_job};

struct Scratch {
    base: String,
    name: String,
    url: String,
    prefix: String,
    dir: tempfile::TempDir,
    amqp: String,
}

impl Scratch {
    async fn new(services: &Services) -> anyhow::Result<Self> {
        let suffix = format!("{}_{}", std::process::id(), Utc::now().timestamp_millis());
        let name = format!("jobwire_bench_{suffix}");
        let mut conn = sqlx::PgConnection::connect(&services.postgres)
            .await
            .context("--postgres")?;
        sqlx::query(sqlx::AssertSqlSafe(format!("CREATE DATABASE {name}")))
            .execute(&mut conn)
            .await?;
        let mut url = url::Url::parse(&services.postgres)?;
        url.set_path(&format!("/{name}"));
        Ok(Self {
            base: services.postgres.clone(),
            name,
            url: url.to_string(),
            prefix: format!("jwbench{suffix}."),
            dir: tempfile::tempdir()?,
            amqp: services.amqp.clone(),
        })
    }

    /// Runs `bench` on a new scratch database and queue prefix, then drops them; when it
    /// fails, prints the roles' logs first.
    async fn run<T>(
        services: &Services,
        bench: impl AsyncFnOnce(&Scratch) -> anyhow::Result<T>,
    ) -> anyhow::Result<T> {
        let scratch = Self::new(services).await?;
        let result = bench(&scratch).await;
        if result.is_err() {
            scratch.print_logs();
        }
        scratch.cleanup().await;
        result
    }

    fn config(&self, api: &url::Url, extra: &str) -> anyhow::Result<std::path::PathBuf> {
        let path = self.dir.path().join("jobwire.toml");
        let subscribers = self.dir.path().join("subscribers.toml");
        if !subscribers.exists() {
            std::fs::write(&subscribers, "")?;
        }
        std::fs::write(
            &path,
            format!(
                "subscribers_file = \"{}\"\n[database]\nurl = \"{}\"\n[queue]\nurl = \"{}\"\nprefix = \"{}\"\n\
                 [telegram]\napi_url = \"{api}\"\nunlimited = true\n[scheduler]\ntick_ms = 100\n{extra}\
                 [[bots]]\nname = \"dev\"\n",
                subscribers.display(),
                self.url,
                self.amqp,
                self.prefix
            ),
        )?;
        Ok(path)
    }

    /// The last lines of every role's log, to show why a run failed.
    fn print_logs(&self) {
        let Ok(entries) = std::fs::read_dir(self.dir.path()) else {
            return;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.extension().is_some_and(|e| e == "log") {
                let text = std::fs::read_to_string(&path).unwrap_or_default();
                let lines: Vec<&str> = text.lines().collect();
                eprintln!("--- {}", path.display());
                for line in &lines[lines.len().saturating_sub(20)..] {
                    eprintln!("{line}");
                }
            }
        }
    }

    async fn cleanup(&self) {
        let mut config = jobwire_queue::AmqpConfig::new(self.amqp.clone());
        config.queue_prefix = self.prefix.clone();
        if let Ok(q) = jobwire_queue::AmqpQueue::connect(config).await {
            let _ = q.delete_topology().await;
            q.close().await;
        }
        if let Ok(mut conn) = sqlx::PgConnection::connect(&self.base).await {
            let _ = sqlx::query(sqlx::AssertSqlSafe(format!(
                "DROP DATABASE IF EXISTS {} WITH (FORCE)",
                self.name
            )))
            .execute(&mut conn)
            .await;
        }
    }
}

struct Proc {
    child: Child,
    admin: u16,
}

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = Command::new("kill")
            .arg("-TERM")
            .arg(self.child.id().to_string())
            .status();
        let _ = self.child.wait();
    }
}

async fn spawn(config: &Path, roles: &str, dir: &Path) -> anyhow::Result<Proc> {
    let admin = std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port();
    let log = std::fs::File::create(dir.join(format!("{roles}-{admin}.log")))?;
    let child = Command::new(std::env::current_exe()?)
        .args(["run", "--config"])
        .arg(config)
        .args(["--role", roles])
        .env("JOBWIRE__ADMIN__LISTEN", format!("127.0.0.1:{admin}"))
        .env("JOBWIRE_BOT_DEV_TOKEN", bot_token(0))
        .env("RUST_LOG", "warn")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(log)
        .spawn()?;
    let mut p = Proc { child, admin };
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let ready = reqwest012::get(format!("http://127.0.0.1:{}/readyz", p.admin))
            .await
            .is_ok_and(|r| r.status().is_success());
        if ready {
            return Ok(p);
        }
        if let Some(status) = p.child.try_wait()? {
            anyhow::bail!("{roles} exited with {status} (logs in {})", dir.display());
        }
        anyhow::ensure!(Instant::now() < deadline, "{roles} never became ready");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// A dispatcher and `senders` sender processes deliver pre-classified jobs (one run per
/// entry of `senders`); the embedded mode does the same in this process first, for the
/// ratio. The fake Telegram runs in a process of its own in both.
pub async fn delivery(
    deliveries: usize,
    senders: &[usize],
    services: &Services,
) -> anyhow::Result<serde_json::Value> {
    let embedded = crate::bench::delivery(deliveries, true).await?;
    let embedded_rate = embedded["per_second"].as_f64().unwrap_or(0.0);
    let mut runs = Vec::new();
    for &n_senders in senders {
        let n_senders = n_senders.max(1);
        let (rate, seconds, n) = Scratch::run(services, async |scratch| {
            distributed_delivery(deliveries, n_senders, scratch).await
        })
        .await?;
        println!(
            "distributed delivery: {n} deliveries through RabbitMQ by {n_senders} sender process(es): {rate:.0}/s ({seconds:.1} s); embedded {embedded_rate:.0}/s; distributed/embedded {:.2}",
            rate / embedded_rate.max(1.0)
        );
        runs.push(json!({
            "senders": n_senders, "deliveries": n, "per_second": rate, "seconds": seconds,
            "ratio_to_embedded": rate / embedded_rate.max(1.0),
        }));
    }
    let last = runs.last().cloned().unwrap_or_default();
    Ok(json!({
        "bench": "distributed_delivery", "deliveries": last["deliveries"],
        "per_second": last["per_second"], "embedded_per_second": embedded_rate,
        "ratio_to_embedded": last["ratio_to_embedded"], "runs": runs,
    }))
}

async fn distributed_delivery(
    deliveries: usize,
    senders: usize,
    scratch: &Scratch,
) -> anyhow::Result<(f64, f64, usize)> {
    let telegram = crate::bench::FakeProcess::start().await?;
    let jobs = 10usize;
    let per_job = deliveries.div_ceil(jobs);
    let mut subs = String::new();
    for chat in 1..=per_job {
        subs.push_str(&format!(
            "[[subscriber]]\nchat_id = {chat}\ncategories = [\"web\"]\n"
        ));
    }
    std::fs::write(scratch.dir.path().join("subscribers.toml"), subs)?;
    let config = scratch.config(&telegram.url(), "")?;
    {
        let store = jobwire_store::PostgresStore::open(&scratch.url).await?;
        for j in 0..jobs {
            seed_job(
                &store,
                "@bench",
                &j.to_string(),
                &format!("Web job {j}, $200"),
                &["web"],
            )
            .await?;
        }
        store.close().await;
    }
    let mut running = Vec::with_capacity(senders);
    for _ in 0..senders {
        running.push(spawn(&config, "sender", scratch.dir.path()).await?);
    }
    let started = Instant::now();
    let _dispatcher = spawn(&config, "dispatcher", scratch.dir.path()).await?;
    let expected = jobs * per_job;
    let stats = telegram
        .wait_accepted(expected as u64, Duration::from_secs(1800))
        .await?;
    let seconds = started.elapsed().as_secs_f64();
    let window = crate::bench::accept_span(&stats);
    Ok((
        stats.accepted as f64 / window,
        seconds,
        stats.accepted as usize,
    ))
}

/// Intake in this process, every other role in its own process, one post at a time.
pub async fn latency(posts: usize, services: &Services) -> anyhow::Result<serde_json::Value> {
    let h = Scratch::run(services, async |scratch| {
        distributed_latency(posts, scratch).await
    })
    .await?;
    let q = |p: f64| h.value_at_quantile(p) as f64 / 1000.0;
    println!(
        "distributed latency intake → fake Telegram receipt over {} jobs through RabbitMQ (classifier, dispatcher, sender processes), zero-latency fake LLM: p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms",
        h.len(),
        q(0.5),
        q(0.99),
        h.max() as f64 / 1000.0
    );
    Ok(json!({
        "bench": "distributed_latency", "posts": h.len(), "p50_ms": q(0.5), "p99_ms": q(0.99),
        "max_ms": h.max() as f64 / 1000.0,
    }))
}

async fn distributed_latency(posts: usize, scratch: &Scratch) -> anyhow::Result<Histogram<u64>> {
    let llm = fake_llm().await?;
    let telegram = fake_telegram(None).await?;
    let all: Vec<String> = crate::config::DEFAULT_CATEGORIES
        .iter()
        .map(|(s, _, _)| format!("{s:?}"))
        .collect();
    std::fs::write(
        scratch.dir.path().join("subscribers.toml"),
        format!(
            "[[subscriber]]\nchat_id = 42\ncategories = [{}]\n",
            all.join(", ")
        ),
    )?;
    let config = scratch.config(
        &telegram.url(),
        &format!("[llm]\nbase_url = \"{}\"\nmodel = \"fake\"\n", llm.url()),
    )?;
    let _dispatcher = spawn(&config, "dispatcher", scratch.dir.path()).await?;
    let _classifier = spawn(&config, "classifier", scratch.dir.path()).await?;
    let _sender = spawn(&config, "sender", scratch.dir.path()).await?;

    let store: std::sync::Arc<dyn jobwire_store::Store> =
        std::sync::Arc::new(jobwire_store::PostgresStore::open(&scratch.url).await?);
    let mut amqp = jobwire_queue::AmqpConfig::new(scratch.amqp.clone());
    amqp.queue_prefix = scratch.prefix.clone();
    let queue: std::sync::Arc<dyn jobwire_queue::Queue> =
        std::sync::Arc::new(jobwire_queue::AmqpQueue::connect(amqp).await?);
    let intake = jobwire_intake::stage::IntakeStage::new(store, queue);
    crate::bench::one_at_a_time(&intake, &telegram, posts, None).await
}
