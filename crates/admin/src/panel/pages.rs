//! The panel's pages but Sources: Dashboard, Posts and a post's trace, Reports,
//! Subscribers, Dead letters and the Audit log.

use std::collections::BTreeMap;
use std::sync::Arc;

use askama::Template;
use askama_web::WebTemplate;
use axum::body::Bytes;
use axum::extract::{Path, Query, State};
use axum::response::IntoResponse;
use chrono::{DateTime, Duration, NaiveDate, Utc};
use jobwire_store::{
    AuditEntry, ClassificationRecord, DeadLetterRow, DeliveryRow, ExampleSource, PostFilter,
    PostId, PostListRow, PostRow, ReportId, ReportRow, ReportStatus, SubscriberRow, WaitKind,
};
use serde::Deserialize;

use super::{AuditNote, Chrome, Ctx, PageResult, Panel, PanelError, form_field, see_other};
use crate::api::LabelBody;
use crate::i18n::Texts;

/// `2026-12-04 17:30` (UTC).
pub(crate) fn when(t: &DateTime<Utc>) -> String {
    t.format("%Y-%m-%d %H:%M").to_string()
}

/// At most `n` characters of a text, on one line.
pub(crate) fn snippet(text: &str, n: usize) -> String {
    let one_line: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if one_line.chars().count() > n {
        let mut s: String = one_line.chars().take(n).collect();
        s.push('…');
        s
    } else {
        one_line
    }
}

// ---------------------------------------------------------------- dashboard

#[derive(Debug, Deserialize, Default)]
pub struct PeriodQuery {
    period: Option<String>,
}

