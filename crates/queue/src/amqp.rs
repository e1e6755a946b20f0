//! The RabbitMQ queue of the distributed mode (lapin).
//!
//! What it guarantees:
//!
//! - **Durable transport.** Every topic is a durable quorum queue (see [`crate::topology`]
//!   for the whole layout); messages are persistent (`delivery_mode = 2`).
//! - **Publisher confirms.** [`Queue::publish`] returns only once the broker confirmed the
//!   message. If the connection is lost before the confirm, the message is re-sent on the
//!   next connection (at-least-once: it may then exist twice, consumers are idempotent).
//!   A broker `nack`, an unroutable message, or no confirm within
//!   [`AmqpConfig::publish_timeout`] is an error, and the caller may publish again.
//! - **Manual acknowledgements** with a prefetch ([`AmqpConfig::prefetch`]): a message is
//!   acknowledged only when the caller settles the [`Received`].
//! - **Survives broker restarts.** One background task owns the connection: when it breaks,
//!   the task reconnects forever with capped exponential backoff, declares the topology
//!   again and opens a fresh publisher channel. Publishes wait for it; subscriptions
//!   re-consume transparently. Messages received on the dead connection cannot be
//!   acknowledged any more (lapin "poisons" their ackers); settling them only logs, and the
//!   broker redelivers them. [`AmqpQueue::is_ready`] tells whether a connection is up.
//! - **Bounded first connect.** [`AmqpQueue::connect`] gives up after
//!   [`AmqpConfig::connect_timeout`] with an error naming the URL (without its password).
//!
//! A [`Received`] should be settled while its [`Subscription`] is alive: dropping the
//! subscription closes its channel, and whatever it did not settle goes back to the queue.

use std::fmt;
use std::pin::pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use async_trait::async_trait;
use backon::{BackoffBuilder, ExponentialBuilder};
use futures::StreamExt;
use lapin::options::{
    BasicAckOptions, BasicConsumeOptions, BasicNackOptions, BasicPublishOptions, BasicQosOptions,
    ConfirmSelectOptions, QueueDeclareOptions,
};
use lapin::types::{AMQPValue, FieldTable, LongString, ShortString};
use lapin::{
    Acker, BasicProperties, Channel, Confirmation, Connection, ConnectionProperties, Consumer,
    Event,
};
use tokio::sync::{Notify, watch};
use tokio::time::Instant;

use crate::topology::{
    ATTEMPT_HEADER, DELIVERY_COUNT_HEADER, REASON_HEADER, RetryTier, TOPIC_HEADER, Topology,
    int_header,
};
use crate::{Queue, QueueError, Received, Settle, Subscription, Topic};

/// How often the connection owner checks the connection's health between events.
const HEALTH_CHECK_EVERY: Duration = Duration::from_millis(250);
/// The shortest pause between two reconnect attempts.
const MIN_BACKOFF: Duration = Duration::from_millis(100);
/// How long closing a connection may take before it is abandoned.
const CLOSE_TIMEOUT: Duration = Duration::from_secs(2);
/// How long an ack, a nack or a channel operation may take before it is abandoned.
const OP_TIMEOUT: Duration = Duration::from_secs(10);

/// Settings of the RabbitMQ queue.
///
/// `Debug` shows the URL with its password replaced by `***`.
#[derive(Clone)]
pub struct AmqpConfig {
    /// The broker, e.g. `amqp://user:password@host:5672/%2f` (or `amqps://…`). A lost
    /// broker is noticed at once when it closes the connection; to notice a silent network
    /// failure sooner than the broker's heartbeat (60 s), add e.g. `?heartbeat=10`.
    pub url: String,
    /// Messages handed to one subscription before it acknowledges any (`basic.qos`);
    /// 0 means unlimited. Default 64.
    pub prefetch: u16,
    /// Deliveries after which the broker dead-letters a message that was never settled
    /// (its consumer crashed or lost its connection each time): the quorum queues'
    /// `x-delivery-limit`. Default 10.
    pub delivery_limit: u32,
    /// How long [`AmqpQueue::connect`] tries before giving up. Default 10 s.
    pub connect_timeout: Duration,
    /// How long one publish may wait for a connection and the broker's confirm, across
    /// reconnects, before it fails. Default 60 s.
    pub publish_timeout: Duration,
    /// The longest pause between two reconnect attempts. Default 5 s.
    pub max_reconnect_delay: Duration,
    /// Prepended to every queue and exchange name (default empty), so that several
    /// installations or tests can share one broker.
    pub queue_prefix: String,
}

