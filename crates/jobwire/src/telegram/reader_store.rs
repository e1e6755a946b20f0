//! The reader's state in the store: [`SqlReaderStore`] keeps the cursors, resolved peers and
//! channel assignments of `jobwire-mtproto`'s reader in the pipeline's source state
//! (`tg.cursor`, `tg.peer`, `tg.assign`), so they survive restarts, and whether the last run
//! stopped cleanly (`tg.run`); a join is also noted on the channel's source, and every flood
//! wait in `telegram_waits`, for the admin panel.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use chrono::Utc;
use jobwire_deliver::WaitLog;
use jobwire_mtproto::{ChannelRef, ReaderStore, ResolvedPeer, StoreError};
use jobwire_store::{SourceNote, Store, WaitKind};

/// Source-state namespace of the per-channel cursors (key: channel key, value: message id).
pub const NS_CURSOR: &str = "tg.cursor";
/// Source-state namespace of resolved peers (key: `account/channel`, value: JSON).
pub const NS_PEER: &str = "tg.peer";
/// Source-state namespace of assignments (key: channel key, value: account id).
pub const NS_ASSIGN: &str = "tg.assign";
/// Source-state namespace of the reader's runs: key `stop` holds `clean` once a run stopped
/// with every post it handed on stored, `running` while one runs (and after one that
/// crashed).
pub const NS_RUN: &str = "tg.run";
const RUN_KEY: &str = "stop";
const RUN_CLEAN: &str = "clean";
const RUN_RUNNING: &str = "running";

/// How many message ids a reader re-reads before each stored cursor after a run that did
/// not stop cleanly.
///
/// The reader moves a channel's cursor as soon as a post is in the event channel, so a crash
/// can lose the post being ingested and the one waiting in the channel (capacity 1; an album
/// is one post of up to 10 messages). After such a run every channel is polled once from a
/// little before its cursor, and intake drops what it already has by `(channel, message id)`.
/// A clean stop stores the waiting post too, so the next start needs no rewind and leaves
/// the channels to getChannelDifference where the account's session allows it.
pub const RESTART_REWIND: i64 = 20;

type StoreFuture<'a, T> = Pin<Box<dyn Future<Output = Result<T, StoreError>> + Send + 'a>>;

/// [`ReaderStore`] over the [`Store`]'s source state: the reader's cursors, peers and
/// assignments live in the pipeline's database.
#[derive(Debug, Clone)]
pub struct SqlReaderStore {
    store: Arc<dyn Store>,
    /// The rewind after a run that did not stop cleanly.
    rewind: i64,
    /// Whether the previous run stopped cleanly, once [`SqlReaderStore::begin_run`] read it.
    previous_clean: OnceLock<bool>,
    /// Where flood waits are noted for the admin panel; started on the first one (the
    /// reader runs inside the runtime, `new` need not).
    waits: OnceLock<WaitLog>,
}

fn store_err(what: &str, e: impl std::fmt::Display) -> StoreError {
    StoreError(format!("{what}: {e}"))
}

impl SqlReaderStore {
    /// Over `store`, with no restart rewind.
    pub fn new(store: Arc<dyn Store>) -> Self {
        Self {
            store,
            rewind: 0,
            previous_clean: OnceLock::new(),
            waits: OnceLock::new(),
        }
    }

    /// [`ReaderStore::restart_rewind`] answers `messages` (see [`RESTART_REWIND`]) unless
    /// [`SqlReaderStore::begin_run`] found that the previous run stopped cleanly.
    pub fn with_restart_rewind(mut self, messages: i64) -> Self {
        self.rewind = messages.max(0);
        self
    }

    /// Notes that a run starts (from now on a crash shows at the next start) and returns
    /// whether the previous one stopped cleanly ([`SqlReaderStore::note_clean_stop`]).
    pub async fn begin_run(&self) -> Result<bool, StoreError> {
        let clean = self
            .store
            .state_get(NS_RUN, RUN_KEY)
            .await
            .map_err(|e| store_err("reading how the last run stopped", e))?
            .is_some_and(|v| v == RUN_CLEAN);
        self.store
            .state_put(NS_RUN, RUN_KEY, RUN_RUNNING, Utc::now())
            .await
            .map_err(|e| store_err("noting the run", e))?;
        let _ = self.previous_clean.set(clean);
        Ok(clean)
    }

    /// Notes that this run stopped cleanly: every post the reader handed on is stored, so
    /// the cursors are exact and the next start needs no rewind.
    pub async fn note_clean_stop(&self) -> Result<(), StoreError> {
        self.store
            .state_put(NS_RUN, RUN_KEY, RUN_CLEAN, Utc::now())
            .await
            .map_err(|e| store_err("noting a clean stop", e))
    }

    fn rewind_now(&self) -> i64 {
        if self.previous_clean.get() == Some(&true) {
            0
        } else {
            self.rewind
        }
    }

    async fn get_cursor(&self, channel: &str) -> Result<Option<i64>, StoreError> {
        let Some(v) = self
            .store
            .state_get(NS_CURSOR, channel)
            .await
            .map_err(|e| store_err("reading a cursor", e))?
        else {
            return Ok(None);
        };
        v.trim()
            .parse::<i64>()
            .map(Some)
            .map_err(|_| StoreError(format!("{NS_CURSOR} {channel}: {v:?} is not a message id")))
    }

    async fn put_cursor(&self, channel: &str, last_id: i64) -> Result<(), StoreError> {
        // One reader task writes cursors, so read-then-write does not race.
        if self
            .get_cursor(channel)
            .await?
            .is_some_and(|old| old >= last_id)
        {
            return Ok(());
        }
        self.store
            .state_put(NS_CURSOR, channel, &last_id.to_string(), Utc::now())
            .await
            .map_err(|e| store_err("writing a cursor", e))
    }

