//! The admin HTTP API, served under `/api` next to `/healthz`, `/readyz` and `/metrics`.
//!
//! Every route needs either a panel session (the `jw_session` cookie of `/login`; a state
//! change also needs the session's CSRF token in `X-CSRF-Token` and this site's origin) of
//! an account whose role the route allows ([`ROUTES`]: a moderator gets `403` on payments,
//! refunds, broadcasts and retraining), or `Authorization: Bearer <token>` (an admin's
//! rights), the token being `JOBWIRE_ADMIN_TOKEN` (surrounding
//! whitespace ignored), at least [`MIN_TOKEN_LEN`] characters: a shorter one stops the
//! start-up ([`AdminApi::check_token`]). Unset or empty, only a session opens the API; any
//! other request gets 401. Every change that succeeds is written to the audit log, with the
//! admin's name or `api-token`.
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

pub mod failures;

use std::collections::{HashMap, HashSet};
use std::net::SocketAddr;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::Bytes;
use axum::extract::rejection::{PathRejection, QueryRejection};
use axum::extract::{ConnectInfo, Path, Query, Request, State};
use axum::http::{StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use chrono::{DateTime, Utc};
use jobwire_core::secret::Secret;
use jobwire_core::{CategorySlug, PostKind};
use jobwire_store::{
    AdminRole, ExampleSource, NewExample, PostId, ReportId, ReportRow, ReportStatus, Store,
};
use serde::Deserialize;
use serde_json::{Value, json};

use self::failures::{Client, FailedAttempts};

/// The environment variable holding the admin token.
pub const TOKEN_ENV: &str = "JOBWIRE_ADMIN_TOKEN";

/// The shortest admin token accepted, in characters.
pub const MIN_TOKEN_LEN: usize = 32;

/// Failed attempts (401) a client may make before it is slowed down (429 meanwhile).
pub const MAX_FAILURES: u32 = 5;

/// The longest wait between two attempts of a slowed-down client.
pub const MAX_WAIT: Duration = Duration::from_secs(60);

/// A client's failed attempts are forgotten this long after its last one.
pub const FAILURE_WINDOW: Duration = Duration::from_secs(15 * 60);

/// Clients whose failures are remembered at once (the oldest window is forgotten first).
const MAX_TRACKED_CLIENTS: usize = 10_000;

/// The kinds a label may have.
pub const KINDS: [&str; 4] = ["job", "resume", "ad", "chatter"];

const DEFAULT_LIMIT: u32 = 50;
const MAX_LIMIT: u32 = 1000;

/// The configured admin token is too short (the token itself is never shown).
#[derive(Debug, thiserror::Error)]
#[error(
    "{TOKEN_ENV} is too short: use at least {MIN_TOKEN_LEN} characters \
     (e.g. `openssl rand -hex 32`), or unset it to disable the admin API"
)]
pub struct AdminTokenError;

/// The configured token, as the API sees it.
#[derive(Debug)]
enum Token {
    /// Unset or empty: the API is disabled (503).
    Unset,
    /// Shorter than [`MIN_TOKEN_LEN`]: refused at start-up; the API answers 503.
    TooShort,
    Valid(Secret),
}

/// What the admin API needs: its token, the configured category slugs, and the store
/// (attached once the database answers; until then the routes answer 503).
#[derive(Debug)]
pub struct AdminApi {
    token: Token,
    categories: HashSet<String>,
    store: OnceLock<Arc<dyn Store>>,
    failures: FailedAttempts,
    /// The main bot, for refunds (`refundStarPayment`); `None`: refunds answer 503.
    main_bot: OnceLock<(teloxide::Bot, Secret)>,
    /// The resolved settings (audiences and bots of broadcasts); `None`: broadcasts
    /// cannot be created (503).
    broadcasts: OnceLock<crate::broadcasts::BroadcastSetup>,
    panel_options: OnceLock<crate::PanelOptions>,
    /// The configured LLM, for trying prompt versions; `None`: trying is not available.
    prompt_lab: OnceLock<Arc<dyn crate::PromptLab>>,
    /// The categories' configured order and the bots a category can be given.
    category_setup: OnceLock<crate::CategorySetup>,
}

