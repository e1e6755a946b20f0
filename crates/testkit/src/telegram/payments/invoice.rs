//! Invoices: Telegram's checks of `sendInvoice` and `createInvoiceLink`, and the two methods.

use chrono::Utc;
use serde_json::{Value, json};

use super::{
    InvoicePrice, MAX_SUBSCRIPTION_STARS, RecordedInvoice, STARS, SUBSCRIPTION_PERIOD_SECS,
    random_alnum,
};
use crate::telegram::{
    TelegramState,
    errors::{ApiResult, bad},
    methods::{resolve_chat, send_checked},
    params::{Params, ParamsExt},
    state::{BotState, lock},
};

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
pub(in crate::telegram) fn send_invoice(
    st: &TelegramState,
    bot: &BotState,
    p: &Params,
) -> ApiResult {
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
pub(in crate::telegram) fn create_invoice_link(
    st: &TelegramState,
    bot: &BotState,
    p: &Params,
) -> ApiResult {
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
}
