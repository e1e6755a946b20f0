//! Subscriptions: plans, the invoice payload jobwire issues, and whether a subscriber's trial
//! or paid periods let them receive a job in a category at a given moment.
//!
//! Pure logic: time is passed in, nothing here reads a clock or a database.

use std::fmt;

use chrono::{DateTime, Duration, Utc};
use serde::{Deserialize, Serialize};

use crate::CategorySlug;

/// The currency code of Telegram Stars.
pub const STARS: &str = "XTR";
/// The only period a Stars subscription may have (30 days, in seconds).
pub const STARS_SUBSCRIPTION_PERIOD_SECS: u32 = 2_592_000;
/// The days of a plan sold as a Stars subscription that renews itself.
pub const SUBSCRIPTION_DAYS: u32 = 30;
/// The most a Stars subscription may cost per period.
pub const MAX_SUBSCRIPTION_STARS: u32 = 10_000;
/// How long a renewing subscription keeps access after its end when the renewal payment has
/// not arrived yet (Telegram charges on the expiration date; a failed charge ends it).
pub const RENEWAL_GRACE_HOURS: i64 = 24;
/// The plan id of a trial period.
pub const TRIAL_PLAN: &str = "trial";

/// Why a plan or a payload is not valid.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BillingError {
    #[error(
        "plan id {0:?} is not valid: use 1 to 32 characters a-z, 0-9, '_' or '-' (not \"trial\")"
    )]
    PlanId(String),
    #[error("plan {plan:?}: {reason}")]
    Plan { plan: String, reason: String },
    #[error("the invoice payload is not one jobwire issued")]
    Payload,
}

/// A plan's stable id, used in invoice payloads and the ledger.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct PlanId(String);

impl PlanId {
    pub fn parse(raw: &str) -> Result<Self, BillingError> {
        let ok = (1..=32).contains(&raw.len())
            && raw
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'-')
            && raw != TRIAL_PLAN;
        if ok {
            Ok(Self(raw.to_owned()))
        } else {
            Err(BillingError::PlanId(raw.to_owned()))
        }
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl TryFrom<String> for PlanId {
    type Error = BillingError;

    fn try_from(raw: String) -> Result<Self, Self::Error> {
        Self::parse(&raw)
    }
}

impl From<PlanId> for String {
    fn from(id: PlanId) -> Self {
        id.0
    }
}

impl fmt::Display for PlanId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// What a subscriber can buy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    pub id: PlanId,
    pub title: String,
    /// The price in Telegram Stars.
    pub stars: u32,
    pub days: u32,
    /// The categories it opens; empty: every category.
    pub categories: Vec<CategorySlug>,
    /// The price through a payment provider, in the smallest unit of the provider's currency
    /// (kopecks for RUB); `None`: sold for Stars only.
    pub provider_price: Option<u64>,
}

impl Plan {
    /// Checks what Telegram would refuse: a plan sold as a Stars subscription must cost
    /// 1 to 10,000 Stars; any plan must last at least a day and cost at least a Star.
    pub fn validate(&self) -> Result<(), BillingError> {
        let fail = |reason: String| {
            Err(BillingError::Plan {
                plan: self.id.to_string(),
                reason,
            })
        };
        if self.title.trim().is_empty() || self.title.chars().count() > 32 {
            return fail("title must be 1 to 32 characters (Telegram's invoice title)".into());
        }
        if self.days == 0 || self.days > 3660 {
            return fail(format!("days = {} must be 1 to 3660", self.days));
        }
        if self.stars == 0 {
            return fail("stars must be at least 1".into());
        }
        if self.renews() && self.stars > MAX_SUBSCRIPTION_STARS {
            return fail(format!(
                "stars = {} is over {MAX_SUBSCRIPTION_STARS}, the most a Stars subscription may cost",
                self.stars
            ));
        }
        if let Some(price) = self.provider_price
            && (price == 0 || price > u64::from(u32::MAX))
        {
            return fail(format!(
                "provider_price = {price} must be 1 to {} (the smallest unit of the currency)",
                u32::MAX
            ));
        }
        Ok(())
    }

    /// Whether it is sold as a Stars subscription that renews itself every 30 days.
    pub fn renews(&self) -> bool {
        self.days == SUBSCRIPTION_DAYS
    }

