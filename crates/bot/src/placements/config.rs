//! `[placements]` as the bots run with it, the post a placement becomes, and its card.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, Utc};
use jobwire_core::CategorySlug;
use jobwire_core::PostId;
use jobwire_core::format::JobCard;
use jobwire_core::placement;
use jobwire_store::PlacementRow;

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
