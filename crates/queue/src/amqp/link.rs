//! The connection: one background task owns it, declares the topology on it, and replaces it
//! (with capped exponential backoff) whenever it breaks; everything else waits on its state.

use std::pin::pin;
use std::sync::Arc;
use std::sync::atomic::AtomicU64;
use std::time::Duration;

use backon::{BackoffBuilder, ExponentialBuilder};
use futures::StreamExt;
use lapin::options::ConfirmSelectOptions;
use lapin::types::{LongString, ShortString};
use lapin::{Channel, Connection, ConnectionProperties, Event};
use tokio::sync::{Notify, watch};
use tokio::time::Instant;

use super::AmqpConfig;
use crate::topology::Topology;
use crate::{QueueError, Topic};

/// How often the connection owner checks the connection's health between events.
const HEALTH_CHECK_EVERY: Duration = Duration::from_millis(250);
/// The shortest pause between two reconnect attempts.
const MIN_BACKOFF: Duration = Duration::from_millis(100);
/// How long closing a connection may take before it is abandoned.
const CLOSE_TIMEOUT: Duration = Duration::from_secs(2);
/// How long an ack, a nack or a channel operation may take before it is abandoned.
pub(super) const OP_TIMEOUT: Duration = Duration::from_secs(10);

/// A connection that passed its set-up: topology declared, publisher channel in confirm mode.
pub(super) struct Live {
    pub(super) generation: u64,
    pub(super) connection: Connection,
    pub(super) publisher: Channel,
}

impl Live {
    pub(super) fn healthy(&self) -> bool {
        self.connection.status().connected() && self.publisher.status().connected()
    }

    pub(super) async fn close(&self, why: &str) {
        let closing = self.connection.close(200, ShortString::from(why));
        if let Ok(Err(e)) = tokio::time::timeout(CLOSE_TIMEOUT, closing).await {
            tracing::debug!(error = %e, "closing an AMQP connection that was already broken");
        }
    }
}

#[derive(Clone, Default)]
pub(super) struct LinkState {
    pub(super) live: Option<Arc<Live>>,
    pub(super) closed: bool,
}

pub(super) struct Inner {
    pub(super) config: AmqpConfig,
    pub(super) topology: Topology,
    pub(super) state: watch::Sender<LinkState>,
    /// Wakes the connection owner to check the connection now (someone saw it fail).
    pub(super) nudge: Notify,
    pub(super) consumer_seq: AtomicU64,
}

impl Inner {
    pub(super) fn backoff(&self) -> impl Iterator<Item = Duration> + use<> {
        ExponentialBuilder::default()
            .with_min_delay(MIN_BACKOFF)
            .with_max_delay(self.config.max_reconnect_delay.max(MIN_BACKOFF))
            .with_jitter()
            .without_max_times()
            .build()
    }

    pub(super) fn current(&self) -> Option<Arc<Live>> {
        self.state.borrow().live.clone()
    }

    pub(super) fn is_closed(&self) -> bool {
        self.state.borrow().closed
    }

    pub(super) fn mark_closed(&self) {
        self.state.send_modify(|s| s.closed = true);
    }

    /// Sleeps for `delay` unless the queue is closed first; returns whether it is closed.
    pub(super) async fn pause(&self, delay: Duration) -> bool {
        let mut rx = self.state.subscribe();
        tokio::select! {
            _ = tokio::time::sleep(delay) => self.is_closed(),
            _ = rx.wait_for(|s| s.closed) => true,
        }
    }

