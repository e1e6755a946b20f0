//! The dashboard's series and totals, and the waits Telegram imposed that they count.

use chrono::{DateTime, Utc};

use crate::codec::ms;
use crate::sql::{Cols, Dialect, Sql};
use crate::{Result, SqlStore};

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

/// Where the series' buckets start and how wide each is, in milliseconds.
#[derive(Debug, Clone, Copy)]
struct Buckets {
    start: i64,
    width: i64,
}

fn count<DB: Dialect>(c: &Cols<'_, DB>, column: &'static str) -> Result<u64> {
    Ok(c.opt_int(column)?.unwrap_or(0).max(0) as u64)
}

impl<DB: Dialect> SqlStore<DB> {
    pub(super) async fn series(
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
        let buckets = Buckets { start, width };
        self.fill(
            buckets,
            "SELECT (received_at - $1) / $2 AS b, COUNT(*) AS n,
                    CAST(SUM(CASE WHEN status = 'filtered' THEN 0 ELSE 1 END) AS BIGINT) AS passed
             FROM posts WHERE received_at >= $1 GROUP BY (received_at - $1) / $2",
            &mut out,
            |b, c| {
                b.posts = count(c, "n")?;
                b.passed_rules = count(c, "passed")?;
                Ok(())
            },
        )
        .await?;
        self.fill(
            buckets,
            "SELECT (created_at - $1) / $2 AS b, COUNT(*) AS n,
                    CAST(SUM(CASE WHEN kind = 'job' THEN 1 ELSE 0 END) AS BIGINT) AS jobs,
                    CAST(SUM(CASE WHEN prompt_version IS NOT NULL AND prompt_version NOT LIKE 'local%' THEN 1 ELSE 0 END) AS BIGINT) AS llm,
                    CAST(SUM(tokens_in + tokens_out) AS BIGINT) AS tokens,
                    CAST(COALESCE(SUM(cost_usd), 0) AS DOUBLE PRECISION) AS cost,
                    CAST(COALESCE(AVG(CASE WHEN prompt_version IS NOT NULL AND prompt_version NOT LIKE 'local%'
                                      THEN CAST(latency_ms AS DOUBLE PRECISION) END), 0)
                         AS DOUBLE PRECISION) AS latency
             FROM classifications WHERE created_at >= $1 GROUP BY (created_at - $1) / $2",
            &mut out,
            |b, c| {
                b.classified = count(c, "n")?;
                b.jobs = count(c, "jobs")?;
                b.llm = count(c, "llm")?;
                b.tokens = count(c, "tokens")?;
                b.cost_usd = c.real("cost")?;
                b.latency_ms_avg = c.real("latency")?;
                Ok(())
            },
        )
        .await?;
        self.fill(
            buckets,
            "SELECT (updated_at - $1) / $2 AS b,
                    CAST(SUM(CASE WHEN status = 'sent' THEN 1 ELSE 0 END) AS BIGINT) AS sent,
                    CAST(SUM(CASE WHEN status = 'failed' THEN 1 ELSE 0 END) AS BIGINT) AS failed,
                    CAST(SUM(CASE WHEN status = 'blocked' THEN 1 ELSE 0 END) AS BIGINT) AS blocked
             FROM deliveries WHERE updated_at >= $1 GROUP BY (updated_at - $1) / $2",
            &mut out,
            |b, c| {
                b.sent = count(c, "sent")?;
                b.failed = count(c, "failed")?;
                b.blocked = count(c, "blocked")?;
                Ok(())
            },
        )
        .await?;
        self.fill(
            buckets,
            "SELECT (at - $1) / $2 AS b,
                    CAST(SUM(CASE WHEN kind = 'bot_429' THEN 1 ELSE 0 END) AS BIGINT) AS bot_429,
                    CAST(SUM(CASE WHEN kind = 'flood_wait' THEN 1 ELSE 0 END) AS BIGINT) AS flood
             FROM telegram_waits WHERE at >= $1 GROUP BY (at - $1) / $2",
            &mut out,
            |b, c| {
                b.bot_429 = count(c, "bot_429")?;
                b.flood_waits = count(c, "flood")?;
                Ok(())
            },
        )
        .await?;
        Ok(out)
    }

    /// Runs one query of the series (`$1` the first bucket's start, `$2` the width, column
    /// `b` the bucket's index) and writes each row into its bucket with `write`.
    async fn fill(
        &self,
        buckets: Buckets,
        query: &'static str,
        out: &mut [DashboardBucket],
        write: impl Fn(&mut DashboardBucket, &Cols<'_, DB>) -> Result<()> + Send,
    ) -> Result<()> {
        let rows = Sql::<DB>::new(query)
            .int(buckets.start)
            .int(buckets.width)
            .fetch_all(&self.read)
            .await?;
        for row in &rows {
            let c = Cols::<DB>::new(row);
            if let Some(b) = usize::try_from(c.int("b")?)
                .ok()
                .and_then(|i| out.get_mut(i))
            {
                write(b, &c)?;
            }
        }
        Ok(())
    }

    pub(super) async fn totals(&self, since: DateTime<Utc>) -> Result<DashboardTotals> {
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

    pub(super) async fn record_waits(&self, waits: &[TelegramWait]) -> Result<()> {
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
}
