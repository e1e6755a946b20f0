//! [`ScriptedAccount`]: an in-memory [`Account`] whose channels, history, updates and
//! failures a test scripts. Every call is logged with the (tokio) time it was made.
//!
//! Telegram's side — the channels, their history, and each channel's update state (its pts,
//! one step per new or edited message, and the updates behind each step) — lives apart from
//! the connection, so [`ScriptedAccount::restart`] can stand for jobwire stopping and
//! starting again while the channels go on posting.
//!
//! Over a session ([`ScriptedAccount::with_session`]) the connection keeps its update state
//! as grammers' update stream does with `catch_up`: it starts from the state the session
//! holds, asks `updates.getDifference` for the account (which never carries channel posts)
//! and `updates.getChannelDifference` for each channel with a saved pts and a cached peer
//! (at most 100 updates an answer, as Telegram gives a user account; the latest messages
//! and the current pts when the saved pts is older than the channel's message box keeps,
//! [`ScriptedAccount::set_message_box`]), moves a channel's pts
//! with every update it receives, and writes the whole state to the session after each
//! update it hands on (what `GrammersAccount` does with `sync_update_state`), flushed every
//! second and when the connection ends. Live updates are handed on as they come: a pushed
//! update after unpushed posts is not held back to fetch the gap (grammers would do so;
//! the reader's own gap catch-up covers both).

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use async_trait::async_trait;
use grammers_session::Session;
use grammers_session::types::{ChannelState, UpdateState, UpdatesState};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio::time::Instant;

use crate::ChannelRef;
use crate::account::{Account, AccountError, AccountUpdate, PeerKind, RawMessage, ResolvedPeer};
use crate::grammers::peer_info;
use crate::session::{FileSession, SessionFileError, ready_now};

/// Updates one `updates.getChannelDifference` answer carries for a user account.
const CHANNEL_DIFFERENCE_LIMIT: usize = 100;

/// How often a scripted session is written while updates mark it dirty.
const SESSION_FLUSH: Duration = Duration::from_secs(1);

/// Which operation a scripted failure applies to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Op {
    /// [`Account::resolve`].
    Resolve,
    /// [`Account::join`].
    Join,
    /// [`Account::history_since`] and [`Account::newest`] (both `messages.getHistory`).
    History,
}

/// One logged call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Call {
    /// `resolve(channel key)`.
    Resolve(String, Instant),
    /// `join(peer id or invite key)`.
    Join(String, Instant),
    /// `history_since(peer id, after_id)`.
    History(i64, i64, Instant),
    /// `newest(peer id)`.
    Newest(i64, Instant),
    /// `updates.getDifference` from the account's pts.
    Difference(i32, Instant),
    /// `updates.getChannelDifference(channel id, from pts)`.
    ChannelDifference(i64, i32, Instant),
}

#[derive(Debug)]
struct ScriptChannel {
    peer: ResolvedPeer,
    member: bool,
    join_error: Option<AccountError>,
}

/// What reaches a connection from Telegram: an update with the pts it moved its channel to,
/// or a stream error (a disconnect, a dead session).
type Live = Result<(i32, AccountUpdate), AccountError>;

fn message_of(update: &AccountUpdate) -> &RawMessage {
    match update {
        AccountUpdate::New(m) | AccountUpdate::Edited(m) => m,
    }
}

/// Telegram's side, shared by an account's connections.
#[derive(Debug, Default)]
struct Server {
    channels: HashMap<String, ScriptChannel>,
    history: HashMap<i64, BTreeMap<i64, RawMessage>>,
    /// Each channel's updates in pts order: the one at index `i` moved the pts to `i + 1`.
    updates: HashMap<i64, Vec<AccountUpdate>>,
    failures: HashMap<Op, VecDeque<AccountError>>,
    dead: Option<AccountError>,
    /// The open connection, if any: live updates go there.
    live: Option<mpsc::UnboundedSender<Live>>,
    /// How many of a channel's updates getChannelDifference can still give (unlimited when
    /// `None`; Telegram keeps about 100,000).
    message_box: Option<usize>,
}

impl Server {
    fn send(&self, live: Live) {
        if let Some(tx) = &self.live {
            let _ = tx.send(live);
        }
    }
}

