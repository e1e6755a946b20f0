//! jobwire's admin side, served by the `admin` role at `/` of `[admin] listen`:
//!
//! - the web panel ([`panel`]): server-rendered pages from `admin-ui/templates` (askama),
//!   static files from `admin-ui/static` embedded in the binary, a login with sessions;
//! - the JSON API under `/api` ([`api`]), for automation with a bearer token, or for a
//!   logged-in admin;
//! - admin accounts ([`accounts`]) and broadcasts ([`broadcasts`]);
//! - one state ([`state::AdminState`], built complete by [`AdminSettings::build`] once the
//!   store answers) that both routers share, and one layer of operations ([`ops`]) that
//!   the API and the panel both call, each writing its own audit entry.
//!
//! Everything but `/login`, `/static/…`, `/healthz`, `/readyz` and `/metrics` needs a
//! session (or, under `/api`, the token): see [`auth`] and [`router`], whose routes a test
//! enumerates.

pub mod accounts;
pub mod api;
mod assets;
pub mod auth;
pub mod broadcasts;
mod i18n;
pub mod lab;
pub mod ops;
pub mod panel;
pub mod password_check;
pub mod state;
pub mod tg_preview;

use std::sync::Arc;

use axum::Router;

pub use api::failures::{Client, FailedAttempts};
pub use lab::PromptLab;
pub use ops::Actor;
pub use panel::{CategorySetup, Panel, PanelOptions};
pub use state::{AdminSettings, AdminState, AdminTokenError};

/// The admin role's routes: the panel's pages, its static files, `/login`, and the API,
/// over one state. The server merges it with `/healthz`, `/readyz` and `/metrics`.
pub fn router(state: Arc<AdminState>) -> Router {
    router_with_panel(Panel::new(state))
}

/// [`router`] with a panel made beforehand (a test reads its password-check peak).
pub fn router_with_panel(panel: Arc<Panel>) -> Router {
    api::router(panel.state().clone()).merge(panel::router(panel))
}
