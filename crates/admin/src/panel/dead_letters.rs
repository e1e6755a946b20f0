//! Dead letters (`GET /dead-letters`): what failed for good, retried or discarded.

use std::sync::Arc;

use askama::Template;
use askama_web::WebTemplate;
use axum::extract::{Path, State};
use axum::response::IntoResponse;
use jobwire_store::DeadLetterRow;

use super::{Chrome, Ctx, PageResult, Panel, done, snippet, when};
use crate::ops::DeadLetterId;

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
    let store = panel.store();
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

/// `POST /dead-letters/{id}/retry`: puts its work back where the scheduler publishes it
/// again (a post to classify, a job to fan out, a delivery to send), then forgets it.
pub async fn retry_dead_letter(
    State(panel): State<Arc<Panel>>,
    ctx: Ctx,
    Path(id): Path<DeadLetterId>,
) -> PageResult {
    panel.state.retry_dead_letter(&ctx.actor(), id).await?;
    Ok(done("/dead-letters"))
}

/// `POST /dead-letters/{id}/discard`.
pub async fn discard_dead_letter(
    State(panel): State<Arc<Panel>>,
    ctx: Ctx,
    Path(id): Path<DeadLetterId>,
) -> PageResult {
    panel.state.discard_dead_letter(&ctx.actor(), id).await?;
    Ok(done("/dead-letters"))
}
