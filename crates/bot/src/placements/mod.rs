//! The placements room: employers' direct placements.
//!
//! * `draft` — the employer's dialogue in the main bot (`/post`): the questions, the
//!   categories, the preview with its price, the invoice;
//! * `payment` — the pre-checkout check and the payment, recorded once per charge;
//! * `publish` — after the payment, one loop per bot process: publishing paid placements
//!   as posts of the source `direct`, telling the employer the reach, refunding refused ones.

mod config;
mod draft;
mod payment;
mod publish;

use std::sync::Arc;

use chrono::{DateTime, Utc};
use jobwire_core::clock::Clock;
use jobwire_store::Store;

pub use config::{PlacementsConfig, PlacementsSection, PublishFn, card};

use crate::BotError;
use crate::alerts::Alerts;
use crate::categories::Categories;
use crate::dialogue::DialogueStore;
use crate::turn::Turn;

/// What the placements room works with.
#[derive(Debug)]
pub(crate) struct Placements {
    store: Arc<dyn Store>,
    dialogues: Arc<dyn DialogueStore>,
    /// The categories offered, their names and order.
    categories: Arc<Categories>,
    /// `None`: placements are off (what was paid before is still settled and refunded).
    config: Option<PlacementsConfig>,
    alerts: Alerts,
    clock: Arc<dyn Clock>,
}

impl Placements {
    pub(crate) fn new(
        store: Arc<dyn Store>,
        dialogues: Arc<dyn DialogueStore>,
        categories: Arc<Categories>,
        config: Option<PlacementsConfig>,
        alerts: Alerts,
        clock: Arc<dyn Clock>,
    ) -> Self {
        Self {
            store,
            dialogues,
            categories,
            config,
            alerts,
            clock,
        }
    }

    /// Whether employers may place vacancies now.
    pub(crate) fn on(&self) -> bool {
        self.config.is_some()
    }

    fn now(&self) -> DateTime<Utc> {
        self.clock.now()
    }

    /// Ends the chat's pending question.
    async fn end_dialogue(&self, turn: &Turn<'_>) -> Result<(), BotError> {
        crate::dialogue::end(self.dialogues.as_ref(), &turn.rt.name, turn.chat_id).await?;
        Ok(())
    }
}
