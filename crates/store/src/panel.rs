//! What the web panel keeps and reads: admins' sessions, the audit log of changes, the
//! post search, and the dashboard's series.

use std::fmt;

use async_trait::async_trait;
use chrono::{DateTime, Utc};

use crate::codec::ms;
use crate::sql::{Cols, Dialect, Sql};
use crate::*;

mod dashboard;

pub use dashboard::{
    DashboardBucket, DashboardTotals, TELEGRAM_WAITS_KEPT, TelegramWait, WaitKind, WaitTotal,
};

/// A logged-in admin's session, found by the SHA-256 of its cookie token. `Debug` leaves
/// the CSRF token out.
#[derive(Clone, PartialEq, Eq)]
pub struct SessionRow {
    pub admin_id: AdminId,
    pub username: String,
    /// The account's role, read with the session (a changed role applies at once).
    pub role: crate::AdminRole,
    /// The token every state change of this session must carry.
    pub csrf: String,
    pub created_at: DateTime<Utc>,
    pub last_seen_at: DateTime<Utc>,
    pub expires_at: DateTime<Utc>,
}

impl fmt::Debug for SessionRow {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SessionRow")
            .field("admin_id", &self.admin_id)
            .field("username", &self.username)
            .field("role", &self.role)
            .field("csrf", &"<redacted>")
            .field("last_seen_at", &self.last_seen_at)
            .field("expires_at", &self.expires_at)
            .finish()
    }
}

/// A session to store.
#[derive(Clone)]
pub struct NewSession<'a> {
    pub token_hash: &'a str,
    pub admin_id: AdminId,
    pub csrf: &'a str,
    /// The client's address, as the panel shows it.
    pub client: &'a str,
    pub expires_at: DateTime<Utc>,
}

impl fmt::Debug for NewSession<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("NewSession")
            .field("admin_id", &self.admin_id)
            .field("client", &self.client)
            .finish_non_exhaustive()
    }
}

/// One change, as the audit log keeps it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuditEntry {
    pub id: i64,
    pub at: DateTime<Utc>,
    /// The admin's username, or `api-token` for the bearer-token API.
    pub actor: String,
    /// What was done: `source.add`, `report.accept`, `prompt.activate`, …
    pub action: String,
    /// What it was done to: `source 3`, `post 118`, …
    pub target: String,
    /// What changed, in words or JSON.
    pub detail: String,
}

/// What the post search looks for; every field narrows it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PostFilter {
    pub channel_id: Option<ChannelId>,
    /// A category slug the post was classified into.
    pub category: Option<String>,
    /// A post status (`PostStatus::as_str`).
    pub status: Option<String>,
    pub since: Option<DateTime<Utc>>,
    pub until: Option<DateTime<Utc>>,
    /// Words in the text (case folded for ASCII on SQLite, everywhere on PostgreSQL).
    pub text: Option<String>,
    /// Older than this post (paging, newest first).
    pub before: Option<PostId>,
    pub limit: u32,
}

/// One line of the post search.
#[derive(Debug, Clone, PartialEq)]
pub struct PostListRow {
    pub id: PostId,
    pub channel_id: ChannelId,
    pub channel_handle: String,
    pub text: String,
    pub posted_at: DateTime<Utc>,
    pub status: String,
    /// `job`, `resume`, `ad`, `chatter`, when classified.
    pub kind: Option<String>,
    pub categories: Vec<String>,
    pub model: Option<String>,
}

