//! The shop: the plans screen, `/buy` and the invoices, cancelling the renewal,
//! `/paysupport` and `/terms`.

use jobwire_core::billing::{InvoicePayload, Plan, STARS, STARS_SUBSCRIPTION_PERIOD_SECS};
use jobwire_store::{LedgerKind, NewInvoice};
use teloxide::prelude::*;
use teloxide::types::{
    InlineKeyboardButton, InlineKeyboardMarkup, LabeledPrice, MessageId, Seconds,
    TelegramTransactionId,
};

use super::Billing;
use crate::BotError;
use crate::callbacks::{Callback, closing_rows};
use crate::events::BotEvent;
use crate::payments::nonce;
use crate::telegram::describe;
use crate::texts::{self, Lang, billing as t};
use crate::turn::Turn;

/// The YooKassa receipt (54-FZ) a provider invoice carries in `provider_data`.
fn receipt(plan: &Plan, price: u64, currency: &str, vat_code: u8) -> String {
    let value = format!("{}.{:02}", price / 100, price % 100);
    serde_json::json!({
        "receipt": {
            "items": [{
                "description": plan.title,
                "quantity": "1.00",
                "amount": { "value": value, "currency": currency },
                "vat_code": vat_code,
                "payment_mode": "full_payment",
                "payment_subject": "service",
            }]
        }
    })
    .to_string()
}

impl Billing {
    /// Closes a billing keyboard: "cancel renewal" for a renewing subscription, then back.
    async fn finish_rows(
        &self,
        turn: &Turn<'_>,
        mut rows: Vec<Vec<InlineKeyboardButton>>,
    ) -> Result<InlineKeyboardMarkup, BotError> {
        let renewing = self.config.enabled && self.renewing(turn.chat_id).await?;
        rows.extend(closing_rows(turn.lang, renewing));
        Ok(InlineKeyboardMarkup::new(rows))
    }

    /// The plans screen: state, plans with buy buttons, cancel renewal when it renews.
    pub(crate) async fn plans(
        &self,
        turn: &Turn<'_>,
        edit: Option<MessageId>,
    ) -> Result<(), BotError> {
        let billing = &self.config;
        if !billing.enabled {
            turn.send(t::billing_off(turn.lang), None).await;
            return Ok(());
        }
        let state = self
            .access_line(turn.chat_id, turn.lang)
            .await?
            .unwrap_or_default();
        let text = t::plans_screen(turn.lang, &billing.plans, &self.categories.views(), &state);
        let mut rows: Vec<Vec<InlineKeyboardButton>> = Vec::new();
        for plan in &billing.plans {
            let mut row = vec![InlineKeyboardButton::callback(
                t::buy_button(turn.lang, plan),
                Callback::Buy {
                    plan: plan.id.to_string(),
                    card: false,
                }
                .encode(),
            )];
            if let (Some(provider), Some(price)) = (&billing.provider, plan.provider_price) {
                row.push(InlineKeyboardButton::callback(
                    t::card_button(turn.lang, price, &provider.currency),
                    Callback::Buy {
                        plan: plan.id.to_string(),
                        card: true,
                    }
                    .encode(),
                ));
            }
            rows.push(row);
        }
        let keyboard = self.finish_rows(turn, rows).await?;
        turn.show(edit, text, keyboard).await;
        Ok(())
    }

