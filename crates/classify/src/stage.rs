//! The classify stage: consumes [`PostReady`] messages, asks the classifier, stores the
//! verdict and hands jobs to fan-out.
//!
//! A post the classifier cannot answer for now is never dropped: it is stored as `waiting`
//! with a retry time (exponential backoff) and put back on the queue when that time comes.
//! When a fallback classifier is configured (the local model behind an LLM), a post that
//! waited `fallback_after` times, or that the LLM refuses for good, is classified by it.

use std::sync::Arc;
use std::time::Duration;

use chrono::Utc;
use futures::StreamExt;
use futures::stream::BoxStream;
use jobwire_queue::wire::{JobReady, PostReady};
use jobwire_queue::{Queue, QueueError, Received, Topic};
use jobwire_store::{
    ClassificationRecord, ExampleSource, NewExample, PostId, PostStatus, Store, StoreError,
};
use tokio::sync::Semaphore;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use crate::{Classified, Classifier, ClassifyError, ClassifyInput};

#[derive(Debug, Clone)]
pub struct ClassifyStageConfig {
    /// Posts classified at once (LLM requests in flight).
    pub concurrency: usize,
    /// First wait after the classifier was unavailable; doubles per attempt.
    pub retry_base: Duration,
    pub retry_max: Duration,
    /// After this many failed attempts the fallback classifier (if any) answers.
    pub fallback_after: u32,
    /// How long a batch waits to fill before it is classified anyway, while other batches
    /// are being classified; with none in flight a batch goes at once with what is there.
    pub batch_linger: Duration,
    /// Keep the LLM's answers as training examples for the local model (those at least
    /// [`Classifier::learn_min_confidence`] confident).
    pub learn_from_llm: bool,
}

impl Default for ClassifyStageConfig {
    fn default() -> Self {
        Self {
            concurrency: 64,
            retry_base: Duration::from_secs(5),
            retry_max: Duration::from_secs(600),
            fallback_after: 3,
            batch_linger: Duration::from_millis(10),
            learn_from_llm: true,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum StageError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Queue(#[from] QueueError),
}

/// The classify stage.
pub struct ClassifyStage {
    store: Arc<dyn Store>,
    queue: Arc<dyn Queue>,
    primary: Arc<dyn Classifier>,
    fallback: Option<Arc<dyn Classifier>>,
    config: ClassifyStageConfig,
}

impl std::fmt::Debug for ClassifyStage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClassifyStage")
            .field("primary", &self.primary.name())
            .field(
                "fallback",
                &self.fallback.as_ref().map(|c| c.name().to_owned()),
            )
            .field("config", &self.config)
            .finish()
    }
}

/// What happened to one post.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClassifyOutcome {
    Job,
    NotJob,
    /// Kept waiting for a retry.
    Waiting,
    /// Nothing to do (already classified, or unknown).
    Skipped,
}

impl ClassifyStage {
    pub fn new(
        store: Arc<dyn Store>,
        queue: Arc<dyn Queue>,
        primary: Arc<dyn Classifier>,
        fallback: Option<Arc<dyn Classifier>>,
        config: ClassifyStageConfig,
    ) -> Self {
        Self {
            store,
            queue,
            primary,
            fallback,
            config,
        }
    }

    /// Consumes the classify queue until `shutdown` is cancelled; posts in flight finish.
    ///
    /// Messages are gathered into batches of up to the classifier's
    /// [`Classifier::max_batch`], and `concurrency` batches are classified at once. A batch
    /// waits at most `batch_linger` to fill (the LLM answers many posts per request) only
    /// while other batches are in flight: on a quiet pipeline a post goes at once, with
    /// whatever came with it.
    pub async fn run(self: Arc<Self>, shutdown: CancellationToken) -> Result<(), StageError> {
        let mut sub = self.queue.subscribe(Topic::Classify).await?;
        let slots = Arc::new(Semaphore::new(self.config.concurrency.max(1)));
        let batch_size = self.primary.max_batch().max(1);
        let mut tasks = JoinSet::new();
        loop {
            let permit = tokio::select! {
                _ = shutdown.cancelled() => break,
                p = slots.clone().acquire_owned() => match p { Ok(p) => p, Err(_) => break },
            };
            let first = tokio::select! {
                _ = shutdown.cancelled() => break,
                m = sub.next() => m?,
            };
            let Some(first) = first else { break };
            let mut batch = vec![first];
            let busy = slots.available_permits() + 1 < self.config.concurrency.max(1);
            // A deadline of now still takes the messages already delivered to us.
            let linger = if busy {
                self.config.batch_linger
            } else {
                Duration::ZERO
            };
            let deadline = tokio::time::Instant::now() + linger;
            let mut closed = false;
            while batch.len() < batch_size {
                match tokio::time::timeout_at(deadline, sub.next()).await {
                    Ok(Ok(Some(m))) => batch.push(m),
                    Ok(Ok(None)) => {
                        closed = true;
                        break;
                    }
                    Ok(Err(e)) => {
                        // The batch in hand is still handled; the error ends the stage after.
                        let this = self.clone();
                        tasks.spawn(async move {
                            this.handle_batch(batch).await;
                            drop(permit);
                        });
                        while tasks.join_next().await.is_some() {}
                        return Err(e.into());
                    }
                    Err(_) => break,
                }
            }
            let this = self.clone();
            tasks.spawn(async move {
                this.handle_batch(batch).await;
                drop(permit);
            });
            while tasks.try_join_next().is_some() {}
            if closed {
                break;
            }
        }
        while tasks.join_next().await.is_some() {}
        Ok(())
    }

