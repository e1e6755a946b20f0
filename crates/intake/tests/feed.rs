//! RSS/Atom feeds against a local HTTP server serving the real LaraJobs and Upwork feeds.
//!
//! Time is injected: `FeedSource::poll_due(now)` takes the clock, so back-off and schedules
//! are checked without waiting. Only the HTTP exchanges are real.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{Path, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use chrono::{DateTime, TimeZone, Utc};
use futures::StreamExt;
use jobwire_intake::Source;
use jobwire_intake::feed::{
    Budget, BudgetKind, FeedConfig, FeedHealth, FeedItem, FeedPoller, FeedSource, FeedState,
    FeedStatus,
};

const LARAJOBS: &str = include_str!("fixtures/rss-larajobs.xml");
const UPWORK: &str = include_str!("fixtures/rss-upwork-2021-excerpt.xml");

// ---------------------------------------------------------------------------------------
// The test server
// ---------------------------------------------------------------------------------------

#[derive(Clone)]
enum Route {
    /// A feed with validators; answers 304 when `If-None-Match` matches the ETag.
    Feed {
        body: String,
        etag: String,
        last_modified: String,
        content_type: &'static str,
    },
    /// An error status, optionally with `Retry-After`.
    Status {
        code: u16,
        retry_after: Option<&'static str>,
    },
    /// `200 OK` with a body and content type as given.
    Raw {
        body: String,
        content_type: &'static str,
    },
    /// A redirect to `to`.
    Redirect { to: String },
    /// `total` bytes streamed in 64 KiB chunks, with or without a `Content-Length`.
    Huge { total: u64, content_length: bool },
    /// Answers only after `delay`.
    Slow { delay: Duration },
}

/// One request as the server saw it.
#[derive(Debug, Clone)]
struct Seen {
    path: String,
    if_none_match: Option<String>,
    if_modified_since: Option<String>,
    status: u16,
}

#[derive(Clone, Default)]
struct Server {
    routes: Arc<Mutex<HashMap<String, Route>>>,
    log: Arc<Mutex<Vec<Seen>>>,
    /// Bytes each `Huge` route has produced so far, by path.
    huge_bytes_sent: Arc<Mutex<HashMap<String, Arc<AtomicU64>>>>,
}

impl Server {
    fn set(&self, path: &str, route: Route) {
        self.routes
            .lock()
            .expect("routes")
            .insert(path.to_owned(), route);
    }

    fn requests(&self, path: &str) -> Vec<Seen> {
        self.log
            .lock()
            .expect("log")
            .iter()
            .filter(|s| s.path == path)
            .cloned()
            .collect()
    }

    fn hits(&self, path: &str) -> usize {
        self.requests(path).len()
    }

    fn huge_counter(&self, path: &str) -> Arc<AtomicU64> {
        Arc::clone(
            self.huge_bytes_sent
                .lock()
                .expect("counters")
                .entry(path.to_owned())
                .or_default(),
        )
    }
}

static PADDING: [u8; 64 * 1024] = [b' '; 64 * 1024];
const HUGE_HEAD: &[u8] = b"<?xml version=\"1.0\"?><rss version=\"2.0\"><channel><title>big</title>";

