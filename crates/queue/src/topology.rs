//! The RabbitMQ topology of jobwire, declared in this one place.
//!
//! Per [`Topic`] (names shown without the configurable prefix, for `jobwire.classify`):
//!
//! ```text
//!                 publish (default exchange, routing key = queue name, mandatory, persistent)
//!                   │
//!                   ▼
//!   ┌────────── jobwire.classify ──────────┐  quorum, durable, x-delivery-limit = N,
//!   │   consumers: manual ack, prefetch     │  dead-letters to jobwire.dlx
//!   └───────────────────────────────────────┘
//!      │ retry_later(d)           │ reject(reason)            │ delivered more than N times
//!      ▼                          ▼                           ▼ (consumer crashed each time)
//!   jobwire.classify.retry.{1s,5s,30s,5m}   ──── jobwire.dlx (direct exchange) ────►
//!      quorum, x-message-ttl = tier,               jobwire.classify.dlq (quorum, durable)
//!      dead-letters back to                         routing key = jobwire.classify
//!      jobwire.classify via the default
//!      exchange when the TTL expires
//! ```
//!
//! **Delayed retry.** A message to be retried later is copied (persistent, with publisher
//! confirm) into one of a small, fixed set of *retry tiers* — 1 s, 5 s, 30 s and 5 min — and
//! then the original is acknowledged. Each tier is a queue with a queue-wide `x-message-ttl`
//! and no consumers; when a message expires it is dead-lettered back to the main queue.
//! Fixed tiers are used rather than one retry queue with per-message TTLs because RabbitMQ
//! only expires messages at the head of a queue: a 5-minute message at the head would hold
//! back a 1-second one behind it. Within a tier all TTLs are equal, so order is expiry order.
//! [`RetryTier::closest`] picks the tier closest to the requested delay on a logarithmic scale
//! (2 s → 1 s, 3 s → 5 s, 20 s → 30 s, 1 min → 30 s, 3 min → 5 min, an hour → 5 min): the
//! delay is a hint, and every consumer re-checks whatever made it retry.
//!
//! **Dead letters.** `reject(reason)` publishes a copy to the dead-letter exchange with the
//! headers `x-jobwire-reason`, `x-jobwire-attempt` and `x-jobwire-topic`, then acknowledges
//! the original, so the reason is kept next to the message. Messages that exceed the quorum
//! queue's `x-delivery-limit` (a consumer that crashes on them every time) are dead-lettered
//! by the broker itself into the same `.dlq`, with RabbitMQ's `x-death` header (reason
//! `delivery_limit`) instead of a jobwire reason.
//!
//! **Dead-lettering is RabbitMQ's default, at-most-once.** The quorum queues'
//! `at-least-once` strategy was tried and dropped: on RabbitMQ 3.10 (the broker this was
//! tested against) a burst of its per-queue worker crashes — deleting such queues shortly
//! after a broker restart triggers one — trips the restart intensity of
//! `rabbit_fifo_dlx_sup`, after which connections were refused with `INTERNAL_ERROR` and every
//! at-least-once queue is stuck (rabbitmq-server issue #16652, fix in PR #16672, still open).
//! At-most-once means a message *moving* between queues (retry tier → main queue, main queue
//! → `.dlq`) is lost if the broker dies at that instant. jobwire tolerates that by design: the
//! database row behind every message keeps its status, and re-drive finds it again.
//!
//! Main queues also set `x-overflow = reject-publish`: should an operator cap a queue's
//! length with a policy, publishers get a `nack` (an error) instead of the broker silently
//! dropping the oldest messages.
//!
//! Declaring is idempotent: it runs after every (re)connect. Changing an argument (such as
//! the delivery limit) of an existing queue makes the broker refuse the declaration
//! (`PRECONDITION_FAILED`); such a queue has to be deleted (or a new prefix used) first.

use std::time::Duration;

use lapin::options::{
    ExchangeDeclareOptions, ExchangeDeleteOptions, QueueBindOptions, QueueDeclareOptions,
    QueueDeleteOptions,
};
use lapin::types::{AMQPValue, FieldTable, LongString, ShortString};
use lapin::{Channel, ExchangeKind};

use crate::{QueueError, Topic};

/// Header carrying the number of times a message was retried by jobwire.
pub(crate) const ATTEMPT_HEADER: &str = "x-jobwire-attempt";
/// Header carrying the reason a message was rejected.
pub(crate) const REASON_HEADER: &str = "x-jobwire-reason";
/// Header carrying the topic a dead-lettered message came from.
pub(crate) const TOPIC_HEADER: &str = "x-jobwire-topic";
/// Header set by quorum queues: how many times a message was returned (nack, lost consumer).
pub(crate) const DELIVERY_COUNT_HEADER: &str = "x-delivery-count";

