//! The admin HTTP API, served under `/api` next to `/healthz`, `/readyz` and `/metrics`.
//!
//! Every route needs either a panel session (the `jw_session` cookie of `/login`; a state
//! change also needs the session's CSRF token in `X-CSRF-Token` and this site's origin) of
//! an account whose role the route allows ([`ROUTES`]: a moderator gets `403` on payments,
//! refunds, broadcasts and retraining), or `Authorization: Bearer <token>` (an admin's
//! rights), the token being `JOBWIRE_ADMIN_TOKEN` (surrounding
//! whitespace ignored), at least [`MIN_TOKEN_LEN`] characters: a shorter one stops the
//! start-up ([`crate::AdminSettings::check_token`]). Unset or empty, only a session opens the API; any
//! other request gets 401. Every change that succeeds is written to the audit log by its
//! operation ([`crate::ops`]), with the admin's name or `api-token`.
//!
//! A client (by its IP address; an IPv6 /64) whose token was missing or wrong more than
//! [`MAX_FAILURES`] times is slowed down: after each further failure it must wait (1 s,
//! then 2 s, 4 s, … up to [`MAX_WAIT`]) and meanwhile gets `429 Too Many Requests` with
//! `Retry-After`, its token not even checked; other clients are not affected. Its failures
//! are forgotten [`FAILURE_WINDOW`] after the last one. Behind a reverse proxy the client is
//! the address the proxy forwards when `[admin] trusted_proxies` lists it (else the proxy).
//!
//! - `GET  /api/reports?status=pending|accepted|rejected&limit=N`: reports, newest first.
//! - `POST /api/reports/{id}/accept` `{is_job, kind, categories}`: accepts a report; its
//!   label becomes a training example (source `report`).
//! - `POST /api/reports/{id}/reject`: rejects a report.
//! - `POST /api/posts/{id}/label` `{is_job, kind, categories}`: an admin's label of a post
//!   (source `relabel`).
//! - `POST /api/retrain`: asks the classifier processes to retrain now (202).
//! - `GET  /api/broadcasts`, `GET /api/broadcasts/{id}`: broadcasts with their progress
//!   (sent, failed, blocked, unknown, remaining, rate, ETA).
//! - `POST /api/broadcasts` `{text, category?, plan?, language?}`: checks the HTML with
//!   Telegram's parser and starts a broadcast (201).
//! - `POST /api/broadcasts/{id}/pause|resume|cancel`.
//!
//! Errors are `{"error": "..."}`.
//!
//! The handlers, one module per resource (`reports`, `posts`, `placements`, `broadcasts`,
//! `payments`), are thin: they parse the request, call one operation of
//! [`crate::ops`] (which checks, changes and audits) and turn its outcome into JSON.

