//! The small HTTP server every role runs: `/healthz` (the process is alive), `/readyz` (its
//! dependencies answer; 503 naming the ones that do not) and `/metrics` (Prometheus).
//! The admin role adds the admin API under `/api` ([`crate::admin_api`]).

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, OnceLock};

use axum::Router;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::IntoResponse;
use axum::routing::get;
use metrics_exporter_prometheus::{PrometheusBuilder, PrometheusHandle};
use tokio_util::sync::CancellationToken;

use crate::admin_api::{self, AdminApi};

/// The process-wide Prometheus recorder (installed once; later calls share it).
pub fn prometheus() -> Option<PrometheusHandle> {
    static HANDLE: OnceLock<Option<PrometheusHandle>> = OnceLock::new();
    HANDLE
        .get_or_init(|| match PrometheusBuilder::new().install_recorder() {
            Ok(handle) => Some(handle),
            Err(e) => {
                tracing::warn!(error = %e, "metrics recorder not installed");
                None
            }
        })
        .clone()
}

/// What each dependency of this process looks like right now.
#[derive(Debug, Default)]
pub struct Health {
    components: Mutex<BTreeMap<&'static str, Result<(), String>>>,
}

impl Health {
    pub fn new() -> Arc<Self> {
        Arc::new(Self::default())
    }

    /// Records the state of one dependency (`database`, `queue`, `redis`, `pipeline`).
    pub fn set(&self, component: &'static str, state: Result<(), String>) {
        if let Ok(mut c) = self.components.lock() {
            let was_ok = c.get(component).is_some_and(|s| s.is_ok());
            match (&state, was_ok) {
                (Ok(()), false) => tracing::info!(component, "ready"),
                (Err(e), true) => tracing::warn!(component, error = %e, "not ready"),
                _ => {}
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
                            Ok(()) => "ok".to_owned(),
                            Err(e) => e.clone(),
                        };
                        ((*k).to_owned(), serde_json::Value::String(state))
                    })
                    .collect::<serde_json::Map<_, _>>()
            })
            .unwrap_or_default();
        serde_json::json!({ "ready": self.is_ready(), "components": components })
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

/// [`router`] plus the admin API's `/api` routes.
pub fn router_with_admin(health: Arc<Health>, admin: Arc<AdminApi>) -> Router {
    router(health).merge(admin_api::router(admin))
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
    let addr = serve_router(listen, router(health), shutdown).await?;
    tracing::info!(%addr, "health and metrics on /healthz /readyz /metrics");
    Ok(addr)
}

/// [`serve`] plus the admin API under `/api`. The API answers 503 until
/// [`AdminApi::attach_store`] is called, and always without a token configured.
pub async fn serve_with_admin(
    listen: SocketAddr,
    health: Arc<Health>,
    shutdown: CancellationToken,
    admin: Arc<AdminApi>,
) -> anyhow::Result<SocketAddr> {
    let addr = serve_router(listen, router_with_admin(health, admin), shutdown).await?;
    tracing::info!(%addr, "health and metrics on /healthz /readyz /metrics, admin API on /api");
    Ok(addr)
}

/// [`serve_with_admin`] when the process runs the admin role (`admin` given), else [`serve`].
pub async fn serve_roles(
    listen: SocketAddr,
    health: Arc<Health>,
    shutdown: CancellationToken,
    admin: Option<Arc<AdminApi>>,
) -> anyhow::Result<SocketAddr> {
    match admin {
        Some(admin) => serve_with_admin(listen, health, shutdown, admin).await,
        None => serve(listen, health, shutdown).await,
    }
}

async fn serve_router(
    listen: SocketAddr,
    app: Router,
    shutdown: CancellationToken,
) -> anyhow::Result<SocketAddr> {
    let listener = tokio::net::TcpListener::bind(listen)
        .await
        .map_err(|e| anyhow::anyhow!("admin.listen: cannot bind {listen}: {e}"))?;
    let addr = listener.local_addr()?;
    tokio::spawn(async move {
        if let Err(e) = axum::serve(listener, app)
            .with_graceful_shutdown(shutdown.cancelled_owned())
            .await
        {
            tracing::warn!(error = %e, "health server stopped");
        }
    });
    Ok(addr)
}
