//! The in-process queue of the embedded mode: one MPMC channel per topic. The send topic
//! is bounded ([`SEND_CAPACITY`]): fan-out of a large audience waits for the senders instead
//! of queueing every delivery in memory; the other topics are unbounded.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;

use crate::{Queue, QueueError, Received, Settle, Subscription, Topic};

/// Messages the send topic holds before a publish waits for a consumer: as many deliveries
/// as a send stage takes in flight by default (16,384) in the fan-out's runs of
/// [`crate::wire::MAX_DELIVERY_BATCH`], so the senders never run dry.
pub const SEND_CAPACITY: usize = 16_384 / crate::wire::MAX_DELIVERY_BATCH;

#[derive(Debug)]
struct Channel {
    tx: async_channel::Sender<(Vec<u8>, u32)>,
    rx: async_channel::Receiver<(Vec<u8>, u32)>,
}

/// In-process queue. Cloning shares the same channels.
#[derive(Debug, Clone)]
pub struct MemoryQueue {
    channels: Arc<HashMap<Topic, Channel>>,
}

impl Default for MemoryQueue {
    fn default() -> Self {
        Self::new()
    }
}

impl MemoryQueue {
    pub fn new() -> Self {
        let channels = Topic::ALL
            .into_iter()
            .map(|t| {
                let (tx, rx) = if t == Topic::Send {
                    async_channel::bounded(SEND_CAPACITY)
                } else {
                    async_channel::unbounded()
                };
                (t, Channel { tx, rx })
            })
            .collect();
        Self {
            channels: Arc::new(channels),
        }
    }

    fn channel(&self, topic: Topic) -> Result<&Channel, QueueError> {
        self.channels
            .get(&topic)
            .ok_or(QueueError::Closed { topic })
    }

    /// Closes every topic: subscriptions drain what is queued, then end.
    pub fn close(&self) {
        for ch in self.channels.values() {
            ch.tx.close();
        }
    }
}

#[async_trait]
impl Queue for MemoryQueue {
    async fn publish(&self, topic: Topic, payload: Vec<u8>) -> Result<(), QueueError> {
        self.channel(topic)?
            .tx
            .send((payload, 0))
            .await
            .map_err(|_| QueueError::Closed { topic })
    }

    async fn subscribe(&self, topic: Topic) -> Result<Box<dyn Subscription>, QueueError> {
        let ch = self.channel(topic)?;
        Ok(Box::new(MemorySubscription {
            topic,
            tx: ch.tx.clone(),
            rx: ch.rx.clone(),
        }))
    }

    async fn depth(&self, topic: Topic) -> Option<u64> {
        self.channel(topic).ok().map(|c| c.rx.len() as u64)
    }
}

struct MemorySubscription {
    topic: Topic,
    tx: async_channel::Sender<(Vec<u8>, u32)>,
    rx: async_channel::Receiver<(Vec<u8>, u32)>,
}

#[async_trait]
impl Subscription for MemorySubscription {
    async fn next(&mut self) -> Result<Option<Received>, QueueError> {
        match self.rx.recv().await {
            Ok((payload, attempt)) => {
                let settle = MemorySettle {
                    topic: self.topic,
                    tx: self.tx.clone(),
                    payload: payload.clone(),
                    attempt,
                };
                Ok(Some(Received::new(
                    self.topic,
                    payload,
                    attempt,
                    Box::new(settle),
                )))
            }
            Err(_) => Ok(None),
        }
    }
}

struct MemorySettle {
    topic: Topic,
    tx: async_channel::Sender<(Vec<u8>, u32)>,
    payload: Vec<u8>,
    attempt: u32,
}

#[async_trait]
impl Settle for MemorySettle {
    async fn ack(self: Box<Self>) {}

    async fn retry_later(self: Box<Self>, delay: Duration) {
        let MemorySettle {
            tx,
            payload,
            attempt,
            topic,
        } = *self;
        tokio::spawn(async move {
            tokio::time::sleep(delay).await;
            if tx.send((payload, attempt + 1)).await.is_err() {
                tracing::debug!(%topic, "queue closed before a retried message was re-queued");
            }
        });
    }

