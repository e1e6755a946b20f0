//! The command line.

use std::path::PathBuf;

use anyhow::Context;
use clap::{Parser, Subcommand};

use crate::config::{Config, ProcessEnv};
use crate::eval::EvalClassifier;

#[derive(Debug, Parser)]
#[command(
    name = "jobwire",
    version,
    about = "Catches paid work in Telegram channels and delivers it to subscribers"
)]
pub struct Cli {
    /// Configuration file (TOML); `JOBWIRE__SECTION__KEY` variables override it.
    #[arg(long, global = true, env = "JOBWIRE_CONFIG")]
    pub config: Option<PathBuf>,
    /// How log lines on stderr look: `text` (coloured only when stderr is a terminal) or
    /// `json` (one object per line, with the span fields that follow a post through every
    /// stage). Example: `jobwire --log-format json run`.
    #[arg(
        long,
        global = true,
        value_enum,
        ignore_case = true,
        env = "JOBWIRE_LOG_FORMAT",
        default_value_t = LogFormat::Text
    )]
    pub log_format: LogFormat,
    #[command(subcommand)]
    pub command: Command,
}

/// The format of log lines (`--log-format`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum LogFormat {
    Text,
    Json,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// The whole pipeline on sample data, no accounts needed; prints what each subscriber got.
    #[cfg(feature = "testbed")]
    #[command(
        after_help = "Examples:\n  jobwire demo\n  jobwire demo --speed 1 --json\n  jobwire demo --posts my-posts.jsonl --llm-url http://127.0.0.1:8082/v1"
    )]
    Demo {
        /// Posts to replay (JSONL, the format of data/dev.jsonl).
        #[arg(long)]
        posts: Option<PathBuf>,
        /// Classify through this OpenAI-compatible endpoint (e.g. http://127.0.0.1:8080/v1).
        #[arg(long)]
        llm_url: Option<url::Url>,
        /// The model to ask at --llm-url.
        #[arg(long, default_value = "gpt-4o-mini")]
        llm_model: String,
        /// Run Telegram's limits this many times faster (1 = Telegram's real pace).
        #[arg(long, default_value_t = 20)]
        speed: u32,
        /// End the output with the summary as one JSON line.
        #[arg(long)]
        json: bool,
        /// Stop at the first malformed line of --posts (default: report it and skip it).
        #[arg(long)]
        strict: bool,
    },
    /// Runs the pipeline until Ctrl-C / SIGTERM: every role, or those given with --role.
    #[command(
        after_help = "Examples:\n  jobwire run --config jobwire.toml\n  jobwire run --config jobwire.toml --role sender\n  jobwire run --config data/demo.toml --replay data/dev.jsonl"
    )]
    Run {
        /// Roles to run in this process (repeat or comma-separate); all when omitted.
        #[arg(long, value_enum, value_delimiter = ',')]
        role: Vec<crate::pipeline::Role>,
        /// Replay a JSONL file of posts through intake once started.
        #[arg(long)]
        replay: Option<PathBuf>,
        /// Stop at the first malformed line of --replay (default: report it and skip it).
        #[arg(long)]
        strict: bool,
    },
    /// Signs a Telegram user account in (phone, code, 2FA password) and keeps its session file.
    #[command(after_help = "Example:\n  jobwire login --config jobwire.toml --account main")]
    Login {
        /// The [[mtproto.accounts]] id; every configured account in turn when omitted.
        #[arg(long)]
        account: Option<String>,
    },
    /// Checks that everything the configuration points at answers, one line per check.
    #[command(after_help = "Example:\n  jobwire doctor --config jobwire.toml")]
    Doctor,
    /// Imports a Telegram Desktop export (result.json) into the pipeline's queue.
    #[command(
        after_help = "Example:\n  jobwire import ~/Downloads/Telegram\\ Desktop/ChatExport_2026-12-01/result.json"
    )]
    Import {
        /// The export's result.json (Telegram Desktop, format JSON).
        file: PathBuf,
        /// No progress bar.
        #[arg(long)]
        quiet: bool,
        /// Stop at the first malformed message (default: report it and skip it).
        #[arg(long)]
        strict: bool,
    },
    /// The classification report of the last hours: posts per model, jobs, tokens, cost and
    /// latency, and what the pipeline holds now.
    #[command(after_help = "Example:\n  jobwire report --hours 168")]
    Report {
        /// How far back, in hours.
        #[arg(long, default_value_t = 24)]
        hours: u32,
    },
    /// Retrains the local model on the dataset plus the stored examples (the LLM's answers,
    /// accepted reports, re-labels), prints what it learned from, and asks every running
    /// classifier process to retrain too.
    #[command(after_help = "Example:\n  jobwire retrain --config jobwire.toml")]
    Retrain,
    /// Measures classification quality on a labeled JSONL file.
    #[command(
        after_help = "Examples:\n  jobwire eval --dataset data/dev.jsonl --group-by-channel\n  jobwire eval --dataset my-labeled-posts.jsonl --model shipped --classifier cascade\n  jobwire eval --dataset data/unseen.jsonl --simulate-learning --plot learning.svg"
    )]
    Eval {
        /// Labeled posts (JSONL, the format of data/SCHEMA.md).
        #[arg(long)]
        dataset: PathBuf,
        /// What classifies: the local model, the LLM at --llm-url, or the cascade of both.
        #[arg(long, value_enum, default_value = "local")]
        classifier: EvalClassifier,
        /// OpenAI-compatible endpoint for --classifier llm or cascade.
        #[arg(long)]
        llm_url: Option<url::Url>,
        /// The model to ask at --llm-url.
        #[arg(long, default_value = "gpt-4o-mini")]
        llm_model: String,
        /// Cross-validate the local model with K folds on the dataset (the cascade always
        /// cross-validates its local model, 5 folds unless given).
        #[arg(long)]
        cv: Option<usize>,
        /// Seed of the fold split (the same seed, the same folds).
        #[arg(long, default_value_t = 7)]
        seed: u64,
        /// Expected extraction fields by post id (JSONL, e.g. data/extract.jsonl): reports
        /// extraction accuracy.
        #[arg(long)]
        extraction: Option<PathBuf>,
        /// The cascade's confidence threshold (default: classifier.cascade_threshold).
        #[arg(long)]
        threshold: Option<f32>,
        /// The cascade's category threshold (default: classifier.cascade_category_threshold;
        /// 0 routes on is-job alone).
        #[arg(long)]
        category_threshold: Option<f32>,
        /// Folds with no channel in two of them: how the classifier does on a channel it
        /// never saw.
        #[arg(long)]
        group_by_channel: bool,
        /// Evaluate the model the service runs (`shipped`: trained on the configured
        /// `classifier.training_data`, or the shipped data/dev.jsonl + data/train.jsonl) on
        /// the dataset as it is, no cross-validation; the cascade routes as in production.
        #[arg(long, value_enum, conflicts_with = "cv")]
        model: Option<crate::eval::EvalModel>,
        /// Labeled JSONL every cross-validation fold also trains on (never scored; posts
        /// whose text is in --dataset are left out), e.g. data/train.jsonl.
        #[arg(long)]
        extra_training: Option<PathBuf>,
        /// Stream the dataset's posts through the cascade of the shipped model, keep the
        /// LLM's answers as examples and retrain every --retrain-every posts, as the service
        /// does; prints the LLM share and quality block by block. The LLM is --llm-url when
        /// given, otherwise an oracle answering with the dataset's labels.
        #[arg(long, conflicts_with_all = ["cv", "classifier"])]
        simulate_learning: bool,
        /// With --simulate-learning: posts between two retrainings (a scored block).
        #[arg(long, default_value_t = 100)]
        retrain_every: usize,
        /// With --simulate-learning: write the blocks as CSV to this file.
        #[arg(long)]
        csv: Option<PathBuf>,
        /// With --simulate-learning: draw the LLM share and quality over the stream as SVG.
        #[arg(long)]
        plot: Option<PathBuf>,
        /// Print the report as one JSON object on the last line.
        #[arg(long)]
        json: bool,
    },
    /// A local Bot API server (the project's stand-in for Telegram).
    #[cfg(feature = "testbed")]
    #[command(
        after_help = "Example:\n  jobwire fake-telegram --listen 127.0.0.1:8081\n  curl http://127.0.0.1:8081/__testkit/messages"
    )]
    FakeTelegram {
        /// Address to serve the Bot API on (point [telegram] api_url at it).
        #[arg(long, default_value = "127.0.0.1:8081")]
        listen: std::net::SocketAddr,
        /// Lift every rate limit.
        #[arg(long)]
        no_limits: bool,
        /// Messages per second a bot may send in all (Telegram: about 30).
        #[arg(long, default_value_t = 30)]
        global_per_sec: u32,
        /// Messages per second a bot may send to one private chat.
        #[arg(long, default_value_t = 1)]
        per_chat_per_sec: u32,
        /// Messages per minute a bot may send to one group.
        #[arg(long, default_value_t = 20)]
        per_group_per_min: u32,
        /// Added latency per call, in milliseconds.
        #[arg(long, default_value_t = 0)]
        latency_ms: u64,
    },
    /// A local OpenAI-compatible server answering from a labeled JSONL oracle.
    #[cfg(feature = "testbed")]
    #[command(
        after_help = "Example:\n  jobwire fake-llm --listen 127.0.0.1:8082 --ttft-ms 500 --tokens-per-sec 60\n  jobwire demo --llm-url http://127.0.0.1:8082/v1"
    )]
    FakeLlm {
        /// Address to serve the API on (its base URL is http://ADDR/v1).
        #[arg(long, default_value = "127.0.0.1:8082")]
        listen: std::net::SocketAddr,
        /// Labeled JSONL whose labels are the answers (default: the shipped data/dev.jsonl).
        #[arg(long)]
        oracle: Option<PathBuf>,
        /// Added latency per call, in milliseconds.
        #[arg(long, default_value_t = 0)]
        latency_ms: u64,
        /// Time to the first token, in milliseconds (a real model: 300–1000).
        #[arg(long, default_value_t = 0)]
        ttft_ms: u64,
        /// Output tokens per second (a real model: 50–100); 0 answers at once. A streamed
        /// answer (`stream: true`) arrives piece by piece at this pace.
        #[arg(long, default_value_t = 0)]
        tokens_per_sec: u32,
        /// Share of calls (0–1) answered 429 Too Many Requests.
        #[arg(long, default_value_t = 0.0)]
        rate_429: f64,
        /// Share of calls (0–1) answered 500.
        #[arg(long, default_value_t = 0.0)]
        rate_500: f64,
        /// Share of calls (0–1) held until the client times out.
        #[arg(long, default_value_t = 0.0)]
        rate_timeout: f64,
        /// Share of calls (0–1) answered with JSON that does not parse.
        #[arg(long, default_value_t = 0.0)]
        rate_malformed: f64,
        /// Share of calls (0–1) answered with JSON outside the requested schema.
        #[arg(long, default_value_t = 0.0)]
        rate_off_schema: f64,
        /// Seed of the fault injection (the same seed, the same faults).
        #[arg(long, default_value_t = 1)]
        seed: u64,
    },
    /// Benchmarks (results go to BENCHMARKS.md).
    #[cfg(feature = "testbed")]
    #[command(
        after_help = "Examples:\n  cargo build --release -p jobwire\n  target/release/jobwire bench delivery\n  target/release/jobwire bench distributed-delivery"
    )]
    Bench {
        #[command(subcommand)]
        which: crate::bench::Bench,
    },
    /// A message to every subscriber, or those of a category, plan or language: checked with
    /// Telegram's HTML parser, sent by the running send role behind vacancies, within the
    /// same rate limits, once per subscriber whatever restarts.
    #[command(
        after_help = "Examples:\n  jobwire broadcast send --text-file news.html --language ru\n  jobwire broadcast status 3 --watch"
    )]
    Broadcast {
        #[command(subcommand)]
        action: BroadcastAction,
    },
    /// Admin accounts of the web panel (argon2id hashes in the database).
    #[command(
        after_help = "Examples:\n  jobwire admin list\n  jobwire admin disable --username bob"
    )]
    Admin {
        #[command(subcommand)]
        action: AdminAction,
    },
}

