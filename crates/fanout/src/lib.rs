//! Fan-out: turns one classified job into one delivery row per matching subscriber.
//!
//! Matching uses the in-memory [`SubscriberIndex`] of `jobwire-core`, built from the store
//! and rebuilt when the store's subscriber version changes, so a job costs a lookup, not a
//! scan over every subscriber. The job's message is rendered once here and stored with the
//! deliveries; senders only move the rendered parts.
//!
//! **Architecture invariant:** the deliveries, the rendered parts and the post's
//! `fanned_out` status are written in one transaction before any send message is
//! published; a redelivered fan-out message finds the post fanned out and does nothing.

mod catch_up;

pub use catch_up::CatchUp;

use std::collections::HashMap;
use std::sync::Arc;

use chrono::{DateTime, Utc};
use futures::{StreamExt, TryStreamExt};
use jobwire_core::CategorySlug;
use jobwire_core::billing::{Access, RENEWAL_GRACE_HOURS};
use jobwire_core::clock::{Clock, SystemClock};
use jobwire_core::format::{JobCard, render};
use jobwire_core::live::Live;
use jobwire_core::matching::{JobFacts, SubscriberIndex};
use jobwire_core::normalize::normalize;
use jobwire_core::quiet::QuietHours;
use jobwire_core::rules::Term;
use jobwire_core::subscriber::{Subscriber, SubscriberId};
use jobwire_queue::wire::{DeliveryReady, JobReady};
use jobwire_queue::{Queue, QueueError, Received, Topic};
use jobwire_store::{NewDelivery, PostId, PostStatus, Store, StoreError, SubscriberRow};
use tokio::sync::RwLock;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

/// Publishes in flight at once when a job's deliveries are handed to the senders.
const PUBLISH_CONCURRENCY: usize = 256;

/// Which bot delivers a category, and how the category is shown.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CategoryRoute {
    pub slug: CategorySlug,
    pub name: String,
    pub bot: String,
}

#[derive(Debug, thiserror::Error)]
pub enum FanoutError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Queue(#[from] QueueError),
}

#[derive(Debug)]
struct SubscriberInfo {
    chat_id: i64,
    categories: Vec<CategorySlug>,
    quiet_hours: Option<QuietHours>,
    /// Bots that cannot reach this subscriber (blocked, or never started): never chosen.
    unreachable: Vec<String>,
    /// The trial and paid periods (with billing on).
    access: Access,
    /// Authors this subscriber hid ("Hide this author" under a card).
    hidden: Vec<String>,
    /// Vacancies, résumés or both.
    wants: jobwire_core::card::Wants,
}

impl SubscriberInfo {
    /// Whether the subscriber hid any of a post's authors.
    fn hides(&self, authors: &[String]) -> bool {
        !self.hidden.is_empty() && authors.iter().any(|a| self.hidden.contains(a))
    }
}

/// The bot of the job's first category this subscriber follows, among the bots that can
/// reach them (one they blocked is passed over for the next category's); with billing, only
/// categories a period covering `now` opens.
fn choose_route<'a>(
    routes: &'a [CategoryRoute],
    categories: &[CategorySlug],
    info: &SubscriberInfo,
    billing: bool,
    now: chrono::DateTime<chrono::Utc>,
) -> Option<&'a CategoryRoute> {
    categories
        .iter()
        .filter(|c| info.categories.contains(c))
        .filter(|c| !billing || info.access.allows(now, c))
        .filter_map(|c| routes.iter().find(|r| &r.slug == c))
        .find(|r| !info.unreachable.contains(&r.bot))
}

#[derive(Debug)]
struct Snapshot {
    version: i64,
    index: SubscriberIndex,
    info: HashMap<SubscriberId, SubscriberInfo>,
}

/// The fan-out stage.
#[derive(Debug)]
pub struct FanoutStage {
    store: Arc<dyn Store>,
    queue: Arc<dyn Queue>,
    /// The categories' names and bots; replaced while running when an admin edits them.
    routes: Live<Vec<CategoryRoute>>,
    snapshot: RwLock<Option<Arc<Snapshot>>>,
    /// With billing on, only subscribers whose trial or paid period covers the moment of
    /// matching (and the job's category) get a delivery.
    billing: bool,
    clock: Arc<dyn Clock>,
}

