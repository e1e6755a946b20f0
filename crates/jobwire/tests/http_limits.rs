//! The HTTP servers against misbehaving clients (issue 26): pipelining clients that never
//! read, one client opening every connection, `X-Forwarded-For` from strangers and from a
//! trusted proxy, and repeated 401s. The admin server on 127.0.0.1:0 with a SQLite store;
//! other clients bind 127.0.0.2 and up (all of 127/8 is loopback).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::net::{IpAddr, SocketAddr};
use std::time::{Duration, Instant};

use axum::Router;
use axum::http::StatusCode;
use jobwire::http::HttpLimits;
use jobwire::server::{Health, serve_roles_with};
use jobwire_admin::AdminSettings;
use reqwest012 as reqwest;
use tokio::io::AsyncWriteExt;
use tokio::net::{TcpSocket, TcpStream};
use tokio_util::sync::CancellationToken;

const TOKEN: &str = "s3cret-admin-token-0123456789abcdef";

struct Server {
    addr: SocketAddr,
    shutdown: CancellationToken,
    _dir: tempfile::TempDir,
}

impl Drop for Server {
    fn drop(&mut self) {
        self.shutdown.cancel();
    }
}

async fn start(limits: HttpLimits) -> Server {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let (dir, store) = common::temp_sqlite().await;
    let api = AdminSettings::new(Some(TOKEN.to_owned()), ["web".to_owned()]).build(store);
    let shutdown = CancellationToken::new();
    let addr = serve_roles_with(
        "127.0.0.1:0".parse().unwrap(),
        Health::new(),
        shutdown.clone(),
        Some(api),
        limits,
    )
    .await
    .unwrap();
    Server {
        addr,
        shutdown,
        _dir: dir,
    }
}

/// A client whose connections come from `ip` (a loopback address).
fn client_from(ip: &str) -> reqwest::Client {
    reqwest::Client::builder()
        .local_address(ip.parse::<IpAddr>().unwrap())
        .timeout(Duration::from_secs(5))
        .build()
        .unwrap()
}

