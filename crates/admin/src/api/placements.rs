//! `GET /api/placements[?status=&limit=]`, `GET /api/placements/{id}`,
//! `POST /api/placements/{id}/approve|refuse`.

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::rejection::{PathRejection, QueryRejection};
use axum::extract::{Path, Query, State};
use jobwire_core::CategorySlug;
use serde::Deserialize;
use serde_json::{Value, json};

use super::common::{ApiError, ApiResult, MAX_LIMIT, Who, json_body, ok};
use crate::ops::{Decision, PlacementId};
use crate::state::AdminState;

#[derive(Debug, Deserialize)]
pub(super) struct PlacementsQuery {
    status: Option<String>,
    limit: Option<u32>,
}

pub(crate) fn placement_json(p: &jobwire_store::PlacementRow) -> Value {
    let d = &p.draft;
    json!({
        "id": p.id,
        "chat_id": p.chat_id,
        "status": p.status.as_str(),
        "language": d.lang,
        "title": d.title,
        "body": d.body,
        "budget": d.budget.as_deref().filter(|b| !b.is_empty()),
        "contact": d.contact,
        "categories": d.categories.iter().map(CategorySlug::as_str).collect::<Vec<_>>(),
        "stars": p.stars,
        "charge_id": p.charge_id,
        "post_id": p.post_id,
        "reason": p.reason,
        "decided_by": p.decided_by,
        "created_at": p.created_at,
        "paid_at": p.paid_at,
        "published_at": p.published_at,
        "refunded_at": p.refunded_at,
    })
}

/// `GET /api/placements[?status=&limit=]`: employers' placements, newest first.
pub(super) async fn list_placements(
    State(api): State<Arc<AdminState>>,
    query: Result<Query<PlacementsQuery>, QueryRejection>,
) -> ApiResult {
    let Query(q) = query?;
    let status = match q.status.as_deref() {
        None => None,
        Some(s) => Some(jobwire_store::PlacementStatus::parse(s).ok_or_else(|| {
            ApiError::bad_request(format!(
                "unknown status {s:?}: use one of {}",
                jobwire_store::PlacementStatus::ALL
                    .map(|s| s.as_str())
                    .join(", ")
            ))
        })?),
    };
    let rows = api
        .store()
        .placements(status, q.limit.unwrap_or(100).clamp(1, MAX_LIMIT))
        .await?;
    let rows: Vec<Value> = rows.iter().map(placement_json).collect();
    ok(json!({ "placements": rows }))
}

pub(super) async fn show_placement(
    State(api): State<Arc<AdminState>>,
    id: Result<Path<PlacementId>, PathRejection>,
) -> ApiResult {
    let Path(id) = id?;
    let p = api
        .store()
        .placement(id)
        .await?
        .ok_or_else(|| ApiError::not_found(format!("no placement {id}")))?;
    ok(json!({ "placement": placement_json(&p) }))
}

/// Why an admin refuses a placement (told to the employer with the refund).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RefuseBody {
    reason: Option<String>,
}

/// `POST /api/placements/{id}/approve` and `…/refuse` (`{"reason": …}`, optional): the
/// decision on a paid placement waiting for approval. A refused one is refunded by the main
/// bot within seconds.
pub(super) async fn decide_placement(
    State(api): State<Arc<AdminState>>,
    Who(actor): Who,
    path: Result<Path<(PlacementId, String)>, PathRejection>,
    body: Bytes,
) -> ApiResult {
    let Path((id, action)) = path?;
    let reason = if body.iter().all(u8::is_ascii_whitespace) {
        None
    } else {
        let b: RefuseBody = json_body(&body)?;
        b.reason.filter(|r| !r.trim().is_empty())
    };
    let decision = match action.as_str() {
        "approve" if reason.is_some() => {
            return Err(ApiError::bad_request("reason: only a refusal has one"));
        }
        "approve" => Decision::Approve,
        "refuse" => Decision::Refuse { reason },
        other => {
            return Err(ApiError::not_found(format!(
                "unknown action {other:?}: use approve or refuse"
            )));
        }
    };
    let decided = api.decide_placement(&actor, id, decision).await?;
    ok(json!({ "placement": placement_json(&decided) }))
}
