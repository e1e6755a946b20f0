//! [`Reader`]: joins channels over several accounts, streams their posts and edits, catches
//! up from per-channel cursors, sits out flood waits, fails over and watches for silence.
//!
//! The reader runs as one task ([`Reader::run`]) and talks to Telegram only through the
//! [`Account`] trait. Account operations run inline in that task: a short flood wait
//! (≤ [`ReaderConfig::flood_sleep_threshold`]) pauses the reader, while live updates keep
//! queueing in memory, so nothing is lost.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, Utc};
use jobwire_core::IncomingPost;
use rand::Rng;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio::time::{Instant, sleep};
use tracing::{debug, info, warn};

use crate::ChannelRef;
use crate::account::{Account, AccountError, AccountUpdate, RawMessage, ResolvedPeer};
use crate::convert::{PostChannel, post_from_parts};
use crate::store::{ReaderStore, StoreError};

/// Tunables of the reader. Defaults stay well under Telegram's known anti-abuse limits.
#[derive(Debug, Clone)]
pub struct ReaderConfig {
    /// Least time between two Telegram joins (or resolves) of one account. Default 90 s.
    pub join_interval: Duration,
    /// Random extra delay added to each join interval. Default 30 s.
    pub join_jitter: Duration,
    /// Most joins per account in any 24 hours. Default 40.
    pub max_joins_per_day: usize,
    /// Flood waits up to this long are slept through; longer ones defer the operation and
    /// pause the account. Default 30 s.
    pub flood_sleep_threshold: Duration,
    /// An account flooded at least this long loses its channels to other accounts.
    /// Default 30 min.
    pub reassign_after_flood: Duration,
    /// Most channels one account reads (Telegram's limit is about 500). Default 450.
    pub channels_per_account: usize,
    /// A channel without a live update for this long is polled (history since its cursor).
    /// Default 2 min.
    pub poll_interval: Duration,
    /// Least time between two polls of one account. Default 2 s.
    pub poll_spacing: Duration,
    /// Messages fetched per history call. Default 100.
    pub history_batch: usize,
    /// Newest messages handed on when a channel is first joined (0: start from now).
    pub initial_backfill: usize,
    /// Parts of an album arriving within this window become one post. Default 2 s.
    pub album_window: Duration,
    /// A channel is "silent" after `silence_factor` × its usual gap between posts. Default 6.
    pub silence_factor: f64,
    /// ... but never before this long. Default 6 h.
    pub min_channel_silence: Duration,
    /// Silence limit for channels whose usual gap is not known yet. Default 48 h.
    pub unknown_channel_silence: Duration,
    /// An account with no update at all for this long is reported. Default 2 h.
    pub account_silence: Duration,
    /// How often the reader checks its timers. Default 500 ms.
    pub tick: Duration,
}

impl Default for ReaderConfig {
    fn default() -> Self {
        Self {
            join_interval: Duration::from_secs(90),
            join_jitter: Duration::from_secs(30),
            max_joins_per_day: 40,
            flood_sleep_threshold: Duration::from_secs(30),
            reassign_after_flood: Duration::from_secs(30 * 60),
            channels_per_account: 450,
            poll_interval: Duration::from_secs(120),
            poll_spacing: Duration::from_secs(2),
            history_batch: 100,
            initial_backfill: 0,
            album_window: Duration::from_secs(2),
            silence_factor: 6.0,
            min_channel_silence: Duration::from_secs(6 * 3600),
            unknown_channel_silence: Duration::from_secs(48 * 3600),
            account_silence: Duration::from_secs(2 * 3600),
            tick: Duration::from_millis(500),
        }
    }
}

/// Wall-clock time for the watchdog (message dates are wall-clock).
pub trait Clock: Send + Sync {
    /// Now.
    fn now(&self) -> DateTime<Utc>;
}

/// The system clock.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> DateTime<Utc> {
        Utc::now()
    }
}

/// Wall-clock time that follows tokio's clock from a fixed start: with
/// `tokio::time::pause()`, tests control it exactly.
#[derive(Debug, Clone, Copy)]
pub struct TokioClock {
    base: DateTime<Utc>,
    start: Instant,
}

impl TokioClock {
    /// `base` is the wall time at the moment of this call.
    pub fn starting_at(base: DateTime<Utc>) -> Self {
        Self {
            base,
            start: Instant::now(),
        }
    }
}

impl Clock for TokioClock {
    fn now(&self) -> DateTime<Utc> {
        let elapsed = chrono::Duration::from_std(self.start.elapsed()).unwrap_or_default();
        self.base + elapsed
    }
}

