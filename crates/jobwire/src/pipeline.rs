//! Wiring: builds the store, the queue, the classifiers and the four stages from
//! [`Settings`], re-drives whatever a previous run left in flight, and runs the stages until
//! shut down.

use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context;
use chrono::Utc;
use jobwire_classify::Classifier;
use jobwire_classify::cascade::{
    AlertFn, Cascade, CascadeConfig, DailySpendLimit, LiveLocal, SpendGuard,
};
use jobwire_classify::llm::LlmClassifier;
use jobwire_classify::local::{LocalModel, TrainOptions};
use jobwire_classify::retrain::{RetrainConfig, Retrainer};
use jobwire_classify::stage::{ClassifyStage, ClassifyStageConfig};
use jobwire_core::dataset::LabeledPost;
use jobwire_deliver::stage::SendCounters;
use jobwire_deliver::{SendStage, SendStageConfig};
use jobwire_fanout::FanoutStage;
use jobwire_intake::stage::IntakeStage;
use jobwire_queue::Queue;
use jobwire_queue::wire::{DeliveryReady, JobReady, PostReady};
use jobwire_store::{ChannelSpec, DeliveryStatus, PipelineCounts, PostStatus, Store};
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use crate::config::{ClassifierKind, Settings, UpdatesMode};

/// The labeled posts the shipped local model is trained on.
pub const SHIPPED_TRAINING_DATA: &str = include_str!("../../../data/dev.jsonl");

/// Opens the configured store (`sqlite://` or `postgres://`).
pub async fn open_store(settings: &Settings) -> anyhow::Result<Arc<dyn Store>> {
    jobwire_store::open(&settings.database_url)
        .await
        .with_context(|| {
            format!(
                "database.url: cannot open {}",
                crate::config::redact_url(&settings.database_url)
            )
        })
}

/// Opens the configured queue (`memory://` or `amqp://`).
pub async fn open_queue(settings: &Settings) -> anyhow::Result<Arc<dyn Queue>> {
    let url = &settings.queue_url;
    if url.starts_with("amqp://") || url.starts_with("amqps://") {
        // The prefetch bounds the deliveries a sender holds at once; most of them wait for a
        // rate limiter, so a small prefetch would let one busy bot hold up the others.
        let mut config = jobwire_queue::AmqpConfig::new(url.clone());
        config.prefetch = u16::try_from(settings.max_in_flight).unwrap_or(u16::MAX);
        config.queue_prefix = settings.queue_prefix.clone();
        let queue = jobwire_queue::AmqpQueue::connect(config)
            .await
            .with_context(|| {
                format!(
                    "queue.url: cannot connect to {}",
                    crate::config::redact_url(url)
                )
            })?;
        return Ok(Arc::new(queue));
    }
    jobwire_queue::open(&settings.queue_url)
        .await
        .with_context(|| {
            format!(
                "queue.url: cannot connect to {}",
                crate::config::redact_url(&settings.queue_url)
            )
        })
}

/// Whether the stages of this deployment share an in-process queue (one process runs
/// everything and re-drives all unfinished work at start-up).
pub fn is_embedded(settings: &Settings) -> bool {
    settings.queue_url == "memory://"
}

/// Loads the local model's training data: the configured file or the shipped one.
pub fn training_data(settings: &Settings) -> anyhow::Result<Vec<LabeledPost>> {
    match &settings.classifier.training_data {
        Some(path) => {
            let doc = std::fs::read_to_string(path).with_context(|| {
                format!("classifier.training_data: cannot read {}", path.display())
            })?;
            LabeledPost::parse_all(&doc)
                .with_context(|| format!("classifier.training_data: {}", path.display()))
        }
        None => LabeledPost::parse_all(SHIPPED_TRAINING_DATA).context("shipped training data"),
    }
}

/// Trains the local model on the configured categories.
pub fn train_local(settings: &Settings) -> anyhow::Result<Arc<LocalModel>> {
    let data = training_data(settings)?;
    let slugs: Vec<_> = settings.categories.iter().map(|c| c.slug.clone()).collect();
    let model = LocalModel::train(&data, &slugs, &TrainOptions::default())
        .context("training the local classifier")?;
    Ok(Arc::new(model))
}

