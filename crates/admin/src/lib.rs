//! jobwire's admin side, served by the `admin` role at `/` of `[admin] listen`:
//!
//! - the web panel ([`panel`]): server-rendered pages from `admin-ui/templates` (askama),
//!   static files from `admin-ui/static` embedded in the binary, a login with sessions;
//! - the JSON API under `/api` ([`api`]), for automation with a bearer token, or for a
//!   logged-in admin;
//! - admin accounts ([`accounts`]) and broadcasts ([`broadcasts`]).
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
pub mod panel;
pub mod password_check;

use std::sync::Arc;

use axum::Router;

pub use api::AdminApi;
pub use api::failures::{Client, FailedAttempts};
pub use lab::PromptLab;
pub use panel::{CategorySetup, Panel, PanelOptions};

/// The admin role's routes: the panel's pages, its static files, `/login`, and the API.
/// The server merges it with `/healthz`, `/readyz` and `/metrics`.
pub fn router(api: Arc<AdminApi>, panel: Arc<Panel>) -> Router {
    api::router(api).merge(panel::router(panel))
}