async fn handle(
    State(server): State<Server>,
    Path(path): Path<String>,
    headers: HeaderMap,
) -> Response {
    let route = server.routes.lock().expect("routes").get(&path).cloned();
    let header_str = |name| {
        headers
            .get(name)
            .and_then(|v: &HeaderValue| v.to_str().ok())
            .map(str::to_owned)
    };
    let if_none_match = header_str(header::IF_NONE_MATCH);
    let if_modified_since = header_str(header::IF_MODIFIED_SINCE);
    let response = match route {
        None => StatusCode::NOT_FOUND.into_response(),
        Some(Route::Feed {
            body,
            etag,
            last_modified,
            content_type,
        }) => {
            if if_none_match.as_deref() == Some(etag.as_str()) {
                StatusCode::NOT_MODIFIED.into_response()
            } else {
                (
                    [
                        (header::CONTENT_TYPE, content_type.to_owned()),
                        (header::ETAG, etag),
                        (header::LAST_MODIFIED, last_modified),
                    ],
                    body,
                )
                    .into_response()
            }
        }
        Some(Route::Status { code, retry_after }) => {
            let status = StatusCode::from_u16(code).expect("status");
            let mut response = (status, "<html><body>go away</body></html>").into_response();
            if let Some(value) = retry_after {
                response
                    .headers_mut()
                    .insert(header::RETRY_AFTER, HeaderValue::from_static(value));
            }
            response
        }
        Some(Route::Raw { body, content_type }) => {
            ([(header::CONTENT_TYPE, content_type)], body).into_response()
        }
        Some(Route::Redirect { to }) => {
            (StatusCode::FOUND, [(header::LOCATION, to)]).into_response()
        }
        Some(Route::Huge {
            total,
            content_length,
        }) => {
            let chunks = total / PADDING.len() as u64;
            let counter = server.huge_counter(&path);
            let head = futures::stream::once(async {
                Ok::<_, std::io::Error>(Bytes::from_static(HUGE_HEAD))
            });
            let padding = futures::stream::iter(0..chunks).map(move |_| {
                counter.fetch_add(PADDING.len() as u64, Ordering::SeqCst);
                Ok::<_, std::io::Error>(Bytes::from_static(&PADDING))
            });
            let mut response = Body::from_stream(head.chain(padding)).into_response();
            response.headers_mut().insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/rss+xml"),
            );
            if content_length {
                let len = HUGE_HEAD.len() as u64 + chunks * PADDING.len() as u64;
                response
                    .headers_mut()
                    .insert(header::CONTENT_LENGTH, HeaderValue::from(len));
            }
            response
        }
        Some(Route::Slow { delay }) => {
            tokio::time::sleep(delay).await;
            (StatusCode::OK, UPWORK).into_response()
        }
    };
    server.log.lock().expect("log").push(Seen {
        path,
        if_none_match,
        if_modified_since,
        status: response.status().as_u16(),
    });
    response
}

/// Starts the server on a free port; returns its base URL. The listener is bound before
/// this returns, so requests can be made at once.
async fn start(server: &Server) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    let app = Router::new()
        .route("/{path}", get(handle))
        .with_state(server.clone());
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    format!("http://{addr}")
}

// ---------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------

fn t0() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 3, 10, 12, 0, 0)
        .single()
        .expect("time")
}

fn minutes(n: i64) -> chrono::Duration {
    chrono::Duration::minutes(n)
}

/// A feed polled every 10 minutes, without jitter.
fn feed(base: &str, path: &str, name: &str) -> FeedConfig {
    let mut config = FeedConfig::new(name, format!("{base}/{path}"));
    config.interval = Duration::from_secs(600);
    config.jitter = Duration::ZERO;
    config
}

fn backfilled(mut config: FeedConfig) -> FeedConfig {
    config.backfill = true;
    config
}

fn feed_route(body: &str, version: &str) -> Route {
    Route::Feed {
        body: body.to_owned(),
        etag: format!("\"{version}\""),
        last_modified: format!("Tue, 10 Mar 2026 11:0{version}:00 GMT"),
        content_type: "application/rss+xml; charset=utf-8",
    }
}

fn source(configs: Vec<FeedConfig>) -> FeedSource {
    FeedSource::new(configs).expect("source").with_rng_seed(42)
}

fn status_of(source: &FeedSource, name: &str) -> FeedStatus {
    source
        .statuses()
        .into_iter()
        .find(|s| s.name == name)
        .expect("feed status")
}

fn ids(items: &[FeedItem]) -> Vec<&str> {
    items.iter().map(|i| i.post.external_id.as_str()).collect()
}

/// Splits an RSS document into (before the first item, items, after the last item).
fn split_items(xml: &str) -> (String, Vec<String>, String) {
    let first = xml.find("<item>").expect("an item");
    let last = xml.rfind("</item>").expect("an item") + "</item>".len();
    let mut items = Vec::new();
    let mut rest = &xml[first..last];
    while let Some(start) = rest.find("<item>") {
        let end = rest.find("</item>").expect("closed item") + "</item>".len();
        items.push(rest[start..end].to_owned());
        rest = &rest[end..];
    }
    (xml[..first].to_owned(), items, xml[last..].to_owned())
}

fn join_items(head: &str, items: &[String], tail: &str) -> String {
    format!("{head}{}{tail}", items.concat())
}

// ---------------------------------------------------------------------------------------
// First run, backfill, conditional requests
// ---------------------------------------------------------------------------------------

