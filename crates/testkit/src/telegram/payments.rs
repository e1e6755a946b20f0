//! Telegram payments and Stars: `sendInvoice`, `createInvoiceLink`, `answerPreCheckoutQuery`,
//! `refundStarPayment`, `editUserStarSubscription`, `getStarTransactions` and
//! `getMyStarBalance`, plus the simulated user who pays ([`TelegramState::pay`]), whose
//! subscription renews ([`TelegramState::renew_subscription`]) and who gets a refund from
//! Telegram ([`TelegramState::user_refund`]). One ledger per bot, in memory.

use std::{collections::HashMap, time::Duration};

use chrono::{DateTime, Utc};
use rand::{Rng, distr::Alphanumeric};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use tokio::sync::oneshot;

use super::{
    TelegramState,
    api::{ApiResult, bad},
    methods::{resolve_chat, send_checked},
    params::{Params, ParamsExt},
    state::{BotState, lock},
};
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

/// The checked parameters of an invoice.
struct InvoiceParams {
    title: String,
    description: String,
    payload: String,
    provider_token: Option<String>,
    currency: String,
    prices: Vec<InvoicePrice>,
    total_amount: i64,
    subscription_period: Option<i64>,
}

impl InvoiceParams {
    fn invoice_json(&self, p: &Params) -> Value {
        json!({
            "title": self.title,
            "description": self.description,
            "start_parameter": p.string("start_parameter").unwrap_or_default(),
            "currency": self.currency,
            "total_amount": self.total_amount,
        })
    }

    fn record(
        self,
        st: &TelegramState,
        bot_id: u64,
        method: &str,
        p: &Params,
        at: (Option<i64>, Option<i64>, Option<String>),
    ) -> RecordedInvoice {
        RecordedInvoice {
            seq: st.next_seq(),
            bot_id,
            method: method.to_owned(),
            chat_id: at.0,
            message_id: at.1,
            link: at.2,
            title: self.title,
            description: self.description,
            payload: self.payload,
            provider_token: self.provider_token,
            currency: self.currency,
            prices: self.prices,
            total_amount: self.total_amount,
            subscription_period: self.subscription_period,
            params: Value::Object(p.clone()),
            created_at: Utc::now(),
        }
    }
}

const AMOUNT_INVALID: &str = "Bad Request: CURRENCY_TOTAL_AMOUNT_INVALID";

