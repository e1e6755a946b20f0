//! Starting the bots and feeding them updates: long polling or webhooks.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::Duration;

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::routing::post;
use backon::{ExponentialBuilder, Retryable};
use jobwire_core::CategorySlug;
use jobwire_store::Store;
use subtle::ConstantTimeEq;
use teloxide::prelude::*;
use teloxide::types::{AllowedUpdate, BotCommand, UpdateId};
use teloxide::{ApiError, RequestError};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::alerts::Alerts;
use crate::billing::{Billing, BillingStores};
use crate::cards::{CardStores, Cards};
use crate::categories::{Categories, LiveCategory};
use crate::category_bot::{CategoryBotStores, CategoryBots};
use crate::config::{BotIdentity, BotsConfig, UpdateMode, webhook_url};
use crate::dedup::UpdateDedup;
use crate::dialogue::DialogueStore;
use crate::digest::Digest;
use crate::events::{BotEvent, Rejected};
use crate::languages::Languages;
use crate::limits::Reports;
use crate::menus::{MenuOptions, MenuStores, Menus};
use crate::message::update_chat;
use crate::notices::{Notices, start_notices};
use crate::payments::{FoundPayments, Reconciler, Refunds};
use crate::placements::{PlacementStores, Placements};
use crate::router::{ChatLocks, Processed, Router};
use crate::telegram::{BotRuntime, describe};
use crate::texts;
use crate::{BotError, BotOptions};

/// The header Telegram puts the webhook secret in.
pub const SECRET_HEADER: &str = "x-telegram-bot-api-secret-token";

/// The updates the bots ask Telegram for.
const ALLOWED_UPDATES: [AllowedUpdate; 4] = [
    AllowedUpdate::Message,
    AllowedUpdate::CallbackQuery,
    AllowedUpdate::MyChatMember,
    AllowedUpdate::PreCheckoutQuery,
];

/// What the runtime holds: the router and the running bots.
#[derive(Debug)]
pub(crate) struct Inner {
    router: Arc<Router>,
    bots: BTreeMap<String, Arc<BotRuntime>>,
    categories: Arc<Categories>,
    options: BotOptions,
    mode: UpdateMode,
    placements_on: bool,
    tracker: TaskTracker,
    shutdown: CancellationToken,
}

/// The running bots. Cheap to clone.
///
/// In [`UpdateMode::Polling`] each bot polls in its own task; in [`UpdateMode::Webhook`] the
/// webhooks are registered at start and updates come through [`Bots::webhook_router`],
/// which the caller mounts on its HTTP server. Either way, cancelling the `shutdown` token
/// stops taking updates; [`Bots::wait`] returns when the updates in flight are handled.
#[derive(Debug, Clone)]
pub struct Bots {
    inner: Arc<Inner>,
}

fn telegram_error(rt: &BotIdentity, e: &RequestError) -> BotError {
    BotError::Telegram {
        bot: rt.name.clone(),
        message: describe(e, &rt.token),
    }
}

fn client(timeout: Duration) -> Result<reqwest012::Client, BotError> {
    teloxide::net::default_reqwest_settings()
        .timeout(timeout)
        .build()
        .map_err(|e| BotError::Client(e.to_string()))
}

