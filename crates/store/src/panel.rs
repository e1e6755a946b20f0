//! What the web panel keeps and reads: admins' sessions, the audit log of changes, the
//! post search, and the dashboard's series.

use std::fmt;

use async_trait::async_trait;
use chrono::{DateTime, Utc};

use crate::codec::ms;
use crate::sql::{Cols, Dialect, Sql};
use crate::*;

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

/// One bucket of the dashboard's series.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct DashboardBucket {
    /// The bucket's start.
    pub at: DateTime<Utc>,
    /// Posts received.
    pub posts: u64,
    /// Posts received that the source's rules let through.
    pub passed_rules: u64,
    /// Verdicts written (by the local model or the LLM).
    pub classified: u64,
    /// Verdicts that the post is a job.
    pub jobs: u64,
    /// Verdicts written by the LLM (a prompt version not starting with `local`).
    pub llm: u64,
    /// The LLM's tokens, in and out.
    pub tokens: u64,
    /// The LLM's spend, in US dollars.
    pub cost_usd: f64,
    /// The LLM verdicts' average latency (0 without one).
    pub latency_ms_avg: f64,
    /// Deliveries that ended sent, failed or blocked in the bucket.
    pub sent: u64,
    pub failed: u64,
    pub blocked: u64,
    /// The Bot API's 429 answers to sends.
    pub bot_429: u64,
    /// Flood waits given to the MTProto accounts.
    pub flood_waits: u64,
}

/// Counts per source, per category and per bot or account over the dashboard's period.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DashboardTotals {
    /// `(handle, posts read, posts past the rules)`.
    pub per_source: Vec<(String, u64, u64)>,
    /// `(category slug, jobs)`, the most jobs first.
    pub per_category: Vec<(String, u64)>,
    /// Telegram's waits per kind and bot or account, the most first.
    pub waits: Vec<WaitTotal>,
}

/// How long Telegram made us wait kept rows for.
pub const TELEGRAM_WAITS_KEPT: chrono::Duration = chrono::Duration::days(30);

/// Which wait Telegram imposed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum WaitKind {
    /// The Bot API answered a send 429 Too Many Requests (`retry_after`).
    Bot429,
    /// An MTProto account got `FLOOD_WAIT_N` (or an equivalent).
    FloodWait,
}

impl WaitKind {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Bot429 => "bot_429",
            Self::FloodWait => "flood_wait",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "bot_429" => Some(Self::Bot429),
            "flood_wait" => Some(Self::FloodWait),
            _ => None,
        }
    }
}

/// One time Telegram made a bot or an account wait.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TelegramWait {
    pub kind: WaitKind,
    /// The bot's name (`[[bots]] name`) or the account's id.
    pub who: String,
    /// How long Telegram asked for.
    pub seconds: u64,
    pub at: DateTime<Utc>,
}

/// The waits of one kind and bot or account over the dashboard's period.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WaitTotal {
    pub kind: WaitKind,
    pub who: String,
    /// How many times.
    pub count: u64,
    /// The seconds asked for, added up.
    pub seconds: u64,
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