/// Telegram's checks of an invoice (`sendInvoice`, or `createInvoiceLink` when
/// `link` is true); returns the Bot API error description of the first violation.
fn check_invoice(p: &Params, link: bool) -> Result<InvoiceParams, String> {
    let title = p.string("title").unwrap_or_default();
    if !(1..=32).contains(&title.chars().count()) {
        return Err("Bad Request: invoice title must be 1-32 characters long".into());
    }
    let description = p.string("description").unwrap_or_default();
    if !(1..=255).contains(&description.chars().count()) {
        return Err("Bad Request: invoice description must be 1-255 characters long".into());
    }
    let payload = p.string("payload").unwrap_or_default();
    if !(1..=128).contains(&payload.len()) {
        return Err("Bad Request: INVOICE_PAYLOAD_INVALID: the payload must be 1-128 bytes".into());
    }
    let currency = p.string("currency").unwrap_or_default();
    if currency.len() != 3 || !currency.bytes().all(|b| b.is_ascii_uppercase()) {
        return Err("Bad Request: CURRENCY_INVALID".into());
    }
    let stars = currency == STARS;
    let provider_token = p.string("provider_token");
    let has_token = provider_token.as_deref().is_some_and(|t| !t.is_empty());
    if stars && has_token {
        return Err(
            "Bad Request: PAYMENT_PROVIDER_INVALID: provider_token must be empty for payments in Telegram Stars"
                .into(),
        );
    }
    if !stars && !has_token {
        return Err(
            "Bad Request: PAYMENT_PROVIDER_INVALID: provider_token is required for payments in other currencies than XTR"
                .into(),
        );
    }
    let prices = parse_prices(p)?;
    if prices.is_empty() {
        return Err(AMOUNT_INVALID.into());
    }
    if stars && prices.len() != 1 {
        return Err(
            "Bad Request: STARS_INVOICE_INVALID: an invoice in Telegram Stars must have exactly one price item"
                .into(),
        );
    }
    if stars && prices.iter().any(|x| x.amount <= 0) {
        return Err(AMOUNT_INVALID.into());
    }
    let total_amount = prices
        .iter()
        .try_fold(0i64, |sum, x| sum.checked_add(x.amount))
        .filter(|t| (1..=i64::from(u32::MAX)).contains(t))
        .ok_or_else(|| AMOUNT_INVALID.to_owned())?;
    let subscription_period = p.int("subscription_period").filter(|&s| s != 0);
    if let Some(period) = subscription_period {
        if !link {
            return Err(
                "Bad Request: subscription_period is supported only by createInvoiceLink".into(),
            );
        }
        if !stars {
            return Err(
                "Bad Request: SUBSCRIPTION_PERIOD_INVALID: subscriptions must be paid in Telegram Stars (XTR)"
                    .into(),
            );
        }
        if period != SUBSCRIPTION_PERIOD_SECS {
            return Err(format!(
                "Bad Request: SUBSCRIPTION_PERIOD_INVALID: the period must be {SUBSCRIPTION_PERIOD_SECS} seconds"
            ));
        }
        if total_amount > MAX_SUBSCRIPTION_STARS {
            return Err(format!(
                "{AMOUNT_INVALID}: a subscription costs at most {MAX_SUBSCRIPTION_STARS} Stars"
            ));
        }
    }
    if !link {
        check_pay_button(p)?;
    }
    Ok(InvoiceParams {
        title,
        description,
        payload,
        provider_token,
        currency,
        prices,
        total_amount,
        subscription_period,
    })
}

fn parse_prices(p: &Params) -> Result<Vec<InvoicePrice>, String> {
    const CANT_PARSE: &str = "Bad Request: can't parse prices JSON object";
    let Some(Value::Array(items)) = p.json("prices") else {
        return Err(CANT_PARSE.into());
    };
    items
        .iter()
        .map(|item| {
            let label = item.get("label").and_then(Value::as_str);
            let amount = item.get("amount").and_then(Value::as_i64);
            match (label, amount) {
                (Some(label), Some(amount)) => Ok(InvoicePrice {
                    label: label.to_owned(),
                    amount,
                }),
                _ => Err(CANT_PARSE.to_owned()),
            }
        })
        .collect()
}

/// An invoice's inline keyboard, if any, must start with a Pay button.
fn check_pay_button(p: &Params) -> Result<(), String> {
    let Some(markup) = p.json("reply_markup") else {
        return Ok(());
    };
    let first = markup
        .get("inline_keyboard")
        .and_then(Value::as_array)
        .and_then(|rows| rows.first())
        .and_then(Value::as_array)
        .and_then(|row| row.first());
    match first {
        Some(button) if button.get("pay").and_then(Value::as_bool) != Some(true) => {
            Err("Bad Request: REPLY_MARKUP_BUY_EMPTY: the first button must be a Pay button".into())
        }
        _ => Ok(()),
    }
}

/// `sendInvoice`: the invoice checks are the content step (7) of the send pipeline.
pub(super) fn send_invoice(st: &TelegramState, bot: &BotState, p: &Params) -> ApiResult {
    let chat_id = resolve_chat(p)?;
    let checked = check_invoice(p, false);
    let (verdict, extra, text) = match &checked {
        Ok(inv) => (
            Ok(()),
            json!({"invoice": inv.invoice_json(p)}),
            inv.description.clone(),
        ),
        Err(e) => (Err(e.clone()), Value::Null, String::new()),
    };
    let message = send_checked(st, bot, "sendInvoice", p, text, verdict, extra)?;
    if let Ok(inv) = checked {
        let message_id = message.get("message_id").and_then(Value::as_i64);
        let rec = inv.record(
            st,
            bot.id,
            "sendInvoice",
            p,
            (Some(chat_id), message_id, None),
        );
        lock(&bot.payments).invoices.push(rec);
    }
    Ok(message)
}

