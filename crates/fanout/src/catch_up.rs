//! Catching up after a pause: the best jobs a subscriber missed in the last hours, matched
//! against their settings as they are now, queued behind the same rate limits as any card.

use std::sync::Arc;

use chrono::{DateTime, Utc};
use jobwire_core::billing::Access;
use jobwire_core::card::Wants;
use jobwire_core::clock::{Clock, SystemClock};
use jobwire_core::live::Live;
use jobwire_core::matching::{JobFacts, SubscriberIndex};
use jobwire_core::normalize::normalize;
use jobwire_store::{NewDelivery, PostId, Store};

use crate::{CategoryRoute, FanoutError, choose_route, subscriber_from_row};

/// Jobs looked at, at most, when choosing what a subscriber missed.
const CANDIDATES: u32 = 1000;

/// Finds and queues what a subscriber missed (see [`CatchUp::missed`]).
#[derive(Debug)]
pub struct CatchUp {
    store: Arc<dyn Store>,
    /// The categories' names and bots; replaced while running when an admin edits them.
    routes: Live<Vec<CategoryRoute>>,
    billing: bool,
    clock: Arc<dyn Clock>,
}

impl CatchUp {
    pub fn new(store: Arc<dyn Store>, routes: impl Into<Live<Vec<CategoryRoute>>>) -> Self {
        Self {
            store,
            routes: routes.into(),
            billing: false,
            clock: Arc::new(SystemClock),
        }
    }

    /// Only categories a trial or paid period opens (`[billing] enabled`), as of `clock`.
    #[must_use]
    pub fn with_billing(mut self, enabled: bool, clock: Arc<dyn Clock>) -> Self {
        self.billing = enabled;
        self.clock = clock;
        self
    }

    /// Queues up to `max` of the best jobs fanned out since `since` that the chat's
    /// subscriber has not received and that match their categories, filters, hidden
    /// authors and access now (as if they were not paused). Best: fewest complaints, a
    /// stated budget, most subscribers matched, newest; sent best first, one a second (or
    /// after the subscriber's quiet hours). Returns how many.
    pub async fn missed(
        &self,
        chat_id: i64,
        since: DateTime<Utc>,
        max: usize,
    ) -> Result<usize, FanoutError> {
        let store = &self.store;
        let Some(row) = store.subscriber_by_chat(chat_id).await? else {
            return Ok(0);
        };
        // Catching up is on vacancies: someone who asked for résumés only gets none of them.
        if row.blocked || max == 0 || store.wants_of(chat_id).await? == Wants::Resumes {
            return Ok(0);
        }
        let (mut subscriber, (id, mut info)) = subscriber_from_row(&row);
        subscriber.paused = false;
        info.hidden = store
            .hidden_authors(chat_id)
            .await?
            .into_iter()
            .map(|h| h.author)
            .collect();
        info.unreachable = store
            .bot_blocks(Some(chat_id))
            .await?
            .into_iter()
            .map(|b| b.bot)
            .collect();
        if self.billing {
            info.access = Access::new(
                store
                    .access_periods(chat_id)
                    .await?
                    .iter()
                    .map(jobwire_store::AccessPeriodRow::to_period)
                    .collect(),
            );
        }
        let index = SubscriberIndex::build([subscriber]);
        let now = self.clock.now();
        let routes = self.routes.get();
        let mut picks: Vec<(jobwire_core::card::Merit, PostId, NewDelivery)> = Vec::new();
        for job in store.recent_jobs(since, Some(id), CANDIDATES).await? {
            let Some(verdict) = store.classification(job.post.id).await? else {
                continue;
            };
            let categories: Vec<_> = verdict
                .categories
                .iter()
                .filter(|c| routes.iter().any(|r| &r.slug == *c))
                .cloned()
                .collect();
            let budget = verdict.extraction.as_ref().and_then(|e| e.budget.as_ref());
            let normalized = normalize(&job.post.text);
            let facts = JobFacts {
                categories: &categories,
                normalized_text: &normalized,
            };
            if index.matches_with_budget(&facts, budget).is_empty() {
                continue;
            }
            let contact = verdict
                .extraction
                .as_ref()
                .and_then(|e| e.contact.as_deref());
            let authors = jobwire_core::card::author_keys(
                &job.post.channel_handle,
                job.post.author.as_deref(),
                contact,
            );
            if info.hides(&authors) {
                continue;
            }
            let Some(route) = choose_route(&routes, &categories, &info, self.billing, now) else {
                continue;
            };
            let score = jobwire_core::card::merit(
                job.complaints,
                budget.is_some(),
                job.matched,
                job.post.received_at,
            );
            picks.push((
                score,
                job.post.id,
                NewDelivery {
                    subscriber_id: id,
                    chat_id,
                    bot: route.bot.clone(),
                    not_before: info.quiet_hours.as_ref().and_then(|q| q.release_at(now)),
                },
            ));
        }
        picks.sort_by_key(|p| std::cmp::Reverse(p.0));
        picks.truncate(max);
        // One a second, best first: the chat's own send limit, and the order it sees.
        let mut added = 0;
        for (i, (_, post, mut delivery)) in picks.into_iter().enumerate() {
            let turn = now + chrono::Duration::seconds(i64::try_from(i).unwrap_or(i64::MAX));
            delivery.not_before = Some(delivery.not_before.map_or(turn, |t| t.max(turn)));
            added += store
                .add_held_deliveries(post, std::slice::from_ref(&delivery), now)
                .await?;
        }
        tracing::info!(chat_id, since = %since, added, "caught up after a pause");
        Ok(usize::try_from(added).unwrap_or(usize::MAX))
    }
}
