//! A feed URL can carry a token (Upwork's `securityToken`). Whatever goes wrong with the
//! feed, the token shows nowhere an operator or a log collector looks: log lines (ours and
//! the HTTP client's), errors, the stored state, the admin status, `Debug`.

use std::io::Write;
use std::sync::{Arc, Mutex, OnceLock};

use axum::Router;
use axum::http::{StatusCode, header};
use axum::response::IntoResponse;
use axum::routing::get;
use chrono::{DateTime, TimeZone, Utc};
use jobwire_intake::feed::{FeedConfig, FeedHealth, FeedPoller, FeedSource, FeedState};

const TOKEN: &str = "SECRET123";
const PASSWORD: &str = "PASSWORD456";

/// Every log line of this test binary, at every level, `log` records of the HTTP client
/// included.
fn logs() -> Arc<Mutex<Vec<u8>>> {
    static LOGS: OnceLock<Arc<Mutex<Vec<u8>>>> = OnceLock::new();
    LOGS.get_or_init(|| {
        let buffer = Arc::new(Mutex::new(Vec::new()));
        let writer = Arc::clone(&buffer);
        tracing_subscriber::fmt()
            .with_max_level(tracing::Level::TRACE)
            .with_ansi(false)
            .with_writer(move || Capture(Arc::clone(&writer)))
            .init();
        buffer
    })
    .clone()
}

struct Capture(Arc<Mutex<Vec<u8>>>);

impl Write for Capture {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().expect("log buffer").extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn captured() -> String {
    String::from_utf8_lossy(&logs().lock().expect("log buffer")).into_owned()
}

fn assert_no_secret(what: &str, text: &str) {
    for secret in [TOKEN, PASSWORD] {
        assert!(
            !text.contains(secret),
            "{what} shows the feed's secret {secret}:\n{text}"
        );
    }
}

/// A server with a failing route, a broken feed, an HTML page and a redirect loop.
async fn start_server() -> String {
    let app = Router::new()
        .route(
            "/fails",
            get(|| async { (StatusCode::INTERNAL_SERVER_ERROR, "oops") }),
        )
        .route(
            "/broken",
            get(|| async {
                (
                    [(header::CONTENT_TYPE, "application/rss+xml")],
                    "<rss version=\"2.0\"><channel><title>x</title><item><title>a</item>",
                )
            }),
        )
        .route(
            "/html",
            get(|| async {
                (
                    [(header::CONTENT_TYPE, "text/html")],
                    "<!DOCTYPE html><html><body>Log in</body></html>",
                )
            }),
        )
        .route(
            "/loop",
            get(|| async {
                (
                    StatusCode::FOUND,
                    [(header::LOCATION, "/loop?securityToken=SECRET123")],
                )
                    .into_response()
            }),
        )
        .route(
            "/relative-links",
            get(|| async {
                (
                    [(header::CONTENT_TYPE, "application/atom+xml")],
                    r##"<feed xmlns="http://www.w3.org/2005/Atom"><title>t</title><id>urn:f</id>
                    <updated>2026-03-01T00:00:00Z</updated>
                    <entry><title>a</title><id>urn:a</id><updated>2026-03-01T00:00:00Z</updated>
                      <link rel="alternate" href="#apply"/></entry>
                    <entry><title>b</title><id>urn:b</id><updated>2026-03-01T00:00:00Z</updated>
                      <link rel="alternate" href="?page=2#x"/></entry>
                    </feed>"##,
                )
            }),
        );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    format!("http://{addr}")
}

/// An address nothing listens on: connections are refused.
async fn refused_addr() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    drop(listener);
    format!("http://{addr}")
}

fn with_token(base: &str, path: &str) -> String {
    let with_user = base.replacen("http://", &format!("http://reader:{PASSWORD}@"), 1);
    format!("{with_user}/{path}?securityToken={TOKEN}&user=42")
}

fn t0() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 3, 10, 12, 0, 0)
        .single()
        .expect("time")
}

