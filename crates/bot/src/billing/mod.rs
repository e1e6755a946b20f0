//! Billing around the payment: reminders before a period ends and the one expiry message
//! after it, the reconciliation of Telegram's Stars transactions with the ledger, and the
//! admin's refund.
//!
//! Every message here is claimed in the store before it is sent
//! ([`jobwire_store::BillingStore::claim_billing_notice`]), so it goes out once whatever the
//! number of processes and restarts; every payment found by reconciliation is applied once
//! per charge like any other.

mod config;

use std::collections::BTreeMap;
use std::sync::Arc;

use chrono::{DateTime, Duration, Utc};
use jobwire_core::billing::{InvoicePayload, TRIAL_PLAN};
use jobwire_store::{AccessPeriodRow, LedgerKind, LedgerSource, NewLedgerEntry, Store, access_of};
use teloxide::prelude::*;
use teloxide::types::{
    StarTransaction, TelegramTransactionId, TransactionPartner, TransactionPartnerUserKind,
};

pub use config::{AlertFn, BillingConfig, BillingSection, PlanSection, ProviderConfig};

use crate::BotError;
use crate::handler::{PaymentFacts, apply_payment, describe, notify};
use crate::runtime::{BotRuntime, Inner};
use crate::texts::billing as t;

/// How far back ended periods are looked at for the expiry message.
const LOOKBACK_HOURS: i64 = 48;
/// Stars transactions read per reconciliation (pages of 100).
const RECONCILE_PAGES: u32 = 20;

/// Runs until shutdown: reminders and expiries every `remind_every`, reconciliation every
/// `reconcile_every`.
pub(crate) async fn run(inner: Arc<Inner>, main: Arc<BotRuntime>) {
    let mut remind = tokio::time::interval(inner.billing.remind_every);
    remind.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut reconcile = tokio::time::interval(inner.billing.reconcile_every);
    reconcile.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = inner.shutdown.cancelled() => return,
            _ = remind.tick() => {
                if let Err(e) = remind_once(&inner, &main).await {
                    tracing::warn!(error = %e, "billing reminders failed; trying again");
                }
            }
            _ = reconcile.tick() => {
                match reconcile_once(&inner, &main).await {
                    Ok(n) if n > 0 => tracing::warn!(applied = n, "reconciliation applied what the ledger lacked"),
                    Ok(_) => {}
                    Err(e) => tracing::warn!(error = %e, "reconciliation failed; trying again"),
                }
            }
        }
    }
}

/// Which notice a chat is due, if any, at `now`: a reminder 3 days or 1 day before the end
/// of a period that does not renew itself, or the expiry message once nothing covers `now`.
fn due_notice(
    rows: &[&AccessPeriodRow],
    now: DateTime<Utc>,
) -> Option<(&'static str, AccessPeriodRow, DateTime<Utc>)> {
    let owned: Vec<AccessPeriodRow> = rows.iter().map(|r| (*r).clone()).collect();
    let access = access_of(&owned);
    if let Some(until) = access.active_until(now) {
        // The period the access ends with.
        let last = owned
            .iter()
            .filter(|r| r.revoked_at.is_none() && r.ends_at == until)
            .max_by_key(|r| r.id)?;
        if last.renews && last.canceled_at.is_none() {
            return None; // Telegram renews it; a failure gets the grace day, then expiry
        }
        let left = until - now;
        let length = last.ends_at - last.starts_at;
        for (days, notice) in [(1, "remind_1d"), (3, "remind_3d")] {
            let offset = Duration::days(days);
            if left <= offset && length > offset {
                return Some((notice, last.clone(), until));
            }
        }
        return None;
    }
    // Nothing covers now: the period that ended last (not a refunded one) gets the message.
    let ended = owned
        .iter()
        .filter(|r| r.revoked_at.is_none())
        .filter(|r| r.to_period().effective_end() <= now)
        .max_by_key(|r| r.to_period().effective_end())?;
    Some(("ended", ended.clone(), ended.ends_at))
}

