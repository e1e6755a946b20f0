//! Dead letters kept where an operator can see them, in both modes: [`WithDeadLetters`]
//! wraps any [`Queue`] so that a message its consumer gives up on (rejects) is handed by
//! [`Received::reject`] to a [`DeadLetterSink`] (jobwire's store: the `dead_letters` table, shown by `jobwire report`)
//! before the backend settles it as before (RabbitMQ's dead-letter queue; a log line in
//! memory).

use std::fmt;
use std::sync::Arc;

use async_trait::async_trait;

use crate::{Queue, QueueError, Received, Subscription, Topic};

/// `jobwire_dead_letters_total{topic}`: messages moved to the dead letters. Recorded by every
/// crate that keeps one (recovery, intake's posts the store refuses); described with the
/// binary's metrics.
pub const DEAD_LETTERS_TOTAL: &str = "jobwire_dead_letters_total";

/// Where rejected messages are kept.
#[async_trait]
pub trait DeadLetterSink: Send + Sync {
    /// Keeps one message (as published), with how many times it was handed out and why it
    /// failed for good. An error is logged by the caller; the message is still settled.
    async fn keep(
        &self,
        topic: Topic,
        payload: &[u8],
        attempts: u32,
        reason: &str,
    ) -> Result<(), String>;
}

/// A [`Queue`] whose rejected messages also go to a [`DeadLetterSink`].
pub struct WithDeadLetters {
    inner: Arc<dyn Queue>,
    sink: Arc<dyn DeadLetterSink>,
}

impl WithDeadLetters {
    pub fn new(inner: Arc<dyn Queue>, sink: Arc<dyn DeadLetterSink>) -> Self {
        Self { inner, sink }
    }
}

impl fmt::Debug for WithDeadLetters {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WithDeadLetters")
            .field("inner", &self.inner)
            .finish_non_exhaustive()
    }
}

#[async_trait]
impl Queue for WithDeadLetters {
    async fn publish(&self, topic: Topic, payload: Vec<u8>) -> Result<(), QueueError> {
        self.inner.publish(topic, payload).await
    }

    async fn subscribe(&self, topic: Topic) -> Result<Box<dyn Subscription>, QueueError> {
        Ok(Box::new(Sub {
            inner: self.inner.subscribe(topic).await?,
            sink: self.sink.clone(),
        }))
    }

    async fn depth(&self, topic: Topic) -> Option<u64> {
        self.inner.depth(topic).await
    }
}

struct Sub {
    inner: Box<dyn Subscription>,
    sink: Arc<dyn DeadLetterSink>,
}

#[async_trait]
impl Subscription for Sub {
    async fn next(&mut self) -> Result<Option<Received>, QueueError> {
        let msg = self.inner.next().await?;
        Ok(msg.map(|m| m.keep_rejected_in(self.sink.clone())))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::sync::Mutex;

    use super::*;
    use crate::MemoryQueue;

    /// topic, payload, attempts, reason.
    type Letter = (Topic, Vec<u8>, u32, String);

    #[derive(Default)]
    struct Kept(Mutex<Vec<Letter>>);

    #[async_trait]
    impl DeadLetterSink for Kept {
        async fn keep(&self, t: Topic, p: &[u8], a: u32, r: &str) -> Result<(), String> {
            if let Ok(mut k) = self.0.lock() {
                k.push((t, p.to_vec(), a, r.to_owned()));
            }
            Ok(())
        }
    }

    #[tokio::test]
    async fn a_rejected_message_is_kept_with_its_reason_and_others_are_not() {
        let kept = Arc::new(Kept::default());
        let queue = WithDeadLetters::new(Arc::new(MemoryQueue::new()), kept.clone());
        let mut sub = queue.subscribe(Topic::Classify).await.unwrap();
        queue
            .publish(Topic::Classify, b"{\"v\":1}".to_vec())
            .await
            .unwrap();
        queue
            .publish(Topic::Classify, b"{\"v\":2}".to_vec())
            .await
            .unwrap();
        let first = sub.next().await.unwrap().unwrap();
        first.ack().await;
        let second = sub.next().await.unwrap().unwrap();
        second.reject("the post vanished".to_owned()).await;

        let kept = kept.0.lock().unwrap();
        assert_eq!(kept.len(), 1, "only the rejected message is kept");
        let (topic, payload, attempts, reason) = &kept[0];
        assert_eq!(*topic, Topic::Classify);
        assert_eq!(payload, b"{\"v\":2}");
        assert_eq!((*attempts, reason.as_str()), (1, "the post vanished"));
    }
}