/// A difference the connection still has to ask for.
#[derive(Debug, Clone, Copy)]
enum Difference {
    Account,
    Channel(i64),
}

/// The connection's update stream.
#[derive(Debug)]
struct Stream {
    rx: mpsc::UnboundedReceiver<Live>,
    /// The update state as grammers' message boxes hold it.
    state: UpdatesState,
    /// Differences to ask for before live updates are read (at the start, from the session).
    differences: VecDeque<Difference>,
    /// Updates received and not handed on yet.
    buffer: VecDeque<AccountUpdate>,
}

impl Stream {
    fn channel_pts(&self, channel: i64) -> i32 {
        self.state
            .channels
            .iter()
            .find(|c| c.id == channel)
            .map_or(0, |c| c.pts)
    }

    fn set_channel_pts(&mut self, channel: i64, pts: i32) {
        match self.state.channels.iter_mut().find(|c| c.id == channel) {
            Some(c) => c.pts = pts,
            None => self.state.channels.push(ChannelState { id: channel, pts }),
        }
    }
}

/// An [`Account`] that lives in memory. Channels are declared with
/// [`ScriptedAccount::add_channel`], messages with [`ScriptedAccount::post`] (optionally
/// pushed as a live update), failures with [`ScriptedAccount::fail_next`].
#[derive(Debug)]
pub struct ScriptedAccount {
    id: String,
    server: Arc<Mutex<Server>>,
    calls: Mutex<Vec<Call>>,
    stream: tokio::sync::Mutex<Stream>,
    pulled: AtomicUsize,
    /// The session this connection keeps its state in, until [`ScriptedAccount::restart`]
    /// hands it to the next connection.
    session: Mutex<Option<Arc<FileSession>>>,
    catching_up: HashSet<i64>,
    flusher: Option<JoinHandle<()>>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A poisoned lock only happens after a panicking test; keep going with its data.
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl ScriptedAccount {
    /// An account with no channels and no session (its update state is not kept).
    pub fn new(id: &str) -> Self {
        Self::connect(id, Arc::default(), None)
    }

    /// An account with no channels whose update state is kept in the session file at `path`
    /// (opened as `GrammersAccount::connect` opens it). Needs a tokio runtime (the session is
    /// flushed every second).
    pub fn with_session(id: &str, path: &Path) -> Result<Self, SessionFileError> {
        let session = Arc::new(FileSession::open(path)?);
        Ok(Self::connect(id, Arc::default(), Some(session)))
    }

    /// jobwire stopping and starting again: this connection closes (it receives no more
    /// live updates, and its session, if any, is written and handed over) and a new one to
    /// the same Telegram side opens, with the session read back from its file. Posts made
    /// meanwhile reach the new connection only through history and the differences its
    /// session lets it ask for.
    pub fn restart(&self) -> Result<Self, SessionFileError> {
        lock(&self.server).live = None;
        if let Some(flusher) = &self.flusher {
            flusher.abort();
        }
        let session = match lock(&self.session).take() {
            Some(old) => {
                if let Ok(stream) = self.stream.try_lock() {
                    save_state(&old, &stream.state);
                }
                old.flush()?;
                let path = old.path().to_path_buf();
                drop(old);
                Some(Arc::new(FileSession::open(&path)?))
            }
            None => None,
        };
        Ok(Self::connect(&self.id, Arc::clone(&self.server), session))
    }

    fn connect(id: &str, server: Arc<Mutex<Server>>, session: Option<Arc<FileSession>>) -> Self {
        let (tx, rx) = mpsc::unbounded_channel();
        lock(&server).live = Some(tx);
        let (state, catching_up) = match &session {
            Some(s) => (
                ready_now(s.updates_state())
                    .and_then(Result::ok)
                    .unwrap_or_default(),
                s.channels_to_catch_up(),
            ),
            None => (UpdatesState::default(), HashSet::new()),
        };
        let mut differences = VecDeque::new();
        if state.pts != 0 {
            differences.push_back(Difference::Account);
        }
        let mut channels: Vec<i64> = catching_up.iter().copied().collect();
        channels.sort_unstable();
        differences.extend(channels.into_iter().map(Difference::Channel));
        let flusher = session
            .as_ref()
            .map(|s| FileSession::flush_every(Arc::clone(s), SESSION_FLUSH));
        Self {
            id: id.to_string(),
            server,
            calls: Mutex::new(Vec::new()),
            stream: tokio::sync::Mutex::new(Stream {
                rx,
                state,
                differences,
                buffer: VecDeque::new(),
            }),
            pulled: AtomicUsize::new(0),
            session: Mutex::new(session),
            catching_up,
            flusher,
        }
    }

    fn server(&self) -> MutexGuard<'_, Server> {
        lock(&self.server)
    }

