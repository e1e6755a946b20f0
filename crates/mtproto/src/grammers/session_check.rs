//! [`check_session`] for `jobwire doctor`: who a session is logged in as.

use std::sync::Arc;

use grammers_client::Client;

use super::connection::{AccountConfig, connect};
use super::login_error::{LoginError, guarded, login_error};
use crate::session::FileSession;

/// Who a session is logged in as.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionStatus {
    /// Telegram user id.
    pub user_id: i64,
    /// `@username`, if set.
    pub username: Option<String>,
    /// First and last name.
    pub name: String,
    /// Whether the session file was already logged in (no code was asked).
    pub already_logged_in: bool,
}

/// The logged-in user, as a [`SessionStatus`].
pub(super) async fn me(client: &Client, already: bool) -> Result<SessionStatus, LoginError> {
    let client = client.clone();
    guarded("get_me", async move {
        let user = client.get_me().await.map_err(|e| login_error(&e))?;
        Ok(SessionStatus {
            user_id: user.id().bare_id().unwrap_or_default(),
            username: user.username().map(|u| format!("@{u}")),
            name: user.full_name(),
            already_logged_in: already,
        })
    })
    .await
}

/// Whether the client's session is logged in.
pub(super) async fn is_authorized(client: &Client) -> Result<bool, LoginError> {
    let client = client.clone();
    guarded("is_authorized", async move {
        client.is_authorized().await.map_err(|e| login_error(&e))
    })
    .await
}

/// For `jobwire doctor`: checks that the session file exists, is private and still logged
/// in, and says as whom. Connects to Telegram.
pub async fn check_session(config: &AccountConfig) -> Result<SessionStatus, LoginError> {
    let path = config.session_path.display().to_string();
    if !config.session_path.exists() {
        return Err(LoginError::NotLoggedIn(format!("{path} does not exist")));
    }
    let session = Arc::new(FileSession::open(&config.session_path)?);
    if !session.has_auth_key() || session.self_user_id().is_none() {
        return Err(LoginError::NotLoggedIn(path));
    }
    let conn = connect(config, Arc::clone(&session));
    let result = match is_authorized(&conn.client).await {
        Ok(true) => me(&conn.client, true).await,
        Ok(false) => Err(LoginError::NotLoggedIn(format!(
            "{path} was revoked or logged out"
        ))),
        Err(e) => Err(e),
    };
    conn.close();
    result
}
