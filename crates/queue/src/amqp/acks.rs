//! Acknowledging in batches. A consumer's acks are noted here and sent by one task per
//! channel: a run of settled messages at the head of the channel's unacknowledged ones goes
//! as a single `basic.ack` with `multiple` (one frame for the run instead of one per
//! message, on both sides of the connection).
//!
//! What keeps this as safe as acking one by one:
//!
//! - a `multiple` ack acknowledges every unacknowledged message of the channel up to its
//!   tag, so it is only sent for a run that starts at the oldest message the consumer has
//!   not settled with the broker and contains no message still being handled; and its tag
//!   is that of a message still unacknowledged at the broker (RabbitMQ refuses a tag it
//!   does not know, closing the channel);
//! - a message settled otherwise (a nack) is marked only after its frame went out, so no
//!   `multiple` ack can cover it before;
//! - a settled message held behind one still being handled (a slow send, or a message
//!   dropped unsettled) is acknowledged on its own after [`HOLD`], so one slow message never
//!   keeps the others unacknowledged (and counting against the prefetch) for longer;
//! - when the subscription ends, or its connection is replaced, what was settled is sent
//!   before the channel closes (the task owns a handle to the channel); an ack that cannot be
//!   sent any more is logged, and the broker redelivers the message: at least once, as
//!   before, and consumers are idempotent.
//!
//! [`AmqpSettle::ack`](super::settle::AmqpSettle) returns once the ack is noted, without
//! waiting for the frame.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use lapin::options::BasicAckOptions;
use lapin::{Acker, Channel};
use tokio::sync::Notify;
use tokio::time::Instant;

use super::link::{Inner, OP_TIMEOUT};
use crate::Topic;

/// How long the task lets acks gather after the first one before it sends them.
const LINGER: Duration = Duration::from_millis(5);
/// How long a settled message may wait behind an unsettled one before it is acknowledged
/// on its own.
const HOLD: Duration = Duration::from_millis(100);

/// The acks of one consumer's channel (see the module's documentation).
pub(super) struct Acks {
    ledger: Mutex<Ledger>,
    wake: Notify,
}

#[derive(Default)]
struct Ledger {
    /// Messages handed to the consumer and not yet settled with the broker, by delivery tag
    /// (ascending: one consumer per channel, so the broker's tags arrive in order).
    open: VecDeque<(u64, Slot)>,
    /// Acks noted and not yet sent.
    noted: usize,
    /// The subscription is gone (or its connection): send what was noted and stop.
    closed: bool,
}

enum Slot {
    /// Being handled by the consumer.
    Handling,
    /// Acknowledged by the consumer; the ack is still to be sent.
    Ack { acker: Acker, since: Instant },
    /// Settled with the broker by its own frame (a nack, or an ack of its own).
    Settled,
}

/// What one round of the task sends.
#[derive(Default)]
struct Round {
    /// The last message of the run at the head, acknowledged with `multiple`.
    run: Option<Acker>,
    run_len: usize,
    /// Messages acknowledged on their own.
    single: Vec<Acker>,
}

impl Acks {
    /// The acks of a channel on the connection of `generation`; starts the task that sends
    /// them, which keeps `channel` open until it has sent the last one.
    pub(super) fn start(
        inner: Arc<Inner>,
        topic: Topic,
        generation: u64,
        channel: Channel,
    ) -> Arc<Self> {
        let acks = Arc::new(Self {
            ledger: Mutex::new(Ledger::default()),
            wake: Notify::new(),
        });
        tokio::spawn(acks.clone().send_acks(inner, topic, generation, channel));
        acks
    }

    fn ledger(&self) -> std::sync::MutexGuard<'_, Ledger> {
        self.ledger.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Notes a message handed to the consumer (in the order the broker delivered them).
    pub(super) fn received(&self, tag: u64) {
        self.ledger().open.push_back((tag, Slot::Handling));
    }

    /// Notes the consumer's ack of `tag`; `Err` gives the acker back when the ack can no
    /// longer be batched (the subscription ended), for the caller to send it itself.
    pub(super) fn ack(&self, tag: u64, acker: Acker) -> Result<(), Acker> {
        {
            let mut ledger = self.ledger();
            if ledger.closed {
                return Err(acker);
            }
            let Some(slot) = ledger.slot(tag) else {
                return Err(acker);
            };
            *slot = Slot::Ack {
                acker,
                since: Instant::now(),
            };
            ledger.noted += 1;
        }
        self.wake.notify_one();
        Ok(())
    }

    /// Notes that `tag` was settled with the broker by a frame of its own (call it after
    /// the frame went out).
    pub(super) fn settled(&self, tag: u64) {
        let mut ledger = self.ledger();
        if let Some(slot) = ledger.slot(tag) {
            *slot = Slot::Settled;
        }
        drop(ledger);
        self.wake.notify_one();
    }

    /// The subscription's consumer on this channel is gone: send what was noted and close.
    pub(super) fn close(&self) {
        self.ledger().closed = true;
        self.wake.notify_one();
    }

    async fn send_acks(
        self: Arc<Self>,
        inner: Arc<Inner>,
        topic: Topic,
        generation: u64,
        channel: Channel,
    ) {
        loop {
            let (noted, closed) = {
                let ledger = self.ledger();
                (ledger.noted, ledger.closed)
            };
            if !closed {
                if noted == 0 {
                    self.wake.notified().await;
                } else {
                    // Some wait behind a message still being handled: look again when the
                    // oldest of them may be due, or when more come.
                    let _ = tokio::time::timeout(HOLD / 2, self.wake.notified()).await;
                }
                tokio::time::sleep(LINGER).await;
            }
            let (round, closed) = {
                let mut ledger = self.ledger();
                (ledger.round(Instant::now()), ledger.closed)
            };
            if let Some(last) = round.run {
                let sent = inner.on_link(
                    generation,
                    OP_TIMEOUT,
                    last.ack(BasicAckOptions { multiple: true }),
                );
                log_outcome(topic, round.run_len, sent.await);
            }
            for acker in round.single {
                let sent = inner.on_link(
                    generation,
                    OP_TIMEOUT,
                    acker.ack(BasicAckOptions::default()),
                );
                log_outcome(topic, 1, sent.await);
            }
            if closed {
                break;
            }
        }
        drop(channel);
    }
}

