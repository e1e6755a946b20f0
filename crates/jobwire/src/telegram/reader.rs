//! The parser role's Telegram reader: connects the accounts of `[mtproto]`, reads the
//! channels through `jobwire-mtproto`'s [`Reader`] and hands every post to the intake stage;
//! its alerts go to the admin chat.

use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use chrono::Utc;
use jobwire_intake::retry::{RetryPolicy, retry_until_stopped};
use jobwire_intake::stage::IntakeStage;
use jobwire_mtproto::{Account, Clock, GrammersAccount, Reader, ReaderEvent, SystemClock};
use jobwire_store::Store;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::alerts::AdminAlerts;
use super::{MtprotoSection, RESTART_REWIND, SqlReaderStore};
use crate::config::{ProcessEnv, Settings};

const CONNECT_TIMEOUT: Duration = Duration::from_secs(60);

/// The parser role's Telegram reader: connects every account of `section`, reads the
/// configured channels and hands each post to `intake` until `shutdown`. Accounts whose
/// session does not work are reported (log and admin chat) and left out; with none left it
/// fails, saying to run `jobwire login`.
pub async fn run_reader(
    settings: &Settings,
    section: &MtprotoSection,
    intake: Arc<IntakeStage>,
    store: Arc<dyn Store>,
    shutdown: CancellationToken,
) -> anyhow::Result<()> {
    let configs = section.resolve(&ProcessEnv)?;
    let alerts = AdminAlerts::new(settings, section)?;
    let mut accounts: Vec<Arc<dyn Account>> = Vec::new();
    let mut failures = Vec::new();
    for config in &configs {
        let connected = tokio::select! {
            _ = shutdown.cancelled() => return Ok(()),
            r = tokio::time::timeout(CONNECT_TIMEOUT, GrammersAccount::connect(config)) => r,
        };
        match connected {
            Ok(Ok(account)) => {
                tracing::info!(account = %config.id, "Telegram account connected");
                accounts.push(Arc::new(account));
            }
            Ok(Err(e)) => failures.push(format!("account {} cannot connect: {e}", config.id)),
            Err(_) => failures.push(format!(
                "account {} cannot connect: Telegram did not answer within {} s",
                config.id,
                CONNECT_TIMEOUT.as_secs()
            )),
        }
    }
    for message in &failures {
        tracing::warn!(%message, "Telegram account left out");
        alerts.send(message).await;
    }
    if accounts.is_empty() {
        anyhow::bail!(
            "mtproto.accounts: no Telegram account could connect ({}); run `jobwire login`",
            failures.join("; ")
        );
    }
    read_channels(
        settings,
        section,
        accounts,
        Arc::new(SystemClock),
        intake,
        store,
        shutdown,
    )
    .await
}

/// The reader over accounts that are already connected: builds the [`Reader`] with a
/// [`SqlReaderStore`], adds the channels ([`MtprotoSection::all_channel_refs`]) and consumes
/// its events until `shutdown` or until the reader stops.
///
/// - `Post` → [`IntakeStage::ingest`], retried with backoff until it succeeds (the reader's
///   cursor has already moved past the post). The event channel holds one event and the next
///   is received only after the post is stored, so at most two posts are between the reader
///   and the database; [`RESTART_REWIND`] re-reads them after a crash.
/// - `Edited` → [`IntakeStage::edit`], retried like a post: an edit of a post that was not
///   fanned out yet replaces its text; an edit of a delivered post is kept as is
///   (subscribers are not notified twice).
/// - `Alert`, `JoinFailed` → logged at warn and sent to the admin chat.
pub async fn read_channels(
    settings: &Settings,
    section: &MtprotoSection,
    accounts: Vec<Arc<dyn Account>>,
    clock: Arc<dyn Clock>,
    intake: Arc<IntakeStage>,
    store: Arc<dyn Store>,
    shutdown: CancellationToken,
) -> anyhow::Result<()> {
    let refs = section.all_channel_refs(settings)?;
    let alerts = AdminAlerts::new(settings, section)?;
    for r in &refs {
        // Visible in the store (and the admin panel) before the first post; rules an admin
        // set are kept.
        store
            .ensure_channel(&r.handle(), Utc::now())
            .await
            .with_context(|| format!("storing channel {}", r.handle()))?;
    }
    let reader_store = Arc::new(SqlReaderStore::new(store).with_restart_rewind(RESTART_REWIND));
    let (tx, mut events) = mpsc::channel(1);
    let mut reader = Reader::new(section.reader_config(), accounts, reader_store, clock, tx);
    for r in refs.iter().cloned() {
        reader.add_channel(r);
    }
    tracing::info!(channels = refs.len(), "Telegram reader starting");
    let mut task = tokio::spawn(reader.run());
    let result = loop {
        tokio::select! {
            biased;
            _ = shutdown.cancelled() => break Ok(()),
            event = events.recv() => match event {
                Some(event) => {
                    if !handle_event(event, &intake, &alerts, &shutdown).await {
                        break Ok(());
                    }
                }
                None => {
                    // The reader ended on its own: it only does so on a store failure.
                    break match (&mut task).await {
                        Ok(Ok(())) => Err(anyhow::anyhow!("the Telegram reader stopped")),
                        Ok(Err(e)) => Err(anyhow::Error::new(e).context("the Telegram reader failed")),
                        Err(e) => Err(anyhow::anyhow!("the Telegram reader panicked: {e}")),
                    };
                }
            },
        }
    };
    drop(events);
    task.abort();
    let _ = task.await;
    result
}

/// Waits between attempts to store a post or an edit: the reader's cursor has already moved
/// past it, so giving up would lose it.
const STORE_RETRY: RetryPolicy = RetryPolicy {
    first: Duration::from_millis(500),
    max: Duration::from_secs(30),
};

/// Handles one reader event. Returns `false` when shutdown interrupted it.
async fn handle_event(
    event: ReaderEvent,
    intake: &IntakeStage,
    alerts: &AdminAlerts,
    shutdown: &CancellationToken,
) -> bool {
    match event {
        ReaderEvent::Post(post) => {
            let (channel, id) = (post.channel.clone(), post.external_id.clone());
            let stored = retry_until_stopped(
                &channel,
                "storing a Telegram post",
                STORE_RETRY,
                shutdown.cancelled(),
                || intake.ingest(post.clone()),
            )
            .await;
            if let Some(outcome) = &stored {
                tracing::debug!(%channel, external_id = %id, outcome = outcome.name(), "post taken in");
            }
            stored.is_some()
        }
        ReaderEvent::Edited(post) => {
            // An edit of a post that was not fanned out yet replaces its text; after that the
            // subscribers keep the version they were sent (no second message for an edit).
            let (channel, id) = (post.channel.clone(), post.external_id.clone());
            let stored = retry_until_stopped(
                &channel,
                "applying a Telegram edit",
                STORE_RETRY,
                shutdown.cancelled(),
                || intake.edit(post.clone()),
            )
            .await;
            if let Some(outcome) = &stored {
                tracing::info!(%channel, external_id = %id, ?outcome, "post edited");
            }
            stored.is_some()
        }
        ReaderEvent::Alert {
            account,
            channel,
            message,
        } => {
            tracing::warn!(account = ?account, channel = ?channel, %message, "Telegram reader alert");
            alerts.send(&message).await;
            true
        }
        ReaderEvent::JoinFailed { channel, reason } => {
            tracing::warn!(%channel, %reason, "cannot join a channel");
            alerts
                .send(&format!("cannot join {channel}: {reason}"))
                .await;
            true
        }
    }
}
