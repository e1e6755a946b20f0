//! The main bot's shop: `/plans`, `/buy <plan>`, the invoice (a Stars subscription link for
//! 30-day plans, a one-time Stars invoice otherwise, a provider invoice on request), the
//! pre-checkout check, the successful payment (applied once per charge), refunds, cancelling
//! the renewal, `/paysupport` and `/terms`.

use chrono::{DateTime, Duration, Utc};
use jobwire_core::billing::{
    InvoicePayload, Plan, STARS, STARS_SUBSCRIPTION_PERIOD_SECS, SUBSCRIPTION_DAYS,
};
use jobwire_store::{
    Grant, LedgerKind, LedgerSource, NewInvoice, NewLedgerEntry, PaymentOutcome, access_of,
};
use rand::Rng;
use teloxide::prelude::*;
use teloxide::types::{
    InlineKeyboardButton, InlineKeyboardMarkup, LabeledPrice, MessageId, PreCheckoutQuery,
    RefundedPayment, Seconds, SuccessfulPayment, TelegramTransactionId,
};

use super::callbacks::{Callback, Screen};
use super::{Turn, describe, send, show, user_chat};
use crate::BotError;
use crate::runtime::{BotRuntime, Inner};
use crate::texts::{self, Lang, billing as t};

/// A fresh invoice nonce: 16 hex digits (64 random bits).
pub(super) fn nonce() -> String {
    let n: u64 = rand::rng().random();
    format!("{n:016x}")
}

/// The period a payment buys.
pub(crate) fn grant_of(plan: &Plan, ends_at: Option<DateTime<Utc>>) -> Grant {
    Grant {
        plan_id: plan.id.to_string(),
        categories: plan.categories.clone(),
        days: plan.days,
        renews: plan.renews(),
        ends_at,
    }
}

/// The grant for a payment whose plan is no longer configured: what Telegram charged for
/// (a subscription's period, or 30 days), every category. Rare; the admin is told.
fn grant_without_plan(plan_id: &str, ends_at: Option<DateTime<Utc>>, renews: bool) -> Grant {
    Grant {
        plan_id: plan_id.to_owned(),
        categories: Vec::new(),
        days: SUBSCRIPTION_DAYS,
        renews,
        ends_at,
    }
}

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

/// Most "show again" buttons under `/status` (Telegram allows 100 buttons per keyboard).
const MAX_SHOW_AGAIN_BUTTONS: usize = texts::cards::MAX_LISTED;

