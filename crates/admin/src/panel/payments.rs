//! Payments (`GET /payments`, admins only): the ledger filtered by user, plan, kind and
//! date; revenue per plan and per month (payments less refunds, per currency); refunds of
//! Stars payments with a reason; when reconciliation with Telegram last ran and what it
//! found (its counts, and the ledger rows reconciliation added).

use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;

use askama::Template;
use askama_web::WebTemplate;
use axum::body::Bytes;
use axum::extract::{Path, Query, State};
use axum::response::IntoResponse;
use chrono::{Duration, NaiveDate};
use jobwire_store::{LedgerKind, LedgerRow, LedgerSource};
use serde::Deserialize;

use super::{Chrome, Ctx, PageResult, Panel, PanelError, done, form_field, when};
use crate::ops::{ChargeId, OpError};

/// Ledger rows read for the page and its sums (newest first).
const READ_ROWS: u32 = 10_000;
/// Rows of the filtered ledger shown.
const SHOWN_ROWS: usize = 200;

#[derive(Debug, Default, Deserialize)]
pub struct LedgerQuery {
    chat: Option<String>,
    plan: Option<String>,
    kind: Option<String>,
    from: Option<String>,
    to: Option<String>,
}

struct Line {
    row: LedgerRow,
    when: String,
    refundable: bool,
}

#[derive(Template, WebTemplate)]
#[template(path = "payments.html")]
struct PaymentsPage {
    b: Chrome,
    q: LedgerQuery,
    plans: Vec<String>,
    lines: Vec<Line>,
    /// `(plan, "250 XTR, …")`.
    per_plan: Vec<(String, String)>,
    /// `("2026-12", "250 XTR, …")`, newest first.
    per_month: Vec<(String, String)>,
    reconciled: Vec<Line>,
    /// The last reconciliation: `(when, transactions read, payments and refunds found)`;
    /// `None` before the first.
    last_run: Option<(String, u64, u64)>,
}

fn text(s: &Option<String>) -> Option<&str> {
    s.as_deref().map(str::trim).filter(|s| !s.is_empty())
}

fn day(s: Option<&str>, field: &str) -> Result<Option<NaiveDate>, PanelError> {
    s.map(|s| {
        NaiveDate::parse_from_str(s, "%Y-%m-%d")
            .map_err(|_| PanelError::BadInput(format!("{field}: use a date like 2026-12-31")))
    })
    .transpose()
}

/// `amount currency` sums, `250 XTR, 10 RUB`.
fn sums(map: &BTreeMap<String, i64>) -> String {
    map.iter()
        .map(|(cur, n)| format!("{n} {cur}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// `GET /payments[?chat=&plan=&kind=&from=&to=]`.
pub async fn page(
    State(panel): State<Arc<Panel>>,
    ctx: Ctx,
    Query(q): Query<LedgerQuery>,
) -> PageResult {
    page_with(&panel, &ctx, q, None).await
}

async fn page_with(panel: &Panel, ctx: &Ctx, q: LedgerQuery, error: Option<String>) -> PageResult {
    let chat = match text(&q.chat) {
        None => None,
        Some(c) => Some(
            c.parse::<i64>()
                .map_err(|_| PanelError::BadInput("user: a chat id, a whole number".to_owned()))?,
        ),
    };
    let kind =
        match text(&q.kind) {
            None => None,
            Some(k) => Some(LedgerKind::parse(k).ok_or_else(|| {
                PanelError::BadInput("kind: payment, refund or refunded".to_owned())
            })?),
        };
    let from = day(text(&q.from), "from")?;
    let to = day(text(&q.to), "to")?;
    let rows = panel.store().ledger(None, READ_ROWS).await?;
    let refunded: HashSet<&str> = rows
        .iter()
        .filter(|r| r.kind != LedgerKind::Payment)
        .map(|r| r.charge_id.as_str())
        .collect();
    let line = |row: &LedgerRow| Line {
        when: when(&row.created_at),
        refundable: row.kind == LedgerKind::Payment
            && row.currency == jobwire_core::billing::STARS
            && !refunded.contains(row.charge_id.as_str()),
        row: row.clone(),
    };
    let plan = text(&q.plan);
    let lines = rows
        .iter()
        .filter(|r| chat.is_none_or(|c| r.chat_id == c))
        .filter(|r| plan.is_none_or(|p| r.plan_id.as_deref() == Some(p)))
        .filter(|r| kind.is_none_or(|k| r.kind == k))
        .filter(|r| from.is_none_or(|d| r.created_at.date_naive() >= d))
        .filter(|r| to.is_none_or(|d| r.created_at.date_naive() < d + Duration::days(1)))
        .take(SHOWN_ROWS)
        .map(line)
        .collect();
    let mut per_plan: BTreeMap<String, BTreeMap<String, i64>> = BTreeMap::new();
    let mut per_month: BTreeMap<String, BTreeMap<String, i64>> = BTreeMap::new();
    for r in &rows {
        let signed = if r.kind == LedgerKind::Payment {
            r.amount
        } else {
            -r.amount
        };
        let plan = r.plan_id.clone().unwrap_or_else(|| "–".to_owned());
        *per_plan
            .entry(plan)
            .or_default()
            .entry(r.currency.clone())
            .or_default() += signed;
        *per_month
            .entry(r.created_at.format("%Y-%m").to_string())
            .or_default()
            .entry(r.currency.clone())
            .or_default() += signed;
    }
    let plans = per_plan.keys().filter(|p| *p != "–").cloned().collect();
    let reconciled = rows
        .iter()
        .filter(|r| r.source == LedgerSource::Reconciliation)
        .take(20)
        .map(line)
        .collect();
    let last_run = panel
        .store()
        .last_reconciliation()
        .await?
        .map(|run| (when(&run.finished_at), run.transactions, run.found()));
    let mut b = ctx.chrome("/payments");
    let failed = error.is_some();
    b.flash_error = error;
    let mut r = PaymentsPage {
        b,
        q,
        plans,
        lines,
        per_plan: per_plan.iter().map(|(p, m)| (p.clone(), sums(m))).collect(),
        per_month: per_month
            .iter()
            .rev()
            .map(|(m, s)| (m.clone(), sums(s)))
            .collect(),
        reconciled,
        last_run,
    }
    .into_response();
    if failed {
        *r.status_mut() = axum::http::StatusCode::UNPROCESSABLE_ENTITY;
    }
    Ok(r)
}

/// `POST /payments/{charge_id}/refund` (`reason`): refunds a Stars payment through the
/// main bot; the access it bought ends.
pub async fn refund(
    State(panel): State<Arc<Panel>>,
    ctx: Ctx,
    Path(charge): Path<String>,
    body: Bytes,
) -> PageResult {
    let reason = form_field(&body, "reason");
    match panel
        .state
        .refund(&ctx.actor(), &ChargeId(charge), reason.as_deref())
        .await
    {
        Ok(_) => Ok(done("/payments")),
        Err(OpError::Store(e)) => Err(e.into()),
        Err(e) => page_with(&panel, &ctx, LedgerQuery::default(), Some(e.to_string())).await,
    }
}
