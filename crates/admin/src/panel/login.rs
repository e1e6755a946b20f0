//! Logging in and out of the panel: the login page and form (each attempt limited per
//! account and client, passwords checked a few at a time), where to go after login, logout.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use askama::Template;
use askama_web::WebTemplate;
use axum::body::Bytes;
use axum::extract::{ConnectInfo, Query, Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use chrono::Utc;
use serde::Deserialize;

use crate::api::failures::Client;
use crate::auth;
use crate::i18n::{self, Texts};

use super::{Ctx, MAX_FORM_BYTES, PageResult, Panel, PanelError, see_other};

/// Where to go after login: only a path of this site (no open redirect). The value must
/// start with one `/`, hold no control character, space or backslash (browsers drop tabs
/// and newlines and read `\\` as `/`), none of them percent-encoded either, and parse as a
/// path of this site; it is followed as parsed. Anything else goes to `/`.
fn safe_next(next: Option<&str>) -> String {
    const HOME: &str = "/";
    let Some(n) = next else {
        return HOME.to_owned();
    };
    let bad = |c: char| c.is_control() || c.is_whitespace() || c == '\\';
    if !n.starts_with('/')
        || n.starts_with("//")
        || n.chars().any(bad)
        || percent_decoded(n).chars().any(bad)
    {
        return HOME.to_owned();
    }
    let Ok(base) = url::Url::parse("http://panel.invalid/") else {
        return HOME.to_owned();
    };
    match base.join(n) {
        Ok(u) if u.origin() == base.origin() && !u.path().starts_with("//") => {
            let mut to = u.path().to_owned();
            if let Some(q) = u.query() {
                to.push('?');
                to.push_str(q);
            }
            to
        }
        _ => HOME.to_owned(),
    }
}

/// `%XX` sequences decoded once (invalid UTF-8 replaced), the rest as it is.
fn percent_decoded(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (bytes[i], hex) {
            (b'%', Some(b)) => {
                out.push(b);
                i += 3;
            }
            (b, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[derive(Template, WebTemplate)]
#[template(path = "login.html")]
struct LoginPage {
    t: &'static Texts,
    next: String,
    username: String,
    error: Option<&'static str>,
}

#[derive(Debug, Deserialize)]
pub(super) struct LoginQuery {
    next: Option<String>,
    lang: Option<String>,
}

pub(super) async fn login_page(headers: HeaderMap, Query(q): Query<LoginQuery>) -> Response {
    let t = q
        .lang
        .as_deref()
        .map_or_else(|| i18n::lang(&headers), i18n::by_code);
    LoginPage {
        t,
        next: safe_next(q.next.as_deref()),
        username: String::new(),
        error: None,
    }
    .into_response()
}

#[derive(Deserialize)]
struct LoginForm {
    #[serde(default)]
    username: String,
    #[serde(default)]
    password: String,
    next: Option<String>,
}

impl std::fmt::Debug for LoginForm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoginForm")
            .field("username", &self.username)
            .finish_non_exhaustive()
    }
}

/// `POST /login`: checks the password (argon2), slowed down per (account, client) and per
/// client, the attempt counted before the hash is computed and at most
/// [`MAX_PASSWORD_CHECKS`] hashes at once; a success starts a session and goes to `next`.
pub(super) async fn login_submit(State(panel): State<Arc<Panel>>, request: Request) -> Response {
    let connect = request
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .copied();
    let (parts, body) = request.into_parts();
    let headers = parts.headers;
    let Ok(body) = axum::body::to_bytes(body, MAX_FORM_BYTES).await else {
        return (StatusCode::PAYLOAD_TOO_LARGE, "the form is too large").into_response();
    };
    let t = i18n::lang(&headers);
    let form = login_form(&body);
    let next = safe_next(form.next.as_deref());
    // Only a valid username is logged, audited or shown again.
    let name = crate::accounts::username(&form.username).ok();
    let shown = name.clone().unwrap_or_default();
    let refuse = |status: StatusCode, error: &'static str, wait: Option<Duration>| {
        let mut r = LoginPage {
            t,
            next: next.clone(),
            username: shown.clone(),
            error: Some(error),
        }
        .into_response();
        *r.status_mut() = status;
        if let Some(wait) = wait {
            let secs = wait.as_secs() + u64::from(wait.subsec_nanos() > 0);
            r.headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from(secs.max(1)));
        }
        r
    };
    if !auth::same_origin(&headers) {
        return (
            StatusCode::FORBIDDEN,
            auth::CsrfRefusal::CrossOrigin.message(),
        )
            .into_response();
    }
    let store = panel.store();
    let client = Client::new(connect.map(|ConnectInfo(a)| a.ip()));
    let pair = (name.clone().unwrap_or_default(), client);
    // Counted before the password is checked: attempts sent at once cannot all pass.
    let now = Instant::now();
    let counted = panel.login_clients.attempt(client, now).and_then(|()| {
        panel
            .login_pairs
            .attempt(pair.clone(), now)
            .inspect_err(|_| {
                panel.login_clients.forgive(&client);
            })
    });
    if let Err(wait) = counted {
        return refuse(StatusCode::TOO_MANY_REQUESTS, t.login_limited, Some(wait));
    }
    let account = match &name {
        Some(name) => match store.admin_by_username(name).await {
            Ok(a) => a,
            Err(e) => return PanelError::from(e).into_response(),
        },
        None => None,
    };
    let hash = account.as_ref().map(|a| a.password_hash.clone());
    let Some(ok) = panel.check_password(form.password.clone(), hash).await else {
        tracing::warn!(%client, "panel: password checks busy; login refused for now");
        return refuse(
            StatusCode::TOO_MANY_REQUESTS,
            t.login_limited,
            Some(Duration::from_secs(1)),
        );
    };
    // A disabled admin cannot log in (whatever the password).
    let Some(account) = account.filter(|a| ok && a.disabled_at.is_none()) else {
        let actor = name.as_deref().unwrap_or(INVALID_USERNAME);
        tracing::warn!(username = %actor, %client, "panel: failed login");
        // The wait starts from this answer, not from before the (slow) check.
        let now = Instant::now();
        panel.login_pairs.touch(&pair, now);
        panel.login_clients.touch(&client, now);
        if panel.login_pairs.blocked(&pair, now).is_some()
            || panel.login_clients.blocked(&client, now).is_some()
        {
            tracing::warn!(username = %actor, %client, "panel: login attempts slowed down");
        }
        if let Err(e) = store
            .record_audit(
                actor,
                "login.failed",
                &format!("client {client}"),
                "",
                Utc::now(),
            )
            .await
        {
            tracing::error!(error = %e, "panel: the audit log could not be written");
        }
        return refuse(StatusCode::UNAUTHORIZED, t.login_failed, None);
    };
    panel.login_pairs.succeeded(&pair);
    panel.login_clients.forgive(&client);
    let token = auth::new_token();
    let csrf = auth::new_token();
    let started = Utc::now();
    let session = jobwire_store::NewSession {
        token_hash: &auth::token_hash(&token),
        admin_id: account.id,
        csrf: &csrf,
        client: &client.to_string(),
        expires_at: started + auth::IDLE,
    };
    if let Err(e) = store.create_session(&session, started).await {
        return PanelError::from(e).into_response();
    }
    let _ = store.delete_expired_sessions(started).await;
    if let Err(e) = store
        .record_audit(
            &account.username,
            "login",
            &format!("client {client}"),
            "",
            started,
        )
        .await
    {
        tracing::error!(error = %e, "panel: the audit log could not be written");
    }
    tracing::info!(user = %account.username, %client, "panel: logged in");
    let mut r = see_other(&next);
    if let Ok(v) = HeaderValue::from_str(&auth::session_cookie(&token, panel.secure_cookies())) {
        r.headers_mut().insert(header::SET_COOKIE, v);
    }
    r
}