/// Where admin alerts of the stages go besides the log (the admin chat), set once at start.
static ADMIN_ALERT: std::sync::OnceLock<AlertFn> = std::sync::OnceLock::new();

/// Sends the stages' admin alerts (the LLM spend limit) to `alert` as well as to the log.
pub fn set_admin_alert(alert: AlertFn) {
    let _ = ADMIN_ALERT.set(alert);
}

/// How posts are classified.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ClassifierMode {
    /// The local model only.
    Local,
    /// The LLM for every post; the local model when it keeps failing.
    Llm,
    /// The local model first, the LLM below `threshold`.
    Cascade { threshold: f32 },
}

/// The classifiers of the classify stage: the live local model (retrained as the service
/// runs), the LLM when configured, and how they are combined.
#[derive(Clone)]
pub struct Classifiers {
    pub local: Arc<LiveLocal>,
    pub llm: Option<Arc<LlmClassifier>>,
    pub mode: ClassifierMode,
    /// What the local model was trained on at start (retraining adds the stored examples).
    pub dataset: Arc<Vec<LabeledPost>>,
}

impl std::fmt::Debug for Classifiers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Classifiers")
            .field("mode", &self.mode)
            .field("llm", &self.llm.as_ref().map(|c| c.name().to_owned()))
            .finish()
    }
}

impl Classifiers {
    /// A short name for logs and reports (`local`, `llm:<model>`, `cascade(llm:<model>)`).
    pub fn name(&self) -> String {
        match (&self.mode, &self.llm) {
            (ClassifierMode::Llm, Some(llm)) => llm.name().to_owned(),
            (ClassifierMode::Cascade { .. }, Some(llm)) => format!("cascade({})", llm.name()),
            _ => "local".to_owned(),
        }
    }

    /// The primary classifier of the stage and its fallback. The cascade's spend limit
    /// counts in `store`; `alert` hears when it is reached.
    pub fn stage_classifiers(
        &self,
        settings: &Settings,
        store: Arc<dyn Store>,
        alert: Option<AlertFn>,
    ) -> (Arc<dyn Classifier>, Option<Arc<dyn Classifier>>) {
        let local: Arc<dyn Classifier> = self.local.clone();
        let Some(llm) = &self.llm else {
            return (local, None);
        };
        let llm_dyn: Arc<dyn Classifier> = llm.clone();
        match self.mode {
            ClassifierMode::Local => (local, None),
            ClassifierMode::Llm => (llm_dyn, Some(local)),
            ClassifierMode::Cascade { threshold } => {
                let spend = settings
                    .llm
                    .as_ref()
                    .and_then(|l| l.daily_spend_limit_usd)
                    .map(|limit| -> Arc<dyn SpendGuard> {
                        Arc::new(DailySpendLimit::new(store.clone(), limit, alert.clone()))
                    });
                let cascade = Cascade::new(
                    self.local.clone(),
                    llm_dyn,
                    CascadeConfig { threshold },
                    spend,
                );
                (Arc::new(cascade), Some(local))
            }
        }
    }
}

/// Trains the local model and builds the LLM client the settings ask for.
pub fn classifiers(settings: &Settings) -> anyhow::Result<Classifiers> {
    let dataset = training_data(settings)?;
    let slugs: Vec<_> = settings.categories.iter().map(|c| c.slug.clone()).collect();
    let model = LocalModel::train(&dataset, &slugs, &TrainOptions::default())
        .context("training the local classifier")?;
    let local = Arc::new(LiveLocal::new(Arc::new(model)));
    let (llm, mode) = match (&settings.llm, settings.classifier.kind) {
        (Some(llm), ClassifierKind::Llm) => {
            (Some(crate::llm::build(settings, llm)?), ClassifierMode::Llm)
        }
        (Some(llm), ClassifierKind::Auto | ClassifierKind::Cascade) => (
            Some(crate::llm::build(settings, llm)?),
            ClassifierMode::Cascade {
                threshold: settings.classifier.cascade_threshold,
            },
        ),
        _ => (None, ClassifierMode::Local),
    };
    Ok(Classifiers {
        local,
        llm,
        mode,
        dataset: Arc::new(dataset),
    })
}

