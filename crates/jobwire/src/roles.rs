//! The roles of a process and what each one starts: one `spawn_<role>` per role, every task
//! under the process's [`Supervisor`]. Stages are started with `Supervisor::spawn` (a stage
//! that stops takes the process down with its name); sources and background jobs with
//! `Supervisor::spawn_restarting` (restarted with backoff).

use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use chrono::Utc;
use jobwire_classify::cascade::AlertFn;
use jobwire_classify::stage::ClassifyStage;
use jobwire_core::source::MIN_FEED_INTERVAL_SECS;
use jobwire_deliver::{SendStage, SendStageConfig};
use jobwire_fanout::FanoutStage;
use jobwire_intake::sources::SourcesWatcher;
use jobwire_intake::stage::IntakeStage;
use jobwire_mtproto::ChannelRef;
use jobwire_store::{FeedSettings, SourceKind, SourceSpec, Store};
use tokio_util::sync::CancellationToken;

use crate::categories::CategoryHub;
use crate::classifiers::{Classifiers, retrainer};
use crate::config::{Settings, UpdatesMode};
use crate::parts::Parts;
use crate::supervisor::Supervisor;

/// The roles a process can run. Every role except the parser can run in as many copies as
/// needed; `jobwire run` without `--role` runs them all in one process.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, clap::ValueEnum)]
pub enum Role {
    /// Reads sources and runs intake (one per Telegram account).
    Parser,
    /// Classifies queued posts.
    Classifier,
    /// Fans jobs out to subscribers; releases held deliveries and waiting posts; takes over
    /// deliveries abandoned by a dead sender.
    Dispatcher,
    /// Sends deliveries through the bots.
    Sender,
    /// Answers the bots' users: the main bot's settings and reports, the category bots'
    /// /start, /stop and /wrong (long polling: one copy; webhooks: any number).
    Bot,
    /// The admin panel and JSON API, and the daily report to the admin chat; every role
    /// serves health and metrics.
    Admin,
}

impl Role {
    pub const ALL: [Role; 6] = [
        Self::Parser,
        Self::Classifier,
        Self::Dispatcher,
        Self::Sender,
        Self::Bot,
        Self::Admin,
    ];
}

/// Seeds the sources the configuration names (`[[channels]]`, `[[feeds]]`,
/// `[mtproto] channels`) into the store. The database is the truth about sources: one
/// whose handle it holds already is left as it is (an admin's edit, or removal, survives a
/// restart); only new ones are written, and each is logged.
pub async fn seed_sources(settings: &Settings, store: &dyn Store) -> anyhow::Result<()> {
    let specs = configured_sources(settings)?;
    let mut seeded = 0;
    for spec in &specs {
        if store
            .seed_channel(spec, Utc::now())
            .await
            .with_context(|| format!("seeding source {}", spec.handle))?
        {
            seeded += 1;
            tracing::info!(source = %spec.handle, kind = spec.kind.as_str(), enabled = spec.enabled, "source seeded from the configuration");
        }
    }
    tracing::info!(
        seeded,
        kept = specs.len() - seeded,
        "configured sources seeded (the database holds the rest as the admin left them)"
    );
    Ok(())
}