/// The web panel's data.
#[async_trait]
pub trait PanelStore: Send + Sync {
    async fn create_session(&self, session: &NewSession<'_>, now: DateTime<Utc>) -> Result<()>;

    /// The session of a token hash, with its admin, when it has not expired and the admin
    /// is not disabled.
    async fn session(&self, token_hash: &str, now: DateTime<Utc>) -> Result<Option<SessionRow>>;

    /// Marks the session used now and moves its end.
    async fn touch_session(
        &self,
        token_hash: &str,
        now: DateTime<Utc>,
        expires_at: DateTime<Utc>,
    ) -> Result<()>;

    async fn delete_session(&self, token_hash: &str) -> Result<()>;

    /// Ends every session of an admin (a password change); returns how many.
    async fn delete_admin_sessions(&self, admin_id: AdminId) -> Result<u64>;

    /// Drops sessions that ended before `now`.
    async fn delete_expired_sessions(&self, now: DateTime<Utc>) -> Result<u64>;

    async fn record_audit(
        &self,
        actor: &str,
        action: &str,
        target: &str,
        detail: &str,
        now: DateTime<Utc>,
    ) -> Result<i64>;

    /// The newest entries first, older than `before` when given.
    async fn audit_log(&self, limit: u32, before: Option<i64>) -> Result<Vec<AuditEntry>>;

    /// Posts matching the filter, newest first.
    async fn search_posts(&self, filter: &PostFilter) -> Result<Vec<PostListRow>>;

    /// The last `limit` posts of a channel, newest first: `(id, text)` (the rule preview).
    async fn channel_recent_texts(
        &self,
        channel: ChannelId,
        limit: u32,
    ) -> Result<Vec<(PostId, String)>>;

    /// The dashboard's series from `since`, in buckets of `bucket` each.
    async fn dashboard_series(
        &self,
        since: DateTime<Utc>,
        bucket: chrono::Duration,
    ) -> Result<Vec<DashboardBucket>>;

    /// The dashboard's totals per source, per category and per bot or account from `since`.
    async fn dashboard_totals(&self, since: DateTime<Utc>) -> Result<DashboardTotals>;

    /// Keeps the waits Telegram imposed (any process may write them), in one transaction,
    /// and drops those older than [`TELEGRAM_WAITS_KEPT`] before the newest of them.
    async fn record_telegram_waits(&self, waits: &[TelegramWait]) -> Result<()>;

    /// Sends a post back to the classifier: status `queued`, due at once, so the
    /// scheduler of whichever process runs it publishes it again (a re-post's duplicate is
    /// left alone). Returns whether it was changed.
    async fn requeue_post(&self, post: PostId) -> Result<bool>;

    /// Sends a job's failed deliveries again: `pending`, attempts and error cleared, due at
    /// once. Sent and blocked ones are left alone. Returns how many.
    async fn retry_failed_deliveries(&self, post: PostId) -> Result<u64>;

    /// One delivery due again at once, from wherever it stopped (a dead letter's retry):
    /// a failed or pending one becomes `pending`; a sent or blocked one is left alone.
    async fn rewind_delivery(&self, delivery: DeliveryId) -> Result<bool>;

    /// A job due for fan-out again at once (a dead letter of the fan-out topic).
    async fn rewind_fanout(&self, post: PostId) -> Result<bool>;

    /// One dead letter.
    async fn dead_letter(&self, id: i64) -> Result<Option<crate::DeadLetterRow>>;

    /// Forgets a dead letter; returns whether it was there.
    async fn delete_dead_letter(&self, id: i64) -> Result<bool>;

    /// An admin gives a subscriber `days` more: the current (unrevoked, not ended) period
    /// that ends last is extended; without one, a new `admin` period of every category
    /// starts now. Bumps the subscribers' version. Returns the period as it is now.
    async fn extend_access(
        &self,
        chat_id: i64,
        days: u32,
        now: DateTime<Utc>,
    ) -> Result<crate::AccessPeriodRow>;

    /// An admin ends a subscriber's access now: every period not ended yet is revoked
    /// (its renewal too). Bumps the subscribers' version. Returns how many periods.
    async fn end_access(&self, chat_id: i64, now: DateTime<Utc>) -> Result<u64>;
}

#[async_trait]
impl<DB: Dialect> PanelStore for SqlStore<DB> {
    async fn create_session(&self, s: &NewSession<'_>, now: DateTime<Utc>) -> Result<()> {
        Sql::<DB>::new(
            "INSERT INTO admin_sessions
                (token_hash, admin_id, csrf, client, created_at, last_seen_at, expires_at)
             VALUES ($1, $2, $3, $4, $5, $5, $6)",
        )
        .text(s.token_hash)
        .int(s.admin_id)
        .text(s.csrf)
        .text(s.client)
        .int(ms(now))
        .int(ms(s.expires_at))
        .execute(&self.write)
        .await?;
        Ok(())
    }

