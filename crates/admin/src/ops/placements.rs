//! Employers' paid placements: approved, or refused with a reason the employer reads (the
//! main bot's placement task refunds a refused one within seconds).

use chrono::Utc;
use jobwire_store::PlacementRow;

use super::{Actor, OpError, PlacementId};
use crate::state::AdminState;

/// Longest refusal reason, in characters.
pub const MAX_REASON_CHARS: usize = 500;

/// An admin's decision on a placement waiting for approval.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    Approve,
    /// With the reason the employer is told (optional).
    Refuse {
        reason: Option<String>,
    },
}

impl AdminState {
    /// Decides a placement waiting for approval; a placement in any other state is a
    /// conflict. The reason is trimmed, at most [`MAX_REASON_CHARS`].
    pub async fn decide_placement(
        &self,
        actor: &Actor,
        id: PlacementId,
        decision: Decision,
    ) -> Result<PlacementRow, OpError> {
        let (approve, reason) = match decision {
            Decision::Approve => (true, None),
            Decision::Refuse { reason } => (
                false,
                reason
                    .map(|r| r.trim().to_owned())
                    .filter(|r| !r.is_empty()),
            ),
        };
        if reason
            .as_ref()
            .is_some_and(|r| r.chars().count() > MAX_REASON_CHARS)
        {
            return Err(OpError::BadInput(format!(
                "reason: at most {MAX_REASON_CHARS} characters"
            )));
        }
        let current = self
            .store
            .placement(id)
            .await?
            .ok_or_else(|| OpError::NotFound(format!("no placement {id}")))?;
        let decided = self
            .store
            .decide_placement(id, approve, reason.as_deref(), &actor.name, Utc::now())
            .await?
            .ok_or_else(|| {
                OpError::Conflict(format!(
                    "placement {id} is {}, not awaiting approval",
                    current.status.as_str()
                ))
            })?;
        let action = if approve {
            "placement.approve"
        } else {
            "placement.refuse"
        };
        self.audit(
            actor,
            action,
            &format!("placement {id}"),
            reason.as_deref().unwrap_or(""),
        )
        .await;
        tracing::info!(placement = id.get(), approve, "admin: placement decided");
        Ok(decided)
    }
}
