//! [`FileSession`]: grammers' session (auth keys, home DC, peers, update state) in a JSON
//! file readable only by its owner (0600).
//!
//! grammers' own SQLite storage would link a second SQLite next to sqlx's, so jobwire keeps
//! the session as a small JSON file. Auth-key and DC changes are written at once (atomically:
//! temporary file, fsync, rename); peers and update state mark the file dirty and are
//! written by [`FileSession::flush`] (the account calls it periodically and on drop). A
//! write that fails leaves the session dirty, so the next flush tries again.
//!
//! The session holds the account's auth keys: its `Debug` shows which DCs have one, never
//! the key bytes (nor the peers' access hashes).

use std::collections::{HashMap, HashSet};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use grammers_session::types::{
    ChannelState, DcOption, PeerId, PeerInfo, UpdateState, UpdatesState,
};
use grammers_session::{BoxFuture, Session, SessionData};
use serde::{Deserialize, Serialize};

/// Why the session file could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum SessionFileError {
    /// Reading, writing or renaming the file failed.
    #[error("session file {}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The IO error.
        #[source]
        source: std::io::Error,
    },
    /// The file is not a jobwire session.
    #[error("session file {} is damaged: {reason}", path.display())]
    Damaged {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// The in-memory lock was poisoned by a panic.
    #[error("session lock poisoned")]
    Poisoned,
}

#[derive(Serialize, Deserialize)]
struct SessionFileV1 {
    version: u32,
    home_dc: i32,
    dc_options: Vec<DcOption>,
    peers: Vec<PeerInfo>,
    updates_state: UpdatesState,
}

/// A grammers [`Session`] persisted to a JSON file with mode 0600.
///
/// `Debug` is redacted: it shows the path, the home DC, which DCs have an auth key, how many
/// peers are cached and whether unsaved changes exist, but no key bytes or access hashes.
pub struct FileSession {
    path: PathBuf,
    data: Mutex<Data>,
    dirty: AtomicBool,
}

struct Data {
    home_dc: i32,
    dc_options: HashMap<i32, DcOption>,
    peers: HashMap<PeerId, PeerInfo>,
    updates_state: UpdatesState,
}

impl Default for Data {
    fn default() -> Self {
        let d = SessionData::default();
        Self {
            home_dc: d.home_dc,
            dc_options: d.dc_options,
            peers: d.peer_infos,
            updates_state: d.updates_state,
        }
    }
}

impl std::fmt::Debug for FileSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut s = f.debug_struct("FileSession");
        s.field("path", &self.path);
        // try_lock: Debug must not deadlock when called while the data is locked.
        match self.data.try_lock() {
            Ok(d) => {
                let mut auth_keys: Vec<i32> = d
                    .dc_options
                    .values()
                    .filter(|o| o.auth_key.is_some())
                    .map(|o| o.id)
                    .collect();
                auth_keys.sort_unstable();
                s.field("home_dc", &d.home_dc)
                    .field("dcs_with_auth_key", &auth_keys)
                    .field("peers", &d.peers.len());
            }
            Err(_) => {
                s.field("data", &"<locked>");
            }
        }
        s.field("dirty", &self.dirty.load(Ordering::SeqCst))
            .finish()
    }
}