/// `createInvoiceLink`.
pub(super) fn create_invoice_link(st: &TelegramState, bot: &BotState, p: &Params) -> ApiResult {
    let inv = check_invoice(p, true).map_err(bad)?;
    let link = format!("https://t.me/${}", random_alnum(22));
    let rec = inv.record(
        st,
        bot.id,
        "createInvoiceLink",
        p,
        (None, None, Some(link.clone())),
    );
    lock(&bot.payments).invoices.push(rec);
    Ok(json!(link))
}

/// `answerPreCheckoutQuery`: each query is answered once.
pub(super) fn answer_pre_checkout(st: &TelegramState, bot: &BotState, p: &Params) -> ApiResult {
    let query_id = p.string("pre_checkout_query_id").unwrap_or_default();
    let ok = p.boolean("ok").unwrap_or(false);
    let error_message = p.string("error_message").filter(|m| !m.is_empty());
    if !ok && error_message.is_none() {
        return Err(bad(
            "Bad Request: error_message is required when ok is false",
        ));
    }
    let mut pay = lock(&bot.payments);
    let q = pay
        .pending
        .remove(&query_id)
        .ok_or_else(|| bad("Bad Request: QUERY_ID_INVALID"))?;
    pay.answers.push(PreCheckoutAnswer {
        seq: st.next_seq(),
        bot_id: bot.id,
        query_id,
        user_id: q.user_id,
        invoice_payload: q.invoice_payload,
        currency: q.currency,
        total_amount: q.total_amount,
        ok,
        error_message: error_message.clone(),
        at: Utc::now(),
    });
    // pay() may have stopped waiting; the answer is recorded anyway.
    let _ = q.tx.send(Answer { ok, error_message });
    Ok(json!(true))
}

fn user_and_charge(p: &Params) -> (Option<u64>, String) {
    let user_id = p.int("user_id").and_then(|u| u64::try_from(u).ok());
    let charge_id = p.string("telegram_payment_charge_id").unwrap_or_default();
    (user_id, charge_id)
}

const CHARGE_NOT_FOUND: &str = "Bad Request: CHARGE_NOT_FOUND";

/// `refundStarPayment`.
pub(super) fn refund_star_payment(st: &TelegramState, bot: &BotState, p: &Params) -> ApiResult {
    let (user_id, charge_id) = user_and_charge(p);
    let mut pay = lock(&bot.payments);
    let charge = user_id
        .and_then(|u| pay.charge_of(u, &charge_id))
        .filter(|c| c.currency == STARS)
        .ok_or_else(|| bad(CHARGE_NOT_FOUND))?;
    if charge.refunded {
        return Err(bad("Bad Request: CHARGE_ALREADY_REFUNDED"));
    }
    charge.refunded = true;
    let charge = charge.clone();
    record_refund(st, bot.id, &mut pay, &charge_id, &charge, RefundOrigin::Bot);
    Ok(json!(true))
}

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

/// `editUserStarSubscription`.
pub(super) fn edit_star_subscription(bot: &BotState, p: &Params) -> ApiResult {
    let (user_id, charge_id) = user_and_charge(p);
    let canceled = p.boolean("is_canceled").unwrap_or(false);
    let mut pay = lock(&bot.payments);
    let first = user_id
        .and_then(|u| pay.charge_of(u, &charge_id))
        .and_then(|c| c.subscription.clone())
        .ok_or_else(|| bad(CHARGE_NOT_FOUND))?;
    let sub = pay
        .subscriptions
        .get_mut(&first)
        .ok_or_else(|| bad(CHARGE_NOT_FOUND))?;
    sub.canceled = canceled;
    Ok(json!(true))
}