    /// `/buy <plan>` and the buy buttons: stores a nonce, then sends the invoice (or the
    /// subscription link).
    pub(crate) async fn buy(
        &self,
        turn: &Turn<'_>,
        plan_id: &str,
        card: bool,
    ) -> Result<(), BotError> {
        let billing = &self.config;
        if !billing.enabled {
            turn.send(t::billing_off(turn.lang), None).await;
            return Ok(());
        }
        let plan_id = plan_id.trim();
        let Some(plan) = billing.plan(plan_id) else {
            turn.send(t::no_such_plan(turn.lang, plan_id), None).await;
            return Ok(());
        };
        let provider = if card {
            match (&billing.provider, plan.provider_price) {
                (Some(p), Some(price)) => Some((p, price)),
                _ => {
                    turn.send(t::no_such_plan(turn.lang, plan_id), None).await;
                    return Ok(());
                }
            }
        } else {
            None
        };
        let (amount, currency) = match provider {
            Some((p, price)) => (i64::try_from(price).unwrap_or(i64::MAX), p.currency.clone()),
            None => (i64::from(plan.stars), STARS.to_owned()),
        };
        let invoice = NewInvoice {
            nonce: nonce(),
            chat_id: turn.chat_id,
            plan_id: plan.id.to_string(),
            amount,
            currency: currency.clone(),
        };
        let now = self.now();
        self.store.add_invoice(&invoice, now).await?;
        let payload = InvoicePayload {
            plan: plan.id.clone(),
            chat_id: turn.chat_id,
            nonce: invoice.nonce.clone(),
        }
        .encode();
        let description = t::invoice_description(turn.lang, plan, &self.categories.views());
        let price_label = plan.title.clone();
        let bot = &turn.rt.bot;
        let result = match provider {
            Some((p, price)) => bot
                .send_invoice(
                    ChatId(turn.chat_id),
                    plan.title.clone(),
                    description,
                    payload,
                    currency.clone(),
                    [LabeledPrice::new(
                        price_label,
                        u32::try_from(price).unwrap_or(u32::MAX),
                    )],
                )
                .provider_token(p.token.expose())
                .need_email(true)
                .send_email_to_provider(true)
                .provider_data(receipt(plan, price, &currency, p.vat_code))
                .await
                .map(drop),
            None if plan.renews() => {
                let link = bot
                    .create_invoice_link(
                        plan.title.clone(),
                        description,
                        payload,
                        STARS,
                        [LabeledPrice::new(price_label, plan.stars)],
                    )
                    .subscription_period(Seconds::from_seconds(STARS_SUBSCRIPTION_PERIOD_SECS))
                    .await;
                match link.map(|l| url::Url::parse(&l)) {
                    Ok(Ok(url)) => {
                        let keyboard = InlineKeyboardMarkup::new([[InlineKeyboardButton::url(
                            t::pay_button(turn.lang, plan),
                            url,
                        )]]);
                        turn.send(t::subscription_link(turn.lang, plan), Some(keyboard))
                            .await;
                        Ok(())
                    }
                    Ok(Err(e)) => {
                        tracing::warn!(bot = %turn.rt.name, error = %e, "Telegram answered an invoice link that is not a URL");
                        turn.send(texts::temporary_error(turn.lang), None).await;
                        return Ok(());
                    }
                    Err(e) => Err(e),
                }
            }
            None => bot
                .send_invoice(
                    ChatId(turn.chat_id),
                    plan.title.clone(),
                    description,
                    payload,
                    STARS,
                    [LabeledPrice::new(price_label, plan.stars)],
                )
                .provider_token("")
                .await
                .map(drop),
        };
        match result {
            Ok(()) => {
                BotEvent::InvoiceSent {
                    bot: &turn.rt.name,
                    chat_id: turn.chat_id,
                    plan: plan.id.as_str(),
                    currency: &currency,
                }
                .emit();
            }
            Err(e) => {
                let error = describe(&e, &turn.rt.token);
                tracing::error!(bot = %turn.rt.name, chat_id = turn.chat_id, plan = %plan.id, error = %error, "sending an invoice failed");
                self.config.alert(format!(
                    "jobwire: an invoice for plan {} could not be sent to chat {}: {error}",
                    plan.id, turn.chat_id
                ));
                turn.send(texts::temporary_error(turn.lang), None).await;
            }
        }
        Ok(())
    }

    /// The renewal of the user's Stars subscription stops (access runs to the period's end).
    pub(crate) async fn cancel_renewal(
        &self,
        turn: &Turn<'_>,
        user_id: UserId,
    ) -> Result<(), BotError> {
        let now = self.now();
        let rows = self.store.access_periods(turn.chat_id).await?;
        let renewing: Vec<_> = rows
            .iter()
            .filter(|r| {
                r.renews && r.canceled_at.is_none() && r.revoked_at.is_none() && r.ends_at > now
            })
            .collect();
        let Some(latest) = renewing.iter().max_by_key(|r| r.ends_at) else {
            turn.send(t::renewal_canceled(turn.lang, None), None).await;
            return Ok(());
        };
        // Telegram names a subscription by the charge that started it.
        let ledger = self.store.ledger(Some(turn.chat_id), 1000).await?;
        let first = ledger
            .iter()
            .filter(|l| {
                l.kind == LedgerKind::Payment
                    && l.is_first_recurring
                    && l.plan_id.as_deref() == Some(latest.plan_id.as_str())
            })
            .map(|l| l.charge_id.clone())
            .next()
            .or_else(|| latest.charge_id.clone());
        if let Some(charge) = first {
            let res = turn
                .rt
                .bot
                .edit_user_star_subscription(user_id, TelegramTransactionId(charge.clone()), true)
                .await;
            if let Err(e) = res {
                let error = describe(&e, &turn.rt.token);
                tracing::error!(chat_id = turn.chat_id, error = %error, "cancelling a Stars subscription failed");
                turn.send(texts::temporary_error(turn.lang), None).await;
                return Ok(());
            }
        }
        self.store
            .set_renewal_canceled(turn.chat_id, true, now)
            .await?;
        BotEvent::RenewalCanceled {
            chat_id: turn.chat_id,
        }
        .emit();
        turn.send(t::renewal_canceled(turn.lang, Some(latest.ends_at)), None)
            .await;
        Ok(())
    }

    pub(crate) async fn paysupport(&self, turn: &Turn<'_>) {
        let (ru, en) = &self.config.paysupport;
        let text = match turn.lang {
            Lang::Ru => ru,
            Lang::En => en,
        };
        turn.send(texts::escape(text), None).await;
    }

    pub(crate) async fn terms(&self, turn: &Turn<'_>) {
        let (ru, en) = &self.config.terms;
        let text = match turn.lang {
            Lang::Ru => ru,
            Lang::En => en,
        };
        turn.send(texts::escape(text), None).await;
    }
}
