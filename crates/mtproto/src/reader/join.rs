//! Joining channels: resolving once, joining at a paced rate (an interval plus jitter)
//! and within a daily cap per account, and reporting channels that cannot be joined.

use std::sync::Arc;
use std::time::Duration;

use rand::Rng;
use tokio::time::Instant;
use tracing::{info, warn};

use super::{Closed, Health, MAX_RETRIES, Next, Phase, Reader, ReaderError, ReaderEvent, err};
use crate::account::AccountError;

impl Reader {
    /// Joins channels of account `a`: channels with a cached, joined peer at once, one that
    /// needs Telegram when the pacing allows.
    pub(super) async fn join_step(&mut self, a: usize) -> Result<(), Result<Closed, ReaderError>> {
        loop {
            let Some(i) = (0..self.channels.len()).find(|&i| {
                self.channels[i].account == Some(a) && self.channels[i].phase == Phase::Pending
            }) else {
                return Ok(());
            };
            let cached = self.channels[i].peer.as_ref().is_some_and(|p| p.joined);
            if !cached {
                let now = Instant::now();
                let day = Duration::from_secs(24 * 3600);
                let acc = &mut self.accounts[a];
                while acc
                    .joins
                    .front()
                    .is_some_and(|t| now.duration_since(*t) >= day)
                {
                    acc.joins.pop_front();
                }
                if now < acc.next_join_at || acc.joins.len() >= self.config.max_joins_per_day {
                    return Ok(());
                }
            }
            let done = self.join_channel(a, i).await?;
            if !done || self.accounts[a].health != Health::Active {
                return Ok(());
            }
        }
    }

    /// Resolves (once) and joins channel `i` with account `a`. Returns whether the account
    /// may go on with the next channel right away (no Telegram call was needed).
    async fn join_channel(
        &mut self,
        a: usize,
        i: usize,
    ) -> Result<bool, Result<Closed, ReaderError>> {
        let account = Arc::clone(&self.accounts[a].account);
        let key = self.channels[i].key.clone();
        let reference = self.channels[i].reference.clone();
        let mut used_network = false;
        let mut peer = match self.channels[i].peer.clone() {
            Some(p) => p,
            None => {
                used_network = true;
                self.pace_join(a);
                let mut tries = 0;
                loop {
                    tries += 1;
                    match account.resolve(&reference).await {
                        Ok(p) => break p,
                        Err(e) => {
                            if !self.retry_after(a, i, e, tries).await? {
                                return Ok(false);
                            }
                        }
                    }
                }
            }
        };
        self.store
            .cache_peer(&self.accounts[a].id, &key, &peer)
            .await
            .map_err(err)?;
        self.channels[i].peer = Some(peer.clone());
        if !peer.joined {
            used_network = true;
            self.pace_join(a);
            let mut tries = 0;
            peer = loop {
                tries += 1;
                match account.join(&peer).await {
                    Ok(p) => break p,
                    Err(AccountError::ChannelsTooMuch) => {
                        let load = self.load(a).saturating_sub(1);
                        self.accounts[a].cap = load;
                        warn!(account = %self.accounts[a].id, load, "account is full");
                        self.channels[i].account = None;
                        self.assign_pending().await?;
                        if self.channels[i].account.is_none() {
                            self.join_failed(i, &AccountError::ChannelsTooMuch).await?;
                        }
                        return Ok(false);
                    }
                    Err(e) => {
                        if !self.retry_after(a, i, e, tries).await? {
                            return Ok(false);
                        }
                    }
                }
            };
            peer.joined = true;
            self.store
                .cache_peer(&self.accounts[a].id, &key, &peer)
                .await
                .map_err(err)?;
            info!(channel = %key, account = %self.accounts[a].id, "joined");
        }
        // After a clean restart, a channel whose account catches up on its own gets its
        // missed posts from the account's update stream (getChannelDifference from the
        // saved pts): its first poll waits for the poll interval, as for a channel that
        // just had a live post. Otherwise it is polled at once.
        let resumed = std::mem::take(&mut self.channels[i].resume) && account.catches_up(peer.id);
        if resumed {
            info!(channel = %key, account = %self.accounts[a].id, "left to the account's update stream to catch up");
        }
        let c = &mut self.channels[i];
        c.peer = Some(peer);
        c.phase = Phase::Joined;
        c.last_poll = resumed.then(Instant::now);
        self.rebuild_peer_index();
        if self.channels[i].cursor.is_none() {
            self.start_cursor(a, i).await?;
        }
        Ok(!used_network)
    }

    /// After a failed resolve or join (try number `tries`) of channel `i` by account `a`:
    /// whether to try again at once. A channel that cannot be joined is reported failed.
    async fn retry_after(
        &mut self,
        a: usize,
        i: usize,
        e: AccountError,
        tries: usize,
    ) -> Result<bool, Result<Closed, ReaderError>> {
        match self.on_error(a, e).await? {
            Next::Retry if tries < MAX_RETRIES => Ok(true),
            Next::Retry | Next::Deferred => Ok(false),
            Next::Failed(e) => {
                self.join_failed(i, &e).await?;
                Ok(false)
            }
        }
    }

    fn pace_join(&mut self, a: usize) {
        let jitter_ms = self.config.join_jitter.as_millis() as u64;
        let jitter = if jitter_ms > 0 {
            Duration::from_millis(rand::rng().random_range(0..=jitter_ms))
        } else {
            Duration::ZERO
        };
        let acc = &mut self.accounts[a];
        let now = Instant::now();
        acc.next_join_at = now + self.config.join_interval + jitter;
        acc.joins.push_back(now);
    }

    async fn join_failed(
        &mut self,
        i: usize,
        e: &AccountError,
    ) -> Result<(), Result<Closed, ReaderError>> {
        let c = &mut self.channels[i];
        c.phase = Phase::Failed;
        let channel = c.reference.handle();
        warn!(%channel, error = %e, "cannot join");
        self.emit(ReaderEvent::JoinFailed {
            channel,
            reason: e.to_string(),
        })
        .await
    }
}