impl AdminApi {
    /// `token`: `None` (or empty) disables the API (503); one shorter than
    /// [`MIN_TOKEN_LEN`] makes [`Self::check_token`] fail. `categories`: the valid slugs.
    pub fn new(token: Option<String>, categories: impl IntoIterator<Item = String>) -> Arc<Self> {
        let token = match token.as_deref().map(str::trim) {
            None | Some("") => Token::Unset,
            Some(t) if t.chars().count() < MIN_TOKEN_LEN => Token::TooShort,
            Some(t) => Token::Valid(Secret::from(t)),
        };
        Arc::new(Self {
            token,
            categories: categories.into_iter().collect(),
            store: OnceLock::new(),
            failures: FailedAttempts::new(
                MAX_FAILURES,
                MAX_WAIT,
                FAILURE_WINDOW,
                MAX_TRACKED_CLIENTS,
            ),
            main_bot: OnceLock::new(),
            broadcasts: OnceLock::new(),
            panel_options: OnceLock::new(),
            prompt_lab: OnceLock::new(),
            category_setup: OnceLock::new(),
        })
    }

    /// [`AdminApi::new`] with the token from `JOBWIRE_ADMIN_TOKEN`.
    pub fn from_env(categories: impl IntoIterator<Item = String>) -> Arc<Self> {
        let api = Self::new(std::env::var(TOKEN_ENV).ok(), categories);
        if matches!(api.token, Token::Unset) {
            tracing::info!("admin API disabled: set {TOKEN_ENV}");
        }
        api
    }

    /// Fails when the configured token is too short; the server calls it before serving.
    /// Unset or empty is fine: the API is then disabled.
    pub fn check_token(&self) -> Result<(), AdminTokenError> {
        match self.token {
            Token::TooShort => Err(AdminTokenError),
            Token::Unset | Token::Valid(_) => Ok(()),
        }
    }

    /// Gives the API its store (once; later calls are ignored).
    pub fn attach_store(&self, store: Arc<dyn Store>) {
        if self.store.set(store).is_err() {
            tracing::debug!("admin API: store attached already");
        }
    }

    /// Gives the API the main bot (the one that took the payments), for refunds.
    pub fn attach_main_bot(&self, api_url: url::Url, token: Secret) {
        let bot = teloxide::Bot::new(token.expose()).set_api_url(api_url);
        if self.main_bot.set((bot, token)).is_err() {
            tracing::debug!("admin API: main bot attached already");
        }
    }

    /// How the panel beside the API is served (`Secure` cookies).
    pub fn set_panel_options(&self, options: crate::PanelOptions) {
        if self.panel_options.set(options).is_err() {
            tracing::debug!("admin API: panel options set already");
        }
    }

    /// The panel's options ([`Self::set_panel_options`], else the defaults).
    pub fn panel_options(&self) -> crate::PanelOptions {
        self.panel_options.get().copied().unwrap_or_default()
    }

    /// Gives the API what broadcasts are created with (categories, plans, bots).
    pub fn attach_broadcasts(&self, setup: crate::broadcasts::BroadcastSetup) {
        if self.broadcasts.set(setup).is_err() {
            tracing::debug!("admin API: settings attached already");
        }
    }

    /// Gives the panel the configured LLM, to try prompt versions with.
    pub fn attach_prompt_lab(&self, lab: Arc<dyn crate::PromptLab>) {
        if self.prompt_lab.set(lab).is_err() {
            tracing::debug!("admin API: prompt lab attached already");
        }
    }

    /// Gives the panel the categories' order and the configured bots.
    pub fn attach_category_setup(&self, setup: crate::CategorySetup) {
        if self.category_setup.set(setup).is_err() {
            tracing::debug!("admin API: category setup attached already");
        }
    }

    /// The categories' order and bots, when attached.
    pub fn category_setup(&self) -> Option<&crate::CategorySetup> {
        self.category_setup.get()
    }

    /// The LLM prompt versions are tried with, when one is configured.
    pub fn prompt_lab(&self) -> Option<&Arc<dyn crate::PromptLab>> {
        self.prompt_lab.get()
    }