/// What one job fanned out to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FanoutOutcome {
    pub matched: usize,
    pub ready: usize,
}

impl FanoutStage {
    pub fn new(
        store: Arc<dyn Store>,
        queue: Arc<dyn Queue>,
        routes: impl Into<Live<Vec<CategoryRoute>>>,
    ) -> Self {
        Self {
            store,
            queue,
            routes: routes.into(),
            snapshot: RwLock::new(None),
            billing: false,
            clock: Arc::new(SystemClock),
        }
    }

    /// Delivers only within trial and paid periods (`[billing] enabled`), as of `clock`.
    #[must_use]
    pub fn with_billing(mut self, enabled: bool, clock: Arc<dyn Clock>) -> Self {
        self.billing = enabled;
        self.clock = clock;
        self
    }

    /// Consumes the fan-out queue until `shutdown` is cancelled.
    pub async fn run(self: Arc<Self>, shutdown: CancellationToken) -> Result<(), FanoutError> {
        let mut sub = self.queue.subscribe(Topic::Fanout).await?;
        loop {
            let msg = tokio::select! {
                _ = shutdown.cancelled() => return Ok(()),
                m = sub.next() => m?,
            };
            let Some(msg) = msg else { return Ok(()) };
            self.handle(msg).await;
        }
    }

    async fn handle(&self, msg: Received) {
        let job = match msg.decode::<JobReady>() {
            Ok(j) => j,
            Err(e) => return msg.reject(e.to_string()).await,
        };
        let span = tracing::info_span!("fanout", post = job.post_id.get());
        match self
            .fan_out(job.post_id, self.clock.now())
            .instrument(span)
            .await
        {
            Ok(_) => msg.ack().await,
            Err(e) => {
                tracing::warn!(post = job.post_id.get(), error = %e, "fan-out failed; will retry");
                jobwire_queue::retry_or_dead_letter(msg, &e.to_string()).await
            }
        }
    }

