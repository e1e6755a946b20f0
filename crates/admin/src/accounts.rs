//! Admin accounts of the web panel: usernames, roles, password rules and argon2id hashes.
//! `jobwire admin create --username NAME [--role admin|moderator] --password-stdin` makes
//! one (the role defaults to `admin`); the panel's login
//! checks a password with [`verify_password`]. `admin set-password` ([`apply`]) and `admin
//! disable` ([`disable`]) end the account's sessions; `admin list` ([`list`]) shows them. Passwords are read from standard input only
//! (never an argument, which other users of the machine can see in the process list) and
//! never printed, logged or stored.

use argon2::Argon2;
use argon2::password_hash::phc::PasswordHash;
use argon2::password_hash::{PasswordHasher, PasswordVerifier};
use chrono::Utc;
use jobwire_store::{AdminRole, Store};

/// The shortest password accepted, in characters.
pub const MIN_PASSWORD_CHARS: usize = 12;
/// The longest password accepted, in characters (hashing is deliberately slow).
pub const MAX_PASSWORD_CHARS: usize = 1024;

#[derive(Debug, thiserror::Error)]
pub enum AccountError {
    #[error("a username is 3-32 characters: latin letters, digits, `_`, `.` or `-` (got {0:?})")]
    BadUsername(String),
    #[error(
        "the password must be {MIN_PASSWORD_CHARS}-{MAX_PASSWORD_CHARS} characters on one line (got {0})"
    )]
    BadPassword(&'static str),
    #[error(
        "admin {0:?} exists; `jobwire admin set-password --username {0} --password-stdin` changes its password"
    )]
    Exists(String),
    #[error(
        "a role is `admin` (everything) or `moderator` (reports, placements, posts, sources); got {0:?}"
    )]
    BadRole(String),
    #[error("there is no admin {0:?}; `jobwire admin create` makes one")]
    Unknown(String),
    #[error("hashing the password: {0}")]
    Hash(String),
    #[error(transparent)]
    Store(#[from] jobwire_store::StoreError),
}

/// A username as stored: trimmed and lower-cased (`Alice` and `alice` are one account).
pub fn username(raw: &str) -> Result<String, AccountError> {
    let name = raw.trim().to_lowercase();
    let ok = (3..=32).contains(&name.chars().count())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'));
    if ok {
        Ok(name)
    } else {
        Err(AccountError::BadUsername(raw.chars().take(40).collect()))
    }
}

/// The password in what was read from standard input: one line, its line ending dropped
/// (spaces inside and at the ends are part of it).
pub fn password_from_input(input: &str) -> Result<&str, AccountError> {
    let pw = input
        .strip_suffix("\r\n")
        .or_else(|| input.strip_suffix('\n'))
        .unwrap_or(input);
    if pw.contains(['\n', '\r']) {
        return Err(AccountError::BadPassword("several lines"));
    }
    let n = pw.chars().count();
    if n < MIN_PASSWORD_CHARS {
        return Err(AccountError::BadPassword("too short"));
    }
    if n > MAX_PASSWORD_CHARS {
        return Err(AccountError::BadPassword("too long"));
    }
    if pw.trim().is_empty() {
        return Err(AccountError::BadPassword("only spaces"));
    }
    Ok(pw)
}

/// An argon2id hash of `password` with a fresh random salt, in PHC string form (OWASP's
/// parameters: 19 MiB, 2 passes, 1 lane).
pub fn hash_password(password: &str) -> Result<String, AccountError> {
    Argon2::default()
        .hash_password(password.as_bytes())
        .map(|h| h.to_string())
        .map_err(|e| AccountError::Hash(e.to_string()))
}

/// Whether `password` matches a stored hash (a malformed hash matches nothing).
pub fn verify_password(password: &str, phc: &str) -> bool {
    PasswordHash::new(phc).is_ok_and(|h| {
        Argon2::default()
            .verify_password(password.as_bytes(), &h)
            .is_ok()
    })
}

/// What `jobwire admin …` does to an account.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    /// A new account with its role (refused when the username is taken).
    Create(AdminRole),
    /// A new password for an existing account.
    SetPassword,
}

