//! Telegram payments and Stars: `sendInvoice`, `createInvoiceLink`, `answerPreCheckoutQuery`,
//! `refundStarPayment`, `editUserStarSubscription`, `getStarTransactions` and
//! `getMyStarBalance`, plus the simulated user who pays ([`TelegramState::pay`]), whose
//! subscription renews ([`TelegramState::renew_subscription`]) and who gets a refund from
//! Telegram ([`TelegramState::user_refund`]). One ledger per bot, in memory.

mod invoice;
mod methods;
mod user;

pub(super) use invoice::{create_invoice_link, send_invoice};
pub(super) use methods::{
    answer_pre_checkout, edit_star_subscription, get_star_transactions, refund_star_payment,
    star_balance,
};

use std::{collections::HashMap, time::Duration};

use chrono::{DateTime, Utc};
use rand::{Rng, distr::Alphanumeric};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tokio::sync::oneshot;

use super::TelegramState;
use crate::TestkitError;

/// The currency code of Telegram Stars.
pub const STARS: &str = "XTR";
/// The only subscription period Telegram accepts (30 days), in seconds.
pub const SUBSCRIPTION_PERIOD_SECS: i64 = 2_592_000;
/// The highest price of a subscription, in Stars.
pub const MAX_SUBSCRIPTION_STARS: i64 = 10_000;
/// How long Telegram waits for `answerPreCheckoutQuery`.
pub const PRE_CHECKOUT_TIMEOUT: Duration = Duration::from_secs(10);
/// Message ids of the service messages the simulated user "sends" (`successful_payment`,
/// `refunded_payment`) start here, far from the ids of the bot's own messages.
pub const SERVICE_MESSAGE_ID_BASE: i64 = 1_000_000_000;

/// One item of an invoice's `prices`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InvoicePrice {
    /// Portion label.
    pub label: String,
    /// Amount in the currency's smallest unit (whole Stars for `XTR`).
    pub amount: i64,
}

/// An invoice the fake accepted, from `sendInvoice` or `createInvoiceLink`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RecordedInvoice {
    /// Global order, shared with [`RecordedMessage::seq`](super::RecordedMessage::seq).
    pub seq: u64,
    /// The bot's id.
    pub bot_id: u64,
    /// `sendInvoice` or `createInvoiceLink`.
    pub method: String,
    /// The chat it was sent to (`sendInvoice`).
    pub chat_id: Option<i64>,
    /// The invoice message's id (`sendInvoice`); also in [`TelegramState::messages`].
    pub message_id: Option<i64>,
    /// The link returned (`createInvoiceLink`), `https://t.me/$<slug>`.
    pub link: Option<String>,
    /// Product name.
    pub title: String,
    /// Product description.
    pub description: String,
    /// The bot-defined payload (1-128 bytes).
    pub payload: String,
    /// `provider_token` as sent (absent or empty for Stars).
    pub provider_token: Option<String>,
    /// Three-letter currency code.
    pub currency: String,
    /// The price items.
    pub prices: Vec<InvoicePrice>,
    /// Sum of the price items.
    pub total_amount: i64,
    /// `subscription_period` (`createInvoiceLink` only), seconds.
    pub subscription_period: Option<i64>,
    /// Every parameter of the call (`need_email`, `provider_data`, `reply_markup`…).
    pub params: Value,
    /// When the fake accepted it.
    pub created_at: DateTime<Utc>,
}

/// The simulated user who pays.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PayUser {
    /// User id; their private chat with the bot has the same id.
    pub id: u64,
    /// First name.
    pub first_name: String,
    /// IETF language tag.
    #[serde(default)]
    pub language_code: Option<String>,
}

impl PayUser {
    /// A user without a language code.
    pub fn new(id: u64, first_name: impl Into<String>) -> Self {
        PayUser {
            id,
            first_name: first_name.into(),
            language_code: None,
        }
    }

