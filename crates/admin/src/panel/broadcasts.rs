//! Broadcasts (`GET /broadcasts`, admins only): write a message (Telegram HTML, checked by
//! Telegram's parser), choose the audience (language, plan, category, active in the last N
//! days), preview what its readers see (the message rendered as Telegram shows it) and how
//! many chats it reaches, send it; watch each broadcast's progress
//! (sent, blocked, failed, left; refreshed every 2 s) and pause, resume or stop it. The
//! send stage sends them and survives restarts (`jobwire_deliver::broadcast`).

use std::sync::Arc;

use askama::Template;
use askama_web::WebTemplate;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::response::IntoResponse;
use chrono::Utc;
use jobwire_core::CategorySlug;
use jobwire_store::{BroadcastRow, BroadcastStatus};

use super::{Chrome, Ctx, PageResult, Panel, PanelError, done, form_field, snippet, when};
use crate::broadcasts::Audience;
use crate::ops::{BroadcastAction, BroadcastId, OpError};

/// Broadcasts listed.
const LISTED: u32 = 50;

/// One broadcast as the list shows it.
struct Line {
    id: jobwire_store::BroadcastId,
    status: &'static str,
    text: String,
    audience: String,
    when: String,
    sent: u64,
    blocked: u64,
    failed: u64,
    left: u64,
    total: u64,
    can_pause: bool,
    can_resume: bool,
    can_stop: bool,
}

/// The form as it was sent (kept when the page is shown again).
#[derive(Debug, Default)]
struct Draft {
    text: String,
    language: String,
    plan: String,
    category: String,
    /// Days, as typed (empty: anyone).
    active_days: String,
}

/// A preview: the message as its readers see it (page HTML from
/// [`crate::tg_preview::render`], safe to insert) and the chats it reaches.
struct Preview {
    html: String,
    reach: usize,
}

#[derive(Template, WebTemplate)]
#[template(path = "broadcasts.html")]
struct BroadcastsPage {
    b: Chrome,
    draft: Draft,
    preview: Option<Preview>,
    plans: Vec<String>,
    categories: Vec<String>,
    available: bool,
    lines: Vec<Line>,
}

#[derive(Template, WebTemplate)]
#[template(path = "broadcasts_live.html")]
struct BroadcastsLive {
    b: Chrome,
    lines: Vec<Line>,
}

fn line(b: &BroadcastRow) -> Line {
    let p = &b.progress;
    Line {
        id: b.id,
        status: b.status.as_str(),
        text: snippet(&b.text, 120),
        audience: ["language", "plan", "category", "active_days"]
            .iter()
            .filter_map(|k| {
                let v = b.audience.get(k)?;
                v.as_str()
                    .map(str::to_owned)
                    .or_else(|| v.as_u64().map(|n| n.to_string()))
                    .map(|v| format!("{k} {v}"))
            })
            .collect::<Vec<_>>()
            .join(", "),
        when: when(&b.created_at),
        sent: p.sent,
        blocked: p.blocked,
        failed: p.failed + p.unknown,
        left: p.remaining(),
        total: p.total(),
        can_pause: b.status == BroadcastStatus::Running,
        can_resume: b.status == BroadcastStatus::Paused,
        can_stop: matches!(b.status, BroadcastStatus::Running | BroadcastStatus::Paused),
    }
}

async fn lines(panel: &Panel) -> Result<Vec<Line>, PanelError> {
    Ok(panel
        .store()
        .broadcasts(LISTED, Utc::now())
        .await?
        .iter()
        .map(line)
        .collect())
}