/// What the reader hands on.
#[derive(Debug, Clone, PartialEq)]
pub enum ReaderEvent {
    /// A new post (an album is one post), in id order per channel.
    Post(IncomingPost),
    /// A post was edited; `external_id` names the post (for albums, its first message).
    ///
    /// The caller decides what an edit means: if the post was not delivered yet, update its
    /// text (and classify it again); if it was already delivered, keep it as is so
    /// subscribers are not notified twice. The reader only drops edits that did not change
    /// the text it last handed on.
    Edited(IncomingPost),
    /// Something the admin should know (silence, a dead session, a flooded account).
    Alert {
        /// The account concerned, if any.
        account: Option<String>,
        /// The channel concerned ([`ChannelRef::handle`]), if any.
        channel: Option<String>,
        /// A sentence for the admin chat.
        message: String,
    },
    /// A channel could not be joined and is not being read.
    JoinFailed {
        /// [`ChannelRef::handle`].
        channel: String,
        /// Why, for the admin.
        reason: String,
    },
}

/// Why the reader stopped.
#[derive(Debug, thiserror::Error)]
pub enum ReaderError {
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// No account was configured.
    #[error("no Telegram account is configured")]
    NoAccounts,
}

/// Commands for a running reader.
#[derive(Debug)]
enum Command {
    Add(ChannelRef),
}

/// Adds channels to a running reader.
#[derive(Debug, Clone)]
pub struct ReaderHandle {
    tx: mpsc::UnboundedSender<Command>,
}

impl ReaderHandle {
    /// Starts reading `channel` (joined at the configured pace). Returns `false` when the
    /// reader has stopped.
    pub fn add_channel(&self, channel: ChannelRef) -> bool {
        self.tx.send(Command::Add(channel)).is_ok()
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Health {
    Active,
    Flooded(Instant),
    Dead,
}

struct AccountState {
    account: Arc<dyn Account>,
    id: String,
    health: Health,
    cap: usize,
    next_join_at: Instant,
    joins: VecDeque<Instant>,
    next_poll_at: Instant,
    last_update: Instant,
    silence_alerted: bool,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Phase {
    /// Waiting for an account, or for its account to join.
    Pending,
    Joined,
    /// Not read: join failed (already reported).
    Failed,
}

struct Album {
    grouped_id: i64,
    parts: Vec<RawMessage>,
    deadline: Instant,
}

struct ChannelState {
    reference: ChannelRef,
    key: String,
    account: Option<usize>,
    peer: Option<ResolvedPeer>,
    phase: Phase,
    cursor: Option<i64>,
    album: Option<Album>,
    last_poll: Option<Instant>,
    last_live: Option<Instant>,
    /// Message id → (post id, hash of the text handed on) for recent posts, for edits.
    recent: VecDeque<(i64, i64, u64)>,
    last_post_date: Option<DateTime<Utc>>,
    gap_ewma: Option<f64>,
    silence_alerted: bool,
}

impl ChannelState {
    fn new(reference: ChannelRef) -> Self {
        Self {
            key: reference.key(),
            reference,
            account: None,
            peer: None,
            phase: Phase::Pending,
            cursor: None,
            album: None,
            last_poll: None,
            last_live: None,
            recent: VecDeque::new(),
            last_post_date: None,
            gap_ewma: None,
            silence_alerted: false,
        }
    }

    /// The highest message id seen: the cursor or a part of the pending album.
    fn seen_max(&self) -> i64 {
        let album = self
            .album
            .as_ref()
            .and_then(|a| a.parts.iter().map(|p| p.id).max())
            .unwrap_or(0);
        self.cursor.unwrap_or(0).max(album)
    }
}

const RECENT_PER_CHANNEL: usize = 300;
const MAX_RETRIES: usize = 3;
const EWMA_ALPHA: f64 = 0.2;

/// What to do after an account error.
enum Next {
    Retry,
    Deferred,
    Failed(AccountError),
}

/// The reader. Build with [`Reader::new`], add channels, then [`Reader::run`].
pub struct Reader {
    config: ReaderConfig,
    accounts: Vec<AccountState>,
    channels: Vec<ChannelState>,
    by_peer: HashMap<i64, usize>,
    by_key: HashMap<String, usize>,
    store: Arc<dyn ReaderStore>,
    clock: Arc<dyn Clock>,
    events: mpsc::Sender<ReaderEvent>,
    commands: mpsc::UnboundedReceiver<Command>,
    handle: ReaderHandle,
    started: DateTime<Utc>,
}

impl std::fmt::Debug for Reader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Reader")
            .field("accounts", &self.accounts.len())
            .field("channels", &self.channels.len())
            .finish_non_exhaustive()
    }
}

struct PumpGuard(Vec<JoinHandle<()>>);

impl Drop for PumpGuard {
    fn drop(&mut self) {
        for h in &self.0 {
            h.abort();
        }
    }
}

/// The channel was closed by the receiver: stop quietly.
struct Closed;

impl Reader {
    /// A reader over `accounts` (in preference order), persisting to `store` and sending
    /// events to `events`.
    pub fn new(
        config: ReaderConfig,
        accounts: Vec<Arc<dyn Account>>,
        store: Arc<dyn ReaderStore>,
        clock: Arc<dyn Clock>,
        events: mpsc::Sender<ReaderEvent>,
    ) -> Self {
        let now = Instant::now();
        let (tx, commands) = mpsc::unbounded_channel();
        let cap = config.channels_per_account;
        Self {
            accounts: accounts
                .into_iter()
                .map(|account| AccountState {
                    id: account.id().to_string(),
                    account,
                    health: Health::Active,
                    cap,
                    next_join_at: now,
                    joins: VecDeque::new(),
                    next_poll_at: now,
                    last_update: now,
                    silence_alerted: false,
                })
                .collect(),
            config,
            channels: Vec::new(),
            by_peer: HashMap::new(),
            by_key: HashMap::new(),
            store,
            started: clock.now(),
            clock,
            events,
            commands,
            handle: ReaderHandle { tx },
        }
    }