    fn to_json(&self) -> Value {
        let mut u = json!({"id": self.id, "is_bot": false, "first_name": self.first_name});
        if let (Some(lang), Some(obj)) = (&self.language_code, u.as_object_mut()) {
            obj.insert("language_code".into(), json!(lang));
        }
        u
    }

    fn chat_json(&self) -> Value {
        json!({"id": self.id, "type": "private", "first_name": self.first_name})
    }
}

/// How [`TelegramState::pay`] behaves.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PayOptions {
    /// `false`: Telegram takes the money (ledger, charge) but the `successful_payment` update
    /// is lost — for reconciliation tests. Default `true`.
    pub deliver_update: bool,
    /// Queue the `successful_payment` update twice, with the same `update_id`, as Telegram
    /// redelivers an update. Default `false`.
    pub duplicate_update: bool,
    /// Currency shown in the pre-checkout query (and paid) instead of the invoice's.
    pub currency: Option<String>,
    /// Total shown in the pre-checkout query (and paid) instead of the invoice's, e.g. to
    /// simulate an invoice sent before a price change.
    pub total_amount: Option<i64>,
    /// How long to wait for `answerPreCheckoutQuery`. Default [`PRE_CHECKOUT_TIMEOUT`].
    pub timeout: Duration,
}

impl Default for PayOptions {
    fn default() -> Self {
        PayOptions {
            deliver_update: true,
            duplicate_update: false,
            currency: None,
            total_amount: None,
            timeout: PRE_CHECKOUT_TIMEOUT,
        }
    }
}

/// What came of [`TelegramState::pay`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PayOutcome {
    /// The bot answered `ok: true` and the payment went through.
    pub accepted: bool,
    /// The bot did not answer in time (the payment did not happen).
    pub timed_out: bool,
    /// The id of the `pre_checkout_query` sent to the bot.
    pub pre_checkout_query_id: String,
    /// The `update_id` of the `pre_checkout_query` update.
    pub pre_checkout_update_id: i64,
    /// The bot's `error_message` when it refused.
    pub error_message: Option<String>,
    /// `telegram_payment_charge_id` of the payment, when accepted.
    pub charge_id: Option<String>,
    /// `provider_payment_charge_id` of the payment, when accepted.
    pub provider_charge_id: Option<String>,
    /// The `update_id` of the `successful_payment` message update, when one was queued.
    pub payment_update_id: Option<i64>,
    /// Currency of the pre-checkout query.
    pub currency: String,
    /// Total of the pre-checkout query.
    pub total_amount: i64,
    /// The invoice payload.
    pub invoice_payload: String,
    /// For subscriptions: when the paid period ends.
    pub subscription_expiration_date: Option<DateTime<Utc>>,
}

/// A valid `answerPreCheckoutQuery`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PreCheckoutAnswer {
    /// Global order.
    pub seq: u64,
    /// The bot's id.
    pub bot_id: u64,
    /// The query answered.
    pub query_id: String,
    /// The paying user.
    pub user_id: u64,
    /// The invoice payload of the query.
    pub invoice_payload: String,
    /// The query's currency.
    pub currency: String,
    /// The query's total.
    pub total_amount: i64,
    /// The bot's verdict.
    pub ok: bool,
    /// The bot's reason when `ok` is false.
    pub error_message: Option<String>,
    /// When it was answered.
    pub at: DateTime<Utc>,
}

/// What a Stars ledger entry records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StarTransactionKind {
    /// A payment (incoming; the first payment of a subscription too).
    Payment,
    /// A subscription renewal (incoming).
    Renewal,
    /// A refund (outgoing), by the bot or by Telegram.
    Refund,
}

/// One entry of a bot's Stars ledger, as `getStarTransactions` reports it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StarTransactionRecord {
    /// Global order.
    pub seq: u64,
    /// The bot's id.
    pub bot_id: u64,
    /// Transaction id: the `telegram_payment_charge_id` (a refund keeps its payment's id).
    pub id: String,
    /// Payment, renewal or refund.
    pub kind: StarTransactionKind,
    /// The user who paid (or was refunded).
    pub user: PayUser,
    /// Stars.
    pub amount: i64,
    /// The invoice payload.
    pub invoice_payload: String,
    /// For subscription payments: the period, seconds.
    pub subscription_period: Option<i64>,
    /// When it happened.
    pub date: DateTime<Utc>,
}

