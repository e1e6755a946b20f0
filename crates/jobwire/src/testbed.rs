//! A pipeline on a temporary database wired to local stand-ins: what the end-to-end tests
//! and `jobwire bench` run. Everything goes through the real code: the same settings
//! resolution, stages, teloxide and async-openai clients, over real HTTP.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::Context;
use chrono::Utc;
use jobwire_deliver::RateLimitConfig;
use jobwire_queue::Queue;
use jobwire_store::{ClassificationRecord, NewPost, PostId, PostStatus, Store, SubscriberSpec};
use jobwire_testkit::llm::{FakeLlm, FakeLlmConfig, OracleEntry, load_oracle_jsonl};
use jobwire_testkit::telegram::{FakeTelegram, FakeTelegramConfig, RateLimits};

use crate::config::{
    BotSection, CategorySection, ClassifierKind, Config, Environment, LlmSection, Settings,
    UpdatesMode,
};

/// Environment with made-up bot tokens: `JOBWIRE_BOT_<NAME>_TOKEN` = `<id>:<secret>`.
#[derive(Debug, Clone, Default)]
pub struct TestEnv {
    pub vars: BTreeMap<String, String>,
}

impl Environment for TestEnv {
    fn var(&self, name: &str) -> Option<String> {
        self.vars.get(name).cloned()
    }
}

/// The made-up token of the `i`-th test bot; its bot id is `800_001 + i`.
pub fn bot_token(i: usize) -> String {
    format!("{}:TESTKIT-token-secret-part-{i:04}-xxxxxxxx", 800_001 + i)
}

pub fn bot_id(i: usize) -> u64 {
    800_001 + i as u64
}

/// A test configuration.
#[derive(Debug, Clone)]
pub struct Bed {
    /// Bot names; categories are spread over them round-robin unless `routes` is set.
    pub bots: Vec<String>,
    /// `(slug, bot)` pairs; default: the twelve built-in categories over `bots`.
    pub routes: Vec<(String, String)>,
    pub limits: RateLimitConfig,
    pub llm: Option<LlmSection>,
    pub scheduler_tick_ms: u64,
    pub classifier_concurrency: usize,
    pub classifier_retry_base_ms: u64,
    pub fallback_after: u32,
    /// How posts are classified; default: the LLM for every post when `llm` is set (what
    /// the spine's tests measure), else the local model.
    pub classifier_kind: Option<ClassifierKind>,
    /// The `[[bots]]` entry that is the main bot.
    pub main_bot: Option<String>,
    /// How the bot role gets updates; default off (no users type in most tests).
    pub updates: UpdatesMode,
}

impl Default for Bed {
    fn default() -> Self {
        Self {
            bots: vec!["dev".into(), "creative".into(), "business".into()],
            routes: Vec::new(),
            limits: RateLimitConfig::default(),
            llm: None,
            scheduler_tick_ms: 50,
            classifier_concurrency: 64,
            classifier_retry_base_ms: 100,
            fallback_after: 3,
            classifier_kind: None,
            main_bot: None,
            updates: UpdatesMode::Off,
        }
    }
}

impl Bed {
    /// The default bed with the delivery limits lifted.
    pub fn unlimited() -> Self {
        Self {
            limits: RateLimitConfig {
                unlimited: true,
                ..RateLimitConfig::default()
            },
            ..Self::default()
        }
    }

    /// Settings for a pipeline on `db` talking to the Bot API at `api_url`.
    pub fn settings(&self, api_url: url::Url, db: &Path) -> anyhow::Result<Settings> {
        let mut config = Config::default();
        config.database.url = format!("sqlite://{}", db.display()).into();
        config.telegram.api_url = api_url;
        config.telegram.global_per_sec = self.limits.global_per_sec;
        config.telegram.per_chat_per_sec = self.limits.per_chat_per_sec;
        config.telegram.per_group_per_min = self.limits.per_group_per_min;
        config.telegram.safety_margin = self.limits.safety_margin;
        config.telegram.unlimited = self.limits.unlimited;
        config.scheduler.tick_ms = self.scheduler_tick_ms;
        config.classifier.concurrency = self.classifier_concurrency;
        config.classifier.retry_base_ms = self.classifier_retry_base_ms;
        config.classifier.retry_max_secs = 2;
        config.classifier.fallback_after = self.fallback_after;
        config.llm = self.llm.clone();
        config.classifier.kind = match (self.classifier_kind, &self.llm) {
            (Some(kind), _) => kind,
            (None, Some(_)) => ClassifierKind::Llm,
            (None, None) => ClassifierKind::Local,
        };
        config.telegram.main_bot = self.main_bot.clone();
        config.telegram.updates = self.updates;
        let mut env = TestEnv::default();
        for (i, name) in self.bots.iter().enumerate() {
            config.bots.push(BotSection {
                name: name.clone(),
                token_env: None,
            });
            env.vars.insert(
                format!("JOBWIRE_BOT_{}_TOKEN", name.to_ascii_uppercase()),
                bot_token(i),
            );
        }
        let routes: Vec<(String, String)> = if self.routes.is_empty() {
            crate::config::DEFAULT_CATEGORIES
                .iter()
                .enumerate()
                .map(|(i, (slug, _, _))| {
                    ((*slug).to_owned(), self.bots[i % self.bots.len()].clone())
                })
                .collect()
        } else {
            self.routes.clone()
        };
        for (slug, bot) in routes {
            let (name, description) = crate::config::DEFAULT_CATEGORIES
                .iter()
                .find(|(s, _, _)| *s == slug)
                .map(|(_, n, d)| ((*n).to_owned(), (*d).to_owned()))
                .unwrap_or_else(|| (slug.clone(), String::new()));
            config.categories.push(CategorySection {
                slug,
                name,
                description,
                bot,
                digest: true,
            });
        }
        config.resolve(&env).context("test settings")
    }

