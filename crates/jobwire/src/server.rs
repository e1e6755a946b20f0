//! The small HTTP server every role runs: `/healthz` (the process is alive), `/readyz` (its
//! dependencies answer; 503 naming the ones that do not) and `/metrics` (Prometheus).
//! The admin role adds the web panel and its API ([`jobwire_admin`]). Served by
//! [`crate::http`], with its timeouts and connection limit.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, OnceLock};

use axum::Router;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::IntoResponse;
use axum::routing::get;
use jobwire_core::secret::redact_url;
use metrics_exporter_prometheus::PrometheusHandle;
use tokio_util::sync::CancellationToken;

use crate::http::{self, HttpLimits};
use jobwire_admin::AdminState;

/// `[admin]`: where this server listens, and how the panel treats cookies and proxies.
#[derive(Debug, Clone, serde::Deserialize)]
#[serde(deny_unknown_fields)]
#[serde(default)]
pub struct AdminSection {
    /// Where `/healthz`, `/readyz` and `/metrics` are served (port 0: any free port), and,
    /// by the admin role, the web panel and the admin API.
    pub listen: SocketAddr,
    /// Mark the panel's session cookie `Secure` (default; browsers accept it on
    /// `http://localhost` and `http://127.0.0.1` too). `false` only for a panel reached over
    /// plain HTTP elsewhere; the start-up warns about it.
    pub secure_cookies: bool,
    /// Reverse proxies (IP addresses or CIDR networks) whose `X-Forwarded-For` names the
    /// client, for the login and token limits and the per-client connection limit. Empty
    /// (default): the header is never read, every client is its TCP peer.
    pub trusted_proxies: Vec<String>,
}

impl Default for AdminSection {
    fn default() -> Self {
        Self {
            listen: SocketAddr::from(([127, 0, 0, 1], 9464)),
            secure_cookies: true,
            trusted_proxies: Vec::new(),
        }
    }
}

impl AdminSection {
    /// The trusted proxies, parsed; the key of the first that is not an address or network.
    pub fn resolve_trusted_proxies(
        &self,
    ) -> Result<Vec<ipnet::IpNet>, jobwire_core::config::InvalidKey> {
        self.trusted_proxies
            .iter()
            .enumerate()
            .map(|(i, raw)| {
                http::parse_trusted_proxy(raw).map_err(|e| {
                    jobwire_core::config::InvalidKey::new(format!("admin.trusted_proxies[{i}]"), e)
                })
            })
            .collect()
    }
}

/// The process-wide Prometheus recorder (installed once; later calls share it).
pub fn prometheus() -> Option<PrometheusHandle> {
    static HANDLE: OnceLock<Option<PrometheusHandle>> = OnceLock::new();
    HANDLE
        .get_or_init(
            || match crate::telemetry::builder().and_then(|b| b.install_recorder()) {
                Ok(handle) => {
                    crate::telemetry::describe();
                    Some(handle)
                }
                Err(e) => {
                    tracing::warn!(error = %e, "metrics recorder not installed");
                    None
                }
            },
        )
        .clone()
}

/// What each dependency of this process looks like right now.
///
/// `/readyz` is served without a token, so it shows only each component's name and a fixed
/// word (`ok`, `connecting`, `restarting`, `stopping` or `down`), never the error text, which
/// can hold a broker or database address. The text goes to the log (URL passwords redacted).
#[derive(Debug, Default)]
pub struct Health {
    components: Mutex<BTreeMap<&'static str, Result<(), String>>>,
}

impl Health {
    pub fn new() -> Arc<Self> {
        Arc::new(Self::default())
    }

    /// Records the state of one dependency (`database`, `queue`, `redis`, `pipeline`, or a
    /// restarted task's name). An error's wording picks the word `/readyz` shows: it starts
    /// with `connecting`, `restarting` or `shutting down` (see [`state_word`]), else `down`.
    pub fn set(&self, component: &'static str, state: Result<(), String>) {
        let state = state.map_err(|e| redact_url(&e));
        metrics::gauge!(crate::telemetry::COMPONENT_READY, "component" => component)
            .set(if state.is_ok() { 1.0 } else { 0.0 });
        if let Ok(mut c) = self.components.lock() {
            match (&state, c.get(component)) {
                (Ok(()), Some(Ok(()))) => {}
                (Ok(()), _) => tracing::info!(component, "ready"),
                (Err(e), Some(Err(was))) if was == e => {}
                // The first word of a dependency being connected at start: nothing failed yet
                // (a failed attempt is warned about by whoever retries it).
                (Err(e), None) if state_word(e) == "connecting" => {
                    tracing::info!(component, state = %e, "connecting");
                }
                (Err(e), _) => tracing::warn!(component, error = %e, "not ready"),
            }
            c.insert(component, state);
        }
    }