/// What the audit log and the logs name a login attempt's user by when its username is not
/// a valid one (a newline, 200 KB, …): the text itself is never written.
const INVALID_USERNAME: &str = "(invalid username)";

/// A fixed argon2id hash (of a random password nobody knows) to spend the same time on
/// an unknown username as on a known one.
pub(super) const DUMMY_HASH: &str = "$argon2id$v=19$m=19456,t=2,p=1$c29tZXNhbHRzb21lc2FsdA$2RCh1EBbcslAFjhOWiAGWgM2lGBXEa9Y/SsQhpZpUXE";

fn login_form(body: &Bytes) -> LoginForm {
    let mut form = LoginForm {
        username: String::new(),
        password: String::new(),
        next: None,
    };
    for (k, v) in url::form_urlencoded::parse(body) {
        match &*k {
            "username" => form.username = v.into_owned(),
            "password" => form.password = v.into_owned(),
            "next" => form.next = Some(v.into_owned()),
            _ => {}
        }
    }
    form
}

/// `POST /logout`: ends the session (in the database, so a copied cookie dies too).
pub(super) async fn logout(State(panel): State<Arc<Panel>>, ctx: Ctx) -> PageResult {
    let store = panel.store();
    store.delete_session(&ctx.session.token_hash).await?;
    store
        .record_audit(&ctx.session.username, "logout", "", "", Utc::now())
        .await?;
    let mut r = see_other("/login");
    if let Ok(v) = HeaderValue::from_str(&auth::cleared_session_cookie(panel.secure_cookies())) {
        r.headers_mut().insert(header::SET_COOKIE, v);
    }
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_path_of_this_site_is_followed_after_login() {
        for good in ["/", "/sources", "/posts/7?x=1", "/subscribers/-100"] {
            assert_eq!(safe_next(Some(good)), good, "{good:?}");
        }
        for evil in [
            "/\t/evil.example",
            "/\n/evil.example",
            "/\r\n//evil.example",
            "//evil.example",
            "/\\evil.example",
            "\\/evil.example",
            "/%09/evil.example",
            "/%0a/evil.example",
            "/%2e%2e//evil.example",
            "/%5Cevil.example",
            "%09",
            "/ /evil.example",
            "/\u{7f}/evil.example",
            "/\u{85}/evil.example",
            "https://evil.example/",
            "javascript:alert(1)",
            "evil.example",
            "",
        ] {
            assert_eq!(safe_next(Some(evil)), "/", "{evil:?}");
        }
        assert_eq!(safe_next(None), "/");
        // Parsed: dot segments cannot climb out of the site either.
        assert_eq!(safe_next(Some("/a/../../b")), "/b");
    }
}
