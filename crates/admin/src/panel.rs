//! The web panel: its state, its routes, the gate every request passes, login and logout.
//!
//! The gate ([`gate`]) is a layer over the whole panel router, so a route is closed unless
//! it is listed as public in [`ROUTES`]: without a session a page answers `303` to
//! `/login?next=…`, an htmx or JSON request `401`. Every other route states the role it
//! needs ([`Access`]): a moderator asking for an admin's route gets `403`, and the
//! navigation shows a moderator only what it may open. A state change must pass the CSRF check
//! ([`crate::auth::check_csrf`]); one that succeeds is written to the audit log with who made
//! it ([`AuditNote`] adds what changed).

mod admins;
mod audit;
mod broadcasts;
mod categories;
mod dashboard;
mod dead_letters;
mod login;
mod payments;
mod placements;
mod plans;
mod posts;
mod prompt;
mod reports;
mod sources;
mod subscribers;

pub use crate::state::{CategorySetup, PanelOptions};

use self::login::{DUMMY_HASH, login_page, login_submit, logout};

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use askama::Template;
use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{MatchedPath, Request, State};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::{MethodRouter, get, post};
use chrono::Utc;
use jobwire_store::{AdminRole, Store};

use crate::api::failures::{Client, FailedAttempts};
use crate::auth::{self, Session};
use crate::i18n::{self, Texts};
use crate::ops::{Actor, OpError};
use crate::state::AdminState;

/// Failed logins of one account from one client (an IP address, an IPv6 /64) before that
/// pair is slowed down: each next attempt waits 1 s, 2 s, 4 s, … up to [`LOGIN_MAX_WAIT`]
/// after the last failure (`429` with `Retry-After` meanwhile). The account is never locked:
/// the right password from another client still works.
pub const MAX_ACCOUNT_FAILURES: u32 = 5;
/// Failed logins of one client, whatever the accounts, before it is slowed down the same way.
pub const MAX_CLIENT_FAILURES: u32 = 20;
/// The longest wait between two login attempts of a slowed-down client.
pub const LOGIN_MAX_WAIT: Duration = Duration::from_secs(5 * 60);
/// Failed logins are forgotten this long after the last one.
pub const LOGIN_WINDOW: Duration = Duration::from_secs(15 * 60);
/// Password checks (argon2id, 19 MiB each) running at once; the next ones wait
/// [`PASSWORD_CHECK_WAIT`] for a turn, else get `429` with `Retry-After`.
pub const MAX_PASSWORD_CHECKS: usize = 4;
/// How long a login waits for a turn to check its password.
pub const PASSWORD_CHECK_WAIT: Duration = Duration::from_secs(2);
/// The gauge of password checks running now.
const PASSWORD_CHECKS_GAUGE: &str = "jobwire_admin_password_checks_running";

/// The panel's metrics, for `/metrics`' `# HELP` lines.
pub const METRICS: &[jobwire_core::metric::MetricDef] = &[jobwire_core::metric::MetricDef::gauge(
    PASSWORD_CHECKS_GAUGE,
    &[],
    "Login password checks (argon2) running now; bounded, the rest wait or get 429.",
)];
/// The largest form the panel reads.
const MAX_FORM_BYTES: usize = 256 * 1024;

/// The panel's state: the admin state it shares with the JSON API (store, categories, bots,
/// operations) and what only the panel has: the login limits and password checkers.
#[derive(Debug)]
pub struct Panel {
    state: Arc<AdminState>,
    login_clients: FailedAttempts<Client>,
    login_pairs: FailedAttempts<(String, Client)>,
    password_checks: tokio::sync::Semaphore,
    /// The threads that run the checks (each reusing one argon2 work area); `None` only
    /// when they could not be started, and then checks run on tokio's blocking pool.
    checkers: Option<crate::password_check::PasswordCheckers>,
    checks_running: AtomicUsize,
    checks_peak: AtomicUsize,
}

impl Panel {
    pub fn new(state: Arc<AdminState>) -> Arc<Self> {
        Arc::new(Self {
            state,
            login_clients: FailedAttempts::new(
                MAX_CLIENT_FAILURES,
                LOGIN_MAX_WAIT,
                LOGIN_WINDOW,
                100_000,
            ),
            login_pairs: FailedAttempts::new(
                MAX_ACCOUNT_FAILURES,
                LOGIN_MAX_WAIT,
                LOGIN_WINDOW,
                100_000,
            ),
            password_checks: tokio::sync::Semaphore::new(MAX_PASSWORD_CHECKS),
            checkers: crate::password_check::PasswordCheckers::start(MAX_PASSWORD_CHECKS)
                .inspect_err(|e| {
                    tracing::error!(
                        error = %e,
                        "could not start the password-check threads; checks run on the blocking pool"
                    )
                })
                .ok(),
            checks_running: AtomicUsize::new(0),
            checks_peak: AtomicUsize::new(0),
        })
    }

