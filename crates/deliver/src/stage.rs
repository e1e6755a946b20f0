//! The send stage: consumes [`DeliveryReady`] messages and sends each delivery's parts
//! through its bot.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, AtomicUsize};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use chrono::Utc;
use jobwire_queue::wire::DeliveryReady;
use jobwire_queue::{Queue, QueueError, Received, Topic};
use jobwire_store::{
    DeliveryId, DeliveryRow, DeliveryStatus, DeliveryUpdate, PostId, Store, StoreError, WaitKind,
};
use teloxide::prelude::*;
use teloxide::types::{InlineKeyboardMarkup, LinkPreviewOptions, ParseMode};
use teloxide::{ApiError, RequestError};
use tokio::sync::Semaphore;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

pub use crate::config::{BotConfig, CardKeyboard, SendStageConfig};
use crate::events::SendEvent;
use crate::limits::{BotLimiter, Limiter, RateLimitConfig};
use crate::recorder::Recorder;
use crate::replies::{block_scope, is_transient};
use crate::waits::WaitLog;

#[derive(Debug, thiserror::Error)]
pub enum DeliverError {
    #[error("building the HTTP client failed: {0}")]
    Client(String),
    #[error(transparent)]
    Queue(#[from] QueueError),
    #[error(transparent)]
    Store(#[from] StoreError),
    /// Recording a delivery's status failed (the status recorder's error, or it stopped).
    #[error(transparent)]
    Record(#[from] crate::recorder::RecordError),
    /// Reading a delivery failed (the row reader's error, or it stopped).
    #[error(transparent)]
    Read(#[from] crate::rows::ReadError),
}

/// Counters of what the stage did, for summaries and tests.
#[derive(Debug, Default)]
pub struct SendCounters {
    pub sent: AtomicU64,
    /// Deliveries a message named that were not this stage's to send (sent already, held,
    /// or claimed by another sender): a redelivered message's rows.
    pub skipped: AtomicU64,
    pub parts_sent: AtomicU64,
    pub rate_limited: AtomicU64,
    pub blocked: AtomicU64,
    pub failed: AtomicU64,
    pub retried: AtomicU64,
}

#[derive(Debug)]
pub(crate) struct BotSender {
    pub(crate) bot: Bot,
    pub(crate) limiter: Arc<dyn Limiter>,
    /// When this process last handed a message of this bot to the HTTP client, and the
    /// bot's pacing interval (`None`: limits lifted).
    gate: Option<(tokio::sync::Mutex<tokio::time::Instant>, Duration)>,
    /// Vacancies of this bot waiting for a send slot now: broadcasts give way while any do.
    pub(crate) waiting: AtomicUsize,
    /// The limits the gate spaces each chat's sends by.
    limits: RateLimitConfig,
    /// When the next send to each chat may leave this process (see [`BotSender::pass_gate`]).
    chat_next: Mutex<HashMap<i64, tokio::time::Instant>>,
    /// Bot API calls of this bot in flight at once ([`MAX_REQUESTS_PER_BOT`]): the deliveries
    /// beyond wait here, small, instead of each holding an HTTP connection and its buffers.
    pub(crate) requests: Semaphore,
}

/// Bot API calls one bot has in flight at once: as many as the HTTP client keeps idle
/// connections for, so connections are reused rather than opened per call. Telegram's
/// limits (30/s, 1,000/s for paid broadcasts) need far fewer at its latency.
pub(crate) const MAX_REQUESTS_PER_BOT: usize = 256;

/// Deliveries in flight per bot with the limits lifted (see [`SendStage::run`]): enough to
/// keep every request slot busy and the store's batches full.
const UNLIMITED_IN_FLIGHT_PER_BOT: usize = 4 * MAX_REQUESTS_PER_BOT;

/// Counts a vacancy as waiting for its bot while it lives.
struct Waiting<'a>(&'a AtomicUsize);

impl<'a> Waiting<'a> {
    fn new(counter: &'a AtomicUsize) -> Self {
        counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        Self(counter)
    }
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
    }
}

impl BotSender {
    /// Re-spaces sends right before the HTTP call. The limiter grants slots at the bot's
    /// pace and each chat's, but the status commit between grant and call is group-committed,
    /// so sends granted apart could leave together and arrive at Telegram bunched; this keeps
    /// them at least one interval apart as they leave this process: the bot's sends by its
    /// global pace, and the sends to `chat` by the chat's (one a second, 20 a minute for a
    /// group), counted from when each actually left.
    pub(crate) async fn pass_gate(&self, chat: i64) {
        let Some((last, interval)) = &self.gate else {
            return;
        };
        let chat_interval = self.limits.chat_interval(chat);
        let slot = {
            let mut next = self
                .chat_next
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            let now = tokio::time::Instant::now();
            let slot = next.get(&chat).map_or(now, |t| (*t).max(now));
            next.insert(chat, slot + chat_interval);
            slot
        };
        tokio::time::sleep_until(slot).await;
        let mut last = last.lock().await;
        let next = *last + *interval;
        let now = tokio::time::Instant::now();
        if next > now {
            tokio::time::sleep_until(next).await;
        }
        let left = tokio::time::Instant::now();
        *last = left;
        // The bot's pace may have held this send back after its chat slot: the next send to
        // the chat is spaced from when this one really leaves.
        let mut next = self
            .chat_next
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let at = next.entry(chat).or_insert(left + chat_interval);
        *at = (*at).max(left + chat_interval);
    }

    /// No send to `chat` leaves before `until` (a send of an earlier run, see
    /// [`SendStage::run`]).
    fn hold(&self, chat: i64, until: tokio::time::Instant) {
        self.limiter.hold(chat, until);
        let mut next = self
            .chat_next
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let at = next.entry(chat).or_insert(until);
        *at = (*at).max(until);
    }

    /// Forgets chats whose spacing has run out (bounded memory); periodic.
    fn shrink(&self) {
        self.limiter.shrink();
        let now = tokio::time::Instant::now();
        self.chat_next
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .retain(|_, at| *at > now);
    }
}

/// Makes the limiter of a bot (by its numeric id). The default is in-process.
pub type LimiterFactory = dyn Fn(u64) -> Arc<dyn Limiter> + Send + Sync;

/// The send stage. Share it in an `Arc` and call [`SendStage::run`].
#[derive(Debug)]
pub struct SendStage {
    store: Arc<dyn Store>,
    queue: Arc<dyn Queue>,
    bots: HashMap<String, BotSender>,
    recorder: Recorder,
    /// Reads the rows of concurrent deliveries in batches.
    rows: crate::rows::RowReader,
    /// Where 429s are noted for the admin panel.
    waits: WaitLog,
    renders: Mutex<HashMap<PostId, CardSlot>>,
    config: SendStageConfig,
    pub counters: SendCounters,
}

const RENDER_CACHE: usize = 4096;
/// How long a card's list of channels is reused before it is read again: a re-post in
/// another channel joins the cards sent after that.
const SOURCES_FRESH: Duration = Duration::from_secs(1);

/// A job's message as the send stage sends it: the rendered parts, the last one naming
/// every channel the job appeared in, and the link to the original post.
#[derive(Debug)]
struct Card {
    parts: Vec<String>,
    original_url: Option<String>,
    /// When jobwire received the post (for the end-to-end latency).
    received_at: Option<chrono::DateTime<Utc>>,
    read_at: std::time::Instant,
}

impl Card {
    fn fresh(&self) -> bool {
        self.read_at.elapsed() < SOURCES_FRESH
    }
}

/// A post's card in the cache, and the gate one reader at a time passes to read it: the
/// first deliveries of a job arrive together (a thousand at once with the limits lifted),
/// and each reading the render and the sources itself kept SQLite's readers busy while the
/// send stage stood idle; then again every [`SOURCES_FRESH`].
#[derive(Debug, Default)]
struct CardSlot {
    card: Option<Arc<Card>>,
    read: Arc<tokio::sync::Mutex<()>>,
}

enum Outcome {
    Done,
    /// Not ours to send now (already sent, held, or claimed by another sender).
    Skipped,
}

impl SendStage {
    /// Must be called inside a Tokio runtime (it starts the status recorder).
    pub fn new(
        store: Arc<dyn Store>,
        queue: Arc<dyn Queue>,
        bots: &[BotConfig],
        config: SendStageConfig,
    ) -> Result<Self, DeliverError> {
        let limits = config.limits;
        Self::with_limiters(store, queue, bots, config, &move |_| {
            Arc::new(BotLimiter::new(limits)) as Arc<dyn Limiter>
        })
    }

    /// Like [`SendStage::new`], with the limiter of each bot made by `limiter` (given the
    /// bot's numeric id, the part of its token before `:`).
    pub fn with_limiters(
        store: Arc<dyn Store>,
        queue: Arc<dyn Queue>,
        bots: &[BotConfig],
        config: SendStageConfig,
        limiter: &LimiterFactory,
    ) -> Result<Self, DeliverError> {
        let client = teloxide::net::default_reqwest_settings()
            .timeout(config.request_timeout)
            .pool_max_idle_per_host(MAX_REQUESTS_PER_BOT)
            .build()
            .map_err(|e| DeliverError::Client(e.to_string()))?;
        let bots = bots
            .iter()
            .map(|b| {
                let bot = Bot::with_client(b.token.expose(), client.clone())
                    .set_api_url(config.api_url.clone());
                (
                    b.name.clone(),
                    BotSender {
                        bot,
                        limiter: limiter(b.bot_id()),
                        gate: (!config.limits.unlimited).then(|| {
                            let per_sec = f64::from(config.limits.global_per_sec.max(1));
                            // Slightly tighter than the limiter's pace: this only undoes
                            // bunching, it must not become the bottleneck.
                            let interval = Duration::from_secs_f64(
                                1.0 / per_sec * (1.0 + config.limits.safety_margin / 2.0),
                            );
                            (
                                tokio::sync::Mutex::new(
                                    tokio::time::Instant::now()
                                        .checked_sub(interval)
                                        .unwrap_or_else(tokio::time::Instant::now),
                                ),
                                interval,
                            )
                        }),
                        waiting: AtomicUsize::new(0),
                        limits: config.limits,
                        chat_next: Mutex::new(HashMap::new()),
                        requests: Semaphore::new(MAX_REQUESTS_PER_BOT),
                    },
                )
            })
            .collect();
        Ok(Self {
            recorder: Recorder::spawn(store.clone()),
            rows: crate::rows::RowReader::spawn(store.clone()),
            waits: WaitLog::spawn(store.clone()),
            store,
            queue,
            bots,
            renders: Mutex::new(HashMap::new()),
            config,
            counters: SendCounters::default(),
        })
    }

    pub(crate) fn store(&self) -> &Arc<dyn Store> {
        &self.store
    }

    pub(crate) fn sender(&self, bot: &str) -> Option<&BotSender> {
        self.bots.get(bot)
    }

    /// Notes a 429 of `bot` for the admin panel (never waits, never fails).
    pub(crate) fn note_429(&self, bot: &str, retry_after: Duration) {
        self.waits.note(WaitKind::Bot429, bot, retry_after);
    }

    /// Holds each chat a bot wrote to in the last minute (by the deliveries the store
    /// recorded) until its interval since then has passed, so a restart does not forget the
    /// last second's sends (or the group's last few). A chat with a delivery still `sending`
    /// (its part may have gone out right before the restart) is held from now. A store error
    /// is logged and the stage starts without it.
    pub async fn restore_pacing(&self) {
        if self.config.limits.unlimited {
            return;
        }
        let now_utc = Utc::now();
        let now = tokio::time::Instant::now();
        let recent = match self
            .store
            .recent_sends(now_utc - chrono::Duration::seconds(60))
            .await
        {
            Ok(recent) => recent,
            Err(e) => {
                tracing::warn!(error = %e, "cannot read the last minute's sends; the rate limits start fresh");
                return;
            }
        };
        let mut held = 0usize;
        for send in recent {
            let Some(sender) = self.bots.get(&send.bot) else {
                continue;
            };
            let last = if send.in_flight {
                now
            } else {
                let ago = (now_utc - send.at).to_std().unwrap_or(Duration::ZERO);
                now.checked_sub(ago).unwrap_or(now)
            };
            let until = last + self.config.limits.chat_interval(send.chat_id);
            if until > now {
                sender.hold(send.chat_id, until);
                held += 1;
            }
        }
        if held > 0 {
            tracing::info!(
                chats = held,
                "rate limits: chats written to just before the start are held for their interval"
            );
        }
    }

    /// Consumes the send queue until `shutdown` is cancelled, then finishes the deliveries
    /// in flight (each either completes or is left `pending`/`held` for the next start).
    /// Starts with [`SendStage::restore_pacing`].
    pub async fn run(self: Arc<Self>, shutdown: CancellationToken) -> Result<(), DeliverError> {
        self.restore_pacing().await;
        let mut sub = self.queue.subscribe(Topic::Send).await?;
        let slots_total = self.in_flight();
        let slots = Arc::new(Semaphore::new(slots_total));
        let mut tasks = JoinSet::new();
        let mut last_shrink = tokio::time::Instant::now();
        loop {
            let permit = tokio::select! {
                _ = shutdown.cancelled() => break,
                p = slots.clone().acquire_owned() => match p { Ok(p) => p, Err(_) => break },
            };
            let msg = tokio::select! {
                _ = shutdown.cancelled() => break,
                m = sub.next() => m?,
            };
            let Some(msg) = msg else { break };
            let ready = match msg.decode::<DeliveryReady>() {
                Ok(r) => r,
                Err(e) => {
                    msg.reject(e.to_string()).await;
                    continue;
                }
            };
            // A message names up to a fan-out run of deliveries: one slot each (the first
            // was taken above; with `max_in_flight` under a run's length, a message takes
            // every slot and its other deliveries wait for them, see `handle`). On
            // `shutdown` meanwhile, the message is left unsettled: its rows are still
            // `pending`, and the broker hands it out again (the in-process queue's re-drive
            // finds them at the next start).
            let mut permit = permit;
            let more = ready.count().min(slots_total) - 1;
            if more > 0 {
                let more = slots
                    .clone()
                    .acquire_many_owned(u32::try_from(more).unwrap_or(u32::MAX));
                tokio::select! {
                    _ = shutdown.cancelled() => break,
                    p = more => match p { Ok(p) => permit.merge(p), Err(_) => break },
                }
            }
            let this = self.clone();
            let slots = slots.clone();
            tasks.spawn(async move {
                this.handle(msg, ready, permit, &slots).await;
            });
            while tasks.try_join_next().is_some() {}
            if last_shrink.elapsed() > Duration::from_secs(60) {
                for b in self.bots.values() {
                    b.shrink();
                }
                last_shrink = tokio::time::Instant::now();
            }
        }
        while tasks.join_next().await.is_some() {}
        Ok(())
    }

    /// Deliveries handled at once: `max_in_flight`, most of them waiting for a rate limiter.
    /// With the limits lifted nothing waits for one, and more than a few times the bots'
    /// request slots would only wait in memory instead of in the queue.
    fn in_flight(&self) -> usize {
        let most = self.config.max_in_flight.max(1);
        if self.config.limits.unlimited {
            most.min(UNLIMITED_IN_FLIGHT_PER_BOT * self.bots.len().max(1))
        } else {
            most
        }
    }

    /// Sends every delivery a message names, at once; the message is acknowledged once each
    /// is done or skipped, and retried as a whole when one failed on the store (the others
    /// are then skipped by their status on the next attempt).
    /// Each delivery gives its slot of `permit` back as soon as it is done, so one waiting
    /// for a held-up bot does not keep the slots of the message's others; a delivery the
    /// permit has no slot for (`max_in_flight` under the message's length) waits for one
    /// of `all`, so no more than `max_in_flight` are ever in flight.
    async fn handle(
        &self,
        msg: Received,
        ready: DeliveryReady,
        mut permit: tokio::sync::OwnedSemaphorePermit,
        all: &Arc<Semaphore>,
    ) {
        let mut slots = Vec::with_capacity(ready.count());
        while permit.num_permits() > 1 {
            slots.push(permit.split(1));
        }
        slots.push(Some(permit));
        slots.resize_with(ready.count(), || None);
        let results = futures::future::join_all(ready.ids().zip(slots).map(|(id, slot)| {
            let span = tracing::info_span!(
                "deliver",
                delivery = id.get(),
                post = tracing::field::Empty,
                chat = tracing::field::Empty
            );
            async move {
                let slot = match slot {
                    Some(slot) => Some(slot),
                    // The semaphore is never closed; were it, the delivery goes unbounded.
                    None => all.clone().acquire_owned().await.ok(),
                };
                let outcome = self.deliver(id).await;
                drop(slot);
                match outcome {
                    Ok(Outcome::Done) => Ok(()),
                    Ok(Outcome::Skipped) => {
                        SendEvent::Skipped.emit(&self.counters);
                        Ok(())
                    }
                    Err(e) => {
                        // The row is still `pending` (or `sending`): try the message again
                        // later.
                        tracing::warn!(delivery = id.get(), error = %e, "delivery will be retried");
                        Err(e)
                    }
                }
            }
            .instrument(span)
        }))
        .await;
        let mut errors = results.into_iter().filter_map(Result::err);
        match errors.next() {
            None => msg.ack().await,
            Some(first) => {
                let others = errors.count();
                let reason = if others == 0 {
                    first.to_string()
                } else {
                    format!("{first} (and {others} more of the message's deliveries)")
                };
                jobwire_queue::retry_or_dead_letter(msg, &reason).await
            }
        }
    }

    /// The post's card: from the cache while fresh; otherwise one caller reads it while the
    /// others wait for that read (or, holding a card read a moment ago, keep using it).
    async fn card(&self, post_id: PostId) -> Result<Option<Arc<Card>>, DeliverError> {
        let (cached, gate) = {
            let mut m = self
                .renders
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            let slot = m.entry(post_id).or_default();
            match &slot.card {
                Some(card) if card.fresh() => return Ok(Some(card.clone())),
                card => (card.clone(), slot.read.clone()),
            }
        };
        let _reading = match cached {
            // Another delivery is reading it again: the card of a second ago will do.
            Some(stale) => match gate.try_lock() {
                Ok(guard) => match self.cached_card(post_id) {
                    // Refreshed between the look and the gate.
                    Some(card) if card.fresh() => return Ok(Some(card)),
                    _ => guard,
                },
                Err(_) => return Ok(Some(stale)),
            },
            None => {
                let guard = gate.lock().await;
                // The delivery before this one in the gate read it (even a read that took
                // longer than a card stays fresh serves everyone who waited for it).
                if let Some(card) = self.cached_card(post_id) {
                    return Ok(Some(card));
                }
                guard
            }
        };
        let Some(mut parts) = self.store.job_render(post_id).await? else {
            return Ok(None);
        };
        let sources = self.store.job_sources(post_id).await?;
        if let (Some(line), Some(last)) =
            (jobwire_core::card::sources_line(&sources), parts.last_mut())
        {
            let count = {
                let mut handles: Vec<&str> = sources.iter().map(|s| s.handle.as_str()).collect();
                handles.sort_unstable();
                handles.dedup();
                handles.len()
            };
            *last = jobwire_core::card::with_sources(last, &line, count);
        }
        let card = Arc::new(Card {
            parts,
            original_url: sources.first().and_then(|s| s.url.clone()),
            received_at: sources.first().map(|s| s.received_at),
            read_at: std::time::Instant::now(),
        });
        let mut m = self
            .renders
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if m.len() >= RENDER_CACHE {
            // Keeps the fresh cards and the slots someone is reading into.
            m.retain(|_, slot| {
                slot.card.as_ref().is_some_and(|c| c.fresh()) || Arc::strong_count(&slot.read) > 1
            });
        }
        m.entry(post_id).or_default().card = Some(card.clone());
        Ok(Some(card))
    }

    /// The cached card of `post_id`, fresh or not.
    fn cached_card(&self, post_id: PostId) -> Option<Arc<Card>> {
        self.renders
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .get(&post_id)
            .and_then(|slot| slot.card.clone())
    }

    async fn record(&self, update: DeliveryUpdate) -> Result<bool, DeliverError> {
        Ok(self.recorder.record(update).await?)
    }

    /// Schedules another attempt of `row` after a transient failure (backoff doubling from
    /// 1 s, at most 256 s), or fails it for good once it has had `max_attempts`.
    async fn retry_later(
        &self,
        row: &DeliveryRow,
        error: String,
        unknown_outcome: bool,
    ) -> Result<(), DeliverError> {
        let (id, attempts) = (row.id, row.attempts + 1);
        if attempts >= self.config.max_attempts {
            SendEvent::GaveUp {
                attempts,
                error: &error,
            }
            .emit(&self.counters);
            let error = format!("gave up after {attempts} attempts: {error}");
            self.record(DeliveryUpdate::Failed { id, error }).await?;
        } else {
            SendEvent::Retried { error: &error }.emit(&self.counters);
            let backoff = Duration::from_secs(2u64.pow(row.attempts.min(8)));
            let at = Utc::now() + chrono::Duration::from_std(backoff).unwrap_or_default();
            self.record(DeliveryUpdate::Retry {
                id,
                at,
                error,
                unknown_outcome,
            })
            .await?;
        }
        Ok(())
    }

    async fn deliver(&self, id: DeliveryId) -> Result<Outcome, DeliverError> {
        let Some(row) = self.rows.read(id).await? else {
            return Ok(Outcome::Skipped);
        };
        if row.status != DeliveryStatus::Pending {
            return Ok(Outcome::Skipped);
        }
        let Some(sender) = self.bots.get(&row.bot) else {
            self.record(DeliveryUpdate::Failed {
                id,
                error: format!("no bot named {:?} is configured", row.bot),
            })
            .await?;
            return Ok(Outcome::Done);
        };
        let Some(card) = self.card(row.post_id).await? else {
            self.record(DeliveryUpdate::Failed {
                id,
                error: "the job has no rendered message".to_owned(),
            })
            .await?;
            return Ok(Outcome::Done);
        };
        let chat = row.chat_id;
        let _waiting = Waiting::new(&sender.waiting);
        sender.limiter.acquire(chat).await;
        if !self.record(DeliveryUpdate::Claim { id }).await? {
            return Ok(Outcome::Skipped);
        }
        let span = tracing::Span::current();
        span.record("post", row.post_id.get());
        span.record("chat", chat);
        let parts = &card.parts;
        // The buttons go under the last part: report it, hide its author, open the original.
        let mut keyboard = self.card_keyboard(&row, card.original_url.as_deref());
        let mut with_link = card.original_url.is_some();
        for (i, part) in parts.iter().enumerate().skip(row.parts_sent as usize) {
            if i > row.parts_sent as usize {
                sender.limiter.acquire(chat).await;
            }
            loop {
                sender.pass_gate(chat).await;
                sender.limiter.pace_send().await;
                let sent_at = std::time::Instant::now();
                let mut request = sender
                    .bot
                    .send_message(ChatId(chat), part.clone())
                    .parse_mode(ParseMode::Html)
                    .link_preview_options(LinkPreviewOptions {
                        is_disabled: true,
                        url: None,
                        prefer_small_media: false,
                        prefer_large_media: false,
                        show_above_text: false,
                    });
                if i + 1 == parts.len()
                    && let Some(keyboard) = &keyboard
                {
                    request = request.reply_markup(keyboard.clone());
                }
                // Boxed: a delivery waiting elsewhere (store, limiter, a request slot) does
                // not carry the HTTP call's state in its task.
                let result = {
                    let _slot = sender.requests.acquire().await;
                    Box::pin(request.send()).await
                };
                match result {
                    Ok(message) => {
                        SendEvent::PartSent {
                            latency: sent_at.elapsed(),
                        }
                        .emit(&self.counters);
                        let message_id = i64::from(message.id.0);
                        if i + 1 == parts.len() {
                            // The last part: it and the delivery's `sent` in one write.
                            self.record(DeliveryUpdate::LastPartSent { id, message_id })
                                .await?;
                            // Held on purpose (quiet hours, a plan's delay, catching
                            // up): not the pipeline's latency.
                            let end_to_end = card
                                .received_at
                                .filter(|_| row.not_before.is_none())
                                .and_then(|at| (Utc::now() - at).to_std().ok());
                            SendEvent::Sent { end_to_end }.emit(&self.counters);
                            return Ok(Outcome::Done);
                        }
                        self.record(DeliveryUpdate::PartSent { id, message_id })
                            .await?;
                        break;
                    }
                    Err(RequestError::RetryAfter(wait)) => {
                        SendEvent::RateLimited {
                            bot: &row.bot,
                            retry_after: wait.duration(),
                        }
                        .emit(&self.counters);
                        self.note_429(&row.bot, wait.duration());
                        sender.limiter.freeze_for(wait.duration()).await;
                        sender.limiter.acquire(chat).await;
                    }
                    // Telegram's trouble or the network's: the call may or may not have
                    // arrived. Retried later, up to `max_attempts`.
                    Err(e) if is_transient(&e) => {
                        // A network error may come after Telegram took the message.
                        let unknown_outcome =
                            matches!(e, RequestError::Network(_) | RequestError::Io(_));
                        Box::pin(self.retry_later(&row, e.to_string(), unknown_outcome)).await?;
                        return Ok(Outcome::Done);
                    }
                    // Telegram refused the "Open original" button's link: the card goes out
                    // with the other buttons (the link is in its text too).
                    Err(RequestError::Api(ApiError::Unknown(d)))
                        if with_link
                            && i + 1 == parts.len()
                            && d.contains("BUTTON_URL_INVALID") =>
                    {
                        tracing::warn!(
                            post = row.post_id.get(),
                            "Telegram refused the original's link as a button; sending without it"
                        );
                        keyboard = self.card_keyboard(&row, None);
                        with_link = false;
                    }
                    // The Bot API's definitive answers: sending it again would get the same.
                    Err(e) => {
                        let error = e.to_string();
                        let scope = match &e {
                            RequestError::Api(api) => block_scope(api),
                            _ => None,
                        };
                        let update = match scope {
                            Some(scope) => {
                                SendEvent::Blocked { chat }.emit(&self.counters);
                                DeliveryUpdate::Blocked { id, error, scope }
                            }
                            None => {
                                SendEvent::Refused { error: &error }.emit(&self.counters);
                                DeliveryUpdate::Failed { id, error }
                            }
                        };
                        self.record(update).await?;
                        return Ok(Outcome::Done);
                    }
                }
            }
        }
        self.record(DeliveryUpdate::Sent { id }).await?;
        // Every part went out in an earlier attempt: not this send's latency.
        SendEvent::Sent { end_to_end: None }.emit(&self.counters);
        Ok(Outcome::Done)
    }
}

impl SendStage {
    /// The keyboard under a delivered card, in the language its reader reads (none without
    /// a keyboard configured).
    fn card_keyboard(
        &self,
        row: &DeliveryRow,
        original_url: Option<&str>,
    ) -> Option<InlineKeyboardMarkup> {
        let draw = self.config.keyboard.as_ref()?;
        Some(draw(row.lang.as_deref(), row.id.get(), original_url))
    }
}
