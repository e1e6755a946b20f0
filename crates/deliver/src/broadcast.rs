//! Sending broadcasts: the recipients of every running broadcast, claimed one at a time
//! and sent one by one through the same bots and rate limiters as vacancies. A vacancy
//! waiting for its bot goes first: the broadcast waits while any does. A claimed recipient
//! is sent once at most: a call whose outcome is unknown is recorded as such and not
//! repeated, and a restart finds it `sending` and marks it `unknown` after the lease.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use chrono::Utc;
use jobwire_store::{BlockScope, BroadcastId, RecipientOutcome};
use teloxide::prelude::*;
use teloxide::types::{LinkPreviewOptions, ParseMode};
use teloxide::{ApiError, RequestError};
use tokio_util::sync::CancellationToken;

use crate::replies::{block_scope, is_transient};
use crate::stage::{DeliverError, SendStage};

/// Tries of one recipient whose sends fail on Telegram's side before it counts as failed.
const MAX_TRIES: u32 = 5;
/// Recipients of one broadcast sent per pass before the others get their turn.
const PER_PASS: usize = 32;
/// How often running broadcasts are looked for when there is nothing to send.
const IDLE: Duration = Duration::from_millis(200);
/// A recipient left `sending` this long is taken as interrupted (see the module doc).
const LEASE: Duration = Duration::from_secs(120);
/// `jobwire_broadcast_sends_total{outcome}`.
pub const BROADCAST_SENDS_TOTAL: &str = "jobwire_broadcast_sends_total";

impl SendStage {
    /// Sends running broadcasts until `shutdown`; the recipient in flight finishes first.
    /// A failing database (a restart) is waited out: the loop logs it and goes on.
    pub async fn run_broadcasts(
        self: Arc<Self>,
        shutdown: CancellationToken,
    ) -> Result<(), DeliverError> {
        let mut texts: HashMap<BroadcastId, String> = HashMap::new();
        let mut tries: HashMap<(BroadcastId, i64), u32> = HashMap::new();
        let mut last_abandon = None;
        loop {
            if shutdown.is_cancelled() {
                return Ok(());
            }
            let idle = match self
                .broadcast_pass(&mut texts, &mut tries, &mut last_abandon, &shutdown)
                .await
            {
                Ok(sent_any) => !sent_any,
                Err(e) => {
                    tracing::warn!(error = %e, "sending broadcasts failed; trying again");
                    tokio::select! {
                        _ = shutdown.cancelled() => return Ok(()),
                        _ = tokio::time::sleep(Duration::from_secs(1)) => {}
                    }
                    false
                }
            };
            if idle {
                tokio::select! {
                    _ = shutdown.cancelled() => return Ok(()),
                    _ = tokio::time::sleep(IDLE) => {}
                }
            }
        }
    }

    /// One pass over the running broadcasts: a batch of each; whether anything was sent.
    async fn broadcast_pass(
        &self,
        texts: &mut HashMap<BroadcastId, String>,
        tries: &mut HashMap<(BroadcastId, i64), u32>,
        last_abandon: &mut Option<tokio::time::Instant>,
        shutdown: &CancellationToken,
    ) -> Result<bool, DeliverError> {
        if last_abandon.is_none_or(|t| t.elapsed() >= LEASE / 4) {
            let now = Utc::now();
            let stale = now - chrono::Duration::from_std(LEASE).unwrap_or_default();
            let n = self.store().abandon_broadcast_sends(stale, now).await?;
            if n > 0 {
                tracing::warn!(
                    recipients = n,
                    "broadcast sends interrupted by a stop; not sent again"
                );
            }
            *last_abandon = Some(tokio::time::Instant::now());
        }
        let mut sent_any = false;
        for id in self.store().running_broadcasts().await? {
            // One recipient claimed at a time: a stop or a failed write leaves at most the
            // one whose call was in flight in doubt, never one that was not tried.
            for _ in 0..PER_PASS {
                if shutdown.is_cancelled() {
                    return Ok(sent_any);
                }
                let claimed = self
                    .store()
                    .claim_broadcast_recipients(id, 1, Utc::now())
                    .await?;
                let Some((chat, bot)) = claimed.into_iter().next() else {
                    if self.store().complete_broadcast(id, Utc::now()).await? {
                        tracing::info!(broadcast = id.get(), "broadcast finished");
                        texts.remove(&id);
                    }
                    break;
                };
                let text = match texts.get(&id) {
                    Some(t) => t.clone(),
                    None => match self.store().broadcast(id, Utc::now()).await? {
                        Some(b) => {
                            texts.insert(id, b.text.clone());
                            b.text
                        }
                        None => break,
                    },
                };
                sent_any = true;
                let mut outcome = self.send_broadcast(&bot, chat, &text).await;
                if outcome == RecipientOutcome::Later {
                    // Telegram's trouble for this chat: a few tries, then the next one.
                    let n = tries.entry((id, chat)).or_default();
                    *n += 1;
                    if *n >= MAX_TRIES {
                        tries.remove(&(id, chat));
                        outcome = RecipientOutcome::Failed {
                            error: format!("Telegram failed {MAX_TRIES} times; given up"),
                        };
                    }
                } else {
                    tries.remove(&(id, chat));
                }
                let label = match &outcome {
                    RecipientOutcome::Sent { .. } => "sent",
                    RecipientOutcome::Blocked { .. } => "blocked",
                    RecipientOutcome::Failed { .. } => "failed",
                    RecipientOutcome::Unknown { .. } => "unknown",
                    RecipientOutcome::Later => "later",
                };
                metrics::counter!(BROADCAST_SENDS_TOTAL, "outcome" => label).increment(1);
                // A failed write leaves the recipient `sending`: after the lease it becomes
                // `unknown` (the message may have gone out), never sent twice.
                self.store()
                    .finish_broadcast_recipient(id, chat, &outcome, Utc::now())
                    .await?;
            }
        }
        Ok(sent_any)
    }