/// The dashboard's numbers over a period.
#[derive(Debug, Default)]
struct Numbers {
    posts: u64,
    passed_pct: String,
    jobs: u64,
    llm_pct: String,
    tokens: u64,
    /// The LLM's spend, `$0.42`.
    spend: String,
    latency_ms: String,
    sent: u64,
    failed: u64,
    blocked: u64,
    /// Sent per minute over the period.
    sent_per_min: String,
    /// The Bot API's 429 answers and the accounts' flood waits.
    bot_429: u64,
    flood_waits: u64,
    queued: u64,
    awaiting_fanout: u64,
    deliveries_pending: u64,
    deliveries_held: u64,
    dead_letters: u64,
    subscribers: u64,
    trials: u64,
    revenue: String,
    per_source: Vec<(String, u64, u64)>,
    per_category: Vec<(String, u64)>,
    /// `(kind, bot or account, times, seconds asked for)`.
    waits: Vec<(&'static str, String, u64, u64)>,
    /// How long one bucket of the series is, in words (`30 min`).
    bucket: &'static str,
    /// The buckets with anything in them, newest first (the charts' numbers without JS).
    rows: Vec<Row>,
    /// uPlot series JSON for the charts.
    chart_posts: String,
    chart_deliveries: String,
    chart_llm: String,
    chart_usage: String,
    chart_waits: String,
}

/// One bucket of the series as the table shows it.
#[derive(Debug)]
struct Row {
    at: String,
    posts: u64,
    passed: u64,
    jobs: u64,
    llm: u64,
    tokens: u64,
    spend: String,
    sent_per_min: String,
    failed: u64,
    blocked: u64,
    bot_429: u64,
    flood_waits: u64,
}

fn pct(part: u64, whole: u64) -> String {
    if whole == 0 {
        "–".to_owned()
    } else {
        format!("{:.1}%", part as f64 * 100.0 / whole as f64)
    }
}

/// US dollars: `$0`, `$0.0042`, `$1.25`.
fn usd(x: f64) -> String {
    if x <= 0.0 {
        "$0".to_owned()
    } else if x < 0.01 {
        format!("${x:.4}")
    } else {
        format!("${x:.2}")
    }
}

/// `count` over `minutes`, per minute: `0.25`.
fn per_min(count: u64, minutes: f64) -> f64 {
    if minutes > 0.0 {
        (count as f64 / minutes * 100.0).round() / 100.0
    } else {
        0.0
    }
}

async fn numbers(panel: &Panel, period: &str, t: &Texts) -> Result<Numbers, PanelError> {
    let store = panel.store()?;
    let (span, bucket, bucket_words) = if period == "7d" {
        (Duration::days(7), Duration::hours(3), t.step_3h)
    } else {
        (Duration::hours(24), Duration::minutes(30), t.step_30min)
    };
    let since = Utc::now() - span;
    let series = store.dashboard_series(since, bucket).await?;
    let totals = store.dashboard_totals(since).await?;
    let counts = store.pipeline_counts().await?;
    let billing = store.billing_counts(since).await?;
    let dead = store.dead_letter_count(since).await?;
    let subscribers = store.subscribers().await?;
    let mut n = Numbers {
        bucket: bucket_words,
        ..Numbers::default()
    };
    let (mut classified, mut llm, mut latency_sum, mut cost) = (0u64, 0u64, 0.0, 0.0);
    let bucket_min = bucket.num_seconds() as f64 / 60.0;
    for b in &series {
        n.posts += b.posts;
        n.jobs += b.jobs;
        n.tokens += b.tokens;
        n.sent += b.sent;
        n.failed += b.failed;
        n.blocked += b.blocked;
        n.bot_429 += b.bot_429;
        n.flood_waits += b.flood_waits;
        classified += b.classified;
        llm += b.llm;
        latency_sum += b.latency_ms_avg * b.llm as f64;
        cost += b.cost_usd;
    }
    let passed: u64 = series.iter().map(|b| b.passed_rules).sum();
    n.passed_pct = pct(passed, n.posts);
    n.llm_pct = pct(llm, classified);
    n.spend = usd(cost);
    n.latency_ms = if llm > 0 {
        format!("{:.0} ms", latency_sum / llm as f64)
    } else {
        "–".to_owned()
    };
    // Averaged over the whole period.
    n.sent_per_min = format!("{:.2}", per_min(n.sent, span.num_seconds() as f64 / 60.0));
    n.queued = counts.queued;
    n.awaiting_fanout = counts.awaiting_fanout;
    n.deliveries_pending = counts.deliveries_pending;
    n.deliveries_held = counts.deliveries_held;
    n.dead_letters = dead;
    n.subscribers = subscribers
        .iter()
        .filter(|s| !s.blocked && !s.paused)
        .count() as u64;
    n.trials = billing.trials_started;
    n.revenue = if billing.revenue.is_empty() {
        "0".to_owned()
    } else {
        billing
            .revenue
            .iter()
            .map(|(cur, amount)| format!("{amount} {cur}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    n.per_source = totals.per_source;
    n.per_category = totals.per_category;
    n.waits = totals
        .waits
        .into_iter()
        .map(|w| {
            let kind = match w.kind {
                WaitKind::Bot429 => t.wait_429,
                WaitKind::FloodWait => t.wait_flood,
            };
            (kind, w.who, w.count, w.seconds)
        })
        .collect();
    n.rows = series
        .iter()
        .rev()
        .filter(|b| {
            b.posts + b.classified + b.sent + b.failed + b.blocked + b.bot_429 + b.flood_waits > 0
        })
        .map(|b| Row {
            at: when(&b.at),
            posts: b.posts,
            passed: b.passed_rules,
            jobs: b.jobs,
            llm: b.llm,
            tokens: b.tokens,
            spend: usd(b.cost_usd),
            sent_per_min: format!("{:.2}", per_min(b.sent, bucket_min)),
            failed: b.failed,
            blocked: b.blocked,
            bot_429: b.bot_429,
            flood_waits: b.flood_waits,
        })
        .collect();
    let x: Vec<i64> = series.iter().map(|b| b.at.timestamp()).collect();
    let col = |f: fn(&jobwire_store::DashboardBucket) -> u64| -> Vec<u64> {
        series.iter().map(f).collect()
    };
    let rate = |f: fn(&jobwire_store::DashboardBucket) -> u64| -> Vec<f64> {
        series.iter().map(|b| per_min(f(b), bucket_min)).collect()
    };
    n.chart_posts = serde_json::json!({
        "x": x,
        "series": [
            {"label": t.posts_read, "values": col(|b| b.posts)},
            {"label": t.passed_rules, "values": col(|b| b.passed_rules)},
            {"label": t.jobs, "values": col(|b| b.jobs)},
            {"label": t.llm_verdicts, "values": col(|b| b.llm)},
        ]
    })
    .to_string();
    n.chart_deliveries = serde_json::json!({
        "x": x,
        "series": [
            {"label": t.sent, "values": rate(|b| b.sent)},
            {"label": t.failed, "values": rate(|b| b.failed)},
            {"label": t.blocked, "values": rate(|b| b.blocked)},
        ]
    })
    .to_string();
    // Share in percent on the left, latency in ms on the right.
    let share: Vec<Option<f64>> = series
        .iter()
        .map(|b| {
            (b.classified > 0).then(|| (b.llm as f64 * 1000.0 / b.classified as f64).round() / 10.0)
        })
        .collect();
    let latency: Vec<Option<f64>> = series
        .iter()
        .map(|b| (b.llm > 0).then(|| b.latency_ms_avg.round()))
        .collect();
    n.chart_llm = serde_json::json!({
        "x": x,
        "series": [
            {"label": format!("{}, %", t.llm_share), "values": share},
            {"label": format!("{}, ms", t.latency), "values": latency, "axis": "right"},
        ]
    })
    .to_string();
    let spend: Vec<f64> = series
        .iter()
        .map(|b| (b.cost_usd * 10_000.0).round() / 10_000.0)
        .collect();
    n.chart_usage = serde_json::json!({
        "x": x,
        "series": [
            {"label": t.tokens, "values": col(|b| b.tokens)},
            {"label": format!("{}, $", t.spend), "values": spend, "axis": "right"},
        ]
    })
    .to_string();
    n.chart_waits = serde_json::json!({
        "x": x,
        "series": [
            {"label": t.bot_429, "values": col(|b| b.bot_429)},
            {"label": t.flood_waits, "values": col(|b| b.flood_waits)},
        ]
    })
    .to_string();
    Ok(n)
}

#[derive(Template, WebTemplate)]
#[template(path = "dashboard.html")]
struct DashboardPage {
    b: Chrome,
    period: String,
    n: Numbers,
}

#[derive(Template, WebTemplate)]
#[template(path = "dashboard_live.html")]
struct DashboardLive {
    b: Chrome,
    n: Numbers,
}

fn period(q: &PeriodQuery) -> String {
    match q.period.as_deref() {
        Some("7d") => "7d".to_owned(),
        _ => "24h".to_owned(),
    }
}

/// `GET /`.
pub async fn dashboard(
    State(panel): State<Arc<Panel>>,
    ctx: Ctx,
    Query(q): Query<PeriodQuery>,
) -> PageResult {
    let period = period(&q);
    let n = numbers(&panel, &period, ctx.t).await?;
    Ok(DashboardPage {
        b: ctx.chrome("/"),
        period,
        n,
    }
    .into_response())
}

/// `GET /dashboard/live`: the numbers and charts alone, which the dashboard reloads every
/// 10 s (htmx).
pub async fn dashboard_live(
    State(panel): State<Arc<Panel>>,
    ctx: Ctx,
    Query(q): Query<PeriodQuery>,
) -> PageResult {
    let period = period(&q);
    let n = numbers(&panel, &period, ctx.t).await?;
    Ok(DashboardLive {
        b: ctx.chrome("/"),
        n,
    }
    .into_response())
}

// ---------------------------------------------------------------- posts

#[derive(Debug, Deserialize, Default)]
pub struct PostsQuery {
    source: Option<String>,
    category: Option<String>,
    status: Option<String>,
    from: Option<String>,
    to: Option<String>,
    q: Option<String>,
    before: Option<i64>,
}

/// Post statuses, as the filter offers them.
const STATUSES: [&str; 7] = [
    "filtered",
    "queued",
    "waiting",
    "not_job",
    "job",
    "fanned_out",
    "duplicate",
];

struct PostLine {
    row: PostListRow,
    snippet: String,
    when: String,
}

#[derive(Template, WebTemplate)]
#[template(path = "posts.html")]
struct PostsPage {
    b: Chrome,
    sources: Vec<(i64, String)>,
    categories: Vec<String>,
    statuses: &'static [&'static str],
    q: PostsQuery,
    posts: Vec<PostLine>,
    older: Option<String>,
}

fn day(s: Option<&str>, field: &str) -> Result<Option<DateTime<Utc>>, PanelError> {
    match s.map(str::trim).filter(|s| !s.is_empty()) {
        None => Ok(None),
        Some(s) => NaiveDate::parse_from_str(s, "%Y-%m-%d")
            .map(|d| d.and_hms_opt(0, 0, 0).map(|t| t.and_utc()))
            .map_err(|_| PanelError::BadInput(format!("{field}: use a date like 2026-12-31"))),
    }
}

fn nonempty(s: &Option<String>) -> Option<String> {
    s.as_deref()
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
}

/// `GET /posts`: search by source, category, status, dates and words, newest first.
pub async fn posts(
    State(panel): State<Arc<Panel>>,
    ctx: Ctx,
    Query(q): Query<PostsQuery>,
) -> PageResult {
    let store = panel.store()?;
    let source = match nonempty(&q.source) {
        None => None,
        Some(s) => Some(
            s.parse::<i64>()
                .map_err(|_| PanelError::BadInput("source: pick one from the list".into()))?,
        ),
    };
    let status = nonempty(&q.status);
    if let Some(s) = &status
        && !STATUSES.contains(&s.as_str())
    {
        return Err(PanelError::BadInput(format!("unknown status {s:?}")));
    }
    let filter = PostFilter {
        channel_id: source.map(jobwire_store::ChannelId::from),
        category: nonempty(&q.category),
        status,
        since: day(q.from.as_deref(), "from")?,
        until: day(q.to.as_deref(), "to")?.map(|d| d + Duration::days(1)),
        text: nonempty(&q.q),
        before: q.before.map(PostId::from),
        limit: 50,
    };
    let rows = store.search_posts(&filter).await?;
    let older = (rows.len() == 50)
        .then(|| rows.last().map(|r| r.id.get()))
        .flatten()
        .map(|last| {
            let mut s = url::form_urlencoded::Serializer::new(String::new());
            for (k, v) in [
                ("source", &q.source),
                ("category", &q.category),
                ("status", &q.status),
                ("from", &q.from),
                ("to", &q.to),
                ("q", &q.q),
            ] {
                if let Some(v) = v {
                    s.append_pair(k, v);
                }
            }
            s.append_pair("before", &last.to_string());
            s.finish()
        });
    let sources = store
        .channels()
        .await?
        .into_iter()
        .map(|c| (c.id.get(), c.handle))
        .collect();
    let posts = rows
        .into_iter()
        .map(|row| PostLine {
            snippet: snippet(&row.text, 140),
            when: when(&row.posted_at),
            row,
        })
        .collect();
    Ok(PostsPage {
        b: ctx.chrome("/posts"),
        sources,
        categories: panel.categories(),
        statuses: &STATUSES,
        q,
        posts,
        older,
    }
    .into_response())
}

struct TraceDelivery {
    row: DeliveryRow,
    ids: String,
}

#[derive(Template, WebTemplate)]
#[template(path = "post.html")]
struct PostPage {
    b: Chrome,
    post: PostRow,
    /// The post's link when it may be followed (http, https, tg); else it is shown as text.
    link: Option<String>,
    posted: String,
    received: String,
    rules: String,
    duplicate_of: Option<i64>,
    verdict: Option<ClassificationRecord>,
    route: &'static str,
    deliveries: Vec<TraceDelivery>,
    has_failed: bool,
    categories: Vec<String>,
}

/// A link the panel may render as `<a href>`: the rule the cards and intake follow
/// ([`jobwire_core::format::safe_link`]); any other (`javascript:`, `data:`, …) is shown as
/// text only.
pub(crate) fn followable_link(raw: &str) -> Option<String> {
    jobwire_core::format::safe_link(raw)
}

/// `GET /posts/{id}`: the post's trace, from the text to every delivery.
pub async fn post_trace(
    State(panel): State<Arc<Panel>>,
    ctx: Ctx,
    Path(id): Path<i64>,
) -> PageResult {
    let store = panel.store()?;
    let post = store
        .post(PostId::from(id))
        .await?
        .ok_or(PanelError::NotFound)?;
    let channel = store
        .channels()
        .await?
        .into_iter()
        .find(|c| c.id == post.channel_id);
    let rules = match channel {
        Some(c) => {
            let rules =
                jobwire_core::rules::ChannelRules::parse(c.include.iter(), c.exclude.iter())
                    .map(|r| jobwire_core::rules::CompiledRules::new(&r));
            match rules {
                Ok(r) => match r.check(&jobwire_core::normalize::normalize(&post.text)) {
                    jobwire_core::rules::RuleDecision::Pass => "passes the rules".to_owned(),
                    jobwire_core::rules::RuleDecision::Excluded { term } => {
                        format!("excluded by \u{201c}{term}\u{201d}")
                    }
                    jobwire_core::rules::RuleDecision::NoIncludeMatched => {
                        "no include term matched".to_owned()
                    }
                },
                Err(e) => format!("rules do not parse: {e}"),
            }
        }
        None => String::new(),
    };
    let duplicate_of = store.duplicate_of(post.id).await?.map(|p| p.get());
    let verdict = store.classification(post.id).await?;
    let route = match &verdict {
        Some(v)
            if v.prompt_version
                .as_deref()
                .is_some_and(|p| !p.starts_with("local")) =>
        {
            "LLM"
        }
        Some(_) => "local",
        None => "",
    };
    let deliveries: Vec<TraceDelivery> = store
        .deliveries_of_post(post.id)
        .await?
        .into_iter()
        .map(|row| TraceDelivery {
            ids: row
                .message_ids
                .iter()
                .map(i64::to_string)
                .collect::<Vec<_>>()
                .join(", "),
            row,
        })
        .collect();
    let has_failed = deliveries
        .iter()
        .any(|d: &TraceDelivery| d.row.status.as_str() == "failed");
    Ok(PostPage {
        b: ctx.chrome("/posts"),
        link: post.url.as_deref().and_then(followable_link),
        has_failed,
        posted: when(&post.posted_at),
        received: when(&post.received_at),
        post,
        rules,
        duplicate_of,
        verdict,
        route,
        deliveries,
        categories: panel.categories(),
    }
    .into_response())
}

/// The label fields of a form: `kind`, and `category` once per ticked box.
fn label_from_form(body: &Bytes) -> LabelBody {
    let kind = form_field(body, "kind").unwrap_or_default();
    let categories = url::form_urlencoded::parse(body)
        .filter(|(k, _)| k == "category")
        .map(|(_, v)| v.into_owned())
        .collect();
    LabelBody {
        is_job: kind == "job",
        kind,
        categories,
    }
}

fn checked(panel: &Panel, label: LabelBody) -> Result<LabelBody, PanelError> {
    label
        .validate(&panel.api)
        .map_err(|e| PanelError::BadInput(e.message().to_owned()))?;
    Ok(label)
}

/// `POST /posts/{id}/label`: an admin's label of a post becomes a training example.
pub async fn label_post(
    State(panel): State<Arc<Panel>>,
    Path(id): Path<i64>,
    body: Bytes,
) -> PageResult {
    let store = panel.store()?;
    let label = checked(&panel, label_from_form(&body))?;
    let post = store
        .post(PostId::from(id))
        .await?
        .ok_or(PanelError::NotFound)?;
    let detail = format!("{} {}", label.kind, label.categories.join(","));
    let example = label
        .into_example(Some(post.id), post.text, ExampleSource::Relabel)
        .map_err(|e| PanelError::BadInput(e.message().to_owned()))?;
    store.add_example(&example, Utc::now()).await?;
    let mut r = see_other(&format!("/posts/{id}?saved=1"));
    r.extensions_mut().insert(AuditNote {
        action: "post.label",
        target: format!("post {id}"),
        detail,
    });
    Ok(r)
}

// ---------------------------------------------------------------- reports

struct ReportLine {
    row: ReportRow,
    when: String,
    source: String,
    post_text: String,
}

#[derive(Template, WebTemplate)]
#[template(path = "reports.html")]
struct ReportsPage {
    b: Chrome,
    reports: Vec<ReportLine>,
    per_source: Vec<(String, u64)>,
    categories: Vec<String>,
}

/// `GET /reports`: pending reports, and reports per source over all time.
pub async fn reports(State(panel): State<Arc<Panel>>, ctx: Ctx) -> PageResult {
    let store = panel.store()?;
    let mut lines = Vec::new();
    for row in store.reports(Some(ReportStatus::Pending), 200).await? {
        let post = match row.post_id {
            Some(p) => store.post(p).await?,
            None => None,
        };
        lines.push(ReportLine {
            when: when(&row.created_at),
            source: post
                .as_ref()
                .map(|p| p.channel_handle.clone())
                .unwrap_or_default(),
            post_text: post.map(|p| snippet(&p.text, 300)).unwrap_or_default(),
            row,
        });
    }
    let mut per_source: BTreeMap<String, u64> = BTreeMap::new();
    for row in store.reports(None, 5000).await? {
        if let Some(p) = row.post_id
            && let Some(post) = store.post(p).await?
        {
            *per_source.entry(post.channel_handle).or_default() += 1;
        }
    }
    let mut per_source: Vec<(String, u64)> = per_source.into_iter().collect();
    per_source.sort_by_key(|b| std::cmp::Reverse(b.1));
    Ok(ReportsPage {
        b: ctx.chrome("/reports"),
        reports: lines,
        per_source,
        categories: panel.categories(),
    }
    .into_response())
}

/// `POST /reports/{id}/accept`: the report's label (form `kind`, `category`…) becomes a
/// training example; the report is closed.
pub async fn accept_report(
    State(panel): State<Arc<Panel>>,
    Path(id): Path<i64>,
    body: Bytes,
) -> PageResult {
    let store = panel.store()?;
    let label = checked(&panel, label_from_form(&body))?;
    let report = store
        .report(ReportId(id))
        .await?
        .ok_or(PanelError::NotFound)?;
    if report.status != ReportStatus::Pending {
        return Err(PanelError::BadInput(format!(
            "report {id} was {} already",
            report.status.as_str()
        )));
    }
    let text = match report.post_id {
        Some(p) => store.post(p).await?.map(|p| p.text),
        None => None,
    }
    .filter(|t| !t.trim().is_empty())
    .unwrap_or_else(|| report.text.clone());
    let detail = format!("{} {}", label.kind, label.categories.join(","));
    let example = label
        .into_example(report.post_id, text, ExampleSource::Report)
        .map_err(|e| PanelError::BadInput(e.message().to_owned()))?;
    store
        .decide_report(ReportId(id), Some(&example), Utc::now())
        .await?;
    let mut r = see_other("/reports");
    r.extensions_mut().insert(AuditNote {
        action: "report.accept",
        target: format!("report {id}"),
        detail,
    });
    Ok(r)
}

/// `POST /reports/{id}/dismiss`.
pub async fn dismiss_report(State(panel): State<Arc<Panel>>, Path(id): Path<i64>) -> PageResult {
    let store = panel.store()?;
    let report = store
        .report(ReportId(id))
        .await?
        .ok_or(PanelError::NotFound)?;
    if report.status != ReportStatus::Pending {
        return Err(PanelError::BadInput(format!(
            "report {id} was {} already",
            report.status.as_str()
        )));
    }
    store.decide_report(ReportId(id), None, Utc::now()).await?;
    let mut r = see_other("/reports");
    r.extensions_mut().insert(AuditNote {
        action: "report.dismiss",
        target: format!("report {id}"),
        detail: String::new(),
    });
    Ok(r)
}

// ---------------------------------------------------------------- subscribers

#[derive(Debug, Deserialize, Default)]
pub struct SearchQuery {
    q: Option<String>,
}

struct SubscriberLine {
    row: SubscriberRow,
    categories: String,
    access: String,
    blocked_bots: String,
}

#[derive(Template, WebTemplate)]
#[template(path = "subscribers.html")]
struct SubscribersPage {
    b: Chrome,
    q: String,
    subscribers: Vec<SubscriberLine>,
    total: usize,
}

/// `GET /subscribers[?q=]`: by chat id or name; their categories, access and blocked bots.
pub async fn subscribers(
    State(panel): State<Arc<Panel>>,
    ctx: Ctx,
    Query(q): Query<SearchQuery>,
) -> PageResult {
    let store = panel.store()?;
    let needle = q.q.clone().unwrap_or_default().trim().to_lowercase();
    let all = store.subscribers().await?;
    let total = all.len();
    let now = Utc::now();
    let mut access: BTreeMap<i64, String> = BTreeMap::new();
    for p in store.access_periods_ending_after(now).await? {
        if p.revoked_at.is_none() {
            access.insert(
                p.chat_id,
                format!("{} {}", p.plan_id, p.ends_at.format("%Y-%m-%d")),
            );
        }
    }
    let mut blocks: BTreeMap<i64, Vec<String>> = BTreeMap::new();
    for b in store.bot_blocks(None).await? {
        blocks.entry(b.chat_id).or_default().push(b.bot);
    }
    let subscribers = all
        .into_iter()
        .filter(|s| {
            needle.is_empty()
                || s.chat_id.to_string().contains(&needle)
                || s.name
                    .as_deref()
                    .is_some_and(|n| n.to_lowercase().contains(&needle))
        })
        .take(200)
        .map(|row| SubscriberLine {
            categories: row
                .categories
                .iter()
                .map(|c| c.as_str())
                .collect::<Vec<_>>()
                .join(", "),
            access: access.get(&row.chat_id).cloned().unwrap_or_default(),
            blocked_bots: blocks
                .get(&row.chat_id)
                .map(|b| b.join(", "))
                .unwrap_or_default(),
            row,
        })
        .collect();
    Ok(SubscribersPage {
        b: ctx.chrome("/subscribers"),
        q: q.q.unwrap_or_default(),
        subscribers,
        total,
    }
    .into_response())
}

// ---------------------------------------------------------------- dead letters, audit

struct DeadLine {
    row: DeadLetterRow,
    when: String,
    payload: String,
}

#[derive(Template, WebTemplate)]
#[template(path = "dead_letters.html")]
struct DeadLettersPage {
    b: Chrome,
    letters: Vec<DeadLine>,
}

/// `GET /dead-letters`: what failed for good, newest first.
pub async fn dead_letters(State(panel): State<Arc<Panel>>, ctx: Ctx) -> PageResult {
    let store = panel.store()?;
    let letters = store
        .dead_letters(200)
        .await?
        .into_iter()
        .map(|row| DeadLine {
            when: when(&row.created_at),
            payload: snippet(&row.payload, 400),
            row,
        })
        .collect();
    Ok(DeadLettersPage {
        b: ctx.chrome("/dead-letters"),
        letters,
    }
    .into_response())
}

struct AuditLine {
    row: AuditEntry,
    when: String,
}

#[derive(Template, WebTemplate)]
#[template(path = "audit.html")]
struct AuditPage {
    b: Chrome,
    entries: Vec<AuditLine>,
    older: Option<i64>,
}

#[derive(Debug, Deserialize, Default)]
pub struct BeforeQuery {
    before: Option<i64>,
}

/// `GET /audit[?before=]`: every change, newest first.
pub async fn audit(
    State(panel): State<Arc<Panel>>,
    ctx: Ctx,
    Query(q): Query<BeforeQuery>,
) -> PageResult {
    let store = panel.store()?;
    let rows = store.audit_log(100, q.before).await?;
    let older = (rows.len() == 100)
        .then(|| rows.last().map(|r| r.id))
        .flatten();
    let entries = rows
        .into_iter()
        .map(|row| AuditLine {
            when: row.at.format("%Y-%m-%d %H:%M:%S").to_string(),
            row,
        })
        .collect();
    Ok(AuditPage {
        b: ctx.chrome("/audit"),
        entries,
        older,
    }
    .into_response())
}

// ---------------------------------------------------------------- actions

/// `POST /posts/{id}/reclassify`: the post goes back to the classifier (whichever process
/// runs it picks it up at its next scheduler tick).
pub async fn reclassify_post(State(panel): State<Arc<Panel>>, Path(id): Path<i64>) -> PageResult {
    let store = panel.store()?;
    let post = store
        .post(PostId::from(id))
        .await?
        .ok_or(PanelError::NotFound)?;
    if !store.requeue_post(post.id).await? {
        return Err(PanelError::BadInput(format!(
            "post {id} is a re-post of an earlier one; classify that one instead"
        )));
    }
    let mut r = see_other(&format!("/posts/{id}?requeued=1"));
    r.extensions_mut().insert(AuditNote {
        action: "post.reclassify",
        target: format!("post {id}"),
        detail: format!("was {}", post.status.as_str()),
    });
    Ok(r)
}

/// `POST /posts/{id}/redeliver`: the job's failed deliveries are sent again (sent ones are
/// not sent twice; blocked chats stay blocked).
pub async fn redeliver_post(State(panel): State<Arc<Panel>>, Path(id): Path<i64>) -> PageResult {
    let store = panel.store()?;
    let post = store
        .post(PostId::from(id))
        .await?
        .ok_or(PanelError::NotFound)?;
    let n = store.retry_failed_deliveries(post.id).await?;
    if n == 0 {
        return Err(PanelError::BadInput(format!(
            "post {id} has no failed deliveries to send again"
        )));
    }
    let mut r = see_other(&format!("/posts/{id}?redelivered={n}"));
    r.extensions_mut().insert(AuditNote {
        action: "post.redeliver",
        target: format!("post {id}"),
        detail: format!("{n} deliveries"),
    });
    Ok(r)
}

/// What a dead letter's payload names (the queue's wire messages).
#[derive(Debug, Deserialize)]
struct Payload {
    post_id: Option<i64>,
    delivery_id: Option<i64>,
}

/// `POST /dead-letters/{id}/retry`: puts its work back where the scheduler publishes it
/// again (a post to classify, a job to fan out, a delivery to send), then forgets it.
pub async fn retry_dead_letter(State(panel): State<Arc<Panel>>, Path(id): Path<i64>) -> PageResult {
    let store = panel.store()?;
    let letter = store.dead_letter(id).await?.ok_or(PanelError::NotFound)?;
    let payload: Payload = serde_json::from_str(&letter.payload).map_err(|e| {
        PanelError::BadInput(format!(
            "dead letter {id} holds no message jobwire can read: {e}"
        ))
    })?;
    let done = match (letter.topic.as_str(), payload.post_id, payload.delivery_id) {
        (_, _, Some(d)) => {
            store
                .rewind_delivery(jobwire_store::DeliveryId::from(d))
                .await?
        }
        (topic, Some(p), None) if topic.ends_with("fanout") => {
            store.rewind_fanout(PostId::from(p)).await?
        }
        (_, Some(p), None) => store.requeue_post(PostId::from(p)).await?,
        _ => {
            return Err(PanelError::BadInput(format!(
                "dead letter {id} ({}) names no post or delivery",
                letter.topic
            )));
        }
    };
    if !done {
        return Err(PanelError::BadInput(format!(
            "dead letter {id}: its work is done already or cannot be sent again; discard it"
        )));
    }
    store.delete_dead_letter(id).await?;
    let mut r = see_other("/dead-letters");
    r.extensions_mut().insert(AuditNote {
        action: "dead_letter.retry",
        target: format!("dead letter {id}"),
        detail: format!("{} {}", letter.topic, letter.payload),
    });
    Ok(r)
}

/// `POST /dead-letters/{id}/discard`.
pub async fn discard_dead_letter(
    State(panel): State<Arc<Panel>>,
    Path(id): Path<i64>,
) -> PageResult {
    let store = panel.store()?;
    let letter = store.dead_letter(id).await?.ok_or(PanelError::NotFound)?;
    store.delete_dead_letter(id).await?;
    let mut r = see_other("/dead-letters");
    r.extensions_mut().insert(AuditNote {
        action: "dead_letter.discard",
        target: format!("dead letter {id}"),
        detail: format!("{}: {}", letter.topic, letter.reason),
    });
    Ok(r)
}

// ---------------------------------------------------------------- one subscriber

struct PeriodLine {
    plan: String,
    from: String,
    to: String,
    state: &'static str,
    charge: String,
}

struct LedgerLine {
    row: jobwire_store::LedgerRow,
    when: String,
    refundable: bool,
}

#[derive(Template, WebTemplate)]
#[template(path = "subscriber.html")]
struct SubscriberPage {
    b: Chrome,
    sub: SubscriberRow,
    categories: String,
    periods: Vec<PeriodLine>,
    ledger: Vec<LedgerLine>,
    blocked_bots: Vec<String>,
    sent_7d: u64,
    error: Option<String>,
}

async fn subscriber_page(
    panel: &Panel,
    ctx: &Ctx,
    chat_id: i64,
    error: Option<String>,
) -> PageResult {
    let store = panel.store()?;
    let sub = store
        .subscriber_by_chat(chat_id)
        .await?
        .ok_or(PanelError::NotFound)?;
    let now = Utc::now();
    let periods = store
        .access_periods(chat_id)
        .await?
        .into_iter()
        .rev()
        .map(|p| PeriodLine {
            state: if p.revoked_at.is_some() {
                "revoked"
            } else if p.ends_at <= now {
                "ended"
            } else if p.starts_at > now {
                "next"
            } else {
                "current"
            },
            plan: if p.trial {
                format!("{} (trial)", p.plan_id)
            } else {
                p.plan_id.clone()
            },
            from: when(&p.starts_at),
            to: when(&p.ends_at),
            charge: p.charge_id.unwrap_or_default(),
        })
        .collect();
    let all = store.ledger(Some(chat_id), 100).await?;
    let refunded: std::collections::HashSet<String> = all
        .iter()
        .filter(|r| r.kind != jobwire_store::LedgerKind::Payment)
        .map(|r| r.charge_id.clone())
        .collect();
    let ledger = all
        .into_iter()
        .map(|row| LedgerLine {
            when: when(&row.created_at),
            refundable: row.kind == jobwire_store::LedgerKind::Payment
                && row.currency == jobwire_core::billing::STARS
                && !refunded.contains(&row.charge_id),
            row,
        })
        .collect();
    let blocked_bots = store
        .bot_blocks(None)
        .await?
        .into_iter()
        .filter(|b| b.chat_id == chat_id)
        .map(|b| b.bot)
        .collect();
    let sent_7d = store
        .sent_to_chat_since(chat_id, &[now - Duration::days(7)])
        .await?
        .first()
        .copied()
        .unwrap_or(0);
    let mut r = SubscriberPage {
        b: ctx.chrome("/subscribers"),
        categories: sub
            .categories
            .iter()
            .map(|c| c.as_str())
            .collect::<Vec<_>>()
            .join(", "),
        sub,
        periods,
        ledger,
        blocked_bots,
        sent_7d,
        error: error.clone(),
    }
    .into_response();
    if error.is_some() {
        *r.status_mut() = axum::http::StatusCode::UNPROCESSABLE_ENTITY;
    }
    Ok(r)
}

/// `GET /subscribers/{chat_id}`: categories, filters, access periods, payments and
/// refunds, blocked bots, deliveries of the last 7 days.
pub async fn subscriber(
    State(panel): State<Arc<Panel>>,
    ctx: Ctx,
    Path(chat_id): Path<i64>,
) -> PageResult {
    subscriber_page(&panel, &ctx, chat_id, None).await
}

/// `POST /subscribers/{chat_id}/extend` (`days`, 1–366).
pub async fn extend_subscription(
    State(panel): State<Arc<Panel>>,
    ctx: Ctx,
    Path(chat_id): Path<i64>,
    body: Bytes,
) -> PageResult {
    let store = panel.store()?;
    store
        .subscriber_by_chat(chat_id)
        .await?
        .ok_or(PanelError::NotFound)?;
    let raw = form_field(&body, "days").unwrap_or_default();
    let days = match raw.trim().parse::<u32>() {
        Ok(d) if (1..=366).contains(&d) => d,
        _ => {
            let e = format!("days: a whole number from 1 to 366 (got {:?})", raw.trim());
            return subscriber_page(&panel, &ctx, chat_id, Some(e)).await;
        }
    };
    let period = store.extend_access(chat_id, days, Utc::now()).await?;
    let mut r = see_other(&format!("/subscribers/{chat_id}"));
    r.extensions_mut().insert(AuditNote {
        action: "subscription.extend",
        target: format!("chat {chat_id}"),
        detail: format!(
            "+{days} days, {} until {}",
            period.plan_id,
            when(&period.ends_at)
        ),
    });
    Ok(r)
}

/// `POST /subscribers/{chat_id}/end`: access ends now.
pub async fn end_subscription(
    State(panel): State<Arc<Panel>>,
    ctx: Ctx,
    Path(chat_id): Path<i64>,
) -> PageResult {
    let store = panel.store()?;
    let n = store.end_access(chat_id, Utc::now()).await?;
    if n == 0 {
        let e = "there is no current or coming period to end".to_owned();
        return subscriber_page(&panel, &ctx, chat_id, Some(e)).await;
    }
    let mut r = see_other(&format!("/subscribers/{chat_id}"));
    r.extensions_mut().insert(AuditNote {
        action: "subscription.end",
        target: format!("chat {chat_id}"),
        detail: format!("{n} periods revoked"),
    });
    Ok(r)
}

/// `POST /subscribers/{chat_id}/refund` (`charge_id`): refunds a Stars payment through
/// the main bot; the period it bought is revoked.
pub async fn refund_payment(
    State(panel): State<Arc<Panel>>,
    ctx: Ctx,
    Path(chat_id): Path<i64>,
    body: Bytes,
) -> PageResult {
    let charge = form_field(&body, "charge_id").unwrap_or_default();
    match crate::api::refund(&panel.api, charge.trim()).await {
        Ok((_, paid)) => {
            // The payment's chat, whatever chat the URL named.
            let mut r = see_other(&format!("/subscribers/{}", paid.chat_id));
            r.extensions_mut().insert(AuditNote {
                action: "payment.refund",
                target: format!("chat {}", paid.chat_id),
                detail: format!("{} {} {}", charge.trim(), paid.amount, paid.currency),
            });
            Ok(r)
        }
        Err(e) => subscriber_page(&panel, &ctx, chat_id, Some(e.message().to_owned())).await,
    }
}
