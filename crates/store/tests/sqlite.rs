//! The shared store suite against SQLite: every check gets a fresh temp-file database.

#![allow(clippy::unwrap_used)]

mod suite;

use std::path::PathBuf;

use jobwire_store::{ChannelStore, SqliteStore, StoreError};
use tempfile::TempDir;

async fn fresh() -> (TempDir, PathBuf, SqliteStore) {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("jobwire.db");
    let store = SqliteStore::open_path(&path)
        .await
        .expect("open sqlite store");
    (dir, path, store)
}

macro_rules! suite_tests {
    ($($check:ident),* $(,)?) => {$(
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn $check() {
            let (_dir, _path, store) = fresh().await;
            suite::$check(&store).await;
        }
    )*};
}

suite::every_check!(suite_tests);

/// Two tasks sharing the one store of the embedded mode.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn check_concurrent_claims() {
    let (_dir, _path, store) = fresh().await;
    suite::check_concurrent_claims(&store, &store).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn check_concurrent_row_updates() {
    let (_dir, _path, store) = fresh().await;
    suite::check_concurrent_row_updates(&store, &store).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn check_concurrent_release_held() {
    let (_dir, _path, store) = fresh().await;
    suite::check_concurrent_release_held(&store, &store).await;
}

/// `cargo test -p jobwire-store --test sqlite measure -- --nocapture` prints the rate.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn measure_claim_batches() {
    let (_dir, _path, store) = fresh().await;
    suite::measure_claim_batches(&store, "sqlite").await;
}

#[tokio::test]
async fn open_dispatches_sqlite_urls_and_keeps_data() {
    let (_dir, path, store) = fresh().await;
    suite::check_insert_post_dedup(&store).await;
    let url = format!("sqlite://{}", path.display());
    let reopened = jobwire_store::open(&url).await.expect("open by url");
    assert_eq!(
        reopened.channels().await.unwrap(),
        store.channels().await.unwrap()
    );
    assert_eq!(reopened.pipeline_counts().await.unwrap().posts, 2);
}

#[tokio::test]
async fn open_refuses_other_schemes_without_leaking_the_password() {
    let err = jobwire_store::open("mysql://app:hunter2@db/jobwire")
        .await
        .expect_err("mysql is not a jobwire backend");
    assert!(matches!(err, StoreError::UnsupportedUrl(_)), "{err:?}");
    let shown = format!("{err} {err:?}");
    assert!(!shown.contains("hunter2"), "{shown}");
    assert!(shown.contains("mysql://app:***@db/jobwire"), "{shown}");
    assert!(matches!(
        jobwire_store::open("sqlite::memory:").await,
        Err(StoreError::UnsupportedUrl(_))
    ));
}
