//! Wiring: builds the store, the queue, the classifiers and the four stages from
//! [`Settings`], re-drives whatever a previous run left in flight, and runs the stages until
//! shut down.

use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context;
use chrono::Utc;
use jobwire_classify::Classifier;
use jobwire_classify::local::{LocalClassifier, LocalModel, TrainOptions};
use jobwire_classify::stage::{ClassifyStage, ClassifyStageConfig};
use jobwire_core::dataset::LabeledPost;
use jobwire_deliver::stage::SendCounters;
use jobwire_deliver::{SendStage, SendStageConfig};
use jobwire_fanout::FanoutStage;
use jobwire_intake::stage::IntakeStage;
use jobwire_queue::wire::{DeliveryReady, JobReady, PostReady};
use jobwire_queue::{MemoryQueue, Queue};
use jobwire_store::{ChannelSpec, DeliveryStatus, PipelineCounts, PostStatus, SqliteStore, Store};
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use crate::config::{ClassifierKind, Settings};

/// The labeled posts the shipped local model is trained on.
pub const SHIPPED_TRAINING_DATA: &str = include_str!("../../../data/dev.jsonl");

/// Opens the configured store.
pub async fn open_store(settings: &Settings) -> anyhow::Result<Arc<dyn Store>> {
    let store = SqliteStore::open(&settings.database_url)
        .await
        .with_context(|| format!("database.url: cannot open {}", settings.database_url))?;
    Ok(Arc::new(store))
}

/// Opens the configured queue.
pub fn open_queue(settings: &Settings) -> anyhow::Result<Arc<dyn Queue>> {
    match settings.queue_url.as_str() {
        "memory://" => Ok(Arc::new(MemoryQueue::new())),
        other => anyhow::bail!("queue.url: unsupported queue URL {other:?}"),
    }
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

/// The classifiers of the classify stage.
#[derive(Clone)]
pub struct Classifiers {
    pub primary: Arc<dyn Classifier>,
    /// With an LLM, the local model answers for posts it keeps failing on.
    pub fallback: Option<Arc<dyn Classifier>>,
}

impl std::fmt::Debug for Classifiers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Classifiers")
            .field("primary", &self.primary.name())
            .field(
                "fallback",
                &self.fallback.as_ref().map(|c| c.name().to_owned()),
            )
            .finish()
    }
}

/// The primary classifier and, with an LLM, the local model as its fallback.
pub fn classifiers(settings: &Settings) -> anyhow::Result<Classifiers> {
    let local: Arc<dyn Classifier> = Arc::new(LocalClassifier::new(train_local(settings)?));
    match (&settings.llm, settings.classifier.kind) {
        (Some(llm), ClassifierKind::Auto | ClassifierKind::Llm) => Ok(Classifiers {
            primary: crate::llm::build(settings, llm)?,
            fallback: Some(local),
        }),
        _ => Ok(Classifiers {
            primary: local,
            fallback: None,
        }),
    }
}

/// Everything a running pipeline is made of.
#[derive(Debug, Clone)]
pub struct Parts {
    pub settings: Settings,
    pub store: Arc<dyn Store>,
    pub queue: Arc<dyn Queue>,
}

/// A running pipeline: all stages of the embedded mode in this process.
pub struct Pipeline {
    pub store: Arc<dyn Store>,
    pub queue: Arc<dyn Queue>,
    pub intake: Arc<IntakeStage>,
    pub send: Arc<SendStage>,
    /// The primary classifier's name (`local:…`, `llm:…`).
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
    /// Applies configured channels and subscribers, re-drives unfinished work and starts
    /// every stage.
    pub async fn start(parts: Parts, classifiers: Classifiers) -> anyhow::Result<(Self, Redrive)> {
        let Classifiers { primary, fallback } = classifiers;
        let Parts {
            settings,
            store,
            queue,
        } = parts;
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
        if let Some(path) = &settings.subscribers_file {
            let n = crate::subscribers::load_file(store.as_ref(), path).await?;
            tracing::info!(subscribers = n, file = %path.display(), "subscribers loaded");
        }

        let shutdown = CancellationToken::new();
        let classifier = primary.name().to_owned();
        let intake = Arc::new(IntakeStage::new(store.clone(), queue.clone()));
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
            },
        ));
        let fanout = Arc::new(FanoutStage::new(
            store.clone(),
            queue.clone(),
            settings.routes(),
        ));
        let send = Arc::new(
            SendStage::new(
                store.clone(),
                queue.clone(),
                &settings.bots,
                SendStageConfig {
                    api_url: settings.api_url.clone(),
                    limits: settings.limits,
                    max_in_flight: settings.max_in_flight,
                    request_timeout: settings.request_timeout,
                    ..SendStageConfig::default()
                },
            )
            .context("starting the send stage")?,
        );

        let redrive = redrive(store.as_ref(), queue.as_ref()).await?;
        if redrive.interrupted > 0 {
            tracing::warn!(
                deliveries = redrive.interrupted,
                "deliveries were in flight when the last run stopped; sending them again"
            );
        }

        let mut tasks = JoinSet::new();
        let s = shutdown.clone();
        tasks.spawn(async move { classify.run(s).await.map_err(anyhow::Error::from) });
        let s = shutdown.clone();
        tasks.spawn(async move { fanout.run(s).await.map_err(anyhow::Error::from) });
        let s = shutdown.clone();
        let sender = send.clone();
        tasks.spawn(async move { sender.run(s).await.map_err(anyhow::Error::from) });
        let s = shutdown.clone();
        let (st, q, tick) = (store.clone(), queue.clone(), settings.scheduler_tick);
        tasks.spawn(async move { scheduler(st, q, tick, s).await });

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

    pub fn counters(&self) -> &SendCounters {
        &self.send.counters
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

/// Publishes everything the database says is between stages. Called once at start-up,
/// before the stages consume, so nothing is published twice by this process.
pub async fn redrive(store: &dyn Store, queue: &dyn Queue) -> anyhow::Result<Redrive> {
    let mut r = Redrive {
        interrupted: store
            .recover_interrupted_deliveries(Utc::now(), Utc::now())
            .await?
            .len(),
        ..Redrive::default()
    };
    for id in store.posts_in_status(PostStatus::Queued, u32::MAX).await? {
        jobwire_queue::publish(queue, &PostReady::new(id)).await?;
        r.posts += 1;
    }
    for id in store.posts_in_status(PostStatus::Job, u32::MAX).await? {
        jobwire_queue::publish(queue, &JobReady::new(id)).await?;
        r.jobs += 1;
    }
    for id in store
        .deliveries_in_status(DeliveryStatus::Pending, u32::MAX)
        .await?
    {
        jobwire_queue::publish(queue, &DeliveryReady::new(id)).await?;
        r.deliveries += 1;
    }
    Ok(r)
}

/// Moves held deliveries (quiet hours over, retry due) and waiting posts (classifier retry
/// due) back onto their queues.
async fn scheduler(
    store: Arc<dyn Store>,
    queue: Arc<dyn Queue>,
    tick: Duration,
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
            Ok(())
        }
        .await;
        if let Err(e) = result {
            tracing::warn!(error = %e, "scheduler tick failed; trying again next tick");
        }
    }
}
