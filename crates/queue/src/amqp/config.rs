//! The settings of the RabbitMQ queue.

use std::fmt;
use std::time::Duration;

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
    /// The prefetch of the send topic's subscriptions, when it differs from `prefetch`
    /// (its messages name up to [`crate::wire::MAX_DELIVERY_BATCH`] deliveries each).
    /// Default `None`: `prefetch`.
    pub send_prefetch: Option<u16>,
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
    /// The `basic.qos` prefetch of a subscription to `topic`, in messages.
    pub fn prefetch_for(&self, topic: crate::Topic) -> u16 {
        match (topic, self.send_prefetch) {
            (crate::Topic::Send, Some(send)) => send,
            _ => self.prefetch,
        }
    }

    /// The defaults for the broker at `url`.
    pub fn new(url: impl Into<String>) -> Self {
        Self {
            url: url.into(),
            prefetch: 64,
            send_prefetch: None,
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
            .field("send_prefetch", &self.send_prefetch)
            .field("delivery_limit", &self.delivery_limit)
            .field("connect_timeout", &self.connect_timeout)
            .field("publish_timeout", &self.publish_timeout)
            .field("max_reconnect_delay", &self.max_reconnect_delay)
            .field("queue_prefix", &self.queue_prefix)
            .finish()
    }
}
