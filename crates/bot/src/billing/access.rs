//! The subscription's state as the menus show it: the access line under the settings,
//! whether it renews, and the trial a new user gets.

use async_trait::async_trait;
use chrono::{DateTime, Duration, Utc};
use jobwire_store::{Grant, access_of};

use super::Billing;
use crate::BotError;
use crate::access::Access;
use crate::events::BotEvent;
use crate::texts::{Lang, billing as t};
use crate::turn::Turn;

impl Billing {
    /// The subscription's state in a line (for the settings and the plans screen).
    pub(super) async fn access_line(
        &self,
        chat_id: i64,
        lang: Lang,
    ) -> Result<Option<String>, BotError> {
        let billing = &self.config;
        if !billing.enabled {
            return Ok(None);
        }
        let now = self.now();
        let rows = self.store.access_periods(chat_id).await?;
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
            lang,
            &plans,
            until,
            trial,
            renews,
            open.as_deref(),
            &self.categories.views(),
        );
        let week_ago = now - Duration::days(7);
        let today = now - Duration::hours(24);
        let sent = self
            .deliveries
            .sent_to_chat_since(chat_id, &[today, week_ago])
            .await?;
        line.push('\n');
        line.push_str(&t::deliveries_line(
            lang,
            sent.first().copied().unwrap_or(0),
            sent.get(1).copied().unwrap_or(0),
        ));
        Ok(Some(line))
    }

    /// Whether the user has a Stars subscription that will renew itself.
    pub(super) async fn renewing(&self, chat_id: i64) -> Result<bool, BotError> {
        let now = self.now();
        Ok(self.store.access_periods(chat_id).await?.iter().any(|r| {
            r.renews && r.canceled_at.is_none() && r.revoked_at.is_none() && r.ends_at > now
        }))
    }

    /// A new user's trial, once per Telegram user. `None` when there is none to start.
    async fn trial(&self, turn: &Turn<'_>) -> Result<Option<DateTime<Utc>>, BotError> {
        let billing = &self.config;
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
        let now = self.now();
        let started = self.store.start_trial(turn.chat_id, &grant, now).await?;
        if let Some(period) = &started {
            BotEvent::TrialStarted {
                chat_id: turn.chat_id,
                until: period.ends_at,
            }
            .emit();
        }
        Ok(started.map(|p| p.ends_at))
    }
}

#[async_trait]
impl Access for Billing {
    fn selling(&self) -> bool {
        self.config.enabled
    }

    async fn line(&self, chat_id: i64, lang: Lang) -> Result<Option<String>, BotError> {
        self.access_line(chat_id, lang).await
    }

    async fn renewing(&self, chat_id: i64) -> Result<bool, BotError> {
        Billing::renewing(self, chat_id).await
    }

    async fn start_trial(&self, turn: &Turn<'_>) -> Result<(), BotError> {
        // A trial once per Telegram user (the store remembers every trial ever started).
        if let Some(until) = self.trial(turn).await? {
            turn.send(
                t::trial_started(turn.lang, self.config.trial_days, until),
                None,
            )
            .await;
        }
        Ok(())
    }
}
