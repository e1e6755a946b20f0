//! What every API handler shares: the error answer, the actor the auth layer found, JSON in
//! and out, list limits and timestamps.

use axum::extract::rejection::{PathRejection, QueryRejection};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use chrono::{DateTime, Utc};
use serde_json::json;

use crate::ops::{Actor, OpError};

/// A list's length when the request gives none.
pub(crate) const DEFAULT_LIMIT: u32 = 50;
/// The longest list one request gets.
pub(crate) const MAX_LIMIT: u32 = 1000;

/// An error answer: `{"error": message}` with a status.
#[derive(Debug)]
pub struct ApiError {
    status: StatusCode,
    message: String,
}

impl ApiError {
    /// What went wrong, in words.
    pub fn message(&self) -> &str {
        &self.message
    }

    pub(crate) fn new(status: StatusCode, message: impl Into<String>) -> Self {
        Self {
            status,
            message: message.into(),
        }
    }

    pub(crate) fn bad_request(message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, message)
    }

    pub(crate) fn not_found(message: impl Into<String>) -> Self {
        Self::new(StatusCode::NOT_FOUND, message)
    }
}

impl From<jobwire_store::StoreError> for ApiError {
    fn from(e: jobwire_store::StoreError) -> Self {
        tracing::warn!(error = %e, "admin API: store error");
        Self::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            format!("store error: {e}"),
        )
    }
}

impl From<OpError> for ApiError {
    fn from(e: OpError) -> Self {
        let status = match &e {
            OpError::NotFound(_) => StatusCode::NOT_FOUND,
            OpError::Conflict(_) => StatusCode::CONFLICT,
            OpError::BadInput(_) => StatusCode::BAD_REQUEST,
            OpError::Unavailable(_) => StatusCode::SERVICE_UNAVAILABLE,
            OpError::Telegram(_) => StatusCode::BAD_GATEWAY,
            OpError::Store(e) => {
                tracing::warn!(error = %e, "admin API: store error");
                StatusCode::INTERNAL_SERVER_ERROR
            }
        };
        Self::new(status, e.to_string())
    }
}

impl From<PathRejection> for ApiError {
    fn from(e: PathRejection) -> Self {
        Self::bad_request(format!("bad path: {}", e.body_text()))
    }
}

impl From<QueryRejection> for ApiError {
    fn from(e: QueryRejection) -> Self {
        Self::bad_request(format!("bad query: {}", e.body_text()))
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut response =
            (self.status, axum::Json(json!({ "error": self.message }))).into_response();
        if self.status == StatusCode::UNAUTHORIZED {
            response.headers_mut().insert(
                header::WWW_AUTHENTICATE,
                header::HeaderValue::from_static("Bearer"),
            );
        }
        response
    }
}

/// The [`Actor`] the API's `authorize` layer found, for the handlers.
pub(crate) struct Who(pub(crate) Actor);

impl<S: Send + Sync> axum::extract::FromRequestParts<S> for Who {
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut axum::http::request::Parts,
        _: &S,
    ) -> Result<Self, Self::Rejection> {
        parts
            .extensions
            .get::<Actor>()
            .cloned()
            .map(Who)
            .ok_or_else(|| ApiError::new(StatusCode::UNAUTHORIZED, "not authorized"))
    }
}

pub(crate) fn time(t: DateTime<Utc>) -> String {
    t.to_rfc3339()
}

/// A JSON body (whatever its `Content-Type`, as the API has always read it).
pub(crate) fn json_body<T: serde::de::DeserializeOwned>(body: &[u8]) -> Result<T, ApiError> {
    serde_json::from_slice(body).map_err(|e| ApiError::bad_request(format!("bad JSON body: {e}")))
}

pub(crate) type ApiResult = Result<Response, ApiError>;

/// A JSON answer.
pub(crate) fn ok(value: serde_json::Value) -> ApiResult {
    Ok(axum::Json(value).into_response())
}
