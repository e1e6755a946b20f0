//! A running pipeline: builds the stages of the chosen roles from [`Parts`], re-drives
//! whatever a previous run left in flight, and runs them under one [`Supervisor`] until shut
//! down. What each role starts is in [`crate::roles`]; connections in [`crate::connect`];
//! the classifiers in [`crate::classifiers`].

use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context;
use chrono::Utc;
use jobwire_deliver::SendStage;
use jobwire_deliver::stage::SendCounters;
use jobwire_intake::stage::IntakeStage;
use jobwire_queue::Queue;
use jobwire_queue::wire::{DeliveryReady, JobReady, PostReady};
use jobwire_store::{DeliveryStatus, PipelineCounts, PostStatus, Store};
use tokio_util::sync::CancellationToken;

pub use crate::classifiers::{
    ClassifierMode, Classifiers, SHIPPED_EXTRA_TRAINING_DATA, SHIPPED_TRAINING_DATA, classifiers,
    retrainer, train_local, training_data,
};
pub use crate::connect::{
    connect_with_retry, is_embedded, open_queue, open_store, watch_dependencies,
};
pub use crate::parts::Parts;
pub use crate::roles::{Role, start_bots};
use crate::roles::{
    seed_sources, spawn_admin, spawn_bot, spawn_classifier, spawn_dispatcher, spawn_parser,
    spawn_sender,
};
use crate::server::Health;
use crate::supervisor::Supervisor;

/// A running pipeline: the stages of the chosen roles in this process.
pub struct Pipeline {
    pub store: Arc<dyn Store>,
    pub queue: Arc<dyn Queue>,
    pub intake: Arc<IntakeStage>,
    pub send: Option<Arc<SendStage>>,
    /// The primary classifier's name (`local:…`, `llm:…`), when this process classifies.
    pub classifier: String,
    shutdown: CancellationToken,
    tasks: Supervisor,
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
    /// Pending deliveries re-published before this returned. `None` in the embedded mode
    /// (a task beside the send stage re-publishes them and logs how many: the in-process
    /// send queue is bounded, so they cannot all be queued before a sender takes some) and
    /// in processes that do not re-drive.
    pub deliveries: Option<usize>,
    /// Deliveries that were `sending` when the last run stopped: sent again, because
    /// Telegram may or may not have received them.
    pub interrupted: usize,
}

impl Pipeline {
    /// Every role in one process (the embedded mode, tests, the demo).
    pub async fn start(parts: Parts, classifiers: Classifiers) -> anyhow::Result<(Self, Redrive)> {
        Self::start_roles(parts, &Role::ALL, Some(classifiers)).await
    }

