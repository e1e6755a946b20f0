//! [`Config::resolve`]: the checks parsing cannot make (references between sections,
//! tokens present, values in range), producing [`Settings`].

use std::collections::HashSet;
use std::time::Duration;

use jobwire_core::CategorySlug;
use jobwire_deliver::{BotConfig, RateLimitConfig};

use super::{
    BotRoleSettings, Category, CategorySection, ClassifierKind, Config, ConfigError,
    DEFAULT_CATEGORIES, Environment, LlmSettings, Settings, UpdatesMode, WEBHOOK_SECRET_ENV,
    invalid, redact_url,
};

impl Config {
    /// Checks the configuration and reads its secrets from `env`.
    pub fn resolve(&self, env: &dyn Environment) -> Result<Settings, ConfigError> {
        let mut bots = Vec::new();
        let mut names = HashSet::new();
        for (i, b) in self.bots.iter().enumerate() {
            let key = format!("bots[{i}].name");
            if b.name.is_empty()
                || !b
                    .name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
            {
                return Err(invalid(
                    key,
                    format!(
                        "{:?} is not a valid bot name (letters, digits, '_', '-')",
                        b.name
                    ),
                ));
            }
            if !names.insert(b.name.clone()) {
                return Err(invalid(key, format!("bot {:?} is defined twice", b.name)));
            }
            let var = b.token_env.clone().unwrap_or_else(|| {
                format!(
                    "JOBWIRE_BOT_{}_TOKEN",
                    b.name.to_ascii_uppercase().replace('-', "_")
                )
            });
            let token = env.var(&var).ok_or_else(|| {
                invalid(
                    format!("bots[{i}] ({})", b.name),
                    format!("environment variable {var} is not set (bot tokens are read only from the environment)"),
                )
            })?;
            let (id, secret) = token.split_once(':').unwrap_or(("", ""));
            if id.parse::<u64>().is_err() || secret.len() < 20 {
                return Err(invalid(
                    format!("bots[{i}] ({})", b.name),
                    format!("{var} does not look like a bot token (expected <digits>:<secret>)"),
                ));
            }
            bots.push(BotConfig {
                name: b.name.clone(),
                token: token.into(),
            });
        }

        let sections: Vec<CategorySection> = if self.categories.is_empty() {
            let bot = self
                .bots
                .first()
                .map(|b| b.name.clone())
                .unwrap_or_default();
            DEFAULT_CATEGORIES
                .iter()
                .map(|(slug, name, description)| CategorySection {
                    slug: (*slug).to_owned(),
                    name: (*name).to_owned(),
                    description: (*description).to_owned(),
                    bot: bot.clone(),
                    digest: true,
                })
                .collect()
        } else {
            self.categories.clone()
        };
        let mut categories = Vec::new();
        let mut slugs = HashSet::new();
        for (i, c) in sections.iter().enumerate() {
            let slug = CategorySlug::parse(&c.slug)
                .map_err(|e| invalid(format!("categories[{i}].slug"), e.to_string()))?;
            if !slugs.insert(slug.clone()) {
                return Err(invalid(
                    format!("categories[{i}].slug"),
                    format!("{slug} is defined twice"),
                ));
            }
            if !bots.is_empty() && !names.contains(&c.bot) {
                return Err(invalid(
                    format!("categories[{i}].bot"),
                    format!("no bot named {:?} in [[bots]]", c.bot),
                ));
            }
            categories.push(Category {
                slug,
                name: c.name.clone(),
                description: c.description.clone(),
                bot: c.bot.clone(),
                digest: c.digest,
            });
        }

        if let Some(m) = &self.mtproto {
            m.channel_refs()?;
        }
        let mut feed_names = HashSet::new();
        for (i, f) in self.feeds.iter().enumerate() {
            let key = format!("feeds[{i}] ({})", f.name);
            if f.name.trim().is_empty() || !feed_names.insert(f.name.clone()) {
                return Err(invalid(key, "needs a unique, non-empty name"));
            }
            match url::Url::parse(&f.url) {
                Ok(u) if u.scheme() == "http" || u.scheme() == "https" => {}
                _ => return Err(invalid(key, "is not an http(s) URL")),
            }
        }
        for (i, ch) in self.channels.iter().enumerate() {
            jobwire_core::rules::ChannelRules::parse(ch.include.iter(), ch.exclude.iter())
                .map_err(|e| invalid(format!("channels[{i}] ({})", ch.handle), e.to_string()))?;
        }

        let db = self.database.url.expose();
        if !(db.starts_with("sqlite:")
            || db.starts_with("postgres://")
            || db.starts_with("postgresql://"))
        {
            return Err(invalid(
                "database.url",
                format!(
                    "{:?} is not supported (use sqlite://PATH or postgres://…)",
                    redact_url(db)
                ),
            ));
        }
        let q = self.queue.url.expose();
        if !(q == "memory://" || q.starts_with("amqp://") || q.starts_with("amqps://")) {
            return Err(invalid(
                "queue.url",
                format!(
                    "{:?} is not supported (use memory:// or amqp://…)",
                    redact_url(q)
                ),
            ));
        }
        if q == "memory://" && !db.starts_with("sqlite:") {
            tracing::info!("in-process queue with a shared database: run a single process");
        }
        if let Some(r) = &self.redis
            && !(r.url.expose().starts_with("redis://") || r.url.expose().starts_with("rediss://"))
        {
            return Err(invalid(
                "redis.url",
                format!("{:?} is not a redis:// URL", r.url.to_string()),
            ));
        }
        let t = &self.telegram;
        for (key, v) in [
            ("telegram.global_per_sec", t.global_per_sec),
            ("telegram.per_chat_per_sec", t.per_chat_per_sec),
            ("telegram.per_group_per_min", t.per_group_per_min),
        ] {
            if v == 0 {
                return Err(invalid(key, "must be at least 1"));
            }
        }

        let c = &self.classifier;
        for (key, t) in [
            ("classifier.cascade_threshold", c.cascade_threshold),
            (
                "classifier.cascade_category_threshold",
                c.cascade_category_threshold,
            ),
        ] {
            if !(0.0..=1.0).contains(&t) {
                return Err(invalid(key, "must be between 0 and 1"));
            }
        }
        for (key, w) in [
            ("classifier.llm_example_weight", c.llm_example_weight),
            ("classifier.human_example_weight", c.human_example_weight),
        ] {
            if !(w.is_finite() && w >= 0.0) {
                return Err(invalid(key, "must be a number of at least 0"));
            }
        }
        let llm = match (&self.llm, self.classifier.kind) {
            (None, ClassifierKind::Llm) => {
                return Err(invalid(
                    "classifier.kind",
                    "is \"llm\" but there is no [llm] section",
                ));
            }
            (None, ClassifierKind::Cascade) => {
                return Err(invalid(
                    "classifier.kind",
                    "is \"cascade\" but there is no [llm] section",
                ));
            }
            (Some(l), kind) if kind != ClassifierKind::Local => {
                let described = categories
                    .iter()
                    .map(|c| (c.slug.clone(), c.description.clone()))
                    .collect();
                let client = l
                    .config(described, |name| env.var(name))
                    .map_err(|e| invalid(e.key, e.message))?;
                Some(LlmSettings {
                    client,
                    daily_spend_limit_usd: l.daily_spend_limit_usd,
                })
            }
            _ => None,
        };

        let bot_role = {
            let t = &self.telegram;
            if let Some(main) = &t.main_bot
                && !bots.iter().any(|b| &b.name == main)
            {
                return Err(invalid(
                    "telegram.main_bot",
                    format!("no bot named {main:?} in [[bots]]"),
                ));
            }
            let webhook = match t.updates {
                UpdatesMode::Webhook => {
                    let url = t.webhook_public_url.clone().ok_or_else(|| {
                        invalid(
                            "telegram.webhook_public_url",
                            "is needed with updates = \"webhook\"",
                        )
                    })?;
                    let secret = env.var(WEBHOOK_SECRET_ENV).ok_or_else(|| {
                        invalid(
                            "telegram.updates",
                            format!("is \"webhook\" but {WEBHOOK_SECRET_ENV} is not set"),
                        )
                    })?;
                    if secret.len() < jobwire_bot::MIN_WEBHOOK_SECRET_LEN
                        || secret.len() > 256
                        || !secret
                            .chars()
                            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
                    {
                        return Err(invalid(
                            WEBHOOK_SECRET_ENV,
                            format!(
                                "must be {}-256 characters of A-Z a-z 0-9 _ - \
                                 (e.g. `openssl rand -hex 32`)",
                                jobwire_bot::MIN_WEBHOOK_SECRET_LEN
                            ),
                        ));
                    }
                    Some((url, secret.into()))
                }
                _ => None,
            };
            BotRoleSettings {
                main_bot: t.main_bot.clone(),
                updates: t.updates,
                webhook,
                webhook_listen: t.webhook_listen,
                report_threshold: t.report_threshold,
                catch_up_hours: t.catch_up_hours,
                catch_up_max: t.catch_up_max,
            }
        };
        let known: Vec<CategorySlug> = categories.iter().map(|c| c.slug.clone()).collect();
        let billing =
            jobwire_bot::BillingConfig::from_sections(&self.billing, &self.plans, &known, |v| {
                env.var(v)
            })
            .map_err(|e| {
                invalid(
                    "billing",
                    e.to_string().trim_start_matches("bot configuration: "),
                )
            })?;
        let digest = self.digest.resolve(bot_role.main_bot.as_deref())?;
        let placements = self
            .placements
            .resolve(bot_role.main_bot.as_deref(), &known)?;
        let admin_trusted_proxies = self
            .admin
            .trusted_proxies
            .iter()
            .enumerate()
            .map(|(i, raw)| {
                crate::http::parse_trusted_proxy(raw)
                    .map_err(|e| invalid(format!("admin.trusted_proxies[{i}]"), e))
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Settings {
            admin_trusted_proxies,
            digest,
            placements,
            billing,
            bot_role,
            database_url: self.database.url.clone(),
            queue_url: self.queue.url.clone(),
            queue_prefix: self.queue.prefix.clone(),
            api_url: t.api_url.clone(),
            limits: RateLimitConfig {
                global_per_sec: t.global_per_sec,
                per_chat_per_sec: t.per_chat_per_sec,
                per_group_per_min: t.per_group_per_min,
                safety_margin: t.safety_margin,
                unlimited: t.unlimited,
            },
            request_timeout: Duration::from_secs(u64::from(t.request_timeout_secs.max(1))),
            max_in_flight: t.max_in_flight.max(1),
            classifier: self.classifier.clone(),
            llm,
            bots,
            categories,
            channels: self.channels.clone(),
            feeds: self.feeds.clone(),
            mtproto: self.mtproto.clone(),
            dedup: self.dedup.clone(),
            subscribers_file: self.subscribers_file.clone(),
            scheduler_tick: Duration::from_millis(self.scheduler.tick_ms.max(10)),
            lease: Duration::from_secs(self.scheduler.lease_secs.max(1)),
            stuck_after: Duration::from_secs(self.scheduler.stuck_after_secs.max(1)),
            redis: self.redis.clone(),
            admin_listen: self.admin.listen,
            admin_secure_cookies: self.admin.secure_cookies,
        })
    }
}