#[tokio::test]
async fn first_run_marks_existing_items_as_seen_and_backfill_delivers_them() {
    let server = Server::default();
    server.set("larajobs", feed_route(LARAJOBS, "1"));
    server.set("larajobs-backfill", feed_route(LARAJOBS, "1"));
    let base = start(&server).await;
    let mut source = source(vec![
        feed(&base, "larajobs", "feed:larajobs"),
        backfilled(feed(&base, "larajobs-backfill", "feed:larajobs-all")),
    ]);

    let items = source.poll_due(t0()).await;

    // The plain feed delivers nothing but remembers all ten items.
    assert!(items.iter().all(|i| i.post.channel == "feed:larajobs-all"));
    let plain = status_of(&source, "feed:larajobs");
    assert_eq!(plain.health, FeedHealth::Healthy);
    assert_eq!((plain.seen, plain.delivered_total), (10, 0));

    // The backfilled one delivers all ten, oldest first.
    assert_eq!(items.len(), 10);
    assert_eq!(items[0].post.external_id, "https://larajobs.com/job/3770");
    assert_eq!(items[9].post.external_id, "https://larajobs.com/job/3781");
    assert!(
        items
            .windows(2)
            .all(|w| w[0].post.posted_at <= w[1].post.posted_at)
    );
    let newest = &items[9];
    assert_eq!(
        newest.post.url.as_deref(),
        Some("https://larajobs.com/job/3781")
    );
    assert_eq!(newest.post.author.as_deref(), Some("FC Bayern München AG"));
    assert_eq!(
        newest.post.posted_at,
        Utc.with_ymd_and_hms(2025, 12, 4, 10, 58, 15)
            .single()
            .expect("time")
    );
    // LaraJobs' job: namespace, which feed-rs drops, is read from the raw item.
    let facts = newest.facts.as_ref().expect("job facts");
    assert_eq!(facts.company.as_deref(), Some("FC Bayern München AG"));
    assert_eq!(facts.location.as_deref(), Some("Munich, Germany"));
    assert_eq!(facts.job_type.as_deref(), Some("FULL_TIME"));
    assert_eq!(facts.salary, None);
    assert_eq!(
        facts.skills,
        ["Angular", "Fullstack", "Laravel", "SQL", "VueJS"]
    );
    assert_eq!(
        newest.post.text,
        "Full-Stack Developer (Laravel, Vue JS, Angular)\n\n\
         Type: FULL_TIME | Company: FC Bayern München AG | Location: Munich, Germany | \
         Skills: Angular, Fullstack, Laravel, SQL, VueJS"
    );
    let with_salary = items
        .iter()
        .find(|i| i.post.external_id == "https://larajobs.com/job/3775")
        .expect("job 3775");
    assert!(
        with_salary
            .facts
            .as_ref()
            .and_then(|f| f.salary.as_deref())
            .is_some_and(|s| s.starts_with("$135,000 to $155,000 plus stock options"))
    );

    // Neither feed delivers anything on the next poll of the same content.
    let later = source.poll_due(t0() + minutes(10)).await;
    assert!(later.is_empty(), "{:?}", ids(&later));
}

#[tokio::test]
async fn an_unchanged_feed_is_asked_with_validators_and_answers_304() {
    let server = Server::default();
    server.set("larajobs", feed_route(LARAJOBS, "1"));
    let base = start(&server).await;
    let mut source = source(vec![feed(&base, "larajobs", "feed:larajobs")]);

    assert!(source.poll_due(t0()).await.is_empty());
    // Not due yet: no request at all.
    assert!(source.poll_due(t0() + minutes(9)).await.is_empty());
    assert_eq!(server.hits("larajobs"), 1);

    assert!(source.poll_due(t0() + minutes(10)).await.is_empty());
    let requests = server.requests("larajobs");
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[0].if_none_match, None);
    assert_eq!(requests[1].if_none_match.as_deref(), Some("\"1\""));
    assert_eq!(
        requests[1].if_modified_since.as_deref(),
        Some("Tue, 10 Mar 2026 11:01:00 GMT")
    );
    assert_eq!(requests[1].status, 304);
    let status = status_of(&source, "feed:larajobs");
    assert_eq!(status.health, FeedHealth::Healthy);
    assert_eq!(status.next_poll_at, Some(t0() + minutes(20)));
}

