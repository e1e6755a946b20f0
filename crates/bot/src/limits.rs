//! The per-chat limit on reports (`/report`, `/wrong`, a reported missed vacancy): every
//! report is a row a person reviews, so one chat cannot file them without end.
//!
//! In-process (governor's GCRA, keyed by chat, shared by all the bots of a process): a chat
//! may file a burst of [`crate::BotOptions::max_reports_per_hour`] reports, and one more
//! every hour / that many after that. With several bot-role processes behind a webhook load
//! balancer, each process counts on its own.

use std::num::NonZeroU32;

use governor::{DefaultKeyedRateLimiter, Quota};

use crate::texts;
use crate::turn::Turn;

/// Reports a chat may file per hour by default.
pub const DEFAULT_REPORTS_PER_HOUR: u32 = 10;

/// Distinct users whose complaints withhold a post, by default.
pub const DEFAULT_REPORT_THRESHOLD: u32 = 3;

/// Above this many chats tracked, chats whose allowance is full again are forgotten.
const CHATS_KEPT: usize = 4096;

/// Counts each chat's reports.
#[derive(Debug)]
pub(crate) struct ReportLimiter {
    /// `None`: no limit (`max_reports_per_hour = 0`).
    limiter: Option<DefaultKeyedRateLimiter<i64>>,
}

impl ReportLimiter {
    pub(crate) fn new(per_hour: u32) -> Self {
        Self {
            limiter: NonZeroU32::new(per_hour)
                .map(|n| governor::RateLimiter::keyed(Quota::per_hour(n))),
        }
    }

    /// Takes one report from the chat's allowance; `false` when it is used up (the report
    /// must then not be filed).
    pub(crate) fn allow(&self, chat_id: i64) -> bool {
        let Some(limiter) = &self.limiter else {
            return true;
        };
        if limiter.len() > CHATS_KEPT {
            limiter.retain_recent();
        }
        limiter.check_key(&chat_id).is_ok()
    }
}

/// The report allowance of every chat, and the answer when a chat's is used up.
#[derive(Debug)]
pub(crate) struct Reports {
    limiter: ReportLimiter,
    per_hour: u32,
}

impl Reports {
    pub(crate) fn new(per_hour: u32) -> Self {
        Self {
            limiter: ReportLimiter::new(per_hour),
            per_hour,
        }
    }

    /// Takes one report from the chat's hourly allowance; when it is used up, says so and
    /// gives `false` (the report must not be filed).
    pub(crate) async fn allowed(&self, turn: &Turn<'_>) -> bool {
        if self.limiter.allow(turn.chat_id) {
            return true;
        }
        let per_hour = self.per_hour;
        tracing::info!(bot = %turn.rt.name, chat_id = turn.chat_id, per_hour, "report refused: the chat's hourly limit is used up");
        turn.send(texts::report_limited(turn.lang, per_hour), None)
            .await;
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_chat_has_its_own_allowance() {
        let l = ReportLimiter::new(3);
        assert!((0..3).all(|_| l.allow(1)));
        assert!(!l.allow(1));
        assert!(l.allow(2));
        let unlimited = ReportLimiter::new(0);
        assert!((0..100).all(|_| unlimited.allow(1)));
    }
}