/// The sources the configuration names, as specs: every `[[feeds]]` entry (with the rules
/// of the `[[channels]]` entry of the same name), every other `[[channels]]` entry (a
/// Telegram reference under its canonical handle; anything else, such as a chat title an
/// import names, as an external channel with its rules) and every `[mtproto] channels`
/// entry not named already.
pub fn configured_sources(settings: &Settings) -> anyhow::Result<Vec<SourceSpec>> {
    let mut specs: Vec<SourceSpec> = Vec::new();
    let rules_of = |handle: &str| settings.channels.iter().find(|c| c.handle == handle);
    for f in &settings.feeds {
        let ch = rules_of(&f.name);
        specs.push(SourceSpec {
            kind: SourceKind::Feed,
            handle: f.name.clone(),
            title: ch.and_then(|c| c.title.clone()),
            enabled: ch.is_none_or(|c| c.enabled),
            include: ch.map(|c| c.include.clone()).unwrap_or_default(),
            exclude: ch.map(|c| c.exclude.clone()).unwrap_or_default(),
            feed: Some(FeedSettings {
                url: f.url.clone(),
                interval_secs: f.interval.as_secs().max(MIN_FEED_INTERVAL_SECS),
                jitter_secs: f.jitter.as_secs(),
                backfill: f.backfill,
            }),
        });
    }
    for ch in &settings.channels {
        if settings.feeds.iter().any(|f| f.name == ch.handle) {
            continue;
        }
        let telegram = crate::telegram::looks_like_telegram(&ch.handle)
            .then(|| ChannelRef::parse(&ch.handle).ok())
            .flatten();
        specs.push(SourceSpec {
            kind: if telegram.is_some() {
                SourceKind::Telegram
            } else {
                SourceKind::External
            },
            handle: telegram.map_or_else(|| ch.handle.clone(), |r| r.handle()),
            title: ch.title.clone(),
            enabled: ch.enabled,
            include: ch.include.clone(),
            exclude: ch.exclude.clone(),
            feed: None,
        });
    }
    if let Some(mtproto) = &settings.mtproto {
        for r in &mtproto.channels {
            if !specs.iter().any(|s| s.handle == r.handle()) {
                specs.push(SourceSpec::telegram(r));
            }
        }
    }
    for spec in specs.iter().filter(|s| s.kind != SourceKind::External) {
        spec.check()
            .map_err(|e| anyhow::anyhow!("source {}: {e}", spec.handle))?;
    }
    Ok(specs)
}

/// The parser role's sources, as the database holds them: the watcher that follows them
/// ([`SourcesWatcher`]: one small query a second, intake's cached rules forgotten at every
/// change), the RSS/Atom feeds and the Telegram reader (`[mtproto]`), each restarted with
/// backoff when it fails (a database outage, a lost connection). Replays and imports feed
/// `intake` directly.
pub fn spawn_parser(sup: &mut Supervisor, parts: &Parts, intake: &Arc<IntakeStage>) {
    let settings = &parts.settings;
    let watcher = Arc::new(SourcesWatcher::new(parts.store.clone()).with_intake(intake.clone()));
    let sources = watcher.subscribe();
    let token = sup.shutdown_token();
    sup.spawn_restarting("sources watcher", move || {
        let (watcher, token) = (watcher.clone(), token.clone());
        async move {
            watcher.run(token.cancelled_owned()).await;
            Ok(())
        }
    });
    let (feeds, intake_feeds, store, token) = (
        sources.clone(),
        intake.clone(),
        parts.store.clone(),
        sup.shutdown_token(),
    );
    sup.spawn_restarting("feeds", move || {
        crate::feeds::run(
            feeds.clone(),
            intake_feeds.clone(),
            store.clone(),
            token.clone(),
        )
    });
    if let Some(section) = &settings.mtproto {
        let (settings, section, intake, store, token) = (
            settings.clone(),
            section.clone(),
            intake.clone(),
            parts.store.clone(),
            sup.shutdown_token(),
        );
        sup.spawn_restarting("telegram reader", move || {
            let (settings, section, intake, store, sources, token) = (
                settings.clone(),
                section.clone(),
                intake.clone(),
                store.clone(),
                sources.clone(),
                token.clone(),
            );
            async move {
                crate::telegram::run_reader(&settings, &section, intake, store, sources, token)
                    .await
            }
        });
    }
}

/// The classify stage, the retrainer of its local model and, with an LLM, what keeps the
/// LLM on the current prompt version ([`crate::llm::follow_current_prompt`]). Returns the
/// primary classifier's name.
pub fn spawn_classifier(
    sup: &mut Supervisor,
    parts: &Parts,
    classifiers: &Classifiers,
    categories: &CategoryHub,
) -> String {
    let (settings, store, queue) = (&parts.settings, &parts.store, &parts.queue);
    let admin = parts.admin_alert.clone();
    let alert: AlertFn = Arc::new(move |message: String| {
        tracing::warn!(%message, "admin alert");
        if let Some(send) = &admin {
            send(message);
        }
    });
    let (primary, fallback) = classifiers.stage_classifiers(settings, store.clone(), Some(alert));
    let retrain = Arc::new(retrainer(settings, classifiers, store.clone()));
    let token = sup.shutdown_token();
    sup.spawn_restarting("retrainer", move || {
        let (retrain, token) = (retrain.clone(), token.clone());
        async move {
            retrain.run(token).await;
            Ok(())
        }
    });
    if let Some(llm) = &classifiers.llm {
        // The prompt lists the categories' descriptions as an admin edits them.
        let described = llm.clone();
        categories.on_change(move |cats| {
            let descriptions: Vec<_> = cats
                .iter()
                .map(|c| (c.slug.clone(), c.description.clone()))
                .collect();
            described.set_category_descriptions(&descriptions);
        });
        let (store, llm, token) = (store.clone(), llm.clone(), sup.shutdown_token());
        sup.spawn_restarting("prompt version", move || {
            crate::llm::follow_current_prompt(
                store.clone(),
                llm.clone(),
                crate::llm::PROMPT_POLL,
                token.clone(),
            )
        });
    }
    let c = &settings.classifier;
    let classify = Arc::new(ClassifyStage::new(
        store.clone(),
        queue.clone(),
        primary,
        fallback,
        c.stage.clone(),
    ));
    let token = sup.shutdown_token();
    sup.spawn("classify stage", async move {
        classify.run(token).await.map_err(anyhow::Error::from)
    });
    classifiers.name()
}

