//! The `jobwire` binary: parses the command line and calls into the `jobwire` library.

use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use clap::Parser;
use jobwire::cli::{self, Cli, Command};
use jobwire::pipeline::{self, Pipeline, Role};
use jobwire_testkit::llm::{FakeLlm, FakeLlmConfig, FaultPlan, load_oracle_jsonl};
use jobwire_testkit::telegram::{FakeTelegram, FakeTelegramConfig, RateLimits};
use tracing_subscriber::EnvFilter;

fn main() -> ExitCode {
    let cli = Cli::parse();
    let quiet = matches!(
        cli.command,
        Command::Demo { .. } | Command::Eval { .. } | Command::Bench { .. }
    );
    let filter = EnvFilter::try_from_env("RUST_LOG")
        .unwrap_or_else(|_| EnvFilter::new(if quiet { "warn" } else { "info" }));
    // JOBWIRE_LOG_FORMAT=json: one JSON object per line, with the span fields (post,
    // delivery, chat) that let one vacancy be followed through every stage.
    let json = std::env::var("JOBWIRE_LOG_FORMAT").is_ok_and(|f| f.eq_ignore_ascii_case("json"));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    if json {
        builder.json().with_current_span(true).init();
    } else {
        builder.init();
    }
    if rustls::crypto::ring::default_provider()
        .install_default()
        .is_err()
    {
        tracing::debug!("a rustls crypto provider was already installed");
    }
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(cli)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            // One line: the outermost context first, then its causes.
            eprintln!("error: {}", format!("{e:#}").replace('\n', " "));
            ExitCode::FAILURE
        }
    }
}

