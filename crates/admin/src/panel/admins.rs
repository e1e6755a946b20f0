//! Admins (`GET /admins`, admins only): every account with its role, state and live
//! sessions; adding one (a generated password shown once, on this answer only), resetting
//! a password (the same way) and disabling; the last two end the account's sessions.

use std::sync::Arc;

use askama::Template;
use askama_web::WebTemplate;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use chrono::Utc;
use jobwire_store::{AdminRole, AdminRow};

use super::{Audited, Chrome, Ctx, PageResult, Panel, done, form_field, when};
use crate::ops::OpError;

struct Account {
    row: AdminRow,
    created: String,
    disabled: String,
}

/// A password just made, shown once.
struct NewPassword {
    username: String,
    password: String,
}

#[derive(Template, WebTemplate)]
#[template(path = "admins.html")]
struct AdminsPage {
    b: Chrome,
    accounts: Vec<Account>,
    new_password: Option<NewPassword>,
}

async fn page_with(
    panel: &Panel,
    ctx: &Ctx,
    new_password: Option<NewPassword>,
    error: Option<String>,
) -> PageResult {
    let accounts = panel
        .store()
        .admins(Utc::now())
        .await?
        .into_iter()
        .map(|row| Account {
            created: when(&row.created_at),
            disabled: row.disabled_at.as_ref().map(when).unwrap_or_default(),
            row,
        })
        .collect();
    let mut b = ctx.chrome("/admins");
    let failed = error.is_some();
    b.flash_error = error;
    let mut r = AdminsPage {
        b,
        accounts,
        new_password,
    }
    .into_response();
    if failed {
        *r.status_mut() = StatusCode::UNPROCESSABLE_ENTITY;
    }
    Ok(r)
}

/// `GET /admins`.
pub async fn page(State(panel): State<Arc<Panel>>, ctx: Ctx) -> PageResult {
    page_with(&panel, &ctx, None, None).await
}

/// The page after a change that made a password: shown once, audited by the operation.
async fn shown_once(panel: &Panel, ctx: &Ctx, username: String, password: String) -> PageResult {
    let mut r: Response =
        page_with(panel, ctx, Some(NewPassword { username, password }), None).await?;
    r.extensions_mut().insert(Audited);
    Ok(r)
}

/// `POST /admins` (`username`, `role`): a new account with a generated password.
pub async fn create(State(panel): State<Arc<Panel>>, ctx: Ctx, body: Bytes) -> PageResult {
    let username = form_field(&body, "username").unwrap_or_default();
    let role = form_field(&body, "role").unwrap_or_default();
    let Some(role) = AdminRole::parse(role.trim()) else {
        let e = format!("role: admin or moderator (got {:?})", role.trim());
        return page_with(&panel, &ctx, None, Some(e)).await;
    };
    match panel
        .state
        .create_account(&ctx.actor(), &username, role)
        .await
    {
        Ok((name, password)) => shown_once(&panel, &ctx, name, password).await,
        Err(OpError::Store(e)) => Err(e.into()),
        Err(e) => page_with(&panel, &ctx, None, Some(e.to_string())).await,
    }
}

/// `POST /admins/{username}/reset`: a new generated password; the account's sessions end.
pub async fn reset(
    State(panel): State<Arc<Panel>>,
    ctx: Ctx,
    Path(username): Path<String>,
) -> PageResult {
    match panel.state.reset_password(&ctx.actor(), &username).await {
        Ok(password) => shown_once(&panel, &ctx, username, password).await,
        Err(OpError::Store(e)) => Err(e.into()),
        Err(e) => page_with(&panel, &ctx, None, Some(e.to_string())).await,
    }
}

/// `POST /admins/{username}/disable`: it can no longer log in; its sessions end.
pub async fn disable(
    State(panel): State<Arc<Panel>>,
    ctx: Ctx,
    Path(username): Path<String>,
) -> PageResult {
    match panel.state.disable_account(&ctx.actor(), &username).await {
        Ok(()) => Ok(done("/admins")),
        Err(OpError::Store(e)) => Err(e.into()),
        Err(e) => page_with(&panel, &ctx, None, Some(e.to_string())).await,
    }
}
