//! Telegram's waits kept for the admin panel's dashboard: every 429 a send gets is noted
//! here and written to the store (`telegram_waits`) by one task, whatever has gathered in
//! one transaction. Noting never waits and never fails: when the buffer is full (the
//! database is slow or down) a note is dropped and logged, and a failed write is logged;
//! the send goes on either way. The MTProto reader's flood waits use it too
//! (`jobwire::telegram`).

use std::sync::Arc;
use std::time::Duration;

use chrono::Utc;
use jobwire_store::{Store, TelegramWait, WaitKind};
use tokio::sync::mpsc;

/// The most waits written in one transaction.
const MAX_BATCH: usize = 256;
/// Waits held while the store is slow; more are dropped.
const BUFFER: usize = 4096;

/// Handle to the writer task. Cheap to clone; the task ends when the last handle is gone.
#[derive(Debug, Clone)]
pub struct WaitLog {
    tx: mpsc::Sender<TelegramWait>,
}

impl WaitLog {
    /// Starts the writer task on the current runtime.
    pub fn spawn(store: Arc<dyn Store>) -> Self {
        let (tx, mut rx) = mpsc::channel::<TelegramWait>(BUFFER);
        tokio::spawn(async move {
            let mut batch = Vec::with_capacity(MAX_BATCH);
            while rx.recv_many(&mut batch, MAX_BATCH).await > 0 {
                if let Err(e) = store.record_telegram_waits(&batch).await {
                    tracing::warn!(error = %e, n = batch.len(), "recording Telegram's waits failed");
                }
                batch.clear();
            }
        });
        Self { tx }
    }

    /// Notes that Telegram made `who` (a bot's name, an account's id) wait `wait`, now.
    pub fn note(&self, kind: WaitKind, who: &str, wait: Duration) {
        let seconds = wait.as_secs() + u64::from(wait.subsec_nanos() > 0);
        let note = TelegramWait {
            kind,
            who: who.to_owned(),
            seconds,
            at: Utc::now(),
        };
        if let Err(e) = self.tx.try_send(note) {
            tracing::warn!(kind = kind.as_str(), who, error = %e, "a Telegram wait is not recorded");
        }
    }
}