/// The retrainer of the live local model (and the LLM's few-shot pool).
pub fn retrainer(
    settings: &Settings,
    classifiers: &Classifiers,
    store: Arc<dyn Store>,
) -> Retrainer {
    let slugs: Vec<_> = settings.categories.iter().map(|c| c.slug.clone()).collect();
    let c = &settings.classifier;
    let mut retrainer = Retrainer::new(
        classifiers.dataset.as_ref().clone(),
        slugs,
        TrainOptions::default(),
        store,
        classifiers.local.clone(),
        RetrainConfig {
            interval: Duration::from_secs(c.retrain_interval_secs.max(1)),
            llm_weight: c.llm_example_weight,
            human_weight: c.human_example_weight,
            ..RetrainConfig::default()
        },
    );
    if let Some(llm) = &classifiers.llm {
        let llm = llm.clone();
        retrainer = retrainer.with_few_shot(Arc::new(move |examples| {
            crate::llm::set_few_shot(&llm, examples);
        }));
    }
    retrainer
}

/// Starts the main and category bots of the settings (none configured: `None`). Dialogue
/// state and update de-duplication live in Redis when it is configured (several bot-role
/// processes), else in the store and in memory. In webhook mode the webhook router is
/// served on `telegram.webhook_listen`.
pub async fn start_bots(
    settings: &Settings,
    store: Arc<dyn Store>,
    redis: Option<redis::aio::ConnectionManager>,
    shutdown: CancellationToken,
) -> anyhow::Result<Option<jobwire_bot::Bots>> {
    use jobwire_bot::{
        BotIdentity, BotOptions, Bots, BotsConfig, CategoryBot, DialogueStore, MemoryDedup,
        RedisDedup, RedisDialogues, StoreDialogues, UpdateDedup, UpdateMode,
    };
    let identity = |name: &str| {
        settings
            .bots
            .iter()
            .find(|b| b.name == name)
            .map(|b| BotIdentity::new(&b.name, &b.token, settings.api_url.clone()))
    };
    let main = settings.bot_role.main_bot.as_deref().and_then(identity);
    let categories: Vec<CategoryBot> = settings
        .categories
        .iter()
        .filter_map(|c| {
            identity(&c.bot).map(|bot| CategoryBot {
                slug: c.slug.clone(),
                name: c.name.clone(),
                bot,
            })
        })
        .collect();
    if main.is_none() && categories.is_empty() {
        tracing::info!("no bots configured: the bot role has nothing to do");
        return Ok(None);
    }
    let mode = match &settings.bot_role.webhook {
        Some((public_url, secret)) => UpdateMode::Webhook {
            public_url: public_url.clone(),
            secret: secret.clone(),
        },
        None => UpdateMode::Polling,
    };
    let webhook = matches!(mode, UpdateMode::Webhook { .. });
    let (dialogues, dedup): (Arc<dyn DialogueStore>, Arc<dyn UpdateDedup>) = match redis {
        Some(conn) => {
            let prefix = if settings.queue_prefix.is_empty() {
                "jobwire".to_owned()
            } else {
                settings.queue_prefix.clone()
            };
            (
                Arc::new(RedisDialogues::new(conn.clone(), &prefix)),
                Arc::new(RedisDedup::new(conn, &prefix)),
            )
        }
        None => (
            Arc::new(StoreDialogues::new(store.clone())),
            Arc::new(MemoryDedup::default()),
        ),
    };
    let bots = Bots::start(
        BotsConfig {
            main,
            categories,
            mode,
            options: BotOptions::default(),
        },
        store,
        dialogues,
        dedup,
        shutdown.clone(),
    )
    .await?;
    if webhook {
        let listen = settings.bot_role.webhook_listen;
        let listener = tokio::net::TcpListener::bind(listen)
            .await
            .with_context(|| format!("telegram.webhook_listen: cannot bind {listen}"))?;
        let app = bots.webhook_router();
        tokio::spawn(async move {
            if let Err(e) = axum::serve(listener, app)
                .with_graceful_shutdown(shutdown.cancelled_owned())
                .await
            {
                tracing::warn!(error = %e, "webhook server stopped");
            }
        });
        tracing::info!(%listen, "bots take webhooks on /telegram/<bot>");
    }
    Ok(Some(bots))
}