    /// The store, once attached.
    pub fn store_handle(&self) -> Option<&Arc<dyn Store>> {
        self.store.get()
    }

    /// The configured category slugs.
    pub fn category_slugs(&self) -> impl Iterator<Item = &String> {
        self.categories.iter()
    }

    fn store(&self) -> Result<&Arc<dyn Store>, ApiError> {
        self.store.get().ok_or_else(|| {
            ApiError::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "admin API not ready: the database is not connected yet",
            )
        })
    }
}

macro_rules! api_routes {
    ($($method:ident $path:literal $role:ident => $handler:ident;)*) => {
        /// Every route of the API (method, path, the role it needs): the router is built
        /// from this list alone, and a test checks each one refuses a request without auth,
        /// and a moderator's session on every admin route.
        pub const ROUTES: &[(&str, &str, AdminRole)] =
            &[$((stringify!($method), $path, AdminRole::$role),)*];

        /// The `/api` routes (paths included), to merge into the admin server's router.
        pub fn router(api: Arc<AdminApi>) -> Router {
            Router::new()
                $(.route($path, $method($handler)))*
                .route_layer(middleware::from_fn_with_state(api.clone(), authorize))
                .with_state(api)
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

/// An error answer: `{"error": message}` with a status.
#[derive(Debug)]
pub struct ApiError {
    status: StatusCode,
    message: String,
}

impl ApiError {
    /// What went wrong, in words.
    pub fn message(&self) -> &str {
        &self.message
    }

    fn new(status: StatusCode, message: impl Into<String>) -> Self {
        Self {
            status,
            message: message.into(),
        }
    }

    fn bad_request(message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, message)
    }

    fn not_found(message: impl Into<String>) -> Self {
        Self::new(StatusCode::NOT_FOUND, message)
    }

    fn conflict(message: impl Into<String>) -> Self {
        Self::new(StatusCode::CONFLICT, message)
    }
}

impl From<jobwire_store::StoreError> for ApiError {
    fn from(e: jobwire_store::StoreError) -> Self {
        tracing::warn!(error = %e, "admin API: store error");
        Self::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            format!("store error: {e}"),
        )
    }
}

impl From<PathRejection> for ApiError {
    fn from(e: PathRejection) -> Self {
        Self::bad_request(format!("bad path: {}", e.body_text()))
    }
}

impl From<QueryRejection> for ApiError {
    fn from(e: QueryRejection) -> Self {
        Self::bad_request(format!("bad query: {}", e.body_text()))
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut response =
            (self.status, axum::Json(json!({ "error": self.message }))).into_response();
        if self.status == StatusCode::UNAUTHORIZED {
            response.headers_mut().insert(
                header::WWW_AUTHENTICATE,
                header::HeaderValue::from_static("Bearer"),
            );
        }
        response
    }
}

type ApiResult = Result<Response, ApiError>;

/// A logged-in admin of the panel (a session cookie; state changes need its CSRF token in
/// `X-CSRF-Token`), else the bearer token. A change that succeeds is audited.
async fn authorize(State(api): State<Arc<AdminApi>>, request: Request, next: Next) -> Response {
    let method = request.method().clone();
    let path = request.uri().path().to_owned();
    let session = match api.store.get() {
        Some(store) => crate::auth::session_of(store.as_ref(), request.headers(), Utc::now()).await,
        None => None,
    };
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
            session.username
        }
        None => match check_bearer(&api, &request) {
            Ok(()) => "api-token".to_owned(),
            Err(refused) => return refused,
        },
    };
    let response = next.run(request).await;
    if crate::auth::changes_state(&method)
        && response.status().is_success()
        && let Some(store) = api.store.get()
        && let Err(e) = store
            .record_audit(&actor, &format!("api {method}"), &path, "", Utc::now())
            .await
    {
        tracing::error!(error = %e, "admin API: the audit log could not be written");
    }
    response
}

