//! Sessions and CSRF protection of the panel.
//!
//! - A session is a random 256-bit token in the `jw_session` cookie (HttpOnly,
//!   SameSite=Strict, `Secure` when [`crate::PanelOptions::secure_cookies`] is set); the
//!   database keeps only its SHA-256, so a copy of the database cannot be used to log in.
//!   A session ends after [`IDLE`] without a request, after [`MAX_AGE`] in any case, at
//!   logout, and when the admin's password changes.
//! - Every state change (any method but GET/HEAD/OPTIONS) must carry the session's CSRF
//!   token (form field `csrf` or header `X-CSRF-Token`) and, when the browser says where it
//!   comes from (`Origin`, else `Sec-Fetch-Site`), come from this site.

use std::fmt;

use axum::http::{HeaderMap, Method, header};
use chrono::{DateTime, Duration, Utc};
use jobwire_store::{AdminRole, Store};
use rand::RngCore;
use sha2::{Digest, Sha256};

/// The session cookie.
pub const SESSION_COOKIE: &str = "jw_session";
/// The language cookie (`en`, `ru`).
pub const LANG_COOKIE: &str = "jw_lang";
/// The header htmx and scripts send the CSRF token in.
pub const CSRF_HEADER: &str = "x-csrf-token";
/// The form field forms send the CSRF token in.
pub const CSRF_FIELD: &str = "csrf";
/// A session unused this long ends.
pub const IDLE: Duration = Duration::hours(12);
/// A session ends this long after login, used or not.
pub const MAX_AGE: Duration = Duration::days(7);
/// How often a session's last use is written (not at every request).
const TOUCH_EVERY: Duration = Duration::minutes(1);

/// A logged-in admin. `Debug` leaves the tokens out.
#[derive(Clone)]
pub struct Session {
    pub admin_id: jobwire_store::AdminId,
    pub username: String,
    /// What the account may do, read with the session at every request.
    pub role: AdminRole,
    pub csrf: String,
    pub(crate) token_hash: String,
}

impl fmt::Debug for Session {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Session")
            .field("admin_id", &self.admin_id)
            .field("username", &self.username)
            .field("role", &self.role)
            .finish_non_exhaustive()
    }
}

/// A fresh random token: 32 bytes, hex.
pub fn new_token() -> String {
    let mut bytes = [0u8; 32];
    rand::rng().fill_bytes(&mut bytes);
    hex::encode(bytes)
}

/// The SHA-256 of a session token, hex: what the database keeps.
pub fn token_hash(token: &str) -> String {
    hex::encode(Sha256::digest(token.as_bytes()))
}

/// The value of cookie `name` in the request's `Cookie` headers.
pub fn cookie<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v.trim())
}

/// The session the request's cookie names, when it is live; its end moves with use.
pub async fn session_of(
    store: &dyn Store,
    headers: &HeaderMap,
    now: DateTime<Utc>,
) -> Option<Session> {
    let token = cookie(headers, SESSION_COOKIE)?;
    if token.len() != 64 || !token.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    let hash = token_hash(token);
    let row = match store.session(&hash, now).await {
        Ok(row) => row?,
        Err(e) => {
            tracing::warn!(error = %e, "panel: reading a session failed");
            return None;
        }
    };
    if now - row.created_at > MAX_AGE {
        return None;
    }
    if now - row.last_seen_at > TOUCH_EVERY {
        let ends = (now + IDLE).min(row.created_at + MAX_AGE);
        if let Err(e) = store.touch_session(&hash, now, ends).await {
            tracing::warn!(error = %e, "panel: refreshing a session failed");
        }
    }
    Some(Session {
        admin_id: row.admin_id,
        username: row.username,
        role: row.role,
        csrf: row.csrf,
        token_hash: hash,
    })
}

/// Whether a method changes state (and so needs the CSRF token).
pub fn changes_state(method: &Method) -> bool {
    !matches!(*method, Method::GET | Method::HEAD | Method::OPTIONS)
}

/// Why a state change was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CsrfRefusal {
    /// The page that sent it is another site's.
    CrossOrigin,
    /// The token is missing or wrong (an old page after a new login, or a forgery).
    BadToken,
}

impl CsrfRefusal {
    pub fn message(self) -> &'static str {
        match self {
            Self::CrossOrigin => "refused: the request came from another site",
            Self::BadToken => {
                "refused: the form's security token is missing or old; reload the page and try again"
            }
        }
    }
}

/// Checks a state change: its origin, then its token.
pub fn check_csrf(
    headers: &HeaderMap,
    session: &Session,
    given: Option<&str>,
) -> Result<(), CsrfRefusal> {
    if !same_origin(headers) {
        return Err(CsrfRefusal::CrossOrigin);
    }
    match given {
        Some(t) if constant_time_eq(t.trim().as_bytes(), session.csrf.as_bytes()) => Ok(()),
        _ => Err(CsrfRefusal::BadToken),
    }
}

