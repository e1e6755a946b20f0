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
use jobwire_store::{BillingStore, DeliveryStore, PlacementStore};

pub use config::{PlacementsConfig, PlacementsSection, PublishFn, card};

use crate::BotError;
use crate::alerts::Alerts;
use crate::categories::Categories;
use crate::dialogue::DialogueStore;
use crate::turn::Turn;

/// The stores the placements room reads and writes.
pub(crate) struct PlacementStores {
    /// The drafts and their way to publication.
    pub placements: Arc<dyn PlacementStore>,
    /// Invoices and the ledger (payments and refunds).
    pub billing: Arc<dyn BillingStore>,
    /// How many a published placement reached.
    pub deliveries: Arc<dyn DeliveryStore>,
}

/// What the placements room works with.
pub(crate) struct Placements {
    store: Arc<dyn PlacementStore>,
    billing: Arc<dyn BillingStore>,
    deliveries: Arc<dyn DeliveryStore>,
    dialogues: Arc<dyn DialogueStore>,
    /// The categories offered, their names and order.
    categories: Arc<Categories>,
    /// `None`: placements are off (what was paid before is still settled and refunded).
    config: Option<PlacementsConfig>,
    alerts: Alerts,
    clock: Arc<dyn Clock>,
}

impl std::fmt::Debug for Placements {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Placements")
            .field("config", &self.config)
            .field("categories", &self.categories)
            .finish_non_exhaustive()
    }
}

impl Placements {
    pub(crate) fn new(
        stores: PlacementStores,
        dialogues: Arc<dyn DialogueStore>,
        categories: Arc<Categories>,
        config: Option<PlacementsConfig>,
        alerts: Alerts,
        clock: Arc<dyn Clock>,
    ) -> Self {
        Self {
            store: stores.placements,
            billing: stores.billing,
            deliveries: stores.deliveries,
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
