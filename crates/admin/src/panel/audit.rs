//! The audit log (`GET /audit[?before=]`): every change, newest first.

use std::sync::Arc;

use askama::Template;
use askama_web::WebTemplate;
use axum::extract::{Query, State};
use axum::response::IntoResponse;
use jobwire_store::AuditEntry;
use serde::Deserialize;

use super::{Chrome, Ctx, PageResult, Panel};
struct AuditLine {
    row: AuditEntry,
    when: String,
}

#[derive(Template, WebTemplate)]
#[template(path = "audit.html")]
struct AuditPage {
    b: Chrome,
    entries: Vec<AuditLine>,
    older: Option<i64>,
}

#[derive(Debug, Deserialize, Default)]
pub struct BeforeQuery {
    before: Option<i64>,
}

/// `GET /audit[?before=]`: every change, newest first.
pub async fn audit(
    State(panel): State<Arc<Panel>>,
    ctx: Ctx,
    Query(q): Query<BeforeQuery>,
) -> PageResult {
    let store = panel.store();
    let rows = store.audit_log(100, q.before).await?;
    let older = (rows.len() == 100)
        .then(|| rows.last().map(|r| r.id))
        .flatten();
    let entries = rows
        .into_iter()
        .map(|row| AuditLine {
            when: row.at.format("%Y-%m-%d %H:%M:%S").to_string(),
            row,
        })
        .collect();
    Ok(AuditPage {
        b: ctx.chrome("/audit"),
        entries,
        older,
    }
    .into_response())
}
