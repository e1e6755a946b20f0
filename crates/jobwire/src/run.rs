//! The long-running commands: `jobwire run` (the roles of one process under one
//! supervisor), `jobwire import`, and the two fake servers of the test kit.

use std::path::Path;
use std::sync::Arc;

use anyhow::Context;
#[cfg(feature = "testbed")]
use jobwire_testkit::llm::{FakeLlm, FakeLlmConfig, FaultPlan, load_oracle_jsonl};
#[cfg(feature = "testbed")]
use jobwire_testkit::telegram::{FakeTelegram, FakeTelegramConfig, RateLimits};

use crate::config::{Config, ProcessEnv, Settings};
use crate::pipeline::{self, Pipeline, Role};
use crate::server::Health;

/// Resolves on SIGINT or SIGTERM.
pub async fn shutdown_signal() -> std::io::Result<()> {
    #[cfg(unix)]
    {
        let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
        tokio::select! {
            interrupted = tokio::signal::ctrl_c() => match interrupted {
                Ok(()) => Ok(()),
                // No Ctrl-C handler (no terminal, say): SIGTERM still stops the process.
                Err(_) => {
                    term.recv().await;
                    Ok(())
                }
            },
            _ = term.recv() => Ok(()),
        }
    }
    #[cfg(not(unix))]
    {
        tokio::signal::ctrl_c().await
    }
}

