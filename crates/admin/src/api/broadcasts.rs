//! `GET /api/broadcasts`, `GET /api/broadcasts/{id}`, `POST /api/broadcasts`,
//! `POST /api/broadcasts/{id}/pause|resume|cancel`.

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::rejection::PathRejection;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::IntoResponse;
use chrono::Utc;
use jobwire_core::CategorySlug;
use serde::Deserialize;
use serde_json::{Value, json};

use super::common::{ApiError, ApiResult, MAX_LIMIT, Who, json_body, ok};
use crate::broadcasts::Audience;
use crate::ops::{BroadcastAction, BroadcastId};
use crate::state::AdminState;

/// A broadcast as an admin asks for it.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct BroadcastBody {
    text: String,
    category: Option<String>,
    plan: Option<String>,
    language: Option<String>,
    /// Only subscribers active in the last this many days.
    active_days: Option<u32>,
}

pub(super) async fn list_broadcasts(State(api): State<Arc<AdminState>>) -> ApiResult {
    let list = api.store().broadcasts(MAX_LIMIT, Utc::now()).await?;
    let list: Vec<Value> = list.iter().map(crate::broadcasts::to_json).collect();
    ok(json!({ "broadcasts": list }))
}

pub(super) async fn show_broadcast(
    State(api): State<Arc<AdminState>>,
    id: Result<Path<BroadcastId>, PathRejection>,
) -> ApiResult {
    let Path(id) = id?;
    let b = api
        .store()
        .broadcast(id, Utc::now())
        .await?
        .ok_or_else(|| ApiError::not_found(format!("no broadcast {id}")))?;
    ok(json!({ "broadcast": crate::broadcasts::to_json(&b) }))
}

/// `POST /api/broadcasts` `{text, category?, plan?, language?, active_days?}` (201).
pub(super) async fn create_broadcast(
    State(api): State<Arc<AdminState>>,
    Who(actor): Who,
    body: Bytes,
) -> ApiResult {
    let body: BroadcastBody = json_body(&body)?;
    let audience = Audience {
        category: body
            .category
            .as_deref()
            .map(CategorySlug::parse)
            .transpose()
            .map_err(|e| ApiError::bad_request(e.to_string()))?,
        plan: body.plan,
        language: body.language,
        active_days: body.active_days,
    };
    let b = api.start_broadcast(&actor, &body.text, &audience).await?;
    Ok((
        StatusCode::CREATED,
        axum::Json(json!({ "broadcast": crate::broadcasts::to_json(&b) })),
    )
        .into_response())
}

/// `POST /api/broadcasts/{id}/pause|resume|cancel`.
pub(super) async fn change_broadcast(
    State(api): State<Arc<AdminState>>,
    Who(actor): Who,
    path: Result<Path<(BroadcastId, String)>, PathRejection>,
) -> ApiResult {
    let Path((id, action)) = path?;
    let action = BroadcastAction::parse(&action).ok_or_else(|| {
        ApiError::not_found(format!(
            "unknown action {action:?}: use pause, resume or cancel"
        ))
    })?;
    let b = api.steer_broadcast(&actor, id, action).await?;
    ok(json!({ "broadcast": crate::broadcasts::to_json(&b) }))
}