    async fn session(&self, token_hash: &str, now: DateTime<Utc>) -> Result<Option<SessionRow>> {
        let row = Sql::<DB>::new(
            "SELECT s.admin_id, a.username, a.role, s.csrf, s.created_at, s.last_seen_at, s.expires_at
             FROM admin_sessions s JOIN admins a ON a.id = s.admin_id
             WHERE s.token_hash = $1 AND s.expires_at > $2 AND a.disabled_at IS NULL",
        )
        .text(token_hash)
        .int(ms(now))
        .fetch_optional(&self.read)
        .await?;
        row.map(|row| {
            let c = Cols::<DB>::new(&row);
            Ok(SessionRow {
                admin_id: AdminId(c.int("admin_id")?),
                username: c.text("username")?,
                role: crate::admins::role_of(&c.text("role")?),
                csrf: c.text("csrf")?,
                created_at: c.time("created_at")?,
                last_seen_at: c.time("last_seen_at")?,
                expires_at: c.time("expires_at")?,
            })
        })
        .transpose()
    }

    async fn touch_session(
        &self,
        token_hash: &str,
        now: DateTime<Utc>,
        expires_at: DateTime<Utc>,
    ) -> Result<()> {
        Sql::<DB>::new(
            "UPDATE admin_sessions SET last_seen_at = $2, expires_at = $3 WHERE token_hash = $1",
        )
        .text(token_hash)
        .int(ms(now))
        .int(ms(expires_at))
        .execute(&self.write)
        .await?;
        Ok(())
    }

    async fn delete_session(&self, token_hash: &str) -> Result<()> {
        Sql::<DB>::new("DELETE FROM admin_sessions WHERE token_hash = $1")
            .text(token_hash)
            .execute(&self.write)
            .await?;
        Ok(())
    }

    async fn delete_admin_sessions(&self, admin_id: AdminId) -> Result<u64> {
        Sql::<DB>::new("DELETE FROM admin_sessions WHERE admin_id = $1")
            .int(admin_id)
            .execute(&self.write)
            .await
    }

    async fn delete_expired_sessions(&self, now: DateTime<Utc>) -> Result<u64> {
        Sql::<DB>::new("DELETE FROM admin_sessions WHERE expires_at <= $1")
            .int(ms(now))
            .execute(&self.write)
            .await
    }

    async fn record_audit(
        &self,
        actor: &str,
        action: &str,
        target: &str,
        detail: &str,
        now: DateTime<Utc>,
    ) -> Result<i64> {
        let row = Sql::<DB>::new(
            "INSERT INTO audit_log (at, actor, action, target, detail)
             VALUES ($1, $2, $3, $4, $5) RETURNING id",
        )
        .int(ms(now))
        .text(actor)
        .text(action)
        .text(target)
        .text(detail)
        .fetch_one(&self.write)
        .await?;
        Cols::<DB>::new(&row).id()
    }

    async fn audit_log(&self, limit: u32, before: Option<i64>) -> Result<Vec<AuditEntry>> {
        Sql::<DB>::new(
            "SELECT id, at, actor, action, target, detail FROM audit_log
             WHERE CAST($1 AS BIGINT) IS NULL OR id < $1
             ORDER BY id DESC LIMIT $2",
        )
        .int(before)
        .int(i64::from(limit))
        .fetch_each(&self.read, |c| {
            Ok(AuditEntry {
                id: c.id()?,
                at: c.time("at")?,
                actor: c.text("actor")?,
                action: c.text("action")?,
                target: c.text("target")?,
                detail: c.text("detail")?,
            })
        })
        .await
    }

