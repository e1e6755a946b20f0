//! `jobwire login`: signs a Telegram user account in once from the terminal (phone, code,
//! 2FA password) and keeps its session file.

use std::io::{BufRead, Write};

use anyhow::Context;
use jobwire_mtproto::{AccountConfig, LoginPrompts, SessionStatus};

use super::MtprotoSection;
use crate::config::Environment;

/// Asks on the terminal (stderr for questions, stdin for answers).
///
/// The 2FA password is read as a plain line and is visible while typed: no crate for hidden
/// terminal input is among jobwire's dependencies, and the person is told so.
#[derive(Debug, Default)]
struct TerminalPrompts;

fn ask(question: &str) -> std::io::Result<String> {
    let mut err = std::io::stderr().lock();
    write!(err, "{question}")?;
    err.flush()?;
    let mut line = String::new();
    if std::io::stdin().lock().read_line(&mut line)? == 0 {
        return Err(std::io::Error::new(
            std::io::ErrorKind::UnexpectedEof,
            "no answer (standard input is closed)",
        ));
    }
    Ok(line.trim_end_matches(['\r', '\n']).to_owned())
}

impl LoginPrompts for TerminalPrompts {
    fn phone(&mut self) -> std::io::Result<String> {
        ask("Phone number of the account, international format (e.g. +491701234567): ")
    }

    fn code(&mut self) -> std::io::Result<String> {
        ask("Login code (sent to your Telegram app, or by SMS): ")
    }

    fn password(&mut self, hint: Option<&str>) -> std::io::Result<String> {
        eprintln!("Note: the password is shown while you type it (make sure nobody is watching).");
        match hint {
            Some(h) if !h.is_empty() => {
                ask(&format!("Two-step verification password (hint: {h}): "))
            }
            _ => ask("Two-step verification password: "),
        }
    }
}

/// Who a session is logged in as: username (when it has one), name and user id.
pub(super) fn describe(status: &SessionStatus) -> String {
    match &status.username {
        Some(u) => format!("{u} ({}, id {})", status.name, status.user_id),
        None => format!("{} (id {})", status.name, status.user_id),
    }
}

/// Signs `config`'s account in from the terminal (phone, code, 2FA password) and keeps the
/// session file; an account already logged in is left as is. Prints who it is logged in as.
pub async fn login(config: &AccountConfig) -> anyhow::Result<()> {
    println!(
        "account {}: session {}",
        config.id,
        config.session_path.display()
    );
    let mut prompts = TerminalPrompts;
    let status = jobwire_mtproto::login(config, &mut prompts)
        .await
        .with_context(|| format!("account {}", config.id))?;
    if status.already_logged_in {
        println!(
            "account {}: already logged in as {}",
            config.id,
            describe(&status)
        );
    } else {
        println!(
            "account {}: logged in as {}; session saved to {}",
            config.id,
            describe(&status),
            config.session_path.display()
        );
    }
    Ok(())
}

/// `jobwire login [--account ID]`: logs in the named account, or every configured account
/// in turn.
pub async fn login_command(
    section: Option<&MtprotoSection>,
    account: Option<&str>,
    env: &dyn Environment,
) -> anyhow::Result<()> {
    let section = section.context(
        "[mtproto]: no Telegram account is configured (add [[mtproto.accounts]] with id and api_id)",
    )?;
    let configs = section.resolve(env)?;
    let chosen: Vec<&AccountConfig> = match account {
        Some(id) => {
            let c = configs.iter().find(|c| c.id == id).with_context(|| {
                let ids: Vec<&str> = configs.iter().map(|c| c.id.as_str()).collect();
                format!(
                    "--account: no account {id:?} in [[mtproto.accounts]] (configured: {})",
                    ids.join(", ")
                )
            })?;
            vec![c]
        }
        None => configs.iter().collect(),
    };
    for c in chosen {
        login(c).await?;
    }
    Ok(())
}
