//! The queue between jobwire's stages: one small trait, and the in-process implementation used
//! by the embedded mode.
//!
//! The database is the source of truth and the queue is only transport: every message names
//! a row (a post or a delivery) whose status was committed before the message was published,
//! so a message lost in a crash is found again by status when the process starts
//! ("re-drive"), and every consumer is idempotent. That is why the in-process queue can be a
//! plain channel: it loses its content on a crash and nothing is lost with it.
//!
//! **Architecture invariant:** stages see only [`Queue`], [`Subscription`] and the versioned
//! wire types of [`wire`]; which implementation runs is decided once, at start-up, from the
//! configured URL (`memory://` here; `amqp://` in the distributed mode).

mod amqp;
mod config;
mod dead_letters;
mod memory;
mod topology;
pub mod wire;

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;

pub use amqp::{AmqpConfig, AmqpQueue};
pub use config::{QueueConfig, QueueSection};
pub use dead_letters::{DEAD_LETTERS_TOTAL, DeadLetterSink, WithDeadLetters};
pub use memory::MemoryQueue;

/// The queues between the stages, in pipeline order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Topic {
    /// Posts that passed intake and wait for a classifier ([`wire::PostReady`]).
    Classify,
    /// Jobs that were classified and wait for fan-out ([`wire::JobReady`]).
    Fanout,
    /// Delivery rows that wait to be sent ([`wire::DeliveryReady`]).
    Send,
}

impl Topic {
    pub const ALL: [Topic; 3] = [Self::Classify, Self::Fanout, Self::Send];

    pub fn name(self) -> &'static str {
        match self {
            Self::Classify => "jobwire.classify",
            Self::Fanout => "jobwire.fanout",
            Self::Send => "jobwire.send",
        }
    }
}

impl fmt::Display for Topic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[derive(Debug, thiserror::Error)]
pub enum QueueError {
    #[error("queue {topic} is closed")]
    Closed { topic: Topic },
    #[error("message on {topic} is not a valid {expected}: {source}")]
    Decode {
        topic: Topic,
        expected: &'static str,
        #[source]
        source: serde_json::Error,
    },
    #[error("message on {topic} has wire version {found}; this build reads 1 to {supported}")]
    Version {
        topic: Topic,
        found: u16,
        supported: u16,
    },
    #[error("message on {topic} is not a {expected} jobwire writes: {reason}")]
    Malformed {
        topic: Topic,
        expected: &'static str,
        reason: String,
    },
    #[error("queue backend error: {0}")]
    Backend(String),
}

/// A queue backend: publishes to and subscribes from the [`Topic`]s.
#[async_trait]
pub trait Queue: Send + Sync + fmt::Debug {
    /// Publishes one message. Returns once the backend has taken responsibility for it.
    async fn publish(&self, topic: Topic, payload: Vec<u8>) -> Result<(), QueueError>;

    /// Starts consuming a topic. Several subscriptions to one topic share its messages
    /// (competing consumers), each message going to one of them.
    async fn subscribe(&self, topic: Topic) -> Result<Box<dyn Subscription>, QueueError>;

    /// Messages waiting in a topic, when the backend can tell.
    async fn depth(&self, topic: Topic) -> Option<u64>;
}

/// A consumer of one topic.
#[async_trait]
pub trait Subscription: Send {
    /// The next message; `None` once the queue was closed.
    async fn next(&mut self) -> Result<Option<Received>, QueueError>;
}

/// What happens to a message after its consumer is done with it.
#[async_trait]
pub trait Settle: Send {
    async fn ack(self: Box<Self>);
    async fn retry_later(self: Box<Self>, delay: Duration);
    async fn reject(self: Box<Self>, reason: String);
}

/// One received message. It must be settled: acknowledged once its result is stored,
/// retried later, or rejected (dead-lettered) with a reason.
pub struct Received {
    pub topic: Topic,
    pub payload: Vec<u8>,
    /// How many times this message was handed out before (0 on the first delivery).
    pub attempt: u32,
    settle: Box<dyn Settle>,
    /// Where a rejected message is kept before the backend settles it (see
    /// [`WithDeadLetters`]).
    dead_letters: Option<Arc<dyn DeadLetterSink>>,
}

impl fmt::Debug for Received {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Received")
            .field("topic", &self.topic)
            .field("bytes", &self.payload.len())
            .field("attempt", &self.attempt)
            .finish()
    }
}

