//! After the payment: the main bot publishes paid (and approved) placements as posts of the
//! source `direct`, tells the employer when one went out, and refunds those refused by an
//! admin or not found to be a vacancy.
//!
//! Every step is a conditional move in the store ([`jobwire_store::PlacementStore`]), so any
//! number of bot processes run this loop and each placement is published, announced and
//! refunded once. A refund that Telegram refuses is tried again later, each time after a
//! longer wait, and the admins are told.

use std::sync::Arc;
use std::time::Duration;

use jobwire_core::placement::PlacementStatus;
use jobwire_store::REASON_NOT_A_VACANCY;
use tokio_util::sync::CancellationToken;

use super::Placements;
use super::config::{lang_of, text_of};
use crate::BotError;
use crate::events::BotEvent;
use crate::payments::refund_star_payment_for;
use crate::telegram::{BotRuntime, send};
use crate::texts::placements as t;

/// A claimed refund not finished within this long (its process died) is taken again.
const STALE_REFUND: chrono::Duration = chrono::Duration::minutes(10);
/// Most placements each step of one pass handles.
const PER_PASS: u32 = 50;
/// A published placement the classifier has not decided on within this long is refunded
/// (and its post taken out of the pipeline): a vacancy hours late is not what was paid for.
const CLASSIFY_DEADLINE: chrono::Duration = chrono::Duration::hours(2);
/// How often the loop looks when placements are switched off (only to settle and refund
/// what is left from when they were on).
const OFF_EVERY: Duration = Duration::from_secs(10);

impl Placements {
    /// Runs on every process of the main bot, also with placements switched off: a payment that
    /// arrives then, a refusal or a refund left over must still be refunded.
    pub(crate) async fn run(self: Arc<Self>, main: Arc<BotRuntime>, shutdown: CancellationToken) {
        let every = self.config.as_ref().map_or(OFF_EVERY, |c| c.every);
        let mut tick = tokio::time::interval(every);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                _ = shutdown.cancelled() => return,
                _ = tick.tick() => {}
            }
            if let Err(e) = self.pass(&main).await {
                tracing::warn!(error = %e, "placements: a pass failed; trying again");
            }
        }
    }

    /// One pass: publish, settle, refund.
    pub(crate) async fn pass(&self, main: &BotRuntime) -> Result<(), BotError> {
        let config = self.config.as_ref();
        let store = &self.store;
        let approved = match config {
            Some(_) => {
                store
                    .placements(Some(PlacementStatus::Approved), PER_PASS)
                    .await?
            }
            None => Vec::new(),
        };
        for p in approved {
            let text = text_of(&p);
            let fingerprint = jobwire_core::dedup::fingerprint(&text).to_hex();
            let Some(post_id) = store
                .publish_placement(p.id, &text, Some(&fingerprint), self.now())
                .await?
            else {
                continue;
            };
            BotEvent::PlacementPublished {
                placement: p.id.get(),
                post: post_id.get(),
                chat_id: p.chat_id,
            }
            .emit();
            if let Some(publish) = config.and_then(|c| c.publish.as_ref())
                && let Err(e) = publish(post_id).await
            {
                // The post is stored `queued`: the scheduler's recovery sweep queues it again.
                tracing::warn!(placement = p.id.get(), post = post_id.get(), error = %e, "queueing a placement's post failed; recovery will");
            }
        }
        for p in store
            .settle_placements(CLASSIFY_DEADLINE, self.now(), PER_PASS)
            .await?
        {
            let lang = lang_of(&p);
            if p.status == PlacementStatus::Delivered {
                let reached = match p.post_id {
                    Some(post) => self.deliveries.deliveries_of_post(post).await?.len(),
                    None => 0,
                };
                BotEvent::PlacementDelivered {
                    placement: p.id.get(),
                    reached,
                }
                .emit();
                let title = p.draft.title.clone().unwrap_or_default();
                send(main, p.chat_id, t::delivered(lang, &title, reached), None).await;
            } else {
                let reason = p.reason.as_deref().unwrap_or(REASON_NOT_A_VACANCY);
                tracing::info!(
                    placement = p.id.get(),
                    reason,
                    "placement not published; refunding"
                );
                if reason == jobwire_store::REASON_NOT_CHECKED {
                    self.alerts.send(format!(
                        "jobwire: placement {} was not classified within {} h of its publishing; it is refunded",
                        p.id,
                        CLASSIFY_DEADLINE.num_hours()
                    ));
                }
            }
        }
        for id in store
            .placements_to_refund(STALE_REFUND, self.now(), PER_PASS)
            .await?
        {
            self.refund(main, id).await?;
        }
        Ok(())
    }

    /// Refunds one refused placement (claimed first, so once).
    async fn refund(
        &self,
        main: &BotRuntime,
        id: jobwire_store::PlacementId,
    ) -> Result<(), BotError> {
        let store = &self.store;
        let Some(p) = store
            .claim_placement_refund(id, STALE_REFUND, self.now())
            .await?
        else {
            return Ok(());
        };
        let Some(charge) = p.charge_id.clone() else {
            return Ok(());
        };
        let outcome = refund_star_payment_for(
            self.billing.as_ref(),
            &main.bot,
            &main.token,
            &charge,
            "placement",
            self.now(),
        )
        .await;
        let done = match &outcome {
            Ok(_) => true,
            // Refunded before (by this loop before a crash, or by support): it is over.
            Err(e) => {
                let text = e.to_string();
                text.contains("refunded before") || text.contains("CHARGE_ALREADY_REFUNDED")
            }
        };
        store.finish_placement_refund(id, done, self.now()).await?;
        if done {
            BotEvent::PlacementRefunded {
                placement: id.get(),
                charge: &charge,
            }
            .emit();
            let stars = p.stars.unwrap_or_default();
            send(
                main,
                p.chat_id,
                t::refunded(lang_of(&p), stars, p.reason.as_deref()),
                None,
            )
            .await;
        } else if let Err(e) = outcome {
            tracing::error!(placement = id.get(), error = %e, "refunding a placement failed; trying again later");
            self.alerts.send(format!(
                "jobwire: refunding placement {id} (payment {charge}) failed: {e}; it is tried again"
            ));
        }
        Ok(())
    }
}
