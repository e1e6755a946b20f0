//! [`login`]: the interactive sign-in that `jobwire login` runs (phone, code, 2FA password)
//! and that leaves a logged-in session file behind.

use std::sync::Arc;

use grammers_client::SignInError;
use grammers_client::client::PasswordToken;
use grammers_mtsender::InvocationError;
use grammers_session::Session;
use grammers_session::types::{PeerAuth, PeerInfo};
use grammers_tl_types as tl;

use super::connection::{AccountConfig, Connection, connect};
use super::login_error::{LoginError, guarded, login_error};
use super::session_check::{SessionStatus, is_authorized, me};
use crate::session::FileSession;

/// Asks the person at the terminal. `jobwire login` implements it over stdin (hiding the
/// password).
pub trait LoginPrompts: Send {
    /// The phone number in international format (`+49...`).
    fn phone(&mut self) -> std::io::Result<String>;
    /// The login code Telegram sent (to the app, or by SMS).
    fn code(&mut self) -> std::io::Result<String>;
    /// The 2FA password; `hint` is the hint the user set, if any.
    fn password(&mut self, hint: Option<&str>) -> std::io::Result<String>;
    /// Tells the person something before asking again ("That code is wrong; try again.").
    fn notice(&mut self, message: &str) {
        eprintln!("{message}");
    }
}

const ATTEMPTS: usize = 3;

/// Signs the account in once: asks for the phone, the code and (when 2FA is on) the
/// password, and stores the session at `config.session_path` (mode 0600). An already
/// logged-in session is left as is.
pub async fn login(
    config: &AccountConfig,
    prompts: &mut dyn LoginPrompts,
) -> Result<SessionStatus, LoginError> {
    let session = Arc::new(FileSession::open(&config.session_path)?);
    let conn = connect(config, Arc::clone(&session));
    let result = login_inner(config, &conn, prompts).await;
    conn.close();
    session.save()?;
    result
}

async fn login_inner(
    config: &AccountConfig,
    conn: &Connection,
    prompts: &mut dyn LoginPrompts,
) -> Result<SessionStatus, LoginError> {
    if is_authorized(&conn.client).await? {
        return me(&conn.client, true).await;
    }
    let phone = prompts.phone()?.trim().replace([' ', '-', '(', ')'], "");
    let code_hash = send_code(config, conn, &phone).await?;
    let mut attempts = 0;
    let auth = loop {
        attempts += 1;
        let code = prompts.code()?.trim().to_string();
        let client = conn.client.clone();
        let request = tl::functions::auth::SignIn {
            phone_number: phone.clone(),
            phone_code_hash: code_hash.clone(),
            phone_code: Some(code),
            email_verification: None,
        };
        let answer = guarded("sign in", async move {
            match client.invoke(&request).await {
                Ok(a) => Ok(Some(a)),
                Err(e) if e.is("SESSION_PASSWORD_NEEDED") => Ok(None),
                Err(e) => Err(login_error(&e)),
            }
        })
        .await;
        match answer {
            Ok(Some(tl::enums::auth::Authorization::Authorization(a))) => break Some(a),
            Ok(Some(tl::enums::auth::Authorization::SignUpRequired(_))) => {
                return Err(LoginError::SignUpRequired);
            }
            Ok(None) => break None,
            Err(LoginError::InvalidCode) if attempts < ATTEMPTS => {
                prompts.notice("That code is wrong; try again.");
            }
            Err(e) => return Err(e),
        }
    };
    match auth {
        Some(a) => complete_login(conn, a.user).await?,
        None => check_password(conn, prompts).await?,
    }
    me(&conn.client, false).await
}

