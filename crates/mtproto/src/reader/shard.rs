//! Sharding channels over accounts: the least-loaded usable account with room gets each
//! channel; flood waits, bans and dead sessions take an account out and fail its channels
//! over to the others.

use tokio::time::{Instant, sleep};
use tracing::{debug, info, warn};

use super::{Closed, Health, Next, Phase, Reader, ReaderError, err, human};
use crate::account::AccountError;

impl Reader {
    pub(super) fn load(&self, a: usize) -> usize {
        self.channels
            .iter()
            .filter(|c| c.account == Some(a) && c.phase.is_read())
            .count()
    }

    fn usable(&self, a: usize) -> bool {
        match self.accounts[a].health {
            Health::Active => true,
            Health::Flooded(until) => {
                until.saturating_duration_since(Instant::now()) < self.config.reassign_after_flood
            }
            Health::Dead => false,
        }
    }

    /// Gives every channel without a usable account the least-loaded account with room.
    pub(super) async fn assign_pending(&mut self) -> Result<(), Result<Closed, ReaderError>> {
        let mut unplaced = 0usize;
        for i in 0..self.channels.len() {
            if !self.channels[i].phase.is_read() {
                continue;
            }
            if let Some(a) = self.channels[i].account
                && self.usable(a)
            {
                continue;
            }
            let best = (0..self.accounts.len())
                .filter(|&a| self.usable(a) && self.load(a) < self.accounts[a].cap)
                .min_by_key(|&a| self.load(a));
            let Some(a) = best else {
                self.channels[i].account = None;
                unplaced += 1;
                continue;
            };
            let key = self.channels[i].key.clone();
            info!(channel = %key, account = %self.accounts[a].id, "channel assigned");
            self.store
                .assign(&key, &self.accounts[a].id)
                .await
                .map_err(err)?;
            let peer = self
                .store
                .cached_peer(&self.accounts[a].id, &key)
                .await
                .map_err(err)?;
            let c = &mut self.channels[i];
            c.account = Some(a);
            c.phase = Phase::Pending;
            c.peer = peer;
        }
        if unplaced > 0 {
            warn!(unplaced, "channels without an account");
        }
        Ok(())
    }
    /// Decides what an account error means: sleep and retry, defer, or a real failure.
    pub(super) async fn on_error(
        &mut self,
        a: usize,
        error: AccountError,
    ) -> Result<Next, Result<Closed, ReaderError>> {
        if let AccountError::FloodWait(d) = &error {
            self.store.flood_wait(&self.accounts[a].id, *d);
            crate::events::flood_wait(&self.accounts[a].id, *d);
        }
        match error {
            AccountError::FloodWait(d) if d <= self.config.flood_sleep_threshold => {
                debug!(account = %self.accounts[a].id, secs = d.as_secs(), "short flood wait: sleeping");
                sleep(d).await;
                Ok(Next::Retry)
            }
            AccountError::FloodWait(d) => {
                self.accounts[a].health = Health::Flooded(Instant::now() + d);
                if d >= self.config.reassign_after_flood {
                    let msg = format!(
                        "account {} is flood-limited for {}; its channels move to other accounts",
                        self.accounts[a].id,
                        human(d)
                    );
                    self.alert(Some(a), None, msg).await?;
                    self.failover(a).await?;
                } else {
                    info!(account = %self.accounts[a].id, secs = d.as_secs(), "flood wait: deferring");
                }
                Ok(Next::Deferred)
            }
            AccountError::Banned | AccountError::SessionDead => {
                if self.accounts[a].health != Health::Dead {
                    self.accounts[a].health = Health::Dead;
                    crate::events::session_up(&self.accounts[a].id, false);
                    let what = if error == AccountError::Banned {
                        "is banned"
                    } else {
                        "lost its session (revoked or logged out; run `jobwire login` again)"
                    };
                    let msg = format!(
                        "account {} {what}; its channels move to other accounts",
                        self.accounts[a].id
                    );
                    self.alert(Some(a), None, msg).await?;
                    self.failover(a).await?;
                }
                Ok(Next::Deferred)
            }
            other => Ok(Next::Failed(other)),
        }
    }

    /// Moves every channel of account `a` to other accounts.
    async fn failover(&mut self, a: usize) -> Result<(), Result<Closed, ReaderError>> {
        let mut moved = 0;
        for c in &mut self.channels {
            if c.account == Some(a) && c.phase.is_read() {
                c.account = None;
                c.phase = Phase::Pending;
                c.peer = None;
                // The next account polls what this one may have missed.
                c.resume = false;
                moved += 1;
            }
        }
        self.rebuild_peer_index();
        self.assign_pending().await?;
        let stranded = self
            .channels
            .iter()
            .filter(|c| c.account.is_none() && c.phase == Phase::Pending)
            .count();
        info!(from = %self.accounts[a].id, moved, stranded, "failover");
        if stranded > 0 {
            let msg = format!("{stranded} channels have no account left to read them");
            self.alert(None, None, msg).await?;
        }
        Ok(())
    }

    pub(super) fn rebuild_peer_index(&mut self) {
        self.by_peer = self
            .channels
            .iter()
            .enumerate()
            .filter(|(_, c)| c.phase == Phase::Joined)
            .filter_map(|(i, c)| c.peer.as_ref().map(|p| (p.id, i)))
            .collect();
    }
}
