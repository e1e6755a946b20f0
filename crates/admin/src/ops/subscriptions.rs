//! A subscriber's access, extended or ended by an admin.

use chrono::Utc;
use jobwire_store::AccessPeriodRow;

use super::{Actor, ChatId, OpError};
use crate::state::AdminState;

/// The most days one extension adds.
pub const MAX_EXTEND_DAYS: u32 = 366;

impl AdminState {
    /// Adds `days` (1 to [`MAX_EXTEND_DAYS`]) of access to a subscriber.
    pub async fn extend_access(
        &self,
        actor: &Actor,
        chat: ChatId,
        days: u32,
    ) -> Result<AccessPeriodRow, OpError> {
        let ChatId(chat_id) = chat;
        if !(1..=MAX_EXTEND_DAYS).contains(&days) {
            return Err(OpError::BadInput(format!(
                "days: a whole number from 1 to {MAX_EXTEND_DAYS} (got {days})"
            )));
        }
        self.store
            .subscriber_by_chat(chat_id)
            .await?
            .ok_or_else(|| OpError::NotFound(format!("no subscriber {chat_id}")))?;
        let period = self.store.extend_access(chat_id, days, Utc::now()).await?;
        self.audit(
            actor,
            "subscription.extend",
            &format!("chat {chat_id}"),
            &format!(
                "+{days} days, {} until {}",
                period.plan_id,
                period.ends_at.format("%Y-%m-%d %H:%M")
            ),
        )
        .await;
        Ok(period)
    }

    /// Ends a subscriber's current and coming periods now; returns how many.
    pub async fn end_access(&self, actor: &Actor, chat: ChatId) -> Result<u64, OpError> {
        let ChatId(chat_id) = chat;
        let n = self.store.end_access(chat_id, Utc::now()).await?;
        if n == 0 {
            return Err(OpError::Conflict(
                "there is no current or coming period to end".to_owned(),
            ));
        }
        self.audit(
            actor,
            "subscription.end",
            &format!("chat {chat_id}"),
            &format!("{n} periods revoked"),
        )
        .await;
        Ok(n)
    }
}
