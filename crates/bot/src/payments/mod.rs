//! Payments whoever sold them (a plan of the billing room, a placement of the placements
//! room): what a payment says, answering pre-checkout queries, refunds (an admin's, a refused
//! placement's, one Telegram reports) and the reconciliation of Telegram's Stars
//! transactions with the ledger. The rooms import this; it imports no room.

mod checkout;
mod facts;
mod reconcile;
mod refund;
mod refunded;

pub(crate) use checkout::answer_pre_checkout;
pub(crate) use facts::{Payment, PaymentFacts, nonce};
pub(crate) use reconcile::{FoundPayments, PaymentKind, Reconciler};
pub use refund::refund_star_payment;
pub(crate) use refund::refund_star_payment_for;
pub(crate) use refunded::Refunds;