impl Turn<'_> {
    /// The subscription's state in a line (for the settings and the plans screen).
    pub(super) async fn access_line(&self) -> Result<Option<String>, BotError> {
        let billing = &self.inner.billing;
        if !billing.enabled {
            return Ok(None);
        }
        let now = self.inner.now();
        let rows = self.inner.store.access_periods(self.chat_id).await?;
        let access = access_of(&rows);
        let until = access.active_until(now);
        let current: Vec<_> = rows.iter().filter(|r| r.to_period().covers(now)).collect();
        let trial = !current.is_empty() && current.iter().all(|r| r.trial);
        let renews = current
            .iter()
            .any(|r| r.renews && r.canceled_at.is_none() && r.revoked_at.is_none());
        let open = access.open_categories(now);
        let mut plans: Vec<String> = Vec::new();
        for r in current.iter().filter(|r| !r.trial) {
            let title = billing
                .plan(&r.plan_id)
                .map_or_else(|| r.plan_id.clone(), |p| p.title.clone());
            if !plans.contains(&title) {
                plans.push(title);
            }
        }
        let mut line = t::access_state(
            self.lang,
            &plans,
            until,
            trial,
            renews,
            open.as_deref(),
            &self.inner.views.get(),
        );
        let week_ago = now - Duration::days(7);
        let today = now - Duration::hours(24);
        let sent = self
            .inner
            .store
            .sent_to_chat_since(self.chat_id, &[today, week_ago])
            .await?;
        line.push('\n');
        line.push_str(&t::deliveries_line(
            self.lang,
            sent.first().copied().unwrap_or(0),
            sent.get(1).copied().unwrap_or(0),
        ));
        Ok(Some(line))
    }

    /// Whether the user has a Stars subscription that will renew itself.
    async fn renewing(&self) -> Result<bool, BotError> {
        let now = self.inner.now();
        Ok(self
            .inner
            .store
            .access_periods(self.chat_id)
            .await?
            .iter()
            .any(|r| {
                r.renews && r.canceled_at.is_none() && r.revoked_at.is_none() && r.ends_at > now
            }))
    }

    /// The keyboard under `/status`: "show again" for each hidden author (the first
    /// [`MAX_SHOW_AGAIN_BUTTONS`]); with billing, the plans (renew) and, for a renewing
    /// subscription, "cancel renewal"; then back.
    pub(super) async fn status_keyboard(
        &self,
        hidden: &[jobwire_store::HiddenAuthorRow],
    ) -> Result<InlineKeyboardMarkup, BotError> {
        let mut rows: Vec<Vec<InlineKeyboardButton>> = hidden
            .iter()
            .take(MAX_SHOW_AGAIN_BUTTONS)
            .map(|h| {
                vec![InlineKeyboardButton::callback(
                    texts::cards::show_again_button(self.lang, &h.label),
                    Callback::ShowAuthor(h.id).encode(),
                )]
            })
            .collect();
        if self.inner.billing.enabled {
            rows.push(vec![InlineKeyboardButton::callback(
                t::plans_button(self.lang),
                Callback::Screen(Screen::Plans).encode(),
            )]);
        }
        self.finish_rows(rows).await
    }

    /// Closes a billing keyboard: "cancel renewal" for a renewing subscription, then back.
    async fn finish_rows(
        &self,
        mut rows: Vec<Vec<InlineKeyboardButton>>,
    ) -> Result<InlineKeyboardMarkup, BotError> {
        if self.inner.billing.enabled && self.renewing().await? {
            rows.push(vec![InlineKeyboardButton::callback(
                t::cancel_button(self.lang),
                Callback::CancelRenewal.encode(),
            )]);
        }
        rows.push(vec![InlineKeyboardButton::callback(
            texts::labels(self.lang).back,
            Callback::Screen(Screen::Main).encode(),
        )]);
        Ok(InlineKeyboardMarkup::new(rows))
    }

    /// The plans screen: state, plans with buy buttons, cancel renewal when it renews.
    pub(super) async fn plans(&self, edit: Option<MessageId>) -> Result<(), BotError> {
        let billing = &self.inner.billing;
        if !billing.enabled {
            self.send(t::billing_off(self.lang), None).await;
            return Ok(());
        }
        let state = self.access_line().await?.unwrap_or_default();
        let text = t::plans_screen(self.lang, &billing.plans, &self.inner.views.get(), &state);
        let mut rows: Vec<Vec<InlineKeyboardButton>> = Vec::new();
        for plan in &billing.plans {
            let mut row = vec![InlineKeyboardButton::callback(
                t::buy_button(self.lang, plan),
                Callback::Buy {
                    plan: plan.id.to_string(),
                    card: false,
                }
                .encode(),
            )];
            if let (Some(provider), Some(price)) = (&billing.provider, plan.provider_price) {
                row.push(InlineKeyboardButton::callback(
                    t::card_button(self.lang, price, &provider.currency),
                    Callback::Buy {
                        plan: plan.id.to_string(),
                        card: true,
                    }
                    .encode(),
                ));
            }
            rows.push(row);
        }
        let keyboard = self.finish_rows(rows).await?;
        show(self.rt, self.chat_id, edit, text, keyboard).await;
        Ok(())
    }

    /// `/buy <plan>` and the buy buttons: stores a nonce, then sends the invoice (or the
    /// subscription link).
    pub(super) async fn buy(&self, plan_id: &str, card: bool) -> Result<(), BotError> {
        let billing = &self.inner.billing;
        if !billing.enabled {
            self.send(t::billing_off(self.lang), None).await;
            return Ok(());
        }
        let plan_id = plan_id.trim();
        let Some(plan) = billing.plan(plan_id) else {
            self.send(t::no_such_plan(self.lang, plan_id), None).await;
            return Ok(());
        };
        let provider = if card {
            match (&billing.provider, plan.provider_price) {
                (Some(p), Some(price)) => Some((p, price)),
                _ => {
                    self.send(t::no_such_plan(self.lang, plan_id), None).await;
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
            chat_id: self.chat_id,
            plan_id: plan.id.to_string(),
            amount,
            currency: currency.clone(),
        };
        let now = self.inner.now();
        self.inner.store.add_invoice(&invoice, now).await?;
        let payload = InvoicePayload {
            plan: plan.id.clone(),
            chat_id: self.chat_id,
            nonce: invoice.nonce.clone(),
        }
        .encode();
        let description = t::invoice_description(self.lang, plan, &self.inner.views.get());
        let price_label = plan.title.clone();
        let bot = &self.rt.bot;
        let result = match provider {
            Some((p, price)) => bot
                .send_invoice(
                    ChatId(self.chat_id),
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
                            t::pay_button(self.lang, plan),
                            url,
                        )]]);
                        self.send(t::subscription_link(self.lang, plan), Some(keyboard))
                            .await;
                        Ok(())
                    }
                    Ok(Err(e)) => {
                        tracing::warn!(bot = %self.rt.name, error = %e, "Telegram answered an invoice link that is not a URL");
                        self.send(texts::temporary_error(self.lang), None).await;
                        return Ok(());
                    }
                    Err(e) => Err(e),
                }
            }
            None => bot
                .send_invoice(
                    ChatId(self.chat_id),
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
                tracing::info!(bot = %self.rt.name, chat_id = self.chat_id, plan = %plan.id, currency = %currency, "invoice sent");
                metrics::counter!(crate::events::INVOICES_TOTAL, "plan" => plan.id.to_string())
                    .increment(1);
            }
            Err(e) => {
                let error = describe(&e, &self.rt.token);
                tracing::error!(bot = %self.rt.name, chat_id = self.chat_id, plan = %plan.id, error = %error, "sending an invoice failed");
                self.inner.billing.alert(format!(
                    "jobwire: an invoice for plan {} could not be sent to chat {}: {error}",
                    plan.id, self.chat_id
                ));
                self.send(texts::temporary_error(self.lang), None).await;
            }
        }
        Ok(())
    }

    /// A new user's trial, once per Telegram user. `None` when there is none to start.
    pub(super) async fn start_trial(&self) -> Result<Option<DateTime<Utc>>, BotError> {
        let billing = &self.inner.billing;
        if !billing.enabled || billing.trial_days == 0 {
            return Ok(None);
        }
        let grant = Grant {
            plan_id: jobwire_core::billing::TRIAL_PLAN.to_owned(),
            categories: Vec::new(),
            days: billing.trial_days,
            renews: false,
            ends_at: None,
        };
        let now = self.inner.now();
        let started = self
            .inner
            .store
            .start_trial(self.chat_id, &grant, now)
            .await?;
        if let Some(period) = &started {
            tracing::info!(chat_id = self.chat_id, until = %period.ends_at, "trial started");
            metrics::counter!(crate::events::TRIALS_TOTAL).increment(1);
        }
        Ok(started.map(|p| p.ends_at))
    }

    /// The renewal of the user's Stars subscription stops (access runs to the period's end).
    pub(super) async fn cancel_renewal(&self, user_id: UserId) -> Result<(), BotError> {
        let now = self.inner.now();
        let rows = self.inner.store.access_periods(self.chat_id).await?;
        let renewing: Vec<_> = rows
            .iter()
            .filter(|r| {
                r.renews && r.canceled_at.is_none() && r.revoked_at.is_none() && r.ends_at > now
            })
            .collect();
        let Some(latest) = renewing.iter().max_by_key(|r| r.ends_at) else {
            self.send(t::renewal_canceled(self.lang, None), None).await;
            return Ok(());
        };
        // Telegram names a subscription by the charge that started it.
        let ledger = self.inner.store.ledger(Some(self.chat_id), 1000).await?;
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
            let res = self
                .rt
                .bot
                .edit_user_star_subscription(user_id, TelegramTransactionId(charge.clone()), true)
                .await;
            if let Err(e) = res {
                let error = describe(&e, &self.rt.token);
                tracing::error!(chat_id = self.chat_id, error = %error, "cancelling a Stars subscription failed");
                self.send(texts::temporary_error(self.lang), None).await;
                return Ok(());
            }
        }
        self.inner
            .store
            .set_renewal_canceled(self.chat_id, true, now)
            .await?;
        tracing::info!(chat_id = self.chat_id, "subscription renewal cancelled");
        metrics::counter!(crate::events::RENEWALS_CANCELED_TOTAL).increment(1);
        self.send(t::renewal_canceled(self.lang, Some(latest.ends_at)), None)
            .await;
        Ok(())
    }

    /// A successful payment: applied once per charge, whatever the number of deliveries of
    /// the update or of processes receiving it.
    pub(super) async fn successful_payment(
        &self,
        m: &Message,
        p: &SuccessfulPayment,
    ) -> Result<(), BotError> {
        let raw = serde_json::to_string(m).unwrap_or_default();
        let facts = PaymentFacts::from(p);
        if jobwire_core::placement::PlacementPayload::is_placement(&facts.invoice_payload) {
            return self.placement_paid(&facts, raw).await;
        }
        let outcome =
            apply_payment(self.inner, self.chat_id, &facts, LedgerSource::Update, raw).await?;
        if let Some((label, until, renewal)) = outcome {
            let text = if renewal {
                t::renewed(self.lang, until)
            } else {
                t::payment_received(self.lang, &label, until, p.is_recurring)
            };
            self.send(text, None).await;
        }
        Ok(())
    }

    /// A refund Telegram reports (made elsewhere, e.g. by support).
    pub(super) async fn refunded_payment(
        &self,
        m: &Message,
        r: &RefundedPayment,
    ) -> Result<(), BotError> {
        // Telegram may report a refund jobwire made itself (an admin's, a refused
        // placement's): the ledger has it already and the user was told.
        let charge = &r.telegram_payment_charge_id.0;
        if self
            .inner
            .store
            .ledger_entry(charge, LedgerKind::Refund)
            .await?
            .is_some()
        {
            tracing::debug!(chat_id = self.chat_id, charge = %charge, "refund jobwire made, reported back");
            return Ok(());
        }
        let placement = jobwire_core::placement::PlacementPayload::is_placement(&r.invoice_payload);
        let payload = InvoicePayload::parse(&r.invoice_payload).ok();
        let entry = NewLedgerEntry {
            kind: LedgerKind::Refunded,
            charge_id: r.telegram_payment_charge_id.0.clone(),
            provider_charge_id: r.provider_payment_charge_id.clone(),
            chat_id: self.chat_id,
            plan_id: if placement {
                Some("placement".to_owned())
            } else {
                payload.as_ref().map(|p| p.plan.to_string())
            },
            nonce: payload.map(|p| p.nonce),
            amount: i64::from(r.total_amount),
            currency: r.currency.clone(),
            is_recurring: false,
            is_first_recurring: false,
            subscription_expires_at: None,
            source: LedgerSource::Update,
            raw: serde_json::to_string(m).unwrap_or_default(),
        };
        let now = self.inner.now();
        if self.inner.store.apply_refund(&entry, now).await?.is_some() {
            tracing::info!(chat_id = self.chat_id, charge = %entry.charge_id, "refund recorded");
            metrics::counter!(crate::events::REFUNDS_TOTAL, "source" => "telegram").increment(1);
            let text = if placement {
                texts::placements::refunded_elsewhere(self.lang, entry.amount)
            } else {
                t::refunded(self.lang, entry.amount, &entry.currency)
            };
            self.send(text, None).await;
        }
        Ok(())
    }

    pub(super) async fn paysupport(&self) {
        let (ru, en) = &self.inner.billing.paysupport;
        let text = match self.lang {
            Lang::Ru => ru,
            Lang::En => en,
        };
        self.send(texts::escape(text), None).await;
    }

    pub(super) async fn terms(&self) {
        let (ru, en) = &self.inner.billing.terms;
        let text = match self.lang {
            Lang::Ru => ru,
            Lang::En => en,
        };
        self.send(texts::escape(text), None).await;
    }
}

