//! The dashboard (`GET /`) and its live part (`GET /dashboard/live`, reloaded every 10 s):
//! posts, jobs, LLM use, deliveries, queues, Telegram's waits, subscribers and revenue (the
//! revenue and trials for admins only).

use std::sync::Arc;

use askama::Template;
use askama_web::WebTemplate;
use axum::extract::{Query, State};
use axum::response::IntoResponse;
use chrono::{Duration, Utc};
use jobwire_store::WaitKind;
use serde::Deserialize;

use super::{Chrome, Ctx, PageResult, Panel, PanelError, when};
use crate::i18n::Texts;

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
    let store = panel.store();
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
