//! [`LoginError`]: why a login or session check failed, and how Telegram's errors (and
//! grammers' panics) become one.

use std::future::Future;
use std::time::Duration;

use grammers_mtsender::InvocationError;

use crate::session::SessionFileError;

/// Why a login or session check failed; each message says what to do.
#[derive(Debug, thiserror::Error)]
pub enum LoginError {
    /// Reading from the terminal failed.
    #[error("could not read the answer: {0}")]
    Prompt(#[from] std::io::Error),
    /// The session file could not be read or written.
    #[error(transparent)]
    Session(#[from] SessionFileError),
    /// No login was done yet with this session file, or it was revoked.
    #[error("not logged in (session {0}); run `jobwire login`")]
    NotLoggedIn(String),
    /// Telegram does not accept the phone number.
    #[error(
        "Telegram does not accept this phone number; use the international format, e.g. +491701234567"
    )]
    InvalidPhone,
    /// The phone number is banned.
    #[error("this phone number is banned by Telegram")]
    PhoneBanned,
    /// The code was wrong (after the allowed attempts).
    #[error("the login code is wrong")]
    InvalidCode,
    /// The code expired before it was entered.
    #[error(
        "the login code has expired; run `jobwire login` again and enter the new code within a few minutes"
    )]
    ExpiredCode,
    /// The 2FA password was wrong (after the allowed attempts).
    #[error("the two-step verification password is wrong")]
    InvalidPassword,
    /// The account has 2FA but no password was given.
    #[error("this account has two-step verification: a password is needed")]
    PasswordRequired,
    /// No Telegram account exists for this number.
    #[error("no Telegram account uses this number; sign up with an official Telegram app first")]
    SignUpRequired,
    /// Too many attempts: Telegram asks to wait.
    #[error("Telegram asks to wait {} before trying again (too many attempts)", human_wait(*.0))]
    FloodWait(Duration),
    /// Network or any other Telegram error.
    #[error("Telegram: {0}")]
    Telegram(String),
    /// grammers failed on an answer it did not expect (caught, not a crash).
    #[error("Telegram sent an answer the client does not understand ({0}); try again later")]
    Unexpected(String),
}

fn human_wait(d: Duration) -> String {
    let s = d.as_secs();
    if s >= 3600 {
        format!("{} h {} min", s / 3600, s % 3600 / 60)
    } else if s >= 60 {
        format!("{} min {} s", s / 60, s % 60)
    } else {
        format!("{s} s")
    }
}

/// Maps grammers' errors during a login to what the person at the terminal is told.
pub(super) fn login_error(e: &InvocationError) -> LoginError {
    if let InvocationError::Rpc(rpc) = e {
        match rpc.name.as_str() {
            "PHONE_NUMBER_INVALID" => return LoginError::InvalidPhone,
            "PHONE_NUMBER_BANNED" => return LoginError::PhoneBanned,
            "PHONE_CODE_INVALID" | "PHONE_CODE_EMPTY" => return LoginError::InvalidCode,
            "PHONE_CODE_EXPIRED" => return LoginError::ExpiredCode,
            "PASSWORD_HASH_INVALID" => return LoginError::InvalidPassword,
            "FLOOD_WAIT" | "FLOOD_PREMIUM_WAIT" => {
                return LoginError::FloodWait(Duration::from_secs(u64::from(
                    rpc.value.unwrap_or(60),
                )));
            }
            "PHONE_NUMBER_FLOOD" | "PHONE_PASSWORD_FLOOD" => {
                return LoginError::FloodWait(Duration::from_secs(24 * 3600));
            }
            _ => {}
        }
    }
    LoginError::Telegram(e.to_string())
}

/// Runs a network step on its own task so a panic inside grammers (it panics on some
/// unusual answers) becomes [`LoginError::Unexpected`] instead of a crash.
pub(super) async fn guarded<T, F>(step: &str, fut: F) -> Result<T, LoginError>
where
    T: Send + 'static,
    F: Future<Output = Result<T, LoginError>> + Send + 'static,
{
    match tokio::spawn(fut).await {
        Ok(r) => r,
        Err(e) if e.is_panic() => Err(LoginError::Unexpected(format!("{step} failed"))),
        Err(e) => Err(LoginError::Unexpected(format!("{step}: {e}"))),
    }
}