    async fn handle_batch(&self, msgs: Vec<Received>) {
        let mut ids = Vec::with_capacity(msgs.len());
        let mut kept = Vec::with_capacity(msgs.len());
        for msg in msgs {
            match msg.decode::<PostReady>() {
                Ok(r) => {
                    ids.push(r.post_id);
                    kept.push(Some(msg));
                }
                Err(e) => msg.reject(e.to_string()).await,
            }
        }
        let span = tracing::info_span!("classify", posts = ?ids);
        async {
            // Each message is settled as soon as its post is: the first verdicts of an LLM
            // answer go on to fan-out while the model still writes the rest.
            let mut outcomes = self.classify_each(&ids).await;
            while let Some((i, outcome)) = outcomes.next().await {
                let Some(msg) = kept.get_mut(i).and_then(Option::take) else {
                    continue;
                };
                match outcome {
                    Ok(_) => msg.ack().await,
                    Err(e) => {
                        tracing::warn!(post = ids[i].get(), error = %e, "classify stage error; message retried");
                        jobwire_queue::retry_or_dead_letter(msg, &e.to_string()).await
                    }
                }
            }
            // Every post has an outcome; a message left here would be an oversight, so it is
            // retried rather than lost.
            for msg in kept.into_iter().flatten() {
                jobwire_queue::retry_or_dead_letter(msg, "no outcome for this post").await;
            }
        }
        .instrument(span)
        .await
    }

    /// Classifies one stored post (idempotent: only a `queued` post is classified).
    pub async fn classify_post(&self, post_id: PostId) -> Result<ClassifyOutcome, StageError> {
        self.classify_posts(&[post_id])
            .await
            .pop()
            .unwrap_or(Ok(ClassifyOutcome::Skipped))
    }

    /// Classifies stored posts together (one LLM request where the classifier batches);
    /// one outcome per id, in order. Only `queued` posts are classified.
    pub async fn classify_posts(
        &self,
        post_ids: &[PostId],
    ) -> Vec<Result<ClassifyOutcome, StageError>> {
        let mut outcomes: Vec<Result<ClassifyOutcome, StageError>> = post_ids
            .iter()
            .map(|_| Ok(ClassifyOutcome::Skipped))
            .collect();
        let mut each = self.classify_each(post_ids).await;
        while let Some((i, outcome)) = each.next().await {
            if let Some(slot) = outcomes.get_mut(i) {
                *slot = outcome;
            }
        }
        outcomes
    }