async fn run(cli: Cli) -> anyhow::Result<()> {
    match &cli.command {
        Command::Demo {
            posts,
            llm_url,
            llm_model,
            speed,
            json,
        } => {
            let report = jobwire::demo::run(jobwire::demo::DemoOptions {
                posts: posts.clone(),
                llm_url: llm_url.clone(),
                llm_model: llm_model.clone(),
                speed: *speed,
                ..Default::default()
            })
            .await?;
            jobwire::demo::print(&report, *json);
            Ok(())
        }
        Command::Login { account } => {
            let config = jobwire::config::Config::load(cli.config.as_deref())?;
            jobwire::telegram::login_command(
                config.mtproto.as_ref(),
                account.as_deref(),
                &jobwire::config::ProcessEnv,
            )
            .await
        }
        Command::Doctor => {
            let config = jobwire::config::Config::load(cli.config.as_deref())?;
            let settings = config.resolve(&jobwire::config::ProcessEnv)?;
            let checks = jobwire::telegram::doctor(
                &settings,
                config.mtproto.as_ref(),
                &jobwire::config::ProcessEnv,
            )
            .await;
            jobwire::telegram::print(&checks, &mut std::io::stdout().lock())?;
            let failed = checks.iter().filter(|c| !c.ok).count();
            if failed > 0 {
                anyhow::bail!("{failed} of {} checks failed", checks.len());
            }
            Ok(())
        }
        Command::Run { role, replay } => run_pipeline(&cli, role, replay.as_deref()).await,
        Command::Import { file, quiet } => import(&cli, file, !*quiet).await,
        Command::Report { hours } => {
            let settings = cli::settings(&cli)?;
            let store = pipeline::open_store(&settings).await?;
            let since = chrono::Utc::now() - chrono::Duration::hours(i64::from(*hours));
            print!(
                "{}",
                jobwire::report::daily_report(store.as_ref(), since, *hours).await?
            );
            Ok(())
        }
        Command::Retrain => {
            let settings = cli::settings(&cli)?;
            let store = pipeline::open_store(&settings).await?;
            let classifiers = pipeline::classifiers(&settings)?;
            let retrainer = pipeline::retrainer(&settings, &classifiers, store.clone());
            let report = retrainer
                .retrain_once()
                .await
                .context("retraining the local model")?;
            jobwire_classify::retrain::request_retrain(store.as_ref())
                .await
                .context("asking the classifier processes to retrain")?;
            println!(
                "trained on {} posts: {} from the dataset, {} labeled by the LLM, {} by people \
                 (model {}, {} ms); running classifiers retrain within a minute",
                report.trained_on,
                report.dataset,
                report.llm_examples,
                report.human_examples,
                report.model_id,
                report.took.as_millis()
            );
            Ok(())
        }
        Command::Eval {
            dataset,
            classifier,
            llm_url,
            llm_model,
            cv,
            seed,
            json,
            extraction,
            threshold,
        } => {
            let llm = llm_url.as_ref().map(|u| cli::llm_section(u, llm_model));
            let mut settings = cli::settings_or_default(&cli, llm)?;
            if let Some(t) = threshold {
                anyhow::ensure!(
                    (0.0..=1.0).contains(t),
                    "--threshold must be between 0 and 1"
                );
                settings.classifier.cascade_threshold = *t;
            }
            let data = jobwire::eval::load_dataset(dataset)?;
            let extraction = extraction
                .as_deref()
                .map(jobwire::eval::ExtractionTruths::load)
                .transpose()?;
            let outcome = jobwire::eval::run(
                &settings,
                &data,
                &jobwire::eval::EvalOptions {
                    classifier: *classifier,
                    cv: *cv,
                    seed: *seed,
                    extraction,
                },
            )
            .await?;
            jobwire::eval::print(&outcome, &data, *json);
            Ok(())
        }
        Command::FakeTelegram {
            listen,
            no_limits,
            global_per_sec,
            per_chat_per_sec,
            per_group_per_min,
            latency_ms,
        } => {
            let limits = (!no_limits).then_some(RateLimits {
                global_per_sec: *global_per_sec,
                per_chat_per_sec: *per_chat_per_sec,
                per_group_per_min: *per_group_per_min,
            });
            let server = FakeTelegram::start(
                *listen,
                FakeTelegramConfig {
                    limits,
                    latency: Duration::from_millis(*latency_ms),
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
            shutdown_signal().await;
            server.shutdown().await;
            Ok(())
        }
        Command::FakeLlm {
            listen,
            oracle,
            latency_ms,
            rate_429,
            rate_500,
            rate_timeout,
            rate_malformed,
            rate_off_schema,
            seed,
        } => {
            let doc = match oracle {
                Some(p) => std::fs::read_to_string(p)
                    .with_context(|| format!("--oracle: cannot read {}", p.display()))?,
                None => pipeline::SHIPPED_TRAINING_DATA.to_owned(),
            };
            let oracle = load_oracle_jsonl(&doc).context("--oracle")?;
            let server = FakeLlm::start(
                *listen,
                FakeLlmConfig {
                    oracle,
                    extractions: Vec::new(),
                    latency: Duration::from_millis(*latency_ms),
                    faults: FaultPlan {
                        rate_429: *rate_429,
                        rate_500: *rate_500,
                        rate_timeout: *rate_timeout,
                        rate_malformed: *rate_malformed,
                        rate_off_schema: *rate_off_schema,
                        ..FaultPlan::default()
                    },
                    seed: *seed,
                },
            )
            .await
            .with_context(|| format!("--listen {listen}"))?;
            println!("fake OpenAI-compatible API on {}", server.url());
            shutdown_signal().await;
            server.shutdown().await;
            Ok(())
        }
        Command::Bench { which } => jobwire::bench::run(which).await,
    }
}

async fn shutdown_signal() {
    let ctrl_c = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        let mut term =
            match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
                Ok(s) => s,
                Err(_) => {
                    let _ = ctrl_c.await;
                    return;
                }
            };
        tokio::select! {
            _ = ctrl_c => {}
            _ = term.recv() => {}
        }
    }
    #[cfg(not(unix))]
    {
        let _ = ctrl_c.await;
    }
}