async fn send_code(
    config: &AccountConfig,
    conn: &Connection,
    phone: &str,
) -> Result<String, LoginError> {
    let request = tl::functions::auth::SendCode {
        phone_number: phone.to_string(),
        api_id: config.api_id,
        api_hash: config.api_hash.clone(),
        settings: tl::types::CodeSettings {
            allow_flashcall: false,
            current_number: false,
            allow_app_hash: false,
            allow_missed_call: false,
            allow_firebase: false,
            unknown_number: false,
            logout_tokens: None,
            token: None,
            app_sandbox: None,
        }
        .into(),
    };
    let client = conn.client.clone();
    let session = Arc::clone(&conn.session);
    let thin = conn.thin.clone();
    let sent = guarded("send code", async move {
        match client.invoke(&request).await {
            Ok(s) => Ok(s),
            Err(InvocationError::Rpc(e)) if e.code == 303 => {
                // The number lives in another datacenter: move there and ask again.
                let new_dc = e
                    .value
                    .and_then(|v| i32::try_from(v).ok())
                    .ok_or_else(|| LoginError::Telegram("migration without a DC".into()))?;
                let old_dc = session.home_dc_id()?;
                thin.disconnect_from_dc(old_dc);
                session.set_home_dc_id(new_dc).await?;
                client.invoke(&request).await.map_err(|e| login_error(&e))
            }
            Err(e) => Err(login_error(&e)),
        }
    })
    .await?;
    match sent {
        tl::enums::auth::SentCode::Code(c) => Ok(c.phone_code_hash),
        tl::enums::auth::SentCode::Success(_) => Err(LoginError::Unexpected(
            "Telegram reported a login before a code was entered".into(),
        )),
        tl::enums::auth::SentCode::PaymentRequired(_) => Err(LoginError::Telegram(
            "Telegram requires a payment to send the login code to this number".into(),
        )),
    }
}

/// What grammers' private `complete_login` does: remember the logged-in user and the
/// update state in the session.
async fn complete_login(conn: &Connection, user: tl::enums::User) -> Result<(), LoginError> {
    if let tl::enums::User::User(u) = &user {
        conn.session
            .cache_peer(PeerInfo::User {
                id: u.id,
                auth: u.access_hash.map(PeerAuth::from_hash),
                bot: Some(u.bot),
                is_self: Some(true),
            })
            .await?;
    }
    let client = conn.client.clone();
    let state = guarded("get state", async move {
        Ok(client
            .invoke(&tl::functions::updates::GetState {})
            .await
            .ok())
    })
    .await?;
    if let Some(tl::enums::updates::State::State(s)) = state {
        conn.session
            .set_update_state(grammers_session::types::UpdateState::All(
                grammers_session::types::UpdatesState {
                    pts: s.pts,
                    qts: s.qts,
                    date: s.date,
                    seq: s.seq,
                    channels: Vec::new(),
                },
            ))
            .await?;
    }
    conn.session.save()?;
    Ok(())
}

async fn check_password(
    conn: &Connection,
    prompts: &mut dyn LoginPrompts,
) -> Result<(), LoginError> {
    for attempt in 1..=ATTEMPTS {
        let client = conn.client.clone();
        let token: PasswordToken = guarded("get password", async move {
            let tl::enums::account::Password::Password(p) = client
                .invoke(&tl::functions::account::GetPassword {})
                .await
                .map_err(|e| login_error(&e))?;
            Ok(PasswordToken::new(p))
        })
        .await?;
        let password = prompts.password(token.hint())?;
        if password.is_empty() {
            return Err(LoginError::PasswordRequired);
        }
        let client = conn.client.clone();
        let result = guarded("check password", async move {
            match client
                .check_password(token, password.trim_end_matches(['\r', '\n']))
                .await
            {
                Ok(_) => Ok(()),
                Err(SignInError::InvalidPassword(_)) => Err(LoginError::InvalidPassword),
                Err(SignInError::Other(e)) => Err(login_error(&e)),
                Err(e) => Err(LoginError::Telegram(e.to_string())),
            }
        })
        .await;
        match result {
            Ok(()) => {
                conn.session.save()?;
                return Ok(());
            }
            Err(LoginError::InvalidPassword) if attempt < ATTEMPTS => {
                prompts.notice("That password is wrong; try again.");
            }
            Err(e) => return Err(e),
        }
    }
    Err(LoginError::InvalidPassword)
}