fn count<DB: Dialect>(c: &Cols<'_, DB>, column: &'static str) -> Result<u64> {
    Ok(c.opt_int(column)?.unwrap_or(0).max(0) as u64)
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
        let rows = Sql::<DB>::new(
            "SELECT id, at, actor, action, target, detail FROM audit_log
             WHERE CAST($1 AS BIGINT) IS NULL OR id < $1
             ORDER BY id DESC LIMIT $2",
        )
        .int(before)
        .int(i64::from(limit))
        .fetch_all(&self.read)
        .await?;
        rows.iter()
            .map(|row| {
                let c = Cols::<DB>::new(row);
                Ok(AuditEntry {
                    id: c.id()?,
                    at: c.time("at")?,
                    actor: c.text("actor")?,
                    action: c.text("action")?,
                    target: c.text("target")?,
                    detail: c.text("detail")?,
                })
            })
            .collect()
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
        let rows = Sql::<DB>::new(
            "SELECT id, text FROM posts WHERE channel_id = $1 ORDER BY id DESC LIMIT $2",
        )
        .int(channel.get())
        .int(i64::from(limit))
        .fetch_all(&self.read)
        .await?;
        rows.iter()
            .map(|row| {
                let c = Cols::<DB>::new(row);
                Ok((PostId::from(c.id()?), c.text("text")?))
            })
            .collect()
    }

    async fn dashboard_series(
        &self,
        since: DateTime<Utc>,
        bucket: chrono::Duration,
    ) -> Result<Vec<DashboardBucket>> {
        let width = bucket.num_milliseconds().max(1000);
        let start = ms(since);
        let n = usize::try_from((ms(Utc::now()) - start) / width + 1).unwrap_or(0);
        let mut out: Vec<DashboardBucket> = (0..n.min(10_000))
            .map(|i| DashboardBucket {
                at: DateTime::from_timestamp_millis(start + i as i64 * width).unwrap_or(since),
                ..DashboardBucket::default()
            })
            .collect();
        let posts = Sql::<DB>::new(
            "SELECT (received_at - $1) / $2 AS b, COUNT(*) AS n,
                    CAST(SUM(CASE WHEN status = 'filtered' THEN 0 ELSE 1 END) AS BIGINT) AS passed
             FROM posts WHERE received_at >= $1 GROUP BY (received_at - $1) / $2",
        )
        .int(start)
        .int(width)
        .fetch_all(&self.read)
        .await?;
        for row in &posts {
            let c = Cols::<DB>::new(row);
            if let Some(b) = usize::try_from(c.int("b")?)
                .ok()
                .and_then(|i| out.get_mut(i))
            {
                b.posts = count(&c, "n")?;
                b.passed_rules = count(&c, "passed")?;
            }
        }
        let verdicts = Sql::<DB>::new(
            "SELECT (created_at - $1) / $2 AS b, COUNT(*) AS n,
                    CAST(SUM(CASE WHEN kind = 'job' THEN 1 ELSE 0 END) AS BIGINT) AS jobs,
                    CAST(SUM(CASE WHEN prompt_version IS NOT NULL AND prompt_version NOT LIKE 'local%' THEN 1 ELSE 0 END) AS BIGINT) AS llm,
                    CAST(SUM(tokens_in + tokens_out) AS BIGINT) AS tokens,
                    CAST(COALESCE(SUM(cost_usd), 0) AS DOUBLE PRECISION) AS cost,
                    CAST(COALESCE(AVG(CASE WHEN prompt_version IS NOT NULL AND prompt_version NOT LIKE 'local%'
                                      THEN CAST(latency_ms AS DOUBLE PRECISION) END), 0)
                         AS DOUBLE PRECISION) AS latency
             FROM classifications WHERE created_at >= $1 GROUP BY (created_at - $1) / $2",
        )
        .int(start)
        .int(width)
        .fetch_all(&self.read)
        .await?;
        for row in &verdicts {
            let c = Cols::<DB>::new(row);
            if let Some(b) = usize::try_from(c.int("b")?)
                .ok()
                .and_then(|i| out.get_mut(i))
            {
                b.classified = count(&c, "n")?;
                b.jobs = count(&c, "jobs")?;
                b.llm = count(&c, "llm")?;
                b.tokens = count(&c, "tokens")?;
                b.cost_usd = c.real("cost")?;
                b.latency_ms_avg = c.real("latency")?;
            }
        }
        let sends = Sql::<DB>::new(
            "SELECT (updated_at - $1) / $2 AS b,
                    CAST(SUM(CASE WHEN status = 'sent' THEN 1 ELSE 0 END) AS BIGINT) AS sent,
                    CAST(SUM(CASE WHEN status = 'failed' THEN 1 ELSE 0 END) AS BIGINT) AS failed,
                    CAST(SUM(CASE WHEN status = 'blocked' THEN 1 ELSE 0 END) AS BIGINT) AS blocked
             FROM deliveries WHERE updated_at >= $1 GROUP BY (updated_at - $1) / $2",
        )
        .int(start)
        .int(width)
        .fetch_all(&self.read)
        .await?;
        for row in &sends {
            let c = Cols::<DB>::new(row);
            if let Some(b) = usize::try_from(c.int("b")?)
                .ok()
                .and_then(|i| out.get_mut(i))
            {
                b.sent = count(&c, "sent")?;
                b.failed = count(&c, "failed")?;
                b.blocked = count(&c, "blocked")?;
            }
        }
        let waits = Sql::<DB>::new(
            "SELECT (at - $1) / $2 AS b,
                    CAST(SUM(CASE WHEN kind = 'bot_429' THEN 1 ELSE 0 END) AS BIGINT) AS bot_429,
                    CAST(SUM(CASE WHEN kind = 'flood_wait' THEN 1 ELSE 0 END) AS BIGINT) AS flood
             FROM telegram_waits WHERE at >= $1 GROUP BY (at - $1) / $2",
        )
        .int(start)
        .int(width)
        .fetch_all(&self.read)
        .await?;
        for row in &waits {
            let c = Cols::<DB>::new(row);
            if let Some(b) = usize::try_from(c.int("b")?)
                .ok()
                .and_then(|i| out.get_mut(i))
            {
                b.bot_429 = count(&c, "bot_429")?;
                b.flood_waits = count(&c, "flood")?;
            }
        }
        Ok(out)
    }

    async fn dashboard_totals(&self, since: DateTime<Utc>) -> Result<DashboardTotals> {
        let per_source = Sql::<DB>::new(
            "SELECT c.handle, COUNT(p.id) AS n,
                    CAST(SUM(CASE WHEN p.status = 'filtered' THEN 0 ELSE 1 END) AS BIGINT) AS passed
             FROM posts p JOIN channels c ON c.id = p.channel_id
             WHERE p.received_at >= $1 GROUP BY c.handle ORDER BY n DESC",
        )
        .int(ms(since))
        .fetch_all(&self.read)
        .await?
        .iter()
        .map(|row| {
            let c = Cols::<DB>::new(row);
            Ok((c.text("handle")?, count(&c, "n")?, count(&c, "passed")?))
        })
        .collect::<Result<Vec<_>>>()?;
        let rows = Sql::<DB>::new(
            "SELECT CAST(categories AS TEXT) AS categories FROM classifications
             WHERE created_at >= $1 AND kind = 'job'",
        )
        .int(ms(since))
        .fetch_all(&self.read)
        .await?;
        let mut per_category: std::collections::BTreeMap<String, u64> = Default::default();
        for row in &rows {
            let c = Cols::<DB>::new(row);
            let list: Vec<String> =
                serde_json::from_str(&c.text("categories")?).unwrap_or_default();
            for slug in list {
                *per_category.entry(slug).or_default() += 1;
            }
        }
        let mut per_category: Vec<(String, u64)> = per_category.into_iter().collect();
        per_category.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        let waits = Sql::<DB>::new(
            "SELECT kind, who, COUNT(*) AS n, CAST(SUM(seconds) AS BIGINT) AS seconds
             FROM telegram_waits WHERE at >= $1 GROUP BY kind, who",
        )
        .int(ms(since))
        .fetch_all(&self.read)
        .await?;
        let mut waits = waits
            .iter()
            .map(|row| {
                let c = Cols::<DB>::new(row);
                Ok(WaitTotal {
                    kind: c.word("kind", WaitKind::parse)?,
                    who: c.text("who")?,
                    count: count(&c, "n")?,
                    seconds: count(&c, "seconds")?,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        waits.sort_by(|a, b| {
            b.count
                .cmp(&a.count)
                .then_with(|| a.kind.cmp(&b.kind))
                .then_with(|| a.who.cmp(&b.who))
        });
        Ok(DashboardTotals {
            per_source,
            per_category,
            waits,
        })
    }

    async fn record_telegram_waits(&self, waits: &[TelegramWait]) -> Result<()> {
        let Some(newest) = waits.iter().map(|w| w.at).max() else {
            return Ok(());
        };
        let mut tx = self.write.begin().await?;
        for w in waits {
            Sql::<DB>::new(
                "INSERT INTO telegram_waits (at, kind, who, seconds) VALUES ($1, $2, $3, $4)",
            )
            .int(ms(w.at))
            .text(w.kind.as_str())
            .text(w.who.as_str())
            .int(i64::try_from(w.seconds).unwrap_or(i64::MAX))
            .execute(&mut tx)
            .await?;
        }
        Sql::<DB>::new("DELETE FROM telegram_waits WHERE at < $1")
            .int(ms(newest - TELEGRAM_WAITS_KEPT))
            .execute(&mut tx)
            .await?;
        tx.commit().await?;
        Ok(())
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