impl Ledger {
    fn slot(&mut self, tag: u64) -> Option<&mut Slot> {
        let at = self.open.binary_search_by_key(&tag, |(t, _)| *t).ok()?;
        self.open.get_mut(at).map(|(_, slot)| slot)
    }

    /// Takes what is due: the run of settled messages at the head (its last ack goes with
    /// `multiple`), and the acks held behind a message still being handled for longer than
    /// [`HOLD`] (all of them once closed).
    fn round(&mut self, now: Instant) -> Round {
        let mut round = Round::default();
        while let Some((_, slot)) = self.open.front() {
            if matches!(slot, Slot::Handling) {
                break;
            }
            if let Some((_, Slot::Ack { acker, .. })) = self.open.pop_front() {
                round.run = Some(acker);
                round.run_len += 1;
                self.noted -= 1;
            }
        }
        if self.noted > 0 {
            for (_, slot) in self.open.iter_mut() {
                let due = match slot {
                    Slot::Ack { since, .. } => self.closed || now.duration_since(*since) >= HOLD,
                    _ => false,
                };
                if due && let Slot::Ack { acker, .. } = std::mem::replace(slot, Slot::Settled) {
                    round.single.push(acker);
                    self.noted -= 1;
                }
            }
        }
        round
    }
}

fn log_outcome(topic: Topic, messages: usize, outcome: Option<lapin::Result<bool>>) {
    match outcome {
        Some(Ok(true)) => {}
        None | Some(Ok(false)) => tracing::info!(
            %topic,
            messages,
            "ack not sent: the messages came on a connection that is gone; they will be redelivered"
        ),
        Some(Err(error)) => tracing::warn!(
            %topic,
            messages,
            %error,
            "ack failed; the messages will be redelivered"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn acker(tag: u64) -> Acker {
        lapin::message::Delivery::mock(tag, "".into(), "".into(), false, Vec::new()).acker
    }

    fn ledger(tags: std::ops::RangeInclusive<u64>) -> Ledger {
        let mut ledger = Ledger::default();
        for tag in tags {
            ledger.open.push_back((tag, Slot::Handling));
        }
        ledger
    }

    fn ack(ledger: &mut Ledger, tag: u64, since: Instant) {
        let slot = ledger.slot(tag).expect("a received tag");
        *slot = Slot::Ack {
            acker: acker(tag),
            since,
        };
        ledger.noted += 1;
    }

    #[test]
    fn a_run_at_the_head_goes_as_one_multiple_ack_with_its_last_tag() {
        let now = Instant::now();
        let mut l = ledger(1..=5);
        for tag in [2, 1, 3] {
            ack(&mut l, tag, now);
        }
        let round = l.round(now);
        assert!(round.run == Some(acker(3)));
        assert_eq!(round.run_len, 3);
        assert!(round.single.is_empty());
        assert_eq!(l.open.len(), 2, "4 and 5 are still being handled");
        assert_eq!(l.noted, 0);
    }

    #[test]
    fn acks_behind_a_message_still_handled_wait_then_go_on_their_own() {
        let now = Instant::now();
        let mut l = ledger(1..=4);
        ack(&mut l, 2, now);
        ack(&mut l, 3, now);
        let round = l.round(now);
        assert!(
            round.run.is_none() && round.single.is_empty(),
            "1 holds them"
        );
        let round = l.round(now + HOLD);
        assert!(round.run.is_none());
        assert!(round.single == vec![acker(2), acker(3)]);
        // 1 settles: its ack covers only itself, never the tags acknowledged on their own
        // (the broker refuses a multiple ack whose tag it no longer knows).
        ack(&mut l, 1, now + HOLD);
        let round = l.round(now + HOLD);
        assert!(round.run == Some(acker(1)));
        assert_eq!(round.run_len, 1);
        assert_eq!(l.open.len(), 1);
    }

    #[test]
    fn a_message_settled_by_its_own_frame_is_skipped_not_acknowledged() {
        let now = Instant::now();
        let mut l = ledger(1..=3);
        ack(&mut l, 3, now);
        if let Some(slot) = l.slot(2) {
            *slot = Slot::Settled; // nacked
        }
        assert!(l.round(now).run.is_none(), "1 is still being handled");
        ack(&mut l, 1, now);
        let round = l.round(now);
        assert!(round.run == Some(acker(3)));
        assert_eq!(round.run_len, 2);
        assert!(l.open.is_empty());

        // A run that ends with a nacked message is acknowledged up to its last ack.
        let mut l = ledger(1..=2);
        ack(&mut l, 1, now);
        if let Some(slot) = l.slot(2) {
            *slot = Slot::Settled;
        }
        let round = l.round(now);
        assert!(round.run == Some(acker(1)));
        assert!(l.open.is_empty());
    }

    #[test]
    fn closing_sends_every_noted_ack_at_once() {
        let now = Instant::now();
        let mut l = ledger(1..=4);
        ack(&mut l, 1, now);
        ack(&mut l, 3, now);
        l.closed = true;
        let round = l.round(now);
        assert!(round.run == Some(acker(1)));
        assert!(round.single == vec![acker(3)]);
        assert_eq!(l.noted, 0);
    }
}
