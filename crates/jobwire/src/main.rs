//! The `jobwire` binary: parses the command line, sets up logging and the runtime, and calls
//! [`jobwire::commands::execute`].

use std::process::ExitCode;

use clap::Parser;
use jobwire::cli::{Cli, Command};
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
    match runtime.block_on(jobwire::commands::execute(cli)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            // One line: the outermost context first, then its causes.
            eprintln!("error: {}", format!("{e:#}").replace('\n', " "));
            ExitCode::FAILURE
        }
    }
}
