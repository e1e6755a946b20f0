//! The jobwire application: configuration, wiring of the pipeline's stages, and the
//! commands of the `jobwire` binary. The binary itself (`main.rs`) only parses the command
//! line and calls into this library, so integration tests drive exactly what users run.
//!
//! The `testbed` feature (on by default) adds the stand-ins and what runs on them: `demo`,
//! `bench`, `fake-telegram`, `fake-llm` and the test bed. The production image is built
//! without it (`--no-default-features`), so the shipped binary carries none of them.

pub use jobwire_admin::accounts as admin_accounts;
pub use jobwire_admin::api as admin_api;
#[cfg(feature = "testbed")]
pub mod bench;
#[cfg(feature = "testbed")]
pub mod bench_distributed;
#[cfg(feature = "testbed")]
pub mod bench_llm;
pub use jobwire_admin::broadcasts as broadcast;
pub mod categories;
pub mod classifiers;
pub mod cli;
pub mod commands;
pub mod config;
pub mod connect;
#[cfg(feature = "testbed")]
pub mod demo;
pub mod eval;
pub mod feeds;
pub mod http;
pub mod llm;
pub mod parts;
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
#[cfg(feature = "testbed")]
pub mod testbed;
