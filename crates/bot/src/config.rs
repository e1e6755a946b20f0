//! What the integrator hands to [`crate::Bots::start`].

use std::fmt;
use std::time::Duration;

use jobwire_core::CategorySlug;

use crate::BotError;

/// One Telegram bot: its configured name and its token. `Debug` hides the token.
#[derive(Clone)]
pub struct BotIdentity {
    /// The configured name (`[[bots]] name`): letters, digits, `_`, `-`. Names the webhook
    /// route (`/telegram/{name}`), the dialogue keys and the metrics label.
    pub name: String,
    /// The Bot API token (a secret: never logged).
    pub token: String,
    /// The Bot API base URL (`https://api.telegram.org/`, or the fake's URL in tests).
    pub api_url: url::Url,
}

impl BotIdentity {
    pub fn new(name: impl Into<String>, token: impl Into<String>, api_url: url::Url) -> Self {
        Self {
            name: name.into(),
            token: token.into(),
            api_url,
        }
    }

    /// The bot's numeric id, the part of the token before `:` (not a secret).
    pub fn bot_id(&self) -> u64 {
        self.token
            .split(':')
            .next()
            .and_then(|id| id.parse().ok())
            .unwrap_or(0)
    }
}

impl fmt::Debug for BotIdentity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BotIdentity")
            .field("name", &self.name)
            .field("token", &format_args!("{}:<redacted>", self.bot_id()))
            .field("api_url", &self.api_url.as_str())
            .finish()
    }
}

/// A category and the bot that delivers it. Several categories may share one bot (same
/// name and token); that bot then serves all of them.
#[derive(Debug, Clone)]
pub struct CategoryBot {
    pub slug: CategorySlug,
    /// The name subscribers see ("Веб-разработка").
    pub name: String,
    pub bot: BotIdentity,
    /// Whether the daily public digest includes it.
    pub digest: bool,
}

/// How updates reach the bots.
#[derive(Clone)]
pub enum UpdateMode {
    /// Long polling (`getUpdates`): exactly one process per token may poll.
    Polling,
    /// Telegram POSTs updates to `{public_url}/telegram/{bot name}`
    /// ([`crate::Bots::webhook_router`]); any number of processes may serve them.
    Webhook {
        /// The public base URL the router is reachable at (`https://bots.example.com/`).
        public_url: url::Url,
        /// The `secret_token` Telegram sends in `X-Telegram-Bot-Api-Secret-Token`:
        /// 1–256 characters `A-Z a-z 0-9 _ -`. A secret: `Debug` hides it.
        secret: String,
    },
}

impl fmt::Debug for UpdateMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Polling => f.write_str("Polling"),
            Self::Webhook { public_url, .. } => f
                .debug_struct("Webhook")
                .field("public_url", &public_url.as_str())
                .field("secret", &"<redacted>")
                .finish(),
        }
    }
}

/// Tuning knobs; the defaults suit production.
#[derive(Debug, Clone)]
pub struct BotOptions {
    /// Long-poll timeout of one `getUpdates` call. Default 25 s.
    pub poll_timeout: Duration,
    /// Timeout of every other Bot API call. Default 30 s.
    pub request_timeout: Duration,
    /// A webhook request is answered 200 after at most this long even if its update is
    /// still being handled (the handling goes on). Default 2 s.
    pub webhook_answer_within: Duration,
    /// Registers the command menus (`setMyCommands`, Russian and default) at start-up.
    /// Default true.
    pub register_commands: bool,
    /// Most include (or exclude) keywords per subscriber. Default 30.
    pub max_keywords: usize,
    /// Longest keyword, in characters. Default 50.
    pub max_keyword_chars: usize,
    /// Longest report text kept, in characters (longer ones are cut). Default 4000.
    pub max_report_chars: usize,
    /// Reports (`/report`, `/wrong`, a reported missed vacancy) one chat may file per hour:
    /// a burst of this many, then one more every hour / this many. A report over the limit
    /// is refused with an explanation and not stored. 0 switches the limit off. Counted per
    /// process. Default [`crate::DEFAULT_REPORTS_PER_HOUR`] (10).
    pub max_reports_per_hour: u32,
    /// Distinct users whose complaints ("Not a vacancy", "Wrong category", `/wrong`) withhold
    /// a post: it is not delivered to anyone else until an admin decides. 0: never.
    /// Default [`crate::DEFAULT_REPORT_THRESHOLD`] (3).
    pub report_threshold: u32,
    /// How often the main bot looks for category bots a user never started (a delivery was
    /// refused with "can't initiate conversation") and tells the user, once per bot, to open
    /// and start it. Default 5 s.
    pub start_notice_every: Duration,
    /// Where "now" comes from (a [`jobwire_core::clock::ManualClock`] in scripted tests).
    pub clock: std::sync::Arc<dyn jobwire_core::clock::Clock>,
    /// What "Resume" offers besides "only new": the best vacancies missed in the last
    /// `catch_up_hours`, at most `catch_up_max` of them. `None`: resuming offers nothing.
    pub catch_up: Option<CatchUp>,
}

