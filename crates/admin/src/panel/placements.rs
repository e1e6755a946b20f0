//! Placements (`GET /placements`): employers' paid posts waiting for approval, oldest
//! first, each as the card subscribers will see (the card's messages rendered as Telegram
//! shows them, and its buttons), with its employer, paid categories and amount;
//! approving, or refusing with a reason the employer reads (the main bot refunds it); the
//! history with each placement's reach and refund.

use std::sync::Arc;

use askama::Template;
use askama_web::WebTemplate;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::response::IntoResponse;
use chrono::Utc;
use jobwire_core::CategorySlug;
use jobwire_store::{PlacementRow, PlacementStatus};
use teloxide::types::InlineKeyboardMarkup;

use super::{Chrome, Ctx, PageResult, Panel, done, form_field, when};
use crate::ops::{Decision, PlacementId};

/// One placement waiting for a decision.
struct Waiting {
    id: jobwire_store::PlacementId,
    chat_id: i64,
    categories: String,
    amount: String,
    paid: String,
    /// The card's messages as subscribers will see them: page HTML from
    /// [`crate::tg_preview`], safe to insert.
    card: Vec<String>,
    /// The labels of the buttons under the card, row by row.
    buttons: Vec<Vec<String>>,
}

/// One placement of the history.
struct Past {
    id: jobwire_store::PlacementId,
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

/// The card's messages as the deliver stage sends them (`jobwire_core::format::render` of
/// the placement's card), rendered for the page.
fn card(p: &PlacementRow, names: &[(CategorySlug, String)]) -> Vec<String> {
    let categories = p
        .draft
        .categories
        .iter()
        .map(|c| {
            names
                .iter()
                .find(|(slug, _)| slug == c)
                .map_or_else(|| c.to_string(), |(_, name)| name.clone())
        })
        .collect();
    let card = jobwire_bot::placements::card(p, categories, p.paid_at.unwrap_or_else(Utc::now));
    jobwire_core::format::render(&card)
        .iter()
        .map(|part| crate::tg_preview::render_or_escape(part))
        .collect()
}

/// The labels of a card's buttons, as the bots draw them, in `lang`.
fn button_labels(lang: &str) -> Vec<Vec<String>> {
    let keyboard: InlineKeyboardMarkup =
        jobwire_bot::card_buttons::card_keyboard(Some(lang), 0, None, &[]);
    keyboard
        .inline_keyboard
        .iter()
        .map(|row| row.iter().map(|b| b.text.clone()).collect())
        .collect()
}

/// `GET /placements`.
pub async fn page(State(panel): State<Arc<Panel>>, ctx: Ctx) -> PageResult {
    let store = panel.store();
    let mut waiting = store
        .placements(Some(PlacementStatus::AwaitingApproval), 500)
        .await?;
    waiting.sort_by_key(|p| (p.paid_at.unwrap_or(p.created_at), p.id));
    let names: Vec<(CategorySlug, String)> = store
        .categories()
        .await?
        .into_iter()
        .map(|c| (c.slug, c.name))
        .collect();
    let b = ctx.chrome("/placements");
    let buttons = button_labels(b.t.code);
    let queue = waiting
        .iter()
        .map(|p| Waiting {
            id: p.id,
            chat_id: p.chat_id,
            categories: categories(p),
            amount: amount(p),
            paid: p.paid_at.as_ref().map(when).unwrap_or_default(),
            card: card(p, &names),
            buttons: buttons.clone(),
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
    Ok(PlacementsPage { b, queue, history }.into_response())
}

/// `POST /placements/{id}/approve`.
pub async fn approve(
    State(panel): State<Arc<Panel>>,
    ctx: Ctx,
    Path(id): Path<PlacementId>,
) -> PageResult {
    panel
        .state
        .decide_placement(&ctx.actor(), id, Decision::Approve)
        .await?;
    Ok(done("/placements"))
}

/// `POST /placements/{id}/refuse` (`reason`): refused; the employer reads the reason with
/// the refund.
pub async fn refuse(
    State(panel): State<Arc<Panel>>,
    ctx: Ctx,
    Path(id): Path<PlacementId>,
    body: Bytes,
) -> PageResult {
    let reason = form_field(&body, "reason");
    panel
        .state
        .decide_placement(&ctx.actor(), id, Decision::Refuse { reason })
        .await?;
    Ok(done("/placements"))
}
