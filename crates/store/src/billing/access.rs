//! The access periods trials and payments bought.

use chrono::{DateTime, Duration, Utc};
use jobwire_core::CategorySlug;
use jobwire_core::billing::{Access, Period};

use crate::codec::ms;
use crate::sql::{Cols, Dialect, Sql};
use crate::{AccessPeriodId, Result};

/// The access a trial or a payment buys.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Grant {
    pub plan_id: String,
    /// Empty: every category.
    pub categories: Vec<CategorySlug>,
    pub days: u32,
    /// A Stars subscription that renews itself.
    pub renews: bool,
    /// The end Telegram set (`subscription_expiration_date`); `None`: start + `days`.
    pub ends_at: Option<DateTime<Utc>>,
}

/// A period of access as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AccessPeriodRow {
    pub id: AccessPeriodId,
    pub chat_id: i64,
    pub plan_id: String,
    pub categories: Vec<CategorySlug>,
    pub starts_at: DateTime<Utc>,
    pub ends_at: DateTime<Utc>,
    pub trial: bool,
    pub renews: bool,
    /// The payment that bought it (`None` for a trial).
    pub charge_id: Option<String>,
    /// The subscriber cancelled the renewal: access runs to `ends_at`, no grace day.
    pub canceled_at: Option<DateTime<Utc>>,
    /// Refunded: it gives nothing from then on.
    pub revoked_at: Option<DateTime<Utc>>,
    pub created_at: DateTime<Utc>,
}

impl AccessPeriodRow {
    /// The domain view (see [`jobwire_core::billing::Access`]).
    pub fn to_period(&self) -> Period {
        Period {
            plan: self.plan_id.clone(),
            starts_at: self.starts_at,
            ends_at: self.ends_at,
            categories: self.categories.clone(),
            trial: self.trial,
            renews: self.renews && self.canceled_at.is_none(),
            revoked: self.revoked_at.is_some(),
        }
    }
}

/// The domain view of a subscriber's periods.
pub fn access_of(rows: &[AccessPeriodRow]) -> Access {
    Access::new(rows.iter().map(AccessPeriodRow::to_period).collect())
}

/// A new access period, returned whole.
pub(super) fn insert_period<DB: Dialect>(
    chat_id: i64,
    grant: &Grant,
    (starts_at, ends_at): (DateTime<Utc>, DateTime<Utc>),
    trial: bool,
    charge_id: Option<&str>,
    now: DateTime<Utc>,
) -> Sql<DB> {
    // A chat's second trial violates the partial unique index `access_periods_one_trial`:
    // nothing is inserted, nothing returned.
    Sql::<DB>::new(
        "INSERT INTO access_periods (chat_id, plan_id, categories, starts_at, ends_at, trial,
             renews, charge_id, created_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
         ON CONFLICT DO NOTHING
         RETURNING *",
    )
    .int(chat_id)
    .text(grant.plan_id.as_str())
    .json(Some(&grant.categories))
    .int(ms(starts_at))
    .int(ms(ends_at))
    .flag(trial)
    .flag(grant.renews)
    .text(charge_id)
    .int(ms(now))
}

/// The stretch a payment buys: from the end of the subscriber's last unrevoked period of the
/// plan (or `now`, if later) to Telegram's end or `days` later. When Telegram's end comes
/// before that start (a renewal applied after a later one), Telegram's date wins: the end
/// stays and the start moves back to it at most.
pub(super) fn paid_stretch(
    last_end: Option<DateTime<Utc>>,
    grant: &Grant,
    now: DateTime<Utc>,
) -> (DateTime<Utc>, DateTime<Utc>) {
    let start = last_end.map_or(now, |last| last.max(now));
    let end = grant
        .ends_at
        .unwrap_or_else(|| start + Duration::days(i64::from(grant.days)));
    if start <= end {
        (start, end)
    } else {
        (last_end.map_or(end, |last| last.min(end)), end)
    }
}

/// A category list as stored; a bad slug (written by hand) costs that category only.
fn categories_of(period: i64, raw: Vec<String>) -> Vec<CategorySlug> {
    raw.into_iter()
        .filter_map(|c| {
            CategorySlug::parse(&c)
                .map_err(|e| tracing::warn!(period, error = %e, "ignoring a bad category"))
                .ok()
        })
        .collect()
}

pub(crate) fn access_period_row<DB: Dialect>(c: &Cols<'_, DB>) -> Result<AccessPeriodRow> {
    let id = c.id()?;
    Ok(AccessPeriodRow {
        id: AccessPeriodId(id),
        chat_id: c.int("chat_id")?,
        plan_id: c.text("plan_id")?,
        categories: categories_of(id, c.json("categories")?),
        starts_at: c.time("starts_at")?,
        ends_at: c.time("ends_at")?,
        trial: c.flag("trial")?,
        renews: c.flag("renews")?,
        charge_id: c.opt_text("charge_id")?,
        canceled_at: c.opt_time("canceled_at")?,
        revoked_at: c.opt_time("revoked_at")?,
        created_at: c.time("created_at")?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn telegram_end_wins_over_the_stacked_start() {
        let t = DateTime::from_timestamp_millis(1_767_225_600_000).unwrap_or_default();
        let g = |ends_at| Grant {
            plan_id: "p".to_owned(),
            categories: Vec::new(),
            days: 30,
            renews: true,
            ends_at,
        };
        let d = Duration::days;
        assert_eq!(paid_stretch(None, &g(None), t), (t, t + d(30)));
        assert_eq!(
            paid_stretch(Some(t + d(5)), &g(None), t),
            (t + d(5), t + d(35))
        );
        assert_eq!(paid_stretch(Some(t - d(5)), &g(None), t), (t, t + d(30)));
        assert_eq!(
            paid_stretch(Some(t + d(60)), &g(Some(t + d(30))), t),
            (t + d(30), t + d(30))
        );
        // A late renewal of a stretch that already ended keeps its place in the past.
        assert_eq!(
            paid_stretch(Some(t - d(40)), &g(Some(t - d(10))), t),
            (t - d(40), t - d(10))
        );
    }
}
