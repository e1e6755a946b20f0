//! RSS feeds in the parser role: items reach intake, each feed's state survives a restart,
//! and a database outage delays a poll's items without losing them.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use jobwire::feeds::FeedSection;
use jobwire::supervisor::{Backoff, Supervisor};
use jobwire::testbed::{Bed, start_pipeline, temp_db};
use jobwire_intake::sources::{SourcesWatch, SourcesWatcher};
use jobwire_intake::stage::IntakeStage;
use jobwire_store::{SourceInput, SourceSpec, Store};
use jobwire_testkit::wait::eventually;
use sqlx::Connection;
use tokio_util::sync::CancellationToken;

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
    // The admin adds the feed while the parser runs: it is polled within seconds.
    store
        .add_source(&spec(&feeds[0]), chrono::Utc::now())
        .await
        .unwrap();
    eventually("the feed's items", Duration::from_secs(30), || async {
        store.pipeline_counts().await.unwrap().posts >= 10
    })
    .await;
    eventually("the feed state saved", Duration::from_secs(30), || async {
        !store.state_list("feed").await.unwrap().is_empty()
    })
    .await;
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

const EMPTY_FEED: &str = "<?xml version=\"1.0\"?><rss version=\"2.0\"><channel>\
                          <title>LaraJobs</title></channel></rss>";