/// Creates an account or replaces its password; returns the stored username.
pub async fn apply(
    store: &dyn Store,
    change: Change,
    raw_username: &str,
    password: &str,
) -> Result<String, AccountError> {
    let name = username(raw_username)?;
    let hash = hash_password(password)?;
    let now = Utc::now();
    match change {
        Change::Create(role) if store.create_admin(&name, &hash, role, now).await?.is_none() => {
            Err(AccountError::Exists(name))
        }
        Change::SetPassword if !store.set_admin_password(&name, &hash, now).await? => {
            Err(AccountError::Unknown(name))
        }
        _ => Ok(name),
    }
}

/// Disables an account: it can no longer log in, and its sessions end (panel and API).
/// Returns the stored username.
pub async fn disable(store: &dyn Store, raw_username: &str) -> Result<String, AccountError> {
    let name = username(raw_username)?;
    if store.disable_admin(&name, Utc::now()).await? {
        Ok(name)
    } else {
        Err(AccountError::Unknown(name))
    }
}

/// The role `--role` names (`admin`, `moderator`).
pub fn role(raw: &str) -> Result<AdminRole, AccountError> {
    AdminRole::parse(raw.trim())
        .ok_or_else(|| AccountError::BadRole(raw.chars().take(40).collect()))
}

/// The accounts, one line each: username, role, state, live sessions, created and last
/// changed.
pub async fn list(store: &dyn Store) -> Result<String, AccountError> {
    let now = Utc::now();
    let admins = store.admins(now).await?;
    if admins.is_empty() {
        return Ok("no admin accounts; `jobwire admin create` makes one\n".to_owned());
    }
    let width = admins.iter().map(|a| a.username.len()).max().unwrap_or(0);
    let mut out = String::new();
    for a in admins {
        let state = match a.disabled_at {
            Some(t) => format!("disabled {}", t.format("%Y-%m-%d %H:%M UTC")),
            None => "active".to_owned(),
        };
        out.push_str(&format!(
            "{:width$}  {:9}  {state}  sessions {}  created {}  changed {}\n",
            a.username,
            a.role.as_str(),
            a.sessions,
            a.created_at.format("%Y-%m-%d"),
            a.updated_at.format("%Y-%m-%d %H:%M UTC"),
        ));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn usernames_are_checked_and_folded() {
        assert_eq!(username(" Alice.Ops ").unwrap(), "alice.ops");
        for bad in ["al", "a b c", "алиса", "x".repeat(33).as_str(), "<script>"] {
            assert!(
                matches!(username(bad), Err(AccountError::BadUsername(_))),
                "{bad}"
            );
        }
    }

    #[test]
    fn the_password_is_one_line_of_at_least_twelve_characters() {
        assert_eq!(
            password_from_input("  correct horse  \n").unwrap(),
            "  correct horse  "
        );
        assert_eq!(
            password_from_input("correct horse\r\n").unwrap(),
            "correct horse"
        );
        assert_eq!(
            password_from_input("пароль-пароль").unwrap(),
            "пароль-пароль"
        );
        for (bad, why) in [
            ("short\n", "too short"),
            ("correct horse\nbattery\n", "several lines"),
            ("             \n", "only spaces"),
        ] {
            let err = password_from_input(bad).unwrap_err();
            assert!(err.to_string().contains(why), "{err}");
            assert!(!err.to_string().contains("horse"), "never echoes it: {err}");
        }
        assert!(password_from_input(&"x".repeat(MAX_PASSWORD_CHARS + 1)).is_err());
    }

    #[test]
    fn a_hash_verifies_its_password_only() {
        let hash = hash_password("correct horse battery").unwrap();
        assert!(hash.starts_with("$argon2id$"), "{hash}");
        assert!(!hash.contains("correct horse"));
        assert!(verify_password("correct horse battery", &hash));
        assert!(!verify_password("correct horse battery ", &hash));
        assert!(!verify_password("correct horse battery", "not a hash"));
        assert_ne!(
            hash,
            hash_password("correct horse battery").unwrap(),
            "salted"
        );
    }
}
