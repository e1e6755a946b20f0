//! Values a source keeps between runs (feed cursors, reader positions).

use async_trait::async_trait;
use chrono::{DateTime, Utc};

use crate::codec::ms;
use crate::sql::{Cols, Dialect, Sql};
use crate::*;

/// Values a source keeps between runs (feed cursors, reader positions).
#[async_trait]
pub trait SourceStateStore: Send + Sync {
    /// A value a source keeps between runs (`namespace` names the source kind).
    async fn state_get(&self, namespace: &str, key: &str) -> Result<Option<String>>;

    async fn state_put(
        &self,
        namespace: &str,
        key: &str,
        value: &str,
        now: DateTime<Utc>,
    ) -> Result<()>;

    /// Every `(key, value)` of a namespace, by key.
    async fn state_list(&self, namespace: &str) -> Result<Vec<(String, String)>>;
}

#[async_trait]
impl<DB: Dialect> SourceStateStore for SqlStore<DB> {
    async fn state_get(&self, namespace: &str, key: &str) -> Result<Option<String>> {
        let row =
            Sql::<DB>::new("SELECT value FROM source_state WHERE namespace = $1 AND key = $2")
                .text(namespace)
                .text(key)
                .fetch_optional(&self.write)
                .await?;
        row.map(|row| Cols::<DB>::new(&row).text("value"))
            .transpose()
    }

    async fn state_put(
        &self,
        namespace: &str,
        key: &str,
        value: &str,
        now: DateTime<Utc>,
    ) -> Result<()> {
        Sql::<DB>::new(
            "INSERT INTO source_state (namespace, key, value, updated_at) VALUES ($1, $2, $3, $4)
             ON CONFLICT (namespace, key) DO UPDATE SET
                 value = excluded.value, updated_at = excluded.updated_at",
        )
        .text(namespace)
        .text(key)
        .text(value)
        .int(ms(now))
        .execute(&self.write)
        .await?;
        Ok(())
    }

    async fn state_list(&self, namespace: &str) -> Result<Vec<(String, String)>> {
        Sql::<DB>::new("SELECT key, value FROM source_state WHERE namespace = $1 ORDER BY key")
            .text(namespace)
            .fetch_each(&self.read, |c| Ok((c.text("key")?, c.text("value")?)))
            .await
    }
}