    /// Ready when every registered component is, and at least one is registered.
    pub fn is_ready(&self) -> bool {
        self.components
            .lock()
            .map(|c| !c.is_empty() && c.values().all(|s| s.is_ok()))
            .unwrap_or(false)
    }

    fn report(&self) -> serde_json::Value {
        let components = self
            .components
            .lock()
            .map(|c| {
                c.iter()
                    .map(|(k, v)| {
                        let state = match v {
                            Ok(()) => "ok",
                            Err(e) => state_word(e),
                        };
                        ((*k).to_owned(), serde_json::Value::from(state))
                    })
                    .collect::<serde_json::Map<_, _>>()
            })
            .unwrap_or_default();
        serde_json::json!({ "ready": self.is_ready(), "components": components })
    }
}

/// The word `/readyz` shows for a component that is not ready, from its error's wording:
/// `connecting` (first connection attempts, `connect.rs`), `restarting` (a supervised task
/// waiting to restart), `stopping` (the process is shutting down), else `down`.
fn state_word(error: &str) -> &'static str {
    let error = error.trim_start().to_ascii_lowercase();
    if error.starts_with("connecting") {
        "connecting"
    } else if error.starts_with("restarting") {
        "restarting"
    } else if error.starts_with("shutting down") {
        "stopping"
    } else {
        "down"
    }
}

#[derive(Clone)]
struct AppState {
    health: Arc<Health>,
    metrics: Option<PrometheusHandle>,
}

pub fn router(health: Arc<Health>) -> Router {
    Router::new()
        .route("/healthz", get(|| async { "ok" }))
        .route("/readyz", get(readyz))
        .route("/metrics", get(metrics))
        .with_state(AppState {
            health,
            metrics: prometheus(),
        })
}

/// [`router`] plus the admin role's web panel and its API (`/api`), over one complete state.
pub fn router_with_admin(health: Arc<Health>, admin: Arc<AdminState>) -> Router {
    router(health).merge(jobwire_admin::router(admin))
}

/// Where the admin role's routes go once its state is complete. `jobwire run` serves
/// `/healthz`, `/readyz` and `/metrics` before the database answers, but the admin state is
/// built only after the store connects ([`jobwire_admin::AdminSettings::build`]), whole:
/// until [`AdminMount::mount`] the admin paths answer 503. This slot holds the finished
/// router, set once; nothing inside the admin state is filled in later.
#[derive(Clone, Default)]
pub struct AdminMount {
    router: Arc<OnceLock<Router>>,
}

impl std::fmt::Debug for AdminMount {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AdminMount")
            .field("mounted", &self.router.get().is_some())
            .finish()
    }
}

impl AdminMount {
    /// Serves the admin routes over `state` from now on (a second call is ignored).
    pub fn mount(&self, state: Arc<AdminState>) {
        if self.router.set(jobwire_admin::router(state)).is_err() {
            tracing::warn!("the admin routes were mounted already");
        }
    }

    /// Whatever the health router does not route: the admin routes once mounted, else 503.
    fn fallback(&self) -> Router {
        let slot = self.router.clone();
        Router::new().fallback(move |request: axum::extract::Request| {
            let slot = slot.clone();
            async move {
                use tower::Service as _;
                match slot.get() {
                    Some(router) => match router.clone().call(request).await {
                        Ok(response) => response,
                        Err(never) => match never {},
                    },
                    None => (
                        StatusCode::SERVICE_UNAVAILABLE,
                        [(axum::http::header::RETRY_AFTER, "5")],
                        "the admin panel starts once the database is connected; try again in a moment",
                    )
                        .into_response(),
                }
            }
        })
    }
}

async fn readyz(State(state): State<AppState>) -> impl IntoResponse {
    let code = if state.health.is_ready() {
        StatusCode::OK
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    };
    (code, axum::Json(state.health.report()))
}