/// The bearer token check, limited per client. The `Err` is the refusal, answered at once
/// (only on that path, so its size costs nothing where it matters).
#[allow(clippy::result_large_err)]
fn check_bearer(api: &AdminApi, request: &Request) -> Result<(), Response> {
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

fn time(t: DateTime<Utc>) -> String {
    t.to_rfc3339()
}

fn report_json(r: &ReportRow) -> Value {
    json!({
        "id": r.id,
        "chat_id": r.chat_id,
        "post_id": r.post_id,
        "kind": r.kind.as_str(),
        "text": r.text,
        "link": r.link,
        "status": r.status.as_str(),
        "created_at": time(r.created_at),
        "decided_at": r.decided_at.map(time),
        "example_id": r.example_id,
    })
}

async fn list_reports(
    State(api): State<Arc<AdminApi>>,
    query: Result<Query<HashMap<String, String>>, QueryRejection>,
) -> ApiResult {
    let Query(query) = query?;
    let status = match query.get("status").map(String::as_str) {
        None | Some("") | Some("all") => None,
        Some(raw) => Some(ReportStatus::parse(raw).ok_or_else(|| {
            ApiError::bad_request(format!(
                "unknown status {raw:?}: use pending, accepted or rejected"
            ))
        })?),
    };
    let limit = match query.get("limit") {
        None => DEFAULT_LIMIT,
        Some(raw) => match raw.parse::<u32>() {
            Ok(n) if (1..=MAX_LIMIT).contains(&n) => n,
            _ => {
                return Err(ApiError::bad_request(format!(
                    "bad limit {raw:?}: use a number from 1 to {MAX_LIMIT}"
                )));
            }
        },
    };
    let store = api.store()?;
    let reports = store.reports(status, limit).await?;
    // Whether each report's post is withheld (enough users complained; it waits for a
    // decision here), read once per post.
    let mut withheld: HashMap<PostId, bool> = HashMap::new();
    for post in reports.iter().filter_map(|r| r.post_id) {
        if let std::collections::hash_map::Entry::Vacant(e) = withheld.entry(post) {
            e.insert(store.post_withheld(post).await?);
        }
    }
    let list: Vec<Value> = reports
        .iter()
        .map(|r| {
            let mut v = report_json(r);
            v["post_withheld"] = json!(
                r.post_id
                    .and_then(|p| withheld.get(&p))
                    .copied()
                    .unwrap_or(false)
            );
            v
        })
        .collect();
    Ok(axum::Json(json!({ "reports": list })).into_response())
}

/// A label as an admin sends it.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct LabelBody {
    pub(crate) is_job: bool,
    pub(crate) kind: String,
    #[serde(default)]
    pub(crate) categories: Vec<String>,
}

impl LabelBody {
    fn parse(body: &[u8]) -> Result<Self, ApiError> {
        serde_json::from_slice(body)
            .map_err(|e| ApiError::bad_request(format!("bad JSON body: {e}")))
    }

    /// Checks the label against the taxonomy; the error names the bad value.
    pub(crate) fn validate(&self, api: &AdminApi) -> Result<(), ApiError> {
        if !KINDS.contains(&self.kind.as_str()) {
            return Err(ApiError::bad_request(format!(
                "unknown kind {:?}: use one of {}",
                self.kind,
                KINDS.join(", ")
            )));
        }
        if self.is_job != (self.kind == "job") {
            return Err(ApiError::bad_request(format!(
                "is_job {} disagrees with kind {:?}: is_job is true exactly for kind \"job\"",
                self.is_job, self.kind
            )));
        }
        if let Some(bad) = self
            .categories
            .iter()
            .find(|c| !api.categories.contains(c.as_str()))
        {
            let mut known: Vec<&str> = api.categories.iter().map(String::as_str).collect();
            known.sort_unstable();
            return Err(ApiError::bad_request(format!(
                "unknown category {bad:?}: configured categories are {}",
                known.join(", ")
            )));
        }
        if self.is_job && self.categories.is_empty() {
            return Err(ApiError::bad_request("a job needs at least one category"));
        }
        Ok(())
    }

