//! One supervisor for every long-running task of a process.
//!
//! Each task is started with a name, in one of two ways:
//!
//! - [`Supervisor::spawn`] — a pipeline stage. When it ends on its own (an error, a panic, or a
//!   return before shutdown), [`Supervisor::ended`] says which one and why, and the process
//!   goes down with that message: a stage that stopped silently would leave work queued for
//!   ever.
//! - [`Supervisor::spawn_restarting`] — a source or a background job (RSS feeds, the Telegram reader, the
//!   daily report). When it fails or panics it is started again after a backoff that doubles
//!   from 500 ms to one minute; while it is down `/readyz` reports it not ready with the
//!   reason, and it becomes ready again once a restart has run for ten seconds.
//!
//! - [`Supervisor::watch`] — a task started before the supervisor existed (the HTTP servers,
//!   which answer `/readyz` while the services are connected to; the signal listener). Its
//!   end before shutdown, or its panic, stops the process as a stage's does.
//!
//! On shutdown the token is cancelled and every task gets to finish what it holds.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use tokio::task::{JoinHandle, JoinSet};
use tokio_util::sync::CancellationToken;

use crate::server::Health;

/// How restarts are paced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Backoff {
    /// The first wait before a restart; it doubles up to `max`.
    pub first: Duration,
    pub max: Duration,
    /// A restarted task that has run this long is healthy again (and its backoff resets).
    pub healthy_after: Duration,
    /// How long shutdown waits for tasks to finish what they hold before aborting them.
    pub shutdown_grace: Duration,
}

impl Backoff {
    /// The waits before each restart: `first`, doubling up to `max`, never running out.
    fn waits(&self) -> backon::ExponentialBackoff {
        use backon::BackoffBuilder;
        backon::ExponentialBuilder::new()
            .with_min_delay(self.first)
            .with_max_delay(self.max)
            .without_max_times()
            .build()
    }
}

impl Default for Backoff {
    fn default() -> Self {
        Self {
            first: Duration::from_millis(500),
            max: Duration::from_secs(60),
            healthy_after: Duration::from_secs(10),
            shutdown_grace: Duration::from_secs(30),
        }
    }
}

/// The tasks of one process, started by the `spawn_<role>` functions of
/// [`crate::roles`].
pub struct Supervisor {
    tasks: JoinSet<(&'static str, anyhow::Result<()>)>,
    shutdown: CancellationToken,
    health: Option<Arc<Health>>,
    backoff: Backoff,
}

impl std::fmt::Debug for Supervisor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Supervisor")
            .field("tasks", &self.tasks.len())
            .field("shutting_down", &self.shutdown.is_cancelled())
            .finish()
    }
}

impl Supervisor {
    /// A supervisor whose tasks stop when `shutdown` is cancelled; restarting tasks report
    /// their state to `health` (the `/readyz` of the process) when given.
    pub fn new(shutdown: CancellationToken, health: Option<Arc<Health>>) -> Self {
        Self {
            tasks: JoinSet::new(),
            shutdown,
            health,
            backoff: Backoff::default(),
        }
    }

    /// The same supervisor with other restart timings (tests).
    pub fn with_backoff(mut self, backoff: Backoff) -> Self {
        self.backoff = backoff;
        self
    }

    /// The token every task watches.
    pub fn shutdown_token(&self) -> CancellationToken {
        self.shutdown.clone()
    }