#[tokio::test]
async fn a_poller_alone_does_the_same_with_a_caller_kept_state() {
    let server = Server::default();
    server.set("upwork", feed_route(UPWORK, "7"));
    let base = start(&server).await;
    let poller = FeedPoller::new(feed(&base, "upwork", "feed:upwork")).expect("poller");
    let mut rng = rand::rng();
    let mut state = FeedState::default();

    let first = poller.poll(&mut state, t0(), &mut rng).await.expect("poll");
    assert!(first.is_empty());
    assert!(state.first_run_done);
    assert_eq!(state.etag.as_deref(), Some("\"7\""));
    assert_eq!(state.seen.len(), 4);

    let second = poller
        .poll(&mut state, t0() + minutes(10), &mut rng)
        .await
        .expect("poll");
    assert!(second.is_empty());
    assert_eq!(server.requests("upwork")[1].status, 304);
}

// ---------------------------------------------------------------------------------------
// Changing content: new, reordered, overlapping, guid-less items
// ---------------------------------------------------------------------------------------

#[tokio::test]
async fn a_changed_feed_yields_exactly_the_new_items() {
    let server = Server::default();
    server.set("larajobs", feed_route(LARAJOBS, "1"));
    let base = start(&server).await;
    let mut source = source(vec![feed(&base, "larajobs", "feed:larajobs")]);
    assert!(source.poll_due(t0()).await.is_empty());

    let (head, items, tail) = split_items(LARAJOBS);
    assert_eq!(items.len(), 10);
    let new_item = items[0]
        .replace("job/3781", "job/3790")
        .replace(
            "Full-Stack Developer (Laravel, Vue JS, Angular)",
            "Backend Developer (Laravel)",
        )
        .replace("Thu, 04 Dec 2025 10:58:15", "Fri, 05 Dec 2025 09:00:00");
    // No guid: keyed by its link.
    let no_guid = "<item><title>Laravel Contractor</title>\
                   <link>https://larajobs.com/job/3791</link>\
                   <pubDate>Fri, 05 Dec 2025 10:00:00 +0000</pubDate>\
                   <description><![CDATA[<p>Three months, remote.</p>]]></description></item>"
        .to_owned();
    // Neither guid nor link: keyed by a hash of title and content.
    let bare = "<item><title>Part-time PHP help</title>\
                <description><![CDATA[Ping <b>@acme</b> on Telegram &amp; mention RSS.]]></description></item>"
        .to_owned();

    // Round 2: two new items on top, one guid-less at the bottom, the rest reordered.
    let mut round2: Vec<String> = vec![new_item.clone(), no_guid.clone()];
    let mut reordered = items.clone();
    reordered.reverse();
    round2.extend(reordered);
    round2.push(bare.clone());
    server.set(
        "larajobs",
        feed_route(&join_items(&head, &round2, &tail), "2"),
    );

    let got = source.poll_due(t0() + minutes(10)).await;
    let mut got_ids = ids(&got);
    got_ids.sort_unstable();
    assert_eq!(got_ids.len(), 3, "{got_ids:?}");
    assert_eq!(got_ids[0], "https://larajobs.com/job/3790");
    assert_eq!(got_ids[1], "https://larajobs.com/job/3791");
    assert!(got_ids[2].starts_with("sha256:"), "{got_ids:?}");
    let bare_post = got
        .iter()
        .find(|i| i.post.external_id.starts_with("sha256:"))
        .expect("bare item");
    assert_eq!(
        bare_post.post.text,
        "Part-time PHP help\n\nPing @acme on Telegram & mention RSS."
    );
    assert_eq!(bare_post.post.url, None);
    let contractor = got
        .iter()
        .find(|i| i.post.external_id.ends_with("3791"))
        .expect("guid-less item");
    assert_eq!(
        contractor.post.text,
        "Laravel Contractor\n\nThree months, remote."
    );

    // Round 3: an overlapping window, the five oldest gone, the same items in another
    // order, one new one: only that one.
    let newest =
        "<item><title>Senior Laravel Engineer</title><link>https://larajobs.com/job/3795</link>\
                  <guid isPermaLink=\"false\">https://larajobs.com/job/3795</guid></item>"
            .to_owned();
    let mut round3 = vec![bare, newest, no_guid, new_item];
    round3.extend(items[..5].iter().cloned());
    server.set(
        "larajobs",
        feed_route(&join_items(&head, &round3, &tail), "3"),
    );
    let got = source.poll_due(t0() + minutes(20)).await;
    assert_eq!(ids(&got), ["https://larajobs.com/job/3795"]);

    // Round 4: same items, a new ETag (the server rebuilt the page): nothing.
    round3.reverse();
    server.set(
        "larajobs",
        feed_route(&join_items(&head, &round3, &tail), "4"),
    );
    assert!(source.poll_due(t0() + minutes(30)).await.is_empty());
    assert_eq!(status_of(&source, "feed:larajobs").delivered_total, 4);
}

