//! The one way jobwire serves HTTP: the health, metrics and admin server ([`crate::server`])
//! and the bots' webhook server ([`crate::roles::start_bots`]) both run [`spawn`].
//!
//! Every connection is bounded: a client must send a request's headers within
//! [`HttpLimits::header_read_timeout`] (also between requests on a kept-alive connection),
//! a request is answered `408 Request Timeout` when it is not done within
//! [`HttpLimits::request_timeout`] (a body sent too slowly included), and a client that
//! stops taking the answer's bytes is cut off [`HttpLimits::write_timeout`] after it
//! stopped (a pipelining client that never reads included). At most
//! [`HttpLimits::max_connections`] connections are open at once (the next ones wait in the
//! listen backlog until one closes), and at most [`HttpLimits::max_connections_per_client`]
//! of them from one client (an IP address, an IPv6 /64): the next ones from it are closed at
//! once, so one client cannot take every slot. HTTP/1.1 only.
//!
//! Requests carry the client's address as `ConnectInfo<SocketAddr>`: the peer's, or, when
//! the peer is one of [`HttpLimits::trusted_proxies`] (`[admin] trusted_proxies`), the
//! address its `X-Forwarded-For` names (the right-most one that is not a trusted proxy;
//! port 0). A trusted proxy is not bound by the per-client connection limit. Without
//! trusted proxies `X-Forwarded-For` is never read.
//!
//! On shutdown the server stops accepting, lets the requests in flight finish (each bounded by
//! the timeouts above), closes idle connections, and its task ends when the last one closed.

use std::collections::HashMap;
use std::future::Future;
use std::io;
use std::net::{IpAddr, SocketAddr};
use std::pin::{Pin, pin};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::Router;
use axum::extract::{ConnectInfo, Request};
use axum::http::{HeaderMap, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use ipnet::IpNet;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tokio::task::JoinHandle;
use tokio::time::Sleep;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use tower::Service;
use tower_http::timeout::TimeoutLayer;

/// How long clients may take, how many may be connected at once, and which peers are
/// proxies whose `X-Forwarded-For` is believed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpLimits {
    /// Time to send a request's headers, from the connection's start or the previous answer.
    pub header_read_timeout: Duration,
    /// Time for a whole request (its body included) to be answered; then `408`.
    pub request_timeout: Duration,
    /// Time a client may leave the answer's bytes untaken (from the moment the server had
    /// to wait for it, until it sends its next request); then the connection is closed.
    pub write_timeout: Duration,
    /// Connections open at once.
    pub max_connections: usize,
    /// Connections open at once from one client (IP address, IPv6 /64), trusted proxies
    /// excepted.
    pub max_connections_per_client: usize,
    /// Peers whose `X-Forwarded-For` names the client (`[admin] trusted_proxies`).
    pub trusted_proxies: Vec<IpNet>,
}

impl HttpLimits {
    /// 10 s to send the headers.
    pub const DEFAULT_HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);
    /// 30 s per request.
    pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(30);
    /// 30 s to take an answer.
    pub const DEFAULT_WRITE_TIMEOUT: Duration = Duration::from_secs(30);
    /// 512 connections at once.
    pub const DEFAULT_MAX_CONNECTIONS: usize = 512;
    /// 32 connections at once from one client.
    pub const DEFAULT_MAX_CONNECTIONS_PER_CLIENT: usize = 32;

    fn trusts(&self, ip: IpAddr) -> bool {
        let ip = ip.to_canonical();
        self.trusted_proxies.iter().any(|net| net.contains(&ip))
    }
}

impl Default for HttpLimits {
    fn default() -> Self {
        Self {
            header_read_timeout: Self::DEFAULT_HEADER_READ_TIMEOUT,
            request_timeout: Self::DEFAULT_REQUEST_TIMEOUT,
            write_timeout: Self::DEFAULT_WRITE_TIMEOUT,
            max_connections: Self::DEFAULT_MAX_CONNECTIONS,
            max_connections_per_client: Self::DEFAULT_MAX_CONNECTIONS_PER_CLIENT,
            trusted_proxies: Vec::new(),
        }
    }
}