impl Bots {
    /// Checks the configuration, asks every bot who it is (`getMe`, for the `t.me` links),
    /// registers the command menus, and then polls or sets the webhooks, as `cfg.mode` says.
    ///
    /// Fails when the configuration is invalid or a bot does not answer `getMe` (a wrong
    /// token, Telegram unreachable): the caller decides whether to retry.
    pub async fn start(
        cfg: BotsConfig,
        store: Arc<dyn Store>,
        dialogues: Arc<dyn DialogueStore>,
        dedup: Arc<dyn UpdateDedup>,
        shutdown: CancellationToken,
    ) -> Result<Bots, BotError> {
        cfg.validate()?;
        let request_client = client(cfg.options.request_timeout)?;
        let poll_client = client(cfg.options.poll_timeout + Duration::from_secs(10))?;

        // One runtime per distinct bot, in first-mention order.
        let mut idents: Vec<(BotIdentity, bool, Vec<CategorySlug>)> = Vec::new();
        if let Some(main) = &cfg.main {
            idents.push((main.clone(), true, Vec::new()));
        }
        for c in &cfg.categories {
            match idents.iter_mut().find(|(i, _, _)| i.name == c.bot.name) {
                Some((_, _, cats)) => cats.push(c.slug.clone()),
                None => idents.push((c.bot.clone(), false, vec![c.slug.clone()])),
            }
        }
        for spare in &cfg.spare_bots {
            if !idents.iter().any(|(i, _, _)| i.name == spare.name) {
                idents.push((spare.clone(), false, Vec::new()));
            }
        }

        let lookups = idents.iter().map(|(ident, _, _)| {
            let bot = Bot::with_client(ident.token.clone(), request_client.clone())
                .set_api_url(ident.api_url.clone());
            async move {
                let me = bot.get_me().await.map_err(|e| telegram_error(ident, &e))?;
                Ok::<_, BotError>((bot, me.username().to_owned()))
            }
        });
        let answers = futures::future::try_join_all(lookups).await?;

        let mut bots = BTreeMap::new();
        let mut usernames: HashMap<String, String> = HashMap::new();
        for ((ident, is_main, categories), (bot, username)) in idents.into_iter().zip(answers) {
            tracing::info!(bot = %ident.name, username = %username, main = is_main, categories = categories.len(), "bot ready");
            usernames.insert(ident.name.clone(), username.clone());
            let poll_bot = Bot::with_client(ident.token.clone(), poll_client.clone())
                .set_api_url(ident.api_url.clone());
            bots.insert(
                ident.name.clone(),
                Arc::new(BotRuntime {
                    name: ident.name,
                    token: ident.token,
                    bot,
                    poll_bot,
                    username,
                    is_main,
                }),
            );
        }
        let main_name = cfg.main.as_ref().map(|m| m.name.clone());
        let live = cfg
            .categories
            .iter()
            .map(|c| LiveCategory {
                slug: c.slug.clone(),
                name: c.name.clone(),
                bot: c.bot.name.clone(),
                digest: c.digest,
            })
            .collect();

        // The shared parts, then each room with what it needs of them.
        let o = &cfg.options;
        let clock = Arc::clone(&o.clock);
        let categories = Arc::new(Categories::new(live, usernames, main_name));
        let languages = Arc::new(Languages::new(store.clone(), Arc::clone(&clock)));
        let alerts = Alerts::new(cfg.billing.alert.clone());
        let reports = Arc::new(Reports::new(o.max_reports_per_hour));
        let billing = Arc::new(Billing::new(
            BillingStores {
                billing: store.clone(),
                deliveries: store.clone(),
            },
            cfg.billing.clone(),
            Arc::clone(&categories),
            Arc::clone(&languages),
            Arc::clone(&clock),
        ));
        let placements = Arc::new(Placements::new(
            PlacementStores {
                placements: store.clone(),
                billing: store.clone(),
                deliveries: store.clone(),
            },
            Arc::clone(&dialogues),
            Arc::clone(&categories),
            cfg.placements.clone(),
            alerts.clone(),
            Arc::clone(&clock),
        ));
        let menus = Menus::new(
            MenuStores {
                subscribers: store.clone(),
                cards: store.clone(),
                learning: store.clone(),
            },
            Arc::clone(&dialogues),
            Arc::clone(&categories),
            billing.clone(),
            Arc::clone(&reports),
            MenuOptions {
                max_keywords: o.max_keywords,
                max_keyword_chars: o.max_keyword_chars,
                max_report_chars: o.max_report_chars,
                catch_up: o.catch_up.clone(),
                placements: placements.on(),
            },
            Arc::clone(&clock),
        );
        let router = Arc::new(Router {
            dedup,
            dialogues,
            languages: Arc::clone(&languages),
            alerts: alerts.clone(),
            chat_locks: ChatLocks::default(),
            menus,
            category_bots: CategoryBots::new(
                CategoryBotStores {
                    subscribers: store.clone(),
                    cards: store.clone(),
                    deliveries: store.clone(),
                    learning: store.clone(),
                },
                Arc::clone(&categories),
                reports,
                o.max_report_chars,
                o.report_threshold,
            ),
            cards: Cards::new(
                CardStores {
                    cards: store.clone(),
                    deliveries: store.clone(),
                    posts: store.clone(),
                },
                Arc::clone(&clock),
                o.report_threshold,
                o.max_report_chars,
            ),
            billing: Arc::clone(&billing),
            placements: Arc::clone(&placements),
            refunds: Refunds {
                store: store.clone(),
                clock: Arc::clone(&clock),
            },
        });
        let inner = Arc::new(Inner {
            router,
            bots,
            categories: Arc::clone(&categories),
            options: cfg.options.clone(),
            mode: cfg.mode.clone(),
            placements_on: placements.on(),
            tracker: TaskTracker::new(),
            shutdown,
        });
        let this = Bots { inner };

        if cfg.options.register_commands {
            this.register_commands().await;
        }
        if let Some(main) = this.inner.bots.values().find(|b| b.is_main).cloned() {
            let tracker = &this.inner.tracker;
            let shutdown = this.inner.shutdown.clone();
            let notices = Notices {
                store: store.clone(),
                categories: Arc::clone(&categories),
                languages,
                every: o.start_notice_every,
            };
            tracker.spawn(start_notices(notices, main.clone(), shutdown.clone()));
            if let Some(digest) = cfg.digest.clone() {
                let digest = Digest::new(
                    store.clone(),
                    store.clone(),
                    categories,
                    clock.clone(),
                    digest,
                );
                tracker.spawn(digest.run(main.clone(), shutdown.clone()));
            }
            // Also with placements off: what was paid before must still be refunded.
            tracker.spawn(Arc::clone(&placements).run(main.clone(), shutdown.clone()));
            // Reconciliation finds lost payments of subscriptions and placements alike.
            if billing.enabled() || placements.on() {
                let reconciler = Reconciler {
                    store,
                    clock,
                    alerts,
                    kinds: vec![
                        placements as Arc<dyn FoundPayments>,
                        billing.clone() as Arc<dyn FoundPayments>,
                    ],
                };
                tracker.spawn(billing_loop(billing, reconciler, main, shutdown));
            }
        }
        match &cfg.mode {
            UpdateMode::Polling => {
                for rt in this.inner.bots.values() {
                    let inner = Arc::clone(&this.inner);
                    let rt = Arc::clone(rt);
                    this.inner.tracker.spawn(poll_loop(inner, rt));
                }
            }
            UpdateMode::Webhook { .. } => this.set_webhooks().await?,
        }
        Ok(this)
    }