impl AmqpConfig {
    /// The defaults for the broker at `url`.
    pub fn new(url: impl Into<String>) -> Self {
        Self {
            url: url.into(),
            prefetch: 64,
            delivery_limit: 10,
            connect_timeout: Duration::from_secs(10),
            publish_timeout: Duration::from_secs(60),
            max_reconnect_delay: Duration::from_secs(5),
            queue_prefix: String::new(),
        }
    }

    /// The URL with its password replaced by `***`, fit for logs and errors.
    pub fn redacted_url(&self) -> String {
        jobwire_core::secret::redact_url(&self.url)
    }
}

impl fmt::Debug for AmqpConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AmqpConfig")
            .field("url", &self.redacted_url())
            .field("prefetch", &self.prefetch)
            .field("delivery_limit", &self.delivery_limit)
            .field("connect_timeout", &self.connect_timeout)
            .field("publish_timeout", &self.publish_timeout)
            .field("max_reconnect_delay", &self.max_reconnect_delay)
            .field("queue_prefix", &self.queue_prefix)
            .finish()
    }
}

/// A connection that passed its set-up: topology declared, publisher channel in confirm mode.
struct Live {
    generation: u64,
    connection: Connection,
    publisher: Channel,
}

impl Live {
    fn healthy(&self) -> bool {
        self.connection.status().connected() && self.publisher.status().connected()
    }

    async fn close(&self, why: &str) {
        let closing = self.connection.close(200, ShortString::from(why));
        if let Ok(Err(e)) = tokio::time::timeout(CLOSE_TIMEOUT, closing).await {
            tracing::debug!(error = %e, "closing an AMQP connection that was already broken");
        }
    }
}

#[derive(Clone, Default)]
struct LinkState {
    live: Option<Arc<Live>>,
    closed: bool,
}

/// Why a publish did not go through.
#[derive(Debug)]
enum PublishFailure {
    /// The channel or connection failed: try again on the next connection.
    Link(lapin::Error),
    /// The broker refused the message.
    Nacked,
    /// No queue took the message.
    Unroutable(String),
    /// Confirm mode was not on (a bug).
    Unconfirmed,
}

impl fmt::Display for PublishFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Link(e) => write!(f, "connection or channel failed: {e}"),
            Self::Nacked => f.write_str("the broker refused the message (nack)"),
            Self::Unroutable(text) => write!(f, "no queue took the message ({text})"),
            Self::Unconfirmed => f.write_str("the channel is not in confirm mode"),
        }
    }
}

struct Inner {
    config: AmqpConfig,
    topology: Topology,
    state: watch::Sender<LinkState>,
    /// Wakes the connection owner to check the connection now (someone saw it fail).
    nudge: Notify,
    consumer_seq: AtomicU64,
}

impl Inner {
    fn backoff(&self) -> impl Iterator<Item = Duration> + use<> {
        ExponentialBuilder::default()
            .with_min_delay(MIN_BACKOFF)
            .with_max_delay(self.config.max_reconnect_delay.max(MIN_BACKOFF))
            .with_jitter()
            .without_max_times()
            .build()
    }

    fn current(&self) -> Option<Arc<Live>> {
        self.state.borrow().live.clone()
    }

    fn is_closed(&self) -> bool {
        self.state.borrow().closed
    }

    fn mark_closed(&self) {
        self.state.send_modify(|s| s.closed = true);
    }