/// Queues up to `max` of the best jobs a chat missed since a moment; returns how many (the
/// fan-out's `CatchUp::missed`, wired by the binary so the bots need no fan-out code).
pub type CatchUpFn = dyn Fn(
        i64,
        chrono::DateTime<chrono::Utc>,
        usize,
    ) -> futures::future::BoxFuture<'static, Result<usize, String>>
    + Send
    + Sync;

/// The catch-up offered on "Resume".
#[derive(Clone)]
pub struct CatchUp {
    pub missed: std::sync::Arc<CatchUpFn>,
    /// How far back "what I missed" looks. Default 12.
    pub hours: u32,
    /// The most cards it sends. Default 10.
    pub max: usize,
}

impl std::fmt::Debug for CatchUp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CatchUp")
            .field("hours", &self.hours)
            .field("max", &self.max)
            .finish_non_exhaustive()
    }
}

impl Default for BotOptions {
    fn default() -> Self {
        Self {
            poll_timeout: Duration::from_secs(25),
            request_timeout: Duration::from_secs(30),
            webhook_answer_within: Duration::from_secs(2),
            register_commands: true,
            max_keywords: 30,
            max_keyword_chars: 50,
            max_report_chars: 4000,
            max_reports_per_hour: crate::DEFAULT_REPORTS_PER_HOUR,
            report_threshold: crate::DEFAULT_REPORT_THRESHOLD,
            start_notice_every: Duration::from_secs(5),
            clock: std::sync::Arc::new(jobwire_core::clock::SystemClock),
            catch_up: None,
        }
    }
}

/// Everything the bots need to know.
#[derive(Debug, Clone)]
pub struct BotsConfig {
    /// The main bot (subscriptions and settings). May be the same bot (name and token) as
    /// a category bot; that bot then does both jobs.
    pub main: Option<BotIdentity>,
    /// The categories and their delivering bots, in the order the menu shows them.
    pub categories: Vec<CategoryBot>,
    /// Configured bots that deliver no category yet: started too, so that an admin can move
    /// a category to one of them while the bots run ([`crate::Bots::set_categories`]).
    pub spare_bots: Vec<BotIdentity>,
    pub mode: UpdateMode,
    pub options: BotOptions,
    /// Plans, payments and trials (off by default: everyone gets everything).
    pub billing: crate::billing::BillingConfig,
    /// The daily public digest, posted by the main bot; `None`: none.
    pub digest: Option<crate::digest::DigestConfig>,
    /// Employers' direct placements in the main bot; `None`: off.
    pub placements: Option<crate::placements::PlacementsConfig>,
}

fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

fn valid_token(token: &str) -> bool {
    let (id, secret) = token.split_once(':').unwrap_or(("", ""));
    !id.is_empty() && id.bytes().all(|b| b.is_ascii_digit()) && secret.len() >= 20
}

/// The shortest webhook secret accepted (Telegram allows 1 character; a short one can be
/// guessed, and a guessed secret forges updates such as `successful_payment`).
pub const MIN_WEBHOOK_SECRET_LEN: usize = 32;

