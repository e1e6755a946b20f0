//! Channels: the sources posts come from, with their keyword rules.
//!
//! The database is the truth about sources: the admin panel adds, edits and removes them
//! here, the configuration file only seeds them ([`ChannelStore::seed_channel`]), and every
//! change bumps `meta.sources_version` in its own transaction, so each running parser sees
//! it with one single-row read ([`ChannelStore::sources_version`]).

use async_trait::async_trait;
use chrono::{DateTime, Utc};

use crate::codec::{self, clamp_u64, ms};
use crate::sql::{Cols, Dialect, Sql};
use crate::*;

const BUMP_SOURCES_VERSION: &str =
    "UPDATE meta SET value = value + 1 WHERE key = 'sources_version'";

/// The longest last error kept for a source, in characters.
const MAX_ERROR_CHARS: usize = 500;

/// Channels: the sources posts come from, with their keyword rules.
#[async_trait]
pub trait ChannelStore: Send + Sync {
    /// The channel with this handle, creating it when unknown as an external one (posts
    /// name it, nothing reads it: imports, replays), enabled and without rules.
    async fn ensure_channel(&self, handle: &str, now: DateTime<Utc>) -> Result<ChannelRow>;

    /// Every channel: sources, removed ones and external ones, by id.
    async fn channels(&self) -> Result<Vec<ChannelRow>>;

    /// Seeds a source from the configuration file. A handle the database does not know is
    /// inserted; one that only imports or placements named (external) becomes this source;
    /// a source already in the database, removed ones included, is left as it is, so an
    /// admin's edit survives a restart. Returns whether anything was written.
    async fn seed_channel(&self, spec: &SourceSpec, now: DateTime<Utc>) -> Result<bool>;

    /// Adds a source as the admin gave it (check it first with
    /// [`SourceInput::parse`] or [`SourceSpec::check`]). A handle known already becomes
    /// this source: a removed one is revived with these settings, its last error cleared;
    /// the panel can ask [`Self::source_by_handle`] first to tell the admin it is listed.
    async fn add_source(&self, spec: &SourceSpec, now: DateTime<Utc>) -> Result<ChannelRow>;

    /// Changes a source's title, enabled flag and rules ([`SourceEdit::check`] them first).
    /// `None` when there is no such source, or it was removed.
    async fn update_source(
        &self,
        id: ChannelId,
        edit: &SourceEdit,
        now: DateTime<Utc>,
    ) -> Result<Option<ChannelRow>>;

    /// Removes a source: it is no longer read or listed, and its posts keep pointing at it.
    /// Returns whether it was there to remove.
    async fn remove_source(&self, id: ChannelId, now: DateTime<Utc>) -> Result<bool>;

    /// The channel with this id, whatever its state (see [`ChannelRow::removed_at`]).
    async fn source(&self, id: ChannelId) -> Result<Option<ChannelRow>>;

    /// The channel with this handle ([`SourceSpec::handle`]), whatever its state.
    async fn source_by_handle(&self, handle: &str) -> Result<Option<ChannelRow>>;

    /// The sources, enabled or not, without removed and external ones, by id.
    async fn sources(&self) -> Result<Vec<ChannelRow>>;

    /// A number that changes with every change of a source (one single-row read): a
    /// parser polls it and reads [`Self::sources`] again when it moved.
    async fn sources_version(&self) -> Result<i64>;

    /// Records what a reader found about the source `handle`: joined, an error, or working
    /// again. Not a change of the source (the version stays).
    async fn note_source(&self, handle: &str, note: &SourceNote, now: DateTime<Utc>) -> Result<()>;

    /// Per source (as [`Self::sources`] lists them): joined, last post, posts and vacancies
    /// read since `since`, posts per day over `since..now`, last error.
    async fn source_stats(
        &self,
        since: DateTime<Utc>,
        now: DateTime<Utc>,
    ) -> Result<Vec<SourceStats>>;
}

/// Binds a spec's columns as `$1…$10`: handle, title, kind, enabled, include, exclude,
/// feed URL, interval, jitter, backfill.
fn bind_spec<DB: Dialect>(sql: Sql<DB>, spec: &SourceSpec) -> Sql<DB> {
    let feed = spec.feed.as_ref();
    let secs = |v: u64| i64::try_from(v).unwrap_or(i64::MAX);
    sql.text(spec.handle.as_str())
        .text(spec.title.as_deref())
        .text(spec.kind.as_str())
        .flag(spec.enabled)
        .json(Some(&spec.include))
        .json(Some(&spec.exclude))
        .text(feed.map(|f| f.url.as_str()))
        .int(feed.map(|f| secs(f.interval_secs)))
        .int(feed.map(|f| secs(f.jitter_secs)))
        .flag(feed.is_some_and(|f| f.backfill))
}

