//! The parser role's Telegram reader: connects the accounts of `[mtproto]`, reads the
//! Telegram sources the database holds through `jobwire-mtproto`'s [`Reader`] (following
//! the admin's changes while it runs) and hands every post to the intake stage; its alerts
//! go to the admin chat.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use chrono::Utc;
use jobwire_intake::retry::RetryPolicy;
use jobwire_intake::sources::{SourcesSnapshot, SourcesWatch, first_read};
use jobwire_intake::stage::IntakeStage;
use jobwire_mtproto::{
    Account, ChannelRef, Clock, GrammersAccount, Reader, ReaderEvent, ReaderHandle, SystemClock,
};
use jobwire_store::{SourceKind, SourceNote, Store};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::alerts::AdminAlerts;
use super::{MtprotoSettings, RESTART_REWIND, SqlReaderStore};
use crate::config::{ProcessEnv, Settings};

const CONNECT_TIMEOUT: Duration = Duration::from_secs(60);

/// The parser role's Telegram reader: connects every account of `section`, reads the
/// Telegram sources `sources` follows and hands each post to `intake` until `shutdown`. Accounts whose
/// session does not work are reported (log and admin chat) and left out; with none left it
/// fails, saying to run `jobwire login`.
pub async fn run_reader(
    settings: &Settings,
    section: &MtprotoSettings,
    intake: Arc<IntakeStage>,
    store: Arc<dyn Store>,
    sources: SourcesWatch,
    shutdown: CancellationToken,
) -> anyhow::Result<()> {
    let configs = section.account_configs(&ProcessEnv)?;
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
        sources,
        shutdown,
    )
    .await
}

/// The Telegram sources a snapshot reads now (enabled, not removed), by their reader key.
fn telegram_sources(snapshot: &SourcesSnapshot) -> HashMap<String, ChannelRef> {
    snapshot
        .read(SourceKind::Telegram)
        .filter_map(|s| match ChannelRef::parse(&s.handle) {
            Ok(r) => Some((r.key(), r)),
            Err(e) => {
                tracing::warn!(source = %s.handle, error = %e, "not a Telegram channel; not read");
                None
            }
        })
        .collect()
}