/// `getStarTransactions`: newest first, `offset` skipped, at most `limit` (1-100, default 100).
pub(super) fn get_star_transactions(bot: &BotState, p: &Params) -> Value {
    let offset = usize::try_from(p.int("offset").unwrap_or(0).max(0)).unwrap_or(usize::MAX);
    let limit = usize::try_from(p.int("limit").unwrap_or(100).clamp(1, 100)).unwrap_or(100);
    let pay = lock(&bot.payments);
    let transactions: Vec<Value> = pay
        .ledger
        .iter()
        .rev()
        .skip(offset)
        .take(limit)
        .map(StarTransactionRecord::to_json)
        .collect();
    json!({ "transactions": transactions })
}

/// `getMyStarBalance`: incoming minus refunded Stars.
pub(super) fn star_balance(bot: &BotState) -> Value {
    let pay = lock(&bot.payments);
    let balance: i64 = pay
        .ledger
        .iter()
        .map(|t| match t.kind {
            StarTransactionKind::Refund => -t.amount,
            _ => t.amount,
        })
        .sum();
    json!({ "amount": balance })
}

/// A message update from `user` in their private chat carrying `field: content`.
fn service_update(message_id: i64, user: &PayUser, field: &str, content: Value) -> Value {
    let mut message = Map::new();
    message.insert("message_id".into(), json!(message_id));
    message.insert("from".into(), user.to_json());
    message.insert("chat".into(), user.chat_json());
    message.insert("date".into(), json!(Utc::now().timestamp()));
    message.insert(field.into(), content);
    json!({ "message": message })
}

impl TelegramState {
    /// Queues `update` for `bot_id`, `times` times with the same `update_id`.
    fn inject_repeated(
        &self,
        bot_id: u64,
        update: Value,
        times: usize,
    ) -> Result<i64, TestkitError> {
        let id = self.inject_update(bot_id, update.clone())?;
        for _ in 1..times {
            let mut again = update.clone();
            if let Some(obj) = again.as_object_mut() {
                obj.insert("update_id".into(), json!(id));
            }
            self.inject_update(bot_id, again)?;
        }
        Ok(id)
    }