    /// The checked label (see [`Self::check`]) as an example.
    pub(crate) fn into_example(
        self,
        post_id: Option<PostId>,
        text: String,
        source: ExampleSource,
    ) -> Result<NewExample, ApiError> {
        let kind = PostKind::parse(&self.kind)
            .ok_or_else(|| ApiError::bad_request(format!("unknown kind {:?}", self.kind)))?;
        let mut categories = self
            .categories
            .iter()
            .map(|c| CategorySlug::parse(c).map_err(|e| ApiError::bad_request(e.to_string())))
            .collect::<Result<Vec<_>, _>>()?;
        categories.sort();
        categories.dedup();
        Ok(NewExample {
            post_id,
            text,
            is_job: self.is_job,
            kind,
            categories,
            source,
        })
    }
}

fn path_id(id: Result<Path<i64>, PathRejection>) -> Result<i64, ApiError> {
    let Path(id) = id?;
    Ok(id)
}

/// A label request: the id in the path, the label in the body (checked against the taxonomy)
/// and the store to apply it to.
fn labeled<'a>(
    api: &'a AdminApi,
    id: Result<Path<i64>, PathRejection>,
    body: &[u8],
) -> Result<(i64, LabelBody, &'a dyn Store), ApiError> {
    let id = path_id(id)?;
    let label = LabelBody::parse(body)?;
    label.validate(api)?;
    Ok((id, label, api.store()?.as_ref()))
}

/// The report, if it exists and is still pending.
async fn pending_report(store: &dyn Store, id: ReportId) -> Result<ReportRow, ApiError> {
    let report = store
        .report(id)
        .await?
        .ok_or_else(|| ApiError::not_found(format!("no report {id}")))?;
    if report.status != ReportStatus::Pending {
        return Err(ApiError::conflict(format!(
            "report {id} was {} already",
            report.status.as_str()
        )));
    }
    Ok(report)
}

async fn decided(store: &dyn Store, id: ReportId, done: bool) -> ApiResult {
    if !done {
        // Decided by someone else between our read and our write.
        return Err(ApiError::conflict(format!(
            "report {id} was decided already"
        )));
    }
    let report = store
        .report(id)
        .await?
        .ok_or_else(|| ApiError::not_found(format!("no report {id}")))?;
    Ok(axum::Json(json!({ "report": report_json(&report) })).into_response())
}

async fn accept_report(
    State(api): State<Arc<AdminApi>>,
    id: Result<Path<i64>, PathRejection>,
    body: Bytes,
) -> ApiResult {
    let (id, label, store) = labeled(&api, id, &body)?;
    let id = ReportId(id);
    let report = pending_report(store, id).await?;
    // The stored post's own text when the report points at one (a `/wrong` reply quotes the
    // delivered card, with its header and the subscriber's comment); else the report's text.
    let post_text = match report.post_id {
        Some(post_id) => store
            .post(post_id)
            .await?
            .map(|p| p.text)
            .filter(|t| !t.trim().is_empty()),
        None => None,
    };
    let text = match post_text {
        Some(t) => t,
        None if !report.text.trim().is_empty() => report.text.clone(),
        None => {
            return Err(ApiError::bad_request(format!(
                "report {id} has no text to learn from (empty, and no stored post)"
            )));
        }
    };
    let example = label.into_example(report.post_id, text, ExampleSource::Report)?;
    let done = store.decide_report(id, Some(&example), Utc::now()).await?;
    tracing::info!(
        report = id.get(),
        kind = example.kind.as_str(),
        done,
        "admin API: report accepted"
    );
    decided(store, id, done).await
}

async fn reject_report(
    State(api): State<Arc<AdminApi>>,
    id: Result<Path<i64>, PathRejection>,
) -> ApiResult {
    let id = ReportId(path_id(id)?);
    let store = api.store()?.as_ref();
    pending_report(store, id).await?;
    let done = store.decide_report(id, None, Utc::now()).await?;
    tracing::info!(report = id.get(), done, "admin API: report rejected");
    decided(store, id, done).await
}