/// The reader over accounts that are already connected: builds the [`Reader`] with a
/// [`SqlReaderStore`], adds the Telegram sources the database holds (enabled, not removed)
/// and consumes its events until `shutdown` or until the reader stops.
///
/// - A source added (or enabled again) while it runs is handed to the reader, which joins it
///   with its pacing and daily caps; one disabled or removed is no longer read; `sources`
///   says within about a second ([`jobwire_intake::sources::SOURCES_POLL`]).
/// - `Post` → [`IntakeStage::ingest`], retried with backoff until it succeeds (the reader's
///   cursor has already moved past the post). The event channel holds one event and the next
///   is received only after the post is stored, so at most two posts are between the reader
///   and the database. On shutdown the reader is stopped first and the event it left in the
///   channel is stored too; when everything it handed on is stored the run is noted as
///   stopped cleanly ([`SqlReaderStore::note_clean_stop`]), and the next start trusts the
///   cursors. After any other end (a crash, a failed store) the next start re-reads
///   [`RESTART_REWIND`] messages before each cursor.
/// - `Edited` → [`IntakeStage::edit`], retried like a post: an edit of a post that was not
///   fanned out yet replaces its text; an edit of a delivered post is kept as is
///   (subscribers are not notified twice).
/// - `Alert`, `JoinFailed` → logged at warn and sent to the admin chat; a failed join is
///   also noted on its source (the panel shows it).
#[allow(clippy::too_many_arguments)]
pub async fn read_channels(
    settings: &Settings,
    section: &MtprotoSettings,
    accounts: Vec<Arc<dyn Account>>,
    clock: Arc<dyn Clock>,
    intake: Arc<IntakeStage>,
    store: Arc<dyn Store>,
    mut sources: SourcesWatch,
    shutdown: CancellationToken,
) -> anyhow::Result<()> {
    let alerts = AdminAlerts::new(settings, section)?;
    let first = tokio::select! {
        _ = shutdown.cancelled() => return Ok(()),
        first = first_read(&mut sources) => first,
    };
    let Some(first) = first else {
        anyhow::bail!("the sources are not followed (the sources watcher is gone)");
    };
    let mut reading = telegram_sources(&first);
    let reader_store =
        Arc::new(SqlReaderStore::new(store.clone()).with_restart_rewind(RESTART_REWIND));
    let clean_before = reader_store
        .begin_run()
        .await
        .context("the Telegram reader's state")?;
    let (tx, mut events) = mpsc::channel(1);
    let mut reader = Reader::new(
        section.reader.clone(),
        accounts,
        reader_store.clone(),
        clock,
        tx,
    );
    for r in reading.values() {
        reader.add_channel(r.clone());
    }
    let handle = reader.handle();
    tracing::info!(
        channels = reading.len(),
        last_run_stopped_cleanly = clean_before,
        "Telegram reader starting"
    );
    let mut task = tokio::spawn(reader.run());
    // Whether every post and edit the reader handed on so far is stored.
    let mut stored_all = true;
    let result = loop {
        tokio::select! {
            biased;
            _ = shutdown.cancelled() => break Ok(()),
            changed = sources.changed() => {
                if changed.is_err() {
                    break Err(anyhow::anyhow!("the sources are not followed (the sources watcher is gone)"));
                }
                let now = telegram_sources(&sources.borrow_and_update());
                follow(&handle, &reading, &now);
                reading = now;
            }
            event = events.recv() => match event {
                Some(event) => {
                    if !handle_event(event, &intake, store.as_ref(), &alerts, &shutdown).await {
                        stored_all = false;
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
    task.abort();
    let _ = task.await;
    if result.is_ok() && stored_all {
        // The reader is stopped; the event it left in the channel was handed on (its cursor
        // moved past it), so it is stored too (one attempt: shutdown has begun).
        while let Ok(event) = events.try_recv() {
            if !handle_event(event, &intake, store.as_ref(), &alerts, &shutdown).await {
                stored_all = false;
            }
        }
        if stored_all && let Err(e) = reader_store.note_clean_stop().await {
            tracing::warn!(error = %e, "the clean stop could not be noted; the next start re-reads a little");
        }
    }
    result
}

/// Tells the reader what changed between the sources it reads (`before`) and those it
/// should read (`now`).
fn follow(
    reader: &ReaderHandle,
    before: &HashMap<String, ChannelRef>,
    now: &HashMap<String, ChannelRef>,
) {
    for (key, r) in before {
        if !now.contains_key(key) {
            tracing::info!(channel = %r, "source disabled or removed: no longer read");
            reader.remove_channel(r.clone());
        }
    }
    for (key, r) in now {
        if !before.contains_key(key) {
            tracing::info!(channel = %r, "source added: the reader joins it");
            reader.add_channel(r.clone());
        }
    }
}

/// How many times a post the database refuses (rather than cannot be reached) is tried
/// before it is kept as a dead letter and the reader goes on.
const STORE_TRIES: u32 = 3;

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
    store: &dyn Store,
    alerts: &AdminAlerts,
    shutdown: &CancellationToken,
) -> bool {
    match event {
        ReaderEvent::Post(post) => {
            let (channel, id) = (post.channel.clone(), post.external_id.clone());
            let stored = intake
                .take_in(
                    &channel,
                    post,
                    false,
                    STORE_RETRY,
                    STORE_TRIES,
                    shutdown.cancelled(),
                )
                .await;
            if let Some(Ok(outcome)) = &stored {
                tracing::debug!(%channel, external_id = %id, ?outcome, "post taken in");
            }
            stored.is_some()
        }
        ReaderEvent::Edited(post) => {
            // An edit of a post that was not fanned out yet replaces its text; after that the
            // subscribers keep the version they were sent (no second message for an edit).
            let (channel, id) = (post.channel.clone(), post.external_id.clone());
            let stored = intake
                .take_in(
                    &channel,
                    post,
                    true,
                    STORE_RETRY,
                    STORE_TRIES,
                    shutdown.cancelled(),
                )
                .await;
            if let Some(Ok(outcome)) = &stored {
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
            let note = SourceNote::Error(format!("cannot join: {reason}"));
            if let Err(e) = store.note_source(&channel, &note, Utc::now()).await {
                tracing::warn!(%channel, error = %e, "cannot record the failed join");
            }
            alerts
                .send(&format!("cannot join {channel}: {reason}"))
                .await;
            true
        }
    }
}