    /// Declares a channel reachable under `reference` (`@name` or an invite link) with
    /// Telegram id `peer_id`.
    pub fn add_channel(&self, reference: &ChannelRef, peer_id: i64) {
        let peer = ResolvedPeer {
            id: peer_id,
            access_hash: peer_id * 7 + self.id.len() as i64,
            kind: PeerKind::Channel,
            username: match reference {
                ChannelRef::Username(u) => Some(u.clone()),
                ChannelRef::Invite(_) => None,
            },
            title: format!("Channel {peer_id}"),
            invite_hash: match reference {
                ChannelRef::Invite(h) => Some(h.clone()),
                ChannelRef::Username(_) => None,
            },
            joined: false,
        };
        self.server().channels.insert(
            reference.key(),
            ScriptChannel {
                peer,
                member: false,
                join_error: None,
            },
        );
    }

    /// Makes every join of `reference` fail with `error`.
    pub fn set_join_error(&self, reference: &ChannelRef, error: AccountError) {
        if let Some(c) = self.server().channels.get_mut(&reference.key()) {
            c.join_error = Some(error);
        }
    }

    /// Adds `message` to its channel's history and update log; with `push`, also delivers
    /// it to the open connection as a live update.
    pub fn post(&self, message: RawMessage, push: bool) {
        self.record(AccountUpdate::New(message), push);
    }

    /// Replaces `message` in history and logs the edit; with `push`, delivers it as a live
    /// update.
    pub fn edit(&self, message: RawMessage, push: bool) {
        self.record(AccountUpdate::Edited(message), push);
    }

    fn record(&self, update: AccountUpdate, push: bool) {
        let message = message_of(&update).clone();
        let mut s = self.server();
        let log = s.updates.entry(message.peer).or_default();
        log.push(update.clone());
        let pts = i32::try_from(log.len()).unwrap_or(i32::MAX);
        s.history
            .entry(message.peer)
            .or_default()
            .insert(message.id, message);
        if push {
            s.send(Ok((pts, update)));
        }
    }

    /// Telegram keeps only the last `updates` of each channel for getChannelDifference: a
    /// pts older than that is answered as `channelDifferenceTooLong` (the latest 100
    /// messages and the channel's current pts).
    pub fn set_message_box(&self, updates: usize) {
        self.server().message_box = Some(updates);
    }

    /// A channel's pts on Telegram's side: how many new and edited messages it has had.
    pub fn channel_pts(&self, peer_id: i64) -> i32 {
        self.server()
            .updates
            .get(&peer_id)
            .map_or(0, |log| i32::try_from(log.len()).unwrap_or(i32::MAX))
    }

    /// Delivers an error from the update stream (a disconnect, a dead session).
    pub fn push_error(&self, error: AccountError) {
        self.server().send(Err(error));
    }

    /// The next call of `op` fails with `error` (queued: several calls fail in order).
    pub fn fail_next(&self, op: Op, error: AccountError) {
        self.server()
            .failures
            .entry(op)
            .or_default()
            .push_back(error);
    }

    /// From now on every call fails with `error` (`Banned` or `SessionDead`), and the update
    /// stream reports it once.
    pub fn kill(&self, error: AccountError) {
        let mut s = self.server();
        s.dead = Some(error.clone());
        s.send(Err(error));
    }

    /// Every call this connection made so far.
    pub fn calls(&self) -> Vec<Call> {
        lock(&self.calls).clone()
    }

