//! The admin API over real HTTP: a SQLite store on a temp file, the admin server on
//! 127.0.0.1:0, requests with reqwest (or raw TCP, to misbehave as a client).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use chrono::Utc;
use jobwire::http::HttpLimits;
use jobwire::server::{Health, serve_admin_later, serve_roles_with, serve_with_admin};
use jobwire_admin::AdminSettings;
use jobwire_store::{
    ExampleId, ExampleRow, ExampleSource, NewPost, NewReport, PostId, PostStatus, ReportId,
    ReportKind, ReportStatus, Store,
};
use reqwest012 as reqwest;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio_util::sync::CancellationToken;

const TOKEN: &str = "s3cret-admin-token-0123456789abcdef";

struct Server {
    base: String,
    addr: SocketAddr,
    health: Arc<Health>,
    store: Arc<dyn Store>,
    client: reqwest::Client,
    shutdown: CancellationToken,
    _dir: tempfile::TempDir,
}

impl Drop for Server {
    fn drop(&mut self) {
        self.shutdown.cancel();
    }
}

async fn start(token: Option<&str>) -> Server {
    start_with(token, HttpLimits::default()).await
}

async fn start_with(token: Option<&str>, limits: HttpLimits) -> Server {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let (dir, store) = common::temp_sqlite().await;
    serve_on(dir, store, token, limits, |s| s).await
}

/// The admin server over `store` (kept in `dir`), its state made with `configure`.
async fn serve_on(
    dir: tempfile::TempDir,
    store: Arc<dyn Store>,
    token: Option<&str>,
    limits: HttpLimits,
    configure: impl FnOnce(AdminSettings) -> AdminSettings,
) -> Server {
    let api = configure(AdminSettings::new(
        token.map(str::to_owned),
        ["web".to_owned(), "design".to_owned()],
    ))
    .build(store.clone());
    let shutdown = CancellationToken::new();
    let health = Health::new();
    let addr = serve_roles_with(
        "127.0.0.1:0".parse().unwrap(),
        health.clone(),
        shutdown.clone(),
        Some(api.clone()),
        limits,
    )
    .await
    .unwrap();
    Server {
        base: format!("http://{addr}"),
        addr,
        health,
        store,
        client: reqwest::Client::new(),
        shutdown,
        _dir: dir,
    }
}

impl Server {
    /// This server's store, served by a new admin state (token [`TOKEN`]) made with
    /// `configure`, as `jobwire run` makes it from the configuration; this one stops.
    async fn reconfigured(
        mut self,
        configure: impl FnOnce(AdminSettings) -> AdminSettings,
    ) -> Self {
        let dir = std::mem::replace(&mut self._dir, tempfile::tempdir().unwrap());
        let store = self.store.clone();
        drop(self);
        serve_on(dir, store, Some(TOKEN), HttpLimits::default(), configure).await
    }

    /// The status of `GET /healthz`, without a token.
    async fn healthz_status(&self) -> u16 {
        let r = self
            .client
            .get(format!("{}/healthz", self.base))
            .send()
            .await
            .unwrap();
        r.status().as_u16()
    }

    async fn get(&self, path: &str) -> (u16, Value) {
        let r = self
            .client
            .get(format!("{}{path}", self.base))
            .bearer_auth(TOKEN)
            .send()
            .await
            .unwrap();
        (r.status().as_u16(), r.json().await.unwrap())
    }

    async fn post(&self, path: &str, body: Option<Value>) -> (u16, Value) {
        let mut req = self
            .client
            .post(format!("{}{path}", self.base))
            .bearer_auth(TOKEN);
        if let Some(body) = body {
            req = req.json(&body);
        }
        let r = req.send().await.unwrap();
        (r.status().as_u16(), r.json().await.unwrap())
    }

    async fn add_post(&self, text: &str) -> PostId {
        let now = Utc::now();
        let channel = self.store.ensure_channel("freelance", now).await.unwrap();
        let outcome = self
            .store
            .insert_post(&NewPost {
                channel_id: channel.id,
                external_id: format!("{text:.20}-{}", now.timestamp_nanos_opt().unwrap()),
                text: text.to_owned(),
                author: None,
                url: None,
                posted_at: now,
                received_at: now,
                status: PostStatus::NotJob,
                filter_reason: None,
                fingerprint: None,
                duplicate_of: None,
            })
            .await
            .unwrap();
        match outcome {
            jobwire_store::InsertOutcome::Inserted(id) => id,
            other => panic!("post not inserted: {other:?}"),
        }
    }

    async fn add_report(&self, post_id: Option<PostId>, text: &str) -> ReportId {
        self.store
            .insert_report(
                &NewReport {
                    chat_id: 777,
                    post_id,
                    kind: ReportKind::Missed,
                    text: text.to_owned(),
                    link: None,
                },
                Utc::now(),
            )
            .await
            .unwrap()
    }