#[tokio::test]
async fn persisted_state_survives_a_restart_without_a_flood() {
    let server = Server::default();
    server.set("larajobs", feed_route(LARAJOBS, "1"));
    let base = start(&server).await;
    let config = feed(&base, "larajobs", "feed:larajobs");
    let mut first = source(vec![config.clone()]);
    assert!(first.poll_due(t0()).await.is_empty());
    let saved = serde_json::to_string(&first.states()).expect("serialize");

    // The server lost its ETags; the restarted source must still know the items.
    server.set("larajobs", feed_route(LARAJOBS, "9"));
    let restored: HashMap<String, FeedState> = serde_json::from_str(&saved).expect("parse");
    let mut second = source(vec![config]).with_states(restored);
    assert!(second.poll_due(t0() + minutes(10)).await.is_empty());
    assert_eq!(server.requests("larajobs")[1].status, 200);
}

// ---------------------------------------------------------------------------------------
// Upwork facts
// ---------------------------------------------------------------------------------------

#[tokio::test]
async fn upwork_items_carry_budget_category_skills_and_country() {
    let server = Server::default();
    server.set("upwork", feed_route(UPWORK, "1"));
    let base = start(&server).await;
    let mut source = source(vec![backfilled(feed(&base, "upwork", "feed:upwork"))]);

    let items = source.poll_due(t0()).await;
    assert_eq!(items.len(), 4);
    let by_title = |start: &str| {
        items
            .iter()
            .find(|i| i.post.text.starts_with(start))
            .unwrap_or_else(|| panic!("no item starting with {start:?}"))
    };
    let fixed = |amount: f64| {
        Some(Budget {
            min: amount,
            max: amount,
            currency: "USD".into(),
            kind: BudgetKind::Fixed,
        })
    };

    let marketplace = by_title("Create a marketplace where multiple sellers");
    let facts = marketplace.facts.as_ref().expect("facts");
    assert_eq!(facts.budget, fixed(10_000.0));
    assert_eq!(facts.category.as_deref(), Some("Full Stack Development"));
    assert_eq!(
        facts.skills,
        ["Website Development", "HTML", "API Integration"]
    );
    assert_eq!(facts.country.as_deref(), Some("United States"));
    assert_eq!(
        marketplace.post.url.as_deref(),
        Some(
            "https://www.upwork.com/jobs/Create-marketplace-where-multiple-sellers-can-send-product-feeds-the-site-multiple-times-day_%7E017bf2331fdb203e12?source=rss"
        )
    );
    // Title without " - Upwork", then the description as text, then the facts line.
    let text = &marketplace.post.text;
    assert!(text.starts_with(
        "Create a marketplace where multiple sellers can send product feeds to the site \
         multiple times a day.\n\nLooking to create a marketplace site"
    ));
    assert!(text.contains("A site similar to what I'm looking for is https://gun.deals/ Once"));
    assert!(text.ends_with(
        "\n\nBudget: $10,000 fixed | Category: Full Stack Development | Country: United States | \
         Skills: Website Development, HTML, API Integration"
    ));
    assert!(!text.contains('<') && !text.contains("&#039;") && !text.contains("&nbsp;"));

    let marketing = by_title("Digital Marketing\n\n")
        .facts
        .as_ref()
        .expect("facts");
    assert_eq!(marketing.budget, fixed(65_000.0));
    assert_eq!(marketing.category.as_deref(), Some("Digital Marketing"));
    assert_eq!(
        marketing.skills,
        [
            "Marketing Strategy",
            "Internet Marketing",
            "Digital Marketing",
            "Social Media Content",
            "Content Strategy",
            "Email Marketing"
        ]
    );

    let animator = by_title("Animator needed for movie")
        .facts
        .as_ref()
        .expect("facts");
    assert_eq!(animator.budget, fixed(10_000.0));
    assert_eq!(animator.category.as_deref(), Some("Cartoons & Comics"));
    assert_eq!(animator.skills.len(), 10);
    assert_eq!(animator.skills[0], "2D Animation");
    assert_eq!(animator.skills[9], "Cartoon Character");

    let elearning = by_title("Telecommunications content creator")
        .facts
        .as_ref()
        .expect("facts");
    assert_eq!(elearning.budget, fixed(35_000.0));
    assert_eq!(elearning.category.as_deref(), Some("Content Writing"));
    assert_eq!(
        elearning.skills,
        [
            "eLearning",
            "Articulate Storyline",
            "Course",
            "Training",
            "SCORM"
        ]
    );
    assert_eq!(elearning.country.as_deref(), Some("United States"));

    // Oldest first: the 14:22 item, then 19:02, then the two 21:52 ones.
    assert!(items[0].post.text.starts_with("Telecommunications"));
    assert!(items[1].post.text.starts_with("Animator"));
}