    /// How often `reference` was resolved.
    pub fn resolve_count(&self, reference: &ChannelRef) -> usize {
        let key = reference.key();
        self.calls()
            .iter()
            .filter(|c| matches!(c, Call::Resolve(k, _) if *k == key))
            .count()
    }

    /// When each join happened.
    pub fn join_times(&self) -> Vec<Instant> {
        self.calls()
            .iter()
            .filter_map(|c| match c {
                Call::Join(_, t) => Some(*t),
                _ => None,
            })
            .collect()
    }

    /// How many live updates (and stream errors) [`Account::next_update`] has handed out:
    /// the rest still waits on the "network".
    pub fn updates_pulled(&self) -> usize {
        self.pulled.load(Ordering::SeqCst)
    }

    /// How many history calls (`history_since` and `newest`) were made.
    pub fn history_calls(&self) -> usize {
        self.calls()
            .iter()
            .filter(|c| matches!(c, Call::History(..) | Call::Newest(..)))
            .count()
    }

    /// The `updates.getChannelDifference` calls made: `(channel id, from pts)` in order.
    pub fn channel_differences(&self) -> Vec<(i64, i32)> {
        self.calls()
            .iter()
            .filter_map(|c| match c {
                Call::ChannelDifference(channel, pts, _) => Some((*channel, *pts)),
                _ => None,
            })
            .collect()
    }

    fn log(&self, call: Call) {
        lock(&self.calls).push(call);
    }