    async fn examples(&self) -> Vec<ExampleRow> {
        self.store.examples(ExampleId(0), 100).await.unwrap()
    }

    /// Accepts report `id` as a design job (the answer must be 200); the stored examples.
    async fn accept_as_design_job(&self, id: ReportId) -> Vec<ExampleRow> {
        let label = json!({"is_job": true, "kind": "job", "categories": ["design"]});
        let (code, body) = self
            .post(&format!("/api/reports/{id}/accept"), Some(label))
            .await;
        assert_eq!(code, 200, "{body}");
        self.examples().await
    }
}

fn job_label() -> Value {
    json!({"is_job": true, "kind": "job", "categories": ["web"]})
}

#[tokio::test]
async fn requests_without_the_right_token_are_refused() {
    let s = start(Some(TOKEN)).await;
    s.add_report(None, "Нужен разработчик на React, оплата 50к")
        .await;

    let r = s
        .client
        .get(format!("{}/api/reports", s.base))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 401);
    let body: Value = r.json().await.unwrap();
    assert!(body["error"].as_str().unwrap().contains("Bearer"), "{body}");

    let r = s
        .client
        .post(format!("{}/api/retrain", s.base))
        .bearer_auth("wrong-token")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 401);

    let (code, body) = s.get("/api/reports").await;
    assert_eq!(code, 200);
    assert_eq!(body["reports"].as_array().unwrap().len(), 1);
    assert_eq!(body["reports"][0]["status"], "pending");
    assert_eq!(body["reports"][0]["kind"], "missed");

    // Health stays open.
    assert_eq!(s.healthz_status().await, 200);
}

#[tokio::test]
async fn without_a_configured_token_only_a_panel_login_opens_the_api() {
    let s = start(None).await;
    let r = s
        .client
        .get(format!("{}/api/reports", s.base))
        .bearer_auth(TOKEN)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 401);
    let body: Value = r.json().await.unwrap();
    assert_eq!(
        body["error"],
        "log in to the panel at /login, or set JOBWIRE_ADMIN_TOKEN and send it as a bearer token",
        "{body}"
    );
}

#[tokio::test]
async fn accepting_a_report_stores_its_label_once() {
    let s = start(Some(TOKEN)).await;
    let text = "Ищем верстальщика лендинга, бюджет 30 000 ₽";
    let id = s.add_report(None, text).await;

    let (code, body) = s
        .post(&format!("/api/reports/{id}/accept"), Some(job_label()))
        .await;
    assert_eq!(code, 200, "{body}");
    assert_eq!(body["report"]["status"], "accepted");
    assert!(body["report"]["decided_at"].is_string());

    let examples = s.examples().await;
    assert_eq!(examples.len(), 1);
    let ex = &examples[0];
    assert_eq!(ex.source, ExampleSource::Report);
    assert_eq!(ex.text, text);
    assert!(ex.is_job);
    assert_eq!(ex.kind, jobwire_core::PostKind::Job);
    assert_eq!(ex.categories, ["web"]);
    assert_eq!(body["report"]["example_id"], ex.id.get());

    let (code, body) = s
        .post(&format!("/api/reports/{id}/accept"), Some(job_label()))
        .await;
    assert_eq!(code, 409, "{body}");
    assert!(
        body["error"].as_str().unwrap().contains("accepted"),
        "{body}"
    );
    let (code, _) = s.post(&format!("/api/reports/{id}/reject"), None).await;
    assert_eq!(code, 409);
    assert_eq!(s.examples().await.len(), 1);

    let (code, body) = s.get("/api/reports?status=accepted&limit=10").await;
    assert_eq!(code, 200);
    assert_eq!(body["reports"][0]["id"], id.get());
    let (_, body) = s.get("/api/reports?status=pending").await;
    assert!(body["reports"].as_array().unwrap().is_empty());
}

#[tokio::test]
async fn a_report_of_a_delivered_post_learns_from_the_post_not_the_card() {
    let s = start(Some(TOKEN)).await;
    let post_text = "Looking for a logo designer, $200 fixed";
    let post_id = s.add_post(post_text).await;
    // A `/wrong` reply quotes the delivered card: header, facts, the user's comment.
    let card = format!("🎨 Design · @channel\n💰 $200\n\n{post_text}\n\n// not design");
    let id = s.add_report(Some(post_id), &card).await;

    let examples = s.accept_as_design_job(id).await;
    assert_eq!(examples.len(), 1);
    assert_eq!(examples[0].text, post_text);
}