impl StarTransactionRecord {
    /// The `StarTransaction` object: incoming ones have `source`, refunds `receiver`, a
    /// `TransactionPartnerUser` of `transaction_type` `invoice_payment`.
    fn to_json(&self) -> Value {
        let mut partner = json!({
            "type": "user",
            "transaction_type": "invoice_payment",
            "user": self.user.to_json(),
            "invoice_payload": self.invoice_payload,
        });
        if let (Some(p), Some(obj)) = (self.subscription_period, partner.as_object_mut()) {
            obj.insert("subscription_period".into(), json!(p));
        }
        let side = match self.kind {
            StarTransactionKind::Payment | StarTransactionKind::Renewal => "source",
            StarTransactionKind::Refund => "receiver",
        };
        json!({
            "id": self.id,
            "amount": self.amount,
            "date": self.date.timestamp(),
            side: partner,
        })
    }
}

/// Who started a refund.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RefundOrigin {
    /// The bot, with `refundStarPayment`.
    Bot,
    /// Telegram, on the user's behalf ([`TelegramState::user_refund`]).
    User,
}

/// A refund of a Stars payment.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecordedRefund {
    /// Global order.
    pub seq: u64,
    /// The bot's id.
    pub bot_id: u64,
    /// The refunded user.
    pub user_id: u64,
    /// The refunded charge.
    pub charge_id: String,
    /// Stars given back.
    pub amount: i64,
    /// The invoice payload of the charge.
    pub invoice_payload: String,
    /// Who started it.
    pub origin: RefundOrigin,
    /// When.
    pub at: DateTime<Utc>,
}

/// What [`TelegramState::renew_subscription`] did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Renewal {
    /// The renewal's new `telegram_payment_charge_id`.
    pub charge_id: String,
    /// The `update_id` of the `successful_payment` update.
    pub update_id: i64,
    /// The new end of the paid period.
    pub expiration: DateTime<Utc>,
}

/// Why a simulated user action could not happen.
#[derive(Debug, thiserror::Error)]
pub enum PaymentError {
    /// No invoice of that bot has that link, payload or message.
    #[error("no invoice of bot {bot_id} matches {invoice:?}")]
    UnknownInvoice {
        /// The bot.
        bot_id: u64,
        /// What was looked up.
        invoice: String,
    },
    /// No charge with that id belongs to that user.
    #[error("no charge {charge_id:?} of user {user_id}")]
    UnknownCharge {
        /// The user.
        user_id: u64,
        /// The charge.
        charge_id: String,
    },
    /// The charge is not part of a subscription.
    #[error("charge {0:?} is not a subscription payment")]
    NotASubscription(String),
    /// The subscription was canceled: Telegram does not renew it.
    #[error("the subscription of charge {0:?} is canceled")]
    SubscriptionCanceled(String),
    /// The charge was not paid in Stars.
    #[error("charge {0:?} was not paid in Telegram Stars")]
    NotStars(String),
    /// The charge was refunded already.
    #[error("charge {0:?} is already refunded")]
    AlreadyRefunded(String),
    /// The fake is shutting down.
    #[error("the fake Bot API is shutting down")]
    Closed,
    /// An update could not be queued.
    #[error(transparent)]
    Update(#[from] TestkitError),
}

impl PaymentError {
    /// The HTTP status the control endpoints answer with.
    pub(super) fn status(&self) -> u16 {
        match self {
            PaymentError::UnknownInvoice { .. } | PaymentError::UnknownCharge { .. } => 404,
            PaymentError::Closed => 503,
            PaymentError::Update(_) => 500,
            _ => 409,
        }
    }
}

#[derive(Debug)]
struct Answer {
    ok: bool,
    error_message: Option<String>,
}

#[derive(Debug)]
struct PendingQuery {
    tx: oneshot::Sender<Answer>,
    user_id: u64,
    invoice_payload: String,
    currency: String,
    total_amount: i64,
}

#[derive(Debug, Clone)]
struct Charge {
    user: PayUser,
    currency: String,
    amount: i64,
    invoice_payload: String,
    provider_charge_id: String,
    /// The first charge of the subscription this charge belongs to.
    subscription: Option<String>,
    refunded: bool,
}

#[derive(Debug, Clone)]
struct Subscription {
    period: i64,
    canceled: bool,
    expires_at: DateTime<Utc>,
}

/// A bot's payments: invoices, open pre-checkout queries, charges, subscriptions, ledger.
#[derive(Debug, Default)]
pub(super) struct PaymentState {
    invoices: Vec<RecordedInvoice>,
    pending: HashMap<String, PendingQuery>,
    answers: Vec<PreCheckoutAnswer>,
    charges: HashMap<String, Charge>,
    subscriptions: HashMap<String, Subscription>,
    ledger: Vec<StarTransactionRecord>,
    refunds: Vec<RecordedRefund>,
    service_messages: i64,
}

impl PaymentState {
    fn next_message_id(&mut self) -> i64 {
        self.service_messages += 1;
        SERVICE_MESSAGE_ID_BASE + self.service_messages
    }

