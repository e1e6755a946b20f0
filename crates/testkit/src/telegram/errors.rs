//! A Bot API error answer, as every method of the fake returns it.

use serde_json::Value;

/// A Bot API error answer.
#[derive(Debug)]
pub(super) struct ApiError {
    pub(super) code: u16,
    pub(super) description: String,
    pub(super) retry_after: Option<u64>,
}

pub(super) type ApiResult = Result<Value, ApiError>;

pub(super) fn bad(description: impl Into<String>) -> ApiError {
    ApiError {
        code: 400,
        description: description.into(),
        retry_after: None,
    }
}

pub(super) fn err(code: u16, description: &str) -> ApiError {
    ApiError {
        code,
        description: description.to_owned(),
        retry_after: None,
    }
}
