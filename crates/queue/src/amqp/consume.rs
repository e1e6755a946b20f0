//! Consuming: a subscription that registers its consumer again on every new connection.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use async_trait::async_trait;
use futures::StreamExt;
use lapin::Consumer;
use lapin::options::{BasicConsumeOptions, BasicQosOptions};
use lapin::types::{FieldTable, ShortString};

use super::Handle;
use super::acks::Acks;
use super::link::{Live, OP_TIMEOUT};
use super::settle::AmqpSettle;
use crate::topology::{ATTEMPT_HEADER, DELIVERY_COUNT_HEADER, int_header};
use crate::{QueueError, Received, Subscription, Topic};

/// A consumer of one topic that re-consumes after reconnects.
pub(super) struct AmqpSubscription {
    handle: Arc<Handle>,
    topic: Topic,
    active: Option<Active>,
    failures: u32,
}

struct Active {
    generation: u64,
    consumer: Consumer,
    /// Sends this channel's acks in batches; it holds the channel open until it has sent
    /// the last of them.
    acks: Arc<Acks>,
}

impl Drop for Active {
    fn drop(&mut self) {
        self.acks.close();
    }
}

impl AmqpSubscription {
    /// A subscription to `topic`. It registers its consumer at once when a connection is up,
    /// so that the broker shares messages with it from here on; if that fails, `next` keeps
    /// trying.
    pub(super) async fn new(handle: Arc<Handle>, topic: Topic) -> Self {
        let mut subscription = AmqpSubscription {
            handle,
            topic,
            active: None,
            failures: 0,
        };
        if let Some(live) = subscription.handle.inner.current() {
            match subscription.start(&live).await {
                Ok(active) => subscription.active = Some(active),
                Err(error) => {
                    tracing::debug!(%topic, %error, "could not start consuming yet; will retry")
                }
            }
        }
        subscription
    }

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
            .basic_qos(
                inner.config.prefetch_for(self.topic),
                BasicQosOptions::default(),
            )
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
            acks: Acks::start(
                self.handle.inner.clone(),
                self.topic,
                live.generation,
                channel,
            ),
        })
    }

    fn received(
        &self,
        delivery: lapin::message::Delivery,
        generation: u64,
        acks: &Arc<Acks>,
    ) -> Received {
        let headers = delivery.properties.headers().as_ref();
        let retried = int_header(headers, ATTEMPT_HEADER).unwrap_or(0);
        let returned = int_header(headers, DELIVERY_COUNT_HEADER).unwrap_or(0);
        let attempt = u32::try_from(retried.saturating_add(returned)).unwrap_or(u32::MAX);
        acks.received(delivery.delivery_tag);
        let settle = AmqpSettle {
            handle: self.handle.clone(),
            topic: self.topic,
            generation,
            acks: acks.clone(),
            tag: delivery.delivery_tag,
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
            let acks = active.acks.clone();
            tokio::select! {
                item = active.consumer.next() => match item {
                    Some(Ok(delivery)) => return Ok(Some(self.received(delivery, generation, &acks))),
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