    /// Seeds configured sources, loads configured subscribers, re-drives unfinished work and starts what
    /// each of `roles` runs ([`crate::roles`]). `classifiers` is needed when `roles` has the
    /// classifier.
    pub async fn start_roles(
        mut parts: Parts,
        roles: &[Role],
        classifiers: Option<Classifiers>,
    ) -> anyhow::Result<(Self, Redrive)> {
        // A message a consumer gives up on is kept in the store (`jobwire report`), in both
        // modes, before the backend settles it.
        let sink = Arc::new(crate::recovery::StoreDeadLetters(parts.store.clone()));
        parts.queue = Arc::new(jobwire_queue::WithDeadLetters::new(parts.queue, sink));
        let settings = &parts.settings;
        let (store, queue) = (parts.store.clone(), parts.queue.clone());
        let has = |r: Role| roles.contains(&r);
        let health = parts.health.clone();
        if has(Role::Parser) || has(Role::Dispatcher) {
            until_available(health.as_deref(), "seeding sources", || {
                seed_sources(settings, store.as_ref())
            })
            .await?;
        }
        // Categories: the file seeds them, the database holds what an admin changed; every
        // stage starts with what the database says and follows its changes.
        until_available(health.as_deref(), "seeding categories", || {
            crate::categories::seed(settings, store.as_ref())
        })
        .await?;
        let categories = crate::categories::CategoryHub::new(settings.categories.clone());
        // Only the roles that use the categories read and follow them.
        let uses_categories = has(Role::Classifier) || has(Role::Dispatcher) || has(Role::Bot);
        if uses_categories {
            until_available(health.as_deref(), "reading categories", || async {
                crate::categories::refresh(&categories, settings, store.as_ref())
                    .await
                    .map(|_| ())
            })
            .await?;
        }
        if has(Role::Dispatcher)
            && let Some(path) = &settings.subscribers_file
        {
            let n = until_available(health.as_deref(), "loading subscribers", || {
                crate::subscribers::load_file(store.as_ref(), path)
            })
            .await?;
            tracing::info!(subscribers = n, file = %path.display(), "subscribers loaded");
        }

        let shutdown = CancellationToken::new();
        let mut tasks = Supervisor::new(shutdown.clone(), parts.health.clone());
        let dedup = settings.dedup.clone();
        let intake = Arc::new(IntakeStage::with_dedup(store.clone(), queue.clone(), dedup));

        // Re-drive before any consumer starts. One process owns everything in the embedded
        // mode: all unfinished work is re-published, including sends that were in flight;
        // its pending deliveries are re-published by a task once the send stage runs (below).
        // With a broker, messages survive a crash; a dispatcher re-publishes what may have
        // been committed but not published (consumers are idempotent), and abandoned sends
        // are taken over after their lease by the scheduler.
        let embedded = is_embedded(settings);
        let redrive = if embedded {
            redrive(
                store.as_ref(),
                queue.as_ref(),
                Some(Utc::now()),
                Deliveries::Later,
            )
            .await?
        } else if has(Role::Dispatcher) {
            until_available(health.as_deref(), "re-driving unfinished work", || {
                redrive(store.as_ref(), queue.as_ref(), None, Deliveries::Now)
            })
            .await?
        } else {
            Redrive::default()
        };
        if redrive.interrupted > 0 {
            tracing::warn!(
                deliveries = redrive.interrupted,
                "deliveries were in flight when the last run stopped; sending them again"
            );
        }

        if uses_categories {
            let (hub, settings, store, token) = (
                categories.clone(),
                Arc::new(settings.clone()),
                store.clone(),
                tasks.shutdown_token(),
            );
            tasks.spawn_restarting("categories", move || {
                crate::categories::follow(
                    hub.clone(),
                    settings.clone(),
                    store.clone(),
                    crate::categories::POLL,
                    token.clone(),
                )
            });
        }
        let mut classifier = String::new();
        if has(Role::Classifier) {
            let classifiers = classifiers.context("the classifier role needs classifiers")?;
            classifier = spawn_classifier(&mut tasks, &parts, &classifiers, &categories);
        }
        if has(Role::Dispatcher) {
            spawn_dispatcher(&mut tasks, &parts, &categories);
        }
        let send = if has(Role::Sender) {
            Some(spawn_sender(&mut tasks, &parts)?)
        } else {
            None
        };
        if embedded {
            spawn_delivery_redrive(&mut tasks, &store, &queue);
        }
        if has(Role::Admin) {
            spawn_admin(&mut tasks, &parts);
        }
        if has(Role::Bot) {
            spawn_bot(&mut tasks, &parts, &categories).await?;
        }
        // Sources last: every stage they feed is running.
        if has(Role::Parser) {
            spawn_parser(&mut tasks, &parts, &intake);
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
            if let Some(e) = self.tasks.try_ended() {
                return Err(e.context("a pipeline stage failed"));
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

    /// Resolves when a supervised task ends on its own: a stage failed or stopped (or a
    /// restarting task could not be restarted), with its name and reason.
    pub async fn stage_ended(&mut self) -> anyhow::Error {
        self.tasks.ended().await
    }

    /// Starts one more supervised task (the run command's dependency watch).
    pub fn supervisor(&mut self) -> &mut Supervisor {
        &mut self.tasks
    }

    /// Stops taking work, lets the stages finish what they hold, and returns.
    pub async fn shutdown(self) -> anyhow::Result<()> {
        self.tasks.shutdown().await;
        Ok(())
    }
}

/// Whether an error comes from a database or broker that could not be reached (worth
/// trying again), rather than from bad input.
pub(crate) fn is_unavailable(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<jobwire_store::StoreError>()
            .is_some_and(jobwire_store::StoreError::is_unavailable)
            || matches!(
                c.downcast_ref::<jobwire_queue::QueueError>(),
                Some(jobwire_queue::QueueError::Backend(_))
            )
    })
}

/// Runs a start-up step of a long-running process (`health` given), trying again with backoff
/// while the database or broker is unreachable: a role restarted during an outage reports
/// not-ready on `/readyz` and starts when the service is back instead of exiting. Any other
/// error (a bad subscribers file, a bad value) fails at once; without `health` (tests, one-shot
/// commands) every error does.
async fn until_available<T, F, Fut>(
    health: Option<&Health>,
    step: &'static str,
    mut attempt: F,
) -> anyhow::Result<T>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = anyhow::Result<T>>,
{
    let done = match health {
        Some(h) => crate::connect::with_backoff(h, "start-up", step, is_unavailable, attempt).await,
        None => attempt().await,
    };
    done.map_err(|e| e.context(step))
}

/// Whether [`redrive`] re-publishes the pending deliveries itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Deliveries {
    Now,
    /// The caller does, with [`redrive_deliveries`], once a send stage takes them.
    Later,
}