    /// Whether it opens `category`.
    pub fn opens(&self, category: &CategorySlug) -> bool {
        self.categories.is_empty() || self.categories.contains(category)
    }
}

/// What jobwire puts in an invoice's payload (at most 128 bytes) and checks at pre-checkout:
/// the plan, the buyer's chat and a nonce jobwire issued and stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InvoicePayload {
    pub plan: PlanId,
    pub chat_id: i64,
    pub nonce: String,
}

impl InvoicePayload {
    const PREFIX: &'static str = "jw1";

    pub fn encode(&self) -> String {
        format!(
            "{}:{}:{}:{}",
            Self::PREFIX,
            self.plan,
            self.chat_id,
            self.nonce
        )
    }

    pub fn parse(raw: &str) -> Result<Self, BillingError> {
        let Some((plan, chat, nonce)) = payload_fields(raw, Self::PREFIX) else {
            return Err(BillingError::Payload);
        };
        let plan = PlanId::parse(plan).map_err(|_| BillingError::Payload)?;
        let chat_id = chat.parse().map_err(|_| BillingError::Payload)?;
        let nonce_ok =
            (8..=64).contains(&nonce.len()) && nonce.bytes().all(|b| b.is_ascii_alphanumeric());
        if !nonce_ok {
            return Err(BillingError::Payload);
        }
        Ok(Self {
            plan,
            chat_id,
            nonce: nonce.to_owned(),
        })
    }
}

/// One stretch of access: a trial, or what one payment bought.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Period {
    pub plan: String,
    pub starts_at: DateTime<Utc>,
    pub ends_at: DateTime<Utc>,
    /// Empty: every category.
    pub categories: Vec<CategorySlug>,
    pub trial: bool,
    /// A Stars subscription that renews itself (and was not cancelled): access runs a grace
    /// day past the end while the renewal payment is on its way.
    pub renews: bool,
    /// Refunded: this period gives nothing.
    pub revoked: bool,
}

impl Period {
    /// The moment access from this period really stops.
    pub fn effective_end(&self) -> DateTime<Utc> {
        if self.renews {
            self.ends_at + Duration::hours(RENEWAL_GRACE_HOURS)
        } else {
            self.ends_at
        }
    }

    pub fn covers(&self, at: DateTime<Utc>) -> bool {
        !self.revoked && self.starts_at <= at && at < self.effective_end()
    }

    pub fn opens(&self, category: &CategorySlug) -> bool {
        self.categories.is_empty() || self.categories.contains(category)
    }
}

/// A subscriber's periods, and what they allow.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Access {
    pub periods: Vec<Period>,
}

impl Access {
    pub fn new(periods: Vec<Period>) -> Self {
        Self { periods }
    }

    /// Whether a job in `category` may be delivered at `at`.
    pub fn allows(&self, at: DateTime<Utc>, category: &CategorySlug) -> bool {
        self.periods
            .iter()
            .any(|p| p.covers(at) && p.opens(category))
    }

    /// Whether any period covers `at`.
    pub fn active(&self, at: DateTime<Utc>) -> bool {
        self.periods.iter().any(|p| p.covers(at))
    }

    /// The categories open at `at`; `None`: every category.
    pub fn open_categories(&self, at: DateTime<Utc>) -> Option<Vec<CategorySlug>> {
        let mut open = Vec::new();
        for p in self.periods.iter().filter(|p| p.covers(at)) {
            if p.categories.is_empty() {
                return None;
            }
            for c in &p.categories {
                if !open.contains(c) {
                    open.push(c.clone());
                }
            }
        }
        Some(open)
    }

    /// When the access that covers `at` ends, following back-to-back periods (a renewal
    /// starts where the last one ended); `None` when nothing covers `at`.
    pub fn active_until(&self, at: DateTime<Utc>) -> Option<DateTime<Utc>> {
        let mut end: Option<DateTime<Utc>> = None;
        let mut cursor = at;
        loop {
            let next = self
                .periods
                .iter()
                .filter(|p| p.covers(cursor))
                .map(|p| p.ends_at)
                .max();
            match next {
                Some(e) if end.is_none_or(|x| e > x) => {
                    end = Some(e);
                    cursor = e;
                }
                _ => return end,
            }
        }
    }

    /// Whether a trial was ever started.
    pub fn had_trial(&self) -> bool {
        self.periods.iter().any(|p| p.trial)
    }
}