/// The roles a process can run. Every role except the parser can run in as many copies as
/// needed; `jobwire run` without `--role` runs them all in one process.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, clap::ValueEnum)]
pub enum Role {
    /// Reads sources and runs intake (one per Telegram account).
    Parser,
    /// Classifies queued posts.
    Classifier,
    /// Fans jobs out to subscribers; releases held deliveries and waiting posts; takes over
    /// deliveries abandoned by a dead sender.
    Dispatcher,
    /// Sends deliveries through the bots.
    Sender,
    /// Answers the bots' users: the main bot's settings and reports, the category bots'
    /// /start, /stop and /wrong (long polling: one copy; webhooks: any number).
    Bot,
    /// Health and metrics only (the admin panel will live here).
    Admin,
}

impl Role {
    pub const ALL: [Role; 6] = [
        Self::Parser,
        Self::Classifier,
        Self::Dispatcher,
        Self::Sender,
        Self::Bot,
        Self::Admin,
    ];
}

/// Everything a running pipeline is made of.
#[derive(Debug, Clone)]
pub struct Parts {
    pub settings: Settings,
    pub store: Arc<dyn Store>,
    pub queue: Arc<dyn Queue>,
    /// Shared rate limiters (distributed mode); in-process limiters without it.
    pub redis: Option<redis::aio::ConnectionManager>,
}

/// A running pipeline: the stages of the chosen roles in this process.
pub struct Pipeline {
    pub store: Arc<dyn Store>,
    pub queue: Arc<dyn Queue>,
    pub intake: Arc<IntakeStage>,
    pub send: Option<Arc<SendStage>>,
    /// The primary classifier's name (`local:…`, `llm:…`), when this process classifies.
    pub classifier: String,
    shutdown: CancellationToken,
    tasks: JoinSet<anyhow::Result<()>>,
}

impl std::fmt::Debug for Pipeline {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pipeline").finish_non_exhaustive()
    }
}

/// What re-drive found at start-up.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Redrive {
    pub posts: usize,
    pub jobs: usize,
    pub deliveries: usize,
    /// Deliveries that were `sending` when the last run stopped: sent again, because
    /// Telegram may or may not have received them.
    pub interrupted: usize,
}

impl Pipeline {
    /// Every role in one process (the embedded mode, tests, the demo).
    pub async fn start(parts: Parts, classifiers: Classifiers) -> anyhow::Result<(Self, Redrive)> {
        Self::start_roles(parts, &Role::ALL, Some(classifiers)).await
    }

