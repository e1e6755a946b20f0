//! Subscribers (`GET /subscribers`) and one subscriber (`GET /subscribers/{chat_id}`):
//! categories, access periods, payments and refunds, blocked bots; extending or ending
//! access, refunding a payment.

use std::collections::BTreeMap;
use std::sync::Arc;

use askama::Template;
use askama_web::WebTemplate;
use axum::body::Bytes;
use axum::extract::{Path, Query, State};
use axum::response::IntoResponse;
use chrono::{Duration, Utc};
use jobwire_store::SubscriberRow;
use serde::Deserialize;

use super::{Chrome, Ctx, PageResult, Panel, PanelError, done, form_field, when};
use crate::ops::{ChargeId, ChatId, OpError};

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
    let store = panel.store();
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
    let store = panel.store();
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
    Path(ChatId(chat_id)): Path<ChatId>,
) -> PageResult {
    subscriber_page(&panel, &ctx, chat_id, None).await
}

/// `POST /subscribers/{chat_id}/extend` (`days`, 1–366).
pub async fn extend_subscription(
    State(panel): State<Arc<Panel>>,
    ctx: Ctx,
    Path(ChatId(chat_id)): Path<ChatId>,
    body: Bytes,
) -> PageResult {
    let raw = form_field(&body, "days").unwrap_or_default();
    let result = match raw.trim().parse::<u32>() {
        Ok(days) => {
            panel
                .state
                .extend_access(&ctx.actor(), ChatId(chat_id), days)
                .await
        }
        Err(_) => Err(OpError::BadInput(format!(
            "days: a whole number from 1 to 366 (got {:?})",
            raw.trim()
        ))),
    };
    match result {
        Ok(_) => Ok(done(&format!("/subscribers/{chat_id}"))),
        Err(OpError::NotFound(_)) => Err(PanelError::NotFound),
        Err(e) => subscriber_page(&panel, &ctx, chat_id, Some(e.to_string())).await,
    }
}

/// `POST /subscribers/{chat_id}/end`: access ends now.
pub async fn end_subscription(
    State(panel): State<Arc<Panel>>,
    ctx: Ctx,
    Path(ChatId(chat_id)): Path<ChatId>,
) -> PageResult {
    match panel.state.end_access(&ctx.actor(), ChatId(chat_id)).await {
        Ok(_) => Ok(done(&format!("/subscribers/{chat_id}"))),
        Err(OpError::Store(e)) => Err(e.into()),
        Err(e) => subscriber_page(&panel, &ctx, chat_id, Some(e.to_string())).await,
    }
}

/// `POST /subscribers/{chat_id}/refund` (`charge_id`, `reason`): refunds a Stars payment
/// through the main bot; the period it bought is revoked.
pub async fn refund_payment(
    State(panel): State<Arc<Panel>>,
    ctx: Ctx,
    Path(ChatId(chat_id)): Path<ChatId>,
    body: Bytes,
) -> PageResult {
    let charge = form_field(&body, "charge_id").unwrap_or_default();
    let reason = form_field(&body, "reason");
    match panel
        .state
        .refund(&ctx.actor(), &ChargeId(charge), reason.as_deref())
        .await
    {
        // The payment's chat, whatever chat the URL named.
        Ok(done_) => Ok(done(&format!("/subscribers/{}", done_.payment.chat_id))),
        Err(OpError::Store(e)) => Err(e.into()),
        Err(e) => subscriber_page(&panel, &ctx, chat_id, Some(e.to_string())).await,
    }
}
