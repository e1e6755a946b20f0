//! Admin accounts of the web panel: a username and an argon2id hash in PHC form (the
//! password itself never reaches the store).

use std::fmt;

use async_trait::async_trait;
use chrono::{DateTime, Utc};

use crate::codec::ms;
use crate::sql::{Cols, Dialect, Sql};
use crate::*;

/// One admin account. `Debug` leaves the hash out.
#[derive(Clone, PartialEq, Eq)]
pub struct AdminRow {
    pub id: i64,
    pub username: String,
    /// argon2id, PHC string form (`$argon2id$v=19$…`).
    pub password_hash: String,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

impl fmt::Debug for AdminRow {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AdminRow")
            .field("id", &self.id)
            .field("username", &self.username)
            .field("password_hash", &"<redacted>")
            .field("created_at", &self.created_at)
            .field("updated_at", &self.updated_at)
            .finish()
    }
}

/// Admin accounts.
#[async_trait]
pub trait AdminStore: Send + Sync {
    /// Creates an account; `None` when the username is taken (nothing changes then).
    async fn create_admin(
        &self,
        username: &str,
        password_hash: &str,
        now: DateTime<Utc>,
    ) -> Result<Option<i64>>;

    /// The account of a username (exact match).
    async fn admin_by_username(&self, username: &str) -> Result<Option<AdminRow>>;

    /// Replaces an account's password hash; `false` when there is no such account.
    async fn set_admin_password(
        &self,
        username: &str,
        password_hash: &str,
        now: DateTime<Utc>,
    ) -> Result<bool>;
}

#[async_trait]
impl<DB: Dialect> AdminStore for SqlStore<DB> {
    async fn create_admin(
        &self,
        username: &str,
        password_hash: &str,
        now: DateTime<Utc>,
    ) -> Result<Option<i64>> {
        let row = Sql::<DB>::new(
            "INSERT INTO admins (username, password_hash, created_at, updated_at)
             VALUES ($1, $2, $3, $3) ON CONFLICT (username) DO NOTHING RETURNING id",
        )
        .text(username)
        .text(password_hash)
        .int(ms(now))
        .fetch_optional(&self.write)
        .await?;
        row.map(|row| Cols::<DB>::new(&row).id()).transpose()
    }

    async fn admin_by_username(&self, username: &str) -> Result<Option<AdminRow>> {
        let row = Sql::<DB>::new(
            "SELECT id, username, password_hash, created_at, updated_at
             FROM admins WHERE username = $1",
        )
        .text(username)
        .fetch_optional(&self.read)
        .await?;
        row.map(|row| {
            let c = Cols::<DB>::new(&row);
            Ok(AdminRow {
                id: c.id()?,
                username: c.text("username")?,
                password_hash: c.text("password_hash")?,
                created_at: c.time("created_at")?,
                updated_at: c.time("updated_at")?,
            })
        })
        .transpose()
    }

    async fn set_admin_password(
        &self,
        username: &str,
        password_hash: &str,
        now: DateTime<Utc>,
    ) -> Result<bool> {
        let n = Sql::<DB>::new(
            "UPDATE admins SET password_hash = $2, updated_at = $3 WHERE username = $1",
        )
        .text(username)
        .text(password_hash)
        .int(ms(now))
        .execute(&self.write)
        .await?;
        Ok(n > 0)
    }
}
