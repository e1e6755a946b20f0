//! [`Config::resolve`]: the checks parsing cannot make (references between sections,
//! tokens present, values in range), producing [`Settings`].

use std::collections::HashSet;
use std::time::Duration;

use jobwire_core::CategorySlug;
use jobwire_deliver::RateLimitConfig;

use super::{
    BotRoleSettings, CategorySection, ClassifierKind, Config, ConfigError, Environment,
    FeedSection, LlmSettings, RedisSection, Settings, UpdatesMode, WEBHOOK_SECRET_ENV, invalid,
};

impl Config {
    /// Checks the configuration and reads its secrets from `env`.
    pub fn resolve(&self, env: &dyn Environment) -> Result<Settings, ConfigError> {
        let mut bots = Vec::new();
        let mut names = HashSet::new();
        for (i, b) in self.bots.iter().enumerate() {
            let bot = b.resolve(i, |var| env.var(var))?;
            if !names.insert(b.name.clone()) {
                return Err(invalid(
                    format!("bots[{i}].name"),
                    format!("bot {:?} is defined twice", b.name),
                ));
            }
            bots.push(bot);
        }
        let bot_names: Vec<&str> = self.bots.iter().map(|b| b.name.as_str()).collect();
        let categories = CategorySection::resolve_all(&self.categories, &bot_names)?;

        let mtproto = self
            .mtproto
            .as_ref()
            .map(crate::telegram::MtprotoSection::settings)
            .transpose()?;
        let feeds = FeedSection::resolve_all(&self.feeds)?;
        let channels = self
            .channels
            .iter()
            .enumerate()
            .map(|(i, ch)| ch.resolve(i))
            .collect::<Result<Vec<_>, _>>()?;

        let database_url = self.database.resolve()?;
        let queue = self.queue.resolve()?;
        if queue.is_memory() && !self.database.is_sqlite() {
            tracing::info!("in-process queue with a shared database: run a single process");
        }
        let redis = self.redis.as_ref().map(RedisSection::resolve).transpose()?;
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

        let classifier = self.classifier.resolve()?;
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
        let admin_trusted_proxies = self.admin.resolve_trusted_proxies()?;
        let scheduler = self.scheduler.resolve();
        Ok(Settings {
            admin_trusted_proxies,
            digest,
            placements,
            billing,
            bot_role,
            database_url,
            queue_url: queue.url,
            queue_prefix: queue.prefix,
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
            classifier,
            llm,
            bots,
            categories,
            channels,
            feeds,
            mtproto,
            dedup: self.dedup.resolve(),
            subscribers_file: self.subscribers_file.clone(),
            scheduler_tick: scheduler.tick,
            lease: scheduler.lease,
            stuck_after: scheduler.stuck_after,
            redis,
            admin_listen: self.admin.listen,
            admin_secure_cookies: self.admin.secure_cookies,
        })
    }
}
