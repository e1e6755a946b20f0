//! Catching up from per-channel cursors: where a newly joined channel starts, persisting
//! the cursor, and polling history after it when a channel has been quiet, after a restart
//! that the account's update stream does not catch up (see [`crate::ReaderStore::restart_rewind`]
//! and [`crate::Account::catches_up`]), and after a gap.

use std::sync::Arc;

use tokio::time::Instant;
use tracing::{debug, warn};

use super::{Closed, MAX_RETRIES, Next, Phase, Reader, ReaderError, err};

impl Reader {
    /// A newly joined channel: start from its newest message (handing on the newest
    /// `initial_backfill` ones).
    pub(super) async fn start_cursor(
        &mut self,
        a: usize,
        i: usize,
    ) -> Result<(), Result<Closed, ReaderError>> {
        let Some(peer) = self.channels[i].peer.clone() else {
            return Ok(());
        };
        let want = self.config.initial_backfill.max(1);
        let account = Arc::clone(&self.accounts[a].account);
        let msgs = match account.newest(&peer, want).await {
            Ok(m) => m,
            Err(e) => {
                // No cursor yet: the next poll tries again.
                if let Next::Failed(e) = self.on_error(a, e).await? {
                    warn!(channel = %self.channels[i].key, error = %e, "cannot read the newest message");
                }
                return Ok(());
            }
        };
        let newest = msgs.iter().map(|m| m.id).max().unwrap_or(0);
        if self.config.initial_backfill == 0 {
            self.set_cursor(i, newest).await?;
        } else {
            self.set_cursor(i, msgs.iter().map(|m| m.id).min().unwrap_or(1) - 1)
                .await?;
            for m in msgs {
                self.ingest(i, m).await?;
            }
        }
        Ok(())
    }

    pub(super) async fn set_cursor(
        &mut self,
        i: usize,
        id: i64,
    ) -> Result<(), Result<Closed, ReaderError>> {
        let c = &mut self.channels[i];
        if c.cursor.is_some_and(|old| old >= id) {
            return Ok(());
        }
        c.cursor = Some(id);
        self.store.set_cursor(&c.key, id).await.map_err(err)
    }

    /// Polls the joined channel of account `a` that waited longest, if one is due.
    pub(super) async fn poll_step(&mut self, a: usize) -> Result<(), Result<Closed, ReaderError>> {
        let now = Instant::now();
        let interval = self.config.poll_interval;
        let due = (0..self.channels.len())
            .filter(|&i| {
                self.channels[i].account == Some(a) && self.channels[i].phase == Phase::Joined
            })
            .filter_map(|i| {
                let c = &self.channels[i];
                let last = match (c.last_poll, c.last_live) {
                    (None, _) => return Some((None, i)),
                    (Some(p), Some(l)) => p.max(l),
                    (Some(p), None) => p,
                };
                (now.duration_since(last) >= interval).then_some((Some(last), i))
            })
            .min_by_key(|(last, _)| *last);
        let Some((_, i)) = due else {
            return Ok(());
        };
        self.accounts[a].next_poll_at = now + self.config.poll_spacing;
        let more = self.catch_up(a, i).await?;
        if more {
            // More history waits: poll this channel again at the next chance.
            self.channels[i].last_poll = None;
        }
        Ok(())
    }

    /// Fetches history after the cursor and hands it on. Returns whether a full batch came
    /// back (more may wait).
    pub(super) async fn catch_up(
        &mut self,
        a: usize,
        i: usize,
    ) -> Result<bool, Result<Closed, ReaderError>> {
        let Some(peer) = self.channels[i].peer.clone() else {
            return Ok(false);
        };
        if self.channels[i].cursor.is_none() {
            self.start_cursor(a, i).await?;
            self.channels[i].last_poll = Some(Instant::now());
            return Ok(false);
        }
        let after = self.channels[i].cursor.unwrap_or(0);
        let account = Arc::clone(&self.accounts[a].account);
        let mut tries = 0;
        let msgs = loop {
            tries += 1;
            match account
                .history_since(&peer, after, self.config.history_batch)
                .await
            {
                Ok(m) => break m,
                Err(e) => match self.on_error(a, e).await? {
                    Next::Retry if tries < MAX_RETRIES => continue,
                    Next::Retry | Next::Deferred => return Ok(false),
                    Next::Failed(e) => {
                        warn!(channel = %self.channels[i].key, error = %e, "history failed");
                        self.channels[i].last_poll = Some(Instant::now());
                        return Ok(false);
                    }
                },
            }
        };
        self.channels[i].last_poll = Some(Instant::now());
        let full = msgs.len() >= self.config.history_batch;
        let mut msgs = msgs;
        msgs.sort_by_key(|m| m.id);
        let fresh = msgs.iter().filter(|m| m.id > after).count();
        if fresh > 0 {
            debug!(channel = %self.channels[i].key, fresh, "caught up");
        }
        for m in msgs {
            self.ingest(i, m).await?;
        }
        Ok(full)
    }
}