#[tokio::test]
async fn a_report_without_text_learns_from_its_post() {
    let s = start(Some(TOKEN)).await;
    let post_text = "Looking for a logo designer, $200 fixed";
    let post_id = s.add_post(post_text).await;
    let id = s.add_report(Some(post_id), "").await;

    let examples = s.accept_as_design_job(id).await;
    assert_eq!(examples.len(), 1);
    assert_eq!(examples[0].text, post_text);
    assert_eq!(examples[0].post_id, Some(post_id));
    assert_eq!(examples[0].source, ExampleSource::Report);
}

#[tokio::test]
async fn rejecting_a_report_stores_no_example() {
    let s = start(Some(TOKEN)).await;
    let id = s.add_report(None, "это не вакансия").await;
    let (code, body) = s.post(&format!("/api/reports/{id}/reject"), None).await;
    assert_eq!(code, 200, "{body}");
    assert_eq!(body["report"]["status"], "rejected");
    let report = s.store.report(id).await.unwrap().unwrap();
    assert_eq!(report.status, ReportStatus::Rejected);
    assert!(s.examples().await.is_empty());

    let (code, body) = s.post("/api/reports/999999/reject", None).await;
    assert_eq!(code, 404, "{body}");
    let (code, _) = s
        .post("/api/reports/999999/accept", Some(job_label()))
        .await;
    assert_eq!(code, 404);
}

#[tokio::test]
async fn bad_labels_are_refused_naming_the_bad_value() {
    let s = start(Some(TOKEN)).await;
    let id = s.add_report(None, "Нужен SMM-менеджер").await;

    let bad_category = json!({"is_job": true, "kind": "job", "categories": ["web", "smm-magic"]});
    let (code, body) = s
        .post(&format!("/api/reports/{id}/accept"), Some(bad_category))
        .await;
    assert_eq!(code, 400, "{body}");
    assert!(
        body["error"].as_str().unwrap().contains("smm-magic"),
        "{body}"
    );

    let bad_kind = json!({"is_job": false, "kind": "spam", "categories": []});
    let (code, body) = s
        .post(&format!("/api/reports/{id}/accept"), Some(bad_kind))
        .await;
    assert_eq!(code, 400, "{body}");
    assert!(body["error"].as_str().unwrap().contains("spam"), "{body}");

    let r = s
        .client
        .post(format!("{}/api/reports/{id}/accept", s.base))
        .bearer_auth(TOKEN)
        .header("content-type", "application/json")
        .body("{\"is_job\": tru")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 400);
    let body: Value = r.json().await.unwrap();
    assert!(body["error"].as_str().unwrap().contains("JSON"), "{body}");

    // Nothing was decided.
    let report = s.store.report(id).await.unwrap().unwrap();
    assert_eq!(report.status, ReportStatus::Pending);
    assert!(s.examples().await.is_empty());
}

#[tokio::test]
async fn relabeling_a_post_stores_a_relabel_example() {
    let s = start(Some(TOKEN)).await;
    let text = "Продам курс по фрилансу со скидкой";
    let post_id = s.add_post(text).await;

    let label = json!({"is_job": false, "kind": "ad", "categories": []});
    let (code, body) = s
        .post(&format!("/api/posts/{post_id}/label"), Some(label))
        .await;
    assert_eq!(code, 200, "{body}");
    let examples = s.examples().await;
    assert_eq!(examples.len(), 1);
    let ex = &examples[0];
    assert_eq!(ex.source, ExampleSource::Relabel);
    assert_eq!(ex.post_id, Some(post_id));
    assert_eq!(ex.text, text);
    assert!(!ex.is_job);
    assert_eq!(ex.kind, jobwire_core::PostKind::Ad);
    assert_eq!(body["example_id"], ex.id.get());

    let (code, body) = s.post("/api/posts/424242/label", Some(job_label())).await;
    assert_eq!(code, 404, "{body}");
}

#[tokio::test]
async fn retrain_is_requested_from_the_classifiers() {
    let s = start(Some(TOKEN)).await;
    let (code, body) = s.post("/api/retrain", None).await;
    assert_eq!(code, 202, "{body}");
    let requested = s
        .store
        .state_get(
            jobwire_classify::retrain::RETRAIN_REQUEST_NAMESPACE,
            jobwire_classify::retrain::RETRAIN_REQUEST_KEY,
        )
        .await
        .unwrap();
    assert!(requested.is_some());
}

/// Limits short enough for a test.
fn short_limits() -> HttpLimits {
    HttpLimits {
        header_read_timeout: Duration::from_secs(1),
        request_timeout: Duration::from_secs(1),
        ..HttpLimits::default()
    }
}

/// Reads what the server sends until it closes the connection; `None` when it is still open
/// after `within`.
async fn read_until_closed(conn: &mut TcpStream, within: Duration) -> Option<String> {
    let mut seen = Vec::new();
    let read = tokio::time::timeout(within, async {
        let mut buf = [0u8; 4096];
        loop {
            match conn.read(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(n) => seen.extend_from_slice(&buf[..n]),
            }
        }
    })
    .await;
    read.ok()
        .map(|()| String::from_utf8_lossy(&seen).into_owned())
}

