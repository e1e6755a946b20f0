//! Direct placements after the payment: the main bot publishes paid (and approved) placements
//! as posts of the source `direct`, tells the employer when one went out, and refunds those
//! refused by an admin or not found to be a vacancy.
//!
//! Every step is a conditional move in the store ([`jobwire_store::PlacementStore`]), so any
//! number of bot processes run this loop and each placement is published, announced and
//! refunded once. A refund that Telegram refuses is tried again later, each time after a
//! longer wait, and the admins are told.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use jobwire_core::CategorySlug;
use jobwire_core::PostId;
use jobwire_core::placement::{self, PlacementStatus};
use jobwire_store::{PlacementRow, REASON_NOT_A_VACANCY};

use crate::BotError;
use crate::handler::notify;
use crate::runtime::{BotRuntime, Inner};
use crate::texts::{Lang, placements as t};

/// Queues a published placement's post for classification (the binary wires the queue).
pub type PublishFn =
    dyn Fn(PostId) -> futures::future::BoxFuture<'static, Result<(), String>> + Send + Sync;

/// A claimed refund not finished within this long (its process died) is taken again.
const STALE_REFUND: chrono::Duration = chrono::Duration::minutes(10);
/// Most placements each step of one pass handles.
const PER_PASS: u32 = 50;
/// A published placement the classifier has not decided on within this long is refunded
/// (and its post taken out of the pipeline): a vacancy hours late is not what was paid for.
const CLASSIFY_DEADLINE: chrono::Duration = chrono::Duration::hours(2);
/// How often the loop looks when placements are switched off (only to settle and refund
/// what is left from when they were on).
const OFF_EVERY: Duration = Duration::from_secs(10);

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

fn lang_of(p: &PlacementRow) -> Lang {
    Lang::from_code(Some(p.draft.lang.as_str()))
}

/// Runs on every process of the main bot, also with placements switched off: a payment that
/// arrives then, a refusal or a refund left over must still be refunded.
pub(crate) async fn run(
    inner: Arc<Inner>,
    main: Arc<BotRuntime>,
    config: Option<PlacementsConfig>,
) {
    let every = config.as_ref().map_or(OFF_EVERY, |c| c.every);
    let mut tick = tokio::time::interval(every);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = inner.shutdown.cancelled() => return,
            _ = tick.tick() => {}
        }
        if let Err(e) = pass(&inner, &main, config.as_ref()).await {
            tracing::warn!(error = %e, "placements: a pass failed; trying again");
        }
    }
}

/// One pass: publish, settle, refund.
pub(crate) async fn pass(
    inner: &Inner,
    main: &BotRuntime,
    config: Option<&PlacementsConfig>,
) -> Result<(), BotError> {
    let store = &inner.store;
    let approved = match config {
        Some(_) => {
            store
                .placements(Some(PlacementStatus::Approved), PER_PASS)
                .await?
        }
        None => Vec::new(),
    };
    for p in approved {
        let text = text_of(&p);
        let fingerprint = jobwire_core::dedup::fingerprint(&text).to_hex();
        let Some(post_id) = store
            .publish_placement(p.id, &text, Some(&fingerprint), inner.now())
            .await?
        else {
            continue;
        };
        tracing::info!(
            placement = p.id,
            post = post_id.get(),
            chat_id = p.chat_id,
            "placement published"
        );
        metrics::counter!(crate::events::PLACEMENTS_TOTAL, "outcome" => "published").increment(1);
        if let Some(publish) = config.and_then(|c| c.publish.as_ref())
            && let Err(e) = publish(post_id).await
        {
            // The post is stored `queued`: the scheduler's recovery sweep queues it again.
            tracing::warn!(placement = p.id, post = post_id.get(), error = %e, "queueing a placement's post failed; recovery will");
        }
    }
    for p in store
        .settle_placements(CLASSIFY_DEADLINE, inner.now(), PER_PASS)
        .await?
    {
        let lang = lang_of(&p);
        if p.status == PlacementStatus::Delivered {
            let reached = match p.post_id {
                Some(post) => store.deliveries_of_post(post).await?.len(),
                None => 0,
            };
            tracing::info!(placement = p.id, reached, "placement delivered");
            metrics::counter!(crate::events::PLACEMENTS_TOTAL, "outcome" => "delivered")
                .increment(1);
            let title = p.draft.title.clone().unwrap_or_default();
            notify(main, p.chat_id, t::delivered(lang, &title, reached), None).await;
        } else {
            let reason = p.reason.as_deref().unwrap_or(REASON_NOT_A_VACANCY);
            tracing::info!(
                placement = p.id,
                reason,
                "placement not published; refunding"
            );
            if reason == jobwire_store::REASON_NOT_CHECKED {
                inner.billing.alert(format!(
                    "jobwire: placement {} was not classified within {} h of its publishing; it is refunded",
                    p.id,
                    CLASSIFY_DEADLINE.num_hours()
                ));
            }
        }
    }
    for id in store
        .placements_to_refund(STALE_REFUND, inner.now(), PER_PASS)
        .await?
    {
        refund(inner, main, id).await?;
    }
    Ok(())
}

/// Refunds one refused placement (claimed first, so once).
async fn refund(inner: &Inner, main: &BotRuntime, id: i64) -> Result<(), BotError> {
    let store = &inner.store;
    let Some(p) = store
        .claim_placement_refund(id, STALE_REFUND, inner.now())
        .await?
    else {
        return Ok(());
    };
    let Some(charge) = p.charge_id.clone() else {
        return Ok(());
    };
    let outcome = crate::billing::refund_star_payment_for(
        store,
        &main.bot,
        &main.token,
        &charge,
        "placement",
        inner.now(),
    )
    .await;
    let done = match &outcome {
        Ok(_) => true,
        // Refunded before (by this loop before a crash, or by support): it is over.
        Err(e) => {
            let text = e.to_string();
            text.contains("refunded before") || text.contains("CHARGE_ALREADY_REFUNDED")
        }
    };
    store.finish_placement_refund(id, done, inner.now()).await?;
    if done {
        tracing::info!(placement = id, charge = %charge, "placement refunded");
        metrics::counter!(crate::events::PLACEMENTS_TOTAL, "outcome" => "refunded").increment(1);
        let stars = p.stars.unwrap_or_default();
        notify(
            main,
            p.chat_id,
            t::refunded(lang_of(&p), stars, p.reason.as_deref()),
            None,
        )
        .await;
    } else if let Err(e) = outcome {
        tracing::error!(placement = id, error = %e, "refunding a placement failed; trying again later");
        inner.billing.alert(format!(
            "jobwire: refunding placement {id} (payment {charge}) failed: {e}; it is tried again"
        ));
    }
    Ok(())
}