/// The fan-out stage and the scheduler ([`crate::recovery`]: held deliveries, waiting posts,
/// abandoned sends, lost messages).
pub fn spawn_dispatcher(sup: &mut Supervisor, parts: &Parts, categories: &CategoryHub) {
    let (settings, store, queue) = (&parts.settings, &parts.store, &parts.queue);
    let fanout = Arc::new(
        FanoutStage::new(store.clone(), queue.clone(), categories.routes())
            .with_billing(settings.billing.enabled, parts.clock.clone()),
    );
    let token = sup.shutdown_token();
    sup.spawn("fan-out stage", async move {
        fanout.run(token).await.map_err(anyhow::Error::from)
    });
    let (store, queue, token) = (store.clone(), queue.clone(), sup.shutdown_token());
    let timing = crate::recovery::SchedulerTiming {
        tick: settings.scheduler_tick,
        lease: settings.lease,
        stuck_after: settings.stuck_after,
    };
    sup.spawn(
        "scheduler",
        crate::recovery::scheduler(store, queue, timing, token),
    );
}

/// The send stage, with limiters shared through Redis when it is configured.
pub fn spawn_sender(sup: &mut Supervisor, parts: &Parts) -> anyhow::Result<Arc<SendStage>> {
    let (settings, store, queue) = (&parts.settings, &parts.store, &parts.queue);
    let config = SendStageConfig {
        api_url: settings.api_url.clone(),
        limits: settings.limits,
        max_in_flight: settings.max_in_flight,
        request_timeout: settings.request_timeout,
        // The buttons are the bots' (they answer the taps).
        keyboard: Some(Arc::new(jobwire_bot::card_buttons::fresh_card_keyboard)),
        ..SendStageConfig::default()
    };
    let stage = match (&parts.redis, &settings.redis) {
        (Some(conn), Some(section)) => {
            let (conn, limits, prefix) =
                (conn.clone(), settings.limits, section.key_prefix.clone());
            SendStage::with_limiters(
                store.clone(),
                queue.clone(),
                &settings.bots,
                config,
                &move |bot_id| {
                    Arc::new(jobwire_deliver::RedisLimiter::new(
                        conn.clone(),
                        bot_id,
                        limits,
                        &prefix,
                    )) as Arc<dyn jobwire_deliver::Limiter>
                },
            )
        }
        _ => SendStage::new(store.clone(), queue.clone(), &settings.bots, config),
    }
    .context("starting the send stage")?;
    let stage = Arc::new(stage);
    let (sender, token) = (stage.clone(), sup.shutdown_token());
    sup.spawn("send stage", async move {
        sender.run(token).await.map_err(anyhow::Error::from)
    });
    let (sender, token) = (stage.clone(), sup.shutdown_token());
    sup.spawn("broadcasts", async move {
        sender
            .run_broadcasts(token)
            .await
            .map_err(anyhow::Error::from)
    });
    Ok(stage)
}

