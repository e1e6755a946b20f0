//! What each command of the command line does: `main.rs` parses the line and calls
//! [`execute`].

use std::time::Duration;

use anyhow::Context;
#[cfg(feature = "testbed")]
use jobwire_testkit::llm::FaultPlan;
#[cfg(feature = "testbed")]
use jobwire_testkit::telegram::RateLimits;

use crate::cli::{self, Cli, Command};
use crate::pipeline;

/// Runs one command of the command line.
pub async fn execute(cli: Cli) -> anyhow::Result<()> {
    match &cli.command {
        #[cfg(feature = "testbed")]
        Command::Demo {
            posts,
            llm_url,
            llm_model,
            speed,
            json,
            strict,
        } => {
            let report = crate::demo::run(crate::demo::DemoOptions {
                posts: posts.clone(),
                llm_url: llm_url.clone(),
                llm_model: llm_model.clone(),
                speed: *speed,
                strict: *strict,
                ..Default::default()
            })
            .await?;
            crate::demo::print(&report, *json);
            Ok(())
        }
        Command::Login { account } => {
            let config = crate::config::Config::load(cli.config.as_deref())?;
            let mtproto = config
                .mtproto
                .as_ref()
                .map(crate::telegram::MtprotoSection::settings)
                .transpose()?;
            crate::telegram::login_command(
                mtproto.as_ref(),
                account.as_deref(),
                &crate::config::ProcessEnv,
            )
            .await
        }
        Command::Doctor => {
            let config = crate::config::Config::load(cli.config.as_deref())?;
            let settings = config.resolve(&crate::config::ProcessEnv)?;
            let checks = crate::telegram::doctor(
                &settings,
                config.mtproto.as_ref(),
                &crate::config::ProcessEnv,
            )
            .await;
            crate::telegram::print(&checks, &mut std::io::stdout().lock())?;
            let failed = checks.iter().filter(|c| !c.ok).count();
            if failed > 0 {
                anyhow::bail!("{failed} of {} checks failed", checks.len());
            }
            Ok(())
        }
        Command::Run {
            role,
            replay,
            strict,
        } => {
            let config = crate::config::Config::load(cli.config.as_deref())?;
            let replay = replay.as_deref().map(|path| crate::run::Replay {
                path,
                strict: *strict,
            });
            crate::run::run_roles(&config, role, replay).await
        }
        Command::Import {
            file,
            quiet,
            strict,
        } => {
            let options = jobwire_intake::ImportOptions {
                progress: !*quiet,
                strict: *strict,
            };
            crate::run::import(&cli::settings(&cli)?, file, options).await
        }
        Command::Report { hours } => {
            let settings = cli::settings(&cli)?;
            let store = pipeline::open_store(&settings).await?;
            let since = chrono::Utc::now() - chrono::Duration::hours(i64::from(*hours));
            print!(
                "{}",
                crate::report::daily_report(store.as_ref(), since, *hours).await?
            );
            Ok(())
        }
        Command::Admin { action } => {
            use crate::admin_accounts::Change;
            use std::io::Read as _;
            let (change, done, cli::AdminAccount { username, .. }) = match action {
                cli::AdminAction::Create { account, role } => {
                    let role = crate::admin_accounts::role(role)?;
                    (Change::Create(role), "created", account)
                }
                cli::AdminAction::SetPassword(account) => (
                    Change::SetPassword,
                    "password changed; its sessions ended",
                    account,
                ),
                cli::AdminAction::Disable { username } => {
                    crate::admin_accounts::username(username)?;
                    let settings = cli::settings(&cli)?;
                    let store = pipeline::open_store(&settings).await?;
                    let name = crate::admin_accounts::disable(store.as_ref(), username).await?;
                    println!("admin {name} disabled; its sessions ended");
                    return Ok(());
                }
                cli::AdminAction::List => {
                    let settings = cli::settings(&cli)?;
                    let store = pipeline::open_store(&settings).await?;
                    print!("{}", crate::admin_accounts::list(store.as_ref()).await?);
                    return Ok(());
                }
            };
            // Checked before anything is read or opened.
            crate::admin_accounts::username(username)?;
            // A terminal is asked without echo; a pipe is read to its end (one line).
            let stdin = std::io::stdin();
            let input = if std::io::IsTerminal::is_terminal(&stdin) {
                eprint!("Password for {}: ", username.trim());
                crate::telegram::read_hidden(&mut stdin.lock(), &stdin)
                    .context("reading the password")?
            } else {
                let mut input = String::new();
                stdin
                    .take(64 * 1024)
                    .read_to_string(&mut input)
                    .context("reading the password from standard input")?;
                input
            };
            let password = crate::admin_accounts::password_from_input(&input)?;
            let settings = cli::settings(&cli)?;
            let store = pipeline::open_store(&settings).await?;
            let name =
                crate::admin_accounts::apply(store.as_ref(), change, username, password).await?;
            println!("admin {name} {done}");
            Ok(())
        }
        Command::Broadcast { action } => {
            let settings = cli::settings(&cli)?;
            let store = pipeline::open_store(&settings).await?;
            broadcast_command(&settings, &store, action).await
        }
        Command::Retrain => {
            let settings = cli::settings(&cli)?;
            let store = pipeline::open_store(&settings).await?;
            let classifiers = pipeline::classifiers(&settings)?;
            let retrainer = pipeline::retrainer(&settings, &classifiers, store.clone());
            let working = crate::progress::counter("retraining the local model");
            let report = retrainer.retrain_once().await;
            working.finish_and_clear();
            let report = report.context("retraining the local model")?;
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
            category_threshold,
            group_by_channel,
            model,
            extra_training,
            simulate_learning,
            retrain_every,
            csv,
            plot,
        } => {
            let llm = llm_url.as_ref().map(|u| cli::llm_section(u, llm_model));
            let mut settings = cli::settings_or_default(&cli, llm)?;
            if let Some(t) = threshold {
                anyhow::ensure!(
                    (0.0..=1.0).contains(t),
                    "--threshold must be between 0 and 1"
                );
                settings.classifier.cascade.threshold = *t;
            }
            if let Some(t) = category_threshold {
                anyhow::ensure!(
                    (0.0..=1.0).contains(t),
                    "--category-threshold must be between 0 and 1"
                );
                settings.classifier.cascade.category_threshold = *t;
            }
            let data = crate::eval::load_dataset(dataset)?;
            if *simulate_learning {
                return crate::eval::simulate(
                    &settings,
                    &data,
                    &crate::eval::SimulateOptions {
                        every: *retrain_every,
                        seed: *seed,
                        csv: csv.clone(),
                        plot: plot.clone(),
                        json: *json,
                    },
                )
                .await;
            }
            let extra = match extra_training {
                Some(path) => crate::eval::load_dataset(path)
                    .with_context(|| format!("--extra-training {}", path.display()))?,
                None => Vec::new(),
            };
            let extraction = extraction
                .as_deref()
                .map(crate::eval::ExtractionTruths::load)
                .transpose()?;
            let outcome = crate::eval::run(
                &settings,
                &data,
                &crate::eval::EvalOptions {
                    classifier: *classifier,
                    cv: *cv,
                    seed: *seed,
                    extraction,
                    model: *model,
                    extra,
                    folds: if *group_by_channel {
                        jobwire_classify::eval::FoldsBy::Channel
                    } else {
                        jobwire_classify::eval::FoldsBy::Post
                    },
                },
            )
            .await?;
            crate::eval::print(&outcome, &data, *json);
            Ok(())
        }
        #[cfg(feature = "testbed")]
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
            crate::run::fake_telegram(*listen, limits, Duration::from_millis(*latency_ms)).await
        }
        #[cfg(feature = "testbed")]
        Command::FakeLlm {
            listen,
            oracle,
            latency_ms,
            ttft_ms,
            tokens_per_sec,
            rate_429,
            rate_500,
            rate_timeout,
            rate_malformed,
            rate_off_schema,
            seed,
        } => {
            let faults = FaultPlan {
                rate_429: *rate_429,
                rate_500: *rate_500,
                rate_timeout: *rate_timeout,
                rate_malformed: *rate_malformed,
                rate_off_schema: *rate_off_schema,
                ..FaultPlan::default()
            };
            let latency = Duration::from_millis(*latency_ms);
            let speed = (Duration::from_millis(*ttft_ms), *tokens_per_sec);
            crate::run::fake_llm(*listen, oracle.as_deref(), latency, speed, faults, *seed).await
        }
        #[cfg(feature = "testbed")]
        Command::Bench { which } => crate::bench::run(which).await,
    }
}