impl FileSession {
    /// Opens the session at `path`, or starts an empty one (written on first change). A
    /// file readable by others is tightened to 0600.
    pub fn open(path: &Path) -> Result<Self, SessionFileError> {
        let io = |source| SessionFileError::Io {
            path: path.to_path_buf(),
            source,
        };
        let data = match std::fs::read(path) {
            Ok(bytes) => {
                restrict(path).map_err(io)?;
                let file: SessionFileV1 =
                    serde_json::from_slice(&bytes).map_err(|e| SessionFileError::Damaged {
                        path: path.to_path_buf(),
                        reason: e.to_string(),
                    })?;
                let mut data = Data {
                    home_dc: file.home_dc,
                    updates_state: file.updates_state,
                    ..Data::default()
                };
                for dc in file.dc_options {
                    data.dc_options.insert(dc.id, dc);
                }
                for p in file.peers {
                    data.peers.insert(p.id(), p);
                }
                data
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Data::default(),
            Err(e) => return Err(io(e)),
        };
        Ok(Self {
            path: path.to_path_buf(),
            data: Mutex::new(data),
            dirty: AtomicBool::new(false),
        })
    }

    /// The file this session lives in.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether a permanent auth key exists for the home DC (a login happened at some point).
    pub fn has_auth_key(&self) -> bool {
        self.data().is_ok_and(|d| {
            d.dc_options
                .get(&d.home_dc)
                .is_some_and(|o| o.auth_key.is_some())
        })
    }

    /// The logged-in user's id, once a login completed.
    pub fn self_user_id(&self) -> Option<i64> {
        let d = self.data().ok()?;
        d.peers.values().find_map(|p| match p {
            PeerInfo::User {
                id,
                is_self: Some(true),
                ..
            } => Some(*id),
            _ => None,
        })
    }

    /// Writes the file now (atomically, mode 0600; see [`write_private`]). When the write
    /// fails the session stays dirty, so the next [`FileSession::flush`] tries again.
    pub fn save(&self) -> Result<(), SessionFileError> {
        let file = {
            let d = self.data()?;
            // Cleared under the lock that guards the snapshot: a change made after it marks
            // the session dirty again.
            self.dirty.store(false, Ordering::SeqCst);
            let mut dc_options: Vec<_> = d.dc_options.values().cloned().collect();
            dc_options.sort_by_key(|o| o.id);
            SessionFileV1 {
                version: 1,
                home_dc: d.home_dc,
                dc_options,
                peers: d.peers.values().cloned().collect(),
                updates_state: d.updates_state.clone(),
            }
        };
        let written = serde_json::to_vec(&file)
            .map_err(|e| SessionFileError::Damaged {
                path: self.path.clone(),
                reason: e.to_string(),
            })
            .and_then(|bytes| {
                write_private(&self.path, &bytes).map_err(|source| SessionFileError::Io {
                    path: self.path.clone(),
                    source,
                })
            });
        if written.is_err() {
            self.mark();
        }
        written
    }

    /// Writes the file if peers or the update state changed since the last write.
    pub fn flush(&self) -> Result<(), SessionFileError> {
        if self.dirty.load(Ordering::SeqCst) {
            self.save()?;
        }
        Ok(())
    }

    /// [`FileSession::flush`], a failure logged (the session stays dirty, so the next flush
    /// tries again).
    pub(crate) fn flush_or_warn(&self) {
        if let Err(e) = self.flush() {
            tracing::warn!(error = %e, "could not write the session file");
        }
    }

    /// A task that flushes `session` every `every` until it is aborted: what the update
    /// stream marks dirty (peers, the update state after each update) reaches the file within
    /// that time.
    pub(crate) fn flush_every(session: Arc<Self>, every: Duration) -> tokio::task::JoinHandle<()> {
        tokio::spawn(async move {
            let mut ticks = tokio::time::interval(every);
            loop {
                ticks.tick().await;
                session.flush_or_warn();
            }
        })
    }

    /// Each channel's pts in the saved update state, `(channel id, pts)` by id: where the
    /// next start asks `updates.getChannelDifference` from.
    pub fn channel_pts(&self) -> Vec<(i64, i32)> {
        let mut pts: Vec<_> = self
            .data()
            .map(|d| {
                d.updates_state
                    .channels
                    .iter()
                    .map(|c| (c.id, c.pts))
                    .collect()
            })
            .unwrap_or_default();
        pts.sort_unstable();
        pts
    }

    /// The channels an update stream over this session asks `updates.getChannelDifference`
    /// for when it starts: those with a pts in the saved update state and a cached peer with
    /// an access hash (grammers needs both, and drops a channel's state without the peer).
    pub fn channels_to_catch_up(&self) -> HashSet<i64> {
        let Ok(d) = self.data() else {
            return HashSet::new();
        };
        d.updates_state
            .channels
            .iter()
            .filter(|c| {
                matches!(
                    d.peers.get(&PeerId::channel_unchecked(c.id)),
                    Some(PeerInfo::Channel { auth: Some(_), .. })
                )
            })
            .map(|c| c.id)
            .collect()
    }

    fn data(&self) -> Result<MutexGuard<'_, Data>, SessionFileError> {
        self.data.lock().map_err(|_| SessionFileError::Poisoned)
    }