    /// The bot id (as the fake Telegram records it) of a bot name.
    pub fn bot_id(&self, name: &str) -> Option<u64> {
        self.bots.iter().position(|b| b == name).map(bot_id)
    }
}

/// A fake Telegram on a free local port with `limits` (`None`: no limits).
pub async fn fake_telegram(limits: Option<RateLimits>) -> anyhow::Result<FakeTelegram> {
    let config = FakeTelegramConfig {
        limits,
        ..FakeTelegramConfig::default()
    };
    Ok(FakeTelegram::start(SocketAddr::from(([127, 0, 0, 1], 0)), config).await?)
}

/// A zero-latency fake LLM on a free local port that answers from the shipped labeled posts.
pub async fn fake_llm() -> anyhow::Result<FakeLlm> {
    let config = FakeLlmConfig {
        oracle: load_oracle_jsonl(crate::pipeline::SHIPPED_TRAINING_DATA)?,
        ..FakeLlmConfig::default()
    };
    Ok(FakeLlm::start(SocketAddr::from(([127, 0, 0, 1], 0)), config).await?)
}

/// A zero-latency fake LLM on a free local port that answers from `oracle` (set its speed
/// with `state().set_speed`).
pub async fn fake_llm_answering(oracle: Vec<OracleEntry>) -> anyhow::Result<FakeLlm> {
    let config = FakeLlmConfig {
        oracle,
        ..FakeLlmConfig::default()
    };
    Ok(FakeLlm::start(SocketAddr::from(([127, 0, 0, 1], 0)), config).await?)
}

/// An active subscriber of `categories` with no filters.
pub fn subscriber(chat_id: i64, categories: Vec<jobwire_core::CategorySlug>) -> SubscriberSpec {
    SubscriberSpec {
        chat_id,
        name: None,
        categories,
        include: vec![],
        exclude: vec![],
        paused: false,
        quiet_hours: None,
        min_budget: None,
    }
}

/// A temporary directory with a database path in it.
pub fn temp_db() -> anyhow::Result<(tempfile::TempDir, PathBuf)> {
    let dir = tempfile::tempdir()?;
    let db = dir.path().join("jobwire.db");
    Ok((dir, db))
}

/// Stores a post that is already classified as a job (benchmarks of fan-out and delivery
/// that should not measure a classifier).
pub async fn seed_job(
    store: &dyn Store,
    channel: &str,
    external_id: &str,
    text: &str,
    categories: &[&str],
) -> anyhow::Result<PostId> {
    let ch = store.ensure_channel(channel, Utc::now()).await?;
    let id = match store
        .insert_post(&NewPost {
            channel_id: ch.id,
            external_id: external_id.to_owned(),
            text: text.to_owned(),
            author: None,
            url: None,
            posted_at: Utc::now(),
            received_at: Utc::now(),
            status: PostStatus::Queued,
            filter_reason: None,
            fingerprint: None,
            duplicate_of: None,
        })
        .await?
    {
        jobwire_store::InsertOutcome::Inserted(id)
        | jobwire_store::InsertOutcome::AlreadyKnown(id) => id,
    };
    store
        .record_classification(
            id,
            &ClassificationRecord {
                is_job: true,
                kind: jobwire_core::PostKind::Job,
                categories: categories
                    .iter()
                    .filter_map(|c| jobwire_core::CategorySlug::parse(c).ok())
                    .collect(),
                confidence: 1.0,
                model: "seeded".into(),
                prompt_version: None,
                tokens_in: 0,
                tokens_out: 0,
                latency_ms: 0,
                extraction: None,
                cost_usd: 0.0,
            },
            Utc::now(),
        )
        .await?;
    Ok(id)
}