    /// Applies configured channels and subscribers, re-drives unfinished work and starts the
    /// stages of `roles`. `classifiers` is needed when `roles` has the classifier.
    pub async fn start_roles(
        parts: Parts,
        roles: &[Role],
        classifiers: Option<Classifiers>,
    ) -> anyhow::Result<(Self, Redrive)> {
        let Parts {
            settings,
            store,
            queue,
            redis,
        } = parts;
        let has = |r: Role| roles.contains(&r);
        if has(Role::Parser) || has(Role::Dispatcher) {
            for ch in &settings.channels {
                store
                    .upsert_channel(
                        &ChannelSpec {
                            handle: ch.handle.clone(),
                            title: ch.title.clone(),
                            enabled: ch.enabled,
                            include: ch.include.clone(),
                            exclude: ch.exclude.clone(),
                        },
                        Utc::now(),
                    )
                    .await
                    .with_context(|| format!("storing channel {}", ch.handle))?;
            }
        }
        if has(Role::Dispatcher)
            && let Some(path) = &settings.subscribers_file
        {
            let n = crate::subscribers::load_file(store.as_ref(), path).await?;
            tracing::info!(subscribers = n, file = %path.display(), "subscribers loaded");
        }

        let shutdown = CancellationToken::new();
        let dedup = settings
            .dedup
            .enabled
            .then(|| jobwire_core::dedup::DedupConfig {
                window: chrono::Duration::hours(settings.dedup.window_hours.max(1) as i64),
                ..jobwire_core::dedup::DedupConfig::default()
            });
        let intake = Arc::new(IntakeStage::with_dedup(store.clone(), queue.clone(), dedup));
        let mut tasks = JoinSet::new();
        let mut classifier = String::new();

        // Re-drive before any consumer starts. One process owns everything in the embedded
        // mode: all unfinished work is re-published, including sends that were in flight.
        // With a broker, messages survive a crash; a dispatcher re-publishes what may have
        // been committed but not published (consumers are idempotent), and abandoned sends
        // are taken over after their lease by the scheduler.
        let embedded = is_embedded(&settings);
        let redrive = if embedded {
            redrive(store.as_ref(), queue.as_ref(), Some(Utc::now())).await?
        } else if has(Role::Dispatcher) {
            redrive(store.as_ref(), queue.as_ref(), None).await?
        } else {
            Redrive::default()
        };
        if redrive.interrupted > 0 {
            tracing::warn!(
                deliveries = redrive.interrupted,
                "deliveries were in flight when the last run stopped; sending them again"
            );
        }

        if has(Role::Classifier) {
            let classifiers = classifiers.context("the classifier role needs classifiers")?;
            classifier = classifiers.name();
            let alert: AlertFn = Arc::new(|message: String| {
                tracing::warn!(%message, "admin alert");
                if let Some(send) = ADMIN_ALERT.get() {
                    send(message);
                }
            });
            let (primary, fallback) =
                classifiers.stage_classifiers(&settings, store.clone(), Some(alert));
            let retrain = Arc::new(retrainer(&settings, &classifiers, store.clone()));
            let s = shutdown.clone();
            tasks.spawn(async move {
                retrain.run(s).await;
                Ok(())
            });
            let classify = Arc::new(ClassifyStage::new(
                store.clone(),
                queue.clone(),
                primary,
                fallback,
                ClassifyStageConfig {
                    concurrency: settings.classifier.concurrency,
                    fallback_after: settings.classifier.fallback_after,
                    retry_base: Duration::from_millis(settings.classifier.retry_base_ms.max(1)),
                    retry_max: Duration::from_secs(settings.classifier.retry_max_secs.max(1)),
                    batch_linger: Duration::from_millis(settings.classifier.batch_linger_ms),
                    learn_from_llm: settings.classifier.learn_from_llm,
                },
            ));
            let s = shutdown.clone();
            tasks.spawn(async move { classify.run(s).await.map_err(anyhow::Error::from) });
        }
        if has(Role::Dispatcher) {
            let fanout = Arc::new(FanoutStage::new(
                store.clone(),
                queue.clone(),
                settings.routes(),
            ));
            let s = shutdown.clone();
            tasks.spawn(async move { fanout.run(s).await.map_err(anyhow::Error::from) });
            let s = shutdown.clone();
            let (st, q) = (store.clone(), queue.clone());
            let (tick, lease) = (
                settings.scheduler_tick,
                (!embedded).then_some(settings.lease),
            );
            tasks.spawn(async move { scheduler(st, q, tick, lease, s).await });
        }
        let mut send = None;
        if has(Role::Sender) {
            let config = SendStageConfig {
                api_url: settings.api_url.clone(),
                limits: settings.limits,
                max_in_flight: settings.max_in_flight,
                request_timeout: settings.request_timeout,
                ..SendStageConfig::default()
            };
            let stage = match (&redis, &settings.redis) {
                (Some(conn), Some(section)) => {
                    let (conn, limits, prefix) =
                        (conn.clone(), settings.limits, section.key_prefix.clone());
                    SendStage::with_limiters(
                        store.clone(),
                        queue.clone(),
                        &settings.bots,
                        config,
                        &move |bot_id| {
                            Arc::new(jobwire_deliver::RedisLimiter::new(
                                conn.clone(),
                                bot_id,
                                limits,
                                &prefix,
                            )) as Arc<dyn jobwire_deliver::Limiter>
                        },
                    )
                }
                _ => SendStage::new(store.clone(), queue.clone(), &settings.bots, config),
            }
            .context("starting the send stage")?;
            let stage = Arc::new(stage);
            let s = shutdown.clone();
            let sender = stage.clone();
            tasks.spawn(async move { sender.run(s).await.map_err(anyhow::Error::from) });
            send = Some(stage);
        }

        if has(Role::Admin)
            && let Some(send) = ADMIN_ALERT.get().cloned()
        {
            // The daily report to the admin chat, at 08:00 UTC.
            let (store, s) = (store.clone(), shutdown.clone());
            tasks.spawn(async move {
                loop {
                    let now = Utc::now();
                    let mut next = now
                        .date_naive()
                        .and_hms_opt(8, 0, 0)
                        .map_or(now, |t| t.and_utc());
                    if next <= now {
                        next += chrono::Duration::days(1);
                    }
                    let wait = (next - now).to_std().unwrap_or(Duration::from_secs(3600));
                    tokio::select! {
                        _ = s.cancelled() => return Ok(()),
                        _ = tokio::time::sleep(wait) => {}
                    }
                    match crate::report::daily_report(
                        store.as_ref(),
                        Utc::now() - chrono::Duration::hours(24),
                        24,
                    )
                    .await
                    {
                        Ok(text) => send(text),
                        Err(e) => tracing::warn!(error = %e, "could not build the daily report"),
                    }
                }
            });
        }
        if has(Role::Bot) && settings.bot_role.updates != UpdatesMode::Off {
            let bots = start_bots(&settings, store.clone(), redis.clone(), shutdown.clone())
                .await
                .context("starting the bots")?;
            if let Some(bots) = bots {
                tasks.spawn(async move {
                    bots.wait().await;
                    Ok(())
                });
            }
        }

        Ok((
            Self {
                store,
                queue,
                intake,
                send,
                classifier,
                shutdown,
                tasks,
            },
            redrive,
        ))
    }