/// `jobwire broadcast …`.
async fn broadcast_command(
    settings: &crate::config::Settings,
    store: &std::sync::Arc<dyn jobwire_store::Store>,
    action: &cli::BroadcastAction,
) -> anyhow::Result<()> {
    use crate::broadcast::{Audience, create, progress_line};
    use cli::BroadcastAction as A;
    use jobwire_store::BroadcastStatus as S;
    let now = chrono::Utc::now;
    match action {
        A::Send {
            text_file,
            category,
            plan,
            language,
            active_days,
        } => {
            let text = std::fs::read_to_string(text_file)
                .with_context(|| format!("reading {}", text_file.display()))?;
            let audience = Audience {
                category: category
                    .as_deref()
                    .map(jobwire_core::CategorySlug::parse)
                    .transpose()
                    .context("--category")?,
                plan: plan.clone(),
                language: language.clone(),
                active_days: *active_days,
            };
            let b = create(&settings.broadcast_setup(), store, &text, &audience).await?;
            println!("{}", progress_line(&b));
            Ok(())
        }
        A::Status { id, watch } => loop {
            let list = match id {
                Some(id) => vec![
                    store
                        .broadcast(jobwire_store::BroadcastId(*id), now())
                        .await?
                        .with_context(|| format!("no broadcast {id}"))?,
                ],
                None => store.broadcasts(20, now()).await?,
            };
            if list.is_empty() {
                println!("no broadcasts");
            }
            for b in &list {
                println!("{}", progress_line(b));
            }
            let going = list
                .iter()
                .any(|b| matches!(b.status, S::Running | S::Paused));
            if !*watch || !going {
                return Ok(());
            }
            tokio::time::sleep(Duration::from_secs(2)).await;
        },
        A::Pause { id } | A::Resume { id } | A::Cancel { id } => {
            let status = match action {
                A::Pause { .. } => S::Paused,
                A::Resume { .. } => S::Running,
                _ => S::Canceled,
            };
            if !store
                .set_broadcast_status(jobwire_store::BroadcastId(*id), status, now())
                .await?
            {
                anyhow::bail!("broadcast {id} does not exist or has ended");
            }
            let b = store
                .broadcast(jobwire_store::BroadcastId(*id), now())
                .await?
                .with_context(|| format!("no broadcast {id}"))?;
            println!("{}", progress_line(&b));
            Ok(())
        }
    }
}