    /// Simulates `user` paying an invoice of `bot_id`. `invoice` is the invoice's link, its
    /// payload (the newest invoice with it), or `msg:<chat_id>:<message_id>` (the message
    /// `sendInvoice` returned).
    ///
    /// Queues a `pre_checkout_query` update, waits up to `opts.timeout` for the bot's
    /// `answerPreCheckoutQuery`, and when it says `ok: true` records the charge (and for
    /// `XTR`, a Stars ledger entry) and queues a `message` update in the user's private chat
    /// with `successful_payment` (for a subscription: `subscription_expiration_date` = now +
    /// period, `is_recurring` and `is_first_recurring` true). A refusal or a timeout is an
    /// `Ok` outcome with `accepted: false`.
    pub async fn pay(
        &self,
        bot_id: u64,
        user: &PayUser,
        invoice: &str,
        opts: PayOptions,
    ) -> Result<PayOutcome, PaymentError> {
        let bot = self.bot(bot_id);
        let inv = lock(&bot.payments).find_invoice(invoice).ok_or_else(|| {
            PaymentError::UnknownInvoice {
                bot_id,
                invoice: invoice.to_owned(),
            }
        })?;
        let currency = opts
            .currency
            .clone()
            .unwrap_or_else(|| inv.currency.clone());
        let total_amount = opts.total_amount.unwrap_or(inv.total_amount);
        let query_id = rand::rng()
            .random_range(1_000_000_000_000_000u64..u64::MAX / 2)
            .to_string();
        let (tx, rx) = oneshot::channel();
        lock(&bot.payments).pending.insert(
            query_id.clone(),
            PendingQuery {
                tx,
                user_id: user.id,
                invoice_payload: inv.payload.clone(),
                currency: currency.clone(),
                total_amount,
            },
        );
        let query = json!({"pre_checkout_query": {
            "id": query_id,
            "from": user.to_json(),
            "currency": currency,
            "total_amount": total_amount,
            "invoice_payload": inv.payload,
        }});
        let pre_checkout_update_id = self.inject_update(bot_id, query)?;
        let mut outcome = PayOutcome {
            accepted: false,
            timed_out: false,
            pre_checkout_query_id: query_id.clone(),
            pre_checkout_update_id,
            error_message: None,
            charge_id: None,
            provider_charge_id: None,
            payment_update_id: None,
            currency: currency.clone(),
            total_amount,
            invoice_payload: inv.payload.clone(),
            subscription_expiration_date: None,
        };
        let answer = tokio::select! {
            r = tokio::time::timeout(opts.timeout, rx) => r.ok().and_then(Result::ok),
            () = self.inner.cancel.cancelled() => return Err(PaymentError::Closed),
        };
        let Some(answer) = answer else {
            lock(&bot.payments).pending.remove(&query_id);
            outcome.timed_out = true;
            return Ok(outcome);
        };
        if !answer.ok {
            outcome.error_message = answer.error_message;
            return Ok(outcome);
        }
        let charge_id = format!("stx{}", random_alnum(40));
        let provider_charge_id = format!("{}_{}", user.id, self.next_seq());
        let now = Utc::now();
        let expiration = inv
            .subscription_period
            .map(|p| now + chrono::Duration::seconds(p));
        let message_id = {
            let mut pay = lock(&bot.payments);
            pay.charges.insert(
                charge_id.clone(),
                Charge {
                    user: user.clone(),
                    currency: currency.clone(),
                    amount: total_amount,
                    invoice_payload: inv.payload.clone(),
                    provider_charge_id: provider_charge_id.clone(),
                    subscription: inv.subscription_period.map(|_| charge_id.clone()),
                    refunded: false,
                },
            );
            if let (Some(period), Some(expires_at)) = (inv.subscription_period, expiration) {
                pay.subscriptions.insert(
                    charge_id.clone(),
                    Subscription {
                        period,
                        canceled: false,
                        expires_at,
                    },
                );
            }
            if currency == STARS {
                pay.ledger.push(StarTransactionRecord {
                    seq: self.next_seq(),
                    bot_id,
                    id: charge_id.clone(),
                    kind: StarTransactionKind::Payment,
                    user: user.clone(),
                    amount: total_amount,
                    invoice_payload: inv.payload.clone(),
                    subscription_period: inv.subscription_period,
                    date: now,
                });
            }
            pay.next_message_id()
        };
        let mut payment = json!({
            "currency": currency,
            "total_amount": total_amount,
            "invoice_payload": inv.payload,
            "telegram_payment_charge_id": charge_id,
            "provider_payment_charge_id": provider_charge_id,
        });
        if let (Some(exp), Some(obj)) = (expiration, payment.as_object_mut()) {
            obj.insert(
                "subscription_expiration_date".into(),
                json!(exp.timestamp()),
            );
            obj.insert("is_recurring".into(), json!(true));
            obj.insert("is_first_recurring".into(), json!(true));
        }
        if opts.deliver_update {
            let update = service_update(message_id, user, "successful_payment", payment);
            let times = if opts.duplicate_update { 2 } else { 1 };
            outcome.payment_update_id = Some(self.inject_repeated(bot_id, update, times)?);
        }
        outcome.accepted = true;
        outcome.charge_id = Some(charge_id);
        outcome.provider_charge_id = Some(provider_charge_id);
        outcome.subscription_expiration_date = expiration;
        Ok(outcome)
    }

