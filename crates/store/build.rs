//! Compiles the PostgreSQL half of the store test suite in when the environment names a
//! server (`JOBWIRE_TEST_POSTGRES_URL`, as `.ci/run` sets it) or the `postgres-tests`
//! feature is on: one test command (`cargo test --workspace`) then runs the embedded
//! backends on a fresh machine and both backends in CI, and never skips a test silently.
///
/// It also rebuilds the crate when a migration is added (`sqlx::migrate!` embeds the folders).
fn main() {
    println!("cargo::rerun-if-changed=../../migrations");
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rerun-if-env-changed=JOBWIRE_TEST_POSTGRES_URL");
    println!("cargo::rustc-check-cfg=cfg(jobwire_postgres_tests)");
    if std::env::var_os("JOBWIRE_TEST_POSTGRES_URL").is_some() {
        println!("cargo::rustc-cfg=jobwire_postgres_tests");
    }
}