/// The main and category bots (nothing when updates are off or no bot is configured).
pub async fn spawn_bot(
    sup: &mut Supervisor,
    parts: &Parts,
    categories: &CategoryHub,
) -> anyhow::Result<()> {
    if parts.settings.bot_role.updates == UpdatesMode::Off {
        return Ok(());
    }
    // The bots start with the categories as the database has them and follow their edits.
    let settings = &Settings {
        categories: categories.current().to_vec(),
        ..parts.settings.clone()
    };
    let bots = start_bots(settings, categories, parts, sup.shutdown_token())
        .await
        .context("starting the bots")?;
    if let Some((bots, webhook_server)) = bots {
        if let Some(task) = webhook_server {
            let token = sup.shutdown_token();
            sup.watch("webhook server", task, &token);
        }
        let live = bots.clone();
        categories.on_change(move |cats| {
            let cats: Vec<_> = cats
                .iter()
                .map(|c| jobwire_bot::LiveCategory {
                    slug: c.slug.clone(),
                    name: c.name.clone(),
                    bot: c.bot.clone(),
                    digest: c.digest,
                })
                .collect();
            live.set_categories(&cats);
        });
        sup.spawn("bots", async move {
            bots.wait().await;
            Ok(())
        });
    }
    Ok(())
}

/// The admin role's background work: the daily report to the admin chat at 08:00 UTC
/// (when an admin chat is configured). Its HTTP API is served with `/metrics`.
pub fn spawn_admin(sup: &mut Supervisor, parts: &Parts) {
    let Some(send) = parts.admin_alert.clone() else {
        return;
    };
    let (store, token) = (parts.store.clone(), sup.shutdown_token());
    sup.spawn_restarting("daily report", move || {
        daily_report(store.clone(), send.clone(), token.clone())
    });
}

async fn daily_report(
    store: Arc<dyn Store>,
    send: AlertFn,
    shutdown: CancellationToken,
) -> anyhow::Result<()> {
    loop {
        let now = Utc::now();
        let mut next = now
            .date_naive()
            .and_hms_opt(8, 0, 0)
            .map_or(now, |t| t.and_utc());
        if next <= now {
            next += chrono::Duration::days(1);
        }
        let wait = (next - now).to_std().unwrap_or(Duration::from_secs(3600));
        tokio::select! {
            _ = shutdown.cancelled() => return Ok(()),
            _ = tokio::time::sleep(wait) => {}
        }
        match crate::report::daily_report(
            store.as_ref(),
            Utc::now() - chrono::Duration::hours(24),
            24,
        )
        .await
        {
            Ok(text) => send(text),
            Err(e) => tracing::warn!(error = %e, "could not build the daily report"),
        }
    }
}

/// Starts the main and category bots of the settings (none configured: `None`). Dialogue
/// state and update de-duplication live in Redis when it is configured (several bot-role
/// processes), else in the store and in memory. In webhook mode the webhook router is
/// served on `telegram.webhook_listen` by [`crate::http::spawn`] (its timeouts and
/// connection limit).
/// "What I missed" after a pause: the fan-out's matching, run in the bot process; the
/// deliveries it adds are sent by the scheduler's held-delivery sweep.
fn catch_up(
    settings: &Settings,
    categories: &CategoryHub,
    store: &Arc<dyn Store>,
    clock: &Arc<dyn jobwire_core::clock::Clock>,
) -> Option<jobwire_bot::CatchUp> {
    let b = &settings.bot_role;
    if b.catch_up_max == 0 || b.catch_up_hours == 0 {
        return None;
    }
    let finder = Arc::new(
        jobwire_fanout::CatchUp::new(store.clone(), categories.routes())
            .with_billing(settings.billing.enabled, clock.clone()),
    );
    Some(jobwire_bot::CatchUp {
        missed: Arc::new(move |chat, since, max| {
            let finder = finder.clone();
            Box::pin(async move {
                finder
                    .missed(chat, since, max)
                    .await
                    .map_err(|e| e.to_string())
            })
        }),
        hours: b.catch_up_hours,
        max: b.catch_up_max,
    })
}

/// Direct placements with their publishing hook: a published placement's post is queued
/// for classification like any other.
fn placements(
    settings: &Settings,
    queue: Option<Arc<dyn jobwire_queue::Queue>>,
) -> Option<jobwire_bot::PlacementsConfig> {
    let mut config = settings.placements.clone()?;
    config.publish = queue.map(|queue| {
        Arc::new(move |post: jobwire_core::PostId| {
            let queue = queue.clone();
            Box::pin(async move {
                jobwire_queue::publish(queue.as_ref(), &jobwire_queue::wire::PostReady::new(post))
                    .await
                    .map_err(|e| e.to_string())
            }) as futures::future::BoxFuture<'static, Result<(), String>>
        }) as Arc<jobwire_bot::PublishFn>
    });
    Some(config)
}