/// Publishes everything the database says is between stages (the pending deliveries only
/// with [`Deliveries::Now`]). With `interrupted_before`, deliveries left `sending` before
/// then are made pending again first (a single process at start-up).
pub async fn redrive(
    store: &dyn Store,
    queue: &dyn Queue,
    interrupted_before: Option<chrono::DateTime<Utc>>,
    deliveries: Deliveries,
) -> anyhow::Result<Redrive> {
    let mut r = Redrive::default();
    if let Some(before) = interrupted_before {
        r.interrupted = store
            .recover_interrupted_deliveries(before, Utc::now())
            .await?
            .len();
    }
    // Page by page, so that a backlog of millions never sits in memory at once.
    let page = REDRIVE_PAGE;
    r.posts = publish_pages(
        queue,
        |after| store.posts_in_status_after(PostStatus::Queued, after, page),
        |ids| ids.iter().map(|&id| PostReady::new(id)).collect(),
    )
    .await?;
    r.jobs = publish_pages(
        queue,
        |after| store.posts_in_status_after(PostStatus::Job, after, page),
        |ids| ids.iter().map(|&id| JobReady::new(id)).collect(),
    )
    .await?;
    if deliveries == Deliveries::Now {
        r.deliveries = Some(redrive_deliveries(store, queue).await?);
    }
    Ok(r)
}

/// Publishes every pending delivery (in runs of up to 64 per message); returns how many.
/// Waits while the send queue is full: in the embedded mode, call it only where a send
/// stage is taking messages.
pub async fn redrive_deliveries(store: &dyn Store, queue: &dyn Queue) -> anyhow::Result<usize> {
    publish_pages(
        queue,
        |after| store.deliveries_in_status_after(DeliveryStatus::Pending, after, REDRIVE_PAGE),
        |ids| DeliveryReady::batches(ids).collect(),
    )
    .await
}

/// The embedded mode's re-drive of pending deliveries, beside the send stage: a backlog
/// larger than the in-process send queue (a crash in the middle of a big fan-out) flows
/// through it instead of waiting for a sender that has not started. Deliveries that a
/// fan-out creates meanwhile may be named twice; the send stage claims each row once and
/// skips the other message's copy.
fn spawn_delivery_redrive(tasks: &mut Supervisor, store: &Arc<dyn Store>, queue: &Arc<dyn Queue>) {
    let (store, queue, token) = (store.clone(), queue.clone(), tasks.shutdown_token());
    tasks.spawn("delivery re-drive", async move {
        tokio::select! {
            n = redrive_deliveries(store.as_ref(), queue.as_ref()) => {
                let n = n.context("re-driving pending deliveries")?;
                if n > 0 {
                    tracing::info!(deliveries = n, "re-drove pending deliveries");
                }
            }
            _ = token.cancelled() => return Ok(()),
        }
        // A stage ending on its own stops the process; this one's work is done.
        token.cancelled().await;
        Ok(())
    });
}

