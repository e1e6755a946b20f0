//! Broadcasts: started (checked with Telegram's HTML parser, the audience resolved, the
//! recipients stored; the send stage sends them and survives restarts), paused, resumed,
//! canceled; asking for a retraining.

use chrono::Utc;
use jobwire_store::{BroadcastRow, BroadcastStatus};

use super::{Actor, BroadcastId, OpError};
use crate::broadcasts::{Audience, BroadcastError};
use crate::state::AdminState;

/// What an admin does to a broadcast under way.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BroadcastAction {
    Pause,
    Resume,
    /// Stops it for good (what has not been sent is not sent).
    Cancel,
}

impl BroadcastAction {
    /// `pause`, `resume`, `cancel` (the API's path segment, the panel's button).
    pub fn parse(raw: &str) -> Option<Self> {
        match raw {
            "pause" => Some(Self::Pause),
            "resume" => Some(Self::Resume),
            "cancel" => Some(Self::Cancel),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pause => "pause",
            Self::Resume => "resume",
            Self::Cancel => "cancel",
        }
    }

    fn status(self) -> BroadcastStatus {
        match self {
            Self::Pause => BroadcastStatus::Paused,
            Self::Resume => BroadcastStatus::Running,
            Self::Cancel => BroadcastStatus::Canceled,
        }
    }
}

impl AdminState {
    fn broadcast_setup_or_unavailable(
        &self,
    ) -> Result<&crate::broadcasts::BroadcastSetup, OpError> {
        self.broadcasts.as_ref().ok_or_else(|| {
            OpError::Unavailable("broadcasts are not available in this process".to_owned())
        })
    }

    /// What a broadcast would be, without starting it: the message as its readers see it
    /// (page HTML written from what Telegram's HTML parser finds in it, see
    /// [`crate::tg_preview`]) and how many chats it reaches.
    pub async fn preview_broadcast(
        &self,
        text: &str,
        audience: &Audience,
    ) -> Result<(String, usize), OpError> {
        let setup = self.broadcast_setup_or_unavailable()?;
        let bad = |e: BroadcastError| match e {
            BroadcastError::Store(e) => OpError::Store(e),
            other => OpError::BadInput(other.to_string()),
        };
        crate::broadcasts::check_html(text).map_err(bad)?;
        let shown = crate::tg_preview::render(text).map_err(OpError::BadInput)?;
        let reached = crate::broadcasts::recipients(setup, &self.store, audience)
            .await
            .map_err(bad)?;
        Ok((shown, reached.len()))
    }

    /// Checks the message and the audience and starts the broadcast.
    pub async fn start_broadcast(
        &self,
        actor: &Actor,
        text: &str,
        audience: &Audience,
    ) -> Result<BroadcastRow, OpError> {
        let setup = self.broadcast_setup_or_unavailable()?;
        let b = crate::broadcasts::create(setup, &self.store, text, audience)
            .await
            .map_err(|e| match e {
                BroadcastError::Store(e) => OpError::Store(e),
                other => OpError::BadInput(other.to_string()),
            })?;
        self.audit(
            actor,
            "broadcast.start",
            &format!("broadcast {}", b.id),
            &format!("{} recipients, {}", b.progress.total(), audience.to_json()),
        )
        .await;
        Ok(b)
    }

    /// Pauses, resumes or cancels a broadcast; one in that state already is a conflict.
    pub async fn steer_broadcast(
        &self,
        actor: &Actor,
        id: BroadcastId,
        action: BroadcastAction,
    ) -> Result<BroadcastRow, OpError> {
        let store = &self.store;
        if !store
            .set_broadcast_status(id, action.status(), Utc::now())
            .await?
        {
            return Err(match store.broadcast(id, Utc::now()).await? {
                None => OpError::NotFound(format!("no broadcast {id}")),
                Some(b) => {
                    OpError::Conflict(format!("broadcast {id} is {} already", b.status.as_str()))
                }
            });
        }
        let b = store
            .broadcast(id, Utc::now())
            .await?
            .ok_or_else(|| OpError::NotFound(format!("no broadcast {id}")))?;
        self.audit(
            actor,
            &format!("broadcast.{}", action.as_str()),
            &format!("broadcast {id}"),
            "",
        )
        .await;
        Ok(b)
    }

    /// Asks the classifier processes to retrain now.
    pub async fn request_retrain(&self, actor: &Actor) -> Result<(), OpError> {
        jobwire_classify::retrain::request_retrain(self.store.as_ref()).await?;
        self.audit(actor, "model.retrain", "local model", "").await;
        Ok(())
    }
}