    /// Simulates Telegram renewing the subscription `charge_id` (its first charge or any
    /// renewal) of `user_id`: a new charge and Stars ledger entry, and a `successful_payment`
    /// update with `is_recurring: true`, `is_first_recurring: false`, the first payment's
    /// payload and `subscription_expiration_date = new_expiration`. A canceled subscription
    /// is not renewed.
    pub fn renew_subscription(
        &self,
        bot_id: u64,
        user_id: u64,
        charge_id: &str,
        new_expiration: DateTime<Utc>,
    ) -> Result<Renewal, PaymentError> {
        let bot = self.bot(bot_id);
        let new_charge = format!("stx{}", random_alnum(40));
        let (update, first) = {
            let mut pay = lock(&bot.payments);
            let charge = pay
                .charge_of(user_id, charge_id)
                .ok_or_else(|| PaymentError::UnknownCharge {
                    user_id,
                    charge_id: charge_id.to_owned(),
                })?
                .clone();
            let first = charge
                .subscription
                .clone()
                .ok_or_else(|| PaymentError::NotASubscription(charge_id.to_owned()))?;
            let sub = pay
                .subscriptions
                .get_mut(&first)
                .ok_or_else(|| PaymentError::NotASubscription(charge_id.to_owned()))?;
            if sub.canceled {
                return Err(PaymentError::SubscriptionCanceled(charge_id.to_owned()));
            }
            sub.expires_at = new_expiration;
            let period = sub.period;
            let provider_charge_id = format!("{user_id}_{}", self.next_seq());
            pay.charges.insert(
                new_charge.clone(),
                Charge {
                    provider_charge_id: provider_charge_id.clone(),
                    refunded: false,
                    ..charge.clone()
                },
            );
            pay.ledger.push(StarTransactionRecord {
                seq: self.next_seq(),
                bot_id,
                id: new_charge.clone(),
                kind: StarTransactionKind::Renewal,
                user: charge.user.clone(),
                amount: charge.amount,
                invoice_payload: charge.invoice_payload.clone(),
                subscription_period: Some(period),
                date: Utc::now(),
            });
            let payment = json!({
                "currency": charge.currency,
                "total_amount": charge.amount,
                "invoice_payload": charge.invoice_payload,
                "subscription_expiration_date": new_expiration.timestamp(),
                "is_recurring": true,
                "is_first_recurring": false,
                "telegram_payment_charge_id": new_charge,
                "provider_payment_charge_id": provider_charge_id,
            });
            let id = pay.next_message_id();
            (
                service_update(id, &charge.user, "successful_payment", payment),
                first,
            )
        };
        tracing::debug!(bot_id, user_id, subscription = %first, "subscription renewed");
        let update_id = self.inject_update(bot_id, update)?;
        Ok(Renewal {
            charge_id: new_charge,
            update_id,
            expiration: new_expiration,
        })
    }

    /// Simulates Telegram refunding the Stars charge `charge_id` of `user_id` (e.g. after a
    /// dispute): marks it refunded, adds a refund to the ledger and queues a `message`
    /// update with `refunded_payment`. Returns the update's id.
    pub fn user_refund(
        &self,
        bot_id: u64,
        user_id: u64,
        charge_id: &str,
    ) -> Result<i64, PaymentError> {
        let bot = self.bot(bot_id);
        let update = {
            let mut pay = lock(&bot.payments);
            let charge =
                pay.charge_of(user_id, charge_id)
                    .ok_or_else(|| PaymentError::UnknownCharge {
                        user_id,
                        charge_id: charge_id.to_owned(),
                    })?;
            if charge.currency != STARS {
                return Err(PaymentError::NotStars(charge_id.to_owned()));
            }
            if charge.refunded {
                return Err(PaymentError::AlreadyRefunded(charge_id.to_owned()));
            }
            charge.refunded = true;
            let charge = charge.clone();
            record_refund(
                self,
                bot_id,
                &mut pay,
                charge_id,
                &charge,
                RefundOrigin::User,
            );
            let refunded = json!({
                "currency": charge.currency,
                "total_amount": charge.amount,
                "invoice_payload": charge.invoice_payload,
                "telegram_payment_charge_id": charge_id,
                "provider_payment_charge_id": charge.provider_charge_id,
            });
            let id = pay.next_message_id();
            service_update(id, &charge.user, "refunded_payment", refunded)
        };
        Ok(self.inject_update(bot_id, update)?)
    }

