//! The admin's operations, each written once: add, disable or reset an account, accept or
//! reject a report, label, reclassify
//! or redeliver a post, approve or refuse a placement, refund a payment, extend or end a
//! subscriber's access, start and steer a broadcast, retry or discard a dead letter, ask
//! for a retraining. Each is a method of [`AdminState`] that takes typed ids and returns a
//! typed outcome or an [`OpError`], and writes its own audit entry (who, what, on what)
//! when it changes something. The JSON API ([`crate::api`]) and the panel
//! ([`crate::panel`]) are thin adapters: they parse a request, call one operation and show
//! its outcome.

mod accounts;
mod broadcasts;
mod dead_letters;
mod payments;
mod placements;
mod posts;
mod reports;
mod subscriptions;

pub use accounts::generate_password;
pub use broadcasts::BroadcastAction;
pub use payments::Refunded;
pub use placements::Decision;
pub use posts::{KINDS, Label, Labeled};

use chrono::Utc;
use jobwire_store::AdminRole;

use crate::state::AdminState;

/// Who does an operation: a panel account (its name and role) or the bearer token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Actor {
    pub name: String,
    pub role: AdminRole,
}

impl Actor {
    /// The bearer token of `JOBWIRE_ADMIN_TOKEN` (an admin's rights), as the audit names it.
    pub fn api_token() -> Self {
        Self {
            name: "api-token".to_owned(),
            role: AdminRole::Admin,
        }
    }
}

pub use jobwire_core::ids::{BroadcastId, DeadLetterId, PlacementId};

/// A subscriber's chat; a path segment `/subscribers/{chat}` reads as one (a bare number).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Deserialize)]
#[serde(transparent)]
pub struct ChatId(pub i64);

/// A payment's Telegram charge id (`telegram_payment_charge_id`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ChargeId(pub String);

/// Why an operation did not happen. The JSON API answers each with its status (404, 409,
/// 400, 503, 502, 500); the panel shows the message.
#[derive(Debug, thiserror::Error)]
pub enum OpError {
    /// What it names does not exist.
    #[error("{0}")]
    NotFound(String),
    /// It exists, but its state does not allow this (decided already, refunded before).
    #[error("{0}")]
    Conflict(String),
    /// What was asked is not valid (a label, a reason, a number of days).
    #[error("{0}")]
    BadInput(String),
    /// This process cannot do it (no main bot for refunds, no broadcast settings).
    #[error("{0}")]
    Unavailable(String),
    /// Telegram refused (its reason; never the bot's token).
    #[error("{0}")]
    Telegram(String),
    #[error("the database failed: {0}")]
    Store(#[from] jobwire_store::StoreError),
}

impl AdminState {
    /// Writes one audit entry; a failure is logged, not returned (the change is made).
    pub(crate) async fn audit(&self, actor: &Actor, action: &str, target: &str, detail: &str) {
        if let Err(e) = self
            .store
            .record_audit(&actor.name, action, target, detail, Utc::now())
            .await
        {
            tracing::error!(error = %e, %action, "admin: the audit log could not be written");
        }
    }
}