    /// The state it shares with the JSON API.
    pub fn state(&self) -> &Arc<AdminState> {
        &self.state
    }

    /// The most password checks that ran at once since the panel started (at most
    /// [`MAX_PASSWORD_CHECKS`]); the gauge `jobwire_admin_password_checks_running` shows
    /// the current number.
    pub fn busiest_password_checks(&self) -> usize {
        self.checks_peak.load(Ordering::SeqCst)
    }

    /// Checks a password against a stored hash (or the dummy one) on the blocking pool,
    /// at most [`MAX_PASSWORD_CHECKS`] at once; `None` when no turn came within
    /// [`PASSWORD_CHECK_WAIT`].
    async fn check_password(&self, password: String, hash: Option<String>) -> Option<bool> {
        let _turn = tokio::time::timeout(PASSWORD_CHECK_WAIT, self.password_checks.acquire())
            .await
            .ok()?
            .ok()?;
        let running = self.checks_running.fetch_add(1, Ordering::SeqCst) + 1;
        self.checks_peak.fetch_max(running, Ordering::SeqCst);
        metrics::gauge!(PASSWORD_CHECKS_GAUGE).set(running as f64);
        // A missing account costs the same hashing time as a wrong password.
        let known = hash.is_some();
        let phc = hash.unwrap_or_else(|| DUMMY_HASH.to_string());
        let ok = match &self.checkers {
            // The semaphore admits no more checks than there are threads and queue places,
            // so `Busy` cannot happen here; any error is a refusal.
            Some(checkers) => checkers.check(password, phc).await.unwrap_or(false),
            None => tokio::task::spawn_blocking(move || {
                crate::accounts::verify_password(&password, &phc)
            })
            .await
            .unwrap_or(false),
        } && known;
        let running = self.checks_running.fetch_sub(1, Ordering::SeqCst) - 1;
        metrics::gauge!(PASSWORD_CHECKS_GAUGE).set(running as f64);
        Some(ok)
    }

    fn store(&self) -> &Arc<dyn Store> {
        self.state.store()
    }

    /// The configured category slugs, sorted.
    pub(crate) fn categories(&self) -> Vec<String> {
        self.state.category_slugs()
    }

    fn secure_cookies(&self) -> bool {
        self.state.panel_options().secure_cookies
    }
}

/// Who may use a route.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Anyone (the login page, static files).
    Public,
    /// A logged-in account of at least this role (an admin may do a moderator's work).
    Session(AdminRole),
}

/// The login page, static files.
const PUBLIC: Access = Access::Public;
/// Reports, placements, posts, sources (and the dashboard, logout): any account.
const MODERATOR: Access = Access::Session(AdminRole::Moderator);
/// Payments, refunds, broadcasts, the prompt, categories, subscribers, dead letters, the
/// audit log and accounts: admins only.
const ADMIN: Access = Access::Session(AdminRole::Admin);

/// The role a route of the panel needs: its [`ROUTES`] entry by method (`HEAD` as `GET`)
/// and route path; `None` for a public route or one not listed (a 404).
pub fn required_role(method: &Method, route: &str) -> Option<AdminRole> {
    let method = if method == Method::HEAD {
        "get"
    } else {
        method.as_str()
    };
    ROUTES
        .iter()
        .find(|r| r.path == route && r.method.eq_ignore_ascii_case(method))
        .and_then(|r| match r.access {
            Access::Public => None,
            Access::Session(role) => Some(role),
        })
}

/// One route of the panel, as [`ROUTES`] lists it.
#[derive(Debug, Clone, Copy)]
pub struct RouteInfo {
    pub method: &'static str,
    pub path: &'static str,
    pub access: Access,
}

macro_rules! routes {
    ($($method:ident $path:literal $access:ident => $handler:path;)*) => {
        /// Every route of the panel (the router is built from this list alone).
        pub const ROUTES: &[RouteInfo] = &[
            $(RouteInfo { method: stringify!($method), path: $path, access: $access },)*
        ];

        fn method_routers() -> Vec<(&'static str, MethodRouter<Arc<Panel>>)> {
            vec![$(($path, $method($handler)),)*]
        }
    };
}

