//! [`Reader`]: joins channels over several accounts, streams their posts and edits, catches
//! up from per-channel cursors, sits out flood waits, fails over and watches for silence.
//!
//! The reader runs as one task ([`Reader::run`]) and talks to Telegram only through the
//! [`Account`] trait. Account operations run inline in that task: a short flood wait
//! (≤ [`ReaderConfig::flood_sleep_threshold`]) pauses the reader, as does a consumer that
//! stops taking events. Live updates then queue in a buffer of [`ReaderConfig::update_buffer`];
//! once it is full the account streams are not read, so memory stays bounded: grammers' own
//! buffer (`AccountConfig::updates_capacity`) drops what does not fit, and the gap is caught
//! up (grammers fetches the difference; the reader polls from its cursors), so nothing is lost.
//!
//! The concerns live in submodules, each an `impl Reader` block: `join` (join pacing,
//! daily caps), `shard` (sharding over accounts, flood waits, failover), `catch_up`
//! (cursors and history polls), `albums` (messages into posts, albums, edits) and
//! `watchdog` (silence alerts and the wall clock).

mod albums;
mod catch_up;
mod join;
mod shard;
#[cfg(test)]
mod tests;
mod watchdog;

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, Utc};
use jobwire_core::IncomingPost;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio::time::{Instant, sleep};
use tracing::{debug, info, warn};

use crate::ChannelRef;
use crate::account::{Account, AccountError, AccountUpdate, RawMessage, ResolvedPeer};
use crate::store::{ReaderStore, StoreError};

pub use watchdog::{Clock, SystemClock, TokioClock};

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
    /// Live updates buffered between the accounts and the reader (at least 1). When the
    /// reader is held up (a flood wait, a consumer that stopped taking events) and the buffer
    /// is full, the accounts' update streams are not read until there is room. Default 1000.
    pub update_buffer: usize,
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
            update_buffer: 1000,
        }
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
    Remove(ChannelRef),
}

/// Adds channels to a running reader and stops reading them.
#[derive(Debug, Clone)]
pub struct ReaderHandle {
    tx: mpsc::UnboundedSender<Command>,
}

impl ReaderHandle {
    /// Starts reading `channel` (joined at the configured pace and within the daily cap).
    /// A channel stopped with [`Self::remove_channel`] is read again from its newest
    /// message on; one whose join failed is tried again. Returns `false` when the reader
    /// has stopped.
    pub fn add_channel(&self, channel: ChannelRef) -> bool {
        self.tx.send(Command::Add(channel)).is_ok()
    }