    /// Starts a task whose end stops the process (a stage).
    pub fn spawn<F>(&mut self, name: &'static str, task: F)
    where
        F: Future<Output = anyhow::Result<()>> + Send + 'static,
    {
        self.tasks.spawn(async move { (name, task.await) });
    }

    /// Watches a task already running (an HTTP server, the signal listener) that should run
    /// until `until` is cancelled (the token it was started with): ending before that, or
    /// panicking, stops the process like a stage. If shutdown has to abort the watch, the task
    /// is aborted with it.
    pub fn watch(&mut self, name: &'static str, task: JoinHandle<()>, until: &CancellationToken) {
        let (until, ours) = (until.clone(), self.shutdown.clone());
        self.tasks.spawn(async move {
            let mut task = tokio_util::task::AbortOnDropHandle::new(task);
            let outcome = match (&mut task).await {
                Ok(()) if until.is_cancelled() => {
                    // An expected end is not news for `ended`: it is reported at the
                    // supervisor's own shutdown, which comes right after.
                    ours.cancelled().await;
                    Ok(())
                }
                Ok(()) => Err(anyhow::anyhow!("{name} ended before shutdown")),
                Err(e) if e.is_panic() => Err(anyhow::anyhow!("{name} panicked: {e}")),
                Err(e) => Err(anyhow::anyhow!("{name} was cancelled: {e}")),
            };
            (name, outcome)
        });
    }

    /// Starts a task that is restarted with backoff whenever it fails, panics or returns
    /// before shutdown (a source or a background job). `make` builds one run of it.
    pub fn spawn_restarting<M, F>(&mut self, name: &'static str, make: M)
    where
        M: Fn() -> F + Send + 'static,
        F: Future<Output = anyhow::Result<()>> + Send + 'static,
    {
        let shutdown = self.shutdown.clone();
        let (health, timing) = (self.health.clone(), self.backoff);
        self.tasks.spawn(async move {
            restart_loop(name, make, shutdown, health, timing).await;
            (name, Ok(()))
        });
    }

    /// Whether a task has ended; `Some(error)` names it. Does not wait.
    pub fn try_ended(&mut self) -> Option<anyhow::Error> {
        self.tasks.try_join_next().map(ended_error)
    }

    /// Waits until a task ends on its own and says which and why. Never resolves while every
    /// task runs (or when there are none).
    pub async fn ended(&mut self) -> anyhow::Error {
        match self.tasks.join_next().await {
            Some(result) => ended_error(result),
            None => std::future::pending().await,
        }
    }

    /// Cancels the token and waits for every task to finish what it holds; a task still
    /// running after the grace period (one that ignores the token) is aborted.
    pub async fn shutdown(mut self) {
        self.shutdown.cancel();
        let drain = async {
            while let Some(result) = self.tasks.join_next().await {
                match result {
                    Ok((_, Ok(()))) => {}
                    Ok((name, Err(e))) => {
                        tracing::warn!(task = name, error = %format!("{e:#}"), "ended with an error")
                    }
                    Err(e) => tracing::warn!(error = %e, "a task failed while shutting down"),
                }
            }
        };
        // Restarting tasks wait up to the grace period themselves; a little longer here.
        let grace = self.backoff.shutdown_grace + Duration::from_secs(1);
        if tokio::time::timeout(grace, drain).await.is_err() {
            tracing::error!(
                tasks = self.tasks.len(),
                "tasks did not finish within the shutdown grace period; aborting them"
            );
            self.tasks.abort_all();
        }
    }
}

fn ended_error(
    result: Result<(&'static str, anyhow::Result<()>), tokio::task::JoinError>,
) -> anyhow::Error {
    match result {
        Ok((name, Ok(()))) => anyhow::anyhow!("{name} stopped unexpectedly"),
        Ok((name, Err(e))) => e.context(format!("{name} failed")),
        Err(e) if e.is_panic() => anyhow::anyhow!("a task panicked: {e}"),
        Err(e) => anyhow::anyhow!("a task was cancelled: {e}"),
    }
}

async fn restart_loop<M, F>(
    name: &'static str,
    make: M,
    shutdown: CancellationToken,
    health: Option<Arc<Health>>,
    timing: Backoff,
) where
    M: Fn() -> F,
    F: Future<Output = anyhow::Result<()>> + Send + 'static,
{
    let mut waits = timing.waits();
    let mut restarts = 0u64;
    loop {
        // Its own task, so a panic is caught here instead of ending the supervisor.
        let mut run = tokio::spawn(make());
        let healthy = tokio::time::sleep(timing.healthy_after);
        tokio::pin!(healthy);
        let outcome = loop {
            tokio::select! {
                result = &mut run => break result,
                _ = shutdown.cancelled() => {
                    if tokio::time::timeout(timing.shutdown_grace, &mut run).await.is_err() {
                        tracing::error!(task = name, "did not stop within the grace period; aborted");
                        run.abort();
                    }
                    return;
                }
                _ = &mut healthy, if restarts > 0 => {
                    waits = timing.waits();
                    restarts = 0;
                    if let Some(health) = &health {
                        health.set(name, Ok(()));
                    }
                }
            }
        };
        if shutdown.is_cancelled() {
            return;
        }
        let reason = match outcome {
            Ok(Ok(())) => "stopped before shutdown".to_owned(),
            Ok(Err(e)) => format!("{e:#}").replace('\n', " "),
            Err(e) => format!("panicked: {e}"),
        };
        restarts += 1;
        // `without_max_times`: the waits never run out; the longest one stands in all the same.
        let backoff = waits.next().unwrap_or(timing.max);
        metrics::counter!(crate::telemetry::TASK_RESTARTS_TOTAL, "task" => name).increment(1);
        tracing::error!(
            task = name,
            error = %reason,
            restart_in_ms = backoff.as_millis() as u64,
            restarts,
            "task ended; restarting"
        );
        if let Some(health) = &health {
            health.set(name, Err(format!("restarting after: {reason}")));
        }
        tokio::select! {
            _ = shutdown.cancelled() => return,
            _ = tokio::time::sleep(backoff) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicU32, Ordering};

    use jobwire_testkit::wait::eventually;

    use super::*;

    const FAST: Backoff = Backoff {
        first: Duration::from_millis(20),
        max: Duration::from_millis(40),
        healthy_after: Duration::from_millis(300),
        shutdown_grace: Duration::from_millis(100),
    };

    /// How long a test waits for the supervisor to act.
    const SOON: Duration = Duration::from_secs(10);

    #[test]
    fn restarts_wait_half_a_second_doubling_to_a_minute() {
        let waits: Vec<Duration> = Backoff::default().waits().take(9).collect();
        let ms: Vec<u128> = waits.iter().map(Duration::as_millis).collect();
        assert_eq!(
            ms,
            [
                500, 1_000, 2_000, 4_000, 8_000, 16_000, 32_000, 60_000, 60_000
            ]
        );
    }

    #[tokio::test]
    async fn a_failing_restartable_task_is_restarted_and_reported_not_ready() {
        let health = Health::new();
        health.set("pipeline", Ok(()));
        let mut sup =
            Supervisor::new(CancellationToken::new(), Some(health.clone())).with_backoff(FAST);
        let runs = Arc::new(AtomicU32::new(0));
        let counter = runs.clone();
        sup.spawn_restarting("feeds", move || {
            let n = counter.fetch_add(1, Ordering::SeqCst);
            async move {
                if n < 2 {
                    anyhow::bail!("database is down");
                }
                std::future::pending::<()>().await;
                Ok(())
            }
        });
        // Two failures, then the third run stays up.
        eventually("the third run", SOON, || async {
            runs.load(Ordering::SeqCst) == 3
        })
        .await;
        assert!(
            !health.is_ready(),
            "not ready while it has not proven itself"
        );
        eventually("ready again", SOON, || async { health.is_ready() }).await;
        assert_eq!(runs.load(Ordering::SeqCst), 3, "no restart while it runs");
        assert!(
            sup.try_ended().is_none(),
            "a restarting task never ends the process"
        );
        sup.shutdown().await;
    }

    #[tokio::test]
    async fn a_panicking_restartable_task_is_restarted() {
        let mut sup = Supervisor::new(CancellationToken::new(), None).with_backoff(FAST);
        let runs = Arc::new(AtomicU32::new(0));
        let counter = runs.clone();
        sup.spawn_restarting("reader", move || {
            let n = counter.fetch_add(1, Ordering::SeqCst);
            async move {
                if n == 0 {
                    panic!("boom");
                }
                std::future::pending::<()>().await;
                Ok(())
            }
        });
        eventually("restarted after the panic", SOON, || async {
            runs.load(Ordering::SeqCst) >= 2
        })
        .await;
        sup.shutdown().await;
    }

    #[tokio::test]
    async fn a_fatal_task_that_fails_names_itself() {
        let mut sup = Supervisor::new(CancellationToken::new(), None);
        sup.spawn("classify stage", async { anyhow::bail!("queue closed") });
        let error = format!("{:#}", sup.ended().await);
        assert!(error.contains("classify stage failed"), "{error}");
        assert!(error.contains("queue closed"), "{error}");
    }

    #[tokio::test]
    async fn a_fatal_task_that_returns_early_is_an_error_too() {
        let mut sup = Supervisor::new(CancellationToken::new(), None);
        sup.spawn("send stage", async { Ok(()) });
        let error = sup.ended().await.to_string();
        assert_eq!(error, "send stage stopped unexpectedly");
    }

    #[tokio::test]
    async fn a_watched_server_that_stops_or_panics_stops_the_process() {
        let mut sup = Supervisor::new(CancellationToken::new(), None);
        let token = CancellationToken::new();
        sup.watch("health server", tokio::spawn(async {}), &token);
        let error = format!("{:#}", sup.ended().await);
        assert!(
            error.contains("health server ended before shutdown"),
            "{error}"
        );

        let mut sup = Supervisor::new(CancellationToken::new(), None);
        sup.watch(
            "webhook server",
            tokio::spawn(async { panic!("bind lost") }),
            &token,
        );
        let error = format!("{:#}", sup.ended().await);
        assert!(error.contains("webhook server panicked"), "{error}");
    }

    #[tokio::test]
    async fn a_watched_server_ends_quietly_at_shutdown_and_is_aborted_if_it_lingers() {
        // `run`'s token (SIGTERM cancels it) and the supervisor's own, as in `run.rs`.
        let (until, ours) = (CancellationToken::new(), CancellationToken::new());
        let mut sup = Supervisor::new(ours, None).with_backoff(FAST);
        let token = until.clone();
        sup.watch(
            "health server",
            tokio::spawn(async move { token.cancelled().await }),
            &until,
        );
        let stubborn = tokio::spawn(std::future::pending::<()>());
        let abort = stubborn.abort_handle();
        sup.watch("stubborn server", stubborn, &until);
        until.cancel();
        // The health server has ended with its token: that is no stage ending the process.
        assert!(
            tokio::time::timeout(Duration::from_millis(300), sup.ended())
                .await
                .is_err(),
            "an expected end is reported as an ended task"
        );
        tokio::time::timeout(Duration::from_secs(5), sup.shutdown())
            .await
            .expect("shutdown ends after the grace period");
        eventually("the lingering server is aborted", SOON, || async {
            abort.is_finished()
        })
        .await;
    }

    #[tokio::test]
    async fn shutdown_aborts_a_task_that_ignores_the_token() {
        let mut sup = Supervisor::new(CancellationToken::new(), None).with_backoff(FAST);
        sup.spawn("stubborn", std::future::pending());
        sup.spawn_restarting("stubborn source", std::future::pending);
        tokio::time::timeout(Duration::from_secs(5), sup.shutdown())
            .await
            .expect("shutdown ends after the grace period");
    }

    #[tokio::test]
    async fn shutdown_waits_for_tasks_to_finish() {
        let shutdown = CancellationToken::new();
        let mut sup = Supervisor::new(shutdown.clone(), None);
        let finished = Arc::new(AtomicU32::new(0));
        let done = finished.clone();
        sup.spawn("stage", async move {
            shutdown.cancelled().await;
            // Some work after the signal, which shutdown has to wait for.
            tokio::time::sleep(Duration::from_millis(20)).await;
            done.fetch_add(1, Ordering::SeqCst);
            Ok(())
        });
        sup.shutdown().await;
        assert_eq!(finished.load(Ordering::SeqCst), 1);
    }
}