#[tokio::test]
async fn failing_feeds_never_show_their_token() {
    let _ = logs();
    let base = start_server().await;
    let refused = refused_addr().await;
    let host = base.trim_start_matches("http://").to_owned();
    let configs = vec![
        FeedConfig::new("feed:fails", with_token(&base, "fails")),
        FeedConfig::new("feed:refused", with_token(&refused, "rss")),
        FeedConfig::new("feed:broken", with_token(&base, "broken")),
        FeedConfig::new("feed:html", with_token(&base, "html")),
        FeedConfig::new("feed:loop", with_token(&base, "loop")),
    ];
    for config in &configs {
        assert_no_secret("FeedConfig's Debug", &format!("{config:?}"));
        let poller = FeedPoller::new(config.clone()).expect("poller");
        assert_no_secret("FeedPoller's Debug", &format!("{poller:?}"));
        let error = poller
            .fetch(None, None, t0())
            .await
            .expect_err("the feed fails");
        assert_no_secret("a fetch error", &format!("{error} / {error:?}"));
    }

    // Polled until the feeds that back off are stopped (now, +5 min, +35 min).
    let mut source = FeedSource::new(configs).expect("source").with_rng_seed(1);
    for minutes in [0, 5, 35] {
        let items = source
            .poll_due(t0() + chrono::Duration::minutes(minutes))
            .await;
        assert!(items.is_empty());
    }
    let statuses = source.statuses();
    let refused_status = statuses
        .iter()
        .find(|s| s.name == "feed:refused")
        .expect("status");
    assert!(
        matches!(&refused_status.health, FeedHealth::Stopped { reason } if reason.contains("network error")),
        "{refused_status:?}"
    );
    let failing = statuses
        .iter()
        .find(|s| s.name == "feed:fails")
        .expect("status");
    assert_eq!(failing.host, host);
    assert_eq!(failing.last_error.as_deref(), Some("HTTP 500"));
    for status in &statuses {
        assert!(status.last_error.is_some(), "{status:?}");
        assert_no_secret("a feed status", &format!("{status:?}"));
        assert_no_secret(
            "a feed status as JSON",
            &serde_json::to_string(status).expect("json"),
        );
    }
    // What jobwire stores for each feed.
    for (name, state) in source.states() {
        assert_no_secret(
            &format!("the stored state of {name}"),
            &serde_json::to_string(&state).expect("json"),
        );
    }
    assert_no_secret("FeedSource's Debug", &format!("{source:?}"));

    // The failures were logged, with the feed's name and host, but not its URL.
    let logs = captured();
    assert!(logs.contains("feed poll failed"), "{logs}");
    assert!(
        logs.contains("feed:refused") && logs.contains(&host),
        "{logs}"
    );
    assert_no_secret("the log", &logs);
}

#[tokio::test]
async fn bad_configurations_and_relative_links_never_show_the_token() {
    let _ = logs();
    for url in [
        format!("ftp://reader:{PASSWORD}@example.com/rss?securityToken={TOKEN}"),
        format!("https://reader:{PASSWORD}@exa mple.com/rss?securityToken={TOKEN}"),
    ] {
        let error = FeedSource::new(vec![FeedConfig::new("feed:bad", url)]).expect_err("refused");
        assert!(error.to_string().contains("feed:bad"), "{error}");
        assert_no_secret("a configuration error", &format!("{error} / {error:?}"));
    }

    // Links relative to the feed URL are resolved without its query and user info.
    let base = start_server().await;
    let mut config = FeedConfig::new("feed:links", with_token(&base, "relative-links"));
    config.backfill = true;
    let mut source = FeedSource::new(vec![config]).expect("source");
    let items = source.poll_due(t0()).await;
    assert_eq!(items.len(), 2);
    for item in &items {
        let url = item.post.url.as_deref().expect("a link");
        assert!(url.starts_with(&format!("{base}/")), "{url}");
        assert_no_secret("an item's link", url);
        assert_no_secret("an item", &format!("{item:?}"));
    }
    assert_no_secret("the log", &captured());
}

#[tokio::test]
async fn states_saved_by_an_older_version_are_scrubbed_when_restored() {
    let url = format!(
        "https://reader:{PASSWORD}@www.upwork.com/ab/feed/jobs/rss?securityToken={TOKEN}&q=rust"
    );
    let config = FeedConfig::new("feed:upwork", url.clone());
    assert_eq!(config.host(), "www.upwork.com");
    let old = FeedState {
        last_error: Some(format!(
            "network error: error sending request for url ({url}): connection refused"
        )),
        stopped_reason: Some(format!("3 failures in a row, last: network error: ({url})")),
        ..FeedState::default()
    };
    let source = FeedSource::new(vec![config])
        .expect("source")
        .with_states([("feed:upwork".to_owned(), old)].into());
    let state = source.state("feed:upwork").expect("state");
    let shown = serde_json::to_string(state).expect("json");
    assert_no_secret("a restored state", &shown);
    assert!(shown.contains("connection refused"), "{shown}");
    assert_no_secret("a restored status", &format!("{:?}", source.statuses()));
}