// ---------------------------------------------------------------------------------------
// Back-off: 403, 429, Retry-After
// ---------------------------------------------------------------------------------------

#[tokio::test]
async fn forbidden_backs_off_5_then_30_minutes_then_stops_until_resumed() {
    let server = Server::default();
    server.set(
        "blocked",
        Route::Status {
            code: 403,
            retry_after: None,
        },
    );
    let base = start(&server).await;
    let mut source = source(vec![feed(&base, "blocked", "feed:blocked")]);
    let handle = source.handle();

    assert!(source.poll_due(t0()).await.is_empty());
    assert_eq!(server.hits("blocked"), 1);
    let status = status_of(&source, "feed:blocked");
    assert_eq!(
        status.health,
        FeedHealth::BackingOff {
            reason: "HTTP 403".into(),
            until: Some(t0() + minutes(5))
        }
    );

    // Never hammering: nothing is sent before the back-off ends.
    source.poll_due(t0() + minutes(4)).await;
    assert_eq!(server.hits("blocked"), 1);

    source.poll_due(t0() + minutes(5)).await;
    assert_eq!(server.hits("blocked"), 2);
    assert_eq!(
        status_of(&source, "feed:blocked").next_poll_at,
        Some(t0() + minutes(35))
    );
    source.poll_due(t0() + minutes(34)).await;
    assert_eq!(server.hits("blocked"), 2);

    source.poll_due(t0() + minutes(35)).await;
    assert_eq!(server.hits("blocked"), 3);
    let stopped = handle
        .statuses()
        .into_iter()
        .find(|s| s.name == "feed:blocked")
        .expect("status");
    let FeedHealth::Stopped { reason } = &stopped.health else {
        panic!("expected a stopped feed, got {:?}", stopped.health);
    };
    assert_eq!(reason, "3 failures in a row, last: HTTP 403");
    assert_eq!(stopped.next_poll_at, None);
    assert_eq!(source.next_due_at(), None);

    // Stopped means stopped, however long we wait.
    source.poll_due(t0() + chrono::Duration::days(10)).await;
    assert_eq!(server.hits("blocked"), 3);

    // The admin fixes it and resumes the feed; it is polled at once.
    server.set("blocked", feed_route(UPWORK, "1"));
    assert!(handle.resume("feed:blocked"));
    assert!(!handle.resume("feed:unknown"));
    let items = source.poll_due(t0() + chrono::Duration::days(10)).await;
    assert_eq!(server.hits("blocked"), 4);
    assert!(
        items.is_empty(),
        "a resumed feed's first run only marks items as seen"
    );
    assert_eq!(
        status_of(&source, "feed:blocked").health,
        FeedHealth::Healthy
    );
}