async fn label_post(
    State(api): State<Arc<AdminApi>>,
    id: Result<Path<i64>, PathRejection>,
    body: Bytes,
) -> ApiResult {
    let (id, label, store) = labeled(&api, id, &body)?;
    let post = store
        .post(PostId(id))
        .await?
        .ok_or_else(|| ApiError::not_found(format!("no post {id}")))?;
    let example = label.into_example(Some(post.id), post.text, ExampleSource::Relabel)?;
    let example_id = store.add_example(&example, Utc::now()).await?;
    tracing::info!(
        post = id,
        kind = example.kind.as_str(),
        example_id = example_id.get(),
        "admin API: post relabeled"
    );
    Ok(axum::Json(json!({
        "example_id": example_id,
        "post_id": id,
        "is_job": example.is_job,
        "kind": example.kind.as_str(),
        "categories": example.categories.iter().map(CategorySlug::as_str).collect::<Vec<_>>(),
        "source": ExampleSource::Relabel.as_str(),
    }))
    .into_response())
}

#[derive(Debug, serde::Deserialize)]
struct PaymentsQuery {
    chat_id: Option<i64>,
    limit: Option<u32>,
}

/// `GET /api/payments[?chat_id=&limit=]`: the ledger, newest first (at most 1000 rows).
async fn list_payments(
    State(api): State<Arc<AdminApi>>,
    query: Result<Query<PaymentsQuery>, QueryRejection>,
) -> ApiResult {
    let Query(q) = query?;
    let store = api.store()?.as_ref();
    let rows = store
        .ledger(q.chat_id, q.limit.unwrap_or(100).clamp(1, 1000))
        .await?;
    let rows: Vec<_> = rows
        .iter()
        .map(|r| {
            json!({
                "id": r.id,
                "kind": r.kind.as_str(),
                "charge_id": r.charge_id,
                "provider_charge_id": r.provider_charge_id,
                "chat_id": r.chat_id,
                "plan_id": r.plan_id,
                "amount": r.amount,
                "currency": r.currency,
                "is_recurring": r.is_recurring,
                "is_first_recurring": r.is_first_recurring,
                "subscription_expires_at": r.subscription_expires_at,
                "source": r.source.as_str(),
                "created_at": r.created_at,
            })
        })
        .collect();
    Ok(axum::Json(json!({ "payments": rows })).into_response())
}

/// `POST /api/payments/{charge_id}/refund`: refunds a Stars payment through Telegram, records
/// it in the ledger and ends the access it bought.
async fn refund_payment(
    State(api): State<Arc<AdminApi>>,
    charge: Result<Path<String>, PathRejection>,
) -> ApiResult {
    let Path(charge) = charge?;
    let (chat_id, paid) = refund(&api, &charge).await?;
    Ok(axum::Json(json!({ "refunded": charge, "chat_id": chat_id, "amount": paid.amount, "currency": paid.currency })).into_response())
}

/// Refunds a Stars payment through the main bot (`refundStarPayment`) and records it; the
/// period it bought is revoked. Returns the chat and the payment.
pub(crate) async fn refund(
    api: &AdminApi,
    charge: &str,
) -> Result<(i64, jobwire_store::LedgerRow), ApiError> {
    use jobwire_store::LedgerKind;
    let store = api.store()?;
    let paid = store
        .ledger_entry(charge, LedgerKind::Payment)
        .await?
        .ok_or_else(|| ApiError::not_found(format!("no payment {charge:?} in the ledger")))?;
    for kind in [LedgerKind::Refund, LedgerKind::Refunded] {
        if store.ledger_entry(charge, kind).await?.is_some() {
            return Err(ApiError::conflict(format!(
                "payment {charge:?} was refunded before"
            )));
        }
    }
    if paid.currency != jobwire_core::billing::STARS {
        return Err(ApiError::conflict(format!(
            "payment {charge:?} was made in {}: refund it with the payment provider",
            paid.currency
        )));
    }
    let (bot, token) = api.main_bot.get().ok_or_else(|| {
        ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "refunds need the main bot: set telegram.main_bot",
        )
    })?;
    let chat_id =
        jobwire_bot::billing::refund_star_payment(store, bot, token.expose(), charge, Utc::now())
            .await
            .map_err(|e| ApiError::new(StatusCode::BAD_GATEWAY, e.to_string()))?;
    tracing::info!(charge = %charge, chat_id, "admin: payment refunded");
    Ok((chat_id, paid))
}

#[derive(Debug, serde::Deserialize)]
struct PlacementsQuery {
    status: Option<String>,
    limit: Option<u32>,
}

