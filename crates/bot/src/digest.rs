//! The daily public digest: once a day, at a configured local time, the main bot posts the
//! best vacancy of each category of the last 24 hours to a public channel, with a link to
//! the main bot. Best: no complaints, a stated budget, most subscribers matched, newest
//! ([`jobwire_core::card::Merit`]). The day is claimed in the store first, so several bot
//! processes post it once; a claim whose poster died is taken again after
//! [`STALE_CLAIM`].

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, NaiveTime, Utc};
use jobwire_core::CategorySlug;
use jobwire_core::card::{Merit, merit};
use jobwire_core::config::InvalidKey;
use serde::Deserialize;
use teloxide::prelude::*;
use teloxide::types::{ParseMode, Recipient};

use jobwire_core::clock::Clock;
use jobwire_store::{CardStore, PostStore};
use tokio_util::sync::CancellationToken;

use crate::BotError;
use crate::categories::Categories;
use crate::events::BotEvent;
use crate::telegram::{BotRuntime, describe, no_preview};
use crate::texts::{Lang, escape};

/// A claimed digest not posted within this long is claimed again.
pub const STALE_CLAIM: Duration = Duration::from_secs(600);
/// Longest title shown per vacancy, in characters.
const TITLE_CHARS: usize = 150;

/// Where and when the digest goes.
#[derive(Debug, Clone)]
pub struct DigestConfig {
    /// The public channel: `@username` or its numeric id (`-100…`). The main bot must be
    /// an administrator allowed to post there.
    pub channel: String,
    /// The local time it is posted, in `time_zone`.
    pub at: NaiveTime,
    pub time_zone: chrono_tz::Tz,
    /// The digest's language.
    pub lang: Lang,
    /// How often the time is looked at. Default 30 s.
    pub every: Duration,
}

impl DigestConfig {
    /// The local day whose digest is due at `now`, if its time has come.
    fn due_day(&self, now: DateTime<Utc>) -> Option<String> {
        let local = now.with_timezone(&self.time_zone);
        (local.time() >= self.at).then(|| local.date_naive().format("%Y-%m-%d").to_string())
    }

    fn recipient(&self) -> Recipient {
        match self.channel.parse::<i64>() {
            Ok(id) => Recipient::Id(ChatId(id)),
            Err(_) => Recipient::ChannelUsername(self.channel.clone()),
        }
    }
}

/// The daily public digest: the best vacancy of each category, posted by the main bot.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
#[serde(default)]
pub struct DigestSection {
    pub enabled: bool,
    /// The public channel: `@username` or its numeric id; the main bot posts there.
    pub channel: Option<String>,
    /// Local time of day, `HH:MM`.
    pub time: String,
    /// IANA time zone of `time`.
    pub time_zone: String,
    /// `ru` or `en`.
    pub language: String,
    /// How often the time is looked at, in seconds.
    pub check_every_secs: u64,
}

impl Default for DigestSection {
    fn default() -> Self {
        Self {
            enabled: false,
            channel: None,
            time: "09:00".into(),
            time_zone: "Europe/Moscow".into(),
            language: "ru".into(),
            check_every_secs: 30,
        }
    }
}

impl DigestSection {
    /// The checked digest settings; `None` when it is off.
    pub fn resolve(&self, main_bot: Option<&str>) -> Result<Option<DigestConfig>, InvalidKey> {
        if !self.enabled {
            return Ok(None);
        }
        if main_bot.is_none() {
            return Err(InvalidKey::new(
                "digest.enabled",
                "the digest is posted by the main bot: set telegram.main_bot",
            ));
        }
        let channel = self.channel.as_deref().map(str::trim).unwrap_or("");
        let valid_channel = (channel.len() > 5
            && channel.starts_with('@')
            && channel[1..]
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_'))
            || channel.parse::<i64>().is_ok_and(|id| id < 0);
        if !valid_channel {
            return Err(InvalidKey::new(
                "digest.channel",
                format!("{channel:?} is not a channel: use @username or its numeric id (-100…)"),
            ));
        }
        let at = NaiveTime::parse_from_str(self.time.trim(), "%H:%M").map_err(|_| {
            InvalidKey::new(
                "digest.time",
                format!("{:?} is not a time of day: use HH:MM", self.time),
            )
        })?;
        let time_zone: chrono_tz::Tz = self.time_zone.parse().map_err(|_| {
            InvalidKey::new(
                "digest.time_zone",
                format!(
                    "{:?} is not an IANA time zone (e.g. Europe/Moscow)",
                    self.time_zone
                ),
            )
        })?;
        let lang = match self.language.as_str() {
            "ru" => Lang::Ru,
            "en" => Lang::En,
            other => {
                return Err(InvalidKey::new(
                    "digest.language",
                    format!("{other:?}: use ru or en"),
                ));
            }
        };
        if self.check_every_secs == 0 {
            return Err(InvalidKey::new(
                "digest.check_every_secs",
                "must be at least 1",
            ));
        }
        Ok(Some(DigestConfig {
            channel: channel.to_owned(),
            at,
            time_zone,
            lang,
            every: Duration::from_secs(self.check_every_secs),
        }))
    }
}

/// What the digest works with.
pub(crate) struct Digest {
    /// The day's claim and the recent jobs.
    jobs: Arc<dyn CardStore>,
    /// The jobs' classifications.
    posts: Arc<dyn PostStore>,
    /// Which categories the digest has, their names, and the main bot's username.
    categories: Arc<Categories>,
    clock: Arc<dyn Clock>,
    config: DigestConfig,
}

impl Digest {
    pub(crate) fn new(
        jobs: Arc<dyn CardStore>,
        posts: Arc<dyn PostStore>,
        categories: Arc<Categories>,
        clock: Arc<dyn Clock>,
        config: DigestConfig,
    ) -> Self {
        Self {
            jobs,
            posts,
            categories,
            clock,
            config,
        }
    }