/// Publishes `messages(page)` for every page of ids `fetch` pages through (`fetch(after)`
/// returns the ids after `after`, in order); returns how many ids.
async fn publish_pages<Id, M, F, Fut>(
    queue: &dyn Queue,
    fetch: F,
    messages: fn(&[Id]) -> Vec<M>,
) -> anyhow::Result<usize>
where
    Id: Copy,
    M: jobwire_queue::wire::WireMessage,
    F: Fn(Option<Id>) -> Fut,
    Fut: std::future::Future<Output = jobwire_store::Result<Vec<Id>>>,
{
    let (mut after, mut total) = (None, 0);
    loop {
        let ids = fetch(after).await?;
        let Some(&last) = ids.last() else {
            return Ok(total);
        };
        total += ids.len();
        publish_all(queue, messages(&ids).into_iter()).await?;
        after = Some(last);
    }
}

/// Rows read and published per step of a re-drive.
const REDRIVE_PAGE: u32 = 1_000;

/// Publishes many messages with up to 256 in flight (each waits for a broker's confirm).
async fn publish_all<T: jobwire_queue::wire::WireMessage>(
    queue: &dyn Queue,
    messages: impl Iterator<Item = T>,
) -> anyhow::Result<()> {
    use futures::{StreamExt, TryStreamExt};
    let messages: Vec<T> = messages.collect();
    futures::stream::iter(messages)
        .map(|m| async move { jobwire_queue::publish(queue, &m).await })
        .buffer_unordered(256)
        .try_collect::<()>()
        .await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicU32, Ordering};

    use super::*;

    fn unreachable_db() -> anyhow::Error {
        anyhow::Error::new(jobwire_store::StoreError::Database(
            sqlx::Error::PoolTimedOut,
        ))
        .context("upserting a channel")
    }

    #[tokio::test(start_paused = true)]
    async fn a_start_up_step_waits_for_the_database_and_reports_not_ready_meanwhile() {
        let health = Health::new();
        let calls = AtomicU32::new(0);
        let seen_not_ready = AtomicU32::new(0);
        let out = until_available(Some(&*health), "applying channels", || {
            let n = calls.fetch_add(1, Ordering::SeqCst);
            if n > 0 && !health.is_ready() {
                seen_not_ready.fetch_add(1, Ordering::SeqCst);
            }
            async move { if n < 3 { Err(unreachable_db()) } else { Ok(n) } }
        })
        .await
        .expect("succeeds once the database is back");
        assert_eq!(out, 3);
        assert_eq!(calls.load(Ordering::SeqCst), 4);
        assert_eq!(seen_not_ready.load(Ordering::SeqCst), 3);
        assert!(health.is_ready(), "ready again after the step went through");
    }

    #[tokio::test(start_paused = true)]
    async fn bad_input_and_one_shot_commands_fail_at_once() {
        let health = Health::new();
        let calls = AtomicU32::new(0);
        let err = until_available(Some(&*health), "loading subscribers", || {
            calls.fetch_add(1, Ordering::SeqCst);
            async { Err::<(), _>(anyhow::anyhow!("subscribers_file: line 3: bad chat id")) }
        })
        .await
        .expect_err("bad input is not retried");
        assert_eq!(calls.load(Ordering::SeqCst), 1);
        assert!(format!("{err:#}").contains("loading subscribers"));
        assert!(format!("{err:#}").contains("bad chat id"));

        let calls = AtomicU32::new(0);
        until_available(None, "applying channels", || {
            calls.fetch_add(1, Ordering::SeqCst);
            async { Err::<(), _>(unreachable_db()) }
        })
        .await
        .expect_err("without health (tests, one-shot commands) nothing is retried");
        assert_eq!(calls.load(Ordering::SeqCst), 1);
    }
}