#[tokio::test]
async fn half_sent_and_silent_connections_are_closed_while_others_are_served() {
    let s = start_with(Some(TOKEN), short_limits()).await;
    let started = Instant::now();
    let mut conns = Vec::new();
    for i in 0..50 {
        let mut conn = TcpStream::connect(s.addr).await.unwrap();
        conn.write_all(format!("GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow-{i}: ").as_bytes())
            .await
            .unwrap();
        conns.push(conn);
    }
    for _ in 0..10 {
        conns.push(TcpStream::connect(s.addr).await.unwrap());
    }
    // Others are still served meanwhile (another client: this one is at its limit of
    // connections, the ones over it were closed at once).
    let other = reqwest::Client::builder()
        .local_address("127.0.0.2".parse::<std::net::IpAddr>().unwrap())
        .build()
        .unwrap();
    let r = tokio::time::timeout(
        Duration::from_secs(5),
        other.get(format!("{}/healthz", s.base)).send(),
    )
    .await
    .expect("a normal request is answered while 60 connections hang")
    .unwrap();
    assert_eq!(r.status().as_u16(), 200);
    // The header-read timeout is 1 s: every hanging connection is closed soon after.
    for (i, conn) in conns.iter_mut().enumerate() {
        let left = Duration::from_secs(8).saturating_sub(started.elapsed());
        assert!(
            read_until_closed(conn, left).await.is_some(),
            "connection {i} still open {:?} after it started",
            started.elapsed()
        );
    }
}

#[tokio::test]
async fn a_request_whose_body_never_ends_gets_408() {
    let s = start_with(Some(TOKEN), short_limits()).await;
    let id = s.add_report(None, "Нужен дизайнер").await;
    let mut conn = TcpStream::connect(s.addr).await.unwrap();
    let head = format!(
        "POST /api/reports/{id}/accept HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {TOKEN}\r\n\
         Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{{\"is_job\": "
    );
    conn.write_all(head.as_bytes()).await.unwrap();
    let answer = read_until_closed(&mut conn, Duration::from_secs(8))
        .await
        .expect("the server gives up on the request");
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    let report = s.store.report(id).await.unwrap().unwrap();
    assert_eq!(report.status, ReportStatus::Pending);
}

#[tokio::test]
async fn connections_over_the_limit_wait_for_a_free_slot() {
    let limits = HttpLimits {
        max_connections: 3,
        ..HttpLimits::default()
    };
    let s = start_with(Some(TOKEN), limits).await;
    let mut held = Vec::new();
    for _ in 0..3 {
        held.push(TcpStream::connect(s.addr).await.unwrap());
    }
    let waiting = tokio::time::timeout(
        Duration::from_millis(800),
        s.client.get(format!("{}/healthz", s.base)).send(),
    )
    .await;
    assert!(waiting.is_err(), "served over the connection limit");
    drop(held);
    let r = tokio::time::timeout(
        Duration::from_secs(5),
        s.client.get(format!("{}/healthz", s.base)).send(),
    )
    .await
    .expect("served once a slot is free")
    .unwrap();
    assert_eq!(r.status().as_u16(), 200);
}

#[tokio::test]
async fn shutdown_stops_accepting_and_lets_the_request_in_flight_finish() {
    let s = start(Some(TOKEN)).await;
    let id = s.add_report(None, "Ищем дизайнера логотипа").await;
    let body = json!({"is_job": true, "kind": "job", "categories": ["design"]}).to_string();
    let (first, rest) = body.split_at(10);
    let mut conn = TcpStream::connect(s.addr).await.unwrap();
    let head = format!(
        "POST /api/reports/{id}/accept HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {TOKEN}\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\n\r\n{first}",
        body.len()
    );
    conn.write_all(head.as_bytes()).await.unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;
    s.shutdown.cancel();
    // New connections are refused soon.
    let deadline = Instant::now() + Duration::from_secs(5);
    while TcpStream::connect(s.addr).await.is_ok() {
        assert!(Instant::now() < deadline, "still accepting after shutdown");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    conn.write_all(rest.as_bytes()).await.unwrap();
    let answer = read_until_closed(&mut conn, Duration::from_secs(5))
        .await
        .expect("the connection is closed once the request is answered");
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    let report = s.store.report(id).await.unwrap().unwrap();
    assert_eq!(report.status, ReportStatus::Accepted);
}

#[tokio::test]
async fn readyz_names_the_dependency_that_is_down_but_not_its_error() {
    let s = start(Some(TOKEN)).await;
    s.health.set("queue", Ok(()));
    s.health.set(
        "database",
        Err("connecting to postgres://u:s3cr/et@db/x".to_owned()),
    );
    s.health.set(
        "feeds",
        Err("restarting after: error connecting to postgres://u:s3cr/et@db/x: refused".to_owned()),
    );
    s.health.set(
        "redis",
        Err("cannot reach postgres://u:s3cr/et@db/x (Connection refused)".to_owned()),
    );
    let r = s
        .client
        .get(format!("{}/readyz", s.base))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 503);
    let text = r.text().await.unwrap();
    for leaked in ["s3cr", "postgres://", "db/x", "refused"] {
        assert!(!text.contains(leaked), "{leaked} shown: {text}");
    }
    let body: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(
        body,
        json!({
            "ready": false,
            "components": {
                "queue": "ok",
                "database": "connecting",
                "feeds": "restarting",
                "redis": "down",
            }
        })
    );
}

