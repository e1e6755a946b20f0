//! The jobwire application: configuration, wiring of the pipeline's stages, and the
//! commands of the `jobwire` binary. The binary itself (`main.rs`) only parses the command
//! line and calls into this library, so integration tests drive exactly what users run.

pub use jobwire_admin::accounts as admin_accounts;
pub use jobwire_admin::api as admin_api;
pub mod bench;
pub mod bench_distributed;
pub mod bench_llm;
pub use jobwire_admin::broadcasts as broadcast;
pub mod categories;
pub mod classifiers;
pub mod cli;
pub mod commands;
pub mod config;
pub mod connect;
pub mod demo;
pub mod eval;
pub mod feeds;
pub mod http;
pub mod llm;
pub mod pipeline;
pub mod preflight;
pub mod progress;
pub mod recovery;
pub mod report;
pub mod roles;
pub mod run;
pub mod server;
pub mod subscribers;
pub mod supervisor;
pub mod telegram;
pub mod telemetry;
pub mod testbed;
