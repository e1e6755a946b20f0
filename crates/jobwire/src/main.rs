//! The `jobwire` binary: parses the command line, sets up logging and the runtime, and calls
//! [`jobwire::commands::execute`].

use std::io::IsTerminal;
use std::process::ExitCode;

use clap::Parser;
use jobwire::cli::{Cli, LogFormat};
use tracing_subscriber::EnvFilter;

/// mimalloc instead of glibc's malloc: with the send stage's stalls gone, glibc's
/// `_int_malloc`, `_int_free`, `unlink_chunk` and `malloc_consolidate` were 28% of the
/// pipeline's CPU in `bench delivery` (task cells, HTTP buffers, JSON values by the
/// thousand, freed on other threads than the one that made them). See BENCHMARKS.md.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let cli = Cli::parse();
    let quiet = cli.command.quiet();
    let filter = EnvFilter::try_from_env("RUST_LOG")
        .unwrap_or_else(|_| EnvFilter::new(if quiet { "warn" } else { "info" }));
    // --log-format json (or JOBWIRE_LOG_FORMAT=json): one JSON object per line, with the span
    // fields (post, delivery, chat) that let one vacancy be followed through every stage.
    // Colours only on a terminal: a log file or journald gets plain text.
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal());
    match cli.log_format {
        LogFormat::Json => builder.json().with_current_span(true).init(),
        LogFormat::Text => builder.init(),
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