#[tokio::test]
async fn too_many_requests_honours_a_longer_retry_after() {
    let server = Server::default();
    server.set(
        "limited",
        Route::Status {
            code: 429,
            retry_after: Some("3600"),
        },
    );
    server.set(
        "unavailable",
        Route::Status {
            code: 503,
            retry_after: Some("60"),
        },
    );
    let base = start(&server).await;
    let mut source = source(vec![
        feed(&base, "limited", "feed:limited"),
        feed(&base, "unavailable", "feed:unavailable"),
    ]);

    source.poll_due(t0()).await;
    // 429 asks for an hour: longer than the 5-minute step, so honoured.
    assert_eq!(
        status_of(&source, "feed:limited").next_poll_at,
        Some(t0() + minutes(60))
    );
    // 503 asks for a minute: shorter than the step, so the step wins.
    assert_eq!(
        status_of(&source, "feed:unavailable").next_poll_at,
        Some(t0() + minutes(5))
    );

    source.poll_due(t0() + minutes(30)).await;
    assert_eq!(server.hits("limited"), 1);
    assert_eq!(server.hits("unavailable"), 2);
    source.poll_due(t0() + minutes(60)).await;
    assert_eq!(server.hits("limited"), 2);
}

// ---------------------------------------------------------------------------------------
// Broken feeds are reported for that feed alone
// ---------------------------------------------------------------------------------------

#[tokio::test]
async fn broken_feeds_are_reported_each_while_a_good_feed_still_delivers() {
    let server = Server::default();
    server.set("good", feed_route(UPWORK, "1"));
    let cut = LARAJOBS.len() / 2;
    server.set(
        "truncated",
        Route::Raw {
            body: LARAJOBS[..cut].to_owned(),
            content_type: "application/rss+xml",
        },
    );
    let third_item_end = LARAJOBS
        .match_indices("</item>")
        .nth(2)
        .map(|(at, tag)| at + tag.len())
        .expect("three items");
    server.set(
        "cut-between-items",
        Route::Raw {
            body: LARAJOBS[..third_item_end].to_owned(),
            content_type: "application/rss+xml",
        },
    );
    server.set(
        "mismatched",
        Route::Raw {
            body: "<rss version=\"2.0\"><channel><title>x</title><item><title>a</item></channel></rss>"
                .to_owned(),
            content_type: "application/rss+xml",
        },
    );
    server.set(
        "html",
        Route::Raw {
            body: "<!DOCTYPE html>\n<html><head><title>Just a moment...</title></head>\
                   <body>Checking your browser</body></html>"
                .to_owned(),
            content_type: "text/html; charset=UTF-8",
        },
    );
    server.set(
        "loop",
        Route::Redirect {
            to: "/loop".to_owned(),
        },
    );
    server.set(
        "huge",
        Route::Huge {
            total: 50 * 1024 * 1024,
            content_length: false,
        },
    );
    server.set(
        "huge-declared",
        Route::Huge {
            total: 50 * 1024 * 1024,
            content_length: true,
        },
    );
    let base = start(&server).await;
    let mut source = source(vec![
        feed(&base, "truncated", "feed:truncated"),
        feed(&base, "cut-between-items", "feed:cut-between-items"),
        feed(&base, "mismatched", "feed:mismatched"),
        feed(&base, "html", "feed:html"),
        backfilled(feed(&base, "good", "feed:good")),
        feed(&base, "loop", "feed:loop"),
        feed(&base, "huge", "feed:huge"),
        feed(&base, "huge-declared", "feed:huge-declared"),
    ]);

    let items = source.poll_due(t0()).await;

    // The good feed delivered all its items.
    assert_eq!(items.len(), 4);
    assert!(items.iter().all(|i| i.post.channel == "feed:good"));
    assert_eq!(status_of(&source, "feed:good").health, FeedHealth::Healthy);

    let failing = |name: &str| match status_of(&source, name).health {
        FeedHealth::Failing { reason } => reason,
        other => panic!("{name}: expected a failing feed, got {other:?}"),
    };
    let truncated = failing("feed:truncated");
    assert!(truncated.starts_with("broken XML: "), "{truncated}");
    eprintln!("truncated feed reported as: {truncated}");
    let cut_between = failing("feed:cut-between-items");
    eprintln!("feed cut between items reported as: {cut_between}");
    assert!(cut_between.starts_with("broken XML: "), "{cut_between}");
    let mismatched = failing("feed:mismatched");
    eprintln!("mismatched feed reported as: {mismatched}");
    assert!(mismatched.starts_with("broken XML: "), "{mismatched}");
    assert_eq!(failing("feed:html"), "not a feed: HTML page");
    assert_eq!(
        failing("feed:loop"),
        "redirect loop or more than 5 redirects"
    );
    assert_eq!(failing("feed:huge"), "body larger than 5242880 bytes");
    assert_eq!(
        failing("feed:huge-declared"),
        "body larger than 5242880 bytes"
    );

    // The redirect loop was followed 5 times, then given up.
    assert_eq!(server.hits("loop"), 6);
    // The 50 MB bodies were cut, not downloaded: the server produced far less.
    for path in ["huge", "huge-declared"] {
        let produced = server.huge_counter(path).load(Ordering::SeqCst);
        eprintln!("the 50 MB route {path} produced {produced} bytes");
        // Far from 50 MB: what the client read (at most 5 MB) plus the socket buffers.
        assert!(
            produced < 25 * 1024 * 1024,
            "{path}: the server produced {produced} bytes"
        );
    }

    // These are not reasons to back off: the feeds are polled again at their interval,
    // and the failures do not stop them.
    for name in ["feed:truncated", "feed:html", "feed:loop", "feed:huge"] {
        let status = status_of(&source, name);
        assert_eq!(status.next_poll_at, Some(t0() + minutes(10)), "{name}");
        assert_eq!(status.failure_streak, 0, "{name}");
    }

    // A repaired feed recovers on its next poll (first successful run: marks seen).
    server.set("html", feed_route(LARAJOBS, "1"));
    let items = source.poll_due(t0() + minutes(10)).await;
    assert!(items.is_empty());
    assert_eq!(status_of(&source, "feed:html").health, FeedHealth::Healthy);
    assert_eq!(status_of(&source, "feed:html").seen, 10);
}

