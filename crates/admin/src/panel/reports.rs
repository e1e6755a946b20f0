//! Reports (`GET /reports`): the pending ones with their post, reports per source, and
//! accepting (the label teaches the classifier) or dismissing each.

use std::collections::BTreeMap;
use std::sync::Arc;

use askama::Template;
use askama_web::WebTemplate;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::response::IntoResponse;
use jobwire_store::{ReportId, ReportRow, ReportStatus};

use super::posts::label_from_form;
use super::{Chrome, Ctx, PageResult, Panel, done, snippet, when};

struct ReportLine {
    row: ReportRow,
    when: String,
    source: String,
    post_text: String,
}

#[derive(Template, WebTemplate)]
#[template(path = "reports.html")]
struct ReportsPage {
    b: Chrome,
    reports: Vec<ReportLine>,
    per_source: Vec<(String, u64)>,
    categories: Vec<String>,
}

/// `GET /reports`: pending reports, and reports per source over all time.
pub async fn reports(State(panel): State<Arc<Panel>>, ctx: Ctx) -> PageResult {
    let store = panel.store();
    let mut lines = Vec::new();
    for row in store.reports(Some(ReportStatus::Pending), 200).await? {
        let post = match row.post_id {
            Some(p) => store.post(p).await?,
            None => None,
        };
        lines.push(ReportLine {
            when: when(&row.created_at),
            source: post
                .as_ref()
                .map(|p| p.channel_handle.clone())
                .unwrap_or_default(),
            post_text: post.map(|p| snippet(&p.text, 300)).unwrap_or_default(),
            row,
        });
    }
    let mut per_source: BTreeMap<String, u64> = BTreeMap::new();
    for row in store.reports(None, 5000).await? {
        if let Some(p) = row.post_id
            && let Some(post) = store.post(p).await?
        {
            *per_source.entry(post.channel_handle).or_default() += 1;
        }
    }
    let mut per_source: Vec<(String, u64)> = per_source.into_iter().collect();
    per_source.sort_by_key(|b| std::cmp::Reverse(b.1));
    Ok(ReportsPage {
        b: ctx.chrome("/reports"),
        reports: lines,
        per_source,
        categories: panel.categories(),
    }
    .into_response())
}

/// `POST /reports/{id}/accept`: the report's label (form `kind`, `category`…) becomes a
/// training example; the report is closed.
pub async fn accept_report(
    State(panel): State<Arc<Panel>>,
    ctx: Ctx,
    Path(id): Path<ReportId>,
    body: Bytes,
) -> PageResult {
    panel
        .state
        .accept_report(&ctx.actor(), id, &label_from_form(&body))
        .await?;
    Ok(done("/reports"))
}

/// `POST /reports/{id}/dismiss`: the report is rejected.
pub async fn dismiss_report(
    State(panel): State<Arc<Panel>>,
    ctx: Ctx,
    Path(id): Path<ReportId>,
) -> PageResult {
    panel.state.reject_report(&ctx.actor(), id).await?;
    Ok(done("/reports"))
}