/// What a payment says, from a `successful_payment` or a Stars transaction.
#[derive(Debug, Clone)]
pub(crate) struct PaymentFacts {
    pub charge_id: String,
    pub provider_charge_id: Option<String>,
    pub invoice_payload: String,
    pub amount: i64,
    pub currency: String,
    pub is_recurring: bool,
    pub is_first_recurring: bool,
    pub expires_at: Option<DateTime<Utc>>,
}

impl PaymentFacts {
    /// The ledger row of this payment, for `plan_id` (a plan, or `placement`).
    pub(crate) fn ledger_entry(
        &self,
        chat_id: i64,
        plan_id: String,
        nonce: Option<String>,
        source: LedgerSource,
        raw: String,
    ) -> NewLedgerEntry {
        NewLedgerEntry {
            kind: LedgerKind::Payment,
            charge_id: self.charge_id.clone(),
            provider_charge_id: self.provider_charge_id.clone(),
            chat_id,
            plan_id: Some(plan_id),
            nonce,
            amount: self.amount,
            currency: self.currency.clone(),
            is_recurring: self.is_recurring,
            is_first_recurring: self.is_first_recurring,
            subscription_expires_at: self.expires_at,
            source,
            raw,
        }
    }
}

impl From<&SuccessfulPayment> for PaymentFacts {
    fn from(p: &SuccessfulPayment) -> Self {
        Self {
            charge_id: p.telegram_payment_charge_id.0.clone(),
            provider_charge_id: Some(p.provider_payment_charge_id.clone())
                .filter(|c| !c.is_empty()),
            invoice_payload: p.invoice_payload.clone(),
            amount: i64::from(p.total_amount),
            currency: p.currency.clone(),
            is_recurring: p.is_recurring,
            is_first_recurring: p.is_first_recurring,
            expires_at: p.subscription_expiration_date,
        }
    }
}