    fn check(&self, op: Op, call: Call) -> Result<(), AccountError> {
        self.log(call);
        let mut s = self.server();
        if let Some(e) = &s.dead {
            return Err(e.clone());
        }
        match s.failures.get_mut(&op).and_then(VecDeque::pop_front) {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    fn session(&self) -> Option<Arc<FileSession>> {
        lock(&self.session).clone()
    }

    /// Caches `peer` in the session, as `GrammersAccount` does after a resolve or a join.
    async fn remember(&self, peer: &ResolvedPeer) {
        if let Some(s) = self.session()
            && let Err(e) = s.cache_peer(peer_info(peer)).await
        {
            tracing::warn!(error = %e, "could not cache a peer in the session");
        }
    }

    /// Answers one difference the stream asked for, putting what it brings in the buffer.
    fn get_difference(&self, stream: &mut Stream, difference: Difference) {
        let now = Instant::now();
        match difference {
            // Telegram never puts channel posts in the account's difference, and scripts
            // have nothing else: the answer is empty.
            Difference::Account => self.log(Call::Difference(stream.state.pts, now)),
            Difference::Channel(channel) => {
                let from = stream.channel_pts(channel);
                self.log(Call::ChannelDifference(channel, from, now));
                let s = self.server();
                let log = s.updates.get(&channel).map_or(&[][..], Vec::as_slice);
                let start = usize::try_from(from).unwrap_or(0).min(log.len());
                let (end, last) = if s.message_box.is_some_and(|kept| log.len() - start > kept) {
                    // channelDifferenceTooLong: the latest messages, not those after the
                    // pts, and the channel's current pts to go on from.
                    let history = s.history.get(&channel);
                    let latest = history.into_iter().flat_map(|h| h.values().rev());
                    let mut latest: Vec<_> = latest
                        .take(CHANNEL_DIFFERENCE_LIMIT)
                        .cloned()
                        .map(AccountUpdate::New)
                        .collect();
                    latest.reverse();
                    stream.buffer.extend(latest);
                    (log.len(), true)
                } else {
                    let end = (start + CHANNEL_DIFFERENCE_LIMIT).min(log.len());
                    stream.buffer.extend(log[start..end].iter().cloned());
                    (end, end == log.len())
                };
                drop(s);
                // As in grammers, the state moves to the end of the answer at once.
                stream.set_channel_pts(channel, i32::try_from(end).unwrap_or(i32::MAX));
                if !last {
                    stream.differences.push_front(difference);
                }
            }
        }
    }
}

/// Writes `state` into `session` (what `UpdateStream::sync_update_state` does).
fn save_state(session: &FileSession, state: &UpdatesState) {
    if state.pts == 0 && state.qts == 0 && state.channels.is_empty() {
        return;
    }
    if !matches!(
        ready_now(session.set_update_state(UpdateState::All(state.clone()))),
        Some(Ok(()))
    ) {
        tracing::warn!("the scripted session did not take the update state");
    }
}

impl Drop for ScriptedAccount {
    fn drop(&mut self) {
        if let Some(flusher) = &self.flusher {
            flusher.abort();
        }
        if let Some(session) = lock(&self.session).take() {
            save_state(&session, &self.stream.get_mut().state);
            session.flush_or_warn();
        }
    }
}

#[async_trait]
impl Account for ScriptedAccount {
    fn id(&self) -> &str {
        &self.id
    }

    async fn resolve(&self, r: &ChannelRef) -> Result<ResolvedPeer, AccountError> {
        self.check(Op::Resolve, Call::Resolve(r.key(), Instant::now()))?;
        let peer = {
            let s = self.server();
            let c = s.channels.get(&r.key()).ok_or(AccountError::NotFound)?;
            let mut peer = c.peer.clone();
            peer.joined = c.member;
            if matches!(r, ChannelRef::Invite(_)) && !c.member {
                peer.id = 0;
            }
            peer
        };
        if peer.id != 0 {
            self.remember(&peer).await;
        }
        Ok(peer)
    }

    async fn join(&self, p: &ResolvedPeer) -> Result<ResolvedPeer, AccountError> {
        let label = match &p.invite_hash {
            Some(h) => format!("+{h}"),
            None => p.id.to_string(),
        };
        self.check(Op::Join, Call::Join(label, Instant::now()))?;
        let peer = {
            let mut s = self.server();
            let c = s
                .channels
                .values_mut()
                .find(|c| match &p.invite_hash {
                    Some(h) => c.peer.invite_hash.as_ref() == Some(h),
                    None => c.peer.id == p.id,
                })
                .ok_or(AccountError::NotFound)?;
            if let Some(e) = &c.join_error {
                return Err(e.clone());
            }
            c.member = true;
            let mut peer = c.peer.clone();
            peer.joined = true;
            peer
        };
        self.remember(&peer).await;
        Ok(peer)
    }

    async fn history_since(
        &self,
        p: &ResolvedPeer,
        after_id: i64,
        limit: usize,
    ) -> Result<Vec<RawMessage>, AccountError> {
        self.check(Op::History, Call::History(p.id, after_id, Instant::now()))?;
        Ok(self
            .server()
            .history
            .get(&p.id)
            .map(|h| {
                h.range(after_id + 1..)
                    .take(limit)
                    .map(|(_, m)| m.clone())
                    .collect()
            })
            .unwrap_or_default())
    }

    async fn newest(
        &self,
        p: &ResolvedPeer,
        limit: usize,
    ) -> Result<Vec<RawMessage>, AccountError> {
        self.check(Op::History, Call::Newest(p.id, Instant::now()))?;
        let mut newest: Vec<RawMessage> = self
            .server()
            .history
            .get(&p.id)
            .map(|h| h.values().rev().take(limit).cloned().collect())
            .unwrap_or_default();
        newest.reverse();
        Ok(newest)
    }

    async fn next_update(&self) -> Result<AccountUpdate, AccountError> {
        let mut stream = self.stream.lock().await;
        loop {
            if let Some(update) = stream.buffer.pop_front() {
                if let Some(session) = self.session() {
                    save_state(&session, &stream.state);
                }
                self.pulled.fetch_add(1, Ordering::SeqCst);
                return Ok(update);
            }
            if let Some(difference) = stream.differences.pop_front() {
                self.get_difference(&mut stream, difference);
                continue;
            }
            match stream.rx.recv().await {
                Some(Ok((pts, update))) => {
                    let channel = message_of(&update).peer;
                    let known = stream.channel_pts(channel);
                    stream.set_channel_pts(channel, known.max(pts));
                    stream.buffer.push_back(update);
                }
                Some(Err(e)) => {
                    self.pulled.fetch_add(1, Ordering::SeqCst);
                    return Err(e);
                }
                // Closed by a restart: this connection hears nothing more.
                None => std::future::pending().await,
            }
        }
    }

    fn catches_up(&self, channel_id: i64) -> bool {
        self.catching_up.contains(&channel_id)
    }
}