/// Checks a webhook secret: Telegram's alphabet, [`MIN_WEBHOOK_SECRET_LEN`]-256 characters.
pub(crate) fn valid_secret(secret: &str) -> bool {
    (MIN_WEBHOOK_SECRET_LEN..=256).contains(&secret.len())
        && secret
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

impl BotsConfig {
    /// Checks names, tokens and the webhook settings; errors name the offending part
    /// (never a token).
    pub fn validate(&self) -> Result<(), BotError> {
        let bots = self
            .main
            .iter()
            .chain(self.categories.iter().map(|c| &c.bot))
            .chain(self.spare_bots.iter());
        let mut seen: Vec<&BotIdentity> = Vec::new();
        for b in bots {
            if !valid_name(&b.name) {
                return Err(BotError::Config(format!(
                    "{:?} is not a valid bot name (letters, digits, '_', '-')",
                    b.name
                )));
            }
            if !valid_token(&b.token) {
                return Err(BotError::Config(format!(
                    "the token of bot {:?} does not look like a bot token (<digits>:<secret>)",
                    b.name
                )));
            }
            for s in &seen {
                if s.name == b.name && s.token != b.token {
                    return Err(BotError::Config(format!(
                        "bot {:?} is given two different tokens",
                        b.name
                    )));
                }
                if s.name != b.name && s.token == b.token {
                    return Err(BotError::Config(format!(
                        "bots {:?} and {:?} share one token: give them one name",
                        s.name, b.name
                    )));
                }
            }
            seen.push(b);
        }
        if seen.is_empty() {
            return Err(BotError::Config("no bot is configured".into()));
        }
        let mut slugs = std::collections::HashSet::new();
        for c in &self.categories {
            if !slugs.insert(&c.slug) {
                return Err(BotError::Config(format!(
                    "category {} is listed twice",
                    c.slug
                )));
            }
        }
        if let UpdateMode::Webhook { public_url, secret } = &self.mode {
            if !matches!(public_url.scheme(), "http" | "https") || public_url.host().is_none() {
                return Err(BotError::Config(format!(
                    "webhook public URL {:?} is not an http(s) URL",
                    public_url.as_str()
                )));
            }
            if !valid_secret(secret) {
                return Err(BotError::Config(format!(
                    "webhook secret must be {MIN_WEBHOOK_SECRET_LEN}-256 characters of A-Z, \
                         a-z, 0-9, '_' and '-'"
                )));
            }
        }
        Ok(())
    }
}

/// The URL Telegram posts a bot's updates to: `{public_url}/telegram/{name}`.
pub(crate) fn webhook_url(public_url: &url::Url, name: &str) -> Result<url::Url, BotError> {
    let base = public_url.as_str().trim_end_matches('/');
    url::Url::parse(&format!("{base}/telegram/{name}"))
        .map_err(|e| BotError::Config(format!("webhook URL for bot {name:?}: {e}")))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn ident(name: &str, token: &str) -> BotIdentity {
        BotIdentity {
            name: name.into(),
            token: token.into(),
            api_url: url::Url::parse("http://127.0.0.1:1/").unwrap(),
        }
    }

    fn cfg(main: Option<BotIdentity>, cats: Vec<(&str, BotIdentity)>) -> BotsConfig {
        BotsConfig {
            main,
            categories: cats
                .into_iter()
                .map(|(s, b)| CategoryBot {
                    slug: CategorySlug::parse(s).unwrap(),
                    name: s.to_uppercase(),
                    bot: b,
                    digest: true,
                })
                .collect(),
            spare_bots: Vec::new(),
            mode: UpdateMode::Polling,
            options: BotOptions::default(),
            billing: crate::billing::BillingConfig::default(),
            digest: None,
            placements: None,
        }
    }

    const T1: &str = "111:AAAAAAAAAAAAAAAAAAAAAAAA";
    const T2: &str = "222:BBBBBBBBBBBBBBBBBBBBBBBB";

    #[test]
    fn validation_names_the_problem_and_hides_tokens() {
        assert!(
            cfg(Some(ident("main", T1)), vec![("web", ident("web", T2))])
                .validate()
                .is_ok()
        );
        // A bot serving several categories, and the main bot doubling as a category bot.
        assert!(
            cfg(
                Some(ident("main", T1)),
                vec![("web", ident("main", T1)), ("bots", ident("main", T1))]
            )
            .validate()
            .is_ok()
        );
        let e = cfg(Some(ident("main", T1)), vec![("web", ident("web", T1))])
            .validate()
            .unwrap_err()
            .to_string();
        assert!(e.contains("share one token"), "{e}");
        assert!(!e.contains("AAAA"), "{e}");
        let e = cfg(Some(ident("main", "123:short")), vec![])
            .validate()
            .unwrap_err()
            .to_string();
        assert!(e.contains("\"main\""), "{e}");
        assert!(cfg(None, vec![]).validate().is_err());
        assert!(cfg(Some(ident("bad name", T1)), vec![]).validate().is_err());
        let mut c = cfg(Some(ident("main", T1)), vec![]);
        c.mode = UpdateMode::Webhook {
            public_url: url::Url::parse("https://bots.example.com/base/").unwrap(),
            secret: "has space".into(),
        };
        assert!(c.validate().is_err());
        assert!(!format!("{c:?}").contains("has space"));
        assert!(!format!("{:?}", ident("main", T1)).contains("AAAA"));
    }

    #[test]
    fn webhook_urls_append_the_bot_name() {
        for base in ["https://x.example/hooks", "https://x.example/hooks/"] {
            let u = webhook_url(&url::Url::parse(base).unwrap(), "main").unwrap();
            assert_eq!(u.as_str(), "https://x.example/hooks/telegram/main");
        }
    }
}