async fn run_pipeline(
    cli: &Cli,
    roles: &[Role],
    replay: Option<&std::path::Path>,
) -> anyhow::Result<()> {
    let config = jobwire::config::Config::load(cli.config.as_deref())?;
    let settings = config.resolve(&jobwire::config::ProcessEnv)?;
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
    if roles.contains(&Role::Sender) {
        jobwire::preflight::check(&settings).await?;
    }
    let shutdown = tokio_util::sync::CancellationToken::new();
    let health = jobwire::server::Health::new();
    // The admin API (reports, re-labels, retrain) lives with the admin role.
    let admin = roles.contains(&Role::Admin).then(|| {
        jobwire::admin_api::AdminApi::from_env(
            settings.categories.iter().map(|c| c.slug.to_string()),
        )
    });
    match &admin {
        Some(admin) => {
            jobwire::server::serve_with_admin(
                settings.admin_listen,
                health.clone(),
                shutdown.clone(),
                admin.clone(),
            )
            .await?
        }
        None => {
            jobwire::server::serve(settings.admin_listen, health.clone(), shutdown.clone()).await?
        }
    };
    tokio::spawn({
        let shutdown = shutdown.clone();
        async move {
            shutdown_signal().await;
            tracing::info!("shutting down: finishing what is in flight");
            shutdown.cancel();
        }
    });
    // Train before connecting, so a bad training file fails at once.
    let classifiers = if roles.contains(&Role::Classifier) {
        Some(pipeline::classifiers(&settings)?)
    } else {
        None
    };
    if let Some(section) = &config.mtproto
        && let Some(alert) = jobwire::telegram::admin_alert_fn(&settings, section)?
    {
        pipeline::set_admin_alert(alert);
    }
    let Some(parts) = pipeline::connect_with_retry(&settings, &health, &shutdown).await else {
        return Ok(());
    };
    if let Some(admin) = &admin {
        admin.attach_store(parts.store.clone());
    }
    tracing::info!(?roles, classifier = ?classifiers, "starting");
    let (mut running, redrive) = Pipeline::start_roles(parts.clone(), &roles, classifiers).await?;
    tracing::info!(?redrive, "re-drove unfinished work");
    health.set("pipeline", Ok(()));
    tokio::spawn(pipeline::watch_dependencies(
        parts,
        health.clone(),
        shutdown.clone(),
    ));
    if roles.contains(&Role::Parser) && !settings.feeds.is_empty() {
        let feeds = settings.feeds.clone();
        let (intake, store, token) = (
            running.intake.clone(),
            running.store.clone(),
            running.shutdown_token(),
        );
        tokio::spawn(async move {
            if let Err(e) = jobwire::feeds::run(feeds, intake, store, token).await {
                tracing::error!(error = %format!("{e:#}"), "feeds stopped");
            }
        });
    }
    if roles.contains(&Role::Parser)
        && let Some(section) = &config.mtproto
    {
        let reader = jobwire::telegram::spawn_reader(
            &settings,
            section,
            running.intake.clone(),
            running.store.clone(),
            running.shutdown_token(),
        );
        tokio::spawn(async move {
            match reader.await {
                Ok(Ok(())) => {}
                Ok(Err(e)) => tracing::error!(error = %format!("{e:#}"), "Telegram reader stopped"),
                Err(e) => tracing::error!(error = %e, "Telegram reader panicked"),
            }
        });
    }
    if let Some(path) = replay {
        let mut source = jobwire_intake::JsonlSource::open(path, chrono::Utc::now())
            .await
            .with_context(|| format!("--replay {}", path.display()))?;
        let tally = running.intake.drain(&mut source).await?;
        tracing::info!(?tally, "replay read");
    }
    let ended = tokio::select! {
        _ = shutdown.cancelled() => None,
        r = running.stage_ended() => Some(r),
    };
    health.set("pipeline", Err("shutting down".to_owned()));
    running.shutdown().await?;
    shutdown.cancel();
    match ended {
        Some(Err(e)) => Err(e.context("a stage failed")),
        Some(Ok(())) => anyhow::bail!("a stage stopped unexpectedly"),
        None => Ok(()),
    }
}

async fn import(cli: &Cli, file: &std::path::Path, progress: bool) -> anyhow::Result<()> {
    let settings = cli::settings(cli)?;
    let store = pipeline::open_store(&settings).await?;
    // Imported posts are stored as `queued`; the next `jobwire run` re-drives them.
    let queue: Arc<dyn jobwire_queue::Queue> = Arc::new(jobwire_queue::MemoryQueue::new());
    let intake = jobwire_intake::stage::IntakeStage::new(store, queue);
    let mut source = jobwire_intake::TdesktopExport::open(file, progress)
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
    if let Some(stats) = source.stats() {
        println!("{stats:?}");
    }
    Ok(())
}
