//! `jobwire demo`: the whole pipeline on one machine with no accounts. Replays a sample of
//! channel posts through intake, the local classifier (or an LLM), fan-out and delivery
//! into an in-process fake Telegram, then reports what each subscriber received.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::Context;
use chrono::{Timelike, Utc};
use jobwire_intake::JsonlSource;
use jobwire_store::{QuietHoursSpec, SubscriberSpec};
use jobwire_testkit::telegram::RateLimits;
use serde::Serialize;

use crate::config::Config;
use crate::pipeline;

pub const DEMO_CONFIG: &str = include_str!("../../../data/demo.toml");
pub const DEMO_SUBSCRIBERS: &str = include_str!("../../../data/demo-subscribers.toml");
/// The demo subscriber whose quiet hours are made to cover the moment the demo runs.
pub const QUIET_CHAT: i64 = 1005;
/// The demo subscriber who has blocked the bots.
pub const BLOCKED_CHAT: i64 = 1007;

#[derive(Debug, Clone)]
pub struct DemoOptions {
    /// Posts to replay (JSONL); the shipped sample when `None`.
    pub posts: Option<PathBuf>,
    /// Classify through this OpenAI-compatible endpoint instead of the local model.
    pub llm_url: Option<url::Url>,
    pub llm_model: String,
    /// Telegram's limits divided by this (1 = Telegram's real pace).
    pub speed: u32,
    /// How many of the posts are read a second time (as a reconnecting source does), to
    /// show exact de-duplication.
    pub reread: usize,
    /// Stop at the first malformed line of `posts` (default: report it, skip it, read on).
    pub strict: bool,
}

impl Default for DemoOptions {
    fn default() -> Self {
        Self {
            posts: None,
            llm_url: None,
            llm_model: "gpt-4o-mini".to_owned(),
            speed: 20,
            reread: 20,
            strict: false,
        }
    }
}

/// What one subscriber got.
#[derive(Debug, Clone, Serialize)]
pub struct SubscriberReport {
    pub chat_id: i64,
    pub name: String,
    pub received: usize,
    /// First line of each received message's visible text.
    pub headlines: Vec<String>,
    pub held: usize,
    pub status: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct DemoSummary {
    pub classifier: String,
    pub posts_read: u64,
    /// Malformed lines of the posts file, each reported (with its line) and skipped.
    pub skipped_lines: u64,
    pub filtered: u64,
    pub duplicates: u64,
    pub near_duplicates: u64,
    pub jobs: u64,
    /// Résumés routed to the subscribers who asked for them.
    pub resumes: u64,
    pub not_jobs: u64,
    pub deliveries_sent: u64,
    pub deliveries_held: u64,
    pub deliveries_blocked: u64,
    pub deliveries_failed: u64,
    pub messages_accepted: u64,
    pub telegram_429: u64,
    pub telegram_400: u64,
    pub elapsed_ms: u64,
    pub peak_rss_mb: Option<f64>,
}

#[derive(Debug, Clone, Serialize)]
pub struct DemoReport {
    pub subscribers: Vec<SubscriberReport>,
    pub summary: DemoSummary,
}

/// Peak resident memory of this process, from `/proc/self/status` (Linux).
pub fn peak_rss_mb() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024.0)
}

fn quiet_subscriber() -> SubscriberSpec {
    // Quiet from an hour ago until six hours from now, so its jobs are held.
    let now = Utc::now();
    let start = (now - chrono::Duration::hours(1)).time();
    let end = (now + chrono::Duration::hours(6)).time();
    SubscriberSpec {
        chat_id: QUIET_CHAT,
        name: Some("Eva (texts and translation; in quiet hours now)".to_owned()),
        categories: ["texts", "translation"]
            .into_iter()
            .map(|s| jobwire_core::CategorySlug::parse(s).expect("a standard slug"))
            .collect(),
        include: vec![],
        exclude: vec![],
        paused: false,
        quiet_hours: Some(QuietHoursSpec {
            start: format!("{:02}:{:02}", start.hour(), start.minute()),
            end: format!("{:02}:{:02}", end.hour(), end.minute()),
            time_zone: "UTC".to_owned(),
        }),
        min_budget: None,
    }
}

