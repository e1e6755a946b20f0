//! `[billing]` and `[[plans]]`: the file's sections and the checked [`BillingConfig`] the
//! bots run with.

use std::fmt;
use std::time::Duration;

use jobwire_core::CategorySlug;
use jobwire_core::billing::{Plan, PlanId};
use jobwire_core::secret::Secret;
use serde::Deserialize;

use crate::BotError;

/// `[billing]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct BillingSection {
    /// Off: everyone subscribed gets everything (no plans, no payments).
    pub enabled: bool,
    /// Days of the free trial a new user gets once (0: no trial).
    pub trial_days: u32,
    /// The environment variable holding a payment provider's token (e.g. YooKassa's from
    /// @BotFather). Unset: Telegram Stars only. Telegram's rules require Stars for digital
    /// goods inside its apps; a provider is for what those rules allow.
    pub provider_token_env: Option<String>,
    /// The provider's currency (ISO 4217), e.g. "RUB".
    pub provider_currency: String,
    /// The VAT code of YooKassa's 54-FZ receipt line (1: no VAT).
    pub receipt_vat_code: u8,
    /// How often Telegram's Stars transactions are compared with the ledger, in seconds.
    pub reconcile_every_secs: u64,
    /// How often reminders and expiries are looked for, in seconds.
    pub remind_every_secs: u64,
    /// `/paysupport`, in Russian and English.
    pub paysupport_ru: String,
    pub paysupport_en: String,
    /// `/terms`, in Russian and English.
    pub terms_ru: String,
    pub terms_en: String,
}

impl Default for BillingSection {
    fn default() -> Self {
        Self {
            enabled: false,
            trial_days: 3,
            provider_token_env: None,
            provider_currency: "RUB".into(),
            receipt_vat_code: 1,
            reconcile_every_secs: 600,
            remind_every_secs: 60,
            paysupport_ru: "Вопросы об оплате: напишите администратору бота. Мы ответим в течение \
                            суток; возврат Stars возможен в течение 21 дня после оплаты."
                .into(),
            paysupport_en: "Payment questions: write to the bot's administrator. We answer within \
                            a day; Stars can be refunded within 21 days of the payment."
                .into(),
            terms_ru: "Подписка даёт доступ к вакансиям выбранных категорий на оплаченный срок. \
                       Подписка на 30 дней продлевается автоматически, пока вы её не отмените \
                       (/status). Вакансии публикуют третьи лица; мы не отвечаем за их содержание."
                .into(),
            terms_en:
                "A subscription gives access to the vacancies of its categories for the paid \
                       period. A 30-day subscription renews itself until you cancel it (/status). \
                       Vacancies are posted by third parties; we are not responsible for them."
                    .into(),
        }
    }
}

/// `[[plans]]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlanSection {
    /// Stable id, used in invoice payloads and the ledger.
    pub id: String,
    pub title: String,
    /// Price in Telegram Stars (XTR).
    pub stars: u32,
    /// 30: a Stars subscription that renews itself every 30 days; else a one-time payment.
    pub days: u32,
    /// Empty: every category; else only these.
    #[serde(default)]
    pub categories: Vec<String>,
    /// Price through the payment provider, in the smallest unit of `provider_currency`.
    pub provider_price: Option<u64>,
}

/// A payment provider (optional).
#[derive(Clone)]
pub struct ProviderConfig {
    pub token: Secret,
    pub currency: String,
    pub vat_code: u8,
}

impl fmt::Debug for ProviderConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ProviderConfig")
            .field("token", &self.token)
            .field("currency", &self.currency)
            .field("vat_code", &self.vat_code)
            .finish()
    }
}

pub use crate::alerts::AlertFn;

/// The checked billing settings.
#[derive(Clone)]
pub struct BillingConfig {
    pub enabled: bool,
    pub trial_days: u32,
    pub plans: Vec<Plan>,
    pub provider: Option<ProviderConfig>,
    pub reconcile_every: Duration,
    pub remind_every: Duration,
    pub paysupport: (String, String),
    pub terms: (String, String),
    pub alert: Option<AlertFn>,
}

impl fmt::Debug for BillingConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BillingConfig")
            .field("enabled", &self.enabled)
            .field("trial_days", &self.trial_days)
            .field("plans", &self.plans)
            .field("provider", &self.provider)
            .field("reconcile_every", &self.reconcile_every)
            .field("remind_every", &self.remind_every)
            .field("alert", &self.alert.is_some())
            .finish_non_exhaustive()
    }
}

impl Default for BillingConfig {
    fn default() -> Self {
        let s = BillingSection::default();
        Self {
            enabled: false,
            trial_days: s.trial_days,
            plans: Vec::new(),
            provider: None,
            reconcile_every: Duration::from_secs(s.reconcile_every_secs),
            remind_every: Duration::from_secs(s.remind_every_secs),
            paysupport: (s.paysupport_ru, s.paysupport_en),
            terms: (s.terms_ru, s.terms_en),
            alert: None,
        }
    }
}