    /// Takes the categories as an admin edited them (names, delivering bots, digest flags),
    /// for every update handled from now on. A category moved to a bot that is not running
    /// keeps its bot until the bot role restarts with it (logged); the rest applies at once.
    pub fn set_categories(&self, categories: &[LiveCategory]) {
        self.inner.categories.set(categories);
    }

    /// `(configured name, Telegram username)` of every bot.
    pub fn usernames(&self) -> Vec<(String, String)> {
        self.inner
            .bots
            .values()
            .map(|b| (b.name.clone(), b.username.clone()))
            .collect()
    }

    /// Sets the command menus (Russian and default English). Failures are logged: the bots
    /// work without them.
    async fn register_commands(&self) {
        for rt in self.inner.bots.values() {
            let list: &[(&str, &str, &str)] = if rt.is_main {
                texts::MAIN_COMMANDS
            } else {
                texts::CATEGORY_COMMANDS
            };
            let mut commands_ru: Vec<BotCommand> = list
                .iter()
                .map(|(c, ru, _)| BotCommand::new(*c, *ru))
                .collect();
            let mut commands_en: Vec<BotCommand> = list
                .iter()
                .map(|(c, _, en)| BotCommand::new(*c, *en))
                .collect();
            if rt.is_main && self.inner.placements_on {
                let (c, ru, en) = texts::POST_COMMAND;
                commands_ru.insert(1, BotCommand::new(c, ru));
                commands_en.insert(1, BotCommand::new(c, en));
            }
            if rt.is_main && !self.inner.categories.of_bot(&rt.name).is_empty() {
                for (c, ru, en) in texts::CATEGORY_COMMANDS {
                    if !list.iter().any(|(m, _, _)| m == c) {
                        commands_ru.push(BotCommand::new(*c, *ru));
                        commands_en.push(BotCommand::new(*c, *en));
                    }
                }
            }
            let ru = rt
                .bot
                .set_my_commands(commands_ru)
                .language_code("ru")
                .await;
            let en = rt.bot.set_my_commands(commands_en).await;
            for res in [ru, en] {
                if let Err(e) = res {
                    tracing::warn!(bot = %rt.name, error = %describe(&e, &rt.token), "setting the command menu failed");
                }
            }
        }
    }

    /// Registers every bot's webhook (`setWebhook` with the URL, the secret and the allowed
    /// updates). Called by [`Bots::start`] in webhook mode; safe to call again (every copy
    /// of the role does at start-up).
    pub async fn set_webhooks(&self) -> Result<(), BotError> {
        let UpdateMode::Webhook { public_url, secret } = &self.inner.mode else {
            return Err(BotError::Config(
                "set_webhooks needs the webhook update mode".into(),
            ));
        };
        for rt in self.inner.bots.values() {
            let url = webhook_url(public_url, &rt.name)?;
            rt.bot
                .set_webhook(url.clone())
                .secret_token(secret.clone())
                .allowed_updates(ALLOWED_UPDATES)
                .await
                .map_err(|e| BotError::Telegram {
                    bot: rt.name.clone(),
                    message: describe(&e, &rt.token),
                })?;
            tracing::info!(bot = %rt.name, url = %url, "webhook set");
        }
        Ok(())
    }