routes! {
    get "/login" PUBLIC => login_page;
    post "/login" PUBLIC => login_submit;
    get "/static/{*path}" PUBLIC => crate::assets::serve;
    post "/logout" MODERATOR => logout;
    get "/" MODERATOR => dashboard::dashboard;
    get "/dashboard/live" MODERATOR => dashboard::dashboard_live;
    get "/sources" MODERATOR => sources::list;
    post "/sources" MODERATOR => sources::add;
    get "/sources/{id}" MODERATOR => sources::show;
    post "/sources/{id}" MODERATOR => sources::update;
    post "/sources/{id}/preview" MODERATOR => sources::preview;
    post "/sources/{id}/enabled" MODERATOR => sources::set_enabled;
    post "/sources/{id}/remove" MODERATOR => sources::remove;
    get "/posts" MODERATOR => posts::posts;
    get "/posts/{id}" MODERATOR => posts::post_trace;
    post "/posts/{id}/label" MODERATOR => posts::label_post;
    post "/posts/{id}/reclassify" MODERATOR => posts::reclassify_post;
    post "/posts/{id}/redeliver" MODERATOR => posts::redeliver_post;
    get "/categories" ADMIN => categories::page;
    post "/categories/{slug}" ADMIN => categories::update;
    get "/prompt" ADMIN => prompt::page;
    post "/prompt" ADMIN => prompt::create;
    post "/prompt/try" ADMIN => prompt::try_it;
    post "/prompt/{id}/activate" ADMIN => prompt::activate;
    get "/reports" MODERATOR => reports::reports;
    post "/reports/{id}/accept" MODERATOR => reports::accept_report;
    post "/reports/{id}/dismiss" MODERATOR => reports::dismiss_report;
    get "/placements" MODERATOR => placements::page;
    post "/placements/{id}/approve" MODERATOR => placements::approve;
    post "/placements/{id}/refuse" MODERATOR => placements::refuse;
    get "/subscribers" ADMIN => subscribers::subscribers;
    get "/subscribers/{chat_id}" ADMIN => subscribers::subscriber;
    post "/subscribers/{chat_id}/extend" ADMIN => subscribers::extend_subscription;
    post "/subscribers/{chat_id}/end" ADMIN => subscribers::end_subscription;
    post "/subscribers/{chat_id}/refund" ADMIN => subscribers::refund_payment;
    get "/dead-letters" ADMIN => dead_letters::dead_letters;
    post "/dead-letters/{id}/retry" ADMIN => dead_letters::retry_dead_letter;
    post "/dead-letters/{id}/discard" ADMIN => dead_letters::discard_dead_letter;
    get "/audit" ADMIN => audit::audit;
    get "/payments" ADMIN => payments::page;
    post "/payments/{charge_id}/refund" ADMIN => payments::refund;
    get "/plans" ADMIN => plans::page;
    get "/broadcasts" ADMIN => broadcasts::page;
    get "/broadcasts/live" ADMIN => broadcasts::live;
    post "/broadcasts" ADMIN => broadcasts::send;
    post "/broadcasts/preview" ADMIN => broadcasts::preview;
    post "/broadcasts/{id}/{action}" ADMIN => broadcasts::steer;
    get "/admins" ADMIN => admins::page;
    post "/admins" ADMIN => admins::create;
    post "/admins/{username}/reset" ADMIN => admins::reset;
    post "/admins/{username}/disable" ADMIN => admins::disable;
}

/// The panel's routes behind the gate.
pub fn router(panel: Arc<Panel>) -> Router {
    let mut router = Router::new();
    for (path, handler) in method_routers() {
        router = router.route(path, handler);
    }
    router
        .layer(middleware::from_fn_with_state(panel.clone(), gate))
        .with_state(panel)
}

/// Whether a path is served without a session (exact public routes, and `/static/…`).
pub fn is_public(method: &Method, path: &str) -> bool {
    path.starts_with("/static/")
        || ROUTES.iter().any(|r| {
            r.access == Access::Public
                && r.path == path
                && r.method.eq_ignore_ascii_case(method.as_str())
        })
}

/// Marks an answer whose change an operation ([`crate::ops`]) audited already, so the gate
/// does not write a second line.
#[derive(Debug, Clone, Copy)]
pub struct Audited;

/// The redirect after a change an operation made and audited (303).
pub(crate) fn done(to: &str) -> Response {
    let mut r = see_other(to);
    r.extensions_mut().insert(Audited);
    r
}

/// `2026-12-04 17:30` (UTC).
pub(crate) fn when(t: &chrono::DateTime<Utc>) -> String {
    t.format("%Y-%m-%d %H:%M").to_string()
}

