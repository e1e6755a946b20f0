//! RSS feeds in the parser role: items reach intake, and each feed's state survives a restart.

use std::time::Duration;

use jobwire::feeds::FeedSection;
use jobwire::testbed::{Bed, start_pipeline, temp_db};
use jobwire_testkit::wait::eventually;

use crate::support::*;

const LARAJOBS: &str = include_str!("../../../intake/tests/fixtures/rss-larajobs.xml");

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn feed_items_are_taken_in_and_the_feed_state_is_kept() {
    init();
    let app = axum::Router::new().route(
        "/feed.xml",
        axum::routing::get(|| async { ([("content-type", "application/rss+xml")], LARAJOBS) }),
    );
    let listener = tokio::net::TcpListener::bind(loopback()).await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });

    let telegram = fake_telegram(None).await;
    let (_dir, db) = temp_db().unwrap();
    let settings = Bed::default().settings(telegram.url(), &db).unwrap();
    let (running, store) = start_pipeline(&settings).await.unwrap();
    let feeds = vec![FeedSection {
        name: "feed:larajobs".into(),
        url: format!("http://{addr}/feed.xml"),
        interval_secs: 600,
        jitter_secs: 0,
        backfill: true,
    }];
    let token = tokio_util::sync::CancellationToken::new();
    let task = tokio::spawn(jobwire::feeds::run(
        feeds.clone(),
        running.intake.clone(),
        store.clone(),
        token.clone(),
    ));
    eventually("the feed's items", Duration::from_secs(30), || async {
        store.pipeline_counts().await.unwrap().posts >= 10
    })
    .await;
    token.cancel();
    task.await.unwrap().unwrap();
    running.shutdown().await.unwrap();

    let channels = store.channels().await.unwrap();
    assert!(channels.iter().any(|c| c.handle == "feed:larajobs"));
    // The next run starts from the saved state: the items are known and the feed not due.
    let source = jobwire::feeds::source(&feeds, store.as_ref())
        .await
        .unwrap();
    let state = source
        .states()
        .remove("feed:larajobs")
        .expect("state saved");
    assert!(state.first_run_done);
    assert_eq!(state.seen.len(), 10);
    assert!(state.next_poll_at.is_some_and(|t| t > chrono::Utc::now()));
}