    /// The webhook endpoint: `POST /telegram/{bot name}` for every bot. Checks the secret
    /// header (constant-time; 401 otherwise), parses the update (400 if it is not one),
    /// handles it and answers 200 — after at most `webhook_answer_within`, while a slow
    /// handling goes on. 404 for an unknown bot or when not in webhook mode; 503 once
    /// shutting down (Telegram retries, possibly on another copy).
    pub fn webhook_router(&self) -> axum::Router {
        axum::Router::new()
            .route("/telegram/{bot}", post(webhook))
            .with_state(Arc::clone(&self.inner))
    }

    /// Handles one update as if it had arrived for bot `bot_name` (dedup included).
    pub async fn handle_update(
        &self,
        bot_name: &str,
        update: Update,
    ) -> Result<Processed, BotError> {
        let rt = self
            .inner
            .bots
            .get(bot_name)
            .cloned()
            .ok_or_else(|| BotError::Config(format!("no bot named {bot_name:?}")))?;
        Ok(self.inner.router.process_update(&rt, update).await)
    }

    /// Waits until the shutdown token is cancelled and every poller and update in flight is
    /// done.
    pub async fn wait(&self) {
        self.inner.shutdown.cancelled().await;
        self.inner.tracker.close();
        self.inner.tracker.wait().await;
    }
}

