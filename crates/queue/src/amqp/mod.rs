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
//!   acknowledged only when the caller settles the [`Received`](crate::Received). Acks are
//!   sent in batches (one `multiple` ack for a run of settled messages, see `acks.rs`), a
//!   few milliseconds after the settle returns; a message whose ack was lost with its
//!   connection is redelivered, as any unacknowledged one.
//! - **Survives broker restarts.** One background task owns the connection: when it breaks,
//!   the task reconnects forever with capped exponential backoff, declares the topology
//!   again and opens a fresh publisher channel. Publishes wait for it; subscriptions
//!   re-consume transparently. Messages received on the dead connection cannot be
//!   acknowledged any more (lapin "poisons" their ackers); settling them only logs, and the
//!   broker redelivers them. [`AmqpQueue::is_ready`] tells whether a connection is up.
//! - **Bounded first connect.** [`AmqpQueue::connect`] gives up after
//!   [`AmqpConfig::connect_timeout`] with an error naming the URL (without its password).
//!
//! A [`Received`](crate::Received) should be settled while its [`Subscription`] is alive:
//! dropping the subscription closes its channel, and whatever it did not settle goes back to
//! the queue.

mod acks;
mod config;
mod consume;
mod link;
mod publish;
mod settle;

use std::fmt;
use std::sync::Arc;

use async_trait::async_trait;
use lapin::options::QueueDeclareOptions;
use lapin::types::FieldTable;

pub use self::config::AmqpConfig;
use self::consume::AmqpSubscription;
use self::link::{Inner, OP_TIMEOUT};
use crate::{Queue, QueueError, Subscription, Topic};

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
/// The connection stays open while any clone, [`Subscription`] or unsettled
/// [`Received`](crate::Received) from it is alive, or until [`AmqpQueue::close`].
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
        let inner = Inner::start(config).await?;
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
        self.inner().publish(topic, payload).await
    }

    async fn subscribe(&self, topic: Topic) -> Result<Box<dyn Subscription>, QueueError> {
        if self.inner().is_closed() {
            return Err(QueueError::Closed { topic });
        }
        let subscription = AmqpSubscription::new(self.handle.clone(), topic).await;
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

#[cfg(test)]
mod tests;
