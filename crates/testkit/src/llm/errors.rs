//! Error answers shaped like OpenAI's (`{"error": {message, type, param, code}}`, with the
//! headers OpenAI sends on 429).

use axum::{
    Json,
    http::{HeaderValue, StatusCode},
    response::{IntoResponse, Response},
};
use serde_json::json;

use super::state::{LlmState, add};

fn openai_error(
    status: StatusCode,
    message: &str,
    ty: &str,
    param: Option<&str>,
    code: Option<&str>,
) -> Response {
    (
        status,
        Json(json!({"error": {"message": message, "type": ty, "param": param, "code": code}})),
    )
        .into_response()
}

pub(super) fn bad_request(
    st: &LlmState,
    message: &str,
    param: Option<&str>,
    code: Option<&str>,
) -> Response {
    add(&st.inner.stats.bad_request, 1);
    openai_error(
        StatusCode::BAD_REQUEST,
        message,
        "invalid_request_error",
        param,
        code,
    )
}

/// The rate-limit headers OpenAI sends with a 429 (the figures of its message).
const RATE_LIMIT_HEADERS: [(&str, &str); 5] = [
    ("x-ratelimit-limit-requests", "500"),
    ("x-ratelimit-remaining-requests", "0"),
    ("x-ratelimit-limit-tokens", "50000"),
    ("x-ratelimit-remaining-tokens", "2051"),
    ("x-ratelimit-reset-tokens", "1.146s"),
];

pub(super) fn too_many_requests(retry_after: u64) -> Response {
    let mut resp = openai_error(
        StatusCode::TOO_MANY_REQUESTS,
        "Rate limit reached for gpt-4o-mini in organization org-XXXXXXXXXXXXXXXXXXXXXXXX on tokens per min (TPM): Limit 50000, Used 47949, Requested 3006. Please try again in 1.146s. Visit https://platform.openai.com/account/rate-limits to learn more.",
        "tokens",
        None,
        Some("rate_limit_exceeded"),
    );
    let h = resp.headers_mut();
    h.insert("retry-after", HeaderValue::from(retry_after));
    h.insert(
        "retry-after-ms",
        HeaderValue::from(retry_after.saturating_mul(1000)),
    );
    for (name, value) in RATE_LIMIT_HEADERS {
        h.insert(name, HeaderValue::from_static(value));
    }
    resp
}

pub(super) fn insufficient_quota() -> Response {
    openai_error(
        StatusCode::TOO_MANY_REQUESTS,
        "You exceeded your current quota, please check your plan and billing details. For more information on this error, read the docs: https://platform.openai.com/docs/guides/error-codes/api-errors.",
        "insufficient_quota",
        None,
        Some("insufficient_quota"),
    )
}

pub(super) fn model_not_found(model: &str) -> Response {
    openai_error(
        StatusCode::NOT_FOUND,
        &format!("The model `{model}` does not exist or you do not have access to it."),
        "invalid_request_error",
        None,
        Some("model_not_found"),
    )
}

pub(super) fn invalid_api_key() -> Response {
    openai_error(
        StatusCode::UNAUTHORIZED,
        "Incorrect API key provided: sk-****. You can find your API key at https://platform.openai.com/account/api-keys.",
        "invalid_request_error",
        None,
        Some("invalid_api_key"),
    )
}

pub(super) fn server_error() -> Response {
    openai_error(
        StatusCode::INTERNAL_SERVER_ERROR,
        "The server had an error while processing your request. Sorry about that!",
        "server_error",
        None,
        None,
    )
}