    /// Posts each day's digest once its time has come, until shutdown.
    pub(crate) async fn run(self, main: Arc<BotRuntime>, shutdown: CancellationToken) {
        let mut tick = tokio::time::interval(self.config.every);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                _ = shutdown.cancelled() => return,
                _ = tick.tick() => {}
            }
            if let Err(e) = self.post_once(&main).await {
                tracing::warn!(error = %e, "the daily digest failed; trying again later");
            }
        }
    }

    /// Posts today's digest if it is due and nobody posted it; returns whether this call did.
    async fn post_once(&self, main: &BotRuntime) -> Result<bool, BotError> {
        let config = &self.config;
        let now = self.clock.now();
        let Some(day) = config.due_day(now) else {
            return Ok(false);
        };
        let stale = now - chrono::Duration::from_std(STALE_CLAIM).unwrap_or_default();
        if !self.jobs.claim_digest(&day, now, stale).await? {
            return Ok(false);
        }
        let picks = self.best_per_category(now).await?;
        if picks.is_empty() {
            tracing::info!(day, "no vacancies for the daily digest");
            self.jobs.digest_sent(&day, 0, 0, now).await?;
            return Ok(true);
        }
        let text = self.render(config.lang, &picks);
        let jobs = u32::try_from(picks.len()).unwrap_or(u32::MAX);
        let sent = main
            .bot
            .send_message(config.recipient(), text)
            .parse_mode(ParseMode::Html)
            .link_preview_options(no_preview())
            .await;
        let message_id = match sent {
            Ok(m) => i64::from(m.id.0),
            // The post may be in the channel already: noted as posted (message unknown) rather
            // than posted again.
            Err(
                e @ (teloxide::RequestError::Network(_)
                | teloxide::RequestError::Io(_)
                | teloxide::RequestError::InvalidJson { .. }),
            ) => {
                tracing::warn!(day, error = %describe(&e, &main.token), "the digest's post may or may not have gone out; it is not posted again");
                0
            }
            Err(e) => {
                // Refused (the bot is not an admin of the channel, …): tried again after the
                // claim goes stale.
                return Err(BotError::Telegram {
                    bot: main.name.clone(),
                    message: describe(&e, &main.token),
                });
            }
        };
        // Noting it must not fail: an unnoted digest would be posted again.
        let mut attempt = 0;
        while let Err(e) = self.jobs.digest_sent(&day, message_id, jobs, now).await {
            attempt += 1;
            if attempt >= 5 {
                return Err(e.into());
            }
            tracing::warn!(day, error = %e, "noting the digest posted failed; trying again");
            tokio::time::sleep(Duration::from_secs(2)).await;
        }
        BotEvent::DigestPosted {
            day: &day,
            jobs,
            channel: &config.channel,
        }
        .emit();
        Ok(true)
    }

    /// The best job of the last 24 hours in each category, in the configured order.
    async fn best_per_category(
        &self,
        now: DateTime<Utc>,
    ) -> Result<Vec<(CategorySlug, Pick)>, BotError> {
        let since = now - chrono::Duration::hours(24);
        let mut best: HashMap<CategorySlug, Pick> = HashMap::new();
        for job in self.jobs.recent_jobs(since, None, 5000).await? {
            let Some(verdict) = self.posts.classification(job.post.id).await? else {
                continue;
            };
            let extraction = verdict.extraction.as_ref();
            let m = merit(
                job.complaints,
                extraction.is_some_and(|e| e.budget.is_some()),
                job.matched,
                job.post.received_at,
            );
            let title = extraction.and_then(|e| e.title.clone()).unwrap_or_else(|| {
                job.post
                    .text
                    .lines()
                    .map(str::trim)
                    .find(|l| !l.is_empty())
                    .unwrap_or("")
                    .to_owned()
            });
            for slug in &verdict.categories {
                if best.get(slug).is_some_and(|p| p.merit >= m) {
                    continue;
                }
                best.insert(
                    slug.clone(),
                    Pick {
                        merit: m,
                        title: title.clone(),
                        url: job.post.url.clone(),
                        channel: job
                            .post
                            .channel_title
                            .clone()
                            .unwrap_or_else(|| job.post.channel_handle.clone()),
                    },
                );
            }
        }
        Ok(self
            .categories
            .views()
            .iter()
            .filter(|v| v.digest)
            .filter_map(|v| best.remove(&v.slug).map(|p| (v.slug.clone(), p)))
            .collect())
    }

    /// The digest's HTML: a heading, one line per category, the main bot's link; kept within
    /// Telegram's 4096 characters by leaving out the last categories if it must.
    fn render(&self, lang: Lang, picks: &[(CategorySlug, Pick)]) -> String {
        let mut out = match lang {
            Lang::Ru => "🗞 <b>Лучшие вакансии за сутки</b>".to_owned(),
            Lang::En => "🗞 <b>The best jobs of the day</b>".to_owned(),
        };
        let footer = self.categories.main_username().map(|u| match lang {
            Lang::Ru => format!(
                "\n\n➡️ Все вакансии сразу после публикации — <a href=\"https://t.me/{u}?start=digest\">@{u}</a>"
            ),
            Lang::En => format!(
                "\n\n➡️ Every job the moment it is posted: <a href=\"https://t.me/{u}?start=digest\">@{u}</a>"
            ),
        });
        let budget = 3800 - footer.as_deref().map_or(0, |f| f.chars().count());
        for (slug, pick) in picks {
            let name = self
                .categories
                .names(std::slice::from_ref(slug))
                .pop()
                .unwrap_or_default();
            let title: String = pick.title.chars().take(TITLE_CHARS).collect();
            let title = escape(&title);
            let linked = match pick.url.as_deref().and_then(jobwire_core::format::safe_url) {
                Some(url) => format!("<a href=\"{}\">{title}</a>", escape(url)),
                None => title,
            };
            let entry = format!(
                "\n\n<b>{}</b>\n{linked}\n<i>{}</i>",
                escape(&name),
                escape(&pick.channel.chars().take(60).collect::<String>())
            );
            if out.chars().count() + entry.chars().count() > budget {
                break;
            }
            out.push_str(&entry);
        }
        if let Some(f) = footer {
            out.push_str(&f);
        }
        out
    }
}