    fn peer_key(account: &str, channel: &str) -> String {
        format!("{account}/{channel}")
    }

    async fn get_peer(
        &self,
        account: &str,
        channel: &str,
    ) -> Result<Option<ResolvedPeer>, StoreError> {
        let key = Self::peer_key(account, channel);
        let Some(v) = self
            .store
            .state_get(NS_PEER, &key)
            .await
            .map_err(|e| store_err("reading a peer", e))?
        else {
            return Ok(None);
        };
        serde_json::from_str(&v)
            .map(Some)
            .map_err(|e| store_err(&format!("{NS_PEER} {key}"), e))
    }

    async fn put_peer(
        &self,
        account: &str,
        channel: &str,
        peer: &ResolvedPeer,
    ) -> Result<(), StoreError> {
        let json = serde_json::to_string(peer).map_err(|e| store_err("encoding a peer", e))?;
        self.store
            .state_put(
                NS_PEER,
                &Self::peer_key(account, channel),
                &json,
                Utc::now(),
            )
            .await
            .map_err(|e| store_err("writing a peer", e))?;
        if peer.joined
            && let Some(r) = ChannelRef::from_key(channel)
        {
            // What the admin panel shows as "joined".
            self.store
                .note_source(&r.handle(), &SourceNote::Joined, Utc::now())
                .await
                .map_err(|e| store_err("noting a join", e))?;
        }
        Ok(())
    }

    async fn get_assignments(&self) -> Result<Vec<(String, String)>, StoreError> {
        self.store
            .state_list(NS_ASSIGN)
            .await
            .map_err(|e| store_err("reading assignments", e))
    }

    async fn put_assignment(&self, channel: &str, account: &str) -> Result<(), StoreError> {
        self.store
            .state_put(NS_ASSIGN, channel, account, Utc::now())
            .await
            .map_err(|e| store_err("writing an assignment", e))
    }
}

// `ReaderStore` is an `#[async_trait]` trait; this is the expansion the macro would write.
impl ReaderStore for SqlReaderStore {
    fn cursor<'a, 'b, 'f>(&'a self, channel: &'b str) -> StoreFuture<'f, Option<i64>>
    where
        'a: 'f,
        'b: 'f,
        Self: 'f,
    {
        Box::pin(self.get_cursor(channel))
    }

    fn restart_rewind<'a, 'f>(&'a self) -> StoreFuture<'f, i64>
    where
        'a: 'f,
        Self: 'f,
    {
        let rewind = self.rewind_now();
        Box::pin(async move { Ok(rewind) })
    }

    fn set_cursor<'a, 'b, 'f>(&'a self, channel: &'b str, last_id: i64) -> StoreFuture<'f, ()>
    where
        'a: 'f,
        'b: 'f,
        Self: 'f,
    {
        Box::pin(self.put_cursor(channel, last_id))
    }

    fn cached_peer<'a, 'b, 'c, 'f>(
        &'a self,
        account: &'b str,
        channel: &'c str,
    ) -> StoreFuture<'f, Option<ResolvedPeer>>
    where
        'a: 'f,
        'b: 'f,
        'c: 'f,
        Self: 'f,
    {
        Box::pin(self.get_peer(account, channel))
    }

    fn cache_peer<'a, 'b, 'c, 'd, 'f>(
        &'a self,
        account: &'b str,
        channel: &'c str,
        peer: &'d ResolvedPeer,
    ) -> StoreFuture<'f, ()>
    where
        'a: 'f,
        'b: 'f,
        'c: 'f,
        'd: 'f,
        Self: 'f,
    {
        Box::pin(self.put_peer(account, channel, peer))
    }

    fn assignments<'a, 'f>(&'a self) -> StoreFuture<'f, Vec<(String, String)>>
    where
        'a: 'f,
        Self: 'f,
    {
        Box::pin(self.get_assignments())
    }

    fn assign<'a, 'b, 'c, 'f>(&'a self, channel: &'b str, account: &'c str) -> StoreFuture<'f, ()>
    where
        'a: 'f,
        'b: 'f,
        'c: 'f,
        Self: 'f,
    {
        Box::pin(self.put_assignment(channel, account))
    }

    /// Handed to a [`WaitLog`]: written to `telegram_waits` in the background, never
    /// holding up the reader.
    fn flood_wait(&self, account: &str, wait: Duration) {
        if tokio::runtime::Handle::try_current().is_err() {
            tracing::warn!(
                account,
                secs = wait.as_secs(),
                "a flood wait outside the runtime is not recorded"
            );
            return;
        }
        self.waits
            .get_or_init(|| WaitLog::spawn(self.store.clone()))
            .note(WaitKind::FloodWait, account, wait);
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use jobwire_store::{SqliteStore, WaitTotal};

    use super::*;

    #[tokio::test]
    async fn a_flood_wait_ends_up_in_the_dashboards_counts() {
        let dir = tempfile::tempdir().unwrap();
        let store: Arc<dyn Store> = Arc::new(
            SqliteStore::open_path(&dir.path().join("j.db"))
                .await
                .unwrap(),
        );
        let since = Utc::now() - chrono::Duration::minutes(1);
        let rs = SqlReaderStore::new(store.clone());
        rs.flood_wait("acc1", Duration::from_millis(94_500));
        rs.flood_wait("acc1", Duration::from_secs(5));
        let want = vec![WaitTotal {
            kind: WaitKind::FloodWait,
            who: "acc1".to_owned(),
            count: 2,
            seconds: 100,
        }];
        for _ in 0..200 {
            if store.dashboard_totals(since).await.unwrap().waits == want {
                return;
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        panic!("{:?}", store.dashboard_totals(since).await.unwrap().waits);
    }
}