    fn mark(&self) {
        self.dirty.store(true, Ordering::SeqCst);
    }
}

/// The output of `future` if it is ready on its first poll. A [`FileSession`]'s futures
/// always are (they only take a lock), which lets them be called where nothing can be awaited
/// (`Drop`).
pub(crate) fn ready_now<T>(future: impl std::future::Future<Output = T>) -> Option<T> {
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    match std::pin::pin!(future).poll(&mut cx) {
        std::task::Poll::Ready(out) => Some(out),
        std::task::Poll::Pending => None,
    }
}

impl Drop for FileSession {
    fn drop(&mut self) {
        self.flush_or_warn();
    }
}

#[cfg(unix)]
fn restrict(path: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(path)?.permissions().mode();
    if mode & 0o077 != 0 {
        tracing::warn!(path = %path.display(), "session file was readable by others; setting 0600");
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))?;
    }
    Ok(())
}

#[cfg(not(unix))]
fn restrict(_: &Path) -> std::io::Result<()> {
    Ok(())
}

/// Writes `bytes` to `path` atomically and privately.
///
/// The bytes go to `<name>.tmp` beside `path`, which is created exclusively (`O_CREAT |
/// O_EXCL`) with `O_NOFOLLOW` and mode 0600, then written, fsynced and renamed over `path`;
/// the directory is fsynced last (best effort). A missing directory is created with mode
/// 0700.
///
/// The temporary path is never followed or reused: whatever already sits there (a stale
/// file from a crash, or a symlink someone planted) is removed — a symlink itself, never
/// its target — and the exclusive create is tried once more. If something is there again
/// (or it cannot be removed, like a directory), the save fails with the IO error and the
/// session stays dirty.
fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path.parent().filter(|p| !p.as_os_str().is_empty());
    if let Some(dir) = dir {
        create_private_dir(dir)?;
    }
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".tmp");
    let tmp = path.with_file_name(name);
    let mut f = match create_new_private(&tmp) {
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            let symlink = std::fs::symlink_metadata(&tmp).is_ok_and(|m| m.file_type().is_symlink());
            tracing::warn!(
                path = %tmp.display(),
                symlink,
                "removing what was left at the session's temporary path"
            );
            std::fs::remove_file(&tmp)?;
            create_new_private(&tmp)?
        }
        other => other?,
    };
    let written = f
        .write_all(bytes)
        .and_then(|()| f.sync_all())
        .and_then(|()| std::fs::rename(&tmp, path));
    if let Err(e) = written {
        let _ = std::fs::remove_file(&tmp);
        return Err(e);
    }
    if let Some(dir) = dir
        && let Ok(d) = std::fs::File::open(dir)
    {
        let _ = d.sync_all();
    }
    Ok(())
}

/// Creates `path` for writing, failing if anything (even a dangling symlink) is there.
fn create_new_private(path: &Path) -> std::io::Result<std::fs::File> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600).custom_flags(libc::O_NOFOLLOW);
    }
    let f = options.open(path)?;
    #[cfg(unix)]
    {
        // Exactly 0600, whatever the umask made of the mode.
        use std::os::unix::fs::PermissionsExt;
        f.set_permissions(std::fs::Permissions::from_mode(0o600))?;
    }
    Ok(f)
}

fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        builder.mode(0o700);
    }
    builder.create(dir)
}

impl Session for FileSession {
    type Error = SessionFileError;

    fn home_dc_id(&self) -> Result<i32, Self::Error> {
        Ok(self.data()?.home_dc)
    }

