//! Dead letters: work put back where the scheduler publishes it again, or forgotten.

use jobwire_store::{DeadLetterRow, PostId};
use serde::Deserialize;

use super::{Actor, DeadLetterId, OpError};
use crate::state::AdminState;

/// What a dead letter's payload names (the queue's wire messages).
#[derive(Debug, Deserialize)]
struct Payload {
    post_id: Option<i64>,
    delivery_id: Option<i64>,
    /// The other deliveries a `DeliveryReady` of wire version 2 names.
    #[serde(default)]
    more: Vec<i64>,
}

impl AdminState {
    async fn dead_letter_or_404(&self, id: DeadLetterId) -> Result<DeadLetterRow, OpError> {
        self.store
            .dead_letter(id.0)
            .await?
            .ok_or_else(|| OpError::NotFound(format!("no dead letter {}", id.0)))
    }

    /// Puts a dead letter's work back where the scheduler publishes it again (a post to
    /// classify, a job to fan out, a delivery to send), then forgets the letter.
    pub async fn retry_dead_letter(
        &self,
        actor: &Actor,
        id: DeadLetterId,
    ) -> Result<DeadLetterRow, OpError> {
        let letter = self.dead_letter_or_404(id).await?;
        let id = id.0;
        let store = &self.store;
        let payload: Payload = serde_json::from_str(&letter.payload).map_err(|e| {
            OpError::BadInput(format!(
                "dead letter {id} holds no message jobwire can read: {e}"
            ))
        })?;
        let done = match (letter.topic.as_str(), payload.post_id, payload.delivery_id) {
            // Every delivery the message names; done when any of them goes back (the
            // others were sent, or cannot be sent again).
            (_, _, Some(d)) => {
                let mut any = false;
                for d in std::iter::once(d).chain(payload.more.iter().copied()) {
                    any |= store
                        .rewind_delivery(jobwire_store::DeliveryId::from(d))
                        .await?;
                }
                any
            }
            (topic, Some(p), None) if topic.ends_with("fanout") => {
                store.rewind_fanout(PostId::from(p)).await?
            }
            (_, Some(p), None) => store.requeue_post(PostId::from(p)).await?,
            _ => {
                return Err(OpError::BadInput(format!(
                    "dead letter {id} ({}) names no post or delivery",
                    letter.topic
                )));
            }
        };
        if !done {
            return Err(OpError::Conflict(format!(
                "dead letter {id}: its work is done already or cannot be sent again; discard it"
            )));
        }
        store.delete_dead_letter(id).await?;
        self.audit(
            actor,
            "dead_letter.retry",
            &format!("dead letter {id}"),
            &format!("{} {}", letter.topic, letter.payload),
        )
        .await;
        Ok(letter)
    }

    /// Forgets a dead letter.
    pub async fn discard_dead_letter(
        &self,
        actor: &Actor,
        id: DeadLetterId,
    ) -> Result<DeadLetterRow, OpError> {
        let letter = self.dead_letter_or_404(id).await?;
        self.store.delete_dead_letter(id.0).await?;
        self.audit(
            actor,
            "dead_letter.discard",
            &format!("dead letter {}", id.0),
            &format!("{}: {}", letter.topic, letter.reason),
        )
        .await;
        Ok(letter)
    }
}
