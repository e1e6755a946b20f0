//! `POST /api/posts/{id}/label`, `POST /api/retrain`.

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::rejection::PathRejection;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::IntoResponse;
use jobwire_core::CategorySlug;
use jobwire_store::{ExampleSource, PostId};
use serde_json::json;

use super::common::{ApiResult, Who, json_body, ok};
use crate::ops::Label;
use crate::state::AdminState;

/// `POST /api/posts/{id}/label` `{is_job, kind, categories}`: an admin's label of a post
/// (source `relabel`).
pub(super) async fn label_post(
    State(api): State<Arc<AdminState>>,
    Who(actor): Who,
    id: Result<Path<PostId>, PathRejection>,
    body: Bytes,
) -> ApiResult {
    let Path(id) = id?;
    let label: Label = json_body(&body)?;
    let (example_id, labeled) = api.label_post(&actor, id, &label).await?;
    ok(json!({
        "example_id": example_id,
        "post_id": id,
        "is_job": labeled.is_job,
        "kind": labeled.kind.as_str(),
        "categories": labeled.categories.iter().map(CategorySlug::as_str).collect::<Vec<_>>(),
        "source": ExampleSource::Relabel.as_str(),
    }))
}

/// `POST /api/retrain`: asks the classifier processes to retrain now (202).
pub(super) async fn retrain(State(api): State<Arc<AdminState>>, Who(actor): Who) -> ApiResult {
    api.request_retrain(&actor).await?;
    Ok((
        StatusCode::ACCEPTED,
        axum::Json(json!({ "retrain": "requested" })),
    )
        .into_response())
}