    /// A handle to add channels while the reader runs.
    pub fn handle(&self) -> ReaderHandle {
        self.handle.clone()
    }

    /// Adds a channel before the reader starts (duplicates are ignored).
    pub fn add_channel(&mut self, reference: ChannelRef) {
        let key = reference.key();
        if self.by_key.contains_key(&key) {
            return;
        }
        self.by_key.insert(key, self.channels.len());
        self.channels.push(ChannelState::new(reference));
    }

    /// Runs until the receiver of events is dropped. Errors only when the store fails or
    /// no account is configured; Telegram errors are handled (and reported as events).
    pub async fn run(mut self) -> Result<(), ReaderError> {
        if self.accounts.is_empty() {
            return Err(ReaderError::NoAccounts);
        }
        let (utx, mut urx) = mpsc::unbounded_channel();
        let _pumps = PumpGuard(
            self.accounts
                .iter()
                .enumerate()
                .map(|(i, a)| tokio::spawn(pump(i, Arc::clone(&a.account), utx.clone())))
                .collect(),
        );
        drop(utx);
        match self.main_loop(&mut urx).await {
            Ok(()) | Err(Ok(Closed)) => Ok(()),
            Err(Err(e)) => Err(e),
        }
    }

    async fn main_loop(
        &mut self,
        updates: &mut mpsc::UnboundedReceiver<(usize, Result<AccountUpdate, AccountError>)>,
    ) -> Result<(), Result<Closed, ReaderError>> {
        for i in 0..self.channels.len() {
            self.restore(i).await?;
        }
        self.assign_pending().await?;
        let mut tick = tokio::time::interval(self.config.tick);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                Some((i, update)) = updates.recv() => self.on_update(i, update).await?,
                Some(cmd) = self.commands.recv() => match cmd {
                    Command::Add(r) => {
                        if !self.by_key.contains_key(&r.key()) {
                            self.add_channel(r);
                            let i = self.channels.len() - 1;
                            self.restore(i).await?;
                            self.assign_pending().await?;
                        }
                    }
                },
                _ = tick.tick() => self.on_tick().await?,
            }
        }
    }

    /// Loads a channel's cursor, assignment and cached peer.
    async fn restore(&mut self, i: usize) -> Result<(), Result<Closed, ReaderError>> {
        let key = self.channels[i].key.clone();
        self.channels[i].cursor = self.store.cursor(&key).await.map_err(err)?;
        let assigned = self
            .store
            .assignments()
            .await
            .map_err(err)?
            .into_iter()
            .find(|(c, _)| *c == key)
            .and_then(|(_, a)| self.accounts.iter().position(|s| s.id == a));
        if let Some(a) = assigned {
            self.channels[i].account = Some(a);
            let peer = self
                .store
                .cached_peer(&self.accounts[a].id, &key)
                .await
                .map_err(err)?;
            self.channels[i].peer = peer;
        }
        Ok(())
    }

    fn load(&self, a: usize) -> usize {
        self.channels
            .iter()
            .filter(|c| c.account == Some(a) && c.phase != Phase::Failed)
            .count()
    }

    fn usable(&self, a: usize) -> bool {
        match self.accounts[a].health {
            Health::Active => true,
            Health::Flooded(until) => {
                until.saturating_duration_since(Instant::now()) < self.config.reassign_after_flood
            }
            Health::Dead => false,
        }
    }

    /// Gives every channel without a usable account the least-loaded account with room.
    async fn assign_pending(&mut self) -> Result<(), Result<Closed, ReaderError>> {
        let mut unplaced = 0usize;
        for i in 0..self.channels.len() {
            if self.channels[i].phase == Phase::Failed {
                continue;
            }
            if let Some(a) = self.channels[i].account
                && self.usable(a)
            {
                continue;
            }
            let best = (0..self.accounts.len())
                .filter(|&a| self.usable(a) && self.load(a) < self.accounts[a].cap)
                .min_by_key(|&a| self.load(a));
            let Some(a) = best else {
                self.channels[i].account = None;
                unplaced += 1;
                continue;
            };
            let key = self.channels[i].key.clone();
            info!(channel = %key, account = %self.accounts[a].id, "channel assigned");
            self.store
                .assign(&key, &self.accounts[a].id)
                .await
                .map_err(err)?;
            let peer = self
                .store
                .cached_peer(&self.accounts[a].id, &key)
                .await
                .map_err(err)?;
            let c = &mut self.channels[i];
            c.account = Some(a);
            c.phase = Phase::Pending;
            c.peer = peer;
        }
        if unplaced > 0 {
            warn!(unplaced, "channels without an account");
        }
        Ok(())
    }

    async fn emit(&mut self, event: ReaderEvent) -> Result<(), Result<Closed, ReaderError>> {
        self.events.send(event).await.map_err(|_| Ok(Closed))
    }

    async fn alert(
        &mut self,
        account: Option<usize>,
        channel: Option<usize>,
        message: String,
    ) -> Result<(), Result<Closed, ReaderError>> {
        warn!(%message, "alert");
        let account = account.map(|a| self.accounts[a].id.clone());
        let channel = channel.map(|c| self.channels[c].reference.handle());
        self.emit(ReaderEvent::Alert {
            account,
            channel,
            message,
        })
        .await
    }

    /// Decides what an account error means: sleep and retry, defer, or a real failure.
    async fn on_error(
        &mut self,
        a: usize,
        error: AccountError,
    ) -> Result<Next, Result<Closed, ReaderError>> {
        match error {
            AccountError::FloodWait(d) if d <= self.config.flood_sleep_threshold => {
                debug!(account = %self.accounts[a].id, secs = d.as_secs(), "short flood wait: sleeping");
                sleep(d).await;
                Ok(Next::Retry)
            }
            AccountError::FloodWait(d) => {
                self.accounts[a].health = Health::Flooded(Instant::now() + d);
                if d >= self.config.reassign_after_flood {
                    let msg = format!(
                        "account {} is flood-limited for {}; its channels move to other accounts",
                        self.accounts[a].id,
                        human(d)
                    );
                    self.alert(Some(a), None, msg).await?;
                    self.failover(a).await?;
                } else {
                    info!(account = %self.accounts[a].id, secs = d.as_secs(), "flood wait: deferring");
                }
                Ok(Next::Deferred)
            }
            AccountError::Banned | AccountError::SessionDead => {
                if self.accounts[a].health != Health::Dead {
                    self.accounts[a].health = Health::Dead;
                    let what = if error == AccountError::Banned {
                        "is banned"
                    } else {
                        "lost its session (revoked or logged out; run `jobwire login` again)"
                    };
                    let msg = format!(
                        "account {} {what}; its channels move to other accounts",
                        self.accounts[a].id
                    );
                    self.alert(Some(a), None, msg).await?;
                    self.failover(a).await?;
                }
                Ok(Next::Deferred)
            }
            other => Ok(Next::Failed(other)),
        }
    }

    /// Moves every channel of account `a` to other accounts.
    async fn failover(&mut self, a: usize) -> Result<(), Result<Closed, ReaderError>> {
        let mut moved = 0;
        for c in &mut self.channels {
            if c.account == Some(a) && c.phase != Phase::Failed {
                c.account = None;
                c.phase = Phase::Pending;
                c.peer = None;
                moved += 1;
            }
        }
        self.rebuild_peer_index();
        self.assign_pending().await?;
        let stranded = self
            .channels
            .iter()
            .filter(|c| c.account.is_none() && c.phase == Phase::Pending)
            .count();
        info!(from = %self.accounts[a].id, moved, stranded, "failover");
        if stranded > 0 {
            let msg = format!("{stranded} channels have no account left to read them");
            self.alert(None, None, msg).await?;
        }
        Ok(())
    }

    fn rebuild_peer_index(&mut self) {
        self.by_peer = self
            .channels
            .iter()
            .enumerate()
            .filter(|(_, c)| c.phase == Phase::Joined)
            .filter_map(|(i, c)| c.peer.as_ref().map(|p| (p.id, i)))
            .collect();
    }

    async fn on_tick(&mut self) -> Result<(), Result<Closed, ReaderError>> {
        let now = Instant::now();
        for i in 0..self.channels.len() {
            if self.channels[i]
                .album
                .as_ref()
                .is_some_and(|a| a.deadline <= now)
            {
                self.flush_album(i).await?;
            }
        }
        let mut recovered = false;
        for a in &mut self.accounts {
            if let Health::Flooded(until) = a.health
                && until <= now
            {
                info!(account = %a.id, "flood wait over");
                a.health = Health::Active;
                recovered = true;
            }
        }
        if recovered
            || self
                .channels
                .iter()
                .any(|c| c.account.is_none() && c.phase == Phase::Pending)
        {
            self.assign_pending().await?;
        }
        for a in 0..self.accounts.len() {
            if self.accounts[a].health != Health::Active {
                continue;
            }
            self.join_step(a).await?;
            if self.accounts[a].health == Health::Active && self.accounts[a].next_poll_at <= now {
                self.poll_step(a).await?;
            }
        }
        self.watchdog().await
    }

    /// Joins channels of account `a`: channels with a cached, joined peer at once, one that
    /// needs Telegram when the pacing allows.
    async fn join_step(&mut self, a: usize) -> Result<(), Result<Closed, ReaderError>> {
        loop {
            let Some(i) = (0..self.channels.len()).find(|&i| {
                self.channels[i].account == Some(a) && self.channels[i].phase == Phase::Pending
            }) else {
                return Ok(());
            };
            let cached = self.channels[i].peer.as_ref().is_some_and(|p| p.joined);
            if !cached {
                let now = Instant::now();
                let day = Duration::from_secs(24 * 3600);
                let acc = &mut self.accounts[a];
                while acc
                    .joins
                    .front()
                    .is_some_and(|t| now.duration_since(*t) >= day)
                {
                    acc.joins.pop_front();
                }
                if now < acc.next_join_at || acc.joins.len() >= self.config.max_joins_per_day {
                    return Ok(());
                }
            }
            let done = self.join_channel(a, i).await?;
            if !done || self.accounts[a].health != Health::Active {
                return Ok(());
            }
        }
    }

    /// Resolves (once) and joins channel `i` with account `a`. Returns whether the account
    /// may go on with the next channel right away (no Telegram call was needed).
    async fn join_channel(
        &mut self,
        a: usize,
        i: usize,
    ) -> Result<bool, Result<Closed, ReaderError>> {
        let account = Arc::clone(&self.accounts[a].account);
        let key = self.channels[i].key.clone();
        let reference = self.channels[i].reference.clone();
        let mut used_network = false;
        let mut peer = match self.channels[i].peer.clone() {
            Some(p) => p,
            None => {
                used_network = true;
                self.pace_join(a);
                let mut tries = 0;
                loop {
                    tries += 1;
                    match account.resolve(&reference).await {
                        Ok(p) => break p,
                        Err(e) => match self.on_error(a, e).await? {
                            Next::Retry if tries < MAX_RETRIES => continue,
                            Next::Retry | Next::Deferred => return Ok(false),
                            Next::Failed(e) => {
                                self.join_failed(i, &e).await?;
                                return Ok(false);
                            }
                        },
                    }
                }
            }
        };
        self.store
            .cache_peer(&self.accounts[a].id, &key, &peer)
            .await
            .map_err(err)?;
        self.channels[i].peer = Some(peer.clone());
        if !peer.joined {
            used_network = true;
            self.pace_join(a);
            let mut tries = 0;
            peer = loop {
                tries += 1;
                match account.join(&peer).await {
                    Ok(p) => break p,
                    Err(AccountError::ChannelsTooMuch) => {
                        let load = self.load(a).saturating_sub(1);
                        self.accounts[a].cap = load;
                        warn!(account = %self.accounts[a].id, load, "account is full");
                        self.channels[i].account = None;
                        self.assign_pending().await?;
                        if self.channels[i].account.is_none() {
                            self.join_failed(i, &AccountError::ChannelsTooMuch).await?;
                        }
                        return Ok(false);
                    }
                    Err(e) => match self.on_error(a, e).await? {
                        Next::Retry if tries < MAX_RETRIES => continue,
                        Next::Retry | Next::Deferred => return Ok(false),
                        Next::Failed(e) => {
                            self.join_failed(i, &e).await?;
                            return Ok(false);
                        }
                    },
                }
            };
            peer.joined = true;
            self.store
                .cache_peer(&self.accounts[a].id, &key, &peer)
                .await
                .map_err(err)?;
            info!(channel = %key, account = %self.accounts[a].id, "joined");
        }
        let c = &mut self.channels[i];
        c.peer = Some(peer);
        c.phase = Phase::Joined;
        c.last_poll = None;
        self.rebuild_peer_index();
        if self.channels[i].cursor.is_none() {
            self.start_cursor(a, i).await?;
        }
        Ok(!used_network)
    }

    fn pace_join(&mut self, a: usize) {
        let jitter_ms = self.config.join_jitter.as_millis() as u64;
        let jitter = if jitter_ms > 0 {
            Duration::from_millis(rand::rng().random_range(0..=jitter_ms))
        } else {
            Duration::ZERO
        };
        let acc = &mut self.accounts[a];
        let now = Instant::now();
        acc.next_join_at = now + self.config.join_interval + jitter;
        acc.joins.push_back(now);
    }

    async fn join_failed(
        &mut self,
        i: usize,
        e: &AccountError,
    ) -> Result<(), Result<Closed, ReaderError>> {
        let c = &mut self.channels[i];
        c.phase = Phase::Failed;
        let channel = c.reference.handle();
        warn!(%channel, error = %e, "cannot join");
        self.emit(ReaderEvent::JoinFailed {
            channel,
            reason: e.to_string(),
        })
        .await
    }

    /// A newly joined channel: start from its newest message (handing on the newest
    /// `initial_backfill` ones).
    async fn start_cursor(
        &mut self,
        a: usize,
        i: usize,
    ) -> Result<(), Result<Closed, ReaderError>> {
        let Some(peer) = self.channels[i].peer.clone() else {
            return Ok(());
        };
        let want = self.config.initial_backfill.max(1);
        let account = Arc::clone(&self.accounts[a].account);
        let msgs = match account.history_since(&peer, 0, want).await {
            Ok(m) => m,
            Err(e) => {
                // No cursor yet: the next poll tries again.
                if let Next::Failed(e) = self.on_error(a, e).await? {
                    warn!(channel = %self.channels[i].key, error = %e, "cannot read the newest message");
                }
                return Ok(());
            }
        };
        let newest = msgs.iter().map(|m| m.id).max().unwrap_or(0);
        if self.config.initial_backfill == 0 {
            self.set_cursor(i, newest).await?;
        } else {
            self.set_cursor(i, msgs.iter().map(|m| m.id).min().unwrap_or(1) - 1)
                .await?;
            for m in msgs {
                self.ingest(i, m).await?;
            }
        }
        Ok(())
    }

    async fn set_cursor(&mut self, i: usize, id: i64) -> Result<(), Result<Closed, ReaderError>> {
        let c = &mut self.channels[i];
        if c.cursor.is_some_and(|old| old >= id) {
            return Ok(());
        }
        c.cursor = Some(id);
        self.store.set_cursor(&c.key, id).await.map_err(err)
    }

    /// Polls the joined channel of account `a` that waited longest, if one is due.
    async fn poll_step(&mut self, a: usize) -> Result<(), Result<Closed, ReaderError>> {
        let now = Instant::now();
        let interval = self.config.poll_interval;
        let due = (0..self.channels.len())
            .filter(|&i| {
                self.channels[i].account == Some(a) && self.channels[i].phase == Phase::Joined
            })
            .filter_map(|i| {
                let c = &self.channels[i];
                let last = match (c.last_poll, c.last_live) {
                    (None, _) => return Some((None, i)),
                    (Some(p), Some(l)) => p.max(l),
                    (Some(p), None) => p,
                };
                (now.duration_since(last) >= interval).then_some((Some(last), i))
            })
            .min_by_key(|(last, _)| *last);
        let Some((_, i)) = due else {
            return Ok(());
        };
        self.accounts[a].next_poll_at = now + self.config.poll_spacing;
        let more = self.catch_up(a, i).await?;
        if more {
            // More history waits: poll this channel again at the next chance.
            self.channels[i].last_poll = None;
        }
        Ok(())
    }

    /// Fetches history after the cursor and hands it on. Returns whether a full batch came
    /// back (more may wait).
    async fn catch_up(&mut self, a: usize, i: usize) -> Result<bool, Result<Closed, ReaderError>> {
        let Some(peer) = self.channels[i].peer.clone() else {
            return Ok(false);
        };
        if self.channels[i].cursor.is_none() {
            self.start_cursor(a, i).await?;
            self.channels[i].last_poll = Some(Instant::now());
            return Ok(false);
        }
        let after = self.channels[i].cursor.unwrap_or(0);
        let account = Arc::clone(&self.accounts[a].account);
        let mut tries = 0;
        let msgs = loop {
            tries += 1;
            match account
                .history_since(&peer, after, self.config.history_batch)
                .await
            {
                Ok(m) => break m,
                Err(e) => match self.on_error(a, e).await? {
                    Next::Retry if tries < MAX_RETRIES => continue,
                    Next::Retry | Next::Deferred => return Ok(false),
                    Next::Failed(e) => {
                        warn!(channel = %self.channels[i].key, error = %e, "history failed");
                        self.channels[i].last_poll = Some(Instant::now());
                        return Ok(false);
                    }
                },
            }
        };
        self.channels[i].last_poll = Some(Instant::now());
        let full = msgs.len() >= self.config.history_batch;
        let mut msgs = msgs;
        msgs.sort_by_key(|m| m.id);
        let fresh = msgs.iter().filter(|m| m.id > after).count();
        if fresh > 0 {
            debug!(channel = %self.channels[i].key, fresh, "caught up");
        }
        for m in msgs {
            self.ingest(i, m).await?;
        }
        Ok(full)
    }

    async fn on_update(
        &mut self,
        a: usize,
        update: Result<AccountUpdate, AccountError>,
    ) -> Result<(), Result<Closed, ReaderError>> {
        let now = Instant::now();
        let update = match update {
            Ok(u) => u,
            Err(e) => {
                match self.on_error(a, e).await? {
                    Next::Failed(e) => {
                        // A disconnect: updates may have been lost; poll everything soon.
                        info!(account = %self.accounts[a].id, error = %e, "update stream error; catching up");
                        for c in &mut self.channels {
                            if c.account == Some(a) {
                                c.last_poll = None;
                                c.last_live = None;
                            }
                        }
                    }
                    Next::Retry | Next::Deferred => {}
                }
                return Ok(());
            }
        };
        let acc = &mut self.accounts[a];
        acc.last_update = now;
        acc.silence_alerted = false;
        let (msg, edited) = match update {
            AccountUpdate::New(m) => (m, false),
            AccountUpdate::Edited(m) => (m, true),
        };
        let Some(&i) = self.by_peer.get(&msg.peer) else {
            debug!(peer = msg.peer, "update from a chat that is not configured");
            return Ok(());
        };
        self.channels[i].last_live = Some(now);
        if edited && msg.id <= self.channels[i].seen_max() {
            return self.on_edit(i, msg).await;
        }
        // New (or an edit of a message never seen). A gap before it: catch up first, so
        // posts leave in id order and none is skipped.
        let gap = self.channels[i]
            .cursor
            .is_some_and(|_| msg.id > self.channels[i].seen_max() + 1);
        if gap && let Some(owner) = self.channels[i].account {
            if self.accounts[owner].health == Health::Active {
                debug!(channel = %self.channels[i].key, id = msg.id, "gap before a live message");
                self.catch_up(owner, i).await?;
                if msg.id <= self.channels[i].seen_max() {
                    return Ok(());
                }
                if msg.id > self.channels[i].seen_max() + 1 {
                    // Still missing messages in between (history lags or failed): leave it
                    // to the next poll, which starts at the cursor.
                    self.channels[i].last_poll = None;
                    self.channels[i].last_live = None;
                    return Ok(());
                }
            } else {
                self.channels[i].last_poll = None;
                return Ok(());
            }
        }
        self.ingest(i, msg).await
    }

    /// Hands on one message of channel `i` (ids at or below the cursor are skipped).
    async fn ingest(
        &mut self,
        i: usize,
        msg: RawMessage,
    ) -> Result<(), Result<Closed, ReaderError>> {
        let c = &mut self.channels[i];
        if c.cursor.is_some_and(|cur| msg.id <= cur) {
            return Ok(());
        }
        if let Some(album) = &mut c.album {
            if album.parts.iter().any(|p| p.id == msg.id) {
                return Ok(());
            }
            if msg.grouped_id == Some(album.grouped_id) {
                album.parts.push(msg);
                album.deadline = Instant::now() + self.config.album_window;
                return Ok(());
            }
            self.flush_album(i).await?;
        }
        if msg.is_service {
            return self.set_cursor(i, msg.id).await;
        }
        if let Some(g) = msg.grouped_id {
            self.channels[i].album = Some(Album {
                grouped_id: g,
                parts: vec![msg],
                deadline: Instant::now() + self.config.album_window,
            });
            return Ok(());
        }
        let id = msg.id;
        self.post(i, vec![msg]).await?;
        self.set_cursor(i, id).await
    }

    async fn flush_album(&mut self, i: usize) -> Result<(), Result<Closed, ReaderError>> {
        let Some(album) = self.channels[i].album.take() else {
            return Ok(());
        };
        let last = album.parts.iter().map(|p| p.id).max().unwrap_or(0);
        self.post(i, album.parts).await?;
        self.set_cursor(i, last).await
    }

    fn post_channel(&self, i: usize) -> PostChannel {
        let c = &self.channels[i];
        PostChannel {
            handle: c.reference.handle(),
            username: c.peer.as_ref().and_then(|p| p.username.clone()),
            peer_id: c.peer.as_ref().map_or(0, |p| p.id),
        }
    }

    fn build(&self, i: usize, parts: &[RawMessage]) -> Option<IncomingPost> {
        let known: HashMap<i64, String> = self
            .channels
            .iter()
            .filter_map(|c| c.peer.as_ref())
            .filter_map(|p| p.username.clone().map(|u| (p.id, u)))
            .collect();
        post_from_parts(&self.post_channel(i), parts, &|id| known.get(&id).cloned())
    }

    /// Sends a post made of `parts`, remembers it for edits and feeds the watchdog.
    async fn post(
        &mut self,
        i: usize,
        parts: Vec<RawMessage>,
    ) -> Result<(), Result<Closed, ReaderError>> {
        let Some(post) = self.build(i, &parts) else {
            return Ok(());
        };
        let post_id = parts.iter().map(|p| p.id).min().unwrap_or(0);
        let hash = text_hash(&post.text);
        let date = post.posted_at;
        let c = &mut self.channels[i];
        for p in &parts {
            c.recent.push_back((p.id, post_id, hash));
        }
        while c.recent.len() > RECENT_PER_CHANNEL {
            c.recent.pop_front();
        }
        if let Some(prev) = c.last_post_date
            && date > prev
        {
            let gap = (date - prev).num_seconds() as f64;
            c.gap_ewma = Some(match c.gap_ewma {
                Some(e) => EWMA_ALPHA * gap + (1.0 - EWMA_ALPHA) * e,
                None => gap,
            });
        }
        if c.last_post_date.is_none_or(|prev| date > prev) {
            c.last_post_date = Some(date);
        }
        c.silence_alerted = false;
        self.emit(ReaderEvent::Post(post)).await
    }

    async fn on_edit(
        &mut self,
        i: usize,
        msg: RawMessage,
    ) -> Result<(), Result<Closed, ReaderError>> {
        let c = &mut self.channels[i];
        if let Some(album) = &mut c.album
            && let Some(part) = album.parts.iter_mut().find(|p| p.id == msg.id)
        {
            *part = msg;
            return Ok(());
        }
        let known = c.recent.iter().find(|(id, _, _)| *id == msg.id).copied();
        let post_id = known.map_or(msg.id, |(_, post_id, _)| post_id);
        if post_id != msg.id && msg.text.trim().is_empty() {
            // A captionless album part changed (its media): nothing to tell.
            return Ok(());
        }
        let mut as_post = msg.clone();
        as_post.id = post_id;
        let Some(post) = self.build(i, &[as_post]) else {
            return Ok(());
        };
        let hash = text_hash(&post.text);
        if known.is_some_and(|(_, _, h)| h == hash) {
            return Ok(());
        }
        let c = &mut self.channels[i];
        c.recent.retain(|(id, _, _)| *id != msg.id);
        c.recent.push_back((msg.id, post_id, hash));
        self.emit(ReaderEvent::Edited(post)).await
    }

    async fn watchdog(&mut self) -> Result<(), Result<Closed, ReaderError>> {
        let now = self.clock.now();
        let instant = Instant::now();
        let mut alerts = Vec::new();
        for (i, c) in self.channels.iter_mut().enumerate() {
            if c.phase != Phase::Joined || c.silence_alerted {
                continue;
            }
            let Some(a) = c.account else { continue };
            if self.accounts[a].health != Health::Active {
                continue;
            }
            // Silence counts from the last post, but not from before this run started.
            let since = c.last_post_date.unwrap_or(self.started).max(self.started);
            let limit = match c.gap_ewma {
                Some(g) => {
                    let scaled = Duration::from_secs_f64((g * self.config.silence_factor).max(0.0));
                    scaled.max(self.config.min_channel_silence)
                }
                None => self.config.unknown_channel_silence,
            };
            let silent = (now - since).to_std().unwrap_or_default();
            if silent > limit {
                c.silence_alerted = true;
                c.last_poll = None;
                let usual = c.gap_ewma.map_or_else(
                    || "unknown".to_string(),
                    |g| human(Duration::from_secs_f64(g.max(0.0))),
                );
                alerts.push((
                    Some(a),
                    Some(i),
                    format!(
                        "channel {} has been silent for {} (usually a post every {usual})",
                        c.reference.handle(),
                        human(silent)
                    ),
                ));
            }
        }
        for a in 0..self.accounts.len() {
            let acc = &self.accounts[a];
            if acc.health != Health::Active || acc.silence_alerted {
                continue;
            }
            let has_channels = self
                .channels
                .iter()
                .any(|c| c.account == Some(a) && c.phase == Phase::Joined);
            let quiet = instant.duration_since(acc.last_update);
            if has_channels && quiet > self.config.account_silence {
                self.accounts[a].silence_alerted = true;
                for c in &mut self.channels {
                    if c.account == Some(a) {
                        c.last_poll = None;
                    }
                }
                alerts.push((
                    Some(a),
                    None,
                    format!(
                        "account {} received no update for {}; catching up by polling",
                        self.accounts[a].id,
                        human(quiet)
                    ),
                ));
            }
        }
        for (a, c, m) in alerts {
            self.alert(a, c, m).await?;
        }
        Ok(())
    }
}

