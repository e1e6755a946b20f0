//! Admin accounts from the panel: added with a generated password shown once, disabled,
//! their password reset (a new one shown once). Disabling and a new password end the
//! account's sessions (in the store's transaction). The password is never audited, logged
//! or stored; only its argon2id hash is.

use jobwire_store::AdminRole;
use rand::Rng;

use super::{Actor, OpError};
use crate::accounts::{AccountError, Change};
use crate::state::AdminState;

/// Characters of a generated password (no look-alikes: 0/O, 1/l/I).
const ALPHABET: &[u8] = b"abcdefghijkmnpqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789";
/// Length of a generated password (about 117 bits).
const GENERATED_LEN: usize = 20;

/// A fresh random password, shown once to the admin who made it.
pub fn generate_password() -> String {
    let mut rng = rand::rng();
    (0..GENERATED_LEN)
        .map(|_| ALPHABET[rng.random_range(0..ALPHABET.len())] as char)
        .collect()
}

impl From<AccountError> for OpError {
    fn from(e: AccountError) -> Self {
        match e {
            AccountError::Store(e) => OpError::Store(e),
            AccountError::Unknown(_) => OpError::NotFound(e.to_string()),
            AccountError::Exists(_) => OpError::Conflict(e.to_string()),
            other => OpError::BadInput(other.to_string()),
        }
    }
}

impl AdminState {
    /// Adds an account with `role` and a generated password; returns the stored username
    /// and the password (to be shown once).
    pub async fn create_account(
        &self,
        actor: &Actor,
        username: &str,
        role: AdminRole,
    ) -> Result<(String, String), OpError> {
        let password = generate_password();
        let name = crate::accounts::apply(
            self.store.as_ref(),
            Change::Create(role),
            username,
            &password,
        )
        .await?;
        self.audit(
            actor,
            "admin.create",
            &format!("admin {name}"),
            role.as_str(),
        )
        .await;
        Ok((name, password))
    }

    /// Gives an account a new generated password (its sessions end); returns it.
    pub async fn reset_password(&self, actor: &Actor, username: &str) -> Result<String, OpError> {
        let password = generate_password();
        let name = crate::accounts::apply(
            self.store.as_ref(),
            Change::SetPassword,
            username,
            &password,
        )
        .await?;
        self.audit(actor, "admin.reset_password", &format!("admin {name}"), "")
            .await;
        Ok(password)
    }

    /// Disables an account (it can no longer log in; its sessions end). An admin cannot
    /// disable its own account from the panel.
    pub async fn disable_account(&self, actor: &Actor, username: &str) -> Result<(), OpError> {
        let name = crate::accounts::username(username)?;
        if name == actor.name {
            return Err(OpError::Conflict(
                "you cannot disable your own account".to_owned(),
            ));
        }
        crate::accounts::disable(self.store.as_ref(), &name).await?;
        self.audit(actor, "admin.disable", &format!("admin {name}"), "")
            .await;
        Ok(())
    }
}