impl Command {
    /// Commands that print a report of their own: logs below warnings unless `RUST_LOG` asks.
    pub fn quiet(&self) -> bool {
        match self {
            Self::Eval { .. } => true,
            #[cfg(feature = "testbed")]
            Self::Demo { .. } | Self::Bench { .. } => true,
            _ => false,
        }
    }
}

#[derive(Debug, Subcommand)]
pub enum AdminAction {
    /// Creates an account with a role (`admin` by default, or `moderator`); the password is
    /// read from standard input (one line).
    #[command(
        after_help = "Examples:\n  printf '%s\\n' \"$PASSWORD\" | jobwire admin create --username alice --password-stdin\n  printf '%s\\n' \"$PASSWORD\" | jobwire admin create --username bob --role moderator --password-stdin"
    )]
    Create {
        #[command(flatten)]
        account: AdminAccount,
        /// `admin`: everything. `moderator`: reports, placements, posts and sources; no
        /// payments, refunds, broadcasts, prompt, categories or accounts.
        #[arg(long, default_value = "admin", value_parser = ["admin", "moderator"])]
        role: String,
    },
    /// Replaces an account's password, read from standard input (one line), and ends its
    /// sessions.
    #[command(
        after_help = "Example:\n  jobwire admin set-password --username alice --password-stdin < new-password.txt"
    )]
    SetPassword(AdminAccount),
    /// Disables an account: it can no longer log in or use the API, and its sessions end.
    #[command(after_help = "Example:\n  jobwire admin disable --username bob")]
    Disable {
        /// The account's username.
        #[arg(long)]
        username: String,
    },
    /// The accounts: username, role, active or disabled, live sessions, dates.
    #[command(after_help = "Example:\n  jobwire admin list --config jobwire.toml")]
    List,
}

