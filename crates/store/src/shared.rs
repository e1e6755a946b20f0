//! [`SqlStore`]: the [`Store`] of both backends. Its queries live once, in one file per
//! concern (`channels.rs`, `posts.rs`, `subscribers.rs`, …), each holding that concern's
//! trait and its implementation for every [`Dialect`]; a backend's own file holds only its
//! connection set-up and what its dialect does differently.

use std::fmt;

use async_trait::async_trait;
use sqlx::Pool;

use crate::sql::{Dialect, Sql};
use crate::*;

/// The store over one SQL database: [`SqliteStore`] or [`PostgresStore`].
///
/// Writes go through `write`, reads through `read`: for SQLite two pools (one writer
/// connection, several readers), for PostgreSQL the same pool twice.
pub struct SqlStore<DB: Dialect> {
    pub(crate) read: Pool<DB>,
    pub(crate) write: Pool<DB>,
    /// The connection target without secrets, for logs and `Debug`.
    pub(crate) target: String,
}

impl<DB: Dialect> Clone for SqlStore<DB> {
    fn clone(&self) -> Self {
        Self {
            read: self.read.clone(),
            write: self.write.clone(),
            target: self.target.clone(),
        }
    }
}

impl<DB: Dialect> fmt::Debug for SqlStore<DB> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SqlStore")
            .field("target", &self.target)
            .field("connections", &self.write.size())
            .finish()
    }
}

impl<DB: Dialect> SqlStore<DB> {
    /// The row a statement with one key (`$1`) finds, decoded; `None` when there is none.
    pub(crate) async fn one<T>(
        &self,
        sql: &'static str,
        key: impl crate::sql::IntArg,
        decode: impl FnOnce(&DB::Row) -> Result<T>,
    ) -> Result<Option<T>> {
        let row = Sql::<DB>::new(sql)
            .int(key)
            .fetch_optional(&self.read)
            .await?;
        row.as_ref().map(decode).transpose()
    }
}

#[async_trait]
impl<DB: Dialect> Store for SqlStore<DB> {
    async fn ping(&self) -> Result<()> {
        Sql::<DB>::new("SELECT 1").execute(&self.read).await?;
        Ok(())
    }
}