impl Received {
    pub fn new(topic: Topic, payload: Vec<u8>, attempt: u32, settle: Box<dyn Settle>) -> Self {
        Self {
            topic,
            payload,
            attempt,
            settle,
            dead_letters: None,
        }
    }

    /// Decodes the payload as the wire type `T`. A message written by a newer release (its
    /// `v` above `T`'s [`wire::WireMessage::MAX_VERSION`]) is refused rather than guessed at: it is
    /// dead-lettered with its reason and can be replayed once every process is upgraded.
    pub fn decode<T: wire::WireMessage>(&self) -> Result<T, QueueError> {
        let message: T =
            serde_json::from_slice(&self.payload).map_err(|source| QueueError::Decode {
                topic: self.topic,
                expected: T::NAME,
                source,
            })?;
        match message.version() {
            v if (1..=T::MAX_VERSION).contains(&v) => match message.malformed() {
                None => Ok(message),
                Some(reason) => Err(QueueError::Malformed {
                    topic: self.topic,
                    expected: T::NAME,
                    reason,
                }),
            },
            found => Err(QueueError::Version {
                topic: self.topic,
                found,
                supported: T::MAX_VERSION,
            }),
        }
    }

    /// Keeps the message in `sink` if it is rejected.
    pub fn keep_rejected_in(mut self, sink: Arc<dyn DeadLetterSink>) -> Self {
        self.dead_letters = Some(sink);
        self
    }

    pub async fn ack(self) {
        self.settle.ack().await
    }

    pub async fn retry_later(self, delay: Duration) {
        self.settle.retry_later(delay).await
    }

    pub async fn reject(self, reason: String) {
        if let Some(sink) = &self.dead_letters {
            let attempts = self.attempt + 1;
            if let Err(error) = sink
                .keep(self.topic, &self.payload, attempts, &reason)
                .await
            {
                tracing::error!(topic = %self.topic, %error, %reason, "could not keep a dead letter; it is only logged");
            }
        }
        self.settle.reject(reason).await
    }
}

/// Publishes a wire message on its topic.
pub async fn publish<T: wire::WireMessage>(queue: &dyn Queue, msg: &T) -> Result<(), QueueError> {
    let payload = serde_json::to_vec(msg).map_err(|e| QueueError::Backend(e.to_string()))?;
    queue.publish(T::TOPIC, payload).await
}

/// Publishes `ids` as [`wire::DeliveryReady`] messages of up to
/// [`wire::MAX_DELIVERY_BATCH`] deliveries each, one after the other.
pub async fn publish_deliveries(
    queue: &dyn Queue,
    ids: &[jobwire_core::DeliveryId],
) -> Result<(), QueueError> {
    for message in wire::DeliveryReady::batches(ids) {
        publish(queue, &message).await?;
    }
    Ok(())
}

/// Opens the queue a URL names: `memory://` (in-process, [`MemoryQueue`]) or
/// `amqp://…` / `amqps://…` (RabbitMQ, [`AmqpQueue`] with the defaults of [`AmqpConfig::new`]).
pub async fn open(url: &str) -> Result<Arc<dyn Queue>, QueueError> {
    let scheme = url.split_once("://").map(|(s, _)| s.to_ascii_lowercase());
    match scheme.as_deref() {
        Some("memory") => Ok(Arc::new(MemoryQueue::new())),
        Some("amqp" | "amqps") => Ok(Arc::new(AmqpQueue::connect(AmqpConfig::new(url)).await?)),
        _ => Err(QueueError::Backend(format!(
            "unsupported queue URL {:?}: expected memory:// or amqp(s)://",
            AmqpConfig::new(url).redacted_url()
        ))),
    }
}

/// How many times a message is handed out before a consumer that keeps failing on it gives
/// up and dead-letters it.
pub const MAX_ATTEMPTS: u32 = 8;

/// Settles a message whose handling failed: retried later with a growing delay (1 s, 2 s,
/// 4 s, … up to a minute), and dead-lettered with `reason` after [`MAX_ATTEMPTS`], so a
/// poison message does not hold up the others.
pub async fn retry_or_dead_letter(msg: Received, reason: &str) {
    if msg.attempt + 1 >= MAX_ATTEMPTS {
        let reason = format!("gave up after {} attempts: {reason}", msg.attempt + 1);
        msg.reject(reason).await
    } else {
        let delay = Duration::from_secs(1u64 << msg.attempt.min(6));
        msg.retry_later(delay).await
    }
}