fn placement_json(p: &jobwire_store::PlacementRow) -> Value {
    let d = &p.draft;
    json!({
        "id": p.id,
        "chat_id": p.chat_id,
        "status": p.status.as_str(),
        "language": d.lang,
        "title": d.title,
        "body": d.body,
        "budget": d.budget.as_deref().filter(|b| !b.is_empty()),
        "contact": d.contact,
        "categories": d.categories.iter().map(CategorySlug::as_str).collect::<Vec<_>>(),
        "stars": p.stars,
        "charge_id": p.charge_id,
        "post_id": p.post_id,
        "reason": p.reason,
        "decided_by": p.decided_by,
        "created_at": p.created_at,
        "paid_at": p.paid_at,
        "published_at": p.published_at,
        "refunded_at": p.refunded_at,
    })
}

/// `GET /api/placements[?status=&limit=]`: employers' placements, newest first.
async fn list_placements(
    State(api): State<Arc<AdminApi>>,
    query: Result<Query<PlacementsQuery>, QueryRejection>,
) -> ApiResult {
    let Query(q) = query?;
    let status = match q.status.as_deref() {
        None => None,
        Some(s) => Some(jobwire_store::PlacementStatus::parse(s).ok_or_else(|| {
            ApiError::bad_request(format!(
                "unknown status {s:?}: use one of {}",
                jobwire_store::PlacementStatus::ALL
                    .map(|s| s.as_str())
                    .join(", ")
            ))
        })?),
    };
    let rows = api
        .store()?
        .placements(status, q.limit.unwrap_or(100).clamp(1, MAX_LIMIT))
        .await?;
    let rows: Vec<Value> = rows.iter().map(placement_json).collect();
    Ok(axum::Json(json!({ "placements": rows })).into_response())
}

async fn show_placement(
    State(api): State<Arc<AdminApi>>,
    id: Result<Path<i64>, PathRejection>,
) -> ApiResult {
    let id = path_id(id)?;
    let p = api
        .store()?
        .placement(id)
        .await?
        .ok_or_else(|| ApiError::not_found(format!("no placement {id}")))?;
    Ok(axum::Json(json!({ "placement": placement_json(&p) })).into_response())
}

/// Why an admin refuses a placement (told to the employer with the refund).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RefuseBody {
    reason: Option<String>,
}

/// Longest refusal reason, in characters.
const MAX_REASON_CHARS: usize = 500;

/// `POST /api/placements/{id}/approve` and `…/refuse` (`{"reason": …}`, optional): the
/// decision on a paid placement waiting for approval. A refused one is refunded by the main
/// bot within seconds.
async fn decide_placement(
    State(api): State<Arc<AdminApi>>,
    path: Result<Path<(i64, String)>, PathRejection>,
    body: Bytes,
) -> ApiResult {
    let Path((id, action)) = path?;
    let approve = match action.as_str() {
        "approve" => true,
        "refuse" => false,
        other => {
            return Err(ApiError::not_found(format!(
                "unknown action {other:?}: use approve or refuse"
            )));
        }
    };
    let reason = if body.iter().all(u8::is_ascii_whitespace) {
        None
    } else {
        let b: RefuseBody = serde_json::from_slice(&body)
            .map_err(|e| ApiError::bad_request(format!("bad JSON body: {e}")))?;
        b.reason
            .map(|r| r.trim().to_owned())
            .filter(|r| !r.is_empty())
    };
    if reason
        .as_ref()
        .is_some_and(|r| r.chars().count() > MAX_REASON_CHARS)
    {
        return Err(ApiError::bad_request(format!(
            "reason: at most {MAX_REASON_CHARS} characters"
        )));
    }
    if approve && reason.is_some() {
        return Err(ApiError::bad_request("reason: only a refusal has one"));
    }
    let store = api.store()?;
    let current = store
        .placement(id)
        .await?
        .ok_or_else(|| ApiError::not_found(format!("no placement {id}")))?;
    let decided = store
        .decide_placement(id, approve, reason.as_deref(), "admin-api", Utc::now())
        .await?
        .ok_or_else(|| {
            ApiError::conflict(format!(
                "placement {id} is {}, not awaiting approval",
                current.status.as_str()
            ))
        })?;
    tracing::info!(placement = id, approve, "admin API: placement decided");
    Ok(axum::Json(json!({ "placement": placement_json(&decided) })).into_response())
}