/// Starts the bots of `settings` (its categories as the database has them) over the store,
/// queue, Redis, alert and clock of `parts`.
pub async fn start_bots(
    settings: &Settings,
    categories: &CategoryHub,
    parts: &Parts,
    shutdown: CancellationToken,
) -> anyhow::Result<Option<(jobwire_bot::Bots, Option<tokio::task::JoinHandle<()>>)>> {
    let store = parts.store.clone();
    let queue = Some(parts.queue.clone());
    let redis = parts.redis.clone();
    let alert = parts.admin_alert.clone();
    let clock = parts.clock.clone();
    use jobwire_bot::{
        BotIdentity, BotOptions, Bots, BotsConfig, CategoryBot, DialogueStore, MemoryDedup,
        RedisDedup, RedisDialogues, StoreDialogues, UpdateDedup, UpdateMode,
    };
    let identity = |name: &str| {
        settings
            .bots
            .iter()
            .find(|b| b.name == name)
            .map(|b| BotIdentity::new(&b.name, b.token.expose(), settings.api_url.clone()))
    };
    let main = settings.bot_role.main_bot.as_deref().and_then(identity);
    let category_bots: Vec<CategoryBot> = settings
        .categories
        .iter()
        .filter_map(|c| {
            identity(&c.bot).map(|bot| CategoryBot {
                slug: c.slug.clone(),
                name: c.name.clone(),
                bot,
                digest: c.digest,
            })
        })
        .collect();
    // Every other configured bot runs too, so that a category can be moved to it in the
    // admin panel without a restart.
    let spare_bots: Vec<BotIdentity> = settings
        .bots
        .iter()
        .filter(|b| {
            settings.bot_role.main_bot.as_deref() != Some(b.name.as_str())
                && !settings.categories.iter().any(|c| c.bot == b.name)
        })
        .filter_map(|b| identity(&b.name))
        .collect();
    if main.is_none() && category_bots.is_empty() {
        tracing::info!("no bots configured: the bot role has nothing to do");
        return Ok(None);
    }
    let mode = match &settings.bot_role.webhook {
        Some((public_url, secret)) => UpdateMode::Webhook {
            public_url: public_url.clone(),
            secret: secret.expose().to_owned(),
        },
        None => UpdateMode::Polling,
    };
    let webhook = matches!(mode, UpdateMode::Webhook { .. });
    let (dialogues, dedup): (Arc<dyn DialogueStore>, Arc<dyn UpdateDedup>) = match redis {
        Some(conn) => {
            // Every Redis key of jobwire starts with `[redis] key_prefix`: the limiters',
            // the dialogues' and the update de-duplication's.
            let prefix = settings
                .redis
                .as_ref()
                .map_or("jobwire", |r| r.key_prefix.as_str())
                .to_owned();
            (
                Arc::new(RedisDialogues::new(conn.clone(), &prefix)),
                Arc::new(RedisDedup::new(conn, &prefix)),
            )
        }
        None => (
            Arc::new(StoreDialogues::new(store.clone())),
            Arc::new(MemoryDedup::default()),
        ),
    };
    let bots = Bots::start(
        BotsConfig {
            main,
            categories: category_bots,
            spare_bots,
            mode,
            options: BotOptions {
                catch_up: catch_up(settings, categories, &store, &clock),
                clock,
                report_threshold: settings.bot_role.report_threshold,
                ..BotOptions::default()
            },
            billing: jobwire_bot::BillingConfig {
                alert: alert.or_else(|| settings.billing.alert.clone()),
                ..settings.billing.clone()
            },
            digest: settings.digest.clone(),
            placements: placements(settings, queue),
        },
        store,
        dialogues,
        dedup,
        shutdown.clone(),
    )
    .await?;
    let mut webhook_server = None;
    if webhook {
        let listen = settings.bot_role.webhook_listen;
        let listener = tokio::net::TcpListener::bind(listen)
            .await
            .with_context(|| format!("telegram.webhook_listen: cannot bind {listen}"))?;
        webhook_server = Some(crate::http::spawn(
            listener,
            crate::http::slow_down_unauthorized(bots.webhook_router(), "webhook server"),
            crate::http::HttpLimits {
                trusted_proxies: settings.admin_trusted_proxies.clone(),
                ..crate::http::HttpLimits::default()
            },
            shutdown,
            "webhook server",
        ));
        tracing::info!(%listen, "bots take webhooks on /telegram/<bot>");
    }
    Ok(Some((bots, webhook_server)))
}