/// A trusted proxy given as an IP address (`10.0.0.1`, a /32 or /128) or a CIDR network
/// (`10.0.0.0/8`, `fd00::/8`).
pub fn parse_trusted_proxy(raw: &str) -> Result<IpNet, String> {
    let raw = raw.trim();
    raw.parse::<IpNet>()
        .map(|net| net.trunc())
        .or_else(|_| raw.parse::<IpAddr>().map(IpNet::from))
        .map_err(|_| format!("{raw:?} is not an IP address or a CIDR network (10.0.0.0/8)"))
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
    let limits = Arc::new(limits);
    let app = app
        .layer(TimeoutLayer::with_status_code(
            StatusCode::REQUEST_TIMEOUT,
            limits.request_timeout,
        ))
        .layer(middleware::from_fn_with_state(
            limits.clone(),
            client_address,
        ));
    let mut make_service = app.into_make_service_with_connect_info::<SocketAddr>();
    let mut builder = http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_read_timeout);
    let slots = Arc::new(Semaphore::new(limits.max_connections.max(1)));
    let per_client = Arc::new(PerClient::default());
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
        let client_slot = if limits.trusts(peer.ip()) {
            None
        } else {
            match per_client.take(peer.ip(), limits.max_connections_per_client) {
                Some(taken) => Some(taken),
                None => {
                    // Closed at once: its slot goes back to the others.
                    metrics::counter!(REFUSED_CONNECTIONS_TOTAL, "server" => name).increment(1);
                    tracing::debug!(server = name, %peer, "too many connections from one client; closed");
                    continue;
                }
            }
        };
        let service = match make_service.call(peer).await {
            Ok(service) => service,
            Err(never) => match never {},
        };
        let io = WriteDeadline::new(stream, limits.write_timeout);
        let connection =
            builder.serve_connection(TokioIo::new(io), TowerToHyperService::new(service));
        let shutdown = shutdown.clone();
        connections.spawn(async move {
            let _slot = slot;
            let _client_slot = client_slot;
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

/// Failed attempts (401) of one client before its next ones are slowed down
/// ([`slow_down_unauthorized`]).
pub const FREE_UNAUTHORIZED: u32 = 5;
/// The longest wait of a slowed-down client between two attempts.
pub const UNAUTHORIZED_MAX_WAIT: Duration = Duration::from_secs(60);
/// A client's 401s are forgotten this long after the last one.
pub const UNAUTHORIZED_FORGET_AFTER: Duration = Duration::from_secs(15 * 60);

/// `app` whose `401` answers are slowed down per client (the webhook's wrong secrets):
/// after [`FREE_UNAUTHORIZED`] of them, the client waits 1 s, 2 s, 4 s, … (up to
/// [`UNAUTHORIZED_MAX_WAIT`]) after each next one, and meanwhile gets `429` with
/// `Retry-After` without its request being looked at. Other clients are not affected.
pub fn slow_down_unauthorized(app: Router, name: &'static str) -> Router {
    let limiter = Arc::new((
        jobwire_admin::FailedAttempts::new(
            FREE_UNAUTHORIZED,
            UNAUTHORIZED_MAX_WAIT,
            UNAUTHORIZED_FORGET_AFTER,
            10_000,
        ),
        name,
    ));
    app.layer(middleware::from_fn_with_state(
        limiter,
        unauthorized_throttle,
    ))
}

type Throttle = (jobwire_admin::FailedAttempts, &'static str);

async fn unauthorized_throttle(
    axum::extract::State(limiter): axum::extract::State<Arc<Throttle>>,
    request: Request,
    next: Next,
) -> Response {
    let (failures, name) = &*limiter;
    let client = jobwire_admin::Client::new(
        request
            .extensions()
            .get::<ConnectInfo<SocketAddr>>()
            .map(|ConnectInfo(a)| a.ip()),
    );
    if let Some(wait) = failures.blocked(&client, std::time::Instant::now()) {
        let secs = (wait.as_secs() + u64::from(wait.subsec_nanos() > 0)).max(1);
        let mut r = (StatusCode::TOO_MANY_REQUESTS, "too many failed attempts").into_response();
        r.headers_mut()
            .insert(axum::http::header::RETRY_AFTER, secs.into());
        return r;
    }
    let response = next.run(request).await;
    if response.status() == StatusCode::UNAUTHORIZED {
        if failures.failed(client, std::time::Instant::now()) {
            tracing::warn!(server = name, %client, "too many failed attempts; slowing this client down");
        }
    } else if response.status().is_success() {
        failures.succeeded(&client);
    }
    response
}

/// `jobwire_http_refused_connections_total{server}`: connections closed at once because
/// their client had too many open.
pub const REFUSED_CONNECTIONS_TOTAL: &str = "jobwire_http_refused_connections_total";

/// Errors of one incoming connection (not of the listener): accept the next one at once.
fn is_connection_error(e: &std::io::Error) -> bool {
    use std::io::ErrorKind;
    matches!(
        e.kind(),
        ErrorKind::ConnectionRefused | ErrorKind::ConnectionAborted | ErrorKind::ConnectionReset
    )
}

/// A client's key for the connection limit: its address, IPv6 cut to its /64.
fn client_key(ip: IpAddr) -> IpAddr {
    match ip.to_canonical() {
        IpAddr::V6(v6) => {
            let mut octets = v6.octets();
            octets[8..].fill(0);
            IpAddr::from(octets)
        }
        v4 => v4,
    }
}

/// Open connections per client.
#[derive(Debug, Default)]
struct PerClient {
    open: Mutex<HashMap<IpAddr, usize>>,
}

/// One open connection of a client; dropping it gives the place back.
struct ClientSlot {
    owner: Arc<PerClient>,
    key: IpAddr,
}

impl PerClient {
    fn take(self: &Arc<Self>, ip: IpAddr, max: usize) -> Option<ClientSlot> {
        let key = client_key(ip);
        let mut open = self.open.lock().ok()?;
        let n = open.entry(key).or_insert(0);
        if *n >= max.max(1) {
            return None;
        }
        *n += 1;
        Some(ClientSlot {
            owner: self.clone(),
            key,
        })
    }
}

impl Drop for ClientSlot {
    fn drop(&mut self) {
        if let Ok(mut open) = self.owner.open.lock()
            && let Some(n) = open.get_mut(&self.key)
        {
            *n = n.saturating_sub(1);
            if *n == 0 {
                open.remove(&self.key);
            }
        }
    }
}

/// Replaces the request's `ConnectInfo` by the client's address: the peer's, or the one a
/// trusted proxy forwarded.
async fn client_address(
    axum::extract::State(limits): axum::extract::State<Arc<HttpLimits>>,
    mut request: Request,
    next: Next,
) -> Response {
    if let Some(ConnectInfo(peer)) = request
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .copied()
    {
        let client = client_of(peer, request.headers(), &limits);
        if client != peer {
            request.extensions_mut().insert(ConnectInfo(client));
        }
    }
    next.run(request).await
}

/// The client behind `peer`: `peer` itself unless it is a trusted proxy; then the
/// right-most address of `X-Forwarded-For` that is not a trusted proxy (an unreadable entry
/// stops the walk at the last trusted hop).
fn client_of(peer: SocketAddr, headers: &HeaderMap, limits: &HttpLimits) -> SocketAddr {
    if !limits.trusts(peer.ip()) {
        return peer;
    }
    let hops: Vec<&str> = headers
        .get_all("x-forwarded-for")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(str::trim)
        .collect();
    let mut client = peer.ip();
    for hop in hops.iter().rev() {
        let Some(ip) = parse_hop(hop) else { break };
        client = ip;
        if !limits.trusts(ip) {
            break;
        }
    }
    if client == peer.ip() {
        peer
    } else {
        SocketAddr::new(client, 0)
    }
}

/// One `X-Forwarded-For` entry: `1.2.3.4`, `1.2.3.4:5678`, `2001:db8::1`, `[2001:db8::1]:5678`.
fn parse_hop(hop: &str) -> Option<IpAddr> {
    hop.parse::<IpAddr>()
        .ok()
        .or_else(|| hop.parse::<SocketAddr>().ok().map(|a| a.ip()))
}

/// A connection's stream whose writes fail with `TimedOut` once the client has left them
/// waiting for `limit`, counted from the first write that had to wait since the client last
/// sent something while no write was waiting (its next request): a client that reads
/// slowly, or not at all, cannot hold the connection longer, whatever it sends meanwhile.
struct WriteDeadline<S> {
    inner: S,
    limit: Duration,
    deadline: Option<Pin<Box<Sleep>>>,
    /// The last write had to wait (the client is not taking the bytes).
    blocked: bool,
}

impl<S> WriteDeadline<S> {
    fn new(inner: S, limit: Duration) -> Self {
        Self {
            inner,
            limit,
            deadline: None,
            blocked: false,
        }
    }

    /// A write had to wait: arms the deadline (once) and says whether it passed.
    fn waited(&mut self, cx: &mut Context<'_>) -> Poll<io::Error> {
        let limit = self.limit;
        let deadline = self
            .deadline
            .get_or_insert_with(|| Box::pin(tokio::time::sleep(limit)));
        match deadline.as_mut().poll(cx) {
            Poll::Ready(()) => Poll::Ready(io::Error::new(
                io::ErrorKind::TimedOut,
                "the client did not take the answer in time",
            )),
            Poll::Pending => Poll::Pending,
        }
    }

    fn guard<T>(
        &mut self,
        cx: &mut Context<'_>,
        polled: Poll<io::Result<T>>,
    ) -> Poll<io::Result<T>> {
        match polled {
            Poll::Pending => {
                self.blocked = true;
                match self.waited(cx) {
                    Poll::Ready(e) => Poll::Ready(Err(e)),
                    Poll::Pending => Poll::Pending,
                }
            }
            ready => {
                self.blocked = false;
                ready
            }
        }
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for WriteDeadline<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.inner).poll_read(cx, buf);
        if matches!(polled, Poll::Ready(Ok(()))) && buf.filled().len() > before && !self.blocked {
            // The client spoke while it had all its answers: a new request, a new allowance.
            self.deadline = None;
        }
        polled
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for WriteDeadline<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let polled = Pin::new(&mut self.inner).poll_write(cx, buf);
        self.guard(cx, polled)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let polled = Pin::new(&mut self.inner).poll_write_vectored(cx, bufs);
        self.guard(cx, polled)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let polled = Pin::new(&mut self.inner).poll_flush(cx);
        self.guard(cx, polled)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let polled = Pin::new(&mut self.inner).poll_shutdown(cx);
        self.guard(cx, polled)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn limits(trusted: &[&str]) -> HttpLimits {
        HttpLimits {
            trusted_proxies: trusted
                .iter()
                .map(|t| parse_trusted_proxy(t).unwrap())
                .collect(),
            ..HttpLimits::default()
        }
    }

    fn xff(values: &[&str]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for v in values {
            h.append("x-forwarded-for", HeaderValue::from_str(v).unwrap());
        }
        h
    }

    #[test]
    fn x_forwarded_for_is_read_only_from_a_trusted_proxy() {
        let proxy: SocketAddr = "10.0.0.5:40000".parse().unwrap();
        let client: SocketAddr = "203.0.113.7:0".parse().unwrap();
        let h = xff(&["203.0.113.7"]);
        assert_eq!(client_of(proxy, &h, &limits(&[])), proxy, "not trusted");
        assert_eq!(client_of(proxy, &h, &limits(&["10.0.0.0/8"])), client);
        assert_eq!(client_of(proxy, &h, &limits(&["10.0.0.5"])), client);
        // A forged left part is ignored: the right-most untrusted hop is the client.
        let h = xff(&["198.51.100.1, 203.0.113.7", "10.0.0.9"]);
        assert_eq!(client_of(proxy, &h, &limits(&["10.0.0.0/8"])), client);
        // A client that is not a proxy cannot name another client.
        let stranger: SocketAddr = "192.0.2.1:5555".parse().unwrap();
        assert_eq!(client_of(stranger, &h, &limits(&["10.0.0.0/8"])), stranger);
        // No header, or garbage: the proxy itself.
        assert_eq!(
            client_of(proxy, &HeaderMap::new(), &limits(&["10.0.0.0/8"])),
            proxy
        );
        assert_eq!(
            client_of(proxy, &xff(&["evil"]), &limits(&["10.0.0.0/8"])),
            proxy
        );
        // IPv6 and ports.
        let h = xff(&["[2001:db8::1]:443"]);
        assert_eq!(
            client_of(proxy, &h, &limits(&["10.0.0.0/8"])).ip(),
            "2001:db8::1".parse::<IpAddr>().unwrap()
        );
    }

    #[test]
    fn trusted_proxies_are_addresses_or_networks() {
        assert_eq!(
            parse_trusted_proxy("10.1.2.3/8").unwrap().to_string(),
            "10.0.0.0/8"
        );
        assert_eq!(parse_trusted_proxy(" ::1 ").unwrap().to_string(), "::1/128");
        let e = parse_trusted_proxy("proxy.local").unwrap_err();
        assert!(e.contains("\"proxy.local\""), "{e}");
        assert!(limits(&["127.0.0.1"]).trusts("::ffff:127.0.0.1".parse().unwrap()));
    }
}
