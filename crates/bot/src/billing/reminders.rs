//! Reminders before a period that does not renew itself ends (3 days and 1 day before),
//! and the one expiry message after access ended; also the active-subscribers gauge.

use std::collections::BTreeMap;

use chrono::{DateTime, Duration, Utc};
use jobwire_core::billing::TRIAL_PLAN;
use jobwire_store::{AccessPeriodRow, access_of};
use teloxide::types::{InlineKeyboardButton, InlineKeyboardMarkup};

use super::Billing;
use crate::BotError;
use crate::callbacks::{Callback, Screen};
use crate::events::BotEvent;
use crate::telegram::{BotRuntime, send};
use crate::texts::{Lang, billing as t};

/// How far back ended periods are looked at for the expiry message.
const LOOKBACK_HOURS: i64 = 48;

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

impl Billing {
    /// One look for due reminders and expiries; also sets the active-subscribers gauge.
    pub(crate) async fn remind_once(&self, main: &BotRuntime) -> Result<usize, BotError> {
        if !self.config.enabled {
            return Ok(0);
        }
        let now = self.now();
        let rows = self
            .store
            .access_periods_ending_after(now - Duration::hours(LOOKBACK_HOURS))
            .await?;
        let mut by_chat: BTreeMap<i64, Vec<&AccessPeriodRow>> = BTreeMap::new();
        for row in &rows {
            by_chat.entry(row.chat_id).or_default().push(row);
        }
        let mut active: BTreeMap<String, u64> = BTreeMap::new();
        for plan in &self.config.plans {
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
            if !self
                .store
                .claim_billing_notice(period.id, notice, now)
                .await?
            {
                continue;
            }
            let lang = self.languages.of(chat_id).await;
            let text = match notice {
                "remind_1d" => t::reminder(lang, 1, until),
                "remind_3d" => t::reminder(lang, 3, until),
                _ => t::expired(lang, period.trial),
            };
            BotEvent::BillingNotice {
                chat_id,
                notice,
                period: period.id.get(),
                trial: period.trial,
            }
            .emit();
            notify(main, chat_id, text, lang).await;
            sent += 1;
        }
        BotEvent::ActiveSubscribers { by_plan: &active }.emit();
        Ok(sent)
    }
}

/// Sends a text from the main bot with a button to the plans screen.
async fn notify(rt: &BotRuntime, chat_id: i64, text: String, lang: Lang) {
    let keyboard = InlineKeyboardMarkup::new([[InlineKeyboardButton::callback(
        t::renew_button(lang),
        Callback::Screen(Screen::Plans).encode(),
    )]]);
    send(rt, chat_id, text, Some(keyboard)).await;
}