#[async_trait]
impl<DB: Dialect> ChannelStore for SqlStore<DB> {
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
            "INSERT INTO channels (handle, kind, created_at, updated_at)
             VALUES ($1, 'external', $2, $2)
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

    async fn seed_channel(&self, spec: &SourceSpec, now: DateTime<Utc>) -> Result<bool> {
        const SEED: &str = "INSERT INTO channels (handle, title, kind, enabled, include_terms,
                 exclude_terms, feed_url, feed_interval_secs, feed_jitter_secs, feed_backfill,
                 created_at, updated_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $11)
             ON CONFLICT (handle) DO UPDATE SET
                 title = COALESCE(excluded.title, channels.title), kind = excluded.kind,
                 enabled = excluded.enabled, include_terms = excluded.include_terms,
                 exclude_terms = excluded.exclude_terms, feed_url = excluded.feed_url,
                 feed_interval_secs = excluded.feed_interval_secs,
                 feed_jitter_secs = excluded.feed_jitter_secs,
                 feed_backfill = excluded.feed_backfill, updated_at = excluded.updated_at
             WHERE channels.kind = 'external' AND channels.removed_at IS NULL
             RETURNING id";
        let mut tx = self.write.begin().await?;
        let written = bind_spec(Sql::<DB>::new(SEED), spec)
            .int(ms(now))
            .fetch_optional(&mut tx)
            .await?
            .is_some();
        if written {
            Sql::<DB>::new(BUMP_SOURCES_VERSION)
                .execute(&mut tx)
                .await?;
        }
        tx.commit().await?;
        Ok(written)
    }

    async fn add_source(&self, spec: &SourceSpec, now: DateTime<Utc>) -> Result<ChannelRow> {
        const ADD: &str = "INSERT INTO channels (handle, title, kind, enabled, include_terms,
                 exclude_terms, feed_url, feed_interval_secs, feed_jitter_secs, feed_backfill,
                 created_at, updated_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $11)
             ON CONFLICT (handle) DO UPDATE SET
                 title = excluded.title, kind = excluded.kind, enabled = excluded.enabled,
                 include_terms = excluded.include_terms, exclude_terms = excluded.exclude_terms,
                 feed_url = excluded.feed_url, feed_interval_secs = excluded.feed_interval_secs,
                 feed_jitter_secs = excluded.feed_jitter_secs,
                 feed_backfill = excluded.feed_backfill, removed_at = NULL,
                 last_error = NULL, last_error_at = NULL, updated_at = excluded.updated_at
             RETURNING *";
        let mut tx = self.write.begin().await?;
        let row = bind_spec(Sql::<DB>::new(ADD), spec)
            .int(ms(now))
            .fetch_one(&mut tx)
            .await?;
        Sql::<DB>::new(BUMP_SOURCES_VERSION)
            .execute(&mut tx)
            .await?;
        tx.commit().await?;
        codec::channel_row::<DB>(&row)
    }

    async fn update_source(
        &self,
        id: ChannelId,
        edit: &SourceEdit,
        now: DateTime<Utc>,
    ) -> Result<Option<ChannelRow>> {
        let mut tx = self.write.begin().await?;
        let row = Sql::<DB>::new(
            "UPDATE channels SET title = $2, enabled = $3, include_terms = $4,
                 exclude_terms = $5, updated_at = $6
             WHERE id = $1 AND removed_at IS NULL RETURNING *",
        )
        .int(id)
        .text(edit.title.as_deref())
        .flag(edit.enabled)
        .json(Some(&edit.include))
        .json(Some(&edit.exclude))
        .int(ms(now))
        .fetch_optional(&mut tx)
        .await?;
        if row.is_some() {
            Sql::<DB>::new(BUMP_SOURCES_VERSION)
                .execute(&mut tx)
                .await?;
        }
        tx.commit().await?;
        row.as_ref().map(codec::channel_row::<DB>).transpose()
    }

    async fn remove_source(&self, id: ChannelId, now: DateTime<Utc>) -> Result<bool> {
        let mut tx = self.write.begin().await?;
        let removed = Sql::<DB>::new(
            "UPDATE channels SET removed_at = $2, updated_at = $2
             WHERE id = $1 AND removed_at IS NULL",
        )
        .int(id)
        .int(ms(now))
        .execute(&mut tx)
        .await?
            > 0;
        if removed {
            Sql::<DB>::new(BUMP_SOURCES_VERSION)
                .execute(&mut tx)
                .await?;
        }
        tx.commit().await?;
        Ok(removed)
    }

    async fn source(&self, id: ChannelId) -> Result<Option<ChannelRow>> {
        self.one(
            "SELECT * FROM channels WHERE id = $1",
            id,
            codec::channel_row::<DB>,
        )
        .await
    }

    async fn source_by_handle(&self, handle: &str) -> Result<Option<ChannelRow>> {
        let row = Sql::<DB>::new("SELECT * FROM channels WHERE handle = $1")
            .text(handle)
            .fetch_optional(&self.read)
            .await?;
        row.as_ref().map(codec::channel_row::<DB>).transpose()
    }

    async fn sources(&self) -> Result<Vec<ChannelRow>> {
        let rows = Sql::<DB>::new(
            "SELECT * FROM channels WHERE removed_at IS NULL AND kind <> 'external' ORDER BY id",
        )
        .fetch_all(&self.read)
        .await?;
        rows.iter().map(codec::channel_row::<DB>).collect()
    }

    async fn sources_version(&self) -> Result<i64> {
        let row = Sql::<DB>::new("SELECT value FROM meta WHERE key = 'sources_version'")
            .fetch_one(&self.read)
            .await?;
        Cols::<DB>::new(&row).int("value")
    }

    async fn note_source(&self, handle: &str, note: &SourceNote, now: DateTime<Utc>) -> Result<()> {
        let sql = match note {
            SourceNote::Joined => Sql::<DB>::new(
                "UPDATE channels SET joined_at = COALESCE(joined_at, $2), last_error = NULL,
                     last_error_at = NULL
                 WHERE handle = $1",
            )
            .text(handle)
            .int(ms(now)),
            SourceNote::Error(message) => {
                let message: String = message.chars().take(MAX_ERROR_CHARS).collect();
                Sql::<DB>::new(
                    "UPDATE channels SET last_error = $2, last_error_at = $3 WHERE handle = $1",
                )
                .text(handle)
                .text(message.as_str())
                .int(ms(now))
            }
            SourceNote::Ok => Sql::<DB>::new(
                "UPDATE channels SET last_error = NULL, last_error_at = NULL
                 WHERE handle = $1 AND last_error IS NOT NULL",
            )
            .text(handle),
        };
        sql.execute(&self.write).await?;
        Ok(())
    }

    async fn source_stats(
        &self,
        since: DateTime<Utc>,
        now: DateTime<Utc>,
    ) -> Result<Vec<SourceStats>> {
        let days = ((now - since).num_seconds().max(1) as f64) / 86_400.0;
        Sql::<DB>::new(
            "SELECT c.id, c.joined_at, c.last_error, c.last_error_at,
                 (SELECT MAX(p.posted_at) FROM posts p WHERE p.channel_id = c.id)
                     AS last_post_at,
                 (SELECT COUNT(*) FROM posts p
                  WHERE p.channel_id = c.id AND p.received_at >= $1) AS posts,
                 (SELECT COUNT(*) FROM posts p JOIN classifications k ON k.post_id = p.id
                  WHERE p.channel_id = c.id AND p.received_at >= $1 AND k.kind = 'job')
                     AS jobs
             FROM channels c WHERE c.removed_at IS NULL AND c.kind <> 'external'
             ORDER BY c.id",
        )
        .int(ms(since))
        .fetch_each(&self.read, |c| {
            let posts = clamp_u64(c.int("posts")?);
            let jobs = clamp_u64(c.int("jobs")?);
            Ok(SourceStats {
                channel_id: c.id()?.into(),
                joined_at: c.opt_time("joined_at")?,
                last_post_at: c.opt_time("last_post_at")?,
                posts,
                posts_per_day: posts as f64 / days,
                jobs,
                job_share: (posts > 0).then(|| jobs as f64 / posts as f64),
                last_error: c.opt_text("last_error")?,
                last_error_at: c.opt_time("last_error_at")?,
            })
        })
        .await
    }
}
