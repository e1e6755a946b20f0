//! [`ReaderStore`]: what the reader persists (cursors, resolved peers, assignments).

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use async_trait::async_trait;

use crate::account::ResolvedPeer;

/// The store failed; the reader stops (its state would otherwise drift from the store).
#[derive(Debug, thiserror::Error)]
#[error("reader store: {0}")]
pub struct StoreError(pub String);

/// Persistent state of the reader. Channel keys are [`crate::ChannelRef::key`]; account
/// ids are [`crate::Account::id`].
#[async_trait]
pub trait ReaderStore: Send + Sync {
    /// The id of the last message of `channel` that was handed on (or skipped as service).
    async fn cursor(&self, channel: &str) -> Result<Option<i64>, StoreError>;
    /// How many message ids before each cursor a starting reader reads again: what the
    /// previous run may have handed on without it being kept (it did not stop cleanly). With
    /// a rewind the reader polls every channel's history at start; with none (the default)
    /// it trusts the cursors, and leaves the channels whose account catches up on its own
    /// ([`crate::Account::catches_up`]) to the account's update stream.
    async fn restart_rewind(&self) -> Result<i64, StoreError> {
        Ok(0)
    }
    /// Moves the cursor forward (never backward).
    async fn set_cursor(&self, channel: &str, last_id: i64) -> Result<(), StoreError>;
    /// The peer `account` resolved for `channel`, if it ever did.
    async fn cached_peer(
        &self,
        account: &str,
        channel: &str,
    ) -> Result<Option<ResolvedPeer>, StoreError>;
    /// Remembers what `account` resolved (or joined) for `channel`.
    async fn cache_peer(
        &self,
        account: &str,
        channel: &str,
        peer: &ResolvedPeer,
    ) -> Result<(), StoreError>;
    /// Which account reads which channel: `(channel, account)` pairs.
    async fn assignments(&self) -> Result<Vec<(String, String)>, StoreError>;
    /// Assigns `channel` to `account` (replacing an earlier assignment).
    async fn assign(&self, channel: &str, account: &str) -> Result<(), StoreError>;
    /// Notes that Telegram gave `account` a flood wait of `wait` (the admin panel counts
    /// them). Called inline by the reader: it must neither block nor fail (an
    /// implementation writing somewhere slow hands the note off). The default forgets it.
    fn flood_wait(&self, account: &str, wait: Duration) {
        let _ = (account, wait);
    }
}

#[derive(Debug, Default)]
struct MemoryState {
    cursors: HashMap<String, i64>,
    peers: HashMap<(String, String), ResolvedPeer>,
    assignments: HashMap<String, String>,
    flood_waits: Vec<(String, Duration)>,
    rewind: i64,
}

/// [`ReaderStore`] in memory: for tests and for runs that do not need to survive a restart.
#[derive(Debug, Default)]
pub struct MemoryReaderStore(Mutex<MemoryState>);

impl MemoryReaderStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    /// Makes [`ReaderStore::restart_rewind`] answer `messages`, as after a crash.
    pub fn set_restart_rewind(&self, messages: i64) {
        if let Ok(mut s) = self.state() {
            s.rewind = messages;
        }
    }

    /// The flood waits noted so far, `(account, wait)` in order.
    pub fn flood_waits(&self) -> Vec<(String, Duration)> {
        self.state()
            .map(|s| s.flood_waits.clone())
            .unwrap_or_default()
    }

    fn state(&self) -> Result<std::sync::MutexGuard<'_, MemoryState>, StoreError> {
        self.0
            .lock()
            .map_err(|_| StoreError("memory store lock poisoned".into()))
    }
}

#[async_trait]
impl ReaderStore for MemoryReaderStore {
    async fn cursor(&self, channel: &str) -> Result<Option<i64>, StoreError> {
        Ok(self.state()?.cursors.get(channel).copied())
    }

    async fn restart_rewind(&self) -> Result<i64, StoreError> {
        Ok(self.state()?.rewind)
    }

    async fn set_cursor(&self, channel: &str, last_id: i64) -> Result<(), StoreError> {
        let mut s = self.state()?;
        let c = s.cursors.entry(channel.to_string()).or_insert(last_id);
        *c = (*c).max(last_id);
        Ok(())
    }

    async fn cached_peer(
        &self,
        account: &str,
        channel: &str,
    ) -> Result<Option<ResolvedPeer>, StoreError> {
        Ok(self
            .state()?
            .peers
            .get(&(account.to_string(), channel.to_string()))
            .cloned())
    }

    async fn cache_peer(
        &self,
        account: &str,
        channel: &str,
        peer: &ResolvedPeer,
    ) -> Result<(), StoreError> {
        self.state()?
            .peers
            .insert((account.to_string(), channel.to_string()), peer.clone());
        Ok(())
    }

    async fn assignments(&self) -> Result<Vec<(String, String)>, StoreError> {
        let mut v: Vec<_> = self
            .state()?
            .assignments
            .iter()
            .map(|(c, a)| (c.clone(), a.clone()))
            .collect();
        v.sort();
        Ok(v)
    }

    async fn assign(&self, channel: &str, account: &str) -> Result<(), StoreError> {
        self.state()?
            .assignments
            .insert(channel.to_string(), account.to_string());
        Ok(())
    }

    fn flood_wait(&self, account: &str, wait: Duration) {
        if let Ok(mut s) = self.state() {
            s.flood_waits.push((account.to_string(), wait));
        }
    }
}