/// At most `n` characters of a text, on one line.
pub(crate) fn snippet(text: &str, n: usize) -> String {
    let one_line: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if one_line.chars().count() > n {
        let mut s: String = one_line.chars().take(n).collect();
        s.push('…');
        s
    } else {
        one_line
    }
}

/// What a handler adds to the audit line of the change it made (the panel's own pages:
/// sources, categories, the prompt; the operations of [`crate::ops`] audit themselves).
#[derive(Debug, Clone)]
pub struct AuditNote {
    pub action: &'static str,
    pub target: String,
    pub detail: String,
}

/// The words and chrome every page shares.
#[derive(Debug, Clone)]
pub struct Chrome {
    pub t: &'static Texts,
    pub user: String,
    /// Whether the account is an admin (the navigation shows a moderator only its pages).
    pub admin: bool,
    pub csrf: String,
    /// The current page's path (the nav marks it).
    pub nav: &'static str,
    pub flash: Option<String>,
    pub flash_error: Option<String>,
}

impl Chrome {
    pub fn is(&self, nav: &str) -> bool {
        self.nav == nav
    }
}

/// The session and language of a request, for handlers.
#[derive(Debug, Clone)]
pub struct Ctx {
    pub session: Session,
    pub t: &'static Texts,
}

impl Ctx {
    /// Who does what this request asks, for the operations' audit.
    pub fn actor(&self) -> Actor {
        Actor {
            name: self.session.username.clone(),
            role: self.session.role,
        }
    }

    pub fn chrome(&self, nav: &'static str) -> Chrome {
        Chrome {
            t: self.t,
            user: self.session.username.clone(),
            admin: self.session.role == AdminRole::Admin,
            csrf: self.session.csrf.clone(),
            nav,
            flash: None,
            flash_error: None,
        }
    }
}

impl<S: Send + Sync> axum::extract::FromRequestParts<S> for Ctx {
    type Rejection = Response;

    async fn from_request_parts(
        parts: &mut axum::http::request::Parts,
        _: &S,
    ) -> Result<Self, Self::Rejection> {
        parts
            .extensions
            .get::<Ctx>()
            .cloned()
            .ok_or_else(|| StatusCode::UNAUTHORIZED.into_response())
    }
}

/// A panel error, shown as a page (or a line for htmx).
#[derive(Debug, thiserror::Error)]
pub enum PanelError {
    #[error("not found")]
    NotFound,
    #[error("this page is for admins: your account's role is {}; ask an admin", .0.as_str())]
    Forbidden(AdminRole),
    #[error("{0}")]
    BadInput(String),
    #[error("the database failed: {0}")]
    Store(#[from] jobwire_store::StoreError),
}

impl From<OpError> for PanelError {
    fn from(e: OpError) -> Self {
        match e {
            OpError::NotFound(_) => Self::NotFound,
            OpError::Store(e) => Self::Store(e),
            other => Self::BadInput(other.to_string()),
        }
    }
}

impl IntoResponse for PanelError {
    fn into_response(self) -> Response {
        let status = match &self {
            Self::NotFound => StatusCode::NOT_FOUND,
            Self::Forbidden(_) => StatusCode::FORBIDDEN,
            Self::BadInput(_) => StatusCode::UNPROCESSABLE_ENTITY,
            Self::Store(e) => {
                tracing::warn!(error = %e, "panel: store error");
                StatusCode::INTERNAL_SERVER_ERROR
            }
        };
        let page = ErrorPage {
            status: status.as_u16(),
            message: self.to_string(),
        };
        match page.render() {
            Ok(html) => (
                status,
                [(header::CONTENT_TYPE, "text/html; charset=utf-8")],
                html,
            )
                .into_response(),
            Err(_) => (status, self.to_string()).into_response(),
        }
    }
}

#[derive(Template)]
#[template(path = "error.html")]
struct ErrorPage {
    status: u16,
    message: String,
}

pub type PageResult = Result<Response, PanelError>;

/// Every panel request passes here: public routes go through; others need a live session;
/// state changes need the CSRF token and this site's origin, and are audited when they
/// succeed. Every answer is marked not to be cached, framed or sniffed.
async fn gate(State(panel): State<Arc<Panel>>, request: Request, next: Next) -> Response {
    let mut response = gate_inner(panel, request, next).await;
    let h = response.headers_mut();
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("same-origin"),
    );
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(
            "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; \
             frame-ancestors 'none'; form-action 'self'; base-uri 'none'",
        ),
    );
    if !h.contains_key(header::CACHE_CONTROL) {
        h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    }
    response
}

