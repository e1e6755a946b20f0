//! Channels: the sources posts come from, with their keyword rules.

use async_trait::async_trait;
use chrono::{DateTime, Utc};

use crate::codec::{self, ms};
use crate::sql::{Dialect, Sql};
use crate::*;

/// Channels: the sources posts come from, with their keyword rules.
#[async_trait]
pub trait ChannelStore: Send + Sync {
    /// Creates the channel or updates its title, rules and enabled flag.
    async fn upsert_channel(&self, spec: &ChannelSpec, now: DateTime<Utc>) -> Result<ChannelRow>;

    /// The channel with this handle, creating it (enabled, without rules) when unknown.
    async fn ensure_channel(&self, handle: &str, now: DateTime<Utc>) -> Result<ChannelRow>;

    async fn channels(&self) -> Result<Vec<ChannelRow>>;
}

#[async_trait]
impl<DB: Dialect> ChannelStore for SqlStore<DB> {
    async fn upsert_channel(&self, spec: &ChannelSpec, now: DateTime<Utc>) -> Result<ChannelRow> {
        let row = Sql::<DB>::new(
            "INSERT INTO channels (handle, title, enabled, include_terms, exclude_terms, created_at)
             VALUES ($1, $2, $3, $4, $5, $6)
             ON CONFLICT (handle) DO UPDATE SET
                title = COALESCE(excluded.title, channels.title), enabled = excluded.enabled,
                include_terms = excluded.include_terms, exclude_terms = excluded.exclude_terms
             RETURNING *",
        )
        .text(spec.handle.as_str())
        .text(spec.title.as_deref())
        .flag(spec.enabled)
        .json(Some(&spec.include))
        .json(Some(&spec.exclude))
        .int(ms(now))
        .fetch_one(&self.write)
        .await?;
        codec::channel_row::<DB>(&row)
    }

    async fn ensure_channel(&self, handle: &str, now: DateTime<Utc>) -> Result<ChannelRow> {
        const BY_HANDLE: &str = "SELECT * FROM channels WHERE handle = $1";
        if let Some(row) = Sql::<DB>::new(BY_HANDLE)
            .text(handle)
            .fetch_optional(&self.read)
            .await?
        {
            return codec::channel_row::<DB>(&row);
        }
        Sql::<DB>::new(
            "INSERT INTO channels (handle, created_at) VALUES ($1, $2)
             ON CONFLICT (handle) DO NOTHING",
        )
        .text(handle)
        .int(ms(now))
        .execute(&self.write)
        .await?;
        let row = Sql::<DB>::new(BY_HANDLE)
            .text(handle)
            .fetch_one(&self.write)
            .await?;
        codec::channel_row::<DB>(&row)
    }

    async fn channels(&self) -> Result<Vec<ChannelRow>> {
        let rows = Sql::<DB>::new("SELECT * FROM channels ORDER BY id")
            .fetch_all(&self.read)
            .await?;
        rows.iter().map(codec::channel_row::<DB>).collect()
    }
}
