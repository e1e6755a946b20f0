//! [`AccountConfig`] and opening a grammers client over a session file.

use std::num::{NonZeroU32, NonZeroUsize};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use grammers_client::Client;
use grammers_mtsender::{AutoSleep, ConnectionParams, SenderPool, SenderPoolHandle};
use tokio::task::JoinHandle;

use crate::session::FileSession;

/// One configured user account. `Debug` hides the API hash (a secret).
#[derive(Clone)]
pub struct AccountConfig {
    /// A short name for logs and the assignment table (`"parser1"`).
    pub id: String,
    /// The developer API id from my.telegram.org.
    pub api_id: i32,
    /// The developer API hash from my.telegram.org.
    pub api_hash: String,
    /// Where the session file lives (written with mode 0600).
    pub session_path: PathBuf,
    /// Updates buffered between the network and the reader; grammers drops updates when
    /// this is full (the reader's polling then catches up). Default 2000.
    pub updates_capacity: usize,
}

impl std::fmt::Debug for AccountConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AccountConfig")
            .field("id", &self.id)
            .field("api_id", &self.api_id)
            .field("api_hash", &"<redacted>")
            .field("session_path", &self.session_path)
            .field("updates_capacity", &self.updates_capacity)
            .finish()
    }
}

impl AccountConfig {
    /// A config with the default update buffer.
    pub fn new(id: &str, api_id: i32, api_hash: &str, session_path: PathBuf) -> Self {
        Self {
            id: id.to_string(),
            api_id,
            api_hash: api_hash.to_string(),
            session_path,
            updates_capacity: 2000,
        }
    }
}

/// A grammers client over a session, with the task that drives its network I/O.
pub(super) struct Connection {
    pub(super) client: Client,
    pub(super) session: Arc<FileSession>,
    pub(super) thin: SenderPoolHandle,
    pub(super) updates: Option<tokio::sync::mpsc::Receiver<grammers_session::updates::UpdatesLike>>,
    pub(super) runner: JoinHandle<()>,
}

impl Connection {
    /// Disconnects the client and stops its network task.
    pub(super) fn close(&self) {
        self.client.disconnect();
        self.runner.abort();
    }
}

pub(super) fn connect(config: &AccountConfig, session: Arc<FileSession>) -> Connection {
    let params = ConnectionParams {
        // grammers sleeps through tiny flood waits and retries I/O errors; longer waits come
        // back to the reader, which decides.
        retry_policy: Box::new(AutoSleep {
            tries: NonZeroU32::new(2).unwrap_or(NonZeroU32::MIN),
            threshold: Duration::from_secs(5),
            io_errors_as_flood_of: Some(Duration::from_secs(1)),
        }),
        updates_channel_capacity: NonZeroUsize::new(config.updates_capacity.max(1))
            .unwrap_or(NonZeroUsize::MIN),
        ..ConnectionParams::default()
    };
    let pool = SenderPool::with_configuration(Arc::clone(&session), config.api_id, params);
    let thin = pool.handle.thin.clone();
    let client = Client::new(pool.handle);
    let runner = tokio::spawn(pool.runner.run());
    Connection {
        client,
        session,
        thin,
        updates: Some(pool.updates),
        runner,
    }
}