/// A connection from `ip` that asks for `/static/htmx.min.js` `n` times at once and never
/// reads an answer.
async fn non_reader(addr: SocketAddr, ip: &str, n: usize) -> Option<TcpStream> {
    let socket = TcpSocket::new_v4().unwrap();
    socket
        .bind(SocketAddr::new(ip.parse().unwrap(), 0))
        .unwrap();
    let mut conn = socket.connect(addr).await.ok()?;
    let request = "GET /static/htmx.min.js HTTP/1.1\r\nHost: x\r\n\r\n".repeat(n);
    // The server may close it at once (too many from this client): that is fine.
    let _ = conn.write_all(request.as_bytes()).await;
    Some(conn)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn healthz_answers_during_a_flood_of_pipelining_clients_that_never_read() {
    let limits = HttpLimits {
        max_connections: 64,
        write_timeout: Duration::from_secs(2),
        ..HttpLimits::default()
    };
    let s = start(limits).await;
    // 70 connections from one client (more than every slot), 400 answers of ~50 KB each
    // asked on every one: far more than the sockets' buffers hold.
    let mut flood = Vec::new();
    for _ in 0..70 {
        if let Some(c) = non_reader(s.addr, "127.0.0.1", 400).await {
            flood.push(c);
        }
    }
    // Another client is served meanwhile.
    let other = client_from("127.0.0.2");
    let r = other
        .get(format!("http://{}/healthz", s.addr))
        .send()
        .await
        .expect("/healthz answers during the flood");
    assert_eq!(r.status(), StatusCode::OK);
    // The flooding client's stalled connections are cut after the write timeout, so even
    // it is served again soon (it was at its connection limit until then).
    let same = client_from("127.0.0.1");
    let started = Instant::now();
    loop {
        if let Ok(r) = same.get(format!("http://{}/healthz", s.addr)).send().await
            && r.status() == StatusCode::OK
        {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "the non-reading connections still hold the client's places"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    drop(flood);
}

#[tokio::test]
async fn one_client_cannot_take_every_connection() {
    let limits = HttpLimits {
        max_connections: 8,
        max_connections_per_client: 3,
        ..HttpLimits::default()
    };
    let s = start(limits).await;
    // Idle connections from 127.0.0.1: only 3 stay; the others are closed at once.
    let mut held = Vec::new();
    for _ in 0..10 {
        held.push(TcpStream::connect(s.addr).await.unwrap());
    }
    for ip in ["127.0.0.2", "127.0.0.3"] {
        let r = client_from(ip)
            .get(format!("http://{}/healthz", s.addr))
            .send()
            .await
            .unwrap_or_else(|e| panic!("{ip} is served: {e}"));
        assert_eq!(r.status(), StatusCode::OK);
    }
    drop(held);
}

/// Five wrong tokens from `forwarded` (as a proxy says), then the right one from `then`.
async fn guess_then_right(
    s: &Server,
    forwarded: &str,
    then: &str,
) -> (Vec<StatusCode>, StatusCode) {
    let client = client_from("127.0.0.1");
    let url = format!("http://{}/api/reports", s.addr);
    let mut statuses = Vec::new();
    for _ in 0..5 {
        let r = client
            .get(&url)
            .bearer_auth("guess")
            .header("x-forwarded-for", forwarded)
            .send()
            .await
            .unwrap();
        statuses.push(r.status());
    }
    let r = client
        .get(&url)
        .bearer_auth(TOKEN)
        .header("x-forwarded-for", then)
        .send()
        .await
        .unwrap();
    (statuses, r.status())
}

#[tokio::test]
async fn behind_a_trusted_proxy_the_forwarded_client_is_throttled_not_everyone() {
    let limits = HttpLimits {
        trusted_proxies: vec![jobwire::http::parse_trusted_proxy("127.0.0.0/8").unwrap()],
        ..HttpLimits::default()
    };
    let s = start(limits).await;
    let (guesses, owner) = guess_then_right(&s, "203.0.113.1", "203.0.113.2").await;
    assert!(guesses.iter().all(|c| *c == StatusCode::UNAUTHORIZED));
    assert_eq!(owner, StatusCode::OK, "another client behind the proxy");
    let (_, guesser) = guess_then_right(&s, "203.0.113.1", "203.0.113.1").await;
    assert_eq!(guesser, StatusCode::TOO_MANY_REQUESTS);
}

#[tokio::test]
async fn x_forwarded_for_from_an_untrusted_peer_is_ignored() {
    let s = start(HttpLimits::default()).await;
    // The guesser cannot dodge its limit by naming another client.
    let (guesses, dodged) = guess_then_right(&s, "203.0.113.1", "203.0.113.2").await;
    assert!(guesses.iter().all(|c| *c == StatusCode::UNAUTHORIZED));
    assert_eq!(dodged, StatusCode::TOO_MANY_REQUESTS);
}

#[tokio::test]
async fn repeated_401s_are_slowed_down_per_client() {
    // A stand-in for the webhook: 401 unless the secret header is right.
    let app = Router::new().route(
        "/telegram/{bot}",
        axum::routing::post(|headers: axum::http::HeaderMap| async move {
            if headers
                .get("x-telegram-bot-api-secret-token")
                .is_some_and(|v| v == "right-secret")
            {
                StatusCode::OK
            } else {
                StatusCode::UNAUTHORIZED
            }
        }),
    );
    let app = jobwire::http::slow_down_unauthorized(app, "webhook server");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let shutdown = CancellationToken::new();
    jobwire::http::spawn(
        listener,
        app,
        HttpLimits::default(),
        shutdown.clone(),
        "webhook server",
    );
    let post = |client: reqwest::Client, secret: &'static str| async move {
        client
            .post(format!("http://{addr}/telegram/main"))
            .header("x-telegram-bot-api-secret-token", secret)
            .body("{}")
            .send()
            .await
            .unwrap()
    };
    let guesser = client_from("127.0.0.1");
    for _ in 0..jobwire::http::FREE_UNAUTHORIZED {
        assert_eq!(
            post(guesser.clone(), "guess").await.status(),
            StatusCode::UNAUTHORIZED
        );
    }
    // Now slowed down: refused unread, even with the right secret, until its wait ends.
    let r = post(guesser.clone(), "right-secret").await;
    assert_eq!(r.status(), StatusCode::TOO_MANY_REQUESTS);
    let wait: u64 = r.headers()["retry-after"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!((1..=2).contains(&wait), "{wait}");
    // Telegram (another client) is not affected.
    let telegram = client_from("127.0.0.2");
    assert_eq!(
        post(telegram, "right-secret").await.status(),
        StatusCode::OK
    );
    shutdown.cancel();
}