mod broadcasts;
mod common;
pub mod failures;
mod payments;
mod placements;
mod posts;
mod reports;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::Router;
use axum::extract::{ConnectInfo, Request, State};
use axum::http::{StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use chrono::Utc;
use jobwire_store::AdminRole;

use self::broadcasts::{change_broadcast, create_broadcast, list_broadcasts, show_broadcast};
use self::failures::Client;
use self::payments::{list_payments, refund_payment};
use self::placements::{decide_placement, list_placements, show_placement};
use self::posts::{label_post, retrain};
use self::reports::{accept_report, list_reports, reject_report};
use crate::ops::Actor;
use crate::state::{AdminState, Token};

pub use self::common::ApiError;
pub use self::failures::{FAILURE_WINDOW, MAX_FAILURES, MAX_WAIT};
pub use crate::ops::KINDS;
pub use crate::state::{AdminTokenError, MIN_TOKEN_LEN, TOKEN_ENV};

macro_rules! api_routes {
    ($($method:ident $path:literal $role:ident => $handler:ident;)*) => {
        /// Every route of the API (method, path, the role it needs): the router is built
        /// from this list alone, and a test checks each one refuses a request without auth,
        /// and a moderator's session on every admin route.
        pub const ROUTES: &[(&str, &str, AdminRole)] =
            &[$((stringify!($method), $path, AdminRole::$role),)*];

        /// The `/api` routes (paths included), to merge into the admin server's router.
        pub fn router(state: Arc<AdminState>) -> Router {
            Router::new()
                $(.route($path, $method($handler)))*
                .route_layer(middleware::from_fn_with_state(state.clone(), authorize))
                .with_state(state)
        }
    };
}

/// The role an API route needs (`HEAD` as `GET`); `None` for a path not listed.
pub fn required_role(method: &axum::http::Method, route: &str) -> Option<AdminRole> {
    let method = if method == axum::http::Method::HEAD {
        "get"
    } else {
        method.as_str()
    };
    ROUTES
        .iter()
        .find(|(m, p, _)| *p == route && m.eq_ignore_ascii_case(method))
        .map(|(_, _, role)| *role)
}

// Moderators: reports, posts and placements. Admins: the rest (retraining, broadcasts,
// payments and refunds).
api_routes! {
    get "/api/reports" Moderator => list_reports;
    post "/api/reports/{id}/accept" Moderator => accept_report;
    post "/api/reports/{id}/reject" Moderator => reject_report;
    post "/api/posts/{id}/label" Moderator => label_post;
    post "/api/retrain" Admin => retrain;
    get "/api/broadcasts" Admin => list_broadcasts;
    post "/api/broadcasts" Admin => create_broadcast;
    get "/api/broadcasts/{id}" Admin => show_broadcast;
    post "/api/broadcasts/{id}/{action}" Admin => change_broadcast;
    get "/api/placements" Moderator => list_placements;
    get "/api/placements/{id}" Moderator => show_placement;
    post "/api/placements/{id}/{action}" Moderator => decide_placement;
    get "/api/payments" Admin => list_payments;
    post "/api/payments/{charge_id}/refund" Admin => refund_payment;
}

/// A logged-in account of the panel whose role the route allows (a session cookie; state
/// changes need its CSRF token in `X-CSRF-Token`), else the bearer token; the handler gets
/// the [`Actor`] (operations audit their changes with its name).
async fn authorize(
    State(api): State<Arc<AdminState>>,
    mut request: Request,
    next: Next,
) -> Response {
    let method = request.method().clone();
    let path = request.uri().path().to_owned();
    let session = crate::auth::session_of(api.store.as_ref(), request.headers(), Utc::now()).await;
    let actor = match session {
        Some(session) => {
            let needed = request
                .extensions()
                .get::<axum::extract::MatchedPath>()
                .and_then(|m| required_role(&method, m.as_str()))
                .unwrap_or(AdminRole::Admin);
            if !session.role.allows(needed) {
                tracing::warn!(user = %session.username, role = session.role.as_str(), %path,
                    "admin API: refused to this role");
                return ApiError::new(
                    StatusCode::FORBIDDEN,
                    format!(
                        "this needs the {} role; your account is a {}",
                        needed.as_str(),
                        session.role.as_str()
                    ),
                )
                .into_response();
            }
            if crate::auth::changes_state(&method) {
                let given = request
                    .headers()
                    .get(crate::auth::CSRF_HEADER)
                    .and_then(|v| v.to_str().ok());
                if let Err(refusal) = crate::auth::check_csrf(request.headers(), &session, given) {
                    return ApiError::new(StatusCode::FORBIDDEN, refusal.message()).into_response();
                }
            }
            Actor {
                name: session.username,
                role: session.role,
            }
        }
        None => match check_bearer(&api, &request) {
            Ok(()) => Actor::api_token(),
            Err(refused) => return refused,
        },
    };
    request.extensions_mut().insert(actor);
    next.run(request).await
}
/// The bearer token check, limited per client. The `Err` is the refusal, answered at once
/// (only on that path, so its size costs nothing where it matters).
#[allow(clippy::result_large_err)]
fn check_bearer(api: &AdminState, request: &Request) -> Result<(), Response> {
    let expected = match &api.token {
        Token::Valid(token) => token.expose(),
        Token::Unset => {
            return Err(ApiError::new(
                StatusCode::UNAUTHORIZED,
                format!("log in to the panel at /login, or set {TOKEN_ENV} and send it as a bearer token"),
            )
            .into_response());
        }
        Token::TooShort => {
            return Err(ApiError::new(
                StatusCode::SERVICE_UNAVAILABLE,
                format!("admin API disabled: {TOKEN_ENV} is too short"),
            )
            .into_response());
        }
    };
    let client = Client::new(
        request
            .extensions()
            .get::<ConnectInfo<SocketAddr>>()
            .map(|ConnectInfo(peer)| peer.ip()),
    );
    if let Some(wait) = api.failures.blocked(&client, Instant::now()) {
        return Err(too_many_failures(wait));
    }
    let given = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::trim);
    let refused = match given {
        Some(given) if crate::auth::constant_time_eq(given.as_bytes(), expected.as_bytes()) => {
            api.failures.succeeded(&client);
            return Ok(());
        }
        Some(_) => {
            tracing::warn!(path = %request.uri().path(), %client, "admin API: wrong token");
            ApiError::new(StatusCode::UNAUTHORIZED, "wrong bearer token")
        }
        None => ApiError::new(
            StatusCode::UNAUTHORIZED,
            "missing Authorization: Bearer <token>",
        ),
    };
    if api.failures.failed(client, Instant::now()) {
        tracing::warn!(
            %client,
            failures = MAX_FAILURES,
            "admin API: too many failed attempts; slowing this client down"
        );
    }
    Err(refused.into_response())
}

/// `429` with `Retry-After` (whole seconds, at least 1).
fn too_many_failures(wait: Duration) -> Response {
    let secs = wait.as_secs() + u64::from(wait.subsec_nanos() > 0);
    let secs = secs.max(1);
    let mut response = ApiError::new(
        StatusCode::TOO_MANY_REQUESTS,
        format!("too many failed attempts: retry in {secs} s"),
    )
    .into_response();
    response
        .headers_mut()
        .insert(header::RETRY_AFTER, header::HeaderValue::from(secs));
    response
}

#[cfg(test)]
mod tests {
    use crate::auth::constant_time_eq;

    #[test]
    fn constant_time_eq_matches_only_equal_tokens() {
        assert!(constant_time_eq(b"secret", b"secret"));
        assert!(!constant_time_eq(b"secret", b"secreT"));
        assert!(!constant_time_eq(b"secret", b"secret2"));
        assert!(!constant_time_eq(b"", b"x"));
    }
}
