//! Settling a delivery: ack, a copy to a retry tier (retry later), or a copy to the
//! dead-letter queue with the reason (reject).

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use lapin::Acker;
use lapin::options::{BasicAckOptions, BasicNackOptions};
use lapin::types::{AMQPValue, FieldTable, ShortString};

use super::Handle;
use super::acks::Acks;
use super::link::OP_TIMEOUT;
use super::publish::{PublishFailure, publish_confirmed};
use crate::Settle;
use crate::Topic;
use crate::topology::{ATTEMPT_HEADER, REASON_HEADER, RetryTier, TOPIC_HEADER};

/// Settles one delivery: ack, copy to a retry tier, or copy to the dead-letter queue.
pub(super) struct AmqpSettle {
    pub(super) handle: Arc<Handle>,
    pub(super) topic: Topic,
    /// The connection the delivery came on.
    pub(super) generation: u64,
    /// The acks of the channel the delivery came on, sent in batches.
    pub(super) acks: Arc<Acks>,
    /// The delivery's tag on that channel.
    pub(super) tag: u64,
    pub(super) acker: Acker,
    pub(super) payload: Vec<u8>,
    pub(super) attempt: u32,
}

impl AmqpSettle {
    /// Acknowledges the delivery: noted for its channel's next batch of acks (see
    /// [`Acks`]), or sent at once when the subscription is gone.
    async fn ack_now(&self, what: &str) {
        let Err(acker) = self.acks.ack(self.tag, self.acker.clone()) else {
            return;
        };
        let op = acker.ack(BasicAckOptions::default());
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
        if matches!(outcome, Some(Ok(true))) {
            // Out of the way of the batched acks: no `multiple` ack covers it before this.
            self.acks.settled(self.tag);
        }
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
