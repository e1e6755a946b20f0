//! The sources as the database holds them, followed while a parser runs.
//!
//! The database is the truth about which channels and feeds are read and with which rules;
//! the admin panel changes them in any process. [`SourcesWatcher`] is the one place a
//! parser process learns of a change: every [`SOURCES_POLL`] it reads the store's
//! `sources_version` (one single-row query) and, only when that moved, reads the sources
//! again, forgets intake's cached rules and hands the new list to every [`SourcesWatch`]
//! (the feeds task, the Telegram reader).

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use jobwire_store::{ChannelRow, SourceKind, Store};
use tokio::sync::watch;

use crate::stage::IntakeStage;

/// How often a parser asks whether the sources changed.
pub const SOURCES_POLL: Duration = Duration::from_secs(1);

/// The sources as last read: every source that is not removed, enabled or not (see
/// [`ChannelRow::is_read`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SourcesSnapshot {
    /// The store's `sources_version` they were read at; `None` until the first read.
    pub version: Option<i64>,
    pub sources: Vec<ChannelRow>,
}

impl SourcesSnapshot {
    /// The sources of `kind` that are read now (enabled, not removed).
    pub fn read(&self, kind: SourceKind) -> impl Iterator<Item = &ChannelRow> {
        self.sources
            .iter()
            .filter(move |s| s.kind == kind && s.is_read())
    }
}

/// A view of the sources that follows every change ([`watch::Receiver::changed`]).
pub type SourcesWatch = watch::Receiver<Arc<SourcesSnapshot>>;

/// Waits for the first read of the sources; `None` when the watcher is gone.
pub async fn first_read(watch: &mut SourcesWatch) -> Option<Arc<SourcesSnapshot>> {
    watch
        .wait_for(|s| s.version.is_some())
        .await
        .ok()
        .map(|s| Arc::clone(&s))
}

/// Polls the store's sources version and publishes the sources when it moved. Cheap to
/// share; [`SourcesWatcher::run`] may be restarted without losing its subscribers.
#[derive(Debug)]
pub struct SourcesWatcher {
    store: Arc<dyn Store>,
    intake: Option<Arc<IntakeStage>>,
    interval: Duration,
    tx: watch::Sender<Arc<SourcesSnapshot>>,
}

impl SourcesWatcher {
    /// A watcher polling every [`SOURCES_POLL`].
    pub fn new(store: Arc<dyn Store>) -> Self {
        Self {
            store,
            intake: None,
            interval: SOURCES_POLL,
            tx: watch::Sender::new(Arc::default()),
        }
    }

    /// Also forgets `intake`'s cached channel rules at every change, so an edited rule, a
    /// disabled or a removed source applies to the next post.
    pub fn with_intake(mut self, intake: Arc<IntakeStage>) -> Self {
        self.intake = Some(intake);
        self
    }

    /// Polls every `interval` instead (at least 10 ms).
    pub fn with_interval(mut self, interval: Duration) -> Self {
        self.interval = interval.max(Duration::from_millis(10));
        self
    }

    /// A view that follows the sources from the next read on.
    pub fn subscribe(&self) -> SourcesWatch {
        self.tx.subscribe()
    }

    /// Reads the version and, when it moved since the last read, the sources. Returns
    /// whether they changed.
    pub async fn poll_once(&self) -> Result<bool, jobwire_store::StoreError> {
        let version = self.store.sources_version().await?;
        if self.tx.borrow().version == Some(version) {
            return Ok(false);
        }
        let sources = self.store.sources().await?;
        if let Some(intake) = &self.intake {
            intake.reload_channels().await;
        }
        tracing::info!(
            version,
            sources = sources.len(),
            read = sources.iter().filter(|s| s.is_read()).count(),
            "sources read"
        );
        self.tx.send_replace(Arc::new(SourcesSnapshot {
            version: Some(version),
            sources,
        }));
        Ok(true)
    }

    /// Polls until `shutdown` completes. A failing database is logged (once per outage)
    /// and asked again at the next poll: the sources last read stay in force meanwhile.
    pub async fn run(&self, shutdown: impl Future<Output = ()>) {
        let mut shutdown = std::pin::pin!(shutdown);
        let mut failing = false;
        loop {
            match self.poll_once().await {
                Ok(_) if failing => {
                    failing = false;
                    tracing::info!("sources can be read again");
                }
                Ok(_) => {}
                Err(e) if !failing => {
                    failing = true;
                    tracing::warn!(error = %e, "cannot read the sources; the last ones read stay in force");
                }
                Err(_) => {}
            }
            tokio::select! {
                () = &mut shutdown => return,
                () = tokio::time::sleep(self.interval) => {}
            }
        }
    }
}