async fn gate_inner(panel: Arc<Panel>, request: Request, next: Next) -> Response {
    let method = request.method().clone();
    let path = request.uri().path().to_owned();
    if is_public(&method, &path) {
        return next.run(request).await;
    }
    let store = panel.store();
    let now = Utc::now();
    let Some(session) = auth::session_of(store.as_ref(), request.headers(), now).await else {
        return unauthenticated(&request);
    };
    let route = request
        .extensions()
        .get::<MatchedPath>()
        .map(|m| m.as_str().to_owned());
    if let Some(needed) = route.and_then(|r| required_role(&method, &r))
        && !session.role.allows(needed)
    {
        tracing::warn!(user = %session.username, role = session.role.as_str(), %method, %path,
            "panel: refused to this role");
        return PanelError::Forbidden(session.role).into_response();
    }
    let t = i18n::lang(request.headers());
    let (request, lang_cookie) = switch_language(request);
    let t = lang_cookie.map_or(t, |(code, _)| i18n::by_code(code));
    let mut request = request;
    if auth::changes_state(&method) {
        let (parts, body) = request.into_parts();
        let bytes = match axum::body::to_bytes(body, MAX_FORM_BYTES).await {
            Ok(b) => b,
            Err(_) => {
                return (StatusCode::PAYLOAD_TOO_LARGE, "the form is too large").into_response();
            }
        };
        let given = parts
            .headers
            .get(auth::CSRF_HEADER)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
            .or_else(|| form_field(&bytes, auth::CSRF_FIELD));
        if let Err(refusal) = auth::check_csrf(&parts.headers, &session, given.as_deref()) {
            tracing::warn!(user = %session.username, %path, ?refusal, "panel: state change refused");
            return (StatusCode::FORBIDDEN, refusal.message()).into_response();
        }
        request = Request::from_parts(parts, Body::from(bytes));
    }
    let actor = session.username.clone();
    request.extensions_mut().insert(Ctx { session, t });
    let mut response = next.run(request).await;
    let audited = response.extensions_mut().remove::<Audited>().is_some();
    if auth::changes_state(&method)
        && response.status().as_u16() < 400
        && path != "/logout"
        && !audited
    {
        let note = response.extensions_mut().remove::<AuditNote>();
        let (action, target, detail) = match note {
            Some(n) => (n.action.to_owned(), n.target, n.detail),
            None => (format!("{method} {path}"), path.clone(), String::new()),
        };
        if let Err(e) = store
            .record_audit(&actor, &action, &target, &detail, now)
            .await
        {
            tracing::error!(error = %e, %action, "panel: the audit log could not be written");
        }
    }
    if let Some((code, _)) = lang_cookie
        && let Ok(v) = HeaderValue::from_str(&format!(
            "{}={code}; Path=/; SameSite=Strict; Max-Age=31536000",
            auth::LANG_COOKIE
        ))
    {
        response.headers_mut().append(header::SET_COOKIE, v);
    }
    response
}

/// `?lang=ru|en` on any page switches the language (kept in a cookie).
fn switch_language(request: Request) -> (Request, Option<(&'static str, ())>) {
    let code = request.uri().query().and_then(|q| {
        url::form_urlencoded::parse(q.as_bytes())
            .find(|(k, _)| k == "lang")
            .map(|(_, v)| if v == "ru" { "ru" } else { "en" })
    });
    (request, code.map(|c| (c, ())))
}

/// Without a session: pages go to the login (remembering where to come back), htmx and
/// JSON requests get 401.
fn unauthenticated(request: &Request) -> Response {
    let headers = request.headers();
    let wants_page = request.method() == Method::GET
        && headers.get("hx-request").is_none()
        && headers
            .get(header::ACCEPT)
            .and_then(|v| v.to_str().ok())
            .is_none_or(|a| !a.contains("application/json") || a.contains("text/html"));
    if wants_page {
        let next = request
            .uri()
            .path_and_query()
            .map_or("/", |p| p.as_str())
            .to_owned();
        let to = format!(
            "/login?next={}",
            url::form_urlencoded::byte_serialize(next.as_bytes()).collect::<String>()
        );
        return Redirect::to(&to).into_response();
    }
    let mut r = (StatusCode::UNAUTHORIZED, "log in first: /login").into_response();
    r.headers_mut()
        .insert("hx-redirect", HeaderValue::from_static("/login"));
    r
}

/// A field of an urlencoded form body.
pub(crate) fn form_field(body: &Bytes, name: &str) -> Option<String> {
    url::form_urlencoded::parse(body)
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.into_owned())
}

/// A redirect after a successful form post (303, so the browser GETs the target).
pub(crate) fn see_other(to: &str) -> Response {
    Redirect::to(to).into_response()
}