    /// The charge `charge_id` of `user_id`.
    fn charge_of(&mut self, user_id: u64, charge_id: &str) -> Option<&mut Charge> {
        self.charges
            .get_mut(charge_id)
            .filter(|c| c.user.id == user_id)
    }

    fn find_invoice(&self, invoice: &str) -> Option<RecordedInvoice> {
        let by_link = self
            .invoices
            .iter()
            .rev()
            .find(|i| i.link.as_deref() == Some(invoice));
        let by_payload = || self.invoices.iter().rev().find(|i| i.payload == invoice);
        let by_message = || {
            let (chat, msg) = invoice.strip_prefix("msg:")?.split_once(':')?;
            let (chat, msg) = (chat.parse::<i64>().ok()?, msg.parse::<i64>().ok()?);
            self.invoices
                .iter()
                .find(|i| i.chat_id == Some(chat) && i.message_id == Some(msg))
        };
        by_link.or_else(by_payload).or_else(by_message).cloned()
    }
}

fn random_alnum(len: usize) -> String {
    rand::rng()
        .sample_iter(&Alphanumeric)
        .take(len)
        .map(char::from)
        .collect()
}

/// Books a refund of `charge` in the ledger and the list of refunds.
fn record_refund(
    st: &TelegramState,
    bot_id: u64,
    pay: &mut PaymentState,
    charge_id: &str,
    charge: &Charge,
    origin: RefundOrigin,
) {
    let now = Utc::now();
    pay.ledger.push(StarTransactionRecord {
        seq: st.next_seq(),
        bot_id,
        id: charge_id.to_owned(),
        kind: StarTransactionKind::Refund,
        user: charge.user.clone(),
        amount: charge.amount,
        invoice_payload: charge.invoice_payload.clone(),
        subscription_period: None,
        date: now,
    });
    pay.refunds.push(RecordedRefund {
        seq: st.next_seq(),
        bot_id,
        user_id: charge.user.id,
        charge_id: charge_id.to_owned(),
        amount: charge.amount,
        invoice_payload: charge.invoice_payload.clone(),
        origin,
        at: now,
    });
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn transaction_json_sides() {
        let t = StarTransactionRecord {
            seq: 1,
            bot_id: 1,
            id: "c".into(),
            kind: StarTransactionKind::Refund,
            user: PayUser::new(5, "A"),
            amount: 3,
            invoice_payload: "pl".into(),
            subscription_period: None,
            date: Utc::now(),
        };
        let j = t.to_json();
        assert!(j.get("source").is_none());
        assert_eq!(j["receiver"]["transaction_type"], "invoice_payment");
    }
}