    /// One recipient's send, after the vacancies waiting for the same bot.
    async fn send_broadcast(&self, bot: &str, chat: i64, text: &str) -> RecipientOutcome {
        let Some(sender) = self.sender(bot) else {
            return RecipientOutcome::Failed {
                error: format!("no bot named {bot:?} is configured"),
            };
        };
        loop {
            while sender.waiting.load(Ordering::SeqCst) > 0 {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            sender.limiter.acquire(chat).await;
            sender.pass_gate(chat).await;
            sender.limiter.pace_send().await;
            let result = sender
                .bot
                .send_message(ChatId(chat), text.to_owned())
                .parse_mode(ParseMode::Html)
                .link_preview_options(LinkPreviewOptions {
                    is_disabled: true,
                    url: None,
                    prefer_small_media: false,
                    prefer_large_media: false,
                    show_above_text: false,
                })
                .await;
            return match result {
                Ok(m) => RecipientOutcome::Sent {
                    message_id: i64::from(m.id.0),
                },
                Err(RequestError::RetryAfter(wait)) => {
                    self.note_429(bot, wait.duration());
                    sender.limiter.freeze_for(wait.duration()).await;
                    continue;
                }
                // The request may have reached Telegram (an unreadable answer usually means
                // it did): never sent twice.
                Err(
                    e @ (RequestError::Network(_)
                    | RequestError::Io(_)
                    | RequestError::InvalidJson { .. }),
                ) => RecipientOutcome::Unknown {
                    error: e.to_string(),
                },
                // Telegram's own trouble before it took the message: try later.
                Err(e) if is_transient(&e) => {
                    tracing::debug!(error = %e, "broadcast send will be retried");
                    tokio::time::sleep(Duration::from_secs(1)).await;
                    return RecipientOutcome::Later;
                }
                Err(RequestError::Api(api)) if let Some(scope) = block_scope(&api) => {
                    // Noted as a vacancy's refusal is: fan-out stops using this bot (or
                    // this chat), and the main bot tells the user how to fix it.
                    self.note_block(chat, bot, scope).await;
                    RecipientOutcome::Blocked {
                        error: api_text(&api),
                    }
                }
                Err(e) => RecipientOutcome::Failed {
                    error: e.to_string(),
                },
            };
        }
    }
}

impl SendStage {
    /// Stores that `bot` cannot reach `chat` (or that nobody can: a deleted account).
    async fn note_block(&self, chat: i64, bot: &str, scope: BlockScope) {
        let now = Utc::now();
        let noted = match scope {
            BlockScope::Everywhere => self.store().set_subscriber_blocked(chat, true, now).await,
            scope => {
                self.store()
                    .set_bot_block(chat, bot, Some(scope), now)
                    .await
            }
        };
        if let Err(e) = noted {
            tracing::warn!(chat, bot, error = %e, "could not note a broadcast's blocked chat");
        }
    }
}

fn api_text(e: &ApiError) -> String {
    e.to_string()
}