/// `jobwire run [--role …] [--replay FILE [--strict]]`: serves health, metrics (and the admin API with
/// the admin role), connects to the services (retrying until they answer), starts every
/// task of `roles` under one supervisor and runs until SIGTERM or until a stage fails.
pub async fn run_roles(
    config: &Config,
    roles: &[Role],
    replay: Option<Replay<'_>>,
) -> anyhow::Result<()> {
    let settings = config.resolve(&ProcessEnv)?;
    let roles: Vec<Role> = if roles.is_empty() {
        Role::ALL.to_vec()
    } else {
        roles.to_vec()
    };
    if pipeline::is_embedded(&settings) && roles.len() < Role::ALL.len() {
        anyhow::bail!(
            "--role: with queue.url = \"memory://\" every role must run in this one process; \
             configure a broker (amqp://) to split roles over processes"
        );
    }
    if replay.is_some() && !roles.contains(&Role::Parser) {
        anyhow::bail!("--replay needs the parser role");
    }
    let (bots, llm) = (
        roles.contains(&Role::Sender),
        roles.contains(&Role::Classifier),
    );
    if bots || llm {
        crate::preflight::check_for(&settings, bots, llm).await?;
    }
    let shutdown = tokio_util::sync::CancellationToken::new();
    let health = Health::new();
    // The admin role's settings; its state is built whole once the store connects.
    let admin = roles.contains(&Role::Admin).then(|| {
        let mut admin = jobwire_admin::AdminSettings::from_env(
            settings.categories.iter().map(|c| c.slug.to_string()),
        )
        .broadcasts(settings.broadcast_setup())
        .plans(settings.billing.plans.clone(), settings.billing.trial_days)
        .category_setup(jobwire_admin::CategorySetup {
            order: settings
                .categories
                .iter()
                .map(|c| c.slug.to_string())
                .collect(),
            bots: settings.bots.iter().map(|b| b.name.clone()).collect(),
        })
        .panel_options(jobwire_admin::PanelOptions {
            secure_cookies: settings.admin_secure_cookies,
        });
        let main = settings.bot_role.main_bot.as_deref();
        if let Some(bot) = settings.bots.iter().find(|b| Some(b.name.as_str()) == main) {
            admin = admin.main_bot(settings.api_url.clone(), bot.token.clone());
        }
        if let Some(llm) = &settings.llm {
            match crate::llm::PromptLab::new(llm) {
                Ok(lab) => admin = admin.prompt_lab(Arc::new(lab)),
                Err(e) => {
                    tracing::warn!(error = %e, "trying prompts in the panel is not available")
                }
            }
        }
        if !settings.admin_secure_cookies {
            tracing::warn!(
                "[admin] secure_cookies = false: the panel's session cookie is also sent over \
                 plain HTTP; keep it only where the panel cannot be reached over HTTPS"
            );
        }
        admin
    });
    let served = crate::server::serve_admin_later(
        settings.admin_listen,
        health.clone(),
        shutdown.clone(),
        admin.as_ref(),
        crate::http::HttpLimits {
            trusted_proxies: settings.admin_trusted_proxies.clone(),
            ..crate::http::HttpLimits::default()
        },
    )
    .await?;
    let admin_mount = served.mount;
    // Started before the supervisor exists (the health server answers while the services
    // are still being connected to); handed to it below, once it does.
    let signals = tokio::spawn({
        let shutdown = shutdown.clone();
        async move {
            tokio::select! {
                signal = shutdown_signal() => match signal {
                    Ok(()) => {
                        tracing::info!("shutting down: finishing what is in flight");
                        shutdown.cancel();
                    }
                    // The supervisor then stops the process (one that cannot be stopped
                    // gently is not left running).
                    Err(e) => tracing::error!(error = %e, "cannot listen for SIGTERM and Ctrl-C"),
                },
                // A stage ended the process.
                _ = shutdown.cancelled() => {}
            }
        }
    });
    // Train before connecting, so a bad training file fails at once.
    let classifiers = if roles.contains(&Role::Classifier) {
        Some(pipeline::classifiers(&settings)?)
    } else {
        None
    };
    let admin_alert = admin_alert(&settings)?;
    let Some(mut parts) = pipeline::connect_with_retry(&settings, &health, &shutdown).await else {
        return Ok(());
    };
    parts.admin_alert = admin_alert;
    parts.health = Some(health.clone());
    if let (Some(admin), Some(mount)) = (admin, &admin_mount) {
        mount.mount(admin.build(parts.store.clone()));
    }
    tracing::info!(?roles, classifier = ?classifiers, "starting");
    // Start-up writes wait for an unreachable database or broker; a stop signal ends the wait.
    let (mut running, redrive) = tokio::select! {
        started = Pipeline::start_roles(parts.clone(), &roles, classifiers) => started?,
        _ = shutdown.cancelled() => return Ok(()),
    };
    // `deliveries` is absent where a task beside the send stage re-drives them (embedded: it
    // logs its own count) or this process does not re-drive.
    tracing::info!(
        posts = redrive.posts,
        jobs = redrive.jobs,
        deliveries = redrive.deliveries,
        interrupted = redrive.interrupted,
        "re-drove unfinished work"
    );
    health.set("pipeline", Ok(()));
    let (watched, token) = (health.clone(), running.shutdown_token());
    running
        .supervisor()
        .watch("health server", served.task, &shutdown);
    running
        .supervisor()
        .watch("signal listener", signals, &shutdown);
    running.supervisor().spawn("dependency watch", async move {
        pipeline::watch_dependencies(parts, watched, token).await;
        Ok(())
    });
    if let Some(Replay { path, strict }) = replay {
        let mut source = jobwire_intake::JsonlSource::open(path, chrono::Utc::now())
            .await
            .with_context(|| format!("--replay {}", path.display()))?
            .skip_bad_lines(!strict);
        let bar = crate::progress::bar(
            if crate::progress::enabled() {
                count_lines(path).unwrap_or(0)
            } else {
                0
            },
            "replaying",
        );
        let tally = replay_all(&running.intake, &mut source, &shutdown, &bar).await;
        bar.finish_and_clear();
        let tally = tally?;
        let skipped_lines = source.skipped_lines();
        tracing::info!(?tally, skipped_lines, "replay read");
    }
    let ended = tokio::select! {
        _ = shutdown.cancelled() => None,
        e = running.stage_ended() => Some(e),
    };
    health.set("pipeline", Err("shutting down".to_owned()));
    // Also when a stage ended the process: the health server and the signal listener stop
    // with this token, and the supervisor's drain waits for them.
    shutdown.cancel();
    running.shutdown().await?;
    match ended {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// Where the stages' admin alerts go: the admin chat of `[mtproto]` (`admin_chat_id` through
/// `admin_bot`), when configured.
fn admin_alert(settings: &Settings) -> anyhow::Result<Option<jobwire_classify::cascade::AlertFn>> {
    match &settings.mtproto {
        Some(section) => crate::telegram::admin_alert_fn(settings, section),
        None => Ok(None),
    }
}

/// Takes in every post of `source`; a post that meets a database or queue error is retried
/// with backoff until it is taken in (or shutdown comes), so a replay survives an outage; one
/// the database refuses three times is kept as a dead letter and the replay goes on.
async fn replay_all(
    intake: &jobwire_intake::stage::IntakeStage,
    source: &mut jobwire_intake::JsonlSource,
    shutdown: &tokio_util::sync::CancellationToken,
    bar: &indicatif::ProgressBar,
) -> anyhow::Result<jobwire_intake::stage::IntakeTally> {
    use jobwire_intake::retry::RetryPolicy;
    use jobwire_intake::stage::TakenIn;
    let mut tally = jobwire_intake::stage::IntakeTally::default();
    while let Some(batch) = jobwire_intake::Source::next_batch(source).await? {
        for post in batch {
            let taken = intake
                .take_in(
                    "replay",
                    post,
                    false,
                    RetryPolicy::default(),
                    3,
                    shutdown.cancelled(),
                )
                .await;
            bar.inc(1);
            match taken {
                Some(Ok(TakenIn::Post(outcome))) => tally.add(&outcome),
                // Kept as a dead letter (logged by intake); the replay goes on.
                Some(Ok(TakenIn::Edit(_)) | Err(_)) => {}
                None => return Ok(tally),
            }
        }
    }
    Ok(tally)
}

/// The lines of a file (the posts of a JSONL replay, for its progress bar).
fn count_lines(path: &Path) -> std::io::Result<u64> {
    use std::io::BufRead;
    let mut reader = std::io::BufReader::new(std::fs::File::open(path)?);
    let mut lines = 0;
    loop {
        let buf = reader.fill_buf()?;
        if buf.is_empty() {
            return Ok(lines);
        }
        lines += buf.iter().filter(|&&b| b == b'\n').count() as u64;
        let n = buf.len();
        reader.consume(n);
    }
}

/// `jobwire run --replay FILE [--strict]`.
#[derive(Debug, Clone, Copy)]
pub struct Replay<'a> {
    pub path: &'a Path,
    /// Stop at the first malformed line (default: report it with its line and skip it).
    pub strict: bool,
}

/// `jobwire import FILE`: a Telegram Desktop export into the store. Imported posts are
/// stored as `queued`; the next `jobwire run` re-drives them. A malformed message is
/// reported and skipped (with `options.strict`, it ends the import); the counts are printed
/// at the end.
pub async fn import(
    settings: &Settings,
    file: &Path,
    options: jobwire_intake::ImportOptions,
) -> anyhow::Result<()> {
    let store = pipeline::open_store(settings).await?;
    let queue: Arc<dyn jobwire_queue::Queue> = Arc::new(jobwire_queue::MemoryQueue::new());
    let intake = jobwire_intake::stage::IntakeStage::new(store, queue);
    let mut source = jobwire_intake::TdesktopExport::open_with(file, options)
        .await
        .with_context(|| format!("import {}", file.display()))?;
    let tally = intake.drain(&mut source).await?;
    println!(
        "imported {}: {} posts read, {} queued for classification, {} filtered by channel rules, {} already known",
        file.display(),
        tally.read,
        tally.queued,
        tally.filtered,
        tally.duplicates
    );
    if let Some(s) = source.stats() {
        println!(
            "{} messages in {} chats: {} posts, {} service messages, {} without text, {} malformed (skipped, each reported above)",
            s.messages,
            s.chats,
            s.posts,
            s.skipped_service,
            s.skipped_without_text,
            s.skipped_malformed
        );
    }
    Ok(())
}

/// `jobwire fake-telegram`: the test kit's Bot API until SIGTERM.
#[cfg(feature = "testbed")]
pub async fn fake_telegram(
    listen: std::net::SocketAddr,
    limits: Option<RateLimits>,
    latency: std::time::Duration,
) -> anyhow::Result<()> {
    let server = FakeTelegram::start(
        listen,
        FakeTelegramConfig {
            limits,
            latency,
            ..FakeTelegramConfig::default()
        },
    )
    .await
    .with_context(|| format!("--listen {listen}"))?;
    println!(
        "fake Telegram Bot API on {} (messages: {}__testkit/messages)",
        server.url(),
        server.url()
    );
    shutdown_signal()
        .await
        .context("listening for SIGTERM and Ctrl-C")?;
    server.shutdown().await;
    Ok(())
}

/// `jobwire fake-llm`: the test kit's OpenAI-compatible API until SIGTERM, answering from
/// `oracle` (a labeled JSONL file; the shipped dataset without one).
#[cfg(feature = "testbed")]
pub async fn fake_llm(
    listen: std::net::SocketAddr,
    oracle: Option<&Path>,
    latency: std::time::Duration,
    speed: (std::time::Duration, u32),
    faults: FaultPlan,
    seed: u64,
) -> anyhow::Result<()> {
    let doc = match oracle {
        Some(p) => std::fs::read_to_string(p)
            .with_context(|| format!("--oracle: cannot read {}", p.display()))?,
        None => pipeline::SHIPPED_TRAINING_DATA.to_owned(),
    };
    let oracle = load_oracle_jsonl(&doc).context("--oracle")?;
    let server = FakeLlm::start(
        listen,
        FakeLlmConfig {
            oracle,
            extractions: Vec::new(),
            latency,
            ttft: speed.0,
            tokens_per_sec: speed.1,
            faults,
            seed,
        },
    )
    .await
    .with_context(|| format!("--listen {listen}"))?;
    println!("fake OpenAI-compatible API on {}", server.url());
    shutdown_signal()
        .await
        .context("listening for SIGTERM and Ctrl-C")?;
    server.shutdown().await;
    Ok(())
}