    async fn search_posts(&self, f: &PostFilter) -> Result<Vec<PostListRow>> {
        let category = f.category.as_ref().map(|c| format!("%\"{c}\"%"));
        let text = f
            .text
            .as_ref()
            .map(|t| t.trim().to_lowercase())
            .filter(|t| !t.is_empty())
            .map(|t| format!("%{}%", escape_like(&t)));
        let rows = Sql::<DB>::new(
            "SELECT p.id, p.channel_id, c.handle, p.text, p.posted_at, p.status,
                    k.kind, CAST(k.categories AS TEXT) AS categories, k.model
             FROM posts p JOIN channels c ON c.id = p.channel_id
             LEFT JOIN classifications k ON k.post_id = p.id
             WHERE (CAST($1 AS BIGINT) IS NULL OR p.channel_id = $1)
               AND (CAST($2 AS TEXT) IS NULL OR CAST(k.categories AS TEXT) LIKE $2)
               AND (CAST($3 AS TEXT) IS NULL OR p.status = $3)
               AND (CAST($4 AS BIGINT) IS NULL OR p.posted_at >= $4)
               AND (CAST($5 AS BIGINT) IS NULL OR p.posted_at < $5)
               AND (CAST($6 AS TEXT) IS NULL OR LOWER(p.text) LIKE $6 ESCAPE '\\')
               AND (CAST($7 AS BIGINT) IS NULL OR p.id < $7)
             ORDER BY p.id DESC LIMIT $8",
        )
        .int(f.channel_id.map(|c| c.get()))
        .text(category.as_deref())
        .text(f.status.as_deref())
        .int(f.since.map(ms))
        .int(f.until.map(ms))
        .text(text.as_deref())
        .int(f.before.map(|p| p.get()))
        .int(i64::from(f.limit.clamp(1, 500)))
        .fetch_all(&self.read)
        .await?;
        rows.iter()
            .map(|row| {
                let c = Cols::<DB>::new(row);
                let categories = match c.opt_text("categories")? {
                    Some(json) => serde_json::from_str(&json).map_err(|e| StoreError::Corrupt {
                        column: "classifications.categories",
                        detail: e.to_string(),
                    })?,
                    None => Vec::new(),
                };
                Ok(PostListRow {
                    id: PostId::from(c.id()?),
                    channel_id: ChannelId::from(c.int("channel_id")?),
                    channel_handle: c.text("handle")?,
                    text: c.text("text")?,
                    posted_at: c.time("posted_at")?,
                    status: c.text("status")?,
                    kind: c.opt_text("kind")?,
                    categories,
                    model: c.opt_text("model")?,
                })
            })
            .collect()
    }

    async fn channel_recent_texts(
        &self,
        channel: ChannelId,
        limit: u32,
    ) -> Result<Vec<(PostId, String)>> {
        Sql::<DB>::new("SELECT id, text FROM posts WHERE channel_id = $1 ORDER BY id DESC LIMIT $2")
            .int(channel.get())
            .int(i64::from(limit))
            .fetch_each(&self.read, |c| Ok((PostId::from(c.id()?), c.text("text")?)))
            .await
    }

    async fn dashboard_series(
        &self,
        since: DateTime<Utc>,
        bucket: chrono::Duration,
    ) -> Result<Vec<DashboardBucket>> {
        self.series(since, bucket).await
    }

    async fn dashboard_totals(&self, since: DateTime<Utc>) -> Result<DashboardTotals> {
        self.totals(since).await
    }

    async fn record_telegram_waits(&self, waits: &[TelegramWait]) -> Result<()> {
        self.record_waits(waits).await
    }

    async fn requeue_post(&self, post: PostId) -> Result<bool> {
        // updated_at 0: older than any stuck deadline, so the next scheduler tick
        // publishes it (the same path as a message lost in a crash).
        let n = Sql::<DB>::new(
            "UPDATE posts SET status = 'queued', attempts = 0, next_attempt_at = NULL,
                    last_error = NULL, updated_at = 0
             WHERE id = $1 AND status <> 'duplicate'",
        )
        .int(post.get())
        .execute(&self.write)
        .await?;
        Ok(n > 0)
    }

    async fn retry_failed_deliveries(&self, post: PostId) -> Result<u64> {
        Sql::<DB>::new(
            "UPDATE deliveries SET status = 'pending', attempts = 0, error = NULL,
                    not_before = NULL, updated_at = 0
             WHERE post_id = $1 AND status = 'failed'",
        )
        .int(post.get())
        .execute(&self.write)
        .await
    }