    /// Valid `answerPreCheckoutQuery` calls of every bot, oldest first.
    pub fn pre_checkout_answers(&self) -> Vec<PreCheckoutAnswer> {
        let mut all: Vec<PreCheckoutAnswer> = self
            .existing_bots()
            .iter()
            .flat_map(|b| lock(&b.payments).answers.clone())
            .collect();
        all.sort_by_key(|a| a.seq);
        all
    }

    /// The Stars ledger of `bot_id`, oldest first (`getStarTransactions` answers newest first).
    pub fn star_transactions(&self, bot_id: u64) -> Vec<StarTransactionRecord> {
        lock(&self.bot(bot_id).payments).ledger.clone()
    }

    /// The invoices `bot_id` sent or created, oldest first.
    pub fn invoices(&self, bot_id: u64) -> Vec<RecordedInvoice> {
        lock(&self.bot(bot_id).payments).invoices.clone()
    }

    /// Refunds of `bot_id`'s Stars charges (by the bot or by Telegram), oldest first.
    pub fn refunds(&self, bot_id: u64) -> Vec<RecordedRefund> {
        lock(&self.bot(bot_id).payments).refunds.clone()
    }

    /// Whether the subscription that charge `charge_id` of `user_id` belongs to is canceled
    /// (`editUserStarSubscription`); `None` when that is no subscription charge of that user.
    pub fn subscription_canceled(
        &self,
        bot_id: u64,
        user_id: u64,
        charge_id: &str,
    ) -> Option<bool> {
        let bot = self.bot(bot_id);
        let mut pay = lock(&bot.payments);
        let first = pay.charge_of(user_id, charge_id)?.subscription.clone()?;
        pay.subscriptions.get(&first).map(|s| s.canceled)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn p(v: Value) -> Params {
        v.as_object().unwrap().clone()
    }

    fn stars(amounts: &[i64]) -> Value {
        let prices: Vec<Value> = amounts
            .iter()
            .map(|a| json!({"label": "x", "amount": a}))
            .collect();
        json!({"title": "T", "description": "D", "payload": "pl", "currency": "XTR", "prices": prices})
    }

    #[test]
    fn invoice_checks() {
        assert!(check_invoice(&p(stars(&[5])), false).is_ok());
        assert!(
            check_invoice(&p(stars(&[5, 6])), false)
                .err()
                .unwrap()
                .contains("STARS_INVOICE_INVALID")
        );
        assert!(check_invoice(&p(stars(&[0])), false).is_err());
        assert!(check_invoice(&p(stars(&[])), false).is_err());
        let mut v = stars(&[5]);
        v["provider_token"] = json!("tok");
        assert!(check_invoice(&p(v), false).is_err());
        let mut v = stars(&[5]);
        v["payload"] = json!("x".repeat(129));
        assert!(check_invoice(&p(v), false).is_err());
        let mut v = stars(&[5]);
        v["currency"] = json!("USD");
        assert!(check_invoice(&p(v.clone()), false).is_err());
        v["provider_token"] = json!("tok");
        assert!(check_invoice(&p(v), false).is_ok());
        let mut v = stars(&[10_000]);
        v["subscription_period"] = json!(SUBSCRIPTION_PERIOD_SECS);
        assert!(check_invoice(&p(v.clone()), true).is_ok());
        assert!(check_invoice(&p(v), false).is_err());
    }

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