/// The three fields of an invoice payload `PREFIX:a:b:c` (a subscription's or a placement's);
/// `None` for another prefix or another number of fields.
pub(crate) fn payload_fields<'a>(
    raw: &'a str,
    prefix: &str,
) -> Option<(&'a str, &'a str, &'a str)> {
    let mut parts = raw.split(':');
    match (
        parts.next(),
        parts.next(),
        parts.next(),
        parts.next(),
        parts.next(),
    ) {
        (Some(p), Some(a), Some(b), Some(c), None) if p == prefix => Some((a, b, c)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use chrono::TimeZone;

    fn t(day: u32) -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 12, day, 12, 0, 0).unwrap()
    }

    fn slug(s: &str) -> CategorySlug {
        CategorySlug::parse(s).unwrap()
    }

    fn period(from: u32, to: u32, categories: &[&str]) -> Period {
        Period {
            plan: "p".into(),
            starts_at: t(from),
            ends_at: t(to),
            categories: categories.iter().map(|c| slug(c)).collect(),
            trial: false,
            renews: false,
            revoked: false,
        }
    }

    #[test]
    fn a_period_opens_its_categories_from_its_start_until_its_end() {
        let access = Access::new(vec![period(1, 4, &["design"])]);
        assert!(access.allows(t(1), &slug("design")));
        assert!(access.allows(t(3), &slug("design")));
        assert!(
            !access.allows(t(4), &slug("design")),
            "the end is exclusive"
        );
        assert!(!access.allows(t(2), &slug("development")));
        let all = Access::new(vec![period(1, 4, &[])]);
        assert!(all.allows(t(2), &slug("development")));
        assert_eq!(all.open_categories(t(2)), None);
        assert_eq!(
            access.open_categories(t(2)),
            Some(vec![slug("design")]),
            "{access:?}"
        );
    }

    #[test]
    fn a_renewing_period_keeps_a_grace_day_and_a_refund_ends_it() {
        let mut p = period(1, 4, &[]);
        p.renews = true;
        let access = Access::new(vec![p.clone()]);
        assert!(access.allows(t(4), &slug("design")));
        assert!(!access.allows(t(5), &slug("design")));
        p.revoked = true;
        assert!(!Access::new(vec![p]).active(t(2)));
    }

    #[test]
    fn back_to_back_periods_end_at_the_last() {
        let access = Access::new(vec![period(1, 4, &[]), period(4, 9, &[])]);
        assert_eq!(access.active_until(t(2)), Some(t(9)));
        assert_eq!(access.active_until(t(10)), None);
    }

    #[test]
    fn the_payload_round_trips_and_rejects_anything_else() {
        let p = InvoicePayload {
            plan: PlanId::parse("month").unwrap(),
            chat_id: 42,
            nonce: "a1b2c3d4e5f6a7b8".into(),
        };
        let raw = p.encode();
        assert!(raw.len() <= 128);
        assert_eq!(InvoicePayload::parse(&raw), Ok(p));
        for bad in [
            "",
            "jw1:month:42",
            "jw1:month:x:a1b2c3d4e5f6a7b8",
            "jw2:month:42:a1b2c3d4e5f6a7b8",
            "jw1:Month:42:a1b2c3d4e5f6a7b8",
            "jw1:month:42:short",
            "jw1:month:42:a1b2c3d4e5f6a7b8:extra",
        ] {
            assert_eq!(
                InvoicePayload::parse(bad),
                Err(BillingError::Payload),
                "{bad}"
            );
        }
    }

    #[test]
    fn plans_that_telegram_would_refuse_are_refused() {
        let plan = Plan {
            id: PlanId::parse("month").unwrap(),
            title: "30 days".into(),
            stars: 250,
            days: 30,
            categories: vec![],
            provider_price: None,
        };
        assert!(plan.validate().is_ok());
        assert!(plan.renews());
        let too_dear = Plan {
            stars: 10_001,
            ..plan.clone()
        };
        assert!(too_dear.validate().is_err());
        let week = Plan {
            stars: 10_001,
            days: 7,
            ..plan.clone()
        };
        assert!(
            week.validate().is_ok(),
            "a one-time payment has no such cap"
        );
        assert!(PlanId::parse("trial").is_err());
        assert!(PlanId::parse("").is_err());
        assert!(PlanId::parse("a:b").is_err());
    }
}
