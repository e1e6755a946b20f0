//! The billing room: the main bot's shop and what follows a payment.
//!
//! * `shop` — `/plans`, `/buy <plan>`, the invoice (a Stars subscription link for 30-day
//!   plans, a one-time Stars invoice otherwise, a provider invoice on request), the trial,
//!   cancelling the renewal, `/paysupport` and `/terms`;
//! * `payment` — the pre-checkout check and the successful payment (applied once per
//!   charge, from an update or from reconciliation);
//! * `access` — the subscription's state as the menus show it ([`crate::access::Access`]);
//! * `reminders` — reminders before a period ends and the one expiry message after it,
//!   each claimed in the store first
//!   ([`jobwire_store::BillingStore::claim_billing_notice`]), so it goes out once whatever
//!   the number of processes and restarts.
//!
//! Refunds and reconciliation, shared with placements, are [`crate::payments`]'.

mod access;
mod config;
mod payment;
mod reminders;
mod shop;

use std::sync::Arc;

use chrono::{DateTime, Utc};
use jobwire_core::clock::Clock;
use jobwire_store::{BillingStore, DeliveryStore};

pub use crate::payments::refund_star_payment;
pub use config::{AlertFn, BillingConfig, BillingSection, PlanSection, ProviderConfig};

use crate::categories::Categories;
use crate::languages::Languages;

/// The stores the billing room reads and writes.
pub(crate) struct BillingStores {
    /// Invoices, the ledger, access periods, notices.
    pub billing: Arc<dyn BillingStore>,
    /// What the subscription brought (deliveries to a chat).
    pub deliveries: Arc<dyn DeliveryStore>,
}

/// What the billing room works with.
pub(crate) struct Billing {
    /// Invoices, the ledger, access periods, notices.
    store: Arc<dyn BillingStore>,
    /// What the subscription brought (deliveries to a chat).
    deliveries: Arc<dyn DeliveryStore>,
    config: BillingConfig,
    /// For the plans' category names.
    categories: Arc<Categories>,
    /// The language of a reminder's reader.
    languages: Arc<Languages>,
    clock: Arc<dyn Clock>,
}

impl std::fmt::Debug for Billing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Billing")
            .field("config", &self.config)
            .field("categories", &self.categories)
            .finish_non_exhaustive()
    }
}

impl Billing {
    pub(crate) fn new(
        stores: BillingStores,
        config: BillingConfig,
        categories: Arc<Categories>,
        languages: Arc<Languages>,
        clock: Arc<dyn Clock>,
    ) -> Self {
        Self {
            store: stores.billing,
            deliveries: stores.deliveries,
            config,
            categories,
            languages,
            clock,
        }
    }

    /// Whether plans are sold (billing on).
    pub(crate) fn enabled(&self) -> bool {
        self.config.enabled
    }

    /// How often reminders are looked for.
    pub(crate) fn remind_every(&self) -> std::time::Duration {
        self.config.remind_every
    }

    /// How often Telegram's transactions are compared with the ledger.
    pub(crate) fn reconcile_every(&self) -> std::time::Duration {
        self.config.reconcile_every
    }

    fn now(&self) -> DateTime<Utc> {
        self.clock.now()
    }
}
