//! The HTTP transport of the chat-completions calls, and what a failed attempt means.
//!
//! The requests and answers are async-openai's types (`chat-completion-types`); they go over
//! the workspace's one reqwest (0.12, the one teloxide uses), sent once per attempt so that
//! retries are counted and bounded in one place, and so that the `Retry-After` header and the
//! error `code` (`insufficient_quota`) reach the retry and fallback policy. async-openai's own
//! client is not used: it needs reqwest 0.13, a second HTTP stack in the binary, and its retry
//! layer was replaced anyway.

use std::fmt;
use std::time::Duration;

use async_openai::types::chat::{
    CreateChatCompletionRequest, CreateChatCompletionResponse, CreateChatCompletionStreamResponse,
};
use eventsource_stream::{EventStreamError, Eventsource};
use futures::stream::{BoxStream, StreamExt};
use jobwire_core::secret::Secret;
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

/// A request that did not get an answer (or whose answer's body broke off).
fn transport_error(e: reqwest012::Error) -> AttemptError {
    if e.is_builder() {
        return AttemptError::Permanent(ClassifyError::Invalid(format!(
            "bad request: {}",
            e.without_url()
        )));
    }
    let what = if e.is_timeout() {
        "timed out"
    } else if e.is_connect() {
        "connection failed"
    } else if e.is_body() || e.is_decode() {
        "answer cut"
    } else {
        "transport error"
    };
    // Without the URL: it may carry credentials in unusual setups.
    AttemptError::transient(format!("{what}: {}", e.without_url()))
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

/// One endpoint's HTTP client: `POST {base}/chat/completions`, once per call (no hidden
/// retries), with the endpoint's key as a bearer token when it has one.
#[derive(Clone)]
pub(crate) struct Transport {
    client: reqwest012::Client,
    url: String,
    api_key: Option<Secret>,
}

impl fmt::Debug for Transport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Transport").finish_non_exhaustive()
    }
}

/// The chunks of a streamed answer, until `[DONE]` or the end of the body; an `Err` is a
/// broken stream (the connection dropped, a chunk that does not parse).
pub(crate) type Chunks = BoxStream<'static, Result<CreateChatCompletionStreamResponse, String>>;

impl Transport {
    pub(crate) fn new(
        base_url: &str,
        api_key: Option<Secret>,
        timeout: Duration,
    ) -> Result<Self, ClassifyError> {
        let client = reqwest012::Client::builder()
            .timeout(timeout)
            .connect_timeout(timeout.min(Duration::from_secs(10)))
            .build()
            .map_err(|e| ClassifyError::Invalid(format!("cannot build HTTP client: {e}")))?;
        Ok(Self {
            client,
            url: format!("{}/chat/completions", base_url.trim_end_matches('/')),
            api_key,
        })
    }

    /// Sends `request` once; a non-success answer becomes the [`AttemptError`] its status
    /// and error code mean.
    async fn post(
        &self,
        request: &CreateChatCompletionRequest,
    ) -> Result<reqwest012::Response, AttemptError> {
        let mut call = self.client.post(&self.url).json(request);
        if let Some(key) = &self.api_key {
            call = call.bearer_auth(key.expose());
        }
        let response = call.send().await.map_err(transport_error)?;
        let status = response.status();
        if status.is_success() {
            return Ok(response);
        }
        let retry_after = response
            .headers()
            .get(reqwest012::header::RETRY_AFTER)
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
        Err(HttpStatus {
            status: status.as_u16(),
            retry_after,
            code,
            body,
        }
        .into_attempt_error())
    }

    /// One answer, not streamed.
    pub(crate) async fn complete(
        &self,
        request: &CreateChatCompletionRequest,
    ) -> Result<CreateChatCompletionResponse, AttemptError> {
        let body = self
            .post(request)
            .await?
            .bytes()
            .await
            .map_err(transport_error)?;
        serde_json::from_slice(&body)
            .map_err(|e| AttemptError::transient(format!("malformed response body: {e}")))
    }

    /// One streamed answer (server-sent events), chunk by chunk.
    pub(crate) async fn stream(
        &self,
        request: &CreateChatCompletionRequest,
    ) -> Result<Chunks, AttemptError> {
        let events = self.post(request).await?.bytes_stream().eventsource();
        Ok(events
            .take_while(|event| {
                let done = matches!(event, Ok(e) if e.data.trim() == "[DONE]");
                std::future::ready(!done)
            })
            .map(|event| match event {
                Ok(e) => serde_json::from_str::<CreateChatCompletionStreamResponse>(&e.data)
                    .map_err(|err| format!("malformed chunk: {err}")),
                Err(EventStreamError::Transport(e)) => Err(transport_error(e).to_string()),
                Err(e) => Err(format!("malformed event stream: {e}")),
            })
            .boxed())
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