#[tokio::test]
async fn a_short_admin_token_stops_the_start_up_without_showing_it() {
    let short = "0123456789abcdef0123456789abcde"; // 31 characters
    let (_dir, store) = common::temp_sqlite().await;
    let api = AdminSettings::new(Some(short.to_owned()), ["web".to_owned()]).build(store);
    let e = serve_with_admin(
        "127.0.0.1:0".parse().unwrap(),
        Health::new(),
        CancellationToken::new(),
        api,
    )
    .await
    .expect_err("a 31-character token is refused");
    let message = format!("{e:#}");
    assert!(message.contains("JOBWIRE_ADMIN_TOKEN"), "{message}");
    assert!(message.contains("at least 32 characters"), "{message}");
    assert!(!message.contains(short), "{message}");
    assert!(!message.contains('\n'), "{message}");

    // 32 characters are enough; an empty token, as an unset one, leaves only a panel login.
    let s = start(Some("0123456789abcdef0123456789abcdef")).await;
    let r = s
        .client
        .get(format!("{}/api/reports", s.base))
        .bearer_auth("0123456789abcdef0123456789abcdef")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 200);
    let s = start(Some("")).await;
    let (code, _) = s.get("/api/reports").await;
    assert_eq!(code, 401);
}

#[tokio::test]
async fn repeated_failures_from_one_client_get_429_and_others_are_unaffected() {
    let s = start(Some(TOKEN)).await;
    let other = reqwest::Client::builder()
        .local_address("127.0.0.2".parse::<std::net::IpAddr>().unwrap())
        .build()
        .unwrap();
    let url = format!("{}/api/reports", s.base);
    for _ in 0..5 {
        let r = s
            .client
            .get(&url)
            .bearer_auth("guess")
            .send()
            .await
            .unwrap();
        assert_eq!(r.status().as_u16(), 401);
    }
    // The right token from the same client is not even checked now.
    let r = s.client.get(&url).bearer_auth(TOKEN).send().await.unwrap();
    assert_eq!(r.status().as_u16(), 429);
    let retry_after: u64 = r.headers()["retry-after"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!((1..=60).contains(&retry_after), "{retry_after}");
    let body: Value = r.json().await.unwrap();
    assert!(
        body["error"].as_str().unwrap().contains("too many"),
        "{body}"
    );

    // Another client: its own failures count separately, and the right token works.
    let r = other.get(&url).bearer_auth("guess").send().await.unwrap();
    assert_eq!(r.status().as_u16(), 401);
    let r = other.get(&url).bearer_auth(TOKEN).send().await.unwrap();
    assert_eq!(r.status().as_u16(), 200);
    // Health stays open to the refused client.
    assert_eq!(s.healthz_status().await, 200);
}

/// A subscriber of the one category `cat`, nothing else set.
fn subscriber_in(chat: i64, cat: &str) -> jobwire_store::SubscriberSpec {
    jobwire_store::SubscriberSpec {
        chat_id: chat,
        name: None,
        categories: vec![jobwire_core::CategorySlug::parse(cat).unwrap()],
        include: vec![],
        exclude: vec![],
        paused: false,
        quiet_hours: None,
        min_budget: None,
    }
}

/// A Stars ledger entry of `chat` for `plan` (`nonce` when the payment used one).
fn ledger_entry(
    kind: jobwire_store::LedgerKind,
    chat: i64,
    charge: &str,
    plan: &str,
    nonce: Option<&str>,
    amount: i64,
) -> jobwire_store::NewLedgerEntry {
    jobwire_store::NewLedgerEntry {
        kind,
        charge_id: charge.to_owned(),
        provider_charge_id: None,
        chat_id: chat,
        plan_id: Some(plan.to_owned()),
        nonce: nonce.map(str::to_owned),
        amount,
        currency: "XTR".into(),
        is_recurring: false,
        is_first_recurring: false,
        subscription_expires_at: None,
        source: jobwire_store::LedgerSource::Update,
        raw: "{}".into(),
    }
}

/// The ledger over the API, and refunds: an unknown charge is 404, one refunded before 409,
/// one Telegram refuses 502 with Telegram's reason and nothing recorded; without the main
/// bot, 503.
#[tokio::test]
async fn payments_are_listed_and_refunds_refused_with_the_reason() {
    use jobwire_store::{Grant, LedgerKind};
    let server = start(Some(TOKEN)).await;
    let entry = |charge: &str, kind| ledger_entry(kind, 4242, charge, "week", None, 80);
    let grant = Grant {
        plan_id: "week".into(),
        categories: vec![],
        days: 7,
        renews: false,
        ends_at: None,
    };
    for charge in ["stxA", "stxB"] {
        server
            .store
            .apply_payment(&entry(charge, LedgerKind::Payment), &grant, Utc::now())
            .await
            .unwrap();
    }
    server
        .store
        .apply_refund(&entry("stxB", LedgerKind::Refunded), Utc::now())
        .await
        .unwrap();

    let (status, body) = server.get("/api/payments?chat_id=4242").await;
    assert_eq!(status, 200, "{body}");
    let kinds: Vec<_> = body["payments"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| format!("{}:{}", p["charge_id"], p["kind"]))
        .collect();
    assert_eq!(
        kinds,
        [
            "\"stxB\":\"refunded\"",
            "\"stxB\":\"payment\"",
            "\"stxA\":\"payment\""
        ]
    );

    let (status, body) = server.post("/api/payments/stxA/refund", None).await;
    assert_eq!(status, 503, "no main bot yet: {body}");
    let (status, body) = server.post("/api/payments/nope/refund", None).await;
    assert_eq!(status, 404, "{body}");
    let (status, body) = server.post("/api/payments/stxB/refund", None).await;
    assert_eq!(status, 409, "{body}");

    // Telegram does not know the charge: its reason comes back, nothing is recorded, and
    // the bot's token is not in the answer.
    let telegram = jobwire_testkit::telegram::FakeTelegram::start(
        "127.0.0.1:0".parse().unwrap(),
        jobwire_testkit::telegram::FakeTelegramConfig::default(),
    )
    .await
    .unwrap();
    let token = "555:MAINmainMAINmainMAINmainMAIN";
    let server = server
        .reconfigured(|s| s.main_bot(telegram.url(), token.to_owned().into()))
        .await;
    let (status, body) = server.post("/api/payments/stxA/refund", None).await;
    assert_eq!(status, 502, "{body}");
    assert!(
        body["error"].as_str().unwrap().contains("CHARGE_NOT_FOUND"),
        "{body}"
    );
    assert!(!body.to_string().contains("MAINmain"), "{body}");
    assert!(
        server
            .store
            .ledger_entry("stxA", LedgerKind::Refund)
            .await
            .unwrap()
            .is_none()
    );
}

#[tokio::test]
async fn broadcasts_are_checked_started_and_steered_over_the_api() {
    let s = start(Some(TOKEN)).await;
    let (code, body) = s
        .post("/api/broadcasts", Some(json!({"text": "<b>Hi</b>"})))
        .await;
    assert_eq!(code, 503, "no settings in this process: {body}");

    let db = s._dir.path().join("jobwire.db");
    let settings = jobwire::testbed::Bed::default()
        .settings("http://127.0.0.1:9/".parse().unwrap(), &db)
        .unwrap();
    let s = s
        .reconfigured(|a| a.broadcasts(settings.broadcast_setup()))
        .await;
    for (chat, cat) in [(1, "web"), (2, "web"), (3, "design")] {
        s.store
            .upsert_subscriber(&subscriber_in(chat, cat), Utc::now())
            .await
            .unwrap();
    }
    let (code, body) = s
        .post("/api/broadcasts", Some(json!({"text": "<b>Hi"})))
        .await;
    assert_eq!(code, 400);
    assert!(
        body["error"]
            .as_str()
            .unwrap()
            .contains("Telegram would refuse"),
        "{body}"
    );
    let (code, body) = s
        .post(
            "/api/broadcasts",
            Some(json!({"text": "<b>Hi</b>", "category": "nope"})),
        )
        .await;
    assert_eq!(code, 400, "{body}");
    let (code, body) = s
        .post(
            "/api/broadcasts",
            Some(json!({"text": "<b>Hi</b> &amp; welcome", "category": "web"})),
        )
        .await;
    assert_eq!(code, 201, "{body}");
    let b = &body["broadcast"];
    assert_eq!(
        (b["total"].as_u64(), b["status"].as_str()),
        (Some(2), Some("running"))
    );
    let id = b["id"].as_i64().unwrap();

    let (code, body) = s.get("/api/broadcasts").await;
    assert_eq!(code, 200);
    assert_eq!(body["broadcasts"].as_array().unwrap().len(), 1);
    let (code, body) = s.post(&format!("/api/broadcasts/{id}/pause"), None).await;
    assert_eq!(
        (code, body["broadcast"]["status"].as_str()),
        (200, Some("paused"))
    );
    let (code, _) = s.post(&format!("/api/broadcasts/{id}/pause"), None).await;
    assert_eq!(code, 200, "pausing a paused one changes nothing");
    let (code, body) = s.post(&format!("/api/broadcasts/{id}/cancel"), None).await;
    assert_eq!(
        (code, body["broadcast"]["status"].as_str()),
        (200, Some("canceled"))
    );
    let (code, body) = s.post(&format!("/api/broadcasts/{id}/resume"), None).await;
    assert_eq!(code, 409, "{body}");
    let (code, _) = s.post(&format!("/api/broadcasts/{id}/explode"), None).await;
    assert_eq!(code, 404);
    let (code, _) = s.get("/api/broadcasts/999").await;
    assert_eq!(code, 404);
}

#[tokio::test]
async fn placements_are_listed_and_decided_once_over_the_api() {
    use jobwire_store::{LedgerKind, PlacementDraft, PlacementStatus};
    let s = start(Some(TOKEN)).await;
    let chat = 515;
    let draft = PlacementDraft {
        lang: "ru".into(),
        title: Some("<script>alert(1)</script> Лендинг".into()),
        body: Some("Нужен лендинг на Tilda, макет готов, срок неделя.".into()),
        budget: Some(String::new()),
        contact: Some("@coffee_hr".into()),
        categories: vec![jobwire_core::CategorySlug::parse("web").unwrap()],
    };
    let pay = |id: jobwire_store::PlacementId, charge: &str, nonce: &str| {
        let entry = ledger_entry(
            LedgerKind::Payment,
            chat,
            charge,
            "placement",
            Some(nonce),
            100,
        );
        let store = s.store.clone();
        async move {
            store
                .apply_placement_payment(&entry, Some(id), Some(true), Utc::now())
                .await
                .unwrap()
        }
    };
    let mut ids = Vec::new();
    for (charge, nonce) in [("ch-1", "nonce0001"), ("ch-2", "nonce0002")] {
        let p = s
            .store
            .save_placement_draft(chat, &draft, Utc::now())
            .await
            .unwrap();
        s.store
            .invoice_placement(p.id, chat, 100, nonce, Utc::now())
            .await
            .unwrap()
            .unwrap();
        pay(p.id, charge, nonce).await;
        ids.push(p.id);
    }

    let (code, body) = s.get("/api/placements?status=awaiting_approval").await;
    assert_eq!(code, 200, "{body}");
    let list = body["placements"].as_array().unwrap();
    assert_eq!(list.len(), 2);
    assert_eq!(
        list[0]["title"], "<script>alert(1)</script> Лендинг",
        "JSON keeps the text as text"
    );
    assert_eq!(list[0]["budget"], Value::Null, "no budget stated");
    assert_eq!(list[0]["categories"], json!(["web"]));
    let (code, body) = s.get("/api/placements?status=paid").await;
    assert_eq!(code, 400);
    assert!(
        body["error"]
            .as_str()
            .unwrap()
            .contains("awaiting_approval"),
        "{body}"
    );

    let (code, body) = s
        .post(&format!("/api/placements/{}/approve", ids[0]), None)
        .await;
    assert_eq!(
        (code, body["placement"]["status"].as_str()),
        (200, Some("approved")),
        "{body}"
    );
    let (code, body) = s
        .post(&format!("/api/placements/{}/refuse", ids[0]), None)
        .await;
    assert_eq!(code, 409, "decided once: {body}");
    assert!(
        body["error"].as_str().unwrap().contains("approved"),
        "{body}"
    );
    let (code, _) = s
        .post(
            &format!("/api/placements/{}/refuse", ids[1]),
            Some(json!({"reason": "x".repeat(501)})),
        )
        .await;
    assert_eq!(code, 400);
    let (code, body) = s
        .post(
            &format!("/api/placements/{}/refuse", ids[1]),
            Some(json!({"reason": "нет сроков"})),
        )
        .await;
    assert_eq!(code, 200, "{body}");
    assert_eq!(body["placement"]["status"], "refused");
    assert_eq!(body["placement"]["reason"], "нет сроков");
    assert_eq!(
        s.store.placement(ids[1]).await.unwrap().unwrap().status,
        PlacementStatus::Refused
    );
    let (code, _) = s.post("/api/placements/999/approve", None).await;
    assert_eq!(code, 404);
    let (code, _) = s
        .post(&format!("/api/placements/{}/publish", ids[0]), None)
        .await;
    assert_eq!(code, 404);
    let (code, body) = s.get(&format!("/api/placements/{}", ids[1])).await;
    assert_eq!(
        (code, body["placement"]["charge_id"].as_str()),
        (200, Some("ch-2"))
    );
    // Without the token: refused like every route.
    let r = s
        .client
        .get(format!("{}/api/placements", s.base))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 401);
}