#[derive(Debug, clap::Args)]
pub struct AdminAccount {
    /// 3-32 latin letters, digits, `_`, `.` or `-` (stored lower-cased).
    #[arg(long)]
    pub username: String,
    /// Read the password from standard input (the only way: an argument would show in the
    /// process list).
    #[arg(long, required = true)]
    pub password_stdin: bool,
}

#[derive(Debug, Subcommand)]
pub enum BroadcastAction {
    /// Checks the message and starts the broadcast; prints its id.
    Send {
        /// The message, in Telegram's HTML (`<b>`, `<i>`, `<a href>`, …).
        #[arg(long)]
        text_file: PathBuf,
        /// Only subscribers of this category (slug).
        #[arg(long)]
        category: Option<String>,
        /// Only subscribers with a current period of this plan.
        #[arg(long)]
        plan: Option<String>,
        /// Only subscribers whose Telegram reads this language (ru or en).
        #[arg(long)]
        language: Option<String>,
        /// Only subscribers active in the last N days (1 to 3650): settings saved, a
        /// report, a hidden author, a payment or a new language in that time, as the panel's
        /// audience filter counts them.
        #[arg(long, value_name = "N")]
        active_days: Option<u32>,
    },
    /// Progress: sent, failed, blocked, remaining, rate and ETA (all broadcasts without an id).
    Status {
        /// The broadcast's id (as `send` printed it); every broadcast when omitted.
        id: Option<i64>,
        /// Repeat every 2 seconds until the broadcast ends.
        #[arg(long)]
        watch: bool,
    },
    /// Stops claiming new recipients (the one in flight finishes).
    Pause {
        /// The broadcast's id.
        id: i64,
    },
    /// Goes on after a pause.
    Resume {
        /// The broadcast's id.
        id: i64,
    },
    /// Ends it; whoever has not got it yet will not.
    Cancel {
        /// The broadcast's id.
        id: i64,
    },
}