async fn metrics(State(state): State<AppState>) -> impl IntoResponse {
    match &state.metrics {
        Some(handle) => (StatusCode::OK, handle.render()),
        None => (
            StatusCode::SERVICE_UNAVAILABLE,
            "metrics recorder unavailable".to_owned(),
        ),
    }
}

/// Binds `listen` and serves until `shutdown`. Returns the bound address.
pub async fn serve(
    listen: SocketAddr,
    health: Arc<Health>,
    shutdown: CancellationToken,
) -> anyhow::Result<SocketAddr> {
    serve_roles_with(listen, health, shutdown, None, HttpLimits::default()).await
}

/// [`serve`] plus the admin panel and its API under `/api`, over a complete state; a token
/// shorter than [`admin_api::MIN_TOKEN_LEN`] is refused here, before anything is served.
pub async fn serve_with_admin(
    listen: SocketAddr,
    health: Arc<Health>,
    shutdown: CancellationToken,
    admin: Arc<AdminState>,
) -> anyhow::Result<SocketAddr> {
    serve_roles_with(listen, health, shutdown, Some(admin), HttpLimits::default()).await
}

/// [`serve_with_admin`] when the process runs the admin role (`admin` given), else [`serve`].
pub async fn serve_roles(
    listen: SocketAddr,
    health: Arc<Health>,
    shutdown: CancellationToken,
    admin: Option<Arc<AdminState>>,
) -> anyhow::Result<SocketAddr> {
    serve_roles_with(listen, health, shutdown, admin, HttpLimits::default()).await
}

/// [`serve_roles`] with the given timeouts and connection limit.
pub async fn serve_roles_with(
    listen: SocketAddr,
    health: Arc<Health>,
    shutdown: CancellationToken,
    admin: Option<Arc<AdminState>>,
    limits: HttpLimits,
) -> anyhow::Result<SocketAddr> {
    let mount = match admin {
        Some(state) => {
            state.check_token()?;
            let mount = AdminMount::default();
            mount.mount(state);
            Some(mount)
        }
        None => None,
    };
    // Tests and the test bed: the server stops with `shutdown`, nobody watches it.
    let (addr, _task) = serve_mounting(listen, health, shutdown, mount, limits).await?;
    Ok(addr)
}

/// What `jobwire run` serves before the database answers: health and metrics, and, with the
/// admin role (`admin` given: its settings, whose token is checked here), the admin routes
/// once [`AdminMount::mount`] is given the complete state (503 until then).
pub async fn serve_admin_later(
    listen: SocketAddr,
    health: Arc<Health>,
    shutdown: CancellationToken,
    admin: Option<&jobwire_admin::AdminSettings>,
    limits: HttpLimits,
) -> anyhow::Result<ServedLater> {
    let mount = match admin {
        Some(settings) => {
            settings.check_token()?;
            Some(AdminMount::default())
        }
        None => None,
    };
    let (addr, task) = serve_mounting(listen, health, shutdown, mount.clone(), limits).await?;
    Ok(ServedLater { addr, mount, task })
}

/// What [`serve_admin_later`] started.
#[derive(Debug)]
pub struct ServedLater {
    /// The bound address.
    pub addr: SocketAddr,
    /// Where the admin state goes once built (with the admin role).
    pub mount: Option<AdminMount>,
    /// The server's task, for the supervisor to watch once it exists.
    pub task: tokio::task::JoinHandle<()>,
}

async fn serve_mounting(
    listen: SocketAddr,
    health: Arc<Health>,
    shutdown: CancellationToken,
    mount: Option<AdminMount>,
    limits: HttpLimits,
) -> anyhow::Result<(SocketAddr, tokio::task::JoinHandle<()>)> {
    let (app, routes) = match mount {
        Some(mount) => (
            router(health).merge(mount.fallback()),
            "/healthz /readyz /metrics, the admin panel on / and its API on /api",
        ),
        None => (router(health), "/healthz /readyz /metrics"),
    };
    let listener = tokio::net::TcpListener::bind(listen)
        .await
        .map_err(|e| anyhow::anyhow!("admin.listen: cannot bind {listen}: {e}"))?;
    let addr = listener.local_addr()?;
    let task = http::spawn(listener, app, limits, shutdown, "health server");
    tracing::info!(%addr, "health and metrics on {routes}");
    Ok((addr, task))
}