/// `Origin` (when sent) names this host; else `Sec-Fetch-Site` (when sent) says same-origin
/// or a typed address. A client that sends neither (curl, a script) is judged by the token.
pub fn same_origin(headers: &HeaderMap) -> bool {
    let host = headers.get(header::HOST).and_then(|h| h.to_str().ok());
    if let Some(origin) = headers.get(header::ORIGIN) {
        let Some(origin) = origin.to_str().ok().and_then(|o| url::Url::parse(o).ok()) else {
            return false;
        };
        let Some(host) = host else { return false };
        let origin_host = match (origin.host_str(), origin.port()) {
            (Some(h), Some(p)) => format!("{h}:{p}"),
            (Some(h), None) => h.to_owned(),
            (None, _) => return false,
        };
        return origin_host.eq_ignore_ascii_case(host);
    }
    match headers.get("sec-fetch-site").and_then(|v| v.to_str().ok()) {
        Some(site) => matches!(site, "same-origin" | "none"),
        None => true,
    }
}

/// Compares in time that depends only on the lengths (`subtle`).
pub(crate) fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    use subtle::ConstantTimeEq;
    bool::from(a.ct_eq(b))
}

/// The `Set-Cookie` value of a new session.
pub fn session_cookie(token: &str, secure: bool) -> String {
    format!(
        "{SESSION_COOKIE}={token}; Path=/; HttpOnly; SameSite=Strict; Max-Age={}{}",
        MAX_AGE.num_seconds(),
        if secure { "; Secure" } else { "" }
    )
}

/// The `Set-Cookie` value that removes the session cookie.
pub fn cleared_session_cookie(secure: bool) -> String {
    format!(
        "{SESSION_COOKIE}=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0{}",
        if secure { "; Secure" } else { "" }
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.append(
                *k,
                HeaderValue::from_str(v).unwrap_or(HeaderValue::from_static("")),
            );
        }
        h
    }

    fn session() -> Session {
        Session {
            admin_id: jobwire_store::AdminId(1),
            username: "ops".into(),
            role: AdminRole::Admin,
            csrf: "a".repeat(64),
            token_hash: String::new(),
        }
    }

    #[test]
    fn another_sites_form_is_refused_even_with_the_token() {
        let s = session();
        let token = Some(s.csrf.as_str());
        let ours = headers(&[
            ("host", "panel.example:8080"),
            ("origin", "https://panel.example:8080"),
        ]);
        assert_eq!(check_csrf(&ours, &s, token), Ok(()));
        let theirs = headers(&[
            ("host", "panel.example:8080"),
            ("origin", "https://evil.example"),
        ]);
        assert_eq!(
            check_csrf(&theirs, &s, token),
            Err(CsrfRefusal::CrossOrigin)
        );
        let cross = headers(&[("host", "panel.example"), ("sec-fetch-site", "cross-site")]);
        assert_eq!(check_csrf(&cross, &s, token), Err(CsrfRefusal::CrossOrigin));
        let null = headers(&[("host", "panel.example"), ("origin", "null")]);
        assert_eq!(check_csrf(&null, &s, token), Err(CsrfRefusal::CrossOrigin));
    }

    #[test]
    fn a_missing_or_wrong_token_is_refused() {
        let s = session();
        let h = headers(&[
            ("host", "panel.example"),
            ("origin", "http://panel.example"),
        ]);
        assert_eq!(check_csrf(&h, &s, None), Err(CsrfRefusal::BadToken));
        assert_eq!(check_csrf(&h, &s, Some("b")), Err(CsrfRefusal::BadToken));
        assert_eq!(
            check_csrf(&h, &s, Some(&"b".repeat(64))),
            Err(CsrfRefusal::BadToken)
        );
    }

    #[test]
    fn cookies_are_read_from_every_cookie_header() {
        let h = headers(&[("cookie", "a=1; jw_lang=ru"), ("cookie", "jw_session=abc")]);
        assert_eq!(cookie(&h, LANG_COOKIE), Some("ru"));
        assert_eq!(cookie(&h, SESSION_COOKIE), Some("abc"));
        assert_eq!(cookie(&h, "jw"), None);
    }

    #[test]
    fn the_session_cookie_is_httponly_strict_and_secure_when_asked() {
        let c = session_cookie("t", true);
        for part in ["HttpOnly", "SameSite=Strict", "Secure", "Path=/"] {
            assert!(c.contains(part), "{c}");
        }
        assert!(!session_cookie("t", false).contains("Secure"));
        assert!(cleared_session_cookie(false).contains("Max-Age=0"));
    }
}