/// A feed that shows the LaraJobs items to its first request only, and nothing afterwards (a
/// busy feed whose items have moved on). Returns its address and the request count.
async fn feed_shown_once() -> (SocketAddr, Arc<AtomicUsize>) {
    let hits = Arc::new(AtomicUsize::new(0));
    let counter = hits.clone();
    let app = axum::Router::new().route(
        "/feed.xml",
        axum::routing::get(move || {
            let first = counter.fetch_add(1, Ordering::SeqCst) == 0;
            async move {
                let body = if first { LARAJOBS } else { EMPTY_FEED };
                ([("content-type", "application/rss+xml")], body)
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind(loopback()).await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    (addr, hits)
}

fn larajobs(addr: SocketAddr) -> Vec<FeedSection> {
    vec![FeedSection {
        name: "feed:larajobs".into(),
        url: format!("http://{addr}/feed.xml?securityToken=SECRET123"),
        interval_secs: 600,
        jitter_secs: 0,
        backfill: true,
    }]
}

/// The source a `[[feeds]]` entry seeds.
fn spec(feed: &FeedSection) -> SourceSpec {
    SourceInput {
        address: feed.url.clone(),
        name: feed.name.clone(),
        enabled: true,
        interval_secs: Some(feed.interval_secs),
        jitter_secs: Some(feed.jitter_secs),
        backfill: feed.backfill,
        ..SourceInput::default()
    }
    .parse()
    .unwrap()
}

/// A temporary database set up as the service's: the settings built on it, as `jobwire run`
/// builds them (against a fake Telegram nobody calls).
async fn service_db() -> (
    jobwire_testkit::telegram::FakeTelegram,
    tempfile::TempDir,
    PathBuf,
) {
    let telegram = fake_telegram(None).await;
    let (dir, db) = temp_db().unwrap();
    let _ = Bed::default().settings(telegram.url(), &db).unwrap();
    (telegram, dir, db)
}

fn sqlite_url(db: &Path) -> String {
    format!("sqlite://{}", db.display())
}

/// The store at `url` with `feeds` seeded as sources, an intake stage (no pipeline, so no
/// other parser polls them) and the sources followed as a parser does, every 50 ms until the
/// token is cancelled.
async fn feeds_bed(
    url: &str,
    feeds: &[FeedSection],
) -> (
    Arc<dyn Store>,
    Arc<IntakeStage>,
    SourcesWatch,
    CancellationToken,
) {
    let store = jobwire_store::open(url).await.unwrap();
    for feed in feeds {
        store
            .seed_channel(&spec(feed), chrono::Utc::now())
            .await
            .unwrap();
    }
    let intake = Arc::new(IntakeStage::new(
        store.clone(),
        Arc::new(jobwire_queue::MemoryQueue::new()),
    ));
    let watcher = SourcesWatcher::new(store.clone())
        .with_intake(intake.clone())
        .with_interval(Duration::from_millis(50));
    let sources = watcher.subscribe();
    let token = CancellationToken::new();
    let stop = token.clone();
    tokio::spawn(async move { watcher.run(stop.cancelled_owned()).await });
    (store, intake, sources, token)
}

/// A second connection to the embedded database, to make it refuse writes: a trigger that
/// fails every new post, one that fails saving a feed state, and one that fails keeping a
/// dead letter (in an outage nothing can be written, so nothing is set aside either).
async fn outage(db: &Path) -> sqlx::SqliteConnection {
    let mut conn = sqlx::SqliteConnection::connect(&format!("sqlite://{}", db.display()))
        .await
        .unwrap();
    for sql in [
        "CREATE TRIGGER outage_posts BEFORE INSERT ON posts \
         BEGIN SELECT RAISE(ABORT, 'database unavailable'); END",
        "CREATE TRIGGER outage_feed_state BEFORE INSERT ON source_state \
         WHEN NEW.namespace = 'feed' BEGIN SELECT RAISE(ABORT, 'database unavailable'); END",
        "CREATE TRIGGER outage_dead_letters BEFORE INSERT ON dead_letters \
         BEGIN SELECT RAISE(ABORT, 'database unavailable'); END",
    ] {
        sqlx::query(sql).execute(&mut conn).await.unwrap();
    }
    conn
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn items_polled_during_a_database_outage_are_taken_in_once_it_is_back() {
    init();
    let (addr, hits) = feed_shown_once().await;
    let (_telegram, _dir, db) = service_db().await;
    let (store, intake, sources, watching) = feeds_bed(&sqlite_url(&db), &larajobs(addr)).await;
    let mut conn = outage(&db).await;

    // As in production: under a supervisor that restarts the feeds task when it fails.
    let token = CancellationToken::new();
    let mut sup = Supervisor::new(token.clone(), None).with_backoff(Backoff {
        first: Duration::from_millis(50),
        max: Duration::from_millis(200),
        healthy_after: Duration::from_secs(1),
        shutdown_grace: Duration::from_secs(10),
    });
    let (feeds, intake, task_store, task_token) =
        (sources, intake.clone(), store.clone(), sup.shutdown_token());
    sup.spawn_restarting("feeds", move || {
        jobwire::feeds::run(
            feeds.clone(),
            intake.clone(),
            task_store.clone(),
            task_token.clone(),
        )
    });
    eventually("the feed polled", Duration::from_secs(10), || async {
        hits.load(Ordering::SeqCst) >= 1
    })
    .await;
    // Several attempts fail while the database refuses posts.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert_eq!(store.pipeline_counts().await.unwrap().posts, 0);

    sqlx::query("DROP TRIGGER outage_posts")
        .execute(&mut conn)
        .await
        .unwrap();
    eventually(
        "the polled items taken in",
        Duration::from_secs(30),
        || async { store.pipeline_counts().await.unwrap().posts >= 10 },
    )
    .await;
    // The feed state is still refused; once it is accepted, the round's state is saved.
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(store.state_list("feed").await.unwrap().is_empty());
    sqlx::query("DROP TRIGGER outage_feed_state")
        .execute(&mut conn)
        .await
        .unwrap();
    eventually("the feed state saved", Duration::from_secs(30), || async {
        !store.state_list("feed").await.unwrap().is_empty()
    })
    .await;

    sup.shutdown().await;
    watching.cancel();
    // Every item once, from the one poll (the task was never restarted to poll again).
    assert_eq!(store.pipeline_counts().await.unwrap().posts, 10);
    assert_eq!(hits.load(Ordering::SeqCst), 1);
    let source = jobwire::feeds::source(&larajobs(addr), store.as_ref())
        .await
        .unwrap();
    let state = source.state("feed:larajobs").expect("state saved");
    assert_eq!(state.seen.len(), 10);
    assert!(state.last_error.is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_ends_the_retries_and_leaves_the_items_for_the_next_start() {
    init();
    let (addr, hits) = feed_shown_once().await;
    let (_telegram, _dir, db) = service_db().await;
    let (store, intake, sources, watching) = feeds_bed(&sqlite_url(&db), &larajobs(addr)).await;
    let _conn = outage(&db).await;

    let token = CancellationToken::new();
    let task = tokio::spawn(jobwire::feeds::run(
        sources,
        intake.clone(),
        store.clone(),
        token.clone(),
    ));
    eventually("the feed polled", Duration::from_secs(10), || async {
        hits.load(Ordering::SeqCst) >= 1
    })
    .await;
    tokio::time::sleep(Duration::from_millis(700)).await;
    assert!(
        !task.is_finished(),
        "a database error ended the feeds task instead of being retried"
    );
    token.cancel();
    let ended = tokio::time::timeout(Duration::from_secs(5), task)
        .await
        .expect("the task stops retrying on shutdown");
    ended.unwrap().unwrap();
    watching.cancel();
    // Nothing of the round was saved: the next start polls the items again.
    assert_eq!(store.pipeline_counts().await.unwrap().posts, 0);
    assert!(store.state_list("feed").await.unwrap().is_empty());
}

/// A feed whose items a hostile or broken publisher wrote: a NUL (and other control
/// characters) in the text, a `javascript:` link, and a guid so long that PostgreSQL's
/// unique index refuses the row, whatever intake cleans.
#[cfg(jobwire_distributed_tests)]
fn hostile_feed() -> String {
    // Random letters, which PostgreSQL cannot compress under its index limit.
    let mut rng = jobwire_core::seeded::Seeded::new(7);
    let long_guid: String = (0..12_000)
        .map(|_| char::from(*rng.pick(b"abcdefghijklmnopqrstuvwxyz")))
        .collect();
    format!(
        "<?xml version=\"1.0\"?><rss version=\"2.0\"><channel><title>Hostile</title>\
         <item><title>Laravel developer&#x1;</title><guid>nul-1</guid>\
         <link>javascript:alert(document.cookie)</link>\
         <description><![CDATA[Need a Laravel developer\u{0} for a shop,\u{7} budget $900]]></description>\
         <pubDate>Thu, 04 Dec 2025 10:00:00 +0000</pubDate></item>\
         <item><title>Vue developer</title><guid>{long_guid}</guid>\
         <description>Need a Vue developer, budget $500</description>\
         <pubDate>Thu, 04 Dec 2025 10:01:00 +0000</pubDate></item>\
         </channel></rss>"
    )
}

/// On PostgreSQL (which refuses NUL in text): a NUL from a feed item is removed at intake,
/// an item the database still refuses is kept as a dead letter with its reason after a few
/// tries, and a second feed's items are taken in meanwhile instead of waiting behind it.
#[cfg(jobwire_distributed_tests)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_postgres_a_hostile_item_is_cleaned_or_set_aside_and_the_other_feeds_go_on() {
    init();
    let hostile = hostile_feed();
    let app = axum::Router::new()
        .route(
            "/hostile.xml",
            axum::routing::get(move || {
                let body = hostile.clone();
                async move { ([("content-type", "application/rss+xml")], body) }
            }),
        )
        .route(
            "/feed.xml",
            axum::routing::get(|| async { ([("content-type", "application/rss+xml")], LARAJOBS) }),
        );
    let listener = tokio::net::TcpListener::bind(loopback()).await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });

    let base = std::env::var("JOBWIRE_TEST_POSTGRES_URL").unwrap();
    let name = format!("jobwire_feeds_{}", unique_suffix());
    let (mut admin, url) = create_pg_database(&base, &name).await;

    let feeds = [
        FeedSection {
            name: "feed:hostile".into(),
            url: format!("http://{addr}/hostile.xml"),
            interval_secs: 600,
            jitter_secs: 0,
            backfill: true,
        },
        FeedSection {
            name: "feed:larajobs".into(),
            url: format!("http://{addr}/feed.xml"),
            interval_secs: 600,
            jitter_secs: 0,
            backfill: true,
        },
    ];
    let (store, intake, sources, token) = feeds_bed(url.as_str(), &feeds).await;
    let task = tokio::spawn(jobwire::feeds::run(
        sources,
        intake,
        store.clone(),
        token.clone(),
    ));

    let mut db = sqlx::PgConnection::connect(url.as_str()).await.unwrap();
    let posts_of = |feed: &'static str| {
        sqlx::query_as::<_, (String, Option<String>)>(
            "SELECT p.text, p.url FROM posts p JOIN channels c ON c.id = p.channel_id \
             WHERE c.handle = $1 ORDER BY p.id",
        )
        .bind(feed)
    };
    eventually(
        "the second feed's items and the dead letter",
        Duration::from_secs(60),
        || async {
            store.pipeline_counts().await.unwrap().posts >= 11
                && store
                    .dead_letter_count(chrono::DateTime::UNIX_EPOCH)
                    .await
                    .unwrap()
                    >= 1
        },
    )
    .await;
    token.cancel();
    let _ = tokio::time::timeout(Duration::from_secs(10), task).await;

    assert_eq!(
        posts_of("feed:larajobs")
            .fetch_all(&mut db)
            .await
            .unwrap()
            .len(),
        10
    );
    let hostile = posts_of("feed:hostile").fetch_all(&mut db).await.unwrap();
    assert_eq!(hostile.len(), 1, "{hostile:?}");
    let (text, link) = &hostile[0];
    assert!(
        text.contains("Need a Laravel developer for a shop, budget $900"),
        "{text:?}"
    );
    assert!(
        !text
            .chars()
            .any(|c| c.is_control() && c != '\n' && c != '\t'),
        "{text:?}"
    );
    assert_eq!(link, &None, "a javascript: link is not kept");
    let letters = store.dead_letters(10).await.unwrap();
    assert_eq!(letters.len(), 1, "{letters:?}");
    assert_eq!(letters[0].topic, "intake");
    assert!(letters[0].attempts >= 3, "{:?}", letters[0].attempts);
    assert!(
        letters[0].payload.contains("Need a Vue developer"),
        "{}",
        letters[0].payload
    );
    assert!(
        letters[0].payload.contains("feed:hostile"),
        "{}",
        letters[0].payload
    );
    assert!(
        letters[0].reason.contains("index row"),
        "{}",
        letters[0].reason
    );

    drop(db);
    drop(store);
    let _ = sqlx::query(sqlx::AssertSqlSafe(format!(
        "DROP DATABASE IF EXISTS {name} WITH (FORCE)"
    )))
    .execute(&mut admin)
    .await;
}