/// One look for due reminders and expiries; also sets the active-subscribers gauge.
pub(crate) async fn remind_once(inner: &Inner, main: &BotRuntime) -> Result<usize, BotError> {
    if !inner.billing.enabled {
        return Ok(0);
    }
    let now = inner.now();
    let rows = inner
        .store
        .access_periods_ending_after(now - Duration::hours(LOOKBACK_HOURS))
        .await?;
    let mut by_chat: BTreeMap<i64, Vec<&AccessPeriodRow>> = BTreeMap::new();
    for row in &rows {
        by_chat.entry(row.chat_id).or_default().push(row);
    }
    let mut active: BTreeMap<String, u64> = BTreeMap::new();
    for plan in &inner.billing.plans {
        active.insert(plan.id.to_string(), 0);
    }
    active.insert(TRIAL_PLAN.to_owned(), 0);
    let mut sent = 0;
    for (chat_id, periods) in by_chat {
        for p in periods.iter().filter(|p| p.to_period().covers(now)) {
            *active.entry(p.plan_id.clone()).or_default() += 1;
        }
        let Some((notice, period, until)) = due_notice(&periods, now) else {
            continue;
        };
        if !inner
            .store
            .claim_billing_notice(period.id, notice, now)
            .await?
        {
            continue;
        }
        let lang = inner.language_of(chat_id).await;
        let text = match notice {
            "remind_1d" => t::reminder(lang, 1, until),
            "remind_3d" => t::reminder(lang, 3, until),
            _ => {
                metrics::counter!(crate::events::EXPIRIES_TOTAL, "trial" => if period.trial { "true" } else { "false" }).increment(1);
                t::expired(lang, period.trial)
            }
        };
        tracing::info!(chat_id, notice, period = period.id.get(), "billing notice");
        notify(main, chat_id, text, Some(lang)).await;
        sent += 1;
    }
    for (plan, n) in active {
        #[allow(clippy::cast_precision_loss)]
        metrics::gauge!(crate::events::ACTIVE_SUBSCRIBERS, "plan" => plan).set(n as f64);
    }
    Ok(sent)
}

/// Reads Telegram's Stars transactions (newest first) and applies every payment and refund
/// the ledger lacks, telling the admins of each. Returns how many were applied.
pub(crate) async fn reconcile_once(inner: &Inner, main: &BotRuntime) -> Result<usize, BotError> {
    if !inner.billing.enabled && inner.placements.is_none() {
        return Ok(0);
    }
    let mut applied = 0;
    for page in 0..RECONCILE_PAGES {
        let list = main
            .bot
            .get_star_transactions()
            .offset(page * 100)
            .limit(100)
            .await
            .map_err(|e| BotError::Telegram {
                bot: main.name.clone(),
                message: describe(&e, &main.token),
            })?;
        let n = list.transactions.len();
        for tx in &list.transactions {
            applied += reconcile_one(inner, tx).await?;
        }
        if n < 100 {
            break;
        }
    }
    Ok(applied)
}

async fn reconcile_one(inner: &Inner, tx: &StarTransaction) -> Result<usize, BotError> {
    let raw = serde_json::to_string(tx).unwrap_or_default();
    let charge = tx.id.0.clone();
    // An incoming invoice payment from a user.
    if let Some(TransactionPartner::User(u)) = &tx.source
        && let TransactionPartnerUserKind::InvoicePayment(pay) = &u.kind
    {
        if inner
            .store
            .ledger_entry(&charge, LedgerKind::Payment)
            .await?
            .is_some()
        {
            return Ok(0);
        }
        let chat_id = i64::try_from(u.user.id.0).unwrap_or(i64::MAX);
        let payload = pay.invoice_payload.clone().unwrap_or_default();
        let period = pay.subscription_period.map(|s| i64::from(s.seconds()));
        // A subscription's first payment or a renewal: a renewal follows an earlier payment of
        // the same plan.
        let plan = InvoicePayload::parse(&payload)
            .ok()
            .map(|p| p.plan.to_string());
        let earlier = inner
            .store
            .ledger(Some(chat_id), 1000)
            .await?
            .iter()
            .any(|l| l.kind == LedgerKind::Payment && l.is_recurring && l.plan_id == plan);
        let facts = PaymentFacts {
            charge_id: charge.clone(),
            provider_charge_id: None,
            invoice_payload: payload,
            amount: i64::from(tx.amount),
            currency: jobwire_core::billing::STARS.to_owned(),
            is_recurring: period.is_some(),
            is_first_recurring: period.is_some() && !earlier,
            expires_at: period.map(|s| tx.date + Duration::seconds(s)),
        };
        let applied =
            if jobwire_core::placement::PlacementPayload::is_placement(&facts.invoice_payload) {
                crate::handler::apply_placement_payment(
                    inner,
                    chat_id,
                    &facts,
                    LedgerSource::Reconciliation,
                    raw,
                )
                .await?
                .is_some()
            } else {
                apply_payment(inner, chat_id, &facts, LedgerSource::Reconciliation, raw)
                    .await?
                    .is_some()
            };
        if applied {
            metrics::counter!(crate::events::RECONCILIATION_DIFFERENCES_TOTAL, "kind" => "payment")
                .increment(1);
            inner.billing.alert(format!(
                "jobwire: Telegram has payment {charge} ({} ⭐, user {chat_id}) that the ledger lacked; applied it",
                tx.amount
            ));
            return Ok(1);
        }
        return Ok(0);
    }
    // A refund to a user (its id is the original charge's).
    if let Some(TransactionPartner::User(u)) = &tx.receiver {
        let have = |kind| inner.store.ledger_entry(&charge, kind);
        if have(LedgerKind::Refund).await?.is_some() || have(LedgerKind::Refunded).await?.is_some()
        {
            return Ok(0);
        }
        let Some(paid) = have(LedgerKind::Payment).await? else {
            return Ok(0); // a refund of something jobwire never sold
        };
        let chat_id = i64::try_from(u.user.id.0).unwrap_or(i64::MAX);
        let entry = NewLedgerEntry {
            kind: LedgerKind::Refunded,
            charge_id: charge.clone(),
            provider_charge_id: None,
            chat_id,
            plan_id: paid.plan_id.clone(),
            nonce: paid.nonce.clone(),
            amount: i64::from(tx.amount),
            currency: jobwire_core::billing::STARS.to_owned(),
            is_recurring: false,
            is_first_recurring: false,
            subscription_expires_at: None,
            source: LedgerSource::Reconciliation,
            raw,
        };
        if inner
            .store
            .apply_refund(&entry, inner.now())
            .await?
            .is_some()
        {
            metrics::counter!(crate::events::RECONCILIATION_DIFFERENCES_TOTAL, "kind" => "refund")
                .increment(1);
            metrics::counter!(crate::events::REFUNDS_TOTAL, "source" => "reconciliation")
                .increment(1);
            inner.billing.alert(format!(
                "jobwire: Telegram refunded payment {charge} (user {chat_id}) without the ledger knowing; access ended"
            ));
            return Ok(1);
        }
    }
    Ok(0)
}

