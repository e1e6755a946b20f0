//! The simulated user: paying an invoice ([`TelegramState::pay`]), a subscription's renewal
//! and a refund from Telegram, and what the control endpoints read back.

use chrono::{DateTime, Utc};
use rand::Rng;
use serde_json::{Map, Value, json};
use tokio::sync::oneshot;

use super::{
    Charge, PayOptions, PayOutcome, PayUser, PaymentError, PendingQuery, PreCheckoutAnswer,
    RecordedInvoice, RecordedRefund, RefundOrigin, Renewal, STARS, StarTransactionKind,
    StarTransactionRecord, Subscription, random_alnum, record_refund,
};
use crate::TestkitError;
use crate::telegram::{TelegramState, state::lock};

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