async fn page_with(
    panel: &Panel,
    ctx: &Ctx,
    draft: Draft,
    preview: Option<Preview>,
    error: Option<String>,
) -> PageResult {
    let setup = panel.state.broadcast_setup();
    let mut b = ctx.chrome("/broadcasts");
    let failed = error.is_some();
    b.flash_error = error;
    let mut r = BroadcastsPage {
        b,
        draft,
        preview,
        plans: setup.map(|s| s.plans.clone()).unwrap_or_default(),
        categories: panel.categories(),
        available: setup.is_some(),
        lines: lines(panel).await?,
    }
    .into_response();
    if failed {
        *r.status_mut() = axum::http::StatusCode::UNPROCESSABLE_ENTITY;
    }
    Ok(r)
}

/// `GET /broadcasts`.
pub async fn page(State(panel): State<Arc<Panel>>, ctx: Ctx) -> PageResult {
    page_with(&panel, &ctx, Draft::default(), None, None).await
}

/// `GET /broadcasts/live`: the list alone, which the page reloads every 2 s (htmx).
pub async fn live(State(panel): State<Arc<Panel>>, ctx: Ctx) -> PageResult {
    Ok(BroadcastsLive {
        b: ctx.chrome("/broadcasts"),
        lines: lines(&panel).await?,
    }
    .into_response())
}

fn draft_of(body: &Bytes) -> Draft {
    let field = |k: &str| form_field(body, k).unwrap_or_default();
    Draft {
        text: field("text"),
        language: field("language").trim().to_owned(),
        plan: field("plan").trim().to_owned(),
        category: field("category").trim().to_owned(),
        active_days: field("active_days").trim().to_owned(),
    }
}

fn audience(d: &Draft) -> Result<Audience, OpError> {
    let some = |s: &str| (!s.is_empty()).then(|| s.to_owned());
    Ok(Audience {
        category: some(&d.category)
            .map(|c| CategorySlug::parse(&c))
            .transpose()
            .map_err(|e| OpError::BadInput(e.to_string()))?,
        plan: some(&d.plan),
        language: some(&d.language),
        active_days: some(&d.active_days)
            .map(|n| {
                n.parse::<u32>().map_err(|_| {
                    OpError::BadInput(format!(
                        "active in the last N days: a whole number of days, not {n:?}"
                    ))
                })
            })
            .transpose()?,
    })
}

/// `POST /broadcasts/preview`: the checked message as its readers see it and its reach;
/// nothing is sent.
pub async fn preview(State(panel): State<Arc<Panel>>, ctx: Ctx, body: Bytes) -> PageResult {
    let draft = draft_of(&body);
    let result = match audience(&draft) {
        Ok(a) => panel.state.preview_broadcast(&draft.text, &a).await,
        Err(e) => Err(e),
    };
    match result {
        Ok((html, reach)) => {
            page_with(&panel, &ctx, draft, Some(Preview { html, reach }), None).await
        }
        Err(OpError::Store(e)) => Err(e.into()),
        Err(e) => page_with(&panel, &ctx, draft, None, Some(e.to_string())).await,
    }
}

/// `POST /broadcasts`: checks the message and the audience and starts the broadcast.
pub async fn send(State(panel): State<Arc<Panel>>, ctx: Ctx, body: Bytes) -> PageResult {
    let draft = draft_of(&body);
    let result = match audience(&draft) {
        Ok(a) => {
            panel
                .state
                .start_broadcast(&ctx.actor(), &draft.text, &a)
                .await
        }
        Err(e) => Err(e),
    };
    match result {
        Ok(_) => Ok(done("/broadcasts")),
        Err(OpError::Store(e)) => Err(e.into()),
        Err(e) => page_with(&panel, &ctx, draft, None, Some(e.to_string())).await,
    }
}

/// `POST /broadcasts/{id}/pause|resume|cancel`.
pub async fn steer(
    State(panel): State<Arc<Panel>>,
    ctx: Ctx,
    Path((id, action)): Path<(BroadcastId, String)>,
) -> PageResult {
    let action = BroadcastAction::parse(&action).ok_or(PanelError::NotFound)?;
    panel
        .state
        .steer_broadcast(&ctx.actor(), id, action)
        .await?;
    Ok(done("/broadcasts"))
}