    /// Fans one job out. Idempotent: a post that is not in status `job` is left alone.
    pub async fn fan_out(
        &self,
        post_id: PostId,
        now: DateTime<Utc>,
    ) -> Result<Option<FanoutOutcome>, FanoutError> {
        let started = std::time::Instant::now();
        let Some(post) = self.store.post(post_id).await? else {
            return Ok(None);
        };
        if post.status != PostStatus::Job {
            return Ok(None);
        }
        let Some(verdict) = self.store.classification(post_id).await? else {
            tracing::error!(
                post = post_id.get(),
                "job without a stored classification; skipped"
            );
            return Ok(None);
        };
        let routes = self.routes.get();
        let categories: Vec<CategorySlug> = verdict
            .categories
            .iter()
            .filter(|c| routes.iter().any(|r| &r.slug == *c))
            .cloned()
            .collect();
        let snapshot = self.snapshot().await?;
        let normalized = normalize(&post.text);
        let budget = verdict.extraction.as_ref().and_then(|e| e.budget.as_ref());
        let matched = snapshot.index.matches_with_budget(
            &JobFacts {
                categories: &categories,
                normalized_text: &normalized,
            },
            budget,
        );
        let resume = verdict.kind == jobwire_core::PostKind::Resume;
        let authors = jobwire_core::card::author_keys(
            &post.channel_handle,
            post.author.as_deref(),
            verdict
                .extraction
                .as_ref()
                .and_then(|e| e.contact.as_deref()),
        );
        let mut deliveries = Vec::with_capacity(matched.len());
        for id in &matched {
            let Some(info) = snapshot.info.get(id) else {
                continue;
            };
            if info.hides(&authors) || !info.wants.takes(resume) {
                continue;
            }
            let Some(route) = choose_route(&routes, &categories, info, self.billing, now) else {
                continue;
            };
            deliveries.push(NewDelivery {
                subscriber_id: *id,
                chat_id: info.chat_id,
                bot: route.bot.clone(),
                not_before: info.quiet_hours.as_ref().and_then(|q| q.release_at(now)),
            });
        }
        // An employer's own placement names no channel: its header says what it is.
        let direct = post.channel_handle == jobwire_core::placement::DIRECT_SOURCE;
        let card = JobCard {
            title: None,
            text: post.text.clone(),
            channel: if direct {
                String::new()
            } else {
                post.channel_title
                    .clone()
                    .unwrap_or_else(|| post.channel_handle.clone())
            },
            channel_url: post
                .channel_handle
                .strip_prefix('@')
                .map(|name| format!("https://t.me/{name}")),
            url: post.url.clone(),
            categories: categories
                .iter()
                .filter_map(|c| routes.iter().find(|r| &r.slug == c))
                .map(|r| r.name.clone())
                .collect(),
            posted_at: post.posted_at,
            extraction: verdict.extraction.clone(),
            resume,
            direct,
        };
        let parts = render(&card);
        let ready = self
            .store
            .fan_out(post_id, &parts, &deliveries, now)
            .await?;
        // Many publishes in flight at once: with a broker each waits for its confirm, and
        // one job can fan out to thousands of deliveries. The futures are made as the stream
        // is polled, at most `PUBLISH_CONCURRENCY` alive at once (a bounded queue makes this
        // wait for the senders: memory does not grow with the audience).
        // In runs of `wire::MAX_DELIVERY_BATCH` deliveries per message: the broker's work is per
        // message, and with one message per delivery it was a sixth of the distributed
        // mode's CPU.
        let ready_count = ready.len();
        let queue = self.queue.clone();
        futures::stream::iter(DeliveryReady::batches(&ready).map(move |message| {
            let queue = queue.clone();
            async move { jobwire_queue::publish(queue.as_ref(), &message).await }
        }))
        .buffer_unordered(PUBLISH_CONCURRENCY)
        .try_for_each(|()| async { Ok(()) })
        .await?;
        FannedOut {
            post: post_id,
            matched: matched.len(),
            created: deliveries.len(),
            ready: ready_count,
            took: started.elapsed(),
        }
        .emit();
        Ok(Some(FanoutOutcome {
            matched: deliveries.len(),
            ready: ready_count,
        }))
    }

    async fn snapshot(&self) -> Result<Arc<Snapshot>, FanoutError> {
        let version = self.store.subscribers_version().await?;
        if let Some(s) = self.snapshot.read().await.as_ref()
            && s.version == version
        {
            return Ok(s.clone());
        }
        let mut slot = self.snapshot.write().await;
        if let Some(s) = slot.as_ref()
            && s.version == version
        {
            return Ok(s.clone());
        }
        let rows = self.store.subscribers().await?;
        let blocks = self.store.bot_blocks(None).await?;
        let hidden = self.store.all_hidden_authors().await?;
        let wants = self.store.all_wants().await?;
        // Periods that can still cover a later moment (a renewing one runs a grace period
        // past its end); the version changes with every new, refunded or cancelled period.
        let periods = if self.billing {
            let since = self.clock.now() - chrono::Duration::hours(RENEWAL_GRACE_HOURS);
            self.store.access_periods_ending_after(since).await?
        } else {
            Vec::new()
        };
        let started = std::time::Instant::now();
        let (subscribers, mut info): (Vec<_>, HashMap<_, _>) =
            rows.iter().map(subscriber_from_row).unzip();
        for block in blocks {
            if let Some(i) = info.get_mut(&block.subscriber_id) {
                i.unreachable.push(block.bot);
            }
        }
        if !hidden.is_empty() {
            let mut by_chat: HashMap<i64, Vec<String>> = HashMap::new();
            for h in hidden {
                by_chat.entry(h.chat_id).or_default().push(h.author);
            }
            for i in info.values_mut() {
                if let Some(list) = by_chat.remove(&i.chat_id) {
                    i.hidden = list;
                }
            }
        }
        if !wants.is_empty() {
            let by_chat: HashMap<i64, jobwire_core::card::Wants> = wants.into_iter().collect();
            for i in info.values_mut() {
                if let Some(w) = by_chat.get(&i.chat_id) {
                    i.wants = *w;
                }
            }
        }
        if !periods.is_empty() {
            let mut by_chat: HashMap<i64, Vec<jobwire_core::billing::Period>> = HashMap::new();
            for p in &periods {
                by_chat.entry(p.chat_id).or_default().push(p.to_period());
            }
            for i in info.values_mut() {
                if let Some(list) = by_chat.remove(&i.chat_id) {
                    i.access = Access::new(list);
                }
            }
        }
        let snapshot = Arc::new(Snapshot {
            version,
            index: SubscriberIndex::build(subscribers),
            info,
        });
        tracing::info!(
            subscribers = rows.len(),
            version,
            took_ms = started.elapsed().as_millis() as u64,
            "subscriber index rebuilt"
        );
        *slot = Some(snapshot.clone());
        Ok(snapshot)
    }
}