    /// Classifies stored posts together and yields each post's outcome (with its position
    /// in `post_ids`) as soon as it is stored, in any order. Only `queued` posts are
    /// classified; the others are `Skipped`.
    pub async fn classify_each(
        &self,
        post_ids: &[PostId],
    ) -> BoxStream<'_, (usize, Result<ClassifyOutcome, StageError>)> {
        let mut ready: Vec<(usize, Result<ClassifyOutcome, StageError>)> = Vec::new();
        let mut todo: Vec<(usize, jobwire_store::PostRow)> = Vec::new();
        for (i, &id) in post_ids.iter().enumerate() {
            match self.store.post(id).await {
                Ok(Some(post)) if post.status == PostStatus::Queued => todo.push((i, post)),
                Ok(_) => ready.push((i, Ok(ClassifyOutcome::Skipped))),
                Err(e) => ready.push((i, Err(e.into()))),
            }
        }
        let inputs: Vec<ClassifyInput> = todo
            .iter()
            .map(|(_, post)| ClassifyInput {
                id: post.id.to_string(),
                text: post.text.clone(),
                channel: post.channel_handle.clone(),
            })
            .collect();
        let verdicts = if todo.is_empty() {
            futures::stream::empty().boxed()
        } else {
            self.primary.classify_stream(inputs.clone())
        };
        let settled = verdicts.then(move |(j, result)| {
            let found = todo.get(j).cloned().zip(inputs.get(j).cloned());
            async move {
                let (i, post) = found.as_ref().map(|((i, p), _)| (*i, p))?;
                let input = &found.as_ref()?.1;
                let result = match result {
                    Ok(c) => Ok(c),
                    Err(e) => match &self.fallback {
                        Some(fallback)
                            if !e.is_retryable()
                                || post.attempts + 1 >= self.config.fallback_after =>
                        {
                            tracing::warn!(post = post.id.get(), error = %e, fallback = fallback.name(), "primary classifier failed; using the fallback");
                            fallback.classify(input).await
                        }
                        _ => Err(e),
                    },
                };
                Some((i, self.settle(post, input, result).await))
            }
        });
        futures::stream::iter(ready)
            .chain(settled.filter_map(futures::future::ready))
            .boxed()
    }

    /// Stores one post's verdict (or puts it back to wait) and hands a job on.
    async fn settle(
        &self,
        post: &jobwire_store::PostRow,
        input: &ClassifyInput,
        result: Result<Classified, ClassifyError>,
    ) -> Result<ClassifyOutcome, StageError> {
        let post_id = post.id;
        match result {
            Ok(classified) => {
                let llm = !crate::cascade::is_local(&classified);
                crate::events::PostClassified {
                    classified: &classified,
                    llm,
                }
                .emit();
                let status = self
                    .store
                    .record_classification(post_id, &record(&classified), Utc::now())
                    .await?;
                let floor = self.primary.learn_min_confidence();
                if llm && self.config.learn_from_llm && classified.verdict.confidence >= floor {
                    // A confident LLM answer is a training example for the local model.
                    let example = NewExample {
                        post_id: Some(post_id),
                        text: input.text.clone(),
                        is_job: classified.verdict.is_job,
                        kind: classified.verdict.kind,
                        categories: classified.verdict.categories.clone(),
                        source: ExampleSource::Llm,
                    };
                    if let Err(e) = self.store.add_example(&example, Utc::now()).await {
                        tracing::warn!(post = post_id.get(), error = %e, "could not keep the LLM's answer as an example");
                    }
                }
                if status == PostStatus::Job {
                    jobwire_queue::publish(self.queue.as_ref(), &JobReady::new(post_id)).await?;
                    Ok(ClassifyOutcome::Job)
                } else {
                    Ok(ClassifyOutcome::NotJob)
                }
            }
            Err(e) => {
                let wait = self.backoff(post.attempts, &e);
                let retry_at = Utc::now() + chrono::Duration::from_std(wait).unwrap_or_default();
                crate::events::PostWaits {
                    post: post_id.get(),
                    error: &e,
                    retry_in: wait,
                }
                .emit();
                self.store
                    .mark_post_waiting(post_id, &e.to_string(), retry_at, Utc::now())
                    .await?;
                Ok(ClassifyOutcome::Waiting)
            }
        }
    }

    fn backoff(&self, attempts: u32, error: &ClassifyError) -> Duration {
        let exp = self
            .config
            .retry_base
            .saturating_mul(2u32.saturating_pow(attempts.min(16)));
        let wait = exp.min(self.config.retry_max);
        match error {
            ClassifyError::Unavailable {
                retry_after: Some(after),
                ..
            } => wait.max(*after).min(self.config.retry_max),
            _ => wait,
        }
    }
}

fn record(c: &Classified) -> ClassificationRecord {
    ClassificationRecord {
        is_job: c.verdict.is_job,
        kind: c.verdict.kind,
        // A résumé keeps the categories of the work it offers: it is routed to the
        // subscribers who asked for résumés.
        categories: if c.verdict.is_job || c.verdict.kind == jobwire_core::PostKind::Resume {
            c.verdict.categories.clone()
        } else {
            Vec::new()
        },
        confidence: c.verdict.confidence,
        model: c.model.clone(),
        prompt_version: Some(c.prompt_version.clone()),
        tokens_in: c.tokens_in,
        tokens_out: c.tokens_out,
        latency_ms: c.latency_ms,
        extraction: if c.verdict.is_job {
            c.extraction.clone()
        } else {
            None
        },
        cost_usd: c.cost_usd,
    }
}