/// Records a successful payment and the access it buys, once per charge. Returns what to
/// tell the user (plan title, access end, whether it was a renewal) when it was applied now,
/// `None` when it was applied before.
pub(crate) async fn apply_payment(
    inner: &Inner,
    chat_id: i64,
    p: &PaymentFacts,
    source: LedgerSource,
    raw: String,
) -> Result<Option<(String, DateTime<Utc>, bool)>, BotError> {
    let payload = InvoicePayload::parse(&p.invoice_payload).ok();
    let renewal = p.is_recurring && !p.is_first_recurring;
    let plan_id = payload
        .as_ref()
        .map_or_else(|| "unknown".to_owned(), |x| x.plan.to_string());
    let plan = inner.billing.plan(&plan_id).cloned();
    let ends_at = p.expires_at;
    let grant = match &plan {
        Some(plan) => grant_of(plan, ends_at),
        None => grant_without_plan(&plan_id, ends_at, p.is_recurring),
    };
    let entry = p.ledger_entry(
        chat_id,
        plan_id.clone(),
        payload.as_ref().map(|x| x.nonce.clone()),
        source,
        raw,
    );
    let now = inner.now();
    match inner.store.apply_payment(&entry, &grant, now).await? {
        PaymentOutcome::AlreadyApplied => {
            tracing::info!(chat_id, charge = %entry.charge_id, "payment applied before; skipped");
            Ok(None)
        }
        PaymentOutcome::Applied(period) => {
            let kind = if renewal { "renewal" } else { "payment" };
            tracing::info!(chat_id, charge = %entry.charge_id, plan = %plan_id, amount = entry.amount, currency = %entry.currency, until = %period.ends_at, kind, source = source.as_str(), "payment applied");
            metrics::counter!(crate::events::PAYMENTS_TOTAL, "kind" => kind, "currency" => entry.currency.clone(), "source" => source.as_str()).increment(1);
            if plan.is_none() || payload.is_none() {
                inner.billing.alert(format!(
                    "jobwire: payment {} of chat {chat_id} names plan {plan_id:?}, which is not configured: granted {} days of every category",
                    entry.charge_id, grant.days
                ));
            }
            let label = plan.map_or(plan_id, |p| p.title);
            Ok(Some((label, period.ends_at, renewal)))
        }
    }
}