/// Turns a stored subscriber into the domain type. Settings that do not parse are logged
/// and left out (a bad term is ignored, bad quiet hours mean none) rather than losing the
/// subscriber's jobs.
/// `jobwire_stage_latency_seconds{stage="fanout"}`: one job's fan-out.
pub const STAGE_LATENCY_SECONDS: &str = "jobwire_stage_latency_seconds";
/// `jobwire_deliveries_created_total`: deliveries written by fan-out.
pub const DELIVERIES_CREATED_TOTAL: &str = "jobwire_deliveries_created_total";

/// Fan-out's metrics, for `/metrics`' `# HELP` lines and buckets.
pub const METRICS: &[jobwire_core::metric::MetricDef] = &[
    jobwire_core::metric::MetricDef::histogram(
        STAGE_LATENCY_SECONDS,
        &["stage"],
        "Time one job spends in a pipeline stage (stage=fanout: matching its subscribers and writing their deliveries), in seconds.",
        jobwire_core::metric::END_TO_END_BUCKETS,
    ),
    jobwire_core::metric::MetricDef::counter(
        DELIVERIES_CREATED_TOTAL,
        &[],
        "Deliveries written by fan-out (one per job and matching subscriber).",
    ),
];

/// A job was fanned out: it counts itself and logs itself.
#[derive(Debug)]
struct FannedOut {
    post: PostId,
    matched: usize,
    created: usize,
    ready: usize,
    took: std::time::Duration,
}

impl FannedOut {
    fn emit(self) {
        metrics::histogram!(STAGE_LATENCY_SECONDS, "stage" => "fanout")
            .record(self.took.as_secs_f64());
        metrics::counter!(DELIVERIES_CREATED_TOTAL).increment(self.created as u64);
        tracing::debug!(
            post = self.post.get(),
            matched = self.matched,
            ready = self.ready,
            "fanned out"
        );
    }
}

fn subscriber_from_row(row: &SubscriberRow) -> (Subscriber, (SubscriberId, SubscriberInfo)) {
    let terms = |raw: &[String], what: &str| -> Vec<Term> {
        raw.iter()
            .filter_map(|t| match Term::parse(t) {
                Ok(term) => Some(term),
                Err(e) => {
                    tracing::warn!(subscriber = row.id.get(), term = %t, error = %e, "ignoring a bad {what} term");
                    None
                }
            })
            .collect()
    };
    let categories = row.categories.clone();
    let quiet_hours = row.quiet_hours.as_ref().and_then(|q| {
        QuietHours::parse(&format!("{}-{}", q.start, q.end), &q.time_zone)
            .map_err(
                |e| tracing::warn!(subscriber = row.id.get(), error = %e, "ignoring bad quiet hours"),
            )
            .ok()
    });
    let subscriber = Subscriber {
        id: row.id,
        chat_id: row.chat_id,
        categories: categories.clone(),
        include: terms(&row.include, "include"),
        exclude: terms(&row.exclude, "exclude"),
        paused: row.paused,
        blocked: row.blocked,
        quiet_hours,
        min_budget: row.min_budget.clone(),
    };
    (
        subscriber,
        (
            row.id,
            SubscriberInfo {
                chat_id: row.chat_id,
                categories,
                quiet_hours,
                unreachable: Vec::new(),
                access: Access::default(),
                hidden: Vec::new(),
                wants: jobwire_core::card::Wants::Jobs,
            },
        ),
    )
}