/// A delivery through `bot` for each of `subscribers`, due now: what a fan-out to all of
/// them would store (tests that give a job its deliveries by hand).
pub fn deliveries_to(
    subscribers: &[jobwire_store::SubscriberRow],
    bot: &str,
) -> Vec<jobwire_store::NewDelivery> {
    subscribers
        .iter()
        .map(|s| jobwire_store::NewDelivery {
            subscriber_id: s.id,
            chat_id: s.chat_id,
            bot: bot.to_owned(),
            not_before: None,
        })
        .collect()
}

/// Opens the store and starts every stage with the configured classifiers.
pub async fn start_pipeline(
    settings: &Settings,
) -> anyhow::Result<(crate::pipeline::Pipeline, Arc<dyn Store>)> {
    let store = crate::pipeline::open_store(settings).await?;
    let queue = crate::pipeline::open_queue(settings).await?;
    let classifiers = crate::pipeline::classifiers(settings)?;
    let p = start_in_process(settings, store.clone(), queue, classifiers).await?;
    Ok((p, store))
}

/// Starts every stage in this process on `store` and `queue`, with no shared rate limiters,
/// admin chat or health reporting.
pub async fn start_in_process(
    settings: &Settings,
    store: Arc<dyn Store>,
    queue: Arc<dyn Queue>,
    classifiers: crate::pipeline::Classifiers,
) -> anyhow::Result<crate::pipeline::Pipeline> {
    start_in_process_at(
        settings,
        store,
        queue,
        classifiers,
        Arc::new(jobwire_core::clock::SystemClock),
    )
    .await
}

/// [`start_pipeline`] with a clock the test moves (trials ending, reminders falling due).
pub async fn start_pipeline_at(
    settings: &Settings,
    clock: Arc<dyn jobwire_core::clock::Clock>,
) -> anyhow::Result<(crate::pipeline::Pipeline, Arc<dyn Store>)> {
    let store = crate::pipeline::open_store(settings).await?;
    let queue = crate::pipeline::open_queue(settings).await?;
    let classifiers = crate::pipeline::classifiers(settings)?;
    let p = start_in_process_at(settings, store.clone(), queue, classifiers, clock).await?;
    Ok((p, store))
}

/// [`start_in_process`] with a clock.
pub async fn start_in_process_at(
    settings: &Settings,
    store: Arc<dyn Store>,
    queue: Arc<dyn Queue>,
    classifiers: crate::pipeline::Classifiers,
    clock: Arc<dyn jobwire_core::clock::Clock>,
) -> anyhow::Result<crate::pipeline::Pipeline> {
    let (p, _) = crate::pipeline::Pipeline::start(
        crate::pipeline::Parts {
            settings: settings.clone(),
            store,
            queue,
            redis: None,
            admin_alert: None,
            health: None,
            clock,
        },
        classifiers,
    )
    .await?;
    Ok(p)
}

/// The Telegram reader as the parser role runs it (`roles::spawn_parser`: a
/// [`SourcesWatcher`](jobwire_intake::sources::SourcesWatcher) on `intake` and
/// [`crate::telegram::read_channels`]), over accounts a test scripts in place of those
/// `[mtproto]` would connect.
#[derive(Debug)]
pub struct ScriptedReader {
    shutdown: tokio_util::sync::CancellationToken,
    task: tokio::task::JoinHandle<anyhow::Result<()>>,
    /// Changes whenever the sources were read again.
    pub sources: jobwire_intake::sources::SourcesWatch,
}

impl ScriptedReader {
    pub fn start(
        settings: &Settings,
        section: &crate::telegram::MtprotoSettings,
        accounts: Vec<Arc<dyn jobwire_mtproto::Account>>,
        store: &Arc<dyn Store>,
        intake: &Arc<jobwire_intake::stage::IntakeStage>,
    ) -> Self {
        let shutdown = tokio_util::sync::CancellationToken::new();
        let watcher =
            jobwire_intake::sources::SourcesWatcher::new(store.clone()).with_intake(intake.clone());
        let sources = watcher.subscribe();
        let stop = shutdown.clone();
        tokio::spawn(async move { watcher.run(stop.cancelled_owned()).await });
        let (settings, section, store, intake, watch, token) = (
            settings.clone(),
            section.clone(),
            store.clone(),
            intake.clone(),
            sources.clone(),
            shutdown.clone(),
        );
        let task = tokio::spawn(async move {
            crate::telegram::read_channels(
                &settings,
                &section,
                accounts,
                Arc::new(jobwire_mtproto::SystemClock),
                intake,
                store,
                watch,
                token,
            )
            .await
        });
        Self {
            shutdown,
            task,
            sources,
        }
    }

    /// Stops the reader; an error when it does not stop within 10 s, panicked or failed.
    pub async fn stop(self) -> anyhow::Result<()> {
        self.shutdown.cancel();
        tokio::time::timeout(std::time::Duration::from_secs(10), self.task)
            .await
            .context("the reader did not stop within 10 s of shutdown")?
            .context("the reader panicked")?
    }
}