/// Why a pre-checkout query is refused, or `None` to accept it.
async fn check_pre_checkout(inner: &Inner, q: &PreCheckoutQuery, lang: Lang) -> Option<String> {
    let Ok(payload) = InvoicePayload::parse(&q.invoice_payload) else {
        return Some(t::refuse_unknown(lang));
    };
    if payload.chat_id != user_chat(q.from.id.0) {
        return Some(t::refuse_unknown(lang));
    }
    let invoice = match inner.store.invoice(&payload.nonce).await {
        Ok(Some(invoice)) => invoice,
        Ok(None) => return Some(t::refuse_unknown(lang)),
        Err(e) => {
            tracing::error!(error = %e, "cannot read an invoice for a pre-checkout query");
            return Some(t::refuse_busy(lang));
        }
    };
    if invoice.chat_id != payload.chat_id || invoice.plan_id != payload.plan.as_str() {
        return Some(t::refuse_unknown(lang));
    }
    if invoice.paid_by.is_some() {
        return Some(t::refuse_paid(lang));
    }
    let Some(plan) = inner.billing.plan(payload.plan.as_str()) else {
        return Some(t::refuse_changed(lang));
    };
    // The price asked now must be the invoice's, and the plan's current one.
    let current = if q.currency == STARS {
        Some(i64::from(plan.stars))
    } else {
        inner
            .billing
            .provider
            .as_ref()
            .filter(|p| p.currency == q.currency)
            .and(plan.provider_price)
            .and_then(|p| i64::try_from(p).ok())
    };
    let asked = i64::from(q.total_amount);
    if q.currency != invoice.currency || asked != invoice.amount || current != Some(asked) {
        return Some(t::refuse_changed(lang));
    }
    None
}

