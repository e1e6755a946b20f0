//! The shared store suite against PostgreSQL. Compiled only with the `postgres-tests`
//! feature; then `JOBWIRE_TEST_POSTGRES_URL` (e.g. `postgres://postgres@127.0.0.1:5432/test`)
//! must name a server where the user may create databases: every check runs in a database
//! of its own, created for it and dropped after it. A missing URL fails, never skips.
//!
//! `JOBWIRE_TEST_POSTGRES_URL=… cargo test -p jobwire-store --features postgres-tests`

#![cfg(any(feature = "postgres-tests", jobwire_postgres_tests))]
#![allow(clippy::unwrap_used)]

mod suite;

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use jobwire_store::{PostgresOptions, PostgresStore};
use sqlx::Connection;
use sqlx::postgres::PgConnection;

const URL_VAR: &str = "JOBWIRE_TEST_POSTGRES_URL";

fn server_url() -> String {
    match std::env::var(URL_VAR) {
        Ok(url) if !url.trim().is_empty() => url,
        _ => panic!(
            "{URL_VAR} is not set: the `postgres-tests` feature runs the store suite against a \
             real PostgreSQL server. Set it, e.g. \
             {URL_VAR}=postgres://postgres@127.0.0.1:5432/test, or drop the feature."
        ),
    }
}

/// `url` with its database (the path) replaced by `database`, query string kept.
fn with_database(url: &str, database: &str) -> String {
    let (scheme, rest) = url.split_once("://").expect("URL has a scheme");
    let authority_end = rest.find(['/', '?']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(authority_end);
    let query = tail.find('?').map(|q| &tail[q..]).unwrap_or("");
    format!("{scheme}://{authority}/{database}{query}")
}

/// A database created for one test and dropped after it.
struct TestDatabase {
    server: String,
    name: String,
    url: String,
}

impl TestDatabase {
    async fn create() -> Self {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let server = server_url();
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0);
        let name = format!(
            "jobwire_test_{}_{}_{nanos}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        let mut admin = PgConnection::connect(&server)
            .await
            .unwrap_or_else(|e| panic!("cannot connect to {URL_VAR}: {e}"));
        sqlx::query(sqlx::AssertSqlSafe(format!("CREATE DATABASE \"{name}\"")))
            .execute(&mut admin)
            .await
            .expect("create test database");
        admin.close().await.expect("close admin connection");
        let url = with_database(&server, &name);
        Self { server, name, url }
    }

    async fn open(&self) -> Arc<PostgresStore> {
        let options = PostgresOptions {
            max_connections: 4,
            ..PostgresOptions::default()
        };
        Arc::new(
            PostgresStore::open_with(&self.url, &options)
                .await
                .expect("open postgres store"),
        )
    }

    async fn drop_database(self) {
        let mut admin = PgConnection::connect(&self.server)
            .await
            .expect("reconnect to drop the test database");
        sqlx::query(sqlx::AssertSqlSafe(format!(
            "DROP DATABASE IF EXISTS \"{}\" WITH (FORCE)",
            self.name
        )))
        .execute(&mut admin)
        .await
        .expect("drop test database");
    }
}

/// Runs `check` on two stores (two pools, as two processes would have) over a fresh
/// database, drops the database whatever happens, then reports the check's panic.
async fn run<F, Fut>(check: F)
where
    F: FnOnce(Arc<PostgresStore>, Arc<PostgresStore>) -> Fut,
    Fut: Future<Output = ()> + Send + 'static,
{
    let db = TestDatabase::create().await;
    let a = db.open().await;
    let b = db.open().await;
    let outcome = tokio::spawn(check(a.clone(), b.clone())).await;
    a.close().await;
    b.close().await;
    db.drop_database().await;
    if let Err(e) = outcome {
        std::panic::resume_unwind(e.into_panic());
    }
}

macro_rules! suite_tests {
    ($($check:ident),* $(,)?) => {$(
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn $check() {
            run(|store, _| async move { suite::$check(&*store).await }).await;
        }
    )*};
}

suite::every_check!(suite_tests);

/// Two "processes" (separate pools) claim the same deliveries at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn check_concurrent_claims() {
    run(|a, b| async move { suite::check_concurrent_claims(&*a, &*b).await }).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn check_concurrent_row_updates() {
    run(|a, b| async move { suite::check_concurrent_row_updates(&*a, &*b).await }).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn check_concurrent_release_held() {
    run(|a, b| async move { suite::check_concurrent_release_held(&*a, &*b).await }).await;
}

/// `cargo test -p jobwire-store --features postgres-tests --test postgres measure -- --nocapture`
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn measure_claim_batches() {
    run(|store, _| async move { suite::measure_claim_batches(&*store, "postgres").await }).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn open_dispatches_postgres_urls_and_debug_hides_the_password() {
    let db = TestDatabase::create().await;
    // Trust authentication ignores the password, so the URL can carry one to look for.
    let (scheme, rest) = db.url.split_once("://").unwrap();
    let (user, host) = rest.rsplit_once('@').unwrap_or(("postgres", rest));
    let user = user.split(':').next().unwrap();
    let with_password = format!("{scheme}://{user}:hunter2@{host}");
    let outcome = tokio::spawn(async move {
        let store = jobwire_store::open(&with_password)
            .await
            .expect("open by url");
        let shown = format!("{store:?}");
        assert!(!shown.contains("hunter2"), "{shown}");
        assert!(
            shown.contains("jobwire_test_"),
            "Debug names the database: {shown}"
        );
        suite::check_insert_post_dedup(&*store).await;
        assert_eq!(store.pipeline_counts().await.unwrap().posts, 2);
    })
    .await;
    db.drop_database().await;
    if let Err(e) = outcome {
        std::panic::resume_unwind(e.into_panic());
    }
}

#[test]
fn with_database_replaces_only_the_path() {
    assert_eq!(
        with_database("postgres://u:p@h:5432/test?sslmode=disable", "x"),
        "postgres://u:p@h:5432/x?sslmode=disable"
    );
    assert_eq!(with_database("postgres://h", "x"), "postgres://h/x");
}