#[tokio::test]
async fn a_slow_server_times_out_without_holding_up_the_other_feeds() {
    let server = Server::default();
    server.set(
        "slow",
        Route::Slow {
            delay: Duration::from_secs(30),
        },
    );
    server.set("good", feed_route(LARAJOBS, "1"));
    let base = start(&server).await;
    let mut slow = feed(&base, "slow", "feed:slow");
    slow.timeout = Duration::from_millis(300);
    let mut source = source(vec![slow, backfilled(feed(&base, "good", "feed:good"))]);

    let started = std::time::Instant::now();
    let items = source.poll_due(t0()).await;
    let elapsed = started.elapsed();

    assert_eq!(items.len(), 10);
    let status = status_of(&source, "feed:slow");
    assert_eq!(
        status.health,
        FeedHealth::BackingOff {
            reason: "timed out after 300 ms".into(),
            until: Some(t0() + minutes(5))
        }
    );
    assert!(elapsed < Duration::from_secs(10), "took {elapsed:?}");
}

// ---------------------------------------------------------------------------------------
// As a Source
// ---------------------------------------------------------------------------------------

#[tokio::test]
async fn as_a_source_it_returns_batches_of_new_posts() {
    let server = Server::default();
    server.set("larajobs", feed_route(LARAJOBS, "1"));
    server.set("upwork", feed_route(UPWORK, "1"));
    let base = start(&server).await;
    let mut source = FeedSource::new(vec![
        backfilled(feed(&base, "larajobs", "feed:larajobs")),
        feed(&base, "upwork", "feed:upwork"),
    ])
    .expect("source");
    assert_eq!(
        source.describe(),
        "2 RSS/Atom feed(s): feed:larajobs, feed:upwork"
    );

    let batch = source
        .next_batch()
        .await
        .expect("no error")
        .expect("a live source never ends");
    assert_eq!(batch.len(), 10);
    assert!(batch.iter().all(|p| p.channel == "feed:larajobs"));
    assert_eq!(source.state("feed:upwork").map(|s| s.seen.len()), Some(4));
}

#[test]
fn bad_configurations_are_refused() {
    let err = FeedSource::new(vec![FeedConfig::new("feed:x", "ftp://example.com/feed")])
        .expect_err("ftp is refused");
    assert!(err.to_string().contains("only http and https"), "{err}");
    let err = FeedSource::new(vec![
        FeedConfig::new("feed:x", "https://a.example/rss"),
        FeedConfig::new("feed:x", "https://b.example/rss"),
    ])
    .expect_err("duplicate names are refused");
    assert!(err.to_string().contains("two feeds are named"), "{err}");
}