/// One of the fixed delays a message can be retried after.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RetryTier {
    S1,
    S5,
    S30,
    M5,
}

impl RetryTier {
    pub(crate) const ALL: [RetryTier; 4] = [Self::S1, Self::S5, Self::S30, Self::M5];

    pub(crate) fn delay(self) -> Duration {
        Duration::from_secs(match self {
            Self::S1 => 1,
            Self::S5 => 5,
            Self::S30 => 30,
            Self::M5 => 300,
        })
    }

    fn suffix(self) -> &'static str {
        match self {
            Self::S1 => "1s",
            Self::S5 => "5s",
            Self::S30 => "30s",
            Self::M5 => "5m",
        }
    }

    /// The tier closest to `delay` on a logarithmic scale (ties go to the longer tier).
    pub(crate) fn closest(delay: Duration) -> Self {
        let wanted = delay.as_secs_f64().max(0.001).ln();
        let mut best = Self::S1;
        let mut best_distance = f64::INFINITY;
        for tier in Self::ALL {
            let distance = (tier.delay().as_secs_f64().ln() - wanted).abs();
            if distance <= best_distance + 1e-9 {
                best = tier;
                best_distance = distance;
            }
        }
        best
    }
}

/// The names of everything declared for one topic.
#[derive(Debug, Clone)]
pub(crate) struct TopicNames {
    /// The main (work) queue.
    pub(crate) queue: ShortString,
    /// The dead-letter queue, `<queue>.dlq`.
    pub(crate) dlq: ShortString,
    /// The retry tiers, in [`RetryTier::ALL`] order.
    retry: [ShortString; 4],
}

impl TopicNames {
    pub(crate) fn retry(&self, tier: RetryTier) -> &ShortString {
        let idx = RetryTier::ALL
            .iter()
            .position(|t| *t == tier)
            .unwrap_or_default();
        &self.retry[idx]
    }

    fn all_queues(&self) -> impl Iterator<Item = &ShortString> {
        [&self.queue, &self.dlq]
            .into_iter()
            .chain(self.retry.iter())
    }
}

/// The whole topology for a queue prefix.
#[derive(Debug, Clone)]
pub(crate) struct Topology {
    /// The dead-letter exchange shared by all topics.
    pub(crate) dlx: ShortString,
    topics: [(Topic, TopicNames); 3],
    delivery_limit: u32,
}

fn short(s: String) -> Result<ShortString, QueueError> {
    ShortString::try_new(s.clone())
        .map_err(|_| QueueError::Backend(format!("AMQP name too long (max 255 bytes): {s}")))
}

fn table(entries: Vec<(&str, AMQPValue)>) -> FieldTable {
    let mut t = FieldTable::default();
    for (k, v) in entries {
        t.insert(k.into(), v);
    }
    t
}

fn long_str(s: &str) -> AMQPValue {
    AMQPValue::LongString(LongString::from(s))
}

impl Topology {
    /// Computes every name for `prefix`; fails when a name would exceed AMQP's 255 bytes.
    pub(crate) fn new(prefix: &str, delivery_limit: u32) -> Result<Self, QueueError> {
        let names = |topic: Topic| -> Result<(Topic, TopicNames), QueueError> {
            let queue = format!("{prefix}{}", topic.name());
            let retry = [
                short(format!("{queue}.retry.{}", RetryTier::S1.suffix()))?,
                short(format!("{queue}.retry.{}", RetryTier::S5.suffix()))?,
                short(format!("{queue}.retry.{}", RetryTier::S30.suffix()))?,
                short(format!("{queue}.retry.{}", RetryTier::M5.suffix()))?,
            ];
            Ok((
                topic,
                TopicNames {
                    dlq: short(format!("{queue}.dlq"))?,
                    queue: short(queue)?,
                    retry,
                },
            ))
        };
        Ok(Self {
            dlx: short(format!("{prefix}jobwire.dlx"))?,
            topics: [
                names(Topic::Classify)?,
                names(Topic::Fanout)?,
                names(Topic::Send)?,
            ],
            delivery_limit,
        })
    }

    /// The names of one topic's queues.
    pub(crate) fn names(&self, topic: Topic) -> &TopicNames {
        // `topics` holds every variant of `Topic`, so the fallback is never taken.
        self.topics
            .iter()
            .find(|(t, _)| *t == topic)
            .map_or(&self.topics[0].1, |(_, n)| n)
    }

    fn quorum(extra: Vec<(&str, AMQPValue)>) -> FieldTable {
        let mut entries = vec![("x-queue-type", long_str("quorum"))];
        entries.extend(extra);
        table(entries)
    }