async fn webhook(
    State(inner): State<Arc<Inner>>,
    Path(bot): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> StatusCode {
    let UpdateMode::Webhook { secret, .. } = &inner.mode else {
        return StatusCode::NOT_FOUND;
    };
    let rt = inner.bots.get(&bot).cloned();
    // The secret is checked first, so a stranger learns nothing about the bot names.
    let given = headers
        .get(SECRET_HEADER)
        .map_or(&b""[..], |v| v.as_bytes());
    if !bool::from(given.ct_eq(secret.as_bytes())) {
        let label = rt
            .as_ref()
            .map_or_else(|| "unknown".to_owned(), |r| r.name.clone());
        BotEvent::WebhookRejected {
            bot: &label,
            reason: Rejected::Secret,
            error: None,
        }
        .emit();
        return StatusCode::UNAUTHORIZED;
    }
    let Some(rt) = rt else {
        return StatusCode::NOT_FOUND;
    };
    if inner.shutdown.is_cancelled() {
        return StatusCode::SERVICE_UNAVAILABLE;
    }
    let update: Update = match serde_json::from_slice(&body) {
        Ok(u) => u,
        Err(e) => {
            BotEvent::WebhookRejected {
                bot: &rt.name,
                reason: Rejected::Body,
                error: Some(&e.to_string()),
            }
            .emit();
            return StatusCode::BAD_REQUEST;
        }
    };
    let budget = inner.options.webhook_answer_within;
    let router = Arc::clone(&inner.router);
    let task = inner
        .tracker
        .spawn(async move { router.process_update(&rt, update).await });
    // Answer quickly; a slow handling goes on in its task (and `Bots::wait` waits for it).
    let _ = tokio::time::timeout(budget, task).await;
    StatusCode::OK
}

/// The waits between failed calls to Telegram: 500 ms doubling to 10 s, without end.
fn retry_waits() -> ExponentialBuilder {
    ExponentialBuilder::new()
        .with_min_delay(Duration::from_millis(500))
        .with_max_delay(Duration::from_secs(10))
        .without_max_times()
}

/// Long-polls one bot until shutdown. Updates of one chat are handled in order, different
/// chats concurrently; the offset moves past a batch only once it is handled, and is
/// confirmed to Telegram on the way out so the next start does not see them again.
async fn poll_loop(inner: Arc<Inner>, rt: Arc<BotRuntime>) {
    let shutdown = inner.shutdown.clone();
    // A webhook set earlier makes getUpdates fail: remove it (pending updates stay).
    let delete = (|| rt.bot.delete_webhook().send())
        .retry(retry_waits())
        .notify(|e, wait| {
            tracing::warn!(bot = %rt.name, error = %describe(e, &rt.token), retry_in = ?wait, "deleteWebhook failed");
        });
    let deleted = tokio::select! {
        biased;
        () = shutdown.cancelled() => return,
        r = delete => r,
    };
    if deleted.is_err() {
        return; // Not reached: the waits never run out.
    }
    tracing::info!(bot = %rt.name, "long polling started");
    let timeout = u32::try_from(inner.options.poll_timeout.as_secs()).unwrap_or(25);
    let mut offset: Option<i32> = None;
    loop {
        // Retried until it succeeds, the waits starting over from 500 ms for each batch.
        let from = offset;
        let poll = (|| {
            let req = rt
                .poll_bot
                .get_updates()
                .timeout(timeout)
                .allowed_updates(ALLOWED_UPDATES);
            match from {
                Some(o) => req.offset(o),
                None => req,
            }
            .send()
        })
        .retry(retry_waits())
        .notify(|e, wait| {
            let conflict = matches!(e, RequestError::Api(ApiError::TerminatedByOtherGetUpdates))
                || describe(e, &rt.token).contains("Conflict");
            if conflict {
                tracing::warn!(bot = %rt.name, "another process is polling this bot (only one may; use webhooks for several copies)");
            } else {
                tracing::warn!(bot = %rt.name, error = %describe(e, &rt.token), retry_in = ?wait, "getUpdates failed");
            }
        });
        let res = tokio::select! {
            biased;
            () = shutdown.cancelled() => break,
            r = poll => r,
        };
        // An error is not reached: the waits never run out.
        let Ok(updates) = res else { break };
        if let Some(max) = updates.iter().map(|u| u.id).max() {
            offset = next_offset(max).or(offset);
        }
        handle_batch(&inner, &rt, updates).await;
    }
    if let Some(o) = offset {
        let confirm = rt.bot.get_updates().offset(o).limit(1).timeout(0).send();
        match tokio::time::timeout(Duration::from_secs(5), confirm).await {
            Ok(Ok(_)) => tracing::debug!(bot = %rt.name, offset = o, "update offset confirmed"),
            Ok(Err(e)) => {
                tracing::warn!(bot = %rt.name, error = %describe(&e, &rt.token), "could not confirm the update offset");
            }
            Err(_) => tracing::warn!(bot = %rt.name, "confirming the update offset timed out"),
        }
    }
    tracing::info!(bot = %rt.name, "long polling stopped");
}

fn next_offset(id: UpdateId) -> Option<i32> {
    i32::try_from(u64::from(id.0) + 1).ok()
}

/// Handles a batch: each chat's updates in order, chats concurrently.
async fn handle_batch(inner: &Arc<Inner>, rt: &Arc<BotRuntime>, updates: Vec<Update>) {
    let mut chats: Vec<(Option<i64>, Vec<Update>)> = Vec::new();
    for u in updates {
        let chat = update_chat(&u);
        match chats.iter_mut().find(|(c, _)| chat.is_some() && *c == chat) {
            Some((_, list)) => list.push(u),
            None => chats.push((chat, vec![u])),
        }
    }
    let runs = chats.into_iter().map(|(_, list)| {
        let router = Arc::clone(&inner.router);
        let rt = Arc::clone(rt);
        inner.tracker.spawn(async move {
            for u in list {
                router.process_update(&rt, u).await;
            }
        })
    });
    for res in futures::future::join_all(runs).await {
        if let Err(e) = res {
            tracing::error!(bot = %rt.name, error = %e, "an update handler panicked");
        }
    }
}

/// Billing's background work, one task per bot process: reminders and expiries every
/// `remind_every`, reconciliation every `reconcile_every`.
async fn billing_loop(
    billing: Arc<Billing>,
    reconciler: Reconciler,
    main: Arc<BotRuntime>,
    shutdown: CancellationToken,
) {
    let mut remind = tokio::time::interval(billing.remind_every());
    remind.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut reconcile = tokio::time::interval(billing.reconcile_every());
    reconcile.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = shutdown.cancelled() => return,
            _ = remind.tick() => {
                if let Err(e) = billing.remind_once(&main).await {
                    tracing::warn!(error = %e, "billing reminders failed; trying again");
                }
            }
            _ = reconcile.tick() => {
                match reconciler.reconcile_once(&main).await {
                    Ok(run) if run.found() > 0 => tracing::warn!(payments = run.payments, refunds = run.refunds, "reconciliation applied what the ledger lacked"),
                    Ok(_) => {}
                    Err(e) => tracing::warn!(error = %e, "reconciliation failed; trying again"),
                }
            }
        }
    }
}
