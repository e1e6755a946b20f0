//! Publishing with publisher confirms: one confirmed publish, and the publish of
//! [`Queue::publish`](crate::Queue::publish) that re-sends across reconnects.

use std::fmt;

use lapin::options::BasicPublishOptions;
use lapin::types::{FieldTable, ShortString};
use lapin::{BasicProperties, Confirmation};
use tokio::time::Instant;

use super::link::{Inner, Live};
use crate::{QueueError, Topic};

/// Why a publish did not go through.
#[derive(Debug)]
pub(super) enum PublishFailure {
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

/// Publishes one persistent, mandatory message and waits for the broker's confirm.
pub(super) async fn publish_confirmed(
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

impl Inner {
    /// Publishes `payload` to `topic` and waits for the broker's confirm, re-sending on the
    /// next connection when the link fails first, until the publish timeout.
    pub(super) async fn publish(&self, topic: Topic, payload: Vec<u8>) -> Result<(), QueueError> {
        let queue = &self.topology.names(topic).queue;
        let deadline = Instant::now() + self.config.publish_timeout;
        let default_exchange = ShortString::from("");
        let mut min_generation = 0;
        loop {
            let live = self.live_after(topic, min_generation, deadline).await?;
            let sent = publish_confirmed(
                &live,
                &default_exchange,
                queue,
                &payload,
                FieldTable::default(),
            );
            let left = deadline.saturating_duration_since(Instant::now());
            match self.on_link(live.generation, left, sent).await {
                Some(Ok(())) => return Ok(()),
                Some(Err(PublishFailure::Link(error))) => {
                    if self.is_closed() {
                        return Err(QueueError::Closed { topic });
                    }
                    tracing::debug!(%topic, %error, "publish not confirmed; re-sending after reconnect");
                    self.nudge.notify_one();
                    min_generation = live.generation + 1;
                }
                Some(Err(failure)) => {
                    return Err(QueueError::Backend(format!(
                        "publish to {queue} failed: {failure}"
                    )));
                }
                None if self.is_closed() => return Err(QueueError::Closed { topic }),
                None if Instant::now() < deadline => {
                    tracing::debug!(%topic, "connection lost before the confirm; re-sending after reconnect");
                    min_generation = live.generation + 1;
                }
                None => {
                    return Err(QueueError::Backend(format!(
                        "publish to {queue} not confirmed within {:?}",
                        self.config.publish_timeout
                    )));
                }
            }
        }
    }
}
