//! [`ScriptedAccount`]: an in-memory [`Account`] whose channels, history, updates and
//! failures a test scripts. Every call is logged with the (tokio) time it was made.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use async_trait::async_trait;
use tokio::sync::mpsc;
use tokio::time::Instant;

use crate::ChannelRef;
use crate::account::{Account, AccountError, AccountUpdate, PeerKind, RawMessage, ResolvedPeer};

/// Which operation a scripted failure applies to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Op {
    /// [`Account::resolve`].
    Resolve,
    /// [`Account::join`].
    Join,
    /// [`Account::history_since`].
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
}

#[derive(Debug)]
struct ScriptChannel {
    peer: ResolvedPeer,
    member: bool,
    join_error: Option<AccountError>,
}

#[derive(Debug, Default)]
struct Script {
    channels: HashMap<String, ScriptChannel>,
    history: HashMap<i64, BTreeMap<i64, RawMessage>>,
    failures: HashMap<Op, VecDeque<AccountError>>,
    calls: Vec<Call>,
    dead: Option<AccountError>,
}

/// An [`Account`] that lives in memory. Channels are declared with
/// [`ScriptedAccount::add_channel`], messages with [`ScriptedAccount::post`] (optionally
/// pushed as a live update), failures with [`ScriptedAccount::fail_next`].
#[derive(Debug)]
pub struct ScriptedAccount {
    id: String,
    script: Mutex<Script>,
    tx: mpsc::UnboundedSender<Result<AccountUpdate, AccountError>>,
    rx: tokio::sync::Mutex<mpsc::UnboundedReceiver<Result<AccountUpdate, AccountError>>>,
    pulled: AtomicUsize,
}

impl ScriptedAccount {
    /// An account with no channels.
    pub fn new(id: &str) -> Self {
        let (tx, rx) = mpsc::unbounded_channel();
        Self {
            id: id.to_string(),
            script: Mutex::new(Script::default()),
            tx,
            rx: tokio::sync::Mutex::new(rx),
            pulled: AtomicUsize::new(0),
        }
    }

    fn script(&self) -> std::sync::MutexGuard<'_, Script> {
        // A poisoned lock only happens after a panicking test; keep going with its data.
        self.script
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
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
        self.script().channels.insert(
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
        if let Some(c) = self.script().channels.get_mut(&reference.key()) {
            c.join_error = Some(error);
        }
    }

    /// Adds `message` to its channel's history; with `push`, also delivers it as a live update.
    pub fn post(&self, message: RawMessage, push: bool) {
        self.record(message, push.then_some(AccountUpdate::New));
    }

    /// Replaces `message` in history; with `push`, delivers the edit as a live update.
    pub fn edit(&self, message: RawMessage, push: bool) {
        self.record(message, push.then_some(AccountUpdate::Edited));
    }

    /// Puts `message` in its channel's history, and delivers it as `update` when given.
    fn record(&self, message: RawMessage, update: Option<fn(RawMessage) -> AccountUpdate>) {
        self.script()
            .history
            .entry(message.peer)
            .or_default()
            .insert(message.id, message.clone());
        if let Some(update) = update {
            let _ = self.tx.send(Ok(update(message)));
        }
    }

    /// Delivers an error from the update stream (a disconnect, a dead session).
    pub fn push_error(&self, error: AccountError) {
        let _ = self.tx.send(Err(error));
    }

    /// The next call of `op` fails with `error` (queued: several calls fail in order).
    pub fn fail_next(&self, op: Op, error: AccountError) {
        self.script()
            .failures
            .entry(op)
            .or_default()
            .push_back(error);
    }

    /// From now on every call fails with `error` (`Banned` or `SessionDead`), and the update
    /// stream reports it once.
    pub fn kill(&self, error: AccountError) {
        self.script().dead = Some(error.clone());
        let _ = self.tx.send(Err(error));
    }

    /// Every call so far.
    pub fn calls(&self) -> Vec<Call> {
        self.script().calls.clone()
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

    /// How many history calls were made.
    pub fn history_calls(&self) -> usize {
        self.calls()
            .iter()
            .filter(|c| matches!(c, Call::History(..)))
            .count()
    }

    fn check(&self, op: Op, call: Call) -> Result<(), AccountError> {
        let mut s = self.script();
        s.calls.push(call);
        if let Some(e) = &s.dead {
            return Err(e.clone());
        }
        match s.failures.get_mut(&op).and_then(VecDeque::pop_front) {
            Some(e) => Err(e),
            None => Ok(()),
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
        let s = self.script();
        let c = s.channels.get(&r.key()).ok_or(AccountError::NotFound)?;
        let mut peer = c.peer.clone();
        peer.joined = c.member;
        if matches!(r, ChannelRef::Invite(_)) && !c.member {
            peer.id = 0;
        }
        Ok(peer)
    }

    async fn join(&self, p: &ResolvedPeer) -> Result<ResolvedPeer, AccountError> {
        let label = match &p.invite_hash {
            Some(h) => format!("+{h}"),
            None => p.id.to_string(),
        };
        self.check(Op::Join, Call::Join(label, Instant::now()))?;
        let mut s = self.script();
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
        Ok(peer)
    }

    async fn history_since(
        &self,
        p: &ResolvedPeer,
        after_id: i64,
        limit: usize,
    ) -> Result<Vec<RawMessage>, AccountError> {
        self.check(Op::History, Call::History(p.id, after_id, Instant::now()))?;
        let s = self.script();
        let Some(h) = s.history.get(&p.id) else {
            return Ok(Vec::new());
        };
        if after_id == 0 {
            let mut v: Vec<_> = h.values().rev().take(limit).cloned().collect();
            v.reverse();
            return Ok(v);
        }
        Ok(h.range(after_id + 1..)
            .take(limit)
            .map(|(_, m)| m.clone())
            .collect())
    }

    async fn next_update(&self) -> Result<AccountUpdate, AccountError> {
        let mut rx = self.rx.lock().await;
        match rx.recv().await {
            Some(u) => {
                self.pulled.fetch_add(1, Ordering::SeqCst);
                u
            }
            None => std::future::pending().await,
        }
    }
}