/// An admin's refund of a Stars payment: `refundStarPayment`, then the ledger row and the end
/// of the access the payment bought. A refund Telegram refuses (unknown, already refunded)
/// is an error naming why.
pub async fn refund_star_payment(
    store: &Arc<dyn Store>,
    bot: &Bot,
    token: &str,
    charge_id: &str,
    now: DateTime<Utc>,
) -> Result<i64, BotError> {
    refund_star_payment_for(store, bot, token, charge_id, "admin", now).await
}

/// [`refund_star_payment`], saying why (`admin`, `placement`) in the log, the metric and the
/// ledger row's raw record.
pub(crate) async fn refund_star_payment_for(
    store: &Arc<dyn Store>,
    bot: &Bot,
    token: &str,
    charge_id: &str,
    why: &'static str,
    now: DateTime<Utc>,
) -> Result<i64, BotError> {
    let paid = store
        .ledger_entry(charge_id, LedgerKind::Payment)
        .await?
        .ok_or_else(|| BotError::Config(format!("no payment {charge_id:?} in the ledger")))?;
    if store
        .ledger_entry(charge_id, LedgerKind::Refund)
        .await?
        .is_some()
        || store
            .ledger_entry(charge_id, LedgerKind::Refunded)
            .await?
            .is_some()
    {
        return Err(BotError::Config(format!(
            "payment {charge_id:?} was refunded before"
        )));
    }
    let user = UserId(u64::try_from(paid.chat_id).unwrap_or(0));
    bot.refund_star_payment(user, TelegramTransactionId(charge_id.to_owned()))
        .await
        .map_err(|e| BotError::Telegram {
            bot: "main".into(),
            message: describe(&e, token),
        })?;
    let entry = NewLedgerEntry {
        kind: LedgerKind::Refund,
        charge_id: charge_id.to_owned(),
        provider_charge_id: None,
        chat_id: paid.chat_id,
        plan_id: paid.plan_id.clone(),
        nonce: paid.nonce.clone(),
        amount: paid.amount,
        currency: paid.currency.clone(),
        is_recurring: false,
        is_first_recurring: false,
        subscription_expires_at: None,
        source: LedgerSource::Admin,
        raw: serde_json::json!({ "refund_star_payment": charge_id, "for": why }).to_string(),
    };
    store.apply_refund(&entry, now).await?;
    metrics::counter!(crate::events::REFUNDS_TOTAL, "source" => why).increment(1);
    tracing::info!(charge = %charge_id, chat_id = paid.chat_id, why, "payment refunded");
    Ok(paid.chat_id)
}