fn err(e: StoreError) -> Result<Closed, ReaderError> {
    Err(ReaderError::Store(e))
}

fn text_hash(text: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    text.hash(&mut h);
    h.finish()
}

/// `90 s`, `12 min`, `3 h 5 min`.
fn human(d: Duration) -> String {
    let s = d.as_secs();
    if s < 120 {
        format!("{s} s")
    } else if s < 3 * 3600 {
        format!("{} min", s / 60)
    } else if s < 72 * 3600 {
        format!("{} h {} min", s / 3600, s % 3600 / 60)
    } else {
        format!("{} days", s / 86400)
    }
}

/// Forwards one account's updates into the reader. Sleeps through flood waits; stops when
/// the account is dead or the reader is gone; backs off after other errors.
async fn pump(
    i: usize,
    account: Arc<dyn Account>,
    tx: mpsc::UnboundedSender<(usize, Result<AccountUpdate, AccountError>)>,
) {
    loop {
        let update = account.next_update().await;
        let pause = match &update {
            Ok(_) => None,
            Err(AccountError::FloodWait(d)) => Some(*d),
            Err(AccountError::Banned | AccountError::SessionDead) => {
                let _ = tx.send((i, update));
                return;
            }
            Err(_) => Some(Duration::from_secs(5)),
        };
        if matches!(update, Err(AccountError::FloodWait(_))) {
            // The reader needs not know: the stream resumes after the wait.
        } else if tx.send((i, update)).is_err() {
            return;
        }
        if let Some(p) = pause {
            sleep(p).await;
        }
    }
}