impl BillingConfig {
    /// Checks the sections: plan ids unique and valid, prices Telegram accepts, categories
    /// known (`known`), a provider token present when named. `env` reads an environment
    /// variable (the provider token is a secret and lives outside the file).
    pub fn from_sections(
        section: &BillingSection,
        plans: &[PlanSection],
        known: &[CategorySlug],
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<Self, BotError> {
        let bad = |m: String| BotError::Config(m);
        let mut checked: Vec<Plan> = Vec::new();
        for p in plans {
            let id = PlanId::parse(&p.id).map_err(|e| bad(format!("[[plans]]: {e}")))?;
            if checked.iter().any(|c| c.id == id) {
                return Err(bad(format!("[[plans]]: plan id {:?} is used twice", p.id)));
            }
            let mut categories = Vec::new();
            for c in &p.categories {
                let slug = CategorySlug::parse(c)
                    .ok()
                    .filter(|s| known.contains(s))
                    .ok_or_else(|| {
                        bad(format!(
                            "[[plans]] {:?}: category {c:?} is not a configured category",
                            p.id
                        ))
                    })?;
                categories.push(slug);
            }
            let plan = Plan {
                id,
                title: p.title.clone(),
                stars: p.stars,
                days: p.days,
                categories,
                provider_price: p.provider_price,
            };
            plan.validate()
                .map_err(|e| bad(format!("[[plans]]: {e}")))?;
            checked.push(plan);
        }
        if section.enabled && checked.is_empty() {
            return Err(bad(
                "[billing] enabled = true needs at least one [[plans]] entry".into(),
            ));
        }
        let provider = match &section.provider_token_env {
            None => None,
            Some(var) => {
                let token = env(var).filter(|t| !t.trim().is_empty()).ok_or_else(|| {
                    bad(format!(
                        "[billing] provider_token_env names {var:?}, which is not set"
                    ))
                })?;
                let currency = section.provider_currency.trim().to_ascii_uppercase();
                if currency.len() != 3 || !currency.bytes().all(|b| b.is_ascii_uppercase()) {
                    return Err(bad(format!(
                        "[billing] provider_currency {:?} is not a 3-letter currency code",
                        section.provider_currency
                    )));
                }
                if currency == jobwire_core::billing::STARS {
                    return Err(bad(
                        "[billing] provider_currency cannot be XTR: Stars need no provider".into(),
                    ));
                }
                Some(ProviderConfig {
                    token: Secret::from(token),
                    currency,
                    vat_code: section.receipt_vat_code,
                })
            }
        };
        let every = |secs: u64, key: &str| {
            if secs == 0 {
                Err(bad(format!("[billing] {key} must be at least 1")))
            } else {
                Ok(Duration::from_secs(secs))
            }
        };
        Ok(Self {
            enabled: section.enabled,
            trial_days: section.trial_days,
            plans: checked,
            provider,
            reconcile_every: every(section.reconcile_every_secs, "reconcile_every_secs")?,
            remind_every: every(section.remind_every_secs, "remind_every_secs")?,
            paysupport: (section.paysupport_ru.clone(), section.paysupport_en.clone()),
            terms: (section.terms_ru.clone(), section.terms_en.clone()),
            alert: None,
        })
    }

    pub fn plan(&self, id: &str) -> Option<&Plan> {
        self.plans.iter().find(|p| p.id.as_str() == id)
    }

    /// Tells the admins, if anyone listens.
    pub fn alert(&self, message: String) {
        crate::alerts::Alerts::new(self.alert.clone()).send(message);
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn plan(id: &str, stars: u32, days: u32, cats: &[&str]) -> PlanSection {
        PlanSection {
            id: id.into(),
            title: format!("{days} days"),
            stars,
            days,
            categories: cats.iter().map(|c| (*c).to_owned()).collect(),
            provider_price: None,
        }
    }

    fn known() -> Vec<CategorySlug> {
        vec![CategorySlug::parse("design").unwrap()]
    }

    #[test]
    fn plans_are_checked_with_a_message_naming_the_plan() {
        let section = BillingSection {
            enabled: true,
            ..BillingSection::default()
        };
        let ok = BillingConfig::from_sections(
            &section,
            &[
                plan("month", 250, 30, &[]),
                plan("week", 80, 7, &["design"]),
            ],
            &known(),
            |_| None,
        )
        .unwrap();
        assert_eq!(ok.plans.len(), 2);
        assert!(ok.plan("month").unwrap().renews());
        for (plans, needle) in [
            (vec![plan("month", 250, 30, &["nope"])], "\"nope\""),
            (
                vec![plan("a", 1, 7, &[]), plan("a", 2, 7, &[])],
                "used twice",
            ),
            (vec![plan("month", 10_001, 30, &[])], "10000"),
            (vec![plan("Bad Id", 1, 7, &[])], "Bad Id"),
            (vec![], "at least one"),
        ] {
            let e = BillingConfig::from_sections(&section, &plans, &known(), |_| None)
                .unwrap_err()
                .to_string();
            assert!(e.contains(needle), "{e}");
        }
    }

    #[test]
    fn the_provider_token_comes_from_the_environment_and_never_prints() {
        let section = BillingSection {
            enabled: true,
            provider_token_env: Some("JOBWIRE_PROVIDER_TOKEN".into()),
            ..BillingSection::default()
        };
        let plans = [plan("month", 250, 30, &[])];
        let e = BillingConfig::from_sections(&section, &plans, &known(), |_| None)
            .unwrap_err()
            .to_string();
        assert!(e.contains("JOBWIRE_PROVIDER_TOKEN"), "{e}");
        let cfg = BillingConfig::from_sections(&section, &plans, &known(), |_| {
            Some("381764678:TEST:secret-provider-token".into())
        })
        .unwrap();
        let printed = format!("{cfg:?}");
        assert!(!printed.contains("secret-provider-token"), "{printed}");
        assert_eq!(cfg.provider.unwrap().currency, "RUB");
    }
}