    /// Sleeps for `delay` unless the queue is closed first; returns whether it is closed.
    async fn pause(&self, delay: Duration) -> bool {
        let mut rx = self.state.subscribe();
        tokio::select! {
            _ = tokio::time::sleep(delay) => self.is_closed(),
            _ = rx.wait_for(|s| s.closed) => true,
        }
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
    async fn live_after(
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
    async fn gone(&self, generation: u64) {
        let mut rx = self.state.subscribe();
        let _ = rx
            .wait_for(|s| s.closed || s.live.as_ref().is_none_or(|l| l.generation != generation))
            .await;
    }

    /// Runs `op` on the connection of `generation`; `None` if that connection goes away or
    /// `limit` passes first. (An operation in flight when a connection dies may never
    /// complete in lapin, so nothing waits on one unguarded.)
    async fn on_link<T>(
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
    async fn live_or_closed(&self) -> Option<Arc<Live>> {
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

/// Publishes one persistent, mandatory message and waits for the broker's confirm.
async fn publish_confirmed(
    live: &Live,
    exchange: &ShortString,
    routing_key: &ShortString,
    payload: &[u8],
    headers: FieldTable,
) -> Result<(), PublishFailure> {
    let props = BasicProperties::default()
        .with_delivery_mode(2)
        .with_headers(headers);
    let confirm = live
        .publisher
        .basic_publish(
            exchange.clone(),
            routing_key.clone(),
            BasicPublishOptions {
                mandatory: true,
                ..BasicPublishOptions::default()
            },
            payload,
            props,
        )
        .await
        .map_err(PublishFailure::Link)?;
    match confirm.await.map_err(PublishFailure::Link)? {
        Confirmation::Ack(None) => Ok(()),
        Confirmation::Ack(Some(returned)) => {
            Err(PublishFailure::Unroutable(returned.reply_text.to_string()))
        }
        Confirmation::Nack(_) => Err(PublishFailure::Nacked),
        Confirmation::NotRequested => Err(PublishFailure::Unconfirmed),
    }
}

/// Closes the queue once the last handle to it is dropped.
struct Handle {
    inner: Arc<Inner>,
}

impl Drop for Handle {
    fn drop(&mut self) {
        self.inner.mark_closed();
    }
}

/// The RabbitMQ implementation of [`Queue`]. Cloning shares the connection.
///
/// The connection stays open while any clone, [`Subscription`] or unsettled [`Received`]
/// from it is alive, or until [`AmqpQueue::close`].
#[derive(Clone)]
pub struct AmqpQueue {
    handle: Arc<Handle>,
}

impl fmt::Debug for AmqpQueue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AmqpQueue")
            .field("config", &self.handle.inner.config)
            .field("ready", &self.is_ready())
            .finish()
    }
}

impl AmqpQueue {
    /// Connects, declares the topology and starts the task that keeps the connection up.
    ///
    /// Fails after [`AmqpConfig::connect_timeout`] if the broker cannot be reached, with an
    /// error naming the URL without its password; fails at once if the broker refuses the
    /// topology (e.g. a queue exists with other arguments).
    pub async fn connect(config: AmqpConfig) -> Result<Self, QueueError> {
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
        Ok(Self {
            handle: Arc::new(Handle { inner }),
        })
    }

    fn inner(&self) -> &Inner {
        &self.handle.inner
    }

    /// The settings this queue was opened with.
    pub fn config(&self) -> &AmqpConfig {
        &self.inner().config
    }

    /// Whether a connection to the broker is up right now (false while reconnecting).
    pub fn is_ready(&self) -> bool {
        let state = self.inner().state.borrow();
        !state.closed && state.live.as_ref().is_some_and(|l| l.healthy())
    }

    /// Closes the connection: publishes fail with [`QueueError::Closed`], subscriptions end.
    /// Unsettled messages go back to their queues.
    pub async fn close(&self) {
        let inner = self.inner();
        inner.mark_closed();
        if let Some(live) = inner.current() {
            live.close("jobwire closing").await;
        }
    }

    /// Deletes every queue and the exchange of this queue's prefix, messages included.
    /// Meant for tests and for tearing an installation down.
    pub async fn delete_topology(&self) -> Result<(), QueueError> {
        let live = self
            .inner()
            .current()
            .ok_or_else(|| QueueError::Backend("not connected to RabbitMQ".to_owned()))?;
        let channel = live.connection.create_channel().await.map_err(backend)?;
        self.inner()
            .topology
            .delete_all(&channel)
            .await
            .map_err(backend)?;
        let _ = channel.close(200, "OK".into()).await;
        Ok(())
    }
}

fn backend(e: lapin::Error) -> QueueError {
    QueueError::Backend(e.to_string())
}

#[async_trait]
impl Queue for AmqpQueue {
    async fn publish(&self, topic: Topic, payload: Vec<u8>) -> Result<(), QueueError> {
        let inner = self.inner();
        let queue = &inner.topology.names(topic).queue;
        let deadline = Instant::now() + inner.config.publish_timeout;
        let default_exchange = ShortString::from("");
        let mut min_generation = 0;
        loop {
            let live = inner.live_after(topic, min_generation, deadline).await?;
            let sent = publish_confirmed(
                &live,
                &default_exchange,
                queue,
                &payload,
                FieldTable::default(),
            );
            let left = deadline.saturating_duration_since(Instant::now());
            match inner.on_link(live.generation, left, sent).await {
                Some(Ok(())) => return Ok(()),
                Some(Err(PublishFailure::Link(error))) => {
                    if inner.is_closed() {
                        return Err(QueueError::Closed { topic });
                    }
                    tracing::debug!(%topic, %error, "publish not confirmed; re-sending after reconnect");
                    inner.nudge.notify_one();
                    min_generation = live.generation + 1;
                }
                Some(Err(failure)) => {
                    return Err(QueueError::Backend(format!(
                        "publish to {queue} failed: {failure}"
                    )));
                }
                None if inner.is_closed() => return Err(QueueError::Closed { topic }),
                None if Instant::now() < deadline => {
                    tracing::debug!(%topic, "connection lost before the confirm; re-sending after reconnect");
                    min_generation = live.generation + 1;
                }
                None => {
                    return Err(QueueError::Backend(format!(
                        "publish to {queue} not confirmed within {:?}",
                        inner.config.publish_timeout
                    )));
                }
            }
        }
    }

    async fn subscribe(&self, topic: Topic) -> Result<Box<dyn Subscription>, QueueError> {
        if self.inner().is_closed() {
            return Err(QueueError::Closed { topic });
        }
        let mut subscription = AmqpSubscription {
            handle: self.handle.clone(),
            topic,
            active: None,
            failures: 0,
        };
        // Register the consumer now, so that the broker shares messages with it from here
        // on; if that fails, `next` keeps trying.
        if let Some(live) = self.inner().current() {
            match subscription.start(&live).await {
                Ok(active) => subscription.active = Some(active),
                Err(error) => {
                    tracing::debug!(%topic, %error, "could not start consuming yet; will retry")
                }
            }
        }
        Ok(Box::new(subscription))
    }

    async fn depth(&self, topic: Topic) -> Option<u64> {
        let inner = self.inner();
        let live = inner.current()?;
        let query = async {
            let channel = live.connection.create_channel().await.ok()?;
            let declared = channel
                .queue_declare(
                    inner.topology.names(topic).queue.clone(),
                    QueueDeclareOptions {
                        passive: true,
                        ..QueueDeclareOptions::default()
                    },
                    FieldTable::default(),
                )
                .await;
            let _ = channel.close(200, "OK".into()).await;
            declared.ok().map(|q| u64::from(q.message_count()))
        };
        inner
            .on_link(live.generation, OP_TIMEOUT, query)
            .await
            .flatten()
    }
}

/// A consumer of one topic that re-consumes after reconnects.
struct AmqpSubscription {
    handle: Arc<Handle>,
    topic: Topic,
    active: Option<Active>,
    failures: u32,
}

struct Active {
    generation: u64,
    consumer: Consumer,
    _channel: Channel,
}

impl AmqpSubscription {
    /// Opens a channel and registers a consumer on `live`; gives up if it goes away.
    async fn start(&self, live: &Live) -> Result<Active, String> {
        let inner = &self.handle.inner;
        match inner
            .on_link(live.generation, OP_TIMEOUT, self.try_start(live))
            .await
        {
            Some(Ok(active)) => Ok(active),
            Some(Err(e)) => Err(e.to_string()),
            None => Err("the connection went away or did not answer in time".to_owned()),
        }
    }

    async fn try_start(&self, live: &Live) -> Result<Active, lapin::Error> {
        let inner = &self.handle.inner;
        let channel = live.connection.create_channel().await?;
        channel
            .basic_qos(inner.config.prefetch, BasicQosOptions::default())
            .await?;
        let tag = format!(
            "jobwire-{}-{}",
            self.topic.name(),
            inner.consumer_seq.fetch_add(1, Ordering::Relaxed)
        );
        let consumer = channel
            .basic_consume(
                inner.topology.names(self.topic).queue.clone(),
                ShortString::from(tag),
                BasicConsumeOptions::default(),
                FieldTable::default(),
            )
            .await?;
        Ok(Active {
            generation: live.generation,
            consumer,
            _channel: channel,
        })
    }

    fn received(&self, delivery: lapin::message::Delivery, generation: u64) -> Received {
        let headers = delivery.properties.headers().as_ref();
        let retried = int_header(headers, ATTEMPT_HEADER).unwrap_or(0);
        let returned = int_header(headers, DELIVERY_COUNT_HEADER).unwrap_or(0);
        let attempt = u32::try_from(retried.saturating_add(returned)).unwrap_or(u32::MAX);
        let settle = AmqpSettle {
            handle: self.handle.clone(),
            topic: self.topic,
            generation,
            acker: delivery.acker,
            payload: delivery.data.clone(),
            attempt,
        };
        Received::new(self.topic, delivery.data, attempt, Box::new(settle))
    }
}

#[async_trait]
impl Subscription for AmqpSubscription {
    async fn next(&mut self) -> Result<Option<Received>, QueueError> {
        let inner = self.handle.inner.clone();
        loop {
            let active = match &mut self.active {
                Some(active) => active,
                None => {
                    let Some(live) = inner.live_or_closed().await else {
                        return Ok(None);
                    };
                    match self.start(&live).await {
                        Ok(active) => {
                            if self.failures > 0 {
                                tracing::info!(topic = %self.topic, "consuming again");
                            }
                            self.failures = 0;
                            self.active.insert(active)
                        }
                        Err(error) => {
                            self.failures += 1;
                            let delay = inner
                                .backoff()
                                .nth(self.failures.min(16) as usize)
                                .unwrap_or(inner.config.max_reconnect_delay);
                            tracing::warn!(topic = %self.topic, %error, ?delay, "could not start consuming; retrying");
                            inner.nudge.notify_one();
                            if inner.pause(delay).await {
                                return Ok(None);
                            }
                            continue;
                        }
                    }
                }
            };
            let replaced = inner.gone(active.generation);
            let generation = active.generation;
            tokio::select! {
                item = active.consumer.next() => match item {
                    Some(Ok(delivery)) => return Ok(Some(self.received(delivery, generation))),
                    Some(Err(error)) => {
                        tracing::warn!(topic = %self.topic, %error, "consumer failed; will consume again");
                        inner.nudge.notify_one();
                        self.active = None;
                    }
                    None => {
                        tracing::info!(topic = %self.topic, "consumer cancelled; will consume again");
                        inner.nudge.notify_one();
                        self.active = None;
                    }
                },
                _ = replaced => {
                    self.active = None;
                }
            }
            if inner.is_closed() {
                return Ok(None);
            }
        }
    }
}

/// Settles one delivery: ack, copy to a retry tier, or copy to the dead-letter queue.
struct AmqpSettle {
    handle: Arc<Handle>,
    topic: Topic,
    generation: u64,
    acker: Acker,
    payload: Vec<u8>,
    attempt: u32,
}

impl AmqpSettle {
    async fn ack_now(&self, what: &str) {
        let op = self.acker.ack(BasicAckOptions::default());
        let outcome = self
            .handle
            .inner
            .on_link(self.generation, OP_TIMEOUT, op)
            .await;
        self.log_outcome(what, outcome);
    }

    async fn nack_now(&self, requeue: bool) {
        let op = self.acker.nack(BasicNackOptions {
            requeue,
            ..BasicNackOptions::default()
        });
        let outcome = self
            .handle
            .inner
            .on_link(self.generation, OP_TIMEOUT, op)
            .await;
        self.log_outcome("nack", outcome);
    }

    fn log_outcome(&self, what: &str, outcome: Option<lapin::Result<bool>>) {
        match outcome {
            Some(Ok(true)) => {}
            None | Some(Ok(false)) => tracing::info!(
                topic = %self.topic,
                "{what} not sent: the message came on a connection that is gone; it will be redelivered"
            ),
            Some(Err(error)) => tracing::warn!(
                topic = %self.topic,
                %error,
                "{what} failed; the message will be redelivered"
            ),
        }
    }

    /// Publishes a copy on the connection the message came from (if that one is gone, the
    /// original is redelivered anyway and a copy would only be a duplicate).
    async fn copy(
        &self,
        exchange: &ShortString,
        routing_key: &ShortString,
        headers: FieldTable,
    ) -> Result<(), String> {
        let inner = &self.handle.inner;
        let live = inner
            .current()
            .filter(|l| l.generation == self.generation && !self.acker.poisoned())
            .ok_or_else(|| "the connection the message came on is gone".to_owned())?;
        let sent = publish_confirmed(&live, exchange, routing_key, &self.payload, headers);
        match inner
            .on_link(self.generation, inner.config.publish_timeout, sent)
            .await
        {
            Some(Ok(())) => Ok(()),
            Some(Err(failure)) => {
                if matches!(failure, PublishFailure::Link(_)) {
                    inner.nudge.notify_one();
                }
                Err(failure.to_string())
            }
            None => Err("connection lost or no confirm in time".to_owned()),
        }
    }
}

fn headers(entries: Vec<(&str, AMQPValue)>) -> FieldTable {
    let mut table = FieldTable::default();
    for (k, v) in entries {
        table.insert(k.into(), v);
    }
    table
}

#[async_trait]
impl Settle for AmqpSettle {
    async fn ack(self: Box<Self>) {
        self.ack_now("ack").await;
    }

    async fn retry_later(self: Box<Self>, delay: Duration) {
        let tier = RetryTier::closest(delay);
        let names = self.handle.inner.topology.names(self.topic);
        let next_attempt = i64::from(self.attempt).saturating_add(1);
        let copied = self
            .copy(
                &ShortString::from(""),
                names.retry(tier),
                headers(vec![(ATTEMPT_HEADER, AMQPValue::LongLongInt(next_attempt))]),
            )
            .await;
        match copied {
            Ok(()) => {
                tracing::debug!(topic = %self.topic, attempt = self.attempt, ?delay, tier = ?tier.delay(), "retrying later");
                self.ack_now("ack after scheduling a retry").await;
            }
            Err(error) => {
                tracing::warn!(topic = %self.topic, %error, "could not schedule a retry; returning the message to its queue");
                self.nack_now(true).await;
            }
        }
    }

    async fn reject(self: Box<Self>, reason: String) {
        let inner = &self.handle.inner;
        let names = inner.topology.names(self.topic);
        let table = headers(vec![
            (REASON_HEADER, AMQPValue::LongString(reason.clone().into())),
            (
                ATTEMPT_HEADER,
                AMQPValue::LongLongInt(i64::from(self.attempt)),
            ),
            (
                TOPIC_HEADER,
                AMQPValue::LongString(self.topic.name().into()),
            ),
        ]);
        match self.copy(&inner.topology.dlx, &names.queue, table).await {
            Ok(()) => {
                tracing::warn!(topic = %self.topic, attempt = self.attempt, %reason, "message dead-lettered");
                self.ack_now("ack after dead-lettering").await;
            }
            Err(error) => {
                // Let the broker dead-letter it (without the reason, which is logged here).
                tracing::error!(topic = %self.topic, %error, %reason, "could not dead-letter with a reason; dead-lettering without it");
                self.nack_now(false).await;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_never_show() {
        let cfg = AmqpConfig::new("amqp://guest:s3cret@127.0.0.1:5672/%2f");
        assert_eq!(cfg.redacted_url(), "amqp://guest:***@127.0.0.1:5672/%2f");
        assert!(!format!("{cfg:?}").contains("s3cret"));
        let odd = AmqpConfig::new("amqps://u:p@w/x@host/vh?x=1");
        assert_eq!(odd.redacted_url(), "amqps://u:***@host/vh?x=1");
    }

    #[tokio::test]
    async fn a_missing_broker_fails_fast_with_the_url_and_no_password() {
        // Port 1 on loopback: nothing listens there, connections are refused at once.
        let mut cfg = AmqpConfig::new("amqp://guest:s3cret@127.0.0.1:1/%2f");
        cfg.connect_timeout = Duration::from_millis(800);
        let started = std::time::Instant::now();
        let err = AmqpQueue::connect(cfg).await.expect_err("no broker there");
        assert!(started.elapsed() < Duration::from_secs(5));
        let msg = err.to_string();
        assert!(msg.contains("amqp://guest:***@127.0.0.1:1/%2f"), "{msg}");
        assert!(!msg.contains("s3cret"), "{msg}");
    }
}
