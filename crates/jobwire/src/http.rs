//! The one way jobwire serves HTTP: the health, metrics and admin server ([`crate::server`])
//! and the bots' webhook server ([`crate::roles::start_bots`]) both run [`spawn`].
//!
//! Every connection is bounded: a client must send a request's headers within
//! [`HttpLimits::header_read_timeout`] (also between requests on a kept-alive connection),
//! a request is answered `408 Request Timeout` when it is not done within
//! [`HttpLimits::request_timeout`] (a body sent too slowly included), and at most
//! [`HttpLimits::max_connections`] connections are open at once (the next ones wait in the
//! listen backlog until one closes). Requests carry the peer's address as
//! `ConnectInfo<SocketAddr>`. HTTP/1.1 only.
//!
//! On shutdown the server stops accepting, lets the requests in flight finish (each bounded by
//! the timeouts above), closes idle connections, and its task ends when the last one closed.

use std::net::SocketAddr;
use std::pin::pin;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::http::StatusCode;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use tower::Service;
use tower_http::timeout::TimeoutLayer;

/// How long clients may take and how many may be connected at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HttpLimits {
    /// Time to send a request's headers, from the connection's start or the previous answer.
    pub header_read_timeout: Duration,
    /// Time for a whole request (its body included) to be answered; then `408`.
    pub request_timeout: Duration,
    /// Connections open at once.
    pub max_connections: usize,
}

impl HttpLimits {
    /// 10 s to send the headers.
    pub const DEFAULT_HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);
    /// 30 s per request.
    pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(30);
    /// 512 connections at once.
    pub const DEFAULT_MAX_CONNECTIONS: usize = 512;
}

impl Default for HttpLimits {
    fn default() -> Self {
        Self {
            header_read_timeout: Self::DEFAULT_HEADER_READ_TIMEOUT,
            request_timeout: Self::DEFAULT_REQUEST_TIMEOUT,
            max_connections: Self::DEFAULT_MAX_CONNECTIONS,
        }
    }
}

/// Serves `app` on `listener` with `limits` until `shutdown`, in a task of its own (named
/// `name` in logs). The task ends once every connection has closed after shutdown.
pub fn spawn(
    listener: TcpListener,
    app: Router,
    limits: HttpLimits,
    shutdown: CancellationToken,
    name: &'static str,
) -> JoinHandle<()> {
    tokio::spawn(serve(listener, app, limits, shutdown, name))
}

/// [`spawn`] without the task: returns after shutdown, once every connection has closed.
pub async fn serve(
    listener: TcpListener,
    app: Router,
    limits: HttpLimits,
    shutdown: CancellationToken,
    name: &'static str,
) {
    let app = app.layer(TimeoutLayer::with_status_code(
        StatusCode::REQUEST_TIMEOUT,
        limits.request_timeout,
    ));
    let mut make_service = app.into_make_service_with_connect_info::<SocketAddr>();
    let mut builder = http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_read_timeout);
    let slots = Arc::new(Semaphore::new(limits.max_connections.max(1)));
    let connections = TaskTracker::new();
    loop {
        let slot = tokio::select! {
            biased;
            () = shutdown.cancelled() => break,
            slot = slots.clone().acquire_owned() => match slot {
                Ok(slot) => slot,
                Err(_) => break,
            },
        };
        let (stream, peer) = tokio::select! {
            biased;
            () = shutdown.cancelled() => break,
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(e) => {
                    if !is_connection_error(&e) {
                        // Out of file descriptors and the like: wait a little, then retry.
                        tracing::warn!(server = name, error = %e, "accept failed");
                        tokio::select! {
                            () = shutdown.cancelled() => break,
                            () = tokio::time::sleep(Duration::from_secs(1)) => {}
                        }
                    }
                    continue;
                }
            },
        };
        let service = match make_service.call(peer).await {
            Ok(service) => service,
            Err(never) => match never {},
        };
        let connection =
            builder.serve_connection(TokioIo::new(stream), TowerToHyperService::new(service));
        let shutdown = shutdown.clone();
        connections.spawn(async move {
            let _slot = slot;
            let mut connection = pin!(connection);
            let result = tokio::select! {
                result = connection.as_mut() => result,
                () = shutdown.cancelled() => {
                    // Finish the request in flight (if any), then close.
                    connection.as_mut().graceful_shutdown();
                    connection.await
                }
            };
            if let Err(e) = result {
                tracing::debug!(server = name, %peer, error = %e, "connection ended");
            }
        });
    }
    drop(listener);
    connections.close();
    connections.wait().await;
    tracing::debug!(server = name, "stopped");
}

/// Errors of one incoming connection (not of the listener): accept the next one at once.
fn is_connection_error(e: &std::io::Error) -> bool {
    use std::io::ErrorKind;
    matches!(
        e.kind(),
        ErrorKind::ConnectionRefused | ErrorKind::ConnectionAborted | ErrorKind::ConnectionReset
    )
}