/// Runs the demo and returns its report.
pub async fn run(opts: DemoOptions) -> anyhow::Result<DemoReport> {
    let started = Instant::now();
    let speed = opts.speed.max(1);
    let dir = tempfile::tempdir().context("creating a temporary directory")?;

    let limits = RateLimits {
        global_per_sec: 30 * speed,
        per_chat_per_sec: speed,
        per_group_per_min: 20 * speed,
    };
    let telegram = crate::testbed::fake_telegram(Some(limits))
        .await
        .context("starting the in-process fake Telegram")?;

    let mut config = Config::from_toml(DEMO_CONFIG)?;
    config.database.url = format!("sqlite://{}", dir.path().join("demo.db").display()).into();
    config.telegram.api_url = telegram.url();
    config.telegram.global_per_sec = limits.global_per_sec;
    config.telegram.per_chat_per_sec = limits.per_chat_per_sec;
    config.telegram.per_group_per_min = limits.per_group_per_min;
    config.scheduler.tick_ms = 100;
    if let Some(url) = &opts.llm_url {
        config.llm = Some(crate::config::LlmSection::new(url.clone(), &opts.llm_model));
    }
    let mut env = crate::testbed::TestEnv::default();
    for (i, bot) in config.bots.iter().enumerate() {
        env.vars.insert(
            format!("JOBWIRE_BOT_{}_TOKEN", bot.name.to_ascii_uppercase()),
            format!(
                "{}:DEMO-{}-not-a-real-token-xxxxxxxx",
                700_001 + i,
                bot.name
            ),
        );
    }
    if let Ok(key) = std::env::var("JOBWIRE_LLM_API_KEY") {
        env.vars.insert("JOBWIRE_LLM_API_KEY".to_owned(), key);
    }
    let settings = config.resolve(&env)?;
    for bot in &settings.bots {
        if let Some(id) = bot
            .token
            .expose()
            .split(':')
            .next()
            .and_then(|id| id.parse().ok())
        {
            telegram.block_chat(id, BLOCKED_CHAT);
        }
    }

    let store = pipeline::open_store(&settings).await?;
    let queue = pipeline::open_queue(&settings).await?;
    let mut subscribers = crate::subscribers::parse(DEMO_SUBSCRIBERS)?;
    subscribers.push(quiet_subscriber());
    crate::subscribers::store_all(store.as_ref(), &subscribers).await?;

    let classifiers = pipeline::classifiers(&settings)?;
    let classifier = classifiers.name();
    let mut running =
        crate::testbed::start_in_process(&settings, store.clone(), queue, classifiers).await?;

    let posts_path = match &opts.posts {
        Some(p) => p.clone(),
        None => {
            let p = dir.path().join("posts.jsonl");
            std::fs::write(&p, pipeline::SHIPPED_TRAINING_DATA)?;
            p
        }
    };
    let mut source = JsonlSource::open(&posts_path, Utc::now())
        .await
        .with_context(|| format!("--posts: cannot read {}", posts_path.display()))?
        .skip_bad_lines(!opts.strict);
    let mut tally = running.intake.drain(&mut source).await?;
    let skipped_lines = source.skipped_lines() as u64;
    // A reconnecting source sees its latest messages again: exact de-duplication.
    let mut again = JsonlSource::open(&posts_path, Utc::now())
        .await?
        .skip_bad_lines(true);
    let mut reread = 0;
    'outer: while let Some(batch) = jobwire_intake::Source::next_batch(&mut again).await? {
        for post in batch {
            if reread >= opts.reread {
                break 'outer;
            }
            tally.add(&running.intake.ingest(post).await?);
            reread += 1;
        }
    }

    let counts = running.wait_settled(Duration::from_secs(600)).await?;
    let messages = telegram.messages();
    let tg = telegram.stats();
    running.shutdown().await?;

    let mut reports = Vec::new();
    let mut all = crate::subscribers::parse(DEMO_SUBSCRIBERS)?;
    all.push(quiet_subscriber());
    let held_by_chat = held_per_chat(store.as_ref()).await?;
    for s in &all {
        let mine: Vec<_> = messages.iter().filter(|m| m.chat_id == s.chat_id).collect();
        let status = if s.paused {
            "paused"
        } else if s.chat_id == BLOCKED_CHAT {
            "blocked the bot"
        } else if s.quiet_hours.is_some() {
            "quiet hours"
        } else {
            "active"
        };
        reports.push(SubscriberReport {
            chat_id: s.chat_id,
            name: s.name.clone().unwrap_or_default(),
            received: mine.len(),
            headlines: mine.iter().map(|m| headline(&m.visible_text)).collect(),
            held: held_by_chat.get(&s.chat_id).copied().unwrap_or(0),
            status: status.to_owned(),
        });
    }
    let summary = DemoSummary {
        classifier,
        posts_read: tally.read,
        skipped_lines,
        filtered: tally.filtered,
        duplicates: tally.duplicates,
        near_duplicates: tally.near_duplicates,
        jobs: counts.jobs,
        resumes: counts.resumes,
        not_jobs: counts.not_job,
        deliveries_sent: counts.deliveries_sent,
        deliveries_held: counts.deliveries_held,
        deliveries_blocked: counts.deliveries_blocked,
        deliveries_failed: counts.deliveries_failed,
        messages_accepted: tg.accepted,
        telegram_429: tg.rejected_429,
        telegram_400: tg.rejected_400,
        elapsed_ms: started.elapsed().as_millis() as u64,
        peak_rss_mb: peak_rss_mb(),
    };
    telegram.shutdown().await;
    Ok(DemoReport {
        subscribers: reports,
        summary,
    })
}