/// Loads and resolves the configuration for commands that need it.
pub fn settings(cli: &Cli) -> anyhow::Result<crate::config::Settings> {
    let config = Config::load(cli.config.as_deref())?;
    Ok(config.resolve(&ProcessEnv)?)
}

pub fn llm_section(url: &url::Url, model: &str) -> crate::config::LlmSection {
    crate::config::LlmSection::new(url.clone(), model)
}

/// Settings for commands that work without a config file (eval): the file when given.
pub fn settings_or_default(
    cli: &Cli,
    llm: Option<crate::config::LlmSection>,
) -> anyhow::Result<crate::config::Settings> {
    let mut config = Config::load(cli.config.as_deref())?;
    if llm.is_some() {
        config.llm = llm;
    }
    config.resolve(&ProcessEnv).context("configuration")
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    use super::Cli;

    /// Every option and argument of every command says what it is, and every command shows
    /// an example in its `--help`.
    #[test]
    fn every_option_has_help_and_every_command_an_example() {
        fn options(cmd: &clap::Command, path: &str, problems: &mut Vec<String>) {
            let path = format!("{path} {}", cmd.get_name());
            for arg in cmd.get_arguments() {
                let id = arg.get_id().as_str();
                if matches!(id, "help" | "version") || arg.is_hide_set() {
                    continue;
                }
                if arg.get_help().is_none() && arg.get_long_help().is_none() {
                    problems.push(format!("{path}: {id} has no help text"));
                }
            }
            for sub in cmd.get_subcommands() {
                options(sub, &path, problems);
            }
        }
        let cli = Cli::command();
        let mut problems = Vec::new();
        options(&cli, "", &mut problems);
        for cmd in cli.get_subcommands().filter(|c| c.get_name() != "help") {
            let example = cmd.get_after_help().map(|h| h.to_string());
            if !example.is_some_and(|e| e.contains("jobwire")) {
                problems.push(format!("jobwire {}: no example in --help", cmd.get_name()));
            }
        }
        assert!(problems.is_empty(), "{}", problems.join("\n"));
    }
}