    async fn rewind_delivery(&self, delivery: DeliveryId) -> Result<bool> {
        let n = Sql::<DB>::new(
            "UPDATE deliveries SET status = 'pending', attempts = 0, error = NULL,
                    not_before = NULL, updated_at = 0
             WHERE id = $1 AND status IN ('failed', 'pending')",
        )
        .int(delivery.get())
        .execute(&self.write)
        .await?;
        Ok(n > 0)
    }

    async fn rewind_fanout(&self, post: PostId) -> Result<bool> {
        let n = Sql::<DB>::new("UPDATE posts SET updated_at = 0 WHERE id = $1 AND status = 'job'")
            .int(post.get())
            .execute(&self.write)
            .await?;
        Ok(n > 0)
    }

    async fn dead_letter(&self, id: i64) -> Result<Option<crate::DeadLetterRow>> {
        let rows = Sql::<DB>::new("SELECT * FROM dead_letters WHERE id = $1")
            .int(id)
            .fetch_all(&self.read)
            .await?;
        match rows.first() {
            None => Ok(None),
            Some(row) => {
                let c = Cols::<DB>::new(row);
                Ok(Some(crate::DeadLetterRow {
                    id: crate::DeadLetterId(c.id()?),
                    topic: c.text("topic")?,
                    payload: c.text("payload")?,
                    attempts: c.count("attempts")?,
                    reason: c.text("reason")?,
                    created_at: c.time("created_at")?,
                }))
            }
        }
    }

    async fn delete_dead_letter(&self, id: i64) -> Result<bool> {
        let n = Sql::<DB>::new("DELETE FROM dead_letters WHERE id = $1")
            .int(id)
            .execute(&self.write)
            .await?;
        Ok(n > 0)
    }

    async fn extend_access(
        &self,
        chat_id: i64,
        days: u32,
        now: DateTime<Utc>,
    ) -> Result<crate::AccessPeriodRow> {
        let more = i64::from(days) * 86_400_000;
        let mut tx = self.write.begin().await?;
        Sql::<DB>::new(crate::subscribers::BUMP_SUBSCRIBERS_VERSION)
            .execute(&mut tx)
            .await?;
        let current = Sql::<DB>::new(
            "SELECT id FROM access_periods
             WHERE chat_id = $1 AND revoked_at IS NULL AND ends_at > $2
             ORDER BY ends_at DESC LIMIT 1",
        )
        .int(chat_id)
        .int(ms(now))
        .fetch_optional(&mut tx)
        .await?;
        let row = match current {
            Some(row) => {
                let id = Cols::<DB>::new(&row).id()?;
                Sql::<DB>::new(
                    "UPDATE access_periods SET ends_at = ends_at + $2 WHERE id = $1 RETURNING *",
                )
                .int(id)
                .int(more)
                .fetch_one(&mut tx)
                .await?
            }
            None => {
                Sql::<DB>::new(
                    "INSERT INTO access_periods
                        (chat_id, plan_id, categories, starts_at, ends_at, trial, renews, created_at)
                     VALUES ($1, 'admin', '[]', $2, $3, $4, $4, $2) RETURNING *",
                )
                .int(chat_id)
                .int(ms(now))
                .int(ms(now) + more)
                .flag(false)
                .fetch_one(&mut tx)
                .await?
            }
        };
        let period = crate::billing::access_period_row(&Cols::<DB>::new(&row))?;
        tx.commit().await?;
        Ok(period)
    }

    async fn end_access(&self, chat_id: i64, now: DateTime<Utc>) -> Result<u64> {
        let mut tx = self.write.begin().await?;
        Sql::<DB>::new(crate::subscribers::BUMP_SUBSCRIBERS_VERSION)
            .execute(&mut tx)
            .await?;
        let n = Sql::<DB>::new(
            "UPDATE access_periods SET revoked_at = $2, renews = $3
             WHERE chat_id = $1 AND revoked_at IS NULL AND ends_at > $2",
        )
        .int(chat_id)
        .int(ms(now))
        .flag(false)
        .execute(&mut tx)
        .await?;
        tx.commit().await?;
        Ok(n)
    }
}

/// `%`, `_` and `\` in a LIKE pattern's words match themselves.
fn escape_like(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for ch in s.chars() {
        if matches!(ch, '%' | '_' | '\\') {
            out.push('\\');
        }
        out.push(ch);
    }
    out
}