    /// Connects, declares the topology and starts the task that keeps the connection up
    /// (see [`AmqpQueue::connect`](super::AmqpQueue::connect)).
    pub(super) async fn start(config: AmqpConfig) -> Result<Arc<Self>, QueueError> {
        let topology = Topology::new(&config.queue_prefix, config.delivery_limit)?;
        let url = config.redacted_url();
        let timeout = config.connect_timeout;
        let inner = Arc::new(Inner {
            config,
            topology,
            state: watch::Sender::new(LinkState::default()),
            nudge: Notify::new(),
            consumer_seq: AtomicU64::new(0),
        });
        let deadline = Instant::now() + timeout;
        let mut delays = inner.backoff();
        let live = loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let error = match tokio::time::timeout(left, inner.connect_once(1)).await {
                Ok(Ok(live)) => break live,
                Ok(Err(e)) if e.is_amqp_soft_error() => {
                    return Err(QueueError::Backend(format!(
                        "RabbitMQ at {url} refused the connection or jobwire's topology: {e}"
                    )));
                }
                Ok(Err(e)) => e.to_string(),
                Err(_) => "no answer".to_owned(),
            };
            let delay = delays.next().unwrap_or(MIN_BACKOFF);
            if Instant::now() + delay >= deadline {
                return Err(QueueError::Backend(format!(
                    "could not connect to RabbitMQ at {url} within {timeout:?}: {error}"
                )));
            }
            tracing::debug!(%url, %error, ?delay, "connecting to RabbitMQ failed; retrying");
            tokio::time::sleep(delay).await;
        };
        tracing::info!(%url, "connected to RabbitMQ");
        let live = Arc::new(live);
        inner.state.send_modify(|s| s.live = Some(live.clone()));
        tokio::spawn(inner.clone().supervise(live));
        Ok(inner)
    }

    /// One connection attempt: connect, declare the topology, open the publisher channel.
    async fn connect_once(&self, generation: u64) -> Result<Live, lapin::Error> {
        let props = ConnectionProperties::default().with_connection_name(LongString::from(
            format!("jobwire {}", env!("CARGO_PKG_VERSION")),
        ));
        let connection = Connection::connect(&self.config.url, props).await?;
        let publisher = connection.create_channel().await?;
        self.topology.declare_all(&publisher).await?;
        publisher
            .confirm_select(ConfirmSelectOptions::default())
            .await?;
        Ok(Live {
            generation,
            connection,
            publisher,
        })
    }

    /// Like [`Self::connect_once`], bounded by `limit`.
    async fn try_connect(&self, generation: u64, limit: Duration) -> Result<Live, String> {
        match tokio::time::timeout(limit, self.connect_once(generation)).await {
            Ok(Ok(live)) => Ok(live),
            Ok(Err(e)) => Err(e.to_string()),
            Err(_) => Err(format!("no answer within {limit:?}")),
        }
    }

    /// Waits for a connection of at least `min_generation`, until `deadline`.
    pub(super) async fn live_after(
        &self,
        topic: Topic,
        min_generation: u64,
        deadline: Instant,
    ) -> Result<Arc<Live>, QueueError> {
        let mut rx = self.state.subscribe();
        let ready = rx.wait_for(|s| {
            s.closed
                || s.live
                    .as_ref()
                    .is_some_and(|l| l.generation >= min_generation)
        });
        let state = match tokio::time::timeout_at(deadline, ready).await {
            Ok(Ok(state)) => state.clone(),
            Ok(Err(_)) => return Err(QueueError::Closed { topic }),
            Err(_) => {
                return Err(QueueError::Backend(format!(
                    "RabbitMQ at {} is unreachable: no connection within {:?}",
                    self.config.redacted_url(),
                    self.config.publish_timeout
                )));
            }
        };
        match state.live {
            Some(live) if !state.closed => Ok(live),
            _ => Err(QueueError::Closed { topic }),
        }
    }

    /// Resolves once the connection of `generation` is no longer the current one (it broke,
    /// was replaced, or the queue was closed).
    pub(super) async fn gone(&self, generation: u64) {
        let mut rx = self.state.subscribe();
        let _ = rx
            .wait_for(|s| s.closed || s.live.as_ref().is_none_or(|l| l.generation != generation))
            .await;
    }

    /// Runs `op` on the connection of `generation`; `None` if that connection goes away or
    /// `limit` passes first. (An operation in flight when a connection dies may never
    /// complete in lapin, so nothing waits on one unguarded.)
    pub(super) async fn on_link<T>(
        &self,
        generation: u64,
        limit: Duration,
        op: impl Future<Output = T>,
    ) -> Option<T> {
        tokio::select! {
            biased;
            out = op => Some(out),
            _ = self.gone(generation) => None,
            _ = tokio::time::sleep(limit) => None,
        }
    }

    /// Waits for any connection; `None` once the queue is closed.
    pub(super) async fn live_or_closed(&self) -> Option<Arc<Live>> {
        let mut rx = self.state.subscribe();
        let state = rx
            .wait_for(|s| s.closed || s.live.is_some())
            .await
            .ok()?
            .clone();
        if state.closed { None } else { state.live }
    }

    /// Returns when `live` is broken or the queue was closed.
    async fn wait_broken(&self, live: &Live) {
        let mut events = pin!(live.connection.events_listener());
        let mut rx = self.state.subscribe();
        let mut tick = tokio::time::interval(HEALTH_CHECK_EVERY);
        loop {
            if rx.borrow_and_update().closed {
                return;
            }
            if !live.healthy() {
                tracing::warn!(
                    url = %self.config.redacted_url(),
                    "AMQP connection lost; reconnecting"
                );
                return;
            }
            tokio::select! {
                event = events.next() => match event {
                    Some(Event::Error(error)) => {
                        tracing::warn!(
                            url = %self.config.redacted_url(),
                            %error,
                            "AMQP connection failed; reconnecting"
                        );
                        return;
                    }
                    Some(Event::ConnectionBlocked(reason)) => {
                        tracing::warn!(%reason, "RabbitMQ blocked publishing (resource alarm)");
                    }
                    Some(Event::ConnectionUnblocked) => {
                        tracing::info!("RabbitMQ unblocked publishing");
                    }
                    Some(_) => {}
                    None => return,
                },
                _ = self.nudge.notified() => {}
                _ = tick.tick() => {}
                _ = rx.changed() => {}
            }
        }
    }

    /// Owns the connection: replaces it whenever it breaks, until the queue is closed.
    async fn supervise(self: Arc<Self>, mut live: Arc<Live>) {
        let url = self.config.redacted_url();
        let mut generation = live.generation;
        loop {
            self.wait_broken(&live).await;
            self.state.send_modify(|s| s.live = None);
            live.close("jobwire reconnecting").await;
            if self.is_closed() {
                tracing::debug!(%url, "AMQP queue closed");
                return;
            }
            let mut delays = self.backoff();
            live = loop {
                generation += 1;
                let limit = self.config.connect_timeout.max(Duration::from_secs(1));
                match self.try_connect(generation, limit).await {
                    Ok(new) => {
                        tracing::info!(%url, generation, "reconnected to RabbitMQ");
                        break Arc::new(new);
                    }
                    Err(error) => {
                        let delay = delays.next().unwrap_or(self.config.max_reconnect_delay);
                        tracing::warn!(%url, %error, ?delay, "reconnecting to RabbitMQ failed");
                        if self.pause(delay).await {
                            return;
                        }
                    }
                }
            };
            if self.is_closed() {
                live.close("jobwire closing").await;
                return;
            }
            self.state.send_modify(|s| s.live = Some(live.clone()));
        }
    }
}