    /// Declares the dead-letter exchange and every queue and binding of every topic.
    pub(crate) async fn declare_all(&self, channel: &Channel) -> lapin::Result<()> {
        channel
            .exchange_declare(
                self.dlx.clone(),
                ExchangeKind::Direct,
                ExchangeDeclareOptions {
                    durable: true,
                    ..ExchangeDeclareOptions::default()
                },
                FieldTable::default(),
            )
            .await?;
        for (topic, _) in &self.topics {
            self.declare_topic(channel, *topic).await?;
        }
        Ok(())
    }

    /// Declares one topic's queues and its dead-letter binding (the exchange must exist).
    pub(crate) async fn declare_topic(&self, channel: &Channel, topic: Topic) -> lapin::Result<()> {
        let names = self.names(topic);
        let durable = QueueDeclareOptions::durable();
        let main_args = Self::quorum(vec![
            (
                "x-delivery-limit",
                AMQPValue::LongLongInt(i64::from(self.delivery_limit)),
            ),
            ("x-dead-letter-exchange", long_str(self.dlx.as_str())),
            ("x-dead-letter-routing-key", long_str(names.queue.as_str())),
            ("x-overflow", long_str("reject-publish")),
        ]);
        channel
            .queue_declare(names.queue.clone(), durable, main_args)
            .await?;
        channel
            .queue_declare(names.dlq.clone(), durable, Self::quorum(vec![]))
            .await?;
        channel
            .queue_bind(
                names.dlq.clone(),
                self.dlx.clone(),
                names.queue.clone(),
                QueueBindOptions::default(),
                FieldTable::default(),
            )
            .await?;
        for tier in RetryTier::ALL {
            let ttl_ms = i64::try_from(tier.delay().as_millis()).unwrap_or(i64::MAX);
            let args = Self::quorum(vec![
                ("x-message-ttl", AMQPValue::LongLongInt(ttl_ms)),
                ("x-dead-letter-exchange", long_str("")),
                ("x-dead-letter-routing-key", long_str(names.queue.as_str())),
            ]);
            channel
                .queue_declare(names.retry(tier).clone(), durable, args)
                .await?;
        }
        Ok(())
    }

    /// Deletes every queue and the dead-letter exchange (used to clean up after tests).
    pub(crate) async fn delete_all(&self, channel: &Channel) -> lapin::Result<()> {
        for (_, names) in &self.topics {
            for queue in names.all_queues() {
                channel
                    .queue_delete(queue.clone(), QueueDeleteOptions::default())
                    .await?;
            }
        }
        channel
            .exchange_delete(self.dlx.clone(), ExchangeDeleteOptions::default())
            .await
    }
}

/// Reads an integer header, whatever integer type the sender used.
pub(crate) fn int_header(headers: Option<&FieldTable>, name: &str) -> Option<u64> {
    let value = headers?.inner().get(name)?;
    match value {
        AMQPValue::ShortShortInt(v) => u64::try_from(*v).ok(),
        AMQPValue::ShortShortUInt(v) => Some(u64::from(*v)),
        AMQPValue::ShortInt(v) => u64::try_from(*v).ok(),
        AMQPValue::ShortUInt(v) => Some(u64::from(*v)),
        AMQPValue::LongInt(v) => u64::try_from(*v).ok(),
        AMQPValue::LongUInt(v) => Some(u64::from(*v)),
        AMQPValue::LongLongInt(v) => u64::try_from(*v).ok(),
        AMQPValue::Timestamp(v) => Some(*v),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn closest_tier_is_chosen_on_a_log_scale() {
        let pick = |secs: f64| RetryTier::closest(Duration::from_secs_f64(secs));
        assert_eq!(pick(0.0), RetryTier::S1);
        assert_eq!(pick(1.0), RetryTier::S1);
        assert_eq!(pick(2.0), RetryTier::S1);
        assert_eq!(pick(3.0), RetryTier::S5);
        assert_eq!(pick(5.0), RetryTier::S5);
        assert_eq!(pick(20.0), RetryTier::S30);
        assert_eq!(pick(60.0), RetryTier::S30);
        assert_eq!(pick(180.0), RetryTier::M5);
        assert_eq!(pick(3600.0), RetryTier::M5);
    }

    #[test]
    fn names_follow_the_prefix_and_too_long_prefixes_are_refused() {
        let t = Topology::new("t1.", 10).expect("names fit");
        let n = t.names(Topic::Send);
        assert_eq!(n.queue.as_str(), "t1.jobwire.send");
        assert_eq!(n.dlq.as_str(), "t1.jobwire.send.dlq");
        assert_eq!(
            n.retry(RetryTier::S30).as_str(),
            "t1.jobwire.send.retry.30s"
        );
        assert_eq!(t.dlx.as_str(), "t1.jobwire.dlx");
        assert!(Topology::new(&"x".repeat(250), 10).is_err());
    }
}