#[tokio::test]
async fn a_broadcast_audience_is_chosen_by_language_plan_and_category() {
    use jobwire_store::{Grant, LedgerKind};
    let s = start(Some(TOKEN)).await;
    let db = s._dir.path().join("jobwire.db");
    let mut settings = jobwire::testbed::Bed::default()
        .settings("http://127.0.0.1:9/".parse().unwrap(), &db)
        .unwrap();
    settings.billing.plans = vec![jobwire_core::billing::Plan {
        id: jobwire_core::billing::PlanId::parse("month").unwrap(),
        title: "Month".into(),
        stars: 250,
        days: 30,
        categories: vec![],
        provider_price: None,
    }];
    let s = s
        .reconfigured(|a| a.broadcasts(settings.broadcast_setup()))
        .await;
    for (chat, cat) in [(1, "web"), (2, "web"), (3, "design"), (4, "web")] {
        s.store
            .upsert_subscriber(&subscriber_in(chat, cat), Utc::now())
            .await
            .unwrap();
    }
    // Chats 2 and 3 read English; 1 and 3 pay for the month plan; 4 paid once, refunded.
    for chat in [2, 3] {
        s.store
            .set_chat_language(chat, "en", Utc::now())
            .await
            .unwrap();
    }
    for (chat, charge) in [(1, "c1"), (3, "c3"), (4, "c4")] {
        let entry = ledger_entry(LedgerKind::Payment, chat, charge, "month", None, 250);
        let grant = Grant {
            plan_id: "month".into(),
            categories: vec![],
            days: 30,
            renews: false,
            ends_at: None,
        };
        s.store
            .apply_payment(&entry, &grant, Utc::now())
            .await
            .unwrap();
    }
    let refund = ledger_entry(LedgerKind::Refund, 4, "c4", "month", None, 250);
    s.store.apply_refund(&refund, Utc::now()).await.unwrap();
    let total = |body: &Value| body["broadcast"]["total"].as_u64();
    let cases = [
        (json!({"text": "to English readers", "language": "en"}), 2),
        (json!({"text": "to Russian readers", "language": "ru"}), 2),
        (json!({"text": "to the month plan", "plan": "month"}), 2),
        (
            json!({"text": "to English web readers", "language": "en", "category": "web"}),
            1,
        ),
        (
            json!({"text": "to English payers", "language": "en", "plan": "month"}),
            1,
        ),
        (json!({"text": "to everyone"}), 4),
    ];
    for (ask, expected) in cases {
        let (code, body) = s.post("/api/broadcasts", Some(ask.clone())).await;
        assert_eq!(code, 201, "{ask}: {body}");
        assert_eq!(total(&body), Some(expected), "{ask}: {body}");
    }
    let (code, body) = s
        .post(
            "/api/broadcasts",
            Some(json!({"text": "x", "plan": "year"})),
        )
        .await;
    assert_eq!(code, 400, "{body}");
}

