//! Admin accounts of the web panel: a username, an argon2id hash in PHC form (the
//! password itself never reaches the store), a role ([`AdminRole`]) and whether the account
//! is disabled. A new password or a disabled account ends the account's sessions in the
//! same transaction.

use std::fmt;

use async_trait::async_trait;
use chrono::{DateTime, Utc};

use crate::codec::ms;
use crate::sql::{Cols, Dialect, Sql};
use crate::*;

/// What an admin account may do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum AdminRole {
    /// Reports, placements, posts and sources; no payments, refunds, broadcasts, prompt,
    /// categories or accounts.
    Moderator,
    /// Everything.
    Admin,
}

impl AdminRole {
    pub const ALL: [AdminRole; 2] = [AdminRole::Admin, AdminRole::Moderator];

    /// As stored and typed: `admin`, `moderator`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Admin => "admin",
            Self::Moderator => "moderator",
        }
    }

    pub fn parse(raw: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|r| r.as_str() == raw)
    }

    /// Whether this role may do what `needed` allows (an admin may do a moderator's work).
    pub fn allows(self, needed: AdminRole) -> bool {
        self >= needed
    }
}

/// One admin account. `Debug` leaves the hash out.
#[derive(Clone, PartialEq, Eq)]
pub struct AdminRow {
    pub id: AdminId,
    pub username: String,
    /// argon2id, PHC string form (`$argon2id$v=19$…`).
    pub password_hash: String,
    pub role: AdminRole,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    /// When the account was disabled (`jobwire admin disable`): it cannot log in then.
    pub disabled_at: Option<DateTime<Utc>>,
    /// Its live sessions (not expired at the time of reading; 0 when read without a time).
    pub sessions: u32,
}

impl fmt::Debug for AdminRow {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AdminRow")
            .field("id", &self.id)
            .field("username", &self.username)
            .field("password_hash", &"<redacted>")
            .field("role", &self.role)
            .field("created_at", &self.created_at)
            .field("updated_at", &self.updated_at)
            .field("disabled_at", &self.disabled_at)
            .field("sessions", &self.sessions)
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
        role: AdminRole,
        now: DateTime<Utc>,
    ) -> Result<Option<AdminId>>;

    /// The account of a username (exact match), disabled or not.
    async fn admin_by_username(&self, username: &str) -> Result<Option<AdminRow>>;

    /// Every account, by username, with its sessions live at `now`.
    async fn admins(&self, now: DateTime<Utc>) -> Result<Vec<AdminRow>>;

    /// Replaces an account's password hash and ends its sessions; `false` when there is no
    /// such account.
    async fn set_admin_password(
        &self,
        username: &str,
        password_hash: &str,
        now: DateTime<Utc>,
    ) -> Result<bool>;

    /// Disables an account (it can no longer log in) and ends its sessions; `false` when
    /// there is no such account. Disabling a disabled account keeps its first time.
    async fn disable_admin(&self, username: &str, now: DateTime<Utc>) -> Result<bool>;
}

/// A stored role; an unknown word (a newer version's role) is read as the narrowest.
pub(crate) fn role_of(raw: &str) -> AdminRole {
    AdminRole::parse(raw).unwrap_or(AdminRole::Moderator)
}

fn admin_row<DB: Dialect>(row: &DB::Row, sessions: bool) -> Result<AdminRow> {
    let c = Cols::<DB>::new(row);
    Ok(AdminRow {
        id: AdminId(c.id()?),
        username: c.text("username")?,
        password_hash: c.text("password_hash")?,
        role: role_of(&c.text("role")?),
        created_at: c.time("created_at")?,
        updated_at: c.time("updated_at")?,
        disabled_at: c.opt_time("disabled_at")?,
        sessions: if sessions { c.count("sessions")? } else { 0 },
    })
}

#[async_trait]
impl<DB: Dialect> AdminStore for SqlStore<DB> {
    async fn create_admin(
        &self,
        username: &str,
        password_hash: &str,
        role: AdminRole,
        now: DateTime<Utc>,
    ) -> Result<Option<AdminId>> {
        let row = Sql::<DB>::new(
            "INSERT INTO admins (username, password_hash, role, created_at, updated_at)
             VALUES ($1, $2, $4, $3, $3) ON CONFLICT (username) DO NOTHING RETURNING id",
        )
        .text(username)
        .text(password_hash)
        .int(ms(now))
        .text(role.as_str())
        .fetch_optional(&self.write)
        .await?;
        row.map(|row| Cols::<DB>::new(&row).id().map(AdminId))
            .transpose()
    }

    async fn admin_by_username(&self, username: &str) -> Result<Option<AdminRow>> {
        let row = Sql::<DB>::new(
            "SELECT id, username, password_hash, role, created_at, updated_at, disabled_at
             FROM admins WHERE username = $1",
        )
        .text(username)
        .fetch_optional(&self.read)
        .await?;
        row.map(|row| admin_row::<DB>(&row, false)).transpose()
    }

    async fn admins(&self, now: DateTime<Utc>) -> Result<Vec<AdminRow>> {
        let rows = Sql::<DB>::new(
            "SELECT a.id, a.username, a.password_hash, a.role, a.created_at, a.updated_at,
                    a.disabled_at,
                    (SELECT COUNT(*) FROM admin_sessions s
                     WHERE s.admin_id = a.id AND s.expires_at > $1) AS sessions
             FROM admins a ORDER BY a.username",
        )
        .int(ms(now))
        .fetch_all(&self.read)
        .await?;
        rows.iter().map(|row| admin_row::<DB>(row, true)).collect()
    }

    async fn set_admin_password(
        &self,
        username: &str,
        password_hash: &str,
        now: DateTime<Utc>,
    ) -> Result<bool> {
        let mut tx = self.write.begin().await?;
        let n = Sql::<DB>::new(
            "UPDATE admins SET password_hash = $2, updated_at = $3 WHERE username = $1",
        )
        .text(username)
        .text(password_hash)
        .int(ms(now))
        .execute(&mut tx)
        .await?;
        end_sessions::<DB>(&mut tx, username).await?;
        tx.commit().await?;
        Ok(n > 0)
    }

    async fn disable_admin(&self, username: &str, now: DateTime<Utc>) -> Result<bool> {
        let mut tx = self.write.begin().await?;
        let n = Sql::<DB>::new(
            "UPDATE admins SET disabled_at = COALESCE(disabled_at, $2), updated_at = $2
             WHERE username = $1",
        )
        .text(username)
        .int(ms(now))
        .execute(&mut tx)
        .await?;
        end_sessions::<DB>(&mut tx, username).await?;
        tx.commit().await?;
        Ok(n > 0)
    }
}

/// Ends every session of the account `username`.
async fn end_sessions<DB: Dialect>(
    tx: &mut sqlx::Transaction<'_, DB>,
    username: &str,
) -> Result<u64> {
    Sql::<DB>::new(
        "DELETE FROM admin_sessions
         WHERE admin_id IN (SELECT id FROM admins WHERE username = $1)",
    )
    .text(username)
    .execute(&mut *tx)
    .await
}