/// A broadcast as an admin asks for it.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct BroadcastBody {
    text: String,
    category: Option<String>,
    plan: Option<String>,
    language: Option<String>,
}

async fn list_broadcasts(State(api): State<Arc<AdminApi>>) -> ApiResult {
    let list = api.store()?.broadcasts(MAX_LIMIT, Utc::now()).await?;
    let list: Vec<Value> = list.iter().map(crate::broadcasts::to_json).collect();
    Ok(axum::Json(json!({ "broadcasts": list })).into_response())
}

async fn show_broadcast(
    State(api): State<Arc<AdminApi>>,
    id: Result<Path<i64>, PathRejection>,
) -> ApiResult {
    let id = path_id(id)?;
    let b = api
        .store()?
        .broadcast(id, Utc::now())
        .await?
        .ok_or_else(|| ApiError::not_found(format!("no broadcast {id}")))?;
    Ok(axum::Json(json!({ "broadcast": crate::broadcasts::to_json(&b) })).into_response())
}

async fn create_broadcast(State(api): State<Arc<AdminApi>>, body: Bytes) -> ApiResult {
    let body: BroadcastBody = serde_json::from_slice(&body)
        .map_err(|e| ApiError::bad_request(format!("bad JSON body: {e}")))?;
    let setup = api.broadcasts.get().ok_or_else(|| {
        ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "broadcasts are not available in this process",
        )
    })?;
    let audience = crate::broadcasts::Audience {
        category: body
            .category
            .as_deref()
            .map(CategorySlug::parse)
            .transpose()
            .map_err(|e| ApiError::bad_request(e.to_string()))?,
        plan: body.plan,
        language: body.language,
    };
    let store = api.store()?;
    let b = crate::broadcasts::create(setup, store, &body.text, &audience)
        .await
        .map_err(|e| match e {
            crate::broadcasts::BroadcastError::Store(e) => ApiError::from(e),
            other => ApiError::bad_request(other.to_string()),
        })?;
    tracing::info!(
        broadcast = b.id,
        recipients = b.progress.total(),
        "admin API: broadcast started"
    );
    Ok((
        StatusCode::CREATED,
        axum::Json(json!({ "broadcast": crate::broadcasts::to_json(&b) })),
    )
        .into_response())
}

async fn change_broadcast(
    State(api): State<Arc<AdminApi>>,
    path: Result<Path<(i64, String)>, PathRejection>,
) -> ApiResult {
    use jobwire_store::BroadcastStatus as S;
    let Path((id, action)) = path?;
    let status = match action.as_str() {
        "pause" => S::Paused,
        "resume" => S::Running,
        "cancel" => S::Canceled,
        other => {
            return Err(ApiError::not_found(format!(
                "unknown action {other:?}: use pause, resume or cancel"
            )));
        }
    };
    let store = api.store()?;
    if !store.set_broadcast_status(id, status, Utc::now()).await? {
        return Err(match store.broadcast(id, Utc::now()).await? {
            None => ApiError::not_found(format!("no broadcast {id}")),
            Some(b) => {
                ApiError::conflict(format!("broadcast {id} is {} already", b.status.as_str()))
            }
        });
    }
    let b = store
        .broadcast(id, Utc::now())
        .await?
        .ok_or_else(|| ApiError::not_found(format!("no broadcast {id}")))?;
    tracing::info!(broadcast = id, action = %action, "admin API: broadcast changed");
    Ok(axum::Json(json!({ "broadcast": crate::broadcasts::to_json(&b) })).into_response())
}

async fn retrain(State(api): State<Arc<AdminApi>>) -> ApiResult {
    let store = api.store()?.as_ref();
    jobwire_classify::retrain::request_retrain(store).await?;
    tracing::info!("admin API: retrain requested");
    Ok((
        StatusCode::ACCEPTED,
        axum::Json(json!({ "retrain": "requested" })),
    )
        .into_response())
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
