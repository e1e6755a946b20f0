//! `GET /api/reports`, `POST /api/reports/{id}/accept|reject`.

use std::collections::HashMap;
use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::rejection::{PathRejection, QueryRejection};
use axum::extract::{Path, Query, State};
use jobwire_store::{PostId, ReportId, ReportRow, ReportStatus};
use serde_json::{Value, json};

use super::common::{ApiError, ApiResult, DEFAULT_LIMIT, MAX_LIMIT, Who, json_body, ok, time};
use crate::ops::Label;
use crate::state::AdminState;

pub(super) fn report_json(r: &ReportRow) -> Value {
    json!({
        "id": r.id,
        "chat_id": r.chat_id,
        "post_id": r.post_id,
        "kind": r.kind.as_str(),
        "text": r.text,
        "link": r.link,
        "status": r.status.as_str(),
        "created_at": time(r.created_at),
        "decided_at": r.decided_at.map(time),
        "example_id": r.example_id,
    })
}

/// `GET /api/reports?status=pending|accepted|rejected&limit=N`: reports, newest first, each
/// with whether its post is withheld.
pub(super) async fn list_reports(
    State(api): State<Arc<AdminState>>,
    query: Result<Query<HashMap<String, String>>, QueryRejection>,
) -> ApiResult {
    let Query(query) = query?;
    let status = match query.get("status").map(String::as_str) {
        None | Some("") | Some("all") => None,
        Some(raw) => Some(ReportStatus::parse(raw).ok_or_else(|| {
            ApiError::bad_request(format!(
                "unknown status {raw:?}: use pending, accepted or rejected"
            ))
        })?),
    };
    let limit = match query.get("limit") {
        None => DEFAULT_LIMIT,
        Some(raw) => match raw.parse::<u32>() {
            Ok(n) if (1..=MAX_LIMIT).contains(&n) => n,
            _ => {
                return Err(ApiError::bad_request(format!(
                    "bad limit {raw:?}: use a number from 1 to {MAX_LIMIT}"
                )));
            }
        },
    };
    let store = api.store();
    let reports = store.reports(status, limit).await?;
    // Whether each report's post is withheld (enough users complained; it waits for a
    // decision here), read once per post.
    let mut withheld: HashMap<PostId, bool> = HashMap::new();
    for post in reports.iter().filter_map(|r| r.post_id) {
        if let std::collections::hash_map::Entry::Vacant(e) = withheld.entry(post) {
            e.insert(store.post_withheld(post).await?);
        }
    }
    let list: Vec<Value> = reports
        .iter()
        .map(|r| {
            let mut v = report_json(r);
            v["post_withheld"] = json!(
                r.post_id
                    .and_then(|p| withheld.get(&p))
                    .copied()
                    .unwrap_or(false)
            );
            v
        })
        .collect();
    ok(json!({ "reports": list }))
}

/// `POST /api/reports/{id}/accept` `{is_job, kind, categories}`.
pub(super) async fn accept_report(
    State(api): State<Arc<AdminState>>,
    Who(actor): Who,
    id: Result<Path<ReportId>, PathRejection>,
    body: Bytes,
) -> ApiResult {
    let Path(id) = id?;
    let label: Label = json_body(&body)?;
    let report = api.accept_report(&actor, id, &label).await?;
    ok(json!({ "report": report_json(&report) }))
}

/// `POST /api/reports/{id}/reject`.
pub(super) async fn reject_report(
    State(api): State<Arc<AdminState>>,
    Who(actor): Who,
    id: Result<Path<ReportId>, PathRejection>,
) -> ApiResult {
    let Path(id) = id?;
    let report = api.reject_report(&actor, id).await?;
    ok(json!({ "report": report_json(&report) }))
}
