//! Connections to the outside services: the store, the queue and Redis, each retried with
//! backoff until it answers, and the watch that keeps `/readyz` and the queue gauges current.

use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use backon::{BackoffBuilder, ExponentialBuilder};
use jobwire_queue::Queue;
use jobwire_store::Store;
use tokio_util::sync::CancellationToken;

use crate::config::Settings;
use crate::parts::Parts;

/// Opens the configured store (`sqlite://` or `postgres://`).
pub async fn open_store(settings: &Settings) -> anyhow::Result<Arc<dyn Store>> {
    jobwire_store::open(settings.database_url.expose())
        .await
        .with_context(|| format!("database.url: cannot open {}", settings.database_url))
}

/// Opens the configured queue (`memory://` or `amqp://`).
pub async fn open_queue(settings: &Settings) -> anyhow::Result<Arc<dyn Queue>> {
    let url = settings.queue_url.expose();
    if url.starts_with("amqp://") || url.starts_with("amqps://") {
        // The prefetch bounds the deliveries a sender holds at once (the send topic's
        // messages name up to 64 each: `AmqpConfig::prefetch_for`); most of them wait for a
        // rate limiter, so a small prefetch would let one busy bot hold up the others.
        let mut config = jobwire_queue::AmqpConfig::new(url.to_owned());
        config.prefetch = u16::try_from(settings.max_in_flight).unwrap_or(u16::MAX);
        config.send_prefetch = Some(
            u16::try_from(
                settings
                    .max_in_flight
                    .div_ceil(jobwire_queue::wire::MAX_DELIVERY_BATCH)
                    .max(1),
            )
            .unwrap_or(u16::MAX),
        );
        config.queue_prefix = settings.queue_prefix.clone();
        let queue = jobwire_queue::AmqpQueue::connect(config)
            .await
            .with_context(|| format!("queue.url: cannot connect to {}", settings.queue_url))?;
        return Ok(Arc::new(queue));
    }
    jobwire_queue::open(url)
        .await
        .with_context(|| format!("queue.url: cannot connect to {}", settings.queue_url))
}

/// Whether the stages of this deployment share an in-process queue (one process runs
/// everything and re-drives all unfinished work at start-up).
pub fn is_embedded(settings: &Settings) -> bool {
    settings.queue_url.expose() == "memory://"
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
                let client = redis::Client::open(section.url.expose())
                    .with_context(|| format!("redis.url: {}", section.url))?;
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
        admin_alert: None,
        health: None,
        clock: Arc::new(jobwire_core::clock::SystemClock),
    })
}

async fn retry<T, F, Fut>(
    health: &crate::server::Health,
    component: &'static str,
    url: &jobwire_core::secret::SecretUrl,
    shutdown: &CancellationToken,
    mut attempt: F,
) -> Option<T>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = anyhow::Result<T>>,
{
    health.set(component, Err(format!("connecting to {url}")));
    let target = url.to_string();
    let connect = with_backoff(
        health,
        component,
        &target,
        |_| true,
        || {
            let answer = tokio::time::timeout(Duration::from_secs(10), attempt());
            async move {
                answer
                    .await
                    .unwrap_or_else(|_| Err(anyhow::anyhow!("no answer within 10 s")))
            }
        },
    );
    tokio::select! {
        connected = connect => connected.ok(),
        _ = shutdown.cancelled() => None,
    }
}

/// Runs `attempt` until it succeeds, waiting 0.5 s (doubling up to 10 s) between tries, with
/// `component` not ready on `/readyz` meanwhile and ready once it succeeds. An error
/// `worth_retrying` refuses is returned at once. `target` names what is tried in the log.
pub(crate) async fn with_backoff<T, F, Fut>(
    health: &crate::server::Health,
    component: &'static str,
    target: &str,
    worth_retrying: impl Fn(&anyhow::Error) -> bool,
    mut attempt: F,
) -> anyhow::Result<T>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = anyhow::Result<T>>,
{
    let mut waits = ExponentialBuilder::new()
        .with_min_delay(Duration::from_millis(500))
        .with_max_delay(Duration::from_secs(10))
        .without_max_times()
        .build();
    loop {
        // `without_max_times`: the waits never run out; 10 s is a safe stand-in all the same.
        let wait = waits.next().unwrap_or(Duration::from_secs(10));
        match attempt().await {
            Ok(v) => {
                health.set(component, Ok(()));
                return Ok(v);
            }
            Err(e) if worth_retrying(&e) => {
                let message =
                    jobwire_core::secret::redact_url(&format!("{e:#}").replace('\n', " "));
                tracing::warn!(
                    component,
                    target,
                    error = %message,
                    retry_in_ms = wait.as_millis() as u64,
                    "not reachable; retrying"
                );
                health.set(component, Err(message));
            }
            Err(e) => return Err(e),
        }
        tokio::time::sleep(wait).await;
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
                Some(n) => metrics::gauge!(crate::telemetry::QUEUE_DEPTH, "topic" => topic.name())
                    .set(n as f64),
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

#[cfg(test)]
mod tests {
    use std::io::Write;
    use std::sync::Mutex;

    use super::*;

    /// Log lines written while it is the thread's subscriber.
    #[derive(Clone, Default)]
    struct Lines(Arc<Mutex<Vec<u8>>>);

    impl Write for Lines {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            if let Ok(mut b) = self.0.lock() {
                b.extend_from_slice(buf);
            }
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    impl Lines {
        fn text(&self) -> String {
            self.0
                .lock()
                .map(|b| String::from_utf8_lossy(&b).into_owned())
                .unwrap_or_default()
        }
    }

    /// Connects `component` with `attempt` while capturing what it logs.
    async fn logged<F, Fut>(component: &'static str, attempt: F) -> (String, bool)
    where
        F: FnMut() -> Fut,
        Fut: std::future::Future<Output = anyhow::Result<()>>,
    {
        let lines = Lines::default();
        let writer = lines.clone();
        let subscriber = tracing_subscriber::fmt()
            .with_max_level(tracing::Level::DEBUG)
            .with_ansi(false)
            .with_writer(move || writer.clone())
            .finish();
        let _guard = tracing::subscriber::set_default(subscriber);
        let health = crate::server::Health::new();
        let url = jobwire_core::secret::SecretUrl::new("postgres://jobwire:hunter2@db/jobwire");
        let connected = retry(&health, component, &url, &CancellationToken::new(), attempt).await;
        assert!(connected.is_some(), "connected");
        (lines.text(), health.is_ready())
    }

    #[tokio::test(start_paused = true)]
    async fn a_start_logs_no_warning_when_the_services_answer() {
        let (log, ready) = logged("database", || async { Ok(()) }).await;
        assert!(ready);
        assert!(!log.contains("WARN"), "{log}");
        assert!(log.contains("INFO") && log.contains("connecting"), "{log}");
        assert!(log.contains("ready"), "{log}");
        assert!(!log.contains("hunter2"), "the password is redacted: {log}");

        // A service that does not answer at once is still a warning.
        let mut tries = 0;
        let (log, ready) = logged("queue", || {
            tries += 1;
            let answer = if tries < 2 {
                Err(anyhow::anyhow!("connection refused"))
            } else {
                Ok(())
            };
            async move { answer }
        })
        .await;
        assert!(ready);
        assert!(
            log.contains("WARN") && log.contains("not reachable; retrying"),
            "{log}"
        );
    }
}
