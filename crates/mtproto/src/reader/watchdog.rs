//! The watchdog: alerts when a channel stays silent much longer than its usual gap between
//! posts, or an account receives no update at all, and polls them; and the wall clock it
//! measures silence with.

use std::time::Duration;

use chrono::{DateTime, Utc};
use tokio::time::Instant;

use super::{Closed, Health, Phase, Reader, ReaderError, human};

/// Wall-clock time for the watchdog (message dates are wall-clock): jobwire's one clock
/// trait, with the system clock in production.
pub use jobwire_core::clock::{Clock, SystemClock};

/// Wall-clock time that follows tokio's clock from a fixed start: with
/// `tokio::time::pause()`, tests control it exactly.
#[derive(Debug, Clone, Copy)]
pub struct TokioClock {
    base: DateTime<Utc>,
    start: Instant,
}

impl TokioClock {
    /// `base` is the wall time at the moment of this call.
    pub fn starting_at(base: DateTime<Utc>) -> Self {
        Self {
            base,
            start: Instant::now(),
        }
    }
}

impl Clock for TokioClock {
    fn now(&self) -> DateTime<Utc> {
        let elapsed = chrono::Duration::from_std(self.start.elapsed()).unwrap_or_default();
        self.base + elapsed
    }
}
impl Reader {
    pub(super) async fn watchdog(&mut self) -> Result<(), Result<Closed, ReaderError>> {
        let now = self.clock.now();
        let instant = Instant::now();
        let mut alerts = Vec::new();
        for (i, c) in self.channels.iter_mut().enumerate() {
            if c.phase != Phase::Joined || c.silence_alerted {
                continue;
            }
            let Some(a) = c.account else { continue };
            if self.accounts[a].health != Health::Active {
                continue;
            }
            // Silence counts from the last post, but not from before this run started.
            let since = c.last_post_date.unwrap_or(self.started).max(self.started);
            let limit = match c.gap_ewma {
                Some(g) => {
                    let scaled = Duration::from_secs_f64((g * self.config.silence_factor).max(0.0));
                    scaled.max(self.config.min_channel_silence)
                }
                None => self.config.unknown_channel_silence,
            };
            let silent = (now - since).to_std().unwrap_or_default();
            if silent > limit {
                c.silence_alerted = true;
                crate::events::silence_alert(&self.accounts[a].id);
                c.last_poll = None;
                let usual = c.gap_ewma.map_or_else(
                    || "unknown".to_string(),
                    |g| human(Duration::from_secs_f64(g.max(0.0))),
                );
                alerts.push((
                    Some(a),
                    Some(i),
                    format!(
                        "channel {} has been silent for {} (usually a post every {usual})",
                        c.reference.handle(),
                        human(silent)
                    ),
                ));
            }
        }
        for a in 0..self.accounts.len() {
            let acc = &self.accounts[a];
            if acc.health != Health::Active || acc.silence_alerted {
                continue;
            }
            let has_channels = self
                .channels
                .iter()
                .any(|c| c.account == Some(a) && c.phase == Phase::Joined);
            let quiet = instant.duration_since(acc.last_update);
            if has_channels && quiet > self.config.account_silence {
                self.accounts[a].silence_alerted = true;
                for c in &mut self.channels {
                    if c.account == Some(a) {
                        c.last_poll = None;
                    }
                }
                alerts.push((
                    Some(a),
                    None,
                    format!(
                        "account {} received no update for {}; catching up by polling",
                        self.accounts[a].id,
                        human(quiet)
                    ),
                ));
            }
        }
        for (a, c, m) in alerts {
            self.alert(a, c, m).await?;
        }
        Ok(())
    }
}