/// Answers a pre-checkout query (Telegram waits at most 10 s).
pub(super) async fn on_pre_checkout(
    inner: &Inner,
    rt: &BotRuntime,
    q: &PreCheckoutQuery,
) -> Result<(), BotError> {
    let lang = Lang::from_code(q.from.language_code.as_deref());
    let placement = jobwire_core::placement::PlacementPayload::is_placement(&q.invoice_payload);
    let refusal = if rt.is_main && placement {
        super::placements::check_placement_pre_checkout(inner, q, lang).await
    } else if rt.is_main && inner.billing.enabled {
        check_pre_checkout(inner, q, lang).await
    } else {
        Some(t::refuse_unknown(lang))
    };
    let mut req = rt
        .bot
        .answer_pre_checkout_query(q.id.clone(), refusal.is_none());
    if let Some(reason) = &refusal {
        req = req.error_message(reason.clone());
    }
    let ok = refusal.is_none();
    match req.await {
        Ok(_) => {
            tracing::info!(bot = %rt.name, user = q.from.id.0, ok, currency = %q.currency, amount = q.total_amount, "pre-checkout answered");
            metrics::counter!(crate::events::PRE_CHECKOUTS_TOTAL, "ok" => if ok { "true" } else { "false" }).increment(1);
            Ok(())
        }
        Err(e) => {
            let error = describe(&e, &rt.token);
            tracing::error!(bot = %rt.name, user = q.from.id.0, error = %error, "answering a pre-checkout query failed");
            inner.billing.alert(format!(
                "jobwire: a pre-checkout query of user {} could not be answered: {error}",
                q.from.id.0
            ));
            Err(BotError::Telegram {
                bot: rt.name.clone(),
                message: error,
            })
        }
    }
}

/// Sends a text from the main bot with an optional button to the plans screen.
pub(crate) async fn notify(rt: &BotRuntime, chat_id: i64, text: String, renew: Option<Lang>) {
    let keyboard = renew.map(|lang| {
        InlineKeyboardMarkup::new([[InlineKeyboardButton::callback(
            t::renew_button(lang),
            Callback::Screen(Screen::Plans).encode(),
        )]])
    });
    send(rt, chat_id, text, keyboard).await;
}