    async fn reject(self: Box<Self>, reason: String) {
        // No dead-letter queue in memory: wrapped in `WithDeadLetters` (as the pipeline does)
        // the message is kept in the store's `dead_letters` table before this is called.
        tracing::warn!(topic = %self.topic, attempt = self.attempt, %reason, "message rejected");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::PostReady;

    #[tokio::test]
    async fn competing_consumers_share_messages_and_retries_come_back() {
        let q = MemoryQueue::new();
        let mut a = q.subscribe(Topic::Classify).await.expect("subscribe");
        let mut b = q.subscribe(Topic::Classify).await.expect("subscribe");
        for id in 0..4 {
            crate::publish(&q, &PostReady::new(id))
                .await
                .expect("publish");
        }
        let mut seen = Vec::new();
        for _ in 0..2 {
            let m = a.next().await.expect("ok").expect("message");
            seen.push(m.decode::<PostReady>().expect("decode").post_id.get());
            m.ack().await;
            let m = b.next().await.expect("ok").expect("message");
            seen.push(m.decode::<PostReady>().expect("decode").post_id.get());
            if seen.len() == 2 {
                m.retry_later(Duration::from_millis(1)).await;
            } else {
                m.ack().await;
            }
        }
        let again = a.next().await.expect("ok").expect("retried message");
        assert_eq!(again.attempt, 1);
        seen.sort();
        assert_eq!(seen, vec![0, 1, 2, 3]);
        assert_eq!(q.depth(Topic::Classify).await, Some(0));
        q.close();
        assert!(a.next().await.expect("ok").is_none());
    }

    #[tokio::test]
    async fn a_delivery_message_naming_more_than_a_run_is_refused() {
        use crate::wire::{DeliveryReady, MAX_DELIVERY_BATCH};
        let q = MemoryQueue::new();
        let mut sub = q.subscribe(Topic::Send).await.expect("subscribe");
        let ids = |n: usize| {
            (2..=n as i64 + 1)
                .map(|i| i.to_string())
                .collect::<Vec<_>>()
                .join(",")
        };
        for payload in [
            format!(
                r#"{{"v":2,"delivery_id":1,"more":[{}]}}"#,
                ids(MAX_DELIVERY_BATCH)
            ),
            r#"{"v":1,"delivery_id":1,"more":[2]}"#.to_owned(),
            format!(
                r#"{{"v":2,"delivery_id":1,"more":[{}]}}"#,
                ids(MAX_DELIVERY_BATCH - 1)
            ),
        ] {
            q.publish(Topic::Send, payload.into_bytes())
                .await
                .expect("publish");
        }
        let m = sub.next().await.expect("ok").expect("message");
        let error = m
            .decode::<DeliveryReady>()
            .expect_err("65 deliveries refused");
        assert!(error.to_string().contains("names 65 deliveries"), "{error}");
        let m = sub.next().await.expect("ok").expect("message");
        let error = m.decode::<DeliveryReady>().expect_err("v1 names one");
        assert!(error.to_string().contains("version 1"), "{error}");
        let m = sub.next().await.expect("ok").expect("message");
        let full = m.decode::<DeliveryReady>().expect("a full run is read");
        assert_eq!(full.count(), MAX_DELIVERY_BATCH);
    }

    #[tokio::test]
    async fn a_message_from_a_newer_release_is_refused_not_guessed_at() {
        use crate::wire::{PostReady, WireMessage};
        const WIRE_VERSION: u16 = PostReady::MAX_VERSION;
        let q = MemoryQueue::new();
        let mut sub = q.subscribe(Topic::Classify).await.expect("subscribe");
        let newer = format!(r#"{{"v":{},"post_id":3}}"#, WIRE_VERSION + 1);
        q.publish(Topic::Classify, newer.into_bytes())
            .await
            .expect("publish");
        q.publish(Topic::Classify, br#"{"v":0,"post_id":4}"#.to_vec())
            .await
            .expect("publish");
        q.publish(Topic::Classify, br#"{"v":1,"post_id":5}"#.to_vec())
            .await
            .expect("publish");
        let m = sub.next().await.expect("ok").expect("message");
        let error = m.decode::<PostReady>().expect_err("newer version refused");
        assert!(
            error
                .to_string()
                .contains(&format!("wire version {}", WIRE_VERSION + 1)),
            "{error}"
        );
        let m = sub.next().await.expect("ok").expect("message");
        assert!(
            m.decode::<PostReady>().is_err(),
            "version 0 was never written"
        );
        let m = sub.next().await.expect("ok").expect("message");
        assert_eq!(
            m.decode::<PostReady>().expect("current version").post_id,
            jobwire_core::PostId(5)
        );
    }
}