/// As `jobwire run` serves it: health at once, the admin paths 503 until the store connects,
/// then the panel and the API over the one state built from the settings and the store.
#[tokio::test]
async fn the_admin_routes_answer_once_their_state_is_built() {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let settings = AdminSettings::new(Some(TOKEN.to_owned()), ["web".to_owned()]);
    let shutdown = CancellationToken::new();
    let served = serve_admin_later(
        "127.0.0.1:0".parse().unwrap(),
        Health::new(),
        shutdown.clone(),
        Some(&settings),
        HttpLimits::default(),
    )
    .await
    .unwrap();
    let (addr, mount) = (served.addr, served.mount);
    let mount = mount.expect("the admin role is mounted later");
    let client = reqwest::Client::new();
    let get = |path: &str| {
        client
            .get(format!("http://{addr}{path}"))
            .bearer_auth(TOKEN)
            .send()
    };
    assert_eq!(get("/healthz").await.unwrap().status().as_u16(), 200);
    let early = get("/api/reports").await.unwrap();
    assert_eq!(early.status().as_u16(), 503);
    assert!(early.text().await.unwrap().contains("database"));
    assert_eq!(get("/login").await.unwrap().status().as_u16(), 503);

    let (_dir, store) = common::temp_sqlite().await;
    mount.mount(settings.build(store));
    let r = get("/api/reports").await.unwrap();
    assert_eq!(r.status().as_u16(), 200);
    let login = get("/login").await.unwrap();
    assert_eq!(login.status().as_u16(), 200);
    assert!(login.text().await.unwrap().contains("name=\"password\""));
    assert_eq!(get("/healthz").await.unwrap().status().as_u16(), 200);
    shutdown.cancel();
}
