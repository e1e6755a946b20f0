//! The HTTP transport under async-openai, and what a failed attempt means.
//!
//! async-openai's built-in retry layer is replaced by a plain transport so retries are
//! counted and bounded in one place, and so the `Retry-After` header and the error `code`
//! (`insufficient_quota`) reach the retry and fallback policy.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use async_openai::error::OpenAIError;
use async_openai::middleware::HttpRequestFactory;
use serde_json::Value;

use crate::ClassifyError;

/// The outcome of one failed attempt.
#[derive(Debug)]
pub(crate) enum AttemptError {
    /// Worth retrying on the same endpoint.
    Transient {
        message: String,
        retry_after: Option<Duration>,
    },
    /// Retrying will not help, on any endpoint (the request itself is wrong).
    Permanent(ClassifyError),
    /// This endpoint cannot serve now (out of quota, payment required, forbidden, model not
    /// found): go to the fallback at once, and skip this endpoint for a while.
    Switch(Switch),
}

/// Why an endpoint cannot serve.
#[derive(Debug, Clone)]
pub(crate) struct Switch {
    pub(crate) status: u16,
    pub(crate) message: String,
    /// Out of quota (429 `insufficient_quota`): it comes back by itself, later.
    pub(crate) quota: bool,
}

impl Switch {
    /// The error a caller sees when no other endpoint could answer instead.
    pub(crate) fn into_error(self, attempts: u32, retry_after: Duration) -> ClassifyError {
        if self.quota {
            ClassifyError::Unavailable {
                attempts,
                last_error: format!("HTTP {}: {}", self.status, self.message),
                retry_after: Some(retry_after),
            }
        } else {
            ClassifyError::Rejected {
                status: self.status,
                message: self.message,
            }
        }
    }
}

impl AttemptError {
    pub(crate) fn transient(message: impl Into<String>) -> Self {
        Self::Transient {
            message: message.into(),
            retry_after: None,
        }
    }
}

impl fmt::Display for AttemptError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Transient { message, .. } => f.write_str(message),
            Self::Permanent(e) => write!(f, "{e}"),
            Self::Switch(s) => write!(f, "HTTP {}: {}", s.status, s.message),
        }
    }
}

pub(crate) fn classify_openai_error(e: OpenAIError) -> AttemptError {
    match e {
        OpenAIError::Boxed(inner) => match inner.downcast::<HttpStatus>() {
            Ok(status) => status.into_attempt_error(),
            Err(other) => AttemptError::transient(format!("transport: {other}")),
        },
        OpenAIError::Reqwest(e) if e.is_builder() => {
            AttemptError::Permanent(ClassifyError::Invalid(format!("bad request: {e}")))
        }
        OpenAIError::Reqwest(e) => {
            let what = if e.is_timeout() {
                "timed out"
            } else if e.is_connect() {
                "connection failed"
            } else {
                "transport error"
            };
            // Without the URL: it may carry credentials in unusual setups.
            AttemptError::transient(format!("{what}: {}", e.without_url()))
        }
        OpenAIError::JSONDeserialize(e, _) => {
            AttemptError::transient(format!("malformed response body: {e}"))
        }
        OpenAIError::ApiError(api) => HttpStatus {
            status: api.status_code.as_u16(),
            retry_after: None,
            code: api.api_error.code.clone(),
            body: api.api_error.message,
        }
        .into_attempt_error(),
        OpenAIError::InvalidArgument(m) => {
            AttemptError::Permanent(ClassifyError::Invalid(format!("invalid request: {m}")))
        }
        other => AttemptError::transient(other.to_string()),
    }
}

/// A non-success HTTP answer, as the transport reports it.
#[derive(Debug, thiserror::Error)]
#[error("HTTP {status}: {body}")]
pub(crate) struct HttpStatus {
    pub(crate) status: u16,
    pub(crate) retry_after: Option<Duration>,
    /// The OpenAI error `code` (or `type`), e.g. `insufficient_quota`, `model_not_found`.
    pub(crate) code: Option<String>,
    pub(crate) body: String,
}

impl HttpStatus {
    pub(crate) fn into_attempt_error(self) -> AttemptError {
        let quota = self.code.as_deref() == Some("insufficient_quota");
        match self.status {
            429 if quota => AttemptError::Switch(Switch {
                status: 429,
                message: self.body,
                quota: true,
            }),
            402..=404 => AttemptError::Switch(Switch {
                status: self.status,
                message: self.body,
                quota: false,
            }),
            s if s == 429 || s == 408 || s >= 500 => AttemptError::Transient {
                message: format!("HTTP {s}: {}", self.body),
                retry_after: self.retry_after,
            },
            s => AttemptError::Permanent(ClassifyError::Rejected {
                status: s,
                message: self.body,
            }),
        }
    }
}

/// Sends the request once (no hidden retries) and turns a non-success answer into an
/// [`HttpStatus`] error that keeps `Retry-After` and the error code.
#[derive(Clone)]
pub(crate) struct PlainTransport {
    pub(crate) client: reqwest013::Client,
}

impl fmt::Debug for PlainTransport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PlainTransport").finish_non_exhaustive()
    }
}

type TransportFuture =
    Pin<Box<dyn Future<Output = Result<reqwest013::Response, OpenAIError>> + Send + 'static>>;

impl tower::Service<HttpRequestFactory> for PlainTransport {
    type Response = reqwest013::Response;
    type Error = OpenAIError;
    type Future = TransportFuture;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, factory: HttpRequestFactory) -> Self::Future {
        let client = self.client.clone();
        Box::pin(async move {
            let request = factory.build().await?;
            let response = client
                .execute(request)
                .await
                .map_err(OpenAIError::Reqwest)?;
            let status = response.status();
            if status.is_success() {
                return Ok(response);
            }
            let retry_after = response
                .headers()
                .get(reqwest013::header::RETRY_AFTER)
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.trim().parse::<f64>().ok())
                .filter(|s| s.is_finite() && *s >= 0.0)
                .map(|s| Duration::from_secs_f64(s.min(3600.0)));
            let body = response.text().await.unwrap_or_default();
            let code = serde_json::from_str::<Value>(&body).ok().and_then(|v| {
                let err = v.get("error")?;
                err.get("code")
                    .and_then(Value::as_str)
                    .or_else(|| err.get("type").and_then(Value::as_str))
                    .map(str::to_owned)
            });
            let body: String = body.chars().take(300).collect();
            Err(OpenAIError::Boxed(Box::new(HttpStatus {
                status: status.as_u16(),
                retry_after,
                code,
                body,
            })))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn status(status: u16, code: Option<&str>) -> AttemptError {
        HttpStatus {
            status,
            retry_after: None,
            code: code.map(str::to_owned),
            body: "b".into(),
        }
        .into_attempt_error()
    }

    #[test]
    fn statuses_map_to_retry_switch_or_reject() {
        assert!(matches!(
            status(429, Some("insufficient_quota")),
            AttemptError::Switch(Switch { quota: true, .. })
        ));
        assert!(matches!(
            status(429, Some("rate_limit_exceeded")),
            AttemptError::Transient { .. }
        ));
        for s in [402, 403, 404] {
            assert!(
                matches!(
                    status(s, None),
                    AttemptError::Switch(Switch { quota: false, .. })
                ),
                "{s}"
            );
        }
        for s in [408, 500, 503] {
            assert!(
                matches!(status(s, None), AttemptError::Transient { .. }),
                "{s}"
            );
        }
        assert!(matches!(
            status(400, None),
            AttemptError::Permanent(ClassifyError::Rejected { status: 400, .. })
        ));
    }
}