    /// Stops reading `channel`: no post or edit of it is handed on any more (its account
    /// stays in it, so reading it again needs no join). Returns `false` when the reader
    /// has stopped.
    pub fn remove_channel(&self, channel: ChannelRef) -> bool {
        self.tx.send(Command::Remove(channel)).is_ok()
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
    /// Not read: removed by [`ReaderHandle::remove_channel`].
    Paused,
}

impl Phase {
    /// Whether the channel is (to be) read: it counts against its account's cap.
    fn is_read(self) -> bool {
        matches!(self, Self::Pending | Self::Joined)
    }
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
    /// The cursor came from the store at start and is exact: once joined, the channel is left
    /// to its account's update stream if that catches up on its own (no history poll).
    resume: bool,
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
            resume: false,
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

const MAX_RETRIES: usize = 3;

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
    /// [`ReaderStore::restart_rewind`], read when the reader starts.
    rewind: i64,
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
            rewind: 0,
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
        for a in &self.accounts {
            crate::events::session_up(&a.id, a.health != Health::Dead);
        }
        let (utx, mut urx) = mpsc::channel(self.config.update_buffer.max(1));
        let _pumps = PumpGuard(
            self.accounts
                .iter()
                .enumerate()
                .map(|(i, a)| {
                    tokio::spawn(pump(
                        i,
                        Arc::clone(&a.account),
                        Arc::clone(&self.store),
                        utx.clone(),
                    ))
                })
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
        updates: &mut mpsc::Receiver<(usize, Result<AccountUpdate, AccountError>)>,
    ) -> Result<(), Result<Closed, ReaderError>> {
        self.rewind = self.store.restart_rewind().await.map_err(err)?.max(0);
        if self.rewind > 0 {
            info!(
                messages = self.rewind,
                "the last run did not stop cleanly: every channel is read again from a little before its cursor"
            );
        }
        for i in 0..self.channels.len() {
            self.restore(i).await?;
            self.channels[i].resume = self.rewind == 0 && self.channels[i].cursor.is_some();
        }
        self.assign_pending().await?;
        // Channels with a joined peer in the store are read at once, before any update is
        // taken: what the accounts' streams catch up right after the start is not dropped
        // as coming from a chat that is not read.
        for a in 0..self.accounts.len() {
            self.join_step(a).await?;
        }
        let mut tick = tokio::time::interval(self.config.tick);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                Some((i, update)) = updates.recv() => self.on_update(i, update).await?,
                Some(cmd) = self.commands.recv() => match cmd {
                    Command::Add(r) => self.start_reading(r).await?,
                    Command::Remove(r) => self.stop_reading(&r),
                },
                _ = tick.tick() => self.on_tick().await?,
            }
        }
    }

    /// A channel added while running: a new one is restored and assigned like those added
    /// before the start; a paused one is read again from its newest message (what was
    /// posted while it was paused is not handed on); a failed one is tried again.
    async fn start_reading(&mut self, r: ChannelRef) -> Result<(), Result<Closed, ReaderError>> {
        let i = match self.by_key.get(&r.key()) {
            None => {
                self.add_channel(r);
                self.channels.len() - 1
            }
            Some(&i) => match self.channels[i].phase {
                Phase::Pending | Phase::Joined => return Ok(()),
                Phase::Paused | Phase::Failed => {
                    let c = &mut self.channels[i];
                    c.phase = Phase::Pending;
                    c.account = None;
                    c.last_poll = None;
                    c.last_live = None;
                    c.silence_alerted = false;
                    c.resume = false;
                    i
                }
            },
        };
        info!(channel = %self.channels[i].key, "channel added");
        let resumed = self.channels[i].cursor.is_some();
        self.restore(i).await?;
        if resumed {
            // Start from now: the next join looks up the newest message.
            self.channels[i].cursor = None;
        }
        self.assign_pending().await
    }

    /// Stops handing on posts of a channel (see [`ReaderHandle::remove_channel`]).
    fn stop_reading(&mut self, r: &ChannelRef) {
        let Some(&i) = self.by_key.get(&r.key()) else {
            return;
        };
        let c = &mut self.channels[i];
        if c.phase == Phase::Paused {
            return;
        }
        info!(channel = %c.key, "channel removed: no longer read");
        c.phase = Phase::Paused;
        c.album = None;
        self.rebuild_peer_index();
    }

    /// Loads a channel's cursor (less the restart rewind: a cursor of 15 rewound by 20 is
    /// 0, the channel's first message, never "no cursor"), assignment and cached peer.
    async fn restore(&mut self, i: usize) -> Result<(), Result<Closed, ReaderError>> {
        let key = self.channels[i].key.clone();
        let cursor = self.store.cursor(&key).await.map_err(err)?;
        self.channels[i].cursor = cursor.map(|c| (c - self.rewind).max(0));
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
                        crate::events::reconnect(&self.accounts[a].id);
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
}

fn err(e: StoreError) -> Result<Closed, ReaderError> {
    Err(ReaderError::Store(e))
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

/// Forwards one account's updates into the reader. Waits (without reading the account's
/// stream) while the reader's buffer is full; sleeps through flood waits (noted in the
/// store); stops when the account is dead or the reader is gone; backs off after other
/// errors.
async fn pump(
    i: usize,
    account: Arc<dyn Account>,
    store: Arc<dyn ReaderStore>,
    tx: mpsc::Sender<(usize, Result<AccountUpdate, AccountError>)>,
) {
    loop {
        let update = account.next_update().await;
        let pause = match &update {
            Ok(_) => None,
            Err(AccountError::FloodWait(d)) => {
                store.flood_wait(account.id(), *d);
                crate::events::flood_wait(account.id(), *d);
                Some(*d)
            }
            Err(AccountError::Banned | AccountError::SessionDead) => {
                let _ = tx.send((i, update)).await;
                return;
            }
            Err(_) => Some(Duration::from_secs(5)),
        };
        if matches!(update, Err(AccountError::FloodWait(_))) {
            // The reader needs not know: the stream resumes after the wait.
        } else if tx.send((i, update)).await.is_err() {
            return;
        }
        if let Some(p) = pause {
            sleep(p).await;
        }
    }
}
