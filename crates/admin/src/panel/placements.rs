//! Placements (`GET /placements`): employers' paid posts waiting for approval, oldest
//! first, each as it will be posted, with its employer, paid categories and amount;
//! approving, or refusing with a reason the employer reads (the main bot refunds it); the
//! history with each placement's reach and refund.

use std::sync::Arc;

use askama::Template;
use askama_web::WebTemplate;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::response::IntoResponse;
use jobwire_core::CategorySlug;
use jobwire_store::{PlacementRow, PlacementStatus};

use super::{Chrome, Ctx, PageResult, Panel, done, form_field, when};
use crate::ops::{Decision, PlacementId};

/// One placement waiting for a decision.
struct Waiting {
    id: i64,
    chat_id: i64,
    categories: String,
    amount: String,
    paid: String,
    /// The post's text as it will be published (shown as text).
    text: String,
}

/// One placement of the history.
struct Past {
    id: i64,
    chat_id: i64,
    title: String,
    status: &'static str,
    reason: String,
    amount: String,
    /// Subscribers it was sent to (published ones).
    reach: String,
    refunded: String,
    decided_by: String,
    post: Option<i64>,
}

#[derive(Template, WebTemplate)]
#[template(path = "placements.html")]
struct PlacementsPage {
    b: Chrome,
    queue: Vec<Waiting>,
    history: Vec<Past>,
}

fn categories(p: &PlacementRow) -> String {
    p.draft
        .categories
        .iter()
        .map(CategorySlug::as_str)
        .collect::<Vec<_>>()
        .join(", ")
}

fn amount(p: &PlacementRow) -> String {
    p.stars.map(|s| format!("{s} XTR")).unwrap_or_default()
}

/// The text the placement is published with.
fn text(p: &PlacementRow) -> String {
    let d = &p.draft;
    jobwire_core::placement::compose(
        d.title.as_deref().unwrap_or_default(),
        d.body.as_deref().unwrap_or_default(),
        d.budget.as_deref().filter(|b| !b.is_empty()),
        d.contact.as_deref().unwrap_or_default(),
        d.lang == "en",
    )
}

/// `GET /placements`.
pub async fn page(State(panel): State<Arc<Panel>>, ctx: Ctx) -> PageResult {
    let store = panel.store();
    let mut waiting = store
        .placements(Some(PlacementStatus::AwaitingApproval), 500)
        .await?;
    waiting.sort_by_key(|p| (p.paid_at.unwrap_or(p.created_at), p.id));
    let queue = waiting
        .iter()
        .map(|p| Waiting {
            id: p.id,
            chat_id: p.chat_id,
            categories: categories(p),
            amount: amount(p),
            paid: p.paid_at.as_ref().map(when).unwrap_or_default(),
            text: text(p),
        })
        .collect();
    let mut history = Vec::new();
    for p in store.placements(None, 100).await? {
        if matches!(
            p.status,
            PlacementStatus::AwaitingApproval | PlacementStatus::Draft
        ) {
            continue;
        }
        let reach = match p.post_id {
            Some(post) => store
                .deliveries_of_post(post)
                .await?
                .iter()
                .filter(|d| d.status.as_str() == "sent")
                .count()
                .to_string(),
            None => String::new(),
        };
        history.push(Past {
            id: p.id,
            chat_id: p.chat_id,
            title: p.draft.title.clone().unwrap_or_default(),
            status: p.status.as_str(),
            reason: p.reason.clone().unwrap_or_default(),
            amount: amount(&p),
            reach,
            refunded: p.refunded_at.as_ref().map(when).unwrap_or_default(),
            decided_by: p.decided_by.clone().unwrap_or_default(),
            post: p.post_id.map(|id| id.get()),
        });
    }
    Ok(PlacementsPage {
        b: ctx.chrome("/placements"),
        queue,
        history,
    }
    .into_response())
}

/// `POST /placements/{id}/approve`.
pub async fn approve(State(panel): State<Arc<Panel>>, ctx: Ctx, Path(id): Path<i64>) -> PageResult {
    panel
        .state
        .decide_placement(&ctx.actor(), PlacementId(id), Decision::Approve)
        .await?;
    Ok(done("/placements"))
}

/// `POST /placements/{id}/refuse` (`reason`): refused; the employer reads the reason with
/// the refund.
pub async fn refuse(
    State(panel): State<Arc<Panel>>,
    ctx: Ctx,
    Path(id): Path<i64>,
    body: Bytes,
) -> PageResult {
    let reason = form_field(&body, "reason");
    panel
        .state
        .decide_placement(&ctx.actor(), PlacementId(id), Decision::Refuse { reason })
        .await?;
    Ok(done("/placements"))
}