/// One vacancy of the digest.
struct Pick {
    merit: Merit,
    title: String,
    url: Option<String>,
    channel: String,
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn the_digest_is_due_from_its_local_time_on() {
        let c = DigestConfig {
            channel: "@jobs_digest".into(),
            at: NaiveTime::from_hms_opt(9, 0, 0).unwrap(),
            time_zone: chrono_tz::Europe::Moscow,
            lang: Lang::Ru,
            every: Duration::from_secs(30),
        };
        // 05:59 UTC is 08:59 in Moscow: not yet; 06:00 UTC is 09:00: due, that local day.
        let t = |s: &str| DateTime::parse_from_rfc3339(s).unwrap().with_timezone(&Utc);
        assert_eq!(c.due_day(t("2026-12-03T05:59:00Z")), None);
        assert_eq!(
            c.due_day(t("2026-12-03T06:00:00Z")).as_deref(),
            Some("2026-12-03")
        );
        // 22:00 UTC is 01:00 of the next day in Moscow: that day's time has not come.
        assert_eq!(c.due_day(t("2026-12-03T22:00:00Z")), None);
        assert_eq!(
            c.due_day(t("2026-12-04T06:30:00Z")).as_deref(),
            Some("2026-12-04")
        );
        assert!(matches!(c.recipient(), Recipient::ChannelUsername(_)));
        let numeric = DigestConfig {
            channel: "-1001234".into(),
            ..c
        };
        assert!(matches!(
            numeric.recipient(),
            Recipient::Id(ChatId(-1_001_234))
        ));
    }
}