    /// Counters of this process's send stage (zero when it has none).
    pub fn counters(&self) -> Option<&SendCounters> {
        self.send.as_ref().map(|s| &s.counters)
    }

    /// A token cancelled when the pipeline shuts down.
    pub fn shutdown_token(&self) -> CancellationToken {
        self.shutdown.clone()
    }

    /// Waits until every post and delivery is settled (held ones count as settled), or
    /// `timeout` passes.
    pub async fn wait_settled(&mut self, timeout: Duration) -> anyhow::Result<PipelineCounts> {
        let started = Instant::now();
        let mut settled_since: Option<Instant> = None;
        loop {
            if let Some(res) = self.tasks.try_join_next() {
                match res {
                    Ok(Ok(())) => anyhow::bail!("a pipeline stage stopped unexpectedly"),
                    Ok(Err(e)) => return Err(e.context("a pipeline stage failed")),
                    Err(e) => anyhow::bail!("a pipeline stage panicked: {e}"),
                }
            }
            let counts = self.store.pipeline_counts().await?;
            // Settled twice in a row 50 ms apart: nothing was between two stages.
            if counts.is_settled() {
                match settled_since {
                    Some(t) if t.elapsed() >= Duration::from_millis(50) => return Ok(counts),
                    Some(_) => {}
                    None => settled_since = Some(Instant::now()),
                }
            } else {
                settled_since = None;
            }
            if started.elapsed() > timeout {
                anyhow::bail!("the pipeline did not settle within {timeout:?}: {counts:?}");
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    /// Resolves when a stage ends on its own (an error, or its queue closed).
    pub async fn stage_ended(&mut self) -> anyhow::Result<()> {
        match self.tasks.join_next().await {
            None => std::future::pending().await,
            Some(Ok(Ok(()))) => Ok(()),
            Some(Ok(Err(e))) => Err(e),
            Some(Err(e)) => Err(anyhow::anyhow!("a stage panicked: {e}")),
        }
    }

    /// Stops taking work, lets the stages finish what they hold, and returns.
    pub async fn shutdown(mut self) -> anyhow::Result<()> {
        self.shutdown.cancel();
        while let Some(res) = self.tasks.join_next().await {
            match res {
                Ok(Ok(())) => {}
                Ok(Err(e)) => tracing::warn!(error = %e, "stage ended with an error"),
                Err(e) => tracing::warn!(error = %e, "stage task failed"),
            }
        }
        Ok(())
    }
}

/// Publishes everything the database says is between stages. With `interrupted_before`,
/// deliveries left `sending` before then are re-sent too (a single process at start-up).
pub async fn redrive(
    store: &dyn Store,
    queue: &dyn Queue,
    interrupted_before: Option<chrono::DateTime<Utc>>,
) -> anyhow::Result<Redrive> {
    let mut r = Redrive::default();
    if let Some(before) = interrupted_before {
        r.interrupted = store
            .recover_interrupted_deliveries(before, Utc::now())
            .await?
            .len();
    }
    let posts = store.posts_in_status(PostStatus::Queued, u32::MAX).await?;
    r.posts = posts.len();
    publish_all(queue, posts.into_iter().map(PostReady::new)).await?;
    let jobs = store.posts_in_status(PostStatus::Job, u32::MAX).await?;
    r.jobs = jobs.len();
    publish_all(queue, jobs.into_iter().map(JobReady::new)).await?;
    let deliveries = store
        .deliveries_in_status(DeliveryStatus::Pending, u32::MAX)
        .await?;
    r.deliveries = deliveries.len();
    publish_all(queue, deliveries.into_iter().map(DeliveryReady::new)).await?;
    Ok(r)
}

/// Publishes many messages with up to 256 in flight (each waits for a broker's confirm).
async fn publish_all<T: jobwire_queue::wire::WireMessage>(
    queue: &dyn Queue,
    messages: impl Iterator<Item = T>,
) -> anyhow::Result<()> {
    use futures::{StreamExt, TryStreamExt};
    let messages: Vec<T> = messages.collect();
    futures::stream::iter(messages.iter().map(|m| jobwire_queue::publish(queue, m)))
        .buffer_unordered(256)
        .try_collect::<Vec<()>>()
        .await?;
    Ok(())
}

/// Moves held deliveries (quiet hours over, retry due) and waiting posts (classifier retry
/// due) back onto their queues; with a `lease`, also takes over deliveries that a dead sender
/// left `sending` for longer than the lease.
async fn scheduler(
    store: Arc<dyn Store>,
    queue: Arc<dyn Queue>,
    tick: Duration,
    lease: Option<Duration>,
    shutdown: CancellationToken,
) -> anyhow::Result<()> {
    let mut interval = tokio::time::interval(tick);
    interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = shutdown.cancelled() => return Ok(()),
            _ = interval.tick() => {}
        }
        let now = Utc::now();
        let result: anyhow::Result<()> = async {
            for id in store.release_held_deliveries(now, 10_000).await? {
                jobwire_queue::publish(queue.as_ref(), &DeliveryReady::new(id)).await?;
            }
            for id in store.release_waiting_posts(now, 10_000).await? {
                jobwire_queue::publish(queue.as_ref(), &PostReady::new(id)).await?;
            }
            if let Some(lease) = lease {
                let stale = now - chrono::Duration::from_std(lease).unwrap_or_default();
                let taken = store.recover_interrupted_deliveries(stale, now).await?;
                if !taken.is_empty() {
                    tracing::warn!(
                        deliveries = taken.len(),
                        "taking over deliveries abandoned by a sender"
                    );
                }
                for id in taken {
                    jobwire_queue::publish(queue.as_ref(), &DeliveryReady::new(id)).await?;
                }
            }
            Ok(())
        }
        .await;
        if let Err(e) = result {
            tracing::warn!(error = %e, "scheduler tick failed; trying again next tick");
        }
    }
}

/// Connects to the database, the queue and (when configured) Redis, retrying each with
/// backoff until it answers: a role started while a service is down says which one and where,
/// reports not-ready on `/readyz`, and starts as soon as it is back. `None` if `shutdown` came
/// first.
pub async fn connect_with_retry(
    settings: &Settings,
    health: &crate::server::Health,
    shutdown: &CancellationToken,
) -> Option<Parts> {
    let store = retry(
        health,
        "database",
        &settings.database_url,
        shutdown,
        || async { open_store(settings).await },
    )
    .await?;
    let queue = retry(health, "queue", &settings.queue_url, shutdown, || async {
        open_queue(settings).await
    })
    .await?;
    let redis = match &settings.redis {
        Some(section) => Some(
            retry(health, "redis", &section.url, shutdown, || async {
                let client = redis::Client::open(section.url.as_str()).with_context(|| {
                    format!("redis.url: {}", crate::config::redact_url(&section.url))
                })?;
                let mut conn = tokio::time::timeout(
                    Duration::from_secs(10),
                    redis::aio::ConnectionManager::new(client),
                )
                .await
                .context("redis: connect timed out")??;
                let _: String = redis::cmd("PING").query_async(&mut conn).await?;
                Ok(conn)
            })
            .await?,
        ),
        None => None,
    };
    Some(Parts {
        settings: settings.clone(),
        store,
        queue,
        redis,
    })
}

async fn retry<T, F, Fut>(
    health: &crate::server::Health,
    component: &'static str,
    url: &str,
    shutdown: &CancellationToken,
    mut attempt: F,
) -> Option<T>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = anyhow::Result<T>>,
{
    let mut wait = Duration::from_millis(500);
    health.set(
        component,
        Err(format!("connecting to {}", crate::config::redact_url(url))),
    );
    loop {
        let result = match tokio::time::timeout(Duration::from_secs(10), attempt()).await {
            Ok(r) => r,
            Err(_) => Err(anyhow::anyhow!("no answer within 10 s")),
        };
        match result {
            Ok(v) => {
                health.set(component, Ok(()));
                return Some(v);
            }
            Err(e) => {
                let message = format!("{:#}", e).replace('\n', " ");
                tracing::warn!(
                    component,
                    url = %crate::config::redact_url(url),
                    error = %message,
                    retry_in_ms = wait.as_millis() as u64,
                    "not reachable; retrying"
                );
                health.set(component, Err(message));
            }
        }
        tokio::select! {
            _ = shutdown.cancelled() => return None,
            _ = tokio::time::sleep(wait) => {}
        }
        wait = (wait * 2).min(Duration::from_secs(10));
    }
}

/// Keeps `/readyz` and the queue-depth gauges current while the process runs.
pub async fn watch_dependencies(
    parts: Parts,
    health: Arc<crate::server::Health>,
    shutdown: CancellationToken,
) {
    let mut interval = tokio::time::interval(Duration::from_secs(2));
    loop {
        tokio::select! {
            _ = shutdown.cancelled() => return,
            _ = interval.tick() => {}
        }
        health.set(
            "database",
            parts.store.ping().await.map_err(|e| e.to_string()),
        );
        let mut queue_ok = true;
        for topic in jobwire_queue::Topic::ALL {
            match parts.queue.depth(topic).await {
                Some(n) => {
                    metrics::gauge!("jobwire_queue_depth", "topic" => topic.name()).set(n as f64)
                }
                None => queue_ok = false,
            }
        }
        health.set(
            "queue",
            if queue_ok {
                Ok(())
            } else {
                Err("queue depth unavailable".to_owned())
            },
        );
        if let Some(conn) = &parts.redis {
            let mut conn = conn.clone();
            let pong: Result<String, _> = redis::cmd("PING").query_async(&mut conn).await;
            health.set("redis", pong.map(|_| ()).map_err(|e| e.to_string()));
        }
    }
}
