//! `[placements]`: the file's section, the checked settings the bots run with, the post a placement becomes, and its card.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, Utc};
use jobwire_core::CategorySlug;
use jobwire_core::PostId;
use jobwire_core::config::InvalidKey;
use jobwire_core::format::JobCard;
use jobwire_core::placement;
use jobwire_store::PlacementRow;
use serde::Deserialize;

use crate::texts::Lang;

/// Queues a published placement's post for classification (the binary wires the queue).
pub type PublishFn =
    dyn Fn(PostId) -> futures::future::BoxFuture<'static, Result<(), String>> + Send + Sync;

/// The checked `[placements]` settings.
#[derive(Clone)]
pub struct PlacementsConfig {
    /// Paid placements wait for an admin's approval before they are published.
    pub approval: bool,
    /// The price of a placement in each category it may be placed in, in Stars; a category
    /// without a price is not offered.
    pub prices: BTreeMap<CategorySlug, u32>,
    /// How often paid placements are looked for.
    pub every: Duration,
    /// Queues a published placement's post; `None`: the queue's recovery sweep picks it up.
    pub publish: Option<Arc<PublishFn>>,
}

impl fmt::Debug for PlacementsConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PlacementsConfig")
            .field("approval", &self.approval)
            .field("prices", &self.prices)
            .field("every", &self.every)
            .field("publish", &self.publish.is_some())
            .finish()
    }
}

impl PlacementsConfig {
    /// The price of a placement in `categories`, if each is offered.
    pub fn price(&self, categories: &[CategorySlug]) -> Option<u32> {
        if categories.is_empty() {
            return None;
        }
        placement::price(categories, &self.prices, None)
    }
}

/// Employers post vacancies in the main bot and pay for them in Stars.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
#[serde(default)]
pub struct PlacementsSection {
    pub enabled: bool,
    /// Paid placements wait for an admin (`POST /api/placements/{id}/approve`).
    pub approval: bool,
    /// The price per category, in Stars, of every category without its own.
    pub stars: Option<u32>,
    /// Prices of single categories: `[placements.category_stars] web = 150`.
    pub category_stars: BTreeMap<String, u32>,
    /// How often paid placements are looked for, in seconds.
    pub check_every_secs: u64,
}

impl Default for PlacementsSection {
    fn default() -> Self {
        Self {
            enabled: false,
            approval: false,
            stars: None,
            category_stars: BTreeMap::new(),
            check_every_secs: 2,
        }
    }
}

/// Telegram's bound of a Stars invoice.
const MAX_STARS: u32 = placement::MAX_INVOICE_STARS;

impl PlacementsSection {
    /// The checked settings (the publishing hook is the binary's); `None` when off.
    pub fn resolve(
        &self,
        main_bot: Option<&str>,
        known: &[CategorySlug],
    ) -> Result<Option<PlacementsConfig>, InvalidKey> {
        if !self.enabled {
            return Ok(None);
        }
        if main_bot.is_none() {
            return Err(InvalidKey::new(
                "placements.enabled",
                "employers place vacancies in the main bot: set telegram.main_bot",
            ));
        }
        let in_range = |p: u32| (1..=MAX_STARS).contains(&p);
        if let Some(p) = self.stars.filter(|p| !in_range(*p)) {
            return Err(InvalidKey::new(
                "placements.stars",
                format!("{p}: a Stars price is 1 to {MAX_STARS}"),
            ));
        }
        let mut prices = BTreeMap::new();
        for (slug, price) in &self.category_stars {
            let key = format!("placements.category_stars.{slug}");
            let slug = known
                .iter()
                .find(|k| k.as_str() == slug)
                .ok_or_else(|| InvalidKey::new(&key, "not a configured category"))?;
            if !in_range(*price) {
                return Err(InvalidKey::new(
                    &key,
                    format!("{price}: a Stars price is 1 to {MAX_STARS}"),
                ));
            }
            prices.insert(slug.clone(), *price);
        }
        if let Some(default) = self.stars {
            for slug in known {
                prices.entry(slug.clone()).or_insert(default);
            }
        }
        if prices.is_empty() {
            return Err(InvalidKey::new(
                "placements.stars",
                "no category has a price: set placements.stars or placements.category_stars",
            ));
        }
        // The dearest placement (the most categories, the dearest ones) must fit one invoice.
        let mut dear: Vec<u32> = prices.values().copied().collect();
        dear.sort_unstable_by(|a, b| b.cmp(a));
        let most: u32 = dear.iter().take(placement::MAX_CATEGORIES).sum();
        if most > MAX_STARS {
            return Err(InvalidKey::new(
                "placements.category_stars",
                format!(
                    "a placement in the {} dearest categories would cost {most} Stars; one invoice asks at most {MAX_STARS}",
                    placement::MAX_CATEGORIES
                ),
            ));
        }
        if self.check_every_secs == 0 {
            return Err(InvalidKey::new(
                "placements.check_every_secs",
                "must be at least 1",
            ));
        }
        Ok(Some(PlacementsConfig {
            approval: self.approval,
            prices,
            every: Duration::from_secs(self.check_every_secs),
            publish: None,
        }))
    }
}

/// The post text of a placement.
pub(crate) fn text_of(p: &PlacementRow) -> String {
    let d = &p.draft;
    placement::compose(
        d.title.as_deref().unwrap_or_default(),
        d.body.as_deref().unwrap_or_default(),
        d.budget.as_deref().filter(|b| !b.is_empty()),
        d.contact.as_deref().unwrap_or_default(),
        d.lang == "en",
    )
}

/// The card of a placement as subscribers will see it: a direct placement (no channel),
/// in the categories named `categories`, posted at `posted_at`, with what the post's text
/// tells (budget, contact, …). The employer's preview in the bot and the admins'
/// moderation queue both show it (`jobwire_core::format::render` makes the messages).
pub fn card(p: &PlacementRow, categories: Vec<String>, posted_at: DateTime<Utc>) -> JobCard {
    let text = text_of(p);
    let extraction = jobwire_core::extract::extract(&text);
    JobCard {
        title: None,
        text,
        channel: String::new(),
        channel_url: None,
        url: None,
        categories,
        posted_at,
        extraction: (!extraction.is_empty()).then_some(extraction),
        resume: false,
        direct: true,
    }
}

pub(crate) fn lang_of(p: &PlacementRow) -> Lang {
    Lang::from_code(Some(p.draft.lang.as_str()))
}