    fn set_home_dc_id(&self, dc_id: i32) -> BoxFuture<'_, Result<(), Self::Error>> {
        Box::pin(async move {
            self.data()?.home_dc = dc_id;
            self.save()
        })
    }

    fn dc_option(&self, dc_id: i32) -> Result<Option<DcOption>, Self::Error> {
        Ok(self.data()?.dc_options.get(&dc_id).cloned())
    }

    fn set_dc_option(&self, dc_option: &DcOption) -> BoxFuture<'_, Result<(), Self::Error>> {
        let dc_option = dc_option.clone();
        Box::pin(async move {
            self.data()?.dc_options.insert(dc_option.id, dc_option);
            self.save()
        })
    }

    fn peer(&self, peer: PeerId) -> BoxFuture<'_, Result<Option<PeerInfo>, Self::Error>> {
        Box::pin(async move {
            let d = self.data()?;
            if peer == PeerId::self_user() {
                return Ok(d
                    .peers
                    .values()
                    .find(|p| {
                        matches!(
                            p,
                            PeerInfo::User {
                                is_self: Some(true),
                                ..
                            }
                        )
                    })
                    .cloned());
            }
            Ok(d.peers.get(&peer).cloned())
        })
    }

    fn cache_peer(&self, peer: PeerInfo) -> BoxFuture<'_, Result<(), Self::Error>> {
        Box::pin(async move {
            let is_self = matches!(
                peer,
                PeerInfo::User {
                    is_self: Some(true),
                    ..
                }
            );
            {
                let mut d = self.data()?;
                d.peers
                    .entry(peer.id())
                    .or_insert_with(|| peer.clone())
                    .extend_info(&peer);
            }
            if is_self {
                // The login's final step: persist it at once.
                self.save()
            } else {
                self.mark();
                Ok(())
            }
        })
    }

    fn updates_state(&self) -> BoxFuture<'_, Result<UpdatesState, Self::Error>> {
        Box::pin(async move { Ok(self.data()?.updates_state.clone()) })
    }

    fn set_update_state(&self, update: UpdateState) -> BoxFuture<'_, Result<(), Self::Error>> {
        Box::pin(async move {
            {
                let mut d = self.data()?;
                let s = &mut d.updates_state;
                match update {
                    UpdateState::All(all) => *s = all,
                    UpdateState::Primary { pts, date, seq } => {
                        s.pts = pts;
                        s.date = date;
                        s.seq = seq;
                    }
                    UpdateState::Secondary { qts } => s.qts = qts,
                    UpdateState::Channel { id, pts } => {
                        s.channels.retain(|c| c.id != id);
                        s.channels.push(ChannelState { id, pts });
                    }
                }
            }
            self.mark();
            Ok(())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_session_survives_a_restart_and_is_private() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("sub/parser.session");
        {
            let s = FileSession::open(&path).expect("open");
            assert!(!s.has_auth_key());
            assert_eq!(s.self_user_id(), None);
            let mut dc = s.dc_option(2).expect("dc").expect("known dc");
            dc.auth_key = Some([7u8; 256]);
            s.set_dc_option(&dc).await.expect("set dc");
            s.set_home_dc_id(2).await.expect("home");
            s.cache_peer(PeerInfo::User {
                id: 42,
                auth: None,
                bot: Some(false),
                is_self: Some(true),
            })
            .await
            .expect("self");
            s.cache_peer(PeerInfo::Channel {
                id: 1001,
                auth: Some(grammers_session::types::PeerAuth::from_hash(99)),
                kind: None,
            })
            .await
            .expect("channel");
            s.set_update_state(UpdateState::Channel { id: 1001, pts: 5 })
                .await
                .expect("state");
        } // dropped: flushed
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).expect("meta").permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        let s = FileSession::open(&path).expect("reopen");
        assert!(s.has_auth_key());
        assert_eq!(s.self_user_id(), Some(42));
        assert_eq!(
            s.peer(PeerId::self_user())
                .await
                .expect("peer")
                .map(|p| p.id()),
            Some(PeerId::user_unchecked(42))
        );
        let channel = s
            .peer_ref(PeerId::channel_unchecked(1001))
            .await
            .expect("ref")
            .expect("cached");
        assert_eq!(channel.auth.hash(), 99);
        let state = s.updates_state().await.expect("state");
        assert_eq!(state.channels, vec![ChannelState { id: 1001, pts: 5 }]);
    }

    fn channel(id: i64) -> PeerInfo {
        PeerInfo::Channel {
            id,
            auth: Some(grammers_session::types::PeerAuth::from_hash(id * 3)),
            kind: None,
        }
    }

    #[cfg(unix)]
    #[tokio::test]
    async fn a_symlink_at_the_temporary_path_is_not_followed() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("parser.session");
        let victim = dir.path().join("victim.txt");
        std::fs::write(&victim, b"precious").expect("victim");
        std::os::unix::fs::symlink(&victim, dir.path().join("parser.session.tmp"))
            .expect("plant symlink");
        let s = FileSession::open(&path).expect("open");
        s.cache_peer(channel(1001)).await.expect("cache");
        s.save().expect("the save creates its own temporary file");
        assert_eq!(std::fs::read(&victim).expect("read victim"), b"precious");
        let meta = std::fs::symlink_metadata(&path).expect("session");
        assert!(meta.file_type().is_file(), "the session is a regular file");
        assert!(!dir.path().join("parser.session.tmp").exists());
        assert!(knows_channel(&path, 1001).await);
    }

    #[tokio::test]
    async fn a_failed_write_keeps_the_changes_for_the_next_flush() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("sub/parser.session");
        let s = FileSession::open(&path).expect("open");
        // A file where the session's directory should be: the write cannot happen.
        std::fs::write(dir.path().join("sub"), b"in the way").expect("block");
        s.cache_peer(channel(1001)).await.expect("cache");
        assert!(s.flush().is_err(), "the write fails");
        std::fs::remove_file(dir.path().join("sub")).expect("unblock");
        s.flush().expect("the next flush writes");
        assert!(
            knows_channel(&path, 1001).await,
            "the change made before the failed write is in the file"
        );
    }

    /// Whether the session file at `path`, opened afresh, has channel `id` cached.
    async fn knows_channel(path: &std::path::Path, id: i64) -> bool {
        let again = FileSession::open(path).expect("reopen");
        again
            .peer(PeerId::channel_unchecked(id))
            .await
            .expect("peer")
            .is_some()
    }

    #[tokio::test]
    async fn debug_shows_no_auth_key_bytes() {
        let dir = tempfile::tempdir().expect("tempdir");
        let s = FileSession::open(&dir.path().join("parser.session")).expect("open");
        let mut key = [0u8; 256];
        for (i, b) in key.iter_mut().enumerate() {
            *b = (i * 7 + 13) as u8;
        }
        let mut dc = s.dc_option(2).expect("dc").expect("known dc");
        dc.auth_key = Some(key);
        s.set_dc_option(&dc).await.expect("set dc");
        s.cache_peer(channel(1001)).await.expect("cache");
        let decimal = key[..4]
            .iter()
            .map(u8::to_string)
            .collect::<Vec<_>>()
            .join(", ");
        let hex: String = key[..4].iter().map(|b| format!("{b:02x}")).collect();
        for shown in [format!("{s:?}"), format!("{s:#?}")] {
            assert!(!shown.contains(&decimal), "{shown}");
            assert!(!shown.to_lowercase().contains(&hex), "{shown}");
            assert!(!shown.contains("3003"), "no access hash: {shown}");
            assert!(shown.contains("parser.session"), "{shown}");
        }
    }

    #[test]
    fn a_damaged_file_is_reported_not_overwritten() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("bad.session");
        std::fs::write(&path, b"{not json").expect("write");
        let e = FileSession::open(&path).expect_err("damaged");
        assert!(e.to_string().contains("damaged"), "{e}");
        assert_eq!(std::fs::read(&path).expect("read"), b"{not json");
    }
}