async fn held_per_chat(store: &dyn jobwire_store::Store) -> anyhow::Result<BTreeMap<i64, usize>> {
    let mut held = BTreeMap::new();
    for id in store
        .deliveries_in_status(jobwire_store::DeliveryStatus::Held, u32::MAX)
        .await?
    {
        if let Some(d) = store.delivery(id).await? {
            *held.entry(d.chat_id).or_insert(0) += 1;
        }
    }
    Ok(held)
}

/// The first non-empty line after the card's header, cut to 80 characters.
fn headline(visible: &str) -> String {
    let line = visible
        .lines()
        .skip(1)
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("");
    let mut out: String = line.chars().take(80).collect();
    if line.chars().count() > 80 {
        out.push('…');
    }
    out
}

/// Prints the report for a person; with `json`, ends with the summary as one JSON line.
pub fn print(report: &DemoReport, json: bool) {
    println!("What each subscriber received:\n");
    for s in &report.subscribers {
        println!(
            "  {} (chat {}) [{}]: {} message(s){}",
            s.name,
            s.chat_id,
            s.status,
            s.received,
            if s.held > 0 {
                format!(", {} held until their quiet hours end", s.held)
            } else {
                String::new()
            }
        );
        for h in s.headlines.iter().take(4) {
            println!("      • {h}");
        }
        if s.headlines.len() > 4 {
            println!("      … and {} more", s.headlines.len() - 4);
        }
    }
    let m = &report.summary;
    println!();
    println!("Summary ({} classifier):", m.classifier);
    println!(
        "  posts read {}, filtered by channel rules {}, exact duplicates {}, re-posts of an earlier vacancy {}",
        m.posts_read, m.filtered, m.duplicates, m.near_duplicates
    );
    if m.skipped_lines > 0 {
        println!(
            "  malformed lines skipped {} (each reported above with its line)",
            m.skipped_lines
        );
    }
    println!(
        "  jobs {}, résumés {}, not jobs {}",
        m.jobs, m.resumes, m.not_jobs
    );
    println!(
        "  deliveries sent {}, held (quiet hours) {}, to a blocked chat {}, failed {}",
        m.deliveries_sent, m.deliveries_held, m.deliveries_blocked, m.deliveries_failed
    );
    println!(
        "  fake Telegram: {} messages accepted, {} answered 429, {} answered 400",
        m.messages_accepted, m.telegram_429, m.telegram_400
    );
    match m.peak_rss_mb {
        Some(mb) => println!(
            "  time {:.2} s, peak memory {mb:.1} MB",
            m.elapsed_ms as f64 / 1000.0
        ),
        None => println!("  time {:.2} s", m.elapsed_ms as f64 / 1000.0),
    }
    if json {
        match serde_json::to_string(m) {
            Ok(line) => println!("{line}"),
            Err(e) => eprintln!("cannot encode the summary: {e}"),
        }
    }
}
